# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the DDR PMU selftests (sourced, not run). Every test loads the
# model and the driver itself and unloads both on exit.

. "$(dirname "$0")/../lib.sh"
tap_require_lab

DDR_VARIANTS="cn10k odyssey cn20k"
DDR_DEVS=/sys/bus/event_source/devices
DDR_DBG=/sys/kernel/debug/hwtel-sim
DDR_PARAM=/sys/module/marvell_cn10k_ddr_pmu/parameters/poll_period_sec
DDR_TMP=$(mktemp -d)

# MMIO base (the PMU name suffix) of instance $2 (default 0) of variant $1
ddr_base()
{
	local b

	case "$1" in
	cn10k)   b=0x87e1c0000000 ;;
	odyssey) b=0x87e1d0000000 ;;
	cn20k)   b=0x87e1e0000000 ;;
	*)       return 1 ;;
	esac
	printf '%x\n' $((b + ${2:-0} * 0x1000000))
}

ddr_pmu() { echo "mrvl_ddr_pmu_$(ddr_base "$@")"; }

# Maximum value of a generic counter, as an unsigned decimal
ddr_gen_max()
{
	case "$1" in
	cn10k) echo 281474976710655 ;;
	*)     echo 18446744073709551615 ;;
	esac
}

ddr_unload()
{
	rmmod marvell_cn10k_ddr_pmu 2>/dev/null
	rmmod hwtel_sim_ddr 2>/dev/null
	rmmod hwtel_sim 2>/dev/null
	return 0
}

ddr_cleanup()
{
	ddr_unload
	rm -rf "$DDR_TMP"
}
trap ddr_cleanup EXIT

# ddr_load VARIANT [INSTANCES [driver params...]]: model, then the driver
# probed on CPU 1 (so the owner CPU is known and can be taken offline).
ddr_load()
{
	local v=$1 n=${2:-1}

	shift 2 2>/dev/null || shift $#
	modprobe hwtel_sim_ddr variant="$v" instances="$n" || return 1
	taskset -c 1 modprobe marvell_cn10k_ddr_pmu "$@"
}

# ddr_inject PMU EVENT COUNT
ddr_inject() { echo "$2 $3" > "$DDR_DBG/$1/inject"; }

# ddr_stat EVENTS -- CMD...: run perf stat -a over CMD, print "count,event"
# lines (perf's CSV columns 1 and 3) in the order given.
ddr_stat()
{
	local ev=$1

	shift
	[ "$1" = "--" ] && shift
	perf stat -a -x, -o "$DDR_TMP/stat" -e "$ev" -- "$@" >/dev/null 2>&1 ||
		{ echo "perf-failed"; return 1; }
	grep -v '^#' "$DDR_TMP/stat" | sed '/^$/d' | cut -d, -f1,3
}

# ddr_stat_raw EVENTS -- CMD...: the whole CSV lines
ddr_stat_raw()
{
	local ev=$1

	shift
	[ "$1" = "--" ] && shift
	perf stat -a -x, -o "$DDR_TMP/stat" -e "$ev" -- "$@" >/dev/null 2>&1 ||
		{ echo "perf-failed"; return 1; }
	grep -v '^#' "$DDR_TMP/stat" | sed '/^$/d'
}
