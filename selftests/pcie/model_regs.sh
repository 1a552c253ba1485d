#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): configuration registers of several
# topologies, parameter validation, the counter numbering of inject/set,
# wrapping, gauges, PCIE_STATUS, flags, and the register behaviour
# (SNAPSHOT with BUSY, CLEAR, CLEAR FLAGS, CLEAR MARKS, READ_SEL, unknown and
# read-only registers, endpoints beyond the count) through the mmio file.
# Every check is an exact value; the profile is idle, so nothing moves.

. "$(dirname "$0")/model_lib.sh"

m_alone
EINVAL="Invalid argument"

# --- 1. default topology: the seed example ---------------------------------
tap_check "load with defaults" m_load
tap_check "platform device ndk-pcie-tlm-sim.0 exists" \
	test -e /sys/bus/platform/devices/ndk-pcie-tlm-sim.0
tap_check "debugfs dir named after the PMU" test -d "$M_DBG"
exp="magic 0x50544c4d
version 0x00020000
cfg_topology 0x00020101
cfg_layout 0x34300040
cfg_pcie 0x0e040223
cfg_dma 0x00020211
cfg_drain 0x00041000
cnt_base 0x00008000
status 0x00000000
read_sel 0x00000000
cfg_regions 0x02020404
cfg_width 0x00200020
cfg_hist 0x00000204
cfg_capacity 0x04000100
cfg_width_dma 0x00200020
pcie_status0 0x0000026a
pcie_tags0 0x01000100
pcie_stfifo0 0x04000400"
tap_eq "regs of the default topology" "$exp" "$(cat "$M_DBG/regs")"
tap_eq "formula agrees with the default topology" \
	"$(m_expect_cfg 1 1 4 4 2 2 32 32 32 32 4 48 4096 256 1024)" "$(m_actual_cfg)"
tap_eq "profile is idle by default" idle "$(cat "$M_DBG/profile")"
# busy_ns reads the last command's BUSY: none yet
tap_eq "busy_ns is 0 before any command" 0 "$(cat "$M_DBG/busy_ns")"
tap_eq "flags clear" "lost_delta=0 readout_overrun=0" "$(cat "$M_DBG/flags")"
sleep 0.3
tap_eq "idle: 52 counters, all zero, cycles included" "52 0" \
	"$(awk '{ n++; s += $2 } END { print n, s }' "$M_DBG/counters")"

# counter numbering (1 ep, 1 port, R = 4 / 2): name -> entry
map="pcie_cycles,ep=0 0
words,ep=0,bus=0 1
stall,ep=0,bus=0 2
frames,ep=0,bus=0 3
mvb_items,ep=0,bus=0 4
mvb_stall,ep=0,bus=0 5
items,ep=0,bus=0 6
region,ep=0,bus=0,idx=0 7
region,ep=0,bus=0,idx=3 10
words,ep=0,bus=1 11
stall,ep=0,bus=1 12
region,ep=0,bus=1,idx=3 20
brake,ep=0,idx=0 21
brake,ep=0,idx=5 26
tags_band,ep=0,idx=0 27
tags_band,ep=0,idx=3 30
stfifo_band,ep=0,idx=0 31
stfifo_band,ep=0,idx=3 34
dma_cycles,ep=0 35
words,ep=0,bus=2 36
mvb_items,ep=0,bus=2 39
items,ep=0,bus=2 41
region,ep=0,bus=2,idx=1 43
words,ep=0,bus=3 44
region,ep=0,bus=3,idx=0 50
region,ep=0,bus=3,idx=1 51
raw,idx=13 13"
bad=0
v=100
while read -r name entry; do
	v=$((v + 1))
	before=$(m_cnt "$entry")
	r=$(m_wr inject "$name $v")
	after=$(m_cnt "$entry")
	if [ "$r" != ok ] || [ "$after" != $((before + v)) ]; then
		bad=1
		tap_diag "inject $name $v: $r, entry $entry $before -> $after"
	fi
done <<< "$map"
tap_eq "inject reaches the contract's entry for every kind" 0 "$bad"
tap_eq "injected total is exactly the sum of deltas" \
	$(( (101 + 127) * 27 / 2 )) \
	"$(m_cnt_sum)"

tap_eq "set forces a value" ok "$(m_wr set "words,ep=0,bus=0 12345")"
tap_eq "set value read back" 12345 "$(m_cnt 1)"
tap_eq "hex values accepted" ok "$(m_wr set "raw,idx=0x33 0x10")"
tap_eq "hex value read back" 16 "$(m_cnt 51)"
tap_eq "set 2^48-1" ok "$(m_wr set "stall,ep=0,bus=1 281474976710655")"
tap_eq "inject 3 wraps at 2^48" ok "$(m_wr inject "stall,ep=0,bus=1 3")"
tap_eq "wrapped value" 2 "$(m_cnt 12)"
tap_eq "set 2^48 is rejected" "$EINVAL" "$(m_wr set "stall,ep=0,bus=1 281474976710656")"

