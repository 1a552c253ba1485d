// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel command line, a thin layer over libhwtel:
 *
 *   hwtel pcie [-d DEV] [-i N] [-t SEC] [-w] [-c] [-j] [-x SEP] [--prometheus FILE]
 *   hwtel ddr  [-d DEV] [-i N] [-t SEC] [-w] [-j] [-x SEP] [-e EVENTS] [--prometheus FILE]
 *   hwtel list
 *   hwtel gpu  [-t SEC | -- COMMAND] [-w] [-j|-x SEP] ...  (cli_gpu.c)
 *   hwtel record ... / hwtel report FILE ...                  (cli_record.c)
 *   hwtel nfb  list|attach|detach [-d DEV] [--fdt FILE] [--pci ADDR]  (cli_nfb.c)
 *   nfb-pcie-telemetry [the reference tool's options]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>

#include "cli.h"

static volatile sig_atomic_t stop_sig;
volatile sig_atomic_t hwtel_stopped_by;

static void on_signal(int sig)
{
	stop_sig = sig;
	hwtel_stopped_by = sig;
}

/*
 * stdout: the errno of the first write that failed, and whether the one
 * message about it was printed.
 */
static int out_errno;
static bool out_said;

int hwtel_stdout_flush(void)
{
	if (out_errno)
		return -out_errno;
	if (fflush(stdout) == EOF)
		out_errno = errno > 0 ? errno : EIO;
	else if (ferror(stdout))
		out_errno = EIO;	/* failed earlier, nothing left to retry */
	return -out_errno;
}

int hwtel_output_error(int err)
{
	if (out_errno && err == -out_errno) {
		if (!out_said)
			fprintf(stderr, "hwtel: error: cannot write the output: %s\n",
				strerror(out_errno));
		out_said = true;
	} else {
		const char *msg = hwtel_last_error();

		fprintf(stderr, "hwtel: error: %s\n", msg && *msg ? msg : strerror(-err));
	}
	return HWTEL_EXIT_FAIL;
}

bool hwtel_output_stopped(int err)
{
	return err == -EINTR && hwtel_stopped_by;
}

int hwtel_finish(int status)
{
	int w = hwtel_stdout_flush();
	sigset_t intr;

	/* after a failed write no fclose(): it would write (and block) again */
	if (!w && fclose(stdout) == EOF) {
		out_errno = errno > 0 ? errno : EIO;
		w = -out_errno;
	}
	if (w && !hwtel_output_stopped(w)) {
		hwtel_output_error(w);
		return status ? status : HWTEL_EXIT_FAIL;
	}
	/*
	 * Stopped by Ctrl-C after the report was printed: end by SIGINT, as
	 * perf stat does, so that a shell sees it (status 130) and a script's
	 * loop stops. SIGTERM, the exporter's stop, stays exit status 0.
	 */
	if (status == HWTEL_EXIT_OK && hwtel_stopped_by == SIGINT) {
		signal(SIGINT, SIG_DFL);
		sigemptyset(&intr);
		sigaddset(&intr, SIGINT);
		raise(SIGINT);
		sigprocmask(SIG_UNBLOCK, &intr, NULL);
	}
	return status;
}

static const char *prog_name(const char *argv0)
{
	const char *s = argv0 ? strrchr(argv0, '/') : NULL;

	return s ? s + 1 : argv0 ? argv0 : "hwtel";
}

static void usage_compat(FILE *f)
{
	fputs("usage: nfb-pcie-telemetry [-h] [-d DEVICE] [-i INDEX] [-t INTERVAL] [-w] [-c] [-j]\n"
	      "                          [-x SEP] [--prometheus FILE]\n"
	      "\n"
	      "Reads and shows the PCIe infrastructure telemetry of the NDK firmware\n"
	      "through the ndk_pcie_tlm perf PMU (hwtel).\n"
	      "\n"
	      "options:\n"
	      "  -h, --help            show this help message and exit\n"
	      "  -d, --device DEVICE   PMU name, sysfs path, MMIO base (0x...), instance\n"
	      "                        number or /dev/nfbN (default: the first instance)\n"
	      "  -i, --index INDEX     instance number when -d is not given (default: 0)\n"
	      "  -t, --interval INTERVAL\n"
	      "                        length of the measured interval in seconds, 0 shows\n"
	      "                        the totals since the last clear (default: 1)\n"
	      "  -w, --watch           keep measuring and printing until interrupted\n"
	      "  -c, --clear           zero all counters and exit\n"
	      "  -j, --json            print the raw values as JSON instead of a table\n"
	      "  -x, --field-separator SEP\n"
	      "                        print CSV like perf stat -x SEP\n"
	      "      --prometheus FILE write the node_exporter textfile FILE atomically\n", f);
}

static void usage(FILE *f)
{
	fputs("usage: hwtel <command> [options] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "commands:\n"
	      "  pcie    PCIe telemetry report (NDK PCIE_TELEMETRY_MI, PMU ndk_pcie_tlm_*)\n"
	      "  ddr     DDR controller report (Marvell DSS, PMU mrvl_ddr_pmu_*)\n"
	      "  list    supported PMUs found and their events\n"
	      "  gpu     GPU power consumers per process (Mali internal profiling);\n"
	      "          see 'hwtel gpu --help'\n"
	      "  record  flight recorder of PCIe/DDR/perf metrics with triggers;\n"
	      "          see 'hwtel record --help'\n"
	      "  report  views of a capture file; see 'hwtel report --help'\n"
	      "  nfb     attach an NDK card's telemetry blocks (list|attach|detach);\n"
	      "          see 'hwtel nfb --help'\n"
	      "\n"
	      "options (pcie, ddr):\n"
	      "  -d, --device DEV       PMU name, sysfs path, MMIO base (0x...), instance\n"
	      "                         number, or /dev/nfbN (pcie); default: all, each\n"
	      "                         report naming its PMU\n"
	      "  -i, --index N          instance number when -d is not given (default 0)\n"
	      "  -t, --interval SEC     measured interval (default 1); pcie: 0 = totals\n"
	      "                         since the last clear, from the control plane\n"
	      "  -w, --watch            repeat until SIGINT/SIGTERM\n"
	      "  -n, --count N          with -w: stop after N intervals\n"
	      "  -c, --clear            pcie: zero counters, flags and marks, then exit\n"
	      "                         (without -d/-i: of every PCIe PMU)\n"
	      "  -j, --json             JSON: {\"seconds\": ..., \"data\": ..., \"derived\": ...}\n"
	      "  -x, --field-separator SEP   CSV like perf stat -x SEP\n"
	      "      --prometheus FILE  also write the node_exporter textfile FILE (atomic)\n"
	      "  -q, --quiet            no report on stdout (with --prometheus)\n"
	      "  -e, --events LIST      ddr: generic events to count (comma separated)\n"
	      "  -- COMMAND             measure while COMMAND runs instead of -t SEC\n"
	      "  -h, --help             this help;  -V, --version  version\n"
	      "\n"
	      "See hwtel(1).\n", f);
}

static int usage_error(const struct hwtel_opts *o, FILE *err, const char *fmt, const char *arg)
{
	fprintf(err, "%s: error: ", o->compat ? "nfb-pcie-telemetry" : "hwtel");
	fprintf(err, fmt, arg);
	fputc('\n', err);
	if (o->compat)
		usage_compat(err);
	else
		usage(err);
	return HWTEL_EXIT_USAGE;
}

int hwtel_parse_args(int argc, char **argv, struct hwtel_opts *o, FILE *out, FILE *err)
{
	enum { OPT_PROM = 256 };
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "index", required_argument, NULL, 'i' },
		{ "interval", required_argument, NULL, 't' },
		{ "watch", no_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "clear", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "prometheus", required_argument, NULL, OPT_PROM },
		{ "events", required_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, first = 1;
	char *end;

	memset(o, 0, sizeof(*o));
	o->interval = 1.0;
	o->compat = !strcmp(prog_name(argv[0]), "nfb-pcie-telemetry");
	if (o->compat) {
		o->cmd = CMD_PCIE;
	} else {
		if (argc < 2) {
			usage(err);
			return HWTEL_EXIT_USAGE;
		}
		if (!strcmp(argv[1], "pcie")) {
			o->cmd = CMD_PCIE;
		} else if (!strcmp(argv[1], "ddr")) {
			o->cmd = CMD_DDR;
		} else if (!strcmp(argv[1], "list")) {
			o->cmd = CMD_LIST;
		} else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
			   !strcmp(argv[1], "help")) {
			usage(out);
			return HWTEL_EXIT_OK;
		} else if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
			fprintf(out, "hwtel %s\n", HWTEL_VERSION);
			return HWTEL_EXIT_OK;
		} else {
			return usage_error(o, err, "unknown command '%s'", argv[1]);
		}
		first = 2;
	}
	optind = 0;	/* full reinitialisation (glibc), the parser may run twice */
	opterr = 0;
	argc -= first - 1;
	argv += first - 1;
	while ((c = getopt_long(argc, argv, "+:d:i:t:wn:cjx:e:qhV", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'i': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || !*optarg || optarg[0] == '-' || v > 4096)
				return usage_error(o, err, "argument -i/--index: invalid value '%s'", optarg);
			o->index = (unsigned int)v;
			break;
		}
		case 't':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || *end || !*optarg || !isfinite(o->interval) || o->interval < 0 ||
			    o->interval > 86400 * 365)
				return usage_error(o, err, "argument -t/--interval: invalid value '%s'",
						   optarg);
			/* perf stat takes no -I or --timeout under 10 ms either */
			if (o->interval > 0 && o->interval < 0.01)
				return usage_error(o, err, "argument -t/--interval: '%s' s is under 10 ms, the shortest interval: give 0.01 or more",
						   optarg);
			o->interval_set = true;
			break;
		case 'w':
			o->watch = true;
			break;
		case 'n':
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || o->count < 1)
				return usage_error(o, err, "argument -n/--count: invalid value '%s'", optarg);
			break;
		case 'c':
			o->clear = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'x':
			if (!*optarg)
				return usage_error(o, err, "argument -x: empty separator%s", "");
			if (strpbrk(optarg, "\"\n\r"))
				return usage_error(o, err, "argument -x: '%s' holds a double quote or a line break, which no CSV field can be quoted around: choose another separator",
						   optarg);
			o->csv_sep = optarg;
			break;
		case OPT_PROM:
			if (!*optarg)
				return usage_error(o, err, "argument --prometheus: empty file name%s", "");
			o->prom_file = optarg;
			break;
		case 'e':
			o->events = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			if (o->compat)
				usage_compat(out);
			else
				usage(out);
			return HWTEL_EXIT_OK;
		case 'V':
			fprintf(out, "hwtel %s\n", HWTEL_VERSION);
			return HWTEL_EXIT_OK;
		case ':':
			return usage_error(o, err, "option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error(o, err, "unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (o->compat || o->cmd == CMD_LIST)
			return usage_error(o, err, "unrecognized arguments: %s", argv[optind]);
		o->command = &argv[optind];
	}
	if (o->cmd == CMD_LIST && (o->device || o->watch || o->clear || o->csv_sep ||
				   o->prom_file || o->interval_set || o->events))
		return usage_error(o, err, "'list' takes no options%s", "");
	if (o->json && o->csv_sep)
		return usage_error(o, err, "-j and -x exclude each other%s", "");
	if (o->cmd == CMD_DDR && o->clear)
		return usage_error(o, err, "-c/--clear: the DDR PMU has no clear (counts are per perf session)%s", "");
	if (o->cmd == CMD_DDR && o->interval_set && o->interval == 0)
		return usage_error(o, err, "-t 0: the DDR PMU has no totals since a clear; give an interval%s", "");
	if (o->cmd == CMD_PCIE && o->events)
		return usage_error(o, err, "-e/--events is for 'ddr'%s", "");
	if (o->command && (o->watch || o->interval_set || o->clear))
		return usage_error(o, err, "a COMMAND replaces -t/-w/-c%s", "");
	if (o->count && !o->watch)
		return usage_error(o, err, "-n/--count needs -w%s", "");
	if (o->quiet && !o->prom_file)
		return usage_error(o, err, "-q needs --prometheus%s", "");
	return -1;
}

