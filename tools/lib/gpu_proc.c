// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: names of the processes that submit GPU jobs.
 *
 * The GPU event stream carries PIDs only, and it is read after the fact.
 * A process that starts and exits between two reads is gone from /proc by
 * then. So while a capture runs, a thread listens to the kernel's proc
 * connector (netlink NETLINK_CONNECTOR, CN_IDX_PROC; needs CAP_NET_ADMIN)
 * and, for every fork, exec, comm change and exit of a process (thread
 * group leaders only), reads /proc/PID/comm and cmdline at once, while the
 * process still exists. Each process life (fork or exec .. exit) becomes a
 * hwtel_gpu_add_life() record, which also tells reused PIDs apart. A life
 * is handed again only when it changed, and forgotten once it was handed
 * ended: the monitor keeps the lives alive, not every life it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <libhwtel/gpu.h>

#include "internal.h"

struct pm_life {
	int pid;
	uint64_t start, end;	/* UNIX ns; 0 / UINT64_MAX = open */
	bool dirty;		/* changed since it was handed to the engine */
	char comm[32];
	char cmdline[256];
};

struct hwtel_gpu_procmon {
	int sock;
	int stop_pipe[2];
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	struct pm_life *lives;
	unsigned int n, cap;
	unsigned long lost;		/* ENOBUFS: events the kernel dropped */
	int64_t (*offset)(void);	/* CLOCK_REALTIME - CLOCK_MONOTONIC now */
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t real_offset(void)
{
	return (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
}

/* /proc/PID/comm and cmdline (NULs as spaces); false when the process is gone */
bool hwtel_read_proc_name(const char *root, int pid, char *comm, size_t clen,
		      char *cmd, size_t cmdlen)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, clen - 1);
	close(fd);
	if (n <= 0)
		return false;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	cmd[0] = '\0';
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t i;

		n = read(fd, cmd, cmdlen - 1);
		close(fd);
		if (n < 0)
			n = 0;
		while (n > 0 && cmd[n - 1] == '\0')
			n--;
		for (i = 0; i < n; i++)
			if (cmd[i] == '\0' || cmd[i] == '\n')
				cmd[i] = ' ';
		cmd[n] = '\0';
	}
	return true;
}

static struct pm_life *open_life(struct hwtel_gpu_procmon *m, int pid)
{
	unsigned int i;

	for (i = m->n; i-- > 0;)
		if (m->lives[i].pid == pid && m->lives[i].end == UINT64_MAX)
			return &m->lives[i];
	return NULL;
}

static struct pm_life *new_life(struct hwtel_gpu_procmon *m, int pid, uint64_t start)
{
	struct pm_life *l;

	if (m->n == m->cap) {
		unsigned int nc = m->cap ? 2 * m->cap : 64;
		void *p = realloc(m->lives, nc * sizeof(*m->lives));

		if (!p)
			return NULL;
		m->lives = p;
		m->cap = nc;
	}
	l = &m->lives[m->n++];
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->start = start;
	l->end = UINT64_MAX;
	l->dirty = true;
	return l;
}

static void refresh(struct pm_life *l)
{
	char comm[32], cmd[256];

	if (hwtel_read_proc_name("/proc", l->pid, comm, sizeof(comm), cmd, sizeof(cmd))) {
		snprintf(l->comm, sizeof(l->comm), "%s", comm);
		/* a zombie has an empty cmdline: keep the one seen before */
		if (cmd[0])
			snprintf(l->cmdline, sizeof(l->cmdline), "%s", cmd);
	}
}

static void handle(struct hwtel_gpu_procmon *m, const struct proc_event *ev)
{
	struct pm_life *l;
	/*
	 * The event's CLOCK_MONOTONIC time in UNIX time, with the offset of
	 * now (the event is a few ms old at most): a step of the real-time
	 * clock (settimeofday, NTP) shifts the events after it, as it shifts
	 * the Mali driver's timestamps, not the lives before it.
	 */
	uint64_t ts = ev->timestamp_ns + (uint64_t)m->offset();

	switch (ev->what) {
	case PROC_EVENT_FORK:
		if (ev->event_data.fork.child_pid != ev->event_data.fork.child_tgid)
			return;		/* a thread */
		l = open_life(m, ev->event_data.fork.child_tgid);
		if (l) {
			l->end = ts;	/* its exit was lost */
			l->dirty = true;
		}
		l = new_life(m, ev->event_data.fork.child_tgid, ts);
		if (l)
			refresh(l);
		break;
	case PROC_EVENT_EXEC:
		if (ev->event_data.exec.process_pid != ev->event_data.exec.process_tgid)
			return;
		l = open_life(m, ev->event_data.exec.process_tgid);
		if (!l)
			l = new_life(m, ev->event_data.exec.process_tgid, ts);
		if (l) {
			/* the parent's name until the new one is read */
			l->comm[0] = '\0';
			l->cmdline[0] = '\0';
			refresh(l);
			l->dirty = true;
		}
		break;
	case PROC_EVENT_COMM:
		if (ev->event_data.comm.process_pid != ev->event_data.comm.process_tgid)
			return;
		l = open_life(m, ev->event_data.comm.process_tgid);
		if (!l)
			l = new_life(m, ev->event_data.comm.process_tgid, 0);
		if (l) {
			snprintf(l->comm, sizeof(l->comm), "%.*s",
				 (int)sizeof(ev->event_data.comm.comm), ev->event_data.comm.comm);
			if (!l->cmdline[0])
				refresh(l);
			l->dirty = true;
		}
		break;
	case PROC_EVENT_EXIT:
		if (ev->event_data.exit.process_pid != ev->event_data.exit.process_tgid)
			return;
		l = open_life(m, ev->event_data.exit.process_tgid);
		if (!l)
			l = new_life(m, ev->event_data.exit.process_tgid, 0);
		if (l) {
			if (!l->comm[0])
				refresh(l);	/* still there until reaped */
			l->end = ts;
			l->dirty = true;
		}
		break;
	default:
		break;
	}
}

