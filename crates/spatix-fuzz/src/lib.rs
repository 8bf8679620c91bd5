//! Differential fuzzing of every spatix structure against `BruteForce`.
//!
//! [`run`] decodes an arbitrary byte string into a structure (its first byte picks one of
//! [`TARGETS`], unless [`PIN_VARIABLE`] names one) and a sequence of operations over
//! coordinates that include NaN, infinities, subnormals, ±MAX, values near the precision
//! limit of f32 and inverted boxes. Every operation is applied to the structure and to the
//! oracle; results are compared exactly, `check_invariants` runs after every step, and any
//! difference panics with a description (which is what the fuzzers catch, as they catch any
//! other panic or a hang).
//!
//! The dynamic structures get insert, remove, update, maintain, clear, query, pairs, nearest,
//! within, raycast and stale-handle misuse (the layered index also `insert_static`). The
//! static ones (`PackedIndex`, `KdTree`) get the same encoding read as edits of a data set:
//! each read builds the structure and the oracle from the current data set (if it changed),
//! so they are fuzzed through many builds, bad data sets (which must be refused with
//! `Error::InvalidAabb`) and handles of earlier builds. Reads with bit `0x80` set are batches
//! (`ParallelQuery`), each answer compared with the single query's. `kdtree-f32-through-bytes`
//! judges every tree after a round trip through its byte form; `kdtree-f64-bytes` and
//! `packed-f64-bytes` feed arbitrary and damaged byte forms to `KdTree::from_bytes` and
//! `PackedIndex::from_bytes` and to their views (`KdTreeView::open`, `PackedView::open`:
//! opened whenever the bytes load, then answering as the loaded structure), and
//! `dynamic-bytes` to every dynamic structure's (its first byte picks the structure); some with the checksum they end with made right again over the
//! damage, so that the checks behind the checksum are fuzzed too.
//!
//! Two drivers call it: the cargo-fuzz target in `fuzz/` (nightly, coverage-guided; see
//! `scripts/fuzz.sh`) and the `smoke` binary (stable: replays the committed corpus, then
//! mutates it at random for a fixed time), which CI runs.
//!
//! ```
//! // Insert a box, query it, list pairs: the grid and the oracle agree.
//! spatix_fuzz::run(&[2, 0, 10, 10, 20, 20, 5, 0, 0, 30, 30, 6]);
//! ```

mod built;
mod bytes;
mod decode;
mod dynamic;
// The conformance suite's exact arithmetic: the judge checks distances with it, not with the
// library's floating point.
#[path = "../../spatix/tests/conformance/exact.rs"]
mod exact;
mod judge;
mod op;

pub use built::drive as drive_built;

use std::ops::ControlFlow;
use std::sync::OnceLock;

use spatix::{
    Aabb, ByteForm, HierarchicalGrid, KdTree, KdTreeConfig, Layered, LooseGrid, LooseGridConfig,
    LooseQuadtree, MxCifQuadtree, PackedConfig, PackedIndex, ParallelPairs, Point, PointGrid,
    Quadtree, Scalar, SpatialQuery, SplitRule, SweepGrid, TreeConfig, UniformGrid,
};

use dynamic::Options;

/// The structures the fuzzer drives, by name; `run`'s first byte picks one (modulo the count).
pub const TARGETS: &[&str] = &[
    "quadtree-f32",
    "quadtree-f64-small-leaves",
    "grid-f32",
    "grid-f64-fine",
    "mxcif-f32",
    "mxcif-f64-threshold-one",
    "loose-quadtree-f32",
    "loose-quadtree-f64-small-leaves",
    "hierarchical-f32",
    "hierarchical-f64-factor-2",
    "points-f32",
    "points-f64-tight",
    "loose-grid-f32",
    "loose-grid-f64-fine",
    "layered-f32",
    "layered-f64",
    "sweep-f32",
    "sweep-f64-thin",
    "packed-f32",
    "packed-f64-node-2",
    "kdtree-f32",
    "kdtree-f64-bucket-2-cycle",
    "sweep-f32-parallel",
    "grid-f32-parallel",
    "loose-grid-f64-parallel",
    "hierarchical-f64-parallel",
    "points-f32-parallel",
    "packed-f32-parallel",
    "kdtree-f32-through-bytes",
    "kdtree-f64-bytes",
    "packed-f64-bytes",
    "dynamic-bytes",
    "layered-f32-parallel",
];

/// The environment variable that pins [`run`] to one target: set it to a name from
/// [`TARGETS`] and `run` ignores the input's first byte (still skipping it, so every corpus
/// file stays valid) and drives that target only.
pub const PIN_VARIABLE: &str = "SPATIX_FUZZ_TARGET";

/// The bound on half extents of the point grids the fuzzer drives (larger boxes must be
/// refused with `Error::BoxTooLarge`).
const POINT_BOUND: f64 = 4.0;

/// The world every fuzzed structure declares: elements outside it are legal and common.
const WORLD: f64 = 128.0;

