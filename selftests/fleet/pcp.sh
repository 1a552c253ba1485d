#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fleet monitoring on the models, with the monitoring systems' own tools:
#  - pmdahwtel under dbpmda: every metric has its help text and the right
#    semantics (counters are PCP counters), and every PCIe value equals what
#    the test injected into the idle model (the rest stays 0), the endpoint
#    state what the model's parameters and its load state give;
#  - restarted with another DDR event first, pmdahwtel keeps each instance id
#    (its instance domains saved under a private PCP_VAR_DIR), and a name
#    not seen for 30 days is culled from them, a more recent one kept;
#  - pmdahwtel under a private pmcd (unix socket, files under /tmp): pminfo -f
#    sees exact DDR counts injected after the agent opened its groups (and
#    pmdaperfevent with the shipped perfevent-hwtel.conf the same ones), a
#    STATUS flag set on the model, and the agent finds a reloaded model;
#    pmval computes rates of the counters and the shipped derived metrics
#    give the seed profile's shares, and all of them bind;
#  - the Prometheus exporter unit: systemd-analyze verify, then its exact
#    ExecStart (paths and interval substituted) writes textfiles that pass a
#    strict exposition-format check and hold the injected counts;
#  - with two PCIe telemetry blocks (the model's instances=2) the pcie
#    exporter's one textfile holds both PMUs' series, each with its own
#    counts; a block bound while it runs joins the file, one unbound drops
#    out of it while the others go on; the last one unbound, the exporter
#    removes its file and waits, and the block bound again comes back.

. "$(dirname "$0")/../tool/tool_lib.sh"
. "$(dirname "$0")/fleet_lib.sh"

PLAN=34
PCP_B=$HWTEL_BUILD/tools/pcp
AGENT=$PCP_B/pmdahwtel
DOM=$(sed -n 's/^#define HWTEL \([0-9]*\).*/\1/p' "$HWTEL_SRC/tools/pcp/domain.h")
DERIVED=$HWTEL_SRC/tools/pcp/hwtel.derived
P=$PCIE_PMU
D=$(ddr_pmu_of odyssey)
DDR_DBG=$SIMDBG/$D

tool_need_modules $PLAN hwtel_sim_pcie ndk_pcie_tlm hwtel_sim_ddr marvell_cn10k_ddr_pmu
for x in "$AGENT" /usr/bin/dbpmda /usr/bin/pminfo /usr/bin/pmval /usr/lib/pcp/bin/pmcd; do
	if [ ! -x "$x" ]; then
		tap_plan $PLAN
		tap_skip_rest "$x missing (scripts/install-deps, make tools)"
	fi
done
tap_plan $PLAN

# --- the model: idle, known layout, a clear, then known counts ----------
# item_bytes 8, 200 tags and 600 FIFO words: the gauges start at capacity.
pcie_up profile=idle item_bytes=8 tag_capacity=200 stfifo_capacity=600 ||
	{ tap_fail "load the PCIe model and driver"; tap_done; }
ddr_up odyssey || { tap_fail "load the DDR model and driver"; tap_done; }
"$HW" pcie -c > /dev/null
tool_inject_known

