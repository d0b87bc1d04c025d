#!/usr/bin/env bash
# Runs the libFuzzer targets of keyhaven-fuzz (docs/reliability.md).
#   scripts/fuzz.sh [SECONDS] [TARGET...]   each target for SECONDS (default 60); default: all
# Built with -sanitize=fuzzer,address in .build/fuzz. New inputs go to .build/fuzz/corpus/TARGET
# (seeded from Tests/FuzzCorpus/TARGET); a crash leaves crash-* in .build/fuzz/findings: copy it
# into Tests/FuzzCorpus/TARGET so the replay test keeps it. Touches no real keychain.
# Leak detection is off: LeakSanitizer reports the caches that live as long as the process
# (open keychains, remembered index hashes) as leaks; memory is bounded by -rss_limit_mb.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(metadata keybag agent query keys certificates imports sync ssh)
swift build --build-path .build/fuzz --product keyhaven-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DKEYHAVEN_FUZZING >/dev/null
binary="$(swift build --build-path .build/fuzz --show-bin-path)/keyhaven-fuzz"
export KEYHAVEN_HOME="$(mktemp -d)" XDG_RUNTIME_DIR="$(mktemp -d)"
trap 'rm -rf "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR"' EXIT
mkdir -p .build/fuzz/findings
status=0
for target in "${targets[@]}"; do
    corpus=".build/fuzz/corpus/$target"
    mkdir -p "$corpus"
    [ -d "Tests/FuzzCorpus/$target" ] && cp -n Tests/FuzzCorpus/"$target"/* "$corpus"/ 2>/dev/null || true
    log="$(mktemp)"
    if ASAN_OPTIONS=detect_leaks=0 KEYHAVEN_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -detect_leaks=0 \
        -artifact_prefix=.build/fuzz/findings/"$target"- "$corpus" >"$log" 2>&1; then
        runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo '?')"
        echo "fuzz $target: $runs executions in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs, no crash"
    else
        echo "fuzz $target: FAILED"; grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
        status=1
    fi
    rm -f "$log"
done
exit "$status"
