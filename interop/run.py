#!/usr/bin/env python3
"""Runs the interoperability matrix: official A2A SDK clients against `agentwire serve`.

    python3 interop/run.py [--server PATH] [--only python|js|python-0.3|js-0.3] [--record]
    python3 interop/run.py --install-server
    python3 interop/run.py --install-mcp
    python3 interop/run.py --only-mcp [--server PATH]
    python3 interop/run.py --install-model

1. Installs the pinned SDKs, skipping an install whose lock file has not changed since the last
   run: the v1.0 clients' (interop/.venv, interop/js/node_modules) and the v0.3 clients', each
   SDK's last v0.3 release (interop/.venv03, interop/js03/node_modules).
2. Builds `agentwire` (unless --server names a binary) and starts `agentwire serve --agent
   conformance` on a free loopback port.
3. Runs every client over every binding; each prints one JSON verdict per case it runs (RUNS says
   which: a case a generation's SDK cannot express is not run, and its cell is not missing).
4. Runs the clients again through `agentwire gateway --store`, in the ROUTES: in front of a
   conformance server called in v0.3 over JSON-RPC alone (as an agent that speaks nothing else is
   called), in front of the official Python SDK's agent (interop/python-server) called the same
   way, and, for the v0.3 clients, in front of a conformance server called in v1.0 alone. Each
   route has a table of its own, whose cells are keyed by the route (`gateway: …`). The direct run
   and each route have servers of their own, so they run side by side; within one, the clients
   run one after another.
5. Runs the official MCP SDKs' clients (Python `mcp`, TypeScript `@modelcontextprotocol/sdk`;
   interop/mcp-python, interop/mcp-js) against `agentwire gateway --mcp` in front of a conformance
   server and the Python SDK's agent, over streamable HTTP (`/mcp`) and over stdio (`agentwire
   mcp GATEWAY`): tools, calls, progress, cancel, elicitation, and the refusal without credentials.
   Beside them, on servers of their own, the MCP clients that declare MCP's tasks extension: the
   MCP Inspector's CLI with its defaults (interop/mcp-inspector), the TypeScript SDK v2 in MCP
   2025-11-25 and, with @modelcontextprotocol/ext-tasks, 2026-07-28 (interop/mcp-js-v2), and the
   TypeScript SDK 1.32 declaring the extension (interop/mcp-js/tasks_client.mjs): a quick call, a
   slow one (5 s) and one that asks for input, against `serve --mcp`, `gateway --mcp` and
   `agentwire mcp GATEWAY`. `--only-mcp` runs this step alone.
6. Runs each A2A client, over each binding, against the model agent (`agentwire serve --agent
   openai`) in front of LiteLLM's proxy serving a scripted chat model (interop/model): a blocking
   answer, a streamed one in pieces, and a second task of the same conversation. Each SDK has a
   program for it beside its client (model_client.py, model_client.mjs).
   Google ADK's client (interop/adk) runs beside them: its RemoteA2aAgent given the card URL, over
   each binding, against a conformance server and against `agentwire gateway` in front of an
   agent made with ADK (ADK's own `to_a2a`).
7. Checks card signatures with each v1.0 SDK's own signer and verifier: the SDK verifies the card
   `agentwire serve --signing-key` serves (ES256, EdDSA), and `agentwire card --verify-card-keys`
   verifies a card the SDK signs (interop/python/card_signature.py, interop/js/card_signature.mjs).
8. Writes the matrix as measured, with each SDK's version, to interop/results/INTEROP.md (ignored
   by git) and prints its path.
9. Compares every cell with interop/baseline.json. A cell is keyed by client, binding and case
   ("python / jsonrpc / cancel"), not by SDK version, so a cell that passed with one version of an
   SDK must still pass after the pin is bumped.

Exits 1 if a cell that the baseline records as passing does not pass now, or if the baseline names
a cell this runner does not run (it would never be checked). A cell that fails and never passed is
logged, but does not fail the run.

By default no tracked file is written, so running the matrix never dirties the tree. --record also
writes docs/INTEROP.md and adds the cells that pass for the first time to the baseline (the
ratchet: it never removes one). --record is refused with --only: a partial run must not record.
Only the standard library is used, so the runner needs nothing but Python 3.11.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parent
VENV = INTEROP / ".venv"
JS = INTEROP / "js"
VENV03 = INTEROP / ".venv03"
VENV_SERVER = INTEROP / ".venv-server"  # the Python SDK server that agentwire's client tests call
JS03 = INTEROP / "js03"
VENV_MCP = INTEROP / ".venv-mcp"
MODEL = INTEROP / "model"  # a scripted chat model, served by LiteLLM's proxy (interop/model/serve.py)
VENV_MODEL = INTEROP / ".venv-model"
MCP_JS = INTEROP / "mcp-js"
ADK = INTEROP / "adk"  # Google ADK: a client by card URL (client.py) and an agent made with it (agent.py)
VENV_ADK = INTEROP / ".venv-adk"
BASELINE = INTEROP / "baseline.json"
RESULTS = INTEROP / "results" / "INTEROP.md"  # every run; ignored by git
RECORDED = ROOT / "docs" / "INTEROP.md"  # --record only

TOKEN = "interop-token"
# The v1.0 clients (python, js) and, with each SDK's last v0.3 release, the v0.3 clients.
CLIENTS = ["python", "js", "python-0.3", "js-0.3"]
GENERATION = {"python": "1.0", "js": "1.0", "python-0.3": "0.3", "js-0.3": "0.3"}
# The bindings each client is run over: gRPC with the clients whose SDK has a gRPC transport.
BINDINGS = {
    "python": ["jsonrpc", "rest", "grpc"],
    "js": ["jsonrpc", "rest"],
    "python-0.3": ["jsonrpc", "rest", "grpc"],
    "js-0.3": ["jsonrpc", "rest"],
}
# Every case, in the order the clients print them, with what it checks. v1.0 names first; a v0.3
# client makes the same checks with the v0.3 call in brackets.
CASES = {
    "card": "card discovery: name, a JSONRPC and an HTTP+JSON interface, streaming and push capabilities "
    "[0.3: url, preferredTransport + additionalInterfaces, protocolVersion 0.3, supportsAuthenticatedExtendedCard]",
    "send_blocking": "blocking SendMessage returns a COMPLETED task carrying the agent's message, "
    "over the forced binding [message/send, blocking=true]",
    "send_non_blocking": "returnImmediately returns a running task; polling GetTask reaches COMPLETED "
    "[blocking=false; tasks/get]",
    "stream": "SendStreamingMessage: task, WORKING, the artifact text, COMPLETED, in order [message/stream; "
    "the last status-update is final]",
    "get_history_length": "GetTask with historyLength=1 returns exactly the last message; without it, all",
    "list_paging": "ListTasks by contextId, pageSize 2: two pages (2 + 1), token then none, no repeats",
    "cancel": "CancelTask of a running task returns CANCELED; GetTask agrees [tasks/cancel]",
    "subscribe": "SubscribeToTask on a running task: events until COMPLETED, then the stream ends [tasks/resubscribe]",
    "multi_turn": "INPUT_REQUIRED, then a follow-up on the same task and context completes it",
    "stream_follow_up": "INPUT_REQUIRED, then a streamed follow-up reads the agent's answer to the end: COMPLETED "
    "[message/stream with taskId]",
    "push_config_crud": "create, get, list, delete a push config; gone from list and get afterwards "
    "[tasks/pushNotificationConfig/set, get, list, delete; the client names the config; python-0.3's "
    "Client has no list or delete, so it makes those two with the SDK's own request and response models "
    "(over gRPC, its generated stub)]",
    "push_delivery": "webhook deliveries with the token and Authorization headers, the last one COMPLETED "
    "[each body a v0.3 Task]",
    "extended_card": "GetExtendedAgentCard with credentials has the extra skill; without, refused (HTTP 401, "
    "gRPC UNAUTHENTICATED) "
    "[agent/getAuthenticatedExtendedCard, GET /v1/card]",
    "error_unknown_task": "GetTask of an unknown id raises the SDK's TaskNotFound error "
    "[0.3: JSON-RPC code -32001; REST: python-0.3 keeps only HTTP 404, js-0.3 maps the body's code; "
    "gRPC: python-0.3 raises grpc's NOT_FOUND]",
    "error_cancel_finished": "CancelTask of a COMPLETED task raises the SDK's TaskNotCancelable error "
    "[0.3: JSON-RPC code -32002; REST: python-0.3 keeps only HTTP 409, js-0.3 maps the body's code; "
    "gRPC: python-0.3 raises grpc's FAILED_PRECONDITION]",
    "concurrent_generations": "while a v0.3 SDK stream of a running task is open, v1.0 SendMessage (the "
    "same binding, v1.0 names and shapes on the wire; over gRPC, lf.a2a.v1 with the message types from "
    "reflection) completes and v1.0 GetTask sees that v0.3 task running; then the v0.3 stream ends COMPLETED",
    "send_file": "a v0.3 message with the file `hello` (hello.txt, text/plain) completes; tasks/get gives the file "
    "back the same, and v1.0 GetTask shows it as raw `aGVsbG8=` with its filename",
    "receive_file": "a completed task's artifact is the file output.txt (text/plain) holding "
    "`Generated file content`, as the SDK's client reads it",
    "send_default_blocking": "message/send without a configuration (so without `blocking`) waits for the task "
    "to complete, as the official v0.3 servers do [the SDK's Client always sends one: python-0.3 sends none with "
    "its own request models (over gRPC, its generated stub), js-0.3 with its transport]",
}
# The cases each generation runs; RUNS_NOT says why a case is left out.
RUNS_NOT = {
    "1.0": {
        "concurrent_generations": "run by the v0.3 clients, which hold the v0.3 side of it",
        "send_file": "v0.3's file encoding (`file_with_bytes`), which v1.0 does not share",
        "receive_file": "v0.3's file encoding (`file_with_bytes`), which v1.0 does not share",
        "send_default_blocking": "v0.3's blocking default; v1.0's is send_blocking",
    },
    "0.3": {"list_paging": "v0.3 has no tasks/list: neither v0.3 SDK client has such a call"},
}
RUNS = {generation: [case for case in CASES if case not in left_out] for generation, left_out in RUNS_NOT.items()}
# Card signatures (A2A v1.0 §8.4), checked with each v1.0 SDK's own signer and verifier
# (interop/python/card_signature.py, interop/js/card_signature.mjs), for each algorithm agentwire signs with.
SIGNING_CLIENTS = {"python": INTEROP / "python" / "card_signature.py", "js": JS / "card_signature.mjs"}
SIGNING_ALGORITHMS = ["ES256", "EdDSA"]
SIGNATURE_CASES = [
    f"{check} {alg}" for alg in SIGNING_ALGORITHMS for check in ("verifies agentwire's", "signs for agentwire")
]
SIGNATURE_CHECKS = {
    "verifies agentwire's": "the SDK's verifier accepts the card `agentwire serve --signing-key` serves (the combined "
    "card, as the SDK fetches it), with the key from the agent's /.well-known/jwks.json",
    "signs for agentwire": "a card the SDK's signer signs verifies with `agentwire card --verify-card-keys`, and "
    "not with another key set",
}
# The official MCP SDKs' clients, each over both of MCP's transports, against one gateway with
# `--mcp` in front of two agents: `conf` (agentwire's conformance agent) and `py` (the official A2A
# Python SDK's agent).
MCP_CLIENTS = {"mcp-python": INTEROP / "mcp-python" / "client.py", "mcp-js": MCP_JS / "client.mjs"}
MCP_TRANSPORTS = ["http", "stdio"]
MCP_CASES = {
    "list_tools": "tools/list has list_agents, send_message, get_task, cancel_task and a tool per skill of both agents "
    "(conf_conformance, py_tck), each with a description and an input schema that requires `message`",
    "call_agentwire_skill": "calling conf_conformance with `tck-artifact-text` returns the artifact's text `Generated "
    "text content`, not an error, with the A2A task's id and state COMPLETED as structured content",
    "call_python_sdk_skill": "calling py_tck (the Python SDK's agent, behind the gateway) returns its echo of the text",
    "list_agents": "list_agents with the query `python` finds `py` alone; without a query, both agents",
    "progress": "send_message with a progress token to a task that works for a second: at least two progress "
    "notifications, increasing, one of them WORKING, then the answer `Long-running task finished`",
    "cancel": "the client cancels a running call (after its WORKING progress); the A2A task ends CANCELED, as "
    "the agent's own ListTasks (A2A, through the gateway) shows",
    "elicitation": "a task that asks for input (INPUT_REQUIRED) puts its question to the client's elicitation "
    "handler; the answer `done` continues the task to `Conversation complete` [Python: 2026-07-28's "
    "input-required result and retry; TypeScript: the elicitation/create request]",
    "no_credentials": "HTTP: the SDK's connect without a token fails; the server answers 401 with a Bearer challenge "
    "naming resource_metadata, whose document's `resource` is the /mcp URL. stdio (`agentwire mcp` without "
    "--token): the call is refused with the gateway's `valid credentials are required`",
}
# MCP clients that declare MCP's tasks extension (SEP-2663), as the MCP Inspector does by default: a
# 2025-11-25 client must get its answers (its SDKs read a task handle as an empty result), a
# 2026-07-28 client of @modelcontextprotocol/ext-tasks the tasks it follows. Each client program
# takes the same arguments; each is run against the TARGETS it names.
MCP_INSPECTOR = INTEROP / "mcp-inspector"
MCP_JS_V2 = INTEROP / "mcp-js-v2"
MCP_TASKS_CLIENTS = {
    "mcp-inspector-cli": ["node", str(MCP_INSPECTOR / "client.mjs")],
    "mcp-js-tasks": ["node", str(MCP_JS / "tasks_client.mjs")],
    "mcp-js-v2-2025": ["node", str(MCP_JS_V2 / "client.mjs"), "--era", "2025-11-25"],
    "mcp-js-v2-2026": ["node", str(MCP_JS_V2 / "client.mjs"), "--era", "2026-07-28"],
}
# `gateway`: streamable HTTP at `agentwire gateway --mcp`'s /mcp; `stdio`: `agentwire mcp GATEWAY`;
# `serve`: streamable HTTP at `agentwire serve --agent conformance --mcp`'s /mcp. ext-tasks sends its
# 2026-07-28 task traffic through a request path of the client's own, here an HTTP POST: no stdio.
MCP_TASKS_TARGETS = {
    "mcp-inspector-cli": ["gateway", "stdio", "serve"],
    "mcp-js-tasks": ["gateway", "stdio", "serve"],
    "mcp-js-v2-2025": ["gateway", "stdio", "serve"],
    "mcp-js-v2-2026": ["gateway", "serve"],
}
MCP_TASKS_CASES = {
    "list_tools": "tools/list has list_agents, send_message, get_task, cancel_task and the conformance skill's tool",
    "quick_call": "send_message `tck-artifact-text` answers `Generated text content` at once (2026-07-28: without "
    "a task)",
    "slow_call": "send_message `tck-cancel …`, whose task works until it is canceled over A2A 5 s later: the call's "
    "answer is that task, CANCELED, after 5 s; no task handle for 2025-11-25 (the Inspector printed an empty one, "
    "the SDKs read empty content), an MCP task followed to its end for 2026-07-28",
    "input_call": "send_message `tck-multi-turn start`, whose task asks a question: the client's elicitation handler "
    "is asked it and answers `done`, and the call answers `Conversation complete` (2026-07-28: on the task); the "
    "Inspector, without elicitation, gets a result that quotes the question",
}
# The model agent (`agentwire serve --agent openai`) in front of LiteLLM's proxy serving the scripted
# model of interop/model, called by each A2A client with a program of its own. Its cells are keyed
# `model agent: CLIENT / BINDING / CASE`, apart from the matrix's cases of the same names.
MODEL_CLIENTS = {
    "python": INTEROP / "python" / "model_client.py",
    "js": JS / "model_client.mjs",
    "python-0.3": INTEROP / "python03" / "model_client.py",
    "js-0.3": JS03 / "model_client.mjs",
}
MODEL_VIA = "model agent"
MODEL_KEY = "sk-scripted"  # the proxy's master_key (interop/model/config.yaml)
MODEL_CASES = {
    "ask": "a blocking send of `hello` completes, and the task's one artifact is the model's answer: `You said "
    "'hello'; this conversation has 1 user message(s) and 0 answer(s).`",
    "stream": "a streaming send of `hello there`: three artifact-update events or more, of one artifact: pieces "
    "(append=true after the first) that make the model's answer, then the last chunk alone (lastChunk=true, "
    "append=false) holding the whole answer; the stream ends COMPLETED [0.3: with a final status-update; js-0.3 "
    "over REST does not check append, which its SDK drops from the events it reads]",
    "context": "a blocking send of `hello again` with ask's contextId starts a new task, whose answer counts the "
    "conversation so far: `… 2 user message(s) and 1 answer(s).`",
}

# Google ADK (google-adk[a2a]), the framework many A2A agents are built with: its RemoteA2aAgent given
# a card URL, as its users call an agent, over each binding; against `agentwire serve` and against
# `agentwire gateway` in front of an agent ADK itself serves (`to_a2a`). Cells are keyed
# `VIA: google-adk / BINDING / CASE`.
ADK_BINDINGS = ["jsonrpc", "rest", "grpc"]
ADK_VIAS = {"adk": "conformance agent", "adk gateway": "gateway to an ADK agent"}
ADK_CASES = {
    "blocking": "RemoteA2aAgent given the card URL (ADK checks that every interface the card lists is an http(s) "
    "URL of the card's origin) sends a message without streaming over the one binding offered: `hello` answers "
    "`Hello from TCK` [the ADK agent: its own text]",
    "streaming": "the same with streaming: `tck-stream-basic` streams `Stream hello from TCK` [the ADK agent: its own "
    "text]",
}

# How the gateway calls an agent of v0.3 JSON-RPC alone: the one interface such an agent has.
V03_JSONRPC = ["--upstream-transport", "jsonrpc", "--upstream-protocol", "0.3"]


@dataclass
class Route:
    """The clients through `agentwire gateway --store`, in front of an agent called one way."""

    via: str  # the prefix of its cells in the baseline
    agent: str  # "agentwire" (the conformance agent) or "python-sdk" (interop/python-server)
    upstream: list[str]  # how the gateway calls the agent
    clients: list[str]  # which clients run through it
    title: str
    about: list[str]  # the report's words on it


ROUTES = [
    Route(
        "gateway",
        "agentwire",
        V03_JSONRPC,
        ["python", "js", "python-0.3", "js-0.3"],
        "Through the gateway, to an agent of v0.3 JSON-RPC alone",
        [
            "The same clients against `agentwire gateway --store` in front of a conformance server, which the",
            f"gateway calls in protocol v0.3 over JSON-RPC alone (`{' '.join(V03_JSONRPC)}`), as it calls",
            "an agent that speaks nothing else. The gateway keeps the tasks it relays in its own SQLite file",
            "and serves their lists, streams and push notifications from there, in each client's generation.",
            "One difference from the first table is the agent's, not the gateway's: the conformance agent",
            "answers a message that names no scenario as the v0.3 suite expects when it is asked in v0.3",
            "(INPUT_REQUIRED, not COMPLETED), which a v1.0 client's `hello` then is (error_cancel_finished,",
            "concurrent_generations).",
        ],
    ),
    Route(
        "gateway to the Python SDK",
        "python-sdk",
        V03_JSONRPC,
        ["python", "js", "python-0.3", "js-0.3"],
        "Through the gateway, to the Python SDK's agent in v0.3 JSON-RPC alone",
        [
            "The same clients against `agentwire gateway --store` in front of the official Python SDK's",
            "agent (interop/python-server, a2a-sdk 1.3.0), which the gateway calls in protocol v0.3 over",
            "JSON-RPC alone. That agent plays the conformance agent's scenarios by the first word of a",
            "message, but sends no files and answers `hello` as the v0.3 suite expects (INPUT_REQUIRED):",
            "the cases that need those fail for the agent's sake (send_file, receive_file,",
            "error_cancel_finished, concurrent_generations).",
        ],
    ),
    Route(
        "gateway to v1.0",
        "agentwire",
        ["--upstream-protocol", "1.0"],
        ["python-0.3", "js-0.3"],
        "Through the gateway, to an agent of v1.0 alone",
        [
            "The v0.3 clients against `agentwire gateway --store` in front of a conformance server, which the",
            "gateway calls in protocol v1.0 alone (`--upstream-protocol 1.0`), as it calls an agent that",
            "speaks no v0.3.",
        ],
    ),
]
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
    # stdout stays free for what the runner itself prints (--install-server's path).
    subprocess.run(command, check=True, stdout=sys.stderr, **kwargs)


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


def install_python(name: str, program: Path, venv: Path) -> Client:
    """A venv at `venv` with `program`'s requirements.txt beside it; one venv per SDK release.
    uv installs it (scripts/uv: the pinned uv, a fifth of pip's time), compiling every module as
    pip does, so that a first start under load does not compile LiteLLM's proxy as it imports it
    (over a minute on a busy machine)."""
    requirements = program.parent / "requirements.txt"
    python = venv / "bin" / "python"
    uv = str(ROOT / "scripts" / "uv")
    setup = [[uv, "venv", "--quiet", "--clear", "--python", sys.executable, str(venv)]] if not python.exists() else []
    install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python), "-r", str(requirements)]
    install_if_changed(requirements, venv / ".requirements.sha256", setup + [install])
    return Client(name, [str(python), str(program)])


def install_js(name: str, package: Path) -> Client:
    """`npm ci` in `package`, which holds the client program and its lock file."""
    npm = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    lock = package / "package-lock.json"
    install_if_changed(lock, package / "node_modules" / ".package-lock.sha256", [npm], cwd=package)
    return Client(name, ["node", str(package / "client.mjs")])


INSTALLERS = {
    "python": lambda: install_python("python", INTEROP / "python" / "client.py", VENV),
    "js": lambda: install_js("js", JS),
    "python-0.3": lambda: install_python("python-0.3", INTEROP / "python03" / "client.py", VENV03),
    "js-0.3": lambda: install_js("js-0.3", JS03),
}


# Ports are handed out below the kernel's ephemeral range (32768 and up), where no client
# connection or `:0` bind (of this run or of tests beside it) takes one before its server binds it;
# the start is spread by process so that two runs at once do not walk the same ports.
_NEXT_PORT = itertools.count(20000 + os.getpid() * 7919 % 12000)


def free_port() -> int:
    while True:
        port = 20000 + (next(_NEXT_PORT) - 20000) % 12000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def build_server() -> Path:
    run(["cargo", "build", "--locked", "--quiet", "--bin", "agentwire"], cwd=ROOT)
    return ROOT / "target" / "debug" / "agentwire"


class Server:
    """`agentwire serve --agent conformance` on a free port; with `gateway_for`, `agentwire
    gateway` in front of the agent at that URL, calling it as `upstream` says; with `sdk`, the
    Python SDK's agent of interop/python-server run by that interpreter; with `model`, `agentwire
    serve --agent openai` asking the scripted model at that URL (a ModelProxy's). Stopped on exit."""

    def __init__(
        self,
        binary: Path,
        extra: list[str] | None = None,
        gateway_for: str | None = None,
        upstream: list[str] | None = None,
        sdk: Client | None = None,
        ready_path: str = "/.well-known/agent-card.json",
        model: str | None = None,
        adk_agent: Client | None = None,
    ):
        port = free_port()
        self.ready_path = ready_path
        self.url = f"http://127.0.0.1:{port}"
        self.log_file = tempfile.NamedTemporaryFile(prefix="agentwire-interop-", suffix=".log", delete=False)
        # The default kind of store, SQLite, in a file of this run's own.
        self.store = tempfile.TemporaryDirectory(prefix="agentwire-interop-")
        env = None
        if model:
            # Tasks in memory and no credentials asked: the model agent's table checks its answers.
            command = [str(binary), "serve", "--agent", "openai", "--base-url", model, "--model", "scripted",
                       "--store", "memory", "--http", f"127.0.0.1:{port}"]  # fmt: skip
            env = os.environ | {"OPENAI_API_KEY": MODEL_KEY}
        elif adk_agent:
            command = adk_agent.command + ["--port", str(port)]
        elif sdk:
            command = sdk.command + ["--port", str(port), "--grpc-port", str(free_port()), "--token", TOKEN]
        else:
            if gateway_for:
                # The gateway asks callers for the token the agent takes, and calls the agent with
                # it; it keeps the tasks it relays, and delivers their push notifications itself.
                serving = ["gateway", "--upstream", gateway_for, "--upstream-token", TOKEN, "--store",
                           f"sqlite:{self.store.name}/mirror.db", "--allow-private-webhooks"] + (upstream or [])  # fmt: skip
            else:
                # Clients run their webhook receivers on loopback.
                serving = ["serve", "--agent", "conformance", "--store", f"sqlite:{self.store.name}/tasks.db",
                           "--allow-private-webhooks"]  # fmt: skip
            # Bearer auth guards the extended card.
            command = [str(binary), *serving, "--http", f"127.0.0.1:{port}", "--auth", f"bearer:{TOKEN}"]
            command += extra or []
        log("$ " + " ".join(command))
        self.process = subprocess.Popen(command, stdout=self.log_file, stderr=subprocess.STDOUT, env=env)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}{self.ready_path}", timeout=1):
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
        self.store.cleanup()


@dataclass
class Column:
    """What one client reported over one binding."""

    client: str
    sdk: str
    version: str
    binding: str
    verdicts: dict[str, tuple[bool, str]]
    failure: str = ""  # set when the client program itself broke
    only: list[str] | None = None  # the card-signature checks, which are not matrix cases
    via: str = ""  # the route's `via` when the client called through a gateway; MODEL_VIA for the model agent

    @property
    def cases(self) -> list[str]:
        """The cases this column's client runs; a cell outside them is not run, not missing."""
        return self.only if self.only is not None else RUNS[GENERATION[self.client]]

    @property
    def label(self) -> str:
        """How the report and the log name the column: which SDK version was measured."""
        return f"{self.sdk} {self.version} / {self.binding}" + (f" via the {self.via}" if self.via else "")

    def cell(self, case: str) -> str:
        """The baseline's key for `case`. It names no SDK version: bumping a pin must not start a
        fresh baseline in which every failure is one that "never passed"."""
        return (f"{self.via}: " if self.via else "") + f"{self.client} / {self.binding} / {case}"


def run_client(client: Client, binding: str, url: str, via: str = "") -> Column:
    command = client.command + ["--url", url, "--binding", binding, "--token", TOKEN]
    return run_program(Column(client.name, client.name, "?", binding, {}, via=via), command)


def run_program(column: Column, command: list[str]) -> Column:
    """Runs a client program, which prints a meta line and then a verdict per case, into `column`."""
    log("$ " + " ".join(command))
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
            meta = record["meta"]
            # An MCP client also names the protocol revision it negotiated.
            negotiated = f" (MCP {meta['protocol']})" if "protocol" in meta else ""
            column.sdk, column.version = meta["sdk"], meta["version"] + negotiated
        elif record.get("case") in column.cases:
            column.verdicts[record["case"]] = (record.get("ok") is True, str(record.get("detail", "")))
    if done.returncode != 0:
        column.failure = f"exit {done.returncode}: " + "\n".join(done.stderr.splitlines()[-10:])
    return column


def run_direct(binary: Path, clients: list[Client]) -> list[Column]:
    """Runs `clients` over every binding against a conformance server of their own."""
    server = Server(binary)
    try:
        columns = [run_client(client, binding, server.url) for client in clients for binding in BINDINGS[client.name]]
        if any(not verdict(c, case)[0] for c in columns for case in c.cases):
            log("server log (last lines):\n" + server.log_tail())
    finally:
        server.stop()
    return columns


def run_route(route: Route, binary: Path, clients: list[Client]) -> list[Column]:
    """Runs `clients` over every binding through a gateway in front of the route's agent, which
    serves this route alone."""
    if not clients:
        return []
    if route.agent == "python-sdk":
        agent = Server(binary, sdk=install_python("server", INTEROP / "python-server" / "server.py", VENV_SERVER))
    else:
        agent = Server(binary)
    try:
        gateway = Server(binary, gateway_for=agent.url, upstream=route.upstream)
        try:
            columns = [
                run_client(client, binding, gateway.url, via=route.via)
                for client in clients
                for binding in BINDINGS[client.name]
            ]
            if any(not verdict(c, case)[0] for c in columns for case in c.cases):
                log(f"{route.via} log (last lines):\n" + gateway.log_tail())
        finally:
            gateway.stop()
    finally:
        agent.stop()
    return columns


def log_passes(columns: list[Column], kind: str) -> None:
    """Logs how many of its `kind` cases each column passes, and why a client program broke."""
    for column in columns:
        passed = sum(verdict(column, case)[0] for case in column.cases)
        failure = f" ({column.failure})" if column.failure else ""
        log(f"{column.label}: {passed}/{len(column.cases)} {kind}cases pass{failure}")


def verdict(column: Column, case: str) -> tuple[bool, str]:
    return column.verdicts.get(case, (False, column.failure or "the client reported nothing for this case"))


def render_report(columns: list[Column]) -> str:
    direct = [c for c in columns if not c.via]
    lines = [
        "# Interoperability matrix",
        "",
        "Official A2A SDK clients (programs in `interop/`) against `agentwire serve --agent conformance`:",
        "protocol v1.0 with each SDK's current release, protocol v0.3 with each SDK's last v0.3 release,",
        "all against one server. Written by `python3 interop/run.py --record`; do not edit by hand.",
        "Each cell checks results (states, texts, counts, error types), not only that a call returned;",
        "a cell marked n/a is a case that generation does not run (see below).",
        "",
    ]
    lines += render_matrix(direct)
    for route in ROUTES:
        routed = [c for c in columns if c.via == route.via]
        if routed:
            lines += ["", f"## {route.title}", "", *route.about, ""]
            lines += render_matrix(routed)
    lines += ["", "## What each operation checks", "", "| operation | checks |", "|---|---|"]
    lines += [f"| {case} | {checks} |" for case, checks in CASES.items()]
    lines += ["", "## Cases a generation does not run", "", "| generation | operation | why |", "|---|---|---|"]
    lines += [
        f"| v{generation} | {case} | {why} |"
        for generation, left_out in RUNS_NOT.items()
        for case, why in left_out.items()
    ]
    lines.append("")
    return "\n".join(lines)


def render_matrix(columns: list[Column]) -> list[str]:
    """One table, a column per client and binding, then its failures."""
    titles = [f"{c.sdk} {c.version}<br>v{GENERATION[c.client]} {c.binding}" for c in columns]
    lines = ["| operation | " + " | ".join(titles) + " |", "|---|" + "---|" * len(columns)]
    for case in CASES:
        cells = ["n/a" if case not in c.cases else "pass" if verdict(c, case)[0] else "**FAIL**" for c in columns]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    failures = [(c, case) for c in columns for case in c.cases if not verdict(c, case)[0]]
    if failures:
        lines += ["", "### Failures", ""]
        lines += [f"- {c.label}, `{case}`: {verdict(c, case)[1]}" for c, case in failures]
    return lines


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    log(f"wrote {path.relative_to(ROOT)}")


def load_baseline() -> dict[str, str]:
    return json.loads(BASELINE.read_text()) if BASELINE.exists() else {}


def unknown_cells(baseline: dict[str, str]) -> list[str]:
    """Baseline cells that name no client, binding or case of this runner. Nothing would ever check
    them, so renaming a case or a client without renaming its cells must fail the run."""
    known = {
        f"{via}{client} / {binding} / {case}"
        for via, clients in [("", CLIENTS)] + [(f"{route.via}: ", route.clients) for route in ROUTES]
        for client in clients
        for binding in BINDINGS[client]
        for case in RUNS[GENERATION[client]]
    } | {f"{client} / card / {case}" for client in SIGNING_CLIENTS for case in SIGNATURE_CASES} | {
        f"{client} / {transport} / {case}" for client in MCP_CLIENTS for transport in MCP_TRANSPORTS for case in MCP_CASES
    } | {
        f"{client} / {target} / {case}"
        for client, targets in MCP_TASKS_TARGETS.items()
        for target in targets
        for case in MCP_TASKS_CASES
    } | {
        f"{MODEL_VIA}: {client} / {binding} / {case}"
        for client in MODEL_CLIENTS
        for binding in BINDINGS[client]
        for case in MODEL_CASES
    } | {f"{via}: google-adk / {binding} / {case}" for via in ADK_VIAS for binding in ADK_BINDINGS for case in ADK_CASES}
    return sorted(set(baseline) - known)


def find_regressions(columns: list[Column], baseline: dict[str, str]) -> list[str]:
    """The cells the baseline records as passing that do not pass now, with why."""
    return [
        f"{column.cell(case)} ({column.label}): {verdict(column, case)[1]}"
        for column in columns
        for case in column.cases
        if baseline.get(column.cell(case)) == "pass" and not verdict(column, case)[0]
    ]


def find_never_passed(columns: list[Column], baseline: dict[str, str]) -> list[str]:
    """The cells that fail now and never passed: logged, but no reason to fail the run."""
    return [
        column.cell(case)
        for column in columns
        for case in column.cases
        if not verdict(column, case)[0] and baseline.get(column.cell(case)) != "pass"
    ]


def record_baseline(columns: list[Column], baseline: dict[str, str]) -> list[str]:
    """Adds the cells that pass for the first time to the baseline file (never removes one);
    returns them. The file is rewritten only when a cell is added."""
    added = [
        column.cell(case)
        for column in columns
        for case in column.cases
        if verdict(column, case)[0] and baseline.get(column.cell(case)) != "pass"
    ]
    if added:
        recorded = baseline | {cell: "pass" for cell in added}
        BASELINE.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
    return added


def install_model() -> Path:
    """LiteLLM's proxy, in a venv of its own; returns its `litellm` executable, which
    interop/model/serve.py runs."""
    python = Path(install_python("model", MODEL / "serve.py", VENV_MODEL).command[0])
    return python.parent / "litellm"


def install_mcp_clients() -> dict[str, Client]:
    """The official MCP SDKs, each in an install of its own; and those of MCP_TASKS_CLIENTS
    (mcp_tasks_columns runs them)."""
    python = install_python("mcp-python", MCP_CLIENTS["mcp-python"], VENV_MCP)
    npm = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    for package in (MCP_JS, MCP_JS_V2, MCP_INSPECTOR):
        lock = package / "package-lock.json"
        install_if_changed(lock, package / "node_modules" / ".package-lock.sha256", [npm], cwd=package)
    return {"mcp-python": python, "mcp-js": Client("mcp-js", ["node", str(MCP_CLIENTS["mcp-js"])])}


def mcp_columns(binary: Path, clients: dict[str, Client]) -> list[Column]:
    """Each MCP SDK's client over each transport, against one gateway with `--mcp` in front of a
    conformance server (`conf`) and the Python SDK's agent (`py`); and, side by side on servers of
    their own, the clients that declare the tasks extension (mcp_tasks_columns)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        tasks_run = pool.submit(mcp_tasks_columns, binary)
        return mcp_sdk_columns(binary, clients) + tasks_run.result()


def mcp_sdk_columns(binary: Path, clients: dict[str, Client]) -> list[Column]:
    """Each of `clients` over each transport, against one gateway with `--mcp` in front of a
    conformance server (`conf`) and the Python SDK's agent (`py`), one after another (their cancel
    cases read the newest task)."""
    agent = Server(binary)
    sdk = Server(binary, sdk=install_python("server", INTEROP / "python-server" / "server.py", VENV_SERVER))
    try:
        gateway = Server(binary, gateway_for=f"conf={agent.url}", extra=["--upstream", f"py={sdk.url}", "--mcp"],
                         ready_path="/agents")  # fmt: skip
        try:
            columns = []
            for name, client in clients.items():
                for transport in MCP_TRANSPORTS:
                    target = (["--url", f"{gateway.url}/mcp"] if transport == "http"
                              else ["--stdio", str(binary), "mcp", gateway.url])  # fmt: skip
                    command = client.command + ["--token", TOKEN, "--a2a-url", f"{gateway.url}/agents/conf", *target]
                    column = Column(name, name, "?", transport, {}, only=list(MCP_CASES))
                    columns.append(run_program(column, command))
            if any(not verdict(c, case)[0] for c in columns for case in c.cases):
                log("MCP gateway log (last lines):\n" + gateway.log_tail())
        finally:
            gateway.stop()
    finally:
        sdk.stop()
        agent.stop()
    return columns


def run_mcp_only(binary: Path) -> int:
    """`--only-mcp`: step 5 alone, written to RESULTS and checked against the baseline's cells it
    runs (a partial run: nothing is recorded, and cells of other steps are not looked at)."""
    install_python("server", INTEROP / "python-server" / "server.py", VENV_SERVER)
    columns = mcp_columns(binary, install_mcp_clients())
    log_passes(columns, "MCP ")
    write(RESULTS, render_mcp(columns))
    baseline = load_baseline()
    for cell in find_never_passed(columns, baseline):
        log(f"fails, never passed (not a regression): {cell}")
    regressions = find_regressions(columns, baseline)
    for regression in regressions:
        log(f"REGRESSION {regression}")
    log(f"MCP clients as measured: {RESULTS.relative_to(ROOT)}")
    return 1 if regressions else 0


def mcp_tasks_columns(binary: Path) -> list[Column]:
    """Each client of MCP_TASKS_CLIENTS against each of its targets: a conformance server with
    `--mcp` (`serve`), and a gateway with `--mcp` in front of it as `conf` (`gateway`, and `stdio`
    through `agentwire mcp GATEWAY`). Their calls find their own tasks, so columns run side by side."""
    agent = Server(binary, extra=["--mcp"])
    try:
        gateway = Server(binary, gateway_for=f"conf={agent.url}", extra=["--mcp"], ready_path="/agents")
        try:
            through_gateway = ["--a2a-url", f"{gateway.url}/agents/conf", "--agent", "conf"]
            targets = {
                "serve": ["--url", f"{agent.url}/mcp", "--a2a-url", agent.url],
                "gateway": ["--url", f"{gateway.url}/mcp", *through_gateway],
                "stdio": [*through_gateway, "--stdio", str(binary), "mcp", gateway.url],
            }
            runs = [
                (Column(name, name, "?", target, {}, only=list(MCP_TASKS_CASES)),
                 command + ["--token", TOKEN, *targets[target]])
                for name, command in MCP_TASKS_CLIENTS.items()
                for target in MCP_TASKS_TARGETS[name]
            ]  # fmt: skip
            # All at once: each mostly waits (its slow call, for 5 s).
            with ThreadPoolExecutor(max_workers=len(runs)) as pool:
                columns = list(pool.map(lambda run: run_program(*run), runs))
            if any(not verdict(c, case)[0] for c in columns for case in c.cases):
                log("MCP tasks-extension gateway log (last lines):\n" + gateway.log_tail())
                log("MCP tasks-extension agent log (last lines):\n" + agent.log_tail())
        finally:
            gateway.stop()
    finally:
        agent.stop()
    return columns


def render_mcp(columns: list[Column]) -> str:
    about = ("The official MCP SDKs' clients against `agentwire gateway --mcp` in front of agentwire's conformance agent "
             "(`conf`) and the official A2A Python SDK's agent (`py`): over streamable HTTP at `/mcp`, and over stdio "
             "through `agentwire mcp GATEWAY` (interop/mcp-python, interop/mcp-js).")  # fmt: skip
    heading = lambda c: f"{c.sdk} {c.version}<br>{c.binding}"  # noqa: E731
    sdks = [c for c in columns if c.client in MCP_CLIENTS]
    tasks = [c for c in columns if c.client in MCP_TASKS_CLIENTS]
    about_tasks = ("MCP clients that declare MCP's tasks extension, as the MCP Inspector does by default: the "
                   "Inspector's CLI with its defaults, one process per request (interop/mcp-inspector); the TypeScript "
                   "SDK v2 in MCP 2025-11-25, and in 2026-07-28 with @modelcontextprotocol/ext-tasks "
                   "(interop/mcp-js-v2); the TypeScript SDK 1.32 (interop/mcp-js/tasks_client.mjs). Against `agentwire "
                   "serve --agent conformance --mcp` (`serve`), `agentwire gateway --mcp` in front of it (`gateway`), "
                   "and `agentwire mcp GATEWAY` over stdio (`stdio`). A 2025-11-25 client gets its answers; a "
                   "2026-07-28 client of the extension gets the tasks it follows.")  # fmt: skip
    checked = ("case", "what it checks")
    title = "MCP clients of the tasks extension"
    return render_checks("MCP", about, sdks, heading, list(MCP_CASES), checked, MCP_CASES) + render_checks(
        title, about_tasks, tasks, heading, list(MCP_TASKS_CASES), checked, MCP_TASKS_CASES
    )


