// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel hardware-model core: owns /sys/kernel/debug/hwtel-sim/, under which
 * every model instance creates a directory named after its PMU.
 *
 * Test-only. Never load this on a machine with the real hardware.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/platform_device.h>

#include <hwtel/sim.h>

static struct dentry *hwtel_sim_root;

struct dentry *hwtel_sim_debugfs_root(void)
{
	return hwtel_sim_root;
}
EXPORT_SYMBOL_GPL(hwtel_sim_debugfs_root);

struct platform_device *
hwtel_sim_register_pdev(const struct platform_device_info *info, int node)
{
	struct platform_device *pdev;
	int err;

	pdev = platform_device_alloc(info->name, info->id);
	if (!pdev)
		return ERR_PTR(-ENOMEM);
	err = platform_device_add_resources(pdev, info->res, info->num_res);
	if (!err)
		err = platform_device_add_data(pdev, info->data, info->size_data);
	if (!err) {
		set_dev_node(&pdev->dev, node);
		err = platform_device_add(pdev);
	}
	if (err) {
		platform_device_put(pdev);
		return ERR_PTR(err);
	}
	return pdev;
}
EXPORT_SYMBOL_GPL(hwtel_sim_register_pdev);

int hwtel_sim_check_node(const char *model, int node)
{
	if (node == NUMA_NO_NODE)
		return 0;
	if (node < 0 || node >= MAX_NUMNODES || !node_online(node)) {
		pr_err("%s: numa_node %d is not an online node\n", model, node);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(hwtel_sim_check_node);

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
