"""Every class's byte form: pickle, copy.deepcopy and from_bytes(to_bytes()) give an index that
answers every query as the original did, under the same ids; bad bytes raise ValueError."""

import concurrent.futures
import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import spatix
from oracle import WORLD, check_nearest, random_boxes

# (class, size argument, largest half-size the class accepts or None)
DYNAMIC = [
    (spatix.UniformGrid, 4.0, None),
    (spatix.LooseGrid, 4.0, None),
    (spatix.PointGrid, 3.0, 3.0),
    (spatix.HierarchicalGrid, 2.0, None),
    (spatix.Quadtree, 4.0, None),
    (spatix.LooseQuadtree, 4.0, None),
    (spatix.MxCifQuadtree, None, None),
    (spatix.Layered, 2.0, None),
]
DTYPES = ["float64", "float32"]


def loaders(index):
    """The index pickled, deep-copied, and loaded from its bytes."""
    return {
        "pickle": pickle.loads(pickle.dumps(index)),
        "deepcopy": copy.deepcopy(index),
        "from_bytes": type(index).from_bytes(index.to_bytes()),
    }


def pair_set(pairs):
    return set(map(tuple, pairs.tolist()))


def hit_set(hits):
    return set(zip(hits[0].tolist(), hits[1].tolist()))


def dynamic_index(cls, size, max_half, dtype, rng):
    """An index after inserts, moves and removals (so that it holds free slots); its live
    ``{id: box}`` and its removed ids."""
    index = cls(WORLD, size, dtype=dtype)
    big = None if max_half is not None else random_boxes(rng, 10, half=(10.0, 40.0))
    boxes = random_boxes(rng, 300)
    boxes = boxes if big is None else np.vstack([boxes, big])
    boxes = np.vstack([boxes, random_boxes(rng, 20, spread=(-200.0, -200.0, 300.0, 300.0))])
    boxes = boxes.astype(dtype)
    ids = index.insert(boxes)
    live = dict(zip(ids.tolist(), boxes.astype(np.float64)))
    removed = ids[rng.choice(len(ids), 80, replace=False)]
    index.remove(removed)
    for i in removed.tolist():
        del live[i]
    moved = np.array(list(live)[:30], dtype=np.int64)
    to = random_boxes(rng, len(moved)).astype(dtype)
    index.update(moved, to)
    live.update(zip(moved.tolist(), to.astype(np.float64)))
    return index, live, removed


@pytest.mark.parametrize("cls,size,max_half", DYNAMIC, ids=[d[0].__name__ for d in DYNAMIC])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dynamic_round_trip_keeps_answers_and_ids(cls, size, max_half, dtype):
    rng = np.random.default_rng(len(cls.__name__) * 7 + len(dtype))
    index, live, removed = dynamic_index(cls, size, max_half, dtype, rng)
    cast = np.float32 if dtype == "float32" else np.float64
    windows = random_boxes(rng, 40, half=(0.0, 15.0)).astype(cast)
    points = rng.uniform(-20, 120, (30, 2)).astype(cast)
    ids = np.array(list(live), dtype=np.int64)
    boxes = np.array(list(live.values()))
    for how, loaded in loaders(index).items():
        assert type(loaded) is cls and loaded.dtype == dtype and len(loaded) == len(index), how
        assert pair_set(loaded.pairs()) == pair_set(index.pairs()), how
        assert pair_set(loaded.pairs(workers=2)) == pair_set(index.pairs()), how
        assert hit_set(loaded.query(windows)) == hit_set(index.query(windows)), how
        for k in (1, 4):
            d, n = loaded.nearest(points, k)
            np.testing.assert_array_equal(d, index.nearest(points, k)[0], err_msg=how)
            check_nearest(
                boxes, points.astype(np.float64), k, d, n, names=ids, missing=-1, atol=1e-4 if dtype == "float32" else 1e-9
            )
        # The ids given out before still name the same elements: each live box finds itself.
        w, found = loaded.query(boxes.astype(cast))
        assert set(zip(w.tolist(), found.tolist())) >= {(i, int(x)) for i, x in enumerate(ids)}, how
        # Removed ids stay stale, and new ids are new.
        with pytest.raises(KeyError):
            loaded.remove(removed[:1])
        fresh = loaded.insert(random_boxes(rng, 5).astype(cast))
        assert not set(fresh.tolist()) & (set(removed.tolist()) | set(live)), how
        # Live ids can be moved and removed in the loaded index.
        loaded.update(ids[:3], np.tile(np.array([[500.0, 500.0, 501.0, 501.0]], dtype=cast), (3, 1)))
        assert set(loaded.query([[499.0, 499.0, 502.0, 502.0]])[1].tolist()) == set(ids[:3].tolist()), how
        loaded.remove(ids[:3])
        assert len(loaded) == len(index) + 5 - 3, how
    # Loading does not touch the original.
    assert len(index) == len(live)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_packed_index_round_trip_keeps_answers(dtype):
    rng = np.random.default_rng(3)
    boxes = np.vstack([random_boxes(rng, 2000), random_boxes(rng, 20, half=(10.0, 40.0))]).astype(dtype)
    windows = random_boxes(rng, 50, half=(0.0, 15.0)).astype(dtype)
    points = rng.uniform(-20, 120, (50, 2)).astype(dtype)
    index = spatix.PackedIndex(boxes)
    for how, loaded in loaders(index).items():
        assert type(loaded) is spatix.PackedIndex and loaded.dtype == index.dtype, how
        assert len(loaded) == len(index), how
        np.testing.assert_array_equal(loaded.pairs(), index.pairs(), err_msg=how)
        for a, b in zip(loaded.query(windows, workers=2), index.query(windows)):
            np.testing.assert_array_equal(a, b, err_msg=how)
        for k in (1, 5):
            for a, b in zip(loaded.nearest(points, k), index.nearest(points, k)):
                np.testing.assert_array_equal(a, b, err_msg=how)
        assert loaded.to_bytes() == index.to_bytes(), how


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kdtree_round_trip_keeps_radius_answers(dtype):
    rng = np.random.default_rng(4)
    tree = spatix.KdTree(rng.uniform(0, 100, (3000, 2)).astype(dtype), leafsize=8)
    queries = rng.uniform(-10, 110, (100, 2)).astype(dtype)
    for how, loaded in loaders(tree).items():
        for a, b in zip(loaded.query_radius(queries, 4.0), tree.query_radius(queries, 4.0)):
            np.testing.assert_array_equal(a, b, err_msg=how)


