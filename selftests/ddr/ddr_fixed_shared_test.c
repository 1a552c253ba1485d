// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed DDR read/write counters are free-running: any number of events
 * may count them at once, each from its own start value, every one of them
 * at 100 % running (time_enabled == time_running), and the counter is never
 * cleared under a running event. Sessions start and stop at different
 * instants with known counts injected in between; on CN10K one of the
 * injections crosses the 48-bit wrap.
 */
#include "ddr_test.h"
#include <sys/ioctl.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
/* 300 s a test, not 30: the lab's loaded guests (run_in_vm bounds each program) */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#pragma GCC diagnostic pop

#define DDR_WRITES	100
#define DDR_READS	101
#define NSESS		4

FIXTURE(fr) {
	char pmu[64];
	int type;
};

FIXTURE_VARIANT(fr) {
	const struct ddr_variant_info *v;
};

FIXTURE_VARIANT_ADD(fr, cn10k) { .v = &ddr_cn10k };
FIXTURE_VARIANT_ADD(fr, odyssey) { .v = &ddr_odyssey };
FIXTURE_VARIANT_ADD(fr, cn20k) { .v = &ddr_cn20k };

FIXTURE_SETUP(fr)
{
	ASSERT_EQ(0, ddr_load(variant->v->name, 1, "poll_period_sec=1"));
	ddr_pmu_name(self->pmu, sizeof(self->pmu), variant->v, 0);
	self->type = ddr_pmu_type(self->pmu);
	ASSERT_GT(self->type, 0);
	ddr_pin_self(DDR_OWNER_CPU);
}

FIXTURE_TEARDOWN(fr)
{
	ddr_unload();
}

struct sess {
	int fd;
	uint64_t want;
};

struct rd {
	uint64_t val, ena, run;
};

static int sess_open(int type, uint64_t config)
{
	struct perf_event_attr a = { 0 };

	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return ddr_open(type, config, -1, DDR_OWNER_CPU, -1, &a);
}

/* Every open session gains @n */
static void gain(struct sess *s, int ns, uint64_t n)
{
	int i;

	for (i = 0; i < ns; i++)
		if (s[i].fd >= 0)
			s[i].want += n;
}

static int check(struct __test_metadata *_metadata, struct sess *s, int ns,
		 const char *when)
{
	struct rd r;
	int i, bad = 0;

	for (i = 0; i < ns; i++) {
		if (s[i].fd < 0)
			continue;
		if (read(s[i].fd, &r, sizeof(r)) != sizeof(r)) {
			TH_LOG("%s: session %d: read failed", when, i);
			bad++;
			continue;
		}
		if (r.val != s[i].want || r.ena != r.run || !r.run) {
			TH_LOG("%s: session %d: count %" PRIu64 " want %" PRIu64
			       " enabled %" PRIu64 " running %" PRIu64,
			       when, i, r.val, s[i].want, r.ena, r.run);
			bad++;
		}
	}
	return bad;
}

static void run_sessions(struct __test_metadata *_metadata, const char *pmu,
			 int type, uint64_t config, const char *ev,
			 const char *file, uint64_t mask)
{
	struct sess s[NSESS];
	uint64_t raw;
	int i;

	for (i = 0; i < NSESS; i++)
		s[i] = (struct sess){ -1, 0 };

	s[0].fd = sess_open(type, config);
	ASSERT_GE(s[0].fd, 0);
	ASSERT_EQ(0, ddr_inject(pmu, ev, 10));
	gain(s, NSESS, 10);

	/* a second session starts: the counter is not cleared under the first */
	raw = ddr_dbg_u64(pmu, file);
	s[1].fd = sess_open(type, config);
	ASSERT_GE(s[1].fd, 0);
	EXPECT_EQ(raw, ddr_dbg_u64(pmu, file));
	ASSERT_EQ(0, ddr_inject(pmu, ev, 100));
	gain(s, NSESS, 100);

	s[2].fd = sess_open(type, config);
	ASSERT_GE(s[2].fd, 0);
	ASSERT_EQ(0, ddr_inject(pmu, ev, 1000));
	gain(s, NSESS, 1000);
	EXPECT_EQ(0, check(_metadata, s, NSESS, "three sessions"));

	/* the middle one stops, a fourth starts */
	close(s[1].fd);
	s[1].fd = -1;
	ASSERT_EQ(0, ddr_inject(pmu, ev, 10000));
	gain(s, NSESS, 10000);
	s[3].fd = sess_open(type, config);
	ASSERT_GE(s[3].fd, 0);

	/* across the wrap: 6 below it, then 20 */
	raw = ddr_dbg_u64(pmu, file);
	ASSERT_EQ(0, ddr_force(pmu, file, mask - 5));
	gain(s, NSESS, (mask - 5 - raw) & mask);
	ASSERT_EQ(0, ddr_inject(pmu, ev, 20));
	gain(s, NSESS, 20);
	EXPECT_EQ(14ULL, ddr_dbg_u64(pmu, file));
	EXPECT_EQ(0, check(_metadata, s, NSESS, "after the wrap"));

	/* one pauses and resumes: it misses what came in between */
	ASSERT_EQ(0, ioctl(s[0].fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(0, ddr_inject(pmu, ev, 300));
	gain(s + 2, NSESS - 2, 300);
	ASSERT_EQ(0, ioctl(s[0].fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, ddr_inject(pmu, ev, 3));
	gain(s, NSESS, 3);
	/* ena == run also holds for the paused one: both stopped together */
	EXPECT_EQ(0, check(_metadata, s, NSESS, "after a pause"));
	for (i = 0; i < NSESS; i++)
		if (s[i].fd >= 0)
			close(s[i].fd);
}

TEST_F_TIMEOUT(fr, reads_shared_by_sessions, 180)
{
	run_sessions(_metadata, self->pmu, self->type, DDR_READS,
		     "ddr_ddr_reads", "freerun_rd", variant->v->fr_mask);
}

TEST_F_TIMEOUT(fr, writes_shared_by_sessions, 180)
{
	run_sessions(_metadata, self->pmu, self->type, DDR_WRITES,
		     "ddr_ddr_writes", "freerun_wr", variant->v->fr_mask);
}

/* Both counters, several events each, in one group and beside it */
TEST_F_TIMEOUT(fr, same_counter_twice_in_a_group, 180)
{
	struct sess s[NSESS];
	int lead, sib;

	lead = sess_open(self->type, DDR_READS);
	ASSERT_GE(lead, 0);
	s[0] = (struct sess){ lead, 0 };
	s[1] = (struct sess){ ddr_open(self->type, DDR_READS, lead, DDR_OWNER_CPU, -1, NULL), 0 };
	ASSERT_GE(s[1].fd, 0);
	s[2] = (struct sess){ sess_open(self->type, DDR_READS), 0 };
	ASSERT_GE(s[2].fd, 0);
	s[3] = (struct sess){ -1, 0 };
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 4242));
	gain(s, NSESS, 4242);
	sib = s[1].fd;
	s[1].fd = -1;
	EXPECT_EQ(4242ULL, ddr_count(sib));
	EXPECT_EQ(0, check(_metadata, s, NSESS, "group"));
	close(sib);
	close(s[2].fd);
	close(lead);
}

TEST_HARNESS_MAIN
