#!/usr/bin/env python3
"""Finds dependencies a package declares and its code never names, and exits 1 if there is one.

    python3 scripts/unused-deps.py [PACKAGE_DIR ...]   # default: every package of the three workspaces

A dependency is used when one of the package's Rust files (src/, tests/, examples/, benches/,
build.rs) names its crate (`name::`, `use name`, `extern crate name`, `#[name::…]`). Normal,
dev and build dependencies are all checked, including those of one target. A dependency that is
there for what it does without being named (a feature it turns on in another crate, a linked C
library) is listed with its reason under `[package.metadata.unused-deps] ignored` in its manifest.

Why: an unused dependency costs every build its compile time, and says something untrue about
what the package relies on. Only the standard library is used; nothing is built.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def declared(manifest: dict) -> dict[str, str]:
    """Each dependency's crate name (its `package` renamed to its key), by the table it is in."""
    found = {}
    tables = [manifest] + list(manifest.get("target", {}).values())
    for table in tables:
        for kind in TABLES:
            for key in table.get(kind, {}):
                found[key.replace("-", "_")] = kind
    return found


def code(package: Path) -> str:
    files = [package / "build.rs"] if (package / "build.rs").exists() else []
    for directory in ("src", "tests", "examples", "benches", "fuzz_targets"):
        files += sorted((package / directory).rglob("*.rs")) if (package / directory).is_dir() else []
    # A package at the root of examples/ keeps its programs beside its manifest.
    files += sorted(package.glob("*.rs"))
    # Comments name crates without using them (`//! built on tokio_util`): left out.
    return "\n".join(re.sub(r"(?m)(^|\s)//.*$", "", file.read_text()) for file in files)


def unused(package: Path) -> list[tuple[str, str]]:
    manifest = tomllib.loads((package / "Cargo.toml").read_text())
    ignored = set(manifest.get("package", {}).get("metadata", {}).get("unused-deps", {}).get("ignored", []))
    text = code(package)
    missing = []
    for name, kind in sorted(declared(manifest).items()):
        if name in {n.replace("-", "_") for n in ignored}:
            continue
        if not re.search(rf"(?<![\w:]){re.escape(name)}(::|\s*;|\s*\{{|\s+as\b|\s*\]|!)|extern crate {re.escape(name)}\b", text):
            missing.append((name, kind))
    return missing


def packages() -> list[Path]:
    manifests = [*ROOT.glob("crates/*/Cargo.toml"), ROOT / "examples/Cargo.toml", *ROOT.glob("bench/*/Cargo.toml"),
                 ROOT / "fuzz/Cargo.toml"]  # fmt: skip
    return [m.parent for m in sorted(manifests) if m.exists() and "package" in tomllib.loads(m.read_text())]


def main() -> int:
    dirs = [Path(d).resolve() for d in sys.argv[1:]] or packages()
    found = 0
    for package in dirs:
        for name, kind in unused(package):
            found += 1
            print(f"{(package / 'Cargo.toml').relative_to(ROOT)}: [{kind}] {name} is never named in the package's code")
    if found:
        print(f"scripts/unused-deps.py: {found} unused dependenc{'y' if found == 1 else 'ies'}; remove each, or list it with its "
              "reason under [package.metadata.unused-deps] ignored")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
