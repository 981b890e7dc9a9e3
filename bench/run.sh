#!/usr/bin/env bash
# The agentwire benchmarks in one command: builds everything, runs every scenario against every
# server in the same run, and prints one markdown table (also written to bench/results/latest.md,
# with the raw numbers in bench/results/latest.json).
#
#   bench/run.sh                 the full run (under 10 minutes with the builds): two rounds of
#                                every comparison, the second in reverse order
#   bench/run.sh --smoke         every scenario for half a second: proves the harness works (CI);
#                                fails on wrong answers or a server that will not start, never on timings;
#                                with BENCH_AGENTWIRE_BUILT=1, on target/debug/agentwire as it is
#   bench/run.sh --only NAME     one scenario (jsonrpc-c16, rest-c16, stream-c16, v03-c16, grpc-c16,
#                                idle-sse, tasks-rss, side-by-side) or group (jsonrpc); repeatable
#   bench/run.sh --codecs        the codec micro-benchmarks (criterion) instead
#
# Servers are pinned to core 0 and the load generator to core 1. See bench/README.md.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
RESULTS=$BENCH/results
LOGS=$RESULTS/logs
STORE=$RESULTS/store
RUNS=$RESULTS/runs.jsonl

SMOKE=0
CODECS=0
ONLY=()
while (($#)); do
  case $1 in
    --smoke) SMOKE=1 ;;
    --codecs) CODECS=1 ;;
    --only) ONLY+=("${2:?--only needs a scenario}"); shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# The compared servers are measured in ROUNDS rounds, the second in reverse order, and each row
# reports all its rounds together: the machine's speed drifts over minutes, and a ratio between two
# servers measured minutes apart would carry that drift.
# A smoke run's window is short: it proves each server answers and the harness measures, and the
# Rust servers answer hundreds of requests in half a second. It must still outlast one request of
# the slowest server at the highest concurrency: the Python SDK answers about 190 requests a
# second, so each of its 256 connections waits 1.3 s (SLOW_DURATION, for the servers in SLOW).
SLOW=" python "
if ((SMOKE)); then
  ROUNDS=1 WARMUP=0.1 DURATION=0.5 SLOW_DURATION=2 IDLE_STREAMS=1000 IDLE_HOLD=0.5 TASKS_FIRST=1000 TASKS=2000 TASKS_TIMEOUT=60
else
  ROUNDS=2 WARMUP=1 DURATION=4 SLOW_DURATION=4 IDLE_STREAMS=10000 IDLE_HOLD=2 TASKS_FIRST=10000 TASKS=100000 TASKS_TIMEOUT=300
fi

# --- the requests (A2A v1.0) -------------------------------------------------------------------
source "$BENCH/requests.sh"

# A smoke run needs working programs, not their best speed: it runs the debug builds (which the
# tests have built already, with the dependencies the harness shares) and leaves the release
# build as it was.
if ((SMOKE)); then
  export BENCH_PROFILE=dev BENCH_BUILT=$ROOT/target/debug
else
  export BENCH_PROFILE=release BENCH_BUILT=$ROOT/target/release
fi
BUILT=$BENCH_BUILT
AGENTWIRE=$BUILT/agentwire
LOADGEN=$BUILT/loadgen
FLOOR=$BUILT/floor
OFFICIAL_RUST=$BUILT/official-rust-echo
OTLP_SINK=$BUILT/otlp-sink
PYTHON=$BENCH/.venv/bin/python

