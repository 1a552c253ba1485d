// SPDX-License-Identifier: GPL-2.0
/* DDR report: metric math, exact vs scaled values, text/JSON/CSV/Prometheus. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <libhwtel/hwtel.h>

#include "unit.h"

static void ev(struct hwtel_ddr_data *d, const char *name, unsigned int g, uint64_t v,
	       uint64_t en, uint64_t run)
{
	struct hwtel_ddr_event *e = &d->events[d->nevents++];

	snprintf(e->name, sizeof(e->name), "%s", name);
	e->group = g;
	e->value = v;
	e->enabled = en;
	e->running = run;
}

/* A reading with room for ddr_sample()'s 14 events */
static struct hwtel_ddr_data *new_ddr(void)
{
	struct hwtel_ddr_data *d = hwtel_ddr_data_new_events("mrvl_ddr_pmu_87e1c0000000",
							     "odyssey", 14);

	if (!d)
		abort();
	return d;
}

/* 1 s; group 0 exact, group 1 counted half the time (values scaled x2) */
static void ddr_sample(struct hwtel_ddr_data *d)
{
	const uint64_t s = 1000000000ull;

	d->nevents = 0;		/* ev() fills them again */
	d->reads = 200000000;
	d->writes = 100000000;
	d->fixed_enabled = s;
	d->fixed_running = s;
	d->ngroups = 2;
	ev(d, "ddr_hif_rd_or_wr_access", 0, 300000000, s, s);
	ev(d, "ddr_hif_rd_access", 0, 200000000, s, s);
	ev(d, "ddr_hif_wr_access", 0, 90000000, s, s);
	ev(d, "ddr_hif_rmw_access", 0, 10000000, s, s);
	ev(d, "ddr_dfi_rd_data_access", 0, 400000000, s, s);
	ev(d, "ddr_dfi_wr_data_access", 0, 200000000, s, s);
	ev(d, "ddr_rdwr_transitions", 0, 3000000, s, s);
	ev(d, "ddr_raw_hazard", 0, 30000, s, s);
	ev(d, "ddr_war_hazard", 1, 15000, s, s / 2);
	ev(d, "ddr_waw_hazard", 1, 0, s, s / 2);
	ev(d, "ddr_dfi_cycles", 1, 400000000, s, s / 2);
	ev(d, "ddr_refresh", 1, 4000, s, s / 2);
	ev(d, "ddr_enter_selfref", 1, 1, s, s / 2);
	ev(d, "ddr_rd_crc_error", 1, 0, s, 0);	/* never scheduled */
}

static char *render(int (*fn)(FILE *, const struct hwtel_ddr_data *, double),
		    const struct hwtel_ddr_data *d, double s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK_EQ(fn(f, d, s), 0);
	fclose(f);
	return buf;
}

TEST(ddr_values_exact_and_scaled)
{
	struct hwtel_ddr_data *d = new_ddr();
	double v;
	bool exact;

	ddr_sample(d);
	CHECK(hwtel_ddr_value(d, "ddr_hif_rd_access", &v, &exact));
	CHECK_NEAR(v, 200000000, 0);
	CHECK(exact);
	CHECK(hwtel_ddr_value(d, "ddr_war_hazard", &v, &exact));
	CHECK_NEAR(v, 30000, 0);	/* 15000 x enabled/running = x2 */
	CHECK(!exact);
	CHECK(!hwtel_ddr_value(d, "ddr_rd_crc_error", &v, &exact));	/* running 0 */
	CHECK(isnan(v));
	CHECK(!hwtel_ddr_value(d, "ddr_zqcl", &v, &exact));		/* not counted */
	/* the CN10K spelling answers for the Odyssey name */
	snprintf(d->events[4].name, sizeof(d->events[4].name), "ddr_dif_rd_data_access");
	CHECK(hwtel_ddr_value(d, "ddr_dfi_rd_data_access", &v, &exact));
	CHECK_NEAR(v, 400000000, 0);
	hwtel_ddr_data_free(d);
}

