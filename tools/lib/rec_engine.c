// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hwtel record: the flight-recorder engine.
 *
 * A shot holds N samples: `pre` before the trigger sample, the trigger
 * sample, and N - pre - 1 after it. While armed, the last `pre` samples
 * live in a ring in memory; on the trigger the ring is written out
 * (oldest first), then the trigger sample and every later sample go to the
 * sink as they come, until the shot has its N - pre - 1 samples after the
 * trigger. Then the engine re-arms with an empty ring for the next shot or
 * is done. Each sample that enters the ring also goes, with its gaps and
 * events, to the sink's ring()
 * (the capture file's copy, which outlives a killed recorder). Each
 * sample: the events of its interval, then counters (in the order they
 * were declared, each rule in its order), then feedback conditions, then
 * the trigger.
 *
 * Events (rec_engine_event) arrive with their own times, in any order and
 * possibly before the push of the sample they belong to: the recorder
 * reports them after a sample's reads, so one that happened during the
 * reads lies after that sample's time. They wait in a pending list; a push
 * at time t takes those at t or before. The sample keeps, per event, the
 * first time and the count, and they go to the sink with it, as gaps do.
 * An event's own gaps (rec_engine_event_gap: occurrences its perf ring
 * lost, throttles) travel the same way and go to the sink as gaps with the
 * event's track.
 *
 * The trigger fires on the rising edge of its condition (after its hold):
 * a condition that still holds when the engine re-arms must fail once
 * before it fires again.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

struct feedback {
	struct rec_expr *cond;
	struct rec_action act;
	bool was;
};

/* an event occurrence not yet counted, or a gap of the event (kind) */
struct pending {
	uint64_t t, n;
	unsigned int ev;
	enum rec_gap_kind kind;	/* 0: occurrences */
};

struct rec_engine {
	struct rec_config cfg;
	unsigned int pre;
	unsigned int ntracks;		/* metrics + events + counters */
	const char *tname[REC_MAX_METRICS + REC_MAX_EVENTS + REC_MAX_COUNTERS];
	struct rec_names names;
	unsigned int ncounters;
	struct rec_counter cnt[REC_MAX_COUNTERS];
	unsigned int nevents;
	char evname[REC_MAX_EVENTS][REC_NAME_MAX];
	struct pending *pend;
	size_t npend, pendcap;
	struct rec_evsum ev[REC_MAX_EVENTS];	/* of the current sample */
	struct rec_evsum *re;			/* of each ring sample */
	struct rec_expr *trigger;
	bool trig_was;
	unsigned int nfb;
	struct feedback fb[REC_MAX_FEEDBACK];
	unsigned int nontrig;
	struct rec_action ontrig[REC_MAX_FEEDBACK];

	enum rec_state state;
	unsigned int shot;		/* current shot number (0-based) */
	unsigned int shots_done;
	uint64_t index;
	uint64_t period;		/* of the next sample */
	uint64_t told;			/* the period the sink was told last */
	/* ring */
	uint64_t *rt, *rp;		/* time, period */
	struct rec_gaps *rg;		/* the gaps before each ring sample */
	struct rec_gaps gap;		/* before the next sample */
	double *rv;
	unsigned int rhead, rcount;
	/* post phase */
	unsigned int post_left, shot_samples;
	double *cur;
};

static void seterr(char *err, size_t size, const char *msg, const char *arg)
{
	if (err && size)
		snprintf(err, size, msg, arg);
}

unsigned int rec_pre_count(unsigned int n, double percent)
{
	double v;

	if (n == 0)
		return 0;
	v = floor(percent * (double)(n - 1) / 100.0 + 0.5);
	if (v < 0)
		v = 0;
	if (v > n - 1)
		v = n - 1;
	return (unsigned int)v;
}

struct rec_engine *rec_engine_new(const struct rec_config *cfg, char *err, size_t errsize)
{
	struct rec_engine *e;
	unsigned int i;

