"""A2A test server built on the official Python SDK (a2a-sdk 1.3.0).

Usage: server.py [--port HTTP_PORT] [--grpc-port GRPC_PORT] [--token TOKEN]

Serves one agent on 127.0.0.1, in protocol v1.0 and v0.3:
  - JSON-RPC (both versions, told apart by method name) at POST / of HTTP_PORT,
  - HTTP+JSON v1.0 at /message:send, /tasks/..., /extendedAgentCard (and /{tenant}/...),
    HTTP+JSON v0.3 at /v1/message:send, /v1/tasks/..., /v1/card, all on HTTP_PORT,
  - gRPC on GRPC_PORT: lf.a2a.v1.A2AService (v1.0) and a2a.v1.A2AService (v0.3), with
    server reflection,
  - the agent card at GET /.well-known/agent-card.json.

With --token, the extended agent card is served only to requests carrying
`Authorization: Bearer TOKEN`; every other call needs no credentials (and ignores any).

A port left out (or 0) is any free one, chosen when the listener binds, so that no other process
can take it in between. Prints `READY http://127.0.0.1:HTTP_PORT GRPC_PORT` on stdout once both
listeners accept connections, logs to stderr, and exits with status 0 on SIGTERM or SIGINT.

The agent's behaviour is chosen by the first word of the task's first user message; see
README.md beside this file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import json
import logging
import signal
import socket
import sys
from collections.abc import Callable, Iterator

import grpc
import httpx
import uvicorn
from grpc_reflection.v1alpha import reflection
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message as AsgiMessage, Receive, Scope, Send

from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers import get_message_text, new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Message,
    Role,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskState,
)
from a2a.types import a2a_pb2, a2a_pb2_grpc
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol

HOST = "127.0.0.1"
LONG_RUNNING_CHUNKS = 10
LONG_RUNNING_INTERVAL_S = 0.3

log = logging.getLogger("python-server")


# --- The agent ----------------------------------------------------------------------------------


def first_word(text: str) -> str:
    words = text.split()
    return words[0] if words else ""


def first_user_text(task: Task | None, message: Message | None) -> str:
    """The text of the task's first user message, or of `message` for a new task."""
    if task is not None:
        for earlier in task.history:
            if earlier.role == Role.ROLE_USER:
                return get_message_text(earlier)
    return get_message_text(message) if message is not None else ""


