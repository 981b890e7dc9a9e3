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


def sources(package: Path, kind: str) -> str:
    """The code a dependency of `kind` may be named in: the package's own code for a normal one
    (its library, binaries and fuzz targets; the examples package keeps its programs beside its
    manifest), every target and doc test for a dev one, the build script for a build one."""
    if kind == "build-dependencies":
        files = [package / "build.rs"]
        directories = []
    elif kind == "dependencies":
        files = sorted(package.glob("*.rs")) if not (package / "src").is_dir() else []
        directories = ["src", "fuzz_targets"]
    else:
        files = sorted(package.glob("*.rs"))
        directories = ["src", "tests", "examples", "benches", "fuzz_targets"]
    for directory in directories:
        files += sorted((package / directory).rglob("*.rs")) if (package / directory).is_dir() else []
    # Comments name crates without using them (`// built on tokio_util`), except that a doc
    # comment's examples are doc tests, which dev-dependencies serve.
    comment = r"(?m)(^|\s)//.*$" if kind != "dev-dependencies" else r"(?m)(^|\s)//(?![/!]).*$"
    return "\n".join(re.sub(comment, "", file.read_text()) for file in files if file.exists())


def unused(package: Path) -> list[tuple[str, str]]:
    manifest = tomllib.loads((package / "Cargo.toml").read_text())
    ignored = manifest.get("package", {}).get("metadata", {}).get("unused-deps", {}).get("ignored", [])
    ignored = {name.replace("-", "_") for name in ignored}
    texts: dict[str, str] = {}
    missing = []
    for name, kind in sorted(declared(manifest).items()):
        if name in ignored:
            continue
        text = texts.setdefault(kind, sources(package, kind))
        named = rf"(?<![\w:]){re.escape(name)}::|\buse\s+{re.escape(name)}\b|\bextern\s+crate\s+{re.escape(name)}\b"
        if not re.search(named, text):
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
