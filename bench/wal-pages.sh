#!/usr/bin/env bash
# Which b-trees a SQLite commit writes: loads an agentwire server on a fresh SQLite file with
# JSON-RPC SendMessage (16 connections), stops it mid-load, and reads the frames of its
# write-ahead log, each one page the commit wrote, naming each page's b-tree from the file (the
# `dbstat` table of Python's sqlite3). A commit's cost grows with its pages more than its bytes.
#
#   bench/wal-pages.sh [BINARY] [serve options…]    # default target/release/agentwire; load 4 s
#
# Commits of more than 40 pages (a purge's) are counted apart from the groups of sends. The log
# restarts after each checkpoint, so a run sees the commits since the last one. A page is named
# by its b-tree at the end: pages a purge freed and another b-tree took since are named by the
# latter, so the split by b-tree is approximate, the total per commit exact.
set -euo pipefail

source "$(dirname "$0")/common.sh"
binary=${1:-$root/target/release/agentwire}
shift || true
work=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(free_port)
taskset -c 0 "$binary" serve --agent echo --store "sqlite:$work/tasks.db" --http "127.0.0.1:$port" "$@" \
    >"$work/server.log" 2>&1 &
server=$!
wait_for "$port"
taskset -c 1 "$loadgen" rps --url "http://127.0.0.1:$port/" --body "$SEND_BODY" -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' -c 16 --warmup 1 --duration 4 --json 2>/dev/null | tail -1 >"$work/load.json"
# Stopped, the server writes nothing more while the file and its log are copied as they stand.
kill -STOP "$server"
cp "$work/tasks.db" "$work/copy.db"
cp "$work/tasks.db-wal" "$work/copy.db-wal"
cp "$work/tasks.db-wal" "$work/frames.wal"
kill -9 "$server"
wait "$server" 2>/dev/null || true
python3 - "$work" <<'PY'
import collections, json, sqlite3, struct, sys

work = sys.argv[1]
log = open(f"{work}/frames.wal", "rb").read()
_, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">8I", log[:32])
commits, pages, offset = [], [], 32
while offset + 24 + page_size <= len(log):
    page, commit_size, frame_salt1, frame_salt2 = struct.unpack(">4I", log[offset:offset + 16])
    if (frame_salt1, frame_salt2) != (salt1, salt2):
        break  # frames of the log's previous round
    pages.append(page)
    if commit_size:
        commits.append(pages)
        pages = []
    offset += 24 + page_size
# Opening the copy reads its log, so the names are those of the pages as the last commit left them.
names = dict((page, name) for name, page in sqlite3.connect(f"{work}/copy.db").execute("SELECT name, pageno FROM dbstat"))
groups = [commit for commit in commits if len(commit) <= 40]
load = json.load(open(f"{work}/load.json"))
print(f"{load['requests']} sends at {load['rate']:.0f}/s; {len(commits)} commits in the log, "
      f"{len(commits) - len(groups)} of them over 40 pages (purges)")
if groups:
    print(f"pages per group commit: {sum(map(len, groups)) / len(groups):.2f}")
    count = collections.Counter(names.get(page, "header" if page == 1 else "free list or pointer map")
                                for commit in groups for page in commit)
    for name, n in count.most_common():
        print(f"  {name:32} {n / len(groups):.2f}")
PY
