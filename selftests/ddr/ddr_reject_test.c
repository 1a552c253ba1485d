// SPDX-License-Identifier: GPL-2.0
/*
 * Every rejection of the DDR PMU's event_init, with its errno, through
 * perf_event_open(), on every variant; and what add() does when no counter
 * is free (pinned events go to error state, flexible ones multiplex).
 */
#include "ddr_test.h"
/* the harness has an unused signal handler argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
/* 300 s a test, not 30: the lab's loaded guests (run_in_vm bounds each program) */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#pragma GCC diagnostic pop

FIXTURE(ddr) {
	char pmu[64];
	char pmu2[64];
	int type;
	int type2;
};

FIXTURE_VARIANT(ddr) {
	const struct ddr_variant_info *v;
	const uint64_t *foreign;	/* ids of other variants, 0-terminated */
};

static const uint64_t cn10k_foreign[] = { 36, 37, 38, 56, 61, 62, 63, 0 };
static const uint64_t ody_foreign[] = { 36, 37, 38, 62, 63, 0 };
static const uint64_t cn20k_foreign[] = { 35, 51, 52, 53, 54, 55, 56, 57, 0 };

FIXTURE_VARIANT_ADD(ddr, cn10k) { .v = &ddr_cn10k, .foreign = cn10k_foreign };
FIXTURE_VARIANT_ADD(ddr, odyssey) { .v = &ddr_odyssey, .foreign = ody_foreign };
FIXTURE_VARIANT_ADD(ddr, cn20k) { .v = &ddr_cn20k, .foreign = cn20k_foreign };

FIXTURE_SETUP(ddr)
{
	/* no test leaves state behind: one load per variant */
	ASSERT_EQ(0, ddr_load_shared(variant->v->name, 2));
	ddr_pmu_name(self->pmu, sizeof(self->pmu), variant->v, 0);
	ddr_pmu_name(self->pmu2, sizeof(self->pmu2), variant->v, 1);
	self->type = ddr_pmu_type(self->pmu);
	self->type2 = ddr_pmu_type(self->pmu2);
	ASSERT_GT(self->type, 0);
	ASSERT_GT(self->type2, 0);
}

FIXTURE_TEARDOWN(ddr)
{
}

/* runs in the harness process only (tests end with _exit()) */
static void __attribute__((destructor)) ddr_reject_cleanup(void)
{
	ddr_unload();
}

#define CAM_READ	16
#define CAM_WRITE	17
#define DDR_WRITES	100
#define DDR_READS	101

TEST_F(ddr, valid_event_on_any_cpu)
{
	int fd0 = ddr_open(self->type, CAM_READ, -1, 0, -1, NULL);
	int fd1 = ddr_open(self->type, DDR_READS, -1, DDR_OWNER_CPU, -1, NULL);

	ASSERT_GE(fd0, 0);
	ASSERT_GE(fd1, 0);
	/* cpu 0 is moved to the owner CPU and counts there */
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 321));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 123));
	EXPECT_EQ(321ULL, ddr_count(fd0));
	EXPECT_EQ(123ULL, ddr_count(fd1));
	close(fd0);
	close(fd1);
}

TEST_F(ddr, config_outside_format_einval)
{
	struct perf_event_attr a = { 0 };

	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ | (1ULL << 9), -1, 0, -1, NULL));
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ | (1ULL << 63), -1, 0, -1, NULL));
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, 0x110, -1, 0, -1, NULL));
	a.config1 = 1;
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ, -1, 0, -1, &a));
	a.config1 = 0;
	a.config2 = 1;
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ, -1, 0, -1, &a));
}

TEST_F(ddr, unknown_id_einval)
{
	static const uint64_t ids[] = { 0, 28, 29, 30, 32, 33, 34, 64, 99, 102, 255, 256, 511 };
	unsigned int i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		EXPECT_EQ(EINVAL, ddr_open_errno(self->type, ids[i], -1, 0, -1, NULL))
			TH_LOG("id %" PRIu64, ids[i]);
	}
}

TEST_F(ddr, other_variants_id_einval)
{
	const uint64_t *id;

	for (id = variant->foreign; *id; id++) {
		EXPECT_EQ(EINVAL, ddr_open_errno(self->type, *id, -1, 0, -1, NULL))
			TH_LOG("%s must not have id %" PRIu64, variant->v->name, *id);
	}
}

