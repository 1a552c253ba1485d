#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): the "Verified behaviour" section of the
# hardware contract (simulation of the block's VHDL), one group per fact:
#   - VERSION 0x00020000; registers alias every 0x100 below 0x8000, the
#     counter window every ENTRIES x 8 bytes; entries past the used ones 0;
#   - BUSY lasts 2 x ENTRIES + 1 to + 4 MI cycles (SNAPSHOT; the bounds over
#     many commands and the other commands: model_adder.sh), and a STATUS
#     read right after the COMMAND write still sees BUSY low (SNAPSHOT and
#     CLEAR);
#   - CLEAR zeroes the live counters and the snapshot copy; SNAPSHOT + CLEAR
#     in one write clears first; the lowest values read 0x7FF / 0xFFFF
#     after CLEAR and CLEAR MARKS until the next drain; gauge inputs and
#     PCIE_STATUS reach the registers at a drain;
#   - channels drain in slots: a read can fall between the deltas of one
#     drain (histogram bands vs cycles differ by up to one drain, never more);
#   - padding regions count inside multi-word frames (not with ideal=1);
#   - LOST DELTA under an overloaded accumulator (ideal=1): sticky, set again after
#     CLEAR FLAGS while the overload lasts, cycles right, bus deltas lost.
# Instants that only a slow clock makes observable (a 32.8 ms drain at
# 1 MHz) are tried a few times; the test fails if none of the tries sees it.

. "$(dirname "$0")/model_lib.sh"

m_alone

# --- version, aliasing ---------------------------------------------------------
tap_check "load defaults" m_load
m_layout 1 1 4 4 2 2
tap_eq "VERSION reads 0x00020000" 0x00020000 "$(m_rd 0x4)"
tap_eq "registers repeat every 0x100 bytes (MAGIC, VERSION, CFG_LAYOUT)" \
	"0x50544c4d 0x00020000 $(m_rd 0xc)" \
	"$(m_rd 0x100) $(m_rd 0x7f04) $(m_rd 0x120c)"
m_wr set "words,ep=0,bus=0 0x123456789a" >/dev/null
m_ww 0x28 1
tap_eq "window repeats every ENTRIES x 8 bytes ($M_ENTRIES entries)" \
	"0x3456789a 0x00000012 0x3456789a" \
	"$(m_rd $((0x8008 + 8 * M_ENTRIES))) $(m_rd $((0x800c + 8 * M_ENTRIES))) $(m_rd $((0x8008 + 24 * M_ENTRIES)))"
tap_eq "entries between used and ENTRIES read 0, aliased too" \
	"0x00000000 0x00000000" \
	"$(m_rd $((0x8000 + 8 * M_USED))) $(m_rd $((0x8000 + 8 * (M_ENTRIES + M_USED))))"
m_ww 0x28 0
m_wr stats 0 >/dev/null
m_ww 0x720 1
tap_eq "COMMAND aliases too (SNAPSHOT through 0x720)" \
	"reads 0 writes 1 snapshots 1 clears 0 irqoff_reads 0" "$(m_stats)"

# --- BUSY timing ---------------------------------------------------------------
# busy_ns reads the last command's BUSY, rounded up to whole ns
m_ww 0x20 1
b=$(cat "$M_DBG/busy_ns")
tap_check "SNAPSHOT BUSY in (2 x $M_ENTRIES + 1..4) MI cycles at 125 MHz: $b ns" \
	test "$b" -ge $(((1000 * (2 * M_ENTRIES + 1) + 124) / 125)) -a \
	"$b" -le $(((1000 * (2 * M_ENTRIES + 4) + 124) / 125))
tap_check "load mi_mhz=1 endpoints=16" m_load mi_mhz=1 endpoints=16
m_layout 16 1 4 4 2 2
m_ww 0x20 1
b=$(cat "$M_DBG/busy_ns")
tap_check "BUSY at 1 MHz for $M_ENTRIES entries in [2E+1, 2E+4] us: $b ns" \
	test "$b" -ge $((1000 * (2 * M_ENTRIES + 1))) -a \
	"$b" -le $((1000 * (2 * M_ENTRIES + 4)))
tap_check "load defaults" m_load
echo 4000000000 > "$M_DBG/busy_ns"
m_ww 0x20 1
s1=$(m_rd 0x24)
s2=$(m_rd 0x24)
tap_eq "SNAPSHOT: first STATUS read BUSY=0, the next BUSY=1" \
	"0x00000000 0x00000001" "$s1 $s2"
