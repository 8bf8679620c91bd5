"""spatix: 2D spatial indexes for collision detection and proximity queries.

Arrays in, arrays out: points are ``(n, 2)`` arrays, boxes ``(n, 4)`` arrays of
``min_x, min_y, max_x, max_y`` (the layout of ``shapely.bounds``). Boxes are closed:
boxes that only touch intersect. ``float32`` input is indexed in ``float32``, any other
in ``float64`` (never rounded).

Static indexes, built once:

* :class:`KdTree` -- nearest neighbours and radius queries over points
  (``query`` returns what ``scipy.spatial.cKDTree.query`` does).
* :class:`PackedIndex` -- window queries, all intersecting pairs and nearest boxes.

Dynamic indexes (subclasses of :class:`DynamicIndex`), for boxes that come, move and go,
named by the ``int64`` ids ``insert`` returns: :class:`UniformGrid`, :class:`LooseGrid`,
:class:`PointGrid`, :class:`HierarchicalGrid`, :class:`Quadtree`, :class:`LooseQuadtree`,
:class:`MxCifQuadtree`, :class:`Layered` and :class:`SweepGrid` (the fastest for many
moving agents: ``update`` of a whole frame's ids and boxes is one walk of the grid).

:func:`pairs` -- every intersecting pair of an ``(n, 4)`` array of boxes, as sorted row
indices, in one call: for a set of boxes that changes every frame.

Every call that does real work releases the GIL; batch queries take ``workers=``
(threads; ``-1`` for every core) as scipy's do, and give the same answers on any number.
The threads for each count are started by the first call that asks for it and kept for
later calls; ``workers=1`` runs on the calling thread.

Every index pickles (and ``copy.deepcopy``s) through its byte form: ``index.to_bytes()``,
and ``type(index).from_bytes(data)``, which loads it in the precision it was saved in, its
ids (or positions) naming the same elements, and raises ``ValueError`` for bytes that are
not that class's. A pickled index can be sent to other processes and queried there.
"""

from ._spatix import (
    DynamicIndex,
    HierarchicalGrid,
    KdTree,
    Layered,
    LooseGrid,
    LooseQuadtree,
    MxCifQuadtree,
    PackedIndex,
    PointGrid,
    Quadtree,
    UniformGrid,
    __version__,
)
from ._spatix import SweepGrid, pairs

__all__ = [
    "DynamicIndex",
    "HierarchicalGrid",
    "KdTree",
    "Layered",
    "LooseGrid",
    "LooseQuadtree",
    "MxCifQuadtree",
    "PackedIndex",
    "PointGrid",
    "Quadtree",
    "UniformGrid",
    "SweepGrid",
    "pairs",
]