# --- 1-4: dbpmda --------------------------------------------------------
# The agent keeps its instance domains under $PCP_VAR_DIR/config/pmda: a
# private one here, for this agent and the one pmcd runs below.
mkdir -p "$T/var/config/pmda"
mapfile -t metrics < <(pminfo -n "$PCP_B/root" hwtel)
{
	echo "open pipe /usr/bin/env PCP_VAR_DIR=$T/var $AGENT -d $DOM -l $T/db-agent.log -e ddr_cam_read"
	for ((i = 0; i < 8; i++)); do
		echo "instance $DOM.$i"
	done
	for m in "${metrics[@]}"; do
		echo "desc $m"
		echo "text $m"
	done
	echo "fetch ${metrics[*]}"
} > "$T/db.in"
timeout 60 dbpmda -q 50 -n "$PCP_B/root" -e < "$T/db.in" > "$T/db.out" 2>&1
# Every value, from the injections and the model parameters (PCIE_STATUS at
# load: link up, MPS 512, MRRS 4096, extended tag on, 10-bit tag off, RCB
# 64; tags and FIFO at capacity, lowest = now); DDR: 0 right after the
# agent opened its groups.
E=$P/ep0
{
	echo "hwtel.pcie.ep.pcie_cycles $E 4000000"
	echo "hwtel.pcie.ep.dma_cycles $E 2000000"
	for b in RQ RC UP0 DOWN0; do
		words=0 stall=0 frames=0 items=0 mvb=0 mvbst=0 reg=0 clk=4000000 nreg=4
		case $b in
		RQ) words=1000 items=800 ;;
		RC) frames=5 ;;
		UP0) stall=77 mvb=9 clk=2000000 nreg=2 ;;
		DOWN0) mvbst=3 reg=12 clk=2000000 nreg=2 ;;
		esac
		echo "hwtel.pcie.bus.words $E/$b $words"
		echo "hwtel.pcie.bus.stall $E/$b $stall"
		echo "hwtel.pcie.bus.frames $E/$b $frames"
		echo "hwtel.pcie.bus.items $E/$b $items"
		echo "hwtel.pcie.bus.bytes $E/$b $((items * 8))"
		echo "hwtel.pcie.bus.clock_cycles $E/$b $clk"
		echo "hwtel.pcie.bus.region_cycles $E/$b $reg"
		echo "hwtel.pcie.bus.regions $E/$b $nreg"
		if [ $nreg = 2 ]; then	# the DMA buses have an MVB: requests are its items
			echo "hwtel.pcie.bus.mvb_items $E/$b $mvb"
			echo "hwtel.pcie.bus.mvb_stall $E/$b $mvbst"
			echo "hwtel.pcie.bus.requests $E/$b $mvb"
		else
			echo "hwtel.pcie.bus.requests $E/$b $frames"
		fi
		for ((r = 0; r < nreg; r++)); do
			echo "hwtel.pcie.region.cycles $E/$b/region$r $([ $b$r = DOWN01 ] && echo 12 || echo 0)"
		done
	done
	for s in no_free_tag tag_not_ready no_completion_room no_completion_header \
		 mfb_stalled_to_dma mvb_stalled_to_dma endpoint_not_ready; do
		echo "hwtel.pcie.stop.cycles $E/$s $([ $s = mfb_stalled_to_dma ] && echo 9 || echo 0)"
	done
	for i in 0 1 2 3; do
		echo "hwtel.pcie.band.cycles $E/tags/band$i $([ $i = 2 ] && echo 33 || echo 0)"
		echo "hwtel.pcie.band.cycles $E/stfifo/band$i $([ $i = 3 ] && echo 44 || echo 0)"
	done
	for kv in link_up=1 max_payload=512 max_read_request=4096 ext_tag=1 tag_10b=0 rcb=64 \
		  tags_free=200 tags_free_lowest=200 stfifo_free=600 stfifo_free_lowest=600; do
		echo "hwtel.pcie.ep.${kv%=*} $E ${kv#*=}"
	done
	for kv in busy=0 lost_deltas=0 readout_overrun=0 state_valid=1; do
		echo "hwtel.pcie.device.${kv%=*} $P ${kv#*=}"
	done
	for m in reads writes read_bytes write_bytes; do
		echo "hwtel.ddr.$m $D 0"
	done
	echo "hwtel.ddr.event.count $D/ddr_cam_read 0"
	echo "hwtel.ddr.event.exact $D/ddr_cam_read 1"
} > "$T/db.want"
# checks, one per line: ok<TAB>desc or not ok<TAB>desc<TAB>detail
tap_lines()
{
	local want=$1 n=0 st desc detail

	shift
	while IFS=$'\t' read -r st desc detail; do
		n=$((n + 1))
		if [ "$st" = ok ]; then
			tap_ok "$desc"
		else
			tap_fail "$desc" "$detail"
		fi
	done < <("$@" 2>&1)
	for ((; n < want; n++)); do
		tap_fail "check $((n + 1)) of $*" "the checker stopped early"
	done
}
tap_lines 4 python3 "$FLEET/dbpmda.py" "$T/db.out" check "$T/db.want" "${#metrics[@]}"

