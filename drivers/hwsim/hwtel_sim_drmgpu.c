// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel_sim_drmgpu: model of what a mainline DRM GPU driver (panfrost,
 * v3d, msm) offers for GPU power attribution, for hwtel gpu --source drm:
 *
 *   - per open file, the DRM client usage stats in /proc/PID/fdinfo/FD
 *     (Documentation/gpu/drm-usage-stats.rst): drm-driver, drm-client-id,
 *     drm-engine-<name> (busy ns), drm-cycles-<name>, drm-maxfreq-<name>
 *     and drm-curfreq-<name>, printed by the file's show_fdinfo, on a misc
 *     character device /dev/hwtel-sim-gpu;
 *   - a devfreq device (/sys/class/devfreq/hwtel-sim-gpu) on the OPP table
 *     200 MHz 900 mV, 300 MHz 1000 mV, 400 MHz 1100 mV (OPP debugfs
 *     opp/platform-hwtel-sim-gpu/), with the simple_ondemand governor; the
 *     model's target() sets the scripted frequency whatever the governor
 *     proposes, so trans_stat, cur_freq and the devfreq_frequency
 *     tracepoint come from the devfreq core itself.
 *
 * Script interface hwtel-sim/drmgpu/control (one command per line):
 *
 *   job CLIENT ENGINE NS   client CLIENT (its drm-client-id) ran NS ns on
 *                          ENGINE (fragment, vertex-tiler, compute) at the
 *                          current frequency: busy += NS, cycles += NS x f
 *   freq HZ                change the operating point (update_devfreq())
 *   tick NS                xe mode: the GPU timestamp advances NS ns
 *
 * Each write is one step for the fdinfo readers: no read sees a part of it.
 *
 * With the parameter xe=1 the fdinfo is xe's instead (no engine ns): per
 * engine drm-cycles-<name>, the timestamp cycles the client's jobs took (a
 * job of NS ns adds NS: the model's timestamp runs at 1 GHz), and
 * drm-total-cycles-<name>, the GPU timestamp, which moves only on "tick".
 *
 * hwtel-sim/drmgpu/clients lists "CLIENT PID READS" of the open files: the
 * PID that opened it and how often its fdinfo was read (tests wait for a
 * reader's samples with it). See Documentation/dev-tools/hwsim-mali.rst.
 *
 * Test-only.
 */

#include <linux/debugfs.h>
#include <linux/devfreq.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/pm_opp.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <hwtel/sim.h>

#define SIM_NAME		"hwtel-sim-gpu"
#define SIM_DRIVER		"hwtel_sim_gpu"
#define SIM_ENGINES		3
#define SIM_CONTROL_MAX		4096

static const char *const sim_engine[SIM_ENGINES] = {
	"fragment", "vertex-tiler", "compute",
};

static const struct {
	unsigned long hz;
	unsigned long uv;
} sim_opp[] = {
	{ 200000000, 900000 },
	{ 300000000, 1000000 },
	{ 400000000, 1100000 },
};

struct sim_client {
	struct list_head node;
	u64 id;
	pid_t pid;
	u64 busy_ns[SIM_ENGINES];
	u64 cycles[SIM_ENGINES];
	u64 ts_cycles[SIM_ENGINES];
	u64 reads;
};

static bool xe;
module_param(xe, bool, 0444);
MODULE_PARM_DESC(xe, "print xe's drm-cycles and drm-total-cycles, no drm-engine");

struct sim_gpu {
	struct mutex lock;	/* clients, next_id, cur_hz, target_hz, ts */
	struct list_head clients;
	u64 next_id;
	unsigned long cur_hz;
	unsigned long target_hz;
	u64 ts;
	struct platform_device *pdev;
	struct devfreq *df;
	struct dentry *dir;
	bool opp_added;
};

static struct sim_gpu sim;

static int sim_target(struct device *dev, unsigned long *freq, u32 flags)
{
	/* the scripted frequency, whatever the governor proposed */
	*freq = READ_ONCE(sim.target_hz);
	WRITE_ONCE(sim.cur_hz, *freq);
	return 0;
}

static int sim_get_dev_status(struct device *dev, struct devfreq_dev_status *st)
{
	st->busy_time = 1;
	st->total_time = 1;
	st->current_frequency = READ_ONCE(sim.cur_hz);
	return 0;
}

static int sim_get_cur_freq(struct device *dev, unsigned long *freq)
{
	*freq = READ_ONCE(sim.cur_hz);
	return 0;
}

static struct devfreq_dev_profile sim_profile = {
	.polling_ms = 0,
	.target = sim_target,
	.get_dev_status = sim_get_dev_status,
	.get_cur_freq = sim_get_cur_freq,
};

/* misc device: one client per open file */
static int sim_open(struct inode *inode, struct file *file)
{
	struct sim_client *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	c->pid = task_tgid_nr(current);
	mutex_lock(&sim.lock);
	c->id = ++sim.next_id;
	list_add_tail(&c->node, &sim.clients);
	mutex_unlock(&sim.lock);
	file->private_data = c;
	return 0;
}

static int sim_release(struct inode *inode, struct file *file)
{
	struct sim_client *c = file->private_data;

	mutex_lock(&sim.lock);
	list_del(&c->node);
	mutex_unlock(&sim.lock);
	kfree(c);
	return 0;
}

static void sim_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct sim_client *c = file->private_data;
	int i;

	mutex_lock(&sim.lock);
	c->reads++;
	seq_printf(m, "drm-driver:\t%s\n", SIM_DRIVER);
	seq_printf(m, "drm-client-id:\t%llu\n", c->id);
	for (i = 0; xe && i < SIM_ENGINES; i++) {
		seq_printf(m, "drm-cycles-%s:\t%llu\n", sim_engine[i], c->ts_cycles[i]);
		seq_printf(m, "drm-total-cycles-%s:\t%llu\n", sim_engine[i], sim.ts);
	}
	for (i = 0; !xe && i < SIM_ENGINES; i++) {
		seq_printf(m, "drm-engine-%s:\t%llu ns\n", sim_engine[i], c->busy_ns[i]);
		seq_printf(m, "drm-cycles-%s:\t%llu\n", sim_engine[i], c->cycles[i]);
		seq_printf(m, "drm-maxfreq-%s:\t%lu Hz\n", sim_engine[i],
			   sim_opp[ARRAY_SIZE(sim_opp) - 1].hz);
		seq_printf(m, "drm-curfreq-%s:\t%lu Hz\n", sim_engine[i], sim.cur_hz);
	}
	seq_puts(m, "drm-total-memory:\t0\n");
	mutex_unlock(&sim.lock);
}

