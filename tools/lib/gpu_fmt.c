// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: output of the GPU power report ("GPU power consumers"): text,
 * JSON, CSV and the node_exporter textfile.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libhwtel/gpu.h>

#include "internal.h"

/* Unit k of the report: the Mali units, or the DRM source's engines */
static const char *unit_name(const struct hwtel_gpu_report *r, unsigned int k)
{
	return r->unit_names ? r->unit_names[k] : hwtel_gpu_unit_name(k);
}

static bool is_drm(const struct hwtel_gpu_report *r)
{
	return r->source && !strcmp(r->source, "drm");
}

static unsigned int used_units(const struct hwtel_gpu_report *r, bool *used)
{
	unsigned int k, n = 0;

	for (k = 0; k < r->nunits; k++) {
		/* GP0 and PP0 always, the other PPs when they ran something;
		 * every engine of the DRM source
		 */
		if (is_drm(r))
			used[k] = true;
		else
			used[k] = k < 2 || r->busy_ns[k] || r->jobs[k];
		n += used[k];
	}
	return n;
}

static uint64_t jobs_of(const struct hwtel_gpu_report *r, const uint64_t *jobs)
{
	uint64_t n = 0;
	unsigned int k;

	for (k = 0; k < r->nunits; k++)
		n += jobs[k];
	return n;
}

static uint64_t unbilled_of(const struct hwtel_gpu_report *r)
{
	uint64_t n = 0;
	unsigned int k;

	for (k = 0; k < r->nunits; k++)
		n += r->unbilled_ns[k];
	return n;
}

/* The stream lost events (record gaps): every format says so, only then */
static bool lost_any(const struct hwtel_gpu_report *r)
{
	return r->lost_stops || r->lost_starts || unbilled_of(r);
}

static void name_of(const struct hwtel_gpu_consumer *c, char *buf, size_t size)
{
	if (c->comm[0])
		snprintf(buf, size, "%s", c->comm);
	else
		snprintf(buf, size, "[%d]", c->pid);
}

/* @v / @div with the fraction's trailing zeros left out */
static void decimal(char *buf, size_t size, uint64_t v, uint64_t div)
{
	uint64_t frac = v % div;
	int width = div == 1000000u ? 6 : 3;
	size_t n;

	if (!frac) {
		snprintf(buf, size, "%" PRIu64, v / div);
		return;
	}
	snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64, v / div, width, frac);
	n = strlen(buf);
	while (n && buf[n - 1] == '0')
		buf[--n] = '\0';
}

static void upj_str(uint64_t upj, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 ".%06" PRIu64, upj / 1000000, upj % 1000000);
}