	if (cfg->capacity < 1 || cfg->capacity > 100000000u) {
		seterr(err, errsize, "the ring must hold 1 to 100000000 samples%s", "");
		return NULL;
	}
	if (!(cfg->position >= 0 && cfg->position <= 100)) {
		seterr(err, errsize, "the position must be 0 to 100 %%%s", "");
		return NULL;
	}
	if (cfg->nmetrics > REC_MAX_METRICS) {
		seterr(err, errsize, "more than 512 metrics%s", "");
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	if (!e->cfg.shots)
		e->cfg.shots = 1;
	e->pre = rec_pre_count(cfg->capacity, cfg->position);
	for (i = 0; i < cfg->nmetrics; i++)
		e->tname[i] = cfg->metric[i];
	e->ntracks = cfg->nmetrics;
	e->names.n = e->ntracks;
	e->names.name = e->tname;
	e->period = e->told = cfg->period_ns;
	e->rt = calloc(e->pre ? e->pre : 1, sizeof(*e->rt));
	e->rp = calloc(e->pre ? e->pre : 1, sizeof(*e->rp));
	e->rg = calloc(e->pre ? e->pre : 1, sizeof(*e->rg));
	e->cur = calloc(REC_MAX_METRICS + REC_MAX_EVENTS + REC_MAX_COUNTERS, sizeof(*e->cur));
	if (!e->rt || !e->rp || !e->rg || !e->cur) {
		rec_engine_free(e);
		return NULL;
	}
	return e;
}

void rec_engine_free(struct rec_engine *e)
{
	unsigned int i, k;

	if (!e)
		return;
	for (i = 0; i < e->ncounters; i++)
		for (k = 0; k < e->cnt[i].nrules; k++)
			rec_cond_free(e->cnt[i].cond[k]);
	for (i = 0; i < e->nfb; i++)
		rec_cond_free(e->fb[i].cond);
	rec_cond_free(e->trigger);
	free(e->rt);
	free(e->rp);
	free(e->rg);
	free(e->re);
	free(e->pend);
	free(e->rv);
	free(e->cur);
	free(e);
}

const struct rec_names *rec_engine_names(struct rec_engine *e)
{
	return &e->names;
}

unsigned int rec_engine_ntracks(const struct rec_engine *e)
{
	return e->ntracks;
}

const char *rec_engine_track(const struct rec_engine *e, unsigned int i)
{
	return i < e->ntracks ? e->tname[i] : NULL;
}

unsigned int rec_engine_nevents(const struct rec_engine *e)
{
	return e->nevents;
}

unsigned int rec_engine_event_track(const struct rec_engine *e, unsigned int i)
{
	return e->cfg.nmetrics + i;
}

uint64_t rec_engine_period(const struct rec_engine *e)
{
	return e->period;
}

uint64_t rec_engine_index(const struct rec_engine *e)
{
	return e->index;
}

unsigned int rec_engine_shots_done(const struct rec_engine *e)
{
	return e->shots_done;
}

static bool valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

int rec_engine_add_counter(struct rec_engine *e, const char *text, char *err, size_t errsize)
{
	struct rec_counter *c;
	const char *p = text, *q, *colon, *ne;	/* ne: the end of NAME */
	unsigned int bits = 0;
	char *dup, *rule, *save = NULL;
	unsigned int i;
	int ret = 0;

	if (e->ncounters >= REC_MAX_COUNTERS) {
		seterr(err, errsize, "more than 16 counters%s", "");
		return -EINVAL;
	}
	if (e->rv) {
		seterr(err, errsize, "counters must come before the first sample%s", "");
		return -EBUSY;
	}
	while (isspace((unsigned char)*p))
		p++;
	q = p;
	while (*q && !isspace((unsigned char)*q))
		q++;
	/* NAME:BITS: a counter that wraps modulo 2^BITS */
	colon = memchr(p, ':', (size_t)(q - p));
	if (colon) {
		char *end;
		unsigned long b = strtoul(colon + 1, &end, 10);

		if (end != q || !isdigit((unsigned char)colon[1]) || b < 1 || b > 53) {
			seterr(err, errsize, "counter '%s': the width must be 1 to 53 bits", text);
			return -EINVAL;
		}
		bits = (unsigned int)b;
	}
	ne = colon ? colon : q;
	if (!valid_name(p, (size_t)(ne - p)) || (size_t)(ne - p) >= REC_NAME_MAX) {
		seterr(err, errsize, "counter '%s': expected 'NAME inc|dec|clear COND[; ...]' with NAME like [A-Za-z_][A-Za-z0-9_.]*",
		       text);
		return -EINVAL;
	}
	for (i = 0; i < e->names.n; i++) {
		if (strlen(e->tname[i]) == (size_t)(ne - p) && !strncmp(e->tname[i], p, (size_t)(ne - p))) {
			seterr(err, errsize, "counter '%s': the name is taken by a metric or counter", text);
			return -EINVAL;
		}
	}
	c = &e->cnt[e->ncounters];
	memset(c, 0, sizeof(*c));
	memcpy(c->name, p, (size_t)(ne - p));
	c->bits = bits;
	/* the counter's own name is visible in its rules */
	e->tname[e->ntracks] = c->name;
	e->names.n = e->ntracks + 1;
	dup = strdup(q);
	if (!dup)
		return -ENOMEM;
	for (rule = strtok_r(dup, ";", &save); rule; rule = strtok_r(NULL, ";", &save)) {
		char *r = rule, *w;
		char sub[256];

		while (isspace((unsigned char)*r))
			r++;
		w = r;
		while (*w && !isspace((unsigned char)*w))
			w++;
		if (c->nrules >= 3) {
			seterr(err, errsize, "counter '%s': at most 3 rules", c->name);
			ret = -EINVAL;
			break;
		}
		if (!strncmp(r, "inc", 3) && w - r == 3) {
			c->op[c->nrules] = REC_CNT_INC;
		} else if (!strncmp(r, "dec", 3) && w - r == 3) {
			c->op[c->nrules] = REC_CNT_DEC;
		} else if (!strncmp(r, "clear", 5) && w - r == 5) {
			c->op[c->nrules] = REC_CNT_CLEAR;
		} else if (!strncmp(r, "count", 5) && w - r == 5) {
			c->op[c->nrules] = REC_CNT_COUNT;
		} else {
			seterr(err, errsize, "counter rule '%s': expected inc, dec, clear or count and a condition or event", r);
			ret = -EINVAL;
			break;
		}
		if (c->op[c->nrules] == REC_CNT_COUNT) {
			char *a = w, *z;

			while (isspace((unsigned char)*a))
				a++;
			z = a + strlen(a);
			while (z > a && isspace((unsigned char)z[-1]))
				*--z = '\0';
			for (i = 0; i < e->nevents; i++)
				if (!strcmp(a, e->evname[i]))
					break;
			if (i == e->nevents) {
				if (err && errsize)
					snprintf(err, errsize, "counter %s, rule '%s': '%s' is not an event (--event NAME=...)",
						 c->name, r, a);
				ret = -EINVAL;
				break;
			}
			c->track[c->nrules++] = e->cfg.nmetrics + i;
			continue;
		}
		ret = rec_cond_parse(w, &e->names, &c->cond[c->nrules], sub, sizeof(sub));
		if (ret) {
			if (err && errsize)
				snprintf(err, errsize, "counter %s, rule '%s': %s", c->name, r, sub);
			break;
		}
		c->nrules++;
	}
	free(dup);
	if (!ret && !c->nrules) {
		seterr(err, errsize, "counter '%s': no rule", text);
		ret = -EINVAL;
	}
	if (ret) {
		for (i = 0; i < c->nrules; i++)
			rec_cond_free(c->cond[i]);
		e->names.n = e->ntracks;
		return ret;
	}
	e->ncounters++;
	e->ntracks++;
	return 0;
}

int rec_engine_add_event(struct rec_engine *e, const char *name, char *err, size_t errsize)
{
	size_t n = strlen(name);
	unsigned int i;

	if (e->nevents >= REC_MAX_EVENTS) {
		seterr(err, errsize, "more than 8 events%s", "");
		return -EINVAL;
	}
	if (e->ncounters || e->rv) {
		seterr(err, errsize, "event '%s': events come before the counters and the first sample",
		       name);
		return -EINVAL;
	}
	if (!valid_name(name, n) || n >= REC_NAME_MAX) {
		seterr(err, errsize, "event '%s': a NAME like [A-Za-z_][A-Za-z0-9_.]* expected", name);
		return -EINVAL;
	}
	for (i = 0; i < e->names.n; i++) {
		if (!strcmp(e->tname[i], name)) {
			seterr(err, errsize, "event '%s': the name is taken by a metric, event or counter",
			       name);
			return -EINVAL;
		}
	}
	memcpy(e->evname[e->nevents], name, n + 1);
	e->tname[e->ntracks] = e->evname[e->nevents];
	e->nevents++;
	e->ntracks++;
	e->names.n = e->ntracks;
	return 0;
}

static int pend(struct rec_engine *e, unsigned int ev, uint64_t t_ns, uint64_t count,
		enum rec_gap_kind kind)
{
	if (ev >= e->nevents)
		return -EINVAL;
	if (!count)
		return 0;
	if (e->npend == e->pendcap) {
		size_t cap = e->pendcap ? 2 * e->pendcap : 64;
		struct pending *p = realloc(e->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->pend = p;
		e->pendcap = cap;
	}
	e->pend[e->npend++] = (struct pending){ .t = t_ns, .n = count, .ev = ev, .kind = kind };
	return 0;
}

int rec_engine_event(struct rec_engine *e, unsigned int ev, uint64_t t_ns, uint64_t count)
{
	return pend(e, ev, t_ns, count, 0);
}

int rec_engine_event_gap(struct rec_engine *e, unsigned int ev, uint64_t t_ns,
			 enum rec_gap_kind kind, uint64_t count)
{
	if (kind != REC_GAP_LOST && kind != REC_GAP_THROTTLED)
		return -EINVAL;
	return pend(e, ev, t_ns, count, kind);
}

int rec_engine_set_trigger(struct rec_engine *e, const char *text, char *err, size_t errsize)
{
	struct rec_expr *x;
	int ret;

	ret = rec_cond_parse(text, &e->names, &x, err, errsize);
	if (ret)
		return ret;
	rec_cond_free(e->trigger);
	e->trigger = x;
	return 0;
}

int rec_action_parse(const char *text, struct rec_action *a, char *err, size_t errsize)
{
	char w1[16], w2[64], extra[2];
	int n;

	memset(a, 0, sizeof(*a));
	n = sscanf(text, " %15s %63s %1s", w1, w2, extra);
	if (n == 2 && !strcmp(w1, "period")) {
		if (rec_parse_duration(w2, &a->period_ns)) {
			seterr(err, errsize, "bad period '%s' (a number and ns, us, ms or s)", w2);
			return -EINVAL;
		}
		if (a->period_ns < REC_MIN_PERIOD_NS) {
			seterr(err, errsize, "period '%s' is below the minimum of 100us", w2);
			return -EINVAL;
		}
		a->kind = REC_ACT_PERIOD;
		return 0;
	}
	if (n == 2 && (!strcmp(w1, "enable") || !strcmp(w1, "disable")) &&
	    strlen(w2) < sizeof(a->set)) {
		a->kind = w1[0] == 'e' ? REC_ACT_ENABLE : REC_ACT_DISABLE;
		snprintf(a->set, sizeof(a->set), "%s", w2);
		return 0;
	}
	seterr(err, errsize, "bad action '%s': expected 'period DURATION', 'enable SET' or 'disable SET'",
	       text);
	return -EINVAL;
}

int rec_engine_add_feedback(struct rec_engine *e, const char *text, char *err, size_t errsize)
{
	const char *arrow = strstr(text, "=>");
	struct feedback *f;
	char cond[512], sub[256];
	size_t n;
	int ret;

	if (e->nfb >= REC_MAX_FEEDBACK) {
		seterr(err, errsize, "more than 8 feedback rules%s", "");
		return -EINVAL;
	}
	if (!arrow) {
		seterr(err, errsize, "feedback '%s': expected 'COND => ACTION'", text);
		return -EINVAL;
	}
	n = (size_t)(arrow - text);
	if (n >= sizeof(cond)) {
		seterr(err, errsize, "feedback '%s': condition too long", text);
		return -EINVAL;
	}
	memcpy(cond, text, n);
	cond[n] = '\0';
	f = &e->fb[e->nfb];
	memset(f, 0, sizeof(*f));
	ret = rec_action_parse(arrow + 2, &f->act, err, errsize);
	if (ret)
		return ret;
	ret = rec_cond_parse(cond, &e->names, &f->cond, sub, sizeof(sub));
	if (ret) {
		if (err && errsize)
			snprintf(err, errsize, "feedback condition '%s': %s", cond, sub);
		return ret;
	}
	e->nfb++;
	return 0;
}

int rec_engine_add_on_trigger(struct rec_engine *e, const char *text, char *err, size_t errsize)
{
	if (e->nontrig >= REC_MAX_FEEDBACK) {
		seterr(err, errsize, "more than 8 trigger actions%s", "");
		return -EINVAL;
	}
	if (rec_action_parse(text, &e->ontrig[e->nontrig], err, errsize))
		return -EINVAL;
	e->nontrig++;
	return 0;
}

static int alloc_ring(struct rec_engine *e)
{
	if (e->rv)
		return 0;
	e->re = calloc((size_t)(e->pre ? e->pre : 1) * (e->nevents ? e->nevents : 1), sizeof(*e->re));
	if (!e->re)
		return -ENOMEM;
	e->rv = calloc((size_t)(e->pre ? e->pre : 1) * (e->ntracks ? e->ntracks : 1), sizeof(*e->rv));
	return e->rv ? 0 : -ENOMEM;
}

static void add_act(struct rec_action *acts, unsigned int maxacts, unsigned int *nacts,
		    const struct rec_action *a)
{
	if (acts && *nacts < maxacts)
		acts[(*nacts)++] = *a;
}

static int note_act(struct rec_engine *e, const struct rec_sink *sink, uint64_t t,
		    const char *why, const struct rec_action *a)
{
	char buf[120];

	if (!sink->note)
		return 0;
	if (a->kind == REC_ACT_PERIOD)
		snprintf(buf, sizeof(buf), "%s: sample %llu: period %lluns", why,
			 (unsigned long long)e->index, (unsigned long long)a->period_ns);
	else
		snprintf(buf, sizeof(buf), "%s: sample %llu: %s %s", why,
			 (unsigned long long)e->index,
			 a->kind == REC_ACT_ENABLE ? "enable" : "disable", a->set);
	return sink->note(sink->ctx, t, buf);
}

/* this sample's events and their gaps: the pending ones at @t or before */
static void take_events(struct rec_engine *e, uint64_t t)
{
	size_t i, keep = 0;

	memset(e->ev, 0, sizeof(e->ev));
	for (i = 0; i < e->npend; i++) {
		struct pending *p = &e->pend[i];
		struct rec_evsum *s = &e->ev[p->ev];
		uint64_t *first = p->kind == REC_GAP_LOST ? &s->lost_t :
				  p->kind == REC_GAP_THROTTLED ? &s->thr_t : &s->first;
		uint64_t *n = p->kind == REC_GAP_LOST ? &s->lost :
			      p->kind == REC_GAP_THROTTLED ? &s->thr : &s->n;

		if (p->t > t) {
			e->pend[keep++] = *p;
			continue;
		}
		if (!*n || p->t < *first)
			*first = p->t;
		*n += p->n;
	}
	e->npend = keep;
}

static int end_shot(struct rec_engine *e, const struct rec_sink *sink)
{
	int ret = sink->shot_end ? sink->shot_end(sink->ctx, e->shot, e->shot_samples) : 0;

	if (ret)
		return ret;
	e->shots_done++;
	e->shot++;
	e->rhead = 0;
	e->rcount = 0;
	e->state = e->shots_done >= e->cfg.shots ? REC_DONE : REC_ARMED;
	return 0;
}

int rec_engine_gap(struct rec_engine *e, uint64_t t_ns, enum rec_gap_kind kind, uint64_t count)
{
	uint64_t *t = kind == REC_GAP_LATE ? &e->gap.late_t : &e->gap.stale_t;
	uint64_t *n = kind == REC_GAP_LATE ? &e->gap.late : &e->gap.stale;

	/* an event's gaps go through rec_engine_event_gap (with the track) */
	if (kind != REC_GAP_LATE && kind != REC_GAP_STALE)
		return -EINVAL;
	if (!count)
		return 0;
	if (!*n)
		*t = t_ns;
	*n += count;
	return 0;
}

/* one sample to the sink, after the period it was taken at if that changed
 * and the gaps just before it
 */
static int put_sample(struct rec_engine *e, const struct rec_sink *sink, uint64_t t,
		      uint64_t period, const struct rec_gaps *g, const struct rec_evsum *ev,
		      const double *vals)
{
	unsigned int i;
	int ret;

	if (g->late && sink->gap) {
		ret = sink->gap(sink->ctx, g->late_t, REC_GAP_LATE, g->late);
		if (ret)
			return ret;
	}
	if (g->stale && sink->gap) {
		ret = sink->gap(sink->ctx, g->stale_t, REC_GAP_STALE, g->stale);
		if (ret)
			return ret;
	}

	for (i = 0; i < e->nevents && sink->event_gap; i++) {
		if (ev[i].lost) {
			ret = sink->event_gap(sink->ctx, ev[i].lost_t, REC_GAP_LOST,
					      e->cfg.nmetrics + i, ev[i].lost);
			if (ret)
				return ret;
		}
		if (ev[i].thr) {
			ret = sink->event_gap(sink->ctx, ev[i].thr_t, REC_GAP_THROTTLED,
					      e->cfg.nmetrics + i, ev[i].thr);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < e->nevents && sink->event; i++) {
		if (!ev[i].n)
			continue;
		ret = sink->event(sink->ctx, ev[i].first, e->cfg.nmetrics + i, ev[i].n);
		if (ret)
			return ret;
	}
	if (period != e->told && sink->period) {
		ret = sink->period(sink->ctx, period);
		if (ret)
			return ret;
		e->told = period;
	}
	return sink->sample(sink->ctx, t, vals);
}

/* a 'period' action among those this sample ran: the next sample's period */
static void take_period(struct rec_engine *e, const struct rec_action *a)
{
	if (a->kind == REC_ACT_PERIOD)
		e->period = a->period_ns;
}

/* write the ring, oldest first, after a shot record */
static int flush_ring(struct rec_engine *e, const struct rec_sink *sink, enum rec_cause cause,
		      uint64_t trig_t)
{
	unsigned int i, first;
	int ret;

	ret = sink->shot_begin ? sink->shot_begin(sink->ctx, e->shot, cause, e->rcount, trig_t) : 0;
	if (ret)
		return ret;
	first = (e->rhead + e->pre - e->rcount) % (e->pre ? e->pre : 1);
	for (i = 0; i < e->rcount; i++) {
		unsigned int k = (first + i) % e->pre;

		ret = put_sample(e, sink, e->rt[k], e->rp[k], &e->rg[k],
				 &e->re[(size_t)k * e->nevents], &e->rv[(size_t)k * e->ntracks]);
		if (ret)
			return ret;
	}
	e->shot_samples = e->rcount;
	return 0;
}

int rec_engine_push(struct rec_engine *e, uint64_t t_ns, const double *vals,
		    enum rec_cause ext, struct rec_action *acts, unsigned int maxacts,
		    unsigned int *nacts, const struct rec_sink *sink)
{
	unsigned int i, k, m = e->cfg.nmetrics;
	bool fire = false;
	enum rec_cause cause = REC_CAUSE_NONE;
	uint64_t period = e->period;	/* this sample's; actions set the next's */
	struct rec_gaps gap = e->gap;	/* just before this sample */
	int ret;

	if (nacts)
		*nacts = 0;
	ret = alloc_ring(e);
	if (ret)
		return ret;
	if (e->state == REC_DONE)
		return REC_DONE;
	memset(&e->gap, 0, sizeof(e->gap));
	memcpy(e->cur, vals, m * sizeof(*vals));
	take_events(e, t_ns);
	for (i = 0; i < e->nevents; i++)
		e->cur[m + i] = (double)e->ev[i].n;
	m += e->nevents;	/* the counters' tracks follow the events' */
	for (i = 0; i < e->ncounters; i++)
		e->cur[m + i] = e->cnt[i].value;
	for (i = 0; i < e->ncounters; i++) {
		struct rec_counter *c = &e->cnt[i];

		for (k = 0; k < c->nrules; k++) {
			if (c->op[k] == REC_CNT_COUNT) {
				c->value += e->cur[c->track[k]];
			} else if (!rec_cond_eval(c->cond[k], e->cur, t_ns)) {
				continue;
			} else if (c->op[k] == REC_CNT_INC) {
				c->value += 1;
			} else if (c->op[k] == REC_CNT_DEC) {
				c->value -= 1;
			} else {
				c->value = 0;
			}
			/* a BITS-wide counter wraps: 2^BITS - 1 + 1 is 0, 0 - 1 is
			 * 2^BITS - 1, and a count adds modulo 2^BITS
			 */
			if (c->bits) {
				double mod = ldexp(1, (int)c->bits);

				c->value = fmod(c->value, mod);
				if (c->value < 0)
					c->value += mod;
			}
			e->cur[m + i] = c->value;
		}
	}
	for (i = 0; i < e->nfb; i++) {
		bool now = rec_cond_eval(e->fb[i].cond, e->cur, t_ns);

		if (now && !e->fb[i].was) {
			add_act(acts, maxacts, nacts, &e->fb[i].act);
			take_period(e, &e->fb[i].act);
			ret = note_act(e, sink, t_ns, "feedback", &e->fb[i].act);
			if (ret)
				return ret;
		}
		e->fb[i].was = now;
	}
	if (e->trigger) {
		bool now = rec_cond_eval(e->trigger, e->cur, t_ns);

		if (now && !e->trig_was && e->state == REC_ARMED) {
			fire = true;
			cause = REC_CAUSE_EXPR;
		}
		e->trig_was = now;
	}
	if (!fire && ext != REC_CAUSE_NONE && e->state == REC_ARMED) {
		fire = true;
		cause = ext;
	}
	if (e->state == REC_ARMED && !fire) {
		if (e->pre) {
			e->rt[e->rhead] = t_ns;
			e->rp[e->rhead] = period;
			e->rg[e->rhead] = gap;
			memcpy(&e->re[(size_t)e->rhead * e->nevents], e->ev,
			       e->nevents * sizeof(*e->ev));
			memcpy(&e->rv[(size_t)e->rhead * e->ntracks], e->cur,
			       e->ntracks * sizeof(*e->cur));
			e->rhead = (e->rhead + 1) % e->pre;
			if (e->rcount < e->pre)
				e->rcount++;
			if (sink->ring) {
				ret = sink->ring(sink->ctx, t_ns, period, &gap, e->ev, e->nevents,
						 e->cur);
				if (ret)
					return ret;
			}
		}
		e->index++;
		return REC_ARMED;
	}
	if (fire) {
		ret = flush_ring(e, sink, cause, t_ns);
		if (ret)
			return ret;
		e->post_left = e->cfg.capacity - e->pre;	/* the trigger sample and after */
		e->state = REC_POST;
		for (i = 0; i < e->nontrig; i++) {
			add_act(acts, maxacts, nacts, &e->ontrig[i]);
			take_period(e, &e->ontrig[i]);
			ret = note_act(e, sink, t_ns, "trigger", &e->ontrig[i]);
			if (ret)
				return ret;
		}
	}
	ret = put_sample(e, sink, t_ns, period, &gap, e->ev, e->cur);
	if (ret)
		return ret;
	e->index++;
	e->shot_samples++;
	if (--e->post_left == 0) {
		ret = end_shot(e, sink);
		if (ret)
			return ret;
	}
	return (int)e->state;
}

int rec_engine_finish(struct rec_engine *e, const struct rec_sink *sink)
{
	int ret;

	if (e->state == REC_DONE)
		return 0;
	if (e->state == REC_ARMED) {
		if (!e->rcount)
			return 0;
		ret = flush_ring(e, sink, REC_CAUSE_NONE, 0);
		if (ret)
			return ret;
	}
	ret = end_shot(e, sink);
	e->state = REC_DONE;
	return ret;
}
