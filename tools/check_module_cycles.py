#!/usr/bin/env python3
"""Fails on an import cycle between the modules of a Rust crate.

Usage: tools/check_module_cycles.py [CRATE_DIR ...]
    (default: every member of the workspace in the Cargo.toml beside tools/)

Exit status: 0 no cycle, 1 a cycle (each named, with the lines that make it), 2 a crate
that cannot be read (a declared module with no file, say).

What is a module and what is a dependency:

- The module tree is read from `mod NAME;` (a file: NAME.rs or NAME/mod.rs, or the
  file a `#[path = "..."]` attribute names) and `mod NAME { ... }` (inline), from each
  crate root: src/lib.rs, src/main.rs and src/bin/*.rs are separate trees.
- A dependency is a path that starts with `crate::`, `$crate::`, `super::` or `self::`,
  in a `use` declaration (brace groups expanded) or anywhere in code, resolved to the
  deepest module it names (`crate::report::Check::new` depends on `crate::report`).
  Paths relative to the current module (`child::item`) only reach its own children.
- Comments (doc comments and their intra-doc links included), string and character
  literals and visibilities (`pub(in crate::a)`) are not code and are skipped.
- Test-only code is not part of the architecture and is skipped: an item under
  `#[cfg(test)]` (or `#[cfg(all(test, ...))]`), with everything in it, such as
  `#[cfg(test)] mod tests;`. Tests may build their fixtures from any module.
- A module using its own descendant, or a descendant using its ancestor (`super::`), is
  not a cycle: that is how a parent module and its children work together.
- Every other dependency from module A to module B counts as one between the two
  siblings that contain them, the children of their nearest common ancestor: with
  `crate::spec::parse` using `crate::checks::file`, `spec` depends on `checks`. A cycle
  is a cycle of such dependencies among the siblings of one parent, e.g. `compat ->
  report -> compat` at the crate root, however deep in each the uses are.
- A path is attributed to the module it names: a use of `crate::Item`, re-exported at
  the crate root from a sibling, is a use of the root (an ancestor), not of that sibling.
  Name the module that defines what you use.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

Module = tuple[str, ...]  # () is the crate root
Use = tuple[Module, str, str, int]  # (module, path as written, file, line)


class CrateError(Exception):
    pass


@dataclass
class Edge:
    source: Module
    target: Module
    where: str  # file:line
    path: str  # the path as written


@dataclass
class Crate:
    name: str
    modules: set[Module] = field(default_factory=set)
    edges: list[Edge] = field(default_factory=list)


# --- Lexing ----------------------------------------------------------------------------

RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')


def blank_non_code(text: str) -> str:
    """`text` with comments and string/char literals replaced by spaces (newlines kept),
    so offsets and line numbers stay those of the file."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := RAW_STRING.match(text, i)) and (i == 0 or not _ident(text[i - 1])):
            hashes = m.group(1)
            end = text.find('"' + hashes, m.end())
            end = n if end == -1 else end + 1 + len(hashes)
            blank(i, end)
            i = end
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1) and (i == 0 or not _ident(text[i - 1]))):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            # A character literal ('a', '\n', '\u{1b}', '"') or a lifetime ('a, 'static).
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3 if text.startswith("\\'", i + 1) else i + 2)
                j = n if j == -1 else j
                blank(i, j + 1)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i, i + 3)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def matching(text: str, open_at: int) -> int:
    """Index after the bracket closing the one at `open_at` (code already blanked)."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[text[open_at]]]
    j = open_at + 1
    while j < len(text) and stack:
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if c != stack[-1]:
                raise CrateError(f"unbalanced `{c}`")
            stack.pop()
        j += 1
    if stack:
        raise CrateError("unbalanced brackets")
    return j


def item_end(text: str, start: int) -> int:
    """Index after the item starting at `start`: its `;` or its `{ ... }` body, at depth 0."""
    j = start
    while j < len(text):
        c = text[j]
        if c in "([":
            j = matching(text, j)
            continue
        if c == ";":
            return j + 1
        if c == "{":
            return matching(text, j)
        j += 1
    return len(text)


ATTRIBUTE = re.compile(r"#\s*\[")


def is_test_only(attribute: str) -> bool:
    """`#[cfg(test)]` or `#[cfg(all(test, ...))]` (whitespace removed)."""
    if not (attribute.startswith("#[cfg(") and attribute.endswith(")]")):
        return False
    inner = attribute[len("#[cfg(") : -2]
    return inner == "test" or (inner.startswith("all(") and "test" in re.split(r"[(),]", inner))


def remove_test_only(code: str) -> str:
    """`code` with every `#[cfg(test)]` item (and its other attributes) blanked."""
    out = list(code)
    i = 0
    while m := ATTRIBUTE.search(code, i):
        end = matching(code, m.end() - 1)
        if is_test_only(re.sub(r"\s+", "", code[m.start() : end])):
            j = end
            while n := ATTRIBUTE.match(code, _skip_space(code, j)):
                j = matching(code, n.end() - 1)
            stop = item_end(code, j)
            for k in range(m.start(), stop):
                if out[k] != "\n":
                    out[k] = " "
            i = stop
        else:
            i = end
    return "".join(out)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


# --- Module tree -------------------------------------------------------------------------

MOD_DECL = re.compile(r"\b(?:pub\s*(?:\([^)]*\))?\s*)?mod\s+(?:r#)?([A-Za-z_][A-Za-z0-9_]*)\s*([;{])")
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]+)"\s*\]\s*$')
VISIBILITY = re.compile(r"\bpub\s*\(\s*(?:crate|super|self|in\s+[^)]*)\s*\)")
USE = re.compile(r"\buse\s+")
PATH = re.compile(r"(?<![A-Za-z0-9_:])(\$crate|crate|super|self)((?:\s*::\s*(?:r#)?[A-Za-z_][A-Za-z0-9_]*)+)")


def read_crate(crate_dir: Path) -> list[Crate]:
    src = crate_dir / "src"
    roots = [p for p in (src / "lib.rs", src / "main.rs") if p.is_file()]
    roots += sorted((src / "bin").glob("*.rs")) if (src / "bin").is_dir() else []
    if not roots:
        raise CrateError(f"{crate_dir}: no src/lib.rs, src/main.rs or src/bin/*.rs")
    crates = []
    for root in roots:
        crate = Crate(shown(root, crate_dir.resolve().parent))
        uses: list[Use] = []
        read_module(root, root.parent, (), crate, uses, crate_dir.resolve().parent)
        for module, path, where, line in uses:
            target = resolve(path, module, crate.modules)
            if target is not None:
                crate.edges.append(Edge(module, target, f"{where}:{line}", path))
        crates.append(crate)
    return crates


def shown(file: Path, base: Path) -> str:
    try:
        return str(file.resolve().relative_to(base))
    except ValueError:
        return str(file)


def read_module(file: Path, directory: Path, module: Module, crate: Crate, uses: list[Use], base: Path) -> None:
    raw = file.read_text(encoding="utf-8")
    code = remove_test_only(blank_non_code(raw))
    source = Source(raw, code, shown(file, base), base)
    read_body(source, 0, len(code), directory, module, crate, uses)


@dataclass
class Source:
    raw: str
    code: str
    shown: str
    base: Path


def read_body(
    source: Source, start: int, end: int, directory: Path, module: Module, crate: Crate, uses: list[Use]
) -> None:
    crate.modules.add(module)
    code = source.code
    body = list(code[start:end])  # this module's own code, inline child modules blanked
    i = start
    while m := MOD_DECL.search(code, i, end):
        name = m.group(1)
        child = (*module, name)
        if m.group(2) == "{":
            close = matching(code, m.end() - 1)
            read_body(source, m.end(), close - 1, directory / name, child, crate, uses)
            for k in range(m.end() - start, close - 1 - start):
                if body[k] != "\n":
                    body[k] = " "
            i = close
            continue
        attr = PATH_ATTR.search(source.raw[max(0, m.start() - 300) : m.start()])
        if attr:
            candidates = [directory / attr.group(1)]
        else:
            candidates = [directory / f"{name}.rs", directory / name / "mod.rs"]
        found = [c for c in candidates if c.is_file()]
        if not found:
            raise CrateError(
                f"{source.shown}: module `{name}` is declared, but none of "
                f"{', '.join(shown(c, source.base) for c in candidates)} exists"
            )
        child_file = found[0]
        if attr or child_file.name == "mod.rs":
            child_dir = child_file.parent
        else:
            child_dir = child_file.parent / child_file.stem
        read_module(child_file, child_dir, child, crate, uses, source.base)
        i = m.end()
    own = VISIBILITY.sub(lambda v: " " * len(v.group(0)), "".join(body))

    def line_of(offset: int) -> int:
        return code.count("\n", 0, start + offset) + 1

    # `use` declarations: their trees expanded, then blanked for the scan of other paths.
    for u in list(USE.finditer(own)):
        stop = use_end(own, u.end())
        for path in expand_use(own[u.end() : stop].rstrip(";")):
            uses.append((module, path, source.shown, line_of(u.start())))
        own = own[: u.start()] + " " * (stop - u.start()) + own[stop:]
    for p in PATH.finditer(own):
        uses.append((module, re.sub(r"\s+", "", p.group(0)), source.shown, line_of(p.start())))


def use_end(text: str, start: int) -> int:
    """Index after the `;` that ends the `use` declaration starting at `start`."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
        elif text[k] == ";" and depth <= 0:
            return k + 1
    return len(text)


