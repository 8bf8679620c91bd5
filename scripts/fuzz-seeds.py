#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus, fuzz/corpus/ops/seed-*: short, valid-looking operation
sequences (see spatix_fuzz::run for the encoding) that reach every operation, so the fuzzers
start from deep states instead of rediscovering the format. Shared seeds (seed-NN-KIND), then
one seed per target (seed-t-NAME, its first byte selecting that target; structures of points
get their elements as points). Deterministic: rerun to recreate."""
import glob, os, random, re

ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "fuzz", "corpus", "ops")
LIB = os.path.join(ROOT, "crates", "spatix-fuzz", "src", "lib.rs")
OPS = os.path.join(ROOT, "crates", "spatix-fuzz", "src", "op.rs")


def ops():
    """spatix_fuzz's `enum Op` (each name in upper snake case: `UpdateAll` as UPDATE_ALL) and
    its `BATCH` flag, read from its source."""
    source = open(OPS).read()
    body = re.search(r"pub\(crate\) enum Op \{(.*?)\n\}", source, re.S).group(1)
    numbers = {re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper(): int(value)
               for name, value in re.findall(r"^\s*(\w+) = (\d+),", body, re.M)}
    numbers["BATCH"] = int(re.search(r"pub\(crate\) const BATCH: u8 = (\w+);", source).group(1), 0)
    return numbers


OP = ops()
INSERT, REMOVE, UPDATE, MAINTAIN, CLEAR = OP["INSERT"], OP["REMOVE"], OP["UPDATE"], OP["MAINTAIN"], OP["CLEAR"]
QUERY, NEAREST, WITHIN, RAY, STALE, PAIRS = OP["QUERY"], OP["NEAREST"], OP["WITHIN"], OP["RAY"], OP["STALE"], OP["PAIRS"]
# Set on a read (QUERY to RAY): a batch of such reads.
BATCH = OP["BATCH"]


def targets():
    """The names of spatix_fuzz::TARGETS, in order (the first byte of an input picks one)."""
    source = open(LIB).read()
    body = re.search(r"pub const TARGETS: &\[&str\] = &\[(.*?)\];", source, re.S).group(1)
    return re.findall(r'"([^"]+)"', body)


def coord(r, hard=0.05):
    if r.random() < hard:
        return [200 + r.randrange(40)]
    return [r.randrange(200)]


def box(r, small=True):
    x, y = r.randrange(190), r.randrange(190)
    w, h = (r.randrange(6), r.randrange(6)) if small else (r.randrange(200), r.randrange(200))
    if r.random() < 0.1:
        return coord(r, 0.5) + coord(r, 0.5) + coord(r, 0.5) + coord(r, 0.5)
    return [x, y, min(199, x + w), min(199, y + h)]


def element(r, points, small=True):
    """An element: a box, or for structures of points a point (two coordinates)."""
    return coord(r) + coord(r) if points else box(r, small)


def read(r, op):
    """The bytes of one read after its op byte (nearest: point and k; within: point and
    radius)."""
    if op == QUERY:
        return box(r, False)
    if op == NEAREST:
        return coord(r) + coord(r) + [r.choice([0, 1, 8, 64, 79])]
    if op == WITHIN:
        return coord(r) + coord(r) + coord(r)
    return ray(r)


def ray(r):
    return coord(r) + coord(r) + [r.choice([84, 0, 13, 20, 27])] + [r.choice([13, 20, 27, 0])] + coord(r, 0.3)


def batch(r, op, points):
    """A batch of 33 to 100 reads of one kind (enough for several parts): the op with BATCH
    set, the count less one, then (nearest: k; within: the radius) the queries."""
    count = r.randrange(33, 101)
    out = [op | BATCH, count - 1]
    if op == NEAREST:
        out += [r.choice([0, 1, 8, 64, 79])]
    elif op == WITHIN:
        out += coord(r)
    for _ in range(count):
        if op == QUERY:
            out += box(r, False)
        elif op == RAY:
            out += ray(r)
        else:
            out += coord(r) + coord(r)
    return out


def seq(seed, first, n_ops, weights, points=False):
    r = random.Random(seed)
    out = [first]
    ops = list(weights)
    for _ in range(n_ops):
        op = r.choices(ops, [weights[o] for o in ops])[0]
        if op == INSERT:
            # Ops INSERT to INSERT_OWN all insert (INSERT_OWN: the layered index's insert_static).
            out.append(INSERT + r.randrange(OP["INSERT_OWN"] - INSERT + 1))
            out += element(r, points, r.random() < 0.9)
            continue
        if op in (QUERY, NEAREST, WITHIN, RAY) and r.random() < 0.1:
            out += batch(r, op, points)
            continue
        out.append(op)
        if op == REMOVE:
            out += [r.randrange(256), r.randrange(256)]
        elif op == UPDATE:
            out += element(r, points) + [r.randrange(256), r.randrange(256)]
        elif op == CLEAR:
            out += [r.randrange(32)]
        elif op in (QUERY, NEAREST, WITHIN, RAY):
            out += read(r, op)
        elif op == STALE:
            out += [r.randrange(256), r.randrange(256)] + box(r)
    return bytes(out)


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "seed-*")):
        os.remove(old)
    every = {INSERT: 8, REMOVE: 2, UPDATE: 4, MAINTAIN: 1, CLEAR: 0.2, QUERY: 2, NEAREST: 2,
             WITHIN: 2, RAY: 2, STALE: 1, PAIRS: 1}
    build = {INSERT: 10, QUERY: 1, PAIRS: 1, RAY: 1}
    churn = {INSERT: 3, REMOVE: 3, UPDATE: 6, MAINTAIN: 2, PAIRS: 1, NEAREST: 1}
    kinds = [("every", every), ("build", build), ("churn", churn)]
    for i in range(12):
        kind, weights = kinds[i % 3]
        data = seq(i, i % 4, 40 + 30 * i, weights)
        with open(os.path.join(OUT, f"seed-{i:02}-{kind}"), "wb") as f:
            f.write(data)
    for t, name in enumerate(targets()):
        data = seq(100 + t, t, 200, every, points=name.startswith("kdtree"))
        with open(os.path.join(OUT, f"seed-t-{name}"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