static void *pm_thread(void *arg)
{
	struct hwtel_gpu_procmon *m = arg;
	char buf[8192] __attribute__((aligned(8)));

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = m->sock, .events = POLLIN },
			{ .fd = m->stop_pipe[0], .events = POLLIN },
		};
		ssize_t len;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		for (;;) {
			struct nlmsghdr *nh;

			len = recv(m->sock, buf, sizeof(buf), MSG_DONTWAIT);
			if (len < 0) {
				if (errno == ENOBUFS) {
					pthread_mutex_lock(&m->lock);
					m->lost++;
					pthread_mutex_unlock(&m->lock);
					continue;
				}
				break;
			}
			pthread_mutex_lock(&m->lock);
			for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len);
			     nh = NLMSG_NEXT(nh, len)) {
				struct cn_msg *cn = NLMSG_DATA(nh);

				if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP)
					continue;
				if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
				    cn->len < sizeof(struct proc_event) -
					      sizeof(((struct proc_event *)0)->event_data))
					continue;
				handle(m, (const struct proc_event *)cn->data);
			}
			pthread_mutex_unlock(&m->lock);
		}
	}
	return NULL;
}

int hwtel_gpu_procmon_start(struct hwtel_gpu_procmon **out)
{
	struct {
		struct nlmsghdr nh;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct hwtel_gpu_procmon *m;
	int rcvbuf = 4 << 20, err;

	hwtel_clear_error();
	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return hwtel_err(-ENOMEM, "out of memory");
	m->stop_pipe[0] = m->stop_pipe[1] = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->sock = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (m->sock < 0) {
		err = -errno;
		hwtel_err(err, "proc connector socket: %s", strerror(errno));
		goto fail;
	}
	setsockopt(m->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(m->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		hwtel_err(err, "proc connector bind: %s%s", strerror(errno),
			  errno == EPERM ? " (needs CAP_NET_ADMIN)" : "");
		goto fail;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = NLMSG_DONE;
	req.nh.nlmsg_pid = 0;
	req.cn.id.idx = CN_IDX_PROC;
	req.cn.id.val = CN_VAL_PROC;
	req.cn.len = sizeof(req.op);
	req.op = PROC_CN_MCAST_LISTEN;
	if (send(m->sock, &req, sizeof(req), 0) < 0) {
		err = -errno;
		hwtel_err(err, "proc connector listen: %s%s", strerror(errno),
			  errno == EPERM ? " (needs CAP_NET_ADMIN)" : "");
		goto fail;
	}
	if (pipe2(m->stop_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		hwtel_err(err, "pipe: %s", strerror(errno));
		goto fail;
	}
	m->offset = real_offset;
	err = pthread_create(&m->thread, NULL, pm_thread, m);
	if (err) {
		err = -err;
		hwtel_err(err, "cannot start the process event thread");
		goto fail;
	}
	m->running = true;
	*out = m;
	return 0;
fail:
	hwtel_gpu_procmon_stop(m);
	return err;
}

struct hwtel_gpu_procmon *hwtel_gpu_procmon_fake(int64_t (*mono_to_real)(void))
{
	struct hwtel_gpu_procmon *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->sock = m->stop_pipe[0] = m->stop_pipe[1] = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->offset = mono_to_real;
	return m;
}

void hwtel_gpu_procmon_event(struct hwtel_gpu_procmon *m, const struct proc_event *ev)
{
	pthread_mutex_lock(&m->lock);
	handle(m, ev);
	pthread_mutex_unlock(&m->lock);
}

int hwtel_gpu_procmon_lives(struct hwtel_gpu_procmon *m, struct hwtel_gpu *g)
{
	unsigned int i, n = 0;
	int ret = 0;

	hwtel_clear_error();
	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n; i++) {
		struct pm_life *l = &m->lives[i];

		if (l->dirty && !ret) {
			ret = hwtel_gpu_add_life(g, l->pid, l->start, l->end, l->comm, l->cmdline);
			if (!ret)
				l->dirty = false;
		}
		/* the engine has an ended life's final record: forgotten here */
		if (l->dirty || l->end == UINT64_MAX)
			m->lives[n++] = *l;
	}
	m->n = n;
	pthread_mutex_unlock(&m->lock);
	return ret;
}

unsigned int hwtel_gpu_procmon_retained(struct hwtel_gpu_procmon *m)
{
	unsigned int n;

	pthread_mutex_lock(&m->lock);
	n = m->n;
	pthread_mutex_unlock(&m->lock);
	return n;
}

unsigned long hwtel_gpu_procmon_lost(struct hwtel_gpu_procmon *m)
{
	unsigned long n;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	n = m->lost;
	pthread_mutex_unlock(&m->lock);
	return n;
}

void hwtel_gpu_procmon_stop(struct hwtel_gpu_procmon *m)
{
	if (!m)
		return;
	if (m->running) {
		if (write(m->stop_pipe[1], "x", 1) != 1)
			pthread_cancel(m->thread);
		pthread_join(m->thread, NULL);
	}
	if (m->sock >= 0)
		close(m->sock);
	if (m->stop_pipe[0] >= 0)
		close(m->stop_pipe[0]);
	if (m->stop_pipe[1] >= 0)
		close(m->stop_pipe[1]);
	pthread_mutex_destroy(&m->lock);
	free(m->lives);
	free(m);
}
