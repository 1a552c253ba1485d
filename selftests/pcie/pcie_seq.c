// SPDX-License-Identifier: GPL-2.0
/*
 * pcie_seq: helper of the PCIe telemetry shell selftests (not a test).
 *
 *   pcie_seq PMU STEP...
 *
 * Runs the steps in order on counting events of PMU (opened on the PMU's
 * CPU, disabled until "e"):
 *
 *   o:SPEC     open an event on its own ("kind[,ep=E][,bus=B][,idx=I]")
 *   g:SPEC     open an event in the group of the last leader opened
 *   G:N        open a group of N raw events, entries 0..N-1 modulo the
 *              layout's entries (its own leader)
 *   w:SPEC     open a software event (cpu-clock) as a new group leader, or,
 *              with SPEC "sib", as a sibling of the last leader
 *   e / d      enable / disable every leader (PERF_IOC_FLAG_GROUP)
 *   E          enable the last event opened only
 *   D          disable the last event opened only
 *   r          read every event; prints "r v1 v2 ...", "E<errno>" for a
 *              group whose read failed
 *   R          read the first group in one read (PERF_FORMAT_GROUP);
 *              prints "R n snapshots", the model's SNAPSHOTs during it
 *   s:MS       sleep MS milliseconds
 *   x:CMD      run CMD with system()
 *   c          close everything
 *
 * A failed open prints "o E<errno>" (and continues); anything else that
 * fails ends the program with exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXFD 4200

static const char *const kinds[] = {
	NULL, "pcie_cycles", "dma_cycles", "words", "stall", "frames",
	"mvb_items", "mvb_stall", "items", "region", "brake", "tags_band",
	"stfifo_band", "raw",
};

static int fds[MAXFD], leader[MAXFD], nfd, last_leader;
static int type, cpu;
static const char *pmu;
static uint64_t buf[2 * MAXFD + 4];

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%d", v);
	fclose(f);
	return n == 1 ? 0 : -1;
}

static int parse_spec(const char *spec, uint64_t *config)
{
	char b[256], *tok, *save = NULL;
	uint64_t kind = 0, ep = 0, bus = 0, idx = 0;
	unsigned int k;

	snprintf(b, sizeof(b), "%s", spec);
	tok = strtok_r(b, ",", &save);
	for (k = 1; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (tok && !strcmp(tok, kinds[k]))
			kind = k;
	if (!kind)
		return -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		if (!strncmp(tok, "ep=", 3))
			ep = strtoull(tok + 3, NULL, 0);
		else if (!strncmp(tok, "bus=", 4))
			bus = strtoull(tok + 4, NULL, 0);
		else if (!strncmp(tok, "idx=", 4))
			idx = strtoull(tok + 4, NULL, 0);
		else
			return -1;
	}
	*config = kind | ep << 8 | bus << 16 | idx << 32;
	return 0;
}

static long long stats_get(const char *key)
{
	char path[256], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/hwtel-sim/%s/stats", pmu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ' ')
			v = strtoll(line + strlen(key) + 1, NULL, 0);
	fclose(f);
	return v;
}

static int open_one(uint32_t t, uint64_t config, int group)
{
	struct perf_event_attr attr;
	int fd, g = group >= 0 ? fds[group] : -1;

	if (nfd == MAXFD)
		return -E2BIG;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = t;
	attr.config = config;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.disabled = group < 0;
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, g, 0);
	if (fd < 0)
		return -errno;
	fds[nfd] = fd;
	leader[nfd] = group < 0 ? nfd : group;
	if (group < 0)
		last_leader = nfd;
	nfd++;
	return 0;
}

static void report_open(int ret)
{
	if (ret)
		printf("o E%d\n", -ret);
	else
		printf("o ok\n");
}

static int entries(void)
{
	char path[256];
	int n = 0, ep = 0;

	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/caps/counters_per_ep", pmu);
	if (read_int(path, &n))
		return 1;
	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/caps/endpoints", pmu);
	if (read_int(path, &ep))
		return 1;
	return n * ep;
}

static int step(const char *s)
{
	uint64_t config;
	int i, n, ret, first, used;
	long long s0;

	switch (s[0]) {
	case 'o':
	case 'g':
		if (parse_spec(s + 2, &config))
			return fprintf(stderr, "bad spec %s\n", s), -1;
		report_open(open_one(type, config,
				     s[0] == 'g' ? last_leader : -1));
		return 0;
	case 'G':
		n = atoi(s + 2);
		used = entries();
		first = nfd;
		ret = 0;
		for (i = 0; i < n && !ret; i++)
			ret = open_one(type, 13 | (uint64_t)(i % used) << 32,
				       i ? first : -1);
		report_open(ret);
		return 0;
	case 'w':
		report_open(open_one(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
				     strcmp(s + 2, "sib") ? -1 : last_leader));
		return 0;
	case 'e':
	case 'd':
		for (i = 0; i < nfd; i++)
			if (leader[i] == i &&
			    ioctl(fds[i], s[0] == 'e' ? PERF_EVENT_IOC_ENABLE :
				  PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP))
				return perror("ioctl"), -1;
		return 0;
	case 'E':
	case 'D':
		if (!nfd || ioctl(fds[nfd - 1], s[0] == 'E' ?
			  PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			return perror("ioctl"), -1;
		return 0;
	case 'r':
		printf("r");
		for (i = 0; i < nfd; i++) {
			if (leader[i] != i)
				continue;
			if (read(fds[i], buf, sizeof(buf)) < 0) {
				printf(" E%d", errno);
				continue;
			}
			for (n = 0; n < (int)buf[0]; n++)
				printf(" %llu", (unsigned long long)buf[1 + n]);
		}
		printf("\n");
		return 0;
	case 'R':
		s0 = stats_get("snapshots");
		if (read(fds[0], buf, sizeof(buf)) < 0)
			return perror("read"), -1;
		printf("R %llu %lld\n", (unsigned long long)buf[0],
		       stats_get("snapshots") - s0);
		return 0;
	case 's':
		usleep(atoi(s + 2) * 1000);
		return 0;
	case 'x':
		ret = system(s + 2);
		(void)ret;
		return 0;
	case 'c':
		for (i = nfd - 1; i >= 0; i--)
			close(fds[i]);
		nfd = 0;
		last_leader = 0;
		return 0;
	}
	fprintf(stderr, "bad step %s\n", s);
	return -1;
}

int main(int argc, char **argv)
{
	char path[256];
	int i;

	if (argc < 2)
		return fprintf(stderr, "usage: pcie_seq PMU STEP...\n"), 2;
	pmu = argv[1];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (read_int(path, &type))
		return perror(path), 2;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpumask", pmu);
	if (read_int(path, &cpu))
		return perror(path), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 2; i < argc; i++)
		if (step(argv[i]))
			return 2;
	return 0;
}
