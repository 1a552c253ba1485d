// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: a PCIe telemetry instance - layout from the PMU's caps/, one
 * perf group per endpoint for the counters, the control plane for state,
 * flags, totals and clearing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/ndk_pcie_tlm.h>

#include "internal.h"

enum ctr_type { C_PCYC, C_DCYC, C_BUS, C_REGION, C_BRAKE, C_HIST };

struct ctr {
	uint8_t type;
	uint8_t field;		/* bus field 0..5 */
	uint16_t bus;		/* index into ep->buses */
	uint16_t idx;		/* region, reason, band */
	uint16_t hist;
	unsigned int entry;	/* counter entry (for totals) */
};

struct ep_group {
	struct hwtel_group *g;
	unsigned int n;
	struct ctr *ctr;
	uint64_t *vals;		/* n counters, then snapshot_ns if snap */
	bool snap;
};

struct hwtel_pcie {
	struct hwtel_pmu pmu;
	struct hwtel_pcie_config cfg;
	struct hwtel_nl *nl;
	unsigned int flags;
	unsigned int neps;
	struct ep_group *eps;	/* [neps] */
	uint64_t snap_base;	/* CLOCK_MONOTONIC of snapshot_ns 0 */
	bool snap_base_set;
	bool vanished;
	bool state_denied;	/* EP_GET refused (HWTEL_OPEN_STATE_OPTIONAL) */
	int flags_fd;		/* the PMU's sysfs "flags" (HWTEL_OPEN_FLAGS_ONLY) or -1 */
	struct hwtel_pcie_data *tmpl;	/* layout-initialised template */
};

static const char *const bus_fields[6] = {
	"words", "stall", "frames", "mvb_items", "mvb_stall", "items",
};

static uint64_t *slot(struct hwtel_pcie_ep *ep, const struct ctr *c)
{
	struct hwtel_pcie_bus *b;

	switch (c->type) {
	case C_PCYC:
		return &ep->pcie_cycles;
	case C_DCYC:
		return &ep->dma_cycles;
	case C_BRAKE:
		return &ep->brakes[c->idx];
	case C_HIST:
		return &ep->hists[c->hist][c->idx];
	case C_REGION:
		return &ep->buses[c->bus].regions[c->idx];
	default:
		b = &ep->buses[c->bus];
		switch (c->field) {
		case 0: return &b->words;
		case 1: return &b->backpressure;
		case 2: return &b->transactions;
		case 3: return &b->mvb;
		case 4: return &b->mvb_backpressure;
		default: return &b->items;
		}
	}
}

static int read_caps(struct hwtel_pcie *h)
{
	static const struct { const char *name; size_t off; } caps[] = {
#define CAP(n, f) { n, offsetof(struct hwtel_pcie_config, f) }
		CAP("endpoints", pcie_endpoints), CAP("dma_ports", dma_ports),
		CAP("pcie_regions", probe_pcie_regions), CAP("dma_regions", probe_dma_regions),
		CAP("cnt_width", counter_width), CAP("item_bytes", item_bytes),
		CAP("drain_period", drain_period), CAP("hist_bands", hist_bands),
		CAP("tag_capacity", tag_capacity), CAP("stfifo_capacity", stfifo_capacity),
		CAP("entries", entries), CAP("counters_per_ep", counters_per_ep),
		CAP("pcie_channels", pcie_channels), CAP("pcie_buses", pcie_buses),
		CAP("dma_channels", dma_channels), CAP("dma_buses", dma_buses),
		CAP("brake_channels", brake_channels), CAP("hist_pcie", hist_pcie),
		CAP("hist_dma", hist_dma),
		CAP("regions_rq", regions[HWTEL_BUS_RQ]), CAP("regions_rc", regions[HWTEL_BUS_RC]),
		CAP("regions_up", regions[HWTEL_BUS_UP]),
		CAP("regions_down", regions[HWTEL_BUS_DOWN]),
		CAP("bytes_rq", region_bytes[HWTEL_BUS_RQ]),
		CAP("bytes_rc", region_bytes[HWTEL_BUS_RC]),
		CAP("bytes_up", region_bytes[HWTEL_BUS_UP]),
		CAP("bytes_down", region_bytes[HWTEL_BUS_DOWN]),
#undef CAP
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		char path[PATH_MAX + 64];
		unsigned long long v;
		int ret;

		snprintf(path, sizeof(path), "%s/caps/%s", h->pmu.path, caps[i].name);
		ret = hwtel_read_uint(path, &v);
		if (ret < 0)
			return hwtel_err(ret, "%s: cannot read the layout (%s): %s", h->pmu.name,
					 path, strerror(-ret));
		*(unsigned int *)((char *)&h->cfg + caps[i].off) = (unsigned int)v;
	}
	if (!h->cfg.pcie_endpoints || h->cfg.pcie_buses != 2 ||
	    h->cfg.dma_buses != 2 * h->cfg.dma_ports)
		return hwtel_err(-EINVAL, "%s: unknown layout in caps/ (endpoints %u, pcie buses %u, dma buses %u)",
				 h->pmu.name, h->cfg.pcie_endpoints, h->cfg.pcie_buses,
				 h->cfg.dma_buses);
	return 0;
}

