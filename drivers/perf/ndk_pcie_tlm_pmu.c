// SPDX-License-Identifier: GPL-2.0
/*
 * perf PMU for the CESNET NDK PCIE_TELEMETRY_MI block (version 2).
 *
 * The block keeps CNT_WIDTH-bit counters (33..64 bits) for every endpoint,
 * probe, bus, region, stop reason and histogram band, described entirely by
 * its configuration registers. Counters are read from a snapshot copy: a
 * SNAPSHOT command copies every counter into a second memory while STATUS.BUSY
 * is set, after which the window at CNT_BASE holds one consistent picture.
 *
 * The driver keeps, per counter entry, a 64-bit extension (@acc) updated from
 * snapshots; an hrtimer reads every entry within half the fastest wrap time.
 * A perf event counts differences of its entry's @acc. Everything that reads
 * the window (perf reads, the poller, the control plane) takes one lock, so a
 * snapshot is never overwritten while someone reads it.
 *
 * A plain counter PMU: every start, stop and read takes one SNAPSHOT under
 * the lock, with one exception that keeps a group one instant. Inside a
 * bracket of the perf core (pmu_disable() to pmu_enable(), a transaction)
 * the first call for a group serves the group's other events of this PMU
 * from the same SNAPSHOT and stamps them; their own calls in that bracket
 * find the stamp and do nothing. Nothing outlives the call that made it.
 */

#define pr_fmt(fmt) "ndk_pcie_tlm: " fmt

#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include <hwtel/compat.h>
#include <hwtel/io.h>

#include "ndk_pcie_tlm.h"

/* perf event config fields (see format/) */
#define TLM_CFG_KIND		GENMASK_ULL(7, 0)
#define TLM_CFG_EP		GENMASK_ULL(15, 8)
#define TLM_CFG_BUS		GENMASK_ULL(31, 16)
#define TLM_CFG_IDX		GENMASK_ULL(47, 32)
#define TLM_CFG_ALL		GENMASK_ULL(47, 0)

enum ndk_tlm_kind {
	TLM_K_PCIE_CYCLES = 1,
	TLM_K_DMA_CYCLES,
	TLM_K_WORDS,
	TLM_K_STALL,
	TLM_K_FRAMES,
	TLM_K_MVB_ITEMS,
	TLM_K_MVB_STALL,
	TLM_K_ITEMS,
	TLM_K_REGION,
	TLM_K_BRAKE,
	TLM_K_TAGS_BAND,
	TLM_K_STFIFO_BAND,
	TLM_K_RAW,
	TLM_K_SNAP_NS,		/* nanoseconds between the copies it counts from */
};

/*
 * The software entry after the used ones: its value is the CLOCK_MONOTONIC
 * time of the copy in the window (ndk_tlm::snap_ns), so a snapshot_ns event
 * counts the time between the copies its group was counted from.
 */
#define TLM_SNAP_ENTRY(l)	((l)->entries_used)

/* channels of one bus inside a probe: 6 fixed fields, then the regions */
#define TLM_BUS_FIELDS		6

/*
 * Fastest clock any channel of the block counts at. The clock rates are not
 * in a register; NDK PCIe and DMA clocks stay well below 1 GHz, so 1 GHz is
 * a safe upper bound for the wrap time: 2^CNT_WIDTH / 1 GHz (8.6 s at 33 bits).
 */
static unsigned int max_clock_mhz = 1000;
module_param(max_clock_mhz, uint, 0444);
MODULE_PARM_DESC(max_clock_mhz, "Fastest counter clock assumed for the wrap time, MHz (default 1000)");

static unsigned int poll_ms;
module_param(poll_ms, uint, 0444);
MODULE_PARM_DESC(poll_ms, "Shorten the wrap poll period to this many ms (0: derived from the layout)");

static unsigned int flags_poll_ms = 100;
module_param(flags_poll_ms, uint, 0444);
MODULE_PARM_DESC(flags_poll_ms, "STATUS flag check period while someone listens to the netlink flags group, ms");

/*
 * The BUSY wait runs with interrupts off. Its bound comes from the block's
 * contract: a command keeps BUSY at most 4 x ENTRIES + 4 MI cycles (the
 * worst, SNAPSHOT and CLEAR written together; a lone SNAPSHOT takes about
 * half), 3 more when a delta is being added as the command arrives. The
 * contract gives no MI clock and the driver cannot read it: it assumes
 * none runs slower than TLM_MI_MIN_MHZ, an assumption of this driver, and
 * allows twice that time. Never more than TLM_BUSY_MAX_US.
 */
#define TLM_MI_MIN_MHZ		50
#define TLM_BUSY_MAX_US		10000

static u32 ndk_tlm_busy_bound_us(const struct ndk_tlm_layout *l)
{
	u32 cycles = 4 * l->entries + 4 + 3;

	return min_t(u32, DIV_ROUND_UP(2 * cycles, TLM_MI_MIN_MHZ),
		     TLM_BUSY_MAX_US);
}

/*
 * Time the block's accumulator needs between two SNAPSHOTs. While BUSY it
 * adds no delta: the deltas wait in the probe FIFOs, and commands written
 * faster than it catches up fill them and lose counts (LOST DELTA). It
 * takes about TLM_ADD_CYCLES MI cycles a delta and every used entry sends
 * one delta a drain period, so after BUSY falls the driver leaves it the
 * time to add one whole drain, at the slowest MI clock it assumes, before
 * the next SNAPSHOT; a read that comes sooner is served from the copy in
 * the window, which is exact as of its own instant (at most this old).
 * The gap counts from the SNAPSHOT's arrival (ndk_tlm::cmd_seen_ns, no
 * earlier), so it also holds the contract's longest BUSY of a lone
 * SNAPSHOT, 2 x ENTRIES + 4 MI cycles and 3 more when a delta is being
 * added.
 */
#define TLM_ADD_CYCLES		3

static u64 ndk_tlm_snap_gap_ns(const struct ndk_tlm_layout *l)
{
	u64 cycles = 2 * l->entries + 4 + 3 +
		     (u64)TLM_ADD_CYCLES * l->entries_used;

	return DIV_ROUND_UP_ULL(cycles * NSEC_PER_USEC, TLM_MI_MIN_MHZ);
}

/* without a netlink listener, look for one this often (or at the poll) */
#define TLM_LISTEN_CHECK_NS	(1ULL * NSEC_PER_SEC)

/* longest poll period even for very wide counters */
#define TLM_POLL_MAX_NS		(3600ULL * NSEC_PER_SEC)
#define TLM_POLL_MIN_NS		(1ULL * NSEC_PER_MSEC)

/*
 * Largest group (members of any PMU) accepted at event_init: the first call
 * of a bracket serves the whole group with interrupts off, two register
 * reads per member.
 */
#define TLM_GROUP_MAX		256

/* entries the control plane and the poller fold per hold of the lock */
#define TLM_FOLD_CHUNK		32

/* hw_perf_event::flags of our events */
#define TLM_F_NOBASE		BIT(0)	/* running, its start had no SNAPSHOT */
#define TLM_F_LATE		BIT(1)	/* stopped, its stop had no SNAPSHOT */
#define TLM_F_MOVED		BIT(2)	/* stopped by an owner CPU move */

/* what a call does to the events it serves; the kind of its stamp */
enum ndk_tlm_serve {
	TLM_COUNT,		/* read: count up to the SNAPSHOT */
	TLM_BASE,		/* start: count from the SNAPSHOT on */
	TLM_STOP,		/* stop: as a read, a stamp of TLM_COUNT */
};

/*
 * Per CPU and PMU, touched by the perf core's callbacks with interrupts off
 * and by the owner move on that CPU.
 */
struct ndk_tlm_pcpu {
	unsigned int open;	/* brackets open: pmu_disable, transactions */
	unsigned int seq;	/* bumped at every edge of a bracket */
	unsigned int outer;	/* bumped when the outermost bracket opens */
	unsigned int snap_outer; /* the outermost bracket that took */
	u32 snap_gen;		/* SNAPSHOT @snap_gen (0: none) */
	int err;		/* first failed read of the read transaction */
	bool moving;		/* perf_pmu_migrate_context() away from here */
};

static enum cpuhp_state ndk_tlm_hp_state;

#ifndef HWTEL_PMU_REVOKES
/*
 * Before Linux 6.15 the perf core goes on using a PMU after its last
 * event's ->destroy() (the PMU context, the module reference), and
 * perf_pmu_unregister() does not wait for that. A PMU whose device went
 * away while events were open stays registered, frozen, on this list until
 * ndk_tlm_reap() finds the module unreferenced (see there).
 */
static LIST_HEAD(ndk_tlm_dead);
static DEFINE_MUTEX(ndk_tlm_dead_lock);
#endif

#define to_tlm(p) container_of(p, struct ndk_tlm, pmu)

/* ------------------------------------------------------------------ */
/* hardware access; all called with tlm->lock held                    */

/*
 * Wait, bounded in time, for STATUS.BUSY to fall: 0, -ETIMEDOUT, or
 * -ENODEV when the device does not answer. A PCIe read nobody completes
 * (a surprise link-down, a removed card) returns all ones; STATUS all
 * ones has BUSY set, so it is confirmed on MAGIC, a constant that is never
 * all ones, rather than waited out in every operation.
 */