int hwtel_exit_status(int err)
{
	switch (-err) {
	case 0:
		return HWTEL_EXIT_OK;
	case ENOENT:
		return HWTEL_EXIT_NOPMU;
	case EACCES:
	case EPERM:
		return HWTEL_EXIT_PERM;
	case ENODEV:
		return HWTEL_EXIT_VANISHED;
	default:
		return HWTEL_EXIT_FAIL;
	}
}

static int fail(int err)
{
	const char *msg = hwtel_last_error();

	if (out_errno && err == -out_errno)
		return hwtel_output_error(err);
	fprintf(stderr, "hwtel: error: %s\n", msg && *msg ? msg : strerror(-err));
	return hwtel_exit_status(err);
}

/*
 * SIGINT and SIGTERM stay blocked (hwtel_main) except inside this sleep:
 * ppoll() unblocks them atomically, so one that arrives just before the
 * sleep is taken at once instead of waiting out the interval.
 */
static sigset_t sleep_mask;

/* Sleep until CLOCK_MONOTONIC @deadline_ns; false if a signal asked to stop. */
static bool sleep_until(uint64_t deadline_ns)
{
	while (!stop_sig) {
		uint64_t now = hwtel_now_ns(), left;
		struct timespec ts;

		if (now >= deadline_ns)
			return true;
		left = deadline_ns - now;
		ts.tv_sec = (time_t)(left / 1000000000ull);
		ts.tv_nsec = (long)(left % 1000000000ull);
		if (ppoll(NULL, 0, &ts, &sleep_mask) < 0 && errno != EINTR)
			return false;
	}
	return false;
}

/* Run the measured command; returns its exit status or an HWTEL_EXIT_*. */
static int run_command(char **argv, int *child_status)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		fprintf(stderr, "hwtel: error: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigprocmask(SIG_SETMASK, &sleep_mask, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "hwtel: error: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "hwtel: error: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	*child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/*
 * The textfile of --prometheus this process last replaced: a regular file,
 * by device, inode and modification time (an inode number can be reused). When the exporter stops on a signal or an error it
 * removes that file, and only that file (never a device or FIFO it wrote
 * in place, nor a file someone put there since).
 */
static struct {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	bool set;
} prom_own;

void hwtel_prom_wrote(const char *path, const struct stat *before)
{
	struct stat st;

	/*
	 * Only a file that the write put there is ours: one written in place
	 * (a device, a FIFO, the file behind -o /dev/stdout) is the same
	 * inode as before and is never removed.
	 */
	prom_own.set = !stat(path, &st) && S_ISREG(st.st_mode) &&
		       (!before || before->st_dev != st.st_dev || before->st_ino != st.st_ino);
	if (prom_own.set) {
		prom_own.dev = st.st_dev;
		prom_own.ino = st.st_ino;
		prom_own.mtime = st.st_mtim;
	}
}

bool hwtel_prom_remove(const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	if (!prom_own.set)
		return false;
	prom_own.set = false;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_dev != prom_own.dev ||
	    st.st_ino != prom_own.ino || st.st_mtim.tv_sec != prom_own.mtime.tv_sec ||
	    st.st_mtim.tv_nsec != prom_own.mtime.tv_nsec)
		return false;
	/* through a symbolic link: the file written was the one it names */
	if (!realpath(path, real) || unlink(real)) {
		fprintf(stderr, "hwtel: warning: cannot remove %s: %s\n", path, strerror(errno));
		return false;
	}
	return true;
}

