// SPDX-License-Identifier: GPL-2.0
/*
 * perfgrp.c on a real perf group: software cpu-clock events behind a PMU
 * of a scratch sysfs tree (type 1, PERF_TYPE_SOFTWARE), opened per CPU as
 * the uncore PMUs are. Needs what an uncore PMU needs (root, CAP_PERFMON or
 * perf_event_paranoid <= 0); without it the test says so and checks nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>

#include "lib/internal.h"	/* struct hwtel_pmu, hwtel_group_*() */
#include "unit.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#define SW_PMU "hwtel_sw"

#ifdef NATIVE_ARCH

/* a PMU directory: type 1 (software), CPU 0, one format field */
static const char *sw_sysfs(void)
{
	const char *root = unit_tmp("sw-sysfs");
	static const char *const files[][2] = {
		{ "type", "1\n" },
		{ "cpumask", "0\n" },
		{ "format/event", "config:0-63\n" },
	};
	char path[PATH_MAX + 128];
	unsigned int i;
	FILE *f;

	if (system(unit_fmt("mkdir -p '%s/bus/event_source/devices/%s/format'", root, SW_PMU)))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/%s", root, SW_PMU,
			 files[i][0]);
		f = fopen(path, "w");
		if (!f)
			return NULL;
		fputs(files[i][1], f);
		fclose(f);
	}
	return root;
}

/* what the child saw, sent to the parent through a pipe */
struct fd_report {
	int setup;		/* 0, or the step that failed (line number) */
	int setup_errno;
	int open_ret, read_ret;
	int other_fd;		/* the other thread's file */
	int id_perf;		/* PERF_EVENT_IOC_ID on perf fds */
	int id_other;		/* ... on any other descriptor */
	int bad_fd;
	char bad_link[64];
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int listener;		/* -1 until the filter is installed */
	struct fd_report r;
} sv = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, { 0 } };

/*
 * The other thread: told by seccomp of each perf_event_open and
 * PERF_EVENT_IOC_ID ioctl of the thread opening the group, which waits in
 * its system call meanwhile. At the first perf_event_open (the leader's)
 * it opens a file of its own, so that file lands on the lowest free
 * descriptor at that instant, the one a guess made before the call names.
 * Each ioctl's descriptor is looked at before the kernel runs it.
 */
static void *supervisor(void *arg)
{
	struct seccomp_notif_sizes sz;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	int fd, n = 0;

	(void)arg;
	pthread_mutex_lock(&sv.lock);
	while (sv.listener < 0)
		pthread_cond_wait(&sv.cond, &sv.lock);
	fd = sv.listener;
	pthread_mutex_unlock(&sv.lock);
	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz))
		return NULL;
	req = calloc(1, sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req));
	resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ?
			 sz.seccomp_notif_resp : sizeof(*resp));
	if (!req || !resp)
		return NULL;
	for (;;) {
		memset(req, 0, sz.seccomp_notif);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req))
			break;
		pthread_mutex_lock(&sv.lock);
		if (req->data.nr == __NR_perf_event_open) {
			if (n++ == 0)
				sv.r.other_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		} else {
			char path[64], link[64] = "";
			int target = (int)req->data.args[0];
			ssize_t len;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", target);
			len = readlink(path, link, sizeof(link) - 1);
			link[len > 0 ? len : 0] = '\0';
			if (!strcmp(link, "anon_inode:[perf_event]")) {
				sv.r.id_perf++;
			} else if (!sv.r.id_other++) {
				sv.r.bad_fd = target;
				snprintf(sv.r.bad_link, sizeof(sv.r.bad_link), "%s", link);
			}
		}
		pthread_mutex_unlock(&sv.lock);
		memset(resp, 0, sz.seccomp_notif_resp);
		resp->id = req->id;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp))
			break;
	}
	return NULL;
}

