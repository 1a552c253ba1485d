#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The control plane's whole-window reads against perf event churn (issue
# 18, item 1 and defect 4), on the largest layout (16 endpoints, 4064
# entries: a TOTALS_GET folds it in 254 chunks) of the idle model, which
# moves only what the test injects:
#  - TOTALS_GET and CLEAR never fail while a group of 8 is started and
#    stopped back to back (they used to give up with EAGAIN when starts and
#    stops kept landing between their chunks);
#  - a perf read during those folds is fresh: after each of 40 injections
#    of 1 the read is exactly the number injected so far (reads used to be
#    served from the fold's older SNAPSHOT while it held the window).

. "$(dirname "$0")/pcie_lib.sh"

SEQ=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_seq
EVT=${HWTEL_BUILD:-/nonexistent}/selftests-bin/pcie/pcie_evt
HW=${HWTEL_BUILD:-/nonexistent}/tools/hwtel
T=$(mktemp -d)
trap 'touch "$T/stop"; wait; pcie_unload; rm -rf "$T"' EXIT

tap_plan 4
if ! pcie_load endpoints=16 regions_up=103 regions_down=103 drain_period=32768 mi_mhz=250 || [ ! -d "$DEV" ]; then
	tap_fail "model and driver load"
	tap_done
fi
tap_eq "model and driver load: 4064 entries" 4064 \
	"$(( $(cat "$DEV/caps/endpoints") * $(cat "$DEV/caps/counters_per_ep") ))"

# each churn process enables and disables its group 500 times: a SNAPSHOT
# for every start and every stop, back to back
churn=(G:8)
for ((i = 0; i < 500; i++)); do
	churn+=(e d)
done
( while [ ! -e "$T/stop" ]; do "$SEQ" "$PMU" "${churn[@]}" c > /dev/null 2>&1; done ) &
churner=$!
(
	f=0
	for ((i = 0; i < 30; i++)); do
		"$EVT" -t "$PMU" > /dev/null 2>&1 || f=$((f + 1))
		"$HW" pcie -d "$PMU" -c > /dev/null 2>&1 || f=$((f + 1))
	done
	echo "$f" > "$T/fails"
) &
plane=$!

steps=()
for ((i = 0; i < 40; i++)); do
	steps+=("x:echo 'raw,idx=3 1' > $DBG/inject" r)
done
out=$("$SEQ" "$PMU" o:raw,idx=3 e "${steps[@]}" c 2>&1)
got=$(echo "$out" | sed -n 's/^r \([0-9E]*\).*/\1/p' | tr '\n' ' ')
tap_eq "40 reads during the folds, each exact" "$(seq -s ' ' 1 40) " "$got"

wait "$plane"
tap_eq "30 TOTALS_GET and 30 CLEAR under event churn: none failed" 0 \
	"$(cat "$T/fails" 2>/dev/null || echo missing)"
touch "$T/stop"
wait "$churner"
out=$("$EVT" -t "$PMU" 2>&1 | head -n 1)
tap_check "TOTALS_GET after the churn: $out" "$EVT" -t "$PMU"
tap_done
