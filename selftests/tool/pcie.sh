#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel pcie on the PCIE_TELEMETRY_MI model (ndk_pcie_tlm):
# the seed-example traffic measured over 1 s, exact totals after a clear,
# JSON against the text, the reference tool's command lines, watch mode,
# the LOST DELTAS / READ-OUT OVERRUN warnings and a larger layout.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 36 hwtel_sim_pcie ndk_pcie_tlm
tap_plan 36

# --- 1-3: -t 1 on the seed profile -------------------------------------
pcie_up profile=seed || { tap_fail "load model (seed) and driver"; tap_done; }
"$HW" pcie -t 1 > "$T/seed.txt" 2> "$T/seed.err"
tap_eq "hwtel pcie -t 1 exits 0 on the seed profile" "0" "$?"
# Every share of the report is a ratio of counts from one snapshot, so it
# must print exactly as in the seed. Gbps, Mpps and the clocks divide by the
# wall time the tool measured between its two group reads; the model counts
# with ktime at register access. The two instants differ by the latency of
# one group read (under TCG a few ms at most), and counts move in
# DRAIN_PERIOD steps (4096 cycles = 10 us): 1 % of a 1 s interval bounds both.
tool_py "shares equal the seed's example byte for byte (rates aside)" '
import sys
got = open(sys.argv[1]).read().splitlines()
want = open(sys.argv[2]).read().splitlines()
assert len(got) == len(want), f"{len(got)} lines, seed has {len(want)}"
for g, w in zip(got, want):
    if w.startswith("Measured over") or w.startswith("  PCIe clock"):
        continue
    if w.startswith(("PTC -> ", "PCIe -> ", "DMA0 -> ")):
        gc, wc = g.split("  "), w.split("  ")
        gc = [c.strip() for c in gc if c.strip()]
        wc = [c.strip() for c in wc if c.strip()]
        assert gc[:6] + gc[8:] == wc[:6] + wc[8:], f"{gc} != {wc}"
        continue
    assert g == w, f"got {g!r}\nwant {w!r}"
' "$T/seed.txt" "$SEED_GOLDEN"
tool_py "interval, clocks, Gbps and Mpps within 1 % of the seed" '
import sys, re
got = open(sys.argv[1]).read()
want = open(sys.argv[2]).read()
# never shorter than asked (a snapshot is stamped half a group read early)
# longer only when the host starves the TCG vCPU (seen: 1.9 s)
s = float(re.search(r"Measured over (\S+) s", got).group(1))
assert 0.99 <= s <= 3.0, f"interval {s}"
p, d = map(float, re.search(r"PCIe clock (\S+) MHz, DMA clock (\S+) MHz", got).groups())
assert abs(p - 400) <= 4 and abs(d - 200) <= 2, (p, d)
def rates(t):
    out = []
    for l in t.splitlines():
        if l.startswith(("PTC -> ", "PCIe -> ", "DMA0 -> ")):
            c = [x.strip() for x in l.split("  ") if x.strip()]
            out.append((float(c[6]), float(c[7])))
    return out
for (g1, g2), (w1, w2) in zip(rates(got), rates(want)):
    assert abs(g1 - w1) <= 0.01 * w1 and abs(g2 - w2) <= 0.01 * w2, ((g1, g2), (w1, w2))
' "$T/seed.txt" "$SEED_GOLDEN"

# --- 4-5: JSON of a live interval ----------------------------------------
"$HW" pcie -t 0.5 -j > "$T/seed.json"
tap_eq "hwtel pcie -j exits 0, one line" "0 1" "$? $(wc -l < "$T/seed.json")"
tap_check "-j parses and follows the schema" python3 "$CHECK_JSON" pcie "$T/seed.json"

# --- 6-9: exact totals and clearing (idle profile: nothing moves) --------
pcie_up profile=idle || { tap_fail "load model (idle) and driver"; tap_done; }
echo "words,ep=0,bus=0 999" > "$PCIE_DBG/inject"
"$HW" pcie -c > "$T/clear.txt"
tap_eq "hwtel pcie -c prints the reference tool's line" "Counters cleared." "$(cat "$T/clear.txt")"
"$HW" pcie -t 0 -j > "$T/zero.json"
tool_py "-c clears: every total is 0 afterwards" '
import json, sys
d = json.load(open(sys.argv[1]))["data"]
for ep in d["endpoints"]:
    vals = [ep["pcie_cycles"], ep["dma_cycles"]] + ep["brakes"] + sum(ep["hists"], [])
    for b in ep["buses"].values():
        vals += [b[k] for k in ("words", "backpressure", "transactions", "mvb",
                                "mvb_backpressure", "items")] + b["regions"]
    assert not any(vals), vals
