// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel_sim_pcie: register-level model of the CESNET NDK PCIE_TELEMETRY_MI
 * block (version 2), for tests only.
 *
 * Each instance registers a platform device "ndk-pcie-tlm-sim" whose platform
 * data is a struct hwtel_sim_io; the ndk_pcie_tlm driver binds to it and all
 * of its 32-bit register accesses land in tlm_io_read()/tlm_io_write().
 *
 * Traffic comes from a profile: for every bus a rate of each counter, given as
 * counts per second of a reference clock (400 MHz for the PCIe clock probe,
 * 200 MHz for the DMA clock probe), i.e. a per-cycle fraction. Time advances
 * lazily: on every access the model works out how many whole DRAIN_PERIODs of
 * each probe clock have elapsed since the profile started and adds the deltas
 * of those periods to the live counters, carrying the remainders so that the
 * total after C cycles is exactly floor(rate * C / reference Hz).
 *
 * Documentation/dev-tools/hwsim-pcie.rst describes the model and its control
 * files in debugfs.
 *
 * Never load this on a machine with the real hardware.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gcd.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/numa.h>
#include <linux/platform_device.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <hwtel/io.h>
#include <hwtel/sim.h>

/* Register map of PCIE_TELEMETRY_MI v2 */
#define TLM_MAGIC		0x0000
#define TLM_VERSION		0x0004
#define TLM_CFG_TOPOLOGY	0x0008
#define TLM_CFG_LAYOUT		0x000c
#define TLM_CFG_PCIE		0x0010
#define TLM_CFG_DMA		0x0014
#define TLM_CFG_DRAIN		0x0018
#define TLM_CNT_BASE_REG	0x001c
#define TLM_COMMAND		0x0020
#define TLM_STATUS		0x0024
#define TLM_READ_SEL		0x0028
#define TLM_CFG_REGIONS		0x002c
#define TLM_CFG_WIDTH		0x0030
#define TLM_CFG_HIST		0x0034
#define TLM_CFG_CAPACITY	0x0038
#define TLM_CFG_WIDTH_DMA	0x003c
#define TLM_PCIE_STATUS		0x0040
#define TLM_PCIE_TAGS		0x0080
#define TLM_PCIE_STFIFO		0x00c0
#define TLM_EP_REGS_END		0x0100
#define TLM_REG_ALIAS		0x0100	/* registers repeat every 0x100 bytes */
#define TLM_CNT_BASE		0x8000

#define TLM_CMD_SNAPSHOT	BIT(0)
#define TLM_CMD_CLEAR		BIT(1)
#define TLM_CMD_CLEAR_FLAGS	BIT(2)
#define TLM_CMD_CLEAR_MARKS	BIT(3)
#define TLM_CMD_ANY_CLEAR	(TLM_CMD_CLEAR | TLM_CMD_CLEAR_FLAGS | \
				 TLM_CMD_CLEAR_MARKS)

#define TLM_ST_BUSY		BIT(0)
#define TLM_ST_LOST_DELTA	BIT(1)
#define TLM_ST_OVERRUN		BIT(2)

#define TLM_MAGIC_VALUE		0x50544c4d
#define TLM_VERSION_VALUE	0x00020000
#define TLM_MAX_EP		16
#define TLM_BUS_FIELDS		6	/* words stall frames mvb mvb_stall items */
#define TLM_REASONS		6
#define TLM_BANDS		4
#define TLM_HISTS		2
#define TLM_BRAKE_CH		(TLM_REASONS + TLM_HISTS * TLM_BANDS)
#define TLM_PCIE_STATUS_MASK	GENMASK(9, 0)
/* link up, RCB 64 B, no 10-bit tag, extended tag, MRRS 4096 B, MPS 512 B */
#define TLM_PCIE_STATUS_DEF	(BIT(9) | BIT(6) | (5 << 3) | 2)
/* lowest values after reset, CLEAR or CLEAR MARKS, until the next drain */
#define TLM_TAGS_LOW_RESET	0x7ff
#define TLM_FIFO_LOW_RESET	0xffff
/* MI cycles BUSY stays high: 2 x ENTRIES + these */
#define TLM_BUSY_SNAP_EXTRA	4
#define TLM_BUSY_CLEAR_EXTRA	1
#define TLM_MAX_CH		255	/* channels of one probe */
#define TLM_MAX_FIFO		1024	/* largest fifo_depth */
/* a command that finds the accumulator adding a delta waits for it */
#define TLM_BUSY_ADDER_EXTRA	3
/* fractions of a lump of deltas the accumulator took, in 2^-24 */
#define TLM_KEEP_ONE		BIT_ULL(24)
/* MI cycles from the CLEAR FLAGS write until the flags are clear */
#define TLM_CLEAR_FLAGS_CYCLES	12
/* Largest frame of a placed-frame bus profile, in bytes */
#define TLM_FRAME_MAX		65536

#define TLM_BASE		0x3fff00000000ULL
#define TLM_STRIDE		0x100000ULL
#define TLM_WINDOW		0x10000ULL
#define TLM_MAX_INSTANCES	16
#define TLM_MAX_SCHED		8	/* timed profile changes of one instance */

/* Reference clocks of the profile rates, in Hz */
#define TLM_REF_PCIE_HZ		400000000U
#define TLM_REF_DMA_HZ		200000000U
/* Capacities the gauge levels of the built-in profiles refer to */
#define TLM_REF_TAGS		256
#define TLM_REF_STFIFO		1024
/* One rate computation step, at most this many cycles (keeps u64 exact) */
#define TLM_CHUNK_CYCLES	BIT_ULL(31)

/* Bus kinds of a profile; also the index of the region/bytes params */
enum { TLM_RQ, TLM_RC, TLM_UP, TLM_DOWN, TLM_NBUS };
/* Fields of a bus profile (channel offset within the bus, except regions) */
enum { F_WORDS, F_STALL, F_FRAMES, F_MVB, F_MVB_STALL, F_ITEMS, F_REGION };
#define TLM_PROF_REGIONS	4
#define TLM_PROF_FIELDS		(F_REGION + TLM_PROF_REGIONS)

/* ---------------------------------------------------------------------- */
/* Module parameters                                                      */

static unsigned int instances = 1;
module_param(instances, uint, 0444);
MODULE_PARM_DESC(instances, "Model instances (1..16)");
static unsigned int endpoints = 1;
module_param(endpoints, uint, 0444);
MODULE_PARM_DESC(endpoints, "PCIe endpoints per instance (1..16)");
static unsigned int dma_ports = 1;
module_param(dma_ports, uint, 0444);
MODULE_PARM_DESC(dma_ports, "DMA ports per endpoint (>= 1)");
static unsigned int regions_rq = 4;
module_param(regions_rq, uint, 0444);
MODULE_PARM_DESC(regions_rq, "MFB regions of the RQ bus");
static unsigned int regions_rc = 4;
module_param(regions_rc, uint, 0444);
MODULE_PARM_DESC(regions_rc, "MFB regions of the RC bus");
static unsigned int regions_up = 2;
module_param(regions_up, uint, 0444);
MODULE_PARM_DESC(regions_up, "MFB regions of the UP buses");
static unsigned int regions_down = 2;
module_param(regions_down, uint, 0444);
MODULE_PARM_DESC(regions_down, "MFB regions of the DOWN buses");
static unsigned int bytes_rq = 32;
module_param(bytes_rq, uint, 0444);
MODULE_PARM_DESC(bytes_rq, "Bytes per region of RQ");
static unsigned int bytes_rc = 32;
module_param(bytes_rc, uint, 0444);
MODULE_PARM_DESC(bytes_rc, "Bytes per region of RC");
static unsigned int bytes_up = 32;
module_param(bytes_up, uint, 0444);
MODULE_PARM_DESC(bytes_up, "Bytes per region of UP");
static unsigned int bytes_down = 32;
module_param(bytes_down, uint, 0444);
MODULE_PARM_DESC(bytes_down, "Bytes per region of DOWN");
static unsigned int item_bytes = 4;
module_param(item_bytes, uint, 0444);
MODULE_PARM_DESC(item_bytes, "Bytes per MFB item (divides every bytes_*)");
static unsigned int cnt_width = 48;
module_param(cnt_width, uint, 0444);
MODULE_PARM_DESC(cnt_width, "Counter width CNT_WIDTH (33..64)");
static unsigned int drain_period = 4096;
module_param(drain_period, uint, 0444);
MODULE_PARM_DESC(drain_period, "DRAIN_PERIOD in cycles (power of two, 1..32768)");
static unsigned int tag_capacity = 256;
module_param(tag_capacity, uint, 0444);
MODULE_PARM_DESC(tag_capacity, "PCIe tag capacity (1..65535)");
static unsigned int stfifo_capacity = 1024;
module_param(stfifo_capacity, uint, 0444);
MODULE_PARM_DESC(stfifo_capacity, "Storage FIFO words (1..65535)");
static unsigned int pcie_mhz = 400;
module_param(pcie_mhz, uint, 0444);
MODULE_PARM_DESC(pcie_mhz, "PCIe probe clock in MHz (1..10000)");
static unsigned int dma_mhz = 200;
module_param(dma_mhz, uint, 0444);
MODULE_PARM_DESC(dma_mhz, "DMA probe clock in MHz (1..10000)");
static unsigned int speedup = 1;
module_param(speedup, uint, 0444);
MODULE_PARM_DESC(speedup, "Multiply both clocks (and so the traffic) by this (1..100)");
static unsigned int magic = TLM_MAGIC_VALUE;
module_param(magic, uint, 0444);
MODULE_PARM_DESC(magic, "Value of the MAGIC register");
static unsigned int version = TLM_VERSION_VALUE;
module_param(version, uint, 0444);
MODULE_PARM_DESC(version, "Value of the VERSION register, (major << 16) | minor");
static char *profile = "idle";
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile, "Initial traffic profile: idle, seed or busy");
static bool ideal;
module_param(ideal, bool, 0444);
MODULE_PARM_DESC(ideal, "Idealised block: every channel drains at the same instant, padding regions never count (default: faithful)");
static unsigned int mi_mhz = 125;
module_param(mi_mhz, uint, 0444);
MODULE_PARM_DESC(mi_mhz, "MI bus clock in MHz, sets the BUSY time (1..1000, default 125)");
/*
 * A clock below 1 MHz stretches the MI-cycle windows of the contract (12
 * cycles of CLEAR FLAGS) beyond the jitter of a loaded TCG guest, whose
 * register accesses alone take microseconds.
 */
static unsigned int mi_khz;
module_param(mi_khz, uint, 0444);
MODULE_PARM_DESC(mi_khz, "MI bus clock in kHz, overrides mi_mhz (1..1000000; 0: mi_mhz)");
static unsigned int drain_slot;
module_param(drain_slot, uint, 0444);
MODULE_PARM_DESC(drain_slot, "Probe cycles between the drains of two channels (0: the sweep spans half a drain period)");
static unsigned int fifo_depth;
module_param(fifo_depth, uint, 0444);
MODULE_PARM_DESC(fifo_depth, "Deltas one probe FIFO holds (0: that probe's channel count, one drain; at most 1024)");
static unsigned int add_cycles = 3;
module_param(add_cycles, uint, 0444);
MODULE_PARM_DESC(add_cycles, "MI cycles the accumulator needs per delta (1..64, default 3)");
static unsigned int seed;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Seed of the random drops under overload (0: a random seed at load)");
static int sim_numa_node = NUMA_NO_NODE;
module_param_named(numa_node, sim_numa_node, int, 0444);
MODULE_PARM_DESC(numa_node, "NUMA node of the devices (default -1: none)");
static char *seq_at_load;
module_param(seq_at_load, charp, 0444);
MODULE_PARM_DESC(seq_at_load, "mmio_seq operations each device runs right after its reset, at load (results in mmio_seq)");

/* ---------------------------------------------------------------------- */
/* Layout derived from the parameters (same for every instance)           */

struct tlm_layout {
	unsigned int endpoints, ports;
	unsigned int regions[TLM_NBUS];	/* real regions per bus kind */
	unsigned int items[TLM_NBUS];	/* MFB items per region */
	unsigned int rp, rd;		/* regions of the PCIe / DMA probe */
	unsigned int pcie_ch, dma_ch, cpe, used, entries;
	unsigned int width, drain;
	unsigned int slot[2];		/* drain slot of the PCIe / DMA probe */
	unsigned int depth[2];		/* FIFO depth of a PCIe / DMA probe */
	u64 load_num, load_den;		/* accumulator load: work / MI time */
	unsigned int mi_khz;		/* MI clock: mi_khz, or mi_mhz in kHz */
	u64 mask;
	u32 cfg_topology, cfg_layout, cfg_pcie, cfg_dma, cfg_drain;
	u32 cfg_regions, cfg_width, cfg_hist, cfg_capacity, cfg_width_dma;
};

static struct tlm_layout lay;

/* ---------------------------------------------------------------------- */
/* Traffic profiles                                                       */

/*
 * Rates are counts per second of the reference clock of the bus's probe
 * (TLM_REF_PCIE_HZ for RQ, RC, brakes and bands; TLM_REF_DMA_HZ for UP and
 * DOWN). Region r >= 4 of a wider bus uses the rate of region 3. "full" makes
 * every real region carry data in every word and fills every region with items.
 */
struct tlm_bus_prof {
	u64 rate[TLM_PROF_FIELDS];
	bool full;
	/*
	 * Placed frames (frame > 0): back-to-back frames of @frame bytes, the
	 * first starting in real region @start; frames, items and regions then
	 * follow from the words. Derived: @fr_n regions per frame, and the word
	 * boundaries that end a frame: word j (from 1) ends one when
	 * j = fr_j0 mod fr_per (fr_j0 == fr_per: never).
	 */
	u32 frame, start;
	u32 fr_n, fr_per, fr_j0;
};

struct tlm_profile {
	char name[16];
	bool active;			/* false: nothing moves, not even cycles */
	struct tlm_bus_prof bus[TLM_NBUS];
	u64 brake[TLM_REASONS];
	u64 band[TLM_HISTS][TLM_BANDS - 1];	/* band 3 takes the rest */
	/* gauges: now and lowest per drain period, free tags / FIFO words */
	unsigned int tags_now, tags_low, fifo_now, fifo_low;
};

/*
 * "seed": the traffic of the example report in the seed documentation
 * (1.00 s, PCIe clock 400 MHz, DMA clock 200 MHz). Gauges refer to 256 tags
 * and 1024 FIFO words and scale with the configured capacities.
 */
