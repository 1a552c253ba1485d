#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unload and reload the driver and the model, with nothing open and with
# events open, on every variant. The bound driver pins the model; with
# events open the driver refuses to go too (perf holds it) and counting
# goes on; nothing may crash or warn.

. "$(dirname "$0")/ddr_lib.sh"

refcnt() { awk -v m="$1" '$1 == m { print $3 }' /proc/modules; }

tap_plan 27
for v in $DDR_VARIANTS; do
	p=$(ddr_pmu "$v")

	ok=1
	for i in 1 2 3; do
		ddr_load "$v" 1 && test -d "$DDR_DEVS/$p" || ok=0
		rmmod marvell_cn10k_ddr_pmu && rmmod hwtel_sim_ddr || ok=0
		test -e "$DDR_DEVS/$p" && ok=0
		test -e "$DDR_DBG/$p" && ok=0
	done
	tap_eq "$v: 3 load/unload cycles with nothing open" 1 "$ok"

	# the bound driver pins the model, with nothing open
	ddr_load "$v" 1
	out=$(rmmod hwtel_sim_ddr 2>&1)
	tap_check "$v: model refuses to unload under the bound driver" \
		sh -c "lsmod | grep -q '^hwtel_sim_ddr ' && test -d '$DDR_DEVS/$p'"
	tap_diag "$v: rmmod model: $out"
	rmmod marvell_cn10k_ddr_pmu && rmmod hwtel_sim_ddr &&
		ddr_load "$v" 1
	tap_check "$v: driver, then model unloaded; both load again" \
		test -d "$DDR_DEVS/$p"

	# the workload ends when the test says so, not after a fixed time
	# (under a loaded TCG host the rmmods below took longer than 4 s)
	rm -f "$DDR_TMP/done"
	perf stat -a -x, -o "$DDR_TMP/bg" -e "$p/ddr_cam_read/" \
		sh -c "while [ ! -e '$DDR_TMP/done' ]; do sleep 0.1; done" &
	pid=$!
	for i in $(seq 100); do
		[ "$(refcnt marvell_cn10k_ddr_pmu)" -gt 0 ] 2>/dev/null && break
		sleep 0.05
	done
	tap_eq "$v: an open event holds the driver, which holds the model" \
		"1 1" "$(refcnt marvell_cn10k_ddr_pmu) $(refcnt hwtel_sim_ddr)"
	out=$(rmmod marvell_cn10k_ddr_pmu 2>&1)
	tap_check "$v: driver refuses to unload with an event open" \
		sh -c "lsmod | grep -q '^marvell_cn10k_ddr_pmu '"
	tap_diag "$v: rmmod driver: $out"
	out=$(rmmod hwtel_sim_ddr 2>&1)
	tap_check "$v: model refuses to unload with an event open" \
		sh -c "lsmod | grep -q '^hwtel_sim_ddr '"
	tap_diag "$v: rmmod model: $out"
	ddr_inject "$p" ddr_cam_read 500
	touch "$DDR_TMP/done"
	wait $pid
	tap_eq "$v: the open event still counted exactly" "500" \
		"$(grep -v '^#' "$DDR_TMP/bg" | sed '/^$/d' | cut -d, -f1)"
	tap_eq "$v: the driver is released when the event closed" 0 \
		"$(refcnt marvell_cn10k_ddr_pmu)"
	tap_check "$v: both unload after the event closed" \
		sh -c "rmmod marvell_cn10k_ddr_pmu && rmmod hwtel_sim_ddr"
done
tap_done
