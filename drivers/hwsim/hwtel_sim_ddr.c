// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel_sim_ddr: model of the Marvell DSS (DDR controller) PMU of CN10K,
 * Odyssey and CN20K.
 *
 *   modprobe hwtel_sim_ddr variant=cn10k|odyssey|cn20k instances=N
 *
 * creates N platform devices that marvell_cn10k_ddr_pmu binds to through its
 * normal probe. Every register access of the driver lands in sim_io_read()
 * and sim_io_write(). Traffic is injected, and counters are inspected or
 * forced, through /sys/kernel/debug/hwtel-sim/<pmu name>/; see
 * Documentation/dev-tools/hwsim-ddr.rst.
 *
 * Test-only. Never load this on a machine with the real hardware.
 */

#include <linux/bits.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/numa.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <hwtel/ddr_regs.h>
#include <hwtel/sim.h>

#define SIM_MAX_INSTANCES	16
#define SIM_MAX_RATES		16
#define SIM_TRACE_LEN		64
#define SIM_NUM_FILES		(DDR_NUM_GEN_COUNTERS + 2)
#define SIM_FR_WR		0
#define SIM_FR_RD		1

static char *variant = "cn10k";
module_param(variant, charp, 0444);
MODULE_PARM_DESC(variant, "cn10k, odyssey or cn20k");

static unsigned int instances = 1;
module_param(instances, uint, 0444);
MODULE_PARM_DESC(instances, "number of DDR controllers (1-16)");

/*
 * How a CN10K generic counter reports a freeze. "saturate": the 48-bit
 * counter stops at 2^48 - 1. "flag49": the register is 49 bits; the low 48
 * bits stop at 2^48 - 1 and bit 48 is set by the first occurrence lost.
 * Odyssey and CN20K (64 bits) always saturate.
 */
static char *freeze_mode = "saturate";
module_param(freeze_mode, charp, 0444);
MODULE_PARM_DESC(freeze_mode, "saturate or flag49 (CN10K generic counters)");

static int sim_numa_node = NUMA_NO_NODE;
module_param_named(numa_node, sim_numa_node, int, 0444);
MODULE_PARM_DESC(numa_node, "NUMA node of the devices (default -1: none)");

static bool sim_flag49;
#define SIM_FLAG49		BIT_ULL(CN10K_DDR_CNT_BITS)

/* The names this hardware reports for its event signals */
struct sim_name {
	u16 id;
	const char *name;
};

static const struct sim_name sim_names_common[] = {
	{ 1, "ddr_hif_rd_or_wr_access" }, { 2, "ddr_hif_wr_access" },
	{ 3, "ddr_hif_rd_access" }, { 4, "ddr_hif_rmw_access" },
	{ 5, "ddr_hif_pri_rdaccess" }, { 6, "ddr_rd_bypass_access" },
	{ 7, "ddr_act_bypass_access" },
	{ 10, "ddr_hpri_sched_rd_crit_access" },
	{ 11, "ddr_lpri_sched_rd_crit_access" },
	{ 12, "ddr_wr_trxn_crit_access" }, { 13, "ddr_cam_active_access" },
	{ 14, "ddr_cam_rd_or_wr_access" }, { 15, "ddr_cam_rd_active_access" },
	{ 16, "ddr_cam_read" }, { 17, "ddr_cam_write" }, { 18, "ddr_cam_mwr" },
	{ 19, "ddr_precharge" }, { 20, "ddr_precharge_for_rdwr" },
	{ 21, "ddr_precharge_for_other" }, { 22, "ddr_rdwr_transitions" },
	{ 23, "ddr_write_combine" }, { 24, "ddr_war_hazard" },
	{ 25, "ddr_raw_hazard" }, { 26, "ddr_waw_hazard" },
	{ 27, "ddr_enter_selfref" }, { 31, "ddr_enter_powerdown" },
	{ 39, "ddr_refresh" }, { 40, "ddr_crit_ref" }, { 41, "ddr_spec_ref" },
	{ 42, "ddr_load_mode" },
	{ 100, "ddr_ddr_writes" }, { 101, "ddr_ddr_reads" },
	{ }
};

