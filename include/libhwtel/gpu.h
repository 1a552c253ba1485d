/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libhwtel GPU power attribution: the Mali Utgard internal-profiling event
 * stream (debugfs mali/profiling/events), pairing of job START/STOP events,
 * DVFS tracking and pseudo-energy per process.
 *
 * Units (Documentation/userspace-api/hwtel.rst, "GPU power attribution"):
 *   frequency  MHz    (d0 of GPU_FREQ and FREQ_VOLT_CHANGE; a value of
 *                     100000 or more is Hz)
 *   voltage    mV     (d0 of GPU_VOLTS, d1 of FREQ_VOLT_CHANGE; 100000 or
 *                     more is uV)
 *   time       ns     (event timestamps, UNIX time)
 *   power      PW     pseudo-watt: P = C V^2 f with C = 1 / 266e6 PF, so one
 *                     unit busy at 266 MHz and 1 V draws 1 PW
 *   energy     PJ     pseudo-joule = PW x s; reported in micro-PJ (uPJ)
 *
 * Energy is accumulated exactly as an integer in uV^2 x Hz x ns; in
 * mV^2 x MHz x ns, 1 uPJ = HWTEL_GPU_UPJ_RAW (266 MHz x 1000^2 mV^2 x 1e9 ns / 1e6).
 */
#ifndef _LIBHWTEL_GPU_H
#define _LIBHWTEL_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Event id fields */
#define HWTEL_GPU_ID_TYPE(id)		(((id) >> 24) & 0xfu)
#define HWTEL_GPU_ID_CHANNEL(id)	(((id) >> 16) & 0xffu)
#define HWTEL_GPU_ID_DATA(id)		((id) & 0xffffu)
#define HWTEL_GPU_ID(type, ch, data)	(((uint32_t)(type) << 24) | \
					 ((uint32_t)(ch) << 16) | (uint32_t)(data))

enum hwtel_gpu_type {
	HWTEL_GPU_SINGLE = 0,
	HWTEL_GPU_START = 1,
	HWTEL_GPU_STOP = 2,
	HWTEL_GPU_SUSPEND = 3,
	HWTEL_GPU_RESUME = 4,
};

enum hwtel_gpu_channel {
	HWTEL_GPU_CH_SOFTWARE = 0,
	HWTEL_GPU_CH_GP0 = 1,
	HWTEL_GPU_CH_PP0 = 5,		/* PP0..PP7 = 5..12 */
	HWTEL_GPU_CH_GPU = 21,
};

/* SINGLE data values used for DVFS */
#define HWTEL_GPU_SW_FREQ		4	/* SOFTWARE: d0 = MHz */
#define HWTEL_GPU_SW_VOLTS		5	/* SOFTWARE: d0 = mV */
#define HWTEL_GPU_GPU_FREQ_VOLT		10	/* GPU: d0 = MHz, d1 = mV */

/*
 * The units of a Mali Utgard: index 0 = GP0, 1..8 = PP0..PP7 (one
 * geometry processor and up to eight pixel processors: the architecture's
 * own limit, the channels of its profiling stream). A report's units are
 * these for the Mali source, the engines seen for the DRM source (any
 * number): see struct hwtel_gpu_report's nunits.
 */
#define HWTEL_GPU_MALI_UNITS		9
#define HWTEL_GPU_REF_MHZ		266u
#define HWTEL_GPU_REF_MV		1000u
/* mV^2 x MHz x ns in one micro-pseudo-joule */
#define HWTEL_GPU_UPJ_RAW		(266ull * 1000000ull * 1000ull)

const char *hwtel_gpu_unit_name(unsigned int unit);
/* Unit index of a channel, or -1 for a channel that runs no jobs. */
int hwtel_gpu_channel_unit(unsigned int channel);

struct hwtel_gpu_event {
	uint64_t ts_ns;
	uint32_t id;
	uint32_t d[5];
	unsigned long line;		/* line number in the stream, from 1 */
};

