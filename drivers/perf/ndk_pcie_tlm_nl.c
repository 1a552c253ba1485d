// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink control plane of the NDK PCIE_TELEMETRY_MI PMU: what perf
 * events cannot carry (layout, per-endpoint PCIe state and gauges, all
 * totals from one snapshot, clear, STATUS flag notifications).
 * The protocol is described in Documentation/netlink/specs/ndk_pcie_tlm.yaml.
 */

#include <linux/capability.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <uapi/linux/ndk_pcie_tlm.h>

#include "ndk_pcie_tlm.h"
#include "ndk_pcie_tlm_nl_policy.h"

/*
 * Instances visible to the control plane; handlers run under the mutex.
 * Each gets the next id as it joins at the tail, so the list is in id
 * order and a dump resumes after the last id it sent: an instance that
 * leaves between two rounds moves no other one, and one that joins is
 * never taken for an older one.
 */
static LIST_HEAD(ndk_tlm_list);
static DEFINE_MUTEX(ndk_tlm_list_lock);
static u64 ndk_tlm_last_id;

static struct genl_family ndk_tlm_family;

enum { NDK_TLM_MCGRP_FLAGS_IDX };

void ndk_tlm_nl_add(struct ndk_tlm *tlm)
{
	mutex_lock(&ndk_tlm_list_lock);
	tlm->nl_id = ++ndk_tlm_last_id;
	list_add_tail(&tlm->list, &ndk_tlm_list);
	mutex_unlock(&ndk_tlm_list_lock);
}

void ndk_tlm_nl_del(struct ndk_tlm *tlm)
{
	mutex_lock(&ndk_tlm_list_lock);
	list_del_init(&tlm->list);
	mutex_unlock(&ndk_tlm_list_lock);
}

/* why a whole-window read (ndk_tlm_totals(), a clear) failed */
static void ndk_tlm_fold_err(struct netlink_ext_ack *extack, int ret)
{
	if (ret == -ENODEV)
		NL_SET_ERR_MSG_MOD(extack, "the device does not answer");
	else
		NL_SET_ERR_MSG_MOD(extack, "hardware SNAPSHOT did not complete");
}

bool ndk_tlm_nl_listening(void)
{
	return genl_has_listeners(&ndk_tlm_family, &init_net,
				  NDK_TLM_MCGRP_FLAGS_IDX);
}

void ndk_tlm_nl_notify(struct ndk_tlm *tlm, u32 flags, u32 new_flags)
{
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &ndk_tlm_family, 0,
			  NDK_PCIE_TLM_CMD_FLAGS_NTF);
	if (!hdr)
		goto err;
	if (nla_put_string(skb, NDK_PCIE_TLM_A_DEV_NAME, tlm->name) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_FLAGS, flags) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_NEW_FLAGS, new_flags))
		goto err;
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&ndk_tlm_family, skb, 0, NDK_TLM_MCGRP_FLAGS_IDX,
			  GFP_ATOMIC);
	return;
err:
	nlmsg_free(skb);
}

static struct ndk_tlm *ndk_tlm_find(struct genl_info *info)
{
	struct nlattr *na = info->attrs[NDK_PCIE_TLM_A_DEV_NAME];
	struct ndk_tlm *tlm;

	lockdep_assert_held(&ndk_tlm_list_lock);
	if (!na) {
		NL_SET_ERR_MSG_MOD(info->extack, "dev-name (PMU name) is required");
		return ERR_PTR(-EINVAL);
	}
	list_for_each_entry(tlm, &ndk_tlm_list, list) {
		if (!nla_strcmp(na, tlm->name))
			return tlm;
	}
	NL_SET_ERR_MSG_ATTR(info->extack, na, "no such PMU instance");
	return ERR_PTR(-ENODEV);
}

/*
 * Every command needs what perf demands for this PMU's events: CAP_PERFMON
 * or CAP_SYS_ADMIN (perf_event_paranoid does not open a system-wide
 * uncore PMU to unprivileged users either). Checked against the opener of
 * the socket and the sender.
 */
static bool ndk_tlm_nl_allowed(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_PERFMON) ||
	       netlink_capable(skb, CAP_SYS_ADMIN);
}

