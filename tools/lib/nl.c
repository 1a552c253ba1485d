// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: the ndk_pcie_tlm generic netlink control plane (libnl-genl-3):
 * endpoint state and flags (EP_GET), totals since the last clear
 * (TOTALS_GET) and clearing (CLEAR). UAPI: include/uapi/linux/ndk_pcie_tlm.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/ndk_pcie_tlm.h>
#include <linux/netlink.h>

#include "internal.h"

#define KMSG_LEN HWTEL_NL_KMSG_LEN

struct hwtel_nl {
	struct nl_sock *sock;
	int family;
	char kmsg[KMSG_LEN];	/* the kernel's message of the last failure */
	char why[KMSG_LEN + 64];	/* strerror and kmsg, for hwtel_err() */
};

struct req_ctx {
	int (*parse)(struct nlattr **tb, void *arg);
	void *arg;
	int err;	/* negative errno from the kernel or the parser */
	char *kmsg;	/* the kernel's extended ACK message goes here */
	bool done;
	bool got;
};

static int nl_to_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_PERM: return -EPERM;
	case NLE_NOACCESS: return -EACCES;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_INVAL: return -EINVAL;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NODEV: return -ENODEV;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_BUSY: return -EBUSY;
	case NLE_AGAIN: return -EAGAIN;
	default: return -EIO;
	}
}

int hwtel_nl_open(struct hwtel_nl **out)
{
	struct hwtel_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	*out = NULL;
	if (!nl)
		return -ENOMEM;
	nl->sock = nl_socket_alloc();
	if (!nl->sock) {
		free(nl);
		return -ENOMEM;
	}
	ret = genl_connect(nl->sock);
	if (ret < 0) {
		nl_socket_free(nl->sock);
		free(nl);
		return hwtel_err(nl_to_errno(ret), "cannot open a generic netlink socket: %s",
				 nl_geterror(ret));
	}
	nl->family = genl_ctrl_resolve(nl->sock, NDK_PCIE_TLM_FAMILY_NAME);
	if (nl->family < 0) {
		nl_socket_free(nl->sock);
		free(nl);
		return hwtel_err(-ENOENT, "generic netlink family %s not found: load the driver with 'modprobe %s'",
				 NDK_PCIE_TLM_FAMILY_NAME, HWTEL_PCIE_MODULE);
	}
	nl_socket_disable_auto_ack(nl->sock);
	/* the kernel's reason of a failure, when it gives one (best effort) */
	(void)setsockopt(nl_socket_get_fd(nl->sock), SOL_NETLINK, NETLINK_EXT_ACK,
			 &(int){ 1 }, sizeof(int));
	/*
	 * TOTALS_GET of the largest layout is one message of about 49 KB:
	 * peek at each message's size so the receive buffer always fits it
	 */
	nl_socket_enable_msg_peek(nl->sock);
	*out = nl;
	return 0;
}

void hwtel_nl_close(struct hwtel_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sock);
	free(nl);
}

/*
 * Reply attributes as include/uapi/linux/ndk_pcie_tlm.h and the YNL spec
 * (Documentation/netlink/specs/ndk_pcie_tlm.yaml) define them: fixed-size
 * types exactly their size, strings NUL terminated within their maximum.
 * libnl's nla_parse() then refuses an attribute that a broken or hostile
 * module sent shorter (nla_get_u32() of a 1-byte attribute would read
 * past it), and nla_get_string() never runs off an unterminated string.
 * Attributes not listed (PAD, unknown types of a newer module) are not
 * checked and not read.
 */
#define P_U8	{ .type = NLA_U8, .maxlen = sizeof(uint8_t) }
#define P_U32	{ .type = NLA_U32, .maxlen = sizeof(uint32_t) }
#define P_U64	{ .type = NLA_U64, .maxlen = sizeof(uint64_t) }
/* libnl's maxlen of a string counts the NUL, as the UAPI's maxima do */
#define P_STR(max)	{ .type = NLA_STRING, .maxlen = (max) }

