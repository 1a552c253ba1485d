// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel_sim_mali: model of the internal-profiling interface of the Mali
 * Utgard (Mali-400 class) kernel driver, for hwtel gpu.
 *
 *   modprobe hwtel_sim_mali [buffer_size=N]
 *
 * provides the driver's debugfs files
 *
 *   mali/profiling/proc/default/enable   "1" turns profiling on, "0" off
 *   mali/profiling/record                "1" clears the buffer and records,
 *                                        "0" stops (needs enable = 1)
 *   mali/profiling/events                the recorded events, one line of
 *                                        seven decimal numbers each; empty
 *                                        while recording
 *
 * and a script interface, hwtel-sim/mali/control, through which tests make
 * the "GPU" run jobs and change its operating point; see
 * Documentation/dev-tools/hwsim-mali.rst. Events carry the UNIX time in ns
 * (ktime_get_real_ns()) at which they happen; an event is recorded when
 * recording was on at that time.
 *
 * Test-only. Never load this on a machine with a Mali GPU.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <hwtel/sim.h>

#define SIM_TYPE_SINGLE		0
#define SIM_TYPE_START		1
#define SIM_TYPE_STOP		2
#define SIM_CH_SOFTWARE		0
#define SIM_CH_GP0		1
#define SIM_CH_PP0		5
#define SIM_CH_GPU		21
#define SIM_SW_FREQ		4
#define SIM_SW_VOLTS		5
#define SIM_GPU_FREQ_VOLT	10
#define SIM_TEXT_MAX		128
#define SIM_CONTROL_MAX		4096
#define SIM_PENDING_MAX		65536

static unsigned int buffer_size = 16384;
module_param(buffer_size, uint, 0444);
MODULE_PARM_DESC(buffer_size, "events the recording buffer holds (1-1048576)");

static inline u32 sim_id(u32 type, u32 ch, u32 data)
{
	return type << 24 | ch << 16 | data;
}

struct sim_ev {
	u64 ts;
	u32 id;
	u32 d[5];
	char *text;		/* a verbatim (malformed) line instead */
};

struct sim_pending {
	struct list_head node;
	struct sim_ev ev;
};

struct sim_mali {
	struct mutex lock;	/* everything below */
	bool enabled;
	bool recording;
	u64 rec_start;
	struct list_head pending;	/* sorted by time, then by submission */
	unsigned int npending;
	struct sim_ev *buf;
	unsigned int nbuf;
	u64 recorded, dropped, discarded;
	u32 lose_stop;		/* channels whose next STOP is lost (BIT(ch)) */
	struct dentry *mali_dir, *sim_dir;
};

static struct sim_mali sim;

static void sim_ev_free(struct sim_ev *e)
{
	kfree(e->text);
	e->text = NULL;
}

/*
 * A STOP armed by "lose stop UNIT" is lost as one in a record gap is: not
 * recorded, counted as discarded (not as dropped). Disarms the unit.
 */
static bool sim_lose(const struct sim_ev *e)
{
	u32 ch = e->id >> 16 & 0xff;

	if (e->text || (e->id >> 24 & 0xf) != SIM_TYPE_STOP || ch >= 32 ||
	    !(sim.lose_stop & BIT(ch)))
		return false;
	sim.lose_stop &= ~BIT(ch);
	return true;
}

/* Move the events that have happened by @now to the buffer (or drop them) */
static void sim_advance(u64 now)
{
	struct sim_pending *p, *n;

	lockdep_assert_held(&sim.lock);
	list_for_each_entry_safe(p, n, &sim.pending, node) {
		if (p->ev.ts > now)
			break;
		list_del(&p->node);
		sim.npending--;
		if (sim_lose(&p->ev)) {
			sim.discarded++;
		} else if (sim.recording && p->ev.ts >= sim.rec_start) {
			if (sim.nbuf < buffer_size) {
				sim.buf[sim.nbuf++] = p->ev;
				p->ev.text = NULL;
				sim.recorded++;
			} else {
				sim.dropped++;
			}
		} else {
			sim.discarded++;
		}
		sim_ev_free(&p->ev);
		kfree(p);
	}
}

