"""Interoperability client: calls agentwire's MCP server with the official MCP Python SDK.

Usage: client.py --url http://127.0.0.1:PORT/mcp --token TOKEN
       client.py --token TOKEN --stdio COMMAND [ARG...]

The server is a gateway in front of two agents: `conf` (agentwire's conformance agent) and `py`
(the official A2A Python SDK's agent). Over HTTP the token goes in the Authorization header;
over stdio the command is `agentwire mcp GATEWAY --token TOKEN`, and the run without credentials
starts it without `--token`.

Prints one meta line, then one JSON line per case: {"case", "ok", "detail"}.
Logs go to stderr. Exit status is 0 whenever every case ran, even if some failed.
"""

import argparse
import importlib.metadata
import json
import sys
import urllib.error
import urllib.request

import anyio
import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

CASE_TIMEOUT_S = 30


class CaseFailure(Exception):
    """A check inside a case did not hold; the message is the case's detail."""


def check(condition: bool, detail: str) -> None:
    if not condition:
        raise CaseFailure(detail)


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


class Run:
    def __init__(self, args: argparse.Namespace):
        self.args = args

    def client(self, token: str | None, **callbacks) -> Client:
        if self.args.stdio:
            command, *rest = self.args.stdio
            args = rest + (["--token", token] if token else [])
            return Client(StdioServerParameters(command=command, args=args), **callbacks)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        return Client(streamable_http_client(self.args.url, http_client=http), **callbacks)

    async def tool_named(self, client: Client, prefix: str) -> str:
        tools = (await client.list_tools()).tools
        names = [tool.name for tool in tools if tool.name.startswith(prefix)]
        check(len(names) == 1, f"expected one tool named {prefix}*, got {[t.name for t in tools]}")
        return names[0]

    async def list_tools(self, client: Client) -> str:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for generic in ("list_agents", "send_message", "get_task", "cancel_task"):
            check(generic in tools, f"no {generic} tool in {sorted(tools)}")
        skills = [name for name in tools if name.startswith(("conf_", "py_"))]
        check(any(n.startswith("conf_") for n in skills) and any(n.startswith("py_") for n in skills),
              f"expected skill tools of both agents, got {sorted(tools)}")  # fmt: skip
        for name in skills:
            schema = tools[name].input_schema
            check(schema.get("type") == "object" and "message" in schema.get("required", []),
                  f"{name}'s input schema does not require a message: {schema}")  # fmt: skip
            check(bool(tools[name].description), f"{name} has no description")
        return f"{len(tools)} tools: {sorted(tools)}"

    async def call_agentwire_skill(self, client: Client) -> str:
        tool = await self.tool_named(client, "conf_conformance")
        result = await client.call_tool(tool, {"message": "tck-artifact-text"})
        check(result.is_error is False, f"the call failed: {texts(result)}")
        check(texts(result) == ["Generated text content"], f"artifact text: {texts(result)}")
        facts = result.structured_content or {}
        check(facts.get("state") == "COMPLETED" and facts.get("taskId"), f"task facts: {facts}")
        return f"{tool}: {texts(result)} task {facts['taskId']}"

    async def call_python_sdk_skill(self, client: Client) -> str:
        tool = await self.tool_named(client, "py_tck")
        result = await client.call_tool(tool, {"message": "hello from an MCP client"})
        check(result.is_error is False, f"the call failed: {texts(result)}")
        check(any("hello from an MCP client" in text for text in texts(result)), f"the agent's answer: {texts(result)}")
        return f"{tool}: {texts(result)}"

    async def list_agents(self, client: Client) -> str:
        result = await client.call_tool("list_agents", {"query": "python"})
        agents = [agent["name"] for agent in (result.structured_content or {}).get("agents", [])]
        check(agents == ["py"], f"a search for 'python' found {agents}")
        everyone = await client.call_tool("list_agents", {})
        names = sorted(agent["name"] for agent in (everyone.structured_content or {}).get("agents", []))
        check(names == ["conf", "py"], f"the listing: {names}")
        return f"search: {agents}; all: {names}"

    async def progress(self, client: Client) -> str:
        seen: list[tuple[float, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, message))

        result = await client.call_tool(
            "send_message", {"agent": "conf", "message": "tck-long-running"}, progress_callback=on_progress
        )
        check(result.is_error is False, f"the call failed: {texts(result)}")
        check(texts(result) == ["Long-running task finished"], f"the answer: {texts(result)}")
        check(len(seen) >= 2, f"progress notifications: {seen}")
        check([p for p, _ in seen] == sorted(p for p, _ in seen), f"progress went back: {seen}")
        check(any((m or "").startswith("WORKING") for _, m in seen), f"no WORKING progress: {seen}")
        return f"{len(seen)} notifications: {[m for _, m in seen]}"

    async def cancel(self, client: Client) -> str:
        working = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if (message or "").startswith("WORKING"):
                working.set()

        outcome: dict[str, object] = {}

        async def call(scope: anyio.CancelScope) -> None:
            with scope:
                outcome["result"] = await client.call_tool(
                    "send_message", {"agent": "conf", "message": "tck-cancel please"}, progress_callback=on_progress
                )

        scope = anyio.CancelScope()
        async with anyio.create_task_group() as group:
            group.start_soon(call, scope)
            with anyio.fail_after(CASE_TIMEOUT_S):
                await working.wait()
            scope.cancel()
        check("result" not in outcome, f"the call ended before it was canceled: {outcome}")
        # The server cancels the A2A task when the cancellation arrives: poll until it has.
        listing = await client.call_tool("list_agents", {})
        check(listing.is_error is False, "the client can no longer call after a cancel")
        return await self.wait_canceled(client)

    async def wait_canceled(self, client: Client) -> str:
        # The task is the conformance agent's last: its id is not known to the canceled call, so
        # it is read from the agent through the gateway's A2A listing by the harness instead.
        deadline = anyio.current_time() + CASE_TIMEOUT_S
        while anyio.current_time() < deadline:
            state = canceled_task_state(self.args.a2a_url, self.args.token_for_check)
            if state == "TASK_STATE_CANCELED":
                return "the A2A task ended CANCELED"
            await anyio.sleep(0.2)
        raise CaseFailure(f"the A2A task did not end CANCELED: {state}")

    async def elicitation(self, client_factory) -> str:
        asked: list[str] = []

        async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"answer": "done"})

        async with client_factory(elicitation_callback=answer) as client:
            result = await client.call_tool("send_message", {"agent": "conf", "message": "tck-multi-turn start"})
        check(asked == ["Please continue; send 'done' to finish"], f"the questions asked: {asked}")
        check(result.is_error is False, f"the call failed: {texts(result)}")
        check(texts(result) == ["Conversation complete"], f"the answer: {texts(result)}")
        return f"asked {asked}, answered 'done': {texts(result)}"

    async def no_credentials(self) -> str:
        if self.args.stdio:
            async with self.client(None) as client:
                tool = await self.tool_named(client, "conf_conformance")
                try:
                    result = await client.call_tool(tool, {"message": "tck-artifact-text"})
                except MCPError as error:
                    check("credentials" in error.error.message, f"refused with: {error.error.message}")
                    return f"refused: {error.error.message}"
                raise CaseFailure(f"a call without credentials answered: {texts(result)}")
        try:
            async with self.client(None) as client:
                await client.list_tools()
        except Exception as error:  # the SDK raises its transport's error for the 401
            refused = f"{type(error).__name__}"
        else:
            raise CaseFailure("a client without credentials listed the tools")
        request = urllib.request.Request(self.args.url, method="POST", data=b"{}",
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            urllib.request.urlopen(request, timeout=10)
            raise CaseFailure("a request without credentials was answered")
        except urllib.error.HTTPError as error:
            check(error.code == 401, f"status {error.code}")
            challenge = error.headers.get("WWW-Authenticate", "")
        check('resource_metadata="' in challenge, f"challenge: {challenge}")
        metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
        with urllib.request.urlopen(metadata_url, timeout=10) as response:
            metadata = json.load(response)
        check(metadata.get("resource") == self.args.url, f"the metadata's resource: {metadata}")
        return f"SDK raised {refused}; 401 with {challenge}; metadata resource {metadata['resource']}"


def canceled_task_state(a2a_url: str, token: str) -> str:
    """The state of the conformance agent's most recent task, read over A2A (HTTP+JSON ListTasks)."""
    request = urllib.request.Request(
        f"{a2a_url}/tasks?pageSize=1", headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        tasks = json.load(response).get("tasks", [])
    return tasks[0]["status"]["state"] if tasks else "no task"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--token", required=True)
    parser.add_argument("--a2a-url", required=True, help="the conformance agent's A2A URL through the gateway")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.token_for_check = args.token
    run = Run(args)
    version = importlib.metadata.version("mcp")
    protocol = "?"
    try:
        async with run.client(args.token) as probe:
            protocol = probe.protocol_version
    except Exception as error:  # reported by the cases below
        print(f"could not connect: {error!r}", file=sys.stderr)
    print(json.dumps({"meta": {"sdk": "mcp (Python)", "version": version, "protocol": protocol}}), flush=True)

    async def case(name: str, body) -> None:
        try:
            with anyio.fail_after(CASE_TIMEOUT_S * 2):
                detail = await body()
            print(json.dumps({"case": name, "ok": True, "detail": detail}), flush=True)
        except Exception as error:  # every failure is the case's verdict
            detail = str(error) if isinstance(error, CaseFailure) else f"{type(error).__name__}: {error}"
            print(json.dumps({"case": name, "ok": False, "detail": detail}), flush=True)

    def connected(body):
        async def run_connected():
            async with run.client(args.token) as client:
                return await body(client)

        return run_connected

    await case("list_tools", connected(run.list_tools))
    await case("call_agentwire_skill", connected(run.call_agentwire_skill))
    await case("call_python_sdk_skill", connected(run.call_python_sdk_skill))
    await case("list_agents", connected(run.list_agents))
    await case("progress", connected(run.progress))
    await case("cancel", connected(run.cancel))
    await case("elicitation", lambda: run.elicitation(lambda **callbacks: run.client(args.token, **callbacks)))
    await case("no_credentials", run.no_credentials)


if __name__ == "__main__":
    anyio.run(main)
