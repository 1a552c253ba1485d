#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# More generic events than counters, in one perf session and across two
# concurrent sessions, on every variant: perf multiplexes them (add()
# returns -EAGAIN when no counter is free), and nothing is lost or counted
# twice across the rotations.
#
# Each event gets its own steady rate R (occurrences per second, applied by
# the model from ktime). perf stat runs with --no-scale and prints the raw
# count, the running time and running/enabled in percent.
#
# Exact check: the raw count of each event equals what the model's counters
# gained from its rate while perf had it programmed (debugfs "counted", the
# model's ground truth), with running/enabled below 100 %. A driver that
# reads a counter before stopping it at a rotation, or loses or repeats a
# delta, fails this by at least the rate times that window.
#
# Rate check: raw / (R * running time) within 5 %. This is the estimate perf
# scales by; it depends on the perf core enabling each event a little before
# the counter starts (about 100 us under TCG; the test sets the mux
# interval to 40 ms to keep this near 0.3 %) and on a session's slow start
# on a busy TCG host. Both make it low. It shows a driver whose counters
# count outside the event's running windows, which the exact check cannot.

. "$(dirname "$0")/ddr_lib.sh"

TOL_PCT=5
GEN="ddr_hif_rd_or_wr_access ddr_hif_wr_access ddr_hif_rd_access ddr_hif_rmw_access ddr_hif_pri_rdaccess ddr_rd_bypass_access ddr_act_bypass_access ddr_hpri_sched_rd_crit_access ddr_lpri_sched_rd_crit_access ddr_wr_trxn_crit_access ddr_cam_active_access ddr_cam_read"

# check CSV-FILE: one "ok"/"bad" line per event with its errors
check()
{
	local val unit name run pct rest e rate truth

	while IFS=, read -r val unit name run pct rest; do
		e=${name#*/}
		e=${e%/}
		rate=${RATE[$e]}
		truth=${COUNTED[$e]}
		if [ -z "$rate" ] || [ -z "$truth" ] || ! [[ $val =~ ^[0-9]+$ ]]; then
			echo "bad $name: value '$val'"
			continue
		fi
		awk -v v="$val" -v r="$rate" -v run="$run" -v pct="$pct" \
		    -v tol="$TOL_PCT" -v n="$e" -v truth="$truth" 'BEGIN {
			want = r * run / 1e9
			err = (v - want) / want * 100
			printf "%s %s count %d model %d rate-err %+.2f%% running %s%%\n",
				(v == truth && err <= tol && err >= -tol && pct < 100) ? "ok" : "bad",
				n, v, truth, err, pct
		}'
	done < <(grep -v '^#' "$1" | sed '/^$/d')
}

# read the model's ground truth into COUNTED[]
counted()
{
	local e c

	COUNTED=()
	while read -r e c; do
		COUNTED[$e]=$c
	done < "$DDR_DBG/$1/counted"
}

declare -A RATE COUNTED
tap_plan 9
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1; then
		tap_fail "$v: load"
		continue
	fi
	p=$(ddr_pmu "$v")
	echo 40 > "$DDR_DEVS/$p/perf_event_mux_interval_ms"
	evs= k=1
	for e in $GEN; do
		RATE[$e]=$((k * 100000))
		echo "$e ${RATE[$e]}" > "$DDR_DBG/$p/rate"
		evs+="$p/$e/,"
		k=$((k + 1))
	done

	echo 0 > "$DDR_DBG/$p/counted"
	perf stat -a --no-scale -x, -o "$DDR_TMP/one" -e "${evs%,}" sleep 2.5
	counted "$p"
	res=$(check "$DDR_TMP/one")
	tap_diag "$res"
	tap_eq "$v: 12 events in one session, all multiplexed, exact to the model, rate within $TOL_PCT %" \
		12 "$(echo "$res" | grep -c '^ok ')"

	set -- $GEN
	a=$(printf "$p/%s/," "${@:1:6}")
	b=$(printf "$p/%s/," "${@:7:6}")
	echo 0 > "$DDR_DBG/$p/counted"
	perf stat -a --no-scale -x, -o "$DDR_TMP/s1" -e "${a%,}" sleep 2.5 &
	perf stat -a --no-scale -x, -o "$DDR_TMP/s2" -e "${b%,}" sleep 2.5
	wait
	counted "$p"
	res=$(check "$DDR_TMP/s1"; check "$DDR_TMP/s2")
	tap_diag "$res"
	tap_eq "$v: 6 + 6 events in two sessions, multiplexed, exact to the model, rate within $TOL_PCT %" \
		12 "$(echo "$res" | grep -c '^ok ')"
	tap_eq "$v: driver touched no unmapped register" "unmapped 0" \
		"$(grep unmapped "$DDR_DBG/$p/stats")"
	ddr_unload
done
tap_done