static void sim_clear_buffer(void)
{
	unsigned int i;

	for (i = 0; i < sim.nbuf; i++)
		sim_ev_free(&sim.buf[i]);
	sim.nbuf = 0;
}

static void sim_record(bool on)
{
	u64 now = ktime_get_real_ns();

	sim_advance(now);
	if (on) {
		sim_clear_buffer();
		sim.recorded = 0;
		sim.dropped = 0;
		sim.rec_start = now;
	}
	sim.recording = on;
}

/* Insert after every event of the same time: same-time events keep order */
static int sim_schedule(u64 ts, u32 id, const u32 *d, const char *text)
{
	struct sim_pending *p, *pos;

	lockdep_assert_held(&sim.lock);
	if (sim.npending >= SIM_PENDING_MAX)
		return -ENOSPC;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->ev.ts = ts;
	p->ev.id = id;
	if (d)
		memcpy(p->ev.d, d, sizeof(p->ev.d));
	if (text) {
		p->ev.text = kstrdup(text, GFP_KERNEL);
		if (!p->ev.text) {
			kfree(p);
			return -ENOMEM;
		}
	}
	list_for_each_entry_reverse(pos, &sim.pending, node) {
		if (pos->ev.ts <= ts)
			break;
	}
	list_add(&p->node, &pos->node);
	sim.npending++;
	return 0;
}

static void sim_drop_pending(void)
{
	struct sim_pending *p, *n;

	list_for_each_entry_safe(p, n, &sim.pending, node) {
		list_del(&p->node);
		sim_ev_free(&p->ev);
		kfree(p);
	}
	sim.npending = 0;
}

/* control */

static int sim_unit_channel(const char *s, u32 *ch)
{
	unsigned int n;

	if (!strcmp(s, "GP0")) {
		*ch = SIM_CH_GP0;
		return 0;
	}
	if (strlen(s) == 3 && s[0] == 'P' && s[1] == 'P' && s[2] >= '0' && s[2] <= '7') {
		n = s[2] - '0';
		*ch = SIM_CH_PP0 + n;
		return 0;
	}
	return -EINVAL;
}

static int sim_time(u64 base, const char *s, u64 *ts)
{
	s64 off;
	int ret = kstrtos64(s, 10, &off);

	if (ret)
		return ret;
	if (off < 0 && (u64)-off > base)
		return -ERANGE;
	*ts = base + off;
	return 0;
}

#define SIM_MAX_ARGS	8