' "$T/zero.json"
tool_inject_known
"$HW" pcie -t 0 -j > "$T/tot.json"
tool_py "-t 0 after -c gives exactly the injected totals" '
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["seconds"] is None
ep = doc["data"]["endpoints"][0]
b = ep["buses"]
want = {
    "pcie": (ep["pcie_cycles"], 4000000), "dma": (ep["dma_cycles"], 2000000),
    "rq words": (b["PTC -> PCIe (RQ)"]["words"], 1000),
    "up stall": (b["DMA0 -> PTC (UP)"]["backpressure"], 77),
    "rc frames": (b["PCIe -> PTC (RC)"]["transactions"], 5),
    "up mvb": (b["DMA0 -> PTC (UP)"]["mvb"], 9),
    "down mvb stall": (b["PTC -> DMA0 (DOWN)"]["mvb_backpressure"], 3),
    "rq items": (b["PTC -> PCIe (RQ)"]["items"], 800),
    "down region 1": (b["PTC -> DMA0 (DOWN)"]["regions"][1], 12),
    "brake 4": (ep["brakes"][4], 9),
    "tags band 2": (ep["hists"][0][2], 33),
    "stfifo band 3": (ep["hists"][1][3], 44),
}
bad = {k: v for k, v in want.items() if v[0] != v[1]}
assert not bad, bad
total = ep["pcie_cycles"] + ep["dma_cycles"] + sum(ep["brakes"]) + sum(map(sum, ep["hists"]))
for x in b.values():
    total += sum(x[k] for k in ("words", "backpressure", "transactions", "mvb",
                                "mvb_backpressure", "items")) + sum(x["regions"])
assert total == sum(v for _, v in want.values()), f"other counters moved: {total}"
' "$T/tot.json"
"$HW" pcie -t 0 > "$T/tot.txt"
tap_check "-j matches the text report (same totals)" python3 "$CHECK_JSON" pcie "$T/tot.json" "$T/tot.txt"

# --- CSV and Prometheus of the same totals ------------------------------
"$HW" pcie -t 0 -x ';' > "$T/tot.csv"
tool_py "-x ';' gives the injected counts, perf stat -x style, no flag set" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=";"))
pmu = sys.argv[2]
i = rows.index(["1000", "cycles", pmu + "/words,ep=0,bus=0/", "", "", "0.000000", "% used", ""])
# the next metric of the bus on a row of its own: 1000 words / 4000000 cycles
assert rows[i + 1] == ["", "", "", "", "", "0.025000", "% words", ""], rows[i + 1]
assert all(len(r) == 8 and r[7] == "" for r in rows), [r for r in rows if len(r) != 8][:2]
' "$T/tot.csv" "$PCIE_PMU"
"$HW" pcie -t 0.05 -w -n 2 -x , > "$T/w.csv"
tool_watch_csv "$T/w.csv" "$PCIE_PMU" 9
"$HW" pcie -t 0 -q --prometheus "$T/tot.prom" > "$T/q.out"
tool_py "--prometheus writes the textfile atomically, base units, _total" '
import os, sys
t = open(sys.argv[1]).read()
assert os.path.getsize(sys.argv[2]) == 0, "-q printed a report"
assert [f for f in os.listdir(os.path.dirname(sys.argv[1])) if ".tmp." in f] == [], "temp file left"
pmu = sys.argv[3]
for line in (f"hwtel_pcie_bus_bytes_total{{device=\"{pmu}\",endpoint=\"0\",bus=\"RQ\"}} 3200",
             f"hwtel_pcie_bus_cycles_total{{device=\"{pmu}\",endpoint=\"0\",bus=\"RQ\",event=\"words\"}} 1000",
             f"hwtel_pcie_low_cycles_total{{device=\"{pmu}\",endpoint=\"0\",resource=\"stfifo\",band=\"rest\"}} 44"):
    assert line in t.splitlines(), line
for l in t.splitlines():
    if l.startswith("# TYPE") and l.endswith(" counter"):
        assert l.split()[2].endswith("_total"), l
' "$T/tot.prom" "$T/q.out" "$PCIE_PMU"
"$HW" pcie -t 0 -w -n 2 > "$T/n2.txt"
tap_eq "-w -n 2 prints two reports and stops" "2" "$(grep -c '^Totals since the last clear' "$T/n2.txt")"

