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

/* /sys/kernel/debug/hwtel-sim/, owned by the hwtel_sim module */
struct dentry *hwtel_sim_debugfs_root(void);

#endif /* _HWTEL_SIM_H */