static int ndk_tlm_wait_idle(struct ndk_tlm *tlm)
{
	ktime_t end = ktime_add_us(ktime_get(), tlm->busy_us);
	bool late;
	u32 st;

	for (;;) {
		/*
		 * The clock before the read: a read that starts inside BUSY
		 * may end past @end (a slow completion, the CPU held off), so
		 * only a read that started past @end and saw BUSY is a timeout.
		 */
		late = ktime_after(ktime_get(), end);
		st = hwtel_readl(&tlm->io, NDK_TLM_STATUS);
		if (st == U32_MAX &&
		    hwtel_readl(&tlm->io, NDK_TLM_MAGIC) == U32_MAX)
			return -ENODEV;
		if (!(st & NDK_TLM_ST_BUSY))
			return 0;
		if (late)
			return -ETIMEDOUT;
		udelay(1);
	}
}

/* Entry @i of the snapshot copy, masked to the counter width */
static u64 ndk_tlm_read_entry(struct ndk_tlm *tlm, u32 i)
{
	u32 off = tlm->lay.cnt_base + 8 * i;
	u64 raw;

	raw = hwtel_readl(&tlm->io, off);
	raw |= (u64)hwtel_readl(&tlm->io, off + 4) << 32;
	return raw & tlm->cnt_mask;
}

/* Fold @raw, entry @i of the copy of generation @gen, into its total. */
static void ndk_tlm_entry_fold(struct ndk_tlm *tlm, u32 i, u64 raw, u32 gen)
{
	struct ndk_tlm_entry *e = &tlm->entries[i];

	if (e->gen == gen)
		return;
	e->acc += (raw - e->last_raw) & tlm->cnt_mask;
	e->last_raw = raw;
	e->gen = gen;
}

/* Fold entry @i of the copy in the window into its 64-bit total. */
static void ndk_tlm_entry_update(struct ndk_tlm *tlm, u32 i)
{
	struct ndk_tlm_entry *e = &tlm->entries[i];

	if (e->gen == tlm->gen)
		return;
	if (i == TLM_SNAP_ENTRY(&tlm->lay)) {
		e->acc = tlm->snap_ns;
		e->gen = tlm->gen;
		return;
	}
	ndk_tlm_entry_fold(tlm, i, ndk_tlm_read_entry(tlm, i), tlm->gen);
}

/*
 * The copy of a SNAPSHOT that timed out has landed: it is the picture of
 * the instant that command was written. Before anything overwrites it,
 * keep it for the entries of the events whose start or stop that command
 * was for (@late): each such event catches up from it at its next call.
 */
static void ndk_tlm_land_late(struct ndk_tlm *tlm)
{
	struct ndk_tlm_entry *e;
	unsigned int i;

	tlm->gen++;
	tlm->snap_ns = tlm->cmd_ns;
	for_each_set_bit(i, tlm->late, tlm->lay.entries_used + 1) {
		ndk_tlm_entry_update(tlm, i);
		e = &tlm->entries[i];
		e->late_acc = e->acc;
		e->late_gen = tlm->gen;
	}
	bitmap_zero(tlm->late, tlm->lay.entries_used + 1);
}

/*
 * SNAPSHOT handshake: 0 when the window holds a new copy, or one taken
 * less than @snap_gap_ns ago (no command written, ndk_tlm_snap_gap_ns()),
 * and otherwise
 *  -ETIMEDOUT: this command's copy did not complete in time; the block is
 *	now wedged and that copy lands later (ndk_tlm_land_late());
 *  -EBUSY: the block is still wedged by an earlier command: nothing was
 *	written, at the cost of one STATUS read;
 *  -ENODEV: the device is gone or does not answer.
 * Only one SNAPSHOT is ever outstanding, so a late copy is never restarted
 * or mistaken for a newer instant.
 */
static int ndk_tlm_snapshot(struct ndk_tlm *tlm)
{
	u32 st;
	int ret;

	lockdep_assert_held(&tlm->lock);

	if (tlm->dead)
		return -ENODEV;
	if (tlm->wedged) {
		st = hwtel_readl(&tlm->io, NDK_TLM_STATUS);
		if (st == U32_MAX &&
		    hwtel_readl(&tlm->io, NDK_TLM_MAGIC) == U32_MAX)
			return -ENODEV;
		if (st & NDK_TLM_ST_BUSY)
			return -EBUSY;
		tlm->wedged = false;
		ndk_tlm_land_late(tlm);
	} else if (tlm->gen &&
		   ktime_get_ns() - tlm->cmd_seen_ns < READ_ONCE(tlm->snap_gap_ns)) {
		/* too soon for the accumulator: the window's copy serves */
		return 0;
	}
	/*
	 * The live counters stop at the command (they do not move while
	 * BUSY), so the copy is of this instant. The clock is read right
	 * before the write: after BUSY falls it would also hold the BUSY wait
	 * and whatever held the CPU off in it.
	 */
	tlm->cmd_ns = ktime_get_ns();
	hwtel_writel(&tlm->io, NDK_TLM_CMD_SNAPSHOT, NDK_TLM_COMMAND);
	/* BUSY is not visible on a STATUS read right after the write */
	hwtel_readl(&tlm->io, NDK_TLM_MAGIC);
	/* the read came back after the posted write: the block has it */
	tlm->cmd_seen_ns = ktime_get_ns();
	ndk_tlm_lab_stamp(tlm);
	ret = ndk_tlm_wait_idle(tlm);
	if (ret == -ENODEV) {
		dev_err_ratelimited(tlm->dev,
				    "the device does not answer (STATUS reads all ones)\n");
		return ret;
	}
	if (ret) {
		tlm->wedged = true;
		dev_err_ratelimited(tlm->dev,
				    "SNAPSHOT still BUSY after %u us\n",
				    tlm->busy_us);
		return ret;
	}
	tlm->gen++;
	tlm->snap_ns = tlm->cmd_ns;
	return 0;
}

/* The handshake of a whole-window fold (its own hold, for the lab's times) */
static int ndk_tlm_fold_snapshot(struct ndk_tlm *tlm, u64 *snap_ns, u32 *gen)
{
	unsigned long flags;
	int ret;

	ndk_tlm_lock_irqsave(tlm, flags);
	ret = ndk_tlm_snapshot(tlm);
	if (snap_ns)
		*snap_ns = tlm->snap_ns;
	*gen = tlm->gen;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	return ret;
}

/*
 * Take a SNAPSHOT and fold every entry from it. Each chunk of
 * TLM_FOLD_CHUNK entries is read with interrupts on and without the lock,
 * then folded under the lock if the window still holds the copy it was
 * read from (same generation, not wedged: a copy under way is never
 * folded). If a perf event took a newer SNAPSHOT meanwhile, the chunk is
 * read again, under the lock, from that copy: any true picture no older
 * than the last fold keeps every total exact, so nothing is retried and
 * the fold never gives up for events. It fails only when the device is
 * gone (-ENODEV) or the block is wedged (-ETIMEDOUT).
 * @vals, when given, gets acc - base of every entry, each as of its fold;
 * @snap_ns the time of this SNAPSHOT.
 * Callers: the control plane and the poller's work only, in process
 * context: a whole window is up to 8160 register reads, about 8 ms at a
 * real card's read latency, so it yields between chunks. They read without
 * the lock; removal takes the instance off the control plane's list and
 * cancels the poller and its work before the window is unmapped.
 */
