// Interoperability client: calls agentwire's MCP server with the official MCP TypeScript SDK.
//
// Usage: node client.mjs --url http://127.0.0.1:PORT/mcp --token TOKEN --a2a-url URL
//        node client.mjs --token TOKEN --a2a-url URL --stdio COMMAND [ARG...]
//
// The same cases as interop/mcp-python/client.py, against the same gateway (agents `conf` and
// `py`). Prints one meta line, then one JSON line per case: {"case", "ok", "detail"}. Exit status
// is 0 whenever every case ran, even if some failed.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION, McpError } from "@modelcontextprotocol/sdk/types.js";

const CASE_TIMEOUT_MS = 60_000;
const manifest = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
const version = JSON.parse(readFileSync(manifest, "utf8")).version;

function parseArgs(argv) {
  const args = { stdio: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--stdio") {
      args.stdio = argv.slice(i + 1);
      break;
    }
    args[flag.replace(/^--/, "").replace(/-(.)/g, (_, c) => c.toUpperCase())] = argv[++i];
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));

class CaseFailure extends Error {}
function check(condition, detail) {
  if (!condition) throw new CaseFailure(detail);
}
const texts = (result) => result.content.filter((block) => block.type === "text").map((block) => block.text);

async function connect(token, { elicit } = {}) {
  const capabilities = elicit ? { elicitation: {} } : {};
  const client = new Client({ name: "agentwire-interop", version: "0.0.0" }, { capabilities });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  let transport;
  if (args.stdio) {
    const [command, ...rest] = args.stdio;
    transport = new StdioClientTransport({ command, args: token ? [...rest, "--token", token] : rest, stderr: "inherit" });
  } else {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  }
  await client.connect(transport);
  return client;
}

async function withClient(body, options) {
  const client = await connect(args.token, options);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

async function toolNamed(client, prefix) {
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name).filter((name) => name.startsWith(prefix));
  check(names.length === 1, `expected one tool named ${prefix}*, got ${tools.map((t) => t.name)}`);
  return names[0];
}

async function canceledTaskState() {
  const response = await fetch(`${args.a2aUrl}/tasks?pageSize=1`, {
    headers: { Authorization: `Bearer ${args.token}`, "A2A-Version": "1.0" },
  });
  const { tasks = [] } = await response.json();
  return tasks.length ? tasks[0].status.state : "no task";
}

