# Shared by bench/instructions.sh and bench/compare.sh (sourced, not run): the paths, the requests
# (bench/requests.sh, as run.sh sends them), and the port helpers.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
loadgen=$root/bench/target/release/loadgen
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
