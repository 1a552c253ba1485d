// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: Marvell DSS (DDR controller) PMU report.
 *
 * Bandwidth comes from the two fixed free-running counters (DDR reads and
 * writes, 64-byte bursts) in a pinned group of their own, so it is always
 * exact. The generic events of the report are packed into groups of at most
 * 8 (the DSS has 8 generic counters). One group is counted exactly; with
 * more, perf rotates the groups across the interval and every value is
 * scaled by enabled/running time - the report marks those as estimates.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

enum sect { S_HIF, S_DFI, S_SCHED, S_REFRESH, S_LOWPOWER, S_ERRORS, S_OTHER };

struct ddr_ev {
	const char *name;
	const char *alt;	/* CN10K spelling */
	int sect;		/* report section, S_OTHER = not in the report */
	const char *label;
	const char *desc;
};

/* Events in report order; the catalogue also serves `hwtel list`. */
static const struct ddr_ev ddr_events[] = {
	{ "ddr_hif_rd_or_wr_access", NULL, S_HIF, "all accesses", "HIF read or write requests from the interconnect" },
	{ "ddr_hif_rd_access", NULL, S_HIF, "read", "HIF read requests" },
	{ "ddr_hif_wr_access", NULL, S_HIF, "write", "HIF write requests" },
	{ "ddr_hif_rmw_access", NULL, S_HIF, "read-modify-write", "HIF read-modify-write requests (partial writes with ECC)" },
	{ "ddr_dfi_rd_data_access", "ddr_dif_rd_data_access", S_DFI, "read data cycles", "DFI cycles carrying read data" },
	{ "ddr_dfi_wr_data_access", "ddr_dif_wr_data_access", S_DFI, "write data cycles", "DFI cycles carrying write data" },
	{ "ddr_dfi_cycles", NULL, S_DFI, "DFI clock cycles", "DFI clock cycles (Odyssey)" },
	{ "ddr_rdwr_transitions", NULL, S_SCHED, "read/write turnarounds", "read-to-write and write-to-read switches" },
	{ "ddr_raw_hazard", NULL, S_SCHED, "RAW hazards", "read-after-write address hazards" },
	{ "ddr_war_hazard", NULL, S_SCHED, "WAR hazards", "write-after-read address hazards" },
	{ "ddr_waw_hazard", NULL, S_SCHED, "WAW hazards", "write-after-write address hazards" },
	{ "ddr_refresh", NULL, S_REFRESH, "refresh", "refresh commands" },
	{ "ddr_crit_ref", NULL, S_REFRESH, "critical refresh", "refreshes issued as critical (postponed too long)" },
	{ "ddr_spec_ref", NULL, S_REFRESH, "speculative refresh", "speculative refreshes (issued while idle)" },
	{ "ddr_zqcl", NULL, S_REFRESH, "ZQ calibration long", "ZQCL (long ZQ calibration) commands" },
	{ "ddr_cam_wr_access", NULL, S_REFRESH, "ZQ calibration short", "ZQCS (short ZQ calibration) commands (upstream name kept)" },
	{ "ddr_zqstart", NULL, S_REFRESH, "ZQ start", "ZQ calibration start (MPC) commands" },
	{ "ddr_zqlatch", NULL, S_REFRESH, "ZQ latch", "ZQ calibration latch commands" },
	{ "ddr_dqsosc_mpc", NULL, S_REFRESH, "DQS oscillator start", "DQS interval oscillator start (MPC) commands" },
	{ "ddr_dqsosc_mrr", NULL, S_REFRESH, "DQS oscillator read", "DQS interval oscillator mode-register reads" },
	{ "ddr_tcr_mrr", NULL, S_REFRESH, "temperature read", "temperature-controlled refresh mode-register reads" },
	{ "ddr_load_mode", NULL, S_REFRESH, "mode register writes", "load mode (MRS) commands" },
	{ "ddr_rfm", NULL, S_REFRESH, "refresh management", "refresh management (RFM) commands (CN20K)" },
	{ "ddr_enter_selfref", NULL, S_LOWPOWER, "self-refresh", "entries into self-refresh (any rank)" },
	{ "ddr_enter_powerdown", NULL, S_LOWPOWER, "power-down", "entries into power-down (any rank)" },
	{ "ddr_enter_mpsm", NULL, S_LOWPOWER, "MPSM", "entries into maximum power saving mode (any rank)" },
	{ "ddr_enter_dsm", NULL, S_LOWPOWER, "deep sleep", "entries into deep sleep mode (CN20K)" },
	{ "ddr_dfi_parity_poison", NULL, S_ERRORS, "DFI parity poison", "DFI parity poison events" },
	{ "ddr_wr_crc_error", NULL, S_ERRORS, "write CRC errors", "write CRC errors" },
	{ "ddr_capar_error", NULL, S_ERRORS, "C/A parity errors", "command/address parity errors" },
	{ "ddr_rd_crc_error", NULL, S_ERRORS, "read CRC errors", "read CRC errors" },
	{ "ddr_rd_uc_ecc_error", NULL, S_ERRORS, "uncorrectable ECC", "uncorrectable ECC errors on reads" },
	{ "ddr_dfi_cmd_is_retry", NULL, S_ERRORS, "DFI command retries", "DFI commands that are retries" },
	{ "ddr_retry_fifo_full", NULL, S_ERRORS, "retry FIFO full", "retry FIFO full events" },
	/* not in the report, described for `hwtel list` */
	{ "ddr_hif_pri_rdaccess", NULL, S_OTHER, NULL, "HIF high-priority read requests" },
	{ "ddr_rd_bypass_access", NULL, S_OTHER, NULL, "reads that took the bypass path" },
	{ "ddr_act_bypass_access", NULL, S_OTHER, NULL, "activates that took the bypass path" },
	{ "ddr_hpri_sched_rd_crit_access", NULL, S_OTHER, NULL, "high-priority reads scheduled while critical" },
	{ "ddr_lpri_sched_rd_crit_access", NULL, S_OTHER, NULL, "low-priority reads scheduled while critical" },
	{ "ddr_wr_trxn_crit_access", NULL, S_OTHER, NULL, "writes scheduled while critical" },
	{ "ddr_cam_active_access", NULL, S_OTHER, NULL, "activate commands" },
	{ "ddr_cam_rd_or_wr_access", NULL, S_OTHER, NULL, "read or write commands" },
	{ "ddr_cam_rd_active_access", NULL, S_OTHER, NULL, "activates for reads" },
	{ "ddr_cam_read", NULL, S_OTHER, NULL, "read commands" },
	{ "ddr_cam_write", NULL, S_OTHER, NULL, "write commands" },
	{ "ddr_cam_mwr", NULL, S_OTHER, NULL, "masked write commands" },
	{ "ddr_precharge", NULL, S_OTHER, NULL, "precharge commands" },
	{ "ddr_precharge_for_rdwr", NULL, S_OTHER, NULL, "precharges for a read or write (page miss)" },
	{ "ddr_precharge_for_other", NULL, S_OTHER, NULL, "precharges for other reasons" },
	{ "ddr_write_combine", NULL, S_OTHER, NULL, "writes combined in the CAM" },
	{ "ddr_hpr_req_with_nocredit", NULL, S_OTHER, NULL, "high-priority reads without credit (CN10K)" },
	{ "ddr_lpr_req_with_nocredit", NULL, S_OTHER, NULL, "low-priority reads without credit (CN10K)" },
	{ "ddr_bsm_alloc", NULL, S_OTHER, NULL, "bank state machine allocations" },
	{ "ddr_bsm_starvation", NULL, S_OTHER, NULL, "bank state machine starvations" },
	{ "ddr_win_limit_reached_rd", NULL, S_OTHER, NULL, "visible window limit reached for reads" },
	{ "ddr_win_limit_reached_wr", NULL, S_OTHER, NULL, "visible window limit reached for writes" },
	{ "ddr_write32", NULL, S_OTHER, NULL, "32-byte writes (CN20K)" },
	{ "ddr_write16", NULL, S_OTHER, NULL, "16-byte writes (CN20K)" },
	{ "ddr_read32", NULL, S_OTHER, NULL, "32-byte reads (CN20K)" },
	{ "ddr_read16", NULL, S_OTHER, NULL, "16-byte reads (CN20K)" },
	{ "ddr_cas_ws", NULL, S_OTHER, NULL, "CAS write-clock sync commands (CN20K)" },
	{ "ddr_cas_ws_off", NULL, S_OTHER, NULL, "CAS write-clock sync off commands (CN20K)" },
	{ "ddr_cas_wck_sus", NULL, S_OTHER, NULL, "CAS write-clock suspend commands (CN20K)" },
	{ "ddr_ddr_writes", NULL, S_OTHER, NULL, "DDR writes, 64-byte bursts (fixed free-running counter)" },
	{ "ddr_ddr_reads", NULL, S_OTHER, NULL, "DDR reads, 64-byte bursts (fixed free-running counter)" },
};