# --- the servers: one line per server process ------------------------------------------------
# name | scenarios it runs (groups: jsonrpc = jsonrpc-c1/-c16/-c64/-c256) | command, PORT = its port,
# STORE = an empty directory for its database.
# Each line gets a fresh process (per round); the table orders servers as listed here.
COMPARED=(
  "floor                 | jsonrpc rest-c16 stream-c16 | $FLOOR --addr 127.0.0.1:PORT"
  "agentwire             | jsonrpc rest-c16 stream-c16 v03-c16 grpc-c16 | $AGENTWIRE serve --agent echo --store memory --http 127.0.0.1:PORT"
  "agentwire-sqlite      | jsonrpc-c16 jsonrpc-c64 | $AGENTWIRE serve --agent echo --store sqlite:STORE/tasks.db --http 127.0.0.1:PORT"
  "official-rust         | jsonrpc rest-c16 stream-c16 | $OFFICIAL_RUST --addr 127.0.0.1:PORT"
  "official-rust-nodelay | jsonrpc rest-c16 stream-c16 | $OFFICIAL_RUST --addr 127.0.0.1:PORT --nodelay"
  # The SDK serves gRPC from a tonic server of its own, on a port without its HTTP routes.
  "official-rust         | grpc-c16 | $OFFICIAL_RUST --addr 127.0.0.1:PORT --grpc"
  "python                | jsonrpc rest-c16 stream-c16 | $PYTHON $BENCH/python/echo_server.py --port PORT"
  # Fronts before an agentwire echo agent of their own (bench/front.sh): the CPU column is the
  # front's alone, what it adds; the latencies are the caller's, through both.
  "gateway               | jsonrpc-c1 jsonrpc-c16 | $BENCH/front.sh gateway PORT"
  "gateway-store         | jsonrpc-c1 jsonrpc-c16 | $BENCH/front.sh gateway-store PORT"
  "nginx                 | jsonrpc-c1 jsonrpc-c16 | $BENCH/front.sh nginx PORT"
)
# Scenarios that measure one server on its own, once.
ALONE=(
  "agentwire             | tasks-rss                   | $AGENTWIRE serve --agent echo --store memory --http 127.0.0.1:PORT"
  "agentwire-sqlite      | tasks-rss                   | $AGENTWIRE serve --agent echo --store sqlite:STORE/tasks.db --http 127.0.0.1:PORT"
  "floor                 | idle-sse                    | $FLOOR --addr 127.0.0.1:PORT"
  "agentwire             | idle-sse                    | $AGENTWIRE serve --agent conformance --store memory --http 127.0.0.1:PORT"
)

# Servers whose failure to build or start gives a `skipped` row; any other server failing fails the run.
COMPETITORS=" official-rust official-rust-nodelay python nginx "

# Why a server's program is missing, by path (set by the builds below).
declare -A MISSING=()

say() { printf "\n== %s (at %d s)\n" "$*" "$((SECONDS - STARTED_AT))" >&2; }

# --- builds -----------------------------------------------------------------------------------
build() {
  mkdir -p "$LOGS"
  say "building agentwire and the harness (profile $BENCH_PROFILE)"
  # scripts/test hands a smoke the agentwire its tests built: `cargo build --bin agentwire` alone
  # resolves the dependencies' features otherwise than the workspace's tests and rebuilds a
  # third of them (about a minute on two cores) for the same code.
  if ((SMOKE)) && [[ -n ${BENCH_AGENTWIRE_BUILT:-} && -x $AGENTWIRE ]]; then
    echo "agentwire: $AGENTWIRE, as the tests built it" >&2
  else
    (cd "$ROOT" && timeout 1800 cargo build --profile "$BENCH_PROFILE" --locked --bin agentwire)
  fi
  (cd "$BENCH" && timeout 1800 cargo build --profile "$BENCH_PROFILE" --locked -p loadgen -p floor -p otlp-sink)
  # Competitors may fail to build without stopping the run: their rows say so.
  if ! (cd "$BENCH" && timeout 1200 cargo build --profile "$BENCH_PROFILE" --locked --manifest-path official-rust/Cargo.toml) \
      >"$LOGS/build-official-rust.log" 2>&1; then
    MISSING[$OFFICIAL_RUST]="official-rust did not build (results/logs/build-official-rust.log)"
  fi
  ensure_venv
}

# bench/.venv from bench/python/requirements.txt, reinstalled when the requirements change.
ensure_venv() {
  local requirements=$BENCH/python/requirements.txt stamp=$BENCH/.venv/.requirements.sha256 want
  if [[ ! -f $requirements ]]; then
    MISSING[$PYTHON]="no bench/python/requirements.txt"
    return
  fi
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [[ -x $PYTHON && -f $stamp && $(<"$stamp") == "$want" ]]; then return; fi
  say "installing the Python SDK into bench/.venv"
  if { [[ -x $PYTHON ]] || "$ROOT/scripts/uv" venv --quiet --clear --python python3 "$BENCH/.venv"; } \
      && timeout 600 "$ROOT/scripts/uv" pip install --quiet --compile-bytecode --python "$PYTHON" -r "$requirements" \
      >"$LOGS/build-python.log" 2>&1; then
    echo "$want" >"$stamp"
  else
    MISSING[$PYTHON]="the Python venv did not install (results/logs/build-python.log)"
  fi
}