static int gpu_format_text_c(FILE *f, const struct hwtel_gpu_report *r)
{
	bool used[r->nunits ? r->nunits : 1], reused = false;
	char name[40], e[40];
	unsigned int i, k;

	hwtel_clear_error();
	fputs("GPU power consumers\n===================\n", f);
	fprintf(f, "Measured over %.3f s; 1 PW = one unit busy at %u MHz and 1 V\n",
		r->seconds, HWTEL_GPU_REF_MHZ);
	if (is_drm(r))
		fputs("Source: DRM fdinfo usage stats and devfreq; busy ms per engine, jobs not counted\n", f);
	if (r->opp_known) {
		char mhz[32], mv[32];

		/* exact when the source gave Hz and uV */
		decimal(mhz, sizeof(mhz), r->opp_hz ? r->opp_hz : r->opp.mhz * 1000000ull, 1000000u);
		decimal(mv, sizeof(mv), r->opp_uv ? r->opp_uv : r->opp.mv * 1000ull, 1000u);
		fprintf(f, "Operating point at the end: %s MHz, %s mV\n", mhz, mv);
	} else {
		fputs("Operating point at the end: unknown\n", f);
	}
	fputc('\n', f);
	used_units(r, used);
	fprintf(f, "%7s  %-16s", "PID", "Name");
	for (k = 0; k < r->nunits; k++) {
		if (!used[k])
			continue;
		if (is_drm(r))
			fprintf(f, " %9.9s", unit_name(r, k));
		else
			fprintf(f, " %6s ms", unit_name(r, k));
	}
	fprintf(f, " %6s %14s %10s %7s  %s\n", "Jobs", "Energy PJ", "Mean PW", "Share",
		"Command line");
	for (i = 0; i < r->nconsumers; i++) {
		const struct hwtel_gpu_consumer *c = &r->consumers[i];

		if (c->life)
			reused = true;
		name_of(c, name, sizeof(name));
		upj_str(c->energy_upj, e, sizeof(e));
		fprintf(f, "%7d  %-16.16s", c->pid, name);
		for (k = 0; k < r->nunits; k++)
			if (used[k])
				fprintf(f, " %9.3f", (double)c->busy_ns[k] / 1e6);
		fprintf(f, " %6" PRIu64 " %14s %10.6f %6.2f%%  %s\n", jobs_of(r, c->jobs), e,
			c->mean_pw, 100.0 * c->share, c->cmdline[0] ? c->cmdline : "-");
	}
	upj_str(r->energy_upj, e, sizeof(e));
	fprintf(f, "%7s  %-16s", "", "GPU total");
	for (k = 0; k < r->nunits; k++)
		if (used[k])
			fprintf(f, " %9.3f", (double)r->busy_ns[k] / 1e6);
	fprintf(f, " %6" PRIu64 " %14s %10.6f %6.2f%%\n", jobs_of(r, r->jobs), e, r->mean_pw,
		r->energy_upj ? 100.0 : 0.0);
	if (r->unattributed_ns) {
		fprintf(f, "\nUnattributed energy: %.3f ms of jobs ran before the first known operating point",
			(double)r->unattributed_ns / 1e6);
		if (r->unattributed_priced) {
			upj_str(r->unattributed_upj, e, sizeof(e));
			fprintf(f, ";\n  about %s PJ at the first one seen, not in the shares (see --initial-opp)\n",
				e);
		} else {
			fputs(";\n  no operating point is known yet (see --initial-opp)\n", f);
		}
	}
	if (lost_any(r)) {
		fprintf(f, "\nLost events: %lu job%s running at a record gap had no STOP after it: closed at the gap;\n  %.3f ms after the gap not billed",
			r->lost_stops, r->lost_stops == 1 ? "" : "s", (double)unbilled_of(r) / 1e6);
		if (r->lost_starts)
			fprintf(f, ";\n  %lu STOP%s after a record gap had no START: not billed",
				r->lost_starts, r->lost_starts == 1 ? "" : "s");
		fputc('\n', f);
	}
	if (r->carried_ns)
		fprintf(f, "\nDVFS: %.3f ms priced after a lone frequency or voltage event, at its value and\n  the other value in force before it (not in an OPP table, its other half not seen yet)\n",
			(double)r->carried_ns / 1e6);
	if (r->overflows)
		fprintf(f, "\nDriver buffer full: %lu recording%s filled it (the events after %s last one were dropped);\n  %s last %.3f ms %s unknown: jobs open then are billed up to %s last event\n",
			r->overflows, r->overflows == 1 ? "" : "s", r->overflows == 1 ? "its" : "their",
			r->overflows == 1 ? "its" : "their", (double)r->overflow_ns / 1e6,
			r->overflows == 1 ? "are" : "together are",
			r->overflows == 1 ? "its" : "each one's");
	if (reused)
		fputs("\nA PID was reused during the capture: one row per process.\n", f);
	if (is_drm(r) && r->estimated_ns) {
		upj_str(r->bound_upj, e, sizeof(e));
		fprintf(f, "\nEstimated: %.3f ms of busy time at more than two operating points in one sample period,\n  priced by the device's time in each; error at most %s PJ\n",
			(double)r->estimated_ns / 1e6, e);
	}
	if (is_drm(r) && r->clients_lost)
		fprintf(f, "\n%lu DRM clients closed before their last read: their usage since the previous sample is lost\n",
			r->clients_lost);
	if (is_drm(r) && r->fdinfo_malformed)
		fprintf(f, "\nfdinfo: %lu malformed lines skipped (details on stderr)\n",
			r->fdinfo_malformed);
	/* a START while a job runs is a queued job, not an anomaly */
	if (r->malformed || r->out_of_order || r->stop_without_start)
		fprintf(f, "\nEvent stream: %lu lines, %lu malformed, %lu out of order, %lu STOP without START, %lu START while running (details on stderr)\n",
			r->lines, r->malformed, r->out_of_order, r->stop_without_start,
			r->start_while_running);
	return ferror(f) ? -EIO : 0;
}