static int ndk_tlm_fold_all(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns)
{
	u32 i, j, end, n = tlm->lay.entries_used, gen;
	u64 raw[TLM_FOLD_CHUNK];
	unsigned long flags;
	int ret;

	ret = ndk_tlm_fold_snapshot(tlm, snap_ns, &gen);
	if (ret)
		return ret == -EBUSY ? -ETIMEDOUT : ret;

	for (i = 0; i < n; i = end) {
		end = min(i + TLM_FOLD_CHUNK, n);
		for (j = i; j < end; j++)
			raw[j - i] = ndk_tlm_read_entry(tlm, j);
		ndk_tlm_lock_irqsave(tlm, flags);
		if (tlm->dead)
			ret = -ENODEV;
		else if (tlm->wedged)
			ret = -ETIMEDOUT;
		for (j = i; !ret && j < end; j++) {
			if (tlm->gen == gen)
				ndk_tlm_entry_fold(tlm, j, raw[j - i], gen);
			else
				ndk_tlm_entry_update(tlm, j);
			if (vals)
				vals[j] = tlm->entries[j].acc -
					  tlm->entries[j].base;
		}
		gen = tlm->gen;
		ndk_tlm_unlock_irqrestore(tlm, flags);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

int ndk_tlm_totals(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns)
{
	return ndk_tlm_fold_all(tlm, vals, snap_ns);
}

/*
 * Software clear: every entry folded, then, in one hold of the lock, every
 * base set to its total, so the totals restart from zero at the clear's
 * SNAPSHOT (or a newer one). All or nothing: a failed fold rebases no
 * entry. Running perf events are not affected (@acc goes on). The hardware
 * is not cleared.
 */
int ndk_tlm_soft_clear(struct ndk_tlm *tlm)
{
	unsigned long flags;
	u32 i;
	int ret;

	ret = ndk_tlm_fold_all(tlm, NULL, NULL);
	if (ret)
		return ret;
	ndk_tlm_lock_irqsave(tlm, flags);
	for (i = 0; i < tlm->lay.entries_used; i++)
		tlm->entries[i].base = tlm->entries[i].acc;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	return 0;
}

/*
 * CLEAR with bits of enum ndk_pcie_tlm_clear. Counters are cleared in
 * software only (ndk_tlm_soft_clear()): a hardware CLEAR also zeroes the
 * snapshot copy and cannot be exact (the probes add what they hold after
 * it), so it would lose counts of running perf events. Flags and marks are
 * cleared in hardware.
 */
int ndk_tlm_clear(struct ndk_tlm *tlm, u32 what)
{
	unsigned long flags;
	u32 cmd = 0;
	int ret;

	if (what & BIT(0)) {
		ret = ndk_tlm_soft_clear(tlm);
		if (ret)
			return ret;
	}
	if (what & BIT(1))
		cmd |= NDK_TLM_CMD_CLEAR_FLAGS;
	if (what & BIT(2))
		cmd |= NDK_TLM_CMD_CLEAR_MARKS;
	if (!cmd)
		return 0;

	ndk_tlm_lock_irqsave(tlm, flags);
	hwtel_writel(&tlm->io, cmd, NDK_TLM_COMMAND);
	if (cmd & NDK_TLM_CMD_CLEAR_FLAGS)
		tlm->flags_seen = 0;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	return 0;
}

/* STATUS flags as enum ndk_pcie_tlm_flags bits */
u32 ndk_tlm_read_flags(struct ndk_tlm *tlm)
{
	return (hwtel_readl(&tlm->io, NDK_TLM_STATUS) & NDK_TLM_ST_FLAGS) >> 1;
}

void ndk_tlm_read_ep(struct ndk_tlm *tlm, u32 ep, struct ndk_tlm_ep_state *st)
{
	unsigned long flags;

	ndk_tlm_lock_irqsave(tlm, flags);
	st->status = hwtel_readl(&tlm->io, NDK_TLM_PCIE_STATUS(ep));
	st->tags = hwtel_readl(&tlm->io, NDK_TLM_PCIE_TAGS(ep));
	st->stfifo = hwtel_readl(&tlm->io, NDK_TLM_PCIE_STFIFO(ep));
	ndk_tlm_unlock_irqrestore(tlm, flags);
}

/* ------------------------------------------------------------------ */
/* perf events                                                        */

/*
 * Stamps: an event served by another event's call in an open bracket
 * carries (CPU, bracket sequence, kind) in last_cpu and last_tag. The
 * sequence changes at every edge of a bracket, so a stamp matches only
 * inside the bracket that set it, on the CPU that set it.
 */
static void ndk_tlm_stamp(struct ndk_tlm_pcpu *pc, struct perf_event *event,
			  enum ndk_tlm_serve kind)
{
	event->hw.last_cpu = smp_processor_id();
	event->hw.last_tag = 2ULL * pc->seq + (kind == TLM_BASE);
}

static bool ndk_tlm_stamped(struct ndk_tlm_pcpu *pc, struct perf_event *event,
			    enum ndk_tlm_serve kind)
{
	return pc->open && event->hw.last_cpu == smp_processor_id() &&
	       event->hw.last_tag == 2ULL * pc->seq + (kind == TLM_BASE);
}

/*
 * A start or stop whose SNAPSHOT timed out waits for that command's copy:
 * @event catches up from it (ndk_tlm_land_late()) at its next call, exactly.
 * If a later timeout's copy replaced it first, the event counts from its
 * next good SNAPSHOT instead.
 */
static void ndk_tlm_await_late(struct ndk_tlm *tlm, struct perf_event *event,
			       unsigned int flag)
{
	event->hw.flags |= flag;
	/* the gen of that copy, never 0: 0 means no copy awaited */
	event->hw.event_base = (unsigned long)tlm->gen + 1;
	__set_bit(event->hw.idx, tlm->late);
}

static void ndk_tlm_catch_up(struct ndk_tlm *tlm, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	struct ndk_tlm_entry *e = &tlm->entries[hwc->idx];

	/* that copy is still under way */
	if (hwc->event_base > tlm->gen)
		return;
	if (hwc->event_base && e->late_gen == hwc->event_base) {
		if (hwc->flags & TLM_F_NOBASE) {
			hwc->flags &= ~TLM_F_NOBASE;
			local64_set(&hwc->prev_count, e->late_acc);
		} else {
			/*
			 * Counted up to that copy. An event still running
			 * (served by a group member's stop) counts on from it.
			 */
			local64_add(e->late_acc - local64_read(&hwc->prev_count),
				    &event->count);
			local64_set(&hwc->prev_count, e->late_acc);
		}
	}
	/* caught up, or a later copy replaced it: NOBASE takes the next one */
	hwc->flags &= ~TLM_F_LATE;
	hwc->event_base = 0;
}

/* @event counts from, or up to, the copy in the window. */
static void ndk_tlm_apply(struct ndk_tlm *tlm, struct perf_event *event,
			  enum ndk_tlm_serve kind)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 acc;

	ndk_tlm_entry_update(tlm, hwc->idx);
	acc = tlm->entries[hwc->idx].acc;
	if (kind != TLM_BASE && !(hwc->flags & TLM_F_NOBASE))
		local64_add(acc - local64_read(&hwc->prev_count), &event->count);
	hwc->flags &= ~TLM_F_NOBASE;
	local64_set(&hwc->prev_count, acc);
}

/*
 * Whether a call of @kind for another event of the group is served too.
 * A start serves the members the core has not started yet (not those
 * moving with the owner CPU, which keep their base); a stop or read the
 * running ones. A member not yet added has never been through ->add(), so
 * the core's state tells, not hw.state.
 */
static bool ndk_tlm_serves(struct ndk_tlm *tlm, struct perf_event *event,
			   enum ndk_tlm_serve kind)
{
	bool running = event->state == PERF_EVENT_STATE_ACTIVE &&
		       !(event->hw.state & PERF_HES_STOPPED);

	if (event->pmu != &tlm->pmu)
		return false;
	if (kind == TLM_BASE)
		return !running && !(event->hw.flags & TLM_F_MOVED);
	return running;
}

/*
 * What a call of @kind does to @event when its SNAPSHOT returned @ret: on
 * success it counts from or up to the new copy. On failure it keeps its
 * count and base: a read catches up at the next good SNAPSHOT; a stop counts
 * up to the copy under way; so does a start whose own command timed out,
 * while a start that found an earlier command's copy pending (-EBUSY, older
 * than the start) counts from the next good SNAPSHOT. A stop and start
 * that both find the copy the event awaits still pending (a reschedule of
 * the context) leave it as it was: it counts on through the gap.
 */
static void ndk_tlm_serve_one(struct ndk_tlm *tlm, struct perf_event *event,
			      enum ndk_tlm_serve kind, int ret)
{
	struct hw_perf_event *hwc = &event->hw;
	bool same = ret == -EBUSY &&
		    hwc->event_base == (unsigned long)tlm->gen + 1;

	if (hwc->flags & (TLM_F_NOBASE | TLM_F_LATE))
		ndk_tlm_catch_up(tlm, event);
	if (!ret) {
		ndk_tlm_apply(tlm, event, kind);
		return;
	}
	if (kind == TLM_BASE) {
		if (same && (hwc->flags & (TLM_F_NOBASE | TLM_F_LATE))) {
			hwc->flags &= ~TLM_F_LATE;
			return;
		}
		hwc->flags |= TLM_F_NOBASE;
		hwc->event_base = 0;
		if (ret == -ETIMEDOUT)
			ndk_tlm_await_late(tlm, event, TLM_F_NOBASE);
	} else if (kind == TLM_STOP && (ret == -ETIMEDOUT || ret == -EBUSY) &&
		   !(same && (hwc->flags & TLM_F_NOBASE))) {
		ndk_tlm_await_late(tlm, event, TLM_F_LATE);
	}
}

/* @member of @event's group, in a bracket: served and stamped if due */
static void ndk_tlm_serve_member(struct ndk_tlm *tlm, struct ndk_tlm_pcpu *pc,
				 struct perf_event *member,
				 struct perf_event *event,
				 enum ndk_tlm_serve kind, int ret)
{
	if (member != event && !ndk_tlm_serves(tlm, member, kind))
		return;
	ndk_tlm_serve_one(tlm, member, kind, ret);
	ndk_tlm_stamp(pc, member, kind);
}

/*
 * One SNAPSHOT for @event and, inside a bracket, for the events of its
 * group that the same call would serve too, which are then stamped.
 * Returns the SNAPSHOT's error.
 */
static int ndk_tlm_serve(struct ndk_tlm *tlm, struct perf_event *event,
			 enum ndk_tlm_serve kind)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);
	struct perf_event *leader = event->group_leader, *sib;
	unsigned long flags;
	int ret;

	ndk_tlm_lock_irqsave(tlm, flags);
	/*
	 * A bracket's later calls (other groups being stopped and started in
	 * one reschedule) use its SNAPSHOT while the window still holds it.
	 */
	if (pc->open && pc->snap_outer == pc->outer &&
	    pc->snap_gen == tlm->gen && !tlm->wedged && !tlm->dead) {
		ret = 0;
	} else {
		ret = ndk_tlm_snapshot(tlm);
		pc->snap_outer = pc->outer;
		pc->snap_gen = ret ? 0 : tlm->gen;
	}
	if (!pc->open) {
		ndk_tlm_serve_one(tlm, event, kind, ret);
		goto out;
	}
	ndk_tlm_serve_member(tlm, pc, leader, event, kind, ret);
	for_each_sibling_event(sib, leader)
		ndk_tlm_serve_member(tlm, pc, sib, event, kind, ret);
