// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: PCIe telemetry report formatters - the text report of the
 * reference tool (nfb-pcie-telemetry), JSON, perf-stat-like CSV and the
 * Prometheus textfile format.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CELL 96

/* A left-aligned table: header, dash rule, rows; columns two spaces apart,
 * each as wide as its widest cell (header included, plus @hpad for the
 * header); lines carry no trailing blanks. As many rows and columns as
 * the layout has, each cell @cellw bytes (at least CELL).
 */
struct table {
	unsigned int ncols, nrows, maxrows;
	unsigned int hpad;
	size_t cellw;
	char *head;		/* [ncols][cellw] */
	char *cells;		/* [maxrows][ncols][cellw] */
};

static struct table *table_new(unsigned int ncols, unsigned int maxrows, size_t cellw)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	t->maxrows = maxrows;
	t->cellw = cellw < CELL ? CELL : cellw;
	t->head = calloc((size_t)ncols, t->cellw);
	t->cells = calloc((size_t)ncols * (maxrows ? maxrows : 1), t->cellw);
	if (!t->head || !t->cells) {
		free(t->head);
		free(t->cells);
		free(t);
		return NULL;
	}
	return t;
}

static void table_free(struct table *t)
{
	if (!t)
		return;
	free(t->head);
	free(t->cells);
	free(t);
}

static char *thead(const struct table *t, unsigned int c)
{
	return t->head + (size_t)c * t->cellw;
}

static char *tcell(const struct table *t, unsigned int r, unsigned int c)
{
	return t->cells + ((size_t)r * t->ncols + c) * t->cellw;
}

static void emit_line(FILE *f, char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fputs(line, f);
	fputc('\n', f);
}

static void table_print(FILE *f, const struct table *t)
{
	unsigned int *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w)), c, r;
	char *line = malloc((size_t)t->ncols * (t->cellw + t->hpad + 2) + 1);

	if (!w || !line) {
		free(w);
		free(line);
		return;
	}
	for (c = 0; c < t->ncols; c++) {
		w[c] = (unsigned int)strlen(thead(t, c)) + t->hpad;
		for (r = 0; r < t->nrows; r++)
			if (strlen(tcell(t, r, c)) > w[c])
				w[c] = (unsigned int)strlen(tcell(t, r, c));
	}
	for (r = 0; r < t->nrows + 2; r++) {
		size_t off = 0;

		for (c = 0; c < t->ncols; c++) {
			const char *s = r == 0 ? thead(t, c) : r == 1 ? NULL : tcell(t, r - 2, c);
			unsigned int i, len = s ? (unsigned int)strlen(s) : 0;

			if (c)
				off += (size_t)sprintf(line + off, "  ");
			if (s) {
				memcpy(line + off, s, len);
				off += len;
				for (i = len; i < w[c]; i++)
					line[off++] = ' ';
			} else {
				for (i = 0; i < w[c]; i++)
					line[off++] = '-';
			}
		}
		line[off] = '\0';
		emit_line(f, line);
	}
	free(w);
	free(line);
}

/* "%.2f" of a percentage, "-" when undefined (the reference's _pct, stripped) */
static void fmt_pct(char *buf, double v)
{
	if (isnan(v))
		snprintf(buf, CELL, "-");
	else
		snprintf(buf, CELL, "%.2f", v);
}

/*
 * A stop reason's share: "%.2f" (right-aligned by the caller, "%6.2f" in
 * the seed), "!" before it in an untrusted interval, "   -  " when
 * undefined.
 */
static void text_share(char *buf, size_t size, double v, bool mark)
{
	if (isnan(v))
		snprintf(buf, size, "   -  ");
	else
		snprintf(buf, size, "%s%.2f", mark ? "!" : "", v);
}

static double ratio_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : NAN;
}

/*
 * An interval (or totals period) whose STATUS flags are set: deltas were
 * dropped, counters break their invariants and no figure of it can be
 * trusted (pcie-telemetry-hw.md, "Verified behaviour", "Flags"). Unknown
 * (false) when the flags were not read.
 */
static bool untrusted(const struct hwtel_pcie_data *d)
{
	return d->state_valid && (d->status.lost_deltas || d->status.readout_overrun);
}

/* "!" before a figure of an untrusted interval; "-" (undefined) stays */
static void mark_cell(char *buf, size_t size, bool mark)
{
	size_t n = strlen(buf);

	if (!mark || !n || !strcmp(buf, "-") || n + 2 > size)
		return;
	memmove(buf + 1, buf, n + 1);
	buf[0] = '!';
}

/* probe regions of the bus's probe: more than its real ones when padded */
static unsigned int probe_regions(const struct hwtel_pcie_data *d,
				  const struct hwtel_pcie_bus *bus)
{
	return bus->pcie_clk ? d->config.probe_pcie_regions : d->config.probe_dma_regions;
}

static unsigned int real_regions(const struct hwtel_pcie_data *d,
				 const struct hwtel_pcie_bus *bus)
{
	return (unsigned int)bus->kind < 4 ? d->config.regions[bus->kind] : bus->nregions;
}

/*
 * Padding regions count in every word in which a frame is still open after
 * the last real region, so items (and Gbps, Avg B from them) can exceed
 * what the real regions carried by up to probe regions / real regions.
 * 1 on a bus that is not padded.
 */
static double max_inflation(const struct hwtel_pcie_data *d, const struct hwtel_pcie_bus *bus)
{
	unsigned int p = probe_regions(d, bus), r = real_regions(d, bus);

	return r && p > r ? (double)p / (double)r : 1.0;
}

static const char *const band_names[] = { "none", "<=1/8", "<=1/2", "rest" };
static const char *const hist_names[] = { "PCIe tags", "PTC storage FIFO words" };
static const char *const hist_keys[] = { "tags", "stfifo" };

