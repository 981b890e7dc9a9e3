"""An MCP server made with the official MCP Python SDK, for agentwire's MCP client tests.

Usage: server.py stdio
       server.py http PORT       (streamable HTTP at http://127.0.0.1:PORT/mcp; prints READY URL)

Tools: `add` (two numbers, their sum as text and as structured content), `shout` (a text in
capitals), `fail` (always an error result).
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("agentwire-test-tools")


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(reason)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        port = int(sys.argv[2])
        print(f"READY http://127.0.0.1:{port}/mcp", flush=True)
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
