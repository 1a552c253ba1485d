/* SPDX-License-Identifier: GPL-2.0 */
/* hwtel command line: option parsing and commands (cli.c). */
#ifndef _HWTEL_CLI_H
#define _HWTEL_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libhwtel/hwtel.h>

/* Exit statuses (Documentation/man/hwtel.1.rst, EXIT STATUS) */
enum hwtel_exit {
	HWTEL_EXIT_OK = 0,
	HWTEL_EXIT_FAIL = 1,	/* any other failure */
	HWTEL_EXIT_USAGE = 2,	/* bad options; usage on stderr */
	HWTEL_EXIT_NOPMU = 3,	/* no such PMU / driver not loaded */
	HWTEL_EXIT_PERM = 4,	/* EACCES/EPERM: perf_event_paranoid, CAP_PERFMON */
	HWTEL_EXIT_VANISHED = 5,	/* the device went away (during watch) */
	HWTEL_EXIT_CHILD = 6,	/* the measured command could not run */
};

enum hwtel_cmd { CMD_NONE, CMD_PCIE, CMD_DDR, CMD_LIST, CMD_HELP, CMD_VERSION };

struct hwtel_opts {
	enum hwtel_cmd cmd;
	bool compat;		/* invoked as nfb-pcie-telemetry */
	const char *device;
	unsigned int index;
	double interval;	/* seconds; 0 = totals since clear */
	bool interval_set;
	bool watch;
	bool clear;
	bool json;
	const char *csv_sep;	/* -x SEP */
	const char *prom_file;	/* --prometheus FILE */
	const char *events;	/* ddr -e LIST */
	long count;		/* -n N intervals (0 = until stopped) */
	bool quiet;		/* -q: no report on stdout (with --prometheus) */
	char **command;		/* argv after the options: measure while it runs */
};

/*
 * Parse argv. Returns -1 when the caller should go on, or an exit status
 * (0 after --help/--version, HWTEL_EXIT_USAGE on a bad option, with the
 * usage printed on @err).
 */
int hwtel_parse_args(int argc, char **argv, struct hwtel_opts *o, FILE *out, FILE *err);
int hwtel_main(int argc, char **argv);
/* hwtel gpu (cli_gpu.c); argv[0] is "gpu" */
int hwtel_gpu_main(int argc, char **argv);
/* hwtel record / hwtel report (cli_record.c); argv[0] is the command */
int hwtel_record_main(int argc, char **argv);
struct rec_engine;
/*
 * hwtel record --event: every record of one perf ring (the header page at
 * @base, @len bytes mapped, data from @page on before Linux 4.1) to @eng
 * as event @idx: a sample an occurrence, a LOST record that many
 * occurrences and a gap of them (added to *@lost), a THROTTLE record a
 * throttle gap (counted in *@throttled); the tail set past them.
 */
int hwtel_rec_ring_drain(void *base, size_t len, size_t page, struct rec_engine *eng,
			 unsigned int idx, uint64_t *lost, uint64_t *throttled);
/*
 * The CPUs of a sysfs CPU list ("0-3,8,10-11", as
 * /sys/devices/system/cpu/online) into *@cpu (malloc'd, *@n of them; none
 * is left out). 0, -EINVAL (malformed) or -ENOMEM.
 */
int hwtel_rec_parse_cpus(const char *list, int **cpu, unsigned int *n);
int hwtel_report_main(int argc, char **argv);

/* hwtel nfb (cli_nfb.c); argv[0] is "nfb" */
int hwtel_nfb_main(int argc, char **argv);
/*
 * Write the JSON document @text (the library's indented layout) to @out as
 * one line, as perf stat -j prints one object per line; with @interval, a
 * first key "interval" (seconds since the start, as perf stat -I -j).
 * 0, or -EIO when @out has an error.
 */
int hwtel_json_line(FILE *out, const char *text, size_t len, const double *interval);
/*
 * -w -x: write the CSV rows @text to @out, each led by the interval's end
 * @elapsed_ns (seconds since the start, "SECONDS.NANOSECONDS", quoted when
 * it holds @sep) and @sep, as perf stat -I -x rows are. @head: the first
 * line of @text is a header, printed with an "interval" field before it
 * (HWTEL_CSV_HEAD, the first interval) or left out (HWTEL_CSV_SKIP_HEAD).
 * 0, or -EIO when @out has an error.
 */
