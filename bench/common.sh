# Shared by bench/instructions.sh and bench/compare.sh (sourced, not run): the paths, the requests
# (bench/requests.sh, as run.sh sends them), and the port helpers.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The build the harness runs: the release build, or the debug build for bench/run.sh --smoke.
build_dir=${BENCH_BUILT:-$root/target/release}
loadgen=$build_dir/loadgen
source "$root/bench/requests.sh"

# A loopback port free now, other than the ones given: picked below the kernel's ephemeral range
# (32768 and up), where no client connection or `:0` bind takes it before the server binds it.
free_port() {
    python3 - "$@" <<'PY'
import random, socket, sys
taken = set(sys.argv[1:])
while True:
    port = random.randrange(20000, 32768)
    if str(port) in taken:
        continue
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
PY
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
