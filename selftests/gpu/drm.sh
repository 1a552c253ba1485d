#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu --source drm on the DRM GPU model (hwtel_sim_drmgpu): the
# fdinfo usage stats of /proc/PID/fdinfo/FD and the devfreq device of the
# real kernel interfaces. Two processes on three engines, a DVFS change
# in the middle of jobs of both (200 -> 400 MHz, priced exactly from the
# drm-cycles), a second change (400 -> 300 MHz), a process that submits
# and exits before hwtel reads it again (its file is held: counted), and a
# process that opens, submits and exits between two reads (never seen:
# not in the report, as documented). Energies computed here from
# P = C V^2 f (1 PW = one engine busy at 266 MHz and 1 V) and the model's
# OPP table 200/900, 300/1000, 400/1100 (MHz/mV). Then the model in xe's
# form (xe=1: drm-cycles-<engine> with drm-total-cycles-<engine>, no engine
# ns; issue 20 case 6).

. "$(dirname "$0")/gpu_lib.sh"

PLAN=20
tool_need_modules "$PLAN" hwtel_sim_drmgpu
DCTL=$SIMDBG/drmgpu/control
DCLI=$SIMDBG/drmgpu/clients

drm_down()
{
	modprobe -r hwtel_sim_drmgpu 2>/dev/null
	return 0
}
trap 'drm_down; gpu_cleanup' EXIT

tap_plan "$PLAN"
drm_down
mali_down
if ! modprobe hwtel_sim_drmgpu; then
	tap_fail "load hwtel_sim_drmgpu"
	tap_done
fi
if [ ! -e /sys/class/devfreq/hwtel-sim-gpu/trans_stat ]; then
	tap_skip_rest "no devfreq trans_stat on $(uname -r) (CONFIG_PM_DEVFREQ)"
fi

# a client: a python process under the name $1 that opens the device,
# prints its PID and waits for EOF on stdin
ln -s "$(command -v python3)" "$T/gpuA"
ln -s "$(command -v python3)" "$T/gpuB"
ln -s "$(command -v python3)" "$T/gpuC"
cat > "$T/client.py" <<'PY'
import os, sys
fd = os.open("/dev/hwtel-sim-gpu", os.O_RDWR)
print(os.getpid(), flush=True)
sys.stdin.read()
PY

# the measured command: every step waits for what it needs, no timing
cat > "$T/drive.py" <<'PY'
import os, subprocess, sys, time
T, CTL, CLI = sys.argv[1:4]
hw = os.getppid()

