// SPDX-License-Identifier: GPL-2.0
/* Option parsing (hwtel and nfb-pcie-telemetry), exit statuses, error paths. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>

#include "cli.h"
#include "unit.h"

static char errbuf[8192], outbuf[65536];

/*
 * parse a NULL-terminated argv; stderr/stdout of the parser into buffers.
 * argv outlives the call, as main()'s does: o->command points into it.
 */
static int parse(struct hwtel_opts *o, const char *const *args)
{
	static char *argv[32];
	FILE *out = fmemopen(outbuf, sizeof(outbuf), "w");
	FILE *err = fmemopen(errbuf, sizeof(errbuf), "w");
	int argc = 0, ret;

	memset(outbuf, 0, sizeof(outbuf));
	memset(errbuf, 0, sizeof(errbuf));
	while (args[argc])
		argv[argc] = (char *)args[argc], argc++;
	argv[argc] = NULL;
	ret = hwtel_parse_args(argc, argv, o, out, err);
	fclose(out);
	fclose(err);
	return ret;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

TEST(cli_defaults)
{
	struct hwtel_opts o;

	CHECK_EQ(parse(&o, ARGS("hwtel", "pcie")), -1);
	CHECK_EQ(o.cmd, CMD_PCIE);
	CHECK_NEAR(o.interval, 1.0, 0);
	CHECK(!o.watch && !o.clear && !o.json && !o.csv_sep && !o.prom_file);
	CHECK(o.device == NULL);
	CHECK_EQ(o.index, 0);
	CHECK_EQ(parse(&o, ARGS("/usr/bin/hwtel", "ddr")), -1);
	CHECK_EQ(o.cmd, CMD_DDR);
	CHECK_EQ(parse(&o, ARGS("hwtel", "list")), -1);
	CHECK_EQ(o.cmd, CMD_LIST);
}

TEST(cli_reference_command_lines_verbatim)
{
	struct hwtel_opts o;

	/* the seed's command lines, under the reference tool's name */
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry")), -1);
	CHECK(o.compat);
	CHECK_EQ(o.cmd, CMD_PCIE);
	CHECK_NEAR(o.interval, 1.0, 0);
	CHECK_EQ(parse(&o, ARGS("/usr/local/bin/nfb-pcie-telemetry", "-d", "/dev/nfb0", "-i", "0",
				"-t", "0.5", "-w", "-j")), -1);
	CHECK_STR(o.device, "/dev/nfb0");
	CHECK_NEAR(o.interval, 0.5, 0);
	CHECK(o.watch && o.json);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "--device", "/dev/nfb1", "--index", "2",
				"--interval", "0", "--watch", "--json")), -1);
	CHECK_STR(o.device, "/dev/nfb1");
	CHECK_EQ(o.index, 2);
	CHECK_NEAR(o.interval, 0, 0);
	CHECK(o.interval_set);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "-c")), -1);
	CHECK(o.clear);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "--clear")), -1);
	CHECK(o.clear);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "-t2", "-wj")), -1);
	CHECK_NEAR(o.interval, 2, 0);
	CHECK(o.watch && o.json);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "--interval=3")), -1);
	CHECK_NEAR(o.interval, 3, 0);
	CHECK_EQ(parse(&o, ARGS("nfb-pcie-telemetry", "-h")), 0);
	CHECK(strstr(outbuf, "usage: nfb-pcie-telemetry") != NULL);
}

TEST(cli_output_options)
{
	struct hwtel_opts o;

	CHECK_EQ(parse(&o, ARGS("hwtel", "pcie", "-x", ";", "--prometheus", "/tmp/x.prom")), -1);
	CHECK_STR(o.csv_sep, ";");
	CHECK_STR(o.prom_file, "/tmp/x.prom");
	CHECK_EQ(parse(&o, ARGS("hwtel", "pcie", "--prometheus", "/tmp/x.prom", "-q", "-w",
				"-n", "3", "-t", "0.1")), -1);
	CHECK(o.quiet && o.watch);
	CHECK_EQ(o.count, 3);
	CHECK_EQ(parse(&o, ARGS("hwtel", "ddr", "-e", "ddr_cam_read,ddr_refresh", "-d",
				"mrvl_ddr_pmu_87e1c0000000")), -1);
	CHECK_STR(o.events, "ddr_cam_read,ddr_refresh");
	CHECK_EQ(parse(&o, ARGS("hwtel", "ddr", "-j", "--", "sleep", "1")), -1);
	CHECK(o.command != NULL);
	if (o.command) {
		CHECK_STR(o.command[0], "sleep");
		CHECK_STR(o.command[1], "1");
		CHECK(o.command[2] == NULL);
	}
	CHECK_EQ(parse(&o, ARGS("hwtel", "pcie", "sleep", "1")), -1);
	CHECK(o.command && !strcmp(o.command[0], "sleep"));
}

