#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel pcie at the largest layout the registers describe: 16 endpoints of
# 254 counters each (35 PCIe + 219 DMA channels: 1 port, UP and DOWN of 103
# regions; both probe channel counts are odd, so 255 is unreachable), 4064
# entries, seed traffic. Totals (-t 0, one 49 KB netlink message) in text
# and JSON, an interval in JSON with the default descriptor soft limit
# (1024; the report opens one perf event per counter, 4064), clear. The
# JSON carries 16 endpoints and, for totals, exactly the injected value of
# the last entry. (CSV, Prometheus and watch at this layout: not here, an
# interval takes minutes under TCG.)
#
# Opening the 4064 events took 2-9 minutes under TCG while libhwtel opened
# each group enabled (every member added to a running group rescheduled
# the whole group: N^2 / 2 add()/del() calls per group); a group is now
# opened disabled and enabled once, and the whole program takes about 20 s
# on 6.12.

. "$(dirname "$0")/tool_lib.sh"
tool_need_modules 6 hwtel_sim_pcie ndk_pcie_tlm
tap_plan 6

if ! pcie_up endpoints=16 regions_up=103 regions_down=103 drain_period=32768 mi_mhz=250 profile=seed; then
	for i in $(seq 6); do tap_fail "load the largest layout"; done
	tap_done
fi
ulimit -S -n 1024
tap_diag "descriptors: soft $(ulimit -S -n), hard $(ulimit -H -n)"

run()
{
	local desc=$1 out=$2

	shift 2
	if "$HW" "$@" > "$T/$out" 2> "$T/$out.err"; then
		tap_ok "$desc"
	else
		tap_fail "$desc" "exit $?: $(head -c 300 "$T/$out.err")"
	fi
}

run "totals (-t 0), text" tot.txt pcie -t 0
echo idle > "$PCIE_DBG/profile"
echo "raw,idx=3810 0" > "$PCIE_DBG/set"
"$HW" pcie -c > /dev/null 2>&1
echo "raw,idx=3810 123456789" > "$PCIE_DBG/inject"
run "totals (-t 0), JSON" tot.json pcie -t 0 -j
tool_py "totals JSON: 16 endpoints, PCIe cycles of endpoint 15 exact" '
import json, sys
d = json.load(open(sys.argv[1]))
eps = d["data"]["endpoints"]
assert len(eps) == 16, len(eps)
s = json.dumps(eps[15])
assert "123456789" in s, "injected cycles not in endpoint 15"
' "$T/tot.json"
echo seed > "$PCIE_DBG/profile"
run "interval, JSON (4064 events, soft limit 1024)" iv.json pcie -t 0.2 -j
tool_py "interval JSON: 16 endpoints" '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["data"]["endpoints"]) == 16, len(d["data"]["endpoints"])
' "$T/iv.json"
run "clear" clear.txt pcie -c

tap_done
