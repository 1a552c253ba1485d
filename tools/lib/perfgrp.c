// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: one perf event group on one PMU, opened with libperf and read
 * with a single read(2) of the leader (PERF_FORMAT_GROUP), so every member
 * comes from the same PMU transaction (the PCIe PMU serves a group read
 * from one hardware SNAPSHOT).
 *
 * libperf (6.1 and 6.12 alike) opens groups but its perf_evsel__read() of a
 * PERF_FORMAT_GROUP leader returns only the leader's value, and it does not
 * export the file descriptor. The group read is therefore decoded here:
 * the leader's fd is found once, after opening, by its event id among this
 * process's perf fds (/proc/self/fd), and each member's value is matched
 * to its slot by id.
 */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "internal.h"

#define GROUP_MAX 256

struct hwtel_group {
	const struct hwtel_pmu *pmu;
	bool pinned, opened;
	unsigned int n;
	struct perf_evsel *ev[GROUP_MAX];
	uint64_t id[GROUP_MAX];
	char spec[GROUP_MAX][64];
	struct perf_evlist *evlist;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	int leader_fd;
	uint64_t *buf;
	size_t bufsize;
};

static int silent(enum libperf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* libperf's globals (its print function, the page size), set once for all
 * threads
 */
static void libperf_once(void)
{
	libperf_init(silent);
}

struct hwtel_group *hwtel_group_new(const struct hwtel_pmu *pmu, bool pinned)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct hwtel_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	pthread_once(&once, libperf_once);
	g->pmu = pmu;
	g->pinned = pinned;
	g->leader_fd = -1;
	return g;
}

unsigned int hwtel_group_size(const struct hwtel_group *g)
{
	return g->n;
}

int hwtel_group_add(struct hwtel_group *g, const char *spec)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int ret;

	if (g->opened)
		return hwtel_err(-EBUSY, "group already open");
	if (g->n >= GROUP_MAX)
		return hwtel_err(-E2BIG, "more than %d events in one group", GROUP_MAX);
	ret = hwtel_pmu_event_attr(g->pmu, spec, &attr);
	if (ret)
		return ret;
	attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (g->n == 0) {
		attr.read_format |= PERF_FORMAT_GROUP;
		attr.pinned = g->pinned;
		/*
		 * Opened disabled, enabled once complete: each member added
		 * to a running group reschedules the whole group (the core's
		 * ctx_resched), which made opening a group of N members cost
		 * N^2 / 2 pmu add()/del() calls.
		 */
		attr.disabled = 1;
	}
	g->ev[g->n] = perf_evsel__new(&attr);
	if (!g->ev[g->n])
		return hwtel_err(-ENOMEM, "out of memory");
	snprintf(g->spec[g->n], sizeof(g->spec[0]), "%s", spec);
	return (int)g->n++;
}

int hwtel_perf_open_error(int err, const char *pmu, const char *what)
{
	if (err == -EACCES || err == -EPERM)
		return hwtel_err(-EACCES,
				 "no permission to open %s events on %s (%s): a system-wide uncore PMU needs /proc/sys/kernel/perf_event_paranoid <= 0, or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), or root",
				 what, pmu, strerror(-err));
	if (err == -ENOENT || err == -ENODEV)
		return hwtel_err(-ENODEV, "PMU %s is gone (%s)", pmu, strerror(-err));
	if (err == -EMFILE || err == -ENFILE)
		return hwtel_err(err, "too many open files for the %s events of %s; raise 'ulimit -n'",
				 what, pmu);
	return hwtel_err(err, "cannot open %s events on %s: %s (the PMU's layout does not match what the tool asked for?)",
			 what, pmu, strerror(-err));
}

static bool is_perf_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[perf_event]");
}

/*
 * The perf fd of ours whose event id is @id. The ioctl goes to a duplicate
 * whose own /proc link says perf_event: a descriptor that another thread
 * closed and opened again as some other file between our look at it and
 * the ioctl is never sent one. The duplicate is closed again: when its id
 * is @id, the descriptor it was made from was, at that moment, our
 * leader's, which libperf holds open until the group closes.
 */
static int find_fd_by_id(uint64_t id)
{
	struct dirent *de;
	int found = -1;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t fid;
		int fd, dup;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d) || !is_perf_fd(fd))
			continue;
		dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (dup < 0)
			continue;
		if (is_perf_fd(dup) && ioctl(dup, PERF_EVENT_IOC_ID, &fid) == 0 && fid == id)
			found = fd;
		close(dup);
		if (found >= 0)
			break;
	}
	closedir(d);
	return found >= 0 ? found : -ESRCH;
}

