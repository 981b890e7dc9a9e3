"""Interoperability client: drives an agentwire server with the official A2A Python SDK.

Usage: client.py --url http://127.0.0.1:PORT --binding jsonrpc|rest|grpc --token TOKEN

Prints one meta line, then one JSON line per case: {"case", "ok", "detail"}.
Logs go to stderr. Exit status is 0 whenever every case ran, even if some failed.
"""

import argparse
import asyncio
import importlib.metadata
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import grpc
import httpx
from a2a.client import (
    A2ACardResolver,
    A2AClientError,
    AgentCardResolutionError,
    AuthInterceptor,
    Client,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
    CredentialService,
)
from a2a.types import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2A_ERROR_REASONS, JSON_RPC_ERROR_CODE_MAP, A2AError
from google.protobuf import json_format

CASE_TIMEOUT_S = 20
BINDINGS = {"jsonrpc": TransportProtocol.JSONRPC, "rest": TransportProtocol.HTTP_JSON, "grpc": TransportProtocol.GRPC}
# The HTTP requests a blocking send must start with, proving the forced binding is used: none at
# all over gRPC, whose calls do not go through the SDK's HTTP client.
SEND_REQUESTS = {"jsonrpc": ["POST /"], "rest": ["POST /message:send"], "grpc": []}
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
COMPLETED = TaskState.TASK_STATE_COMPLETED

log = logging.getLogger("interop")


class CaseFailure(Exception):
    """A check inside a case did not hold; the message is the case's detail."""


def check(condition: bool, failure: str) -> None:
    if not condition:
        raise CaseFailure(failure)


def state_name(state: int) -> str:
    return TaskState.Name(state).removeprefix("TASK_STATE_")


def text_of(message: Message) -> str:
    return "".join(part.text for part in message.parts)