# --- the reference tool's command lines ---------------------------------
"$NFB" -t 0 -d /dev/nfb0 -i 0 > "$T/nfb.txt" 2>&1
tap_eq "nfb-pcie-telemetry -t 0 -d /dev/nfb0 -i 0 prints what hwtel pcie -t 0 does" \
	"$(cat "$T/tot.txt")" "$(cat "$T/nfb.txt")"

# --- 11-13: watch mode ---------------------------------------------------
pcie_up profile=seed || { tap_fail "reload model (seed)"; tap_done; }
"$HW" pcie -w -t 0.5 > "$T/watch.txt" 2> "$T/watch.err" &
pid=$!
fds1= fds3=
if wait_for "$T/watch.txt" '^Measured over' 1 30; then
	fds1=$(ls -l /proc/$pid/fd 2>/dev/null | grep -c 'perf_event')
fi
wait_for "$T/watch.txt" '^Measured over' 3 30
fds3=$(ls -l /proc/$pid/fd 2>/dev/null | grep -c 'perf_event')
kill -INT $pid
wait $pid
rc=$?
# ended by SIGINT itself after the last whole interval, as perf stat -I:
# the shell's 128 + 2
tap_eq "watch ends by SIGINT on SIGINT (status 130)" "130" "$rc"
n=$(grep -c '^Measured over' "$T/watch.txt")
tap_check "watch printed 3 or more complete intervals ($n)" test "$n" -ge 3 -a \
	"$(grep -c '^PTC storage FIFO words' "$T/watch.txt")" -ge 3
# 52 counters of the seed layout and snapshot_ns, opened once: same
# descriptors every interval
tap_eq "watch reuses its 53 open events (perf fds at interval 1 and 3)" "53 53" "$fds1 $fds3"

"$HW" pcie -w -t 0.3 -j > "$T/wj.txt" 2>&1 &
pid=$!
wait_for "$T/wj.txt" '"seconds"' 2 30
kill -TERM $pid
wait $pid
rc=$?
# JSON Lines, as perf stat -I -j: one object per line, the interval's end
# time (seconds since the start) first
tool_py "JSON watch exits 0 on SIGTERM; one object per line, interval first" '
import json, sys
rc, lines = sys.argv[2], open(sys.argv[1]).read().splitlines()
assert rc == "0", f"exit {rc}"
docs = [json.loads(l) for l in lines]
assert len(docs) >= 2 and all(0.29 <= d["seconds"] <= 3 for d in docs), [d["seconds"] for d in docs]
assert all(next(iter(d)) == "interval" for d in docs), [list(d)[:2] for d in docs]
t = [d["interval"] for d in docs]
assert all(b > a for a, b in zip(t, t[1:])) and t[0] >= 0.29, t
' "$T/wj.txt" "$rc"

# a single interval cut short by SIGINT prints what it counted, then ends
# by SIGINT (130), as perf stat
pcie_up profile=idle || { tap_fail "reload model (idle)"; tap_done; }
"$HW" pcie -t 60 -x , > "$T/int.csv" 2> "$T/int.err" &
pid=$!
# blocked in ppoll (271 on x86-64, 73 on arm64), the tool's sleep: the
# interval has begun
tool_wait_syscall $pid 271 73
echo "words,ep=0,bus=0 1000" > "$PCIE_DBG/inject"
kill -INT $pid
wait $pid
rc=$?
tool_py "SIGINT during -t 60: the counts so far are printed, then ends by SIGINT (130)" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
pmu, rc = sys.argv[2], sys.argv[3]
assert rc == "130", f"exit {rc}: " + open(sys.argv[4]).read()
w = [r for r in rows if r[2] == pmu + "/words,ep=0,bus=0/"]
assert len(w) == 1 and w[0][0] == "1000", (w, rows[:3])
assert 0 < int(w[0][3]) < 60e9, w
' "$T/int.csv" "$PCIE_PMU" "$rc" "$T/int.err"

# --- 14-18: flags -------------------------------------------------------
pcie_up profile=idle || { tap_fail "reload model (idle)"; tap_done; }
"$HW" pcie -- sh -c "echo lost_delta > $PCIE_DBG/flags" > "$T/f1.txt" 2>&1
tap_check "a LOST DELTA during the interval shows its warning at the top" \
	grep -qx '  !! LOST DELTAS - the counters are not exact' "$T/f1.txt"
