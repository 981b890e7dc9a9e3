// A hostile A2A agent for the console's browser test: every task it completes carries artifacts
// made to run script in the console's origin (an HTML file whose name holds a control character,
// `javascript:` and `data:` file URLs). JSON-RPC, v1.0, on a loopback port; prints its URL.
//
//   node hostile-agent.mjs
import { createServer } from "node:http";

const html = Buffer.from("<script>alert('download')</script>").toString("base64");
const tasks = new Map();

function hostileTask(message) {
  const id = crypto.randomUUID();
  const contextId = message.contextId || crypto.randomUUID();
  const task = {
    id,
    contextId,
    status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
    artifacts: [{
      artifactId: "hostile",
      name: "hostile",
      parts: [
        { raw: html, filename: "a\u0001b.html", mediaType: "text/html" },
        { url: "javascript:alert(document.domain)", filename: "script.html", mediaType: "text/html" },
        { url: "data:text/html,<script>alert(1)</script>", filename: "data.html", mediaType: "text/html" },
        { url: " JavaScript:alert(2)", filename: "spaced.html", mediaType: "text/html" },
      ],
    }],
    history: [{ ...message, taskId: id, contextId }],
  };
  tasks.set(id, task);
  return task;
}

const server = createServer((request, response) => {
  const url = `http://127.0.0.1:${server.address().port}`;
  if (request.method === "GET" && request.url.startsWith("/.well-known/agent")) {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({
      name: "Hostile",
      description: "Writes artifacts meant to script the console <img src=x onerror=alert('card')>",
      version: "1.0.0",
      supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: false },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/html"],
      skills: [{ id: "hostile", name: "Hostile <script>alert('skill')</script>", description: "Hostile artifacts", tags: ["test"] }],
    }));
    return;
  }
  let body = "";
  request.on("data", (chunk) => { body += chunk; });
  request.on("end", () => {
    let call;
    try { call = JSON.parse(body); } catch { response.statusCode = 400; response.end(); return; }
    const answer = (result) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    };
    const params = call.params || {};
    switch (call.method) {
      case "SendMessage": return answer({ task: hostileTask(params.message) });
      case "GetTask": return answer(tasks.get(params.id));
      case "ListTasks": return answer({ tasks: [...tasks.values()], nextPageToken: "", pageSize: 50, totalSize: tasks.size });
      default:
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, error: { code: -32004, message: "unsupported" } }));
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(`hostile agent at http://127.0.0.1:${server.address().port}`));
