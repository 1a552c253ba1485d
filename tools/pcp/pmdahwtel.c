// SPDX-License-Identifier: GPL-2.0
/*
 * pmdahwtel - Performance Co-Pilot agent for the hwtel PMUs
 *
 * Serves hwtel.pcie.* (NDK PCIe telemetry: every counter of the block
 * since its last clear, the endpoint state and the STATUS flags, all from
 * the ndk_pcie_tlm control plane) and hwtel.ddr.* (Marvell DSS: the fixed
 * and generic counters, one perf group per controller, since the agent
 * opened them). Everything is read through libhwtel; this file only maps
 * readings to PCP metrics. Counters are PM_SEM_COUNTER, so pmval and
 * pmlogger compute rates; the report's shares and rates are derived
 * metrics over them (hwtel.derived), not code here.
 *
 * Instance domains (names are unique up to the first space, as PCP asks):
 *   device    "ndk_pcie_tlm_3fff00000000"
 *   endpoint  "ndk_pcie_tlm_3fff00000000/ep0"
 *   bus       "ndk_pcie_tlm_3fff00000000/ep0/RQ", ".../ep0/UP0"
 *   region    ".../ep0/RQ/region0"
 *   stop      ".../ep0/no_free_tag", ".../ep0/endpoint_not_ready"
 *   band      ".../ep0/tags/band0" (bands none, <=1/8, <=1/2, rest)
 *   ddr       "mrvl_ddr_pmu_87e1d0000000"
 *   ddrevent  "mrvl_ddr_pmu_87e1d0000000/ddr_cam_read"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcp/pmapi.h>
#include <pcp/pmda.h>

#include <libhwtel/hwtel.h>
#include "../lib/internal.h"	/* hwtel_pcie_bus_tag(), hwtel_pcie_brake_key() */

#include "domain.h"

/* instance names not seen for 30 days are culled; seen times saved hourly */
#define HWTEL_KEEP_SECONDS	(30 * 86400)
#define HWTEL_SYNC_SECONDS	3600

enum { IND_DEV, IND_EP, IND_BUS, IND_REGION, IND_STOP, IND_BAND, IND_DDR, IND_DDREV, NINDOMS };
enum { CL_EP, CL_BUS, CL_REGION, CL_STOP, CL_BAND, CL_STATE, CL_DEV, CL_DDR, CL_DDREV };

static pmdaIndom indomtab[NINDOMS] = {
	{ IND_DEV, 0, NULL }, { IND_EP, 0, NULL }, { IND_BUS, 0, NULL },
	{ IND_REGION, 0, NULL }, { IND_STOP, 0, NULL }, { IND_BAND, 0, NULL },
	{ IND_DDR, 0, NULL }, { IND_DDREV, 0, NULL },
};

#define U_COUNT		PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE)
#define U_BYTE		PMDA_PMUNITS(1, 0, 0, PM_SPACE_BYTE, 0, 0)
#define U_NONE		PMDA_PMUNITS(0, 0, 0, 0, 0, 0)

struct hmetric {
	const char *name;	/* after "hwtel." */
	unsigned int cluster, item, indom, type, sem;
	pmUnits units;
	const char *oneline, *help;
};

#define CTR(n, c, i, ind, u, o, h) { n, c, i, ind, PM_TYPE_U64, PM_SEM_COUNTER, u, o, h }
#define GAUGE(n, c, i, ind, u, o, h) { n, c, i, ind, PM_TYPE_U32, PM_SEM_INSTANT, u, o, h }
#define DISC(n, c, i, ind, u, o, h) { n, c, i, ind, PM_TYPE_U32, PM_SEM_DISCRETE, u, o, h }
/* a 64-bit value that can go down: perf's scaled estimate of an event */
#define INST64(n, c, i, ind, u, o, h) { n, c, i, ind, PM_TYPE_U64, PM_SEM_INSTANT, u, o, h }

