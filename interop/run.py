#!/usr/bin/env python3
"""Runs the interoperability matrix: official A2A SDK clients against `agentwire serve`.

    python3 interop/run.py [--server PATH] [--only python|js] [--no-ratchet]

1. Installs the pinned SDKs (interop/.venv, interop/js/node_modules), skipping an install whose
   lock file has not changed since the last run.
2. Builds and starts `agentwire serve --agent conformance` on a free loopback port.
3. Runs every client over every binding; each prints one JSON verdict per case.
4. Writes docs/INTEROP.md (the matrix as measured) and compares it with interop/baseline.json.

Exits 1 if a cell that the baseline records as passing no longer passes. Cells that pass for the
first time are added to the baseline (the ratchet), except in CI, where the baseline is only read.
Only the standard library is used, so the runner needs nothing but Python 3.11.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parent
VENV = INTEROP / ".venv"
JS = INTEROP / "js"
BASELINE = INTEROP / "baseline.json"
REPORT = ROOT / "docs" / "INTEROP.md"

TOKEN = "interop-token"
BINDINGS = ["jsonrpc", "rest"]
# Every case each client runs, in the order the clients print them, with what it checks.
CASES = {
    "card": "card discovery: name, a JSONRPC and an HTTP+JSON interface, streaming and push capabilities",
    "send_blocking": "blocking SendMessage returns a COMPLETED task carrying the agent's message",
    "send_non_blocking": "returnImmediately returns a running task; polling GetTask reaches COMPLETED",
    "stream": "SendStreamingMessage: task, WORKING, the artifact text, COMPLETED, in order",
    "get_history_length": "GetTask with historyLength=1 returns exactly the last message; without it, all",
    "list_paging": "ListTasks by contextId, pageSize 2: two pages (2 + 1), token then none, no repeats",
    "cancel": "CancelTask of a running task returns CANCELED; GetTask agrees",
    "subscribe": "SubscribeToTask on a running task: events until COMPLETED, then the stream ends",
    "multi_turn": "INPUT_REQUIRED, then a follow-up on the same task and context completes it",
    "push_config_crud": "create, get, list, delete a push config; gone from list and get afterwards",
    "push_delivery": "webhook deliveries with the token and Authorization headers, the last one COMPLETED",
    "extended_card": "GetExtendedAgentCard with credentials has the extra skill; without, refused (401)",
    "error_unknown_task": "GetTask of an unknown id raises the SDK's TaskNotFound error",
    "error_cancel_finished": "CancelTask of a COMPLETED task raises the SDK's TaskNotCancelable error",
}
CLIENT_TIMEOUT_S = 300
SERVER_START_TIMEOUT_S = 60


@dataclass
class Client:
    """One official SDK, and how to run our client program on top of it."""

    name: str
    command: list[str]


def log(message: str) -> None:
    print(f"[interop] {message}", file=sys.stderr, flush=True)


def run(command: list[str], **kwargs) -> None:
    log("$ " + " ".join(str(c) for c in command))
    subprocess.run(command, check=True, **kwargs)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def install_if_changed(lock: Path, stamp: Path, install: list[list[str]], cwd: Path | None = None) -> None:
    """Runs `install` unless `stamp` records the lock file's current digest (the local cache)."""
    wanted = digest(lock)
    if stamp.exists() and stamp.read_text().strip() == wanted:
        log(f"{lock.relative_to(ROOT)} unchanged; using the cached install")
        return
    for command in install:
        run(command, cwd=cwd)
    stamp.write_text(wanted + "\n")


def install_python() -> Client:
    requirements = INTEROP / "python" / "requirements.txt"
    python = VENV / "bin" / "python"
    setup = [[sys.executable, "-m", "venv", str(VENV)]] if not python.exists() else []
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    install_if_changed(requirements, VENV / ".requirements.sha256", setup + [pip + ["-r", str(requirements)]])
    return Client("python", [str(python), str(INTEROP / "python" / "client.py")])


def install_js() -> Client:
    npm = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    install_if_changed(JS / "package-lock.json", JS / "node_modules" / ".package-lock.sha256", [npm], cwd=JS)
    return Client("js", ["node", str(JS / "client.mjs")])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_server() -> Path:
    run(["cargo", "build", "--locked", "--quiet", "--bin", "agentwire"], cwd=ROOT)
    return ROOT / "target" / "debug" / "agentwire"