/* CN10K and Odyssey share 35 and 43, 44 and 47-55 */
static const struct sim_name sim_names_cn10k_ody[] = {
	{ 35, "ddr_enter_mpsm" }, { 43, "ddr_zqcl" }, { 44, "ddr_cam_wr_access" },
	{ 47, "ddr_bsm_alloc" }, { 48, "ddr_bsm_starvation" },
	{ 49, "ddr_win_limit_reached_rd" }, { 50, "ddr_win_limit_reached_wr" },
	{ 51, "ddr_dqsosc_mpc" }, { 52, "ddr_dqsosc_mrr" }, { 53, "ddr_tcr_mrr" },
	{ 54, "ddr_zqstart" }, { 55, "ddr_zqlatch" },
	{ }
};

static const struct sim_name sim_names_cn10k[] = {
	{ 8, "ddr_dif_wr_data_access" }, { 9, "ddr_dif_rd_data_access" },
	{ 45, "ddr_hpr_req_with_nocredit" }, { 46, "ddr_lpr_req_with_nocredit" },
	{ }
};

static const struct sim_name sim_names_ody[] = {
	{ 8, "ddr_dfi_wr_data_access" }, { 9, "ddr_dfi_rd_data_access" },
	{ 45, "ddr_dfi_cycles" }, { 46, "ddr_retry_fifo_full" },
	{ 56, "ddr_dfi_parity_poison" }, { 57, "ddr_wr_crc_error" },
	{ 58, "ddr_capar_error" }, { 59, "ddr_rd_crc_error" },
	{ 60, "ddr_rd_uc_ecc_error" }, { 61, "ddr_dfi_cmd_is_retry" },
	{ }
};

static const struct sim_name sim_names_cn20k[] = {
	{ 8, "ddr_dfi_wr_data_access" }, { 9, "ddr_dfi_rd_data_access" },
	{ 36, "ddr_cas_ws" }, { 37, "ddr_cas_ws_off" }, { 38, "ddr_cas_wck_sus" },
	{ 43, "ddr_rfm" }, { 44, "ddr_enter_dsm" }, { 45, "ddr_dfi_cycles" },
	{ 46, "ddr_win_limit_reached_rd" }, { 47, "ddr_win_limit_reached_wr" },
	{ 48, "ddr_dqsosc_mpc" }, { 49, "ddr_dqsosc_mrr" }, { 50, "ddr_tcr_mrr" },
	{ 58, "ddr_write32" }, { 59, "ddr_write16" }, { 60, "ddr_read32" },
	{ 61, "ddr_read16" }, { 62, "ddr_zqlatch" }, { 63, "ddr_zqstart" },
	{ }
};

enum sim_kind { SIM_CN10K, SIM_ODY, SIM_CN20K };

struct sim_variant {
	const char *name;
	const char *devname;	/* the driver's platform_device_id */
	enum sim_kind kind;
	u64 base;		/* MMIO base of instance 0 */
	u64 gen_max;		/* generic counters freeze here */
	u64 fr_mask;		/* free-running counters wrap at fr_mask + 1 */
	bool global;		/* op-mode, START, END shared by all counters */
	u32 op_mode, start, end, end_status;
	u32 cfg, cfg1, cnt;	/* counter 0; cfg1 = 0: none */
	u32 fr_en, fr_clr, fr_wr, fr_rd;
	const struct sim_name *names[3];
};

