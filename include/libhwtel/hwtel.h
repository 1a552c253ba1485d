/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libhwtel - reports of the hwtel PMUs (NDK PCIe telemetry, Marvell DSS DDR)
 *
 * The library reads the PMUs through perf_event_open (libperf), one event
 * group per PCIe endpoint or DDR controller so that the members of a group
 * come from one snapshot, and the PCIe control plane (state, flags, clear,
 * totals) through the ndk_pcie_tlm generic netlink family (libnl-genl-3).
 *
 * Readings are allocated by the library, sized to the block's layout
 * (hwtel_pcie_data_new(), hwtel_ddr_data_new()): read twice, diff, format.
 * A struct the library allocates is never declared, embedded or copied by
 * value by the caller, and its fields are only ever appended: that is what
 * lets the layouts and the structs grow without a new SONAME.
 * Every function that can fail returns 0 or a negative errno and leaves a
 * human readable explanation in hwtel_last_error().
 *
 * Documentation/userspace-api/hwtel.rst describes the API, the JSON schema
 * and every formula.
 */
#ifndef _LIBHWTEL_HWTEL_H
#define _LIBHWTEL_HWTEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWTEL_VERSION "1.0"

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/* Explanation of this thread's last failure. Every function that can fail
 * clears it on entry, so after a failure it explains that call, or is ""
 * when the returned errno says all (strerror() then); never older text.
 */
const char *hwtel_last_error(void);

/* Root of sysfs (default "/sys", or $HWTEL_SYSFS, which is ignored in a
 * setuid, setgid or file-capability program: secure_getenv()); tests point
 * it at a fixture tree. The string is copied.
 */
void hwtel_set_sysfs_root(const char *root);
const char *hwtel_sysfs_root(void);

/* ------------------------------------------------------------------ */
/* Generic PMU access: sysfs format/ and events/ -> perf_event_attr    */
/* ------------------------------------------------------------------ */

struct perf_event_attr;

/*
 * Bits of a perf config word (config, config1, config2 are __u64): a
 * format field has at most that many, whatever the PMU. Not a limit that
 * grows.
 */
#define HWTEL_CONFIG_WORD_BITS	64

/* One format/ field: "config:8-15", "config1:0-3", "config:0-3,8-11" */
struct hwtel_format {
	char name[32];
	unsigned int word;		/* 0 config, 1 config1, 2 config2 */
	unsigned int nbits;		/* bits of the field, LSB first */
	unsigned char bits[HWTEL_CONFIG_WORD_BITS];
};

/* Parse one format/ file content. */
int hwtel_format_parse(const char *name, const char *text,
		       struct hwtel_format *fmt);

/*
 * A PMU of sysfs (opaque: its format fields and the events/ definitions
 * read so far are the library's and grow as needed). Open loads type,
 * cpumask and format/ of PMU @name (a sysfs PMU name): 0 or a negative
 * errno (-ENOENT no such PMU, -EINVAL a bad name), *@out NULL on failure.
 */
struct hwtel_pmu;
int hwtel_pmu_open(const char *name, struct hwtel_pmu **out);
void hwtel_pmu_close(struct hwtel_pmu *pmu);
const char *hwtel_pmu_name(const struct hwtel_pmu *pmu);
/* sysfs directory of the PMU */
const char *hwtel_pmu_path(const struct hwtel_pmu *pmu);
/* perf_event_attr.type */
uint32_t hwtel_pmu_type(const struct hwtel_pmu *pmu);
/* first CPU of its cpumask, -1 if none */
int hwtel_pmu_cpu(const struct hwtel_pmu *pmu);
/*
 * Fill @attr for the event @spec of @pmu: "name" (a file of events/),
 * "name,term=value,..." (terms fill the name's "=?" parameters or override
 * it) or plain terms "kind=3,ep=0". Numbers are decimal or 0x hex. A "=?"
 * left unset, an unknown term or a value too wide for its field: -EINVAL.
 * The caller sets @attr->size to its sizeof(struct perf_event_attr) first,
 * as for perf_event_open(2); exactly that many bytes are cleared, then
 * type, config, config1 and config2 set, size kept. A size under
 * PERF_ATTR_SIZE_VER1 (72) or over 4096: -EINVAL, @attr untouched.
 */
int hwtel_pmu_event_attr(const struct hwtel_pmu *pmu, const char *spec,
			 struct perf_event_attr *attr);