const char *hwtel_ddr_event_desc(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ddr_events); i++)
		if (!strcmp(ddr_events[i].name, name) ||
		    (ddr_events[i].alt && !strcmp(ddr_events[i].alt, name)))
			return ddr_events[i].desc;
	return NULL;
}

/*
 * Events one handle counts. The library's own bound, not the ABI's (a
 * reading has room for its handle's events whatever their number); a DSS
 * has about 40 generic events, each asked for at most once.
 */
#define DDR_MAX_EVENTS	128

struct hwtel_ddr {
	struct hwtel_pmu pmu;
	char identifier[64];
	struct hwtel_group *fixed;
	unsigned int ngroups;
	struct hwtel_group *groups[DDR_MAX_EVENTS / HWTEL_DDR_GENERIC + 1];
	unsigned int nevents;
	char names[DDR_MAX_EVENTS][48];
	unsigned int ev_group[DDR_MAX_EVENTS];
	unsigned int ev_slot[DDR_MAX_EVENTS];
	bool vanished;
};

/* A reading: this header, the public struct, then its events */
#define DDR_DATA_MAGIC 0x68776464u	/* "hwdd" */

struct ddr_alloc {
	unsigned int magic;
	unsigned int n;			/* events it has room for */
	char pmu[256], identifier[256];
	struct hwtel_ddr_data d;
	struct hwtel_ddr_event ev[];
};

static struct ddr_alloc *ddr_alloc_of(const struct hwtel_ddr_data *d)
{
	struct ddr_alloc *a;

	if (!d)
		return NULL;
	a = (struct ddr_alloc *)((char *)d - offsetof(struct ddr_alloc, d));
	return a->magic == DDR_DATA_MAGIC ? a : NULL;
}

