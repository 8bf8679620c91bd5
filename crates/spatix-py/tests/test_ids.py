"""The caller's own ids on every dynamic index (``insert(boxes, ids=...)``) against numpy
brute force over random operation sequences: every answer, update, remove, boxes(ids) and
ids() in those ids, kept through pickling; repeated, present or mixed ids refused before
anything changes."""

import pickle
import zlib

import numpy as np
import pytest

import spatix
from oracle import WORLD, all_pairs, check_nearest, random_boxes, window_hits

STRUCTURES = [
    ("UniformGrid", lambda: spatix.UniformGrid(WORLD, 4.0)),
    ("LooseGrid", lambda: spatix.LooseGrid(WORLD, 4.0)),
    ("PointGrid", lambda: spatix.PointGrid(WORLD, 3.0)),
    ("HierarchicalGrid", lambda: spatix.HierarchicalGrid(WORLD, 2.0)),
    ("Quadtree", lambda: spatix.Quadtree(WORLD, 4.0)),
    ("LooseQuadtree", lambda: spatix.LooseQuadtree(WORLD, 4.0)),
    ("MxCifQuadtree", lambda: spatix.MxCifQuadtree(WORLD)),
    ("Layered", lambda: spatix.Layered(WORLD, 2.0)),
    ("SweepGrid", lambda: spatix.SweepGrid(WORLD, 8.0)),
]
DTYPES = [np.int64, np.int32, np.uint16, np.int8, np.uint64]


def check(index, live, rng):
    ids = np.array(list(live), dtype=np.int64)
    boxes = np.array(list(live.values())).reshape(-1, 4)
    assert len(index) == len(live)
    assert sorted(index.ids().tolist()) == sorted(live)
    assert set(map(tuple, index.pairs().tolist())) == all_pairs(boxes, ids)
    assert set(map(tuple, index.pairs(workers=2).tolist())) == all_pairs(boxes, ids)
    windows = np.vstack([random_boxes(rng, 10, half=(0.0, 20.0)), boxes[:2]])
    w, found = index.query(windows)
    assert set(zip(w.tolist(), found.tolist())) == window_hits(boxes, windows, ids)
    if len(ids):
        np.testing.assert_array_equal(index.boxes(ids), boxes)
        assert int(ids[0]) in index
    points = rng.uniform(-10, 110, (6, 2))
    d, n = index.nearest(points, 2)
    check_nearest(boxes, points, 2, d, n, names=ids, missing=-1)


@pytest.mark.parametrize("name,make", STRUCTURES, ids=[s[0] for s in STRUCTURES])
def test_caller_ids_match_brute_force(name, make):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    index = make()
    live = {}
    used = set()
    for step in range(25):
        op = rng.choice(["insert", "update", "remove"], p=[0.45, 0.35, 0.2])
        if op == "insert" or not live:
            boxes = random_boxes(rng, int(rng.integers(1, 30)))
            dtype = DTYPES[rng.integers(len(DTYPES))]
            top = min(np.iinfo(dtype).max, 2**40)
            drawn = dict.fromkeys(rng.integers(0, top, 3 * len(boxes), dtype=np.uint64).tolist())
            fresh = [i for i in drawn if i not in used]
            ids = np.array(fresh[: len(boxes)], dtype=dtype)
            boxes = boxes[: len(ids)]
            got = index.insert(boxes, ids=ids)
            assert got.dtype == np.int64 and got.tolist() == ids.astype(np.int64).tolist()
            used.update(got.tolist())
            live.update(zip(got.tolist(), boxes))
        elif op == "update":
            chosen = rng.choice(list(live), size=rng.integers(1, len(live) + 1), replace=False)
            boxes = random_boxes(rng, len(chosen))
            index.update(chosen, boxes)
            live.update(zip(chosen.tolist(), boxes))
        else:
            chosen = rng.choice(list(live), size=rng.integers(1, len(live) + 1), replace=False)
            index.remove(chosen)
            for i in chosen.tolist():
                del live[i]
            with pytest.raises(KeyError):
                index.remove(chosen[:1])
        check(index, live, rng)
    for copy in (pickle.loads(pickle.dumps(index)), type(index).from_bytes(index.to_bytes())):
        check(copy, live, rng)
        fresh = max(used) + 1
        copy.insert([[1.0, 1.0, 2.0, 2.0]], ids=[fresh])
        assert fresh in copy and fresh not in index


def test_bad_ids_change_nothing():
    grid = spatix.UniformGrid(WORLD, 4.0)
    boxes = random_boxes(np.random.default_rng(1), 5)
    grid.insert(boxes, ids=[5, 6, 7, 8, 9])
    before = grid.query([WORLD]).tolist()
    with pytest.raises(ValueError, match=r"ids\[2\] = 7 is already in the index"):
        grid.insert(boxes[:3], ids=[1, 2, 7])
    with pytest.raises(ValueError, match=r"ids\[2\] = 1 repeats ids\[0\]"):
        grid.insert(boxes[:3], ids=[1, 2, 1])
    with pytest.raises(ValueError, match="2 ids but 3 boxes"):
        grid.insert(boxes[:3], ids=[1, 2])
    with pytest.raises(ValueError, match="pass ids="):
        grid.insert(boxes[:1])
    with pytest.raises(TypeError):
        grid.insert(boxes[:1], ids=["a"])
    bad = boxes[:2].copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="boxes row 1"):
        grid.insert(bad, ids=[1, 2])
    assert grid.query([WORLD]).tolist() == before and len(grid) == 5
    assert 1 not in grid and 2 not in grid
    with pytest.raises(KeyError):
        grid.update([4], boxes[:1])
    made_up = spatix.UniformGrid(WORLD, 4.0)
    made_up.insert(boxes)
    with pytest.raises(ValueError, match="made up"):
        made_up.insert(boxes[:1], ids=[1])
    assert len(made_up) == 5
    made_up.clear()
    assert made_up.insert(boxes[:1], ids=[3]).tolist() == [3]


def test_damaged_id_bytes_are_refused():
    grid = spatix.LooseGrid(WORLD, 4.0)
    grid.insert(random_boxes(np.random.default_rng(2), 20), ids=np.arange(100, 120))
    data = bytearray(grid.to_bytes())
    assert spatix.LooseGrid.from_bytes(bytes(data)).ids().tolist() == grid.ids().tolist()
    for at in (len(data) - 20, len(data) - 1, 12):
        broken = bytearray(data)
        broken[at] ^= 0x10
        with pytest.raises(ValueError, match="LooseGrid.from_bytes"):
            spatix.LooseGrid.from_bytes(bytes(broken))
    for cut in (len(data) - 1, 10, 20):
        with pytest.raises(ValueError, match="LooseGrid.from_bytes"):
            spatix.LooseGrid.from_bytes(bytes(data[:cut]))