/* ---- DEV_GET ---- */

static int ndk_tlm_fill_dev(struct sk_buff *skb, struct ndk_tlm *tlm)
{
	const struct ndk_tlm_layout *l = &tlm->lay;
	static const struct {
		u16 attr;
		u16 off;
	} lay_attrs[] = {
#define L(a, f) { NDK_PCIE_TLM_A_##a, offsetof(struct ndk_tlm_layout, f) }
		L(VERSION_MAJOR, version_major),
		L(VERSION_MINOR, version_minor),
		L(ENDPOINTS, endpoints),
		L(DMA_PORTS, dma_ports),
		L(PROBES, probes),
		L(ENTRIES, entries),
		L(CNT_WIDTH, cnt_width),
		L(COUNTERS_PER_EP, counters_per_ep),
		L(PCIE_CHANNELS, pcie_channels),
		L(PCIE_BUSES, pcie_buses),
		L(PCIE_REGIONS, pcie_regions),
		L(BRAKE_CHANNELS, brake_channels),
		L(DMA_CHANNELS, dma_channels),
		L(DMA_BUSES, dma_buses),
		L(DMA_REGIONS, dma_regions),
		L(REGIONS_RQ, regions_rq),
		L(REGIONS_RC, regions_rc),
		L(REGIONS_UP, regions_up),
		L(REGIONS_DOWN, regions_down),
		L(BYTES_RQ, bytes_rq),
		L(BYTES_RC, bytes_rc),
		L(BYTES_UP, bytes_up),
		L(BYTES_DOWN, bytes_down),
		L(ITEM_BYTES, item_bytes),
		L(HIST_BANDS, hist_bands),
		L(HIST_PCIE, hist_pcie),
		L(HIST_DMA, hist_dma),
		L(TAG_CAPACITY, tag_capacity),
		L(STFIFO_CAPACITY, stfifo_capacity),
		L(DRAIN_PERIOD, drain_period),
		L(ENTRIES_USED, entries_used),
#undef L
	};
	unsigned int i;

	if (nla_put_string(skb, NDK_PCIE_TLM_A_DEV_NAME, tlm->name) ||
	    nla_put_u64_64bit(skb, NDK_PCIE_TLM_A_BASE, tlm->base_addr,
			      NDK_PCIE_TLM_A_PAD) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_PMU_TYPE, tlm->pmu.type) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_CPU, READ_ONCE(tlm->cpu)) ||
	    nla_put_u64_64bit(skb, NDK_PCIE_TLM_A_POLL_NS, tlm->poll_ns,
			      NDK_PCIE_TLM_A_PAD))
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(lay_attrs); i++) {
		const u32 *v = (const void *)l + lay_attrs[i].off;

		if (nla_put_u32(skb, lay_attrs[i].attr, *v))
			return -EMSGSIZE;
	}
	if (tlm->win.pci[0] &&
	    (nla_put_string(skb, NDK_PCIE_TLM_A_PCI_ADDR, tlm->win.pci) ||
	     nla_put_u32(skb, NDK_PCIE_TLM_A_BAR, tlm->win.bar) ||
	     nla_put_u64_64bit(skb, NDK_PCIE_TLM_A_WIN_OFFSET, tlm->win.offset,
			       NDK_PCIE_TLM_A_PAD) ||
	     nla_put_u64_64bit(skb, NDK_PCIE_TLM_A_WIN_SIZE, tlm->win.size,
			       NDK_PCIE_TLM_A_PAD)))
		return -EMSGSIZE;
	return nla_put_u32(skb, NDK_PCIE_TLM_A_FLAGS, ndk_tlm_read_flags(tlm));
}

/* ---- EP_GET ---- */

