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
 *
 *   pcie_evt -b K PMU   bench: open a group of raw entries 0..K-1, enable it,
 *                       zero the model's stats, read the group once and print
 *                       "K reads writes snapshots" from the model's stats
 *   pcie_evt -l K PMU   bench: like -b, then read the group again and again
 *                       until killed (a steady reader, as hwtel record is)
 *   pcie_evt -t PMU     one netlink TOTALS_GET of PMU; prints the entries
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/ndk_pcie_tlm.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXEV 256	/* the driver's largest group */

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

static void stats_write(const char *pmu, const char *val)
{
	char path[256];
	int f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/hwtel-sim/%s/stats", pmu);
	f = open(path, O_WRONLY);
	if (f >= 0) {
		if (write(f, val, strlen(val)) < 0)
			perror(path);
		close(f);
	}
}

static long long stats_get(const char *pmu, const char *key)
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

static int bench(const char *pmu, int k, int loop)
{
	struct perf_event_attr attr;
	uint64_t buf[1 + MAXEV];
	char path[256];
	int fd[MAXEV], i, type, cpu;

	if (k < 1 || k > MAXEV) {
		fprintf(stderr, "pcie_evt: -b takes 1..%d counters\n", MAXEV);
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (read_int(path, "%d", &type))
		return 2;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpumask", pmu);
	if (read_int(path, "%d", &cpu))
		return 2;
	for (i = 0; i < k; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = type;
		attr.config = 13 | (uint64_t)i << 32;	/* raw,idx=i */
		attr.read_format = PERF_FORMAT_GROUP;
		attr.disabled = !i;
		fd[i] = syscall(SYS_perf_event_open, &attr, -1, cpu,
				i ? fd[0] : -1, 0);
		if (fd[i] < 0)
			return perror("perf_event_open"), 2;
	}
	ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0);
	if (read(fd[0], buf, sizeof(buf)) < 0)
		return perror("read"), 2;
	stats_write(pmu, "0");
	if (read(fd[0], buf, sizeof(buf)) < 0)
		return perror("read"), 2;
	printf("%d %lld %lld %lld\n", k, stats_get(pmu, "reads"),
	       stats_get(pmu, "writes"), stats_get(pmu, "snapshots"));
	fflush(stdout);
	while (loop)
		if (read(fd[0], buf, sizeof(buf)) < 0)
			return perror("read"), 2;
	for (i = 0; i < k; i++)
		close(fd[i]);
	return 0;
}

/* minimal generic netlink: resolve the family, one TOTALS_GET */
static int nl_totals(const char *pmu)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char attrs[256];
	} req;
	static char rbuf[1 << 16];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlattr *na;
	int s, fam = -1, len, entries = 0;
	ssize_t r;

	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (s < 0)
		return perror("socket"), 2;
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	na = (struct nlattr *)req.attrs;
	na->nla_type = CTRL_ATTR_FAMILY_NAME;
	na->nla_len = NLA_HDRLEN + strlen(NDK_PCIE_TLM_FAMILY_NAME) + 1;
	strcpy((char *)na + NLA_HDRLEN, NDK_PCIE_TLM_FAMILY_NAME);
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(na->nla_len));
	if (sendto(s, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return perror("sendto"), 2;
	r = recv(s, rbuf, sizeof(rbuf), 0);
	if (r <= 0)
		return 2;
	len = ((struct nlmsghdr *)rbuf)->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (na = (struct nlattr *)(rbuf + NLMSG_LENGTH(GENL_HDRLEN)); len > 0;
	     len -= NLA_ALIGN(na->nla_len),
	     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))
		if (na->nla_type == CTRL_ATTR_FAMILY_ID)
			fam = *(uint16_t *)((char *)na + NLA_HDRLEN);
	if (fam < 0)
		return fprintf(stderr, "no ndk_pcie_tlm family\n"), 2;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = fam;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.g.cmd = NDK_PCIE_TLM_CMD_TOTALS_GET;
	req.g.version = 1;
	na = (struct nlattr *)req.attrs;
	na->nla_type = NDK_PCIE_TLM_A_DEV_NAME;
	na->nla_len = NLA_HDRLEN + strlen(pmu) + 1;
	strcpy((char *)na + NLA_HDRLEN, pmu);
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(na->nla_len));
	if (sendto(s, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return perror("sendto"), 2;
	r = recv(s, rbuf, sizeof(rbuf), 0);
	if (r <= 0 || ((struct nlmsghdr *)rbuf)->nlmsg_type == NLMSG_ERROR)
		return fprintf(stderr, "TOTALS_GET failed\n"), 2;
	len = ((struct nlmsghdr *)rbuf)->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (na = (struct nlattr *)(rbuf + NLMSG_LENGTH(GENL_HDRLEN)); len > 0;
	     len -= NLA_ALIGN(na->nla_len),
	     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))
		if (na->nla_type == NDK_PCIE_TLM_A_ENTRIES_USED)
			entries = *(uint32_t *)((char *)na + NLA_HDRLEN);
	printf("%d\n", entries);
	close(s);
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

	if (argc == 4 && !strcmp(argv[1], "-b"))
		return bench(argv[3], atoi(argv[2]), 0);
	if (argc == 4 && !strcmp(argv[1], "-l"))
		return bench(argv[3], atoi(argv[2]), 1);
	if (argc == 3 && !strcmp(argv[1], "-t"))
		return nl_totals(argv[2]);
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