static void bad(const char *const *args, const char *msg)
{
	struct hwtel_opts o;

	CHECK_EQ(parse(&o, args), HWTEL_EXIT_USAGE);
	if (!strstr(errbuf, msg)) {
		printf("#   stderr '%s' lacks '%s'\n", errbuf, msg);
		unit_failed++;
	}
	CHECK(strstr(errbuf, "usage:") != NULL);
	CHECK(outbuf[0] == '\0');	/* usage on stderr only */
}

TEST(cli_bad_options_exit_2)
{
	bad(ARGS("hwtel"), "usage:");
	bad(ARGS("hwtel", "bogus"), "unknown command 'bogus'");
	bad(ARGS("hwtel", "pcie", "-t", "-1"), "invalid value '-1'");
	bad(ARGS("hwtel", "pcie", "-t", "abc"), "invalid value 'abc'");
	bad(ARGS("hwtel", "pcie", "-t", "nan"), "invalid value 'nan'");
	bad(ARGS("hwtel", "pcie", "-t", ""), "invalid value ''");
	bad(ARGS("hwtel", "pcie", "-i", "x"), "-i/--index: invalid value 'x'");
	bad(ARGS("hwtel", "pcie", "-i", "-3"), "invalid value '-3'");
	bad(ARGS("hwtel", "pcie", "-z"), "unrecognized option '-z'");
	bad(ARGS("hwtel", "pcie", "--bogus"), "unrecognized option '--bogus'");
	bad(ARGS("hwtel", "pcie", "-t"), "needs an argument");
	bad(ARGS("hwtel", "pcie", "-j", "-x", ","), "exclude each other");
	bad(ARGS("hwtel", "pcie", "-e", "x"), "-e/--events is for 'ddr'");
	bad(ARGS("hwtel", "pcie", "-n", "3"), "-n/--count needs -w");
	bad(ARGS("hwtel", "pcie", "-w", "-n", "0"), "-n/--count: invalid value '0'");
	bad(ARGS("hwtel", "pcie", "-w", "-t", "0.000001"), "under 10 ms");
	bad(ARGS("hwtel", "ddr", "-w", "-t", "0.009"), "under 10 ms");
	bad(ARGS("hwtel", "pcie", "-q"), "-q needs --prometheus");
	bad(ARGS("hwtel", "pcie", "-w", "--", "true"), "a COMMAND replaces");
	bad(ARGS("hwtel", "ddr", "-c"), "no clear");
	bad(ARGS("hwtel", "ddr", "-t", "0"), "no totals");
	bad(ARGS("hwtel", "list", "-d", "x"), "'list' takes no options");
	bad(ARGS("hwtel", "list", "extra"), "unrecognized arguments: extra");
	bad(ARGS("nfb-pcie-telemetry", "extra"), "unrecognized arguments: extra");
	bad(ARGS("nfb-pcie-telemetry", "--prometheus", ""), "empty file name");
}

TEST(cli_help_and_version)
{
	struct hwtel_opts o;

	CHECK_EQ(parse(&o, ARGS("hwtel", "--help")), 0);
	CHECK(strstr(outbuf, "usage: hwtel <command>") != NULL);
	CHECK(errbuf[0] == '\0');
	CHECK_EQ(parse(&o, ARGS("hwtel", "pcie", "-h")), 0);
	CHECK_EQ(parse(&o, ARGS("hwtel", "-V")), 0);
	CHECK(strstr(outbuf, "hwtel " HWTEL_VERSION) != NULL);
}

