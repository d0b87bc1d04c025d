# Sourced by scripts/bench-sync.sh and scripts/bench-sync-scale.sh: release builds of the server
# and the load, a throw-away PostgreSQL cluster (initdb and pg_ctl in a temporary folder, a free
# loopback port, as the `postgres` user when run as root; fsync stays on), and servers on it.
# Everything started is stopped, and the folder removed, when the script exits.
./scripts/bootstrap >/dev/null
swift build -c release --product keyhaven-sync-server >/dev/null
swift build -c release --product keyhaven-sync-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
folder="$(mktemp -d /tmp/keyhaven-bench-sync.XXXXXX)"
as_postgres=()
if [ "$(id -u)" = 0 ]; then chown postgres "$folder"; as_postgres=(runuser -u postgres --); fi
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
pids=() urls=() metrics=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    "${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap cleanup EXIT
"${as_postgres[@]}" "$pgbin/initdb" -D "$folder/data" -U kc --auth=trust >/dev/null
"${as_postgres[@]}" "$pgbin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $folder -c max_connections=200" start </dev/null >/dev/null 2>&1
"${as_postgres[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U kc keyhaven
postgres_version="$("$pgbin/postgres" --version | awk '{print $3}')"

# start_server N: a server on a free port with its metrics; appends its pid, URL and metrics URL.
start_server() {
    local log="$folder/sync-server-$1.log"
    "$bin/keyhaven-sync-server" --database-url "postgres://kc@127.0.0.1:$port/keyhaven" --bind 127.0.0.1:0 --metrics 127.0.0.1:0 \
        --rate-limit 1000000 --log-level warning >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q "listening on" "$log" && grep -q "metrics on" "$log" && break; sleep 0.1; done
    urls+=("http://$(grep -o 'listening on [0-9.:]*' "$log" | cut -d' ' -f3)")
    metrics+=("http://$(grep -o 'metrics on [0-9.:]*' "$log" | cut -d' ' -f3)/metrics")
}
