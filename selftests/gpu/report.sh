#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel gpu on the Mali model: the issue's scenario (two processes, PP0-PP3
# and GP0, three DVFS changes in the three forms, one a SOFTWARE pair in
# reverse order, a job spanning each change, a job before any DVFS event)
# with energies computed here from P = C V^2 f, each DVFS event taking effect
# at once (a lone half keeps the other value in force), with an OPP table and
# with --initial-opp; the text table and the CSV agree. Then three of issue
# 20's cases: Hz and uV with repeats, a frequency-only stream with the
# voltage known, and a START on a unit that runs a job (queued behind it).

. "$(dirname "$0")/gpu_lib.sh"
gpu_need_model 21
tap_plan 21

if ! mali_up; then
	tap_fail "load hwtel_sim_mali"
	tap_done
fi

# PIDs above PID_MAX_LIMIT (4194304): no live process has them
A=4200001
B=4200002
SCRIPT="job $A PP0 0 2000000
job $B PP1 4000000 3000000
freqvolt 5000000 200 900
job $A PP2 8000000 4000000
volt 10000000 1100
freq 11000000 400
job $B PP3 12000000 6000000
job $A GP0 12000000 4000000
freq 15000000 300
volt 15000000 1000
job $B PP1 19000000 1000000"
printf '%s\n' "$SCRIPT" > "$T/script"
RUN="python3 $CTLPY $CTL \"\$(cat $T/script)\"; sleep 1"

# operating points A = 200 MHz 900 mV, B = 400/1100, C = 300/1000 (ns:MHz:mV);
# J3 runs 10..11 ms at 200 MHz with the new 1100 mV
A_PAIR="2000000:200:900 1000000:200:1100 1000000:400:1100 3000000:400:1100 1000000:300:1000"
B_ALL="2000000:200:900 3000000:400:1100 3000000:300:1000 1000000:300:1000"
e_a=$(upj "$A_PAIR")
e_b=$(upj "$B_ALL")
e_tot=$(upj "$A_PAIR $B_ALL")
e_un=$(upj "3000000:200:900")

# jq-free field access: python prints "pid energy busy..." per consumer
summary()
{
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in sorted(d["consumers"], key=lambda c: c["pid"]):
    b = c["busy_ns"]
    print(c["pid"], c["energy_upj"], b["GP0"], b["PP0"], b["PP1"], b["PP2"], b["PP3"],
          c["jobs_total"], c["unpriced_ns"])
t = d["total"]
print("total", t["energy_upj"], d["unattributed"]["busy_ns"], d["unattributed"]["energy_upj"],
      d["stream"]["dvfs_changes"], d["stream"]["malformed"], d["stream"]["running_at_end"])
PY
}

"$HW" gpu -j -- sh -c "$RUN" > "$T/pair.json" 2> "$T/pair.err"
tap_eq "no table: exit 0, no diagnostics" "0:" "$?:$(cat "$T/pair.err")"
mapfile -t S < <(summary "$T/pair.json")
tap_eq "process A: energy, busy GP0 PP0 PP1 PP2 PP3, jobs, unpriced" \
	"$A $e_a 4000000 2000000 0 4000000 0 3 2000000" "${S[0]}"
tap_eq "process B: energy, busy, jobs, unpriced" \
	"$B $e_b 0 0 4000000 0 6000000 3 1000000" "${S[1]}"
tap_eq "GPU total, unattributed 3 ms priced at the first point, 5 changes" \
	"total $e_tot 3000000 $e_un 5 0 0" "${S[2]}"
tap_eq "hand values: 10534 + 11188 = 21722 uPJ, unattributed 1827" \
	"10534 11188 21722 1827" "$e_a $e_b $e_tot $e_un"

# the OPP table resolves the reverse pair at its first half (10 ms)
printf '# MHz mV\n200 900\n300 1000\n400 1100\n' > "$T/opp"
"$HW" gpu -j --opp "$T/opp" -- sh -c "$RUN" > "$T/opp.json" 2> "$T/opp.err"
mapfile -t S < <(summary "$T/opp.json")
e_a2=$(upj "2000000:200:900 2000000:400:1100 3000000:400:1100 1000000:300:1000")
tap_eq "--opp: process A's J3 switches at the volts half" "$A $e_a2" \
	"$(cut -d' ' -f1-2 <<< "${S[0]}")"
tap_eq "--opp: process B unchanged" "$B $e_b" "$(cut -d' ' -f1-2 <<< "${S[1]}")"

"$HW" gpu -j --initial-opp 266:1000 -- sh -c "$RUN" > "$T/init.json" 2> "$T/init.err"
mapfile -t S < <(summary "$T/init.json")
e_a3=$(upj "2000000:266:1000 $A_PAIR")
e_b3=$(upj "1000000:266:1000 $B_ALL")
tap_eq "--initial-opp 266:1000: A includes J1 at 1 PW" "$A $e_a3" \
	"$(cut -d' ' -f1-2 <<< "${S[0]}")"
