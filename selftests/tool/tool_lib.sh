# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the hwtel tool selftests (sourced, not run).
#
#   tool_need_modules PLAN MOD...   SKIP the whole program (honestly) when
#                                   a module of this tree is not built
#   pcie_up [MODEL PARAMS...]       load hwtel_sim_pcie + ndk_pcie_tlm
#   pcie_down                       unload both
#   ddr_up VARIANT                  load hwtel_sim_ddr + marvell_cn10k_ddr_pmu
#   ddr_down                        unload both
#   tool_py "desc" SCRIPT ARGS...   run a python3 check, tap_ok/tap_fail
#   tool_wait_syscall PID X86 ARM64 until PID is blocked in that syscall

. "$(dirname "$0")/../lib.sh"
tap_require_lab

HW=$HWTEL_BUILD/tools/hwtel
NFB=$HWTEL_BUILD/tools/nfb-pcie-telemetry
CHECK_JSON=$HWTEL_SRC/tools/tests/check_json.py
SEED_GOLDEN=$HWTEL_SRC/tools/tests/golden/seed-pcie.txt
SIMDBG=/sys/kernel/debug/hwtel-sim
PCIE_PMU=ndk_pcie_tlm_3fff00000000
PCIE_DBG=$SIMDBG/$PCIE_PMU
T=$(mktemp -d)

tool_cleanup()
{
	local p

	for p in $(jobs -p); do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	modprobe -r ndk_pcie_tlm hwtel_sim_pcie 2>/dev/null
	modprobe -r marvell_cn10k_ddr_pmu hwtel_sim_ddr 2>/dev/null
	modprobe -r hwtel_sim 2>/dev/null
	rm -rf "$T"
}
trap tool_cleanup EXIT

# tool_need_modules PLAN MOD...: without the drivers there is nothing to test
tool_need_modules()
{
	local plan=$1 m

	shift
	for m in "$@"; do
		if ! modinfo "$m" >/dev/null 2>&1; then
			tap_plan "$plan"
			tap_skip_rest "module $m is not built for $(uname -r)"
		fi
	done
	if [ ! -x "$HW" ]; then
		tap_plan "$plan"
		tap_skip_rest "$HW not built (make tools)"
	fi
}

pcie_down()
{
	modprobe -r ndk_pcie_tlm 2>/dev/null
	modprobe -r hwtel_sim_pcie 2>/dev/null
	return 0
}

pcie_up()
{
	pcie_down
	modprobe hwtel_sim_pcie "$@" && modprobe ndk_pcie_tlm
}

ddr_down()
{
	modprobe -r marvell_cn10k_ddr_pmu 2>/dev/null
	modprobe -r hwtel_sim_ddr 2>/dev/null
	return 0
}

# PMU name of the first instance of a DDR model variant
ddr_pmu_of()
{
	case "$1" in
	cn10k)   echo mrvl_ddr_pmu_87e1c0000000 ;;
	odyssey) echo mrvl_ddr_pmu_87e1d0000000 ;;
	cn20k)   echo mrvl_ddr_pmu_87e1e0000000 ;;
	esac
}

ddr_up()
{
	ddr_down
	modprobe hwtel_sim_ddr variant="$1" && modprobe marvell_cn10k_ddr_pmu
}

# tool_py "desc" 'python code using sys.argv' ARGS...
tool_py()
{
	local desc=$1 code=$2 out

	shift 2
	if out=$(python3 -c "$code" "$@" 2>&1); then
		tap_ok "$desc"
	else
		tap_fail "$desc" "$out"
	fi
}

# tool_watch_csv FILE PMU [FIELDS]: FILE, the output of "-w -n 2 -x ,", has
# RFC 4180 rows of FIELDS fields (default 6; hwtel pcie has 7, its flags
# last), each led by the interval time (SECONDS.NANOSECONDS, as perf stat
# -I -x), with an event of PMU (or, perf stat -x's row of a further
# metric, the counter fields empty and the metric value set); two
# increasing times, as many rows each (1 test)
tool_watch_csv()
{
	tool_py "-w -x ,: RFC 4180 rows, the interval time first as perf stat -I -x" '
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=","))
pmu, nf = sys.argv[2], int(sys.argv[3])
assert rows, "no rows"
# a counter row names its event; a further metric of the counter above it
# has the counter fields empty and its value in the metric column
bad = [r for r in rows if len(r) != nf or not re.fullmatch(r"[0-9]+\.[0-9]{9}", r[0])
       or not (r[3].startswith(pmu + "/") or (r[1:6] == [""] * 5 and r[6]))]
assert not bad, bad[:2]
ts = [r[0] for r in rows]
stamps = sorted(set(ts), key=float)
assert len(stamps) == 2 and float(stamps[0]) > 0 and ts == sorted(ts, key=float), stamps
assert ts.count(stamps[0]) == ts.count(stamps[1]), "interval sizes differ"
' "$1" "$2" "${3:-6}"
}

# wait_for FILE PATTERN COUNT TIMEOUT_S: until PATTERN occurs COUNT times
wait_for()
{
	local i

	for ((i = 0; i < $4 * 10; i++)); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# tool_wait_syscall PID NR_X86_64 NR_ARM64: until PID is blocked in the
# syscall of that number (/proc/PID/syscall), at most 60 s; a condition, so
# the caller knows the tool reached that point (a sleep would only guess)
tool_wait_syscall()
{
	local nr=$2 i

	[ "$(uname -m)" = aarch64 ] && nr=$3
	for ((i = 0; i < 600; i++)); do
		[ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = "$nr" ] && return 0
		sleep 0.1
	done
	return 1
}

# Inject the reference counts that tool/pcie.sh and fleet/pcp.sh assert on
# (endpoint 0 of an idle PCIe model); the tests compute their expected
# values from these numbers.
tool_inject_known()
{
	local i inj=(
		"pcie_cycles,ep=0 4000000" "dma_cycles,ep=0 2000000"
		"words,ep=0,bus=0 1000" "stall,ep=0,bus=2 77" "frames,ep=0,bus=1 5"
		"mvb_items,ep=0,bus=2 9" "mvb_stall,ep=0,bus=3 3" "items,ep=0,bus=0 800"
		"region,ep=0,bus=3,idx=1 12" "brake,ep=0,idx=4 9" "tags_band,ep=0,idx=2 33"
		"stfifo_band,ep=0,idx=3 44"
	)

	for i in "${inj[@]}"; do
		echo "$i" > "$PCIE_DBG/inject"
	done
}
