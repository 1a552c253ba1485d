#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu -w across a record gap that loses STOPs (issue 20, case 1). The
# real gap (record 0 .. record 1 between intervals) is microseconds wide, so
# the model loses them on request instead ("lose stop UNIT", lab model
# only): the next STOP of the unit is discarded as one in the gap is, and
# dropped stays 0 (the driver's files show nothing either way). Jobs of A
# (PP1) and C (PP2) start in one recording and their STOPs are lost. In the
# next recording PP2 stays idle and PP1 is idle until B, written by this
# test after the report of the first recording, runs 2 ms. The docs' bound
# ("Record gaps", hwtel.rst): A and C are billed up to the gap, nothing
# after it; their time after it is reported as lost, in JSON, on stderr and
# in Prometheus. That recording costs exactly B's 2 ms at 1 PW.

. "$(dirname "$0")/gpu_lib.sh"

PLAN=10
gpu_need_model "$PLAN"
tap_plan "$PLAN"
if ! mali_up; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

# PIDs above PID_MAX_LIMIT (4194304): no live process has them
A=4200001
B=4200002
C=4200003

W=$T/w.json
has()
{
	echo "[c for c in L['consumers'] if c['pid'] == $1]"
}

"$HW" gpu -j -w -t 2 --initial-opp 266:1000 --prometheus "$T/p.prom" \
	> "$W" 2> "$T/w.err" &
HWPID=$!
trap 'kill $HWPID 2>/dev/null; gpu_cleanup' EXIT
# the first report: recording is on again (it restarts before a report)
FROM=0
n0=$(gpu_wait_report 'True')
ctl "lose stop PP1
lose stop PP2
job $A PP1 0 1000000
job $C PP2 0 1000000"
FROM=$n0
n1=$(gpu_wait_report "$(has $A)")
# recording n1+1 is on: PP1 idle since the gap, until B
ctl "job $B PP1 0 2000000"
FROM=$n1
n2=$(gpu_wait_report "$(has $B)")
# one more report: the textfile holds report n2 (written after it)
FROM=$n2
n3=$(gpu_wait_report 'True')
cp "$T/p.prom" "$T/p3.prom"
kill -TERM "$HWPID"
wait "$HWPID"
st=$?
tap_eq "exit status after SIGTERM" "0" "$st"
tap_check "every report awaited came (lines $n0 $n1 $n2 $n3)" \
	test "$n0" -gt 0 -a "$n1" -gt "$n0" -a "$n2" -gt "$n1" -a "$n3" -gt "$n2"
tap_eq "B ran in the recording right after A's and C's" "$((n1 + 1))" "$n2"
tap_eq "the model lost both STOPs as a gap does: none left armed, dropped 0" \
	"dropped 0 lose_stop 0x0 " "$(grep -E '^(dropped|lose_stop)' "$STATS" | tr '\n' ' ')"

# report N: per consumer "pid busy energy", the interval, total and lost
summary()
{
	python3 - "$W" "$1" <<'PY'
import json, sys
L = json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1])
for c in sorted(L["consumers"], key=lambda c: c["pid"]):
    print("c", c["pid"], c["busy_ns_total"], c["energy_upj"])
t = L["total"]
print("t", L["t1_ns"] - L["t0_ns"], t["energy_upj"])
lo = L.get("lost", {})
print("lost", lo.get("stops", "none"), lo.get("unbilled_ns", 0))
PY
}

# the recording of the START: A and C billed from their START to the gap,
# 1 PW each, no more than the recording
summary "$n1" > "$T/s1"
ok1=$(python3 - "$T/s1" "$A" "$C" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
c = {r[1]: (int(r[2]), int(r[3])) for r in rows if r[0] == "c"}
span = [int(r[1]) for r in rows if r[0] == "t"][0]
one = 266 * 1000 * 1000 * 10**9 // 10**6
def upj(ns):
    return (ns * 1000 * 1000 * 266 + one // 2) // one
out = []
for pid in sys.argv[2:]:
    ns, e = c.get(pid, (0, -1))
    out.append("%s:%s" % (pid, "ok" if 0 < ns <= span and e == upj(ns) else "%d/%d:%d" % (ns, span, e)))
print(" ".join(out))
PY
)
tap_eq "A and C billed up to the gap at 1 PW (uPJ from their busy ns)" "$A:ok $C:ok" "$ok1"

# the recording after the gap: only B's 2 ms are busy; A and C not billed
mapfile -t S < <(summary "$n2")
tap_eq "after the gap: B alone, 2 ms at 266 MHz 1000 mV" \
	"c $B 2000000 $(upj "2000000:266:1000")" \
	"$(printf '%s\n' "${S[@]}" | grep '^c ' | grep -v " 0 0$")"
span2=$(printf '%s\n' "${S[@]}" | awk '$1 == "t" { print $2 }')
tap_eq "after the gap: total energy is B's 2 ms only" \
	"$(upj "2000000:266:1000")" \
	"$(printf '%s\n' "${S[@]}" | awk '$1 == "t" { print $3 }')"
# lost: PP2 from the gap to the end of the recording (span2), PP1 from the
# gap to B's START (more than 0, less than span2)
read -r _ stops unbilled < <(printf '%s\n' "${S[@]}" | grep '^lost ')
tap_eq "JSON: 2 STOPs lost, unbilled = PP2's whole recording + PP1 up to B" \
	"2 1" "$stops $(( unbilled > span2 && unbilled < 2 * span2 ))"
tap_check "stderr: both jobs closed at the gap, not billed" \
	test "$(grep -c "running at the record gap had no STOP.*closed at the gap" "$T/w.err")" -eq 2
tap_check "Prometheus: the 2 lost STOPs counted" \
	grep -qx 'hwtel_gpu_lost_events_total{event="stop"} 2' "$T/p3.prom"
tap_done
