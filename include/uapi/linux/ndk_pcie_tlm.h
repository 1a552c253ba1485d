/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Generic netlink control plane of the NDK PCIE_TELEMETRY_MI perf PMU
 * (module ndk_pcie_tlm). Spec: Documentation/netlink/specs/ndk_pcie_tlm.yaml,
 * guide: Documentation/admin-guide/perf/ndk-pcie-telemetry.rst.
 *
 * Device selection: every "do" request names one instance by its PMU name in
 * NDK_PCIE_TLM_A_DEV_NAME (NUL terminated string, e.g.
 * "ndk_pcie_tlm_3fff00000000", as in /sys/bus/event_source/devices/).
 * "dump" requests (NLM_F_DUMP) of DEV_GET, EP_GET and TOTALS_GET take no
 * attributes and return one message per instance, each formatted like the
 * reply of the matching "do" request; a TOTALS_GET dump may split one
 * instance over several messages (as many as the receive buffer needs),
 * each with the header attributes and a run of TOTALS entries, all from
 * one SNAPSHOT (same TIMESTAMP_NS).
 *
 * Every command, do and dump, needs CAP_PERFMON or CAP_SYS_ADMIN (else
 * -EPERM), as perf demands for this system-wide PMU's events.
 *
 * Attribute types (host byte order):
 *   u8 / u32      NLA_U8 / NLA_U32
 *   u64           NLA_U64, 8-byte payload; aligned with NDK_PCIE_TLM_A_PAD
 *                 (or NDK_PCIE_TLM_TOTALS_PAD inside NDK_PCIE_TLM_A_TOTALS)
 *                 where the architecture needs it; skip the pad attributes
 *   string        NLA_NUL_STRING
 *   nest          NLA_NESTED
 */
#ifndef _UAPI_LINUX_NDK_PCIE_TLM_H
#define _UAPI_LINUX_NDK_PCIE_TLM_H

#define NDK_PCIE_TLM_FAMILY_NAME	"ndk_pcie_tlm"
#define NDK_PCIE_TLM_FAMILY_VERSION	1
#define NDK_PCIE_TLM_MCGRP_FLAGS	"flags"

/* Longest PMU name accepted in NDK_PCIE_TLM_A_DEV_NAME, with the NUL */
#define NDK_PCIE_TLM_DEV_NAME_MAX	64
/* Longest NDK_PCIE_TLM_A_PCI_ADDR, with the NUL */
#define NDK_PCIE_TLM_PCI_ADDR_MAX	32

