#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): the traffic profiles.
#   - "seed": after C PCIe / D DMA cycles every counter is exactly
#     floor(rate * cycles / reference Hz) with the rates of
#     Documentation/dev-tools/hwsim-pcie.rst (so one second at 400/200 MHz
#     gives the seed report); cycles move in whole DRAIN_PERIODs; the gauges
#     and link status of the seed report;
#   - the contract's invariants on a topology where the model must clamp
#     (narrow regions), with every endpoint and port getting the same traffic;
#     padding regions count inside multi-word frames (faithful default), so
#     the items and frames bounds use the probe's regions. Read after the
#     traffic stopped (profile idle): every channel's count up to that
#     instant has landed (the model's windows are staggered, so that is not
#     a drain boundary), the model's ground truth, exact;
#   - "idle" freezes everything; "busy" with CNT_WIDTH 33 and speedup wraps
#     the item counters several times a second; a custom profile written to
#     the traffic file is exact too, and malformed lines get EINVAL.
# The exact-arithmetic parts load ideal=1 (every channel drains at the same
# instant); the faithful model's slot skew is tested in model_verified.sh.
# No timing-based pass/fail: the checks use the cycle counters read with the
# other counters, so they hold however long the guest took.

. "$(dirname "$0")/model_lib.sh"

m_alone
EINVAL="Invalid argument"

# Seed rates of the default topology by entry: "entry clock rate" with clock
# p (PCIe, 400 MHz reference) or d (DMA, 200 MHz reference); "rest" = the
# cycles minus the other bands of that histogram.
seed_rates()
{
	local e=1 r

	for r in 359600000 40000 58000000 0 0 8979062500 \
		 359600000 254400000 254400000 254000000 \
		 197600000 0 34000000 0 0 5718437500 \
		 179200000 178800000 178400000 178360000 \
		 54400000 1600000 0 0 33600000 400000 \
		 1200000 159200000 31600000 rest 0 84000000 108000000 rest; do
		echo "$e p $r"
		e=$((e + 1))
	done
	e=36
	for r in 133800000 45400000 43001200 58000000 27800000 2126250000 \
		 133400000 132400000 \
		 97200000 1600000 34800000 34800000 600000 1454375000 \
		 91000000 90800000; do
		echo "$e d $r"
		e=$((e + 1))
	done
}

# expected values "entry value" from the rates and cycles C (PCIe), D (DMA)
seed_expect()
{
	local C=$1 D=$2 e clk r sum=0 b=0

	echo "0 $C"
	echo "35 $D"
	{
		while read -r e clk r; do
			if [ "$r" = rest ]; then
				echo "$C - s"
				echo "s = 0"
				continue
			fi
			if [ "$clk" = p ]; then
				echo "v = $r * $C / 400000000"
			else
				echo "v = $r * $D / 200000000"
			fi
			[ "$e" -ge 27 ] && [ "$e" -le 33 ] && echo "s = s + v"
			echo v
		done < <(seed_rates)
	} | sed '1i scale = 0; s = 0' | bc | paste -d' ' <(seed_rates | cut -d' ' -f1) -
}

