#!/usr/bin/env bash
# Sync's benchmarks (docs/benchmarks.md, "Sync"): a release keyhaven-sync-server on a throw-away
# PostgreSQL cluster (initdb and pg_ctl in a temporary folder, a free loopback port, as the
# `postgres` user when run as root; fsync stays on), then keyhaven-sync-bench against it:
#   the anchor (GET /v1/health: HTTP and one query), pushes with 20 devices on one account, pushes
#   with 1,000 accounts, and a push until a second device's long poll sees it.
#   scripts/bench-sync.sh [SECONDS]   each load runs SECONDS (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
./scripts/bootstrap >/dev/null
swift build -c release --product keyhaven-sync-server >/dev/null
swift build -c release --product keyhaven-sync-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
folder="$(mktemp -d /tmp/keyhaven-bench-sync.XXXXXX)"
as_postgres=()
if [ "$(id -u)" = 0 ]; then chown postgres "$folder"; as_postgres=(runuser -u postgres --); fi
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    "${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap cleanup EXIT
"${as_postgres[@]}" "$pgbin/initdb" -D "$folder/data" -U kc --auth=trust >/dev/null
"${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $folder -c max_connections=200" start </dev/null >/dev/null 2>&1
"${as_postgres[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U kc keyhaven
"$bin/keyhaven-sync-server" --database-url "postgres://kc@127.0.0.1:$port/keyhaven" --bind 127.0.0.1:0 \
    --rate-limit 1000000 --log-level warning >"$folder/sync-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$folder/sync-server.log" && break; sleep 0.1; done
url="http://$(grep -o 'listening on [0-9.:]*' "$folder/sync-server.log" | cut -d' ' -f3)"
echo "keyhaven-sync-server (release) at $url, PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'), $(nproc) cores"
"$bin/keyhaven-sync-bench" health "$url" "$seconds"
"$bin/keyhaven-sync-bench" devices "$url" 20 "$seconds"
"$bin/keyhaven-sync-bench" accounts "$url" 1000 "$seconds"
"$bin/keyhaven-sync-bench" visible "$url" 50
