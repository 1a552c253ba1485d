#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel record on the PCIe model: a 30 ms stall burst (the model switches
# from the seed traffic to "busy" and back at two instants) caught with the
# trigger at the center of a 60-sample ring, its text timeline, the SVG.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make demo)}/tools/hwtel
dbg=/sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00000000
out=/tmp/hwtel-demo-stall

cleanup()
{
	modprobe -r ndk_pcie_tlm hwtel_sim_pcie 2>/dev/null
}
trap cleanup EXIT

say() { printf '\n$ %s\n' "$*"; }

modprobe hwtel_sim_pcie profile=seed && modprobe ndk_pcie_tlm || exit 1
trig='pcie.ep0.rq0.mfb_stall_pct > 1'
say "hwtel record -o $out.rec -p 1ms -N 60 --position center --trigger '$trig' -t 10 &"
rm -f "$out.rec"
"$hw" record -o "$out.rec" -p 1ms -N 60 --position center --trigger "$trig" -t 10 &
pid=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$out.rec" ] && break
	sleep 0.05
done
say "echo '+300000000 busy +330000000 seed' > .../profile_at   (a 30 ms stall burst in 0.3 s)"
echo '+300000000 busy +330000000 seed' > "$dbg/profile_at"
cat "$dbg/profile_at"
wait $pid
say "hwtel report --context 12 -m '*rq0*' $out.rec"
"$hw" report --context 12 -m '*rq0*' "$out.rec"
"$hw" report --svg -m '*rq0*' -o "$out.svg" "$out.rec" &&
	"$hw" report --trace -o "$out.json" "$out.rec" &&
	echo && echo "SVG plot: $out.svg ($(stat -c %s "$out.svg") bytes);" \
		"Perfetto trace: $out.json ($(stat -c %s "$out.json") bytes);" \
		"capture: $(stat -c %s "$out.rec") bytes"
