#!/usr/bin/env bash
# Server CPU per JSON-RPC SendMessage of two servers, measured side by side: both run at the same
# time on core 0, each loaded by its own loadgen (8 connections) on core 1, so a noisy neighbour
# slows both alike. Each round is run in both placements (A started first, then B first); the
# ratio B/A is the geometric mean of the two orders, which cancels any advantage of a placement.
# On this machine separate runs of one binary varied by ±15 %; paired ratios by ±2 %.
#
#   bench/compare.sh OLD_BINARY NEW_BINARY [rounds]     # two agentwire builds; rounds of 2 × 5 s, default 3
#   bench/compare.sh 'target/release/official-rust-echo --addr 127.0.0.1:PORT' target/release/agentwire
#
# A server is an agentwire binary (run as `serve --agent echo`) or a command with PORT where its
# port goes. COMPARE_WARMUP and COMPARE_DURATION (seconds, default 1 and 5) set each measurement;
# COMPARE_BINDING=rest sends the same SendMessage as HTTP+JSON (`POST /message:send`) instead;
# COMPARE_PATH=/agents/NAME/ sends JSON-RPC there rather than to `/` (a gateway's mounted agent);
# COMPARE_HEADER='NAME: VALUE' adds a header to every request (credentials, for servers with --auth);
# COMPARE_HEADER_B='NAME: VALUE' adds one to B's requests alone (several, one per line), with {{seq}} numbered per request
# (`COMPARE_HEADER_B='Idempotency-Key: k{{seq}}' bench/compare.sh BIN BIN` prices keyed sends);
# COMPARE_B_PATH, COMPARE_B_BODY and COMPARE_B_ENVELOPE (a loadgen --envelope) give B's requests a
# path, body and answer check of their own, to price another request against A's on the same server
# (bench/mcp.sh: an MCP tool call beside the A2A send it makes);
# an agentwire binary serves the memory store, or a fresh SQLite file with BENCH_STORE=sqlite.
set -euo pipefail

source "$(dirname "$0")/common.sh"
a=$1
b=$2
rounds=${3:-3}
store_url "${BENCH_STORE:-memory}" . >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT

# Starts SERVER on core 0 at PORT, in the background.
launch() {
    local server=$1 port=$2 words
    if [[ $server == *PORT* ]]; then
        read -r -a words <<<"${server//PORT/$port}"
    else
        words=("$server" serve --agent echo --store "$(store_url "${BENCH_STORE:-memory}" "$work/$port")" --http "127.0.0.1:$port")
    fi
    taskset -c 0 "${words[@]}" >/dev/null 2>&1 &
}

# Prints the CPU µs per request of FIRST and SECOND, loaded at the same time; B_SIDE (1 or 2) is
# the one that is B.
side_by_side() {
    local first=$1 second=$2 b_side=$3 port1 port2 pid1 pid2 load1 only_b
    port1=$(free_port)
    port2=$(free_port "$port1")
    launch "$first" "$port1"
    pid1=$!
    launch "$second" "$port2"
    pid2=$!
    wait_for "$port1"
    wait_for "$port2"
    for side in 1 2; do
        local port=$port1 pid=$pid1
        [ "$side" = 2 ] && port=$port2 pid=$pid2
        only_b=()
        if [[ $side == "$b_side" && -n ${COMPARE_HEADER_B:-} ]]; then
            while IFS= read -r header; do only_b+=(-H "$header"); done <<<"$COMPARE_HEADER_B"
        fi
        local sent=("${target[@]}")
        [[ $side == "$b_side" ]] && sent=("${target_b[@]}")
        taskset -c 1 "$loadgen" rps "${sent[@]/PORT/$port}" -H 'Content-Type: application/json' \
            -H 'A2A-Version: 1.0' ${COMPARE_HEADER:+-H "$COMPARE_HEADER"} "${only_b[@]}" -c 8 --warmup "${COMPARE_WARMUP:-1}" \
            --duration "${COMPARE_DURATION:-5}" --server-pid "$pid" --json 2>/dev/null | tail -1 >"$work/side$side.json" &
        [ "$side" = 1 ] && load1=$!
    done
    wait "$load1" $!
    kill "$pid1" "$pid2"
    wait "$pid1" "$pid2" 2>/dev/null || true
    python3 - "$work/side1.json" "$work/side2.json" <<'EOF'
import json, sys
runs = [json.load(open(path)) for path in sys.argv[1:]]
if any(run["errors"] for run in runs):
    sys.exit(f"wrong answers: {[run['error_samples'][:1] for run in runs]}")
print(*(f'{run["server_cpu_us_per_req"]:.1f}' for run in runs))
EOF
}

case ${COMPARE_BINDING:-jsonrpc} in
    jsonrpc) target=(--url "http://127.0.0.1:PORT${COMPARE_PATH:-/}" --body "$SEND_BODY") ;;
    rest) target=(--envelope rest --url "http://127.0.0.1:PORT/message:send" --body "$REST_BODY") ;;
    *) echo "COMPARE_BINDING must be jsonrpc or rest" >&2; exit 2 ;;
esac

target_b=("${target[@]}")
if [[ -n ${COMPARE_B_PATH:-}${COMPARE_B_BODY:-}${COMPARE_B_ENVELOPE:-} ]]; then
    target_b=(--url "http://127.0.0.1:PORT${COMPARE_B_PATH:-${COMPARE_PATH:-/}}" --body "${COMPARE_B_BODY:-$SEND_BODY}"
        --envelope "${COMPARE_B_ENVELOPE:-jsonrpc}")
fi

ratios=()
for round in $(seq "$rounds"); do
    read -r a1 b1 < <(side_by_side "$a" "$b" 2)
    read -r b2 a2 < <(side_by_side "$b" "$a" 1)
    [[ -n ${b1:-} && -n ${a2:-} ]] || { echo "round $round: a measurement failed" >&2; exit 1; }
    ratio=$(python3 -c "print(f'{(($b1 / $a1) * ($b2 / $a2)) ** 0.5:.3f}')")
    ratios+=("$ratio")
    echo "round $round: A $a1 / $a2 µs, B $b1 / $b2 µs, B/A $ratio"
done
python3 -c "
import statistics, sys
r = [float(x) for x in sys.argv[1:]]
print(f'B/A = {statistics.geometric_mean(r):.3f} (rounds: {\", \".join(sys.argv[1:])})')
" "${ratios[@]}"
