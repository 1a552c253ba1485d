#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check hwtel -j output against its schema and against the text report.

    check_json.py pcie OUT.json [REPORT.txt]
    check_json.py ddr  OUT.json [REPORT.txt]

The schema is Documentation/userspace-api/hwtel.rst ("JSON output"). With a
text report, every number of the report must be the JSON's derived value
formatted the way the report formats it. Exit status 0 = all good.
"""
import json
import math
import sys

errors = []


def need(cond, msg):
    if not cond:
        errors.append(msg)


def typed(obj, key, types, where):
    need(key in obj, f"{where}: missing '{key}'")
    if key in obj:
        need(isinstance(obj[key], types) and not (types is int and isinstance(obj[key], bool)),
             f"{where}.{key}: {type(obj[key]).__name__} is not {types}")


def pct(v):
    return "-" if v is None else f"{v:.2f}"


def check_pcie(doc, text):
    need(list(doc)[:2] == ["seconds", "data"], "top-level keys must start with seconds, data")
    secs = doc["seconds"]
    need(secs is None or isinstance(secs, float), "seconds must be a float or null")
    data = doc["data"]
    need(list(data) == ["endpoints", "status", "config"], f"data keys {list(data)}")
    # without the control plane's state (no CAP_PERFMON) its values are null
    state = doc["hwtel"]["state_valid"]
    need(isinstance(state, bool), "hwtel.state_valid must be a bool")

    def state_typed(obj, key, types, where):
        if state:
            typed(obj, key, types, where)
        else:
            need(key in obj and obj[key] is None, f"{where}.{key} must be null without the state")

    for k in ("busy", "lost_deltas", "readout_overrun"):
        state_typed(data["status"], k, bool, "status")
    for k in ("pcie_endpoints", "dma_ports", "probe_pcie_regions", "probe_dma_regions",
              "counter_width", "item_bytes", "drain_period", "hist_bands",
              "tag_capacity", "stfifo_capacity"):
        typed(data["config"], k, int, "config")
    need(len(data["endpoints"]) == data["config"]["pcie_endpoints"], "endpoint count")
    for ep in data["endpoints"]:
        w = f"endpoints[{ep.get('index')}]"
        for k in ("index", "pcie_cycles", "dma_cycles"):
            typed(ep, k, int, w)
        for k in ("mps", "mrrs", "rcb", "tags_free", "tags_free_min", "stfifo_free",
                  "stfifo_free_min"):
            state_typed(ep, k, int, w)
        for k in ("link_up", "ext_tag", "tag_10b"):
            state_typed(ep, k, bool, w)
        typed(ep, "brakes", list, w)
        typed(ep, "hists", list, w)
        need(all(len(h) == data["config"]["hist_bands"] for h in ep["hists"]), w + ": bands")
        typed(ep, "buses", dict, w)
        need(len(ep["buses"]) == 2 + 2 * data["config"]["dma_ports"], w + ": bus count")
        for name, bus in ep["buses"].items():
            for k in ("words", "backpressure", "transactions", "mvb", "mvb_backpressure",
                      "items", "region_bytes"):
                typed(bus, k, int, f"{w}.{name}")
            for k in ("pcie_clk", "has_mvb", "dma_up"):
                typed(bus, k, bool, f"{w}.{name}")
            typed(bus, "regions", list, f"{w}.{name}")
    der = doc["derived"]["endpoints"]
    need(len(der) == len(data["endpoints"]), "derived endpoint count")
    need(doc["hwtel"]["totals"] == (secs is None), "hwtel.totals")
    # trusted: no STATUS flag set; null (and untrusted_by null) when not read
    hw = doc["hwtel"]
    flags = [k for k in ("lost_deltas", "readout_overrun") if data["status"].get(k)]
    if state:
        need(hw.get("trusted") is (not flags), f"hwtel.trusted {hw.get('trusted')} with flags {flags}")
        need(hw.get("untrusted_by") == flags, f"hwtel.untrusted_by {hw.get('untrusted_by')} != {flags}")
    else:
        need("trusted" in hw and hw["trusted"] is None, "hwtel.trusted must be null without the state")
        need("untrusted_by" in hw and hw["untrusted_by"] is None,
             "hwtel.untrusted_by must be null without the state")
    regions = {"pcie": data["config"]["probe_pcie_regions"], "dma": data["config"]["probe_dma_regions"]}
    for ep, d in zip(data["endpoints"], der):
        for name, m in d["buses"].items():
            raw = ep["buses"][name]
            probe = regions["pcie" if raw["pcie_clk"] else "dma"]
            need(m.get("probe_regions") == probe, f"{name}: probe_regions {m.get('probe_regions')} != {probe}")
            real = len(raw["regions"])
            x = probe / real if real and probe > real else 1.0
            need(m.get("padded") is (x > 1.0), f"{name}: padded")
            need(isinstance(m.get("max_inflation"), float) and abs(m["max_inflation"] - x) < 1e-9,
                 f"{name}: max_inflation {m.get('max_inflation')} != {x}")
    if not text:
        return
    # an untrusted interval marks every figure of the report with "!"
    marked = hw.get("trusted") is False

    def unmark(cell, where):
        if cell in ("-", "") or cell.strip() == "-":
            return cell
        parts = cell.split(" ")
        for p in parts:
            need(p == "-" or p.startswith("!") == marked,
                 f"{where}: '{cell}' {'lacks' if marked else 'has'} the ! mark")
        return " ".join(p[1:] if p.startswith("!") else p for p in parts)
    # every table row of the text report from the derived values
    lines = text.splitlines()
    for ep, d in zip(data["endpoints"], der):
        for name, m in d["buses"].items():
            row = [l for l in lines if l.startswith(name + "  ")]
            need(len(row) >= 1, f"bus row {name} missing in the text")
            if not row:
                continue
            cells = [c for c in row[ep["index"] if len(row) > ep["index"] else 0]
                     .split("  ") if c.strip()]
            cells = [c.strip() for c in cells]
            cells = cells[:1] + [unmark(c, name) for c in cells[1:]]
            regions = " ".join("-" if r is None else f"{r:.1f}" for r in m["region_pct"])
            want = [name, pct(m["used_pct"]), pct(m["words_pct"]), pct(m["mfb_stall_pct"]),
                    pct(m["mvb_stall_pct"]), regions]
            if secs is not None:
                want += [f"{m['gbps']:.2f}", f"{m['mpps']:.3f}"]
            want += [pct(m["rd_pct"]), "-" if m["avg_bytes"] is None else f"{m['avg_bytes']:.0f}"]
            need(cells == want, f"{name}: text {cells} != json {want}")
        if secs is not None:
            clk = f"  PCIe clock {d['pcie_clock_mhz']:.1f} MHz, DMA clock {d['dma_clock_mhz']:.1f} MHz"
            need(clk in lines, f"clock line '{clk}' not in text")
        for r in d["stop_reasons"]:
            if r["pct"] is None:
                v = "   -  "
            else:
                v = ("!" if marked else " ") + f"{r['pct']:.2f}"
            need(any(f"{r['name']} " in l and f"{v} %" in l for l in lines),
                 f"stop reason {r['name']} {v} not in text")
    need(("!! LOST DELTAS" in text) == bool(data["status"]["lost_deltas"]), "LOST DELTAS warning")
    need(("!! READ-OUT OVERRUN" in text) == bool(data["status"]["readout_overrun"]),
         "READ-OUT OVERRUN warning")
    need(("?? STATUS FLAGS NOT READ" in text) == (not state), "STATUS FLAGS NOT READ line")
    need(("!! Figures marked ! cannot be trusted" in text) == marked, "Figures marked ! line")


def check_ddr(doc, text):
    need(list(doc)[:2] == ["seconds", "data"], "top-level keys must start with seconds, data")
    data = doc["data"]
    need(isinstance(data, list) and data, "data must be a non-empty list of PMUs")
    for p in data:
        for k in ("pmu", "identifier"):
            typed(p, k, str, "pmu")
        for k in ("reads", "writes", "fixed_enabled_ns", "fixed_running_ns"):
            typed(p, k, int, p.get("pmu", "?"))
        typed(p, "events", dict, p.get("pmu", "?"))
        for n, e in p["events"].items():
            for k in ("value", "enabled_ns", "running_ns", "group"):
                typed(e, k, int, n)
        der = p["derived"]
        for k in ("read_bytes", "write_bytes"):
            typed(der, k, int, "derived")
        need(der["read_bytes"] == 64 * p["reads"], "read_bytes = 64 x reads")
        need(der["write_bytes"] == 64 * p["writes"], "write_bytes = 64 x writes")
        if text:
            block = text.split(f"DDR controller {p['pmu']}", 1)
            need(len(block) == 2, f"{p['pmu']}: no report in the text")
            if len(block) == 2:
                rows = {}
                for l in block[1].splitlines():
                    if l.startswith("  read ") or l.startswith("  write "):
                        rows.setdefault(l.split()[0], l.split())
                need(rows.get("read", [None] * 4)[3] == str(p["reads"]),
                     f"{p['pmu']}: read count {p['reads']} not in the text")
                need(rows.get("write", [None] * 4)[3] == str(p["writes"]),
                     f"{p['pmu']}: write count {p['writes']} not in the text")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    text = open(sys.argv[3]).read() if len(sys.argv) > 3 else None
    with open(path) as f:
        doc = json.load(f)
    (check_pcie if kind == "pcie" else check_ddr)(doc, text)
    for e in errors:
        print("check_json:", e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
