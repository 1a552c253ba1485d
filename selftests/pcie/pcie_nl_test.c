// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink control plane of the PCIe telemetry PMU (family
 * "ndk_pcie_tlm") against the model: every command, exact values from the
 * model, privilege checks, malformed input with errno and extack, a clear
 * while perf counts, and flag notifications.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/ndk_pcie_tlm.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
/* 300 s a test, not 30: the lab's loaded guests (run_in_vm bounds each program) */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "pcie_test.h"

#define MAXMSG 64

struct reply {
	int err;		/* 0 or -errno from the kernel */
	int done;
	char ext[256];		/* extack message */
	int n;
	struct nlmsghdr *msg[MAXMSG];
	struct nlattr *tb[MAXMSG][NDK_PCIE_TLM_A_MAX + 1];
};

static int valid_cb(struct nl_msg *m, void *arg)
{
	struct reply *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);

	if (r->n == MAXMSG)
		return NL_SKIP;
	r->msg[r->n] = malloc(nlh->nlmsg_len);
	memcpy(r->msg[r->n], nlh, nlh->nlmsg_len);
	nlh = r->msg[r->n];
	nla_parse(r->tb[r->n], NDK_PCIE_TLM_A_MAX, genlmsg_attrdata(nlmsg_data(nlh), 0),
		  genlmsg_attrlen(nlmsg_data(nlh), 0), NULL);
	r->n++;
	return NL_OK;
}

static int err_cb(struct sockaddr_nl *sa, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct reply *r = arg;
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);

	r->err = e->error;
	r->done = 1;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		if (!nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off),
			       nlh->nlmsg_len - NLMSG_HDRLEN - off, NULL) &&
		    tb[NLMSGERR_ATTR_MSG])
			snprintf(r->ext, sizeof(r->ext), "%s",
				 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	}
	return NL_STOP;
}

static int done_cb(struct nl_msg *m, void *arg)
{
	((struct reply *)arg)->done = 1;
	return NL_STOP;
}

static void reply_free(struct reply *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		free(r->msg[i]);
	memset(r, 0, sizeof(*r));
}

static struct nl_sock *nl_open(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk || genl_connect(sk))
		return NULL;
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	*family = genl_ctrl_resolve(sk, NDK_PCIE_TLM_FAMILY_NAME);
	return sk;
}

/* collect the reply to what was sent on @sk into @r; returns r->err */
static int nl_recv_reply(struct nl_sock *sk, struct reply *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	memset(r, 0, sizeof(*r));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, done_cb, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, done_cb, r);
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, r);
	while (!r->done) {
		ret = nl_recvmsgs(sk, cb);
		if (ret < 0 && !r->done) {
			r->err = -EIO;
			break;
		}
	}
	nl_cb_put(cb);
	return r->err;
}

/* send @m (consumed) and collect the reply into @r; returns r->err */
static int nl_xfer(struct nl_sock *sk, struct nl_msg *m, struct reply *r)
{
	int ret = nl_send_auto(sk, m);

	nlmsg_free(m);
	if (ret < 0) {
		memset(r, 0, sizeof(*r));
		return r->err = -EIO;
	}
	return nl_recv_reply(sk, r);
}

/* a socket whose every recvmsg reads at most 4 KiB: dumps take many rounds */
static struct nl_sock *nl_open_4k(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	nl_socket_disable_msg_peek(sk);
	nl_socket_set_msg_buf_size(sk, 4096);
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	*family = genl_ctrl_resolve(sk, NDK_PCIE_TLM_FAMILY_NAME);
	return sk;
}

static struct nl_msg *nl_req(int family, int cmd, int dump, const char *dev)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
		    dump ? NLM_F_DUMP : 0, cmd, NDK_PCIE_TLM_FAMILY_VERSION);
	if (dev)
		nla_put_string(m, NDK_PCIE_TLM_A_DEV_NAME, dev);
	return m;
}

/*
 * Every byte of a reply that carries no value is zero: the reserved byte of
 * the genetlink header and the alignment padding after each attribute, in
 * nests too (a u8 attribute is followed by 3 bytes of padding).
 */
static int padding_is_zero(const char *p, int len, int depth)
{
	const struct nlattr *a;
	int alen, i;

	while (len >= NLA_HDRLEN) {
		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return 0;
		alen = NLA_ALIGN(a->nla_len);
		for (i = a->nla_len; i < alen && i < len; i++)
			if (p[i])
				return 0;
		if ((a->nla_type & NLA_F_NESTED) && depth < 3 &&
		    !padding_is_zero(p + NLA_HDRLEN, a->nla_len - NLA_HDRLEN, depth + 1))
			return 0;
		p += alen;
		len -= alen;
	}
	return len == 0;
}

static int reply_is_clean(struct reply *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		struct genlmsghdr *g = nlmsg_data(r->msg[i]);

		if (g->reserved ||
		    !padding_is_zero((const char *)genlmsg_attrdata(g, 0),
				     genlmsg_attrlen(g, 0), 0))
			return 0;
	}
	return r->n > 0;
}

static uint32_t u32a(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : 0xdeadbeef;
}

static uint64_t u64a(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : 0xdeadbeefULL;
}

/* totals of @dev: fills vals (index = entry), returns entries or -errno */
static int get_totals(struct nl_sock *sk, int fam, uint64_t *vals, int max)
{
	struct reply r;
	struct nlattr *a;
	int rem, n = 0;

	if (nl_xfer(sk, nl_req(fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 0, PCIE_PMU), &r))
		return r.err;
	if (r.n != 1 || !r.tb[0][NDK_PCIE_TLM_A_TOTALS]) {
		reply_free(&r);
		return -EBADMSG;
	}
	nla_for_each_nested(a, r.tb[0][NDK_PCIE_TLM_A_TOTALS], rem) {
		if (nla_type(a) == NDK_PCIE_TLM_TOTALS_PAD)
			continue;
		if (nla_type(a) != n || n >= max || nla_len(a) != 8) {
			reply_free(&r);
			return -EBADMSG;
		}
		vals[n++] = nla_get_u64(a);
	}
	if ((uint32_t)n != u32a(r.tb[0], NDK_PCIE_TLM_A_ENTRIES_USED))
		n = -EBADMSG;
	reply_free(&r);
	return n;
}

