#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the Grafana dashboard against the metrics hwtel exports.

    check_grafana.py DASHBOARD.json TEXTFILE.prom...

The textfiles are hwtel's own Prometheus output of a known input (the unit
tests' goldens, which the same run compares with the formatter's output).
From them come the metric names, the labels of each metric and the label
values it was seen with. The dashboard must be a Grafana dashboard (title,
uid, schemaVersion, panels with a gridPos, a datasource variable every panel
and target uses, targets with a unique refId and an expression), and every
PromQL expression and variable query may name only exported metrics, only
labels those metrics have (in matchers, by/without/on/ignoring/group_*
lists and legends), and in a matcher with a fixed value only a value the
textfile shows (a regex must match one of them). Grafana's variables must be
defined ones. Exit status 0 = all good; every problem is printed.
"""
import json
import re
import sys

errors = []

# Labels Prometheus adds when it scrapes a target, not hwtel's own.
TARGET_LABELS = {"instance", "job"}
# Grafana's built-in variables.
BUILTINS = {"__rate_interval", "__interval", "__range", "__interval_ms",
            "__range_s", "__range_ms"}
FUNCTIONS = {
    "abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes",
    "clamp", "clamp_max", "clamp_min", "count_over_time", "delta", "deriv",
    "exp", "floor", "histogram_quantile", "holt_winters", "idelta",
    "increase", "irate", "label_join", "label_replace", "last_over_time",
    "ln", "log2", "log10", "max_over_time", "min_over_time",
    "predict_linear", "present_over_time", "quantile_over_time", "rate",
    "resets", "round", "scalar", "sgn", "sort", "sort_desc", "sqrt",
    "stddev_over_time", "stdvar_over_time", "sum_over_time", "time",
    "timestamp", "vector",
}
AGGREGATORS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar",
               "count", "count_values", "bottomk", "topk", "quantile"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "bool", "offset"}
PANEL_TYPES = {"row", "timeseries", "stat", "gauge", "bargauge", "table",
               "state-timeline", "heatmap", "text"}


def err(where, msg):
    errors.append(f"{where}: {msg}")


def load_exported(paths):
    """metric name -> {label: set of values}, from hwtel's textfiles."""
    metrics = {}
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$')
    pair = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                m = sample.match(line.rstrip("\n"))
                if not m:
                    err(f"{path}:{n}", f"not a sample line: {line.strip()}")
                    continue
                labels = metrics.setdefault(m.group(1), {})
                for k, v in pair.findall(m.group(2) or ""):
                    labels.setdefault(k, set()).add(v)
    return metrics


TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<range>\[[^\]]*\])
  | (?P<var>\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^(){},=<>])
