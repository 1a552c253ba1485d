# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are the callers'
#
# Helpers of the fleet selftests (sourced, not run), after tool_lib.sh:
#
#   exec_start INST ARGS   the unit's ExecStart for hwtel INST, with its
#                          variables put in (interval 0.3 s, textfile
#                          directory $T/tf, HWTEL_ARGS=ARGS, this build)
#   exporter INST ARGS     run that command line in the background
#                          (EXP_PID, stderr in $T/exp-INST.err) and wait
#                          for its first textfile $T/tf/hwtel-INST.prom
#   rewrites FILE N        wait until FILE was replaced N times
#   infile FILE PATTERN W  wait until FILE has (W=1) or lacks (W=0) PATTERN
#   absent FILE            wait until FILE does not exist

UNIT=$HWTEL_SRC/data/systemd/hwtel-prometheus@.service
FLEET=$HWTEL_SRC/selftests/fleet

exec_start()
{
	local inst=$1 args=$2 line

	line=$(sed -n 's/^ExecStart=//p' "$UNIT")
	line=${line//%i/$inst}
	line=${line//'${HWTEL_INTERVAL}'/0.3}
	line=${line//'${HWTEL_TEXTFILE_DIR}'/$T/tf}
	line=${line//'$HWTEL_ARGS'/$args}
	line=${line/#\/usr\/bin\/hwtel/$HW}
	echo "$line"
}

# rename() gives every rewrite a new inode
rewrites()
{
	local f=$1 n=$2 ino last i

	last=$(stat -c %i "$f" 2>/dev/null)
	for ((i = 0; i < 100 && n > 0; i++)); do
		sleep 0.1
		ino=$(stat -c %i "$f" 2>/dev/null)
		if [ -n "$ino" ] && [ "$ino" != "$last" ]; then
			n=$((n - 1))
			last=$ino
		fi
	done
	[ "$n" -eq 0 ]
}

exporter()
{
	local -a argv
	local i

	mkdir -p "$T/tf"
	read -ra argv <<< "$(exec_start "$1" "$2")"
	"${argv[@]}" 2> "$T/exp-$1.err" &
	EXP_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/tf/hwtel-$1.prom" ] && return 0
		sleep 0.1
	done
	return 1
}

infile()
{
	local i

	for ((i = 0; i < 100; i++)); do
		grep -q "$2" "$1" 2>/dev/null
		[ $? -eq $((1 - $3)) ] && return 0
		sleep 0.1
	done
	return 1
}

absent()
{
	local i

	for ((i = 0; i < 100; i++)); do
		[ -e "$1" ] || return 0
		sleep 0.1
	done
	return 1
}