TEST(cli_exit_status_mapping)
{
	CHECK_EQ(hwtel_exit_status(0), HWTEL_EXIT_OK);
	CHECK_EQ(hwtel_exit_status(-ENOENT), HWTEL_EXIT_NOPMU);
	CHECK_EQ(hwtel_exit_status(-EACCES), HWTEL_EXIT_PERM);
	CHECK_EQ(hwtel_exit_status(-EPERM), HWTEL_EXIT_PERM);
	CHECK_EQ(hwtel_exit_status(-ENODEV), HWTEL_EXIT_VANISHED);
	CHECK_EQ(hwtel_exit_status(-EIO), HWTEL_EXIT_FAIL);
	/* all distinct */
	CHECK(HWTEL_EXIT_USAGE != HWTEL_EXIT_NOPMU && HWTEL_EXIT_NOPMU != HWTEL_EXIT_PERM &&
	      HWTEL_EXIT_PERM != HWTEL_EXIT_VANISHED && HWTEL_EXIT_VANISHED != HWTEL_EXIT_FAIL);
}

/* Run hwtel_main in a child with stdout/stderr captured. */
static int run_main(const char *sysroot, const char *const *args)
{
	int pout[2], perr[2], st;
	pid_t pid;
	ssize_t n;

	fflush(stdout);
	if (pipe(pout) || pipe(perr))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *argv[32];
		int argc = 0;

		dup2(pout[1], 1);
		dup2(perr[1], 2);
		close(pout[0]);
		close(perr[0]);
		while (args[argc])
			argv[argc] = (char *)args[argc], argc++;
		argv[argc] = NULL;
		hwtel_set_sysfs_root(sysroot);
		_exit(hwtel_main(argc, argv));
	}
	close(pout[1]);
	close(perr[1]);
	memset(outbuf, 0, sizeof(outbuf));
	memset(errbuf, 0, sizeof(errbuf));
	for (size_t off = 0; off < sizeof(outbuf) - 1; off += (size_t)n) {
		n = read(pout[0], outbuf + off, sizeof(outbuf) - 1 - off);
		if (n <= 0)
			break;
	}
	for (size_t off = 0; off < sizeof(errbuf) - 1; off += (size_t)n) {
		n = read(perr[0], errbuf + off, sizeof(errbuf) - 1 - off);
		if (n <= 0)
			break;
	}
	close(pout[0]);
	close(perr[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(cli_no_pmu_says_which_module)
{
	CHECK_EQ(run_main("fixtures/none", ARGS("hwtel", "pcie")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "modprobe ndk_pcie_tlm") != NULL);
	CHECK_EQ(run_main("fixtures/none", ARGS("nfb-pcie-telemetry", "-t", "0")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "modprobe ndk_pcie_tlm") != NULL);
	CHECK_EQ(run_main("fixtures/none", ARGS("hwtel", "ddr")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "modprobe marvell_cn10k_ddr_pmu") != NULL);
	CHECK_EQ(run_main("fixtures/none", ARGS("hwtel", "list")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "modprobe ndk_pcie_tlm") != NULL);
	CHECK(strstr(errbuf, "modprobe marvell_cn10k_ddr_pmu") != NULL);
	CHECK_EQ(run_main("fixtures/sys", ARGS("hwtel", "ddr", "-d", "mrvl_ddr_pmu_1")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "no PMU mrvl_ddr_pmu_1") != NULL);
	/* a PMU in sysfs but no control plane (the fixture has no driver) */
	CHECK_EQ(run_main("fixtures/sys", ARGS("hwtel", "pcie", "-t", "0")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(errbuf, "generic netlink family ndk_pcie_tlm not found") != NULL);
	CHECK_EQ(run_main("fixtures/sys", ARGS("hwtel", "pcie", "-z")), HWTEL_EXIT_USAGE);
}

TEST(cli_list_fixtures)
{
	CHECK_EQ(run_main("fixtures/sys", ARGS("hwtel", "list")), 0);
	CHECK(strstr(outbuf, "ndk_pcie_tlm_3fff00000000  PCIe telemetry (NDK PCIE_TELEMETRY_MI), pcie_telemetry_mi 2.0, cpu 0\n") != NULL);
	CHECK(strstr(outbuf, "  words                          kind=0x3,ep=?,bus=?        cycles a word moved on the bus (SRC_RDY and DST_RDY)\n") != NULL);
	CHECK(strstr(outbuf, "mrvl_ddr_pmu_87e1c1000000  DDR controller (Marvell DSS), cn10k, cpu 1\n") != NULL);
	CHECK(strstr(outbuf, "  ddr_dif_rd_data_access         event=0x09                 DFI cycles carrying read data\n") != NULL);
	CHECK(strstr(outbuf, "hwtel_fmt_test") == NULL);
}

/*
 * -j outside the reference tool's mode: one object per line (JSON Lines),
 * strings untouched (a newline in a value is "\n" in JSON, spaces and
 * escaped quotes inside stay), and under -w the interval time first.
 */
TEST(cli_json_one_line)
{
	static const char doc[] = "{\n    \"seconds\": 1.0,\n    \"data\": [\n        {\n"
		"            \"pmu\": \"a b\\\" \\n  x\",\n            \"v\": []\n        }\n"
		"    ],\n    \"e\": {}\n}\n";
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	double t = 2.5;

	CHECK_EQ(hwtel_json_line(f, doc, strlen(doc), NULL), 0);
	CHECK_EQ(hwtel_json_line(f, doc, strlen(doc), &t), 0);
	fclose(f);
	/* the separators of Python's json.dumps() without indent */
	CHECK_STR(buf, "{\"seconds\": 1.0, \"data\": [{\"pmu\": \"a b\\\" \\n  x\", \"v\": []}], \"e\": {}}\n"
		  "{\"interval\": 2.500000000, \"seconds\": 1.0, \"data\": [{\"pmu\": \"a b\\\" \\n  x\", "
		  "\"v\": []}], \"e\": {}}\n");
}

/*
 * A stopped exporter removes the textfile it wrote (--prometheus -w), and
 * nothing else: not a FIFO or device it wrote in place, not a file that
 * replaced its own.
 */
TEST(cli_prom_remove_own_file)
{
	char dir[] = "/tmp/hwtel-unit-prom.XXXXXX", file[64], fifo[64], lnk[64], keep[64];
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/hwtel-pcie.prom", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.prom", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.prom", dir);
	snprintf(keep, sizeof(keep), "%s/keep", dir);

	CHECK(!hwtel_prom_remove(file));		/* nothing written yet */
	CHECK_EQ(hwtel_prom_write(file, "a 1\n", 4), 0);
	CHECK(hwtel_prom_remove(file));
	CHECK_EQ(stat(file, &st), -1);

	/* replaced by another file since: left alone */
	CHECK_EQ(hwtel_prom_write(file, "a 1\n", 4), 0);
	CHECK_EQ(link(file, keep), 0);	/* its inode cannot be reused */
	CHECK_EQ(hwtel_write_atomic(file, "b 2\n", 4), 0);
	CHECK(!hwtel_prom_remove(file));
	CHECK_EQ(stat(file, &st), 0);

	/* a FIFO is written in place, never removed */
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	hwtel_prom_wrote(fifo, NULL);
	CHECK(!hwtel_prom_remove(fifo));
	CHECK_EQ(lstat(fifo, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));

	/* through a symbolic link: the file it names goes */
	CHECK_EQ(symlink("hwtel-pcie.prom", lnk), 0);
	CHECK_EQ(hwtel_prom_write(lnk, "c 3\n", 4), 0);
	CHECK(hwtel_prom_remove(lnk));
	CHECK_EQ(stat(file, &st), -1);

	/*
	 * --prometheus /dev/stdout with stdout on a file: written in place,
	 * so not the exporter's to remove (the child exits 0 when it stays)
	 */
	{
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644), status = -1;
		pid_t pid;

		CHECK(fd >= 0);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			dup2(fd, 1);
			if (hwtel_prom_write("/dev/stdout", "d 4\n", 4))
				_exit(1);
			_exit(hwtel_prom_remove("/dev/stdout") ? 2 : 0);
		}
		close(fd);
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CHECK_EQ(stat(file, &st), 0);
	}

	unlink(keep);
	unlink(lnk);
	unlink(fifo);
	unlink(file);
	CHECK_EQ(rmdir(dir), 0);
}

/*
 * --prometheus of an interval report (-w): a scrape sees only the last
 * interval, so the exporter also counts the intervals and those that ended
 * with each flag set (counters, never reset while it runs; reading never
 * clears the flags). Without the control plane's state the flag counts are
 * left out.
 */
TEST(cli_prom_flagged_intervals)
{
	struct hwtel_pcie_flag_count c;
	struct hwtel_pcie_config cfg = { .pcie_endpoints = 1 };
	struct hwtel_pcie_data *d = hwtel_pcie_data_new_config("x", &cfg);
	char buf[2048] = "";
	FILE *f;

	memset(&c, 0, sizeof(c));
	d->state_valid = true;
	hwtel_pcie_flag_count_add(&c, d);
	d->status.lost_deltas = true;
	hwtel_pcie_flag_count_add(&c, d);
	d->status.readout_overrun = true;
	hwtel_pcie_flag_count_add(&c, d);
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(hwtel_pcie_prom_flag_intervals(f, "ndk_pcie_tlm_3fff00000000", &c), 0);
	fclose(f);
	CHECK_STR(buf,
		  "# HELP hwtel_pcie_intervals_total Intervals measured and reported.\n"
		  "# TYPE hwtel_pcie_intervals_total counter\n"
		  "hwtel_pcie_intervals_total{device=\"ndk_pcie_tlm_3fff00000000\"} 3\n"
		  "# HELP hwtel_pcie_flagged_intervals_total Intervals that ended with a STATUS flag set; flags hold until hwtel pcie -c, so their counts may not be exact.\n"
		  "# TYPE hwtel_pcie_flagged_intervals_total counter\n"
		  "hwtel_pcie_flagged_intervals_total{device=\"ndk_pcie_tlm_3fff00000000\",flag=\"lost_deltas\"} 2\n"
		  "hwtel_pcie_flagged_intervals_total{device=\"ndk_pcie_tlm_3fff00000000\",flag=\"readout_overrun\"} 1\n");
	unit_check_prom("flagged intervals", buf);

	d->state_valid = false;
	memset(&c, 0, sizeof(c));
	hwtel_pcie_flag_count_add(&c, d);
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(hwtel_pcie_prom_flag_intervals(f, "p", &c), 0);
	fclose(f);
	CHECK_STR(buf,
		  "# HELP hwtel_pcie_intervals_total Intervals measured and reported.\n"
		  "# TYPE hwtel_pcie_intervals_total counter\n"
		  "hwtel_pcie_intervals_total{device=\"p\"} 1\n");
	hwtel_pcie_data_free(d);
}

/*
 * The installed binary's main() (HWTEL_BIN, built before the tests), run
 * with its stdout on @out_path (opened for writing; "/dev/full" is only
 * written to) and stderr captured in errbuf. Returns the raw wait status.
 * With @sig, that signal is sent once the program is in the state the
 * test is about (stopped_in()): it has a handler for @sig and is blocked
 * in system call @nr (SYS_openat: a FIFO without a reader; SYS_write: an
 * output nobody reads; SYS_clock_nanosleep: between two samples).
 */
static int run_bin(const char *out_path, const char *const *args, int sig, long nr);

/*
 * Poll (every millisecond, for at most 30 s) until @pid has a handler for
 * @sig (SigCgt of /proc/PID/status) and sits in system call @nr
 * (/proc/PID/syscall; where that file cannot be read, in state S). A
 * signal sent after a fixed delay instead found the program still
 * starting on a loaded machine (no handler yet: killed by it) or past the
 * state under test. False when @pid ended or never got there.
 */
/* @got is system call @want (a 32-bit time64 build sleeps in its variant) */
static bool same_call(long got, long want)
{
#ifdef __NR_clock_nanosleep_time64
	if (want == SYS_clock_nanosleep && got == __NR_clock_nanosleep_time64)
		return true;
#endif
	return got == want;
}

static bool stopped_in(pid_t pid, int sig, long nr)
{
	char path[64], buf[512];
	int i;

	for (i = 0; i < 30000; i++) {
		struct timespec ms = { 0, 1000000L };
		siginfo_t si = { 0 };
		unsigned long long cgt = 0;
		bool handled = false, there = false;
		char *p;
		FILE *f;

		/* ended (a zombie: left for run_bin's waitpid) */
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid)
			return false;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (sscanf(buf, "SigCgt: %llx", &cgt) == 1)
				handled = cgt >> (sig - 1) & 1;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f)) {
			there = same_call(strtol(buf, &p, 10), nr) && p != buf;
		} else {
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
			if (f)
				fclose(f);
			f = fopen(path, "r");
			p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			there = p && p[1] == ' ' && p[2] == 'S';
		}
		if (f)
			fclose(f);
		if (handled && there)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