const cases = {
  async list_tools() {
    return withClient(async (client) => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      for (const generic of ["list_agents", "send_message", "get_task", "cancel_task"]) {
        check(names.includes(generic), `no ${generic} tool in ${names}`);
      }
      const skills = tools.filter((tool) => tool.name.startsWith("conf_") || tool.name.startsWith("py_"));
      check(skills.some((t) => t.name.startsWith("conf_")) && skills.some((t) => t.name.startsWith("py_")),
        `expected skill tools of both agents, got ${names}`);
      for (const tool of skills) {
        check(tool.inputSchema.type === "object" && (tool.inputSchema.required ?? []).includes("message"),
          `${tool.name}'s input schema does not require a message`);
        check(Boolean(tool.description), `${tool.name} has no description`);
      }
      return `${names.length} tools: ${names.join(", ")}`;
    });
  },

  async call_agentwire_skill() {
    return withClient(async (client) => {
      const tool = await toolNamed(client, "conf_conformance");
      const result = await client.callTool({ name: tool, arguments: { message: "tck-artifact-text" } });
      check(result.isError === false, `the call failed: ${texts(result)}`);
      check(JSON.stringify(texts(result)) === JSON.stringify(["Generated text content"]), `artifact text: ${texts(result)}`);
      const facts = result.structuredContent ?? {};
      check(facts.state === "COMPLETED" && facts.taskId, `task facts: ${JSON.stringify(facts)}`);
      return `${tool}: ${texts(result)} task ${facts.taskId}`;
    });
  },

  async call_python_sdk_skill() {
    return withClient(async (client) => {
      const tool = await toolNamed(client, "py_tck");
      const result = await client.callTool({ name: tool, arguments: { message: "hello from an MCP client" } });
      check(result.isError === false, `the call failed: ${texts(result)}`);
      check(texts(result).some((text) => text.includes("hello from an MCP client")), `the agent's answer: ${texts(result)}`);
      return `${tool}: ${texts(result)}`;
    });
  },

  async list_agents() {
    return withClient(async (client) => {
      const found = await client.callTool({ name: "list_agents", arguments: { query: "python" } });
      const agents = (found.structuredContent?.agents ?? []).map((agent) => agent.name);
      check(JSON.stringify(agents) === '["py"]', `a search for 'python' found ${agents}`);
      const everyone = await client.callTool({ name: "list_agents", arguments: {} });
      const names = (everyone.structuredContent?.agents ?? []).map((agent) => agent.name).sort();
      check(JSON.stringify(names) === '["conf","py"]', `the listing: ${names}`);
      return `search: ${agents}; all: ${names}`;
    });
  },

  async progress() {
    return withClient(async (client) => {
      const seen = [];
      const result = await client.callTool(
        { name: "send_message", arguments: { agent: "conf", message: "tck-long-running" } },
        undefined,
        { onprogress: (progress) => seen.push(progress) },
      );
      check(result.isError === false, `the call failed: ${texts(result)}`);
      check(JSON.stringify(texts(result)) === '["Long-running task finished"]', `the answer: ${texts(result)}`);
      check(seen.length >= 2, `progress notifications: ${JSON.stringify(seen)}`);
      check(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress), `progress went back: ${JSON.stringify(seen)}`);
      check(seen.some((p) => (p.message ?? "").startsWith("WORKING")), `no WORKING progress: ${JSON.stringify(seen)}`);
      return `${seen.length} notifications: ${seen.map((p) => p.message).join(" | ")}`;
    });
  },

  async cancel() {
    return withClient(async (client) => {
      const abort = new AbortController();
      let working;
      const started = new Promise((resolve) => (working = resolve));
      const call = client.callTool(
        { name: "send_message", arguments: { agent: "conf", message: "tck-cancel please" } },
        undefined,
        { signal: abort.signal, onprogress: (p) => (p.message ?? "").startsWith("WORKING") && working() },
      );
      const outcome = call.then((result) => ({ result }), (error) => ({ error }));
      await started;
      abort.abort("the user stopped it");
      const { result, error } = await outcome;
      check(result === undefined && error, `the call ended before it was canceled: ${JSON.stringify(result)}`);
      const deadline = Date.now() + 30_000;
      let state;
      while (Date.now() < deadline) {
        state = await canceledTaskState();
        if (state === "TASK_STATE_CANCELED") return "the A2A task ended CANCELED";
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new CaseFailure(`the A2A task did not end CANCELED: ${state}`);
    });
  },

  async elicitation() {
    const asked = [];
    const elicit = async (params) => {
      asked.push(params.message);
      return { action: "accept", content: { answer: "done" } };
    };
    return withClient(async (client) => {
      const result = await client.callTool({ name: "send_message", arguments: { agent: "conf", message: "tck-multi-turn start" } });
      check(JSON.stringify(asked) === JSON.stringify(["Please continue; send 'done' to finish"]), `the questions asked: ${asked}`);
      check(result.isError === false, `the call failed: ${texts(result)}`);
      check(JSON.stringify(texts(result)) === '["Conversation complete"]', `the answer: ${texts(result)}`);
      return `asked ${asked}, answered 'done': ${texts(result)}`;
    }, { elicit });
  },

  async no_credentials() {
    if (args.stdio) {
      const client = await connect(null);
      try {
        const tool = await toolNamed(client, "conf_conformance");
        try {
          const result = await client.callTool({ name: tool, arguments: { message: "tck-artifact-text" } });
          throw new CaseFailure(`a call without credentials answered: ${texts(result)}`);
        } catch (error) {
          if (error instanceof CaseFailure) throw error;
          check(error instanceof McpError && error.message.includes("credentials"), `refused with: ${error}`);
          return `refused: ${error.message}`;
        }
      } finally {
        await client.close();
      }
    }
    try {
      const client = await connect(null);
      await client.close();
    } catch (error) {
      const response = await fetch(args.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      check(response.status === 401, `status ${response.status}`);
      const challenge = response.headers.get("www-authenticate") ?? "";
      const match = /resource_metadata="([^"]+)"/.exec(challenge);
      check(match, `challenge: ${challenge}`);
      const metadata = await (await fetch(match[1])).json();
      check(metadata.resource === args.url, `the metadata's resource: ${JSON.stringify(metadata)}`);
      return `SDK raised ${error.constructor.name}; 401 with ${challenge}`;
    }
    throw new CaseFailure("a client without credentials connected");
  },
};

let protocol = "?";
try {
  const probe = await connect(args.token);
  // The HTTP transport records the version negotiated; over stdio it is the SDK's latest, which
  // the server accepts.
  protocol = probe.transport?.protocolVersion ?? LATEST_PROTOCOL_VERSION;
  await probe.close();
} catch (error) {
  console.error(`could not connect: ${error}`);
}
console.log(JSON.stringify({ meta: { sdk: "@modelcontextprotocol/sdk", version, protocol } }));
for (const [name, body] of Object.entries(cases)) {
  try {
    const detail = await Promise.race([
      body(),
      new Promise((_, reject) => setTimeout(() => reject(new CaseFailure(`timed out after ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS)),
    ]);
    console.log(JSON.stringify({ case: name, ok: true, detail }));
  } catch (error) {
    console.log(JSON.stringify({ case: name, ok: false, detail: error instanceof CaseFailure ? error.message : String(error?.stack ?? error) }));
  }
}
process.exit(0);
