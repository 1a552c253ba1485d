#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel pcie cost, as ratios measured in one run on the seed-example model:
#  1. overhead of one report (wall time minus the interval) against
#     `perf stat -a -e` of the same 52 counters over the same interval;
#     goal: at most 0.5 of perf stat's overhead;
#  2. CPU time of `hwtel pcie -w -t 0.1` as a share of one core; goal: under
#     0.5 %. Under TCG every instruction is emulated, so the guest's CPU time
#     is inflated against a real machine; the native cost per interval of a
#     CPU-bound loop measured here and on the host gives the factor.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make bench)}/tools/hwtel
pmu=ndk_pcie_tlm_3fff00000000
reps=${HWTEL_BENCH_REPS:-5}
watch_s=${HWTEL_BENCH_WATCH_S:-10}

cleanup()
{
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
}
trap cleanup EXIT

modprobe hwtel_sim_pcie profile=seed || exit 1
modprobe ndk_pcie_tlm || exit 1
[ -x "$hw" ] || { echo "build the tool first (make tools)"; exit 1; }

# the same counters as hwtel opens for endpoint 0, in perf syntax
ev=(pcie_cycles,ep=0 dma_cycles,ep=0)
caps=/sys/bus/event_source/devices/$pmu/caps
for b in 0 1 2 3; do
	case $b in 0) r=$(cat $caps/regions_rq) ;; 1) r=$(cat $caps/regions_rc) ;;
		   2) r=$(cat $caps/regions_up) ;; 3) r=$(cat $caps/regions_down) ;; esac
	for f in words stall frames mvb_items mvb_stall items; do
		ev+=("$f,ep=0,bus=$b")
	done
	for ((i = 0; i < r; i++)); do ev+=("region,ep=0,bus=$b,idx=$i"); done
done
for ((i = 0; i < 6; i++)); do ev+=("brake,ep=0,idx=$i"); done
for ((i = 0; i < 4; i++)); do ev+=("tags_band,ep=0,idx=$i" "stfifo_band,ep=0,idx=$i"); done
perf_ev=()
for e in "${ev[@]}"; do perf_ev+=(-e "$pmu/$e/"); done

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "hwtel pcie vs perf stat: overhead beyond a 1 s interval (${#ev[@]} counters, median of $reps)"
h=() p=()
for ((i = 0; i < reps; i++)); do
	t0=$(now); "$hw" pcie -t 1 > /dev/null || exit 1; t1=$(now)
	h+=($(( (t1 - t0) / 1000 - 1000000 )))
	t0=$(now); perf stat -a "${perf_ev[@]}" -x, -o /dev/null -- sleep 1 || exit 1; t1=$(now)
	p+=($(( (t1 - t0) / 1000 - 1000000 )))
done
hm=$(printf '%s\n' "${h[@]}" | median)
pm=$(printf '%s\n' "${p[@]}" | median)
printf '  hwtel pcie -t 1                overhead %8.1f ms   (runs: %s us)\n' \
	"$(echo "scale=1; $hm / 1000" | bc)" "${h[*]}"
printf '  perf stat -a -e <same> sleep 1  overhead %8.1f ms   (runs: %s us)\n' \
	"$(echo "scale=1; $pm / 1000" | bc)" "${p[*]}"
printf '  ratio hwtel / perf stat: %.3f   (goal <= 0.5)\n' "$(echo "scale=4; $hm / $pm" | bc)"

echo
echo "hwtel pcie -w -t 0.1: CPU time of the running tool over ${watch_s} s (after 2 s warm-up)"
# utime + stime of the process itself, from /proc (clock ticks), so neither
# the start-up (exec, opening 52 events) nor a wrapper is counted
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
uticks() { awk '{print $14}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
"$hw" pcie -w -t 0.1 > /dev/null &
pid=$!
sleep 2
c0=$(ticks $pid); u0=$(uticks $pid); t0=$(now)
sleep "$watch_s"
c1=$(ticks $pid); u1=$(uticks $pid); t1=$(now)
kill -INT $pid; wait $pid; rc=$?
wall_ms=$(( (t1 - t0) / 1000000 ))
cpu_ms=$(( (c1 - c0) * 1000 / hz ))
pct=$(echo "scale=4; 100 * $cpu_ms / $wall_ms" | bc)
user_ms=$(( (u1 - u0) * 1000 / hz ))
printf '  %d ms CPU (user %d, sys %d) over %d ms wall: %.3f %% of a core, %.2f ms per interval (exit %d after SIGINT)\n' \
	"$cpu_ms" "$user_ms" "$((cpu_ms - user_ms))" "$wall_ms" "$pct" \
	"$(echo "scale=3; $cpu_ms / ($wall_ms / 100)" | bc)" "$rc"
# emulation factor: the same CPU-bound loop in this guest and on the host
loop='i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
t0=$(now); bash -c "$loop"; t1=$(now)
guest_ms=$(( (t1 - t0) / 1000000 ))
if [ -n "${HWTEL_HOST_LOOP_MS:-}" ]; then
	f=$(echo "scale=1; $guest_ms / $HWTEL_HOST_LOOP_MS" | bc)
	printf '  TCG slowdown (bash loop %s ms here, %s ms on the host): %sx -> about %.3f %% of a real core\n' \
		"$guest_ms" "$HWTEL_HOST_LOOP_MS" "$f" "$(echo "scale=4; $pct / $f" | bc)"
else
	printf '  bash loop here: %s ms (set HWTEL_HOST_LOOP_MS to the host time for the TCG factor)\n' "$guest_ms"
fi
printf '  goal: under 0.5 %% of a core\n'
