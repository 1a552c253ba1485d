#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CPU hotplug against probe and remove, on every variant: one loop takes the
# probing CPU (1) offline and online again while another loop removes and
# re-creates the PMU, by unloading both modules and loading the model under
# the loaded driver (probe when the device is added), and by reloading the
# driver alone (probe when the driver registers). The driver has no
# bind/unbind attributes, and the bound driver pins the model. A hotplug
# callback may only ever see a registered PMU: no splat (checked by
# run_in_vm), no hang (bounded loops under the runner's time limit), and
# the PMU counts exactly afterwards.
# Probe and remove are the same code for every variant: CN10K gets the long
# loops, the others short ones (hotplug under TCG takes seconds a cycle).
#
# Only the pinning of a process to CPU 1 is kept apart from the hotplug
# transitions (a mutex): sched_setaffinity() racing CPU 1 going offline
# once left a task on CPU 2 with CPU 1 as its only allowed CPU, and its
# next migrate_enable() WARNed in affine_move_task() (6.12-rt; a scheduler
# race, whatever the task runs). What runs on CPU 1 once pinned, the probe,
# still races the hotplug.

. "$(dirname "$0")/ddr_lib.sh"

LONG=5
SHORT=2
MAX_HOTPLUG=50
CPUS=/sys/devices/system/cpu

online_all()
{
	local c

	for c in $CPUS/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 > "$c"
	done
}

ddr_lc_cleanup()
{
	[ -n "${hp:-}" ] && kill "$hp" 2>/dev/null
	wait 2>/dev/null
	online_all 2>/dev/null
	ddr_cleanup
}
trap ddr_lc_cleanup EXIT

if [ ! -w $CPUS/cpu1/online ]; then
	tap_plan 1
	tap_skip "hotplug against probe/remove" "cpu1 cannot go offline"
	tap_done
fi

# The mutex: one token in a FIFO, read to take it and written back to give
# it, all bash builtins (flock(1), an exec a step, cut the hotplug loop
# from 50 cycles to 8 in the same time).
mkfifo "$DDR_TMP/pin.fifo"
exec {PIN}<> "$DDR_TMP/pin.fifo"
printf x >&"$PIN"
pin_take() { local tok; read -r -n1 -u "$PIN" tok; }
pin_give() { printf x >&"$PIN"; }

# hotplug STOPFILE COUNTFILE: offline/online CPU 1 until STOPFILE exists
hotplug()
{
	local n=0

	while [ ! -e "$1" ] && [ $n -lt $MAX_HOTPLUG ]; do
		pin_take
		echo 0 > $CPUS/cpu1/online 2>/dev/null
		pin_give
		pin_take
		echo 1 > $CPUS/cpu1/online 2>/dev/null
		pin_give
		n=$((n + 1))
	done
	echo $n > "$2"
}

# on_cpu1 CMD...: run CMD on CPU 1 (retried while CPU 1 is offline); the
# subshell that becomes CMD is pinned while it waits for taskset, with the
# hotplug loop held off
on_cpu1()
{
	local i on

	for i in $(seq 200); do
		(
			pin_take
			read -r on < $CPUS/cpu1/online
			if [ "$on" = 1 ] && taskset -pc 1 $BASHPID > /dev/null; then
				pin_give
				exec {PIN}>&-
				exec "$@"
			fi
			pin_give
			exit 1
		) 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

tap_plan 12
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1; then
		tap_fail "$v: load"
		continue
	fi
	p=$(ddr_pmu "$v")
	RELOADS=$SHORT
	[ "$v" = cn10k ] && RELOADS=$LONG

	rm -f "$DDR_TMP/stop"
	hotplug "$DDR_TMP/stop" "$DDR_TMP/cycles" &
	hp=$!
	ok=0
	for i in $(seq $RELOADS); do
		rmmod marvell_cn10k_ddr_pmu && rmmod hwtel_sim_ddr &&
			modprobe marvell_cn10k_ddr_pmu || break
		on_cpu1 modprobe hwtel_sim_ddr variant="$v" || break
		ok=$((ok + 1))
	done
	touch "$DDR_TMP/stop"
	wait $hp
	hp=
	tap_eq "$v: $RELOADS probes at device add, against hotplug" $RELOADS $ok
	tap_diag "$v: $(cat "$DDR_TMP/cycles") CPU 1 offline/online cycles"

	rm -f "$DDR_TMP/stop"
	hotplug "$DDR_TMP/stop" "$DDR_TMP/cycles" &
	hp=$!
	ok=0
	for i in $(seq $RELOADS); do
		rmmod marvell_cn10k_ddr_pmu || break
		on_cpu1 modprobe marvell_cn10k_ddr_pmu || break
		ok=$((ok + 1))
	done
	touch "$DDR_TMP/stop"
	wait $hp
	hp=
	tap_eq "$v: $RELOADS driver reloads against hotplug" $RELOADS $ok
	tap_diag "$v: $(cat "$DDR_TMP/cycles") CPU 1 offline/online cycles"

	online_all
	tap_eq "$v: the PMU is back and counts exactly" "5,$p/ddr_cam_read/" \
		"$(ddr_stat "$p/ddr_cam_read/" -- sh -c "echo 'ddr_cam_read 5' > $DDR_DBG/$p/inject")"
	mask=$(cat "$DDR_DEVS/$p/cpumask")
	tap_eq "$v: its owner CPU is online" 1 "$(cat $CPUS/cpu"$mask"/online 2>/dev/null || echo 1)"
	ddr_unload
done
tap_done