/// The target [`PIN_VARIABLE`] names, read once: `None` when it is unset or empty.
///
/// # Panics
/// If it names no target (the message lists them).
///
/// ```
/// use spatix_fuzz::{PIN_VARIABLE, TARGETS, pinned};
/// match std::env::var(PIN_VARIABLE) {
///     Ok(name) if !name.is_empty() => assert_eq!(pinned().map(|t| TARGETS[t]), Some(&*name)),
///     _ => assert_eq!(pinned(), None), // every target, chosen by the input's first byte
/// }
/// ```
pub fn pinned() -> Option<usize> {
    static PINNED: OnceLock<Option<usize>> = OnceLock::new();
    *PINNED.get_or_init(|| {
        let name = std::env::var(PIN_VARIABLE).unwrap_or_default();
        (!name.is_empty()).then(|| {
            TARGETS.iter().position(|t| *t == name).unwrap_or_else(|| {
                panic!("{PIN_VARIABLE}={name:?} names no target; the targets are {TARGETS:?}")
            })
        })
    })
}

/// Runs one input: decodes it and checks every operation against the oracle.
///
/// # Panics
/// On any difference from `BruteForce`, any broken invariant, or any panic inside spatix.
pub fn run(data: &[u8]) {
    let Some((&pick, ops)) = data.split_first() else {
        return;
    };
    let target = pinned().unwrap_or(usize::from(pick) % TARGETS.len());
    run_target(target, ops);
}

fn world<S: Scalar>() -> Aabb<S> {
    let far = S::from_f64(WORLD);
    Aabb::new(Point::new(S::ZERO, S::ZERO), Point::new(far, far)).expect("valid world")
}