/* Counters of endpoint @e in perf and entry terms. */
static int build_ctrs(struct hwtel_pcie *h, const struct hwtel_pcie_ep *tep,
		      unsigned int e, struct ctr **out)
{
	const struct hwtel_pcie_config *c = &h->cfg;
	unsigned int n = 0, cap = 4 + tep->nbrakes + tep->nhists * tep->nbands + tep->nbuses * 6;
	unsigned int pbase = e * c->counters_per_ep, dbase = pbase + c->pcie_channels;
	unsigned int brake0 = pbase + 1 + c->pcie_buses * (6 + c->probe_pcie_regions);
	unsigned int b, i, hh;
	struct ctr *v;

	for (b = 0; b < tep->nbuses; b++)
		cap += tep->buses[b].nregions;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[n++] = (struct ctr){ .type = C_PCYC, .entry = pbase };
	v[n++] = (struct ctr){ .type = C_DCYC, .entry = dbase };
	for (b = 0; b < tep->nbuses; b++) {
		unsigned int first = b < 2 ? pbase + 1 + b * (6 + c->probe_pcie_regions) :
				     dbase + 1 + (b - 2) * (6 + c->probe_dma_regions);

		for (i = 0; i < 6; i++)
			v[n++] = (struct ctr){ .type = C_BUS, .field = (uint8_t)i,
					       .bus = (uint16_t)b, .entry = first + i };
		for (i = 0; i < tep->buses[b].nregions; i++)
			v[n++] = (struct ctr){ .type = C_REGION, .bus = (uint16_t)b,
					       .idx = (uint16_t)i, .entry = first + 6 + i };
	}
	for (i = 0; i < tep->nbrakes; i++)
		v[n++] = (struct ctr){ .type = C_BRAKE, .idx = (uint16_t)i, .entry = brake0 + i };
	for (hh = 0; hh < tep->nhists; hh++)
		for (i = 0; i < tep->nbands; i++)
			v[n++] = (struct ctr){ .type = C_HIST, .hist = (uint16_t)hh,
					       .idx = (uint16_t)i,
					       .entry = brake0 + (c->brake_channels - c->hist_pcie * c->hist_bands) +
							hh * c->hist_bands + i };
	*out = v;
	return (int)n;
}

