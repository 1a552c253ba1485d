#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The poll timer fires every poll_period_sec seconds, exactly, on every
# variant; a runtime change takes effect at the next arming.
#
# Measurement: the model timestamps (ktime, ns) every register access in
# its debugfs "trace". With one event open and nothing reading it, the only
# reads of its counter between start and stop are the driver's polls.
#
# An hrtimer never fires early, and the driver re-arms it with
# hrtimer_forward_now(), so poll k happens at T0 + k * period + L_k with a
# lateness L_k >= 0 that does not accumulate. The test checks
#
#  - the median interval within 20 ms (2 %) of the period (one late poll
#    lengthens one interval and shortens the next; the median ignores it);
#  - the median of L_k, with T0 = min_k(t_k - k * period), at most 50 ms:
#    the polls stay on the grid, no drift.
#
# The slack is the guest's timer-interrupt latency under TCG emulation on a
# shared, busy 2-CPU host: L_k is typically 0.5-10 ms; single polls were
# seen 45 ms and once 111 ms late at a host load of 9, and two polls in a
# row 133 and 405 ms late at a load of 13 (host scheduling stalls; the next
# poll was back on the grid). Stalls make some polls late without moving
# the others, so the median ignores them; a drifting timer moves them all.
# A wrong period (ms taken for s gives no poll at all; 1.1 s drifts by
# 100 ms per poll: median lateness 250 ms over 6 polls) fails both.

. "$(dirname "$0")/ddr_lib.sh"

TOL_NS=50000000		# one interval, for telling 1 s from 2 s
MEDIAN_TOL_NS=20000000
LATE_TOL_NS=50000000

declare -A cnt0=([cn10k]=0x08080 [odyssey]=0x201c0 [cn20k]=0x201c0)

# poll_times PMU V: ktime of the counter-0 reads, without the first and
# the last one (start and stop may read the counter too)
poll_times()
{
	grep " R ${cnt0[$2]} " "$DDR_DBG/$1/trace" | awk '{ print $1 }' |
		sed '1d;$d'
}

# intervals "TIMES": differences of consecutive times
intervals() { echo "$1" | awk 'NR > 1 { print $1 - prev } { prev = $1 }'; }

