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
 * Batching: operations that the perf core brackets with pmu_disable() /
 * pmu_enable() (a group scheduled in or out) and the members of a group read
 * (PERF_PMU_TXN_READ) are queued per CPU and served from one SNAPSHOT, so a
 * group always sees one consistent instant.
 */

#define pr_fmt(fmt) "ndk_pcie_tlm: " fmt

#include <linux/bitfield.h>
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
#include <linux/wait_bit.h>

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
};

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

static unsigned int busy_timeout_us = 1000;
module_param(busy_timeout_us, uint, 0444);
MODULE_PARM_DESC(busy_timeout_us, "Longest wait for STATUS.BUSY to fall after SNAPSHOT, us (at most 10000)");

/* the BUSY wait runs with interrupts off: never longer than this */
#define TLM_BUSY_MAX_US		10000

/* without a netlink listener, look for one this often (or at the poll) */
#define TLM_LISTEN_CHECK_NS	(1ULL * NSEC_PER_SEC)

/* longest poll period even for very wide counters */
#define TLM_POLL_MAX_NS		(3600ULL * NSEC_PER_SEC)
#define TLM_POLL_MIN_NS		(1ULL * NSEC_PER_MSEC)

/*
 * per-CPU queue of operations served from one snapshot; a longer batch (a
 * context with more than this many events being rescheduled) takes more
 * snapshots and may then split a group over two of them; counts stay exact
 */
#define TLM_QLEN		256

/* largest group (members of any PMU) accepted at event_init */
#define TLM_GROUP_MAX		TLM_QLEN

/* hw_perf_event::flags of our events */
#define TLM_F_NOBASE		BIT(0)	/* started, no snapshot taken since */
#define TLM_F_MOVED		BIT(1)	/* stopped by an owner CPU move */

enum ndk_tlm_op {
	TLM_OP_START,
	TLM_OP_UPDATE,		/* pmu->read of a running event */
	TLM_OP_STOP,		/* the update of pmu->stop */
	TLM_OP_LATE_START,	/* deferred start: base at the next SNAPSHOT */
};

/* why operations are held back on this CPU */
#define TLM_HOLD_DISABLED	BIT(0)	/* between pmu_disable() and pmu_enable() */
#define TLM_HOLD_ADD		BIT(1)	/* inside a PERF_PMU_TXN_ADD */
#define TLM_HOLD_READ		BIT(2)	/* inside a PERF_PMU_TXN_READ */
#define TLM_HOLD_MIGRATE	BIT(3)	/* the owner CPU is moving away */

struct ndk_tlm_pcpu {
	unsigned int hold;
	unsigned int txn_flags;
	unsigned int n;
	struct perf_event *ev[TLM_QLEN];
	u8 op[TLM_QLEN];
};

static enum cpuhp_state ndk_tlm_hp_state;

/*
 * PMUs whose device went away while events were open: registered, frozen
 * (no hardware access), freed by ndk_tlm_gone() once the last event is gone.
 */
static LIST_HEAD(ndk_tlm_dead);
static DEFINE_MUTEX(ndk_tlm_dead_lock);

/* after the last event's destroy, until the perf core is done with it */
#define TLM_GONE_DELAY		HZ

#define to_tlm(p) container_of(p, struct ndk_tlm, pmu)

/* ------------------------------------------------------------------ */
/* hardware access; all called with tlm->lock held                    */

static void ndk_tlm_apply(struct ndk_tlm *tlm, struct perf_event *event,
			  u8 op, bool fresh);

/*
 * Wait, bounded in time, for STATUS.BUSY to fall: 0, -ETIMEDOUT, or
 * -ENODEV when the device does not answer. A PCIe read nobody completes
 * (a surprise link-down, a removed card) returns all ones; STATUS all
 * ones has BUSY set, so it is confirmed on MAGIC, a constant that is never
 * all ones, rather than waited out in every operation.
 */
