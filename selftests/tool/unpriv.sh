#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unprivileged use as perf allows it. With perf_event_paranoid -1 a user
# without capabilities may open the PMUs' CPU-wide events (perf stat -a),
# while every command of the control plane still needs CAP_PERFMON or
# CAP_SYS_ADMIN. hwtel pcie then reports every counter-derived figure,
# leaves out or marks unavailable the link state, the gauges and the STATUS
# flags in every format, warns once on stderr and exits 0; -t 0 (totals,
# control plane only) and -c exit 4 with their message. hwtel ddr and
# hwtel record -s pcie are perf only and just work. With paranoid at its
# default (2) the perf error and exit 4 stay as they were.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 31 hwtel_sim_pcie ndk_pcie_tlm hwtel_sim_ddr marvell_cn10k_ddr_pmu
tap_plan 31

paranoid=/proc/sys/kernel/perf_event_paranoid
old_paranoid=$(cat "$paranoid")
unpriv_cleanup()
{
	echo "$old_paranoid" > "$paranoid"
	tool_cleanup
}
trap unpriv_cleanup EXIT

# uid/gid nobody, no groups, no capability in any set
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
cp "$HW" "$T/hwtel" && chmod 755 "$T" "$T/hwtel"
mkdir "$T/u" && chmod 1777 "$T/u"	# where nobody writes files
mkfifo "$T/go" && chmod 644 "$T/go"

# The counts injected during each measured interval (endpoint 0 of the idle
# model, where nothing else moves): Words % of RQ 25.00, the stop reason
# "MFB stalled towards DMA" 10.00 %.
INJ=("pcie_cycles,ep=0 4000000" "dma_cycles,ep=0 2000000"
     "words,ep=0,bus=0 1000000" "brake,ep=0,idx=4 400000")

# unpriv_interval NAME ARGS...: run hwtel pcie ARGS as nobody over one
# interval, "-- cat FIFO": the FIFO's reader opens it once the tool has
# taken its first reading; then inject INJ and close the FIFO, which ends
# the interval. Output in $T/NAME.out and $T/NAME.err; returns the exit
# status. The opener gives up after 30 s (the tool failed before reading).
unpriv_interval()
{
	local name=$1

	shift
	"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" "$@" -- cat "$T/go" \
		> "$T/$name.out" 2> "$T/$name.err" &
	local pid=$!
	timeout 30 bash -c 'exec 3> "$1" || exit 1; d=$2; shift 2
		for i in "$@"; do echo "$i" > "$d/inject"; done' _ \
		"$T/go" "$PCIE_DBG" "${INJ[@]}"
	wait $pid
}

# one_warning NAME: stderr is exactly one line, a warning naming CAP_PERFMON
# and what it is needed for (the flags, the gauges)
one_warning()
{
	local err=$T/$1.err

	if [ "$(wc -l < "$err")" = 1 ] && grep -q '^hwtel: warning: .*CAP_PERFMON' "$err" &&
	   grep -q 'flags' "$err" && grep -q 'gauges' "$err"; then
		tap_ok "$1: one warning line on stderr, naming CAP_PERFMON, the flags and gauges"
	else
		tap_fail "$1: one warning line on stderr, naming CAP_PERFMON, the flags and gauges" \
			"stderr: $(cat "$err")"
	fi
}

pcie_up profile=idle || { tap_fail "load the PCIe model (idle) and driver"; tap_done; }
echo -1 > "$paranoid"

# --- 1-4: text --------------------------------------------------------
unpriv_interval text
tap_eq "text: unprivileged hwtel pcie exits 0 (paranoid -1)" "0" "$?"
tool_py "text: the counter figures, exact (Words % 25.00, MFB stalled 10.00 %)" '
import sys
t = open(sys.argv[1]).read()
rq = [l for l in t.splitlines() if l.startswith("PTC -> PCIe (RQ)  ")]
assert rq, t[:600]
cells = [c.strip() for c in rq[0].split("  ") if c.strip()]
assert cells[2] == "25.00", cells
assert any("MFB stalled towards DMA" in l and " 10.00 %" in l for l in t.splitlines()), t
' "$T/text.out"
tool_py "text: state and gauges shown as ?, the flags said to be unknown" '
import sys
t = open(sys.argv[1]).read().splitlines()
for k in ("Link", "Max payload size (MPS)", "PTC tags free", "PTC storage FIFO free"):
    row = [l for l in t if l.startswith(k + "  ")]
    assert row and row[0].split()[-1] == "?", (k, row)
