// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: GPU power attribution from the Mali Utgard internal-profiling
 * event stream. The rules (pairing, DVFS, anomalies) are those of
 * Documentation/userspace-api/hwtel.rst, "GPU power attribution".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libhwtel/gpu.h>

#include "internal.h"

__extension__ typedef unsigned __int128 u128;

/* Energy is accumulated in ns x uV^2 x Hz: one uPJ is 266e6 Hz x (1e6 uV)^2 x 1e9 ns / 1e6 */
#define UPJ_RAW		((u128)266000000u * 1000000000000ull * 1000u)
/* A DVFS value of this or more is in Hz or uV, below in MHz or mV (no GPU
 * runs at 100 GHz or 100 V, nor below 0.1 MHz or 0.1 V) */
#define HZ_UV_MIN	100000u

static const char *const unit_names[HWTEL_GPU_MALI_UNITS] = {
	"GP0", "PP0", "PP1", "PP2", "PP3", "PP4", "PP5", "PP6", "PP7",
};

const char *hwtel_gpu_unit_name(unsigned int unit)
{
	return unit < HWTEL_GPU_MALI_UNITS ? unit_names[unit] : "?";
}

int hwtel_gpu_channel_unit(unsigned int channel)
{
	if (channel == HWTEL_GPU_CH_GP0)
		return 0;
	if (channel >= HWTEL_GPU_CH_PP0 && channel < HWTEL_GPU_CH_PP0 + 8)
		return (int)(channel - HWTEL_GPU_CH_PP0) + 1;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Parser                                                             */
/* ------------------------------------------------------------------ */

int hwtel_gpu_parse_line(const char *s, struct hwtel_gpu_event *ev,
			 char *why, size_t whylen)
{
	uint64_t v[7];
	unsigned int n = 0;
	const char *p = s;

	hwtel_clear_error();
	for (;;) {
		uint64_t x = 0;
		unsigned int digits = 0;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		if (!isdigit((unsigned char)*p)) {
			snprintf(why, whylen, "not a decimal number at column %u",
				 (unsigned int)(p - s) + 1);
			return -EINVAL;
		}
		while (isdigit((unsigned char)*p)) {
			unsigned int dg = (unsigned int)(*p - '0');

			if (x > (UINT64_MAX - dg) / 10) {
				snprintf(why, whylen, "number %u does not fit 64 bits", n + 1);
				return -EINVAL;
			}
			x = x * 10 + dg;
			digits++;
			p++;
		}
		if (*p && *p != ' ' && *p != '\t' && *p != '\r') {
			snprintf(why, whylen, "not a decimal number at column %u",
				 (unsigned int)(p - s) + 1);
			return -EINVAL;
		}
		if (n == 7) {
			snprintf(why, whylen, "more than 7 numbers");
			return -EINVAL;
		}
		v[n++] = x;
	}
	if (n != 7) {
		snprintf(why, whylen, "%u of 7 numbers (truncated line?)", n);
		return -EINVAL;
	}
	for (n = 1; n < 7; n++) {
		if (v[n] > UINT32_MAX) {
			snprintf(why, whylen, "%s %" PRIu64 " does not fit 32 bits",
				 n == 1 ? "event id" : "data value", v[n]);
			return -EINVAL;
		}
	}
	if (v[1] >> 28) {
		snprintf(why, whylen, "event id %" PRIu64 " has reserved bits 31-28 set", v[1]);
		return -EINVAL;
	}
	ev->ts_ns = v[0];
	ev->id = (uint32_t)v[1];
	for (n = 0; n < 5; n++)
		ev->d[n] = (uint32_t)v[n + 2];
	return 0;
}

int hwtel_gpu_opp_load(const char *path, struct hwtel_gpu_opp **out)
{
	FILE *f = fopen(path, "r");
	struct hwtel_gpu_opp *t = NULL;
	char line[256];
	int n = 0, ln = 0;

	hwtel_clear_error();
	*out = NULL;
	if (!f)
		return hwtel_err(-errno, "cannot open the OPP table %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long mhz, mv;
		char *p = line, *end;
		void *nt;

		ln++;
		p[strcspn(p, "#\n")] = '\0';
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		errno = 0;
		mhz = strtoul(p, &end, 10);
		if (end == p || !isspace((unsigned char)*end))
			goto bad;
		p = end;
		mv = strtoul(p, &end, 10);
		if (end == p || errno || mhz == 0 || mv == 0 || mhz > UINT32_MAX || mv > UINT32_MAX)
			goto bad;
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			goto bad;
		nt = realloc(t, (size_t)(n + 1) * sizeof(*t));
		if (!nt) {
			free(t);
			fclose(f);
			return hwtel_err(-ENOMEM, "out of memory");
		}
		t = nt;
		t[n].mhz = (uint32_t)mhz;
		t[n].mv = (uint32_t)mv;
		n++;
	}
	fclose(f);
	if (!n)
		return hwtel_err(-EINVAL, "the OPP table %s has no entries", path);
	*out = t;
	return n;
bad:
	fclose(f);
	free(t);
	return hwtel_err(-EINVAL, "%s:%d: expected \"MHZ MV\" (two positive decimal numbers)",
			 path, ln);
}

/* ------------------------------------------------------------------ */
/* Engine                                                             */
/* ------------------------------------------------------------------ */

enum { SET_IVL, SET_CUM, NSETS };

struct acc {
	uint64_t busy[HWTEL_GPU_MALI_UNITS];
	uint64_t jobs[HWTEL_GPU_MALI_UNITS];
	uint64_t unpriced_ns;
	uint64_t carried_ns;	/* priced with a value carried over a lone half */
	u128 raw;
};

struct life {
	int pid;
	int next;		/* the PID's next life (index), -1: none */
	uint64_t start, end;
	char comm[32];
	char cmdline[256];
};

struct cons {
	int pid;
	int next;		/* the PID's next consumer (index), -1: none */
	int life;		/* index into lives, -1: none known */
	uint64_t first;		/* START of its first job */
	bool pin;		/* a unit runs or queues a job of it */
	struct acc a[NSETS];
	/* while life < 0: the name read from /proc, for the life found later */
	char comm[32];
	char cmdline[256];
};

/*
 * Per PID with a life or consumer kept: its lives and consumers (chains
 * through next), and how many of its lives were folded while others were
 * kept, for the life numbers of those. Without it, each life handed and
 * each job looked through all lives or consumers: quadratic in the
 * processes of an interval. An entry is freed with its PID's last life or
 * consumer (pids_prune()): the table follows the processes kept, not the
 * PIDs ever seen (up to pid_max, 4M on a 64-bit host).
 */
struct pid_ent {
	int pid;
	bool used;		/* false: a free slot */
	unsigned int folded;
	int life, cons;		/* first of each chain, -1: none */
};

/* Job time after a record gap, billed only when the job's STOP is seen */
struct pending {
	uint64_t busy, unpriced_ns, carried_ns;
	u128 raw;
};

/* Jobs a unit holds behind the running one (a bound of hwtel, not the GPU's) */
#define QUEUE_MAX	8

struct queued {
	unsigned int cons;
	unsigned long line;	/* of the START */
};

struct unit_state {
	bool open;
	unsigned int cons;
	uint64_t seg;		/* start of the part not yet accounted */
	unsigned long line;	/* of the START */
	bool gap;		/* running at the last record gap, no STOP seen since */
	struct pending pend;	/* the job's time since the gap */
	struct queued q[QUEUE_MAX];	/* started while it runs, in START order */
	unsigned int nq;
	bool fresh;		/* no START or STOP since the last record gap */
};

enum half { HALF_NONE, HALF_FREQ, HALF_VOLT };

struct hwtel_gpu {
	FILE *diag;
	char prefix[64];
	struct hwtel_gpu_opp *table;
	unsigned int ntable;

	bool f_known, v_known;
	uint64_t hz, uv;
	enum half pend;		/* a lone half, waiting for the other one */
	bool carried;		/* the other value of that half is the old one */
	bool first_known;
	uint64_t first_hz, first_uv;

	struct life *lives;
	unsigned int nlives, lives_cap;
	struct cons *cons;
	unsigned int ncons, cons_cap;
	/* the lives that ended and were reported, per name (fold_ended()) */
	struct hwtel_gpu_fold *fold;
	unsigned int nfold;
	struct pid_ent *pids;	/* open addressing, size npids_cap (a power of 2) */
	unsigned int npids, npids_cap;

	struct unit_state unit[HWTEL_GPU_MALI_UNITS];
	struct acc total[NSETS];

	struct hwtel_gpu_event *ev;
	size_t nev, cap;
	unsigned long line;
	uint64_t prev_line_ts;	/* timestamp of the previous parsed line */
	unsigned long prev_line;
	uint64_t now;		/* time processed up to */
	uint64_t t0, cum_t0;
	bool begun;

	unsigned long buffer_events;	/* the driver's buffer, 0: unknown */

	struct hwtel_gpu_report rep[NSETS];
	unsigned long cnt[NSETS][16];
	uint64_t unbilled[NSETS][HWTEL_GPU_MALI_UNITS];
	/* the reports' per-unit totals */
	uint64_t rbusy[NSETS][HWTEL_GPU_MALI_UNITS], rjobs[NSETS][HWTEL_GPU_MALI_UNITS];
	uint64_t runbilled[NSETS][HWTEL_GPU_MALI_UNITS];
	uint64_t overflow_ns[NSETS];
};

/* indices of cnt[] = report counters in their order */
enum { C_LINES, C_MALFORMED, C_OOO, C_STOP, C_START, C_OPEN, C_IGN, C_DVFS, C_LOST_STOP,
       C_LOST_START, C_OVERFLOW };

static void diag(struct hwtel_gpu *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void diag(struct hwtel_gpu *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hwtel_vdiag(g->diag, g->prefix, fmt, ap);
	va_end(ap);
}

static void count(struct hwtel_gpu *g, unsigned int c)
{
	g->cnt[SET_IVL][c]++;
	g->cnt[SET_CUM][c]++;
}

struct hwtel_gpu *hwtel_gpu_new(void)
{
	struct hwtel_gpu *g = calloc(1, sizeof(*g));

	hwtel_clear_error();
	if (g)
		snprintf(g->prefix, sizeof(g->prefix), "hwtel: gpu: ");
	return g;
}

void hwtel_gpu_free(struct hwtel_gpu *g)
{
	unsigned int i;

	if (!g)
		return;
	for (i = 0; i < NSETS; i++) {
		free(g->rep[i].consumers);
		free(g->rep[i].exited);
	}
	free(g->table);
	free(g->lives);
	free(g->cons);
	hwtel_gpu_fold_free(g->fold, g->nfold);
	free(g->pids);
	free(g->ev);
	free(g);
}

int hwtel_gpu_set_opp_table(struct hwtel_gpu *g, const struct hwtel_gpu_opp *t,
			    unsigned int n)
{
	struct hwtel_gpu_opp *c = NULL;

	hwtel_clear_error();
	if (n) {
		c = malloc(n * sizeof(*c));
		if (!c)
			return hwtel_err(-ENOMEM, "out of memory");
		memcpy(c, t, n * sizeof(*c));
	}
	free(g->table);
	g->table = c;
	g->ntable = n;
	return 0;
}

static void note_known(struct hwtel_gpu *g)
{
	if (g->f_known && g->v_known && !g->first_known) {
		g->first_known = true;
		g->first_hz = g->hz;
		g->first_uv = g->uv;
	}
}

void hwtel_gpu_set_initial_opp(struct hwtel_gpu *g, uint32_t mhz, uint32_t mv)
{
	g->f_known = g->v_known = true;
	g->hz = (uint64_t)mhz * 1000000u;
	g->uv = (uint64_t)mv * 1000u;
	note_known(g);
}

void hwtel_gpu_set_buffer_events(struct hwtel_gpu *g, unsigned long n)
{
	g->buffer_events = n;
}

void hwtel_gpu_set_diag(struct hwtel_gpu *g, FILE *f, const char *prefix)
{
	g->diag = f;
	snprintf(g->prefix, sizeof(g->prefix), "%s", prefix ? prefix : "");
}

static unsigned int pid_slot(const struct hwtel_gpu *g, int pid)
{
	unsigned int i = ((unsigned int)pid * 2654435761u) & (g->npids_cap - 1);

	while (g->pids[i].used && g->pids[i].pid != pid)
		i = (i + 1) & (g->npids_cap - 1);
	return i;
}

/* The entry of @pid, NULL if none */
static struct pid_ent *pid_find(const struct hwtel_gpu *g, int pid)
{
	struct pid_ent *e;

	if (!g->npids_cap)
		return NULL;
	e = &g->pids[pid_slot(g, pid)];
	return e->used ? e : NULL;
}

/* The entry of @pid, a new one if needed; NULL on ENOMEM. Moves the others. */
static struct pid_ent *pid_get(struct hwtel_gpu *g, int pid)
{
	struct pid_ent *e = pid_find(g, pid);
	unsigned int i;

	if (e)
		return e;
	if (2 * (g->npids + 1) > g->npids_cap) {
		struct pid_ent *old = g->pids;
		unsigned int ocap = g->npids_cap, nc = ocap ? 2 * ocap : 256;

		g->pids = calloc(nc, sizeof(*g->pids));
		if (!g->pids) {
			g->pids = old;
			return NULL;
		}
		g->npids_cap = nc;
		for (i = 0; i < ocap; i++)
			if (old[i].used)
				g->pids[pid_slot(g, old[i].pid)] = old[i];
		free(old);
	}
	e = &g->pids[pid_slot(g, pid)];
	e->used = true;
	e->pid = pid;
	e->folded = 0;
	e->life = e->cons = -1;
	g->npids++;
	return e;
}

static int find_life(const struct hwtel_gpu *g, int pid, uint64_t ts);

/*
 * Jobs of @pid seen while no life of it was known (a process older than the
 * capture, whose first process event came later) belong to the life that
 * contains them: one consumer, not a second one for the jobs after.
 */
static void adopt_life(struct hwtel_gpu *g, int pid)
{
	const struct pid_ent *e = pid_find(g, pid);
	int i, j;

	for (i = e ? e->cons : -1; i >= 0; i = g->cons[i].next) {
		struct cons *c = &g->cons[i];
		int l;

		if (c->life >= 0)
			continue;
		l = find_life(g, pid, c->first);
		if (l < 0 || g->lives[l].start > c->first)
			continue;	/* a life before any known one */
		/* a consumer of that life exists only if it was known before */
		for (j = e->cons; j >= 0; j = g->cons[j].next)
			if (g->cons[j].life == l)
				break;
		if (j < 0) {
			struct life *lf = &g->lives[l];

			c->life = l;
			/* its exit read after it was reaped: the name it had */
			if (!lf->comm[0])
				memcpy(lf->comm, c->comm, sizeof(lf->comm));
			if (!lf->cmdline[0])
				memcpy(lf->cmdline, c->cmdline, sizeof(lf->cmdline));
		}
	}
}

/* After a burst: give back most of a capacity 4 times what is used */
static void shrink(void **arr, unsigned int n, unsigned int *cap, size_t size)
{
	unsigned int nc = 2 * n > 64 ? 2 * n : 64;
	void *p;

	if (*cap <= 4 * nc)
		return;
	p = realloc(*arr, (size_t)nc * size);
	if (p) {
		*arr = p;
		*cap = nc;
	}
}

/* Room for one more element in @*arr of @n, capacity @*cap; false on ENOMEM */
static bool room(void **arr, unsigned int n, unsigned int *cap, size_t size)
{
	unsigned int nc;
	void *p;

	if (n < *cap)
		return true;
	nc = *cap ? 2 * *cap : 64;
	p = realloc(*arr, (size_t)nc * size);
	if (!p)
		return false;
	*arr = p;
	*cap = nc;
	return true;
}

int hwtel_gpu_add_life(struct hwtel_gpu *g, int pid, uint64_t start_ns,
		       uint64_t end_ns, const char *comm, const char *cmdline)
{
	struct pid_ent *e;
	struct life *l = NULL;
	int i;

	hwtel_clear_error();
	e = pid_get(g, pid);
	if (!e)
		return hwtel_err(-ENOMEM, "out of memory");
	for (i = e->life; i >= 0 && !l; i = g->lives[i].next)
		if (g->lives[i].start == start_ns)
			l = &g->lives[i];
	if (!l) {
		if (!room((void **)&g->lives, g->nlives, &g->lives_cap, sizeof(*g->lives)))
			return hwtel_err(-ENOMEM, "out of memory");
		l = &g->lives[g->nlives];
		memset(l, 0, sizeof(*l));
		l->pid = pid;
		l->start = start_ns;
		l->next = e->life;
		e->life = (int)g->nlives++;
	}
	l->end = end_ns;
	if (comm && *comm)
		snprintf(l->comm, sizeof(l->comm), "%s", comm);
	if (cmdline && *cmdline)
		snprintf(l->cmdline, sizeof(l->cmdline), "%s", cmdline);
	adopt_life(g, pid);
	return 0;
}

void hwtel_gpu_begin(struct hwtel_gpu *g, uint64_t t0_ns)
{
	/* events of the first batch may predate t0 (recording started first) */
	g->t0 = g->cum_t0 = t0_ns;
	g->now = 0;
	g->begun = true;
}

int hwtel_gpu_feed(struct hwtel_gpu *g, const char *buf, size_t len)
{
	size_t i = 0;

	hwtel_clear_error();
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (buf + i)) : len - i;
		struct hwtel_gpu_event ev;
		char line[160], why[96];

		g->line++;
		count(g, C_LINES);
		if (l >= sizeof(line)) {
			diag(g, "line %lu: malformed (longer than %zu characters), skipped",
			     g->line, sizeof(line) - 1);
			count(g, C_MALFORMED);
		} else {
			memcpy(line, buf + i, l);
			line[l] = '\0';
			if (memchr(line, '\0', l)) {
				diag(g, "line %lu: malformed (NUL byte), skipped", g->line);
				count(g, C_MALFORMED);
			} else if (hwtel_gpu_parse_line(line, &ev, why, sizeof(why))) {
				diag(g, "line %lu: malformed (%s), skipped", g->line, why);
				count(g, C_MALFORMED);
			} else {
				ev.line = g->line;
				if (g->prev_line && ev.ts_ns < g->prev_line_ts) {
					diag(g, "line %lu: timestamp %" PRIu64 " is %" PRIu64
					     " ns before that of line %lu: processed in timestamp order",
					     g->line, ev.ts_ns, g->prev_line_ts - ev.ts_ns,
					     g->prev_line);
					count(g, C_OOO);
				}
				g->prev_line_ts = ev.ts_ns;
				g->prev_line = g->line;
				if (g->nev == g->cap) {
					size_t nc = g->cap ? 2 * g->cap : 256;
					void *n = realloc(g->ev, nc * sizeof(*g->ev));

					if (!n)
						return hwtel_err(-ENOMEM, "out of memory");
					g->ev = n;
					g->cap = nc;
				}
				g->ev[g->nev++] = ev;
			}
		}
		i += l + 1;
	}
	return 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct hwtel_gpu_event *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int find_life(const struct hwtel_gpu *g, int pid, uint64_t ts)
{
	const struct pid_ent *e = pid_find(g, pid);
	int best = -1, i;

	/* the latest life that began at or before ts; else the earliest one */
	for (i = e ? e->life : -1; i >= 0; i = g->lives[i].next) {
		const struct life *l = &g->lives[i];

		if (l->start <= ts) {
			if (best < 0 || g->lives[best].start > ts || l->start > g->lives[best].start)
				best = (int)i;
		} else if (best < 0 || (g->lives[best].start > ts && l->start < g->lives[best].start)) {
			best = (int)i;
		}
	}
	return best;
}

static int get_cons(struct hwtel_gpu *g, int pid, uint64_t ts, unsigned int *out)
{
	int life = find_life(g, pid, ts), i;
	struct pid_ent *e = pid_get(g, pid);

	if (!e)
		return hwtel_err(-ENOMEM, "out of memory");
	for (i = e->cons; i >= 0; i = g->cons[i].next) {
		if (g->cons[i].life == life) {
			*out = (unsigned int)i;
			return 0;
		}
	}
	if (!room((void **)&g->cons, g->ncons, &g->cons_cap, sizeof(*g->cons)))
		return hwtel_err(-ENOMEM, "out of memory");
	memset(&g->cons[g->ncons], 0, sizeof(*g->cons));
	g->cons[g->ncons].pid = pid;
	g->cons[g->ncons].life = life;
	g->cons[g->ncons].first = ts;
	g->cons[g->ncons].next = e->cons;
	e->cons = (int)g->ncons;
	*out = g->ncons++;
	return 0;
}

/* Account the running part of @unit's job up to @ts at the current point */
static void account(struct hwtel_gpu *g, unsigned int unit, uint64_t ts)
{
	struct unit_state *u = &g->unit[unit];
	struct cons *c = &g->cons[u->cons];
	uint64_t dt = ts > u->seg ? ts - u->seg : 0;
	unsigned int s;

	u->seg = ts;
	if (!dt)
		return;
	if (u->gap) {
		/* after a record gap: billed only if its STOP comes */
		u->pend.busy += dt;
		if (g->f_known && g->v_known) {
			u->pend.raw += (u128)dt * g->uv * g->uv * g->hz;
			if (g->carried)
				u->pend.carried_ns += dt;
		} else {
			u->pend.unpriced_ns += dt;
		}
		return;
	}
	for (s = 0; s < NSETS; s++) {
		struct acc *as[2] = { &c->a[s], &g->total[s] };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			as[k]->busy[unit] += dt;
			if (g->f_known && g->v_known) {
				as[k]->raw += (u128)dt * g->uv * g->uv * g->hz;
				if (g->carried)
					as[k]->carried_ns += dt;
			} else {
				as[k]->unpriced_ns += dt;
			}
		}
	}
}