def start(name):
    p = subprocess.Popen([T + "/" + name, T + "/client.py"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    return p, pid

def cid(pid):
    for l in open(CLI):
        c, p, r = l.split()
        if int(p) == pid:
            return int(c)

def reads(c):
    for l in open(CLI):
        i, p, r = l.split()
        if int(i) == c:
            return int(r)
    return -1

def sampled(cs, n):
    # wait until hwtel has read the fdinfo of every client of cs n more
    # times (one sample reads them one after the other: waiting on A alone
    # let B's window run into the next change on a loaded 6.1 guest)
    r0 = [reads(c) for c in cs]
    for _ in range(3000):
        if all(reads(c) >= r + n for c, r in zip(cs, r0)):
            return
        time.sleep(0.01)

def ctl(text):
    fd = os.open(CTL, os.O_WRONLY)
    os.write(fd, text.encode())
    os.close(fd)

def held(n):
    # hwtel holds a duplicate of each client it has seen (pidfd_getfd)
    for _ in range(600):
        k = 0
        for f in os.listdir("/proc/%d/fd" % hw):
            try:
                k += os.readlink("/proc/%d/fd/%s" % (hw, f)) == "/dev/hwtel-sim-gpu"
            except OSError:
                pass
        if k >= n:
            return True
        time.sleep(0.02)
    return False

a, pa = start("gpuA")
b, pb = start("gpuB")
ca, cb = cid(pa), cid(pb)
ok = held(2)
# one write: both jobs span the change to 400 MHz
ctl("job %d fragment 3000000\njob %d vertex-tiler 1000000\nfreq 400000000\n"
    "job %d fragment 2000000\njob %d compute 4000000\n" % (ca, cb, ca, cb))
# two samples: no sample window that holds these jobs reaches the next
# change (a window spans from before the previous sample's reads)
sampled((ca, cb), 2)
ctl("freq 300000000\n")
ctl("job %d vertex-tiler 2000000\njob %d fragment 1000000\n" % (ca, cb))
# B submits and exits at once: hwtel reads it through its duplicate
ctl("job %d compute 3000000\n" % cb)
b.stdin.close()
b.wait()
open(T + "/pids", "w").write("%d %d %d\n" % (pa, pb, ok))
a.stdin.close()
a.wait()
PY

"$HW" gpu -j --source drm --sample 50 --prometheus "$T/p.prom" \
	-- python3 "$T/drive.py" "$T" "$DCTL" "$DCLI" > "$T/d.json" 2> "$T/d.err"
tap_eq "exit status" "0" "$?"
read -r PA PB HELD < "$T/pids"
tap_eq "hwtel held both clients' files before the scripted jobs" "1" "$HELD"
tap_check "B exited before the report" test ! -e "/proc/$PB"

summary()
{
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
c = [c for c in d["consumers"] if c["pid"] == pid]
if not c:
    print("absent")
    sys.exit()
c = c[0]
b = c["busy_ns"]
print(c["comm"], b["fragment"], b["vertex-tiler"], b["compute"], c["energy_upj"], c["unpriced_ns"])
PY
}

# A: fragment 3 ms at 200/900 + 2 ms at 400/1100, vertex-tiler 2 ms at 300/1000
# B: vertex-tiler 1 ms at 200/900, compute 4 ms at 400/1100 + 3 ms at 300/1000,
#    fragment 1 ms at 300/1000
E_A=$(upj "3000000:200:900 2000000:400:1100 2000000:300:1000")
E_B=$(upj "1000000:200:900 4000000:400:1100 3000000:300:1000 1000000:300:1000")
E_T=$(upj "3000000:200:900 2000000:400:1100 2000000:300:1000 1000000:200:900 4000000:400:1100 3000000:300:1000 1000000:300:1000")
tap_eq "A: name, busy ns per engine, energy exact (uPJ)" \
	"gpuA 5000000 2000000 0 $E_A 0" "$(summary "$T/d.json" "$PA")"
tap_eq "B (exited before the last read): name, busy, energy exact" \
	"gpuB 1000000 1000000 7000000 $E_B 0" "$(summary "$T/d.json" "$PB")"
got=$(python3 - "$T/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["total"]
print(d["source"], t["energy_upj"], t["busy_ns"]["fragment"], t["busy_ns"]["vertex-tiler"],
      t["busy_ns"]["compute"], d["drm"]["estimated_ns"], d["drm"]["clients_lost"],
      d["opp"]["mhz"], d["opp"]["mv"])
a = [c for c in d["consumers"]]
print("%.6f" % sum(c["share"] for c in a))
PY
)
tap_eq "total: source, energy, busy per engine, nothing estimated or lost, OPP at the end" \
	"drm $E_T 6000000 3000000 7000000 0 0 300 1000" "$(echo "$got" | head -1)"
tap_eq "shares add up to 1" "1.000000" "$(echo "$got" | tail -1)"
tap_eq "no diagnostics" "" "$(cat "$T/d.err")"
tap_eq "Prometheus: B's compute busy seconds, engine as unit, series per name" \
	"hwtel_gpu_busy_seconds_total{comm=\"gpuB\",unit=\"compute\"} 0.007000000" \
	"$(grep "comm=\"gpuB\".*unit=\"compute\"" "$T/p.prom")"

# an idle client open across the next runs: its engines name the columns
"$T/gpuA" -c 'import os, time; os.open("/dev/hwtel-sim-gpu", os.O_RDWR); time.sleep(600)' &
IDLE=$!
trap 'kill $IDLE 2>/dev/null; wait $IDLE 2>/dev/null; drm_down; gpu_cleanup' EXIT
for ((i = 0; i < 100; i++)); do
	grep -q " $IDLE " "$DCLI" && break
	sleep 0.05
done
"$HW" gpu --source drm -t 0.2 > "$T/t.txt" 2>&1
tap_check "text report: title, source and engine columns" sh -c \
	"grep -q 'GPU power consumers' $T/t.txt && grep -q '^Source: DRM' $T/t.txt &&
	 grep -q 'PID.*fragment.*vertex-ti.*compute' $T/t.txt"
"$HW" gpu -j --source drm -w -n 2 -t 0.1 > "$T/w.json" 2>&1
tap_eq "watch: two JSON reports" "2" "$(grep -c '"source": "drm"' "$T/w.json")"

# a process that opens, submits and exits between two reads: not seen
cat > "$T/short.py" <<'PY'
import os, sys
CTL, CLI = sys.argv[1:3]
fd = os.open("/dev/hwtel-sim-gpu", os.O_RDWR)
me = os.getpid()
c = [l.split()[0] for l in open(CLI) if int(l.split()[1]) == me][0]
w = os.open(CTL, os.O_WRONLY)
os.write(w, ("job %s compute 1000000\n" % c).encode())
PY
"$HW" gpu -x , --source auto --sample 3600000 -- "$T/gpuC" "$T/short.py" "$DCTL" "$DCLI" \
	> "$T/c.csv" 2> "$T/c.err"
tap_eq "auto source without Mali files: drm; exit status" "0" "$?"
tap_eq "CSV header: the model's engines" \
	"pid,life,comm,busy_ns_fragment,busy_ns_vertex-tiler,busy_ns_compute,jobs,energy_upj,mean_pw,share,cmdline" \
	"$(head -1 "$T/c.csv")"
tap_eq "a client opened and closed between two reads is not seen (only the total row)" \
	"total,0,,0,0,0,0,0,0.000000,0.000000," "$(tail -n +2 "$T/c.csv")"

"$HW" gpu --source vulkan -t 1 > /dev/null 2> "$T/u.err"
tap_eq "--source vulkan: usage error" "2" "$?"
tap_check "  with a clear message" grep -q "argument --source: expected auto, mali or drm, got 'vulkan'" "$T/u.err"

# xe (Documentation/gpu/drm-usage-stats.rst): per engine drm-cycles-<name>
# (the cycles the client's work took) and drm-total-cycles-<name> (the GPU
# timestamp), no drm-engine-<name>. Between two reads an engine is busy
# (delta cycles / delta total cycles) x the wall time between the reads
# (hwtel.rst). One write moves the timestamp 4000000 and gives fragment
# 4000000 cycles (all of it), compute 2000000 (half), vertex-tiler none,
# all at 200 MHz 900 mV; no other write moves the timestamp. So with W the
# wall time of the one interval that holds the write: fragment
# (4000000 W + 2000000) div 4000000 = W ns, compute
# (2000000 W + 2000000) div 4000000 = (W + 1) div 2 ns.
kill $IDLE 2>/dev/null
wait $IDLE 2>/dev/null
drm_down
modprobe hwtel_sim_drmgpu xe=1
tap_check "xe form: fdinfo has drm-total-cycles and no drm-engine" sh -c \
	"exec 3<>/dev/hwtel-sim-gpu && grep -q '^drm-total-cycles-compute:' /proc/\$\$/fdinfo/3 &&
	 ! grep -q '^drm-engine-' /proc/\$\$/fdinfo/3"
cat > "$T/xe.py" <<'PY'
import os, subprocess, sys, time
T, CTL, CLI = sys.argv[1:4]
hw = os.getppid()
p = subprocess.Popen([T + "/gpuA", T + "/client.py"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
pid = int(p.stdout.readline())
c = [int(l.split()[0]) for l in open(CLI) if int(l.split()[1]) == pid][0]

def reads():
    for l in open(CLI):
        i, q, r = l.split()
        if int(i) == c:
            return int(r)
    return -1

def wait_reads(n):
    for _ in range(3000):
        if reads() >= n:
            return True
        time.sleep(0.01)
    return False

# a first read (the baseline), the write, one more read of it, then exit
ok = wait_reads(1)
n = reads()
fd = os.open(CTL, os.O_WRONLY)
os.write(fd, ("job %d fragment 4000000\njob %d compute 2000000\ntick 4000000\n" % (c, c)).encode())
os.close(fd)
ok = ok and wait_reads(n + 1)
open(T + "/xe.pid", "w").write("%d %d\n" % (pid, ok))
p.stdin.close()
p.wait()
PY
"$HW" gpu -j --source drm --sample 50 -- python3 "$T/xe.py" "$T" "$DCTL" "$DCLI" \
	> "$T/x.json" 2> "$T/x.err"
tap_eq "xe form: exit status, no diagnostics" "0 " "$? $(cat "$T/x.err")"
read -r PX XOK < "$T/xe.pid"
got=$(summary "$T/x.json" "$PX")
read -r _ XF _ <<< "$got"
[[ $XF =~ ^[0-9]+$ ]] || XF=0
tap_check "xe form: the client was read before and after the write; fragment busy > 0" \
	test "$XOK" = 1 -a "$XF" -gt 0
tap_eq "xe form: busy from cycles (fragment W, vertex-tiler 0, compute (W+1)/2), energy exact" \
	"gpuA $XF 0 $(((XF + 1) / 2)) $(upj "$XF:200:900 $(((XF + 1) / 2)):200:900") 0" "$got"
tap_done