static const struct tlm_profile tlm_prof_seed = {
	.name = "seed",
	.active = true,
	.bus = {
		[TLM_RQ] = { .rate = {
			[F_WORDS] = 359600000, [F_STALL] = 40000,
			[F_FRAMES] = 58000000, [F_ITEMS] = 8979062500ULL,
			[F_REGION + 0] = 359600000, [F_REGION + 1] = 254400000,
			[F_REGION + 2] = 254400000, [F_REGION + 3] = 254000000,
		} },
		[TLM_RC] = { .rate = {
			[F_WORDS] = 197600000, [F_STALL] = 0,
			[F_FRAMES] = 34000000, [F_ITEMS] = 5718437500ULL,
			[F_REGION + 0] = 179200000, [F_REGION + 1] = 178800000,
			[F_REGION + 2] = 178400000, [F_REGION + 3] = 178360000,
		} },
		[TLM_UP] = { .rate = {
			[F_WORDS] = 133800000, [F_STALL] = 45400000,
			[F_FRAMES] = 43001200, [F_MVB] = 58000000,
			[F_MVB_STALL] = 27800000, [F_ITEMS] = 2126250000ULL,
			[F_REGION + 0] = 133400000, [F_REGION + 1] = 132400000,
			[F_REGION + 2] = 132400000, [F_REGION + 3] = 132400000,
		} },
		[TLM_DOWN] = { .rate = {
			[F_WORDS] = 97200000, [F_STALL] = 1600000,
			[F_FRAMES] = 34800000, [F_MVB] = 34800000,
			[F_MVB_STALL] = 600000, [F_ITEMS] = 1454375000ULL,
			[F_REGION + 0] = 91000000, [F_REGION + 1] = 90800000,
			[F_REGION + 2] = 90800000, [F_REGION + 3] = 90800000,
		} },
	},
	.brake = { 54400000, 1600000, 0, 0, 33600000, 400000 },
	.band = {
		{ 1200000, 159200000, 31600000 },	/* + 208000000 */
		{ 0, 84000000, 108000000 },		/* + 208000000 */
	},
	.tags_now = 118, .tags_low = 3, .fifo_now = 640, .fifo_low = 96,
};

/* "busy": saturated buses, for wrap tests (use with speedup for CNT_WIDTH 33) */
static const struct tlm_profile tlm_prof_busy = {
	.name = "busy",
	.active = true,
	.bus = {
		[TLM_RQ] = { .full = true, .rate = {
			[F_WORDS] = 380000000, [F_STALL] = 20000000,
			[F_FRAMES] = 47500000 } },
		[TLM_RC] = { .full = true, .rate = {
			[F_WORDS] = 380000000, [F_STALL] = 20000000,
			[F_FRAMES] = 47500000 } },
		[TLM_UP] = { .full = true, .rate = {
			[F_WORDS] = 190000000, [F_STALL] = 10000000,
			[F_FRAMES] = 23750000, [F_MVB] = 30000000,
			[F_MVB_STALL] = 20000000 } },
		[TLM_DOWN] = { .full = true, .rate = {
			[F_WORDS] = 190000000, [F_STALL] = 10000000,
			[F_FRAMES] = 23750000, [F_MVB] = 23750000,
			[F_MVB_STALL] = 20000000 } },
	},
	.brake = { 40000000, 40000000, 40000000, 40000000, 40000000, 40000000 },
	.band = {
		{ 100000000, 100000000, 100000000 },
		{ 100000000, 100000000, 100000000 },
	},
	.tags_now = 16, .tags_low = 0, .fifo_now = 128, .fifo_low = 0,
};

static const struct tlm_profile tlm_prof_idle = {
	.name = "idle",
	.tags_now = TLM_REF_TAGS, .tags_low = TLM_REF_TAGS,
	.fifo_now = TLM_REF_STFIFO, .fifo_low = TLM_REF_STFIFO,
};

static const struct tlm_profile *const tlm_profiles[] = {
	&tlm_prof_idle, &tlm_prof_seed, &tlm_prof_busy,
};

static const char *const tlm_bus_names[TLM_NBUS] = { "rq", "rc", "up", "down" };

/* ---------------------------------------------------------------------- */
/* Instances                                                              */

struct tlm_clock {
	u64 t0;			/* ktime (ns) at which the profile started */
	u64 periods;		/* drain periods already accounted */
	u32 mhz;		/* effective clock (speedup applied) */
};

/* Remainders of the rate divisions, so long runs stay exact */
struct tlm_rem {
	u64 bus[TLM_NBUS][TLM_PROF_FIELDS];
	u64 wpos[TLM_NBUS];	/* placed frames: words moved, mod fr_n */
	u64 brake[TLM_REASONS];
	u64 band[TLM_HISTS][TLM_BANDS - 1];
};

/* Deltas of one or more drain periods of one probe, common to all endpoints */
struct tlm_delta {
	u64 cycles;
	u64 bus[2][TLM_PROF_FIELDS];
	u64 pad[2];		/* each padding region of the bus (faithful) */
	u64 brake[TLM_REASONS];
	u64 band[TLM_HISTS][TLM_BANDS];
};

/*
 * One probe kind's drain in progress: the deltas of the last drain period
 * per channel of the probe (the same for every endpoint and port), of which
 * channels below @done have landed in the live counters.
 */
struct tlm_drain {
	u64 ch[TLM_MAX_CH];
	u64 head[TLM_MAX_CH];	/* each channel's window 0 of the profile */
	unsigned int done, nch;
};

/* A delta of one channel, in the FIFO of that probe of every endpoint */
struct tlm_qent {
	u64 v, t;		/* value; ktime (ns) at which it arrived */
	u16 k;			/* channel of the probe */
	bool dma;
};

/*
 * The accumulator: one delta per add_cycles MI cycles, paused while BUSY.
 * Every endpoint's probe of a kind gets the same deltas at the same instant,
 * so the FIFOs of one kind hold the same channels: one queue entry stands
 * for one delta in each of them and costs endpoints x add_cycles MI cycles.
 */
struct tlm_adder {
	struct tlm_qent *q;	/* ring, in arrival order */
	unsigned int head, len, cap;
	unsigned int count[2];	/* entries of each probe kind */
	u64 free_at;		/* ktime at which the next entry can start */
	u64 cost_ns;		/* one entry */
	u64 dropped;		/* deltas dropped at a full FIFO (all endpoints) */
	u64 dropped_fifo[2];	/* of those: one at a time, PCIe / DMA probes */
	u64 now;		/* the last instant the model advanced to */
};

/*
 * The deltas one access finds arrived, per probe kind in arrival order: the
 * channels one at a time, and at most one lump of whole drain periods
 * (k == TLM_LUMP, t its start). tlm_adder_feed() merges the two kinds in
 * time order, as the accumulator sees them.
 */
#define TLM_LUMP		U16_MAX
#define TLM_STAGE		(2 * TLM_MAX_CH + 1)

struct tlm_stage {
	struct tlm_qent e[2][TLM_STAGE];
	unsigned int n[2];
	u64 lump[2][TLM_MAX_CH];	/* the sums of the lump's periods */
	u64 lump_t2[2], lump_n[2];	/* its end, its periods */
};

struct tlm_sim;

/* Platform data; the platform core keeps a copy, so it carries a back link */
struct tlm_pdata {
	struct hwtel_sim_io io;
	struct tlm_sim *sim;
};

/* One access of an mmio_seq sequence and its instants (ns from the start) */
struct tlm_seq_op {
	char op;		/* 'r', 'w' or 'd' (wait) */
	u32 off;
	u64 val;
	u64 t0, t1;
};

#define TLM_SEQ_OPS		16
#define TLM_SEQ_WAIT_MAX	1000000	/* ns, with interrupts off */

struct tlm_stats {
	u64 reads, writes, snapshots, clears;
	u64 irqoff_reads;	/* counter window reads made with interrupts off */
};

struct tlm_sim {
	raw_spinlock_t lock;	/* everything below; nests in the driver's raw lock */
	u64 base;
	struct platform_device *pdev;
	struct dentry *dir;

	struct tlm_profile prof;
	struct tlm_clock pclk, dclk;
	struct tlm_rem rem;

	struct tlm_drain pdrain, ddrain;
	u64 *live, *snap, *pending;
	u64 *truth;		/* every count that landed, never cleared (mod 2^64) */
	bool pending_valid;
	bool cmd_fresh;		/* the last MI access was a COMMAND write */
	bool overload;		/* the accumulator drops bus deltas */
	u64 rnd;		/* state of the overload drops' generator */
	bool flags_clearing;	/* CLEAR FLAGS written, not yet effective */
	u64 flags_clear_at;	/* ... effective at this instant (ns) */
	u64 vec[TLM_MAX_CH];	/* scratch channel vector */
	u64 busy_until, busy_ns, busy_clear_ns;
	u64 busy_start;		/* the BUSY that ends at busy_until began here */
	u64 busy_last;		/* length of the last command's BUSY, ns */
	u64 busy_fixed;		/* busy_ns written: every BUSY this long */
	bool busy_is_fixed;
	u64 sweep_start, sweep_ns;	/* the copy into pending, entry by entry */
	struct tlm_adder adder;
	struct tlm_stage *stage;
	u64 read_ns;		/* each read's bus latency (debugfs read_ns) */
	bool link_down;		/* reads complete with all ones, writes drop */
	u32 flags;		/* TLM_ST_LOST_DELTA | TLM_ST_OVERRUN */
	u32 read_sel;

	/* gauge registers, updated once per PCIe drain period */
	u32 pcie_status[TLM_MAX_EP];
	u32 tags_now[TLM_MAX_EP], tags_low[TLM_MAX_EP];
	u32 fifo_now[TLM_MAX_EP], fifo_low[TLM_MAX_EP];
	/* their inputs: level now and lowest since the last drain */
	u32 in_status[TLM_MAX_EP];
	u32 in_tags[TLM_MAX_EP], in_tags_min[TLM_MAX_EP];
	u32 in_fifo[TLM_MAX_EP], in_fifo_min[TLM_MAX_EP];

	/* timed profile changes (profile_at), in time order; those below
	 * sched_next are done
	 */
	unsigned int nsched, sched_next;
	u64 sched_t[TLM_MAX_SCHED];
	const struct tlm_profile *sched_p[TLM_MAX_SCHED];

	struct tlm_stats stats;
	u32 mmio_off;		/* register selected by the mmio file */
	struct mutex seq_mutex;	/* the mmio_seq results */
	struct tlm_seq_op seq[TLM_SEQ_OPS];
	unsigned int nseq;
	struct tlm_pdata pd;	/* accessors for the mmio file */
};

static struct tlm_sim *tlm_sims[TLM_MAX_INSTANCES];

static void tlm_set_profile(struct tlm_sim *sim, const struct tlm_profile *p,
			    bool builtin, u64 now);

/*
 * The model's register windows live on a private bus: they are never mapped,
 * and claiming them in iomem_resource would fail on machines (and QEMU CPUs)
 * with fewer physical address bits than the realistic BAR addresses need.
 */
static struct resource tlm_bus_res = {
	.name = "hwtel-sim-pcie",
	.start = TLM_BASE,
	.end = TLM_BASE + TLM_MAX_INSTANCES * TLM_STRIDE - 1,
	.flags = IORESOURCE_MEM,
};

/* ---------------------------------------------------------------------- */
/* Time and traffic                                                       */

/* floor of rate * cyc / den, remainder carried in *rem; cyc <= 2^31 */
static u64 tlm_frac(u64 rate, u32 den, u64 cyc, u64 *rem)
{
	u32 r, rr;
	u64 q, x;

	q = div_u64_rem(rate, den, &r);
	x = (u64)r * cyc + *rem;
	x = div_u64_rem(x, den, &rr);
	*rem = rr;
	return q * cyc + x;
}

/* Regions g in [@a, @a + @len) with g = @r mod @n (0 <= @a, @r < @n) */
static u64 tlm_count_mod(u64 a, u64 len, u32 n, u32 r)
{
	return div_u64(a + len + n - 1 - r, n) - div_u64(a + n - 1 - r, n);
}

/*
 * Placed frames: @words full words of back-to-back frames of bp->frame
 * bytes (the first one starting in real region bp->start), from the
 * stream position in @rem. Adds frames, items and region counts to @d and
 * returns the words in which a frame is still open after the last real
 * region: the block's padding regions count in each of them.
 */
static u64 tlm_frames_step(const struct tlm_bus_prof *bp, unsigned int kind,
			   u64 words, u64 *d, u64 *wpos)
{
	u64 nreg = lay.regions[kind], ipr = lay.items[kind];
	u64 rbytes = ipr * item_bytes, len = words * nreg, a, ends;
	u32 n = bp->fr_n, s = bp->start % n;
	u64 last = DIV_ROUND_UP(bp->frame - (n - 1) * rbytes, item_bytes);
	unsigned int f;

	a = *wpos * nreg % n;
	d[F_FRAMES] += tlm_count_mod(a, len, n, s);
	/* a frame ends in the region before the next one starts */
	ends = tlm_count_mod(a, len, n, (s + n - 1) % n);
	d[F_ITEMS] += len * ipr - ends * (ipr - last);
	for (f = F_REGION; f < TLM_PROF_FIELDS; f++)
		d[f] += words;
	/* words whose end is a frame boundary, j = *wpos + 1 .. *wpos + words */
	if (bp->fr_j0 < bp->fr_per)
		ends = tlm_count_mod(*wpos + 1, words, bp->fr_per, bp->fr_j0);
	else
		ends = 0;
	*wpos = (*wpos + words) % n;
	return words - ends;
}