/**
 * enum ndk_pcie_tlm_cmd - commands
 * @NDK_PCIE_TLM_CMD_DEV_GET: do (DEV_NAME) or dump; reply: identity and
 *	the whole layout of the instance (DEV_NAME, BASE, PMU_TYPE, CPU,
 *	VERSION_*, layout attributes, FLAGS, POLL_NS)
 * @NDK_PCIE_TLM_CMD_EP_GET: do (DEV_NAME, optional EP) or dump; reply:
 *	DEV_NAME, FLAGS and EPS, an indexed array (attribute type =
 *	endpoint number) of nests of enum ndk_pcie_tlm_ep_attrs; with EP only
 *	that endpoint is present
 * @NDK_PCIE_TLM_CMD_TOTALS_GET: do (DEV_NAME) or dump; reply: DEV_NAME,
 *	FLAGS, TIMESTAMP_NS, ENTRIES_USED, CNT_WIDTH and TOTALS: every used
 *	counter entry since the last clear, 64-bit extended, all from one
 *	SNAPSHOT of the hardware
 * @NDK_PCIE_TLM_CMD_CLEAR: do (DEV_NAME, CLEAR); needs CAP_PERFMON or
 *	CAP_SYS_ADMIN (else -EPERM). Running perf events keep exact counts.
 * @NDK_PCIE_TLM_CMD_FLAGS_NTF: notification on the "flags" multicast group
 *	when LOST DELTA or READ-OUT OVERRUN becomes set: DEV_NAME, FLAGS (all
 *	set now), NEW_FLAGS (those that became set). One per flag bit that
 *	goes from clear to set, as the driver's flag check sees it (every
 *	flags_poll_ms while the group has a listener); a flag that stays set
 *	is not notified again until a CLEAR of the flags
 * @NDK_PCIE_TLM_CMD_ATTACH: do (PCI_ADDR, BAR, WIN_OFFSET, WIN_SIZE); needs
 *	CAP_SYS_ADMIN (else -EPERM). Maps that window of the BAR (without
 *	requesting the region) and registers a PMU on it, named
 *	ndk_pcie_tlm_DDDD_BB_DD_F_barB_OFFSET (hex, e.g.
 *	"ndk_pcie_tlm_0000_03_00_0_bar0_20000"); reply: DEV_NAME. Errors:
 *	-EINVAL malformed PCI_ADDR, a missing attribute, WIN_OFFSET or
 *	WIN_SIZE not a multiple of 4, WIN_SIZE below 0x100; -ENODEV no such
 *	PCI function, or one not bound to nfb (or to another driver the
 *	module parameter pci_drivers names); -ENXIO BAR index above 5 or no
 *	memory BAR there; -ERANGE window ends past the BAR; -EIO memory
 *	decoding of the function off; -EEXIST overlaps a window already
 *	attached; -EPROTO no usable block (MAGIC, VERSION or layout, the
 *	kernel log says which); -ETIMEDOUT the first SNAPSHOT never completed
 *	(STATUS.BUSY stayed set); -EBUSY events of an earlier instance of
 *	that name are still open
 * @NDK_PCIE_TLM_CMD_DETACH: do (DEV_NAME); needs CAP_SYS_ADMIN. Ends an
 *	instance made by ATTACH (-ENODEV if there is none of that name). An
 *	attached instance also ends when its PCI function is removed or loses
 *	its driver, and at module unload
 */
enum ndk_pcie_tlm_cmd {
	NDK_PCIE_TLM_CMD_UNSPEC,
	NDK_PCIE_TLM_CMD_DEV_GET,
	NDK_PCIE_TLM_CMD_EP_GET,
	NDK_PCIE_TLM_CMD_TOTALS_GET,
	NDK_PCIE_TLM_CMD_CLEAR,
	NDK_PCIE_TLM_CMD_FLAGS_NTF,
	NDK_PCIE_TLM_CMD_ATTACH,
	NDK_PCIE_TLM_CMD_DETACH,

	__NDK_PCIE_TLM_CMD_MAX,
	NDK_PCIE_TLM_CMD_MAX = __NDK_PCIE_TLM_CMD_MAX - 1
};

/* Bits of NDK_PCIE_TLM_A_FLAGS and NDK_PCIE_TLM_A_NEW_FLAGS (STATUS bits 1, 2) */
enum ndk_pcie_tlm_flags {
	NDK_PCIE_TLM_FLAG_LOST_DELTA		= 1 << 0,
	NDK_PCIE_TLM_FLAG_READOUT_OVERRUN	= 1 << 1,
};

/* Bits of NDK_PCIE_TLM_A_CLEAR */
enum ndk_pcie_tlm_clear {
	/* restart every total from zero (in software; marks are kept) */
	NDK_PCIE_TLM_CLEAR_COUNTERS	= 1 << 0,
	/* reset LOST DELTA and READ-OUT OVERRUN */
	NDK_PCIE_TLM_CLEAR_FLAGS	= 1 << 1,
	/* reset the lowest free tags / storage FIFO words marks */
	NDK_PCIE_TLM_CLEAR_MARKS	= 1 << 2,
};

#define NDK_PCIE_TLM_CLEAR_ALL	(NDK_PCIE_TLM_CLEAR_COUNTERS | \
				 NDK_PCIE_TLM_CLEAR_FLAGS | \
				 NDK_PCIE_TLM_CLEAR_MARKS)

