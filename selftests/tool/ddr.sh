#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel ddr on the DSS model, every variant: bandwidth exactly equal to the
# injected reads and writes over a known interval (the run of a command),
# JSON against the text, exact counts with at most 8 generic events, live
# rate traffic over -t 1, and honest marking of multiplexed estimates.

. "$(dirname "$0")/tool_lib.sh"
VARIANTS="cn10k odyssey cn20k"
tool_need_modules 23 hwtel_sim_ddr marvell_cn10k_ddr_pmu
tap_plan 24

for v in $VARIANTS; do
	if ! ddr_up "$v"; then
		tap_fail "$v: load model and driver"
		for i in 1 2 3 4 5 6; do tap_fail "$v: skipped after load failure"; done
		continue
	fi
	pmu=$(ddr_pmu_of "$v")
	dbg=$SIMDBG/$pmu
	tap_check "$v: $pmu is there" test -d "/sys/bus/event_source/devices/$pmu"

	# 1000 reads and 250 writes injected while the command runs: the
	# fixed counters are in a pinned group of their own, so the bandwidth
	# is exact whatever the generic events do.
	inject="echo 'ddr_ddr_reads 1000' > $dbg/inject; echo 'ddr_ddr_writes 250' > $dbg/inject"
	"$HW" ddr -d "$pmu" -j -- sh -c "$inject" > "$T/$v.json" 2> "$T/$v.err"
	tool_py "$v: bandwidth counts are exactly the injected 1000 reads, 250 writes" '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["data"][0]
assert (p["reads"], p["writes"]) == (1000, 250), (p["reads"], p["writes"])
assert p["derived"]["read_bytes"] == 64000 and p["derived"]["write_bytes"] == 16000
assert p["fixed_running_ns"] == p["fixed_enabled_ns"] > 0
bw = p["derived"]["read_bytes_per_second"]
assert abs(bw - 64000 / d["seconds"]) <= 1e-6 * bw, bw
' "$T/$v.json"
	"$HW" ddr -d "$pmu" -- sh -c "$inject" > "$T/$v.txt" 2>&1
	tap_check "$v: the text shows the same counts as the JSON" \
		python3 "$CHECK_JSON" ddr "$T/$v.json" "$T/$v.txt"

	# at most 8 generic events: one group, exact
	"$HW" ddr -d "$pmu" -j -e ddr_hif_rd_access,ddr_refresh,ddr_enter_selfref -- \
		sh -c "echo 'ddr_hif_rd_access 77' > $dbg/inject; echo 'ddr_refresh 5' > $dbg/inject; echo 'ddr_enter_selfref 2' > $dbg/inject" \
		> "$T/$v-e.json"
	tool_py "$v: -e with 3 events counts them exactly" '
import json, sys
p = json.load(open(sys.argv[1]))["data"][0]
ev = p["derived"]["events"]
got = {k: (ev[k]["value"], ev[k]["exact"]) for k in ev}
want = {"ddr_hif_rd_access": (77.0, True), "ddr_refresh": (5.0, True),
        "ddr_enter_selfref": (2.0, True)}
assert got == want, got
' "$T/$v-e.json"

	# steady traffic: 1e6 reads/s, 5e5 writes/s, 1e6 HIF reads/s. The model
	# advances with ktime and perf times the interval with its own clock;
	# the two see the interval's ends a register access apart (microseconds,
	# a few ms under TCG): 1 % of 1 s bounds that.
	echo "ddr_ddr_reads 1000000" > "$dbg/rate"
	echo "ddr_ddr_writes 500000" > "$dbg/rate"
	echo "ddr_hif_rd_access 1000000" > "$dbg/rate"
	"$HW" ddr -d "$pmu" -t 1 -j > "$T/$v-r.json"
	tool_py "$v: -t 1 bandwidth is the programmed rate within 1 %" '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["data"][0]
s = p["fixed_enabled_ns"] / 1e9
# at least the interval; more only when the host starves the TCG vCPU
assert 0.99 <= d["seconds"] <= 3.0, d["seconds"]
for n, r in (("reads", 1e6), ("writes", 5e5)):
    assert abs(p[n] - r * s) <= 0.01 * r * s, (n, p[n], r * s)
