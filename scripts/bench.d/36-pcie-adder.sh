#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The safe SNAPSHOT rate of the PCIe telemetry block at the largest layout
# the registers describe (16 endpoints x 254 counters, ENTRIES 4096), as a
# figure users can plan with. While BUSY the block's accumulator adds no
# delta; SNAPSHOTs written faster than it catches up lose counts (LOST
# DELTA). From the contract: a SNAPSHOT keeps BUSY 2 x ENTRIES + 1..7 MI
# cycles, the accumulator takes about 3 MI cycles a delta, one delta per
# used entry a drain period. The driver writes no SNAPSHOT sooner than
# the longest BUSY and 3 x used entries MI cycles, both at 50 MHz, after
# the previous one's write, so its SNAPSHOT rate is at most 1 / spacing
# whatever the readers do (at any MI clock of 50 MHz or more): reads
# beyond that rate are served from the last copy (at most the spacing
# old).
#
# Measured in the lab against the model (its accumulator starves like the
# block's): readers that want far more than that rate (two processes
# reading a one-member group back to back, hwtel record at 100 us) for
# $HWTEL_BENCH_SECS s, with the driver's spacing and without it (the lab's
# debugfs snap_gap_ns = 0): SNAPSHOTs written per second (the model's
# count) over the bound, and whether LOST DELTA set.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make bench)}/tools/hwtel
evt=$HWTEL_BUILD/selftests-bin/pcie/pcie_evt
pmu=ndk_pcie_tlm_3fff00000000
dbg=/sys/kernel/debug/hwtel-sim/$pmu
gap=/sys/kernel/debug/ndk_pcie_tlm/$pmu/snap_gap_ns
secs=${HWTEL_BENCH_SECS:-2}
mi=50
drain=32768
T=$(mktemp -d)
pids=()

stop()
{
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
cleanup()
{
	stop
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

[ -x "$hw" ] && [ -x "$evt" ] || { echo "build the tools first (make tools)"; exit 1; }

entries=4096
used=4064
busy_max=$((2 * entries + 7))
gap_ns=$(( ((busy_max + 3 * used) * 1000 + 49) / 50 ))
echo "PCIe telemetry: the safe SNAPSHOT rate at 16 x 254 counters ($used used, ENTRIES $entries)"
echo "from the contract: BUSY at most $busy_max MI cycles; the accumulator needs 3 x $used = $((3 * used)) MI cycles a drain"
echo "driver spacing from each SNAPSHOT's write: $busy_max + 3 x $used MI cycles at 50 MHz = $((gap_ns / 1000)) us"
bound=$(( 1000000000 / gap_ns ))
echo "  at any MI clock of 50 MHz or more (BUSY $((busy_max / 50)) us at 50 MHz, $((busy_max / 250)) us at 250): at most $bound SNAPSHOTs/s"
echo "lab: model at MI $mi MHz, probes at 80 and 40 MHz, DRAIN_PERIOD $drain (the accumulator a third busy"
echo "with deltas alone); bound $bound SNAPSHOTs/s; readers for $secs s"

# measure GAP_NS|default: SNAPSHOTs per second and LOST DELTA
measure()
{
	local n0 n1 t0 t1 lost

	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
	modprobe hwtel_sim_pcie endpoints=16 regions_up=103 regions_down=103 \
		profile=seed drain_period=$drain mi_mhz=$mi pcie_mhz=80 dma_mhz=40 || return 1
	modprobe ndk_pcie_tlm || return 1
	[ "$1" = default ] || echo "$1" > "$gap" || return 1
	"$evt" -l 1 "$pmu" > /dev/null 2>&1 & pids+=($!)
	"$evt" -l 1 "$pmu" > /dev/null 2>&1 & pids+=($!)
	"$hw" record -q -o "$T/r.rec" -p 100us -N 100 -t 3600 > /dev/null 2>&1 & pids+=($!)
	sleep 0.5
	n0=$(sed -n 's/.*snapshots \([0-9]*\).*/\1/p' "$dbg/stats")
	t0=$(date +%s%N)
	sleep "$secs"
	n1=$(sed -n 's/.*snapshots \([0-9]*\).*/\1/p' "$dbg/stats")
	t1=$(date +%s%N)
	stop
	lost=$(sed -n 's/.*lost_delta=\([01]\).*/\1/p' "$dbg/flags")
	rate=$(( (n1 - n0) * 1000000000 / (t1 - t0) ))
	echo "$rate $lost"
}

read -r sp lost_sp < <(measure default) || exit 1
read -r un lost_un < <(measure 0) || exit 1
echo "with the spacing:    $sp SNAPSHOTs/s = $(awk -v a="$sp" -v b="$bound" 'BEGIN { printf "%.2f", a / b }') x the bound, LOST DELTA $lost_sp"
echo "without the spacing: $un SNAPSHOTs/s = $(awk -v a="$un" -v b="$bound" 'BEGIN { printf "%.2f", a / b }') x the bound, LOST DELTA $lost_un"
