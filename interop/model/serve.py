#!/usr/bin/env python3
"""Serves the scripted model (scripted_model.py) with LiteLLM's proxy on a loopback port, for tests.

    python3 interop/model/serve.py --litellm PATH --port P [--record FILE]

PATH is the proxy's `litellm` executable (`python3 interop/run.py --install-model` prints it).
Prints `ready` on stdout once the proxy answers at http://127.0.0.1:P/v1 (the bearer key is
config.yaml's `sk-scripted`), then stays in the foreground until it is killed; the proxy goes with
it. With --record, every request the model gets is appended to FILE (scripted_model.py says how).
Nothing else is printed on stdout: the proxy's logs go to stderr. Only the standard library is used.
"""

import argparse
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 60
STOP_GRACE_S = 3
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def log(message: str) -> None:
    print(f"[model] {message}", file=sys.stderr, flush=True)


def die_with(parent: int):
    """Run in the proxy's process before it starts: the kernel kills it when serve.py dies, even of
    a SIGKILL, which serve.py cannot forward."""

    def arm() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # serve.py died before the signal was armed
            os._exit(1)

    return arm


def stop(proxy: subprocess.Popen) -> None:
    if proxy.poll() is None:
        proxy.terminate()
        try:
            proxy.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:  # uvicorn waits for open streams, e.g. a `slow` answer
            proxy.kill()
            proxy.wait()


def stop_signal(seconds: float) -> int | None:
    """SIGTERM or SIGINT if one comes within `seconds`. They are blocked and taken here, rather than
    by a handler, so that none lands in the middle of a wait on the proxy."""
    got = signal.sigtimedwait(STOP_SIGNALS, seconds)
    return got.si_signo if got else None


def serve(proxy: subprocess.Popen, port: int) -> int:
    """Waits until the proxy answers, says `ready`, then runs until a stop signal or the proxy's end."""
    url = f"http://127.0.0.1:{port}/health/liveliness"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proxy.poll() is not None:
            log(f"the proxy exited with {proxy.returncode} before it was ready")
            return 1
        try:
            with urllib.request.urlopen(url, timeout=1):
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            log(f"the proxy did not answer {url} within {START_TIMEOUT_S} s")
            return 1
        if signo := stop_signal(0.2):
            return 128 + signo
    print("ready", flush=True)
    while proxy.poll() is None:
        if signo := stop_signal(1):
            return 128 + signo
    log(f"the proxy exited with {proxy.returncode}")
    return 1  # it is meant to run until serve.py is stopped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--litellm", required=True, help="the proxy's `litellm` executable")
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--record", type=Path, help="append every request the model gets to this file")
    args = parser.parse_args()

    env = dict(os.environ)
    # The proxy would otherwise fetch its model price list from GitHub at start-up.
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    if args.record:
        env["SCRIPTED_MODEL_RECORD"] = str(args.record.resolve())  # the proxy runs in another directory
    # Absolute, since the proxy runs in this directory; a bare name is looked up on PATH.
    litellm = os.path.abspath(shutil.which(args.litellm) or args.litellm)
    command = [litellm, "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(args.port)]
    log("$ " + " ".join(command))
    # Run from this directory, where the proxy imports scripted_model.py from.
    proxy = subprocess.Popen(
        command, cwd=HERE, env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr, preexec_fn=die_with(os.getpid())
    )
    # Blocked only now, so the proxy does not inherit the mask; a signal before this line kills
    # serve.py outright, and the proxy with it.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return serve(proxy, args.port)
    finally:
        stop(proxy)


if __name__ == "__main__":
    sys.exit(main())
