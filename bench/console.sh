#!/usr/bin/env bash
# agentwire's echo agent with the web console on, and one follower of its live task list, for the
# bench: `bench/console.sh PORT` serves PORT and reads /console/tasks/live as a browser's task
# list page does (EventSource), from another process, for as long as the server runs.
#
# The server takes over this script's process, so that the pid a measurement follows is the
# server's alone; the follower stops when the server is gone.
set -euo pipefail
source "$(dirname "$0")/common.sh"
port=${1:?PORT}
(
    wait_for "$port"
    exec curl -sN "http://127.0.0.1:$port/console/tasks/live" >/dev/null
) >/dev/null 2>&1 &
exec "$build_dir/agentwire" serve --agent echo --store memory --http "127.0.0.1:$port" --console
