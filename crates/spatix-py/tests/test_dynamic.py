"""The eight dynamic structures against numpy brute force, over random operation sequences."""

import zlib

import numpy as np
import pytest

import spatix
from oracle import WORLD, all_pairs, check_nearest, degenerate_sets, random_boxes, window_hits

# (name, constructor, largest half-size the structure accepts or None)
STRUCTURES = [
    ("UniformGrid", lambda dtype: spatix.UniformGrid(WORLD, 4.0, dtype=dtype), None),
    (
        "UniformGrid.auto",
        lambda dtype: spatix.UniformGrid(WORLD, sample=random_boxes(np.random.default_rng(1), 50), dtype=dtype),
        None,
    ),
    ("LooseGrid", lambda dtype: spatix.LooseGrid(WORLD, 4.0, dtype=dtype), None),
    ("PointGrid", lambda dtype: spatix.PointGrid(WORLD, 3.0, dtype=dtype), 3.0),
    ("HierarchicalGrid", lambda dtype: spatix.HierarchicalGrid(WORLD, 2.0, dtype=dtype), None),
    ("Quadtree", lambda dtype: spatix.Quadtree(WORLD, 4.0, dtype=dtype), None),
    ("LooseQuadtree", lambda dtype: spatix.LooseQuadtree(WORLD, 4.0, dtype=dtype), None),
    ("MxCifQuadtree", lambda dtype: spatix.MxCifQuadtree(WORLD, dtype=dtype), None),
    ("Layered", lambda dtype: spatix.Layered(WORLD, 2.0, dtype=dtype), None),
]
IDS = [s[0] for s in STRUCTURES]


def batches(rng, max_half):
    """Boxes to insert or move to, from every data set (sizes the structure accepts)."""
    sets = list(degenerate_sets(rng).values()) + [random_boxes(rng, 200)]
    while True:
        boxes = sets[rng.integers(len(sets))]
        pick = boxes[rng.integers(0, len(boxes), rng.integers(1, 40))]
        if max_half is not None:
            half = (pick[:, 2:] - pick[:, :2]) / 2
            pick = pick[(half <= max_half).all(axis=1)]
        if len(pick):
            yield pick


def check_against_brute_force(index, live, rng, cast):
    ids = np.array(list(live.keys()), dtype=np.int64)
    boxes = np.array(list(live.values())).reshape(-1, 4)
    assert len(index) == len(live)
    pairs = index.pairs()
    assert pairs.shape == (len(pairs), 2) and pairs.dtype == np.int64
    got = set(map(tuple, pairs.tolist()))
    assert len(got) == len(pairs), "each pair once"
    assert got == all_pairs(boxes, ids)
    # On two threads (each listing the pairs it finds): the same pairs, each once.
    threaded = index.pairs(workers=2)
    assert threaded.shape == pairs.shape and threaded.dtype == np.int64
    assert sorted(map(tuple, threaded.tolist())) == sorted(got)
    windows = np.vstack([random_boxes(rng, 15, half=(0.0, 20.0)), boxes[:3]])
    w, found = index.query(windows)
    hits = set(zip(w.tolist(), found.tolist()))
    assert len(hits) == len(w), "each hit once"
    assert hits == window_hits(boxes, windows, ids)
    # Query points in the index's precision, so that the brute force sees the same ones.
    points = rng.uniform(-10, 110, (8, 2)).astype(cast).astype(np.float64)
    for k in (1, 3):
        d, n = index.nearest(points, k)
        check_nearest(boxes, points, k, d, n, names=ids, missing=-1, atol=1e-4 if cast == np.float32 else 1e-9)


