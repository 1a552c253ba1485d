# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the hwtel_sim_pcie model selftests (sourced, not run). The model
# is tested alone, through its debugfs files (regs, counters, mmio, ...); the
# ndk_pcie_tlm driver is not loaded, so every register access is the test's.
#
#   m_alone              unload it now and at exit; fail if the driver is loaded
#   m_load PARAMS...     (re)load hwtel_sim_pcie with PARAMS
#   m_unload             unload it (and hwtel_sim)
#   M_KO                 path of hwtel_sim_pcie.ko
#   m_reg NAME           register NAME of the debugfs regs dump (0x%08x)
#   m_cnt ENTRY          live counter ENTRY (decimal)
#   m_wr FILE STRING     write STRING to debugfs FILE; prints "ok" or the error
#   m_rd OFF             32-bit register read through the mmio file
#   m_ww OFF VAL         32-bit register write through the mmio file
#   m_seq OPS            run OPS ("w OFF VAL; r OFF; wait NS") through mmio_seq,
#                        in the kernel with interrupts off; SEQ[] gets the
#                        result lines ("<op> <off> <val> <t0> <t1>")
#   seqf L N             field N (from 1) of result line L (from 0)

. "$(dirname "$0")/../lib.sh"
tap_require_lab

M_DBG=/sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00000000

# insmod/rmmod by path: modprobe's index lookups over 9p cost ~0.5 s each
# under TCG, and these tests load the model dozens of times.
M_KO=$(modinfo -n hwtel_sim_pcie 2>/dev/null)

# m_alone: the model is tested alone: unload it now and at exit, and fail
# the program if the driver is loaded (it would take the model's accesses)
m_alone()
{
	trap m_unload EXIT
	m_unload
	if grep -q '^ndk_pcie_tlm ' /proc/modules; then
		tap_fail "ndk_pcie_tlm is not loaded (the model is tested alone)"
		tap_done
	fi
}

m_unload()
{
	[ -d /sys/module/hwtel_sim_pcie ] && rmmod hwtel_sim_pcie
	[ -d /sys/module/hwtel_sim ] && rmmod hwtel_sim
	return 0
}

m_load()
{
	[ -d /sys/module/hwtel_sim_pcie ] && rmmod hwtel_sim_pcie
	[ -d /sys/module/hwtel_sim ] || modprobe hwtel_sim || return 1
	insmod "$M_KO" "$@"
}

# (bash builtins only where possible: every exec costs ~0.1 s under TCG)
m_reg()
{
	local n v

	while read -r n v; do
		[ "$n" = "$1" ] && echo "$v" && return
	done < "$M_DBG/regs"
}

m_cnt()
{
	local c

	mapfile -t c < "$M_DBG/counters"
	echo "${c[$1]#* }"
}

# sum of all live counters
m_cnt_sum()
{
	local n v s=0

	while read -r n v; do
		s=$((s + v))
	done < "$M_DBG/counters"
	echo "$s"
}

# stats on one line
m_stats()
{
	local l out=()

	while read -r l; do
		out+=("$l")
	done < "$M_DBG/stats"
	echo "${out[*]}"
}

m_wr()
{
	local err

	if err=$( (printf '%s\n' "$2" > "$M_DBG/$1") 2>&1); then
		echo ok
	else
		# "...: write error: Invalid argument" -> "Invalid argument"
		echo "${err##*: }"
	fi
}

m_rd()
{
	local v

	echo "$1" > "$M_DBG/mmio" && read -r v < "$M_DBG/mmio" && echo "$v"
}

m_ww()
{
	echo "$1 $2" > "$M_DBG/mmio"
}

m_seq()
{
	printf '%s\n' "$1" > "$M_DBG/mmio_seq" || return 1
	mapfile -t SEQ < "$M_DBG/mmio_seq"
}

seqf()
{
	local a

	read -ra a <<< "${SEQ[$1]}"
	echo "${a[$(($2 - 1))]}"
}

# Expected configuration registers for a topology, as "name 0xvalue" lines.
# m_expect_cfg EP PORTS RQ RC UP DOWN BRQ BRC BUP BDOWN ITEM WIDTH DRAIN TAGS FIFO
m_expect_cfg()
{
	local ep=$1 ports=$2 rq=$3 rc=$4 up=$5 down=$6 brq=$7 brc=$8 bup=$9
	local bdown=${10} item=${11} width=${12} drain=${13} tags=${14} fifo=${15}
	local rp rd pch dch cpe ent

	m_layout "$ep" "$ports" "$rq" "$rc" "$up" "$down"
	rp=$M_RP rd=$M_RD pch=$M_PCH dch=$M_DCH cpe=$M_CPE ent=$M_ENTRIES
	printf 'cfg_topology 0x%08x\n' $((ep | ports << 8 | 2 * ep << 16))
	printf 'cfg_layout 0x%08x\n' $((ent | width << 16 | cpe << 24))
	printf 'cfg_pcie 0x%08x\n' $((pch | 2 << 8 | rp << 16 | 14 << 24))
	printf 'cfg_dma 0x%08x\n' $((dch | 2 * ports << 8 | rd << 16))
	printf 'cfg_drain 0x%08x\n' $((drain | item << 16))
	printf 'cnt_base 0x%08x\n' $((0x8000))
	printf 'cfg_regions 0x%08x\n' $((rq | rc << 8 | up << 16 | down << 24))
	printf 'cfg_width 0x%08x\n' $((brq | brc << 16))
	printf 'cfg_hist 0x%08x\n' $((4 | 2 << 8))
	printf 'cfg_capacity 0x%08x\n' $((tags | fifo << 16))
	printf 'cfg_width_dma 0x%08x\n' $((bup | bdown << 16))
}

# m_layout EP PORTS RQ RC UP DOWN: sets M_RP M_RD M_PCH M_DCH M_CPE M_USED
# M_ENTRIES, the layout the contract derives from the topology
m_layout()
{
	M_RP=$(($3 > $4 ? $3 : $4))
	M_RD=$(($5 > $6 ? $5 : $6))
	M_PCH=$((1 + 2 * (6 + M_RP) + 14))
	M_DCH=$((1 + 2 * $2 * (6 + M_RD)))
	M_CPE=$((M_PCH + M_DCH))
	M_USED=$(($1 * M_CPE))
	M_ENTRIES=1
	while [ $M_ENTRIES -lt $M_USED ]; do M_ENTRIES=$((M_ENTRIES * 2)); done
}

# The configuration lines of the regs dump, in m_expect_cfg's order
m_actual_cfg()
{
	local n

	for n in cfg_topology cfg_layout cfg_pcie cfg_dma cfg_drain cnt_base \
		 cfg_regions cfg_width cfg_hist cfg_capacity cfg_width_dma; do
		echo "$n $(m_reg $n)"
	done
}
