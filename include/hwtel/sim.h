/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the hwtel hardware models (drivers/hwsim/).
 */
#ifndef _HWTEL_SIM_H
#define _HWTEL_SIM_H

#include <hwtel/io.h>

#ifndef HWTEL_LAB
#error "the hardware models build only in the lab flavour (HWTEL_LAB=1)"
#endif

struct dentry;
struct platform_device;
struct platform_device_info;

/* /sys/kernel/debug/hwtel-sim/, owned by the hwtel_sim module */
struct dentry *hwtel_sim_debugfs_root(void);

/*
 * platform_device_register_full() of @info's name, id, resources and data,
 * with the device on NUMA node @node (NUMA_NO_NODE for none)
 */
struct platform_device *
hwtel_sim_register_pdev(const struct platform_device_info *info, int node);

/* 0 when @node is NUMA_NO_NODE or an online node, else -EINVAL */
int hwtel_sim_check_node(const char *model, int node);

#endif /* _HWTEL_SIM_H */