static const struct hmetric hm[] = {
	CTR("pcie.ep.pcie_cycles", CL_EP, 0, IND_EP, U_COUNT,
	    "elapsed cycles of the PCIe clock probe",
	    "Cycles of the endpoint's PCIe clock since the block's last clear\n"
	    "(PCIE_TELEMETRY_MI, control plane totals). Its rate is the PCIe\n"
	    "clock frequency (derived metric hwtel.pcie.ep.pcie_clock)."),
	CTR("pcie.ep.dma_cycles", CL_EP, 1, IND_EP, U_COUNT,
	    "elapsed cycles of the DMA clock probe",
	    "Cycles of the endpoint's DMA clock since the block's last clear.\n"
	    "Its rate is the DMA clock frequency (hwtel.pcie.ep.dma_clock)."),
	CTR("pcie.bus.words", CL_BUS, 0, IND_BUS, U_COUNT,
	    "cycles a word moved on the bus",
	    "Cycles of the bus's clock in which a word moved (SRC_RDY and\n"
	    "DST_RDY), since the last clear."),
	CTR("pcie.bus.stall", CL_BUS, 1, IND_BUS, U_COUNT,
	    "cycles the bus (MFB) was stalled by its consumer",
	    "Cycles of the bus's clock in which the MFB had data but its consumer\n"
	    "was not ready (backpressure), since the last clear."),
	CTR("pcie.bus.frames", CL_BUS, 2, IND_BUS, U_COUNT,
	    "transactions (SOF) started on the bus",
	    "Frames (start of frame) that began on the bus since the last clear."),
	CTR("pcie.bus.mvb_items", CL_BUS, 3, IND_BUS, U_COUNT,
	    "MVB items (requests) on the bus",
	    "MVB items: every request, with or without payload, since the last\n"
	    "clear. Only the DMA buses (UP, DOWN) have an MVB."),
	CTR("pcie.bus.mvb_stall", CL_BUS, 4, IND_BUS, U_COUNT,
	    "cycles the MVB of the bus was stalled",
	    "Cycles of the bus's clock in which its MVB was stalled, since the\n"
	    "last clear. Only the DMA buses (UP, DOWN) have an MVB."),
	CTR("pcie.bus.items", CL_BUS, 5, IND_BUS, U_COUNT,
	    "MFB items moved on the bus",
	    "MFB items moved since the last clear (up to EOF_POS in the last\n"
	    "region of a frame). hwtel.pcie.bus.bytes is this times the item size."),
	CTR("pcie.bus.bytes", CL_BUS, 6, IND_BUS, U_BYTE,
	    "bytes moved on the bus",
	    "Bytes moved on the bus since the last clear: MFB items times the\n"
	    "item size of the layout (caps/item_bytes). Its rate is the bus\n"
	    "throughput (hwtel.pcie.bus.throughput)."),
	CTR("pcie.bus.requests", CL_BUS, 7, IND_BUS, U_COUNT,
	    "requests on the bus",
	    "Requests since the last clear: the MVB items of a DMA bus, the\n"
	    "frames of a PCIe bus (RQ, RC); the report's Mpps counts these."),
	CTR("pcie.bus.clock_cycles", CL_BUS, 8, IND_BUS, U_COUNT,
	    "cycles of the clock the bus runs on",
	    "The endpoint's PCIe clock cycles for RQ and RC, its DMA clock cycles\n"
	    "for the DMA buses, since the last clear: the denominator of the\n"
	    "bus's shares (hwtel.pcie.bus.words_pct and others)."),
	CTR("pcie.bus.region_cycles", CL_BUS, 9, IND_BUS, U_COUNT,
	    "sum over the bus's regions of the cycles each carried frame data",
	    "Sum of hwtel.pcie.region.cycles over the regions of the bus since\n"
	    "the last clear; divided by clock cycles times hwtel.pcie.bus.regions\n"
	    "it is the report's Used % (hwtel.pcie.bus.used_pct)."),
	DISC("pcie.bus.regions", CL_BUS, 10, IND_BUS, U_NONE,
	     "regions of the bus",
	     "Number of MFB regions of the bus in this layout (probe regions)."),
	CTR("pcie.region.cycles", CL_REGION, 0, IND_REGION, U_COUNT,
	    "cycles a region of the bus carried frame data",
	    "Cycles of the bus's clock in which this MFB region carried frame\n"
	    "data, since the last clear."),
	CTR("pcie.stop.cycles", CL_STOP, 0, IND_STOP, U_COUNT,
	    "PCIe clock cycles a stop reason was active",
	    "PCIe clock cycles in which a reason stopped the PTC, since the last\n"
	    "clear: no_free_tag, tag_not_ready, no_completion_room and\n"
	    "no_completion_header stop the UP stream, mfb_stalled_to_dma and\n"
	    "mvb_stalled_to_dma the DOWN stream; endpoint_not_ready is the stall\n"
	    "of the RQ bus (the PCIe endpoint not accepting requests)."),
	CTR("pcie.band.cycles", CL_BAND, 0, IND_BAND, U_COUNT,
	    "PCIe clock cycles a resource spent in a band of free capacity",
	    "PCIe clock cycles in which the free PCIe tags (tags) or the free\n"
	    "PTC storage FIFO words (stfifo) were in a band, since the last\n"
	    "clear. Bands: band0 none free, band1 at most 1/8 of the capacity,\n"
	    "band2 at most 1/2, band3 the rest."),
	GAUGE("pcie.ep.link_up", CL_STATE, 0, IND_EP, U_NONE,
	      "1 if the PCIe link is up",
	      "1 if the endpoint's PCIe link is up, 0 if not (control plane\n"
	      "state, not a counter)."),
	DISC("pcie.ep.max_payload", CL_STATE, 1, IND_EP, U_BYTE,
	     "negotiated maximum payload size",
	     "Maximum payload size (MPS) of the endpoint, in bytes."),
	DISC("pcie.ep.max_read_request", CL_STATE, 2, IND_EP, U_BYTE,
	     "maximum read request size",
	     "Maximum read request size (MRRS) of the endpoint, in bytes."),
	DISC("pcie.ep.ext_tag", CL_STATE, 3, IND_EP, U_NONE,
	     "1 if extended (8-bit) tags are enabled",
	     "1 if the endpoint uses extended tags, 0 if not."),
	DISC("pcie.ep.tag_10b", CL_STATE, 4, IND_EP, U_NONE,
	     "1 if 10-bit tags are enabled",
	     "1 if the endpoint uses 10-bit tags, 0 if not."),
	DISC("pcie.ep.rcb", CL_STATE, 5, IND_EP, U_BYTE,
	     "read completion boundary",
	     "Read completion boundary (RCB) of the endpoint, in bytes."),
	GAUGE("pcie.ep.tags_free", CL_STATE, 6, IND_EP, U_COUNT,
	      "free PCIe tags now",
	      "PCIe tags free at the time of the fetch (a gauge)."),
	GAUGE("pcie.ep.tags_free_lowest", CL_STATE, 7, IND_EP, U_COUNT,
	      "lowest free PCIe tags since the marks were cleared",
	      "Lowest number of free PCIe tags since the lowest marks were last\n"
	      "cleared with 'hwtel pcie -c' (reading never clears them)."),
	GAUGE("pcie.ep.stfifo_free", CL_STATE, 8, IND_EP, U_COUNT,
	      "free PTC storage FIFO words now",
	      "Words free in the PTC storage FIFO at the time of the fetch."),
	GAUGE("pcie.ep.stfifo_free_lowest", CL_STATE, 9, IND_EP, U_COUNT,
	      "lowest free PTC storage FIFO words since the marks were cleared",
	      "Lowest number of free PTC storage FIFO words since the lowest\n"
	      "marks were last cleared."),
	GAUGE("pcie.device.busy", CL_DEV, 0, IND_DEV, U_NONE,
	      "1 while the block is busy (a clear or snapshot under way)",
	      "STATUS busy flag of the telemetry block."),
	GAUGE("pcie.device.lost_deltas", CL_DEV, 1, IND_DEV, U_NONE,
	      "1 if counter deltas were lost (LOST DELTAS)",
	      "STATUS flag: the block lost counter deltas since the flags were\n"
	      "last cleared; the counters are then not exact."),
	GAUGE("pcie.device.readout_overrun", CL_DEV, 2, IND_DEV, U_NONE,
	      "1 if a read-out overran (READ-OUT OVERRUN)",
	      "STATUS flag: a read-out overran since the flags were last cleared;\n"
	      "the counters are then not exact."),
	GAUGE("pcie.device.state_valid", CL_DEV, 3, IND_DEV, U_NONE,
	      "1 if the endpoint state came from the control plane",
	      "1 if hwtel.pcie.ep.* state and the flags were read from the\n"
	      "control plane at this fetch, 0 if only counters were."),
	CTR("ddr.reads", CL_DDR, 0, IND_DDR, U_COUNT,
	    "DDR read bursts (fixed counter)",
	    "64-byte read bursts of the controller (DSS fixed read counter)\n"
	    "since the agent opened it."),
	CTR("ddr.writes", CL_DDR, 1, IND_DDR, U_COUNT,
	    "DDR write bursts (fixed counter)",
	    "64-byte write bursts of the controller (DSS fixed write counter)\n"
	    "since the agent opened it."),
	CTR("ddr.read_bytes", CL_DDR, 2, IND_DDR, U_BYTE,
	    "bytes read from DDR",
	    "hwtel.ddr.reads times 64 bytes; its rate is the read bandwidth\n"
	    "(hwtel.ddr.read_bandwidth)."),
	CTR("ddr.write_bytes", CL_DDR, 3, IND_DDR, U_BYTE,
	    "bytes written to DDR",
	    "hwtel.ddr.writes times 64 bytes; its rate is the write bandwidth\n"
	    "(hwtel.ddr.write_bandwidth)."),
	INST64("ddr.event.count", CL_DDREV, 0, IND_DDREV, U_COUNT,
	       "count of a generic DSS event (an estimate when multiplexed)",
	       "Count of a generic DSS event since the agent opened it. Up to 8\n"
	       "generic events are counted exactly in one group; with more, perf\n"
	       "multiplexes the groups and this is the count scaled by\n"
	       "enabled/running (hwtel.ddr.event.exact is then 0). The estimate\n"
	       "goes down when the event is counted more of the time than before,\n"
	       "so its semantics are instant, not counter: PCP clients do not\n"
	       "turn it into a rate."),
	GAUGE("ddr.event.exact", CL_DDREV, 1, IND_DDREV, U_NONE,
	      "1 if hwtel.ddr.event.count is an exact count",
	      "1 if the event was counted all the time (not multiplexed), 0 if\n"
	      "its count is a scaled estimate."),
};

