#!/usr/bin/env bash
# Runs the reliability suite (Tests/ReliabilityTests) in its long variant and prints the counts
# docs/reliability.md records: SIGKILLs survived, operations checked, bytes flipped.
# Touches no real keychain: every test has its own temporary KEYHAVEN_HOME.
#   scripts/reliability.sh          the long variant (KEYHAVEN_RELIABILITY=full), some minutes
#   scripts/reliability.sh --quick  the variant CI runs
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--quick" ]; then export KEYHAVEN_RELIABILITY=full; fi
export KEYHAVEN_HOME="$(mktemp -d)" XDG_RUNTIME_DIR="$(mktemp -d)"
trap 'rm -rf "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR"' EXIT
swift build --build-tests >/dev/null
log="$(mktemp)"
status=0
swift test --skip-build --filter ReliabilityTests >"$log" 2>&1 || status=$?
grep -E '^reliability: ' "$log" | sed 's/^reliability: //' || true
grep -E '✘|Test run with' "$log" | tail -5
rm -f "$log"
echo "machine: $(nproc) cores, $(uname -r); $(date -u +%Y-%m-%d)"
exit "$status"