# --- processes --------------------------------------------------------------------------------
# Servers still running, by pid: only these are ever signalled (a reaped pid may be reused).
declare -A RUNNING=()

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  local pid
  for pid in "${!RUNNING[@]}"; do stop "$pid"; done
  if [[ -n $PG_DIR ]]; then "$ROOT/scripts/pg-cluster" stop "$PG_DIR"; rm -rf "$PG_DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The same agent on PostgreSQL: on the database BENCH_POSTGRES_URL names, else on a throwaway
# cluster with the durable settings a deployment has (fsync on), when the machine has a PostgreSQL
# server. Both rounds share the database.
PG_DIR=""
if [[ -z ${BENCH_POSTGRES_URL:-} ]] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  PG_DIR=$(mktemp -d)
  BENCH_POSTGRES_URL=$(PG_CLUSTER_DURABLE=1 "$ROOT/scripts/pg-cluster" start "$PG_DIR")
fi
if [[ -n ${BENCH_POSTGRES_URL:-} ]]; then
  for i in "${!COMPARED[@]}"; do
    if [[ ${COMPARED[i]} == agentwire-sqlite* ]]; then
      COMPARED=("${COMPARED[@]:0:i+1}"
        "agentwire-postgres    | jsonrpc-c16 jsonrpc-c64 | $AGENTWIRE serve --agent echo --store $BENCH_POSTGRES_URL --http 127.0.0.1:PORT"
        "${COMPARED[@]:i+1}")
      break
    fi
  done
fi

# Stops a server: TERM, then KILL if it lingers past 5 s.
stop() {
  local pid=$1
  [[ -n ${RUNNING[$pid]:-} ]] || return 0
  unset "RUNNING[$pid]"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in {1..50}; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

if (($(nproc) >= 2)); then
  PIN_SERVER=(taskset -c 0)
  PIN_LOADGEN=(taskset -c 1)
else
  PIN_SERVER=() PIN_LOADGEN=()
fi

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port nobody listens on. The default range sits below the ephemeral ports (32768 and up),
# where a client socket lingering in TIME-WAIT would make the server's bind fail.
NEXT_PORT=${BENCH_PORT:-21100}
free_port() {
  while listening "$NEXT_PORT"; do NEXT_PORT=$((NEXT_PORT + 1)); done
  PORT=$NEXT_PORT
  NEXT_PORT=$((NEXT_PORT + 1))
}

# Starts a server and waits (30 s at most) until it accepts connections; sets SERVER_PID, or
# NOT_STARTED to the reason it is not serving.
start() {
  local log=$1 rc=0
  shift
  "${PIN_SERVER[@]}" "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  RUNNING[$SERVER_PID]=1
  for _ in {1..300}; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      unset "RUNNING[$SERVER_PID]"
      wait "$SERVER_PID" || rc=$?
      NOT_STARTED="exited with status $rc: $(tail -n 1 "$log")"
      return 1
    fi
    listening "$PORT" && return 0
    sleep 0.1
  done
  NOT_STARTED="not listening on port $PORT after 30 s"
  return 1
}

# --- recording --------------------------------------------------------------------------------
FAILED=0

json_string() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/ }
  s=${s//$'\t'/ }
  printf '"%s"' "$s"
}

record() { # scenario server key value-json
  printf '{"scenario":"%s","server":"%s","%s":%s}\n' "$1" "$2" "$3" "$4" >>"$RUNS"
}

# Runs loadgen against the current server and records its JSON line.
measure() { # scenario server time-bound-seconds loadgen-args...
  local scenario=$1 server=$2 bound=$3 out rc=0
  shift 3
  local log="$LOGS/$scenario.$server.loadgen.log"
  out=$(timeout "$bound" "${PIN_LOADGEN[@]}" "$LOADGEN" "$@" --server-pid "$SERVER_PID" --json \
    -H 'A2A-Version: 1.0' 2>"$log") || rc=$?
  printf '%-12s %-22s %s\n' "$scenario" "$server" "$(head -c 600 "$log")" >&2
  if [[ -z $out ]]; then
    FAILED=1
    record "$scenario" "$server" failed "$(json_string "loadgen exited $rc: $(tail -n 1 "$log")")"
  elif ((rc != 0)); then
    FAILED=1
    printf '{"scenario":"%s","server":"%s","failed":"errors","result":%s}\n' "$scenario" "$server" "$out" >>"$RUNS"
  else
    printf '{"scenario":"%s","server":"%s","result":%s}\n' "$scenario" "$server" "$out" >>"$RUNS"
  fi
}

