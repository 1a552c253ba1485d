#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# poll_period_sec: default, valid and invalid values at modprobe and at
# runtime through /sys/module/marvell_cn10k_ddr_pmu/parameters/. 0, values
# too large for ktime (> KTIME_MAX / NSEC_PER_SEC = 9223372036) and
# non-numbers are rejected with EINVAL.

. "$(dirname "$0")/ddr_lib.sh"

modprobe hwtel_sim_ddr variant=cn10k instances=1

# modprobe with poll_period_sec=$1: prints "loaded <value>" or the error
try_load()
{
	local out

	if out=$(modprobe marvell_cn10k_ddr_pmu poll_period_sec="$1" 2>&1); then
		echo "loaded $(cat $DDR_PARAM)"
		rmmod marvell_cn10k_ddr_pmu
	else
		case "$out" in
		*"Invalid argument"*) echo EINVAL ;;
		*) echo "error: $out" ;;
		esac
	fi
}

# write $1 to the parameter: prints "ok" or the error
try_set()
{
	local out

	if out=$( (echo "$1" > "$DDR_PARAM") 2>&1); then
		echo ok
	else
		case "$out" in
		*"Invalid argument"*) echo EINVAL ;;
		*) echo "error: $out" ;;
		esac
	fi
}

tap_plan 17
tap_eq "modprobe poll_period_sec=0 fails with EINVAL" EINVAL "$(try_load 0)"
tap_eq "modprobe poll_period_sec=9223372037 (beyond ktime) fails with EINVAL" \
	EINVAL "$(try_load 9223372037)"
tap_eq "modprobe poll_period_sec=18446744073709551616 fails with EINVAL" \
	EINVAL "$(try_load 18446744073709551616)"
tap_eq "modprobe poll_period_sec=abc fails with EINVAL" EINVAL "$(try_load abc)"
tap_eq "modprobe poll_period_sec=-1 fails with EINVAL" EINVAL "$(try_load -1)"
tap_eq "modprobe poll_period_sec=9223372036 (largest) loads" \
	"loaded 9223372036" "$(try_load 9223372036)"
tap_eq "modprobe poll_period_sec=7 loads" "loaded 7" "$(try_load 7)"

modprobe marvell_cn10k_ddr_pmu
tap_eq "default is 100 s" 100 "$(cat $DDR_PARAM)"
tap_eq "mode is 0644" 644 "$(stat -c %a $DDR_PARAM)"
tap_eq "runtime write 0 fails with EINVAL" EINVAL "$(try_set 0)"
tap_eq "runtime write 9223372037 fails with EINVAL" EINVAL "$(try_set 9223372037)"
tap_eq "runtime write abc fails with EINVAL" EINVAL "$(try_set abc)"
tap_eq "rejected writes leave the value alone" 100 "$(cat $DDR_PARAM)"
tap_eq "runtime write 3" ok "$(try_set 3)"
tap_eq "reads back 3" 3 "$(cat $DDR_PARAM)"
tap_eq "runtime write 9223372036" ok "$(try_set 9223372036)"
tap_eq "reads back 9223372036" 9223372036 "$(cat $DDR_PARAM)"
tap_done
