// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: PCIe telemetry readings as plain data - layout, diff and the
 * derived metrics (formulas of Documentation/userspace-api/hwtel.rst).
 * Nothing here touches the system, so all of it is unit tested.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

static const char *const kind_tag[] = { "RQ", "RC", "UP", "DOWN" };

void hwtel_pcie_data_init(struct hwtel_pcie_data *d, const char *pmu,
			  const struct hwtel_pcie_config *cfg)
{
	unsigned int e, p, nports, nreasons;

	memset(d, 0, sizeof(*d));
	snprintf(d->pmu, sizeof(d->pmu), "%s", pmu ? pmu : "");
	d->config = *cfg;
	d->nendpoints = cfg->pcie_endpoints;
	if (d->nendpoints > HWTEL_MAX_EP) {
		d->nendpoints = HWTEL_MAX_EP;
		d->truncated = true;
	}
	nports = cfg->dma_ports;
	if (nports > HWTEL_MAX_PORTS) {
		nports = HWTEL_MAX_PORTS;
		d->truncated = true;
	}
	nreasons = cfg->brake_channels > cfg->hist_pcie * cfg->hist_bands ?
		   cfg->brake_channels - cfg->hist_pcie * cfg->hist_bands : 0;
	if (nreasons > HWTEL_MAX_BRAKES) {
		nreasons = HWTEL_MAX_BRAKES;
		d->truncated = true;
	}
	if (cfg->hist_pcie > HWTEL_MAX_HISTS || cfg->hist_bands > HWTEL_MAX_BANDS)
		d->truncated = true;
	for (e = 0; e < d->nendpoints; e++) {
		struct hwtel_pcie_ep *ep = &d->endpoints[e];
		unsigned int b;

		ep->index = e;
		ep->nbrakes = nreasons;
		ep->nhists = cfg->hist_pcie < HWTEL_MAX_HISTS ? cfg->hist_pcie : HWTEL_MAX_HISTS;
		ep->nbands = cfg->hist_bands < HWTEL_MAX_BANDS ? cfg->hist_bands : HWTEL_MAX_BANDS;
		ep->nbuses = 2 + 2 * nports;
		for (b = 0; b < ep->nbuses; b++) {
			struct hwtel_pcie_bus *bus = &ep->buses[b];
			enum hwtel_bus_kind k = b < 2 ? (enum hwtel_bus_kind)b :
				((b & 1) ? HWTEL_BUS_DOWN : HWTEL_BUS_UP);

			p = b < 2 ? 0 : (b - 2) / 2;
			bus->kind = k;
			bus->port = p;
			bus->bus = b;
			bus->pcie_clk = b < 2;
			bus->has_mvb = b >= 2;
			bus->dma_up = k == HWTEL_BUS_UP;
			bus->nregions = cfg->regions[k];
			if (bus->nregions > HWTEL_MAX_REGIONS) {
				bus->nregions = HWTEL_MAX_REGIONS;
				d->truncated = true;
			}
			bus->region_bytes = cfg->region_bytes[k];
			switch (k) {
			case HWTEL_BUS_RQ:
				snprintf(bus->name, sizeof(bus->name), "PTC -> PCIe (RQ)");
				break;
			case HWTEL_BUS_RC:
				snprintf(bus->name, sizeof(bus->name), "PCIe -> PTC (RC)");
				break;
			case HWTEL_BUS_UP:
				snprintf(bus->name, sizeof(bus->name), "DMA%u -> PTC (UP)", p);
				break;
			default:
				snprintf(bus->name, sizeof(bus->name), "PTC -> DMA%u (DOWN)", p);
				break;
			}
		}
	}
}

const char *hwtel_pcie_bus_tag(enum hwtel_bus_kind k)
{
	return (unsigned int)k < 4 ? kind_tag[k] : "?";
}

void hwtel_pcie_data_copy(struct hwtel_pcie_data *dst, const struct hwtel_pcie_data *src)
{
	unsigned int n = src->nendpoints < HWTEL_MAX_EP ? src->nendpoints : HWTEL_MAX_EP;

	if (dst == src)
		return;
	memcpy(dst, src, offsetof(struct hwtel_pcie_data, endpoints) +
	       n * sizeof(src->endpoints[0]));
}

void hwtel_pcie_diff(const struct hwtel_pcie_data *new_,
		     const struct hwtel_pcie_data *old,
		     struct hwtel_pcie_data *out)
{
	unsigned int e, b, i, h;

