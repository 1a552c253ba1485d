#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of selftests/record/record.sh, in one python3 start (each start
costs seconds in a TCG guest).

    check_record.py DIR

DIR/checks has one check per line: "NAME|description|arg|arg...". Prints
"ok <description>" or "not ok <description>" plus "# " diagnostics, one
result per line of DIR/checks, in order.
"""
import csv
import json
import os
import sys
import traceback
import xml.dom.minidom

D = sys.argv[1]


def load(name):
    with open(os.path.join(D, name)) as f:
        return json.load(f)


def shots(name, events, n, pre, cause):
    """Every shot: n samples, pre before the trigger, all below the
    threshold and before the model's change; the change within the
    trigger sample's interval (one sample period)."""
    d = load(name)
    ev = [int(x) for x in events.split()]
    n, pre = int(n), int(pre)
    assert d["complete"], "capture not complete"
    assert d["pre"] == pre, (d["pre"], pre)
    assert len(d["shots"]) == len(ev), "%d shots, want %d" % (len(d["shots"]), len(ev))
    k = d["tracks"].index("pcie.ep0.rq0.mfb_stall_pct")
    period = d["period_ns"]
    for s, e in zip(d["shots"], ev):
        sm = s["samples"]
        assert s["cause"] == cause and s["ended"], s["cause"]
        assert len(sm) == n, "%d samples, want %d" % (len(sm), n)
        assert s["trigger_index"] == pre, (s["trigger_index"], pre)
        t = [x["mono_ns"] for x in sm]
        assert t == sorted(t) and len(set(t)) == n, "times not increasing"
        assert s["trigger_mono_ns"] == t[pre]
        assert all(x["values"][k] is None or x["values"][k] < 1 for x in sm[:pre]), \
            "a pre-trigger sample above the threshold"
        assert sm[pre]["values"][k] > 1
        # Where each sample's SNAPSHOT lies, from the times alone: sample i
        # is stamped t[i], the middle of its read [a_i, b_i], and the reads
        # do not overlap, so b_(i-1) <= a_i and b_i <= a_(i+1). Its
        # snapshot s_i lies in [a_i, b_i], hence
        #   max(t[i-1], 2 t[i] - t[i+1]) <= s_i <= min(t[i+1], 2 t[i] - t[i-1])
        # for a read of any length (a preempted read on a loaded debug
        # guest took over a period: half a period, assumed before, was not
        # a bound). The model's change e lies in (s[pre-1] - sliver, s[pre]]:
        # it cannot show before it happened, and the sample before the
        # trigger shows at most a sliver of it, below the 1 % threshold of a
        # 50 % stall, i.e. 2 % of that sample's interval s[pre-1] - s[pre-2].
        def lo(i):
            return max(t[i - 1] if i >= 1 else t[i] - 2 * period,
                       2 * t[i] - t[i + 1] if i + 1 < n else t[i] - 2 * period)

        def hi(i):
            return min(t[i + 1] if i + 1 < n else t[i] + 2 * period,
                       2 * t[i] - t[i - 1] if i >= 1 else t[i] + 2 * period)
        assert hi(pre) >= e, \
            "trigger sample %d at %d, its snapshot at the latest %d, before the change at %d" % (
                pre, t[pre], hi(pre), e)
        # The evidence that the change had not happened is the last sample
        # before the trigger that measured something: a sample without a
        # value (no new snapshot since the one before: a deferred read) says
        # nothing about when its interval ended.
        j = pre - 1
        while j >= 0 and sm[j]["values"][k] is None:
            j -= 1
        if j >= 0:
            sliver = 0.02 * (hi(j) - (lo(j - 1) if j >= 1 else hi(j) - 2 * period))
            assert lo(j) - sliver < e, \
                "sample %d at %d (%s), its snapshot at the earliest %d, after the change at %d; values %s" % (
                    j, t[j], sm[j]["values"][k], lo(j), e,
                    [x["values"][k] for x in sm[max(0, pre - 3):pre + 2]])
        # CLOCK_REALTIME: monotonic plus the offset of the sync record
        off = {x["real_ns"] - x["mono_ns"] for x in sm}
        assert len(off) == 1, off


def external(name, cause, n, trig):
    d = load(name)
    s = d["shots"]
    assert d["complete"]
    assert len(s) == 1 and s[0]["cause"] == cause, [x["cause"] for x in s]
    assert s[0]["trigger_index"] == int(trig), s[0]["trigger_index"]
    assert len(s[0]["samples"]) == int(n), len(s[0]["samples"])


