#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress of both PMUs (make stress; bounded in the lab suite). Each round:
# stress_churn opens, reads and closes valid events and groups on every
# hwtel PMU in 3 threads, with CPU hotplug and netlink CLEAR in the
# background; meanwhile instance 1 of each driver is unbound and bound again
# where the driver allows it, and both model modules (which own the
# devices) and both driver modules are removed and loaded again (each
# refused while events hold it). After the churn both models are
# reloaded. Then, in a quiet phase (nothing else running), events opened on
# every instance must count exactly what is injected into the models,
# including a PCIe counter that wraps at CNT_WIDTH 33.
#
# Budget: HWTEL_STRESS_ROUNDS (default 1, 2 on the debug kernel) rounds of
# HWTEL_STRESS_SECONDS (default 6) seconds of churn. HWTEL_FUZZ_SEED replays
# the churn threads' choices (timing still differs). The last lines print
# the counts and "N lost, N splats".

. "$(dirname "$0")/fuzz_lib.sh"

ROUNDS=${HWTEL_STRESS_ROUNDS:-$(fz_budget 2 1)}
SECS=${HWTEL_STRESS_SECONDS:-6}
DBG=/sys/kernel/debug/hwtel-sim
EVT=$HWTEL_BUILD/selftests-bin/pcie/pcie_evt
DDR_DRV=/sys/bus/platform/drivers/marvell-cn10k-ddr-pmu
PCIE_DRV=/sys/bus/platform/drivers/ndk-pcie-tlm
TMP=$(mktemp -d)

trap 'fz_online; fz_unload; rm -rf "$TMP"' EXIT

ddr_pmus() { ls /sys/bus/event_source/devices | grep '^mrvl_ddr_pmu_' | sort; }
pcie_pmus() { ls /sys/bus/event_source/devices | grep '^ndk_pcie_tlm_' | sort; }

# every module that is missing, in dependency order
ensure_loaded()
{
	[ -d /sys/module/hwtel_sim_ddr ] || modprobe hwtel_sim_ddr variant=cn10k instances=2
	[ -d /sys/module/marvell_cn10k_ddr_pmu ] || taskset -c 1 modprobe marvell_cn10k_ddr_pmu
	[ -d /sys/module/hwtel_sim_pcie ] || modprobe hwtel_sim_pcie instances=2 cnt_width=33
	[ -d /sys/module/ndk_pcie_tlm ] || taskset -c 1 modprobe ndk_pcie_tlm
	[ "$(ddr_pmus | wc -l)" = 2 ] && [ "$(pcie_pmus | wc -l)" = 2 ]
}

# second bound device of a platform driver
second_dev()
{
	ls "$1" 2>/dev/null | grep -vE '^(bind|unbind|uevent|module|new_id|remove_id)$' |
		sort | sed -n 2p
}

mark=$(dmesg_mark)
opened=0 reads=0 hotplug=0 clears=0 removals=0 reloads=0 refused=0 wraps=0 lost=0
fz_unload
tap_plan $((ROUNDS * 2 + 1))
if ensure_loaded; then
	tap_ok "models (cn10k x2, PCIe x2 at CNT_WIDTH 33) and drivers load"
else
	tap_fail "models (cn10k x2, PCIe x2 at CNT_WIDTH 33) and drivers load"
	tap_done
fi
echo "# seed $FZ_SEED, $ROUNDS rounds of ${SECS}s churn"

