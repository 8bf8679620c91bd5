"""Reading an index back: ids(), boxes(), iteration and membership, after random changes,
against the boxes the test itself keeps."""

import numpy as np
import pytest

import spatix
from oracle import WORLD

DYNAMIC = [spatix.UniformGrid, spatix.LooseGrid, spatix.HierarchicalGrid, spatix.Quadtree, spatix.LooseQuadtree, spatix.MxCifQuadtree, spatix.Layered]


@pytest.mark.parametrize("cls", DYNAMIC)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dynamic_boxes_and_ids_follow_the_changes(cls, dtype):
    rng = np.random.default_rng(8)
    lo = rng.uniform(0, 95, (200, 2))
    boxes = np.hstack([lo, lo + rng.uniform(0, 4, (200, 2))]).astype(dtype)
    index = cls(WORLD, sample=boxes, dtype=dtype)
    ids = index.insert(boxes)
    kept = dict(zip(ids.tolist(), boxes.tolist()))
    moved = ids[::3]
    new = boxes[::3] + dtype(1.0)
    index.update(moved, new)
    kept.update(zip(moved.tolist(), new.tolist()))
    gone = ids[1::4]
    index.remove(gone)
    for i in gone.tolist():
        kept.pop(i)
    listed = index.ids()
    assert listed.dtype == np.int64 and sorted(listed.tolist()) == sorted(kept)
    assert list(index) == listed.tolist() and len(index) == len(kept)
    every = index.boxes()
    assert every.dtype == dtype and every.shape == (len(kept), 4)
    np.testing.assert_array_equal(every, np.array([kept[i] for i in listed.tolist()], dtype=dtype))
    some = listed[::-5]
    np.testing.assert_array_equal(index.boxes(some), np.array([kept[i] for i in some.tolist()], dtype=dtype))
    assert int(listed[0]) in index and int(gone[0]) not in index
    with pytest.raises(KeyError, match=r"ids\[1\]"):
        index.boxes([int(listed[0]), int(gone[0])])


def test_packed_boxes_are_the_input():
    rng = np.random.default_rng(9)
    lo = rng.uniform(0, 95, (300, 2))
    boxes = np.hstack([lo, lo + 2.0])
    index = spatix.PackedIndex(boxes)
    np.testing.assert_array_equal(index.ids(), np.arange(300))
    np.testing.assert_array_equal(index.boxes(), boxes)
    np.testing.assert_array_equal(index.boxes([5, 0, 299]), boxes[[5, 0, 299]])
    for bad in ([300], [-1]):
        with pytest.raises(KeyError):
            index.boxes(bad)


def test_pairs_sorted_on_request():
    rng = np.random.default_rng(10)
    lo = rng.uniform(0, 95, (400, 2))
    boxes = np.hstack([lo, lo + 4.0])
    packed = spatix.PackedIndex(boxes)
    unsorted = packed.pairs()
    got = packed.pairs(sort=True)
    np.testing.assert_array_equal(got, unsorted[np.lexsort((unsorted[:, 1], unsorted[:, 0]))])
    np.testing.assert_array_equal(got, spatix.pairs(boxes))
    grid = spatix.LooseGrid(WORLD, sample=boxes)
    ids = grid.insert(boxes)
    for workers in (1, 2):
        pairs = grid.pairs(workers=workers, sort=True)
        assert pairs.tolist() == sorted(pairs.tolist())
        assert len(pairs) == len(got)