/**
 * enum ndk_pcie_tlm_attrs - top-level attributes
 * @NDK_PCIE_TLM_A_PAD: alignment padding for u64 attributes
 * @NDK_PCIE_TLM_A_DEV_NAME: string, PMU name; selects the instance
 * @NDK_PCIE_TLM_A_BASE: u64, MMIO base address of the block
 * @NDK_PCIE_TLM_A_PMU_TYPE: u32, perf_event_attr.type of the PMU
 * @NDK_PCIE_TLM_A_CPU: u32, CPU that perf events of the PMU use (cpumask)
 * @NDK_PCIE_TLM_A_VERSION_MAJOR: u32, VERSION[31:16] (always 2)
 * @NDK_PCIE_TLM_A_VERSION_MINOR: u32, VERSION[15:0]
 * @NDK_PCIE_TLM_A_ENDPOINTS: u32, PCIe endpoints (CFG_TOPOLOGY[7:0])
 * @NDK_PCIE_TLM_A_DMA_PORTS: u32, DMA ports per endpoint
 * @NDK_PCIE_TLM_A_PROBES: u32, probes (2 x endpoints)
 * @NDK_PCIE_TLM_A_ENTRIES: u32, counter entries (power of two)
 * @NDK_PCIE_TLM_A_CNT_WIDTH: u32, hardware counter width (33..64)
 * @NDK_PCIE_TLM_A_COUNTERS_PER_EP: u32, counter entries per endpoint
 * @NDK_PCIE_TLM_A_PCIE_CHANNELS: u32, channels of the PCIe clock probe
 * @NDK_PCIE_TLM_A_PCIE_BUSES: u32, buses of the PCIe probe (2: RQ, RC)
 * @NDK_PCIE_TLM_A_PCIE_REGIONS: u32, regions of the PCIe probe
 * @NDK_PCIE_TLM_A_BRAKE_CHANNELS: u32, BRAKE channels (reasons + bands)
 * @NDK_PCIE_TLM_A_DMA_CHANNELS: u32, channels of the DMA clock probe
 * @NDK_PCIE_TLM_A_DMA_BUSES: u32, buses of the DMA probe (2 x DMA ports)
 * @NDK_PCIE_TLM_A_DMA_REGIONS: u32, regions of the DMA probe
 * @NDK_PCIE_TLM_A_REGIONS_RQ: u32, regions the RQ bus really has
 * @NDK_PCIE_TLM_A_REGIONS_RC: u32, same for RC
 * @NDK_PCIE_TLM_A_REGIONS_UP: u32, same for every UP bus
 * @NDK_PCIE_TLM_A_REGIONS_DOWN: u32, same for every DOWN bus
 * @NDK_PCIE_TLM_A_BYTES_RQ: u32, bytes per region of RQ
 * @NDK_PCIE_TLM_A_BYTES_RC: u32, bytes per region of RC
 * @NDK_PCIE_TLM_A_BYTES_UP: u32, bytes per region of UP
 * @NDK_PCIE_TLM_A_BYTES_DOWN: u32, bytes per region of DOWN
 * @NDK_PCIE_TLM_A_ITEM_BYTES: u32, bytes per MFB item
 * @NDK_PCIE_TLM_A_HIST_BANDS: u32, bands per histogram
 * @NDK_PCIE_TLM_A_HIST_PCIE: u32, histograms of the PCIe probe
 * @NDK_PCIE_TLM_A_HIST_DMA: u32, histograms of the DMA probe
 * @NDK_PCIE_TLM_A_TAG_CAPACITY: u32, PCIe tag capacity
 * @NDK_PCIE_TLM_A_STFIFO_CAPACITY: u32, storage FIFO words
 * @NDK_PCIE_TLM_A_DRAIN_PERIOD: u32, DRAIN_PERIOD in cycles
 * @NDK_PCIE_TLM_A_ENTRIES_USED: u32, entries that exist
 *	(endpoints x counters per endpoint); TOTALS has exactly these
 * @NDK_PCIE_TLM_A_FLAGS: u32, enum ndk_pcie_tlm_flags set in STATUS now;
 *	the only attribute that carries them (types 38 and 39, u8 copies of
 *	its two bits before 1.0, are retired: never sent, refused in requests,
 *	never reused)
 * @NDK_PCIE_TLM_A_NEW_FLAGS: u32, flags that became set (FLAGS_NTF)
 * @NDK_PCIE_TLM_A_EP: u32, endpoint number (EP_GET request filter)
 * @NDK_PCIE_TLM_A_EPS: nest, indexed array of endpoint nests
 * @NDK_PCIE_TLM_A_TOTALS: nest, indexed array of u64: attribute type =
 *	counter entry number (0 .. ENTRIES_USED - 1), value = 64-bit total
 *	since the last clear; NDK_PCIE_TLM_TOTALS_PAD entries are padding
 * @NDK_PCIE_TLM_A_TIMESTAMP_NS: u64, CLOCK_MONOTONIC time of the SNAPSHOT
 * @NDK_PCIE_TLM_A_CLEAR: u32, enum ndk_pcie_tlm_clear bits (CLEAR request;
 *	must be non-zero and have no other bit)
 * @NDK_PCIE_TLM_A_POLL_NS: u64, period of the wrap poller
 * @NDK_PCIE_TLM_A_PCI_ADDR: string, PCI function "DDDD:BB:DD.F" (ATTACH;
 *	in DEV_GET of attached instances only)
 * @NDK_PCIE_TLM_A_BAR: u32, BAR index 0..5 (ATTACH, DEV_GET as PCI_ADDR)
 * @NDK_PCIE_TLM_A_WIN_OFFSET: u64, window offset in the BAR (same)
 * @NDK_PCIE_TLM_A_WIN_SIZE: u64, window size in bytes (same)
 */
