#!/usr/bin/env python3
"""Where two kinds of code may be written, checked in the code of the crates and examples
(test code aside: tests/ directories, tests.rs files, `#[cfg(test)]` modules and the
agentwire-test crate). Prints what is out of place, and exits 1 if anything is.

- A task started with `tokio::spawn` is detached: nothing waits for it or stops it. Code that
  starts tasks owns them (a TaskTracker, a JoinSet, a handle it aborts); a detached task is
  written only where it ends by itself, and the list below says why each one does.
- The operation layers (spans, metrics, authentication, quotas, the tenant check) are put in
  order by `App` alone (ARCHITECTURE.md); they are named only in app.rs, in their own modules,
  and where the HTTP routes check a tenant.

    python3 scripts/placement.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Files that may start a detached task, and why each of those tasks ends by itself.
DETACHED_TASKS = {
    "crates/agentwire-cli/src/model.rs": "the model server's check at start ends with its answer or its timeout",
    "crates/agentwire-cli/src/serve.rs": "the stop signal's watcher lives as long as the process",
    "crates/agentwire-gateway/src/registry/mod.rs": "a registry's checks hold it weakly or end with one agent's check",
    "crates/agentwire-gateway/src/upstream.rs": "an agent's retries hold it weakly, and end once it is dropped",
    "crates/agentwire-gateway/src/usage.rs": "a turn's budget charge ends with its one store write, awaited by the answer",
    "crates/agentwire-server/src/grpc/health.rs": "a health watch ends when its watcher goes",
    "crates/agentwire-server/src/auth/jwt.rs": "the key refresh holds the keys weakly, and ends once they are dropped",
    "crates/agentwire-server/src/server.rs": "the listeners beside the main one stop with it, even when it is dropped",
    "crates/agentwire-server/src/console/live.rs": "a live list's producer ends when its page goes",
    "crates/agentwire-client/src/delegate.rs": "the delegation's watcher is aborted when the delegation is dropped",
    "crates/agentwire-store/src/sqlite/mod.rs": "the writer ends when the last handle of its queue is dropped",
    "crates/agentwire-store/src/postgres.rs": "the notice sender ends when its queue closes",
    "crates/agentwire-store/src/conformance.rs": "the store conformance suite is test code, built only for tests",
}

# The operation layers, and the files that may name them.
LAYER = re.compile(r"\b(AuthLayer|QuotaLayer|OperationSpans|TenantCheck|MetricsLayer)\b")
LAYER_HOMES = (
    "crates/agentwire-server/src/app.rs",
    "crates/agentwire-server/src/lib.rs",
    "crates/agentwire-server/src/auth.rs",
    "crates/agentwire-server/src/auth/",
    "crates/agentwire-server/src/quota.rs",
    "crates/agentwire-server/src/spans.rs",
    "crates/agentwire-server/src/tenant.rs",
    "crates/agentwire-server/src/metrics/",
    # The HTTP routes check the tenant a route names, whatever service they serve.
    "crates/agentwire-server/src/http/routes.rs",
)

SPAWN = re.compile(r"\btokio::(task::)?spawn\(")


def sources() -> list[Path]:
    files = sorted((ROOT / "crates").glob("*/src/**/*.rs")) + sorted((ROOT / "examples").glob("**/*.rs"))
    return [
        path
        for path in files
        if path.name != "tests.rs"
        and "tests" not in path.relative_to(ROOT).parts[:-1]
        and not path.relative_to(ROOT).as_posix().startswith("crates/agentwire-test/")
    ]


def at_home(relative: str) -> bool:
    """Whether the file may name the operation layers."""
    return any(relative == home or (home.endswith("/") and relative.startswith(home)) for home in LAYER_HOMES)


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of `path` before its test module, comments left out."""
    lines = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("#[cfg(test)]"):
            break
        if line.lstrip().startswith("//"):
            continue
        lines.append((number, line))
    return lines


def main() -> int:
    out_of_place = []
    for path in sources():
        relative = path.relative_to(ROOT).as_posix()
        for number, line in code_lines(path):
            if SPAWN.search(line) and relative not in DETACHED_TASKS:
                out_of_place.append(
                    f"{relative}:{number}: a detached tokio::spawn; own the task (a TaskTracker, a JoinSet, a "
                    f"handle), or add the file to DETACHED_TASKS with why its task ends: {line.strip()}"
                )
            layer = LAYER.search(line)
            if layer and not at_home(relative):
                out_of_place.append(
                    f"{relative}:{number}: {layer.group(1)} outside app.rs and its own module; put it in front of "
                    f"a service with App: {line.strip()}"
                )
    stale = [file for file in DETACHED_TASKS if not (ROOT / file).exists()]
    out_of_place += [f"{file}: listed in DETACHED_TASKS but missing" for file in stale]
    for finding in out_of_place:
        print(finding)
    if out_of_place:
        print(f"scripts/placement.py: {len(out_of_place)} out of place", file=sys.stderr)
        return 1
    print("scripts/placement.py: detached tasks and operation layers where they belong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
