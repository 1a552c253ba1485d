// SPDX-License-Identifier: GPL-2.0
/*
 * repro_swgroup_move: core-bug reproducer (Debian 6.1), NOT part of the
 * suite: it may deadlock the kernel. See
 * Documentation/dev-tools/hwtel-core-bugs.rst.
 *
 *   repro_swgroup_move [--pmu NAME] [--config C] [--threads T] [--iters N]
 *                      [--keep K] [--offline]
 *
 * One software leader (cpu-clock, pid -1, on the PMU's CPU). T threads
 * (default 2) start together and each add one event of PMU NAME (a PMU
 * that is not a software PMU, so the core moves the software group into
 * that PMU's context) to that same leader, keep up to K (default 1, max 64)
 * such members open before closing them; N rounds. A
 * watchdog prints STUCK when no thread progressed for 5 s; with --offline
 * it then takes the PMU's CPU offline, which on an affected kernel hangs in
 * perf_pmu_migrate_context. Default PMU: the first mrvl_ddr_pmu_*, else msr.
 * Exit 0: no hang seen; 1: stuck.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "fuzz_common.h"

static int leader, cpu, ptype;
static uint64_t config = 1;
static unsigned long iters = 100000;
static unsigned int nthr = 2, keep = 1;
static atomic_ulong progress, accepted, refused;
static pthread_barrier_t bar;

static long rd(const char *pmu, const char *f)
{
	char p[256], b[64];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/%s", pmu, f);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return strtol(b, NULL, 0);
}

static void *adder(void *arg)
{
	struct perf_event_attr a;
	unsigned long i;
	int held[64], nh = 0, k;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ptype;
	a.config = config;
	for (i = 0; i < iters; i++) {
		int fd;

		pthread_barrier_wait(&bar);
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, leader, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			accepted++;
			held[nh++] = fd;
			if (nh >= (int)keep) {
				for (k = 0; k < nh; k++)
					close(held[k]);
				nh = 0;
			}
		} else {
			refused++;
		}
		progress++;
	}
	return arg;
}

int main(int argc, char **argv)
{
	char pmu[128] = "";
	struct perf_event_attr a;
	pthread_t t[16];
	unsigned long last = 0;
	int i, offline = 0, still = 0, fd;
	DIR *d;
	struct dirent *e;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--offline"))
			offline = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--pmu"))
			snprintf(pmu, sizeof(pmu), "%s", argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--config"))
			config = fz_num(argv[i], argv[i + 1]), i++;
		else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
			nthr = fz_num(argv[i], argv[i + 1]), i++;
		else if (i + 1 < argc && !strcmp(argv[i], "--keep"))
			keep = fz_num(argv[i], argv[i + 1]), i++;
		else if (i + 1 < argc && !strcmp(argv[i], "--iters"))
			iters = fz_num(argv[i], argv[i + 1]), i++;
		else
			return fprintf(stderr, "see the comment in repro_swgroup_move.c\n"), 2;
	}
	if (nthr < 2 || nthr > 16 || !keep || keep > 64)
		return 2;
	if (!pmu[0] && (d = opendir("/sys/bus/event_source/devices"))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "mrvl_ddr_pmu_", 13) && !pmu[0])
				snprintf(pmu, sizeof(pmu), "%s", e->d_name);
		closedir(d);
	}
	if (!pmu[0])
		snprintf(pmu, sizeof(pmu), "msr");
	ptype = rd(pmu, "type");
	cpu = rd(pmu, "cpumask");
	if (cpu < 0)
		cpu = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# pmu %s type %d config 0x%llx cpu %d, %u threads x %lu\n", pmu, ptype,
	       (unsigned long long)config, cpu, nthr, iters);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	leader = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (leader < 0)
		return perror("leader"), 1;
	/* hung task reports sooner, where the knob exists */
	fd = open("/proc/sys/kernel/hung_task_timeout_secs", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "20", 2) < 0)
			perror("hung_task_timeout_secs");
		close(fd);
	}
	pthread_barrier_init(&bar, NULL, nthr);
	for (i = 0; i < (int)nthr; i++)
		pthread_create(&t[i], NULL, adder, NULL);
	for (;;) {
		sleep(1);
		if (progress == last) {
			if (++still >= 5)
				break;
		} else {
			still = 0;
		}
		last = progress;
		if (last >= iters * nthr)
			break;
	}
	printf("# opens %lu: accepted %lu, refused %lu\n", (unsigned long)progress,
	       (unsigned long)accepted, (unsigned long)refused);
	if (still < 5) {
		for (i = 0; i < (int)nthr; i++)
			pthread_join(t[i], NULL);
		printf("# no hang\n");
		return 0;
	}
	printf("STUCK: no thread progressed for 5 s (deadlock in perf_event_open?)\n");
	if (offline) {
		char p[96];

		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", cpu);
		printf("# taking CPU %d offline (hangs on an affected kernel)\n", cpu);
		fd = open(p, O_WRONLY);
		if (fd >= 0 && write(fd, "0", 1) == 1)
			printf("# CPU %d went offline\n", cpu);
	}
	_exit(1);
}
