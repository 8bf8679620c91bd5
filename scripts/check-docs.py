#!/usr/bin/env python3
"""Keeps the docs true: fails (exit 1, one `file:line: reason` per problem) when

(a) any Markdown file of the repository (README.md, docs/*.md, a crate's README: every `*.md`
    git tracks or would track) holds a measured figure (a number with a unit of time, a
    ratio, a percentage or a memory size: `93.5 ms`, `1.4x faster`, `0.64×`, `12%`,
    `38 B/element`, `3.7 MiB`) outside a generated part. Generated parts are
    - the lines between `<!-- NAME:begin -->` and `<!-- NAME:end -->`, which a tool writes
      (`compare --write`, `scripts/bench-python.sh --write`, `scripts/bench-dask.sh --write`,
      `scripts/criterion-table.py --write`, `scripts/sim-block.py`, `scripts/soak.py --write`,
      `scripts/reliability-tables.py --write`, `scripts/strays-cli.py --write`,
      `crates/spatix-py/bench_strays.py --write`, `scripts/fuzz.sh --write`,
      `scripts/check-docs.py --write`);
    - a file that opens with `<!-- Written by `COMMAND`: do not edit. -->` (docs/BENCHMARKS.md,
      which `compare --write` writes) from that line up to its `## From Python` heading, the
      part that command rewrites (`report::PYTHON_SECTION` in the compare binary).
    One exemption, for records rather than tables: under a `## History` heading, a `###`
    entry may quote the figures of a past session when it carries a provenance line,
    `Provenance: DATE ...; machine: ...; command: ...` (a `YYYY-MM-DD` date, and the
    `machine:` and `command:` fields, which say "not recorded" where the entry did not
    keep them). The History's introduction, before its first `###`, gets no exemption.
    Counts, sizes of inputs (`1M agents`), versions, dates, dimensions (`50 × 50`) and layout
    sizes (`8 bytes`) are not measurements and pass;
(b) a file map of docs/ARCHITECTURE.md does not list exactly the source files of its folder
    (`.rs`, `.py`, `.pyi`, `.c`, `.h`; git's view: tracked or untracked but not ignored, so
    `target/` and caches never count), one per line, each line starting with the path inside
    the folder (indented lines continue the one above). A file map is a fenced block: one
    opened with ```` ```files FOLDER ```` maps FOLDER; a plain fence maps the folder that the
    heading above it names in backticks (`## The library (`crates/spatix/src`), ...`). Every
    heading that names an existing folder must have such a map below it, before the next
    heading;
(c) README.md's `python-test-deps` block does not name exactly the packages that
    scripts/test-python.sh installs from PyPI (`--write` rewrites the block);
(d) a Rust doc comment (`///`, `//!`) under `crates/` cites the source documents the reader
    does not have ("seed 001", "§4"): say the mechanism instead.

Run from anywhere: `python3 scripts/check-docs.py [--write]`. Python 3 standard library only.
"""

import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ARCHITECTURE = "docs/ARCHITECTURE.md"
# The extensions a file map lists.
SOURCE_EXTENSIONS = {".rs", ".py", ".pyi", ".c", ".h"}
# Where a file written by a tool (its first lines say `Written by ...: do not edit.`) stops
# being that tool's: compare --write keeps docs/BENCHMARKS.md from this heading on.
WRITTEN_BY = re.compile(r"^<!-- Written by `[^`]+`(?: [^:]*)?: do not edit\. -->$")
WRITTEN_UNTIL = "## From Python"
HISTORY = "## History"
PROVENANCE = re.compile(r"^Provenance:.*\b\d{4}-\d\d-\d\d\b.*\bmachine:.*\bcommand:", re.I)
TEST_PYTHON = "scripts/test-python.sh"
DEPS_BLOCK = "python-test-deps"

BEGIN = re.compile(r"^\s*<!--\s*([\w-]+):begin\s*-->\s*$")
END = re.compile(r"^\s*<!--\s*([\w-]+):end\s*-->\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")

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