assert "  ?? STATUS FLAGS NOT READ - the counters may not be exact" in t, t[:8]
assert not any("!! LOST" in l or "!! READ-OUT" in l for l in t)
' "$T/text.out"
one_warning text
tap_diag "$(cat "$T/text.err")"

# --- 5-7: CSV ---------------------------------------------------------
unpriv_interval csv -x ,
tap_eq "-x ,: exits 0" "0" "$?"
tool_py "-x ,: the injected counts, exact, perf stat -x style" '
import csv, sys
all_rows = list(csv.reader(open(sys.argv[1])))
rows = {r[2]: r for r in all_rows}
pmu = sys.argv[2]
for ev, v in (("words,ep=0,bus=0", "1000000"), ("pcie_cycles,ep=0", "4000000"),
              ("brake,ep=0,idx=4", "400000"), ("stall,ep=0,bus=2", "0")):
    r = rows[f"{pmu}/{ev}/"]
    assert r[0] == v and r[4] == "100.00", r
# Words % of RQ, in the metric columns of the row after the words counter
i = all_rows.index(rows[f"{pmu}/words,ep=0,bus=0/"])
assert all_rows[i + 1][5:7] == ["25.000000", "% words"], all_rows[i + 1]
' "$T/csv.out" "$PCIE_PMU"
one_warning csv

# --- 8-11: JSON -------------------------------------------------------
unpriv_interval json -j
tap_eq "-j: exits 0" "0" "$?"
tap_check "-j: valid JSON that follows the schema" python3 "$CHECK_JSON" pcie "$T/json.out"
tool_py "-j: exact counts; state, gauges and flags null; state_valid false" '
import json, sys
doc = json.load(open(sys.argv[1]))
ep = doc["data"]["endpoints"][0]
assert ep["pcie_cycles"] == 4000000 and ep["brakes"][4] == 400000, ep
assert ep["buses"]["PTC -> PCIe (RQ)"]["words"] == 1000000
assert doc["derived"]["endpoints"][0]["buses"]["PTC -> PCIe (RQ)"]["words_pct"] == 25.0
for k in ("link_up", "mps", "mrrs", "ext_tag", "tag_10b", "rcb", "tags_free",
          "tags_free_min", "stfifo_free", "stfifo_free_min"):
    assert k in ep and ep[k] is None, (k, ep.get(k))
st = doc["data"]["status"]
assert list(st) == ["busy", "lost_deltas", "readout_overrun"], st
assert all(v is None for v in st.values()), st
assert doc["hwtel"]["state_valid"] is False, doc["hwtel"]
' "$T/json.out"
one_warning json

# --- 12-13: a plain -t 0.2 ----------------------------------------------
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -t 0.2 > "$T/plain.out" 2> "$T/plain.err"
tap_eq "-t 0.2: exits 0 and prints the report" "0 1" \
	"$? $(grep -c '^Measured over' "$T/plain.out")"
one_warning plain

# --- 14-15: watch -----------------------------------------------------
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -w -n 3 -t 0.1 > "$T/watch.out" 2> "$T/watch.err"
tap_eq "-w -n 3: exits 0 with three reports" "0 3" \
	"$? $(grep -c '^Measured over' "$T/watch.out")"
one_warning watch

# --- 16-18: Prometheus --------------------------------------------------
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -t 0.1 -q --prometheus "$T/u/p.prom" \
	> "$T/prom.out" 2> "$T/prom.err"
