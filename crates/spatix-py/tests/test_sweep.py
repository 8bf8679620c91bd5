"""SweepGrid (its bulk update included) and spatix.pairs against numpy brute force, and the
numpy agents example."""

import pathlib
import pickle
import subprocess
import sys
import zlib

import numpy as np
import pytest

import spatix
from oracle import WORLD, all_pairs, check_nearest, degenerate_sets, random_boxes, window_hits

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "numpy_agents.py"

GRIDS = [
    ("band_height", lambda dtype: spatix.SweepGrid(WORLD, 4.0, dtype=dtype)),
    ("sample", lambda dtype: spatix.SweepGrid(WORLD, sample=random_boxes(np.random.default_rng(1), 50), dtype=dtype)),
    ("no sample", lambda dtype: spatix.SweepGrid(WORLD, dtype=dtype)),
]


def brute_pairs(boxes):
    """Every intersecting pair of rows ``i < j``, sorted, as an ``(m, 2)`` int64 array."""
    found = sorted(all_pairs(np.asarray(boxes, dtype=np.float64)))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def check(index, live, rng, cast):
    ids = np.array(list(live), dtype=np.int64)
    boxes = np.array(list(live.values())).reshape(-1, 4)
    assert len(index) == len(live)
    pairs = index.pairs()
    got = set(map(tuple, pairs.tolist()))
    assert len(got) == len(pairs), "each pair once"
    assert got == all_pairs(boxes, ids)
    assert sorted(map(tuple, index.pairs(workers=2).tolist())) == sorted(got)
    windows = np.vstack([random_boxes(rng, 15, half=(0.0, 20.0)), boxes[:3]])
    w, found = index.query(windows)
    hits = set(zip(w.tolist(), found.tolist()))
    assert len(hits) == len(w), "each hit once"
    assert hits == window_hits(boxes, windows, ids)
    w2, found2 = index.query(windows, workers=2)
    assert w2.tolist() == w.tolist() and sorted(zip(w2.tolist(), found2.tolist())) == sorted(hits)
    points = rng.uniform(-10, 110, (8, 2)).astype(cast).astype(np.float64)
    for k in (1, 3):
        d, n = index.nearest(points, k)
        check_nearest(boxes, points, k, d, n, names=ids, missing=-1, atol=1e-4 if cast == np.float32 else 1e-9)
        d2, _ = index.nearest(points, k, workers=2)
        np.testing.assert_array_equal(d2, d)


