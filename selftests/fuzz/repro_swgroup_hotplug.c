// SPDX-License-Identifier: GPL-2.0
/*
 * repro_swgroup_hotplug: core-bug reproducer (Debian 6.12), NOT part of the
 * suite: it may corrupt a list and crash the kernel. See
 * Documentation/dev-tools/hwtel-core-bugs.rst.
 *
 *   repro_swgroup_hotplug [--seconds S] [--threads T] [--pmu NAME --config C]
 *
 * T threads (default 3) each loop: pick a CPU, open a software-led group on
 * it (cpu-clock leader, pid -1, 1..3 software siblings, and with --pmu one
 * event of that PMU as a sibling too, and then 70 % of the groups go to the
 * PMU's cpumask CPU, so the PMU's hotplug callback migrates them), enable
 * it, read it, close the
 * members in a random order. One more thread takes the CPUs offline and
 * online. Runs S seconds (default 60), then counts dmesg splats (list_del
 * corruption and friends). Uses no hwtel module unless --pmu names one.
 * Exit 0: nothing seen; 1: a splat.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "fuzz_common.h"

static double t_end;
static int ncpu, ptype = -1;
static char pname[128];

/* the PMU's CPU now (it follows hotplug), or -1 */
static int pmu_cpu(void)
{
	char p[256], b[32];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/cpumask", pname);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return atoi(b);
}
static uint64_t pconfig = 1;
static atomic_ulong groups, members, cycles;

static int ev(uint32_t type, uint64_t config, int cpu, int group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = group < 0;
	return syscall(SYS_perf_event_open, &a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void *worker(void *arg)
{
	static const uint64_t sw[] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	struct fz_rng r;
	uint64_t buf[32];

	fz_seed(&r, 13, (unsigned int)(uintptr_t)arg);
	while (fz_now() < t_end) {
		int fds[6], n = 0, k, m = 1 + fz_below(&r, 3);
		int cpu = fz_below(&r, ncpu);

		if (ptype >= 0 && fz_pct(&r, 70) && pmu_cpu() >= 0)
			cpu = pmu_cpu();	/* where the PMU counts: it must migrate */

		fds[n] = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, cpu, -1);
		if (fds[n] < 0)
			continue;
		n++;
		for (k = 0; k < m; k++) {
			int fd = ev(PERF_TYPE_SOFTWARE, sw[fz_below(&r, 4)], cpu, fds[0]);

			if (fd >= 0)
				fds[n++] = fd;
		}
		if (ptype >= 0) {
			int fd = ev(ptype, pconfig, cpu, fds[0]);

			if (fd >= 0)
				fds[n++] = fd;
		}
		groups++;
		members += n;
		ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		usleep(fz_below(&r, 5000));
		if (read(fds[0], buf, sizeof(buf)) < 0)
			buf[0] = 0;
		for (k = 0; k < n; k++) {
			int j = fz_below(&r, n), t = fds[k];

			fds[k] = fds[j];
			fds[j] = t;
		}
		for (k = 0; k < n; k++)
			close(fds[k]);
	}
	return NULL;
}

static void set_online(int c, int on)
{
	char p[96];
	int fd;

	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", c);
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, on ? "1" : "0", 1) == 1 && on)
		cycles++;
	close(fd);
}

static void *hotplug(void *arg)
{
	struct fz_rng r;
	int c;

	fz_seed(&r, 13, 99);
	while (fz_now() < t_end) {
		c = 1 + fz_below(&r, ncpu - 1);
		set_online(c, 0);
		usleep(2000 + fz_below(&r, 20000));
		set_online(c, 1);
		usleep(2000 + fz_below(&r, 20000));
	}
	for (c = 1; c < ncpu; c++)
		set_online(c, 1);
	return arg;
}

int main(int argc, char **argv)
{
	double secs = 60;
	unsigned int nthr = 3, i;
	pthread_t t[16], hp;
	int kmsg, splats;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (i + 1 < (unsigned int)argc && !strcmp(argv[i], "--seconds"))
			secs = strtod(argv[++i], NULL);
		else if (i + 1 < (unsigned int)argc && !strcmp(argv[i], "--threads"))
			nthr = fz_num(argv[i], argv[i + 1]), i++;
		else if (i + 1 < (unsigned int)argc && !strcmp(argv[i], "--config"))
			pconfig = fz_num(argv[i], argv[i + 1]), i++;
		else if (i + 1 < (unsigned int)argc && !strcmp(argv[i], "--pmu")) {
			char p[256], b[32];
			int fd;
			ssize_t n;

			snprintf(pname, sizeof(pname), "%s", argv[++i]);
			snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/type", pname);
			fd = open(p, O_RDONLY);
			n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
			if (n <= 0)
				return fprintf(stderr, "no PMU %s\n", argv[i]), 2;
			b[n] = 0;
			ptype = atoi(b);
			close(fd);
		} else {
			return fprintf(stderr, "see the comment in repro_swgroup_hotplug.c\n"), 2;
		}
	}
	if (!nthr || nthr > 16)
		return 2;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 2)
		return fprintf(stderr, "needs 2 CPUs\n"), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	kmsg = fz_kmsg_open();
	t_end = fz_now() + secs;
	for (i = 0; i < nthr; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	pthread_create(&hp, NULL, hotplug, NULL);
	for (i = 0; i < nthr; i++)
		pthread_join(t[i], NULL);
	pthread_join(hp, NULL);
	printf("# groups %lu, members %lu, hotplug cycles %lu\n", (unsigned long)groups,
	       (unsigned long)members, (unsigned long)cycles);
	splats = fz_kmsg_splats(kmsg);
	printf("# %d splats\n", splats);
	return splats ? 1 : 0;
}
