#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): the traffic-side facts of "Verified
# behaviour" in the hardware contract that make the block less kind than an
# idealised one (issue 21), each with values typed from the contract:
#   - address bits 1:0 are ignored: a read at 0x0001 returns MAGIC, writes
#     alias like reads;
#   - CLEAR FLAGS takes effect about 12 MI cycles after the write: at 25 kHz
#     a STATUS read right after it still shows LOST DELTA, one 480 us later
#     does not, unless the overload continues;
#   - under overload the bus counters lose a random subset of their deltas:
#     with saturating traffic some interval has a region counter moving more
#     than the words of its bus while the words still move; the cycle
#     counters stay exact (elapsed time x clock, within one drain);
#   - padding regions count in every word in which a frame is still open
#     after the last real region: on a 2-of-4 bus, back-to-back 64 B frames
#     starting in region 1 double the region counters and the items;
#     word-aligned one-word frames leave padding at 0;
#   - delta windows are staggered: after a rate change two channels of the
#     same rate differ by a part of a drain, not by whole drains.
# Timing: instants are taken around each read (EPOCHREALTIME) or inside the
# model (mmio_seq), and the checks allow for them; waits only let time pass.

. "$(dirname "$0")/model_lib.sh"

m_alone

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

# --- CLEAR FLAGS late -------------------------------------------------------------
# 12 MI cycles at 25 kHz: 480 us. The MI clock is that slow because under
# TCG one register access of the model takes 2-20 us, 20-60 us on the debug
# kernel, more on a loaded host: at 1 MHz the write and the read after it
# alone took 10.6 of the window's 12 us on an idle host. A try counts when
# the first STATUS read ended within 480 us of the start of the COMMAND
# write (a host that stalls the guest longer gives no verdict for that try).
# The first read brings the model up to date, so that the write does no
# catching up.
LATE_NS=$((12 * 1000000 / 25))
late_try()
{
	local i w0 r1 quick=0

	for i in $(seq 1 10); do
		echo lost_delta > "$M_DBG/flags"
		m_seq "r 0x24; w 0x20 4; r 0x24; wait $LATE_NS; r 0x24" || return 1
		w0=$(seqf 1 4) r1=$(seqf 2 5)
		[ $((r1 - w0)) -lt $LATE_NS ] || continue
		quick=$((quick + 1))
		LATE="$(seqf 2 3) $(seqf 4 3)"
		[ "$LATE" = "0x00000002 0x00000000" ] || return 1
		[ $quick -ge 3 ] && return 0
	done
	LATE="only $quick tries read within $LATE_NS ns: ${SEQ[*]}"
	return 2
}
tap_check "load mi_khz=25" m_load mi_khz=25
late_try
case $? in
0) tap_ok "CLEAR FLAGS: LOST DELTA still set right after, clear 480 us later" ;;
2) tap_skip "CLEAR FLAGS takes effect late" "$LATE" ;;
*) tap_fail "CLEAR FLAGS: LOST DELTA still set right after, clear 480 us later" \
	"STATUS right after and 480 us later: $LATE (want 0x00000002 0x00000000)" ;;
esac
tap_check "load profile=seed mi_mhz=1" m_load profile=seed mi_mhz=1
echo 1 > "$M_DBG/overload"
# a drain at 400 MHz is 10.24 us: 50 us after the clear it is set again
m_seq "w 0x20 4; wait 62000; r 0x24"
tap_eq "CLEAR FLAGS while the overload continues: LOST DELTA again 62 us later" \
	0x00000002 "$(seqf 2 3)"
echo 0 > "$M_DBG/overload"

# --- partial overload ---------------------------------------------------------------
# busy: RQ words 95 % of the cycles, every region carries data in every word.
# At 1 MHz and a 64-cycle drain, 10 ms is about 156 drains. Each read of the
# counters is bracketed by two instants; the cycles between two reads lie
# within [f x (a2 - b1) - D, f x (b2 - a1) + D].
tap_check "load profile=busy pcie_mhz=1 dma_mhz=1 drain_period=64" \
	m_load profile=busy pcie_mhz=1 dma_mhz=1 drain_period=64
