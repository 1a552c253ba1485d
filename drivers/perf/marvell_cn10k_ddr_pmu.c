// SPDX-License-Identifier: GPL-2.0
/*
 * Marvell CN10K, Odyssey and CN20K DRAM subsystem (DSS) PMU.
 *
 * Each DDR controller has eight generic counters, programmed with an event
 * bitmap, and two fixed free-running counters for DDR reads and DDR writes.
 * There is no overflow interrupt: an hrtimer polls the counters every
 * poll_period_sec seconds and folds freezes and wraps into 64-bit totals.
 *
 * Counting model used by this driver (see the hwsim-ddr documentation):
 *  - CN10K: the operating mode, START and END are global. The counters are
 *    put in manual mode and started once at probe; each counter is then
 *    gated by the enable bit of its CFG register. START clears every generic
 *    counter, so recovering a frozen counter folds all of them first.
 *  - Odyssey, CN20K: operating mode, START and END exist per counter. A
 *    frozen counter is restarted from 0 with END then START.
 *
 * All register access goes through include/hwtel/io.h.
 */

#include <linux/acpi.h>
#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/numa.h>
#include <linux/perf_event.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/topology.h>

#include <hwtel/compat.h>
#include <hwtel/ddr_regs.h>
#include <hwtel/io.h>

#define DDR_IDX_RD		DDR_NUM_GEN_COUNTERS
#define DDR_IDX_WR		(DDR_NUM_GEN_COUNTERS + 1)
#define DDR_CONFIG_MASK		GENMASK_ULL(8, 0)

enum ddr_event_kind {
	DDR_EV_CFG,	/* generic counter, bitmap in CFG */
	DDR_EV_CFG1,	/* generic counter, bitmap in CFG1 (CN20K ZQ events) */
	DDR_EV_RD,	/* fixed DDR read counter */
	DDR_EV_WR,	/* fixed DDR write counter */
};

/* One sysfs event, and everything needed to program it */
struct ddr_event_attr {
	struct device_attribute attr;
	u16 id;
	u8 kind;
	u8 arg;		/* DDR_EV_CFG: bits selected; DDR_EV_CFG1: the bit */
};

struct ddr_variant {
	const char *name;
	const struct attribute_group **groups;
	bool global_ctrl;	/* one op-mode/start/end for all counters */
	u64 gen_max;		/* generic counters freeze at this value */
	u64 fr_mask;		/* free-running counters wrap at fr_mask + 1 */
	u32 op_mode;		/* global register, or the one of counter 0 */
	u32 start;
	u32 end;
	u32 cfg;		/* counter 0 */
	u32 cfg1;		/* counter 0; 0 if the variant has no CFG1 */
	u32 cnt;		/* counter 0 */
	u32 fr_en;		/* free-run enable bits */
	u32 fr_wr;
	u32 fr_rd;
};

struct ddr_pmu {
	struct pmu pmu;
	struct hwtel_io io;
	const struct ddr_variant *v;
	struct device *dev;
	/*
	 * Serialises counters, events[], fr_events[], fr_users[] and
	 * START/END between perf and the timer
	 */
	raw_spinlock_t lock;
	/* Generic counter n: its one event */
	struct perf_event *events[DDR_NUM_GEN_COUNTERS];
	/* Free-running read/write counters: every event added, and started */
	struct list_head fr_events[2];
	unsigned int fr_users[2];
	unsigned int active;
	/*
	 * A hard timer: pmu->del cancels it with interrupts off, which on
	 * PREEMPT_RT may only wait for a timer expiring in hard IRQ context.
	 */
	struct hrtimer timer;
	/* Owner CPU, nr_cpu_ids while none is online; hotplug-locked writes */
	unsigned int cpu;
	unsigned int orphan_cpu;	/* where the events are while none */
	struct hlist_node node;
};

#define to_ddr_pmu(p) container_of(p, struct ddr_pmu, pmu)

static enum cpuhp_state ddr_cpuhp_state;

/*
 * Poll period. A CN10K generic counter (48 bits) freezes after 2^48 events;
 * even at one event per cycle of a 2.8 GHz DFI clock that is over a day, so
 * the default of 100 s leaves a wide margin.
 */
static unsigned long poll_period_sec = 100;

static int ddr_poll_period_set(const char *val, const struct kernel_param *kp)
{
	unsigned long sec;

	/* Not a number, 0, or too large for ktime: all EINVAL */
	if (kstrtoul(val, 0, &sec) || !sec ||
	    sec > (unsigned long)(KTIME_MAX / NSEC_PER_SEC))
		return -EINVAL;
	WRITE_ONCE(*(unsigned long *)kp->arg, sec);
	return 0;
}

static const struct kernel_param_ops ddr_poll_period_ops = {
	.set = ddr_poll_period_set,
	.get = param_get_ulong,
};
module_param_cb(poll_period_sec, &ddr_poll_period_ops, &poll_period_sec, 0644);
MODULE_PARM_DESC(poll_period_sec,
		 "counter poll period in seconds (default 100, applies at the next timer arming)");

static ktime_t ddr_poll_period(void)
{
	return ns_to_ktime((u64)READ_ONCE(poll_period_sec) * NSEC_PER_SEC);
}

/* sysfs */

static ssize_t ddr_event_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct ddr_event_attr *e = container_of(attr, struct ddr_event_attr, attr);

	return sysfs_emit(buf, "event=0x%02x\n", e->id);
}

#define DDR_EVENT(_name, _id, _kind, _arg)				\
	(&((struct ddr_event_attr[]) {					\
		{ .attr = __ATTR(_name, 0444, ddr_event_show, NULL),	\
		  .id = (_id), .kind = (_kind), .arg = (_arg), }	\
	})[0].attr.attr)