def render_checks(
    title: str,
    about: str,
    columns: list[Column],
    heading,
    cases: list[str],
    explained: tuple[str, str],
    explanations: dict[str, str],
) -> str:
    """A section of checks outside the matrix: a table of its cases by column, the failures, and
    what each check does."""
    if not columns:
        return ""
    lines = ["", f"## {title}", ""] + ([about, ""] if about else [])
    lines += [f"| {explained[0]} | " + " | ".join(heading(c) for c in columns) + " |"]
    lines.append("|---|" + "---|" * len(columns))
    for case in cases:
        cells = ["pass" if verdict(c, case)[0] else "**FAIL**" for c in columns]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    failures = [(c, case) for c in columns for case in c.cases if not verdict(c, case)[0]]
    lines += [""] + [f"- {c.label}, `{case}`: {verdict(c, case)[1]}" for c, case in failures]
    lines += [""] if failures else []
    lines += [f"| {explained[0]} | {explained[1]} |", "|---|---|"] + [f"| {k} | {v} |" for k, v in explanations.items()]
    return "\n".join(lines) + "\n"


class ModelProxy:
    """LiteLLM's proxy serving the scripted model (interop/model/serve.py) on a free port, recording
    what the model is asked. Stopped on exit."""

    def __init__(self, litellm: Path):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/v1"
        self.log_file = tempfile.NamedTemporaryFile(prefix="agentwire-model-", suffix=".log", delete=False)
        self.asked = Path(self.log_file.name).with_suffix(".jsonl")
        command = [sys.executable, str(MODEL / "serve.py"), "--litellm", str(litellm), "--port", str(port),
                   "--record", str(self.asked)]  # fmt: skip
        log("$ " + " ".join(command))
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log_file, text=True)
        # serve.py says `ready` once the proxy answers, or exits within its own start timeout.
        if self.process.stdout.readline().strip() != "ready":
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"the model proxy did not start:\n{tail}")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(Path(self.log_file.name).read_text(errors="replace").splitlines()[-lines:])

    def requests(self, lines: int = 10) -> str:
        """The last requests the model got: the conversations the agent sent it."""
        return "\n".join(self.asked.read_text().splitlines()[-lines:]) if self.asked.exists() else "(none)"

    def stop(self) -> None:
        self.process.terminate()  # serve.py stops the proxy with it
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()  # the proxy dies with it too (serve.py's parent-death signal)
            self.process.wait()
        os.unlink(self.log_file.name)
        self.asked.unlink(missing_ok=True)


