// Interoperability client: the official MCP TypeScript SDK (@modelcontextprotocol/sdk, MCP
// 2025-11-25) declaring MCP's tasks extension in its capabilities, as the MCP Inspector does,
// with an elicitation handler: the cases and arguments of interop/mcp-js-v2/client.mjs, whose
// helpers it shares.
//
// Usage: node tasks_client.mjs --url http://127.0.0.1:PORT/mcp --token TOKEN --a2a-url URL [--agent NAME]
//        node tasks_client.mjs --token TOKEN --a2a-url URL [--agent NAME] --stdio COMMAND [ARG...]
//
// Prints one meta line, then one JSON line per case: {"case", "ok", "detail"}. Exit status is 0
// whenever every case ran, even if some failed.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  SLOW_CALL_MS, check, endSlowTaskLater, parseArgs, runCases, sendArguments, slowMessage, texts, toolsOffered,
} from "../mcp-js-v2/common.mjs";

const manifest = new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url);
const version = JSON.parse(readFileSync(manifest, "utf8")).version;
const args = parseArgs(process.argv.slice(2));

async function withClient(body) {
  const asked = [];
  const capabilities = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
  const client = new Client({ name: "agentwire-interop", version: "0.0.0" }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { answer: "done" } };
  });
  let transport;
  if (args.stdio) {
    const [command, ...rest] = args.stdio;
    transport = new StdioClientTransport({ command, args: [...rest, "--token", args.token], stderr: "inherit" });
  } else {
    const headers = { Authorization: `Bearer ${args.token}` };
    transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  }
  await client.connect(transport);
  try {
    return await body(client, asked);
  } finally {
    await client.close();
  }
}

const send = (client, message) => client.callTool({ name: "send_message", arguments: sendArguments(args, message) });

const cases = {
  async list_tools() {
    return withClient(async (client) => {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      return toolsOffered(names);
    });
  },

  async quick_call() {
    return withClient(async (client) => {
      const result = await send(client, "tck-artifact-text");
      check(result.isError === false, `the call failed: ${JSON.stringify(result)}`);
      check(JSON.stringify(texts(result)) === '["Generated text content"]', `the answer: ${JSON.stringify(result)}`);
      return `${texts(result)}`;
    });
  },

  async slow_call() {
    return withClient(async (client) => {
      const message = slowMessage();
      const started = Date.now();
      const [result, taskId] = await Promise.all([send(client, message), endSlowTaskLater(args, message)]);
      const took = Date.now() - started;
      check(result.structuredContent?.state === "CANCELED", `the answer: ${JSON.stringify(result)}`);
      check(result.structuredContent.taskId === taskId, `the answer names ${result.structuredContent.taskId}, not ${taskId}`);
      check(took >= SLOW_CALL_MS, `the call answered after ${took} ms, before its task ended`);
      return `answered after ${took} ms: ${texts(result)}`;
    });
  },

  async input_call() {
    return withClient(async (client, asked) => {
      const result = await send(client, "tck-multi-turn start");
      check(JSON.stringify(asked) === JSON.stringify(["Please continue; send 'done' to finish"]), `the questions asked: ${asked}`);
      check(result.isError === false, `the call failed: ${JSON.stringify(result)}`);
      check(JSON.stringify(texts(result)) === '["Conversation complete"]', `the answer: ${JSON.stringify(result)}`);
      return `asked ${asked}, answered 'done': ${texts(result)}`;
    });
  },
};

await runCases({ sdk: "@modelcontextprotocol/sdk", version, protocol: "2025-11-25" }, cases);
