#!/usr/bin/env bash
# Instructions a call costs the agent, counted by valgrind's callgrind (docs/benchmarks.md,
# "Instructions per call"): a look-up through keyhavend and the agent's echo, beside
# the whole look-up in process, on the same keychain and the same items; or an update of one item's
# data through keyhavend beside the whole update in process.
#   scripts/bench-agent-instructions.sh [SIZE]          at SIZE items (10000)
#   scripts/bench-agent-instructions.sh SIZE update     updates instead of look-ups
#   scripts/bench-agent-instructions.sh SIZE add        adds (of new items, left in the fixture of this run only)
# Through the agent, keyhavend runs under callgrind and the client (keyhaven-agent-bench --only
# count) natively: valgrind's LD_PRELOAD would make the client a tampered program to the agent, so
# the client's half is not counted. In process, the bench itself runs under callgrind. Each runs
# twice, with N and 2N calls; the difference divided by N is one call, start-up (the agent hashing
# the client's executable) and the warm-up cancelled out. Needs valgrind (Debian: valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-10000}"
work="${2:-copy}"
case "$work" in copy|update|add) ;; *) echo "usage: $0 [SIZE] [copy|update|add]" >&2; exit 2 ;; esac
n=1000
[ "$work" != copy ] && n=200  # each a durable transaction, and many more instructions
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhavend >/dev/null
swift build -c release --static-swift-stdlib --disable-local-rpath --product keyhaven-agent-bench >/dev/null
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)"
tmp="$(mktemp -d)"
export SWIFT_DETERMINISTIC_HASHING=1
export XDG_RUNTIME_DIR="$tmp/runtime" KEYHAVEN_HOME="$tmp/home"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$KEYHAVEN_HOME"
trap 'rm -rf "$tmp"' EXIT
# valgrind cannot read the DWARF 5 that Swift's toolchain writes; symbols are enough to count.
cp "$bin/keyhavend" "$bin/keyhaven-agent-bench" "$tmp/"
strip -g "$tmp/keyhavend" "$tmp/keyhaven-agent-bench"
# The agent restarts itself with this glibc tunable unless it is set (docs/threat-model.md, "The
# agent's memory"); set here, so that the process valgrind runs is the one that serves.
cat > "$tmp/keyhavend-callgrind" <<WRAPPER
#!/bin/sh
export GLIBC_TUNABLES=glibc.malloc.tcache_count=0
# The agent's thread polls for the next request before it sleeps; what it spends polling depends
# on timing, not on the work, so it does not poll here.
export KEYHAVEN_AGENT_SPIN_US=0
exec valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$tmp/keyhavend" "\$@" 2>"$tmp/log"
WRAPPER
chmod +x "$tmp/keyhavend-callgrind"
# A keychain of its own, built before the counted runs by the copy that is counted: in process,
# its items are those of the program that made them (its application group names its path).
bench="$tmp/keyhaven-agent-bench"
"$bench" --only count --route process --work copy --calls 1 --sizes "$size" --fixtures "$tmp/fixtures" >/dev/null

collected() {  # the count callgrind wrote in its log, or a stop saying why there is none
    if grep -q 'unhandled' "$tmp/log"; then
        echo "valgrind could not run a system call of the program counted:" >&2
        grep -m1 unhandled "$tmp/log" >&2
        exit 1
    fi
    grep -o 'Collected : [0-9]*' "$tmp/log" | grep -o '[0-9]*' || { echo "callgrind counted nothing:" >&2; tail -5 "$tmp/log" >&2; exit 1; }
}
count() {  # work calls -> the agent's instructions over its whole run
    "$bench" --only count --work "$1" --calls "$2" --sizes "$size" --fixtures "$tmp/fixtures" --agent "$tmp/keyhavend-callgrind" >/dev/null
    collected
}
in_process() {  # calls -> the instructions of the whole run in process
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bench" --only count --route process \
        --work "$work" --calls "$1" --sizes "$size" --fixtures "$tmp/fixtures" >/dev/null 2>"$tmp/log"
    collected
}
per_call() { echo $(( ($("$@" $((2 * n))) - $("$@" "$n")) / n )); }

p="$(per_call in_process)"
a="$(per_call count "$work")"
if [ "$work" != copy ]; then
    echo "$work in process: $p instructions a call; in the agent: $work $a ($size items)"
else
    b="$(per_call count echo)"
    echo "copy-matching in process: $p instructions a call; in the agent: copy-matching $a, echo $b ($size items)"
fi
