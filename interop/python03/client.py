"""Interoperability client: drives an agentwire server with the official A2A Python SDK's last
v0.3 release (a2a-sdk 0.3.x), protocol v0.3.

Usage: client.py --url http://127.0.0.1:PORT --binding jsonrpc|rest|grpc --token TOKEN

Prints one meta line, then one JSON line per case: {"case", "ok", "detail"}.
Logs go to stderr. Exit status is 0 whenever every case ran, even if some failed.

The v0.3 SDK's Client has no tasks/list (so no list_paging case) and no push-config list or
delete: push_config_crud makes those two calls with the SDK's own request and response models
(over gRPC, its own generated stub) on the same connection. concurrent_generations holds a v0.3
SDK stream open while it makes v1.0 calls on the wire (no v1.0 SDK can share this environment:
both releases are `a2a-sdk`); over gRPC it takes the v1.0 message types from the server's
reflection service, as grpcurl does.
"""

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import logging
import sys
import threading
import time
import uuid
from urllib.parse import urlsplit
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import httpx
from a2a.client import A2ACardResolver, A2AClientHTTPError, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
from a2a.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
    FileWithBytes,
    GetTaskPushNotificationConfigParams,
    JSONRPCErrorResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    SendMessageRequest,
    SendMessageResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)
from a2a.utils import proto_utils
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

CASE_TIMEOUT_S = 20
BINDINGS = {"jsonrpc": TransportProtocol.jsonrpc, "rest": TransportProtocol.http_json, "grpc": TransportProtocol.grpc}
# The HTTP requests a blocking send must start with, proving the forced binding is used: none at
# all over gRPC, whose calls do not go through the HTTP client.
SEND_REQUESTS = {"jsonrpc": ["POST /"], "rest": ["POST /v1/message:send"], "grpc": []}
TERMINAL = {TaskState.completed, TaskState.failed, TaskState.canceled, TaskState.rejected}
COMPLETED = TaskState.completed
# What the SDK's JSON-RPC error models say the codes are (its A2AClientJSONRPCError keeps only the
# error object, parsed into a union whose generic member usually wins, so identify by code).
TASK_NOT_FOUND_CODE = TaskNotFoundError().code  # -32001
TASK_NOT_CANCELABLE_CODE = TaskNotCancelableError().code  # -32002
# The status code a v0.3 REST server maps each error to (the v0.3 SDK's REST client keeps only it).
TASK_NOT_FOUND_HTTP, TASK_NOT_CANCELABLE_HTTP = 404, 409
# The gRPC status of each error (the v0.3 SDK's gRPC client raises grpc's own error, unwrapped).
TASK_NOT_FOUND_GRPC, TASK_NOT_CANCELABLE_GRPC = grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION

log = logging.getLogger("interop")


class CaseFailure(Exception):
    """A check inside a case did not hold; the message is the case's detail."""


def check(condition: bool, failure: str) -> None:
    if not condition:
        raise CaseFailure(failure)


def state_name(state: TaskState) -> str:
    return state.value


def text_of(parts: list[Part] | None) -> str:
    return "".join(part.root.text for part in parts or [] if isinstance(part.root, TextPart))


def user_message(
    text: str, *, id_prefix: str = "", task_id: str | None = None, context_id: str | None = None
) -> Message:
    return Message(
        message_id=f"{id_prefix}{uuid.uuid4()}",
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        task_id=task_id,
        context_id=context_id,
    )


def binding_url(card: AgentCard, binding: str) -> str:
    """The card's URL for `binding`, chosen as the SDK's ClientFactory chooses it."""
    urls = {card.preferred_transport or TransportProtocol.jsonrpc: card.url}
    urls.update({i.transport: i.url for i in card.additional_interfaces or []})
    return urls[BINDINGS[binding]]