/* One command line; @base is the time of the write() */
static int sim_command(char *line, u64 base)
{
	char *argv[SIM_MAX_ARGS], *text = NULL, *tok;
	u32 d[5] = { 0 }, ch, v1, v2, pid;
	int argc = 0, ret, i;
	u64 ts, dur;

	line = strim(line);
	if (!*line || *line == '#')
		return 0;
	if (!strncmp(line, "text ", 5)) {
		/* text OFFSET REST-OF-LINE: a verbatim line in the events file */
		line += 5;
		tok = strsep(&line, " ");
		if (!line || strlen(line) >= SIM_TEXT_MAX || strchr(line, '\n'))
			return -EINVAL;
		ret = sim_time(base, tok, &ts);
		if (ret)
			return ret;
		return sim_schedule(ts, 0, NULL, line);
	}
	while ((tok = strsep(&line, " \t")) != NULL) {
		if (!*tok)
			continue;
		if (argc == SIM_MAX_ARGS)
			return -E2BIG;
		argv[argc++] = tok;
	}
	if (!strcmp(argv[0], "reset") && argc == 1) {
		sim_drop_pending();
		sim_clear_buffer();
		sim.lose_stop = 0;
		return 0;
	}
	if (!strcmp(argv[0], "lose") && argc == 3 && !strcmp(argv[1], "stop")) {
		/* lose stop UNIT: the next STOP on UNIT is lost as in a record gap */
		if (sim_unit_channel(argv[2], &ch))
			return -EINVAL;
		sim.lose_stop |= BIT(ch);
		return 0;
	}
	if (!strcmp(argv[0], "job") && argc == 5) {
		/* job PID|self UNIT START DURATION (ns from the write) */
		if (!strcmp(argv[1], "self"))
			pid = task_tgid_nr(current);
		else if (kstrtou32(argv[1], 10, &pid))
			return -EINVAL;
		ret = sim_unit_channel(argv[2], &ch);
		if (!ret)
			ret = sim_time(base, argv[3], &ts);
		if (!ret)
			ret = kstrtou64(argv[4], 10, &dur);
		if (ret)
			return -EINVAL;
		d[0] = pid;
		ret = sim_schedule(ts, sim_id(SIM_TYPE_START, ch, 0), d, text);
		if (ret)
			return ret;
		d[0] = 0;
		return sim_schedule(ts + dur, sim_id(SIM_TYPE_STOP, ch, 0), d, text);
	}
	if ((!strcmp(argv[0], "freq") || !strcmp(argv[0], "volt")) && argc == 3) {
		if (sim_time(base, argv[1], &ts) || kstrtou32(argv[2], 10, &v1))
			return -EINVAL;
		d[0] = v1;
		return sim_schedule(ts, sim_id(SIM_TYPE_SINGLE, SIM_CH_SOFTWARE,
					       argv[0][0] == 'f' ? SIM_SW_FREQ :
					       SIM_SW_VOLTS), d, NULL);
	}
	if (!strcmp(argv[0], "freqvolt") && argc == 4) {
		if (sim_time(base, argv[1], &ts) || kstrtou32(argv[2], 10, &v1) ||
		    kstrtou32(argv[3], 10, &v2))
			return -EINVAL;
		d[0] = v1;
		d[1] = v2;
		return sim_schedule(ts, sim_id(SIM_TYPE_SINGLE, SIM_CH_GPU,
					       SIM_GPU_FREQ_VOLT), d, NULL);
	}
	if (!strcmp(argv[0], "event") && argc == 8) {
		/* event OFFSET ID D0 D1 D2 D3 D4 */
		if (sim_time(base, argv[1], &ts) || kstrtou32(argv[2], 10, &v1))
			return -EINVAL;
		for (i = 0; i < 5; i++)
			if (kstrtou32(argv[3 + i], 10, &d[i]))
				return -EINVAL;
		return sim_schedule(ts, v1, d, NULL);
	}
	return -EINVAL;
}

static ssize_t sim_control_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	u64 base = ktime_get_real_ns();
	char *buf, *p, *line;
	int ret = 0;

	if (len >= SIM_CONTROL_MAX)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = buf;
	mutex_lock(&sim.lock);
	sim_advance(base);
	while (!ret && (line = strsep(&p, "\n")) != NULL)
		ret = sim_command(line, base);
	sim_advance(ktime_get_real_ns());
	mutex_unlock(&sim.lock);
	kfree(buf);
	return ret ? ret : len;
}

static const struct file_operations sim_control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sim_control_write,
};

static int sim_stats_show(struct seq_file *m, void *unused)
{
	mutex_lock(&sim.lock);
	sim_advance(ktime_get_real_ns());
	seq_printf(m, "enabled %d\nrecording %d\nbuffered %u\nrecorded %llu\ndropped %llu\npending %u\ndiscarded %llu\nlose_stop %#x\n",
		   sim.enabled, sim.recording, sim.nbuf, sim.recorded,
		   sim.dropped, sim.npending, sim.discarded, sim.lose_stop);
	mutex_unlock(&sim.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_stats);

/* mali/profiling/ */

static ssize_t sim_bool_read(char __user *ubuf, size_t len, loff_t *ppos, bool v)
{
	char s[3] = { v ? '1' : '0', '\n', '\0' };

	return simple_read_from_buffer(ubuf, len, ppos, s, 2);
}

static int sim_bool_parse(const char __user *ubuf, size_t len, bool *v)
{
	char s[8];

	if (!len || len >= sizeof(s))
		return -EINVAL;
	if (copy_from_user(s, ubuf, len))
		return -EFAULT;
	s[len] = '\0';
	strim(s);
	if (!strcmp(s, "1"))
		*v = true;
	else if (!strcmp(s, "0"))
		*v = false;
	else
		return -EINVAL;
	return 0;
}

static ssize_t sim_enable_read(struct file *file, char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	bool v;

	mutex_lock(&sim.lock);
	v = sim.enabled;
	mutex_unlock(&sim.lock);
	return sim_bool_read(ubuf, len, ppos, v);
}

static ssize_t sim_enable_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	bool v;
	int ret = sim_bool_parse(ubuf, len, &v);

	if (ret)
		return ret;
	mutex_lock(&sim.lock);
	if (!v && sim.recording)
		sim_record(false);
	sim.enabled = v;
	mutex_unlock(&sim.lock);
	return len;
}