static void prom_stop(const struct hwtel_opts *o, int status)
{
	if (o->watch && o->prom_file && (stop_sig || status != HWTEL_EXIT_OK))
		hwtel_prom_remove(o->prom_file);
}

int hwtel_prom_write(const char *path, const char *text, size_t len)
{
	struct stat before;
	bool had = !stat(path, &before);
	int ret = hwtel_write_atomic(path, text, len);

	if (!ret)
		hwtel_prom_wrote(path, had ? &before : NULL);
	return ret;
}

static int write_prom(const char *path, int (*fn)(FILE *, const void *, const void *, double, unsigned int),
		      const void *cum, const void *d, double s, unsigned int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = fn(f, cum, d, s, n);
	fclose(f);
	if (!ret)
		ret = hwtel_prom_write(path, buf, len);
	free(buf);
	return ret;
}

void hwtel_pcie_flag_count_add(struct hwtel_pcie_flag_count *c, const struct hwtel_pcie_data *d)
{
	c->intervals++;
	c->known = d->state_valid;
	if (!d->state_valid)
		return;
	c->lost_deltas += d->status.lost_deltas;
	c->readout_overrun += d->status.readout_overrun;
}

int hwtel_pcie_prom_flag_intervals(FILE *f, const char *pmu, const struct hwtel_pcie_flag_count *c)
{
	fprintf(f, "# HELP hwtel_pcie_intervals_total Intervals measured and reported.\n"
		"# TYPE hwtel_pcie_intervals_total counter\n"
		"hwtel_pcie_intervals_total{device=\"%s\"} %llu\n", pmu, c->intervals);
	if (c->known)
		fprintf(f, "# HELP hwtel_pcie_flagged_intervals_total Intervals that ended with a STATUS flag set; flags hold until hwtel pcie -c, so their counts may not be exact.\n"
			"# TYPE hwtel_pcie_flagged_intervals_total counter\n"
			"hwtel_pcie_flagged_intervals_total{device=\"%s\",flag=\"lost_deltas\"} %llu\n"
			"hwtel_pcie_flagged_intervals_total{device=\"%s\",flag=\"readout_overrun\"} %llu\n",
			pmu, c->lost_deltas, pmu, c->readout_overrun);
	return ferror(f) ? -EIO : 0;
}

/*
 * A "# HELP NAME ..." or "# TYPE NAME ..." line at @p: true, and @name and
 * @nlen the family's name. Any other line (a sample) belongs to the family
 * of the HELP or TYPE line before it.
 */
static bool prom_family_line(const char *p, const char *end, const char **name, size_t *nlen)
{
	const char *q;

	if (end - p < 7 || (strncmp(p, "# HELP ", 7) && strncmp(p, "# TYPE ", 7)))
		return false;
	p += 7;
	for (q = p; q < end && *q != ' ' && *q != '\n'; q++)
		;
	*name = p;
	*nlen = (size_t)(q - p);
	return true;
}

struct prom_name {
	const char *s;
	size_t len;
};

static bool prom_name_eq(const struct prom_name *a, const char *s, size_t len)
{
	return a->len == len && !memcmp(a->s, s, len);
}

int hwtel_prom_merge(FILE *out, char *const *text, const size_t *len, unsigned int n)
{
	struct prom_name *fam = NULL;
	size_t nfam = 0, cap = 0, f;
	unsigned int k;

	/* the families, in the order the texts first name them */
	for (k = 0; k < n; k++) {
		const char *p, *end = text[k] + len[k], *nl, *nm;
		size_t nml;

		for (p = text[k]; p < end; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				nl = end - 1;
			if (!prom_family_line(p, end, &nm, &nml))
				continue;
			for (f = 0; f < nfam && !prom_name_eq(&fam[f], nm, nml); f++)
				;
			if (f < nfam)
				continue;
			if (nfam == cap) {
				struct prom_name *v = realloc(fam, (cap ? 2 * cap : 32) * sizeof(*fam));

				if (!v) {
					free(fam);
					return -ENOMEM;
				}
				fam = v;
				cap = cap ? 2 * cap : 32;
			}
			fam[nfam].s = nm;
			fam[nfam++].len = nml;
		}
	}
	/* each family: HELP and TYPE of the first text naming it, every text's samples */
	for (f = 0; f < nfam; f++) {
		int head_from = -1;

		for (k = 0; k < n; k++) {
			const char *p, *end = text[k] + len[k], *nl, *nm;
			bool mine = false;
			size_t nml;

			for (p = text[k]; p < end; p = nl + 1) {
				nl = memchr(p, '\n', (size_t)(end - p));
				if (!nl)
					nl = end - 1;
				if (prom_family_line(p, end, &nm, &nml)) {
					mine = prom_name_eq(&fam[f], nm, nml);
					if (!mine)
						continue;
					if (head_from < 0)
						head_from = (int)k;
					if (head_from != (int)k)
						continue;
				} else if (!mine) {
					continue;
				}
				fwrite(p, 1, (size_t)(nl - p + 1), out);
			}
		}
	}
	free(fam);
	return ferror(out) ? -EIO : 0;
}

int hwtel_pcie_prom(FILE *f, const struct hwtel_pcie_data *const *cum,
		    const struct hwtel_pcie_flag_count *const *fc, unsigned int n,
		    double seconds)
{
	char **text = calloc(n ? n : 1, sizeof(*text));
	size_t *len = calloc(n ? n : 1, sizeof(*len));
	unsigned int k;
	int ret = text && len ? 0 : -ENOMEM;

	for (k = 0; k < n && !ret; k++) {
		FILE *m = open_memstream(&text[k], &len[k]);

		if (!m) {
			ret = -ENOMEM;
			break;
		}
		ret = hwtel_pcie_format_prom(m, cum[k], cum[k], seconds);
		if (!ret && seconds > 0)
			ret = hwtel_pcie_prom_flag_intervals(m, cum[k]->pmu, fc[k]);
		if (fclose(m) && !ret)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = hwtel_prom_merge(f, text, len, n);
	for (k = 0; text && k < n; k++)
		free(text[k]);
	free(text);
	free(len);
	return ret;
}

static int prom_ddr(FILE *f, const void *cum, const void *d, double s, unsigned int n)
{
	return hwtel_ddr_format_prom(f, cum, d, n, s);
}

/* ------------------------------------------------------------------ */

/*
 * A report rendered into memory first, when its lines need rewriting before
 * they reach stdout (csv_end(), json_end()); straight to stdout otherwise.
 */
struct buf_out {
	FILE *f;
	char *buf;
	size_t len;
};

static int out_begin(bool buffered, struct buf_out *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = stdout;
	if (buffered) {
		c->f = open_memstream(&c->buf, &c->len);
		if (!c->f)
			return -ENOMEM;
	}
	return 0;
}

int hwtel_csv_interval_rows(FILE *out, const char *text, size_t len, const char *sep,
			    uint64_t elapsed_ns, enum hwtel_csv_head head)
{
	const char *p = text, *end = text + len, *nl;
	char ts[32];

	snprintf(ts, sizeof(ts), "%llu.%09llu", (unsigned long long)(elapsed_ns / 1000000000ull),
		 (unsigned long long)(elapsed_ns % 1000000000ull));
	if (head != HWTEL_CSV_NO_HEAD && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (head == HWTEL_CSV_HEAD) {
			fprintf(out, "%s%s", strstr("interval", sep) ? "\"interval\"" : "interval", sep);
			fwrite(p, 1, nl ? (size_t)(nl - p) : (size_t)(end - p), out);
			fputc('\n', out);
		}
		p = nl ? nl + 1 : end;
	}
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		/* RFC 4180 as the rows: "-x ." quotes the time */
		fprintf(out, strstr(ts, sep) ? "\"%s\"%s" : "%s%s", ts, sep);
		if (!nl) {
			fwrite(p, 1, (size_t)(end - p), out);
			fputc('\n', out);
			break;
		}
		fwrite(p, 1, (size_t)(nl - p + 1), out);
	}
	return ferror(out) ? -EIO : 0;
}