def model_columns(binary: Path, clients: list[Client], litellm: Path) -> list[Column]:
    """Each A2A client, over each of its bindings, against `agentwire serve --agent openai` in front
    of the scripted model."""
    model = ModelProxy(litellm)
    try:
        agent = Server(binary, model=model.url)
        try:
            columns = []
            for client in clients:
                for binding in BINDINGS[client.name]:
                    # The client's interpreter (its venv's python, or node) runs the model program.
                    program = [client.command[0], str(MODEL_CLIENTS[client.name])]
                    column = Column(client.name, client.name, "?", binding, {}, only=list(MODEL_CASES), via=MODEL_VIA)
                    columns.append(run_program(column, program + ["--url", agent.url, "--binding", binding]))
            if any(not verdict(c, case)[0] for c in columns for case in c.cases):
                log("model agent log (last lines):\n" + agent.log_tail())
                log("model proxy log (last lines):\n" + model.log_tail())
                log("the model's last requests:\n" + model.requests())
        finally:
            agent.stop()
    finally:
        model.stop()
    return columns


def install_adk() -> Client:
    """Google ADK in a venv of its own; the client program (the agent program shares the venv)."""
    return install_python("google-adk", ADK / "client.py", VENV_ADK)


def adk_columns(binary: Path, adk: Client) -> list[Column]:
    """ADK's client by card URL over each binding: against a conformance server, then against a
    gateway in front of an agent ADK serves."""
    python = adk.command[0]
    columns = []
    with contextlib.ExitStack() as servers:
        agent = servers.enter_context(stopping(Server(binary)))
        adk_agent = servers.enter_context(stopping(Server(binary, adk_agent=Client("adk agent", [python, str(ADK / "agent.py")]))))
        gateway = servers.enter_context(stopping(Server(binary, gateway_for=adk_agent.url)))
        for via, (url, served) in zip(ADK_VIAS, [(agent.url, "conformance"), (gateway.url, "echo")]):
            for binding in ADK_BINDINGS:
                column = Column("google-adk", "google-adk", "?", binding, {}, only=list(ADK_CASES), via=via)
                command = adk.command + ["--url", url, "--binding", binding, "--token", TOKEN, "--agent", served]
                columns.append(run_program(column, command))
        if any(not verdict(c, case)[0] for c in columns for case in c.cases):
            log("ADK runs' logs (last lines):\n" + agent.log_tail() + "\n" + gateway.log_tail())
            log("ADK agent log (last lines):\n" + adk_agent.log_tail())
    return columns


