// SPDX-License-Identifier: GPL-2.0
/*
 * nl_fuzz: random generic netlink messages to the ndk_pcie_tlm family
 * (Documentation/netlink/specs/ndk_pcie_tlm.yaml), sent on raw
 * NETLINK_GENERIC sockets as root and, from a forked child, as nobody.
 *
 *   nl_fuzz [--seed S] [--iters N] [--seconds S] [--no-unpriv] [--verbose]
 *
 * Messages: valid and invalid commands, versions and flags, dumps, random
 * attribute sets (right and wrong types, wrong lengths, strings without NUL
 * or too long, nests of random attributes up to 3 deep, NLA_F_NESTED on
 * plain attributes), nlmsg_len shorter or longer than what is sent, payloads
 * cut inside a header, oversized messages, and replies read into small
 * buffers. libnl-genl resolves the family id and the multicast group only.
 *
 * The root process uses PRNG stream 0, the unprivileged child stream 1;
 * every choice depends only on the stream, so the same --seed and --iters
 * replay the same messages (--seconds gives a prefix of the sequence).
 * Each message is answered (ack, error, data, dump) or times out before
 * the next is sent, so replies are counted per message.
 *
 * TAP checks: the family resolves; some messages were answered without an
 * error (the fuzzer reaches the handlers); nobody's CLEAR never succeeds;
 * no splat in dmesg.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ndk_pcie_tlm.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "fuzz_common.h"

#define MAX_DEVS	16
#define MSG_MAX		(70 * 1024)

struct result {
	unsigned long sent, send_err, timeouts, silent, data, dones, truncated, acks;
	unsigned long clear_ok;		/* CLEAR requests acked with 0 */
	unsigned long per_cmd[8];
	struct fz_hist err;		/* NLMSG_ERROR codes (0 = ack) */
	struct fz_hist senderr;		/* errno of send() */
	double secs;
};

static char devs[MAX_DEVS][64];
static int ndevs;
static int family, mcgrp = -1;
static uint64_t opt_seed;
static unsigned long opt_iters;
static double opt_seconds;
static int opt_unpriv = 1;
static int opt_verbose;

static int cmp_str(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void find_devs(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && ndevs < MAX_DEVS)
		if (!strncmp(e->d_name, "ndk_pcie_tlm_", 13))
			snprintf(devs[ndevs++], sizeof(devs[0]), "%s", e->d_name);
	closedir(d);
	qsort(devs, ndevs, sizeof(devs[0]), cmp_str);
}

static int resolve(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int ret;

	if (!sk)
		return -ENOMEM;
	ret = genl_connect(sk);
	if (!ret)
		ret = genl_ctrl_resolve(sk, NDK_PCIE_TLM_FAMILY_NAME);
	if (ret >= 0) {
		family = ret;
		mcgrp = genl_ctrl_resolve_grp(sk, NDK_PCIE_TLM_FAMILY_NAME,
					      NDK_PCIE_TLM_MCGRP_FLAGS);
	}
	nl_socket_free(sk);
	return ret < 0 ? ret : 0;
}

/* message builder over a flat buffer */
struct mb {
	unsigned char *buf;
	size_t len, cap;
};

static struct nlattr *mb_attr(struct mb *m, uint16_t type, const void *data,
			      size_t dlen, int lie)
{
	struct nlattr *a;
	size_t total = NLA_HDRLEN + dlen;

	if (m->len + NLA_ALIGN(total) > m->cap)
		return NULL;
	a = (struct nlattr *)(m->buf + m->len);
	a->nla_type = type;
	a->nla_len = total + lie;
	if (dlen)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, dlen);
	memset(m->buf + m->len + total, 0, NLA_ALIGN(total) - total);
	m->len += NLA_ALIGN(total);
	return a;
}

static void rnd_attrs(struct fz_rng *r, struct mb *m, int depth, int n);