/* Most events select bit (id - 1) of CFG */
#define DDR_GEN(_name, _id)	DDR_EVENT(_name, _id, DDR_EV_CFG, 1)
/* Low-power entry events select four bits from (id - 1), one per rank */
#define DDR_LP(_name, _id)	DDR_EVENT(_name, _id, DDR_EV_CFG, 4)
/* CN20K ZQ events select one bit of CFG1 */
#define DDR_ZQ(_name, _id, _bit) DDR_EVENT(_name, _id, DDR_EV_CFG1, _bit)
#define DDR_READS		DDR_EVENT(ddr_ddr_reads, 101, DDR_EV_RD, 0)
#define DDR_WRITES		DDR_EVENT(ddr_ddr_writes, 100, DDR_EV_WR, 0)

static struct attribute *cn10k_events[] = {
	DDR_GEN(ddr_hif_rd_or_wr_access, 1),
	DDR_GEN(ddr_hif_wr_access, 2),
	DDR_GEN(ddr_hif_rd_access, 3),
	DDR_GEN(ddr_hif_rmw_access, 4),
	DDR_GEN(ddr_hif_pri_rdaccess, 5),
	DDR_GEN(ddr_rd_bypass_access, 6),
	DDR_GEN(ddr_act_bypass_access, 7),
	DDR_GEN(ddr_dif_wr_data_access, 8),
	DDR_GEN(ddr_dif_rd_data_access, 9),
	DDR_GEN(ddr_hpri_sched_rd_crit_access, 10),
	DDR_GEN(ddr_lpri_sched_rd_crit_access, 11),
	DDR_GEN(ddr_wr_trxn_crit_access, 12),
	DDR_GEN(ddr_cam_active_access, 13),
	DDR_GEN(ddr_cam_rd_or_wr_access, 14),
	DDR_GEN(ddr_cam_rd_active_access, 15),
	DDR_GEN(ddr_cam_read, 16),
	DDR_GEN(ddr_cam_write, 17),
	DDR_GEN(ddr_cam_mwr, 18),
	DDR_GEN(ddr_precharge, 19),
	DDR_GEN(ddr_precharge_for_rdwr, 20),
	DDR_GEN(ddr_precharge_for_other, 21),
	DDR_GEN(ddr_rdwr_transitions, 22),
	DDR_GEN(ddr_write_combine, 23),
	DDR_GEN(ddr_war_hazard, 24),
	DDR_GEN(ddr_raw_hazard, 25),
	DDR_GEN(ddr_waw_hazard, 26),
	DDR_LP(ddr_enter_selfref, 27),
	DDR_LP(ddr_enter_powerdown, 31),
	DDR_LP(ddr_enter_mpsm, 35),
	DDR_GEN(ddr_refresh, 39),
	DDR_GEN(ddr_crit_ref, 40),
	DDR_GEN(ddr_spec_ref, 41),
	DDR_GEN(ddr_load_mode, 42),
	DDR_GEN(ddr_zqcl, 43),
	DDR_GEN(ddr_cam_wr_access, 44),
	DDR_GEN(ddr_hpr_req_with_nocredit, 45),
	DDR_GEN(ddr_lpr_req_with_nocredit, 46),
	DDR_GEN(ddr_bsm_alloc, 47),
	DDR_GEN(ddr_bsm_starvation, 48),
	DDR_GEN(ddr_win_limit_reached_rd, 49),
	DDR_GEN(ddr_win_limit_reached_wr, 50),
	DDR_GEN(ddr_dqsosc_mpc, 51),
	DDR_GEN(ddr_dqsosc_mrr, 52),
	DDR_GEN(ddr_tcr_mrr, 53),
	DDR_GEN(ddr_zqstart, 54),
	DDR_GEN(ddr_zqlatch, 55),
	DDR_WRITES,
	DDR_READS,
	NULL
};

static struct attribute *odyssey_events[] = {
	DDR_GEN(ddr_hif_rd_or_wr_access, 1),
	DDR_GEN(ddr_hif_wr_access, 2),
	DDR_GEN(ddr_hif_rd_access, 3),
	DDR_GEN(ddr_hif_rmw_access, 4),
	DDR_GEN(ddr_hif_pri_rdaccess, 5),
	DDR_GEN(ddr_rd_bypass_access, 6),
	DDR_GEN(ddr_act_bypass_access, 7),
	DDR_GEN(ddr_dfi_wr_data_access, 8),
	DDR_GEN(ddr_dfi_rd_data_access, 9),
	DDR_GEN(ddr_hpri_sched_rd_crit_access, 10),
	DDR_GEN(ddr_lpri_sched_rd_crit_access, 11),
	DDR_GEN(ddr_wr_trxn_crit_access, 12),
	DDR_GEN(ddr_cam_active_access, 13),
	DDR_GEN(ddr_cam_rd_or_wr_access, 14),
	DDR_GEN(ddr_cam_rd_active_access, 15),
	DDR_GEN(ddr_cam_read, 16),
	DDR_GEN(ddr_cam_write, 17),
	DDR_GEN(ddr_cam_mwr, 18),
	DDR_GEN(ddr_precharge, 19),
	DDR_GEN(ddr_precharge_for_rdwr, 20),
	DDR_GEN(ddr_precharge_for_other, 21),
	DDR_GEN(ddr_rdwr_transitions, 22),
	DDR_GEN(ddr_write_combine, 23),
	DDR_GEN(ddr_war_hazard, 24),
	DDR_GEN(ddr_raw_hazard, 25),
	DDR_GEN(ddr_waw_hazard, 26),
	DDR_LP(ddr_enter_selfref, 27),
	DDR_LP(ddr_enter_powerdown, 31),
	DDR_LP(ddr_enter_mpsm, 35),
	DDR_GEN(ddr_refresh, 39),
	DDR_GEN(ddr_crit_ref, 40),
	DDR_GEN(ddr_spec_ref, 41),
	DDR_GEN(ddr_load_mode, 42),
	DDR_GEN(ddr_zqcl, 43),
	DDR_GEN(ddr_cam_wr_access, 44),
	DDR_GEN(ddr_dfi_cycles, 45),
	DDR_GEN(ddr_retry_fifo_full, 46),
	DDR_GEN(ddr_bsm_alloc, 47),
	DDR_GEN(ddr_bsm_starvation, 48),
	DDR_GEN(ddr_win_limit_reached_rd, 49),
	DDR_GEN(ddr_win_limit_reached_wr, 50),
	DDR_GEN(ddr_dqsosc_mpc, 51),
	DDR_GEN(ddr_dqsosc_mrr, 52),
	DDR_GEN(ddr_tcr_mrr, 53),
	DDR_GEN(ddr_zqstart, 54),
	DDR_GEN(ddr_zqlatch, 55),
	DDR_GEN(ddr_dfi_parity_poison, 56),
	DDR_GEN(ddr_wr_crc_error, 57),
	DDR_GEN(ddr_capar_error, 58),
	DDR_GEN(ddr_rd_crc_error, 59),
	DDR_GEN(ddr_rd_uc_ecc_error, 60),
	DDR_GEN(ddr_dfi_cmd_is_retry, 61),
	DDR_WRITES,
	DDR_READS,
	NULL
};

