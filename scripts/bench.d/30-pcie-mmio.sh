#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MMIO cost of one consistent read of a perf group of K PCIe telemetry
# counters, counted by the model (register reads and writes, SNAPSHOT
# commands), for several K; compared with reading the whole counter window,
# as the reference Python tool does for every report. Goal: at most
# 2 reads per counter plus a constant.

set -u
src=${HWTEL_SRC:?run inside the lab (make bench)}
evt=$HWTEL_BUILD/selftests-bin/pcie/pcie_evt
pmu=ndk_pcie_tlm_3fff00000000
dbg=/sys/kernel/debug/hwtel-sim/$pmu

cleanup()
{
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
}
trap cleanup EXIT

modprobe hwtel_sim_pcie profile=seed || exit 1
modprobe ndk_pcie_tlm || exit 1
[ -x "$evt" ] || { echo "build the selftests first (make tools)"; exit 1; }

used=$(( $(cat /sys/bus/event_source/devices/$pmu/caps/endpoints) *
	 $(cat /sys/bus/event_source/devices/$pmu/caps/counters_per_ep) ))
window=$(cat /sys/bus/event_source/devices/$pmu/caps/entries)
eps=$(cat /sys/bus/event_source/devices/$pmu/caps/endpoints)

echo "PCIe telemetry: MMIO transactions of one consistent read (model stats)"
echo "layout: $used counters used, window of $window entries, seed traffic"
echo
printf '%-22s %6s %6s %9s %11s %9s\n' "read" reads writes snapshots "reads/cnt" "vs window"

# the whole window, as the reference Python tool reads it for one report:
# configuration registers 0x00..0x3c (16), per endpoint PCIE_STATUS, TAGS,
# STFIFO (3), COMMAND write, at least one STATUS read, 2 words per entry
ref_reads=$((16 + 3 * eps + 1 + 2 * window))
ref_writes=1

for k in 1 2 4 8 16 32 $used; do
	read -r _ r w s < <("$evt" -b "$k" "$pmu")
	printf '%-22s %6d %6d %9d %11.2f %8.1f%%\n' "perf group, K=$k" "$r" "$w" "$s" \
		"$(echo "scale=2; $r / $k" | bc)" \
		"$(echo "scale=3; 100 * ($r + $w) / ($ref_reads + $ref_writes)" | bc)"
	if [ "$r" -gt $((2 * k + 4)) ] || [ "$s" -ne 1 ]; then
		echo "  ^ above the goal of 2 reads per counter + 4, or not one snapshot"
	fi
done

echo 0 > "$dbg/stats"
"$evt" -t "$pmu" >/dev/null
r=$(sed -n 's/^reads //p' "$dbg/stats")
w=$(sed -n 's/^writes //p' "$dbg/stats")
s=$(sed -n 's/^snapshots //p' "$dbg/stats")
printf '%-22s %6d %6d %9d %11.2f %8.1f%%\n' "netlink TOTALS_GET" "$r" "$w" "$s" \
	"$(echo "scale=2; $r / $used" | bc)" \
	"$(echo "scale=3; 100 * ($r + $w) / ($ref_reads + $ref_writes)" | bc)"
printf '%-22s %6d %6d %9d %11.2f %8.1f%%\n' "reference tool (calc.)" \
	"$ref_reads" "$ref_writes" 1 "$(echo "scale=2; $ref_reads / $used" | bc)" 100
echo
echo "reads/cnt: reads divided by the counters delivered; vs window: (reads +"
echo "writes) relative to one whole-window read of the reference tool."