/* a random payload for attribute @type */
static void rnd_attr(struct fz_rng *r, struct mb *m, int depth)
{
	unsigned char data[512];
	uint16_t type;
	size_t dlen = 0;
	int lie = 0;
	unsigned int c = fz_below(r, 100);

	/* mostly the three the kernel accepts, then any, then nonsense */
	if (c < 30)
		type = NDK_PCIE_TLM_A_DEV_NAME;
	else if (c < 45)
		type = NDK_PCIE_TLM_A_EP;
	else if (c < 58)
		type = NDK_PCIE_TLM_A_CLEAR;
	else if (c < 90)
		type = fz_below(r, NDK_PCIE_TLM_A_MAX + 3);
	else
		type = fz_next(r) & 0x3fff;
	if (fz_pct(r, 4))
		type |= NLA_F_NESTED;
	if (fz_pct(r, 2))
		type |= NLA_F_NET_BYTEORDER;

	if (depth < 3 && (fz_pct(r, 8) || (type & NLA_F_NESTED && fz_pct(r, 70)))) {
		/* a nest of random attributes */
		struct nlattr *a = mb_attr(m, type | NLA_F_NESTED, NULL, 0, 0);
		size_t start = m->len;

		if (!a)
			return;
		rnd_attrs(r, m, depth + 1, fz_below(r, 5));
		a->nla_len += m->len - start;
		if (fz_pct(r, 5))
			a->nla_len += fz_below(r, 64);	/* overruns the message */
		return;
	}

	c = fz_below(r, 100);
	if ((type & NLA_TYPE_MASK) == NDK_PCIE_TLM_A_DEV_NAME || c < 10) {
		const char *name = ndevs ? devs[fz_below(r, ndevs)] : "ndk_pcie_tlm_0";

		c = fz_below(r, 100);
		if (c < 60) {
			dlen = strlen(name) + 1;		/* valid */
			memcpy(data, name, dlen);
		} else if (c < 70) {
			dlen = strlen(name);			/* no NUL */
			memcpy(data, name, dlen);
		} else if (c < 78) {
			dlen = fz_below(r, strlen(name));	/* cut */
			memcpy(data, name, dlen);
			data[dlen++] = 0;
		} else if (c < 86) {
			dlen = 60 + fz_below(r, 10);		/* at the 64 limit */
			memset(data, 'a', dlen);
			data[dlen - 1] = fz_pct(r, 50) ? 0 : 'z';
		} else if (c < 90) {
			dlen = 1;				/* empty */
			data[0] = 0;
		} else {
			dlen = fz_below(r, sizeof(data));	/* garbage */
			for (size_t i = 0; i < dlen; i++)
				data[i] = fz_next(r);
		}
	} else {
		static const unsigned int lens[] = { 4, 4, 4, 4, 0, 1, 2, 3, 8, 5, 16 };
		uint32_t v;

		dlen = lens[fz_below(r, sizeof(lens) / sizeof(lens[0]))];
		c = fz_below(r, 100);
		if ((type & NLA_TYPE_MASK) == NDK_PCIE_TLM_A_CLEAR)
			v = c < 60 ? 1 + fz_below(r, NDK_PCIE_TLM_CLEAR_ALL) :
			    c < 70 ? 0 : (uint32_t)fz_next(r);
		else
			v = c < 60 ? fz_below(r, 20) : c < 70 ? ~0u : (uint32_t)fz_next(r);
		memset(data, 0, sizeof(data));
		memcpy(data, &v, sizeof(v));
		if (dlen > 4)
			for (size_t i = 4; i < dlen; i++)
				data[i] = fz_next(r);
	}
	if (fz_pct(r, 4))
		lie = fz_pct(r, 50) ? -(int)fz_below(r, 8) : (int)fz_below(r, 256);
	mb_attr(m, type, data, dlen, lie);
}

static void rnd_attrs(struct fz_rng *r, struct mb *m, int depth, int n)
{
	while (n-- > 0)
		rnd_attr(r, m, depth);
}