static void account_all(struct hwtel_gpu *g, uint64_t ts)
{
	unsigned int i;

	for (i = 0; i < HWTEL_GPU_MALI_UNITS; i++)
		if (g->unit[i].open)
			account(g, i, ts);
}

/* The STOP of a job that ran across a record gap: its time since the gap is known */
static void gap_confirm(struct hwtel_gpu *g, unsigned int unit)
{
	struct unit_state *u = &g->unit[unit];
	struct cons *c = &g->cons[u->cons];
	unsigned int s;

	for (s = 0; s < NSETS; s++) {
		struct acc *as[2] = { &c->a[s], &g->total[s] };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			as[k]->busy[unit] += u->pend.busy;
			as[k]->raw += u->pend.raw;
			as[k]->unpriced_ns += u->pend.unpriced_ns;
			as[k]->carried_ns += u->pend.carried_ns;
		}
	}
	memset(&u->pend, 0, sizeof(u->pend));
	u->gap = false;
}

/*
 * A job running at a record gap whose STOP did not come after it (a START on
 * its unit came first, or the next recording ended): the STOP was lost. The
 * job is closed at the gap; its time after the gap is not billed.
 */
static void gap_cut(struct hwtel_gpu *g, unsigned int unit, unsigned long line)
{
	struct unit_state *u = &g->unit[unit];
	unsigned int s, i;

	if (line)
		diag(g, "line %lu: START on %s: the job of PID %d (line %lu) running at the record gap had no STOP: closed at the gap, %.3f ms after it not billed",
		     line, unit_names[unit], g->cons[u->cons].pid, u->line,
		     (double)u->pend.busy / 1e6);
	else
		diag(g, "the job of PID %d on %s (line %lu) running at the record gap had no STOP in the next recording: closed at the gap, %.3f ms after it not billed",
		     g->cons[u->cons].pid, unit_names[unit], u->line, (double)u->pend.busy / 1e6);
	count(g, C_LOST_STOP);
	/* the jobs queued behind it never ran for all we know: their STOPs are lost too */
	for (i = 0; i < u->nq; i++) {
		diag(g, "the job of PID %d queued on %s (line %lu) at the record gap had no STOP: not billed",
		     g->cons[u->q[i].cons].pid, unit_names[unit], u->q[i].line);
		count(g, C_LOST_STOP);
	}
	u->nq = 0;
	for (s = 0; s < NSETS; s++)
		g->unbilled[s][unit] += u->pend.busy;
	memset(&u->pend, 0, sizeof(u->pend));
	u->gap = false;
	u->open = false;
}

