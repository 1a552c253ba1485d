#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a dbpmda -e transcript into plain lines, for the fleet selftests.

    dbpmda.py FILE                     the plain lines below
    dbpmda.py FILE check EXPECT NMETRICS  the checks of selftests/fleet/pcp.sh

prints, for each "desc M": "desc M SEMANTICS INDOM"; for each "text M" that
gave a one-line and a longer help: "text M"; for each value of a fetch:
"value M INSTANCE-NAME VALUE", the instance named from the "instance"
dumps of the transcript (so ask for the instance domains first) and
"value M - VALUE" for a metric without one; "novalue M" for a metric that
returned none. Anything dbpmda reported as an error: "error LINE".

With "check", prints one result per check, "ok<TAB>DESC" or
"not ok<TAB>DESC<TAB>DETAIL": every metric has both help texts, each
metric's semantics, and the values equal EXPECT (a file of "M INST VALUE"
lines, all of hwtel.pcie and hwtel.ddr that the fetch returned).
"""
import re
import sys

lines = open(sys.argv[1]).read().splitlines()
names = {}          # (indom, inst id) -> name
indom_of = {}       # metric -> indom ("PM_INDOM_NULL" or "510.2")
out = []
i = 0
cur_indom = None
while i < len(lines):
    l = lines[i]
    m = re.match(r"pmInDom: (\S+)$", l)
    if m:
        cur_indom = m.group(1)
    m = re.match(r"\[\s*\d+\] inst: (\d+) name: \"(.*)\"$", l)
    if m and cur_indom:
        names[(cur_indom, m.group(1))] = m.group(2)
    m = re.match(r"desc (\S+)$", l)
    if m and i + 3 < len(lines):
        dt = lines[i + 2]
        sem = lines[i + 3]
        ind = re.search(r"InDom: (\S+)", dt)
        s = re.search(r"Semantics: (\S+)", sem)
        if ind and s:
            indom_of[m.group(1)] = ind.group(1)
            out.append(f"desc {m.group(1)} {s.group(1)} {ind.group(1)}")
    m = re.match(r"text (\S+)$", l)
    if m and i + 3 < len(lines) and m.group(1) != "indom":
        if lines[i + 2].startswith("[") and lines[i + 2].endswith("]") and \
                len(lines[i + 2]) > 2 and lines[i + 3].strip() and \
                not lines[i + 3].startswith(("text ", "fetch ", "desc ", "Error")):
            out.append(f"text {m.group(1)}")
    m = re.match(r"\s+\S+ \((\S+)\): numval: (-?\d+)", l)
    if m:
        metric, n = m.group(1), int(m.group(2))
        if n <= 0:
            out.append(f"novalue {metric}")
        for k in range(max(n, 0)):
            v = re.match(r"\s+inst \[(\d+) or .*\] value (.*)$", lines[i + 1 + k])
            if v:
                name = names.get((indom_of.get(metric), v.group(1)), "?" + v.group(1))
                out.append(f"value {metric} {name} {v.group(2).split()[0]}")
            else:
                v = re.match(r"\s+value (.*)$", lines[i + 1 + k])
                out.append(f"value {metric} - {v.group(1).split()[0] if v else '?'}")
        i += max(n, 0)
    if "Error" in l or "error" in l:
        out.append(f"error {l.strip()}")
    i += 1

if len(sys.argv) < 3:
    print("\n".join(out))
    sys.exit(0)

GAUGES = {"link_up", "tags_free", "tags_free_lowest", "stfifo_free", "stfifo_free_lowest",
          "busy", "lost_deltas", "readout_overrun", "state_valid", "exact",
          "count"}  # hwtel.ddr.event.count: perf's scaled estimate can go down
DISCRETE = {"max_payload", "max_read_request", "ext_tag", "tag_10b", "rcb", "regions"}


def result(desc, problems):
    if problems:
        print(f"not ok\t{desc}\t{problems}")
    else:
        print(f"ok\t{desc}")


n = int(sys.argv[4])
texts = [l for l in out if l.startswith("text ")]
errors = [l for l in out if l.startswith("error")]
result(f"dbpmda: {n} metrics, each with a one-line and a long help text",
       "" if len(texts) == n and not errors else f"{len(texts)} texts, {errors[:3]}")
bad = []
descs = [l.split() for l in out if l.startswith("desc ")]
for _, m, sem, _ in descs:
    leaf = m.rsplit(".", 1)[1]
    want = "instant" if leaf in GAUGES else "discrete" if leaf in DISCRETE else "counter"
    if sem != want:
        bad.append((m, sem, want))
result("dbpmda: counters are PM_SEM_COUNTER, state and flags instant or discrete",
       "" if len(descs) == n and not bad else f"{len(descs)} descs, {bad}")
want = {}
for l in open(sys.argv[3]):
    f = l.split()
    want[(f[0], f[1])] = f[2]
got = {(l.split()[1], l.split()[2]): l.split()[3] for l in out if l.startswith("value ")}
for area in ("hwtel.pcie.", "hwtel.ddr."):
    w = {k: v for k, v in want.items() if k[0].startswith(area)}
    g = {k: v for k, v in got.items() if k[0].startswith(area)}
    diff = {k: (g.get(k), v) for k, v in w.items() if g.get(k) != v}
    extra = sorted(set(g) - set(w))
    result(f"dbpmda: all {len(w)} {area}* values as expected (the rest none)",
           "" if not diff and not extra else f"got/want {diff} extra {extra}")