static int run_bin(const char *out_path, const char *const *args, int sig, long nr)
{
	int perr[2], st = -1;
	pid_t pid;
	ssize_t n;

	fflush(stdout);
	if (pipe(perr))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *argv[32];
		int argc = 0, fd = open(out_path, O_WRONLY);

		if (fd < 0)
			_exit(99);
		dup2(fd, 1);
		dup2(perr[1], 2);
		close(perr[0]);
		while (args[argc])
			argv[argc] = (char *)args[argc], argc++;
		argv[argc] = NULL;
		setenv("HWTEL_SYSFS", "fixtures/sys", 1);
		alarm(60);	/* never hangs the tests */
		execv(HWTEL_BIN, argv);
		_exit(98);
	}
	close(perr[1]);
	if (sig) {
		if (!stopped_in(pid, sig, nr)) {
			printf("#   %s: not blocked in system call %ld with a handler for signal %d within 30 s\n",
			       args[1], nr, sig);
			unit_failed++;
		}
		kill(pid, sig);
	}
	memset(errbuf, 0, sizeof(errbuf));
	for (size_t off = 0; off < sizeof(errbuf) - 1; off += (size_t)n) {
		n = read(perr[0], errbuf + off, sizeof(errbuf) - 1 - off);
		if (n <= 0)
			break;
	}
	close(perr[0]);
	waitpid(pid, &st, 0);
	return st;
}