static int do_clear(struct nl_sock *sk, int fam, uint32_t what)
{
	struct nl_msg *m = nl_req(fam, NDK_PCIE_TLM_CMD_CLEAR, 0, PCIE_PMU);
	struct reply r;

	nla_put_u32(m, NDK_PCIE_TLM_A_CLEAR, what);
	return nl_xfer(sk, m, &r);
}

FIXTURE(nl) {
	struct nl_sock *sk;
	int fam;
};

FIXTURE_SETUP(nl)
{
	ASSERT_EQ(0, pcie_load("instances=2", NULL));
	self->sk = nl_open(&self->fam);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, self->fam);
}

FIXTURE_TEARDOWN(nl)
{
	if (self->sk)
		nl_socket_free(self->sk);
	pcie_unload();
}

TEST_F(nl, dev_get_matches_sysfs)
{
	static const struct { int attr; const char *cap; } caps[] = {
		{ NDK_PCIE_TLM_A_ENDPOINTS, "endpoints" },
		{ NDK_PCIE_TLM_A_DMA_PORTS, "dma_ports" },
		{ NDK_PCIE_TLM_A_PROBES, "probes" },
		{ NDK_PCIE_TLM_A_ENTRIES, "entries" },
		{ NDK_PCIE_TLM_A_CNT_WIDTH, "cnt_width" },
		{ NDK_PCIE_TLM_A_COUNTERS_PER_EP, "counters_per_ep" },
		{ NDK_PCIE_TLM_A_PCIE_CHANNELS, "pcie_channels" },
		{ NDK_PCIE_TLM_A_PCIE_BUSES, "pcie_buses" },
		{ NDK_PCIE_TLM_A_PCIE_REGIONS, "pcie_regions" },
		{ NDK_PCIE_TLM_A_BRAKE_CHANNELS, "brake_channels" },
		{ NDK_PCIE_TLM_A_DMA_CHANNELS, "dma_channels" },
		{ NDK_PCIE_TLM_A_DMA_BUSES, "dma_buses" },
		{ NDK_PCIE_TLM_A_DMA_REGIONS, "dma_regions" },
		{ NDK_PCIE_TLM_A_REGIONS_RQ, "regions_rq" },
		{ NDK_PCIE_TLM_A_REGIONS_RC, "regions_rc" },
		{ NDK_PCIE_TLM_A_REGIONS_UP, "regions_up" },
		{ NDK_PCIE_TLM_A_REGIONS_DOWN, "regions_down" },
		{ NDK_PCIE_TLM_A_BYTES_RQ, "bytes_rq" },
		{ NDK_PCIE_TLM_A_BYTES_RC, "bytes_rc" },
		{ NDK_PCIE_TLM_A_BYTES_UP, "bytes_up" },
		{ NDK_PCIE_TLM_A_BYTES_DOWN, "bytes_down" },
		{ NDK_PCIE_TLM_A_ITEM_BYTES, "item_bytes" },
		{ NDK_PCIE_TLM_A_HIST_BANDS, "hist_bands" },
		{ NDK_PCIE_TLM_A_HIST_PCIE, "hist_pcie" },
		{ NDK_PCIE_TLM_A_HIST_DMA, "hist_dma" },
		{ NDK_PCIE_TLM_A_TAG_CAPACITY, "tag_capacity" },
		{ NDK_PCIE_TLM_A_STFIFO_CAPACITY, "stfifo_capacity" },
		{ NDK_PCIE_TLM_A_DRAIN_PERIOD, "drain_period" },
	};
	char path[128];
	struct reply r;
	unsigned int i;

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0,
					      PCIE_PMU), &r));
	ASSERT_EQ(1, r.n);
	EXPECT_TRUE(reply_is_clean(&r));
	EXPECT_STREQ(PCIE_PMU, nla_get_string(r.tb[0][NDK_PCIE_TLM_A_DEV_NAME]));
	EXPECT_EQ(0x3fff00000000ULL, u64a(r.tb[0], NDK_PCIE_TLM_A_BASE));
	EXPECT_EQ(pcie_sys_num(PCIE_PMU, "type"), u32a(r.tb[0], NDK_PCIE_TLM_A_PMU_TYPE));
	EXPECT_EQ(pcie_sys_num(PCIE_PMU, "cpumask"), u32a(r.tb[0], NDK_PCIE_TLM_A_CPU));
	EXPECT_EQ(2U, u32a(r.tb[0], NDK_PCIE_TLM_A_VERSION_MAJOR));
	EXPECT_EQ(0U, u32a(r.tb[0], NDK_PCIE_TLM_A_VERSION_MINOR));
	EXPECT_EQ(52U, u32a(r.tb[0], NDK_PCIE_TLM_A_ENTRIES_USED));
	EXPECT_EQ(0U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	/* 48-bit counters at 1 GHz wrap after 78 h: the poller's cap, 1 h */
	EXPECT_EQ(3600000000000ULL, u64a(r.tb[0], NDK_PCIE_TLM_A_POLL_NS));
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		snprintf(path, sizeof(path), "caps/%s", caps[i].cap);
		EXPECT_EQ(pcie_sys_num(PCIE_PMU, path), u32a(r.tb[0], caps[i].attr))
			TH_LOG("%s", caps[i].cap);
	}
	reply_free(&r);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 1,
					      NULL), &r));
	ASSERT_EQ(2, r.n);
	EXPECT_STREQ(PCIE_PMU, nla_get_string(r.tb[0][NDK_PCIE_TLM_A_DEV_NAME]));
	EXPECT_STREQ(PCIE_PMU1, nla_get_string(r.tb[1][NDK_PCIE_TLM_A_DEV_NAME]));
	EXPECT_EQ(0x3fff00100000ULL, u64a(r.tb[1], NDK_PCIE_TLM_A_BASE));
	EXPECT_EQ(35U, u32a(r.tb[1], NDK_PCIE_TLM_A_PCIE_CHANNELS));
	reply_free(&r);
}