static int ndk_tlm_wait_idle(struct ndk_tlm *tlm)
{
	ktime_t end = ktime_add_us(ktime_get(),
				   min(busy_timeout_us, TLM_BUSY_MAX_US));
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

/*
 * A SNAPSHOT timed out earlier and BUSY has now fallen: the window holds the
 * copy taken at that command. Serve the operations deferred at the timeout
 * from it: a start deferred by that very command gets its exact base, an
 * update or stop counts up to that instant (never past it). Starts deferred
 * while that copy was already pending must not take an older base: they
 * stay for the next SNAPSHOT (TLM_OP_LATE_START).
 */
static void ndk_tlm_resolve(struct ndk_tlm *tlm)
{
	unsigned int i, n = 0;

	tlm->pending = false;
	tlm->gen++;
	for (i = 0; i < tlm->ndefer; i++) {
		if (tlm->defer_op[i] == TLM_OP_LATE_START) {
			tlm->defer_ev[n] = tlm->defer_ev[i];
			tlm->defer_op[n++] = TLM_OP_LATE_START;
			continue;
		}
		ndk_tlm_apply(tlm, tlm->defer_ev[i], tlm->defer_op[i], true);
	}
	tlm->ndefer = n;
}

/* After a successful SNAPSHOT: base the starts that had none. */
static void ndk_tlm_resolve_late(struct ndk_tlm *tlm)
{
	unsigned int i;

	for (i = 0; i < tlm->ndefer; i++)
		ndk_tlm_apply(tlm, tlm->defer_ev[i], TLM_OP_START, true);
	tlm->ndefer = 0;
}

/*
 * SNAPSHOT handshake. Only one SNAPSHOT is ever outstanding: after a
 * timeout the copy of that command is awaited (and used, see
 * ndk_tlm_resolve()) before a new one is written, so a late copy is never
 * restarted or mistaken for a newer instant.
 */
static int ndk_tlm_snapshot(struct ndk_tlm *tlm)
{
	int ret;

	lockdep_assert_held(&tlm->lock);

	/* set when the copy now pending was written by this call */
	tlm->pending_own = false;
	if (tlm->pending) {
		ret = ndk_tlm_wait_idle(tlm);
		if (ret)
			return ret;
		ndk_tlm_resolve(tlm);
	}
	hwtel_writel(&tlm->io, NDK_TLM_CMD_SNAPSHOT, NDK_TLM_COMMAND);
	/* BUSY is not visible on a STATUS read right after the write */
	hwtel_readl(&tlm->io, NDK_TLM_MAGIC);
	ret = ndk_tlm_wait_idle(tlm);
	if (ret == -ENODEV) {
		/* no copy is under way: nothing is pending */
		dev_err_ratelimited(tlm->dev,
				    "the device does not answer (STATUS reads all ones)\n");
		return ret;
	}
	if (ret) {
		tlm->pending = true;
		tlm->pending_own = true;
		dev_err_ratelimited(tlm->dev,
				    "SNAPSHOT still BUSY after %u us, read deferred\n",
				    min(busy_timeout_us, TLM_BUSY_MAX_US));
		return ret;
	}
	tlm->gen++;
	tlm->snap_ns = ktime_get_ns();
	if (tlm->ndefer)
		ndk_tlm_resolve_late(tlm);
	return 0;
}

/* Keep an operation whose SNAPSHOT timed out for ndk_tlm_resolve(). */
static void ndk_tlm_defer(struct ndk_tlm *tlm, struct perf_event *event,
			  u8 op, bool own)
{
	struct hw_perf_event *hwc = &event->hw;
	int i;

	if (op == TLM_OP_START && !own) {
		/*
		 * Restarted after a stop served by the same pending copy (a
		 * context reschedule): drop the stop's update and let the
		 * event count on from its base, through the short gap.
		 */
		for (i = tlm->ndefer - 1; i >= 0; i--)
			if (tlm->defer_ev[i] == event)
				break;
		if (i >= 0 && (tlm->defer_op[i] == TLM_OP_UPDATE ||
			       tlm->defer_op[i] == TLM_OP_STOP)) {
			tlm->ndefer--;
			memmove(&tlm->defer_ev[i], &tlm->defer_ev[i + 1],
				(tlm->ndefer - i) * sizeof(tlm->defer_ev[0]));
			memmove(&tlm->defer_op[i], &tlm->defer_op[i + 1],
				(tlm->ndefer - i) * sizeof(tlm->defer_op[0]));
			return;
		}
		op = TLM_OP_LATE_START;
	}
	if (op == TLM_OP_START || op == TLM_OP_LATE_START)
		hwc->flags |= TLM_F_NOBASE;
	if (tlm->ndefer == TLM_DEFER_MAX) {
		dev_warn_ratelimited(tlm->dev, "too many reads deferred, counts may be short\n");
		return;
	}
	tlm->defer_ev[tlm->ndefer] = event;
	tlm->defer_op[tlm->ndefer++] = op;
}

/* Forget a destroyed event's deferred operations. */
static void ndk_tlm_undefer(struct ndk_tlm *tlm, struct perf_event *event)
{
	unsigned long flags;
	unsigned int i, n = 0;

	ndk_tlm_lock_irqsave(tlm, flags);
	for (i = 0; i < tlm->ndefer; i++) {
		if (tlm->defer_ev[i] == event)
			continue;
		tlm->defer_ev[n] = tlm->defer_ev[i];
		tlm->defer_op[n++] = tlm->defer_op[i];
	}
	tlm->ndefer = n;
	ndk_tlm_unlock_irqrestore(tlm, flags);
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

/* Fold @raw, entry @i of snapshot @gen, into its 64-bit total. */
static void ndk_tlm_entry_fold(struct ndk_tlm *tlm, u32 i, u64 raw, u32 gen)
{
	struct ndk_tlm_entry *e = &tlm->entries[i];

	if (e->gen == gen)
		return;
	e->acc += (raw - e->last_raw) & tlm->cnt_mask;
	e->last_raw = raw;
	e->gen = gen;
}

/* Fold entry @i of the current snapshot into its 64-bit total. */
static void ndk_tlm_entry_update(struct ndk_tlm *tlm, u32 i)
{
	if (tlm->entries[i].gen == tlm->gen)
		return;
	ndk_tlm_entry_fold(tlm, i, ndk_tlm_read_entry(tlm, i), tlm->gen);
}

/*
 * Read entries [@i, @end) of the snapshot copy with interrupts on and
 * without the lock, then fold them under the lock if the copy is still the
 * one of snapshot @gen (no SNAPSHOT completed or pending since). Without the
 * lock only the control plane and the poller read this way: the device is
 * not removed under them (removal takes the control plane's instance off
 * its list and cancels the poller before @dead).
 */
static void ndk_tlm_read_chunk(struct ndk_tlm *tlm, u32 i, u32 end, u64 *raw)
{
	for (; i < end; i++)
		*raw++ = ndk_tlm_read_entry(tlm, i);
}

static bool ndk_tlm_fold_chunk(struct ndk_tlm *tlm, u32 i, u32 end,
			       const u64 *raw, u32 gen)
{
	lockdep_assert_held(&tlm->lock);

	if (tlm->gen != gen || tlm->pending)
		return false;
	for (; i < end; i++)
		ndk_tlm_entry_fold(tlm, i, *raw++, gen);
	return true;
}

/* Fold every entry under the lock (probe, CLEAR: short or rare). */
static int ndk_tlm_update_all(struct ndk_tlm *tlm)
{
	u32 i;
	int ret;

	ret = ndk_tlm_snapshot(tlm);
	if (ret)
		return ret;
	for (i = 0; i < tlm->lay.entries_used; i++)
		ndk_tlm_entry_update(tlm, i);
	return 0;
}

#define TLM_FOLD_CHUNK		32
#define TLM_FOLD_TRIES		4	/* then the fold is exclusive */
#define TLM_FOLD_EXCL_TRIES	8	/* then -EAGAIN */

/* The handshake of a whole-window fold (its own function for the lab's hold times) */
static int ndk_tlm_fold_snapshot(struct ndk_tlm *tlm, bool excl, u32 *gen)
{
	unsigned long flags;
	int ret;

	ndk_tlm_lock_irqsave(tlm, flags);
	if (excl)
		tlm->fold_excl++;
	ret = ndk_tlm_snapshot(tlm);
	*gen = tlm->gen;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	return ret;
}

/*
 * Fold every entry from one SNAPSHOT with interrupts off only for the
 * handshake and the arithmetic of a chunk: each chunk of the window is read
 * with interrupts on (ndk_tlm_read_chunk()) and folded only if no other
 * SNAPSHOT came in between; else the fold starts again. After
 * TLM_FOLD_TRIES tries the fold is exclusive: perf reads of running events
 * are served from its snapshot instead of taking their own (ndk_tlm_flush())
 * and the poller folds from it too, so only starts and stops of events can
 * still interrupt it; after TLM_FOLD_EXCL_TRIES more it gives up with
 * -EAGAIN.
 * @vals, when given, gets acc - base of every entry, all of the same instant.
 * Callers: the control plane only (see ndk_tlm_read_chunk()).
 */
static int ndk_tlm_fold_all(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns,
			    bool rebase)
{
	u32 i, j, end, n = tlm->lay.entries_used, gen;
	u64 raw[TLM_FOLD_CHUNK];
	unsigned long flags;
	unsigned int tries;
	bool ok = false;
	int ret = 0;

	for (tries = 0; tries < TLM_FOLD_TRIES + TLM_FOLD_EXCL_TRIES; tries++) {
		ret = ndk_tlm_fold_snapshot(tlm, tries == TLM_FOLD_TRIES, &gen);
		if (ret)
			break;
		ok = !n;
		for (i = 0; i < n; i = end) {
			end = min(i + TLM_FOLD_CHUNK, n);
			ndk_tlm_read_chunk(tlm, i, end, raw);
			ndk_tlm_lock_irqsave(tlm, flags);
			ok = ndk_tlm_fold_chunk(tlm, i, end, raw, gen);
			for (j = i; ok && j < end; j++) {
				if (rebase)
					tlm->entries[j].base = tlm->entries[j].acc;
				if (vals)
					vals[j] = tlm->entries[j].acc -
						  tlm->entries[j].base;
			}
			if (ok && end == n && snap_ns)
				*snap_ns = tlm->snap_ns;
			ndk_tlm_unlock_irqrestore(tlm, flags);
			if (!ok)
				break;
		}
		if (ok)
			break;
		ret = -EAGAIN;
	}
	if (tries >= TLM_FOLD_TRIES) {
		ndk_tlm_lock_irqsave(tlm, flags);
		tlm->fold_excl--;
		ndk_tlm_unlock_irqrestore(tlm, flags);
	}
	return ret;
}

int ndk_tlm_totals(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns)
{
	return ndk_tlm_fold_all(tlm, vals, snap_ns, false);
}

/*
 * Software clear: every entry folded from one SNAPSHOT and its base set to
 * it, so the totals restart from zero exactly at that instant. Running perf
 * events are not affected (@acc goes on). The hardware is not cleared.
 */
int ndk_tlm_soft_clear(struct ndk_tlm *tlm)
{
	return ndk_tlm_fold_all(tlm, NULL, NULL, true);
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

static void ndk_tlm_apply(struct ndk_tlm *tlm, struct perf_event *event,
			  u8 op, bool fresh)
{
	struct hw_perf_event *hwc = &event->hw;
	struct ndk_tlm_entry *e = &tlm->entries[hwc->idx];
	u64 prev;

	if (!fresh) {
		/*
		 * No new snapshot. With a copy pending, ndk_tlm_resolve()
		 * serves the operation from it. With none (the device did not
		 * answer) the count and prev_count stay, and the next good
		 * snapshot catches up; only a start needs a base from it.
		 */
		if (!tlm->pending && op != TLM_OP_START)
			return;
		ndk_tlm_defer(tlm, event, op, tlm->pending_own);
		return;
	}
	ndk_tlm_entry_update(tlm, hwc->idx);

	if (op == TLM_OP_START) {
		hwc->flags &= ~TLM_F_NOBASE;
		local64_set(&hwc->prev_count, e->acc);
		return;
	}
	if (hwc->flags & TLM_F_NOBASE)
		return;		/* its start is still waiting for a base */
	prev = local64_read(&hwc->prev_count);
	local64_add(e->acc - prev, &event->count);
	local64_set(&hwc->prev_count, e->acc);
}

static bool ndk_tlm_reads_only(const struct ndk_tlm_pcpu *pc)
{
	unsigned int i;

	for (i = 0; i < pc->n; i++)
		if (pc->op[i] != TLM_OP_UPDATE)
			return false;
	return true;
}

/* Serve the queued operations of this CPU from one snapshot. */
static int ndk_tlm_flush(struct ndk_tlm *tlm, struct ndk_tlm_pcpu *pc)
{
	unsigned long flags;
	unsigned int i;
	int ret;

	if (!pc->n)
		return 0;

	ndk_tlm_lock_irqsave(tlm, flags);
	if (tlm->dead) {
		/* the device is gone: counts stay where they are */
		ndk_tlm_unlock_irqrestore(tlm, flags);
		pc->n = 0;
		return -ENODEV;
	}
	/*
	 * While the control plane folds the whole window exclusively, reads
	 * of running events come from its snapshot: the same instant for the
	 * group, their counts exact up to it and caught up by the next read.
	 * Starts and stops always take their own.
	 */
	ret = 0;
	if (!tlm->fold_excl || tlm->pending || !ndk_tlm_reads_only(pc))
		ret = ndk_tlm_snapshot(tlm);
	for (i = 0; i < pc->n; i++)
		ndk_tlm_apply(tlm, pc->ev[i], pc->op[i], !ret);
	ndk_tlm_unlock_irqrestore(tlm, flags);
	pc->n = 0;
	return ret;
}

static void ndk_tlm_queue(struct ndk_tlm *tlm, struct perf_event *event, u8 op)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);
	unsigned int need = 1;

	/* a group leader keeps room for its whole group: one snapshot */
	if (event->group_leader == event)
		need += event->nr_siblings;
	if (pc->n + need > TLM_QLEN)
		ndk_tlm_flush(tlm, pc);
	pc->ev[pc->n] = event;
	pc->op[pc->n] = op;
	pc->n++;
	if (!pc->hold)
		ndk_tlm_flush(tlm, pc);
}

static int ndk_tlm_release(struct ndk_tlm *tlm, unsigned int hold)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);

	pc->hold &= ~hold;
	/* a group read needs its values now, whatever else is pending */
	if (!pc->hold || hold == TLM_HOLD_READ)
		return ndk_tlm_flush(tlm, pc);
	return 0;
}

