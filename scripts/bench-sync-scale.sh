#!/usr/bin/env bash
# Sync at scale (docs/benchmarks.md, "Sync at scale"): two release keyhaven-sync-server instances
# on one throw-away PostgreSQL cluster (scripts/bench-sync-setup.sh), and `keyhaven-sync-bench idle` with DEVICES
# devices spread over both: the polls held, PostgreSQL's transactions while they idle (from
# pg_stat_database), each server's memory per 1,000 open polls (VmRSS before and with the polls),
# and the propagation of a change a second to a waiting device on either server.
#   scripts/bench-sync-scale.sh [DEVICES] [SECONDS]   defaults: 5000 devices, 30-second phases
set -euo pipefail
cd "$(dirname "$0")/.."
devices="${1:-5000}"
seconds="${2:-30}"
ulimit -n "$(ulimit -Hn)"
source scripts/bench-sync-setup.sh
psql_value() { "${as_postgres[@]}" "$pgbin/psql" -h 127.0.0.1 -p "$port" -U kc -d keyhaven -Atc "$1"; }
transactions() { psql_value "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'keyhaven'"; }
start_server 1
start_server 2
# The bytes the first server's connections received and sent so far (ss's per-socket counters).
server_bytes() {
    local server_port="${urls[0]##*:}"
    ss -tinH state established "( sport = :$server_port )" | grep -o 'bytes_\(acked\|received\):[0-9]*' \
        | awk -F: '{sum[$1] += $2} END {print sum["bytes_received"] + 0, sum["bytes_acked"] + 0}'
}
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
metric() { curl -s "$1" | awk -v name="$2" '$1 == name {print $2}'; }
echo "two keyhaven-sync-server (release) at ${urls[*]}, PostgreSQL $postgres_version, $(nproc) cores, $devices devices"
out="$folder/bench.out"
KEYHAVEN_BENCH_METRICS="$(IFS=,; echo "${metrics[*]}")" \
    "$bin/keyhaven-sync-bench" idle "$(IFS=,; echo "${urls[*]}")" "$devices" "$seconds" >"$out" 2>&1 &
bench=$!
pids+=("$bench")
wait_for() { while ! grep -q "$1" "$out"; do kill -0 "$bench" 2>/dev/null || { cat "$out"; exit 1; }; sleep 0.1; done; }
wait_for "polls start in"
base=("$(rss "${pids[0]}")" "$(rss "${pids[1]}")")
wait_for "idle phase: start"
t0="$(transactions)" s0="$(date +%s.%N)" b0="$(server_bytes)"
held=("$(rss "${pids[0]}")" "$(rss "${pids[1]}")")
open=("$(metric "${metrics[0]}" keyhaven_sync_open_polls)" "$(metric "${metrics[1]}" keyhaven_sync_open_polls)")
wait_for "idle phase: end"
t1="$(transactions)" s1="$(date +%s.%N)" b1="$(server_bytes)"
without=("$(metric "${metrics[0]}" keyhaven_sync_polls_without_query_total)" "$(metric "${metrics[1]}" keyhaven_sync_polls_without_query_total)")
status=0
wait "$bench" || status=$?
cat "$out"
for n in 0 1; do
    python3 - "$n" "${base[$n]}" "${held[$n]}" "${open[$n]}" "${without[$n]}" <<'PY'
import sys
n, base, held, open_polls, without = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4] or 0), sys.argv[5] or "0"
per = (held - base) / (open_polls / 1000) if open_polls else float("nan")
print(f"server {n + 1}: {open_polls:.0f} open polls; RSS {base / 1024:.1f} MiB without them, {held / 1024:.1f} MiB with them: {per / 1024:.2f} MiB per 1,000; polls answered without a query: {without}")
PY
done
python3 -c "import sys; r0, s0, r1, s1, n, t = map(float, sys.argv[1:]); print(f'server 1 while idle: {(r1 - r0) / n / t:.1f} bytes/s received and {(s1 - s0) / n / t:.1f} bytes/s sent per open poll (TCP payload, plain HTTP)')" $b0 $b1 "${open[0]}" "$(python3 -c "print($s1 - $s0)")"
python3 -c "import sys; t=int(sys.argv[2])-int(sys.argv[1]); s=float(sys.argv[4])-float(sys.argv[3]); print(f'PostgreSQL while idle: {t} transactions in {s:.1f} s: {t/s:.2f}/s in all, {t/s/2:.2f}/s per instance')" "$t0" "$t1" "$s0" "$s1"
exit "$status"
