// SPDX-License-Identifier: GPL-2.0
/*
 * Exact 64-bit totals across counter freezes and wraps, on every variant:
 * generic counters forced near their maximum and driven past it (they
 * freeze; the driver folds and restarts them, from read() or from its
 * poll timer), many times in a row; free-running counters driven across
 * their wrap (2^48 on CN10K, 2^64 elsewhere) many times in a row.
 *
 * The expected totals follow the hardware contract: a frozen counter loses
 * the occurrences beyond its maximum; a free-running counter wraps.
 * The test runs on the PMU's owner CPU, where the poll timer fires, so an
 * injection can never fall between the driver's END and START.
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

#define CAM_READ	16
#define CAM_WRITE	17
#define DDR_WRITES	100
#define DDR_READS	101

FIXTURE(ddr) {
	char pmu[64];
	int type;
};

FIXTURE_VARIANT(ddr) {
	const struct ddr_variant_info *v;
};

FIXTURE_VARIANT_ADD(ddr, cn10k) { .v = &ddr_cn10k };
FIXTURE_VARIANT_ADD(ddr, odyssey) { .v = &ddr_odyssey };
FIXTURE_VARIANT_ADD(ddr, cn20k) { .v = &ddr_cn20k };

FIXTURE_SETUP(ddr)
{
	ASSERT_EQ(0, ddr_load(variant->v->name, 1, "poll_period_sec=1"));
	ddr_pmu_name(self->pmu, sizeof(self->pmu), variant->v, 0);
	self->type = ddr_pmu_type(self->pmu);
	ASSERT_GT(self->type, 0);
	ddr_pin_self(DDR_OWNER_CPU);
}

FIXTURE_TEARDOWN(ddr)
{
	ddr_unload();
}

/* What the hardware counter holds, and what perf must report */
struct track {
	uint64_t hw;
	uint64_t total;
};

static void gen_force(struct track *t, uint64_t val)
{
	t->total += val - t->hw;
	t->hw = val;
}

static void gen_occur(struct track *t, uint64_t max, uint64_t n)
{
	uint64_t room = max - t->hw;
	uint64_t add = n < room ? n : room;

	t->total += add;
	t->hw += add;
}

static void fr_force(struct track *t, uint64_t mask, uint64_t val)
{
	t->total += (val - t->hw) & mask;
	t->hw = val;
}

static void fr_occur(struct track *t, uint64_t mask, uint64_t n)
{
	t->total += n;
	t->hw = (t->hw + n) & mask;
}

static char cnt_file[24];

static const char *counter_file(int idx)
{
	snprintf(cnt_file, sizeof(cnt_file), "counter%d", idx);
	return cnt_file;
}

TEST_F(ddr, generic_freeze_folded_by_read)
{
	uint64_t max = variant->v->gen_max;
	struct track t = { 0, 0 };
	int fd, idx;

	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	idx = ddr_find_counter(self->pmu, CAM_READ - 1, 0);
	ASSERT_GE(idx, 0);

	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 5));
	gen_occur(&t, max, 5);
	ASSERT_EQ(0, ddr_force(self->pmu, counter_file(idx), max - 10));
	gen_force(&t, max - 10);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 25));
	gen_occur(&t, max, 25);
	EXPECT_EQ(max, ddr_dbg_u64(self->pmu, counter_file(idx)));
	EXPECT_EQ(t.total, ddr_count(fd));
	/* read() found it frozen and restarted it from 0 */
	EXPECT_EQ(0ULL, ddr_dbg_u64(self->pmu, counter_file(idx)));
	t.hw = 0;

	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 7));
	gen_occur(&t, max, 7);
	EXPECT_EQ(t.total, ddr_count(fd));
	TH_LOG("%s: total %" PRIu64 " (max %" PRIu64 ")", variant->v->name,
	       t.total, max);
	close(fd);
}

/* Many freezes in a row, each recovered by the poll timer alone */
TEST_F(ddr, generic_freezes_folded_by_poll)
{
	uint64_t max = variant->v->gen_max;
	struct track r = { 0, 0 }, w = { 0, 0 };
	int fr, fw, idx, i, ms;

	fr = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fr, 0);
	fw = ddr_open(self->type, CAM_WRITE, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fw, 0);
	idx = ddr_find_counter(self->pmu, CAM_READ - 1, 0);
	ASSERT_GE(idx, 0);

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, ddr_force(self->pmu, counter_file(idx), max - 3));
		gen_force(&r, max - 3);
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 10));
		gen_occur(&r, max, 10);
		/* on CN10K the restart clears this neighbour too */
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_write", 4));
		gen_occur(&w, max, 4);

		for (ms = 0; ms < 3000; ms += 20) {
			if (ddr_dbg_u64(self->pmu, counter_file(idx)) != max)
				break;
			ddr_msleep(20);
		}
		ASSERT_LT(ms, 3000) TH_LOG("freeze %d not recovered by the poll", i);
		r.hw = 0;
		w.hw = 0;
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 2));
		gen_occur(&r, max, 2);
	}
	EXPECT_EQ(r.total, ddr_count(fr));
	EXPECT_EQ(16ULL, ddr_count(fw));
	close(fw);
	close(fr);
}

/* Wraps of the free-running read counter, many in a row */
TEST_F(ddr, freerun_wraps_folded_by_read)
{
	uint64_t mask = variant->v->fr_mask;
	struct track t = { 0, 0 };
	int fd, i;

	fd = ddr_open(self->type, DDR_READS, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 5));
	fr_occur(&t, mask, 5);

	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, ddr_force(self->pmu, "freerun_rd", mask - 9));
		fr_force(&t, mask, mask - 9);
		EXPECT_EQ(t.total, ddr_count(fd));
		ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 25));
		fr_occur(&t, mask, 25);
		EXPECT_EQ(15ULL, ddr_dbg_u64(self->pmu, "freerun_rd"));
		EXPECT_EQ(t.total, ddr_count(fd)) TH_LOG("wrap %d", i);
	}
	close(fd);
}

/* Wraps of the write counter seen only by the poll timer */
TEST_F(ddr, freerun_wraps_folded_by_poll)
{
	uint64_t mask = variant->v->fr_mask;
	struct track t = { 0, 0 };
	int fd;

	fd = ddr_open(self->type, DDR_WRITES, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);

	/*
	 * Jump to just below the wrap, let one poll fold that, then wrap and
	 * let one poll fold the wrap: without the polls the two would cancel
	 * out modulo the counter width, and 2^48 would be lost on CN10K.
	 */
	ASSERT_EQ(0, ddr_force(self->pmu, "freerun_wr", mask - 9));
	fr_force(&t, mask, mask - 9);
	ddr_msleep(1300);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_writes", 25));
	fr_occur(&t, mask, 25);
	ddr_msleep(1300);
	ASSERT_EQ(0, ddr_force(self->pmu, "freerun_wr", mask - 9));
	fr_force(&t, mask, mask - 9);
	EXPECT_EQ(t.total, ddr_count(fd));
	close(fd);
}

TEST_HARNESS_MAIN
