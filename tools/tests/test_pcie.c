// SPDX-License-Identifier: GPL-2.0
/*
 * PCIe report: the seed's example reproduced byte for byte from raw counter
 * values over 1.00 s, metric math, diff, JSON/CSV/Prometheus goldens and
 * unknown layouts.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include <libhwtel/hwtel.h>

#include "cli.h"
#include "unit.h"

/* The seed example's configuration: 1 endpoint, 1 DMA port, RQ/RC 4 x 32 B,
 * UP/DOWN 2 x 32 B, 4-byte items, 6 reasons + 2 x 4 bands.
 */
static void seed_config(struct hwtel_pcie_config *c)
{
	memset(c, 0, sizeof(*c));
	c->pcie_endpoints = 1;
	c->dma_ports = 1;
	c->probe_pcie_regions = 4;
	c->probe_dma_regions = 2;
	c->counter_width = 48;
	c->item_bytes = 4;
	c->drain_period = 4096;
	c->hist_bands = 4;
	c->tag_capacity = 256;
	c->stfifo_capacity = 1024;
	c->entries = 64;
	c->counters_per_ep = 52;
	c->pcie_channels = 35;
	c->pcie_buses = 2;
	c->dma_channels = 17;
	c->dma_buses = 2;
	c->brake_channels = 14;
	c->hist_pcie = 2;
	c->regions[0] = c->regions[1] = 4;
	c->regions[2] = c->regions[3] = 2;
	c->region_bytes[0] = c->region_bytes[1] = 32;
	c->region_bytes[2] = c->region_bytes[3] = 32;
}

static void set_bus(struct hwtel_pcie_bus *b, uint64_t words, uint64_t stall,
		    uint64_t frames, uint64_t mvb, uint64_t mvb_stall, uint64_t items,
		    const uint64_t *regions)
{
	unsigned int r;

	b->words = words;
	b->backpressure = stall;
	b->transactions = frames;
	b->mvb = mvb;
	b->mvb_backpressure = mvb_stall;
	b->items = items;
	for (r = 0; r < b->nregions; r++)
		b->regions[r] = regions[r];
}

/*
 * Raw counts that give exactly the seed's numbers over 1.00 s:
 * 400 MHz PCIe clock, 200 MHz DMA clock; see the derivation in
 * Documentation/userspace-api/hwtel.rst ("golden test").
 */
static void seed_data(struct hwtel_pcie_data *d)
{
	static const uint64_t rq_reg[4] = { 359600000, 254400000, 254400000, 254000000 };
	static const uint64_t rc_reg[4] = { 179200000, 178800000, 178400000, 178320000 };
	static const uint64_t up_reg[2] = { 133400000, 132400000 };
	static const uint64_t down_reg[2] = { 91000000, 90800000 };
	static const uint64_t brakes[6] = { 54400000, 1600000, 0, 0, 33600000, 400000 };
	static const uint64_t tags[4] = { 1200000, 159200000, 31600000, 208000000 };
	static const uint64_t fifo[4] = { 0, 84000000, 108000000, 208000000 };
	struct hwtel_pcie_ep *ep;
	unsigned int i;

	d->state_valid = true;
	ep = &d->endpoints[0];
	ep->link_up = true;
	ep->mps = 512;
	ep->mrrs = 4096;
	ep->ext_tag = true;
	ep->tag_10b = false;
	ep->rcb = 64;
	ep->tags_free = 118;
	ep->tags_free_min = 3;
	ep->stfifo_free = 640;
	ep->stfifo_free_min = 96;
	ep->pcie_cycles = 400000000;
	ep->dma_cycles = 200000000;
	set_bus(&ep->buses[0], 359600000, 40000, 58000000, 0, 0, 8979062500ull, rq_reg);
	set_bus(&ep->buses[1], 197600000, 0, 34000000, 0, 0, 5718437500ull, rc_reg);
	set_bus(&ep->buses[2], 133800000, 45400000, 43000000, 58000000, 27800000,
		2126250000ull, up_reg);
	set_bus(&ep->buses[3], 97200000, 1600000, 34800000, 34800000, 600000,
		1454375000ull, down_reg);
	for (i = 0; i < 6; i++)
		ep->brakes[i] = brakes[i];
	for (i = 0; i < 4; i++) {
		ep->hists[0][i] = tags[i];
		ep->hists[1][i] = fifo[i];
	}
}

static char *render(int (*fn)(FILE *, const struct hwtel_pcie_data *, double),
		    const struct hwtel_pcie_data *d, double s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_EQ(fn(f, d, s), 0);
	fclose(f);
	return buf;
}

/* A reading of @c's layout, named @pmu (never NULL: the test stops) */
static struct hwtel_pcie_data *new_layout(const char *pmu, const struct hwtel_pcie_config *c)
{
	struct hwtel_pcie_data *d = hwtel_pcie_data_new_config(pmu, c);

	if (!d) {
		fprintf(stderr, "hwtel_pcie_data_new_config: %s\n", hwtel_last_error());
		abort();
	}
	return d;
}

/* An empty reading of the seed's layout (seed_data() fills it) */
static struct hwtel_pcie_data *new_data(void)
{
	struct hwtel_pcie_config c;

	seed_config(&c);
	return new_layout("ndk_pcie_tlm_3fff00000000", &c);
}

TEST(pcie_seed_example_byte_for_byte)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	out = render(hwtel_pcie_format_text, d, 1.0);
	/* golden/seed-pcie.txt is the seed's example block, dedented (never
	 * regenerated from our output)
	 */
	unit_golden(out, "golden/seed-pcie.txt", false);
	free(out);
	hwtel_pcie_data_free(d);
}

TEST(pcie_seed_example_equals_shared_seed)
{
	/* the golden is the seed: check it against the seed itself when the
	 * shared tree is there
	 */
	char *rst = unit_slurp("../../../shared/seeds/pcie-telemetry-tool.rst", NULL);
	char *gold = unit_slurp("golden/seed-pcie.txt", NULL);
	char *p, *q, *ded;
	size_t n = 0;

	CHECK(gold != NULL);
	if (!rst || !gold) {
		printf("#   shared seed not found; golden checked alone\n");
		free(rst);
		free(gold);
		return;
	}
	p = strstr(rst, "    PCIe telemetry - 1 endpoint(s)");
	CHECK(p != NULL);
	ded = calloc(1, strlen(rst) + 1);
	for (q = p; q && *q; ) {
		char *nl = strchr(q, '\n');
		size_t len = nl ? (size_t)(nl - q) : strlen(q);

		if (len == 0) {
			ded[n++] = '\n';
		} else if (len >= 4 && !strncmp(q, "    ", 4)) {
			memcpy(ded + n, q + 4, len - 4);
			n += len - 4;
			ded[n++] = '\n';
		} else {
			break;
		}
		q = nl ? nl + 1 : NULL;
	}
	while (n >= 2 && ded[n - 1] == '\n' && ded[n - 2] == '\n')
		ded[--n] = '\0';
	CHECK_STR(ded, gold);
	free(ded);
	free(rst);
	free(gold);
}