int hwtel_group_open(struct hwtel_group *g)
{
	struct perf_counts_values c;
	char cpu[16];
	unsigned int i;
	int ret;

	if (!g->n)
		return hwtel_err(-EINVAL, "empty group");
	snprintf(cpu, sizeof(cpu), "%d", g->pmu->cpu >= 0 ? g->pmu->cpu : 0);
	g->cpus = perf_cpu_map__new(cpu);
	g->threads = perf_thread_map__new_dummy();
	g->evlist = perf_evlist__new();
	if (!g->cpus || !g->threads || !g->evlist)
		return hwtel_err(-ENOMEM, "out of memory");
	perf_thread_map__set_pid(g->threads, 0, -1);
	for (i = 0; i < g->n; i++)
		perf_evlist__add(g->evlist, g->ev[i]);
	perf_evlist__set_maps(g->evlist, g->cpus, g->threads);
	perf_evlist__set_leader(g->evlist);
	ret = perf_evlist__open(g->evlist);
	if (ret < 0) {
		/* find the member that failed for the message */
		return hwtel_perf_open_error(ret, g->pmu->name, "counter");
	}
	g->opened = true;
	/* the leader's id, through libperf */
	ret = perf_evsel__read(g->ev[0], 0, 0, &c);
	if (ret < 0)
		return hwtel_err(ret, "cannot read event %s of %s: %s", g->spec[0],
				 g->pmu->name, strerror(-ret));
	g->id[0] = c.id;
	/*
	 * Its descriptor: the perf fd of this process whose id it is. Only
	 * perf fds are asked (by the /proc link of a duplicate, which gets the
	 * ioctl): another thread's descriptor is never sent a perf ioctl.
	 */
	ret = find_fd_by_id(g->id[0]);
	if (ret < 0)
		return hwtel_err(ret, "cannot find the file descriptor of the %s group leader%s",
				 g->pmu->name, ret == -ESRCH ? "" : " (is /proc mounted?)");
	g->leader_fd = ret;
	g->bufsize = (3 + 2 * (size_t)g->n) * sizeof(uint64_t);
	g->buf = calloc(1, g->bufsize);
	if (!g->buf)
		return -ENOMEM;
	/*
	 * The members' ids: the kernel returns a group in creation order (the
	 * order libperf opened them); later reads are matched by id.
	 */
	ret = (int)read(g->leader_fd, g->buf, g->bufsize);
	if (ret != (int)g->bufsize || g->buf[0] != g->n || g->buf[4] != g->id[0])
		return hwtel_err(ret < 0 ? -errno : -EIO, "first group read on %s failed",
				 g->pmu->name);
	for (i = 1; i < g->n; i++)
		g->id[i] = g->buf[4 + 2 * i];
	if (ioctl(g->leader_fd, PERF_EVENT_IOC_ENABLE, 0))
		return hwtel_err(-errno, "cannot enable the %s group: %s",
				 g->pmu->name, strerror(errno));
	return 0;
}

int hwtel_group_read(struct hwtel_group *g, uint64_t *values,
		     uint64_t *enabled, uint64_t *running)
{
	unsigned int i, k;
	uint64_t nr;
	ssize_t n;

	if (g->leader_fd < 0)
		return hwtel_err(-EBADF, "group not open");
	n = read(g->leader_fd, g->buf, g->bufsize);
	if (n < 0) {
		int e = errno;

		if (e == ENODEV || e == ENOENT)
			return hwtel_err(-ENODEV, "PMU %s vanished", g->pmu->name);
		return hwtel_err(-e, "group read on %s failed: %s", g->pmu->name, strerror(e));
	}
	if (n == 0)	/* the event is in error/exit state: its PMU is gone */
		return hwtel_err(-ENODEV, "PMU %s vanished (its events were closed by the kernel)",
				 g->pmu->name);
	if ((size_t)n < 3 * sizeof(uint64_t))
		return hwtel_err(-EIO, "short group read on %s", g->pmu->name);
	nr = g->buf[0];
	if (nr != g->n || (size_t)n != (3 + 2 * nr) * sizeof(uint64_t))
		return hwtel_err(-EIO, "group read on %s returned %llu of %u events",
				 g->pmu->name, (unsigned long long)nr, g->n);
	if (enabled)
		*enabled = g->buf[1];
	if (running)
		*running = g->buf[2];
	for (i = 0; i < g->n; i++) {
		uint64_t val = g->buf[3 + 2 * i], id = g->buf[4 + 2 * i];

		/* the kernel returns members in creation order; check by id */
		if (g->id[i] == id) {
			values[i] = val;
			continue;
		}
		for (k = 0; k < g->n; k++)
			if (g->id[k] == id)
				break;
		if (k == g->n)
			return hwtel_err(-EIO, "group read on %s: unknown event id %llu",
					 g->pmu->name, (unsigned long long)id);
		values[k] = val;
	}
	return 0;
}

void hwtel_group_free(struct hwtel_group *g)
{
	unsigned int i;

	if (!g)
		return;
	if (g->evlist) {
		if (g->opened)
			perf_evlist__close(g->evlist);
		/* perf_evlist__delete() deletes the evsels it holds */
		perf_evlist__delete(g->evlist);
	} else {
		for (i = 0; i < g->n; i++)
			perf_evsel__delete(g->ev[i]);
	}
	perf_cpu_map__put(g->cpus);
	perf_thread_map__put(g->threads);
	free(g->buf);
	free(g);
}
