"""The SQLite file under retention: a burst, then sustained large sends from two clients.

usage: bench/retention.py AGENTWIRE_BINARY WORKDIR   (WORKDIR is created; its tasks.db is replaced)
Starts `agentwire serve --agent echo --retain-size 20MiB` on a loopback port in WORKDIR; sends 120
messages of 3.9 MiB (one client), measures the database file 5 s after; then two clients send
for 20 s, the file sampled every 0.2 s, each send timed; stops the server and reports what is
left on disk.
"""
import http.client, json, os, re, signal, subprocess, sys, threading, time

binary, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
db = os.path.join(work, "tasks.db")
for suffix in ("", "-wal", "-shm", "-lock"):
    try: os.remove(db + suffix)
    except OSError: pass
MIB = 1 << 20
BOUND = 20 * MIB
log = open(os.path.join(work, "server.log"), "w")
server = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:0", "--agent", "echo", "--store", f"sqlite:{db}",
                           "--retain-size", "20MiB"], stdout=log, stderr=log, env={**os.environ, "NO_COLOR": "1"})
port = None
for _ in range(200):
    text = open(os.path.join(work, "server.log")).read()
    m = re.search(r"serving address=127\.0\.0\.1:(\d+)", text)
    if m: port = int(m.group(1)); break
    time.sleep(0.05)
assert port, "the server did not start"
text = "x" * int(3.9 * MIB)
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                   "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]},
                              "configuration": {"historyLength": 0}}}).encode()

def size(suffix=""):
    try: return os.path.getsize(db + suffix)
    except OSError: return 0

def send(conn):
    started = time.time()
    conn.request("POST", "/", body, {"Content-Type": "application/json", "A2A-Version": "1.0"})
    answer = json.loads(conn.getresponse().read())
    assert "result" in answer, answer
    return time.time() - started

conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
t0 = time.time()
burst = [send(conn) for _ in range(120)]
burst_end = time.time()
print(f"burst: 120 sends of 3.9 MiB in {burst_end - t0:.1f} s, slowest {max(burst):.2f} s; file {size() / MIB:.0f} MiB, log {size('-wal') / MIB:.0f} MiB at its end")
peak_after = 0
while time.time() - burst_end < 5:
    time.sleep(0.1)
    peak_after = max(peak_after, size())
print(f"5 s after the burst: file {size() / MIB:.1f} MiB (bound 1.5 x 20 + 16 = 46 MiB), log {size('-wal') / MIB:.1f} MiB")

stop = time.time() + 20
times, peak, peak_wal = [], 0, 0
def client():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.time() < stop:
        times.append(send(c))
threads = [threading.Thread(target=client) for _ in range(2)]
for t in threads: t.start()
while any(t.is_alive() for t in threads):
    time.sleep(0.2)
    peak, peak_wal = max(peak, size()), max(peak_wal, size("-wal"))
print(f"sustained: {len(times)} sends in 20 s from two clients, slowest {max(times):.2f} s; "
      f"file at most {peak / MIB:.1f} MiB (bound 1.5 x 20 + 64 = 94 MiB), log at most {peak_wal / MIB:.1f} MiB")
t1 = time.time()
server.send_signal(signal.SIGTERM)
server.wait(timeout=60)
print(f"stopped in {time.time() - t1:.1f} s: file {size() / MIB:.1f} MiB, log {'absent' if not os.path.exists(db + '-wal') else str(size('-wal')) + ' bytes'}")
