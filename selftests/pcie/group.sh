#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups are one instant (issue 8, defects 7 and 13), counted with the
# model's SNAPSHOT statistics on the idle model:
#  - the largest legal group (256 members) reads from one SNAPSHOT; one
#    more member is refused at open with EINVAL;
#  - a group led by a software event is refused with EINVAL; a software
#    sibling under one of our leaders is accepted;
#  - moving the owner CPU (CPU hotplug) with a running group of 8 takes at
#    most one SNAPSHOT, and the counts stay exact across the move.

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
CPU1=/sys/devices/system/cpu/cpu1/online
trap 'echo 1 > $CPU1 2>/dev/null; pcie_unload' EXIT

tap_plan 8
pcie_unload
if ! modprobe hwtel_sim_pcie || ! taskset -c 1 modprobe ndk_pcie_tlm ||
   [ ! -d "$DEV" ]; then
	tap_fail "model and driver load"
	tap_done
fi
tap_ok "model and driver load (owner CPU $(cat "$DEV/cpumask"))"

out=$("$SEQ" "$PMU" G:256 e R 2>&1)
tap_eq "group of 256: opened, one read = one SNAPSHOT" "o ok R 256 1" "$(echo $out)"
out=$("$SEQ" "$PMU" G:257 2>&1)
tap_eq "group of 257: EINVAL at open" "o E22" "$(echo $out)"
out=$("$SEQ" "$PMU" w:lead g:words,ep=0,bus=0 2>&1)
tap_eq "software leader: EINVAL at open" "o ok o E22" "$(echo $out)"
out=$("$SEQ" "$PMU" o:words,ep=0,bus=0 w:sib 2>&1)
tap_eq "our leader, software sibling: accepted" "o ok o ok" "$(echo $out)"

if [ "$(cat "$DEV/cpumask")" != 1 ] || [ ! -w $CPU1 ]; then
	tap_skip "owner move: one SNAPSHOT" "owner is not CPU 1 or CPU 1 not hotpluggable"
	tap_skip "owner move: counts exact" "owner is not CPU 1"
	tap_skip "owner moved" "owner is not CPU 1"
	tap_done
fi
f=/tmp/group.$$
out=$("$SEQ" "$PMU" G:8 e "x:echo 'raw,idx=3 10' > $DBG/inject" r \
	"x:echo 0 > $DBG/stats" "x:echo 0 > $CPU1" \
	"x:sed -n 's/^snapshots //p' $DBG/stats > $f" \
	"x:echo 'raw,idx=3 5' > $DBG/inject" r 2>&1)
n=$(cat $f)
rm -f $f
if [ -n "$n" ] && [ "$n" -le 1 ]; then
	tap_ok "owner move with a running group of 8: $n SNAPSHOT(s)"
else
	tap_fail "owner move with a running group of 8: ${n:-?} SNAPSHOTs (at most 1)"
fi
tap_eq "counts exact across the move" "o ok r 0 0 0 10 0 0 0 0 r 0 0 0 15 0 0 0 0" "$(echo $out)"
own=$(cat "$DEV/cpumask")
if [ "$own" != 1 ]; then
	tap_ok "owner moved off CPU 1 (now $own)"
else
	tap_fail "owner moved off CPU 1 (now $own)"
fi
echo 1 > $CPU1
tap_done
