#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu on a recording that fills the driver's buffer (issue 20): the
# model keeps 4 events and drops the rest (its stats count them). With
# --buffer-events 4 hwtel knows the recording only up to its 4th event: the
# job of B open there is billed up to it, not to the end of the recording,
# and every format reports the overflow. Energies from P = C V^2 f here.

. "$(dirname "$0")/gpu_lib.sh"
gpu_need_model 6
tap_plan 6

if ! mali_up buffer_size=4; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

# PIDs above PID_MAX_LIMIT (4194304): no live process has them
A=4200001
B=4200002
# kept: FREQ_VOLT 0, START A PP0 0, START B PP1 1 ms, STOP A 2 ms;
# dropped: STOP B 6 ms, START and STOP A at 10 and 11 ms
SCRIPT="freqvolt 0 266 1000
job $A PP0 0 2000000
job $B PP1 1000000 5000000
job $A PP0 10000000 1000000"
printf '%s\n' "$SCRIPT" > "$T/script"
RUN="python3 $CTLPY $CTL \"\$(cat $T/script)\"; sleep 1"

summary()
{
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in sorted(d["consumers"], key=lambda c: c["pid"]):
    print(c["pid"], c["energy_upj"], c["busy_ns_total"])
o = d.get("overflow", {})
print("overflow", o.get("recordings"), d["total"]["energy_upj"])
PY
}

"$HW" gpu -j --buffer-events 4 -- sh -c "$RUN" > "$T/o.json" 2> "$T/o.err"
tap_eq "exit 0" "0" "$?"
tap_eq "the model dropped 3 events" "dropped 3" "$(grep '^dropped' "$STATS")"
mapfile -t S < <(summary "$T/o.json")
tap_eq "A: 2 ms at 266 MHz 1000 mV" "$A $(upj "2000000:266:1000") 2000000" "${S[0]}"
tap_eq "B: billed up to the last recorded event (1 ms), not to the end" \
	"$B $(upj "1000000:266:1000") 1000000" "${S[1]}"
tap_eq "JSON: one overflow, total 3 ms at 1 PW" \
	"overflow 1 $(upj "3000000:266:1000")" "${S[2]}"
tap_check "stderr says the buffer filled" \
	grep -q "the recording filled the driver's buffer (4 events)" "$T/o.err"
tap_done