/* Deltas of bus kind @kind over @cyc cycles, with the contract's invariants */
static void tlm_bus_step(struct tlm_sim *sim, unsigned int kind, u32 den,
			 u64 cyc, u64 *d, u64 *pad)
{
	const struct tlm_bus_prof *bp = &sim->prof.bus[kind];
	unsigned int preg = kind < TLM_UP ? lay.rp : lay.rd;
	u64 *rem = sim->rem.bus[kind];
	u64 nreg = lay.regions[kind];
	u64 words, frames, v;
	unsigned int f;

	words = min(tlm_frac(bp->rate[F_WORDS], den, cyc, &rem[F_WORDS]), cyc);
	d[F_WORDS] += words;
	v = tlm_frac(bp->rate[F_STALL], den, cyc, &rem[F_STALL]);
	d[F_STALL] += min(v, cyc - words);
	if (bp->frame) {
		frames = d[F_FRAMES];
		v = tlm_frames_step(bp, kind, words, d, &sim->rem.wpos[kind]);
		frames = d[F_FRAMES] - frames;
		if (!ideal && preg > nreg) {
			*pad += v;
			d[F_ITEMS] += v * lay.items[kind] * (preg - nreg);
		}
		v = frames;
	} else {
		v = tlm_frac(bp->rate[F_FRAMES], den, cyc, &rem[F_FRAMES]);
		v = min(v, words * nreg);
		d[F_FRAMES] += v;
		frames = v;
	}
	if (kind == TLM_UP || kind == TLM_DOWN) {
		u64 mvb = tlm_frac(bp->rate[F_MVB], den, cyc, &rem[F_MVB]);

		/* UP: every frame is a request, reads come on top */
		if (kind == TLM_UP)
			mvb = max(mvb, v);
		d[F_MVB] += mvb;
		v = tlm_frac(bp->rate[F_MVB_STALL], den, cyc, &rem[F_MVB_STALL]);
		d[F_MVB_STALL] += min(v, cyc);
	}
	if (bp->frame)
		return;
	if (bp->full) {
		d[F_ITEMS] += words * lay.items[kind] * nreg;
	} else {
		v = tlm_frac(bp->rate[F_ITEMS], den, cyc, &rem[F_ITEMS]);
		d[F_ITEMS] += min(v, words * lay.items[kind] * nreg);
	}
	for (f = F_REGION; f < TLM_PROF_FIELDS; f++) {
		if (bp->full) {
			d[f] += words;
			continue;
		}
		v = tlm_frac(bp->rate[f], den, cyc, &rem[f]);
		d[f] += min(v, words);
	}
	/*
	 * The block: on a bus narrower than its probe, the padding regions
	 * count in every word in which a frame is still open after the last
	 * real region. Rates say nothing of where frames lie: the model takes
	 * the words that start no frame as such words (placed frames, above,
	 * count them exactly).
	 */
	if (!ideal && preg > nreg) {
		v = words - min(frames, words);
		*pad += v;
		d[F_ITEMS] += v * lay.items[kind] * (preg - nreg);
	}
}

static void tlm_pcie_step(struct tlm_sim *sim, u64 cyc, struct tlm_delta *d)
{
	unsigned int k, h;
	u64 v, sum;

	d->cycles += cyc;
	tlm_bus_step(sim, TLM_RQ, TLM_REF_PCIE_HZ, cyc, d->bus[0], &d->pad[0]);
	tlm_bus_step(sim, TLM_RC, TLM_REF_PCIE_HZ, cyc, d->bus[1], &d->pad[1]);
	for (k = 0; k < TLM_REASONS; k++) {
		v = tlm_frac(sim->prof.brake[k], TLM_REF_PCIE_HZ, cyc,
			     &sim->rem.brake[k]);
		d->brake[k] += min(v, cyc);
	}
	/* exactly one band counts in every cycle */
	for (h = 0; h < TLM_HISTS; h++) {
		sum = 0;
		for (k = 0; k < TLM_BANDS - 1; k++) {
			v = tlm_frac(sim->prof.band[h][k], TLM_REF_PCIE_HZ, cyc,
				     &sim->rem.band[h][k]);
			v = min(v, cyc - sum);
			d->band[h][k] += v;
			sum += v;
		}
		d->band[h][TLM_BANDS - 1] += cyc - sum;
	}
}

static void tlm_dma_step(struct tlm_sim *sim, u64 cyc, struct tlm_delta *d)
{
	d->cycles += cyc;
	tlm_bus_step(sim, TLM_UP, TLM_REF_DMA_HZ, cyc, d->bus[0], &d->pad[0]);
	tlm_bus_step(sim, TLM_DOWN, TLM_REF_DMA_HZ, cyc, d->bus[1], &d->pad[1]);
}

static inline void tlm_add(struct tlm_sim *sim, unsigned int entry, u64 d)
{
	sim->live[entry] = (sim->live[entry] + d) & lay.mask;
}

/* Per-channel deltas of one bus of a probe, at probe channel @ch */
static void tlm_vec_bus(u64 *vec, unsigned int ch, unsigned int kind,
			unsigned int preg, const u64 *d, u64 pad)
{
	unsigned int f, r;

	for (f = 0; f < F_REGION; f++)
		vec[ch + f] = d[f];
	for (r = 0; r < preg; r++)
		vec[ch + F_REGION + r] = r < lay.regions[kind] ?
			d[F_REGION + min(r, TLM_PROF_REGIONS - 1U)] : pad;
}

static void tlm_vec_pcie(u64 *vec, const struct tlm_delta *d)
{
	unsigned int k, h, b, brk;

	vec[0] = d->cycles;
	for (b = 0; b < 2; b++)
		tlm_vec_bus(vec, 1 + b * (TLM_BUS_FIELDS + lay.rp), TLM_RQ + b,
			    lay.rp, d->bus[b], d->pad[b]);
	brk = 1 + 2 * (TLM_BUS_FIELDS + lay.rp);
	for (k = 0; k < TLM_REASONS; k++)
		vec[brk + k] = d->brake[k];
	for (h = 0; h < TLM_HISTS; h++)
		for (k = 0; k < TLM_BANDS; k++)
			vec[brk + TLM_REASONS + h * TLM_BANDS + k] = d->band[h][k];
}

static void tlm_vec_dma(u64 *vec, const struct tlm_delta *d)
{
	unsigned int p, b;

	vec[0] = d->cycles;
	for (p = 0; p < lay.ports; p++)
		for (b = 0; b < 2; b++)
			tlm_vec_bus(vec, 1 + (2 * p + b) * (TLM_BUS_FIELDS + lay.rd),
				    TLM_UP + b, lay.rd, d->bus[b], d->pad[b]);
}

/* Land channels [@from, @to) of probe @dma's drain in every endpoint */
static void tlm_land(struct tlm_sim *sim, bool dma, const u64 *vec,
		     unsigned int from, unsigned int to)
{
	unsigned int ep, k, base;

	for (ep = 0; ep < lay.endpoints; ep++) {
		base = ep * lay.cpe + (dma ? lay.pcie_ch : 0);
		for (k = from; k < to; k++) {
			tlm_add(sim, base + k, vec[k]);
			sim->truth[base + k] += vec[k];
		}
	}
}

/*
 * Gauges take their inputs once per PCIe drain period: the level now and
 * the lowest level seen during the period.
 */
static void tlm_fold_gauges(struct tlm_sim *sim)
{
	unsigned int ep;

	for (ep = 0; ep < lay.endpoints; ep++) {
		if (sim->prof.active) {
			sim->in_tags[ep] = sim->prof.tags_now;
			sim->in_fifo[ep] = sim->prof.fifo_now;
			sim->in_tags_min[ep] = min(sim->in_tags_min[ep],
						   sim->prof.tags_low);
			sim->in_fifo_min[ep] = min(sim->in_fifo_min[ep],
						   sim->prof.fifo_low);
		}
		sim->pcie_status[ep] = sim->in_status[ep];
		sim->tags_now[ep] = sim->in_tags[ep];
		sim->fifo_now[ep] = sim->in_fifo[ep];
		sim->tags_low[ep] = min(sim->tags_low[ep], sim->in_tags_min[ep]);
		sim->fifo_low[ep] = min(sim->fifo_low[ep], sim->in_fifo_min[ep]);
		sim->in_tags_min[ep] = sim->in_tags[ep];
		sim->in_fifo_min[ep] = sim->in_fifo[ep];
	}
}

/* Cycles of @clk elapsed up to @now */
static u64 tlm_clock_cycles(const struct tlm_clock *clk, u64 now)
{
	if (now <= clk->t0)
		return 0;
	return mul_u64_u32_div(now - clk->t0, clk->mhz, 1000);
}

/* ---------------------------------------------------------------------- */
/* The accumulator (not with ideal=1: there every delta lands at once)   */

/* Channel @k of probe @dma gets @v in every endpoint: the adder added it */
static void tlm_land_one(struct tlm_sim *sim, bool dma, unsigned int k, u64 v)
{
	unsigned int ep, e;

	for (ep = 0; ep < lay.endpoints; ep++) {
		e = ep * lay.cpe + (dma ? lay.pcie_ch : 0) + k;
		tlm_add(sim, e, v);
		sim->truth[e] += v;
	}
}

/* The accumulator may not start an entry at @t while BUSY: it waits */
static u64 tlm_adder_start(const struct tlm_sim *sim, u64 t)
{
	if (t >= sim->busy_start && t < sim->busy_until)
		return sim->busy_until;
	return t;
}

/* Add what the accumulator has had the time to add by @t */
static void tlm_adder_run(struct tlm_sim *sim, u64 t)
{
	struct tlm_adder *a = &sim->adder;
	struct tlm_qent *e;
	u64 s;

	while (a->len) {
		e = &a->q[a->head];
		s = tlm_adder_start(sim, max(a->free_at, e->t));
		if (s > t)
			break;
		tlm_land_one(sim, e->dma, e->k, e->v);
		a->free_at = s + a->cost_ns;
		a->head = (a->head + 1) % a->cap;
		a->len--;
		a->count[e->dma]--;
	}
}

/*
 * Channel @k's delta @v reaches the FIFO of probe @dma at @t: dropped when
 * that FIFO is full (LOST DELTA), else queued. With the queue empty and the
 * accumulator free it is added at once, as the block adds it within a few
 * MI cycles; one that comes while the previous entry is still being added
 * is let through too (an entry stands for all endpoints, the block's FIFOs
 * would each hold one delta meanwhile), so at a low load nothing waits for
 * the next access.
 */
static void tlm_arrive(struct tlm_sim *sim, bool dma, unsigned int k, u64 v,
		       u64 t)
{
	struct tlm_adder *a = &sim->adder;
	unsigned int i;

	tlm_adder_run(sim, t);
	if (a->count[dma] >= lay.depth[dma]) {
		a->dropped += lay.endpoints;
		a->dropped_fifo[dma] += lay.endpoints;
		sim->flags |= TLM_ST_LOST_DELTA;
		return;
	}
	if (!a->len && a->free_at <= t + a->cost_ns &&
	    tlm_adder_start(sim, t) == t) {
		tlm_land_one(sim, dma, k, v);
		a->free_at = max(a->free_at, t) + a->cost_ns;
		return;
	}
	i = (a->head + a->len) % a->cap;
	a->q[i].v = v;
	a->q[i].t = t;
	a->q[i].k = k;
	a->q[i].dma = dma;
	a->len++;
	a->count[dma]++;
}

/* ktime at which probe cycle @cyc of @clk's time base passes */
static u64 tlm_cycle_time(const struct tlm_clock *clk, u64 cyc)
{
	return clk->t0 + mul_u64_u32_div(cyc, 1000, clk->mhz);
}

/*
 * Channels [@from, @to) of drain period @n of probe @dma reach its FIFO, each
 * at its drain slot, and are added when the accumulator gets to them.
 */
static void tlm_gate(struct tlm_sim *sim, bool dma, const u64 *vec,
		     unsigned int from, unsigned int to, u64 n)
{
	const struct tlm_clock *clk = dma ? &sim->dclk : &sim->pclk;
	unsigned int k;

	struct tlm_stage *st = sim->stage;
	struct tlm_qent *e;

	if (ideal) {
		tlm_land(sim, dma, vec, from, to);
		return;
	}
	for (k = from; k < to; k++) {
		if (WARN_ON_ONCE(st->n[dma] >= TLM_STAGE))
			return;
		e = &st->e[dma][st->n[dma]++];
		e->k = k;
		e->v = vec[k];
		e->dma = dma;
		e->t = tlm_cycle_time(clk, n * lay.drain + (u64)k * lay.slot[dma]);
	}
}

/*
 * Fraction (of TLM_KEEP_ONE) of the deltas arriving evenly over [@t1, @t2)
 * that the accumulator can add: its time outside BUSY over the work.
 */
static u64 tlm_adder_keep(const struct tlm_sim *sim, u64 t1, u64 t2)
{
	u64 span = max(t2, t1 + 1) - t1, free = span, q;

	if (sim->busy_until > t1 && sim->busy_start < t2)
		free -= min(sim->busy_until, t2) - max(sim->busy_start, t1);
	if (!lay.load_num)
		return TLM_KEEP_ONE;
	q = mul_u64_u64_div_u64(free, lay.load_den, lay.load_num);
	if (q >= span)
		return TLM_KEEP_ONE;
	return mul_u64_u64_div_u64(q, TLM_KEEP_ONE, span);
}

/*
 * The lump of probe @dma staged by tlm_gate_lump(), arriving from @t1 on.
 * Lazily, as a fluid: the accumulator takes the fraction of its deltas its
 * free time allows (all of them unless BUSY covered much of that time or
 * the layout's load exceeds the accumulator), the rest of every channel is
 * dropped.
 */
static void tlm_adder_lump(struct tlm_sim *sim, bool dma, u64 t1)
{
	struct tlm_stage *st = sim->stage;
	unsigned int k, nch = dma ? lay.dma_ch : lay.pcie_ch;
	struct tlm_adder *a = &sim->adder;
	u64 keep, n, t2 = st->lump_t2[dma];

	tlm_adder_run(sim, t1);
	keep = tlm_adder_keep(sim, t1, t2);
	if (keep == TLM_KEEP_ONE) {
		tlm_land(sim, dma, st->lump[dma], 0, nch);
		return;
	}
	for (k = 0; k < nch; k++)
		tlm_land_one(sim, dma, k, mul_u64_u64_div_u64(st->lump[dma][k],
							      keep, TLM_KEEP_ONE));
	n = st->lump_n[dma] * nch;
	a->dropped += (n - mul_u64_u64_div_u64(n, keep, TLM_KEEP_ONE)) *
		      lay.endpoints;
	a->free_at = max(a->free_at, t2);
	sim->flags |= TLM_ST_LOST_DELTA;
}

/* @vec holds the sums of drain periods [@n1, @n2] of probe @dma: stage them */
static void tlm_gate_lump(struct tlm_sim *sim, bool dma, const u64 *vec,
			  unsigned int nch, u64 n1, u64 n2)
{
	const struct tlm_clock *clk = dma ? &sim->dclk : &sim->pclk;
	struct tlm_stage *st = sim->stage;
	struct tlm_qent *e;

	if (ideal) {
		tlm_land(sim, dma, vec, 0, nch);
		return;
	}
	if (WARN_ON_ONCE(st->n[dma] >= TLM_STAGE))
		return;
	e = &st->e[dma][st->n[dma]++];
	e->k = TLM_LUMP;
	e->dma = dma;
	e->t = tlm_cycle_time(clk, n1 * lay.drain);
	memcpy(st->lump[dma], vec, nch * sizeof(u64));
	st->lump_t2[dma] = tlm_cycle_time(clk, (n2 + 1) * lay.drain);
	st->lump_n[dma] = n2 - n1 + 1;
}

