# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the PCIe telemetry selftests (sourced, not run).
#   pcie_load [MODEL PARAMS...] [-- DRIVER PARAMS...]  load model + driver
#   pcie_unload                                        unload both
#   pcie_pmu [I]        PMU name of model instance I (default 0)
#   pcie_stat OUT EVENTS... -- CMD...   perf stat -a -x, into OUT
#   pcie_count OUT N    value of the N-th (1-based) counter line of OUT
#   pcie_ivshmem        PCI address of the lab's ivshmem-plain function
#                       (scripts/vmrun --ivshmem), empty if there is none
#   pcie_bind PCI [DRV] bind function PCI to driver DRV only (none: unbind)

. "$(dirname "$0")/../lib.sh"
tap_require_lab

PCIE_SYS=/sys/bus/event_source/devices
PCIE_DBG=/sys/kernel/debug/hwtel-sim

pcie_pmu()
{
	printf 'ndk_pcie_tlm_%x\n' $((0x3fff00000000 + ${1:-0} * 0x100000))
}

PMU=$(pcie_pmu 0)
DEV=$PCIE_SYS/$PMU
DBG=$PCIE_DBG/$PMU

pcie_ivshmem()
{
	local d

	for d in /sys/bus/pci/devices/*; do
		if [ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ]; then
			echo "${d##*/}"
			return 0
		fi
	done
}

pcie_bind()
{
	local d=/sys/bus/pci/devices/$1

	[ -e "$d/driver" ] && echo "$1" > "$d/driver/unbind"
	echo "${2:-}" > "$d/driver_override"
	[ -z "${2:-}" ] || echo "$1" > /sys/bus/pci/drivers_probe
}

pcie_unload()
{
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
	return 0
}

pcie_load()
{
	local model=() drv=()

	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		model+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	drv=("$@")
	pcie_unload
	modprobe hwtel_sim_pcie "${model[@]}" || return 1
	modprobe ndk_pcie_tlm "${drv[@]}" || return 1
	return 0
}

# pcie_stat OUT EVENT... -- CMD...
pcie_stat()
{
	local out=$1 ev=()

	shift
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		ev+=(-e "$1")
		shift
	done
	shift
	perf stat -a -x, -o "$out" "${ev[@]}" -- "$@"
}

# value of the N-th counter line (1-based) of a perf stat -x, file
pcie_count()
{
	grep -v '^#' "$1" | grep -v '^$' | sed -n "${2}p" | cut -d, -f1
}

pcie_inject()
{
	echo "$1 $2" > "$DBG/inject"
}

pcie_stats()
{
	sed -n "s/^$1 //p" "$DBG/stats"
}
