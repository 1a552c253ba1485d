/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NDK PCIE_TELEMETRY_MI perf PMU: state shared by the PMU driver
 * (ndk_pcie_tlm_pmu.c) and its generic netlink control plane
 * (ndk_pcie_tlm_nl.c).
 */
#ifndef _NDK_PCIE_TLM_H
#define _NDK_PCIE_TLM_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <hwtel/io.h>

/* Registers (byte offsets) */
#define NDK_TLM_MAGIC		0x0000
#define NDK_TLM_VERSION		0x0004
#define NDK_TLM_CFG_TOPOLOGY	0x0008
#define NDK_TLM_CFG_LAYOUT	0x000c
#define NDK_TLM_CFG_PCIE	0x0010
#define NDK_TLM_CFG_DMA		0x0014
#define NDK_TLM_CFG_DRAIN	0x0018
#define NDK_TLM_CNT_BASE	0x001c
#define NDK_TLM_COMMAND		0x0020
#define NDK_TLM_STATUS		0x0024
#define NDK_TLM_READ_SEL	0x0028
#define NDK_TLM_CFG_REGIONS	0x002c
#define NDK_TLM_CFG_WIDTH	0x0030
#define NDK_TLM_CFG_HIST	0x0034
#define NDK_TLM_CFG_CAPACITY	0x0038
#define NDK_TLM_CFG_WIDTH_DMA	0x003c
#define NDK_TLM_PCIE_STATUS(ep)	(0x0040 + 4 * (ep))
#define NDK_TLM_PCIE_TAGS(ep)	(0x0080 + 4 * (ep))
#define NDK_TLM_PCIE_STFIFO(ep)	(0x00c0 + 4 * (ep))

#define NDK_TLM_MAGIC_VALUE	0x50544c4d	/* "PTLM" */
#define NDK_TLM_MAJOR		2

#define NDK_TLM_CMD_SNAPSHOT	BIT(0)
#define NDK_TLM_CMD_CLEAR	BIT(1)
#define NDK_TLM_CMD_CLEAR_FLAGS	BIT(2)
#define NDK_TLM_CMD_CLEAR_MARKS	BIT(3)

#define NDK_TLM_ST_BUSY		BIT(0)
#define NDK_TLM_ST_LOST_DELTA	BIT(1)
#define NDK_TLM_ST_OVERRUN	BIT(2)
#define NDK_TLM_ST_FLAGS	(NDK_TLM_ST_LOST_DELTA | NDK_TLM_ST_OVERRUN)

#define NDK_TLM_MAX_EPS		16

/* Layout decoded from the configuration registers, all plain numbers. */
struct ndk_tlm_layout {
	u32 endpoints;
	u32 dma_ports;
	u32 probes;
	u32 entries;
	u32 cnt_width;
	u32 counters_per_ep;
	u32 pcie_channels;
	u32 pcie_buses;
	u32 pcie_regions;
	u32 brake_channels;
	u32 dma_channels;
	u32 dma_buses;
	u32 dma_regions;
	u32 regions_rq;
	u32 regions_rc;
	u32 regions_up;
	u32 regions_down;
	u32 bytes_rq;
	u32 bytes_rc;
	u32 bytes_up;
	u32 bytes_down;
	u32 item_bytes;
	u32 hist_bands;
	u32 hist_pcie;
	u32 hist_dma;
	u32 tag_capacity;
	u32 stfifo_capacity;
	u32 drain_period;
	/* derived */
	u32 cnt_base;
	u32 entries_used;
	u32 brake_reasons;
	u32 version_major;
	u32 version_minor;
};

/*
 * Software state of one hardware counter entry, protected by
 * ndk_tlm::lock. @acc is the 64-bit extension of the counter since probe and
 * never goes back; perf events count differences of @acc. The control plane
 * reports @acc - @base, which is "since the last clear".
 */
struct ndk_tlm_entry {
	u64 last_raw;
	u64 acc;
	u64 base;
	u64 late_acc;	/* @acc at the late copy of snapshot @late_gen */
	u32 gen;
	u32 late_gen;
};

struct ndk_tlm_pcpu;