static const struct nla_policy dev_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME]	= P_STR(NDK_PCIE_TLM_DEV_NAME_MAX),
	[NDK_PCIE_TLM_A_BASE]		= P_U64,
	[NDK_PCIE_TLM_A_PMU_TYPE]	= P_U32,
	[NDK_PCIE_TLM_A_CPU]		= P_U32,
	[NDK_PCIE_TLM_A_VERSION_MAJOR]	= P_U32,
	[NDK_PCIE_TLM_A_VERSION_MINOR]	= P_U32,
	[NDK_PCIE_TLM_A_ENDPOINTS]	= P_U32,
	[NDK_PCIE_TLM_A_DMA_PORTS]	= P_U32,
	[NDK_PCIE_TLM_A_PROBES]		= P_U32,
	[NDK_PCIE_TLM_A_ENTRIES]	= P_U32,
	[NDK_PCIE_TLM_A_CNT_WIDTH]	= P_U32,
	[NDK_PCIE_TLM_A_COUNTERS_PER_EP] = P_U32,
	[NDK_PCIE_TLM_A_PCIE_CHANNELS]	= P_U32,
	[NDK_PCIE_TLM_A_PCIE_BUSES]	= P_U32,
	[NDK_PCIE_TLM_A_PCIE_REGIONS]	= P_U32,
	[NDK_PCIE_TLM_A_BRAKE_CHANNELS]	= P_U32,
	[NDK_PCIE_TLM_A_DMA_CHANNELS]	= P_U32,
	[NDK_PCIE_TLM_A_DMA_BUSES]	= P_U32,
	[NDK_PCIE_TLM_A_DMA_REGIONS]	= P_U32,
	[NDK_PCIE_TLM_A_REGIONS_RQ]	= P_U32,
	[NDK_PCIE_TLM_A_REGIONS_RC]	= P_U32,
	[NDK_PCIE_TLM_A_REGIONS_UP]	= P_U32,
	[NDK_PCIE_TLM_A_REGIONS_DOWN]	= P_U32,
	[NDK_PCIE_TLM_A_BYTES_RQ]	= P_U32,
	[NDK_PCIE_TLM_A_BYTES_RC]	= P_U32,
	[NDK_PCIE_TLM_A_BYTES_UP]	= P_U32,
	[NDK_PCIE_TLM_A_BYTES_DOWN]	= P_U32,
	[NDK_PCIE_TLM_A_ITEM_BYTES]	= P_U32,
	[NDK_PCIE_TLM_A_HIST_BANDS]	= P_U32,
	[NDK_PCIE_TLM_A_HIST_PCIE]	= P_U32,
	[NDK_PCIE_TLM_A_HIST_DMA]	= P_U32,
	[NDK_PCIE_TLM_A_TAG_CAPACITY]	= P_U32,
	[NDK_PCIE_TLM_A_STFIFO_CAPACITY] = P_U32,
	[NDK_PCIE_TLM_A_DRAIN_PERIOD]	= P_U32,
	[NDK_PCIE_TLM_A_ENTRIES_USED]	= P_U32,
	[NDK_PCIE_TLM_A_FLAGS]		= P_U32,
	[NDK_PCIE_TLM_A_NEW_FLAGS]	= P_U32,
	[NDK_PCIE_TLM_A_EP]		= P_U32,
	[NDK_PCIE_TLM_A_EPS]		= { .type = NLA_NESTED },
	[NDK_PCIE_TLM_A_TOTALS]		= { .type = NLA_NESTED },
	[NDK_PCIE_TLM_A_TIMESTAMP_NS]	= P_U64,
	[NDK_PCIE_TLM_A_CLEAR]		= P_U32,
	[NDK_PCIE_TLM_A_POLL_NS]	= P_U64,
	[NDK_PCIE_TLM_A_PCI_ADDR]	= P_STR(NDK_PCIE_TLM_PCI_ADDR_MAX),
	[NDK_PCIE_TLM_A_BAR]		= P_U32,
	[NDK_PCIE_TLM_A_WIN_OFFSET]	= P_U64,
	[NDK_PCIE_TLM_A_WIN_SIZE]	= P_U64,
};

static const struct nla_policy ep_policy[NDK_PCIE_TLM_EP_A_MAX + 1] = {
	[NDK_PCIE_TLM_EP_A_ID]			= P_U32,
	[NDK_PCIE_TLM_EP_A_STATUS_RAW]		= P_U32,
	[NDK_PCIE_TLM_EP_A_LINK_UP]		= P_U8,
	[NDK_PCIE_TLM_EP_A_MPS]			= P_U32,
	[NDK_PCIE_TLM_EP_A_MRRS]		= P_U32,
	[NDK_PCIE_TLM_EP_A_EXT_TAG]		= P_U8,
	[NDK_PCIE_TLM_EP_A_TAG10]		= P_U8,
	[NDK_PCIE_TLM_EP_A_RCB]			= P_U32,
	[NDK_PCIE_TLM_EP_A_TAGS_FREE]		= P_U32,
	[NDK_PCIE_TLM_EP_A_TAGS_LOWEST]		= P_U32,
	[NDK_PCIE_TLM_EP_A_STFIFO_FREE]		= P_U32,
	[NDK_PCIE_TLM_EP_A_STFIFO_LOWEST]	= P_U32,
};