#define NMETRICS (sizeof(hm) / sizeof(hm[0]))
static pmdaMetric metrictab[NMETRICS];

/* ---- state ---------------------------------------------------------- */

struct pcie_dev {
	char name[HWTEL_NAME_MAX];
	struct hwtel_pcie *h;
	struct hwtel_pcie_data *d;
	bool ok;
};

struct ddr_dev {
	char name[HWTEL_NAME_MAX];
	struct hwtel_ddr *h;
	struct hwtel_ddr_data *d;
	bool ok;
};

/* What an instance refers to (the cache's private pointer). */
struct inst_ref {
	unsigned int dev, ep, bus, idx, hist;
};

/* the PMUs seen, as many as there are; one that went away is dropped */
static struct pcie_dev *pcie;
static unsigned int npcie, pcie_cap;
static struct ddr_dev *ddr;
static unsigned int nddr, ddr_cap;
static const char *ddr_events;	/* -e: generic DDR events, NULL = the report's */

static pmInDom indom(unsigned int serial)
{
	return indomtab[serial].it_indom;
}

/* (Re)open PCIe block @k and give it a reading of its (new) layout */
static void pcie_open(unsigned int k)
{
	if (hwtel_pcie_open(pcie[k].name, 0, HWTEL_OPEN_NO_PERF, &pcie[k].h))
		pcie[k].h = NULL;
	hwtel_pcie_data_free(pcie[k].d);
	pcie[k].d = pcie[k].h ? hwtel_pcie_data_new(pcie[k].h) : NULL;
}