/* A new operating point from @ts on (Hz, uV); @f/@v NULL = that value unchanged */
static void set_opp(struct hwtel_gpu *g, uint64_t ts, const uint64_t *f, const uint64_t *v)
{
	bool same = (!f || (g->f_known && g->hz == *f)) && (!v || (g->v_known && g->uv == *v));

	if (same)
		return;
	account_all(g, ts);
	if (f) {
		g->hz = *f;
		g->f_known = true;
	}
	if (v) {
		g->uv = *v;
		g->v_known = true;
	}
	count(g, C_DVFS);
	note_known(g);
}

static void set_carried(struct hwtel_gpu *g, uint64_t ts, bool carried)
{
	if (g->carried != carried)
		account_all(g, ts);
	g->carried = carried;
}

static int table_by_freq(const struct hwtel_gpu *g, uint64_t hz)
{
	unsigned int i;

	for (i = 0; i < g->ntable; i++)
		if ((uint64_t)g->table[i].mhz * 1000000u == hz)
			return (int)i;
	return -1;
}

static int table_by_volt(const struct hwtel_gpu *g, uint64_t uv)
{
	int found = -1;
	unsigned int i;

	for (i = 0; i < g->ntable; i++) {
		if ((uint64_t)g->table[i].mv * 1000u == uv) {
			if (found >= 0)
				return -2;	/* ambiguous */
			found = (int)i;
		}
	}
	return found;
}

