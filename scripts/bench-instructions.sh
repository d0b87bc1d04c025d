#!/usr/bin/env bash
# Instructions per look-up, counted by valgrind's callgrind: unlike time on a shared virtual
# machine, the counts repeat exactly, so they show what a change to the code did.
#   scripts/bench-instructions.sh [SIZE]   copy-matching and the floor's read at SIZE items (10000)
# Each operation runs twice under callgrind, with N and 2N iterations; the difference divided by
# N is the cost of one iteration, start-up and fixture set-up cancelled out. Swift's hashing is
# made deterministic and the accounts come from a fixed sequence, so two runs count the same.
# Needs valgrind (Debian: valgrind). Uses the benchmarks' fixtures (Benchmarks/.fixtures).
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-10000}"
n=2000
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
export KEYHAVEN_BENCH_FIXTURES="$PWD/Benchmarks/.fixtures" KEYHAVEN_AGENT=off SWIFT_DETERMINISTIC_HASHING=1
# The fixtures' items belong to the access group of the benchmark executable that made them.
export KEYHAVEN_ACCESS_GROUPS=SecItem
(cd Benchmarks && swift build -c release --product bench-instructions >/dev/null)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the DWARF 5 that Swift's toolchain writes; symbols are enough to count.
cp "$(cd Benchmarks && swift build -c release --show-bin-path)/bench-instructions" "$work/bench-instructions"
strip -g "$work/bench-instructions"
# The fixture exists before the counted runs (building it is not part of either).
"$work/bench-instructions" copy-matching "$size" 1 >/dev/null

count() {  # operation iterations -> instructions of the whole run
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bench-instructions" "$1" "$size" "$2" \
        >/dev/null 2>"$work/log"
    grep -o 'Collected : [0-9]*' "$work/log" | grep -o '[0-9]*'
}
per_iteration() { echo $(( ($(count "$1" $((2 * n))) - $(count "$1" "$n")) / n )); }

a="$(per_iteration copy-matching)"
b="$(per_iteration floor-read)"
echo "copy-matching: $a instructions a call; floor read: $b ($size items)"
echo "instruction ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a / b }') (copy-matching vs floor at $size items)"
