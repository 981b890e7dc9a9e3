// What the MCP clients of interop/mcp-js-v2 and interop/mcp-inspector share: their arguments,
// their checks, the A2A side of the slow call, and the loop that prints one verdict per case.
// Nothing here needs a package: only Node's own fetch.

// How long the slow call runs before its A2A task is ended from outside: past the 2 s after
// which agentwire answers a client of MCP's tasks extension (2026-07-28) with a task.
export const SLOW_CALL_MS = 5_000;
const CASE_TIMEOUT_MS = 60_000;

// `--flag value` pairs (camelCased), and everything after `--stdio` as the command to start.
export function parseArgs(argv) {
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

export class CaseFailure extends Error {}

export function check(condition, detail) {
  if (!condition) throw new CaseFailure(detail);
}

// The tool names a server offers, checked: the four generic tools and one for the conformance
// agent's skill; what the case reports.
export function toolsOffered(names) {
  for (const generic of ["list_agents", "send_message", "get_task", "cancel_task"]) {
    check(names.includes(generic), `no ${generic} tool in ${names}`);
  }
  check(names.some((name) => name.endsWith("conformance")), `no tool for the conformance skill in ${names}`);
  return `${names.length} tools: ${names.join(", ")}`;
}

export const texts = (result) => (result?.content ?? []).filter((block) => block.type === "text").map((block) => block.text);

// The arguments of a send to the conformance agent: `agent` names it where several are offered
// (a gateway's), and is left out on `agentwire serve --mcp`.
export function sendArguments(args, message) {
  return args.agent ? { agent: args.agent, message } : { message };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The slow call's A2A side: after SLOW_CALL_MS, the conformance agent's task whose first message
// is `message` (`tck-cancel …`, which works until canceled) is canceled over A2A (HTTP+JSON at
// `a2aUrl`, with the same token, so as the same caller), which ends the MCP call. Resolves with
// the task's id.
export async function endSlowTaskLater(args, message) {
  await sleep(SLOW_CALL_MS);
  const headers = { "A2A-Version": "1.0", ...(args.token ? { Authorization: `Bearer ${args.token}` } : {}) };
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const listed = await fetch(`${args.a2aUrl}/tasks?status=TASK_STATE_WORKING&pageSize=100`, { headers });
    const { tasks = [] } = await listed.json();
    const task = tasks.find((t) => t.status?.state === "TASK_STATE_WORKING" && t.history?.[0]?.parts?.[0]?.text === message);
    if (task) {
      const canceled = await fetch(`${args.a2aUrl}/tasks/${task.id}:cancel`, { method: "POST", headers });
      check(canceled.ok, `canceling the A2A task ${task.id}: HTTP ${canceled.status}`);
      return task.id;
    }
    await sleep(200);
  }
  throw new CaseFailure(`no working A2A task for '${message}' at ${args.a2aUrl}`);
}

// A message no other call sends, for the slow call's task to be found by.
export const slowMessage = () => `tck-cancel slow-${process.pid}-${Date.now()}`;

// Prints the meta line, then runs each case in order, printing its verdict; exits 0.
export async function runCases(meta, cases) {
  console.log(JSON.stringify({ meta }));
  for (const [name, body] of Object.entries(cases)) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new CaseFailure(`timed out after ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
    });
    try {
      const detail = await Promise.race([body(), timeout]);
      console.log(JSON.stringify({ case: name, ok: true, detail }));
    } catch (error) {
      const detail = error instanceof CaseFailure ? error.message : String(error?.stack ?? error);
      console.log(JSON.stringify({ case: name, ok: false, detail }));
    } finally {
      clearTimeout(timer);
    }
  }
  process.exit(0);
}
