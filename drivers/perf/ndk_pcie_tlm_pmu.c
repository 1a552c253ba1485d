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
MODULE_PARM_DESC(busy_timeout_us, "Longest wait for STATUS.BUSY to fall after SNAPSHOT, us");

/* longest poll period even for very wide counters */
#define TLM_POLL_MAX_NS		(3600ULL * NSEC_PER_SEC)
#define TLM_POLL_MIN_NS		(1ULL * NSEC_PER_MSEC)

/*
 * per-CPU queue of operations served from one snapshot; a longer batch (a
 * context with more than this many events being rescheduled) takes more
 * snapshots and may then split a group over two of them; counts stay exact
 */
#define TLM_QLEN		256

enum ndk_tlm_op {
	TLM_OP_START,
	TLM_OP_UPDATE,
};

/* why operations are held back on this CPU */
#define TLM_HOLD_DISABLED	BIT(0)	/* between pmu_disable() and pmu_enable() */
#define TLM_HOLD_ADD		BIT(1)	/* inside a PERF_PMU_TXN_ADD */
#define TLM_HOLD_READ		BIT(2)	/* inside a PERF_PMU_TXN_READ */

struct ndk_tlm_pcpu {
	unsigned int hold;
	unsigned int txn_flags;
	unsigned int n;
	struct perf_event *ev[TLM_QLEN];
	u8 op[TLM_QLEN];
};

static enum cpuhp_state ndk_tlm_hp_state;

#define to_tlm(p) container_of(p, struct ndk_tlm, pmu)

/* ------------------------------------------------------------------ */
/* hardware access; all called with tlm->lock held                    */

static int ndk_tlm_snapshot(struct ndk_tlm *tlm)
{
	unsigned int waited = 0;
	u32 st;

	lockdep_assert_held(&tlm->lock);

	hwtel_writel(&tlm->io, NDK_TLM_CMD_SNAPSHOT, NDK_TLM_COMMAND);
	for (;;) {
		st = hwtel_readl(&tlm->io, NDK_TLM_STATUS);
		if (!(st & NDK_TLM_ST_BUSY))
			break;
		if (waited >= busy_timeout_us) {
			dev_err_ratelimited(tlm->dev,
					    "SNAPSHOT still BUSY after %u us, read failed\n",
					    busy_timeout_us);
			return -ETIMEDOUT;
		}
		udelay(1);
		waited++;
	}
	tlm->gen++;
	tlm->snap_ns = ktime_get_ns();
	return 0;
}

/* Fold entry @i of the current snapshot into its 64-bit total. */
static void ndk_tlm_entry_update(struct ndk_tlm *tlm, u32 i)
{
	struct ndk_tlm_entry *e = &tlm->entries[i];
	u32 off = tlm->lay.cnt_base + 8 * i;
	u64 raw;

	if (e->gen == tlm->gen)
		return;
	raw = hwtel_readl(&tlm->io, off);
	raw |= (u64)hwtel_readl(&tlm->io, off + 4) << 32;
	raw &= tlm->cnt_mask;
	e->acc += (raw - e->last_raw) & tlm->cnt_mask;
	e->last_raw = raw;
	e->gen = tlm->gen;
}

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

/* ------------------------------------------------------------------ */
/* control plane helpers                                              */

int ndk_tlm_totals(struct ndk_tlm *tlm, u64 *vals, u64 *snap_ns)
{
	unsigned long flags;
	u32 i;
	int ret;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	ret = ndk_tlm_update_all(tlm);
	if (!ret) {
		for (i = 0; i < tlm->lay.entries_used; i++)
			vals[i] = tlm->entries[i].acc - tlm->entries[i].base;
		*snap_ns = tlm->snap_ns;
	}
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	return ret;
}

/*
 * CLEAR with bits of enum ndk_pcie_tlm_clear. Counters: every entry is first
 * brought up to date from a snapshot, then the hardware is cleared and the
 * totals restart from zero (base = acc). @acc itself goes on, so running perf
 * events keep exact counts across the clear.
 */
int ndk_tlm_clear(struct ndk_tlm *tlm, u32 what)
{
	unsigned long flags;
	u32 cmd = 0, i;
	int ret = 0;

	if (what & BIT(0))
		cmd |= NDK_TLM_CMD_CLEAR;
	if (what & BIT(1))
		cmd |= NDK_TLM_CMD_CLEAR_FLAGS;
	if (what & BIT(2))
		cmd |= NDK_TLM_CMD_CLEAR_MARKS;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	if (cmd & NDK_TLM_CMD_CLEAR) {
		ret = ndk_tlm_update_all(tlm);
		if (ret)
			goto out;
	}
	hwtel_writel(&tlm->io, cmd, NDK_TLM_COMMAND);
	if (cmd & NDK_TLM_CMD_CLEAR) {
		for (i = 0; i < tlm->lay.entries_used; i++) {
			tlm->entries[i].base = tlm->entries[i].acc;
			tlm->entries[i].last_raw = 0;
		}
	}
	if (cmd & NDK_TLM_CMD_CLEAR_FLAGS)
		tlm->flags_seen = 0;
out:
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	return ret;
}

