#!/usr/bin/env bash
# One Ed25519 signature through keyhaven-ssh-agent against OpenSSH's ssh-agent, in the same run
# (issue 55's goal: at most 1.5 times OpenSSH's). A client keeps one connection to each agent and
# asks for ROUNDS signatures of 32 bytes one after the other; the figure is the median round trip.
# keyhaven-ssh-agent is measured with the key held in memory (ssh-add -t) and kept in the keychain
# (--keychain, the session agent's way), and with a key inside a TPM (keyhaven ssh new-key --tpm)
# when swtpm is installed: a throw-away swtpm the script starts and stops. Release build; SCRATCH
# chooses its build folder (default .build). Touches no real keychain, agent or TPM: temporary
# homes, runtime folders, sockets and TPM state.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-2000}"
scratch="${SCRATCH:-.build}"
build=(swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$scratch")
for product in keyhaven keyhavend keyhaven-pki keyhaven-ssh-agent; do "${build[@]}" --product "$product" >/dev/null; done
bin="$("${build[@]}" --show-bin-path)"
work="$(mktemp -d)"
export KEYHAVEN_HOME="$work/home" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR"
chmod 0700 "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; "$bin/keyhaven" agent stop >/dev/null 2>&1 || true; sleep 0.2; rm -rf "$work"' EXIT
if command -v swtpm >/dev/null; then
    mkdir -p "$work/tpm"
    port=$((20000 + RANDOM % 20000))
    swtpm socket --tpm2 --tpmstate dir="$work/tpm" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
        --ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear >/dev/null 2>&1 & pids+=($!)
    export KEYHAVEN_TPM="swtpm:host=127.0.0.1,port=$port"
    sleep 1
fi
ssh-keygen -q -t ed25519 -N "" -C bench -f "$work/id_ed25519"

cat > "$work/client.py" <<'PY'
import base64, os, socket, struct, sys, time
blob = base64.b64decode(open(sys.argv[1]).read().split()[1])
rounds = int(sys.argv[2])
def string(b): return struct.pack(">I", len(b)) + b
body = bytes([13]) + string(blob) + string(os.urandom(32)) + struct.pack(">I", 0)
frame = struct.pack(">I", len(body)) + body
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["SSH_AUTH_SOCK"])
times = []
for i in range(rounds + 100):
    start = time.perf_counter_ns()
    s.sendall(frame)
    header = s.recv(4, socket.MSG_WAITALL)
    reply = s.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)
    if reply[0] != 14: sys.exit("the agent did not sign")
    if i >= 100: times.append(time.perf_counter_ns() - start)
times.sort()
print("%.1f %.1f" % (times[len(times) // 2] / 1000, times[len(times) * 99 // 100] / 1000))
PY

measure() {  # NAME SOCKET VARIABLE [PUBLIC KEY]
    read -r p50 p99 < <(SSH_AUTH_SOCK="$2" /usr/bin/python3 "$work/client.py" "${4:-$work/id_ed25519.pub}" "$rounds")
    printf '| %s | %s | %s |\n' "$1" "$p50" "$p99"
    eval "p50_$3=$p50"
}

ssh-agent -D -a "$work/openssh.sock" >/dev/null 2>&1 & pids+=($!)
"$bin/keyhaven-ssh-agent" -D -a "$work/memory.sock" >/dev/null 2>&1 & pids+=($!)
"$bin/keyhaven-ssh-agent" -D --keychain -a "$work/keychain.sock" >/dev/null 2>&1 & pids+=($!)
for socket in openssh memory keychain; do
    for _ in $(seq 50); do [ -S "$work/$socket.sock" ] && break; sleep 0.1; done
done
SSH_AUTH_SOCK="$work/openssh.sock" ssh-add -q "$work/id_ed25519"
SSH_AUTH_SOCK="$work/memory.sock" ssh-add -q -t 3600 "$work/id_ed25519"
SSH_AUTH_SOCK="$work/keychain.sock" ssh-add -q "$work/id_ed25519"
if [ -n "${KEYHAVEN_TPM:-}" ]; then
    "$bin/keyhaven" ssh new-key bench-tpm --tpm > "$work/tpm.pub" 2>/dev/null
fi
# The measuring client is python, which the key items do not trust: the user trusts it.
"$bin/keyhaven" access grant -s keyhaven.ssh-key -T "$(readlink -f /usr/bin/python3)" >/dev/null 2>&1

echo "machine: $(nproc) cores, $(uname -r); $rounds signatures each, one connection, release build"
echo "| agent | p50 (us) | p99 (us) |"
echo "|---|---|---|"
measure "OpenSSH ssh-agent $(ssh -V 2>&1 | cut -d, -f1 | cut -d_ -f2)" "$work/openssh.sock" openssh
measure "keyhaven-ssh-agent, key in memory" "$work/memory.sock" memory
measure "keyhaven-ssh-agent --keychain, key in the keychain" "$work/keychain.sock" keychain
if [ -s "$work/tpm.pub" ]; then
    rounds=$(( rounds / 10 ))
    measure "keyhaven-ssh-agent --keychain, ECDSA P-256 key inside swtpm ($rounds signatures)" "$work/keychain.sock" tpm "$work/tpm.pub"
fi
python3 -c "print('ratio to OpenSSH (p50): in memory %.2f, in the keychain %.2f' % ($p50_memory / $p50_openssh, $p50_keychain / $p50_openssh))"