# --- seed -------------------------------------------------------------------
tap_check "load profile=seed ideal=1" m_load profile=seed ideal=1
sleep 1
mapfile -t cnt < "$M_DBG/counters"
C=${cnt[0]#* }
D=${cnt[35]#* }
tap_diag "after about 1 s: PCIe cycles $C, DMA cycles $D"
tap_check "PCIe cycles moved" test "$C" -gt 0
tap_eq "cycles move in whole drain periods" "0 0" "$((C % 4096)) $((D % 4096))"
tap_check "DMA clock is half the PCIe clock (periods differ by <= 1)" \
	test $((C / 4096 - 2 * (D / 4096))) -ge 0 -a $((C / 4096 - 2 * (D / 4096))) -le 1
exp=$(seed_expect "$C" "$D" | sort -n)
act=$(printf '%s\n' "${cnt[@]}" | sort -n)
tap_eq "every counter is exactly floor(rate * cycles / Hz)" "$exp" "$act"
tap_eq "per-second values at exactly 400/200 MHz (doc table spot check)" \
	"359600000 8979062500 5718437500 208000000 2126250000 1454375000" \
	"$(seed_expect 400000000 200000000 | awk '$1 == 1 || $1 == 6 || $1 == 16 ||
		$1 == 41 || $1 == 49 || $1 == 30 { printf "%s ", $2 }' | sed 's/ $//')"
tap_eq "seed gauges: tags 118 (lowest 3), FIFO 640 (lowest 96), link" \
	"0x00030076 0x00600280 0x0000026a" \
	"$(m_reg pcie_tags0) $(m_reg pcie_stfifo0) $(m_reg pcie_status0)"
tap_eq "seed profile" seed "$(cat "$M_DBG/profile")"

# --- idle freezes -------------------------------------------------------------
echo idle > "$M_DBG/profile"
a=$(cat "$M_DBG/counters")
sleep 0.3
tap_eq "idle: nothing moves after the switch" "$a" "$(cat "$M_DBG/counters")"
tap_eq "unknown profile rejected" "$EINVAL" "$(m_wr profile nope)"

# --- invariants where the model has to clamp -----------------------------------
# RQ: 2 regions of 8 B (2 items), RC 4 x 32 B; UP: 1 region of 8 B; 2 ep, 2 ports
tap_check "load seed on 2 ep, 2 ports, narrow RQ/UP, drain 1024" \
	m_load profile=seed endpoints=2 dma_ports=2 regions_rq=2 bytes_rq=8 \
	regions_up=1 bytes_up=8 drain_period=1024
sleep 1
echo idle > "$M_DBG/profile"
mapfile -t cnt < "$M_DBG/counters"
m_layout 2 2 2 4 1 2
v() { echo "${cnt[$1]#* }"; }
bad=0
fail() { bad=$((bad + 1)); tap_diag "$*"; }
for ep in 0 1; do
	b0=$((ep * M_CPE))
	C=$(v "$b0")
	D=$(v $((b0 + M_PCH)))
	# buses: RQ RC (PCIe probe), UP0 DOWN0 UP1 DOWN1 (DMA probe)
	for bus in 0 1 2 3 4 5; do
		if [ $bus -lt 2 ]; then
			ch=$((b0 + 1 + bus * (6 + M_RP))); cyc=$C
			reg=$([ $bus -eq 0 ] && echo 2 || echo 4)
			ipr=$([ $bus -eq 0 ] && echo 2 || echo 8)
		else
			ch=$((b0 + M_PCH + 1 + (bus - 2) * (6 + M_RD))); cyc=$D
			reg=$([ $((bus % 2)) -eq 0 ] && echo 1 || echo 2)
			ipr=$([ $((bus % 2)) -eq 0 ] && echo 2 || echo 8)
		fi
		w=$(v $ch); st=$(v $((ch + 1))); fr=$(v $((ch + 2)))
		mvb=$(v $((ch + 3))); ms=$(v $((ch + 4))); it=$(v $((ch + 5)))
		[ $((w + st)) -le "$cyc" ] || fail "ep$ep bus$bus words+stall $w+$st > $cyc"
		[ "$ms" -le "$cyc" ] || fail "ep$ep bus$bus mvb stall $ms > $cyc"
		preg=$([ $bus -lt 2 ] && echo $M_RP || echo $M_RD)
		[ "$it" -le $((w * ipr * preg)) ] || fail "ep$ep bus$bus items $it > $w*$ipr*$preg"
		[ "$fr" -le $((w * preg)) ] || fail "ep$ep bus$bus frames $fr > $w*$preg"
		[ $bus -eq 2 ] || [ $bus -eq 4 ] &&
			{ [ "$mvb" -ge "$fr" ] || fail "ep$ep UP mvb $mvb < frames $fr"; }
		[ $bus -lt 2 ] && { [ "$mvb" -eq 0 ] && [ "$ms" -eq 0 ] ||
			fail "ep$ep bus$bus has MVB counts"; }
		nr=$([ $bus -lt 2 ] && echo $M_RP || echo $M_RD)
		for ((r = 0; r < nr; r++)); do
			rv=$(v $((ch + 6 + r)))
			# padding regions (r >= reg) count too, also <= words
			[ "$rv" -le "$w" ] || fail "ep$ep bus$bus region $r $rv > words $w"
			[ $r -ge "$reg" ] && [ "$rv" -ne $((w - fr)) ] &&
				fail "ep$ep bus$bus padding region $r = $rv, not words - frames"
		done
		[ "$it" -gt 0 ] || fail "ep$ep bus$bus no items"
	done
	brk=$((b0 + 1 + 2 * (6 + M_RP)))
	for k in 0 1 2 3 4 5; do
		[ "$(v $((brk + k)))" -le "$C" ] || fail "ep$ep brake $k > cycles"
	done
	for h in 0 1; do
		s=0
		for k in 0 1 2 3; do s=$((s + $(v $((brk + 6 + 4 * h + k))))); done
		[ "$s" -eq "$C" ] || fail "ep$ep histogram $h sums to $s, cycles $C"
	done
done
tap_eq "contract invariants hold on every bus of every endpoint" 0 "$bad"
tap_eq "clamped: RQ items = words * 2 items * 2 regions + padding's" \
	"$(( $(v 1) * 4 + ($(v 1) - $(v 3)) * 2 * 2 ))" "$(v 6)"
same=0
for ((i = 0; i < M_CPE; i++)); do
	[ "$(v $i)" = "$(v $((M_CPE + i)))" ] || same=1
done
tap_eq "both endpoints carry the same traffic" 0 "$same"
u0=$((M_PCH + 1))
u1=$((M_PCH + 1 + 2 * (6 + M_RD)))
tap_eq "both DMA ports carry the same traffic" \
	"$(for i in $(seq 0 15); do v $((u0 + i)); done)" \
	"$(for i in $(seq 0 15); do v $((u1 + i)); done)"

# --- busy, CNT_WIDTH 33, speedup 2: item counters wrap ----------------------
tap_check "load profile=busy cnt_width=33 speedup=2 ideal=1" \
	m_load profile=busy cnt_width=33 speedup=2 ideal=1
sleep 1.5
mapfile -t cnt < "$M_DBG/counters"
C=$(v 0)
W=$(v 1)
tap_diag "PCIe cycles $C at 800 MHz modelled"
# The cycles wrap 10.7 s after the load; the read comes about 2 s after it
# (a loaded TCG host has been seen taking 4 s). The items wrap every 0.35 s.
tap_check "cycles have not wrapped yet (test premise)" test "$C" -lt 8589934592
tap_eq "RQ words exact (95 %)" "$(echo "380000000 * $C / 400000000" | bc)" "$W"
tap_eq "RQ items = 32 * words mod 2^33" $((W * 32 % 8589934592)) "$(v 6)"
tap_check "RQ items wrapped at least twice" test $((W * 32 / 8589934592)) -ge 2
tap_eq "full regions: every region = words" "$W $W $W $W" \
	"$(v 7) $(v 8) $(v 9) $(v 10)"
max=0
for l in "${cnt[@]}"; do
	[ "${l#* }" -ge 8589934592 ] && max=1
done
tap_eq "no counter holds more than 33 bits" 0 "$max"

# --- custom traffic ----------------------------------------------------------
tap_check "load idle ideal=1" m_load ideal=1
# one write() with two lines (';'-separated: bash would write each
# newline-terminated line separately, restarting the profile in between)
tap_eq "custom RQ and tags lines in one write" ok \
	"$(m_wr traffic "rq words=200000000 stall=100000000 frames=1000000 items=1000000001 region0=200000000 region1=3; tags band0=1 band1=2 band2=3 now=100 lowest=20")"
tap_eq "profile is custom" custom "$(cat "$M_DBG/profile")"
tap_eq "traffic shows the RQ line" \
	"rq words=200000000 stall=100000000 frames=1000000 mvb_items=0 mvb_stall=0 items=1000000001 region0=200000000 region1=3 region2=0 region3=0 full=0 frame=0 start=0" \
	"$(grep '^rq ' "$M_DBG/traffic")"
sleep 0.5
mapfile -t cnt < "$M_DBG/counters"
C=$(v 0)
tap_check "custom traffic moves" test "$C" -gt 0
tap_eq "custom counters exact" \
	"$(echo "x=$C; 200000000*x/400000000; 100000000*x/400000000; 1000000*x/400000000; 1000000001*x/400000000; 3*x/400000000; $C - (x/400000000 + 2*x/400000000 + 3*x/400000000)" | bc | tr '\n' ' ')" \
	"$(v 1) $(v 2) $(v 3) $(v 6) $(v 8) $(v 30) "
tap_eq "custom gauges after a drain period" 0x00140064 "$(m_reg pcie_tags0)"
tap_eq "DMA buses stay idle in this custom profile" "0 0" "$(v 36) $(v 44)"
bad=0
while read -r line; do
	r=$(m_wr traffic "$line")
	[ "$r" = "$EINVAL" ] || { bad=1; tap_diag "'$line' gave '$r'"; }
done <<'EOF'
rq words=400000000 stall=1
rq mvb_items=1
rc mvb_stall=1
up mvb_stall=200000001
tags band0=400000000 band1=1
tags now=257
stfifo now=10 lowest=11
brake reason6=1
brake reason0=400000001
bogus words=1
rq
rq words=x
rq words
rq full=2
up region4=1
rq words=1;bogus
EOF
tap_eq "malformed traffic lines rejected with EINVAL" 0 "$bad"
tap_eq "rejected lines leave the profile alone" \
	"rq words=200000000 stall=100000000" \
	"$(grep -o '^rq words=[0-9]* stall=[0-9]*' "$M_DBG/traffic")"

tap_done
