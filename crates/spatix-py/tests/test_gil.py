"""Calls that do real work release the GIL: Python code runs in another thread meanwhile.

The main thread waits until a worker thread is about to enter a long spatix call, then runs
a fixed amount of pure-Python work and records whether the worker's call was still running
when that work was done. Had the call held the GIL, the main thread could not have run
during it at all, so the worker would have finished first.
"""

import threading

import numpy as np
import pytest

import spatix

rng = np.random.default_rng(5)
POINTS = rng.uniform(0, 1000, (400_000, 2))
BOXES = np.hstack([POINTS - 1.0, POINTS + 1.0])


def overlaps(call):
    started = threading.Event()
    done = threading.Event()

    def worker():
        started.set()
        call()
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait()
    total = 0
    for i in range(300_000):  # pure Python: needs the GIL throughout
        total += i
    overlapped = not done.is_set()
    thread.join()
    return overlapped


TREE = spatix.KdTree(POINTS)
PACKED = spatix.PackedIndex(BOXES)


@pytest.mark.parametrize(
    "call",
    [
        lambda: [TREE.query(POINTS, k=8) for _ in range(3)],
        lambda: [spatix.KdTree(POINTS) for _ in range(4)],
        lambda: [PACKED.pairs() for _ in range(4)],
        lambda: [PACKED.query(BOXES[:200_000] * 2) for _ in range(3)],
        lambda: [spatix.LooseGrid((0, 0, 1000, 1000), 8.0).insert(BOXES) for _ in range(4)],
    ],
    ids=["KdTree.query", "KdTree()", "PackedIndex.pairs", "PackedIndex.query", "LooseGrid.insert"],
)
def test_python_runs_while_spatix_works(call):
    assert overlaps(call)