enum hwtel_csv_head { HWTEL_CSV_NO_HEAD, HWTEL_CSV_HEAD, HWTEL_CSV_SKIP_HEAD };
int hwtel_csv_interval_rows(FILE *out, const char *text, size_t len, const char *sep,
			    uint64_t elapsed_ns, enum hwtel_csv_head head);

/*
 * --prometheus in watch mode: hwtel_prom_write() writes @path with
 * hwtel_write_atomic() and, through hwtel_prom_wrote() (@before: the stat
 * of @path before the write, NULL if there was nothing), remembers the
 * regular file that the write put there, a new inode; a target written in
 * place (device, FIFO, the file behind /dev/stdout) is not remembered.
 * hwtel_prom_remove() removes the remembered file, when it is still that
 * file (same device, inode and mtime), so that a stopped exporter leaves
 * no frozen values behind. True if it removed it.
 */
struct stat;
int hwtel_prom_write(const char *path, const char *text, size_t len);
void hwtel_prom_wrote(const char *path, const struct stat *before);
bool hwtel_prom_remove(const char *path);
/*
 * hwtel pcie --prometheus with an interval: a scrape sees only the last
 * interval, so the exporter counts the intervals it reported and those that
 * ended with each flag set (counters, from the start of the exporter; the
 * flags are sticky until an explicit clear, which hwtel pcie never sends
 * while it reads). known: the flags were read (the control plane
 * answered); without them only the intervals are counted.
 */
struct hwtel_pcie_flag_count {
	unsigned long long intervals, lost_deltas, readout_overrun;
	bool known;
};
void hwtel_pcie_flag_count_add(struct hwtel_pcie_flag_count *c, const struct hwtel_pcie_data *d);
int hwtel_pcie_prom_flag_intervals(FILE *f, const char *pmu, const struct hwtel_pcie_flag_count *c);
/*
 * The --prometheus exposition of @n PCIe telemetry blocks (hwtel pcie
 * without -d exports every ndk_pcie_tlm PMU): hwtel_pcie_format_prom() of
 * each @cum[k] (labelled device="<PMU>" already) and, with an interval
 * (@seconds > 0), hwtel_pcie_prom_flag_intervals() of each @fc[k], merged
 * by hwtel_prom_merge(). For one block the text is exactly that block's.
 * 0, or a negative errno.
 */
int hwtel_pcie_prom(FILE *f, const struct hwtel_pcie_data *const *cum,
		    const struct hwtel_pcie_flag_count *const *fc, unsigned int n,
		    double seconds);
/*
 * Write the @n expositions @text[k] (@len[k] bytes each; "# HELP" and
 * "# TYPE" lines before the samples of a family) to @out as one: every
 * family once, in the order the texts first name it, with its HELP and
 * TYPE from the first text that has them, then the samples of every text
 * in text order. 0, or -EIO when @out has an error.
 */
int hwtel_prom_merge(FILE *out, char *const *text, const size_t *len, unsigned int n);
/* Map a negative errno of libhwtel to an exit status. */
int hwtel_exit_status(int err);

/*
 * stdout's write errors. hwtel_stdout_flush(): fflush(stdout); 0, or the
 * negative errno of the first write to stdout that failed (EIO when it is
 * not known any more), the same on every later call. hwtel_output_error():
 * the message for a failed output step @err (once "cannot write the
 * output: ..." for stdout's error, else the library's message), returns
 * HWTEL_EXIT_FAIL.
 */
int hwtel_stdout_flush(void);
int hwtel_output_error(int err);
/*
 * @err of an output step is a stop: a SIGINT or SIGTERM interrupted a
 * write or FIFO open that blocked (EINTR). The run then ends as on any
 * stop signal, without an error.
 */
bool hwtel_output_stopped(int err);
/*
 * The SIGINT or SIGTERM that stopped a pcie, ddr or gpu run (0: none):
 * set by their signal handlers.
 */
extern volatile sig_atomic_t hwtel_stopped_by;
/*
 * The end of main(): flushes and closes stdout (a write error is exit
 * status 1 with one message, unless @status is a failure already); after
 * a run that SIGINT stopped with @status 0, the process ends by SIGINT,
 * as perf stat does. Returns the exit status otherwise.
 */
int hwtel_finish(int status);

#endif
