# SPDX-License-Identifier: GPL-2.0
"""The shipped Grafana dashboard's PromQL against a real Prometheus
(fleet/prometheus.sh).

  promquery.py queries DASHBOARD
      every panel's query, one a line, the Grafana variables put in:
      $__rate_interval [30s], $__range [1m], $__interval 5s, a template
      variable (all of them are matched with =~) .*
  promquery.py wait URL TIMEOUT_S < QUERIES
      for each query on standard input, one a line, in turn: poll
      URL/api/v1/query until it returns a series, for at most TIMEOUT_S
      from the query's start; print one line per query, "ok N" (N
      series) or "no series within ...: the last answer"; exit 0 when
      every query returned a series
  promquery.py get URL TIMEOUT_S TEXT...
      poll URL until it answers 200 and its body holds every TEXT; print
      the body and exit 0, or exit 1 after TIMEOUT_S with the last error

One process for all the queries of a run: under TCG a python3 start is a
second or more, and the lab's guests share two host cores.
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


def wait(url, q, timeout):
    end = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = query(url, q)
            res = last.get("data", {}).get("result", [])
            if last.get("status") == "success" and res:
                return "ok %d" % len(res)
        except Exception as e:  # not up yet, or a bad query: keep the answer
            last = repr(e)
        if time.monotonic() > end:
            return "no series within %gs; last answer: %s" % (timeout, str(last)[:600])
        time.sleep(0.5)


def get(url, timeout, texts):
    end = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = r.read().decode()
            missing = [t for t in texts if t not in body]
            if not missing:
                sys.stdout.write(body)
                return 0
            last = "no %r in the answer" % missing
        except Exception as e:  # not up yet
            last = repr(e)
        if time.monotonic() > end:
            print("%s within %gs: %s" % (url, timeout, last))
            return 1
        time.sleep(0.2)


def main():
    if sys.argv[1] == "queries":
        with open(sys.argv[2]) as f:
            for q in exprs(json.load(f)):
                print(substitute(q))
        return 0
    if sys.argv[1] == "get":
        return get(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
    url, timeout = sys.argv[2], float(sys.argv[3])
    bad = 0
    for q in sys.stdin.read().splitlines():
        r = wait(url, q, timeout)
        bad += not r.startswith("ok ")
        print(r, flush=True)
    return 1 if bad else 0


sys.exit(main())