def repo_files(pattern=None):
    """The repository's files as git sees them (tracked, or untracked and not ignored) that
    exist, relative to ROOT; every file under ROOT outside `target/` and `.git/` when git is
    not available."""
    try:
        args = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"]
        out = subprocess.run(args + ([pattern] if pattern else []), cwd=ROOT, capture_output=True,
                             check=True).stdout.decode()
        paths = [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        glob = pattern or "*"
        paths = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob(glob)
                 if not {"target", ".git", "__pycache__"} & set(p.relative_to(ROOT).parts)]
    return sorted({p for p in paths if (ROOT / p).is_file()})


def headings(lines):
    """(index, level, text) of the Markdown headings, fenced code left out."""
    out, fenced = [], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = HEADING.match(line)
        if m and not fenced:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


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


def written_lines(lines, path, problems):
    """Indices of the lines a whole-file writer owns: from its `Written by` line to the heading
    from which it keeps the old file."""
    start = next((i for i, l in enumerate(lines[:5]) if WRITTEN_BY.match(l)), None)
    if start is None:
        return set()
    until = next((i for i, l in enumerate(lines) if l.strip() == WRITTEN_UNTIL), None)
    if until is None:
        problems.append(f"{path}:{start + 1}: written by a tool, but no `{WRITTEN_UNTIL}` heading "
                        "where its part ends")
        return set()
    return set(range(0, until))


def history_lines(lines, path, problems):
    """Indices of the lines of the `## History` entries that carry a provenance line."""
    marks = headings(lines)
    start = next((i for i, level, text in marks if level == 2 and f"## {text}".strip() == HISTORY), None)
    if start is None:
        return set()
    end = next((i for i, level, _ in marks if i > start and level <= 2), len(lines))
    entries = [i for i, level, _ in marks if start < i < end and level == 3]
    exempt = set()
    for k, first in enumerate(entries):
        last = entries[k + 1] if k + 1 < len(entries) else end
        if any(PROVENANCE.match(lines[j]) for j in range(first, last)):
            exempt.update(range(first, last))
        elif any(FIGURE.search(lines[j]) for j in range(first, last)):
            problems.append(f"{path}:{first + 1}: a History entry with figures needs a line "
                            "`Provenance: DATE ...; machine: ...; command: ...`")
    return exempt


def check_figures(problems):
    for name in repo_files("*.md"):
        lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
        skip = generated_lines(lines, name, problems) | written_lines(lines, name, problems)
        skip |= history_lines(lines, name, problems)
        for i, line in enumerate(lines):
            if i in skip:
                continue
            for m in FIGURE.finditer(line):
                problems.append(
                    f"{name}:{i + 1}: hand-typed figure `{m.group(0).strip()}`: put it in a "
                    "generated block written by the tool that measures it, or point to one"
                )


def file_maps(lines, problems):
    """(folder, fence line, {entry: line}) of every file map of ARCHITECTURE.md."""
    maps, marks = [], headings(lines)
    bounds = [i for i, _, _ in marks] + [len(lines)]
    for k, (at, _, text) in enumerate(marks):
        named = [p.rstrip("/") for p in re.findall(r"`([^`]+)`", text)]
        folder = next((p for p in named if p and (ROOT / p).is_dir()), None)
        found = 0
        i = at + 1
        while i < bounds[k + 1]:
            if not lines[i].startswith("```"):
                i += 1
                continue
            info = lines[i][3:].strip()
            target = info.split(None, 1)[1].strip().rstrip("/") if info.startswith("files ") else None
            if target is None and not info:
                target = folder if found == 0 else None
            close = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            if target is not None:
                if not (ROOT / target).is_dir():
                    problems.append(f"{ARCHITECTURE}:{i + 1}: the file map's folder {target} does not exist")
                else:
                    listed = {}
                    for j in range(i + 1, close):
                        line = lines[j]
                        if line and not line[0].isspace():
                            entry = line.split()[0]
                            if entry in listed:
                                problems.append(f"{ARCHITECTURE}:{j + 1}: {entry} is listed twice (first on line {listed[entry] + 1})")
                            listed.setdefault(entry, j)
                    maps.append((target, i, listed))
                    found += target == folder
            i = close + 1
        if folder is not None and found == 0:
            problems.append(f"{ARCHITECTURE}:{at + 1}: the heading names the folder {folder}, "
                            "but no fenced file map of it follows before the next heading")
    return maps