#ifdef HWTEL_LAB
/* Lab flavour: how long each function held ndk_tlm::lock (ndk_pcie_tlm_lab.c) */
#define NDK_TLM_HOLD_SITES	32
struct ndk_tlm_hold {
	const char *site;	/* __func__ of the holder */
	u64 max_ns;
	u64 total_ns;
	u64 count;
	u64 max_reads;		/* register reads in one hold */
	u64 total_reads;
};
#endif

/* Where an instance attached by PCI address sits (ndk_pcie_tlm_pci.c) */
struct ndk_tlm_win {
	char pci[32];		/* pci_name() of the function, "" if none */
	u32 bar;
	u64 offset;
	u64 size;
};

struct ndk_tlm {
	struct pmu pmu;
	struct device *dev;
	struct hwtel_io io;
	const char *name;
	u64 base_addr;
	struct ndk_tlm_win win;	/* .pci[0] set: attached to a PCI BAR window */
	struct ndk_tlm_layout lay;
	u64 cnt_mask;
	u32 busy_us;		/* BUSY wait bound, from the layout */

	/* serializes SNAPSHOT/CLEAR, window reads, @entries and what follows */
	raw_spinlock_t lock;
	struct ndk_tlm_entry *entries;
	u32 gen;		/* bumped by every copy that lands */
	u64 snap_ns;		/* CLOCK_MONOTONIC of the window's copy */
	u64 cmd_ns;		/* ... of the last SNAPSHOT written (before) */
	u64 cmd_seen_ns;	/* ... when the block had it (a read came back) */
	u64 snap_gap_ns;	/* no new SNAPSHOT sooner after that than this */
	u32 flags_seen;		/* STATUS flags already notified */
	bool wedged;		/* a SNAPSHOT timed out, its copy is under way */
	unsigned long *late;	/* entries whose events await that copy */
	bool dead;		/* the device is gone: no hardware access */
	struct list_head dead_node;	/* on ndk_tlm_dead (before 6.15) */

	struct ndk_tlm_pcpu __percpu *pcpu;

	struct hrtimer poller;
	struct work_struct fold_work;	/* the poller's wrap fold */
	u64 poll_ns;		/* wrap poll period */
	u64 tick_ns;		/* flag check period while someone listens */
	ktime_t next_poll;	/* on the grid start + k * poll_ns */
	ktime_t next_flags;	/* on the grid start + k * tick_ns */
	ktime_t next_listen;	/* listener check when nobody listens */

	unsigned int cpu;
	struct hlist_node node;
	struct list_head list;	/* on the control plane's instance list */
	u64 nl_id;		/* its place there: never reused, ascending */
#ifdef HWTEL_LAB
	struct ndk_tlm_hold hold[NDK_TLM_HOLD_SITES];	/* under @lock */
	u64 stamp_max_ns;	/* widest cmd_ns..cmd_seen_ns, under @lock */
	struct dentry *dbg;
#endif
};

/*
 * ndk_tlm::lock, taken with interrupts off. In the lab flavour every hold
 * is also timed per function (its __func__), for make bench (debugfs
 * ndk_pcie_tlm/<pmu>/lock_hold); in the hardware flavour these are the plain
 * raw spinlock calls, and the lab's hooks do not exist.
 */
#ifdef HWTEL_LAB
void ndk_tlm_hold_begin(struct ndk_tlm *tlm);
void ndk_tlm_hold_end(struct ndk_tlm *tlm, const char *site);
void ndk_tlm_lab_stamp(struct ndk_tlm *tlm);
unsigned int ndk_tlm_lab_first_owner(unsigned int cpu);
void ndk_tlm_lab_add(struct ndk_tlm *tlm);
void ndk_tlm_lab_del(struct ndk_tlm *tlm);
void ndk_tlm_lab_init(void);
void ndk_tlm_lab_exit(void);
void ndk_tlm_lab_close_gate(void);

static __always_inline void __ndk_tlm_lock_irqsave(struct ndk_tlm *tlm,
						   unsigned long *flags)
	__acquires(&tlm->lock)
{
	raw_spin_lock_irqsave(&tlm->lock, *flags);
	ndk_tlm_hold_begin(tlm);
}