TEST(ddr_diff)
{
	struct hwtel_ddr_data *a = new_ddr(), *b = new_ddr();

	ddr_sample(a);
	ddr_sample(b);
	b->reads += 1000;
	b->writes += 24;
	b->fixed_enabled += 5;
	b->events[2].value += 7;
	b->events[9].running += 3;
	CHECK_EQ(hwtel_ddr_diff(b, a, b), 0);
	CHECK_U64(b->reads, 1000);
	CHECK_U64(b->writes, 24);
	CHECK_U64(b->fixed_enabled, 5);
	CHECK_U64(b->events[2].value, 7);
	CHECK_U64(b->events[9].running, 3);
	CHECK_U64(b->events[0].value, 0);
	hwtel_ddr_data_free(a);
	hwtel_ddr_data_free(b);
}

static int json1(FILE *f, const struct hwtel_ddr_data *d, double s);

/*
 * A reading has room for its handle's events, as many as they are (the
 * struct had 48); readings of other events are not mixed.
 */
TEST(ddr_data_sized_to_events)
{
	struct hwtel_ddr_data *big = hwtel_ddr_data_new_events("mrvl_ddr_pmu_87e1c0000000",
							       NULL, 60);
	struct hwtel_ddr_data *big2 = hwtel_ddr_data_new_events("x", NULL, 60);
	struct hwtel_ddr_data *d = new_ddr();
	unsigned int i;
	char *out;

	CHECK_EQ(big->nevents, 60);
	CHECK_STR(big->identifier, "");
	for (i = 0; i < big->nevents; i++) {
		snprintf(big->events[i].name, sizeof(big->events[i].name), "ddr_ev%u", i);
		big->events[i].value = 1000 + i;
		big->events[i].enabled = big->events[i].running = 1000000000;
	}
	out = render(json1, big, 1.0);
	CHECK(strstr(out, "\"ddr_ev59\": {\n") != NULL);
	free(out);
	CHECK_EQ(hwtel_ddr_data_copy(big2, big), 0);
	CHECK_STR(big2->pmu, "mrvl_ddr_pmu_87e1c0000000");
	CHECK_U64(big2->events[59].value, 1059);
	big->events[59].value += 41;
	CHECK_EQ(hwtel_ddr_diff(big, big2, big), 0);
	CHECK_U64(big->events[59].value, 41);
	/* 60 events against 14: refused, nothing written */
	ddr_sample(d);
	CHECK_EQ(hwtel_ddr_diff(big, d, big2), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "different events") != NULL);
	CHECK_EQ(hwtel_ddr_data_copy(d, big), -EINVAL);
	CHECK_U64(d->reads, 200000000);
	CHECK_U64(big2->events[59].value, 1059);
	hwtel_ddr_data_free(big);
	hwtel_ddr_data_free(big2);
	hwtel_ddr_data_free(d);
	hwtel_ddr_data_free(NULL);
}

TEST(ddr_text_report)
{
	struct hwtel_ddr_data *d = new_ddr();
	char *out;

	ddr_sample(d);
	out = render(hwtel_ddr_format_text, d, 1.0);
	/* bandwidth = bursts x 64 B / s, exact */
	CHECK(strstr(out, "  read                            12.800 GB/s        200000000  reads, 12800000000 bytes\n") != NULL);
	CHECK(strstr(out, "  write                            6.400 GB/s        100000000  writes, 6400000000 bytes\n") != NULL);
	CHECK(strstr(out, "  total                           19.200 GB/s        300000000") != NULL);
	/* HIF split and efficiency: (200+90) / (400+200) */
	CHECK(strstr(out, "66.67 % of accesses") != NULL);
	CHECK(strstr(out, "  HIF-to-DFI efficiency               48.33 %") != NULL);
	CHECK(strstr(out, "  DFI data bus busy                   75.00 %") != NULL);	/* 600M / 800M scaled */
	/* hazards per 1000 accesses; scaled ones marked */
	CHECK(strstr(out, "0.100 per 1000 accesses") != NULL);	/* RAW 30000 / 300M */
	CHECK(strstr(out, "~30000") != NULL);
	CHECK(strstr(out, "not counted") != NULL);
	CHECK(strstr(out, "~ estimate:") != NULL);
	unit_golden(out, "golden/ddr-odyssey.txt", true);
	free(out);
	/* all exact: no estimate note */
	d->nevents = 8;
	out = render(hwtel_ddr_format_text, d, 1.0);
	CHECK(strstr(out, "~") == NULL);
	free(out);
	hwtel_ddr_data_free(d);
}

static int json1(FILE *f, const struct hwtel_ddr_data *d, double s)
{
	return hwtel_ddr_format_json(f, &d, 1, s);
}