static const struct sim_variant sim_variants[] = {
	{
		.name = "cn10k", .devname = "cn10k-ddr-pmu-sim",
		.kind = SIM_CN10K, .base = 0x87e1c0000000ULL,
		.gen_max = GENMASK_ULL(CN10K_DDR_CNT_BITS - 1, 0),
		.fr_mask = GENMASK_ULL(CN10K_DDR_CNT_BITS - 1, 0),
		.global = true,
		.op_mode = CN10K_DDR_OP_MODE_CTRL,
		.start = CN10K_DDR_START_OP_CTRL,
		.end = CN10K_DDR_END_OP_CTRL,
		.end_status = CN10K_DDR_END_STATUS,
		.cfg = CN10K_DDR_CFG(0), .cnt = CN10K_DDR_CNT(0),
		.fr_en = CN10K_DDR_FREERUN_EN, .fr_clr = CN10K_DDR_FREERUN_CTRL,
		.fr_wr = CN10K_DDR_FREERUN_WR, .fr_rd = CN10K_DDR_FREERUN_RD,
		.names = { sim_names_common, sim_names_cn10k_ody,
			   sim_names_cn10k },
	}, {
		.name = "odyssey", .devname = "odyssey-ddr-pmu-sim",
		.kind = SIM_ODY, .base = 0x87e1d0000000ULL,
		.gen_max = U64_MAX, .fr_mask = U64_MAX,
		.op_mode = ODY_DDR_OP_MODE_CTRL(0),
		.start = ODY_DDR_START_OP_CTRL(0),
		.end = ODY_DDR_END_OP_CTRL(0),
		.end_status = ODY_DDR_END_STATUS,
		.cfg = ODY_DDR_CFG(0), .cnt = ODY_DDR_CNT(0),
		.fr_en = ODY_DDR_FREERUN_CTRL, .fr_clr = ODY_DDR_FREERUN_CLR,
		.fr_wr = ODY_DDR_FREERUN_WR, .fr_rd = ODY_DDR_FREERUN_RD,
		.names = { sim_names_common, sim_names_cn10k_ody, sim_names_ody },
	}, {
		.name = "cn20k", .devname = "cn20k-ddr-pmu-sim",
		.kind = SIM_CN20K, .base = 0x87e1e0000000ULL,
		.gen_max = U64_MAX, .fr_mask = U64_MAX,
		.op_mode = CN20K_DDR_OP_MODE_CTRL(0),
		.start = CN20K_DDR_START_OP_CTRL(0),
		.end = CN20K_DDR_END_OP_CTRL(0),
		.end_status = CN20K_DDR_END_STATUS,
		.cfg = CN20K_DDR_CFG(0), .cfg1 = CN20K_DDR_CFG1(0),
		.cnt = CN20K_DDR_CNT(0),
		.fr_en = CN20K_DDR_FREERUN_CTRL, .fr_clr = CN20K_DDR_FREERUN_CLR,
		.fr_wr = CN20K_DDR_FREERUN_WR, .fr_rd = CN20K_DDR_FREERUN_RD,
		.names = { sim_names_common, sim_names_cn20k },
	},
};

#define SIM_STRIDE		0x1000000ULL

/*
 * An event signal: where a counter selects it, and how many lines it has.
 * Multi-line signals (one line per rank) spread their occurrences over
 * their lines, so a counter must select every line to see them all.
 */
struct sim_signal {
	u16 id;
	s8 fr;		/* SIM_FR_WR/SIM_FR_RD, or -1 */
	bool cfg1;
	u8 bit;
	u8 lines;
};

struct sim_rate {
	struct sim_signal sig;
	u64 per_sec;
	u64 t0;		/* ktime (ns) the rate was set */
	u64 done;	/* occurrences delivered since t0 */
	u64 counted;	/* of those, added to generic counters (debugfs "counted") */
};

struct sim_trace {
	u64 ns;
	u64 val;
	u32 off;
	bool write;
};

struct sim_ddr;

struct sim_file {
	struct sim_ddr *sim;
	unsigned int idx;	/* 0-7 generic, 8 freerun_rd, 9 freerun_wr */
};

struct sim_ddr {
	const struct sim_variant *v;
	u64 base;
	char name[40];
	struct platform_device *pdev;
	struct dentry *dir;
	struct sim_file files[SIM_NUM_FILES];

	/* Taken from the driver's hrtimer and perf paths: IRQ safe, raw */
	raw_spinlock_t lock;
	u64 op_mode[DDR_NUM_GEN_COUNTERS];
	bool running[DDR_NUM_GEN_COUNTERS];
	u64 end_status;
	u64 cfg[DDR_NUM_GEN_COUNTERS];
	u64 cfg1[DDR_NUM_GEN_COUNTERS];
	u64 cnt[DDR_NUM_GEN_COUNTERS];
	u64 fr_en;
	u64 fr[2];
	struct sim_rate rates[SIM_MAX_RATES];
	unsigned int nr_rates;
	u64 reads, writes, unmapped;
	struct sim_trace trace[SIM_TRACE_LEN];
	unsigned int trace_pos;
};

/* Platform data: copied by the platform core, hence the back pointer */
struct sim_pdata {
	struct hwtel_sim_io io;
	struct sim_ddr *sim;
};

static struct sim_ddr *sims[SIM_MAX_INSTANCES];
static unsigned int nr_sims;

/*
 * Model devices never sit in the real physical address map: their windows
 * are claimed under this private root, not under iomem_resource.
 */
