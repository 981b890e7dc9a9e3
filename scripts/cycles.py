#!/usr/bin/env python3
"""Finds import cycles between the modules of each Rust crate, and exits 1 if there is one.

    python3 scripts/cycles.py [CRATE_DIR ...]     # default: every crate of the three workspaces

A module is a file. For each crate, the module tree is read from its `mod` declarations (test
modules left out), and each module's imports from its `use` items and inline `crate::`,
`super::` and `self::` paths, outside comments and test code. An import names the module that
defines the item: the longest module path it starts with, following `pub use` re-exports from
there. A module naming what its own descendants define is no dependency of it: a `mod.rs`
re-exports what its children define, and they use what it defines. The strongly connected components of the rest are the cycles; each is
printed with the lines that close it.

Why: a cycle makes two modules one in all but name; neither can be read, tested or moved alone.
Only the standard library is used.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOD_DECL = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
PATH_ATTR = re.compile(r"#\[path\s*=\s*\"([^\"]+)\"\]")
USE_ITEM = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.S)
INLINE_PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)")


def strip_comments_and_strings(text: str) -> str:
    """`text` with comments, string and char literals blanked, line breaks kept (so that line
    numbers still hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif re.match(r'[bc]?r#*"', text[i:i + 12]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            prefix, hashes = re.match(r'([bc]?r)(#*)"', text[i:]).groups()
            start = i + len(prefix) + len(hashes) + 1
            end = text.find('"' + hashes, start)
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or text.startswith("'\\u{", i):
            j = text.find("'", i + 1)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_code(text: str) -> str:
    """`text` without the items under `#[cfg(test)]` (their lines blanked)."""
    out = text
    for match in reversed(list(re.finditer(r"#\[cfg\(test\)\]", text))):
        start = match.start()
        brace = out.find("{", match.end())
        semi = out.find(";", match.end())
        if semi >= 0 and (brace < 0 or semi < brace):
            end = semi + 1
        elif brace >= 0:
            depth, j = 0, brace
            while j < len(out):
                if out[j] == "{":
                    depth += 1
                elif out[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            end = j + 1
        else:
            continue
        out = out[:start] + "\n" * out.count("\n", start, end) + out[end:]
    return out


def expand_use_tree(tree: str) -> list[str]:
    """The paths of a `use` tree: `a::{b, c::{d, e as f}}` is `a::b`, `a::c::d`, `a::c::e`."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [tree.removesuffix("::*").removesuffix("::self")]
    head, _, rest = tree.partition("{")
    body = rest[: rest.rfind("}")]
    parts, depth, current = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    parts.append(current)
    paths = []
    for part in filter(None, parts):
        for sub in expand_use_tree(part):
            paths.append((head + sub).removesuffix("::self").removesuffix("::") if sub != "self" else head.removesuffix("::"))
    return paths


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.files: dict[tuple[str, ...], Path] = {}
        self.text: dict[tuple[str, ...], str] = {}
        roots = [src / "lib.rs"] if (src / "lib.rs").exists() else [src / "main.rs"]
        for root in roots:
            if root.exists():
                self.load((), root)

    def load(self, module: tuple[str, ...], file: Path) -> None:
        raw = file.read_text()
        text = strip_test_code(strip_comments_and_strings(raw))
        self.files[module] = file
        self.text[module] = text
        directory = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.parent / file.stem
        raw_lines = raw.split("\n")
        for match in MOD_DECL.finditer(text):
            name = match.group(1)
            line = text.count("\n", 0, match.start(1))
            # A `#[path]` is read from the source itself: the stripped text has no strings.
            attr = PATH_ATTR.search(raw_lines[line]) or (PATH_ATTR.search(raw_lines[line - 1]) if line else None)
            if attr:
                child = file.parent / attr.group(1)
            else:
                child = directory / f"{name}.rs"
                if not child.exists():
                    child = directory / name / "mod.rs"
            if not child.exists():
                raise SystemExit(f"scripts/cycles.py: {file.relative_to(ROOT)}:{line + 1} declares `mod {name}`, "
                                 "whose file this script cannot find")
            self.load(module + (name,), child)

    def reexports(self, module: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """The names `module` re-exports with `pub use`, each with the path it points to."""
        found = {}
        for match in USE_ITEM.finditer(self.text.get(module, "")):
            if not match.group(1):
                continue
            for path in expand_use_tree(match.group(2)):
                absolute = self.absolute(module, path)
                if absolute:
                    found[absolute[-1]] = absolute
        return found

    def absolute(self, module: tuple[str, ...], path: str) -> tuple[str, ...] | None:
        segments = [s for s in path.split("::") if s]
        if not segments:
            return None
        base: list[str]
        if segments[0] == "crate":
            base, segments = [], segments[1:]
        elif segments[0] in ("super", "self"):
            base = list(module)
            while segments and segments[0] in ("super", "self"):
                if segments[0] == "super" and base:
                    base.pop()
                segments = segments[1:]
        elif module + (segments[0],) in self.files:
            base = list(module)
        else:
            return None  # another crate, or a name in scope
        return tuple(base + segments)

    def defining_module(self, path: tuple[str, ...], depth: int = 0) -> tuple[str, ...]:
        """The module that defines what `path` names, following re-exports."""
        longest = ()
        for i in range(len(path), -1, -1):
            if path[:i] in self.files:
                longest = path[:i]
                break
        rest = path[len(longest):]
        if rest and depth < 8:
            target = self.reexports(longest).get(rest[0])
            if target and target[: len(longest)] != longest + rest[:1]:
                return self.defining_module(target + rest[1:], depth + 1)
        return longest

    def edges(self) -> dict[tuple[str, ...], dict[tuple[str, ...], int]]:
        """For each module, the modules it imports, each with the line of one import."""
        graph: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {m: {} for m in self.files}
        for module, text in self.text.items():
            found: list[tuple[str, int]] = []
            for match in USE_ITEM.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found += [(path, line) for path in expand_use_tree(match.group(2))]
            for match in INLINE_PATH.finditer(text):
                found.append((match.group(1), text.count("\n", 0, match.start()) + 1))
            for path, line in found:
                absolute = self.absolute(module, path)
                if absolute is None:
                    continue
                target = self.defining_module(absolute)
                # A module naming what its own descendants define is their facade (a `mod.rs`
                # re-exporting its children), not a dependency on them.
                if target != module and target[: len(module)] != module:
                    graph[module].setdefault(target, line)
        return graph


def strongly_connected(graph: dict) -> list[list]:
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        work = [(node, iter(graph[node]))]
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[current] = min(low[current], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[current])
            if low[current] == index[current]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == current:
                        break
                if len(component) > 1:
                    components.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return components


def crate_dirs() -> list[Path]:
    found = []
    for manifest in sorted([*ROOT.glob("crates/*/Cargo.toml"), *ROOT.glob("bench/*/Cargo.toml"), ROOT / "fuzz/Cargo.toml"]):
        if (manifest.parent / "src").is_dir():
            found.append(manifest.parent)
    return found


def main() -> int:
    dirs = [Path(d).resolve() for d in sys.argv[1:]] or crate_dirs()
    cycles = 0
    for directory in dirs:
        crate = Crate(directory / "src")
        graph = crate.edges()
        for component in strongly_connected(graph):
            cycles += 1
            members = set(component)
            print(f"import cycle in {directory.relative_to(ROOT)}:")
            for module in sorted(component):
                for target, line in sorted(graph[module].items()):
                    if target in members:
                        source = crate.files[module].relative_to(ROOT)
                        print(f"  {source}:{line} imports {crate.files[target].relative_to(ROOT)}")
    if cycles:
        print(f"scripts/cycles.py: {cycles} import cycle(s); break each by moving what both sides need into a module of its own")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
