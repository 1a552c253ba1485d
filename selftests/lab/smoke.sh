#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lab itself: the right kernel, the scratch share, the pseudo
# filesystems, and a module of this tree that loads and unloads cleanly.

. "$(dirname "$0")/../lib.sh"
tap_require_lab

cleanup()
{
	modprobe -r hwtel_sim 2>/dev/null
}
trap cleanup EXIT

tap_eq "kernel release is the staged $HWTEL_KERNEL kernel" "$HWTEL_KVER" "$(uname -r)"

rt=$(cat /sys/kernel/realtime 2>/dev/null || echo 0)
case "$HWTEL_KERNEL" in
6.1)  tap_check "kernel is 6.1" grep -q '^6\.1\.' /proc/sys/kernel/osrelease ;;
6.12) tap_check "kernel is 6.12, not RT" \
	test "$(grep -c '^6\.12\.' /proc/sys/kernel/osrelease):$rt" = 1:0 ;;
6.12-rt) tap_check "kernel is 6.12 with PREEMPT_RT" \
	test "$(grep -c '^6\.12\..*-rt-amd64$' /proc/sys/kernel/osrelease):$rt" = 1:1 ;;
newest) tap_check "kernel is newer than 6.12" \
	test "$(printf '6.12.999\n%s\n' "$(uname -r)" | sort -V | tail -n1)" = "$(uname -r)" ;;
debug) tap_check "kernel is the debug kernel's release" test "$(uname -r)" = "$HWTEL_KVER" ;;
*)    tap_fail "kernel series known" "HWTEL_KERNEL=$HWTEL_KERNEL" ;;
esac

f=$HWTEL_SCRATCH/smoke.$$
echo hello > "$f"
tap_eq "scratch share is writable" hello "$(cat "$f")"
rm -f "$f"

# The host root is mounted read-only; only /tmp (an overlay), the scratch
# share and the pseudo file systems are writable.
tap_eq "host root is a read-only 9p mount" "9p ro" \
	"$(awk '$2 == "/" {split($4, o, ","); print $3, o[1]}' /proc/mounts | tail -n1)"
if touch /usr/.hwtel-ro-probe 2>/dev/null; then
	rm -f /usr/.hwtel-ro-probe
	tap_fail "writing to the host root fails"
else
	tap_ok "writing to the host root fails"
fi

for fs in proc sysfs devtmpfs debugfs configfs tmpfs; do
	tap_check "$fs is mounted" grep -q " $fs " /proc/mounts
done

tap_check "at least 4 CPUs online" test "$(nproc)" -ge 4
tap_eq "no hwtel module loaded before the test" "" \
	"$(grep -E '^(hwtel_|marvell_cn10k_ddr_pmu|ndk_pcie_tlm)' /proc/modules)"

before=$(dmesg_mark)
tap_check "modprobe hwtel_sim" modprobe hwtel_sim
tap_check "hwtel_sim is listed in /proc/modules" grep -q '^hwtel_sim ' /proc/modules
tap_check "debugfs root /sys/kernel/debug/hwtel-sim exists" test -d /sys/kernel/debug/hwtel-sim
tap_check "module taints only as out-of-tree/unsigned" \
	grep -qE '^[OE]+$' /sys/module/hwtel_sim/taint
tap_check "modprobe -r hwtel_sim" modprobe -r hwtel_sim
tap_check "debugfs root is gone after unload" test ! -e /sys/kernel/debug/hwtel-sim
new=$(dmesg_since "$before")
if grep -qE 'WARNING:|BUG:|Oops|Call Trace' <<< "$new"; then
	tap_fail "dmesg clean across load/unload" "$new"
else
	tap_ok "dmesg clean across load/unload"
fi

tap_done