int hwtel_gpu_format_text(FILE *f, const struct hwtel_gpu_report *r)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = gpu_format_text_c(f, r);
	hwtel_numeric_restore(&num);
	return ret;
}

static void json_units(struct hwtel_json *j, const struct hwtel_gpu_report *r, const char *key,
		       const uint64_t *v)
{
	unsigned int k;

	hj_key(j, key);
	hj_obj_begin(j);
	for (k = 0; k < r->nunits; k++) {
		hj_key(j, unit_name(r, k));
		hj_u64(j, v[k]);
	}
	hj_obj_end(j);
}

static int gpu_format_json_c(FILE *f, const struct hwtel_gpu_report *r)
{
	struct hwtel_json j;
	unsigned int i;

	hwtel_clear_error();
	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "seconds");
	hj_double(&j, r->seconds);
	hj_key(&j, "t0_ns");
	hj_u64(&j, r->t0_ns);
	hj_key(&j, "t1_ns");
	hj_u64(&j, r->t1_ns);
	hj_key(&j, "opp");
	if (r->opp_known) {
		hj_obj_begin(&j);
		hj_key(&j, "mhz");
		hj_uint(&j, r->opp.mhz);
		hj_key(&j, "mv");
		hj_uint(&j, r->opp.mv);
		if (r->opp_hz) {
			hj_key(&j, "hz");
			hj_u64(&j, r->opp_hz);
			hj_key(&j, "uv");
			hj_u64(&j, r->opp_uv);
		}
		hj_obj_end(&j);
	} else {
		hj_null(&j);
	}
	hj_key(&j, "consumers");
	hj_arr_begin(&j);
	for (i = 0; i < r->nconsumers; i++) {
		const struct hwtel_gpu_consumer *c = &r->consumers[i];

		hj_obj_begin(&j);
		hj_key(&j, "pid");
		hj_u64(&j, (uint64_t)c->pid);
		hj_key(&j, "life");
		hj_uint(&j, c->life);
		hj_key(&j, "comm");
		if (c->comm[0])
			hj_str(&j, c->comm);
		else
			hj_null(&j);
		hj_key(&j, "cmdline");
		if (c->cmdline[0])
			hj_str(&j, c->cmdline);
		else
			hj_null(&j);
		json_units(&j, r, "busy_ns", c->busy_ns);
		json_units(&j, r, "jobs", c->jobs);
		hj_key(&j, "busy_ns_total");
		hj_u64(&j, c->busy_total_ns);
		hj_key(&j, "jobs_total");
		hj_u64(&j, jobs_of(r, c->jobs));
		hj_key(&j, "unpriced_ns");
		hj_u64(&j, c->unpriced_ns);
		hj_key(&j, "energy_upj");
		hj_u64(&j, c->energy_upj);
		hj_key(&j, "mean_pw");
		hj_double(&j, c->mean_pw);
		hj_key(&j, "share");
		hj_double(&j, c->share);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_key(&j, "total");
	hj_obj_begin(&j);
	json_units(&j, r, "busy_ns", r->busy_ns);
	json_units(&j, r, "jobs", r->jobs);
	hj_key(&j, "energy_upj");
	hj_u64(&j, r->energy_upj);
	hj_key(&j, "mean_pw");
	hj_double(&j, r->mean_pw);
	hj_obj_end(&j);
	hj_key(&j, "unattributed");
	hj_obj_begin(&j);
	hj_key(&j, "busy_ns");
	hj_u64(&j, r->unattributed_ns);
	hj_key(&j, "energy_upj");
	if (r->unattributed_priced)
		hj_u64(&j, r->unattributed_upj);
	else
		hj_null(&j);
	hj_obj_end(&j);
	if (is_drm(r)) {
		hj_key(&j, "source");
		hj_str(&j, "drm");
		hj_key(&j, "drm");
		hj_obj_begin(&j);
		hj_key(&j, "clients");
		hj_u64(&j, r->clients);
		hj_key(&j, "clients_lost");
		hj_u64(&j, r->clients_lost);
		hj_key(&j, "estimated_ns");
		hj_u64(&j, r->estimated_ns);
		hj_key(&j, "error_bound_upj");
		hj_u64(&j, r->bound_upj);
		hj_key(&j, "fdinfo_malformed");
		hj_u64(&j, r->fdinfo_malformed);
		hj_obj_end(&j);
	}
	hj_key(&j, "stream");
	hj_obj_begin(&j);
	hj_key(&j, "lines");
	hj_u64(&j, r->lines);
	hj_key(&j, "malformed");
	hj_u64(&j, r->malformed);
	hj_key(&j, "out_of_order");
	hj_u64(&j, r->out_of_order);
	hj_key(&j, "stop_without_start");
	hj_u64(&j, r->stop_without_start);
	hj_key(&j, "start_while_running");
	hj_u64(&j, r->start_while_running);
	hj_key(&j, "running_at_end");
	hj_u64(&j, r->open_at_end);
	hj_key(&j, "ignored");
	hj_u64(&j, r->ignored);
	hj_key(&j, "dvfs_changes");
	hj_u64(&j, r->dvfs_changes);
	hj_key(&j, "dvfs_carried_ns");
	hj_u64(&j, r->carried_ns);
	hj_obj_end(&j);
	if (lost_any(r)) {
		hj_key(&j, "lost");
		hj_obj_begin(&j);
		hj_key(&j, "stops");
		hj_u64(&j, r->lost_stops);
		hj_key(&j, "starts");
		hj_u64(&j, r->lost_starts);
		hj_key(&j, "unbilled_ns");
		hj_u64(&j, unbilled_of(r));
		hj_obj_end(&j);
	}
	if (r->overflows) {
		hj_key(&j, "overflow");
		hj_obj_begin(&j);
		hj_key(&j, "recordings");
		hj_u64(&j, r->overflows);
		hj_key(&j, "unknown_ns");
		hj_u64(&j, r->overflow_ns);
		hj_obj_end(&j);
	}
	hj_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int hwtel_gpu_format_json(FILE *f, const struct hwtel_gpu_report *r)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = gpu_format_json_c(f, r);
	hwtel_numeric_restore(&num);
	return ret;
}

