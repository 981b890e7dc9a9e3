"""A chat model whose answers follow a script, served by LiteLLM's proxy (config.yaml beside this
file names it as the provider `scripted`), so agentwire's model agent can be tested against a real
OpenAI-compatible server without a real model.

The last message of the conversation decides the answer:
- a tool result (role `tool`): `The tool said {content}`;
- user text starting with `add`, when the request offers a tool named `add`: a call of `add` with
  {"a": 2, "b": 3} (finish_reason `tool_calls`);
- user text `call NAME ARGUMENTS`, when the request offers a tool named NAME: a call of it with
  ARGUMENTS (JSON text);
- user text containing `slow`: the answer (as below) comes after 30 s, unless the client goes away;
- user text containing `fail`: the request fails before the first chunk (an HTTP error);
- otherwise: `You said '{text}'; this conversation has {U} user message(s) and {A} answer(s).`,
  word by word.
Each answer reports its usage in its last chunk: a token per word of the request's messages, and per
word of the answer (of a call's arguments), which the proxy passes on when the client asks for usage
(`stream_options.include_usage`), so that a test can tell the model's figures from the proxy's own.
Every request is appended as a JSON line to the file $SCRIPTED_MODEL_RECORD names, if set: what the
model was asked, for the tests that check the history and the tools an agent sends, and
{"cancelled": true} when a slow request's client disconnected.
"""

import asyncio
import json
import os
from dataclasses import dataclass

from litellm import CustomLLM
from litellm.llms.custom_llm import CustomLLMError
from litellm.types.utils import GenericStreamingChunk

WORD_PAUSE_S = 0.02  # between words, so a client sees the answer arrive in pieces
SLOW_S = 30
FAILURE = "the scripted model failed on purpose"
ADD_CALL = {"id": "call_add", "name": "add", "arguments": json.dumps({"a": 2, "b": 3})}


def record(line: dict) -> None:
    path = os.environ.get("SCRIPTED_MODEL_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")


def text_of(content) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def offered_tools(optional_params: dict) -> list[str]:
    """The names of the tools the request offers. The proxy passes the request's `tools` on to a
    custom provider in `optional_params`, as OpenAI's function tools."""
    tools = optional_params.get("tools") or []
    return [tool.get("function", {}).get("name", "") for tool in tools]


@dataclass
class Answer:
    text: str = ""
    call: dict | None = None  # a tool call, instead of text
    slow: bool = False
    fail: bool = False


def answer(messages: list[dict], tools: list[str]) -> Answer:
    last = messages[-1] if messages else {}
    text = text_of(last.get("content"))
    if last.get("role") == "tool":
        return Answer(f"The tool said {text}")
    asked = last.get("role") == "user"
    if asked and text.startswith("add") and "add" in tools:
        return Answer(call=ADD_CALL)
    words = text.split(" ", 2)
    if asked and len(words) == 3 and words[0] == "call" and words[1] in tools:
        return Answer(call={"id": "call_named", "name": words[1], "arguments": words[2]})
    users = sum(m.get("role") == "user" for m in messages)
    answers = sum(m.get("role") == "assistant" for m in messages)
    reply = f"You said '{text}'; this conversation has {users} user message(s) and {answers} answer(s)."
    return Answer(reply, slow=asked and "slow" in text, fail=asked and "fail" in text)


def chunk(
    text: str = "", *, tool_use: dict | None = None, finish_reason: str = "", usage: dict | None = None
) -> GenericStreamingChunk:
    return GenericStreamingChunk(
        text=text, tool_use=tool_use, is_finished=bool(finish_reason), finish_reason=finish_reason, usage=usage, index=0
    )


def usage_of(messages: list[dict], words: int) -> dict:
    """The usage the model reports for an answer of `words` words: a token per word of the request's
    messages and of the answer, counted so a test can tell these figures from the proxy's own."""
    asked = sum(len(text_of(m.get("content")).split()) for m in messages)
    return {"prompt_tokens": asked, "completion_tokens": words, "total_tokens": asked + words}


class ScriptedModel(CustomLLM):
    async def astreaming(self, model, messages, *args, optional_params=None, **kwargs):
        tools = offered_tools(optional_params or {})
        record({"messages": messages, "tools": tools})
        script = answer(messages, tools)
        if script.call:
            # As OpenAI streams a call: its id and name first, then its arguments.
            call = script.call
            yield chunk(tool_use={"index": 0, "id": call["id"], "type": "function",
                                  "function": {"name": call["name"], "arguments": ""}})  # fmt: skip
            yield chunk(tool_use={"index": 0, "function": {"arguments": call["arguments"]}},
                        finish_reason="tool_calls", usage=usage_of(messages, len(call["arguments"].split())))  # fmt: skip
            return
        if script.slow:
            try:
                await asyncio.sleep(SLOW_S)
            except asyncio.CancelledError:  # the proxy cancels the request when its client goes away
                record({"cancelled": True})
                raise
        if script.fail:
            # Raised before the first chunk, the proxy answers with an HTTP error (500, the message in
            # its JSON body's error.message) instead of opening a stream.
            raise CustomLLMError(status_code=500, message=FAILURE)
        words = script.text.split(" ")
        for i, word in enumerate(words):
            if i:
                await asyncio.sleep(WORD_PAUSE_S)
            last = i == len(words) - 1
            usage = usage_of(messages, len(words)) if last else None
            yield chunk(word if last else word + " ", finish_reason="stop" if last else "", usage=usage)


handler = ScriptedModel()