TEST(pcie_metric_math)
{
	struct hwtel_pcie_data *d = new_data();
	struct hwtel_pcie_bus_metrics m;
	struct hwtel_pcie_ep *ep;

	seed_data(d);
	ep = &d->endpoints[0];
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[0], 1.0, &m);
	CHECK_NEAR(m.used_pct, 70.15, 1e-9);
	CHECK_NEAR(m.words_pct, 89.9, 1e-9);
	CHECK_NEAR(m.mfb_stall_pct, 0.01, 1e-12);
	CHECK(isnan(m.mvb_stall_pct));
	CHECK(isnan(m.rd_pct));
	CHECK_U64(m.bytes, 35916250000ull);
	CHECK_U64(m.requests, 58000000);
	CHECK_NEAR(m.gbps, 287.33, 1e-9);
	CHECK_NEAR(m.mpps, 58.0, 1e-12);
	CHECK_NEAR(m.avg_bytes, 35916250000.0 / 58e6, 1e-9);
	CHECK_NEAR(hwtel_pcie_region_pct(ep, &ep->buses[0], 3), 63.5, 1e-9);
	CHECK(isnan(hwtel_pcie_region_pct(ep, &ep->buses[0], 4)));
	/* UP: requests come from the MVB; reads = MVB items - frames */
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[2], 1.0, &m);
	CHECK_U64(m.requests, 58000000);
	CHECK_NEAR(m.rd_pct, 100.0 * 15 / 58, 1e-9);
	CHECK_NEAR(m.mvb_stall_pct, 13.9, 1e-9);
	CHECK_NEAR(m.used_pct, 66.45, 1e-9);
	/* same reading over 2 s halves the rates, not the shares */
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[2], 2.0, &m);
	CHECK_NEAR(m.gbps, 34.02, 1e-9);
	CHECK_NEAR(m.mpps, 29.0, 1e-9);
	CHECK_NEAR(m.words_pct, 66.9, 1e-9);
	/* no interval: no rates */
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[2], 0, &m);
	CHECK(isnan(m.gbps) && isnan(m.mpps));
	/* no cycles: undefined shares, no division by zero */
	ep->dma_cycles = 0;
	ep->buses[2].transactions = 0;
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[2], 1.0, &m);
	CHECK(isnan(m.used_pct) && isnan(m.words_pct) && isnan(m.avg_bytes));
	/* frames > MVB items on UP (cannot happen) clamps reads at 0 */
	ep->buses[2].transactions = 60000000;
	hwtel_pcie_bus_metrics(d, ep, &ep->buses[2], 1.0, &m);
	CHECK_NEAR(m.rd_pct, 0.0, 0);
	hwtel_pcie_data_free(d);
}

TEST(pcie_diff_wraps_modulo_2_64)
{
	struct hwtel_pcie_data *a = new_data(), *b = new_data(), *o = new_data();

	seed_data(a);
	seed_data(b);
	/* b = a + seed values: the difference is the seed again */
	b->endpoints[0].pcie_cycles += 400000000;
	b->endpoints[0].buses[0].words += 7;
	b->endpoints[0].buses[3].regions[1] += 5;
	b->endpoints[0].hists[1][2] += 9;
	b->endpoints[0].brakes[5] += 11;
	a->endpoints[0].dma_cycles = UINT64_MAX - 9;	/* 64-bit wrap */
	b->endpoints[0].dma_cycles = 10;
	b->endpoints[0].tags_free = 77;		/* gauges come from new */
	b->status.lost_deltas = true;
	CHECK_EQ(hwtel_pcie_diff(b, a, o), 0);
	CHECK_U64(o->endpoints[0].pcie_cycles, 400000000);
	CHECK_U64(o->endpoints[0].dma_cycles, 20);
	CHECK_U64(o->endpoints[0].buses[0].words, 7);
	CHECK_U64(o->endpoints[0].buses[0].items, 0);
	CHECK_U64(o->endpoints[0].buses[3].regions[1], 5);
	CHECK_U64(o->endpoints[0].hists[1][2], 9);
	CHECK_U64(o->endpoints[0].brakes[5], 11);
	CHECK_EQ(o->endpoints[0].tags_free, 77);
	CHECK(o->status.lost_deltas);
	/* in place */
	CHECK_EQ(hwtel_pcie_diff(b, a, b), 0);
	CHECK_U64(b->endpoints[0].pcie_cycles, 400000000);
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(b);
	hwtel_pcie_data_free(o);
}

TEST(pcie_totals_and_flags_text)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	d->status.lost_deltas = true;
	d->status.readout_overrun = true;
	out = render(hwtel_pcie_format_text, d, 0);
	/* warnings at the top, before the first endpoint */
	CHECK(strstr(out, "Totals since the last clear\n\n  !! LOST DELTAS - the counters are not exact\n  !! READ-OUT OVERRUN - the counters are not exact\n  !! Figures marked ! cannot be trusted\n\nPCIe endpoint 0") != NULL);
	/* no clock line and no rates without an interval */
	CHECK(strstr(out, "MHz") == NULL);
	unit_golden(out, "golden/seed-totals-flags.txt", true);
	free(out);
	hwtel_pcie_data_free(d);
}

/*
 * A stop reason at 100.00 % (7 characters with its leading blank): the value
 * column grows by one for every row so labels and values stay apart; the
 * rows and the DOWN column are computed by hand from the seed layout
 * (labels padded to 26 and 23 characters, "%7.2f %", five blanks).
 */
TEST(pcie_stop_reason_100_percent)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	d->endpoints[0].brakes[0] = d->endpoints[0].pcie_cycles;
	d->endpoints[0].brakes[4] = d->endpoints[0].pcie_cycles;
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "\n    no free PCIe tag           100.00 %     MFB stalled towards DMA 100.00 %\n") != NULL);
	CHECK(strstr(out, "\n    PCIe tag not ready           0.40 %     MVB stalled towards DMA   0.10 %\n") != NULL);
	CHECK(strstr(out, "entry100") == NULL);
	free(out);
	hwtel_pcie_data_free(d);
}

TEST(pcie_unknown_layout_generic_names)
{
	struct hwtel_pcie_config c;
	struct hwtel_pcie_data *d;
	char *out;

	seed_config(&c);
	c.brake_channels = 7 + 3 * 5;	/* 7 reasons, 3 histograms of 5 bands */
	c.hist_pcie = 3;
	c.hist_bands = 5;
	d = new_layout("x", &c);
	CHECK_EQ(d->endpoints[0].nbrakes, 7);
	CHECK_EQ(d->endpoints[0].nhists, 3);
	CHECK_EQ(d->endpoints[0].nbands, 5);
	d->endpoints[0].pcie_cycles = 1000;
	d->endpoints[0].brakes[6] = 250;
	d->endpoints[0].hists[2][4] = 1000;
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "    reason 6                   25.00 %\n") != NULL);
	CHECK(strstr(out, "band 4") != NULL);
	CHECK(strstr(out, "resource 2") != NULL);
	unit_golden(out, "golden/unknown-layout.txt", true);
	free(out);
	hwtel_pcie_data_free(d);
}

