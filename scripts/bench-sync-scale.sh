#!/usr/bin/env bash
# Sync at scale (docs/benchmarks.md, "Sync at scale"): two release keyhaven-sync-server instances
# on one throw-away PostgreSQL cluster (fsync on), and `keyhaven-sync-bench idle` with DEVICES
# devices spread over both: the polls held, PostgreSQL's transactions while they idle (from
# pg_stat_database), each server's memory per 1,000 open polls (VmRSS before and with the polls),
# and the propagation of a change a second to a waiting device on either server.
#   scripts/bench-sync-scale.sh [DEVICES] [SECONDS]   defaults: 5000 devices, 30-second phases
set -euo pipefail
cd "$(dirname "$0")/.."
devices="${1:-5000}"
seconds="${2:-30}"
./scripts/bootstrap >/dev/null
swift build -c release --product keyhaven-sync-server >/dev/null
swift build -c release --product keyhaven-sync-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
folder="$(mktemp -d /tmp/keyhaven-bench-scale.XXXXXX)"
as_postgres=()
if [ "$(id -u)" = 0 ]; then chown postgres "$folder"; as_postgres=(runuser -u postgres --); fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    "${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
"${as_postgres[@]}" "$pgbin/initdb" -D "$folder/data" -U kc --auth=trust >/dev/null
"${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $folder -c max_connections=200" start </dev/null >/dev/null 2>&1
"${as_postgres[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U kc keyhaven
psql_value() { "${as_postgres[@]}" "$pgbin/psql" -h 127.0.0.1 -p "$port" -U kc -d keyhaven -Atc "$1"; }
transactions() { psql_value "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'keyhaven'"; }
urls=() metrics=()
for n in 1 2; do
    "$bin/keyhaven-sync-server" --database-url "postgres://kc@127.0.0.1:$port/keyhaven" --bind 127.0.0.1:0 --metrics 127.0.0.1:0 \
        --rate-limit 1000000 --log-level warning >"$folder/sync-server-$n.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q "listening on" "$folder/sync-server-$n.log" && grep -q "metrics on" "$folder/sync-server-$n.log" && break; sleep 0.1; done
    urls+=("http://$(grep -o 'listening on [0-9.:]*' "$folder/sync-server-$n.log" | cut -d' ' -f3)")
    metrics+=("http://$(grep -o 'metrics on [0-9.:]*' "$folder/sync-server-$n.log" | cut -d' ' -f3)/metrics")
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
metric() { curl -s "$1" | awk -v name="$2" '$1 == name {print $2}'; }
echo "two keyhaven-sync-server (release) at ${urls[*]}, PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'), $(nproc) cores, $devices devices"
out="$folder/bench.out"
KEYHAVEN_BENCH_METRICS="$(IFS=,; echo "${metrics[*]}")" \
    "$bin/keyhaven-sync-bench" idle "$(IFS=,; echo "${urls[*]}")" "$devices" "$seconds" >"$out" 2>&1 &
bench=$!
pids+=("$bench")
wait_for() { while ! grep -q "$1" "$out"; do kill -0 "$bench" 2>/dev/null || { cat "$out"; exit 1; }; sleep 0.1; done; }
wait_for "polls start in"
base=("$(rss "${pids[0]}")" "$(rss "${pids[1]}")")
wait_for "idle phase: start"
t0="$(transactions)" s0="$(date +%s.%N)"
held=("$(rss "${pids[0]}")" "$(rss "${pids[1]}")")
open=("$(metric "${metrics[0]}" keyhaven_sync_open_polls)" "$(metric "${metrics[1]}" keyhaven_sync_open_polls)")
wait_for "idle phase: end"
t1="$(transactions)" s1="$(date +%s.%N)"
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
python3 -c "import sys; t=int(sys.argv[2])-int(sys.argv[1]); s=float(sys.argv[4])-float(sys.argv[3]); print(f'PostgreSQL while idle: {t} transactions in {s:.1f} s: {t/s:.2f}/s in all, {t/s/2:.2f}/s per instance')" "$t0" "$t1" "$s0" "$s1"
exit "$status"
