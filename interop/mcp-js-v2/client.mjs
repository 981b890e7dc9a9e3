// Interoperability client: calls agentwire's MCP server with the MCP TypeScript SDK v2
// (@modelcontextprotocol/client), declaring MCP's tasks extension, in either era:
//
//   --era 2025-11-25  the `initialize` handshake, the extension declared in the client's
//                     capabilities (as the MCP Inspector declares it), an elicitation handler;
//   --era 2026-07-28  requests carrying their own metadata, with @modelcontextprotocol/ext-tasks
//                     driving calls that become tasks (HTTP only: the package's 2026-07-28 task
//                     traffic goes through a request path of the host's, here a plain POST).
//
// Usage: node client.mjs --era ERA --url http://127.0.0.1:PORT/mcp --token TOKEN --a2a-url URL [--agent NAME]
//        node client.mjs --era 2025-11-25 --token TOKEN --a2a-url URL [--agent NAME] --stdio COMMAND [ARG...]
//
// The server offers agentwire's conformance agent: alone (`agentwire serve --mcp`), or as
// `--agent NAME` among others (a gateway's). `--a2a-url` is that agent over A2A, where the slow
// call's task is ended. Prints one meta line, then one JSON line per case: {"case", "ok",
// "detail"}. Exit status is 0 whenever every case ran, even if some failed.

import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import {
  SLOW_CALL_MS, check, endSlowTaskLater, parseArgs, runCases, sendArguments, slowMessage, texts, toolsOffered,
} from "./common.mjs";

const versionOf = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
const args = parseArgs(process.argv.slice(2));
const modern = args.era === "2026-07-28";
if (!modern && args.era !== "2025-11-25") throw new Error(`--era is 2025-11-25 or 2026-07-28, not ${args.era}`);
if (modern && args.stdio) throw new Error("the 2026-07-28 era is run over HTTP only");

const clientInfo = { name: "agentwire-interop", version: "0.0.0" };
const capabilities = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
const authorization = args.token ? { Authorization: `Bearer ${args.token}` } : {};
// The user's answer to the conformance agent's question.
const ANSWER = { action: "accept", content: { answer: "done" } };

// A connected client, and how a tool is called with it: `call(name, arguments)` resolves with
// the call's result and whether it went through an MCP task.
async function connect(asked) {
  const options = { capabilities };
  if (modern) options.versionNegotiation = { mode: { pin: "2026-07-28" } };
  const client = new Client(clientInfo, options);
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    return ANSWER;
  });
  let transport;
  if (args.stdio) {
    const [command, ...rest] = args.stdio;
    transport = new StdioClientTransport({ command, args: [...rest, "--token", args.token], stderr: "inherit" });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers: authorization } });
  }
  await client.connect(transport);
  if (!modern) {
    const call = async (name, toolArguments) => ({ result: await client.callTool({ name, arguments: toolArguments }), task: false });
    return { client, call, close: () => client.close() };
  }
  const session = createTaskSessionFromClient(client, {
    endpointId: "agentwire-interop",
    rawDispatch: post,
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: capabilities },
    onInputRequest: async (request) => {
      asked.push(request.params?.message);
      return ANSWER;
    },
  });
  const call = async (name, toolArguments) => {
    const execution = await session.callTool(name, toolArguments);
    const { outcome } = await execution.settle();
    const result = outcome.status === "completed" ? outcome.result : { outcome: outcome.status };
    return { result, task: execution.kind === "task" };
  };
  return { client, call, close: async () => { await session.close(); await client.close(); } };
}

let nextId = 1_000_000;
// ext-tasks' request path for 2026-07-28 task traffic (`tools/call`, `tasks/*`): the request,
// framed with its metadata by the package, POSTed alone with the headers that revision asks for.
async function post(request, options = {}) {
  const id = nextId++;
  const params = request.params ?? {};
  const headers = {
    ...authorization,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": request.method,
  };
  const name = params.name ?? params.taskId;
  if (typeof name === "string") headers["Mcp-Name"] = name;
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: request.method, params });
  const response = await fetch(args.url, { method: "POST", headers, body, signal: options.signal });
  const text = await response.text();
  const streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
  const messages = streamed
    ? text.split("\n").filter((line) => line.startsWith("data:")).flatMap((line) => {
        try {
          return [JSON.parse(line.slice(5))];
        } catch {
          return [];
        }
      })
    : [JSON.parse(text)];
  const answer = messages.find((message) => message.id === id);
  if (!answer) throw new Error(`no answer to ${request.method} (HTTP ${response.status}): ${text.slice(0, 300)}`);
  return answer.error ? { kind: "error", error: answer.error } : { kind: "result", result: answer.result };
}

async function withClient(body) {
  const asked = [];
  const connected = await connect(asked);
  try {
    return await body(connected, asked);
  } finally {
    await connected.close();
  }
}

const cases = {
  async list_tools() {
    return withClient(async ({ client }) => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      return toolsOffered(names);
    });
  },

  async quick_call() {
    return withClient(async ({ call }) => {
      const { result, task } = await call("send_message", sendArguments(args, "tck-artifact-text"));
      check(!task, "a quick call became a task");
      check(result.isError === false, `the call failed: ${JSON.stringify(result)}`);
      check(JSON.stringify(texts(result)) === '["Generated text content"]', `the answer: ${JSON.stringify(result)}`);
      check(result.structuredContent?.state === "COMPLETED", `task facts: ${JSON.stringify(result.structuredContent)}`);
      return `${texts(result)}`;
    });
  },

  async slow_call() {
    return withClient(async ({ call }) => {
      const message = slowMessage();
      const started = Date.now();
      const ended = endSlowTaskLater(args, message);
      const [{ result, task }, taskId] = await Promise.all([call("send_message", sendArguments(args, message)), ended]);
      const took = Date.now() - started;
      check(took >= SLOW_CALL_MS, `the call answered after ${took} ms, before its task ended`);
      if (modern) {
        check(task, `a ${took} ms call did not become a task: ${JSON.stringify(result)}`);
        check(result.outcome === "cancelled", `the task's outcome: ${JSON.stringify(result)}`);
        return `a task, followed to its end after ${took} ms: cancelled (A2A task ${taskId})`;
      }
      check(result.structuredContent?.state === "CANCELED", `the answer: ${JSON.stringify(result)}`);
      check(result.structuredContent?.taskId === taskId, `the answer names ${result.structuredContent?.taskId}, not ${taskId}`);
      return `answered after ${took} ms: ${texts(result)}`;
    });
  },

  async input_call() {
    return withClient(async ({ call }, asked) => {
      const { result, task } = await call("send_message", sendArguments(args, "tck-multi-turn start"));
      check(JSON.stringify(asked) === JSON.stringify(["Please continue; send 'done' to finish"]), `the questions asked: ${asked}`);
      check(!modern || task, "the question did not come through a task");
      check(result.isError === false, `the call failed: ${JSON.stringify(result)}`);
      check(JSON.stringify(texts(result)) === '["Conversation complete"]', `the answer: ${JSON.stringify(result)}`);
      return `asked ${asked}, answered 'done'${task ? " on the task" : ""}: ${texts(result)}`;
    });
  },
};

const sdk = modern ? "@modelcontextprotocol/client + ext-tasks" : "@modelcontextprotocol/client";
const version = versionOf("@modelcontextprotocol/client") + (modern ? ` + ${versionOf("@modelcontextprotocol/ext-tasks")}` : "");
await runCases({ sdk, version, protocol: args.era }, cases);
