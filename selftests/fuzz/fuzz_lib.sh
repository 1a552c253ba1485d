# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the fuzz and stress wrappers (sourced, not run).
#   fz_load      load both models (2 instances each) and both drivers
#   fz_unload    unload them
#   fz_online    bring every CPU back online
#   FZ_BIN       directory of the fuzz binaries
#   FZ_SEED      seed for this run: $HWTEL_FUZZ_SEED, else one from the clock
#   fz_budget DEBUG OTHER   $DEBUG on the debug kernel, $OTHER elsewhere

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
tap_require_lab

FZ_BIN=${HWTEL_BUILD:?}/selftests-bin/fuzz
FZ_SEED=${HWTEL_FUZZ_SEED:-$(( $(date +%s%N) & 0xffffffffffff ))}

fz_unload()
{
	local m

	for m in marvell_cn10k_ddr_pmu ndk_pcie_tlm hwtel_sim_ddr hwtel_sim_pcie hwtel_sim; do
		[ -d /sys/module/$m ] && rmmod $m 2>/dev/null
	done
	return 0
}

fz_load()
{
	fz_unload
	modprobe hwtel_sim_ddr variant=${1:-cn10k} instances=2 &&
		taskset -c 1 modprobe marvell_cn10k_ddr_pmu &&
		modprobe hwtel_sim_pcie instances=2 &&
		taskset -c 1 modprobe ndk_pcie_tlm
}

fz_online()
{
	local c

	for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 > "$c"
	done 2>/dev/null
	return 0
}

fz_budget()
{
	if [ "${HWTEL_KERNEL:-}" = debug ]; then echo "$1"; else echo "$2"; fi
}