/*
 * CN20K: the one table of this variant. It drops MPSM (whose four bits
 * 35-38 now hold the CAS events), reuses 43/44 for RFM and deep sleep,
 * renumbers the window/DQS/TCR events, reuses 58-61 for the width events
 * and moves ZQ start/latch to CFG1 (ids 63/62, bits 21/20).
 */
static struct attribute *cn20k_events[] = {
	DDR_GEN(ddr_hif_rd_or_wr_access, 1),
	DDR_GEN(ddr_hif_wr_access, 2),
	DDR_GEN(ddr_hif_rd_access, 3),
	DDR_GEN(ddr_hif_rmw_access, 4),
	DDR_GEN(ddr_hif_pri_rdaccess, 5),
	DDR_GEN(ddr_rd_bypass_access, 6),
	DDR_GEN(ddr_act_bypass_access, 7),
	DDR_GEN(ddr_dfi_wr_data_access, 8),
	DDR_GEN(ddr_dfi_rd_data_access, 9),
	DDR_GEN(ddr_hpri_sched_rd_crit_access, 10),
	DDR_GEN(ddr_lpri_sched_rd_crit_access, 11),
	DDR_GEN(ddr_wr_trxn_crit_access, 12),
	DDR_GEN(ddr_cam_active_access, 13),
	DDR_GEN(ddr_cam_rd_or_wr_access, 14),
	DDR_GEN(ddr_cam_rd_active_access, 15),
	DDR_GEN(ddr_cam_read, 16),
	DDR_GEN(ddr_cam_write, 17),
	DDR_GEN(ddr_cam_mwr, 18),
	DDR_GEN(ddr_precharge, 19),
	DDR_GEN(ddr_precharge_for_rdwr, 20),
	DDR_GEN(ddr_precharge_for_other, 21),
	DDR_GEN(ddr_rdwr_transitions, 22),
	DDR_GEN(ddr_write_combine, 23),
	DDR_GEN(ddr_war_hazard, 24),
	DDR_GEN(ddr_raw_hazard, 25),
	DDR_GEN(ddr_waw_hazard, 26),
	DDR_LP(ddr_enter_selfref, 27),
	DDR_LP(ddr_enter_powerdown, 31),
	DDR_GEN(ddr_cas_ws, 36),
	DDR_GEN(ddr_cas_ws_off, 37),
	DDR_GEN(ddr_cas_wck_sus, 38),
	DDR_GEN(ddr_refresh, 39),
	DDR_GEN(ddr_crit_ref, 40),
	DDR_GEN(ddr_spec_ref, 41),
	DDR_GEN(ddr_load_mode, 42),
	DDR_GEN(ddr_rfm, 43),
	DDR_GEN(ddr_enter_dsm, 44),
	DDR_GEN(ddr_dfi_cycles, 45),
	DDR_GEN(ddr_win_limit_reached_rd, 46),
	DDR_GEN(ddr_win_limit_reached_wr, 47),
	DDR_GEN(ddr_dqsosc_mpc, 48),
	DDR_GEN(ddr_dqsosc_mrr, 49),
	DDR_GEN(ddr_tcr_mrr, 50),
	DDR_GEN(ddr_write32, 58),
	DDR_GEN(ddr_write16, 59),
	DDR_GEN(ddr_read32, 60),
	DDR_GEN(ddr_read16, 61),
	DDR_ZQ(ddr_zqlatch, 62, 20),
	DDR_ZQ(ddr_zqstart, 63, 21),
	DDR_WRITES,
	DDR_READS,
	NULL
};

PMU_FORMAT_ATTR(event, "config:0-8");

static struct attribute *ddr_format_attrs[] = {
	&format_attr_event.attr,
	NULL
};

static const struct attribute_group ddr_format_group = {
	.name = "format",
	.attrs = ddr_format_attrs,
};

static ssize_t cpumask_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct ddr_pmu *p = to_ddr_pmu(dev_get_drvdata(dev));
	unsigned int cpu = READ_ONCE(p->cpu);

	return sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(cpu < nr_cpu_ids ?
			  cpumask_of(cpu) : cpu_none_mask));
}
static DEVICE_ATTR_RO(cpumask);

static ssize_t identifier_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct ddr_pmu *p = to_ddr_pmu(dev_get_drvdata(dev));

	return sysfs_emit(buf, "%s\n", p->v->name);
}
static DEVICE_ATTR_RO(identifier);

static struct attribute *ddr_common_attrs[] = {
	&dev_attr_cpumask.attr,
	&dev_attr_identifier.attr,
	NULL
};

static const struct attribute_group ddr_common_group = {
	.attrs = ddr_common_attrs,
};

/*
 * The fixed counters count 64-byte bursts: perf stat prints them in MiB
 * (64 / 2^20 = 2^-14 MiB a burst). They join the variant's "events"
 * directory through pmu->attr_update, as ddr_find_event() reads only the
 * variant tables.
 */
