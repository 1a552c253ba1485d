#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel record's control-plane traffic per PCIe sample, on the seed-example
# model, as ratios in one run: netlink requests (sendmsg/sendto calls)
# and pread64 calls (the PMU's sysfs "flags") per sample, setup included,
# counted by strace over a 2 s recording at -p 1ms,
#  1. as the recorder runs as root: the flags from sysfs with each sample;
#  2. with the flags file closed to it (mode 000, CAP_DAC_OVERRIDE
#     dropped): the EP_GET with each sample that served before it existed,
#     and still serves a user with CAP_PERFMON but not root.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make bench)}/tools/hwtel
pmu=ndk_pcie_tlm_3fff00000000
fl=/sys/bus/event_source/devices/$pmu/flags
out=/tmp/bench-rflags.$$

cleanup()
{
	rm -rf "$out"
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
}
trap cleanup EXIT
mkdir -p "$out"

modprobe hwtel_sim_pcie profile=seed || exit 1
modprobe ndk_pcie_tlm || exit 1
[ -r "$fl" ] || { echo "no $fl: a driver without the flags file"; exit 1; }

# run NAME [capsh --drop=...]: record 2 s under strace -c; prints
# "<samples> <requests> <preads>"
run()
{
	local name=$1 n req rd
	local cmd="strace -f -qq -c -o $out/$name.st -e trace=sendmsg,sendto,pread64 \
$hw record -q -s pcie -o $out/$name.rec -p 1ms -N 100000 --position end -t 2"

	shift
	if [ $# -gt 0 ]; then
		"$@" -- -c "$cmd" || return 1
	else
		$cmd || return 1
	fi
	"$hw" report --csv "$out/$name.rec" > "$out/$name.csv" || return 1
	n=$(($(wc -l < "$out/$name.csv") - 1))
	# strace -c: "% time seconds usecs/call calls [errors] syscall"
	req=$(awk '$NF == "sendmsg" || $NF == "sendto" { s += $4 } END { print s + 0 }' "$out/$name.st")
	rd=$(awk '$NF == "pread64" { s += $4 } END { print s + 0 }' "$out/$name.st")
	echo "$n $req $rd"
}

a=$(run sysfs) || { echo "record (sysfs flags) failed"; exit 1; }
chmod 000 "$fl"
b=$(run epget capsh --drop=cap_dac_override,cap_dac_read_search)
rc=$?
chmod 400 "$fl"
[ $rc -eq 0 ] || { echo "record (EP_GET) failed"; exit 1; }

python3 - "$a" "$b" <<'PY'
import sys
(n1, q1, r1), (n2, q2, r2) = (map(int, x.split()) for x in sys.argv[1:3])
print("hwtel record -s pcie -p 1ms, 2 s: control-plane traffic per sample")
print("  flags from sysfs:     %5d samples, %6.3f netlink requests, %6.3f pread64 calls per sample"
      % (n1, q1 / max(n1, 1), r1 / max(n1, 1)))
print("  flags by EP_GET:      %5d samples, %6.3f netlink requests, %6.3f pread64 calls per sample"
      % (n2, q2 / max(n2, 1), r2 / max(n2, 1)))
print("  requests per sample, sysfs / EP_GET: %.3f" % ((q1 / max(n1, 1)) / max(q2 / max(n2, 1), 1e-9)))
PY
