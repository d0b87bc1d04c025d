#!/usr/bin/env bash
# A P-256 signature with a Secure Enclave key in the TPM against the same with a keychain key,
# both through keyhavend, in one run (docs/benchmarks.md, "Signing with a TPM key"). Starts a
# throw-away swtpm (a software TPM: a hardware TPM is slower) unless KEYHAVEN_TPM names a TPM, builds
# keyhavend and keyhaven-agent-bench in release mode and runs `keyhaven-agent-bench --only enclave`;
# its other arguments are passed on (--rounds, --batch). KEYHAVEN_HOME and XDG_RUNTIME_DIR are
# temporary folders, never the user's keychain or agent.
set -euo pipefail
cd "$(dirname "$0")/.."
find .build -path '*/Modules/Security.*' -delete 2>/dev/null || true
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven-agent-bench >/dev/null
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
export XDG_RUNTIME_DIR="$(mktemp -d)" KEYHAVEN_HOME="$(mktemp -d)"
state="$(mktemp -d)"
swtpm_pid=""
cleanup() {
    [ -n "$swtpm_pid" ] && kill -9 "$swtpm_pid" 2>/dev/null || true
    rm -rf "$XDG_RUNTIME_DIR" "$KEYHAVEN_HOME" "$state"
}
trap cleanup EXIT
if [ -z "${KEYHAVEN_TPM:-}" ]; then
    port=$(( 20000 + RANDOM % 20000 ))
    swtpm socket --tpm2 --tpmstate dir="$state" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
        --ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
    swtpm_pid=$!
    export KEYHAVEN_TPM="swtpm:host=127.0.0.1,port=$port"
    for _ in $(seq 100); do TPM2TOOLS_TCTI="$KEYHAVEN_TPM" tpm2_getcap properties-fixed >/dev/null 2>&1 && break; sleep 0.05; done
fi
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
"$bin/keyhaven-agent-bench" --agent "$bin/keyhavend" --only enclave "$@"