static void ndk_tlm_pmu_disable(struct pmu *pmu)
{
	this_cpu_ptr(to_tlm(pmu)->pcpu)->hold |= TLM_HOLD_DISABLED;
}

static void ndk_tlm_pmu_enable(struct pmu *pmu)
{
	ndk_tlm_release(to_tlm(pmu), TLM_HOLD_DISABLED);
}

static void ndk_tlm_start_txn(struct pmu *pmu, unsigned int txn_flags)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(to_tlm(pmu)->pcpu);

	pc->txn_flags = txn_flags;
	if (txn_flags & PERF_PMU_TXN_READ)
		pc->hold |= TLM_HOLD_READ;
	if (txn_flags & PERF_PMU_TXN_ADD)
		pc->hold |= TLM_HOLD_ADD;
}

static int ndk_tlm_end_txn(struct pmu *pmu)
{
	struct ndk_tlm *tlm = to_tlm(pmu);
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);
	unsigned int txn_flags = pc->txn_flags;

	pc->txn_flags = 0;
	if (txn_flags & PERF_PMU_TXN_READ)
		return ndk_tlm_release(tlm, TLM_HOLD_READ);
	/* a late snapshot must not fail scheduling; events start stale */
	if (txn_flags & PERF_PMU_TXN_ADD)
		ndk_tlm_release(tlm, TLM_HOLD_ADD);
	return 0;
}