# lateness "TIMES" PERIOD_NS: L_k in ns on the best grid, one per line
lateness()
{
	echo "$1" | awk -v p="$2" '
		{ t[NR - 1] = $1; n = NR }
		END {
			t0 = t[0]
			for (k = 0; k < n; k++) if (t[k] - k * p < t0) t0 = t[k] - k * p
			for (k = 0; k < n; k++) printf "%d\n", t[k] - k * p - t0
		}'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# within "LIST" PERIOD_NS: every interval within TOL_NS of the period
within()
{
	local d err

	for d in $1; do
		err=$((d - $2))
		err=${err#-}
		[ "$err" -gt "$TOL_NS" ] && return 1
	done
	return 0
}

tap_plan 14
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1 poll_period_sec=1; then
		tap_fail "$v: load"
		continue
	fi
	p=$(ddr_pmu "$v")
	echo 0 > "$DDR_DBG/$p/stats"
	perf stat -a -x, -o /dev/null -e "$p/ddr_cam_read/" sleep 6.6
	ts=$(poll_times "$p" "$v")
	n=$(echo "$ts" | grep -c .)
	tap_check "$v: at least 5 polls in 6.6 s (got $n)" test "$n" -ge 5
	iv=$(intervals "$ts")
	med=$(echo "$iv" | median)
	merr=$((med - 1000000000))
	merr=${merr#-}
	late=$(lateness "$ts" 1000000000)
	maxl=$(echo "$late" | sort -n | tail -n1)
	medl=$(echo "$late" | median)
	nlate=$(echo "$late" | awk -v l="$LATE_TOL_NS" '$1 > l' | grep -c .)
	tap_diag "$v: intervals (ns): $(echo $iv)"
	tap_diag "$v: lateness (ns): $(echo $late)"
	if [ "$merr" -le "$MEDIAN_TOL_NS" ]; then
		tap_ok "$v: median poll interval $med ns (error $((merr / 1000)) us)"
	else
		tap_fail "$v: median poll interval 1 s within 20 ms" "median $med"
	fi
	if [ "$medl" -le "$LATE_TOL_NS" ]; then
		tap_ok "$v: polls on the 1 s grid (median lateness $((medl / 1000)) us, max $((maxl / 1000)) us, $nlate over 50 ms)"
	else
		tap_fail "$v: polls on the 1 s grid, median lateness within 50 ms" \
			"median lateness $medl ns"
	fi
	ddr_unload
done

# A runtime change applies at the next arming: 1 s intervals, then 2 s
ddr_load cn10k 1 poll_period_sec=1
p=$(ddr_pmu cn10k)
echo 0 > "$DDR_DBG/$p/stats"
perf stat -a -x, -o /dev/null -e "$p/ddr_cam_read/" sleep 9 &
# change the period after two polls (start read + 2 poll reads, and one
# more: under load a second read may come while the event is added),
# however long perf took to start
for i in $(seq 300); do
	[ "$(grep -c " R ${cnt0[cn10k]} " "$DDR_DBG/$p/trace")" -ge 4 ] && break
	sleep 0.05
done
echo 2 > $DDR_PARAM
wait
# The first interval is left out: it may start at a read made while the
# event was being added (seen 104 ms after the timer was armed under TCG),
# not at a poll. Such reads can only shorten the intervals they begin, so
# every leading interval shorter than 1 s is left out too (a loaded 6.12-rt
# guest began with 889 ms, then 2 s: no 1 s interval was left to check).
iv=$(intervals "$(poll_times "$p" cn10k)" | sed 1d |
	awk -v min=$((1000000000 - TOL_NS)) 'lead && $1 < min { next } { lead = 0; print }' lead=1)
tap_diag "intervals across the change (ns): $(echo $iv)"
ones= twos= order=ok seen2=
for d in $iv; do
	if within "$d" 1000000000; then
		ones+="$d "
		[ -n "$seen2" ] && order=bad
	elif within "$d" 2000000000; then
		twos+="$d "
		seen2=1
	else
		order=bad
	fi
done
tap_check "1 s intervals before the change" test -n "$ones"
tap_check "2 s intervals after it" test -n "$twos"
tap_eq "every interval is 1 s then 2 s, in that order" ok "$order"
ddr_unload

# A poll reads a free-running counter once, however many events share it:
# 4 events on ddr_ddr_reads and a generic one. A poll is the first access
# after a quiet half second, a read of counter 0 (start and stop begin
# with other registers); the FREERUN_RD reads right after it are that
# poll's: exactly one in each.
ddr_load cn10k 1 poll_period_sec=1
p=$(ddr_pmu cn10k)
echo 0 > "$DDR_DBG/$p/stats"
ev="$p/ddr_cam_read/"
for i in 1 2 3 4; do ev+=",$p/ddr_ddr_reads/"; done
perf stat -a -x, -o /dev/null -e "$ev" sleep 3.6
per_poll=$(awk -v cnt="${cnt0[cn10k]}" '
	{ fr = $2 == "R" && $3 == "0x080d8" }
	inrun && fr { n++; prev = $1; next }
	inrun { printf "%d ", n; inrun = 0 }
	$2 == "R" && $3 == cnt && NR > 1 && $1 - prev >= 500000000 {
		inrun = 1; n = 0
	}
	{ prev = $1 }
	END { if (inrun) printf "%d ", n }' "$DDR_DBG/$p/trace")
tap_diag "FREERUN_RD reads in each poll: $per_poll"
tap_check "one FREERUN_RD read a poll, 2 polls or more, for 4 events (polls: ${per_poll:-none})" \
	sh -c "[ -n '$per_poll' ] && ! echo ' $per_poll' | grep -qvE '^( 1){2,} ?$'"
ddr_unload

# Nothing polls without events: the timer is cancelled with the last one
ddr_load cn10k 1 poll_period_sec=1
p=$(ddr_pmu cn10k)
perf stat -a -x, -o /dev/null -e "$p/ddr_cam_read/" true
echo 0 > "$DDR_DBG/$p/stats"
sleep 2.2
tap_eq "no register access while no event exists" "reads 0" \
	"$(grep reads "$DDR_DBG/$p/stats")"
tap_done
