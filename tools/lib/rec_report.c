// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hwtel report: views of a capture (text timeline, CSV, JSON, Chrome/
 * Perfetto trace-event JSON, SVG plot). Documentation/userspace-api/
 * hwtel.rst, "hwtel report", describes each.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rec.h"

static const char *cause_name(enum rec_cause c)
{
	switch (c) {
	case REC_CAUSE_EXPR:
		return "condition";
	case REC_CAUSE_SIGNAL:
		return "SIGUSR1";
	case REC_CAUSE_COMMAND:
		return "command end";
	default:
		return "none";
	}
}

static unsigned int ntr(const struct rec_capture *c, const struct rec_view_opts *o)
{
	return o->nsel ? o->nsel : c->h.ntracks;
}

static unsigned int tr(const struct rec_view_opts *o, unsigned int i)
{
	return o->nsel ? o->sel[i] : i;
}

static bool shot_on(const struct rec_view_opts *o, const struct rec_shot *s)
{
	return o->shot < 0 || (unsigned int)o->shot == s->number;
}

/* the trigger's sample index within the shot; -1 without a trigger */
static long trig_index(const struct rec_shot *s)
{
	return s->cause == REC_CAUSE_NONE ? -1 : (long)s->pre;
}

/* The trigger sample is in the file (not so in a file cut in the ring) */
static bool trig_in_file(const struct rec_shot *s)
{
	return trig_index(s) >= 0 && trig_index(s) < (long)s->nsamples;
}

static void fmt_val(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.6g", v);
}

/* the fewest significant digits that read back as @v (at most 17) */
static void fmt_exact(char *buf, size_t size, double v)
{
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, size, "%.17g", v);
}

/*
 * The track hwtel record writes for a PCIe source: 1 when a STATUS flag
 * (LOST DELTA, READ-OUT OVERRUN) was set in the sample's interval, 0 when
 * none was, NaN when the flags were not read. -1 when the capture has none.
 */
static int untrusted_track(const struct rec_capture *c)
{
	unsigned int k;

	for (k = 0; k < c->h.ntracks; k++)
		if (!strcmp(c->h.track[k], "pcie.untrusted"))
			return (int)k;
	return -1;
}

static bool sample_untrusted(const struct rec_sample *sm, int ut)
{
	return ut >= 0 && !isnan(sm->vals[ut]) && sm->vals[ut] != 0;
}

/* a text column as wide as its name, at least 14 */
static int colw(const char *name)
{
	size_t n = strlen(name);

	return n > 14 ? (int)n : 14;
}

static const char *gap_text(char *buf, size_t size, const struct rec_capture *c,
			    const struct rec_gap *g)
{
	const char *ev = g->track < c->h.ntracks ? c->h.track[g->track] : "?";

	if (g->kind == REC_GAP_LATE)
		snprintf(buf, size, "%llu period%s missed (the recorder was late)",
			 (unsigned long long)g->count, g->count == 1 ? "" : "s");
	else if (g->kind == REC_GAP_STALE)
		snprintf(buf, size, "%llu stale read%s (no new snapshot)",
			 (unsigned long long)g->count, g->count == 1 ? "" : "s");
	else if (g->kind == REC_GAP_LOST)
		snprintf(buf, size, "%s: %llu occurrence%s lost (no room in its perf ring; counted, not timed)",
			 ev, (unsigned long long)g->count, g->count == 1 ? "" : "s");
	else
		snprintf(buf, size, "%s: throttled %llu time%s by the kernel (occurrences until the unthrottle neither recorded nor counted)",
			 ev, (unsigned long long)g->count, g->count == 1 ? "" : "s");
	return buf;
}

/* "gaps: M periods missed, S stale reads" over gaps before samples
 * [first, first + n), then ", L event occurrences lost, T throttles" when
 * an event had gaps in the file
 */
