/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version shims for hwtel, kept in this one place. hwtel supports
 * Linux 6.1 and newer.
 */
#ifndef _HWTEL_COMPAT_H
#define _HWTEL_COMPAT_H

#include <linux/version.h>

#endif /* _HWTEL_COMPAT_H */