tap_eq "--initial-opp: B includes J2's first ms" "$B $e_b3" \
	"$(cut -d' ' -f1-2 <<< "${S[1]}")"
tap_eq "--initial-opp: nothing unattributed, 5 changes" "0 5" \
	"$(cut -d' ' -f3,5 <<< "${S[2]}")"

"$HW" gpu -- sh -c "$RUN" > "$T/pair.txt" 2>&1
tap_check "text: the table title" grep -qx "GPU power consumers" "$T/pair.txt"
row=$(grep -E "^ *$A " "$T/pair.txt" | awk '{print $2, $(NF-4), $(NF-3)}')
tap_eq "text: A's row shows [PID], 3 jobs and the same energy in PJ" \
	"[$A] 3 0.010534" "$row"
tot=$(grep "GPU total" "$T/pair.txt" | awk '{print $(NF-2)}')
tap_eq "text: GPU total energy" "0.021722" "$tot"
tap_check "text: unattributed energy line" grep -q "Unattributed energy: 3.000 ms" "$T/pair.txt"

"$HW" gpu -x ';' -- sh -c "$RUN" > "$T/pair.csv" 2>&1
csv=$(awk -F';' -v a=$A '$1 == a {print $13 ";" $14}' "$T/pair.csv")
tap_eq "CSV: A's jobs and energy_upj" "3;$e_a" "$csv"
tap_eq "CSV: header" "pid;life;comm;busy_ns_GP0" "$(head -1 "$T/pair.csv" | cut -d';' -f1-4)"

# Hz and uV, each value twice (requested, then actual), as another Exynos
# platform code sends them: recognised by magnitude, the repeats change
# nothing; at 1 ms the point goes to 400 MHz 1100 mV (volts first)
HZ="freq 0 200000000
freq 0 200000000
volt 0 900000
volt 0 900000
job $A GP0 0 2000000
volt 1000000 1100000
volt 1000000 1100000
freq 1000000 400000000
freq 1000000 400000000"
printf '%s\n' "$HZ" > "$T/hz"
"$HW" gpu -j -- sh -c "python3 $CTLPY $CTL \"\$(cat $T/hz)\"; sleep 1" \
	> "$T/hz.json" 2> "$T/hz.err"
mapfile -t S < <(summary "$T/hz.json")
tap_eq "Hz/uV: 1 ms at 200 MHz 900 mV + 1 ms at 400 MHz 1100 mV" \
	"$A $(upj "1000000:200:900 1000000:400:1100")" "$(cut -d' ' -f1-2 <<< "${S[0]}")"
tap_eq "Hz/uV: 4 changes (the repeats none), nothing unattributed" "0 4" \
	"$(cut -d' ' -f3,5 <<< "${S[1]}")"

# A frequency-only stream with the voltage known (issue 20, case 4, its
# probe): a lone frequency event takes effect at once, the voltage in force
# carried; a job of 11 ms at 200 MHz 1000 mV, 400 MHz from 4 ms: 4 ms at
# 200 + 7 ms at 400 (13534 uPJ), not 11 ms at 200 (8271)
printf '%s\n' "job $A GP0 0 11000000" "freq 4000000 400" > "$T/fonly"
"$HW" gpu -j --initial-opp 200:1000 -- sh -c "python3 $CTLPY $CTL \"\$(cat $T/fonly)\"; sleep 1" \
	> "$T/fonly.json" 2> "$T/fonly.err"
mapfile -t S < <(summary "$T/fonly.json")
tap_eq "frequency only: 4 ms at 200 MHz + 7 ms at 400 MHz, 1000 mV carried" \
	"$A $(upj "4000000:200:1000 7000000:400:1000") 11000000" \
	"$(cut -d' ' -f1-3 <<< "${S[0]}")"

# A START on a unit that runs a job (issue 20, case 8): queued, it runs
# from the running job's STOP (A 0..2 ms, B queued at 1 ms, runs 2..3 ms)
printf '%s\n' "freqvolt 0 266 1000" "job $A PP0 0 2000000" "job $B PP0 1000000 2000000" \
	> "$T/queue"
"$HW" gpu -j -- sh -c "python3 $CTLPY $CTL \"\$(cat $T/queue)\"; sleep 1" \
	> "$T/queue.json" 2> "$T/queue.err"
mapfile -t S < <(summary "$T/queue.json")
tap_eq "queued START: A 2 ms on PP0, 1 job" \
	"$A $(upj "2000000:266:1000") 0 2000000 1" "$(cut -d' ' -f1-4,8 <<< "${S[0]}")"
tap_eq "queued START: B 1 ms on PP0 from A's STOP, 1 job" \
	"$B $(upj "1000000:266:1000") 0 1000000 1" "$(cut -d' ' -f1-4,8 <<< "${S[1]}")"
tap_done