static const struct file_operations sim_gpu_fops = {
	.owner = THIS_MODULE,
	.open = sim_open,
	.release = sim_release,
	.show_fdinfo = sim_show_fdinfo,
	.llseek = noop_llseek,
};

static struct miscdevice sim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = SIM_NAME,
	.fops = &sim_gpu_fops,
	.mode = 0666,
};

static int sim_set_freq(unsigned long hz)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sim_opp); i++)
		if (sim_opp[i].hz == hz)
			break;
	if (i == ARRAY_SIZE(sim_opp))
		return -EINVAL;
	mutex_lock(&sim.df->lock);
	WRITE_ONCE(sim.target_hz, hz);
	ret = update_devfreq(sim.df);
	mutex_unlock(&sim.df->lock);
	return ret;
}

static int sim_job(u64 id, const char *engine, u64 ns)
{
	struct sim_client *c;
	int e, ret = -ENOENT;

	lockdep_assert_held(&sim.lock);
	e = match_string(sim_engine, SIM_ENGINES, engine);
	if (e < 0)
		return -EINVAL;
	list_for_each_entry(c, &sim.clients, node) {
		if (c->id != id)
			continue;
		c->busy_ns[e] += ns;
		c->cycles[e] += div_u64(ns * (sim.cur_hz / 1000000), 1000);
		c->ts_cycles[e] += ns;
		ret = 0;
		break;
	}
	return ret;
}