static int ndk_tlm_fill_ep(struct sk_buff *skb, struct ndk_tlm *tlm, u32 ep)
{
	struct ndk_tlm_ep_state st;
	struct nlattr *nest;

	ndk_tlm_read_ep(tlm, ep, &st);
	nest = nla_nest_start(skb, ep);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NDK_PCIE_TLM_EP_A_ID, ep) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_STATUS_RAW, st.status) ||
	    nla_put_u8(skb, NDK_PCIE_TLM_EP_A_LINK_UP, !!(st.status & BIT(9))) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_MPS, 128U << (st.status & 7)) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_MRRS,
			128U << ((st.status >> 3) & 7)) ||
	    nla_put_u8(skb, NDK_PCIE_TLM_EP_A_EXT_TAG, !!(st.status & BIT(6))) ||
	    nla_put_u8(skb, NDK_PCIE_TLM_EP_A_TAG10, !!(st.status & BIT(7))) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_RCB,
			(st.status & BIT(8)) ? 128 : 64) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_TAGS_FREE, st.tags & 0xffff) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_TAGS_LOWEST, st.tags >> 16) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_STFIFO_FREE, st.stfifo & 0xffff) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_EP_A_STFIFO_LOWEST, st.stfifo >> 16)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* @ep < 0: every endpoint */
static int ndk_tlm_fill_eps(struct sk_buff *skb, struct ndk_tlm *tlm, int ep)
{
	struct nlattr *nest;
	u32 i;

	if (nla_put_string(skb, NDK_PCIE_TLM_A_DEV_NAME, tlm->name) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_FLAGS, ndk_tlm_read_flags(tlm)))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, NDK_PCIE_TLM_A_EPS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < tlm->lay.endpoints; i++) {
		if (ep >= 0 && i != ep)
			continue;
		if (ndk_tlm_fill_ep(skb, tlm, i)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* ---- TOTALS_GET ---- */

static size_t ndk_tlm_totals_size(struct ndk_tlm *tlm)
{
	return nla_total_size(NDK_PCIE_TLM_DEV_NAME_MAX) +
	       4 * nla_total_size(sizeof(u32)) +
	       nla_total_size_64bit(sizeof(u64)) + nla_total_size(0) +
	       tlm->lay.entries_used * nla_total_size_64bit(sizeof(u64));
}

/*
 * One message of totals: the header attributes and entries @*next.. of
 * @vals, as many as fit. Returns 0 with *next advanced (at least one entry
 * put, or the message ends the array), -EMSGSIZE when not even the header
 * and one entry fit.
 */
static int ndk_tlm_put_totals(struct sk_buff *skb, struct ndk_tlm *tlm,
			      const u64 *vals, u64 ts, u32 fl, u32 *next)
{
	struct nlattr *nest;
	u32 i = *next;

	if (nla_put_string(skb, NDK_PCIE_TLM_A_DEV_NAME, tlm->name) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_FLAGS, fl) ||
	    nla_put_u64_64bit(skb, NDK_PCIE_TLM_A_TIMESTAMP_NS, ts,
			      NDK_PCIE_TLM_A_PAD) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_ENTRIES_USED,
			tlm->lay.entries_used) ||
	    nla_put_u32(skb, NDK_PCIE_TLM_A_CNT_WIDTH, tlm->lay.cnt_width))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, NDK_PCIE_TLM_A_TOTALS);
	if (!nest)
		return -EMSGSIZE;
	for (; i < tlm->lay.entries_used; i++)
		if (nla_put_u64_64bit(skb, i, vals[i], NDK_PCIE_TLM_TOTALS_PAD))
			break;
	if (i == *next && i < tlm->lay.entries_used) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	*next = i;
	return 0;
}

static int ndk_tlm_fill_totals(struct sk_buff *skb, struct ndk_tlm *tlm,
			       struct netlink_ext_ack *extack)
{
	u32 next = 0;
	u64 *vals, ts;
	int ret;

	vals = kcalloc(tlm->lay.entries_used, sizeof(*vals), GFP_KERNEL);
	if (!vals)
		return -ENOMEM;
	ret = ndk_tlm_totals(tlm, vals, &ts);
	if (ret) {
		ndk_tlm_fold_err(extack, ret);
		goto out;
	}
	/* sized for all entries: one message */
	ret = ndk_tlm_put_totals(skb, tlm, vals, ts, ndk_tlm_read_flags(tlm),
				 &next);
	if (!ret && next < tlm->lay.entries_used)
		ret = -EMSGSIZE;
out:
	kfree(vals);
	return ret;
}

/* ---- common do / dump plumbing ---- */

