/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version shims for hwtel, kept in this one place. hwtel supports
 * Linux 6.1 and newer. The HWTEL_* feature macros come from the top-level
 * Kbuild, which probes the headers of the kernel being built against.
 */
#ifndef _HWTEL_COMPAT_H
#define _HWTEL_COMPAT_H

/*
 * platform_driver::remove returns void since 6.11. Before that, 6.1.y up to
 * 6.12 offer the void callback as .remove_new, which 6.13 dropped.
 */
#ifdef HWTEL_PLATFORM_REMOVE_VOID
#define hwtel_platform_remove	remove
#else
#define hwtel_platform_remove	remove_new
#endif

/*
 * hrtimer_setup() arrived in 6.13 and hrtimer_init() was removed after it.
 * Older kernels get the same call, built from hrtimer_init().
 */
#include <linux/hrtimer.h>
#ifndef HWTEL_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * struct pmu::parent (6.9+) links the PMU's sysfs directory to its device.
 * hwtel_pmu_set_parent() is a no-op where the field does not exist.
 */
#ifdef HWTEL_HAVE_PMU_PARENT
#define hwtel_pmu_set_parent(pmu, dev)	((pmu)->parent = (dev))
#else
#define hwtel_pmu_set_parent(pmu, dev)	((void)(pmu), (void)(dev))
#endif

#endif /* _HWTEL_COMPAT_H */
