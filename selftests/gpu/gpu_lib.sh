# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the GPU selftests (sourced, not run).
#
#   mali_up [PARAMS...]        load hwtel_sim + hwtel_sim_mali
#   mali_down                  unload them
#   ctl "LINES"                write script lines to the model's control file
#                              in one write(2)
#   werrno FILE TEXT           write TEXT to FILE in one write(2), print the
#                              errno name (OK when it succeeded)
#   upj "SEGMENTS"             expected micro-PJ of "NS:MHZ:MV ..." segments,
#                              rounded to nearest (P = C V^2 f, 1 PW = one
#                              unit at 266 MHz and 1 V)

. "$(dirname "$0")/../tool/tool_lib.sh"

PROF=/sys/kernel/debug/mali/profiling
ENABLE=$PROF/proc/default/enable
RECORD=$PROF/record
EVENTS=$PROF/events
CTL=$SIMDBG/mali/control
STATS=$SIMDBG/mali/stats

mali_down()
{
	modprobe -r hwtel_sim_mali 2>/dev/null
	return 0
}

mali_up()
{
	mali_down
	modprobe hwtel_sim_mali "$@"
}

# one write(2): every line of it has the same base time (a shell may split)
CTLPY=$T/ctl.py
cat > "$CTLPY" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, (sys.argv[2] + "\n").encode())
PY
ctl()
{
	python3 "$CTLPY" "$CTL" "$1"
}

werrno()
{
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY)
    os.write(fd, sys.argv[2].encode())
    os.close(fd)
    print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

upj()
{
	python3 - "$1" <<'PY'
import sys
raw = 0
for seg in sys.argv[1].split():
    ns, mhz, mv = (int(x) for x in seg.split(":"))
    raw += ns * mv * mv * mhz
one = 266 * 1000 * 1000 * 10**9 // 10**6     # 1 uPJ in mV^2 x MHz x ns
print((raw + one // 2) // one)
PY
}

gpu_cleanup()
{
	mali_down
	tool_cleanup
}
trap gpu_cleanup EXIT

# gpu_need_model PLAN: SKIP everything when the model is not built
gpu_need_model()
{
	tool_need_modules "$1" hwtel_sim_mali
}

# gpu_wait_report PYTHON-EXPR: until a report line L (a dict) of the JSON
# lines file $W, from line $FROM on, makes it true; print that line's
# number (0: hwtel, pid $HWPID, ended first). Polls every 50 ms, up to 300 s.
# Only whole lines count: a reader may see a line hwtel is still writing
# (stdio may write it in pieces, and a write(2) to a regular file becomes
# visible page by page).
gpu_wait_report()
{
	python3 - "$W" "$FROM" "$1" "$HWPID" <<'PY'
import json, os, sys, time
path, start, expr, hw = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for _ in range(6000):
    lines = open(path).read().split("\n")[:-1]
    for n, l in enumerate(lines[start:], start + 1):
        L = json.loads(l)
        if eval(expr):
            print(n)
            sys.exit()
    if not os.path.exists("/proc/%d" % hw):
        break
    time.sleep(0.05)
print(0)
PY
}
