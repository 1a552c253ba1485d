#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Exact counts: `perf stat` counts exactly the deltas injected into the
# model, for every counter kind (all buses, regions, stop reasons, bands,
# raw entries), for two events on one counter, and for a delta of 2^40.
# The model runs the idle profile, so nothing but the injections moves.

. "$(dirname "$0")/pcie_lib.sh"

trap pcie_unload EXIT

tap_plan 6
if ! pcie_load || [ ! -d "$DEV" ]; then
	tap_fail "model and driver load"
	tap_done
fi
tap_ok "model and driver load"

specs=(
	pcie_cycles,ep=0 dma_cycles,ep=0 words,ep=0,bus=0 stall,ep=0,bus=1
	frames,ep=0,bus=2 mvb_items,ep=0,bus=2 mvb_stall,ep=0,bus=3
	items,ep=0,bus=3 region,ep=0,bus=0,idx=3 region,ep=0,bus=1,idx=0
	region,ep=0,bus=2,idx=1 region,ep=0,bus=3,idx=0
	brake,ep=0,idx=0 brake,ep=0,idx=1 brake,ep=0,idx=2 brake,ep=0,idx=3
	brake,ep=0,idx=4 brake,ep=0,idx=5
	tags_band,ep=0,idx=0 tags_band,ep=0,idx=1 tags_band,ep=0,idx=2
	tags_band,ep=0,idx=3 stfifo_band,ep=0,idx=0 stfifo_band,ep=0,idx=1
	stfifo_band,ep=0,idx=2 stfifo_band,ep=0,idx=3 raw,idx=20 raw,idx=51
)
ev=()
inj=
exp=
i=0
for s in "${specs[@]}"; do
	ev+=("$PMU/$s/")
	inj+="echo '$s $((1000 + i * 7))' > $DBG/inject;"
	exp+="$((1000 + i * 7)) "
	i=$((i + 1))
done

out=/tmp/counts.$$
if pcie_stat "$out" "${ev[@]}" -- sh -c "$inj"; then
	got=$(grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1 | tr '\n' ' ')
	tap_eq "perf stat: every kind counts its injected delta exactly" "$exp" "$got"
else
	tap_fail "perf stat: every kind counts its injected delta exactly" "$(cat "$out")"
fi

# two events on one counter (same entry through two names), one big delta
if pcie_stat "$out" "$PMU/words,ep=0,bus=2/" "$PMU/words,ep=0,bus=2/" \
	"$PMU/raw,idx=36/" "$PMU/items,ep=0,bus=0/" -- \
	sh -c "echo 'words,ep=0,bus=2 555' > $DBG/inject; echo 'items,ep=0,bus=0 1099511627776' > $DBG/inject"; then
	got=$(grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1 | tr '\n' ' ')
	tap_eq "same counter through three events; delta 2^40" \
		"555 555 555 1099511627776 " "$got"
else
	tap_fail "same counter through three events; delta 2^40" "$(cat "$out")"
fi

# a group of every kind of one bus, injected while it counts
if pcie_stat "$out" "{$PMU/words,ep=0,bus=3/,$PMU/stall,ep=0,bus=3/,$PMU/frames,ep=0,bus=3/,$PMU/region,ep=0,bus=3,idx=1/}" -- \
	sh -c "echo 'words,ep=0,bus=3 40' > $DBG/inject; echo 'stall,ep=0,bus=3 41' > $DBG/inject; echo 'frames,ep=0,bus=3 42' > $DBG/inject; echo 'region,ep=0,bus=3,idx=1 43' > $DBG/inject"; then
	got=$(grep -v '^#' "$out" | grep -v '^$' | cut -d, -f1 | tr '\n' ' ')
	tap_eq "group of one bus counts exactly" "40 41 42 43 " "$got"
else
	tap_fail "group of one bus counts exactly" "$(cat "$out")"
fi
rm -f "$out"

# wraps at both ends of the counter widths: 3 below the top, plus 10
EVT=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_evt
for w in 33 64; do
	top=$(echo "2^$w - 3" | bc)
	if pcie_load cnt_width=$w && echo "raw,idx=7 $top" > "$DBG/set"; then
		got=$("$EVT" "$PMU" raw,idx=7 words,ep=0,bus=0 -- "raw,idx=7 10" "words,ep=0,bus=0 4")
		tap_eq "CNT_WIDTH $w: counter 3 below 2^$w plus 10 counts 10" "10 4" "$(echo $got)"
	else
		tap_fail "CNT_WIDTH $w: counter 3 below 2^$w plus 10 counts 10"
	fi
done
tap_done