static void ep_attrs(struct nlattr *eps, int ep, struct nlattr **tb)
{
	struct nlattr *a;
	int rem;

	memset(tb, 0, sizeof(*tb) * (NDK_PCIE_TLM_EP_A_MAX + 1));
	nla_for_each_nested(a, eps, rem) {
		if (nla_type(a) == ep)
			nla_parse_nested(tb, NDK_PCIE_TLM_EP_A_MAX, a, NULL);
	}
}

TEST_F(nl, ep_get_state_and_gauges)
{
	struct nlattr *tb[NDK_PCIE_TLM_EP_A_MAX + 1], *a;
	struct nl_msg *m;
	struct reply r;
	int rem, n = 0;

	/* MPS 1024, MRRS 512, ext tag, 10-bit tag, RCB 128, link up */
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "pcie_status", "ep=0 0x3d3"));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "gauge", "ep=0 tags=118 stfifo=640"));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "gauge", "ep=0 tags=200 stfifo=900"));

	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0, PCIE_PMU);
	nla_put_u32(m, NDK_PCIE_TLM_A_EP, 0);
	ASSERT_EQ(0, nl_xfer(self->sk, m, &r));
	ASSERT_EQ(1, r.n);
	EXPECT_TRUE(reply_is_clean(&r));
	EXPECT_EQ(0U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	ASSERT_NE(NULL, r.tb[0][NDK_PCIE_TLM_A_EPS]);
	nla_for_each_nested(a, r.tb[0][NDK_PCIE_TLM_A_EPS], rem)
		n++;
	EXPECT_EQ(1, n);
	ep_attrs(r.tb[0][NDK_PCIE_TLM_A_EPS], 0, tb);
	EXPECT_EQ(0U, u32a(tb, NDK_PCIE_TLM_EP_A_ID));
	EXPECT_EQ(0x3d3U, u32a(tb, NDK_PCIE_TLM_EP_A_STATUS_RAW));
	ASSERT_NE(NULL, tb[NDK_PCIE_TLM_EP_A_LINK_UP]);
	EXPECT_EQ(1, nla_get_u8(tb[NDK_PCIE_TLM_EP_A_LINK_UP]));
	EXPECT_EQ(1024U, u32a(tb, NDK_PCIE_TLM_EP_A_MPS));
	EXPECT_EQ(512U, u32a(tb, NDK_PCIE_TLM_EP_A_MRRS));
	EXPECT_EQ(1, nla_get_u8(tb[NDK_PCIE_TLM_EP_A_EXT_TAG]));
	EXPECT_EQ(1, nla_get_u8(tb[NDK_PCIE_TLM_EP_A_TAG10]));
	EXPECT_EQ(128U, u32a(tb, NDK_PCIE_TLM_EP_A_RCB));
	EXPECT_EQ(200U, u32a(tb, NDK_PCIE_TLM_EP_A_TAGS_FREE));
	EXPECT_EQ(118U, u32a(tb, NDK_PCIE_TLM_EP_A_TAGS_LOWEST));
	EXPECT_EQ(900U, u32a(tb, NDK_PCIE_TLM_EP_A_STFIFO_FREE));
	EXPECT_EQ(640U, u32a(tb, NDK_PCIE_TLM_EP_A_STFIFO_LOWEST));
	reply_free(&r);

	/* clear marks: the lowest values restart from now */
	ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_MARKS));
	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0,
					      PCIE_PMU), &r));
	ep_attrs(r.tb[0][NDK_PCIE_TLM_A_EPS], 0, tb);
	EXPECT_EQ(200U, u32a(tb, NDK_PCIE_TLM_EP_A_TAGS_LOWEST));
	EXPECT_EQ(900U, u32a(tb, NDK_PCIE_TLM_EP_A_STFIFO_LOWEST));
	/* the default state of the model: link up, MPS 512, MRRS 4096, RCB 64 */
	reply_free(&r);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 1,
					      NULL), &r));
	ASSERT_EQ(2, r.n);
	ep_attrs(r.tb[1][NDK_PCIE_TLM_A_EPS], 0, tb);
	EXPECT_EQ(512U, u32a(tb, NDK_PCIE_TLM_EP_A_MPS));
	EXPECT_EQ(4096U, u32a(tb, NDK_PCIE_TLM_EP_A_MRRS));
	EXPECT_EQ(64U, u32a(tb, NDK_PCIE_TLM_EP_A_RCB));
	EXPECT_EQ(0, nla_get_u8(tb[NDK_PCIE_TLM_EP_A_TAG10]));
	reply_free(&r);
}

TEST_F(nl, totals_exact_after_clear)
{
	uint64_t v[64];
	int i, n;

	ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_COUNTERS));
	n = get_totals(self->sk, self->fam, v, 64);
	ASSERT_EQ(52, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0U, v[i]);
	for (i = 0; i < n; i += 3)
		ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "raw,idx=%d %d",
					    i, 1000 + i));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "raw,idx=50 %llu",
				    1ULL << 47));
	n = get_totals(self->sk, self->fam, v, 64);
	ASSERT_EQ(52, n);
	for (i = 0; i < n; i++) {
		uint64_t exp = i % 3 ? 0 : 1000 + i;

		if (i == 50)
			exp = 1ULL << 47;
		EXPECT_EQ(exp, v[i]) TH_LOG("entry %d", i);
	}
	/* wrap of the 48-bit counter: 2^47 + 2^47 + 5 is 5 in hardware */
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "raw,idx=50 %llu",
				    (1ULL << 47) + 5));
	ASSERT_EQ(52, get_totals(self->sk, self->fam, v, 64));
	EXPECT_EQ((1ULL << 48) + 5, v[50]);
}