"$HW" pcie -c > /dev/null
"$HW" pcie -- sh -c "echo readout_overrun > $PCIE_DBG/flags" > "$T/f2.txt" 2>&1
tool_py "a READ-OUT OVERRUN shows its own warning only, before the endpoints" '
import sys
t = open(sys.argv[1]).read()
w = "  !! READ-OUT OVERRUN - the counters are not exact\n"
assert w in t and "LOST DELTAS" not in t, t[:400]
assert t.index(w) < t.index("PCIe endpoint 0"), "warning not at the top"
' "$T/f2.txt"
echo lost_delta > "$PCIE_DBG/flags"
"$HW" pcie -t 0.2 > "$T/f3.txt" 2>&1
tap_check "a flag set before the interval stays set: the interval shows it" \
	grep -qx '  !! LOST DELTAS - the counters are not exact' "$T/f3.txt"
echo lost_delta > "$PCIE_DBG/flags"
"$HW" pcie -t 0 > "$T/f4.txt" 2>&1
tap_check "-t 0 shows a flag set since the last clear" grep -q '!! LOST DELTAS' "$T/f4.txt"
"$HW" pcie -c > /dev/null && "$HW" pcie -t 0 > "$T/f5.txt" 2>&1
tap_check "-c clears the flags" sh -c "! grep -q '!!' '$T/f5.txt'"

# --- 19-20: another layout (2 endpoints, 2 DMA ports, 33-bit counters) ---
pcie_up profile=seed endpoints=2 dma_ports=2 regions_up=4 regions_down=3 cnt_width=33 ||
	{ tap_fail "load model (2/2/4)"; tap_done; }
"$HW" pcie -t 0.3 > "$T/l.txt" 2>&1
tool_py "a 2-endpoint, 2-port layout reports every endpoint and bus" '
import sys
t = open(sys.argv[1]).read()
for s in ("PCIe telemetry - 2 endpoint(s), 2 DMA port(s) per endpoint", "PCIe endpoint 1",
          "DMA1 -> PTC (UP)", "PTC -> DMA1 (DOWN)"):
    assert s in t, s
' "$T/l.txt"
"$HW" pcie -t 0.3 -j > "$T/l.json"
tap_check "its JSON follows the schema" python3 "$CHECK_JSON" pcie "$T/l.json"

# --- 27-34: two blocks (two NDK cards, or two PCIE_TELEMETRY blocks) ----
# Without -d, as perf stat without a PMU filter and hwtel ddr: every
# block, each named by its PMU, in every output; -d still selects one.
P2=ndk_pcie_tlm_3fff00100000
pcie_up profile=idle instances=2 || { tap_fail "load model (2 instances)"; tap_done; }
"$HW" pcie -c -d "$PCIE_PMU" > /dev/null && "$HW" pcie -c -d "$P2" > /dev/null
echo "words,ep=0,bus=0 1000" > "$SIMDBG/$PCIE_PMU/inject"
echo "words,ep=0,bus=0 2000" > "$SIMDBG/$P2/inject"
echo "items,ep=0,bus=0 300" > "$SIMDBG/$P2/inject"
"$HW" pcie -t 0 -j > "$T/two.json"
tool_py "-t 0 -j: one object per block, each with its PMU and its own counts" '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
got = [(d["hwtel"]["pmu"], d["data"]["endpoints"][0]["buses"]["PTC -> PCIe (RQ)"]["words"],
        d["data"]["endpoints"][0]["buses"]["PTC -> PCIe (RQ)"]["items"]) for d in docs]
assert got == [(sys.argv[2], 1000, 0), (sys.argv[3], 2000, 300)], got
' "$T/two.json" "$PCIE_PMU" "$P2"
"$HW" pcie -t 0 -x ';' > "$T/two.csv"
tool_py "-t 0 -x: the rows of both blocks, each led by its PMU" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=";"))
p1, p2 = sys.argv[2], sys.argv[3]
w = [(r[2], r[0]) for r in rows if r[2].endswith("/words,ep=0,bus=0/") or r[2].endswith("/items,ep=0,bus=0/")]
assert w == [(p1 + "/words,ep=0,bus=0/", "1000"), (p1 + "/items,ep=0,bus=0/", "0"),
             (p2 + "/words,ep=0,bus=0/", "2000"), (p2 + "/items,ep=0,bus=0/", "300")], w
n1 = sum(r[2].startswith(p1 + "/") for r in rows)
n2 = sum(r[2].startswith(p2 + "/") for r in rows)
assert n1 == n2 and n1 > 0 and all(len(r) == 8 for r in rows), (n1, n2)
' "$T/two.csv" "$PCIE_PMU" "$P2"
"$HW" pcie -t 0 > "$T/two.txt"
{ echo "PMU $PCIE_PMU"; "$HW" pcie -t 0 -d "$PCIE_PMU"; echo; echo "PMU $P2"; "$HW" pcie -t 0 -d "$P2"; } > "$T/two.want"
tap_eq "-t 0 text: each block's report (what -d prints) under a line naming its PMU" \
	"$(cat "$T/two.want")" "$(cat "$T/two.txt")"
