// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel gpu: GPU power consumers from the Mali Utgard internal profiling
 * (debugfs mali/profiling/) or from the DRM fdinfo usage stats and devfreq
 * of mainline drivers, see hwtel(1).
 *
 *   hwtel gpu [-t SEC | -- COMMAND] [-w [-n N]] [-j | -x SEP]
 *             [--prometheus FILE [-q]] [--opp FILE] [--initial-opp MHZ:MV]
 *             [--source auto|mali|drm] [--sample MS] [--no-hold]
 *             [--debugfs DIR] [--no-proc-events] [--buffer-events N]
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libhwtel/gpu.h>
#include <libhwtel/hwtel.h>

#include "cli.h"

static volatile sig_atomic_t gpu_stop;

static void gpu_on_signal(int sig)
{
	gpu_stop = sig;
	hwtel_stopped_by = sig;
}

struct gpu_opts {
	double interval;
	bool interval_set, watch, json, quiet, no_proc, no_hold;
	const char *source;
	long sample_ms;
	long count;
	unsigned long buffer_events;
	const char *csv_sep, *prom_file, *opp_file, *debugfs;
	bool initial_set;
	uint32_t init_mhz, init_mv;
	char **command;
};

static void gpu_usage(FILE *f)
{
	fputs("usage: hwtel gpu [-t SEC | -- COMMAND] [-w [-n N]] [-j | -x SEP]\n"
	      "                 [--prometheus FILE [-q]] [--opp FILE] [--initial-opp MHZ:MV]\n"
	      "                 [--source auto|mali|drm] [--sample MS] [--no-hold]\n"
	      "                 [--debugfs DIR] [--no-proc-events] [--buffer-events N]\n"
	      "\n"
	      "GPU power consumers per process from the Mali Utgard internal profiling\n"
	      "(debugfs mali/profiling/) or from the DRM fdinfo usage stats and devfreq\n"
	      "of mainline drivers. Energy in pseudo-joules: P = C V^2 f with\n"
	      "1 PW = one GPU unit busy at 266 MHz and 1 V.\n"
	      "\n"
	      "  -t, --interval SEC     measured interval (default 1)\n"
	      "  -w, --watch            repeat until SIGINT/SIGTERM;  -n N: N intervals\n"
	      "  -j, --json             JSON;  -x SEP: CSV with separator SEP\n"
	      "      --prometheus FILE  also write the node_exporter textfile FILE (atomic)\n"
	      "  -q, --quiet            no report on stdout (with --prometheus)\n"
	      "      --opp FILE         operating points, \"MHZ MV\" per line: a lone\n"
	      "                         frequency or voltage event gives the other value\n"
	      "      --initial-opp MHZ:MV  operating point before the first DVFS event\n"
	      "      --source SRC       mali, drm, or auto (default: mali when its debugfs\n"
	      "                         files exist, else drm)\n"
	      "      --sample MS        drm: read fdinfo and devfreq every MS ms (default 100)\n"
	      "      --no-hold          drm: do not keep clients' files open (pidfd_getfd)\n"
	      "      --debugfs DIR      debugfs mount point (default $HWTEL_DEBUGFS or\n"
	      "                         /sys/kernel/debug)\n"
	      "      --no-proc-events   names from /proc only (no proc connector)\n"
	      "      --buffer-events N  mali: events the driver's buffer holds (default\n"
	      "                         1048576): a recording of N events filled it\n"
	      "  -- COMMAND             measure while COMMAND runs instead of -t SEC\n"
	      "\n"
	      "See hwtel(1).\n", f);
}

