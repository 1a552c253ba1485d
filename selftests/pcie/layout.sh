#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Layout decode: for several model topologies the driver's caps/, events/ and
# format/ follow the configuration registers exactly, the extremes of every
# field are accepted and the first value past them is rejected, and counters
# at the far end of the layout count exactly. A wrong MAGIC or major version
# makes the probe fail with one clear dmesg line and no PMU.

. "$(dirname "$0")/pcie_lib.sh"

trap pcie_unload EXIT

EVT=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_evt

# "name=content " for every file of a directory, without forking per file
dir_values()
{
	local f v out=

	for f in "$1"/*; do
		read -r v < "$f"
		out+="${f##*/}=$v "
	done
	echo "$out"
}

check_format_events()
{
	local t=$1 exp got

	got=$(dir_values "$DEV/format")
	tap_eq "$t: format/" "bus=config:16-31 ep=config:8-15 idx=config:32-47 kind=config:0-7 " "$got"
	exp="brake=kind=0xa,ep=?,idx=? dma_cycles=kind=0x2,ep=? frames=kind=0x5,ep=?,bus=? "
	exp+="items=kind=0x8,ep=?,bus=? mvb_items=kind=0x6,ep=?,bus=? mvb_stall=kind=0x7,ep=?,bus=? "
	exp+="pcie_cycles=kind=0x1,ep=? raw=kind=0xd,idx=? region=kind=0x9,ep=?,bus=?,idx=? "
	exp+="snapshot_ns=kind=0xe snapshot_ns.unit=ns "
	exp+="stall=kind=0x4,ep=?,bus=? stfifo_band=kind=0xc,ep=?,idx=? tags_band=kind=0xb,ep=?,idx=? "
	exp+="words=kind=0x3,ep=?,bus=? "
	got=$(dir_values "$DEV/events")
	tap_eq "$t: events/" "$exp" "$got"
}