def user_message(text: str, *, id_prefix: str = "", task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=f"{id_prefix}{uuid.uuid4()}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


class StaticToken(CredentialService):
    """Hands the same bearer token to every security scheme the agent card declares."""

    def __init__(self, token: str):
        self._token = token

    async def get_credentials(self, security_scheme_name: str, context: ClientCallContext | None) -> str | None:
        return self._token


@dataclass
class Harness:
    binding: str
    card: AgentCard
    unary: Client  # non-streaming calls: SendMessage, GetTask, ...
    streaming: Client  # SendStreamingMessage and SubscribeToTask
    anonymous: Client  # no credentials at all
    request_paths: list[str]  # "METHOD /path" of every HTTP request, to see which binding was used

    async def send(
        self, message: Message, *, return_immediately: bool = False, push: TaskPushNotificationConfig | None = None
    ) -> Task:
        """Non-streaming SendMessage that must answer with a Task."""
        config = SendMessageConfiguration(return_immediately=return_immediately)
        if push is not None:
            config.task_push_notification_config.CopyFrom(push)
        responses = [
            r async for r in self.unary.send_message(SendMessageRequest(message=message, configuration=config))
        ]
        check(len(responses) == 1 and responses[0].HasField("task"), f"expected one Task response, got {responses}")
        return responses[0].task

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        request = GetTaskRequest(id=task_id)
        if history_length is not None:
            request.history_length = history_length
        return await self.unary.get_task(request)

    async def wait_for_state(self, task_id: str, wanted: int, within_s: float = 10) -> Task:
        deadline = time.monotonic() + within_s
        while True:
            task = await self.get(task_id)
            if task.status.state == wanted or task.status.state in TERMINAL or time.monotonic() > deadline:
                return task
            await asyncio.sleep(0.1)


def error_identity(error: A2AError, binding: str) -> str:
    """How the SDK recognised an error: by JSON-RPC error code, or by the ErrorInfo reason (REST's
    body, gRPC's status details)."""
    if binding == "jsonrpc":
        return f"{type(error).__name__} (JSON-RPC code {JSON_RPC_ERROR_CODE_MAP[type(error)]})"
    return f"{type(error).__name__} (ErrorInfo reason {A2A_ERROR_REASONS[type(error)]})"


def event_label(event: StreamResponse) -> str:
    """A short name for a stream event, to check and report the order of a stream."""
    if event.HasField("task"):
        return f"task:{state_name(event.task.status.state)}"
    if event.HasField("status_update"):
        return f"status:{state_name(event.status_update.status.state)}"
    if event.HasField("artifact_update"):
        return "artifact"
    return "message"


def event_task_id(event: StreamResponse) -> str:
    if event.HasField("task"):
        return event.task.id
    if event.HasField("status_update"):
        return event.status_update.task_id
    return event.artifact_update.task_id


def last_state(events: list[StreamResponse]) -> int | None:
    for event in reversed(events):
        if event.HasField("status_update"):
            return event.status_update.status.state
        if event.HasField("task"):
            return event.task.status.state
    return None


# --- cases -------------------------------------------------------------------------------


async def case_card(h: Harness) -> str:
    bindings = {interface.protocol_binding for interface in h.card.supported_interfaces}
    check(bool(h.card.name), "card has no name")
    check(
        {TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON} <= bindings,
        f"supportedInterfaces bindings are {sorted(bindings)}",
    )
    check(h.card.capabilities.streaming, "capabilities.streaming is not true")
    check(h.card.capabilities.push_notifications, "capabilities.pushNotifications is not true")
    return f"name={h.card.name!r}, bindings={sorted(bindings)}, streaming and pushNotifications true"


async def case_send_blocking(h: Harness) -> str:
    h.request_paths.clear()
    task = await h.send(user_message("hello", id_prefix="tck-complete-task-"))
    check(
        h.request_paths[:1] == SEND_REQUESTS[h.binding],
        f"send went to {h.request_paths}, not the {h.binding} binding",
    )
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected COMPLETED")
    status_message = task.status.message
    check(status_message.role == Role.ROLE_AGENT, f"status message role is {Role.Name(status_message.role)}")
    check(text_of(status_message) == "Hello from TCK", f"status message text {text_of(status_message)!r}")
    via = h.request_paths[0] if h.request_paths else "gRPC"
    return f"COMPLETED with agent message 'Hello from TCK' via {via}"


async def case_send_non_blocking(h: Harness) -> str:
    task = await h.send(user_message("tck-long-running please"), return_immediately=True)
    check(
        task.status.state not in TERMINAL,
        f"returnImmediately answered with terminal state {state_name(task.status.state)}",
    )
    first_state = state_name(task.status.state)
    task = await h.wait_for_state(task.id, COMPLETED)
    check(task.status.state == COMPLETED, f"polling ended in {state_name(task.status.state)}, expected COMPLETED")
    check(
        text_of(task.status.message) == "Long-running task finished", f"final message {text_of(task.status.message)!r}"
    )
    return f"returned {first_state}, GetTask polling reached COMPLETED"


async def case_stream(h: Harness) -> str:
    request = SendMessageRequest(message=user_message("stream please", id_prefix="tck-stream-001-"))
    events = [event async for event in h.streaming.send_message(request)]
    labels = [event_label(event) for event in events]
    check("status:WORKING" in labels or "task:WORKING" in labels, f"no WORKING event in {labels}")
    check(labels.count("artifact") == 1, f"expected one artifact event in {labels}")
    working_at = next(i for i, label in enumerate(labels) if label.endswith(":WORKING"))
    artifact_at = labels.index("artifact")
    check(working_at < artifact_at, f"artifact arrived before WORKING: {labels}")
    check(labels[-1] == "status:COMPLETED", f"stream does not end with COMPLETED: {labels}")
    artifact = events[artifact_at].artifact_update.artifact
    artifact_text = "".join(part.text for part in artifact.parts)
    check(artifact_text == "Stream hello from TCK", f"artifact text {artifact_text!r}")
    task_ids = {event_task_id(event) for event in events}
    check(len(task_ids) == 1, f"events name several tasks: {task_ids}")
    return f"events {labels}, artifact text matches"


async def case_get_history_length(h: Harness) -> str:
    task = await h.send(user_message("tck-multi-turn start"))
    check(task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, f"first turn state {state_name(task.status.state)}")
    second = user_message("not yet", task_id=task.id, context_id=task.context_id)
    task = await h.send(second)
    check(
        task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, f"second turn state {state_name(task.status.state)}"
    )

    full = await h.get(task.id)
    history_ids = [m.message_id for m in full.history]
    check(len(history_ids) >= 3, f"full history has {len(history_ids)} messages, expected >= 3")
    check(second.message_id in history_ids, "the follow-up message is missing from the full history")
    last_only = await h.get(task.id, history_length=1)
    check(len(last_only.history) == 1, f"historyLength=1 returned {len(last_only.history)} messages")
    check(
        last_only.history[0] == full.history[-1], "historyLength=1 did not return the last message of the full history"
    )
    return f"full history {len(history_ids)} messages; historyLength=1 gives the last one"


async def case_list_paging(h: Harness) -> str:
    context_id = str(uuid.uuid4())
    created = {(await h.send(user_message("hello", context_id=context_id))).id for _ in range(3)}
    check(len(created) == 3, f"three sends made {len(created)} distinct tasks")

    first = await h.unary.list_tasks(ListTasksRequest(context_id=context_id, page_size=2))
    check(len(first.tasks) == 2, f"first page has {len(first.tasks)} tasks, expected 2")
    check(bool(first.next_page_token), "first page has an empty nextPageToken")
    second = await h.unary.list_tasks(
        ListTasksRequest(context_id=context_id, page_size=2, page_token=first.next_page_token)
    )
    check(len(second.tasks) == 1, f"second page has {len(second.tasks)} tasks, expected 1")
    check(not second.next_page_token, f"last page has nextPageToken {second.next_page_token!r}")

    listed = [t.id for t in first.tasks] + [t.id for t in second.tasks]
    check(len(set(listed)) == len(listed), f"a task appears on both pages: {listed}")
    check(set(listed) == created, "the pages do not hold exactly the three tasks of the context")
    return "pages of 2 and 1 tasks, token then no token, no repeats"


async def case_cancel(h: Harness) -> str:
    task = await h.send(user_message("tck-cancel me"), return_immediately=True)
    check(task.status.state not in TERMINAL, f"task already {state_name(task.status.state)} before cancel")
    canceled = await h.unary.cancel_task(CancelTaskRequest(id=task.id))
    check(
        canceled.status.state == TaskState.TASK_STATE_CANCELED,
        f"CancelTask returned {state_name(canceled.status.state)}",
    )
    fetched = await h.get(task.id)
    check(
        fetched.status.state == TaskState.TASK_STATE_CANCELED,
        f"GetTask after cancel shows {state_name(fetched.status.state)}",
    )
    return "CancelTask and GetTask both show CANCELED"


async def case_subscribe(h: Harness) -> str:
    task = await h.send(user_message("tck-long-running subscribe"), return_immediately=True)
    check(task.status.state not in TERMINAL, f"task already {state_name(task.status.state)} before subscribing")
    # The list comprehension only finishes when the server ends the stream.
    events = [event async for event in h.streaming.subscribe(SubscribeToTaskRequest(id=task.id))]
    labels = [event_label(event) for event in events]
    check(bool(events), "subscription yielded no events")
    check(
        last_state(events) == COMPLETED and labels[-1].endswith(":COMPLETED"),
        f"stream did not end on COMPLETED: {labels}",
    )
    return f"events {labels}, stream closed"


async def case_multi_turn(h: Harness) -> str:
    first = await h.send(user_message("tck-multi-turn hello"))
    check(
        first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, f"first turn state {state_name(first.status.state)}"
    )
    final = await h.send(user_message("done", task_id=first.id, context_id=first.context_id))
    check(final.status.state == COMPLETED, f"after 'done' state {state_name(final.status.state)}")
    check(final.id == first.id, f"task id changed: {first.id} -> {final.id}")
    check(final.context_id == first.context_id, f"context id changed: {first.context_id} -> {final.context_id}")
    return "INPUT_REQUIRED then COMPLETED on the same task and context"


async def case_stream_follow_up(h: Harness) -> str:
    first = await h.send(user_message("tck-multi-turn hello"))
    check(
        first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, f"first turn state {state_name(first.status.state)}"
    )
    follow_up = user_message("done", task_id=first.id, context_id=first.context_id)
    events = [event async for event in h.streaming.send_message(SendMessageRequest(message=follow_up))]
    labels = [event_label(event) for event in events]
    check(last_state(events) == COMPLETED, f"the streamed follow-up ended at {labels}")
    check({event_task_id(event) for event in events} == {first.id}, f"events of other tasks: {labels}")
    return f"events {labels}"


async def case_push_config_crud(h: Harness) -> str:
    task = await h.send(user_message("tck-multi-turn push crud"))  # stays INPUT_REQUIRED, so no deliveries
    wanted = TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/crud-hook", token="crud-token")
    created = await h.unary.create_task_push_notification_config(wanted)
    check(bool(created.id), "created config has no id")
    check(
        created.url == wanted.url and created.token == wanted.token,
        f"created config differs: {json_format.MessageToDict(created)}",
    )

    fetched = await h.unary.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )
    check(fetched.id == created.id and fetched.url == wanted.url, f"get returned {json_format.MessageToDict(fetched)}")
    listed = await h.unary.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id))
    check(created.id in [c.id for c in listed.configs], "list does not show the created config")

    await h.unary.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )
    listed = await h.unary.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task.id))
    check(created.id not in [c.id for c in listed.configs], "list still shows the deleted config")
    try:
        await h.unary.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
    except A2AError as error:
        return f"create/get/list/delete ok; get after delete raised {type(error).__name__}"
    raise CaseFailure("get of the deleted config succeeded")