@dataclass
class Harness:
    binding: str
    url: str  # the server's base URL
    card: AgentCard
    http: httpx.AsyncClient  # carries the bearer token on every request
    unary: Client  # non-streaming calls: message/send, tasks/get, ...
    streaming: Client  # message/stream and tasks/resubscribe
    make_client: Callable[..., Client]  # a fresh unary client: (authenticated=True, push=None)
    channel: grpc.aio.Channel | None  # the authenticated gRPC channel, over gRPC
    request_paths: list[str]  # "METHOD /path" of every HTTP request, to see which binding was used
    refusals: list[str]  # every HTTP error response with its body, which the SDK's errors drop

    async def send(
        self, message: Message, *, blocking: bool = True, push: PushNotificationConfig | None = None
    ) -> Task:
        """Non-streaming message/send that must answer with a Task. A push config goes in the client's
        ClientConfig: passed per call, the SDK's REST transport gets it as a dict and fails."""
        client = self.make_client(push=push) if push else self.unary
        config = MessageSendConfiguration(blocking=blocking)
        responses = [r async for r in client.send_message(message, configuration=config)]
        check(
            len(responses) == 1 and isinstance(responses[0], tuple) and isinstance(responses[0][0], Task),
            f"expected one Task response, got {responses}",
        )
        return responses[0][0]

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        return await self.unary.get_task(TaskQueryParams(id=task_id, history_length=history_length))

    async def wait_for_state(self, task_id: str, wanted: TaskState, within_s: float = 10) -> Task:
        deadline = time.monotonic() + within_s
        while True:
            task = await self.get(task_id)
            if task.status.state == wanted or task.status.state in TERMINAL or time.monotonic() > deadline:
                return task
            await asyncio.sleep(0.1)


def rpc_error_code(error: Exception) -> int | None:
    return error.error.code if isinstance(error, A2AClientJSONRPCError) else None


def http_status(error: Exception) -> int | None:
    return error.status_code if isinstance(error, A2AClientHTTPError) else None


def grpc_status(error: Exception) -> grpc.StatusCode | None:
    return error.code() if isinstance(error, grpc.aio.AioRpcError) else None


def describe_error(error: Exception) -> str:
    if isinstance(error, A2AClientJSONRPCError):
        return f"A2AClientJSONRPCError code {error.error.code}: {error.error.message}"
    if isinstance(error, A2AClientHTTPError):
        return f"A2AClientHTTPError HTTP {error.status_code}"
    if isinstance(error, grpc.aio.AioRpcError):
        return f"AioRpcError {error.code().name}: {error.details()}"
    return f"{type(error).__name__}: {error}"


# What a failed call raises: the SDK's errors over the JSON bindings, grpc's own over gRPC.
CallError = (A2AClientError, grpc.aio.AioRpcError)


def expect_error(binding: str, error: Exception, codes: tuple[int, int, grpc.StatusCode], name: str) -> str:
    """The error a binding reports: the JSON-RPC code, the HTTP status (all the v0.3 SDK's REST
    client keeps) or the gRPC status code; `codes` gives them in that order."""
    rpc_code, http_code, grpc_code = codes
    if binding == "jsonrpc":
        got, wanted = rpc_error_code(error), rpc_code
    elif binding == "rest":
        got, wanted = http_status(error), http_code
    else:
        got, wanted = grpc_status(error), grpc_code
    check(got == wanted, f"expected {name} ({binding} {wanted}), got {describe_error(error)}")
    return f"{name}: {describe_error(error)}"


ClientEventOrMessage = tuple[Task, TaskStatusUpdateEvent | TaskArtifactUpdateEvent | None] | Message


def event_label(event: ClientEventOrMessage) -> str:
    """A short name for a stream event, to check and report the order of a stream. Take it when the
    event arrives: the SDK hands out one Task that it keeps updating with the later events."""
    if isinstance(event, Message):
        return "message"
    task, update = event
    if update is None:
        return f"task:{state_name(task.status.state)}"
    if isinstance(update, TaskStatusUpdateEvent):
        return f"status:{state_name(update.status.state)}"
    return "artifact"


def event_task_id(event: ClientEventOrMessage) -> str:
    return event.task_id if isinstance(event, Message) else event[0].id


async def collect(stream) -> tuple[list[ClientEventOrMessage], list[str]]:
    """Every event of a stream until the server ends it, with each one's label taken on arrival."""
    events, labels = [], []
    async with contextlib.aclosing(stream):
        async for event in stream:
            events.append(event)
            labels.append(event_label(event))
    return events, labels


# --- cases -------------------------------------------------------------------------------


async def case_card(h: Harness) -> str:
    card = h.card
    bindings = {card.preferred_transport} | {i.transport for i in card.additional_interfaces or []}
    check(bool(card.name), "card has no name")
    check(bool(card.url), "card has no url")
    check(
        {TransportProtocol.jsonrpc, TransportProtocol.http_json} <= bindings,
        f"preferredTransport + additionalInterfaces are {sorted(bindings)}",
    )
    check(card.protocol_version.startswith("0.3"), f"protocolVersion is {card.protocol_version!r}")
    check(card.capabilities.streaming is True, "capabilities.streaming is not true")
    check(card.capabilities.push_notifications is True, "capabilities.pushNotifications is not true")
    check(card.supports_authenticated_extended_card is True, "supportsAuthenticatedExtendedCard is not true")
    return (
        f"name={card.name!r}, protocolVersion {card.protocol_version}, preferred {card.preferred_transport}, "
        f"transports {sorted(bindings)}, streaming, push and extended card"
    )


