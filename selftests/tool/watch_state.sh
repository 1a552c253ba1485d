#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reading never changes the block's state (issue 22, item 7): the STATUS
# flags and the lowest marks hold since the last explicit clear (hwtel pcie
# -c) whatever hwtel pcie reads in between, in every mode: one interval
# (-t SEC, -- COMMAND), watching (-w, also as the Prometheus exporter runs)
# and the totals (-t 0). So the always-on exporter erases nothing that an
# interactive user or the PCP agent would see.
#
# The state is set on the idle model (nothing else moves it): LOST DELTA,
# and on endpoint 0 free tags 5 and free FIFO words 7 (the lowest marks),
# then 200 and 900 (the gauges now), set anew before each run. After the
# run it must be as set: the PMU's sysfs flags file (one register read, no
# tool) says 0x1 and the control plane's totals report the flag and both
# marks.
#
# The explicit clear zeroes the counters too, but only the control plane's
# totals (-t 0, the PCP agent): a clear in the middle of an interval leaves
# that interval's counts (perf events) exact.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 8 hwtel_sim_pcie ndk_pcie_tlm
tap_plan 8

pcie_up profile=idle || { tap_fail "load model (idle) and driver"; tap_done; }

# arm: set the state from a clear, before each run
arm()
{
	"$HW" pcie -c > /dev/null
	echo "ep=0 tags=5 stfifo=7" > "$PCIE_DBG/gauge"
	echo "ep=0 tags=200 stfifo=900" > "$PCIE_DBG/gauge"
	echo lost_delta > "$PCIE_DBG/flags"
}

# state_kept DESC: the flag and both marks are as set above
state_kept()
{
	"$HW" pcie -t 0 -j > "$T/s.json" 2> "$T/s.err"
	tool_py "$1" '
import json, sys
flags = open(sys.argv[1]).read().strip()
d = json.load(open(sys.argv[2]))
e = d["data"]["endpoints"][0]
got = (flags, d["data"]["status"]["lost_deltas"], e["tags_free"], e["tags_free_min"],
       e["stfifo_free"], e["stfifo_free_min"])
assert got == ("0x1", True, 200, 5, 900, 7), got
' "/sys/bus/event_source/devices/$PCIE_PMU/flags" "$T/s.json"
}

arm
state_kept "the state as set: flags 0x1, lowest tags 5 and FIFO words 7"
arm
"$HW" pcie -t 0.2 > /dev/null 2>&1
state_kept "-t 0.2 leaves the flag and the lowest marks"
arm
"$HW" pcie -- true > /dev/null 2>&1
state_kept "-- true leaves the flag and the lowest marks"
arm
"$HW" pcie -w -t 0.1 -n 3 > /dev/null 2>&1
state_kept "-w -n 3 leaves the flag and the lowest marks"
arm
"$HW" pcie -w -t 0.1 -n 3 -j --prometheus "$T/w.prom" > /dev/null 2>&1
state_kept "the exporter's -w -j --prometheus leaves the flag and the lowest marks"
arm
"$HW" pcie -w -t 0 -n 2 > /dev/null 2>&1
state_kept "-w -t 0 leaves the flag and the lowest marks"

# the explicit clear still clears: flag gone, marks back to the gauges
arm
"$HW" pcie -c > /dev/null
"$HW" pcie -t 0 -j > "$T/c.json" 2>&1
tool_py "-c clears the flag and the marks (lowest = now)" '
import json, sys
flags = open(sys.argv[1]).read().strip()
d = json.load(open(sys.argv[2]))
e = d["data"]["endpoints"][0]
got = (flags, d["data"]["status"]["lost_deltas"], e["tags_free_min"], e["stfifo_free_min"])
assert got == ("0x0", False, 200, 900), got
' "/sys/bus/event_source/devices/$PCIE_PMU/flags" "$T/c.json"

# -c during an interval (the COMMAND): 100 words before it, 23 after. The
# interval's perf events count all 123; the totals (-t 0) the 23 since.
W="words,ep=0,bus=0"
"$HW" pcie -x , -- sh -c "echo '$W 100' > '$PCIE_DBG/inject' && '$HW' pcie -c > /dev/null &&
	echo '$W 23' > '$PCIE_DBG/inject'" > "$T/iv.csv" 2>&1
"$HW" pcie -t 0 -x , > "$T/tot.csv" 2>&1
tool_py "-c within an interval: its counts stay exact (123 words), the totals restart (23)" '
import csv, sys
def words(f):
    rows = [r for r in csv.reader(open(f)) if len(r) > 2 and r[2] == sys.argv[3]]
    assert len(rows) == 1, (f, rows, open(f).read())
    return int(rows[0][0])
got = (words(sys.argv[1]), words(sys.argv[2]))
assert got == (123, 23), got
' "$T/iv.csv" "$T/tot.csv" "$PCIE_PMU/$W/"
tap_done