/*
 * Parse one line (without its newline) of the events file. Returns 0, or
 * -EINVAL with the reason in @why for a malformed line: not exactly seven
 * decimal numbers, a number out of range (timestamp 64 bits, the others 32
 * bits), or reserved event id bits 31-28 set.
 */
int hwtel_gpu_parse_line(const char *s, struct hwtel_gpu_event *ev,
			 char *why, size_t whylen);

struct hwtel_gpu_opp {
	uint32_t mhz;
	uint32_t mv;
};

/*
 * Read an operating-point table: one "MHZ MV" pair per line, '#' comments.
 * Returns the number of entries (in a malloc'ed *@out) or a negative errno.
 */
int hwtel_gpu_opp_load(const char *path, struct hwtel_gpu_opp **out);

/* One process (one life of a PID) and its GPU use in the interval */
struct hwtel_gpu_consumer {
	int pid;
	/* 0, 1, ... for the successive lives of a reused PID that the library
	 * keeps at once; 0 again once none is kept (see "Process lives in
	 * memory" in Documentation/userspace-api/hwtel.rst) */
	unsigned int life;
	char comm[32];			/* "" when unknown */
	char cmdline[256];
	uint64_t *busy_ns;		/* [nunits of the report] */
	uint64_t *jobs;			/* [nunits]: jobs that started in the interval */
	uint64_t busy_total_ns;
	uint64_t unpriced_ns;		/* busy time while the operating point was unknown */
	uint64_t energy_upj;		/* micro-PJ at known operating points, rounded */
	double energy_pj;
	double mean_pw;			/* energy_pj / interval seconds */
	double share;			/* of the attributed GPU energy, 0..1 */
};

struct hwtel_gpu_report {
	uint64_t t0_ns, t1_ns;		/* interval, UNIX ns */
	double seconds;
	unsigned int nconsumers;
	struct hwtel_gpu_consumer *consumers;	/* sorted by energy, descending */
	/* units (engines): Mali GP0, PP0..PP7; DRM the engines seen, in order */
	unsigned int nunits;
	const char *const *unit_names;	/* [nunits] */
	uint64_t *busy_ns;		/* [nunits] */
	uint64_t *jobs;			/* [nunits] */
	uint64_t energy_upj;		/* GPU total at known operating points */
	double energy_pj;
	double mean_pw;
	/* jobs' time before the first known operating point (never dropped):
	 * its energy is estimated at the first operating point that became
	 * known later, and not included in any process's energy or share
	 */
	uint64_t unattributed_ns;
	uint64_t unattributed_upj;
	bool unattributed_priced;	/* false: no operating point known at all */
	bool opp_known;			/* an operating point is known at t1 */
	struct hwtel_gpu_opp opp;	/* the one at t1 */
	/* diagnostics counts in the interval */
	unsigned long lines, malformed, out_of_order, stop_without_start,
		      start_while_running, open_at_end, ignored, dvfs_changes;
	/* Appended for the DRM source (--source drm); zero for Mali. */
	const char *source;		/* "mali" or "drm" (NULL: "mali") */
	uint64_t estimated_ns;		/* busy time priced by the proportional rule */
	uint64_t bound_upj;		/* bound of that estimate's error */
	unsigned long clients;		/* DRM clients (open files) seen */
	unsigned long clients_lost;	/* closed before a final read: usage lost */
	unsigned long fdinfo_malformed;	/* fdinfo lines diagnosed and skipped */
	/*
	 * Appended for events the Mali stream lost (zero for DRM): jobs
	 * running at a record gap (the end of an interval) whose STOP did not
	 * come after it; each was closed at the gap, and the time it stayed
	 * open after the gap (per unit) is not billed to anyone.
	 */
	unsigned long lost_stops;
	uint64_t *unbilled_ns;		/* [nunits] */
	/* STOPs that were the first event of an idle unit after a record gap:
	 * their START was lost (in the gap, or past the driver's buffer) */
	unsigned long lost_starts;
	/* Appended: recordings that filled the driver's buffer (their events
	 * past it were dropped); see hwtel_gpu_set_buffer_events() */
	unsigned long overflows;
	uint64_t overflow_ns;		/* their time after the last recorded event */
	/* Appended: busy time priced with a value carried over from before a
	 * lone frequency or voltage event (the other value not given by the
	 * event, its partner or the OPP table) */
	uint64_t carried_ns;
	/* Appended: the operating point at t1 exactly (opp is rounded to MHz, mV) */
	uint64_t opp_hz, opp_uv;
	/*
	 * Appended: in the cumulative report only (else 0 and NULL), the
	 * process lives that ended and were reported, summed per name (comm,
	 * "" when unknown), in name order. Such a life is in @consumers up to
	 * the report of the interval in which it ended (Mali: or in which its
	 * last job's STOP came; DRM: or in which its last client was read),
	 * then in @exited: pid 0, life the number of lives summed, cmdline "",
	 * energy_upj the sum of the lives' rounded energies. See "Process
	 * lives in memory" and "The DRM source" in
	 * Documentation/userspace-api/hwtel.rst.
	 */
	unsigned int nexited;
	struct hwtel_gpu_consumer *exited;
};