async def case_send_blocking(h: Harness) -> str:
    h.request_paths.clear()
    task = await h.send(user_message("hello", id_prefix="tck-complete-task-"))
    check(
        h.request_paths[:1] == SEND_REQUESTS[h.binding],
        f"send went to {h.request_paths}, not the {h.binding} binding",
    )
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected completed")
    status_message = task.status.message
    check(status_message is not None, "the completed task has no status message")
    check(status_message.role == Role.agent, f"status message role is {status_message.role.value}")
    check(text_of(status_message.parts) == "Hello from TCK", f"status message text {text_of(status_message.parts)!r}")
    via = h.request_paths[0] if h.request_paths else "gRPC"
    return f"completed with agent message 'Hello from TCK' via {via}"


async def case_send_non_blocking(h: Harness) -> str:
    task = await h.send(user_message("tck-long-running please"), blocking=False)
    check(
        task.status.state not in TERMINAL,
        f"blocking=false answered with terminal state {state_name(task.status.state)}",
    )
    first_state = state_name(task.status.state)
    task = await h.wait_for_state(task.id, COMPLETED)
    check(task.status.state == COMPLETED, f"polling ended in {state_name(task.status.state)}, expected completed")
    final_text = text_of(task.status.message.parts) if task.status.message else ""
    check(final_text == "Long-running task finished", f"final message {final_text!r}")
    return f"returned {first_state}, tasks/get polling reached completed"


async def case_stream(h: Harness) -> str:
    message = user_message("stream please", id_prefix="tck-stream-001-")
    events, labels = await collect(h.streaming.send_message(message))
    check("status:working" in labels or "task:working" in labels, f"no working event in {labels}")
    check(labels.count("artifact") == 1, f"expected one artifact event in {labels}")
    working_at = next(i for i, label in enumerate(labels) if label.endswith(":working"))
    artifact_at = labels.index("artifact")
    check(working_at < artifact_at, f"artifact arrived before working: {labels}")
    check(labels[-1] == "status:completed", f"stream does not end with completed: {labels}")
    check(events[-1][1].final is True, "the completed status-update is not marked final")
    artifact_text = text_of(events[artifact_at][1].artifact.parts)
    check(artifact_text == "Stream hello from TCK", f"artifact text {artifact_text!r}")
    task_ids = {event_task_id(event) for event in events}
    check(len(task_ids) == 1, f"events name several tasks: {task_ids}")
    return f"events {labels}, artifact text matches, last one final"


async def case_get_history_length(h: Harness) -> str:
    task = await h.send(user_message("tck-multi-turn start"))
    check(task.status.state == TaskState.input_required, f"first turn state {state_name(task.status.state)}")
    second = user_message("not yet", task_id=task.id, context_id=task.context_id)
    task = await h.send(second)
    check(task.status.state == TaskState.input_required, f"second turn state {state_name(task.status.state)}")

    full = await h.get(task.id)
    history_ids = [m.message_id for m in full.history or []]
    check(len(history_ids) >= 3, f"full history has {len(history_ids)} messages, expected >= 3")
    check(second.message_id in history_ids, "the follow-up message is missing from the full history")
    last_only = await h.get(task.id, history_length=1)
    got = len(last_only.history or [])
    check(got == 1, f"historyLength=1 returned {got} messages")
    check(
        last_only.history[0] == full.history[-1], "historyLength=1 did not return the last message of the full history"
    )
    return f"full history {len(history_ids)} messages; historyLength=1 gives the last one"


async def case_cancel(h: Harness) -> str:
    task = await h.send(user_message("tck-cancel me"), blocking=False)
    check(task.status.state not in TERMINAL, f"task already {state_name(task.status.state)} before cancel")
    canceled = await h.unary.cancel_task(TaskIdParams(id=task.id))
    check(canceled.status.state == TaskState.canceled, f"tasks/cancel returned {state_name(canceled.status.state)}")
    fetched = await h.get(task.id)
    check(
        fetched.status.state == TaskState.canceled, f"tasks/get after cancel shows {state_name(fetched.status.state)}"
    )
    return "tasks/cancel and tasks/get both show canceled"


async def case_subscribe(h: Harness) -> str:
    task = await h.send(user_message("tck-long-running subscribe"), blocking=False)
    check(task.status.state not in TERMINAL, f"task already {state_name(task.status.state)} before resubscribing")
    events, labels = await collect(h.streaming.resubscribe(TaskIdParams(id=task.id)))
    check(bool(events), "tasks/resubscribe yielded no events")
    check({event_task_id(e) for e in events} == {task.id}, f"events name other tasks: {labels}")
    check(labels[-1].endswith(":completed"), f"stream did not end on completed: {labels}")
    return f"events {labels}, stream closed"


