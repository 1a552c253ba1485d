#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded generic netlink fuzz of the ndk_pcie_tlm family
# (selftests/fuzz/nl_fuzz), as root and as nobody at the same time. Budget
# per sender from HWTEL_FUZZ_NL_ITERS, default 5000 on the debug kernel
# (10^4 messages in all) and 2500 elsewhere; HWTEL_FUZZ_SECONDS bounds the
# time instead. HWTEL_FUZZ_SEED replays a printed seed.

. "$(dirname "$0")/fuzz_lib.sh"

trap fz_unload EXIT

if ! fz_load; then
	tap_plan 1
	tap_fail "models and drivers load"
	tap_done
fi
args=(--seed "$FZ_SEED")
if [ -n "${HWTEL_FUZZ_SECONDS:-}" ]; then
	args+=(--seconds "$HWTEL_FUZZ_SECONDS")
else
	args+=(--iters "${HWTEL_FUZZ_NL_ITERS:-$(fz_budget 5000 2500)}")
fi
echo "# replay: HWTEL_FUZZ_SEED=$FZ_SEED (or nl_fuzz ${args[*]})"
"$FZ_BIN/nl_fuzz" "${args[@]}"
