#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu on the Mali internal-profiling model: two short-lived processes
# ("compositor" and "game") submit jobs to GP0 and PP0-PP3 under their own
# PIDs while the GPU changes its operating point three times (once as a
# voltage and frequency pair in reverse order), then exit before hwtel reads
# the events. The "GPU power consumers" report still names them.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make demo)}/tools/hwtel
ctl=/sys/kernel/debug/hwtel-sim/mali/control
t=$(mktemp -d)

cleanup()
{
	modprobe -r hwtel_sim_mali 2>/dev/null
	modprobe -r hwtel_sim 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT

say() { printf '\n$ %s\n' "$*"; }

modprobe hwtel_sim_mali || exit 1
ln -s "$(command -v dash)" "$t/compositor"
ln -s "$(command -v dash)" "$t/game"
# job PID UNIT START_NS DURATION_NS; freq/volt/freqvolt OFFSET_NS VALUE(S)
cat > "$t/run" <<SH
echo 'freqvolt 1000000 200 900' > $ctl
$t/compositor -c 'echo "job self GP0 0 3000000
job self PP0 2000000 4000000" > $ctl'
$t/game -c 'echo "job self GP0 4000000 6000000
job self PP1 5000000 8000000
job self PP2 5000000 8000000
job self PP3 6000000 2000000" > $ctl'
echo 'volt 8000000 1100
freq 9000000 400
freq 12000000 300
volt 12000000 1000' > $ctl
sleep 0.5
SH
say "hwtel gpu --initial-opp 266:1000 -- sh run   (two processes, three DVFS changes)"
"$hw" gpu --initial-opp 266:1000 -- sh "$t/run"
say "hwtel gpu -- sh run   (no initial operating point: the first job's time is unattributed)"
"$hw" gpu -- sh "$t/run" | tail -4
say "hwtel gpu -x , -- sh run"
"$hw" gpu -x , -- sh "$t/run"