async def case_multi_turn(h: Harness) -> str:
    first = await h.send(user_message("tck-multi-turn hello"))
    check(first.status.state == TaskState.input_required, f"first turn state {state_name(first.status.state)}")
    final = await h.send(user_message("done", task_id=first.id, context_id=first.context_id))
    check(final.status.state == COMPLETED, f"after 'done' state {state_name(final.status.state)}")
    check(final.id == first.id, f"task id changed: {first.id} -> {final.id}")
    check(final.context_id == first.context_id, f"context id changed: {first.context_id} -> {final.context_id}")
    return "input-required then completed on the same task and context"


async def case_stream_follow_up(h: Harness) -> str:
    first = await h.send(user_message("tck-multi-turn hello"))
    check(first.status.state == TaskState.input_required, f"first turn state {state_name(first.status.state)}")
    events, labels = await collect(h.streaming.send_message(user_message("done", task_id=first.id, context_id=first.context_id)))
    check(labels and labels[-1].endswith(":completed"), f"the streamed follow-up ended at {labels}")
    check({event_task_id(event) for event in events} == {first.id}, f"events of other tasks: {labels}")
    return f"events {labels}"


async def sdk_rpc(h: Harness, request, response_type):
    """One JSON-RPC call made with the SDK's own request and response models: the result, or the
    SDK's error for an error response."""
    endpoint = binding_url(h.card, "jsonrpc").rstrip("/")
    response = await h.http.post(endpoint, json=request.model_dump(mode="json", exclude_none=True))
    response.raise_for_status()
    parsed = response_type.model_validate(response.json()).root
    if isinstance(parsed, JSONRPCErrorResponse):
        raise A2AClientJSONRPCError(parsed)
    return parsed.result


async def list_push_configs(h: Harness, task_id: str) -> list[TaskPushNotificationConfig]:
    """tasks/pushNotificationConfig/list, which the v0.3 SDK's Client lacks, with its own models."""
    if h.binding == "grpc":
        stub = a2a_pb2_grpc.A2AServiceStub(h.channel)
        listed = await stub.ListTaskPushNotificationConfig(
            a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}")
        )
        return [proto_utils.FromProto.task_push_notification_config(c) for c in listed.configs]
    endpoint = binding_url(h.card, h.binding).rstrip("/")
    if h.binding == "jsonrpc":
        request = ListTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=task_id)
        )
        return await sdk_rpc(h, request, ListTaskPushNotificationConfigResponse)
    response = await h.http.get(f"{endpoint}/v1/tasks/{task_id}/pushNotificationConfigs")
    response.raise_for_status()
    listed = json_format.ParseDict(response.json(), a2a_pb2.ListTaskPushNotificationConfigResponse())
    return [proto_utils.FromProto.task_push_notification_config(c) for c in listed.configs]


async def delete_push_config(h: Harness, task_id: str, config_id: str) -> None:
    """tasks/pushNotificationConfig/delete, which the v0.3 SDK's Client lacks, with its own models."""
    if h.binding == "grpc":
        stub = a2a_pb2_grpc.A2AServiceStub(h.channel)
        name = f"tasks/{task_id}/pushNotificationConfigs/{config_id}"
        await stub.DeleteTaskPushNotificationConfig(a2a_pb2.DeleteTaskPushNotificationConfigRequest(name=name))
        return
    endpoint = binding_url(h.card, h.binding).rstrip("/")
    if h.binding == "jsonrpc":
        request = DeleteTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()),
            params=DeleteTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=config_id),
        )
        response = await h.http.post(endpoint, json=request.model_dump(mode="json", exclude_none=True))
        response.raise_for_status()
        reply = response.json()
        if "error" in reply:
            raise A2AClientJSONRPCError(JSONRPCErrorResponse.model_validate(reply))
        # The result is null: the v0.3 SDK's own server drops it (exclude_none), so accept either.
        check(reply.get("result") is None, f"delete answered {reply}")
        return
    response = await h.http.delete(f"{endpoint}/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}")
    response.raise_for_status()