static int count_args(const char *const *args)
{
	int n = 0;

	while (args[n])
		n++;
	return n;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * Output that cannot be written ends the run with exit status 1 and one
 * message with the write's own errno, for every command: not a second
 * line from main(), not EIO in place of ENOSPC.
 */
TEST(cli_write_error_said_once)
{
	const char *const *const cmds[] = {
		ARGS("hwtel", "list"),
		ARGS("hwtel", "--version"),
		ARGS("hwtel", "gpu", "--source", "drm", "-t", "0.05"),
		ARGS("hwtel", "gpu", "--source", "drm", "-t", "0.05", "-x", ","),
		ARGS("hwtel", "gpu", "--source", "drm", "-w", "-n", "2", "-t", "0.05", "-j"),
	};
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int st = run_bin("/dev/full", cmds[i], 0, 0);

		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == HWTEL_EXIT_FAIL);
		if (!strstr(errbuf, "hwtel: error: cannot write the output: No space left on device\n") ||
		    count_lines(errbuf) != 1) {
			printf("#   %s %s: stderr '%s'\n", cmds[i][1], cmds[i][2] ? cmds[i][2] : "",
			       errbuf);
			unit_failed++;
		}
	}
}

/*
 * Ctrl-C during a single interval: the counts so far are printed, then
 * hwtel ends by SIGINT itself, as perf stat does, so that a shell sees
 * 130 and stops a script's loop. SIGTERM (systemctl stop) ends it with
 * exit status 0 after the same report. The DRM source of hwtel gpu runs
 * on any host (no client: an empty table).
 */