struct hwtel_gpu;

struct hwtel_gpu *hwtel_gpu_new(void);
void hwtel_gpu_free(struct hwtel_gpu *g);
/* Operating-point table: a lone frequency or voltage event determines the
 * other value from it (see the DVFS rules). The table is copied.
 */
int hwtel_gpu_set_opp_table(struct hwtel_gpu *g, const struct hwtel_gpu_opp *t,
			    unsigned int n);
/* Operating point before the first DVFS event (--initial-opp). */
void hwtel_gpu_set_initial_opp(struct hwtel_gpu *g, uint32_t mhz, uint32_t mv);
/*
 * A life of a process: PID @pid existed from @start_ns (0: before the
 * capture) to @end_ns (UINT64_MAX: still alive), UNIX ns, with that name
 * and command line. Jobs of a PID are attributed to the life that contains
 * their START; two lives of a PID are two consumers (PID reuse). A life
 * that ended by the end of an interval is freed after that interval's
 * reports (its figures summed per name, the report's exited): hand each
 * life once it ended, not again after.
 */
int hwtel_gpu_add_life(struct hwtel_gpu *g, int pid, uint64_t start_ns,
		       uint64_t end_ns, const char *comm, const char *cmdline);
/*
 * The number of events the driver's profiling buffer holds (the Mali
 * driver's limit; 0: unknown, the default). A recording of that many lines
 * or more filled it: the driver dropped what came after, so the recording
 * is known only up to its last event. See hwtel_gpu_interval().
 */
void hwtel_gpu_set_buffer_events(struct hwtel_gpu *g, unsigned long n);
/* Diagnostics go to @f (NULL: none), one line each, prefixed @prefix. */
void hwtel_gpu_set_diag(struct hwtel_gpu *g, FILE *f, const char *prefix);
/* Start of the first interval (UNIX ns). */
void hwtel_gpu_begin(struct hwtel_gpu *g, uint64_t t0_ns);
/*
 * Parse the text of the events file read after one recording period
 * (any number of lines; line numbers continue over calls; a last line
 * without its newline is parsed too). Malformed lines are reported and
 * skipped. Returns 0 or -ENOMEM.
 */
int hwtel_gpu_feed(struct hwtel_gpu *g, const char *buf, size_t len);
/*
 * Attribute the events fed since the last call (sorted by timestamp, ties
 * in stream order) and close the interval at @t1_ns: jobs still running
 * are counted up to @t1_ns and go on into the next interval. The report
 * is owned by @g until the next call or hwtel_gpu_free().
 */
int hwtel_gpu_interval(struct hwtel_gpu *g, uint64_t t1_ns,
		       const struct hwtel_gpu_report **out);