struct hwtel_ddr_data *hwtel_ddr_data_new_events(const char *pmu, const char *identifier,
						 unsigned int nevents)
{
	struct ddr_alloc *a;

	if (nevents > 1u << 20) {
		errno = E2BIG;
		return NULL;
	}
	a = calloc(1, sizeof(*a) + (size_t)nevents * sizeof(a->ev[0]));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->magic = DDR_DATA_MAGIC;
	a->n = nevents;
	snprintf(a->pmu, sizeof(a->pmu), "%s", pmu ? pmu : "");
	snprintf(a->identifier, sizeof(a->identifier), "%s", identifier ? identifier : "");
	a->d.pmu = a->pmu;
	a->d.identifier = a->identifier;
	a->d.nevents = nevents;
	a->d.events = a->ev;
	return &a->d;
}

void hwtel_ddr_data_free(struct hwtel_ddr_data *d)
{
	struct ddr_alloc *a = ddr_alloc_of(d);

	if (!a)
		return;
	a->magic = 0;
	free(a);
}

static bool ddr_same_layout(const struct hwtel_ddr_data *x, const struct hwtel_ddr_data *y)
{
	const struct ddr_alloc *a = ddr_alloc_of(x), *b = ddr_alloc_of(y);

	return a && b && a->n == b->n && x->nevents == y->nevents && x->nevents <= a->n;
}

static int ddr_mismatch(const char *fn)
{
	return hwtel_err(-EINVAL, "%s: DDR readings of different events (or not allocated by hwtel_ddr_data_new())",
			 fn);
}

static void ddr_copy(struct hwtel_ddr_data *dst, const struct hwtel_ddr_data *src)
{
	struct ddr_alloc *a = ddr_alloc_of(dst);
	const struct ddr_alloc *b = ddr_alloc_of(src);

	if (a == b)
		return;
	memcpy(a, b, sizeof(*a) + a->n * sizeof(a->ev[0]));
	a->d.pmu = a->pmu;
	a->d.identifier = a->identifier;
	a->d.events = a->ev;
}

int hwtel_ddr_data_copy(struct hwtel_ddr_data *dst, const struct hwtel_ddr_data *src)
{
	hwtel_clear_error();
	if (!ddr_same_layout(dst, src))
		return ddr_mismatch("hwtel_ddr_data_copy");
	ddr_copy(dst, src);
	return 0;
}

struct hwtel_ddr_data *hwtel_ddr_data_new(const struct hwtel_ddr *h)
{
	return hwtel_ddr_data_new_events(h->pmu.name, h->identifier, h->nevents);
}

static bool pmu_has_event(const struct hwtel_pmu *pmu, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/events/%s", pmu->path, name);
	return access(path, R_OK) == 0;
}

static int add_event(struct hwtel_ddr *h, const char *name)
{
	unsigned int i;

	for (i = 0; i < h->nevents; i++)
		if (!strcmp(h->names[i], name))
			return 0;
	if (h->nevents >= DDR_MAX_EVENTS)
		return hwtel_err(-E2BIG, "too many DDR events (max %d)", DDR_MAX_EVENTS);
	if (strlen(name) >= sizeof(h->names[0]))
		return hwtel_err(-EINVAL, "event name too long: %s", name);
	snprintf(h->names[h->nevents++], sizeof(h->names[0]), "%s", name);
	return 0;
}

void hwtel_ddr_close(struct hwtel_ddr *h)
{
	unsigned int g;

	if (!h)
		return;
	hwtel_group_free(h->fixed);
	for (g = 0; g < h->ngroups; g++)
		hwtel_group_free(h->groups[g]);
	free(h);
}

int hwtel_ddr_open(const char *device, unsigned int index, const char *events,
		   struct hwtel_ddr **out)
{
	struct hwtel_ddr *h;
	char name[HWTEL_NAME_MAX];
	unsigned int i, g;
	int ret;

	hwtel_clear_error();
	*out = NULL;
	hwtel_clear_error();
	ret = hwtel_resolve_device(HWTEL_DDR_PMU_PREFIX, HWTEL_DDR_MODULE, device, index,
				   name, sizeof(name));
	if (ret)
		return ret;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	ret = hwtel_pmu_load(name, &h->pmu);
	if (ret)
		goto fail;
	if (hwtel_pmu_read_attr(&h->pmu, "identifier", h->identifier, sizeof(h->identifier)) < 0)
		h->identifier[0] = '\0';

	if (events && *events) {
		char buf[1024], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", events);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "ddr_ddr_reads") || !strcmp(tok, "ddr_ddr_writes"))
				continue;	/* always counted */
			if (!pmu_has_event(&h->pmu, tok)) {
				ret = hwtel_err(-EINVAL, "%s has no event '%s' ('hwtel list' shows them)",
						h->pmu.name, tok);
				goto fail;
			}
			ret = add_event(h, tok);
			if (ret)
				goto fail;
		}
	} else {
		for (i = 0; i < ARRAY_SIZE(ddr_events) && ddr_events[i].sect != S_OTHER; i++) {
			const char *n = ddr_events[i].name;

			if (!pmu_has_event(&h->pmu, n))
				n = ddr_events[i].alt;
			if (n && pmu_has_event(&h->pmu, n)) {
				ret = add_event(h, n);
				if (ret)
					goto fail;
			}
		}
	}

	/* fixed counters: pinned, so they count the whole interval, always */
	h->fixed = hwtel_group_new(&h->pmu, true);
	if (!h->fixed) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = hwtel_group_add(h->fixed, "ddr_ddr_reads")) < 0 ||
	    (ret = hwtel_group_add(h->fixed, "ddr_ddr_writes")) < 0)
		goto fail;
	ret = hwtel_group_open(h->fixed);
	if (ret < 0)
		goto fail;

	h->ngroups = (h->nevents + HWTEL_DDR_GENERIC - 1) / HWTEL_DDR_GENERIC;
	for (g = 0; g < h->ngroups; g++) {
		h->groups[g] = hwtel_group_new(&h->pmu, false);
		if (!h->groups[g]) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	for (i = 0; i < h->nevents; i++) {
		g = i / HWTEL_DDR_GENERIC;
		ret = hwtel_group_add(h->groups[g], h->names[i]);
		if (ret < 0)
			goto fail;
		h->ev_group[i] = g;
		h->ev_slot[i] = (unsigned int)ret;
	}
	for (g = 0; g < h->ngroups; g++) {
		ret = hwtel_group_open(h->groups[g]);
		if (ret < 0)
			goto fail;
	}
	*out = h;
	return 0;
fail:
	hwtel_ddr_close(h);
	return ret;
}

