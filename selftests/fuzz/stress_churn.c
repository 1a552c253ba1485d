// SPDX-License-Identifier: GPL-2.0
/*
 * stress_churn: helper of selftests/fuzz/stress.sh (not a test by itself).
 *
 *   stress_churn [--seed S] [--seconds S] [--threads T] [--no-hotplug]
 *                [--clear-ms MS]
 *
 * T threads open valid counting events on the hwtel PMUs (singles and
 * groups led by one of our events, with software siblings; never under a
 * software leader, see Documentation/dev-tools/hwtel-core-bugs.rst), read
 * them (also with PERF_FORMAT_GROUP), enable/disable/reset them and close
 * them, re-reading the PMU list as the shell around it reloads modules and
 * unbinds devices. One more thread takes CPUs offline and online, another
 * sends netlink CLEAR (counters, flags, marks) to every ndk_pcie_tlm device
 * every MS milliseconds (default 50). Nothing is checked for exactness here
 * (the shell does that in its quiet phase); the last line is
 *   opened N reads N hotplug N clears N
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/genetlink.h>
#include <linux/ndk_pcie_tlm.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "fuzz_common.h"

#define SYS_DEV		"/sys/bus/event_source/devices"
#define MAX_PMUS	16
#define MAX_THREADS	16

struct pmu {
	char name[64];
	unsigned int type;
	int cpu;
	int pcie;
};

static pthread_mutex_t pmu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pmu pmus[MAX_PMUS];
static int npmus;
static uint64_t opt_seed;
static double opt_seconds = 10;
static unsigned int opt_threads = 3;
static int opt_hotplug = 1;
static unsigned int opt_clear_ms = 50;
static double t_end;
static atomic_ulong n_opened, n_reads, n_hotplug, n_clears, n_clear_err;

static long read_num(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 0);
}

static void scan_pmus(void)
{
	struct pmu tmp[MAX_PMUS];
	struct dirent *d;
	DIR *dir = opendir(SYS_DEV);
	char path[512];
	int n = 0;

	if (!dir)
		return;
	while ((d = readdir(dir)) && n < MAX_PMUS) {
		int pcie = !strncmp(d->d_name, "ndk_pcie_tlm_", 13);

		if (!pcie && strncmp(d->d_name, "mrvl_ddr_pmu_", 13))
			continue;
		snprintf(tmp[n].name, sizeof(tmp[n].name), "%s", d->d_name);
		snprintf(path, sizeof(path), SYS_DEV "/%s/type", d->d_name);
		tmp[n].type = read_num(path);
		snprintf(path, sizeof(path), SYS_DEV "/%s/cpumask", d->d_name);
		tmp[n].cpu = read_num(path);
		tmp[n].pcie = pcie;
		if ((int)tmp[n].type > 0)
			n++;
	}
	closedir(dir);
	pthread_mutex_lock(&pmu_lock);
	memcpy(pmus, tmp, sizeof(tmp));
	npmus = n;
	pthread_mutex_unlock(&pmu_lock);
}

static int pick_pmu(struct fz_rng *r, struct pmu *out)
{
	int ok = 0;

	pthread_mutex_lock(&pmu_lock);
	if (npmus) {
		*out = pmus[fz_below(r, npmus)];
		ok = 1;
	}
	pthread_mutex_unlock(&pmu_lock);
	return ok;
}

/* a valid config: PCIe kinds at ep 0, DDR events 1..8 and the fixed ones */
static uint64_t valid_config(struct fz_rng *r, const struct pmu *p)
{
	if (p->pcie) {
		static const uint64_t c[] = {
			0x1, 0x2, 0x3, 0x10003, 0x20004, 0x30005, 0x20006, 0x30008,
			0x000000009 | 3ULL << 32, 0xa | 1ULL << 32, 0xd | 20ULL << 32,
			0xd | 51ULL << 32,
		};
		return c[fz_below(r, sizeof(c) / sizeof(c[0]))];
	}
	return fz_pct(r, 25) ? 100 + fz_below(r, 2) : 1 + fz_below(r, 8);
}