class WebhookReceiver:
    """A tiny HTTP server on an ephemeral loopback port that records every POST."""

    def __init__(self):
        self.deliveries: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.deliveries.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):  # keep stdout/stderr clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/webhook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def pushed_state(body: bytes) -> int:
    """The task state a push body reports; parsing also proves it is a v1.0 StreamResponse."""
    event = json_format.Parse(body, StreamResponse())
    if event.HasField("task"):
        return event.task.status.state
    if event.HasField("status_update"):
        return event.status_update.status.state
    return TaskState.TASK_STATE_UNSPECIFIED


async def case_push_delivery(h: Harness) -> str:
    push_token, push_secret = f"tok-{uuid.uuid4()}", f"secret-{uuid.uuid4()}"
    with WebhookReceiver() as receiver:
        config = TaskPushNotificationConfig(
            url=receiver.url,
            token=push_token,
            authentication=AuthenticationInfo(scheme="Bearer", credentials=push_secret),
        )
        task = await h.send(user_message("tck-long-running push"), push=config)
        check(task.status.state == COMPLETED, f"task ended {state_name(task.status.state)}")

        # Deliveries are asynchronous: wait for the COMPLETED one, then a moment for stragglers.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
            pushed_state(body) == COMPLETED for _, body in receiver.deliveries
        ):
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        deliveries = list(receiver.deliveries)

    check(bool(deliveries), "no push delivery arrived")
    for headers, _ in deliveries:
        check(
            headers.get("x-a2a-notification-token") == push_token,
            f"wrong X-A2A-Notification-Token: {headers.get('x-a2a-notification-token')!r}",
        )
        check(
            headers.get("authorization") == f"Bearer {push_secret}",
            f"wrong Authorization: {headers.get('authorization')!r}",
        )
    states = [state_name(pushed_state(body)) for _, body in deliveries]
    check(states[-1] == "COMPLETED", f"last delivery is not COMPLETED: {states}")
    return f"{len(deliveries)} deliveries {states} with token and Bearer credentials"


