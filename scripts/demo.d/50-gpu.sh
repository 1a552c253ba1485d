#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu on the Mali internal-profiling model: the jobs on GP0 and
# PP0-PP3 belong to two short-lived processes ("compositor" and "game")
# that exited long before hwtel reads the events, while the GPU changes its
# operating point three times (once as a voltage and frequency pair in
# reverse order). The "GPU power consumers" report still names them.

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
# Each process records its PID and exits at once; the script of the "GPU"
# (job PID UNIT START_NS DURATION_NS; freq/volt/freqvolt OFFSET_NS VALUES)
# is then written in one write(2), so its times are exact.
cat > "$t/run" <<SH
$t/compositor -c 'echo \$\$ > $t/c.pid'
$t/game -c 'echo \$\$ > $t/g.pid'
c=\$(cat $t/c.pid); g=\$(cat $t/g.pid)
cat > $t/script <<EOS
job \$c PP0 0 2000000
job \$g PP1 4000000 3000000
freqvolt 5000000 200 900
job \$c PP2 8000000 4000000
volt 10000000 1100
freq 11000000 400
job \$g PP3 12000000 6000000
job \$c GP0 12000000 4000000
freq 15000000 300
volt 15000000 1000
job \$g PP1 19000000 1000000
EOS
cat $t/script > $ctl
sleep 0.5
SH
say "hwtel gpu --initial-opp 266:1000 -- sh run   (two processes, three DVFS changes)"
"$hw" gpu --initial-opp 266:1000 -- sh "$t/run"
say "hwtel gpu -- sh run   (no initial operating point: the first job's time is unattributed)"
"$hw" gpu -- sh "$t/run" | tail -6
say "hwtel gpu -x , -- sh run"
"$hw" gpu -x , -- sh "$t/run"