/* What the probes delivered since the last access, in time order */
static void tlm_adder_feed(struct tlm_sim *sim)
{
	struct tlm_stage *st = sim->stage;
	unsigned int i[2] = { 0, 0 };
	struct tlm_qent *e;
	bool d;

	while (i[0] < st->n[0] || i[1] < st->n[1]) {
		d = i[0] >= st->n[0] ||
		    (i[1] < st->n[1] && st->e[1][i[1]].t < st->e[0][i[0]].t);
		e = &st->e[d][i[d]++];
		if (e->k == TLM_LUMP)
			tlm_adder_lump(sim, d, e->t);
		else
			tlm_arrive(sim, d, e->k, e->v, e->t);
	}
	st->n[0] = 0;
	st->n[1] = 0;
}

/* Add the deltas of the next @cyc cycles of probe @dma to @d */
static void tlm_compute_cycles(struct tlm_sim *sim, bool dma, u64 cyc,
			       struct tlm_delta *d)
{
	u64 c;

	for (; cyc; cyc -= c) {
		c = min(cyc, TLM_CHUNK_CYCLES);
		if (dma)
			tlm_dma_step(sim, c, d);
		else
			tlm_pcie_step(sim, c, d);
	}
}

/* Deltas of @n drain periods of probe @dma into @d */
static void tlm_compute(struct tlm_sim *sim, bool dma, u64 n,
			struct tlm_delta *d)
{
	memset(d, 0, sizeof(*d));
	tlm_compute_cycles(sim, dma, n * lay.drain, d);
}

static void tlm_vec(bool dma, u64 *vec, const struct tlm_delta *d)
{
	if (dma)
		tlm_vec_dma(vec, d);
	else
		tlm_vec_pcie(vec, d);
}

/* xorshift64*: the overload drops, repeatable for a given seed */
static u32 tlm_random(struct tlm_sim *sim)
{
	u64 x = sim->rnd;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sim->rnd = x;
	return (x * 0x2545f4914f6cdd1dULL) >> 32;
}

/*
 * The accumulator is overloaded: every channel but the cycle counter (0)
 * loses a random subset of the deltas of @drains drain periods in @ch, each
 * drain's delta dropped with probability 1/2. A single drain is kept or
 * dropped whole; for several drains that land together (the model computes
 * them at once) a random number of them, 0 to @drains, is kept, as a share
 * of their sum. ideal=1: every delta but the cycles' is dropped.
 */
static void tlm_overload_drop(struct tlm_sim *sim, u64 *ch, unsigned int nch,
			      u64 drains)
{
	unsigned int k;
	u64 kept;

	for (k = 1; k < nch; k++) {
		if (ideal) {
			ch[k] = 0;
		} else if (drains == 1) {
			if (tlm_random(sim) & 1)
				ch[k] = 0;
		} else {
			kept = ((u64)tlm_random(sim) << 32 | tlm_random(sim)) %
			       (drains + 1);
			ch[k] = mul_u64_u64_div_u64(ch[k], kept, drains);
		}
	}
}

/*
 * The deltas of drain period n of probe channel k land at cycle nD + k * slot;
 * the sweep is shorter than a drain period, so at any instant each channel
 * holds either every drain begun or all but the last one. Each channel's
 * window ends at its own slot: drain n of channel k counts cycles
 * [(n-1)D + k * slot, nD + k * slot). The rates are constant within a
 * profile, so the model computes the common period [(n-1)D, nD) for every
 * channel and adds the channel's window 0, [0, k * slot), once, when the
 * profile starts (tlm_start_windows()); it lands in period 0 at the
 * channel's slot, with what the channel still had to count of the profile
 * before (tlm_carry()). While the accumulator is overloaded, a random subset
 * of the deltas of every channel but the cycle counter is dropped (and LOST
 * DELTA set); the cycle counter's deltas still land.
 */
static void tlm_advance_probe(struct tlm_sim *sim, bool dma, u64 now)
{
	struct tlm_clock *clk = dma ? &sim->dclk : &sim->pclk;
	struct tlm_drain *dr = dma ? &sim->ddrain : &sim->pdrain;
	unsigned int slot = lay.slot[dma], upto, k;
	struct tlm_delta d;
	u64 cycles, periods, within;

	cycles = tlm_clock_cycles(clk, now);
	periods = cycles >> ilog2(lay.drain);
	within = cycles & (lay.drain - 1);
	if (periods > clk->periods) {
		if (!dma)
			tlm_fold_gauges(sim);
		if (!sim->prof.active) {
			clk->periods = periods;
			return;
		}
		/* the drain in progress completes, whole periods land at once */
		tlm_gate(sim, dma, dr->ch, dr->done, dr->nch, clk->periods);
		if (periods - clk->periods > 1) {
			tlm_compute(sim, dma, periods - clk->periods - 1, &d);
			tlm_vec(dma, dr->ch, &d);
			if (sim->overload)
				tlm_overload_drop(sim, dr->ch, dr->nch,
						  periods - clk->periods - 1);
			tlm_gate_lump(sim, dma, dr->ch, dr->nch, clk->periods + 1,
				      periods - 1);
		}
		tlm_compute(sim, dma, 1, &d);
		tlm_vec(dma, dr->ch, &d);
		if (sim->overload) {
			tlm_overload_drop(sim, dr->ch, dr->nch, 1);
			sim->flags |= TLM_ST_LOST_DELTA;
		}
		dr->done = 0;
		clk->periods = periods;
	}
	if (!sim->prof.active)
		return;
	k = slot ? within / slot + 1 : dr->nch;
	upto = min_t(u64, k, dr->nch);
	if (upto > dr->done) {
		tlm_gate(sim, dma, dr->ch, dr->done, upto, periods);
		dr->done = upto;
	}
}

/*
 * The profile of probe @dma ends at @now: its time base restarts.
 * ideal=1: the drain begun lands, the part of a drain period since is not
 * counted. Otherwise each channel keeps in dr->ch what it has counted since
 * the end of its last landed window: the drain it has not landed yet, and
 * the part of the drain period since its start, less the channel's window 0
 * (which landed ahead). That lands in the next profile's window 0 (period
 * 0, at the channel's slot) or, when the next profile is inactive (the
 * model's clocks stop, nothing would drain it), at once, bypassing the
 * accumulator: every counter then holds the count of the same instant.
 */
static void tlm_carry(struct tlm_sim *sim, bool dma, u64 now, bool to_active)
{
	struct tlm_clock *clk = dma ? &sim->dclk : &sim->pclk;
	struct tlm_drain *dr = dma ? &sim->ddrain : &sim->pdrain;
	struct tlm_delta d = { };
	unsigned int k;
	u64 within, v;

	if (ideal) {
		tlm_land(sim, dma, dr->ch, dr->done, dr->nch);
		dr->done = dr->nch;
		return;
	}
	for (k = 0; k < dr->done; k++)
		dr->ch[k] = 0;
	if (sim->prof.active) {
		within = tlm_clock_cycles(clk, now) & (lay.drain - 1);
		tlm_compute_cycles(sim, dma, within, &d);
		tlm_vec(dma, sim->vec, &d);
		if (sim->overload && within) {
			tlm_overload_drop(sim, sim->vec, dr->nch, 1);
			sim->flags |= TLM_ST_LOST_DELTA;
		}
		for (k = 0; k < dr->nch; k++) {
			/* rounding of the two computations apart, never below */
			v = dr->ch[k] + sim->vec[k];
			dr->ch[k] = v - min(v, dr->head[k]);
		}
	}
	memset(dr->head, 0, sizeof(dr->head));
	dr->done = 0;
	if (!to_active) {
		tlm_land(sim, dma, dr->ch, 0, dr->nch);
		dr->done = dr->nch;
	}
}

/*
 * A profile starts: channel k's window 0 is its first k * slot cycles,
 * computed with the new rates from a fresh start; it lands in period 0
 * with what tlm_carry() kept.
 */
static void tlm_start_windows(struct tlm_sim *sim, bool dma)
{
	struct tlm_drain *dr = dma ? &sim->ddrain : &sim->pdrain;
	unsigned int slot = lay.slot[dma], k;
	struct tlm_delta d = { };

	if (ideal || !slot)
		return;
	for (k = 0; k < dr->nch; k++) {
		if (k)
			tlm_compute_cycles(sim, dma, slot, &d);
		tlm_vec(dma, sim->vec, &d);
		dr->head[k] = sim->vec[k];
		dr->ch[k] += dr->head[k];
	}
}

/*
 * The probes drain up to @t and the accumulator adds what it can by then:
 * each call stages at most one drain begun, one lump and one partial drain
 * per probe, which tlm_adder_feed() takes before the next call.
 */
static void tlm_advance_to(struct tlm_sim *sim, u64 t)
{
	sim->adder.now = t;
	tlm_advance_probe(sim, false, t);
	tlm_advance_probe(sim, true, t);
	if (!ideal) {
		tlm_adder_feed(sim);
		tlm_adder_run(sim, t);
	}
}

/* CLEAR FLAGS reaches the flags late: first what happens up to then */
static void tlm_clear_flags_due(struct tlm_sim *sim, u64 now)
{
	if (!sim->flags_clearing || now < sim->flags_clear_at)
		return;
	sim->flags_clearing = false;
	tlm_advance_to(sim, sim->flags_clear_at);
	sim->flags = 0;
}

/* CLEAR FLAGS written at @now; ideal=1: effective at once */
static void tlm_clear_flags(struct tlm_sim *sim, u64 now)
{
	if (ideal) {
		sim->flags = 0;
		return;
	}
	sim->flags_clearing = true;
	sim->flags_clear_at = now + DIV_ROUND_UP(TLM_CLEAR_FLAGS_CYCLES * 1000000ULL,
						 lay.mi_khz);
}

static void tlm_advance(struct tlm_sim *sim, u64 now)
{
	/*
	 * Timed profile changes due by @now switch at their own instant: the
	 * time up to it counts with the old profile (tlm_set_profile()
	 * advances to it first, with the entry already taken off).
	 */
	while (sim->sched_next < sim->nsched && now >= sim->sched_t[sim->sched_next]) {
		unsigned int i = sim->sched_next++;

		tlm_set_profile(sim, sim->sched_p[i], true, sim->sched_t[i]);
	}
	tlm_clear_flags_due(sim, now);
	if (sim->pending_valid && now >= sim->busy_until) {
		swap(sim->snap, sim->pending);
		sim->pending_valid = false;
	}
	tlm_advance_to(sim, now);
}

static unsigned int tlm_scale(unsigned int v, unsigned int ref, unsigned int cap)
{
	return min_t(u64, div_u64((u64)v * cap, ref), cap);
}

/*
 * Switch to @p (a built-in, or an edited copy); the time up to @now still
 * counts with the old profile, then the time base restarts.
 */
static void tlm_set_profile(struct tlm_sim *sim, const struct tlm_profile *p,
			    bool builtin, u64 now)
{
	unsigned int ep;

	tlm_advance(sim, now);
	tlm_carry(sim, false, now, p->active);
	tlm_carry(sim, true, now, p->active);
	sim->prof = *p;
	if (builtin) {
		sim->prof.tags_now = tlm_scale(p->tags_now, TLM_REF_TAGS, tag_capacity);
		sim->prof.tags_low = tlm_scale(p->tags_low, TLM_REF_TAGS, tag_capacity);
		sim->prof.fifo_now = tlm_scale(p->fifo_now, TLM_REF_STFIFO,
					       stfifo_capacity);
		sim->prof.fifo_low = tlm_scale(p->fifo_low, TLM_REF_STFIFO,
					       stfifo_capacity);
	}
	memset(&sim->rem, 0, sizeof(sim->rem));
	sim->pclk.t0 = now;
	sim->pclk.periods = 0;
	sim->dclk.t0 = now;
	sim->dclk.periods = 0;
	if (!sim->prof.active)
		return;
	tlm_start_windows(sim, false);
	tlm_start_windows(sim, true);
	memset(&sim->rem, 0, sizeof(sim->rem));
	/* the gauge registers follow at the next drain */
	for (ep = 0; ep < lay.endpoints; ep++) {
		sim->in_tags[ep] = sim->prof.tags_now;
		sim->in_fifo[ep] = sim->prof.fifo_now;
		sim->in_tags_min[ep] = min(sim->in_tags_min[ep], sim->prof.tags_low);
		sim->in_fifo_min[ep] = min(sim->in_fifo_min[ep], sim->prof.fifo_low);
	}
}

/* ---------------------------------------------------------------------- */
/* Registers                                                              */

/* The lowest values restart from their reset values until the next drain */
static void tlm_clear_marks(struct tlm_sim *sim)
{
	unsigned int ep;

	for (ep = 0; ep < lay.endpoints; ep++) {
		sim->tags_low[ep] = TLM_TAGS_LOW_RESET;
		sim->fifo_low[ep] = TLM_FIFO_LOW_RESET;
	}
}

/*
 * CLEAR zeroes the live counters and the snapshot copy (a copy under way
 * too); deltas still in the probes land after it. With SNAPSHOT in the same
 * write the clear comes first, so that snapshot reads zeros.
 */
/*
 * MI cycles of BUSY after a SNAPSHOT or CLEAR at @now (the contract): one
 * sweep of 2 x ENTRIES cycles plus 1 to 4 by the phase of the MI clock,
 * both together a clear sweep and a snapshot sweep plus 2 to 4, and 3 more
 * when the accumulator is adding a delta as the command arrives.
 */
static u64 tlm_busy_cycles(const struct tlm_sim *sim, u32 cmd, u64 now)
{
	u64 phase = mul_u64_u32_div(now, lay.mi_khz, 1000000), cyc;

	if ((cmd & TLM_CMD_SNAPSHOT) && (cmd & TLM_CMD_CLEAR))
		cyc = 4ULL * lay.entries + 2 + phase % 3;
	else
		cyc = 2ULL * lay.entries + 1 + phase % 4;
	if (sim->adder.free_at > now)
		cyc += TLM_BUSY_ADDER_EXTRA;
	return cyc;
}

/* ns of BUSY after command @cmd (SNAPSHOT and/or CLEAR) at @now */
static u64 tlm_busy_time(const struct tlm_sim *sim, u32 cmd, u64 now)
{
	if (sim->busy_is_fixed)
		return sim->busy_fixed;
	if (ideal)
		return cmd & TLM_CMD_SNAPSHOT ? sim->busy_ns : sim->busy_clear_ns;
	return DIV_ROUND_UP(1000000 * tlm_busy_cycles(sim, cmd, now), lay.mi_khz);
}

/* Entry @i of the copy under way has been swept into the window by @now */
static bool tlm_swept(const struct tlm_sim *sim, unsigned int i, u64 now)
{
	if (now < sim->sweep_start)
		return false;
	return (now - sim->sweep_start) * lay.entries >= (i + 1ULL) * sim->sweep_ns;
}

/*
 * CLEAR zeroes the live counters and the snapshot copy (a copy under way
 * too); deltas still in the probes land after it. With SNAPSHOT in the same
 * write the clear comes first, so that snapshot reads zeros. While BUSY the
 * accumulator adds nothing (tlm_adder_start()).
 */