static struct resource sim_ddr_root = {
	.name = "hwtel-sim-ddr",
	.start = 0,
	.end = (resource_size_t)-1,
	.flags = IORESOURCE_MEM,
};

/* Event lookup */

static const struct sim_name *sim_lookup(const struct sim_variant *v,
					 const char *name, u16 id)
{
	const struct sim_name *n;
	int i;

	for (i = 0; i < ARRAY_SIZE(v->names) && v->names[i]; i++)
		for (n = v->names[i]; n->name; n++)
			if (name ? !strcmp(n->name, name) : n->id == id)
				return n;
	return NULL;
}

static void sim_signal_of(const struct sim_variant *v, u16 id,
			  struct sim_signal *sig)
{
	sig->id = id;
	sig->fr = -1;
	sig->cfg1 = false;
	sig->bit = id - 1;
	sig->lines = 1;

	if (id == 100 || id == 101) {
		sig->fr = id == 101 ? SIM_FR_RD : SIM_FR_WR;
	} else if (id == 27 || id == 31 || id == 35) {
		sig->lines = 4;
	} else if (v->kind == SIM_CN20K && id >= 62) {
		sig->cfg1 = true;	/* ZQ latch/start: CFG1 bits 20/21 */
		sig->bit = id - 42;
	}
}

/* Parse "<event name or id> <number>" */
static int sim_parse(struct sim_ddr *s, const char __user *ubuf, size_t len,
		     struct sim_signal *sig, u64 *num, const char **name)
{
	const struct sim_name *n;
	char buf[96], *p, *ev;
	u16 id;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';

	p = strim(buf);
	ev = strsep(&p, " \t");
	if (!p)
		return -EINVAL;
	p = skip_spaces(p);
	if (kstrtoull(p, 0, num))
		return -EINVAL;

	if (!kstrtou16(ev, 0, &id))
		n = sim_lookup(s->v, NULL, id);
	else
		n = sim_lookup(s->v, ev, 0);
	if (!n)
		return -EINVAL;
	sim_signal_of(s->v, n->id, sig);
	if (name)
		*name = n->name;
	return 0;
}

/* Counting. All of it with s->lock held. */

static bool sim_counting(struct sim_ddr *s, int n)
{
	int c = s->v->global ? 0 : n;

	return (s->cfg[n] & DDR_CFG_ENABLE) &&
	       s->op_mode[c] == DDR_OP_MODE_MANUAL && s->running[c];
}

/* Add @k to generic counter @n; returns how much it really grew by */
static u64 sim_gen_add(struct sim_ddr *s, int n, u64 k)
{
	u64 max = s->v->gen_max;
	u64 val = s->cnt[n] & max;

	/* Generic counters freeze at their maximum */
	if (k > max - val) {
		s->cnt[n] = max | (sim_flag49 ? SIM_FLAG49 : 0);
		return max - val;
	}
	s->cnt[n] += k;
	return k;
}

/*
 * @k occurrences of @sig; returns what the generic counters gained from
 * them, summed over the counters
 */
static u64 sim_occur(struct sim_ddr *s, const struct sim_signal *sig, u64 k)
{
	u64 sel, share, rem, sum, total = 0;
	unsigned int line;
	int n;

	if (!k)
		return 0;
	if (sig->fr >= 0) {
		if (s->fr_en & (sig->fr == SIM_FR_RD ? DDR_FREERUN_RD : DDR_FREERUN_WR))
			s->fr[sig->fr] = (s->fr[sig->fr] + k) & s->v->fr_mask;
		return 0;
	}

	share = div64_u64_rem(k, sig->lines, &rem);
	for (n = 0; n < DDR_NUM_GEN_COUNTERS; n++) {
		if (!sim_counting(s, n))
			continue;
		sel = sig->cfg1 ? s->cfg1[n] : s->cfg[n];
		sum = 0;
		for (line = 0; line < sig->lines; line++)
			if (sel & BIT_ULL(sig->bit + line))
				sum += share + (line < rem);
		total += sim_gen_add(s, n, sum);
	}
	return total;
}

/* Deliver steady traffic up to now; called before every access */
static void sim_advance(struct sim_ddr *s)
{
	u64 now = ktime_get_ns();
	struct sim_rate *r;
	u64 due;
	int i;

	for (i = 0; i < s->nr_rates; i++) {
		r = &s->rates[i];
		due = mul_u64_u64_div_u64(now - r->t0, r->per_sec, NSEC_PER_SEC);
		if (due > r->done) {
			r->counted += sim_occur(s, &r->sig, due - r->done);
			r->done = due;
		}
	}
}