async def case_push_config_crud(h: Harness) -> str:
    task = await h.send(user_message("tck-multi-turn push crud"))  # stays input-required, so no deliveries
    # In v0.3 the client names the config ("set by the client to support multiple callbacks").
    wanted = PushNotificationConfig(id=f"crud-{uuid.uuid4()}", url="http://127.0.0.1:9/crud-hook", token="crud-token")
    created = await h.unary.set_task_callback(
        TaskPushNotificationConfig(task_id=task.id, push_notification_config=wanted)
    )
    config = created.push_notification_config
    check(created.task_id == task.id, f"created config names task {created.task_id!r}")
    check(config.id == wanted.id, f"created config id {config.id!r}, asked for {wanted.id!r}")
    check(config.url == wanted.url and config.token == wanted.token, f"created config differs: {created.model_dump()}")

    fetched = await h.unary.get_task_callback(
        GetTaskPushNotificationConfigParams(id=task.id, push_notification_config_id=config.id)
    )
    check(
        fetched.push_notification_config.id == config.id and fetched.push_notification_config.url == wanted.url,
        f"get returned {fetched.model_dump()}",
    )
    listed = await list_push_configs(h, task.id)
    check(config.id in [c.push_notification_config.id for c in listed], f"list does not show the config: {listed}")

    await delete_push_config(h, task.id, config.id)
    listed = await list_push_configs(h, task.id)
    check(config.id not in [c.push_notification_config.id for c in listed], "list still shows the deleted config")
    try:
        await h.unary.get_task_callback(
            GetTaskPushNotificationConfigParams(id=task.id, push_notification_config_id=config.id)
        )
    except CallError as error:
        return f"set/get (SDK client), list/delete (SDK models) ok; get after delete raised {describe_error(error)}"
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


def pushed_task(body: bytes) -> Task | None:
    """A v0.3 push body is the Task itself; parsing with the SDK's model proves the shape."""
    try:
        return Task.model_validate_json(body)
    except ValueError:
        return None


async def case_push_delivery(h: Harness) -> str:
    push_token, push_secret = f"tok-{uuid.uuid4()}", f"secret-{uuid.uuid4()}"
    with WebhookReceiver() as receiver:
        config = PushNotificationConfig(
            url=receiver.url,
            token=push_token,
            authentication=PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials=push_secret),
        )
        task = await h.send(user_message("tck-long-running push"), push=config)
        check(task.status.state == COMPLETED, f"task ended {state_name(task.status.state)}")

        # Deliveries are asynchronous: wait for the completed one, then a moment for stragglers.
        def completed_delivered() -> bool:
            return any((t := pushed_task(body)) and t.status.state == COMPLETED for _, body in receiver.deliveries)

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not completed_delivered():
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        deliveries = list(receiver.deliveries)

    check(bool(deliveries), "no push delivery arrived")
    tasks = [pushed_task(body) for _, body in deliveries]
    if not all(tasks):
        raise CaseFailure(f"a delivery is not a v0.3 Task: {deliveries[tasks.index(None)][1][:300]!r}")
    for headers, _ in deliveries:
        check(
            headers.get("x-a2a-notification-token") == push_token,
            f"wrong X-A2A-Notification-Token: {headers.get('x-a2a-notification-token')!r}",
        )
        check(
            headers.get("authorization") == f"Bearer {push_secret}",
            f"wrong Authorization: {headers.get('authorization')!r}",
        )
    check({t.id for t in tasks} == {task.id}, f"deliveries name other tasks: {sorted({t.id for t in tasks})}")
    states = [state_name(t.status.state) for t in tasks]
    check(states[-1] == "completed", f"last delivery is not completed: {states}")
    return f"{len(deliveries)} deliveries {states} (v0.3 Task bodies) with token and Bearer credentials"


async def case_extended_card(h: Harness) -> str:
    extended = (
        await h.make_client().get_card()
    )  # a fresh client: the SDK caches the card it fetched  # agent/getAuthenticatedExtendedCard or GET /v1/card
    public_skills = {skill.id for skill in h.card.skills}
    extended_skills = {skill.id for skill in extended.skills}
    check(
        extended_skills == public_skills | {"extended"} and "extended" not in public_skills,
        f"extended card skills {sorted(extended_skills)}, public {sorted(public_skills)}",
    )
    try:
        await h.make_client(authenticated=False).get_card()
    except A2AClientHTTPError as error:
        check(error.status_code == 401, f"refused, but with HTTP {error.status_code} rather than 401")
        return "skill 'extended' with credentials; HTTP 401 without"
    except grpc.aio.AioRpcError as error:
        code = error.code()
        check(code == grpc.StatusCode.UNAUTHENTICATED, f"refused, but with {code.name} rather than UNAUTHENTICATED")
        return "skill 'extended' with credentials; UNAUTHENTICATED without"
    except A2AClientError as error:
        raise CaseFailure(f"refused without credentials, but not with HTTP 401: {describe_error(error)}") from error
    raise CaseFailure("the extended card was served without credentials")


