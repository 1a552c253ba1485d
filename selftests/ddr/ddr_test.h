/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the C selftests of the DDR PMU: module loading, the
 * model's debugfs controls and perf_event_open().
 */
#ifndef DDR_TEST_H
#define DDR_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/utsname.h>
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

/*
 * Modules go in and out by system call, by path from the running kernel's
 * modules.dep, not through modprobe and rmmod: in a TCG guest of the debug
 * kernel every program started costs half a second or more, and a test
 * loads and unloads three modules per case. The lab's modules have no
 * options in /etc/modprobe.d and no soft dependencies, so nothing modprobe
 * adds is lost.
 */
static inline int ddr_mod_path(const char *name, char *path, size_t len)
{
	char dep[300], line[1024], *colon, *base;
	size_t n = strlen(name);
	struct utsname u;
	FILE *f;

	if (uname(&u))
		return -1;
	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(dep, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (!strncmp(base, name, n) && !strcmp(base + n, ".ko")) {
			fclose(f);
			if ((size_t)snprintf(path, len, "/lib/modules/%.65s/%.900s",
					     u.release, line) >= len) {
				errno = ENAMETOOLONG;
				return -1;
			}
			return 0;
		}
	}
	fclose(f);
	errno = ENOENT;
	return -1;
}

/* finit_module(2) of @name with @params: 0, or -1 with errno (EEXIST: loaded) */
static inline int ddr_mod_insert(const char *name, const char *params)
{
	char path[1024];
	int fd, ret, e;

	if (ddr_mod_path(name, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	e = errno;
	close(fd);
	errno = e;
	return ret ? -1 : 0;
}

/* ddr_mod_insert() from @cpu: a driver's probe runs in the loading task */
static inline int ddr_mod_insert_on(int cpu, const char *name,
				    const char *params)
{
	cpu_set_t old, one;
	int ret, e;

	if (sched_getaffinity(0, sizeof(old), &old))
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -1;
	ret = ddr_mod_insert(name, params);
	e = errno;
	sched_setaffinity(0, sizeof(old), &old);
	errno = e;
	return ret;
}

static inline void ddr_unload(void)
{
	/* as rmmod: errors (not loaded, in use) are the caller's to check */
	syscall(SYS_delete_module, "marvell_cn10k_ddr_pmu", O_NONBLOCK);
	syscall(SYS_delete_module, "hwtel_sim_ddr", O_NONBLOCK);
	syscall(SYS_delete_module, "hwtel_sim", O_NONBLOCK);
}

/*
 * The model with @model_params (variant=...), then the driver with
 * @drv_params (NULL: none) probed on DDR_OWNER_CPU. 0, or -1 with errno.
 */
static inline int ddr_load_params(const char *model_params,
				  const char *drv_params)
{
	ddr_unload();
	if (ddr_mod_insert("hwtel_sim", NULL) && errno != EEXIST)
		return -1;
	if (ddr_mod_insert("hwtel_sim_ddr", model_params))
		return -1;
	return ddr_mod_insert_on(DDR_OWNER_CPU, "marvell_cn10k_ddr_pmu",
				 drv_params);
}

/* Model with @n instances, then the driver probed on DDR_OWNER_CPU */
static inline int ddr_load(const char *variant, int n, const char *params)
{
	char mp[128];

	snprintf(mp, sizeof(mp), "variant=%s instances=%d", variant, n);
	return ddr_load_params(mp, params);
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