def counter(name):
    d = load(name)
    s = d["shots"][0]
    sm = s["samples"]
    h = d["tracks"].index("hot")
    pre = s["trigger_index"]
    assert pre == 15 and len(sm) == 30, (pre, len(sm))
    v = [x["values"][h] for x in sm]
    assert v[pre - 4:pre + 1] == [1, 2, 3, 4, 5], v
    assert all(x == 0 for x in v[:pre - 4]), v
    assert v[pre + 1:] == list(range(6, 6 + len(sm) - pre - 1)), v


def feedback(name):
    d = load(name)
    sm = d["shots"][0]["samples"]
    h = d["tracks"].index("hot")
    fb = [x for x in d["notes"] if x["text"].startswith("feedback:")]
    assert len(fb) == 1 and fb[0]["text"].endswith("period 1000000ns"), d["notes"]
    at = [x["mono_ns"] for x in sm if x["values"][h] == 2]
    assert fb[0]["mono_ns"] == at[0], (fb, at)


def standby(name):
    d = load(name)
    s = d["shots"][0]
    sm = s["samples"]
    k = d["tracks"].index("ddr0.read_gbps")
    pre = s["trigger_index"]
    v = [x["values"][k] for x in sm]
    # enabled at the trigger sample, which reads its base: values after it
    assert all(x is None for x in v[:pre + 1]), v
    assert all(x is not None for x in v[pre + 1:]), v
    tn = [x for x in d["notes"] if x["text"].startswith("trigger:")]
    assert len(tn) == 1 and tn[0]["text"].endswith(": enable ddr"), d["notes"]
    assert tn[0]["mono_ns"] == s["trigger_mono_ns"]