/*
 * A SOFTWARE frequency or voltage event takes effect at once (the seed's
 * rule): the other value comes from the OPP table, else it stays the one
 * in force, "carried" until the other half of the change comes (which may
 * repeat the value in force). A repeat of the value in force (requested,
 * then actual) changes nothing else.
 */
/* A DVFS value in Hz (uV), from Hz or MHz (uV or mV) by its magnitude */
static uint64_t dvfs_value(uint32_t v, uint64_t scale)
{
	return v >= HZ_UV_MIN ? v : v * scale;
}

static void dvfs_half(struct hwtel_gpu *g, const struct hwtel_gpu_event *e, enum half kind)
{
	bool freq = kind == HALF_FREQ;
	uint64_t val = dvfs_value(e->d[0], freq ? 1000000u : 1000u);
	int t = -1;

	if (freq ? g->f_known && g->hz == val : g->v_known && g->uv == val) {
		/* a repeat, or the other half of a change confirming the value in force */
		if (g->pend != HALF_NONE && g->pend != kind) {
			g->pend = HALF_NONE;
			set_carried(g, e->ts_ns, false);
		}
		return;
	}
	if (g->ntable) {
		t = freq ? table_by_freq(g, val) : table_by_volt(g, val);
		if (t < 0)
			diag(g, "line %lu: %s %u %s is %s in the OPP table: the %s in force is kept",
			     e->line, freq ? "frequency" : "voltage", e->d[0],
			     e->d[0] >= HZ_UV_MIN ? (freq ? "Hz" : "uV") : (freq ? "MHz" : "mV"),
			     t == -2 ? "ambiguous" : "not", freq ? "voltage" : "frequency");
	}
	if (t >= 0) {
		uint64_t f = (uint64_t)g->table[t].mhz * 1000000u, v = (uint64_t)g->table[t].mv * 1000u;

		set_opp(g, e->ts_ns, &f, &v);
		g->pend = HALF_NONE;
	} else {
		set_opp(g, e->ts_ns, freq ? &val : NULL, freq ? NULL : &val);
		/* the second half of a change, or the first */
		g->pend = g->pend != HALF_NONE && g->pend != kind ? HALF_NONE : kind;
	}
	set_carried(g, e->ts_ns, g->pend != HALF_NONE);
}

