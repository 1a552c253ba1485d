#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole fleet path with the real programs (issue 22): the DDR and PCIe
# exporters (the unit's exact ExecStart) write their textfiles, Debian's
# prometheus-node-exporter serves them with its textfile collector (every
# other collector off), Debian's prometheus scrapes it every second, and
# every query of the shipped Grafana dashboard (data/grafana/hwtel.json,
# the Grafana variables put in by promquery.py: [30s], [1m], .*) returns
# at least one series from Prometheus' HTTP API: one test per query, the
# query in its name. Every wait is for a condition, bounded: the textfiles,
# the servers' readiness, two scrapes of each exporter's series (rate()
# needs two samples), then each query. The waits and the queries run in
# seven python3 processes in all (promquery.py and two small ones), none
# per poll or per query: under TCG a python3 start costs a second or more.
# Both servers listen on 127.0.0.1 only, on ports free when the test
# starts, and keep their state under $T; the EXIT trap stops them.

. "$(dirname "$0")/../tool/tool_lib.sh"
. "$(dirname "$0")/fleet_lib.sh"

DASH=$HWTEL_SRC/data/grafana/hwtel.json
PQ=$FLEET/promquery.py
NODE_EXPORTER=/usr/bin/prometheus-node-exporter
PROMETHEUS=/usr/bin/prometheus
mapfile -t queries < <(python3 "$PQ" queries "$DASH")
PLAN=$((4 + ${#queries[@]}))

tool_need_modules $PLAN hwtel_sim_pcie ndk_pcie_tlm hwtel_sim_ddr marvell_cn10k_ddr_pmu
for x in "$NODE_EXPORTER" "$PROMETHEUS"; do
	if [ ! -x "$x" ]; then
		tap_plan $PLAN
		tap_skip_rest "$x missing (scripts/install-deps)"
	fi
done
tap_plan $PLAN

# the servers first (their own SIGTERM, then wait), then tool_lib's cleanup
PIDS=()
prom_cleanup()
{
	local p

	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	tool_cleanup
}
trap prom_cleanup EXIT

# two ports free now, one a line (both bound at once, so they differ)
free_ports()
{
	python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
for x in s:
    print(x.getsockname()[1])
'
}

# --- 1: the models, the drivers, the two exporters' first textfiles ------
pcie_up && ddr_up odyssey
r=$?
exporter pcie "" || tap_diag "no first pcie textfile: $(cat "$T/exp-pcie.err")"
PIDS+=("$EXP_PID")
exporter ddr "" || tap_diag "no first ddr textfile: $(cat "$T/exp-ddr.err")"
PIDS+=("$EXP_PID")
D=$(ddr_pmu_of odyssey)
echo "ddr_ddr_reads 100" > "$SIMDBG/$D/inject"
echo "ddr_ddr_writes 50" > "$SIMDBG/$D/inject"
tool_inject_known
tap_eq "the models and drivers loaded, both exporters wrote their textfile" "0 1 1" \
	"$r $(grep -c '^hwtel_pcie_clock_cycles_total' "$T/tf/hwtel-pcie.prom" | grep -c -v '^0$') $(grep -c '^hwtel_ddr_bytes_total' "$T/tf/hwtel-ddr.prom" | grep -c -v '^0$')"

# --- 2: node_exporter, its textfile collector only -----------------------
{ read -r NP; read -r PP; } < <(free_ports)
"$NODE_EXPORTER" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/tf" \
	--web.listen-address="127.0.0.1:$NP" 2> "$T/node.err" &
PIDS+=($!)
python3 "$PQ" get "http://127.0.0.1:$NP/metrics" 120 "hwtel_ddr_bytes_total{" \
	"hwtel_pcie_clock_cycles_total{" > "$T/node.metrics" ||
	tap_diag "$(cat "$T/node.metrics")"
tap_eq "node_exporter serves the textfiles: hwtel's series on /metrics, no textfile error" \
	"1 1 node_textfile_scrape_error 0" \
	"$(grep -c '^hwtel_ddr_bytes_total{' "$T/node.metrics" | grep -c -v '^0$') $(grep -c '^hwtel_pcie_clock_cycles_total{' "$T/node.metrics" | grep -c -v '^0$') $(grep '^node_textfile_scrape_error ' "$T/node.metrics")"

# --- 3: prometheus, scraping it every second -----------------------------
cat > "$T/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NP']
EOC
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PP" 2> "$T/prom.err" &
PIDS+=($!)
URL=http://127.0.0.1:$PP
python3 "$PQ" get "$URL/-/ready" 120 > "$T/ready.out" || tap_diag "$(cat "$T/ready.out")"
tap_check "prometheus is ready and its scrape of node_exporter is up" \
	python3 "$PQ" wait "$URL" 60 <<< 'up{job="node"} == 1'

# --- 4: two scrapes of each exporter's series (rate() needs two samples)
python3 "$PQ" wait "$URL" 60 > "$T/w.out" <<EOQ
min(count_over_time(hwtel_pcie_clock_cycles_total[30s])) >= 2
min(count_over_time(hwtel_ddr_bytes_total[30s])) >= 2
EOQ
tap_eq "prometheus holds two samples of the pcie and ddr series" 2 "$(grep -c '^ok ' "$T/w.out")"
grep -q -v '^ok ' "$T/w.out" && tap_diag "$(cat "$T/w.out")"

# --- 5-: every dashboard query returns data ------------------------------
printf '%s\n' "${queries[@]}" | python3 "$PQ" wait "$URL" 30 > "$T/q.out"
mapfile -t answers < "$T/q.out"
for i in "${!queries[@]}"; do
	q=${queries[$i]}
	a=${answers[$i]:-no answer: promquery.py ended early}
	if [[ "$a" == "ok "* ]]; then
		tap_ok "dashboard query returns data (${a#ok } series): $q"
	else
		tap_fail "dashboard query returns data: $q" "$a"
	fi
done

# stop them now, in order, and tell how they went
for p in "${PIDS[@]}"; do
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
PIDS=()
tap_diag "prometheus: $(grep -c -i 'level=error' "$T/prom.err") error lines; node_exporter: $(grep -c -i 'level=error' "$T/node.err") error lines"
tap_done