for r in $(seq 1 "$ROUNDS"); do
	"$FZ_BIN/stress_churn" --seed $((FZ_SEED + r)) --seconds "$SECS" --threads 3 \
		> "$TMP/churn" 2>&1 &
	churn=$!
	sleep "$(echo "$SECS / 4" | bc -l)"
	# device removal while events are live, both PMUs: sysfs unbind where
	# the driver allows it (suppress_bind_attrs hides it today), and the
	# model module (which owns the devices), refused while it is pinned
	for drv in "$DDR_DRV" "$PCIE_DRV"; do
		d=$(second_dev "$drv")
		[ -n "$d" ] || continue
		if (echo "$d" > "$drv/unbind") 2>/dev/null; then
			removals=$((removals + 1))
			sleep 0.3
			(echo "$d" > "$drv/bind") 2>/dev/null
		fi
	done
	for m in hwtel_sim_pcie hwtel_sim_ddr; do
		if rmmod $m 2>/dev/null; then
			removals=$((removals + 2))
		else
			refused=$((refused + 1))
		fi
		ensure_loaded > /dev/null
	done
	sleep "$(echo "$SECS / 4" | bc -l)"
	# driver module reloads: rmmod is refused while an event holds the module
	for m in ndk_pcie_tlm marvell_cn10k_ddr_pmu; do
		if rmmod $m 2>/dev/null; then
			reloads=$((reloads + 1))
		else
			refused=$((refused + 1))
		fi
		ensure_loaded > /dev/null
	done
	wait $churn
	read -r _ o _ rd _ hp _ cl _ < "$TMP/churn"
	echo "# round $r: $(cat "$TMP/churn")"
	opened=$((opened + o)) reads=$((reads + rd)) hotplug=$((hotplug + hp))
	clears=$((clears + cl))
	fz_online
	# model reloads (the driver goes with its model)
	fz_unload && reloads=$((reloads + 2))
	if ! ensure_loaded; then
		tap_fail "round $r: reload after the churn"
		tap_fail "round $r: quiet phase exact"
		continue
	fi
	tap_ok "round $r: churn, removals and reloads survived, all four PMUs back"

	# quiet phase: exact counts of what is injected, every instance
	bad=
	for p in $(ddr_pmus); do
		inj=$DBG/$p/inject
		exp="1000 12345 678"
		perf stat -a -x, -o "$TMP/stat" -e "$p/ddr_cam_read/,$p/event=0x65/,$p/event=0x64/" -- \
			sh -c "echo 'ddr_cam_read 1000' > $inj; echo 'ddr_ddr_reads 12345' > $inj; echo 'ddr_ddr_writes 678' > $inj" \
			> /dev/null 2>&1
		got=$(grep -v '^#' "$TMP/stat" | sed '/^$/d' | cut -d, -f1 | tr '\n' ' ')
		got=${got% }
		[ "$got" = "$exp" ] || bad+="$p: expected '$exp' got '$got'; "
		set -- $exp
		for g in $got; do
			case "$g" in *[!0-9]*) g=0 ;; esac
			d=$(( $1 > g ? $1 - g : g - $1 )); lost=$((lost + d)); shift
		done
		for e in "$@"; do lost=$((lost + e)); done
	done
	for p in $(pcie_pmus); do
		exp="1000 4242 77 10"
		echo "raw,idx=7 $(( (1 << 33) - 3 ))" > "$DBG/$p/set"
		got=$("$EVT" "$p" words,ep=0,bus=0 items,ep=0,bus=3 raw,idx=20 raw,idx=7 -- \
			"words,ep=0,bus=0 1000" "items,ep=0,bus=3 4242" "raw,idx=20 77" "raw,idx=7 10" |
			tr '\n' ' ')
		got=${got% }
		wraps=$((wraps + 1))
		[ "$got" = "$exp" ] || bad+="$p: expected '$exp' got '$got'; "
		set -- $exp
		for g in $got; do
			case "$g" in *[!0-9]*) g=0 ;; esac
			d=$(( $1 > g ? $1 - g : g - $1 )); lost=$((lost + d)); shift
		done
		for e in "$@"; do lost=$((lost + e)); done
	done
	if [ -z "$bad" ]; then
		tap_ok "round $r: quiet phase exact on all four PMUs (one PCIe wrap each)"
	else
		tap_fail "round $r: quiet phase exact on all four PMUs" "$bad"
	fi
done
echo "# events opened $opened, reads $reads, hotplug cycles $hotplug, clears $clears,"
echo "# device removals $removals, module reloads $reloads (refused busy $refused), wraps $wraps"
splats=$(dmesg_since "$mark" |
	grep -cE 'WARNING:|BUG:|Oops|general protection|list_(add|del) corruption|refcount_t:|lockdep|KASAN|INFO: task .* blocked|sleeping function called')
echo "# $lost lost, $splats splats"
tap_done
