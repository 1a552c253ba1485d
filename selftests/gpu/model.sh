#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Mali internal-profiling model (hwtel_sim_mali): the seed's semantics
# of proc/default/enable, record and events (recording needs enable, record
# clears the buffer, events is empty while recording), the seven-number
# line format and event ids, scripted jobs and the three DVFS forms in the
# order of their times, the recording window, the buffer limit, and the
# errors of the control file.

. "$(dirname "$0")/gpu_lib.sh"
gpu_need_model 17
tap_plan 17

if ! mali_up buffer_size=4; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

tap_eq "enable reads 0 after load" "0" "$(cat "$ENABLE")"
tap_eq "record without enable: EINVAL" "EINVAL" "$(werrno "$RECORD" 1)"
tap_eq "enable takes 1" "OK" "$(werrno "$ENABLE" 1)"
tap_eq "enable refuses 2: EINVAL" "EINVAL" "$(werrno "$ENABLE" 2)"
tap_eq "record takes 1" "OK" "$(werrno "$RECORD" 1)"

# one write: the same base time for every line of it
ctl "job 4200001 PP3 0 2500000
freq 1000000 400
volt 1000000 1100
freqvolt 500000 200 900"
sleep 0.2
tap_eq "events is empty while recording" "0" "$(wc -c < "$EVENTS")"
echo 0 > "$RECORD"
mapfile -t L < "$EVENTS"
tap_eq "four events recorded (buffer of 4)" "4" "${#L[@]}"
# START PP3 = 1 << 24 | 8 << 16; freq/volt SOFTWARE 4/5; GPU 21 data 10
ids=$(for l in "${L[@]}"; do set -- $l; echo -n "$2/$3/$4 "; done)
tap_eq "ids and data in time order, same-time events in write order" \
	"$(( (1 << 24) | (8 << 16) ))/4200001/0 $(( (21 << 16) | 10 ))/200/900 4/400/0 5/1100/0 " "$ids"
fields=$(for l in "${L[@]}"; do set -- $l; echo -n "$# "; done)
tap_eq "seven decimal numbers per line" "7 7 7 7 " "$fields"
set -- ${L[0]}; t_start=$1
set -- ${L[1]}; t_fv=$1
set -- ${L[2]}; t_f=$1
tap_eq "offsets exact: FREQ_VOLT 0.5 ms, FREQ 1 ms after START" \
	"500000 1000000" "$((t_fv - t_start)) $((t_f - t_start))"
now=$(date +%s%N)
tap_check "timestamps are UNIX ns (within 60 s of now)" \
	test $((now - t_start)) -ge 0 -a $((now - t_start)) -lt 60000000000
tap_eq "the fifth event (the STOP) was dropped: buffer full" "dropped 1" \
	"$(grep '^dropped' "$STATS")"

# recording window: the STOP of a job of 1000 s is not in the recording
# (a long duration: under TCG a "short" sleep can take seconds), and the
# next record 1 clears the buffer
echo 1 > "$RECORD"
ctl "job self GP0 0 1000000000000"
sleep 0.1
echo 0 > "$RECORD"
mapfile -t L < "$EVENTS"
ctl reset
set -- ${L[0]}
tap_eq "only the START of a job that outlives the recording, PID of the writer" \
	"1 $(( (1 << 24) | (1 << 16) ))" "${#L[@]} $2"
tap_eq "stopping twice is harmless" "OK" "$(werrno "$RECORD" 0)"

tap_eq "unknown unit: EINVAL" "EINVAL" "$(werrno "$CTL" "job 1 PP8 0 1")"
tap_eq "too few arguments: EINVAL" "EINVAL" "$(werrno "$CTL" "freqvolt 0 200")"
tap_eq "a verbatim line is accepted" "OK" "$(werrno "$CTL" "text 0 garbage 1 2")"
tap_done