out:
	ndk_tlm_unlock_irqrestore(tlm, flags);
	return ret;
}

static void ndk_tlm_bracket(struct pmu *pmu, bool open)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(to_tlm(pmu)->pcpu);

	if (open && !pc->open++)
		pc->outer++;
	if (!open)
		pc->open--;
	pc->seq++;
}

static void ndk_tlm_pmu_disable(struct pmu *pmu)
{
	ndk_tlm_bracket(pmu, true);
}

static void ndk_tlm_pmu_enable(struct pmu *pmu)
{
	ndk_tlm_bracket(pmu, false);
}

static void ndk_tlm_start_txn(struct pmu *pmu, unsigned int txn_flags)
{
	this_cpu_ptr(to_tlm(pmu)->pcpu)->err = 0;
	ndk_tlm_bracket(pmu, true);
}

/* a failed group read fails the read(2); scheduling never fails */
static int ndk_tlm_commit_txn(struct pmu *pmu)
{
	int err = this_cpu_ptr(to_tlm(pmu)->pcpu)->err;

	ndk_tlm_bracket(pmu, false);
	return err;
}

static void ndk_tlm_cancel_txn(struct pmu *pmu)
{
	ndk_tlm_bracket(pmu, false);
}

static void ndk_tlm_read(struct perf_event *event)
{
	struct ndk_tlm *tlm = to_tlm(event->pmu);
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);
	int ret;

	if (event->hw.state & PERF_HES_STOPPED ||
	    ndk_tlm_stamped(pc, event, TLM_COUNT))
		return;
	ret = ndk_tlm_serve(tlm, event, TLM_COUNT);
	if (ret && !pc->err)
		pc->err = ret == -EBUSY ? -ETIMEDOUT : ret;
}

static void ndk_tlm_start(struct perf_event *event, int flags)
{
	struct ndk_tlm *tlm = to_tlm(event->pmu);
	struct hw_perf_event *hwc = &event->hw;

	/*
	 * Moved with the owner CPU: the device's counters did not stop, so
	 * the event counts on from its base, exactly and without a SNAPSHOT.
	 */
	if (hwc->flags & TLM_F_MOVED)
		hwc->flags &= ~TLM_F_MOVED;
	else if (!ndk_tlm_stamped(this_cpu_ptr(tlm->pcpu), event, TLM_BASE))
		ndk_tlm_serve(tlm, event, TLM_BASE);
	hwc->state = 0;
}

static void ndk_tlm_stop(struct perf_event *event, int flags)
{
	struct ndk_tlm *tlm = to_tlm(event->pmu);
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);
	struct hw_perf_event *hwc = &event->hw;

	if (hwc->state & PERF_HES_STOPPED)
		return;
	if (pc->moving)
		hwc->flags |= TLM_F_MOVED;
	else if ((flags & PERF_EF_UPDATE) &&
		 !ndk_tlm_stamped(pc, event, TLM_STOP))
		ndk_tlm_serve(tlm, event, TLM_STOP);
	hwc->state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int ndk_tlm_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		ndk_tlm_start(event, PERF_EF_RELOAD);
	return 0;
}

static void ndk_tlm_del(struct perf_event *event, int flags)
{
	ndk_tlm_stop(event, PERF_EF_UPDATE);
}

/* Regions bus @bus of an endpoint really has; 0 if there is no such bus. */
static u32 ndk_tlm_bus_regions(const struct ndk_tlm_layout *l, u32 bus)
{
	if (bus == 0)
		return l->regions_rq;
	if (bus == 1)
		return l->regions_rc;
	if (bus - 2 >= l->dma_buses)
		return 0;
	return (bus & 1) ? l->regions_down : l->regions_up;
}

/*
 * Counter entry of a config, or -EINVAL when the config names nothing of
 * this layout.
 */
static int ndk_tlm_config_entry(const struct ndk_tlm_layout *l, u64 config)
{
	u32 kind = FIELD_GET(TLM_CFG_KIND, config);
	u32 ep = FIELD_GET(TLM_CFG_EP, config);
	u32 bus = FIELD_GET(TLM_CFG_BUS, config);
	u32 idx = FIELD_GET(TLM_CFG_IDX, config);
	u32 epbase, brake, chan;

	if (config & ~TLM_CFG_ALL)
		return -EINVAL;
	if (kind == TLM_K_RAW) {
		if (ep || bus || idx >= l->entries_used)
			return -EINVAL;
		return idx;
	}
	if (kind == TLM_K_SNAP_NS) {
		if (ep || bus || idx)
			return -EINVAL;
		return TLM_SNAP_ENTRY(l);
	}
	if (ep >= l->endpoints)
		return -EINVAL;
	epbase = ep * l->counters_per_ep;
	brake = epbase + 1 + l->pcie_buses * (TLM_BUS_FIELDS + l->pcie_regions);

	switch (kind) {
	case TLM_K_PCIE_CYCLES:
		if (bus || idx)
			return -EINVAL;
		return epbase;
	case TLM_K_DMA_CYCLES:
		if (bus || idx)
			return -EINVAL;
		return epbase + l->pcie_channels;
	case TLM_K_WORDS ... TLM_K_REGION:
		if (bus >= 2 + l->dma_buses)
			return -EINVAL;
		if (kind == TLM_K_REGION) {
			if (idx >= ndk_tlm_bus_regions(l, bus))
				return -EINVAL;
			chan = TLM_BUS_FIELDS + idx;
		} else {
			if (idx)
				return -EINVAL;
			chan = kind - TLM_K_WORDS;
		}
		if (bus < 2)
			return epbase + 1 +
			       bus * (TLM_BUS_FIELDS + l->pcie_regions) + chan;
		return epbase + l->pcie_channels + 1 +
		       (bus - 2) * (TLM_BUS_FIELDS + l->dma_regions) + chan;
	case TLM_K_BRAKE:
		if (bus || idx >= l->brake_reasons)
			return -EINVAL;
		return brake + idx;
	case TLM_K_TAGS_BAND:
	case TLM_K_STFIFO_BAND:
		chan = kind - TLM_K_TAGS_BAND;	/* histogram number */
		if (bus || chan >= l->hist_pcie || idx >= l->hist_bands)
			return -EINVAL;
		return brake + l->brake_reasons + chan * l->hist_bands + idx;
	default:
		return -EINVAL;
	}
}

/*
 * Groups: this PMU's events and software events only (a software leader
 * included, as perf expects of uncore PMUs), at most TLM_GROUP_MAX members,
 * all served with interrupts off by one call. Inside a transaction one
 * SNAPSHOT serves every member of ours, whoever leads.
 */
static bool ndk_tlm_group_ok(struct perf_event *event)
{
	struct perf_event *leader = event->group_leader;
	struct perf_event *sib;

	if (leader == event)
		return true;
	if (leader->pmu != event->pmu && !is_software_event(leader))
		return false;
	if (leader->nr_siblings + 2 > TLM_GROUP_MAX)
		return false;
	for_each_sibling_event(sib, leader) {
		if (sib->pmu != event->pmu && !is_software_event(sib))
			return false;
	}
	return true;
}

static void ndk_tlm_event_destroy(struct perf_event *event)
{
	hwtel_io_put(&to_tlm(event->pmu)->io);
	/* lab flavour: the removal tests may hold the close here */
	ndk_tlm_lab_close_gate();
}

static int ndk_tlm_event_init(struct perf_event *event)
{
	struct ndk_tlm *tlm = to_tlm(event->pmu);
	int entry;

	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (is_sampling_event(event) || event->attach_state & PERF_ATTACH_TASK)
		return -EOPNOTSUPP;
	if (event->cpu < 0)
		return -EOPNOTSUPP;
	/*
	 * ->add() never fails, so the core never rotates this PMU's events,
	 * and an owner move relies on that (ndk_tlm_move()); an exclusive
	 * group next to another one would have the core rotate them.
	 */
	if (event->attr.exclusive)
		return -EOPNOTSUPP;
	if (event->attr.config1 || event->attr.config2)
		return -EINVAL;
	entry = ndk_tlm_config_entry(&tlm->lay, event->attr.config);
	if (entry < 0)
		return entry;
	if (!ndk_tlm_group_ok(event))
		return -EINVAL;
	/* a removed device's PMU (still registered before 6.15) takes none */
	if (READ_ONCE(tlm->dead) || !hwtel_io_get(&tlm->io))
		return -ENODEV;

	event->cpu = READ_ONCE(tlm->cpu);
	event->hw.idx = entry;
	event->hw.config = event->attr.config;
	event->hw.flags = 0;
	event->destroy = ndk_tlm_event_destroy;
	return 0;
}

/* ------------------------------------------------------------------ */
/* poller: keeps every entry within one wrap, reports new STATUS flags */

/*
 * The wrap fold reads the whole window: not in the timer's softirq, where
 * it would keep other softirqs and the CPU's tasks waiting for up to 8 ms
 * on a real card, but in a work item. The poll period is half the time the
 * fastest counter needs to wrap, so the work may start that late.
 */
static void ndk_tlm_fold_work(struct work_struct *work)
{
	struct ndk_tlm *tlm = container_of(work, struct ndk_tlm, fold_work);

	ndk_tlm_fold_all(tlm, NULL, NULL);
}