#define DDR_BURST_MIB	"6.103515625e-5"
PMU_EVENT_ATTR_STRING(ddr_ddr_reads.scale, ddr_reads_scale, DDR_BURST_MIB);
PMU_EVENT_ATTR_STRING(ddr_ddr_reads.unit, ddr_reads_unit, "MiB");
PMU_EVENT_ATTR_STRING(ddr_ddr_writes.scale, ddr_writes_scale, DDR_BURST_MIB);
PMU_EVENT_ATTR_STRING(ddr_ddr_writes.unit, ddr_writes_unit, "MiB");

static struct attribute *ddr_unit_attrs[] = {
	&ddr_reads_scale.attr.attr,
	&ddr_reads_unit.attr.attr,
	&ddr_writes_scale.attr.attr,
	&ddr_writes_unit.attr.attr,
	NULL
};

static const struct attribute_group ddr_unit_group = {
	.name = "events",
	.attrs = ddr_unit_attrs,
};

static const struct attribute_group *ddr_attr_update[] = {
	&ddr_unit_group,
	NULL
};

#define DDR_GROUPS(_v)							\
static const struct attribute_group _v##_events_group = {		\
	.name = "events",						\
	.attrs = _v##_events,						\
};									\
static const struct attribute_group *_v##_groups[] = {			\
	&_v##_events_group,						\
	&ddr_format_group,						\
	&ddr_common_group,						\
	NULL								\
}

DDR_GROUPS(cn10k);
DDR_GROUPS(odyssey);
DDR_GROUPS(cn20k);

static const struct ddr_variant ddr_cn10k = {
	.name = "cn10k",
	.groups = cn10k_groups,
	.global_ctrl = true,
	.gen_max = GENMASK_ULL(CN10K_DDR_CNT_BITS - 1, 0),
	.fr_mask = GENMASK_ULL(CN10K_DDR_CNT_BITS - 1, 0),
	.op_mode = CN10K_DDR_OP_MODE_CTRL,
	.start = CN10K_DDR_START_OP_CTRL,
	.end = CN10K_DDR_END_OP_CTRL,
	.cfg = CN10K_DDR_CFG(0),
	.cnt = CN10K_DDR_CNT(0),
	.fr_en = CN10K_DDR_FREERUN_EN,
	.fr_wr = CN10K_DDR_FREERUN_WR,
	.fr_rd = CN10K_DDR_FREERUN_RD,
};

static const struct ddr_variant ddr_odyssey = {
	.name = "odyssey",
	.groups = odyssey_groups,
	.gen_max = U64_MAX,
	.fr_mask = U64_MAX,
	.op_mode = ODY_DDR_OP_MODE_CTRL(0),
	.start = ODY_DDR_START_OP_CTRL(0),
	.end = ODY_DDR_END_OP_CTRL(0),
	.cfg = ODY_DDR_CFG(0),
	.cnt = ODY_DDR_CNT(0),
	.fr_en = ODY_DDR_FREERUN_CTRL,
	.fr_wr = ODY_DDR_FREERUN_WR,
	.fr_rd = ODY_DDR_FREERUN_RD,
};

static const struct ddr_variant ddr_cn20k = {
	.name = "cn20k",
	.groups = cn20k_groups,
	.gen_max = U64_MAX,
	.fr_mask = U64_MAX,
	.op_mode = CN20K_DDR_OP_MODE_CTRL(0),
	.start = CN20K_DDR_START_OP_CTRL(0),
	.end = CN20K_DDR_END_OP_CTRL(0),
	.cfg = CN20K_DDR_CFG(0),
	.cfg1 = CN20K_DDR_CFG1(0),
	.cnt = CN20K_DDR_CNT(0),
	.fr_en = CN20K_DDR_FREERUN_CTRL,
	.fr_wr = CN20K_DDR_FREERUN_WR,
	.fr_rd = CN20K_DDR_FREERUN_RD,
};

static const struct ddr_event_attr *ddr_find_event(const struct ddr_variant *v,
						   u64 id)
{
	struct attribute **a = v->groups[0]->attrs;
	struct ddr_event_attr *e;

	for (; *a; a++) {
		e = container_of(*a, struct ddr_event_attr, attr.attr);
		if (e->id == id)
			return e;
	}
	return NULL;
}

/* The CFG or CFG1 bitmap that selects @e */
static u64 ddr_event_map(const struct ddr_event_attr *e)
{
	switch (e->kind) {
	case DDR_EV_CFG:
		return GENMASK_ULL(e->id + e->arg - 2, e->id - 1);
	case DDR_EV_CFG1:
		return BIT_ULL(e->arg);
	default:
		return 0;
	}
}

/* Registers */

/* Register of counter @idx, given the one of counter 0 */
static u32 ddr_reg(const struct ddr_variant *v, u32 reg0, int idx)
{
	return reg0 + DDR_REG_STRIDE * idx;
}

static u32 ddr_fr_bit(int idx)
{
	return idx == DDR_IDX_RD ? DDR_FREERUN_RD : DDR_FREERUN_WR;
}

/* Index of a free-running counter in fr_events[] and fr_users[] */
static unsigned int ddr_fr(int idx)
{
	return idx - DDR_NUM_GEN_COUNTERS;
}

static u64 ddr_read_counter(struct ddr_pmu *p, int idx)
{
	const struct ddr_variant *v = p->v;

	if (idx == DDR_IDX_RD)
		return hwtel_readq(&p->io, v->fr_rd);
	if (idx == DDR_IDX_WR)
		return hwtel_readq(&p->io, v->fr_wr);
	return hwtel_readq(&p->io, ddr_reg(v, v->cnt, idx));
}

/*
 * A generic counter is frozen when it reads at or above its documented
 * maximum: CN10K counters either stop at 2^48 - 1 or, read as 49 bits, also
 * set bit 48 when an occurrence is lost. Either way the counted value is
 * the maximum; what came after the freeze point is lost.
 */
static bool ddr_gen_frozen(const struct ddr_variant *v, u64 raw)
{
	return raw >= v->gen_max;
}