/*
 * The reading grows with the layout: a block beyond every size the header
 * used to fix (16 endpoints, 8 DMA ports, 16 regions, 16 stop reasons,
 * 4 histograms of 8 bands) is read and formatted whole, its last counter
 * of each kind included.
 */
static int csv_semi(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, ";");
}

static struct hwtel_pcie_data *big_data(void)
{
	struct hwtel_pcie_config c;
	struct hwtel_pcie_data *d;
	unsigned int e, b, i, h;

	seed_config(&c);
	c.pcie_endpoints = 17;
	c.dma_ports = 9;
	c.dma_buses = 18;
	c.regions[HWTEL_BUS_RQ] = c.probe_pcie_regions = 17;
	c.hist_pcie = 5;
	c.hist_bands = 9;
	c.brake_channels = 17 + 5 * 9;	/* 17 stop reasons */
	d = new_layout("ndk_pcie_tlm_big", &c);
	d->state_valid = true;
	for (e = 0; e < d->nendpoints; e++) {
		struct hwtel_pcie_ep *ep = &d->endpoints[e];

		ep->pcie_cycles = 1000000;
		ep->dma_cycles = 1000000;
		for (i = 0; i < ep->nbrakes; i++)
			ep->brakes[i] = 1000 * (i + 1);
		for (h = 0; h < ep->nhists; h++)
			for (i = 0; i < ep->nbands; i++)
				ep->hists[h][i] = 10000 * (i + 1) + h;
		for (b = 0; b < ep->nbuses; b++) {
			ep->buses[b].words = 100 + b;
			for (i = 0; i < ep->buses[b].nregions; i++)
				ep->buses[b].regions[i] = 10000 * (i + 1) + e;
		}
	}
	return d;
}

TEST(pcie_layout_beyond_old_limits_whole)
{
	struct hwtel_pcie_data *d = big_data(), *a = big_data(), *o = big_data();
	struct hwtel_pcie_ep *last;
	char *out;

	CHECK_EQ(d->nendpoints, 17);
	last = &d->endpoints[16];
	CHECK_EQ(last->index, 16);
	CHECK_EQ(last->nbuses, 20);
	CHECK_STR(last->buses[19].name, "PTC -> DMA8 (DOWN)");
	CHECK_EQ(last->buses[0].nregions, 17);
	CHECK_EQ(last->nbrakes, 17);
	CHECK_EQ(last->nhists, 5);
	CHECK_EQ(last->nbands, 9);
	CHECK_U64(last->buses[0].regions[16], 170016);
	CHECK_U64(last->hists[4][8], 90004);
	CHECK_NEAR(hwtel_pcie_region_pct(last, &last->buses[0], 16), 17.0016, 1e-9);

	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "TRUNCATED") == NULL);
	CHECK(strstr(out, "\nPCIe endpoint 16\n") != NULL);
	CHECK(strstr(out, "\nPTC -> DMA8 (DOWN)  ") != NULL);
	/* all 17 RQ regions, the 17th at 17.0 % */
	CHECK(strstr(out, "  1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0 10.0 11.0 12.0 13.0 14.0 15.0 16.0 17.0  ") != NULL);
	CHECK(strstr(out, "    reason 16                   1.70 %\n") != NULL);
	CHECK(strstr(out, "band 8") != NULL);
	CHECK(strstr(out, "resource 4") != NULL);
	free(out);
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"truncated\": false") != NULL);
	CHECK(strstr(out, "170016") != NULL);
	free(out);
	out = render(csv_semi, d, 1.0);
	CHECK(strstr(out, "170016;cycles;ndk_pcie_tlm_big/region,ep=16,bus=0,idx=16/;") != NULL);
	CHECK(strstr(out, "hist4_band,ep=16,idx=8/") != NULL);
	CHECK(strstr(out, "brake,ep=16,idx=16/") != NULL);
	free(out);

	/* diff and copy over the whole layout */
	last->buses[0].regions[16] += 5;
	last->hists[4][8] += 6;
	last->brakes[16] += 7;
	CHECK_EQ(hwtel_pcie_diff(d, a, o), 0);
	CHECK_U64(o->endpoints[16].buses[0].regions[16], 5);
	CHECK_U64(o->endpoints[16].hists[4][8], 6);
	CHECK_U64(o->endpoints[16].brakes[16], 7);
	CHECK_U64(o->endpoints[16].buses[19].words, 0);
	CHECK_EQ(hwtel_pcie_data_copy(a, d), 0);
	CHECK_U64(a->endpoints[16].buses[0].regions[16], 170021);
	hwtel_pcie_data_free(d);
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(o);
}

/* Readings of two layouts are never mixed: -EINVAL and nothing written */
TEST(pcie_layout_mismatch_refused)
{
	struct hwtel_pcie_data *big = big_data(), *seed = new_data(), *seed2 = new_data();

	seed_data(seed);
	seed_data(seed2);
	CHECK_EQ(hwtel_pcie_diff(big, seed, seed2), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "different layouts") != NULL);
	CHECK_EQ(hwtel_pcie_diff(seed, seed2, big), -EINVAL);
	CHECK_U64(big->endpoints[0].pcie_cycles, 1000000);	/* untouched */
	CHECK_EQ(hwtel_pcie_diff(seed, big, seed2), -EINVAL);
	CHECK_U64(seed2->endpoints[0].pcie_cycles, 400000000);
	CHECK_EQ(hwtel_pcie_data_copy(seed, big), -EINVAL);
	CHECK_EQ(hwtel_pcie_data_copy(big, seed), -EINVAL);
	CHECK_U64(seed->endpoints[0].pcie_cycles, 400000000);
	CHECK_EQ(big->nendpoints, 17);
	/* same layout: fine */
	CHECK_EQ(hwtel_pcie_diff(seed, seed2, seed2), 0);
	CHECK_U64(seed2->endpoints[0].pcie_cycles, 0);
	hwtel_pcie_data_free(big);
	hwtel_pcie_data_free(seed);
	hwtel_pcie_data_free(seed2);
}

/* A layout too large to hold (a corrupt caps/) is refused, not truncated */
TEST(pcie_layout_too_large_refused)
{
	struct hwtel_pcie_config c;

	seed_config(&c);
	c.pcie_endpoints = 70000;
	errno = 0;
	CHECK(hwtel_pcie_data_new_config("x", &c) == NULL);
	CHECK_EQ(errno, E2BIG);
	CHECK(strstr(hwtel_last_error(), "layout too large (70000 endpoints") != NULL);
	seed_config(&c);
	c.pcie_endpoints = 60000;
	c.dma_ports = 30000;
	c.regions[HWTEL_BUS_UP] = 60000;
	CHECK(hwtel_pcie_data_new_config("x", &c) == NULL);
	CHECK_EQ(errno, E2BIG);
}