static int ev_open(uint32_t type, uint64_t config, int cpu, int group, uint64_t rf)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.read_format = rf;
	a.disabled = group < 0 && fz_mix(config) & 1;
	return syscall(SYS_perf_event_open, &a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void *churn(void *arg)
{
	struct fz_rng r;
	uint64_t buf[64];
	unsigned long i;

	fz_seed(&r, opt_seed, (unsigned int)(uintptr_t)arg);
	for (i = 0; fz_now() < t_end; i++) {
		struct pmu p;
		int fds[8], n = 0, k, m;
		uint64_t rf = fz_pct(&r, 50) ? PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING : 0;

		if (!(i & 31))
			scan_pmus();
		if (!pick_pmu(&r, &p)) {
			usleep(1000);
			continue;
		}
		fds[n] = ev_open(p.type, valid_config(&r, &p), p.cpu, -1, rf);
		if (fds[n] < 0)
			continue;
		n++;
		n_opened++;
		m = fz_below(&r, 6);
		for (k = 0; k < m; k++) {
			int fd;

			if (fz_pct(&r, 25))	/* software sibling under our leader */
				fd = ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, p.cpu,
					     fds[0], rf);
			else
				fd = ev_open(p.type, valid_config(&r, &p), p.cpu, fds[0], rf);
			if (fd >= 0) {
				fds[n++] = fd;
				n_opened++;
			}
		}
		if (fz_pct(&r, 50))
			ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		for (k = fz_below(&r, 4); k >= 0; k--) {
			if (read(fds[fz_below(&r, n)], buf, sizeof(buf)) > 0)
				n_reads++;
			if (fz_pct(&r, 20))
				ioctl(fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
			if (fz_pct(&r, 20))
				ioctl(fds[0], fz_pct(&r, 50) ? PERF_EVENT_IOC_DISABLE :
					      PERF_EVENT_IOC_ENABLE, 0);
			if (fz_pct(&r, 30))
				usleep(fz_below(&r, 3000));
		}
		/* close in a random order: leader first now and then */
		for (k = 0; k < n; k++) {
			int j = fz_below(&r, n);
			int t = fds[k];

			fds[k] = fds[j];
			fds[j] = t;
		}
		for (k = 0; k < n; k++)
			close(fds[k]);
	}
	return NULL;
}

static int cpu_online(int cpu, int on)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -1;
	close(fd);
	return ret;
}

static void *hotplug(void *arg)
{
	int cpus[64], n = 0, i, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct fz_rng r;
	char path[128];

	fz_seed(&r, opt_seed, 100);
	for (i = 0; i < ncpu && n < 64; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", i);
		if (!access(path, W_OK))
			cpus[n++] = i;
	}
	while (n && fz_now() < t_end) {
		int c = cpus[fz_below(&r, n)];

		cpu_online(c, 0);
		usleep(5000 + fz_below(&r, 30000));
		if (!cpu_online(c, 1))
			n_hotplug++;
		usleep(5000 + fz_below(&r, 30000));
	}
	for (i = 0; i < n; i++)
		cpu_online(cpus[i], 1);
	return arg;
}

/* the family id from the generic netlink controller, raw */
static int nl_family(int fd)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char attrs[64];
	} req;
	char buf[4096];
	struct nlattr *a;
	struct nlmsghdr *nh;
	size_t nl = strlen(NDK_PCIE_TLM_FAMILY_NAME) + 1;
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	a = (struct nlattr *)req.attrs;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + nl;
	memcpy((char *)a + NLA_HDRLEN, NDK_PCIE_TLM_FAMILY_NAME, nl);
	req.n.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
		return -1;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return -1;
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (size_t)n) || nh->nlmsg_type == NLMSG_ERROR)
		return -1;
	n = nh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	for (a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	     n >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= n;
	     n -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((char *)a + NLA_HDRLEN);
	return -1;
}