tap_eq "--prometheus: exits 0" "0" "$?"
tool_py "--prometheus: the counters, no state gauge and no flag series" '
import sys
t = open(sys.argv[1]).read()
names = {l.split("{")[0] for l in t.splitlines() if l and not l.startswith("#")}
assert "hwtel_pcie_bus_cycles_total" in names and "hwtel_pcie_clock_cycles_total" in names, names
for n in ("hwtel_pcie_flag", "hwtel_pcie_link_up", "hwtel_pcie_tags_free",
          "hwtel_pcie_stfifo_free_words_lowest"):
    assert n not in names and ("# TYPE " + n + " ") not in t, n
' "$T/u/p.prom"
one_warning prom

# --- 19-22: totals and clear need the control plane ---------------------
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -t 0 > "$T/tot.out" 2> "$T/tot.err"
tap_eq "-t 0: exit 4, nothing on stdout" "4 0" "$? $(wc -c < "$T/tot.out")"
tap_check "-t 0: one error line naming the totals and CAP_PERFMON" \
	sh -c "[ \$(wc -l < '$T/tot.err') = 1 ] && grep -q '^hwtel: error: .*totals.*CAP_PERFMON' '$T/tot.err'"
tap_diag "$(cat "$T/tot.err")"
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -c > "$T/clr.out" 2> "$T/clr.err"
tap_eq "-c: exit 4, nothing on stdout" "4 0" "$? $(wc -c < "$T/clr.out")"
tap_check "-c: its error names clearing and CAP_PERFMON" \
	grep -q '^hwtel: error: clearing .*CAP_PERFMON' "$T/clr.err"

# --- 23-24: root is not affected ---------------------------------------
"$T/hwtel" pcie -d "$PCIE_PMU" -t 0.1 -j > "$T/root.json" 2> "$T/root.err"
tap_eq "root: exits 0, nothing on stderr" "0 0" "$? $(wc -c < "$T/root.err")"
tool_py "root: state, gauges and flags read (state_valid true, link up)" '
import json, sys
doc = json.load(open(sys.argv[1]))
ep = doc["data"]["endpoints"][0]
assert doc["hwtel"]["state_valid"] is True and ep["link_up"] is True and ep["mps"] > 0, ep
assert doc["data"]["status"]["lost_deltas"] is False, doc["data"]["status"]
' "$T/root.json"

# --- 25-27: hwtel record -s pcie (perf only) ----------------------------
"${nobody[@]}" "$T/hwtel" record -q -o "$T/u/r.rec" -s pcie -p 1ms -N 20 --position begin \
	-- true > "$T/rec.out" 2> "$T/rec.err"
tap_eq "record -s pcie: exits 0, nothing on stderr" "0 0" "$? $(wc -c < "$T/rec.err")"
"$T/hwtel" report --json "$T/u/r.rec" > "$T/rec.json" 2> "$T/rec.rerr"
tap_eq "record -s pcie: the capture reads back" "0" "$?"
tap_check "record -s pcie: the capture has the PCIe metrics" grep -q 'pcie.ep0.rq0.used_pct' "$T/rec.json"

# --- 28-29: hwtel ddr (perf only) -----------------------------------------
ddr_up cn10k || tap_fail "load the DDR model (cn10k) and driver"
"${nobody[@]}" "$T/hwtel" ddr -t 0.1 > "$T/ddr.out" 2> "$T/ddr.err"
tap_eq "ddr: exits 0, nothing on stderr" "0 0" "$? $(wc -c < "$T/ddr.err")"
tap_check "ddr: prints the report" grep -q "^DDR controller $(ddr_pmu_of cn10k)" "$T/ddr.out"
ddr_down

# --- 30-31: paranoid 2: perf refuses first, as before --------------------
echo 2 > "$paranoid"
"${nobody[@]}" "$T/hwtel" pcie -d "$PCIE_PMU" -t 0.1 > "$T/p2.out" 2> "$T/p2.err"
tap_eq "paranoid 2: exit 4, nothing on stdout" "4 0" "$? $(wc -c < "$T/p2.out")"
tap_check "paranoid 2: the perf error (perf_event_paranoid, CAP_PERFMON, root)" \
	sh -c "[ \$(wc -l < '$T/p2.err') = 1 ] && grep -q '^hwtel: error: .*perf_event_paranoid.*CAP_PERFMON.*root' '$T/p2.err'"
echo "$old_paranoid" > "$paranoid"

tap_done