TEST(pcie_two_endpoints_two_ports)
{
	struct hwtel_pcie_config c;
	struct hwtel_pcie_data *d;
	unsigned int e, b;
	char *out;

	seed_config(&c);
	c.pcie_endpoints = 2;
	c.dma_ports = 2;
	c.dma_buses = 4;
	d = new_layout("ndk_pcie_tlm_3fff00100000", &c);
	d->state_valid = true;
	CHECK_EQ(d->nendpoints, 2);
	CHECK_EQ(d->endpoints[1].nbuses, 6);
	CHECK_STR(d->endpoints[1].buses[4].name, "DMA1 -> PTC (UP)");
	CHECK_STR(d->endpoints[1].buses[5].name, "PTC -> DMA1 (DOWN)");
	CHECK_EQ(d->endpoints[1].buses[5].bus, 5);
	CHECK_EQ(d->endpoints[1].buses[5].port, 1);
	for (e = 0; e < 2; e++) {
		d->endpoints[e].pcie_cycles = 250000000;
		d->endpoints[e].dma_cycles = 125000000;
		for (b = 0; b < 6; b++) {
			d->endpoints[e].buses[b].words = 1000000 * (b + 1) * (e + 1);
			d->endpoints[e].buses[b].transactions = 1000 * (b + 1);
			d->endpoints[e].buses[b].mvb = b >= 2 ? 1500 * (b + 1) : 0;
			d->endpoints[e].buses[b].items = 64000 * (b + 1);
			d->endpoints[e].buses[b].regions[0] = 1000000 * (b + 1);
		}
	}
	out = render(hwtel_pcie_format_text, d, 0.5);
	CHECK(strstr(out, "PCIe telemetry - 2 endpoint(s), 2 DMA port(s) per endpoint\n") != NULL);
	CHECK(strstr(out, "Measured over 0.50 s\n") != NULL);
	CHECK(strstr(out, "  PCIe clock 500.0 MHz, DMA clock 250.0 MHz\n") != NULL);
	unit_golden(out, "golden/two-endpoints.txt", true);
	free(out);
	hwtel_pcie_data_free(d);
}

TEST(pcie_json_golden_and_schema)
{
	struct hwtel_pcie_data *d = new_data();
	char *out, cmd[256];
	FILE *f;

	seed_data(d);
	out = render(hwtel_pcie_format_json, d, 1.0);
	{
		static const char head[] = "{\n    \"seconds\": 1.0,\n    \"data\": {\n        \"endpoints\": [\n";

		CHECK(!strncmp(out, head, strlen(head)));
	}
	unit_golden(out, "golden/seed.json", true);
	/* schema (tests/check_json.py): reference shape, derived metrics equal
	 * to the text report
	 */
	f = fopen(unit_tmp("seed.json"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(out, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
			 "python3 check_json.py pcie %s golden/seed-pcie.txt", unit_tmp("seed.json"));
		CHECK_EQ(system(cmd), 0);
		remove(unit_tmp("seed.json"));
	}
	free(out);
	/* totals: seconds is null, rates are null */
	out = render(hwtel_pcie_format_json, d, 0);
	CHECK(strstr(out, "\"seconds\": null,") != NULL);
	CHECK(strstr(out, "\"gbps\": null,") != NULL);
	CHECK(strstr(out, "\"totals\": true") != NULL);
	free(out);
	hwtel_pcie_data_free(d);
}

static int csv_tab(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, ";");
}

TEST(pcie_csv)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	out = render(csv_tab, d, 1.0);
	/*
	 * Derived metrics in perf stat -x's metric value and unit fields: the
	 * first on the row of the counter they derive from, the others on
	 * rows of their own right after it, the counter fields empty.
	 * 400 MHz: 400000000 cycles in 1 s.
	 */
	CHECK(strstr(out, "400000000;cycles;ndk_pcie_tlm_3fff00000000/pcie_cycles,ep=0/;1000000000;100.00;400.000000;MHz;\n") != NULL);
	CHECK(strstr(out, "200000000;cycles;ndk_pcie_tlm_3fff00000000/dma_cycles,ep=0/;1000000000;100.00;200.000000;MHz;\n") != NULL);
	CHECK(strstr(out, "8979062500;;ndk_pcie_tlm_3fff00000000/items,ep=0,bus=0/;1000000000;100.00;;;\n") != NULL);
	/* RQ: words 359600000 of 400000000 cycles x 4 regions ... (seed_data) */
	CHECK(strstr(out, "359600000;cycles;ndk_pcie_tlm_3fff00000000/words,ep=0,bus=0/;1000000000;100.00;70.150000;% used;\n"
			  ";;;;;89.900000;% words;\n"
			  ";;;;;0.010000;% mfb_stall;\n"
			  ";;;;;287.330000;Gbps;\n"
			  ";;;;;58.000000;Mpps;\n"
			  ";;;;;619.245690;B avg;\n"
			  "40000;cycles;ndk_pcie_tlm_3fff00000000/stall,ep=0,bus=0/;") != NULL);
	CHECK(strstr(out, ";;;;;25.862069;% rd;\n") != NULL);
	/* a stop reason's share of the PCIe cycles: 54400000 / 400000000 */
	CHECK(strstr(out, "54400000;cycles;ndk_pcie_tlm_3fff00000000/brake,ep=0,idx=0/;1000000000;100.00;13.600000;% no_free_tag;\n") != NULL);
	CHECK(strstr(out, "1200000;cycles;ndk_pcie_tlm_3fff00000000/tags_band,ep=0,idx=0/;1000000000;100.00;;;\n") != NULL);
	/* no metric passed off as an event */
	CHECK(strstr(out, "/ep0.") == NULL);
	unit_golden(out, "golden/seed.csv", true);
	free(out);
	hwtel_pcie_data_free(d);
}

static int csv_comma(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, ",");
}

/*
 * Split one RFC 4180 record of @line (up to its newline) at @sep into
 * @fields (unquoted); the number of fields, or -1 if a quote is unbalanced.
 */
static int rfc4180_split(const char *line, char sep, char fields[][128], int max)
{
	int n = 0, len = 0;
	bool quoted = false;

	for (;; line++) {
		char c = *line;

		if (quoted && c == '"' && line[1] == '"') {
			line++;
		} else if (c == '"' && (quoted || len == 0)) {
			quoted = !quoted;
			continue;
		} else if (!quoted && (c == sep || c == '\n' || !c)) {
			if (n < max)
				fields[n][len < 128 ? len : 127] = '\0';
			n++;
			len = 0;
			if (c != sep)
				return quoted ? -1 : n;
			continue;
		} else if (!c) {
			return -1;
		}
		if (n < max && len < 127)
			fields[n][len] = c;
		len++;
	}
}