/* the first point of the grid @next + k * @period after @now */
static ktime_t ndk_tlm_grid_next(ktime_t next, ktime_t now, u64 period)
{
	u64 k;

	if (ktime_before(now, next))
		return next;
	k = div64_u64(ktime_to_ns(ktime_sub(now, next)), period) + 1;
	return ktime_add_ns(next, k * period);
}

/*
 * The timer wakes only for what is due: a wrap poll on its own grid
 * (start + k * poll_ns, however late a callback runs), the flag check on
 * its grid while someone listens, and otherwise a check for a new listener
 * every TLM_LISTEN_CHECK_NS (generic netlink does not tell every kernel
 * when a listener joins).
 */
static enum hrtimer_restart ndk_tlm_poll(struct hrtimer *t)
{
	struct ndk_tlm *tlm = container_of(t, struct ndk_tlm, poller);
	ktime_t now = ktime_get(), exp;
	unsigned long flags;
	u32 fl = 0, new = 0;
	bool listening = ndk_tlm_nl_listening();

	if (!ktime_before(now, tlm->next_poll)) {
		queue_work(system_unbound_wq, &tlm->fold_work);
		tlm->next_poll = ndk_tlm_grid_next(tlm->next_poll, now,
						   tlm->poll_ns);
	}
	exp = tlm->next_poll;

	if (listening) {
		if (!ktime_before(now, tlm->next_flags)) {
			ndk_tlm_lock_irqsave(tlm, flags);
			fl = ndk_tlm_read_flags(tlm);
			new = fl & ~tlm->flags_seen;
			tlm->flags_seen = fl;
			ndk_tlm_unlock_irqrestore(tlm, flags);
			tlm->next_flags = ndk_tlm_grid_next(tlm->next_flags,
							    now, tlm->tick_ns);
		}
		if (ktime_before(tlm->next_flags, exp))
			exp = tlm->next_flags;
	} else {
		tlm->next_listen = ndk_tlm_grid_next(tlm->next_listen, now,
						     TLM_LISTEN_CHECK_NS);
		if (ktime_before(tlm->next_listen, exp))
			exp = tlm->next_listen;
		/* a new listener starts on the flag grid at once */
		tlm->next_flags = tlm->next_listen;
	}

	if (new)
		ndk_tlm_nl_notify(tlm, fl, new);

	hrtimer_set_expires(t, exp);
	return HRTIMER_RESTART;
}

/*
 * Largest increment per cycle of the fastest clock any counter can make
 * (contract, "Verified behaviour"): 1 for cycles, words, stalls, regions,
 * brakes and bands; probe regions for frames and MVB items; probe regions x
 * items per region for MFB items, where items per region is rounded up to a
 * power of two because a malformed EOF_POS can count that far.
 */
static u64 ndk_tlm_max_inc(const struct ndk_tlm_layout *l)
{
	u32 ib = max_t(u32, l->item_bytes, 1);
	u64 pcie, dma;

	pcie = (u64)max(l->pcie_regions, 1U) *
	       roundup_pow_of_two(max3(l->bytes_rq, l->bytes_rc, ib) / ib);
	dma = (u64)max(l->dma_regions, 1U) *
	      roundup_pow_of_two(max3(l->bytes_up, l->bytes_down, ib) / ib);
	return max(pcie, dma);
}

/*
 * Half the time the fastest counter needs to wrap, less one drain's delta
 * that can land at once: (2^W - DRAIN_PERIOD x inc) / (inc x clock) / 2.
 */
static u64 ndk_tlm_poll_period(struct ndk_tlm *tlm)
{
	const struct ndk_tlm_layout *l = &tlm->lay;
	unsigned int mhz = max_clock_mhz ? max_clock_mhz : 1;
	u64 inc = ndk_tlm_max_inc(l);
	u64 span = l->cnt_width >= 64 ? U64_MAX : BIT_ULL(l->cnt_width);
	u64 burst = (u64)max_t(u32, l->drain_period, 1) * inc;
	u64 ns = TLM_POLL_MAX_NS, cyc;

	if (burst >= span / 2) {
		dev_warn(tlm->dev, "a %u-bit counter can wrap within one drain (%llu per cycle): totals are not exact\n",
			 l->cnt_width, inc);
		cyc = 0;
	} else {
		cyc = div64_u64(span - burst, inc) / 2;
	}
	if (cyc < div_u64(TLM_POLL_MAX_NS, 1000) * mhz)
		ns = div_u64(cyc * 1000, mhz);
	if (poll_ms)
		ns = min(ns, (u64)poll_ms * NSEC_PER_MSEC);
	return max(ns, TLM_POLL_MIN_NS);
}

/* ------------------------------------------------------------------ */
/* sysfs                                                              */

static ssize_t cpumask_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(dev));

	return sysfs_emit(buf, "%u\n", READ_ONCE(tlm->cpu));
}
static DEVICE_ATTR_RO(cpumask);

static ssize_t identifier_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(dev));

	return sysfs_emit(buf, "pcie_telemetry_mi %u.%u\n",
			  tlm->lay.version_major, tlm->lay.version_minor);
}
static DEVICE_ATTR_RO(identifier);

/*
 * The STATUS flags (enum ndk_pcie_tlm_flags), what the control plane's
 * FLAGS says, for a recorder that reads them with every sample: one
 * register read, no netlink request. Root only (the control plane needs
 * CAP_PERFMON). A PMU whose device has gone can stay registered until its
 * last event is closed (before 6.15): no read then, nor of a device that
 * answers all ones.
 */
static ssize_t flags_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(dev));
	unsigned long irqflags;
	u32 st = U32_MAX;

	ndk_tlm_lock_irqsave(tlm, irqflags);
	if (!tlm->dead)
		st = hwtel_readl(&tlm->io, NDK_TLM_STATUS);
	ndk_tlm_unlock_irqrestore(tlm, irqflags);
	if (st == U32_MAX)
		return -ENODEV;
	return sysfs_emit(buf, "0x%x\n", (u32)((st & NDK_TLM_ST_FLAGS) >> 1));
}
static DEVICE_ATTR_ADMIN_RO(flags);

static struct attribute *ndk_tlm_attrs[] = {
	&dev_attr_cpumask.attr,
	&dev_attr_identifier.attr,
	&dev_attr_flags.attr,
	NULL,
};

static const struct attribute_group ndk_tlm_attr_group = {
	.attrs = ndk_tlm_attrs,
};

PMU_FORMAT_ATTR(kind, "config:0-7");
PMU_FORMAT_ATTR(ep, "config:8-15");
PMU_FORMAT_ATTR(bus, "config:16-31");
PMU_FORMAT_ATTR(idx, "config:32-47");

static struct attribute *ndk_tlm_format_attrs[] = {
	&format_attr_kind.attr,
	&format_attr_ep.attr,
	&format_attr_bus.attr,
	&format_attr_idx.attr,
	NULL,
};

static const struct attribute_group ndk_tlm_format_group = {
	.name = "format",
	.attrs = ndk_tlm_format_attrs,
};

PMU_EVENT_ATTR_STRING(pcie_cycles, ndk_tlm_ev_pcie_cycles, "kind=0x1,ep=?");
PMU_EVENT_ATTR_STRING(dma_cycles, ndk_tlm_ev_dma_cycles, "kind=0x2,ep=?");
PMU_EVENT_ATTR_STRING(words, ndk_tlm_ev_words, "kind=0x3,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(stall, ndk_tlm_ev_stall, "kind=0x4,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(frames, ndk_tlm_ev_frames, "kind=0x5,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(mvb_items, ndk_tlm_ev_mvb_items, "kind=0x6,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(mvb_stall, ndk_tlm_ev_mvb_stall, "kind=0x7,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(items, ndk_tlm_ev_items, "kind=0x8,ep=?,bus=?");
PMU_EVENT_ATTR_STRING(region, ndk_tlm_ev_region, "kind=0x9,ep=?,bus=?,idx=?");
PMU_EVENT_ATTR_STRING(brake, ndk_tlm_ev_brake, "kind=0xa,ep=?,idx=?");
PMU_EVENT_ATTR_STRING(tags_band, ndk_tlm_ev_tags_band, "kind=0xb,ep=?,idx=?");
PMU_EVENT_ATTR_STRING(stfifo_band, ndk_tlm_ev_stfifo_band, "kind=0xc,ep=?,idx=?");
PMU_EVENT_ATTR_STRING(raw, ndk_tlm_ev_raw, "kind=0xd,idx=?");
PMU_EVENT_ATTR_STRING(snapshot_ns, ndk_tlm_ev_snapshot_ns, "kind=0xe");

static struct perf_pmu_events_attr ndk_tlm_ev_snapshot_ns_unit = {
	.attr = {
		.attr = { .name = "snapshot_ns.unit", .mode = 0444 },
		.show = perf_event_sysfs_show,
	},
	.event_str = "ns",
};

/* in enum ndk_tlm_kind order: entry i is kind i + 1 */
static struct attribute *ndk_tlm_event_attrs[] = {
	&ndk_tlm_ev_pcie_cycles.attr.attr,
	&ndk_tlm_ev_dma_cycles.attr.attr,
	&ndk_tlm_ev_words.attr.attr,
	&ndk_tlm_ev_stall.attr.attr,
	&ndk_tlm_ev_frames.attr.attr,
	&ndk_tlm_ev_mvb_items.attr.attr,
	&ndk_tlm_ev_mvb_stall.attr.attr,
	&ndk_tlm_ev_items.attr.attr,
	&ndk_tlm_ev_region.attr.attr,
	&ndk_tlm_ev_brake.attr.attr,
	&ndk_tlm_ev_tags_band.attr.attr,
	&ndk_tlm_ev_stfifo_band.attr.attr,
	&ndk_tlm_ev_raw.attr.attr,
	&ndk_tlm_ev_snapshot_ns.attr.attr,
	&ndk_tlm_ev_snapshot_ns_unit.attr.attr,
	NULL,
};

/* hide the histogram kinds a layout does not have */
static umode_t ndk_tlm_event_visible(struct kobject *kobj,
				     struct attribute *attr, int i)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(kobj_to_dev(kobj)));

	if (i == TLM_K_TAGS_BAND - 1 && tlm->lay.hist_pcie < 1)
		return 0;
	if (i == TLM_K_STFIFO_BAND - 1 && tlm->lay.hist_pcie < 2)
		return 0;
	if (i == TLM_K_BRAKE - 1 && !tlm->lay.brake_reasons)
		return 0;
	return attr->mode;
}

static const struct attribute_group ndk_tlm_events_group = {
	.name = "events",
	.attrs = ndk_tlm_event_attrs,
	.is_visible = ndk_tlm_event_visible,
};

/* caps/: one field of struct ndk_tlm_layout each, by its offset */
static ssize_t ndk_tlm_cap_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(dev));
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute,
						    attr);
	const u32 *field = (const void *)&tlm->lay + (uintptr_t)ea->var;

	return sysfs_emit(buf, "%u\n", *field);
}

