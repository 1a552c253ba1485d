#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups are one instant (issue 8, defects 7 and 13), counted with the
# model's SNAPSHOT statistics on the idle model:
#  - the largest legal group (256 members) reads from one SNAPSHOT; one
#    more member is refused at open with EINVAL;
#  - a group led by a software event is accepted (as upstream PMUs do) and
#    its members count exactly; a software sibling under one of our leaders
#    is accepted;
#  - moving the owner CPU (CPU hotplug) with a running group of 8 takes at
#    most one SNAPSHOT, and the counts stay exact across the move.

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
CPU1=/sys/devices/system/cpu/cpu1/online
trap 'echo 1 > $CPU1 2>/dev/null; pcie_unload' EXIT

tap_plan 9
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
# the cpu-clock leader's own value is dropped: "r CLOCK 10 7" -> "r 10 7"
out=$("$SEQ" "$PMU" w:lead g:raw,idx=3 g:raw,idx=5 e \
	"x:echo 'raw,idx=3 10' > $DBG/inject" "x:echo 'raw,idx=5 7' > $DBG/inject" \
	R r 2>&1)
tap_eq "software leader: accepted, members count exactly" "o ok o ok o ok r 10 7" \
	"$(echo $out | sed 's/ R 3 [0-9]* / /; s/ r [0-9]* / r /')"
# one SNAPSHOT where the core runs the read transaction on this PMU (the
# group's context), one a member where it runs it on the software leader's
n=$(echo $out | sed -n 's/.* R 3 \([0-9]*\) r .*/\1/p')
if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 2 ]; then
	tap_ok "software-led group read: $n SNAPSHOT(s) for 2 members"
else
	tap_fail "software-led group read: ${n:-?} SNAPSHOTs for 2 members (1 or 2): $out"
fi
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
