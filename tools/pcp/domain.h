/* SPDX-License-Identifier: GPL-2.0 */
/* PMDA domain of pmdahwtel (unassigned in PCP 6.0's stdpmid; override with -d). */
#define HWTEL 190