/* a u32 field of struct ndk_tlm_layout (all of its fields are u32) */
#define TLM_CAP(_name)							\
	(&((struct dev_ext_attribute[]) {				\
		{ { .attr = { .name = __stringify(_name), .mode = 0444 },	\
		    .show = ndk_tlm_cap_show },				\
		  (void *)offsetof(struct ndk_tlm_layout, _name) }	\
	})[0].attr.attr)

static struct attribute *ndk_tlm_caps_attrs[] = {
	TLM_CAP(endpoints),
	TLM_CAP(dma_ports),
	TLM_CAP(probes),
	TLM_CAP(entries),
	TLM_CAP(cnt_width),
	TLM_CAP(counters_per_ep),
	TLM_CAP(pcie_channels),
	TLM_CAP(pcie_buses),
	TLM_CAP(pcie_regions),
	TLM_CAP(brake_channels),
	TLM_CAP(dma_channels),
	TLM_CAP(dma_buses),
	TLM_CAP(dma_regions),
	TLM_CAP(regions_rq),
	TLM_CAP(regions_rc),
	TLM_CAP(regions_up),
	TLM_CAP(regions_down),
	TLM_CAP(bytes_rq),
	TLM_CAP(bytes_rc),
	TLM_CAP(bytes_up),
	TLM_CAP(bytes_down),
	TLM_CAP(item_bytes),
	TLM_CAP(hist_bands),
	TLM_CAP(hist_pcie),
	TLM_CAP(hist_dma),
	TLM_CAP(tag_capacity),
	TLM_CAP(stfifo_capacity),
	TLM_CAP(drain_period),
	NULL,
};

static const struct attribute_group ndk_tlm_caps_group = {
	.name = "caps",
	.attrs = ndk_tlm_caps_attrs,
};

static const struct attribute_group *ndk_tlm_groups[] = {
	&ndk_tlm_attr_group,
	&ndk_tlm_format_group,
	&ndk_tlm_events_group,
	&ndk_tlm_caps_group,
	NULL,
};

static void ndk_tlm_move(struct ndk_tlm *tlm, unsigned int from,
			 unsigned int to);

/* ------------------------------------------------------------------ */
/* probe                                                              */

/*
 * Owner CPU: an online CPU of the device's NUMA node when it has one
 * (@prefer if it is such a CPU), else @prefer or any online CPU; never
 * @but. nr_cpu_ids when there is none.
 */
static unsigned int ndk_tlm_pick_cpu(struct ndk_tlm *tlm, unsigned int prefer,
				     unsigned int but)
{
	int node = dev_to_node(tlm->dev);
	unsigned int cpu;

	if (node != NUMA_NO_NODE) {
		if (prefer < nr_cpu_ids && prefer != but &&
		    cpu_online(prefer) && cpu_to_node(prefer) == node)
			return prefer;
		for_each_cpu_and(cpu, cpumask_of_node(node), cpu_online_mask)
			if (cpu != but)
				return cpu;
	}
	if (prefer < nr_cpu_ids && prefer != but && cpu_online(prefer))
		return prefer;
	if (but >= nr_cpu_ids)
		return cpumask_any(cpu_online_mask);
	return cpumask_any_but(cpu_online_mask, but);
}

static int ndk_tlm_decode(struct ndk_tlm *tlm)
{
	struct ndk_tlm_layout *l = &tlm->lay;
	const struct hwtel_io *io = &tlm->io;
	u32 v, pcie_need, dma_need;

	v = hwtel_readl(io, NDK_TLM_CFG_TOPOLOGY);
	l->endpoints = v & 0xff;
	l->dma_ports = (v >> 8) & 0xff;
	l->probes = (v >> 16) & 0xff;
	v = hwtel_readl(io, NDK_TLM_CFG_LAYOUT);
	l->entries = v & 0xffff;
	l->cnt_width = (v >> 16) & 0xff;
	l->counters_per_ep = v >> 24;
	v = hwtel_readl(io, NDK_TLM_CFG_PCIE);
	l->pcie_channels = v & 0xff;
	l->pcie_buses = (v >> 8) & 0xff;
	l->pcie_regions = (v >> 16) & 0xff;
	l->brake_channels = v >> 24;
	v = hwtel_readl(io, NDK_TLM_CFG_DMA);
	l->dma_channels = v & 0xff;
	l->dma_buses = (v >> 8) & 0xff;
	l->dma_regions = (v >> 16) & 0xff;
	v = hwtel_readl(io, NDK_TLM_CFG_DRAIN);
	l->drain_period = v & 0xffff;
	l->item_bytes = (v >> 16) & 0xff;
	l->cnt_base = hwtel_readl(io, NDK_TLM_CNT_BASE);
	v = hwtel_readl(io, NDK_TLM_CFG_REGIONS);
	l->regions_rq = v & 0xff;
	l->regions_rc = (v >> 8) & 0xff;
	l->regions_up = (v >> 16) & 0xff;
	l->regions_down = v >> 24;
	v = hwtel_readl(io, NDK_TLM_CFG_WIDTH);
	l->bytes_rq = v & 0xffff;
	l->bytes_rc = v >> 16;
	v = hwtel_readl(io, NDK_TLM_CFG_HIST);
	l->hist_bands = v & 0xff;
	l->hist_pcie = (v >> 8) & 0xff;
	l->hist_dma = (v >> 16) & 0xff;
	v = hwtel_readl(io, NDK_TLM_CFG_CAPACITY);
	l->tag_capacity = v & 0xffff;
	l->stfifo_capacity = v >> 16;
	v = hwtel_readl(io, NDK_TLM_CFG_WIDTH_DMA);
	l->bytes_up = v & 0xffff;
	l->bytes_down = v >> 16;

	l->entries_used = l->endpoints * l->counters_per_ep;
	pcie_need = 1 + l->pcie_buses * (TLM_BUS_FIELDS + l->pcie_regions) +
		    l->brake_channels;
	dma_need = 1 + l->dma_buses * (TLM_BUS_FIELDS + l->dma_regions);

	if (l->endpoints < 1 || l->endpoints > NDK_TLM_MAX_EPS ||
	    l->probes != 2 * l->endpoints || l->pcie_buses != 2 ||
	    l->dma_buses != 2 * l->dma_ports) {
		dev_err(tlm->dev, "inconsistent topology: %u endpoints, %u DMA ports, %u probes, %u/%u buses\n",
			l->endpoints, l->dma_ports, l->probes, l->pcie_buses,
			l->dma_buses);
		return -ENODEV;
	}
	if (l->cnt_width < 33 || l->cnt_width > 64) {
		dev_err(tlm->dev, "counter width %u outside 33..64\n",
			l->cnt_width);
		return -ENODEV;
	}
	if (l->pcie_channels != pcie_need || l->dma_channels != dma_need ||
	    l->counters_per_ep < l->pcie_channels + l->dma_channels ||
	    l->entries < l->entries_used ||
	    l->hist_pcie * l->hist_bands > l->brake_channels ||
	    l->regions_rq > l->pcie_regions || l->regions_rc > l->pcie_regions ||
	    l->regions_up > l->dma_regions || l->regions_down > l->dma_regions) {
		dev_err(tlm->dev, "inconsistent counter layout: channels %u/%u per probe, %u per endpoint, %u entries\n",
			l->pcie_channels, l->dma_channels, l->counters_per_ep,
			l->entries);
		return -ENODEV;
	}
	l->brake_reasons = l->brake_channels - l->hist_pcie * l->hist_bands;
	tlm->cnt_mask = GENMASK_ULL(l->cnt_width - 1, 0);
	return 0;
}

static void ndk_tlm_free(struct ndk_tlm *tlm)
{
	free_percpu(tlm->pcpu);
	bitmap_free(tlm->late);
	kfree(tlm->entries);
	kfree(tlm->name);
	if (tlm->win.pci[0])
		put_device(tlm->dev);
	kfree(tlm);
}