/* -EBADMSG and the reason, in the kernel message's place */
static int malformed(struct req_ctx *c)
{
	if (c->kmsg && !c->kmsg[0])
		snprintf(c->kmsg, KMSG_LEN, "%s", "malformed reply: an attribute of the "
			 "wrong size or an unterminated string");
	return -EBADMSG;
}

static int cb_valid(struct nl_msg *msg, void *arg)
{
	struct req_ctx *c = arg;
	struct nlattr *tb[NDK_PCIE_TLM_A_MAX + 1];
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int ret;

	if (!genlmsg_valid_hdr(h, 0)) {
		c->err = malformed(c);
		return NL_SKIP;
	}
	ret = genlmsg_parse(h, 0, tb, NDK_PCIE_TLM_A_MAX, dev_policy);
	if (ret < 0) {
		c->err = malformed(c);
		return NL_SKIP;
	}
	c->got = true;
	if (c->parse && !c->err) {
		ret = c->parse(tb, c->arg);
		if (ret == -EBADMSG)
			ret = malformed(c);
		if (ret < 0)
			c->err = ret;
	}
	return NL_OK;
}

/*
 * The extended ACK message (NLMSGERR_ATTR_MSG) among the attributes at
 * @off of @h's payload, if the kernel sent one (NLM_F_ACK_TLVS).
 */
static void ack_msg(struct req_ctx *c, const struct nlmsghdr *h, size_t off)
{
	size_t len = h->nlmsg_len - NLMSG_HDRLEN;
	struct nlattr *a;
	int rem;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || off >= len)
		return;
	nla_for_each_attr(a, (struct nlattr *)((char *)nlmsg_data(h) + off),
			  (int)(len - off), rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0) {
			snprintf(c->kmsg, KMSG_LEN, "%.*s",
				 nla_len(a), (const char *)nla_data(a));
			c->kmsg[strcspn(c->kmsg, "\n")] = '\0';
		}
	}
}

static int cb_ack(struct nl_msg *msg, void *arg)
{
	struct req_ctx *c = arg;

	(void)msg;
	c->done = true;
	return NL_STOP;
}

/*
 * The end of a dump. A dump that fails in the kernel after it started (a
 * SNAPSHOT that timed out, say) ends with an NLMSG_DONE whose payload is
 * the errno, which libnl passes over: without this the caller would see a
 * dump with no messages and report EIO.
 */
static int cb_finish(struct nl_msg *msg, void *arg)
{
	const struct nlmsghdr *h = nlmsg_hdr(msg);
	struct req_ctx *c = arg;
	int e;

	if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(e))) {
		memcpy(&e, nlmsg_data(h), sizeof(e));
		if (e < 0) {
			c->err = e;
			ack_msg(c, h, NLMSG_ALIGN(sizeof(e)));
		}
	}
	c->done = true;
	return NL_STOP;
}

static int cb_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)err - 1;
	struct req_ctx *c = arg;
	size_t off = sizeof(*err);

	(void)nla;
	c->err = err->error;
	/* the request comes back in full unless the kernel capped it */
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(err->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (err->error)
		ack_msg(c, h, off);
	c->done = true;
	return NL_STOP;
}

/*
 * A "do" of @cmd on @dev, or a dump of every instance when @dev is NULL;
 * with @do_req a "do" even without @dev (ATTACH).
 */
