#!/usr/bin/env python3
"""Calls an A2A agent with Google ADK's RemoteA2aAgent given the agent's card URL, as ADK's users do.

Usage: client.py --url http://127.0.0.1:PORT --binding jsonrpc|rest|grpc [--token TOKEN] [--agent echo]

ADK fetches the card from the URL and checks every interface it lists before it calls (each must be
an http(s) URL of the card's own origin), then the A2A SDK's client factory picks the interface of
the one binding offered. The agent is run by ADK's Runner as a sub-agent would be. Prints a meta
line, then one JSON verdict per case: against agentwire's conformance agent (the default), `hello`
completes with `Hello from TCK` and `tck-stream-basic` streams `Stream hello from TCK`; with
`--agent echo` (an ADK agent behind a gateway, interop/adk/agent.py), each answer is the text echoed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import sys
import uuid
import warnings
from urllib.parse import urlparse

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes, HttpAuth, HttpCredentials
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from fastapi.openapi.models import HTTPBearer

BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}
CASE_TIMEOUT_S = 30
CARD_PATH = "/.well-known/agent-card.json"
log = logging.getLogger("adk-client")
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")


def emit(line: dict) -> None:
    print(json.dumps(line), flush=True)


def grpc_channel(url: str) -> grpc.aio.Channel:
    """The A2A SDK's `grpc_channel_factory`: a channel to the host and port of the card's gRPC URL."""
    return grpc.aio.insecure_channel(urlparse(url).netloc)


def remote_agent(url: str, binding: str, streaming: bool, token: str | None) -> RemoteA2aAgent:
    """ADK's remote agent for the card at `url`, offered one binding so the factory picks it."""
    config = ClientConfig(
        streaming=streaming,
        httpx_client=httpx.AsyncClient(timeout=CASE_TIMEOUT_S),
        grpc_channel_factory=grpc_channel,
        supported_protocol_bindings=[BINDINGS[binding]],
    )
    auth = {}
    if token:
        credential = AuthCredential(
            auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token=token))
        )
        auth = {"auth_scheme": HTTPBearer(), "auth_credential": credential}
    return RemoteA2aAgent(
        name="remote",
        agent_card=url.rstrip("/") + CARD_PATH,
        a2a_client_factory=ClientFactory(config),
        timeout=CASE_TIMEOUT_S,
        **auth,
    )


async def ask(agent: RemoteA2aAgent, text: str) -> tuple[str, list[str]]:
    """Runs `agent` on one user message; the text of its final answer, and every event's text."""
    runner = Runner(app_name="interop", agent=agent, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="interop", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    texts: list[str] = []
    errors: list[str] = []
    try:
        async for event in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            if event.error_message:
                errors.append(f"{event.error_code}: {event.error_message}")
            content = event.content
            text = "".join(part.text or "" for part in (content.parts or [])) if content else ""
            if text:
                texts.append(text)
    finally:
        await runner.close()
    if errors:
        raise AssertionError("; ".join(errors))
    return (texts[-1] if texts else ""), texts


async def case(name: str, check) -> None:
    try:
        detail = await asyncio.wait_for(check(), CASE_TIMEOUT_S)
        emit({"case": name, "ok": True, "detail": detail})
    except Exception as error:  # noqa: BLE001 - every failure is the case's verdict
        log.exception("case %s", name)
        emit({"case": name, "ok": False, "detail": f"{type(error).__name__}: {error}"[:500]})


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True, choices=sorted(BINDINGS))
    parser.add_argument("--token")
    parser.add_argument("--agent", choices=["conformance", "echo"], default="conformance")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    emit({"meta": {"sdk": "google-adk", "version": importlib.metadata.version("google-adk")}})
    echo = args.agent == "echo"

    async def blocking() -> str:
        word = f"hello-{uuid.uuid4().hex[:8]}"
        answer, _ = await ask(remote_agent(args.url, args.binding, False, args.token), word if echo else "hello")
        expected = word if echo else "Hello from TCK"
        if expected not in answer:
            raise AssertionError(f"answer {answer!r}, expected {expected!r}")
        return f"answered {answer!r} by card URL over {args.binding}"

    async def streaming() -> str:
        word = f"stream-{uuid.uuid4().hex[:8]}"
        answer, texts = await ask(remote_agent(args.url, args.binding, True, args.token), word if echo else "tck-stream-basic go")
        expected = word if echo else "Stream hello from TCK"
        if not any(expected in text for text in texts):
            raise AssertionError(f"events {texts!r}, none with {expected!r}")
        return f"streamed {len(texts)} event(s) with text, ending {answer!r}"

    await case("blocking", blocking)
    await case("streaming", streaming)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