@contextlib.contextmanager
def stopping(server: "Server"):
    """`server`, stopped when the block ends, however it ends."""
    try:
        yield server
    finally:
        server.stop()


def render_adk(columns: list[Column]) -> str:
    about = ("Google ADK's `RemoteA2aAgent`, given the agent's card URL (its usual use), run by ADK's Runner, over each "
             "binding: against `agentwire serve --agent conformance`, and against `agentwire gateway` in front of an "
             "agent made with ADK and served by its `to_a2a` (interop/adk). Over gRPC, the SDK's "
             "`grpc_channel_factory` dials the host and port of the card's gRPC URL.")  # fmt: skip
    heading = lambda c: f"{c.sdk} {c.version}<br>{ADK_VIAS[c.via]}<br>{c.binding}"  # noqa: E731
    return render_checks("Google ADK", about, columns, heading, list(ADK_CASES), ("case", "what it checks"), ADK_CASES)


def render_model(columns: list[Column]) -> str:
    about = ("The same A2A clients against `agentwire serve --agent openai`, whose answers come from a chat model "
             "behind an OpenAI-compatible API: here LiteLLM's proxy (interop/model) serving a scripted model, which "
             "answers `You said '…'; this conversation has U user message(s) and A answer(s).` word by word, counting "
             "the messages it was sent. Each SDK calls the agent with a small program beside its client "
             "(`model_client.py`, `model_client.mjs`).")  # fmt: skip
    heading = lambda c: f"{c.sdk} {c.version}<br>v{GENERATION[c.client]} {c.binding}"  # noqa: E731
    return render_checks("The model agent", about, columns, heading, list(MODEL_CASES), ("case", "what it checks"),
                         MODEL_CASES)  # fmt: skip