/*
 * Fold @now, a value read from the counter behind @event, into
 * event->count. Return true when it is a generic counter found frozen.
 * Caller holds p->lock.
 */
static bool ddr_fold_value(struct ddr_pmu *p, struct perf_event *event,
			   u64 now)
{
	struct hw_perf_event *hwc = &event->hw;
	bool gen = hwc->idx < DDR_NUM_GEN_COUNTERS;
	u64 mask = gen ? p->v->gen_max : p->v->fr_mask;
	u64 prev = local64_read(&hwc->prev_count);
	bool frozen = gen && ddr_gen_frozen(p->v, now);

	if (frozen)
		now = p->v->gen_max;
	now &= mask;
	local64_set(&hwc->prev_count, now);
	local64_add((now - prev) & mask, &event->count);
	return frozen;
}

static bool ddr_fold(struct ddr_pmu *p, struct perf_event *event)
{
	return ddr_fold_value(p, event, ddr_read_counter(p, event->hw.idx));
}

/*
 * Restart generic counter @idx from 0. On CN10K START is global and clears
 * every generic counter, so all of them are stopped and folded first.
 * Caller holds p->lock.
 */
static void ddr_restart(struct ddr_pmu *p, int idx)
{
	const struct ddr_variant *v = p->v;
	int i;

	if (!v->global_ctrl) {
		hwtel_writeq(&p->io, DDR_END_OP_END, ddr_reg(v, v->end, idx));
		hwtel_writeq(&p->io, DDR_START_OP_START, ddr_reg(v, v->start, idx));
		local64_set(&p->events[idx]->hw.prev_count, 0);
		return;
	}

	hwtel_writeq(&p->io, DDR_END_OP_END, v->end);
	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++)
		if (p->events[i])
			ddr_fold(p, p->events[i]);
	hwtel_writeq(&p->io, DDR_START_OP_START, v->start);
	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++)
		if (p->events[i])
			local64_set(&p->events[i]->hw.prev_count, 0);
}

/* Fold, and restart a generic counter that froze at its maximum. */
static void ddr_update(struct ddr_pmu *p, struct perf_event *event)
{
	if (ddr_fold(p, event))
		ddr_restart(p, event->hw.idx);
}

static void ddr_hw_start(struct ddr_pmu *p, struct perf_event *event)
{
	const struct ddr_variant *v = p->v;
	struct hw_perf_event *hwc = &event->hw;
	int idx = hwc->idx;
	u32 cfg = ddr_reg(v, v->cfg, idx);
	u64 val;

	if (idx >= DDR_NUM_GEN_COUNTERS) {
		/*
		 * Free-running: every event counts from its own start value;
		 * the first one enables the counter, nothing ever clears it.
		 */
		local64_set(&hwc->prev_count, ddr_read_counter(p, idx));
		if (!p->fr_users[ddr_fr(idx)]++) {
			val = hwtel_readq(&p->io, v->fr_en);
			hwtel_writeq(&p->io, val | ddr_fr_bit(idx), v->fr_en);
		}
		return;
	}

	if (v->global_ctrl) {
		/* The counter is stopped until enabled: its value is exact */
		val = ddr_read_counter(p, idx);
		local64_set(&hwc->prev_count, min(val, v->gen_max));
		hwtel_writeq(&p->io, hwtel_readq(&p->io, cfg) | DDR_CFG_ENABLE, cfg);
		if (ddr_gen_frozen(v, val))
			ddr_restart(p, idx);
		return;
	}

	hwtel_writeq(&p->io, hwtel_readq(&p->io, cfg) | DDR_CFG_ENABLE, cfg);
	hwtel_writeq(&p->io, DDR_OP_MODE_MANUAL, ddr_reg(v, v->op_mode, idx));
	ddr_restart(p, idx);
}

static void ddr_hw_stop(struct ddr_pmu *p, struct perf_event *event)
{
	const struct ddr_variant *v = p->v;
	int idx = event->hw.idx;
	u32 cfg = ddr_reg(v, v->cfg, idx);
	u64 val;

	if (idx >= DDR_NUM_GEN_COUNTERS) {
		ddr_fold(p, event);
		/* The last user stops the counter; its value stays */
		if (!--p->fr_users[ddr_fr(idx)]) {
			val = hwtel_readq(&p->io, v->fr_en);
			hwtel_writeq(&p->io, val & ~(u64)ddr_fr_bit(idx), v->fr_en);
		}
		return;
	}

	if (!v->global_ctrl)
		hwtel_writeq(&p->io, DDR_END_OP_END, ddr_reg(v, v->end, idx));
	hwtel_writeq(&p->io, hwtel_readq(&p->io, cfg) & ~DDR_CFG_ENABLE, cfg);
	/* Stopped: the value is final; no freeze recovery needed until start */
	ddr_fold(p, event);
}

static void ddr_hw_program(struct ddr_pmu *p, struct perf_event *event)
{
	const struct ddr_variant *v = p->v;
	struct hw_perf_event *hwc = &event->hw;
	int idx = hwc->idx;

	if (idx >= DDR_NUM_GEN_COUNTERS)
		return;		/* free-running: shared, never cleared */
	if (hwc->config_base == DDR_EV_CFG1) {
		hwtel_writeq(&p->io, 0, ddr_reg(v, v->cfg, idx));
		hwtel_writeq(&p->io, hwc->config, ddr_reg(v, v->cfg1, idx));
		return;
	}
	if (v->cfg1)
		hwtel_writeq(&p->io, 0, ddr_reg(v, v->cfg1, idx));
	hwtel_writeq(&p->io, hwc->config, ddr_reg(v, v->cfg, idx));
}

static void ddr_hw_unprogram(struct ddr_pmu *p, int idx)
{
	const struct ddr_variant *v = p->v;

	if (idx >= DDR_NUM_GEN_COUNTERS)
		return;
	hwtel_writeq(&p->io, 0, ddr_reg(v, v->cfg, idx));
	if (v->cfg1)
		hwtel_writeq(&p->io, 0, ddr_reg(v, v->cfg1, idx));
}