sleep 4.1
m_ww 0x20 2
s1=$(m_rd 0x24)
s2=$(m_rd 0x24)
tap_eq "CLEAR: first STATUS read BUSY=0, the next BUSY=1" \
	"0x00000000 0x00000001" "$s1 $s2"
sleep 4.1
m_ww 0x20 1
m_rd 0x0 >/dev/null
tap_eq "another register read in between: the STATUS poll sees BUSY" \
	0x00000001 "$(m_rd 0x24)"
echo 0 > "$M_DBG/busy_ns"

# --- CLEAR and the snapshot copy -------------------------------------------------
m_wr set "words,ep=0,bus=0 77" >/dev/null
m_ww 0x20 1
tap_eq "snapshot copy holds the counter" 0x0000004d "$(m_rd 0x8008)"
m_ww 0x20 2
tap_eq "CLEAR zeroes the snapshot copy too" 0x00000000 "$(m_rd 0x8008)"
m_wr set "words,ep=0,bus=0 78" >/dev/null
m_ww 0x20 3
m_ww 0x28 1
tap_eq "SNAPSHOT + CLEAR: clear first, the snapshot reads zeros (live 0 too)" \
	"0x00000000 0x00000000" "$(m_ww 0x28 0; m_rd 0x8008) $(m_ww 0x28 1; m_rd 0x8008)"
m_ww 0x28 0

# --- gauges: reset values, update per drain --------------------------------------
# 1 MHz, drain 32768: one drain every 32.8 ms
# After CLEAR MARKS / CLEAR the lowest-value marks read 0x7FF / 0xFFFF
# until the next drain (32.8 ms here). The command and both reads are one
# mmio_seq (in the kernel, interrupts off): a drain falls inside its few
# microseconds about once in 3000 tries, so three tries that all show the
# inputs are a model that does not hold the reset values. (Shell reads
# needed a quick host: a loaded TCG guest gave no verdict.)
try_reset_marks()
{
	local i t f

	for i in 1 2 3; do
		m_seq "w 0x20 $1; r 0x80; r 0xc0" || return 1
		t=$(seqf 1 3) f=$(seqf 2 3)
		[ "${t:2:4} ${f:2:4}" = "07ff ffff" ] && return 0
	done
	echo "3 tries, the last: $t $f, in $(seqf 2 5) ns"
	return 1
}

# tap_try DESC CMD...: ok when CMD succeeds, else fail with its output
tap_try()
{
	local desc=$1 out

	shift
	if out=$("$@"); then
		tap_ok "$desc"
	else
		tap_fail "$desc" "$out"
	fi
}
tap_check "load pcie_mhz=1 drain_period=32768" m_load pcie_mhz=1 drain_period=32768
sleep 0.1
m_wr gauge "ep=0 tags=50 stfifo=20" >/dev/null
sleep 0.1
tap_eq "gauge inputs reach the registers at a drain" \
	"0x00320032 0x00140014" "$(m_rd 0x80) $(m_rd 0xc0)"
tap_try "CLEAR MARKS: lowest 0x7FF / 0xFFFF until the next drain" try_reset_marks 8
tap_try "CLEAR: lowest 0x7FF / 0xFFFF until the next drain" try_reset_marks 2
sleep 0.1
tap_eq "after a drain the lowest values are the inputs' again" \
	"0x00320032 0x00140014" "$(m_rd 0x80) $(m_rd 0xc0)"
# A gauge write must not show before the next drain (32.8 ms here). The
# write and the read are one mmio_seq, microseconds apart: a drain falls
# between them about once in 3000 tries, so a read that shows the value
# just written three times over is a model that publishes at once. Each
# try writes a new value, so a drain between tries cannot pass a wrong
# model.
try_gauge_late()
{
	local i v

	for i in 1 2 3; do
		m_seq "g 0 $((60 + i)); r 0x80" || return 1
		v=$(seqf 1 3)
		[ "${v:6:4}" != "$(printf %04x $((60 + i)))" ] && return 0
	done
	echo "3 tries read the value just written at once: the last $v"
	return 1
}
tap_try "a gauge write shows only at the next drain" try_gauge_late
m_wr gauge "ep=0 tags=50" >/dev/null

# Right after a reset, before the first drain: the model runs the reads
# itself as it comes out of reset (seq_at_load), microseconds in, whatever
# insmod's own latency under TCG
tap_check "load pcie_mhz=1 drain_period=32768, two reads at reset" \
	m_load pcie_mhz=1 drain_period=32768 'seq_at_load="r 0x40; r 0x80"'
mapfile -t SEQ < "$M_DBG/mmio_seq"
tap_eq "after reset: PCIE_STATUS 0, tags 0 / lowest 0x7FF until the first drain" \
	"0x00000000 0x07ff0000" "$(seqf 0 3) $(seqf 1 3)"
