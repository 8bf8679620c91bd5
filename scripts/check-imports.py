#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

Usage: scripts/check-imports.py [SRC_DIR ...]   (default: the library, compare, the CLI, the Python extension)

A module's file is `a.rs` or `a/mod.rs`; it "imports" module B when it names a path into B
(`use crate::b::X`, `super::b::X`, `crate::X` where the crate root re-exports X from B, and
paths written inline in code). Paths between a module and its own ancestors or descendants are
left out: a structure's folder declares its files and they implement its type, which is
nesting, not a circle. Every other import must run one way: the strongly connected components
of the graph must all be single modules. Prints each circle found and exits 1, or prints one
line and exits 0.
"""

import re
import sys
from pathlib import Path

DEFAULT_ROOTS = [
    ("crates/spatix/src", "lib.rs"),
    ("crates/spatix-bench/src/bin/compare", "main.rs"),
    ("crates/spatix-cli/src", "main.rs"),
    ("crates/spatix-py/src", "lib.rs"),
]

COMMENT = re.compile(r"//[^\n]*")
USE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
INLINE = re.compile(r"(?<![\w:])(\$?crate|super|self)((?:::\w+)+)")


def module_of(src: Path, file: Path, root_file: str) -> tuple:
    rel = file.relative_to(src)
    parts = list(rel.parts)
    if parts == [root_file]:
        return ()
    last = parts[-1][:-3]
    if last == "mod":
        return tuple(parts[:-1])
    return tuple(parts[:-1] + [last])


def expand(tree: str) -> list:
    """The full paths of a use tree: `a::{b, c::{d, e}}` gives a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s*(::|[{},])\s*", r"\1", re.sub(r"\s+", " ", tree.strip()))
    out = []

    def walk(prefix: str, text: str):
        depth, start, items = 0, 0, []
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(text[start:i])
                start = i + 1
        items.append(text[start:])
        for item in items:
            if not item:
                continue
            brace = item.find("{")
            if brace >= 0:
                walk(prefix + item[:brace], item[brace + 1 : item.rfind("}")])
            else:
                out.append(prefix + item.split(" as ")[0].strip())

    walk("", tree)
    return out


def main(argv: list) -> int:
    roots = [(Path(a), "lib.rs" if (Path(a) / "lib.rs").exists() else "main.rs") for a in argv] or [
        (Path(s), r) for s, r in DEFAULT_ROOTS
    ]
    failed = False
    for src, root_file in roots:
        files = {module_of(src, f, root_file): f for f in sorted(src.rglob("*.rs"))}
        texts = {m: COMMENT.sub("", f.read_text()) for m, f in files.items()}
        # Names a module re-exports from another: name -> the module path it resolves to.
        reexports = {m: {} for m in files}

        def absolute(module: tuple, path: str) -> list:
            segs = [s for s in path.split("::") if s]
            if not segs:
                return []
            head = segs[0]
            if head in ("crate", "$crate"):
                base, segs = [], segs[1:]
            elif head == "self":
                base, segs = list(module), segs[1:]
            elif head == "super":
                base = list(module)
                while segs and segs[0] == "super":
                    base, segs = base[:-1], segs[1:]
            elif (module + (head,)) in files:
                base = list(module)
            else:
                return []  # an outside crate or a local name
            return base + segs

        def resolve(segs: list, seen=()) -> tuple:
            """The module a full path lands in: the deepest module, through re-exports."""
            current = ()
            for s in segs:
                if current + (s,) in files:
                    current = current + (s,)
                    continue
                target = reexports.get(current, {}).get(s)
                if target is not None and (current, s) not in seen:
                    return resolve(list(target), seen + ((current, s),))
                break
            return current

        for m, text in texts.items():
            for u in USE.finditer(text):
                if not re.match(r"\s*pub", text[u.start() : u.start() + 10]):
                    continue
                for path in expand(u.group(1)):
                    segs = absolute(m, path)
                    if segs:
                        reexports[m][segs[-1]] = tuple(segs)
        edges = {m: set() for m in files}
        for m, text in texts.items():
            paths = [p for u in USE.finditer(text) for p in expand(u.group(1))]
            paths += [g.group(1) + g.group(2) for g in INLINE.finditer(text)]
            for path in paths:
                segs = absolute(m, path)
                if not segs:
                    continue
                target = resolve(segs)
                nested = target[: len(m)] == m or m[: len(target)] == target
                if not nested:
                    edges[m].add(target)
        # Tarjan's strongly connected components.
        index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

        def connect(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(edges[v]):
                if w not in index:
                    connect(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(comp)

        sys.setrecursionlimit(10000)
        for v in sorted(files):
            if v not in index:
                connect(v)
        for comp in comps:
            if len(comp) > 1:
                failed = True
                names = sorted(str(files[c].relative_to(src)) for c in comp)
                print(f"{src}: import circle among {', '.join(names)}")
                for a in sorted(comp):
                    for b in sorted(edges[a] & set(comp)):
                        print(f"    {files[a].relative_to(src)} -> {files[b].relative_to(src)}")
    if not failed:
        print("check-imports: no import circles in " + ", ".join(str(s) for s, _ in roots))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