/* Totals since hwtel_gpu_begin(), as of the last hwtel_gpu_interval() */
const struct hwtel_gpu_report *hwtel_gpu_cumulative(const struct hwtel_gpu *g);

/* Output (gpu_fmt.c) */
int hwtel_gpu_format_text(FILE *f, const struct hwtel_gpu_report *r);
int hwtel_gpu_format_json(FILE *f, const struct hwtel_gpu_report *r);
int hwtel_gpu_format_csv(FILE *f, const struct hwtel_gpu_report *r, const char *sep);
/* Counters since the start of the capture (@cum), gauges of the interval @r */
int hwtel_gpu_format_prom(FILE *f, const struct hwtel_gpu_report *cum,
			  const struct hwtel_gpu_report *r);

/*
 * Process names (gpu_proc.c): the proc connector (netlink, needs
 * CAP_NET_ADMIN) reports exec, comm and exit of every process while the
 * capture runs; each event's process is looked up in /proc at once.
 */
struct hwtel_gpu_procmon;
/* Returns 0, or a negative errno (hwtel_last_error() says why) */
int hwtel_gpu_procmon_start(struct hwtel_gpu_procmon **out);
/* Events the kernel dropped (socket buffer overrun) */
unsigned long hwtel_gpu_procmon_lost(struct hwtel_gpu_procmon *m);
/*
 * Hand to @g (always the same one) the lives that began, changed or ended
 * since the last call; the monitor then forgets the lives that ended.
 */
int hwtel_gpu_procmon_lives(struct hwtel_gpu_procmon *m, struct hwtel_gpu *g);
void hwtel_gpu_procmon_stop(struct hwtel_gpu_procmon *m);
/* Fill the names the process events did not give from /proc (processes
 * still alive) in the last reports, else leave comm empty (shown as the
 * PID). @procroot: NULL for "/proc", or a test tree.
 */
void hwtel_gpu_names_from_proc(struct hwtel_gpu *g, const char *procroot);

/*
 * The DRM source (gpu_drm.c): the DRM client usage stats in
 * /proc/PID/fdinfo/FD (Documentation/gpu/drm-usage-stats.rst) give per
 * open file the busy ns (drm-engine-<name>) and optionally the busy cycles
 * (drm-cycles-<name>) of each engine; devfreq (/sys/class/devfreq/NAME:
 * trans_stat, cur_freq) and the OPP table (debugfs opp/, or --opp) give
 * the operating point. See Documentation/userspace-api/hwtel.rst, "The DRM
 * source", for the pricing rules and their error bounds.
 */
struct hwtel_gpu_fdinfo_engine {
	char name[24];
	uint64_t busy_ns;
	uint64_t cycles;
	uint64_t maxfreq_hz, curfreq_hz;	/* 0: not given */
	bool has_busy, has_cycles;
	/* drm-total-cycles-<name> (xe): cycles of the clock of drm-cycles that
	 * passed; with it, drm-cycles is a busy share, not clock cycles */
	bool has_total_cycles;
	uint64_t total_cycles;
};

/* Allocated by the library (hwtel_gpu_fdinfo_parse()), any number of engines */
struct hwtel_gpu_fdinfo {
	char driver[32];
	uint64_t client_id;
	unsigned int nengines;
	struct hwtel_gpu_fdinfo_engine *engine;	/* [nengines], in order of appearance */
	unsigned long lines, malformed;
};

/*
 * Parse the text of one fdinfo file into a new *@out (freed with
 * hwtel_gpu_fdinfo_free(); NULL only for -ENOMEM). Lines that are not
 * drm- keys, and drm- keys this parser does not use (memory, pdev...), are
 * skipped silently; a malformed drm-driver, drm-client-id, drm-engine-,
 * drm-cycles-, drm-total-cycles-, drm-maxfreq- or drm-curfreq- line (no
 * value, not a number, a wrong unit, a duplicate, a name over 23
 * characters) is reported to @diag as "@what:LINE: reason", counted and
 * skipped. Returns 0 for a DRM client, -ENOENT when there is no drm-driver
 * line (not a DRM file), -EINVAL when drm-client-id is missing or
 * malformed, -ENOMEM.
 */
