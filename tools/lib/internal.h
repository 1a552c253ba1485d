/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libhwtel internals shared by the library's source files. */
#ifndef _HWTEL_INTERNAL_H
#define _HWTEL_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libhwtel/gpu.h>
#include <libhwtel/hwtel.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A PMU name (a sysfs directory name: at most NAME_MAX bytes) */
#define HWTEL_NAME_MAX		256
/* Format fields of a PMU (the library's own bound; a PMU has a handful) */
#define HWTEL_MAX_FORMATS	32

/* A sysfs PMU (opaque in the public header) */
struct hwtel_pmu {
	char name[HWTEL_NAME_MAX];
	char path[512];			/* sysfs directory of the PMU */
	uint32_t type;
	int cpu;			/* first CPU of cpumask, -1 if none */
	unsigned int nformats;
	struct hwtel_format formats[HWTEL_MAX_FORMATS];
	/* events/ definitions read so far (a cache, filled by
	 * hwtel_pmu_event_attr(); beyond its size events are read each time)
	 */
	unsigned int nevcache;
	struct {
		char name[48];
		char def[128];
	} evcache[32];
};
/* Fill @pmu (the library's own, embedded in a handle) as hwtel_pmu_open() */
int hwtel_pmu_load(const char *name, struct hwtel_pmu *pmu);

