#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hwtel_sim_pcie alone (no driver): the configuration registers and the
# counter numbering of several topologies (2 endpoints with 2 ports and 4
# regions, mixed regions and widths with padding, 16 endpoints with CNT_WIDTH
# 33, CNT_WIDTH 64, the largest layout), wrong MAGIC/VERSION, and the
# validation of every parameter (EINVAL plus a dmesg line).

. "$(dirname "$0")/model_lib.sh"

m_alone
EINVAL="Invalid argument"

# --- topologies -------------------------------------------------------------
tap_check "load 2 ep, 2 ports, 4 regions, 2 instances" \
	m_load instances=2 endpoints=2 dma_ports=2 regions_up=4 regions_down=4
tap_eq "regs of 2/2/4" "$(m_expect_cfg 2 2 4 4 4 4 32 32 32 32 4 48 4096 256 1024)" \
	"$(m_actual_cfg)"
tap_check "second instance at base + 0x100000" \
	test -d /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000
tap_check "second platform device ndk-pcie-tlm-sim.1" \
	test -e /sys/bus/platform/devices/ndk-pcie-tlm-sim.1
echo "words,ep=0,bus=0 9" > /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000/inject
echo lost_delta > /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000/flags
tap_eq "instances are independent" "0 0 0x00000000" \
	"$(m_cnt_sum) $(m_cnt 1) $(m_reg status)"
tap_eq "... the other one got it" "9 0x00000002" \
	"$(sed -n 's/^1 //p' /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000/counters) $(awk '$1 == "status" { print $2 }' /sys/kernel/debug/hwtel-sim/ndk_pcie_tlm_3fff00100000/regs)"
m_layout 2 2 4 4 4 4
tap_eq "counters lists endpoints * counters_per_ep" "$M_USED" \
	"$(wc -l < "$M_DBG/counters")"
e=$((M_CPE + M_PCH + 1 + 3 * 10 + 6 + 3))
tap_eq "region of DOWN of port 1 on ep 1" ok "$(m_wr inject "region,ep=1,bus=5,idx=3 77")"
tap_eq "... at entry $e" 77 "$(m_cnt $e)"
tap_eq "bus 6 does not exist" "$EINVAL" "$(m_wr inject "words,ep=1,bus=6 1")"
tap_eq "endpoint 1 status" 0x0000026a "$(m_reg pcie_status1)"

tap_check "load 1 ep, 3 ports, regions 2/4/1/3, bytes 16/64/8/128, items 8 B" \
	m_load dma_ports=3 regions_rq=2 regions_rc=4 regions_up=1 regions_down=3 \
	bytes_rq=16 bytes_rc=64 bytes_up=8 bytes_down=128 item_bytes=8
tap_eq "regs of the mixed topology" \
	"$(m_expect_cfg 1 3 2 4 1 3 16 64 8 128 8 48 4096 256 1024)" "$(m_actual_cfg)"
tap_eq "padding region of RQ rejected" "$EINVAL" \
	"$(m_wr inject "region,ep=0,bus=0,idx=2 1")"
tap_eq "real region 3 of RC accepted" ok "$(m_wr inject "region,ep=0,bus=1,idx=3 1")"
tap_eq "padding region of UP rejected" "$EINVAL" \
	"$(m_wr inject "region,ep=0,bus=6,idx=1 1")"
tap_eq "real region 2 of DOWN of port 2 accepted" ok \
	"$(m_wr inject "region,ep=0,bus=7,idx=2 1")"

tap_check "load 16 endpoints, CNT_WIDTH 33, DRAIN 1024, capacities 64/4096" \
	m_load endpoints=16 cnt_width=33 drain_period=1024 tag_capacity=64 stfifo_capacity=4096
tap_eq "regs of 16/33" "$(m_expect_cfg 16 1 4 4 2 2 32 32 32 32 4 33 1024 64 4096)" \
	"$(m_actual_cfg)"
tap_eq "endpoint 15 registers" "0x0000026a 0x00400040 0x10001000" \
	"$(m_rd 0x7c) $(m_rd 0xbc) $(m_rd 0xfc)"
tap_eq "set 2^33-1 on the last entry" ok "$(m_wr set "raw,idx=831 8589934591")"
tap_eq "inject wraps at 2^33" ok "$(m_wr inject "raw,idx=831 8589934594")"
tap_eq "wrapped value" 1 "$(m_cnt 831)"
tap_eq "set 2^33 rejected" "$EINVAL" "$(m_wr set "raw,idx=831 8589934592")"
tap_eq "raw,idx=832 is beyond the used entries" "$EINVAL" "$(m_wr inject "raw,idx=832 1")"

tap_check "load CNT_WIDTH 64" m_load cnt_width=64
tap_eq "layout has width 64" 0x34400040 "$(m_reg cfg_layout)"
tap_eq "set 2^64-1" ok "$(m_wr set "items,ep=0,bus=3 18446744073709551615")"
m_ww 0x28 1
tap_eq "high word of a 64-bit counter" "0xffffffff 0xffffffff" \
	"$(m_rd $((0x8000 + 8 * 49))) $(m_rd $((0x8000 + 8 * 49 + 4)))"
tap_eq "inject 1 wraps to 0" ok "$(m_wr inject "items,ep=0,bus=3 1")"
tap_eq "wrapped at 2^64" 0 "$(m_cnt 49)"

tap_check "load with a wrong MAGIC and version 3.1" m_load magic=0x12345678 version=0x30001
tap_eq "MAGIC and VERSION as given" "0x12345678 0x00030001" \
	"$(m_reg magic) $(m_reg version)"

# --- parameter validation -------------------------------------------------
m_unload
modprobe hwtel_sim
mark=$(dmesg_mark)
bad=0
n=0
for p in endpoints=0 endpoints=17 instances=0 instances=17 dma_ports=0 \
	 cnt_width=32 cnt_width=65 drain_period=0 drain_period=3000 \
	 drain_period=65536 regions_rq=0 regions_down=256 bytes_up=30 \
	 bytes_rc=0 item_bytes=0 tag_capacity=0 stfifo_capacity=65536 \
	 pcie_mhz=0 speedup=0 speedup=101 profile=nope regions_rq=115 \
	 "dma_ports=10 regions_up=8"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	if out=$(insmod "$M_KO" $p 2>&1); then
		bad=1
		tap_diag "$p was accepted"
		rmmod hwtel_sim_pcie
	elif [ "${out%Invalid parameters}" = "$out" ]; then
		# kmod's insmod prints "Invalid parameters" for EINVAL only
		bad=1
		tap_diag "$p: $out"
	fi
done
tap_eq "one 'invalid parameters' dmesg line per rejected load" "$n" \
	"$(dmesg_since "$mark" | grep -c "hwtel_sim_pcie: invalid parameters")"
tap_eq "bad parameters fail with EINVAL" 0 "$bad"
tap_check "the largest topology loads (16 ep, 254 counters per ep)" \
	m_load endpoints=16 dma_ports=1 regions_up=103 regions_down=1
tap_eq "... with 4096 entries" 0xfe301000 "$(m_reg cfg_layout)"

tap_done
