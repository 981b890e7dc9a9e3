#!/usr/bin/env bash
# Server CPU per call of an MCP tool call through `agentwire gateway --mcp` (`send_message` at
# /mcp, MCP 2026-07-28), beside the same A2A SendMessage through the same gateway (JSON-RPC at
# /agents/echo/): two gateways, side by side on core 0 (bench/compare.sh), in front of one echo
# agent on core 1. Prints B/A = MCP / A2A.
#
#   bench/mcp.sh [rounds]       # rounds of 2 × 5 s in both orders, default 3
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
(cd "$ROOT" && cargo build --release --locked --bin agentwire >&2)
(cd "$BENCH" && cargo build --release --locked -p loadgen >&2)
source "$BENCH/common.sh"
agent_port=$(free_port)
taskset -c 1 "$build_dir/agentwire" serve --agent echo --store memory --http "127.0.0.1:$agent_port" >/dev/null 2>&1 &
agent=$!
trap 'kill $agent 2>/dev/null || true' EXIT
wait_for "$agent_port"
gateway="$build_dir/agentwire gateway --upstream echo=http://127.0.0.1:$agent_port --mcp --http 127.0.0.1:PORT"
COMPARE_PATH=/agents/echo/ \
    COMPARE_HEADER='Accept: application/json, text/event-stream' \
    COMPARE_HEADER_B=$'MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: send_message' \
    COMPARE_B_PATH=/mcp COMPARE_B_BODY="$MCP_CALL_BODY" COMPARE_B_ENVELOPE=mcp \
    "$BENCH/compare.sh" "$gateway" "$gateway" "${1:-3}"