static int gpu_usage_error(const char *fmt, const char *arg)
{
	fputs("hwtel: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	gpu_usage(stderr);
	return HWTEL_EXIT_USAGE;
}

static int gpu_parse(int argc, char **argv, struct gpu_opts *o)
{
	enum { OPT_PROM = 256, OPT_OPP, OPT_INIT, OPT_DEBUGFS, OPT_NOPROC, OPT_SOURCE,
	       OPT_SAMPLE, OPT_NOHOLD, OPT_BUFFER };
	static const struct option lopts[] = {
		{ "interval", required_argument, NULL, 't' },
		{ "watch", no_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "prometheus", required_argument, NULL, OPT_PROM },
		{ "quiet", no_argument, NULL, 'q' },
		{ "opp", required_argument, NULL, OPT_OPP },
		{ "initial-opp", required_argument, NULL, OPT_INIT },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "no-proc-events", no_argument, NULL, OPT_NOPROC },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "no-hold", no_argument, NULL, OPT_NOHOLD },
		{ "buffer-events", required_argument, NULL, OPT_BUFFER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long mhz, mv;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->interval = 1.0;
	o->source = "auto";
	o->sample_ms = 100;
	o->buffer_events = 1048576;	/* MALI_PROFILING_MAX_BUFFER_ENTRIES */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:t:wn:jx:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 't':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || *end || !*optarg || !isfinite(o->interval) ||
			    o->interval <= 0 || o->interval > 86400 * 365)
				return gpu_usage_error("argument -t/--interval: invalid value '%s'",
						       optarg);
			/* as perf stat's -I and --timeout */
			if (o->interval < 0.01)
				return gpu_usage_error("argument -t/--interval: '%s' s is under 10 ms, the shortest interval: give 0.01 or more",
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
				return gpu_usage_error("argument -n/--count: invalid value '%s'", optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'x':
			if (!*optarg)
				return gpu_usage_error("argument -x: empty separator%s", "");
			if (strpbrk(optarg, "\"\n\r"))
				return gpu_usage_error("argument -x: '%s' holds a double quote or a line break, which no CSV field can be quoted around: choose another separator",
						       optarg);
			o->csv_sep = optarg;
			break;
		case OPT_PROM:
			if (!*optarg)
				return gpu_usage_error("argument --prometheus: empty file name%s", "");
			o->prom_file = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_OPP:
			o->opp_file = optarg;
			break;
		case OPT_INIT:
			errno = 0;
			mhz = strtoul(optarg, &end, 10);
			if (errno || *end != ':' || !isdigit((unsigned char)optarg[0]) ||
			    !isdigit((unsigned char)end[1]) || !mhz || mhz > UINT32_MAX)
				return gpu_usage_error("argument --initial-opp: expected MHZ:MV, got '%s'",
						       optarg);
			mv = strtoul(end + 1, &end, 10);
			if (errno || *end || !mv || mv > UINT32_MAX)
				return gpu_usage_error("argument --initial-opp: expected MHZ:MV, got '%s'",
						       optarg);
			o->initial_set = true;
			o->init_mhz = (uint32_t)mhz;
			o->init_mv = (uint32_t)mv;
			break;
		case OPT_DEBUGFS:
			o->debugfs = optarg;
			break;
		case OPT_NOPROC:
			o->no_proc = true;
			break;
		case OPT_SOURCE:
			if (strcmp(optarg, "auto") && strcmp(optarg, "mali") && strcmp(optarg, "drm"))
				return gpu_usage_error("argument --source: expected auto, mali or drm, got '%s'",
						       optarg);
			o->source = optarg;
			break;
		case OPT_SAMPLE:
			errno = 0;
			o->sample_ms = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || o->sample_ms < 1 || o->sample_ms > 3600000)
				return gpu_usage_error("argument --sample: invalid value '%s' (1..3600000 ms)",
						       optarg);
			break;
		case OPT_NOHOLD:
			o->no_hold = true;
			break;
		case OPT_BUFFER:
			errno = 0;
			o->buffer_events = strtoul(optarg, &end, 10);
			if (errno || *end || !isdigit((unsigned char)optarg[0]) || !o->buffer_events)
				return gpu_usage_error("argument --buffer-events: invalid value '%s'",
						       optarg);
			break;
		case 'h':
			gpu_usage(stdout);
			return HWTEL_EXIT_OK;
		case ':':
			return gpu_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return gpu_usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->command = &argv[optind];
	if (o->json && o->csv_sep)
		return gpu_usage_error("-j and -x exclude each other%s", "");
	if (o->command && (o->watch || o->interval_set))
		return gpu_usage_error("a COMMAND replaces -t/-w%s", "");
	if (o->count && !o->watch)
		return gpu_usage_error("-n/--count needs -w%s", "");
	if (o->quiet && !o->prom_file)
		return gpu_usage_error("-q needs --prometheus%s", "");
	if (!o->debugfs)
		o->debugfs = getenv("HWTEL_DEBUGFS");
	if (!o->debugfs || !*o->debugfs)
		o->debugfs = "/sys/kernel/debug";
	return -1;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool gpu_sleep_until(uint64_t mono_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(mono_ns / 1000000000ull),
		.tv_nsec = (long)(mono_ns % 1000000000ull),
	};

	while (!gpu_stop) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r == 0)
			return !gpu_stop;
		if (r != EINTR)
			return false;
	}
	return false;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* The whole file; *len its size. NULL with errno set on failure. */