/* perf callbacks */

/* Count a group member that needs a generic counter; false: refused */
static bool ddr_count_event(struct ddr_pmu *p, struct perf_event *event,
			    unsigned int *gen)
{
	if (event->pmu != &p->pmu)
		return is_software_event(event);
	/* The free-running counters serve any number of events */
	if (event->hw.config_base == DDR_EV_CFG ||
	    event->hw.config_base == DDR_EV_CFG1)
		++*gen;
	return true;
}

/*
 * A group may mix this PMU's events with software events only (a software
 * leader included, as perf expects of uncore PMUs) and must fit the generic
 * counters at once.
 */
static int ddr_validate_group(struct ddr_pmu *p, struct perf_event *event)
{
	struct perf_event *leader = event->group_leader;
	struct perf_event *sibling;
	unsigned int gen = 0;

	if (event == leader)
		return 0;	/* a lone event always fits */
	if (!ddr_count_event(p, leader, &gen))
		return -EINVAL;
	for_each_sibling_event(sibling, leader)
		if (!ddr_count_event(p, sibling, &gen))
			return -EINVAL;
	ddr_count_event(p, event, &gen);

	if (gen > DDR_NUM_GEN_COUNTERS)
		return -EINVAL;
	return 0;
}

static int ddr_event_init(struct perf_event *event)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	struct hw_perf_event *hwc = &event->hw;
	const struct ddr_event_attr *e;
	unsigned int cpu;
	int ret;

	if (event->attr.type != event->pmu->type)
		return -ENOENT;

	if (is_sampling_event(event)) {
		dev_dbg(p->dev, "sampling not supported\n");
		return -EOPNOTSUPP;
	}
	if (event->cpu < 0 || (event->attach_state & PERF_ATTACH_TASK)) {
		dev_dbg(p->dev, "per-task events not supported\n");
		return -EOPNOTSUPP;
	}

	if ((event->attr.config & ~DDR_CONFIG_MASK) || event->attr.config1 ||
	    event->attr.config2) {
		dev_dbg(p->dev, "config bits outside config:0-8\n");
		return -EINVAL;
	}
	e = ddr_find_event(p->v, event->attr.config);
	if (!e) {
		dev_dbg(p->dev, "no event %llu on %s\n", event->attr.config,
			p->v->name);
		return -EINVAL;
	}

	hwc->idx = -1;
	hwc->config = ddr_event_map(e);
	hwc->config_base = e->kind;

	ret = ddr_validate_group(p, event);
	if (ret) {
		dev_dbg(p->dev, "group does not fit the PMU\n");
		return ret;
	}

	/* An uncore event is counted on the CPU that owns the PMU */
	cpu = READ_ONCE(p->cpu);
	if (cpu >= nr_cpu_ids)
		return -ENODEV;

	event->cpu = cpu;
	return 0;
}

static void ddr_event_start(struct perf_event *event, int flags)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	unsigned long irqflags;

	raw_spin_lock_irqsave(&p->lock, irqflags);
	/* Started once: a fixed counter's users must stay balanced */
	if (event->hw.state & PERF_HES_STOPPED) {
		ddr_hw_start(p, event);
		event->hw.state = 0;
	}
	raw_spin_unlock_irqrestore(&p->lock, irqflags);
}

static void ddr_event_stop(struct perf_event *event, int flags)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	struct hw_perf_event *hwc = &event->hw;
	unsigned long irqflags;

	raw_spin_lock_irqsave(&p->lock, irqflags);
	if (!(hwc->state & PERF_HES_STOPPED)) {
		ddr_hw_stop(p, event);
		hwc->state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
	}
	raw_spin_unlock_irqrestore(&p->lock, irqflags);
}

static int ddr_alloc_counter(struct ddr_pmu *p, unsigned long kind)
{
	int i;

	/* Free-running counters are shared: never busy */
	if (kind == DDR_EV_RD)
		return DDR_IDX_RD;
	if (kind == DDR_EV_WR)
		return DDR_IDX_WR;
	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++)
		if (!p->events[i])
			return i;
	return -EAGAIN;
}

static int ddr_event_add(struct perf_event *event, int flags)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	struct hw_perf_event *hwc = &event->hw;
	unsigned long irqflags;
	int idx;

	raw_spin_lock_irqsave(&p->lock, irqflags);
	idx = ddr_alloc_counter(p, hwc->config_base);
	if (idx < 0) {
		raw_spin_unlock_irqrestore(&p->lock, irqflags);
		return idx;
	}
	if (idx >= DDR_NUM_GEN_COUNTERS)
		list_add_tail(&event->active_entry, &p->fr_events[ddr_fr(idx)]);
	else
		p->events[idx] = event;
	hwc->idx = idx;
	hwc->state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	ddr_hw_program(p, event);
	if (!p->active++)
		hrtimer_start(&p->timer, ddr_poll_period(),
			      HRTIMER_MODE_REL_PINNED_HARD);
	raw_spin_unlock_irqrestore(&p->lock, irqflags);

	if (flags & PERF_EF_START)
		ddr_event_start(event, flags);
	return 0;
}

static void ddr_event_del(struct perf_event *event, int flags)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	struct hw_perf_event *hwc = &event->hw;
	unsigned long irqflags;
	bool last;

	ddr_event_stop(event, PERF_EF_UPDATE);

	raw_spin_lock_irqsave(&p->lock, irqflags);
	ddr_hw_unprogram(p, hwc->idx);
	if (hwc->idx >= DDR_NUM_GEN_COUNTERS)
		list_del_init(&event->active_entry);
	else
		p->events[hwc->idx] = NULL;
	hwc->idx = -1;
	last = !--p->active;
	raw_spin_unlock_irqrestore(&p->lock, irqflags);

	/* The callback takes p->lock, which is not held here */
	if (last)
		hrtimer_cancel(&p->timer);
}

