// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel record/report without perf: the condition grammar, the ring and
 * position arithmetic, counters and feedback on scripted sample streams
 * (exact sample indices), the capture file round trip and truncation, and
 * the views' syntax (python3 json / xml).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/rec.h"
#include "unit.h"

static const char *const NAMES[] = { "x", "y", "pcie.ep0.rq0.used_pct" };
static const struct rec_names names = { 3, NAMES };

static double val(const char *text, double x, double y, double z)
{
	double v[3] = { x, y, z };
	struct rec_expr *e;
	char err[200];
	double r;

	if (rec_cond_parse(text, &names, &e, err, sizeof(err))) {
		printf("#   parse '%s': %s\n", text, err);
		return -12345;
	}
	r = rec_expr_value(e, v);
	rec_cond_free(e);
	return r;
}

/* @c as @o shows it, in a string the caller frees */
static char *view_str(const struct rec_capture *c, const struct rec_view_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_EQ(rec_view(f, c, o), 0);
	fclose(f);
	return buf;
}

TEST(rec_grammar_values)
{
	CHECK_NEAR(val("x + y * 2", 1, 3, 0), 7, 0);
	CHECK_NEAR(val("(x + y) * 2", 1, 3, 0), 8, 0);
	CHECK_NEAR(val("-x - -y", 1, 3, 0), 2, 0);
	CHECK(isnan(val("x / y", 3, 0, 0)));
	CHECK_NEAR(val("8G", 0, 0, 0), 8e9, 0);
	CHECK_NEAR(val("2.5k + 1M", 0, 0, 0), 1002500, 0);
	CHECK_NEAR(val("90%", 0, 0, 0), 90, 0);
	CHECK_NEAR(val("pcie.ep0.rq0.used_pct > 90", 0, 0, 90.5), 1, 0);
	CHECK_NEAR(val("pcie.ep0.rq0.used_pct > 90", 0, 0, 90), 0, 0);
	CHECK_NEAR(val("pcie.ep0.rq0.used_pct >= 90", 0, 0, 90), 1, 0);
	CHECK_NEAR(val("x > 1 && y < 2 || x == 7", 7, 9, 0), 1, 0);
	CHECK_NEAR(val("x > 1 and not y < 2", 2, 1, 0), 0, 0);
	CHECK_NEAR(val("!(x != 3)", 3, 0, 0), 1, 0);
	/* a NaN operand: the comparison is false, and so is its negation's input */
	CHECK_NEAR(val("x > 1", NAN, 0, 0), 0, 0);
	CHECK_NEAR(val("x < 1", NAN, 0, 0), 0, 0);
}

static void bad(const char *text, const char *want)
{
	struct rec_expr *e = (struct rec_expr *)1;
	char err[256];

	CHECK_EQ(rec_cond_parse(text, &names, &e, err, sizeof(err)), -EINVAL);
	CHECK(e == NULL);
	if (!strstr(err, want)) {
		printf("#   '%s': error '%s' lacks '%s'\n", text, err, want);
		unit_failed++;
	}
}

TEST(rec_grammar_errors)
{
	bad("", "at column 1: empty condition");
	bad("   ", "empty condition");
	bad("z > 1", "at column 1: unknown metric or counter 'z'");
	bad("x > pcie.ep0.rq0.used", "at column 5: unknown metric or counter 'pcie.ep0.rq0.used'");
	bad("(x > 1", "at column 7: expected ')', got the end");
	bad("x >", "at column 4: expected a number, a name or '(', got the end");
	bad("x > 1 y", "at column 7: unexpected 'y'");
	bad("x > 5kb", "at column 6: unexpected 'kb' after a number");
	bad("x > 1 for", "expected a duration");
	bad("x > 1 for 5 parsecs", "unexpected 'parsecs'");
	bad("x > 1 for 5xs", "bad duration '5xs'");
	bad("x > 1 for 0 samples", "expected a whole number of samples");
	bad("x > 1 hyst -1", "expected a number, 0 or more, after 'hyst'");
	bad("x > 1 # y", "at column 7: unexpected '#'");
}

TEST(rec_duration)
{
	uint64_t ns = 0;

	CHECK_EQ(rec_parse_duration("1ms", &ns), 0);
	CHECK_U64(ns, 1000000);
	CHECK_EQ(rec_parse_duration("100us", &ns), 0);
	CHECK_U64(ns, 100000);
	CHECK_EQ(rec_parse_duration("2.5s", &ns), 0);
	CHECK_U64(ns, 2500000000ull);
	CHECK_EQ(rec_parse_duration("750", &ns), 0);
	CHECK_U64(ns, 750);
	CHECK_EQ(rec_parse_duration("1.5ns", &ns), -EINVAL);
	CHECK_EQ(rec_parse_duration("-1ms", &ns), -EINVAL);
	CHECK_EQ(rec_parse_duration("ms", &ns), -EINVAL);
	CHECK_EQ(rec_parse_duration("1 ms", &ns), -EINVAL);
}

/* run a condition over a stream (1 ms apart); bit i of the result = held at i */
static unsigned long run(const char *text, const double *xs, unsigned int n)
{
	struct rec_expr *e;
	unsigned long r = 0;
	unsigned int i;
	char err[200];

	if (rec_cond_parse(text, &names, &e, err, sizeof(err))) {
		printf("#   parse '%s': %s\n", text, err);
		return ~0ul;
	}
	for (i = 0; i < n; i++) {
		double v[3] = { xs[i], 0, 0 };

		if (rec_cond_eval(e, v, 1000000ull * (i + 5)))
			r |= 1ul << i;
	}
	rec_cond_free(e);
	return r;
}

TEST(rec_hold_and_hysteresis)
{
	static const double a[] = { 6, 6, 0, 6, 6, 6, 6 };
	static const double h[] = { 11, 8, 7.5, 6, 12, 9 };

	/* runs of 2, then 4: three consecutive samples first at index 5 */
	CHECK_EQ(run("x > 5 for 3 samples", a, 7), (1 << 5) | (1 << 6));
	/* a span of 2 ms: the third sample of a run at 1 ms */
	CHECK_EQ(run("x > 5 for 2ms", a, 7), (1 << 5) | (1 << 6));
	CHECK_EQ(run("x > 5 for 1500us", a, 7), (1 << 5) | (1 << 6));
	CHECK_EQ(run("x > 5 for 1ms", a, 7), (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6));
	CHECK_EQ(run("x > 5", a, 7), 0x7b);
	/* held at 11; 8 and 7.5 are within 3 below 10; 6 is not; 12 holds;
	 * 9 is within again
	 */
	CHECK_EQ(run("x > 10 hyst 3", h, 6), 0x37);
	CHECK_EQ(run("x > 10", h, 6), 0x11);
	/* 9 after 12: the comparison failed before, no hysteresis */
	CHECK_EQ(run("x < 7 hyst 2", h, 6), 1 << 3);
}

TEST(rec_pre_count)
{
	CHECK_EQ(rec_pre_count(101, 0), 0);
	CHECK_EQ(rec_pre_count(101, 50), 50);
	CHECK_EQ(rec_pre_count(101, 100), 100);
	CHECK_EQ(rec_pre_count(10, 50), 5);	/* 4.5 rounds up */
	CHECK_EQ(rec_pre_count(5, 25), 1);
	CHECK_EQ(rec_pre_count(1, 100), 0);
	CHECK_EQ(rec_pre_count(1000, 10), 100);	/* 99.9 */
}

/* ---- a sink that records what the engine keeps ---- */
struct mem {
	unsigned int nshots, nsamples, nends, nnotes;
	unsigned int pre[8], ends[8];
	enum rec_cause cause[8];
	uint64_t trig[8];
	uint64_t t[4096];
	double x[4096];
	char note[8][120];
};

static int m_begin(void *ctx, unsigned int shot, enum rec_cause cause, unsigned int pre,
		   uint64_t trig)
{
	struct mem *m = ctx;

	if (shot != m->nshots || m->nshots >= 8)
		return -EIO;
	m->pre[m->nshots] = pre;
	m->cause[m->nshots] = cause;
	m->trig[m->nshots++] = trig;
	return 0;
}

static int m_sample(void *ctx, uint64_t t, const double *v)
{
	struct mem *m = ctx;

	m->t[m->nsamples] = t;
	m->x[m->nsamples++] = v[0];
	return 0;
}

static int m_end(void *ctx, unsigned int shot, unsigned int n)
{
	struct mem *m = ctx;

	(void)shot;
	m->ends[m->nends++] = n;
	return 0;
}

static int m_note(void *ctx, uint64_t t, const char *text)
{
	struct mem *m = ctx;

	(void)t;
	if (m->nnotes < 8)
		snprintf(m->note[m->nnotes++], 120, "%s", text);
	return 0;
}

static const char *const ONE[] = { "x" };

static struct rec_engine *engine(unsigned int cap, double pos, unsigned int shots)
{
	struct rec_config cfg = { .capacity = cap, .position = pos, .shots = shots,
				  .nmetrics = 1, .metric = ONE };
	char err[200];
	struct rec_engine *e = rec_engine_new(&cfg, err, sizeof(err));

	if (!e)
		printf("#   engine: %s\n", err);
	return e;
}

static void sink_of(struct mem *m, struct rec_sink *s)
{
	memset(m, 0, sizeof(*m));
	memset(s, 0, sizeof(*s));
	s->ctx = m;
	s->shot_begin = m_begin;
	s->sample = m_sample;
	s->shot_end = m_end;
	s->note = m_note;
}

/* sample i is at (i + 1) ms and carries x = i (so stored x = index) */
static int push_idx(struct rec_engine *e, unsigned int i, enum rec_cause ext,
		    const struct rec_sink *s)
{
	double v = (double)i;

	return rec_engine_push(e, 1000000ull * (i + 1), &v, ext, NULL, 0, NULL, s);
}

TEST(rec_positions_exact)
{
	static const double pos[] = { 0, 50, 100, 25, 90 };
	unsigned int p;

	/* ring of 10, trigger x >= 20 (sample 20); pre = round(P * 9 / 100) */
	for (p = 0; p < 5; p++) {
		unsigned int pre = (unsigned int)floor(pos[p] * 9 / 100 + 0.5), i, last = 0;
		struct rec_engine *e = engine(10, pos[p], 1);
		struct rec_sink s;
		struct mem m;
		char err[200];
		int st = 0;

		sink_of(&m, &s);
		CHECK_EQ(rec_engine_set_trigger(e, "x >= 20", err, sizeof(err)), 0);
		for (i = 0; i < 100; i++) {
			st = push_idx(e, i, REC_CAUSE_NONE, &s);
			if (st == REC_DONE) {
				last = i;
				break;
			}
		}
		CHECK_EQ(st, REC_DONE);
		CHECK_EQ(m.nshots, 1);
		CHECK_EQ(m.pre[0], pre);
		CHECK_EQ(m.cause[0], REC_CAUSE_EXPR);
		CHECK_U64(m.trig[0], 21000000ull);
		CHECK_EQ(m.nsamples, 10);
		CHECK_EQ(m.nends, 1);
		CHECK_EQ(m.ends[0], 10);
		/* samples 20 - pre .. 20 - pre + 9, in order */
		for (i = 0; i < m.nsamples; i++)
			CHECK_NEAR(m.x[i], 20.0 - pre + i, 0);
		CHECK_EQ(last, 20 - pre + 9);
		/* done: further samples are ignored */
		CHECK_EQ(push_idx(e, 99, REC_CAUSE_NONE, &s), REC_DONE);
		CHECK_EQ(m.nsamples, 10);
		rec_engine_free(e);
	}
}

TEST(rec_early_trigger_and_shots)
{
	struct rec_engine *e = engine(8, 50, 2);	/* pre = round(3.5) = 4 */
	struct rec_sink s;
	struct mem m;
	char err[200];
	unsigned int i;
	int st = 0;

	sink_of(&m, &s);
	/* trigger at 2 (ring has 2 of 4), then a rising edge again at 30 */
	CHECK_EQ(rec_engine_set_trigger(e, "x == 2 || x >= 30", err, sizeof(err)), 0);
	for (i = 0; i < 60 && st != REC_DONE; i++)
		st = push_idx(e, i, REC_CAUSE_NONE, &s);
	CHECK_EQ(st, REC_DONE);
	CHECK_EQ(m.nshots, 2);
	CHECK_EQ(m.pre[0], 2);		/* samples 0, 1 */
	CHECK_EQ(m.ends[0], 6);		/* 0..5: the trigger and 4 - 1 = 3 ... */
	CHECK_EQ(m.pre[1], 4);
	CHECK_EQ(m.ends[1], 8);
	CHECK_EQ(m.nsamples, 14);
	CHECK_NEAR(m.x[0], 0, 0);
	CHECK_NEAR(m.x[5], 5, 0);
	/* second shot: the ring is empty after re-arming at 6; 26..29 before 30 */
	CHECK_NEAR(m.x[6], 26, 0);
	CHECK_NEAR(m.x[10], 30, 0);
	CHECK_NEAR(m.x[13], 33, 0);
	CHECK_EQ(i, 34);
	rec_engine_free(e);
}

TEST(rec_external_trigger_and_finish)
{
	struct rec_engine *e = engine(6, 100, 1);	/* pre 5: the trigger is last */
	struct rec_sink s;
	struct mem m;
	unsigned int i;

	sink_of(&m, &s);
	for (i = 0; i < 7; i++)
		CHECK_EQ(push_idx(e, i, REC_CAUSE_NONE, &s), REC_ARMED);
	CHECK_EQ(push_idx(e, 7, REC_CAUSE_SIGNAL, &s), REC_DONE);
	CHECK_EQ(m.cause[0], REC_CAUSE_SIGNAL);
	CHECK_EQ(m.nsamples, 6);
	CHECK_NEAR(m.x[0], 2, 0);
	CHECK_NEAR(m.x[5], 7, 0);
	rec_engine_free(e);

	/* stopped while armed: the ring is kept as an untriggered shot */
	e = engine(6, 50, 1);	/* pre round(2.5) = 3 */
	sink_of(&m, &s);
	for (i = 0; i < 9; i++)
		push_idx(e, i, REC_CAUSE_NONE, &s);
	CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(m.nshots, 1);
	CHECK_EQ(m.cause[0], REC_CAUSE_NONE);
	CHECK_EQ(m.nsamples, 3);
	CHECK_NEAR(m.x[0], 6, 0);
	CHECK_EQ(m.ends[0], 3);
	rec_engine_free(e);

	/* stopped in the post phase: the shot ends short */
	e = engine(6, 0, 1);
	sink_of(&m, &s);
	push_idx(e, 0, REC_CAUSE_COMMAND, &s);
	push_idx(e, 1, REC_CAUSE_NONE, &s);
	CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(m.cause[0], REC_CAUSE_COMMAND);
	CHECK_EQ(m.ends[0], 2);
	rec_engine_free(e);
}

