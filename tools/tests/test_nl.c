// SPDX-License-Identifier: GPL-2.0
/*
 * Replies of the ndk_pcie_tlm control plane built with libnl and fed to
 * the library's receive path: well-formed ones parse, and an attribute
 * shorter than its type (or a string without its NUL) from a broken or
 * hostile module is refused, never read past its end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <libhwtel/hwtel.h>
#include <linux/ndk_pcie_tlm.h>

#include "lib/internal.h"
#include "unit.h"

#define DEV "ndk_pcie_tlm_3fff00000000"

static struct nl_msg *reply(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	CHECK(msg != NULL);
	if (msg && !genlmsg_put(msg, 0, 0, 0x20, 0, 0, cmd, NDK_PCIE_TLM_FAMILY_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/* an EP_GET reply, one endpoint, with FLAGS of @flags_len bytes and MPS of
 * @mps_len bytes
 */
static struct nl_msg *ep_reply(int flags_len, int mps_len)
{
	struct nl_msg *msg = reply(NDK_PCIE_TLM_CMD_EP_GET);
	struct nlattr *eps, *ep;
	uint32_t flags = NDK_PCIE_TLM_FLAG_LOST_DELTA, mps = 256;

	if (!msg)
		return NULL;
	nla_put_string(msg, NDK_PCIE_TLM_A_DEV_NAME, DEV);
	nla_put(msg, NDK_PCIE_TLM_A_FLAGS, flags_len, &flags);
	eps = nla_nest_start(msg, NDK_PCIE_TLM_A_EPS);
	ep = nla_nest_start(msg, 0);
	nla_put_u32(msg, NDK_PCIE_TLM_EP_A_ID, 0);
	nla_put_u8(msg, NDK_PCIE_TLM_EP_A_LINK_UP, 1);
	nla_put(msg, NDK_PCIE_TLM_EP_A_MPS, mps_len, &mps);
	nla_put_u32(msg, NDK_PCIE_TLM_EP_A_TAGS_FREE, 100);
	nla_nest_end(msg, ep);
	nla_nest_end(msg, eps);
	return msg;
}

/* an EP_GET reply with FLAGS 0 and, at types 38 and 39, u8 1 */
static struct nl_msg *ep_reply_retired(void)
{
	struct nl_msg *msg = reply(NDK_PCIE_TLM_CMD_EP_GET);
	struct nlattr *eps, *ep;

	if (!msg)
		return NULL;
	nla_put_string(msg, NDK_PCIE_TLM_A_DEV_NAME, DEV);
	nla_put_u32(msg, NDK_PCIE_TLM_A_FLAGS, 0);
	nla_put_u8(msg, 38, 1);
	nla_put_u8(msg, 39, 1);
	eps = nla_nest_start(msg, NDK_PCIE_TLM_A_EPS);
	ep = nla_nest_start(msg, 0);
	nla_put_u32(msg, NDK_PCIE_TLM_EP_A_ID, 0);
	nla_nest_end(msg, ep);
	nla_nest_end(msg, eps);
	return msg;
}

static int parse_ep(struct nl_msg *msg, struct hwtel_pcie_data *d, char *kmsg)
{
	int ret;

	struct hwtel_pcie_ep *ep = &d->endpoints[0];

	/* what a reply fills, cleared (d is a reading of one endpoint) */
	memset(&d->status, 0, sizeof(d->status));
	d->state_valid = false;
	ep->link_up = ep->ext_tag = ep->tag_10b = false;
	ep->mps = ep->mrrs = ep->rcb = 0;
	ep->tags_free = ep->tags_free_min = ep->stfifo_free = ep->stfifo_free_min = 0;
	if (!msg)
		return -ENOMEM;
	ret = hwtel_nl_parse_ep_msg(msg, d, kmsg);
	nlmsg_free(msg);
	return ret;
}

