/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the C selftests of the DDR PMU: module loading, the
 * model's debugfs controls and perf_event_open().
 */
#ifndef DDR_TEST_H
#define DDR_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DDR_DEVS	"/sys/bus/event_source/devices"
#define DDR_DBG		"/sys/kernel/debug/hwtel-sim"
#define DDR_OWNER_CPU	1	/* the driver is probed there */

struct ddr_variant_info {
	const char *name;
	uint64_t base;
	uint64_t gen_max;	/* generic counters freeze here */
	uint64_t fr_mask;	/* free-running counters wrap at fr_mask + 1 */
};

static const struct ddr_variant_info ddr_cn10k = {
	"cn10k", 0x87e1c0000000ULL, (1ULL << 48) - 1, (1ULL << 48) - 1,
};
static const struct ddr_variant_info ddr_odyssey = {
	"odyssey", 0x87e1d0000000ULL, UINT64_MAX, UINT64_MAX,
};
static const struct ddr_variant_info ddr_cn20k = {
	"cn20k", 0x87e1e0000000ULL, UINT64_MAX, UINT64_MAX,
};

static inline int ddr_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static inline void ddr_unload(void)
{
	ddr_sh("rmmod marvell_cn10k_ddr_pmu 2>/dev/null; rmmod hwtel_sim_ddr 2>/dev/null; rmmod hwtel_sim 2>/dev/null");
}

/* Model with @n instances, then the driver probed on DDR_OWNER_CPU */
static inline int ddr_load(const char *variant, int n, const char *params)
{
	ddr_unload();
	if (ddr_sh("modprobe hwtel_sim_ddr variant=%s instances=%d", variant, n))
		return -1;
	return ddr_sh("taskset -c %d modprobe marvell_cn10k_ddr_pmu %s",
		      DDR_OWNER_CPU, params ? params : "");
}

static inline void ddr_pmu_name(char *buf, size_t len,
				const struct ddr_variant_info *v, int inst)
{
	snprintf(buf, len, "mrvl_ddr_pmu_%" PRIx64,
		 v->base + (uint64_t)inst * 0x1000000);
}

static inline int ddr_read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/*
 * ddr_load() unless the model of @variant with @n instances and the driver
 * (default parameters) are loaded already: tests that leave no state behind
 * share one load per variant. The caller unloads at exit.
 */
static inline int ddr_load_shared(const char *variant, int n)
{
	char buf[64], want[64];

	if (!ddr_read_file("/sys/module/hwtel_sim_ddr/parameters/variant", buf,
			   sizeof(buf)) &&
	    !strncmp(buf, variant, strlen(variant)) &&
	    buf[strlen(variant)] == '\n' &&
	    !ddr_read_file("/sys/module/hwtel_sim_ddr/parameters/instances",
			   buf, sizeof(buf)) &&
	    atoi(buf) == n &&
	    !ddr_read_file("/sys/module/marvell_cn10k_ddr_pmu/parameters/poll_period_sec",
			   buf, sizeof(buf))) {
		snprintf(want, sizeof(want), "100\n");
		if (!strcmp(buf, want))
			return 0;
	}
	return ddr_load(variant, n, NULL);
}

static inline int ddr_write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(s, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static inline int ddr_pmu_type(const char *pmu)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), DDR_DEVS "/%s/type", pmu);
	if (ddr_read_file(path, buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

static inline int ddr_dbg_write(const char *pmu, const char *file,
				const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), DDR_DBG "/%s/%s", pmu, file);
	return ddr_write_file(path, val);
}

static inline uint64_t ddr_dbg_u64(const char *pmu, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), DDR_DBG "/%s/%s", pmu, file);
	if (ddr_read_file(path, buf, sizeof(buf)))
		return UINT64_MAX - 1;
	return strtoull(buf, NULL, 0);
}

static inline int ddr_inject(const char *pmu, const char *ev, uint64_t n)
{
	return ddr_dbg_write(pmu, "inject", "%s %" PRIu64 "\n", ev, n);
}

static inline int ddr_force(const char *pmu, const char *file, uint64_t v)
{
	return ddr_dbg_write(pmu, file, "%" PRIu64 "\n", v);
}

/* Generic counter whose CFG (or CFG1 if @cfg1) has @bit set, or -1 */
static inline int ddr_find_counter(const char *pmu, int bit, int cfg1)
{
	char path[256], line[256];
	unsigned long long c0, c1, op, val;
	int n, run;
	FILE *f;

	snprintf(path, sizeof(path), DDR_DBG "/%s/regs", pmu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "counter%d op_mode %llu running %d cfg %llx cfg1 %llx value %llu",
			   &n, &op, &run, &c0, &c1, &val) != 6)
			continue;
		if (((cfg1 ? c1 : c0) >> bit) & 1) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return -1;
}

static inline int ddr_open(int type, uint64_t config, int group, int cpu,
			   pid_t pid, struct perf_event_attr *tmpl)
{
	struct perf_event_attr attr;

	if (tmpl)
		attr = *tmpl;
	else
		memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	return syscall(SYS_perf_event_open, &attr, pid, cpu, group, 0);
}

/* errno of a perf_event_open() that must fail, 0 if it succeeded */
static inline int ddr_open_errno(int type, uint64_t config, int group,
				 int cpu, pid_t pid,
				 struct perf_event_attr *tmpl)
{
	int fd = ddr_open(type, config, group, cpu, pid, tmpl);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static inline uint64_t ddr_count(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX - 2;
	return v;
}

static inline void ddr_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static inline void ddr_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#endif /* DDR_TEST_H */