@pytest.mark.parametrize("name,make", GRIDS, ids=[g[0] for g in GRIDS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_random_operations_match_brute_force(name, make, dtype):
    rng = np.random.default_rng(zlib.crc32(f"sweep {name} {dtype}".encode()))
    grid = make(dtype)
    assert isinstance(grid, spatix.DynamicIndex) and grid.dtype == dtype and len(grid) == 0
    cast = np.float32 if dtype == "float32" else np.float64
    sets = list(degenerate_sets(rng).values()) + [random_boxes(rng, 300)]
    live = {}
    for step in range(40):
        op = rng.choice(
            ["insert", "update", "bulk", "frame", "remove", "maintain", "clear"],
            p=[0.25, 0.15, 0.2, 0.15, 0.13, 0.08, 0.04],
        )
        source = sets[rng.integers(len(sets))]
        if op == "insert" or not live:
            boxes = source[rng.integers(0, len(source), rng.integers(1, 60))].astype(cast)
            ids = grid.insert(boxes)
            assert not set(ids.tolist()) & set(live), "fresh ids"
            live.update(zip(ids.tolist(), boxes.astype(np.float64)))
        elif op in ("update", "bulk"):
            # "update": a few elements, one by one; "bulk": most of them, in one walk.
            size = rng.integers(1, 4) if op == "update" else rng.integers(len(live) // 2 + 1, len(live) + 1)
            chosen = rng.choice(list(live), size=min(size, len(live)), replace=False)
            boxes = source[rng.integers(0, len(source), len(chosen))].astype(cast)
            grid.update(chosen, boxes)
            live.update(zip(chosen.tolist(), boxes.astype(np.float64)))
        elif op == "frame":
            # Every element moves a little, as agents do, in id order.
            ids = np.array(sorted(live), dtype=np.int64)
            boxes = np.array([live[i] for i in ids.tolist()]) + rng.uniform(-2, 2, (len(ids), 1))
            boxes = boxes.astype(cast)
            grid.update(ids, boxes)
            live.update(zip(ids.tolist(), boxes.astype(np.float64)))
        elif op == "remove":
            chosen = rng.choice(list(live), size=rng.integers(1, len(live) + 1), replace=False)
            grid.remove(chosen)
            for i in chosen.tolist():
                del live[i]
        elif op == "maintain":
            grid.maintain()
        else:
            grid.clear()
            live.clear()
        check(grid, live, rng, cast)


def test_bulk_update_errors_change_nothing():
    rng = np.random.default_rng(7)
    grid = spatix.SweepGrid(WORLD, 5.0)
    boxes = random_boxes(rng, 100)
    ids = grid.insert(boxes)
    before = grid.pairs().tolist()

    def unchanged():
        assert len(grid) == 100
        assert grid.pairs().tolist() == before
        assert sorted(grid.query([WORLD])[1].tolist()) == sorted(ids.tolist())

    moved = boxes + 1.0
    for row, value, why in [(40, np.nan, "NaN"), (41, np.inf, "infinite")]:
        bad = moved.copy()
        bad[row, 2] = value
        with pytest.raises(ValueError, match=f"boxes row {row}.*{why}"):
            grid.update(ids, bad)
        unchanged()
    bad = moved.copy()
    bad[42] = [5.0, 5.0, 4.0, 6.0]
    with pytest.raises(ValueError, match="boxes row 42.*min_x > max_x"):
        grid.update(ids, bad)
    unchanged()
    with pytest.raises(ValueError, match="100 ids but 99 boxes"):
        grid.update(ids, moved[:99])
    unchanged()
    with pytest.raises(ValueError, match="shape"):
        grid.update(ids, moved[:, :2])
    unchanged()
    with pytest.raises(ValueError, match="boxes"):
        grid.update(ids, np.full((100, 4), "x"))
    unchanged()

    other = spatix.SweepGrid(WORLD, 5.0)
    foreign = other.insert(boxes[:1])
    with pytest.raises(KeyError, match=r"ids\[99\]"):
        grid.update(np.append(ids[:99], foreign), moved)
    unchanged()
    with pytest.raises(KeyError, match="repeats"):
        grid.update(np.append(ids[:99], ids[0]), moved)
    unchanged()
    grid.remove(ids[:1])
    with pytest.raises(KeyError, match=r"ids\[0\]"):
        grid.update(ids[:99], moved[:99])
    assert len(grid) == 99
    # Lists are taken as arrays.
    grid.update(ids[1:].tolist(), moved[1:].tolist())
    assert sorted(grid.query([WORLD])[1].tolist()) == sorted(ids[1:].tolist())
    assert set(map(tuple, grid.pairs().tolist())) == all_pairs(moved[1:], ids[1:])


def test_constructor_and_pickle():
    with pytest.raises(ValueError, match="band height"):
        spatix.SweepGrid(WORLD, 0.0)
    with pytest.raises(ValueError, match="size"):
        spatix.SweepGrid(WORLD, -1.0)
    with pytest.raises(ValueError, match="world"):
        spatix.SweepGrid((0.0, 0.0, -1.0, 1.0), 1.0)
    with pytest.raises(ValueError, match="sample row 0"):
        spatix.SweepGrid(WORLD, sample=[[1.0, 1.0, 0.0, 0.0]])
    rng = np.random.default_rng(11)
    for dtype in ("float32", "float64"):
        grid = spatix.SweepGrid(WORLD, 6.0, dtype=dtype)
        boxes = random_boxes(rng, 80).astype(dtype)
        ids = grid.insert(boxes)
        grid.remove(ids[:5])
        copy = pickle.loads(pickle.dumps(grid))
        assert type(copy) is spatix.SweepGrid and copy.dtype == dtype and len(copy) == 75
        assert sorted(map(tuple, copy.pairs().tolist())) == sorted(map(tuple, grid.pairs().tolist()))
        copy.update(ids[5:], boxes[5:] + 1)
        with pytest.raises(KeyError):
            copy.remove(ids[:1])
        assert sorted(spatix.SweepGrid.from_bytes(grid.to_bytes()).query([WORLD])[1].tolist()) == sorted(ids[5:].tolist())
        assert "SweepGrid" in repr(grid)
    with pytest.raises(ValueError, match="SweepGrid.from_bytes"):
        spatix.SweepGrid.from_bytes(spatix.UniformGrid(WORLD, 1.0).to_bytes())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pairs_matches_brute_force(dtype):
    rng = np.random.default_rng(zlib.crc32(f"pairs {dtype}".encode()))
    sets = degenerate_sets(rng)
    sets["random"] = random_boxes(rng, 500)
    sets["one"] = random_boxes(rng, 1)
    sets["wide"] = random_boxes(rng, 300, spread=(-1e6, -5.0, 1e6, 5.0), half=(0.0, 2e4))
    for name, boxes in sets.items():
        boxes = boxes.astype(dtype)
        expected = brute_pairs(boxes)
        got = spatix.pairs(boxes)
        assert got.dtype == np.int64 and got.shape == expected.shape, name
        np.testing.assert_array_equal(got, expected, err_msg=name)
        for workers in (2, -1):
            np.testing.assert_array_equal(spatix.pairs(boxes, workers=workers), expected, err_msg=name)


def test_pairs_precision_follows_the_dtype():
    # 1 + 2^-30 is 1 in float32: the boxes touch there, and are apart in float64.
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [1.0 + 2.0**-30, 0.0, 2.0, 1.0]])
    assert spatix.pairs(boxes).tolist() == []
    assert spatix.pairs(boxes.astype(np.float32)).tolist() == [[0, 1]]
    assert spatix.pairs(boxes.tolist()).tolist() == [], "lists are float64"
    assert spatix.pairs(boxes.astype(np.int32)).tolist() == [[0, 1]]


def test_pairs_input_errors():
    good = random_boxes(np.random.default_rng(5), 20)
    for empty in (np.zeros((0, 4)), np.zeros((0, 4), np.float32), [], np.zeros(0)):
        got = spatix.pairs(empty)
        assert got.shape == (0, 2) and got.dtype == np.int64
    bad = good.copy()
    bad[7, 3] = np.nan
    with pytest.raises(ValueError, match=r"boxes row 7 .*max_y is NaN"):
        spatix.pairs(bad)
    bad = good.astype(np.float32)
    bad[3] = [2.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="boxes row 3 .*min_x > max_x"):
        spatix.pairs(bad)
    bad = good.copy()
    bad[19, 0] = -np.inf
    with pytest.raises(ValueError, match="boxes row 19 .*infinite"):
        spatix.pairs(bad)
    for shape in [(5, 2), (4,), (2, 4, 1)]:
        with pytest.raises(ValueError, match=r"boxes must be an array of shape \(n, 4\)"):
            spatix.pairs(np.zeros(shape))
    with pytest.raises(ValueError, match="boxes"):
        spatix.pairs(np.array([["a", "b", "c", "d"]]))
    with pytest.raises(ValueError, match="boxes"):
        spatix.pairs([[0, 0, 1], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match="workers"):
        spatix.pairs(good, workers=0)
    # A non-contiguous view and a list give the same answer as the array.
    wide = np.hstack([good, good])[:, :4]
    np.testing.assert_array_equal(spatix.pairs(wide), brute_pairs(good))
    np.testing.assert_array_equal(spatix.pairs(good.tolist()), brute_pairs(good))


def test_example_runs():
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--agents", "500", "--frames", "3", "--no-picture"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "frame 2" in result.stdout and "pairs" in result.stdout


def test_readme_agents_example_runs():
    readme = pathlib.Path(__file__).resolve().parents[3] / "README.md"
    section = readme.read_text().split("### Moving agents from numpy", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})


def test_ordered_insert_keeps_ids_by_row():
    # A large insert is stored band by band; the ids still name the rows in input order.
    rng = np.random.default_rng(13)
    boxes = random_boxes(rng, 2000)
    grid = spatix.SweepGrid(WORLD, sample=boxes)
    ids = grid.insert(boxes)
    assert len(set(ids.tolist())) == 2000
    np.testing.assert_array_equal(grid.boxes(ids), boxes)
    assert set(grid.ids().tolist()) == set(ids.tolist()) and ids[0] in grid
    moved = boxes + rng.uniform(-1, 1, (2000, 1))
    grid.update(ids[::-1], moved[::-1])
    np.testing.assert_array_equal(grid.boxes(ids), moved)
    more = random_boxes(rng, 10)  # a small batch: as given
    np.testing.assert_array_equal(grid.boxes(grid.insert(more)), more)
