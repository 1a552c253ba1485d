#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel on the models: the PCIe report on the seed-example profile (the
# reference tool's report, live), the same under the reference tool's name,
# and the DDR report on live model traffic.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make demo)}/tools/hwtel
nfb=$HWTEL_BUILD/tools/nfb-pcie-telemetry

cleanup()
{
	modprobe -r ndk_pcie_tlm hwtel_sim_pcie 2>/dev/null
	modprobe -r marvell_cn10k_ddr_pmu hwtel_sim_ddr 2>/dev/null
}
trap cleanup EXIT

say() { printf '\n$ %s\n' "$*"; }

modprobe hwtel_sim_pcie profile=seed && modprobe ndk_pcie_tlm || exit 1
say "hwtel list   (PCIe part)"
"$hw" list | head -15
say "hwtel pcie -t 1"
"$hw" pcie -t 1
say "nfb-pcie-telemetry -t 0   (totals since the driver cleared at probe)"
"$nfb" -t 0 | head -22
say "hwtel pcie -t 0.5 -x ,   (first lines)"
"$hw" pcie -t 0.5 -x , | head -8
say "hwtel pcie -- sh -c 'echo lost_delta > .../flags'   (a provoked flag)"
"$hw" pcie -- sh -c "echo lost_delta > /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00000000/flags" | head -8
modprobe -r ndk_pcie_tlm hwtel_sim_pcie

modprobe hwtel_sim_ddr variant=odyssey && modprobe marvell_cn10k_ddr_pmu || exit 1
pmu=$(ls /sys/bus/event_source/devices | grep mrvl_ddr_pmu_ | head -1)
dbg=/sys/kernel/debug/hwtel-sim/$pmu
# steady traffic: 150 M reads/s, 60 M writes/s of 64 B; HIF and DFI events,
# hazards, turnarounds, refresh and power-down entries
for r in "ddr_ddr_reads 150000000" "ddr_ddr_writes 60000000" \
	 "ddr_hif_rd_or_wr_access 210000000" "ddr_hif_rd_access 150000000" \
	 "ddr_hif_wr_access 55000000" "ddr_hif_rmw_access 5000000" \
	 "ddr_dfi_rd_data_access 300000000" "ddr_dfi_wr_data_access 120000000" \
	 "ddr_rdwr_transitions 2000000"; do
	echo "$r" > "$dbg/rate" || echo "(rate '$r' refused)"
done
for r in "ddr_raw_hazard 21000" "ddr_war_hazard 4200" "ddr_refresh 128000" \
	 "ddr_enter_powerdown 50"; do
	echo "$r" > "$dbg/rate" || echo "(rate '$r' refused)"
done
say "hwtel ddr -t 1   (Odyssey model, live traffic; generic events multiplexed)"
"$hw" ddr -t 1
say "hwtel ddr -t 1 -e ddr_hif_rd_access,ddr_hif_wr_access,ddr_dfi_rd_data_access,ddr_dfi_wr_data_access,ddr_raw_hazard   (exact)"
"$hw" ddr -t 1 -e ddr_hif_rd_access,ddr_hif_wr_access,ddr_dfi_rd_data_access,ddr_dfi_wr_data_access,ddr_raw_hazard
exit 0
