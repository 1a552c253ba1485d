// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel record: a trigger-positioned flight recorder of hwtel metrics;
 * hwtel report: views of its capture file. See hwtel(1) and
 * Documentation/userspace-api/hwtel.rst ("hwtel record").
 *
 * Sampling happens in user space: one group read per PMU group (a PCIe
 * endpoint, a DDR controller's fixed and generic groups, one group per PMU
 * of -s perf:... events) at absolute CLOCK_MONOTONIC deadlines. In-kernel
 * sampling would need a timer event (cpu-clock) as group leader; on 6.1
 * the group read then runs its transaction on the leader's PMU, so the PCIe
 * PMU's one SNAPSHOT for the whole group is lost and members are read one
 * by one (6.12 and 7.3 keep it). User-space reads keep one snapshot per
 * group on every kernel and let a trigger change the period or switch event
 * sets between samples.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <libhwtel/hwtel.h>

#include "cli.h"
#include "lib/rec.h"

/* internal.h of libhwtel: the perf group API */
struct hwtel_group;
struct hwtel_group *hwtel_group_new(const struct hwtel_pmu *pmu, bool pinned);
int hwtel_group_add(struct hwtel_group *g, const char *spec);
int hwtel_group_open(struct hwtel_group *g);
int hwtel_group_read(struct hwtel_group *g, uint64_t *values, uint64_t *enabled,
		     uint64_t *running);
void hwtel_group_free(struct hwtel_group *g);
int hwtel_read_file(const char *path, char *buf, size_t size);

#define MAX_SOURCES 16
#define MAX_PERF 32
#define MAX_PAT 32
#define MAX_DEFS 16

static volatile sig_atomic_t rec_stop, rec_usr1, rec_child;

static void on_stop(int sig)
{
	rec_stop = sig;
}

static void on_usr1(int sig)
{
	(void)sig;
	rec_usr1 = 1;
}

static void on_chld(int sig)
{
	(void)sig;
	rec_child = 1;
}

enum src_kind { SRC_PCIE, SRC_DDR, SRC_PERF };

struct metric {
	char name[REC_NAME_MAX];
	unsigned int src;
	unsigned int sel;	/* index into the source's metric table */
	bool stored;
	int slot;		/* engine index if stored, else -1 */
};

struct source {
	enum src_kind kind;
	char set[32];
	bool standby, enabled, have_prev;
	bool stale;		/* the last read got no new snapshot (values NaN) */
	char dev[128];
	/* pcie */
	struct hwtel_pcie *pcie;
	struct hwtel_pcie_data *pa, *pb, *pd;
	/* ddr */
	struct hwtel_ddr *ddr;
	struct hwtel_ddr_data *da, *db, *dd;
	unsigned int index;
	/* perf */
	struct hwtel_pmu *pmu;
	struct hwtel_group *g;
	unsigned int nperf;
	char pname[MAX_PERF][48];
	uint64_t pv[2][MAX_PERF];
	uint64_t pt[2];
	unsigned int cur;
	/* metrics */
	double *vals;		/* this source's values, by its own table */
	unsigned int nvals;
};

struct rec_opts {
	const char *out;
	uint64_t period_ns;
	unsigned int capacity;
	double seconds;
	double position;
	unsigned int shots;
	double max_seconds;
	const char *src[MAX_SOURCES];
	bool src_standby[MAX_SOURCES];
	unsigned int nsrc;
	const char *pat[MAX_PAT];
	unsigned int npat;
	const char *trigger;
	const char *counter[MAX_DEFS];
	unsigned int ncounter;
	const char *feedback[MAX_DEFS];
	unsigned int nfeedback;
	const char *ontrig[MAX_DEFS];
	unsigned int nontrig;
	const char *event[REC_MAX_EVENTS];
	unsigned int nevent;
	const char *ddr_events;
	uint64_t sync_ns;	/* --sync: 0 = never before the close */
	bool list, quiet;
	char **command;
	char cmdline[256];
};

static void rec_usage(FILE *f)
{
	fputs("usage: hwtel record [-o FILE] [-p PERIOD] [-N SAMPLES | -S SECONDS]\n"
	      "                    [--position begin|center|end|PERCENT] [--shots K]\n"
	      "                    [-s SOURCE]... [--standby SOURCE]... [-m PATTERN]...\n"
	      "                    [--event NAME=EVENT]... [--trigger COND] [--counter DEF]...\n"
	      "                    [--feedback 'COND => ACTION']... [--on-trigger ACTION]...\n"
	      "                    [--sync PERIOD] [-t MAXSEC] [-q] [--list] [-- COMMAND...]\n"
	      "\n"
	      "Samples hwtel metrics every PERIOD into a ring of N samples; on the trigger\n"
	      "(COND, SIGUSR1 or the end of COMMAND) keeps the pre-trigger share of the\n"
	      "ring and fills the rest, then stops (or re-arms for K shots).\n"
	      "\n"
	      "  -o, --output FILE      capture file (default hwtel.rec)\n"
	      "  -p, --period PERIOD    sample period (default 1ms, at least 100us)\n"
	      "  -N, --samples N        samples per shot (default 1000)\n"
	      "  -S, --seconds S        or the samples of S seconds at PERIOD\n"
	      "      --position P       pre-trigger share: begin (0), center (50), end (100)\n"
	      "                         or a percentage (default center)\n"
	      "      --shots K          shots before stopping (default 1)\n"
	      "  -s, --source SOURCE    pcie[=DEV] | ddr[=DEV] | perf:NAME=PMU/EVENT\n"
	      "                         (default pcie)\n"
	      "      --standby SOURCE   a source sampled only after 'enable SET' (SET:\n"
	      "                         pcie, ddr or perf)\n"
	      "  -m, --metrics PATTERN  metrics stored (shell pattern; default *.used_pct,\n"
	      "                         *.gbps, ddr*_gbps, perf.*, and every metric a\n"
	      "                         condition names)\n"
	      "      --event NAME=EVENT a discrete event, EVENT: SYS:TRACEPOINT [if FILTER]\n"
	      "                         or PMU/EVENT/; the track NAME counts its\n"
	      "                         occurrences in each sample's interval\n"
	      "      --trigger COND     trigger condition (see hwtel(1), CONDITIONS)\n"
	      "      --counter DEF      'NAME[:BITS] inc COND[; dec COND][; clear COND]'\n"
	      "                         (or a rule 'count EVENT': its occurrences)\n"
	      "      --feedback DEF     'COND => ACT': ACT when COND starts to hold\n"
	      "      --on-trigger ACT   ACT when the trigger fires; ACT: 'period PERIOD',\n"
	      "                         'enable SET' or 'disable SET' (SET: pcie, ddr, perf)\n"
	      "      --ddr-events LIST  generic DDR events to sample (comma separated)\n"
	      "      --sync PERIOD      write the capture to the disk every PERIOD (for a\n"
	      "                         panic or power loss; a killed recorder loses\n"
	      "                         nothing of its ring without it)\n"
	      "  -t, --max-time SEC     stop after SEC seconds even without a trigger\n"
	      "  -q, --quiet            no summary on stderr\n"
	      "      --list             print the metric names of the sources and exit\n"
	      "  -- COMMAND             run COMMAND; its end is a trigger\n"
	      "\n"
	      "See hwtel(1).\n", f);
}

static int rec_usage_error(const char *fmt, const char *arg)
{
	fputs("hwtel record: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n(hwtel record --help shows the options)\n", stderr);
	return HWTEL_EXIT_USAGE;
}