struct num_s {
	char s[24];
};

static struct num_s u64_s(uint64_t v)
{
	struct num_s n;

	snprintf(n.s, sizeof(n.s), "%" PRIu64, v);
	return n;
}

static void csv_row(FILE *f, const struct hwtel_gpu_report *r, const char *sep,
		    const char *pid, unsigned int life,
		    const char *comm, const uint64_t *busy, const uint64_t *jobs,
		    uint64_t upj, double pw, double share, const char *cmdline)
{
	unsigned int k;

	/* every field quoted when it holds the separator (RFC 4180) */
	hwtel_csv_fmt(f, sep, "%s", pid);
	hwtel_csv_fmt(f, sep, "%u", life);
	hwtel_csv_field(f, comm, sep);
	for (k = 0; k < r->nunits; k++) {
		fputs(sep, f);
		hwtel_csv_field(f, u64_s(busy[k]).s, sep);
	}
	fputs(sep, f);
	hwtel_csv_fmt(f, sep, "%" PRIu64, jobs_of(r, jobs));
	hwtel_csv_fmt(f, sep, "%" PRIu64, upj);
	hwtel_csv_fmt(f, sep, "%.6f", pw);
	hwtel_csv_fmt(f, sep, "%.6f", share);
	hwtel_csv_field(f, cmdline, sep);
	fputc('\n', f);
}