const char *hwtel_ddr_name(const struct hwtel_ddr *h)
{
	return h->pmu.name;
}

bool hwtel_ddr_vanished(struct hwtel_ddr *h)
{
	if (!h->vanished && access(h->pmu.path, F_OK) != 0)
		h->vanished = true;
	return h->vanished;
}

int hwtel_ddr_read(struct hwtel_ddr *h, struct hwtel_ddr_data *out)
{
	uint64_t v[HWTEL_DDR_GENERIC + 2], en, run, t0;
	struct ddr_alloc *a;
	unsigned int g, i;
	int ret;

	hwtel_clear_error();
	a = ddr_alloc_of(out);
	if (!a || a->n != h->nevents)
		return ddr_mismatch("hwtel_ddr_read");
	memset(a->ev, 0, a->n * sizeof(a->ev[0]));
	memset(&a->d, 0, sizeof(a->d));
	snprintf(a->pmu, sizeof(a->pmu), "%s", h->pmu.name);
	snprintf(a->identifier, sizeof(a->identifier), "%s", h->identifier);
	out->pmu = a->pmu;
	out->identifier = a->identifier;
	out->events = a->ev;
	out->nevents = a->n;
	t0 = hwtel_now_ns();
	ret = hwtel_group_read(h->fixed, v, &en, &run);
	/* wall time of the bandwidth reading: the middle of its group read */
	out->timestamp_ns = t0 + (hwtel_now_ns() - t0) / 2;
	if (ret == -ENODEV && !hwtel_ddr_vanished(h))
		return hwtel_err(-EBUSY, "%s: the fixed read/write counters could not be scheduled (another perf session owns ddr_ddr_reads or ddr_ddr_writes?)",
				 h->pmu.name);
	if (ret < 0)
		return ret;
	out->reads = v[0];
	out->writes = v[1];
	out->fixed_enabled = en;
	out->fixed_running = run;
	out->ngroups = h->ngroups;
	out->nevents = h->nevents;
	for (g = 0; g < h->ngroups; g++) {
		ret = hwtel_group_read(h->groups[g], v, &en, &run);
		if (ret < 0)
			return ret;
		for (i = 0; i < h->nevents; i++) {
			struct hwtel_ddr_event *e = &out->events[i];

			if (h->ev_group[i] != g)
				continue;
			snprintf(e->name, sizeof(e->name), "%s", h->names[i]);
			e->group = g;
			e->value = v[h->ev_slot[i]];
			e->enabled = en;
			e->running = run;
		}
	}
	return 0;
}

int hwtel_ddr_diff(const struct hwtel_ddr_data *new_, const struct hwtel_ddr_data *old,
		   struct hwtel_ddr_data *out)
{
	unsigned int i;

	hwtel_clear_error();
	if (!ddr_same_layout(new_, old) || !ddr_same_layout(new_, out))
		return ddr_mismatch("hwtel_ddr_diff");
	if (out != new_)
		ddr_copy(out, new_);
	out->reads -= old->reads;
	out->writes -= old->writes;
	out->fixed_enabled -= old->fixed_enabled;
	out->fixed_running -= old->fixed_running;
	for (i = 0; i < out->nevents && i < old->nevents; i++) {
		out->events[i].value -= old->events[i].value;
		out->events[i].enabled -= old->events[i].enabled;
		out->events[i].running -= old->events[i].running;
	}
	return 0;
}

static const struct hwtel_ddr_event *find_ev(const struct hwtel_ddr_data *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->nevents; i++)
		if (!strcmp(d->events[i].name, name))
			return &d->events[i];
	return NULL;
}