/* STATUS flags as enum ndk_pcie_tlm_flags bits */
u32 ndk_tlm_read_flags(struct ndk_tlm *tlm)
{
	return (hwtel_readl(&tlm->io, NDK_TLM_STATUS) & NDK_TLM_ST_FLAGS) >> 1;
}

void ndk_tlm_read_ep(struct ndk_tlm *tlm, u32 ep, struct ndk_tlm_ep_state *st)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	st->status = hwtel_readl(&tlm->io, NDK_TLM_PCIE_STATUS(ep));
	st->tags = hwtel_readl(&tlm->io, NDK_TLM_PCIE_TAGS(ep));
	st->stfifo = hwtel_readl(&tlm->io, NDK_TLM_PCIE_STFIFO(ep));
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
}

/* ------------------------------------------------------------------ */
/* perf events                                                        */

static void ndk_tlm_apply(struct ndk_tlm *tlm, struct perf_event *event,
			  u8 op, bool fresh)
{
	struct hw_perf_event *hwc = &event->hw;
	struct ndk_tlm_entry *e = &tlm->entries[hwc->idx];
	u64 prev;

	if (fresh)
		ndk_tlm_entry_update(tlm, hwc->idx);

	if (op == TLM_OP_START) {
		local64_set(&hwc->prev_count, e->acc);
		return;
	}
	if (!fresh)
		return;		/* no new snapshot: the count stays as it is */
	prev = local64_read(&hwc->prev_count);
	local64_add(e->acc - prev, &event->count);
	local64_set(&hwc->prev_count, e->acc);
}

/* Serve the queued operations of this CPU from one snapshot. */
static int ndk_tlm_flush(struct ndk_tlm *tlm, struct ndk_tlm_pcpu *pc)
{
	unsigned long flags;
	unsigned int i;
	int ret;

	if (!pc->n)
		return 0;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	ret = ndk_tlm_snapshot(tlm);
	for (i = 0; i < pc->n; i++)
		ndk_tlm_apply(tlm, pc->ev[i], pc->op[i], !ret);
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	pc->n = 0;
	return ret;
}

static void ndk_tlm_queue(struct ndk_tlm *tlm, struct perf_event *event, u8 op)
{
	struct ndk_tlm_pcpu *pc = this_cpu_ptr(tlm->pcpu);

	if (pc->n == TLM_QLEN)
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
	event->hw.state = 0;
	ndk_tlm_queue(to_tlm(event->pmu), event, TLM_OP_START);
}