TEST_F(nl, totals_dump_every_instance)
{
	struct nlattr *a;
	struct reply r;
	int i, rem, n;

	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU1, "inject", "raw,idx=51 99"));
	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 1,
					      NULL), &r));
	ASSERT_EQ(2, r.n);
	EXPECT_TRUE(reply_is_clean(&r));
	EXPECT_STREQ(PCIE_PMU1, nla_get_string(r.tb[1][NDK_PCIE_TLM_A_DEV_NAME]));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(52U, u32a(r.tb[i], NDK_PCIE_TLM_A_ENTRIES_USED));
		EXPECT_EQ(48U, u32a(r.tb[i], NDK_PCIE_TLM_A_CNT_WIDTH));
		EXPECT_LT(0ULL, u64a(r.tb[i], NDK_PCIE_TLM_A_TIMESTAMP_NS));
		ASSERT_NE(NULL, r.tb[i][NDK_PCIE_TLM_A_TOTALS]);
		n = 0;
		nla_for_each_nested(a, r.tb[i][NDK_PCIE_TLM_A_TOTALS], rem) {
			if (nla_type(a) == NDK_PCIE_TLM_TOTALS_PAD)
				continue;
			EXPECT_EQ(n, nla_type(a));
			/* idle model: only the injected entry of instance 1 */
			EXPECT_EQ(i == 1 && n == 51 ? 99U : 0U, nla_get_u64(a));
			n++;
		}
		EXPECT_EQ(52, n);
	}
	reply_free(&r);
}

TEST_F(nl, clear_during_counting_keeps_perf_exact)
{
	uint64_t v[64];
	int fd;

	fd = pcie_open(PCIE_PMU, PCIE_CFG(K_WORDS, 0, 0, 0), -1, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "words,ep=0,bus=0 100"));
	ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_ALL));
	ASSERT_EQ(1, pcie_stat(PCIE_PMU, "clears"));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "words,ep=0,bus=0 50"));
	EXPECT_EQ(150, pcie_read1(fd));
	ASSERT_EQ(52, get_totals(self->sk, self->fam, v, 64));
	EXPECT_EQ(50U, v[1]);	/* words of RQ is entry 1 */
	ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_COUNTERS));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "words,ep=0,bus=0 7"));
	EXPECT_EQ(157, pcie_read1(fd));
	ASSERT_EQ(52, get_totals(self->sk, self->fam, v, 64));
	EXPECT_EQ(7U, v[1]);
	close(fd);
}

/*
 * run a request in a child with uid nobody and only the capabilities @caps:
 * CLEAR of @what if @what is non-zero, else @cmd (a do, or a dump if @dump)
 */
static int as_nobody_cmd(uint64_t caps, uint32_t what, int cmd, int dump)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct nl_sock *sk;
		int fam, ret;

		prctl(PR_SET_KEEPCAPS, 1);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		memset(data, 0, sizeof(data));
		data[0].effective = data[0].permitted = (uint32_t)caps;
		data[1].effective = data[1].permitted = (uint32_t)(caps >> 32);
		if (syscall(SYS_capset, &hdr, data))
			_exit(101);
		sk = nl_open(&fam);
		if (!sk || fam <= 0)
			_exit(102);
		if (what) {
			ret = do_clear(sk, fam, what);
		} else {
			struct reply r;

			ret = nl_xfer(sk, nl_req(fam, cmd, dump,
						 dump ? NULL : PCIE_PMU), &r);
		}
		_exit(ret == -EPERM ? 1 : ret == 0 ? 0 : 103);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int as_nobody(uint64_t caps, uint32_t what)
{
	return as_nobody_cmd(caps, what, NDK_PCIE_TLM_CMD_TOTALS_GET, 0);
}

TEST_F(nl, privileges)
{
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "stats", "0"));
	/* exit 0: allowed, 1: EPERM */
	EXPECT_EQ(1, as_nobody(0, NDK_PCIE_TLM_CLEAR_COUNTERS));
	EXPECT_EQ(1, as_nobody(0, NDK_PCIE_TLM_CLEAR_FLAGS));
	EXPECT_EQ(1, as_nobody(1ULL << CAP_NET_ADMIN, NDK_PCIE_TLM_CLEAR_MARKS));
	/* refused requests reach no register */
	EXPECT_EQ(0, pcie_stat(PCIE_PMU, "writes"));
	EXPECT_EQ(0, pcie_stat(PCIE_PMU, "reads"));
	EXPECT_EQ(0, as_nobody(1ULL << CAP_PERFMON, NDK_PCIE_TLM_CLEAR_COUNTERS));
	EXPECT_EQ(0, as_nobody(1ULL << CAP_SYS_ADMIN, NDK_PCIE_TLM_CLEAR_ALL));
	/* CLEAR ALL clears flags and marks in hardware (counters in software) */
	EXPECT_LE(1, pcie_stat(PCIE_PMU, "clears"));
}

/* every read, do and dump, needs CAP_PERFMON or CAP_SYS_ADMIN as perf does */
TEST_F(nl, privileges_reads)
{
	static const int cmds[] = {
		NDK_PCIE_TLM_CMD_DEV_GET, NDK_PCIE_TLM_CMD_EP_GET,
		NDK_PCIE_TLM_CMD_TOTALS_GET,
	};
	unsigned int i;
	int dump;

	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "stats", "0"));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (dump = 0; dump < 2; dump++) {
			EXPECT_EQ(1, as_nobody_cmd(0, 0, cmds[i], dump))
				TH_LOG("cmd %d dump %d unprivileged", cmds[i], dump);
			EXPECT_EQ(1, as_nobody_cmd(1ULL << CAP_NET_ADMIN, 0, cmds[i], dump))
				TH_LOG("cmd %d dump %d with CAP_NET_ADMIN", cmds[i], dump);
			EXPECT_EQ(0, as_nobody_cmd(1ULL << CAP_PERFMON, 0, cmds[i], dump))
				TH_LOG("cmd %d dump %d with CAP_PERFMON", cmds[i], dump);
			EXPECT_EQ(0, as_nobody_cmd(1ULL << CAP_SYS_ADMIN, 0, cmds[i], dump))
				TH_LOG("cmd %d dump %d with CAP_SYS_ADMIN", cmds[i], dump);
		}
	}
	/* 2 privileged totals do + 2 dumps: one SNAPSHOT of this instance each */
	EXPECT_EQ(4, pcie_stat(PCIE_PMU, "snapshots"));
}

