# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for hwtel shell selftests. Source it, then:
#
#   tap_plan N                    print the TAP header and the plan
#   tap_ok "desc"                 one passing test
#   tap_fail "desc" [detail...]   one failing test, details as diagnostics
#   tap_skip "desc" "reason"      one skipped test (never counted as a pass)
#   tap_skip_rest "reason"        after tap_plan: every test not run yet
#                                 skipped, then exit (1 if one failed)
#   tap_eq "desc" EXPECTED ACTUAL pass when the two strings are equal
#   tap_check "desc" CMD ARGS...  pass when CMD exits 0
#   tap_done                      exit 0 when nothing failed, 1 otherwise
#   tap_diag "text"               a diagnostic line
#   m=$(dmesg_mark)               log a unique marker record in the kernel log
#   dmesg_since "$m"              the kernel log after that marker (never
#                                 clearing the ring: the lab refuses it)
#
# When no plan is given up front, tap_done prints it at the end.

__tap_n=0
__tap_fail=0
__tap_planned=

tap_plan()
{
	echo "TAP version 13"
	echo "1..$1"
	__tap_planned=$1
}

tap_diag()
{
	local l

	while IFS= read -r l; do
		echo "# $l"
	done <<< "$*"
}

tap_ok()
{
	__tap_n=$((__tap_n + 1))
	echo "ok $__tap_n $1"
}

tap_fail()
{
	__tap_n=$((__tap_n + 1))
	__tap_fail=$((__tap_fail + 1))
	echo "not ok $__tap_n $1"
	shift
	[ $# -gt 0 ] && tap_diag "$*"
	return 0
}

tap_skip()
{
	__tap_n=$((__tap_n + 1))
	echo "ok $__tap_n $1 # SKIP ${2:-}"
}

tap_skip_rest()
{
	while [ "$__tap_n" -lt "${__tap_planned:-0}" ]; do
		tap_skip "test $((__tap_n + 1))" "$1"
	done
	[ "$__tap_fail" -eq 0 ] || exit 1
	exit 0
}

tap_eq()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		tap_fail "$1" "expected: $2" "actual:   $3"
	fi
}

tap_check()
{
	local desc=$1 out

	shift
	if out=$("$@" 2>&1); then
		tap_ok "$desc"
	else
		tap_fail "$desc" "command: $*" "$out"
	fi
}

tap_done()
{
	[ -n "$__tap_planned" ] || echo "1..$__tap_n"
	if [ -n "$__tap_planned" ] && [ "$__tap_planned" != "$__tap_n" ]; then
		echo "# planned $__tap_planned tests, ran $__tap_n"
		exit 1
	fi
	[ "$__tap_fail" -eq 0 ]
	exit
}

__dmesg_marks=0
dmesg_mark()
{
	__dmesg_marks=$((__dmesg_marks + 1))
	local m="hwtel-test-mark: $$.$__dmesg_marks.$(date +%s%N)"

	echo "$m" > /dev/kmsg
	echo "$m"
}

dmesg_since()
{
	dmesg | awk -v m="$1" 'on { print; next } index($0, m) { on = 1 }'
}

# Run only inside the lab guest: refuse to touch the host kernel.
tap_require_lab()
{
	if [ -z "${HWTEL_KERNEL:-}" ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP not inside the hwtel lab (scripts/vmrun)"
		exit 4
	fi
}

# The CPUs of NUMA node $1, one per line, ascending; nothing when the node
# does not exist (a kernel without CONFIG_NUMA has no node directories).
numa_node_cpus()
{
	local l=/sys/devices/system/node/node$1/cpulist r

	[ -r "$l" ] || return 0
	for r in $(tr ',' ' ' < "$l"); do
		seq "${r%-*}" "${r#*-}"
	done
}

# The online CPUs, one per line, ascending
online_cpus()
{
	local r

	for r in $(tr ',' ' ' < /sys/devices/system/cpu/online); do
		seq "${r%-*}" "${r#*-}"
	done
}

# kver_ge MAJOR.MINOR: the running kernel is that version or newer
kver_ge()
{
	local want=$1 have

	have=$(uname -r | sed -n 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $have ${want/./ }
	[ "$1" -gt "$3" ] || { [ "$1" -eq "$3" ] && [ "$2" -ge "$4" ]; }
}