TEST(nl_ep_reply_policy)
{
	struct hwtel_pcie_config c = { .pcie_endpoints = 1 };
	struct hwtel_pcie_data *d = hwtel_pcie_data_new_config("x", &c);
	char kmsg[HWTEL_NL_KMSG_LEN];

	CHECK_EQ(parse_ep(ep_reply(4, 4), d, kmsg), 0);
	CHECK(d->status.lost_deltas && !d->status.readout_overrun);
	CHECK(d->state_valid && d->endpoints[0].link_up);
	CHECK_EQ(d->endpoints[0].mps, 256);
	CHECK_EQ(d->endpoints[0].tags_free, 100);
	/*
	 * The flags come from FLAGS alone: types 38 and 39, the retired u8
	 * copies of its bits, are not read (here set beside a clear FLAGS)
	 */
	CHECK_EQ(parse_ep(ep_reply_retired(), d, kmsg), 0);
	CHECK(!d->status.lost_deltas && !d->status.readout_overrun);
	CHECK(d->state_valid);
	/* a u32 of one byte at the top level, then inside an endpoint nest */
	CHECK_EQ(parse_ep(ep_reply(1, 4), d, kmsg), -EBADMSG);
	CHECK(strstr(kmsg, "malformed reply") != NULL);
	CHECK(!d->state_valid);
	CHECK_EQ(parse_ep(ep_reply(4, 2), d, kmsg), -EBADMSG);
	CHECK(strstr(kmsg, "malformed reply") != NULL);
	hwtel_pcie_data_free(d);
}

/* a TOTALS_GET reply of 3 entries; @bad: 1 DEV_NAME without its NUL,
 * 2 TIMESTAMP_NS of 4 bytes, 3 ENTRIES_USED of 2 bytes, 4 an entry of 4 bytes
 */
static int totals(int bad, uint64_t *t, unsigned int *used, char *kmsg)
{
	struct nl_msg *msg = reply(NDK_PCIE_TLM_CMD_TOTALS_GET);
	uint64_t ts = 123456789;
	uint32_t n = 3;
	struct nlattr *nest;
	unsigned int i;
	int ret;

	if (!msg)
		return -ENOMEM;
	if (bad == 1)
		nla_put(msg, NDK_PCIE_TLM_A_DEV_NAME, (int)strlen(DEV), DEV);
	else
		nla_put_string(msg, NDK_PCIE_TLM_A_DEV_NAME, DEV);
	nla_put(msg, NDK_PCIE_TLM_A_ENTRIES_USED, bad == 3 ? 2 : 4, &n);
	nla_put_u32(msg, NDK_PCIE_TLM_A_FLAGS, 0);
	nla_put(msg, NDK_PCIE_TLM_A_TIMESTAMP_NS, bad == 2 ? 4 : 8, &ts);
	nest = nla_nest_start(msg, NDK_PCIE_TLM_A_TOTALS);
	for (i = 0; i < 3; i++) {
		uint64_t v = 1000 + i;

		nla_put(msg, (int)i, bad == 4 && i == 1 ? 4 : 8, &v);
	}
	nla_nest_end(msg, nest);
	memset(t, 0, 3 * sizeof(*t));
	ret = hwtel_nl_parse_totals_msg(msg, DEV, t, 3, used, kmsg);
	nlmsg_free(msg);
	return ret;
}

TEST(nl_totals_reply_policy)
{
	char kmsg[HWTEL_NL_KMSG_LEN];
	unsigned int used = 0;
	uint64_t t[3];
	int bad;

	CHECK_EQ(totals(0, t, &used, kmsg), 0);
	CHECK_EQ(used, 3);
	CHECK_U64(t[0], 1000);
	CHECK_U64(t[2], 1002);
	for (bad = 1; bad <= 4; bad++) {
		kmsg[0] = '\0';
		used = 0;
		if (totals(bad, t, &used, kmsg) != -EBADMSG || !strstr(kmsg, "malformed reply")) {
			printf("#   malformed TOTALS_GET reply %d: used %u, kmsg \"%s\"\n", bad,
			       used, kmsg);
			unit_failed++;
		}
	}
}
