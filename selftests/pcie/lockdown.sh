#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hwtel-vm: --cpus 2
#
# Kernel lockdown and ATTACH (issue 18): ATTACH maps a window of a PCI BAR,
# which lockdown forbids from its integrity level on (LOCKDOWN_PCI_ACCESS),
# as it forbids the PCI core's sysfs resource files. A level can only be
# raised, so this program has a guest of its own (the hwtel-vm line makes
# it a group of one); the driver is loaded before the level is raised,
# since unsigned lab modules cannot load after it.

. "$(dirname "$0")/pcie_lib.sh"

HW=$(command -v hwtel)
T=$(mktemp -d)
trap 'modprobe -r ndk_pcie_tlm 2>/dev/null; [ -z "$PCI" ] || pcie_bind "$PCI"; rm -rf "$T"' EXIT
PCI=$(pcie_ivshmem)
LD=/sys/kernel/security/lockdown
[ -e "$LD" ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null

tap_plan 3
if [ -z "$PCI" ] || [ ! -w "$LD" ] || ! command -v dtc > /dev/null; then
	for i in 1 2 3; do
		tap_skip "no ivshmem-plain device, no lockdown LSM or no dtc"
	done
	tap_done
fi

# one node on an unplanted window (zeros: no block there)
cat > "$T/card.dts" <<'DTS'
/dts-v1/;
/ {
	firmware {
		mi_bus0 {
			#address-cells = <1>;
			#size-cells = <1>;
			compatible = "netcope,bus,mi";
			resource = "PCI0,BAR2";
			pcie_telemetry@20000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x20000 0x10000>;
			};
		};
	};
};
DTS
dtc -I dts -O dtb -o "$T/card.dtb" "$T/card.dts"
# the lab has no nfb: the function goes to pci-stub, which ATTACH is told
# to accept (nfb_mmio.sh checks that the default refuses it)
modprobe pci-stub
pcie_bind "$PCI" pci-stub
modprobe ndk_pcie_tlm pci_drivers=nfb,pci-stub

out=$("$HW" nfb attach --fdt "$T/card.dtb" --pci "$PCI" -i 0 2>&1)
tap_eq "not locked down: ATTACH reads the window (no block there: exit 1)" \
	"1 1" "$? $(grep -c 'no usable PCIE_TELEMETRY_MI block' <<< "$out")"

echo integrity > "$LD"
out=$("$HW" nfb attach --fdt "$T/card.dtb" --pci "$PCI" -i 0 2>&1)
tap_eq "locked down (integrity): ATTACH refused with EPERM, exit 4, the tool names lockdown" \
	"4 1" "$? $(grep -c 'the kernel is locked down' <<< "$out")"
tap_diag "$out"
tap_eq "and no instance was made" 0 \
	"$(ls /sys/bus/event_source/devices | grep -c '^ndk_pcie_tlm_')"
tap_done