static int process(struct hwtel_gpu *g, const struct hwtel_gpu_event *e)
{
	unsigned int type = HWTEL_GPU_ID_TYPE(e->id), ch = HWTEL_GPU_ID_CHANNEL(e->id);
	unsigned int data = HWTEL_GPU_ID_DATA(e->id);
	int unit = hwtel_gpu_channel_unit(ch);
	struct unit_state *u = unit >= 0 ? &g->unit[unit] : NULL;
	uint64_t ts = e->ts_ns, f, v;
	bool fresh = false;
	int ret;

	if (ts < g->now) {
		diag(g, "line %lu: timestamp %" PRIu64 " is before the end of the previous interval (%" PRIu64 "): counted from there",
		     e->line, ts, g->now);
		count(g, C_OOO);
		ts = g->now;
	}
	g->now = ts;
	if (u && (type == HWTEL_GPU_START || type == HWTEL_GPU_STOP)) {
		fresh = u->fresh;
		u->fresh = false;
	}
	if (type == HWTEL_GPU_START && u) {
		unsigned int c = 0;

		if (u->open && u->gap) {
			account(g, (unsigned int)unit, ts);
			gap_cut(g, (unsigned int)unit, e->line);
		}
		if (u->open && u->nq == QUEUE_MAX) {
			diag(g, "line %lu: START on %s with %u jobs queued behind the running one: skipped",
			     e->line, unit_names[unit], QUEUE_MAX);
			count(g, C_IGN);
			return 0;
		}
		ret = get_cons(g, (int)e->d[0], ts, &c);
		if (ret)
			return ret;
		g->cons[c].a[SET_IVL].jobs[unit]++;
		g->cons[c].a[SET_CUM].jobs[unit]++;
		g->total[SET_IVL].jobs[unit]++;
		g->total[SET_CUM].jobs[unit]++;
		if (u->open) {
			/* queued: it runs from the STOP of the job before it */
			count(g, C_START);
			u->q[u->nq].cons = c;
			u->q[u->nq].line = e->line;
			u->nq++;
			return 0;
		}
		u->open = true;
		u->cons = c;
		u->seg = ts;
		u->line = e->line;
	} else if (type == HWTEL_GPU_STOP && u) {
		if (!u->open && fresh) {
			/* idle at the gap: its START was in the gap or past the driver's buffer */
			diag(g, "line %lu: STOP on %s without a START, first event on it after the record gap: its START was lost, skipped",
			     e->line, unit_names[unit]);
			count(g, C_STOP);
			count(g, C_LOST_START);
			return 0;
		}
		if (!u->open) {
			diag(g, "line %lu: STOP on %s without a START: skipped (its start is unknown)",
			     e->line, unit_names[unit]);
			count(g, C_STOP);
			return 0;
		}
		account(g, (unsigned int)unit, ts);
		if (u->gap)
			gap_confirm(g, (unsigned int)unit);
		if (u->nq) {
			/* the next queued job runs from here */
			u->cons = u->q[0].cons;
			u->line = u->q[0].line;
			u->seg = ts;
			memmove(&u->q[0], &u->q[1], (u->nq - 1) * sizeof(u->q[0]));
			u->nq--;
			return 0;
		}
		u->open = false;
	} else if (type == HWTEL_GPU_SINGLE && ch == HWTEL_GPU_CH_SOFTWARE &&
		   (data == HWTEL_GPU_SW_FREQ || data == HWTEL_GPU_SW_VOLTS)) {
		if (!e->d[0]) {
			diag(g, "line %lu: %s 0: ignored", e->line,
			     data == HWTEL_GPU_SW_FREQ ? "frequency" : "voltage");
			count(g, C_IGN);
			return 0;
		}
		dvfs_half(g, e, data == HWTEL_GPU_SW_FREQ ? HALF_FREQ : HALF_VOLT);
	} else if (type == HWTEL_GPU_SINGLE && ch == HWTEL_GPU_CH_GPU &&
		   data == HWTEL_GPU_GPU_FREQ_VOLT) {
		if (!e->d[0] || !e->d[1]) {
			diag(g, "line %lu: frequency/voltage change to %u MHz %u mV: ignored",
			     e->line, e->d[0], e->d[1]);
			count(g, C_IGN);
			return 0;
		}
		f = dvfs_value(e->d[0], 1000000u);
		v = dvfs_value(e->d[1], 1000u);
		set_opp(g, ts, &f, &v);
		g->pend = HALF_NONE;
		set_carried(g, ts, false);
	} else {
		count(g, C_IGN);
	}
	return 0;
}