/* -x ',': event names hold commas, so they are quoted; 8 fields a row */
TEST(pcie_csv_rfc4180)
{
	struct hwtel_pcie_data *d = new_data();
	char fields[8][128];
	const char *line;
	char *out;
	int rows = 0, bad = 0, n;

	seed_data(d);
	out = render(csv_comma, d, 1.0);
	CHECK(strstr(out, "400000000,cycles,\"ndk_pcie_tlm_3fff00000000/pcie_cycles,ep=0/\",1000000000,100.00,400.000000,MHz,\n") != NULL);
	CHECK(strstr(out, ",,,,,89.900000,% words,\n") != NULL);
	for (line = out; *line; line = strchr(line, '\n') + 1) {
		n = rfc4180_split(line, ',', fields, 8);
		rows++;
		if (n != 8) {
			if (!bad++)
				fprintf(stderr, "# %d fields: %.*s\n", n,
					(int)(strchr(line, '\n') - line), line);
		} else if (strncmp(fields[2], "ndk_pcie_tlm_3fff00000000/", 26) &&
			   (fields[2][0] || !fields[5][0])) {
			/* a counter's row, or a metric's own row (no event) */
			bad++;
		}
	}
	CHECK(rows > 50);
	CHECK_EQ(0, bad);
	free(out);
	hwtel_pcie_data_free(d);
}

static int csv_percent(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, "%");
}

static int csv_dot(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, ".");
}

/*
 * Any separator: a unit ("%") or a value ("70.150000", "100.00") that holds
 * it is quoted like the event name, so every row still has 8 fields and
 * each field reads back as written.
 */
TEST(pcie_csv_any_separator)
{
	int (*const fn[2])(FILE *, const struct hwtel_pcie_data *, double) = {
		csv_percent, csv_dot,
	};
	const char seps[2] = { '%', '.' };
	struct hwtel_pcie_data *d = new_data();
	char fields[8][128];
	const char *line;
	int k, n, bad, used;
	char *out;

	seed_data(d);
	for (k = 0; k < 2; k++) {
		out = render(fn[k], d, 1.0);
		bad = 0;
		used = 0;
		for (line = out; *line; line = strchr(line, '\n') + 1) {
			n = rfc4180_split(line, seps[k], fields, 8);
			if (n != 8) {
				if (!bad++)
					printf("#   -x '%c': %d fields: %.*s\n", seps[k], n,
					       (int)(strchr(line, '\n') - line), line);
				continue;
			}
			if (!strcmp(fields[2], "ndk_pcie_tlm_3fff00000000/words,ep=0,bus=0/")) {
				CHECK_STR(fields[0], "359600000");
				CHECK_STR(fields[5], "70.150000");
				CHECK_STR(fields[6], "% used");
				used++;
			}
		}
		CHECK_EQ(0, bad);
		CHECK_EQ(1, used);
		free(out);
	}
	hwtel_pcie_data_free(d);
}

static int prom(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_prom(f, d, d, s);
}

TEST(pcie_prometheus)
{
	struct hwtel_pcie_data *d = new_data();
	char *out, *p;
	int helps = 0, types = 0;

	seed_data(d);
	out = render(prom, d, 1.0);
	CHECK(strstr(out, "hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"RQ\"} 35916250000\n") != NULL);
	CHECK(strstr(out, "hwtel_pcie_stop_cycles_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",stream=\"UP\",event=\"no_free_tag\"} 54400000\n") != NULL);
	CHECK(strstr(out, "hwtel_pcie_flag{device=\"ndk_pcie_tlm_3fff00000000\",flag=\"lost_deltas\"} 0\n") != NULL);
	/* DMA buses are UP<port> and DOWN<port>; the labels are device, endpoint, bus */
	CHECK(strstr(out, "hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"UP0\"} ") != NULL);
	CHECK(strstr(out, "hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"DOWN0\"} ") != NULL);
	CHECK(strstr(out, "pmu=") == NULL && strstr(out, "port=") == NULL);
	/* every metric has HELP and TYPE; counters end in _total */
	for (p = out; (p = strstr(p, "# TYPE ")); p++) {
		char name[96], type[16];

		types++;
		CHECK_EQ(sscanf(p, "# TYPE %95s %15s", name, type), 2);
		if (!strcmp(type, "counter"))
			CHECK(strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "_total"));
	}
	for (p = out; (p = strstr(p, "# HELP ")); p++)
		helps++;
	CHECK(types > 10);
	CHECK_EQ(helps, types);
	unit_check_prom("pcie", out);
	/* no per-interval gauge that rate() computes from the counters */
	CHECK(strstr(out, "_per_second") == NULL);
	CHECK(strstr(out, "hwtel_pcie_bus_utilization_ratio") == NULL);
	unit_golden(out, "golden/seed.prom", true);
	free(out);
	hwtel_pcie_data_free(d);
}

/*
 * hwtel pcie --prometheus without -d: every PCIe telemetry PMU of the host
 * in one exposition (two NDK cards, or one card with two PCIE_TELEMETRY
 * blocks). Each series carries its PMU in "device"; each family has one
 * HELP and TYPE and all its samples together (the first block's, then the
 * second's); each block has its own counts, gauges, flags and intervals.
 */
static struct hwtel_pcie_data *second_block(void)
{
	struct hwtel_pcie_config c;
	struct hwtel_pcie_data *d;

	seed_config(&c);
	d = new_layout("ndk_pcie_tlm_3fff00100000", &c);
	seed_data(d);
	d->endpoints[0].buses[0].words = 1000;
	d->endpoints[0].buses[0].items = 800;
	d->endpoints[0].tags_free = 7;
	d->status.lost_deltas = true;
	return d;
}

static char *render_pcie_prom(const struct hwtel_pcie_data *const *cum,
			      const struct hwtel_pcie_flag_count *const *fc, unsigned int n,
			      double s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_EQ(hwtel_pcie_prom(f, cum, fc, n, s), 0);
	fclose(f);
	return buf;
}

