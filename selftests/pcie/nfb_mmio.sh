#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The real MMIO path (issue 10): a PCIE_TELEMETRY_MI register image planted
# in the BAR of the lab's ivshmem-plain device (scripts/vmrun --ivshmem),
# attached with 'hwtel nfb attach --fdt' from a device tree built here, read
# through readl() by perf stat and 'hwtel pcie -t 0', exactly. The refusals
# of ATTACH (errno through the tool's message and exit status), detach,
# removal of the PCI function while attached and with an event open.
# ATTACH takes only functions bound to nfb: the lab has no nfb, so the
# function is handed to pci-stub and the driver loaded with
# pci_drivers=nfb,pci-stub, after a check that the default refuses it.
#
# The image is passive memory: STATUS reads what was planted (0: never
# BUSY), so SNAPSHOT completes at once and the window shows exactly the
# planted counters; COMMAND just keeps the last word written. Counters move
# only when the test plants new values.

. "$(dirname "$0")/pcie_lib.sh"

# the tool on PATH: the build's in the lab, /usr/bin/hwtel in the package test
HW=$(command -v hwtel)
T=$(mktemp -d)
PCI=$(pcie_ivshmem)
cleanup()
{
	[ -n "$PCI" ] && [ ! -e "/sys/bus/pci/devices/$PCI" ] && echo 1 > /sys/bus/pci/rescan
	modprobe -r ndk_pcie_tlm 2>/dev/null
	[ -n "$PCI" ] && pcie_bind "$PCI" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

tap_plan 18
if [ -z "$PCI" ] || ! command -v dtc > /dev/null; then
	for i in $(seq 18); do
		tap_skip "no ivshmem-plain device (scripts/vmrun --ivshmem) or no dtc"
	done
	tap_done
fi
RES=/sys/bus/pci/devices/$PCI/resource2
NAME=ndk_pcie_tlm_$(echo "$PCI" | tr ':.' '__')_bar2_20000

# plant OFF [key=value...]: registers of the block at BAR offset OFF
#   magic= version= status= : those registers; cnt=I:V,...: counter entries
cat > "$T/plant.py" <<'EOF'
import mmap, os, struct, sys
res, base = sys.argv[1], int(sys.argv[2], 0)
fd = os.open(res, os.O_RDWR | os.O_SYNC)
m = mmap.mmap(fd, 1 << 20, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
def w32(off, v):
    m[base + off:base + off + 4] = struct.pack("<I", v & 0xffffffff)
def cnt(i, v):
    w32(0x8000 + 8 * i, v)
    w32(0x8000 + 8 * i + 4, v >> 32)
regs = {"magic": 0x0, "version": 0x4, "status": 0x24}
for a in sys.argv[3:]:
    k, _, v = a.partition("=")
    if k == "layout":
        # contract register map: 1 endpoint, 1 DMA port, 2 probes;
        # PCIe probe 2 buses x 2 regions + 14 BRAKE = 31 channels;
        # DMA probe 2 buses x 1 region = 15 channels; 46 per endpoint,
        # 64 entries of 48 bits; window at 0x8000
        w32(0x00, 0x50544C4D)
        w32(0x04, 0x00020000)
        w32(0x08, 1 | 1 << 8 | 2 << 16)
        w32(0x0C, 64 | 48 << 16 | 46 << 24)
        w32(0x10, 31 | 2 << 8 | 2 << 16 | 14 << 24)
        w32(0x14, 15 | 2 << 8 | 1 << 16)
        w32(0x18, 4096 | 4 << 16)
        w32(0x1C, 0x8000)
        w32(0x24, 0)
        w32(0x2C, 2 | 2 << 8 | 1 << 16 | 1 << 24)
        w32(0x30, 32 | 32 << 16)
        w32(0x34, 4 | 2 << 8)
        w32(0x38, 256 | 1024 << 16)
        w32(0x3C, 32 | 32 << 16)
        w32(0x40, 1 | 2 << 3 | 1 << 9)
        w32(0x80, 200 | 100 << 16)
        w32(0xC0, 900 | 800 << 16)
        for i in range(64):
            cnt(i, 0)
    elif k == "cnt":
        for iv in v.split(","):
            i, x = iv.split(":")
            cnt(int(i), int(x, 0))
    else:
        w32(regs[k], int(v, 0))
m.flush()
EOF
plant()
{
	python3 "$T/plant.py" "$RES" "$@"
}

# V(i): the planted totals; entry 1 sits 5 below the 48-bit wrap
V=(1000 $(( (1 << 48) - 5 )) 0x100000007)
cnts="0:1000,1:$(( (1 << 48) - 5 )),2:0x100000007"
for i in $(seq 3 45); do
	V[$i]=$(( (i % 3) * (1 << 32) + 1000 + 7 * i ))
	cnts+=",$i:${V[$i]}"
done
plant 0x20000 layout cnt="$cnts"
plant 0x40000 layout magic=0x12345678
plant 0x60000 layout version=0x00030001
plant 0xa0000 layout status=1

# one MI bus per BAR, as a card FDT has it; its #address-cells and
# #size-cells give the cells of reg (<1> and <1> as the NDK firmware
# declares them; mi_bus1: <2> and <1>); nodes in this order:
# 0 good, 1 bad MAGIC, 2 bad VERSION, 3 past the BAR end, 4 misaligned,
# 5 on a BAR the function does not have (u64 + u32 reg), 6 too small,
# 7 BUSY never falls
cat > "$T/card.dts" <<'EOF'
/dts-v1/;
/ {
	firmware {
		mi_bus0 {
			#address-cells = <1>;
			#size-cells = <1>;
			compatible = "netcope,bus,mi";
			resource = "PCI0,BAR2";
			pcie_telemetry@20000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x20000 0x10000>;
				version = <0x00010000>;
				pcie-endpoints = <1>;
			};
			pcie_telemetry@40000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x40000 0x10000>;
			};
			pcie_telemetry@60000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x60000 0x10000>;
			};
			pcie_telemetry@f8000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0xf8000 0x10000>;
			};
			pcie_telemetry@20002 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x20002 0x10000>;
			};
		};
		mi_bus1 {
			#address-cells = <2>;
			#size-cells = <1>;
			compatible = "netcope,bus,mi";
			resource = "PCI0,BAR1";
			pcie_telemetry@0 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x0 0x0 0x1000>;
			};
		};
		mi_bus2 {
			#address-cells = <1>;
			#size-cells = <1>;
			compatible = "netcope,bus,mi";
			resource = "PCI0,BAR2";
			pcie_telemetry@80000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0x80000 0x80>;
			};
			pcie_telemetry@a0000 {
				compatible = "cesnet,ofm,pcie_telemetry_mi";
				reg = <0xa0000 0x10000>;
			};
		};
	};
};
EOF
dtc -I dts -O dtb -o "$T/card.dtb" "$T/card.dts" 2> "$T/dtc.err" ||
	tap_diag "$(cat "$T/dtc.err")"