''', re.VERBOSE)


def tokens(expr, where):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            err(where, f"cannot parse {expr[pos:pos + 20]!r}")
            return out
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def variables_in(text):
    return {m.group(1) for m in re.finditer(r'\$\{?([a-zA-Z_][a-zA-Z0-9_]*)', text)}


class Expr:
    """The metrics, labels and matchers one PromQL expression uses."""

    def __init__(self, expr, where, exported):
        self.where, self.exported = where, exported
        self.metrics, self.grouping = set(), []
        toks = tokens(expr, where)
        i = 0
        while i < len(toks):
            kind, text = toks[i]
            nxt = toks[i + 1][1] if i + 1 < len(toks) else None
            if kind == "ident" and text in GROUPING:
                i += 1
                if nxt == "(":
                    i = self.label_list(toks, i + 1)
                continue
            if kind == "ident" and (text in FUNCTIONS or text in AGGREGATORS):
                if nxt != "(" and text not in ("by", "without"):
                    # "sum by (...) (...)" puts the grouping first
                    if not (nxt in GROUPING):
                        err(where, f"{text} is a function, not a metric")
                i += 1
                continue
            if kind == "ident" and text in KEYWORDS:
                i += 1
                continue
            if kind == "ident":
                if text not in exported:
                    err(where, f"metric {text} is not exported by hwtel")
                else:
                    self.metrics.add(text)
                i += 1
                if nxt == "{":
                    i = self.matchers(toks, i + 1, text)
                continue
            if text == "{":
                i = self.matchers(toks, i + 1, None)
                continue
            i += 1

    def label_list(self, toks, i):
        while i < len(toks) and toks[i][1] != ")":
            if toks[i][0] == "ident":
                self.grouping.append(toks[i][1])
            i += 1
        return i + 1

    def matchers(self, toks, i, metric):
        while i + 2 < len(toks) and toks[i][1] != "}":
            label, op, value = toks[i][1], toks[i + 1][1], toks[i + 2]
            if value[0] != "str" or op not in ("=", "!=", "=~", "!~"):
                err(self.where, f"bad matcher near {label}")
                return len(toks)
            self.check_matcher(metric, label, op, value[1][1:-1])
            i += 3
            if i < len(toks) and toks[i][1] == ",":
                i += 1
        return i + 1

    def check_matcher(self, metric, label, op, value):
        if metric is None:
            if label != "__name__":
                err(self.where, "a selector without a metric name")
                return
            names = [n for n in self.exported
                     if (re.fullmatch(value, n) if "~" in op else n == value)]
            if not names:
                err(self.where, f"__name__ {value!r} matches no exported metric")
            self.metrics.update(names)
            return
        if metric not in self.exported:
            return
        labels = self.exported[metric]
        if label not in labels:
            err(self.where, f"{metric} has no label {label!r} "
                f"(it has {', '.join(sorted(labels))})")
            return
        if "$" in value:
            return
        seen = labels[label]
        if op in ("=", "!="):
            ok = value in seen
        else:
            try:
                ok = any(re.fullmatch(value, v) for v in seen)
            except re.error as e:
                err(self.where, f"bad regex {value!r}: {e}")
                return
        if not ok:
            err(self.where, f"{metric}{{{label}{op}{value!r}}}: no exported "
                f"value (seen: {', '.join(sorted(seen))})")

    def labels(self):
        out = set(TARGET_LABELS)
        for m in self.metrics:
            out |= set(self.exported.get(m, {}))
        return out

    def check_labels(self, names, what):
        have = self.labels()
        for n in names:
            if n not in have:
                err(self.where, f"{what} label {n!r} is on none of "
                    f"{', '.join(sorted(self.metrics)) or 'no metric'}")


def check_dashboard(d, exported):
    for key, typ in (("title", str), ("uid", str), ("schemaVersion", int),
                     ("panels", list), ("templating", dict)):
        if not isinstance(d.get(key), typ):
            err("dashboard", f"{key} missing or not a {typ.__name__}")
    tvars = d.get("templating", {}).get("list", [])
    names = {v.get("name") for v in tvars}
    ds = [v for v in tvars if v.get("type") == "datasource"]
    if len(ds) != 1 or ds[0].get("query") != "prometheus":
        err("templating", "needs one datasource variable of type prometheus")
        return
    dsref = {"${%s}" % ds[0]["name"], "$" + ds[0]["name"]}

    def uses_ds(obj, where):
        src = obj.get("datasource")
        if not isinstance(src, dict) or src.get("type") != "prometheus" \
                or src.get("uid") not in dsref:
            err(where, f"datasource is not the variable {ds[0]['name']}")

    def check_vars(text, where):
        for v in variables_in(text) - names - BUILTINS:
            err(where, f"undefined variable ${v}")

    for v in tvars:
        if v.get("type") != "query":
            continue
        where = f"variable {v.get('name')}"
        uses_ds(v, where)
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r'\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*', q or "")
        if not m:
            err(where, f"query {q!r} is not label_values(SELECTOR, LABEL)")
            continue
        check_vars(q, where)
        e = Expr(m.group(1), where, exported)
        e.check_labels([m.group(2)], "label_values")

    ids, seen_targets = set(), 0
    panels = list(d.get("panels", []))
    for p in list(panels):
        panels.extend(p.get("panels", []))
    for p in panels:
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if not isinstance(p.get("id"), int) or p["id"] in ids:
            err(where, "id missing or not unique")
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES:
            err(where, f"unknown panel type {p.get('type')!r}")
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            err(where, "gridPos needs integer h, w, x, y within 24 columns")
        if p.get("type") in ("row", "text"):
            continue
        uses_ds(p, where)
        targets = p.get("targets")
        if not targets:
            err(where, "no targets")
            continue
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            err(where, "refIds missing or not unique")
        for t in targets:
            tw = f"{where} target {t.get('refId')}"
            seen_targets += 1
            uses_ds(t, tw)
            expr = t.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                err(tw, "no expr")
                continue
            check_vars(expr, tw)
            e = Expr(expr, tw, exported)
            if not e.metrics:
                err(tw, "names no metric")
            e.check_labels(e.grouping, "grouping")
            legend = t.get("legendFormat", "")
            e.check_labels(re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", legend), "legend")
    return seen_targets


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_grafana: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    exported = load_exported(sys.argv[2:])
    n = check_dashboard(d, exported) or 0
    for e in errors:
        print(f"check_grafana: {e}", file=sys.stderr)
    if not errors:
        print(f"check_grafana: {n} queries over {len(exported)} exported metrics: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
