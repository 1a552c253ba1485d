#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The poll timer is a hard hrtimer on every variant: pmu->del cancels it
# with interrupts off, which on PREEMPT_RT may only wait for a timer that
# expires in hard interrupt context. Checked on any kernel through the
# hrtimer_start trace event of the arming in pmu->add (callback ddr_poll,
# mode REL...): its mode must be REL|PINNED|HARD. Re-arming from the
# callback traces as plain ABS whatever the timer, so those entries say
# nothing and are skipped. The events counted across a few polls stay exact.

. "$(dirname "$0")/ddr_lib.sh"

T=/sys/kernel/tracing
[ -d $T/events/timer ] || T=/sys/kernel/debug/tracing

ddr_trace_cleanup()
{
	echo 0 > $T/events/timer/hrtimer_start/enable 2>/dev/null
	echo > $T/events/timer/hrtimer_start/filter 2>/dev/null
	ddr_cleanup
}
trap ddr_trace_cleanup EXIT

if [ ! -w $T/events/timer/hrtimer_start/enable ]; then
	tap_plan 1
	tap_skip "hrtimer mode" "no tracefs with timer events"
	tap_done
fi

tap_plan 9
for v in $DDR_VARIANTS; do
	if ! ddr_load "$v" 1 poll_period_sec=1; then
		tap_fail "$v: load"
		continue
	fi
	p=$(ddr_pmu "$v")
	inj=$DDR_DBG/$p/inject
	echo > $T/trace
	echo 1 > $T/events/timer/hrtimer_start/enable
	out=$(ddr_stat "$p/ddr_cam_read/,$p/event=0x65/" -- \
		sh -c "echo 'ddr_cam_read 77' > $inj; sleep 2.5; echo 'ddr_ddr_reads 5' > $inj")
	echo 0 > $T/events/timer/hrtimer_start/enable
	grep 'function=ddr_poll ' $T/trace > "$DDR_TMP/starts"
	tap_diag "$v: $(sed -n 's/.*\(function=ddr_poll\).*\(mode=[^ ]*\).*/\1 \2/p' "$DDR_TMP/starts" | sort | uniq -c)"
	tap_check "$v: the poll timer was armed by pmu->add" \
		grep -q 'mode=REL' "$DDR_TMP/starts"
	tap_check "$v: every arming of the poll timer is HARD" \
		awk '/mode=REL/ && !/mode=[A-Z|]*HARD/ { bad = 1 } END { exit bad }' "$DDR_TMP/starts"
	tap_eq "$v: exact counts across the polls" \
		"$(printf '77,%s\n5,%s' "$p/ddr_cam_read/" "$p/event=0x65/")" "$out"
	ddr_unload
done
tap_done
