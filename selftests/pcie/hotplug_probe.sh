#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Probe/remove against CPU hotplug (issue 8, defects 14 and 18): while CPUs
# 1..3 go offline and online in a loop, the model is loaded and unloaded
# (its devices come and go, so the driver probes and removes), sometimes
# with an event opened and closed in between. The PMU must always name an
# online owner CPU, and nothing may splat (run_in_vm checks dmesg).

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
trap 'kill $hp 2>/dev/null; wait; for c in $(seq 1 $(($(nproc --all) - 1))); do echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null; done; pcie_unload' EXIT

tap_plan 9
pcie_unload
modprobe ndk_pcie_tlm || { tap_fail "driver loads"; tap_done; }
tap_ok "driver loads"

(
	while :; do
		for c in 1 2 3; do
			echo 0 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null
			echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null
		done
	done
) &
hp=$!

bad=0
for i in $(seq 1 20); do
	modprobe hwtel_sim_pcie || { bad=$((bad + 1)); continue; }
	# the owner may be moving right now (the churn takes CPUs down while
	# we look): it must be online again once the move is done; look until
	# it is, for at most 5 s
	for ((j = 0; j < 250; j++)); do
		own=$(cat "$DEV/cpumask" 2>/dev/null)
		[ -n "$own" ] &&
			[ "$(cat /sys/devices/system/cpu/cpu$own/online 2>/dev/null || echo 1)" = 1 ] &&
			break
		sleep 0.02
	done
	[ "$j" -lt 250 ] || bad=$((bad + 1))
	[ $((i % 2)) -eq 0 ] && "$SEQ" "$PMU" o:words,ep=0,bus=0 e r c > /dev/null 2>&1
	modprobe -r hwtel_sim_pcie || bad=$((bad + 1))
done
kill $hp
wait $hp 2>/dev/null
# the churn may have stopped with a CPU offline (a node's cpulist lists its
# online CPUs only)
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat "$c")" = 1 ] || echo 1 > "$c"
done
tap_eq "20 probe/remove cycles under hotplug: owner online, unload ok" 0 "$bad"
modprobe hwtel_sim_pcie
tap_check "PMU present after the churn" test -d "$DEV"

# A device on NUMA node 1 of the lab's two-node guest (scripts/vmrun). The
# documented owner rule: the probing CPU if it is in the device's node,
# else the node's lowest-numbered online CPU; when the owner goes offline,
# the node's next online CPU, else the lowest online CPU. Expected owners
# come from the node's cpulist.
mapfile -t n1 < <(numa_node_cpus 1)
if [ ${#n1[@]} -lt 2 ]; then
	for t in owner offline1 offline2 back counts repick; do
		tap_skip "numa_node=1: $t" "no NUMA node with two CPUs"
	done
	tap_done
fi
pcie_unload
modprobe hwtel_sim_pcie numa_node=1 && taskset -c 0 modprobe ndk_pcie_tlm
tap_eq "numa_node=1, probed on CPU 0: owner is node 1's lowest CPU" \
	"${n1[0]}" "$(cat "$DEV/cpumask" 2>/dev/null)"
echo 0 > /sys/devices/system/cpu/cpu${n1[0]}/online
tap_eq "owner CPU ${n1[0]} offline: node 1's next CPU" "${n1[1]}" "$(cat "$DEV/cpumask")"
for c in "${n1[@]:1}"; do
	echo 0 > /sys/devices/system/cpu/cpu$c/online
done
low=$(online_cpus | head -n1)
tap_eq "all of node 1 offline: the lowest online CPU" "$low" "$(cat "$DEV/cpumask")"
# A CPU of node 1 comes back: the owner returns to it, and an event open
# across the move counts on exactly (100 before it, 50 after)
out=$("$SEQ" "$PMU" o:items,ep=0,bus=2 e "x:echo 'items,ep=0,bus=2 100' > $DBG/inject" \
	"x:echo 1 > /sys/devices/system/cpu/cpu${n1[1]}/online" \
	"x:echo 'items,ep=0,bus=2 50' > $DBG/inject" r c 2>&1 | grep -v '^o ok$')
tap_eq "CPU ${n1[1]} of node 1 back online: the owner returns to it (was $low)" \
	"${n1[1]}" "$(cat "$DEV/cpumask")"
tap_eq "an event open across the return counts 100 + 50" "r 150" "$out"
# The probe's window: the owner is picked before the hotplug instance is
# added, so a CPU of the node that comes online in between is seen by no
# callback. The probe picks again once the instance is in; the lab's
# lab_first_owner=0 stands in for a first pick made while node 1 had no
# CPU online.
for c in "${n1[@]}"; do
	echo 1 > /sys/devices/system/cpu/cpu$c/online
done
pcie_unload
modprobe hwtel_sim_pcie numa_node=1 && modprobe ndk_pcie_tlm lab_first_owner=0
tap_eq "first pick CPU 0 while node 1 was offline: the probe picks node 1's lowest CPU" \
	"${n1[0]}" "$(cat "$DEV/cpumask" 2>/dev/null)"
tap_done
