#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wrap polling at the largest legal increments per cycle (issue 8, defect 2).
#
# Contract, "Verified behaviour": words, stall, regions grow by at most 1 per
# probe-clock cycle, frames and MVB items by one per probe region, MFB items
# by probe regions x items per region (region bytes / item bytes). The model
# runs both probes at 1000 MHz (the driver's default max_clock_mhz) with
# CNT_WIDTH 33 and the seed topology: RQ 4 regions x 32 B, UP 2 x 32 B, 4 B
# items, so RQ items grow by 32 per cycle and wrap every 2^33 / 32e9 = 0.27 s.
# The driver runs with its default parameters. One group per probe is read
# only once, after 4 s (about 15 wraps of the RQ items): every member must be
# exactly its per-cycle rate times the cycles of the same interval.

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
trap pcie_unload EXIT

tap_plan 14
# exact arithmetic: a model with drain-slot skew has an "ideal" switch
ideal=
modinfo -p hwtel_sim_pcie 2>/dev/null | grep -q '^ideal:' && ideal=ideal=1
if ! pcie_load cnt_width=33 pcie_mhz=500 dma_mhz=500 $ideal || [ ! -d "$DEV" ]; then
	tap_fail "model (33-bit, 500 MHz) and driver (defaults) load"
	tap_done
fi
tap_ok "model (33-bit, 500 MHz) and driver (defaults) load"

# rates are per second of the 400 MHz (PCIe) / 200 MHz (DMA) reference clock
if ! echo 'rq words=400000000 full=1 frames=1600000000; rc words=0 stall=400000000; up words=200000000 full=1 frames=400000000 mvb_items=400000000; down words=200000000 full=1 mvb_stall=200000000' > "$DBG/traffic"; then
	tap_fail "largest per-cycle traffic accepted"
	tap_done
fi
tap_ok "largest per-cycle traffic accepted"

mapfile -t out < <("$SEQ" "$PMU" \
	o:pcie_cycles,ep=0 g:words,ep=0,bus=0 g:frames,ep=0,bus=0 \
	g:items,ep=0,bus=0 g:region,ep=0,bus=0,idx=0 g:region,ep=0,bus=0,idx=3 \
	g:stall,ep=0,bus=1 \
	o:dma_cycles,ep=0 g:words,ep=0,bus=2 g:frames,ep=0,bus=2 \
	g:mvb_items,ep=0,bus=2 g:items,ep=0,bus=2 g:mvb_stall,ep=0,bus=3 \
	e s:6000 r)
tap_diag "${out[*]}"
read -r -a v <<< "$(printf '%s\n' "${out[@]}" | sed -n 's/^r //p')"
c=${v[0]:-0}
d=${v[7]:-0}
if [ "$c" -gt $((2 << 30)) ] && [ "$d" -gt $((2 << 30)) ]; then
	tap_ok "cycles of both probes counted ($c, $d)"
else
	tap_fail "cycles of both probes counted ($c, $d)"
fi
tap_eq "RQ words = 1 x cycles" "$c" "${v[1]}"
tap_eq "RQ frames = 4 x cycles (one per probe region)" "$((4 * c))" "${v[2]}"
tap_eq "RQ items = 32 x cycles (4 regions x 8 items, $((32 * c / (1 << 33))) wraps)" "$((32 * c))" "${v[3]}"
tap_eq "RQ region 0 = cycles" "$c" "${v[4]}"
tap_eq "RQ region 3 = cycles" "$c" "${v[5]}"
tap_eq "RC stall = cycles" "$c" "${v[6]}"
tap_eq "UP words = 1 x DMA cycles" "$d" "${v[8]}"
tap_eq "UP frames = 2 x DMA cycles" "$((2 * d))" "${v[9]}"
tap_eq "UP MVB items = 2 x DMA cycles" "$((2 * d))" "${v[10]}"
tap_eq "UP items = 16 x DMA cycles" "$((16 * d))" "${v[11]}"
tap_eq "DOWN MVB stall = DMA cycles" "$d" "${v[12]}"
tap_done