/*
 * -x with -w: every row starts with the time since the first reading, as
 * perf stat -I -x does ("SECONDS.NANOSECONDS" then the separator).
 */
static int csv_end(const struct hwtel_opts *o, struct buf_out *c, uint64_t elapsed_ns, int ret)
{
	if (c->f == stdout)
		return ret;
	if (fclose(c->f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		hwtel_csv_interval_rows(stdout, c->buf, c->len, o->csv_sep, elapsed_ns,
					HWTEL_CSV_NO_HEAD);
	free(c->buf);
	if (!ret)
		ret = hwtel_stdout_flush();
	return ret;
}

int hwtel_json_line(FILE *out, const char *text, size_t len, const double *interval)
{
	bool str = false, esc = false, head = interval != NULL;
	char prev = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = text[i];

		if (str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				str = false;
		} else if (c == '"') {
			str = true;
		} else if (c == '\n') {
			/* a line break and its indentation; ", " after a comma */
			while (i + 1 < len && text[i + 1] == ' ')
				i++;
			if (prev == ',')
				fputc(' ', out);
			prev = ' ';
			continue;
		}
		fputc(c, out);
		prev = c;
		if (head && c == '{') {
			fprintf(out, "\"interval\": %.9f, ", *interval);
			head = false;
		}
	}
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}

/*
 * -j: the reference tool's indented documents as nfb-pcie-telemetry, else
 * one object per line (JSON Lines under -w), as perf stat -j.
 */
static int json_end(const struct hwtel_opts *o, struct buf_out *j, uint64_t elapsed_ns,
		    int ret)
{
	double t = (double)elapsed_ns / 1e9;

	if (j->f == stdout)
		return ret;
	if (fclose(j->f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = hwtel_json_line(stdout, j->buf, j->len, o->watch ? &t : NULL);
	free(j->buf);
	return ret;
}

/*
 * SIGINT and SIGTERM are taken during the output too (output_begin() to
 * output_end()): a write or FIFO open blocked on a reader that does not
 * read then ends with EINTR and the run stops, instead of waiting for
 * the reader with the signals held.
 */
static sigset_t output_held;

static void output_begin(void)
{
	sigprocmask(SIG_SETMASK, &sleep_mask, &output_held);
}

static void output_end(void)
{
	sigprocmask(SIG_SETMASK, &output_held, NULL);
}

/*
 * The PMUs of one kind that a run follows without -d and -i (hwtel pcie
 * always, hwtel ddr with --prometheus): every PMU of the host whose name
 * has the kind's prefix, each a member of the set, in the order it joined. hwtel pcie and hwtel ddr
 * share it, so that the two exporters follow PMUs that come and go alike:
 * pmu_set_rescan() at the end of each interval adds the PMUs not in the
 * set yet, their counts starting then; pmu_set_gone() drops one whose
 * reading failed because it went away while another one is left, or (an
 * exporter, @waits) the last one too: the exporter then waits for a PMU
 * again (pmu_set_rewait()), as at its start.
 */
struct pmu_kind {
	const char *prefix;	/* of the PMU names */
	const char *what;	/* in messages */
	size_t size;		/* of a member */
	/* open PMU @name into the member @m and take its first reading */
	int (*open)(void *m, const char *name, const void *run);
	void (*free)(void *m);
	const char *(*name)(const void *m);
};

struct pmu_set {
	const struct pmu_kind *kind;
	char *v;
	unsigned int n, cap;
	char **quiet;		/* new PMUs already warned about */
	unsigned int nquiet;
	/*
	 * -w --prometheus: the run never ends because the hardware went
	 * away. It waits for its first PMU (pmu_set_wait()), and the last
	 * one vanishing empties the set instead of ending the run.
	 */
	bool waits;
};

static void *pmu_at(const struct pmu_set *s, unsigned int i)
{
	return s->v + (size_t)i * s->kind->size;
}

/* @m (a member opened by the caller) joins @s, or stays the caller's */
static int pmu_set_add(struct pmu_set *s, const void *m)
{
	if (s->n == s->cap) {
		unsigned int cap = s->cap ? 2 * s->cap : 4;
		char *v = realloc(s->v, (size_t)cap * s->kind->size);

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memcpy(pmu_at(s, s->n++), m, s->kind->size);
	return 0;
}

static void pmu_set_drop(struct pmu_set *s, unsigned int i)
{
	s->kind->free(pmu_at(s, i));
	memmove(pmu_at(s, i), pmu_at(s, i + 1), (size_t)(s->n - i - 1) * s->kind->size);
	s->n--;
}

static void pmu_set_free(struct pmu_set *s)
{
	while (s->n)
		pmu_set_drop(s, s->n - 1);
	free(s->v);
	while (s->nquiet)
		free(s->quiet[--s->nquiet]);
	free(s->quiet);
	s->v = NULL;
	s->quiet = NULL;
	s->cap = 0;
	s->nquiet = 0;
}

/*
 * Open every PMU of the kind not in @s yet (@run: the caller's, for
 * open()). @strict (the start): a PMU that cannot be opened or read fails
 * the run. Later (a PMU that appeared while the exporter runs) it is left
 * out until a later interval finds it ready, with one warning per PMU,
 * none for one that is going away or not there any more (ENODEV, ENOENT).
 */
static int pmu_set_rescan(struct pmu_set *s, bool strict, const void *run)
{
	const struct pmu_kind *kd = s->kind;
	char **names = NULL;
	int cnt = hwtel_pmu_list(kd->prefix, &names), i, ret = 0;
	void *m = malloc(kd->size);
	unsigned int k;

	if (cnt < 0 || !m) {
		hwtel_pmu_list_free(names);
		free(m);
		return strict ? (cnt < 0 ? cnt : -ENOMEM) : 0;
	}
	for (i = 0; i < cnt && !ret; i++) {
		bool known = false;

		for (k = 0; k < s->n && !known; k++)
			known = !strcmp(kd->name(pmu_at(s, k)), names[i]);
		if (known)
			continue;
		ret = kd->open(m, names[i], run);
		if (!ret) {
			ret = pmu_set_add(s, m);
			if (ret)
				kd->free(m);
			else if (!strict)
				fprintf(stderr, "hwtel: %s: new %s, exported from now on\n",
					names[i], kd->what);
		}
		if (ret && !strict && ret != -ENOMEM) {
			for (k = 0; k < s->nquiet && strcmp(s->quiet[k], names[i]); k++)
				;
			if (k == s->nquiet && ret != -ENODEV && ret != -ENOENT) {
				void *v = realloc(s->quiet, (s->nquiet + 1) * sizeof(*s->quiet));

				fprintf(stderr, "hwtel: warning: %s: cannot export the new %s: %s\n",
					names[i], kd->what, hwtel_last_error());
				if (v) {
					s->quiet = v;
					s->quiet[s->nquiet] = strdup(names[i]);
					if (s->quiet[s->nquiet])
						s->nquiet++;
				}
			}
			ret = 0;
		}
	}
	free(m);
	hwtel_pmu_list_free(names);
	return ret;
}

/*
 * An exporter (-w --prometheus, every PMU of a kind) that starts before
 * any PMU of its kind exists (at boot, before the driver is loaded) waits
 * for the first one instead of failing with exit 3: once running it
 * follows the PMUs that come and go, and its start is no different. One
 * line says that it waits; it looks once an interval (@period_ns), and
 * every PMU then found joins @s as one that appears later does (a line
 * each). 0 once @s has a member, 1 when SIGINT or SIGTERM ended the wait,
 * or a negative errno. @again: the last PMU vanished (pmu_set_rewait()).
 */
static int pmu_set_wait(struct pmu_set *s, uint64_t period_ns, const char *module,
			const void *run, bool again)
{
	int ret;

	fprintf(stderr, "hwtel: no %s* PMU %s: waiting for one (the driver: 'modprobe %s')\n",
		s->kind->prefix, again ? "left" : "yet", module);
	while (!s->n) {
		if (!sleep_until(hwtel_now_ns() + period_ns))
			return 1;
		ret = pmu_set_rescan(s, false, run);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The last PMU of an exporter's set vanished (pmu_set_gone() emptied @s):
 * the exporter does not exit (a unit would be restarted, or stay failed,
 * for hardware that may come back: a card re-seated, firmware reloaded).
 * It removes its textfile, so that node_exporter serves no frozen values
 * (the series go stale), and waits as at its start: the start-up path,
 * not a state of its own. A PMU that appears joins with its counts from
 * then on, a counter reset for rate(). 0 when a PMU joined, or when
 * SIGINT or SIGTERM ended the wait (@s still empty: the run ends, with 0
 * as after a sleep); or a negative errno.
 */
static int pmu_set_rewait(struct pmu_set *s, const char *prom_file, uint64_t period_ns,
			  const char *module, const void *run)
{
	int ret;

	hwtel_prom_remove(prom_file);
	ret = pmu_set_wait(s, period_ns, module, run, true);
	return ret == 1 ? 0 : ret;
}

/*
 * The reading of member @i failed with @ret: when it failed because the
 * PMU went away (@vanished) and another member is left, or it is the last
 * one of an exporter's set (@s->waits), drop it with a warning and return
 * true; the run goes on without it.
 */
static bool pmu_set_gone(struct pmu_set *s, unsigned int i, int ret, bool vanished)
{
	if ((s->n < 2 && !s->waits) || (ret != -ENODEV && !vanished))
		return false;
	fprintf(stderr, "hwtel: warning: the %s %s vanished: no longer exported\n",
		s->kind->what, s->kind->name(pmu_at(s, i)));
	pmu_set_drop(s, i);
	return true;
}

/*
 * The PCIe telemetry blocks of a hwtel pcie run. One, the one -d/-i names,
 * or the first as nfb-pcie-telemetry (the reference tool has one device).
 * Without -d and -i, as perf stat without a PMU filter and hwtel ddr: every
 * ndk_pcie_tlm PMU of the host (two NDK cards, or a card with several
 * PCIE_TELEMETRY blocks), a struct pmu_set: each block in every report
 * (text, JSON, CSV) and in the one exposition, in the order they joined; a
 * block that vanishes (card removed, firmware reloaded) is dropped while
 * others remain, and a new one is added at the end of each interval; the
 * last one vanishing ends the run (exit 5), as with one block, except in
 * an exporter (-w --prometheus), which waits for a block again. -c clears
 * every block of the set.
 */
struct pcie_blk {
	struct hwtel_pcie *h;
	struct hwtel_pcie_data *a, *b, *diff, *first, *cum;
	struct hwtel_pcie_flag_count fc;
	bool reported;		/* cum holds a whole interval (or the totals) */
};

struct pcie_run {
	struct pmu_set set;	/* of struct pcie_blk */
	unsigned int bad;	/* the block whose reading failed */
	unsigned int flags;	/* HWTEL_OPEN_* of every block */
	bool all;
	bool totals;
};

static struct pcie_blk *blk(const struct pcie_run *r, unsigned int k)
{
	return pmu_at(&r->set, k);
}

static void pcie_blk_free(void *m)
{
	struct pcie_blk *k = m;

	hwtel_pcie_close(k->h);
	hwtel_pcie_data_free(k->a);
	hwtel_pcie_data_free(k->b);
	hwtel_pcie_data_free(k->diff);
	hwtel_pcie_data_free(k->first);
	hwtel_pcie_data_free(k->cum);
	memset(k, 0, sizeof(*k));
}

static int pcie_blk_open(struct pcie_blk *k, const char *device, unsigned int index,
			 unsigned int flags)
{
	int ret;

	memset(k, 0, sizeof(*k));
	ret = hwtel_pcie_open(device, index, flags, &k->h);
	if (ret)
		return ret;
	k->a = hwtel_pcie_data_new(k->h);
	k->b = hwtel_pcie_data_new(k->h);
	k->diff = hwtel_pcie_data_new(k->h);
	k->first = hwtel_pcie_data_new(k->h);
	k->cum = hwtel_pcie_data_new(k->h);
	if (!k->a || !k->b || !k->diff || !k->first || !k->cum) {
		pcie_blk_free(k);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The control plane refused EP_GET (no CAP_PERFMON): say once what the
 * report lacks. The counters come from perf, which perf_event_paranoid
 * allowed.
 */
static void warn_no_state(const struct hwtel_pcie *h)
{
	fprintf(stderr, "hwtel: warning: %s: the control plane needs CAP_PERFMON or CAP_SYS_ADMIN: reporting the counters without the link state, the gauges (free tags and FIFO words, lowest marks) and the STATUS flags (LOST DELTAS, READ-OUT OVERRUN)\n",
		hwtel_pcie_name(h));
}

/* The first reading of an interval run, where every interval starts from. */
static int pcie_blk_start(struct pcie_blk *k)
{
	int ret = hwtel_pcie_read(k->h, k->a);

	if (ret)
		return ret;
	if (!k->a->state_valid)
		warn_no_state(k->h);
	hwtel_pcie_data_copy(k->first, k->a);
	return 0;
}

/* pmu_kind.open of a block that joins the run */
static int pcie_blk_join(void *m, const char *name, const void *run)
{
	const struct pcie_run *r = run;
	int ret = pcie_blk_open(m, name, 0, r->flags);

	if (!ret && !(r->flags & HWTEL_OPEN_NO_PERF)) {
		ret = pcie_blk_start(m);
		if (ret)
			pcie_blk_free(m);
	}
	return ret;
}

static const char *pcie_blk_name(const void *m)
{
	return hwtel_pcie_name(((const struct pcie_blk *)m)->h);
}

static const struct pmu_kind pcie_kind = {
	.prefix = HWTEL_PCIE_PMU_PREFIX,
	.what = "PCIe telemetry device",
	.size = sizeof(struct pcie_blk),
	.open = pcie_blk_join,
	.free = pcie_blk_free,
	.name = pcie_blk_name,
};

/*
 * Read every block: its totals (-t 0), or its counters, the interval's
 * difference and the run's. In "all" mode a block that vanished is dropped
 * with a warning while another one is left.
 */
static int pcie_read_all(struct pcie_run *r)
{
	unsigned int k = 0;
	int ret;

	while (k < r->set.n) {
		struct pcie_blk *b = blk(r, k);

		ret = r->totals ? hwtel_pcie_read_totals(b->h, b->a) : hwtel_pcie_read(b->h, b->b);
		if (ret && r->all && pmu_set_gone(&r->set, k, ret, hwtel_pcie_vanished(b->h)))
			continue;
		if (ret) {
			r->bad = k;
			return ret;
		}
		if (r->totals) {
			hwtel_pcie_data_copy(b->cum, b->a);
		} else {
			hwtel_pcie_diff(b->b, b->a, b->diff);
			hwtel_pcie_diff(b->b, b->first, b->cum);
			if (hwtel_pcie_seconds(b->b, b->a) > 0)
				hwtel_pcie_flag_count_add(&b->fc, b->diff);
		}
		b->reported = true;
		k++;
	}
	return 0;
}

static int pcie_write_prom(const char *path, const struct pcie_run *r, double seconds)
{
	const struct hwtel_pcie_data **cum = calloc(r->set.n ? r->set.n : 1, sizeof(*cum));
	const struct hwtel_pcie_flag_count **fc = calloc(r->set.n ? r->set.n : 1, sizeof(*fc));
	char *buf = NULL;
	size_t len = 0;
	unsigned int k, m = 0;
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (cum && fc)
		f = open_memstream(&buf, &len);
	if (f) {
		for (k = 0; k < r->set.n; k++) {
			if (!blk(r, k)->reported)
				continue;
			cum[m] = blk(r, k)->cum;
			fc[m++] = &blk(r, k)->fc;
		}
		ret = hwtel_pcie_prom(f, cum, fc, m, seconds);
		if (fclose(f) && !ret)
			ret = -ENOMEM;
		if (!ret)
			ret = hwtel_prom_write(path, buf, len);
	}
	free(buf);
	free(cum);
	free(fc);
	return ret;
}

/*
 * What block @k reports: its totals (-t 0), or the interval's difference
 * over its own wall time (*@seconds).
 */
static const struct hwtel_pcie_data *pcie_blk_report(const struct pcie_run *r, unsigned int k,
						     double *seconds)
{
	const struct pcie_blk *b = blk(r, k);

	if (r->totals) {
		*seconds = 0;
		return b->a;
	}
	*seconds = hwtel_pcie_seconds(b->b, b->a);
	return b->diff;
}

/*
 * The report of every block of @r on stdout: one JSON object (one line) per
 * block, each naming its PMU in "hwtel"; the CSV rows of each block, their
 * events "PMU/event/"; the text report of each block, under a line "PMU
 * <name>" when there are more than one (one block's report is the
 * reference tool's, byte for byte). @seconds: the exposition's interval.
 */
static int pcie_output(const struct hwtel_opts *o, const struct pcie_run *r,
		       double seconds, uint64_t elapsed_ns, bool more)
{
	const struct hwtel_pcie_data *d;
	struct buf_out j, c;
	unsigned int k;
	double s;
	int ret = 0;

	output_begin();

	if (!o->quiet) {
		if (o->json) {
			for (k = 0; k < r->set.n && !ret; k++) {
				d = pcie_blk_report(r, k, &s);
				ret = out_begin(!o->compat, &j);
				if (!ret)
					ret = json_end(o, &j, elapsed_ns,
						       hwtel_pcie_format_json(j.f, d, s));
			}
		} else if (o->csv_sep) {
			ret = out_begin(o->watch, &c);
			if (!ret) {
				for (k = 0; k < r->set.n && !ret; k++) {
					d = pcie_blk_report(r, k, &s);
					ret = hwtel_pcie_format_csv(c.f, d, s, o->csv_sep);
				}
				ret = csv_end(o, &c, elapsed_ns, ret);
			}
		} else {
			for (k = 0; k < r->set.n && !ret; k++) {
				d = pcie_blk_report(r, k, &s);
				if (r->set.n > 1)
					printf("%sPMU %s\n", k ? "\n" : "", d->pmu);
				ret = hwtel_pcie_format_text(stdout, d, s);
			}
		}
		/* a blank line between reports, not between CSV rows or JSON lines */
		if (more && !o->csv_sep && !(o->json && !o->compat))
			fputc('\n', stdout);
		{
			int w = hwtel_stdout_flush();

			if (w)
				ret = w;	/* the write's errno, not a formatter's EIO */
		}
	}
	if (!ret && o->prom_file)
		ret = pcie_write_prom(o->prom_file, r, seconds);
	output_end();
	return ret;
}

/* the exporter's look for a block: once an interval, or a second (-t 0) */
static uint64_t pcie_period_ns(const struct hwtel_opts *o, const struct pcie_run *r)
{
	return (uint64_t)((r->totals ? 1 : o->interval) * 1e9);
}

/* The last block vanished (r->set.waits): wait for one again. */
static int pcie_rewait(const struct hwtel_opts *o, struct pcie_run *r)
{
	return pmu_set_rewait(&r->set, o->prom_file, pcie_period_ns(o, r), HWTEL_PCIE_MODULE, r);
}

static int cmd_pcie(const struct hwtel_opts *o)
{
	struct pcie_run r;
	struct pcie_blk first;
	uint64_t t0 = 0;
	long n = 0;
	unsigned int k;
	bool waited = false;
	int ret, status = HWTEL_EXIT_OK;

	memset(&r, 0, sizeof(r));
	r.set.kind = &pcie_kind;
	r.totals = !o->command && o->interval == 0;
	r.all = !o->compat && !(o->device && *o->device) && !o->index;
	if (o->clear || r.totals)
		r.flags |= HWTEL_OPEN_NO_PERF;
	else
		r.flags |= HWTEL_OPEN_STATE_OPTIONAL;
	r.set.waits = r.all && o->prom_file && o->watch && !o->clear;
	/* the exporter started before any block (the card not attached yet) */
	if (r.set.waits) {
		char **names = NULL;
		int cnt = hwtel_pmu_list(HWTEL_PCIE_PMU_PREFIX, &names);

		hwtel_pmu_list_free(names);
		if (cnt == 0) {
			ret = pmu_set_wait(&r.set, pcie_period_ns(o, &r), HWTEL_PCIE_MODULE, &r,
					   false);
			if (ret == 1) {
				ret = 0;	/* stopped before any block */
				goto out;
			}
			if (ret)
				goto out;
			waited = true;
		}
	}
	if (!waited) {
		ret = pcie_blk_open(&first, o->device, o->index, r.flags);
		if (ret)
			return fail(ret);
		ret = pmu_set_add(&r.set, &first);
		if (ret) {
			pcie_blk_free(&first);
			goto out;
		}
	}
	if (o->clear) {
		if (r.all) {
			ret = pmu_set_rescan(&r.set, true, &r);
			if (ret) {
				r.bad = UINT_MAX;	/* not a block of the run */
				goto out;
			}
		}
		for (k = 0; k < r.set.n && !ret; k++) {
			r.bad = k;
			ret = hwtel_pcie_clear(blk(&r, k)->h, HWTEL_CLEAR_ALL);
		}
		if (!ret)
			printf("Counters cleared.\n");
		goto out;
	}
	/*
	 * No clear here nor after any reading: the flags and lowest marks are
	 * the block's, shared with every other reader (an exporter, the PCP
	 * agent, a user), and hold since the last explicit clear (-c).
	 */
	if (!r.totals) {
		ret = waited ? 0 : pcie_blk_start(blk(&r, 0));	/* joined: started */
		if (ret)
			goto out;
		t0 = blk(&r, 0)->first->timestamp_ns;
	}
	if (r.all) {
		ret = pmu_set_rescan(&r.set, true, &r);
		if (ret) {
			r.bad = UINT_MAX;	/* not a block of the run */
			goto out;
		}
	}
	if (r.totals) {
		for (;;) {
			ret = pcie_read_all(&r);
			if (ret == -EACCES) {
				fprintf(stderr, "hwtel: error: %s; an interval (-t SEC) needs only perf's permission\n",
					hwtel_last_error());
				status = HWTEL_EXIT_PERM;
				ret = 0;
				goto out;
			}
			if (ret)
				goto out;
			if (!r.set.n) {
				ret = pcie_rewait(o, &r);
				if (ret || !r.set.n)
					goto out;
				continue;
			}
			n++;
			if (n == 1)
				t0 = blk(&r, 0)->a->timestamp_ns;
			ret = pcie_output(o, &r, 0, blk(&r, 0)->a->timestamp_ns - t0, o->watch);
			if (hwtel_output_stopped(ret))
				ret = 0;	/* stopped while the output blocked */
			if (ret || stop_sig || !o->watch || (o->count && n >= o->count))
				goto out;
			if (r.all)
				pmu_set_rescan(&r.set, false, &r);
			if (!sleep_until(hwtel_now_ns() + 1000000000ull))
				goto out;
		}
	}

	for (;;) {
		double seconds;

		if (o->command) {
			int cst = 0;

			if (run_command(o->command, &cst) < 0) {
				status = HWTEL_EXIT_CHILD;
				goto out;
			}
			if (cst == 127) {
				status = HWTEL_EXIT_CHILD;
				goto out;
			}
			status = cst;
		} else if (!sleep_until(blk(&r, 0)->a->timestamp_ns + (uint64_t)(o->interval * 1e9)) &&
			   o->watch) {
			/* a single interval cut short is reported, as perf stat does */
			break;
		}
		ret = pcie_read_all(&r);
		if (ret)
			goto out;
		if (!r.set.n) {
			/* the new block's first reading starts the next interval */
			ret = pcie_rewait(o, &r);
			if (ret || !r.set.n)
				goto out;
			continue;
		}
		/* wall time between the two snapshots */
		seconds = hwtel_pcie_seconds(blk(&r, 0)->b, blk(&r, 0)->a);
		n++;
		ret = pcie_output(o, &r, seconds, blk(&r, 0)->b->timestamp_ns - t0,
				  o->watch && !(o->count && n >= o->count));
		if (hwtel_output_stopped(ret))
			ret = 0;	/* stopped while the output blocked */
		if (ret || stop_sig || !o->watch || o->command || (o->count && n >= o->count))
			break;
		for (k = 0; k < r.set.n; k++)
			hwtel_pcie_data_copy(blk(&r, k)->a, blk(&r, k)->b);
		if (r.all)
			pmu_set_rescan(&r.set, false, &r);
	}
out:
	{
		struct hwtel_pcie *h = r.bad < r.set.n ? blk(&r, r.bad)->h : NULL;

		if (ret == -ENODEV || (ret && h && hwtel_pcie_vanished(h))) {
			fprintf(stderr, "hwtel: error: the PCIe telemetry device %s vanished: %s\n",
				h ? hwtel_pcie_name(h) : "?", hwtel_last_error());
			status = HWTEL_EXIT_VANISHED;
		} else if (ret) {
			status = fail(ret);
		}
	}
	prom_stop(o, status);
	pmu_set_free(&r.set);
	return status;
}

/* ------------------------------------------------------------------ */

/*
 * The DDR controllers of a hwtel ddr run: the one -d/-i names, or every
 * mrvl_ddr_pmu_* PMU of the host. With --prometheus (and no -d, -i) they
 * are a struct pmu_set as hwtel pcie's blocks: a PMU that registers while
 * the exporter runs (a driver probing its controllers after the exporter
 * started at boot) joins at the end of an interval, its counts starting
 * then; one that vanishes is dropped while another is left.
 */
struct ddr_ctl {
	struct hwtel_ddr *h;
	struct hwtel_ddr_data *a, *b, *diff, *first, *cum;
};

struct ddr_run {
	struct pmu_set set;	/* of struct ddr_ctl */
	const char *events;	/* -e */
};

static struct ddr_ctl *ctl(const struct ddr_run *r, unsigned int k)
{
	return pmu_at(&r->set, k);
}

static void ddr_ctl_free(void *m)
{
	struct ddr_ctl *c = m;

	hwtel_ddr_close(c->h);
	hwtel_ddr_data_free(c->a);
	hwtel_ddr_data_free(c->b);
	hwtel_ddr_data_free(c->diff);
	hwtel_ddr_data_free(c->first);
	hwtel_ddr_data_free(c->cum);
	memset(c, 0, sizeof(*c));
}

/* open a controller and take its first reading */
static int ddr_ctl_open(struct ddr_ctl *c, const char *device, unsigned int index,
			const char *events)
{
	int ret;

	memset(c, 0, sizeof(*c));
	ret = hwtel_ddr_open(device, index, events, &c->h);
	if (ret)
		return ret;
	c->a = hwtel_ddr_data_new(c->h);
	c->b = hwtel_ddr_data_new(c->h);
	c->diff = hwtel_ddr_data_new(c->h);
	c->first = hwtel_ddr_data_new(c->h);
	c->cum = hwtel_ddr_data_new(c->h);
	if (!c->a || !c->b || !c->diff || !c->first || !c->cum) {
		ddr_ctl_free(c);
		return -ENOMEM;
	}
	ret = hwtel_ddr_read(c->h, c->a);
	if (!ret)
		ret = hwtel_ddr_data_copy(c->first, c->a);
	if (ret) {
		ddr_ctl_free(c);
		return ret;
	}
	return 0;
}

static int ddr_ctl_join(void *m, const char *name, const void *run)
{
	return ddr_ctl_open(m, name, 0, ((const struct ddr_run *)run)->events);
}

static const char *ddr_ctl_name(const void *m)
{
	return hwtel_ddr_name(((const struct ddr_ctl *)m)->h);
}

static const struct pmu_kind ddr_kind = {
	.prefix = HWTEL_DDR_PMU_PREFIX,
	.what = "DDR PMU",
	.size = sizeof(struct ddr_ctl),
	.open = ddr_ctl_join,
	.free = ddr_ctl_free,
	.name = ddr_ctl_name,
};

static int ddr_output(const struct hwtel_opts *o, const struct hwtel_ddr_data *const *d,
		      const struct hwtel_ddr_data *const *cum, unsigned int n, double seconds,
		      uint64_t elapsed_ns, bool more)
{
	struct buf_out j, c;
	unsigned int k;
	int ret = 0;

	output_begin();
	if (!o->quiet) {
		if (o->json) {
			ret = out_begin(!o->compat, &j);
			if (!ret)
				ret = json_end(o, &j, elapsed_ns,
					       hwtel_ddr_format_json(j.f, d, n, seconds));
		} else if (o->csv_sep) {
			ret = out_begin(o->watch, &c);
			if (!ret) {
				for (k = 0; k < n && !ret; k++)
					ret = hwtel_ddr_format_csv(c.f, d[k], seconds, o->csv_sep);
				ret = csv_end(o, &c, elapsed_ns, ret);
			}
		} else {
			for (k = 0; k < n && !ret; k++) {
				if (k)
					fputc('\n', stdout);
				ret = hwtel_ddr_format_text(stdout, d[k], seconds);
			}
		}
		/* a blank line between reports, not between CSV rows or JSON lines */
		if (more && !o->csv_sep && !(o->json && !o->compat))
			fputc('\n', stdout);
		{
			int w = hwtel_stdout_flush();

			if (w)
				ret = w;	/* the write's errno, not a formatter's EIO */
		}
	}
	if (!ret && o->prom_file)
		ret = write_prom(o->prom_file, prom_ddr, cum, d, seconds, n);
	output_end();
	return ret;
}

static int cmd_ddr(const struct hwtel_opts *o)
{
	struct ddr_run r = { .set.kind = &ddr_kind, .events = o->events };
	const struct hwtel_ddr_data **diff = NULL, **cum = NULL;	/* of every controller */
	bool all = !(o->device && *o->device) && !o->index;
	bool follow = all && o->prom_file;
	unsigned int k, bad = UINT_MAX;
	long iter = 0;
	int ret = 0, status = HWTEL_EXIT_OK;
	uint64_t t0, start;

	r.set.waits = follow && o->watch && !o->command;
	if (!all) {
		struct ddr_ctl c;

		ret = ddr_ctl_open(&c, o->device && *o->device ? o->device : NULL, o->index,
				   o->events);
		if (ret)
			return fail(ret);
		ret = pmu_set_add(&r.set, &c);
		if (ret) {
			ddr_ctl_free(&c);
			return fail(ret);
		}
	} else {
		char **names = NULL;
		int cnt = hwtel_pmu_list(HWTEL_DDR_PMU_PREFIX, &names);

		hwtel_pmu_list_free(names);
		if (cnt < 0)
			return fail(cnt);
		if (cnt == 0 && r.set.waits) {
			ret = pmu_set_wait(&r.set, (uint64_t)(o->interval * 1e9), HWTEL_DDR_MODULE, &r,
					   false);
			if (ret == 1)
				return HWTEL_EXIT_OK;	/* stopped before any PMU */
		} else if (cnt == 0) {
			fprintf(stderr, "hwtel: error: no %s* PMU found: load the driver with 'modprobe %s'\n",
				HWTEL_DDR_PMU_PREFIX, HWTEL_DDR_MODULE);
			return HWTEL_EXIT_NOPMU;
		} else {
			ret = pmu_set_rescan(&r.set, true, &r);
		}
		if (!ret && !r.set.n)
			ret = -ENODEV;	/* gone since the listing */
		if (ret)
			goto out;
	}
	t0 = ctl(&r, 0)->a->timestamp_ns;
	start = t0;
	for (;;) {
		double seconds;
		unsigned int n;

		if (o->command) {
			int cst = 0;

			if (run_command(o->command, &cst) < 0 || cst == 127) {
				status = HWTEL_EXIT_CHILD;
				goto out;
			}
			status = cst;
		} else if (!sleep_until(t0 + (uint64_t)(o->interval * 1e9)) && o->watch) {
			/* a single interval cut short is reported, as perf stat does */
			break;
		}
		k = 0;
		while (k < r.set.n) {
			struct ddr_ctl *c = ctl(&r, k);

			ret = hwtel_ddr_read(c->h, c->b);
			if (ret && follow && pmu_set_gone(&r.set, k, ret, hwtel_ddr_vanished(c->h)))
				continue;
			if (ret) {
				bad = k;
				goto out;
			}
			ret = hwtel_ddr_diff(c->b, c->a, c->diff);
			if (!ret)
				ret = hwtel_ddr_diff(c->b, c->first, c->cum);
			if (ret) {
				bad = k;
				goto out;
			}
			k++;
		}
		if (!r.set.n) {
			/* the last one vanished (r.set.waits): wait as at the start */
			ret = pmu_set_rewait(&r.set, o->prom_file, (uint64_t)(o->interval * 1e9),
					     HWTEL_DDR_MODULE, &r);
			if (ret || !r.set.n)
				goto out;
			t0 = ctl(&r, 0)->a->timestamp_ns;	/* its first reading */
			continue;
		}
		n = r.set.n;
		free(diff);
		free(cum);
		diff = malloc((n ? n : 1) * sizeof(*diff));
		cum = malloc((n ? n : 1) * sizeof(*cum));
		if (!diff || !cum) {
			ret = -ENOMEM;
			goto out;
		}
		for (k = 0; k < n; k++) {
			diff[k] = ctl(&r, k)->diff;
			cum[k] = ctl(&r, k)->cum;
		}
		/* wall time between the two bandwidth readings */
		seconds = (double)(ctl(&r, 0)->b->timestamp_ns - ctl(&r, 0)->a->timestamp_ns) / 1e9;
		iter++;
		ret = ddr_output(o, diff, cum, n, seconds, ctl(&r, 0)->b->timestamp_ns - start,
				 o->watch && !(o->count && iter >= o->count));
		if (hwtel_output_stopped(ret))
			ret = 0;	/* stopped while the output blocked */
		if (ret || stop_sig || !o->watch || o->command || (o->count && iter >= o->count))
			break;
		for (k = 0; k < n; k++)
			hwtel_ddr_data_copy(ctl(&r, k)->a, ctl(&r, k)->b);
		t0 += (uint64_t)(o->interval * 1e9);
		if (follow)
			pmu_set_rescan(&r.set, false, &r);
	}
out:
	if (ret) {
		bool gone = ret == -ENODEV;

		for (k = 0; k < r.set.n; k++)
			if ((bad == UINT_MAX || bad == k) && hwtel_ddr_vanished(ctl(&r, k)->h))
				gone = true;
		if (gone) {
			fprintf(stderr, "hwtel: error: a DDR PMU vanished: %s\n", hwtel_last_error());
			status = HWTEL_EXIT_VANISHED;
		} else {
			status = fail(ret);
		}
	}
	prom_stop(o, status);
	pmu_set_free(&r.set);
	free(diff);
	free(cum);
	return status;
}

/* ------------------------------------------------------------------ */

static int list_prefix(const char *prefix, const char *what)
{
	char **names = NULL;
	int n, i;

	n = hwtel_pmu_list(prefix, &names);
	for (i = 0; i < n; i++) {
		struct hwtel_pmu *pmu;
		char id[80] = "", evdir[PATH_MAX];
		struct dirent **ev = NULL;
		int ne, k;

		if (hwtel_pmu_open(names[i], &pmu)) {
			printf("%s  (unreadable: %s)\n", names[i], hwtel_last_error());
			continue;
		}
		hwtel_pmu_read_attr(pmu, "identifier", id, sizeof(id));
		printf("%s  %s%s%s, cpu %d\n", hwtel_pmu_name(pmu), what, id[0] ? ", " : "", id,
		       hwtel_pmu_cpu(pmu));
		snprintf(evdir, sizeof(evdir), "%s/events", hwtel_pmu_path(pmu));
		hwtel_pmu_close(pmu);
		ne = scandir(evdir, &ev, NULL, alphasort);
		for (k = 0; k < ne; k++) {
			char path[PATH_MAX + 300], def[128] = "";
			const char *desc;

			if (ev[k]->d_name[0] == '.' || strchr(ev[k]->d_name, '.')) {
				free(ev[k]);
				continue;
			}
			snprintf(path, sizeof(path), "%s/%s", evdir, ev[k]->d_name);
			{
				FILE *f = fopen(path, "r");

				if (f) {
					if (fgets(def, sizeof(def), f))
						def[strcspn(def, "\n")] = '\0';
					fclose(f);
				}
			}
			desc = !strcmp(prefix, HWTEL_DDR_PMU_PREFIX) ?
			       hwtel_ddr_event_desc(ev[k]->d_name) :
			       hwtel_pcie_event_desc(ev[k]->d_name);
			printf("  %-30s %-26s %s\n", ev[k]->d_name, def, desc ? desc : "");
			free(ev[k]);
		}
		free(ev);
	}
	hwtel_pmu_list_free(names);
	return n < 0 ? 0 : n;
}

static int cmd_list(void)
{
	int n = 0;

	n += list_prefix(HWTEL_PCIE_PMU_PREFIX, "PCIe telemetry (NDK PCIE_TELEMETRY_MI)");
	n += list_prefix(HWTEL_DDR_PMU_PREFIX, "DDR controller (Marvell DSS)");
	if (!n) {
		fprintf(stderr, "hwtel: error: no supported PMU found in %s/bus/event_source/devices: load 'modprobe %s' (PCIe telemetry) or 'modprobe %s' (DDR)\n",
			hwtel_sysfs_root(), HWTEL_PCIE_MODULE, HWTEL_DDR_MODULE);
		return HWTEL_EXIT_NOPMU;
	}
	return HWTEL_EXIT_OK;
}

/*
 * An interval report opens one perf event per counter (up to 16 x 255 at
 * the largest layout): raise the descriptor soft limit to the hard limit,
 * as perf does, before opening anything.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int hwtel_main(int argc, char **argv)
{
	struct hwtel_opts o;
	struct sigaction sa;
	sigset_t block;
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "gpu"))
		return hwtel_gpu_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "record")) {
		raise_nofile();
		return hwtel_record_main(argc - 1, argv + 1);
	}
	if (argc >= 2 && !strcmp(argv[1], "report"))
		return hwtel_report_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "nfb"))
		return hwtel_nfb_main(argc - 1, argv + 1);
	raise_nofile();

	ret = hwtel_parse_args(argc, argv, &o, stdout, stderr);
	if (ret >= 0)
		return ret;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &sleep_mask);
	if (o.command) {
		/* like perf stat: the command gets the signals, we wait for it */
		signal(SIGINT, SIG_IGN);
	}
	switch (o.cmd) {
	case CMD_PCIE:
		return cmd_pcie(&o);
	case CMD_DDR:
		return cmd_ddr(&o);
	case CMD_LIST:
		return cmd_list();
	default:
		usage(stderr);
		return HWTEL_EXIT_USAGE;
	}
}
