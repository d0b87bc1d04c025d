#!/usr/bin/env bash
# What a SecItem call costs through keyhavend, against the same call in process and against a
# bare echo on the agent's socket (docs/benchmarks.md, "Through the agent"). Builds keyhavend and
# keyhaven-agent-bench in release mode and runs the bench; its arguments are passed on, e.g.
#   scripts/bench-agent.sh                                   latency at 1,000, 10,000 and 100,000 items, then 50 clients
#                                                            looking items up, then the same 50 sending echoes
#   scripts/bench-agent.sh --only latency --sizes 10000      one size
#   KEYHAVEN_AGENT_POLL_US=0 scripts/bench-agent.sh          clients that never poll for answers (the "before")
#   scripts/bench-agent.sh --only codec --sizes 10000 --rounds 30   the protocol's encoding and decoding alone
# Keychains are built in Benchmarks/.fixtures/agent-bench (kept between runs); KEYHAVEN_HOME and
# XDG_RUNTIME_DIR point at temporary folders, never at the user's keychain or agent.
set -euo pipefail
cd "$(dirname "$0")/.."
find .build -path '*/Modules/Security.*' -delete 2>/dev/null || true
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven-agent-bench >/dev/null
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
export KEYHAVEN_BENCH_FIXTURES="${KEYHAVEN_BENCH_FIXTURES:-$PWD/Benchmarks/.fixtures}"
export XDG_RUNTIME_DIR="$(mktemp -d)" KEYHAVEN_HOME="$(mktemp -d)"
trap 'rm -rf "$XDG_RUNTIME_DIR" "$KEYHAVEN_HOME"' EXIT
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
"$bin/keyhaven-agent-bench" --agent "$bin/keyhavend" "$@"