static const char *band_name(unsigned int i, char *buf, size_t size)
{
	if (i < ARRAY_SIZE(band_names))
		return band_names[i];
	snprintf(buf, size, "band %u", i);
	return buf;
}

static const char *hist_name(unsigned int i, char *buf, size_t size)
{
	if (i < ARRAY_SIZE(hist_names))
		return hist_names[i];
	snprintf(buf, size, "resource %u", i);
	return buf;
}

static unsigned int hist_capacity(const struct hwtel_pcie_config *c, unsigned int i)
{
	return i == 0 ? c->tag_capacity : i == 1 ? c->stfifo_capacity : 0;
}

static const struct hwtel_pcie_bus *rq_bus(const struct hwtel_pcie_ep *ep)
{
	unsigned int b;

	for (b = 0; b < ep->nbuses; b++)
		if (ep->buses[b].kind == HWTEL_BUS_RQ)
			return &ep->buses[b];
	return NULL;
}

static void text_state(FILE *f, const struct hwtel_pcie_ep *ep, bool valid)
{
	const char *label[8] = {
		"Link", "Max payload size (MPS)", "Max read request (MRRS)",
		"Extended tag (8-bit)", "10-bit tag", "Read completion boundary",
		"PTC tags free", "PTC storage FIFO free",
	};
	char val[8][CELL], line[CELL + 40];
	unsigned int i;

	if (!valid) {
		for (i = 0; i < 8; i++)
			snprintf(val[i], CELL, "?");
	} else {
		snprintf(val[0], CELL, "%s", ep->link_up ? "up" : "DOWN");
		snprintf(val[1], CELL, "%u B", ep->mps);
		snprintf(val[2], CELL, "%u B", ep->mrrs);
		snprintf(val[3], CELL, "%s", ep->ext_tag ? "on" : "off");
		snprintf(val[4], CELL, "%s", ep->tag_10b ? "on" : "off");
		snprintf(val[5], CELL, "%u B", ep->rcb);
		snprintf(val[6], CELL, "%u (lowest %u)", ep->tags_free, ep->tags_free_min);
		snprintf(val[7], CELL, "%u words (lowest %u)", ep->stfifo_free,
			 ep->stfifo_free_min);
	}
	for (i = 0; i < 8; i++) {
		snprintf(line, sizeof(line), "%-24s  %.*s", label[i], CELL - 1, val[i]);
		emit_line(f, line);
	}
}

static void text_brakes(FILE *f, const struct hwtel_pcie_ep *ep, bool mark)
{
	struct brake_row { const char *label; uint64_t v; char buf[32]; } *up, *down;
	unsigned int nup = 0, ndown = 0, k, upl = 0, downl = 0, upw, rows, vw = 6;
	const struct hwtel_pcie_bus *rq = rq_bus(ep);
	char line[512];

	up = calloc((size_t)ep->nbrakes + 1, sizeof(*up));
	down = calloc(ep->nbrakes ? ep->nbrakes : 1, sizeof(*down));
	if (!up || !down) {
		free(up);
		free(down);
		return;
	}

	for (k = 0; k < ep->nbrakes; k++) {
		const char *stream, *name;
		char buf[32];

		name = hwtel_pcie_brake_name(k, &stream, buf, sizeof(buf));
		if (!strcmp(stream, "DOWN")) {
			snprintf(down[ndown].buf, sizeof(down[0].buf), "%s", name);
			down[ndown].label = down[ndown].buf;
			down[ndown++].v = ep->brakes[k];
		} else {
			snprintf(up[nup].buf, sizeof(up[0].buf), "%s", name);
			up[nup].label = up[nup].buf;
			up[nup++].v = ep->brakes[k];
		}
	}
	up[nup].label = "PCIe endpoint not ready";
	up[nup++].v = rq ? rq->backpressure : 0;

	for (k = 0; k < nup; k++)
		if (strlen(up[k].label) > upl)
			upl = (unsigned int)strlen(up[k].label);
	for (k = 0; k < ndown; k++)
		if (strlen(down[k].label) > downl)
			downl = (unsigned int)strlen(down[k].label);
	/*
	 * Value columns "%6.2f" as in the seed: each value right-aligned, the
	 * column one wider than its widest value (a share of 100.00, a "!"
	 * mark) so a label and its value never run together.
	 */
	for (k = 0; k < nup + ndown; k++) {
		const uint64_t v = k < nup ? up[k].v : down[k - nup].v;
		char p[32];

		text_share(p, sizeof(p), ratio_pct(v, ep->pcie_cycles), mark);
		if (!isnan(ratio_pct(v, ep->pcie_cycles)) && strlen(p) + 1 > vw)
			vw = (unsigned int)strlen(p) + 1;
	}
	/* label, the value, " %", and five blanks before the DOWN column */
	upw = upl + vw + 3;

	fputs("\n  Why the PCIe transfer stopped (share of PCIe clock cycles)\n", f);
	snprintf(line, sizeof(line), "    %-*s%s", (int)upw, "UP stream",
		 ndown ? "    DOWN stream" : "");
	emit_line(f, line);
	rows = nup > ndown ? nup : ndown;
	for (k = 0; k < rows; k++) {
		char left[256] = "", right[256] = "", p[32];

		if (k < nup) {
			text_share(p, sizeof(p), ratio_pct(up[k].v, ep->pcie_cycles), mark);
			snprintf(left, sizeof(left), "%-*s%*s %%", (int)upl, up[k].label,
				 (int)vw, p);
		}
		if (k < ndown) {
			text_share(p, sizeof(p), ratio_pct(down[k].v, ep->pcie_cycles), mark);
			snprintf(right, sizeof(right), "%-*s%*s %%", (int)downl, down[k].label,
				 (int)vw, p);
		}
		snprintf(line, sizeof(line), "    %-*s    %s", (int)upw, left, right);
		emit_line(f, line);
	}
	free(up);
	free(down);
}

