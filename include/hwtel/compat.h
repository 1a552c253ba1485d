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

#endif /* _HWTEL_COMPAT_H */
