// The web console in a real browser: Debian's Chromium, driven by playwright-core.
//
//   node console.mjs AGENTWIRE_BINARY OUTPUT_DIR
//
// Starts `agentwire serve --console` on loopback ports (one server with two principals, one
// without authentication), creates tasks over the API, then checks what a person sees: every
// page loads without a console error, the task list shows the API's tasks and follows new ones
// live, a message sent from the page streams to its completed task, and one principal never
// sees the other's tasks, and a hostile agent's artifacts run no script in the console's origin.
// With AGENTWIRE_TEST_POSTGRES_URL (a cluster scripts/test starts), two instances on one
// PostgreSQL database: a list open on one shows a task sent through the other.
// Screenshots of each page are written to OUTPUT_DIR.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { finish, startAgentwire } from "./agentwire.mjs";

const [binary, output] = process.argv.slice(2);
if (!binary || !output) {
  console.error("usage: node console.mjs AGENTWIRE_BINARY OUTPUT_DIR");
  process.exit(2);
}
mkdirSync(output, { recursive: true });
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const TOKENS = { alice: "alice-console-token", bob: "bob-console-token" };
const servers = [];

/** Starts `agentwire serve` (or `gateway`) with `args`; resolves to its base URL once it serves. */
function serve(name, args, command = "serve") {
  return startAgentwire({ binary, output, children: servers }, name, command, args);
}

/**
 * An identity provider made with the binary: a key (`agentwire keygen`) whose public JWK Set is in
 * OUTPUT/idp.jwks, and `token(subject, audience, actors)` signing JWTs with it (`agentwire jwt`).
 */
function identityProvider() {
  const key = join(output, "idp.pem");
  spawnSync("rm", ["-f", key]);
  const made = spawnSync(binary, ["keygen", key], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`agentwire keygen: ${made.stderr}`);
  const jwks = join(output, "idp.jwks");
  writeFileSync(jwks, `{"keys":[${made.stdout.trim().split("\n").pop()}]}`);
  const token = (subject, audience, actors = []) => {
    const args = ["jwt", "--key", key, "--issuer", "https://idp.test", "--audience", audience, "--subject", subject];
    const minted = spawnSync(binary, [...args, ...actors.flatMap((actor) => ["--actor", actor])], { encoding: "utf8" });
    if (minted.status !== 0) throw new Error(`agentwire jwt: ${minted.stderr}`);
    return minted.stdout.trim();
  };
  return { jwks, token };
}

/** Starts the hostile agent (hostile-agent.mjs); resolves to its URL. */
function hostileAgent() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "hostile-agent.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
    servers.push(child);
    child.stdout.on("data", (chunk) => {
      const match = /at (http:\S+)/.exec(String(chunk));
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`the hostile agent exited (${code})`)));
  });
}

/**
 * An OpenAI-compatible model server of the simplest kind: every chat completion streams one
 * sentence and reports 7 input and 5 output tokens. Resolves to its base URL.
 */
function stubModel() {
  const chunk = (fields) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "stub", ...fields })}\n\n`;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.url.endsWith("/models")) {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ object: "list", data: [{ id: "stub", object: "model" }] }));
        return;
      }
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write(chunk({ choices: [{ index: 0, delta: { content: "Hello from the stub." }, finish_reason: "stop" }] }));
      response.write(chunk({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } }));
      response.end("data: [DONE]\n\n");
    });
  });
  servers.push({ kill: () => server.close() });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}/v1`)));
}

/** Sends `text` over JSON-RPC to the agent at `url` as the holder of `token`; resolves to the task. */
async function send(url, token, text) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } },
    }),
  });
  const body = await response.json();
  if (!body.result?.task?.id) throw new Error(`SendMessage: ${JSON.stringify(body)}`);
  return body.result.task;
}

/** A fresh database in the cluster `url` names, as a URL. */
function freshDatabase(url, name) {
  const database = `${name}_${process.pid}_${Date.now()}`;
  const created = spawnSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-c", `CREATE DATABASE ${database}`], { encoding: "utf8" });
  if (created.status !== 0) throw new Error(`could not create ${database}: ${created.stderr}`);
  return `${url.slice(0, url.lastIndexOf("/"))}/${database}`;
}