static void ddr_event_read(struct perf_event *event)
{
	struct ddr_pmu *p = to_ddr_pmu(event->pmu);
	unsigned long irqflags;

	raw_spin_lock_irqsave(&p->lock, irqflags);
	if (!(event->hw.state & PERF_HES_STOPPED))
		ddr_update(p, event);
	raw_spin_unlock_irqrestore(&p->lock, irqflags);
}

static enum hrtimer_restart ddr_poll(struct hrtimer *timer)
{
	struct ddr_pmu *p = container_of(timer, struct ddr_pmu, timer);
	struct perf_event *event;
	unsigned long irqflags;
	u64 now;
	int i;

	raw_spin_lock_irqsave(&p->lock, irqflags);
	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++) {
		event = p->events[i];
		if (event && !(event->hw.state & PERF_HES_STOPPED))
			ddr_update(p, event);
	}
	/*
	 * A free-running counter is read once, however many events share
	 * it: the time with interrupts off grows by memory operations per
	 * event, not by register reads.
	 */
	for (i = 0; i < ARRAY_SIZE(p->fr_events); i++) {
		if (!p->fr_users[i])
			continue;
		now = ddr_read_counter(p, DDR_NUM_GEN_COUNTERS + i);
		list_for_each_entry(event, &p->fr_events[i], active_entry)
			if (!(event->hw.state & PERF_HES_STOPPED))
				ddr_fold_value(p, event, now);
	}
	raw_spin_unlock_irqrestore(&p->lock, irqflags);

	/* A new poll_period_sec takes effect here, at the next arming */
	hrtimer_forward_now(timer, ddr_poll_period());
	return HRTIMER_RESTART;
}

/* CPU hotplug */

/* The CPUs near the device: its node's, or all when it has no node */
static const struct cpumask *ddr_near_cpus(struct ddr_pmu *p)
{
	int node = dev_to_node(p->dev);

	return node == NUMA_NO_NODE ? cpu_online_mask : cpumask_of_node(node);
}

/*
 * An online CPU to own the PMU other than @except: @prefer if it is near
 * the device, else the highest-numbered near one (keeps housekeeping off
 * CPU 0), else the highest-numbered online one; nr_cpu_ids if none.
 * Caller holds the CPU hotplug lock.
 */
static unsigned int ddr_pick_cpu(struct ddr_pmu *p, unsigned int prefer,
				 unsigned int except)
{
	const struct cpumask *near = ddr_near_cpus(p);
	unsigned int target = nr_cpu_ids, c;

	if (prefer < nr_cpu_ids && prefer != except && cpu_online(prefer) &&
	    cpumask_test_cpu(prefer, near))
		return prefer;
	for_each_cpu_and(c, near, cpu_online_mask)
		if (c != except)
			target = c;
	if (target < nr_cpu_ids)
		return target;
	for_each_online_cpu(c)
		if (c != except)
			target = c;
	return target;
}

static void ddr_set_owner(struct ddr_pmu *p, unsigned int from, unsigned int to)
{
	WRITE_ONCE(p->cpu, to);
	if (to >= nr_cpu_ids) {
		p->orphan_cpu = from;	/* the events wait there */
		return;
	}
	if (from != to)
		perf_pmu_migrate_context(&p->pmu, from, to);
}

static int ddr_offline_cpu(unsigned int cpu, struct hlist_node *node)
{
	struct ddr_pmu *p = hlist_entry_safe(node, struct ddr_pmu, node);

	if (cpu != p->cpu)
		return 0;
	ddr_set_owner(p, cpu, ddr_pick_cpu(p, nr_cpu_ids, cpu));
	return 0;
}

/*
 * Restore an owner when the PMU has none, and bring the PMU back near its
 * device when a CPU of the device's node comes back.
 */
static int ddr_online_cpu(unsigned int cpu, struct hlist_node *node)
{
	struct ddr_pmu *p = hlist_entry_safe(node, struct ddr_pmu, node);
	const struct cpumask *near = ddr_near_cpus(p);

	if (p->cpu >= nr_cpu_ids)
		ddr_set_owner(p, p->orphan_cpu, cpu);
	else if (!cpumask_test_cpu(p->cpu, near) && cpumask_test_cpu(cpu, near))
		ddr_set_owner(p, p->cpu, cpu);
	return 0;
}

/* Probe */

static void ddr_hw_init(struct ddr_pmu *p)
{
	const struct ddr_variant *v = p->v;
	int i;

	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++)
		ddr_hw_unprogram(p, i);
	hwtel_writeq(&p->io, 0, v->fr_en);

	if (v->global_ctrl) {
		hwtel_writeq(&p->io, DDR_OP_MODE_MANUAL, v->op_mode);
		hwtel_writeq(&p->io, DDR_START_OP_START, v->start);
	}
}

static void ddr_hw_quiesce(struct ddr_pmu *p)
{
	const struct ddr_variant *v = p->v;
	int i;

	for (i = 0; i < DDR_NUM_GEN_COUNTERS; i++) {
		if (!v->global_ctrl)
			hwtel_writeq(&p->io, DDR_END_OP_END, ddr_reg(v, v->end, i));
		ddr_hw_unprogram(p, i);
	}
	if (v->global_ctrl)
		hwtel_writeq(&p->io, DDR_END_OP_END, v->end);
	hwtel_writeq(&p->io, 0, v->fr_en);
}