TEST(cli_sigint_prints_then_dies_by_it)
{
	char path[] = "/tmp/hwtel-unit-sigint.XXXXXX", *out;
	int fd = mkstemp(path), st;

	CHECK(fd >= 0);
	close(fd);
	st = run_bin(path, ARGS("hwtel", "gpu", "--source", "drm", "-t", "30"), SIGINT,
		     SYS_clock_nanosleep);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	out = unit_slurp(path, NULL);
	if (!WIFSIGNALED(st))
		printf("#   SIGINT: wait status 0x%x, stderr '%s', stdout '%.300s'\n", st, errbuf,
		       out ? out : "(none)");
	CHECK(out && strstr(out, "GPU power consumers") && strstr(out, "Measured over "));
	free(out);

	st = run_bin(path, ARGS("hwtel", "gpu", "--source", "drm", "-t", "30"), SIGTERM,
		     SYS_clock_nanosleep);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	out = unit_slurp(path, NULL);
	CHECK(out && strstr(out, "GPU power consumers"));
	free(out);
	unlink(path);
}

/*
 * Intervals under 10 ms are refused as perf stat refuses -I and --timeout
 * values under 10 ms: with -w and without it, for pcie, ddr and gpu.
 */
TEST(cli_intervals_under_10ms_refused)
{
	const char *const *const cmds[] = {
		ARGS("hwtel", "gpu", "--source", "drm", "-w", "-n", "3", "-t", "0.001"),
		ARGS("hwtel", "gpu", "--source", "drm", "-t", "0.009"),
		ARGS("hwtel", "pcie", "-t", "0.005"),
		ARGS("hwtel", "ddr", "-t", "0.000001"),
	};
	unsigned int i;

	bad(ARGS("hwtel", "pcie", "-t", "0.005"), "under 10 ms");
	bad(ARGS("hwtel", "ddr", "-t", "0.000001"), "under 10 ms");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int st = run_bin("/dev/null", cmds[i], 0, 0);

		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == HWTEL_EXIT_USAGE);
		if (!strstr(errbuf, "under 10 ms")) {
			printf("#   %s ... %s: stderr '%.200s'\n", cmds[i][1], cmds[i][count_args(cmds[i]) - 1],
			       errbuf);
			unit_failed++;
		}
	}
	/* 10 ms itself is taken, and -t 0 (pcie: the totals) is not an interval */
	CHECK_EQ(parse(&(struct hwtel_opts){ 0 }, ARGS("hwtel", "pcie", "-w", "-t", "0.01")), -1);
	CHECK_EQ(parse(&(struct hwtel_opts){ 0 }, ARGS("hwtel", "pcie", "-t", "0")), -1);
}