bool hwtel_ddr_value(const struct hwtel_ddr_data *d, const char *name, double *value,
		     bool *exact)
{
	const struct hwtel_ddr_event *e = find_ev(d, name);
	unsigned int i;

	if (!e) {	/* CN10K spelling of the same event */
		for (i = 0; i < ARRAY_SIZE(ddr_events); i++)
			if (!strcmp(ddr_events[i].name, name) && ddr_events[i].alt)
				e = find_ev(d, ddr_events[i].alt);
	}
	if (!e || e->running == 0) {
		*value = NAN;
		if (exact)
			*exact = false;
		return false;
	}
	if (e->running >= e->enabled) {
		*value = (double)e->value;
		if (exact)
			*exact = true;
	} else {
		*value = (double)e->value * (double)e->enabled / (double)e->running;
		if (exact)
			*exact = false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Text                                                               */
/* ------------------------------------------------------------------ */

static void fmt_count(char *buf, size_t size, double v, bool exact)
{
	if (isnan(v))
		snprintf(buf, size, "not counted");
	else
		snprintf(buf, size, "%s%.0f", exact ? "" : "~", v);
}

/* Rate of an event: over its own group's enabled time when known (groups
 * are read one after the other), else over the report's interval.
 */
static double ev_seconds(const struct hwtel_ddr_data *d, const char *name, double seconds)
{
	unsigned int i;

	for (i = 0; i < d->nevents; i++)
		if (!strcmp(d->events[i].name, name) && d->events[i].enabled)
			return seconds > 0 ? (double)d->events[i].enabled / 1e9 : seconds;
	return seconds;
}

static void fmt_rate(char *buf, size_t size, double v, double seconds)
{
	double r;

	if (isnan(v) || seconds <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	r = v / seconds;
	if (r >= 1e6)
		snprintf(buf, size, "%.3f M/s", r / 1e6);
	else if (r >= 1e3)
		snprintf(buf, size, "%.3f k/s", r / 1e3);
	else
		snprintf(buf, size, "%.3f /s", r);
}

static void line4(FILE *f, const char *label, const char *a, const char *b, const char *c)
{
	char line[256];
	size_t n;

	snprintf(line, sizeof(line), "  %-26s %16s %16s  %s", label, a, b, c);
	n = strlen(line);
	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fprintf(f, "%s\n", line);
}

static const char *label_of(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ddr_events); i++)
		if (!strcmp(ddr_events[i].name, name) ||
		    (ddr_events[i].alt && !strcmp(ddr_events[i].alt, name)))
			return ddr_events[i].label ? ddr_events[i].label : name;
	return name;
}

static int sect_of(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ddr_events); i++)
		if (!strcmp(ddr_events[i].name, name) ||
		    (ddr_events[i].alt && !strcmp(ddr_events[i].alt, name)))
			return ddr_events[i].sect;
	return S_OTHER;
}

static bool sect_present(const struct hwtel_ddr_data *d, int s)
{
	unsigned int i;

	for (i = 0; i < d->nevents; i++)
		if (sect_of(d->events[i].name) == s)
			return true;
	return false;
}

static void sect_rows(FILE *f, const struct hwtel_ddr_data *d, int s, double seconds,
		      double accesses, bool per_k)
{
	unsigned int i;

	for (i = 0; i < d->nevents; i++) {
		const struct hwtel_ddr_event *e = &d->events[i];
		char a[48], b[48], c[48] = "";
		bool exact;
		double v;

		if (sect_of(e->name) != s)
			continue;
		hwtel_ddr_value(d, e->name, &v, &exact);
		fmt_rate(a, sizeof(a), v, ev_seconds(d, e->name, seconds));
		fmt_count(b, sizeof(b), v, exact);
		if (per_k) {
			if (!isnan(v) && accesses > 0)
				snprintf(c, sizeof(c), "%.3f per 1000 accesses", 1000.0 * v / accesses);
			else
				snprintf(c, sizeof(c), "- per 1000 accesses");
		}
		line4(f, label_of(e->name), a, b, c);
	}
}