m_layout 1 1 4 4 2 2
D=64
echo 1 > "$M_DBG/overload"
snap()
{
	local t0 c

	t0=${EPOCHREALTIME/./}
	mapfile -t c < "$M_DBG/counters"
	S_B=${EPOCHREALTIME/./}
	S_A=$t0
	S_C=${c[0]#* } S_DC=${c[$M_PCH]#* } S_W=${c[1]#* }
	S_R=("${c[7]#* }" "${c[8]#* }" "${c[9]#* }" "${c[10]#* }")
	S_UW=${c[$((M_PCH + 1))]#* }
	S_UR=("${c[$((M_PCH + 7))]#* }" "${c[$((M_PCH + 8))]#* }")
}
snap
above=0 moving=0 cyc_bad=0 n=0
for i in $(seq 1 20); do
	a1=$S_A b1=$S_B c1=$S_C dc1=$S_DC w1=$S_W r1=("${S_R[@]}")
	uw1=$S_UW ur1=("${S_UR[@]}")
	sleep 0.01
	snap
	n=$((n + 1))
	dw=$((S_W - w1)) duw=$((S_UW - uw1))
	[ $dw -gt 0 ] && [ $duw -gt 0 ] && moving=$((moving + 1))
	for r in 0 1 2 3; do
		if [ $((S_R[r] - r1[r])) -gt $dw ] && [ $dw -gt 0 ]; then
			[ $above = 0 ] && tap_diag "interval $i: RQ region $r +$((S_R[r] - r1[r])), words +$dw"
			above=$((above + 1))
		fi
	done
	for r in 0 1; do
		[ $((S_UR[r] - ur1[r])) -gt $duw ] && [ $duw -gt 0 ] &&
			above=$((above + 1))
	done
	lo=$((S_A - b1 - D)) hi=$((S_B - a1 + D))
	for d in $((S_C - c1)) $((S_DC - dc1)); do
		if [ $d -lt $lo ] || [ $d -gt $hi ]; then
			cyc_bad=$((cyc_bad + 1))
			tap_diag "interval $i: cycles +$d outside [$lo, $hi]"
		fi
	done
done
tap_diag "$above region deltas above their bus's words in $n intervals"
tap_check "overload: some interval has a region counter above the words" \
	test $above -gt 0
# a random share of ~156 drains is 0 with probability ~1/157: not every time
tap_check "overload: the words still move (not frozen), in most intervals" \
	test $moving -ge $((n / 2))
tap_eq "overload: cycles = elapsed x 1 MHz within one drain, both probes" \
	0 $cyc_bad
echo 0 > "$M_DBG/overload"

# --- padding on straddling frames ------------------------------------------------------
# RQ: 2 real regions of 32 B in a 4-region probe, 4-byte items. Counters
# read after the traffic stopped (idle), when every drain has landed.
pad_run()
{
	local line=$1

	m_load regions_rq=2 || return 1
	[ "$(m_wr traffic "$line")" = ok ] || return 1
	sleep 0.2
	echo idle > "$M_DBG/profile"
	mapfile -t cnt < "$M_DBG/counters"
	P_W=${cnt[1]#* } P_F=${cnt[3]#* } P_I=${cnt[6]#* }
	P_R="${cnt[7]#* } ${cnt[8]#* } ${cnt[9]#* } ${cnt[10]#* }"
}
RB=32 IB=4 NREAL=2 NPROBE=4
IPR=$((RB / IB))
# 64 B frames back to back from region 1: a frame occupies region 1 of one
# word and region 0 of the next, so one is open after the last real region
# in every word: each padding region counts every word, with full items.
if pad_run "rq words=200000000 frame=64 start=1"; then
	w=$P_W
	real_items=$((w * NREAL * IPR))
	tap_diag "64 B from region 1: words $w frames $P_F items $P_I regions $P_R"
	tap_check "words moved" test "$w" -gt 0
	tap_eq "64 B frames from region 1: one frame starts per word" "$w" "$P_F"
	tap_eq "every region, the two padding ones too, counts every word" \
		"$w $w $w $w" "$P_R"
	tap_eq "items = $NPROBE / $NREAL x what the real regions carried" \
		$((real_items * NPROBE / NREAL)) "$P_I"
else
	tap_fail "placed frames on RQ (frame=64 start=1)"
fi
# word-aligned one-word frames: no frame open after the last real region
if pad_run "rq words=200000000 frame=64 start=0"; then
	w=$P_W
	tap_eq "word-aligned one-word frames: padding regions 0, items exact" \
		"$w $w $w 0 0 $((w * NREAL * IPR))" "$P_F $P_R $P_I"
else
	tap_fail "placed frames on RQ (frame=64 start=0)"
fi
tap_check "load regions_rq=2 ideal=1" m_load regions_rq=2 ideal=1
m_wr traffic "rq words=200000000 frame=64 start=1" >/dev/null
sleep 0.2
echo idle > "$M_DBG/profile"
tap_eq "ideal=1: padding regions stay 0" "0 0" "$(m_cnt 9) $(m_cnt 10)"
tap_eq "frame placement beyond the bus's real regions rejected" \
	"Invalid argument" "$(m_wr traffic "rq frame=64 start=2")"

# --- staggered delta windows ------------------------------------------------------------
# seed then busy at 1 MHz (a 4096-cycle drain is 4.1 ms). RQ words (channel
# 1) and RQ region 0 (channel 7) have the same rate in both profiles (seed:
# 359600000, busy: 380000000 per 400 MHz, every region = words). After the
# change their counts differ by part of a drain, never by whole drains.
tap_check "load profile=seed pcie_mhz=1" m_load profile=seed pcie_mhz=1
echo "+30000000 busy" > "$M_DBG/profile_at"
# (reading profile_at brings the model up to date: the change is lazy)
for i in $(seq 1 300); do
	grep -q ' busy done$' "$M_DBG/profile_at" && break
	sleep 0.01
done
tap_eq "the rate change happened" busy "$(cat "$M_DBG/profile")"
c0=$(m_cnt 0)
for i in $(seq 1 300); do
	[ "$(m_cnt 0)" -ge $((c0 + 3 * 4096)) ] && break
	sleep 0.01
done
mapfile -t cnt < "$M_DBG/counters"
diff=$((${cnt[7]#* } - ${cnt[1]#* }))
tap_diag "three drains after the change: region 0 - words = $diff"
# one drain of busy words: 380000000 x 4096 / 400000000 = 3891.2
mult=0
for m in -1 0 1; do
	x=$((5 * diff - m * 19456))
	[ ${x#-} -le 5 ] && mult=1
done
tap_eq "same-rate channels differ by a non-zero part of a drain, not whole drains" \
	0 $mult
tap_check "... and by less than one drain's delta (3891.2)" test ${diff#-} -lt 3892
# Seed and busy give both channels the same rate, so what the seed counted
# lands in both alike; they differ by the busy words of the 6 slots between
# their window ends. Default slot: the sweep spans half a drain period. A
# read that falls between the two channels' drain slots sees words one
# drain (3891.2) ahead of region 0.
m_layout 1 1 4 4 2 2
slot=$((4096 / (2 * M_PCH)))
want=$((6 * slot * 95 / 100))
tap_diag "slot $slot cycles: 0.95 x 6 x $slot = $want (or $((want - 3891)) inside the sweep)"
near() { [ $(($1 - $2)) -ge -2 ] && [ $(($1 - $2)) -le 2 ]; }
tap_check "region 0 - words = the busy words of 6 slots (within 2), less one drain inside the sweep" \
	eval 'near $diff $want || near $diff $((want - 3891))'

tap_done
