// Starting the agentwire binary for the browser tests.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Starts `BINARY COMMAND` (`serve` or `gateway`) with `args` on a loopback port it picks, on the
 * memory store unless `args` names one; resolves to its base URL once it serves. The process is
 * pushed onto `children`, for the caller to stop; its log is written to OUTPUT/NAME.log.
 */
export function startAgentwire({ binary, output, children }, name, command, args) {
  return new Promise((resolve, reject) => {
    const store = args.includes("--store") ? [] : ["--store", "memory"];
    const child = spawn(binary, [command, "--http", "127.0.0.1:0", ...store, ...args], {
      env: { ...process.env, RUST_LOG: "info", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      writeFileSync(join(output, `${name}.log`), log);
      const match = /serving(?: a gateway)? address=(\S+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(`http://${match[1]}`);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`${name} exited (${code}):\n${log}`)));
  });
}

/**
 * Runs `run`, then stops every process in `children`; exits 1 naming how many of `failures` there
 * are (a thrown error counts as one), or says that all passed.
 */
export async function finish(run, { output, children }, failures) {
  try {
    await run();
  } catch (error) {
    failures.push(String(error.stack || error));
    console.error(error);
  } finally {
    for (const child of children) child.kill("SIGTERM");
  }
  if (failures.length) {
    console.error(`\n${failures.length} failed`);
    process.exit(1);
  }
  console.log(`\nall passed; screenshots in ${output}`);
}