static uint64_t raw_to_upj(u128 raw)
{
	return (uint64_t)((raw + UPJ_RAW / 2) / UPJ_RAW);
}

static double raw_to_pj(u128 raw)
{
	return (double)(raw / UPJ_RAW) / 1e6 + (double)(raw % UPJ_RAW) / (double)UPJ_RAW / 1e6;
}

static int cons_cmp(const void *a, const void *b)
{
	const struct hwtel_gpu_consumer *x = a, *y = b;

	if (x->energy_pj != y->energy_pj)
		return x->energy_pj > y->energy_pj ? -1 : 1;
	if (x->busy_total_ns != y->busy_total_ns)
		return x->busy_total_ns > y->busy_total_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->life < y->life ? -1 : x->life > y->life;
}

struct hwtel_gpu_consumer *hwtel_gpu_consumers_new(unsigned int n, unsigned int nunits)
{
	struct hwtel_gpu_consumer *c;
	uint64_t *pool;
	unsigned int i;

	if (!n)
		n = 1;
	c = calloc(1, n * sizeof(*c) + 2 * (size_t)n * nunits * sizeof(uint64_t));
	if (!c)
		return NULL;
	pool = (uint64_t *)(c + n);
	for (i = 0; i < n; i++) {
		c[i].busy_ns = pool + 2 * (size_t)i * nunits;
		c[i].jobs = c[i].busy_ns + nunits;
	}
	return c;
}

void hwtel_gpu_fold_free(struct hwtel_gpu_fold *fold, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		free(fold[i].busy);
	free(fold);
}

/*
 * One entry per name, as the Prometheus series: no cap that would move a
 * name's lives to another entry and its counter to another series.
 */
int hwtel_gpu_fold_add(struct hwtel_gpu_fold **fold, unsigned int *n, const char *comm,
		       const uint64_t *busy, const uint64_t *jobs, unsigned int nunits,
		       uint64_t unpriced_ns, u128 raw)
{
	struct hwtel_gpu_fold *f = NULL;
	unsigned int i;

	for (i = 0; i < *n && !f; i++)
		if (!strcmp((*fold)[i].comm, comm))
			f = &(*fold)[i];
	if (!f) {
		f = realloc(*fold, (*n + 1) * sizeof(**fold));
		if (!f)
			return -ENOMEM;
		*fold = f;
		f = &f[*n];
		memset(f, 0, sizeof(*f));
		snprintf(f->comm, sizeof(f->comm), "%s", comm);
	}
	if (hwtel_grow_pair(&f->busy, &f->jobs, &f->nunits, nunits))
		return -ENOMEM;
	if (f == &(*fold)[*n])
		(*n)++;
	for (i = 0; i < nunits; i++) {
		f->busy[i] += busy[i];
		f->jobs[i] += jobs ? jobs[i] : 0;
	}
	f->unpriced_ns += unpriced_ns;
	f->raw += raw;
	f->upj += raw_to_upj(raw);
	f->lives++;
	return 0;
}

/*
 * After fold_ended(): the entries of the PIDs with no life or consumer left
 * are freed, the others moved to a table of the size pid_get() would give
 * them (load at most 1/2). Rebuilt rather than deleted in place: linear
 * probing cannot just clear a slot, and the pass costs what fold_ended()'s
 * own passes cost.
 */
static void pids_prune(struct hwtel_gpu *g)
{
	struct pid_ent *old = g->pids;
	unsigned int ocap = g->npids_cap, cap = 256, i, n = 0;

	for (i = 0; i < ocap; i++)
		n += old[i].used && (old[i].life >= 0 || old[i].cons >= 0);
	if (n == g->npids)
		return;
	while (cap < 2 * n)
		cap *= 2;
	g->pids = calloc(cap, sizeof(*g->pids));
	if (!g->pids) {
		g->pids = old;	/* kept until the next interval */
		return;
	}
	g->npids_cap = cap;
	g->npids = n;
	for (i = 0; i < ocap; i++)
		if (old[i].used && (old[i].life >= 0 || old[i].cons >= 0))
			g->pids[pid_slot(g, old[i].pid)] = old[i];
	free(old);
}

/*
 * At the end of an interval (its reports built): the consumers whose life
 * ended by @t1 and whose jobs are all over are summed into their name's
 * entry of fold[] and freed; so are the lives that ended by @t1 and have
 * no consumer left. A job that starts later is not theirs: it starts after
 * their end, so it belongs to a later life of the PID (or to none known
 * yet). Both arrays then hold the lives alive at @t1 or ended after it,
 * and the consumers of those and of PIDs without a known life.
 */
static void fold_ended(struct hwtel_gpu *g, uint64_t t1)
{
	unsigned int i, j, n, *map;

	if (!g->ncons && !g->nlives)
		return;
	map = malloc((g->ncons > g->nlives ? g->ncons : g->nlives) * sizeof(*map));
	if (!map)
		return;		/* kept until the next interval */
	/* the PIDs' chains are linked anew below */
	for (i = 0; i < g->nlives; i++)
		pid_find(g, g->lives[i].pid)->life = -1;
	for (i = 0; i < g->ncons; i++)
		pid_find(g, g->cons[i].pid)->cons = -1;
	for (i = 0; i < g->ncons; i++)
		g->cons[i].pin = false;
	for (i = 0; i < HWTEL_GPU_MALI_UNITS; i++) {
		const struct unit_state *u = &g->unit[i];

		if (!u->open)
			continue;
		g->cons[u->cons].pin = true;
		for (j = 0; j < u->nq; j++)
			g->cons[u->q[j].cons].pin = true;
	}
	for (i = n = 0; i < g->ncons; i++) {
		const struct cons *c = &g->cons[i];
		const struct acc *a = &c->a[SET_CUM];

		if (!c->pin && c->life >= 0 && g->lives[c->life].end <= t1 &&
		    !hwtel_gpu_fold_add(&g->fold, &g->nfold, g->lives[c->life].comm, a->busy,
					a->jobs, HWTEL_GPU_MALI_UNITS, a->unpriced_ns, a->raw)) {
			map[i] = UINT_MAX;
			continue;
		}
		map[i] = n;
		g->cons[n++] = *c;
	}
	g->ncons = n;
	for (i = 0; i < HWTEL_GPU_MALI_UNITS; i++) {
		struct unit_state *u = &g->unit[i];

		if (!u->open)
			continue;
		u->cons = map[u->cons];
		for (j = 0; j < u->nq; j++)
			u->q[j].cons = map[u->q[j].cons];
	}
	/* the lives: map[] is UINT_MAX - 1 for the ones a consumer keeps */
	for (j = 0; j < g->nlives; j++)
		map[j] = 0;
	for (i = 0; i < g->ncons; i++)
		if (g->cons[i].life >= 0)
			map[g->cons[i].life] = UINT_MAX - 1;
	for (j = n = 0; j < g->nlives; j++) {
		if (map[j] != UINT_MAX - 1 && g->lives[j].end <= t1) {
			pid_find(g, g->lives[j].pid)->folded++;
			map[j] = UINT_MAX;
			continue;
		}
		map[j] = n;
		g->lives[n++] = g->lives[j];
	}
	g->nlives = n;
	for (i = 0; i < g->ncons; i++)
		if (g->cons[i].life >= 0)
			g->cons[i].life = (int)map[g->cons[i].life];
	free(map);
	for (i = 0; i < g->nlives; i++) {
		struct pid_ent *e = pid_find(g, g->lives[i].pid);

		g->lives[i].next = e->life;
		e->life = (int)i;
	}
	for (i = 0; i < g->ncons; i++) {
		struct pid_ent *e = pid_find(g, g->cons[i].pid);

		g->cons[i].next = e->cons;
		e->cons = (int)i;
	}
	shrink((void **)&g->lives, g->nlives, &g->lives_cap, sizeof(*g->lives));
	shrink((void **)&g->cons, g->ncons, &g->cons_cap, sizeof(*g->cons));
	pids_prune(g);
}