def every_class_bytes():
    """``{class name: (class, byte form)}`` for one small index of every class and dtype."""
    rng = np.random.default_rng(5)
    boxes = random_boxes(rng, 50)
    out = {}
    for dtype in DTYPES:
        out[f"KdTree {dtype}"] = (spatix.KdTree, spatix.KdTree(boxes[:, :2].astype(dtype)).to_bytes())
        out[f"PackedIndex {dtype}"] = (spatix.PackedIndex, spatix.PackedIndex(boxes.astype(dtype)).to_bytes())
        for cls, size, _ in DYNAMIC + [(spatix.SweepGrid, 4.0, None)]:
            index = cls(WORLD, size, dtype=dtype)
            index.remove(index.insert(boxes)[::3])
            out[f"{cls.__name__} {dtype}"] = (cls, index.to_bytes())
    return out


BYTES = every_class_bytes()


@pytest.mark.parametrize("name", list(BYTES))
def test_bad_bytes_raise_value_error(name):
    cls, data = BYTES[name]
    message = f"{cls.__name__}.from_bytes"
    rng = np.random.default_rng(len(data))
    bad = [b"", b"SPATIX", data[:6], data[:16], data[:17], data[:33], data[: len(data) // 2], data[:-1], data + b"\0"]
    bad += [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in (1, 40, len(data))]
    bad += [b"SPATIX" + bytes(rng.integers(0, 256, 200, dtype=np.uint8))]
    for i in range(33):  # every header byte flipped
        flipped = bytearray(data)
        flipped[i] ^= 0x5A
        bad.append(bytes(flipped))
    for other, (other_cls, other_data) in BYTES.items():
        if other_cls is not cls:
            bad.append(other_data)
    for b in bad:
        with pytest.raises(ValueError, match=message):
            cls.from_bytes(b)


FLIPS = 200


@pytest.mark.parametrize("name", list(BYTES))
def test_every_flipped_bit_is_refused(name):
    """200 random single bits flipped, one at a time: every one refused, by the checksum the
    byte form ends with (or, in the magic and the version, before it where the version is not
    one this build reads)."""
    cls, data = BYTES[name]
    rng = np.random.default_rng(39)
    refused = 0
    for bit in rng.integers(0, len(data) * 8, FLIPS).tolist():
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        # A flipped bit of the version makes another version: refused as such, or, if it is
        # one this build reads too (2), by the checksum.
        version = "(format version|checksum mismatch)"
        why = "not spatix bytes" if bit < 48 else version if bit < 64 else "checksum mismatch"
        with pytest.raises(ValueError, match=f"{cls.__name__}.from_bytes: corrupt bytes: {why}"):
            cls.from_bytes(bytes(flipped))
        refused += 1
    assert refused == FLIPS


def test_from_bytes_loads_the_saved_precision():
    for name, (cls, data) in BYTES.items():
        assert cls.from_bytes(data).dtype == name.split()[1]


def query_in_worker(index, windows):
    return index.query(windows)


def test_pickled_index_queries_in_other_processes():
    rng = np.random.default_rng(6)
    grid = spatix.UniformGrid(WORLD, 4.0, dtype="float32")
    ids = grid.insert(random_boxes(rng, 500).astype(np.float32))
    grid.remove(ids[::2])
    packed = spatix.PackedIndex(random_boxes(rng, 500))
    windows = [random_boxes(rng, 20, half=(0.0, 10.0)) for _ in range(4)]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        for index in (grid, packed):
            results = list(pool.map(query_in_worker, [index] * len(windows), windows))
            for got, w in zip(results, windows):
                assert hit_set(got) == hit_set(index.query(w))