	if (out != new_)
		hwtel_pcie_data_copy(out, new_);
	for (e = 0; e < out->nendpoints && e < old->nendpoints; e++) {
		struct hwtel_pcie_ep *o = &out->endpoints[e];
		const struct hwtel_pcie_ep *p = &old->endpoints[e];

		o->pcie_cycles -= p->pcie_cycles;
		o->dma_cycles -= p->dma_cycles;
		for (i = 0; i < o->nbrakes; i++)
			o->brakes[i] -= p->brakes[i];
		for (h = 0; h < o->nhists; h++)
			for (i = 0; i < o->nbands; i++)
				o->hists[h][i] -= p->hists[h][i];
		for (b = 0; b < o->nbuses; b++) {
			struct hwtel_pcie_bus *x = &o->buses[b];
			const struct hwtel_pcie_bus *y = &p->buses[b];

			x->words -= y->words;
			x->backpressure -= y->backpressure;
			x->transactions -= y->transactions;
			x->mvb -= y->mvb;
			x->mvb_backpressure -= y->mvb_backpressure;
			x->items -= y->items;
			for (i = 0; i < x->nregions; i++)
				x->regions[i] -= y->regions[i];
		}
	}
}

double hwtel_pcie_seconds(const struct hwtel_pcie_data *new_,
			  const struct hwtel_pcie_data *old)
{
	if (new_->timestamp_ns > old->timestamp_ns)
		return (double)(new_->timestamp_ns - old->timestamp_ns) / 1e9;
	if (new_->perf_time_ns > old->perf_time_ns)
		return (double)(new_->perf_time_ns - old->perf_time_ns) / 1e9;
	return 0;
}

/* 100 * part / whole, computed as the reference tool does (NaN if whole 0) */
static double pct(uint64_t part, uint64_t whole)
{
	if (!whole)
		return NAN;
	return 100.0 * (double)part / (double)whole;
}

void hwtel_pcie_bus_metrics(const struct hwtel_pcie_data *d,
			    const struct hwtel_pcie_ep *ep,
			    const struct hwtel_pcie_bus *bus, double seconds,
			    struct hwtel_pcie_bus_metrics *m)
{
	uint64_t cycles = bus->pcie_clk ? ep->pcie_cycles : ep->dma_cycles;
	uint64_t used = 0;
	unsigned int r;

	memset(m, 0, sizeof(*m));
	for (r = 0; r < bus->nregions; r++) {
		used += bus->regions[r];
		m->region_pct[r] = pct(bus->regions[r], cycles);
	}
	for (; r < HWTEL_MAX_REGIONS; r++)
		m->region_pct[r] = NAN;
	m->used_pct = pct(used, cycles * bus->nregions);
	m->words_pct = pct(bus->words, cycles);
	m->mfb_stall_pct = pct(bus->backpressure, cycles);
	m->mvb_stall_pct = bus->has_mvb ? pct(bus->mvb_backpressure, cycles) : NAN;
	m->bytes = bus->items * d->config.item_bytes;
	m->requests = bus->has_mvb ? bus->mvb : bus->transactions;
	if (seconds > 0) {
		m->gbps = (double)m->bytes * 8 / seconds / 1e9;
		m->mpps = (double)m->requests / seconds / 1e6;
	} else {
		m->gbps = NAN;
		m->mpps = NAN;
	}
	m->rd_pct = bus->dma_up ?
		    pct(m->requests > bus->transactions ? m->requests - bus->transactions : 0,
			m->requests) : NAN;
	m->avg_bytes = bus->transactions ? (double)m->bytes / (double)bus->transactions : NAN;
}

static const struct {
	const char *stream, *name, *key;
} brake_names[] = {
	{ "UP", "no free PCIe tag", "no_free_tag" },
	{ "UP", "PCIe tag not ready", "tag_not_ready" },
	{ "UP", "no room for completions", "no_completion_room" },
	{ "UP", "no completion header entry", "no_completion_header" },
	{ "DOWN", "MFB stalled towards DMA", "mfb_stalled_to_dma" },
	{ "DOWN", "MVB stalled towards DMA", "mvb_stalled_to_dma" },
};

const char *hwtel_pcie_brake_name(unsigned int k, const char **stream,
				  char *buf, size_t size)
{
	if (k < ARRAY_SIZE(brake_names)) {
		if (stream)
			*stream = brake_names[k].stream;
		return brake_names[k].name;
	}
	if (stream)
		*stream = "UP";
	snprintf(buf, size, "reason %u", k);
	return buf;
}

const char *hwtel_pcie_brake_key(unsigned int k, char *buf, size_t size)
{
	if (k < ARRAY_SIZE(brake_names))
		return brake_names[k].key;
	snprintf(buf, size, "reason_%u", k);
	return buf;
}
