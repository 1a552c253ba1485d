#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Names of short-lived processes: a process that starts, submits a GPU job
# with its own PID and exits long before hwtel reads the events keeps its
# name (proc connector); without process events it is shown by PID. A PID
# reused during the capture (ns_last_pid) gives one row per process. Also:
# a STOP without START and a malformed line in the stream are reported with
# their line numbers and skipped.

. "$(dirname "$0")/gpu_lib.sh"
gpu_need_model 12
tap_plan 12

if ! mali_up; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

# dash under another name: its comm is the link's name; echo is a builtin,
# so the write to the control file comes from the process itself
ln -s "$(command -v dash)" "$T/gpuburst"
BURST="echo job self PP0 0 1000000 > $CTL"
RUN="python3 $CTLPY $CTL \"event 0 $(( (2 << 24) | (6 << 16) )) 0 0 0 0 0
text 1000 not an event\"
t0=\$(date +%s%N); $T/gpuburst -c '$BURST' & echo \$! > $T/pid; wait; t1=\$(date +%s%N)
echo \$(( (t1 - t0) / 1000000 )) > $T/life_ms; sleep 1"

"$HW" gpu -j --initial-opp 266:1000 -- sh -c "$RUN" > "$T/n.json" 2> "$T/n.err"
tap_eq "exit status" "0" "$?"
pid=$(cat "$T/pid")
tap_diag "gpuburst (PID $pid) lived $(cat "$T/life_ms") ms (fork to reap, under TCG)"
got=$(python3 - "$T/n.json" "$pid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["consumers"] if c["pid"] == int(sys.argv[2])]
print(len(c), c[0]["comm"] if c else "-", c[0]["energy_upj"] if c else "-")
PY
)
tap_check "it exited before hwtel read the events" test ! -e "/proc/$pid"
tap_eq "the exited process is in the report by name, 1 ms at 1 PW" "1 gpuburst 1000" "$got"
cmd=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["consumers"][0]["cmdline"])' "$T/n.json")
tap_eq "its command line" "$T/gpuburst -c $BURST" "$cmd"
tap_check "diagnostic: STOP without START at line 1" grep -qx \
	"hwtel: gpu: line 1: STOP on PP1 without a START: skipped (its start is unknown)" "$T/n.err"
tap_check "diagnostic: malformed line 2" grep -qx \
	"hwtel: gpu: line 2: malformed (not a decimal number at column 1), skipped" "$T/n.err"
tap_eq "stream counters: 4 lines, 1 malformed, 1 STOP without START" "4 1 1" \
	"$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["stream"]; print(s["lines"], s["malformed"], s["stop_without_start"])' "$T/n.json")"

"$HW" gpu -j --no-proc-events --initial-opp 266:1000 -- sh -c "$RUN" > "$T/np.json" 2> "$T/np.err"
pid=$(cat "$T/pid")
got=$(python3 - "$T/np.json" "$pid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["consumers"] if c["pid"] == int(sys.argv[2])]
print(len(c), c[0]["comm"] if c else "-")
PY
)
tap_eq "without process events the gone process has no name (shown as its PID)" "1 None" "$got"
"$HW" gpu --no-proc-events -- sh -c "$RUN" > "$T/np.txt" 2>/dev/null
pid=$(cat "$T/pid")
tap_check "text shows [PID] for it" grep -q "^ *$pid  \[$pid\] " "$T/np.txt"

# PID reuse: "first" submits a job and exits; ns_last_pid makes the next
# fork, "second", get the same PID; it submits a job too
ln -s "$(command -v dash)" "$T/first"
ln -s "$(command -v dash)" "$T/second"
REUSE="$T/first -c 'echo job self PP1 0 1000000 > $CTL; echo \$\$ > $T/r1'
p=\$(cat $T/r1); sleep 0.1
echo \$((p - 1)) > /proc/sys/kernel/ns_last_pid
$T/second -c 'echo job self PP2 0 2000000 > $CTL; echo \$\$ > $T/r2'
sleep 1"
# The kernel may take a PID between the write and the fork (a new kworker
# on the debug kernel): try up to three times; skip when it always did.
reuse_run()
{
	local i

	for i in 1 2 3; do
		rm -f "$T/r1" "$T/r2"
		"$HW" gpu "$@" --initial-opp 266:1000 -- sh -c "$REUSE" > "$T/r.out" 2> "$T/r.err"
		[ -s "$T/r1" ] && [ "$(cat "$T/r1")" = "$(cat "$T/r2" 2>/dev/null)" ] && return 0
	done
	return 1
}
if ! reuse_run -j; then
	for t in "precondition: the second process got the first one's PID" \
		 "one row per life of the PID" "the text says the PID was reused"; do
		tap_skip "$t" "3 tries: another PID was allocated between ns_last_pid and the fork"
	done
	tap_done
fi
tap_ok "precondition: the second process got the first one's PID ($(cat "$T/r1"))"
cp "$T/r.out" "$T/r.json"
got=$(python3 - "$T/r.json" "$(cat "$T/r1")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = sorted((c for c in d["consumers"] if c["pid"] == int(sys.argv[2])), key=lambda c: c["life"])
print(" ".join("%d:%s:%d" % (x["life"], x["comm"], x["energy_upj"]) for x in c))
PY
)
tap_eq "one row per life of the PID: first 1 ms, second 2 ms at 1 PW" \
	"0:first:1000 1:second:2000" "$got"
if reuse_run; then
	tap_check "the text says the PID was reused" grep -q 'A PID was reused' "$T/r.out"
else
	tap_skip "the text says the PID was reused" "3 tries: another PID was allocated between ns_last_pid and the fork"
fi
tap_done