def expand_use(tree: str) -> list[str]:
    """`a::{b, c::{self, d}}` -> `a::b`, `a::c`, `a::c::d` (renames and globs dropped)."""
    tree = re.sub(r"\s+as\s+(?:r#)?[A-Za-z_][A-Za-z0-9_]*", "", tree)
    tree = re.sub(r"\s+", "", tree)
    return [p for p in _expand(tree, "") if p]


def _expand(tree: str, prefix: str) -> list[str]:
    brace = tree.find("{")
    if brace == -1:
        parts = []
        for leaf in _split_top(tree):
            leaf = leaf.removesuffix("::*").removesuffix("*")
            if leaf in ("self", ""):
                parts.append(prefix.rstrip(":"))
            else:
                parts.append(prefix + leaf)
        return parts
    head = tree[:brace]
    close = _close(tree, brace)
    inner = tree[brace + 1 : close]
    out = []
    for item in _split_top(inner):
        out += _expand(item, prefix + head)
    rest = tree[close + 1 :].lstrip(",")
    if rest:
        out += _expand(rest, prefix)
    return out


def _split_top(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    items.append(text[start:])
    return [i for i in items if i]


def _close(text: str, brace: int) -> int:
    depth = 0
    for k in range(brace, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def resolve(path: str, module: Module, modules: set[Module]) -> Module | None:
    """The deepest module `path` names, from `module`; None for paths outside the crate."""
    segments = [s.removeprefix("r#") for s in path.split("::") if s]
    if not segments:
        return None
    first = segments[0]
    if first in ("crate", "$crate"):
        current: Module = ()
    elif first == "self":
        current = module
    elif first == "super":
        current = module
        while segments and segments[0] == "super":
            if not current:
                return None
            current = current[:-1]
            segments = segments[1:]
        segments = ["self", *segments]
    else:
        return None
    for segment in segments[1:]:
        if segment == "super":
            current = current[:-1]
            continue
        if (*current, segment) in modules:
            current = (*current, segment)
        else:
            break
    return current


# --- Cycles ----------------------------------------------------------------------------


def sibling_edges(crate: Crate) -> dict[Module, dict[str, dict[str, Edge]]]:
    """parent -> child -> depended-on sibling -> first edge that makes it."""
    graph: dict[Module, dict[str, dict[str, Edge]]] = {}
    for edge in crate.edges:
        a, b = edge.source, edge.target
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        if common == len(a) or common == len(b):
            continue  # the same module, an ancestor or a descendant
        parent = a[:common]
        graph.setdefault(parent, {}).setdefault(a[common], {}).setdefault(b[common], edge)
    return graph


def strongly_connected(nodes: dict[str, dict[str, Edge]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(nodes.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(set(nodes) | {w for targets in nodes.values() for w in targets}):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(nodes: dict[str, dict[str, Edge]], component: list[str]) -> list[str]:
    """A shortest cycle through the first module of `component` (a strongly connected
    set of siblings), as `a, b, ..., a`."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {start: start}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(nodes.get(v, {})):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*path[::-1], start]
                if w in members and w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    return [*component, component[0]]


def check(crate_dirs: list[Path]) -> int:
    failed = False
    for crate_dir in crate_dirs:
        try:
            crates = read_crate(crate_dir)
        except (CrateError, OSError, UnicodeDecodeError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        for crate in crates:
            cycles = []
            for parent, nodes in sorted(sibling_edges(crate).items()):
                for component in strongly_connected(nodes):
                    cycles.append((parent, nodes, component))
            if not cycles:
                print(f"ok: {crate.name}: {len(crate.modules)} modules, no cycle")
                continue
            failed = True
            for parent, nodes, component in cycles:
                under = "crate" if not parent else "crate::" + "::".join(parent)
                cycle = shortest_cycle(nodes, component)
                print(f"cycle in {crate.name} among the children of `{under}`: {' -> '.join(cycle)}")
                print(f"  modules in the cycle: {', '.join(component)}; the uses that close it:")
                for a in component:
                    for b, edge in sorted(nodes.get(a, {}).items()):
                        if b in component:
                            print(f"    {a} -> {b}: {edge.where} `{edge.path}`")
    return 1 if failed else 0


def workspace_members(root: Path) -> list[Path]:
    manifest = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))
    members = manifest.get("workspace", {}).get("members", [])
    out = []
    for member in members:
        out += sorted(p for p in root.glob(member) if (p / "Cargo.toml").is_file())
    return out


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    dirs = [Path(a) for a in argv] or workspace_members(Path(__file__).resolve().parent.parent)
    return check(dirs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