' "$T/$v-r.json"
	# With every report event the generic counters are multiplexed: the
	# values are perf scaled estimates. An unscaled value would be about
	# 1/groups (<= 1/3) of the truth, so 20 % separates scaled from
	# unscaled and leaves room for rotation jitter under TCG.
	tool_py "$v: multiplexed values are scaled, and marked as not exact" '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["data"][0]
assert max(e["group"] for e in p["events"].values()) >= 1, "expected several groups"
e = p["events"]["ddr_hif_rd_access"]
v = p["derived"]["events"]["ddr_hif_rd_access"]
assert v["exact"] == (e["running_ns"] >= e["enabled_ns"]), (e, v)
assert any(not x["exact"] for x in p["derived"]["events"].values()), "nothing scaled?"
truth = 1e6 * e["enabled_ns"] / 1e9
assert abs(v["value"] - truth) <= 0.2 * truth, (v["value"], truth)
' "$T/$v-r.json"
	echo "ddr_ddr_reads 0" > "$dbg/rate"
	echo "ddr_ddr_writes 0" > "$dbg/rate"
	echo "ddr_hif_rd_access 0" > "$dbg/rate"
	# the full report of the injection run above: a group that perf never
	# rotated in is "not counted", never a number
	tap_check "$v: the text marks estimates with ~ and explains the scaling" \
		sh -c "grep -q '~ estimate: .* share the 8 generic counters' '$T/$v.txt' && grep -qE ' ~[0-9]| not counted' '$T/$v.txt'"
	if [ "$v" = odyssey ]; then
		# watch: 2 intervals into a Prometheus textfile only; the
		# counters are totals since the tool started (>= 1 interval)
		echo "ddr_ddr_reads 1000000" > "$dbg/rate"
		"$HW" ddr -d "$pmu" -w -n 2 -t 0.3 -q --prometheus "$T/ddr.prom" > "$T/q.out"
		echo "ddr_ddr_reads 0" > "$dbg/rate"
		tool_py "$v: watch -n 2 --prometheus -q writes the textfile" '
import sys, os
t = open(sys.argv[1]).read().splitlines()
assert os.path.getsize(sys.argv[2]) == 0
pmu = sys.argv[3]
ctl = "0x" + pmu[len("mrvl_ddr_pmu_"):]
v = [l for l in t if l.startswith(f"hwtel_ddr_bytes_total{{device=\"{pmu}\",controller=\"{ctl}\",direction=\"read\"}} ")]
assert v and int(v[0].split()[-1]) >= 64 * 1e6 * 0.5, v
assert "# TYPE hwtel_ddr_bytes_total counter" in t
' "$T/ddr.prom" "$T/q.out" "$pmu"
	fi
	ddr_down
done

# -w -x: every row starts with the time since the first reading
if ddr_up cn10k; then
	pmu=$(ddr_pmu_of cn10k)
	"$HW" ddr -d "$pmu" -e ddr_refresh -t 0.05 -w -n 2 -x , > "$T/w.csv"
	tool_watch_csv "$T/w.csv" "$pmu"
else
	tap_fail "-w -x ,: load the cn10k model"
fi
ddr_down

# two controllers: the default report covers both, each with its own counts
if ddr_down && modprobe hwtel_sim_ddr variant=odyssey instances=2 &&
   modprobe marvell_cn10k_ddr_pmu; then
	p1=$(ls /sys/bus/event_source/devices | grep '^mrvl_ddr_pmu_' | sort | sed -n 2p)
	"$HW" ddr -j -e ddr_refresh -- sh -c "echo 'ddr_ddr_reads 4242' > $SIMDBG/$p1/inject" > "$T/two.json"
	tool_py "two controllers: both reported, reads land exactly on the second" '
import json, sys
d = json.load(open(sys.argv[1]))["data"]
got = {p["pmu"]: p["reads"] for p in d}
assert len(d) == 2 and got[sys.argv[2]] == 4242 and sorted(got.values()) == [0, 4242], got
' "$T/two.json" "$p1"
else
	tap_fail "two controllers: load the model with instances=2"
fi
ddr_down

tap_done