const failures = [];
function check(condition, what) {
  console.log(`${condition ? "ok  " : "FAIL"} ${what}`);
  if (!condition) failures.push(what);
}

/** A page that records its console errors and uncaught exceptions into `errors`. */
async function openPage(context, errors) {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${error.message}`));
  // No page of the console ever opens a dialog: one would be an agent's script running.
  page.on("dialog", async (dialog) => {
    errors.push(`${page.url()}: a script opened a dialog (${dialog.message()})`);
    await dialog.dismiss();
  });
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.hostname !== "127.0.0.1") errors.push(`a request left the console: ${request.url()}`);
  });
  return page;
}

/** Runs `navigate`, a load whose error status is the point: the browser's report of it is no fault. */
async function expectingRefusal(errors, navigate) {
  const before = errors.length;
  const result = await navigate();
  const reported = errors.splice(before);
  errors.push(...reported.filter((error) => !/Failed to load resource: the server responded with a status of 40[14]/.test(error)));
  return result;
}

async function shot(page, name) {
  await page.screenshot({ path: join(output, `${name}.png`), fullPage: true });
}

async function logIn(page, base, token) {
  await page.goto(`${base}/console/login`);
  await page.fill("#token", token);
  await Promise.all([page.waitForURL(`${base}/console/tasks`), page.click("button[type=submit]")]);
}

async function run() {
  const authenticated = await serve("authenticated", [
    "--agent", "echo", "--console", "--auth", `bearer:alice=${TOKENS.alice},bob=${TOKENS.bob}`,
  ]);
  const open = await serve("loopback", ["--agent", "conformance", "--console"]);
  const alices = [await send(`${authenticated}/`, TOKENS.alice, "first of alice"), await send(`${authenticated}/`, TOKENS.alice, "second of alice")];
  const bobs = await send(`${authenticated}/`, TOKENS.bob, "bob's own task");

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  console.log(`chromium ${browser.version()}`);
  const errors = [];
  try {
    // Without credentials the tasks are behind the login form.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await openPage(context, errors);
    const denied = await expectingRefusal(errors, () => page.goto(`${authenticated}/console/tasks`));
    check(denied.status() === 401 && (await page.isVisible("#token")), "the task list asks a caller without credentials to log in");
    await shot(page, "login");

    // The card is public.
    await page.goto(`${authenticated}/console`);
    check((await page.textContent("h1")).includes("Echo"), "the card page names the agent");
    check(!(await page.textContent("#interfaces ~ .scroll")).includes("Tenant"), "no Tenant column when no interface names one");
    check((await page.textContent("#signature")).includes("not signed"), "the card page says the card is not signed");
    await shot(page, "card-v1");
    await page.click("text=v0.3 (combined)");
    await page.waitForURL(/form=v0\.3/);
    const combined = JSON.parse(await page.textContent("pre.json"));
    check(typeof combined.url === "string" && combined.protocolVersion === "0.3.0", "the v0.3 view shows the combined card's url and protocolVersion");
    await shot(page, "card-v03");

    // Alice sees her tasks, not Bob's, and new ones as they come.
    await logIn(page, authenticated, TOKENS.alice);
    const rows = () => page.textContent("#task-rows");
    const listed = await rows();
    check(alices.every((task) => listed.includes(task.id)), "the task list shows the tasks created over the API");
    check(!listed.includes(bobs.id), "the task list never shows another principal's task");
    await page.waitForSelector("#live-status:text('live')", { timeout: 5000 });
    const third = await send(`${authenticated}/`, TOKENS.alice, "third of alice, sent while the list is open");
    await page.waitForSelector(`#task-rows >> text=${third.id}`, { timeout: 10000 });
    check(true, "the open task list shows a task created meanwhile, without a reload");
    check(!(await rows()).includes(bobs.id), "the live list never shows another principal's task");
    await shot(page, "tasks");

    // A task: its timeline, artifacts and history.
    await page.click(`text=${alices[0].id}`);
    await page.waitForURL(new RegExp(`/console/tasks/${alices[0].id}$`));
    const timeline = await page.textContent("#entries");
    check(/status/.test(timeline) && (await page.textContent("main")).includes("first of alice"), "the task page shows the timeline and the history");
    check((await page.locator("p.caller").count()) === 0, "a task its caller asked for directly names no one acting for her");
    await shot(page, "task");

    // A task asked for through another party (a token exchanged by a gateway, `act`) says who
    // asked, and through whom.
    const idp = identityProvider();
    const verifying = await serve("jwt", ["--agent", "echo", "--console", "--auth", "jwt:https://idp.test", "--jwks", idp.jwks, "--audience", "console-agent"]);
    const delegated = idp.token("alice", "console-agent", ["gateway"]);
    const throughGateway = await send(`${verifying}/`, delegated, "alice's, through the gateway");
    // In a context of its own: the console's cookie is the host's, whatever its port.
    const jwtContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const jwtPage = await openPage(jwtContext, errors);
    await logIn(jwtPage, verifying, delegated);
    await jwtPage.goto(`${verifying}/console/tasks/${throughGateway.id}`);
    const caller = (await jwtPage.textContent("p.caller")).replace(/\s+/g, " ").trim();
    check(caller === "Asked by https://idp.test#alice through gateway", `the task page says who asked, and through whom (${caller})`);
    await shot(jwtPage, "task-delegated");
    await jwtContext.close();

    // Another principal's task is not found.
    const foreign = await expectingRefusal(errors, () => page.goto(`${authenticated}/console/tasks/${bobs.id}`));
    check(foreign.status() === 404, "another principal's task page is not found");

    // A message sent from the page streams to its completed task.
    await page.goto(`${authenticated}/console/send`);
    await page.fill("#text", "hello from the browser");
    await page.setInputFiles("#file", { name: "note.txt", mimeType: "text/plain", buffer: Buffer.from("a file from the browser\n") });
    await page.click("button[type=submit]");
    await page.waitForSelector("#outcome a", { timeout: 15000 });
    const outcome = await page.textContent("#outcome");
    check(outcome.includes("completed"), `the sent message's stream ends on the completed task (${outcome.trim()})`);
    check((await page.locator("#stream tr").count()) >= 2, "the stream shows each event as it comes");
    await shot(page, "send");
    await page.click("#outcome a");
    await page.waitForURL(/\/console\/tasks\/[^/]+$/);
    check((await page.textContent("main")).includes("hello from the browser"), "the sent task's page shows the message");
    check((await page.textContent("main")).includes("note.txt"), "the sent task's history shows the file");
    await shot(page, "task-sent");

    // Bob sees his task alone.
    const bobContext = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const phone = await openPage(bobContext, errors);
    await logIn(phone, authenticated, TOKENS.bob);
    const bobRows = await phone.textContent("#task-rows");
    check(bobRows.includes(bobs.id) && !alices.concat([third]).some((task) => bobRows.includes(task.id)), "a second principal sees its own tasks and none of the first's");
    const sideways = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(sideways <= 0, `the task list is one column on a phone, with nothing to scroll sideways (${sideways} px over)`);
    await shot(phone, "tasks-phone");

    // Without authentication the console is served on loopback, and the form is usable by keyboard.
    const local = await openPage(context, errors);
    await local.goto(`${open}/console/send`);
    await local.focus("#text");
    await local.keyboard.type("hello");
    // Tab through the form to its button, then press it.
    for (let step = 0; step < 10; step++) {
      await local.keyboard.press("Tab");
      if (await local.evaluate(() => document.activeElement?.type === "submit")) break;
    }
    await local.keyboard.press("Enter");
    await local.waitForSelector("#outcome a", { timeout: 15000 });
    check((await local.textContent("#outcome")).length > 0, "a server without authentication serves the console on loopback, and a keyboard can send");
    await shot(local, "send-loopback");
    await local.goto(`${open}/console/tasks`);
    await shot(local, "tasks-loopback");

    // Artifacts by kind: a file downloads, data is a tree.
    const withFile = await send(`${open}/`, null, "tck-artifact-file");
    await local.goto(`${open}/console/tasks/${withFile.id}`);
    const times = await local.locator("#entries tr").evaluateAll((rows) => rows.map((row) => row.cells[1].textContent.trim()));
    check(times.every((time) => time.length > 0), `every timeline row says when, or that its event carries no time (${times.join(" | ")})`);
    const [file] = await Promise.all([local.waitForEvent("download"), local.click("#artifacts ~ .artifact a[download]")]);
    check(file.suggestedFilename() === "output.txt" && readFileSync(await file.path(), "utf8") === "Generated file content", "a file artifact downloads with its name and content");
    await shot(local, "task-file");
    const withData = await send(`${open}/`, null, "tck-artifact-data");
    await local.goto(`${open}/console/tasks/${withData.id}`);
    const tree = await local.textContent("#artifacts ~ .artifact details.tree");
    check(tree.includes("key") && tree.includes("\"value\"") && tree.includes("42"), "a data artifact shows as a JSON tree");
    await shot(local, "task-data");

    // A streamed answer in pieces reads as one text, in the form's stream and on the task's page.
    await local.goto(`${open}/console/send`);
    await local.fill("#text", "tck-stream-chunked");
    await local.click("#send button[type=submit]");
    await local.waitForSelector("#outcome a", { timeout: 15000 });
    const artifactRows = (rows) => rows.map((row) => [row.cells[2].textContent.trim(), row.querySelector("pre.text")?.textContent]);
    const streamed = await local.locator("#stream tr[data-artifact]").evaluateAll(artifactRows);
    check(JSON.stringify(streamed) === JSON.stringify([["artifact, 2 pieces", "chunk-1 chunk-2"]]), `a streamed artifact's pieces join one row as they come (${JSON.stringify(streamed)})`);
    await shot(local, "stream-pieces");
    await local.click("#outcome a");
    await local.waitForSelector("#entries tr", { timeout: 5000 });
    const logged = await local.locator("#entries tr[data-artifact]").evaluateAll(artifactRows);
    check(JSON.stringify(logged) === JSON.stringify([["artifact, 2 pieces", "chunk-1 chunk-2"]]), `the task's timeline joins them too (${JSON.stringify(logged)})`);

    // A task that waits for input: its page follows it live, and a reply from the page ends it.
    const waiting = await send(`${open}/`, null, "tck-multi-turn start");
    await local.goto(`${open}/console/tasks/${waiting.id}`);
    await local.waitForSelector("#entries tr", { timeout: 5000 });
    check((await local.textContent("main")).includes("input required"), "a task waiting for input shows its state and its live timeline");
    const reply = local.locator("a.button", { hasText: "Reply" });
    const cancel = local.locator("button", { hasText: "Cancel" });
    const looks = (locator) => locator.evaluate((element) => getComputedStyle(element).backgroundColor);
    check((await looks(reply)) !== (await looks(cancel)), "Cancel does not look like Reply");
    await shot(local, "task-waiting");
    await local.click("text=Reply to this task");
    const asked = await local.textContent("main");
    check(asked.includes("The agent asked") && asked.includes("send 'done' to finish"), "the reply form shows the question it answers");
    const idWidth = await local.locator("#task").evaluate((input) => input.scrollWidth <= input.clientWidth);
    check(idWidth, "the reply form's task field shows the whole id");
    await shot(local, "send-reply");
    await local.fill("#text", "done");
    await local.click("button[type=submit]");
    await local.waitForSelector("#outcome a", { timeout: 15000 });
    check((await local.textContent("#outcome")).includes("completed"), "a reply sent from the page continues the task to completed");
    check((await local.inputValue("#text")) === "", "the form is cleared once sent, so a second click sends nothing again");

    // A hostile agent behind a gateway: its artifacts run no script in the console's origin.
    const hostile = await serve("hostile-gateway", ["--console", "--upstream", `hostile=${await hostileAgent()}`], "gateway");
    const planted = await send(`${hostile}/agents/hostile`, null, "show me");
    const taskPage = await local.goto(`${hostile}/agents/hostile/console/tasks/${planted.id}`);
    const policy = taskPage.headers()["content-security-policy"] || "";
    check(policy.includes("default-src 'self'") && policy.includes("frame-ancestors 'none'"), `the task page carries a content security policy (${policy})`);
    const scriptLinks = await local.locator("a[href^='javascript:' i], a[href^='data:' i], a[href*='script:' i]").count();
    check(scriptLinks === 0, "an agent's javascript: and data: file URLs are shown as text, not links");
    check((await local.textContent("#artifacts ~ .artifact")).includes("javascript:alert(document.domain)"), "the script URL is shown, as text");
    await shot(local, "task-hostile");
    const [html] = await Promise.all([local.waitForEvent("download"), local.click("#artifacts ~ .artifact a[download]")]);
    check(html.suggestedFilename() === "ab.html", `an agent's HTML file downloads, its name without the control character (${html.suggestedFilename()})`);
    check(local.url().endsWith(`/console/tasks/${planted.id}`), "the HTML file is not opened in the console");
    const direct = await local.request.get(`${hostile}/agents/hostile/console/tasks/${planted.id}/artifacts/hostile/0`);
    check(direct.headers()["content-type"] === "application/octet-stream" && direct.headers()["content-disposition"].startsWith("attachment")
      && direct.headers()["content-security-policy"] === "sandbox", "the HTML file is served as an attachment of bytes, sandboxed");
    const redirect = await local.request.get(`${hostile}/agents/hostile/console/tasks/${planted.id}/artifacts/hostile/1`, { maxRedirects: 0 });
    check(!String(redirect.headers().location || "").startsWith("javascript:"), "the download route does not redirect to a script URL");

    // A gateway with two mounted agents: a page lists them, and each has a console of its own.
    const gateway = await serve("gateway", ["--console", "--upstream", `first=${open}`, "--upstream", `second=${authenticated}`,
      "--upstream-token", TOKENS.alice], "gateway");
    const relayed = await send(`${gateway}/agents/first`, null, "tck-complete-task");
    await local.goto(`${gateway}/console`);
    const listing = await local.textContent("main");
    check(listing.includes("first") && listing.includes("second") && listing.includes("Echo"), "a gateway's console lists its mounted agents");
    await shot(local, "gateway-agents");
    await local.click("h2 >> text=Echo");
    await local.waitForURL(`${gateway}/agents/second/console`);
    check((await local.textContent("h1")).includes("Echo"), "a mounted agent's console shows its card");
    await local.goto(`${gateway}/agents/first/console/tasks`);
    await local.waitForSelector(`#task-rows >> text=${relayed.id}`, { timeout: 5000 });
    check(true, "a mounted agent's task list shows the tasks sent through the gateway");
    check((await local.textContent("header")).includes("first"), "a mounted agent's pages name the agent");
    await local.click(`text=${relayed.id}`);
    await local.waitForURL(new RegExp(`/agents/first/console/tasks/${relayed.id}$`));
    check((await local.textContent("main")).includes("Hello from TCK"), "a mounted agent's task page shows the task");
    const submitted = await local.locator("#entries .badge", { hasText: "submitted" }).count();
    check(submitted === 1, `a mirrored task shows "submitted" once (${submitted})`);
    await shot(local, "gateway-task");
    await local.click("header >> text=All agents");
    await local.waitForURL(`${gateway}/console`);
    check(true, "a mounted agent's pages link back to the list of agents");
    check(readFileSync(join(output, "gateway.log"), "utf8").includes("serving the console"), "gateway --console logs the console's URL");

    // The registry: agents registered while the gateway runs are listed with their health, last
    // check and signature, and searched from the page; a hostile card is shown as text.
    const register = async (body) => {
      const response = await fetch(`${gateway}/agents`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      if (response.status !== 201) throw new Error(`registering ${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
    };
    await register({ url: await hostileAgent(), name: "hostile" });
    await register({ url: "http://127.0.0.1:9", name: "down" });
    await local.goto(`${gateway}/console`);
    const registry = await local.textContent("main");
    check(registry.includes("hostile") && registry.includes("down") && registry.includes("first"), "the registry page lists the registered agents beside the mounted ones");
    check((await local.locator("article", { hasText: "down" }).locator(".unhealthy").count()) === 1, "an agent that does not answer is marked unhealthy");
    check((await local.locator("article", { hasText: "Echo" }).locator(".healthy").count()) === 1, "an agent that answers is marked healthy");
    check(registry.includes("last checked") && registry.includes("signature unsigned"), "each agent shows its last check and its signature");
    const checkedTimes = await local.locator("article time").allTextContents();
    check(checkedTimes.length > 0 && checkedTimes.every((time) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? UTC$/.test(time)), `the agents' times read as the tasks' do (${checkedTimes.join(" | ")})`);
    check(registry.includes("<script>alert('skill')</script>"), "a card's markup is shown as text");
    check((await local.locator("main img").count()) === 0, "a card's markup makes no element");
    await shot(local, "gateway-registry");
    await local.fill("#q", "hostile");
    await Promise.all([local.waitForURL(/\/console\/?\?q=hostile$/), local.click("form.search button")]);
    const found = await local.textContent("main");
    check(found.includes("hostile") && !found.includes("Echo"), "the search box finds an agent by its card");
    check((await local.inputValue("#q")) === "hostile", "the search box keeps what was searched");
    await shot(local, "gateway-registry-search");

    // A model agent's usage page: what each caller spent, and the budgets (each task spends 12
    // tokens of 100).
    const model = await stubModel();
    const metered = await serve("usage", ["--agent", "openai", "--base-url", model, "--model", "stub", "--console",
      "--metrics", "--budget", "tokens=100,tool-rounds=5,window=366d"]);
    for (const text of ["hello", "again", "once more"]) await send(`${metered}/`, null, text);
    await local.goto(`${metered}/console/usage`);
    const usage = await local.textContent("main");
    check(usage.includes("Every caller's"), "the usage page shows a loopback console everyone's usage");
    check(/\(anonymous\)\s*21\s*15\s*3\s*0\s*3/.test(usage), `the usage page sums the caller's tasks: ${usage}`);
    check(/principal:\(anonymous\)\s*36 \/ 100\s*0 \/ 5/.test(usage), "the usage page shows what was spent of the budget");
    await shot(local, "usage");

    // The same pages on a phone: one column, nothing to scroll sideways.
    const phoneContext = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const small = await openPage(phoneContext, errors);
    const asking = await send(`${open}/`, null, "tck-multi-turn phone");
    for (const [name, url] of [
      ["task-waiting-phone", `${open}/console/tasks/${asking.id}`],
      ["send-reply-phone", `${open}/console/send?task=${asking.id}&context=${asking.contextId}`],
      ["gateway-agents-phone", `${gateway}/console`],
      ["gateway-registry-search-phone", `${gateway}/console?q=hostile`],
      ["gateway-task-phone", `${gateway}/agents/first/console/tasks/${relayed.id}`],
    ]) {
      await small.goto(url);
      const over = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(over <= 0, `${name}: nothing to scroll sideways on a phone (${over} px over)`);
      await shot(small, name);
    }

    // Two instances on one PostgreSQL database: the list open on one shows, within 2 s, a task
    // sent through the other.
    const cluster = process.env.AGENTWIRE_TEST_POSTGRES_URL;
    if (cluster) {
      const database = freshDatabase(cluster, "console_shared");
      const shared = ["--agent", "echo", "--console", "--store", database, "--lease", "2"];
      const [here, there] = [await serve("shared-1", shared), await serve("shared-2", shared)];
      await local.goto(`${here}/console/tasks`);
      await local.waitForSelector("#live-status:text('live')", { timeout: 5000 });
      const sentAt = Date.now();
      const elsewhere = await send(`${there}/`, null, "sent through the other instance");
      await local.waitForSelector(`#task-rows >> text=${elsewhere.id}`, { timeout: 5000 });
      const took = Date.now() - sentAt;
      check(took <= 2000, `a list open on one instance shows a task sent through another within 2 s (${took} ms)`);
      await local.waitForSelector("#task-count:text('1')", { timeout: 2000 });
      check(true, "the live list's count follows its rows");
      await shot(local, "tasks-shared-store");
    } else if (process.env.CI) {
      check(false, "CI runs need AGENTWIRE_TEST_POSTGRES_URL for the shared-store console test");
    } else {
      console.log("skip the shared-store console test: AGENTWIRE_TEST_POSTGRES_URL is not set");
    }
  } finally {
    await browser.close();
  }
  check(errors.length === 0, `no console errors and no request off the console (${errors.join("; ")})`);
}

await finish(run, { output, children: servers }, failures);