/* @flags as for raw_spin_lock_irqsave(); the pointer keeps its type checked */
#define ndk_tlm_lock_irqsave(tlm, flags)				\
	__ndk_tlm_lock_irqsave(tlm, &(flags))

static __always_inline void ndk_tlm_lock_irq(struct ndk_tlm *tlm)
	__acquires(&tlm->lock)
{
	raw_spin_lock_irq(&tlm->lock);
	ndk_tlm_hold_begin(tlm);
}

#define ndk_tlm_unlock_irqrestore(tlm, flags)				\
	__ndk_tlm_unlock_irqrestore(tlm, flags, __func__)
#define ndk_tlm_unlock_irq(tlm)	__ndk_tlm_unlock_irq(tlm, __func__)

static __always_inline void __ndk_tlm_unlock_irqrestore(struct ndk_tlm *tlm,
							unsigned long flags,
							const char *site)
	__releases(&tlm->lock)
{
	ndk_tlm_hold_end(tlm, site);
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
}

static __always_inline void __ndk_tlm_unlock_irq(struct ndk_tlm *tlm,
						 const char *site)
	__releases(&tlm->lock)
{
	ndk_tlm_hold_end(tlm, site);
	raw_spin_unlock_irq(&tlm->lock);
}
#else
static inline void ndk_tlm_lab_stamp(struct ndk_tlm *tlm) { }
static inline unsigned int ndk_tlm_lab_first_owner(unsigned int cpu) { return cpu; }
static inline void ndk_tlm_lab_add(struct ndk_tlm *tlm) { }
static inline void ndk_tlm_lab_del(struct ndk_tlm *tlm) { }
static inline void ndk_tlm_lab_init(void) { }
static inline void ndk_tlm_lab_exit(void) { }
static inline void ndk_tlm_lab_close_gate(void) { }

#define ndk_tlm_lock_irqsave(tlm, flags)	raw_spin_lock_irqsave(&(tlm)->lock, flags)
#define ndk_tlm_unlock_irqrestore(tlm, flags)	\
	raw_spin_unlock_irqrestore(&(tlm)->lock, flags)
#define ndk_tlm_lock_irq(tlm)		raw_spin_lock_irq(&(tlm)->lock)
#define ndk_tlm_unlock_irq(tlm)		raw_spin_unlock_irq(&(tlm)->lock)
#endif

/* Instances on a mapped window, for every binding path */
struct ndk_tlm *ndk_tlm_create(struct device *dev, const struct hwtel_io *io,
			       u64 base_addr, u64 size, const char *name,
			       const struct ndk_tlm_win *win);
void ndk_tlm_destroy(struct ndk_tlm *tlm);

/* PCI BAR window attach (ndk_pcie_tlm_pci.c) */
struct netlink_ext_ack;
int ndk_tlm_pci_init(void);
void ndk_tlm_pci_exit(void);
int ndk_tlm_pci_attach(const char *addr, u32 bar, u64 offset, u64 size,
		       char *name, size_t name_size,
		       struct netlink_ext_ack *extack);
int ndk_tlm_pci_detach(const char *name, struct netlink_ext_ack *extack);

/* PMU side, used by the control plane; all take ndk_tlm::lock */
int ndk_tlm_totals(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns);
int ndk_tlm_clear(struct ndk_tlm *tlm, u32 what);
int ndk_tlm_soft_clear(struct ndk_tlm *tlm);
u32 ndk_tlm_read_flags(struct ndk_tlm *tlm);

struct ndk_tlm_ep_state {
	u32 status;
	u32 tags;
	u32 stfifo;
};

void ndk_tlm_read_ep(struct ndk_tlm *tlm, u32 ep, struct ndk_tlm_ep_state *st);

/* Control plane */
int ndk_tlm_nl_init(void);
void ndk_tlm_nl_exit(void);
void ndk_tlm_nl_add(struct ndk_tlm *tlm);
void ndk_tlm_nl_del(struct ndk_tlm *tlm);
bool ndk_tlm_nl_listening(void);
void ndk_tlm_nl_notify(struct ndk_tlm *tlm, u32 flags, u32 new_flags);

#endif /* _NDK_PCIE_TLM_H */