chmod 755 "$T"
chmod 644 "$T/card.dtb"
F=(--fdt "$T/card.dtb" --pci "$PCI")
# only functions nfb has bound: none bound, then pci-stub bound (default
# pci_drivers); pci-stub is built in on the debug kernel, a module elsewhere
modprobe ndk_pcie_tlm
modprobe pci-stub
pcie_bind "$PCI"
out1=$("$HW" nfb attach "${F[@]}" -i 0 2>&1)
rc1=$?
pcie_bind "$PCI" pci-stub
out2=$("$HW" nfb attach "${F[@]}" -i 0 2>&1)
rc2=$?
tap_diag "$out2"
tap_eq "not bound to nfb (none, then pci-stub): ENODEV, exit 1, named; no instance" \
	"1 1 1 1 0" "$rc1 $(grep -c 'the function has no driver: ATTACH takes only functions nfb has bound' <<< "$out1") $rc2 $(grep -c 'the function is bound to pci-stub, not nfb' <<< "$out2") $(ls /sys/bus/event_source/devices | grep -c "^$NAME$")"
modprobe -r ndk_pcie_tlm
modprobe ndk_pcie_tlm pci_drivers=nfb,pci-stub
# the function's runtime PM usage count: an attached window holds it awake
PMU_USAGE=/sys/bus/pci/devices/$PCI/power/runtime_usage
usage0=$(cat "$PMU_USAGE" 2>/dev/null)

"$HW" nfb attach "${F[@]}" -i 0 > "$T/att.out" 2>&1
tap_eq "attach the planted block" "0 $NAME: attached $PCI BAR2 0x20000+0x10000" \
	"$? $(cat "$T/att.out")"
"$HW" nfb list "${F[@]}" > "$T/list.out" 2>&1
tap_eq "list: 8 nodes, node 0 attached" \
	"8 0 /firmware/mi_bus0/pcie_telemetry@20000 PCI0,BAR2 0x20000 0x10000 $PCI $NAME attached" \
	"$(wc -l < "$T/list.out") $(head -n1 "$T/list.out")"

if [ -n "$usage0" ]; then
	tap_eq "attached: a runtime PM reference on the function (usage $usage0 + 1)" \
		"$((usage0 + 1))" "$(cat "$PMU_USAGE")"
