#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device removal with events open (issue 8, defect 17): the driver is
# unbound from the model's device through sysfs while an event counts.
# Nothing touches the device after it, and after the close the device binds
# again and counts exactly. The idle model moves only what is injected.
# run_in_vm checks dmesg. What the open event sees depends on the perf core:
#  - since 6.15 the unbind revokes it: it reads its last value, and the
#    device binds again at once;
#  - before, the PMU stays registered, frozen: a read of the group fails
#    with ENODEV, and a rebind is refused (EBUSY) while the event is open.
# Then the lab's close gate (debugfs ndk_pcie_tlm/close_gate) holds an
# event's close at the end of its ->destroy(), where the perf core still
# has the PMU to put (its context, the module reference). Before 6.15 a
# bind then must still be refused: the core is not done with the removed
# device's PMU, whose name the new one needs. Since 6.15 the unbind has
# revoked the event already, and its close must not reach ->destroy()
# again.

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
DRV=/sys/bus/platform/drivers/ndk-pcie-tlm
PDEV=ndk-pcie-tlm-sim.0
GATE=/sys/kernel/debug/ndk_pcie_tlm/close_gate
trap 'echo 0 > $GATE 2>/dev/null; echo $PDEV > $DRV/bind 2>/dev/null; pcie_unload' EXIT

tap_plan 8
if ! pcie_load || [ ! -d "$DEV" ]; then
	tap_fail "model and driver load"
	tap_done
fi
tap_ok "model and driver load"

A=words,ep=0,bus=0
f=/tmp/unbind.$$
out=$("$SEQ" "$PMU" o:$A e "x:echo '$A 10' > $DBG/inject" r \
	"x:echo $PDEV > $DRV/unbind; echo unbind \$? > $f" \
	"x:echo '$A 5' > $DBG/inject" "x:echo 0 > $DBG/stats" r \
	"x:sed -n 's/^reads //p' $DBG/stats >> $f" \
	"x:echo $PDEV > $DRV/bind 2>/dev/null; echo bind \$? >> $f" c 2>&1)
tap_diag "$out $(cat $f)"
if kver_ge 6.15; then
	after="r 10" rebind=0 how="revoked, reads its last count"
else
	after="r E19" rebind=1 how="frozen, group read ENODEV"
fi
tap_eq "counts before the removal, then $how" \
	"o ok r 10 $after" "$(echo $out)"
tap_eq "unbind with an event open succeeds" "unbind 0" "$(sed -n 1p $f)"
tap_eq "no register access after the removal" 0 "$(sed -n 2p $f)"
tap_eq "rebind while the old event is open: status $rebind" "bind $rebind" "$(sed -n 3p $f)"
rm -f $f
[ -e $DRV/$PDEV ] || echo $PDEV > $DRV/bind
out=$("$SEQ" "$PMU" o:$A e "x:echo '$A 3' > $DBG/inject" r c 2>&1)
tap_eq "after the close: rebinds and counts exactly" "o ok r 3" "$(echo $out)"

# gate_wait STATE: until close_gate reads STATE (bounded: 30 s)
gate_wait()
{
	local i

	for ((i = 0; i < 300; i++)); do
		[ "$(cat $GATE)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

"$SEQ" "$PMU" o:$A e "x:echo $PDEV > $DRV/unbind" "x:echo 1 > $GATE" c \
	> /dev/null 2>&1 &
seq=$!
if kver_ge 6.15; then
	# the close of the revoked event ends without a ->destroy()
	for ((i = 0; i < 300; i++)); do
		kill -0 $seq 2>/dev/null || break
		sleep 0.1
	done
	got="$(cat $GATE)"
	echo 0 > $GATE
	wait $seq
	tap_eq "the close of a revoked event does not reach ->destroy() again" "1 0" "$got"
else
	gate_wait "1 1"
	got="$(cat $GATE)"
	echo $PDEV > $DRV/bind 2>/dev/null
	b=$?
	echo 0 > $GATE
	wait $seq
	tap_eq "a bind while the perf core still holds the closed event's PMU is refused" \
		"1 1 1" "$got $b"
fi
echo 0 > $GATE
[ -e $DRV/$PDEV ] || echo $PDEV > $DRV/bind
out=$("$SEQ" "$PMU" o:$A e "x:echo '$A 4' > $DBG/inject" r c 2>&1)
tap_eq "then it binds and counts exactly" "o ok r 4" "$(echo $out)"
tap_done
