#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu -w on the Mali model across process lives (issue 20, cases 5,
# 7 and 8). A process that existed before hwtel started submits a job, is in
# a report, then submits another and exits: one process, one consumer, so
# one row of the cumulative report and one Prometheus series (before, the
# jobs before its exit was known and those after were two consumers, two
# series with the same labels). Prometheus series are per process name:
# a second process of the same name, started and ended during the watch,
# adds to the same series. Energies from the seed's formula at 266 MHz and
# 1000 mV (1 ms is 1000 uPJ). Every step waits for the report or process
# it needs (a report line; the textfile is written after it); which
# interval a job lands in does not change what is checked.

. "$(dirname "$0")/gpu_lib.sh"

PLAN=10
gpu_need_model "$PLAN"
tap_plan "$PLAN"
if ! mali_up; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

# a process under the name gpuold: prints its PID, then writes each line
# of stdin to the model's control file itself ("job self ...") and answers
# "done"; EOF ends it
ln -s "$(command -v python3)" "$T/gpuold"
cat > "$T/old.py" <<'PY'
import os, sys
print(os.getpid(), flush=True)
for line in sys.stdin:
    fd = os.open(sys.argv[1], os.O_WRONLY)
    os.write(fd, line.encode())
    os.close(fd)
    print("done", flush=True)
PY

W=$T/w.json

coproc OLD { exec "$T/gpuold" "$T/old.py" "$CTL"; }
OLDPID=$OLD_PID
read -r -u "${OLD[0]}" P
"$HW" gpu -j -w -t 2 --initial-opp 266:1000 --prometheus "$T/p.prom" \
	> "$T/w.json" 2> "$T/w.err" &
HWPID=$!
trap 'kill $HWPID 2>/dev/null; gpu_cleanup' EXIT
# the first report: recording is on again (it restarts before a report)
FROM=0
n0=$(gpu_wait_report 'True')
mine="[c for c in L['consumers'] if c['pid'] == $P]"
echo "job self PP0 0 1000000" >&"${OLD[1]}"
read -r -u "${OLD[0]}" _
FROM=$n0
n1=$(gpu_wait_report "$mine")
echo "job self PP1 0 2000000" >&"${OLD[1]}"
read -r -u "${OLD[0]}" _
eval "exec ${OLD[1]}>&-"
wait "$OLDPID"
FROM=$n1
n2=$(gpu_wait_report "$mine")
# a new process of the same name: 4 ms, then gone
"$T/gpuold" -c "import os; os.write(os.open('$CTL', os.O_WRONLY), b'job self PP0 0 4000000\n')"
FROM=$n2
n3=$(gpu_wait_report "[c for c in L['consumers'] if c['comm'] == 'gpuold' and c['pid'] != $P]")
# one more report: both lives ended and are summed per name; its textfile
# is written after the report, so after one more report the textfile
# holds it (the textfile is replaced whole: rename)
FROM=$n3
n4=$(gpu_wait_report 'True')
FROM=$n4
n5=$(gpu_wait_report 'True')
cp "$T/p.prom" "$T/p4.prom"
kill -TERM "$HWPID"
wait "$HWPID"
tap_eq "exit status after SIGTERM, no diagnostics" "0 " "$? $(cat "$T/w.err")"
tap_check "every report awaited came (lines $n0 $n1 $n2 $n3 $n4 $n5)" \
	test "$n0" -gt 0 -a "$n1" -gt "$n0" -a "$n2" -gt "$n1" -a "$n3" -gt "$n2" -a \
	"$n4" -gt "$n3" -a "$n5" -gt "$n4"
got=$(python3 - "$T/w.json" "$P" <<'PY'
import json, sys
rows = []
for l in open(sys.argv[1]):
    for c in json.loads(l)["consumers"]:
        if c["pid"] == int(sys.argv[2]):
            rows.append("%s:%d" % (c["comm"], c["energy_upj"]))
print(" ".join(rows))
PY
)
tap_eq "the process from before hwtel: 1 ms, then 2 ms, by name" "gpuold:1000 gpuold:2000" "$got"
prom()
{
	local e=$(($1))

	printf '%s{comm="gpuold"} %d.%06d' "$2" $((e / 1000000)) $((e % 1000000))
}
tap_eq "Prometheus: one energy series for the name, both processes' 7 ms" \
	"$(prom "$(upj "7000000:266:1000")" hwtel_gpu_energy_pseudojoules_total)" \
	"$(grep '^hwtel_gpu_energy_pseudojoules_total{' "$T/p4.prom")"
