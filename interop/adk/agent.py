#!/usr/bin/env python3
"""An agent made with Google ADK and served over A2A by ADK's own `to_a2a`, as ADK's users serve one.

Usage: agent.py --port PORT

It needs no model: a BaseAgent that answers each message with its text, so the interop matrix can
put it behind `agentwire gateway` and check every answer exactly.
"""

from __future__ import annotations

import argparse
import logging
import warnings
from collections.abc import AsyncGenerator

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")


class EchoAgent(BaseAgent):
    """Answers with the text of the message it was given."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        content = ctx.user_content
        text = "".join(part.text or "" for part in (content.parts or [])) if content else ""
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    agent = EchoAgent(name="adk_echo", description="Echoes each message (Google ADK)")
    app = to_a2a(agent, host="127.0.0.1", port=args.port)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level=logging.WARNING)


if __name__ == "__main__":
    main()
