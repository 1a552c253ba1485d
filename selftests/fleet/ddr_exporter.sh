#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DDR exporter (hwtel-prometheus@ddr.service, its exact ExecStart) on a
# host whose DDR PMUs do not all exist when it starts: the model makes two
# controllers, the second kept unbound (driver_override) until the exporter
# runs. Bound then, its PMU joins the one textfile with its counts from
# then on, while the first one's go on; every file passes the strict
# exposition check and promtool. A DDR PMU cannot vanish under the
# exporter: its perf events hold the driver (rmmod refused), and the
# driver has no unbind.
# Started before any DDR PMU exists (at boot, before the module loads),
# the exporter waits for one instead of exiting 3, and the PMU's series
# appear in the file once the driver is loaded.

. "$(dirname "$0")/../tool/tool_lib.sh"
. "$(dirname "$0")/fleet_lib.sh"

PLAN=9
D1=$(ddr_pmu_of odyssey)
D2=mrvl_ddr_pmu_87e1d1000000	# the second controller: base + 16 MiB
DEV2=/sys/bus/platform/devices/odyssey-ddr-pmu-sim.1
TF=$T/tf/hwtel-ddr.prom
# the labels: the PMU and its controller, the MMIO base its name holds
L1="device=\"$D1\",controller=\"0x${D1#mrvl_ddr_pmu_}\""
L2="device=\"$D2\",controller=\"0x${D2#mrvl_ddr_pmu_}\""

tool_need_modules $PLAN hwtel_sim_ddr marvell_cn10k_ddr_pmu
tap_plan $PLAN

ddr_down
modprobe hwtel_sim_ddr variant=odyssey instances=2 &&
	echo none > "$DEV2/driver_override" && modprobe marvell_cn10k_ddr_pmu
tap_eq "two controllers, the second one unbound: one DDR PMU" "1 0" \
	"$(test -d "/sys/bus/event_source/devices/$D1"; echo $? | tr 01 10) $(test -d "/sys/bus/event_source/devices/$D2"; echo $? | tr 01 10)"

exporter ddr "-e ddr_cam_read" || tap_diag "no first textfile: $(cat "$T/exp-ddr.err")"
echo "ddr_ddr_reads 100" > "$SIMDBG/$D1/inject"
# bound while the exporter runs: the PMU appears
echo > "$DEV2/driver_override"
echo odyssey-ddr-pmu-sim.1 > /sys/bus/platform/drivers_probe
tap_check "bound while the exporter runs, the second PMU appears" \
	test -d "/sys/bus/event_source/devices/$D2"
infile "$TF" "device=\"$D2\"" 1
r=$?
echo "ddr_ddr_reads 5" > "$SIMDBG/$D2/inject"
echo "ddr_ddr_writes 2" > "$SIMDBG/$D2/inject"
echo "ddr_cam_read 3" > "$SIMDBG/$D2/inject"
echo "ddr_ddr_reads 1" > "$SIMDBG/$D1/inject"
rewrites "$TF" 2
cat "$TF" > "$T/two.prom"
tap_eq "the new PMU joins the textfile within 10 s" 0 "$r"
# bytes: 64 a burst
tap_check "one textfile, strict format: the new PMU's counts since it joined, the first one's go on" \
	python3 "$FLEET/promcheck.py" "$T/two.prom" \
	"hwtel_ddr_bytes_total{$L1,direction=\"read\"}=$((101 * 64))" \
	"hwtel_ddr_bytes_total{$L2,direction=\"read\"}=$((5 * 64))" \
	"hwtel_ddr_bytes_total{$L2,direction=\"write\"}=$((2 * 64))" \
	"hwtel_ddr_events_counted_total{$L2,event=\"ddr_cam_read\"}=3"
tap_check "promtool check metrics accepts it" sh -c "promtool check metrics < '$T/two.prom'"
# the exporter's events pin the driver: no DDR PMU can go while it runs
rmmod marvell_cn10k_ddr_pmu 2> /dev/null
r=$?
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_eq "the driver cannot be unloaded under the exporter; it exits 0 on SIGTERM, one line says the PMU joined" \
	"1 0 1" "$((r != 0)) $? $(grep -c "$D2: new DDR PMU, exported from now on" "$T/exp-ddr.err")"
tap_diag "exporter's stderr: $(tr '\n' '|' < "$T/exp-ddr.err")"

# --- 7-9: started before the driver is loaded -----------------------------
ddr_down
rm -f "$T/tf"/*
read -ra argv <<< "$(exec_start ddr "")"
"${argv[@]}" 2> "$T/exp-ddr.err" &
EXP_PID=$!
wait_for "$T/exp-ddr.err" "no mrvl_ddr_pmu_\* PMU yet: waiting for one" 1 30
r=$?
# the sleep of the wait (ppoll: 271 on x86-64, 73 on arm64)
tool_wait_syscall $EXP_PID 271 73
tap_eq "no DDR PMU: the exporter waits (one line says so), alive, no file yet" "0 0 0" \
	"$r $(kill -0 "$EXP_PID"; echo $?) $(ls "$T/tf" | wc -l)"
modprobe hwtel_sim_ddr variant=odyssey && modprobe marvell_cn10k_ddr_pmu
infile "$TF" "device=\"$D1\"" 1
r=$?
echo "ddr_ddr_reads 7" > "$SIMDBG/$D1/inject"
rewrites "$TF" 2
cat "$TF" > "$T/late.prom" 2> /dev/null
tap_eq "the driver loaded then: the PMU's series appear in the file, one line says it joined" \
	"0 1" "$r $(grep -c "$D1: new DDR PMU, exported from now on" "$T/exp-ddr.err")"
tap_check "strict format, the PMU's counts since it joined" \
	python3 "$FLEET/promcheck.py" "$T/late.prom" \
	"hwtel_ddr_bytes_total{$L1,direction=\"read\"}=$((7 * 64))" \
	"hwtel_ddr_bytes_total{$L1,direction=\"write\"}=0"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_diag "exit $?, the late exporter's stderr: $(tr '\n' '|' < "$T/exp-ddr.err")"
tap_done