bad=0
while read -r spec; do
	r=$(m_wr inject "$spec")
	if [ "$r" != "$EINVAL" ]; then
		bad=1
		tap_diag "inject '$spec' gave '$r'"
	fi
done <<'EOF'
words,ep=0 1
words,bus=0 1
words,ep=0,bus=0
words,ep=0,bus=0 x
words,ep=0,bus=0 -1
words,ep=0,bus=4 1
words,ep=1,bus=0 1
words,ep=0,ep=0,bus=0 1
words,ep=0,bus=0,idx=0 1
words,ep=0,bus=0,foo=1 1
words,ep=0,bus=0, 1
words,ep=0,bus 1
pcie_cycles,ep=0,bus=0 1
cycles,ep=0 1
region,ep=0,bus=0 1
region,ep=0,bus=0,idx=4 1
region,ep=0,bus=2,idx=2 1
region,ep=0,bus=3,idx=2 1
brake,ep=0,idx=6 1
tags_band,ep=0,idx=4 1
stfifo_band,ep=0,idx=4 1
raw,idx=52 1
raw,ep=0,idx=1 1
raw 1
1
EOF
tap_eq "malformed or out-of-layout counters rejected with EINVAL" 0 "$bad"
tap_eq "empty write rejected" "$EINVAL" "$(m_wr inject "")"

# gauges and link status
tap_eq "gauge write" ok "$(m_wr gauge "ep=0 tags=10 stfifo=20")"
tap_eq "gauge: now and lowest follow" "0x000a000a 0x00140014" \
	"$(m_reg pcie_tags0) $(m_reg pcie_stfifo0)"
tap_eq "gauge: raise tags only" ok "$(m_wr gauge "tags=50 ep=0")"
tap_eq "gauge: lowest stays" "0x000a0032 0x00140014" \
	"$(m_reg pcie_tags0) $(m_reg pcie_stfifo0)"
tap_eq "gauge beyond capacity rejected" "$EINVAL" "$(m_wr gauge "ep=0 tags=257")"
tap_eq "gauge on a missing endpoint rejected" "$EINVAL" "$(m_wr gauge "ep=1 tags=1")"
tap_eq "gauge without a value rejected" "$EINVAL" "$(m_wr gauge "ep=0")"
tap_eq "pcie_status write" ok "$(m_wr pcie_status "ep=0 0x1a3")"
tap_eq "pcie_status read back" 0x000001a3 "$(m_reg pcie_status0)"
tap_eq "pcie_status without 0x" ok "$(m_wr pcie_status "ep=0 26a")"
tap_eq "pcie_status read back" 0x0000026a "$(m_reg pcie_status0)"
tap_eq "pcie_status reserved bits rejected" "$EINVAL" "$(m_wr pcie_status "ep=0 0x400")"
tap_eq "pcie_status missing endpoint rejected" "$EINVAL" "$(m_wr pcie_status "ep=1 0x1")"

# flags
tap_eq "flags: set lost_delta" ok "$(m_wr flags lost_delta)"
tap_eq "flags read" "lost_delta=1 readout_overrun=0" "$(cat "$M_DBG/flags")"
tap_eq "STATUS shows LOST DELTA" 0x00000002 "$(m_reg status)"
tap_eq "flags: set readout_overrun" ok "$(m_wr flags readout_overrun)"
tap_eq "STATUS shows both" 0x00000006 "$(m_reg status)"
tap_eq "flags: unknown rejected" "$EINVAL" "$(m_wr flags lost)"

# --- 2. registers through mmio ---------------------------------------------
tap_eq "stats reset" ok "$(m_wr stats 0)"
tap_eq "stats zero" "reads 0 writes 0 snapshots 0 clears 0 irqoff_reads 0" \
	"$(m_stats)"
tap_eq "MAGIC through mmio" 0x50544c4d "$(m_rd 0x0)"
m_ww 0x0 0x1234
m_ww 0x8 0xffffffff
tap_eq "writes to RO registers are ignored" "0x50544c4d 0x00020101" \
	"$(m_rd 0x0) $(m_rd 0x8)"
# 0x7c: PCIE_STATUS of a missing endpoint; registers alias every 0x100
# (0x4000 is MAGIC); 0xfffc is the high word
# of window entry (0x7ff8 / 8) mod 64 = 63, an unused entry
tap_eq "unknown offsets read 0, aliases their register" \
	"0x00000000 0x50544c4d 0x00000000" \
	"$(m_rd 0x7c) $(m_rd 0x4000) $(m_rd 0xfffc)"