static int ddr_format_text_c(FILE *f, const struct hwtel_ddr_data *d, double seconds)
{
	char head[160], a[48], b[48], c[64];
	double rd, wr, rmw, acc, dfr, dfw, dfc, v;
	bool exact, scaled = false, have_acc;
	unsigned int i, n;
	uint64_t minrun = UINT64_MAX, en = 0;

	hwtel_clear_error();
	n = (unsigned int)snprintf(head, sizeof(head), "DDR controller %s%s%s%s", d->pmu,
				   d->identifier[0] ? " (" : "", d->identifier,
				   d->identifier[0] ? ")" : "");
	fprintf(f, "%s\n", head);
	for (i = 0; i < n && i < sizeof(head) - 1; i++)
		fputc('=', f);
	fputc('\n', f);
	if (seconds > 0)
		fprintf(f, "Measured over %.2f s\n", seconds);

	fputs("\nBandwidth (fixed counters x 64 B, exact)\n", f);
	line4(f, "", "rate", "count", "");
	for (i = 0; i < 3; i++) {
		uint64_t cnt = i == 0 ? d->reads : i == 1 ? d->writes : d->reads + d->writes;
		double bytes = (double)cnt * HWTEL_DDR_BURST_BYTES;

		if (seconds > 0)
			snprintf(a, sizeof(a), "%.3f GB/s", bytes / seconds / 1e9);
		else
			snprintf(a, sizeof(a), "-");
		snprintf(b, sizeof(b), "%llu", (unsigned long long)cnt);
		snprintf(c, sizeof(c), "%s, %.0f bytes", i == 0 ? "reads" : i == 1 ? "writes" :
			 "bursts", bytes);
		line4(f, i == 0 ? "read" : i == 1 ? "write" : "total", a, b, c);
	}
	if (d->fixed_running < d->fixed_enabled)
		fprintf(f, "  !! the fixed counters ran %.1f %% of the interval only\n",
			100.0 * (double)d->fixed_running / (double)d->fixed_enabled);

	have_acc = hwtel_ddr_value(d, "ddr_hif_rd_or_wr_access", &acc, NULL);
	hwtel_ddr_value(d, "ddr_hif_rd_access", &rd, NULL);
	hwtel_ddr_value(d, "ddr_hif_wr_access", &wr, NULL);
	hwtel_ddr_value(d, "ddr_hif_rmw_access", &rmw, NULL);
	if (!have_acc && !isnan(rd) && !isnan(wr))
		acc = rd + wr;
	if (sect_present(d, S_HIF)) {
		fputs("\nHIF requests\n", f);
		for (i = 0; i < d->nevents; i++) {
			const struct hwtel_ddr_event *e = &d->events[i];

			if (sect_of(e->name) != S_HIF)
				continue;
			hwtel_ddr_value(d, e->name, &v, &exact);
			fmt_rate(a, sizeof(a), v, ev_seconds(d, e->name, seconds));
			fmt_count(b, sizeof(b), v, exact);
			c[0] = '\0';
			if (strcmp(e->name, "ddr_hif_rd_or_wr_access") && !isnan(v) && acc > 0)
				snprintf(c, sizeof(c), "%.2f %% of accesses", 100.0 * v / acc);
			line4(f, label_of(e->name), a, b, c);
		}
	}
	if (sect_present(d, S_DFI)) {
		fputs("\nDFI (controller to PHY)\n", f);
		sect_rows(f, d, S_DFI, seconds, 0, false);
		hwtel_ddr_value(d, "ddr_dfi_rd_data_access", &dfr, NULL);
		hwtel_ddr_value(d, "ddr_dfi_wr_data_access", &dfw, NULL);
		hwtel_ddr_value(d, "ddr_dfi_cycles", &dfc, NULL);
		if (!isnan(dfr) && !isnan(dfw) && !isnan(rd) && !isnan(wr) && dfr + dfw > 0)
			snprintf(a, sizeof(a), "%.2f %%", 100.0 * (rd + wr) / (dfr + dfw));
		else
			snprintf(a, sizeof(a), "-");
		line4(f, "HIF-to-DFI efficiency", a, "", "HIF reads+writes / DFI data cycles");
		if (!isnan(dfc) && dfc > 0 && !isnan(dfr) && !isnan(dfw)) {
			snprintf(a, sizeof(a), "%.2f %%", 100.0 * (dfr + dfw) / dfc);
			line4(f, "DFI data bus busy", a, "", "DFI data cycles / DFI cycles");
		}
	}
	if (sect_present(d, S_SCHED)) {
		fputs("\nScheduling\n", f);
		sect_rows(f, d, S_SCHED, seconds, acc, true);
	}
	if (sect_present(d, S_REFRESH)) {
		fputs("\nRefresh and calibration\n", f);
		sect_rows(f, d, S_REFRESH, seconds, 0, false);
	}
	if (sect_present(d, S_LOWPOWER)) {
		fputs("\nLow-power entries\n", f);
		sect_rows(f, d, S_LOWPOWER, seconds, 0, false);
	}
	if (sect_present(d, S_ERRORS)) {
		fputs("\nErrors\n", f);
		sect_rows(f, d, S_ERRORS, seconds, 0, false);
	}
	if (sect_present(d, S_OTHER)) {
		fputs("\nOther events\n", f);
		sect_rows(f, d, S_OTHER, seconds, 0, false);
	}
	for (i = 0; i < d->nevents; i++) {
		const struct hwtel_ddr_event *e = &d->events[i];

		if (e->running < e->enabled) {
			scaled = true;
			if (e->running < minrun) {
				minrun = e->running;
				en = e->enabled;
			}
		}
	}
	if (scaled)
		fprintf(f, "\n~ estimate: %u events in %u groups share the %d generic counters, so perf\n"
			"  rotated the groups; each ~ value is count x enabled / running time\n"
			"  (least covered group counted %.1f %% of the interval). Use -e with at\n"
			"  most %d events for exact counts.\n",
			d->nevents, d->ngroups, HWTEL_DDR_GENERIC,
			en ? 100.0 * (double)minrun / (double)en : 0.0, HWTEL_DDR_GENERIC);
	return ferror(f) ? -EIO : 0;
}