/* build one message; returns the number of bytes to send */
static size_t build(struct fz_rng *r, unsigned char *buf, uint32_t seq, uint8_t *cmdp,
		    int *clear_dev, int *expect)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct genlmsghdr *gh = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	struct mb m = { buf, NLMSG_HDRLEN + GENL_HDRLEN, MSG_MAX };
	size_t send_len;
	unsigned int c = fz_below(r, 100);
	uint8_t cmd;

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	cmd = c < 88 ? 1 + fz_below(r, NDK_PCIE_TLM_CMD_MAX) :
	      c < 95 ? 0 : (uint8_t)fz_next(r);
	*cmdp = cmd;
	gh->cmd = cmd;
	gh->version = fz_pct(r, 90) ? NDK_PCIE_TLM_FAMILY_VERSION : (uint8_t)fz_next(r);
	gh->reserved = fz_pct(r, 95) ? 0 : (uint16_t)fz_next(r);

	*clear_dev = 0;
	c = fz_below(r, 100);
	if (c < 55) {
		/* a mostly sane request: the device, maybe EP or CLEAR */
		if (ndevs || fz_pct(r, 20)) {
			const char *name = ndevs ? devs[fz_below(r, ndevs)] : "ndk_pcie_tlm_0";

			mb_attr(&m, NDK_PCIE_TLM_A_DEV_NAME, name, strlen(name) + 1, 0);
		}
		if (fz_pct(r, 40)) {
			uint32_t ep = fz_pct(r, 80) ? fz_below(r, 4) : (uint32_t)fz_next(r);

			mb_attr(&m, NDK_PCIE_TLM_A_EP, &ep, 4, 0);
		}
		if (cmd == NDK_PCIE_TLM_CMD_CLEAR || fz_pct(r, 10)) {
			uint32_t v = fz_pct(r, 85) ? 1 + fz_below(r, NDK_PCIE_TLM_CLEAR_ALL) :
						     (uint32_t)fz_next(r);

			mb_attr(&m, NDK_PCIE_TLM_A_CLEAR, &v, 4, 0);
		}
		if (fz_pct(r, 10))
			rnd_attrs(r, &m, 0, 1 + fz_below(r, 3));
	} else if (c < 95) {
		rnd_attrs(r, &m, 0, fz_below(r, 8));
	} else {
		/* oversized: many attributes */
		int n = 200 + fz_below(r, 800);

		while (n-- > 0 && m.len + 600 < m.cap)
			rnd_attr(r, &m, 1);
	}

	nh->nlmsg_len = m.len;
	nh->nlmsg_type = fz_pct(r, 96) ? family : (uint16_t)fz_next(r);
	c = fz_below(r, 100);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (c < 30)
		nh->nlmsg_flags |= NLM_F_DUMP;
	else if (c < 35)
		nh->nlmsg_flags = fz_next(r) & 0xffff;
	else if (c < 38)
		nh->nlmsg_flags &= ~NLM_F_REQUEST;
	nh->nlmsg_seq = seq;
	nh->nlmsg_pid = 0;
	/* any ack of this to an unprivileged sender is a missing check */
	*clear_dev = cmd == NDK_PCIE_TLM_CMD_CLEAR && nh->nlmsg_type == family &&
		     (nh->nlmsg_flags & NLM_F_REQUEST) && !(nh->nlmsg_flags & NLM_F_DUMP);

	send_len = m.len;
	c = fz_below(r, 100);
	if (c < 4) {
		nh->nlmsg_len = m.len + fz_below(r, 128);	/* claims more than sent */
	} else if (c < 8) {
		nh->nlmsg_len = fz_below(r, m.len + 1);	/* claims less */
	} else if (c < 11) {
		send_len = fz_below(r, m.len + 1);	/* cut in flight */
	}
	/*
	 * The kernel answers in sendto()'s own context (and the first part of
	 * a dump too), so a message that may get no answer at all is only
	 * checked for one without waiting.
	 */
	*expect = nh->nlmsg_type == family && nh->nlmsg_len == send_len &&
		  (nh->nlmsg_flags & (NLM_F_REQUEST | NLM_F_ACK)) == (NLM_F_REQUEST | NLM_F_ACK);
	return send_len;
}

/* read replies to @seq until ack/error/done or a timeout */
static void collect(int fd, struct fz_rng *r, uint32_t seq, struct result *res,
		    int clear_dev, int expect, unsigned char *buf)
{
	size_t cap = fz_pct(r, 6) ? 16 + fz_below(r, 256) : MSG_MAX;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;
		struct nlmsghdr *nh;
		int end = 0;

		if (poll(&p, 1, expect ? 2000 : 0) <= 0) {
			if (expect)
				res->timeouts++;
			else
				res->silent++;
			return;
		}
		n = recv(fd, buf, cap, MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fz_hist_add(&res->err, errno);
			return;
		}
		if ((size_t)n > cap) {
			res->truncated++;
			n = cap;
			end = 1;	/* the rest of the datagram is gone */
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				fz_hist_add(&res->err, -e->error);
				if (!e->error) {
					res->acks++;
					if (clear_dev)
						res->clear_ok++;
				}
				end = 1;
			} else if (nh->nlmsg_type == NLMSG_DONE) {
				res->dones++;
				end = 1;
			} else {
				res->data++;
			}
		}
		if (end)
			return;
	}
}

static void run(unsigned int stream, struct result *res)
{
	static unsigned char buf[MSG_MAX], rbuf[MSG_MAX];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct fz_rng r;
	unsigned long i;
	double t0 = fz_now();
	int fd, one = 1;

	fz_seed(&r, opt_seed, stream);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		fz_hist_add(&res->senderr, errno);
		return;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	for (i = 0; i < opt_iters; i++) {
		uint8_t cmd;
		int clear_dev, expect;
		size_t len;
		ssize_t n;

		if (opt_seconds > 0 && !(i & 15) && fz_now() - t0 > opt_seconds)
			break;
		if (mcgrp >= 0 && fz_pct(&r, 2)) {
			int g = fz_pct(&r, 80) ? mcgrp : (int)fz_below(&r, 64);

			setsockopt(fd, SOL_NETLINK, fz_pct(&r, 50) ? NETLINK_ADD_MEMBERSHIP :
				   NETLINK_DROP_MEMBERSHIP, &g, sizeof(g));
		}
		len = build(&r, buf, i + 1, &cmd, &clear_dev, &expect);
		res->per_cmd[cmd < 7 ? cmd : 7]++;
		res->sent++;
		n = sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa));
		if (n < 0) {
			res->send_err++;
			fz_hist_add(&res->senderr, errno);
			continue;
		}
		collect(fd, &r, i + 1, res, clear_dev, expect, rbuf);
	}
	close(fd);
	res->secs = fz_now() - t0;
}