#ifdef HWTEL_PMU_REVOKES
/* Since 6.15 perf_pmu_unregister() revokes the open events and waits. */
static void ndk_tlm_retire(struct ndk_tlm *tlm)
{
	perf_pmu_unregister(&tlm->pmu);
	ndk_tlm_free(tlm);
}

static int ndk_tlm_reap(struct device *dev, const char *name)
{
	return 0;
}

static void ndk_tlm_reap_all(void)
{
}

static void ndk_tlm_set_exiting(void)
{
}
#else
/*
 * Whether the perf core is done with every PMU of this module. Each event
 * holds a module reference from before ->event_init() until the core's
 * last use of its PMU (module_put(event->pmu->module) in __free_event() is
 * its last access), and nothing else takes one: no reference means no
 * event, open or being freed, of any of our PMUs.
 */
static bool ndk_tlm_exiting;

static bool ndk_tlm_unused(void)
{
	/* module exit: the refcount is no longer a count; none is left */
	if (ndk_tlm_exiting)
		return true;
#ifdef CONFIG_MODULE_UNLOAD
	if (module_refcount(THIS_MODULE))
		return false;
	/* order the frees that follow after the core's last accesses */
	smp_mb();
	return true;
#else
	return false;	/* no module_put() ordering: keep them for good */
#endif
}

/*
 * Removal while the core may still use the PMU: it stays registered,
 * frozen (@dead: nothing reads the hardware, new events are refused),
 * until ndk_tlm_reap() or module exit.
 */
static void ndk_tlm_retire(struct ndk_tlm *tlm)
{
	mutex_lock(&ndk_tlm_dead_lock);
	if (ndk_tlm_unused()) {
		mutex_unlock(&ndk_tlm_dead_lock);
		perf_pmu_unregister(&tlm->pmu);
		ndk_tlm_free(tlm);
		return;
	}
	dev_info(tlm->dev, "%s: device removed while perf events of this module are open: the PMU stays, frozen, until they are closed and the name is attached again, or the module is unloaded\n",
		 tlm->name);
	list_add_tail(&tlm->dead_node, &ndk_tlm_dead);
	mutex_unlock(&ndk_tlm_dead_lock);
}

/*
 * Unregister and free the PMUs of removed devices once no event of this
 * module is left. Then -EBUSY if one still holds @name.
 */
static int ndk_tlm_reap(struct device *dev, const char *name)
{
	struct ndk_tlm *old, *tmp;
	int ret = 0;

	mutex_lock(&ndk_tlm_dead_lock);
	if (!list_empty(&ndk_tlm_dead) && ndk_tlm_unused()) {
		list_for_each_entry_safe(old, tmp, &ndk_tlm_dead, dead_node) {
			list_del(&old->dead_node);
			perf_pmu_unregister(&old->pmu);
			ndk_tlm_free(old);
		}
	}
	list_for_each_entry(old, &ndk_tlm_dead, dead_node) {
		if (name && !strcmp(old->name, name)) {
			dev_err(dev, "%s: the PMU of a removed device still holds this name: perf events of ndk_pcie_tlm are open\n",
				name);
			ret = -EBUSY;
			break;
		}
	}
	mutex_unlock(&ndk_tlm_dead_lock);
	return ret;
}

static void ndk_tlm_reap_all(void)
{
	ndk_tlm_reap(NULL, NULL);
	WARN_ON(!list_empty(&ndk_tlm_dead));
}

static void ndk_tlm_set_exiting(void)
{
	mutex_lock(&ndk_tlm_dead_lock);
	ndk_tlm_exiting = true;
	mutex_unlock(&ndk_tlm_dead_lock);
}
#endif

/*
 * End an instance made by ndk_tlm_create(). Nothing touches the hardware
 * after this, so the caller may unmap the window right after: every access
 * is under the lock, ordered before @dead.
 */
void ndk_tlm_destroy(struct ndk_tlm *tlm)
{
	ndk_tlm_lab_del(tlm);
	ndk_tlm_nl_del(tlm);
	hrtimer_cancel(&tlm->poller);
	/* the timer queued it: it cannot be queued again */
	cancel_work_sync(&tlm->fold_work);
	cpuhp_state_remove_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	ndk_tlm_lock_irq(tlm);
	WRITE_ONCE(tlm->dead, true);
	ndk_tlm_unlock_irq(tlm);
	/*
	 * Against ->event_init(): the core takes the module reference, then
	 * we read @dead. Order the store of @dead before retire() reads the
	 * reference count, so that one of the two sees the other.
	 */
	smp_mb();
	ndk_tlm_retire(tlm);
}

/*
 * Make a PMU instance on a mapped window of @size bytes: @io reaches its
 * registers, @base_addr is its bus address (for DEV_GET), @dev its parent
 * device, @name (NULL: ndk_pcie_tlm_<base_addr>) its PMU name, @win (or
 * NULL) where it was attached, for the control plane. Nothing here
 * is devres: the caller ends it with ndk_tlm_destroy() before it unmaps
 * the window. A window without a usable block is refused with -ENODEV and
 * a message naming what is wrong.
 */