static char *read_all(const char *path, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = fd < 0 ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

static int gpu_run_command(char **argv, int *status)
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
		execvp(argv[0], argv);
		fprintf(stderr, "hwtel: error: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/* the start of the first interval reported: -w's "interval" times count from it */
static uint64_t gpu_start_ns;
static bool gpu_started;

static int gpu_output(const struct gpu_opts *o, const struct hwtel_gpu_report *cum,
		      const struct hwtel_gpu_report *r, bool more)
{
	int ret = 0;

	if (!gpu_started) {
		gpu_start_ns = r->t0_ns;
		gpu_started = true;
	}
	if (!o->quiet) {
		if (o->json) {
			/*
			 * one object per line, as hwtel pcie -j and perf stat -j;
			 * with -w the interval's end since the start first, as
			 * perf stat -I -j
			 */
			double t = (double)(r->t1_ns - gpu_start_ns) / 1e9;
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);

			if (!f)
				return -ENOMEM;
			ret = hwtel_gpu_format_json(f, r);
			if (fclose(f) && !ret)
				ret = -ENOMEM;
			if (!ret)
				ret = hwtel_json_line(stdout, buf, len, o->watch ? &t : NULL);
			free(buf);
		} else if (o->csv_sep && o->watch) {
			/*
			 * -w -x: one header, "interval" first, and every row led
			 * by the interval's end since the start, as perf stat -I -x
			 */
			static bool headed;
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);

			if (!f)
				return -ENOMEM;
			ret = hwtel_gpu_format_csv(f, r, o->csv_sep);
			if (fclose(f) && !ret)
				ret = -ENOMEM;
			if (!ret)
				ret = hwtel_csv_interval_rows(stdout, buf, len, o->csv_sep,
							      r->t1_ns - gpu_start_ns,
							      headed ? HWTEL_CSV_SKIP_HEAD : HWTEL_CSV_HEAD);
			headed = true;
			free(buf);
		} else if (o->csv_sep) {
			ret = hwtel_gpu_format_csv(stdout, r, o->csv_sep);
		} else {
			ret = hwtel_gpu_format_text(stdout, r);
		}
		if (more && !o->csv_sep && !o->json)
			fputc('\n', stdout);
		{
			int w = hwtel_stdout_flush();

			if (w)
				ret = w;	/* the write's errno, not a formatter's EIO */
		}
	}
	if (!ret && o->prom_file) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f)
			return -ENOMEM;
		ret = hwtel_gpu_format_prom(f, cum, r);
		fclose(f);
		if (!ret)
			ret = hwtel_prom_write(o->prom_file, buf, len);
		free(buf);
	}
	return ret;
}

/* --source auto: a DRM render node or a devfreq device exists */
static bool gpu_drm_present(void)
{
	static const char *const dirs[] = { "/sys/class/devfreq", "/sys/class/drm" };
	bool found = false;
	unsigned int i;

	for (i = 0; i < 2 && !found; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		if (!d)
			continue;
		while (!found && (de = readdir(d)))
			found = i ? !strncmp(de->d_name, "renderD", 7) : de->d_name[0] != '.';
		closedir(d);
	}
	return found;
}

/*
 * The DRM source: sample every --sample ms (each sample bounds the DVFS
 * error and finds new clients), report every interval or when COMMAND ends.
 */
