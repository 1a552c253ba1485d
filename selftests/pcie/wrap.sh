#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 64-bit totals from 33-bit counters across many wraps, under live traffic.
#
# The model runs the "busy" profile 20 times faster than real time (8e9 PCIe
# cycles/s: a 33-bit counter wraps about every 1.07 s) and the driver polls
# every 100 ms. Exact oracles:
#  - raw entry 4 is the MVB item counter of RQ (no MVB on RQ): traffic never
#    moves it, so its total is exactly what was injected: it starts 1000
#    below 2^33 and gets 8 x 6e9 (5.6 wraps);
# One-drain oracles (the block drains channels in slots, so any one read
# can fall between two channels' deltas of a drain: DRAIN_PERIOD 4096 x the
# largest increment per cycle, 1 for cycles, bands, words and stall):
#  - the four bands of each histogram sum to the PCIe cycles of the same
#    interval, which are several wraps long, within 4096;
#  - words + stall <= cycles on RQ, within 4096.

#
# The MI clock runs at 1000 MHz: 20 times faster probes send 20 times the
# deltas (at 125 MHz the accumulator's load would be 20 x 0.10 = 2.04, it
# would drop half of them and LOST DELTA would set, as on a block clocked
# so); at 1000 MHz the load is 0.26 and nothing is lost.
. "$(dirname "$0")/pcie_lib.sh"

trap pcie_unload EXIT

tap_plan 6
if ! pcie_load cnt_width=33 regions_up=1 regions_down=2 profile=busy speedup=20 \
	mi_mhz=1000 -- poll_ms=100 || [ ! -d "$DEV" ]; then
	tap_fail "model (33-bit, busy x20) and driver (poll 100 ms) load"
	tap_done
fi
tap_ok "model (33-bit, busy x20) and driver (poll 100 ms) load"

echo "raw,idx=4 $(((1 << 33) - 1000))" > "$DBG/set"
inj=
for i in 1 2 3 4 5 6 7 8; do
	inj+="echo 'raw,idx=4 6000000000' > $DBG/inject; sleep 0.4;"
done

out=/tmp/wrap.$$
g1="{$PMU/pcie_cycles,ep=0/,$PMU/tags_band,ep=0,idx=0/,$PMU/tags_band,ep=0,idx=1/,$PMU/tags_band,ep=0,idx=2/,$PMU/tags_band,ep=0,idx=3/}"
g2="{$PMU/pcie_cycles,ep=0/,$PMU/words,ep=0,bus=0/,$PMU/stall,ep=0,bus=0/}"
if ! pcie_stat "$out" "$PMU/raw,idx=4/" "$g1" "$g2" -- sh -c "$inj"; then
	tap_fail "perf stat runs" "$(cat "$out")"
	tap_done
fi
mapfile -t v < <(grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1)
tap_diag "counts: ${v[*]}"
tap_eq "idle entry: exactly 8 x 6e9 across 5 wraps" 48000000000 "${v[0]}"
D=4096
d=$((v[1] - (v[2] + v[3] + v[4] + v[5])))
if [ "$d" -ge -$D ] && [ "$d" -le $D ]; then
	tap_ok "tag bands sum to PCIe cycles within one drain (off by $d)"
else
	tap_fail "tag bands sum to PCIe cycles within one drain" "off by $d"
fi
if [ "${v[1]}" -gt $((3 << 33)) ]; then
	tap_ok "PCIe cycles span more than 3 wraps (${v[1]})"
else
	tap_fail "PCIe cycles span more than 3 wraps (${v[1]})"
fi
if [ $((v[7] + v[8])) -le $((v[6] + D)) ] && [ "${v[7]}" -gt $((1 << 33)) ]; then
	tap_ok "RQ words + stall <= cycles, words wrapped"
else
	tap_fail "RQ words + stall <= cycles, words wrapped" "${v[*]}"
fi
# busy RQ: words = floor(380/400 x cycles since the profile started), so over
# an interval words = 380/400 x cycles within one drain of words (4096) and
# the 1 of two floors
d=$((v[6] * 380 / 400 - v[7]))
if [ "$d" -ge $((-D - 1)) ] && [ "$d" -le $((D + 1)) ]; then
	tap_ok "RQ words = 380/400 x cycles (within one drain) across wraps (off by $d)"
else
	tap_fail "RQ words = 380/400 x cycles (within one drain) across wraps" "off by $d"
fi
rm -f "$out"
tap_done
