#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Errors a user of hwtel meets, each with its message and exit status:
# 2 bad options (usage on stderr), 3 no PMU (names the module to load),
# 4 EACCES/EPERM (perf_event_paranoid, CAP_PERFMON, root), 5 device vanished
# during watch.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 18 hwtel_sim_pcie ndk_pcie_tlm hwtel_sim_ddr marvell_cn10k_ddr_pmu
tap_plan 19

# expect_rc "desc" RC PATTERN CMD...: exit status RC, stderr matching PATTERN
expect_rc()
{
	local desc=$1 want=$2 pat=$3 rc

	shift 3
	"$@" > "$T/out" 2> "$T/err"
	rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$pat" "$T/err"; then
		tap_ok "$desc"
	else
		tap_fail "$desc" "exit $rc (want $want)" "stderr: $(cat "$T/err")"
	fi
}

# --- bad options -------------------------------------------------------
expect_rc "bad interval: exit 2 with usage" 2 '^usage: hwtel' "$HW" pcie -t abc
tap_check "bad option prints nothing on stdout" test ! -s "$T/out"
expect_rc "unknown option under the reference name: exit 2, its usage" 2 \
	'^usage: nfb-pcie-telemetry' "$NFB" --bogus
expect_rc "unknown command: exit 2" 2 "unknown command 'frobnicate'" "$HW" frobnicate

# --- no PMU -------------------------------------------------------------
pcie_down
ddr_down
expect_rc "no PCIe PMU: exit 3, says modprobe ndk_pcie_tlm" 3 'modprobe ndk_pcie_tlm' "$HW" pcie
expect_rc "nfb-pcie-telemetry without the driver: exit 3" 3 'modprobe ndk_pcie_tlm' "$NFB" -t 0
expect_rc "no DDR PMU: exit 3, says modprobe marvell_cn10k_ddr_pmu" 3 \
	'modprobe marvell_cn10k_ddr_pmu' "$HW" ddr
expect_rc "hwtel list with nothing loaded: exit 3" 3 'modprobe ndk_pcie_tlm' "$HW" list
pcie_up profile=idle || tap_fail "load the PCIe model and driver"
expect_rc "a PMU that does not exist: exit 3" 3 'no PMU ndk_pcie_tlm_1234' \
	"$HW" pcie -d ndk_pcie_tlm_1234
expect_rc "an instance that does not exist: exit 3" 3 'instance 5 does not exist' \
	"$HW" pcie -i 5

# --- permissions -------------------------------------------------------
# An unprivileged user with perf_event_paranoid 2 may not open system-wide
# uncore events, nor clear the block (CAP_PERFMON).
cp "$HW" "$T/hwtel" && chmod 755 "$T" "$T/hwtel"
old=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 2 > /proc/sys/kernel/perf_event_paranoid
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
expect_rc "EACCES: exit 4, mentions perf_event_paranoid" 4 'perf_event_paranoid' \
	"${nobody[@]}" "$T/hwtel" pcie -t 0.1
tap_check "EACCES message names CAP_PERFMON and root" grep -q 'CAP_PERFMON.*root' "$T/err"
expect_rc "clearing unprivileged: exit 4, names CAP_PERFMON" 4 'CAP_PERFMON' \
	"${nobody[@]}" "$T/hwtel" pcie -c
echo "$old" > /proc/sys/kernel/perf_event_paranoid

# --- output that cannot be written --------------------------------------
"$HW" list > /dev/full 2> "$T/err"
tap_eq "hwtel list > /dev/full: exit 1, says the output was not written" "1 1" \
	"$? $(grep -c 'cannot write the output: No space left on device' "$T/err")"
"$HW" pcie -t 0.05 -w -n 3 -x , > /dev/full 2> "$T/err"
rc=$?
# one message, with the write's errno (it was also "output: Input/output
# error" before main()'s own)
tap_eq "hwtel pcie -w -x , > /dev/full: exit 1 at the first interval, one message, ENOSPC" \
	"1 1 1" "$rc $(wc -l < "$T/err") $(grep -c 'cannot write the output: No space left on device' "$T/err")"

# --- the block does not answer -----------------------------------------
# The model holds SNAPSHOT BUSY for 200 ms, past the driver's wait: the
# kernel fails the totals read (ETIMEDOUT, with its own message, which a
# dump carries in its NLMSG_DONE). The tool must pass on that reason, not
# an "Input/output error" of its own.
echo 200000000 > "$PCIE_DBG/busy_ns"
expect_rc "SNAPSHOT timed out: exit 1, the kernel's errno" 1 'TOTALS_GET .* failed: Connection timed out' \
	"$HW" pcie -t 0
tap_check "and its message" grep -q 'SNAPSHOT did not complete' "$T/err"
echo 0 > "$PCIE_DBG/busy_ns"

# --- device vanished during watch ---------------------------------------
# With -t 0 the watch reads totals from the control plane only, so no perf
# event pins the driver: unloading it makes the device go away under the
# running tool.
"$HW" pcie -t 0 -w > "$T/w.out" 2> "$T/w.err" &
pid=$!
wait_for "$T/w.out" '^Totals since the last clear' 1 30
modprobe -r ndk_pcie_tlm
wait $pid
rc=$?
tap_eq "device vanished during watch: exit 5" "5" "$rc"
tap_check "and says the device vanished" grep -q 'vanished' "$T/w.err"
pcie_down

tap_done
