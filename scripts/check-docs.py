#!/usr/bin/env python3
"""Keeps the docs true: fails (exit 1, one `file:line: reason` per problem) when

(a) README.md or docs/ARCHITECTURE.md holds a measured figure (a number with a unit of time,
    a ratio, a percentage or a memory size: `93.5 ms`, `1.4x faster`, `0.64×`, `12%`,
    `38 B/element`, `3.7 MiB`) outside a generated block, i.e. outside the lines between
    `<!-- NAME:begin -->` and `<!-- NAME:end -->` that a tool writes (`compare --write`,
    `scripts/bench-python.sh --write`, `scripts/bench-dask.sh --write`,
    `scripts/criterion-table.py --write`, `scripts/sim-block.py`). Counts, sizes of inputs
    (`1M agents`), versions, dates, dimensions (`50 × 50`) and layout sizes (`8 bytes`) are
    not measurements and pass. Measurements belong in a generated block, or in
    docs/BENCHMARKS.md (its "History" section for dated figures of past sessions);
(b) the file map of docs/ARCHITECTURE.md (the first fenced block under the heading that
    starts with `## The library`) does not list exactly the `.rs` files under
    `crates/spatix/src`, one per line, each line starting with the path inside `src/`;
(c) a Rust doc comment (`///`, `//!`) under `crates/` cites the source documents the reader
    does not have ("seed 001", "§4"): say the mechanism instead.

Run from anywhere: `python3 scripts/check-docs.py`. Python 3 standard library only.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECKED = ["README.md", "docs/ARCHITECTURE.md"]
LIBRARY = "crates/spatix/src"
FILE_MAP_HEADING = "## The library"

BEGIN = re.compile(r"^\s*<!--\s*([\w-]+):begin\s*-->\s*$")
END = re.compile(r"^\s*<!--\s*([\w-]+):end\s*-->\s*$")

# A number (not part of a word, a version or a hex literal) ...
NUMBER = r"(?<![\w.^/-])\d+(?:[.,]\d+)*"
# ... followed by a unit that makes it a measurement.
FIGURE = re.compile(
    NUMBER
    + r"(?:"
    + r"\s?(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|hours?)\b"  # durations
    + r"|\s?[×]\s*(?![\s\d])"  # ratios: 0.64×, but not 50 × 50
    + r"|x\b(?!\s*\d)"  # ratios: 1.5x, but not 600x600 or 3 x 3
    + r"|\s?x\s+(?:faster|slower|more|less|fewer|larger|smaller)\b"
    + r"|\s?%"  # percentages
    + r"|\s?(?:B|bytes?)/\w"  # bytes per element
    + r"|\s?(?:KiB|MiB|GiB|TiB|KB|MB|GB|TB)\b"  # memory sizes
    + r")"
)
SEED = re.compile(r"\bseeds?\s+0\d\d\b|§", re.I)
DOC_COMMENT = re.compile(r"^\s*//[/!](?!/)")


def generated_lines(lines, path, problems):
    """Indices of the lines inside (and on the markers of) generated blocks."""
    inside, opened, names = set(), None, None
    for i, line in enumerate(lines):
        begin, end = BEGIN.search(line), END.search(line)
        if begin:
            if opened is not None:
                problems.append(f"{path}:{i + 1}: `{begin.group(1)}:begin` inside the open block `{names}` (line {opened + 1})")
            opened, names = i, begin.group(1)
        if opened is not None:
            inside.add(i)
        if end:
            if opened is None or end.group(1) != names:
                problems.append(f"{path}:{i + 1}: `{end.group(1)}:end` without its begin marker")
            opened, names = None, None
    if opened is not None:
        problems.append(f"{path}:{opened + 1}: `{names}:begin` is never closed")
    return inside


def check_figures(problems):
    for name in CHECKED:
        path = ROOT / name
        lines = path.read_text(encoding="utf-8").splitlines()
        skip = generated_lines(lines, name, problems)
        for i, line in enumerate(lines):
            if i in skip:
                continue
            for m in FIGURE.finditer(line):
                problems.append(
                    f"{name}:{i + 1}: hand-typed figure `{m.group(0).strip()}`: put it in a "
                    "generated block or docs/BENCHMARKS.md, or point to them"
                )


def check_file_map(problems):
    name = "docs/ARCHITECTURE.md"
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    heading = next((i for i, l in enumerate(lines) if l.startswith(FILE_MAP_HEADING)), None)
    if heading is None:
        problems.append(f"{name}:1: no `{FILE_MAP_HEADING} ...` heading with the file map")
        return
    fence = next((i for i in range(heading, len(lines)) if lines[i].startswith("```")), None)
    if fence is None:
        problems.append(f"{name}:{heading + 1}: no fenced file map under this heading")
        return
    listed = {}
    i = fence + 1
    while i < len(lines) and not lines[i].startswith("```"):
        line = lines[i]
        if line and not line[0].isspace():
            entry = line.split()[0]
            if entry in listed:
                problems.append(f"{name}:{i + 1}: {entry} is listed twice (first on line {listed[entry] + 1})")
            listed.setdefault(entry, i)
        i += 1
    actual = {p.relative_to(ROOT / LIBRARY).as_posix() for p in (ROOT / LIBRARY).rglob("*.rs")}
    for entry, at in sorted(listed.items()):
        if entry not in actual:
            problems.append(f"{name}:{at + 1}: the file map lists {entry}, which is not a file of {LIBRARY}")
    for missing in sorted(actual - listed.keys()):
        problems.append(f"{name}:{fence + 1}: {LIBRARY}/{missing} is missing from the file map")


def check_doc_comments(problems):
    for path in sorted((ROOT / "crates").rglob("*.rs")):
        if "target" in path.relative_to(ROOT).parts:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if DOC_COMMENT.match(line):
                m = SEED.search(line)
                if m:
                    problems.append(
                        f"{path.relative_to(ROOT)}:{i + 1}: doc comment cites `{m.group(0)}`, a "
                        "document the reader does not have: say the mechanism instead"
                    )


def main():
    problems = []
    check_figures(problems)
    check_file_map(problems)
    check_doc_comments(problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check-docs: README.md, docs/ARCHITECTURE.md and the doc comments are consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