/* this thread's perf_event_open and PERF_EVENT_IOC_ID go to the supervisor */
static int notify_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 2),
		/* the low half of the request (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)PERF_EVENT_IOC_ID, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

#define SETUP_FAILED(r) ((r)->setup = __LINE__, (r)->setup_errno = errno)

static void group_child(int out)
{
	static struct hwtel_pmu pmu;
	struct hwtel_group *g;
	struct fd_report r;
	uint64_t v[2];
	pthread_t t;
	int fd;

	if (pthread_create(&t, NULL, supervisor, NULL)) {
		memset(&r, 0, sizeof(r));
		SETUP_FAILED(&r);
		goto report;
	}
	if (hwtel_pmu_load(SW_PMU, &pmu)) {
		memset(&r, 0, sizeof(r));
		SETUP_FAILED(&r);
		goto report;
	}
	g = hwtel_group_new(&pmu, false);
	if (!g || hwtel_group_add(g, "event=0") != 0 || hwtel_group_add(g, "event=0") != 1) {
		memset(&r, 0, sizeof(r));
		SETUP_FAILED(&r);
		goto report;
	}
	fd = notify_filter();
	if (fd < 0) {
		memset(&r, 0, sizeof(r));
		SETUP_FAILED(&r);
		goto report;
	}
	pthread_mutex_lock(&sv.lock);
	sv.r.other_fd = -1;
	sv.listener = fd;
	pthread_cond_signal(&sv.cond);
	pthread_mutex_unlock(&sv.lock);

	sv.r.open_ret = hwtel_group_open(g);
	sv.r.read_ret = sv.r.open_ret ? -1 : hwtel_group_read(g, v, NULL, NULL);
	pthread_mutex_lock(&sv.lock);
	r = sv.r;
	pthread_mutex_unlock(&sv.lock);
report:
	if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(2);
	_exit(0);	/* the supervisor waits in its ioctl: end it with us */
}

/*
 * hwtel_group_open finds the leader's descriptor without sending a perf
 * ioctl to any descriptor that is not a perf event: in a program with
 * other threads, a file one of them opens while the group opens is not
 * touched. The other thread is made to open its file at the worst moment,
 * deterministically, with no timing: the opening thread's perf_event_open
 * calls stop in seccomp (user notification), and the other thread opens
 * /dev/null before it lets the leader's call go on. A guess of "the lowest
 * free descriptor" taken before the call then names the other thread's
 * file (76f36f8 removed such a guess).
 */
TEST(group_open_leaves_other_threads_fds_alone)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK };
	struct fd_report r;
	const char *root;
	int p[2], st, probe;
	pid_t pid;

	probe = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (probe < 0) {
		printf("#   per-CPU perf event: %s (root, CAP_PERFMON or perf_event_paranoid <= 0 needed): not checked\n",
		       strerror(errno));
		return;
	}
	close(probe);
	root = sw_sysfs();
	CHECK(root != NULL);
	if (!root)
		return;
	hwtel_set_sysfs_root(root);
	CHECK_EQ(pipe(p), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		alarm(60);	/* a supervisor that never answers fails the test, never hangs it */
		group_child(p[1]);
	}
	close(p[1]);
	memset(&r, 0, sizeof(r));
	CHECK_EQ(read(p[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(p[0]);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	hwtel_set_sysfs_root(NULL);
	CHECK_EQ(system(unit_fmt("rm -rf -- '%s'", root)), 0);
	if (r.setup)
		printf("#   child setup failed at %s:%d: %s\n", __FILE__, r.setup,
		       strerror(r.setup_errno));
	CHECK_EQ(r.setup, 0);
	CHECK_EQ(r.open_ret, 0);
	CHECK_EQ(r.read_ret, 0);
	CHECK(r.other_fd >= 0);		/* the other thread did open its file */
	/* one PERF_EVENT_IOC_ID on a perf fd: the leader, the first in /proc/self/fd */
	CHECK_EQ(r.id_perf, 1);
	if (r.id_other)
		printf("#   PERF_EVENT_IOC_ID sent to fd %d (%s), the other thread's file %d\n",
		       r.bad_fd, r.bad_link, r.other_fd);
	CHECK_EQ(r.id_other, 0);
}
#endif /* NATIVE_ARCH: x86_64 and arm64, the hosts the tests run on */
