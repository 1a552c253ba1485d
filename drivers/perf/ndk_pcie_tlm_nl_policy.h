/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Request policies of the ndk_pcie_tlm generic netlink family, one per
 * command: the attributes its request takes, nothing else. Written by
 * scripts/nl-policy-gen from Documentation/netlink/specs/ndk_pcie_tlm.yaml;
 * do not edit, change the spec and run "make nl-policy" (make check fails
 * when this file and the spec differ).
 */
#ifndef _NDK_PCIE_TLM_NL_POLICY_H
#define _NDK_PCIE_TLM_NL_POLICY_H

static const struct nla_policy ndk_tlm_dev_get_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
};

static const struct nla_policy ndk_tlm_ep_get_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[NDK_PCIE_TLM_A_EP] = { .type = NLA_U32 },
};

static const struct nla_policy ndk_tlm_totals_get_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
};

static const struct nla_policy ndk_tlm_clear_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[NDK_PCIE_TLM_A_CLEAR] = NLA_POLICY_MASK(NLA_U32, 0x7),
};

static const struct nla_policy ndk_tlm_attach_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_PCI_ADDR] = { .type = NLA_NUL_STRING, .len = 31 },
	[NDK_PCIE_TLM_A_BAR] = { .type = NLA_U32 },
	[NDK_PCIE_TLM_A_WIN_OFFSET] = { .type = NLA_U64 },
	[NDK_PCIE_TLM_A_WIN_SIZE] = { .type = NLA_U64 },
};

static const struct nla_policy ndk_tlm_detach_policy[NDK_PCIE_TLM_A_MAX + 1] = {
	[NDK_PCIE_TLM_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
};

#endif