tap_eq "Prometheus: one series per name and unit for busy time" \
	"hwtel_gpu_busy_seconds_total{comm=\"gpuold\",unit=\"PP0\"} 0.005000000
hwtel_gpu_busy_seconds_total{comm=\"gpuold\",unit=\"PP1\"} 0.002000000" \
	"$(grep '^hwtel_gpu_busy_seconds_total{' "$T/p4.prom")"
tap_eq "Prometheus: jobs per name and unit" \
	"hwtel_gpu_jobs_total{comm=\"gpuold\",unit=\"PP0\"} 2
hwtel_gpu_jobs_total{comm=\"gpuold\",unit=\"PP1\"} 1" \
	"$(grep '^hwtel_gpu_jobs_total{' "$T/p4.prom")"
tap_check "no label pid or life in any series" sh -c "! grep -q 'pid=\|life=' '$T/p4.prom'"
if command -v promtool > /dev/null; then
	tap_check "promtool check metrics accepts it" sh -c "promtool check metrics < '$T/p4.prom'"
else
	tap_skip "promtool check metrics accepts it" "no promtool in the guest"
fi

# Case 8: CLOCK_REALTIME steps 30 s forward during -w (restored after).
# gpustep, forked before the step, submits 1 ms after it and exits; then
# gpunew gets its PID (ns_last_pid). Each process event is converted with
# the offset of its moment, so gpunew's life begins after the job the model
# stamps in the stepped real time, and the job stays gpustep's. With the
# offset measured once at the start, gpunew's life began 30 s early, before
# the job, and took it (when both are handed in the job's interval).
step()
{
	python3 -c 'import sys, time
time.clock_settime_ns(time.CLOCK_REALTIME, time.clock_gettime_ns(time.CLOCK_REALTIME) + int(sys.argv[1]))' "$1"
}
STEPPED=0
trap 'kill $HWPID 2>/dev/null; mali_down; [ $STEPPED = 1 ] && step -30000000000; gpu_cleanup' EXIT
ln -s "$(command -v python3)" "$T/gpustep"
W=$T/s.json
"$HW" gpu -j -w -t 2 --initial-opp 266:1000 > "$W" 2> "$T/s.err" &
HWPID=$!
FROM=0
s0=$(gpu_wait_report 'True')
coproc STP { exec "$T/gpustep" "$T/old.py" "$CTL"; }
STPPID=$STP_PID
read -r -u "${STP[0]}" S
STEPPED=1
step 30000000000
echo "job self PP0 0 1000000" >&"${STP[1]}"
read -r -u "${STP[0]}" _
eval "exec ${STP[1]}>&-"
wait "$STPPID"
ln -s "$(command -v python3)" "$T/gpunew"
echo $((S - 1)) > /proc/sys/kernel/ns_last_pid
"$T/gpunew" -c 'import os; print(os.getpid())' > "$T/newpid"
FROM=$s0
s1=$(gpu_wait_report "[c for c in L['consumers'] if c['pid'] == $S]")
kill -TERM "$HWPID"
wait "$HWPID"
st=$?
# the model stamps events in real time: gone before the clock goes back
mali_down
step -30000000000
STEPPED=0
tap_eq "clock step: exit status, no diagnostics (report lines $s0 $s1)" "0 " "$st $(cat "$T/s.err")"
got=$(python3 - "$W" "$S" <<'PY'
import json, sys
rows = []
for l in open(sys.argv[1]):
    for c in json.loads(l)["consumers"]:
        if c["pid"] == int(sys.argv[2]):
            rows.append("%s:%d:%d" % (c["comm"], c["life"], c["energy_upj"]))
print(" ".join(rows))
PY
)
if [ "$(cat "$T/newpid")" = "$S" ]; then
	tap_eq "clock step: the job after it is gpustep's life 0, not gpunew's (PID $S), 1 ms at 1 PW" \
		"gpustep:0:$(upj "1000000:266:1000")" "$got"
else
	tap_skip "clock step: the job after it is gpustep's, not gpunew's" \
		"gpunew got PID $(cat "$T/newpid"), not $S (another PID was allocated first)"
fi
tap_done