static const struct file_operations sim_enable_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sim_enable_read,
	.write = sim_enable_write,
	.llseek = default_llseek,
};

static ssize_t sim_record_read(struct file *file, char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	bool v;

	mutex_lock(&sim.lock);
	v = sim.recording;
	mutex_unlock(&sim.lock);
	return sim_bool_read(ubuf, len, ppos, v);
}

static ssize_t sim_record_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	bool v;
	int ret = sim_bool_parse(ubuf, len, &v);

	if (ret)
		return ret;
	mutex_lock(&sim.lock);
	if (!sim.enabled)
		ret = -EINVAL;
	else if (v != sim.recording)
		sim_record(v);
	mutex_unlock(&sim.lock);
	return ret ? ret : len;
}

static const struct file_operations sim_record_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sim_record_read,
	.write = sim_record_write,
	.llseek = default_llseek,
};

/* events: the lock is held from start() to stop() */
static void *sim_events_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&sim.lock);
	if (sim.recording || *pos >= sim.nbuf)
		return NULL;
	return &sim.buf[*pos];
}

static void *sim_events_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return *pos < sim.nbuf ? &sim.buf[*pos] : NULL;
}

static void sim_events_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&sim.lock);
}

static int sim_events_show(struct seq_file *m, void *v)
{
	const struct sim_ev *e = v;

	if (e->text)
		seq_printf(m, "%s\n", e->text);
	else
		seq_printf(m, "%llu %u %u %u %u %u %u\n", e->ts, e->id, e->d[0],
			   e->d[1], e->d[2], e->d[3], e->d[4]);
	return 0;
}

static const struct seq_operations sim_events_sops = {
	.start = sim_events_start,
	.next = sim_events_next,
	.stop = sim_events_stop,
	.show = sim_events_show,
};
DEFINE_SEQ_ATTRIBUTE(sim_events);

static int __init sim_mali_init(void)
{
	struct dentry *prof, *proc, *def;

	if (!buffer_size || buffer_size > 1048576) {
		pr_err("hwtel_sim_mali: buffer_size must be 1..1048576\n");
		return -EINVAL;
	}
	mutex_init(&sim.lock);
	INIT_LIST_HEAD(&sim.pending);
	sim.buf = kvcalloc(buffer_size, sizeof(*sim.buf), GFP_KERNEL);
	if (!sim.buf)
		return -ENOMEM;

	sim.mali_dir = debugfs_create_dir("mali", NULL);
	prof = debugfs_create_dir("profiling", sim.mali_dir);
	proc = debugfs_create_dir("proc", prof);
	def = debugfs_create_dir("default", proc);
	debugfs_create_file("enable", 0600, def, NULL, &sim_enable_fops);
	debugfs_create_file("record", 0600, prof, NULL, &sim_record_fops);
	debugfs_create_file("events", 0400, prof, NULL, &sim_events_fops);

	sim.sim_dir = debugfs_create_dir("mali", hwtel_sim_debugfs_root());
	debugfs_create_file("control", 0200, sim.sim_dir, NULL, &sim_control_fops);
	debugfs_create_file("stats", 0400, sim.sim_dir, NULL, &sim_stats_fops);
	return 0;
}

static void __exit sim_mali_exit(void)
{
	debugfs_remove_recursive(sim.sim_dir);
	debugfs_remove_recursive(sim.mali_dir);
	sim_drop_pending();
	sim_clear_buffer();
	kvfree(sim.buf);
	mutex_destroy(&sim.lock);
}

module_init(sim_mali_init);
module_exit(sim_mali_exit);

MODULE_DESCRIPTION("hwtel model of the Mali Utgard internal profiling (test only)");
MODULE_LICENSE("GPL");