static int gpu_drm_main(const struct gpu_opts *o, const struct hwtel_gpu_opp *table, int ntable)
{
	uint64_t step = (uint64_t)o->sample_ms * 1000000ull, next, deadline;
	struct hwtel_gpu_drm *d = hwtel_gpu_drm_new(NULL, NULL, o->debugfs);
	int ret, status = HWTEL_EXIT_OK, cst = 0;
	long iter = 0;
	pid_t child = 0;

	if (!d)
		return HWTEL_EXIT_FAIL;
	hwtel_gpu_drm_set_diag(d, stderr, "hwtel: gpu: ");
	if (ntable > 0)
		hwtel_gpu_drm_set_opp_table(d, table, (unsigned int)ntable);
	if (o->initial_set)
		hwtel_gpu_drm_set_initial_opp(d, o->init_mhz, o->init_mv);
	hwtel_gpu_drm_set_hold(d, !o->no_hold);
	ret = hwtel_gpu_drm_begin(d, clock_ns(CLOCK_REALTIME));
	if (ret) {
		fprintf(stderr, "hwtel: error: %s\n", hwtel_last_error());
		hwtel_gpu_drm_free(d);
		return hwtel_exit_status(ret);
	}
	next = deadline = clock_ns(CLOCK_MONOTONIC);
	if (o->command) {
		child = fork();
		if (child < 0) {
			fprintf(stderr, "hwtel: error: fork: %s\n", strerror(errno));
			hwtel_gpu_drm_free(d);
			return HWTEL_EXIT_FAIL;
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(o->command[0], o->command);
			fprintf(stderr, "hwtel: error: cannot run %s: %s\n", o->command[0],
				strerror(errno));
			_exit(127);
		}
	}
	for (;;) {
		const struct hwtel_gpu_report *r = NULL;
		bool last = false, end = false;

		if (o->command) {
			int st;
			pid_t w = waitpid(child, &st, WNOHANG);

			if (w == child) {
				cst = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				end = true;
			} else {
				/* look at the child at least every 20 ms */
				uint64_t now = clock_ns(CLOCK_MONOTONIC);

				if (now >= next + step) {
					next += step;
					if (hwtel_gpu_drm_sample(d))
						break;
					continue;
				}
				gpu_sleep_until(next + step < now + 20000000ull ? next + step :
						now + 20000000ull);
				continue;
			}
		} else {
			deadline += (uint64_t)(o->interval * 1e9);
			while (!end) {
				next += step;
				if (next >= deadline)
					next = deadline;
				if (!gpu_sleep_until(next))
					end = true;
				else if (next == deadline)
					break;
				else if (hwtel_gpu_drm_sample(d))
					break;
			}
		}
		ret = hwtel_gpu_drm_interval(d, clock_ns(CLOCK_REALTIME), &r);
		if (ret) {
			fprintf(stderr, "hwtel: error: %s\n", hwtel_last_error());
			status = HWTEL_EXIT_FAIL;
			break;
		}
		iter++;
		last = end || !o->watch || o->command || (o->count && iter >= o->count);
		if (r->clients_lost)
			fprintf(stderr, "hwtel: warning: %lu DRM clients closed before hwtel read them again: their last usage is lost%s\n",
				r->clients_lost, o->no_hold ? " (--no-hold)" : "");
		ret = gpu_output(o, hwtel_gpu_drm_cumulative(d), r, !last);
		if (hwtel_output_stopped(ret))
			break;	/* stopped while the output blocked */
		if (ret) {
			status = hwtel_output_error(ret);
			break;
		}
		if (last)
			break;
	}
	if (o->command && status == HWTEL_EXIT_OK)
		status = cst == 127 ? HWTEL_EXIT_CHILD : cst;
	hwtel_gpu_drm_free(d);
	return status;
}

/*
 * What both sources need before they start: the --opp table (its length,
 * or -1 after the message) and the signal handlers; with -- COMMAND, SIGINT
 * goes to the command only.
 */
