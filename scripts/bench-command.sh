#!/usr/bin/env bash
# Measures one `keyhaven find-generic-password -w` process against a running agent (issue 5's
# goal: under 6 ms on the 2-core machine). Release build with the Swift runtime linked statically.
# Uses hyperfine when installed (apt-get install hyperfine), else a timed loop. Touches no real
# keychain: a temporary home and runtime folder.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-300}"
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
export KEYHAVEN_HOME="$(mktemp -d)" XDG_RUNTIME_DIR="$(mktemp -d)"
trap '"$bin/keyhaven" agent stop >/dev/null 2>&1 || true; rm -rf "$KEYHAVEN_HOME" "$XDG_RUNTIME_DIR" "${hello:-}"' EXIT
"$bin/keyhaven" create-keychain -p bench-pw bench >/dev/null
for i in $(seq 1 1000); do echo "add-generic-password -a filler-$i -s bench -w x$i bench"; done | while read -r line; do "$bin/keyhaven" $line; done
"$bin/keyhaven" add-generic-password -a target -s bench -w the-secret bench
command=("$bin/keyhaven" find-generic-password -a target -s bench -w bench)
test "$("${command[@]}")" = "the-secret"
echo "machine: $(nproc) cores, $(uname -r); keychain of 1001 items; agent running"
# The same-run anchor: a static Swift "hello", the floor of any Swift command here.
hello="$(mktemp -d)"
echo 'print("hello")' > "$hello/main.swift"
swiftc -O -static-stdlib "$hello/main.swift" -o "$hello/hello" 2>/dev/null
if command -v hyperfine >/dev/null; then
    hyperfine --warmup 20 --runs "$runs" -N "${command[*]}" "$hello/hello"
else
    start=$(date +%s%N)
    for _ in $(seq 1 "$runs"); do "${command[@]}" >/dev/null; done
    end=$(date +%s%N)
    echo "mean of $runs runs: $(( (end - start) / runs / 1000 )) us per find-generic-password -w process"
fi
