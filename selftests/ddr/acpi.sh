#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hwtel-vm: --acpi-ddr
#
# ACPI discovery of the DSS PMU through the real MMIO path. The guest is
# booted with scripts/vmrun --acpi-ddr: an SSDT (scripts/lab-acpi/ddr.asl)
# declares one device per variant over guest RAM that memmap= reserved, and
# that RAM is a file shared with the host ($HWTEL_ACPI_DDR_RAM; byte 0 is
# guest physical $HWTEL_ACPI_DDR_RAM_BASE). The test plants register values
# by writing the file; the driver (no model loaded) reads them with readq().
# The register offsets come from the register contract
# (/work/shared/reference/ddr-pmu-hw.md), not from the driver.

. "$(dirname "$0")/../lib.sh"
tap_require_lab

RAM=${HWTEL_ACPI_DDR_RAM:-}
RAM_BASE=${HWTEL_ACPI_DDR_RAM_BASE:-}
DRV=/sys/bus/platform/drivers/marvell-cn10k-ddr-pmu
DEVS=/sys/bus/event_source/devices
TMP=$(mktemp -d)
trap 'rmmod marvell_cn10k_ddr_pmu 2>/dev/null; rm -rf "$TMP"' EXIT

# The SSDT's devices: HID, ACPI name, base, and per the contract the
# counter 0 register, the free-running read counter and its width. Arrays,
# not functions: every fork costs under TCG.
VARIANTS="cn10k cn20k odyssey"
declare -A HID=([cn10k]=MRVL000A [cn20k]=MRVL000B [odyssey]=MRVL000C)
declare -A DSS=([cn10k]=DSS0 [cn20k]=DSS1 [odyssey]=DSS2)
declare -A BASE=([cn10k]=0x38000000 [cn20k]=0x38040000 [odyssey]=0x38080000)
declare -A CFG0=([cn10k]=0x8040 [cn20k]=0x20140 [odyssey]=0x20160)
declare -A CNT0=([cn10k]=0x8080 [cn20k]=0x201c0 [odyssey]=0x201c0)
declare -A FRRD=([cn10k]=0x80d8 [cn20k]=0x20258 [odyssey]=0x20258)
declare -A FRBITS=([cn10k]=48 [cn20k]=64 [odyssey]=64)
# the value planted in the generic counters during a count
declare -A GEN=([cn10k]=1000003 [cn20k]=2000029 [odyssey]=300000000007)
declare -A PMU=()
for v in $VARIANTS; do
	printf -v "PMU[$v]" 'mrvl_ddr_pmu_%x' "${BASE[$v]}"
done

tap_plan 38

if [ -z "$RAM" ] || [ ! -f "$RAM" ]; then
	tap_fail "the guest has the shared RAM file of vmrun --acpi-ddr" "HWTEL_ACPI_DDR_RAM='$RAM'"
	exit 1
fi

