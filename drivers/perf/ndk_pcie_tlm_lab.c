// SPDX-License-Identifier: GPL-2.0
/*
 * NDK PCIE_TELEMETRY_MI perf PMU, lab flavour only: how long the driver
 * keeps interrupts off. Every hold of ndk_tlm::lock is timed with
 * local_clock() and kept per holding function, so that make bench can report
 * the worst time with interrupts off of each path (the SNAPSHOT handshake,
 * a chunk of a fold, a perf group read...). The hardware flavour does not
 * build this file.
 *
 * debugfs ndk_pcie_tlm/<pmu>/lock_hold: one line per function,
 * "<function> <max ns> <total ns> <holds> <max reads> <total reads>", the
 * reads being the register reads made in a hold (counted exactly, through
 * the model's per-CPU count: with interrupts off nothing else runs on the
 * CPU); writing "0" forgets them.
 *
 * debugfs ndk_pcie_tlm/<pmu>/snap_gap_ns: the least time between the arrival
 * of one SNAPSHOT and the next command (read and write; 0 lets every call
 * write a SNAPSHOT, as a driver without the spacing would), for the
 * starvation tests.
 *
 * debugfs ndk_pcie_tlm/<pmu>/stamp_ns_max: the widest pair of clock reads
 * around a SNAPSHOT's write (ndk_tlm::cmd_ns, before the write, and
 * cmd_seen_ns, after the read that follows it) since the driver bound or
 * "0" was written. The block takes its copy between the two, so a copy's
 * snapshot_ns is off by at most this: the tests' bound on it. Under TCG a
 * host that stalls the vCPU widens a pair by the stall.
 *
 * Module parameter lab_first_owner (-1: off): the CPU a probe takes as its
 * first pick of the owner, when online, standing in for a pick made while
 * the device's node had no CPU online; the probe must pick again once its
 * hotplug instance is added (selftests/pcie/hotplug_probe.sh).
 *
 * debugfs ndk_pcie_tlm/close_gate widens the window between an event's
 * ->destroy() and the perf core's last use of its PMU, for the removal
 * tests: after "1" is written, every ->destroy() waits at its end until
 * "0" is written. Reading gives "<armed> <destroys waiting>".
 */
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "ndk_pcie_tlm.h"

/* the lock is held with interrupts off and never nests: one start per CPU */
static DEFINE_PER_CPU(u64, ndk_tlm_hold_t0);
static DEFINE_PER_CPU(unsigned long, ndk_tlm_hold_r0);
static struct dentry *ndk_tlm_dbg_root;

void ndk_tlm_hold_begin(struct ndk_tlm *tlm)
{
	__this_cpu_write(ndk_tlm_hold_r0, hwtel_io_reads(&tlm->io));
	__this_cpu_write(ndk_tlm_hold_t0, local_clock());
}

void ndk_tlm_hold_end(struct ndk_tlm *tlm, const char *site)
{
	u64 dt = local_clock() - __this_cpu_read(ndk_tlm_hold_t0);
	u64 reads = hwtel_io_reads(&tlm->io) - __this_cpu_read(ndk_tlm_hold_r0);
	struct ndk_tlm_hold *h;
	unsigned int i;

	for (i = 0; i < NDK_TLM_HOLD_SITES; i++) {
		h = &tlm->hold[i];
		if (h->site == site || !h->site)
			break;
	}
	if (i == NDK_TLM_HOLD_SITES)
		return;
	h->site = site;
	h->max_ns = max(h->max_ns, dt);
	h->total_ns += dt;
	h->count++;
	h->max_reads = max(h->max_reads, reads);
	h->total_reads += reads;
}

static int ndk_tlm_hold_show(struct seq_file *m, void *v)
{
	struct ndk_tlm_hold hold[NDK_TLM_HOLD_SITES];
	struct ndk_tlm *tlm = m->private;
	unsigned long flags;
	unsigned int i;

	/* not timed itself: a copy under the bare lock */
	raw_spin_lock_irqsave(&tlm->lock, flags);
	memcpy(hold, tlm->hold, sizeof(hold));
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	for (i = 0; i < NDK_TLM_HOLD_SITES && hold[i].site; i++)
		seq_printf(m, "%s %llu %llu %llu %llu %llu\n", hold[i].site,
			   hold[i].max_ns, hold[i].total_ns, hold[i].count,
			   hold[i].max_reads, hold[i].total_reads);
	return 0;
}

static int ndk_tlm_hold_open(struct inode *inode, struct file *file)
{
	return single_open(file, ndk_tlm_hold_show, inode->i_private);
}

static ssize_t ndk_tlm_hold_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct ndk_tlm *tlm = file_inode(file)->i_private;
	unsigned long flags;
	char buf[4] = "";

	if (len > sizeof(buf) - 1 || copy_from_user(buf, ubuf, len))
		return -EINVAL;
	if (strcmp(strim(buf), "0"))
		return -EINVAL;
	raw_spin_lock_irqsave(&tlm->lock, flags);
	memset(tlm->hold, 0, sizeof(tlm->hold));
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	return len;
}