enum ndk_pcie_tlm_attrs {
	NDK_PCIE_TLM_A_UNSPEC,
	NDK_PCIE_TLM_A_PAD,
	NDK_PCIE_TLM_A_DEV_NAME,
	NDK_PCIE_TLM_A_BASE,
	NDK_PCIE_TLM_A_PMU_TYPE,
	NDK_PCIE_TLM_A_CPU,
	NDK_PCIE_TLM_A_VERSION_MAJOR,
	NDK_PCIE_TLM_A_VERSION_MINOR,
	NDK_PCIE_TLM_A_ENDPOINTS,
	NDK_PCIE_TLM_A_DMA_PORTS,
	NDK_PCIE_TLM_A_PROBES,
	NDK_PCIE_TLM_A_ENTRIES,
	NDK_PCIE_TLM_A_CNT_WIDTH,
	NDK_PCIE_TLM_A_COUNTERS_PER_EP,
	NDK_PCIE_TLM_A_PCIE_CHANNELS,
	NDK_PCIE_TLM_A_PCIE_BUSES,
	NDK_PCIE_TLM_A_PCIE_REGIONS,
	NDK_PCIE_TLM_A_BRAKE_CHANNELS,
	NDK_PCIE_TLM_A_DMA_CHANNELS,
	NDK_PCIE_TLM_A_DMA_BUSES,
	NDK_PCIE_TLM_A_DMA_REGIONS,
	NDK_PCIE_TLM_A_REGIONS_RQ,
	NDK_PCIE_TLM_A_REGIONS_RC,
	NDK_PCIE_TLM_A_REGIONS_UP,
	NDK_PCIE_TLM_A_REGIONS_DOWN,
	NDK_PCIE_TLM_A_BYTES_RQ,
	NDK_PCIE_TLM_A_BYTES_RC,
	NDK_PCIE_TLM_A_BYTES_UP,
	NDK_PCIE_TLM_A_BYTES_DOWN,
	NDK_PCIE_TLM_A_ITEM_BYTES,
	NDK_PCIE_TLM_A_HIST_BANDS,
	NDK_PCIE_TLM_A_HIST_PCIE,
	NDK_PCIE_TLM_A_HIST_DMA,
	NDK_PCIE_TLM_A_TAG_CAPACITY,
	NDK_PCIE_TLM_A_STFIFO_CAPACITY,
	NDK_PCIE_TLM_A_DRAIN_PERIOD,
	NDK_PCIE_TLM_A_ENTRIES_USED,
	NDK_PCIE_TLM_A_FLAGS,
	/* 38, 39: retired (see NDK_PCIE_TLM_A_FLAGS) */
	NDK_PCIE_TLM_A_NEW_FLAGS = 40,
	NDK_PCIE_TLM_A_EP,
	NDK_PCIE_TLM_A_EPS,
	NDK_PCIE_TLM_A_TOTALS,
	NDK_PCIE_TLM_A_TIMESTAMP_NS,
	NDK_PCIE_TLM_A_CLEAR,
	NDK_PCIE_TLM_A_POLL_NS,
	NDK_PCIE_TLM_A_PCI_ADDR,
	NDK_PCIE_TLM_A_BAR,
	NDK_PCIE_TLM_A_WIN_OFFSET,
	NDK_PCIE_TLM_A_WIN_SIZE,

