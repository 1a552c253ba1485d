/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version shims for hwtel, kept in this one place. hwtel supports
 * Linux 6.1 and newer.
 */
#ifndef _HWTEL_COMPAT_H
#define _HWTEL_COMPAT_H

#include <linux/version.h>

/*
 * platform_driver remove callback returning void: .remove_new up to 6.10
 * (backported to 6.1.y), .remove from 6.11 on. Use inside the initializer:
 * HWTEL_PLATFORM_REMOVE(foo_remove),
 */
#ifndef HWTEL_PLATFORM_REMOVE
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
#define HWTEL_PLATFORM_REMOVE(fn)	.remove_new = (fn)
#else
#define HWTEL_PLATFORM_REMOVE(fn)	.remove = (fn)
#endif
#endif

#endif /* _HWTEL_COMPAT_H */