class TckExecutor(AgentExecutor):
    """Acts out the scenario named by the first word of the task's first user message."""

    def __init__(self) -> None:
        # Tasks whose cancellation has been asked for: their executions stop emitting.
        self._canceled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        task = context.current_task
        text = get_message_text(message) if message is not None else ""
        scenario = first_word(first_user_text(task, message))
        log.info("execute task=%s scenario=%r follow-up=%s", context.task_id, scenario, task is not None)

        if scenario == "tck-message-response" and task is None:
            await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))
            return

        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)

        def say(reply: str) -> Message:
            return updater.new_agent_message([new_text_part(reply)])

        if task is not None:
            # A follow-up: only an interrupted task (input-required / auth-required) gets one.
            await self._follow_up(scenario, text, updater, say)
            return

        history = [message] if message is not None else []
        await event_queue.enqueue_event(new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history))

        match scenario:
            case "tck-complete-task":
                await updater.complete(say("done"))
            case "tck-long-running":
                await updater.start_work()
                for i in range(LONG_RUNNING_CHUNKS):
                    await asyncio.sleep(LONG_RUNNING_INTERVAL_S)
                    if task_id in self._canceled:
                        return
                    await updater.add_artifact(
                        [new_text_part(str(i))],
                        artifact_id="ticks",
                        append=i > 0,
                        last_chunk=i == LONG_RUNNING_CHUNKS - 1,
                    )
                if task_id not in self._canceled:
                    await updater.complete()
            case "tck-cancel":
                await updater.start_work()
                # Runs until the SDK's cancel path stops it (see cancel()).
                await asyncio.Event().wait()
            case "tck-multi-turn":
                await updater.requires_input(say("more?"))
            case "tck-task-failure":
                await updater.failed(say("failed on purpose"))
            case "tck-reject-task":
                await updater.reject(say("rejected"))
            case "tck-auth-required":
                await updater.requires_auth(say("authentication required"))
            case _:  # tck-stream-basic and any other text
                await updater.start_work()
                await updater.add_artifact([new_text_part(text)], artifact_id="echo")
                await updater.complete(say(text))

    async def _follow_up(
        self, scenario: str, text: str, updater: TaskUpdater, say: Callable[[str], Message]
    ) -> None:
        if text.lstrip().startswith("done"):
            await updater.complete(say("done"))
        elif scenario == "tck-auth-required":
            await updater.requires_auth(say("authentication required"))
        else:
            await updater.requires_input(say("more?"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = str(context.task_id)
        log.info("cancel task=%s", task_id)
        self._canceled.add(task_id)
        context_id = context.context_id or (context.current_task.context_id if context.current_task else "")
        await TaskUpdater(event_queue, task_id, context_id).cancel()


# --- The agent card -----------------------------------------------------------------------------


def build_cards(http_port: int, grpc_port: int, token: str | None) -> tuple[AgentCard, AgentCard | None]:
    base = f"http://{HOST}:{http_port}"
    grpc_target = f"{HOST}:{grpc_port}"

    def interface(url: str, binding: TransportProtocol, version: str) -> AgentInterface:
        return AgentInterface(url=url, protocol_binding=str(binding.value), protocol_version=version)

    interfaces = [
        interface(base, TransportProtocol.JSONRPC, PROTOCOL_VERSION_1_0),
        interface(base, TransportProtocol.HTTP_JSON, PROTOCOL_VERSION_1_0),
        # A v1.0 gRPC address is a channel target (host:port)...
        interface(grpc_target, TransportProtocol.GRPC, PROTOCOL_VERSION_1_0),
        # ...the v0.3 ones are URLs. v0.3 JSON-RPC shares the v1.0 endpoint (the SDK tells the
        # versions apart by method name); v0.3 HTTP+JSON clients add the `/v1` prefix themselves.
        interface(base, TransportProtocol.JSONRPC, PROTOCOL_VERSION_0_3),
        interface(base, TransportProtocol.HTTP_JSON, PROTOCOL_VERSION_0_3),
        interface(f"http://{grpc_target}", TransportProtocol.GRPC, PROTOCOL_VERSION_0_3),
    ]
    echo = AgentSkill(
        id="tck",
        name="TCK scenarios",
        description="Acts out the scenario named by the first word of the first message; echoes other text.",
        tags=["test", "echo"],
        examples=["tck-complete-task", "tck-long-running", "hello"],
    )
    card = AgentCard(
        name="agentwire interop agent (Python SDK)",
        description="A2A test agent served by the official Python SDK.",
        version="1.0.0",
        provider=AgentProvider(organization="agentwire interop", url=base),
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extended_agent_card=token is not None,
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[echo],
    )
    if token is None:
        return card, None

    card.security_schemes["bearer"].CopyFrom(
        SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
    )
    card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.skills.append(
        AgentSkill(
            id="extended",
            name="Extended skill",
            description="Listed only on the authenticated extended agent card.",
            tags=["extended"],
        )
    )
    return card, extended


# --- Authentication of the extended card --------------------------------------------------------

EXTENDED_CARD_METHODS = {"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"}


def bearer_matches(value: str | None, token: str) -> bool:
    if not value:
        return False
    scheme, _, credential = value.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), token.encode())


