#!/usr/bin/env bash
# Sync's benchmarks (docs/benchmarks.md, "Sync"): a release keyhaven-sync-server on a throw-away
# PostgreSQL cluster (scripts/bench-sync-setup.sh), then keyhaven-sync-bench against it:
#   the anchor (GET /v1/health: HTTP and one query), pushes with 20 devices on one account, pushes
#   with 1,000 accounts, and a push until a second device's long poll sees it.
#   scripts/bench-sync.sh [SECONDS]   each load runs SECONDS (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
source scripts/bench-sync-setup.sh
start_server 1
url="${urls[0]}"
echo "keyhaven-sync-server (release) at $url, PostgreSQL $postgres_version, $(nproc) cores"
"$bin/keyhaven-sync-bench" health "$url" "$seconds"
"$bin/keyhaven-sync-bench" devices "$url" 20 "$seconds"
"$bin/keyhaven-sync-bench" accounts "$url" 1000 "$seconds"
"$bin/keyhaven-sync-bench" visible "$url" 50