# plant ADDR VALUE...: store each 64-bit VALUE (an integer; negative ones
# are the top half) little-endian at guest physical ADDR, one pwrite each,
# all in one process.
plant()
{
	local args=()

	while [ $# -ge 2 ]; do
		args+=("$(($1 - RAM_BASE))")
		printf -v "args[${#args[@]}]" '%016x' "$2"
		shift 2
	done
	perl -e 'open(my $f, "+<", shift) or die "$!\n";
		while (@ARGV) {
			my ($off, $hex) = splice(@ARGV, 0, 2);
			my $b = pack("V2", hex(substr($hex, 8)), hex(substr($hex, 0, 8)));
			defined(sysseek($f, $off, 0)) && syswrite($f, $b) == 8 or die "$!\n";
		}' "$RAM" "${args[@]}"
}
# peek ADDR...: print the 64-bit value at each ADDR as read from the file
peek()
{
	local args=() a

	for a in "$@"; do
		args+=("$((a - RAM_BASE))")
	done
	perl -e 'open(my $f, "<", shift) or die "$!\n";
		for my $off (@ARGV) {
			sysseek($f, $off, 0) && sysread($f, my $b, 8) == 8 or die "$!\n";
			my ($lo, $hi) = unpack("V2", $b);
			printf("%08x%08x\n", $hi, $lo);
		}' "$RAM" "${args[@]}"
}
export -f plant peek
export RAM RAM_BASE

# Coherence of the two views (9p pwrite vs QEMU's shared mapping), before
# the driver claims the range: /dev/mem may still read it then (the debug
# kernel has no /dev/mem; the counts below prove the same direction, the
# CFG check the other one).
plant $((BASE[cn10k] + 0x100)) 0x1122334455667788
if [ -c /dev/mem ]; then
	got=$(dd if=/dev/mem bs=8 count=1 skip=$((BASE[cn10k] + 0x100)) iflag=skip_bytes status=none 2>&1 | od -An -tx8 | tr -d ' ')
	tap_eq "a value planted in the file is what guest physical memory holds" 1122334455667788 "$got"
else
	tap_skip "a value planted in the file is what guest physical memory holds" "no /dev/mem"
fi

grep -q '^marvell_cn10k_ddr_pmu ' /proc/modules && rmmod marvell_cn10k_ddr_pmu
range()
{
	printf '%x-%x : %s:00' "${BASE[$1]}" $((BASE[$1] + 0x2ffff)) "${HID[$1]}"
}
for v in $VARIANTS; do
	h=${HID[$v]}
	tap_eq "$v: ACPI device $h:00 exists" "\\_SB_.${DSS[$v]}" \
		"$(cat /sys/bus/acpi/devices/"$h":00/path 2>/dev/null)"
	tap_eq "$v: its memory resource is in /proc/iomem, in the reserved range" 1 \
		"$(grep -cF "$(range "$v")" /proc/iomem)"
	ma=$(cat /sys/bus/platform/devices/"$h":00/modalias 2>/dev/null)
	tap_eq "$v: platform device modalias" "acpi:$h:" "$ma"
	tap_eq "$v: the modalias resolves to the driver" marvell_cn10k_ddr_pmu \
		"$(modprobe -R "$ma" 2>&1)"
done
tap_check "modprobe \$(cat modalias) of ${HID[cn10k]}:00 loads the driver" \
	modprobe "$(cat /sys/bus/platform/devices/"${HID[cn10k]}":00/modalias)"
for v in $VARIANTS; do
	h=${HID[$v]}
	p=${PMU[$v]}
	tap_eq "$v: the driver is bound to $h:00" marvell-cn10k-ddr-pmu \
		"$(basename "$(readlink /sys/bus/platform/devices/"$h":00/driver)")"
	tap_eq "$v: it claimed the resource" 2 "$(grep -cF "$(range "$v")" /proc/iomem)"
	tap_eq "$v: PMU $p named after the resource, identifier $v" "$v" \
		"$(cat "$DEVS/$p/identifier" 2>/dev/null)"
done

perf list pmu 2>/dev/null > "$TMP/perf-list"
hwtel list > "$TMP/hwtel-list" 2>&1
for v in $VARIANTS; do
	p=${PMU[$v]}
	tap_eq "$v: perf list shows $p/ddr_ddr_reads/" 1 \
		"$(grep -cE "^ +$p/ddr_ddr_reads/ " "$TMP/perf-list")"
	tap_eq "$v: hwtel list shows $p" 1 "$(grep -cw "$p" "$TMP/hwtel-list")"
done

# count: perf stat of ddr_cam_read (a generic counter: all eight are
# planted, so whichever the driver picks) and of ddr_ddr_reads (the fixed
# read counter) on every variant at once, while a child plants the values
# after the events started and reads back the eight CFG registers: the
# driver's writes through its mapping, seen in the file. Generic counters start from 0 (CN10K reads the
# start value, Odyssey and CN20K restart from 0: plant 0 either way); the
# read counter starts 5 below its wrap and ends at 7: 12 counted.
count()
{
	local v n b n0=0 evs='' before=() during=() cfgs=()

	for v in $VARIANTS; do
		b=${BASE[$v]}
		for n in 0 1 2 3 4 5 6 7; do
			before+=($((b + CNT0[$v] + 8 * n)) 0)
			during+=($((b + CNT0[$v] + 8 * n)) "${GEN[$v]}")
			cfgs+=($((b + CFG0[$v] + 8 * n)))
		done
		if [ "${FRBITS[$v]}" -eq 64 ]; then
			before+=($((b + FRRD[$v])) -5)
		else
			before+=($((b + FRRD[$v])) $(((1 << 48) - 5)))
		fi
		during+=($((b + FRRD[$v])) 7)
		evs+="${evs:+,}${PMU[$v]}/ddr_cam_read/,${PMU[$v]}/ddr_ddr_reads/"
	done
	plant "${before[@]}"
	perf stat -a -x, -o "$TMP/stat" -e "$evs" -- bash -c 'plant "${@:2:$1}"; peek "${@:$1+2}" > "$0"' "$TMP/cfg" "${#during[@]}" "${during[@]}" "${cfgs[@]}" \
		>/dev/null 2>&1 || { echo perf-failed; return; }
	grep -v '^#' "$TMP/stat" | sed '/^$/d' | cut -d, -f1,3
	# per variant: how many CFG(n) hold enable (bit 63) plus event 16's bit
	for v in $VARIANTS; do
		echo "$v: $(sed -n "$((n0 + 1)),$((n0 + 8))p" "$TMP/cfg" | grep -c '^8000000000008000$')"
		n0=$((n0 + 8))
	done
}
expect()
{
	local v

	for v in $VARIANTS; do
		echo "${GEN[$v]},${PMU[$v]}/ddr_cam_read/"
		echo "12,${PMU[$v]}/ddr_ddr_reads/"
	done
	for v in $VARIANTS; do
		echo "$v: 1"
	done
}

tap_eq "planted deltas counted exactly (generic and fixed read counter, across the wrap); one CFG programmed with enable and event 16" \
	"$(expect)" "$(count)"

# unbind and bind one device
h=${HID[cn20k]}
p=${PMU[cn20k]}
echo "$h:00" > "$DRV/unbind"
tap_check "cn20k: unbind removes $p" test ! -e "$DEVS/$p"
tap_check "cn10k and odyssey stay" test -d "$DEVS/${PMU[cn10k]}" -a -d "$DEVS/${PMU[odyssey]}"
echo "$h:00" > "$DRV/bind"
tap_check "cn20k: bind registers $p again" test -d "$DEVS/$p"

# removal and reload by modalias
tap_check "rmmod marvell_cn10k_ddr_pmu" rmmod marvell_cn10k_ddr_pmu
n=0
for v in $VARIANTS; do
	test -e "$DEVS/${PMU[$v]}" && n=$((n + 1))
done
tap_eq "no PMU left after rmmod" 0 "$n"
tap_check "modprobe by the Odyssey modalias reloads it" \
	modprobe "$(cat /sys/bus/platform/devices/"${HID[odyssey]}":00/modalias)"
n=0
for v in $VARIANTS; do
	test -d "$DEVS/${PMU[$v]}" && n=$((n + 1))
done
tap_eq "all three PMUs are back" 3 "$n"
tap_eq "after bind and reload the planted deltas are counted exactly" \
	"$(expect)" "$(count)"
tap_done