# --- 5: instance ids survive a restart that discovers in another order ---
# Two more starts on the saved domains: the first counts ddr_cam_read
# alone, the second ddr_hif_rd_access ahead of it; ddr_cam_read keeps id 0.
ids()	# ids EVENTS: "id name" of the DDR event indom, from dbpmda
{
	printf 'open pipe /usr/bin/env PCP_VAR_DIR=%s %s -d %s -l %s -e %s\ninstance %s.7\n' \
		"$T/var" "$AGENT" $DOM "$T/ids-agent.log" "$1" $DOM |
		timeout 60 dbpmda -q 50 -n "$PCP_B/root" -e > "$T/ids-$1.out" 2>&1
	sed -n 's/.*inst: \([0-9]*\) name: "\([^"]*\)".*/\1 \2/p' "$T/ids-$1.out"
}
ids ddr_cam_read > "$T/ids1"
ids ddr_hif_rd_access,ddr_cam_read > "$T/ids2"
# What dbpmda and the agent said, when a start gave no instance (seen
# once on a loaded host; kept for the next time).
if [ ! -s "$T/ids1" ] || [ ! -s "$T/ids2" ]; then
	for f in "$T"/ids-*.out "$T/ids-agent.log"; do
		tap_diag "$f: $(tail -n 20 "$f" 2>&1)"
	done
fi
tap_eq "restarted with another DDR event first, each instance keeps its id (dbpmda instance)" \
	"0 $D/ddr_cam_read
--
0 $D/ddr_cam_read
1 $D/ddr_hif_rd_access" "$(cat "$T/ids1"; echo --; sort -n "$T/ids2")"

# --- 6: names of PMUs gone for good are culled, recent ones kept --------
# The saved domain is PCP's own file ("inst stamp name" lines after a
# header; the stamp: when the instance was last seen). Two names of PMUs
# not on this host are planted in it: one last seen 31 days ago, past the
# agent's 30 days (HWTEL_KEEP_SECONDS in pmdahwtel.c), one 29 days ago.
# A restart culls the first only; every other instance keeps its id.
CF=$T/var/config/pmda/$DOM.7
now=$(date +%s)
{
	cat "$CF"
	echo "7 $((now - 31 * 86400)) mrvl_ddr_pmu_1000/ddr_cam_read"
	echo "8 $((now - 29 * 86400)) mrvl_ddr_pmu_2000/ddr_cam_read"
} > "$T/cf" && cp "$T/cf" "$CF"
ids ddr_cam_read > /dev/null
tap_eq "a name not seen for 31 days leaves the saved domain, one of 29 days stays, ids kept" \
	"0 $D/ddr_cam_read
1 $D/ddr_hif_rd_access
8 mrvl_ddr_pmu_2000/ddr_cam_read" "$(awk 'NR > 1 { print $1, $3 }' "$CF" | sort -n)"

# --- 7: the domain -------------------------------------------------------
# PCP's stdpmid (Make.stdpmid) gives 385-510 to end-user PMDAs, allocated
# from the top down; 1-384 are for PMDAs of PCP's packages.
tap_eq "domain.h: the domain is in PCP's end-user range 385-510 and not one of stdpmid.pcp's" \
	"in range, unassigned" \
	"$([ "$DOM" -ge 385 ] && [ "$DOM" -le 510 ] && echo "in range" || echo "$DOM out of range"), $(
	   awk -v d="$DOM" '$2 == d { print "assigned to " $1; f = 1 } END { if (!f) print "unassigned" }' \
		/var/lib/pcp/pmns/stdpmid.pcp)"

