#!/usr/bin/env bash
# A front before agentwire's echo agent, for the bench: `bench/front.sh KIND PORT` starts the agent
# on a port of its own, then serves PORT with the front, which forwards every request to it.
#
#   gateway        agentwire gateway, keeping nothing (a translator)
#   gateway-store  agentwire gateway --store memory (keeping every task it relays)
#   nginx          nginx as a plain reverse proxy, one process (Debian's nginx-light)
#
# The front takes over this script's process, so that the pid a measurement follows is the
# front's alone: what it costs on top of the agent. The agent is stopped once the front is gone.
set -euo pipefail
source "$(dirname "$0")/common.sh"
kind=${1:?KIND}
port=${2:?PORT}
agentwire=$build_dir/agentwire
if [[ $kind == nginx ]] && ! command -v nginx >/dev/null; then
    echo "nginx is not installed (apt-get install nginx-light)" >&2
    exit 1
fi
up=$(free_port)
"$agentwire" serve --agent echo --store memory --http "127.0.0.1:$up" >/dev/null 2>&1 &
agent=$!
scratch=$(mktemp -d)
front=$$
(
    while kill -0 "$front" 2>/dev/null; do sleep 0.5; done
    kill "$agent"
    rm -rf "$scratch"
) >/dev/null 2>&1 &
wait_for "$up"
upstream=http://127.0.0.1:$up
case $kind in
    gateway) exec "$agentwire" gateway --http "127.0.0.1:$port" --upstream "$upstream" ;;
    gateway-store) exec "$agentwire" gateway --store memory --http "127.0.0.1:$port" --upstream "$upstream" ;;
    nginx)
        # Keep-alive on both sides, and no buffering: a stream passes through as it comes.
        cat >"$scratch/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $scratch/nginx.pid;
error_log stderr error;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $scratch;
    proxy_temp_path $scratch;
    upstream agent { server 127.0.0.1:$up; keepalive 64; keepalive_requests 1000000; }
    # A load generator's connections stay open for the whole run (nginx closes them after 1000
    # requests by default).
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://agent;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
    }
}
CONF
        exec nginx -e stderr -p "$scratch" -c "$scratch/nginx.conf"
        ;;
    *) echo "KIND must be gateway, gateway-store or nginx, not $kind" >&2; exit 2 ;;
esac