static void ctr_spec(const struct ctr *c, const struct hwtel_pcie_ep *tep, unsigned int e,
		     char *buf, size_t size)
{
	switch (c->type) {
	case C_PCYC:
		snprintf(buf, size, "pcie_cycles,ep=%u", e);
		break;
	case C_DCYC:
		snprintf(buf, size, "dma_cycles,ep=%u", e);
		break;
	case C_BUS:
		snprintf(buf, size, "%s,ep=%u,bus=%u", bus_fields[c->field], e,
			 tep->buses[c->bus].bus);
		break;
	case C_REGION:
		snprintf(buf, size, "region,ep=%u,bus=%u,idx=%u", e, tep->buses[c->bus].bus, c->idx);
		break;
	case C_BRAKE:
		snprintf(buf, size, "brake,ep=%u,idx=%u", e, c->idx);
		break;
	default:
		if (c->hist == 0)
			snprintf(buf, size, "tags_band,ep=%u,idx=%u", e, c->idx);
		else if (c->hist == 1)
			snprintf(buf, size, "stfifo_band,ep=%u,idx=%u", e, c->idx);
		else
			snprintf(buf, size, "raw,idx=%u", c->entry);
		break;
	}
}

static bool snapshot_ns_event(const struct hwtel_pcie *h)
{
	char path[sizeof(h->pmu.path) + 32];

	snprintf(path, sizeof(path), "%s/events/snapshot_ns", h->pmu.path);
	return access(path, F_OK) == 0;
}

void hwtel_pcie_close(struct hwtel_pcie *h)
{
	unsigned int e;

	if (!h)
		return;
	for (e = 0; e < h->neps && h->eps; e++) {
		hwtel_group_free(h->eps[e].g);
		free(h->eps[e].ctr);
		free(h->eps[e].vals);
	}
	free(h->eps);
	hwtel_nl_close(h->nl);
	if (h->flags_fd >= 0)
		close(h->flags_fd);
	hwtel_pcie_data_free(h->tmpl);
	free(h);
}

int hwtel_pcie_open(const char *device, unsigned int index, unsigned int flags,
		    struct hwtel_pcie **out)
{
	struct hwtel_pcie *h;
	char name[HWTEL_NAME_MAX];
	unsigned int e, i;
	int ret;