static int ndk_tlm_commit_txn(struct pmu *pmu)
{
	return ndk_tlm_end_txn(pmu);
}

static void ndk_tlm_cancel_txn(struct pmu *pmu)
{
	ndk_tlm_end_txn(pmu);
}

static void ndk_tlm_read(struct perf_event *event)
{
	if (event->hw.state & PERF_HES_STOPPED)
		return;
	ndk_tlm_queue(to_tlm(event->pmu), event, TLM_OP_UPDATE);
}

static void ndk_tlm_start(struct perf_event *event, int flags)
{
	struct hw_perf_event *hwc = &event->hw;

	hwc->state = 0;
	/*
	 * Moved with the owner CPU: it counts on from its stop, which the
	 * move's one snapshot serves, so the whole group stays one instant.
	 */
	if (hwc->flags & TLM_F_MOVED) {
		hwc->flags &= ~TLM_F_MOVED;
		return;
	}
	ndk_tlm_queue(to_tlm(event->pmu), event, TLM_OP_START);
}

static void ndk_tlm_stop(struct perf_event *event, int flags)
{
	struct hw_perf_event *hwc = &event->hw;

	struct ndk_tlm *tlm = to_tlm(event->pmu);

	if (hwc->state & PERF_HES_STOPPED)
		return;
	if (READ_ONCE(tlm->migrating))
		hwc->flags |= TLM_F_MOVED;
	if (flags & PERF_EF_UPDATE)
		ndk_tlm_queue(tlm, event, TLM_OP_STOP);
	hwc->state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int ndk_tlm_add(struct perf_event *event, int flags)
{
	struct ndk_tlm *tlm = to_tlm(event->pmu);

	if (!READ_ONCE(tlm->migrating))
		event->hw.flags &= ~TLM_F_MOVED;
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
 * Groups: our leader only (a foreign leader, software included, is refused:
 * every accepted group is then served from one snapshot, and the perf core's
 * software-led group paths are avoided), software siblings allowed, at most
 * TLM_GROUP_MAX members so that a group always fits one batch.
 */
static bool ndk_tlm_group_ok(struct perf_event *event)
{
	struct perf_event *leader = event->group_leader;
	struct perf_event *sib;

	if (leader == event)
		return true;
	if (leader->pmu != event->pmu)
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
	struct ndk_tlm *tlm = to_tlm(event->pmu);
	unsigned long flags;
	bool last;

	/*
	 * An owner CPU move queues the stops of the moved events on the CPU
	 * going away and serves them after perf_pmu_migrate_context(); an
	 * event closed on another CPU meanwhile must not be freed before that
	 * (KASAN on the debug kernel: ndk_tlm_apply() from the offline flush
	 * read a freed event). An event being destroyed is in no context any
	 * more, so a move that starts later cannot queue it.
	 */
	wait_var_event(&tlm->migrating, !READ_ONCE(tlm->migrating));
	ndk_tlm_undefer(tlm, event);
	ndk_tlm_lock_irqsave(tlm, flags);
	last = !--tlm->nr_events && tlm->dead;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	hwtel_io_put(&tlm->io);
	if (last)
		schedule_delayed_work(&tlm->gone, TLM_GONE_DELAY);
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
	if (event->attr.config1 || event->attr.config2)
		return -EINVAL;
	entry = ndk_tlm_config_entry(&tlm->lay, event->attr.config);
	if (entry < 0)
		return entry;
	if (!ndk_tlm_group_ok(event))
		return -EINVAL;
	if (!hwtel_io_get(&tlm->io))
		return -ENODEV;
	ndk_tlm_lock_irq(tlm);
	if (tlm->dead) {
		ndk_tlm_unlock_irq(tlm);
		hwtel_io_put(&tlm->io);
		return -ENODEV;
	}
	tlm->nr_events++;
	ndk_tlm_unlock_irq(tlm);

	event->cpu = tlm->cpu;
	event->hw.idx = entry;
	event->hw.config = event->attr.config;
	event->hw.flags = 0;
	event->destroy = ndk_tlm_event_destroy;
	return 0;
}

/* ------------------------------------------------------------------ */
/* poller: keeps every entry within one wrap, reports new STATUS flags */

/*
 * Bring every entry within one wrap. The window is read with interrupts on
 * (ndk_tlm_read_chunk()); a chunk whose copy changed before it was folded is
 * read again from the newer snapshot, and after a few tries folded under the
 * lock (32 entries), so that no entry goes a poll without a fold. During an
 * exclusive fold of the control plane the poll takes no SNAPSHOT of its own
 * and folds from that fold's.
 */
#define TLM_POLL_CHUNK	TLM_FOLD_CHUNK
#define TLM_POLL_TRIES	4

static void ndk_tlm_poll_counters(struct ndk_tlm *tlm)
{
	u32 i, j, end, n = tlm->lay.entries_used, gen;
	u64 raw[TLM_POLL_CHUNK];
	unsigned long flags;
	unsigned int tries;
	bool ok = false;
	int ret = 0;

	ndk_tlm_lock_irqsave(tlm, flags);
	if (!tlm->fold_excl)
		ret = ndk_tlm_snapshot(tlm);
	gen = tlm->gen;
	ndk_tlm_unlock_irqrestore(tlm, flags);
	if (ret)
		return;
	for (i = 0; i < n; i = end) {
		end = min(i + TLM_POLL_CHUNK, n);
		for (tries = 0; tries < TLM_POLL_TRIES; tries++) {
			ndk_tlm_read_chunk(tlm, i, end, raw);
			ndk_tlm_lock_irqsave(tlm, flags);
			ok = ndk_tlm_fold_chunk(tlm, i, end, raw, gen);
			if (!ok && !tlm->pending && tries == TLM_POLL_TRIES - 1) {
				for (j = i; j < end; j++)
					ndk_tlm_entry_update(tlm, j);
				ok = true;
			}
			gen = tlm->gen;
			ret = tlm->pending;
			ndk_tlm_unlock_irqrestore(tlm, flags);
			if (ok || ret)
				break;
		}
	}
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
		ndk_tlm_poll_counters(tlm);
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

	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(cpumask_of(tlm->cpu)));
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

static struct attribute *ndk_tlm_attrs[] = {
	&dev_attr_cpumask.attr,
	&dev_attr_identifier.attr,
	NULL,
};

static const struct attribute_group ndk_tlm_attr_group = {
	.attrs = ndk_tlm_attrs,
};

static ssize_t ndk_tlm_format_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr);

	return sysfs_emit(buf, "%s\n", (const char *)ea->var);
}

