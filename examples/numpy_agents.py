"""Moving agents from numpy: a frame loop over a spatix.SweepGrid.

Agents live in numpy arrays indexed by agent number (positions, velocities, half-sizes);
the grid names each agent by the id ``insert`` gave it, kept in ``ids[agent]``. Each frame:

1. step every agent in numpy (move, bounce off the walls);
2. ``grid.update(ids, boxes)``: the whole frame in one call, one walk of the grid;
3. ``grid.pairs()``: every colliding pair, as ids; ``np.searchsorted`` turns them back
   into agent numbers;

and, for comparison, ``spatix.pairs(boxes)``: the same pairs as agent numbers straight from
the boxes, with no index kept between frames. Per-frame timings are printed. With
matplotlib installed, the last frame is saved as a picture (``--picture``).

    python examples/numpy_agents.py --agents 100000 --frames 10 --workers 2
"""

import argparse
import time

import numpy as np

import spatix


def boxes_of(pos, half):
    """``(n, 4)`` boxes ``min_x, min_y, max_x, max_y`` around the agents."""
    return np.hstack([pos - half, pos + half])


def step(pos, vel, size, dt):
    """Moves the agents by ``vel * dt``, bouncing them off the walls of ``[0, size]^2``."""
    pos += vel * dt
    out = (pos < 0.0) | (pos > size)
    vel[out] = -vel[out]
    np.clip(pos, 0.0, size, out=pos)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--frames", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1, help="threads for the pair pass (-1: every core)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--picture", default="numpy_agents.png", help="where to save the last frame")
    parser.add_argument("--no-picture", action="store_true", help="save no picture")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    n = args.agents
    dtype = np.dtype(args.dtype)
    # About 2% of the area covered: a few neighbours each, as in a crowd.
    size = np.sqrt(n) * 10.0
    pos = rng.uniform(0.0, size, (n, 2)).astype(dtype)
    vel = rng.normal(0.0, 3.0, (n, 2)).astype(dtype)
    half = rng.uniform(0.5, 1.5, (n, 1)).astype(dtype)

    boxes = boxes_of(pos, half)
    grid = spatix.SweepGrid((0.0, 0.0, size, size), sample=boxes, dtype=dtype)
    ids = grid.insert(boxes)  # ids[agent]
    by_id = np.argsort(ids)  # agent numbers in id order, for searchsorted
    print(f"{n} agents, {args.dtype}, {args.workers} worker(s), world {size:.0f} x {size:.0f}")
    print("frame      step    update     pairs  spatix.pairs   pairs")
    for frame in range(args.frames):
        t0 = time.perf_counter()
        step(pos, vel, size, 0.1)
        boxes = boxes_of(pos, half)
        t1 = time.perf_counter()
        grid.update(ids, boxes)
        t2 = time.perf_counter()
        pairs = by_id[np.searchsorted(ids, grid.pairs(workers=args.workers), sorter=by_id)]
        t3 = time.perf_counter()
        direct = spatix.pairs(boxes, workers=args.workers)
        t4 = time.perf_counter()
        assert len(direct) == len(pairs)
        print(
            f"frame {frame:<4} {1e3 * (t1 - t0):6.1f}ms {1e3 * (t2 - t1):7.1f}ms {1e3 * (t3 - t2):7.1f}ms"
            f" {1e3 * (t4 - t3):11.1f}ms {len(pairs):7}"
        )

    if args.no_picture or args.frames < 1:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture")
        return
    colliding = np.zeros(n, dtype=bool)
    colliding[direct.ravel()] = True
    shown = slice(0, min(n, 20_000))
    fig, ax = plt.subplots(figsize=(8, 8))
    ax.scatter(*pos[shown].T, s=1, c=np.where(colliding[shown], "tab:red", "tab:blue"))
    ax.set_title(f"frame {args.frames - 1}: agents in a collision in red")
    ax.set_aspect("equal")
    fig.savefig(args.picture, dpi=100)
    print(f"saved {args.picture}")


if __name__ == "__main__":
    main()
