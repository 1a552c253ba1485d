/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the C selftests of the PCIe telemetry PMU: load the model
 * and the driver, talk to the model's debugfs, open perf events.
 */
#ifndef PCIE_TEST_H
#define PCIE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PCIE_PMU	"ndk_pcie_tlm_3fff00000000"
#define PCIE_PMU1	"ndk_pcie_tlm_3fff00100000"
#define PCIE_SYS	"/sys/bus/event_source/devices/"
#define PCIE_DBG	"/sys/kernel/debug/hwtel-sim/"

/* config of a counter: kind, endpoint, bus, index */
#define PCIE_CFG(k, e, b, i) \
	((uint64_t)(k) | (uint64_t)(e) << 8 | (uint64_t)(b) << 16 | \
	 (uint64_t)(i) << 32)

enum {
	K_PCIE_CYCLES = 1, K_DMA_CYCLES, K_WORDS, K_STALL, K_FRAMES,
	K_MVB_ITEMS, K_MVB_STALL, K_ITEMS, K_REGION, K_BRAKE, K_TAGS_BAND,
	K_STFIFO_BAND, K_RAW, K_SNAP_NS,
};

static inline int pcie_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	return WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
}

static inline void pcie_unload(void)
{
	pcie_sh("modprobe -r ndk_pcie_tlm 2>/dev/null; modprobe -r hwtel_sim_pcie 2>/dev/null");
}

/* load the model with @params and the driver (probing on CPU 1) */
static inline int pcie_load(const char *params, const char *drv_params)
{
	pcie_unload();
	if (pcie_sh("modprobe hwtel_sim_pcie %s", params ? params : ""))
		return -1;
	return pcie_sh("taskset -c 1 modprobe ndk_pcie_tlm %s",
		       drv_params ? drv_params : "");
}

static inline int pcie_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static inline long long pcie_sys_num(const char *pmu, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), PCIE_SYS "%s/%s", pmu, file);
	if (pcie_read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 0);
}

static inline int pcie_dbg_write(const char *pmu, const char *file,
				 const char *fmt, ...)
{
	char path[256], buf[256];
	va_list ap;
	int fd, ret = 0;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), PCIE_DBG "%s/%s", pmu, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, strlen(buf)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* one line "<key> <value>" of the model's stats file */
static inline long long pcie_stat(const char *pmu, const char *key)
{
	char path[256], buf[512], *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), PCIE_DBG "%s/stats", pmu);
	if (pcie_read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoll(p + kl + 1, NULL, 0);
	}
	return -1;
}

/* perf_event_open on the PMU's CPU; returns fd or -errno */
static inline int pcie_open(const char *pmu, uint64_t config, int group_fd,
			    uint64_t read_format)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pcie_sys_num(pmu, "type");
	attr.config = config;
	attr.read_format = read_format;
	attr.disabled = group_fd < 0;
	fd = syscall(SYS_perf_event_open, &attr, -1,
		     (int)pcie_sys_num(pmu, "cpumask"), group_fd, 0);
	return fd < 0 ? -errno : fd;
}

static inline int pcie_open_attr(struct perf_event_attr *attr, int pid,
				 int cpu, int group_fd)
{
	int fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, 0);

	return fd < 0 ? -errno : fd;
}

static inline long long pcie_read1(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -errno;
	return (long long)v;
}

#endif /* PCIE_TEST_H */