static int fold_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hwtel_gpu_consumer *)a)->comm,
		      ((const struct hwtel_gpu_consumer *)b)->comm);
}

/* The rows of the lives summed per name: pid 0, life the number of lives */
int hwtel_gpu_fold_report(const struct hwtel_gpu_fold *fold, unsigned int n, u128 total_raw,
			  struct hwtel_gpu_report *r)
{
	unsigned int i, k;

	if (!n)
		return 0;
	r->exited = hwtel_gpu_consumers_new(n, r->nunits);
	if (!r->exited)
		return hwtel_err(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct hwtel_gpu_fold *f = &fold[i];
		struct hwtel_gpu_consumer *o = &r->exited[i];

		o->life = f->lives > UINT_MAX ? UINT_MAX : (unsigned int)f->lives;
		snprintf(o->comm, sizeof(o->comm), "%s", f->comm);
		for (k = 0; k < f->nunits && k < r->nunits; k++) {
			o->busy_ns[k] = f->busy[k];
			o->jobs[k] = f->jobs[k];
		}
		for (k = 0; k < f->nunits; k++)
			o->busy_total_ns += f->busy[k];
		o->unpriced_ns = f->unpriced_ns;
		o->energy_upj = f->upj;
		o->energy_pj = raw_to_pj(f->raw);
		o->mean_pw = r->seconds > 0 ? o->energy_pj / r->seconds : 0;
		o->share = total_raw ? (double)f->raw / (double)total_raw : 0;
	}
	r->nexited = n;
	qsort(r->exited, r->nexited, sizeof(*r->exited), fold_cmp);
	return 0;
}

static int build(struct hwtel_gpu *g, unsigned int s, uint64_t t0, uint64_t t1)
{
	struct hwtel_gpu_report *r = &g->rep[s];
	const struct acc *t = &g->total[s];
	unsigned int i, k, n = 0;

	free(r->consumers);
	free(r->exited);
	memset(r, 0, sizeof(*r));
	r->t0_ns = t0;
	r->t1_ns = t1;
	r->seconds = (double)(t1 - t0) / 1e9;
	r->nunits = HWTEL_GPU_MALI_UNITS;
	r->unit_names = unit_names;
	r->busy_ns = g->rbusy[s];
	r->jobs = g->rjobs[s];
	r->unbilled_ns = g->runbilled[s];
	r->consumers = hwtel_gpu_consumers_new(g->ncons, HWTEL_GPU_MALI_UNITS);
	if (!r->consumers)
		return hwtel_err(-ENOMEM, "out of memory");
	for (i = 0; i < g->ncons; i++) {
		const struct cons *c = &g->cons[i];
		const struct acc *a = &c->a[s];
		struct hwtel_gpu_consumer *o = &r->consumers[n];
		uint64_t jobs = 0;

		for (k = 0; k < HWTEL_GPU_MALI_UNITS; k++) {
			o->busy_ns[k] = a->busy[k];
			o->jobs[k] = a->jobs[k];
			o->busy_total_ns += a->busy[k];
			jobs += a->jobs[k];
		}
		if (!jobs && !o->busy_total_ns) {
			memset(o->busy_ns, 0, HWTEL_GPU_MALI_UNITS * sizeof(*o->busy_ns));
			memset(o->jobs, 0, HWTEL_GPU_MALI_UNITS * sizeof(*o->jobs));
			continue;
		}
		o->pid = c->pid;
		if (c->life >= 0) {
			const struct life *l = &g->lives[c->life];
			/* the lives of the PID before it, folded or kept */
			const struct pid_ent *e = pid_find(g, c->pid);
			int j;

			o->life = e->folded;
			for (j = e->life; j >= 0; j = g->lives[j].next)
				if (g->lives[j].start < l->start)
					o->life++;
			snprintf(o->comm, sizeof(o->comm), "%s", l->comm);
			snprintf(o->cmdline, sizeof(o->cmdline), "%s", l->cmdline);
		} else {
			snprintf(o->comm, sizeof(o->comm), "%s", c->comm);
			snprintf(o->cmdline, sizeof(o->cmdline), "%s", c->cmdline);
		}
		o->unpriced_ns = a->unpriced_ns;
		o->energy_upj = raw_to_upj(a->raw);
		o->energy_pj = raw_to_pj(a->raw);
		o->mean_pw = r->seconds > 0 ? o->energy_pj / r->seconds : 0;
		o->share = t->raw ? (double)a->raw / (double)t->raw : 0;
		n++;
	}
	r->nconsumers = n;
	qsort(r->consumers, n, sizeof(*r->consumers), cons_cmp);
	for (k = 0; k < HWTEL_GPU_MALI_UNITS; k++) {
		r->busy_ns[k] = t->busy[k];
		r->jobs[k] = t->jobs[k];
	}
	r->energy_upj = raw_to_upj(t->raw);
	r->energy_pj = raw_to_pj(t->raw);
	r->mean_pw = r->seconds > 0 ? r->energy_pj / r->seconds : 0;
	r->unattributed_ns = t->unpriced_ns;
	r->carried_ns = t->carried_ns;
	r->unattributed_priced = g->first_known;
	if (g->first_known)
		r->unattributed_upj = raw_to_upj((u128)t->unpriced_ns * g->first_uv *
						 g->first_uv * g->first_hz);
	r->opp_known = g->f_known && g->v_known;
	if (r->opp_known) {
		r->opp.mhz = (uint32_t)((g->hz + 500000u) / 1000000u);
		r->opp.mv = (uint32_t)((g->uv + 500u) / 1000u);
		r->opp_hz = g->hz;
		r->opp_uv = g->uv;
	}
	r->lines = g->cnt[s][C_LINES];
	r->malformed = g->cnt[s][C_MALFORMED];
	r->out_of_order = g->cnt[s][C_OOO];
	r->stop_without_start = g->cnt[s][C_STOP];
	r->start_while_running = g->cnt[s][C_START];
	r->open_at_end = g->cnt[s][C_OPEN];
	r->ignored = g->cnt[s][C_IGN];
	r->dvfs_changes = g->cnt[s][C_DVFS];
	r->lost_stops = g->cnt[s][C_LOST_STOP];
	r->lost_starts = g->cnt[s][C_LOST_START];
	memcpy(r->unbilled_ns, g->unbilled[s], sizeof(g->unbilled[s]));
	r->overflows = g->cnt[s][C_OVERFLOW];
	r->overflow_ns = g->overflow_ns[s];
	return s == SET_CUM ? hwtel_gpu_fold_report(g->fold, g->nfold, t->raw, r) : 0;
}

