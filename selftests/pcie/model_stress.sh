#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver), under concurrent access: register reads
# and commands, profile and traffic switches, gauge writes, injections and
# counter dumps from several processes at once, on 2 instances with busy
# traffic at speedup 100 (many drain periods per access). Afterwards the
# model must still answer exactly (a clear, an injection, a snapshot), its
# invariants must hold, and dmesg must stay clean (checked by the runner).
# Runs a fixed number of iterations per process, not a fixed time.
#
# The accumulator must keep up for the invariants to hold (an interval with
# LOST DELTA breaks them): at speedup 100 a PCIe drain of 4096 cycles takes
# 0.1 us, so the model runs with DRAIN_PERIOD 32768, MI at 1000 MHz, one MI
# cycle per delta and probe FIFOs of 1024 deltas (29 PCIe drains, longer
# than a BUSY of 2 x 512 + 7 MI cycles): a load of
# 4 x (35 x 400 + 33 x 200) x 100 / (1000 x 32768) = 0.25.

. "$(dirname "$0")/model_lib.sh"

m_alone
trap 'kill $(jobs -p) 2>/dev/null; wait; m_unload' EXIT

tap_check "load 2 instances, 4 ep, 2 ports, busy, speedup 100, CNT_WIDTH 40" \
	m_load instances=2 endpoints=4 dma_ports=2 profile=busy speedup=100 cnt_width=40 \
	drain_period=32768 mi_mhz=1000 add_cycles=1 fifo_depth=1024
D1=/sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000

reader()
{
	local i off v

	for ((i = 0; i < 60; i++)); do
		for off in 0x24 0x8000 0x8004 0x8ff8 0x80; do
			echo "$off" > "$1/mmio" 2>/dev/null
			read -r v < "$1/mmio"
		done
		echo "0x20 1" > "$1/mmio"
		echo "0x28 $((i & 1))" > "$1/mmio"
	done
}

switcher()
{
	local i

	for ((i = 0; i < 30; i++)); do
		echo seed > "$1/profile" || return 1
		echo "up words=100000000 stall=1000 full=1" > "$1/traffic"
		echo "ep=$((i % 4)) tags=$((i % 200)) stfifo=$i" > "$1/gauge"
		# injections (which break the invariants on purpose) only on
		# instance 0; instance 1 is checked afterwards
		[ "$2" = inject ] && echo "raw,idx=$((i * 4)) 12345" > "$1/inject"
		echo "0x20 $((1 << (i % 4)))" > "$1/mmio"
		echo busy > "$1/profile" || return 1
	done
}

dumper()
{
	local i

	for ((i = 0; i < 15; i++)); do
		cat "$1/counters" "$1/regs" "$1/stats" "$1/traffic" > /dev/null
	done
}

pids=()
for d in "$M_DBG" "$D1"; do
	reader "$d" & pids+=($!)
	switcher "$d" "$([ "$d" = "$M_DBG" ] && echo inject)" & pids+=($!)
	dumper "$d" & pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
tap_eq "all concurrent workers finished without errors" 0 "$rc"

# still exact: idle, clear, inject, snapshot, read back
echo idle > "$M_DBG/profile"
echo 0 > "$M_DBG/busy_ns"
echo 0 > "$M_DBG/stats"
m_ww 0x20 0xf
tap_eq "after CLEAR every live counter is 0" 0 "$(m_cnt_sum)"
tap_eq "inject after the storm" ok "$(m_wr inject "items,ep=3,bus=5 0xabcdef0123")"
m_ww 0x28 0
m_ww 0x20 1
m_layout 4 2 4 4 2 2
e=$((3 * M_CPE + M_PCH + 1 + 3 * (6 + M_RD) + 5))
tap_eq "snapshot copy has exactly the injected value" "0xcdef0123 0x000000ab" \
	"$(m_rd $((0x8000 + 8 * e))) $(m_rd $((0x8000 + 8 * e + 4)))"
tap_eq "stats exact after the storm" "reads 2 writes 3 snapshots 2 clears 1 irqoff_reads 0" \
	"$(m_stats)"

# invariants of instance 1, after its traffic stops (every drain landed:
# while it runs, channels of one drain land in slots and the band sum may
# be a drain off the cycles; a CLEAR inside a sweep leaves that offset)
echo idle > "$D1/profile"
mapfile -t cnt < "$D1/counters"
v() { echo "${cnt[$1]#* }"; }
bad=0
for ep in 0 1 2 3; do
	b0=$((ep * M_CPE))
	C=$(v "$b0")
	brk=$((b0 + 1 + 2 * (6 + M_RP)))
	for h in 0 1; do
		s=0
		for k in 0 1 2 3; do s=$((s + $(v $((brk + 6 + 4 * h + k))))); done
		# CNT_WIDTH 40: compare modulo 2^40. The switcher's CLEARs can
		# land inside a drain's sweep, which leaves a lasting offset of
		# up to one drain (32768 cycles x 1 per cycle) between channels
		d=$(((s - C) % (1 << 40)))
		[ "$d" -lt 0 ] && d=$((d + (1 << 40)))
		[ "$d" -le 32768 ] || [ "$d" -ge $(((1 << 40) - 32768)) ] ||
			{ bad=1; tap_diag "ep$ep hist $h: $s vs $C"; }
	done
done
tap_eq "bands still sum to the cycles (mod 2^40, within one drain) on every endpoint" 0 "$bad"

tap_done