def signature_columns(binary: Path, clients: list[Client]) -> list[Column]:
    """Each v1.0 SDK verifies the cards agentwire signs, and signs cards agentwire verifies."""
    columns = [
        Column(c.name, c.name, "?", "card", {}, only=SIGNATURE_CASES) for c in clients if c.name in SIGNING_CLIENTS
    ]
    if not columns:
        return []
    work = Path(tempfile.mkdtemp(prefix="agentwire-signatures-"))
    files = StaticFiles(work)
    try:
        for alg in SIGNING_ALGORITHMS:
            key = work / f"{alg}.pem"
            run([str(binary), "keygen", "--alg", alg, str(key)])
            server = Server(binary, ["--signing-key", str(key)])
            try:
                card_url = f"{server.url}/.well-known/agent-card.json"
                request = urllib.request.Request(card_url, headers={"A2A-Version": "1.0"})
                with urllib.request.urlopen(request, timeout=10) as response:
                    card = json.load(response)
                card.pop("signatures", None)
                (work / "unsigned.json").write_text(json.dumps(card))
                for column in columns:
                    interpreter = next(c.command[0] for c in clients if c.name == column.client)
                    script = [interpreter, str(SIGNING_CLIENTS[column.client])]
                    verify = script + ["verify", card_url, f"{server.url}/.well-known/jwks.json"]
                    column.verdicts[f"verifies agentwire's {alg}"] = outcome(verify)
                    signed = signed_by_sdk(binary, script, column.client, alg, key, work, files)
                    column.verdicts[f"signs for agentwire {alg}"] = signed
            finally:
                server.stop()
    finally:
        files.stop()
        shutil.rmtree(work, ignore_errors=True)
    return columns


