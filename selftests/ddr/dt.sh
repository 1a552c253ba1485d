#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hwtel-vm: --acpi-ddr
#
# Device-tree discovery of the DSS PMU through the real MMIO path, on the
# arm64 lab (scripts/vmrun --kernel arm64 --acpi-ddr): QEMU's tree of -M virt
# plus scripts/lab-dt/ddr.dtsi, one node per compatible the driver matches
# in a device tree, over a reserved-memory (no-map) range of guest RAM that
# is a file shared with the host ($HWTEL_ACPI_DDR_RAM; byte 0 is guest
# physical $HWTEL_ACPI_DDR_RAM_BASE). The hardware flavour of the driver
# (no model seam) probes the nodes first, the lab flavour after a reload by
# modalias; the test plants register values by writing the file and both
# read them with readq(). On x86 (ACPI, no device tree) it skips; acpi.sh is
# the ACPI counterpart and shares its planting and counting (fw_lib.sh).
# Register offsets from the contract (/work/shared/reference/ddr-pmu-hw.md).

. "$(dirname "$0")/../lib.sh"
tap_require_lab
if [ ! -d /sys/firmware/devicetree/base ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no device tree in this guest (x86 has ACPI: acpi.sh)"
	exit 4
fi

RAM=${HWTEL_ACPI_DDR_RAM:-}
RAM_BASE=${HWTEL_ACPI_DDR_RAM_BASE:-}
DRV=/sys/bus/platform/drivers/marvell-cn10k-ddr-pmu
DEVS=/sys/bus/event_source/devices
DT=/sys/firmware/devicetree/base
# The hardware flavour of this kernel (scripts/arm64-lab build), beside the
# lab flavour that modprobe finds.
HW_KO=${HWTEL_BUILD%/arm64/build}/kmod-hw/$(uname -r)/drivers/perf/marvell_cn10k_ddr_pmu.ko
TMP=$(mktemp -d)
trap 'rmmod marvell_cn10k_ddr_pmu 2>/dev/null; rm -rf "$TMP"' EXIT

# The nodes of ddr.dtsi: compatible and base; per the contract the CFG(0)
# and counter 0 registers, the free-running read counter and its width.
VARIANTS="cn10k cn20k"
declare -A COMPAT=([cn10k]=marvell,cn10k-ddr-pmu [cn20k]=marvell,cn20k-ddr-pmu)
declare -A BASE=([cn10k]=0x78000000 [cn20k]=0x78040000)
declare -A CFG0=([cn10k]=0x8040 [cn20k]=0x20140)
declare -A CNT0=([cn10k]=0x8080 [cn20k]=0x201c0)
declare -A FRRD=([cn10k]=0x80d8 [cn20k]=0x20258)
declare -A FRBITS=([cn10k]=48 [cn20k]=64)
# the value planted in the generic counters during a count
declare -A GEN=([cn10k]=1000003 [cn20k]=300000000007)
declare -A PMU=() NODE=() PDEV=()
for v in $VARIANTS; do
	printf -v "PMU[$v]" 'mrvl_ddr_pmu_%x' "${BASE[$v]}"
	printf -v "NODE[$v]" 'ddr-pmu@%x' "${BASE[$v]}"
	printf -v "PDEV[$v]" '%x.ddr-pmu' "${BASE[$v]}"
done

. "$(dirname "$0")/fw_lib.sh"

tap_plan 29

if [ -z "$RAM" ] || [ ! -f "$RAM" ]; then
	tap_fail "the guest has the shared RAM file of vmrun --acpi-ddr" "HWTEL_ACPI_DDR_RAM='$RAM'"
	exit 1
fi

# No coherence check through /dev/mem as in acpi.sh: arm64's /dev/mem does
# not read no-map memory (EFAULT); the exact counts below prove the
# file-to-guest direction, the CFG check the other one.
grep -q '^marvell_cn10k_ddr_pmu ' /proc/modules && rmmod marvell_cn10k_ddr_pmu
range()
{
	printf '%x-%x : %s %s' "${BASE[$1]}" $((BASE[$1] + 0x2ffff)) "${PDEV[$1]}" "${NODE[$1]}"
}
tap_eq "the DSS range is reserved (reserved-memory, no-map), not System RAM" 1 \
	"$(grep -cF "$(printf '%x-%x : reserved' "${BASE[cn10k]}" $((BASE[cn10k] + 0xbffff)))" /proc/iomem)"
for v in $VARIANTS; do
	tap_eq "$v: node /${NODE[$v]} has compatible ${COMPAT[$v]}" "${COMPAT[$v]}" \
		"$(tr -d '\0' < "$DT/${NODE[$v]}/compatible" 2>/dev/null)"
	ma=$(cat /sys/bus/platform/devices/"${PDEV[$v]}"/modalias 2>/dev/null)
	tap_eq "$v: platform device ${PDEV[$v]} modalias" "of:Nddr-pmuT(null)C${COMPAT[$v]}" "$ma"
	tap_eq "$v: the modalias resolves to the driver" marvell_cn10k_ddr_pmu \
		"$(modprobe -R "$ma" 2>&1)"
done

# The hardware flavour: no model seam, plain readq() on the mapping.
tap_check "insmod the hardware flavour ($HW_KO)" insmod "$HW_KO"
for v in $VARIANTS; do
	p=${PMU[$v]}
	tap_eq "$v: the driver is bound to ${PDEV[$v]}" marvell-cn10k-ddr-pmu \
		"$(basename "$(readlink /sys/bus/platform/devices/"${PDEV[$v]}"/driver)")"
	tap_eq "$v: it claimed the node's reg in /proc/iomem" 1 "$(grep -cF "$(range "$v")" /proc/iomem)"
	tap_eq "$v: PMU $p named after the resource, identifier $v" "$v" \
		"$(cat "$DEVS/$p/identifier" 2>/dev/null)"
done

fw_lists
for v in $VARIANTS; do
	fw_event_bits "$v"
done

count_eq "hardware flavour: planted deltas counted exactly (generic and fixed read counter, across the wrap); one CFG programmed with enable and event 16"

# no unbind or bind through sysfs
fw_no_bind cn20k "${PDEV[cn20k]}"

# removal, and reload of the lab flavour by modalias
tap_check "rmmod marvell_cn10k_ddr_pmu" rmmod marvell_cn10k_ddr_pmu
tap_eq "no PMU left after rmmod" 0 "$(fw_npmus)"
tap_check "modprobe by the CN20K modalias loads the lab flavour" \
	modprobe "$(cat /sys/bus/platform/devices/"${PDEV[cn20k]}"/modalias)"
tap_eq "both PMUs are back" 2 "$(fw_npmus)"
count_eq "lab flavour: the planted deltas are counted exactly"
tap_done
