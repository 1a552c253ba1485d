/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PMDA domain of pmdahwtel: 510, the first of the end-user range 385-510
 * that PCP's Make.stdpmid sets aside (allocated from the top down; 1-384
 * are for PCP's own PMDAs). Override with -d, or change it here before
 * Install if a local agent already has 510.
 */
#define HWTEL 510
