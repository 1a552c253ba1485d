// SPDX-License-Identifier: GPL-2.0
/*
 * pcie_evt: helper of the PCIe telemetry shell selftests (not a test).
 *
 *   pcie_evt [-g] PMU SPEC... [-- INJECT...]
 *
 * SPEC is "kind[,ep=E][,bus=B][,idx=I]" with the kind names of events/, or
 * "config=0xN". Opens one counting event per SPEC on the PMU's CPU (-g: all
 * in one group, the first as leader), writes each INJECT line ("<counter>
 * <delta>", the model's syntax) to the model's debugfs inject file, then
 * reads the events and prints one line per SPEC: the count, or "E<errno>"
 * when perf_event_open() failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXEV 128

static const char *const kinds[] = {
	NULL, "pcie_cycles", "dma_cycles", "words", "stall", "frames",
	"mvb_items", "mvb_stall", "items", "region", "brake", "tags_band",
	"stfifo_band", "raw",
};

static int read_int(const char *path, const char *fmt, void *v)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, fmt, v);
	fclose(f);
	return n == 1 ? 0 : -1;
}

static int parse_spec(const char *spec, uint64_t *config)
{
	char buf[256], *tok, *save = NULL;
	uint64_t kind = 0, ep = 0, bus = 0, idx = 0;
	unsigned int k;

	if (!strncmp(spec, "config=", 7)) {
		*config = strtoull(spec + 7, NULL, 0);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	tok = strtok_r(buf, ",", &save);
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

int main(int argc, char **argv)
{
	char path[512];
	struct perf_event_attr attr;
	int fd[MAXEV], err[MAXEV], n = 0, group = 0, i, cpu, type, leader = -1;
	const char *pmu;
	uint64_t config;
	int inj;

	if (argc > 1 && !strcmp(argv[1], "-g")) {
		group = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: pcie_evt [-g] PMU SPEC... [-- INJECT...]\n");
		return 2;
	}
	pmu = argv[1];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (read_int(path, "%d", &type))
		return perror(path), 2;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpumask", pmu);
	if (read_int(path, "%d", &cpu))
		return perror(path), 2;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (n == MAXEV)
			return 2;
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = type;
		attr.disabled = group ? leader < 0 : 1;
		if (parse_spec(argv[i], &config)) {
			fprintf(stderr, "bad spec %s\n", argv[i]);
			return 2;
		}
		attr.config = config;
		fd[n] = syscall(SYS_perf_event_open, &attr, -1, cpu,
				group ? leader : -1, 0);
		err[n] = fd[n] < 0 ? errno : 0;
		if (group && leader < 0 && fd[n] >= 0)
			leader = fd[n];
		n++;
	}
	inj = i + 1;
	for (i = 0; i < n; i++)
		if (fd[i] >= 0 && (!group || fd[i] == leader))
			ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);

	snprintf(path, sizeof(path), "/sys/kernel/debug/hwtel-sim/%s/inject", pmu);
	for (i = inj; i < argc; i++) {
		int f = open(path, O_WRONLY);

		if (f < 0 || write(f, argv[i], strlen(argv[i])) < 0) {
			perror(argv[i]);
			return 2;
		}
		close(f);
	}

	for (i = 0; i < n; i++) {
		uint64_t v;

		if (fd[i] < 0) {
			printf("E%d\n", err[i]);
			continue;
		}
		if (read(fd[i], &v, sizeof(v)) != sizeof(v)) {
			printf("R%d\n", errno);
			continue;
		}
		printf("%llu\n", (unsigned long long)v);
	}
	return 0;
}
