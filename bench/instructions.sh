#!/usr/bin/env bash
# User-space instructions per JSON-RPC SendMessage, counted by valgrind (cachegrind, no cache
# simulation). Unlike CPU time on a shared machine, the count repeats to within about 0.3 % for
# the same binary, so it can tell a 1 % change from noise. The kernel's share is not counted.
#
#   bench/instructions.sh                        # target/release/agentwire, 5 s of load
#   bench/instructions.sh path/to/agentwire 10   # another build, 10 s
#   BENCH_STORE=sqlite bench/instructions.sh     # on a fresh SQLite store instead of memory
#
# Needs valgrind and a built loadgen (`bench/run.sh` builds both binaries; valgrind comes from the
# system's packages). The server runs twice: once idle, to subtract what starting and stopping
# cost, and once under load from 8 connections.
set -euo pipefail

source "$(dirname "$0")/common.sh"
bin=${1:-$root/target/release/agentwire}
seconds=${2:-5}
store_url "${BENCH_STORE:-memory}" . >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store_for() { store_url "${BENCH_STORE:-memory}" "$work/$1"; }

# Prints "<requests> <instructions>" for one server run under `seconds` of load (0: none).
measure() {
    local load=$1 port out pid requests=0
    port=$(free_port)
    out=$work/cachegrind.$port
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
        "$bin" serve --agent echo --store "$(store_for "$port")" --http "127.0.0.1:$port" >"$work/server.$port.log" 2>&1 &
    pid=$!
    wait_for "$port"
    if [ "$load" != 0 ]; then
        requests=$("$loadgen" rps --url "http://127.0.0.1:$port/" -H 'Content-Type: application/json' \
            -H 'A2A-Version: 1.0' --body "$SEND_BODY" -c 8 --warmup 0 --duration "$load" --json 2>/dev/null |
            tail -1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])')
    fi
    # SIGTERM: a background job of a script ignores SIGINT.
    kill -TERM "$pid"
    wait "$pid" || true
    echo "$requests $(awk '/^summary:/ {print $2}' "$out")"
}

read -r _ idle < <(measure 0)
read -r requests loaded < <(measure "$seconds")
python3 -c "print(f'{($loaded - $idle) / $requests:,.0f} instructions per SendMessage ($requests requests; start and stop: {$idle:,})')"