static int nl_clear(int fd, int family, const char *dev, uint32_t what, uint32_t seq)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char attrs[128];
	} req;
	char buf[4096];
	struct nlattr *a;
	struct nlmsghdr *nh;
	size_t dl = strlen(dev) + 1, off;
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = family;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.n.nlmsg_seq = seq;
	req.g.cmd = NDK_PCIE_TLM_CMD_CLEAR;
	req.g.version = NDK_PCIE_TLM_FAMILY_VERSION;
	a = (struct nlattr *)req.attrs;
	a->nla_type = NDK_PCIE_TLM_A_DEV_NAME;
	a->nla_len = NLA_HDRLEN + dl;
	memcpy((char *)a + NLA_HDRLEN, dev, dl);
	off = NLA_ALIGN(a->nla_len);
	a = (struct nlattr *)(req.attrs + off);
	a->nla_type = NDK_PCIE_TLM_A_CLEAR;
	a->nla_len = NLA_HDRLEN + 4;
	memcpy((char *)a + NLA_HDRLEN, &what, 4);
	off += NLA_ALIGN(a->nla_len);
	req.n.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + off;
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return -errno;
	nh = (struct nlmsghdr *)buf;
	if (NLMSG_OK(nh, (size_t)n) && nh->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	return -EPROTO;
}

static void *clearer(void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { 1, 0 };
	struct fz_rng r;
	uint32_t seq = 1;
	int fd, family = -1;

	fz_seed(&r, opt_seed, 101);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return arg;
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (fz_now() < t_end) {
		struct pmu p;

		usleep(opt_clear_ms * 1000);
		if (family < 0)
			family = nl_family(fd);	/* the module may be reloading */
		if (family < 0 || !pick_pmu(&r, &p) || !p.pcie)
			continue;
		if (nl_clear(fd, family, p.name, 1 + fz_below(&r, NDK_PCIE_TLM_CLEAR_ALL),
			     seq++)) {
			n_clear_err++;
			family = -1;	/* re-resolve: the family may be new */
		} else {
			n_clears++;
		}
	}
	close(fd);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS], hp, cl;
	unsigned int i;

	for (i = 1; i < (unsigned int)argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--no-hotplug"))
			opt_hotplug = 0;
		else if (i + 1 < (unsigned int)argc && !strcmp(o, "--seed"))
			opt_seed = fz_num(o, argv[++i]);
		else if (i + 1 < (unsigned int)argc && !strcmp(o, "--seconds"))
			opt_seconds = strtod(argv[++i], NULL);
		else if (i + 1 < (unsigned int)argc && !strcmp(o, "--threads"))
			opt_threads = fz_num(o, argv[++i]);
		else if (i + 1 < (unsigned int)argc && !strcmp(o, "--clear-ms"))
			opt_clear_ms = fz_num(o, argv[++i]);
		else
			return fprintf(stderr, "usage: see the comment in stress_churn.c\n"), 2;
	}
	if (!opt_threads || opt_threads > MAX_THREADS)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_end = fz_now() + opt_seconds;
	scan_pmus();
	for (i = 0; i < opt_threads; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i);
	if (opt_hotplug)
		pthread_create(&hp, NULL, hotplug, NULL);
	pthread_create(&cl, NULL, clearer, NULL);
	for (i = 0; i < opt_threads; i++)
		pthread_join(t[i], NULL);
	if (opt_hotplug)
		pthread_join(hp, NULL);
	pthread_join(cl, NULL);
	printf("opened %lu reads %lu hotplug %lu clears %lu clear_errors %lu\n",
	       (unsigned long)n_opened, (unsigned long)n_reads, (unsigned long)n_hotplug,
	       (unsigned long)n_clears, (unsigned long)n_clear_err);
	return 0;
}