static int gpu_format_csv_c(FILE *f, const struct hwtel_gpu_report *r, const char *sep)
{
	unsigned int i, k;
	char pid[16];

	hwtel_clear_error();
	/* the header quoted too: an engine name (DRM's come from the driver) may hold SEP */
	hwtel_csv_fmt(f, sep, "pid");
	hwtel_csv_fmt(f, sep, "life");
	hwtel_csv_field(f, "comm", sep);
	for (k = 0; k < r->nunits; k++) {
		char name[40];

		snprintf(name, sizeof(name), "busy_ns_%s", unit_name(r, k));
		fputs(sep, f);
		hwtel_csv_field(f, name, sep);
	}
	fputs(sep, f);
	hwtel_csv_fmt(f, sep, "jobs");
	hwtel_csv_fmt(f, sep, "energy_upj");
	hwtel_csv_fmt(f, sep, "mean_pw");
	hwtel_csv_fmt(f, sep, "share");
	hwtel_csv_field(f, "cmdline", sep);
	fputc('\n', f);
	for (i = 0; i < r->nconsumers; i++) {
		const struct hwtel_gpu_consumer *c = &r->consumers[i];

		snprintf(pid, sizeof(pid), "%d", c->pid);
		csv_row(f, r, sep, pid, c->life, c->comm, c->busy_ns, c->jobs, c->energy_upj,
			c->mean_pw, c->share, c->cmdline);
	}
	csv_row(f, r, sep, "total", 0, "", r->busy_ns, r->jobs, r->energy_upj, r->mean_pw,
		r->energy_upj ? 1.0 : 0.0, "");
	if (lost_any(r)) {
		/* busy: time not billed after a gap; jobs: jobs whose STOP or START was lost */
		hwtel_csv_fmt(f, sep, "lost");
		hwtel_csv_fmt(f, sep, "0");
		for (k = 0; k < r->nunits; k++) {
			fputs(sep, f);
			hwtel_csv_field(f, u64_s(r->unbilled_ns[k]).s, sep);
		}
		fputs(sep, f);
		hwtel_csv_fmt(f, sep, "%lu", r->lost_stops + r->lost_starts);
		fprintf(f, "%s%s%s\n", sep, sep, sep);
	}
	if (r->overflows) {
		/* jobs: the recordings that filled the driver's buffer */
		fprintf(f, "overflow%s0%s", sep, sep);
		for (k = 0; k < r->nunits; k++)
			fputs(sep, f);
		fprintf(f, "%s%lu%s%s%s%s\n", sep, r->overflows, sep, sep, sep, sep);
	}
	return ferror(f) ? -EIO : 0;
}

int hwtel_gpu_format_csv(FILE *f, const struct hwtel_gpu_report *r, const char *sep)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = gpu_format_csv_c(f, r, sep);
	hwtel_numeric_restore(&num);
	return ret;
}

static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/*
 * The Prometheus series are per process name, not per process: a host that
 * runs a GPU program again and again keeps one series for it, whose counter
 * sums all its lives (Documentation/userspace-api/hwtel.rst, "Prometheus
 * series"). Processes without a known name are one "[unknown]" series.
 */
struct prom_comm {
	char comm[32];
	uint64_t upj;
	uint64_t *busy, *jobs;		/* [nunits of the report] */
};

static int prom_comm_cmp(const void *a, const void *b)
{
	return strcmp(((const struct prom_comm *)a)->comm, ((const struct prom_comm *)b)->comm);
}

/* The consumers of @cum by name, sorted by name; NULL on ENOMEM */
static struct prom_comm *prom_by_comm(const struct hwtel_gpu_report *cum, unsigned int *n)
{
	unsigned int rows = cum->nconsumers + cum->nexited, i, j, k, nu = cum->nunits;
	/* the rows then their per-unit figures, one allocation */
	struct prom_comm *pc = calloc(1, (rows ? rows : 1) * (sizeof(*pc) + 2 * nu * sizeof(uint64_t)));

	*n = 0;
	if (!pc)
		return NULL;
	for (i = 0; i < rows; i++) {
		pc[i].busy = (uint64_t *)(pc + rows) + 2 * (size_t)i * nu;
		pc[i].jobs = pc[i].busy + nu;
	}
	/* the lives alive or just ended, then those summed per name (exited) */
	for (i = 0; i < rows; i++) {
		const struct hwtel_gpu_consumer *c = i < cum->nconsumers ? &cum->consumers[i] :
			&cum->exited[i - cum->nconsumers];
		const char *name = c->comm[0] ? c->comm : "[unknown]";

		for (j = 0; j < *n; j++)
			if (!strcmp(pc[j].comm, name))
				break;
		if (j == *n)
			snprintf(pc[(*n)++].comm, sizeof(pc[0].comm), "%s", name);
		pc[j].upj += c->energy_upj;
		for (k = 0; k < nu; k++) {
			pc[j].busy[k] += c->busy_ns[k];
			pc[j].jobs[k] += c->jobs[k];
		}
	}
	qsort(pc, *n, sizeof(*pc), prom_comm_cmp);
	return pc;
}

static void prom_who(FILE *f, const struct prom_comm *c)
{
	fputs("comm=\"", f);
	prom_label(f, c->comm);
	fputc('"', f);
}

/* A family's HELP and TYPE, before its first sample only (none: no lines) */
static void prom_head(FILE *f, bool *done, const char *head)
{
	if (!*done)
		fputs(head, f);
	*done = true;
}

