#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu (Mali source): CPU time per 10^5 events of the attribution, on a
# recording of 10^6 events (jobs on all nine units for 20 PIDs, a FREQ_VOLT
# change every ~50 events). The driver's files are regular files in a
# directory given as --debugfs, so no model and no privilege are needed; the
# recording is read once at the end of -t 0.01. Also reported: the CPU time
# of the same run on an empty recording (start-up and report), and what
# the events add, per 10^5.

set -u
hw=${HWTEL_BUILD:?run inside the lab (make bench), or set HWTEL_BUILD}/tools/hwtel
[ -x "$hw" ] || { echo "build the tool first (make tools)"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

mkdir -p "$t/full/mali/profiling/proc/default" "$t/empty/mali/profiling/proc/default"
for d in full empty; do
	echo 0 > "$t/$d/mali/profiling/proc/default/enable"
	echo 0 > "$t/$d/mali/profiling/record"
done
: > "$t/empty/mali/profiling/events"
python3 - "$t/full/mali/profiling/events" <<'PY'
import sys
t, rnd, out = 1700000000000000000, 12345, []
opened = [0] * 9
for i in range(1000000):
    rnd = (rnd * 6364136223846793005 + 1442695040888963407) % 2**64
    x = rnd >> 33
    t += 1 + x % 2000
    if i == 0 or x % 50 == 0:
        out.append("%d %d %d %d 0 0 0" % (t, 21 << 16 | 10, (200, 266, 400, 533)[(x >> 8) % 4],
                                          (900, 1000, 1100)[(x >> 12) % 3]))
        continue
    k = (x >> 8) % 9
    ch = 1 if k == 0 else 4 + k
    if opened[k]:
        out.append("%d %d 0 0 0 0 0" % (t, 2 << 24 | ch << 16))
        opened[k] = 0
    else:
        opened[k] = 1 + (x >> 16) % 20
        out.append("%d %d %d 0 0 0 0" % (t, 1 << 24 | ch << 16, opened[k]))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY

# CPU seconds (user + sys) of one run, from getrusage(RUSAGE_CHILDREN)
# before and after it (python may run children of its own at start-up)
cpu()
{
	python3 - "$hw" "$1" <<'PY'
import resource, subprocess, sys
a = resource.getrusage(resource.RUSAGE_CHILDREN)
r = subprocess.run([sys.argv[1], "gpu", "--source", "mali", "--debugfs", sys.argv[2],
                    "--no-proc-events", "-t", "0.01", "-j"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode:
    sys.exit(r.stderr.decode())
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (u.ru_utime + u.ru_stime - a.ru_utime - a.ru_stime))
PY
}

full=$(cpu "$t/full") || exit 1
empty=$(cpu "$t/empty") || exit 1
echo "hwtel gpu: CPU time of the attribution (Mali source, regular files)"
printf '%-34s %8s s\n' "10^6 events" "$full" "no events" "$empty"
printf '%-34s %8.4f s\n' "per 10^5 events (the events' part)" \
	"$(echo "scale=4; ($full - $empty) / 10" | bc)"
