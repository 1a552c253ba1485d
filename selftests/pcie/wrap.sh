#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 64-bit totals from 33-bit counters across many wraps, under live traffic.
#
# The model runs the "busy" profile 20 times faster than real time (8e9 PCIe
# cycles/s: a 33-bit counter wraps about every 1.07 s) and the driver polls
# every 100 ms. Exact oracles:
#  - raw entry 43 is padding region 1 of the UP bus (regions_up=1 on a probe
#    with 2 regions): traffic never moves it, so its total is exactly what
#    was injected: it starts 1000 below 2^33 and gets 8 x 6e9 (5.6 wraps);
#  - the four bands of each histogram sum exactly to the PCIe cycles of the
#    same interval, which are several wraps long;
#  - words + stall <= cycles on RQ.

. "$(dirname "$0")/pcie_lib.sh"

trap pcie_unload EXIT

tap_plan 6
if ! pcie_load cnt_width=33 regions_up=1 regions_down=2 profile=busy speedup=20 \
	-- poll_ms=100 || [ ! -d "$DEV" ]; then
	tap_fail "model (33-bit, busy x20) and driver (poll 100 ms) load"
	tap_done
fi
tap_ok "model (33-bit, busy x20) and driver (poll 100 ms) load"

echo "raw,idx=43 $(((1 << 33) - 1000))" > "$DBG/set"
inj=
for i in 1 2 3 4 5 6 7 8; do
	inj+="echo 'raw,idx=43 6000000000' > $DBG/inject; sleep 0.4;"
done

out=/tmp/wrap.$$
g1="{$PMU/pcie_cycles,ep=0/,$PMU/tags_band,ep=0,idx=0/,$PMU/tags_band,ep=0,idx=1/,$PMU/tags_band,ep=0,idx=2/,$PMU/tags_band,ep=0,idx=3/}"
g2="{$PMU/pcie_cycles,ep=0/,$PMU/words,ep=0,bus=0/,$PMU/stall,ep=0,bus=0/}"
if ! pcie_stat "$out" "$PMU/raw,idx=43/" "$g1" "$g2" -- sh -c "$inj"; then
	tap_fail "perf stat runs" "$(cat "$out")"
	tap_done
fi
mapfile -t v < <(grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1)
tap_diag "counts: ${v[*]}"
tap_eq "padding entry: exactly 8 x 6e9 across 5 wraps" 48000000000 "${v[0]}"
tap_eq "tag bands sum to PCIe cycles" "${v[1]}" "$((v[2] + v[3] + v[4] + v[5]))"
if [ "${v[1]}" -gt $((3 << 33)) ]; then
	tap_ok "PCIe cycles span more than 3 wraps (${v[1]})"
else
	tap_fail "PCIe cycles span more than 3 wraps (${v[1]})"
fi
if [ $((v[7] + v[8])) -le "${v[6]}" ] && [ "${v[7]}" -gt $((1 << 33)) ]; then
	tap_ok "RQ words + stall <= cycles, words wrapped"
else
	tap_fail "RQ words + stall <= cycles, words wrapped" "${v[*]}"
fi
# busy RQ: words = floor(380/400 x cycles since the profile started), so over
# an interval words = 380/400 x cycles within 1 (difference of two floors)
d=$((v[6] * 380 / 400 - v[7]))
if [ "$d" -ge -1 ] && [ "$d" -le 1 ]; then
	tap_ok "RQ words = 380/400 x cycles (within the 1 of two floors) across wraps"
else
	tap_fail "RQ words = 380/400 x cycles (within the 1 of two floors) across wraps" "off by $d"
fi
rm -f "$out"
tap_done