"$HW" pcie -t 0 -j -d "$P2" > "$T/one.json"
tap_eq "-d still selects one block" "1 $P2" \
	"$(wc -l < "$T/one.json") $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hwtel"]["pmu"])' "$T/one.json")"
"$HW" pcie -t 0 -w -n 2 -x , > "$T/two-w.csv"
tool_py "-w -x: every interval has the rows of both blocks" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
p1, p2 = sys.argv[2], sys.argv[3]
w = [(r[3], r[1]) for r in rows if r[3].endswith("/words,ep=0,bus=0/")]
assert w == [(p1 + "/words,ep=0,bus=0/", "1000"), (p2 + "/words,ep=0,bus=0/", "2000")] * 2, w
assert len({r[0] for r in rows}) == 2, {r[0] for r in rows}
' "$T/two-w.csv" "$PCIE_PMU" "$P2"
"$HW" pcie -t 0 -q --prometheus "$T/two.prom"
tool_py "--prometheus: the series of both blocks, labelled device=PMU" '
import sys
t = open(sys.argv[1]).read().splitlines()
for pmu, v in ((sys.argv[2], 1000), (sys.argv[3], 2000)):
    l = f"hwtel_pcie_bus_cycles_total{{device=\"{pmu}\",endpoint=\"0\",bus=\"RQ\",event=\"words\"}} {v}"
    assert l in t, l
' "$T/two.prom" "$PCIE_PMU" "$P2"
# the reference tool has one device: its report stays the one block's
"$NFB" -t 0 > "$T/nfb2.txt" 2>&1
tap_eq "nfb-pcie-telemetry -t 0 still reports only the first block, byte for byte" \
	"$("$HW" pcie -t 0 -d "$PCIE_PMU")" "$(cat "$T/nfb2.txt")"
"$HW" pcie -c > "$T/clear2.txt" && "$HW" pcie -t 0 -j > "$T/clear2.json"
tool_py "-c without -d clears every block (one line, as the reference tool)" '
import json, sys
assert open(sys.argv[1]).read() == "Counters cleared.\n"
docs = [json.loads(l) for l in open(sys.argv[2])]
got = [(d["hwtel"]["pmu"], d["data"]["endpoints"][0]["buses"]["PTC -> PCIe (RQ)"]["words"],
        d["data"]["endpoints"][0]["buses"]["PTC -> PCIe (RQ)"]["items"]) for d in docs]
assert got == [(sys.argv[3], 0, 0), (sys.argv[4], 0, 0)], got
' "$T/clear2.txt" "$T/clear2.json" "$PCIE_PMU" "$P2"

# --- 35-36: the exporter started before any block ------------------------
# At boot the exporter may start before the driver is loaded or the card
# attached: it waits for the first block instead of exiting 3.
pcie_down
"$HW" pcie -w -t 0.3 -q --prometheus "$T/late.prom" 2> "$T/late.err" &
pid=$!
wait_for "$T/late.err" "no ndk_pcie_tlm_\* PMU yet: waiting for one" 1 30
r=$?
# the sleep of the wait (ppoll: 271 on x86-64, 73 on arm64)
tool_wait_syscall $pid 271 73
tap_eq "no PCIe PMU: the exporter waits (one line says so), alive, no file yet" "0 0 0" \
	"$r $(kill -0 $pid; echo $?) $([ -e "$T/late.prom" ] && echo 1 || echo 0)"
pcie_up profile=idle
wait_for "$T/late.prom" "device=\"$PCIE_PMU\"" 1 30
r=$?
echo "words,ep=0,bus=0 1000" > "$PCIE_DBG/inject"
wait_for "$T/late.prom" "^hwtel_pcie_bus_cycles_total{device=\"$PCIE_PMU\",endpoint=\"0\",bus=\"RQ\",event=\"words\"} 1000$" 1 30
r2=$?
kill -TERM $pid
wait $pid
rc=$?
tap_eq "driver loaded then: the block's series appear, its counts since it joined; exit 0 on SIGTERM, file removed" \
	"0 0 0 1 0" "$r $r2 $rc $(grep -c "$PCIE_PMU: new PCIe telemetry device, exported from now on" "$T/late.err") $([ -e "$T/late.prom" ] && echo 1 || echo 0)"

tap_done
