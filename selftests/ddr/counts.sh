#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Exact counts through perf stat on every variant: full and short event
# names, raw ids, the fixed read/write counters (by raw id in bursts, by
# name in MiB), generic counters, the 4-bit
# low-power events, CN20K's CFG1 (ZQ) events, and 8 generic + 2 fixed
# events at once. Traffic is injected into the model from inside the
# measured command, so every count is deterministic.

. "$(dirname "$0")/ddr_lib.sh"

# Eight generic events of each variant, the last ones variant specific
declare -A eight=(
	[cn10k]="ddr_cam_read ddr_cam_write ddr_hif_rd_access ddr_refresh ddr_dif_rd_data_access ddr_hpr_req_with_nocredit ddr_zqlatch ddr_enter_mpsm"
	[odyssey]="ddr_cam_read ddr_cam_write ddr_hif_rd_access ddr_refresh ddr_dfi_rd_data_access ddr_retry_fifo_full ddr_rd_crc_error ddr_enter_mpsm"
	[cn20k]="ddr_cam_read ddr_cam_write ddr_hif_rd_access ddr_refresh ddr_cas_ws ddr_read16 ddr_zqstart ddr_zqlatch"
)
declare -A lowpower=(
	[cn10k]="ddr_enter_selfref ddr_enter_powerdown ddr_enter_mpsm"
	[odyssey]="ddr_enter_selfref ddr_enter_powerdown ddr_enter_mpsm"
	[cn20k]="ddr_enter_selfref ddr_enter_powerdown"
)

tap_plan 30
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1; then
		tap_fail "$v: model and driver load"
		continue
	fi
	p=$(ddr_pmu "$v")
	inj=$DDR_DBG/$p/inject

	# traffic before the measurement must not show up in it
	echo 'ddr_cam_read 999' > "$inj"
	echo 'ddr_ddr_reads 999' > "$inj"

	# One session: a full name, a short name, a raw id (0x13 =
	# ddr_precharge) injected by id, both fixed counters, and the 4-bit
	# low-power events. The model spreads low-power occurrences over the
	# 4 rank lines, so a bitmap of fewer than 4 bits would lose some of 13.
	evs="$p/ddr_cam_read/,ddr_cam_write,$p/event=0x13/,$p/event=0x65/,$p/event=0x64/"
	cmd="echo 'ddr_cam_read 1000' > $inj; echo 'ddr_cam_write 2000' > $inj;"
	cmd+=" echo '19 4242' > $inj; echo 'ddr_ddr_reads 12345' > $inj;"
	cmd+=" echo '100 678' > $inj;"
	lp=
	for e in ${lowpower[$v]}; do
		evs+=",$p/$e/"
		cmd+=" echo '$e 13' > $inj;"
		lp+=$'\n'"13,$p/$e/"
	done
	out=$(ddr_stat "$evs" -- sh -c "$cmd")
	line() { echo "$out" | sed -n "${1}p"; }
	tap_eq "$v: $p/ddr_cam_read/ counts exactly the 1000 injected" \
		"1000,$p/ddr_cam_read/" "$(line 1)"
	tap_eq "$v: short name ddr_cam_write" "2000,ddr_cam_write" "$(line 2)"
	tap_eq "$v: raw event=0x13, injected by id 19" "4242,$p/event=0x13/" "$(line 3)"
	tap_eq "$v: fixed counters by raw id, in bursts (0x65 reads, 0x64 writes)" \
		"$(printf '12345,%s\n678,%s' "$p/event=0x65/" "$p/event=0x64/")" \
		"$(line 4; line 5)"

	# by name perf scales them to MiB (.scale, .unit): 2^14 bursts of
	# 64 B are 1 MiB
	raw=$(ddr_stat_raw "$p/ddr_ddr_reads/,$p/ddr_ddr_writes/" -- \
		sh -c "echo 'ddr_ddr_reads 16384' > $inj; echo 'ddr_ddr_writes 8192' > $inj")
	tap_eq "$v: perf stat prints the fixed counters in MiB" \
		"$(printf '1.00,MiB,%s\n0.50,MiB,%s' "$p/ddr_ddr_reads/" "$p/ddr_ddr_writes/")" \
		"$(echo "$raw" | cut -d, -f1-3)"
	tap_eq "$v: 4-bit low-power events count all rank lines" \
		"${lp#$'\n'}" "$(echo "$out" | sed -n '6,$p')"

	# 8 generic + 2 fixed at once, each with its own count
	evs="$p/event=0x65/,$p/event=0x64/,"
	cmd="echo 'ddr_ddr_reads 7' > $inj; echo 'ddr_ddr_writes 9' > $inj; "
	exp="7,$p/event=0x65/"$'\n'"9,$p/event=0x64/"$'\n'
	k=100
	for e in ${eight[$v]}; do
		evs+="$p/$e/,"
		cmd+="echo '$e $k' > $inj; "
		exp+="$k,$p/$e/"$'\n'
		k=$((k + 11))
	done
	raw=$(ddr_stat_raw "${evs%,}" -- sh -c "$cmd")
	tap_eq "$v: 8 generic + 2 fixed events at once, exact" \
		"${exp%$'\n'}" "$(echo "$raw" | cut -d, -f1,3)"
	tap_eq "$v: none of the 10 multiplexed (all at 100%)" "10" \
		"$(echo "$raw" | cut -d, -f5 | grep -c '^100.00$')"

	tap_eq "$v: driver touched no unmapped register" "unmapped 0" \
		"$(grep unmapped "$DDR_DBG/$p/stats")"
	tap_check "$v: all counters disabled after the last event" \
		sh -c "! grep -q 'cfg 0x8' $DDR_DBG/$p/regs"
	ddr_unload
done
tap_done