@pytest.mark.parametrize("name,make,max_half", STRUCTURES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_random_operations_match_brute_force(name, make, max_half, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    index = make(dtype)
    assert index.dtype == dtype and len(index) == 0
    cast = np.float32 if dtype == "float32" else np.float64
    live = {}
    source = batches(rng, max_half)
    for step in range(30):
        op = rng.choice(["insert", "insert", "update", "remove", "maintain", "clear"], p=[0.3, 0.2, 0.25, 0.15, 0.07, 0.03])
        if op == "insert" or not live:
            boxes = next(source).astype(cast)
            ids = index.insert(boxes)
            assert ids.dtype == np.int64 and len(ids) == len(boxes)
            assert not set(ids.tolist()) & set(live), "fresh ids"
            live.update(zip(ids.tolist(), boxes.astype(np.float64)))
        elif op == "update":
            chosen = rng.choice(list(live), size=rng.integers(1, len(live) + 1), replace=False)
            boxes = next(source)
            boxes = boxes[rng.integers(0, len(boxes), len(chosen))].astype(cast)
            index.update(chosen, boxes)
            live.update(zip(chosen.tolist(), boxes.astype(np.float64)))
        elif op == "remove":
            chosen = rng.choice(list(live), size=rng.integers(1, len(live) + 1), replace=False)
            index.remove(chosen)
            for i in chosen.tolist():
                del live[i]
            with pytest.raises(KeyError):
                index.remove(chosen[:1])
        elif op == "maintain":
            index.maintain()
        else:
            index.clear()
            live.clear()
        check_against_brute_force(index, live, rng, cast)


@pytest.mark.parametrize("name,make,max_half", STRUCTURES, ids=IDS)
def test_bad_input_changes_nothing(name, make, max_half):
    rng = np.random.default_rng(3)
    index = make("float64")
    boxes = random_boxes(rng, 50)
    ids = index.insert(boxes)
    before = (index.pairs().tolist(), index.query([WORLD]))

    def unchanged():
        assert len(index) == 50
        assert index.pairs().tolist() == before[0]
        after = index.query([WORLD])
        assert after[1].tolist() == before[1][1].tolist()

    bad = boxes.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="boxes row 2"):
        index.insert(bad)
    unchanged()
    bad = boxes[:5].copy()
    bad[3] = [5.0, 5.0, 4.0, 6.0]  # min_x > max_x
    with pytest.raises(ValueError, match="boxes row 3"):
        index.update(ids[:5], bad)
    unchanged()
    with pytest.raises(ValueError, match="3 ids but 2 boxes"):
        index.update(ids[:3], boxes[:2])
    unchanged()
    with pytest.raises(ValueError, match="shape"):
        index.insert(np.zeros((3, 2)))
    unchanged()

    index.remove(ids[:1])
    stale = ids[0]
    with pytest.raises(KeyError, match=r"ids\[2\]"):
        index.update([ids[5], ids[6], stale], boxes[:3])
    with pytest.raises(KeyError, match=r"ids\[1\]"):
        index.remove([ids[7], stale, ids[8]])
    with pytest.raises(KeyError, match="repeats"):
        index.remove([ids[7], ids[8], ids[7]])
    assert len(index) == 49
    other = make("float64")
    foreign = other.insert(boxes[:1])
    with pytest.raises(KeyError):
        index.remove(foreign)
    assert len(index) == 49
    if max_half is not None:
        big = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 50.0, 50.0]])
        with pytest.raises(ValueError, match="boxes row 1.*larger"):
            index.insert(big)
        assert len(index) == 49


def test_constructor_errors():
    with pytest.raises(ValueError, match="world"):
        spatix.UniformGrid((0.0, 0.0, -1.0, 1.0), 1.0)
    with pytest.raises(ValueError, match="world"):
        spatix.Quadtree((0.0, 0.0, np.nan, 1.0))
    with pytest.raises(ValueError, match="dtype"):
        spatix.LooseGrid(WORLD, 1.0, dtype="int32")
    with pytest.raises(ValueError, match="size"):
        spatix.UniformGrid(WORLD, -1.0)
    with pytest.raises(ValueError, match="threshold"):
        spatix.Layered(WORLD)
    with pytest.raises(ValueError, match="sample row 0"):
        spatix.LooseGrid(WORLD, sample=[[1.0, 1.0, 0.0, 0.0]])
    with pytest.raises(TypeError):
        spatix.DynamicIndex()


def test_ids_are_handles_that_go_stale():
    grid = spatix.UniformGrid(WORLD, 5.0)
    first = grid.insert([[1.0, 1.0, 2.0, 2.0]])
    grid.remove(first)
    second = grid.insert([[1.0, 1.0, 2.0, 2.0]])
    assert first[0] != second[0], "a reused slot gets a new generation"
    with pytest.raises(KeyError):
        grid.remove(first)
    assert len(grid) == 1
    assert "UniformGrid" in repr(grid) and isinstance(grid, spatix.DynamicIndex)