tap_eq "COMMAND reads 0" 0x00000000 "$(m_rd 0x20)"
tap_eq "endpoint 1 registers read 0" "0x00000000 0x00000000 0x00000000" \
	"$(m_rd 0x44) $(m_rd 0x84) $(m_rd 0xc4)"
tap_eq "endpoint 0 registers" "0x0000026a 0x000a0032 0x00140014" \
	"$(m_rd 0x40) $(m_rd 0x80) $(m_rd 0xc0)"
tap_eq "stats count every access" "reads 13 writes 2 snapshots 0 clears 0 irqoff_reads 0" \
	"$(m_stats)"

m_wr set "words,ep=0,bus=0 0x123456789a" >/dev/null
tap_eq "window reads the (empty) snapshot copy" "0x00000000 0x00000000" \
	"$(m_rd 0x8008) $(m_rd 0x800c)"
m_ww 0x28 1
tap_eq "READ_SEL reads back 1" 0x00000001 "$(m_rd 0x28)"
tap_eq "READ_SEL=1: live counter, low word first" "0x3456789a 0x00000012" \
	"$(m_rd 0x8008) $(m_rd 0x800c)"
m_ww 0x28 0xfffffffe
tap_eq "READ_SEL keeps bit 0 only" 0x00000000 "$(m_rd 0x28)"

# SNAPSHOT with BUSY: 4 s of modelled busy time; the reads right after the
# command take well under a second even under TCG on a loaded host. The
# copy is overwritten entry by entry over the BUSY time (torn copies):
# entry 1 within 4 s x 2 / 64 = 125 ms, which a loaded host's reads can
# pass; the last used entry (51) only after 4 s x 52 / 64 = 3.25 s.
m_wr set "raw,idx=51 0x5a5a5a5a" >/dev/null
echo 4000000000 > "$M_DBG/busy_ns"
m_ww 0x20 1
tap_eq "BUSY not yet visible on the read right after the command" \
	0x00000006 "$(m_rd 0x24)"
tap_eq "BUSY while the copy runs" 0x00000007 "$(m_rd 0x24)"
tap_eq "window still shows the previous copy while BUSY (entry 51)" 0x00000000 \
	"$(m_rd $((0x8000 + 8 * 51)))"
m_wr set "words,ep=0,bus=0 5" >/dev/null
sleep 4.1
tap_eq "BUSY falls after busy_ns" 0x00000006 "$(m_rd 0x24)"
tap_eq "the copy is what was live at the command" "0x3456789a 0x00000012" \
	"$(m_rd 0x8008) $(m_rd 0x800c)"
m_ww 0x28 1
tap_eq "live counter moved on" 0x00000005 "$(m_rd 0x8008)"
m_ww 0x28 0
echo 0 > "$M_DBG/busy_ns"
m_wr set "words,ep=0,bus=0 0xffffffffffff" >/dev/null
m_ww 0x20 1
tap_eq "busy_ns 0: no BUSY, copy at once" "0x00000006 0xffffffff 0x0000ffff" \
	"$(m_rd 0x24) $(m_rd 0x8008) $(m_rd 0x800c)"
tap_eq "entries beyond the used ones read 0" "0x00000000 0x00000000" \
	"$(m_rd $((0x8000 + 8 * 52))) $(m_rd $((0x8000 + 8 * 63 + 4)))"

# CLEAR FLAGS, CLEAR MARKS, CLEAR
m_ww 0x20 4
tap_eq "CLEAR FLAGS" "0x00000000 lost_delta=0 readout_overrun=0" \
	"$(m_rd 0x24) $(cat "$M_DBG/flags")"
m_ww 0x20 8
tap_eq "CLEAR MARKS: lowest = now" "0x00320032 0x00140014" \
	"$(m_rd 0x80) $(m_rd 0xc0)"
m_wr gauge "ep=0 tags=7" >/dev/null
m_wr gauge "ep=0 tags=9" >/dev/null
tap_eq "marks fall again" 0x00070009 "$(m_rd 0x80)"
m_ww 0x20 2
tap_eq "CLEAR zeroes every live counter" 0 \
	"$(m_cnt_sum)"
tap_eq "CLEAR resets the lowest marks" 0x00090009 "$(m_rd 0x80)"
tap_eq "CLEAR zeroes the snapshot copy" 0x00000000 "$(m_rd 0x8008)"
m_ww 0x20 0xf
tap_eq "all command bits at once" "0x00000000 0x00000000" \
	"$(m_rd 0x24) $(m_rd 0x8008)"
tap_eq "stats of the whole sequence" \
	"reads 39 writes 12 snapshots 3 clears 4 irqoff_reads 0" \
	"$(m_stats)"
tap_eq "mmio takes unaligned offsets (bits 1:0: model_unkind.sh)" ok \
	"$(m_wr mmio 0x2)"
tap_eq "mmio rejects offsets beyond the window" "$EINVAL" "$(m_wr mmio 0x10000)"

tap_done