def check_file_maps(problems):
    lines = (ROOT / ARCHITECTURE).read_text(encoding="utf-8").splitlines()
    maps = file_maps(lines, problems)
    if not maps:
        problems.append(f"{ARCHITECTURE}:1: no file map found")
    files = [p for p in repo_files() if pathlib.PurePosixPath(p).suffix in SOURCE_EXTENSIONS]
    for folder, fence, listed in maps:
        actual = {p[len(folder) + 1:] for p in files if p.startswith(folder + "/")}
        for entry, at in sorted(listed.items()):
            if entry not in actual:
                problems.append(f"{ARCHITECTURE}:{at + 1}: the file map lists {entry}, which is not a file of {folder}")
        for missing in sorted(actual - listed.keys()):
            problems.append(f"{ARCHITECTURE}:{fence + 1}: {folder}/{missing} is missing from the file map")


def python_test_packages():
    """The package specifications of test-python.sh's `pip install` from PyPI (the first
    one: the second installs the local package with `--no-deps`)."""
    text = (ROOT / TEST_PYTHON).read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if "pip" in words and "install" in words and "--no-deps" not in words:
            rest = words[words.index("install") + 1:]
            return [w for w in rest if not w.startswith("-") and not w.startswith("$")]
    return []


def deps_block_text():
    packages = python_test_packages()
    return ("`scripts/test-python.sh` installs the Python tests' dependencies from PyPI into "
            "its virtual environment: " + ", ".join(f"`{p}`" for p in packages) + ".")


def check_python_deps(problems, write):
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- {DEPS_BLOCK}:begin -->", f"<!-- {DEPS_BLOCK}:end -->"
    m = re.search(re.escape(begin) + r"\n(.*?)\n?" + re.escape(end), text, re.S)
    if m is None:
        problems.append(f"README.md:1: no `{DEPS_BLOCK}` block naming what {TEST_PYTHON} installs")
        return
    want = deps_block_text()
    if m.group(1).strip() != want:
        if write:
            path.write_text(text[:m.start(1)] + want + "\n" + text[m.end(1):].lstrip("\n"), encoding="utf-8")
            print(f"check-docs: rewrote README.md's {DEPS_BLOCK} block", file=sys.stderr)
        else:
            line = text[:m.start()].count("\n") + 1
            problems.append(f"README.md:{line}: the `{DEPS_BLOCK}` block does not name what "
                            f"{TEST_PYTHON} installs: run `python3 scripts/check-docs.py --write`")


def check_doc_comments(problems):
    for name in repo_files("crates/*.rs"):
        path = ROOT / name
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if DOC_COMMENT.match(line):
                m = SEED.search(line)
                if m:
                    problems.append(
                        f"{name}:{i + 1}: doc comment cites `{m.group(0)}`, a "
                        "document the reader does not have: say the mechanism instead"
                    )


def main():
    args = sys.argv[1:]
    if args not in ([], ["--write"]):
        sys.exit("usage: check-docs.py [--write]")
    problems = []
    check_python_deps(problems, write=bool(args))
    check_figures(problems)
    check_file_maps(problems)
    check_doc_comments(problems)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    docs = len(repo_files("*.md"))
    print(f"check-docs: {docs} Markdown files, the file maps of {ARCHITECTURE}, README's Python "
          "test dependencies and the doc comments are consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