static int ddr_probe(struct platform_device *pdev)
{
	const struct platform_device_id *id = platform_get_device_id(pdev);
	const struct ddr_variant *v = device_get_match_data(&pdev->dev);
	struct resource *res;
	struct ddr_pmu *p;
	char *name;
	int ret;

	if (!v && id)
		v = (const struct ddr_variant *)id->driver_data;
	if (!v)
		return -ENODEV;

	p = devm_kzalloc(&pdev->dev, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;

	res = hwtel_io_map(pdev, &p->io);
	if (IS_ERR(res))
		return PTR_ERR(res);
	ret = hwtel_io_pin(&pdev->dev, &p->io);
	if (ret)
		return ret;

	name = devm_kasprintf(&pdev->dev, GFP_KERNEL, "mrvl_ddr_pmu_%llx",
			      (u64)res->start);
	if (!name)
		return -ENOMEM;

	p->v = v;
	p->dev = &pdev->dev;
	raw_spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->fr_events[0]);
	INIT_LIST_HEAD(&p->fr_events[1]);
	hrtimer_setup(&p->timer, ddr_poll, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);

	p->pmu = (struct pmu) {
		.module		= THIS_MODULE,
		.task_ctx_nr	= perf_invalid_context,
		.capabilities	= PERF_PMU_CAP_NO_EXCLUDE,
		.attr_groups	= v->groups,
		.attr_update	= ddr_attr_update,
		.event_init	= ddr_event_init,
		.add		= ddr_event_add,
		.del		= ddr_event_del,
		.start		= ddr_event_start,
		.stop		= ddr_event_stop,
		.read		= ddr_event_read,
	};
	hwtel_pmu_set_parent(&p->pmu, &pdev->dev);

	ddr_hw_init(p);

	platform_set_drvdata(pdev, p);

	/* The probing CPU if it is near the device (tests rely on it) */
	cpus_read_lock();
	p->cpu = ddr_pick_cpu(p, raw_smp_processor_id(), nr_cpu_ids);
	cpus_read_unlock();

	/*
	 * Register first, then let hotplug callbacks in: a callback only ever
	 * sees a registered PMU (6.1's perf_pmu_migrate_context() uses the
	 * per-CPU context that perf_pmu_register() allocates).
	 */
	ret = perf_pmu_register(&p->pmu, name, -1);
	if (ret)
		return ret;

	ret = cpuhp_state_add_instance_nocalls(ddr_cpuhp_state, &p->node);
	if (ret) {
		perf_pmu_unregister(&p->pmu);
		return ret;
	}

	/*
	 * The owner may have gone offline before the callbacks were in; from
	 * here on the callbacks follow it (the hotplug lock orders the two).
	 */
	cpus_read_lock();
	if (p->cpu >= nr_cpu_ids || !cpu_online(p->cpu))
		ddr_set_owner(p, p->cpu, ddr_pick_cpu(p, nr_cpu_ids, p->cpu));
	cpus_read_unlock();

	dev_info(&pdev->dev, "%s: %s DDR PMU at %pa\n", name, v->name,
		 &res->start);
	return 0;
}

/*
 * Only module unload removes a bound device (no bind/unbind attributes,
 * and nothing hot-removes an SoC's DSS), and the perf core holds a module
 * reference per event until its last use of the PMU: no event is left
 * here, so the PMU and its devres-allocated state may go at once.
 */
static void ddr_remove(struct platform_device *pdev)
{
	struct ddr_pmu *p = platform_get_drvdata(pdev);

	/* No callback after this, then unregister: the reverse of probe */
	cpuhp_state_remove_instance_nocalls(ddr_cpuhp_state, &p->node);
	perf_pmu_unregister(&p->pmu);
	hrtimer_cancel(&p->timer);
	ddr_hw_quiesce(p);
}

static const struct of_device_id ddr_of_match[] = {
	{ .compatible = "marvell,cn10k-ddr-pmu", .data = &ddr_cn10k },
	{ .compatible = "marvell,cn20k-ddr-pmu", .data = &ddr_cn20k },
	{ }
};
MODULE_DEVICE_TABLE(of, ddr_of_match);

static const struct acpi_device_id ddr_acpi_match[] = {
	{ "MRVL000A", (kernel_ulong_t)&ddr_cn10k },
	{ "MRVL000B", (kernel_ulong_t)&ddr_cn20k },
	{ "MRVL000C", (kernel_ulong_t)&ddr_odyssey },
	{ }
};
MODULE_DEVICE_TABLE(acpi, ddr_acpi_match);

#ifdef HWTEL_LAB
/* Devices of the hardware model (drivers/hwsim/hwtel_sim_ddr.c) */
static const struct platform_device_id ddr_id_table[] = {
	{ "cn10k-ddr-pmu-sim", (kernel_ulong_t)&ddr_cn10k },
	{ "odyssey-ddr-pmu-sim", (kernel_ulong_t)&ddr_odyssey },
	{ "cn20k-ddr-pmu-sim", (kernel_ulong_t)&ddr_cn20k },
	{ }
};
MODULE_DEVICE_TABLE(platform, ddr_id_table);
#define DDR_ID_TABLE ddr_id_table
#else
#define DDR_ID_TABLE NULL	/* hardware flavour: ACPI and OF only */
#endif

static struct platform_driver ddr_driver = {
	.driver = {
		.name = "marvell-cn10k-ddr-pmu",
		.of_match_table = ddr_of_match,
		.acpi_match_table = ddr_acpi_match,
		/*
		 * Before 6.15 the perf core uses a PMU after ->destroy(), so an
		 * unbind with events open cannot free it safely; upstream
		 * cn10k does the same.
		 */
		.suppress_bind_attrs = true,
	},
	.id_table = DDR_ID_TABLE,
	.probe = ddr_probe,
	.hwtel_platform_remove = ddr_remove,
};

static int __init ddr_pmu_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN,
				      "perf/marvell/ddr:online", ddr_online_cpu,
				      ddr_offline_cpu);
	if (ret < 0)
		return ret;
	ddr_cpuhp_state = ret;

	ret = platform_driver_register(&ddr_driver);
	if (ret)
		cpuhp_remove_multi_state(ddr_cpuhp_state);
	return ret;
}

static void __exit ddr_pmu_exit(void)
{
	platform_driver_unregister(&ddr_driver);
	cpuhp_remove_multi_state(ddr_cpuhp_state);
}

module_init(ddr_pmu_init);
module_exit(ddr_pmu_exit);

MODULE_DESCRIPTION("Marvell CN10K/Odyssey/CN20K DDR (DSS) PMU driver");
MODULE_LICENSE("GPL");
