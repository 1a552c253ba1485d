#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CPU hotplug on every variant: the driver is probed on CPU 1; while perf
# counts, the owner CPU is taken offline and back online several times.
# The perf context migrates, cpumask follows (never to the offlined CPU),
# and the totals stay exact.
#
# Taking a CPU offline under TCG beside other guests takes seconds: on
# 6.12-rt in make check the default 300 s ran out after 19 of 35 tests.
# hwtel-timeout: 1200

. "$(dirname "$0")/ddr_lib.sh"

ROUNDS=4
CPUS=/sys/devices/system/cpu

online_all()
{
	local c

	for c in $CPUS/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 > "$c"
	done
}

ddr_hotplug_cleanup()
{
	online_all 2>/dev/null
	ddr_cleanup
}
trap ddr_hotplug_cleanup EXIT

if [ ! -w $CPUS/cpu1/online ]; then
	tap_plan 1
	tap_skip "CPU hotplug" "cpu1 cannot go offline"
	tap_done
fi

tap_plan 35
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1; then
		tap_fail "$v: load"
		continue
	fi
	p=$(ddr_pmu "$v")
	mask=$DDR_DEVS/$p/cpumask
	inj=$DDR_DBG/$p/inject
	moves=$DDR_TMP/moves
	: > "$moves"
	tap_eq "$v: owner is the probing CPU" 1 "$(cat "$mask")"

	script="
		for i in \$(seq $ROUNDS); do
			o=\$(cat $mask)
			echo 'ddr_cam_read 100' > $inj
			echo 'ddr_ddr_reads 10' > $inj
			echo 0 > $CPUS/cpu\$o/online || exit 1
			echo \"\$o \$(cat $mask)\" >> $moves
			echo 'ddr_cam_read 100' > $inj
			echo 'ddr_ddr_reads 10' > $inj
			echo 1 > $CPUS/cpu\$o/online || exit 1
		done
		echo 'ddr_cam_read 1' > $inj"
	out=$(ddr_stat "$p/ddr_cam_read/,$p/event=0x65/" -- sh -c "$script")
	tap_eq "$v: exact totals across $ROUNDS owner offline/online rounds" \
		"$(printf '%s\n%s' "$((ROUNDS * 200 + 1)),$p/ddr_cam_read/" \
			"$((ROUNDS * 20)),$p/event=0x65/")" "$out"
	# the same as one group, which moves as a whole
	out=$(ddr_stat "{$p/ddr_cam_read/,$p/event=0x65/}" -- sh -c "$script")
	tap_eq "$v: exact group totals across $ROUNDS owner offline/online rounds" \
		"$(printf '%s\n%s' "$((ROUNDS * 200 + 1)),$p/ddr_cam_read/" \
			"$((ROUNDS * 20)),$p/event=0x65/")" "$out"
	tap_eq "$v: $((2 * ROUNDS)) migrations recorded" $((2 * ROUNDS)) "$(grep -c . "$moves")"
	tap_check "$v: cpumask always moved to another online CPU" \
		awk '$1 == $2 || $2 == "" { exit 1 }' "$moves"
	tap_diag "$v: owner moves (from to): $(tr '\n' ',' < "$moves")"
	online_all
	tap_check "$v: counting continues on the new owner" test \
		"$(ddr_stat "$p/ddr_cam_read/" -- sh -c "echo 'ddr_cam_read 5' > $inj")" \
		= "5,$p/ddr_cam_read/"
	tap_eq "$v: driver touched no unmapped register" "unmapped 0" \
		"$(grep unmapped "$DDR_DBG/$p/stats")"
	ddr_unload

	# A device on NUMA node 0: the owner is a CPU of node 0, and stays
	# one when the owner goes offline.
	# A kernel without CONFIG_NUMA (the lab's debug kernel) has no node
	# directories: every CPU is then in node 0 (cpumask_of_node(0) is
	# cpu_online_mask there).
	node0=$(cat /sys/devices/system/node/node0/cpulist 2>/dev/null ||
		cat /sys/devices/system/cpu/possible)
	in_node0() { awk -v c="$1" -v l="$node0" 'BEGIN {
		n = split(l, r, ","); for (i = 1; i <= n; i++) {
		m = split(r[i], b, "-"); if (m == 1) b[2] = b[1];
		if (c >= b[1] && c <= b[2]) exit 0 } exit 1 }'; }
	modprobe hwtel_sim_ddr variant="$v" numa_node=0 &&
		taskset -c 1 modprobe marvell_cn10k_ddr_pmu
	o=$(cat "$mask" 2>/dev/null)
	tap_check "$v: numa_node=0: owner $o is in node 0 ($node0)" in_node0 "$o"
	echo 0 > $CPUS/cpu$o/online
	n=$(cat "$mask")
	new_ok() { [ "$1" != "$2" ] && in_node0 "$2" &&
		{ [ ! -e $CPUS/cpu$2/online ] || [ "$(cat $CPUS/cpu$2/online)" = 1 ]; }; }
	tap_check "$v: owner offline: new owner $n is an online CPU of node 0" \
		new_ok "$o" "$n"
	echo 1 > $CPUS/cpu$o/online
	tap_check "$v: and counts there" test \
		"$(ddr_stat "$p/ddr_cam_read/" -- sh -c "echo 'ddr_cam_read 6' > $inj")" \
		= "6,$p/ddr_cam_read/"
	ddr_unload