TEST(pcie_prometheus_two_pmus)
{
	static const char *const want[] = {
		"hwtel_pcie_bus_cycles_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"RQ\",event=\"words\"} 359600000\n",
		"hwtel_pcie_bus_cycles_total{device=\"ndk_pcie_tlm_3fff00100000\",endpoint=\"0\",bus=\"RQ\",event=\"words\"} 1000\n",
		"hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"RQ\"} 35916250000\n",
		"hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00100000\",endpoint=\"0\",bus=\"RQ\"} 3200\n",
		"hwtel_pcie_tags_free{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\"} 118\n",
		"hwtel_pcie_tags_free{device=\"ndk_pcie_tlm_3fff00100000\",endpoint=\"0\"} 7\n",
		"hwtel_pcie_flag{device=\"ndk_pcie_tlm_3fff00000000\",flag=\"lost_deltas\"} 0\n",
		"hwtel_pcie_flag{device=\"ndk_pcie_tlm_3fff00100000\",flag=\"lost_deltas\"} 1\n",
		"hwtel_pcie_intervals_total{device=\"ndk_pcie_tlm_3fff00000000\"} 3\n",
		"hwtel_pcie_intervals_total{device=\"ndk_pcie_tlm_3fff00100000\"} 2\n",
		"hwtel_pcie_flagged_intervals_total{device=\"ndk_pcie_tlm_3fff00000000\",flag=\"lost_deltas\"} 0\n",
		"hwtel_pcie_flagged_intervals_total{device=\"ndk_pcie_tlm_3fff00100000\",flag=\"lost_deltas\"} 2\n",
	};
	struct hwtel_pcie_data *a = new_data(), *b = second_block();
	struct hwtel_pcie_flag_count fa = { 3, 0, 0, true }, fb = { 2, 2, 0, true };
	const struct hwtel_pcie_data *const cum[2] = { a, b };
	const struct hwtel_pcie_flag_count *const fc[2] = { &fa, &fb };
	char *out, *one, *single = NULL, *p, family[96] = "";
	size_t len = 0;
	unsigned int i, types = 0, helps = 0, samples = 0;
	FILE *f;

	seed_data(a);
	out = render_pcie_prom(cum, fc, 2, 1.0);
	if (!out)
		return;
	for (i = 0; i < (sizeof(want) / sizeof(want[0])); i++) {
		CHECK(strstr(out, want[i]) != NULL);
		if (!strstr(out, want[i]))
			printf("#   missing: %s", want[i]);
	}
	/* the first block's sample of a family, then the second's */
	for (i = 0; i + 1 < (sizeof(want) / sizeof(want[0])); i += 2)
		CHECK(strstr(out, want[i]) && strstr(out, want[i + 1]) &&
		      strstr(out, want[i]) < strstr(out, want[i + 1]));
	/* one HELP and TYPE per family, every sample right under its own family's */
	for (p = out; *p; p = strchr(p, '\n') + 1) {
		char name[96];

		if (!strncmp(p, "# HELP ", 7)) {
			helps++;
			continue;
		}
		if (sscanf(p, "# TYPE %95s", name) == 1) {
			char head[128];

			types++;
			snprintf(head, sizeof(head), "# TYPE %s ", name);
			CHECK(strstr(p + 1, head) == NULL);	/* never again */
			snprintf(family, sizeof(family), "%s", name);
			continue;
		}
		samples++;
		CHECK(!strncmp(p, family, strlen(family)) &&
		      (p[strlen(family)] == '{' || p[strlen(family)] == ' '));
	}
	CHECK_EQ(helps, types);
	CHECK_EQ(types, 17u);
	unit_check_prom("two pcie PMUs", out);
	unit_golden(out, "golden/two-pmus.prom", true);

	/* one block: exactly the single block's exposition, as before */
	one = render_pcie_prom(cum, fc, 1, 1.0);
	f = open_memstream(&single, &len);
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(hwtel_pcie_format_prom(f, a, a, 1.0), 0);
		CHECK_EQ(hwtel_pcie_prom_flag_intervals(f, a->pmu, &fa), 0);
		fclose(f);
		CHECK_STR(one, single);
	}
	free(one);
	free(single);
	/*
	 * the first block without the control plane's state (no gauges nor
	 * flags): the gauge families come from the second block alone, once
	 */
	a->state_valid = false;
	fa.known = false;
	one = render_pcie_prom(cum, fc, 2, 1.0);
	CHECK(one && strstr(one, want[5]) && strstr(one, want[7]) && strstr(one, want[11]));
	CHECK(one && !strstr(one, want[4]) && !strstr(one, want[6]) && !strstr(one, want[10]));
	CHECK(one && strstr(one, want[8]) && strstr(one, want[0]) && strstr(one, want[1]));
	if (one)
		unit_check_prom("two pcie PMUs, one without state", one);
	free(one);
	a->state_valid = true;
	fa.known = true;
	/* -t 0 (totals): no interval counts */
	one = render_pcie_prom(cum, fc, 1, 0);
	CHECK(one && strstr(one, "hwtel_pcie_intervals_total") == NULL);
	unit_golden(one, "golden/seed.prom", true);
	free(one);
	free(out);
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(b);
}

/*
 * Without the control plane's state (hwtel pcie unprivileged: EP_GET needs
 * CAP_PERFMON): every counter-derived figure is the privileged report's,
 * the state and gauges are "?" (text), null (JSON) or absent
 * (Prometheus), the STATUS flags likewise, and the text says the flags
 * were not read. CSV has no state rows: it is byte for byte the same.
 */
TEST(pcie_without_state)
{
	struct hwtel_pcie_data *d = new_data();
	char *priv, *out, cmd[256];
	const char *a, *b;
	FILE *f;

	seed_data(d);
	priv = render(hwtel_pcie_format_text, d, 1.0);
	d->state_valid = false;
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "Measured over 1.00 s\n\n  ?? STATUS FLAGS NOT READ - the counters may not be exact\n\nPCIe endpoint 0\n") != NULL);
	CHECK(strstr(out, "\nLink                      ?\n") != NULL);
	CHECK(strstr(out, "\nPTC tags free             ?\n") != NULL);
	CHECK(strstr(out, "\nPTC storage FIFO free     ?\n") != NULL);
	CHECK(strstr(out, "lowest") == NULL);
	a = strstr(priv, "\n  PCIe clock");
	b = strstr(out, "\n  PCIe clock");
	CHECK(a && b && !strcmp(a, b));
	f = fopen(unit_tmp("nostate.txt"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(out, f);
		fclose(f);
	}
	free(priv);
	free(out);

	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"link_up\": null,") != NULL);
	CHECK(strstr(out, "\"mps\": null,") != NULL);
	CHECK(strstr(out, "\"stfifo_free_min\": null,") != NULL);
	CHECK(strstr(out, "\"pcie_cycles\": 400000000,") != NULL);
	CHECK(strstr(out, "\"lost_deltas\": null,") != NULL);
	CHECK(strstr(out, "\"readout_overrun\": null\n") != NULL);
	CHECK(strstr(out, "\"state_valid\": false,") != NULL);
	f = fopen(unit_tmp("nostate.json"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(out, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
			 "python3 check_json.py pcie %s %s", unit_tmp("nostate.json"), unit_tmp("nostate.txt"));
		CHECK_EQ(system(cmd), 0);
		remove(unit_tmp("nostate.json"));
	}
	remove(unit_tmp("nostate.txt"));
	free(out);

	/* the counters and metrics are the same; the flags field says the flags are unknown */
	out = render(csv_tab, d, 1.0);
	{
		char *gold = unit_slurp("golden/seed.csv", NULL), *p, *q;
		size_t nl = 0;

		CHECK(gold != NULL);
		for (p = out; (q = strstr(p, ";flags_not_read\n")); p = q + 1) {
			memmove(q + 1, q + 15, strlen(q + 15) + 1);
			nl++;
		}
		CHECK(nl > 50);
		CHECK_STR(out, gold ? gold : "");
		free(gold);
	}
	free(out);

	out = render(prom, d, 1.0);
	CHECK(strstr(out, "hwtel_pcie_bus_bytes_total{device=\"ndk_pcie_tlm_3fff00000000\",endpoint=\"0\",bus=\"RQ\"} 35916250000\n") != NULL);
	CHECK(strstr(out, "hwtel_pcie_bus_region_cycles_total{") != NULL);
	CHECK(strstr(out, "hwtel_pcie_flag") == NULL);
	CHECK(strstr(out, "hwtel_pcie_link_up") == NULL);
	CHECK(strstr(out, "hwtel_pcie_tags_free") == NULL);
	CHECK(strstr(out, "hwtel_pcie_stfifo_free_words") == NULL);
	free(out);
	hwtel_pcie_data_free(d);
}

