// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: PCIe telemetry readings as plain data - layout, diff and the
 * derived metrics (formulas of Documentation/userspace-api/hwtel.rst).
 * Nothing here touches the system, so all of it is unit tested.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

static const char *const kind_tag[] = { "RQ", "RC", "UP", "DOWN" };

/*
 * A reading is one allocation: this header, then the public struct, then
 * its arrays, in the order layout_walk() lays them out. The shape is what
 * the arrays' sizes follow from; readings of one shape have every array at
 * the same offset, so a copy is one memcpy() and a re-wiring of the
 * pointers.
 */
struct pcie_shape {
	unsigned int neps, nports, nbrakes, nhists, nbands;
	unsigned int regions[4];
};

#define PCIE_DATA_MAGIC 0x68777064u	/* "hwpd" */

struct pcie_alloc {
	unsigned int magic;
	struct pcie_shape shape;
	size_t size;			/* of the whole allocation */
	char pmu[256];			/* a sysfs name is at most NAME_MAX */
	struct hwtel_pcie_data d;
};

/* Beyond these a count does not fit the library's counter bookkeeping
 * (16-bit indexes) or the allocation would be absurd: refused (E2BIG).
 */
#define PCIE_MAX_COUNT		65535u
#define PCIE_MAX_BYTES		(1ull << 30)

static void shape_of(const struct hwtel_pcie_config *cfg, struct pcie_shape *s)
{
	unsigned int k;

	memset(s, 0, sizeof(*s));
	s->neps = cfg->pcie_endpoints;
	s->nports = cfg->dma_ports;
	s->nbrakes = cfg->brake_channels > cfg->hist_pcie * cfg->hist_bands ?
		     cfg->brake_channels - cfg->hist_pcie * cfg->hist_bands : 0;
	s->nhists = cfg->hist_pcie;
	s->nbands = cfg->hist_bands;
	for (k = 0; k < 4; k++)
		s->regions[k] = cfg->regions[k];
}

static enum hwtel_bus_kind bus_kind(unsigned int b)
{
	return b < 2 ? (enum hwtel_bus_kind)b : ((b & 1) ? HWTEL_BUS_DOWN : HWTEL_BUS_UP);
}

/*
 * Bytes of an allocation of shape @s; with @a, also point the arrays of
 * a->d into it and set their counts.
 */
static uint64_t layout_walk(const struct pcie_shape *s, struct pcie_alloc *a)
{
	uint64_t off = sizeof(struct pcie_alloc);
	uint64_t nbuses = 2 + 2 * (uint64_t)s->nports;
	char *base = (char *)a;
	unsigned int e, b, h;

	off = (off + 15) & ~(uint64_t)15;
	if (a) {
		a->d.endpoints = (struct hwtel_pcie_ep *)(base + off);
		a->d.nendpoints = s->neps;
	}
	off += s->neps * (uint64_t)sizeof(struct hwtel_pcie_ep);
	for (e = 0; e < s->neps; e++) {
		struct hwtel_pcie_ep *ep = a ? &a->d.endpoints[e] : NULL;

		if (ep) {
			ep->nbuses = (unsigned int)nbuses;
			ep->buses = (struct hwtel_pcie_bus *)(base + off);
			ep->nbrakes = s->nbrakes;
			ep->brakes = (uint64_t *)(base + off + nbuses * sizeof(struct hwtel_pcie_bus));
		}
		off += nbuses * sizeof(struct hwtel_pcie_bus) + s->nbrakes * (uint64_t)8;
		if (ep) {
			ep->nhists = s->nhists;
			ep->nbands = s->nbands;
			ep->hists = (uint64_t **)(base + off);
		}
		off += s->nhists * (uint64_t)sizeof(uint64_t *);
		off = (off + 7) & ~(uint64_t)7;
		for (h = 0; h < s->nhists; h++) {
			if (ep)
				ep->hists[h] = (uint64_t *)(base + off);
			off += s->nbands * (uint64_t)8;
		}
		for (b = 0; b < nbuses; b++) {
			unsigned int nr = s->regions[bus_kind(b)];

			if (ep) {
				ep->buses[b].nregions = nr;
				ep->buses[b].regions = (uint64_t *)(base + off);
			}
			off += nr * (uint64_t)8;
		}
	}
	return off;
}

static struct pcie_alloc *alloc_of(const struct hwtel_pcie_data *d)
{
	struct pcie_alloc *a;

	if (!d)
		return NULL;
	a = (struct pcie_alloc *)((char *)d - offsetof(struct pcie_alloc, d));
	return a->magic == PCIE_DATA_MAGIC ? a : NULL;
}

