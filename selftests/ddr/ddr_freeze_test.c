// SPDX-License-Identifier: GPL-2.0
/*
 * Freeze detection whichever way a CN10K generic counter reports it. The
 * model's freeze_mode parameter selects the register behaviour:
 *
 *   saturate: the 48-bit counter stops at 2^48 - 1;
 *   flag49:   the low 48 bits stop at 2^48 - 1 and bit 48 is set by the
 *             first occurrence lost (the register then reads 2^49 - 1).
 *
 * In both, occurrences after the freeze point are lost until the driver
 * restarts the counter; what was counted up to the freeze is recoverable.
 * The expected totals below follow that rule alone. The test runs on the
 * owner CPU, where the poll timer fires, so an injection never falls between
 * the driver's END and START.
 */
#include "ddr_test.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
/* 300 s a test, not 30: the lab's loaded guests (run_in_vm bounds each program) */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#pragma GCC diagnostic pop

#define CAM_READ	16
#define CAM_WRITE	17
#define MAX48		((1ULL << 48) - 1)

FIXTURE(frz) {
	char pmu[64];
	int type;
};

FIXTURE_VARIANT(frz) {
	const char *mode;
	/* what the counter register reads once occurrences were lost */
	uint64_t frozen_raw;
};

FIXTURE_VARIANT_ADD(frz, saturate) { .mode = "saturate", .frozen_raw = MAX48 };
FIXTURE_VARIANT_ADD(frz, flag49) {
	.mode = "flag49", .frozen_raw = MAX48 | (1ULL << 48),
};

FIXTURE_SETUP(frz)
{
	char mp[128];

	snprintf(mp, sizeof(mp), "variant=cn10k freeze_mode=%s", variant->mode);
	ASSERT_EQ(0, ddr_load_params(mp, "poll_period_sec=1"));
	ddr_pmu_name(self->pmu, sizeof(self->pmu), &ddr_cn10k, 0);
	self->type = ddr_pmu_type(self->pmu);
	ASSERT_GT(self->type, 0);
	ddr_pin_self(DDR_OWNER_CPU);
}

FIXTURE_TEARDOWN(frz)
{
	ddr_unload();
}

static char cnt_file[24];

static const char *counter_file(int idx)
{
	snprintf(cnt_file, sizeof(cnt_file), "counter%d", idx);
	return cnt_file;
}

/* read() folds the frozen counter, restarts it, and counting goes on */
TEST_F_TIMEOUT(frz, freeze_seen_by_read, 180)
{
	uint64_t total, hw;
	int fd, idx, i;

	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	idx = ddr_find_counter(self->pmu, CAM_READ - 1, 0);
	ASSERT_GE(idx, 0);

	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 5));
	total = 5;
	hw = 5;
	for (i = 0; i < 3; i++) {
		/* a forced value counts from the previous one */
		ASSERT_EQ(0, ddr_force(self->pmu, counter_file(idx), MAX48 - 10));
		total += MAX48 - 10 - hw;
		EXPECT_EQ(total, ddr_count(fd));
		/* 10 below the maximum, then 25: 10 counted, 15 lost */
		total += 10;
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 25));
		EXPECT_EQ(variant->frozen_raw,
			  ddr_dbg_u64(self->pmu, counter_file(idx)));
		EXPECT_EQ(total, ddr_count(fd)) TH_LOG("freeze %d", i);
		EXPECT_EQ(0ULL, ddr_dbg_u64(self->pmu, counter_file(idx)))
			TH_LOG("freeze %d: counter not restarted", i);
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 7));
		total += 7;
		hw = 7;
		EXPECT_EQ(total, ddr_count(fd)) TH_LOG("after freeze %d", i);
	}
	close(fd);
}

/* Exactly at the maximum nothing is lost yet; the freeze is still seen */
TEST_F_TIMEOUT(frz, freeze_exactly_at_max, 180)
{
	uint64_t total = 0;
	int fd, idx;

	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	idx = ddr_find_counter(self->pmu, CAM_READ - 1, 0);
	ASSERT_GE(idx, 0);
	ASSERT_EQ(0, ddr_force(self->pmu, counter_file(idx), MAX48 - 4));
	total += MAX48 - 4;
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 4));
	total += 4;
	EXPECT_EQ(MAX48, ddr_dbg_u64(self->pmu, counter_file(idx)));
	EXPECT_EQ(total, ddr_count(fd));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 3));
	total += 3;
	EXPECT_EQ(total, ddr_count(fd));
	close(fd);
}

/*
 * Freeze after freeze, each found by the poll timer alone (1 s period):
 * per round 3 counted up to the freeze and 7 lost, then 2 after the
 * restart. The neighbour counter, cleared with it by CN10K's global START,
 * keeps its 4 per round.
 */
TEST_F_TIMEOUT(frz, freezes_seen_by_poll, 180)
{
	uint64_t total = 0;
	int fr, fw, idx, i, ms;

	fr = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fr, 0);
	fw = ddr_open(self->type, CAM_WRITE, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fw, 0);
	idx = ddr_find_counter(self->pmu, CAM_READ - 1, 0);
	ASSERT_GE(idx, 0);

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, ddr_force(self->pmu, counter_file(idx), MAX48 - 3));
		total += MAX48 - 3 - (i ? 2 : 0);
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 10));
		total += 3;
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_write", 4));
		for (ms = 0; ms < 3000; ms += 20) {
			if (ddr_dbg_u64(self->pmu, counter_file(idx)) !=
			    variant->frozen_raw)
				break;
			ddr_msleep(20);
		}
		ASSERT_LT(ms, 3000) TH_LOG("freeze %d not seen by the poll", i);
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 2));
		total += 2;
	}
	EXPECT_EQ(total, ddr_count(fr));
	EXPECT_EQ(16ULL, ddr_count(fw));
	close(fw);
	close(fr);
}

TEST_HARNESS_MAIN