def period(name):
    """-p 2ms and --on-trigger 'period 20ms': each sample's period is 2 ms
    up to the trigger sample, 20 ms after it; the median interval after the
    trigger is at least 15 ms. A loaded guest misses 2 ms slots (intervals
    of 4 to 70 ms were seen before a trigger), so the intervals are not
    checked against 2 ms; at 2 ms after the trigger (the action not
    applied) the median stays under 15 ms unless most slots are missed."""
    d = load(name)
    s = d["shots"][0]
    sm = s["samples"]
    pre = s["trigger_index"]
    assert d["period_ns"] == 2000000, d["period_ns"]
    per = [x["period_ns"] for x in sm]
    assert per == [2000000] * (pre + 1) + [20000000] * (len(sm) - pre - 1), per
    dt = sorted(b["mono_ns"] - a["mono_ns"] for a, b in zip(sm[pre:], sm[pre + 1:]))
    assert dt[len(dt) // 2] >= 15000000, dt


def disabled(name):
    """--on-trigger 'disable ddr' and --feedback 'TRIG for 5 samples =>
    enable ddr': the stall stays above the threshold after the trigger
    (the counter check), so the feedback rises at the fifth sample from
    the trigger's (trigger + 4), whose action reads the base: DDR values
    up to the trigger sample, none in the 4 after it, values from
    trigger + 5 on."""
    d = load(name)
    s = d["shots"][0]
    sm = s["samples"]
    pre = s["trigger_index"]
    k = d["tracks"].index("ddr0.read_gbps")
    v = [x["values"][k] for x in sm]
    assert all(x is not None for x in v[:pre + 1]), v
    assert all(x is None for x in v[pre + 1:pre + 5]), v
    assert all(x is not None for x in v[pre + 5:]), v
    tn = [x["text"] for x in d["notes"]]
    assert any(t.startswith("trigger:") and t.endswith(": disable ddr") for t in tn), tn
    assert any(t.startswith("feedback:") and t.endswith(": enable ddr") for t in tn), tn


def cut(name, whole):
    a, b = load(name), load(whole)
    assert not a["complete"] and b["complete"]
    sa, sb = a["shots"][0]["samples"], b["shots"][0]["samples"]
    assert 0 < len(sa) < len(sb) and sa == sb[:len(sa)], (len(sa), len(sb))


def trace(name, capture):
    d, c = load(name), load(capture)
    ev = d["traceEvents"]
    sm = c["shots"][0]["samples"]
    want = {t for i, t in enumerate(c["tracks"]) if any(x["values"][i] is not None for x in sm)}
    names = {e["name"] for e in ev if e["ph"] == "C"} - {"period (ms)"}
    assert names == want, (names, want)
    per = [e for e in ev if e["ph"] == "C" and e["name"] == "period (ms)"]
    assert per and per[0]["ts"] == sm[0]["mono_ns"] / 1e3, per[:1]
    assert per[0]["args"]["value"] == sm[0]["period_ns"] / 1e6, per[:1]
    for i, t in enumerate(c["tracks"]):
        pts = [(e["ts"], e["args"]["value"]) for e in ev if e["ph"] == "C" and e["name"] == t]
        assert len(pts) == sum(1 for x in sm if x["values"][i] is not None), t
    tr = [e for e in ev if e["ph"] == "i" and e["name"].startswith("trigger")]
    assert len(tr) == 1 and tr[0]["ts"] == c["shots"][0]["trigger_mono_ns"] / 1e3


def svg(name):
    doc = xml.dom.minidom.parse(os.path.join(D, name))
    pl = doc.getElementsByTagName("polyline")
    ln = [x for x in doc.getElementsByTagName("line") if x.getAttribute("class") == "trigger"]
    pre = [x for x in doc.getElementsByTagName("rect") if x.getAttribute("class") == "pre"]
    assert len(pl) >= 2 and len(ln) == len(pl) and len(pre) == len(pl), (len(pl), len(ln), len(pre))


def gap(base):
    """A late gap of >= 24 periods (a stop of >= 50 ms at 2 ms) in each view."""
    c = load(base + ".json")
    late = [g for g in c["gaps"] if g["kind"] == "late" and g["count"] >= 24]
    assert late and late[0]["shot"] == 0, c["gaps"]
    g = late[0]
    assert c["missed_periods"] >= g["count"], c["missed_periods"]
    sm = c["shots"][0]["samples"]
    after = sm[g["before_sample"]]
    assert after["mono_ns"] - g["mono_ns"] >= 24 * 2000000 - 2000000, (g, after)
    with open(os.path.join(D, base + ".csv")) as f:
        rows = list(csv.DictReader(f))
    assert int(rows[g["before_sample"]]["gap_missed"]) == g["count"], rows[g["before_sample"]]
    with open(os.path.join(D, base + ".txt")) as f:
        txt = f.read()
    want = "%d periods missed (the recorder was late)" % g["count"]
    assert "~~~" in txt and want in txt, txt[:400]
    assert "gaps: %d periods missed" % c["missed_periods"] in txt
    ev = load(base + ".trace.json")["traceEvents"]
    assert any(e["ph"] == "i" and e["name"] == "gap: " + want and e["ts"] == g["mono_ns"] / 1e3
               for e in ev), [e for e in ev if e["ph"] == "i"]
    doc = xml.dom.minidom.parse(os.path.join(D, base + ".svg"))
    ln = [x for x in doc.getElementsByTagName("line") if x.getAttribute("class") == "gap"]
    assert ln, "no gap line"


def killed(base, pre, period, overlap):
    """A recorder killed with its ring full: an unfinished capture whose
    file ring gives the ring's pre samples (one untriggered shot), times
    strictly increasing, each taken at the period, the same in the CSV and
    the text view. The samples it shares with the ring as read while the
    recorder ran (BASE.live.csv, the last poll of wait_ring) are the same
    exactly: times and values; with overlap 1 there is at least one.
    (The intervals themselves are not checked: a sample's time is the
    middle of its reads, late by its wake-up and half its reads, which a
    loaded TCG host or memory pressure stretch to milliseconds.)"""
    pre, period, overlap = int(pre), int(period), int(overlap)
    c = load(base + ".json")
    assert not c["complete"] and c["recovered"] == pre, (c["complete"], c["recovered"])
    assert len(c["shots"]) == 1 and c["shots"][0]["cause"] == "none", c["shots"]
    sm = c["shots"][0]["samples"]
    t = [s["mono_ns"] for s in sm]
    assert len(t) == pre, len(t)
    assert all(b > a for a, b in zip(t, t[1:])), t
    assert all(s["period_ns"] == period for s in sm), [s["period_ns"] for s in sm]
    with open(os.path.join(D, base + ".csv")) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["mono_ns"]) for r in rows] == t, [r["mono_ns"] for r in rows][:5]
    with open(os.path.join(D, base + ".live.csv")) as f:
        live = list(csv.DictReader(f))
    assert len(live) == pre and int(live[-1]["mono_ns"]) <= t[-1], (len(live), live[-1])
    same = [r for r in live if int(r["mono_ns"]) >= t[0]]
    keys = [k for k in rows[0] if k not in ("sample", "from_trigger")]
    assert [[r[k] for k in keys] for r in same] == [[r[k] for k in keys] for r in rows[:len(same)]], \
        (same[:2], rows[:2])
    assert len(same) >= overlap, (live[-1]["mono_ns"], t[0])
    with open(os.path.join(D, base + ".txt")) as f:
        txt = f.read()
    assert "UNFINISHED" in txt and "recovered: %d samples from the file ring" % pre in txt, txt[:400]