/* the model's ground truth (debugfs "truth") of entries 0..n-1 */
static int read_truth(uint64_t *v, int n)
{
	static char buf[1 << 16];
	char path[256], *p = buf;
	int i;

	snprintf(path, sizeof(path), PCIE_DBG "%s/truth", PCIE_PMU);
	if (pcie_read_file(path, buf, sizeof(buf)))
		return -1;
	for (i = 0; i < n && p && *p; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		v[i] = strtoull(p + 1, &p, 10);
	}
	return i == n ? 0 : -1;
}

/*
 * Exact CLEAR under traffic: seed traffic at 400 MHz (a drain every
 * 10.24 us), 20 counter clears while perf counts cycles, RQ words and RQ
 * items. Oracle: the model's ground truth (every delta that landed, which
 * no CLEAR touches). perf totals equal the truth delta exactly; the totals
 * after the last clear lie between the truth deltas since just after and
 * just before that clear request (the clear's snapshot is between the two).
 */
TEST(clear_exact_under_traffic)
{
	static const int ent[3] = { 0, 1, 6 };
	static const uint64_t cfg[3] = {
		PCIE_CFG(K_PCIE_CYCLES, 0, 0, 0), PCIE_CFG(K_WORDS, 0, 0, 0),
		PCIE_CFG(K_ITEMS, 0, 0, 0),
	};
	uint64_t t0[52], tb[52], ta[52], t1[52], v[64];
	struct nl_sock *sk;
	int fam, fd[3], i, k;

	ASSERT_EQ(0, pcie_load(NULL, NULL));
	sk = nl_open(&fam);
	ASSERT_NE(NULL, sk);
	for (k = 0; k < 3; k++) {
		fd[k] = pcie_open(PCIE_PMU, cfg[k], -1, 0);
		ASSERT_LE(0, fd[k]);
		ASSERT_EQ(0, ioctl(fd[k], PERF_EVENT_IOC_ENABLE, 0));
	}
	/* idle: every count has landed, the events started at t0 */
	ASSERT_EQ(0, read_truth(t0, 52));
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "profile", "seed"));
	for (i = 0; i < 20; i++) {
		usleep(2000);
		ASSERT_EQ(0, read_truth(tb, 52));
		ASSERT_EQ(0, do_clear(sk, fam, NDK_PCIE_TLM_CLEAR_COUNTERS));
		ASSERT_EQ(0, read_truth(ta, 52));
	}
	usleep(2000);
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "profile", "idle"));
	ASSERT_EQ(0, read_truth(t1, 52));
	ASSERT_LT(t0[0], t1[0]);
	for (k = 0; k < 3; k++) {
		EXPECT_EQ(t1[ent[k]] - t0[ent[k]], (uint64_t)pcie_read1(fd[k]))
			TH_LOG("perf total of entry %d", ent[k]);
		close(fd[k]);
	}
	ASSERT_EQ(52, get_totals(sk, fam, v, 64));
	for (i = 0; i < 52; i++) {
		EXPECT_LE(t1[i] - ta[i], v[i]) TH_LOG("entry %d since the clear", i);
		EXPECT_GE(t1[i] - tb[i], v[i]) TH_LOG("entry %d since the clear", i);
	}
	nl_socket_free(sk);
	pcie_unload();
}

/*
 * The largest layout the registers describe: 16 endpoints of 254 counters
 * (35 PCIe channels + 219 DMA channels: 1 port, 103 regions; the two probe
 * channel counts are odd, so 255 cannot be reached), 4064 entries. A totals
 * dump read through a 4 KiB buffer arrives in several messages, every entry
 * exactly once, from one SNAPSHOT.
 */
TEST(totals_dump_largest_layout_4k)
{
	static uint64_t seen[4096];
	struct nl_sock *sk;
	struct reply r;
	struct nlattr *a;
	int fam, i, k, rem, n = 0, msgs;
	long long snaps;

	/* an accumulator that keeps up at this layout (hwsim-pcie.rst) */
	ASSERT_EQ(0, pcie_load("endpoints=16 regions_up=103 regions_down=103 "
			       "drain_period=32768 mi_mhz=250", NULL));
	/* a 4 KiB receive buffer from the first recvmsg on */
	sk = nl_open_4k(&fam);
	ASSERT_NE(NULL, sk);
	ASSERT_LT(0, fam);
	for (i = 0; i < 4064; i++)
		ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "raw,idx=%d %llu", i,
					    (unsigned long long)i * 1000003ULL + (1ULL << 40)));
	snaps = pcie_stat(PCIE_PMU, "snapshots");
	ASSERT_EQ(0, nl_xfer(sk, nl_req(fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 1, NULL), &r));
	EXPECT_EQ(snaps + 1, pcie_stat(PCIE_PMU, "snapshots"));
	msgs = r.n;
	TH_LOG("%d messages", msgs);
	EXPECT_LT(1, msgs);
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < r.n; k++) {
		EXPECT_GE(4096U, r.msg[k]->nlmsg_len);
		EXPECT_EQ(4064U, u32a(r.tb[k], NDK_PCIE_TLM_A_ENTRIES_USED));
		EXPECT_EQ(u64a(r.tb[0], NDK_PCIE_TLM_A_TIMESTAMP_NS),
			  u64a(r.tb[k], NDK_PCIE_TLM_A_TIMESTAMP_NS));
		ASSERT_NE(NULL, r.tb[k][NDK_PCIE_TLM_A_TOTALS]);
		nla_for_each_nested(a, r.tb[k][NDK_PCIE_TLM_A_TOTALS], rem) {
			if (nla_type(a) == NDK_PCIE_TLM_TOTALS_PAD)
				continue;
			ASSERT_EQ(n, nla_type(a));
			seen[n] = nla_get_u64(a);
			n++;
		}
	}
	EXPECT_EQ(4064, n);
	for (i = 0; i < 4064; i++)
		EXPECT_EQ((uint64_t)i * 1000003ULL + (1ULL << 40), seen[i])
			TH_LOG("entry %d", i);
	reply_free(&r);

	/*
	 * Only the SNAPSHOT handshake runs with interrupts off: a dump and a
	 * clear read all 4064 entries (2 words each) with interrupts on, and
	 * so does the wrap poller (no event is open).
	 */
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "stats", "0"));
	ASSERT_EQ(0, nl_xfer(sk, nl_req(fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 1, NULL), &r));
	reply_free(&r);
	ASSERT_EQ(0, do_clear(sk, fam, NDK_PCIE_TLM_CLEAR_COUNTERS));
	EXPECT_LE(2 * 2 * 4064LL, pcie_stat(PCIE_PMU, "reads"));
	EXPECT_EQ(0, pcie_stat(PCIE_PMU, "irqoff_reads"));
	nl_socket_free(sk);
	pcie_unload();
}

