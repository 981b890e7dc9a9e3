"""The benchmark's echo agent built on the official A2A Python SDK (a2a-sdk).

It serves the SDK's JSON-RPC routes at POST / and its HTTP+JSON routes (POST /message:send,
/message:stream, ...) on the same port, plus the agent card, with the SDK's default request
handler and in-memory task store. Each message completes a task with one text artifact "echo"
holding the message's text, the same result agentwire's echo agent gives.

Usage: python echo_server.py --port PORT [--host 127.0.0.1]
"""

import argparse

import uvicorn
from a2a.helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    """Emits what agentwire's echo agent emits: the new task, its artifact, then COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        # Text parts joined with nothing between them, as the other echo agents do.
        text = get_message_text(context.message, delimiter="")
        await updater.add_artifact([new_text_part(text)], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # Echo tasks finish at once, so there is never anything running to cancel.
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(base_url: str) -> AgentCard:
    return AgentCard(
        name="Echo",
        description="Replies with the text it receives",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=base_url, protocol_version="1.0"),
            AgentInterface(protocol_binding="HTTP+JSON", url=base_url, protocol_version="1.0"),
        ],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Returns the message text as an artifact",
                tags=["echo"],
            )
        ],
    )


def build_app(base_url: str) -> Starlette:
    card = agent_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/"),
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()

    app = build_app(f"http://{args.host}:{args.port}")
    # One worker, no reload, no per-request logging: the bench measures the SDK, not the logs.
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        workers=1,
        reload=False,
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