def outcome(command: list[str]) -> tuple[bool, str]:
    """Whether `command` exits 0, with the last line it printed."""
    log("$ " + " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    said = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1]
    return done.returncode == 0, said[:300]


def signed_by_sdk(
    binary: Path, script: list[str], sdk: str, alg: str, key: Path, work: Path, files: "StaticFiles"
) -> tuple[bool, str]:
    """The SDK signs agentwire's own v1.0 card with `key`; agentwire verifies it with the SDK's
    key set, and refuses it with an empty one."""
    kid = f"{sdk}-{alg}"
    folder = work / kid
    folder.mkdir()
    for name, command in (
        ("agent-card.json", script + ["sign", str(work / "unsigned.json"), str(key), kid, alg]),
        ("jwks.json", script + ["jwks", str(key), kid, alg]),
    ):
        log("$ " + " ".join(command))
        done = subprocess.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
        if done.returncode != 0:
            return False, f"the SDK could not make {name}: {done.stderr.strip()[-300:]}"
        (folder / name).write_text(done.stdout)
    (folder / "empty.json").write_text('{"keys": []}')
    card = f"{files.url}/{kid}/agent-card.json"
    accepted = outcome([str(binary), "card", card, "--verify-card-keys", f"{files.url}/{kid}/jwks.json"])
    refused = outcome([str(binary), "card", card, "--verify-card-keys", f"{files.url}/{kid}/empty.json"])
    if refused[0]:
        return False, "a card verified with an empty key set: the check proves nothing"
    return accepted


class StaticFiles:
    """A folder served over HTTP on a loopback port, as an agent that only publishes a card would."""

    def __init__(self, root: Path):
        import functools
        import http.server
        import threading

        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *args: None  # type: ignore[method-assign]
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def render_signatures(columns: list[Column]) -> str:
    heading = lambda c: c.label  # noqa: E731
    checked = ("check", "what it does")
    return render_checks("Card signatures", "", columns, heading, SIGNATURE_CASES, checked, SIGNATURE_CHECKS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, help="an agentwire binary to test instead of building one")
    parser.add_argument("--only", choices=CLIENTS, help="run one client only (cannot be recorded)")
    parser.add_argument("--only-mcp", action="store_true", help="run the MCP clients only (step 5; cannot be recorded)")
    parser.add_argument(
        "--install-server",
        action="store_true",
        help="only install the Python SDK server of interop/python-server (in interop/.venv-server) and "
        "print its interpreter's path, for the client tests' AGENTWIRE_SDK_PYTHON",
    )
    parser.add_argument(
        "--install-mcp",
        action="store_true",
        help="only install the official MCP Python SDK (in interop/.venv-mcp) and print its interpreter's path, "
        "for the MCP client tests' AGENTWIRE_MCP_PYTHON",
    )
    parser.add_argument(
        "--install-model",
        action="store_true",
        help="only install LiteLLM's proxy (in interop/.venv-model) and print its `litellm` executable's path, "
        "for interop/model/serve.py and the model agent's tests' AGENTWIRE_LITELLM",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="also write docs/INTEROP.md and add first-time passes to interop/baseline.json",
    )
    args = parser.parse_args()
    if args.record and args.only:
        parser.error("--record needs every client: a partial run must not record (drop --only)")
    if args.record and args.only_mcp:
        parser.error("--record needs every client: a partial run must not record (drop --only-mcp)")

    if args.install_mcp:
        print(install_python("mcp-python", MCP_CLIENTS["mcp-python"], VENV_MCP).command[0])
        return 0

    if args.install_model:
        print(install_model())
        return 0

    if args.only_mcp:
        return run_mcp_only(args.server or build_server())

    if args.install_server:
        server = install_python("server", INTEROP / "python-server" / "server.py", VENV_SERVER)
        print(server.command[0])
        return 0

    clients = [INSTALLERS[name]() for name in CLIENTS if args.only in (None, name)]
    if shutil.which("node") is None and any(c.command[0] == "node" for c in clients):
        raise SystemExit("node is not on PATH")
    binary = args.server or build_server()
    # The SDK server's venv is installed before the routes start side by side.
    install_python("server", INTEROP / "python-server" / "server.py", VENV_SERVER)
    # The MCP clients (a partial run leaves them out) and the model's proxy are installed before the
    # runs start too.
    mcp_clients = install_mcp_clients() if args.only is None else {}
    litellm = install_model()
    adk = install_adk() if args.only is None else None
    with ThreadPoolExecutor(max_workers=4 + len(ROUTES)) as pool:
        runs = [pool.submit(run_direct, binary, clients)] + [
            pool.submit(run_route, route, binary, [c for c in clients if c.name in route.clients]) for route in ROUTES
        ]
        mcp_run = pool.submit(mcp_columns, binary, mcp_clients) if mcp_clients else None
        model_run = pool.submit(model_columns, binary, clients, litellm)
        adk_run = pool.submit(adk_columns, binary, adk) if adk else None
        columns = [column for run in runs for column in run.result()]
        mcp = mcp_run.result() if mcp_run else []
        model = model_run.result()
        adk_runs = adk_run.result() if adk_run else []
    signatures = signature_columns(binary, clients)
    for column in signatures:
        measured = [(c.sdk, c.version) for c in columns if c.client == column.client]
        column.sdk, column.version = measured[0] if measured else ("?", "?")

    log_passes(columns, "")
    log_passes(mcp, "MCP ")
    log_passes(model, "model agent ")
    log_passes(adk_runs, "ADK ")
    report = (render_report(columns) + render_mcp(mcp) + render_adk(adk_runs) + render_model(model)
              + render_signatures(signatures))  # fmt: skip
    columns += mcp + model + adk_runs + signatures
    write(RESULTS, report)
    baseline = load_baseline()
    if args.record:
        write(RECORDED, report)
        for cell in record_baseline(columns, baseline):
            log(f"recorded in {BASELINE.relative_to(ROOT)}: {cell}")

    never_passed = find_never_passed(columns, baseline)
    for cell in never_passed:
        log(f"fails, never passed (not a regression): {cell}")
    if never_passed:
        log(f"{len(never_passed)} cell(s) fail that never passed; see {RESULTS.relative_to(ROOT)}")
    unknown = unknown_cells(baseline)
    for cell in unknown:
        log(f"UNKNOWN CELL in {BASELINE.relative_to(ROOT)}, never checked: {cell}")
    regressions = find_regressions(columns, baseline)
    for regression in regressions:
        log(f"REGRESSION {regression}")
    log(f"matrix as measured: {RESULTS.relative_to(ROOT)}")
    return 1 if regressions or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
