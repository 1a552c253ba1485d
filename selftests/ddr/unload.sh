#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unload and reload the driver and the model, with nothing open and with
# events open, on every variant. With events open both modules refuse to
# go (EBUSY: perf holds the driver, the driver's event_init pins the model)
# and counting goes on; nothing may crash or warn.

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

	# the model goes first: the driver unbinds, the PMU disappears
	ddr_load "$v" 1
	rmmod hwtel_sim_ddr
	tap_check "$v: model unloaded under the bound driver, PMU gone" \
		test ! -e "$DDR_DEVS/$p"
	modprobe hwtel_sim_ddr variant="$v"
	tap_check "$v: model reloaded, driver binds again" test -d "$DDR_DEVS/$p"

	# the workload ends when the test says so, not after a fixed time
	# (under a loaded TCG host the rmmods below took longer than 4 s)
	rm -f "$DDR_TMP/done"
	perf stat -a -x, -o "$DDR_TMP/bg" -e "$p/ddr_cam_read/" \
		sh -c "while [ ! -e '$DDR_TMP/done' ]; do sleep 0.1; done" &
	pid=$!
	for i in $(seq 100); do
		[ "$(refcnt hwtel_sim_ddr)" -gt 0 ] 2>/dev/null && break
		sleep 0.05
	done
	tap_eq "$v: an open event pins the model" 1 "$(refcnt hwtel_sim_ddr)"
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
	tap_eq "$v: model unpinned when the event closed" 0 "$(refcnt hwtel_sim_ddr)"
	tap_check "$v: both unload after the event closed" \
		sh -c "rmmod marvell_cn10k_ddr_pmu && rmmod hwtel_sim_ddr"
done
tap_done
