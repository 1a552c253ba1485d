#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An interval with LOST DELTA set is marked as untrustworthy in every
# output of hwtel (issue 21): text ("!" before each figure, the reference
# tool's warning line kept), JSON ("trusted": false), CSV (the flags
# field), Prometheus (flagged intervals counted) and hwtel record (the
# pcie.untrusted track, "!" in hwtel report). The model's debugfs "flags"
# file sets LOST DELTA as the block would; "overload" makes its
# accumulator drop bus deltas and set the flag at every drain.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 10 hwtel_sim_pcie ndk_pcie_tlm
tap_plan 10

lines() { wc -l < "$1" 2>/dev/null || echo 0; }

pcie_up profile=seed || { tap_fail "load model (seed) and driver"; tap_done; }
SET="echo lost_delta > $PCIE_DBG/flags"

# --- 1-4: one interval in which LOST DELTA sets, in each format ----------
"$HW" pcie -- sh -c "$SET" > "$T/l.txt" 2>&1
"$HW" pcie -j -- sh -c "$SET" > "$T/l.json" 2>&1
"$HW" pcie -x , -- sh -c "$SET" > "$T/l.csv" 2>&1
tool_py "text: the reference warning line, then every figure marked !" '
import sys
t = open(sys.argv[1]).read()
assert "\n  !! LOST DELTAS - the counters are not exact\n  !! Figures marked ! cannot be trusted\n\nPCIe endpoint 0\n" in t, t[:500]
rows = [l for l in t.splitlines() if l.startswith(("PTC -> ", "PCIe -> ", "DMA0 -> "))]
assert len(rows) == 4, rows
for r in rows:
    cells = [c.strip() for c in r.split("  ") if c.strip()][1:]
    for c in cells:
        for p in c.split(" "):
            assert p == "-" or p.startswith("!"), (r, p)
assert "!0.00 %" in t and "\n    no free PCIe tag           !" in t, t
' "$T/l.txt"
tool_py "JSON: trusted false, untrusted_by [lost_deltas], schema" '
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
assert d["hwtel"]["trusted"] is False and d["hwtel"]["untrusted_by"] == ["lost_deltas"], d["hwtel"]
assert d["data"]["status"]["lost_deltas"] is True
subprocess.run(["python3", sys.argv[2], "pcie", sys.argv[1]], check=True)
' "$T/l.json" "$CHECK_JSON"
tool_py "CSV: eight fields, the flags field lost_deltas on every row" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) > 50 and all(len(r) == 8 and r[7] == "lost_deltas" for r in rows), \
    [r for r in rows if len(r) != 8 or r[7] != "lost_deltas"][:3]
' "$T/l.csv"
# the flag stays set until the explicit clear; after it the next interval
# is clean
"$HW" pcie -c > /dev/null
"$HW" pcie -t 0.2 > "$T/c.txt" 2>&1
"$HW" pcie -t 0.2 -j > "$T/c.json" 2>&1
"$HW" pcie -t 0.2 -x , > "$T/c.csv" 2>&1
tool_py "a clean interval: no mark, trusted true, empty flags field" '
import csv, json, sys
t = open(sys.argv[1]).read()
assert "!" not in t, t
d = json.load(open(sys.argv[2]))
assert d["hwtel"]["trusted"] is True and d["hwtel"]["untrusted_by"] == [], d["hwtel"]
rows = list(csv.reader(open(sys.argv[3])))
assert rows and all(len(r) == 8 and r[7] == "" for r in rows), rows[:2]
' "$T/c.txt" "$T/c.json" "$T/c.csv"

