#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel record's sampling, as ratios against `hwtel pcie -w` at the same
# rate (10 ms: the shortest interval hwtel pcie -w takes, as perf stat -I),
# on the seed-example model, in one run:
#  1. sample-interval error |interval - period|, median and p99;
#  2. CPU time per sample (utime + stime of the running process over a
#     window, divided by the samples taken in it).
# hwtel pcie -w formats and prints a JSON report per interval, hwtel record
# stores a few floats: the CPU ratio says what the recorder saves. Both
# recordings are armed (--position end, no trigger): every sample goes
# into the ring, which lives in the capture file (a slot stored in a
# shared mapping per sample).
# Then hwtel record --sync 100ms against hwtel record, the same three
# figures as ratios: the cost of the periodic msync + fdatasync. In the
# lab the file is on the guest's /tmp (an overlay on tmpfs), where a sync
# reaches no disk: the ratio is the calls' cost, not a disk's latency.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make bench)}/tools/hwtel
win_s=${HWTEL_BENCH_WATCH_S:-4}
out=/tmp/bench-rec.$$

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

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# measure CMD...: run it, CPU ticks over [1 s, 1 s + win_s]; realtime ns of
# the window into $out/win
measure()
{
	local pid c0 c1 t0 t1

	"$@" &
	pid=$!
	sleep 1
	t0=$(date +%s%N); c0=$(ticks $pid)
	sleep "$win_s"
	c1=$(ticks $pid); t1=$(date +%s%N)
	kill -INT $pid
	wait $pid
	echo "$t0 $t1 $(( (c1 - c0) * 1000000 / hz ))" > "$out/win.$2"
}

measure "$hw" record -q -o "$out/r.rec" -p 10ms -N 100000 --position end -t $((win_s + 3))
mv "$out/win.record" "$out/win.rec"
"$hw" report --csv "$out/r.rec" > "$out/r.csv" || exit 1
measure "$hw" record -q -o "$out/s.rec" -p 10ms -N 100000 --position end --sync 100ms \
	-t $((win_s + 3))
mv "$out/win.record" "$out/win.sync"
"$hw" report --csv "$out/s.rec" > "$out/s.csv" || exit 1
measure "$hw" pcie -w -t 0.01 -j > "$out/p.json"


python3 - "$out" <<'PY'
import json, re, sys
d = sys.argv[1]

def win(name):
    t0, t1, cpu_us = map(int, open(f"{d}/win.{name}").read().split())
    return t0, t1, cpu_us

def stats(iv):
    err = sorted(abs(x - 1e7) for x in iv)
    return err[len(err) // 2], err[min(len(err) - 1, int(0.99 * len(err)))]

# record: sample times from the capture (CLOCK_REALTIME column for the window)
def record(csv, w):
    rows = [l.split(",") for l in open(f"{d}/{csv}").read().splitlines()[1:]]
    real = [int(r[4]) for r in rows]
    mono = [int(r[3]) for r in rows]
    t0, t1, cpu = win(w)
    n = sum(1 for t in real if t0 <= t <= t1)
    iv = [b - a for a, b in zip(mono, mono[1:])]
    med, p99 = stats(iv)
    return len(iv), med, p99, cpu / max(n, 1)

niv, rmed, rp99, rcpu = record("r.csv", "rec")
sniv, smed, sp99, scpu = record("s.csv", "sync")
# hwtel pcie -w: the "seconds" of each interval's JSON
secs = [float(x) for x in re.findall(r'"seconds": ([0-9.e+-]+)', open(f"{d}/p.json").read())]
t0, t1, cpu = win("pcie")
n_p = (t1 - t0) / 1e9 / (sum(secs) / len(secs)) if secs else 0
pmed, pp99 = stats([s * 1e9 for s in secs])
pcpu = cpu / max(n_p, 1)
print("hwtel record -p 10ms vs hwtel pcie -w -t 0.01 (%d and %d samples)" % (niv + 1, len(secs)))
print("  interval error median: record %8.1f us, pcie -w %8.1f us, ratio %.3f" % (rmed / 1e3, pmed / 1e3, rmed / pmed if pmed else float("nan")))
print("  interval error p99:    record %8.1f us, pcie -w %8.1f us, ratio %.3f" % (rp99 / 1e3, pp99 / 1e3, rp99 / pp99 if pp99 else float("nan")))
print("  CPU per sample:        record %8.1f us, pcie -w %8.1f us, ratio %.3f" % (rcpu, pcpu, rcpu / pcpu if pcpu else float("nan")))


def ratio(a, b):
    return a / b if b else float("nan")

print("hwtel record --sync 100ms vs hwtel record, both -p 10ms (%d and %d samples)" % (sniv + 1, niv + 1))
print("  interval error median: sync %8.1f us, record %8.1f us, ratio %.3f" % (smed / 1e3, rmed / 1e3, ratio(smed, rmed)))
print("  interval error p99:    sync %8.1f us, record %8.1f us, ratio %.3f" % (sp99 / 1e3, rp99 / 1e3, ratio(sp99, rp99)))
print("  CPU per sample:        sync %8.1f us, record %8.1f us, ratio %.3f" % (scpu, rcpu, ratio(scpu, rcpu)))
PY