# topology EPS PORTS RQ RC UP DOWN WIDTH BRQ BRC BUP BDOWN ITEM
topology()
{
	local eps=$1 ports=$2 rq=$3 rc=$4 up=$5 down=$6 w=$7
	local brq=$8 brc=$9 bup=${10} bdown=${11} item=${12}
	local t="eps=$eps ports=$ports regions=$rq/$rc/$up/$down w=$w"
	local rp rd pch dch cpe used ent exp got lastbus

	if ! pcie_load endpoints="$eps" dma_ports="$ports" regions_rq="$rq" \
		regions_rc="$rc" regions_up="$up" regions_down="$down" \
		cnt_width="$w" bytes_rq="$brq" bytes_rc="$brc" bytes_up="$bup" \
		bytes_down="$bdown" item_bytes="$item" || [ ! -d "$DEV" ]; then
		tap_fail "$t: model and driver load, PMU registered"
		return
	fi
	tap_ok "$t: model and driver load, PMU registered"

	rp=$((rq > rc ? rq : rc))
	rd=$((up > down ? up : down))
	pch=$((1 + 2 * (6 + rp) + 14))
	dch=$((1 + 2 * ports * (6 + rd)))
	cpe=$((pch + dch))
	used=$((eps * cpe))
	ent=1
	while [ $ent -lt $used ]; do ent=$((ent * 2)); done

	exp="brake_channels=14 bytes_down=$bdown bytes_rc=$brc bytes_rq=$brq bytes_up=$bup "
	exp+="cnt_width=$w counters_per_ep=$cpe dma_buses=$((2 * ports)) dma_channels=$dch "
	exp+="dma_ports=$ports dma_regions=$rd drain_period=4096 endpoints=$eps entries=$ent "
	exp+="hist_bands=4 hist_dma=0 hist_pcie=2 item_bytes=$item pcie_buses=2 "
	exp+="pcie_channels=$pch pcie_regions=$rp probes=$((2 * eps)) regions_down=$down "
	exp+="regions_rc=$rc regions_rq=$rq regions_up=$up stfifo_capacity=1024 tag_capacity=256 "
	got=$(dir_values "$DEV/caps")
	tap_eq "$t: caps/" "$exp" "$got"
	tap_eq "$t: identifier" "pcie_telemetry_mi 2.0" "$(cat "$DEV/identifier")"
	check_format_events "$t"

	# the far corner of every field: accepted and exact; one past: rejected.
	# The last raw entry is the last region of the last DOWN bus of the last
	# endpoint, so both see 7 + 11.
	lastbus=$((1 + 2 * ports))
	got=$("$EVT" "$PMU" "raw,idx=$((used - 1))" "raw,idx=$used" \
		"region,ep=$((eps - 1)),bus=$lastbus,idx=$((down - 1))" \
		"region,ep=0,bus=$((lastbus - 1)),idx=$((up - 1))" \
		"region,ep=0,bus=$lastbus,idx=$down" \
		"region,ep=0,bus=$((lastbus - 1)),idx=$up" \
		"region,ep=0,bus=0,idx=$rq" "region,ep=0,bus=1,idx=$rc" \
		"words,ep=0,bus=$((lastbus + 1))" "pcie_cycles,ep=$eps" \
		"stfifo_band,ep=$((eps - 1)),idx=3" "stfifo_band,ep=0,idx=4" \
		"brake,ep=$((eps - 1)),idx=5" "brake,ep=0,idx=6" \
		"dma_cycles,ep=$((eps - 1))" "config=$((1 << 48 | 1))" \
		-- "raw,idx=$((used - 1)) 7" \
		"region,ep=$((eps - 1)),bus=$lastbus,idx=$((down - 1)) 11" \
		"region,ep=0,bus=$((lastbus - 1)),idx=$((up - 1)) 13" \
		"stfifo_band,ep=$((eps - 1)),idx=3 17" \
		"brake,ep=$((eps - 1)),idx=5 19" "dma_cycles,ep=$((eps - 1)) 23" |
		tr '\n' ' ')
	tap_eq "$t: corners count exactly, one past them is EINVAL" \
		"18 E22 18 13 E22 E22 E22 E22 E22 E22 17 E22 19 E22 23 E22 " "$got"
	pcie_unload
}

# the seed's own configuration
topology 1 1 4 4 2 2 48 128 128 64 64 4
# 1 endpoint, 1 port, 2 regions everywhere; the narrowest counters (33 bits)
topology 1 1 2 2 2 2 33 64 64 64 64 4
# 2 endpoints, 2 ports, 4 regions; narrow UP (padding region) and other bytes
topology 2 2 4 4 3 4 48 128 64 96 128 8
# 16 endpoints; the widest counters (64 bits)
topology 16 1 4 4 2 2 64 128 128 64 64 4

# probe refusals
probe_refused()
{
	local desc=$1 line=$2 mark

	shift 2
	pcie_unload
	mark=$(dmesg_mark)
	if ! modprobe hwtel_sim_pcie "$@" || ! modprobe ndk_pcie_tlm; then
		tap_fail "$desc: modules load"
		return
	fi
	if [ -e "$DEV" ]; then
		tap_fail "$desc: no PMU registered" "$DEV exists"
	else
		tap_ok "$desc: no PMU registered"
	fi
	tap_eq "$desc: one dmesg line" 1 "$(dmesg_since "$mark" | grep -c "$line")"
	pcie_unload
}

probe_refused "bad MAGIC" "MAGIC does not match: not a PCIE_TELEMETRY_MI block" magic=0x12345678
probe_refused "major version 3" "version 3.1 not supported (major must be 2)" version=0x30001
probe_refused "major version 1" "version 1.0 not supported (major must be 2)" version=0x10000

if pcie_load version=0x20007 && [ -d "$DEV" ]; then
	tap_eq "minor version 7 accepted, identifier shows it" \
		"pcie_telemetry_mi 2.7" "$(cat "$DEV/identifier")"
else
	tap_fail "minor version 7 accepted, identifier shows it"
fi
pcie_unload

tap_done