else
	tap_skip "runtime PM reference: this kernel has no runtime PM (CONFIG_PM)"
fi

hwtel_n=$("$HW" list 2>&1 | grep -c "$NAME")
perf_n=$(perf list pmu 2>/dev/null | grep -c "$NAME/pcie_cycles,ep=")
tap_eq "named in hwtel list and perf list" "1 1" "$((hwtel_n > 0)) $((perf_n > 0))"

# totals since the probe = the planted counters (the driver starts from 0)
"$HW" pcie -d "$NAME" -t 0 -j > "$T/tot.json" 2> "$T/tot.err"
tap_check "hwtel pcie -t 0 reads every planted counter exactly" python3 - "$T/tot.json" "${V[@]}" <<'EOF'
import json, sys
ep = json.load(open(sys.argv[1]))["data"]["endpoints"][0]
V = [int(x, 0) for x in sys.argv[2:]]
b = ep["buses"]
rq, rc = b["PTC -> PCIe (RQ)"], b["PCIe -> PTC (RC)"]
up, dn = b["DMA0 -> PTC (UP)"], b["PTC -> DMA0 (DOWN)"]
f = ["words", "backpressure", "transactions", "mvb", "mvb_backpressure", "items"]
got = [ep["pcie_cycles"]] + [rq[k] for k in f] + rq["regions"] + \
      [rc[k] for k in f] + rc["regions"] + ep["brakes"][:6] + ep["hists"][0] + ep["hists"][1] + \
      [ep["dma_cycles"]] + [up[k] for k in f] + up["regions"] + [dn[k] for k in f] + dn["regions"]
assert got == V, [(i, g, v) for i, (g, v) in enumerate(zip(got, V)) if g != v]
EOF
# the planted counts are not a physical picture (shares past 100 %): only
# that the text report of the same totals is made
"$HW" pcie -d "$NAME" -t 0 > "$T/tot.txt" 2>&1
tap_eq "the text report of the totals is made" "0 1" \
	"$? $(grep -c '^Totals since the last clear' "$T/tot.txt")"

# perf stat: the counts of new planted values; entry 1 wraps at 48 bits
perf stat -a -x, -o "$T/stat.csv" -e "$NAME/pcie_cycles,ep=0/" \
	-e "$NAME/words,ep=0,bus=0/" -e "$NAME/stall,ep=0,bus=1/" -- \
	python3 "$T/plant.py" "$RES" 0x20000 cnt=0:123457789,1:10,10:$(( V[10] + 0xfffffffff )) \
	2> "$T/stat.err"
tap_eq "perf stat counts the planted deltas through readl (one across the wrap)" \
	"123456789 15 $((0xfffffffff))" \
	"$(grep -v '^#' "$T/stat.csv" | grep . | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//')"

"$HW" pcie -d "$NAME" -c > /dev/null 2>&1 && "$HW" pcie -d "$NAME" -t 0 -j > "$T/clr.json"
tap_check "after hwtel pcie -c the totals are 0 (software clear)" python3 -c '
import json, sys
ep = json.load(open(sys.argv[1]))["data"]["endpoints"][0]
assert ep["pcie_cycles"] == 0 and ep["dma_cycles"] == 0 and sum(ep["brakes"]) == 0, ep
' "$T/clr.json"

# refusals: message, exit status, dmesg line
refuse()
{
	local desc=$1 idx=$2 want=$3 st=$4 out rc

	out=$("$HW" nfb attach "${F[@]}" -i "$idx" 2>&1)
	rc=$?
	if [ "$rc" = "$st" ] && [[ $out == *"$want"* ]]; then
		tap_ok "$desc"
	else
		tap_fail "$desc" "exit $rc: $out"
	fi
}
mark=$(dmesg_mark)
refuse "bad MAGIC refused (EPROTO), dmesg names it" 1 "no usable PCIE_TELEMETRY_MI block" 1
# what a window that is not the block holds is none of the log's business:
# repeated ATTACHes must not read a foreign BAR out word by word
dmesg_since "$mark" > "$T/magic.log"
tap_eq "dmesg: the MAGIC does not match, and the word read is not shown" "1 0" \
	"$(grep -c 'MAGIC does not match' "$T/magic.log") $(grep -ci '12345678' "$T/magic.log")"
refuse "bad VERSION refused (EPROTO)" 2 \
	"no usable PCIE_TELEMETRY_MI block" 1
