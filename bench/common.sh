# Shared by bench/instructions.sh and bench/compare.sh (sourced, not run): the paths, the request
# both send, and the port helpers.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
loadgen=$root/bench/target/release/loadgen
message='{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hello"}]}'
body='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'$message'}}'
rest_body='{"message":'$message'}'

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