class ExtendedCardAuth:
    """ASGI middleware: the extended card's HTTP routes answer 401 without the bearer token.

    REST: GET /extendedAgentCard, GET /{tenant}/extendedAgentCard (v1.0), GET /v1/card (v0.3).
    JSON-RPC: POST / whose method is GetExtendedAgentCard or agent/getAuthenticatedExtendedCard.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        authorized = bearer_matches(headers.get("authorization"), self.token)

        if method == "GET" and (path == "/v1/card" or path.rstrip("/").endswith("/extendedAgentCard")):
            if not authorized:
                await self._deny(send, rest=True, request_id=None)
                return
        elif method == "POST" and path == "/" and not authorized:
            body, more = b"", True
            while more:
                chunk = await receive()
                if chunk["type"] != "http.request":
                    break
                body += chunk.get("body", b"")
                more = chunk.get("more_body", False)
            try:
                request = json.loads(body)
            except ValueError:
                request = None
            if isinstance(request, dict) and request.get("method") in EXTENDED_CARD_METHODS:
                await self._deny(send, rest=False, request_id=request.get("id"))
                return
            replayed = False

            async def replay() -> AsgiMessage:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
            return
        await self.app(scope, receive, send)

    @staticmethod
    async def _deny(send: Send, *, rest: bool, request_id: object) -> None:
        message = "the extended agent card requires Authorization: Bearer <token>"
        if rest:
            payload = {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": message}}
        else:
            payload = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": message}}
        body = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="a2a"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def grpc_card_guard(token: str):
    """The extended card modifier: over gRPC (v1.0 GetExtendedAgentCard, v0.3 GetAgentCard) the
    call is aborted with UNAUTHENTICATED unless its metadata carries the bearer token. HTTP
    requests reach it only once ExtendedCardAuth has let them through."""

    async def modifier(card: AgentCard, context: ServerCallContext) -> AgentCard:
        grpc_context = context.state.get("grpc_context")
        if grpc_context is not None:
            metadata = dict(grpc_context.invocation_metadata() or ())
            if not bearer_matches(metadata.get("authorization"), token):
                await grpc_context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "the extended agent card requires authorization: Bearer <token>",
                )
        return card

    return modifier


# --- The servers --------------------------------------------------------------------------------


class QuietSignalsServer(uvicorn.Server):
    """uvicorn.Server that leaves signal handling to main() (it would re-raise the signal)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def listen(port: int) -> socket.socket:
    """The HTTP listening socket, bound here so that a busy port is a plain error."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    return sock


def accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="HTTP port (JSON-RPC, HTTP+JSON, card); 0: any")
    parser.add_argument("--grpc-port", type=int, default=0, help="gRPC port; 0: any")
    parser.add_argument("--token", help="bearer token that guards the extended agent card")
    parser.add_argument(
        "--card-port", type=int, help="HTTP port the card advertises (default --port): a proxy in front of it"
    )
    parser.add_argument(
        "--card-grpc-port", type=int, help="gRPC port the card advertises (default --grpc-port)"
    )
    args = parser.parse_args()

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )

    # Both listeners are bound first: the cards name the ports they got.
    grpc_server = grpc.aio.server()
    try:
        grpc_port = grpc_server.add_insecure_port(f"{HOST}:{args.grpc_port}")
        http_socket = listen(args.port)
    except (OSError, RuntimeError) as error:
        log.error("cannot listen: %s", error)
        return 1
    http_port = http_socket.getsockname()[1]

    card, extended = build_cards(args.card_port or http_port, args.card_grpc_port or grpc_port, args.token)
    push_store = InMemoryPushNotificationConfigStore()
    push_http = httpx.AsyncClient(timeout=10)
    handler = DefaultRequestHandler(
        agent_executor=TckExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(push_http, push_store),
        extended_agent_card=extended,
        extended_card_modifier=grpc_card_guard(args.token) if args.token else None,
    )

    # Order matters: the REST routes end with a catch-all /{tenant} mount.
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        *create_rest_routes(handler, enable_v0_3_compat=True),
    ]
    app: ASGIApp = Starlette(routes=routes)
    if args.token:
        app = ExtendedCardAuth(app, args.token)

    http_server = QuietSignalsServer(
        uvicorn.Config(
            app,
            host=HOST,
            port=http_port,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
    )

    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), grpc_server)
    reflection.enable_server_reflection(
        [
            a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].full_name,
            a2a_v0_3_pb2.DESCRIPTOR.services_by_name["A2AService"].full_name,
            reflection.SERVICE_NAME,
        ],
        grpc_server,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    await grpc_server.start()
    http_task = asyncio.create_task(http_server.serve(sockets=[http_socket]))
    while not http_server.started:
        if http_task.done():
            log.error("the HTTP server did not start: %r", http_task.exception())
            await grpc_server.stop(None)
            return 1
        await asyncio.sleep(0.02)
    if not (await asyncio.to_thread(accepts, http_port) and await asyncio.to_thread(accepts, grpc_port)):
        log.error("a listener does not accept connections")
        return 1
    print(f"READY http://{HOST}:{http_port} {grpc_port}", flush=True)

    stop_wait = asyncio.create_task(stop.wait())
    await asyncio.wait({stop_wait, http_task}, return_when=asyncio.FIRST_COMPLETED)
    log.info("shutting down")
    AppStatus.should_exit = True  # ends open SSE streams
    http_server.should_exit = True
    await grpc_server.stop(grace=1)
    with contextlib.suppress(Exception):
        await http_task
    stop_wait.cancel()
    await handler.aclose()
    await push_http.aclose()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