#define TLM_FMT(_name, _fmt)						\
	(&((struct dev_ext_attribute[]) {				\
		{ __ATTR(_name, 0444, ndk_tlm_format_show, NULL),	\
		  (void *)(_fmt) }					\
	})[0].attr.attr)

static struct attribute *ndk_tlm_format_attrs[] = {
	TLM_FMT(kind, "config:0-7"),
	TLM_FMT(ep, "config:8-15"),
	TLM_FMT(bus, "config:16-31"),
	TLM_FMT(idx, "config:32-47"),
	NULL,
};

static const struct attribute_group ndk_tlm_format_group = {
	.name = "format",
	.attrs = ndk_tlm_format_attrs,
};

static ssize_t ndk_tlm_event_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct perf_pmu_events_attr *pa =
		container_of(attr, struct perf_pmu_events_attr, attr);

	return sysfs_emit(buf, "%s\n", pa->event_str);
}

#define TLM_EV(_name, _str)						\
	(&((struct perf_pmu_events_attr[]) {				\
		{ .attr = __ATTR(_name, 0444, ndk_tlm_event_show, NULL),\
		  .event_str = _str }					\
	})[0].attr.attr)

static struct attribute *ndk_tlm_event_attrs[] = {
	TLM_EV(pcie_cycles, "kind=0x1,ep=?"),
	TLM_EV(dma_cycles, "kind=0x2,ep=?"),
	TLM_EV(words, "kind=0x3,ep=?,bus=?"),
	TLM_EV(stall, "kind=0x4,ep=?,bus=?"),
	TLM_EV(frames, "kind=0x5,ep=?,bus=?"),
	TLM_EV(mvb_items, "kind=0x6,ep=?,bus=?"),
	TLM_EV(mvb_stall, "kind=0x7,ep=?,bus=?"),
	TLM_EV(items, "kind=0x8,ep=?,bus=?"),
	TLM_EV(region, "kind=0x9,ep=?,bus=?,idx=?"),
	TLM_EV(brake, "kind=0xa,ep=?,idx=?"),
	TLM_EV(tags_band, "kind=0xb,ep=?,idx=?"),
	TLM_EV(stfifo_band, "kind=0xc,ep=?,idx=?"),
	TLM_EV(raw, "kind=0xd,idx=?"),
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

static struct attribute *ndk_tlm_caps_attrs[];

/*
 * caps/ lists the first fields of struct ndk_tlm_layout, all u32, in the
 * order of the structure: the position of the attribute is the field index.
 */
static ssize_t ndk_tlm_cap_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct ndk_tlm *tlm = to_tlm(dev_get_drvdata(dev));
	const u32 *fields = (const u32 *)&tlm->lay;
	unsigned int i;