async def case_error_unknown_task(h: Harness) -> str:
    try:
        await h.get(str(uuid.uuid4()))
    except CallError as error:
        codes = (TASK_NOT_FOUND_CODE, TASK_NOT_FOUND_HTTP, TASK_NOT_FOUND_GRPC)
        return expect_error(h.binding, error, codes, "TaskNotFoundError")
    raise CaseFailure("tasks/get of a random id succeeded")


async def case_error_cancel_finished(h: Harness) -> str:
    task = await h.send(user_message("hello", id_prefix="tck-complete-task-"))
    check(task.status.state == COMPLETED, f"setup task ended {state_name(task.status.state)}")
    try:
        await h.unary.cancel_task(TaskIdParams(id=task.id))
    except CallError as error:
        codes = (TASK_NOT_CANCELABLE_CODE, TASK_NOT_CANCELABLE_HTTP, TASK_NOT_CANCELABLE_GRPC)
        return expect_error(h.binding, error, codes, "TaskNotCancelableError")
    raise CaseFailure("cancel of a completed task succeeded")


def file_of(parts: list[Part] | None) -> FileWithBytes | None:
    """The first inline file among `parts`."""
    files = [part.root.file for part in parts or [] if isinstance(part.root, FilePart)]
    return files[0] if files and isinstance(files[0], FileWithBytes) else None


# What send_file sends: the five bytes `hello`, named, in the SDK's base64 form.
HELLO = FileWithBytes(bytes="aGVsbG8=", name="hello.txt", mime_type="text/plain")


async def case_send_file(h: Harness) -> str:
    message = Message(
        message_id=f"tck-complete-task-{uuid.uuid4()}", role=Role.user, parts=[Part(root=FilePart(file=HELLO))]
    )
    task = await h.send(message)
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected completed")
    got = file_of((await h.get(task.id)).history[0].parts)
    check(got == HELLO, f"tasks/get gives back the file as {got!r}")
    # The same task read through v1.0: the file itself, base64 once, with its name.
    seen = await v1_call(h, "GetTask", {"id": task.id}, ("GET", f"/tasks/{task.id}"))
    part = seen.get("history", [{}])[0].get("parts", [{}])[0]
    check(
        (part.get("raw"), part.get("filename")) == ("aGVsbG8=", "hello.txt"),
        f"v1.0 GetTask shows the file as {json.dumps(part)[:200]}",
    )
    return "hello.txt came back the same through tasks/get and as raw 'aGVsbG8=' through v1.0 GetTask"


async def case_receive_file(h: Harness) -> str:
    task = await h.send(user_message("a file please", id_prefix="tck-artifact-file-"))
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected completed")
    got = file_of(task.artifacts[0].parts if task.artifacts else None)
    wanted = FileWithBytes(bytes="R2VuZXJhdGVkIGZpbGUgY29udGVudA==", name="output.txt", mime_type="text/plain")
    check(got == wanted, f"the artifact's file is {got!r}")
    return "artifact output.txt (text/plain) holds base64 of 'Generated file content'"


async def send_without_configuration(h: Harness, message: Message) -> Task | Message:
    """message/send with no configuration at all, which the v0.3 SDK's Client never sends (it
    always states `blocking`), made with the SDK's own models (over gRPC, its generated stub)."""
    if h.binding == "grpc":
        stub = a2a_pb2_grpc.A2AServiceStub(h.channel)
        reply = await stub.SendMessage(a2a_pb2.SendMessageRequest(request=proto_utils.ToProto.message(message)))
        return proto_utils.FromProto.task_or_message(reply)
    if h.binding == "jsonrpc":
        request = SendMessageRequest(id=str(uuid.uuid4()), params=MessageSendParams(message=message))
        return await sdk_rpc(h, request, SendMessageResponse)
    body = json_format.MessageToDict(a2a_pb2.SendMessageRequest(request=proto_utils.ToProto.message(message)))
    check("configuration" not in body, f"the request states a configuration: {body}")
    endpoint = binding_url(h.card, h.binding).rstrip("/")
    response = await h.http.post(f"{endpoint}/v1/message:send", json=body)
    response.raise_for_status()
    reply = json_format.ParseDict(response.json(), a2a_pb2.SendMessageResponse())
    return proto_utils.FromProto.task_or_message(reply)


async def case_send_default_blocking(h: Harness) -> str:
    task = await send_without_configuration(h, user_message("tck-long-running default"))
    check(isinstance(task, Task), f"expected a Task, got {task!r}")
    check(task.status.state == COMPLETED, f"a send without blocking answered {state_name(task.status.state)}")
    return "a send without a configuration waited for the task to complete"


