#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hwtel-vm: --acpi-ddr
#
# ACPI discovery of the DSS PMU through the real MMIO path. The guest is
# booted with scripts/vmrun --acpi-ddr: an SSDT (scripts/lab-acpi/ddr.asl)
# declares one device per variant over guest RAM that memmap= reserved, and
# that RAM is a file shared with the host ($HWTEL_ACPI_DDR_RAM; byte 0 is
# guest physical $HWTEL_ACPI_DDR_RAM_BASE). The test plants register values
# by writing the file; the driver (no model loaded) reads them with readq().
# The register offsets come from the register contract
# (/work/shared/reference/ddr-pmu-hw.md), not from the driver.

. "$(dirname "$0")/../lib.sh"
tap_require_lab
if [ ! -d /sys/bus/acpi/devices ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no ACPI in this guest (the arm64 lab has a device tree: dt.sh)"
	exit 4
fi

RAM=${HWTEL_ACPI_DDR_RAM:-}
RAM_BASE=${HWTEL_ACPI_DDR_RAM_BASE:-}
DRV=/sys/bus/platform/drivers/marvell-cn10k-ddr-pmu
DEVS=/sys/bus/event_source/devices
TMP=$(mktemp -d)
trap 'rmmod marvell_cn10k_ddr_pmu 2>/dev/null; rm -rf "$TMP"' EXIT

# The SSDT's devices: HID, ACPI name, base, and per the contract the
# counter 0 register, the free-running read counter and its width. Arrays,
# not functions: every fork costs under TCG.
VARIANTS="cn10k cn20k odyssey"
declare -A HID=([cn10k]=MRVL000A [cn20k]=MRVL000B [odyssey]=MRVL000C)
declare -A DSS=([cn10k]=DSS0 [cn20k]=DSS1 [odyssey]=DSS2)
declare -A BASE=([cn10k]=0x38000000 [cn20k]=0x38040000 [odyssey]=0x38080000)
declare -A CFG0=([cn10k]=0x8040 [cn20k]=0x20140 [odyssey]=0x20160)
declare -A CNT0=([cn10k]=0x8080 [cn20k]=0x201c0 [odyssey]=0x201c0)
declare -A FRRD=([cn10k]=0x80d8 [cn20k]=0x20258 [odyssey]=0x20258)
declare -A FRBITS=([cn10k]=48 [cn20k]=64 [odyssey]=64)
# the value planted in the generic counters during a count
declare -A GEN=([cn10k]=1000003 [cn20k]=2000029 [odyssey]=300000000007)
declare -A PMU=()
for v in $VARIANTS; do
	printf -v "PMU[$v]" 'mrvl_ddr_pmu_%x' "${BASE[$v]}"
done

. "$(dirname "$0")/fw_lib.sh"

tap_plan 41

if [ -z "$RAM" ] || [ ! -f "$RAM" ]; then
	tap_fail "the guest has the shared RAM file of vmrun --acpi-ddr" "HWTEL_ACPI_DDR_RAM='$RAM'"
	exit 1
fi

# Coherence of the two views (9p pwrite vs QEMU's shared mapping), before
# the driver claims the range: /dev/mem may still read it then (the debug
# kernel has no /dev/mem; the counts below prove the same direction, the
# CFG check the other one).
plant $((BASE[cn10k] + 0x100)) 0x1122334455667788
if [ -c /dev/mem ]; then
	got=$(dd if=/dev/mem bs=8 count=1 skip=$((BASE[cn10k] + 0x100)) iflag=skip_bytes status=none 2>&1 | od -An -tx8 | tr -d ' ')
	tap_eq "a value planted in the file is what guest physical memory holds" 1122334455667788 "$got"
else
	tap_skip "a value planted in the file is what guest physical memory holds" "no /dev/mem"
fi

grep -q '^marvell_cn10k_ddr_pmu ' /proc/modules && rmmod marvell_cn10k_ddr_pmu
range()
{
	printf '%x-%x : %s:00' "${BASE[$1]}" $((BASE[$1] + 0x2ffff)) "${HID[$1]}"
}
for v in $VARIANTS; do
	h=${HID[$v]}
	tap_eq "$v: ACPI device $h:00 exists" "\\_SB_.${DSS[$v]}" \
		"$(cat /sys/bus/acpi/devices/"$h":00/path 2>/dev/null)"
	tap_eq "$v: its memory resource is in /proc/iomem, in the reserved range" 1 \
		"$(grep -cF "$(range "$v")" /proc/iomem)"
	ma=$(cat /sys/bus/platform/devices/"$h":00/modalias 2>/dev/null)
	tap_eq "$v: platform device modalias" "acpi:$h:" "$ma"
	tap_eq "$v: the modalias resolves to the driver" marvell_cn10k_ddr_pmu \
		"$(modprobe -R "$ma" 2>&1)"
done
tap_check "modprobe \$(cat modalias) of ${HID[cn10k]}:00 loads the driver" \
	modprobe "$(cat /sys/bus/platform/devices/"${HID[cn10k]}":00/modalias)"
for v in $VARIANTS; do
	h=${HID[$v]}
	p=${PMU[$v]}
	tap_eq "$v: the driver is bound to $h:00" marvell-cn10k-ddr-pmu \
		"$(basename "$(readlink /sys/bus/platform/devices/"$h":00/driver)")"
	tap_eq "$v: it claimed the resource" 2 "$(grep -cF "$(range "$v")" /proc/iomem)"
	tap_eq "$v: PMU $p named after the resource, identifier $v" "$v" \
		"$(cat "$DEVS/$p/identifier" 2>/dev/null)"
done

fw_lists
for v in $VARIANTS; do
	fw_event_bits "$v"
done

count_eq "planted deltas counted exactly (generic and fixed read counter, across the wrap); one CFG programmed with enable and event 16"

# no unbind or bind through sysfs
fw_no_bind cn20k "${HID[cn20k]}:00"

# removal and reload by modalias
tap_check "rmmod marvell_cn10k_ddr_pmu" rmmod marvell_cn10k_ddr_pmu
tap_eq "no PMU left after rmmod" 0 "$(fw_npmus)"
tap_check "modprobe by the Odyssey modalias reloads it" \
	modprobe "$(cat /sys/bus/platform/devices/"${HID[odyssey]}":00/modalias)"
tap_eq "all three PMUs are back" 3 "$(fw_npmus)"
count_eq "after bind and reload the planted deltas are counted exactly"
tap_done