static int gpu_format_prom_c(FILE *f, const struct hwtel_gpu_report *cum,
			       const struct hwtel_gpu_report *r)
{
	unsigned int i, k, n;
	bool head = false;
	struct prom_comm *pc;

	hwtel_clear_error();
	pc = prom_by_comm(cum, &n);
	if (!pc)
		return hwtel_err(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		prom_head(f, &head,
			  "# HELP hwtel_gpu_energy_pseudojoules_total GPU energy per process name (P = C V^2 f, 1 PW = one unit at 266 MHz and 1 V).\n"
			  "# TYPE hwtel_gpu_energy_pseudojoules_total counter\n");
		fputs("hwtel_gpu_energy_pseudojoules_total{", f);
		prom_who(f, &pc[i]);
		fprintf(f, "} %" PRIu64 ".%06" PRIu64 "\n", pc[i].upj / 1000000, pc[i].upj % 1000000);
	}
	head = false;
	for (i = 0; i < n; i++)
		for (k = 0; k < cum->nunits; k++) {
			if (!pc[i].busy[k])
				continue;
			prom_head(f, &head,
				  "# HELP hwtel_gpu_busy_seconds_total Time GPU units ran jobs of processes of a name.\n"
				  "# TYPE hwtel_gpu_busy_seconds_total counter\n");
			fputs("hwtel_gpu_busy_seconds_total{", f);
			prom_who(f, &pc[i]);
			fprintf(f, ",unit=\"%s\"} %.9f\n", unit_name(cum, k),
				(double)pc[i].busy[k] / 1e9);
		}
	head = false;
	for (i = 0; i < n; i++)
		for (k = 0; k < cum->nunits; k++) {
			if (!pc[i].jobs[k])
				continue;
			prom_head(f, &head,
				  "# HELP hwtel_gpu_jobs_total GPU jobs started by processes of a name.\n"
				  "# TYPE hwtel_gpu_jobs_total counter\n");
			fputs("hwtel_gpu_jobs_total{", f);
			prom_who(f, &pc[i]);
			fprintf(f, ",unit=\"%s\"} %" PRIu64 "\n", unit_name(cum, k), pc[i].jobs[k]);
		}
	free(pc);
	fputs("# HELP hwtel_gpu_unattributed_seconds_total Job time before the first known operating point.\n"
	      "# TYPE hwtel_gpu_unattributed_seconds_total counter\n", f);
	fprintf(f, "hwtel_gpu_unattributed_seconds_total %.9f\n", (double)cum->unattributed_ns / 1e9);
	if (lost_any(cum)) {
		fputs("# HELP hwtel_gpu_lost_events_total Job events lost in a record gap or past the driver's buffer (event=\"stop\": jobs running at a gap with no STOP after it; \"start\": STOPs after a gap with no START).\n"
		      "# TYPE hwtel_gpu_lost_events_total counter\n", f);
		fprintf(f, "hwtel_gpu_lost_events_total{event=\"stop\"} %lu\n", cum->lost_stops);
		fprintf(f, "hwtel_gpu_lost_events_total{event=\"start\"} %lu\n", cum->lost_starts);
		fputs("# HELP hwtel_gpu_unbilled_seconds_total Time jobs stayed open after a record gap without a STOP: not billed.\n"
		      "# TYPE hwtel_gpu_unbilled_seconds_total counter\n", f);
		fprintf(f, "hwtel_gpu_unbilled_seconds_total %.9f\n", (double)unbilled_of(cum) / 1e9);
	}
	if (cum->overflows) {
		fputs("# HELP hwtel_gpu_buffer_overflows_total Recordings that filled the driver's profiling buffer (the events after were dropped).\n"
		      "# TYPE hwtel_gpu_buffer_overflows_total counter\n", f);
		fprintf(f, "hwtel_gpu_buffer_overflows_total %lu\n", cum->overflows);
	}
	/* power is rate() of the energy counter: no gauge of the interval */
	(void)r;
	return ferror(f) ? -EIO : 0;
}

int hwtel_gpu_format_prom(FILE *f, const struct hwtel_gpu_report *cum,
			  const struct hwtel_gpu_report *r)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = gpu_format_prom_c(f, cum, r);
	hwtel_numeric_restore(&num);
	return ret;
}
