# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the DDR PMU tests on firmware-described devices (sourced, not
# run): acpi.sh (ACPI, x86) and dt.sh (device tree, arm64). Their devices
# are over guest RAM that is a file shared with the host, $RAM, whose byte 0
# is guest physical $RAM_BASE (scripts/vmrun --acpi-ddr). The sourcing test
# defines VARIANTS and, per variant, BASE, CFG0, CNT0, FRRD, FRBITS, GEN and
# PMU (arrays), and TMP, from the register contract
# (/work/shared/reference/ddr-pmu-hw.md), not from the driver.

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

# count_eq DESC: one test. perf stat of ddr_cam_read (event 16: a generic
# counter) and of ddr_ddr_reads (the fixed read counter) on every variant
# at once, while a child plants the values after the events started and
# reads back the eight CFG registers (the driver's writes through its
# mapping, seen in the file). Every generic counter gets a value of its
# own, so the count says which CNT the driver read: it must be the delta
# planted in CNT(m), where CFG(m) is the one register holding enable (bit
# 63) and event 16's bit (bit 15), as the contract maps them. CN10K's
# counters start from a value of their own (the driver must read it, not
# assume 0); Odyssey and CN20K restart theirs from 0 at START, so they
# start from 0. The read counter starts 5 below its wrap and ends at 7:
# 12 counted.
count_eq()
{
	local desc=$1 v n b m s d evs='' before=() during=() cfgs=() want='' got=''
	local -A delta=()

	for v in $VARIANTS; do
		b=${BASE[$v]}
		for n in 0 1 2 3 4 5 6 7; do
			s=0
			[ "$v" != cn10k ] || s=$((0x1000 * (n + 1) + 7 * n))
			d=$((GEN[$v] + 1009 * n))
			delta[$v.$n]=$d
			before+=($((b + CNT0[$v] + 8 * n)) $s)
			during+=($((b + CNT0[$v] + 8 * n)) $((s + d)))
			cfgs+=($((b + CFG0[$v] + 8 * n)))
		done
		if [ "${FRBITS[$v]}" -eq 64 ]; then
			before+=($((b + FRRD[$v])) -5)
		else
			before+=($((b + FRRD[$v])) $(((1 << 48) - 5)))
		fi
		during+=($((b + FRRD[$v])) 7)
		evs+="${evs:+,}${PMU[$v]}/ddr_cam_read/,${PMU[$v]}/event=0x65/"
	done
	plant "${before[@]}"
	rm -f "$TMP/stat" "$TMP/cfg"
	if perf stat -a -x, -o "$TMP/stat" -e "$evs" -- bash -c 'plant "${@:2:$1}"; peek "${@:$1+2}" > "$0"' "$TMP/cfg" "${#during[@]}" "${during[@]}" "${cfgs[@]}" 		>/dev/null 2>&1; then
		got=$(grep -v '^#' "$TMP/stat" | sed '/^$/d' | cut -d, -f1,3)
	else
		got=perf-failed
	fi
	mapfile -t cfgv < <(cat "$TMP/cfg" 2>/dev/null)
	n=0
	for v in $VARIANTS; do
		m=$(for i in 0 1 2 3 4 5 6 7; do
			[ "${cfgv[$((n + i))]:-}" = 8000000000008000 ] && echo $i
		done | paste -sd' ')
		n=$((n + 8))
		got+=$'\n'"$v: CFG holding enable and event 16: ${m:-none}"
		case "$m" in
		[0-7])	want+="${delta[$v.$m]},${PMU[$v]}/ddr_cam_read/"$'\n' ;;
		*)	want+="(the delta planted in the counter of the one enabled CFG),${PMU[$v]}/ddr_cam_read/"$'\n' ;;
		esac
		want+="12,${PMU[$v]}/event=0x65/"$'\n'
	done
	for v in $VARIANTS; do
		m=$(sed -n "s/^$v: CFG holding enable and event 16: //p" <<< "$got")
		[[ "$m" =~ ^[0-7]$ ]] || m="exactly one of 0-7"
		want+="$v: CFG holding enable and event 16: $m"$'\n'
	done
	tap_eq "$desc" "${want%$'\n'}" "$got"
}