static void ndk_tlm_stop(struct perf_event *event, int flags)
{
	struct hw_perf_event *hwc = &event->hw;

	if (hwc->state & PERF_HES_STOPPED)
		return;
	if (flags & PERF_EF_UPDATE)
		ndk_tlm_queue(to_tlm(event->pmu), event, TLM_OP_UPDATE);
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

static bool ndk_tlm_group_ok(struct perf_event *event)
{
	struct perf_event *leader = event->group_leader;
	struct perf_event *sib;

	if (leader->pmu != event->pmu && !is_software_event(leader))
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

	event->cpu = tlm->cpu;
	event->hw.idx = entry;
	event->hw.config = event->attr.config;
	event->destroy = ndk_tlm_event_destroy;
	return 0;
}

/* ------------------------------------------------------------------ */
/* poller: keeps every entry within one wrap, reports new STATUS flags */

/*
 * Bring every entry within one wrap. Interrupts stay off for one chunk of
 * entries at a time only: an entry read after someone else's newer SNAPSHOT
 * simply takes that one, its total still moves forward in time.
 */
#define TLM_POLL_CHUNK	64

static void ndk_tlm_poll_counters(struct ndk_tlm *tlm)
{
	u32 i, end, n = tlm->lay.entries_used;
	unsigned long flags;
	int ret;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	ret = ndk_tlm_snapshot(tlm);
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	if (ret)
		return;
	for (i = 0; i < n; i = end) {
		end = min(i + TLM_POLL_CHUNK, n);
		raw_spin_lock_irqsave(&tlm->lock, flags);
		for (; i < end; i++)
			ndk_tlm_entry_update(tlm, i);
		raw_spin_unlock_irqrestore(&tlm->lock, flags);
	}
}

static enum hrtimer_restart ndk_tlm_poll(struct hrtimer *t)
{
	struct ndk_tlm *tlm = container_of(t, struct ndk_tlm, poller);
	ktime_t now = ktime_get();
	unsigned long flags;
	u32 fl = 0, new = 0;
	bool listening = ndk_tlm_nl_listening();

	if (ktime_compare(now, tlm->next_poll) >= 0) {
		ndk_tlm_poll_counters(tlm);
		tlm->next_poll = ktime_add_ns(now, tlm->poll_ns);
	}

	raw_spin_lock_irqsave(&tlm->lock, flags);
	if (listening) {
		fl = ndk_tlm_read_flags(tlm);
		new = fl & ~tlm->flags_seen;
		tlm->flags_seen = fl;
	}
	raw_spin_unlock_irqrestore(&tlm->lock, flags);

	if (new)
		ndk_tlm_nl_notify(tlm, fl, new);

	hrtimer_forward_now(t, ns_to_ktime(tlm->tick_ns));
	return HRTIMER_RESTART;
}

static u64 ndk_tlm_poll_period(const struct ndk_tlm_layout *l)
{
	u64 ns = TLM_POLL_MAX_NS;
	unsigned int mhz = max_clock_mhz ? max_clock_mhz : 1;

	/* half the wrap time at the fastest clock: 2^W * 1000 / MHz / 2 ns */
	if (l->cnt_width <= 50)
		ns = min(ns, div_u64((1ULL << l->cnt_width) * 500, mhz));
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

static void ndk_tlm_unregister(void *data)
{
	struct ndk_tlm *tlm = data;

	ndk_tlm_nl_del(tlm);
	perf_pmu_unregister(&tlm->pmu);
	cpuhp_state_remove_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	hrtimer_cancel(&tlm->poller);
	free_percpu(tlm->pcpu);
}

static int ndk_tlm_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct resource *res;
	struct ndk_tlm *tlm;
	unsigned long flags;
	u32 magic, ver, i;
	int ret;

	tlm = devm_kzalloc(dev, sizeof(*tlm), GFP_KERNEL);
	if (!tlm)
		return -ENOMEM;
	tlm->dev = dev;
	raw_spin_lock_init(&tlm->lock);
	INIT_LIST_HEAD(&tlm->list);

	res = hwtel_io_map(pdev, &tlm->io);
	if (IS_ERR(res))
		return PTR_ERR(res);
	tlm->base_addr = res->start;

	magic = hwtel_readl(&tlm->io, NDK_TLM_MAGIC);
	if (magic != NDK_TLM_MAGIC_VALUE) {
		dev_err(dev, "MAGIC 0x%08x is not 0x%08x: not a PCIE_TELEMETRY_MI block\n",
			magic, NDK_TLM_MAGIC_VALUE);
		return -ENODEV;
	}
	ver = hwtel_readl(&tlm->io, NDK_TLM_VERSION);
	tlm->lay.version_major = ver >> 16;
	tlm->lay.version_minor = ver & 0xffff;
	if (tlm->lay.version_major != NDK_TLM_MAJOR) {
		dev_err(dev, "PCIE_TELEMETRY_MI version %u.%u not supported (major must be %u)\n",
			tlm->lay.version_major, tlm->lay.version_minor,
			NDK_TLM_MAJOR);
		return -ENODEV;
	}
	ret = ndk_tlm_decode(tlm);
	if (ret)
		return ret;
	if (!IS_ALIGNED(tlm->lay.cnt_base, 8) ||
	    (u64)tlm->lay.cnt_base + 8ULL * tlm->lay.entries_used >
	    resource_size(res)) {
		dev_err(dev, "counter window at 0x%x (%u entries) does not fit %pR\n",
			tlm->lay.cnt_base, tlm->lay.entries_used, res);
		return -ENODEV;
	}

	tlm->entries = devm_kcalloc(dev, tlm->lay.entries_used,
				    sizeof(*tlm->entries), GFP_KERNEL);
	tlm->name = devm_kasprintf(dev, GFP_KERNEL, "ndk_pcie_tlm_%llx",
				   (unsigned long long)tlm->base_addr);
	if (!tlm->entries || !tlm->name)
		return -ENOMEM;

	/* the window shows the snapshot copy; start from what it holds */
	hwtel_writel(&tlm->io, 0, NDK_TLM_READ_SEL);
	raw_spin_lock_irqsave(&tlm->lock, flags);
	tlm->gen = 1;
	ret = ndk_tlm_update_all(tlm);
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	if (ret) {
		dev_err(dev, "first SNAPSHOT did not complete\n");
		return -EIO;
	}
	for (i = 0; i < tlm->lay.entries_used; i++)
		tlm->entries[i].acc = tlm->entries[i].last_raw;

	tlm->pcpu = alloc_percpu(struct ndk_tlm_pcpu);
	if (!tlm->pcpu)
		return -ENOMEM;

	tlm->poll_ns = ndk_tlm_poll_period(&tlm->lay);
	tlm->tick_ns = min_t(u64, tlm->poll_ns,
			     max_t(u64, flags_poll_ms, 1) * NSEC_PER_MSEC);
	tlm->next_poll = ktime_add_ns(ktime_get(), tlm->poll_ns);
	hrtimer_setup(&tlm->poller, ndk_tlm_poll, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);

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

	tlm->cpu = raw_smp_processor_id();
	ret = cpuhp_state_add_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
	if (ret) {
		free_percpu(tlm->pcpu);
		return ret;
	}
	platform_set_drvdata(pdev, tlm);
	hrtimer_start(&tlm->poller, ns_to_ktime(tlm->tick_ns),
		      HRTIMER_MODE_REL_SOFT);

	ret = perf_pmu_register(&tlm->pmu, tlm->name, -1);
	if (ret) {
		hrtimer_cancel(&tlm->poller);
		cpuhp_state_remove_instance_nocalls(ndk_tlm_hp_state, &tlm->node);
		free_percpu(tlm->pcpu);
		return ret;
	}
	ndk_tlm_nl_add(tlm);

	ret = devm_add_action_or_reset(dev, ndk_tlm_unregister, tlm);
	if (ret)
		return ret;

	dev_info(dev, "%s: version %u.%u, %u endpoint(s), %u DMA port(s), %u counters of %u bits, poll %llu ms\n",
		 tlm->name, tlm->lay.version_major, tlm->lay.version_minor,
		 tlm->lay.endpoints, tlm->lay.dma_ports, tlm->lay.entries_used,
		 tlm->lay.cnt_width, div_u64(tlm->poll_ns, NSEC_PER_MSEC));
	return 0;
}

/* ------------------------------------------------------------------ */
/* CPU hotplug                                                        */

static int ndk_tlm_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);

	if (tlm->cpu >= nr_cpu_ids)
		tlm->cpu = cpu;
	return 0;
}