/*
 * -x SEP takes any separator that RFC 4180 quoting can work around: not
 * one holding a double quote or a line break.
 */
TEST(cli_csv_separator_quotable)
{
	int st;

	bad(ARGS("hwtel", "pcie", "-x", "\""), "-x");
	bad(ARGS("hwtel", "ddr", "-x", "a\nb"), "-x");
	bad(ARGS("nfb-pcie-telemetry", "-x", "\r"), "-x");
	st = run_bin("/dev/null", ARGS("hwtel", "gpu", "--source", "drm", "-t", "0.05", "-x", "'\""), 0, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == HWTEL_EXIT_USAGE);
	CHECK(strstr(errbuf, "double quote") != NULL);
}

/*
 * hwtel gpu -w -x: the header once, with "interval" first, and every row
 * led by the interval's end (seconds since the start), as perf stat -I -x
 * rows are; quoted when it holds the separator (-x .).
 */
TEST(cli_gpu_watch_csv_interval_first)
{
	static const char *const seps[] = { ",", "." };
	char path[] = "/tmp/hwtel-unit-gpucsv.XXXXXX";
	int fd = mkstemp(path);
	unsigned int i;

	CHECK(fd >= 0);
	close(fd);
	for (i = 0; i < 2; i++) {
		char *out, *line, head[64], lead[8];
		int st, rows = 0, heads = 0;

		st = run_bin(path, ARGS("hwtel", "gpu", "--source", "drm", "-w", "-n", "2", "-t", "0.05",
					"-x", seps[i]), 0, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		out = unit_slurp(path, NULL);
		CHECK(out != NULL);
		snprintf(head, sizeof(head), "interval%spid%slife%scomm%s", seps[i], seps[i], seps[i],
			 seps[i]);
		snprintf(lead, sizeof(lead), "%s", seps[i][0] == '.' ? "\"0." : "0.");
		for (line = out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
			if (!strncmp(line, "pid", 3) || !strncmp(line, "interval", 8)) {
				heads++;
				CHECK(!strncmp(line, head, strlen(head)));
			} else {
				rows++;
				CHECK(!strncmp(line, lead, strlen(lead)));
			}
		}
		if (heads != 1 || rows != 2)
			printf("#   -x '%s': %d header lines, %d rows:\n%s", seps[i], heads, rows, out ? out : "");
		CHECK_EQ(heads, 1);
		CHECK_EQ(rows, 2);
		free(out);
		CHECK_EQ(truncate(path, 0), 0);
	}
	unlink(path);
}

/* The -w -x row prefix: the time quoted when it holds SEP, a last row ended */
TEST(cli_csv_interval_rows)
{
	static const char rows[] = "1,a\n2,\"b.c\"", head[] = "x.y\n1.2\n";
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	CHECK_EQ(hwtel_csv_interval_rows(f, rows, strlen(rows), ",", 1500000000ull,
					 HWTEL_CSV_NO_HEAD), 0);
	CHECK_EQ(hwtel_csv_interval_rows(f, rows, strlen(rows), ".", 2000000001ull,
					 HWTEL_CSV_NO_HEAD), 0);
	CHECK_EQ(hwtel_csv_interval_rows(f, head, strlen(head), ".", 3ull, HWTEL_CSV_HEAD), 0);
	CHECK_EQ(hwtel_csv_interval_rows(f, head, strlen(head), ".", 4ull, HWTEL_CSV_SKIP_HEAD), 0);
	fclose(f);
	CHECK_STR(buf, "1.500000000,1,a\n1.500000000,2,\"b.c\"\n"
		  "\"2.000000001\".1,a\n\"2.000000001\".2,\"b.c\"\n"
		  "interval.x.y\n\"0.000000003\".1.2\n"
		  "\"0.000000004\".1.2\n");
}

/*
 * hwtel gpu -j: one object per line; with -w each leads with "interval",
 * the interval's end in seconds since the start, as pcie, ddr and
 * perf stat -I -j do.
 */
TEST(cli_gpu_watch_json_interval_first)
{
	char path[] = "/tmp/hwtel-unit-gpujson.XXXXXX", *out, *line;
	int fd = mkstemp(path), st, n = 0;
	double prev = 0;

	CHECK(fd >= 0);
	close(fd);
	st = run_bin(path, ARGS("hwtel", "gpu", "--source", "drm", "-w", "-n", "2", "-t", "0.05", "-j"),
		     0, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	out = unit_slurp(path, NULL);
	for (line = out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		double t = -1;

		n++;
		if (sscanf(line, "{\"interval\": %lf, \"seconds\": ", &t) != 1 || t <= prev) {
			printf("#   line %d: %.80s\n", n, line);
			unit_failed++;
		}
		prev = t;
	}
	CHECK_EQ(n, 2);
	free(out);
	CHECK_EQ(truncate(path, 0), 0);
	st = run_bin(path, ARGS("hwtel", "gpu", "--source", "drm", "-t", "0.05", "-j"), 0, 0);
	out = unit_slurp(path, NULL);
	CHECK(out && !strncmp(out, "{\"seconds\": ", 12) && count_lines(out) == 1);
	free(out);
	unlink(path);
}

/*
 * A stop signal ends a run blocked on its output (a FIFO with no reader
 * for --prometheus, a stdout pipe that is not read) as it ends any run:
 * SIGTERM with exit status 0, SIGINT by SIGINT, no error message, the
 * FIFO left a FIFO. (pcie and ddr do the same; the gpu DRM source runs
 * on any host.)
 */
TEST(cli_stop_while_output_blocked)
{
	char dir[] = "/tmp/hwtel-unit-block.XXXXXX", fifo[64], pipe_path[64];
	struct stat st;
	int rfd, s;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/m.prom", dir);
	snprintf(pipe_path, sizeof(pipe_path), "%s/stdout", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	s = run_bin("/dev/null", ARGS("hwtel", "gpu", "--source", "drm", "-w", "-t", "0.05", "-q",
				      "--prometheus", fifo), SIGTERM, SYS_openat);
	CHECK(WIFEXITED(s) && WEXITSTATUS(s) == 0);
	if (errbuf[0])
		printf("#   FIFO without a reader, SIGTERM: wait status 0x%x, stderr '%s'\n", s, errbuf),
		unit_failed++;
	CHECK_EQ(lstat(fifo, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));

	/* stdout a pipe of one page that nobody reads: full within a second */
	CHECK_EQ(mkfifo(pipe_path, 0600), 0);
	rfd = open(pipe_path, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	CHECK(fcntl(rfd, F_SETPIPE_SZ, 4096) > 0);
	s = run_bin(pipe_path, ARGS("hwtel", "gpu", "--source", "drm", "-w", "-t", "0.01", "-j"),
		    SIGINT, SYS_write);
	CHECK(WIFSIGNALED(s) && WTERMSIG(s) == SIGINT);
	if (errbuf[0] || !WIFSIGNALED(s))
		printf("#   stdout not read, SIGINT: wait status 0x%x, stderr '%s'\n", s, errbuf),
		unit_failed++;
	close(rfd);
	unlink(pipe_path);
	unlink(fifo);
	CHECK_EQ(rmdir(dir), 0);
}