class Server:
    """`agentwire serve --agent conformance` on a free port, stopped on exit."""

    def __init__(self, binary: Path):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log_file = tempfile.NamedTemporaryFile(prefix="agentwire-interop-", suffix=".log", delete=False)
        command = [
            str(binary), "serve", "--agent", "conformance", "--http", f"127.0.0.1:{port}",
            # Clients run their webhook receivers on loopback; bearer auth guards the extended card.
            "--allow-private-webhooks", "--auth", f"bearer:{TOKEN}",
        ]  # fmt: skip
        log("$ " + " ".join(command))
        self.process = subprocess.Popen(command, stdout=self.log_file, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/.well-known/agent-card.json", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the server did not answer within {SERVER_START_TIMEOUT_S} s")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(Path(self.log_file.name).read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.unlink(self.log_file.name)


@dataclass
class Column:
    """What one client reported over one binding."""

    client: str
    sdk: str
    version: str
    binding: str
    verdicts: dict[str, tuple[bool, str]]
    failure: str = ""  # set when the client program itself broke

    @property
    def key(self) -> str:
        return f"{self.sdk} {self.version} / {self.binding}"


def run_client(client: Client, binding: str, url: str) -> Column:
    command = client.command + ["--url", url, "--binding", binding, "--token", TOKEN]
    log("$ " + " ".join(command))
    column = Column(client.name, client.name, "?", binding, {})
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        column.failure = f"timed out after {CLIENT_TIMEOUT_S} s"
        return column
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "meta" in record:
            column.sdk, column.version = record["meta"]["sdk"], record["meta"]["version"]
        elif record.get("case") in CASES:
            column.verdicts[record["case"]] = (record.get("ok") is True, str(record.get("detail", "")))
    if done.returncode != 0:
        column.failure = f"exit {done.returncode}: " + "\n".join(done.stderr.splitlines()[-10:])
    return column


def verdict(column: Column, case: str) -> tuple[bool, str]:
    return column.verdicts.get(case, (False, column.failure or "the client reported nothing for this case"))


def write_report(columns: list[Column]) -> None:
    header = "| operation | " + " | ".join(f"{c.sdk} {c.version}<br>{c.binding}" for c in columns) + " |"
    lines = [
        "# Interoperability matrix",
        "",
        "Official A2A SDK clients (programs in `interop/`) against `agentwire serve --agent conformance`,",
        "protocol v1.0. Written by `python3 interop/run.py` (run by `.ci/run`); do not edit by hand.",
        "Each cell checks results (states, texts, counts, error types), not only that a call returned.",
        "",
        header,
        "|---|" + "---|" * len(columns),
    ]
    for case in CASES:
        cells = ["pass" if verdict(c, case)[0] else "**FAIL**" for c in columns]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    failures = [(c, case) for c in columns for case in CASES if not verdict(c, case)[0]]
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- {c.key}, `{case}`: {verdict(c, case)[1]}" for c, case in failures]
    lines += ["", "## What each operation checks", "", "| operation | checks |", "|---|---|"]
    lines += [f"| {case} | {checks} |" for case, checks in CASES.items()]
    lines.append("")
    REPORT.write_text("\n".join(lines))
    log(f"wrote {REPORT.relative_to(ROOT)}")


def compare_with_baseline(columns: list[Column], ratchet: bool) -> list[str]:
    """Returns the regressions; records first-time passes when `ratchet` is on."""
    baseline: dict[str, str] = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    regressions = []
    for column in columns:
        for case in CASES:
            cell = f"{column.key} / {case}"
            passed, detail = verdict(column, case)
            if baseline.get(cell) == "pass" and not passed:
                regressions.append(f"{cell}: {detail}")
            elif passed and baseline.get(cell) != "pass" and ratchet:
                baseline[cell] = "pass"
    if ratchet:
        BASELINE.write_text(json.dumps(dict(sorted(baseline.items())), indent=2) + "\n")
    return regressions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, help="an agentwire binary to test instead of building one")
    parser.add_argument("--only", choices=["python", "js"], help="run one client only")
    parser.add_argument("--no-ratchet", action="store_true", help="never write interop/baseline.json")
    args = parser.parse_args()

    installers = {"python": install_python, "js": install_js}
    clients = [install() for name, install in installers.items() if args.only in (None, name)]
    if shutil.which("node") is None and any(c.name == "js" for c in clients):
        raise SystemExit("node is not on PATH")
    server = Server(args.server or build_server())
    try:
        columns = [run_client(client, binding, server.url) for client in clients for binding in BINDINGS]
        if any(not verdict(c, case)[0] for c in columns for case in CASES):
            log("server log (last lines):\n" + server.log_tail())
    finally:
        server.stop()

    write_report(columns)
    for column in columns:
        passed = sum(verdict(column, case)[0] for case in CASES)
        log(f"{column.key}: {passed}/{len(CASES)} cases pass" + (f" ({column.failure})" if column.failure else ""))
    ratchet = not args.no_ratchet and os.environ.get("CI") != "true" and args.only is None
    regressions = compare_with_baseline(columns, ratchet)
    for regression in regressions:
        log(f"REGRESSION {regression}")
    new_failures = [f"{c.key} / {case}" for c in columns for case in CASES if not verdict(c, case)[0]]
    if new_failures and not regressions:
        log(f"{len(new_failures)} cell(s) fail that never passed; see {REPORT.relative_to(ROOT)}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