	hwtel_clear_error();
	*out = NULL;
	hwtel_clear_error();
	ret = hwtel_resolve_device(HWTEL_PCIE_PMU_PREFIX, HWTEL_PCIE_MODULE, device, index,
				   name, sizeof(name));
	if (ret)
		return ret;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->flags = flags;
	h->flags_fd = -1;
	ret = hwtel_pmu_load(name, &h->pmu);
	if (!ret)
		ret = read_caps(h);
	if (ret)
		goto fail;
	h->tmpl = hwtel_pcie_data_new_config(h->pmu.name, &h->cfg);
	if (!h->tmpl) {
		ret = -errno;
		goto fail;
	}
	h->eps = calloc(h->tmpl->nendpoints, sizeof(*h->eps));
	if (!h->eps) {
		ret = -ENOMEM;
		goto fail;
	}
	h->neps = h->tmpl->nendpoints;
	for (e = 0; e < h->neps; e++) {
		ret = build_ctrs(h, &h->tmpl->endpoints[e], e, &h->eps[e].ctr);
		if (ret < 0)
			goto fail;
		h->eps[e].n = (unsigned int)ret;
		h->eps[e].vals = calloc(h->eps[e].n + 1, sizeof(uint64_t));
		if (!h->eps[e].vals) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	if (!(flags & HWTEL_OPEN_NO_PERF)) {
		for (e = 0; e < h->neps; e++) {
			struct ep_group *g = &h->eps[e];

			g->g = hwtel_group_new(&h->pmu, false);
			if (!g->g) {
				ret = -ENOMEM;
				goto fail;
			}
			for (i = 0; i < g->n; i++) {
				char spec[96];

				ctr_spec(&g->ctr[i], &h->tmpl->endpoints[e], e, spec, sizeof(spec));
				ret = hwtel_group_add(g->g, spec);
				if (ret < 0)
					goto fail;
			}
			/*
			 * The time of the copies endpoint 0 was counted from
			 * (hwtel_pcie_read()): a read the driver serves from
			 * an earlier copy (it spaces its SNAPSHOTs) then still
			 * gives exact rates. Drivers before it lack the event.
			 */
			if (e == 0 && snapshot_ns_event(h)) {
				ret = hwtel_group_add(g->g, "snapshot_ns");
				if (ret < 0)
					goto fail;
				g->snap = true;
			}
			ret = hwtel_group_open(g->g);
			if (ret < 0)
				goto fail;
		}
	}
	if (!(flags & HWTEL_OPEN_NO_NETLINK)) {
		ret = hwtel_nl_open(&h->nl);
		if (ret < 0)
			goto fail;
	}
	if (h->nl && (flags & HWTEL_OPEN_FLAGS_ONLY)) {
		char path[PATH_MAX];

		/* root only; without it (or on an older driver) EP_GET serves */
		snprintf(path, sizeof(path), "%s/flags", h->pmu.path);
		h->flags_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	*out = h;
	return 0;
fail:
	hwtel_pcie_close(h);
	return ret;
}

struct hwtel_pcie_data *hwtel_pcie_data_new(const struct hwtel_pcie *h)
{
	struct hwtel_pcie_data *d = hwtel_pcie_data_new_config(h->pmu.name, &h->cfg);

	if (d)
		hwtel_pcie_data_reset(d, h->tmpl, "hwtel_pcie_data_new");
	return d;
}

const char *hwtel_pcie_name(const struct hwtel_pcie *h)
{
	return h->pmu.name;
}

const struct hwtel_pcie_config *hwtel_pcie_config(const struct hwtel_pcie *h)
{
	return &h->cfg;
}

bool hwtel_pcie_vanished(struct hwtel_pcie *h)
{
	if (!h->vanished && access(h->pmu.path, F_OK) != 0)
		h->vanished = true;
	return h->vanished;
}

/*
 * HWTEL_OPEN_FLAGS_ONLY: the STATUS flags from the PMU's sysfs "flags"
 * (hex, the control plane's FLAGS bits): one pread(), no netlink request.
 */
static int read_flags_file(struct hwtel_pcie *h, struct hwtel_pcie_data *out)
{
	char buf[32], *end;
	unsigned long v;
	ssize_t n;

	n = pread(h->flags_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0) {
		int e = errno;

		if (e == ENODEV || e == ENOENT) {
			h->vanished = true;
			return hwtel_err(-ENODEV, "PCIe telemetry %s vanished", h->pmu.name);
		}
		return hwtel_err(-e, "reading %s/flags: %s", h->pmu.path, strerror(e));
	}
	buf[n] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 16);
	if (errno || end == buf || *end != '\n')
		return hwtel_err(-EIO, "%s/flags: unexpected \"%s\"", h->pmu.path, buf);
	out->status.lost_deltas = !!(v & NDK_PCIE_TLM_FLAG_LOST_DELTA);
	out->status.readout_overrun = !!(v & NDK_PCIE_TLM_FLAG_READOUT_OVERRUN);
	out->state_valid = true;
	return 0;
}

static int read_state(struct hwtel_pcie *h, struct hwtel_pcie_data *out)
{
	int ret;

	if (!h->nl || h->state_denied)
		return 0;
	if (h->flags_fd >= 0)
		return read_flags_file(h, out);
	ret = hwtel_nl_ep_get(h->nl, h->pmu.name, out);
	if (ret == -ENODEV || ret == -ENOENT) {
		h->vanished = true;
		return hwtel_err(-ENODEV, "PCIe telemetry %s vanished (control plane: %s)",
				 h->pmu.name, strerror(-ret));
	}
	if (ret == -EACCES && (h->flags & HWTEL_OPEN_STATE_OPTIONAL)) {
		/*
		 * The privilege is the socket opener's (netlink_capable()): it
		 * does not come later, so the handle stops asking.
		 */
		h->state_denied = true;
		out->state_valid = false;
		hwtel_clear_error();
		return 0;
	}
	return ret;
}

int hwtel_pcie_read(struct hwtel_pcie *h, struct hwtel_pcie_data *out)
{
	unsigned int e, i;
	uint64_t t0;
	int ret;

	hwtel_clear_error();
	ret = hwtel_pcie_data_reset(out, h->tmpl, "hwtel_pcie_read");
	if (ret)
		return ret;
	t0 = hwtel_now_ns();
	for (e = 0; e < h->neps; e++) {
		struct ep_group *g = &h->eps[e];

		if (!g->g)
			return hwtel_err(-EINVAL, "%s was opened without perf events", h->pmu.name);
		ret = hwtel_group_read(g->g, g->vals, e ? NULL : &out->perf_time_ns, NULL);
		if (ret < 0) {
			if (ret == -ENODEV || hwtel_pcie_vanished(h)) {
				h->vanished = true;
				return hwtel_err(-ENODEV, "PCIe telemetry %s vanished: %s",
						 h->pmu.name, hwtel_last_error());
			}
			return ret;
		}
		for (i = 0; i < g->n; i++)
			*slot(&out->endpoints[e], &g->ctr[i]) = g->vals[i];
	}
	/* the snapshots happened between t0 and now: take the middle */
	out->timestamp_ns = t0 + (hwtel_now_ns() - t0) / 2;
	/*
	 * With snapshot_ns, endpoint 0's copy is timed by the driver: its
	 * count is the CLOCK_MONOTONIC ns since the copy the group started
	 * from, so the stamp is that count plus an offset fixed at the first
	 * read. Differences of stamps are then exact between copies, also
	 * when the driver served a read from a copy older than the read.
	 */
	if (h->eps[0].snap) {
		uint64_t ns = h->eps[0].vals[h->eps[0].n];

		if (!h->snap_base_set) {
			h->snap_base = out->timestamp_ns - ns;
			h->snap_base_set = true;
		}
		out->timestamp_ns = h->snap_base + ns;
		out->perf_time_ns = ns;
	}
	return read_state(h, out);
}

int hwtel_pcie_read_totals(struct hwtel_pcie *h, struct hwtel_pcie_data *out)
{
	unsigned int n = h->cfg.pcie_endpoints * h->cfg.counters_per_ep, used = 0, e, i;
	uint64_t *tot, ts = 0;
	uint32_t flags = 0;
	int ret;

	hwtel_clear_error();
	if (!h->nl)
		return hwtel_err(-EINVAL, "%s was opened without the control plane", h->pmu.name);
	ret = hwtel_pcie_data_reset(out, h->tmpl, "hwtel_pcie_read_totals");
	if (ret)
		return ret;
	tot = calloc(n ? n : 1, sizeof(*tot));
	if (!tot)
		return -ENOMEM;
	ret = hwtel_nl_totals(h->nl, h->pmu.name, tot, n, &used, &ts, &flags);
	if (ret < 0) {
		free(tot);
		if (ret == -ENODEV || ret == -ENOENT) {
			h->vanished = true;
			return hwtel_err(-ENODEV, "PCIe telemetry %s vanished", h->pmu.name);
		}
		return ret;
	}
	for (e = 0; e < h->neps; e++) {
		struct ep_group *g = &h->eps[e];

		for (i = 0; i < g->n; i++)
			if (g->ctr[i].entry < n)
				*slot(&out->endpoints[e], &g->ctr[i]) = tot[g->ctr[i].entry];
	}
	free(tot);
	out->timestamp_ns = ts;
	return read_state(h, out);
}

int hwtel_pcie_clear(struct hwtel_pcie *h, unsigned int what)
{
	hwtel_clear_error();
	if (!h->nl)
		return hwtel_err(-EINVAL, "%s was opened without the control plane", h->pmu.name);
	return hwtel_nl_clear(h->nl, h->pmu.name, what);
}

int hwtel_pcie_status(struct hwtel_pcie *h, struct hwtel_pcie_status *st)
{
	struct hwtel_pcie_data *d;
	int ret;

	hwtel_clear_error();
	if (!h->nl)
		return hwtel_err(-EINVAL, "%s was opened without the control plane", h->pmu.name);
	d = hwtel_pcie_data_new(h);
	if (!d)
		return -errno;
	ret = read_state(h, d);
	if (!ret)
		*st = d->status;
	hwtel_pcie_data_free(d);
	return ret;
}