static int ndk_tlm_fill(struct sk_buff *skb, struct ndk_tlm *tlm, u8 cmd,
			int ep, struct netlink_ext_ack *extack)
{
	switch (cmd) {
	case NDK_PCIE_TLM_CMD_DEV_GET:
		return ndk_tlm_fill_dev(skb, tlm);
	case NDK_PCIE_TLM_CMD_EP_GET:
		return ndk_tlm_fill_eps(skb, tlm, ep);
	default:
		return ndk_tlm_fill_totals(skb, tlm, extack);
	}
}

static size_t ndk_tlm_msg_size(struct ndk_tlm *tlm, u8 cmd)
{
	if (cmd == NDK_PCIE_TLM_CMD_TOTALS_GET)
		return ndk_tlm_totals_size(tlm);
	return NLMSG_GOODSIZE;
}

static int ndk_tlm_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	struct ndk_tlm *tlm;
	struct sk_buff *msg;
	int ep = -1, ret;
	void *hdr;

	if (!ndk_tlm_nl_allowed(skb))
		return -EPERM;
	mutex_lock(&ndk_tlm_list_lock);
	tlm = ndk_tlm_find(info);
	if (IS_ERR(tlm)) {
		ret = PTR_ERR(tlm);
		goto unlock;
	}
	/* only ep-get's policy takes ep */
	if (info->attrs[NDK_PCIE_TLM_A_EP]) {
		u32 v = nla_get_u32(info->attrs[NDK_PCIE_TLM_A_EP]);

		if (v >= tlm->lay.endpoints) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[NDK_PCIE_TLM_A_EP],
					    "endpoint out of range");
			ret = -EINVAL;
			goto unlock;
		}
		ep = v;
	}

	msg = genlmsg_new(ndk_tlm_msg_size(tlm, cmd), GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto unlock;
	}
	hdr = genlmsg_put_reply(msg, info, &ndk_tlm_family, 0, cmd);
	if (!hdr) {
		nlmsg_free(msg);
		ret = -EMSGSIZE;
		goto unlock;
	}
	ret = ndk_tlm_fill(msg, tlm, cmd, ep, info->extack);
	if (ret) {
		nlmsg_free(msg);
		goto unlock;
	}
	genlmsg_end(msg, hdr);
	mutex_unlock(&ndk_tlm_list_lock);
	return genlmsg_reply(msg, info);

unlock:
	mutex_unlock(&ndk_tlm_list_lock);
	return ret;
}

/*
 * Dump state of TOTALS_GET, in cb->ctx: the id of the last instance sent
 * whole, the instance whose one SNAPSHOT is held (taken at its first
 * message) and the next entry of it to send.
 */
struct ndk_tlm_dump {
	u64 done_id;
	u64 id;
	u32 next, used, flags;
	u64 ts;
	u64 *vals;
};

static_assert(sizeof(struct ndk_tlm_dump) <=
	      sizeof_field(struct netlink_callback, ctx));

static int ndk_tlm_totals_dump_done(struct netlink_callback *cb)
{
	struct ndk_tlm_dump *st = (void *)cb->ctx;

	kfree(st->vals);
	st->vals = NULL;
	return 0;
}

/*
 * A totals dump may split one instance's TOTALS over several messages (a
 * small receive buffer, a large layout): each carries the header attributes
 * and a run of entries, all from the one SNAPSHOT of the instance.
 */