struct hwtel_pcie_data *hwtel_pcie_data_new_config(const char *pmu,
						   const struct hwtel_pcie_config *cfg)
{
	struct pcie_shape s;
	struct pcie_alloc *a;
	unsigned int e, b, k;
	uint64_t size;

	hwtel_clear_error();
	shape_of(cfg, &s);
	if (s.neps > PCIE_MAX_COUNT || 2 + 2 * (uint64_t)s.nports > PCIE_MAX_COUNT ||
	    s.nbrakes > PCIE_MAX_COUNT || s.nhists > PCIE_MAX_COUNT || s.nbands > PCIE_MAX_COUNT ||
	    s.regions[0] > PCIE_MAX_COUNT || s.regions[1] > PCIE_MAX_COUNT ||
	    s.regions[2] > PCIE_MAX_COUNT || s.regions[3] > PCIE_MAX_COUNT ||
	    (size = layout_walk(&s, NULL)) > PCIE_MAX_BYTES) {
		hwtel_err(-E2BIG, "%s: layout too large (%u endpoints, %u DMA ports, %u stop reasons, %u x %u histogram bands, regions %u/%u/%u/%u)",
			  pmu && *pmu ? pmu : "PCIe telemetry", s.neps, s.nports, s.nbrakes,
			  s.nhists, s.nbands, s.regions[0], s.regions[1], s.regions[2], s.regions[3]);
		errno = E2BIG;
		return NULL;
	}
	a = calloc(1, (size_t)size);
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->magic = PCIE_DATA_MAGIC;
	a->shape = s;
	a->size = (size_t)size;
	snprintf(a->pmu, sizeof(a->pmu), "%s", pmu ? pmu : "");
	a->d.pmu = a->pmu;
	a->d.config = *cfg;
	layout_walk(&s, a);
	for (e = 0; e < s.neps; e++) {
		struct hwtel_pcie_ep *ep = &a->d.endpoints[e];

		ep->index = e;
		for (b = 0; b < ep->nbuses; b++) {
			struct hwtel_pcie_bus *bus = &ep->buses[b];
			enum hwtel_bus_kind kd = bus_kind(b);
			unsigned int p = b < 2 ? 0 : (b - 2) / 2;

			bus->kind = kd;
			bus->port = p;
			bus->bus = b;
			bus->pcie_clk = b < 2;
			bus->has_mvb = b >= 2;
			bus->dma_up = kd == HWTEL_BUS_UP;
			k = (unsigned int)kd;
			bus->region_bytes = cfg->region_bytes[k];
			switch (kd) {
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
	return &a->d;
}

void hwtel_pcie_data_free(struct hwtel_pcie_data *d)
{
	struct pcie_alloc *a;

	if (!d)
		return;
	a = alloc_of(d);
	if (!a)
		return;		/* not ours: leaking beats freeing a wild pointer */
	a->magic = 0;
	free(a);
}

const char *hwtel_pcie_bus_tag(enum hwtel_bus_kind k)
{
	return (unsigned int)k < 4 ? kind_tag[k] : "?";
}

/* Both readings came from hwtel_pcie_data_new*() with one shape */
static bool same_layout(const struct hwtel_pcie_data *x, const struct hwtel_pcie_data *y)
{
	const struct pcie_alloc *a = alloc_of(x), *b = alloc_of(y);

	return a && b && a->size == b->size && !memcmp(&a->shape, &b->shape, sizeof(a->shape));
}

static int layout_mismatch(const char *fn)
{
	return hwtel_err(-EINVAL, "%s: readings of different layouts (or not allocated by hwtel_pcie_data_new())",
			 fn);
}

/* Whole-allocation copy: same shape, same offsets; then re-point the arrays */
static void data_copy(struct hwtel_pcie_data *dst, const struct hwtel_pcie_data *src)
{
	struct pcie_alloc *a = alloc_of(dst);
	const struct pcie_alloc *b = alloc_of(src);

	if (a == b)
		return;
	memcpy(a, b, a->size);
	a->d.pmu = a->pmu;
	layout_walk(&a->shape, a);
}

int hwtel_pcie_data_copy(struct hwtel_pcie_data *dst, const struct hwtel_pcie_data *src)
{
	hwtel_clear_error();
	if (!same_layout(dst, src))
		return layout_mismatch("hwtel_pcie_data_copy");
	data_copy(dst, src);
	return 0;
}

/* For the library: the reading @out gets @h's template @tmpl (its layout) */
int hwtel_pcie_data_reset(struct hwtel_pcie_data *out, const struct hwtel_pcie_data *tmpl,
			  const char *fn)
{
	if (!same_layout(out, tmpl))
		return layout_mismatch(fn);
	data_copy(out, tmpl);
	return 0;
}

int hwtel_pcie_diff(const struct hwtel_pcie_data *new_,
		    const struct hwtel_pcie_data *old,
		    struct hwtel_pcie_data *out)
{
	unsigned int e, b, i, h;

	hwtel_clear_error();
	if (!same_layout(new_, old) || !same_layout(new_, out))
		return layout_mismatch("hwtel_pcie_diff");
	if (out != new_)
		data_copy(out, new_);
	for (e = 0; e < out->nendpoints; e++) {
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
	return 0;
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
	for (r = 0; r < bus->nregions; r++)
		used += bus->regions[r];
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

double hwtel_pcie_region_pct(const struct hwtel_pcie_ep *ep,
			     const struct hwtel_pcie_bus *bus, unsigned int r)
{
	if (r >= bus->nregions)
		return NAN;
	return pct(bus->regions[r], bus->pcie_clk ? ep->pcie_cycles : ep->dma_cycles);
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