# --- scenarios --------------------------------------------------------------------------------
expand() { # scenario groups -> scenario names
  local group
  for group in "$@"; do
    case $group in
      jsonrpc) echo jsonrpc-c1 jsonrpc-c16 jsonrpc-c64 jsonrpc-c256 ;;
      *) echo "$group" ;;
    esac
  done
}

wanted() { # scenario
  ((${#ONLY[@]} == 0)) && return 0
  local only
  for only in "${ONLY[@]}"; do
    [[ $1 == "$only" || " $(expand "$only") " == *" $1 "* ]] && return 0
  done
  return 1
}

run_scenario() { # scenario server
  local scenario=$1 server=$2 url="http://127.0.0.1:$PORT" duration=$DURATION
  [[ $SLOW == *" $server "* ]] && duration=$SLOW_DURATION
  local timed=$(( ${WARMUP%.*} + ${duration%.*} + 60 ))
  local closed=(--warmup "$WARMUP" --duration "$duration")
  case $scenario in
    jsonrpc-c*)
      measure "$scenario" "$server" "$timed" rps --url "$url/" --body "$SEND_BODY" -c "${scenario#jsonrpc-c}" "${closed[@]}" ;;
    rest-c*)
      measure "$scenario" "$server" "$timed" rps --envelope rest --url "$url/message:send" --body "$REST_BODY" \
        -c "${scenario#rest-c}" "${closed[@]}" ;;
    grpc-c*)
      measure "$scenario" "$server" "$timed" rps --envelope grpc --url "$url/lf.a2a.v1.A2AService/SendMessage" \
        --body "$REST_BODY" -c "${scenario#grpc-c}" "${closed[@]}" ;;
    v03-c*)
      measure "$scenario" "$server" "$timed" rps --envelope jsonrpc-v03 --url "$url/" --body "$V03_SEND_BODY" \
        -c "${scenario#v03-c}" "${closed[@]}" ;;
    stream-c*)
      measure "$scenario" "$server" "$timed" stream --url "$url/" --body "$STREAM_BODY" -c "${scenario#stream-c}" \
        "${closed[@]}" ;;
    tasks-rss)
      measure "$scenario" "$server" $((TASKS_TIMEOUT + 30)) rps --url "$url/" --body "$SEND_BODY" -c 16 --warmup 0 \
        --requests "$TASKS" --timeout "$TASKS_TIMEOUT" --rss-at "$TASKS_FIRST" --rss-at "$TASKS" ;;
    idle-sse)
      measure "$scenario" "$server" 200 idle-sse --url "$url/" --body "$IDLE_BODY" --streams "$IDLE_STREAMS" \
        --hold "$IDLE_HOLD" ;;
    *) echo "unknown scenario $scenario" >&2; exit 2 ;;
  esac
}

