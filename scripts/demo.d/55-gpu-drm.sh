#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu --source drm on the DRM GPU model: two processes hold the
# model's device open, run jobs on its engines (fdinfo usage stats) while
# devfreq moves from 200 to 400 MHz in the middle of them; one exits before
# the report. Priced from the devfreq operating points and OPP voltages.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make demo)}/tools/hwtel
ctl=/sys/kernel/debug/hwtel-sim/drmgpu/control
cli=/sys/kernel/debug/hwtel-sim/drmgpu/clients
t=$(mktemp -d)

cleanup()
{
	modprobe -r hwtel_sim_drmgpu 2>/dev/null
	modprobe -r hwtel_sim 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT

say() { printf '\n$ %s\n' "$*"; }

modprobe hwtel_sim_drmgpu || { echo "no DRM GPU model on $(uname -r)"; exit 0; }
ln -s "$(command -v dash)" "$t/compositor"
ln -s "$(command -v dash)" "$t/game"
# each holds the device as fd 3 until its stdin (a FIFO the run script holds
# open) is closed: the game after the jobs are written, then the compositor,
# so both exit before the report, whatever the guest's speed
mkfifo "$t/cf" "$t/gf"
cat > "$t/run" <<SH
$t/compositor -c 'exec 3<>/dev/hwtel-sim-gpu; echo \$\$ > $t/c.pid; read x' < $t/cf &
$t/game -c 'exec 3<>/dev/hwtel-sim-gpu; echo \$\$ > $t/g.pid; read x' < $t/gf &
exec 4> $t/cf 5> $t/gf
while [ ! -s $t/c.pid ] || [ ! -s $t/g.pid ]; do sleep 0.05; done
sleep 0.3
c=\$(awk -v p=\$(cat $t/c.pid) '\$2 == p { print \$1 }' $cli)
g=\$(awk -v p=\$(cat $t/g.pid) '\$2 == p { print \$1 }' $cli)
printf 'job %s fragment 3000000\njob %s vertex-tiler 1000000\nfreq 400000000\njob %s fragment 2000000\njob %s compute 4000000\n' \$c \$g \$c \$g > $ctl
sleep 0.3
exec 5>&-
sleep 0.3
exec 4>&-
wait
SH
say "hwtel gpu --source drm -- sh run   (fdinfo usage stats, devfreq 200 -> 400 MHz)"
"$hw" gpu --source drm -- sh "$t/run"