# try ARGS...: "STATUS:KEY" with KEY the part of the message that names why
KEYS='BUSY stayed set|past the end of the BAR|smaller than 0x100 bytes|no memory BAR|no such PCI function|CAP_SYS_ADMIN'
try()
{
	local out rc

	out=$("$@" 2>&1)
	rc=$?
	tap_diag "$out" >&2
	echo "$rc:$(echo "$out" | grep -oE "$KEYS" | head -n1)"
}
got="$(try "$HW" nfb attach "${F[@]}" -i 3) $(try "$HW" nfb attach "${F[@]}" -i 4)
$(try "$HW" nfb attach "${F[@]}" -i 5) $(try "$HW" nfb attach "${F[@]}" -i 6)
$(try "$HW" nfb attach "${F[@]}" -i 7)
$(try "$HW" nfb attach --fdt "$T/card.dtb" --pci 0000:00:1f.7 -i 0)
$(try setpriv --reuid=65534 --regid=65534 --clear-groups "$HW" nfb attach "${F[@]}" -i 0)"
tap_eq "ERANGE, EINVAL (misaligned), ENXIO, EINVAL (small), ETIMEDOUT, ENODEV, EPERM: named, exit status" \
	"1:past the end of the BAR 1:smaller than 0x100 bytes 1:no memory BAR 1:smaller than 0x100 bytes 1:BUSY stayed set 1:no such PCI function 4:CAP_SYS_ADMIN" \
	"$(echo $got)"
grep -q "version 3.1 not supported" <(dmesg_since "$mark") || tap_diag "no VERSION line in dmesg"

# detach, attach again, then removal of the function while attached
"$HW" nfb detach "${F[@]}" -i 0 > "$T/det.out" 2>&1
tap_eq "detach, the runtime PM reference dropped" "0 $NAME: detached 0 ${usage0:-none}" \
	"$? $(cat "$T/det.out") $(ls /sys/bus/event_source/devices | grep -c "^$NAME$") $(cat "$PMU_USAGE" 2>/dev/null || echo none)"
"$HW" nfb attach "${F[@]}" -i 0 > /dev/null 2>&1
perf stat -a -x, -o "$T/rm.csv" -e "$NAME/pcie_cycles,ep=0/" -- \
	bash -c "echo 1 > /sys/bus/pci/devices/$PCI/remove" 2> "$T/rm.err"
rc=$?
gone=$(ls /sys/bus/pci/devices | grep -c "^$PCI$")
echo 1 > /sys/bus/pci/rescan
pcie_bind "$PCI" pci-stub
# Since 6.15 the removal revokes the event and the PMU goes at once. Before
# it, the removed device's PMU stays registered, frozen, until an attach or
# probe finds no perf event of the module left (the core may use a PMU after
# its event's ->destroy(); the module reference is its last use), or the
# module is unloaded: the attach below reaps it.
left=1
kver_ge 6.15 && left=0
# its sysfs flags file must not read the unmapped window: ENODEV, or gone
# with the device's attributes (6.12)
fl=-
if [ $left = 1 ]; then
	out=$(cat "/sys/bus/event_source/devices/$NAME/flags" 2>&1)
	tap_diag "flags of the removed function's PMU: $out"
	fl=$(grep -cE 'No such (device|file)' <<< "$out")
fi
tap_eq "removal of the function with an event open, then its close: PMU listed $left, its flags ENODEV" \
	"0 0 $left $([ $left = 1 ] && echo 1 || echo -)" "$rc $gone $(ls /sys/bus/event_source/devices | grep -c "^$NAME$") $fl"
"$HW" nfb attach "${F[@]}" -i 0 > "$T/re.out" 2>&1
tap_eq "after a rescan the function attaches again" \
	"0 $NAME: attached $PCI BAR2 0x20000+0x10000" "$? $(cat "$T/re.out")"
# the function's driver goes: the instance ends before its remove runs
mark=$(dmesg_mark)
echo "$PCI" > /sys/bus/pci/drivers/pci-stub/unbind
tap_eq "unbinding the function's driver detaches it" "0 1" \
	"$(ls /sys/bus/event_source/devices | grep -c "^$NAME$") $(dmesg_since "$mark" | grep -c "$NAME: detached, the PCI function loses its driver")"
pcie_bind "$PCI" pci-stub
"$HW" nfb attach "${F[@]}" -i 0 > "$T/re2.out" 2>&1
tap_diag "$(cat "$T/re2.out")"
modprobe -r ndk_pcie_tlm
tap_eq "module unload ends the attached instance" "1 0" \
	"$(grep -c "^$NAME: attached" "$T/re2.out") $(ls /sys/bus/event_source/devices | grep -c "^ndk_pcie_tlm_")"
tap_done