async def case_extended_card(h: Harness) -> str:
    extended = await h.unary.get_extended_agent_card(GetExtendedAgentCardRequest())
    public_skills = {skill.id for skill in h.card.skills}
    extended_skills = {skill.id for skill in extended.skills}
    check(
        extended_skills == public_skills | {"extended"} and "extended" not in public_skills,
        f"extended card skills {sorted(extended_skills)}, public {sorted(public_skills)}",
    )
    try:
        await h.anonymous.get_extended_agent_card(GetExtendedAgentCardRequest())
    except A2AClientError as error:
        # The SDK wraps a transport failure in A2AClientError; the error underneath holds the status.
        cause = error.__cause__
        if isinstance(cause, grpc.aio.AioRpcError):
            code = cause.code()
            check(code == grpc.StatusCode.UNAUTHENTICATED, f"refused, but with {code} rather than UNAUTHENTICATED")
            return "skill 'extended' with credentials; UNAUTHENTICATED without"
        status = cause.response.status_code if isinstance(cause, httpx.HTTPStatusError) else None
        check(status == 401, f"refused, but with {status or error!r} rather than HTTP 401")
        return "skill 'extended' with credentials; HTTP 401 without"
    raise CaseFailure("the extended card was served without credentials")


async def case_error_unknown_task(h: Harness) -> str:
    try:
        await h.get(str(uuid.uuid4()))
    except TaskNotFoundError as error:
        return f"{error_identity(error, h.binding)}: {error.message}"
    except A2AError as error:
        raise CaseFailure(f"expected TaskNotFoundError, got {type(error).__name__}: {error}") from error
    raise CaseFailure("GetTask of a random id succeeded")


