#!/usr/bin/env bash
# A gateway's registry search over 10,000 synthetic agents on SQLite: the latency of each kind of
# query (one agent's word, a topic, every agent's word, filters, none), p50/p99/max, over HTTP.
#
#   bench/registry.sh [--agents N] [--requests N]
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
(cd "$ROOT" && cargo build --release --locked --bin agentwire >&2)
(cd "$BENCH" && cargo build --release --locked -p registry >&2)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/release
exec "$TARGET/registry" --agentwire "$TARGET/agentwire" "$@"