static int sim_command(char *line)
{
	char *argv[4], *p = line, *tok;
	int argc = 0;
	u64 a, b;

	while ((tok = strsep(&p, " \t")) != NULL) {
		if (!*tok)
			continue;
		if (argc == ARRAY_SIZE(argv))
			return -EINVAL;
		argv[argc++] = tok;
	}
	if (!argc)
		return 0;
	if (!strcmp(argv[0], "freq") && argc == 2) {
		if (kstrtou64(argv[1], 10, &a) || a > ULONG_MAX)
			return -EINVAL;
		return sim_set_freq((unsigned long)a);
	}
	if (!strcmp(argv[0], "job") && argc == 4) {
		/* ns x MHz must not overflow: at most 10^10 ns (10 s) per job */
		if (kstrtou64(argv[1], 10, &a) || kstrtou64(argv[3], 10, &b) ||
		    b > 10000000000ull)
			return -EINVAL;
		return sim_job(a, argv[2], b);
	}
	if (!strcmp(argv[0], "tick") && argc == 2) {
		if (kstrtou64(argv[1], 10, &a) || a > 10000000000ull)
			return -EINVAL;
		sim.ts += a;
		return 0;
	}
	return -EINVAL;
}

static ssize_t sim_control_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	char *buf, *p, *line;
	int ret = 0;

	if (len > SIM_CONTROL_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = buf;
	/* the devfreq core never takes sim.lock: update_devfreq() may run under it */
	mutex_lock(&sim.lock);
	while (!ret && (line = strsep(&p, "\n")) != NULL)
		ret = sim_command(line);
	mutex_unlock(&sim.lock);
	kfree(buf);
	return ret ? ret : len;
}

static const struct file_operations sim_control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_control_write,
	.llseek = noop_llseek,
};

static int sim_clients_show(struct seq_file *m, void *unused)
{
	struct sim_client *c;

	mutex_lock(&sim.lock);
	list_for_each_entry(c, &sim.clients, node)
		seq_printf(m, "%llu %d %llu\n", c->id, c->pid, c->reads);
	mutex_unlock(&sim.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_clients);

static void sim_teardown(void)
{
	debugfs_remove_recursive(sim.dir);
	if (sim_misc.this_device)
		misc_deregister(&sim_misc);
	if (!IS_ERR_OR_NULL(sim.df))
		devfreq_remove_device(sim.df);
	if (sim.opp_added)
		dev_pm_opp_remove_all_dynamic(&sim.pdev->dev);
	if (!IS_ERR_OR_NULL(sim.pdev))
		platform_device_unregister(sim.pdev);
}

static int __init sim_drmgpu_init(void)
{
	unsigned int i;
	int ret;

	mutex_init(&sim.lock);
	INIT_LIST_HEAD(&sim.clients);
	sim.cur_hz = sim_opp[0].hz;
	sim.target_hz = sim_opp[0].hz;

	sim.pdev = platform_device_register_simple(SIM_NAME, PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(sim.pdev))
		return PTR_ERR(sim.pdev);
	sim.opp_added = true;
	for (i = 0; i < ARRAY_SIZE(sim_opp); i++) {
		ret = dev_pm_opp_add(&sim.pdev->dev, sim_opp[i].hz, sim_opp[i].uv);
		if (ret)
			goto fail;
	}
	sim_profile.initial_freq = sim_opp[0].hz;
	sim.df = devfreq_add_device(&sim.pdev->dev, &sim_profile,
				    DEVFREQ_GOV_SIMPLE_ONDEMAND, NULL);
	if (IS_ERR(sim.df)) {
		ret = PTR_ERR(sim.df);
		goto fail;
	}
	sim_misc.parent = &sim.pdev->dev;
	ret = misc_register(&sim_misc);
	if (ret) {
		sim_misc.this_device = NULL;
		goto fail;
	}
	sim.dir = debugfs_create_dir("drmgpu", hwtel_sim_debugfs_root());
	debugfs_create_file("control", 0200, sim.dir, NULL, &sim_control_fops);
	debugfs_create_file("clients", 0400, sim.dir, NULL, &sim_clients_fops);
	return 0;
fail:
	sim_teardown();
	return ret;
}

static void __exit sim_drmgpu_exit(void)
{
	sim_teardown();
	mutex_destroy(&sim.lock);
}

module_init(sim_drmgpu_init);
module_exit(sim_drmgpu_exit);

MODULE_DESCRIPTION("hwtel model of a mainline DRM GPU's fdinfo usage stats and devfreq (test only)");
MODULE_LICENSE("GPL");
