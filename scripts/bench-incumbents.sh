#!/usr/bin/env bash
# The incumbents, measured in the same run on the same machine (docs/benchmarks.md): one lookup
# process each of `keyhaven find-generic-password -w` (agent running), `secret-tool lookup`
# (gnome-keyring-daemon, unlocked, headless in its own D-Bus session) and `pass show` (gpg key
# without a passphrase), each store holding 1,001 items; then in-process reads per second of
# Python's secretstorage on the same gnome-keyring. Then, in a second D-Bus session of the same
# run, `secret-tool lookup` against keyhavend --secret-service holding the same 1,001 items, and
# gnome-keyring's figure beside it again.
# Needs (Debian): gnome-keyring libsecret-tools pass gnupg dbus hyperfine, and pip's secretstorage.
# Everything lives in a temporary HOME: no real keyring, password store or keychain is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
items="${ITEMS:-1000}"
runs="${RUNS:-200}"
for tool in secret-tool gnome-keyring-daemon pass gpg dbus-run-session hyperfine; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install gnome-keyring libsecret-tools pass gnupg dbus hyperfine)"; exit 1; }
done
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven-pki >/dev/null
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export BENCH_BIN="$bin" BENCH_ITEMS="$items" BENCH_RUNS="$runs"
export HOME="$work/home" GNUPGHOME="$work/gnupg" PASSWORD_STORE_DIR="$work/password-store"
export KEYHAVEN_HOME="$work/keyhaven" XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/home/.local/share"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
mkdir -m 700 "$GNUPGHOME"

dbus-run-session -- bash -euo pipefail -c '
    echo -n bench-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    sleep 0.5
    # The same 1,001 items in each store.
    "$BENCH_BIN/keyhaven" create-keychain -p bench-password bench >/dev/null
    gpg --batch --passphrase "" --quick-gen-key bench@example.invalid default default never 2>/dev/null
    pass init bench@example.invalid >/dev/null
    for i in $(seq 1 "$BENCH_ITEMS"); do
        "$BENCH_BIN/keyhaven" add-generic-password -a "filler-$i" -s bench -w "x$i" bench
        echo -n "x$i" | secret-tool store --label="filler $i" service bench account "filler-$i"
        echo "x$i" | pass insert -e "bench/filler-$i" >/dev/null
    done
    "$BENCH_BIN/keyhaven" add-generic-password -a target -s bench -w the-secret bench
    echo -n the-secret | secret-tool store --label=target service bench account target
    echo the-secret | pass insert -e bench/target >/dev/null
    test "$("$BENCH_BIN/keyhaven" find-generic-password -a target -s bench -w bench)" = the-secret
    test "$(secret-tool lookup service bench account target)" = the-secret
    test "$(pass show bench/target)" = the-secret
    echo "machine: $(nproc) cores, $(uname -r); $(date -u +%Y-%m-%d); $((BENCH_ITEMS + 1)) items in each store"
    hyperfine -N --warmup 10 --runs "$BENCH_RUNS" \
        "$BENCH_BIN/keyhaven find-generic-password -a target -s bench -w bench" \
        "secret-tool lookup service bench account target" \
        "pass show bench/target" 2>&1 | grep -E "Benchmark|Time|Range|faster|±"
    py=python3
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import secretstorage" 2>/dev/null && py=/usr/bin/python3
    if "$py" -c "import secretstorage" 2>/dev/null; then
        "$py" - <<PY
import time, secretstorage
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
n = 500
start = time.perf_counter()
for _ in range(n):
    item = next(collection.search_items({"service": "bench", "account": "target"}))
    assert item.get_secret() == b"the-secret"
elapsed = time.perf_counter() - start
print(f"python secretstorage in process: {n / elapsed:.0f} reads/s ({elapsed / n * 1e6:.0f} us a read)")
PY
    else
        echo "python secretstorage: not installed (apt-get install python3-secretstorage)"
    fi
    "$BENCH_BIN/keyhaven" agent stop >/dev/null
    GK=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
        string:org.freedesktop.secrets | awk "/uint32/ {print \$2}")
    [ -n "$GK" ] && kill "$GK"
'

# The Secret Service: the same lookup by secret-tool, served by keyhavend --secret-service (the
# default keychain, unlocked, no password), with gnome-keyring measured again beside it.
export KEYHAVEN_HOME="$work/keyhaven-ss"
dbus-run-session -- bash -euo pipefail -c '
    "$BENCH_BIN/keyhavend" --secret-service > "$XDG_RUNTIME_DIR/ss.log" 2>&1 &
    for i in $(seq 100); do grep -q providing "$XDG_RUNTIME_DIR/ss.log" 2>/dev/null && break; sleep 0.1; done
    for i in $(seq 1 "$BENCH_ITEMS"); do
        echo -n "x$i" | secret-tool store --label="filler $i" service bench account "filler-$i"
    done
    echo -n the-secret | secret-tool store --label=target service bench account target
    test "$(secret-tool lookup service bench account target)" = the-secret
    echo "secret-tool against keyhavend --secret-service, $((BENCH_ITEMS + 1)) items:"
    hyperfine -N --warmup 10 --runs "$BENCH_RUNS" "secret-tool lookup service bench account target" 2>&1 | grep -E "Time|Range"
    "$BENCH_BIN/keyhaven" agent stop >/dev/null
'
export KEYHAVEN_HOME="$work/keyhaven"
dbus-run-session -- bash -euo pipefail -c '
    echo -n bench-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    sleep 0.5
    echo "secret-tool against gnome-keyring again (its items from the first session):"
    hyperfine -N --warmup 10 --runs "$BENCH_RUNS" "secret-tool lookup service bench account target" 2>&1 | grep -E "Time|Range"
    # The gnome-keyring of this bus only (pkill -f would match this shell itself).
    GK=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
        string:org.freedesktop.secrets | awk "/uint32/ {print \$2}")
    [ -n "$GK" ] && kill "$GK"
'
