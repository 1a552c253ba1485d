// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel hardware-model core: owns /sys/kernel/debug/hwtel-sim/, under which
 * every model instance creates a directory named after its PMU.
 *
 * Test-only. Never load this on a machine with the real hardware.
 */

#include <linux/debugfs.h>
#include <linux/module.h>

#include <hwtel/sim.h>

static struct dentry *hwtel_sim_root;

struct dentry *hwtel_sim_debugfs_root(void)
{
	return hwtel_sim_root;
}
EXPORT_SYMBOL_GPL(hwtel_sim_debugfs_root);

static int __init hwtel_sim_init(void)
{
	hwtel_sim_root = debugfs_create_dir("hwtel-sim", NULL);
	return 0;
}

static void __exit hwtel_sim_exit(void)
{
	debugfs_remove(hwtel_sim_root);
}

module_init(hwtel_sim_init);
module_exit(hwtel_sim_exit);

MODULE_DESCRIPTION("hwtel hardware model core (test only)");
MODULE_LICENSE("GPL");
