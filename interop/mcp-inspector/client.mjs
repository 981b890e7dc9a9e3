// Interoperability client: calls agentwire's MCP server with the MCP Inspector's command line
// (`inspector --cli`), with its defaults, one Inspector process per request, as a user or a
// script runs it. Its defaults negotiate MCP 2025-11-25 and declare the tasks extension, without
// elicitation.
//
// Usage: node client.mjs --url http://127.0.0.1:PORT/mcp --token TOKEN --a2a-url URL [--agent NAME]
//        node client.mjs --token TOKEN --a2a-url URL [--agent NAME] --stdio COMMAND [ARG...]
//
// The same cases and arguments as interop/mcp-js-v2/client.mjs, whose helpers it shares. Prints
// one meta line, then one JSON line per case: {"case", "ok", "detail"}. Exit status is 0
// whenever every case ran, even if some failed.

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  SLOW_CALL_MS, CaseFailure, check, endSlowTaskLater, parseArgs, runCases, sendArguments, slowMessage, texts, toolsOffered,
} from "../mcp-js-v2/common.mjs";

const args = parseArgs(process.argv.slice(2));
const inspector = fileURLToPath(new URL("./node_modules/@modelcontextprotocol/inspector/", import.meta.url));
const version = JSON.parse(readFileSync(join(inspector, "package.json"), "utf8")).version;
const launcher = join(inspector, "clients/launcher/build/index.js");

// The Inspector keeps a catalog and a secret store under the home directory: a scratch one here.
const home = mkdtempSync(join(tmpdir(), "agentwire-inspector-"));
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
// The target: the URL with the token in a header, or the command in a config file (the way the
// Inspector takes a command whose arguments look like its own options).
let target;
if (args.stdio) {
  const [command, ...rest] = args.stdio;
  const config = join(home, "servers.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { agents: { command, args: [...rest, "--token", args.token] } } }));
  target = ["--config", config, "--server", "agents"];
} else {
  target = [args.url, "--header", `Authorization: Bearer ${args.token}`];
}

// The Inspector's exit status for a tool result with `isError: true`, which it prints as any other.
const TOOL_IS_ERROR = 5;

// One `inspector --cli` run with `options`: what it printed on stdout, as JSON.
function inspect(...options) {
  return new Promise((resolve, reject) => {
    const command = [launcher, "--cli", ...target, ...options];
    execFile(process.execPath, command, { env: { ...process.env, HOME: home }, timeout: 50_000 }, (error, stdout, stderr) => {
      if (error && error.code !== TOOL_IS_ERROR) {
        reject(new CaseFailure(`the Inspector failed (${error.code ?? error.signal}): ${(stderr || stdout).trim().slice(-500)}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new CaseFailure(`the Inspector printed no JSON: ${stdout.trim().slice(0, 300)}`));
      }
    });
  });
}

// `send_message` with `message` (and `agent`, where there are several), as tool arguments.
const callSend = (message) =>
  inspect("--method", "tools/call", "--tool-name", "send_message",
    "--tool-arg", ...Object.entries(sendArguments(args, message)).map(([key, value]) => `${key}=${value}`));

const cases = {
  async list_tools() {
    const { tools = [] } = await inspect("--method", "tools/list");
    const names = tools.map((tool) => tool.name);
    return toolsOffered(names);
  },

  async quick_call() {
    const result = await callSend("tck-artifact-text");
    check(result.isError === false, `the call failed: ${JSON.stringify(result)}`);
    check(JSON.stringify(texts(result)) === '["Generated text content"]', `the answer: ${JSON.stringify(result)}`);
    return `${texts(result)}`;
  },

  async slow_call() {
    const message = slowMessage();
    const started = Date.now();
    const [result, taskId] = await Promise.all([callSend(message), endSlowTaskLater(args, message)]);
    const took = Date.now() - started;
    check(result.resultType !== "task" && result.structuredContent?.state === "CANCELED", `the answer: ${JSON.stringify(result)}`);
    check(result.structuredContent.taskId === taskId, `the answer names ${result.structuredContent.taskId}, not ${taskId}`);
    check(took >= SLOW_CALL_MS, `the call answered after ${took} ms, before its task ended`);
    return `answered after ${took} ms: ${texts(result)}`;
  },

  async input_call() {
    // Without elicitation, the answer is the question, and the task to answer it on.
    const result = await callSend("tck-multi-turn start");
    check(result.resultType !== "task" && result.structuredContent?.state === "INPUT_REQUIRED", `the answer: ${JSON.stringify(result)}`);
    const said = texts(result).join(" ");
    check(said.includes("Please continue; send 'done' to finish"), `the answer does not quote the question: ${said}`);
    return said;
  },
};

await runCases({ sdk: "@modelcontextprotocol/inspector --cli", version, protocol: "2025-11-25" }, cases);