	BUILD_BUG_ON(offsetof(struct ndk_tlm_layout, drain_period) !=
		     27 * sizeof(u32));
	for (i = 0; ndk_tlm_caps_attrs[i]; i++) {
		if (ndk_tlm_caps_attrs[i] == &attr->attr)
			return sysfs_emit(buf, "%u\n", fields[i]);
	}
	return -EINVAL;
}

#define TLM_CAP(_name)							\
	(&((struct device_attribute[]) {				\
		__ATTR(_name, 0444, ndk_tlm_cap_show, NULL)		\
	})[0].attr)

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
	kfree(tlm->entries);
	kfree(tlm->name);
	if (tlm->win.pci[0])
		put_device(tlm->dev);
	kfree(tlm);
}

/*
 * A dead PMU's last event is gone: unregister it. Its memory stays on
 * ndk_tlm_dead until module exit: the perf core may still be finishing
 * with the last event when this runs.
 */
static void ndk_tlm_gone(struct work_struct *work)
{
	struct ndk_tlm *tlm = container_of(to_delayed_work(work),
					   struct ndk_tlm, gone);

	mutex_lock(&ndk_tlm_dead_lock);
	if (!tlm->unregistered) {
		perf_pmu_unregister(&tlm->pmu);
		tlm->unregistered = true;
	}
	mutex_unlock(&ndk_tlm_dead_lock);
}

