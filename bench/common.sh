# Shared by bench/instructions.sh and bench/compare.sh (sourced, not run): the paths, the requests
# (bench/requests.sh, as run.sh sends them), and the port helpers.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The build the harness runs: the release build, or the debug build for bench/run.sh --smoke.
build_dir=${BENCH_BUILT:-$root/target/release}
loadgen=$build_dir/loadgen
source "$root/bench/requests.sh"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something accepts connections on the port (valgrind can take seconds to start).
wait_for() {
    for _ in $(seq 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return
        sleep 0.1
    done
}

# The `--store` of an agentwire server: `memory` (what the tables measure), or `sqlite` for a
# fresh SQLite file, PATH.db (the default store of `agentwire serve`). Usage: store_url KIND PATH.
store_url() {
    case $1 in
        memory) echo memory ;;
        sqlite) echo "sqlite:$2.db" ;;
        *) echo "BENCH_STORE must be memory or sqlite, not $1" >&2; return 2 ;;
    esac
}
