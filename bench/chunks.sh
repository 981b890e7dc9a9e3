#!/usr/bin/env bash
# A streaming agent sending 1,000 artifact chunks on one task, on each store: the time per chunk
# of the first 100 chunks and of the last 100, as the stream's reader saw them, and their ratio.
# A store whose commits cost the size of the whole task makes the last chunks slower than the
# first; one whose commits cost the size of the event keeps the ratio near 1.
#
#   bench/chunks.sh              memory, SQLite, and PostgreSQL (a throwaway cluster with fsync
#                                on, when the machine has a PostgreSQL server, or BENCH_POSTGRES_URL)
#
# The agent and the reader run in one process (`bench/chunks`: the request handler without HTTP),
# pinned to core 0; each store runs nine streams in a row, and each window is taken from the
# stream where it was fastest (noise on a shared machine only adds time).
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
(cd "$BENCH" && cargo build --release --locked -p chunks >&2)
CHUNKS=${CARGO_TARGET_DIR:-$(dirname "$BENCH")/target}/release/chunks

work=$(mktemp -d)
pg_dir=""
cleanup() {
  [[ -z $pg_dir ]] || "$ROOT/scripts/pg-cluster" stop "$pg_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

stores=(memory "sqlite:$work/chunks.db")
url=${BENCH_POSTGRES_URL:-}
if [[ -z $url ]] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  pg_dir=$work/pg
  url=$(PG_CLUSTER_DURABLE=1 "$ROOT/scripts/pg-cluster" start "$pg_dir")
fi
[[ -z $url ]] || stores+=("$url")

# One table row from the JSON line `chunks` prints.
row=$(cat <<'EOF'
import json, sys
r = json.loads(sys.stdin.read())
cells = [r["store"]] + [f"{r[k]:.1f}" for k in ("first_us_per_chunk", "last_us_per_chunk")]
cells += [f"{r['ratio']:.2f}", f"{r['overall_us_per_chunk']:.1f}"]
print("| " + " | ".join(cells) + " |")
EOF
)

echo "| store | µs per chunk, first 100 | µs per chunk, last 100 | last ÷ first | µs per chunk, all 1,000 |"
echo "|---|---:|---:|---:|---:|"
for store in "${stores[@]}"; do
  taskset -c 0 "$CHUNKS" --store "$store" --streams 9 --json | python3 -c "$row"
done