int hwtel_gpu_fdinfo_parse(const char *buf, size_t len, struct hwtel_gpu_fdinfo **out,
			   FILE *diag, const char *what);
void hwtel_gpu_fdinfo_free(struct hwtel_gpu_fdinfo *fi);

/*
 * /sys/class/devfreq/NAME/trans_stat, any number of states (devfreq has
 * no limit but the sysfs page: 18 states fit in 4 KiB, 79 in 64 KiB).
 * Allocated by the library, freed with hwtel_gpu_trans_stat_free().
 */
struct hwtel_gpu_trans_stat {
	unsigned int nstates;
	int cur;			/* index of the '*' row, -1 if none */
	uint64_t total;			/* "Total transition" */
	uint64_t *hz;			/* [nstates], as listed */
	uint64_t *time_ms;		/* [nstates] */
	uint64_t *to_count;		/* [nstates] transitions into each state */
};

/*
 * Returns 0 with a new *@out, -ENOTSUP ("Not Supported."), -EFBIG for a
 * text cut short (no "Total transition" line at its end: the table did
 * not fit in the kernel's page, see "The DRM source" in
 * Documentation/userspace-api/hwtel.rst), -EINVAL with the reason in @why
 * for a malformed one, or -ENOMEM. *@out is NULL on failure.
 */
int hwtel_gpu_trans_stat_parse(const char *buf, size_t len, struct hwtel_gpu_trans_stat **out,
			       char *why, size_t whylen);
void hwtel_gpu_trans_stat_free(struct hwtel_gpu_trans_stat *ts);

struct hwtel_gpu_drm;

/* @procroot, @sysroot, @debugfs: NULL for /proc, /sys, /sys/kernel/debug */
struct hwtel_gpu_drm *hwtel_gpu_drm_new(const char *procroot, const char *sysroot,
					const char *debugfs);
void hwtel_gpu_drm_free(struct hwtel_gpu_drm *d);
void hwtel_gpu_drm_set_diag(struct hwtel_gpu_drm *d, FILE *f, const char *prefix);
/* Voltages of the frequencies (instead of the OPP debugfs tree); copied */
int hwtel_gpu_drm_set_opp_table(struct hwtel_gpu_drm *d, const struct hwtel_gpu_opp *t,
				unsigned int n);
/* The operating point of a device without devfreq */
void hwtel_gpu_drm_set_initial_opp(struct hwtel_gpu_drm *d, uint32_t mhz, uint32_t mv);
/* Keep each client's file open (pidfd_getfd) so that its last usage is
 * read after it closed or its process exited (default on). */
void hwtel_gpu_drm_set_hold(struct hwtel_gpu_drm *d, bool hold);
/* The clock of the fdinfo reads (default hwtel_now_ns(), CLOCK_MONOTONIC);
 * for tests */
void hwtel_gpu_drm_set_clock(struct hwtel_gpu_drm *d, uint64_t (*now_ns)(void));
/* First sample, the start of the first interval (UNIX ns): usage so far
 * is the baseline. Returns 0 or a negative errno. */
int hwtel_gpu_drm_begin(struct hwtel_gpu_drm *d, uint64_t t0_ns);
/* Read every client and devfreq device and price the usage since the last
 * sample (call often: each sample bounds the DVFS error). */
int hwtel_gpu_drm_sample(struct hwtel_gpu_drm *d);
/* Sample and close the interval at @t1_ns; the report is owned by @d */
int hwtel_gpu_drm_interval(struct hwtel_gpu_drm *d, uint64_t t1_ns,
			   const struct hwtel_gpu_report **out);
const struct hwtel_gpu_report *hwtel_gpu_drm_cumulative(const struct hwtel_gpu_drm *d);

#ifdef __cplusplus
}
#endif

#endif /* _LIBHWTEL_GPU_H */