TEST(ddr_json_schema)
{
	struct hwtel_ddr_data *d = new_ddr();
	char *out, *txt;
	FILE *f;

	ddr_sample(d);
	out = render(json1, d, 1.0);
	txt = render(hwtel_ddr_format_text, d, 1.0);
	CHECK(strstr(out, "\"read_bytes\": 12800000000,") != NULL);
	CHECK(strstr(out, "\"exact\": false,") != NULL);
	f = fopen(unit_tmp("ddr.json"), "w");
	fputs(out, f);
	fclose(f);
	f = fopen(unit_tmp("ddr.txt"), "w");
	fputs(txt, f);
	fclose(f);
	CHECK_EQ(system(unit_fmt("python3 check_json.py ddr %s %s", unit_tmp("ddr.json"), unit_tmp("ddr.txt"))), 0);
	remove(unit_tmp("ddr.json"));
	remove(unit_tmp("ddr.txt"));
	unit_golden(out, "golden/ddr.json", true);
	free(out);
	free(txt);
	hwtel_ddr_data_free(d);
}

static int csv(FILE *f, const struct hwtel_ddr_data *d, double s)
{
	return hwtel_ddr_format_csv(f, d, s, ",");
}

static int csv_dot(FILE *f, const struct hwtel_ddr_data *d, double s)
{
	return hwtel_ddr_format_csv(f, d, s, ".");
}

static int prom(FILE *f, const struct hwtel_ddr_data *d, double s)
{
	return hwtel_ddr_format_prom(f, &d, &d, 1, s);
}

TEST(ddr_csv_and_prometheus)
{
	struct hwtel_ddr_data *d = new_ddr();
	char *out;

	ddr_sample(d);
	out = render(csv, d, 1.0);
	CHECK(strstr(out, "200000000,bursts,mrvl_ddr_pmu_87e1c0000000/ddr_ddr_reads/,1000000000,100.00\n") != NULL);
	CHECK(strstr(out, "30000,,mrvl_ddr_pmu_87e1c0000000/ddr_war_hazard/,500000000,50.00\n") != NULL);
	CHECK(strstr(out, "<not counted>,,mrvl_ddr_pmu_87e1c0000000/ddr_rd_crc_error/,0,0.00\n") != NULL);
	free(out);
	/* -x .: the percentages hold the separator and are quoted (RFC 4180) */
	out = render(csv_dot, d, 1.0);
	CHECK(strstr(out, "200000000.bursts.mrvl_ddr_pmu_87e1c0000000/ddr_ddr_reads/.1000000000.\"100.00\"\n") != NULL);
	CHECK(strstr(out, "<not counted>..mrvl_ddr_pmu_87e1c0000000/ddr_rd_crc_error/.0.\"0.00\"\n") != NULL);
	free(out);
	out = render(prom, d, 1.0);
	CHECK(strstr(out, "hwtel_ddr_bytes_total{device=\"mrvl_ddr_pmu_87e1c0000000\",controller=\"0x87e1c0000000\",direction=\"read\"} 12800000000\n") != NULL);
	CHECK(strstr(out, "hwtel_ddr_events_counted_total{device=\"mrvl_ddr_pmu_87e1c0000000\",controller=\"0x87e1c0000000\",event=\"ddr_war_hazard\"} 15000\n") != NULL);
	CHECK(strstr(out, "# TYPE hwtel_ddr_events_estimate gauge\n") != NULL);
	CHECK(strstr(out, "hwtel_ddr_events_estimate{device=\"mrvl_ddr_pmu_87e1c0000000\",controller=\"0x87e1c0000000\",event=\"ddr_war_hazard\"} 30000\n") != NULL);
	CHECK(strstr(out, "hwtel_ddr_event_running_ratio{device=\"mrvl_ddr_pmu_87e1c0000000\",controller=\"0x87e1c0000000\",event=\"ddr_war_hazard\"} 0.500000\n") != NULL);
	CHECK(strstr(out, "ddr_rd_crc_error\"} ") == NULL || strstr(out, "running_ratio{device=\"mrvl_ddr_pmu_87e1c0000000\",controller=\"0x87e1c0000000\",event=\"ddr_rd_crc_error\"}") != NULL);
	CHECK(strstr(out, "pmu=") == NULL);
	unit_check_prom("ddr", out);
	/* no per-interval gauge that rate() computes from the counters */
	CHECK(strstr(out, "_per_second") == NULL);
	/* the exported names the Grafana dashboard is checked against */
	unit_golden(out, "golden/ddr.prom", true);
	free(out);
	hwtel_ddr_data_free(d);
}