/*
 * Device removal (unbind, module unload). Nothing touches the hardware
 * after this: the lock orders every access before @dead. With events still
 * open the PMU stays registered (6.1's perf_pmu_unregister() is unsafe with
 * live events), frozen, until the last one is destroyed.
 */
static void ndk_tlm_unregister(struct ndk_tlm *tlm)
{
	bool busy;

	ndk_tlm_lab_del(tlm);
	ndk_tlm_nl_del(tlm);
	hrtimer_cancel(&tlm->poller);
	cpuhp_state_remove_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	mutex_lock(&ndk_tlm_dead_lock);
	ndk_tlm_lock_irq(tlm);
	tlm->dead = true;
	busy = tlm->nr_events;
	ndk_tlm_unlock_irq(tlm);
	if (busy) {
		dev_info(tlm->dev, "%s: device removed with events open, counts frozen until they are closed\n",
			 tlm->name);
		list_add_tail(&tlm->dead_node, &ndk_tlm_dead);
		mutex_unlock(&ndk_tlm_dead_lock);
		return;
	}
	mutex_unlock(&ndk_tlm_dead_lock);
	perf_pmu_unregister(&tlm->pmu);
	tlm->registered = false;
}

/*
 * End an instance made by ndk_tlm_create(): no hardware access after this,
 * so the caller may unmap the window right after. The state is freed now,
 * or at module exit when events were still open (ndk_tlm_dead).
 */
void ndk_tlm_destroy(struct ndk_tlm *tlm)
{
	ndk_tlm_unregister(tlm);
	if (!tlm->registered)
		ndk_tlm_free(tlm);
}

/*
 * A PMU of the same name may still be registered, dead (its device went
 * away with events open): unregister it now if its events are gone, else
 * refuse.
 */