# One server line: start it, run its scenarios, stop it.
run_server() { # spec
  local name groups command scenarios=() scenario words
  IFS='|' read -r name groups command <<<"$1"
  name=${name//[[:space:]]/}
  read -r -a groups <<<"$groups"
  for scenario in $(expand "${groups[@]}"); do wanted "$scenario" && scenarios+=("$scenario"); done
  ((${#scenarios[@]})) || return 0
  free_port
  # Every server process starts on an empty store.
  rm -rf "$STORE" && mkdir -p "$STORE"
  command=${command//STORE/$STORE}
  read -r -a words <<<"${command//PORT/$PORT}"

  local why="" log attempt
  if [[ ! -x ${words[0]} ]]; then
    why=${MISSING[${words[0]}]:-${words[0]} is missing}
  else
    # Up to three ports: another program may take one between the check and the bind.
    for attempt in 1 2 3; do
      ((attempt == 1)) || { free_port; read -r -a words <<<"${command//PORT/$PORT}"; }
      say "$name on port $PORT: ${scenarios[*]}"
      log="$LOGS/server.$name.$PORT.log"
      why=""
      start "$log" "${words[@]}" && break
      why="did not start: $NOT_STARTED"
      stop "$SERVER_PID"
    done
  fi
  if [[ -n $why ]]; then
    local outcome=skipped
    if [[ $COMPETITORS != *" $name "* ]]; then
      outcome=failed FAILED=1
    fi
    for scenario in "${scenarios[@]}"; do record "$scenario" "$name" "$outcome" "$(json_string "$why")"; done
    say "$name: $outcome: $why"
    return 0
  fi
  for scenario in "${scenarios[@]}"; do run_scenario "$scenario" "$name"; done
  stop "$SERVER_PID"
}

# --- main -------------------------------------------------------------------------------------
if ((CODECS)); then
  mkdir -p "$RESULTS"
  (cd "$BENCH" && cargo bench --locked -p codecs --bench codecs -- --warm-up-time 1 --measurement-time 3) | tee "$RESULTS/codecs.txt"
  exit 0
fi

STARTED_AT=$SECONDS
build
# 10,000 idle streams need as many descriptors in the server and in loadgen.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (($(ulimit -n) < IDLE_STREAMS + 200)); then
  IDLE_STREAMS=$(($(ulimit -n) - 200))
  say "open-file limit $(ulimit -n): idle-sse opens $IDLE_STREAMS streams"
fi

mkdir -p "$LOGS"
: >"$RUNS"
for ((round = 1; round <= ROUNDS; round++)); do
  for ((i = 0; i < ${#COMPARED[@]}; i++)); do
    if ((round % 2)); then run_server "${COMPARED[i]}"; else run_server "${COMPARED[-1 - i]}"; fi
  done
done
for spec in "${ALONE[@]}"; do run_server "$spec"; done

# The ratios of the targets (÷ floor, ÷ official SDK), measured the way drift cannot skew: each
# server loaded at the same time as agentwire on core 0 (bench/compare.sh), in both orders.
declare -A SIDE_BY_SIDE=()
side_by_side() { # name command [the command it is compared with; default plain agentwire]
  local name=$1 command=$2 baseline=${3:-$AGENTWIRE} log=$LOGS/side-by-side-${1// /_}.log rounds
  rounds=$( ((SMOKE)) && echo 1 || echo 3 )
  say "side by side: $name and agentwire, JSON-RPC SendMessage, CPU per request"
  if COMPARE_WARMUP=$WARMUP COMPARE_DURATION=$DURATION "$BENCH/compare.sh" \
      "$command" "$baseline" "$rounds" >"$log" 2>&1; then
    SIDE_BY_SIDE[$name]=$(python3 "$BENCH/side_by_side.py" "$(tail -n 1 "$log")")
  else
    FAILED=1
    SIDE_BY_SIDE[$name]="FAILED: $(tail -n 1 "$log")"
  fi
  cat "$log" >&2
}
SIDE_BY_SIDE_ORDER=(floor official-rust "agentwire --metrics" "agentwire --metrics --otlp-endpoint"
  "agentwire --auth jwt ÷ --auth bearer" "agentwire --console, one list followed" "agentwire gateway"
  "agentwire gateway --store memory" nginx)
if wanted side-by-side; then
  side_by_side floor "$FLOOR --addr 127.0.0.1:PORT"
  if [[ -n ${MISSING[$OFFICIAL_RUST]:-} || ! -x $OFFICIAL_RUST ]]; then
    SIDE_BY_SIDE[official-rust]="skipped: ${MISSING[$OFFICIAL_RUST]:-$OFFICIAL_RUST is missing}"
  else
    side_by_side official-rust "$OFFICIAL_RUST --addr 127.0.0.1:PORT"
  fi
  # What observing costs: agentwire with metrics on, then also exporting every span to a local
  # OTLP collector (otlp-sink, which counts them), each against agentwire with both off.
  observed="$AGENTWIRE serve --agent echo --store memory --http 127.0.0.1:PORT --metrics"
  side_by_side "agentwire --metrics" "$observed"
  "${PIN_LOADGEN[@]}" "$OTLP_SINK" >"$LOGS/otlp-sink.endpoint" 2>"$LOGS/otlp-sink.log" &
  sink=$!
  RUNNING[$sink]=1
  for _ in $(seq 50); do [[ -s $LOGS/otlp-sink.endpoint ]] && break; sleep 0.1; done
  side_by_side "agentwire --metrics --otlp-endpoint" "$observed --otlp-endpoint $(head -n 1 "$LOGS/otlp-sink.endpoint")"
  stop "$sink"
  cat "$LOGS/otlp-sink.log" >&2
  # What verifying identity costs: a JWT checked against a key set (a file: no network per
  # request), against the same token taken as a static bearer token.
  rm -f "$LOGS/jwt.pem"
  "$AGENTWIRE" keygen "$LOGS/jwt.pem" | tail -n 1 | sed 's/.*/{"keys":[&]}/' >"$LOGS/jwt.jwks"
  token=$("$AGENTWIRE" jwt --key "$LOGS/jwt.pem" --issuer https://idp.bench --audience bench --subject load --ttl 86400)
  serving="$AGENTWIRE serve --agent echo --store memory --http 127.0.0.1:PORT --auth"
  COMPARE_HEADER="Authorization: Bearer $token" side_by_side "agentwire --auth jwt ÷ --auth bearer" \
    "$serving jwt:https://idp.bench --audience bench --jwks $LOGS/jwt.jwks" "$serving bearer:load=$token"
  # What the web console costs while a browser's task list follows it live (bench/console.sh),
  # against agentwire without it.
  side_by_side "agentwire --console, one list followed" "$BENCH/console.sh PORT"
  # What a front before the agent adds to the agent's own CPU per request (the front's process
  # alone, beside an agent measured alone): agentwire's gateway, and a plain reverse proxy.
  side_by_side "agentwire gateway" "$BENCH/front.sh gateway PORT"
  side_by_side "agentwire gateway --store memory" "$BENCH/front.sh gateway-store PORT"
  if command -v nginx >/dev/null; then
    side_by_side nginx "$BENCH/front.sh nginx PORT"
  else
    SIDE_BY_SIDE[nginx]="skipped: nginx is not installed (apt-get install nginx-light)"
  fi
fi

if ((SMOKE && ${#ONLY[@]} == 0)); then
  say "codec benchmarks, one iteration each"
  (cd "$BENCH" && cargo bench --profile dev --locked -p codecs --bench codecs -- --test) >"$LOGS/codecs-smoke.log" 2>&1 \
    || { FAILED=1; echo "codec benchmarks failed: see $LOGS/codecs-smoke.log" >&2; }
  if [[ -n ${BENCH_POSTGRES_URL:-} ]]; then
    say "scale-out on PostgreSQL (bench/scaleout.sh), one and two instances"
    SCALEOUT_WARMUP=0.2 SCALEOUT_DURATION=1 BENCH_POSTGRES_URL=$BENCH_POSTGRES_URL "$BENCH/scaleout.sh" 2 \
      >"$LOGS/scaleout-smoke.log" 2>&1 \
      || { FAILED=1; echo "the scale-out run failed: see $LOGS/scaleout-smoke.log" >&2; }
  fi
fi

MODE=$( ((SMOKE)) && echo "smoke run (timings meaningless)" || echo "full run")
say "results ($MODE, $((SECONDS - STARTED_AT)) s)"
{
  printf 'agentwire %s, %s, %s; server on core 0, loadgen on core 1.\n\n' \
    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$MODE" "$(date -u +%Y-%m-%d)"
  "$LOADGEN" report "$RUNS" --json "$RESULTS/latest.json"
  if ((${#SIDE_BY_SIDE[@]})); then
    printf '\nServer CPU per JSON-RPC SendMessage, side by side (each server loaded at once with agentwire\n'
    printf 'on core 0, 8 connections each, in both orders; bench/compare.sh), as the server ÷ agentwire:\n\n'
    for name in "${SIDE_BY_SIDE_ORDER[@]}"; do
      if [[ -n ${SIDE_BY_SIDE[$name]:-} ]]; then
        if [[ $name == *÷* ]]; then
          printf -- '- %s: %s\n' "$name" "${SIDE_BY_SIDE[$name]}"
        else
          printf -- '- %s ÷ agentwire: %s\n' "$name" "${SIDE_BY_SIDE[$name]}"
        fi
      fi
    done
  fi
} | tee "$RESULTS/latest.md"
exit "$FAILED"
