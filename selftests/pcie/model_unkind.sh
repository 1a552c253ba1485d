#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): the traffic-side facts of "Verified
# behaviour" in the hardware contract that make the block less kind than an
# idealised one (issue 21), each with values typed from the contract:
#   - address bits 1:0 are ignored: a read at 0x0001 returns MAGIC, writes
#     alias like reads.
# Timing: instants are taken around each read (EPOCHREALTIME) or inside the
# model (mmio_seq), and the checks allow for them; waits only let time pass.

. "$(dirname "$0")/model_lib.sh"

trap m_unload EXIT
m_unload

if grep -q '^ndk_pcie_tlm ' /proc/modules; then
	tap_fail "ndk_pcie_tlm is not loaded (the model is tested alone)"
	tap_done
fi

# --- address bits 1:0 ------------------------------------------------------------
tap_check "load defaults" m_load
tap_eq "reads at 0x0001 0x0002 0x0003 return MAGIC" \
	"0x50544c4d 0x50544c4d 0x50544c4d" "$(m_rd 0x1) $(m_rd 0x2) $(m_rd 0x3)"
tap_eq "a read at 0x0107 returns VERSION (with the 0x100 alias)" \
	0x00020000 "$(m_rd 0x107)"
m_wr set "words,ep=0,bus=0 0x123456789a" >/dev/null
m_ww 0x2b 1
tap_eq "a write at 0x002B sets READ_SEL" 0x00000001 "$(m_rd 0x28)"
tap_eq "counter window: 0x800A reads the low word, 0x800F the high one" \
	"0x3456789a 0x00000012" "$(m_rd 0x800a) $(m_rd 0x800f)"
m_ww 0x29 0
m_wr stats 0 >/dev/null
m_ww 0x22 1
tap_eq "a write at 0x0022 is a COMMAND (SNAPSHOT)" \
	"reads 0 writes 1 snapshots 1 clears 0 irqoff_reads 0" "$(m_stats)"

tap_done