	__NDK_PCIE_TLM_A_MAX,
	NDK_PCIE_TLM_A_MAX = __NDK_PCIE_TLM_A_MAX - 1
};

/* Padding attribute type inside NDK_PCIE_TLM_A_TOTALS (never an entry) */
#define NDK_PCIE_TLM_TOTALS_PAD	0x3fff

/**
 * enum ndk_pcie_tlm_ep_attrs - attributes of one endpoint (in A_EPS)
 * @NDK_PCIE_TLM_EP_A_ID: u32, endpoint number
 * @NDK_PCIE_TLM_EP_A_STATUS_RAW: u32, the PCIE_STATUS register
 * @NDK_PCIE_TLM_EP_A_LINK_UP: u8, 1 if the link is up
 * @NDK_PCIE_TLM_EP_A_MPS: u32, max payload size in bytes
 * @NDK_PCIE_TLM_EP_A_MRRS: u32, max read request size in bytes
 * @NDK_PCIE_TLM_EP_A_EXT_TAG: u8, 1 if extended (8-bit) tags are on
 * @NDK_PCIE_TLM_EP_A_TAG10: u8, 1 if 10-bit tags are on
 * @NDK_PCIE_TLM_EP_A_RCB: u32, read completion boundary in bytes (64, 128)
 * @NDK_PCIE_TLM_EP_A_TAGS_FREE: u32, free PCIe tags now
 * @NDK_PCIE_TLM_EP_A_TAGS_LOWEST: u32, lowest free tags since last clear
 * @NDK_PCIE_TLM_EP_A_STFIFO_FREE: u32, free storage FIFO words now
 * @NDK_PCIE_TLM_EP_A_STFIFO_LOWEST: u32, lowest free words since last clear
 */
enum ndk_pcie_tlm_ep_attrs {
	NDK_PCIE_TLM_EP_A_UNSPEC,
	NDK_PCIE_TLM_EP_A_ID,
	NDK_PCIE_TLM_EP_A_STATUS_RAW,
	NDK_PCIE_TLM_EP_A_LINK_UP,
	NDK_PCIE_TLM_EP_A_MPS,
	NDK_PCIE_TLM_EP_A_MRRS,
	NDK_PCIE_TLM_EP_A_EXT_TAG,
	NDK_PCIE_TLM_EP_A_TAG10,
	NDK_PCIE_TLM_EP_A_RCB,
	NDK_PCIE_TLM_EP_A_TAGS_FREE,
	NDK_PCIE_TLM_EP_A_TAGS_LOWEST,
	NDK_PCIE_TLM_EP_A_STFIFO_FREE,
	NDK_PCIE_TLM_EP_A_STFIFO_LOWEST,

	__NDK_PCIE_TLM_EP_A_MAX,
	NDK_PCIE_TLM_EP_A_MAX = __NDK_PCIE_TLM_EP_A_MAX - 1
};

#endif /* _UAPI_LINUX_NDK_PCIE_TLM_H */
