#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded perf_event_open fuzz of both hwtel PMUs (selftests/fuzz/perf_fuzz):
# 2 threads plus CPU hotplug. Budget per thread from HWTEL_FUZZ_ITERS
# (operations; about 36 % are perf_event_open calls), default 140000 on the
# debug kernel (about 10^5 opens in all) and 70000 elsewhere (15 s on 6.12
# under TCG);
# HWTEL_FUZZ_SECONDS bounds the time instead (make fuzz). The seed is
# printed; HWTEL_FUZZ_SEED replays it. See Documentation/dev-tools/hwtel-fuzz.rst.

. "$(dirname "$0")/fuzz_lib.sh"

trap 'fz_online; fz_unload' EXIT

if ! fz_load; then
	tap_plan 1
	tap_fail "models and drivers load"
	tap_done
fi
args=(--seed "$FZ_SEED" --threads "${HWTEL_FUZZ_THREADS:-2}")
if [ -n "${HWTEL_FUZZ_SECONDS:-}" ]; then
	args+=(--seconds "$HWTEL_FUZZ_SECONDS")
else
	args+=(--iters "${HWTEL_FUZZ_ITERS:-$(fz_budget 140000 70000)}")
fi
echo "# replay: HWTEL_FUZZ_SEED=$FZ_SEED (or perf_fuzz ${args[*]})"
"$FZ_BIN/perf_fuzz" "${args[@]}"
