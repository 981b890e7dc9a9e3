#!/usr/bin/env bash
# The price of calling an agent as the caller: server CPU per SendMessage through `agentwire
# gateway --upstream-auth exchange` (the caller's token exchanged at the test token service of
# interop/token-service, RFC 8693; the cache warm after the first call) beside the same send
# through a gateway that calls the agent with a static `--upstream-token`. Both gateways verify
# the caller's JWT; they run side by side on core 0 (bench/compare.sh), in front of one echo agent
# on core 1 that verifies the tokens it is sent. Prints B/A = exchange / static token.
#
#   bench/exchange.sh [rounds]       # rounds of 2 × 5 s in both orders, default 3
#
# BENCH_AGENTWIRE_BUILT=1 measures target/release/agentwire as it is, without building it. The
# token service runs on the MCP SDK's venv (AGENTWIRE_MCP_PYTHON, or interop/run.py --install-mcp).
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
if [[ -z ${BENCH_AGENTWIRE_BUILT:-} ]]; then
    (cd "$ROOT" && cargo build --release --locked --bin agentwire >&2)
fi
(cd "$BENCH" && cargo build --release --locked -p loadgen >&2)
source "$BENCH/common.sh"
agentwire=$build_dir/agentwire
python=${AGENTWIRE_MCP_PYTHON:-$(python3 "$ROOT/interop/run.py" --install-mcp)}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$agentwire" keygen "$work/idp.pem" | tail -1 | sed 's/^/{"keys":[/; s/$/]}/' >"$work/idp.jwks"
issuer=https://idp.test
jwt() { "$agentwire" jwt --key "$work/idp.pem" --issuer "$issuer" --audience "$1" --subject "$2"; }
"$python" "$ROOT/interop/token-service/exchange.py" --key "$work/idp.pem" --issuer "$issuer" --client gw:s3cret \
    >"$work/token-service.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/token-service.log" && break; sleep 0.1; done
token_url="$(sed -n 's/^listening on //p' "$work/token-service.log")/token"

auth="--auth jwt:$issuer --jwks $work/idp.jwks"
agent_port=$(free_port)
# shellcheck disable=SC2086
taskset -c 1 "$agentwire" serve --agent echo --store memory --http "127.0.0.1:$agent_port" $auth --audience echo-agent \
    >/dev/null 2>&1 &
pids+=($!)
wait_for "$agent_port"

upstream="--upstream echo=http://127.0.0.1:$agent_port $auth --audience gw --http 127.0.0.1:PORT"
static="$agentwire gateway $upstream --upstream-token $(jwt echo-agent gateway)"
exchange="env AGENTWIRE_TOKEN_EXCHANGE_SECRET=s3cret $agentwire gateway $upstream --upstream-auth exchange \
--upstream-audience echo=echo-agent --token-exchange-url $token_url --token-exchange-client gw"
COMPARE_PATH=/agents/echo/ COMPARE_HEADER="Authorization: Bearer $(jwt gw alice)" \
    "$BENCH/compare.sh" "$static" "$exchange" "${1:-3}"
