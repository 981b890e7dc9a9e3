// A hostile web page against a gateway without authentication, in a real browser: Debian's
// Chromium, driven by playwright-core. Part of the hostile-peer kit (docs/ROBUSTNESS.md).
//
//   node cross-site.mjs AGENTWIRE_BINARY OUTPUT_DIR
//
// The user runs `agentwire gateway` on their machine and opens a page of another site. The page
//   - posts registrations to the gateway the ways a page may without asking first (a `text/plain`
//     fetch, a form-encoded fetch, a real HTML form), trying to plant an agent of its own;
//   - is then served under a name of the attacker's that resolves to the gateway's address (DNS
//     rebinding: Chromium's --host-resolver-rules maps evil.example to 127.0.0.1), from where it
//     reads the directory and deletes a registered agent as if it were the gateway's own page.
// Every attempt must fail: the registry keeps only what the user registered. Screenshots of the
// pages are written to OUTPUT_DIR.
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { finish, startAgentwire } from "./agentwire.mjs";

const [binary, output] = process.argv.slice(2);
if (!binary || !output) {
  console.error("usage: node cross-site.mjs AGENTWIRE_BINARY OUTPUT_DIR");
  process.exit(2);
}
mkdirSync(output, { recursive: true });
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const children = [];
const failures = [];

function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

/** Starts `agentwire COMMAND ARGS`; resolves to its base URL once it serves. */
function start(name, command, args) {
  return startAgentwire({ binary, output, children }, name, command, args);
}

/** The attacker's site: one page whose script attacks `gateway`, planting agents that point at `bait`. */
function attackerSite(gateway, bait) {
  const page = `<!doctype html><title>A page of another site</title>
<body><h1>Nothing to see here</h1><pre id="log"></pre>
<form id="form" method="post" action="${gateway}/agents" enctype="text/plain" target="sink">
  <input name='{"url": "${bait}", "name": "planted-form", "token": "' value='"}'>
</form><iframe name="sink" style="display:none"></iframe>
<script>
  const log = (line) => { document.getElementById("log").textContent += line + "\\n"; };
  async function attack() {
    for (const [type, name] of [["text/plain", "planted-plain"], ["application/x-www-form-urlencoded", "planted-urlencoded"]]) {
      try {
        await fetch(${JSON.stringify(gateway)} + "/agents", { method: "POST", mode: "no-cors", headers: { "Content-Type": type }, body: JSON.stringify({ url: ${JSON.stringify(bait)}, name }) });
        log("sent " + type);
      } catch (error) { log("failed " + type + ": " + error); }
    }
    // The form's answer lands in the hidden frame, which the page cannot read either.
    document.querySelector("iframe").addEventListener("load", () => { log("form answered"); window.attackDone = true; });
    document.getElementById("form").submit();
    log("form submitted");
  }
  attack();
</script></body>`;
  return new Promise((resolve) => {
    const server = createServer((request, response) => {
      response.writeHead(200, { "Content-Type": "text/html" });
      response.end(page);
    });
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://evil.example:${server.address().port}/` }));
  });
}

async function listed(gateway) {
  const response = await fetch(`${gateway}/agents`);
  const body = await response.json();
  return (body.agents || []).map((agent) => agent.name);
}

async function run() {
  const agent = await start("agent", "serve", []);
  const bait = await start("bait", "serve", []);
  const gateway = await start("gateway", "gateway", []);
  const registered = await fetch(`${gateway}/agents`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url: agent, name: "victim" }),
  });
  check(registered.status === 201, `the user registers an agent from the command line (${registered.status})`);
  const { server: site, url: siteUrl } = await attackerSite(gateway, bait);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--host-resolver-rules=MAP evil.example 127.0.0.1", "--disable-background-networking"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(siteUrl);
    await page.waitForFunction(() => window.attackDone === true, null, { timeout: 10000 });
    await page.screenshot({ path: join(output, "cross-site-page.png") });
    const names = await listed(gateway);
    check(!names.some((name) => name.startsWith("planted")), `no cross-site post planted an agent (listed: ${names.join(", ")})`);

    // DNS rebinding: the gateway reached under the attacker's name, as the page's own origin.
    const port = new URL(gateway).port;
    const rebound = `http://evil.example:${port}`;
    const opened = await page.goto(`${rebound}/agents`);
    check(opened.status() === 421, `the directory under the attacker's name is refused (${opened.status()})`);
    await page.screenshot({ path: join(output, "cross-site-rebound.png") });
    const deleted = await page.evaluate(async () => (await fetch("/agents/victim", { method: "DELETE" })).status);
    check(deleted === 421, `a delete from the rebound page is refused (${deleted})`);
    const after = await listed(gateway);
    check(after.includes("victim"), `the user's agent is still registered (listed: ${after.join(", ")})`);
  } finally {
    await browser.close();
    site.close();
  }
}

await finish(run, { output, children: children }, failures);