# v1.0 on the wire, for concurrent_generations: the same binding, the v1.0 names and shapes.
V1_HEADERS = {"A2A-Version": "1.0"}


class V1Grpc:
    """lf.a2a.v1 calls without generated code: the message types come from the server's reflection
    service, the way grpcurl finds them."""

    SERVICE = "lf.a2a.v1.A2AService"

    def __init__(self, target: str):
        self._reflection = grpc.insecure_channel(target)
        self._pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(self._reflection))

    def _types(self, method: str) -> tuple[type, type]:
        rpc = self._pool.FindServiceByName(self.SERVICE).methods_by_name[method]
        return message_factory.GetMessageClass(rpc.input_type), message_factory.GetMessageClass(rpc.output_type)

    async def call(self, channel: grpc.aio.Channel, method: str, params: dict) -> dict:
        # The reflection client blocks: keep it off the event loop, which holds an open stream.
        request_type, response_type = await asyncio.to_thread(self._types, method)
        call = channel.unary_unary(
            f"/{self.SERVICE}/{method}",
            request_serializer=request_type.SerializeToString,
            response_deserializer=response_type.FromString,
        )
        response = await call(json_format.ParseDict(params, request_type()), metadata=(("a2a-version", "1.0"),))
        return json_format.MessageToDict(response)

    def close(self) -> None:
        self._reflection.close()


async def v1_call(h: Harness, method: str, params: dict, rest: tuple[str, str]) -> dict:
    """One v1.0 call: JSON-RPC `method` at the interface URL, REST `rest` (verb, path), or the gRPC
    `method` of lf.a2a.v1.A2AService."""
    if h.binding == "grpc":
        v1 = V1Grpc(grpc_target(binding_url(h.card, "grpc")))
        try:
            return await v1.call(h.channel, method, params)
        finally:
            v1.close()
    if h.binding == "jsonrpc":
        body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
        response = await h.http.post(h.url, json=body, headers=V1_HEADERS)
        reply = response.json()
        check("result" in reply, f"v1.0 {method}: HTTP {response.status_code} {json.dumps(reply)[:400]}")
        return reply["result"]
    verb, path = rest
    response = await h.http.request(verb, h.url + path, json=params if verb == "POST" else None, headers=V1_HEADERS)
    check(response.is_success, f"v1.0 {verb} {path}: HTTP {response.status_code} {response.text[:400]}")
    return response.json()


async def case_concurrent_generations(h: Harness) -> str:
    # A v0.3 stream of a task that works for about a second...
    async with contextlib.aclosing(h.streaming.send_message(user_message("tck-long-running concurrent"))) as stream:
        return await concurrent_generations(h, stream)