static int expect_err(struct nl_sock *sk, struct nl_msg *m, char *ext)
{
	struct reply r;
	int err = nl_xfer(sk, m, &r);

	strcpy(ext, r.ext);
	reply_free(&r);
	return err;
}

TEST_F(nl, malformed_input)
{
	char ext[256], name[100];
	struct nl_msg *m;

	EXPECT_EQ(-EINVAL, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET,
						      0, NULL), ext));
	EXPECT_STREQ("ndk_pcie_tlm: dev-name (PMU name) is required", ext);

	EXPECT_EQ(-ENODEV, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_TOTALS_GET,
						      0, "ndk_pcie_tlm_0"), ext));
	EXPECT_STREQ("no such PMU instance", ext);

	/* a name without its NUL */
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0, NULL);
	nla_put(m, NDK_PCIE_TLM_A_DEV_NAME, 4, "ndk_");
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_NE(0, ext[0]);

	/* a name longer than any PMU name */
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	EXPECT_EQ(-EINVAL, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET,
						      0, name), ext));
	EXPECT_NE(0, ext[0]);
	/* the policy's bound: 63 characters are a name (none such: ENODEV), 64 not */
	name[NDK_PCIE_TLM_DEV_NAME_MAX - 1] = 0;
	EXPECT_EQ(-ENODEV, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET,
						       0, name), ext));
	name[NDK_PCIE_TLM_DEV_NAME_MAX - 1] = 'x';
	name[NDK_PCIE_TLM_DEV_NAME_MAX] = 0;
	EXPECT_EQ(-EINVAL, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET,
						       0, name), ext));

	/* a dump takes no attribute: a dev-name would not narrow it */
	EXPECT_EQ(-EINVAL, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_TOTALS_GET,
						       1, PCIE_PMU), ext));
	/* 6.1 acks a refused dump start without its extack */
	EXPECT_TRUE(!ext[0] || !strcmp(ext, "ndk_pcie_tlm: dumps take no attribute")) TH_LOG("%s", ext);

	/* ep of the wrong size, out of range, or where it does not apply */
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0, PCIE_PMU);
	nla_put_u8(m, NDK_PCIE_TLM_A_EP, 0);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_NE(0, ext[0]);
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0, PCIE_PMU);
	nla_put_u32(m, NDK_PCIE_TLM_A_EP, 1);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_STREQ("endpoint out of range", ext);
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 0, PCIE_PMU);
	nla_put_u32(m, NDK_PCIE_TLM_A_EP, 0);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_STREQ("Unsupported attribute", ext);

	/* attributes that are replies only, or unknown */
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0, PCIE_PMU);
	nla_put_u64(m, NDK_PCIE_TLM_A_BASE, 0);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_NE(0, ext[0]);
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0, PCIE_PMU);
	nla_put_u32(m, 200, 0);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_NE(0, ext[0]);

	/* clear: missing, empty, unknown bits, ep */
	EXPECT_EQ(-EINVAL, expect_err(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_CLEAR,
						      0, PCIE_PMU), ext));
	EXPECT_STREQ("ndk_pcie_tlm: clear (what to clear) is required", ext);
	EXPECT_EQ(-EINVAL, do_clear(self->sk, self->fam, 0));
	EXPECT_EQ(-EINVAL, do_clear(self->sk, self->fam, 8));
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_CLEAR, 0, PCIE_PMU);
	nla_put_u32(m, NDK_PCIE_TLM_A_CLEAR, 8);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_STREQ("reserved bit set", ext);
	EXPECT_EQ(-EINVAL, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_ALL | 1U << 31));
	m = nl_req(self->fam, NDK_PCIE_TLM_CMD_CLEAR, 0, PCIE_PMU);
	nla_put_u32(m, NDK_PCIE_TLM_A_CLEAR, NDK_PCIE_TLM_CLEAR_FLAGS);
	nla_put_u32(m, NDK_PCIE_TLM_A_EP, 0);
	EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
	EXPECT_STREQ("Unsupported attribute", ext);
	EXPECT_EQ(0, pcie_stat(PCIE_PMU, "clears"));

	/* commands that do not exist or are notifications only */
	EXPECT_EQ(-EOPNOTSUPP, expect_err(self->sk, nl_req(self->fam, 99, 0, PCIE_PMU), ext));
	EXPECT_EQ(-EOPNOTSUPP, expect_err(self->sk, nl_req(self->fam,
						NDK_PCIE_TLM_CMD_FLAGS_NTF, 0, PCIE_PMU), ext));
	EXPECT_EQ(-EOPNOTSUPP, expect_err(self->sk, nl_req(self->fam,
						NDK_PCIE_TLM_CMD_CLEAR, 1, NULL), ext));
}

static int no_seq_check(struct nl_msg *m, void *arg)
{
	return NL_OK;
}

/* wait up to @ms for one notification on @sk */
static int wait_ntf(struct nl_sock *sk, struct reply *r, int ms)
{
	struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	memset(r, 0, sizeof(*r));
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	while (!r->n && poll(&p, 1, ms) == 1)
		nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	return r->n;
}