int hwtel_gpu_interval(struct hwtel_gpu *g, uint64_t t1_ns,
		       const struct hwtel_gpu_report **out)
{
	uint64_t t0, known;
	unsigned int i;
	bool full;
	size_t k;
	int ret;

	hwtel_clear_error();
	/* the lines fed since the last interval are this recording's */
	full = g->buffer_events && g->cnt[SET_IVL][C_LINES] >= g->buffer_events;
	qsort(g->ev, g->nev, sizeof(*g->ev), ev_cmp);
	if (!g->begun)
		hwtel_gpu_begin(g, g->nev ? g->ev[0].ts_ns : t1_ns);
	for (k = 0; k < g->nev; k++) {
		ret = process(g, &g->ev[k]);
		if (ret)
			return ret;
	}
	g->nev = 0;
	if (t1_ns < g->now)
		t1_ns = g->now;
	/*
	 * A recording that filled the driver's buffer is known only up to its
	 * last event (the driver dropped the rest): from there on it is a
	 * record gap.
	 */
	known = t1_ns;
	if (full) {
		known = g->now;
		diag(g, "the recording filled the driver's buffer (%lu events): the events after line %lu were dropped, its last %.3f ms are unknown",
		     g->buffer_events, g->line, (double)(t1_ns - known) / 1e6);
		count(g, C_OVERFLOW);
		g->overflow_ns[SET_IVL] += t1_ns - known;
		g->overflow_ns[SET_CUM] += t1_ns - known;
	}
	/*
	 * The end of the interval is a record gap: the events until the next
	 * recording starts are lost. A job that was running at the previous
	 * gap and has not stopped since is closed at that gap; one running now
	 * is counted up to here (up to the last event of a full recording) and
	 * billed after that only if its STOP comes.
	 */
	for (i = 0; i < HWTEL_GPU_MALI_UNITS; i++) {
		struct unit_state *u = &g->unit[i];

		u->fresh = true;
		if (!u->open)
			continue;
		account(g, i, known);
		if (u->gap) {
			account(g, i, t1_ns);
			gap_cut(g, i, 0);
			continue;
		}
		count(g, C_OPEN);
		u->gap = true;
		account(g, i, t1_ns);	/* held, as the time after a gap */
	}
	g->now = t1_ns;
	t0 = g->t0;
	if (t0 > t1_ns)
		t0 = t1_ns;
	ret = build(g, SET_IVL, t0, t1_ns);
	if (!ret)
		ret = build(g, SET_CUM, g->cum_t0 < t1_ns ? g->cum_t0 : t1_ns, t1_ns);
	/* the next interval starts here */
	for (i = 0; i < g->ncons; i++)
		memset(&g->cons[i].a[SET_IVL], 0, sizeof(g->cons[i].a[SET_IVL]));
	memset(&g->total[SET_IVL], 0, sizeof(g->total[SET_IVL]));
	memset(g->cnt[SET_IVL], 0, sizeof(g->cnt[SET_IVL]));
	memset(g->unbilled[SET_IVL], 0, sizeof(g->unbilled[SET_IVL]));
	g->overflow_ns[SET_IVL] = 0;
	g->t0 = t1_ns;
	if (ret)
		return ret;
	fold_ended(g, t1_ns);
	if (out)
		*out = &g->rep[SET_IVL];
	return 0;
}

void hwtel_gpu_retained(const struct hwtel_gpu *g, unsigned int *lives, unsigned int *consumers)
{
	*lives = g->nlives;
	*consumers = g->ncons;
}

void hwtel_gpu_retained_pids(const struct hwtel_gpu *g, unsigned int *entries, unsigned int *slots)
{
	*entries = g->npids;
	*slots = g->npids_cap;
}

const struct hwtel_gpu_report *hwtel_gpu_cumulative(const struct hwtel_gpu *g)
{
	return &g->rep[SET_CUM];
}

void hwtel_gpu_names_from_proc(struct hwtel_gpu *g, const char *procroot)
{
	unsigned int s, i;

	/*
	 * A consumer with no life yet (a process older than the capture) keeps
	 * the name it has now: its exit may be read after it was reaped
	 */
	for (i = 0; i < g->ncons; i++) {
		struct cons *c = &g->cons[i];

		if (c->life >= 0 || c->comm[0] || c->pid <= 0)
			continue;
		hwtel_read_proc_name(procroot ? procroot : "/proc", c->pid, c->comm,
				     sizeof(c->comm), c->cmdline, sizeof(c->cmdline));
	}
	for (s = 0; s < NSETS; s++) {
		struct hwtel_gpu_report *r = &g->rep[s];

		for (i = 0; i < r->nconsumers; i++) {
			struct hwtel_gpu_consumer *c = &r->consumers[i];

			if (c->comm[0] || c->pid <= 0)
				continue;
			hwtel_read_proc_name(procroot ? procroot : "/proc", c->pid, c->comm,
					     sizeof(c->comm), c->cmdline, sizeof(c->cmdline));
		}
	}
}