sleep 0.1
tap_eq "after the first drain: link status and capacity" \
	"0x0000026a 0x01000100" "$(m_rd 0x40) $(m_rd 0x80)"

# --- drain slots: skew between channels of one drain ------------------------------
# Seed traffic at 1 MHz: a drain is 32.8 ms, its 35 PCIe channels land
# 936 cycles (0.94 ms) apart, so most reads fall inside a sweep.
tap_check "load seed pcie_mhz=1 drain_period=32768 drain_slot=936" \
	m_load profile=seed pcie_mhz=1 drain_period=32768 drain_slot=936
sleep 0.1
skew=0 bad=0 n=0
for i in $(seq 1 30); do
	mapfile -t cnt < "$M_DBG/counters"
	C=${cnt[0]#* }
	s=0
	for e in 27 28 29 30; do s=$((s + ${cnt[$e]#* })); done
	[ "$s" -ne "$C" ] && skew=$((skew + 1))
	d=$((C - s))
	[ "$d" -lt 0 ] && d=$((-d))
	[ "$d" -gt 32768 ] && bad=$((bad + 1))
	n=$((n + 1))
	sleep 0.01
done
tap_diag "$skew of $n reads fell inside a drain sweep"
tap_check "some reads see the bands of a drain before/after the cycles" test "$skew" -gt 0
tap_eq "the band sum never differs from the cycles by more than one drain" 0 "$bad"
tap_check "load ideal=1 with the same clocks" \
	m_load profile=seed pcie_mhz=1 drain_period=32768 ideal=1
sleep 0.1
skew=0
for i in $(seq 1 10); do
	mapfile -t cnt < "$M_DBG/counters"
	s=0
	for e in 27 28 29 30; do s=$((s + ${cnt[$e]#* })); done
	[ "$s" -ne "${cnt[0]#* }" ] && skew=$((skew + 1))
	sleep 0.01
done
tap_eq "ideal=1: every channel lands at once" 0 "$skew"

# --- padding regions ------------------------------------------------------------
# RQ has 2 real regions in a 4-region probe (RC has 4): regions 2 and 3 of RQ
# are padding; seed frames are longer than a word
pad_check()
{
	mapfile -t cnt < "$M_DBG/counters"
	w=${cnt[1]#* } f=${cnt[3]#* } it=${cnt[6]#* }
	p2=${cnt[9]#* } p3=${cnt[10]#* }
}
tap_check "load seed regions_rq=2" m_load profile=seed regions_rq=2
sleep 0.5
echo idle > "$M_DBG/profile"
pad_check
tap_diag "RQ words $w frames $f items $it padding $p2 $p3"
tap_check "padding regions count (multi-word frames)" test "$p2" -gt 0 -a "$p2" -eq "$p3"
tap_check "padding counts stay within the words" test "$p2" -le "$w"
tap_check "items may exceed words x 8 items x 2 real regions" \
	test "$it" -gt $((w * 8 * 2)) -a "$it" -le $((w * 8 * 4))
tap_check "load seed regions_rq=2 ideal=1" m_load profile=seed regions_rq=2 ideal=1
sleep 0.5
echo idle > "$M_DBG/profile"
pad_check
tap_eq "ideal=1: padding regions stay 0" "0 0" "$p2 $p3"

# --- LOST DELTA -----------------------------------------------------------------
# ideal=1: every bus delta is lost and CLEAR FLAGS acts at once (the faithful
# random subset and the late CLEAR FLAGS are tested in model_unkind.sh)
tap_check "load seed ideal=1" m_load profile=seed ideal=1
sleep 0.1
tap_eq "no flag without overload" 0x00000000 "$(m_rd 0x24)"
echo 1 > "$M_DBG/overload"
sleep 0.05
tap_eq "overload sets LOST DELTA" 0x00000002 "$(m_rd 0x24)"
a=$(m_cnt 0) w=$(m_cnt 1)
sleep 0.1
tap_check "cycles still count under overload" test "$(m_cnt 0)" -gt "$a"
tap_eq "bus deltas are lost under overload" "$w" "$(m_cnt 1)"
m_ww 0x20 4
sleep 0.05
tap_eq "CLEAR FLAGS while the overload lasts: set again" 0x00000002 "$(m_rd 0x24)"
echo 0 > "$M_DBG/overload"
m_ww 0x20 4
sleep 0.05
tap_eq "overload over: CLEAR FLAGS sticks" 0x00000000 "$(m_rd 0x24)"
tap_check "bus counters move again" test "$(m_cnt 1)" -gt "$w"

tap_done