static void tlm_command(struct tlm_sim *sim, u32 cmd, u64 now)
{
	u64 busy = 0, sweep_at = now;
	unsigned int i;

	if (cmd & (TLM_CMD_SNAPSHOT | TLM_CMD_CLEAR)) {
		busy = tlm_busy_time(sim, cmd, now);
		sim->busy_last = busy;
		if (now >= sim->busy_until)
			sim->busy_start = now;
	}
	if (cmd & TLM_CMD_ANY_CLEAR)
		sim->stats.clears++;
	if (cmd & TLM_CMD_CLEAR) {
		memset(sim->live, 0, lay.entries * sizeof(u64));
		memset(sim->snap, 0, lay.entries * sizeof(u64));
		memset(sim->pending, 0, lay.entries * sizeof(u64));
		tlm_clear_marks(sim);
		sim->busy_until = max(sim->busy_until, now + busy);
		/* the snapshot sweep follows the clear sweep */
		if (!ideal && !sim->busy_is_fixed)
			sweep_at = now + DIV_ROUND_UP(2000000ULL * lay.entries, lay.mi_khz);
	}
	if (cmd & TLM_CMD_CLEAR_FLAGS)
		tlm_clear_flags(sim, now);
	if (cmd & TLM_CMD_CLEAR_MARKS)
		tlm_clear_marks(sim);
	if (cmd & TLM_CMD_SNAPSHOT) {
		sim->stats.snapshots++;
		/* a copy under way keeps what it swept so far */
		if (sim->pending_valid && !ideal)
			for (i = 0; i < lay.used && tlm_swept(sim, i, now); i++)
				sim->snap[i] = sim->pending[i];
		memcpy(sim->pending, sim->live, lay.entries * sizeof(u64));
		sim->pending_valid = true;
		sim->busy_until = ideal ? now + busy : max(sim->busy_until, now + busy);
		sim->sweep_start = sweep_at;
		sim->sweep_ns = sim->busy_is_fixed ? busy :
			DIV_ROUND_UP(2000000ULL * lay.entries, lay.mi_khz);
		if (!busy) {
			swap(sim->snap, sim->pending);
			sim->pending_valid = false;
		}
	}
}

static u32 tlm_reg_read(struct tlm_sim *sim, u32 off, u64 now)
{
	unsigned int ep;
	u64 v;

	off &= ~3U;	/* address bits 1:0 are ignored */
	if (off >= TLM_CNT_BASE) {
		unsigned int i = ((off - TLM_CNT_BASE) / 8) & (lay.entries - 1);

		if (i >= lay.used)
			return 0;
		if (sim->read_sel)
			v = sim->live[i];
		else if (sim->pending_valid && !ideal && tlm_swept(sim, i, now))
			v = sim->pending[i];	/* torn: this entry is new */
		else
			v = sim->snap[i];
		return off & 4 ? upper_32_bits(v) : lower_32_bits(v);
	}
	off &= TLM_REG_ALIAS - 1;
	if (off >= TLM_PCIE_STATUS && off < TLM_EP_REGS_END) {
		ep = (off & 0x3f) / 4;
		if (ep >= lay.endpoints)
			return 0;
		switch (off & ~0x3fU) {
		case TLM_PCIE_STATUS:
			return sim->pcie_status[ep];
		case TLM_PCIE_TAGS:
			return sim->tags_now[ep] | sim->tags_low[ep] << 16;
		default:
			return sim->fifo_now[ep] | sim->fifo_low[ep] << 16;
		}
	}

	switch (off) {
	case TLM_MAGIC:
		return magic;
	case TLM_VERSION:
		return version;
	case TLM_CFG_TOPOLOGY:
		return lay.cfg_topology;
	case TLM_CFG_LAYOUT:
		return lay.cfg_layout;
	case TLM_CFG_PCIE:
		return lay.cfg_pcie;
	case TLM_CFG_DMA:
		return lay.cfg_dma;
	case TLM_CFG_DRAIN:
		return lay.cfg_drain;
	case TLM_CNT_BASE_REG:
		return TLM_CNT_BASE;
	case TLM_STATUS:
		return sim->flags | (now < sim->busy_until ? TLM_ST_BUSY : 0);
	case TLM_READ_SEL:
		return sim->read_sel;
	case TLM_CFG_REGIONS:
		return lay.cfg_regions;
	case TLM_CFG_WIDTH:
		return lay.cfg_width;
	case TLM_CFG_HIST:
		return lay.cfg_hist;
	case TLM_CFG_CAPACITY:
		return lay.cfg_capacity;
	case TLM_CFG_WIDTH_DMA:
		return lay.cfg_width_dma;
	default:
		return 0;
	}
}

static void tlm_reg_write(struct tlm_sim *sim, u32 off, u32 val, u64 now)
{
	off &= ~3U;	/* address bits 1:0 are ignored */
	if (off < TLM_CNT_BASE)
		off &= TLM_REG_ALIAS - 1;
	if (off == TLM_COMMAND) {
		tlm_command(sim, val, now);
		sim->cmd_fresh = true;
		return;
	}
	if (off == TLM_READ_SEL)
		sim->read_sel = val & 1;
	/* everything else is read-only or unmapped: ignored */
}

static struct tlm_sim *tlm_from_io(struct hwtel_sim_io *io)
{
	return container_of(io, struct tlm_pdata, io)->sim;
}

static u64 tlm_io_read(struct hwtel_sim_io *io, u32 off, unsigned int size)
{
	struct tlm_sim *sim = tlm_from_io(io);
	bool irqoff = irqs_disabled();
	unsigned long irqflags;
	u64 now, v, lat;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	if (irqoff && off >= TLM_CNT_BASE)
		sim->stats.irqoff_reads += size / 4;
	now = ktime_get_ns();
	tlm_advance(sim, now);
	if (sim->link_down) {
		/*
		 * A read the device no longer answers (surprise link-down, a
		 * removed card) completes with all ones; the block stays as it
		 * was, and counts on.
		 */
		sim->stats.reads += size / 4;
		raw_spin_unlock_irqrestore(&sim->lock, irqflags);
		return size == 8 ? U64_MAX : U32_MAX;
	}
	v = tlm_reg_read(sim, off, now);
	/*
	 * A STATUS read within one MI cycle of the COMMAND write still sees
	 * BUSY low: the model takes the access right after the write as such.
	 */
	if (sim->cmd_fresh && off < TLM_CNT_BASE &&
	    (off & (TLM_REG_ALIAS - 1)) == TLM_STATUS)
		v &= ~(u64)TLM_ST_BUSY;
	sim->cmd_fresh = false;
	sim->stats.reads++;
	/* the MI bus is 32 bits wide: a 64-bit access is two transactions */
	if (size == 8) {
		v |= (u64)tlm_reg_read(sim, off + 4, now) << 32;
		sim->stats.reads++;
	}
	lat = sim->read_ns;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	/*
	 * A read completes read_ns after the register was sampled, as a
	 * non-posted PCIe read returns its completion late on a busy link:
	 * the reader's clock moves on while the value it gets ages.
	 */
	while (lat && ktime_get_ns() - now < lat)
		cpu_relax();
	return v;
}

static void tlm_io_write(struct hwtel_sim_io *io, u32 off, u64 val,
			 unsigned int size)
{
	struct tlm_sim *sim = tlm_from_io(io);
	unsigned long irqflags;
	u64 now;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	now = ktime_get_ns();
	tlm_advance(sim, now);
	if (sim->link_down) {
		/* a posted write nobody takes */
		raw_spin_unlock_irqrestore(&sim->lock, irqflags);
		return;
	}
	sim->cmd_fresh = false;
	tlm_reg_write(sim, off, lower_32_bits(val), now);
	sim->stats.writes++;
	if (size == 8) {
		tlm_reg_write(sim, off + 4, upper_32_bits(val), now);
		sim->stats.writes++;
	}
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
}

/* ---------------------------------------------------------------------- */
/* debugfs                                                                */

#define TLM_WBUF	256

static ssize_t tlm_copy_in(const char __user *ubuf, size_t len, loff_t *ppos,
			   char *buf)
{
	if (*ppos || !len || len >= TLM_WBUF)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return len;
}

enum tlm_kind {
	K_PCIE_CYCLES = 1, K_DMA_CYCLES, K_WORDS, K_STALL, K_FRAMES,
	K_MVB_ITEMS, K_MVB_STALL, K_ITEMS, K_REGION, K_BRAKE, K_TAGS_BAND,
	K_STFIFO_BAND, K_RAW,
};

static const char *const tlm_kind_names[] = {
	[K_PCIE_CYCLES] = "pcie_cycles", [K_DMA_CYCLES] = "dma_cycles",
	[K_WORDS] = "words", [K_STALL] = "stall", [K_FRAMES] = "frames",
	[K_MVB_ITEMS] = "mvb_items", [K_MVB_STALL] = "mvb_stall",
	[K_ITEMS] = "items", [K_REGION] = "region", [K_BRAKE] = "brake",
	[K_TAGS_BAND] = "tags_band", [K_STFIFO_BAND] = "stfifo_band",
	[K_RAW] = "raw",
};

#define T_EP	BIT(0)
#define T_BUS	BIT(1)
#define T_IDX	BIT(2)

/* Terms each kind needs (exactly these, no others) */
static const u8 tlm_kind_terms[] = {
	[K_PCIE_CYCLES] = T_EP, [K_DMA_CYCLES] = T_EP,
	[K_WORDS] = T_EP | T_BUS, [K_STALL] = T_EP | T_BUS,
	[K_FRAMES] = T_EP | T_BUS, [K_MVB_ITEMS] = T_EP | T_BUS,
	[K_MVB_STALL] = T_EP | T_BUS, [K_ITEMS] = T_EP | T_BUS,
	[K_REGION] = T_EP | T_BUS | T_IDX, [K_BRAKE] = T_EP | T_IDX,
	[K_TAGS_BAND] = T_EP | T_IDX, [K_STFIFO_BAND] = T_EP | T_IDX,
	[K_RAW] = T_IDX,
};

/* Channel of bus @bus of an endpoint, relative to the endpoint's first entry */
static int tlm_bus_channel(unsigned int bus, unsigned int field)
{
	if (bus < 2)
		return 1 + bus * (TLM_BUS_FIELDS + lay.rp) + field;
	if (bus - 2 >= 2 * lay.ports)
		return -EINVAL;
	return lay.pcie_ch + 1 + (bus - 2) * (TLM_BUS_FIELDS + lay.rd) + field;
}

/*
 * Parse "<kind>[,ep=E][,bus=B][,idx=I]" into a counter entry. The same counter
 * numbering as the driver's perf events (Documentation/dev-tools/hwsim-pcie.rst).
 */
static int tlm_parse_counter(char *spec)
{
	unsigned int val[3] = { 0 }, have = 0, kind, t, brk;
	char *tok, *eq;
	int ch;

	tok = strsep(&spec, ",");
	for (kind = K_PCIE_CYCLES; kind <= K_RAW; kind++)
		if (!strcmp(tok, tlm_kind_names[kind]))
			break;
	if (kind > K_RAW)
		return -EINVAL;

	while ((tok = strsep(&spec, ","))) {
		eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq++ = '\0';
		if (!strcmp(tok, "ep"))
			t = 0;
		else if (!strcmp(tok, "bus"))
			t = 1;
		else if (!strcmp(tok, "idx"))
			t = 2;
		else
			return -EINVAL;
		if (have & BIT(t) || kstrtouint(eq, 0, &val[t]))
			return -EINVAL;
		have |= BIT(t);
	}
	if (have != tlm_kind_terms[kind])
		return -EINVAL;

	if (kind == K_RAW)
		return val[2] < lay.used ? val[2] : -EINVAL;
	if (val[0] >= lay.endpoints)
		return -EINVAL;

	brk = 1 + 2 * (TLM_BUS_FIELDS + lay.rp);
	switch (kind) {
	case K_PCIE_CYCLES:
		ch = 0;
		break;
	case K_DMA_CYCLES:
		ch = lay.pcie_ch;
		break;
	case K_REGION: {
		unsigned int kindb = val[1] < 2 ? val[1] : TLM_UP + (val[1] & 1);

		if (val[1] >= 2 + 2 * lay.ports || val[2] >= lay.regions[kindb])
			return -EINVAL;
		ch = tlm_bus_channel(val[1], F_REGION + val[2]);
		break;
	}
	case K_BRAKE:
		if (val[2] >= TLM_REASONS)
			return -EINVAL;
		ch = brk + val[2];
		break;
	case K_TAGS_BAND:
	case K_STFIFO_BAND:
		if (val[2] >= TLM_BANDS)
			return -EINVAL;
		ch = brk + TLM_REASONS + (kind - K_TAGS_BAND) * TLM_BANDS + val[2];
		break;
	default:
		ch = tlm_bus_channel(val[1], kind - K_WORDS);
		break;
	}
	if (ch < 0)
		return ch;
	return val[0] * lay.cpe + ch;
}

/* "<counter> <number>" -> entry, number */
static int tlm_parse_counter_value(char *buf, u64 *num)
{
	char *spec, *arg;
	int entry;

	buf = strim(buf);
	spec = strsep(&buf, " \t");
	if (!buf)
		return -EINVAL;
	arg = skip_spaces(buf);
	entry = tlm_parse_counter(spec);
	if (entry < 0)
		return entry;
	if (kstrtou64(arg, 0, num))
		return -EINVAL;
	return entry;
}

static ssize_t tlm_counter_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos, bool inject)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[TLM_WBUF];
	unsigned long irqflags;
	ssize_t ret;
	int entry;
	u64 num;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	entry = tlm_parse_counter_value(buf, &num);
	if (entry < 0)
		return entry;
	if (!inject && num > lay.mask)
		return -EINVAL;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	if (inject) {
		tlm_add(sim, entry, num);
		sim->truth[entry] += num;
	} else {
		sim->live[entry] = num;
	}
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static ssize_t tlm_inject_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	return tlm_counter_write(file, ubuf, len, ppos, true);
}

static ssize_t tlm_set_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	return tlm_counter_write(file, ubuf, len, ppos, false);
}

static const struct file_operations tlm_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tlm_inject_write,
	.llseek = default_llseek,
};

static const struct file_operations tlm_set_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tlm_set_write,
	.llseek = default_llseek,
};