/// Drives target number `target` (an index into [`TARGETS`]) with the operations `ops`.
fn run_target(target: usize, ops: &[u8]) {
    let (w32, w64) = (world::<f32>(), world::<f64>());
    match target {
        0 => dynamic::drive(
            Quadtree::for_element_size(w32, 4.0).expect("valid quadtree"),
            ops,
            Options::default(),
        ),
        1 => dynamic::drive(
            Quadtree::with_config(
                w64,
                TreeConfig {
                    max_elements: 1,
                    max_depth: 5,
                },
            )
            .expect("valid quadtree"),
            ops,
            Options::default(),
        ),
        2 => dynamic::drive(
            UniformGrid::new(w32, 8.0).expect("valid grid"),
            ops,
            Options::default(),
        ),
        3 => dynamic::drive(
            UniformGrid::new(w64, 4.0).expect("valid grid"),
            ops,
            Options::default(),
        ),
        4 => dynamic::drive(
            MxCifQuadtree::for_element_size(w32, 1.0).expect("valid MX-CIF quadtree"),
            ops,
            Options::default(),
        ),
        5 => dynamic::drive(
            MxCifQuadtree::with_config(
                w64,
                TreeConfig {
                    max_elements: 1,
                    max_depth: 5,
                },
            )
            .expect("valid MX-CIF quadtree"),
            ops,
            Options::default(),
        ),
        6 => dynamic::drive(
            LooseQuadtree::for_element_size(w32, 4.0).expect("valid loose quadtree"),
            ops,
            Options::default(),
        ),
        7 => dynamic::drive(
            LooseQuadtree::with_config(
                w64,
                TreeConfig {
                    max_elements: 1,
                    max_depth: 5,
                },
            )
            .expect("valid loose quadtree"),
            ops,
            Options::default(),
        ),
        8 => dynamic::drive(
            HierarchicalGrid::new(w32, 2.0).expect("valid hierarchy"),
            ops,
            Options::default(),
        ),
        9 => dynamic::drive(
            HierarchicalGrid::with_factor(w64, 0.5, 2).expect("valid hierarchy"),
            ops,
            Options::default(),
        ),
        10 => dynamic::drive(
            PointGrid::new(w32, POINT_BOUND as f32).expect("valid point grid"),
            ops,
            Options::bounded(POINT_BOUND),
        ),
        11 => dynamic::drive(
            PointGrid::with_cell_size(w64, POINT_BOUND, 2.0 * POINT_BOUND + 0.01)
                .expect("valid point grid"),
            ops,
            Options::bounded(POINT_BOUND),
        ),
        12 => dynamic::drive(
            LooseGrid::new(w32, 8.0).expect("valid grid"),
            ops,
            Options::default(),
        ),
        // Small loose cells, tight cells finer still and no reach: nearly every loose cell is
        // irregular and listed in many tight cells (finer cells make every step's
        // `check_invariants` slow: a huge box lists its loose cell in every tight cell).
        13 => dynamic::drive(
            LooseGrid::with_config(
                w64,
                LooseGridConfig {
                    cell_size: 4.0,
                    tight_cell_size: 2.0,
                    reach: 0.0,
                },
            )
            .expect("valid grid"),
            ops,
            Options::default(),
        ),
        14 => dynamic::drive(
            Layered::new(w32, 2.0).expect("valid layered index"),
            ops,
            Options::insert_3(Layered::insert_static),
        ),
        15 => dynamic::drive(
            Layered::new(w64, 1.0).expect("valid layered index"),
            ops,
            Options::insert_3(Layered::insert_static),
        ),
        16 => dynamic::drive(
            SweepGrid::new(w32, 8.0).expect("valid sweep grid"),
            ops,
            Options::default(),
        ),
        // Bands far thinner than the elements: every element reaches many bands up, and
        // elements changing band crowd bands, so layouts are redone often.
        17 => dynamic::drive(
            SweepGrid::new(w64, 0.5).expect("valid sweep grid"),
            ops,
            Options::default(),
        ),
        18 => {
            built::drive::<f32, _, _>(ops, false, |data| PackedIndex::build(data.iter().copied()))
        }
        19 => built::drive::<f64, _, _>(ops, false, |data| {
            PackedIndex::with_config(data.iter().copied(), PackedConfig { node_size: 2 })
        }),
        20 => built::drive::<f32, _, _>(ops, true, |data| {
            KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))
        }),
        21 => built::drive::<f64, _, _>(ops, true, |data| {
            let config = KdTreeConfig {
                bucket_size: 2,
                split: SplitRule::Cycle,
            };
            KdTree::with_config(data.iter().map(|&(b, id)| (b.min, id)), config)
        }),
        // Frames on rayon's threads (op 6 by `par_update_all`), bands or cells small beside
        // the elements so that many change band or cell (re-filed after the parallel pass).
        22 => dynamic::drive(
            SweepGrid::new(w32, 2.0).expect("valid sweep grid"),
            ops,
            Options::frame(|grid, moved| grid.par_update_all(|h, _, old| moved(h, old))),
        ),
        23 => dynamic::drive(
            UniformGrid::new(w32, 2.0).expect("valid grid"),
            ops,
            Options::frame(|grid, moved| grid.par_update_all(|h, _, old| moved(h, old))),
        ),
        24 => dynamic::drive(
            LooseGrid::new(w64, 2.0).expect("valid grid"),
            ops,
            Options::frame(|grid, moved| grid.par_update_all(|h, _, old| moved(h, old))),
        ),
        25 => dynamic::drive(
            HierarchicalGrid::with_factor(w64, 0.5, 2).expect("valid hierarchy"),
            ops,
            Options::frame(|grid, moved| grid.par_update_all(|h, _, old| moved(h, old))),
        ),
        26 => {
            let grid = PointGrid::new(w32, POINT_BOUND as f32).expect("valid point grid");
            let options = Options {
                frame: Some(|grid: &mut PointGrid<f32, u64>, moved| {
                    grid.par_update_all(|h, _, old| moved(h, old))
                }),
                ..Options::bounded(POINT_BOUND)
            };
            dynamic::drive(grid, ops, options)
        }
        // The parallel build, which must also be the serial build element by element: the
        // same elements in the same (storage) order, as a query of everything visits them,
        // and the same nodes.
        27 => built::drive::<f32, _, _>(ops, false, |data| {
            let index = PackedIndex::par_build(data.iter().copied());
            if let (Ok(index), Ok(serial)) = (&index, PackedIndex::build(data.iter().copied())) {
                let layout = |index: &PackedIndex<f32, u64>| {
                    let everything = Aabb::new(
                        Point::new(-f32::MAX, -f32::MAX),
                        Point::new(f32::MAX, f32::MAX),
                    )
                    .expect("valid area");
                    let mut elements = Vec::new();
                    let _ = index.query(&everything, |item| {
                        elements.push((item.aabb, *item.value, item.handle.slot()));
                        ControlFlow::Continue(())
                    });
                    let mut nodes = Vec::new();
                    index.traverse(|aabb, level, below| nodes.push((*aabb, level, below)));
                    (elements, nodes)
                };
                assert_eq!(
                    layout(index),
                    layout(&serial),
                    "par_build differs from build"
                );
            }
            index
        }),
        // Every tree saved and loaded back before it is judged: a round trip must change no
        // answer.
        28 => built::drive::<f32, _, _>(ops, true, |data| {
            let tree = KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))?;
            KdTree::from_bytes(&tree.to_bytes())
        }),
        29 => bytes::kdtree(ops),
        30 => bytes::packed(ops),
        31 => bytes::dynamic(ops),
        // Frames on rayon's threads over the parts' own parallel frames, with elements
        // changing parts and static ones waiting (re-filed after the parallel pass).
        _ => {
            let options = Options {
                frame: Some(|index: &mut Layered<f32, u64>, moved| {
                    index.par_update_all(|h, _, old| moved(h, old))
                }),
                ..Options::insert_3(Layered::insert_static)
            };
            dynamic::drive(
                Layered::new(w32, 2.0).expect("valid layered index"),
                ops,
                options,
            )
        }
    }
}