static int ndk_tlm_totals_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ndk_tlm_dump *st = (void *)cb->ctx;
	struct ndk_tlm *tlm;
	int ret = 0;
	void *hdr;

	mutex_lock(&ndk_tlm_list_lock);
	list_for_each_entry(tlm, &ndk_tlm_list, list) {
		if (tlm->nl_id <= st->done_id)
			continue;
		if (st->vals && st->id != tlm->nl_id) {
			/* the held instance left between two rounds */
			kfree(st->vals);
			st->vals = NULL;
		}
		if (!st->vals) {
			st->id = tlm->nl_id;
			st->used = tlm->lay.entries_used;
			st->vals = kcalloc(st->used, sizeof(u64), GFP_KERNEL);
			if (!st->vals) {
				ret = -ENOMEM;
				break;
			}
			ret = ndk_tlm_totals(tlm, st->vals, &st->ts);
			if (ret) {
				ndk_tlm_fold_err(cb->extack, ret);
				break;
			}
			st->flags = ndk_tlm_read_flags(tlm);
			st->next = 0;
		}
		while (st->next < st->used || !st->used) {
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, &ndk_tlm_family,
					  NLM_F_MULTI, NDK_PCIE_TLM_CMD_TOTALS_GET);
			if (!hdr) {
				ret = -EMSGSIZE;
				break;
			}
			ret = ndk_tlm_put_totals(skb, tlm, st->vals, st->ts,
						 st->flags, &st->next);
			if (ret) {
				genlmsg_cancel(skb, hdr);
				break;
			}
			genlmsg_end(skb, hdr);
			if (!st->used)
				break;
		}
		if (ret)
			break;
		kfree(st->vals);
		st->vals = NULL;
		st->done_id = tlm->nl_id;
	}
	mutex_unlock(&ndk_tlm_list_lock);

	/* a full message goes out now, the rest in the next round */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}

/* refused at the start, so the requester gets the errno as the ack */
static int ndk_tlm_dump_start(struct netlink_callback *cb)
{
	if (!ndk_tlm_nl_allowed(cb->skb))
		return -EPERM;
	/*
	 * A dump is checked against its command's one policy, the do
	 * request's: refuse what it would ignore (a dev-name that does not
	 * narrow it).
	 */
	if (nlmsg_attrlen(cb->nlh, GENL_HDRLEN)) {
		NL_SET_ERR_MSG_MOD(cb->extack, "dumps take no attribute");
		return -EINVAL;
	}
	return 0;
}

static int ndk_tlm_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u8 cmd = ((struct genlmsghdr *)nlmsg_data(cb->nlh))->cmd;
	u64 *done_id = (u64 *)cb->ctx;	/* the last instance sent */
	struct ndk_tlm *tlm;
	int ret = 0;
	void *hdr;

	if (cmd == NDK_PCIE_TLM_CMD_TOTALS_GET)
		return ndk_tlm_totals_dumpit(skb, cb);

	mutex_lock(&ndk_tlm_list_lock);
	list_for_each_entry(tlm, &ndk_tlm_list, list) {
		if (tlm->nl_id <= *done_id)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &ndk_tlm_family,
				  NLM_F_MULTI, cmd);
		if (!hdr) {
			ret = -EMSGSIZE;
			break;
		}
		ret = ndk_tlm_fill(skb, tlm, cmd, -1, cb->extack);
		if (ret) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		*done_id = tlm->nl_id;
	}
	mutex_unlock(&ndk_tlm_list_lock);

	/* a partial message goes out now, the rest in the next round */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}

/* ---- CLEAR ---- */

static int ndk_tlm_clear_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *na = info->attrs[NDK_PCIE_TLM_A_CLEAR];
	struct ndk_tlm *tlm;
	u32 what;
	int ret;

	if (!ndk_tlm_nl_allowed(skb))
		return -EPERM;
	if (!na) {
		NL_SET_ERR_MSG_MOD(info->extack, "clear (what to clear) is required");
		return -EINVAL;
	}
	/* the policy refused unknown bits */
	what = nla_get_u32(na);
	if (!what) {
		NL_SET_ERR_MSG_ATTR(info->extack, na,
				    "clear must be a non-empty set of counters, flags, marks");
		return -EINVAL;
	}

	mutex_lock(&ndk_tlm_list_lock);
	tlm = ndk_tlm_find(info);
	if (IS_ERR(tlm)) {
		ret = PTR_ERR(tlm);
	} else {
		ret = ndk_tlm_clear(tlm, what);
		if (ret)
			ndk_tlm_fold_err(info->extack, ret);
	}
	mutex_unlock(&ndk_tlm_list_lock);
	return ret;
}

/* ---- ATTACH / DETACH ---- */

/* mapping MMIO of a device is an administrator's act */
static bool ndk_tlm_nl_admin(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_SYS_ADMIN);
}