static ssize_t tlm_flags_read(struct file *file, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[64];
	u32 flags;
	int n;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());	/* a CLEAR FLAGS due by now */
	flags = sim->flags;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	n = scnprintf(buf, sizeof(buf), "lost_delta=%d readout_overrun=%d\n",
		      !!(flags & TLM_ST_LOST_DELTA), !!(flags & TLM_ST_OVERRUN));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t tlm_flags_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[TLM_WBUF], *p, *tok;
	unsigned long irqflags;
	u32 set = 0;
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	p = strim(buf);
	while ((tok = strsep(&p, " \t,"))) {
		if (!*tok)
			continue;
		if (!strcmp(tok, "lost_delta"))
			set |= TLM_ST_LOST_DELTA;
		else if (!strcmp(tok, "readout_overrun"))
			set |= TLM_ST_OVERRUN;
		else
			return -EINVAL;
	}
	if (!set)
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	sim->flags |= set;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_flags_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_flags_read,
	.write = tlm_flags_write,
	.llseek = default_llseek,
};

static ssize_t tlm_profile_read(struct file *file, char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[32];
	int n;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	n = scnprintf(buf, sizeof(buf), "%s\n", sim->prof.name);
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct tlm_profile *tlm_find_profile(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tlm_profiles); i++)
		if (!strcmp(name, tlm_profiles[i]->name))
			return tlm_profiles[i];
	return NULL;
}

static ssize_t tlm_profile_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	const struct tlm_profile *p;
	unsigned long irqflags;
	char buf[TLM_WBUF];
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	p = tlm_find_profile(strim(buf));
	if (!p)
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_set_profile(sim, p, true, ktime_get_ns());
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_profile_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_profile_read,
	.write = tlm_profile_write,
	.llseek = default_llseek,
};

/*
 * The schedule, one "NS NAME[ done]" line each. Made once per open
 * (seq_file): a reader's second read() must not see a schedule that moved
 * on meanwhile, where a "done" appended after the first read would be read
 * as a line of its own.
 */
static int tlm_profile_at_show(struct seq_file *m, void *v)
{
	struct tlm_sim *sim = m->private;
	unsigned long irqflags;
	unsigned int i;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	for (i = 0; i < sim->nsched; i++)
		seq_printf(m, "%llu %s%s\n", sim->sched_t[i],
			   sim->sched_p[i]->name,
			   i < sim->sched_next ? " done" : "");
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return 0;
}

static int tlm_profile_at_open(struct inode *inode, struct file *file)
{
	return single_open(file, tlm_profile_at_show, inode->i_private);
}

/*
 * "NS NAME [NS NAME]...": switch to built-in profile NAME when
 * CLOCK_MONOTONIC reaches NS (ktime_get_ns()), exactly at that instant in
 * the model's time; "+NS" is relative to the write. Times must be in the
 * future and increasing; a write replaces the schedule, an empty line
 * clears it.
 */
static ssize_t tlm_profile_at_write(struct file *file, const char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	const struct tlm_profile *p[TLM_MAX_SCHED];
	u64 t[TLM_MAX_SCHED], now;
	bool rel[TLM_MAX_SCHED];
	unsigned int n = 0, i;
	unsigned long irqflags;
	char buf[TLM_WBUF], *cur, *tok;
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	cur = strim(buf);
	while ((tok = strsep(&cur, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (n >= TLM_MAX_SCHED)
			return -E2BIG;
		rel[n] = *tok == '+';
		if (kstrtou64(tok + rel[n], 0, &t[n]) || t[n] > U64_MAX / 2)
			return -EINVAL;
		do {
			tok = strsep(&cur, " \t\n");
		} while (tok && !*tok);
		p[n] = tok ? tlm_find_profile(tok) : NULL;
		if (!p[n])
			return -EINVAL;
		n++;
	}
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	now = ktime_get_ns();
	for (i = 0; i < n; i++) {
		if (rel[i])
			t[i] += now;
		if (t[i] <= (i ? t[i - 1] : now)) {
			raw_spin_unlock_irqrestore(&sim->lock, irqflags);
			return -EINVAL;
		}
	}
	tlm_advance(sim, now);
	for (i = 0; i < n; i++) {
		sim->sched_t[i] = t[i];
		sim->sched_p[i] = p[i];
	}
	sim->nsched = n;
	sim->sched_next = 0;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_profile_at_fops = {
	.owner = THIS_MODULE,
	.open = tlm_profile_at_open,
	.read = seq_read,
	.write = tlm_profile_at_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* "key=value" with a decimal/hex u64 value */
static int tlm_parse_kv(char *tok, char **key, u64 *val)
{
	char *eq = strchr(tok, '=');

	if (!eq)
		return -EINVAL;
	*eq++ = '\0';
	*key = tok;
	return kstrtou64(eq, 0, val) ? -EINVAL : 0;
}

/* Gauge inputs of endpoint @ep (U64_MAX: unchanged) */
static void tlm_gauge_set(struct tlm_sim *sim, unsigned int ep, u64 tags,
			  u64 fifo)
{
	unsigned long irqflags;

	/* the registers follow at the next drain, as the block's do */
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	if (tags != U64_MAX) {
		sim->in_tags[ep] = tags;
		sim->in_tags_min[ep] = min_t(u32, sim->in_tags_min[ep], tags);
	}
	if (fifo != U64_MAX) {
		sim->in_fifo[ep] = fifo;
		sim->in_fifo_min[ep] = min_t(u32, sim->in_fifo_min[ep], fifo);
	}
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
}

static ssize_t tlm_gauge_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	u64 ep = U64_MAX, tags = U64_MAX, fifo = U64_MAX, v;
	char buf[TLM_WBUF], *p, *tok, *key;
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	p = strim(buf);
	while ((tok = strsep(&p, " \t"))) {
		if (!*tok)
			continue;
		if (tlm_parse_kv(tok, &key, &v))
			return -EINVAL;
		if (!strcmp(key, "ep") && ep == U64_MAX)
			ep = v;
		else if (!strcmp(key, "tags") && tags == U64_MAX)
			tags = v;
		else if (!strcmp(key, "stfifo") && fifo == U64_MAX)
			fifo = v;
		else
			return -EINVAL;
	}
	if (ep >= lay.endpoints || (tags == U64_MAX && fifo == U64_MAX))
		return -EINVAL;
	if ((tags != U64_MAX && tags > tag_capacity) ||
	    (fifo != U64_MAX && fifo > stfifo_capacity))
		return -EINVAL;

	tlm_gauge_set(sim, ep, tags, fifo);
	return len;
}

static const struct file_operations tlm_gauge_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tlm_gauge_write,
	.llseek = default_llseek,
};

static ssize_t tlm_pcie_status_write(struct file *file, const char __user *ubuf,
				     size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[TLM_WBUF], *p, *tok, *key;
	unsigned long irqflags;
	u64 ep;
	u32 val;
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	p = strim(buf);
	tok = strsep(&p, " \t");
	if (!p || tlm_parse_kv(tok, &key, &ep) || strcmp(key, "ep") ||
	    ep >= lay.endpoints)
		return -EINVAL;
	if (kstrtou32(skip_spaces(p), 16, &val) || val & ~TLM_PCIE_STATUS_MASK)
		return -EINVAL;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	sim->in_status[ep] = val;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_pcie_status_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tlm_pcie_status_write,
	.llseek = default_llseek,
};

static int tlm_read_ns_get(void *data, u64 *val)
{
	struct tlm_sim *sim = data;
	unsigned long irqflags;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	*val = sim->read_ns;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return 0;
}

/* at most 10 ms: the reader may spin with interrupts off meanwhile */
static int tlm_read_ns_set(void *data, u64 val)
{
	struct tlm_sim *sim = data;
	unsigned long irqflags;

	if (val > 10 * NSEC_PER_MSEC)
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	sim->read_ns = val;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(tlm_read_ns_fops, tlm_read_ns_get, tlm_read_ns_set,
			 "%llu\n");

static int tlm_link_down_get(void *data, u64 *val)
{
	struct tlm_sim *sim = data;

	*val = READ_ONCE(sim->link_down);
	return 0;
}

static int tlm_link_down_set(void *data, u64 val)
{
	struct tlm_sim *sim = data;
	unsigned long irqflags;

	if (val > 1)
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	sim->link_down = val;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(tlm_link_down_fops, tlm_link_down_get,
			 tlm_link_down_set, "%llu\n");

static ssize_t tlm_busy_ns_read(struct file *file, char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[32];
	u64 v;
	int n;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	v = sim->busy_is_fixed ? sim->busy_fixed : sim->busy_last;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	n = scnprintf(buf, sizeof(buf), "%llu\n", v);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t tlm_busy_ns_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[TLM_WBUF];
	ssize_t ret;
	bool fixed;
	u64 v = 0;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	/*
	 * "auto": the contract's timing; at most 10 s: a snapshot must end
	 * within any sane driver timeout
	 */
	fixed = strcmp(strim(buf), "auto");
	if (fixed && (kstrtou64(strim(buf), 0, &v) || v > 10 * NSEC_PER_SEC))
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	sim->busy_is_fixed = fixed;
	sim->busy_fixed = v;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_busy_ns_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_busy_ns_read,
	.write = tlm_busy_ns_write,
	.llseek = default_llseek,
};

/* "queued N dropped N": deltas (of all endpoints) waiting for the adder, dropped */
static ssize_t tlm_adder_read(struct file *file, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	u64 queued, dropped, fifo[2];
	char buf[128];
	int n;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	queued = (u64)sim->adder.len * lay.endpoints;
	dropped = sim->adder.dropped;
	fifo[0] = sim->adder.dropped_fifo[0];
	fifo[1] = sim->adder.dropped_fifo[1];
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	n = scnprintf(buf, sizeof(buf),
		      "queued %llu dropped %llu pcie %llu dma %llu lumps %llu\n",
		      queued, dropped, fifo[0], fifo[1],
		      dropped - fifo[0] - fifo[1]);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations tlm_adder_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_adder_read,
	.llseek = default_llseek,
};

static ssize_t tlm_overload_read(struct file *file, char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[4];
	int n;

	n = scnprintf(buf, sizeof(buf), "%d\n", READ_ONCE(sim->overload));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t tlm_overload_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[TLM_WBUF];
	ssize_t ret;
	bool v;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	if (kstrtobool(strim(buf), &v))
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	sim->overload = v;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_overload_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_overload_read,
	.write = tlm_overload_write,
	.llseek = default_llseek,
};

static ssize_t tlm_stats_read(struct file *file, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	struct tlm_stats st;
	char buf[192];
	int n;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	st = sim->stats;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	n = scnprintf(buf, sizeof(buf),
		      "reads %llu\nwrites %llu\nsnapshots %llu\nclears %llu\nirqoff_reads %llu\n",
		      st.reads, st.writes, st.snapshots, st.clears, st.irqoff_reads);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t tlm_stats_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	unsigned long irqflags;
	char buf[TLM_WBUF];
	ssize_t ret;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	if (strcmp(strim(buf), "0"))
		return -EINVAL;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	memset(&sim->stats, 0, sizeof(sim->stats));
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	return len;
}

static const struct file_operations tlm_stats_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_stats_read,
	.write = tlm_stats_write,
	.llseek = default_llseek,
};

/*
 * mmio: register access from userspace, for tests of the model itself.
 * Write "OFF" to select a register, "OFF VAL" to write VAL to it (and select
 * it); a read returns the selected register. Both go through the same path as
 * the driver's accesses and count in stats.
 */
static ssize_t tlm_mmio_read(struct file *file, char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[16];
	int n;

	if (*ppos)
		return 0;
	n = scnprintf(buf, sizeof(buf), "0x%08llx\n",
		      tlm_io_read(&sim->pd.io, READ_ONCE(sim->mmio_off), 4));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t tlm_mmio_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	char buf[TLM_WBUF], *p, *tok;
	ssize_t ret;
	u32 off, val;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	p = strim(buf);
	tok = strsep(&p, " \t");
	if (kstrtou32(tok, 0, &off) || off >= TLM_WINDOW)
		return -EINVAL;
	if (p && kstrtou32(skip_spaces(p), 0, &val))
		return -EINVAL;
	WRITE_ONCE(sim->mmio_off, off);
	if (p)
		tlm_io_write(&sim->pd.io, off, val, 4);
	return len;
}

static const struct file_operations tlm_mmio_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tlm_mmio_read,
	.write = tlm_mmio_write,
	.llseek = default_llseek,
};

/*
 * mmio_seq: register accesses back to back, for tests of timing the mmio
 * file cannot reach (a read a few microseconds after a write). A write
 * carries up to 16 operations, ';' or newline separated: "r OFF", "w OFF
 * VAL", "g EP TAGS" (the tags gauge input of endpoint EP, as the gauge
 * file sets it), "wait NS" (until NS ns after the end of the previous
 * access, at most 1 ms). They run at once with interrupts off; a read then
 * returns one line per operation: "r|w|g OFF VAL T0 T1" (OFF is EP for
 * "g"), the instants before and after the access in ns from the start of
 * the first one ("wait" lines too).
 */
static int tlm_seq_parse(char *buf, struct tlm_seq_op *ops)
{
	char *line, *tok[3];
	unsigned int n = 0, i;
	u64 v[2];

	while ((line = strsep(&buf, ";\n"))) {
		line = strim(line);
		if (!*line)
			continue;
		if (n == TLM_SEQ_OPS)
			return -E2BIG;
		for (i = 0; i < 3; i++) {
			tok[i] = strsep(&line, " \t");
			if (tok[i])
				line = line ? skip_spaces(line) : NULL;
		}
		if (line || !tok[1])
			return -EINVAL;
		memset(&ops[n], 0, sizeof(ops[n]));
		if (kstrtou64(tok[1], 0, &v[0]) ||
		    (tok[2] && kstrtou64(tok[2], 0, &v[1])))
			return -EINVAL;
		if (!strcmp(tok[0], "wait") && !tok[2] &&
		    v[0] <= TLM_SEQ_WAIT_MAX) {
			ops[n].op = 'd';
			ops[n].val = v[0];
		} else if (!strcmp(tok[0], "g") && tok[2] &&
			   v[0] < lay.endpoints && v[1] <= tag_capacity) {
			ops[n].op = 'g';
			ops[n].off = v[0];
			ops[n].val = v[1];
		} else if ((!strcmp(tok[0], "r") && !tok[2]) ||
			   (!strcmp(tok[0], "w") && tok[2] && v[1] <= U32_MAX)) {
			if (v[0] >= TLM_WINDOW)
				return -EINVAL;
			ops[n].op = tok[0][0];
			ops[n].off = v[0];
			ops[n].val = tok[2] ? v[1] : 0;
		} else {
			return -EINVAL;
		}
		n++;
	}
	return n ? n : -EINVAL;
}

/* Runs @n parsed operations with interrupts off; the results go to sim->seq */
static void tlm_seq_run(struct tlm_sim *sim, struct tlm_seq_op *ops,
			unsigned int n)
{
	unsigned long irqflags;
	u64 start, last;
	unsigned int i;

	mutex_lock(&sim->seq_mutex);
	local_irq_save(irqflags);
	start = ktime_get_ns();
	last = start;
	for (i = 0; i < n; i++) {
		ops[i].t0 = ktime_get_ns();
		if (ops[i].op == 'd') {
			while (ktime_get_ns() < last + ops[i].val)
				cpu_relax();
		} else if (ops[i].op == 'r') {
			ops[i].val = tlm_io_read(&sim->pd.io, ops[i].off, 4);
		} else if (ops[i].op == 'g') {
			tlm_gauge_set(sim, ops[i].off, ops[i].val, U64_MAX);
		} else {
			tlm_io_write(&sim->pd.io, ops[i].off, ops[i].val, 4);
		}
		ops[i].t1 = ktime_get_ns();
		if (ops[i].op != 'd')
			last = ops[i].t1;
		ops[i].t0 -= start;
		ops[i].t1 -= start;
	}
	local_irq_restore(irqflags);
	memcpy(sim->seq, ops, n * sizeof(ops[0]));
	sim->nseq = n;
	mutex_unlock(&sim->seq_mutex);
}

static ssize_t tlm_seq_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	struct tlm_seq_op ops[TLM_SEQ_OPS];
	char buf[TLM_WBUF];
	ssize_t ret;
	int n;

	ret = tlm_copy_in(ubuf, len, ppos, buf);
	if (ret < 0)
		return ret;
	n = tlm_seq_parse(buf, ops);
	if (n < 0)
		return n;
	tlm_seq_run(sim, ops, n);
	return len;
}

/*
 * seq_at_load: the accesses run right after the reset values are set and
 * the clocks start, before the device is registered, so a test reads the
 * block's power-on state microseconds in, whatever insmod's own latency.
 */
static int tlm_seq_at_load(struct tlm_sim *sim)
{
	struct tlm_seq_op ops[TLM_SEQ_OPS];
	char buf[TLM_WBUF];
	int n;

	if (!seq_at_load || !*seq_at_load)
		return 0;
	if (strscpy(buf, seq_at_load, sizeof(buf)) < 0)
		return -EINVAL;
	n = tlm_seq_parse(buf, ops);
	if (n < 0)
		return n;
	tlm_seq_run(sim, ops, n);
	return 0;
}

static int tlm_seq_show(struct seq_file *m, void *unused)
{
	struct tlm_sim *sim = m->private;
	struct tlm_seq_op *o;
	unsigned int i;

	mutex_lock(&sim->seq_mutex);
	for (i = 0; i < sim->nseq; i++) {
		o = &sim->seq[i];
		if (o->op == 'd')
			seq_printf(m, "wait %llu %llu %llu\n", o->val, o->t0, o->t1);
		else
			seq_printf(m, "%c 0x%04x 0x%08llx %llu %llu\n", o->op,
				   o->off, o->val, o->t0, o->t1);
	}
	mutex_unlock(&sim->seq_mutex);
	return 0;
}

static int tlm_seq_open(struct inode *inode, struct file *file)
{
	return single_open(file, tlm_seq_show, inode->i_private);
}

static const struct file_operations tlm_seq_fops = {
	.owner = THIS_MODULE,
	.open = tlm_seq_open,
	.read = seq_read,
	.write = tlm_seq_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Largest rate of a custom profile (keeps every product in u64) */
#define TLM_RATE_MAX		10000000000000ULL

static const char *const tlm_field_names[TLM_PROF_FIELDS] = {
	[F_WORDS] = "words", [F_STALL] = "stall", [F_FRAMES] = "frames",
	[F_MVB] = "mvb_items", [F_MVB_STALL] = "mvb_stall", [F_ITEMS] = "items",
	[F_REGION + 0] = "region0", [F_REGION + 1] = "region1",
	[F_REGION + 2] = "region2", [F_REGION + 3] = "region3",
};

static int tlm_traffic_show(struct seq_file *m, void *unused)
{
	struct tlm_sim *sim = m->private;
	struct tlm_profile *p;
	unsigned long irqflags;
	unsigned int b, f, k, h;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	*p = sim->prof;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);

	for (b = 0; b < TLM_NBUS; b++) {
		seq_printf(m, "%s", tlm_bus_names[b]);
		for (f = 0; f < TLM_PROF_FIELDS; f++)
			seq_printf(m, " %s=%llu", tlm_field_names[f],
				   p->bus[b].rate[f]);
		seq_printf(m, " full=%d frame=%u start=%u\n", p->bus[b].full,
			   p->bus[b].frame, p->bus[b].start);
	}
	seq_puts(m, "brake");
	for (k = 0; k < TLM_REASONS; k++)
		seq_printf(m, " reason%u=%llu", k, p->brake[k]);
	seq_putc(m, '\n');
	for (h = 0; h < TLM_HISTS; h++) {
		seq_puts(m, h ? "stfifo" : "tags");
		for (k = 0; k < TLM_BANDS - 1; k++)
			seq_printf(m, " band%u=%llu", k, p->band[h][k]);
		seq_printf(m, " now=%u lowest=%u\n",
			   h ? p->fifo_now : p->tags_now,
			   h ? p->fifo_low : p->tags_low);
	}
	kfree(p);
	return 0;
}

static int tlm_traffic_open(struct inode *inode, struct file *file)
{
	return single_open(file, tlm_traffic_show, inode->i_private);
}

/* Apply "key=value" of a traffic line to profile @p, line kind @what */
static int tlm_traffic_key(struct tlm_profile *p, int what, const char *key,
			   u64 v)
{
	unsigned int i;

	if (v > TLM_RATE_MAX)
		return -EINVAL;
	if (what < TLM_NBUS) {
		struct tlm_bus_prof *bp = &p->bus[what];

		if (!strcmp(key, "full")) {
			if (v > 1)
				return -EINVAL;
			bp->full = v;
			return 0;
		}
		if (!strcmp(key, "frame") || !strcmp(key, "start")) {
			if (v > (key[0] == 'f' ? TLM_FRAME_MAX : 254))
				return -EINVAL;
			if (key[0] == 'f')
				bp->frame = v;
			else
				bp->start = v;
			return 0;
		}
		for (i = 0; i < TLM_PROF_FIELDS; i++) {
			if (strcmp(key, tlm_field_names[i]))
				continue;
			/* RQ and RC have no MVB */
			if ((i == F_MVB || i == F_MVB_STALL) && what < TLM_UP)
				return -EINVAL;
			bp->rate[i] = v;
			return 0;
		}
		return -EINVAL;
	}
	if (what == TLM_NBUS) {
		if (strncmp(key, "reason", 6) || kstrtouint(key + 6, 10, &i) ||
		    i >= TLM_REASONS)
			return -EINVAL;
		p->brake[i] = v;
		return 0;
	}
	if (!strcmp(key, "now") || !strcmp(key, "lowest")) {
		unsigned int cap = what == TLM_NBUS + 1 ? tag_capacity :
					stfifo_capacity;
		unsigned int *dst;

		if (v > cap)
			return -EINVAL;
		if (what == TLM_NBUS + 1)
			dst = key[0] == 'n' ? &p->tags_now : &p->tags_low;
		else
			dst = key[0] == 'n' ? &p->fifo_now : &p->fifo_low;
		*dst = v;
		return 0;
	}
	if (strncmp(key, "band", 4) || kstrtouint(key + 4, 10, &i) ||
	    i >= TLM_BANDS - 1)
		return -EINVAL;
	p->band[what - TLM_NBUS - 1][i] = v;
	return 0;
}

/*
 * Placed frames of bus kind @kind: regions per frame, and which word ends
 * (j x regions = start mod regions per frame) close a frame.
 */
static void tlm_frame_setup(struct tlm_bus_prof *bp, unsigned int kind)
{
	u32 rbytes = lay.items[kind] * item_bytes, nreg = lay.regions[kind];
	u32 n, j;

	if (!bp->frame)
		return;
	n = DIV_ROUND_UP(bp->frame, rbytes);
	bp->fr_n = n;
	bp->fr_per = n / gcd(nreg, n);
	bp->fr_j0 = bp->fr_per;
	for (j = 0; j < bp->fr_per; j++) {
		if ((u64)j * nreg % n == bp->start % n) {
			bp->fr_j0 = j;
			break;
		}
	}
}

/* The rates may not describe more cycles than there are */
static bool tlm_profile_valid(const struct tlm_profile *p)
{
	unsigned int b, k;
	u32 ref;

	for (b = 0; b < TLM_NBUS; b++) {
		if (p->bus[b].frame && p->bus[b].start >= lay.regions[b])
			return false;
		ref = b < TLM_UP ? TLM_REF_PCIE_HZ : TLM_REF_DMA_HZ;
		if (p->bus[b].rate[F_WORDS] + p->bus[b].rate[F_STALL] > ref ||
		    p->bus[b].rate[F_MVB_STALL] > ref)
			return false;
	}
	for (k = 0; k < TLM_REASONS; k++)
		if (p->brake[k] > TLM_REF_PCIE_HZ)
			return false;
	for (b = 0; b < TLM_HISTS; b++)
		if (p->band[b][0] + p->band[b][1] + p->band[b][2] > TLM_REF_PCIE_HZ)
			return false;
	return p->tags_low <= p->tags_now && p->fifo_low <= p->fifo_now;
}

/* One line "<what> key=value..." of a traffic write, applied to @np */
static int tlm_traffic_line(struct tlm_profile *np, char *line)
{
	char *tok, *key;
	int what;
	u64 v;

	line = strim(line);
	if (!*line)
		return 0;
	tok = strsep(&line, " \t");
	for (what = 0; what < TLM_NBUS; what++)
		if (!strcmp(tok, tlm_bus_names[what]))
			break;
	if (what == TLM_NBUS && strcmp(tok, "brake")) {
		if (!strcmp(tok, "tags"))
			what = TLM_NBUS + 1;
		else if (!strcmp(tok, "stfifo"))
			what = TLM_NBUS + 2;
		else
			return -EINVAL;
	}
	if (!line)
		return -EINVAL;
	while ((tok = strsep(&line, " \t"))) {
		if (!*tok)
			continue;
		if (tlm_parse_kv(tok, &key, &v) || tlm_traffic_key(np, what, key, v))
			return -EINVAL;
	}
	return 0;
}

/*
 * Edit the current profile; it becomes "custom" and restarts. One write may
 * carry several lines (newline or ';' separated), applied all at once.
 */
static ssize_t tlm_traffic_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct tlm_sim *sim = file_inode(file)->i_private;
	struct tlm_profile *np;
	unsigned long irqflags;
	char *buf, *p, *line;
	unsigned int b;
	ssize_t ret;

	if (*ppos || !len || len > PAGE_SIZE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	np = kmalloc(sizeof(*np), GFP_KERNEL);
	if (!np) {
		kfree(buf);
		return -ENOMEM;
	}
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	*np = sim->prof;
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);

	ret = -EINVAL;
	p = buf;
	while ((line = strsep(&p, "\n;")))
		if (tlm_traffic_line(np, line))
			goto out;
	if (!tlm_profile_valid(np))
		goto out;
	for (b = 0; b < TLM_NBUS; b++)
		tlm_frame_setup(&np->bus[b], b);
	strscpy(np->name, "custom", sizeof(np->name));
	np->active = true;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_set_profile(sim, np, false, ktime_get_ns());
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	ret = len;
out:
	kfree(np);
	kfree(buf);
	return ret;
}

