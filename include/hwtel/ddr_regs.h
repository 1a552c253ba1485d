/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Register offsets of the Marvell DSS (DDR controller) PMU.
 *
 * Shared by the driver (drivers/perf/marvell_cn10k_ddr_pmu.c) and the hardware
 * model (drivers/hwsim/hwtel_sim_ddr.c). Offsets and bit positions only: the
 * behaviour behind them is implemented independently on each side.
 *
 * Counter n is 0..7; per-counter registers have a stride of 8 bytes.
 */
#ifndef _HWTEL_DDR_REGS_H
#define _HWTEL_DDR_REGS_H

#include <linux/bits.h>

#define DDR_NUM_GEN_COUNTERS		8
#define DDR_REG_STRIDE			8

/* CN10K: operating mode, start and end are global. */
#define CN10K_DDR_OP_MODE_CTRL		0x8020
#define CN10K_DDR_START_OP_CTRL		0x8028
#define CN10K_DDR_END_OP_CTRL		0x8030
#define CN10K_DDR_END_STATUS		0x8038
#define CN10K_DDR_CFG(n)		(0x8040 + DDR_REG_STRIDE * (n))
#define CN10K_DDR_CNT(n)		(0x8080 + DDR_REG_STRIDE * (n))
#define CN10K_DDR_FREERUN_EN		0x80c0
#define CN10K_DDR_FREERUN_CTRL		0x80c8	/* write 1s: clear */
#define CN10K_DDR_FREERUN_WR		0x80d0
#define CN10K_DDR_FREERUN_RD		0x80d8

/* Odyssey: operating mode, start and end are per counter. */
#define ODY_DDR_OP_MODE_CTRL(n)		(0x20020 + DDR_REG_STRIDE * (n))
#define ODY_DDR_START_OP_CTRL(n)	(0x200a0 + DDR_REG_STRIDE * (n))
#define ODY_DDR_END_OP_CTRL(n)		(0x200e0 + DDR_REG_STRIDE * (n))
#define ODY_DDR_END_STATUS		0x20120
#define ODY_DDR_CFG(n)			(0x20160 + DDR_REG_STRIDE * (n))
#define ODY_DDR_CNT(n)			(0x201c0 + DDR_REG_STRIDE * (n))
#define ODY_DDR_FREERUN_CTRL		0x20240	/* enable bits */
#define ODY_DDR_FREERUN_CLR		0x20248	/* write 1s: clear */
#define ODY_DDR_FREERUN_WR		0x20250
#define ODY_DDR_FREERUN_RD		0x20258

/* CN20K: like Odyssey at other offsets, plus CFG1 for the ZQ events. */
#define CN20K_DDR_OP_MODE_CTRL(n)	(0x20000 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_START_OP_CTRL(n)	(0x20080 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_END_OP_CTRL(n)	(0x200c0 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_END_STATUS		0x20100
#define CN20K_DDR_CFG(n)		(0x20140 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_CFG1(n)		(0x20180 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_CNT(n)		(0x201c0 + DDR_REG_STRIDE * (n))
#define CN20K_DDR_FREERUN_CTRL		ODY_DDR_FREERUN_CTRL
#define CN20K_DDR_FREERUN_CLR		ODY_DDR_FREERUN_CLR
#define CN20K_DDR_FREERUN_WR		ODY_DDR_FREERUN_WR
#define CN20K_DDR_FREERUN_RD		ODY_DDR_FREERUN_RD

/* Register window size that covers every variant's registers */
#define DDR_REG_WINDOW			0x30000

/* Field values */
#define DDR_OP_MODE_MANUAL		0x1	/* 0 = auto (timer) mode */
#define DDR_START_OP_START		0x1
#define DDR_END_OP_END			0x1
#define DDR_CFG_ENABLE			BIT_ULL(63)
#define DDR_FREERUN_WR			BIT(0)	/* enable/clear: write counter */
#define DDR_FREERUN_RD			BIT(1)	/* enable/clear: read counter */

/* Counter widths */
#define CN10K_DDR_CNT_BITS		48
#define ODY_DDR_CNT_BITS		64

#endif /* _HWTEL_DDR_REGS_H */
