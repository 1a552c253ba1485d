#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PCIe telemetry PMU on its model: perf list of the block, then perf stat of
# the counters behind a few columns of the seed's report, on the seed profile.

set -u
pmu=ndk_pcie_tlm_3fff00000000

cleanup()
{
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
}
trap cleanup EXIT

modprobe hwtel_sim_pcie profile=seed || exit 1
modprobe ndk_pcie_tlm || exit 1

echo "== PCIe telemetry PMU: $(cat /sys/bus/event_source/devices/$pmu/identifier)," \
	"$(cat /sys/bus/event_source/devices/$pmu/caps/endpoints) endpoint(s)," \
	"$(cat /sys/bus/event_source/devices/$pmu/caps/dma_ports) DMA port(s)"
echo
echo "\$ perf list $pmu"
perf list 2>/dev/null | grep "$pmu/"
echo
echo "== perf stat on the seed-example traffic, 1 s, one group per bus"
p=$pmu
echo "\$ perf stat -a -e {<pcie_cycles, RQ words, stall, frames, items, regions 0 and 3>} -e {<dma_cycles, UP ...>} -e {<brakes, tag bands>} -- sleep 1"
perf stat -a -e "{$p/pcie_cycles,ep=0/,$p/words,ep=0,bus=0/,$p/stall,ep=0,bus=0/,$p/frames,ep=0,bus=0/,$p/items,ep=0,bus=0/,$p/region,ep=0,bus=0,idx=0/,$p/region,ep=0,bus=0,idx=3/}" \
	-e "{$p/dma_cycles,ep=0/,$p/words,ep=0,bus=2/,$p/stall,ep=0,bus=2/,$p/mvb_items,ep=0,bus=2/,$p/frames,ep=0,bus=2/,$p/mvb_stall,ep=0,bus=2/}" \
	-e "{$p/pcie_cycles,ep=0/,$p/brake,ep=0,idx=0/,$p/brake,ep=0,idx=1/,$p/tags_band,ep=0,idx=0/,$p/tags_band,ep=0,idx=1/,$p/tags_band,ep=0,idx=2/,$p/tags_band,ep=0,idx=3/}" \
	-- sleep 1 2>&1

echo
echo "== the same counters as the seed report's columns (perf stat -x, one 1 s run)"
out=/tmp/demo-pcie.$$
perf stat -a -x, -o "$out" \
	-e "{$p/pcie_cycles,ep=0/,$p/words,ep=0,bus=0/,$p/stall,ep=0,bus=0/,$p/frames,ep=0,bus=0/,$p/items,ep=0,bus=0/,$p/region,ep=0,bus=0,idx=0/,$p/region,ep=0,bus=0,idx=1/,$p/region,ep=0,bus=0,idx=2/,$p/region,ep=0,bus=0,idx=3/}" \
	-e "{$p/dma_cycles,ep=0/,$p/words,ep=0,bus=2/,$p/stall,ep=0,bus=2/,$p/mvb_items,ep=0,bus=2/,$p/frames,ep=0,bus=2/,$p/mvb_stall,ep=0,bus=2/,$p/items,ep=0,bus=2/}" \
	-- sleep 1
grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1 | tr '\n' ' ' | awk '{
	c = $1; s = 1.0
	printf "PTC -> PCIe (RQ):  Used %.2f %%  Words %.2f %%  MFB stall %.2f %%  per region %.1f %.1f %.1f %.1f\n",
		100 * ($6 + $7 + $8 + $9) / (c * 4), 100 * $2 / c, 100 * $3 / c,
		100 * $6 / c, 100 * $7 / c, 100 * $8 / c, 100 * $9 / c
	printf "                   Avg B %.0f  (Gbps, Mpps need the interval: items x 4 B x 8 / s, frames / s)\n",
		$5 * 4 / $4
	d = $10
	printf "DMA0 -> PTC (UP):  Words %.2f %%  MFB stall %.2f %%  MVB stall %.2f %%  RD %.2f %%  Avg B %.0f\n",
		100 * $11 / d, 100 * $12 / d, 100 * $15 / d, 100 * ($13 - $14) / $13, $16 * 4 / $14
}'
rm -f "$out"
