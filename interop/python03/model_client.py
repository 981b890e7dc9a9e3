"""Model-agent client: drives `agentwire serve --agent openai`, in front of the scripted model of
interop/model, with the official A2A Python SDK's last v0.3 release (client.py's helpers and
harness conventions), protocol v0.3.

Usage: model_client.py --url http://127.0.0.1:PORT --binding jsonrpc|rest|grpc

Prints one meta line, then one JSON line per case (ask, stream, context): {"case", "ok", "detail"}.
Logs go to stderr. Exit status is 0 whenever every case ran, even if some failed.
"""

import argparse
import asyncio
import contextlib
import importlib.metadata
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types import MessageSendConfiguration, Task, TaskArtifactUpdateEvent

from client import (
    BINDINGS,
    CASE_TIMEOUT_S,
    COMPLETED,
    check,
    emit,
    event_label,
    grpc_channel,
    run_case,
    state_name,
    text_of,
    user_message,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "model"))
from checks import Chunk, answer, stream_problem  # noqa: E402

log = logging.getLogger("interop")


@dataclass
class Harness:
    unary: Client
    streaming: Client
    asked: Task | None = None  # ask's task, whose context `context` continues
    refusals: list[str] = field(default_factory=list)  # client.py's run_case clears it; nothing fills it here

    async def send(self, message) -> Task:
        """A blocking message/send that must answer with a Task."""
        config = MessageSendConfiguration(blocking=True)
        responses = [r async for r in self.unary.send_message(message, configuration=config)]
        check(
            len(responses) == 1 and isinstance(responses[0], tuple) and isinstance(responses[0][0], Task),
            f"expected one Task response, got {responses}",
        )
        return responses[0][0]


def artifact_text(task: Task) -> str:
    artifacts = task.artifacts or []
    check(len(artifacts) == 1, f"{len(artifacts)} artifacts, expected one")
    return text_of(artifacts[0].parts)


async def case_ask(h: Harness) -> str:
    task = await h.send(user_message("hello"))
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected completed")
    h.asked = task
    text = artifact_text(task)
    check(text == answer("hello", 1, 0), f"artifact text {text!r}")
    return f"completed, artifact {text!r}"


async def case_stream(h: Harness) -> str:
    chunks, labels, last = [], [], None
    async with contextlib.aclosing(h.streaming.send_message(user_message("hello there"))) as stream:
        async for event in stream:
            labels.append(event_label(event))
            if isinstance(event, tuple) and isinstance(event[1], TaskArtifactUpdateEvent):
                # A copy as it arrived: the SDK appends the later chunks' parts to the first one's artifact.
                chunks.append(event[1].model_copy(deep=True))
            last = event
    read = [Chunk(bool(c.append), bool(c.last_chunk), c.artifact.artifact_id, text_of(c.artifact.parts)) for c in chunks]
    problem = stream_problem(read, answer("hello there", 1, 0))
    check(problem is None, f"{problem}: {labels}")
    check(labels[-1] == "status:completed", f"the stream does not end with completed: {labels}")
    check(last[1].final is True, "the completed status-update is not marked final")
    return f"{len(chunks) - 1} pieces make the answer, the last chunk holds it whole, then completed (final)"


async def case_context(h: Harness) -> str:
    check(h.asked is not None, "ask made no task whose context to continue")
    task = await h.send(user_message("hello again", context_id=h.asked.context_id))
    check(task.id != h.asked.id, "the send continued ask's task rather than starting one")
    check(task.context_id == h.asked.context_id, f"context {task.context_id}, not ask's {h.asked.context_id}")
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected completed")
    text = artifact_text(task)
    check(text == answer("hello again", 2, 1), f"artifact text {text!r}")
    return f"a new task in ask's context, artifact {text!r}"


CASES = [("ask", case_ask), ("stream", case_stream), ("context", case_context)]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True, choices=sorted(BINDINGS))
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("a2a.client.card_resolver").setLevel(logging.WARNING)

    emit({"meta": {"sdk": "a2a-sdk", "version": importlib.metadata.version("a2a-sdk"), "binding": args.binding}})
    channels: list[grpc.aio.Channel] = []  # the SDK leaves its gRPC channels to us to close

    def open_channel(url: str) -> grpc.aio.Channel:
        channels.append(grpc_channel(url, None))
        return channels[-1]

    async with httpx.AsyncClient(timeout=CASE_TIMEOUT_S) as http:
        try:
            card = await A2ACardResolver(http, args.url).get_agent_card()
        except A2AClientError as error:
            log.error("harness cannot start: %s", error)
            return 2

        def make_client(streaming: bool) -> Client:
            # Offering only the requested transport forces the factory to pick that interface of the card.
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_transports=[BINDINGS[args.binding]],
                grpc_channel_factory=open_channel,
            )
            return ClientFactory(config).create(card)

        try:
            harness = Harness(unary=make_client(streaming=False), streaming=make_client(streaming=True))
            for name, case in CASES:
                await run_case(name, case, harness)
        finally:
            for channel in channels:
                await channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