async def concurrent_generations(h: Harness, stream) -> str:
    first = await anext(stream)
    check(isinstance(first, tuple), f"first v0.3 stream event is {event_label(first)}")
    v03_task = first[0]
    labels = [event_label(first)]

    # ... and, while it is open, a v1.0 exchange with the same server over the same binding.
    v1_message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    sent = await v1_call(h, "SendMessage", {"message": v1_message}, ("POST", "/message:send"))
    v1_task = sent.get("task", {})
    check(
        v1_task.get("status", {}).get("state") == "TASK_STATE_COMPLETED",
        f"v1.0 SendMessage answered {json.dumps(sent)[:300]}",
    )
    # The v0.3 task, read through v1.0 while its v0.3 stream is still open: one store, two dialects.
    seen = await v1_call(h, "GetTask", {"id": v03_task.id}, ("GET", f"/tasks/{v03_task.id}"))
    seen_state = seen.get("status", {}).get("state")
    check(seen_state in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"), f"v1.0 GetTask of the v0.3 task: {seen_state}")

    async for event in stream:
        labels.append(event_label(event))
    check(labels[-1] == "status:completed", f"v0.3 stream after the v1.0 calls: {labels}")
    return (
        f"v0.3 message/stream {labels}; meanwhile v1.0 SendMessage -> TASK_STATE_COMPLETED and v1.0 GetTask "
        f"of the v0.3 task -> {seen_state}"
    )


CASES: list[tuple[str, Callable[[Harness], Awaitable[str]]]] = [
    ("card", case_card),
    ("send_blocking", case_send_blocking),
    ("send_non_blocking", case_send_non_blocking),
    ("stream", case_stream),
    ("get_history_length", case_get_history_length),
    ("cancel", case_cancel),
    ("subscribe", case_subscribe),
    ("multi_turn", case_multi_turn),
    ("stream_follow_up", case_stream_follow_up),
    ("push_config_crud", case_push_config_crud),
    ("push_delivery", case_push_delivery),
    ("extended_card", case_extended_card),
    ("error_unknown_task", case_error_unknown_task),
    ("error_cancel_finished", case_error_cancel_finished),
    ("concurrent_generations", case_concurrent_generations),
    ("send_file", case_send_file),
    ("receive_file", case_receive_file),
    ("send_default_blocking", case_send_default_blocking),
]


# --- harness -----------------------------------------------------------------------------


def grpc_target(url: str) -> str:
    """The host:port grpc dials, from a card's gRPC URL, which v0.3 writes with a scheme."""
    return urlsplit(url).netloc or url


def grpc_channel(url: str, token: str | None) -> grpc.aio.Channel:
    """A channel to the card's gRPC URL. The token rides as call credentials, since the v0.3 SDK's
    gRPC transport runs no interceptors; local credentials let them travel over plaintext loopback."""
    if token is None:
        return grpc.aio.insecure_channel(grpc_target(url))
    credentials = grpc.composite_channel_credentials(
        grpc.local_channel_credentials(), grpc.access_token_call_credentials(token)
    )
    return grpc.aio.secure_channel(grpc_target(url), credentials)


def emit(line: dict) -> None:
    print(json.dumps(line), flush=True)


async def run_case(name: str, case: Callable[[Harness], Awaitable[str]], harness: Harness) -> None:
    harness.refusals.clear()
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
        # The SDK's HTTP errors keep the status only: add what the server said, from the wire.
        wire = f" (last refusal: {harness.refusals[-1]})" if harness.refusals else ""
        emit({"case": name, "ok": False, "detail": f"{type(error).__name__}: {first_line}{wire}"})


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True, choices=sorted(BINDINGS))
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("a2a.client.card_resolver").setLevel(logging.WARNING)

    emit({"meta": {"sdk": "a2a-sdk", "version": importlib.metadata.version("a2a-sdk"), "binding": args.binding}})

    request_paths: list[str] = []
    refusals: list[str] = []

    async def record_request(request: httpx.Request) -> None:
        request_paths.append(f"{request.method} {request.url.path}")

    async def record_refusal(response: httpx.Response) -> None:
        if response.status_code >= 400:
            await response.aread()
            request = response.request
            body = request.content.decode(errors="replace")[:400]
            refusals.append(
                f"{request.method} {request.url.path} {body} -> HTTP {response.status_code} {response.text[:400]}"
            )

    # The token rides on the HTTP client (the v0.3 SDK's REST transport does not run interceptors;
    # AuthInterceptor would cover JSON-RPC only) and on the gRPC channel's call credentials. The SDK
    # leaves these clients and channels to us to close.
    channels: list[grpc.aio.Channel] = []

    def open_channel(url: str, authenticated: bool) -> grpc.aio.Channel:
        channels.append(grpc_channel(url, args.token if authenticated else None))
        return channels[-1]

    timeout = httpx.Timeout(CASE_TIMEOUT_S)
    async with (
        httpx.AsyncClient(
            timeout=timeout,
            headers={"Authorization": f"Bearer {args.token}"},
            event_hooks={"request": [record_request], "response": [record_refusal]},
        ) as http,
        httpx.AsyncClient(timeout=timeout) as anonymous_http,
    ):
        try:
            card = await A2ACardResolver(http, args.url).get_agent_card()
        except A2AClientError as error:
            log.error("harness cannot start: %s", error)
            return 2

        def make_client(
            streaming: bool = False, authenticated: bool = True, push: PushNotificationConfig | None = None
        ) -> Client:
            # Offering only the requested transport forces the factory to pick that interface of the card.
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http if authenticated else anonymous_http,
                supported_transports=[BINDINGS[args.binding]],
                grpc_channel_factory=lambda url: open_channel(url, authenticated),
                push_notification_configs=[push] if push else [],
            )
            return ClientFactory(config).create(card)

        try:
            unary, streaming = make_client(streaming=False), make_client(streaming=True)
        except ValueError as error:  # "no compatible transports found."
            log.error("harness cannot start: the card offers no %s interface: %s", args.binding, error)
            return 2
        harness = Harness(
            binding=args.binding,
            url=args.url.rstrip("/"),
            card=card,
            http=http,
            unary=unary,
            streaming=streaming,
            make_client=make_client,
            channel=open_channel(binding_url(card, "grpc"), True) if args.binding == "grpc" else None,
            request_paths=request_paths,
            refusals=refusals,
        )
        try:
            for name, case in CASES:
                await run_case(name, case, harness)
        finally:
            for channel in channels:
                await channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