static void text_hists(FILE *f, const struct hwtel_pcie_data *d,
		       const struct hwtel_pcie_ep *ep, bool mark)
{
	struct table *t;
	unsigned int h, b;
	char buf[32];

	if (!ep->nhists)
		return;
	t = table_new(2 + ep->nbands, ep->nhists, CELL);
	if (!t)
		return;
	t->hpad = 2;
	snprintf(thead(t, 0), CELL, "Time spent low");
	snprintf(thead(t, 1), CELL, "of");
	for (b = 0; b + 2 < t->ncols; b++)
		snprintf(thead(t, 2 + b), CELL, "%s", band_name(b, buf, sizeof(buf)));
	for (h = 0; h < ep->nhists; h++) {
		unsigned int cap = hist_capacity(&d->config, h);

		snprintf(tcell(t, h, 0), CELL, "%s", hist_name(h, buf, sizeof(buf)));
		if (cap)
			snprintf(tcell(t, h, 1), CELL, "%u", cap);
		else
			snprintf(tcell(t, h, 1), CELL, "-");
		for (b = 0; b + 2 < t->ncols; b++) {
			fmt_pct(tcell(t, h, 2 + b), ratio_pct(ep->hists[h][b], ep->pcie_cycles));
			mark_cell(tcell(t, h, 2 + b), CELL, mark);
		}
		t->nrows++;
	}
	fputc('\n', f);
	table_print(f, t);
	table_free(t);
}

/* One line per padded bus, under the bus table (none when no bus is padded) */
static void text_padding(FILE *f, const struct hwtel_pcie_data *d, const struct hwtel_pcie_ep *ep)
{
	unsigned int b, n = 0;

	for (b = 0; b < ep->nbuses; b++) {
		const struct hwtel_pcie_bus *bus = &ep->buses[b];
		double x = max_inflation(d, bus);

		if (x <= 1.0)
			continue;
		if (!n++)
			fputc('\n', f);
		fprintf(f, "  Padded bus %s: %u of the probe's %u regions; items, Gbps and Avg B can read up to %.3gx high, Used %% cannot\n",
			bus->name, real_regions(d, bus), probe_regions(d, bus), x);
	}
}

static int pcie_format_text_c(FILE *f, const struct hwtel_pcie_data *d, double seconds)
{
	static const char *const heads[10] = {
		"Bus", "Used %", "Words %", "MFB stall %", "MVB stall %",
		"Used per region %", "Gbps", "Mpps", "RD %", "Avg B",
	};
	char line[256];
	unsigned int e, b, r;
	bool mark = untrusted(d);
	int n;

	hwtel_clear_error();
	n = snprintf(line, sizeof(line), "PCIe telemetry - %u endpoint(s), %u DMA port(s) per endpoint",
		     d->config.pcie_endpoints, d->config.dma_ports);
	fprintf(f, "%s\n", line);
	memset(line, '=', (size_t)n);
	line[n] = '\0';
	fprintf(f, "%s\n", line);
	if (seconds > 0)
		fprintf(f, "Measured over %.2f s\n", seconds);
	else
		fputs("Totals since the last clear\n", f);
	if (d->status.lost_deltas || d->status.readout_overrun || !d->state_valid) {
		fputc('\n', f);
		if (!d->state_valid)
			fputs("  ?? STATUS FLAGS NOT READ - the counters may not be exact\n", f);
		if (d->status.lost_deltas)
			fputs("  !! LOST DELTAS - the counters are not exact\n", f);
		if (d->status.readout_overrun)
			fputs("  !! READ-OUT OVERRUN - the counters are not exact\n", f);
		if (mark)
			fputs("  !! Figures marked ! cannot be trusted\n", f);
	}

	for (e = 0; e < d->nendpoints; e++) {
		const struct hwtel_pcie_ep *ep = &d->endpoints[e];
		unsigned int maxreg = 0;
		struct table *t;

		/* a region's share is at most "!" and 30 characters, and a blank */
		for (b = 0; b < ep->nbuses; b++)
			if (ep->buses[b].nregions > maxreg)
				maxreg = ep->buses[b].nregions;
		t = table_new(10, ep->nbuses, (size_t)maxreg * 32 + 1);
		if (!t)
			return -ENOMEM;
		fprintf(f, "\nPCIe endpoint %u\n", ep->index);
		fputs("------------------------------------------------------------\n", f);
		text_state(f, ep, d->state_valid);
		if (seconds > 0)
			fprintf(f, "\n  PCIe clock %.1f MHz, DMA clock %.1f MHz\n",
				(double)ep->pcie_cycles / seconds / 1e6,
				(double)ep->dma_cycles / seconds / 1e6);

		for (b = 0; b < 10; b++)
			snprintf(thead(t, b), CELL, "%s", heads[b]);
		for (b = 0; b < ep->nbuses; b++) {
			const struct hwtel_pcie_bus *bus = &ep->buses[b];
			struct hwtel_pcie_bus_metrics m;
			unsigned int row_i = t->nrows++;
			char *row[10];
			size_t off = 0;

			for (r = 0; r < 10; r++)
				row[r] = tcell(t, row_i, r);

			hwtel_pcie_bus_metrics(d, ep, bus, seconds, &m);
			snprintf(row[0], CELL, "%s", bus->name);
			fmt_pct(row[1], m.used_pct);
			fmt_pct(row[2], m.words_pct);
			fmt_pct(row[3], m.mfb_stall_pct);
			fmt_pct(row[4], m.mvb_stall_pct);
			for (r = 0; r < bus->nregions && off + 33 < t->cellw; r++) {
				double rp = hwtel_pcie_region_pct(ep, bus, r);

				if (isnan(rp))
					off += (size_t)snprintf(row[5] + off, t->cellw - off, "%s-",
								r ? " " : "");
				else
					off += (size_t)snprintf(row[5] + off, t->cellw - off, "%s%s%.1f",
								r ? " " : "", mark ? "!" : "", rp);
			}
			if (seconds > 0) {
				snprintf(row[6], CELL, "%.2f", m.gbps);
				snprintf(row[7], CELL, "%.3f", m.mpps);
			}
			fmt_pct(row[8], m.rd_pct);
			if (isnan(m.avg_bytes))
				snprintf(row[9], CELL, "-");
			else
				snprintf(row[9], CELL, "%.0f", m.avg_bytes);
			for (r = 1; r < 10; r++)
				if (r != 5)
					mark_cell(row[r], CELL, mark);
		}
		fputc('\n', f);
		table_print(f, t);
		table_free(t);
		text_padding(f, d, ep);
		text_brakes(f, ep, mark);
		text_hists(f, d, ep, mark);
	}
	return ferror(f) ? -EIO : 0;
}