static int request_any(struct hwtel_nl *nl, uint8_t cmd, const char *dev, bool do_req,
		       int (*put)(struct nl_msg *msg, const void *arg), const void *put_arg,
		       int (*parse)(struct nlattr **tb, void *arg), void *arg)
{
	struct req_ctx c = { .parse = parse, .arg = arg, .kmsg = nl->kmsg };
	struct nl_cb *cb;
	struct nl_msg *msg;
	int ret;

	nl->kmsg[0] = '\0';
	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb) {
		nlmsg_free(msg);
		nl_cb_put(cb);
		return -ENOMEM;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 NLM_F_REQUEST | (dev || do_req ? NLM_F_ACK : NLM_F_DUMP), cmd,
			 NDK_PCIE_TLM_FAMILY_VERSION) ||
	    (dev && nla_put_string(msg, NDK_PCIE_TLM_A_DEV_NAME, dev) < 0) ||
	    (put && put(msg, put_arg) < 0)) {
		nlmsg_free(msg);
		nl_cb_put(cb);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, cb_valid, &c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, cb_ack, &c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, cb_finish, &c);
	nl_cb_err(cb, NL_CB_CUSTOM, cb_error, &c);
	ret = nl_send_auto(nl->sock, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return nl_to_errno(ret);
	}
	while (!c.done) {
		ret = nl_recvmsgs(nl->sock, cb);
		if (ret < 0 && !c.done) {
			nl_cb_put(cb);
			return c.err ? c.err : nl_to_errno(ret);
		}
	}
	nl_cb_put(cb);
	if (c.err)
		return c.err;
	if (parse && !c.got)
		return -EIO;
	return 0;
}

/* strerror(-@ret) and, if the kernel gave one, its message */
static const char *why(struct hwtel_nl *nl, int ret)
{
	if (nl->kmsg[0])
		snprintf(nl->why, sizeof(nl->why), "%s (%s)", strerror(-ret), nl->kmsg);
	else
		snprintf(nl->why, sizeof(nl->why), "%s", strerror(-ret));
	return nl->why;
}

static int request(struct hwtel_nl *nl, uint8_t cmd, const char *dev,
		   int (*put)(struct nl_msg *msg, const void *arg), const void *put_arg,
		   int (*parse)(struct nlattr **tb, void *arg), void *arg)
{
	return request_any(nl, cmd, dev, false, put, put_arg, parse, arg);
}

static uint32_t get_u32(struct nlattr *a, uint32_t def)
{
	return a ? nla_get_u32(a) : def;
}

static uint8_t get_u8(struct nlattr *a)
{
	return a ? nla_get_u8(a) : 0;
}

static void parse_flags(struct nlattr **tb, struct hwtel_pcie_status *st)
{
	uint32_t fl = get_u32(tb[NDK_PCIE_TLM_A_FLAGS], 0);

	st->lost_deltas = !!(fl & NDK_PCIE_TLM_FLAG_LOST_DELTA);
	st->readout_overrun = !!(fl & NDK_PCIE_TLM_FLAG_READOUT_OVERRUN);
}

static int parse_ep(struct nlattr **tb, void *arg)
{
	struct hwtel_pcie_data *d = arg;
	struct nlattr *nest;
	int rem;

	parse_flags(tb, &d->status);
	if (!tb[NDK_PCIE_TLM_A_EPS])
		return -EIO;
	nla_for_each_nested(nest, tb[NDK_PCIE_TLM_A_EPS], rem) {
		struct nlattr *e[NDK_PCIE_TLM_EP_A_MAX + 1];
		struct hwtel_pcie_ep *ep;
		unsigned int id = (unsigned int)nla_type(nest);

		if (nla_parse_nested(e, NDK_PCIE_TLM_EP_A_MAX, nest, ep_policy) < 0)
			return -EBADMSG;
		if (e[NDK_PCIE_TLM_EP_A_ID])
			id = nla_get_u32(e[NDK_PCIE_TLM_EP_A_ID]);
		if (id >= d->nendpoints)
			continue;
		ep = &d->endpoints[id];
		ep->link_up = get_u8(e[NDK_PCIE_TLM_EP_A_LINK_UP]);
		ep->mps = get_u32(e[NDK_PCIE_TLM_EP_A_MPS], 0);
		ep->mrrs = get_u32(e[NDK_PCIE_TLM_EP_A_MRRS], 0);
		ep->ext_tag = get_u8(e[NDK_PCIE_TLM_EP_A_EXT_TAG]);
		ep->tag_10b = get_u8(e[NDK_PCIE_TLM_EP_A_TAG10]);
		ep->rcb = get_u32(e[NDK_PCIE_TLM_EP_A_RCB], 0);
		ep->tags_free = get_u32(e[NDK_PCIE_TLM_EP_A_TAGS_FREE], 0);
		ep->tags_free_min = get_u32(e[NDK_PCIE_TLM_EP_A_TAGS_LOWEST], 0);
		ep->stfifo_free = get_u32(e[NDK_PCIE_TLM_EP_A_STFIFO_FREE], 0);
		ep->stfifo_free_min = get_u32(e[NDK_PCIE_TLM_EP_A_STFIFO_LOWEST], 0);
	}
	d->state_valid = true;
	return 0;
}