static const struct file_operations ndk_tlm_hold_fops = {
	.owner = THIS_MODULE,
	.open = ndk_tlm_hold_open,
	.read = seq_read,
	.write = ndk_tlm_hold_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int ndk_tlm_gap_get(void *data, u64 *val)
{
	struct ndk_tlm *tlm = data;

	*val = READ_ONCE(tlm->snap_gap_ns);
	return 0;
}

static int ndk_tlm_gap_set(void *data, u64 val)
{
	struct ndk_tlm *tlm = data;

	WRITE_ONCE(tlm->snap_gap_ns, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ndk_tlm_gap_fops, ndk_tlm_gap_get, ndk_tlm_gap_set,
			 "%llu\n");

static int lab_first_owner = -1;
module_param(lab_first_owner, int, 0444);
MODULE_PARM_DESC(lab_first_owner, "lab: the probe's first pick of the owner CPU (-1: its own)");

unsigned int ndk_tlm_lab_first_owner(unsigned int cpu)
{
	if (lab_first_owner >= 0 && lab_first_owner < nr_cpu_ids &&
	    cpu_online(lab_first_owner))
		return lab_first_owner;
	return cpu;
}

void ndk_tlm_lab_stamp(struct ndk_tlm *tlm)
{
	lockdep_assert_held(&tlm->lock);
	tlm->stamp_max_ns = max(tlm->stamp_max_ns, tlm->cmd_seen_ns - tlm->cmd_ns);
}

static int ndk_tlm_stamp_get(void *data, u64 *val)
{
	struct ndk_tlm *tlm = data;
	unsigned long flags;

	raw_spin_lock_irqsave(&tlm->lock, flags);
	*val = tlm->stamp_max_ns;
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	return 0;
}

static int ndk_tlm_stamp_set(void *data, u64 val)
{
	struct ndk_tlm *tlm = data;
	unsigned long flags;

	if (val)
		return -EINVAL;
	raw_spin_lock_irqsave(&tlm->lock, flags);
	tlm->stamp_max_ns = 0;
	raw_spin_unlock_irqrestore(&tlm->lock, flags);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ndk_tlm_stamp_fops, ndk_tlm_stamp_get,
			 ndk_tlm_stamp_set, "%llu\n");

static DECLARE_WAIT_QUEUE_HEAD(ndk_tlm_gate_wq);
static bool ndk_tlm_gate_armed;
static atomic_t ndk_tlm_gate_waiting = ATOMIC_INIT(0);

void ndk_tlm_lab_close_gate(void)
{
	if (!READ_ONCE(ndk_tlm_gate_armed))
		return;
	atomic_inc(&ndk_tlm_gate_waiting);
	wait_event(ndk_tlm_gate_wq, !READ_ONCE(ndk_tlm_gate_armed));
	atomic_dec(&ndk_tlm_gate_waiting);
}

static int ndk_tlm_gate_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%d %d\n", READ_ONCE(ndk_tlm_gate_armed),
		   atomic_read(&ndk_tlm_gate_waiting));
	return 0;
}

static int ndk_tlm_gate_open(struct inode *inode, struct file *file)
{
	return single_open(file, ndk_tlm_gate_show, NULL);
}

static ssize_t ndk_tlm_gate_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	bool armed;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &armed);
	if (ret)
		return ret;
	WRITE_ONCE(ndk_tlm_gate_armed, armed);
	/* wake_up_all() takes the queue's lock: no lost wakeup */
	if (!armed)
		wake_up_all(&ndk_tlm_gate_wq);
	return len;
}

static const struct file_operations ndk_tlm_gate_fops = {
	.owner = THIS_MODULE,
	.open = ndk_tlm_gate_open,
	.read = seq_read,
	.write = ndk_tlm_gate_write,
	.llseek = seq_lseek,
	.release = single_release,
};

void ndk_tlm_lab_add(struct ndk_tlm *tlm)
{
	tlm->dbg = debugfs_create_dir(tlm->name, ndk_tlm_dbg_root);
	debugfs_create_file("lock_hold", 0600, tlm->dbg, tlm,
			    &ndk_tlm_hold_fops);
	debugfs_create_file_unsafe("snap_gap_ns", 0600, tlm->dbg, tlm,
				   &ndk_tlm_gap_fops);
	debugfs_create_file_unsafe("stamp_ns_max", 0600, tlm->dbg, tlm,
				   &ndk_tlm_stamp_fops);
}

void ndk_tlm_lab_del(struct ndk_tlm *tlm)
{
	debugfs_remove_recursive(tlm->dbg);
	tlm->dbg = NULL;
}

void ndk_tlm_lab_init(void)
{
	ndk_tlm_dbg_root = debugfs_create_dir("ndk_pcie_tlm", NULL);
	debugfs_create_file("close_gate", 0600, ndk_tlm_dbg_root, NULL,
			    &ndk_tlm_gate_fops);
}

void ndk_tlm_lab_exit(void)
{
	debugfs_remove_recursive(ndk_tlm_dbg_root);
}