static int ndk_tlm_reap(struct device *dev, const char *name)
{
	struct ndk_tlm *old;
	int ret = 0;

	mutex_lock(&ndk_tlm_dead_lock);
	list_for_each_entry(old, &ndk_tlm_dead, dead_node) {
		if (old->unregistered || strcmp(old->name, name))
			continue;
		ndk_tlm_lock_irq(old);
		if (old->nr_events)
			ret = -EBUSY;
		ndk_tlm_unlock_irq(old);
		if (ret) {
			dev_err(dev, "%s: events of the removed device are still open\n",
				name);
			break;
		}
		perf_pmu_unregister(&old->pmu);
		old->unregistered = true;
	}
	mutex_unlock(&ndk_tlm_dead_lock);
	return ret;
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
	INIT_LIST_HEAD(&tlm->dead_node);
	INIT_DELAYED_WORK(&tlm->gone, ndk_tlm_gone);

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
	if (!IS_ALIGNED(tlm->lay.cnt_base, 8) ||
	    (u64)tlm->lay.cnt_base + 8ULL * tlm->lay.entries_used > size) {
		dev_err(dev, "counter window at 0x%x (%u entries) does not fit the 0x%llx bytes at 0x%llx\n",
			tlm->lay.cnt_base, tlm->lay.entries_used,
			(unsigned long long)size, (unsigned long long)base_addr);
		ret = -ENODEV;
		goto err;
	}

	tlm->entries = kcalloc(tlm->lay.entries_used, sizeof(*tlm->entries),
			       GFP_KERNEL);
	if (name)
		tlm->name = kstrdup(name, GFP_KERNEL);
	else
		tlm->name = kasprintf(GFP_KERNEL, "ndk_pcie_tlm_%llx",
				      (unsigned long long)tlm->base_addr);
	tlm->pcpu = alloc_percpu(struct ndk_tlm_pcpu);
	if (!tlm->entries || !tlm->name || !tlm->pcpu) {
		ret = -ENOMEM;
		goto err;
	}
	ret = ndk_tlm_reap(dev, tlm->name);
	if (ret)
		goto err;

	/* the window shows the snapshot copy; start from what it holds */
	hwtel_writel(&tlm->io, 0, NDK_TLM_READ_SEL);
	ndk_tlm_lock_irqsave(tlm, flags);
	tlm->gen = 1;
	ret = ndk_tlm_update_all(tlm);
	ndk_tlm_unlock_irqrestore(tlm, flags);
	if (ret) {
		dev_err(dev, "first SNAPSHOT did not complete\n");
		ret = -EIO;
		goto err;
	}
	for (i = 0; i < tlm->lay.entries_used; i++)
		tlm->entries[i].acc = tlm->entries[i].last_raw;

	tlm->poll_ns = ndk_tlm_poll_period(tlm);
	tlm->tick_ns = max_t(u64, flags_poll_ms, 1) * NSEC_PER_MSEC;
	/*
	 * A soft timer: nothing cancels it with interrupts off (pmu->del does
	 * not touch it), and its callback sends netlink messages, which an RT
	 * kernel cannot do from hard interrupt context.
	 */
	hrtimer_setup(&tlm->poller, ndk_tlm_poll, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);

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
	tlm->cpu = ndk_tlm_pick_cpu(tlm, raw_smp_processor_id(), nr_cpu_ids);
	ret = perf_pmu_register(&tlm->pmu, tlm->name, -1);
	if (ret)
		goto err;
	ret = cpuhp_state_add_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	if (ret) {
		perf_pmu_unregister(&tlm->pmu);
		goto err;
	}
	/* the owner may have gone while no hotplug callback could see it */
	cpus_read_lock();
	if (tlm->cpu >= nr_cpu_ids || !cpu_online(tlm->cpu))
		tlm->cpu = ndk_tlm_pick_cpu(tlm, nr_cpu_ids, nr_cpu_ids);
	cpus_read_unlock();
	tlm->next_poll = ktime_add_ns(ktime_get(), tlm->poll_ns);
	tlm->next_listen = ktime_add_ns(ktime_get(), TLM_LISTEN_CHECK_NS);
	tlm->next_flags = tlm->next_listen;
	hrtimer_start(&tlm->poller, ktime_before(tlm->next_listen, tlm->next_poll) ?
		      tlm->next_listen : tlm->next_poll, HRTIMER_MODE_ABS_SOFT);
	ndk_tlm_nl_add(tlm);
	ndk_tlm_lab_add(tlm);
	/* from here ndk_tlm_destroy() owns @tlm */
	tlm->registered = true;

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

static int ndk_tlm_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);

	/* no owner since the last CPU went: this one takes over */
	if (tlm->cpu >= nr_cpu_ids)
		tlm->cpu = cpu;
	return 0;
}

static int ndk_tlm_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);
	struct ndk_tlm_pcpu *pc;
	unsigned int target;

	if (cpu != tlm->cpu)
		return 0;
	target = ndk_tlm_pick_cpu(tlm, nr_cpu_ids, cpu);
	if (target >= nr_cpu_ids) {
		tlm->cpu = nr_cpu_ids;
		return 0;
	}
	/*
	 * This runs on the CPU going away, where the events are stopped: hold
	 * their updates back and serve them from one snapshot after the move.
	 * The moved events start on @target without a snapshot of their own
	 * (TLM_F_MOVED), so a running group stays one instant.
	 */
	WRITE_ONCE(tlm->migrating, true);
	local_irq_disable();
	pc = this_cpu_ptr(tlm->pcpu);
	pc->hold |= TLM_HOLD_MIGRATE;
	local_irq_enable();
	perf_pmu_migrate_context(&tlm->pmu, cpu, target);
	local_irq_disable();
	ndk_tlm_release(tlm, TLM_HOLD_MIGRATE);
	local_irq_enable();
	WRITE_ONCE(tlm->migrating, false);
	/*
	 * wait_var_event()'s contract: a full barrier between the store of
	 * the condition and wake_up_var(), whose check for waiters is not
	 * ordered after the store otherwise (a waiter that just queued itself
	 * and read the old value would sleep on).
	 */
	smp_mb();
	wake_up_var(&tlm->migrating);
	tlm->cpu = target;
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
	struct ndk_tlm *tlm, *tmp;

	platform_driver_unregister(&ndk_tlm_driver);
	ndk_tlm_pci_exit();
	/* no event is open (each holds the module): end the dead PMUs now */
	list_for_each_entry_safe(tlm, tmp, &ndk_tlm_dead, dead_node) {
		cancel_delayed_work_sync(&tlm->gone);
		if (!tlm->unregistered)
			perf_pmu_unregister(&tlm->pmu);
		list_del(&tlm->dead_node);
		ndk_tlm_free(tlm);
	}
	ndk_tlm_nl_exit();
	ndk_tlm_lab_exit();
	cpuhp_remove_multi_state(ndk_tlm_hp_state);
}

module_init(ndk_tlm_init);
module_exit(ndk_tlm_exit);

MODULE_DESCRIPTION("perf PMU for the CESNET NDK PCIE_TELEMETRY_MI block");
MODULE_LICENSE("GPL");