/* Set the thread's last error; returns @err (a negative errno) for chaining. */
int hwtel_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hwtel_clear_error(void);
/* "<prefix><message>\n" on @f, a diagnostic of a source (nothing if !f) */
void hwtel_vdiag(FILE *f, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * Numbers the library writes (JSON, CSV, Prometheus, text reports, capture
 * headers) and reads (record conditions, capture headers) always use '.',
 * whatever LC_NUMERIC the program set with setlocale(): between
 * hwtel_numeric_c() and hwtel_numeric_restore() the calling thread uses
 * the C locale (uselocale(), per thread: other threads and the program's
 * global locale are untouched). Nothing changes when the radix is '.'
 * already.
 */
struct hwtel_numeric {
	locale_t loc, saved;
};
void hwtel_numeric_c(struct hwtel_numeric *n);
void hwtel_numeric_restore(struct hwtel_numeric *n);
/* strtod() in the C locale's LC_NUMERIC; errno as strtod() left it */
double hwtel_strtod(const char *s, char **end);

/* Read a whole small file into @buf (NUL terminated, trailing newline
 * stripped). Returns length or negative errno (@buf then ""): -EFBIG when
 * the file does not fit in @size - 1 bytes.
 */
int hwtel_read_file(const char *path, char *buf, size_t size);
int hwtel_read_uint(const char *path, unsigned long long *val);
/*
 * Two per-unit arrays in one allocation, *@a and *@b = *@a + @want, grown
 * from *@n to @want units (the new ones 0); nothing changes when *@n >=
 * @want. Returns 0 or -ENOMEM (the arrays as they were).
 */
int hwtel_grow_pair(uint64_t **a, uint64_t **b, unsigned int *n, unsigned int want);
/* Parse decimal or 0x-hex unsigned; returns 0 or -EINVAL. */
int hwtel_parse_u64(const char *s, uint64_t *val);

/* Resolve a -d argument to a PMU name with @prefix; index used when
 * @device is NULL or empty.
 */
int hwtel_resolve_device(const char *prefix, const char *module,
			 const char *device, unsigned int index,
			 char *name, size_t size);

/* perf group of events on one PMU (libperf); see perfgrp.c */
struct hwtel_group;
struct hwtel_group *hwtel_group_new(const struct hwtel_pmu *pmu, bool pinned);
/* Add event @spec; returns its slot number in the group or negative errno. */
int hwtel_group_add(struct hwtel_group *g, const char *spec);
int hwtel_group_open(struct hwtel_group *g);
/* One read(2) of the leader: values in slot order and the group times. */
int hwtel_group_read(struct hwtel_group *g, uint64_t *values,
		     uint64_t *enabled, uint64_t *running);
unsigned int hwtel_group_size(const struct hwtel_group *g);
void hwtel_group_free(struct hwtel_group *g);

/* Explain a perf_event_open failure (EACCES etc.) into the last error. */
int hwtel_perf_open_error(int err, const char *pmu, const char *what);

/* Control plane (nl.c) */
struct hwtel_nl;
int hwtel_nl_open(struct hwtel_nl **out);
void hwtel_nl_close(struct hwtel_nl *nl);
/* EP_GET: fills endpoint state and status flags of @d. */
int hwtel_nl_ep_get(struct hwtel_nl *nl, const char *dev,
		    struct hwtel_pcie_data *d);
/* TOTALS_GET: @totals gets ENTRIES_USED values (size @n), *used the count. */
int hwtel_nl_totals(struct hwtel_nl *nl, const char *dev, uint64_t *totals,
		    unsigned int n, unsigned int *used, uint64_t *ts_ns,
		    uint32_t *flags);
int hwtel_nl_clear(struct hwtel_nl *nl, const char *dev, unsigned int what);
int hwtel_nl_attach(struct hwtel_nl *nl, const char *pci_addr, unsigned int bar,
		    uint64_t offset, uint64_t size, char *name, size_t name_size);
int hwtel_nl_detach(struct hwtel_nl *nl, const char *name);
/*
 * One EP_GET or TOTALS_GET reply message parsed as a request's receive path
 * does (for the unit tests): 0 or a negative errno; @kmsg (of
 * HWTEL_NL_KMSG_LEN) gets the reason when there is one.
 */
#define HWTEL_NL_KMSG_LEN 128
struct nl_msg;
int hwtel_nl_parse_ep_msg(struct nl_msg *msg, struct hwtel_pcie_data *d, char *kmsg);
int hwtel_nl_parse_totals_msg(struct nl_msg *msg, const char *dev, uint64_t *totals,
			      unsigned int n, unsigned int *used, char *kmsg);

/* pcie_data.c */
const char *hwtel_pcie_bus_tag(enum hwtel_bus_kind k);
const char *hwtel_pcie_brake_key(unsigned int k, char *buf, size_t size);
/* Fill @out (of @tmpl's layout, else -EINVAL naming @fn) from @tmpl */
int hwtel_pcie_data_reset(struct hwtel_pcie_data *out, const struct hwtel_pcie_data *tmpl,
			  const char *fn);

/* Small JSON writer (json.c) */
struct hwtel_json {
	FILE *f;
	int depth;
	bool first[32];
	bool key_pending;
};
void hj_init(struct hwtel_json *j, FILE *f);
void hj_obj_begin(struct hwtel_json *j);
void hj_obj_end(struct hwtel_json *j);
void hj_arr_begin(struct hwtel_json *j);
void hj_arr_end(struct hwtel_json *j);
void hj_key(struct hwtel_json *j, const char *k);
void hj_u64(struct hwtel_json *j, uint64_t v);
void hj_uint(struct hwtel_json *j, unsigned int v);
void hj_bool(struct hwtel_json *j, bool v);
void hj_null(struct hwtel_json *j);
void hj_str(struct hwtel_json *j, const char *s);
/* finite -> number, NaN/inf -> null */
void hj_double(struct hwtel_json *j, double v);

/*
 * One RFC 4180 field of a -x SEP line: quoted when it holds SEP, a quote
 * or a newline (perf stat -x writes event names with commas unquoted).
 */
void hwtel_csv_field(FILE *f, const char *s, const char *sep);
/* The event field of a -x SEP line, "PMU/EVENT/", as one such field */
void hwtel_csv_event(FILE *f, const char *sep, const char *pmu, const char *ev);
void hwtel_csv_fmt(FILE *f, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* gpu_proc.c: /proc/PID/comm and cmdline (NULs as spaces); false if gone */
bool hwtel_read_proc_name(const char *root, int pid, char *comm, size_t clen,
			  char *cmd, size_t cmdlen);
/*
 * gpu_proc.c, for tests: a process monitor without a socket or thread,
 * whose events are handed in, with @mono_to_real as its clock offset
 * (CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns).
 */
struct proc_event;
struct hwtel_gpu_procmon *hwtel_gpu_procmon_fake(int64_t (*mono_to_real)(void));
void hwtel_gpu_procmon_event(struct hwtel_gpu_procmon *m, const struct proc_event *ev);
/*
 * For tests: what is kept in memory. The process lives and the consumers
 * (one per life, or per PID when no life is known) of @g; the lives the
 * monitor @m holds.
 */
struct hwtel_gpu;
void hwtel_gpu_retained(const struct hwtel_gpu *g, unsigned int *lives, unsigned int *consumers);
/* For tests: the PID index of @g, its entries and its slots */
void hwtel_gpu_retained_pids(const struct hwtel_gpu *g, unsigned int *entries, unsigned int *slots);
unsigned int hwtel_gpu_procmon_retained(struct hwtel_gpu_procmon *m);
/*
 * gpu.c, for both sources: the process lives that ended and were reported,
 * summed per name (comm, "" when unknown), as the Prometheus counter of the
 * name summed them while they were rows: @upj is the sum of their energies
 * each rounded to the uPJ, @raw the exact sum (Hz x uV^2 x ns).
 */
struct hwtel_gpu_fold {
	char comm[32];
	unsigned long lives;
	uint64_t upj;
	unsigned int nunits;		/* of busy and jobs */
	uint64_t *busy, *jobs, unpriced_ns;
	unsigned __int128 raw;
};

/* Add one life's figures (@nunits of @busy and of @jobs, which may be
 * NULL) to its name's entry; 0 or -ENOMEM */
int hwtel_gpu_fold_add(struct hwtel_gpu_fold **fold, unsigned int *n, const char *comm,
		       const uint64_t *busy, const uint64_t *jobs, unsigned int nunits,
		       uint64_t unpriced_ns, unsigned __int128 raw);
void hwtel_gpu_fold_free(struct hwtel_gpu_fold *fold, unsigned int n);
/*
 * @n consumers with busy_ns and jobs of @nunits each, zeroed, in one
 * allocation (free() of the array frees all); NULL on ENOMEM
 */
struct hwtel_gpu_consumer *hwtel_gpu_consumers_new(unsigned int n, unsigned int nunits);
/* The report's exited list (r->nunits set), in name order; shares of
 * @total_raw; 0 or -ENOMEM */
int hwtel_gpu_fold_report(const struct hwtel_gpu_fold *fold, unsigned int n,
			  unsigned __int128 total_raw, struct hwtel_gpu_report *r);

/* For tests: the consumers (process lives) the DRM source @d keeps */
struct hwtel_gpu_drm;
unsigned int hwtel_gpu_drm_retained(const struct hwtel_gpu_drm *d);
/* For tests: the DRM files without a client id @d keeps (said once each) */
unsigned int hwtel_gpu_drm_retained_bad(const struct hwtel_gpu_drm *d);

#endif /* _HWTEL_INTERNAL_H */
