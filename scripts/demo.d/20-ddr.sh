#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Marvell DDR (DSS) PMU on its model: perf list of the DDR PMUs, then
# perf stat over live model traffic on two Odyssey controllers and one
# CN10K controller, with the bandwidth worked out from the fixed counters.

set -u

cleanup()
{
	modprobe -r marvell_cn10k_ddr_pmu 2>/dev/null
	modprobe -r hwtel_sim_ddr 2>/dev/null
}
trap cleanup EXIT

dbg=/sys/kernel/debug/hwtel-sim
devs=/sys/bus/event_source/devices

modprobe hwtel_sim_ddr variant=odyssey instances=2 || exit 1
modprobe marvell_cn10k_ddr_pmu || exit 1
p0=mrvl_ddr_pmu_87e1d0000000
p1=mrvl_ddr_pmu_87e1d1000000

echo "== DDR PMUs: $(ls $devs | grep mrvl_ddr_pmu | xargs)"
for p in $p0 $p1; do
	echo "   $p: identifier $(cat $devs/$p/identifier), cpumask $(cat $devs/$p/cpumask)," \
		"$(ls $devs/$p/events | grep -vc '\.') events, format event=$(cat $devs/$p/format/event)"
done
echo
echo "\$ perf list | grep $p0"
perf list 2>/dev/null | grep "$p0/"
echo

# Live traffic: controller 0 at about 3.2 GB/s of reads and 1.6 GB/s of writes
echo "== model traffic (debugfs rate):"
for r in "ddr_ddr_reads 50000000" "ddr_ddr_writes 25000000" \
	 "ddr_cam_read 50000000" "ddr_cam_write 25000000" \
	 "ddr_cam_rd_or_wr_access 75000000" "ddr_cam_active_access 15000000" \
	 "ddr_rdwr_transitions 4000000" "ddr_refresh 128000"; do
	echo "   $p0: $r/s"
	echo "$r" > $dbg/$p0/rate
done
echo "ddr_ddr_reads 10000000" > $dbg/$p1/rate
echo "   $p1: ddr_ddr_reads 10000000/s"
echo

echo "\$ perf stat -a -e $p0/{ddr_ddr_reads,ddr_ddr_writes,ddr_cam_rd_or_wr_access,ddr_cam_active_access,ddr_rdwr_transitions,ddr_refresh}/ -- sleep 1"
perf stat -a -e "$p0/ddr_ddr_reads/,$p0/ddr_ddr_writes/,$p0/ddr_cam_rd_or_wr_access/,$p0/ddr_cam_active_access/,$p0/ddr_rdwr_transitions/,$p0/ddr_refresh/" -- sleep 1 2>&1

echo "== short names count every controller (perf adds them up)"
echo "\$ perf stat -a -e ddr_ddr_reads --no-merge -- sleep 1"
perf stat -a -e ddr_ddr_reads --no-merge -- sleep 1 2>&1

# by name perf prints MiB (the events' .scale and .unit); the raw ids
# 0x65 (reads) and 0x64 (writes) give the 64-byte bursts
echo "== bandwidth per second (bursts x 64 B), perf stat -I 1000 on the raw ids"
out=/tmp/demo-ddr.$$
perf stat -a -x, -I 1000 -o "$out" -e "$p0/event=0x65/,$p0/event=0x64/" -- sleep 3.05
awk -F, '!/^#/ && NF > 3 {
	ev = $4 ~ /0x65/ ? "reads" : "writes"
	printf "   t=%5.2f s  %-15s %12d bursts  %8.1f MB/s\n", $1, ev, $2, $2 * 64 / 1e6
}' "$out"
rm -f "$out"
echo

echo "== row-hit rate and turnarounds from one group"
perf stat -a -x, -o /tmp/demo-ddr2.$$ -e "{$p0/ddr_cam_rd_or_wr_access/,$p0/ddr_cam_active_access/,$p0/ddr_rdwr_transitions/}" -- sleep 1
awk -F, '!/^#/ && NF > 3 { v[++n] = $1 } END {
	printf "   row-hit rate %.1f %%, turnarounds per access %.3f\n",
		100 * (1 - v[2] / v[1]), v[3] / v[1] }' /tmp/demo-ddr2.$$ 2>/dev/null ||
	true
rm -f /tmp/demo-ddr2.$$
echo

echo "== more generic events than counters: perf multiplexes and scales"
ev=
for e in ddr_hif_rd_or_wr_access ddr_hif_wr_access ddr_hif_rd_access ddr_cam_read \
	 ddr_cam_write ddr_cam_rd_or_wr_access ddr_cam_active_access \
	 ddr_rdwr_transitions ddr_refresh ddr_precharge; do
	ev+="$p0/$e/,"
done
perf stat -a -e "${ev%,}" -- sleep 1 2>&1

modprobe -r marvell_cn10k_ddr_pmu
modprobe -r hwtel_sim_ddr

echo "== CN10K: the same driver on a CN10K controller (48-bit counters)"
modprobe hwtel_sim_ddr variant=cn10k || exit 1
modprobe marvell_cn10k_ddr_pmu poll_period_sec=1 || exit 1
c=mrvl_ddr_pmu_87e1c0000000
echo "   $c: identifier $(cat $devs/$c/identifier), $(ls $devs/$c/events | grep -vc '\.') events," \
	"poll_period_sec $(cat /sys/module/marvell_cn10k_ddr_pmu/parameters/poll_period_sec)"
echo "\$ perf stat -a -e $c/event=0x65/ -- (jump the counter 10 below 2^48, then 1000 more reads)"
perf stat -a -e "$c/event=0x65/" -- sh -c "
	echo 'ddr_ddr_reads 5' > $dbg/$c/inject
	echo 281474976710646 > $dbg/$c/freerun_rd; sleep 1.2
	echo 'ddr_ddr_reads 1000' > $dbg/$c/inject
	echo '   raw counter after the wrap:' \$(cat $dbg/$c/freerun_rd)" 2>&1
echo "   (5 + (2^48 - 10 - 5) + 1000 = 2^48 + 990 = 281474976711646: the wrap at 2^48 is folded)"