TEST_F(ddr, sampling_eopnotsupp)
{
	struct perf_event_attr a = { 0 };

	a.sample_period = 1000;
	EXPECT_EQ(EOPNOTSUPP, ddr_open_errno(self->type, CAM_READ, -1, 0, -1, &a));
	a.freq = 1;
	a.sample_freq = 100;
	EXPECT_EQ(EOPNOTSUPP, ddr_open_errno(self->type, CAM_READ, -1, 0, -1, &a));
}

TEST_F(ddr, per_task_eopnotsupp)
{
	EXPECT_EQ(EOPNOTSUPP, ddr_open_errno(self->type, CAM_READ, -1, -1, 0, NULL));
	EXPECT_EQ(EOPNOTSUPP, ddr_open_errno(self->type, CAM_READ, -1, DDR_OWNER_CPU, 0, NULL));
}

TEST_F(ddr, exclude_bits_einval)
{
	struct perf_event_attr a = { 0 };

	a.exclude_kernel = 1;
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ, -1, 0, -1, &a));
}

TEST_F(ddr, group_with_other_hardware_pmu_einval)
{
	int lead, sw, hw;

	/* another DDR controller is another hardware PMU */
	lead = ddr_open(self->type, CAM_READ, -1, 0, -1, NULL);
	ASSERT_GE(lead, 0);
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type2, CAM_READ, lead, 0, -1, NULL));
	close(lead);

	lead = ddr_open(self->type2, DDR_READS, -1, 0, -1, NULL);
	ASSERT_GE(lead, 0);
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, DDR_WRITES, lead, 0, -1, NULL));
	close(lead);

	/* a CPU hardware event, where the machine has a CPU PMU */
	hw = ddr_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1, DDR_OWNER_CPU, -1, NULL);
	if (hw >= 0) {
		EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ, hw, DDR_OWNER_CPU, -1, NULL));
		close(hw);
	} else {
		TH_LOG("no CPU PMU (%s): cycles leader not tried", strerror(errno));
	}

	/* software events may join a group that one of ours leads */
	lead = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(lead, 0);
	sw = ddr_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, lead, DDR_OWNER_CPU, -1, NULL);
	EXPECT_GE(sw, 0);
	EXPECT_EQ(0, ddr_open_errno(self->type, DDR_READS, lead, DDR_OWNER_CPU, -1, NULL));
	if (sw >= 0)
		close(sw);
	close(lead);
}

/*
 * A software leader is accepted, as upstream does: its DDR members count
 * exactly (a dummy leader counts nothing itself); a member opened on CPU 0
 * is moved to the PMU's CPU like any event. The core refuses a member
 * under a leader on another CPU than the PMU's.
 */
TEST_F(ddr, software_leader_counts)
{
	static const uint64_t sw_ids[] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_DUMMY,
	};
	unsigned int i;
	int sw, cam, rd;

	for (i = 0; i < sizeof(sw_ids) / sizeof(sw_ids[0]); i++) {
		sw = ddr_open(PERF_TYPE_SOFTWARE, sw_ids[i], -1, DDR_OWNER_CPU, -1, NULL);
		ASSERT_GE(sw, 0);
		cam = ddr_open(self->type, CAM_READ, sw, DDR_OWNER_CPU, -1, NULL);
		rd = ddr_open(self->type, DDR_READS, sw, DDR_OWNER_CPU, -1, NULL);
		EXPECT_GE(cam, 0)
			TH_LOG("software leader %" PRIu64 ": %s", sw_ids[i], strerror(errno));
		EXPECT_GE(rd, 0)
			TH_LOG("software leader %" PRIu64 ": %s", sw_ids[i], strerror(errno));
		if (cam >= 0 && rd >= 0) {
			ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 321 + i));
			ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 123 + i));
			EXPECT_EQ(321ULL + i, ddr_count(cam));
			EXPECT_EQ(123ULL + i, ddr_count(rd));
		}
		EXPECT_EQ(0, ddr_open_errno(self->type, DDR_WRITES, sw, 0, -1, NULL))
			TH_LOG("member on CPU 0 under a leader on CPU %d", DDR_OWNER_CPU);
		if (rd >= 0)
			close(rd);
		if (cam >= 0)
			close(cam);
		close(sw);

		sw = ddr_open(PERF_TYPE_SOFTWARE, sw_ids[i], -1, 0, -1, NULL);
		ASSERT_GE(sw, 0);
		EXPECT_EQ(EINVAL, ddr_open_errno(self->type, CAM_READ, sw, 0, -1, NULL))
			TH_LOG("member under a leader on CPU 0, not the PMU's CPU %d",
			       DDR_OWNER_CPU);
		close(sw);
	}
}