# --- 8-13: a private pmcd, pminfo -------------------------------------
PD=$T/pcp
mkdir -p "$PD/log" "$PD/run" "$PD/tmp"
# pmdaperfevent beside it, with the shipped DDR configuration as its only one
# (it reads $PCP_PMDAS_DIR/perfevent/perfevent.conf)
PE=/usr/lib/pcp/pmdas/perfevent
mkdir -p "$PD/pmdas/perfevent"
cp "$HWTEL_SRC/tools/pcp/perfevent-hwtel.conf" "$PD/pmdas/perfevent/perfevent.conf"
{
	echo "hwtel $DOM pipe binary /usr/bin/env PCP_VAR_DIR=$T/var $AGENT -d $DOM -l $PD/log/hwtel.log -e ddr_cam_read"
	echo "perfevent 127 pipe binary $PE/pmdaperfevent -d 127 -l $PD/log/perfevent.log"
} > "$PD/pmcd.conf"
printf '#define HWTEL %s\n#define PERFEVENT 127\nroot { hwtel perfevent }\n#include "%s"\n#include "%s"\n' \
	$DOM "$PCP_B/pmns" "$PE/pmns" > "$PD/root"
export PCP_RUN_DIR=$PD/run PCP_LOG_DIR=$PD/log PCP_TMP_DIR=$PD/tmp PCP_PMCDCONF_PATH=$PD/pmcd.conf
# -q/-t: the agents' start and answers get 60 s, not 3 s and 5 s: in a loaded
# TCG guest pmdaperfevent once missed the 3 s of its version exchange.
PCP_PMDAS_DIR=$PD/pmdas /usr/lib/pcp/bin/pmcd -f -U root -i 127.0.0.1 -q 60 -t 60 -c "$PD/pmcd.conf" \
	-n "$PD/root" -l "$PD/log/pmcd.log" -s "$PD/pmcd.sock" &
PMCD_PID=$!
PMH=unix:$PD/pmcd.sock
for ((i = 0; i < 100; i++)); do
	pminfo -h "$PMH" hwtel.ddr.reads > /dev/null 2>&1 && break
	sleep 0.1
