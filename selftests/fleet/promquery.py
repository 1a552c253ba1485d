# SPDX-License-Identifier: GPL-2.0
"""The shipped Grafana dashboard's PromQL against a real Prometheus
(fleet/prometheus.sh).

  promquery.py queries DASHBOARD
      every panel's query, one a line, the Grafana variables put in:
      $__rate_interval [30s], $__range [1m], $__interval 5s, a template
      variable (all of them are matched with =~) .*
  promquery.py wait URL QUERY TIMEOUT_S [MIN]
      poll URL/api/v1/query until QUERY returns a series (with MIN: a
      series whose value is >= MIN); exit 0 and print the series count,
      or exit 1 after TIMEOUT_S with the last answer
"""
import json
import re
import sys
import time
import urllib.parse
import urllib.request


def exprs(o):
    if isinstance(o, dict):
        if isinstance(o.get("expr"), str):
            yield o["expr"]
        for v in o.values():
            yield from exprs(v)
    elif isinstance(o, list):
        for v in o:
            yield from exprs(v)


GRAFANA = {"__rate_interval": "30s", "__range": "1m", "__interval": "5s"}


def substitute(q):
    q = re.sub(r"\$\{?(\w+)\}?", lambda m: GRAFANA.get(m.group(1), ".*"), q)
    return " ".join(q.split())


def query(url, q):
    u = url + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(u, timeout=10) as r:
        return json.load(r)


def main():
    if sys.argv[1] == "queries":
        with open(sys.argv[2]) as f:
            for q in exprs(json.load(f)):
                print(substitute(q))
        return 0
    url, q, timeout = sys.argv[2], sys.argv[3], float(sys.argv[4])
    least = float(sys.argv[5]) if len(sys.argv) > 5 else None
    end = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = query(url, q)
            res = last.get("data", {}).get("result", [])
            if least is not None:
                res = [r for r in res if float(r["value"][1]) >= least]
            if last.get("status") == "success" and res:
                print(len(res))
                return 0
        except Exception as e:  # not up yet, or a bad query: keep the answer
            last = repr(e)
        if time.monotonic() > end:
            print("no series within %gs; last answer: %s" % (timeout, str(last)[:600]))
            return 1
        time.sleep(0.5)


sys.exit(main())