static int gpu_setup(const struct gpu_opts *o, struct hwtel_gpu_opp **table)
{
	struct sigaction sa;
	int n = 0;

	if (o->opp_file) {
		n = hwtel_gpu_opp_load(o->opp_file, table);
		if (n < 0) {
			fprintf(stderr, "hwtel: error: %s\n", hwtel_last_error());
			return -1;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = gpu_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->command)
		signal(SIGINT, SIG_IGN);
	return n;
}

int hwtel_gpu_main(int argc, char **argv)
{
	char enable[512], record[512], events[512], prev = '0';
	struct hwtel_gpu_procmon *pm = NULL;
	struct hwtel_gpu *g = NULL;
	struct hwtel_gpu_opp *table = NULL;
	struct gpu_opts o;
	int ret, status = HWTEL_EXIT_OK, ntable = 0;
	uint64_t deadline;
	long iter = 0;

	ret = gpu_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	snprintf(enable, sizeof(enable), "%s/mali/profiling/proc/default/enable", o.debugfs);
	snprintf(record, sizeof(record), "%s/mali/profiling/record", o.debugfs);
	snprintf(events, sizeof(events), "%s/mali/profiling/events", o.debugfs);
	if (!strcmp(o.source, "drm") ||
	    (!strcmp(o.source, "auto") && access(record, F_OK) && errno == ENOENT &&
	     gpu_drm_present())) {
		ntable = gpu_setup(&o, &table);
		if (ntable < 0)
			return HWTEL_EXIT_USAGE;
		ret = gpu_drm_main(&o, table, ntable);
		free(table);
		if (o.watch && o.prom_file && (gpu_stop || ret != HWTEL_EXIT_OK))
			hwtel_prom_remove(o.prom_file);
		return ret;
	}
	if (access(record, F_OK) || access(events, F_OK) || access(enable, F_OK)) {
		int e = errno;

		if (e == EACCES || e == EPERM) {
			fprintf(stderr, "hwtel: error: %s: %s (debugfs needs root)\n", record,
				strerror(e));
			return HWTEL_EXIT_PERM;
		}
		fprintf(stderr, "hwtel: error: no Mali internal profiling in %s/mali/profiling: the Mali Utgard driver is not loaded, built without internal profiling, or debugfs is not mounted%s\n",
			o.debugfs, strcmp(o.source, "auto") ? "" :
			"; and no DRM render node or devfreq device for --source drm");
		return HWTEL_EXIT_NOPMU;
	}
	ntable = gpu_setup(&o, &table);
	if (ntable < 0)
		return HWTEL_EXIT_USAGE;

	g = hwtel_gpu_new();
	if (!g) {
		free(table);
		return HWTEL_EXIT_FAIL;
	}
	hwtel_gpu_set_diag(g, stderr, "hwtel: gpu: ");
	if (ntable > 0)
		hwtel_gpu_set_opp_table(g, table, (unsigned int)ntable);
	free(table);
	if (o.initial_set)
		hwtel_gpu_set_initial_opp(g, o.init_mhz, o.init_mv);
	hwtel_gpu_set_buffer_events(g, o.buffer_events);
	if (!o.no_proc && hwtel_gpu_procmon_start(&pm))
		fprintf(stderr, "hwtel: warning: no process events (%s): processes that exit before the report are shown by PID\n",
			hwtel_last_error());
	{
		size_t l = 0;
		char *cur = read_all(enable, &l);

		if (cur && l)
			prev = cur[0];
		free(cur);
	}
	hwtel_gpu_begin(g, clock_ns(CLOCK_REALTIME));
	deadline = clock_ns(CLOCK_MONOTONIC);
	ret = write_str(enable, "1");
	if (!ret)
		ret = write_str(record, "1");
	if (ret) {
		fprintf(stderr, "hwtel: error: cannot start recording in %s: %s\n", record,
			strerror(-ret));
		status = hwtel_exit_status(ret);
		goto out;
	}
	for (;;) {
		const struct hwtel_gpu_report *r = NULL;
		bool last, stopped = false;
		size_t len = 0;
		uint64_t t1;
		char *buf;

		if (o.command) {
			int cst = 0;

			if (gpu_run_command(o.command, &cst) < 0 || cst == 127) {
				status = HWTEL_EXIT_CHILD;
				goto out;
			}
			status = cst;
		} else {
			deadline += (uint64_t)(o.interval * 1e9);
			stopped = !gpu_sleep_until(deadline);
		}
		ret = write_str(record, "0");
		t1 = clock_ns(CLOCK_REALTIME);
		if (ret) {
			fprintf(stderr, "hwtel: error: cannot stop recording: %s\n", strerror(-ret));
			status = hwtel_exit_status(ret);
			goto out;
		}
		buf = read_all(events, &len);
		if (!buf) {
			fprintf(stderr, "hwtel: error: %s: %s\n", events, strerror(errno));
			status = hwtel_exit_status(-errno);
			goto out;
		}
		iter++;
		last = stopped || !o.watch || o.command || (o.count && iter >= o.count);
		if (!last && write_str(record, "1"))
			last = true;
		ret = hwtel_gpu_procmon_lives(pm, g);
		if (!ret)
			ret = hwtel_gpu_feed(g, buf, len);
		free(buf);
		if (!ret)
			ret = hwtel_gpu_interval(g, t1, &r);
		if (ret) {
			fprintf(stderr, "hwtel: error: %s\n", hwtel_last_error());
			status = HWTEL_EXIT_FAIL;
			goto out;
		}
		hwtel_gpu_names_from_proc(g, NULL);
		if (hwtel_gpu_procmon_lost(pm))
			fprintf(stderr, "hwtel: warning: the kernel dropped %lu batches of process events: some names may be PIDs\n",
				hwtel_gpu_procmon_lost(pm));
		ret = gpu_output(&o, hwtel_gpu_cumulative(g), r, !last);
		if (hwtel_output_stopped(ret))
			goto out;	/* stopped while the output blocked */
		if (ret) {
			status = hwtel_output_error(ret);
			goto out;
		}
		if (last)
			break;
	}
out:
	write_str(record, "0");
	if (prev == '0')
		write_str(enable, "0");
	hwtel_gpu_procmon_stop(pm);
	hwtel_gpu_free(g);
	if (o.watch && o.prom_file && (gpu_stop || status != HWTEL_EXIT_OK))
		hwtel_prom_remove(o.prom_file);
	return status;
}