TEST(pcie_brake_names)
{
	const char *stream;
	char buf[32];

	CHECK_STR(hwtel_pcie_brake_name(0, &stream, buf, sizeof(buf)), "no free PCIe tag");
	CHECK_STR(stream, "UP");
	CHECK_STR(hwtel_pcie_brake_name(5, &stream, buf, sizeof(buf)), "MVB stalled towards DMA");
	CHECK_STR(stream, "DOWN");
	CHECK_STR(hwtel_pcie_brake_name(9, &stream, buf, sizeof(buf)), "reason 9");
	CHECK_STR(stream, "UP");
}

TEST(pcie_interval_from_perf_time)
{
	struct hwtel_pcie_data *a = new_data(), *b = new_data();

	a->timestamp_ns = 1000000000;
	b->timestamp_ns = 2500000000;
	/* wall time of the snapshots, whatever perf's clock says */
	a->perf_time_ns = 7000000;
	b->perf_time_ns = 1007000000;
	CHECK_NEAR(hwtel_pcie_seconds(b, a), 1.5, 1e-12);
	/* no timestamps: perf's clock */
	a->timestamp_ns = b->timestamp_ns = 0;
	CHECK_NEAR(hwtel_pcie_seconds(b, a), 1.0, 1e-12);
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(b);
}

TEST(pcie_data_copy_whole_reading)
{
	struct hwtel_pcie_data *a = new_data(), *b = new_data();

	seed_data(a);
	CHECK_EQ(hwtel_pcie_data_copy(b, a), 0);
	CHECK_STR(b->pmu, a->pmu);
	CHECK(b->pmu != a->pmu);
	CHECK(b->endpoints != a->endpoints);	/* b's own arrays */
	CHECK(b->endpoints[0].buses[3].regions != a->endpoints[0].buses[3].regions);
	CHECK_U64(b->endpoints[0].buses[3].regions[1], 90800000);
	CHECK_U64(b->endpoints[0].hists[1][3], 208000000);
	CHECK_U64(b->endpoints[0].brakes[5], 400000);
	CHECK(b->state_valid);
	a->endpoints[0].brakes[5] = 1;		/* a copy, not a view */
	CHECK_U64(b->endpoints[0].brakes[5], 400000);
	CHECK_EQ(hwtel_pcie_data_copy(b, b), 0);
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(b);
	hwtel_pcie_data_free(NULL);
}

/*
 * Every format is the same in a program that set a locale with a decimal
 * comma (setlocale(LC_ALL, "")) as in the C locale: JSON, CSV and the
 * Prometheus exposition format all require '.'.
 */
TEST(pcie_formats_locale_independent)
{
	static int (*const fmt[])(FILE *, const struct hwtel_pcie_data *, double) = {
		hwtel_pcie_format_text, hwtel_pcie_format_json, csv_tab, prom,
	};
	static const char *const name[] = { "text", "json", "csv", "prom" };
	struct hwtel_pcie_data *d = new_data();
	char *c_out, *out;
	unsigned int i;

	seed_data(d);
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
	hwtel_pcie_data_free(d);
}

/*
 * An interval whose STATUS flags show LOST DELTA (issue 21): the reference
 * tool's warning line stays where it was, a second line says how the
 * figures are marked, and every figure computed from the counters carries
 * a leading "!" (bus table, stop reasons, histograms). The clock line
 * stays unmarked: the cycle counters stay right under overload
 * (pcie-telemetry-hw.md, "Flags").
 */
TEST(pcie_lost_deltas_text_marks_figures)
{
	struct hwtel_pcie_data *d = new_data();
	char *out, *clean;
	FILE *f;

	seed_data(d);
	clean = render(hwtel_pcie_format_text, d, 1.0);
	d->status.lost_deltas = true;
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "Measured over 1.00 s\n\n  !! LOST DELTAS - the counters are not exact\n"
		      "  !! Figures marked ! cannot be trusted\n\nPCIe endpoint 0\n") != NULL);
	CHECK(strstr(out, "\nPTC -> PCIe (RQ)    !70.15  !89.90   !0.01        -            !89.9 !63.6 !63.6 !63.5  !287.33  !58.000  -       !619\n") != NULL);
	CHECK(strstr(out, "\nDMA0 -> PTC (UP)    !66.45  !66.90   !22.70       !13.90       !66.7 !66.2") != NULL);
	CHECK(strstr(out, "\n    no free PCIe tag           !13.60 %     MFB stalled towards DMA  !8.40 %\n") != NULL);
	CHECK(strstr(out, "\n    PCIe endpoint not ready     !0.01 %\n") != NULL);
	CHECK(strstr(out, "\nPCIe tags               256   !0.30   !39.80   !7.90    !52.00\n") != NULL);
	CHECK(strstr(out, "\n  PCIe clock 400.0 MHz, DMA clock 200.0 MHz\n") != NULL);
	/* a clean interval has no mark at all */
	CHECK(strchr(clean, '!') == NULL);
	unit_golden(out, "golden/seed-lost-deltas.txt", true);
	/* check_json.py: the marks are there exactly when hwtel.trusted is false */
	f = fopen(unit_tmp("lost.txt"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(out, f);
		fclose(f);
	}
	free(out);
	out = render(hwtel_pcie_format_json, d, 1.0);
	f = fopen(unit_tmp("lost.json"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(out, f);
		fclose(f);
		CHECK_EQ(system(unit_fmt("python3 check_json.py pcie %s %s", unit_tmp("lost.json"), unit_tmp("lost.txt"))), 0);
		/* the marks are checked: an unmarked report does not pass */
		f = fopen(unit_tmp("lost.txt"), "w");
		if (f) {
			fputs(clean, f);
			fclose(f);
		}
		CHECK(system(unit_fmt("python3 check_json.py pcie %s %s > /dev/null 2>&1", unit_tmp("lost.json"), unit_tmp("lost.txt"))) != 0);
	}
	remove(unit_tmp("lost.json"));
	remove(unit_tmp("lost.txt"));
	free(out);
	/* READ-OUT OVERRUN alone marks them too */
	d->status.lost_deltas = false;
	d->status.readout_overrun = true;
	out = render(hwtel_pcie_format_text, d, 0);
	CHECK(strstr(out, "Totals since the last clear\n\n  !! READ-OUT OVERRUN - the counters are not exact\n"
		      "  !! Figures marked ! cannot be trusted\n\nPCIe endpoint 0\n") != NULL);
	CHECK(strstr(out, "\nPTC -> PCIe (RQ)    !70.15  !89.90   !0.01        -            !89.9 !63.6 !63.6 !63.5              -       !619\n") != NULL);
	free(out);
	free(clean);
	hwtel_pcie_data_free(d);
}

/*
 * JSON: each report object (each line under -w) says whether its interval
 * can be trusted and which flags say not; null when the flags were not
 * read.
 */
TEST(pcie_lost_deltas_json_trusted)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"truncated\": false,\n        \"trusted\": true,\n        \"untrusted_by\": []\n    }\n}\n") != NULL);
	free(out);
	d->status.lost_deltas = true;
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"truncated\": false,\n        \"trusted\": false,\n        \"untrusted_by\": [\n            \"lost_deltas\"\n        ]\n    }\n}\n") != NULL);
	free(out);
	d->status.readout_overrun = true;
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"trusted\": false,\n        \"untrusted_by\": [\n            \"lost_deltas\",\n            \"readout_overrun\"\n        ]\n") != NULL);
	free(out);
	d->state_valid = false;
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"trusted\": null,\n        \"untrusted_by\": null\n") != NULL);
	free(out);
	hwtel_pcie_data_free(d);
}