/* Registers */

/* Counter index of @off in the 8-register block at @reg0, or -1 */
static int sim_idx(u32 off, u32 reg0)
{
	if (!reg0 || off < reg0 || off >= reg0 + DDR_REG_STRIDE * DDR_NUM_GEN_COUNTERS)
		return -1;
	return (off - reg0) / DDR_REG_STRIDE;
}

/* Index of a control register: 0 when global, -1 if @off is not it */
static int sim_ctl_idx(const struct sim_variant *v, u32 off, u32 reg0)
{
	if (v->global)
		return off == reg0 ? 0 : -1;
	return sim_idx(off, reg0);
}

struct sim_decode {
	int op_mode, start, end, cfg, cfg1, cnt;
};

static void sim_decode(const struct sim_variant *v, u32 off,
		       struct sim_decode *d)
{
	d->op_mode = sim_ctl_idx(v, off, v->op_mode);
	d->start = sim_ctl_idx(v, off, v->start);
	d->end = sim_ctl_idx(v, off, v->end);
	d->cfg = sim_idx(off, v->cfg);
	d->cfg1 = sim_idx(off, v->cfg1);
	d->cnt = sim_idx(off, v->cnt);
}

static bool sim_reg_read(struct sim_ddr *s, u32 off, u64 *val)
{
	const struct sim_variant *v = s->v;
	struct sim_decode d;

	sim_decode(v, off, &d);
	if (d.op_mode >= 0)
		*val = s->op_mode[d.op_mode];
	else if (d.start >= 0 || d.end >= 0 || off == v->fr_clr)
		*val = 0;	/* write-only actions */
	else if (off == v->end_status)
		*val = s->end_status;
	else if (d.cfg >= 0)
		*val = s->cfg[d.cfg];
	else if (d.cfg1 >= 0)
		*val = s->cfg1[d.cfg1];
	else if (d.cnt >= 0)
		*val = s->cnt[d.cnt];
	else if (off == v->fr_en)
		*val = s->fr_en;
	else if (off == v->fr_wr)
		*val = s->fr[SIM_FR_WR];
	else if (off == v->fr_rd)
		*val = s->fr[SIM_FR_RD];
	else
		return false;
	return true;
}

static void sim_start(struct sim_ddr *s, int n)
{
	int first = s->v->global ? 0 : n;
	int last = s->v->global ? DDR_NUM_GEN_COUNTERS - 1 : n;
	int i;

	/* START clears the counter(s) it starts */
	for (i = first; i <= last; i++)
		s->cnt[i] = 0;
	s->running[n] = true;
	s->end_status &= ~BIT_ULL(n);
}

static bool sim_reg_write(struct sim_ddr *s, u32 off, u64 val)
{
	const struct sim_variant *v = s->v;
	struct sim_decode d;

	sim_decode(v, off, &d);
	if (d.op_mode >= 0) {
		s->op_mode[d.op_mode] = val & DDR_OP_MODE_MANUAL;
	} else if (d.start >= 0) {
		if (val & DDR_START_OP_START)
			sim_start(s, d.start);
	} else if (d.end >= 0) {
		if (val & DDR_END_OP_END) {
			s->running[d.end] = false;
			s->end_status |= BIT_ULL(d.end);
		}
	} else if (d.cfg >= 0) {
		s->cfg[d.cfg] = val;
	} else if (d.cfg1 >= 0) {
		s->cfg1[d.cfg1] = val;
	} else if (off == v->fr_en) {
		s->fr_en = val & (DDR_FREERUN_WR | DDR_FREERUN_RD);
	} else if (off == v->fr_clr) {
		if (val & DDR_FREERUN_WR)
			s->fr[SIM_FR_WR] = 0;
		if (val & DDR_FREERUN_RD)
			s->fr[SIM_FR_RD] = 0;
	} else if (off == v->end_status || d.cnt >= 0 ||
		   off == v->fr_wr || off == v->fr_rd) {
		/* read-only: ignored */
	} else {
		return false;
	}
	return true;
}

static void sim_log(struct sim_ddr *s, u32 off, u64 val, bool write)
{
	struct sim_trace *t = &s->trace[s->trace_pos++ % SIM_TRACE_LEN];

	t->ns = ktime_get_ns();
	t->off = off;
	t->val = val;
	t->write = write;
}

