#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sysfs of the DDR PMU on every variant: PMU names from the MMIO bases, the
# exact event list of the variant (names and ids), format, cpumask,
# identifier, and the model's debugfs directory.

. "$(dirname "$0")/ddr_lib.sh"

common="ddr_hif_rd_or_wr_access 1
ddr_hif_wr_access 2
ddr_hif_rd_access 3
ddr_hif_rmw_access 4
ddr_hif_pri_rdaccess 5
ddr_rd_bypass_access 6
ddr_act_bypass_access 7
ddr_hpri_sched_rd_crit_access 10
ddr_lpri_sched_rd_crit_access 11
ddr_wr_trxn_crit_access 12
ddr_cam_active_access 13
ddr_cam_rd_or_wr_access 14
ddr_cam_rd_active_access 15
ddr_cam_read 16
ddr_cam_write 17
ddr_cam_mwr 18
ddr_precharge 19
ddr_precharge_for_rdwr 20
ddr_precharge_for_other 21
ddr_rdwr_transitions 22
ddr_write_combine 23
ddr_war_hazard 24
ddr_raw_hazard 25
ddr_waw_hazard 26
ddr_enter_selfref 27
ddr_enter_powerdown 31
ddr_refresh 39
ddr_crit_ref 40
ddr_spec_ref 41
ddr_load_mode 42
ddr_ddr_writes 100
ddr_ddr_reads 101"

cn10k_ody="ddr_enter_mpsm 35
ddr_zqcl 43
ddr_cam_wr_access 44
ddr_bsm_alloc 47
ddr_bsm_starvation 48
ddr_win_limit_reached_rd 49
ddr_win_limit_reached_wr 50
ddr_dqsosc_mpc 51
ddr_dqsosc_mrr 52
ddr_tcr_mrr 53
ddr_zqstart 54
ddr_zqlatch 55"

expected_events()
{
	{
		{
			echo "$common"
			case "$1" in
			cn10k)
				echo "$cn10k_ody"
				printf '%s\n' "ddr_dif_wr_data_access 8" \
					"ddr_dif_rd_data_access 9" \
					"ddr_hpr_req_with_nocredit 45" \
					"ddr_lpr_req_with_nocredit 46"
				;;
			odyssey)
				echo "$cn10k_ody"
				printf '%s\n' "ddr_dfi_wr_data_access 8" \
					"ddr_dfi_rd_data_access 9" "ddr_dfi_cycles 45" \
					"ddr_retry_fifo_full 46" "ddr_dfi_parity_poison 56" \
					"ddr_wr_crc_error 57" "ddr_capar_error 58" \
					"ddr_rd_crc_error 59" "ddr_rd_uc_ecc_error 60" \
					"ddr_dfi_cmd_is_retry 61"
				;;
			cn20k)
				printf '%s\n' "ddr_dfi_wr_data_access 8" \
					"ddr_dfi_rd_data_access 9" "ddr_cas_ws 36" \
					"ddr_cas_ws_off 37" "ddr_cas_wck_sus 38" \
					"ddr_rfm 43" "ddr_enter_dsm 44" "ddr_dfi_cycles 45" \
					"ddr_win_limit_reached_rd 46" \
					"ddr_win_limit_reached_wr 47" "ddr_dqsosc_mpc 48" \
					"ddr_dqsosc_mrr 49" "ddr_tcr_mrr 50" \
					"ddr_write32 58" "ddr_write16 59" "ddr_read32 60" \
					"ddr_read16 61" "ddr_zqlatch 62" "ddr_zqstart 63"
				;;
			esac
		} | while read -r name id; do
			printf '%s event=0x%02x\n' "$name" "$id"
		done
		# the fixed counters' unit: a 64-byte burst is 2^-14 MiB
		printf '%s\n' "ddr_ddr_reads.scale 6.103515625e-5" \
			"ddr_ddr_reads.unit MiB" "ddr_ddr_writes.scale 6.103515625e-5" \
			"ddr_ddr_writes.unit MiB"
	} | sort
}

actual_events()
{
	(cd "$DDR_DEVS/$1/events" && grep -H . -- *) | sed 's/:/ /' | sort
}

declare -A count=([cn10k]=48 [odyssey]=54 [cn20k]=51)

tap_plan 34
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 2; then
		tap_fail "$v: model and driver load"
		continue
	fi
	p0=$(ddr_pmu "$v" 0)
	p1=$(ddr_pmu "$v" 1)
	tap_eq "$v: two PMUs named after their MMIO bases" \
		"$p0 $p1" "$(ls "$DDR_DEVS" | grep '^mrvl_ddr_pmu_' | sort | xargs)"
	exp=$(expected_events "$v")
	tap_eq "$v: exact event list ($(echo "$exp" | wc -l) events)" \
		"$exp" "$(actual_events "$p0")"
	tap_eq "$v: event count" "${count[$v]}" "$(echo "$exp" | grep -vc '\.')"
	tap_eq "$v: second instance has the same list" "$exp" "$(actual_events "$p1")"
	tap_eq "$v: format/event" "config:0-8" "$(cat "$DDR_DEVS/$p0/format/event")"
	tap_eq "$v: only format/event" "event" "$(ls "$DDR_DEVS/$p0/format" | xargs)"
	tap_eq "$v: cpumask is the probing CPU" "1" "$(cat "$DDR_DEVS/$p0/cpumask")"
	tap_eq "$v: identifier" "$v" "$(cat "$DDR_DEVS/$p0/identifier")"
	tap_check "$v: model debugfs directory" test -w "$DDR_DBG/$p0/inject"
	tap_eq "$v: driver touched no unmapped register" "unmapped 0" \
		"$(grep unmapped "$DDR_DBG/$p0/stats")"
	if perf list pmu 2>/dev/null | grep -q "$p0/ddr_cam_read/"; then
		tap_ok "$v: perf list shows $p0/ddr_cam_read/"
	else
		tap_fail "$v: perf list shows $p0/ddr_cam_read/"
	fi
	ddr_unload
done
tap_check "no PMU left after unload" \
	sh -c "! ls $DDR_DEVS | grep -q mrvl_ddr_pmu"
tap_done