# The event map, typed from the contract's table
# (/work/shared/reference/ddr-pmu-hw.md), not from the driver or the model:
# "id name", the ids every variant shares (CN20K moves its ZQ events to
# CFG1 and reuses 36-38, 44 and 58-61), and each
# variant's own spellings. CN20K is checked on 1-31 only: the contract
# lists what CN20K adds and moves but not whether it keeps ENTER_MPSM (35),
# and the driver's CN20K table has none.
FW_EVENTS_COMMON="1 ddr_hif_rd_or_wr_access 2 ddr_hif_wr_access 3 ddr_hif_rd_access
4 ddr_hif_rmw_access 5 ddr_hif_pri_rdaccess 6 ddr_rd_bypass_access
7 ddr_act_bypass_access 10 ddr_hpri_sched_rd_crit_access
11 ddr_lpri_sched_rd_crit_access 12 ddr_wr_trxn_crit_access
13 ddr_cam_active_access 14 ddr_cam_rd_or_wr_access 15 ddr_cam_rd_active_access
16 ddr_cam_read 17 ddr_cam_write 18 ddr_cam_mwr 19 ddr_precharge
20 ddr_precharge_for_rdwr 21 ddr_precharge_for_other 22 ddr_rdwr_transitions
23 ddr_write_combine 24 ddr_war_hazard 25 ddr_raw_hazard 26 ddr_waw_hazard
27 ddr_enter_selfref 31 ddr_enter_powerdown"
FW_EVENTS_LATE="35 ddr_enter_mpsm 39 ddr_refresh 40 ddr_crit_ref 41 ddr_spec_ref 42 ddr_load_mode
43 ddr_zqcl 44 ddr_cam_wr_access 47 ddr_bsm_alloc 48 ddr_bsm_starvation
49 ddr_win_limit_reached_rd 50 ddr_win_limit_reached_wr 51 ddr_dqsosc_mpc
52 ddr_dqsosc_mrr 53 ddr_tcr_mrr 54 ddr_zqstart 55 ddr_zqlatch"
declare -A FW_EVENTS=(
	[cn10k]="$FW_EVENTS_COMMON $FW_EVENTS_LATE 8 ddr_dif_wr_data_access
9 ddr_dif_rd_data_access 45 ddr_hpr_req_with_nocredit 46 ddr_lpr_req_with_nocredit"
	[odyssey]="$FW_EVENTS_COMMON $FW_EVENTS_LATE 8 ddr_dfi_wr_data_access
9 ddr_dfi_rd_data_access 45 ddr_dfi_cycles 46 ddr_retry_fifo_full
56 ddr_dfi_parity_poison 57 ddr_wr_crc_error 58 ddr_capar_error
59 ddr_rd_crc_error 60 ddr_rd_uc_ecc_error 61 ddr_dfi_cmd_is_retry"
	[cn20k]="$FW_EVENTS_COMMON"
)

# fw_event_bits VARIANT: one test. Every event of the contract's table,
# eight at a time (one per generic counter), counted system-wide while a
# child reads back CFG0-7: the eight CFG values must be, as a set, enable
# (bit 63) plus bit id-1 of each event, or 0xF << (id-1) for the three
# 4-bit events (27, 31, 35).
fw_event_bits()
{
	local v=$1 b=${BASE[$1]} n ev=() want=() got=() bad='' i id name w g
	local -a list cfgs=() zero=()

	read -d "" -ra list <<< "${FW_EVENTS[$v]}" || true
	for n in 0 1 2 3 4 5 6 7; do
		cfgs+=($((b + CFG0[$v] + 8 * n)))
		zero+=($((b + CFG0[$v] + 8 * n)) 0)
	done
	for ((i = 0; i < ${#list[@]}; i += 2)); do
		id=${list[$i]}
		name=${list[$((i + 1))]}
		ev+=("${PMU[$v]}/$name/")
		case "$id" in
		27|31|35) printf -v "want[${#want[@]}]" '%016x' $(((1 << 63) | (0xf << (id - 1)))) ;;
		*)	  printf -v "want[${#want[@]}]" '%016x' $(((1 << 63) | (1 << (id - 1)))) ;;
		esac
		if [ ${#ev[@]} -eq 8 ] || [ $((i + 2)) -ge ${#list[@]} ]; then
			rm -f "$TMP/bits"
			plant "${zero[@]}"
			perf stat -a -x, -o /dev/null -e "$(IFS=,; echo "${ev[*]}")" -- \
				bash -c 'peek "$@" > "$0"' "$TMP/bits" "${cfgs[@]}" >/dev/null 2>&1 ||
				bad+=" [perf stat failed: ${ev[*]}]"
			mapfile -t got < <(sort "$TMP/bits" 2>/dev/null | grep -v '^0000000000000000$')
			w=$(printf '%s\n' "${want[@]}" | sort | paste -sd' ')
			g=$(printf '%s\n' "${got[@]}" | paste -sd' ')
			[ "$w" = "$g" ] || bad+=" [${ev[*]}: want $w, CFG holds $g]"
			ev=()
			want=()
		fi
	done
	if [ -z "$bad" ]; then
		tap_ok "$v: all $(( ${#list[@]} / 2 )) events of the contract program their CFG bits"
	else
		tap_fail "$v: all $(( ${#list[@]} / 2 )) events of the contract program their CFG bits" "$bad"
	fi
}

# fw_lists: every variant's PMU in perf list and in hwtel list (2 tests a
# variant).
fw_lists()
{
	local v p

	perf list pmu 2>/dev/null > "$TMP/perf-list"
	hwtel list > "$TMP/hwtel-list" 2>&1
	for v in $VARIANTS; do
		p=${PMU[$v]}
		tap_eq "$v: perf list shows $p/ddr_ddr_reads/" 1 \
			"$(grep -cE "^ +$p/ddr_ddr_reads/ " "$TMP/perf-list")"
		tap_eq "$v: hwtel list shows $p" 1 "$(grep -cw "$p" "$TMP/hwtel-list")"
	done
}

# fw_npmus: how many of the variants' PMUs are registered
fw_npmus()
{
	local v n=0

	for v in $VARIANTS; do
		test -d "$DEVS/${PMU[$v]}" && n=$((n + 1))
	done
	echo "$n"
}

# fw_no_bind VARIANT DEVICE: the driver offers no unbind or bind through
# sysfs (suppress_bind_attrs, as upstream), and DEVICE stays bound (3 tests).
fw_no_bind()
{
	local v=$1 dev=$2 p=${PMU[$1]}

	tap_check "$v: the driver has no unbind attribute" test ! -e "$DRV/unbind"
	tap_check "$v: nor a bind attribute" test ! -e "$DRV/bind"
	tap_check "$v: $dev stays bound, $p registered" \
		test -e "$DRV/$dev" -a -d "$DEVS/$p"
}
