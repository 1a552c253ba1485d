#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Strict check of a Prometheus text exposition file (node_exporter textfile).

    promcheck.py FILE            exit 0 and print nothing when FILE is valid
    promcheck.py FILE NAME=VAL.. also require each sample (NAME is the sample
                                 as written, with its labels) to have VAL
    promcheck.py FILE [NAME=VAL..] -- FILE [NAME=VAL..] ...
                                 several files: one line per file, "ok FILE"
                                 or "bad FILE: why", exit 1 if any is bad

Checks the text format 0.0.4 as node_exporter parses it, and the naming
conventions promtool lints: names and label names of the allowed
characters, no reserved "__" labels, label values quoted with only the
\\\\, \\" and \\n escapes, each family's HELP and TYPE once and before its
samples, a family's samples together, no series twice, values that are
numbers (NaN, +Inf, -Inf allowed), counters named *_total and never
negative, no other type named *_total, base units only (no milli/kilo/
percent in a name), a newline at the end and no blank lines.

And hwtel's label conventions (Documentation/admin-guide/hwtel-fleet.rst):
every sample of a family has the same label names; every hwtel_pcie_* and
hwtel_ddr_* sample has "device" (the PMU name), every hwtel_ddr_* one
"controller", every hwtel_pcie_bus_* one "endpoint" and "bus"; none has
the old "pmu" or "port".
"""
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
# label names a family must have, by name prefix; names no family may use
REQUIRED = (("hwtel_pcie_", {"device"}), ("hwtel_ddr_", {"device", "controller"}),
            ("hwtel_pcie_bus_", {"endpoint", "bus"}))
FORBIDDEN = {"pmu", "port"}
NON_BASE = ("milli", "micro", "nano", "kilo", "mega", "giga", "percent",
            "_ms", "_us", "_ns", "_kb", "_mb", "_gb", "minutes", "hours")


def parse_labels(s, where):
    """'a="x",b="y"' -> tuple of (name, value); strict escapes."""
    out, i, n = [], 0, len(s)
    while i < n:
        m = re.match(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", s[i:])
        if not m:
            raise ValueError(f"{where}: bad label at {s[i:]!r}")
        name = m.group(1)
        if name.startswith("__"):
            raise ValueError(f"{where}: reserved label name {name}")
        i += m.end()
        val = []
        while True:
            if i >= n:
                raise ValueError(f"{where}: unterminated label value")
            c = s[i]
            if c == "\\":
                if i + 1 >= n or s[i + 1] not in '\\"n':
                    raise ValueError(f"{where}: bad escape in label value")
                val.append({"\\": "\\", '"': '"', "n": "\n"}[s[i + 1]])
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise ValueError(f"{where}: newline in label value")
            else:
                val.append(c)
                i += 1
        if name in [k for k, _ in out]:
            raise ValueError(f"{where}: label {name} twice")
        out.append((name, "".join(val)))
        if i < n:
            if s[i] != ",":
                raise ValueError(f"{where}: expected ',' after label {name}")
            i += 1
    return tuple(sorted(out))


def parse_value(v, where):
    if v in ("NaN", "+Inf", "-Inf", "Inf"):
        return float(v.replace("Inf", "inf"))
    if not re.match(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$", v):
        raise ValueError(f"{where}: bad value {v!r}")
    return float(v)


def check(text):
    if not text.endswith("\n"):
        raise ValueError("no newline at the end")
    helps, types, done, series, samples = {}, {}, set(), set(), {}
    current = None
    for no, line in enumerate(text[:-1].split("\n"), 1):
        where = f"line {no}"
        if not line:
            raise ValueError(f"{where}: blank line")
        if line.startswith("#"):
            f = line.split(" ", 3)
            if len(f) >= 3 and f[1] in ("HELP", "TYPE"):
                name = f[2]
                if not NAME.match(name):
                    raise ValueError(f"{where}: bad metric name {name!r}")
                if name in done or (current and name != current and name in samples):
                    raise ValueError(f"{where}: {f[1]} of {name} after its samples")
                d = helps if f[1] == "HELP" else types
                if name in d:
                    raise ValueError(f"{where}: second {f[1]} for {name}")
                if len(f) < 4 or not f[3].strip():
                    raise ValueError(f"{where}: empty {f[1]} for {name}")
                if f[1] == "TYPE" and f[3] not in TYPES:
                    raise ValueError(f"{where}: unknown type {f[3]!r}")
                if name in samples:
                    raise ValueError(f"{where}: {f[1]} of {name} after its samples")
                d[name] = f[3]
                if current and current != name:
                    done.add(current)
                current = name
            continue
        m = re.match(r"([^{ ]+)(\{(.*)\})? (\S+)( (-?[0-9]+))?$", line)
        if not m:
            raise ValueError(f"{where}: not a sample: {line!r}")
        name = m.group(1)
        if not NAME.match(name):
            raise ValueError(f"{where}: bad metric name {name!r}")
        labels = parse_labels(m.group(3), where) if m.group(3) else ()
        if m.group(2) == "{}":
            labels = ()
        val = parse_value(m.group(4), where)
        if name != current:
            if current:
                done.add(current)
            if name in done:
                raise ValueError(f"{where}: samples of {name} not together")
            current = name
        key = (name, labels)
        if key in series:
            raise ValueError(f"{where}: series twice: {line}")
        series.add(key)
        samples.setdefault(name, []).append((labels, val, line))
    for name, s in samples.items():
        t = types.get(name)
        if t is None or name not in helps:
            raise ValueError(f"{name}: samples without HELP and TYPE")
        if t == "counter":
            if not name.endswith("_total"):
                raise ValueError(f"{name}: counter not named *_total")
            for _, v, line in s:
                if not (v >= 0) or math.isinf(v):
                    raise ValueError(f"{name}: counter value {v}: {line}")
        elif name.endswith("_total"):
            raise ValueError(f"{name}: a {t} named *_total")
        for bad in NON_BASE:
            if bad in name:
                raise ValueError(f"{name}: not in base units ({bad})")
        names = {tuple(k for k, _ in labels) for labels, _, _ in s}
        if len(names) > 1:
            raise ValueError(f"{name}: samples with different label names: {sorted(names)}")
        have = set(next(iter(names)))
        for prefix, need in REQUIRED:
            if name.startswith(prefix) and not need <= have:
                raise ValueError(f"{name}: no label {', '.join(sorted(need - have))}")
        if name.startswith(("hwtel_pcie_", "hwtel_ddr_")) and have & FORBIDDEN:
            raise ValueError(f"{name}: label {', '.join(sorted(have & FORBIDDEN))} (renamed)")
    for name in set(types) | set(helps):
        if name not in samples:
            raise ValueError(f"{name}: HELP/TYPE without samples")
    return {line.rsplit(" ", 1)[0]: v for s in samples.values() for _, v, line in s}


def one(path, wants):
    """Problems of one file, [] if none."""
    try:
        got = check(open(path).read())
    except (OSError, ValueError) as e:
        return [str(e)]
    bad = []
    for want in wants:
        sample, val = want.rsplit("=", 1)
        if sample not in got:
            bad.append(f"missing: {sample}")
        elif got[sample] != float(val):
            bad.append(f"{sample}: {got[sample]:.17g}, want {val}")
    return bad


def main():
    args = sys.argv[1:]
    groups = [[]]
    for a in args:
        if a == "--":
            groups.append([])
        else:
            groups[-1].append(a)
    multi = len(groups) > 1
    status = 0
    for g in groups:
        bad = one(g[0], g[1:])
        if bad:
            status = 1
        if multi:
            print(f"bad {g[0]}: {'; '.join(bad)}" if bad else f"ok {g[0]}")
        elif bad:
            print(f"{g[0]}: " + "; ".join(bad))
    return status


if __name__ == "__main__":
    sys.exit(main())