async def case_error_cancel_finished(h: Harness) -> str:
    task = await h.send(user_message("hello"))
    check(task.status.state == COMPLETED, f"setup task ended {state_name(task.status.state)}")
    try:
        await h.unary.cancel_task(CancelTaskRequest(id=task.id))
    except TaskNotCancelableError as error:
        return f"{error_identity(error, h.binding)}: {error.message}"
    except A2AError as error:
        raise CaseFailure(f"expected TaskNotCancelableError, got {type(error).__name__}: {error}") from error
    raise CaseFailure("cancel of a COMPLETED task succeeded")


CASES: list[tuple[str, Callable[[Harness], Awaitable[str]]]] = [
    ("card", case_card),
    ("send_blocking", case_send_blocking),
    ("send_non_blocking", case_send_non_blocking),
    ("stream", case_stream),
    ("get_history_length", case_get_history_length),
    ("list_paging", case_list_paging),
    ("cancel", case_cancel),
    ("subscribe", case_subscribe),
    ("multi_turn", case_multi_turn),
    ("stream_follow_up", case_stream_follow_up),
    ("push_config_crud", case_push_config_crud),
    ("push_delivery", case_push_delivery),
    ("extended_card", case_extended_card),
    ("error_unknown_task", case_error_unknown_task),
    ("error_cancel_finished", case_error_cancel_finished),
]


def grpc_channel(url: str) -> grpc.aio.Channel:
    """The SDK's `grpc_channel_factory`: a channel to the host and port of the card's gRPC URL
    (`http://host:port`, the specification's form); a bare `host:port` is taken as it is."""
    parsed = urlparse(url)
    return grpc.aio.insecure_channel(parsed.netloc if parsed.scheme in ("http", "https") else url)


# --- harness -----------------------------------------------------------------------------


def emit(line: dict) -> None:
    print(json.dumps(line), flush=True)


async def run_case(name: str, case: Callable[[Harness], Awaitable[str]], harness: Harness) -> None:
    try:
        detail = await asyncio.wait_for(case(harness), CASE_TIMEOUT_S)
        emit({"case": name, "ok": True, "detail": detail})
    except CaseFailure as failure:
        emit({"case": name, "ok": False, "detail": str(failure)})
    except TimeoutError:
        emit({"case": name, "ok": False, "detail": f"timed out after {CASE_TIMEOUT_S}s"})
    except Exception as error:  # any SDK or transport error is this case's failure, not the run's
        log.exception("case %s raised", name)
        first_line = str(error).splitlines()[0] if str(error) else ""
        emit({"case": name, "ok": False, "detail": f"{type(error).__name__}: {first_line}"})


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True, choices=sorted(BINDINGS))
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)

    emit({"meta": {"sdk": "a2a-sdk", "version": importlib.metadata.version("a2a-sdk"), "binding": args.binding}})

    request_paths: list[str] = []

    async def record_request(request: httpx.Request) -> None:
        request_paths.append(f"{request.method} {request.url.path}")

    # One shared HTTP client so every call has the same bounded timeouts; the SDK leaves it to us to close.
    async with httpx.AsyncClient(timeout=CASE_TIMEOUT_S, event_hooks={"request": [record_request]}) as http:
        try:
            card = await A2ACardResolver(http, args.url).get_agent_card()
        except AgentCardResolutionError as error:
            log.error("harness cannot start: %s", error)
            return 2

        def make_client(streaming: bool, token: str | None) -> Client:
            # Offering only the requested binding forces the factory to pick that interface of the card.
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                grpc_channel_factory=grpc_channel,
                supported_protocol_bindings=[BINDINGS[args.binding]],
            )
            interceptors = [AuthInterceptor(StaticToken(token))] if token else []
            return ClientFactory(config).create(card, interceptors)

        harness = Harness(
            binding=args.binding,
            card=card,
            unary=make_client(streaming=False, token=args.token),
            streaming=make_client(streaming=True, token=args.token),
            anonymous=make_client(streaming=False, token=None),
            request_paths=request_paths,
        )
        for name, case in CASES:
            await run_case(name, case, harness)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
