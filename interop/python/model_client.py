"""Model-agent client: drives `agentwire serve --agent openai`, in front of the scripted model of
interop/model, with the official A2A Python SDK (client.py's helpers and harness conventions).

Usage: model_client.py --url http://127.0.0.1:PORT --binding jsonrpc|rest|grpc

Prints one meta line, then one JSON line per case (ask, stream, context): {"case", "ok", "detail"}.
Logs go to stderr. Exit status is 0 whenever every case ran, even if some failed.
"""

import argparse
import asyncio
import importlib.metadata
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
from a2a.client import A2ACardResolver, AgentCardResolutionError, Client, ClientConfig, ClientFactory
from a2a.types import SendMessageRequest, Task

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

    async def send(self, message) -> Task:
        """A blocking SendMessage that must answer with a Task."""
        responses = [r async for r in self.unary.send_message(SendMessageRequest(message=message))]
        check(len(responses) == 1 and responses[0].HasField("task"), f"expected one Task response, got {responses}")
        return responses[0].task


def artifact_text(task: Task) -> str:
    check(len(task.artifacts) == 1, f"{len(task.artifacts)} artifacts, expected one")
    return "".join(part.text for part in task.artifacts[0].parts)


async def case_ask(h: Harness) -> str:
    task = await h.send(user_message("hello"))
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected COMPLETED")
    h.asked = task
    text = artifact_text(task)
    check(text == answer("hello", 1, 0), f"artifact text {text!r}")
    return f"COMPLETED, artifact {text!r}"


async def case_stream(h: Harness) -> str:
    events = [e async for e in h.streaming.send_message(SendMessageRequest(message=user_message("hello there")))]
    labels = [event_label(e) for e in events]
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    read = [
        Chunk(c.append, c.last_chunk, c.artifact.artifact_id, "".join(part.text for part in c.artifact.parts))
        for c in chunks
    ]
    problem = stream_problem(read, answer("hello there", 1, 0))
    check(problem is None, f"{problem}: {labels}")
    check(labels[-1] == "status:COMPLETED", f"the stream does not end with COMPLETED: {labels}")
    return f"{len(chunks) - 1} pieces make the answer, the last chunk holds it whole, then COMPLETED"


async def case_context(h: Harness) -> str:
    check(h.asked is not None, "ask made no task whose context to continue")
    task = await h.send(user_message("hello again", context_id=h.asked.context_id))
    check(task.id != h.asked.id, "the send continued ask's task rather than starting one")
    check(task.context_id == h.asked.context_id, f"context {task.context_id}, not ask's {h.asked.context_id}")
    check(task.status.state == COMPLETED, f"state {state_name(task.status.state)}, expected COMPLETED")
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

    emit({"meta": {"sdk": "a2a-sdk", "version": importlib.metadata.version("a2a-sdk"), "binding": args.binding}})
    async with httpx.AsyncClient(timeout=CASE_TIMEOUT_S) as http:
        try:
            card = await A2ACardResolver(http, args.url).get_agent_card()
        except AgentCardResolutionError as error:
            log.error("harness cannot start: %s", error)
            return 2

        def make_client(streaming: bool) -> Client:
            # Offering only the requested binding forces the factory to pick that interface of the card.
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                grpc_channel_factory=grpc_channel,
                supported_protocol_bindings=[BINDINGS[args.binding]],
            )
            return ClientFactory(config).create(card)

        harness = Harness(unary=make_client(streaming=False), streaming=make_client(streaming=True))
        for name, case in CASES:
            await run_case(name, case, harness)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