static const char *gap_sum(char *buf, size_t size, const struct rec_capture *c,
			   unsigned int first, unsigned int n)
{
	uint64_t m = 0, st = 0, lo = 0, th = 0;
	unsigned int i;
	int len;

	for (i = 0; i < c->ngaps; i++) {
		if (c->gaps[i].sample < first || c->gaps[i].sample - first >= n)
			continue;
		if (c->gaps[i].kind == REC_GAP_LATE)
			m += c->gaps[i].count;
		else if (c->gaps[i].kind == REC_GAP_STALE)
			st += c->gaps[i].count;
		else if (c->gaps[i].kind == REC_GAP_LOST)
			lo += c->gaps[i].count;
		else
			th += c->gaps[i].count;
	}
	len = snprintf(buf, size, "gaps: %llu period%s missed, %llu stale read%s",
		       (unsigned long long)m, m == 1 ? "" : "s", (unsigned long long)st,
		       st == 1 ? "" : "s");
	if ((c->lost_occurrences || c->throttles) && len > 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len,
			 ", %llu event occurrence%s lost, %llu throttle%s",
			 (unsigned long long)lo, lo == 1 ? "" : "s", (unsigned long long)th,
			 th == 1 ? "" : "s");
	return buf;
}

/*
 * Gaps and events are in the order of the samples they go with (their
 * .sample never decreases; the reader appends them so) and the views visit
 * samples in ascending order: a cursor per array finds a row's gaps and
 * events without a scan of the whole array per row.
 */

/* Move @cur to the first gap of sample @s or after; returns it */
static unsigned int gap_cursor(const struct rec_capture *c, unsigned int *cur, unsigned int s)
{
	while (*cur < c->ngaps && c->gaps[*cur].sample < s)
		(*cur)++;
	return *cur;
}

/* Move @cur to the first event record of sample @s or after; returns it */
static unsigned int event_cursor(const struct rec_capture *c, unsigned int *cur, unsigned int s)
{
	while (*cur < c->nevents && c->events[*cur].sample < s)
		(*cur)++;
	return *cur;
}

/* the count of the gaps of @kind just before sample @s; @cur as gap_cursor() */
static uint64_t gaps_at(const struct rec_capture *c, unsigned int *cur, unsigned int s,
			enum rec_gap_kind kind)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = gap_cursor(c, cur, s); i < c->ngaps && c->gaps[i].sample == s; i++)
		if (c->gaps[i].kind == kind)
			n += c->gaps[i].count;
	return n;
}

/* The event record of track @t before sample @s, or NULL; @cur as event_cursor() */
static const struct rec_event *event_at(const struct rec_capture *c, unsigned int *cur,
					unsigned int s, unsigned int t)
{
	unsigned int i;

	for (i = event_cursor(c, cur, s); i < c->nevents && c->events[i].sample == s; i++)
		if (c->events[i].track == t)
			return &c->events[i];
	return NULL;
}

/* Did a 'period' action change the period of any sample? */
static bool period_varies(const struct rec_capture *c)
{
	unsigned int i;

	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].period_ns != c->h.period_ns)
			return true;
	return false;
}