int hwtel_nl_ep_get(struct hwtel_nl *nl, const char *dev, struct hwtel_pcie_data *d)
{
	int ret = request(nl, NDK_PCIE_TLM_CMD_EP_GET, dev, NULL, NULL, parse_ep, d);

	if (ret == -EPERM || ret == -EACCES)
		return hwtel_err(-EACCES, "reading the state, gauges and flags of %s (control plane EP_GET) needs CAP_PERFMON or CAP_SYS_ADMIN (run as root)",
				 dev);
	if (ret < 0)
		return hwtel_err(ret, "control plane: EP_GET of %s failed: %s", dev, why(nl, ret));
	return 0;
}

struct totals_ctx {
	const char *dev;
	uint64_t *totals;
	unsigned int n, used, got;
	uint64_t ts;
	uint32_t flags;
};

/*
 * One message of a TOTALS_GET dump: a run of @dev's entries (the driver
 * splits a large layout over several messages, all of one snapshot);
 * other instances' messages are skipped.
 */
static int parse_totals(struct nlattr **tb, void *arg)
{
	struct totals_ctx *t = arg;
	struct nlattr *a;
	int rem;

	if (!tb[NDK_PCIE_TLM_A_DEV_NAME] ||
	    strcmp(nla_get_string(tb[NDK_PCIE_TLM_A_DEV_NAME]), t->dev))
		return 0;
	t->used = get_u32(tb[NDK_PCIE_TLM_A_ENTRIES_USED], 0);
	t->flags = get_u32(tb[NDK_PCIE_TLM_A_FLAGS], 0);
	if (tb[NDK_PCIE_TLM_A_TIMESTAMP_NS])
		t->ts = nla_get_u64(tb[NDK_PCIE_TLM_A_TIMESTAMP_NS]);
	if (!tb[NDK_PCIE_TLM_A_TOTALS])
		return -EIO;
	nla_for_each_nested(a, tb[NDK_PCIE_TLM_A_TOTALS], rem) {
		unsigned int type = (unsigned int)nla_type(a);

		if (type == NDK_PCIE_TLM_TOTALS_PAD)
			continue;
		if (nla_len(a) != 8)
			return -EBADMSG;
		if (type < t->n)
			t->totals[type] = nla_get_u64(a);
		t->got++;
	}
	return 0;
}

/* tries of a whole-window read the driver gave up on with EAGAIN */
#define HWTEL_NL_TRIES 3

int hwtel_nl_totals(struct hwtel_nl *nl, const char *dev, uint64_t *totals,
		    unsigned int n, unsigned int *used, uint64_t *ts_ns, uint32_t *flags)
{
	struct totals_ctx t = { .dev = dev, .totals = totals, .n = n };
	int ret;

	/*
	 * A dump, not a do: the reply of the largest layout (16 x 255 entries,
	 * about 49 KB) comes in messages that fit any receive buffer.
	 */
	/*
	 * EAGAIN: perf events of the device were started or stopped during
	 * every try of the driver's one-snapshot read of the window; try again.
	 */
	for (int tries = 0; tries < HWTEL_NL_TRIES; tries++) {
		memset(totals, 0, n * sizeof(*totals));
		t.used = t.got = 0;
		ret = request(nl, NDK_PCIE_TLM_CMD_TOTALS_GET, NULL, NULL, NULL, parse_totals, &t);
		if (ret != -EAGAIN)
			break;
	}
	if (!ret && (!t.used || t.got != t.used))
		ret = t.used ? -EIO : -ENODEV;
	if (ret == -EPERM || ret == -EACCES)
		return hwtel_err(-EACCES, "reading the totals of %s (control plane TOTALS_GET) needs CAP_PERFMON or CAP_SYS_ADMIN (run as root)",
				 dev);
	if (ret == -EAGAIN)
		return hwtel_err(ret, "control plane: TOTALS_GET of %s gave up: perf events of it were started or stopped during every try; try again",
				 dev);
	if (ret < 0)
		return hwtel_err(ret, "control plane: TOTALS_GET of %s failed: %s", dev,
				 why(nl, ret));
	*used = t.used;
	*ts_ns = t.ts;
	*flags = t.flags;
	return 0;
}