done

# A device on NUMA node 1 of the lab's two-node guest (scripts/vmrun), with
# an event counting throughout. The documented owner rule: the probing CPU
# if it is in the device's node, else the node's highest-numbered online
# CPU; when the owner goes offline, the node's next highest, else the
# highest online CPU; when a CPU of the node comes back while the owner is
# elsewhere, the PMU moves back to it. Expected owners are computed here
# from the node's cpulist, not read from the driver.
mapfile -t n1 < <(numa_node_cpus 1)
if [ ${#n1[@]} -lt 2 ]; then
	for t in owner offline1 offline2 online count; do
		tap_skip "numa_node=1: $t" "no NUMA node with two CPUs"
	done
	tap_done
fi
v=cn10k
p=$(ddr_pmu "$v")
mask=$DDR_DEVS/$p/cpumask
inj=$DDR_DBG/$p/inject
hi=${n1[-1]}
next=${n1[-2]}
modprobe hwtel_sim_ddr variant="$v" numa_node=1 &&
	taskset -c 0 modprobe marvell_cn10k_ddr_pmu
tap_eq "numa_node=1, probed on CPU 0: owner is node 1's highest CPU" "$hi" "$(cat "$mask" 2>/dev/null)"
# the workload injects the first occurrence (perf stat enables the event
# before it starts the workload), then runs until the test is done
rm -f "$DDR_TMP/done" "$DDR_TMP/started"
perf stat -a -x, -o "$DDR_TMP/numa" -e "$p/ddr_cam_read/" -- \
	sh -c "echo 'ddr_cam_read 1' > '$inj'; touch '$DDR_TMP/started'
	       while [ ! -e '$DDR_TMP/done' ]; do sleep 0.1; done" &
ps=$!
for i in $(seq 300); do
	[ -e "$DDR_TMP/started" ] && break
	sleep 0.1
done
echo 0 > $CPUS/cpu$hi/online
tap_eq "owner CPU $hi offline: node 1's next CPU" "$next" "$(cat "$mask")"
ddr_inject "$p" ddr_cam_read 2
for c in "${n1[@]}"; do
	[ "$c" = "$hi" ] || echo 0 > $CPUS/cpu$c/online
done
tap_eq "all of node 1 offline: the highest online CPU" \
	"$(online_cpus | tail -n1)" "$(cat "$mask")"
ddr_inject "$p" ddr_cam_read 4
echo 1 > $CPUS/cpu$hi/online
tap_eq "CPU $hi of node 1 back: the PMU moves back to it" "$hi" "$(cat "$mask")"
ddr_inject "$p" ddr_cam_read 8
online_all
touch "$DDR_TMP/done"
wait $ps
tap_eq "the event counted 1 + 2 + 4 + 8 across the four moves" \
	"15,$p/ddr_cam_read/" "$(grep -v '^#' "$DDR_TMP/numa" | sed '/^$/d' | cut -d, -f1,3)"
ddr_unload
tap_done