def event(base):
    """One sched_process_exit: one event record, in the trigger sample's
    interval (after the sample before it, up to its own time), count 1, and
    the same time in the CSV, text and trace views."""
    c = load(base + ".json")
    assert c["complete"]
    s = c["shots"]
    assert len(s) == 1 and s[0]["cause"] == "condition", [x["cause"] for x in s]
    pre = round(50 * 19 / 100 + 0.001)  # round(P (N - 1) / 100), 9.5 -> 10
    sm = s[0]["samples"]
    assert s[0]["trigger_index"] == pre and len(sm) == 20, (s[0]["trigger_index"], len(sm))
    ev = c["events"]
    assert len(ev) == 1, ev
    e = ev[0]
    assert e["event"] == "gone" and e["count"] == 1 and e["shot"] == 0, e
    assert e["sample"] == pre, (e["sample"], pre)
    t = [x["mono_ns"] for x in sm]
    assert t[pre - 1] < e["mono_ns"] <= t[pre], (t[pre - 1], e["mono_ns"], t[pre])
    k = c["tracks"].index("gone")
    v = [x["values"][k] for x in sm]
    assert v == [0] * pre + [1] + [0] * (19 - pre), v
    with open(os.path.join(D, base + ".csv")) as f:
        rows = list(csv.DictReader(f))
    assert [r["gone.first_ns"] for r in rows] == \
        [""] * pre + [str(e["mono_ns"])] + [""] * (19 - pre), rows[pre]
    with open(os.path.join(D, base + ".txt")) as f:
        txt = f.read()
    want = "***    event %+12.3f gone: 1 occurrence" % ((e["mono_ns"] - t[pre]) / 1e6)
    assert want in txt, (want, txt[:600])
    tr = load(base + ".trace.json")["traceEvents"]
    assert [x["ts"] for x in tr if x["name"] == "event: gone"] == [e["mono_ns"] / 1e3], \
        [x for x in tr if x["ph"] == "i"]


def lost(base, k, fit):
    """An --event ring that lost k - fit of k + 1 occurrences: one gap of
    kind lost, its count k - fit, its event sig, in the totals; the counter
    n (count sig) ends at k + 1, the lost ones counted; the gap's sample
    holds them (and possibly the one occurrence that brought the loss
    record, stamped with it); the same gap in the CSV, text, trace and SVG
    views."""
    k, fit = int(k), int(fit)
    lost = k - fit
    c = load(base + ".json")
    assert c["complete"]
    g = [x for x in c["gaps"] if x["kind"] not in ("late", "stale")]
    assert len(g) == 1, g
    g = g[0]
    assert g["kind"] == "lost" and g["event"] == "sig" and g["count"] == lost, g
    assert c["lost_occurrences"] == lost and c["throttles"] == 0, \
        (c["lost_occurrences"], c["throttles"])
    assert len(c["shots"]) == 1 and g["shot"] == 0, c["shots"][0]["cause"]
    sm = c["shots"][0]["samples"]
    n, sig = c["tracks"].index("n"), c["tracks"].index("sig")
    assert sm[-1]["values"][n] == k + 1, sm[-1]["values"][n]
    assert sm[g["before_sample"]]["values"][sig] in (lost, lost + 1), \
        sm[g["before_sample"]]["values"][sig]
    with open(os.path.join(D, base + ".csv")) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["gap_lost"]) for r in rows] == \
        [lost if i == g["before_sample"] else 0 for i in range(len(rows))]
    assert all(r["gap_throttled"] == "0" for r in rows)
    with open(os.path.join(D, base + ".txt")) as f:
        txt = f.read()
    want = "sig: %d occurrences lost (no room in its perf ring; counted, not timed)" % lost
    assert ("~~~      gap " in txt and want in txt and
            ", %d event occurrences lost, 0 throttles\n" % lost in txt), txt[:600]
    ev = load(base + ".trace.json")["traceEvents"]
    assert [e["ts"] for e in ev if e["name"] == "gap: " + want] == [g["mono_ns"] / 1e3], \
        [e for e in ev if e["ph"] == "i"]
    doc = xml.dom.minidom.parse(os.path.join(D, base + ".svg"))
    assert [x for x in doc.getElementsByTagName("title") if x.firstChild.data == want], \
        "no gap line titled " + want


def stale(name):
    with open(os.path.join(D, name)) as f:
        rows = list(csv.DictReader(f))
    assert rows
    bad = [r["sample"] for r in rows
           if (r["pcie.ep0.rq0.used_pct"] == "") != (int(r["gap_stale"]) > 0)]
    assert not bad, bad[:10]


def main():
    with open(os.path.join(D, "checks")) as f:
        lines = [x.rstrip("\n") for x in f if x.strip()]
    for line in lines:
        name, desc, *args = line.split("|")
        try:
            globals()[name](*args)
            print("ok " + desc)
        except Exception:
            print("not ok " + desc)
            for x in traceback.format_exc().splitlines()[-4:]:
                print("# " + x)
    sys.stdout.flush()


main()