static int put_clear(struct nl_msg *msg, const void *arg)
{
	return nla_put_u32(msg, NDK_PCIE_TLM_A_CLEAR, *(const uint32_t *)arg);
}

int hwtel_nl_clear(struct hwtel_nl *nl, const char *dev, unsigned int what)
{
	uint32_t v = 0;
	int ret;

	if (what & HWTEL_CLEAR_COUNTERS)
		v |= NDK_PCIE_TLM_CLEAR_COUNTERS;
	if (what & HWTEL_CLEAR_FLAGS)
		v |= NDK_PCIE_TLM_CLEAR_FLAGS;
	if (what & HWTEL_CLEAR_MARKS)
		v |= NDK_PCIE_TLM_CLEAR_MARKS;
	for (int tries = 0; tries < HWTEL_NL_TRIES; tries++) {
		ret = request(nl, NDK_PCIE_TLM_CMD_CLEAR, dev, put_clear, &v, NULL, NULL);
		if (ret != -EAGAIN)
			break;
	}
	if (ret == -EPERM || ret == -EACCES)
		return hwtel_err(-EACCES, "clearing %s needs CAP_PERFMON or CAP_SYS_ADMIN (run as root)",
				 dev);
	if (ret == -EAGAIN)
		return hwtel_err(ret, "control plane: CLEAR of %s gave up: perf events of it were started or stopped during every try; try again",
				 dev);
	if (ret < 0)
		return hwtel_err(ret, "control plane: CLEAR of %s failed: %s", dev, why(nl, ret));
	return 0;
}

struct attach_req {
	const char *pci;
	uint32_t bar;
	uint64_t offset, size;
	char *name;
	size_t name_size;
};

static int put_attach(struct nl_msg *msg, const void *arg)
{
	const struct attach_req *r = arg;

	if (nla_put_string(msg, NDK_PCIE_TLM_A_PCI_ADDR, r->pci) < 0 ||
	    nla_put_u32(msg, NDK_PCIE_TLM_A_BAR, r->bar) < 0 ||
	    nla_put_u64(msg, NDK_PCIE_TLM_A_WIN_OFFSET, r->offset) < 0 ||
	    nla_put_u64(msg, NDK_PCIE_TLM_A_WIN_SIZE, r->size) < 0)
		return -1;
	return 0;
}

static int parse_attach(struct nlattr **tb, void *arg)
{
	struct attach_req *r = arg;

	if (!tb[NDK_PCIE_TLM_A_DEV_NAME])
		return -EIO;
	snprintf(r->name, r->name_size, "%s", nla_get_string(tb[NDK_PCIE_TLM_A_DEV_NAME]));
	return 0;
}

int hwtel_nl_attach(struct hwtel_nl *nl, const char *pci_addr, unsigned int bar,
		    uint64_t offset, uint64_t size, char *name, size_t name_size)
{
	struct attach_req r = {
		.pci = pci_addr, .bar = bar, .offset = offset, .size = size,
		.name = name, .name_size = name_size,
	};

	return request_any(nl, NDK_PCIE_TLM_CMD_ATTACH, NULL, true, put_attach, &r,
			   parse_attach, &r);
}

int hwtel_nl_detach(struct hwtel_nl *nl, const char *name)
{
	return request(nl, NDK_PCIE_TLM_CMD_DETACH, name, NULL, NULL, NULL, NULL);
}

/* One reply message through the receive path (unit tests) */
static int parse_one(struct nl_msg *msg, int (*parse)(struct nlattr **tb, void *arg), void *arg,
		     char *kmsg)
{
	struct req_ctx c = { .parse = parse, .arg = arg, .kmsg = kmsg };

	kmsg[0] = '\0';
	cb_valid(msg, &c);
	if (c.err)
		return c.err;
	return c.got ? 0 : -EIO;
}

int hwtel_nl_parse_ep_msg(struct nl_msg *msg, struct hwtel_pcie_data *d, char *kmsg)
{
	return parse_one(msg, parse_ep, d, kmsg);
}

int hwtel_nl_parse_totals_msg(struct nl_msg *msg, const char *dev, uint64_t *totals,
			      unsigned int n, unsigned int *used, char *kmsg)
{
	struct totals_ctx t = { .dev = dev, .totals = totals, .n = n };
	int ret = parse_one(msg, parse_totals, &t, kmsg);

	*used = t.used;
	return ret;
}