TEST_F(ddr, group_more_than_8_generic_einval)
{
	static const uint64_t ids[] = { 1, 2, 3, 4, 13, 14, 15, 16, 17 };
	int fds[12], n = 0, i;

	fds[n] = ddr_open(self->type, ids[0], -1, 0, -1, NULL);
	ASSERT_GE(fds[n], 0);
	for (n = 1; n < 8; n++) {
		fds[n] = ddr_open(self->type, ids[n], fds[0], 0, -1, NULL);
		ASSERT_GE(fds[n], 0);
	}
	EXPECT_EQ(EINVAL, ddr_open_errno(self->type, ids[8], fds[0], 0, -1, NULL));
	/* the fixed counters still fit: 8 + 2 */
	fds[n] = ddr_open(self->type, DDR_READS, fds[0], 0, -1, NULL);
	EXPECT_GE(fds[n], 0);
	n++;
	fds[n] = ddr_open(self->type, DDR_WRITES, fds[0], 0, -1, NULL);
	EXPECT_GE(fds[n], 0);
	n++;
	for (i = n - 1; i >= 0; i--)
		close(fds[i]);
}

/* The fixed counters are free-running: any number of events share them */
TEST_F(ddr, group_same_fixed_counter_twice_ok)
{
	int lead, sib, sib2;

	lead = ddr_open(self->type, DDR_READS, -1, 0, -1, NULL);
	ASSERT_GE(lead, 0);
	sib = ddr_open(self->type, DDR_READS, lead, 0, -1, NULL);
	EXPECT_GE(sib, 0);
	sib2 = ddr_open(self->type, DDR_WRITES, lead, 0, -1, NULL);
	EXPECT_GE(sib2, 0);
	EXPECT_EQ(0, ddr_open_errno(self->type, DDR_WRITES, lead, 0, -1, NULL));
	close(sib2);
	close(sib);
	close(lead);
}

/* add() finds no counter: a pinned event goes to error state (read = 0) */
TEST_F(ddr, add_without_free_counter_fails_pinned)
{
	struct perf_event_attr a = { 0 };
	int fds[8], extra, r1, r2, i;
	uint64_t v;

	a.pinned = 1;
	for (i = 0; i < 8; i++) {
		fds[i] = ddr_open(self->type, 1 + i, -1, 0, -1, &a);
		ASSERT_GE(fds[i], 0);
	}
	extra = ddr_open(self->type, CAM_READ, -1, 0, -1, &a);
	ASSERT_GE(extra, 0);
	EXPECT_EQ(0, read(extra, &v, sizeof(v)));
	close(extra);

	/* a fixed counter never runs out: a second pinned user counts too */
	r1 = ddr_open(self->type, DDR_READS, -1, 0, -1, &a);
	ASSERT_GE(r1, 0);
	r2 = ddr_open(self->type, DDR_READS, -1, 0, -1, &a);
	ASSERT_GE(r2, 0);
	EXPECT_EQ((ssize_t)sizeof(v), read(r2, &v, sizeof(v)));
	EXPECT_EQ((ssize_t)sizeof(v), read(r1, &v, sizeof(v)));
	close(r2);
	close(r1);
	for (i = 0; i < 8; i++)
		close(fds[i]);
}

/* ... and flexible events beyond the counters are multiplexed */
TEST_F(ddr, add_without_free_counter_multiplexes)
{
	struct perf_event_attr a = { 0 };
	struct { uint64_t val, ena, run; } r;
	int fds[10], i, partial = 0;

	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	for (i = 0; i < 9; i++) {
		fds[i] = ddr_open(self->type, 1 + i, -1, 0, -1, &a);
		ASSERT_GE(fds[i], 0);
	}
	fds[9] = ddr_open(self->type, DDR_READS, -1, 0, -1, &a);
	ASSERT_GE(fds[9], 0);
	ddr_msleep(400);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ((ssize_t)sizeof(r), read(fds[i], &r, sizeof(r)));
		EXPECT_GT(r.run, 0ULL)
			TH_LOG("event %d never ran (enabled %" PRIu64 ")", i, r.ena);
		if (r.run < r.ena)
			partial++;
	}
	EXPECT_GT(partial, 0);
	for (i = 0; i < 10; i++)
		close(fds[i]);
}

TEST_HARNESS_MAIN