static struct sim_ddr *sim_of(struct hwtel_sim_io *io)
{
	return container_of(io, struct sim_pdata, io)->sim;
}

static u64 sim_io_read(struct hwtel_sim_io *io, u32 off, unsigned int size)
{
	struct sim_ddr *s = sim_of(io);
	unsigned long flags;
	u64 val = 0;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	s->reads++;
	if (!sim_reg_read(s, off & ~7U, &val))
		s->unmapped++;
	if (size == 4)
		val = (u32)(val >> (8 * (off & 4)));
	sim_log(s, off, val, false);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return val;
}

static void sim_io_write(struct hwtel_sim_io *io, u32 off, u64 val,
			 unsigned int size)
{
	struct sim_ddr *s = sim_of(io);
	unsigned long flags;
	u64 cur = 0;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	s->writes++;
	sim_log(s, off, val, true);
	if (size == 4) {
		/* Merge a 32-bit write into its 64-bit register */
		unsigned int sh = 8 * (off & 4);

		sim_reg_read(s, off & ~7U, &cur);
		val = (cur & ~((u64)U32_MAX << sh)) | ((u64)(u32)val << sh);
	}
	if (!sim_reg_write(s, off & ~7U, val))
		s->unmapped++;
	raw_spin_unlock_irqrestore(&s->lock, flags);
}

/* debugfs */

static ssize_t sim_inject_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct sim_ddr *s = file->private_data;
	struct sim_signal sig;
	unsigned long flags;
	u64 count;
	int ret;

	ret = sim_parse(s, ubuf, len, &sig, &count, NULL);
	if (ret)
		return ret;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	sim_occur(s, &sig, count);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return len;
}

static const struct file_operations sim_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_inject_write,
};

static ssize_t sim_rate_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct sim_ddr *s = ((struct seq_file *)file->private_data)->private;
	struct sim_signal sig;
	struct sim_rate *r;
	unsigned long flags;
	u64 per_sec;
	int ret, i;

	ret = sim_parse(s, ubuf, len, &sig, &per_sec, NULL);
	if (ret)
		return ret;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	for (i = 0; i < s->nr_rates; i++)
		if (s->rates[i].sig.id == sig.id)
			break;
	if (!per_sec) {
		if (i < s->nr_rates)
			s->rates[i] = s->rates[--s->nr_rates];
	} else if (i == SIM_MAX_RATES) {
		ret = -ENOSPC;
	} else {
		if (i == s->nr_rates)
			s->nr_rates++;
		r = &s->rates[i];
		r->sig = sig;
		r->per_sec = per_sec;
		r->t0 = ktime_get_ns();
		r->done = 0;
		r->counted = 0;
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return ret ? ret : len;
}