/* Names of the PMUs whose name starts with @prefix, sorted. Returns the
 * count or a negative errno; *names is a NULL-terminated array of that
 * many strings (NULL on failure), freed with hwtel_pmu_list_free().
 */
int hwtel_pmu_list(const char *prefix, char ***names);
void hwtel_pmu_list_free(char **names);
/* Read a small sysfs attribute of @pmu (relative path) into @buf, NUL
 * terminated, its trailing newline stripped. Returns its length or a
 * negative errno, @buf then "": -EFBIG when it does not fit in @size - 1
 * bytes (never a cut value).
 */
int hwtel_pmu_read_attr(const struct hwtel_pmu *pmu, const char *rel,
			char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* PCIe telemetry (ndk_pcie_tlm_<base>)                                */
/* ------------------------------------------------------------------ */

#define HWTEL_PCIE_PMU_PREFIX	"ndk_pcie_tlm_"
#define HWTEL_PCIE_MODULE	"ndk_pcie_tlm"

enum hwtel_bus_kind {
	HWTEL_BUS_RQ,		/* PTC -> PCIe */
	HWTEL_BUS_RC,		/* PCIe -> PTC */
	HWTEL_BUS_UP,		/* DMA port -> PTC */
	HWTEL_BUS_DOWN,		/* PTC -> DMA port */
};

/* Layout of the block ("config" of the reference tool's JSON plus the rest
 * of caps/).
 */
struct hwtel_pcie_config {
	unsigned int pcie_endpoints;
	unsigned int dma_ports;
	unsigned int probe_pcie_regions;
	unsigned int probe_dma_regions;
	unsigned int counter_width;
	unsigned int item_bytes;
	unsigned int drain_period;
	unsigned int hist_bands;
	unsigned int tag_capacity;
	unsigned int stfifo_capacity;
	/* not in the reference JSON "config" */
	unsigned int entries;
	unsigned int counters_per_ep;
	unsigned int pcie_channels;
	unsigned int pcie_buses;
	unsigned int dma_channels;
	unsigned int dma_buses;
	unsigned int brake_channels;
	unsigned int hist_pcie;
	unsigned int hist_dma;
	unsigned int regions[4];	/* real regions, by enum hwtel_bus_kind */
	unsigned int region_bytes[4];
};

struct hwtel_pcie_bus {
	char name[32];			/* "PTC -> PCIe (RQ)", "DMA0 -> PTC (UP)" */
	enum hwtel_bus_kind kind;
	unsigned int port;		/* DMA port of UP/DOWN */
	unsigned int bus;		/* bus index within the endpoint */
	uint64_t words;			/* cycles a word moved */
	uint64_t backpressure;		/* MFB stall cycles */
	uint64_t transactions;		/* frames (SOF) */
	uint64_t mvb;			/* MVB items */
	uint64_t mvb_backpressure;	/* MVB stall cycles */
	uint64_t items;			/* MFB items */
	unsigned int nregions;
	uint64_t *regions;		/* [nregions] */
	unsigned int region_bytes;
	bool pcie_clk, has_mvb, dma_up;
};

struct hwtel_pcie_ep {
	unsigned int index;
	/* state from the control plane (gauges are not differenced) */
	bool link_up;
	unsigned int mps, mrrs;
	bool ext_tag, tag_10b;
	unsigned int rcb;
	unsigned int tags_free, tags_free_min;
	unsigned int stfifo_free, stfifo_free_min;
	/* counters */
	uint64_t pcie_cycles, dma_cycles;
	unsigned int nbrakes;
	uint64_t *brakes;		/* [nbrakes] */
	unsigned int nhists, nbands;
	uint64_t **hists;		/* [nhists][nbands] */
	unsigned int nbuses;
	struct hwtel_pcie_bus *buses;	/* [nbuses] */
};

struct hwtel_pcie_status {
	bool busy;
	bool lost_deltas;
	bool readout_overrun;
};

/*
 * A reading. Allocated by the library only (hwtel_pcie_data_new()), with
 * every array sized to the block's layout: never declared, embedded or
 * copied by value by the caller (hwtel_pcie_data_copy()); fields are only
 * ever appended. The pointers and counts describe the layout: the caller
 * changes the values, never them.
 */
struct hwtel_pcie_data {
	const char *pmu;
	struct hwtel_pcie_config config;
	struct hwtel_pcie_status status;
	bool state_valid;		/* endpoint state, gauges and status
					 * flags came from the control plane;
					 * false: not read (unknown)
					 */
	uint64_t timestamp_ns;		/* CLOCK_MONOTONIC of the snapshot:
					 * the driver's time of endpoint 0's
					 * copy (its snapshot_ns event) or,
					 * without that event, the middle of
					 * the group reads (totals: the
					 * driver's snapshot time)
					 */
	uint64_t perf_time_ns;		/* endpoint 0 group's time: its
					 * snapshot_ns count or, without that
					 * event, perf time_enabled (perf's
					 * clock, local_clock(), not
					 * NTP-disciplined); 0 for totals.
					 * Equal in two readings: one copy.
					 */
	unsigned int nendpoints;
	struct hwtel_pcie_ep *endpoints;	/* [nendpoints] */
};

struct hwtel_pcie;

/*
 * Open a PCIe telemetry instance. @device selects it (NULL or "" = the
 * @index-th instance, sorted by MMIO base):
 *   - a PMU name                 "ndk_pcie_tlm_3fff00000000"
 *   - its sysfs directory        "/sys/bus/event_source/devices/ndk_pcie_tlm_..."
 *   - its MMIO base              "0x3fff00000000"
 *   - an instance number         "1"
 *   - an NFB device path         "/dev/nfb1", "/dev/nfb/1" (instance 1; the
 *                                 reference tool's -d argument)
 * @flags: HWTEL_OPEN_* bits. Errors: -ENOENT no such PMU (module not
 * loaded), -EACCES/-EPERM perf permissions, -EINVAL layout mismatch.
 */
#define HWTEL_OPEN_NO_PERF	(1u << 0)	/* control plane only (totals, clear) */
#define HWTEL_OPEN_NO_NETLINK	(1u << 1)	/* perf only, state not read */
/*
 * The state is optional: when the control plane refuses EP_GET for want of
 * privilege (CAP_PERFMON or CAP_SYS_ADMIN; EPERM/EACCES),
 * hwtel_pcie_read() returns the counters with state_valid false (link
 * state, gauges and STATUS flags unknown) instead of failing, and does not
 * ask again on this handle. Totals and clearing still fail with -EACCES.
 */
#define HWTEL_OPEN_STATE_OPTIONAL	(1u << 2)
/*
 * Only the STATUS flags are wanted with each hwtel_pcie_read() (a
 * recorder): where the PMU's sysfs "flags" can be read (root, a driver
 * that has it) they come from there, one pread() and no netlink request,
 * and state_valid then says the flags are known while the endpoint state
 * and gauges stay zero; otherwise EP_GET serves as without this flag.
 */
#define HWTEL_OPEN_FLAGS_ONLY		(1u << 3)
int hwtel_pcie_open(const char *device, unsigned int index, unsigned int flags,
		    struct hwtel_pcie **out);
void hwtel_pcie_close(struct hwtel_pcie *h);
const char *hwtel_pcie_name(const struct hwtel_pcie *h);
const struct hwtel_pcie_config *hwtel_pcie_config(const struct hwtel_pcie *h);

/*
 * A reading with the layout of @h's block (a later read, totals, copy or
 * diff fills it), or of @cfg for data made up by a program or a test
 * (@pmu names it; NULL: ""). NULL on failure (errno ENOMEM, or E2BIG
 * for a layout too large to allocate: hwtel_last_error() says which).
 * Free it with hwtel_pcie_data_free() (NULL is a no-op).
 */
struct hwtel_pcie_data *hwtel_pcie_data_new(const struct hwtel_pcie *h);
struct hwtel_pcie_data *hwtel_pcie_data_new_config(const char *pmu,
						   const struct hwtel_pcie_config *cfg);
void hwtel_pcie_data_free(struct hwtel_pcie_data *d);

/* Counters from one perf group read per endpoint (since the events were
 * opened), plus state and flags from the control plane. @out is a reading
 * of @h's layout (-EINVAL otherwise).
 */
int hwtel_pcie_read(struct hwtel_pcie *h, struct hwtel_pcie_data *out);
/* Every counter since the last clear, from the control plane (one SNAPSHOT). */
int hwtel_pcie_read_totals(struct hwtel_pcie *h, struct hwtel_pcie_data *out);
/* Seconds between two readings (wall time, CLOCK_MONOTONIC, of the two
 * snapshots).
 */
double hwtel_pcie_seconds(const struct hwtel_pcie_data *new_,
			  const struct hwtel_pcie_data *old);
/* out = new - old, counter by counter (modulo 2^64); gauges, state and flags
 * come from @new. @out may alias @new. The three readings have one layout:
 * otherwise -EINVAL and @out untouched.
 */
int hwtel_pcie_diff(const struct hwtel_pcie_data *new_,
		    const struct hwtel_pcie_data *old,
		    struct hwtel_pcie_data *out);

#define HWTEL_CLEAR_COUNTERS	(1u << 0)
#define HWTEL_CLEAR_FLAGS	(1u << 1)
#define HWTEL_CLEAR_MARKS	(1u << 2)
#define HWTEL_CLEAR_ALL		7u
int hwtel_pcie_clear(struct hwtel_pcie *h, unsigned int what);
int hwtel_pcie_status(struct hwtel_pcie *h, struct hwtel_pcie_status *st);
/* Non-zero once the PMU has gone (module unloaded, device removed). */
bool hwtel_pcie_vanished(struct hwtel_pcie *h);

/* Copy reading @src into @dst, a reading of the same layout (-EINVAL
 * otherwise, @dst untouched); the PMU name too.
 */
int hwtel_pcie_data_copy(struct hwtel_pcie_data *dst,
			 const struct hwtel_pcie_data *src);

/*
 * Formatters. @seconds > 0: the reading is a difference over that many
 * seconds; @seconds <= 0: totals since the last clear (no rates).
 * Text is the reference tool's report, byte for byte.
 */
int hwtel_pcie_format_text(FILE *f, const struct hwtel_pcie_data *d,
			   double seconds);
/* {"seconds": s|null, "data": <reference shape>, "derived": {...},
 *  "hwtel": {...}}
 */
int hwtel_pcie_format_json(FILE *f, const struct hwtel_pcie_data *d,
			   double seconds);
/* perf stat -x style: value SEP unit SEP name SEP run-ns SEP run-% */
int hwtel_pcie_format_csv(FILE *f, const struct hwtel_pcie_data *d,
			  double seconds, const char *sep);
/* node_exporter textfile format. @cum holds monotonic totals (counters),
 * @d the last interval (rate gauges; may be NULL).
 */
int hwtel_pcie_format_prom(FILE *f, const struct hwtel_pcie_data *cum,
			   const struct hwtel_pcie_data *d, double seconds);

/* Derived metrics of one bus; NaN where undefined (no cycles, no frames,
 * no interval). A region's share of the cycles is
 * hwtel_pcie_region_pct(): the struct has no per-region array, so it does
 * not depend on the layout (and the caller may declare it).
 */
struct hwtel_pcie_bus_metrics {
	double used_pct, words_pct, mfb_stall_pct, mvb_stall_pct;
	double gbps, mpps, rd_pct, avg_bytes;
	uint64_t requests, bytes;
};
void hwtel_pcie_bus_metrics(const struct hwtel_pcie_data *d,
			    const struct hwtel_pcie_ep *ep,
			    const struct hwtel_pcie_bus *bus, double seconds,
			    struct hwtel_pcie_bus_metrics *m);
/* Percentage of the bus's clock cycles region @r was in use (NaN: no
 * cycles, or @r >= bus->nregions).
 */
double hwtel_pcie_region_pct(const struct hwtel_pcie_ep *ep,
			     const struct hwtel_pcie_bus *bus, unsigned int r);
/* Name and stream ("UP"/"DOWN") of stop reason @k ("reason <k>" if unknown). */
const char *hwtel_pcie_brake_name(unsigned int k, const char **stream,
				  char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Marvell DSS DDR PMU (mrvl_ddr_pmu_<base>)                           */
/* ------------------------------------------------------------------ */

#define HWTEL_DDR_PMU_PREFIX	"mrvl_ddr_pmu_"
#define HWTEL_DDR_MODULE	"marvell_cn10k_ddr_pmu"
#define HWTEL_DDR_GENERIC	8	/* generic counters of a DSS */
#define HWTEL_DDR_BURST_BYTES	64

struct hwtel_ddr_event {
	char name[48];			/* sysfs event name */
	unsigned int group;		/* counter group it was read in */
	uint64_t value;			/* raw count (not scaled) */
	uint64_t enabled, running;	/* ns, of its group */
};

/*
 * A reading of one DSS PMU. Allocated by the library only
 * (hwtel_ddr_data_new()), with room for the events of its handle: never
 * declared, embedded or copied by value by the caller
 * (hwtel_ddr_data_copy()); fields are only ever appended. nevents and the
 * events pointer are the layout: the caller changes values, never them.
 */
struct hwtel_ddr_data {
	const char *pmu;
	const char *identifier;		/* sysfs identifier (variant) */
	uint64_t reads, writes;		/* fixed counters: 64-byte bursts */
	uint64_t fixed_enabled, fixed_running;
	unsigned int ngroups;
	unsigned int nevents;
	struct hwtel_ddr_event *events;	/* [nevents] */
	uint64_t timestamp_ns;
};

struct hwtel_ddr;

/* @device: PMU name, sysfs directory, MMIO base, instance number or NULL
 * (the @index-th). @events: comma separated generic event names to count
 * (NULL: every event of the report the variant has). At most 8 generic
 * events are counted exactly; more are spread over groups that perf
 * multiplexes, and their values are scaled estimates (marked as such).
 */
int hwtel_ddr_open(const char *device, unsigned int index, const char *events,
		   struct hwtel_ddr **out);
void hwtel_ddr_close(struct hwtel_ddr *h);
const char *hwtel_ddr_name(const struct hwtel_ddr *h);
/*
 * A reading with room for @h's events (hwtel_ddr_read() fills it), or of
 * @nevents events named by the caller for made-up data (@pmu and
 * @identifier are copied; NULL: ""). NULL with errno ENOMEM on failure.
 * Free with hwtel_ddr_data_free() (NULL is a no-op).
 */
struct hwtel_ddr_data *hwtel_ddr_data_new(const struct hwtel_ddr *h);
struct hwtel_ddr_data *hwtel_ddr_data_new_events(const char *pmu, const char *identifier,
						 unsigned int nevents);
void hwtel_ddr_data_free(struct hwtel_ddr_data *d);
/* @dst = @src, two readings of one layout (-EINVAL otherwise, @dst untouched) */
int hwtel_ddr_data_copy(struct hwtel_ddr_data *dst, const struct hwtel_ddr_data *src);
/* @out: a reading of @h's layout (-EINVAL otherwise) */
int hwtel_ddr_read(struct hwtel_ddr *h, struct hwtel_ddr_data *out);
/* out = new - old (modulo 2^64); @out may alias @new. One layout for all
 * three, else -EINVAL and @out untouched.
 */
int hwtel_ddr_diff(const struct hwtel_ddr_data *new_,
		   const struct hwtel_ddr_data *old,
		   struct hwtel_ddr_data *out);
bool hwtel_ddr_vanished(struct hwtel_ddr *h);

/* Value of event @name: scaled by enabled/running when it was multiplexed.
 * Returns false if the event was not counted. *exact tells whether the
 * value is an exact count.
 */
bool hwtel_ddr_value(const struct hwtel_ddr_data *d, const char *name,
		     double *value, bool *exact);

int hwtel_ddr_format_text(FILE *f, const struct hwtel_ddr_data *d,
			  double seconds);
/* JSON and Prometheus take all @n PMUs of one report (@d[0..n-1]). */
int hwtel_ddr_format_json(FILE *f, const struct hwtel_ddr_data *const *d,
			  unsigned int n, double seconds);
int hwtel_ddr_format_csv(FILE *f, const struct hwtel_ddr_data *d,
			 double seconds, const char *sep);
int hwtel_ddr_format_prom(FILE *f, const struct hwtel_ddr_data *const *cum,
			  const struct hwtel_ddr_data *const *d, unsigned int n,
			  double seconds);

/* One-line description of a DDR event name (NULL if unknown). */
const char *hwtel_ddr_event_desc(const char *name);
/* One-line description of a PCIe event kind name (NULL if unknown). */
const char *hwtel_pcie_event_desc(const char *name);

/* ------------------------------------------------------------------ */
/* Misc                                                               */
/* ------------------------------------------------------------------ */

/* Write @text to @path: a regular file (or one a symbolic link names) is
 * replaced atomically (temp file in the same directory, fsync, rename,
 * directory fsync), keeping its permission bits and, where allowed, its
 * owner; a device, FIFO or other non-regular target is written in place,
 * never replaced; a path naming one of the process's own descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written to that descriptor
 * at its offset; a dangling link is refused (-ENOENT). Used for -o and
 * --prometheus. A signal whose handler was installed without SA_RESTART
 * ends an open or write blocked on a FIFO or pipe: -EINTR.
 */
int hwtel_write_atomic(const char *path, const char *text, size_t len);
/* CLOCK_MONOTONIC in ns. */
uint64_t hwtel_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* _LIBHWTEL_HWTEL_H */
