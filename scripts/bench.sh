#!/usr/bin/env bash
# Runs the benchmarks in Benchmarks/ (package-benchmark, release build) and reports them.
#   scripts/bench.sh          every benchmark at 1,000, 10,000 and 100,000 items, then the command
#                             against the agent (scripts/bench-command.sh) and the library through
#                             it (scripts/bench-agent.sh); writes the results
#                             into docs/benchmarks.md between its "bench:begin" and "bench:end" marks
#   scripts/bench.sh --quick  copy-matching and the floor at 10,000 items only; ends with one line:
#                             floor ratio R (copy-matching p50 A us vs raw B us at 10000 items)
# Keychains are built in Benchmarks/.fixtures (kept between runs: 100,000 adds take minutes);
# KEYHAVEN_HOME points there, never at the user's keychain.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
[ "${1:-}" = "--quick" ] && quick=true
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export KEYHAVEN_BENCH_FIXTURES="$PWD/Benchmarks/.fixtures"
if $quick; then
    export KEYHAVEN_BENCH_QUICK=1
    (cd Benchmarks && swift package --disable-sandbox benchmark --filter '^(copy-matching|floor read) 10000$' --no-progress) >"$log" 2>&1 \
        || { tail -30 "$log"; exit 1; }
else
    # The agent benchmarks start this keyhavend. Stale Security modules make a rebuilt X509 fail
    # (docs/porting.md, section 5): drop them first.
    find .build Benchmarks/.build -path '*/Modules/Security.*' -delete 2>/dev/null || true
    swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
    export KEYHAVEN_BENCH_AGENT="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)/keyhavend"
    (cd Benchmarks && swift package --disable-sandbox benchmark --no-progress) >"$log" 2>&1 || { tail -30 "$log"; exit 1; }
fi

# p50 of the wall-clock row of one benchmark, in microseconds.
p50() {
    awk -v name="$1" '
        $0 == name { found = 1; next }
        found && /Time \(wall clock\)/ {
            split($0, cells, "│"); value = cells[5]; gsub(/[ ,]/, "", value)
            if ($0 ~ /\(ns\)/) value = value / 1000; else if ($0 ~ /\(ms\)/) value = value * 1000
            print value; exit
        }' "$log"
}

if ! $quick; then
    table="$(mktemp)"
    {
        echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -r)), release build, \`scripts/bench.sh\`."
        echo "p50 of the wall-clock time per call, in microseconds; \"x floor\" divides by the floor at the same size."
        echo
        echo "| benchmark | p50 (us) | x floor |"
        echo "|---|---|---|"
        grep -E '^(copy-matching|floor read|floor write|add|update|delete|match-limit-all|keyhaven|key|agent) |^unlock$' "$log" | sort -u | while read -r name; do
            value="$(p50 "$name")"
            size="${name##* }"
            case "$name" in
                copy-matching*|"agent copy-matching"*) floor="$(p50 "floor read $size")" ;;
                add*|update*|delete*|"agent add"*|"agent update"*|"agent delete"*) floor="$(p50 "floor write $size")" ;;
                *) floor="" ;;
            esac
            ratio=""
            [ -n "$floor" ] && ratio="$(awk -v a="$value" -v b="$floor" 'BEGIN { printf "%.1f", a / b }')"
            echo "| $name | $value | $ratio |"
        done
    } >"$table"
    awk -v table="$table" '
        /<!-- bench:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
        /<!-- bench:end -->/ { skip = 0 }
        !skip { print }' docs/benchmarks.md >"$table.doc" && mv "$table.doc" docs/benchmarks.md
    rm -f "$table"
    cat docs/benchmarks.md | sed -n '/bench:begin/,/bench:end/p'
    bash scripts/bench-command.sh
    # What a program sees through the agent, against in process and the echo (docs/benchmarks.md, "Through the agent").
    bash scripts/bench-agent.sh
    # The agent's resident memory serving the 100,000-item keychain, after 200 look-ups.
    (
        bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
        export KEYHAVEN_HOME="$KEYHAVEN_BENCH_FIXTURES/items-100000" XDG_RUNTIME_DIR="$(mktemp -d)"
        trap '"$bin/keyhaven" agent stop >/dev/null 2>&1 || true; rm -rf "$XDG_RUNTIME_DIR"' EXIT
        "$bin/keyhaven" agent start >/dev/null
        for i in $(seq 1 200); do "$bin/keyhaven" find-generic-password -a "account-$((i * 397 % 100000))" -s bench -w >/dev/null; done
        pid="$("$bin/keyhaven" agent status | grep -o 'pid [0-9]*' | cut -d' ' -f2)"
        echo "agent resident memory with 100000 items: $(awk '/VmRSS/ { print $2, $3 }' "/proc/$pid/status")"
    )
fi

a="$(p50 "copy-matching 10000")"
b="$(p50 "floor read 10000")"
awk -v a="$a" -v b="$b" 'BEGIN { printf "floor ratio %.1f (copy-matching p50 %s us vs raw %s us at 10000 items)\n", a / b, a, b }'