int hwtel_pcie_format_text(FILE *f, const struct hwtel_pcie_data *d, double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = pcie_format_text_c(f, d, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}

/* ------------------------------------------------------------------ */
/* JSON                                                               */
/* ------------------------------------------------------------------ */

/* A value of the control plane's state: null when it was not read. */
static void json_state_bool(struct hwtel_json *j, bool valid, bool v)
{
	if (valid)
		hj_bool(j, v);
	else
		hj_null(j);
}

static void json_state_uint(struct hwtel_json *j, bool valid, unsigned int v)
{
	if (valid)
		hj_uint(j, v);
	else
		hj_null(j);
}

static void json_data(struct hwtel_json *j, const struct hwtel_pcie_data *d)
{
	const struct hwtel_pcie_config *c = &d->config;
	bool ok = d->state_valid;
	unsigned int e, b, i, h;

	hj_obj_begin(j);
	hj_key(j, "endpoints");
	hj_arr_begin(j);
	for (e = 0; e < d->nendpoints; e++) {
		const struct hwtel_pcie_ep *ep = &d->endpoints[e];

		hj_obj_begin(j);
		hj_key(j, "index"); hj_uint(j, ep->index);
		hj_key(j, "link_up"); json_state_bool(j, ok, ep->link_up);
		hj_key(j, "mps"); json_state_uint(j, ok, ep->mps);
		hj_key(j, "mrrs"); json_state_uint(j, ok, ep->mrrs);
		hj_key(j, "ext_tag"); json_state_bool(j, ok, ep->ext_tag);
		hj_key(j, "tag_10b"); json_state_bool(j, ok, ep->tag_10b);
		hj_key(j, "rcb"); json_state_uint(j, ok, ep->rcb);
		hj_key(j, "tags_free"); json_state_uint(j, ok, ep->tags_free);
		hj_key(j, "tags_free_min"); json_state_uint(j, ok, ep->tags_free_min);
		hj_key(j, "stfifo_free"); json_state_uint(j, ok, ep->stfifo_free);
		hj_key(j, "stfifo_free_min"); json_state_uint(j, ok, ep->stfifo_free_min);
		hj_key(j, "pcie_cycles"); hj_u64(j, ep->pcie_cycles);
		hj_key(j, "dma_cycles"); hj_u64(j, ep->dma_cycles);
		hj_key(j, "brakes");
		hj_arr_begin(j);
		for (i = 0; i < ep->nbrakes; i++)
			hj_u64(j, ep->brakes[i]);
		hj_arr_end(j);
		hj_key(j, "hists");
		hj_arr_begin(j);
		for (h = 0; h < ep->nhists; h++) {
			hj_arr_begin(j);
			for (i = 0; i < ep->nbands; i++)
				hj_u64(j, ep->hists[h][i]);
			hj_arr_end(j);
		}
		hj_arr_end(j);
		hj_key(j, "buses");
		hj_obj_begin(j);
		for (b = 0; b < ep->nbuses; b++) {
			const struct hwtel_pcie_bus *bus = &ep->buses[b];

			hj_key(j, bus->name);
			hj_obj_begin(j);
			hj_key(j, "words"); hj_u64(j, bus->words);
			hj_key(j, "backpressure"); hj_u64(j, bus->backpressure);
			hj_key(j, "transactions"); hj_u64(j, bus->transactions);
			hj_key(j, "mvb"); hj_u64(j, bus->mvb);
			hj_key(j, "mvb_backpressure"); hj_u64(j, bus->mvb_backpressure);
			hj_key(j, "items"); hj_u64(j, bus->items);
			hj_key(j, "regions");
			hj_arr_begin(j);
			for (i = 0; i < bus->nregions; i++)
				hj_u64(j, bus->regions[i]);
			hj_arr_end(j);
			hj_key(j, "region_bytes"); hj_uint(j, bus->region_bytes);
			hj_key(j, "pcie_clk"); hj_bool(j, bus->pcie_clk);
			hj_key(j, "has_mvb"); hj_bool(j, bus->has_mvb);
			hj_key(j, "dma_up"); hj_bool(j, bus->dma_up);
			hj_obj_end(j);
		}
		hj_obj_end(j);
		hj_obj_end(j);
	}
	hj_arr_end(j);
	hj_key(j, "status");
	hj_obj_begin(j);
	hj_key(j, "busy"); json_state_bool(j, ok, d->status.busy);
	hj_key(j, "lost_deltas"); json_state_bool(j, ok, d->status.lost_deltas);
	hj_key(j, "readout_overrun"); json_state_bool(j, ok, d->status.readout_overrun);
	hj_obj_end(j);
	hj_key(j, "config");
	hj_obj_begin(j);
	hj_key(j, "pcie_endpoints"); hj_uint(j, c->pcie_endpoints);
	hj_key(j, "dma_ports"); hj_uint(j, c->dma_ports);
	hj_key(j, "probe_pcie_regions"); hj_uint(j, c->probe_pcie_regions);
	hj_key(j, "probe_dma_regions"); hj_uint(j, c->probe_dma_regions);
	hj_key(j, "counter_width"); hj_uint(j, c->counter_width);
	hj_key(j, "item_bytes"); hj_uint(j, c->item_bytes);
	hj_key(j, "drain_period"); hj_uint(j, c->drain_period);
	hj_key(j, "hist_bands"); hj_uint(j, c->hist_bands);
	hj_key(j, "tag_capacity"); hj_uint(j, c->tag_capacity);
	hj_key(j, "stfifo_capacity"); hj_uint(j, c->stfifo_capacity);
	hj_obj_end(j);
	hj_obj_end(j);
}

static void json_derived(struct hwtel_json *j, const struct hwtel_pcie_data *d,
			 double seconds)
{
	unsigned int e, b, i, h;
	char buf[32];

	hj_obj_begin(j);
	hj_key(j, "endpoints");
	hj_arr_begin(j);
	for (e = 0; e < d->nendpoints; e++) {
		const struct hwtel_pcie_ep *ep = &d->endpoints[e];
		const struct hwtel_pcie_bus *rq = rq_bus(ep);

		hj_obj_begin(j);
		hj_key(j, "index"); hj_uint(j, ep->index);
		hj_key(j, "pcie_clock_mhz");
		hj_double(j, seconds > 0 ? (double)ep->pcie_cycles / seconds / 1e6 : NAN);
		hj_key(j, "dma_clock_mhz");
		hj_double(j, seconds > 0 ? (double)ep->dma_cycles / seconds / 1e6 : NAN);
		hj_key(j, "buses");
		hj_obj_begin(j);
		for (b = 0; b < ep->nbuses; b++) {
			const struct hwtel_pcie_bus *bus = &ep->buses[b];
			struct hwtel_pcie_bus_metrics m;

			hwtel_pcie_bus_metrics(d, ep, bus, seconds, &m);
			hj_key(j, bus->name);
			hj_obj_begin(j);
			hj_key(j, "used_pct"); hj_double(j, m.used_pct);
			hj_key(j, "words_pct"); hj_double(j, m.words_pct);
			hj_key(j, "mfb_stall_pct"); hj_double(j, m.mfb_stall_pct);
			hj_key(j, "mvb_stall_pct"); hj_double(j, m.mvb_stall_pct);
			hj_key(j, "region_pct");
			hj_arr_begin(j);
			for (i = 0; i < bus->nregions; i++)
				hj_double(j, hwtel_pcie_region_pct(ep, bus, i));
			hj_arr_end(j);
			hj_key(j, "gbps"); hj_double(j, m.gbps);
			hj_key(j, "mpps"); hj_double(j, m.mpps);
			hj_key(j, "rd_pct"); hj_double(j, m.rd_pct);
			hj_key(j, "avg_bytes"); hj_double(j, m.avg_bytes);
			hj_key(j, "bytes"); hj_u64(j, m.bytes);
			hj_key(j, "requests"); hj_u64(j, m.requests);
			hj_key(j, "probe_regions"); hj_uint(j, probe_regions(d, bus));
			hj_key(j, "padded"); hj_bool(j, max_inflation(d, bus) > 1.0);
			hj_key(j, "max_inflation"); hj_double(j, max_inflation(d, bus));
			hj_obj_end(j);
		}
		hj_obj_end(j);
		hj_key(j, "stop_reasons");
		hj_arr_begin(j);
		for (i = 0; i <= ep->nbrakes; i++) {
			const char *stream = "UP", *name = "PCIe endpoint not ready";
			uint64_t v = rq ? rq->backpressure : 0;

			if (i < ep->nbrakes) {
				name = hwtel_pcie_brake_name(i, &stream, buf, sizeof(buf));
				v = ep->brakes[i];
			}
			hj_obj_begin(j);
			hj_key(j, "stream"); hj_str(j, stream);
			hj_key(j, "name"); hj_str(j, name);
			hj_key(j, "pct"); hj_double(j, ratio_pct(v, ep->pcie_cycles));
			hj_obj_end(j);
		}
		hj_arr_end(j);
		hj_key(j, "histograms");
		hj_arr_begin(j);
		for (h = 0; h < ep->nhists; h++) {
			unsigned int cap = hist_capacity(&d->config, h);

			hj_obj_begin(j);
			hj_key(j, "name"); hj_str(j, hist_name(h, buf, sizeof(buf)));
			hj_key(j, "capacity");
			if (cap)
				hj_uint(j, cap);
			else
				hj_null(j);
			hj_key(j, "bands");
			hj_obj_begin(j);
			for (i = 0; i < ep->nbands; i++) {
				hj_key(j, band_name(i, buf, sizeof(buf)));
				hj_double(j, ratio_pct(ep->hists[h][i], ep->pcie_cycles));
			}
			hj_obj_end(j);
			hj_obj_end(j);
		}
		hj_arr_end(j);
		hj_obj_end(j);
	}
	hj_arr_end(j);
	hj_obj_end(j);
}

static int pcie_format_json_c(FILE *f, const struct hwtel_pcie_data *d, double seconds)
{
	struct hwtel_json j;

	hwtel_clear_error();
	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "seconds");
	if (seconds > 0)
		hj_double(&j, seconds);
	else
		hj_null(&j);
	hj_key(&j, "data");
	json_data(&j, d);
	hj_key(&j, "derived");
	json_derived(&j, d, seconds);
	hj_key(&j, "hwtel");
	hj_obj_begin(&j);
	hj_key(&j, "version"); hj_str(&j, HWTEL_VERSION);
	hj_key(&j, "pmu"); hj_str(&j, d->pmu);
	hj_key(&j, "totals"); hj_bool(&j, seconds <= 0);
	hj_key(&j, "state_valid"); hj_bool(&j, d->state_valid);
	/* kept for the schema: the reading always has the whole layout */
	hj_key(&j, "truncated"); hj_bool(&j, false);
	/* no STATUS flag set: the interval's counts are exact; null = not read */
	hj_key(&j, "trusted");
	if (d->state_valid)
		hj_bool(&j, !untrusted(d));
	else
		hj_null(&j);
	hj_key(&j, "untrusted_by");
	if (d->state_valid) {
		hj_arr_begin(&j);
		if (d->status.lost_deltas)
			hj_str(&j, "lost_deltas");
		if (d->status.readout_overrun)
			hj_str(&j, "readout_overrun");
		hj_arr_end(&j);
	} else {
		hj_null(&j);
	}
	hj_obj_end(&j);
	hj_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int hwtel_pcie_format_json(FILE *f, const struct hwtel_pcie_data *d, double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = pcie_format_json_c(f, d, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}

/* ------------------------------------------------------------------ */
/* CSV (perf stat -x)                                                 */
/* ------------------------------------------------------------------ */

/* A derived metric of a counter's row: perf stat -x's metric value and unit */
struct csv_met {
	double v;
	const char *unit;
};

/*
 * One row as perf stat -x: value, unit, event, run time (ns), % running,
 * metric value, metric unit, then the interval's flags (@flags: "" when
 * none was set); every field quoted when it holds the separator (RFC 4180),
 * so that any separator gives 8 fields. The first of the @nm metrics @m
 * that could be computed (not NaN) goes on the row, each other one on a row
 * of its own right after it with the five counter fields empty, as perf
 * stat -x prints a counter's further metrics.
 */
static void csv_row(FILE *f, const char *sep, uint64_t v, const char *unit,
		    const char *pmu, const char *ev, double seconds, const char *flags,
		    const struct csv_met *m, unsigned int nm)
{
	bool first = true;
	unsigned int i;

	hwtel_csv_fmt(f, sep, "%llu", (unsigned long long)v);
	hwtel_csv_fmt(f, sep, "%s", unit);
	hwtel_csv_event(f, sep, pmu, ev);
	fputs(sep, f);
	if (seconds > 0) {
		hwtel_csv_fmt(f, sep, "%.0f", seconds * 1e9);
		hwtel_csv_field(f, "100.00", sep);
	} else {
		fputs(sep, f);
	}
	for (i = 0; i < nm; i++) {
		if (isnan(m[i].v))
			continue;
		if (!first)
			fprintf(f, "%s%s%s%s", sep, sep, sep, sep);
		fputs(sep, f);
		hwtel_csv_fmt(f, sep, "%.6f", m[i].v);
		hwtel_csv_field(f, m[i].unit, sep);
		fputs(sep, f);
		hwtel_csv_field(f, flags, sep);
		fputc('\n', f);
		first = false;
	}
	if (first) {
		fprintf(f, "%s%s%s", sep, sep, sep);
		hwtel_csv_field(f, flags, sep);
		fputc('\n', f);
	}
}

static void csv_u64(FILE *f, const char *sep, uint64_t v, const char *unit,
		    const char *pmu, const char *ev, double seconds, const char *flags)
{
	csv_row(f, sep, v, unit, pmu, ev, seconds, flags, NULL, 0);
}

/* The flags field of -x: "", "lost_deltas", "readout_overrun", both joined
 * by "+", or "flags_not_read" without the control plane's state.
 */
static const char *csv_flags(const struct hwtel_pcie_data *d)
{
	if (!d->state_valid)
		return "flags_not_read";
	if (d->status.lost_deltas && d->status.readout_overrun)
		return "lost_deltas+readout_overrun";
	if (d->status.lost_deltas)
		return "lost_deltas";
	if (d->status.readout_overrun)
		return "readout_overrun";
	return "";
}

static int pcie_format_csv_c(FILE *f, const struct hwtel_pcie_data *d, double seconds,
			       const char *sep)
{
	static const char *const fields[] = {
		"words", "stall", "frames", "mvb_items", "mvb_stall", "items",
	};
	const char *fl = csv_flags(d);
	struct csv_met cm, bm[8];
	unsigned int e, b, i, h;
	char ev[128], buf[32], unit[40];

	hwtel_clear_error();
	for (e = 0; e < d->nendpoints; e++) {
		const struct hwtel_pcie_ep *ep = &d->endpoints[e];

		/* the clock, MHz, with each cycle counter */
		cm.unit = "MHz";
		cm.v = seconds > 0 ? (double)ep->pcie_cycles / seconds / 1e6 : NAN;
		snprintf(ev, sizeof(ev), "pcie_cycles,ep=%u", e);
		csv_row(f, sep, ep->pcie_cycles, "cycles", d->pmu, ev, seconds, fl, &cm, 1);
		cm.v = seconds > 0 ? (double)ep->dma_cycles / seconds / 1e6 : NAN;
		snprintf(ev, sizeof(ev), "dma_cycles,ep=%u", e);
		csv_row(f, sep, ep->dma_cycles, "cycles", d->pmu, ev, seconds, fl, &cm, 1);
		for (b = 0; b < ep->nbuses; b++) {
			const struct hwtel_pcie_bus *bus = &ep->buses[b];
			const uint64_t v[6] = { bus->words, bus->backpressure, bus->transactions,
						bus->mvb, bus->mvb_backpressure, bus->items };
			struct hwtel_pcie_bus_metrics m;

			hwtel_pcie_bus_metrics(d, ep, bus, seconds, &m);
			/* the bus's metrics go with its words counter */
			bm[0] = (struct csv_met){ m.used_pct, "% used" };
			bm[1] = (struct csv_met){ m.words_pct, "% words" };
			bm[2] = (struct csv_met){ m.mfb_stall_pct, "% mfb_stall" };
			bm[3] = (struct csv_met){ bus->has_mvb ? m.mvb_stall_pct : NAN, "% mvb_stall" };
			bm[4] = (struct csv_met){ m.gbps, "Gbps" };
			bm[5] = (struct csv_met){ m.mpps, "Mpps" };
			bm[6] = (struct csv_met){ bus->dma_up ? m.rd_pct : NAN, "% rd" };
			bm[7] = (struct csv_met){ m.avg_bytes, "B avg" };
			for (i = 0; i < 6; i++) {
				snprintf(ev, sizeof(ev), "%s,ep=%u,bus=%u", fields[i], e, bus->bus);
				csv_row(f, sep, v[i], i == 2 || i == 3 || i == 5 ? "" : "cycles",
					d->pmu, ev, seconds, fl, bm, i ? 0 : 8);
			}
			for (i = 0; i < bus->nregions; i++) {
				snprintf(ev, sizeof(ev), "region,ep=%u,bus=%u,idx=%u", e, bus->bus, i);
				csv_u64(f, sep, bus->regions[i], "cycles", d->pmu, ev, seconds, fl);
			}
		}
		/* a stop reason's share of the PCIe cycles, with its counter */
		for (i = 0; i < ep->nbrakes; i++) {
			snprintf(unit, sizeof(unit), "%% %s",
				 hwtel_pcie_brake_key(i, buf, sizeof(buf)));
			cm.unit = unit;
			cm.v = ratio_pct(ep->brakes[i], ep->pcie_cycles);
			snprintf(ev, sizeof(ev), "brake,ep=%u,idx=%u", e, i);
			csv_row(f, sep, ep->brakes[i], "cycles", d->pmu, ev, seconds, fl, &cm, 1);
		}
		for (h = 0; h < ep->nhists; h++)
			for (i = 0; i < ep->nbands; i++) {
				if (h < 2)
					snprintf(ev, sizeof(ev), "%s_band,ep=%u,idx=%u",
						 hist_keys[h], e, i);
				else
					snprintf(ev, sizeof(ev), "hist%u_band,ep=%u,idx=%u", h, e, i);
				csv_u64(f, sep, ep->hists[h][i], "cycles", d->pmu, ev, seconds, fl);
			}
	}
	return ferror(f) ? -EIO : 0;
}

int hwtel_pcie_format_csv(FILE *f, const struct hwtel_pcie_data *d, double seconds,
			  const char *sep)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = pcie_format_csv_c(f, d, seconds, sep);
	hwtel_numeric_restore(&num);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Prometheus textfile                                                */
/* ------------------------------------------------------------------ */

static void prom_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * The bus label: RQ and RC (the PCIe side of the endpoint), UP<port> and
 * DOWN<port> for the DMA buses (UP0, DOWN0, ...), unique in the endpoint.
 */
static const char *prom_bus(const struct hwtel_pcie_bus *bus, char *buf, size_t len)
{
	if (bus->kind >= HWTEL_BUS_UP)
		snprintf(buf, len, "%s%u", hwtel_pcie_bus_tag(bus->kind), bus->port);
	else
		snprintf(buf, len, "%s", hwtel_pcie_bus_tag(bus->kind));
	return buf;
}

static int pcie_format_prom_c(FILE *f, const struct hwtel_pcie_data *cum,
				const struct hwtel_pcie_data *d, double seconds)
{
	static const struct { const char *name, *type, *help; } m[] = {
		{ "hwtel_pcie_clock_cycles_total", "counter", "Elapsed cycles of a probe clock." },
		{ "hwtel_pcie_bus_cycles_total", "counter", "Bus cycles by event: words (a word moved), stall (MFB stalled), mvb_stall." },
		{ "hwtel_pcie_bus_region_cycles_total", "counter", "Cycles a region of the bus carried frame data." },
		{ "hwtel_pcie_bus_transactions_total", "counter", "Transactions on the bus by event: frames (SOF), mvb_items (requests)." },
		{ "hwtel_pcie_bus_bytes_total", "counter", "Bytes transferred on the bus (MFB items x item bytes)." },
		{ "hwtel_pcie_stop_cycles_total", "counter", "PCIe clock cycles a stop reason was active." },
		{ "hwtel_pcie_low_cycles_total", "counter", "PCIe clock cycles a resource spent in a band of free capacity." },
	};
	const char *pmu = cum->pmu;
	unsigned int e, b, i, h, k;
	char buf[32];

	hwtel_clear_error();
	(void)seconds;
	for (k = 0; k < ARRAY_SIZE(m); k++) {
		prom_head(f, m[k].name, m[k].type, m[k].help);
		for (e = 0; e < cum->nendpoints; e++) {
			const struct hwtel_pcie_ep *ep = &cum->endpoints[e];

			if (k == 0) {
				fprintf(f, "%s{device=\"%s\",endpoint=\"%u\",clock=\"pcie\"} %llu\n",
					m[k].name, pmu, e, (unsigned long long)ep->pcie_cycles);
				fprintf(f, "%s{device=\"%s\",endpoint=\"%u\",clock=\"dma\"} %llu\n",
					m[k].name, pmu, e, (unsigned long long)ep->dma_cycles);
				continue;
			}
			if (k == 5) {
				const struct hwtel_pcie_bus *rq = rq_bus(ep);

				for (i = 0; i <= ep->nbrakes; i++) {
					const char *stream = "UP";
					const char *key = i < ep->nbrakes ?
						hwtel_pcie_brake_key(i, buf, sizeof(buf)) :
						"endpoint_not_ready";
					uint64_t v = i < ep->nbrakes ? ep->brakes[i] :
						     (rq ? rq->backpressure : 0);

					if (i < ep->nbrakes)
						hwtel_pcie_brake_name(i, &stream, buf + 16, 16);
					fprintf(f, "%s{device=\"%s\",endpoint=\"%u\",stream=\"%s\",event=\"%s\"} %llu\n",
						m[k].name, pmu, e, stream, key,
						(unsigned long long)v);
				}
				continue;
			}
			if (k == 6) {
				for (h = 0; h < ep->nhists; h++)
					for (i = 0; i < ep->nbands; i++) {
						char rb[24];

						if (h < 2)
							snprintf(rb, sizeof(rb), "%s", hist_keys[h]);
						else
							snprintf(rb, sizeof(rb), "resource%u", h);
						fprintf(f, "%s{device=\"%s\",endpoint=\"%u\",resource=\"%s\",band=\"%s\"} %llu\n",
							m[k].name, pmu, e, rb,
							band_name(i, buf, sizeof(buf)),
							(unsigned long long)ep->hists[h][i]);
					}
				continue;
			}
			for (b = 0; b < ep->nbuses; b++) {
				const struct hwtel_pcie_bus *bus = &ep->buses[b];
				char lbl[160], bn[24];

				snprintf(lbl, sizeof(lbl), "device=\"%s\",endpoint=\"%u\",bus=\"%s\"",
					 pmu, e, prom_bus(bus, bn, sizeof(bn)));
				if (k == 1) {
					fprintf(f, "%s{%s,event=\"words\"} %llu\n", m[k].name, lbl,
						(unsigned long long)bus->words);
					fprintf(f, "%s{%s,event=\"stall\"} %llu\n", m[k].name, lbl,
						(unsigned long long)bus->backpressure);
					if (bus->has_mvb)
						fprintf(f, "%s{%s,event=\"mvb_stall\"} %llu\n", m[k].name,
							lbl, (unsigned long long)bus->mvb_backpressure);
				} else if (k == 2) {
					for (i = 0; i < bus->nregions; i++)
						fprintf(f, "%s{%s,region=\"%u\"} %llu\n", m[k].name, lbl,
							i, (unsigned long long)bus->regions[i]);
				} else if (k == 3) {
					fprintf(f, "%s{%s,event=\"frames\"} %llu\n", m[k].name, lbl,
						(unsigned long long)bus->transactions);
					if (bus->has_mvb)
						fprintf(f, "%s{%s,event=\"mvb_items\"} %llu\n", m[k].name,
							lbl, (unsigned long long)bus->mvb);
				} else if (k == 4) {
					fprintf(f, "%s{%s} %llu\n", m[k].name, lbl,
						(unsigned long long)(bus->items * cum->config.item_bytes));
				}
			}
		}
	}

	/* gauges: state and flags */
	if (cum->state_valid) {
		static const char *const g[] = {
			"hwtel_pcie_link_up", "hwtel_pcie_max_payload_bytes",
			"hwtel_pcie_max_read_request_bytes", "hwtel_pcie_tags_free",
			"hwtel_pcie_tags_free_lowest", "hwtel_pcie_stfifo_free_words",
			"hwtel_pcie_stfifo_free_words_lowest",
		};
		for (k = 0; k < ARRAY_SIZE(g); k++) {
			prom_head(f, g[k], "gauge", k == 0 ? "1 if the PCIe link is up." :
				  "PCIe endpoint state from the control plane.");
			for (e = 0; e < cum->nendpoints; e++) {
				const struct hwtel_pcie_ep *ep = &cum->endpoints[e];
				const unsigned int v[] = { ep->link_up, ep->mps, ep->mrrs, ep->tags_free,
							   ep->tags_free_min, ep->stfifo_free,
							   ep->stfifo_free_min };

				fprintf(f, "%s{device=\"%s\",endpoint=\"%u\"} %u\n", g[k], pmu, e, v[k]);
			}
		}
	}
	/* the flags are unknown without the state: no series rather than 0 */
	if (cum->state_valid) {
		prom_head(f, "hwtel_pcie_flag", "gauge", "1 while a STATUS flag is set (the counters are not exact).");
		fprintf(f, "hwtel_pcie_flag{device=\"%s\",flag=\"lost_deltas\"} %d\n", pmu,
			cum->status.lost_deltas);
		fprintf(f, "hwtel_pcie_flag{device=\"%s\",flag=\"readout_overrun\"} %d\n", pmu,
			cum->status.readout_overrun);
	}

	/*
	 * No gauges of the last interval: throughput, request rate and Used %
	 * are rate() of the counters above, over any range (@d and @seconds
	 * are kept for the API).
	 */
	(void)d;
	return ferror(f) ? -EIO : 0;
}

int hwtel_pcie_format_prom(FILE *f, const struct hwtel_pcie_data *cum,
			   const struct hwtel_pcie_data *d, double seconds)
{
	struct hwtel_numeric num;
	int ret;

	hwtel_numeric_c(&num);
	ret = pcie_format_prom_c(f, cum, d, seconds);
	hwtel_numeric_restore(&num);
	return ret;
}