/*
 * Each counter sample of @out1 whose series is in @out2 with a smaller
 * value: printed; returns how many. The series of a "# TYPE NAME counter"
 * family are its samples up to the next TYPE.
 */
static int counters_went_down(const char *out1, const char *out2)
{
	const char *p, *q;
	bool counter = false;
	int down = 0;

	for (p = out1; *p; p = strchr(p, '\n') + 1) {
		char series[512];
		size_t n = strcspn(p, " ");
		double v1, v2;

		if (!strncmp(p, "# TYPE ", 7))
			counter = !strncmp(p + 7 + strcspn(p + 7, " "), " counter\n", 9);
		if (*p == '#' || !counter || n >= sizeof(series) - 1)
			continue;
		memcpy(series, p, n);
		series[n] = ' ';
		series[n + 1] = '\0';
		v1 = strtod(p + n + 1, NULL);
		for (q = out2; q && *q; q = strchr(q, '\n') + 1)
			if (!strncmp(q, series, n + 1))
				break;
		if (!q || !*q)
			continue;
		v2 = strtod(q + n + 1, NULL);
		if (v2 < v1) {
			printf("#   counter went down: %s%.9g then %.9g\n", series, v1, v2);
			down++;
		}
	}
	return down;
}

/*
 * perf scales a multiplexed event by enabled/running: its estimate since
 * the start can go down (counted more of the time later, the earlier
 * estimate was high). No such value may be a counter.
 */
TEST(ddr_prom_counters_monotonic)
{
	struct hwtel_ddr_data *d = new_ddr();
	char *out1, *out2;

	ddr_sample(d);
	/* 1 s: ddr_war_hazard counted 0.5 s, 15000: estimate 30000 */
	out1 = render(prom, d, 1.0);
	/* 2 s: counted 1.5 s, 20000 in all: estimate 26667 */
	d->reads *= 2;
	d->writes *= 2;
	d->fixed_enabled *= 2;
	d->fixed_running *= 2;
	d->events[8].value = 20000;
	d->events[8].enabled = 2000000000;
	d->events[8].running = 1500000000;
	out2 = render(prom, d, 1.0);
	CHECK_EQ(counters_went_down(out1, out2), 0);
	free(out1);
	free(out2);
	hwtel_ddr_data_free(d);
}

/*
 * The Grafana dashboard (data/grafana/hwtel.json) may query only what hwtel
 * exports: the names, labels and fixed label values of the PCIe and DDR
 * goldens, which pcie_prometheus and ddr_csv_and_prometheus compare with the
 * formatters' output.
 */
TEST(grafana_dashboard_names)
{
	CHECK_EQ(system("python3 check_grafana.py ../../data/grafana/hwtel.json golden/seed.prom golden/ddr.prom"), 0);
}

TEST(ddr_event_descriptions)
{
	CHECK_STR(hwtel_ddr_event_desc("ddr_cam_wr_access"), "ZQCS (short ZQ calibration) commands (upstream name kept)");
	CHECK_STR(hwtel_ddr_event_desc("ddr_dif_wr_data_access"), "DFI cycles carrying write data");
	CHECK(hwtel_ddr_event_desc("ddr_nope") == NULL);
	CHECK(hwtel_pcie_event_desc("region") != NULL);
}

/* The same output in a locale with a decimal comma as in C */
TEST(ddr_formats_locale_independent)
{
	static int (*const fmt[])(FILE *, const struct hwtel_ddr_data *, double) = {
		hwtel_ddr_format_text, json1, csv, prom,
	};
	static const char *const name[] = { "text", "json", "csv", "prom" };
	struct hwtel_ddr_data *d = new_ddr();
	char *c_out, *out;
	unsigned int i;

	ddr_sample(d);
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		unit_setlocale_c();
		c_out = render(fmt[i], d, 1.5);
		if (!unit_setlocale_comma()) {
			free(c_out);
			break;
		}
		out = render(fmt[i], d, 1.5);
		unit_setlocale_c();
		unit_same_in_comma_locale(name[i], c_out, out);
		free(c_out);
		free(out);
	}
	hwtel_ddr_data_free(d);
}