static int sim_rate_show(struct seq_file *m, void *unused)
{
	struct sim_ddr *s = m->private;
	const struct sim_name *n;
	unsigned long flags;
	unsigned int i;

	/* seq_printf() does not sleep: print under the lock */
	raw_spin_lock_irqsave(&s->lock, flags);
	for (i = 0; i < s->nr_rates; i++) {
		n = sim_lookup(s->v, NULL, s->rates[i].sig.id);
		seq_printf(m, "%s %llu\n", n ? n->name : "?",
			   s->rates[i].per_sec);
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}

static int sim_rate_open(struct inode *inode, struct file *file)
{
	return single_open(file, sim_rate_show, inode->i_private);
}

static const struct file_operations sim_rate_fops = {
	.owner = THIS_MODULE,
	.open = sim_rate_open,
	.read = seq_read,
	.write = sim_rate_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/*
 * Ground truth for tests: per steady rate, the occurrences that generic
 * counters gained from it (summed over counters), delivered up to now.
 * Any write zeroes them.
 */
static int sim_counted_show(struct seq_file *m, void *unused)
{
	struct sim_ddr *s = m->private;
	const struct sim_name *n;
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	for (i = 0; i < s->nr_rates; i++) {
		n = sim_lookup(s->v, NULL, s->rates[i].sig.id);
		seq_printf(m, "%s %llu\n", n ? n->name : "?",
			   s->rates[i].counted);
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}

static int sim_counted_open(struct inode *inode, struct file *file)
{
	return single_open(file, sim_counted_show, inode->i_private);
}

static ssize_t sim_counted_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct sim_ddr *s = ((struct seq_file *)file->private_data)->private;
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	for (i = 0; i < s->nr_rates; i++)
		s->rates[i].counted = 0;
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return len;
}

static const struct file_operations sim_counted_fops = {
	.owner = THIS_MODULE,
	.open = sim_counted_open,
	.read = seq_read,
	.write = sim_counted_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int sim_counter_get(void *data, u64 *val)
{
	struct sim_file *f = data;
	struct sim_ddr *s = f->sim;
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	if (f->idx < DDR_NUM_GEN_COUNTERS)
		*val = s->cnt[f->idx];
	else
		*val = s->fr[f->idx == DDR_NUM_GEN_COUNTERS ? SIM_FR_RD : SIM_FR_WR];
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}

static int sim_counter_set(void *data, u64 val)
{
	struct sim_file *f = data;
	struct sim_ddr *s = f->sim;
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	if (f->idx < DDR_NUM_GEN_COUNTERS)
		s->cnt[f->idx] = min(val, s->v->gen_max);
	else
		s->fr[f->idx == DDR_NUM_GEN_COUNTERS ? SIM_FR_RD : SIM_FR_WR] =
			val & s->v->fr_mask;
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(sim_counter_fops, sim_counter_get, sim_counter_set,
			 "%llu\n");

static int sim_stats_show(struct seq_file *m, void *unused)
{
	struct sim_ddr *s = m->private;
	unsigned long flags;
	u64 r, w, u;

	raw_spin_lock_irqsave(&s->lock, flags);
	r = s->reads;
	w = s->writes;
	u = s->unmapped;
	raw_spin_unlock_irqrestore(&s->lock, flags);

	seq_printf(m, "reads %llu\nwrites %llu\nunmapped %llu\n", r, w, u);
	return 0;
}

static int sim_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, sim_stats_show, inode->i_private);
}

/* Any write resets the statistics and the trace */
static ssize_t sim_stats_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct sim_ddr *s = ((struct seq_file *)file->private_data)->private;
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	s->reads = 0;
	s->writes = 0;
	s->unmapped = 0;
	s->trace_pos = 0;
	memset(s->trace, 0, sizeof(s->trace));
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return len;
}

static const struct file_operations sim_stats_fops = {
	.owner = THIS_MODULE,
	.open = sim_stats_open,
	.read = seq_read,
	.write = sim_stats_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int sim_trace_show(struct seq_file *m, void *unused)
{
	struct sim_ddr *s = m->private;
	unsigned int pos, i, n;
	struct sim_trace *e;
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	pos = s->trace_pos;
	n = min_t(unsigned int, pos, SIM_TRACE_LEN);
	for (i = pos - n; i != pos; i++) {
		e = &s->trace[i % SIM_TRACE_LEN];
		seq_printf(m, "%llu %c 0x%05x 0x%llx\n", e->ns,
			   e->write ? 'W' : 'R', e->off, e->val);
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_trace);

static int sim_regs_show(struct seq_file *m, void *unused)
{
	struct sim_ddr *s = m->private;
	unsigned long flags;
	int n, k;

	raw_spin_lock_irqsave(&s->lock, flags);
	sim_advance(s);
	seq_printf(m, "variant %s\nend_status 0x%llx\nfreerun_en 0x%llx\n",
		   s->v->name, s->end_status, s->fr_en);
	seq_printf(m, "freerun_rd %llu\nfreerun_wr %llu\n",
		   s->fr[SIM_FR_RD], s->fr[SIM_FR_WR]);
	for (n = 0; n < DDR_NUM_GEN_COUNTERS; n++) {
		k = s->v->global ? 0 : n;
		seq_printf(m, "counter%d op_mode %llu running %d cfg 0x%016llx cfg1 0x%016llx value %llu\n",
			   n, s->op_mode[k], s->running[k], s->cfg[n],
			   s->cfg1[n], s->cnt[n]);
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_regs);

/* Instances */

static void sim_destroy(struct sim_ddr *s)
{
	if (!IS_ERR_OR_NULL(s->pdev))
		platform_device_unregister(s->pdev);
	debugfs_remove_recursive(s->dir);
	kfree(s);
}

static struct sim_ddr *sim_create(const struct sim_variant *v, unsigned int i)
{
	struct platform_device_info info = { };
	struct sim_pdata pdata = { };
	struct resource res = { };
	char fname[16];
	struct sim_ddr *s;
	int n, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	raw_spin_lock_init(&s->lock);
	s->v = v;
	s->base = v->base + i * SIM_STRIDE;
	snprintf(s->name, sizeof(s->name), "mrvl_ddr_pmu_%llx", s->base);

	s->dir = debugfs_create_dir(s->name, hwtel_sim_debugfs_root());
	debugfs_create_file("inject", 0200, s->dir, s, &sim_inject_fops);
	debugfs_create_file("rate", 0600, s->dir, s, &sim_rate_fops);
	debugfs_create_file("counted", 0600, s->dir, s, &sim_counted_fops);
	for (n = 0; n < SIM_NUM_FILES; n++) {
		s->files[n].sim = s;
		s->files[n].idx = n;
		if (n < DDR_NUM_GEN_COUNTERS)
			snprintf(fname, sizeof(fname), "counter%d", n);
		else
			strscpy(fname, n == DDR_NUM_GEN_COUNTERS ?
				"freerun_rd" : "freerun_wr", sizeof(fname));
		debugfs_create_file_unsafe(fname, 0600, s->dir, &s->files[n],
					   &sim_counter_fops);
	}
	debugfs_create_file("stats", 0600, s->dir, s, &sim_stats_fops);
	debugfs_create_file("trace", 0400, s->dir, s, &sim_trace_fops);
	debugfs_create_file("regs", 0400, s->dir, s, &sim_regs_fops);

	res.start = s->base;
	res.end = s->base + DDR_REG_WINDOW - 1;
	res.flags = IORESOURCE_MEM;
	res.parent = &sim_ddr_root;
	pdata.io.owner = THIS_MODULE;
	pdata.io.read = sim_io_read;
	pdata.io.write = sim_io_write;
	pdata.sim = s;
	info.name = v->devname;
	info.id = i;
	info.res = &res;
	info.num_res = 1;
	info.data = &pdata;
	info.size_data = sizeof(pdata);

	s->pdev = hwtel_sim_register_pdev(&info, sim_numa_node);
	if (IS_ERR(s->pdev)) {
		err = PTR_ERR(s->pdev);
		pr_err("%s: cannot register device: %d\n", s->name, err);
		sim_destroy(s);
		return ERR_PTR(err);
	}
	return s;
}

static void sim_destroy_all(void)
{
	while (nr_sims)
		sim_destroy(sims[--nr_sims]);
}

static int __init sim_ddr_init(void)
{
	const struct sim_variant *v = NULL;
	struct sim_ddr *s;
	int i;

	for (i = 0; i < ARRAY_SIZE(sim_variants); i++)
		if (sysfs_streq(variant, sim_variants[i].name))
			v = &sim_variants[i];
	if (!v || !instances || instances > SIM_MAX_INSTANCES) {
		pr_err("hwtel_sim_ddr: need variant=cn10k|odyssey|cn20k and instances=1..%d\n",
		       SIM_MAX_INSTANCES);
		return -EINVAL;
	}
	if (sysfs_streq(freeze_mode, "flag49")) {
		sim_flag49 = v->kind == SIM_CN10K;
	} else if (!sysfs_streq(freeze_mode, "saturate")) {
		pr_err("hwtel_sim_ddr: freeze_mode must be saturate or flag49\n");
		return -EINVAL;
	}
	if (hwtel_sim_check_node("hwtel_sim_ddr", sim_numa_node))
		return -EINVAL;

	for (i = 0; i < instances; i++) {
		s = sim_create(v, i);
		if (IS_ERR(s))
			break;
		sims[nr_sims++] = s;
	}
	if (!nr_sims)
		return PTR_ERR(s);
	/*
	 * A device already made may be bound, with perf events open on it:
	 * removing it now would free its PMU under them (before 6.15), so
	 * keep what was made.
	 */
	if (nr_sims < instances)
		pr_warn("hwtel_sim_ddr: %u of %u instances made: %pe\n",
			nr_sims, instances, s);
	return 0;
}

static void __exit sim_ddr_exit(void)
{
	sim_destroy_all();
}

module_init(sim_ddr_init);
module_exit(sim_ddr_exit);

MODULE_DESCRIPTION("hwtel model of the Marvell DSS (DDR) PMU (test only)");
MODULE_LICENSE("GPL");