static int csv_plus(FILE *f, const struct hwtel_pcie_data *d, double s)
{
	return hwtel_pcie_format_csv(f, d, s, "+");
}

/*
 * CSV: an eighth field, "flags", on every row of the interval: empty when
 * no flag was set, the flags set joined by "+", "flags_not_read" without
 * the control plane's state. The first seven fields are perf stat -x's
 * (the metric value and unit sixth and seventh).
 */
TEST(pcie_lost_deltas_csv_flags_field)
{
	struct hwtel_pcie_data *d = new_data();
	char fields[8][128];
	const char *line;
	int rows, bad, n, k;
	char *out;
	static const char *const want[4] = { "", "lost_deltas", "lost_deltas+readout_overrun",
					     "flags_not_read" };

	seed_data(d);
	for (k = 0; k < 4; k++) {
		d->status.lost_deltas = k == 1 || k == 2;
		d->status.readout_overrun = k == 2;
		d->state_valid = k != 3;
		out = render(csv_comma, d, 1.0);
		rows = bad = 0;
		for (line = out; *line; line = strchr(line, '\n') + 1) {
			n = rfc4180_split(line, ',', fields, 8);
			rows++;
			if (n != 8 || strcmp(fields[7], want[k])) {
				if (!bad++)
					printf("#   %d fields, flags '%s' (want '%s'): %.*s\n", n,
					       n >= 8 ? fields[7] : "", want[k],
					       (int)(strchr(line, '\n') - line), line);
			}
		}
		CHECK(rows > 50);
		CHECK_EQ(0, bad);
		if (k == 1) {
			CHECK(strstr(out, "400000000,cycles,\"ndk_pcie_tlm_3fff00000000/pcie_cycles,ep=0/\",1000000000,100.00,400.000000,MHz,lost_deltas\n") != NULL);
			CHECK(strstr(out, ",,,,,89.900000,% words,lost_deltas\n") != NULL);
		}
		free(out);
	}
	/* -x +: the joined flags hold the separator, so they are quoted */
	d->state_valid = true;
	d->status.lost_deltas = d->status.readout_overrun = true;
	out = render(csv_plus, d, 1.0);
	CHECK(strstr(out, "\n+++++89.900000+% words+\"lost_deltas+readout_overrun\"\n") != NULL);
	free(out);
	/* totals: no run time, still eight fields */
	d->status.lost_deltas = true;
	d->status.readout_overrun = false;
	out = render(csv_tab, d, 0);
	CHECK(strstr(out, "1200000;cycles;ndk_pcie_tlm_3fff00000000/tags_band,ep=0,idx=0/;;;;;lost_deltas\n") != NULL);
	/* no interval: no clock, Gbps or Mpps; the ratios stay */
	CHECK(strstr(out, "400000000;cycles;ndk_pcie_tlm_3fff00000000/pcie_cycles,ep=0/;;;;;lost_deltas\n") != NULL);
	CHECK(strstr(out, "MHz") == NULL && strstr(out, "Gbps") == NULL && strstr(out, "Mpps") == NULL);
	CHECK(strstr(out, ";;;;;89.900000;% words;lost_deltas\n") != NULL);
	free(out);
	hwtel_pcie_data_free(d);
}

/*
 * A padded bus (fewer real regions than its probe): the text says so under
 * the bus table, once per padded bus, with the bound of the inflation
 * (probe regions / real regions); JSON gives the probe's regions, whether
 * the bus is padded and the bound.
 */
TEST(pcie_padded_buses_reported)
{
	struct hwtel_pcie_data *d = new_data();
	char *out;

	seed_data(d);
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "Padded") == NULL);
	free(out);
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"requests\": 58000000,\n                        \"probe_regions\": 4,\n                        \"padded\": false,\n                        \"max_inflation\": 1.0\n") != NULL);
	free(out);
	d->config.probe_dma_regions = 4;
	d->config.probe_pcie_regions = 6;
	out = render(hwtel_pcie_format_text, d, 1.0);
	CHECK(strstr(out, "\nPTC -> DMA0 (DOWN)  45.45   48.60    0.80         0.30         45.5 45.4            46.54   34.800  -      167\n\n"
		      "  Padded bus PTC -> PCIe (RQ): 4 of the probe's 6 regions; items, Gbps and Avg B can read up to 1.5x high, Used % cannot\n"
		      "  Padded bus PCIe -> PTC (RC): 4 of the probe's 6 regions; items, Gbps and Avg B can read up to 1.5x high, Used % cannot\n"
		      "  Padded bus DMA0 -> PTC (UP): 2 of the probe's 4 regions; items, Gbps and Avg B can read up to 2x high, Used % cannot\n"
		      "  Padded bus PTC -> DMA0 (DOWN): 2 of the probe's 4 regions; items, Gbps and Avg B can read up to 2x high, Used % cannot\n"
		      "\n  Why the PCIe transfer stopped") != NULL);
	free(out);
	out = render(hwtel_pcie_format_json, d, 1.0);
	CHECK(strstr(out, "\"requests\": 58000000,\n                        \"probe_regions\": 6,\n                        \"padded\": true,\n                        \"max_inflation\": 1.5\n") != NULL);
	CHECK(strstr(out, "\"requests\": 34800000,\n                        \"probe_regions\": 4,\n                        \"padded\": true,\n                        \"max_inflation\": 2.0\n") != NULL);
	free(out);
	hwtel_pcie_data_free(d);
}