done
# pminfo -f VALUES: "metric instance value" lines
pmf()
{
	pminfo -h "$PMH" -f "$@" 2>&1 | awk '
		/^[a-z]/ { m = $1 }
		/inst \[/ { match($0, /"[^"]*"/); n = substr($0, RSTART + 1, RLENGTH - 2)
			    print m, n, $NF }
		/^    value / { print m, "-", $2 }'
}
tap_eq "pmcd runs the agent: pminfo -f hwtel.ddr.reads is 0 at its first fetch" \
	"hwtel.ddr.reads $D 0" "$(pmf hwtel.ddr.reads)"
echo "ddr_ddr_reads 1000" > "$DDR_DBG/inject"
echo "ddr_ddr_writes 30" > "$DDR_DBG/inject"
echo "ddr_cam_read 77" > "$DDR_DBG/inject"
tap_eq "pminfo -f: the injected DDR bursts and event count, exactly (bytes = 64 x bursts)" \
	"hwtel.ddr.reads $D 1000
hwtel.ddr.writes $D 30
hwtel.ddr.read_bytes $D 64000
hwtel.ddr.write_bytes $D 1920
hwtel.ddr.event.count $D/ddr_cam_read 77
hwtel.ddr.event.exact $D/ddr_cam_read 1" \
	"$(pmf hwtel.ddr.reads hwtel.ddr.writes hwtel.ddr.read_bytes hwtel.ddr.write_bytes hwtel.ddr.event)"
HC=perfevent.hwcounters.$D
# its one instance is the CPU of the PMU's cpumask
C=cpu$(cat "/sys/bus/event_source/devices/$D/cpumask")
tap_eq "pmdaperfevent with perfevent-hwtel.conf: the same DDR counts (its own groups)" \
	"$HC.ddr_ddr_reads.value $C 1000
$HC.ddr_ddr_writes.value $C 30
$HC.ddr_hif_rd_access.value $C 0
$HC.ddr_cam_read.value $C 77" \
	"$(pmf $HC.ddr_ddr_reads.value $HC.ddr_ddr_writes.value $HC.ddr_hif_rd_access.value \
	   $HC.ddr_cam_read.value)"
tap_eq "pminfo -f: a PCIe counter through pmcd" "hwtel.pcie.bus.words $P/ep0/RQ 1000" \
	"$(pmf hwtel.pcie.bus.words | grep /RQ)"
echo lost_delta > "$PCIE_DBG/flags"
tap_eq "pminfo -f: a LOST DELTA set on the model is hwtel.pcie.device.lost_deltas 1, nothing else" \
	"hwtel.pcie.device.busy $P 0
hwtel.pcie.device.lost_deltas $P 1
hwtel.pcie.device.readout_overrun $P 0" \
	"$(pmf hwtel.pcie.device.busy hwtel.pcie.device.lost_deltas hwtel.pcie.device.readout_overrun)"
tap_check "pminfo -T: the help text reaches clients through pmcd" \
	grep -q "since the last clear" <(pminfo -h "$PMH" -T hwtel.pcie.bus.words)

# --- 14-19: the Prometheus exporter unit -------------------------------
R=$T/root
mkdir -p "$R/usr/bin" "$R/bin" "$R/usr/lib/systemd/system" "$R/etc/systemd/system"
mount --bind /usr/lib/systemd/system "$R/usr/lib/systemd/system"	# the targets
cp "$HW" "$R/usr/bin/hwtel"
cp /bin/mkdir "$R/bin/mkdir"
cp "$UNIT" "$R/etc/systemd/system/"
out=$(systemd-analyze verify --man=no --root="$R" hwtel-prometheus@pcie.service \
	hwtel-prometheus@ddr.service 2>&1)
rc=$?
umount "$R/usr/lib/systemd/system"
tap_eq "systemd-analyze verify: hwtel-prometheus@pcie/@ddr, no error or warning" "0 " "$rc $out"

mkdir -p "$T/tf"
# The LOST DELTA set for the agent above is still set: no reader clears it,
# so the exporter reports it too (hwtel_pcie_flag 1 below).
exporter pcie "" || tap_diag "no first textfile: $(cat "$T/exp-pcie.err")"
for i in "words,ep=0,bus=0 1000" "items,ep=0,bus=0 800" "stall,ep=0,bus=2 77" \
	 "brake,ep=0,idx=4 9" "tags_band,ep=0,idx=2 33"; do
	echo "$i" > "$PCIE_DBG/inject"
done
rewrites "$T/tf/hwtel-pcie.prom" 2
# the last file it wrote, for the format check below: it removes its own.
# cat, not cp: cp skips a file renamed over between its stat and its open
# ("replaced while being copied"), and the exporter renames every 0.3 s
cat "$T/tf/hwtel-pcie.prom" > "$T/pcie.prom"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_eq "the pcie exporter exits 0 on SIGTERM (systemctl stop), removes its textfile, no temporary file left" \
	"0 " "$? $(ls "$T/tf")"
L="device=\"$P\",endpoint=\"0\""
# the DDR labels: the PMU and its controller, the MMIO base the name holds
DL="device=\"$D\",controller=\"0x${D#mrvl_ddr_pmu_}\""
exporter ddr "-e ddr_cam_read" || tap_diag "no first textfile: $(cat "$T/exp-ddr.err")"
echo "ddr_ddr_reads 500" > "$DDR_DBG/inject"
echo "ddr_ddr_writes 7" > "$DDR_DBG/inject"
echo "ddr_cam_read 42" > "$DDR_DBG/inject"
rewrites "$T/tf/hwtel-ddr.prom" 2
cat "$T/tf/hwtel-ddr.prom" > "$T/ddr.prom"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_eq "the ddr exporter exits 0 on SIGTERM, removes its textfile" "0 " "$? $(ls "$T/tf")"
printf '# HELP x_total a\n# TYPE x_total counter\nx_total{a="1"} 1\nx_total{a="1"} 2\n' > "$T/bad.prom"
python3 "$FLEET/promcheck.py" "$T/pcie.prom" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"RQ\",event=\"words\"}=1000" \
	"hwtel_pcie_bus_bytes_total{$L,bus=\"RQ\"}=6400" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"UP0\",event=\"stall\"}=77" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"DOWN0\",event=\"stall\"}=0" \
	"hwtel_pcie_stop_cycles_total{$L,stream=\"DOWN\",event=\"mfb_stalled_to_dma\"}=9" \
	"hwtel_pcie_low_cycles_total{$L,resource=\"tags\",band=\"<=1/2\"}=33" \
	"hwtel_pcie_tags_free{$L}=200" "hwtel_pcie_stfifo_free_words{$L}=600" \
	"hwtel_pcie_link_up{$L}=1" "hwtel_pcie_max_payload_bytes{$L}=512" \
	"hwtel_pcie_flag{device=\"$P\",flag=\"lost_deltas\"}=1" \
	-- "$T/ddr.prom" \
	"hwtel_ddr_bytes_total{$DL,direction=\"read\"}=32000" \
	"hwtel_ddr_bytes_total{$DL,direction=\"write\"}=448" \
	"hwtel_ddr_events_counted_total{$DL,event=\"ddr_cam_read\"}=42" \
	"hwtel_ddr_events_estimate{$DL,event=\"ddr_cam_read\"}=42" \
	"hwtel_ddr_event_running_ratio{$DL,event=\"ddr_cam_read\"}=1" \
	-- "$T/bad.prom" > "$T/prom.txt" 2>&1
res()
{
	grep "^$1 $2" "$T/prom.txt" > /dev/null || { cat "$T/prom.txt"; return 1; }
}
tap_check "pcie textfile: strict format, the counts injected while it ran, the gauges" \
	res ok "$T/pcie.prom"
tap_check "ddr textfile: strict format, bytes = 64 x the injected bursts, the event count" \
	res ok "$T/ddr.prom"
tap_check "the format check refuses a series written twice" res bad "$T/bad.prom"

# --- 20-24: the seed profile through pmcd: rates and derived shares -----
# The agent finds the reloaded model by itself (same PMU name, new device).
pcie_up profile=seed || tap_fail "reload the PCIe model (seed)"
export PCP_DERIVED_CONFIG=$DERIVED
# pmval -s 2: one rate or share, over 0.5 s; "instance value" lines
pmv()
{
	pmval -h "$PMH" -s 2 -t 0.5 -f 4 "$1" 2>&1 | tee "$T/$1.raw" | awk '
		/^full label for instance/ { sub(/^full label for instance\[[0-9]+\]: /, ""); n[k++] = $0 }
		NF && $1 ~ /^[0-9.]+$/ { for (i = 1; i <= NF; i++) v[i] = $i; c = NF }
		END { for (i = 0; i < c; i++) print n[i], v[i + 1] }'
}
pmv hwtel.pcie.bus.words_pct > "$T/words.txt" &
p1=$!
pmv hwtel.pcie.bus.used_pct > "$T/used.txt" &
p2=$!
pmv hwtel.pcie.ep.pcie_cycles > "$T/clock.txt"
wait $p1 $p2
# words %: the seed's RQ 89.90, RC 49.40, UP 66.90, DOWN 48.60 (from its
# rates per cycle; counts move in drain steps of 4096 of ~2e8 cycles)
# within: FILE "INST WANT TOL"...: each instance's value within TOL of WANT
within()
{
	local f=$1 iw inst w tol v

	shift
	[ "$(wc -l < "$f")" -eq $# ] || { cat "$f"; return 1; }
	for iw in "$@"; do
		read -r inst w tol <<< "$iw"
		v=$(awk -v i="$inst" '$1 == i { print $2 }' "$f")
		awk -v v="$v" -v w="$w" -v t="$tol" \
			'BEGIN { exit !(v != "" && v - w <= t && w - v <= t) }' ||
			{ echo "$inst: $v, want $w +- $tol"; return 1; }
	done
}
tap_check "derived hwtel.pcie.bus.words_pct (pmval) gives the seed shares to 0.01" \
	within "$T/words.txt" "$E/RQ 89.90 0.01" "$E/RC 49.40 0.01" "$E/UP0 66.90 0.01" \
	"$E/DOWN0 48.60 0.01"
tap_check "derived hwtel.pcie.bus.used_pct (pmval) gives the seed's Used % to 0.01" \
	within "$T/used.txt" "$E/RQ 70.15 0.01" "$E/RC 44.67 0.01" "$E/UP0 66.45 0.01" \
	"$E/DOWN0 45.45 0.01"
out=$(pminfo -h "$PMH" -d $(sed -n 's/^\(hwtel\.[a-z_.]*\) = .*/\1/p' "$DERIVED") 2>&1)
tap_eq "pminfo -d: each of the derived metrics of hwtel.derived binds (no semantic error)" \
	"11 0" "$(grep -c 'Data Type' <<< "$out") $(grep -ci error <<< "$out")"
# a counter under pmval is a rate (the 400 MHz PCIe clock). Its value is not
# asserted: pmval divides by the times pmcd stamped on its two fetches, which
# under TCG are off the instants the agent read the block by as much as the
# host's scheduling (seen: 1.25 % idle, 9.5 % at a load of 12).
rate=$(awk -v i="$E" '$1 == i { print $2 }' "$T/clock.txt")
tap_diag "pmval rate of $E pcie_cycles: $rate /s (the model's clock: 400000000)"
tap_check "pmval rate-converts the counter hwtel.pcie.ep.pcie_cycles (counter semantics, a positive rate)" \
	sh -c "grep -q 'semantics: cumulative counter (converting to rate)' '$T/hwtel.pcie.ep.pcie_cycles.raw' &&
	       awk -v v='$rate' 'BEGIN { exit !(v > 0) }'"
tap_check "pmcd and the agent logged no error" \
	sh -c "! grep -i -E 'error|warning' '$PD/log/pmcd.log' '$PD/log/hwtel.log'"
# --- 25-34: two PCIe blocks, one exporter, one textfile ---------------
# Two NDK cards, or one card with two PCIE_TELEMETRY blocks: one PMU each.
P2=ndk_pcie_tlm_3fff00100000
PDRV=/sys/bus/platform/drivers/ndk-pcie-tlm
L2="device=\"$P2\",endpoint=\"0\""
# pmcd's agent holds events of the model: stop it (pmcd ends its agents),
# until the driver can be unloaded
kill -TERM "$PMCD_PID"
wait "$PMCD_PID"
for ((i = 0; i < 100; i++)); do
	pcie_down
	[ -d /sys/module/ndk_pcie_tlm ] || break
	sleep 0.1
done
pcie_up profile=idle instances=2 item_bytes=8 && [ -d "/sys/bus/event_source/devices/$P2" ] ||
	tap_diag "cannot load the PCIe model with instances=2"
rm -f "$T/tf"/*
exporter pcie "" || tap_diag "no first textfile: $(cat "$T/exp-pcie.err")"
echo "words,ep=0,bus=0 1000" > "$SIMDBG/$P/inject"
echo "words,ep=0,bus=0 2000" > "$SIMDBG/$P2/inject"
echo "items,ep=0,bus=0 300" > "$SIMDBG/$P2/inject"
rewrites "$T/tf/hwtel-pcie.prom" 2
cat "$T/tf/hwtel-pcie.prom" > "$T/two.prom"
tap_check "two PCIe PMUs: one textfile, strict format, each PMU's series with its own counts" \
	python3 "$FLEET/promcheck.py" "$T/two.prom" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"RQ\",event=\"words\"}=1000" \
	"hwtel_pcie_bus_bytes_total{$L,bus=\"RQ\"}=0" \
	"hwtel_pcie_bus_cycles_total{$L2,bus=\"RQ\",event=\"words\"}=2000" \
	"hwtel_pcie_bus_bytes_total{$L2,bus=\"RQ\"}=2400" \
	"hwtel_pcie_link_up{$L}=1" "hwtel_pcie_link_up{$L2}=1" \
	"hwtel_pcie_flag{device=\"$P2\",flag=\"lost_deltas\"}=0" \
	"hwtel_pcie_intervals_total{device=\"$P2\"}=$(sed -n "s/^hwtel_pcie_intervals_total{device=\"$P\"} //p" "$T/two.prom")"
tap_check "promtool check metrics accepts the two-PMU textfile" \
	sh -c "promtool check metrics < '$T/two.prom'"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_eq "the two-PMU exporter exits 0 on SIGTERM and removes its textfile" "0 " "$? $(ls "$T/tf")"

# A PMU that appears while the exporter runs (a card bound) joins the
# file, its counts from then on. The unbind comes first, with no event
# open: the PMU goes at once.
echo ndk-pcie-tlm-sim.1 > "$PDRV/unbind"
exporter pcie "" || tap_diag "no first textfile: $(cat "$T/exp-pcie.err")"
echo "words,ep=0,bus=0 7" > "$SIMDBG/$P/inject"
echo ndk-pcie-tlm-sim.1 > "$PDRV/bind"
infile "$T/tf/hwtel-pcie.prom" "device=\"$P2\"" 1
echo "words,ep=0,bus=0 5" > "$SIMDBG/$P2/inject"
rewrites "$T/tf/hwtel-pcie.prom" 2
cat "$T/tf/hwtel-pcie.prom" > "$T/new.prom"
tap_check "a PMU that appears joins the textfile, with the counts since it joined" \
	python3 "$FLEET/promcheck.py" "$T/new.prom" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"RQ\",event=\"words\"}=7" \
	"hwtel_pcie_bus_cycles_total{$L2,bus=\"RQ\",event=\"words\"}=5"
# unbound while the exporter runs: its series leave the file, the other
# PMU's stay (before 6.15 the PMU stays registered, frozen, while any
# event of the module is open: the exporter must not take it back)
echo ndk-pcie-tlm-sim.1 > "$PDRV/unbind"
infile "$T/tf/hwtel-pcie.prom" "device=\"$P2\"" 0
r=$?
echo "words,ep=0,bus=0 1" > "$SIMDBG/$P/inject"
rewrites "$T/tf/hwtel-pcie.prom" 2
tap_eq "a PMU that vanishes leaves the textfile, the other goes on, one warning says so" \
	"0 0 0 1" "$r $(kill -0 "$EXP_PID"; echo $?) $(grep -c "$P2" "$T/tf/hwtel-pcie.prom") $(grep -c "warning: .*$P2.*vanished" "$T/exp-pcie.err")"
tap_check "the other PMU's counter goes on" \
	python3 "$FLEET/promcheck.py" "$T/tf/hwtel-pcie.prom" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"RQ\",event=\"words\"}=8"
# The last PMU unbound (the card removed): the exporter does not exit, it
# removes its file (no frozen values) and waits as at its start; bound
# again, the PMU joins anew, its counts from then on (a counter reset).
echo ndk-pcie-tlm-sim.0 > "$PDRV/unbind"
absent "$T/tf/hwtel-pcie.prom"
r=$?
wait_for "$T/exp-pcie.err" "no ndk_pcie_tlm_\* PMU left: waiting for one" 1 30
tap_eq "the last PMU vanishes: the exporter goes on, removes its textfile, one line says it waits" \
	"0 0 0 1" "$r $(kill -0 "$EXP_PID"; echo $?) $(ls "$T/tf" | wc -l) $(grep -c "waiting for one" "$T/exp-pcie.err")"
echo ndk-pcie-tlm-sim.0 > "$PDRV/bind"
infile "$T/tf/hwtel-pcie.prom" "device=\"$P\"" 1
r=$?
echo "words,ep=0,bus=0 4" > "$SIMDBG/$P/inject"
echo "items,ep=0,bus=0 3" > "$SIMDBG/$P/inject"
rewrites "$T/tf/hwtel-pcie.prom" 2
cat "$T/tf/hwtel-pcie.prom" > "$T/back.prom" 2> /dev/null
tap_eq "bound again: the PMU's series return within 10 s, one line says it joined, the other PMU absent" \
	"0 1 0" "$r $(grep -c "$P: new PCIe telemetry device, exported from now on" "$T/exp-pcie.err") $(grep -c "$P2" "$T/back.prom")"
tap_check "strict format, its exact counts since it joined again" \
	python3 "$FLEET/promcheck.py" "$T/back.prom" \
	"hwtel_pcie_bus_cycles_total{$L,bus=\"RQ\",event=\"words\"}=4" \
	"hwtel_pcie_bus_bytes_total{$L,bus=\"RQ\"}=24" \
	"hwtel_pcie_link_up{$L}=1"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
tap_eq "it exits 0 on SIGTERM after the wait and removes its textfile" "0 " "$? $(ls "$T/tf")"
tap_diag "exporter's stderr: $(tr '\n' '|' < "$T/exp-pcie.err")"
tap_done
