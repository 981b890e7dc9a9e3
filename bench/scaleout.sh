#!/usr/bin/env bash
# Several `agentwire serve` instances on one PostgreSQL database, loaded together: the rate of
# each and in all, and the CPU each request took in the instances and in the database. One row
# per instance count, from 1 to MAX; each count runs on a fresh database of the same server,
# dropped after it (PostgreSQL 13 or newer; the user needs CREATEDB).
#
#   bench/scaleout.sh [MAX]       # 1..MAX instances (default 3), each loaded by a loadgen of its own
#
# SCALEOUT_CONNECTIONS (per instance, default 16), SCALEOUT_DURATION (seconds, default 5) and
# SCALEOUT_WARMUP (default 1) shape the load; BENCH_POSTGRES_URL names a server (by a database on
# it, left as it is: each row makes a database of its own there) to use, else a throwaway cluster
# with fsync on is started, as bench/run.sh does; SCALEOUT_CORES=1 pins instance i to core i and
# its load generator to core N+i (modulo the machine's cores; the database is not pinned), for a
# machine with cores to spare; by default everything shares the machine's cores.
# `busy` is how much of the machine's CPU time was spent while the load ran: near 100 %, a rate
# that stops growing is the machine's ceiling, not the instances'.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
source "$BENCH/common.sh"
max=${1:-3}
connections=${SCALEOUT_CONNECTIONS:-16}
duration=${SCALEOUT_DURATION:-5}
warmup=${SCALEOUT_WARMUP:-1}
work=$(mktemp -d)
pg_dir=""
database=""
servers=()

cleanup() {
    local pid
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n $database ]]; then drop_database 2>/dev/null || true; fi
    if [[ -n $pg_dir ]]; then "$ROOT/scripts/pg-cluster" stop "$pg_dir" >/dev/null; rm -rf "$pg_dir"; fi
    rm -rf "$work"
}
trap cleanup EXIT

url=${BENCH_POSTGRES_URL:-}
if [[ -z $url ]]; then
    pg_dir=$(mktemp -d)
    url=$(PG_CLUSTER_DURABLE=1 "$ROOT/scripts/pg-cluster" start "$pg_dir")
fi

# The server the URL names and the URL's parameters: a row's database is $server/NAME$query.
query=""
if [[ $url == *\?* ]]; then query="?${url#*\?}"; fi
server=${url%%\?*}
server=${server%/*}

# Drops the row's database, with any connection left to it.
drop_database() {
    psql -q "$url" -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null
}

# CPU seconds (user + system) of the machine's PostgreSQL processes (the server and its backends).
database_cpu() {
    local pid ticks=0
    for pid in $(pgrep -x postgres); do
        ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$ticks $(getconf CLK_TCK)" | awk '{print $1 / $2}'
}

# Busy and total jiffies of the whole machine, from /proc/stat.
machine_jiffies() {
    awk '/^cpu / {idle = $5 + $6; total = 0; for (i = 2; i <= NF; i++) total += $i; print total - idle, total}' /proc/stat
}

printf '| instances | rate in all | rate per instance | p99 µs (worst) | instance CPU µs/req | database CPU µs/req | busy |\n'
printf '|--:|--:|--:|--:|--:|--:|--:|\n'
cores=$(nproc)
for ((n = 1; n <= max; n++)); do
    database=scaleout_${n}_$$
    drop_database
    psql -q "$url" -c "CREATE DATABASE $database" >/dev/null
    store=$server/$database$query
    servers=()
    ports=()
    for ((i = 0; i < n; i++)); do
        port=$(free_port)
        pin=()
        if [[ ${SCALEOUT_CORES:-0} == 1 ]]; then pin=(taskset -c $((i % cores))); fi
        "${pin[@]}" "$build_dir/agentwire" serve --agent echo --store "$store" --http "127.0.0.1:$port" \
            >"$work/server$i.log" 2>&1 &
        servers+=($!)
        ports+=("$port")
        # The first instance makes the schema; the others start once it is there.
        wait_for "$port"
    done
    db_before=$(database_cpu)
    read -r busy_before total_before < <(machine_jiffies)
    loads=()
    for ((i = 0; i < n; i++)); do
        pin=()
        if [[ ${SCALEOUT_CORES:-0} == 1 ]]; then pin=(taskset -c $(((n + i) % cores))); fi
        "${pin[@]}" "$loadgen" rps --url "http://127.0.0.1:${ports[i]}/" --body "$SEND_BODY" \
            -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -c "$connections" \
            --warmup "$warmup" --duration "$duration" --server-pid "${servers[i]}" --json 2>"$work/load$i.err" \
            | tail -1 >"$work/load$i.json" &
        loads+=($!)
    done
    # A failed load is told by its answers below, with what it printed.
    for pid in "${loads[@]}"; do wait "$pid" || true; done
    read -r busy_after total_after < <(machine_jiffies)
    db_after=$(database_cpu)
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    full=$( (grep -l 'execution registry is full' "$work"/server*.log || true) | wc -l)
    drop_database
    database=""
    python3 - "$n" "$db_before" "$db_after" "$busy_before" "$total_before" "$busy_after" "$total_after" \
        "$warmup" "$duration" "$full" "$work"/load*.json <<'EOF'
import json, sys
n, db0, db1, b0, t0, b1, t1, warmup, duration, full = sys.argv[1:11]
runs = []
for path in sys.argv[11:]:
    try:
        runs.append(json.load(open(path)))
    except ValueError:
        sys.exit(f"a load generator failed: {open(path.replace('.json', '.err')).read()[-2000:]}")
if any(run["errors"] or not run["rate"] for run in runs):
    sys.exit(f"wrong answers: {[run['error_samples'][:1] for run in runs]}")
rate = sum(run["rate"] for run in runs)
instance_cpu = sum((run["server_cpu_us_per_req"] or 0) * run["rate"] for run in runs) / rate
# The database's CPU is read over the warm-up and the measured window alike: it is charged to
# the requests of both, at the measured rate.
window = float(warmup) + float(duration)
database_cpu = (float(db1) - float(db0)) * 1e6 / (rate * window)
busy = (float(b1) - float(b0)) / max(float(t1) - float(t0), 1)
worst_p99 = max(run["latency_us"]["p99"] for run in runs)
note = f" (execution registry full in {full} logs)" if int(full) else ""
print(f"| {n} | {rate:,.0f} req/s | {rate / int(n):,.0f} | {worst_p99:,.0f} | {instance_cpu:.1f} | {database_cpu:.1f} | {busy:.0%}{note} |")
EOF
done