static int ndk_tlm_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct ndk_tlm *tlm = hlist_entry_safe(node, struct ndk_tlm, node);
	unsigned int target;

	if (cpu != tlm->cpu)
		return 0;
	target = cpumask_any_but(cpu_online_mask, cpu);
	if (target >= nr_cpu_ids) {
		tlm->cpu = nr_cpu_ids;
		return 0;
	}
	perf_pmu_migrate_context(&tlm->pmu, cpu, target);
	tlm->cpu = target;
	return 0;
}

static const struct of_device_id ndk_tlm_of_match[] = {
	{ .compatible = "cesnet,ofm,pcie_telemetry_mi" },
	{ }
};
MODULE_DEVICE_TABLE(of, ndk_tlm_of_match);

static const struct platform_device_id ndk_tlm_id_table[] = {
	{ .name = "ndk-pcie-tlm-sim" },
	{ }
};
MODULE_DEVICE_TABLE(platform, ndk_tlm_id_table);

static struct platform_driver ndk_tlm_driver = {
	.driver = {
		.name = "ndk-pcie-tlm",
		.of_match_table = ndk_tlm_of_match,
		.suppress_bind_attrs = true,
	},
	.probe = ndk_tlm_probe,
	.id_table = ndk_tlm_id_table,
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

	ret = ndk_tlm_nl_init();
	if (ret)
		goto err_hp;
	ret = platform_driver_register(&ndk_tlm_driver);
	if (ret)
		goto err_nl;
	return 0;

err_nl:
	ndk_tlm_nl_exit();
err_hp:
	cpuhp_remove_multi_state(ndk_tlm_hp_state);
	return ret;
}

static void __exit ndk_tlm_exit(void)
{
	platform_driver_unregister(&ndk_tlm_driver);
	ndk_tlm_nl_exit();
	cpuhp_remove_multi_state(ndk_tlm_hp_state);
}

module_init(ndk_tlm_init);
module_exit(ndk_tlm_exit);

MODULE_DESCRIPTION("perf PMU for the CESNET NDK PCIE_TELEMETRY_MI block");
MODULE_LICENSE("GPL");