static const struct file_operations tlm_traffic_fops = {
	.owner = THIS_MODULE,
	.open = tlm_traffic_open,
	.read = seq_read,
	.write = tlm_traffic_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int tlm_regs_show(struct seq_file *m, void *unused)
{
	static const struct {
		const char *name;
		u32 off;
	} regs[] = {
		{ "magic", TLM_MAGIC }, { "version", TLM_VERSION },
		{ "cfg_topology", TLM_CFG_TOPOLOGY },
		{ "cfg_layout", TLM_CFG_LAYOUT }, { "cfg_pcie", TLM_CFG_PCIE },
		{ "cfg_dma", TLM_CFG_DMA }, { "cfg_drain", TLM_CFG_DRAIN },
		{ "cnt_base", TLM_CNT_BASE_REG }, { "status", TLM_STATUS },
		{ "read_sel", TLM_READ_SEL }, { "cfg_regions", TLM_CFG_REGIONS },
		{ "cfg_width", TLM_CFG_WIDTH }, { "cfg_hist", TLM_CFG_HIST },
		{ "cfg_capacity", TLM_CFG_CAPACITY },
		{ "cfg_width_dma", TLM_CFG_WIDTH_DMA },
	};
	static const char *const epregs[] = {
		"pcie_status", "pcie_tags", "pcie_stfifo",
	};
	u32 val[ARRAY_SIZE(regs) + 3 * TLM_MAX_EP];
	struct tlm_sim *sim = m->private;
	unsigned long irqflags;
	unsigned int i, n = 0;
	u64 now;

	raw_spin_lock_irqsave(&sim->lock, irqflags);
	now = ktime_get_ns();
	tlm_advance(sim, now);
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		val[n++] = tlm_reg_read(sim, regs[i].off, now);
	for (i = 0; i < 3 * lay.endpoints; i++)
		val[n++] = tlm_reg_read(sim, TLM_PCIE_STATUS +
					(i / lay.endpoints) * 0x40 +
					(i % lay.endpoints) * 4, now);
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);

	for (i = 0; i < ARRAY_SIZE(regs); i++)
		seq_printf(m, "%s 0x%08x\n", regs[i].name, val[i]);
	for (i = 0; i < 3 * lay.endpoints; i++)
		seq_printf(m, "%s%u 0x%08x\n", epregs[i / lay.endpoints],
			   i % lay.endpoints, val[ARRAY_SIZE(regs) + i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tlm_regs);

/* Live counters (or ground truth) "<entry> <value>", all of one instant */
static int tlm_dump_show(struct seq_file *m, bool truth)
{
	struct tlm_sim *sim = m->private;
	unsigned long irqflags;
	unsigned int i;
	u64 *copy;

	copy = kcalloc(lay.used, sizeof(*copy), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	raw_spin_lock_irqsave(&sim->lock, irqflags);
	tlm_advance(sim, ktime_get_ns());
	memcpy(copy, truth ? sim->truth : sim->live, lay.used * sizeof(*copy));
	raw_spin_unlock_irqrestore(&sim->lock, irqflags);
	for (i = 0; i < lay.used; i++)
		seq_printf(m, "%u %llu\n", i, copy[i]);
	kfree(copy);
	return 0;
}

static int tlm_counters_show(struct seq_file *m, void *unused)
{
	return tlm_dump_show(m, false);
}
DEFINE_SHOW_ATTRIBUTE(tlm_counters);

/* Ground truth: every delta and injection that landed since the load */
static int tlm_truth_show(struct seq_file *m, void *unused)
{
	return tlm_dump_show(m, true);
}
DEFINE_SHOW_ATTRIBUTE(tlm_truth);

/* ---------------------------------------------------------------------- */
/* Setup                                                                  */

static int tlm_check(bool ok, const char *what)
{
	if (ok)
		return 0;
	pr_err("invalid parameters: %s\n", what);
	return -EINVAL;
}

static int tlm_build_layout(void)
{
	unsigned int bytes[TLM_NBUS] = { bytes_rq, bytes_rc, bytes_up, bytes_down };
	unsigned int regs[TLM_NBUS] = {
		regions_rq, regions_rc, regions_up, regions_down,
	};
	unsigned int b;
	int err;

	err = tlm_check(instances >= 1 && instances <= TLM_MAX_INSTANCES,
			"instances must be 1..16") ?:
	      tlm_check(endpoints >= 1 && endpoints <= TLM_MAX_EP,
			"endpoints must be 1..16") ?:
	      tlm_check(dma_ports >= 1 && dma_ports <= 127,
			"dma_ports must be 1..127") ?:
	      tlm_check(cnt_width >= 33 && cnt_width <= 64,
			"cnt_width must be 33..64") ?:
	      tlm_check(drain_period && drain_period <= 32768 &&
			is_power_of_2(drain_period),
			"drain_period must be a power of two, 1..32768") ?:
	      tlm_check(item_bytes >= 1 && item_bytes <= 255,
			"item_bytes must be 1..255") ?:
	      tlm_check(tag_capacity >= 1 && tag_capacity <= 65535,
			"tag_capacity must be 1..65535") ?:
	      tlm_check(stfifo_capacity >= 1 && stfifo_capacity <= 65535,
			"stfifo_capacity must be 1..65535") ?:
	      tlm_check(pcie_mhz >= 1 && pcie_mhz <= 10000 &&
			dma_mhz >= 1 && dma_mhz <= 10000,
			"pcie_mhz and dma_mhz must be 1..10000") ?:
	      tlm_check(speedup >= 1 && speedup <= 100,
			"speedup must be 1..100") ?:
	      tlm_check(mi_mhz >= 1 && mi_mhz <= 1000, "mi_mhz must be 1..1000") ?:
	      tlm_check(mi_khz <= 1000000, "mi_khz must be 0..1000000") ?:
	      tlm_check(fifo_depth <= TLM_MAX_FIFO, "fifo_depth must be 0..1024") ?:
	      tlm_check(add_cycles >= 1 && add_cycles <= 64,
			"add_cycles must be 1..64") ?:
	      tlm_check(profile && tlm_find_profile(profile),
			"profile must be idle, seed or busy") ?:
	      hwtel_sim_check_node("hwtel_sim_pcie", sim_numa_node);
	if (err)
		return err;

	for (b = 0; b < TLM_NBUS; b++) {
		err = tlm_check(regs[b] >= 1 && regs[b] <= 255,
				"regions_* must be 1..255") ?:
		      tlm_check(bytes[b] >= 1 && bytes[b] <= 65535 &&
				bytes[b] % item_bytes == 0,
				"bytes_* must be 1..65535 and a multiple of item_bytes");
		if (err)
			return err;
		lay.regions[b] = regs[b];
		lay.items[b] = bytes[b] / item_bytes;
	}

	lay.endpoints = endpoints;
	lay.ports = dma_ports;
	lay.mi_khz = mi_khz ?: mi_mhz * 1000;
	lay.rp = max(regions_rq, regions_rc);
	lay.rd = max(regions_up, regions_down);
	lay.pcie_ch = 1 + 2 * (TLM_BUS_FIELDS + lay.rp) + TLM_BRAKE_CH;
	lay.dma_ch = 1 + 2 * dma_ports * (TLM_BUS_FIELDS + lay.rd);
	lay.cpe = lay.pcie_ch + lay.dma_ch;
	err = tlm_check(lay.pcie_ch <= 255,
			"PCIe probe needs more than 255 channels (regions_rq/rc)") ?:
	      tlm_check(lay.dma_ch <= 255,
			"DMA probe needs more than 255 channels (dma_ports, regions_up/down)") ?:
	      tlm_check(lay.cpe <= 255,
			"more than 255 counters per endpoint");
	if (err)
		return err;
	lay.used = endpoints * lay.cpe;
	lay.entries = roundup_pow_of_two(lay.used);
	lay.width = cnt_width;
	lay.mask = GENMASK_ULL(cnt_width - 1, 0);
	lay.drain = drain_period;
	/*
	 * The contract gives no FIFO depth; one drain of the probe's channels
	 * is the least that lets a probe hand over a whole drain while the
	 * accumulator is busy with the other probes, and with it a BUSY
	 * shorter than a drain period never loses a delta.
	 */
	lay.depth[0] = fifo_depth ?: lay.pcie_ch;
	lay.depth[1] = fifo_depth ?: lay.dma_ch;
	/*
	 * Accumulator load: MI cycles of work per drain of every probe over
	 * the MI cycles of a drain period, as load_num / load_den.
	 */
	lay.load_num = (u64)endpoints * add_cycles *
		       ((u64)lay.pcie_ch * pcie_mhz + (u64)lay.dma_ch * dma_mhz) *
		       speedup * 1000;
	lay.load_den = (u64)lay.mi_khz * drain_period;
	/* the sweep of a probe's channels must end within the drain period */
	if (!ideal) {
		lay.slot[0] = drain_slot ?: max(1U, drain_period / (2 * lay.pcie_ch));
		lay.slot[1] = drain_slot ?: max(1U, drain_period / (2 * lay.dma_ch));
		err = tlm_check((u64)lay.slot[0] * (lay.pcie_ch - 1) < drain_period &&
				(u64)lay.slot[1] * (lay.dma_ch - 1) < drain_period,
				"drain_slot: the sweep of a probe must be shorter than drain_period");
		if (err)
			return err;
	}

	lay.cfg_topology = endpoints | dma_ports << 8 | (2 * endpoints) << 16;
	lay.cfg_layout = lay.entries | cnt_width << 16 | lay.cpe << 24;
	lay.cfg_pcie = lay.pcie_ch | 2 << 8 | lay.rp << 16 | TLM_BRAKE_CH << 24;
	lay.cfg_dma = lay.dma_ch | (2 * dma_ports) << 8 | lay.rd << 16;
	lay.cfg_drain = drain_period | item_bytes << 16;
	lay.cfg_regions = regions_rq | regions_rc << 8 | regions_up << 16 |
			  regions_down << 24;
	lay.cfg_width = bytes_rq | bytes_rc << 16;
	lay.cfg_hist = TLM_BANDS | TLM_HISTS << 8;
	lay.cfg_capacity = tag_capacity | stfifo_capacity << 16;
	lay.cfg_width_dma = bytes_up | bytes_down << 16;
	return 0;
}

static void tlm_destroy(struct tlm_sim *sim)
{
	if (!sim)
		return;
	debugfs_remove_recursive(sim->dir);
	if (!IS_ERR_OR_NULL(sim->pdev))
		platform_device_unregister(sim->pdev);
	kvfree(sim->live);
	kvfree(sim->snap);
	kvfree(sim->pending);
	kvfree(sim->truth);
	kfree(sim->adder.q);
	kvfree(sim->stage);
	free_percpu(sim->pd.io.reads);
	kfree(sim);
}

static struct tlm_sim *tlm_create(unsigned int index)
{
	struct platform_device_info info = { };
	struct resource res = { };
	struct tlm_sim *sim;
	unsigned int ep;
	char name[40];
	int err;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return ERR_PTR(-ENOMEM);
	raw_spin_lock_init(&sim->lock);
	mutex_init(&sim->seq_mutex);
	sim->base = TLM_BASE + index * TLM_STRIDE;
	sim->live = kvcalloc(lay.entries, sizeof(u64), GFP_KERNEL);
	sim->snap = kvcalloc(lay.entries, sizeof(u64), GFP_KERNEL);
	sim->pending = kvcalloc(lay.entries, sizeof(u64), GFP_KERNEL);
	sim->truth = kvcalloc(lay.entries, sizeof(u64), GFP_KERNEL);
	sim->adder.cap = lay.depth[0] + lay.depth[1];
	sim->adder.q = kcalloc(sim->adder.cap, sizeof(*sim->adder.q), GFP_KERNEL);
	sim->stage = kvzalloc(sizeof(*sim->stage), GFP_KERNEL);
	sim->adder.cost_ns = DIV_ROUND_UP(1000000ULL * lay.endpoints * add_cycles,
					  lay.mi_khz);
	sim->pd.io.reads = alloc_percpu(unsigned long);
	if (!sim->live || !sim->snap || !sim->pending || !sim->truth ||
	    !sim->adder.q || !sim->stage || !sim->pd.io.reads) {
		tlm_destroy(sim);
		return ERR_PTR(-ENOMEM);
	}
	sim->busy_ns = DIV_ROUND_UP(1000000ULL *
				    (2 * lay.entries + TLM_BUSY_SNAP_EXTRA),
				    lay.mi_khz);
	sim->busy_clear_ns = DIV_ROUND_UP(1000000ULL *
					  (2 * lay.entries + TLM_BUSY_CLEAR_EXTRA),
					  lay.mi_khz);
	sim->pdrain.nch = lay.pcie_ch;
	sim->pdrain.done = lay.pcie_ch;
	sim->ddrain.nch = lay.dma_ch;
	sim->ddrain.done = lay.dma_ch;
	sim->pd.io.owner = THIS_MODULE;
	sim->pd.io.read = tlm_io_read;
	sim->pd.io.write = tlm_io_write;
	sim->pd.sim = sim;
	sim->rnd = (u64)(seed ?: get_random_u32() | 1) << 32 | (index + 1);
	sim->pclk.mhz = pcie_mhz * speedup;
	sim->dclk.mhz = dma_mhz * speedup;
	/* after reset: gauges 0 and the lowest values high until a drain */
	for (ep = 0; ep < lay.endpoints; ep++) {
		sim->tags_low[ep] = TLM_TAGS_LOW_RESET;
		sim->fifo_low[ep] = TLM_FIFO_LOW_RESET;
		sim->in_status[ep] = TLM_PCIE_STATUS_DEF;
		sim->in_tags[ep] = tag_capacity;
		sim->in_tags_min[ep] = tag_capacity;
		sim->in_fifo[ep] = stfifo_capacity;
		sim->in_fifo_min[ep] = stfifo_capacity;
	}
	/*
	 * The clocks start now: the profile's first advance must find no time
	 * elapsed, or it would fold the gauges before the first drain.
	 */
	sim->pclk.t0 = ktime_get_ns();
	sim->dclk.t0 = sim->pclk.t0;
	tlm_set_profile(sim, tlm_find_profile(profile), true, sim->pclk.t0);
	err = tlm_seq_at_load(sim);
	if (err) {
		pr_err("seq_at_load: bad operations (%d)\n", err);
		tlm_destroy(sim);
		return ERR_PTR(err);
	}

	snprintf(name, sizeof(name), "ndk_pcie_tlm_%llx", sim->base);
	sim->dir = debugfs_create_dir(name, hwtel_sim_debugfs_root());
	debugfs_create_file("inject", 0200, sim->dir, sim, &tlm_inject_fops);
	debugfs_create_file("set", 0200, sim->dir, sim, &tlm_set_fops);
	debugfs_create_file("flags", 0600, sim->dir, sim, &tlm_flags_fops);
	debugfs_create_file("profile", 0600, sim->dir, sim, &tlm_profile_fops);
	debugfs_create_file("profile_at", 0600, sim->dir, sim, &tlm_profile_at_fops);
	debugfs_create_file("traffic", 0600, sim->dir, sim, &tlm_traffic_fops);
	debugfs_create_file("gauge", 0200, sim->dir, sim, &tlm_gauge_fops);
	debugfs_create_file("pcie_status", 0200, sim->dir, sim,
			    &tlm_pcie_status_fops);
	debugfs_create_file("busy_ns", 0600, sim->dir, sim, &tlm_busy_ns_fops);
	debugfs_create_file_unsafe("read_ns", 0600, sim->dir, sim,
				   &tlm_read_ns_fops);
	debugfs_create_file_unsafe("link_down", 0600, sim->dir, sim,
				   &tlm_link_down_fops);
	debugfs_create_file("overload", 0600, sim->dir, sim, &tlm_overload_fops);
	debugfs_create_file("adder", 0400, sim->dir, sim, &tlm_adder_fops);
	debugfs_create_file("stats", 0600, sim->dir, sim, &tlm_stats_fops);
	debugfs_create_file("regs", 0400, sim->dir, sim, &tlm_regs_fops);
	debugfs_create_file("counters", 0400, sim->dir, sim, &tlm_counters_fops);
	debugfs_create_file("truth", 0400, sim->dir, sim, &tlm_truth_fops);
	debugfs_create_file("mmio", 0600, sim->dir, sim, &tlm_mmio_fops);
	debugfs_create_file("mmio_seq", 0600, sim->dir, sim, &tlm_seq_fops);

	res.start = sim->base;
	res.end = sim->base + TLM_WINDOW - 1;
	res.flags = IORESOURCE_MEM;
	res.name = "ndk-pcie-tlm-sim";
	res.parent = &tlm_bus_res;
	info.name = "ndk-pcie-tlm-sim";
	info.id = index;
	info.res = &res;
	info.num_res = 1;
	info.data = &sim->pd;
	info.size_data = sizeof(sim->pd);
	sim->pdev = hwtel_sim_register_pdev(&info, sim_numa_node);
	if (IS_ERR(sim->pdev)) {
		err = PTR_ERR(sim->pdev);
		pr_err("cannot register model device %u: %d\n", index, err);
		tlm_destroy(sim);
		return ERR_PTR(err);
	}
	return sim;
}

static void tlm_destroy_all(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tlm_sims); i++) {
		tlm_destroy(tlm_sims[i]);
		tlm_sims[i] = NULL;
	}
}

static int __init tlm_init(void)
{
	struct tlm_sim *sim;
	unsigned int i;
	int err;

	err = tlm_build_layout();
	if (err)
		return err;
	for (i = 0; i < instances; i++) {
		sim = tlm_create(i);
		if (IS_ERR(sim)) {
			tlm_destroy_all();
			return PTR_ERR(sim);
		}
		tlm_sims[i] = sim;
	}
	return 0;
}

static void __exit tlm_exit(void)
{
	tlm_destroy_all();
}

module_init(tlm_init);
module_exit(tlm_exit);

MODULE_DESCRIPTION("Model of the NDK PCIE_TELEMETRY_MI block (test only)");
MODULE_LICENSE("GPL");