/*
 * A socket in the flags multicast group, or NULL. Nothing waits for the
 * driver to see the listener: it looks at least once a second, and every
 * wait for a notification allows three.
 */
static struct nl_sock *flags_listener(struct nl_sock *sk)
{
	struct nl_sock *mc = nl_socket_alloc();
	int grp;

	if (!mc)
		return NULL;
	nl_socket_disable_seq_check(mc);
	grp = genl_ctrl_resolve_grp(sk, NDK_PCIE_TLM_FAMILY_NAME,
				    NDK_PCIE_TLM_MCGRP_FLAGS);
	if (genl_connect(mc) || grp <= 0 || nl_socket_add_membership(mc, grp)) {
		nl_socket_free(mc);
		return NULL;
	}
	return mc;
}

TEST_F(nl, flags_notify_and_clear)
{
	struct nl_sock *mc = flags_listener(self->sk);
	char buf[128];
	struct reply r;

	ASSERT_NE(NULL, mc);

	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "lost_delta"));
	ASSERT_EQ(1, wait_ntf(mc, &r, 3000));
	EXPECT_EQ(NDK_PCIE_TLM_CMD_FLAGS_NTF,
		  ((struct genlmsghdr *)nlmsg_data(r.msg[0]))->cmd);
	EXPECT_STREQ(PCIE_PMU, nla_get_string(r.tb[0][NDK_PCIE_TLM_A_DEV_NAME]));
	EXPECT_EQ(1U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(1U, u32a(r.tb[0], NDK_PCIE_TLM_A_NEW_FLAGS));
	reply_free(&r);

	/* no second notification for a flag that stays set */
	EXPECT_EQ(0, wait_ntf(mc, &r, 400));

	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "readout_overrun"));
	ASSERT_EQ(1, wait_ntf(mc, &r, 3000));
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(2U, u32a(r.tb[0], NDK_PCIE_TLM_A_NEW_FLAGS));
	reply_free(&r);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0,
					      PCIE_PMU), &r));
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	reply_free(&r);

	ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_FLAGS));
	ASSERT_EQ(0, pcie_read_file(PCIE_DBG PCIE_PMU "/flags", buf, sizeof(buf)));
	EXPECT_STREQ("lost_delta=0 readout_overrun=0\n", buf);
	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0,
					      PCIE_PMU), &r));
	EXPECT_EQ(0U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	reply_free(&r);

	/* set again after the clear: notified again */
	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "lost_delta"));
	ASSERT_EQ(1, wait_ntf(mc, &r, 3000));
	EXPECT_EQ(1U, u32a(r.tb[0], NDK_PCIE_TLM_A_NEW_FLAGS));
	reply_free(&r);
	nl_socket_free(mc);
}

/* the top-level attribute types of @nlh as a bit mask, padding left out */
static uint64_t attr_set(const struct nlmsghdr *nlh)
{
	struct genlmsghdr *g = nlmsg_data(nlh);
	struct nlattr *a;
	uint64_t set = 0;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0), rem)
		if (nla_type(a) != NDK_PCIE_TLM_A_PAD)
			set |= nla_type(a) < 64 ? 1ULL << nla_type(a) : 1ULL << 63;
	return set;
}

#define A(x) (1ULL << NDK_PCIE_TLM_A_##x)

/*
 * Each fact is said once (issue 18): the STATUS flags travel as the FLAGS
 * bit mask (and NEW_FLAGS in a notification) only, in every reply and in
 * the notification, with both flags set. Each message carries exactly the
 * attributes the spec lists for it.
 */
TEST_F(nl, flags_said_once)
{
	const uint64_t dev_get = A(DEV_NAME) | A(BASE) | A(PMU_TYPE) | A(CPU) |
		(A(ENTRIES_USED) * 2 - A(VERSION_MAJOR)) | A(FLAGS) | A(POLL_NS);
	char ext[256], buf[32];
	struct nl_sock *mc;
	struct nl_msg *m;
	struct stat stb;
	struct reply r;
	int t;

	/* the retired types 38, 39 are refused in a request */
	for (t = 38; t <= 39; t++) {
		m = nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0, PCIE_PMU);
		nla_put_u8(m, t, 1);
		EXPECT_EQ(-EINVAL, expect_err(self->sk, m, ext));
		EXPECT_STREQ("Unsupported attribute", ext);
	}

	mc = flags_listener(self->sk);
	ASSERT_NE(NULL, mc);

	ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "lost_delta readout_overrun"));
	ASSERT_EQ(1, wait_ntf(mc, &r, 3000));
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_NEW_FLAGS));
	EXPECT_EQ(A(DEV_NAME) | A(FLAGS) | A(NEW_FLAGS), attr_set(r.msg[0]));
	reply_free(&r);
	nl_socket_free(mc);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_EP_GET, 0,
					      PCIE_PMU), &r));
	ASSERT_EQ(1, r.n);
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(A(DEV_NAME) | A(FLAGS) | A(EPS), attr_set(r.msg[0]));
	reply_free(&r);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_DEV_GET, 0,
					      PCIE_PMU), &r));
	ASSERT_EQ(1, r.n);
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(dev_get, attr_set(r.msg[0]));
	reply_free(&r);

	/* the sysfs flags file says what FLAGS says, to root only */
	ASSERT_EQ(0, stat(PCIE_SYS PCIE_PMU "/flags", &stb));
	EXPECT_EQ(0400U, stb.st_mode & 07777);
	ASSERT_EQ(0, pcie_read_file(PCIE_SYS PCIE_PMU "/flags", buf, sizeof(buf)));
	EXPECT_STREQ("0x3\n", buf);
	ASSERT_EQ(0, pcie_read_file(PCIE_SYS PCIE_PMU1 "/flags", buf, sizeof(buf)));
	EXPECT_STREQ("0x0\n", buf);

	ASSERT_EQ(0, nl_xfer(self->sk, nl_req(self->fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 0,
					      PCIE_PMU), &r));
	ASSERT_EQ(1, r.n);
	EXPECT_EQ(3U, u32a(r.tb[0], NDK_PCIE_TLM_A_FLAGS));
	EXPECT_EQ(A(DEV_NAME) | A(FLAGS) | A(TIMESTAMP_NS) | A(ENTRIES_USED) |
		  A(CNT_WIDTH) | A(TOTALS), attr_set(r.msg[0]));
	reply_free(&r);
}