# --- 5-7: watch mode across an overload, with --prometheus ----------------
# The flags are sticky and -w never clears them: intervals that ended
# before the overload began are clean, one that lies wholly inside it is
# flagged and so is every later one (the flag holds until hwtel pcie -c),
# and the exporter counts each of them.
"$HW" pcie -w -t 0.3 -j --prometheus "$T/w.prom" > "$T/w.jsonl" 2> "$T/w.err" &
pid=$!
wait_for "$T/w.jsonl" '"interval"' 1 60
c1=$(lines "$T/w.jsonl")
echo 1 > "$PCIE_DBG/overload"
wait_for "$T/w.jsonl" '"interval"' $((c1 + 2)) 60
c0=$(lines "$T/w.jsonl")
echo 0 > "$PCIE_DBG/overload"
wait_for "$T/w.jsonl" '"interval"' $((c0 + 3)) 60
# the textfile holds a whole exposition (renamed in place); copy it before
# SIGINT, which removes it
cp "$T/w.prom" "$T/w.prom.copy"
kill -INT $pid
wait $pid
rc=$?
tap_eq "watch across an overload ends by SIGINT on SIGINT (130)" "130" "$rc"
tool_py "watch: clean before the overload, flagged inside it and after it ($c1, $c0)" '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
c1, c0 = int(sys.argv[2]), int(sys.argv[3])
tr = [d["hwtel"]["trusted"] for d in docs]
assert len(docs) >= c0 + 3, (len(docs), c0)
assert all(tr[:c1]), tr
assert not any(tr[c1 + 1:]), tr
assert all(d["hwtel"]["untrusted_by"] == ["lost_deltas"] for d in docs[c1 + 1:]), tr
' "$T/w.jsonl" "$c1" "$c0"
tool_py "--prometheus: flagged intervals counted as the JSON lines show them" '
import json, re, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
t = open(sys.argv[2]).read()
pmu = sys.argv[3]
def val(name):
    m = re.search("^" + re.escape(name) + r" (\d+)$", t, re.M)
    assert m, name
    return int(m.group(1))
n = val(f"hwtel_pcie_intervals_total{{device=\"{pmu}\"}}")
assert 1 <= n <= len(docs), (n, len(docs))
lost = sum(1 for d in docs[:n] if "lost_deltas" in d["hwtel"]["untrusted_by"])
assert lost >= 1, [d["hwtel"]["trusted"] for d in docs]
assert val(f"hwtel_pcie_flagged_intervals_total{{device=\"{pmu}\",flag=\"lost_deltas\"}}") == lost
assert val(f"hwtel_pcie_flagged_intervals_total{{device=\"{pmu}\",flag=\"readout_overrun\"}}") == 0
assert val(f"hwtel_pcie_flag{{device=\"{pmu}\",flag=\"lost_deltas\"}}") == \
    int(not docs[n - 1]["hwtel"]["trusted"])
' "$T/w.jsonl" "$T/w.prom.copy" "$PCIE_PMU"

# --- 8-10: hwtel record ----------------------------------------------------
# The recorder triggers on its own flag track: LOST DELTA set once while it
# samples marks exactly that sample.
pcie_up profile=seed || { tap_fail "reload model (seed)"; tap_done; }
"$HW" record -q -o "$T/r.rec" -p 10ms -N 21 --position center \
	--trigger 'pcie.untrusted > 0' -t 120 2> "$T/r.err" &
pid=$!
# asleep in clock_nanosleep (230 on x86-64, 115 on arm64): sampling began
tool_wait_syscall $pid 230 115
sh -c "$SET"
wait $pid
rc=$?
tap_eq "record with --trigger 'pcie.untrusted > 0' exits 0" "0" "$rc"
"$HW" report --json "$T/r.rec" > "$T/r.json" && "$HW" report "$T/r.rec" > "$T/r.txt"
tool_py "record: one sample marked, the trigger; JSON trusted false there only" '
import json, sys
d = json.load(open(sys.argv[1]))
k = d["tracks"].index("pcie.untrusted")
s = d["shots"][0]
assert s["cause"] == "condition", s["cause"]
v = [x["values"][k] for x in s["samples"]]
ti = s["trigger_index"]
assert v[ti] == 1 and all(x == 0 for i, x in enumerate(v) if i != ti), v
assert [x["trusted"] for x in s["samples"]] == [i != ti for i in range(len(v))], s["samples"][ti]
' "$T/r.json"
tool_py "hwtel report: the trigger row marked !>>, the note says why" '
import sys
t = open(sys.argv[1]).read()
assert "\nnote: ! marks a sample whose interval had a STATUS flag set" in t, t[:300]
rows = [l for l in t.splitlines() if l.startswith("!")]
assert len(rows) == 1 and rows[0].startswith("!>> ") and rows[0].split()[1] == "+0", rows
' "$T/r.txt"

tap_done