static int ndk_tlm_attach_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const u16 need[] = {
		NDK_PCIE_TLM_A_PCI_ADDR, NDK_PCIE_TLM_A_BAR,
		NDK_PCIE_TLM_A_WIN_OFFSET, NDK_PCIE_TLM_A_WIN_SIZE,
	};
	char name[NDK_PCIE_TLM_DEV_NAME_MAX];
	struct sk_buff *msg;
	unsigned int i;
	void *hdr;
	int ret;

	if (!ndk_tlm_nl_admin(skb))
		return -EPERM;
	for (i = 0; i < ARRAY_SIZE(need); i++) {
		if (!info->attrs[need[i]]) {
			NL_SET_ERR_MSG_MOD(info->extack,
					   "attach needs pci-addr, bar, win-offset and win-size");
			return -EINVAL;
		}
	}
	ret = ndk_tlm_pci_attach(nla_data(info->attrs[NDK_PCIE_TLM_A_PCI_ADDR]),
				 nla_get_u32(info->attrs[NDK_PCIE_TLM_A_BAR]),
				 nla_get_u64(info->attrs[NDK_PCIE_TLM_A_WIN_OFFSET]),
				 nla_get_u64(info->attrs[NDK_PCIE_TLM_A_WIN_SIZE]),
				 name, sizeof(name), info->extack);
	if (ret)
		return ret;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ndk_tlm_family, 0,
				NDK_PCIE_TLM_CMD_ATTACH);
	if (!hdr || nla_put_string(msg, NDK_PCIE_TLM_A_DEV_NAME, name)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int ndk_tlm_detach_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *na = info->attrs[NDK_PCIE_TLM_A_DEV_NAME];

	if (!ndk_tlm_nl_admin(skb))
		return -EPERM;
	if (!na) {
		NL_SET_ERR_MSG_MOD(info->extack, "dev-name (PMU name) is required");
		return -EINVAL;
	}
	return ndk_tlm_pci_detach(nla_data(na), info->extack);
}

static const struct genl_ops ndk_tlm_ops[] = {
	{
		.cmd = NDK_PCIE_TLM_CMD_DEV_GET,
		.policy = ndk_tlm_dev_get_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_get_doit,
		.start = ndk_tlm_dump_start,
		.dumpit = ndk_tlm_get_dumpit,
	},
	{
		.cmd = NDK_PCIE_TLM_CMD_EP_GET,
		.policy = ndk_tlm_ep_get_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_get_doit,
		.start = ndk_tlm_dump_start,
		.dumpit = ndk_tlm_get_dumpit,
	},
	{
		.cmd = NDK_PCIE_TLM_CMD_TOTALS_GET,
		.policy = ndk_tlm_totals_get_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_get_doit,
		.start = ndk_tlm_dump_start,
		.dumpit = ndk_tlm_get_dumpit,
		.done = ndk_tlm_totals_dump_done,
	},
	{
		.cmd = NDK_PCIE_TLM_CMD_CLEAR,
		.policy = ndk_tlm_clear_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_clear_doit,
	},
	{
		.cmd = NDK_PCIE_TLM_CMD_ATTACH,
		.policy = ndk_tlm_attach_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_attach_doit,
	},
	{
		.cmd = NDK_PCIE_TLM_CMD_DETACH,
		.policy = ndk_tlm_detach_policy,
		.maxattr = NDK_PCIE_TLM_A_MAX,
		.doit = ndk_tlm_detach_doit,
	},
};

static const struct genl_multicast_group ndk_tlm_mcgrps[] = {
	[NDK_TLM_MCGRP_FLAGS_IDX] = { .name = NDK_PCIE_TLM_MCGRP_FLAGS },
};

static struct genl_family ndk_tlm_family __ro_after_init = {
	.name = NDK_PCIE_TLM_FAMILY_NAME,
	.version = NDK_PCIE_TLM_FAMILY_VERSION,
	.maxattr = NDK_PCIE_TLM_A_MAX,
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = ndk_tlm_ops,
	.n_ops = ARRAY_SIZE(ndk_tlm_ops),
	.resv_start_op = NDK_PCIE_TLM_CMD_DEV_GET,
	.mcgrps = ndk_tlm_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ndk_tlm_mcgrps),
};

int ndk_tlm_nl_init(void)
{
	return genl_register_family(&ndk_tlm_family);
}

void ndk_tlm_nl_exit(void)
{
	genl_unregister_family(&ndk_tlm_family);
}