int hwtel_ddr_format_text(FILE *f, const struct hwtel_ddr_data *d, double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = ddr_format_text_c(f, d, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}

/* ------------------------------------------------------------------ */
/* JSON, CSV, Prometheus                                              */
/* ------------------------------------------------------------------ */

static int ddr_format_json_c(FILE *f, const struct hwtel_ddr_data *const *d, unsigned int n,
			       double seconds)
{
	struct hwtel_json j;
	unsigned int k, i;

	hwtel_clear_error();
	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "seconds");
	if (seconds > 0)
		hj_double(&j, seconds);
	else
		hj_null(&j);
	hj_key(&j, "data");
	hj_arr_begin(&j);
	for (k = 0; k < n; k++) {
		const struct hwtel_ddr_data *p = d[k];
		double rd, wr, dfr, dfw, v;
		bool exact;

		hj_obj_begin(&j);
		hj_key(&j, "pmu"); hj_str(&j, p->pmu);
		hj_key(&j, "identifier"); hj_str(&j, p->identifier);
		hj_key(&j, "reads"); hj_u64(&j, p->reads);
		hj_key(&j, "writes"); hj_u64(&j, p->writes);
		hj_key(&j, "fixed_enabled_ns"); hj_u64(&j, p->fixed_enabled);
		hj_key(&j, "fixed_running_ns"); hj_u64(&j, p->fixed_running);
		hj_key(&j, "events");
		hj_obj_begin(&j);
		for (i = 0; i < p->nevents; i++) {
			hj_key(&j, p->events[i].name);
			hj_obj_begin(&j);
			hj_key(&j, "value"); hj_u64(&j, p->events[i].value);
			hj_key(&j, "enabled_ns"); hj_u64(&j, p->events[i].enabled);
			hj_key(&j, "running_ns"); hj_u64(&j, p->events[i].running);
			hj_key(&j, "group"); hj_uint(&j, p->events[i].group);
			hj_obj_end(&j);
		}
		hj_obj_end(&j);
		hj_key(&j, "derived");
		hj_obj_begin(&j);
		hj_key(&j, "read_bytes"); hj_u64(&j, p->reads * HWTEL_DDR_BURST_BYTES);
		hj_key(&j, "write_bytes"); hj_u64(&j, p->writes * HWTEL_DDR_BURST_BYTES);
		hj_key(&j, "read_bytes_per_second");
		hj_double(&j, seconds > 0 ? (double)p->reads * 64 / seconds : NAN);
		hj_key(&j, "write_bytes_per_second");
		hj_double(&j, seconds > 0 ? (double)p->writes * 64 / seconds : NAN);
		hwtel_ddr_value(p, "ddr_hif_rd_access", &rd, NULL);
		hwtel_ddr_value(p, "ddr_hif_wr_access", &wr, NULL);
		hwtel_ddr_value(p, "ddr_dfi_rd_data_access", &dfr, NULL);
		hwtel_ddr_value(p, "ddr_dfi_wr_data_access", &dfw, NULL);
		hj_key(&j, "hif_to_dfi_efficiency_pct");
		hj_double(&j, dfr + dfw > 0 ? 100.0 * (rd + wr) / (dfr + dfw) : NAN);
		hj_key(&j, "events");
		hj_obj_begin(&j);
		for (i = 0; i < p->nevents; i++) {
			hwtel_ddr_value(p, p->events[i].name, &v, &exact);
			hj_key(&j, p->events[i].name);
			hj_obj_begin(&j);
			hj_key(&j, "value"); hj_double(&j, v);
			hj_key(&j, "exact"); hj_bool(&j, exact);
			hj_key(&j, "per_second");
			hj_double(&j, seconds > 0 ? v / ev_seconds(p, p->events[i].name, seconds) : NAN);
			hj_obj_end(&j);
		}
		hj_obj_end(&j);
		hj_obj_end(&j);
		hj_obj_end(&j);
	}
	hj_arr_end(&j);
	hj_key(&j, "hwtel");
	hj_obj_begin(&j);
	hj_key(&j, "version"); hj_str(&j, HWTEL_VERSION);
	hj_key(&j, "generic_counters"); hj_uint(&j, HWTEL_DDR_GENERIC);
	hj_obj_end(&j);
	hj_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int hwtel_ddr_format_json(FILE *f, const struct hwtel_ddr_data *const *d, unsigned int n,
			  double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = ddr_format_json_c(f, d, n, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}

/* a percentage as perf stat -x prints it */
static const char *fixed_pct_s(char *buf, size_t size, double pct)
{
	snprintf(buf, size, "%.2f", pct);
	return buf;
}

static int ddr_format_csv_c(FILE *f, const struct hwtel_ddr_data *d, double seconds,
			      const char *sep)
{
	double fixed_pct = d->fixed_enabled ?
		100.0 * (double)d->fixed_running / (double)d->fixed_enabled : 100.0;
	unsigned int i;
	char buf[32];

	hwtel_clear_error();
	(void)seconds;
	/* every field quoted when it holds the separator (RFC 4180) */
	for (i = 0; i < 2; i++) {
		hwtel_csv_fmt(f, sep, "%llu", (unsigned long long)(i ? d->writes : d->reads));
		hwtel_csv_fmt(f, sep, "bursts");
		hwtel_csv_event(f, sep, d->pmu, i ? "ddr_ddr_writes" : "ddr_ddr_reads");
		fputs(sep, f);
		hwtel_csv_fmt(f, sep, "%llu", (unsigned long long)d->fixed_running);
		hwtel_csv_field(f, fixed_pct_s(buf, sizeof(buf), fixed_pct), sep);
		fputc('\n', f);
	}
	for (i = 0; i < d->nevents; i++) {
		const struct hwtel_ddr_event *e = &d->events[i];
		double v;
		bool exact;

		/* like perf stat -x: the scaled value, run time and % running */
		if (!hwtel_ddr_value(d, e->name, &v, &exact)) {
			hwtel_csv_fmt(f, sep, "<not counted>");
			fputs(sep, f);
			hwtel_csv_event(f, sep, d->pmu, e->name);
			fputs(sep, f);
			hwtel_csv_fmt(f, sep, "0");
			hwtel_csv_field(f, "0.00", sep);
		} else {
			hwtel_csv_fmt(f, sep, "%.0f", v);
			fputs(sep, f);
			hwtel_csv_event(f, sep, d->pmu, e->name);
			fputs(sep, f);
			hwtel_csv_fmt(f, sep, "%llu", (unsigned long long)e->running);
			hwtel_csv_field(f, fixed_pct_s(buf, sizeof(buf), e->enabled ?
					100.0 * (double)e->running / (double)e->enabled : 100.0), sep);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

int hwtel_ddr_format_csv(FILE *f, const struct hwtel_ddr_data *d, double seconds,
			 const char *sep)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = ddr_format_csv_c(f, d, seconds, sep);
	hwtel_numeric_restore(&num);
	return ret;
}

/*
 * The labels of a DSS PMU: device, its PMU name, and controller, the MMIO
 * base of its DDR controller (one region per controller), which the PMU
 * name holds in hex after the prefix; a PMU named otherwise is its own
 * controller name.
 */
static const char *prom_labels(const struct hwtel_ddr_data *d, char *buf, size_t len)
{
	const char *base = d->pmu;
	size_t pl = strlen(HWTEL_DDR_PMU_PREFIX);

	if (!strncmp(base, HWTEL_DDR_PMU_PREFIX, pl) && base[pl] &&
	    strspn(base + pl, "0123456789abcdef") == strlen(base + pl))
		snprintf(buf, len, "device=\"%s\",controller=\"0x%s\"", d->pmu, base + pl);
	else
		snprintf(buf, len, "device=\"%s\",controller=\"%s\"", d->pmu, d->pmu);
	return buf;
}

static int ddr_format_prom_c(FILE *f, const struct hwtel_ddr_data *const *cum,
			       const struct hwtel_ddr_data *const *d, unsigned int n, double seconds)
{
	char lbl[2 * 256 + 40];
	unsigned int k, i;
	bool head = false;

	hwtel_clear_error();
	fputs("# HELP hwtel_ddr_bytes_total Bytes moved by DDR reads and writes (fixed counters x 64 B).\n"
	      "# TYPE hwtel_ddr_bytes_total counter\n", f);
	for (k = 0; k < n; k++) {
		prom_labels(cum[k], lbl, sizeof(lbl));
		fprintf(f, "hwtel_ddr_bytes_total{%s,direction=\"read\"} %llu\n", lbl,
			(unsigned long long)(cum[k]->reads * HWTEL_DDR_BURST_BYTES));
		fprintf(f, "hwtel_ddr_bytes_total{%s,direction=\"write\"} %llu\n", lbl,
			(unsigned long long)(cum[k]->writes * HWTEL_DDR_BURST_BYTES));
	}
	/*
	 * What the counter counted while the event was on it: it only grows.
	 * The estimate scales it by enabled/running (perf's multiplexing) and
	 * goes down when the event is counted more of the time than before,
	 * so it is a gauge.
	 */
	fputs("# HELP hwtel_ddr_events_counted_total Generic DSS events counted while the event was on a counter (not scaled).\n"
	      "# TYPE hwtel_ddr_events_counted_total counter\n", f);
	for (k = 0; k < n; k++) {
		prom_labels(cum[k], lbl, sizeof(lbl));
		for (i = 0; i < cum[k]->nevents; i++)
			fprintf(f, "hwtel_ddr_events_counted_total{%s,event=\"%s\"} %llu\n",
				lbl, cum[k]->events[i].name,
				(unsigned long long)cum[k]->events[i].value);
	}
	head = false;
	for (k = 0; k < n; k++) {
		prom_labels(cum[k], lbl, sizeof(lbl));
		for (i = 0; i < cum[k]->nevents; i++) {
			double v;

			if (!hwtel_ddr_value(cum[k], cum[k]->events[i].name, &v, NULL))
				continue;
			if (!head)
				fputs("# HELP hwtel_ddr_events_estimate Generic DSS events since the start, scaled by perf when multiplexed (an estimate: it can go down).\n"
				      "# TYPE hwtel_ddr_events_estimate gauge\n", f);
			head = true;
			fprintf(f, "hwtel_ddr_events_estimate{%s,event=\"%s\"} %.0f\n",
				lbl, cum[k]->events[i].name, v);
		}
	}
	fputs("# HELP hwtel_ddr_event_running_ratio Share of the time an event was counted (1 = exact).\n"
	      "# TYPE hwtel_ddr_event_running_ratio gauge\n", f);
	for (k = 0; k < n; k++) {
		prom_labels(cum[k], lbl, sizeof(lbl));
		for (i = 0; i < cum[k]->nevents; i++) {
			const struct hwtel_ddr_event *e = &cum[k]->events[i];

			fprintf(f, "hwtel_ddr_event_running_ratio{%s,event=\"%s\"} %.6f\n",
				lbl, e->name,
				e->enabled ? (double)e->running / (double)e->enabled : 0.0);
		}
	}
	/* the bandwidth is rate(hwtel_ddr_bytes_total): no gauge of the interval */
	(void)d;
	(void)seconds;
	return ferror(f) ? -EIO : 0;
}

int hwtel_ddr_format_prom(FILE *f, const struct hwtel_ddr_data *const *cum,
			  const struct hwtel_ddr_data *const *d, unsigned int n, double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = ddr_format_prom_c(f, cum, d, n, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}

/* ------------------------------------------------------------------ */
/* PCIe event descriptions (hwtel list)                               */
/* ------------------------------------------------------------------ */

const char *hwtel_pcie_event_desc(const char *name)
{
	static const char *const d[][2] = {
		{ "pcie_cycles", "elapsed cycles of the PCIe clock probe" },
		{ "dma_cycles", "elapsed cycles of the DMA clock probe" },
		{ "words", "cycles a word moved on the bus (SRC_RDY and DST_RDY)" },
		{ "stall", "cycles the bus was stalled by its consumer (MFB)" },
		{ "frames", "transactions (SOF) started on the bus" },
		{ "mvb_items", "MVB items: every request, with or without payload" },
		{ "mvb_stall", "cycles the MVB of the bus was stalled" },
		{ "items", "MFB items moved (up to EOF_POS in the last region)" },
		{ "region", "cycles region idx of the bus carried frame data" },
		{ "brake", "cycles stop reason idx was active" },
		{ "tags_band", "PCIe cycles the free PCIe tags were in band idx" },
		{ "stfifo_band", "PCIe cycles the free storage FIFO words were in band idx" },
		{ "raw", "counter entry idx of the block" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(d); i++)
		if (!strcmp(d[i][0], name))
			return d[i][1];
	return NULL;
}