static int view_text(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	unsigned int s, i, k, n = ntr(c, o), gc = 0, ec = 0;
	int ut = untrusted_track(c);
	bool marked = false, pv = period_varies(c);

	fprintf(f, "capture: %u samples in %u shots, period %.3f ms%s, ring %u samples, %u before the trigger (position %g %%)%s\n",
		c->nsamples, c->nshots, (double)c->h.period_ns / 1e6,
		pv ? " at the start, then as the period_ms column says" : "", c->h.capacity, c->h.pre,
		c->h.position, c->complete ? "" : c->version == 3 ?
		", UNFINISHED (its recorder did not close it; read up to the last whole record, then its file ring)" :
		", INCOMPLETE (cut short; read up to the last whole record)");
	if (!c->complete && c->version == 3)
		fprintf(f, "recovered: %u samples from the file ring (%u whole slots, %u torn)\n",
			c->recovered, c->ring_valid, c->ring_torn);
	for (i = 0; i < c->nnotes; i++)
		fprintf(f, "note: %s\n", c->notes[i].text);
	if (c->ngaps) {
		char g[160];

		fprintf(f, "%s\n", gap_sum(g, sizeof(g), c, 0, UINT_MAX));
	}
	for (i = 0; i < c->nsamples && !marked; i++)
		marked = sample_untrusted(&c->samples[i], ut);
	if (marked)
		fputs("note: ! marks a sample whose interval had a STATUS flag set (pcie.untrusted = 1): none of its figures can be trusted\n",
		      f);
	for (s = 0; s < c->nshots; s++) {
		const struct rec_shot *sh = &c->shots[s];
		long ti = trig_index(sh);
		uint64_t t0 = ti >= 0 ? sh->trig_mono_ns : (sh->nsamples ? c->samples[sh->first].mono_ns : 0);

		if (!shot_on(o, sh))
			continue;
		fprintf(f, "\nshot %u: trigger %s", sh->number, cause_name(sh->cause));
		if (trig_in_file(sh))
			fprintf(f, " at sample %ld, %u before it, %ld after it%s\n", ti, sh->pre,
				(long)sh->nsamples - ti - 1, sh->ended ? "" : " (shot cut short)");
		else if (ti >= 0)
			fprintf(f, " at sample %ld, not in the file (cut short %ld samples before it)\n",
				ti, ti - (long)sh->nsamples);
		else
			fprintf(f, " (stopped while armed: the ring only)\n");
		fprintf(f, "%3s %8s %12s", "", "sample", "ms");
		if (pv)
			fprintf(f, " %9s", "period_ms");
		for (k = 0; k < n; k++)
			fprintf(f, " %*s", colw(c->h.track[tr(o, k)]), c->h.track[tr(o, k)]);
		fputc('\n', f);
		for (i = 0; i < sh->nsamples; i++) {
			const struct rec_sample *sm = &c->samples[sh->first + i];
			long rel = ti >= 0 ? (long)i - ti : (long)i;
			char v[REC_NAME_MAX + 160];
			unsigned int g;

			/* around the trigger, or the last samples before a cut */
			if (o->context && trig_in_file(sh) && labs(rel) > (long)o->context)
				continue;
			if (o->context && ti >= 0 && !trig_in_file(sh) &&
			    i + o->context < sh->nsamples)
				continue;
			for (g = gap_cursor(c, &gc, sh->first + i);
			     g < c->ngaps && c->gaps[g].sample == sh->first + i; g++)
				fprintf(f, "%-3s %8s %+12.3f %s\n", "~~~", "gap",
					((double)c->gaps[g].mono_ns - (double)t0) / 1e6,
					gap_text(v, sizeof(v), c, &c->gaps[g]));
			for (g = event_cursor(c, &ec, sh->first + i);
			     g < c->nevents && c->events[g].sample == sh->first + i; g++)
				fprintf(f, "%-3s %8s %+12.3f %s: %llu occurrence%s\n", "***",
					"event",
					((double)c->events[g].mono_ns - (double)t0) / 1e6,
					c->h.track[c->events[g].track],
					(unsigned long long)c->events[g].count,
					c->events[g].count == 1 ? "" : "s");
			fprintf(f, "%-3s %+8ld %+12.3f",
				sample_untrusted(sm, ut) ? (rel == 0 && ti >= 0 ? "!>>" : "!") :
				rel == 0 && ti >= 0 ? ">>" : "", rel,
				((double)sm->mono_ns - (double)t0) / 1e6);
			if (pv)
				fprintf(f, " %9.3f", (double)sm->period_ns / 1e6);
			for (k = 0; k < n; k++) {
				fmt_val(v, sizeof(v), sm->vals[tr(o, k)]);
				fprintf(f, " %*s", colw(c->h.track[tr(o, k)]), v);
			}
			fputc('\n', f);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static int view_csv(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	unsigned int s, i, k, n = ntr(c, o), gc = 0, ec = 0;
	/* the tracks that have events: an empty column where a row has none */
	bool *evtr = calloc(c->h.ntracks ? c->h.ntracks : 1, sizeof(*evtr));

	if (!evtr)
		return -ENOMEM;
	for (i = 0; i < c->nevents; i++)
		if (c->events[i].track < c->h.ntracks)
			evtr[c->events[i].track] = true;
	fputs("shot,sample,from_trigger,mono_ns,real_ns,period_ns", f);
	for (k = 0; k < n; k++)
		fprintf(f, ",%s", c->h.track[tr(o, k)]);
	fputs(",gap_missed,gap_stale", f);
	/* an event's gaps, when the file has any */
	if (c->lost_occurrences || c->throttles)
		fputs(",gap_lost,gap_throttled", f);
	/* the first occurrence's time per event track that has events */
	for (k = 0; k < c->h.ntracks; k++)
		if (evtr[k])
			fprintf(f, ",%s.first_ns", c->h.track[k]);
	fputc('\n', f);
	for (s = 0; s < c->nshots; s++) {
		const struct rec_shot *sh = &c->shots[s];
		long ti = trig_index(sh);

		if (!shot_on(o, sh))
			continue;
		for (i = 0; i < sh->nsamples; i++) {
			const struct rec_sample *sm = &c->samples[sh->first + i];

			fprintf(f, "%u,%u,", sh->number, i);
			if (ti >= 0)
				fprintf(f, "%ld", (long)i - ti);
			fprintf(f, ",%llu,%llu,%llu", (unsigned long long)sm->mono_ns,
				(unsigned long long)sm->real_ns, (unsigned long long)sm->period_ns);
			for (k = 0; k < n; k++) {
				double v = sm->vals[tr(o, k)];
				char num[32];

				if (isnan(v)) {
					fputc(',', f);
				} else {
					fmt_exact(num, sizeof(num), v);
					fprintf(f, ",%s", num);
				}
			}
			fprintf(f, ",%llu,%llu", (unsigned long long)sm->missed,
				(unsigned long long)sm->stale);
			if (c->lost_occurrences || c->throttles) {
				uint64_t lo = gaps_at(c, &gc, sh->first + i, REC_GAP_LOST);
				uint64_t th = gaps_at(c, &gc, sh->first + i, REC_GAP_THROTTLED);

				fprintf(f, ",%llu,%llu", (unsigned long long)lo,
					(unsigned long long)th);
			}
			for (k = 0; k < c->h.ntracks; k++) {
				const struct rec_event *ev = event_at(c, &ec, sh->first + i, k);

				if (ev)
					fprintf(f, ",%llu", (unsigned long long)ev->mono_ns);
				else if (evtr[k])
					fputc(',', f);
			}
			fputc('\n', f);
		}
	}
	free(evtr);
	return ferror(f) ? -EIO : 0;
}

static int view_json(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	struct hwtel_json j;
	unsigned int s, i, k, n = ntr(c, o);
	int ut = untrusted_track(c);

	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "format_version"); hj_uint(&j, c->version);
	hj_key(&j, "complete"); hj_bool(&j, c->complete);
	hj_key(&j, "recovered"); hj_uint(&j, c->recovered);
	hj_key(&j, "period_ns"); hj_u64(&j, c->h.period_ns);
	hj_key(&j, "capacity"); hj_uint(&j, c->h.capacity);
	hj_key(&j, "pre"); hj_uint(&j, c->h.pre);
	hj_key(&j, "position"); hj_double(&j, c->h.position);
	hj_key(&j, "tracks");
	hj_arr_begin(&j);
	for (k = 0; k < n; k++)
		hj_str(&j, c->h.track[tr(o, k)]);
	hj_arr_end(&j);
	hj_key(&j, "notes");
	hj_arr_begin(&j);
	for (i = 0; i < c->nnotes; i++) {
		hj_obj_begin(&j);
		hj_key(&j, "mono_ns"); hj_u64(&j, c->notes[i].mono_ns);
		hj_key(&j, "text"); hj_str(&j, c->notes[i].text);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_key(&j, "missed_periods"); hj_u64(&j, c->missed_periods);
	hj_key(&j, "stale_reads"); hj_u64(&j, c->stale_reads);
	hj_key(&j, "lost_occurrences"); hj_u64(&j, c->lost_occurrences);
	hj_key(&j, "throttles"); hj_u64(&j, c->throttles);
	hj_key(&j, "gaps");
	hj_arr_begin(&j);
	for (i = 0; i < c->ngaps; i++) {
		const struct rec_gap *g = &c->gaps[i];

		hj_obj_begin(&j);
		hj_key(&j, "mono_ns"); hj_u64(&j, g->mono_ns);
		hj_key(&j, "kind");
		hj_str(&j, g->kind == REC_GAP_LATE ? "late" : g->kind == REC_GAP_STALE ? "stale" :
			   g->kind == REC_GAP_LOST ? "lost" : "throttled");
		hj_key(&j, "count"); hj_u64(&j, g->count);
		if (g->kind == REC_GAP_LOST || g->kind == REC_GAP_THROTTLED) {
			hj_key(&j, "event");
			hj_str(&j, g->track < c->h.ntracks ? c->h.track[g->track] : "?");
		}
		/* the sample after it; null after the last sample */
		hj_key(&j, "shot");
		if (g->sample < c->nsamples)
			hj_uint(&j, c->samples[g->sample].shot);
		else
			hj_null(&j);
		hj_key(&j, "before_sample");
		if (g->sample < c->nsamples)
			hj_uint(&j, c->samples[g->sample].index);
		else
			hj_null(&j);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_key(&j, "events");
	hj_arr_begin(&j);
	for (i = 0; i < c->nevents; i++) {
		const struct rec_event *ev = &c->events[i];

		hj_obj_begin(&j);
		hj_key(&j, "mono_ns"); hj_u64(&j, ev->mono_ns);
		hj_key(&j, "event"); hj_str(&j, c->h.track[ev->track]);
		hj_key(&j, "count"); hj_u64(&j, ev->count);
		/* the sample whose interval holds it; null after the last */
		hj_key(&j, "shot");
		if (ev->sample < c->nsamples)
			hj_uint(&j, c->samples[ev->sample].shot);
		else
			hj_null(&j);
		hj_key(&j, "sample");
		if (ev->sample < c->nsamples)
			hj_uint(&j, c->samples[ev->sample].index);
		else
			hj_null(&j);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_key(&j, "shots");
	hj_arr_begin(&j);
	for (s = 0; s < c->nshots; s++) {
		const struct rec_shot *sh = &c->shots[s];

		if (!shot_on(o, sh))
			continue;
		hj_obj_begin(&j);
		hj_key(&j, "shot"); hj_uint(&j, sh->number);
		hj_key(&j, "cause"); hj_str(&j, cause_name(sh->cause));
		hj_key(&j, "trigger_index");
		if (trig_index(sh) >= 0)
			hj_uint(&j, sh->pre);
		else
			hj_null(&j);
		hj_key(&j, "trigger_mono_ns");
		if (trig_index(sh) >= 0)
			hj_u64(&j, sh->trig_mono_ns);
		else
			hj_null(&j);
		hj_key(&j, "ended"); hj_bool(&j, sh->ended);
		hj_key(&j, "samples");
		hj_arr_begin(&j);
		for (i = 0; i < sh->nsamples; i++) {
			const struct rec_sample *sm = &c->samples[sh->first + i];

			hj_obj_begin(&j);
			hj_key(&j, "mono_ns"); hj_u64(&j, sm->mono_ns);
			hj_key(&j, "real_ns"); hj_u64(&j, sm->real_ns);
			hj_key(&j, "period_ns"); hj_u64(&j, sm->period_ns);
			hj_key(&j, "values");
			hj_arr_begin(&j);
			for (k = 0; k < n; k++)
				hj_double(&j, sm->vals[tr(o, k)]);
			hj_arr_end(&j);
			/* with a pcie.untrusted track: false when a STATUS flag was set */
			if (ut >= 0) {
				hj_key(&j, "trusted");
				if (isnan(sm->vals[ut]))
					hj_null(&j);
				else
					hj_bool(&j, !sample_untrusted(sm, ut));
			}
			hj_obj_end(&j);
		}
		hj_arr_end(&j);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

/* Chrome trace-event JSON: one counter ("C") track per metric, instant
 * events for triggers and notes; ts in microseconds of CLOCK_MONOTONIC.
 */
static int view_trace(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	struct hwtel_json j;
	unsigned int s, i, k, n = ntr(c, o);

	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "displayTimeUnit"); hj_str(&j, "ms");
	hj_key(&j, "traceEvents");
	hj_arr_begin(&j);
	hj_obj_begin(&j);
	hj_key(&j, "name"); hj_str(&j, "process_name");
	hj_key(&j, "ph"); hj_str(&j, "M");
	hj_key(&j, "pid"); hj_uint(&j, 1);
	hj_key(&j, "args");
	hj_obj_begin(&j);
	hj_key(&j, "name"); hj_str(&j, "hwtel record");
	hj_obj_end(&j);
	hj_obj_end(&j);
	for (s = 0; s < c->nshots; s++) {
		const struct rec_shot *sh = &c->shots[s];

		if (!shot_on(o, sh))
			continue;
		if (trig_index(sh) >= 0) {
			char name[64];

			snprintf(name, sizeof(name), "trigger (shot %u, %s)", sh->number,
				 cause_name(sh->cause));
			hj_obj_begin(&j);
			hj_key(&j, "name"); hj_str(&j, name);
			hj_key(&j, "ph"); hj_str(&j, "i");
			hj_key(&j, "s"); hj_str(&j, "g");
			hj_key(&j, "ts"); hj_double(&j, (double)sh->trig_mono_ns / 1e3);
			hj_key(&j, "pid"); hj_uint(&j, 1);
			hj_key(&j, "tid"); hj_uint(&j, 1);
			hj_obj_end(&j);
		}
		for (i = 0; i < sh->nsamples; i++) {
			const struct rec_sample *sm = &c->samples[sh->first + i];

			/* the period as a step: at the shot's start and each change
			 * (the name has a space: no track is named so)
			 */
			if (!i || sm->period_ns != sm[-1].period_ns) {
				hj_obj_begin(&j);
				hj_key(&j, "name"); hj_str(&j, "period (ms)");
				hj_key(&j, "ph"); hj_str(&j, "C");
				hj_key(&j, "ts"); hj_double(&j, (double)sm->mono_ns / 1e3);
				hj_key(&j, "pid"); hj_uint(&j, 1);
				hj_key(&j, "args");
				hj_obj_begin(&j);
				hj_key(&j, "value"); hj_double(&j, (double)sm->period_ns / 1e6);
				hj_obj_end(&j);
				hj_obj_end(&j);
			}
			for (k = 0; k < n; k++) {
				double v = sm->vals[tr(o, k)];

				if (isnan(v))
					continue;
				hj_obj_begin(&j);
				hj_key(&j, "name"); hj_str(&j, c->h.track[tr(o, k)]);
				hj_key(&j, "ph"); hj_str(&j, "C");
				hj_key(&j, "ts"); hj_double(&j, (double)sm->mono_ns / 1e3);
				hj_key(&j, "pid"); hj_uint(&j, 1);
				hj_key(&j, "args");
				hj_obj_begin(&j);
				hj_key(&j, "value"); hj_double(&j, v);
				hj_obj_end(&j);
				hj_obj_end(&j);
			}
		}
	}
	for (i = 0; i < c->ngaps; i++) {
		char name[REC_NAME_MAX + 160] = "gap: ";

		gap_text(name + 5, sizeof(name) - 5, c, &c->gaps[i]);
		hj_obj_begin(&j);
		hj_key(&j, "name"); hj_str(&j, name);
		hj_key(&j, "ph"); hj_str(&j, "i");
		hj_key(&j, "s"); hj_str(&j, "g");
		hj_key(&j, "ts"); hj_double(&j, (double)c->gaps[i].mono_ns / 1e3);
		hj_key(&j, "pid"); hj_uint(&j, 1);
		hj_key(&j, "tid"); hj_uint(&j, 1);
		hj_obj_end(&j);
	}
	for (i = 0; i < c->nevents; i++) {
		char name[REC_NAME_MAX + 8];

		snprintf(name, sizeof(name), "event: %s", c->h.track[c->events[i].track]);
		hj_obj_begin(&j);
		hj_key(&j, "name"); hj_str(&j, name);
		hj_key(&j, "ph"); hj_str(&j, "i");
		hj_key(&j, "s"); hj_str(&j, "g");
		hj_key(&j, "ts"); hj_double(&j, (double)c->events[i].mono_ns / 1e3);
		hj_key(&j, "pid"); hj_uint(&j, 1);
		hj_key(&j, "tid"); hj_uint(&j, 1);
		hj_key(&j, "args");
		hj_obj_begin(&j);
		hj_key(&j, "count"); hj_u64(&j, c->events[i].count);
		hj_obj_end(&j);
		hj_obj_end(&j);
	}
	for (i = 0; i < c->nnotes; i++) {
		hj_obj_begin(&j);
		hj_key(&j, "name"); hj_str(&j, c->notes[i].text);
		hj_key(&j, "ph"); hj_str(&j, "i");
		hj_key(&j, "s"); hj_str(&j, "g");
		hj_key(&j, "ts"); hj_double(&j, (double)c->notes[i].mono_ns / 1e3);
		hj_key(&j, "pid"); hj_uint(&j, 1);
		hj_key(&j, "tid"); hj_uint(&j, 1);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* One panel per chosen track (all shots side by side in time order of the
 * first chosen shot only: the plot shows one shot, -s or the first).
 */
static int view_svg(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	const int W = 900, PH = 120, L = 70, R = 20, T = 30;
	const struct rec_shot *sh = NULL;
	unsigned int s, i, k, n = ntr(c, o);
	double x0, x1;
	char gname[REC_NAME_MAX + 160];
	int H;

	if (n > 16)
		n = 16;
	for (s = 0; s < c->nshots; s++) {
		if (shot_on(o, &c->shots[s]) && c->shots[s].nsamples) {
			sh = &c->shots[s];
			break;
		}
	}
	H = T + (int)n * (PH + 20) + 30;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
	if (!sh) {
		fputs("<text x=\"10\" y=\"20\">no samples</text>\n</svg>\n", f);
		return ferror(f) ? -EIO : 0;
	}
	x0 = (double)c->samples[sh->first].mono_ns;
	x1 = (double)c->samples[sh->first + sh->nsamples - 1].mono_ns;
	/* a file cut before its trigger: the axis runs on to the trigger */
	if (trig_index(sh) >= 0) {
		x0 = fmin(x0, (double)sh->trig_mono_ns);
		x1 = fmax(x1, (double)sh->trig_mono_ns);
	}
	if (x1 <= x0)
		x1 = x0 + 1;
	fprintf(f, "<text x=\"%d\" y=\"18\">shot %u, trigger: %s; shaded: before the trigger; red: the trigger %s; orange: %s</text>\n",
		L, sh->number, cause_name(sh->cause),
		trig_index(sh) < 0 || trig_in_file(sh) ? "sample" :
		"(not in the file: cut short before it)",
		gap_sum(gname, sizeof(gname), c, sh->first, sh->nsamples));
	for (k = 0; k < n; k++) {
		unsigned int t = tr(o, k);
		int y = T + (int)k * (PH + 20);
		double lo = INFINITY, hi = -INFINITY;

		for (i = 0; i < sh->nsamples; i++) {
			double v = c->samples[sh->first + i].vals[t];

			if (isnan(v))
				continue;
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
		if (!(hi >= lo)) {
			lo = 0;
			hi = 1;
		} else if (hi == lo) {
			hi = lo + 1;
		}
		fprintf(f, "<g class=\"panel\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
			L, y, W - L - R, PH);
		if (trig_index(sh) >= 0) {
			double tx = L + ((double)sh->trig_mono_ns - x0) / (x1 - x0) * (W - L - R);

			fprintf(f, "<rect class=\"pre\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#ddeeff\"/>\n",
				L, y, tx - L, PH);
			fprintf(f, "<line class=\"trigger\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"red\" stroke-width=\"1.5\"/>\n",
				tx, y, tx, y + PH);
		}
		for (i = 0; i < c->ngaps; i++) {
			const struct rec_gap *g = &c->gaps[i];
			double gx;

			if (g->sample < sh->first || g->sample - sh->first >= sh->nsamples)
				continue;
			gx = fmin(fmax(L + ((double)g->mono_ns - x0) / (x1 - x0) * (W - L - R), L), W - R);
			fprintf(f, "<line class=\"gap\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"orange\" stroke-dasharray=\"3,2\"><title>",
				gx, y, gx, y + PH);
			xml_text(f, gap_text(gname, sizeof(gname), c, g));
			fputs("</title></line>\n", f);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\">", L + 4, y + 12);
		xml_text(f, c->h.track[t]);
		fprintf(f, "</text>\n<text x=\"2\" y=\"%d\">%.4g</text>\n<text x=\"2\" y=\"%d\">%.4g</text>\n",
			y + 10, hi, y + PH, lo);
		fputs("<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1\" points=\"", f);
		for (i = 0; i < sh->nsamples; i++) {
			const struct rec_sample *sm = &c->samples[sh->first + i];
			double v = sm->vals[t];

			if (isnan(v))
				continue;
			fprintf(f, "%.1f,%.1f ", L + ((double)sm->mono_ns - x0) / (x1 - x0) * (W - L - R),
				y + PH - (v - lo) / (hi - lo) * PH);
		}
		fputs("\"/>\n</g>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">%.3f ms</text>\n</svg>\n", L, H - 8, (x1 - x0) / 1e6);
	return ferror(f) ? -EIO : 0;
}

static int rec_view_c(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	switch (o->view) {
	case REC_VIEW_TEXT:
		return view_text(f, c, o);
	case REC_VIEW_CSV:
		return view_csv(f, c, o);
	case REC_VIEW_JSON:
		return view_json(f, c, o);
	case REC_VIEW_TRACE:
		return view_trace(f, c, o);
	case REC_VIEW_SVG:
		return view_svg(f, c, o);
	}
	return -EINVAL;
}

int rec_view(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = rec_view_c(f, c, o);
	hwtel_numeric_restore(&num);
	return ret;
}