/* (Re)open DDR PMU @k and give it a reading of its events; false if it failed */
static bool ddr_open(unsigned int k)
{
	if (hwtel_ddr_open(ddr[k].name, 0, ddr_events, &ddr[k].h))
		ddr[k].h = NULL;
	hwtel_ddr_data_free(ddr[k].d);
	ddr[k].d = ddr[k].h ? hwtel_ddr_data_new(ddr[k].h) : NULL;
	return ddr[k].h != NULL;
}

static void add_inst(unsigned int serial, const char *name, struct inst_ref r)
{
	struct inst_ref *p = NULL;
	int inst;

	if (pmdaCacheLookupName(indom(serial), name, &inst, (void **)&p) < 0 || !p) {
		p = malloc(sizeof(*p));
		if (!p)
			return;
	}
	*p = r;
	pmdaCacheStore(indom(serial), PMDA_CACHE_ADD, name, p);
}

/* Whether @name is one of the @n @names */
static bool listed(char **names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* @v (@n of *@cap elements of @size) with room for one more; NULL if none */
static void *grow(void *v, unsigned int n, unsigned int *cap, size_t size)
{
	void *nv;

	if (n < *cap)
		return v;
	nv = realloc(v, (size_t)(*cap ? 2 * *cap : 4) * size);
	if (nv)
		*cap = *cap ? 2 * *cap : 4;
	return nv;
}

/*
 * Open what appeared since the last refresh and drop what went away (PMUs
 * come and go with modules and cards). A dropped PMU's instances stay in
 * the cache, inactive, with their ids: they are never given to another
 * name, and come back if the PMU does (pmdaCache, saved across restarts).
 * Their references are set again at each refresh, so the table may be
 * compacted.
 */
static void open_devices(void)
{
	char **names = NULL;
	unsigned int k;
	void *nv;
	int n;

	n = hwtel_pmu_list(HWTEL_PCIE_PMU_PREFIX, &names);
	for (k = 0; n >= 0 && k < npcie;) {
		if (listed(names, n, pcie[k].name) &&
		    !(pcie[k].h && hwtel_pcie_vanished(pcie[k].h))) {
			k++;
			continue;
		}
		hwtel_pcie_close(pcie[k].h);
		hwtel_pcie_data_free(pcie[k].d);
		memmove(&pcie[k], &pcie[k + 1], (npcie - k - 1) * sizeof(pcie[0]));
		npcie--;
	}
	for (k = 0; n > 0 && k < (unsigned int)n; k++) {
		unsigned int j;

		for (j = 0; j < npcie; j++)
			if (!strcmp(pcie[j].name, names[k]))
				break;
		if (j < npcie || !(nv = grow(pcie, npcie, &pcie_cap, sizeof(pcie[0]))))
			continue;
		pcie = nv;
		memset(&pcie[npcie], 0, sizeof(pcie[0]));
		snprintf(pcie[npcie].name, sizeof(pcie[npcie].name), "%s", names[k]);
		npcie++;
	}
	hwtel_pmu_list_free(names);
	names = NULL;
	n = hwtel_pmu_list(HWTEL_DDR_PMU_PREFIX, &names);
	for (k = 0; n >= 0 && k < nddr;) {
		if (listed(names, n, ddr[k].name) &&
		    !(ddr[k].h && hwtel_ddr_vanished(ddr[k].h))) {
			k++;
			continue;
		}
		hwtel_ddr_close(ddr[k].h);
		hwtel_ddr_data_free(ddr[k].d);
		memmove(&ddr[k], &ddr[k + 1], (nddr - k - 1) * sizeof(ddr[0]));
		nddr--;
	}
	for (k = 0; n > 0 && k < (unsigned int)n; k++) {
		unsigned int j;

		for (j = 0; j < nddr; j++)
			if (!strcmp(ddr[j].name, names[k]))
				break;
		if (j < nddr || !(nv = grow(ddr, nddr, &ddr_cap, sizeof(ddr[0]))))
			continue;
		ddr = nv;
		memset(&ddr[nddr], 0, sizeof(ddr[0]));
		snprintf(ddr[nddr].name, sizeof(ddr[nddr].name), "%s", names[k]);
		nddr++;
	}
	hwtel_pmu_list_free(names);

	for (k = 0; k < npcie; k++) {
		if (pcie[k].h && hwtel_pcie_vanished(pcie[k].h)) {
			hwtel_pcie_close(pcie[k].h);
			pcie[k].h = NULL;
		}
		if (!pcie[k].h)
			pcie_open(k);
	}
	for (k = 0; k < nddr; k++) {
		if (ddr[k].h && hwtel_ddr_vanished(ddr[k].h)) {
			hwtel_ddr_close(ddr[k].h);
			ddr[k].h = NULL;
		}
		if (!ddr[k].h && !ddr_open(k))
			pmNotifyErr(LOG_WARNING, "%s: %s", ddr[k].name, hwtel_last_error());
	}
}

static void pcie_instances(unsigned int k)
{
	const struct hwtel_pcie_data *d = pcie[k].d;
	unsigned int e, b, i, h;
	char name[256], buf[32];

	add_inst(IND_DEV, d->pmu, (struct inst_ref){ .dev = k });
	for (e = 0; e < d->nendpoints; e++) {
		const struct hwtel_pcie_ep *ep = &d->endpoints[e];
		struct inst_ref r = { .dev = k, .ep = e };

		snprintf(name, sizeof(name), "%s/ep%u", d->pmu, e);
		add_inst(IND_EP, name, r);
		for (b = 0; b < ep->nbuses; b++) {
			const struct hwtel_pcie_bus *bus = &ep->buses[b];
			char tag[16];

			if (bus->kind == HWTEL_BUS_UP || bus->kind == HWTEL_BUS_DOWN)
				snprintf(tag, sizeof(tag), "%s%u", hwtel_pcie_bus_tag(bus->kind),
					 bus->port);
			else
				snprintf(tag, sizeof(tag), "%s", hwtel_pcie_bus_tag(bus->kind));
			r.bus = b;
			snprintf(name, sizeof(name), "%s/ep%u/%s", d->pmu, e, tag);
			add_inst(IND_BUS, name, r);
			for (i = 0; i < bus->nregions; i++) {
				r.idx = i;
				snprintf(name, sizeof(name), "%s/ep%u/%s/region%u", d->pmu, e, tag, i);
				add_inst(IND_REGION, name, r);
			}
		}
		r.bus = 0;
		for (i = 0; i <= ep->nbrakes; i++) {
			r.idx = i;
			snprintf(name, sizeof(name), "%s/ep%u/%s", d->pmu, e,
				 i < ep->nbrakes ? hwtel_pcie_brake_key(i, buf, sizeof(buf)) :
				 "endpoint_not_ready");
			add_inst(IND_STOP, name, r);
		}
		for (h = 0; h < ep->nhists; h++)
			for (i = 0; i < ep->nbands; i++) {
				r.hist = h;
				r.idx = i;
				if (h < 2)
					snprintf(name, sizeof(name), "%s/ep%u/%s/band%u", d->pmu, e,
						 h ? "stfifo" : "tags", i);
				else
					snprintf(name, sizeof(name), "%s/ep%u/resource%u/band%u",
						 d->pmu, e, h, i);
				add_inst(IND_BAND, name, r);
			}
	}
}

static void refresh(void)
{
	static bool save_failed;
	static time_t synced;
	unsigned int k, i;
	time_t now;
	bool sync;

	for (k = 0; k < NINDOMS; k++)
		pmdaCacheOp(indom(k), PMDA_CACHE_INACTIVE);
	open_devices();
	for (k = 0; k < npcie; k++) {
		pcie[k].ok = pcie[k].h && pcie[k].d &&
			     hwtel_pcie_read_totals(pcie[k].h, pcie[k].d) == 0;
		if (!pcie[k].ok && pcie[k].h && hwtel_pcie_vanished(pcie[k].h)) {
			/* the module was reloaded: a new instance of the same name */
			hwtel_pcie_close(pcie[k].h);
			pcie_open(k);
			pcie[k].ok = pcie[k].h && pcie[k].d &&
				     hwtel_pcie_read_totals(pcie[k].h, pcie[k].d) == 0;
		}
		if (pcie[k].ok)
			pcie_instances(k);
		else if (pcie[k].h)
			pmNotifyErr(LOG_WARNING, "%s: %s", pcie[k].name, hwtel_last_error());
	}
	for (k = 0; k < nddr; k++) {
		ddr[k].ok = ddr[k].h && ddr[k].d && hwtel_ddr_read(ddr[k].h, ddr[k].d) == 0;
		if (!ddr[k].ok && ddr[k].h && hwtel_ddr_vanished(ddr[k].h)) {
			hwtel_ddr_close(ddr[k].h);
			ddr_open(k);
			ddr[k].ok = ddr[k].h && ddr[k].d &&
				    hwtel_ddr_read(ddr[k].h, ddr[k].d) == 0;
		}
		if (!ddr[k].ok)
			continue;
		add_inst(IND_DDR, ddr[k].d->pmu, (struct inst_ref){ .dev = k });
		for (i = 0; i < ddr[k].d->nevents; i++) {
			char name[128];

			snprintf(name, sizeof(name), "%s/%s", ddr[k].d->pmu, ddr[k].d->events[i].name);
			add_inst(IND_DDREV, name, (struct inst_ref){ .dev = k, .idx = i });
		}
	}
	/*
	 * A name keeps its id across restarts, PCP's saved instance domain
	 * holding when each was last seen: a PMU that comes back within
	 * HWTEL_KEEP_SECONDS keeps its ids, the names of one gone for longer
	 * (a card moved to another slot, a changed firmware layout) are
	 * culled. The file is written when the set changed, and at most once
	 * an hour for the times alone (PMDA_CACHE_SYNC), not at every fetch.
	 */
	now = time(NULL);
	sync = now - synced >= HWTEL_SYNC_SECONDS;
	if (sync)
		synced = now;
	for (k = 0; k < NINDOMS; k++) {
		int ret;

		pmdaCachePurgeCallback(indom(k), HWTEL_KEEP_SECONDS, free);
		ret = pmdaCacheOp(indom(k), sync ? PMDA_CACHE_SYNC : PMDA_CACHE_SAVE);

		if (ret < 0 && !save_failed) {
			pmNotifyErr(LOG_WARNING, "saving instance domain %s: %s",
				    pmInDomStr(indom(k)), pmErrStr(ret));
			save_failed = true;
		}
	}
}

/* ---- callbacks ------------------------------------------------------- */

static int fetch_pcie(unsigned int cl, unsigned int item, const struct inst_ref *r,
		      pmAtomValue *atom)
{
	const struct hwtel_pcie_data *d;
	const struct hwtel_pcie_ep *ep;
	const struct hwtel_pcie_bus *bus;
	uint64_t sum = 0;
	unsigned int i;

	if (r->dev >= npcie || !pcie[r->dev].ok)
		return PMDA_FETCH_NOVALUES;
	d = pcie[r->dev].d;
	if (cl == CL_DEV) {
		const unsigned int v[] = { d->status.busy, d->status.lost_deltas,
					   d->status.readout_overrun, d->state_valid };

		atom->ul = v[item];
		return PMDA_FETCH_STATIC;
	}
	if (r->ep >= d->nendpoints)
		return PMDA_FETCH_NOVALUES;
	ep = &d->endpoints[r->ep];
	switch (cl) {
	case CL_EP:
		atom->ull = item ? ep->dma_cycles : ep->pcie_cycles;
		return PMDA_FETCH_STATIC;
	case CL_STATE: {
		const unsigned int v[] = { ep->link_up, ep->mps, ep->mrrs, ep->ext_tag,
					   ep->tag_10b, ep->rcb, ep->tags_free,
					   ep->tags_free_min, ep->stfifo_free,
					   ep->stfifo_free_min };

		if (!d->state_valid)
			return PMDA_FETCH_NOVALUES;
		atom->ul = v[item];
		return PMDA_FETCH_STATIC;
	}
	case CL_STOP:
		if (r->idx < ep->nbrakes) {
			atom->ull = ep->brakes[r->idx];
		} else {
			atom->ull = 0;
			for (i = 0; i < ep->nbuses; i++)
				if (ep->buses[i].kind == HWTEL_BUS_RQ)
					atom->ull = ep->buses[i].backpressure;
		}
		return PMDA_FETCH_STATIC;
	case CL_BAND:
		if (r->hist >= ep->nhists || r->idx >= ep->nbands)
			return PMDA_FETCH_NOVALUES;
		atom->ull = ep->hists[r->hist][r->idx];
		return PMDA_FETCH_STATIC;
	default:
		break;
	}
	if (r->bus >= ep->nbuses)
		return PMDA_FETCH_NOVALUES;
	bus = &ep->buses[r->bus];
	if (cl == CL_REGION) {
		if (r->idx >= bus->nregions)
			return PMDA_FETCH_NOVALUES;
		atom->ull = bus->regions[r->idx];
		return PMDA_FETCH_STATIC;
	}
	switch (item) {
	case 0: atom->ull = bus->words; break;
	case 1: atom->ull = bus->backpressure; break;
	case 2: atom->ull = bus->transactions; break;
	case 3:
		if (!bus->has_mvb)
			return PMDA_FETCH_NOVALUES;
		atom->ull = bus->mvb;
		break;
	case 4:
		if (!bus->has_mvb)
			return PMDA_FETCH_NOVALUES;
		atom->ull = bus->mvb_backpressure;
		break;
	case 5: atom->ull = bus->items; break;
	case 6:
	case 7: {
		struct hwtel_pcie_bus_metrics m;

		/* the library's bytes and requests (no interval: no rates) */
		hwtel_pcie_bus_metrics(d, ep, bus, 0, &m);
		atom->ull = item == 6 ? m.bytes : m.requests;
		break;
	}
	case 8: atom->ull = bus->pcie_clk ? ep->pcie_cycles : ep->dma_cycles; break;
	case 9:
		for (i = 0; i < bus->nregions; i++)
			sum += bus->regions[i];
		atom->ull = sum;
		break;
	case 10: atom->ul = bus->nregions; break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_ddr(unsigned int cl, unsigned int item, const struct inst_ref *r,
		     pmAtomValue *atom)
{
	const struct hwtel_ddr_data *d;
	double v;
	bool exact;

	if (r->dev >= nddr || !ddr[r->dev].ok)
		return PMDA_FETCH_NOVALUES;
	d = ddr[r->dev].d;
	if (cl == CL_DDR) {
		const uint64_t v4[] = { d->reads, d->writes, d->reads * HWTEL_DDR_BURST_BYTES,
					d->writes * HWTEL_DDR_BURST_BYTES };

		atom->ull = v4[item];
		return PMDA_FETCH_STATIC;
	}
	if (r->idx >= d->nevents || !hwtel_ddr_value(d, d->events[r->idx].name, &v, &exact))
		return PMDA_FETCH_NOVALUES;
	if (item == 0)
		atom->ull = (uint64_t)(v + 0.5);
	else
		atom->ul = exact;
	return PMDA_FETCH_STATIC;
}

static int hwtel_fetch_cb(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom)
{
	unsigned int cl = pmID_cluster(mdesc->m_desc.pmid);
	unsigned int item = pmID_item(mdesc->m_desc.pmid);
	struct inst_ref *r = NULL;

	if (mdesc->m_desc.indom == PM_INDOM_NULL ||
	    pmdaCacheLookup(mdesc->m_desc.indom, (int)inst, NULL, (void **)&r) != PMDA_CACHE_ACTIVE ||
	    !r)
		return PM_ERR_INST;
	if (cl == CL_DDR || cl == CL_DDREV)
		return fetch_ddr(cl, item, r, atom);
	return fetch_pcie(cl, item, r, atom);
}

static int hwtel_fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
	refresh();
	return pmdaFetch(numpmid, pmidlist, resp, pmda);
}

static int hwtel_instance(pmInDom in, int inst, char *name, pmInResult **result,
			  pmdaExt *pmda)
{
	refresh();
	return pmdaInstance(in, inst, name, result, pmda);
}

static const char *const indom_help[NINDOMS][2] = {
	{ "PCIe telemetry blocks", "One instance per ndk_pcie_tlm PMU, named after it." },
	{ "PCIe endpoints", "One instance per PCIe endpoint of a block: <pmu>/ep<N>." },
	{ "PCIe telemetry buses", "One instance per bus of an endpoint: <pmu>/ep<N>/RQ, RC,\n"
	  "UP<port> (DMA port -> PTC) and DOWN<port> (PTC -> DMA port)." },
	{ "MFB regions of the buses", "<pmu>/ep<N>/<bus>/region<R>." },
	{ "PTC stop reasons", "<pmu>/ep<N>/<reason>, see hwtel.pcie.stop.cycles." },
	{ "bands of free capacity", "<pmu>/ep<N>/tags|stfifo/band<B>, see hwtel.pcie.band.cycles." },
	{ "DDR controllers", "One instance per mrvl_ddr_pmu PMU, named after it." },
	{ "generic DDR events", "<pmu>/<event> for each generic DSS event counted." },
};

static int hwtel_text(int ident, int type, char **buffer, pmdaExt *pmda)
{
	unsigned int k;

	(void)pmda;
	if (type & PM_TEXT_INDOM) {
		for (k = 0; k < NINDOMS; k++)
			if (indom(k) == (pmInDom)ident) {
				*buffer = (char *)indom_help[k][(type & PM_TEXT_ONELINE) ? 0 : 1];
				return 0;
			}
		return PM_ERR_TEXT;
	}
	for (k = 0; k < NMETRICS; k++)
		if (metrictab[k].m_desc.pmid == (pmID)ident) {
			*buffer = (char *)((type & PM_TEXT_ONELINE) ? hm[k].oneline : hm[k].help);
			return 0;
		}
	return PM_ERR_TEXT;
}

static void hwtel_init(pmdaInterface *dp)
{
	unsigned int k;

	if (dp->status != 0)
		return;
	for (k = 0; k < NMETRICS; k++) {
		pmDesc *desc = &metrictab[k].m_desc;

		metrictab[k].m_user = NULL;
		desc->pmid = pmID_build(dp->domain, hm[k].cluster, hm[k].item);
		desc->type = (int)hm[k].type;
		desc->indom = hm[k].indom;	/* serial; pmdaInit() completes it */
		desc->sem = (int)hm[k].sem;
		desc->units = hm[k].units;
	}
	dp->version.seven.fetch = hwtel_fetch;
	dp->version.seven.instance = hwtel_instance;
	dp->version.seven.text = hwtel_text;
	pmdaSetFetchCallBack(dp, hwtel_fetch_cb);
	pmdaInit(dp, indomtab, NINDOMS, metrictab, NMETRICS);
	/* the ids of earlier runs ($PCP_VAR_DIR/config/pmda); none at first start */
	for (k = 0; k < NINDOMS; k++)
		pmdaCacheOp(indom(k), PMDA_CACHE_LOAD);
}

/* ---- main -------------------------------------------------------------- */

static pmLongOptions longopts[] = {
	PMDA_OPTIONS_HEADER("Options"),
	PMOPT_DEBUG,
	PMDAOPT_DOMAIN,
	PMDAOPT_LOGFILE,
	PMDAOPT_USERNAME,
	{ "events", 1, 'e', "LIST", "generic DDR events to count (default: the report's)" },
	{ "pmns", 0, 'N', 0, "print the PMNS (pmns file) of the agent and exit" },
	PMOPT_HELP,
	PMDA_OPTIONS_END
};

static pmdaOptions opts = {
	.short_options = "D:d:e:l:NU:?",
	.long_options = longopts,
};

/* The pmns file of the Install script, from the same table (one truth). */
static void print_pmns(void)
{
	const char *groups[] = { "pcie", "pcie.ep", "pcie.bus", "pcie.region", "pcie.stop",
				 "pcie.band", "pcie.device", "ddr", "ddr.event" };
	unsigned int g, k;

	printf("hwtel {\n\tpcie\n\tddr\n}\n");
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		size_t len = strlen(groups[g]);

		printf("\nhwtel.%s {\n", groups[g]);
		if (!strcmp(groups[g], "pcie"))
			printf("\tep\n\tbus\n\tregion\n\tstop\n\tband\n\tdevice\n");
		if (!strcmp(groups[g], "ddr"))
			printf("\tevent\n");
		for (k = 0; k < NMETRICS; k++)
			if (!strncmp(hm[k].name, groups[g], len) && hm[k].name[len] == '.' &&
			    !strchr(hm[k].name + len + 1, '.'))
				printf("\t%-20s HWTEL:%u:%u\n", hm[k].name + len + 1,
				       hm[k].cluster, hm[k].item);
		printf("}\n");
	}
}

int main(int argc, char **argv)
{
	pmdaInterface dispatch;
	int c;

	pmSetProgname(argv[0]);
	pmdaDaemon(&dispatch, PMDA_INTERFACE_7, pmGetProgname(), HWTEL, "hwtel.log", NULL);
	while ((c = pmdaGetOptions(argc, argv, &opts, &dispatch)) != EOF) {
		switch (c) {
		case 'e':
			ddr_events = opts.optarg;
			break;
		case 'N':
			print_pmns();
			return 0;
		default:
			opts.errors++;
			break;
		}
	}
	if (opts.errors) {
		pmdaUsageMessage(&opts);
		return 1;
	}
	if (opts.username)
		pmSetProcessIdentity(opts.username);
	pmdaOpenLog(&dispatch);
	hwtel_init(&dispatch);
	pmdaConnect(&dispatch);
	pmdaMain(&dispatch);
	return 0;
}