static int parse_rec_args(int argc, char **argv, struct rec_opts *o)
{
	enum { O_POS = 256, O_SHOTS, O_STANDBY, O_TRIG, O_CNT, O_FB, O_ONT, O_DDREV, O_LIST,
	       O_EVENT, O_SYNCP };
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "period", required_argument, NULL, 'p' },
		{ "samples", required_argument, NULL, 'N' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "position", required_argument, NULL, O_POS },
		{ "shots", required_argument, NULL, O_SHOTS },
		{ "source", required_argument, NULL, 's' },
		{ "standby", required_argument, NULL, O_STANDBY },
		{ "metrics", required_argument, NULL, 'm' },
		{ "trigger", required_argument, NULL, O_TRIG },
		{ "counter", required_argument, NULL, O_CNT },
		{ "event", required_argument, NULL, O_EVENT },
		{ "feedback", required_argument, NULL, O_FB },
		{ "on-trigger", required_argument, NULL, O_ONT },
		{ "ddr-events", required_argument, NULL, O_DDREV },
		{ "sync", required_argument, NULL, O_SYNCP },
		{ "max-time", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "list", no_argument, NULL, O_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_n = false;
	char *end;
	int c, i;

	memset(o, 0, sizeof(*o));
	o->out = "hwtel.rec";
	o->period_ns = 1000000;
	o->capacity = 1000;
	o->position = 50;
	o->shots = 1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:p:N:S:s:m:t:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return rec_usage_error("-o: empty file name%s", "");
			o->out = optarg;
			break;
		case 'p':
			if (rec_parse_duration(optarg, &o->period_ns))
				return rec_usage_error("-p/--period: bad period '%s' (a number and ns, us, ms or s)",
						       optarg);
			if (o->period_ns < REC_MIN_PERIOD_NS)
				return rec_usage_error("-p/--period: %s is below the minimum period of 100us",
						       optarg);
			break;
		case 'N': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || v < 1 || v > 100000000ul)
				return rec_usage_error("-N/--samples: invalid value '%s' (1 to 100000000)",
						       optarg);
			o->capacity = (unsigned int)v;
			have_n = true;
			break;
		}
		case 'S':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || *end || !*optarg || !isfinite(o->seconds) || o->seconds <= 0 ||
			    o->seconds > 86400)
				return rec_usage_error("-S/--seconds: invalid value '%s'", optarg);
			break;
		case O_POS:
			if (!strcmp(optarg, "begin")) {
				o->position = 0;
			} else if (!strcmp(optarg, "center")) {
				o->position = 50;
			} else if (!strcmp(optarg, "end")) {
				o->position = 100;
			} else {
				errno = 0;
				o->position = strtod(optarg, &end);
				if (*end == '%')
					end++;
				if (errno || *end || !*optarg || !(o->position >= 0 && o->position <= 100))
					return rec_usage_error("--position: invalid value '%s' (begin, center, end or 0 to 100)",
							       optarg);
			}
			break;
		case O_SHOTS: {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || v < 1 || v > 1000000)
				return rec_usage_error("--shots: invalid value '%s'", optarg);
			o->shots = (unsigned int)v;
			break;
		}
		case 's':
		case O_STANDBY:
			if (o->nsrc >= MAX_SOURCES)
				return rec_usage_error("more than 16 sources%s", "");
			o->src_standby[o->nsrc] = c == O_STANDBY;
			o->src[o->nsrc++] = optarg;
			break;
		case 'm':
			if (o->npat >= MAX_PAT)
				return rec_usage_error("more than 32 -m patterns%s", "");
			o->pat[o->npat++] = optarg;
			break;
		case O_TRIG:
			o->trigger = optarg;
			break;
		case O_CNT:
			if (o->ncounter >= MAX_DEFS)
				return rec_usage_error("more than 16 counters%s", "");
			o->counter[o->ncounter++] = optarg;
			break;
		case O_EVENT:
			if (o->nevent >= REC_MAX_EVENTS)
				return rec_usage_error("more than 8 events%s", "");
			o->event[o->nevent++] = optarg;
			break;
		case O_FB:
			if (o->nfeedback >= MAX_DEFS)
				return rec_usage_error("more than 16 feedback rules%s", "");
			o->feedback[o->nfeedback++] = optarg;
			break;
		case O_ONT:
			if (o->nontrig >= MAX_DEFS)
				return rec_usage_error("more than 16 trigger actions%s", "");
			o->ontrig[o->nontrig++] = optarg;
			break;
		case O_DDREV:
			o->ddr_events = optarg;
			break;
		case O_SYNCP:
			if (rec_parse_duration(optarg, &o->sync_ns) || !o->sync_ns)
				return rec_usage_error("--sync: bad period '%s' (a number and ns, us, ms or s)",
						       optarg);
			break;
		case 't':
			errno = 0;
			o->max_seconds = strtod(optarg, &end);
			if (errno || *end || !*optarg || !isfinite(o->max_seconds) || o->max_seconds <= 0)
				return rec_usage_error("-t/--max-time: invalid value '%s'", optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case O_LIST:
			o->list = true;
			break;
		case 'h':
			rec_usage(stdout);
			return HWTEL_EXIT_OK;
		case ':':
			return rec_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return rec_usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->command = &argv[optind];
	if (o->seconds > 0) {
		double n = ceil(o->seconds * 1e9 / (double)o->period_ns);

		if (have_n)
			return rec_usage_error("-N and -S exclude each other%s", "");
		if (n > 100000000)
			return rec_usage_error("-S: more than 100000000 samples%s", "");
		o->capacity = (unsigned int)n;
	}
	for (i = 0; i < (int)o->nsrc; i++)
		if (!o->src_standby[i])
			break;
	if (i == (int)o->nsrc) {
		/* no active source given: pcie, first */
		if (o->nsrc >= MAX_SOURCES)
			return rec_usage_error("more than 16 sources%s", "");
		memmove(&o->src[1], &o->src[0], o->nsrc * sizeof(o->src[0]));
		memmove(&o->src_standby[1], &o->src_standby[0], o->nsrc * sizeof(o->src_standby[0]));
		o->src[0] = "pcie";
		o->src_standby[0] = false;
		o->nsrc++;
	}
	{
		size_t off = 0;

		for (i = 0; i < argc && off + 2 < sizeof(o->cmdline); i++)
			off += (size_t)snprintf(o->cmdline + off, sizeof(o->cmdline) - off, "%s%s",
						i ? " " : "", argv[i]);
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Sources and their metrics                                          */

static const char *const PCIE_M[] = {
	"used_pct", "words_pct", "mfb_stall_pct", "mvb_stall_pct", "gbps", "mpps",
	"words", "backpressure", "transactions",
};
#define PCIE_NM (sizeof(PCIE_M) / sizeof(PCIE_M[0]))
/*
 * pcie.untrusted, after the bus metrics: 1 when a STATUS flag (LOST DELTA,
 * READ-OUT OVERRUN) was set in the sample's interval, so none of its
 * figures can be trusted; 0 when none was; NaN when the flags were not
 * read (no CAP_PERFMON) and on a source's first reading.
 */
#define PCIE_UNTRUSTED(s) ((s)->pa->nendpoints * pcie_nbuses(s) * PCIE_NM)

/* buses of an endpoint of the source's block (every endpoint has as many) */
static unsigned int pcie_nbuses(const struct source *s)
{
	return s->pa->nendpoints ? s->pa->endpoints[0].nbuses : 0;
}

/* ------------------------------------------------------------------ */
/* Discrete events: --event NAME=SYS:TRACEPOINT [if FILTER] | NAME=PMU/EVENT/ */

/*
 * One sampling perf event per online CPU (a tracepoint fires on any CPU),
 * each with its own ring: sample_period 1, so every occurrence is a record,
 * with PERF_SAMPLE_TIME on CLOCK_MONOTONIC (use_clockid), the clock of the
 * recorder's samples. The rings are read after every sample's reads, so
 * no wake-up is asked for: the trigger acts at a sample anyway. libperf
 * (linked already) neither sets filters nor gives the descriptors to set
 * them on, so the few lines of opening and ring reading are here.
 */
#define EV_PAGES 8	/* data pages per CPU: 2048 records of 16 bytes */

struct evsrc {
	char name[REC_NAME_MAX];
	unsigned int nfd;
	int *cpu;		/* the CPUs, one fd and ring each */
	int *fd;
	void **base;
	size_t len;
	uint64_t lost, throttled;
};

struct recorder {
	struct rec_opts *o;
	unsigned int nsrc;
	struct source src[MAX_SOURCES];
	unsigned int nmetrics;
	struct metric *m;
	unsigned int mcap;
	unsigned int ddr_count, perf_count;
	unsigned int nev;
	struct evsrc ev[REC_MAX_EVENTS];
};

static int add_metric(struct recorder *r, unsigned int src, unsigned int sel, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int add_metric(struct recorder *r, unsigned int src, unsigned int sel, const char *fmt, ...)
{
	va_list ap;
	struct metric *m;

	if (r->nmetrics == r->mcap) {
		r->mcap = r->mcap ? 2 * r->mcap : 64;
		m = realloc(r->m, r->mcap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		r->m = m;
	}
	m = &r->m[r->nmetrics++];
	memset(m, 0, sizeof(*m));
	va_start(ap, fmt);
	vsnprintf(m->name, sizeof(m->name), fmt, ap);
	va_end(ap);
	m->src = src;
	m->sel = sel;
	m->slot = -1;
	return 0;
}

static const char *bus_tag(enum hwtel_bus_kind k)
{
	switch (k) {
	case HWTEL_BUS_RQ:
		return "rq";
	case HWTEL_BUS_RC:
		return "rc";
	case HWTEL_BUS_UP:
		return "up";
	default:
		return "down";
	}
}

static int open_source(struct recorder *r, unsigned int i, const char *spec, bool standby)
{
	struct source *s = &r->src[i];
	const char *eq = strchr(spec, '=');
	unsigned int e, b, k;
	int ret;

	s->standby = standby;
	s->enabled = !standby;
	if (!strncmp(spec, "pcie", 4) && (spec[4] == '\0' || spec[4] == '=')) {
		s->kind = SRC_PCIE;
		snprintf(s->set, sizeof(s->set), "pcie");
		/*
		 * The control plane gives the STATUS flags of each sample's
		 * interval (pcie.untrusted), read with every sample from the
		 * PMU's sysfs "flags" (root) or else by EP_GET; without
		 * CAP_PERFMON or without the family the counters are recorded
		 * alone and the track is NaN.
		 */
		ret = hwtel_pcie_open(eq ? eq + 1 : NULL, 0,
				      HWTEL_OPEN_STATE_OPTIONAL | HWTEL_OPEN_FLAGS_ONLY, &s->pcie);
		if (ret)
			ret = hwtel_pcie_open(eq ? eq + 1 : NULL, 0, HWTEL_OPEN_NO_NETLINK,
					      &s->pcie);
		if (ret)
			return ret;
		s->pa = hwtel_pcie_data_new(s->pcie);
		s->pb = hwtel_pcie_data_new(s->pcie);
		s->pd = hwtel_pcie_data_new(s->pcie);
		if (!s->pa || !s->pb || !s->pd)
			return -ENOMEM;
		ret = hwtel_pcie_read(s->pcie, s->pa);
		if (ret)
			return ret;
		for (e = 0; e < s->pa->nendpoints; e++) {
			unsigned int nk[4] = { 0 };

			for (b = 0; b < s->pa->endpoints[e].nbuses; b++) {
				const struct hwtel_pcie_bus *bus = &s->pa->endpoints[e].buses[b];
				unsigned int n = nk[bus->kind]++;

				for (k = 0; k < PCIE_NM; k++) {
					ret = add_metric(r, i, (e * pcie_nbuses(s) + b) * PCIE_NM + k,
							 "pcie.ep%u.%s%u.%s", e, bus_tag(bus->kind), n,
							 PCIE_M[k]);
					if (ret)
						return ret;
				}
			}
		}
		ret = add_metric(r, i, PCIE_UNTRUSTED(s), "pcie.untrusted");
		if (ret)
			return ret;
		s->nvals = PCIE_UNTRUSTED(s) + 1;
	} else if (!strncmp(spec, "ddr", 3) && (spec[3] == '\0' || spec[3] == '=')) {
		s->kind = SRC_DDR;
		snprintf(s->set, sizeof(s->set), "ddr");
		s->index = r->ddr_count++;
		ret = hwtel_ddr_open(eq ? eq + 1 : NULL, 0, r->o->ddr_events, &s->ddr);
		if (ret)
			return ret;
		s->da = hwtel_ddr_data_new(s->ddr);
		s->db = hwtel_ddr_data_new(s->ddr);
		s->dd = hwtel_ddr_data_new(s->ddr);
		if (!s->da || !s->db || !s->dd)
			return -ENOMEM;
		ret = hwtel_ddr_read(s->ddr, s->da);
		if (ret)
			return ret;
		ret = add_metric(r, i, 0, "ddr%u.read_gbps", s->index);
		if (!ret)
			ret = add_metric(r, i, 1, "ddr%u.write_gbps", s->index);
		if (ret)
			return ret;
		for (k = 0; k < s->da->nevents; k++) {
			ret = add_metric(r, i, 2 + k, "ddr%u.%s", s->index, s->da->events[k].name);
			if (ret)
				return ret;
		}
		s->nvals = 2 + s->da->nevents;
	} else if (!strncmp(spec, "perf:", 5) && eq && strchr(eq, '/')) {
		const char *name = spec + 5, *slash = strchr(eq, '/');
		char pmu[256], ev[128];
		unsigned int j;

		s->kind = SRC_PERF;
		snprintf(s->set, sizeof(s->set), "perf");
		snprintf(pmu, sizeof(pmu), "%.*s", (int)(slash - eq - 1), eq + 1);
		snprintf(ev, sizeof(ev), "%s", slash + 1);
		if (ev[0] && ev[strlen(ev) - 1] == '/')
			ev[strlen(ev) - 1] = '\0';
		/* one group per PMU: join an earlier perf source on the same PMU */
		for (j = 0; j < i; j++) {
			struct source *t = &r->src[j];

			if (t->kind == SRC_PERF && !strcmp(hwtel_pmu_name(t->pmu), pmu) &&
			    t->standby == standby && t->nperf < MAX_PERF) {
				ret = hwtel_group_add(t->g, ev);
				if (ret < 0)
					return ret;
				snprintf(t->pname[t->nperf], sizeof(t->pname[0]), "%.*s",
					 (int)(eq - name), name);
				ret = add_metric(r, j, t->nperf, "perf.%s", t->pname[t->nperf]);
				t->nperf++;
				s->kind = SRC_PERF;
				s->nvals = 0;
				s->enabled = false;
				s->standby = true;
				s->set[0] = '\0';	/* merged: never read itself */
				return ret;
			}
		}
		ret = hwtel_pmu_open(pmu, &s->pmu);
		if (ret)
			return ret;
		s->g = hwtel_group_new(s->pmu, false);
		if (!s->g)
			return -ENOMEM;
		ret = hwtel_group_add(s->g, ev);
		if (ret < 0)
			return ret;
		snprintf(s->pname[0], sizeof(s->pname[0]), "%.*s", (int)(eq - name), name);
		s->nperf = 1;
		s->nvals = MAX_PERF;
		ret = add_metric(r, i, 0, "perf.%s", s->pname[0]);
		if (ret)
			return ret;
	} else {
		fprintf(stderr, "hwtel record: error: bad source '%s': pcie[=DEV], ddr[=DEV] or perf:NAME=PMU/EVENT\n",
			spec);
		return -EINVAL - 1000;
	}
	s->vals = calloc(s->nvals ? s->nvals : 1, sizeof(*s->vals));
	return s->vals ? 0 : -ENOMEM;
}

static int open_perf_groups(struct recorder *r)
{
	unsigned int i;
	int ret;

	for (i = 0; i < r->nsrc; i++) {
		struct source *s = &r->src[i];

		if (s->kind != SRC_PERF || !s->g)
			continue;
		ret = hwtel_group_open(s->g);
		if (ret)
			return ret;
	}
	return 0;
}

/* Read @s and compute its metric values; NaN on its first reading. */
static int read_source(struct source *s)
{
	unsigned int e, b, k;
	int ret;

	s->stale = false;
	switch (s->kind) {
	case SRC_PCIE: {
		double sec;

		ret = hwtel_pcie_read(s->pcie, s->pb);
		if (ret)
			return ret;
		/*
		 * The flags are sticky until CLEAR FLAGS: cleared when one is
		 * set, so each sample's value covers the interval since the
		 * previous reading (a flag raised between the state read and
		 * the clear is lost only right after a flagged sample).
		 */
		if (s->pb->state_valid && (s->pb->status.lost_deltas || s->pb->status.readout_overrun)) {
			ret = hwtel_pcie_clear(s->pcie, HWTEL_CLEAR_FLAGS);
			if (ret && ret != -EACCES && ret != -EPERM)
				return ret;
		}
		if (!s->have_prev) {
			for (k = 0; k < s->nvals; k++)
				s->vals[k] = NAN;
			hwtel_pcie_data_copy(s->pa, s->pb);
			s->have_prev = true;
			return 0;
		}
		s->vals[PCIE_UNTRUSTED(s)] = !s->pb->state_valid ? NAN :
			s->pb->status.lost_deltas || s->pb->status.readout_overrun ? 1 : 0;
		sec = hwtel_pcie_seconds(s->pb, s->pa);
		s->stale = !(sec > 0);
		ret = hwtel_pcie_diff(s->pb, s->pa, s->pd);
		if (ret)
			return ret;
		for (e = 0; e < s->pd->nendpoints; e++) {
			const struct hwtel_pcie_ep *ep = &s->pd->endpoints[e];

			for (b = 0; b < ep->nbuses; b++) {
				const struct hwtel_pcie_bus *bus = &ep->buses[b];
				struct hwtel_pcie_bus_metrics m;
				double *v = &s->vals[(e * pcie_nbuses(s) + b) * PCIE_NM];

				hwtel_pcie_bus_metrics(s->pd, ep, bus, sec, &m);
				v[0] = m.used_pct;
				v[1] = m.words_pct;
				v[2] = m.mfb_stall_pct;
				v[3] = m.mvb_stall_pct;
				v[4] = m.gbps;
				v[5] = m.mpps;
				v[6] = sec > 0 ? (double)bus->words / sec : NAN;
				v[7] = sec > 0 ? (double)bus->backpressure / sec : NAN;
				v[8] = sec > 0 ? (double)bus->transactions / sec : NAN;
			}
		}
		hwtel_pcie_data_copy(s->pa, s->pb);
		return 0;
	}
	case SRC_DDR: {
		double sec;

		ret = hwtel_ddr_read(s->ddr, s->db);
		if (ret)
			return ret;
		if (!s->have_prev) {
			for (k = 0; k < s->nvals; k++)
				s->vals[k] = NAN;
			hwtel_ddr_data_copy(s->da, s->db);
			s->have_prev = true;
			return 0;
		}
		sec = (double)(s->db->timestamp_ns - s->da->timestamp_ns) / 1e9;
		s->stale = !(sec > 0);
		ret = hwtel_ddr_diff(s->db, s->da, s->dd);
		if (ret)
			return ret;
		s->vals[0] = sec > 0 ? (double)s->dd->reads * HWTEL_DDR_BURST_BYTES / sec / 1e9 : NAN;
		s->vals[1] = sec > 0 ? (double)s->dd->writes * HWTEL_DDR_BURST_BYTES / sec / 1e9 : NAN;
		for (k = 0; k < s->dd->nevents && 2 + k < s->nvals; k++) {
			double v;
			bool exact;

			if (sec > 0 && hwtel_ddr_value(s->dd, s->dd->events[k].name, &v, &exact))
				s->vals[2 + k] = v / sec;
			else
				s->vals[2 + k] = NAN;
		}
		hwtel_ddr_data_copy(s->da, s->db);
		return 0;
	}
	case SRC_PERF: {
		unsigned int nw = s->cur ^ 1;
		double sec;

		ret = hwtel_group_read(s->g, s->pv[nw], &s->pt[nw], NULL);
		if (ret)
			return ret;
		sec = (double)(s->pt[nw] - s->pt[s->cur]) / 1e9;
		s->stale = s->have_prev && !(sec > 0);
		for (k = 0; k < s->nperf; k++)
			s->vals[k] = s->have_prev && sec > 0 ?
				     (double)(s->pv[nw][k] - s->pv[s->cur][k]) / sec : NAN;
		s->cur = nw;
		s->have_prev = true;
		return 0;
	}
	}
	return 0;
}

static int rec_fail(int err);

/* A CPU number at *@p: digits only (no sign, no space); advances *@p */
static bool cpu_number(const char **p, long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return false;
	errno = 0;
	*v = strtol(*p, &end, 10);
	if (errno)
		return false;
	*p = end;
	return true;
}

/*
 * A CPU list as sysfs writes it ("0-3,5,8-11", a newline at the end or
 * not): numbers and ranges in ascending order that do not overlap, so that
 * each CPU comes once (an --event is opened once on each).
 */
int hwtel_rec_parse_cpus(const char *list, int **cpu, unsigned int *n)
{
	const char *p = list;
	unsigned int cap = 0;
	long next = 0;		/* the lowest CPU the list may name next */
	int *v = NULL;

	*cpu = NULL;
	*n = 0;
	while (*p && *p != '\n') {
		long a, b;

		if (!cpu_number(&p, &a))
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (!cpu_number(&p, &b))
				goto bad;
		}
		/* CPU numbers are ints; the kernel's NR_CPUS is at most 2^13 */
		if (a < next || b < a || b > (1L << 22))
			goto bad;
		next = b + 1;
		for (; a <= b; a++) {
			if (*n == cap) {
				int *w;

				cap = cap ? 2 * cap : 64;
				w = realloc(v, cap * sizeof(*v));
				if (!w) {
					free(v);
					*n = 0;
					return -ENOMEM;
				}
				v = w;
			}
			v[(*n)++] = (int)a;
		}
		/* a comma is followed by another number */
		if (*p == ',' && isdigit((unsigned char)p[1]))
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	if (*p == '\n' && p[1])
		goto bad;
	*cpu = v;
	return 0;
bad:
	free(v);
	*n = 0;
	return -EINVAL;
}

/*
 * The online CPUs, every one of them (no cap), for --event @def: 0, or the
 * exit status after a message that says why not
 */
static int online_cpus(const char *def, int **cpu, unsigned int *n)
{
	static const char path[] = "/sys/devices/system/cpu/online";
	char buf[65536];
	int ret = hwtel_read_file(path, buf, sizeof(buf));

	*cpu = NULL;
	*n = 0;
	if (ret >= 0)
		ret = hwtel_rec_parse_cpus(buf, cpu, n);
	if (ret == -ENOMEM)
		return rec_fail(ret);
	if (ret || !*n) {
		fprintf(stderr, "hwtel record: error: --event '%s': cannot read the online CPUs from %s: %s\n",
			def, path, ret == -EINVAL ? "not a CPU list" : ret ? strerror(-ret) :
			"it lists none");
		free(*cpu);
		*cpu = NULL;
		*n = 0;
		return HWTEL_EXIT_FAIL;
	}
	return 0;
}

static long ev_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * PERF_EVENT_IOC_SET_FILTER failed with @e on tracepoint @tp (SYS:NAME,
 * whose format file is @fmt): what it means, and the status
 */
static int filter_error(const char *def, const char *filter, const char *tp, const char *fmt,
			int e)
{
	fprintf(stderr, "hwtel record: error: --event '%s': ", def);
	switch (e) {
	case EINVAL:
		/* the kernel's parser: an unknown field, a bad operator or
		 * value for the field's type, a syntax error
		 */
		fprintf(stderr, "the filter '%s' does not parse for the tracepoint %s (%s): a field it does not have, an operator or a value its field's type does not take, or bad syntax; its fields: %s\n",
			filter, tp, strerror(e), fmt);
		return HWTEL_EXIT_USAGE;
	case EPERM:
	case EACCES:
		fprintf(stderr, "no permission to set the filter '%s' (%s): needs CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8) or root\n",
			filter, strerror(e));
		return HWTEL_EXIT_PERM;
	case ENOMEM:
		fprintf(stderr, "the kernel had no memory for the filter '%s' (%s)\n", filter,
			strerror(e));
		return HWTEL_EXIT_FAIL;
	default:
		fprintf(stderr, "the kernel did not set the filter '%s' on the tracepoint %s (%s)\n",
			filter, tp, strerror(e));
		return HWTEL_EXIT_FAIL;
	}
}

/* "NAME=SPEC": opens the event; status 2 for bad input, else rec_fail's */
static int open_event(struct evsrc *es, const char *def)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	const char *eq = strchr(def, '='), *filter = NULL;
	char spec[256], path[320], idbuf[32], fmt[320] = "";
	int *cpus, one;
	unsigned int ncpu, i;
	bool tp;
	char *w;

	if (!eq || eq == def || (size_t)(eq - def) >= sizeof(es->name) || !eq[1]) {
		fprintf(stderr, "hwtel record: error: --event '%s': expected NAME=SYS:TRACEPOINT [if FILTER] or NAME=PMU/EVENT/\n",
			def);
		return HWTEL_EXIT_USAGE;
	}
	snprintf(es->name, sizeof(es->name), "%.*s", (int)(eq - def), def);
	snprintf(spec, sizeof(spec), "%s", eq + 1);
	w = strstr(spec, " if ");
	if (w) {
		*w = '\0';
		filter = eq + 1 + (w - spec) + 4;
		while (*filter == ' ')
			filter++;
		if (!*filter) {
			fprintf(stderr, "hwtel record: error: --event '%s': no filter after 'if'\n", def);
			return HWTEL_EXIT_USAGE;
		}
	}
	tp = !strchr(spec, '/');
	if (tp) {
		char *colon = strchr(spec, ':');
		static const char *const roots[] = { "/sys/kernel/tracing",
						     "/sys/kernel/debug/tracing" };
		int ret = -ENOENT;
		unsigned int k;
		bool mounted = false;

		if (!colon || colon == spec || !colon[1] || strchr(colon + 1, ':') ||
		    strchr(spec, '.') || strchr(spec, ' ')) {
			fprintf(stderr, "hwtel record: error: --event '%s': expected NAME=SYS:TRACEPOINT [if FILTER] or NAME=PMU/EVENT/\n",
				def);
			return HWTEL_EXIT_USAGE;
		}
		*colon = '\0';
		for (k = 0; k < 2 && ret == -ENOENT; k++) {
			snprintf(path, sizeof(path), "%s/events", roots[k]);
			if (access(path, F_OK))
				continue;
			mounted = true;
			snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[k], spec, colon + 1);
			ret = hwtel_read_file(path, idbuf, sizeof(idbuf));
			snprintf(fmt, sizeof(fmt), "%s/events/%s/%s/format", roots[k], spec,
				 colon + 1);
		}
		if (!mounted) {
			fprintf(stderr, "hwtel record: error: --event '%s': tracefs is not mounted (no /sys/kernel/tracing/events): mount -t tracefs nodev /sys/kernel/tracing\n",
				def);
			return HWTEL_EXIT_FAIL;
		}
		if (ret == -ENOENT) {
			fprintf(stderr, "hwtel record: error: --event '%s': no tracepoint %s:%s (no /sys/kernel/tracing/events/%s/%s/id)\n",
				def, spec, colon + 1, spec, colon + 1);
			return HWTEL_EXIT_USAGE;
		}
		if (ret < 0) {
			fprintf(stderr, "hwtel record: error: --event '%s': cannot read %s: %s\n",
				def, path, strerror(-ret));
			return hwtel_exit_status(ret);
		}
		*colon = ':';
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = strtoull(idbuf, NULL, 10);
		ret = online_cpus(def, &es->cpu, &ncpu);
		if (ret)
			return ret;
	} else {
		struct hwtel_pmu *pmu = NULL;
		char *slash = strchr(spec, '/');
		int ret;

		if (filter) {
			fprintf(stderr, "hwtel record: error: --event '%s': a filter applies to tracepoints only\n",
				def);
			return HWTEL_EXIT_USAGE;
		}
		*slash = '\0';
		ret = hwtel_pmu_open(spec, &pmu);
		if (!ret) {
			if (slash[1] && slash[strlen(slash + 1)] == '/')
				slash[strlen(slash + 1)] = '\0';
			ret = hwtel_pmu_event_attr(pmu, slash + 1, &attr);
		}
		one = pmu ? hwtel_pmu_cpu(pmu) : -1;
		hwtel_pmu_close(pmu);
		if (ret) {
			fprintf(stderr, "hwtel record: error: --event '%s': %s\n", def,
				hwtel_last_error()[0] ? hwtel_last_error() : strerror(-ret));
			return HWTEL_EXIT_USAGE;
		}
		if (one >= 0) {
			es->cpu = malloc(sizeof(*es->cpu));
			if (!es->cpu)
				return rec_fail(-ENOMEM);
			es->cpu[0] = one;
			ncpu = 1;
		} else {
			ret = online_cpus(def, &es->cpu, &ncpu);
			if (ret)
				return ret;
		}
	}
	cpus = es->cpu;
	attr.disabled = 1;		/* enabled just before sampling starts */
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;		/* LOST records carry a time */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	es->len = (size_t)(1 + EV_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	es->fd = calloc(ncpu, sizeof(*es->fd));
	es->base = calloc(ncpu, sizeof(*es->base));
	if (!es->fd || !es->base)
		return rec_fail(-ENOMEM);
	for (i = 0; i < ncpu; i++) {
		long fd = ev_open(&attr, cpus[i]);
		int e = errno;

		if (fd < 0) {
			if (e == EACCES || e == EPERM)
				fprintf(stderr, "hwtel record: error: --event '%s': no permission to open it system-wide (%s): needs CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8) or root\n",
					def, strerror(e));
			else if (!tp && (e == EOPNOTSUPP || e == EINVAL))
				fprintf(stderr, "hwtel record: error: --event '%s': PMU %s cannot sample this event (%s): an --event needs a record per occurrence\n",
					def, spec, strerror(e));
			else if (e == EMFILE)
				fprintf(stderr, "hwtel record: error: --event '%s': cannot open it on CPU %d: %s (one descriptor per online CPU, %u of them: raise the limit, ulimit -n)\n",
					def, cpus[i], strerror(e), ncpu);
			else
				fprintf(stderr, "hwtel record: error: --event '%s': cannot open it on CPU %d: %s\n",
					def, cpus[i], strerror(e));
			return e == EACCES || e == EPERM ? HWTEL_EXIT_PERM :
			       e == EINVAL || e == EOPNOTSUPP ? HWTEL_EXIT_USAGE : HWTEL_EXIT_FAIL;
		}
		es->fd[es->nfd++] = (int)fd;
		if (filter && ioctl((int)fd, PERF_EVENT_IOC_SET_FILTER, filter))
			return filter_error(def, filter, spec, fmt, errno);
		es->base[i] = mmap(NULL, es->len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (es->base[i] == MAP_FAILED) {
			es->base[i] = NULL;
			fprintf(stderr, "hwtel record: error: --event '%s': cannot map its ring: %s\n",
				def, strerror(errno));
			return HWTEL_EXIT_FAIL;
		}
	}
	return -1;
}

/* Every record in @es's rings to the engine as event @idx: a sample is one
 * occurrence at its time, a LOST record that many at its time and a gap of
 * them there, a THROTTLE record a throttle gap at its time (an UNTHROTTLE
 * says nothing the gap does not)
 */
int hwtel_rec_ring_drain(void *base, size_t len, size_t page, struct rec_engine *eng,
			 unsigned int idx, uint64_t *lost, uint64_t *throttled)
{
	struct perf_event_mmap_page *pg = base;
	/* data_offset and data_size are 0 before Linux 4.1: page 1 on */
	const unsigned char *data = (const unsigned char *)base +
				    (pg->data_size ? pg->data_offset : page);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail, size = pg->data_size ? pg->data_size : len - page;
	int ret = 0;

	while (tail < head && !ret) {
		unsigned char rec[32] = { 0 };
		struct perf_event_header hdr;
		uint64_t k, v[3];

		memcpy(&hdr, data + tail % size, sizeof(hdr));	/* 8-aligned: never split */
		if (hdr.size < sizeof(hdr))
			break;
		/* the payload may wrap at the end of the data area */
		for (k = 0; k < sizeof(rec) && k < hdr.size; k++)
			rec[k] = data[(tail + k) % size];
		memcpy(v, rec + sizeof(hdr), sizeof(v));
		if (hdr.type == PERF_RECORD_SAMPLE && hdr.size >= 16) {
			ret = rec_engine_event(eng, idx, v[0], 1);	/* time */
		} else if (hdr.type == PERF_RECORD_LOST && hdr.size >= 32) {
			/* id, lost, time: that many occurrences, and a gap */
			*lost += v[1];
			ret = rec_engine_event(eng, idx, v[2], v[1]);
			if (!ret)
				ret = rec_engine_event_gap(eng, idx, v[2], REC_GAP_LOST, v[1]);
		} else if (hdr.type == PERF_RECORD_THROTTLE && hdr.size >= 32) {
			/* time, id, stream_id: stopped until the unthrottle */
			(*throttled)++;
			ret = rec_engine_event_gap(eng, idx, v[0], REC_GAP_THROTTLED, 1);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return ret;
}

static int drain_event(struct evsrc *es, unsigned int idx, struct rec_engine *eng)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < es->nfd && !ret; i++)
		ret = hwtel_rec_ring_drain(es->base[i], es->len, es->len / (1 + EV_PAGES), eng,
					   idx, &es->lost, &es->throttled);
	return ret;
}

static void close_event(struct evsrc *es)
{
	unsigned int i;

	for (i = 0; i < es->nfd; i++) {
		if (es->base && es->base[i])
			munmap(es->base[i], es->len);
		close(es->fd[i]);
	}
	free(es->fd);
	free(es->base);
	free(es->cpu);
}

static void free_sources(struct recorder *r)
{
	unsigned int i;

	for (i = 0; i < r->nev; i++)
		close_event(&r->ev[i]);
	for (i = 0; i < r->nsrc; i++) {
		struct source *s = &r->src[i];

		hwtel_pcie_close(s->pcie);
		hwtel_ddr_close(s->ddr);
		if (s->g)
			hwtel_group_free(s->g);
		hwtel_pmu_close(s->pmu);
		hwtel_pcie_data_free(s->pa);
		hwtel_pcie_data_free(s->pb);
		hwtel_pcie_data_free(s->pd);
		hwtel_ddr_data_free(s->da);
		hwtel_ddr_data_free(s->db);
		hwtel_ddr_data_free(s->dd);
		free(s->vals);
	}
	free(r->m);
}

static bool default_stored(const char *n)
{
	return !fnmatch("*.used_pct", n, 0) || !fnmatch("*.gbps", n, 0) ||
	       !strcmp(n, "pcie.untrusted") ||
	       !fnmatch("ddr*_gbps", n, 0) || !fnmatch("perf.*", n, 0);
}

/* does the condition text @t name metric @n (a whole name token)? */
static bool names_metric(const char *t, const char *n)
{
	size_t len = strlen(n);
	const char *p = t;

	while ((p = strstr(p, n))) {
		char before = p == t ? ' ' : p[-1], after = p[len];

		if (!(before == '_' || before == '.' || (before >= 'a' && before <= 'z') ||
		      (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9')) &&
		    !(after == '_' || after == '.' || (after >= 'a' && after <= 'z') ||
		      (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9')))
			return true;
		p += len;
	}
	return false;
}

static int write_open_error(const char *path)
{
	fprintf(stderr, "hwtel record: error: cannot write the capture file %s: %s\n", path,
		strerror(errno));
	return HWTEL_EXIT_USAGE;
}

/*
 * With a pre-trigger ring the capture file holds it, preallocated and
 * mapped shared: a FIFO, a device or a socket cannot (mmap fails with
 * ENODEV, or maps a device's memory). Status 2 before anything is opened
 * or written; a directory is left to open(2)'s EISDIR.
 */
static bool ring_file_refused(const char *path, const struct stat *st)
{
	const char *what = S_ISFIFO(st->st_mode) ? "a FIFO" :
			   S_ISCHR(st->st_mode) ? "a character device" :
			   S_ISBLK(st->st_mode) ? "a block device" :
			   S_ISSOCK(st->st_mode) ? "a socket" : NULL;

	if (!what)
		return false;
	fprintf(stderr, "hwtel record: error: cannot write the capture file %s: it is %s, and the pre-trigger ring lives in the capture file, mapped shared, which needs a regular file: name a regular file (and copy it where it should go afterwards), or use --position begin (no pre-trigger ring)\n",
		path, what);
	return true;
}

static uint64_t mono_now(void)
{
	return hwtel_now_ns();
}

static bool rec_sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	for (;;) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r == 0)
			return true;
		if (r != EINTR)
			return false;
		if (rec_stop)
			return false;
		/* SIGUSR1 / SIGCHLD: keep the sample grid, sleep on */
	}
}

static int rec_fail(int err)
{
	const char *msg = hwtel_last_error();

	if (err <= -1000)
		return HWTEL_EXIT_USAGE;
	fprintf(stderr, "hwtel record: error: %s\n", msg && *msg ? msg : strerror(-err));
	return hwtel_exit_status(err);
}

int hwtel_record_main(int argc, char **argv)
{
	static struct rec_opts o;
	struct recorder r = { .o = &o };
	struct rec_engine *eng = NULL;
	struct rec_writer *w = NULL;
	struct rec_sink sink = { 0 };
	struct rec_header h = { 0 };
	char (*tracks)[REC_NAME_MAX] = NULL;
	const char **mnames = NULL;
	double *vals = NULL;
	char err[512];
	unsigned int i, nstored = 0;
	uint64_t t_next, t_start, t_synced, overruns = 0, stale_reads = 0, period;
	pid_t child = -1;
	int ret, status = HWTEL_EXIT_OK, child_status = 0, fd = -1, st = REC_ARMED;
	bool command_done = false, io_failed = false;
	struct sigaction sa;
	struct stat ost;

	ret = parse_rec_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	/* a capture file that cannot hold the ring: refused, left untouched */
	if (!o.list && rec_pre_count(o.capacity, o.position) && !stat(o.out, &ost) &&
	    ring_file_refused(o.out, &ost))
		return HWTEL_EXIT_USAGE;
	/* before the capture file exists: a SIGUSR1 sent once it does is ours */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	/* sources */
	for (i = 0; i < o.nsrc; i++) {
		ret = open_source(&r, i, o.src[i], o.src_standby[i]);
		r.nsrc = i + 1;
		if (ret) {
			status = rec_fail(ret);
			goto out;
		}
	}
	ret = open_perf_groups(&r);
	if (ret) {
		status = rec_fail(ret);
		goto out;
	}
	for (i = 0; i < o.nevent && !o.list; i++) {
		r.nev = i + 1;
		status = open_event(&r.ev[i], o.event[i]);
		if (status >= 0)
			goto out;
		status = HWTEL_EXIT_OK;
	}
	if (o.list) {
		for (i = 0; i < r.nmetrics; i++)
			printf("%s\n", r.m[i].name);
		goto out;
	}
	/* stored metrics: -m patterns (or the defaults) and every named one */
	for (i = 0; i < r.nmetrics; i++) {
		struct metric *m = &r.m[i];
		unsigned int k;

		if (o.npat) {
			for (k = 0; k < o.npat; k++)
				if (!fnmatch(o.pat[k], m->name, 0))
					m->stored = true;
		} else {
			m->stored = default_stored(m->name);
		}
		if (o.trigger && names_metric(o.trigger, m->name))
			m->stored = true;
		for (k = 0; k < o.ncounter; k++)
			if (names_metric(o.counter[k], m->name))
				m->stored = true;
		for (k = 0; k < o.nfeedback; k++)
			if (names_metric(o.feedback[k], m->name))
				m->stored = true;
		if (m->stored && nstored < REC_MAX_METRICS)
			m->slot = (int)nstored++;
		else
			m->stored = false;
	}
	if (o.npat && !nstored) {
		fprintf(stderr, "hwtel record: error: no metric matches the -m patterns (hwtel record --list shows them)\n");
		status = HWTEL_EXIT_USAGE;
		goto out;
	}
	mnames = calloc(nstored ? nstored : 1, sizeof(*mnames));
	vals = calloc(nstored ? nstored : 1, sizeof(*vals));
	if (!mnames || !vals) {
		status = rec_fail(-ENOMEM);
		goto out;
	}
	for (i = 0; i < r.nmetrics; i++)
		if (r.m[i].stored)
			mnames[r.m[i].slot] = r.m[i].name;
	{
		struct rec_config cfg = { .capacity = o.capacity, .position = o.position,
					  .shots = o.shots, .period_ns = o.period_ns,
					  .nmetrics = nstored, .metric = mnames };

		eng = rec_engine_new(&cfg, err, sizeof(err));
		if (!eng) {
			fprintf(stderr, "hwtel record: error: %s\n", err);
			status = HWTEL_EXIT_USAGE;
			goto out;
		}
	}
	for (i = 0; i < r.nev; i++) {
		if (rec_engine_add_event(eng, r.ev[i].name, err, sizeof(err))) {
			fprintf(stderr, "hwtel record: error: --event: %s\n", err);
			status = HWTEL_EXIT_USAGE;
			goto out;
		}
	}
	for (i = 0; i < o.ncounter; i++) {
		if (rec_engine_add_counter(eng, o.counter[i], err, sizeof(err))) {
			fprintf(stderr, "hwtel record: error: --counter: %s\n", err);
			status = HWTEL_EXIT_USAGE;
			goto out;
		}
	}
	if (o.trigger && rec_engine_set_trigger(eng, o.trigger, err, sizeof(err))) {
		fprintf(stderr, "hwtel record: error: --trigger '%s': %s\n", o.trigger, err);
		status = HWTEL_EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < o.nfeedback; i++) {
		if (rec_engine_add_feedback(eng, o.feedback[i], err, sizeof(err))) {
			fprintf(stderr, "hwtel record: error: --feedback: %s\n", err);
			status = HWTEL_EXIT_USAGE;
			goto out;
		}
	}
	for (i = 0; i < o.nontrig; i++) {
		if (rec_engine_add_on_trigger(eng, o.ontrig[i], err, sizeof(err))) {
			fprintf(stderr, "hwtel record: error: --on-trigger: %s\n", err);
			status = HWTEL_EXIT_USAGE;
			goto out;
		}
	}
	/*
	 * 'disable SET' must name the set of a source; 'enable SET' a set of
	 * --standby sources or one that a 'disable' stops
	 */
	{
		struct rec_action a[2 * MAX_DEFS];
		const char *texts[2 * MAX_DEFS];
		unsigned int n = 0, k, j;

		for (k = 0; k < o.nfeedback; k++)
			texts[n++] = strstr(o.feedback[k], "=>") + 2;
		for (k = 0; k < o.nontrig; k++)
			texts[n++] = o.ontrig[k];
		for (k = 0; k < n; k++)
			rec_action_parse(texts[k], &a[k], NULL, 0);
		for (k = 0; k < n; k++) {
			bool found = false;

			if (a[k].kind != REC_ACT_ENABLE && a[k].kind != REC_ACT_DISABLE)
				continue;
			for (j = 0; j < r.nsrc; j++)
				if (!strcmp(r.src[j].set, a[k].set) &&
				    (a[k].kind == REC_ACT_DISABLE || r.src[j].standby))
					found = true;
			for (j = 0; j < n && a[k].kind == REC_ACT_ENABLE; j++)
				if (a[j].kind == REC_ACT_DISABLE && !strcmp(a[j].set, a[k].set))
					found = true;
			if (!found) {
				if (a[k].kind == REC_ACT_ENABLE)
					fprintf(stderr, "hwtel record: error: 'enable %s': no --standby source of set '%s' and no 'disable %s'\n",
						a[k].set, a[k].set, a[k].set);
				else
					fprintf(stderr, "hwtel record: error: 'disable %s': no source of set '%s'\n",
						a[k].set, a[k].set);
				status = HWTEL_EXIT_USAGE;
				goto out;
			}
		}
	}
	/* the capture file, once everything else is known to be right */
	/* read and write: the file ring is mapped shared */
	fd = open(o.out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		status = write_open_error(o.out);
		goto out;
	}
	/* replaced by a FIFO or a device since the check above */
	if (rec_pre_count(o.capacity, o.position) && !fstat(fd, &ost) &&
	    ring_file_refused(o.out, &ost)) {
		close(fd);
		status = HWTEL_EXIT_USAGE;
		goto out;
	}
	h.period_ns = o.period_ns;
	h.capacity = o.capacity;
	h.pre = rec_pre_count(o.capacity, o.position);
	/* the pre-trigger ring lives in the file too, one slot more than it
	 * keeps: a sample is written into a slot no longer kept
	 */
	h.ring_slots = h.pre ? h.pre + 1 : 0;
	/* and each slot carries its sample's events, as the records do */
	h.nring_events = rec_engine_nevents(eng);
	for (i = 0; i < h.nring_events; i++)
		h.ring_event_track[i] = rec_engine_event_track(eng, i);
	h.shots = o.shots;
	h.position = o.position;
	snprintf(h.clock, sizeof(h.clock), "ns");
	snprintf(h.command, sizeof(h.command), "%s", o.cmdline);
	h.ntracks = rec_engine_ntracks(eng);
	tracks = calloc(h.ntracks ? h.ntracks : 1, sizeof(*tracks));
	if (!tracks) {
		close(fd);
		status = rec_fail(-ENOMEM);
		goto out;
	}
	for (i = 0; i < h.ntracks; i++)
		snprintf(tracks[i], REC_NAME_MAX, "%s", rec_engine_track(eng, i));
	h.track = tracks;
	ret = rec_writer_open(fd, &h, &w);
	if (ret) {
		errno = -ret;
		status = write_open_error(o.out);
		goto out;
	}
	rec_writer_sink(w, &sink);

	/*
	 * The --event counters start now, not at their open (before the
	 * sources and the file were set up): occurrences before the first
	 * sample's interval would all land on it. The command's start counts.
	 */
	for (i = 0; i < r.nev; i++) {
		unsigned int k;

		for (k = 0; k < r.ev[i].nfd; k++)
			if (ioctl(r.ev[i].fd[k], PERF_EVENT_IOC_ENABLE, 0)) {
				fprintf(stderr, "hwtel record: error: --event %s: cannot enable it: %s\n",
					r.ev[i].name, strerror(errno));
				status = HWTEL_EXIT_FAIL;
				goto out;
			}
	}

	if (o.command) {
		sa.sa_handler = on_chld;
		sigaction(SIGCHLD, &sa, NULL);
		signal(SIGINT, SIG_IGN);
		child = fork();
		if (child < 0) {
			status = HWTEL_EXIT_CHILD;
			goto out;
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGUSR1, SIG_DFL);
			execvp(o.command[0], o.command);
			fprintf(stderr, "hwtel: error: cannot run %s: %s\n", o.command[0], strerror(errno));
			_exit(127);
		}
	}
	/* the first reading is every source's base */
	for (i = 0; i < r.nsrc; i++)
		if (r.src[i].enabled && read_source(&r.src[i])) {
			status = rec_fail(-EIO);
			goto out;
		}
	t_start = mono_now();
	t_synced = t_start;
	period = o.period_ns;
	t_next = t_start + period;
	while (st != REC_DONE) {
		struct rec_action acts[16];
		unsigned int nacts = 0, k;
		enum rec_cause ext = REC_CAUSE_NONE;
		uint64_t t0, t1;
		unsigned int nstale;

		if (!rec_sleep_until(t_next) || rec_stop)
			break;
		t0 = mono_now();
		if (t0 >= t_next + period) {
			/* woke late (preempted, stopped): the slots passed are a
			 * gap before this sample, which takes the latest slot
			 */
			uint64_t miss = (t0 - t_next) / period;

			rec_engine_gap(eng, t_next, REC_GAP_LATE, miss);
			overruns += miss;
			t_next += miss * period;
		}
		nstale = 0;
		for (i = 0; i < r.nsrc; i++) {
			if (!r.src[i].enabled)
				continue;
			ret = read_source(&r.src[i]);
			if (ret) {
				status = rec_fail(ret);
				io_failed = true;
				goto finish;
			}
			nstale += r.src[i].stale;
		}
		t1 = mono_now();
		/* reads with no new snapshot: a gap at this sample */
		rec_engine_gap(eng, t0 + (t1 - t0) / 2, REC_GAP_STALE, nstale);
		stale_reads += nstale;
		for (i = 0; i < r.nmetrics; i++) {
			const struct metric *m = &r.m[i];

			if (m->stored)
				vals[m->slot] = r.src[m->src].enabled ? r.src[m->src].vals[m->sel] : NAN;
		}
		if (rec_usr1) {
			rec_usr1 = 0;
			ext = REC_CAUSE_SIGNAL;
		}
		if (child > 0 && rec_child && !command_done) {
			int wst;

			if (waitpid(child, &wst, WNOHANG) == child) {
				command_done = true;
				child_status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
				ext = REC_CAUSE_COMMAND;
			}
			rec_child = 0;
		}
		/* after the reads: every event up to this sample's time is in
		 * its ring (later ones wait in the engine for the next sample)
		 */
		for (i = 0; i < r.nev; i++) {
			ret = drain_event(&r.ev[i], i, eng);
			if (ret) {
				status = rec_fail(ret);
				io_failed = true;
				goto finish;
			}
		}
		st = rec_engine_push(eng, t0 + (t1 - t0) / 2, vals, ext, acts, 16, &nacts, &sink);
		/*
		 * The records of this sample (a flushed ring, a sample after
		 * the trigger) go to the kernel now: a SIGKILL keeps them, and a
		 * reader takes from the file ring only what they lack
		 */
		if (st >= 0) {
			bool due = o.sync_ns && t0 - t_synced >= o.sync_ns;

			ret = due ? rec_writer_sync(w) : rec_writer_flush(w);
			if (ret)
				st = ret;
			if (due)
				t_synced = t0;
		}
		if (st < 0) {
			fprintf(stderr, "hwtel record: error: writing %s: %s\n", o.out, strerror(-st));
			status = HWTEL_EXIT_FAIL;
			io_failed = true;
			goto finish;
		}
		/* 'period' is the engine's (rec_engine_period()); the sets here */
		for (k = 0; k < nacts; k++) {
			for (i = 0; i < r.nsrc; i++) {
				struct source *s = &r.src[i];

				if (!s->set[0] || strcmp(s->set, acts[k].set))
					continue;
				if (acts[k].kind == REC_ACT_DISABLE) {
					s->enabled = false;
				} else if (acts[k].kind == REC_ACT_ENABLE && !s->enabled) {
					/* a base reading now, values from the next sample */
					s->enabled = true;
					s->have_prev = false;
					if (read_source(s))
						s->enabled = false;
				}
			}
		}
		period = rec_engine_period(eng);
		t_next += period;
		t1 = mono_now();
		if (t_next <= t1) {
			/* overrun: keep the grid, skip the missed slots (a gap
			 * before the next sample)
			 */
			uint64_t miss = (t1 - t_next) / period + 1;

			rec_engine_gap(eng, t_next, REC_GAP_LATE, miss);
			overruns += miss;
			t_next += miss * period;
		}
		if (o.max_seconds > 0 && t1 - t_start >= (uint64_t)(o.max_seconds * 1e9))
			break;
		if (command_done && st == REC_ARMED)
			break;
	}
finish:
	if (!io_failed) {
		ret = rec_engine_finish(eng, &sink);
		if (ret) {
			fprintf(stderr, "hwtel record: error: writing %s: %s\n", o.out, strerror(-ret));
			status = HWTEL_EXIT_FAIL;
			io_failed = true;
		}
	}
	ret = rec_writer_close(w, !io_failed);
	w = NULL;
	if (ret && !io_failed) {
		fprintf(stderr, "hwtel record: error: writing %s: %s\n", o.out, strerror(-ret));
		status = HWTEL_EXIT_FAIL;
		io_failed = true;
	}
	if (io_failed)
		fprintf(stderr, "hwtel record: %s is incomplete (readable up to its last whole record)\n",
			o.out);
	else if (!o.quiet)
		fprintf(stderr, "hwtel record: %u shot%s of %u, %llu samples taken, %llu periods missed, %llu stale reads; %s\n",
			rec_engine_shots_done(eng), rec_engine_shots_done(eng) == 1 ? "" : "s",
			o.shots, (unsigned long long)rec_engine_index(eng),
			(unsigned long long)overruns, (unsigned long long)stale_reads, o.out);
	for (i = 0; i < r.nev && !o.quiet; i++)
		if (r.ev[i].lost)
			fprintf(stderr, "hwtel record: --event %s: %llu occurrences had no room in the ring (counted at the sample of the loss record)\n",
				r.ev[i].name, (unsigned long long)r.ev[i].lost);
	for (i = 0; i < r.nev && !o.quiet; i++)
		if (r.ev[i].throttled)
			fprintf(stderr, "hwtel record: --event %s: the kernel throttled it %llu time%s (its occurrences until the unthrottle neither recorded nor counted)\n",
				r.ev[i].name, (unsigned long long)r.ev[i].throttled,
				r.ev[i].throttled == 1 ? "" : "s");
	if (child > 0 && !command_done) {
		int wst;

		while (waitpid(child, &wst, 0) < 0 && errno == EINTR)
			;
		child_status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	}
	if (child > 0 && status == HWTEL_EXIT_OK)
		status = child_status == 127 ? HWTEL_EXIT_CHILD : child_status;
out:
	if (w)
		rec_writer_close(w, false);
	rec_engine_free(eng);
	free(tracks);
	free(mnames);
	free(vals);
	free_sources(&r);
	return status;
}

/* ------------------------------------------------------------------ */
/* hwtel report                                                       */

static void rep_usage(FILE *f)
{
	fputs("usage: hwtel report FILE [--text | --csv | --json | --trace | --svg]\n"
	      "                    [-m PATTERN]... [--shot K] [--context N] [-o OUT]\n"
	      "\n"
	      "  --text        timeline around the trigger, marked '>>' (default)\n"
	      "  --csv         one row per sample\n"
	      "  --json        the whole capture\n"
	      "  --trace       Chrome/Perfetto trace-event JSON, one counter track per metric\n"
	      "  --svg         plot of the chosen metrics, the pre-trigger part shaded and\n"
	      "                the trigger drawn\n"
	      "  -m PATTERN    tracks to show (shell pattern; default all)\n"
	      "  --shot K      one shot only\n"
	      "  --context N   text: N samples either side of the trigger (default 10,\n"
	      "                0 = all)\n"
	      "  -o OUT        write to OUT instead of stdout\n", f);
}

int hwtel_report_main(int argc, char **argv)
{
	enum { O_TEXT = 256, O_CSV, O_JSON, O_TRACE, O_SVG, O_SHOT, O_CTX };
	static const struct option lopts[] = {
		{ "text", no_argument, NULL, O_TEXT },
		{ "csv", no_argument, NULL, O_CSV },
		{ "json", no_argument, NULL, O_JSON },
		{ "trace", no_argument, NULL, O_TRACE },
		{ "svg", no_argument, NULL, O_SVG },
		{ "shot", required_argument, NULL, O_SHOT },
		{ "context", required_argument, NULL, O_CTX },
		{ "metrics", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_view_opts vo = { .view = REC_VIEW_TEXT, .context = 10, .shot = -1 };
	const char *pat[MAX_PAT], *out = NULL;
	unsigned int npat = 0, i, k;
	struct rec_capture c;
	char err[256], *end, *text = NULL;
	FILE *f = stdout;
	size_t len = 0;
	int ch, ret, nviews = 0;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":m:o:h", lopts, NULL)) != -1) {
		switch (ch) {
		case O_TEXT:
		case O_CSV:
		case O_JSON:
		case O_TRACE:
		case O_SVG:
			vo.view = (enum rec_view)(ch - O_TEXT);
			nviews++;
			break;
		case O_SHOT:
		case O_CTX: {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || v > 100000000ul) {
				fprintf(stderr, "hwtel report: error: --%s: invalid value '%s'\n",
					ch == O_SHOT ? "shot" : "context", optarg);
				return HWTEL_EXIT_USAGE;
			}
			if (ch == O_SHOT)
				vo.shot = (int)v;
			else
				vo.context = (unsigned int)v;
			break;
		}
		case 'm':
			if (npat >= MAX_PAT) {
				fprintf(stderr, "hwtel report: error: more than 32 -m patterns\n");
				return HWTEL_EXIT_USAGE;
			}
			pat[npat++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			rep_usage(stdout);
			return HWTEL_EXIT_OK;
		case ':':
			fprintf(stderr, "hwtel report: error: option '%s' needs an argument\n", argv[optind - 1]);
			return HWTEL_EXIT_USAGE;
		default:
			fprintf(stderr, "hwtel report: error: unrecognized option '%s'\n", argv[optind - 1]);
			rep_usage(stderr);
			return HWTEL_EXIT_USAGE;
		}
	}
	if (nviews > 1) {
		fprintf(stderr, "hwtel report: error: choose one of --text, --csv, --json, --trace, --svg\n");
		return HWTEL_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "hwtel report: error: %s\n", optind >= argc ? "no capture FILE given" :
			"one capture FILE only");
		rep_usage(stderr);
		return HWTEL_EXIT_USAGE;
	}
	err[0] = '\0';
	ret = rec_read(argv[optind], &c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "hwtel report: error: %s: %s\n", argv[optind],
			err[0] ? err : strerror(-ret));
		return ret == -ENOENT || ret == -EACCES ? HWTEL_EXIT_FAIL : HWTEL_EXIT_USAGE;
	}
	if (!c.complete && err[0])
		fprintf(stderr, "hwtel report: warning: %s: %s\n", argv[optind], err);
	if (!c.complete && c.version == 3)
		fprintf(stderr, "hwtel report: warning: %s is incomplete, an unfinished capture (no end record: its recorder did not close it, or the file was cut): shown up to its last whole record (%zu of its %zu bytes), then %u samples from its file ring (%u torn slots skipped)\n",
			argv[optind], c.good_bytes, c.bytes, c.recovered, c.ring_torn);
	else if (!c.complete)
		fprintf(stderr, "hwtel report: warning: %s is incomplete: %zu of its %zu bytes are whole records (no end record); shown up to the last whole record\n",
			argv[optind], c.good_bytes, c.bytes);
	if (npat) {
		for (i = 0; i < c.h.ntracks && vo.nsel < 64; i++)
			for (k = 0; k < npat; k++)
				if (!fnmatch(pat[k], c.h.track[i], 0)) {
					vo.sel[vo.nsel++] = i;
					break;
				}
		if (!vo.nsel) {
			fprintf(stderr, "hwtel report: error: no track of %s matches the -m patterns\n",
				argv[optind]);
			rec_capture_free(&c);
			return HWTEL_EXIT_USAGE;
		}
	}
	if (vo.shot >= 0) {
		bool found = false;

		for (i = 0; i < c.nshots; i++)
			if (c.shots[i].number == (unsigned int)vo.shot)
				found = true;
		if (!found) {
			fprintf(stderr, "hwtel report: error: %s has no shot %d\n", argv[optind], vo.shot);
			rec_capture_free(&c);
			return HWTEL_EXIT_USAGE;
		}
	}
	if (out) {
		/*
		 * Rendered whole in memory, then written by hwtel_write_atomic():
		 * a regular file is replaced atomically, anything else (a device,
		 * a FIFO) is written in place, never replaced by a file.
		 */
		f = open_memstream(&text, &len);
		if (!f) {
			rec_capture_free(&c);
			fprintf(stderr, "hwtel report: error: %s\n", strerror(errno));
			return HWTEL_EXIT_FAIL;
		}
	}
	ret = rec_view(f, &c, &vo);
	if (!out) {
		int w = hwtel_stdout_flush();

		if (w)
			ret = w;	/* the write's errno, not the view's EIO */
	} else if (fflush(f) && !ret) {
		ret = -EIO;
	}
	if (out) {
		if (fclose(f) && !ret)
			ret = -ENOMEM;
		if (!ret) {
			ret = hwtel_write_atomic(out, text, len);
			if (ret) {
				fprintf(stderr, "hwtel report: error: %s\n", hwtel_last_error());
				free(text);
				rec_capture_free(&c);
				return HWTEL_EXIT_FAIL;
			}
		}
		free(text);
	}
	rec_capture_free(&c);
	if (ret && !out)
		return hwtel_output_error(ret);
	if (ret) {
		fprintf(stderr, "hwtel report: error: writing %s: %s\n", out, strerror(-ret));
		return HWTEL_EXIT_FAIL;
	}
	return HWTEL_EXIT_OK;
}