/*
 * The flags group is bounded by design: a notification is sent only when
 * a flag bit goes from clear to set as the poller sees it, at most once
 * per flags_poll_ms tick per instance. A flag that is set again and again
 * while it is set (LOST DELTA at every drain under overload) is notified
 * once; each clear of the flags lets it be notified once more. Ten cycles
 * of set (four times), wait, clear give exactly ten notifications, each
 * with NEW_FLAGS = LOST DELTA, and nothing else arrives.
 */
TEST_F(nl, flags_notify_once_per_set)
{
	struct nl_sock *mc = flags_listener(self->sk);
	int i, k, n = 0, extra = 0;
	struct reply r;
	char buf[128];

	ASSERT_NE(NULL, mc);

	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "lost_delta"));
		ASSERT_EQ(1, wait_ntf(mc, &r, 3000));
		EXPECT_STREQ(PCIE_PMU, nla_get_string(r.tb[0][NDK_PCIE_TLM_A_DEV_NAME]));
		EXPECT_EQ(1U, u32a(r.tb[0], NDK_PCIE_TLM_A_NEW_FLAGS));
		n++;
		reply_free(&r);
		/* set again while set, as an overloaded block does at every drain */
		for (k = 0; k < 3; k++)
			ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "flags", "lost_delta"));
		/* more than two flag checks (flags_poll_ms = 100) pass: nothing */
		extra += wait_ntf(mc, &r, 250);
		reply_free(&r);
		ASSERT_EQ(0, do_clear(self->sk, self->fam, NDK_PCIE_TLM_CLEAR_FLAGS));
		/* the model's CLEAR FLAGS lands a few MI cycles late: let it */
		ASSERT_EQ(0, pcie_read_file(PCIE_DBG PCIE_PMU "/flags", buf, sizeof(buf)));
		ASSERT_STREQ("lost_delta=0 readout_overrun=0\n", buf);
		ASSERT_EQ(0, pcie_read_file(PCIE_SYS PCIE_PMU "/flags", buf, sizeof(buf)));
		ASSERT_STREQ("0x0\n", buf);
	}
	extra += wait_ntf(mc, &r, 400);
	reply_free(&r);
	EXPECT_EQ(10, n);
	EXPECT_EQ(0, extra);
	nl_socket_free(mc);
}

/*
 * A dump resumes by instance, not by list position. Two instances with the
 * largest layout; a TOTALS dump through a 4 KiB buffer takes several rounds
 * per instance. The first round runs when the request is sent; instance 0
 * is then unbound before the first receive. Every message that names
 * instance 1 must carry instance 1's own totals (all 0: only instance 0 has
 * injected values), entries 0 to 4063 exactly once. A cursor that counts
 * list positions resumed at position 0, now instance 1, and sent it
 * instance 0's snapshot from where the first round stopped.
 */
TEST(totals_dump_detach_between_rounds)
{
	static int seen[4096];
	struct nl_sock *sk;
	struct nlattr *a;
	struct reply r;
	int fam, i, k, rem, n1 = 0, msgs1 = 0, wrong = 0, missed = 0;

	ASSERT_EQ(0, pcie_load("instances=2 endpoints=16 regions_up=103 regions_down=103 "
			       "drain_period=32768 mi_mhz=250", NULL));
	sk = nl_open_4k(&fam);
	ASSERT_NE(NULL, sk);
	ASSERT_LT(0, fam);
	for (i = 0; i < 4064; i += 7)
		ASSERT_EQ(0, pcie_dbg_write(PCIE_PMU, "inject", "raw,idx=%d %llu", i,
					    (1ULL << 40) + (unsigned long long)i));
	ASSERT_LT(0, nl_send_auto(sk, nl_req(fam, NDK_PCIE_TLM_CMD_TOTALS_GET, 1, NULL)));
	/* round 1 is queued; instance 0 goes before round 2 runs */
	ASSERT_EQ(0, pcie_sh("echo ndk-pcie-tlm-sim.0 > /sys/bus/platform/drivers/ndk-pcie-tlm/unbind"));
	nl_recv_reply(sk, &r);
	ASSERT_EQ(0, r.err);
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < r.n; k++) {
		if (!r.tb[k][NDK_PCIE_TLM_A_DEV_NAME] ||
		    strcmp(PCIE_PMU1, nla_get_string(r.tb[k][NDK_PCIE_TLM_A_DEV_NAME])))
			continue;
		msgs1++;
		ASSERT_NE(NULL, r.tb[k][NDK_PCIE_TLM_A_TOTALS]);
		nla_for_each_nested(a, r.tb[k][NDK_PCIE_TLM_A_TOTALS], rem) {
			if (nla_type(a) == NDK_PCIE_TLM_TOTALS_PAD)
				continue;
			if (nla_get_u64(a) && !wrong++)
				TH_LOG("entry %d of %s in message %d is %llu, not 0", nla_type(a),
				       PCIE_PMU1, k, (unsigned long long)nla_get_u64(a));
			if (nla_type(a) < 4096)
				seen[nla_type(a)]++;
			n1++;
			if (n1 > 4064)
				break;
		}
	}
	for (i = 0; i < 4064; i++)
		if (seen[i] != 1 && !missed++)
			TH_LOG("entry %d of %s sent %d times", i, PCIE_PMU1, seen[i]);
	TH_LOG("%d messages, %d for %s", r.n, msgs1, PCIE_PMU1);
	EXPECT_EQ(4064, n1);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, missed);
	reply_free(&r);
	nl_socket_free(sk);
	pcie_unload();
}

TEST_HARNESS_MAIN