TEST(rec_counters_and_feedback)
{
	/* x per sample; c counts samples with x > 50, cleared at x == 0 */
	static const double xs[] = { 0, 60, 60, 0, 60, 60, 60, 60, 0, 60 };
	struct rec_engine *e = engine(4, 50, 1);	/* pre round(1.5) = 2 */
	struct rec_action acts[4];
	unsigned int i, nacts, fb_at[10], nfb = 0;
	struct rec_sink s;
	struct mem m;
	char err[256];
	int st = 0;

	sink_of(&m, &s);
	CHECK_EQ(rec_engine_add_counter(e, "c inc x > 50; clear x == 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_counter(e, "d inc c >= 2; dec x == 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_ntracks(e), 3);
	CHECK_STR(rec_engine_track(e, 1), "c");
	CHECK_EQ(rec_engine_add_feedback(e, "c >= 2 => period 200us", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_on_trigger(e, "enable ddr", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "c >= 3", err, sizeof(err)), 0);
	for (i = 0; i < 10 && st != REC_DONE; i++) {
		st = rec_engine_push(e, 1000000ull * i, &xs[i], REC_CAUSE_NONE, acts, 4, &nacts, &s);
		CHECK(st >= 0);
		if (nacts && acts[0].kind == REC_ACT_PERIOD) {
			CHECK_U64(acts[0].period_ns, 200000);
			fb_at[nfb++] = i;
		}
		if (i == 6) {
			/* c = 3 at 6: the trigger, with its on-trigger action */
			CHECK_EQ(nacts, 1);
			CHECK_EQ(acts[0].kind, REC_ACT_ENABLE);
			CHECK_STR(acts[0].set, "ddr");
		}
	}
	/* c: 0 1 2 0 1 2 3 ; the rising edges of c >= 2 at 2 and 5 */
	CHECK_EQ(nfb, 2);
	CHECK_EQ(fb_at[0], 2);
	CHECK_EQ(fb_at[1], 5);
	/* shot: samples 4, 5 | 6 (trigger) | 7 */
	CHECK_EQ(st, REC_DONE);
	CHECK_EQ(i, 8);
	CHECK_EQ(m.pre[0], 2);
	CHECK_EQ(m.nsamples, 4);
	CHECK_U64(m.t[0], 4000000);
	CHECK_U64(m.t[2], 6000000);
	CHECK_EQ(m.nnotes, 3);
	CHECK_STR(m.note[0], "feedback: sample 2: period 200000ns");
	CHECK_STR(m.note[2], "trigger: sample 6: enable ddr");
	rec_engine_free(e);

	/* d: inc while c >= 2 (c updated first), dec at x == 0:
	 * c 0 1 2 0 1 2 3 4 0 1 -> d -1 -1 0 -1 -1 0 1 2 1 1
	 */
	e = engine(100, 100, 1);
	sink_of(&m, &s);
	CHECK_EQ(rec_engine_add_counter(e, "c inc x > 50; clear x == 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_counter(e, "d inc c >= 2; dec x == 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "d == 2", err, sizeof(err)), 0);
	for (i = 0; i < 10; i++)
		if (rec_engine_push(e, 1000000ull * i, &xs[i], REC_CAUSE_NONE, NULL, 0, NULL, &s) == REC_DONE)
			break;
	CHECK_EQ(i, 7);
	rec_engine_free(e);
}

TEST(rec_bad_definitions)
{
	struct rec_engine *e = engine(4, 50, 1);
	struct rec_config cfg = { .capacity = 0, .position = 50, .nmetrics = 1, .metric = ONE };
	struct rec_action a;
	char err[256];

	CHECK_EQ(rec_engine_add_counter(e, "x inc x > 1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "the name is taken") != NULL);
	CHECK_EQ(rec_engine_add_counter(e, "9c inc x > 1", err, sizeof(err)), -EINVAL);
	CHECK_EQ(rec_engine_add_counter(e, "c bump x > 1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected inc, dec, clear or count") != NULL);
	CHECK_EQ(rec_engine_add_counter(e, "c inc q > 1", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "counter c, rule 'inc q > 1': at column 2: unknown metric or counter 'q' (hwtel record --list shows the metrics)");
	CHECK_EQ(rec_engine_ntracks(e), 1);
	CHECK_EQ(rec_engine_add_feedback(e, "x > 1 period 1ms", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 'COND => ACTION'") != NULL);
	CHECK_EQ(rec_action_parse("period 50us", &a, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "period '50us' is below the minimum of 100us");
	CHECK_EQ(rec_action_parse("reboot now", &a, err, sizeof(err)), -EINVAL);
	CHECK_EQ(rec_action_parse("period 100us", &a, err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x >", err, sizeof(err)), -EINVAL);
	rec_engine_free(e);
	CHECK(rec_engine_new(&cfg, err, sizeof(err)) == NULL);
	cfg.capacity = 4;
	cfg.position = 101;
	CHECK(rec_engine_new(&cfg, err, sizeof(err)) == NULL);
}

TEST(rec_uvarint)
{
	static const uint64_t v[] = { 0, 1, 127, 128, 16383, 16384, 1000000, ~0ull };
	static const size_t len[] = { 1, 1, 1, 2, 2, 3, 3, 10 };
	unsigned char b[10];
	unsigned int i;
	uint64_t r;

	for (i = 0; i < 8; i++) {
		CHECK_EQ(rec_put_uvarint(b, v[i]), len[i]);
		CHECK_EQ(rec_get_uvarint(b, len[i], &r), len[i]);
		CHECK_U64(r, v[i]);
		CHECK_EQ(rec_get_uvarint(b, len[i] - 1, &r), 0);
	}
}

/* ---- file round trip ---- */

#define RT_N 2500	/* three syncs for the shot (0, 1000, 2000) */

static unsigned char *record_file(size_t *len, unsigned int *nsamples)
{
	const char *path = unit_tmp("rec.cap");
	static const char *const TR[] = { "x", "half" };
	struct rec_config cfg = { .capacity = RT_N, .position = 40, .shots = 1,
				  .period_ns = 1000000, .nmetrics = 2, .metric = TR };
	char (*tracks)[REC_NAME_MAX] = calloc(3, REC_NAME_MAX);
	struct rec_header h = { .period_ns = 1000000, .capacity = RT_N, .shots = 1,
				.position = 40, .clock = "ns", .command = "unit" };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	unsigned int i;
	uint64_t t = 5000000000ull;
	int fd;

	rec_engine_add_counter(e, "n inc 1", NULL, 0);
	rec_engine_set_trigger(e, "x >= 3000", NULL, 0);
	h.pre = rec_pre_count(RT_N, 40);
	h.ntracks = rec_engine_ntracks(e);
	for (i = 0; i < h.ntracks; i++)
		snprintf(tracks[i], REC_NAME_MAX, "%s", rec_engine_track(e, i));
	h.track = tracks;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 1700000000000000000ll);
	rec_writer_sink(w, &s);
	rec_engine_add_feedback(e, "x == 3001 => period 500us", NULL, 0);
	for (i = 0; i < 10000; i++) {
		/* irregular ticks: 1 ms plus i % 7 ns, 2 s jump at 2000 */
		double v[2] = { i, i / 2.0 };

		t += 1000000 + i % 7 + (i == 2000 ? 2000000000ull : 0);
		if (rec_engine_push(e, t, v, REC_CAUSE_NONE, NULL, 0, NULL, &s) == REC_DONE)
			break;
	}
	*nsamples = (unsigned int)rec_engine_index(e);
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	free(tracks);
	return (unsigned char *)unit_slurp(path, len);
}

TEST(rec_file_round_trip_and_truncation)
{
	unsigned int pushed, i, pre = rec_pre_count(RT_N, 40), first = 3000 - pre;
	struct rec_capture c;
	size_t len, cut, prev_good = 0;
	unsigned char *buf = record_file(&len, &pushed);
	unsigned int prev_n = 0;
	char err[200];
	uint64_t t;
	bool mono_ok = true;

	CHECK(buf != NULL);
	if (!buf)
		return;
	/* triggered at x = 3000, pre 1000 (round(0.4 * 2499)), 1500 from 3000 on */
	CHECK_EQ(pre, 1000);
	CHECK_EQ(pushed, 3000 + RT_N - pre);
	CHECK_EQ(rec_read_mem(buf, len, &c, err, sizeof(err)), 0);
	CHECK(c.complete);
	CHECK_EQ(c.good_bytes, len);
	CHECK_EQ(c.h.ntracks, 3);
	CHECK_STR(c.h.track[2], "n");
	CHECK_EQ(c.h.capacity, RT_N);
	CHECK_EQ(c.h.pre, 1000);
	CHECK_EQ(c.nshots, 1);
	CHECK_EQ(c.shots[0].pre, 1000);
	CHECK_EQ(c.shots[0].cause, REC_CAUSE_EXPR);
	CHECK(c.shots[0].ended);
	CHECK_EQ(c.nsamples, RT_N);
	CHECK_EQ(c.nsyncs, 3);
	CHECK_EQ(c.nnotes, 1);
	CHECK_STR(c.notes[0].text, "feedback: sample 3001: period 500000ns");
	/* exact times: recompute the script's clock for sample k */
	for (i = 0; i < c.nsamples && mono_ok; i++) {
		unsigned int k = first + i, j;

		t = 5000000000ull;
		for (j = 0; j <= k; j++)
			t += 1000000 + j % 7 + (j == 2000 ? 2000000000ull : 0);
		if (c.samples[i].mono_ns != t ||
		    c.samples[i].real_ns != t + 1700000000000000000ull ||
		    c.samples[i].vals[0] != (float)k || c.samples[i].vals[1] != (float)(k / 2.0) ||
		    c.samples[i].vals[2] != (float)(k + 1)) {
			printf("#   sample %u: t %llu want %llu\n", i,
			       (unsigned long long)c.samples[i].mono_ns, (unsigned long long)t);
			mono_ok = false;
		}
	}
	CHECK(mono_ok);
	CHECK_U64(c.shots[0].trig_mono_ns, c.samples[pre].mono_ns);
	CHECK_EQ(len - c.good_bytes, 0);
	/*
	 * The size, record by record (version 2: type, 1-byte length, payload,
	 * 4-byte CRC): the header's CRC 4; shot 1 + 1 + (1 + 1 + 2 (pre 1000)
	 * + 8) + 4 = 18; 3 syncs of 1 + 1 + 16 + 4 = 22; a sample is
	 * 1 + 1 + (3-byte tick delta (1 ms) + 3 f64) + 4 = 33 bytes, 31 after a
	 * sync (delta 0); the note 1 + 1 + (8 + 1 + 38) + 4 = 53; the period
	 * of the samples after the feedback 1 + 1 + 8 + 4 = 14; shot end
	 * 1 + 1 + (1 + 2) + 4 = 9; end 1 + 1 + (1 + 8) + 4 = 15.
	 */
	{
		size_t hlen = (size_t)buf[12] | (size_t)buf[13] << 8 | (size_t)buf[14] << 16;

		CHECK_EQ(len - 16 - hlen, 4 + 18 + 3 * 22 + (RT_N - 3) * 33 + 3 * 31 + 53 + 14 + 9 + 15);
	}
	rec_capture_free(&c);

	/* every cut: readable, monotone, complete only when whole */
	for (cut = 16; cut < len; cut += 1 + cut % 13) {
		int r = rec_read_mem(buf, cut, &c, err, sizeof(err));

		if (r == -EINVAL) {	/* cut inside the header only */
			CHECK(cut < 400);
			continue;
		}
		CHECK_EQ(r, 0);
		CHECK(!c.complete);
		CHECK(c.good_bytes <= cut && c.good_bytes >= prev_good);
		CHECK(c.nsamples >= prev_n);
		CHECK(cut - c.good_bytes < 64);
		prev_n = c.nsamples;
		prev_good = c.good_bytes;
		rec_capture_free(&c);
	}
	/* one byte short of the end record: every sample, not complete */
	CHECK_EQ(rec_read_mem(buf, len - 1, &c, err, sizeof(err)), 0);
	CHECK(!c.complete);
	CHECK_EQ(c.nsamples, RT_N);
	rec_capture_free(&c);
	/* the end record is 15 bytes, the shot end 9 before it, the last
	 * sample before that
	 */
	CHECK_EQ(rec_read_mem(buf, len - 15 - 9 - 1, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.nsamples, RT_N - 1);
	rec_capture_free(&c);
	/* a changed type byte: the checksum fails, read up to it, with the
	 * reason (the first sync, after the header's CRC and the shot record)
	 */
	{
		size_t hlen = (size_t)buf[12] | (size_t)buf[13] << 8 | (size_t)buf[14] << 16;
		size_t at = 16 + hlen + 4 + 18;
		unsigned char keep = buf[at];
		char want[100];

		CHECK_EQ(buf[16 + hlen + 4], 'B');
		CHECK_EQ(keep, 'S');
		buf[at] = 'Q';
		err[0] = '\0';
		CHECK_EQ(rec_read_mem(buf, len, &c, err, sizeof(err)), 0);
		CHECK(!c.complete);
		CHECK_EQ(c.nshots, 1);
		CHECK_EQ(c.nsamples, 0);
		CHECK_EQ(c.good_bytes, at);
		snprintf(want, sizeof(want), "corrupt capture: checksum mismatch in the record at byte %zu", at);
		CHECK_STR(err, want);
		rec_capture_free(&c);
		buf[at] = keep;
	}
	CHECK_EQ(rec_read_mem(buf, 10, &c, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "not a hwtel capture (no HWTELREC header)");
	buf[8] = 4;
	CHECK_EQ(rec_read_mem(buf, len, &c, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "capture file version not supported (this hwtel reads versions 1 to 3)");
	free(buf);
}

TEST(rec_views_parse)
{
	static const char *const ext[] = { "txt", "csv", "json", "trace.json", "svg" };
	unsigned int pushed, v;
	size_t len;
	unsigned char *buf = record_file(&len, &pushed);
	struct rec_capture c;
	char err[200];

	CHECK_EQ(rec_read_mem(buf, len, &c, err, sizeof(err)), 0);
	for (v = 0; v < 5; v++) {
		struct rec_view_opts o = { .view = (enum rec_view)v, .context = 5, .shot = -1 };
		char name[32];
		FILE *f;

		snprintf(name, sizeof(name), "rec.%s", ext[v]);
		f = fopen(unit_tmp(name), "w");
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
	}
	CHECK_EQ(system("python3 -c 'import json,sys,os; d=json.load(open(os.environ[\"HWTEL_UNIT_DIR\"]+\"/rec.json\")); "
			"s=d[\"shots\"][0]; sys.exit(not (d[\"complete\"] and d[\"tracks\"]==[\"x\",\"half\",\"n\"] and "
			"len(s[\"samples\"])==2500 and s[\"trigger_index\"]==1000 and s[\"samples\"][1000][\"values\"][0]==3000))'"), 0);
	CHECK_EQ(system("python3 -c 'import json,sys,os; d=json.load(open(os.environ[\"HWTEL_UNIT_DIR\"]+\"/rec.trace.json\")); "
			"e=d[\"traceEvents\"]; c=[x for x in e if x[\"ph\"]==\"C\"]; "
			"sys.exit(not (set(x[\"name\"] for x in c)=={\"x\",\"half\",\"n\",\"period (ms)\"} and len(c)==7502 and "
			"sum(1 for x in e if x[\"ph\"]==\"i\")==2))'"), 0);
	CHECK_EQ(system("python3 -c 'import xml.dom.minidom as m, os; d=m.parse(os.environ[\"HWTEL_UNIT_DIR\"]+\"/rec.svg\"); "
			"import sys; sys.exit(len(d.getElementsByTagName(\"polyline\"))!=3 or "
			"len(d.getElementsByTagName(\"line\"))!=3)'"), 0);
	/* the text timeline: 5 either side of the marked trigger */
	{
		char *t = unit_slurp(unit_tmp("rec.txt"), NULL);

		/* the feedback's 500 us from sample 3002 (+2): a period column */
		CHECK(t && strstr(t, "\n>>        +0       +0.000     1.000           3000           1500           3001\n"));
		CHECK(t && strstr(t, "\n          +2       +2.000     0.500           3002           1501           3003\n"));
		CHECK(t && strstr(t, "      -5       -5.0"));
		CHECK(t && !strstr(t, "      -6 "));
		CHECK(t && strstr(t, "shot 0: trigger condition at sample 1000, 1000 before it, 1499 after it\n"));
		free(t);
	}
	rec_capture_free(&c);
	free(buf);
}

/*
 * A file cut inside the ring flush holds fewer samples than the shot's
 * "pre": the trigger sample is not in it. The text view says so and shows
 * the last samples it has; the SVG keeps every mark on its canvas.
 */
TEST(rec_views_cut_before_trigger)
{
	unsigned int pushed, rows = 0;
	size_t len, cut;
	unsigned char *buf = record_file(&len, &pushed);
	struct rec_view_opts o = { .view = REC_VIEW_TEXT, .context = 5, .shot = -1 };
	struct rec_capture c;
	char err[200], *out = NULL, *p;
	size_t n;
	FILE *f;

	CHECK(buf != NULL);
	if (!buf)
		return;
	/* the first cut that leaves 100 to 200 samples of the 1000 before */
	for (cut = 400; cut < len; cut += 16) {
		if (rec_read_mem(buf, cut, &c, err, sizeof(err)) == 0) {
			if (c.nshots == 1 && c.shots[0].nsamples >= 100 &&
			    c.shots[0].nsamples <= 200)
				break;
			rec_capture_free(&c);
		}
	}
	CHECK(cut < len);
	if (cut >= len) {
		free(buf);
		return;
	}
	CHECK_EQ(c.shots[0].pre, 1000);

	f = open_memstream(&out, &n);
	CHECK_EQ(rec_view(f, &c, &o), 0);
	fclose(f);
	CHECK(!strstr(out, "after it"));
	snprintf(err, sizeof(err),
		 "shot 0: trigger condition at sample 1000, not in the file (cut short %u samples before it)\n",
		 1000 - c.shots[0].nsamples);
	CHECK(strstr(out, err) != NULL);
	if (!strstr(out, err))
		printf("#   text view:\n%s", out);
	/* the last 5 samples it has, numbered from the trigger */
	snprintf(err, sizeof(err), "\n    %+8d ", -(int)(1000 - c.shots[0].nsamples + 1));
	CHECK(strstr(out, err) != NULL);
	for (p = strchr(out, '\n'); p; p = strchr(p + 1, '\n')) {
		long rel;
		char sign;

		rows += sscanf(p + 1, "    %c%ld", &sign, &rel) == 2 &&
			(sign == '-' || sign == '+');
	}
	CHECK_EQ(rows, 5);
	free(out);

	out = NULL;
	o.view = REC_VIEW_SVG;
	f = open_memstream(&out, &n);
	CHECK_EQ(rec_view(f, &c, &o), 0);
	fclose(f);
	/* every x on the 900-px canvas */
	for (p = strstr(out, " x"); p; p = strstr(p + 1, " x")) {
		double x;

		if (sscanf(p, " x=\"%lf\"", &x) == 1 || sscanf(p, " x1=\"%lf\"", &x) == 1 ||
		    sscanf(p, " x2=\"%lf\"", &x) == 1) {
			CHECK(x >= 0 && x <= 900);
			if (!(x >= 0 && x <= 900)) {
				printf("#   %.60s\n", p);
				break;
			}
		}
	}
	free(out);
	rec_capture_free(&c);
	free(buf);
}

/* ---- the commands' option errors (no PMU needed: they come first) ---- */
#include "cli.h"

static int run_main(int (*fn)(int, char **), const char *const *args, char *err, size_t size)
{
	char *argv[32];
	int argc = 0, ret, fd, saved;
	FILE *f;

	while (args[argc]) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	fflush(stderr);
	saved = dup(2);
	f = tmpfile();
	fd = fileno(f);
	dup2(fd, 2);
	ret = fn(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	memset(err, 0, size);
	if (fread(err, 1, size - 1, f) == 0)
		err[0] = '\0';
	fclose(f);
	return ret;
}

#define RARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

TEST(rec_cli_errors)
{
	char err[4096];

	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-p", "50us"), err, sizeof(err)), 2);
	CHECK(strstr(err, "hwtel record: error: -p/--period: 50us is below the minimum period of 100us\n"));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-p", "1 ms"), err, sizeof(err)), 2);
	CHECK(strstr(err, "bad period '1 ms'"));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "--position", "101"), err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "--position", "middle"), err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-N", "0"), err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-N", "10", "-S", "1"), err, sizeof(err)), 2);
	CHECK(strstr(err, "-N and -S exclude each other"));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "--shots", "0"), err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "--bogus"), err, sizeof(err)), 2);
	CHECK(strstr(err, "unrecognized option '--bogus'"));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-o"), err, sizeof(err)), 2);
	CHECK(strstr(err, "option '-o' needs an argument"));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "--sync", "0"), err, sizeof(err)), 2);
	CHECK(strstr(err, "hwtel record: error: --sync: bad period '0' (a number and ns, us, ms or s)\n"));
	/* a source that is no source: status 2 before anything is opened */
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-s", "gpu"), err, sizeof(err)), 2);
	CHECK(strstr(err, "bad source 'gpu'"));

	CHECK_EQ(run_main(hwtel_report_main, RARGS("report"), err, sizeof(err)), 2);
	CHECK(strstr(err, "no capture FILE given"));
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--csv", "--json", "x"), err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "/nonexistent/x.rec"), err, sizeof(err)), 1);
	CHECK(strstr(err, "cannot open /nonexistent/x.rec"));
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "/etc/hostname"), err, sizeof(err)), 2);
	CHECK(strstr(err, "not a hwtel capture"));
	/* the round-trip capture of the file test */
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--csv", "-o", unit_tmp("rec.csv2"),
						   unit_tmp("rec.cap")), err, sizeof(err)), 0);
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--shot", "3", unit_tmp("rec.cap")),
			  err, sizeof(err)), 2);
	CHECK(strstr(err, "has no shot 3"));
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "-m", "nope*", unit_tmp("rec.cap")),
			  err, sizeof(err)), 2);
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--svg", "-o", "/nonexistent/p.svg",
						   unit_tmp("rec.cap")), err, sizeof(err)), 1);
	CHECK(strstr(err, "hwtel report: error: cannot write /nonexistent/p.svg: No such file or directory\n"));
	{
		char *csv = unit_slurp(unit_tmp("rec.csv2"), NULL);

		CHECK(csv && !strncmp(csv, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,half,n,gap_missed,gap_stale\n0,0,-1000,", 91));
		free(csv);
	}
}

/*
 * -o never replaces what is not a regular file: a device node is written
 * in place and its error reported (a "full" device, 1:7, made in a scratch
 * directory as root), a symbolic link keeps pointing where it did, and a
 * dangling one is refused without creating a file.
 */
TEST(rec_report_output_targets)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", dev[64], real[64], link[64], err[4096], *text;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(dev, sizeof(dev), "%s/full", dir);
	snprintf(real, sizeof(real), "%s/real.csv", dir);
	snprintf(link, sizeof(link), "%s/link.csv", dir);
	if (mknod(dev, S_IFCHR | 0600, makedev(1, 7)) == 0) {
		CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--json", "-o", dev,
							   unit_tmp("rec.cap")), err, sizeof(err)), 1);
		CHECK(strstr(err, "No space left on device"));
		CHECK_EQ(lstat(dev, &st), 0);
		CHECK(S_ISCHR(st.st_mode));
		unlink(dev);
	} else {
		printf("#   rec_report_output_targets: mknod: %s (not root): device not checked\n",
		       strerror(errno));
	}
	CHECK_EQ(symlink("real.csv", link), 0);
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--csv", "-o", link,
						   unit_tmp("rec.cap")), err, sizeof(err)), 1);
	CHECK(strstr(err, "symbolic link to nothing"));
	CHECK_EQ(lstat(real, &st), -1);
	CHECK_EQ(close(open(real, O_WRONLY | O_CREAT, 0644)), 0);
	CHECK_EQ(run_main(hwtel_report_main, RARGS("report", "--csv", "-o", link,
						   unit_tmp("rec.cap")), err, sizeof(err)), 0);
	CHECK_EQ(lstat(link, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	text = unit_slurp(real, NULL);
	CHECK(text && !strncmp(text, "shot,sample,from_trigger,", 25));
	free(text);
	unlink(link);
	unlink(real);
	CHECK_EQ(rmdir(dir), 0);	/* no temporary file left behind */
}

/*
 * The record grammar, the capture header and the views read and write '.'
 * whatever LC_NUMERIC the program set.
 */
TEST(rec_locale_independent)
{
	static const char *const name[] = { "text", "csv", "json", "trace", "svg" };
	const char *path = unit_tmp("rec-locale.cap");
	static const char *const TR[] = { "x" };
	char (*tracks)[REC_NAME_MAX] = calloc(1, REC_NAME_MAX);
	struct rec_header h = { .period_ns = 1000000, .capacity = 8, .shots = 1,
				.position = 12.5, .clock = "ns", .command = "unit",
				.ntracks = 1 };
	unsigned int pushed, v;
	unsigned char *buf;
	struct rec_capture c;
	struct rec_writer *w;
	char err[200];
	size_t len;
	int fd;

	snprintf(tracks[0], REC_NAME_MAX, "%s", TR[0]);
	h.track = tracks;
	if (!unit_setlocale_comma()) {
		free(tracks);
		return;
	}
	CHECK_NEAR(val("2.5k + 0.25", 0, 0, 0), 2500.25, 0);
	CHECK_NEAR(val("x > 1.5", 1.75, 0, 0), 1, 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	unit_setlocale_c();
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_NEAR(c.h.position, 12.5, 0);
	rec_capture_free(&c);
	unlink(path);
	free(tracks);

	buf = record_file(&len, &pushed);
	CHECK_EQ(rec_read_mem(buf, len, &c, err, sizeof(err)), 0);
	for (v = 0; v < 5; v++) {
		struct rec_view_opts o = { .view = (enum rec_view)v, .context = 5, .shot = -1 };
		char *c_out = NULL, *out = NULL;
		size_t n;
		FILE *f;

		f = open_memstream(&c_out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		if (!unit_setlocale_comma()) {
			free(c_out);
			break;
		}
		f = open_memstream(&out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		unit_setlocale_c();
		unit_same_in_comma_locale(name[v], c_out, out);
		free(c_out);
		free(out);
	}
	rec_capture_free(&c);
	free(buf);
}

/*
 * A capture with the pcie.untrusted track (hwtel record of a PCIe source):
 * the text view marks each sample whose interval had a STATUS flag set
 * with "!" before its row (with ">>" at the trigger) and says what the
 * mark means; the JSON view gives "trusted" per sample (null where the
 * track is NaN: flags not read). Also when -m leaves the track out of the
 * view.
 */
TEST(rec_views_mark_untrusted_samples)
{
	const char *path = unit_tmp("rec-untrusted.cap");
	static const char *const TR[] = { "pcie.ep0.rq0.used_pct", "pcie.untrusted" };
	struct rec_config cfg = { .capacity = 5, .position = 50, .shots = 1,
				  .nmetrics = 2, .metric = TR };
	char (*tracks)[REC_NAME_MAX] = calloc(2, REC_NAME_MAX);
	struct rec_header h = { .period_ns = 1000000, .capacity = 5, .shots = 1,
				.position = 50, .clock = "ns", .command = "unit" };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	char err[200], *buf = NULL;
	unsigned int i;
	int fd;

	CHECK_EQ(rec_engine_set_trigger(e, "pcie.untrusted > 0", NULL, 0), 0);
	h.pre = rec_pre_count(5, 50);
	h.ntracks = 2;
	for (i = 0; i < 2; i++)
		snprintf(tracks[i], REC_NAME_MAX, "%s", TR[i]);
	h.track = tracks;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	for (i = 0; i < 6; i++) {
		/* sample 1: flags not read; 3: flagged (the trigger); 4: flagged */
		double v[2] = { 50 + i, i == 1 ? NAN : i == 3 || i == 4 ? 1 : 0 };

		rec_engine_push(e, 1000000000ull + i * 1000000ull, v, REC_CAUSE_NONE, NULL, 0, NULL, &s);
	}
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	free(tracks);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);

	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\nnote: ! marks a sample whose interval had a STATUS flag set (pcie.untrusted = 1): none of its figures can be trusted\n") != NULL);
	CHECK(strstr(buf, "\n          -2       -2.000                    51              -\n"
		      "          -1       -1.000                    52              0\n"
		      "!>>       +0       +0.000                    53              1\n"
		      "!         +1       +1.000                    54              1\n"
		      "          +2       +2.000                    55              0\n") != NULL);
	free(buf);
	buf = NULL;
	/* -m without the track: still marked */
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1, .nsel = 1, .sel = { 0 } };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\n!>>       +0       +0.000                    53\n") != NULL);
	free(buf);
	buf = NULL;
	{
		struct rec_view_opts o = { .view = REC_VIEW_JSON, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"values\": [\n                        51.0,\n                        null\n                    ],\n                    \"trusted\": null\n") != NULL);
	CHECK(strstr(buf, "\"values\": [\n                        52.0,\n                        0.0\n                    ],\n                    \"trusted\": true\n") != NULL);
	CHECK(strstr(buf, "\"values\": [\n                        53.0,\n                        1.0\n                    ],\n                    \"trusted\": false\n") != NULL);
	free(buf);
	rec_capture_free(&c);
	remove(path);
}

/*
 * tools/tests/fixtures/record/v1.cap: a version 1 capture, written by the
 * version 1 writer (hwtel before format version 2) with this script:
 * tracks x, y and the counter "n inc x > 3"; ring 5, position 50 (pre 2),
 * 2 shots; trigger "x >= 9"; feedback "x == 7.5 => period 500us";
 * on-trigger "enable ddr"; realtime = monotonic + 1.7e18 ns. Sample i at
 * 1e9 + i * 1e6 + i ns with x = 1.5 i, y = 0.25 i (NaN when i % 3 == 0);
 * SIGUSR1 at sample 20. Every value is exact in f32.
 */
static uint64_t fx_t(unsigned int i)
{
	return 1000000000ull + i * 1000000ull + i;
}

static void check_fixture_v1(const struct rec_capture *c)
{
	/* shot 0: x >= 9 first at i = 6, samples 4..8; shot 1: the ring
	 * re-armed at 9 holds 18, 19 at SIGUSR1 (20): samples 18..22
	 */
	static const unsigned int first[2] = { 4, 18 }, trig[2] = { 6, 20 };
	unsigned int s, k, bad = 0;

	CHECK(c->complete);
	CHECK_EQ(c->good_bytes, c->bytes);
	CHECK_EQ(c->h.ntracks, 3);
	CHECK_STR(c->h.track[0], "x");
	CHECK_STR(c->h.track[2], "n");
	CHECK_U64(c->h.period_ns, 1000000);
	CHECK_EQ(c->h.capacity, 5);
	CHECK_EQ(c->h.pre, 2);
	CHECK_EQ(c->nshots, 2);
	CHECK_EQ(c->nsamples, 10);
	CHECK_EQ(c->nsyncs, 2);
	if (c->nshots != 2 || c->nsamples != 10)
		return;
	for (s = 0; s < 2; s++) {
		CHECK_EQ(c->shots[s].number, s);
		CHECK_EQ(c->shots[s].cause, s ? REC_CAUSE_SIGNAL : REC_CAUSE_EXPR);
		CHECK_EQ(c->shots[s].pre, 2);
		CHECK_EQ(c->shots[s].nsamples, 5);
		CHECK(c->shots[s].ended);
		CHECK_U64(c->shots[s].trig_mono_ns, fx_t(trig[s]));
		for (k = 0; k < 5; k++) {
			const struct rec_sample *sm = &c->samples[5 * s + k];
			unsigned int i = first[s] + k;

			if (sm->shot != s || sm->index != k || sm->mono_ns != fx_t(i) ||
			    sm->real_ns != fx_t(i) + 1700000000000000000ull ||
			    sm->vals[0] != 1.5 * i ||
			    (i % 3 ? sm->vals[1] != 0.25 * i : !isnan(sm->vals[1])) ||
			    sm->vals[2] != i - 2.0) {
				printf("#   fixture sample %u (i %u) differs\n", 5 * s + k, i);
				bad++;
			}
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(c->nnotes, 3);
	if (c->nnotes == 3) {
		CHECK_STR(c->notes[0].text, "feedback: sample 5: period 500000ns");
		CHECK_U64(c->notes[0].mono_ns, fx_t(5));
		CHECK_STR(c->notes[1].text, "trigger: sample 6: enable ddr");
		CHECK_U64(c->notes[1].mono_ns, fx_t(6));
		CHECK_STR(c->notes[2].text, "trigger: sample 20: enable ddr");
		CHECK_U64(c->notes[2].mono_ns, fx_t(20));
	}
}

TEST(rec_reads_v1_fixture)
{
	struct rec_capture c;
	char err[200] = "";

	CHECK_EQ(rec_read("fixtures/record/v1.cap", &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	check_fixture_v1(&c);
	rec_capture_free(&c);
}

/* ---- format version 2: framing, checksums, torn tails, fuzzing ---- */

/* The v1 fixture's script through today's writer, into memory. */
static unsigned char *script_capture(size_t *len)
{
	const char *path = unit_tmp("rec-script.cap");
	static const char *const TR[] = { "x", "y" };
	struct rec_config cfg = { .capacity = 5, .position = 50, .shots = 2, .period_ns = 1000000,
				  .nmetrics = 2, .metric = TR };
	char tracks[3][REC_NAME_MAX];
	struct rec_header h = { .period_ns = 1000000, .capacity = 5, .shots = 2, .position = 50,
				.clock = "ns", .command = "unit script" };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	unsigned char *buf;
	unsigned int i;
	int fd;

	CHECK_EQ(rec_engine_add_counter(e, "n inc x > 3", NULL, 0), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x >= 9", NULL, 0), 0);
	CHECK_EQ(rec_engine_add_feedback(e, "x == 7.5 => period 500us", NULL, 0), 0);
	CHECK_EQ(rec_engine_add_on_trigger(e, "enable ddr", NULL, 0), 0);
	h.pre = rec_pre_count(5, 50);
	h.ntracks = rec_engine_ntracks(e);
	for (i = 0; i < h.ntracks; i++)
		snprintf(tracks[i], REC_NAME_MAX, "%s", rec_engine_track(e, i));
	h.track = tracks;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 1700000000000000000ll);
	rec_writer_sink(w, &s);
	for (i = 0; i < 30; i++) {
		double v[2] = { i * 1.5, i % 3 == 0 ? NAN : i * 0.25 };

		if (rec_engine_push(e, fx_t(i), v, i == 20 ? REC_CAUSE_SIGNAL : REC_CAUSE_NONE,
				    NULL, 0, NULL, &s) == REC_DONE)
			break;
	}
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	buf = (unsigned char *)unit_slurp(path, len);
	unlink(path);
	return buf;
}

/* CRC32C (Castagnoli, reflected 0x82F63B78), bit by bit: the test's own */
static uint32_t t_crc(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0x82f63b78u : 0);
	}
	return ~c;
}

static uint32_t t_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* version 2 framing as documented: type, uvarint length, payload, CRC32C
 * of those; returns the records' offsets (and the end) in @off
 */
static unsigned int t_records(const unsigned char *b, size_t len, size_t *off, unsigned int max)
{
	size_t o = 16 + t_u32(b + 12) + 4;
	unsigned int n = 0;

	while (o < len && n < max) {
		uint64_t plen = 0;
		size_t k = 0;

		do {
			if (o + 1 + k >= len || k == 9)
				goto out;
			plen |= (uint64_t)(b[o + 1 + k] & 0x7f) << (7 * k);
		} while (b[o + 1 + k++] & 0x80);
		off[n++] = o;
		if (plen > len)
			break;
		o += 1 + k + plen + 4;
	}
out:
	off[n] = o;
	return n;
}

static size_t t_record(unsigned char *out, unsigned char type, const void *payload, size_t plen)
{
	size_t n = 0;
	uint64_t v = plen;

	out[n++] = type;
	do {
		out[n++] = (unsigned char)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	memcpy(out + n, payload, plen);
	n += plen;
	{
		uint32_t c = t_crc(out, n);

		out[n++] = (unsigned char)c;
		out[n++] = (unsigned char)(c >> 8);
		out[n++] = (unsigned char)(c >> 16);
		out[n++] = (unsigned char)(c >> 24);
	}
	return n;
}

TEST(rec_v2_layout)
{
	size_t len, off[64], hend;
	unsigned char *b = script_capture(&len);
	unsigned int n, i, count[256] = { 0 }, bad = 0;
	struct rec_capture c;
	char err[200] = "";

	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(t_u32(b + 8), 2);
	hend = 16 + t_u32(b + 12);
	CHECK(hend + 4 <= len);
	if (t_u32(b + 8) != 2 || hend + 4 > len) {
		free(b);
		return;
	}
	CHECK_EQ(t_u32(b + hend), t_crc(b, hend));
	n = t_records(b, len, off, 63);
	CHECK_EQ(off[n], len);
	for (i = 0; i < n && off[n] == len; i++) {
		size_t end = off[i + 1];

		count[b[off[i]]]++;
		if (t_u32(b + end - 4) != t_crc(b + off[i], end - 4 - off[i]))
			bad++;
		/* a sample: type, length 1 byte, tick delta, an f64 per track */
		if (b[off[i]] == 'D' && b[off[i] + 1] != (b[off[i] + 2] ? 3 : 1) + 3 * 8)
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(count['S'], 2);
	CHECK_EQ(count['B'], 2);
	CHECK_EQ(count['D'], 10);
	CHECK_EQ(count['N'], 3);
	CHECK_EQ(count['E'], 2);
	CHECK_EQ(count['P'], 1);
	CHECK_EQ(count['Z'], 1);
	CHECK_EQ(rec_read_mem(b, len, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	check_fixture_v1(&c);
	rec_capture_free(&c);
	free(b);
}

/* counts beyond f32's 24 bits come back exactly */
TEST(rec_v2_counts_exact)
{
	const char *path = unit_tmp("rec-counts.cap");
	char tracks[2][REC_NAME_MAX] = { "c", "pcie.ep0.rq0.words" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 1, .shots = 1,
				.clock = "ns", .command = "unit", .ntracks = 2, .track = tracks };
	/* 2^24 + 1 and 10^15 + 3 words per second: not f32 numbers */
	double v[2] = { 16777217.0, 1e15 + 3 };
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	char err[200];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_sink(w, &s);
	CHECK_EQ(s.shot_begin(s.ctx, 0, REC_CAUSE_SIGNAL, 0, 5000), 0);
	CHECK_EQ(s.sample(s.ctx, 5000, v), 0);
	CHECK_EQ(s.shot_end(s.ctx, 0, 1), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.nsamples, 1);
	if (c.nsamples == 1) {
		CHECK_NEAR(c.samples[0].vals[0], 16777217.0, 0);
		CHECK_NEAR(c.samples[0].vals[1], 1e15 + 3, 0);
	}
	rec_capture_free(&c);
	unlink(path);
}

/* an unknown record type anywhere between records is skipped, and so are
 * fields appended to a known record
 */
TEST(rec_v2_unknown_records_skipped)
{
	static const char future[] = "a record of a later version";
	size_t len, off[64], m;
	unsigned char *b = script_capture(&len), *x;
	unsigned int n, i;
	struct rec_capture c;
	char err[200];

	CHECK(b != NULL);
	if (!b)
		return;
	n = t_records(b, len, off, 63);
	/* 2 syncs, 2 shots, 10 samples, 3 notes, the feedback's period, 2 shot
	 * ends, the end
	 */
	CHECK_EQ(n, 21);
	x = malloc(len + 64);
	for (i = 0; i <= n && x; i++) {
		m = off[i];
		memcpy(x, b, m);
		m += t_record(x + m, 'q', future, sizeof(future));
		memcpy(x + m, b + off[i], len - off[i]);
		m += len - off[i];
		err[0] = '\0';
		CHECK_EQ(rec_read_mem(x, m, &c, err, sizeof(err)), 0);
		if (i < n) {	/* after the end record: not read */
			CHECK_STR(err, "");
			check_fixture_v1(&c);
		}
		CHECK_EQ(c.nskipped, i < n ? 1 : 0);
		rec_capture_free(&c);
	}
	/* the first shot end ('E' uvarint 0, uvarint 5) with 3 more bytes */
	for (i = 0; i < n && x; i++)
		if (b[off[i]] == 'E')
			break;
	if (x && i < n) {
		static const unsigned char e[] = { 0, 5, 0xaa, 0xbb, 0xcc };

		m = off[i];
		memcpy(x, b, m);
		m += t_record(x + m, 'E', e, sizeof(e));
		memcpy(x + m, b + off[i + 1], len - off[i + 1]);
		m += len - off[i + 1];
		CHECK_EQ(rec_read_mem(x, m, &c, err, sizeof(err)), 0);
		check_fixture_v1(&c);
		rec_capture_free(&c);
	}
	free(x);
	free(b);
}

/* the samples read from a damaged copy: a prefix of the whole file's */
static unsigned int prefix_mismatch(const struct rec_capture *whole, const struct rec_capture *c)
{
	unsigned int i, k;

	if (c->nsamples > whole->nsamples || c->nshots > whole->nshots)
		return 1;
	for (i = 0; i < c->nsamples; i++) {
		const struct rec_sample *a = &whole->samples[i], *s = &c->samples[i];

		if (a->mono_ns != s->mono_ns || a->real_ns != s->real_ns || a->shot != s->shot ||
		    a->index != s->index)
			return 1;
		for (k = 0; k < c->h.ntracks; k++)
			if (memcmp(&a->vals[k], &s->vals[k], sizeof(a->vals[k])))
				return 1;
	}
	for (i = 0; i < c->nshots; i++)
		if (c->shots[i].number != whole->shots[i].number ||
		    c->shots[i].cause != whole->shots[i].cause ||
		    c->shots[i].pre != whole->shots[i].pre ||
		    c->shots[i].trig_mono_ns != whole->shots[i].trig_mono_ns ||
		    (c->shots[i].ended && !whole->shots[i].ended))
			return 1;
	return 0;
}

/* a file cut inside a record: read up to it, and said so */
TEST(rec_v2_torn_tail)
{
	size_t len, off[64], cut;
	unsigned char *b = script_capture(&len);
	unsigned int n, r = 0, bad = 0;
	struct rec_capture whole, c;
	char err[200], want[200];

	CHECK(b != NULL);
	if (!b)
		return;
	n = t_records(b, len, off, 63);
	CHECK_EQ(rec_read_mem(b, len, &whole, err, sizeof(err)), 0);
	for (cut = off[0]; cut < len; cut++) {
		while (r < n && off[r + 1] <= cut)
			r++;
		err[0] = '\0';
		if (rec_read_mem(b, cut, &c, err, sizeof(err))) {
			bad++;
			continue;
		}
		if (cut == off[r])
			want[0] = '\0';
		else if (cut == off[r] + 1 || (b[off[r] + 1] & 0x80 && cut == off[r] + 2))
			snprintf(want, sizeof(want),
				 "cut short inside the record at byte %zu (before the end of its length)",
				 off[r]);
		else
			snprintf(want, sizeof(want),
				 "cut short inside the record at byte %zu (%zu of its %zu bytes)",
				 off[r], cut - off[r], off[r + 1] - off[r]);
		if (c.complete || c.good_bytes != off[r] || strcmp(err, want) ||
		    prefix_mismatch(&whole, &c)) {
			if (bad++ < 3)
				printf("#   cut %zu: complete %d good %zu (want %zu) err '%s' (want '%s')\n",
				       cut, c.complete, c.good_bytes, off[r], err, want);
		}
		rec_capture_free(&c);
	}
	CHECK_EQ(bad, 0);
	rec_capture_free(&whole);
	free(b);
}

/* every single bit flip: the header refused, a record and all after it
 * dropped with the reason; nothing misread
 */
TEST(rec_v2_bit_flips)
{
	size_t len, off[64], i;
	unsigned char *b = script_capture(&len);
	unsigned int n, r = 0, bit, bad = 0;
	struct rec_capture whole, c;
	char err[200], want[200];

	CHECK(b != NULL);
	if (!b)
		return;
	n = t_records(b, len, off, 63);
	CHECK_EQ(rec_read_mem(b, len, &whole, err, sizeof(err)), 0);
	for (i = 8; i < len; i++) {
		while (i >= off[0] && r < n && off[r + 1] <= i)
			r++;
		for (bit = 0; bit < 8; bit++) {
			int ret;

			b[i] ^= (unsigned char)(1u << bit);
			err[0] = '\0';
			ret = rec_read_mem(b, len, &c, err, sizeof(err));
			b[i] ^= (unsigned char)(1u << bit);
			if (i < off[0]) {	/* the header (version, length, text, CRC) */
				if (ret != -EINVAL && bad++ < 3)
					printf("#   header byte %zu bit %u: read %d\n", i, bit, ret);
				if (!ret)
					rec_capture_free(&c);
				continue;
			}
			snprintf(want, sizeof(want), "corrupt capture: checksum mismatch in the record at byte %zu",
				 off[r]);
			/* a flipped length may also reach past the end: a cut */
			if (ret || c.complete || c.good_bytes != off[r] || prefix_mismatch(&whole, &c) ||
			    (i != off[r] + 1 && strcmp(err, want)) || !err[0]) {
				if (bad++ < 3)
					printf("#   byte %zu bit %u: ret %d complete %d good %zu (want %zu) err '%s'\n",
					       i, bit, ret, !ret && c.complete, ret ? 0 : c.good_bytes,
					       off[r], err);
			}
			if (!ret)
				rec_capture_free(&c);
		}
	}
	CHECK_EQ(bad, 0);
	rec_capture_free(&whole);
	free(b);
}

static uint64_t fz_state;

static uint32_t fz_next(void)
{
	/* xorshift64* */
	fz_state ^= fz_state >> 12;
	fz_state ^= fz_state << 25;
	fz_state ^= fz_state >> 27;
	return (uint32_t)((fz_state * 0x2545f4914f6cdd1dull) >> 32);
}

/*
 * Random damage, reproducible: 1 to 4 of byte flips, byte writes,
 * truncations and inserted records of unknown types (valid checksums) or
 * of random bytes. The reader returns 0 or -EINVAL and what it reads is a
 * prefix of the undamaged capture. Version 1 files (no checksum) are cut
 * and flipped too: they must only read without a fault.
 */
TEST(rec_reader_fuzz)
{
	const uint64_t seed = 0x5eed2026c0ffee19ull;
	size_t len, vlen, m, i;
	unsigned char *b = script_capture(&len), *x;
	unsigned char *v1 = (unsigned char *)unit_slurp("fixtures/record/v1.cap", &vlen);
	unsigned int iter, k, bad = 0, partial = 0;
	struct rec_capture whole, c;
	char err[200];

	CHECK(b != NULL && v1 != NULL);
	if (!b || !v1) {
		free(b);
		free(v1);
		return;
	}
	printf("#   rec_reader_fuzz: seed 0x%016llx, 20000 rounds\n", (unsigned long long)seed);
	fz_state = seed;
	CHECK_EQ(rec_read_mem(b, len, &whole, err, sizeof(err)), 0);
	x = malloc(len + 4 * 300);
	for (iter = 0; iter < 20000 && x; iter++) {
		unsigned int nmut = 1 + fz_next() % 4;
		int ret;

		memcpy(x, b, len);
		m = len;
		for (k = 0; k < nmut && m; k++) {
			size_t at = fz_next() % m;
			unsigned char junk[256], rec[256 + 16];
			size_t jl = 1 + fz_next() % 200, j;

			switch (fz_next() % 5) {
			case 0:
				x[at] ^= (unsigned char)(1u << (fz_next() % 8));
				break;
			case 1:
				x[at] = (unsigned char)fz_next();
				break;
			case 2:
				m = at;
				break;
			case 3:	/* an unknown record, checksum right */
				for (j = 0; j < jl; j++)
					junk[j] = (unsigned char)fz_next();
				jl = t_record(rec, (unsigned char)('a' + fz_next() % 26), junk, jl);
				memmove(x + at + jl, x + at, m - at);
				memcpy(x + at, rec, jl);
				m += jl;
				break;
			default:
				for (j = 0; j < jl; j++)
					junk[j] = (unsigned char)fz_next();
				memmove(x + at + jl, x + at, m - at);
				memcpy(x + at, junk, jl);
				m += jl;
			}
		}
		ret = rec_read_mem(x, m, &c, err, sizeof(err));
		if (ret && ret != -EINVAL) {
			if (bad++ < 3)
				printf("#   round %u: read %d\n", iter, ret);
			continue;
		}
		if (ret)
			continue;
		partial += !c.complete;
		/* an unknown record inserted inside another is damage too */
		if (prefix_mismatch(&whole, &c) && bad++ < 3)
			printf("#   round %u: a sample or shot misread\n", iter);
		rec_capture_free(&c);
	}
	CHECK_EQ(bad, 0);
	CHECK(partial > 0);
	free(x);
	rec_capture_free(&whole);
	/* version 1: every cut and every bit flip reads without a fault */
	for (m = 0; m <= vlen; m++) {
		int ret = rec_read_mem(v1, m, &c, err, sizeof(err));

		CHECK(ret == 0 || ret == -EINVAL);
		if (!ret)
			rec_capture_free(&c);
	}
	for (i = 0; i < vlen; i++) {
		for (k = 0; k < 8; k++) {
			int ret;

			v1[i] ^= (unsigned char)(1u << k);
			ret = rec_read_mem(v1, vlen, &c, err, sizeof(err));
			v1[i] ^= (unsigned char)(1u << k);
			if (ret != 0 && ret != -EINVAL)
				bad++;
			if (!ret)
				rec_capture_free(&c);
		}
	}
	CHECK_EQ(bad, 0);
	free(v1);
	free(b);
}

/* ---- feedback: the period action, and the period of every sample ---- */

/*
 * Start at 1 ms; feedback "x == 3 => period 250us" at sample 3, on-trigger
 * "period 2ms" at the trigger (x >= 6, sample 6). An action applies from
 * the next sample on: samples 0-3 are taken at 1 ms, 4-6 at 250 us, 7 on
 * at 2 ms. The test schedules each sample itself with those periods and
 * asks the engine for the next one; the file, read back, and the views
 * carry each sample's period.
 */
TEST(rec_period_action)
{
	static const uint64_t want[10] = { 1000000, 1000000, 1000000, 1000000, 250000, 250000,
					   250000, 2000000, 2000000, 2000000 };
	const char *path = unit_tmp("rec-period.cap");
	struct rec_config cfg = { .capacity = 8, .position = 50, .shots = 1, .period_ns = 1000000,
				  .nmetrics = 1, .metric = ONE };
	char tracks[1][REC_NAME_MAX] = { "x" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 8, .shots = 1, .position = 50,
				.clock = "ns", .command = "unit", .ntracks = 1, .track = tracks };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	char err[200], *out = NULL;
	uint64_t t = 1000000000ull, at[10];
	unsigned int i, bad = 0;
	size_t n;
	FILE *f;
	int fd;

	CHECK_EQ(rec_engine_add_feedback(e, "x == 3 => period 250us", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_on_trigger(e, "period 2ms", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x >= 6", err, sizeof(err)), 0);
	h.pre = rec_pre_count(8, 50);	/* round(3.5) = 4: samples 2..9 */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	for (i = 0; i < 10; i++) {
		double v = i;

		CHECK_U64(rec_engine_period(e), want[i]);
		t += want[i];
		at[i] = t;
		rec_engine_push(e, t, &v, REC_CAUSE_NONE, NULL, 0, NULL, &s);
	}
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.nsamples, 8);
	CHECK_U64(c.h.period_ns, 1000000);
	for (i = 0; i < c.nsamples && c.nsamples == 8; i++)
		if (c.samples[i].mono_ns != at[2 + i] || c.samples[i].period_ns != want[2 + i]) {
			printf("#   sample %u: period %llu, want %llu\n", i,
			       (unsigned long long)c.samples[i].period_ns,
			       (unsigned long long)want[2 + i]);
			bad++;
		}
	CHECK_EQ(bad, 0);
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		f = open_memstream(&out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		CHECK(strstr(out, "period 1.000 ms at the start, then as the period_ms column says,") != NULL);
		/* sample 5 (-1), 6 (the trigger, 250 us after it), 7 (2 ms after) */
		CHECK(strstr(out, "\n          -1       -0.250     0.250              5\n"
			      ">>        +0       +0.000     0.250              6\n"
			      "          +1       +2.000     2.000              7\n") != NULL);
		free(out);
		out = NULL;
		o.view = REC_VIEW_CSV;
		f = open_memstream(&out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		snprintf(err, sizeof(err), "\n0,2,-2,%llu,%llu,250000,4,0,0\n",
			 (unsigned long long)at[4], (unsigned long long)at[4]);
		CHECK(!strncmp(out, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,gap_missed,gap_stale\n", 74));
		CHECK(strstr(out, err) != NULL);
		free(out);
		out = NULL;
		o.view = REC_VIEW_JSON;
		f = open_memstream(&out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		snprintf(err, sizeof(err), "\"mono_ns\": %llu,\n                    \"real_ns\": %llu,\n"
			 "                    \"period_ns\": 2000000,",
			 (unsigned long long)at[9], (unsigned long long)at[9]);
		CHECK(strstr(out, err) != NULL);
		free(out);
		out = NULL;
		/* trace: a "period (ms)" counter at the shot's first sample (2)
		 * and at each change (4, 7): a step, as a counter track draws it
		 */
		o.view = REC_VIEW_TRACE;
		f = open_memstream(&out, &n);
		CHECK_EQ(rec_view(f, &c, &o), 0);
		fclose(f);
		{
			static const unsigned int k[3] = { 2, 4, 7 };
			static const char *const val[3] = { "1.0", "0.25", "2.0" };
			unsigned int j, count = 0;
			const char *q;

			for (q = out; (q = strstr(q, "\"name\": \"period (ms)\"")); q++)
				count++;
			CHECK_EQ(count, 3);
			for (j = 0; j < 3; j++) {
				/* whole microseconds here: JSON's shortest form ends ".0" */
				CHECK_U64(at[k[j]] % 1000, 0);
				snprintf(err, sizeof(err), "\"name\": \"period (ms)\",\n            \"ph\": \"C\",\n"
					 "            \"ts\": %llu.0,\n            \"pid\": 1,\n"
					 "            \"args\": {\n                \"value\": %s\n",
					 (unsigned long long)(at[k[j]] / 1000), val[j]);
				CHECK(strstr(out, err) != NULL);
			}
			if (count != 3)
				printf("#   %.600s\n", out);
		}
		free(out);
	}
	rec_capture_free(&c);
	unlink(path);
}

TEST(rec_enable_disable_actions)
{
	struct rec_engine *e = engine(4, 0, 1);
	struct rec_action acts[4], a;
	unsigned int nacts = 0;
	struct rec_sink s;
	struct mem m;
	char err[256];
	double v = 1;

	CHECK_EQ(rec_action_parse(" disable  perf ", &a, err, sizeof(err)), 0);
	CHECK_EQ(a.kind, REC_ACT_DISABLE);
	CHECK_STR(a.set, "perf");
	CHECK_EQ(rec_action_parse("disable", &a, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "bad action 'disable': expected 'period DURATION', 'enable SET' or 'disable SET'");
	sink_of(&m, &s);
	CHECK_EQ(rec_engine_add_on_trigger(e, "disable ddr", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_on_trigger(e, "enable pcie", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x > 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_push(e, 1000, &v, REC_CAUSE_NONE, acts, 4, &nacts, &s), REC_POST);
	CHECK_EQ(nacts, 2);
	CHECK_EQ(acts[0].kind, REC_ACT_DISABLE);
	CHECK_STR(acts[0].set, "ddr");
	CHECK_EQ(acts[1].kind, REC_ACT_ENABLE);
	CHECK_STR(m.note[0], "trigger: sample 0: disable ddr");
	CHECK_STR(m.note[1], "trigger: sample 0: enable pcie");
	rec_engine_free(e);
}

/*
 * A counter of a given width wraps as a hardware counter does: "w:2" holds
 * 0..3, inc from 3 gives 0, dec from 0 gives 3; the stored track is "w".
 */
static double wv[16];
static unsigned int nwv;

static int w_sample(void *ctx, uint64_t t, const double *v)
{
	(void)ctx;
	(void)t;
	if (nwv < 16)
		wv[nwv++] = v[1];
	return 0;
}

TEST(rec_counter_width_wraps)
{
	/* x: +1 steps (inc), then -1 steps (dec), then a clear */
	static const double xs[] = { 1, 1, 1, 1, 1, -1, -1, -1, 0, 1 };
	/* the test's own arithmetic modulo 4 */
	static const double want[] = { 1, 2, 3, 0, 1, 0, 3, 2, 0, 1 };
	struct rec_engine *e = engine(10, 0, 1);
	struct rec_sink s = { .sample = w_sample };
	char err[256];
	unsigned int i, bad = 0;

	nwv = 0;
	CHECK_EQ(rec_engine_add_counter(e, "w:2 inc x > 0; dec x < 0; clear x == 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_ntracks(e), 2);
	CHECK_STR(rec_engine_track(e, 1), "w");
	/* fires at sample 0; position begin: samples 0..9 stored */
	CHECK_EQ(rec_engine_set_trigger(e, "x > 0", err, sizeof(err)), 0);
	for (i = 0; i < 10; i++)
		rec_engine_push(e, 1000 * (i + 1), &xs[i], REC_CAUSE_NONE, NULL, 0, NULL, &s);
	CHECK_EQ(nwv, 10);
	for (i = 0; i < nwv; i++)
		if (wv[i] != want[i]) {
			printf("#   sample %u: w %g, want %g\n", i, wv[i], want[i]);
			bad++;
		}
	CHECK_EQ(bad, 0);
	rec_engine_free(e);
	/* without a width: unbounded as before (dec below 0 is -1) */
	e = engine(10, 0, 1);
	nwv = 0;
	CHECK_EQ(rec_engine_add_counter(e, "w dec x < 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x < 0", err, sizeof(err)), 0);
	rec_engine_push(e, 1000, &xs[5], REC_CAUSE_NONE, NULL, 0, NULL, &s);
	CHECK_EQ(nwv, 1);
	CHECK_NEAR(wv[0], -1, 0);
	rec_engine_free(e);
	/* bad widths */
	e = engine(4, 0, 1);
	CHECK_EQ(rec_engine_add_counter(e, "w:0 inc x > 0", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "counter 'w:0 inc x > 0': the width must be 1 to 53 bits");
	CHECK_EQ(rec_engine_add_counter(e, "w:54 inc x > 0", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "counter 'w:54 inc x > 0': the width must be 1 to 53 bits");
	CHECK_EQ(rec_engine_add_counter(e, "w:2x inc x > 0", err, sizeof(err)), -EINVAL);
	CHECK_EQ(rec_engine_ntracks(e), 1);
	rec_engine_free(e);
}

/* ---- gaps are data: missed periods and stale reads in the file ---- */

/*
 * Period 1 ms, slot i at 1e9 + i ms, x = i. Ring 5, position 50 (pre 2),
 * trigger "x >= 8". The recorder takes slots 0, 2, 3, 4, 8, 9, 10: it
 * was late before slot 2 (slot 1 missed) and before slot 8 (slots 5, 6
 * and 7 missed); the read at slot 9 got no new snapshot from one source.
 * The shot keeps slots 3, 4 (the ring), 8 (the trigger), 9, 10: the gap of
 * slot 1 left the ring with slot 2, so the file holds two gaps: 3 missed
 * periods from slot 5 (before shot sample 2) and 1 stale read at slot 9
 * (before shot sample 3).
 */
static uint64_t gap_t(unsigned int slot)
{
	return 1000000000ull + slot * 1000000ull;
}

struct gapmem {
	unsigned int n;
	enum rec_gap_kind kind[8];
	uint64_t t[8], count[8];
};

static int gm_gap(void *ctx, uint64_t t_ns, enum rec_gap_kind kind, uint64_t count)
{
	struct gapmem *g = ctx;

	if (g->n < 8) {
		g->kind[g->n] = kind;
		g->t[g->n] = t_ns;
		g->count[g->n] = count;
	}
	g->n++;
	return 0;
}

static int gm_begin(void *ctx, unsigned int shot, enum rec_cause cause, unsigned int pre,
		    uint64_t trig_t_ns)
{
	(void)ctx, (void)shot, (void)cause, (void)pre, (void)trig_t_ns;
	return 0;
}

static int gm_sample(void *ctx, uint64_t t_ns, const double *vals)
{
	(void)ctx, (void)t_ns, (void)vals;
	return 0;
}

/*
 * rec_engine_gap takes a sample's own gaps, late and stale: an event's
 * (lost, throttled: rec_engine_event_gap, with the track) and kinds it
 * does not know are refused (-EINVAL) and count as nothing.
 */
TEST(rec_engine_gap_kinds)
{
	struct rec_engine *e = engine(2, 0, 1);
	struct rec_sink s = { .shot_begin = gm_begin, .sample = gm_sample, .gap = gm_gap };
	struct gapmem g = { 0 };
	double x = 0;

	s.ctx = &g;
	CHECK_EQ(rec_engine_gap(e, 100, REC_GAP_LOST, 4), -EINVAL);
	CHECK_EQ(rec_engine_gap(e, 200, REC_GAP_THROTTLED, 2), -EINVAL);
	CHECK_EQ(rec_engine_gap(e, 300, (enum rec_gap_kind)0, 8), -EINVAL);
	CHECK_EQ(rec_engine_gap(e, 400, (enum rec_gap_kind)5, 16), -EINVAL);
	CHECK_EQ(rec_engine_gap(e, 500, REC_GAP_LATE, 1), 0);
	CHECK_EQ(rec_engine_gap(e, 600, REC_GAP_STALE, 32), 0);
	CHECK_EQ(rec_engine_gap(e, 700, REC_GAP_STALE, 0), 0);	/* none: nothing */
	/* the trigger sample: its gaps are the late and the stale one */
	CHECK(rec_engine_push(e, 1000000, &x, REC_CAUSE_SIGNAL, NULL, 0, NULL, &s) >= 0);
	CHECK_EQ(g.n, 2);
	if (g.n == 2) {
		CHECK_EQ(g.kind[0], REC_GAP_LATE);
		CHECK_U64(g.t[0], 500);
		CHECK_U64(g.count[0], 1);
		CHECK_EQ(g.kind[1], REC_GAP_STALE);
		CHECK_U64(g.t[1], 600);
		CHECK_U64(g.count[1], 32);
	}
	rec_engine_free(e);
}
TEST(rec_gaps_are_data)
{
	const char *path = unit_tmp("rec-gaps.cap");
	static const char *const TR[] = { "x" };
	static const unsigned int SLOT[] = { 0, 2, 3, 4, 8, 9, 10 };
	struct rec_config cfg = { .capacity = 5, .position = 50, .shots = 1,
				  .period_ns = 1000000, .nmetrics = 1, .metric = TR };
	char tracks[1][REC_NAME_MAX] = { "x" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 5, .shots = 1,
				.position = 50, .clock = "ns", .command = "unit",
				.ntracks = 1, .track = tracks };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	char err[200] = "", *buf = NULL;
	unsigned int i;
	int fd;

	CHECK_EQ(rec_engine_set_trigger(e, "x >= 8", NULL, 0), 0);
	h.pre = rec_pre_count(5, 50);
	CHECK_EQ(h.pre, 2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	for (i = 0; i < 7; i++) {
		double v[1] = { SLOT[i] };

		if (SLOT[i] == 2)
			rec_engine_gap(e, gap_t(1), REC_GAP_LATE, 1);
		if (SLOT[i] == 8)
			rec_engine_gap(e, gap_t(5), REC_GAP_LATE, 3);
		if (SLOT[i] == 9)
			rec_engine_gap(e, gap_t(9), REC_GAP_STALE, 1);
		CHECK(rec_engine_push(e, gap_t(SLOT[i]), v, REC_CAUSE_NONE, NULL, 0, NULL, &s) >= 0);
	}
	CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ(c.nskipped, 0);
	CHECK_EQ(c.nsamples, 5);
	CHECK_EQ(c.ngaps, 2);
	if (c.ngaps == 2) {
		CHECK_U64(c.gaps[0].mono_ns, gap_t(5));
		CHECK_EQ(c.gaps[0].kind, REC_GAP_LATE);
		CHECK_U64(c.gaps[0].count, 3);
		CHECK_EQ(c.gaps[0].sample, 2);
		CHECK_U64(c.gaps[1].mono_ns, gap_t(9));
		CHECK_EQ(c.gaps[1].kind, REC_GAP_STALE);
		CHECK_U64(c.gaps[1].count, 1);
		CHECK_EQ(c.gaps[1].sample, 3);
	}
	CHECK_U64(c.missed_periods, 3);
	CHECK_U64(c.stale_reads, 1);
	for (i = 0; i < c.nsamples && i < 5; i++)
		CHECK_U64(c.samples[i].mono_ns, gap_t(SLOT[i + 2]));

	/* text: counted in the summary line, a row where each gap falls
	 * (ms from the trigger at slot 8: slot 5 is -3, slot 9 is +1)
	 */
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "gaps: 3 periods missed, 1 stale read\n") != NULL);
	/* "%-3s %+8ld %+12.3f", then " %14s" per track */
	CHECK(strstr(buf, "\n          -1       -4.000              4\n"
		      "~~~      gap       -3.000 3 periods missed (the recorder was late)\n"
		      ">>        +0       +0.000              8\n"
		      "~~~      gap       +1.000 1 stale read (no new snapshot)\n"
		      "          +1       +1.000              9\n") != NULL);
	free(buf);
	buf = NULL;

	/* CSV: per sample, the periods missed and stale reads just before it */
	{
		struct rec_view_opts o = { .view = REC_VIEW_CSV, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(!strncmp(buf, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,gap_missed,gap_stale\n", 74));
	CHECK(strstr(buf, "\n0,1,-1,1004000000,1004000000,1000000,4,0,0\n"
		      "0,2,0,1008000000,1008000000,1000000,8,3,0\n"
		      "0,3,1,1009000000,1009000000,1000000,9,0,1\n") != NULL);
	free(buf);
	buf = NULL;

	/* JSON: the totals and a list of gaps */
	{
		struct rec_view_opts o = { .view = REC_VIEW_JSON, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"missed_periods\": 3,\n    \"stale_reads\": 1,\n") != NULL);
	CHECK(strstr(buf, "\"gaps\": [\n        {\n            \"mono_ns\": 1005000000,\n"
		      "            \"kind\": \"late\",\n            \"count\": 3,\n"
		      "            \"shot\": 0,\n            \"before_sample\": 2\n        },\n") != NULL);
	free(buf);
	buf = NULL;

	/* Perfetto/Chrome trace: an instant event at each gap */
	{
		struct rec_view_opts o = { .view = REC_VIEW_TRACE, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"name\": \"gap: 3 periods missed (the recorder was late)\",\n"
		      "            \"ph\": \"i\",\n            \"s\": \"g\",\n"
		      "            \"ts\": 1005000.0,\n") != NULL);
	CHECK(strstr(buf, "\"name\": \"gap: 1 stale read (no new snapshot)\",\n"
		      "            \"ph\": \"i\",\n            \"s\": \"g\",\n"
		      "            \"ts\": 1009000.0,\n") != NULL);
	free(buf);
	buf = NULL;

	/* SVG: the axis is slots 3..10 (7 ms) over x 70..880 (810 px): slot 5
	 * at 70 + 2/7 * 810 = 301.4, slot 9 at 70 + 6/7 * 810 = 764.3
	 */
	{
		struct rec_view_opts o = { .view = REC_VIEW_SVG, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "<line class=\"gap\" x1=\"301.4\" y1=\"30\" x2=\"301.4\" y2=\"150\"") != NULL);
	CHECK(strstr(buf, "<line class=\"gap\" x1=\"764.3\" y1=\"30\" x2=\"764.3\" y2=\"150\"") != NULL);
	CHECK(strstr(buf, "gaps: 3 periods missed, 1 stale read") != NULL);
	free(buf);
	rec_capture_free(&c);
	remove(path);
}

/* ---- the file ring: a writer killed at every point ---- */

/*
 * A recorder of 11 samples at position 50 (5 before the trigger, the
 * trigger, 5 after), two shots: track x is the sample index, y is 1 at
 * the triggers (samples 12 and 30). Times are irregular (1 ms + i % 3 ns).
 */
#define KR_N	11
#define KR_PRE	5
#define KR_TOTAL 36	/* shot 1 ends with sample 35 */
static const unsigned int kr_trig[2] = { 12, 30 };

static uint64_t kr_t(unsigned int i)
{
	return 7000000000ull + (uint64_t)i * 1000000 + i % 3;
}

/*
 * With events: an event "ev" (track 2) occurs kr_nev(i) times in sample
 * i's interval, the first at kr_evt(i), 600 us + 7i ns before the sample
 * and so after the sample before it; reported as the recorder does, before
 * the push, the later occurrences first (the engine keeps the earliest).
 */
static uint64_t kr_nev(unsigned int i)
{
	return (i * 7) % 5;	/* 0, 2, 4, 1, 3, 0, ... */
}

static uint64_t kr_evt(unsigned int i)
{
	return kr_t(i) - 600000 - 7 * (uint64_t)i;
}

/*
 * With gaps: sample i has a late gap when i % 4 == 1 (1 + i % 3 periods
 * missed) and a stale one when i % 3 == 2 (1 + i % 2 reads), each at a
 * time of its own in the sample's interval.
 */
static uint64_t kr_late(unsigned int i)
{
	return i % 4 == 1 ? 1 + i % 3 : 0;
}

static uint64_t kr_late_t(unsigned int i)
{
	return kr_t(i) - 800000 + 11 * (uint64_t)i;
}

static uint64_t kr_stale(unsigned int i)
{
	return i % 3 == 2 ? 1 + i % 2 : 0;
}

static uint64_t kr_stale_t(unsigned int i)
{
	return kr_t(i) - 100000 - 3 * (uint64_t)i;
}

/*
 * What a writer handed to its file, call by call of its sink: the record
 * each call wrote and the file's size after it (the writer flushed). The
 * test's own account of where each record ends, to compare a cut file's
 * reading with.
 */
struct kr_call {
	char what;		/* 'B' shot, 'G' gap, 'V' event, 'D' sample, 'E', 'N', 'P' */
	unsigned int i;		/* 'D': the sample's index (its track x) */
	unsigned int shot;	/* 'B': the shot's number */
	enum rec_cause cause;	/* 'B' */
	bool sync;		/* 'D': a sync record (22 bytes) before the sample's */
	size_t end;
};

struct kr_log {
	const char *path;
	struct rec_writer *w;
	struct rec_sink s;	/* the writer's own sink, which the calls go on to */
	size_t start;		/* the size after the header and the ring */
	bool need_sync;		/* a shot began: its first sample has a sync */
	unsigned int ncall, nring;
	struct kr_call call[256];
	unsigned int ring[64];	/* the samples passed to the ring, in order */
	size_t ring_at;		/* the size when the last of them was */
};

static int kl_put(struct kr_log *l, int ret, char what, unsigned int i)
{
	struct kr_call *c;
	struct stat st;

	CHECK_EQ(ret, 0);
	CHECK_EQ(rec_writer_flush(l->w), 0);
	CHECK_EQ(stat(l->path, &st), 0);
	CHECK(l->ncall < sizeof(l->call) / sizeof(l->call[0]));
	if (ret || l->ncall >= sizeof(l->call) / sizeof(l->call[0]))
		return ret ? ret : -ENOSPC;
	c = &l->call[l->ncall++];
	memset(c, 0, sizeof(*c));
	c->what = what;
	c->i = i;
	c->end = (size_t)st.st_size;
	return 0;
}

static int kl_shot_begin(void *ctx, unsigned int shot, enum rec_cause cause, unsigned int pre,
			 uint64_t t)
{
	struct kr_log *l = ctx;
	int ret = kl_put(l, l->s.shot_begin(l->s.ctx, shot, cause, pre, t), 'B', 0);

	if (!ret) {
		l->call[l->ncall - 1].shot = shot;
		l->call[l->ncall - 1].cause = cause;
	}
	l->need_sync = true;
	return ret;
}

static int kl_sample(void *ctx, uint64_t t, const double *vals)
{
	struct kr_log *l = ctx;
	int ret = kl_put(l, l->s.sample(l->s.ctx, t, vals), 'D', (unsigned int)vals[0]);

	if (!ret)
		l->call[l->ncall - 1].sync = l->need_sync;
	l->need_sync = false;
	return ret;
}

static int kl_shot_end(void *ctx, unsigned int shot, unsigned int nsamples)
{
	struct kr_log *l = ctx;

	return kl_put(l, l->s.shot_end(l->s.ctx, shot, nsamples), 'E', 0);
}

static int kl_note(void *ctx, uint64_t t, const char *text)
{
	struct kr_log *l = ctx;

	return kl_put(l, l->s.note(l->s.ctx, t, text), 'N', 0);
}

static int kl_period(void *ctx, uint64_t period)
{
	struct kr_log *l = ctx;

	return kl_put(l, l->s.period(l->s.ctx, period), 'P', 0);
}

static int kl_gap(void *ctx, uint64_t t, enum rec_gap_kind kind, uint64_t count)
{
	struct kr_log *l = ctx;

	return kl_put(l, l->s.gap(l->s.ctx, t, kind, count), 'G', 0);
}

static int kl_event(void *ctx, uint64_t t, unsigned int track, uint64_t count)
{
	struct kr_log *l = ctx;

	return kl_put(l, l->s.event(l->s.ctx, t, track, count), 'V', 0);
}

static int kl_ring(void *ctx, uint64_t t, uint64_t period, const struct rec_gaps *g,
		   const struct rec_evsum *ev, unsigned int nev, const double *vals)
{
	struct kr_log *l = ctx;

	CHECK(l->nring < sizeof(l->ring) / sizeof(l->ring[0]));
	if (l->nring < sizeof(l->ring) / sizeof(l->ring[0]))
		l->ring[l->nring++] = (unsigned int)vals[0];
	l->ring_at = l->ncall ? l->call[l->ncall - 1].end : l->start;
	return l->s.ring(l->s.ctx, t, period, g, ev, nev, vals);
}

/* the file after @k samples of a writer that never closes it (what a
 * SIGKILL leaves: records handed to the kernel, the mapped ring); if
 * @done, the writer then finishes and closes it; with @ev, the event "ev";
 * with @gaps, the gaps of kr_late() and kr_stale(); with @log, every call
 * of the writer's sink and where its record ends
 */
static unsigned char *kr_image_log(unsigned int k, bool done, bool ev, bool gaps,
				   struct kr_log *log, size_t *len)
{
	const char *path = unit_tmp("rec-ring.cap");
	static const char *const TR[] = { "x", "y" };
	struct rec_config cfg = { .capacity = KR_N, .position = 50, .shots = 2,
				  .period_ns = 1000000, .nmetrics = 2, .metric = TR };
	char tracks[3][REC_NAME_MAX] = { "x", "y", "ev" };
	struct rec_header h = { .period_ns = 1000000, .capacity = KR_N, .shots = 2,
				.position = 50, .clock = "ns", .command = "unit",
				.ntracks = 2, .track = tracks };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	struct rec_writer *w = NULL;
	struct rec_sink s = { 0 };
	unsigned char *img = NULL;
	unsigned int i;
	int fd;

	h.pre = rec_pre_count(KR_N, 50);
	h.ring_slots = h.pre + 1;
	if (ev) {
		CHECK_EQ(rec_engine_add_event(e, "ev", NULL, 0), 0);
		CHECK_EQ(rec_engine_ntracks(e), 3);
		h.ntracks = 3;
		h.nring_events = rec_engine_nevents(e);
		CHECK_EQ(h.nring_events, 1);
		h.ring_event_track[0] = rec_engine_event_track(e, 0);
		CHECK_EQ(h.ring_event_track[0], 2);
	}
	rec_engine_set_trigger(e, "y > 0", NULL, 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	if (!w) {
		rec_engine_free(e);
		return NULL;
	}
	rec_writer_set_clock(w, 1700000000000000000ll);
	rec_writer_sink(w, &s);
	if (log) {
		struct stat st;

		CHECK_EQ(stat(path, &st), 0);
		memset(log, 0, sizeof(*log));
		log->path = path;
		log->w = w;
		log->s = s;
		log->start = (size_t)st.st_size;
		s = (struct rec_sink){ .ctx = log, .shot_begin = kl_shot_begin,
				       .sample = kl_sample, .shot_end = kl_shot_end,
				       .note = kl_note, .period = kl_period, .gap = kl_gap,
				       .ring = kl_ring, .event = kl_event };
	}
	for (i = 0; i < k; i++) {
		double v[2] = { i, i == kr_trig[0] || i == kr_trig[1] };

		if (gaps && kr_late(i))
			rec_engine_gap(e, kr_late_t(i), REC_GAP_LATE, kr_late(i));
		if (gaps && kr_stale(i))
			rec_engine_gap(e, kr_stale_t(i), REC_GAP_STALE, kr_stale(i));
		if (ev && kr_nev(i) > 1)
			CHECK_EQ(rec_engine_event(e, 0, kr_evt(i) + 350000, kr_nev(i) - 1), 0);
		if (ev && kr_nev(i))
			CHECK_EQ(rec_engine_event(e, 0, kr_evt(i), 1), 0);
		CHECK(rec_engine_push(e, kr_t(i), v, REC_CAUSE_NONE, NULL, 0, NULL, &s) >= 0);
		CHECK_EQ(rec_writer_flush(w), 0);	/* as the recorder does */
	}
	if (!done)
		img = (unsigned char *)unit_slurp(path, len);
	if (done)
		CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(rec_writer_close(w, done), 0);
	if (done)
		img = (unsigned char *)unit_slurp(path, len);
	rec_engine_free(e);
	unlink(path);
	return img;
}

static unsigned char *kr_image_ev(unsigned int k, bool done, bool ev, size_t *len)
{
	return kr_image_log(k, done, ev, false, NULL, len);
}

static unsigned char *kr_image(unsigned int k, bool done, size_t *len)
{
	return kr_image_ev(k, done, false, len);
}

/*
 * The samples a reader must find after @k pushes, from the shot model
 * alone: shot j (armed from a[j]) keeps the 5 samples before its trigger
 * T[j] and 6 from T[j] on once it fired (T[j] < k); before that, its ring
 * holds the last 5 armed samples. Returns how many, their indices in @idx,
 * their shot in @shot.
 */
static unsigned int kr_expect(unsigned int k, unsigned int *idx, unsigned int *shot)
{
	static const unsigned int a[2] = { 0, kr_trig[0] + KR_N - KR_PRE };
	unsigned int n = 0, i, j;

	for (i = 0; i < k; i++) {
		for (j = 0; j < 2; j++) {
			bool fired = kr_trig[j] < k, keep;

			if (fired)
				keep = i + KR_PRE >= kr_trig[j] && i < kr_trig[j] + KR_N - KR_PRE;
			else
				keep = i >= a[j] && i + KR_PRE >= k && (j == 0 || kr_trig[0] < k);
			if (keep) {
				idx[n] = i;
				shot[n++] = j;
			}
		}
	}
	return n;
}

/* @c holds exactly the samples kr_expect() lists after @k pushes */
static bool kr_check(const struct rec_capture *c, unsigned int k, const char *what)
{
	unsigned int idx[KR_TOTAL], shot[KR_TOTAL], n = kr_expect(k, idx, shot), i;
	bool ok = c->nsamples == n;

	for (i = 0; ok && i < n; i++) {
		const struct rec_sample *s = &c->samples[i];

		ok = s->mono_ns == kr_t(idx[i]) &&
		     s->real_ns == kr_t(idx[i]) + 1700000000000000000ull &&
		     s->vals[0] == idx[i] && s->shot == shot[i] && s->period_ns == 1000000;
	}
	if (!ok) {
		printf("#   %s after %u samples: %u read, %u expected\n", what, k, c->nsamples, n);
		for (i = 0; i < c->nsamples && i < 12; i++)
			printf("#     read: shot %u x %g t %llu\n", c->samples[i].shot,
			       c->samples[i].vals[0], (unsigned long long)c->samples[i].mono_ns);
	}
	return ok;
}

TEST(rec_file_ring_killed_at_every_point)
{
	unsigned int k, bad = 0;

	CHECK_EQ(rec_pre_count(KR_N, 50), KR_PRE);
	for (k = 0; k <= KR_TOTAL; k++) {
		struct rec_capture c;
		char err[200] = "";
		size_t len;
		unsigned char *img = kr_image(k, false, &len);

		CHECK(img != NULL);
		if (!img)
			return;
		CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
		bad += !kr_check(&c, k, "killed");
		CHECK(!c.complete);
		CHECK_EQ(c.ring_torn, 0);
		/* the shots: the second exists once it has a sample */
		if (c.nshots && (c.nshots != (k > kr_trig[0] + KR_N - KR_PRE ? 2u : 1u) ||
				 c.shots[c.nshots - 1].cause !=
				 (k > kr_trig[c.nshots - 1] ? REC_CAUSE_EXPR : REC_CAUSE_NONE))) {
			printf("#   after %u samples: %u shots, the last of cause %d\n", k, c.nshots,
			       (int)c.shots[c.nshots - 1].cause);
			bad++;
		}
		rec_capture_free(&c);
		free(img);
	}
	CHECK_EQ(bad, 0);
}

/*
 * @c (read from a kr_image_ev() file with events) has, for each sample,
 * the events kr_nev() and kr_evt() give for its index (track x): one event
 * of track 2 with that first time and count when the count is not 0, none
 * otherwise; and the track's value is the count
 */
static bool kr_check_events(const struct rec_capture *c, unsigned int k, const char *what)
{
	unsigned int j, g, want = 0, bad = 0;

	for (j = 0; j < c->nsamples; j++) {
		unsigned int i = (unsigned int)c->samples[j].vals[0], found = 0;

		want += kr_nev(i) != 0;
		for (g = 0; g < c->nevents; g++) {
			const struct rec_event *ev = &c->events[g];

			if (ev->sample != j)
				continue;
			found++;
			bad += ev->track != 2 || ev->mono_ns != kr_evt(i) || ev->count != kr_nev(i);
		}
		bad += found != (kr_nev(i) != 0);
		bad += c->samples[j].vals[2] != (double)kr_nev(i);
	}
	bad += c->nevents != want;
	if (bad) {
		printf("#   %s after %u samples: %u events, %u expected, %u wrong\n", what, k,
		       c->nevents, want, bad);
		for (g = 0; g < c->nevents && g < 12; g++)
			printf("#     event: sample %u track %u t %llu count %llu\n", c->events[g].sample,
			       c->events[g].track, (unsigned long long)c->events[g].mono_ns,
			       (unsigned long long)c->events[g].count);
	}
	return !bad;
}

/*
 * Events in the file ring: the same writer with an event "ev", stopped
 * after each of 0 to 36 samples. The samples are those of the shot model
 * as without events, and every one of them, from the records or recovered
 * from the ring, has its interval's events: the first time and the count.
 * Then a killed writer's text view: the recovered rows have their '***'
 * event rows, times in ms from the shot's first sample.
 */
TEST(rec_file_ring_killed_with_events)
{
	unsigned int k, bad = 0, recovered_events = 0;
	struct rec_capture c;
	char err[200] = "", line[160], *buf;
	size_t len;
	unsigned char *img;

	for (k = 0; k <= KR_TOTAL; k++) {
		unsigned int j, g;

		img = kr_image_ev(k, false, true, &len);
		CHECK(img != NULL);
		if (!img)
			return;
		CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
		CHECK_EQ(c.h.nring_events, 1);
		CHECK_EQ(c.h.ring_event_track[0], 2);
		CHECK_EQ(c.h.slot_bytes, 64 + 8 * 3 + 16 + 8);	/* CRC and padding: 8 */
		bad += !kr_check(&c, k, "killed with events");
		bad += !kr_check_events(&c, k, "killed with events");
		CHECK_EQ(c.ring_torn, 0);
		for (g = 0; g < c.nevents; g++)
			for (j = c.nsamples - c.recovered; j < c.nsamples; j++)
				recovered_events += c.events[g].sample == j;
		rec_capture_free(&c);
		free(img);
	}
	CHECK_EQ(bad, 0);
	/* the recovered samples did carry events (not a vacuous check) */
	CHECK(recovered_events > 0);
	/* closed normally: the records alone have the same events */
	img = kr_image_ev(KR_TOTAL, true, true, &len);
	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
	CHECK(c.complete);
	CHECK(kr_check(&c, KR_TOTAL, "closed with events"));
	CHECK(kr_check_events(&c, KR_TOTAL, "closed with events"));
	rec_capture_free(&c);
	free(img);
	/* killed after 10: samples 5 to 9 recovered, their events shown */
	img = kr_image_ev(10, false, true, &len);
	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.recovered, 5);
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(buf != NULL);
	for (k = 5; buf && k < 10; k++) {
		if (!kr_nev(k))
			continue;
		snprintf(line, sizeof(line), "\n***    event %+12.3f ev: %llu occurrence%s\n",
			 ((double)kr_evt(k) - (double)kr_t(5)) / 1e6,
			 (unsigned long long)kr_nev(k), kr_nev(k) == 1 ? "" : "s");
		if (!strstr(buf, line)) {
			printf("#   no row '%s' in the text view\n", line + 1);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);
	free(buf);
	rec_capture_free(&c);
	free(img);
}

/* rec_writer_sync(): 0 on a file with a ring and on one without */
TEST(rec_file_ring_sync)
{
	const char *path = unit_tmp("rec-sync.cap");
	char tracks[1][REC_NAME_MAX] = { "x" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 3, .pre = 2, .shots = 1,
				.clock = "ns", .command = "unit", .ntracks = 1, .track = tracks,
				.ring_slots = 3 };
	struct rec_gaps g = { 0 };
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	struct rec_capture c;
	double v = 1;
	char err[200];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_sink(w, &s);
	CHECK_EQ(s.ring(s.ctx, 5000, 1000000, &g, NULL, 0, &v), 0);
	CHECK_EQ(rec_writer_sync(w), 0);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.recovered, 1);
	rec_capture_free(&c);
	CHECK_EQ(rec_writer_close(w, false), 0);
	/* no ring, and an fd open for writing only: version 2 as before */
	h.ring_slots = 0;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	CHECK_EQ(rec_writer_sync(w), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.version, 2);
	rec_capture_free(&c);
	/* a ring needs the fd open for reading too (the shared mapping) */
	h.ring_slots = 3;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK_EQ(rec_writer_open(fd, &h, &w), -EACCES);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);	/* the writer closed it */
	/* a header it refuses: the fd is closed too */
	h.nring_events = REC_MAX_EVENTS + 1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK_EQ(rec_writer_open(fd, &h, &w), -EINVAL);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	h.nring_events = 0;
	unlink(path);
}

/* closed normally: the records alone, the ring not read */
TEST(rec_file_ring_closed)
{
	struct rec_capture c;
	char err[200] = "";
	size_t len;
	unsigned char *img = kr_image(KR_TOTAL, true, &len);

	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
	CHECK(c.complete);
	CHECK_EQ(c.version, 3);
	CHECK_EQ(c.recovered, 0);
	CHECK(kr_check(&c, KR_TOTAL, "closed"));
	CHECK_EQ(c.nshots, 2);
	rec_capture_free(&c);
	free(img);
}

/*
 * A writer killed inside a slot: the bytes of sample k's slot that differ
 * between the files after k and k + 1 samples (both armed, the ring full),
 * half of them new: that slot fails its check and is counted torn; the
 * reader still has the 5 samples before sample k (the torn slot held the
 * sample before those).
 */
TEST(rec_file_ring_torn_slot)
{
	size_t la, lb, d0, d1;
	unsigned int k = 10;
	unsigned char *a = kr_image(k, false, &la), *b = kr_image(k + 1, false, &lb);
	struct rec_capture c;
	char err[200] = "";

	CHECK(a && b && la == lb);
	if (!a || !b || la != lb) {
		free(a);
		free(b);
		return;
	}
	for (d0 = 0; d0 < la && a[d0] == b[d0]; d0++)
		;
	for (d1 = la; d1 > d0 && a[d1 - 1] == b[d1 - 1]; d1--)
		;
	/* one slot changed: 8 u64 fields, x and y, a CRC (72 + 8 * 2 bytes) */
	CHECK(d0 < d1 && d1 - d0 <= 72 + 8 * 2);
	memcpy(a + d0, b + d0, (d1 - d0) / 2);
	CHECK_EQ(rec_read_mem(a, la, &c, err, sizeof(err)), 0);
	CHECK(kr_check(&c, k, "torn"));
	CHECK_EQ(c.ring_torn, 1);
	CHECK_EQ(c.ring_valid, KR_PRE);
	/* and a slot with one bit flipped: skipped, the rest still read */
	rec_capture_free(&c);
	a[d0 + (d1 - d0) - 1] ^= 0x10;
	CHECK_EQ(rec_read_mem(a, la, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.ring_torn, 1);
	rec_capture_free(&c);
	free(a);
	free(b);
}

/* every view reads a killed writer's file: the text and JSON say so */
TEST(rec_file_ring_views)
{
	struct rec_capture c;
	char err[200] = "", *buf;
	size_t len;
	unsigned char *img = kr_image(10, false, &len);
	unsigned int lines = 0;
	const char *p;

	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(rec_read_mem(img, len, &c, err, sizeof(err)), 0);
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(buf && strstr(buf, "capture: 5 samples in 1 shots, period 1.000 ms, ring 11 samples, 5 before the trigger (position 50 %), UNFINISHED (its recorder did not close it; read up to the last whole record, then its file ring)\n"
			    "recovered: 5 samples from the file ring (6 whole slots, 0 torn)\n"));
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_JSON, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(buf && strstr(buf, "\"complete\": false,\n    \"recovered\": 5,\n"));
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_CSV, .shot = -1 };

		buf = view_str(&c, &o);
	}
	for (p = buf; p && *p; p++)
		lines += *p == '\n';
	CHECK_EQ(lines, 1 + 5);	/* the column names, a row per sample */
	free(buf);
	rec_capture_free(&c);
	free(img);
}

/*
 * What a reader must make of the file of @l cut at byte @x, from the
 * writer's calls alone (struct kr_log), not from the reader: the samples
 * whose record ends by @x, in their shots, each with the gaps and events
 * the test gave it; then the ring's samples later than the last of those
 * (all if there is none), the newest KR_PRE of them, each with its gaps
 * and events: the rest of the last shot's pre-trigger samples if the
 * writing out of its ring stops before @x, else an untriggered shot after
 * the last. No other gap or event: those written before a sample whose
 * record the cut lost go with it (the ring's copy of the sample, if read,
 * brings its own). @good is where the last whole record ends.
 */
struct kr_want {
	unsigned int n, nrec, idx[KR_TOTAL], shot[KR_TOTAL];
	unsigned int nshots;
	enum rec_cause cause;	/* of the last shot */
	size_t good;
};

static void kr_cut_expect(const struct kr_log *l, size_t x, struct kr_want *wt)
{
	const struct kr_call *b = NULL, *c;
	unsigned int j, from, shot;
	bool cut_flush = false;

	memset(wt, 0, sizeof(*wt));
	wt->good = l->start;
	for (j = 0; j < l->ncall && l->call[j].end <= x; j++) {
		c = &l->call[j];
		if (c->what == 'B') {
			b = c;
			wt->nshots++;
			wt->cause = c->cause;
		} else if (c->what == 'D' && b) {
			wt->idx[wt->n] = c->i;
			wt->shot[wt->n++] = b->shot;
		}
		wt->good = c->end;
	}
	/* a sync record, whole, before the sample record the cut is in */
	if (j < l->ncall && l->call[j].sync && wt->good + 22 <= x)
		wt->good += 22;
	wt->nrec = wt->n;
	/* the ring's slots hold its last KR_PRE + 1 samples */
	from = l->nring > KR_PRE + 1 ? l->nring - (KR_PRE + 1) : 0;
	while (from < l->nring && wt->n && l->ring[from] <= wt->idx[wt->n - 1])
		from++;
	if (l->nring - from > KR_PRE)
		from = l->nring - KR_PRE;
	if (from == l->nring)
		return;
	for (c = b ? b + 1 : NULL; c && c < l->call + l->ncall && c->what != 'B'; c++)
		if (c->what == 'D' && c->i < kr_trig[b->shot] && c->end > x)
			cut_flush = true;
	if (cut_flush) {
		shot = b->shot;
	} else {
		shot = b ? b->shot + 1 : 0;
		wt->nshots++;
		wt->cause = REC_CAUSE_NONE;
	}
	for (; from < l->nring; from++) {
		wt->idx[wt->n] = l->ring[from];
		wt->shot[wt->n++] = shot;
	}
}

/*
 * Compare @c, read from @l's file cut at @x, with @wt: the failures. With
 * @ring_known the ring is as it was when the writer wrote byte @x (a
 * writer killed there left this file) and the ring's samples and the
 * shots are checked too; else (the ring is newer than the records: the
 * records cut later, as a crash that wrote back the ring's pages and not
 * the records' may) the recovered samples need only be some of the ring's,
 * later than the records', in order.
 */
static unsigned int kr_cut_check(const struct kr_log *l, size_t x, const struct rec_capture *c,
				 const char *err, const struct kr_want *wt, bool ring_known)
{
	unsigned int bad = 0, j, g, ngaps = 0, nev = 0, n = ring_known ? wt->n : wt->nrec;
	uint64_t missed = 0, stale = 0;
	char torn[80];

	snprintf(torn, sizeof(torn), "cut short inside the record at byte %zu ", wt->good);
	bad += c->good_bytes != wt->good || c->complete || c->ring_torn;
	bad += x == wt->good ? strstr(err, "cut short") != NULL :
	       strncmp(err, torn, strlen(torn)) != 0;
	bad += c->nsamples < n || c->nsamples > wt->nrec + KR_PRE ||
	       c->recovered != c->nsamples - wt->nrec;
	if (ring_known)
		bad += c->nsamples != n || c->nshots != wt->nshots ||
		       (c->nshots && c->shots[c->nshots - 1].cause != wt->cause);
	for (j = 0; !bad && j < c->nsamples; j++) {
		const struct rec_sample *s = &c->samples[j];
		unsigned int i = j < n ? wt->idx[j] : (unsigned int)s->vals[0];
		unsigned int r, found, late, stale_n;

		if (j >= n) {
			/* one of the ring's samples, after the previous one */
			for (r = 0; r < l->nring && l->ring[r] != i; r++)
				;
			bad += r == l->nring || r + KR_PRE + 1 < l->nring ||
			       (double)i != s->vals[0] ||
			       (j && i <= (unsigned int)c->samples[j - 1].vals[0]);
		}
		bad += s->mono_ns != kr_t(i) || s->vals[0] != i ||
		       s->vals[2] != (double)kr_nev(i) || (j < n && s->shot != wt->shot[j]) ||
		       s->missed != kr_late(i) || s->stale != kr_stale(i);
		missed += kr_late(i);
		stale += kr_stale(i);
		for (g = 0, late = stale_n = 0; g < c->ngaps; g++) {
			const struct rec_gap *gp = &c->gaps[g];

			if (gp->sample != j)
				continue;
			if (gp->kind == REC_GAP_LATE) {
				late++;
				bad += gp->mono_ns != kr_late_t(i) || gp->count != kr_late(i);
			} else {
				stale_n++;
				bad += gp->kind != REC_GAP_STALE || gp->mono_ns != kr_stale_t(i) ||
				       gp->count != kr_stale(i);
			}
		}
		bad += late != (kr_late(i) != 0) || stale_n != (kr_stale(i) != 0);
		ngaps += late + stale_n;
		for (g = 0, found = 0; g < c->nevents; g++) {
			const struct rec_event *ev = &c->events[g];

			if (ev->sample != j)
				continue;
			found++;
			bad += ev->track != 2 || ev->mono_ns != kr_evt(i) || ev->count != kr_nev(i);
		}
		bad += found != (kr_nev(i) != 0);
		nev += found;
	}
	/* and no gap or event of a sample not read */
	bad += c->ngaps != ngaps || c->nevents != nev || c->missed_periods != missed ||
	       c->stale_reads != stale;
	return bad;
}

/*
 * A file cut at every byte of its records: the writer with the event and
 * the gaps stopped after each of 0 to 36 samples (its ring then full or
 * not, a shot fired or not, the second armed or fired), every cut point
 * from the end of its ring to the end of the file. The reading has the
 * samples, gaps and events kr_cut_expect() says, each gap and event once
 * and with its own sample, and reports a torn tail exactly where the cut
 * is inside a record.
 */
TEST(rec_file_ring_cut_every_byte)
{
	unsigned int k, fails = 0, fails_known = 0, cuts = 0, known = 0, shown = 0;
	unsigned int gaps = 0, events = 0;
	static struct kr_log l;

	for (k = 0; k <= KR_TOTAL; k++) {
		size_t len, x;
		unsigned char *img = kr_image_log(k, false, true, true, &l, &len);
		struct rec_capture c;
		struct kr_want wt;
		char err[200];

		CHECK(img != NULL);
		if (!img)
			return;
		CHECK(l.start <= len && l.call[l.ncall ? l.ncall - 1 : 0].end <= len);
		for (x = l.start; x <= len; x++) {
			unsigned int bad;
			int ret;

			err[0] = '\0';
			kr_cut_expect(&l, x, &wt);
			ret = rec_read_mem(img, x, &c, err, sizeof(err));
			if (ret) {
				bad = 1;
			} else {
				bad = kr_cut_check(&l, x, &c, err, &wt, x >= l.ring_at);
				gaps += c.ngaps;
				events += c.nevents;
			}
			cuts++;
			known += x >= l.ring_at;
			fails += bad != 0;
			fails_known += bad && x >= l.ring_at;
			if (bad && shown++ < 3) {
				unsigned int j;

				printf("#   after %u samples, cut at byte %zu of %zu: \"%s\"; %u samples (%u recovered) in %u shots, %u gaps, %u events; expected %u samples in %u shots, %u from the records, whole records to byte %zu\n",
				       k, x, len, err, c.nsamples, c.recovered, c.nshots, c.ngaps,
				       c.nevents, wt.n, wt.nshots, wt.nrec, wt.good);
				for (j = 0; j < c.nevents && j < 8; j++)
					printf("#     event: sample %u (x %g) t %llu count %llu\n",
					       c.events[j].sample, c.events[j].sample < c.nsamples ?
					       c.samples[c.events[j].sample].vals[0] : -1,
					       (unsigned long long)c.events[j].mono_ns,
					       (unsigned long long)c.events[j].count);
			}
			if (!ret)
				rec_capture_free(&c);
		}
		/* a cut inside the ring: refused */
		if (k == 0) {
			CHECK_EQ(rec_read_mem(img, l.start - 1, &c, err, sizeof(err)), -EINVAL);
			CHECK_STR(err, "capture file cut inside its ring");
		}
		free(img);
	}
	printf("#   %u cut points, %u failed; with the ring as the cut left it: %u, %u failed; %u gaps and %u events read\n",
	       cuts, fails, known, fails_known, gaps, events);
	CHECK_EQ(fails, 0);
	/* not vacuous: the cut points, and the gaps and events of the readings */
	CHECK_EQ(cuts, 18071);
	CHECK_EQ(known, 6119);
	CHECK_EQ(gaps, 110363);
	CHECK_EQ(events, 147744);
}

/*
 * Bit flips, bytes and cuts anywhere in a killed writer's file (its ring
 * full, a shot fired, the second armed), without and with an event in its
 * slots: the reader returns 0 or -EINVAL and never reads out of bounds or
 * leaks (ASan, UBSan).
 */
TEST(rec_file_ring_fuzz)
{
	const uint64_t seed = 0x5eed2026c0ffee41ull;
	size_t len, m;
	unsigned char *b, *x;
	unsigned int iter, k, ev, bad = 0;
	struct rec_capture c;
	char err[200];

	printf("#   rec_file_ring_fuzz: seed 0x%016llx, 5000 rounds on each of two files (without and with an event)\n",
	       (unsigned long long)seed);
	for (ev = 0; ev < 2; ev++) {
		b = kr_image_ev(25, false, ev, &len);
		CHECK(b != NULL);
		if (!b)
			return;
		fz_state = seed;
		x = malloc(len);
		for (iter = 0; iter < 5000 && x; iter++) {
			unsigned int nmut = 1 + fz_next() % 3;
			int ret;

			memcpy(x, b, len);
			m = len;
			for (k = 0; k < nmut && m; k++) {
				size_t at = fz_next() % m;

				switch (fz_next() % 3) {
				case 0:
					x[at] ^= (unsigned char)(1u << (fz_next() % 8));
					break;
				case 1:
					x[at] = (unsigned char)fz_next();
					break;
				default:
					m = at;
				}
			}
			ret = rec_read_mem(x, m, &c, err, sizeof(err));
			if (ret && ret != -EINVAL && bad++ < 3)
				printf("#   file %u, round %u: %d\n", ev, iter, ret);
			if (!ret)
				rec_capture_free(&c);
		}
		free(x);
		free(b);
	}
	CHECK_EQ(bad, 0);
}

/* ---- event triggers: discrete events between samples ---- */

/*
 * Samples at irregular times (a late wake-up, a short read), one event
 * "died" reported the way the recorder reports it: after the reads of a
 * sample, so its time may lie after that sample's (then it belongs to the
 * next). The trigger sample is the first whose time is at or after the
 * event's: its interval (previous sample, this sample] contains it.
 */
static const uint64_t EVT_T[] = { 1000000, 2000000, 3100000, 3900000, 5000000,
				  6000000, 7300000, 8000000, 9000000, 10000000 };

struct evmem {
	unsigned int n, nsamples;
	uint64_t t[8], count[8];
	unsigned int track[8], before[8];
	double died[16];
	uint64_t trig;
	unsigned int pre;
};

static int ev_begin(void *ctx, unsigned int shot, enum rec_cause cause, unsigned int pre,
		    uint64_t trig)
{
	struct evmem *m = ctx;

	(void)shot;
	(void)cause;
	m->pre = pre;
	m->trig = trig;
	return 0;
}

static int ev_sample(void *ctx, uint64_t t, const double *v)
{
	struct evmem *m = ctx;

	(void)t;
	if (m->nsamples < 16)
		m->died[m->nsamples] = v[1];
	m->nsamples++;
	return 0;
}

static int ev_event(void *ctx, uint64_t t, unsigned int track, uint64_t count)
{
	struct evmem *m = ctx;

	if (m->n < 8) {
		m->t[m->n] = t;
		m->track[m->n] = track;
		m->count[m->n] = count;
		m->before[m->n++] = m->nsamples;
	}
	return 0;
}

TEST(rec_event_trigger_position)
{
	/*
	 * The event's time; reported after the reads of sample @after, before
	 * its push (as the recorder does)
	 */
	static const struct { uint64_t t; unsigned int after; } cases[] = {
		{ 6500000, 5 },		/* after sample 5's time: sample 6 */
		{ 6000000, 5 },		/* at sample 5's time: sample 5 */
		{ 7299999, 6 },		/* just before sample 6: sample 6 */
		{ 3200000, 2 },		/* sample 3, a ring sample kept */
		{ 9500000, 7 },		/* two samples early: sample 9 */
		{ 5500000, 7 },		/* late (sample 5's): the next, sample 7 */
	};
	unsigned int k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct rec_engine *e = engine(5, 50, 1);
		struct rec_sink s = { .shot_begin = ev_begin, .sample = ev_sample,
				      .event = ev_event };
		struct evmem m = { 0 };
		unsigned int i, want = 0, first;
		char err[200];
		double x = 0;

		s.ctx = &m;
		/*
		 * The test's own rule: the first sample at or after the event,
		 * but none pushed before it was reported
		 */
		while (EVT_T[want] < cases[k].t)
			want++;
		if (want < cases[k].after)
			want = cases[k].after;
		CHECK_EQ(rec_engine_add_event(e, "died", err, sizeof(err)), 0);
		CHECK_EQ(rec_engine_ntracks(e), 2);
		CHECK_STR(rec_engine_track(e, 1), "died");
		CHECK_EQ(rec_engine_set_trigger(e, "died > 0", err, sizeof(err)), 0);
		for (i = 0; i < 10; i++) {
			if (i == cases[k].after)
				CHECK_EQ(rec_engine_event(e, 0, cases[k].t, 1), 0);
			rec_engine_push(e, EVT_T[i], &x, REC_CAUSE_NONE, NULL, 0, NULL, &s);
		}
		rec_engine_finish(e, &s);
		/* pre 2: samples want - 2 .. want + 2 kept (fewer if early) */
		first = want >= 2 ? want - 2 : 0;
		CHECK_EQ(m.pre, want - first);
		CHECK_U64(m.trig, EVT_T[want]);
		CHECK_EQ(m.n, 1);
		CHECK_U64(m.t[0], cases[k].t);
		CHECK_EQ(m.track[0], 1);
		CHECK_U64(m.count[0], 1);
		/* the event record goes just before the trigger sample */
		CHECK_EQ(m.before[0], want - first);
		CHECK_NEAR(m.died[want - first], 1, 0);
		for (i = 0; i < m.nsamples && i < 16; i++)
			if (i != want - first)
				CHECK_NEAR(m.died[i], 0, 0);
		rec_engine_free(e);
	}
}

/* an event in a ring sample travels with it; the first time and the count */
TEST(rec_event_in_ring_and_count)
{
	struct rec_engine *e = engine(5, 50, 1);
	struct rec_sink s = { .shot_begin = ev_begin, .sample = ev_sample, .event = ev_event };
	struct evmem m = { 0 };
	char err[200];
	unsigned int i;
	double x;

	s.ctx = &m;
	CHECK_EQ(rec_engine_add_event(e, "died", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "x >= 6", err, sizeof(err)), 0);
	for (i = 0; i < 10; i++) {
		x = (double)i;
		/* 3 events in sample 1's interval (dropped with it), 2 in sample 5's */
		if (i == 1) {
			rec_engine_event(e, 0, EVT_T[0] + 10, 1);
			rec_engine_event(e, 0, EVT_T[0] + 20, 2);
		}
		if (i == 5) {
			rec_engine_event(e, 0, EVT_T[4] + 700, 1);
			rec_engine_event(e, 0, EVT_T[4] + 300, 1);
		}
		rec_engine_push(e, EVT_T[i], &x, REC_CAUSE_NONE, NULL, 0, NULL, &s);
	}
	/* trigger at 6, pre 2: samples 4..8; sample 5's event before shot sample 1 */
	CHECK_EQ(m.n, 1);
	CHECK_U64(m.t[0], EVT_T[4] + 300);
	CHECK_U64(m.count[0], 2);
	CHECK_EQ(m.before[0], 1);
	CHECK_NEAR(m.died[1], 2, 0);
	rec_engine_free(e);
	/* errors */
	e = engine(5, 50, 1);
	CHECK_EQ(rec_engine_add_event(e, "x", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "event 'x': the name is taken by a metric, event or counter");
	CHECK_EQ(rec_engine_add_event(e, "9a", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "event '9a': a NAME like [A-Za-z_][A-Za-z0-9_.]* expected");
	CHECK_EQ(rec_engine_event(e, 0, 1, 1), -EINVAL);
	CHECK_EQ(rec_engine_add_counter(e, "c count x", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "counter c, rule 'count x': 'x' is not an event (--event NAME=...)");
	rec_engine_free(e);
}

/*
 * A counter counts events: "n:3 count died" adds the occurrences in each
 * sample's interval, modulo 2^3; "s inc died > 0" counts the samples that
 * had one.
 */
static double w3[16][4];
static unsigned int nw3;

static int w_sample3(void *ctx, uint64_t t, const double *v)
{
	(void)ctx;
	(void)t;
	if (nw3 < 16)
		memcpy(w3[nw3++], v, sizeof(w3[0]));
	return 0;
}

TEST(rec_counter_counts_events_and_wraps)
{
	static const unsigned int per[] = { 0, 3, 0, 4, 1, 2, 9, 0 };
	struct rec_engine *e;
	struct rec_sink s = { .sample = w_sample3 };
	unsigned int i, k, sum = 0, samples = 0, bad = 0;
	char err[200];
	double x = 1;

	/* track order: x, the event, then the counters */
	e = engine(8, 0, 1);
	CHECK_EQ(rec_engine_add_event(e, "died", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_counter(e, "n:3 count died", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_add_counter(e, "s inc died > 0", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_ntracks(e), 4);
	CHECK_STR(rec_engine_track(e, 2), "n");
	CHECK_EQ(rec_engine_set_trigger(e, "x > 0", err, sizeof(err)), 0);
	nw3 = 0;
	for (i = 0; i < 8; i++) {
		for (k = 0; k < per[i]; k++)
			rec_engine_event(e, 0, EVT_T[i] - 100 - k, 1);
		rec_engine_push(e, EVT_T[i], &x, REC_CAUSE_NONE, NULL, 0, NULL, &s);
	}
	CHECK_EQ(nw3, 8);
	for (i = 0; i < nw3; i++) {
		sum = (sum + per[i]) % 8;	/* 3 bits */
		samples += per[i] > 0;
		if (w3[i][1] != per[i] || w3[i][2] != sum || w3[i][3] != samples) {
			printf("#   sample %u: died %g n %g s %g, want %u %u %u\n", i, w3[i][1],
			       w3[i][2], w3[i][3], per[i], sum, samples);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);
	rec_engine_free(e);
}

/*
 * An event in the file: a 'V' record before the sample whose interval
 * holds it, in every view. Period 1 ms, sample i at 1e9 + i ms with x = i;
 * ring 5, position 50 (pre 2), trigger "died > 0"; the event at slot 6 +
 * 0.25 ms, reported before the push of slot 6 (its time after it): it
 * belongs to slot 7, the trigger; the shot holds slots 5..9.
 */
TEST(rec_event_in_file_and_views)
{
	const char *path = unit_tmp("rec-event.cap");
	static const char *const TR[] = { "x" };
	struct rec_config cfg = { .capacity = 5, .position = 50, .shots = 1,
				  .period_ns = 1000000, .nmetrics = 1, .metric = TR };
	char tracks[2][REC_NAME_MAX] = { "x", "died" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 5, .shots = 1,
				.position = 50, .clock = "ns", .command = "unit",
				.ntracks = 2, .track = tracks };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	const uint64_t tev = gap_t(6) + 250000;
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	char err[200] = "", *buf = NULL;
	unsigned int i;
	int fd;

	CHECK_EQ(rec_engine_add_event(e, "died", NULL, 0), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "died > 0", NULL, 0), 0);
	h.pre = 2;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	for (i = 0; i < 12; i++) {
		double v[1] = { i };

		if (i == 6)
			rec_engine_event(e, 0, tev, 1);
		CHECK(rec_engine_push(e, gap_t(i), v, REC_CAUSE_NONE, NULL, 0, NULL, &s) >= 0);
	}
	CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ(c.nskipped, 0);
	CHECK_EQ(c.nsamples, 5);
	CHECK_EQ(c.nshots, 1);
	CHECK_EQ(c.shots[0].pre, 2);
	CHECK_U64(c.shots[0].trig_mono_ns, gap_t(7));
	CHECK_EQ(c.nevents, 1);
	if (c.nevents == 1) {
		CHECK_U64(c.events[0].mono_ns, tev);
		CHECK_EQ(c.events[0].track, 1);
		CHECK_U64(c.events[0].count, 1);
		CHECK_EQ(c.events[0].sample, 2);
	}
	/* text: a row before the trigger sample, ms from the trigger */
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\n          -1       -1.000              6              0\n"
		      "***    event       -0.750 died: 1 occurrence\n"
		      ">>        +0       +0.000              7              1\n") != NULL);
	free(buf);
	/* CSV: the event's time per event track that has one */
	{
		struct rec_view_opts o = { .view = REC_VIEW_CSV, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(!strncmp(buf, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,died,gap_missed,gap_stale,died.first_ns\n", 93));
	CHECK(strstr(buf, "\n0,1,-1,1006000000,1006000000,1000000,6,0,0,0,\n"
		      "0,2,0,1007000000,1007000000,1000000,7,1,0,0,1006250000\n") != NULL);
	free(buf);
	/* JSON: a list of events */
	{
		struct rec_view_opts o = { .view = REC_VIEW_JSON, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"events\": [\n        {\n            \"mono_ns\": 1006250000,\n"
		      "            \"event\": \"died\",\n            \"count\": 1,\n"
		      "            \"shot\": 0,\n            \"sample\": 2\n        }\n    ],\n") != NULL);
	free(buf);
	/* trace: an instant event at the event's own time */
	{
		struct rec_view_opts o = { .view = REC_VIEW_TRACE, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"name\": \"event: died\",\n"
		      "            \"ph\": \"i\",\n            \"s\": \"g\",\n"
		      "            \"ts\": 1006250.0,\n") != NULL);
	free(buf);
	rec_capture_free(&c);
	remove(path);
}

/*
 * hwtel record --event's ring reader on a ring built here: a 64-byte data
 * area, the tail at 56, a SAMPLE record (16 bytes) whose time wraps to
 * offset 0, then a LOST record (32 bytes: id, lost, time) at 8..39. Both
 * go to the engine: 1 occurrence at the sample's time, 5 at the loss
 * record's; the tail ends at the head.
 */
#include <linux/perf_event.h>

TEST(rec_event_ring_reader_wraps)
{
	static unsigned char ring[4096 + 64] __attribute__((aligned(8)));
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)ring;
	unsigned char *data = ring + 4096;
	struct perf_event_header sh = { .type = PERF_RECORD_SAMPLE, .size = 16 };
	struct perf_event_header lh = { .type = PERF_RECORD_LOST, .size = 32 };
	const uint64_t ts = 5000100, lost[3] = { 7, 5, 5000200 };
	struct rec_engine *e = engine(4, 0, 1);
	struct rec_sink s = { .shot_begin = ev_begin, .sample = ev_sample, .event = ev_event };
	struct evmem m = { 0 };
	uint64_t nlost = 0, nthr = 0;
	double x = 0;
	char err[200];

	s.ctx = &m;
	pg->data_offset = 4096;
	pg->data_size = 64;
	pg->data_tail = 64 + 56;	/* positions grow; offsets are modulo 64 */
	pg->data_head = 64 + 56 + 16 + 32;
	memcpy(data + 56, &sh, 8);
	memcpy(data + 0, &ts, 8);
	memcpy(data + 8, &lh, 8);
	memcpy(data + 16, lost, 24);
	CHECK_EQ(rec_engine_add_event(e, "died", err, sizeof(err)), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "died > 0", err, sizeof(err)), 0);
	CHECK_EQ(hwtel_rec_ring_drain(ring, sizeof(ring), 4096, e, 0, &nlost, &nthr), 0);
	CHECK_U64(pg->data_tail, 64 + 56 + 48);
	CHECK_U64(nlost, 5);
	rec_engine_push(e, 6000000, &x, REC_CAUSE_NONE, NULL, 0, NULL, &s);
	CHECK_EQ(m.n, 1);
	CHECK_U64(m.t[0], ts);
	CHECK_U64(m.count[0], 6);
	CHECK_NEAR(m.died[0], 6, 0);
	/* nothing new: nothing read */
	CHECK_EQ(hwtel_rec_ring_drain(ring, sizeof(ring), 4096, e, 0, &nlost, &nthr), 0);
	CHECK_U64(pg->data_tail, 64 + 56 + 48);
	rec_engine_free(e);
}

/*
 * hwtel record --event's ring reader on a ring whose kernel had no room
 * and throttled the event: a SAMPLE, a LOST record of 953 occurrences, a
 * THROTTLE and its UNTHROTTLE (40 bytes each with sample_id_all), a SAMPLE.
 * All in the interval of sample 7, the trigger ('died > 0'): 955
 * occurrences (the lost ones counted), and before the sample a gap of 953
 * lost occurrences and one of 1 throttle, with the event's track, in the
 * file and in every view; the totals in the capture and the text view.
 */
TEST(rec_event_ring_lost_and_throttled)
{
	const char *path = unit_tmp("rec-evgap.cap");
	static unsigned char ring[4096 + 256] __attribute__((aligned(8)));
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)ring;
	unsigned char *data = ring + 4096;
	static const char *const TR[] = { "x" };
	struct rec_config cfg = { .capacity = 5, .position = 50, .shots = 1,
				  .period_ns = 1000000, .nmetrics = 1, .metric = TR };
	char tracks[2][REC_NAME_MAX] = { "x", "died" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 5, .shots = 1, .pre = 2,
				.position = 50, .clock = "ns", .command = "unit",
				.ntracks = 2, .track = tracks };
	struct rec_engine *e = rec_engine_new(&cfg, NULL, 0);
	const uint64_t t6 = gap_t(6);
	const struct {
		uint32_t type;
		uint16_t misc, size;
		uint64_t v[4];
	} rec[] = {
		{ PERF_RECORD_SAMPLE, 0, 16, { t6 + 100000 } },
		{ PERF_RECORD_LOST, 0, 32, { 7, 953, t6 + 200000 } },
		{ PERF_RECORD_THROTTLE, 0, 40, { t6 + 300000, 7, 7, t6 + 300000 } },
		{ PERF_RECORD_UNTHROTTLE, 0, 40, { t6 + 900000, 7, 7, t6 + 900000 } },
		{ PERF_RECORD_SAMPLE, 0, 16, { t6 + 950000 } },
	};
	struct rec_capture c;
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	uint64_t nlost = 0, nthr = 0, at = 0;
	char err[200] = "", *buf = NULL;
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		memcpy(data + at, &rec[i], 8);
		memcpy(data + at + 8, rec[i].v, rec[i].size - 8u);
		at += rec[i].size;
	}
	pg->data_offset = 4096;
	pg->data_size = 256;
	pg->data_tail = 0;
	pg->data_head = at;
	CHECK_EQ(rec_engine_add_event(e, "died", NULL, 0), 0);
	CHECK_EQ(rec_engine_set_trigger(e, "died > 0", NULL, 0), 0);
	/* only these kinds are an event's gaps */
	CHECK_EQ(rec_engine_event_gap(e, 0, t6, REC_GAP_LATE, 1), -EINVAL);
	CHECK_EQ(rec_engine_event_gap(e, 1, t6, REC_GAP_LOST, 1), -EINVAL);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	for (i = 0; i < 12; i++) {
		double v[1] = { i };

		if (i == 7) {	/* after the reads of sample 7, as the recorder */
			CHECK_EQ(hwtel_rec_ring_drain(ring, sizeof(ring), 4096, e, 0, &nlost,
						      &nthr), 0);
			CHECK_U64(pg->data_tail, at);
		}
		CHECK(rec_engine_push(e, gap_t(i), v, REC_CAUSE_NONE, NULL, 0, NULL, &s) >= 0);
	}
	CHECK_EQ(rec_engine_finish(e, &s), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	rec_engine_free(e);
	CHECK_U64(nlost, 953);
	CHECK_U64(nthr, 1);
	CHECK_EQ(rec_read(path, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ(c.nskipped, 0);
	CHECK_EQ(c.nsamples, 5);
	CHECK_U64(c.shots[0].trig_mono_ns, gap_t(7));
	CHECK_U64(c.lost_occurrences, 953);
	CHECK_U64(c.throttles, 1);
	CHECK_U64(c.missed_periods, 0);
	CHECK_U64(c.stale_reads, 0);
	CHECK_EQ(c.ngaps, 2);
	if (c.ngaps == 2) {
		CHECK_EQ(c.gaps[0].kind, REC_GAP_LOST);
		CHECK_U64(c.gaps[0].mono_ns, t6 + 200000);
		CHECK_U64(c.gaps[0].count, 953);
		CHECK_EQ(c.gaps[0].track, 1);
		CHECK_EQ(c.gaps[0].sample, 2);
		CHECK_EQ(c.gaps[1].kind, REC_GAP_THROTTLED);
		CHECK_U64(c.gaps[1].mono_ns, t6 + 300000);
		CHECK_U64(c.gaps[1].count, 1);
		CHECK_EQ(c.gaps[1].track, 1);
		CHECK_EQ(c.gaps[1].sample, 2);
	}
	CHECK_EQ(c.nevents, 1);
	if (c.nevents == 1) {
		CHECK_U64(c.events[0].mono_ns, t6 + 100000);
		CHECK_U64(c.events[0].count, 955);
		CHECK_EQ(c.events[0].sample, 2);
	}
	{
		struct rec_view_opts o = { .view = REC_VIEW_TEXT, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\ngaps: 0 periods missed, 0 stale reads, 953 event occurrences lost, 1 throttle\n") != NULL);
	CHECK(strstr(buf, "\n          -1       -1.000              6              0\n"
		      "~~~      gap       -0.800 died: 953 occurrences lost (no room in its perf ring; counted, not timed)\n"
		      "~~~      gap       -0.700 died: throttled 1 time by the kernel (occurrences until the unthrottle neither recorded nor counted)\n"
		      "***    event       -0.900 died: 955 occurrences\n"
		      ">>        +0       +0.000              7            955\n") != NULL);
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_CSV, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(!strncmp(buf, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,died,gap_missed,gap_stale,gap_lost,gap_throttled,died.first_ns\n", 116));
	CHECK(strstr(buf, "\n0,1,-1,1006000000,1006000000,1000000,6,0,0,0,0,0,\n"
		      "0,2,0,1007000000,1007000000,1000000,7,955,0,0,953,1,1006100000\n") != NULL);
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_JSON, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"missed_periods\": 0,\n    \"stale_reads\": 0,\n"
		      "    \"lost_occurrences\": 953,\n    \"throttles\": 1,\n") != NULL);
	CHECK(strstr(buf, "            \"mono_ns\": 1006200000,\n            \"kind\": \"lost\",\n"
		      "            \"count\": 953,\n            \"event\": \"died\",\n"
		      "            \"shot\": 0,\n            \"before_sample\": 2\n") != NULL);
	CHECK(strstr(buf, "            \"mono_ns\": 1006300000,\n            \"kind\": \"throttled\",\n"
		      "            \"count\": 1,\n            \"event\": \"died\",\n"
		      "            \"shot\": 0,\n            \"before_sample\": 2\n") != NULL);
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_TRACE, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "\"name\": \"gap: died: 953 occurrences lost (no room in its perf ring; counted, not timed)\",\n"
		      "            \"ph\": \"i\",\n            \"s\": \"g\",\n"
		      "            \"ts\": 1006200.0,\n") != NULL);
	free(buf);
	{
		struct rec_view_opts o = { .view = REC_VIEW_SVG, .shot = -1 };

		buf = view_str(&c, &o);
	}
	CHECK(strstr(buf, "orange: gaps: 0 periods missed, 0 stale reads, 953 event occurrences lost, 1 throttle</text>") != NULL);
	CHECK(strstr(buf, "<title>died: throttled 1 time by the kernel (occurrences until the unthrottle neither recorded nor counted)</title>") != NULL);
	free(buf);
	rec_capture_free(&c);
	remove(path);
}

/*
 * A capture of @n samples in one untriggered shot, built in memory:
 * tracks "x" (10 times the sample's index, plus 1) and "died", an event with one
 * occurrence in each interval but every seventh; a stale read before
 * sample 5, a throttle of died before sample n / 2, a late gap of 2
 * periods and 3 lost occurrences of died before the last sample.
 */
static void big_capture(struct rec_capture *c, unsigned int n)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->h.period_ns = 1000000;
	c->h.capacity = n;
	c->h.shots = 1;
	c->h.ntracks = 2;
	c->h.track = calloc(2, sizeof(*c->h.track));
	strcpy(c->h.track[0], "x");
	strcpy(c->h.track[1], "died");
	c->version = 2;
	c->complete = true;
	c->nshots = 1;
	c->shots = calloc(1, sizeof(*c->shots));
	c->shots[0] = (struct rec_shot){ .cause = REC_CAUSE_NONE, .nsamples = n, .ended = true };
	c->nsamples = n;
	c->samples = calloc(n, sizeof(*c->samples));
	c->vals = calloc(2 * (size_t)n, sizeof(*c->vals));
	c->events = calloc(n, sizeof(*c->events));
	c->gaps = calloc(4, sizeof(*c->gaps));
	for (i = 0; i < n; i++) {
		struct rec_sample *sm = &c->samples[i];

		sm->mono_ns = sm->real_ns = 1000000000ull + i * 1000000ull;
		sm->period_ns = 1000000;
		sm->index = i;
		sm->vals = &c->vals[2 * (size_t)i];
		sm->vals[0] = 10.0 * i + 1;
		sm->vals[1] = i % 7 ? 1 : 0;
		if (i % 7)
			c->events[c->nevents++] = (struct rec_event){
				.mono_ns = sm->mono_ns - 500000, .track = 1, .count = 1, .sample = i };
	}
	c->gaps[c->ngaps++] = (struct rec_gap){ .mono_ns = 1004000000, .kind = REC_GAP_STALE,
						.count = 1, .sample = 5 };
	c->samples[5].stale = 1;
	c->gaps[c->ngaps++] = (struct rec_gap){ .kind = REC_GAP_THROTTLED, .count = 1,
						.sample = n / 2, .track = 1 };
	c->gaps[c->ngaps++] = (struct rec_gap){ .kind = REC_GAP_LATE, .count = 2,
						.sample = n - 1 };
	c->samples[n - 1].missed = 2;
	c->gaps[c->ngaps++] = (struct rec_gap){ .kind = REC_GAP_LOST, .count = 3,
						.sample = n - 1, .track = 1 };
	c->stale_reads = 1;
	c->missed_periods = 2;
	c->lost_occurrences = 3;
	c->throttles = 1;
}

/*
 * The CSV view of a large capture with an event's gaps and events: every
 * row exact (each sample's gaps and event, none of another's). The view
 * walks the gaps and events with a cursor; it scanned all of them for
 * each row (100,000 samples and one lost gap took 12 s).
 */
TEST(rec_view_csv_large)
{
	const unsigned int n = 100000;
	struct rec_view_opts o = { .view = REC_VIEW_CSV, .shot = -1 };
	struct rec_capture c;
	char *buf, *want, *p;
	size_t size = 100 + (size_t)n * 100;
	unsigned int i;

	big_capture(&c, n);
	buf = view_str(&c, &o);
	want = malloc(size);
	CHECK(buf != NULL && want != NULL);
	if (!buf || !want)
		goto out;
	p = want + sprintf(want, "shot,sample,from_trigger,mono_ns,real_ns,period_ns,x,died,gap_missed,gap_stale,gap_lost,gap_throttled,died.first_ns\n");
	for (i = 0; i < n; i++) {
		uint64_t t = 1000000000ull + i * 1000000ull;

		p += sprintf(p, "0,%u,,%" PRIu64 ",%" PRIu64 ",1000000,%u,%u,%u,%u,%u,%u,", i, t, t,
			     10 * i + 1, i % 7 ? 1 : 0, i == n - 1 ? 2 : 0, i == 5, i == n - 1 ? 3 : 0,
			     i == n / 2);
		if (i % 7)
			p += sprintf(p, "%" PRIu64, t - 500000);
		*p++ = '\n';
	}
	*p = '\0';
	CHECK_EQ(strlen(buf), strlen(want));
	CHECK(!strcmp(buf, want));
	/* the rows around the gaps, as a reader sees them */
	CHECK(strstr(buf, "\n0,5,,1005000000,1005000000,1000000,51,1,0,1,0,0,1004500000\n") != NULL);
	CHECK(strstr(buf, "\n0,50000,,51000000000,51000000000,1000000,500001,1,0,0,0,1,50999500000\n") != NULL);
	CHECK(strstr(buf, "\n0,99999,,100999000000,100999000000,1000000,999991,1,2,0,3,0,100998500000\n") != NULL);
out:
	free(buf);
	free(want);
	rec_capture_free(&c);
}

/*
 * A capture of tracks x and died, shot 0 of samples 0..2: before sample
 * 1 a gap of 2 lost occurrences of died; before sample 2 one of 5 lost
 * and a throttle. Written by the writer (its event_gap sink).
 */
static unsigned char *evgap_capture(size_t *len)
{
	const char *path = unit_tmp("rec-evgap-cut.cap");
	char tracks[2][REC_NAME_MAX] = { "x", "died" };
	struct rec_header h = { .period_ns = 1000000, .capacity = 3, .shots = 1,
				.clock = "ns", .command = "unit", .ntracks = 2, .track = tracks };
	struct rec_writer *w;
	struct rec_sink s = { 0 };
	unsigned char *buf;
	unsigned int i;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK_EQ(rec_writer_open(fd, &h, &w), 0);
	rec_writer_set_clock(w, 0);
	rec_writer_sink(w, &s);
	CHECK_EQ(s.shot_begin(s.ctx, 0, REC_CAUSE_SIGNAL, 0, gap_t(0)), 0);
	for (i = 0; i < 3; i++) {
		double v[2] = { i, 1 };

		if (i == 1)
			CHECK_EQ(s.event_gap(s.ctx, gap_t(1) - 500000, REC_GAP_LOST, 1, 2), 0);
		if (i == 2) {
			CHECK_EQ(s.event_gap(s.ctx, gap_t(2) - 600000, REC_GAP_LOST, 1, 5), 0);
			CHECK_EQ(s.event_gap(s.ctx, gap_t(2) - 500000, REC_GAP_THROTTLED, 1, 1), 0);
		}
		CHECK_EQ(s.sample(s.ctx, gap_t(i), v), 0);
	}
	CHECK_EQ(s.shot_end(s.ctx, 0, 3), 0);
	CHECK_EQ(rec_writer_close(w, true), 0);
	buf = (unsigned char *)unit_slurp(path, len);
	unlink(path);
	return buf;
}

/* @b with bytes [@from, @to) replaced by @n bytes at @p */
static unsigned char *t_splice(const unsigned char *b, size_t len, size_t from, size_t to,
			       const unsigned char *p, size_t n, size_t *out_len)
{
	unsigned char *o = malloc(len - (to - from) + n);

	if (!o)
		return NULL;
	memcpy(o, b, from);
	memcpy(o + from, p, n);
	memcpy(o + from + n, b + to, len - to);
	*out_len = len - (to - from) + n;
	return o;
}

/* a 'G' payload: u64 mono_ns, u8 kind, uvarint count[, uvarint track] */
static size_t t_gap(unsigned char *out, unsigned char kind, uint64_t count, int track)
{
	unsigned char pl[32];
	uint64_t t = gap_t(2) - 600000;
	size_t n;

	for (n = 0; n < 8; n++)
		pl[n] = (unsigned char)(t >> (8 * n));
	pl[n++] = kind;
	n += rec_put_uvarint(pl + n, count);
	if (track >= 0)
		n += rec_put_uvarint(pl + n, (uint64_t)track);
	return t_record(out, 'G', pl, n);
}

/*
 * The reader's cut handling of an event's gaps ('G' kinds 3 and 4, with
 * the track): gaps after the last sample record are dropped with their
 * totals; kind 3 or 4 without its track, or with a track the file does
 * not have, ends the read there; unknown kinds (0, 5) are skipped.
 */
TEST(rec_read_event_gaps_cut)
{
	size_t len = 0, off[32], d = 0, n2, cut;
	unsigned char *b = evgap_capture(&len), *b2, g[64];
	unsigned int n, i;
	struct rec_capture c;
	char err[200] = "", want[200];

	CHECK(b != NULL);
	if (!b)
		return;
	n = t_records(b, len, off, 31);
	CHECK_EQ(off[n], len);
	for (i = 0; i < n; i++)
		if (b[off[i]] == 'D')
			d = i;	/* sample 2's record */
	CHECK(d >= 2 && b[off[d - 1]] == 'G' && b[off[d - 2]] == 'G');
	if (d < 2 || b[off[d - 1]] != 'G' || b[off[d - 2]] != 'G') {
		free(b);
		return;
	}
	/* whole */
	CHECK_EQ(rec_read_mem(b, len, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK(c.complete);
	CHECK_EQ(c.nsamples, 3);
	CHECK_EQ(c.ngaps, 3);
	CHECK_U64(c.lost_occurrences, 7);
	CHECK_U64(c.throttles, 1);
	CHECK_EQ(c.nskipped, 0);
	rec_capture_free(&c);

	/* cut after the gap records of sample 2, before its sample record */
	err[0] = '\0';	/* a read leaves it as it was when all is well */
	CHECK_EQ(rec_read_mem(b, off[d], &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK(!c.complete);
	CHECK_EQ(c.nsamples, 2);
	CHECK_EQ(c.ngaps, 1);
	CHECK_U64(c.lost_occurrences, 2);
	CHECK_U64(c.throttles, 0);
	CHECK_U64(c.good_bytes, off[d]);
	rec_capture_free(&c);

	/* cut inside the throttle's record: the lost gap before it dropped too */
	cut = off[d - 1] + 5;
	CHECK_EQ(rec_read_mem(b, cut, &c, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "cut short inside the record at byte %zu (5 of its %zu bytes)",
		 off[d - 1], off[d] - off[d - 1]);
	CHECK_STR(err, want);
	CHECK(!c.complete);
	CHECK_EQ(c.nsamples, 2);
	CHECK_EQ(c.ngaps, 1);
	CHECK_U64(c.lost_occurrences, 2);
	CHECK_U64(c.throttles, 0);
	CHECK_U64(c.good_bytes, off[d - 1]);
	rec_capture_free(&c);

	/* kind 3, then kind 4, without the track: too short for its type */
	for (i = REC_GAP_LOST; i <= REC_GAP_THROTTLED; i++) {
		b2 = t_splice(b, len, off[d - 2], off[d], g, t_gap(g, (unsigned char)i, 5, -1), &n2);
		CHECK(b2 != NULL);
		if (!b2)
			break;
		err[0] = '\0';
		CHECK_EQ(rec_read_mem(b2, n2, &c, err, sizeof(err)), 0);
		snprintf(want, sizeof(want),
			 "corrupt capture: the record at byte %zu is too short for its type",
			 off[d - 2]);
		CHECK_STR(err, want);
		CHECK(!c.complete);
		CHECK_EQ(c.nsamples, 2);
		CHECK_EQ(c.ngaps, 1);
		CHECK_U64(c.lost_occurrences, 2);
		CHECK_U64(c.throttles, 0);
		CHECK_U64(c.good_bytes, off[d - 2]);
		rec_capture_free(&c);
		free(b2);
	}

	/* kind 3, then kind 4, naming track 2 of a file of 2 */
	for (i = REC_GAP_LOST; i <= REC_GAP_THROTTLED; i++) {
		b2 = t_splice(b, len, off[d - 2], off[d], g, t_gap(g, (unsigned char)i, 5, 2), &n2);
		CHECK(b2 != NULL);
		if (!b2)
			break;
		err[0] = '\0';
		CHECK_EQ(rec_read_mem(b2, n2, &c, err, sizeof(err)), 0);
		CHECK_STR(err, "corrupt capture: a gap record names no track");
		CHECK(!c.complete);
		CHECK_EQ(c.nsamples, 2);
		CHECK_EQ(c.ngaps, 1);
		CHECK_U64(c.lost_occurrences, 2);
		CHECK_U64(c.throttles, 0);
		CHECK_U64(c.good_bytes, off[d - 2]);
		rec_capture_free(&c);
		free(b2);
	}

	/* kinds 0 and 5 (not this reader's): skipped, sample 2 read */
	{
		size_t k = t_gap(g, 0, 5, -1);

		k += t_gap(g + k, 5, 6, 1);
		b2 = t_splice(b, len, off[d - 2], off[d], g, k, &n2);
	}
	CHECK(b2 != NULL);
	if (b2) {
		err[0] = '\0';
		CHECK_EQ(rec_read_mem(b2, n2, &c, err, sizeof(err)), 0);
		CHECK_STR(err, "");
		CHECK(c.complete);
		CHECK_EQ(c.nskipped, 2);
		CHECK_EQ(c.nsamples, 3);
		CHECK_EQ(c.ngaps, 1);
		CHECK_U64(c.lost_occurrences, 2);
		CHECK_U64(c.throttles, 0);
		rec_capture_free(&c);
		free(b2);
	}
	free(b);
}

/*
 * -o naming a FIFO or /dev/null with a pre-trigger ring (the default
 * position): refused with status 2 before any source is opened, the
 * target left as it was. --position begin keeps no ring in the file, so
 * the check lets it by (a later error: the source named does not exist).
 */
TEST(rec_output_not_regular)
{
	const char *fifo = unit_tmp("rec-fifo");
	struct stat st;
	char err[4096];
	int rfd;

	remove(fifo);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-o", fifo, "-N", "10", "-t", "1"),
			  err, sizeof(err)), 2);
	{
		char want[1024];

		snprintf(want, sizeof(want), "hwtel record: error: cannot write the capture file %s: it is a FIFO, and the pre-trigger ring lives in the capture file, mapped shared, which needs a regular file: name a regular file (and copy it where it should go afterwards), or use --position begin (no pre-trigger ring)\n",
			 fifo);
		CHECK_STR(err, want);
	}
	CHECK(!stat(fifo, &st) && S_ISFIFO(st.st_mode));
	CHECK_EQ(run_main(hwtel_record_main, RARGS("record", "-o", "/dev/null", "-N", "10"),
			  err, sizeof(err)), 2);
	CHECK_STR(err, "hwtel record: error: cannot write the capture file /dev/null: it is a character device, and the pre-trigger ring lives in the capture file, mapped shared, which needs a regular file: name a regular file (and copy it where it should go afterwards), or use --position begin (no pre-trigger ring)\n");
	CHECK(!stat("/dev/null", &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
	/*
	 * A source that cannot exist (no PMU has that name), so that the run
	 * ends at the source on any host, and a reader of the FIFO
	 * (O_NONBLOCK: it opens at once), so that nothing could block on the
	 * FIFO if it got that far: neither an open for writing nor the few
	 * bytes of a capture of 10 samples.
	 */
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(rfd >= 0);
	CHECK_EQ(run_main(hwtel_record_main,
			  RARGS("record", "-o", fifo, "--position", "begin", "-N", "10", "-t", "1",
				"-s", "pcie=hwtel-unit-no-such-pmu"), err, sizeof(err)), 3);
	CHECK_STR(err, "hwtel record: error: no PMU hwtel-unit-no-such-pmu (is module ndk_pcie_tlm loaded? try 'modprobe ndk_pcie_tlm'; 'hwtel list' shows what is present)\n");
	CHECK(!stat(fifo, &st) && S_ISFIFO(st.st_mode));
	if (rfd >= 0)
		close(rfd);
	remove(fifo);
}

/*
 * --event opens one event per online CPU, every one of them: the CPU list
 * of a machine with more than 1024 CPUs is read whole (it was cut at 1024).
 */
TEST(rec_event_cpu_list)
{
	int *cpu = NULL;
	unsigned int n = 0;

	CHECK_EQ(hwtel_rec_parse_cpus("0-2047\n", &cpu, &n), 0);
	CHECK_EQ(n, 2048);
	if (n == 2048)
		CHECK(cpu[0] == 0 && cpu[1024] == 1024 && cpu[2047] == 2047);
	free(cpu);
	CHECK_EQ(hwtel_rec_parse_cpus("0,2-3,1023-1025,8191\n", &cpu, &n), 0);
	CHECK_EQ(n, 7);
	if (n == 7)
		CHECK(cpu[0] == 0 && cpu[1] == 2 && cpu[2] == 3 && cpu[3] == 1023 &&
		      cpu[5] == 1025 && cpu[6] == 8191);
	free(cpu);
	CHECK_EQ(hwtel_rec_parse_cpus("0\n", &cpu, &n), 0);
	CHECK_EQ(n, 1);
	free(cpu);
	CHECK_EQ(hwtel_rec_parse_cpus("0-\n", &cpu, &n), -EINVAL);
	CHECK_EQ(hwtel_rec_parse_cpus("3-1\n", &cpu, &n), -EINVAL);
	CHECK_EQ(hwtel_rec_parse_cpus("0-3x\n", &cpu, &n), -EINVAL);
	CHECK_EQ(hwtel_rec_parse_cpus("-1\n", &cpu, &n), -EINVAL);
	CHECK(cpu == NULL && n == 0);
	/* ascending ranges that do not overlap; no newline needed */
	CHECK_EQ(hwtel_rec_parse_cpus("0-1,3,5-7", &cpu, &n), 0);
	CHECK_EQ(n, 6);
	if (n == 6)
		CHECK(cpu[0] == 0 && cpu[1] == 1 && cpu[2] == 3 && cpu[3] == 5 && cpu[5] == 7);
	free(cpu);
	/* a digit before each number, each CPU once, nothing after the list */
	{
		static const char *const BAD[] = {
			" -1\n", " 1\n", "+3\n", "0-+3\n", "0- 3\n", "0, 2\n", "0,0\n",
			"0-3,2\n", "2,1\n", "0-3,3-4\n", "0-3,\n", "0-3,", ",0\n", "0,,1\n",
			"0\n1\n", "0 \n",
		};
		unsigned int i;

		for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
			int ret = hwtel_rec_parse_cpus(BAD[i], &cpu, &n);

			if (ret != -EINVAL || cpu || n) {
				printf("#   BAD[%u]: returned %d with %u CPUs, expected -EINVAL\n",
				       i, ret, n);
				unit_failed++;
			}
			free(cpu);
		}
	}
}