struct ndk_tlm *ndk_tlm_create(struct device *dev, const struct hwtel_io *io,
			       u64 base_addr, u64 size, const char *name,
			       const struct ndk_tlm_win *win)
{
	struct ndk_tlm *tlm;
	unsigned long flags;
	u32 magic, ver, i;
	unsigned int cpu;
	int ret;

	tlm = kzalloc(sizeof(*tlm), GFP_KERNEL);
	if (!tlm)
		return ERR_PTR(-ENOMEM);
	tlm->dev = dev;
	tlm->io = *io;
	tlm->base_addr = base_addr;
	if (win)
		tlm->win = *win;
	/* an attached window's state outlives its DETACH if events are open */
	if (tlm->win.pci[0])
		get_device(dev);
	raw_spin_lock_init(&tlm->lock);
	INIT_LIST_HEAD(&tlm->list);

	magic = hwtel_readl(&tlm->io, NDK_TLM_MAGIC);
	if (magic != NDK_TLM_MAGIC_VALUE) {
		/*
		 * Not the word read: a window that is not the block may map
		 * anything, and repeated attaches would read it out.
		 */
		dev_err(dev, "MAGIC does not match: not a PCIE_TELEMETRY_MI block at 0x%llx\n",
			(unsigned long long)base_addr);
		ret = -ENODEV;
		goto err;
	}
	ver = hwtel_readl(&tlm->io, NDK_TLM_VERSION);
	tlm->lay.version_major = ver >> 16;
	tlm->lay.version_minor = ver & 0xffff;
	if (tlm->lay.version_major != NDK_TLM_MAJOR) {
		dev_err(dev, "PCIE_TELEMETRY_MI version %u.%u not supported (major must be %u)\n",
			tlm->lay.version_major, tlm->lay.version_minor,
			NDK_TLM_MAJOR);
		ret = -ENODEV;
		goto err;
	}
	ret = ndk_tlm_decode(tlm);
	if (ret)
		goto err;
	tlm->busy_us = ndk_tlm_busy_bound_us(&tlm->lay);
	tlm->snap_gap_ns = ndk_tlm_snap_gap_ns(&tlm->lay);
	if (!IS_ALIGNED(tlm->lay.cnt_base, 8) ||
	    (u64)tlm->lay.cnt_base + 8ULL * tlm->lay.entries_used > size) {
		dev_err(dev, "counter window at 0x%x (%u entries) does not fit the 0x%llx bytes at 0x%llx\n",
			tlm->lay.cnt_base, tlm->lay.entries_used,
			(unsigned long long)size, (unsigned long long)base_addr);
		ret = -ENODEV;
		goto err;
	}

	/* the used entries and TLM_SNAP_ENTRY() */
	tlm->entries = kcalloc(tlm->lay.entries_used + 1, sizeof(*tlm->entries),
			       GFP_KERNEL);
	if (name)
		tlm->name = kstrdup(name, GFP_KERNEL);
	else
		tlm->name = kasprintf(GFP_KERNEL, "ndk_pcie_tlm_%llx",
				      (unsigned long long)tlm->base_addr);
	tlm->late = bitmap_zalloc(tlm->lay.entries_used + 1, GFP_KERNEL);
	tlm->pcpu = alloc_percpu(struct ndk_tlm_pcpu);
	if (!tlm->entries || !tlm->name || !tlm->late || !tlm->pcpu) {
		ret = -ENOMEM;
		goto err;
	}
	ret = ndk_tlm_reap(dev, tlm->name);
	if (ret)
		goto err;

	/* the window shows the snapshot copy; start from what it holds */
	hwtel_writel(&tlm->io, 0, NDK_TLM_READ_SEL);
	ndk_tlm_lock_irqsave(tlm, flags);
	ret = ndk_tlm_snapshot(tlm);
	for (i = 0; !ret && i < tlm->lay.entries_used; i++)
		ndk_tlm_entry_update(tlm, i);
	ndk_tlm_unlock_irqrestore(tlm, flags);
	if (ret) {
		dev_err(dev, "first SNAPSHOT did not complete\n");
		ret = -EIO;
		goto err;
	}

	tlm->poll_ns = ndk_tlm_poll_period(tlm);
	tlm->tick_ns = max_t(u64, flags_poll_ms, 1) * NSEC_PER_MSEC;
	/*
	 * A soft timer: nothing cancels it with interrupts off (pmu->del does
	 * not touch it), and its callback sends netlink messages, which an RT
	 * kernel cannot do from hard interrupt context.
	 */
	hrtimer_setup(&tlm->poller, ndk_tlm_poll, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
	INIT_WORK(&tlm->fold_work, ndk_tlm_fold_work);

	tlm->pmu = (struct pmu) {
		.module		= THIS_MODULE,
		.task_ctx_nr	= perf_invalid_context,
		.capabilities	= PERF_PMU_CAP_NO_EXCLUDE,
		.attr_groups	= ndk_tlm_groups,
		.event_init	= ndk_tlm_event_init,
		.add		= ndk_tlm_add,
		.del		= ndk_tlm_del,
		.start		= ndk_tlm_start,
		.stop		= ndk_tlm_stop,
		.read		= ndk_tlm_read,
		.pmu_enable	= ndk_tlm_pmu_enable,
		.pmu_disable	= ndk_tlm_pmu_disable,
		.start_txn	= ndk_tlm_start_txn,
		.commit_txn	= ndk_tlm_commit_txn,
		.cancel_txn	= ndk_tlm_cancel_txn,
	};
	hwtel_pmu_set_parent(&tlm->pmu, dev);

	/*
	 * Register the PMU first, then the hotplug instance (and remove in the
	 * reverse order): a hotplug callback only ever migrates a registered
	 * PMU. 6.1's perf_pmu_unregister() frees the CPU contexts that
	 * perf_pmu_migrate_context() uses.
	 */
	cpu = ndk_tlm_pick_cpu(tlm, raw_smp_processor_id(), nr_cpu_ids);
	tlm->cpu = ndk_tlm_lab_first_owner(cpu);
	ret = perf_pmu_register(&tlm->pmu, tlm->name, -1);
	if (ret)
		goto err;
	ret = cpuhp_state_add_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	if (ret) {
		perf_pmu_unregister(&tlm->pmu);
		goto err;
	}
	/*
	 * Until the instance was added, no hotplug callback saw this PMU: the
	 * owner may have gone offline, or a CPU of the device's node come
	 * online, since it was picked. Pick again with hotplug held off.
	 * Events opened meanwhile are on the owner: the core turned them off
	 * if it went offline, and they move with ndk_tlm_move() if not.
	 */
	cpus_read_lock();
	if (!cpu_online(tlm->cpu)) {
		WRITE_ONCE(tlm->cpu, ndk_tlm_pick_cpu(tlm, nr_cpu_ids, nr_cpu_ids));
	} else {
		cpu = ndk_tlm_pick_cpu(tlm, tlm->cpu, nr_cpu_ids);
		if (cpu != tlm->cpu)
			ndk_tlm_move(tlm, tlm->cpu, cpu);
	}
	cpus_read_unlock();
	tlm->next_poll = ktime_add_ns(ktime_get(), tlm->poll_ns);
	tlm->next_listen = ktime_add_ns(ktime_get(), TLM_LISTEN_CHECK_NS);
	tlm->next_flags = tlm->next_listen;
	hrtimer_start(&tlm->poller, ktime_before(tlm->next_listen, tlm->next_poll) ?
		      tlm->next_listen : tlm->next_poll, HRTIMER_MODE_ABS_SOFT);
	ndk_tlm_nl_add(tlm);
	ndk_tlm_lab_add(tlm);

	dev_info(dev, "%s: version %u.%u, %u endpoint(s), %u DMA port(s), %u counters of %u bits, poll %llu ms\n",
		 tlm->name, tlm->lay.version_major, tlm->lay.version_minor,
		 tlm->lay.endpoints, tlm->lay.dma_ports, tlm->lay.entries_used,
		 tlm->lay.cnt_width, div_u64(tlm->poll_ns, NSEC_PER_MSEC));
	return tlm;

err:
	ndk_tlm_free(tlm);
	return ERR_PTR(ret);
}

static void ndk_tlm_destroy_action(void *data)
{
	ndk_tlm_destroy(data);
}

static int ndk_tlm_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct hwtel_io io = { };
	struct resource *res;
	struct ndk_tlm *tlm;

	/* devres: unmapped after ndk_tlm_destroy_action() ran */
	res = hwtel_io_map(pdev, &io);
	if (IS_ERR(res))
		return PTR_ERR(res);
	tlm = ndk_tlm_create(dev, &io, res->start, resource_size(res), NULL,
			     NULL);
	if (IS_ERR(tlm))
		return PTR_ERR(tlm);
	platform_set_drvdata(pdev, tlm);
	return devm_add_action_or_reset(dev, ndk_tlm_destroy_action, tlm);
}

/* ------------------------------------------------------------------ */
/* CPU hotplug                                                        */

/*
 * Move the events from the owner @from to @to. They stop on @from without
 * a SNAPSHOT and start on @to without a new base (TLM_F_MOVED): the
 * device's counters are not the CPU's and never stopped, so the events
 * count on exactly, and a running group stays one instant. @moving is
 * @from's: the core's removal of the events runs there (an IPI when this
 * runs elsewhere, which orders the store before it), and no other stop can
 * come between: the core holds the context's mutex for the whole move and
 * never rotates this PMU's events (ndk_tlm_event_init()). Called with the
 * CPU hotplug lock held: from a hotplug callback, or at probe.
 */
static void ndk_tlm_move(struct ndk_tlm *tlm, unsigned int from,
			 unsigned int to)
{
	struct ndk_tlm_pcpu *pc = per_cpu_ptr(tlm->pcpu, from);

	WRITE_ONCE(pc->moving, true);
	perf_pmu_migrate_context(&tlm->pmu, from, to);
	WRITE_ONCE(pc->moving, false);
	WRITE_ONCE(tlm->cpu, to);
}

/*
 * A CPU goes offline (this runs on it). The owner's events move to another
 * CPU (never nr_cpu_ids: the last CPU does not go offline). Another CPU may
 * hold events too: an event whose event_init read the owner just before a
 * return move (ndk_tlm_cpu_online()) is installed on the old owner after
 * it; they join the owner, or the core would turn them off.
 */
static int ndk_tlm_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);
	unsigned int to = tlm->cpu;

	if (cpu == to)
		to = ndk_tlm_pick_cpu(tlm, nr_cpu_ids, cpu);
	ndk_tlm_move(tlm, cpu, to);
	return 0;
}

/*
 * A CPU of the device's node comes online (this runs on it) while the
 * owner is elsewhere, all of the node's CPUs having gone: the PMU returns.
 */
static int ndk_tlm_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);
	int nid = dev_to_node(tlm->dev);

	if (nid != NUMA_NO_NODE && cpu_to_node(cpu) == nid &&
	    cpu_to_node(tlm->cpu) != nid)
		ndk_tlm_move(tlm, tlm->cpu, cpu);
	return 0;
}

static const struct of_device_id ndk_tlm_of_match[] = {
	{ .compatible = "cesnet,ofm,pcie_telemetry_mi" },
	{ }
};
MODULE_DEVICE_TABLE(of, ndk_tlm_of_match);

#ifdef HWTEL_LAB
/* Devices of the hardware model (drivers/hwsim/hwtel_sim_pcie.c) */
static const struct platform_device_id ndk_tlm_id_table[] = {
	{ .name = "ndk-pcie-tlm-sim" },
	{ }
};
MODULE_DEVICE_TABLE(platform, ndk_tlm_id_table);
#define NDK_TLM_ID_TABLE ndk_tlm_id_table
#else
#define NDK_TLM_ID_TABLE NULL	/* hardware flavour: OF only */
#endif

static struct platform_driver ndk_tlm_driver = {
	.driver = {
		.name = "ndk-pcie-tlm",
		.of_match_table = ndk_tlm_of_match,
	},
	.probe = ndk_tlm_probe,
	.id_table = NDK_TLM_ID_TABLE,
};

static int __init ndk_tlm_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN,
				      "perf/ndk_pcie_tlm:online",
				      ndk_tlm_cpu_online, ndk_tlm_cpu_offline);
	if (ret < 0)
		return ret;
	ndk_tlm_hp_state = ret;
	ndk_tlm_lab_init();

	ret = ndk_tlm_nl_init();
	if (ret)
		goto err_hp;
	ret = ndk_tlm_pci_init();
	if (ret)
		goto err_nl;
	ret = platform_driver_register(&ndk_tlm_driver);
	if (ret)
		goto err_pci;
	return 0;

err_pci:
	ndk_tlm_pci_exit();
err_nl:
	ndk_tlm_nl_exit();
err_hp:
	ndk_tlm_lab_exit();
	cpuhp_remove_multi_state(ndk_tlm_hp_state);
	return ret;
}

static void __exit ndk_tlm_exit(void)
{
	/* no event is left: each holds the module */
	ndk_tlm_set_exiting();
	platform_driver_unregister(&ndk_tlm_driver);
	ndk_tlm_pci_exit();
	ndk_tlm_reap_all();
	ndk_tlm_nl_exit();
	ndk_tlm_lab_exit();
	cpuhp_remove_multi_state(ndk_tlm_hp_state);
}

module_init(ndk_tlm_init);
module_exit(ndk_tlm_exit);

MODULE_DESCRIPTION("perf PMU for the CESNET NDK PCIE_TELEMETRY_MI block");
MODULE_LICENSE("GPL");