static void report(const char *who, const struct result *res)
{
	printf("# %s: %lu messages in %.1f s (per command: unspec=%lu dev_get=%lu ep_get=%lu "
	       "totals_get=%lu clear=%lu flags_ntf=%lu other=%lu)\n", who, res->sent,
	       res->secs, res->per_cmd[0], res->per_cmd[1], res->per_cmd[2], res->per_cmd[3],
	       res->per_cmd[4], res->per_cmd[5], res->per_cmd[6] + res->per_cmd[7]);
	printf("# %s: replies: acks=%lu data=%lu dumps_done=%lu unanswered=%lu "
	       "(of which expected an answer: %lu) truncated=%lu send_errors=%lu\n", who,
	       res->acks, res->data, res->dones, res->silent + res->timeouts, res->timeouts,
	       res->truncated, res->send_err);
	fz_hist_print("nlmsgerr", &res->err);
	if (res->send_err)
		fz_hist_print("send", &res->senderr);
}

int main(int argc, char **argv)
{
	struct result *res;
	int i, kmsg, splats, seeded = 0, n = 1, status = 0;
	pid_t child = -1;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--no-unpriv")) {
			opt_unpriv = 0;
		} else if (!strcmp(o, "--verbose")) {
			opt_verbose = 1;
		} else if (i + 1 < argc && !strcmp(o, "--seed")) {
			opt_seed = fz_num(o, argv[++i]);
			seeded = 1;
		} else if (i + 1 < argc && !strcmp(o, "--iters")) {
			opt_iters = fz_num(o, argv[++i]);
		} else if (i + 1 < argc && !strcmp(o, "--seconds")) {
			opt_seconds = strtod(argv[++i], NULL);
		} else {
			fprintf(stderr, "usage: nl_fuzz [--seed S] [--iters N] [--seconds S] "
				"[--no-unpriv] [--verbose]\n");
			return 2;
		}
	}
	if (!seeded)
		opt_seed = fz_default_seed();
	if (!opt_iters)
		opt_iters = opt_seconds > 0 ? ~0UL : 2000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);

	printf("TAP version 13\n1..4\n");
	printf("# nl_fuzz --seed 0x%llx --iters %lu --seconds %g%s\n",
	       (unsigned long long)opt_seed, opt_iters == ~0UL ? 0 : opt_iters, opt_seconds,
	       opt_unpriv ? "" : " --no-unpriv");
	find_devs();
	for (i = 0; i < ndevs; i++)
		printf("# device %s\n", devs[i]);
	if (resolve()) {
		printf("not ok 1 family %s does not resolve\n", NDK_PCIE_TLM_FAMILY_NAME);
		printf("ok 2 # SKIP no family\nok 3 # SKIP no family\nok 4 # SKIP no family\n");
		return 1;
	}
	printf("ok 1 family %s id %d, multicast group %d\n", NDK_PCIE_TLM_FAMILY_NAME,
	       family, mcgrp);

	res = mmap(NULL, 2 * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	memset(res, 0, 2 * sizeof(*res));
	kmsg = fz_kmsg_open();

	if (opt_unpriv) {
		n = 2;
		child = fork();
		if (child == 0) {
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(3);
			run(1, &res[1]);
			_exit(0);
		}
	}
	run(0, &res[0]);
	if (child > 0)
		waitpid(child, &status, 0);

	report("root", &res[0]);
	if (n > 1) {
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			printf("# nobody: child failed (status 0x%x)\n", status);
		report("nobody", &res[1]);
	}
	printf("# messages sent %lu\n", res[0].sent + res[1].sent);
	if (res[0].err.n[0] + res[0].data)
		printf("ok 2 root: %lu answered without error\n", res[0].err.n[0] + res[0].data);
	else
		printf("not ok 2 root: nothing answered without error\n");
	if (n > 1 && (!WIFEXITED(status) || WEXITSTATUS(status)))
		printf("not ok 3 nobody: child failed\n");
	else if (n > 1)
		printf("%s 3 nobody: no CLEAR request acked (%lu acked)\n",
		       res[1].clear_ok ? "not ok" : "ok", res[1].clear_ok);
	else
		printf("ok 3 # SKIP --no-unpriv\n");
	splats = fz_kmsg_splats(kmsg);
	printf("# %d splats\n", splats);
	printf("%s 4 %d splats in dmesg\n", splats ? "not ok" : "ok", splats);
	return splats || !(res[0].err.n[0] + res[0].data) || (n > 1 && res[1].clear_ok);
}
