//! spatix's own structures, through the `SpatialIndex` contract: one generic adapter, and
//! [`box_indexes`] and [`point_indexes`] driven by `spatix::for_each_structure!`.
//!
//! Points are zero-size boxes. A static structure gets a small adapter of its own here (as
//! [`Packed`] and [`KdPoints`]), implementing [`BoxIndex`] (its `moved` rebuilds) and/or
//! [`PointIndex`] with the shared query functions below, and its line in the lists.

use core::ops::ControlFlow;

use rayon::prelude::*;
use spatix::{
    Aabb, BatchBuffers, Handle, KdTree, KdTreeConfig, ListedIndex, PackedIndex, ParallelPairs,
    ParallelQuery, Point, SpatialIndex, SpatialQuery, Workspace,
};

use spatix_bench::Mix;
use spatix_workload::{Agent, Agents};

use super::{BoxIndex, Crate, Moves, PointIndex};
use crate::check::Tally;

/// spatix, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "spatix",
    version: env!("CARGO_PKG_VERSION"),
    how: "Every dynamic structure through the `SpatialIndex` contract: built by `insert` of \
         every element into what each sets itself up as from the boxes \
         (`ListedIndex::for_sample`: `Quadtree`, `LooseQuadtree` or \
         `MxCifQuadtree::for_element_size(world, typical size)` and `reserve(n)`; the grids' \
         `auto_sampled(world, boxes, n)`: `UniformGrid`, `LooseGrid`, `HierarchicalGrid`, and \
         `PointGrid` for points; `Layered::new(world, threshold)` with the 95th percentile of \
         the boxes' half-sizes as threshold), or by `SweepGrid::build_auto(world, items)`, its \
         bulk build; then `maintain`; \
         the static `PackedIndex` by `PackedIndex::build` (`par_build` with `--threads`; a \
         frame rebuilds it, and with `--threads` steps the agents and gathers their boxes \
         on rayon's pool too); a frame \
         `update`s every element then `maintain`s (the rows marked update_all instead keep \
         each agent as its element's value and step it inside `update_all`, in the \
         structure's storage order; `PointGrid`, which holds boxes under the largest half \
         extent of those it was made from, has only that row, and only on agents of one \
         size: the uniform, clustered and sparse frames); pairs `for_each_pair` (with \
         `--threads`, `ParallelPairs::par_fold_pairs`, a tally per thread, and \
         `par_update_all` in the update_all rows); queries `query`, `nearest` (one reused `Workspace`, each result's value \
         read with `get`), `within`; with `--threads` every structure answers them through \
         `ParallelQuery` instead (`query_batch`, `nearest_batch`, `within_batch` on rayon's \
         pool, with one `BatchBuffers` kept in the adapter so that a warm run allocates \
         nothing, the answers then read on all threads too, each handle's value with `get`). Points are zero-size boxes. `BruteForce` only at 10k. \
         The static `KdTree` (points) is built by `KdTree::build` (`par_build` with \
         `--threads`) with the default configuration and queried like the others (its \
         `get` is one array access: a handle names a position in tree order).",
};

/// Above this N the brute-force oracle is not measured (it is quadratic).
const BRUTE_MAX_N: usize = 10_000;

/// Every spatix structure of boxes: each dynamic one of `spatix::for_each_structure!` but
/// the bounded ones (built by inserting, or in one go where it has a bulk build, and moved
/// by `update`), the same moved by `update_all` ([`Stepped`]), the packed index, and the
/// oracle.
pub(crate) fn box_indexes(threads: usize) -> Vec<Box<dyn BoxIndex>> {
    let mut all: Vec<Box<dyn BoxIndex>> = Vec::new();
    spatix::for_each_structure!(push_boxes, all, threads;);
    all.push(Box::new(Packed::new(threads)));
    all.push(Box::new(oracle(threads)));
    all
}

/// Every spatix structure of points: the kd-tree, every dynamic one of
/// `spatix::for_each_structure!` (built by inserting, its pair pass on the calling thread),
/// the packed index, and the oracle.
pub(crate) fn point_indexes(threads: usize) -> Vec<Box<dyn PointIndex>> {
    let mut all: Vec<Box<dyn PointIndex>> = vec![Box::new(KdPoints::new(threads))];
    spatix::for_each_structure!(push_points, all, threads;);
    all.push(Box::new(Packed::new(threads)));
    all.push(Box::new(oracle(threads)));
    all
}

/// Pushes onto `$all` a [`Dynamic`] of each dynamic structure but the bounded ones, then a
/// [`Stepped`] of each, their pair passes on rayon's pool where they have one.
macro_rules! push_boxes {
    ($all:ident, $threads:ident; oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { $($fixed:tt)* }) => {
        $(if !<spatix::$ty<f32, u32> as ListedIndex<f32, u32>>::BOUNDED {
            $all.push(Box::new(dynamic::<spatix::$ty<f32, u32>>(stringify!($ty), $threads).parallel()));
        })*
        $(if !<spatix::$serial_ty<f32, u32> as ListedIndex<f32, u32>>::BOUNDED {
            $all.push(Box::new(dynamic::<spatix::$serial_ty<f32, u32>>(stringify!($serial_ty), $threads)));
        })*
        $($all.push(Box::new(stepped::<spatix::$ty<f32, Tracked>>(stringify!($ty), $threads).parallel()));)*
        $($all.push(Box::new(stepped::<spatix::$serial_ty<f32, Tracked>>(stringify!($serial_ty), $threads)));)*
    };
}

/// Pushes onto `$all` a [`Dynamic`] of each dynamic structure, built by inserting.
macro_rules! push_points {
    ($all:ident, $threads:ident; oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { $($fixed:tt)* }) => {
        $($all.push(Box::new(Dynamic::new(stringify!($ty), made::<spatix::$ty<f32, u32>, u32>, $threads)));)*
        $($all.push(Box::new(Dynamic::new(stringify!($serial_ty), made::<spatix::$serial_ty<f32, u32>, u32>, $threads)));)*
    };
}
use {push_boxes, push_points};

/// An empty structure for `world` and the boxes `sample` it will hold, as it sets itself up
/// from a sample ([`ListedIndex::for_sample`]).
fn made<I: ListedIndex<f32, V>, V>(world: &Aabb<f32>, sample: &[Aabb<f32>]) -> I {
    I::for_sample(*world, sample, sample.len()).expect("the agents' world is valid")
}

/// A structure holding `items`, built in one go ([`ListedIndex::with_items`]).
fn built<I: ListedIndex<f32, V>, V>(world: &Aabb<f32>, items: Vec<(Aabb<f32>, V)>) -> I {
    I::with_items(*world, items).expect("workload boxes are valid")
}

/// A [`Dynamic`] of `I`, built in one go where it has a bulk build.
fn dynamic<I: ListedIndex<f32, u32>>(name: &'static str, threads: usize) -> Dynamic<I> {
    let adapter = Dynamic::new(name, made::<I, u32>, threads);
    if I::BULK {
        adapter.bulk(built::<I, u32>)
    } else {
        adapter
    }
}

/// A [`Stepped`] of `I`, built in one go where it has a bulk build; a bounded one on agents
/// of one size only ([`Stepped::same_size_only`]).
fn stepped<I: ListedIndex<f32, Tracked>>(name: &'static str, threads: usize) -> Stepped<I> {
    let mut adapter = Stepped::new(name, made::<I, Tracked>, threads);
    if I::BULK {
        adapter = adapter.bulk(built::<I, Tracked>);
    }
    if I::BOUNDED {
        adapter = adapter.same_size_only();
    }
    adapter
}

/// The oracle, measured up to [`BRUTE_MAX_N`] only.
fn oracle(threads: usize) -> Dynamic<spatix::BruteForce<f32, u32>> {
    Dynamic::new(
        "BruteForce",
        made::<spatix::BruteForce<f32, u32>, u32>,
        threads,
    )
    .up_to(BRUTE_MAX_N)
}

/// Makes an empty structure for a world and the boxes it will hold (never timed).
type Make<I> = fn(&Aabb<f32>, &[Aabb<f32>]) -> I;

/// How a structure with a bulk constructor is built from every element at once (values in
/// the elements' order).
type Bulk<I, V> = fn(&Aabb<f32>, Vec<(Aabb<f32>, V)>) -> I;

/// A dynamic spatix structure: built by inserting every element, updated in place.
struct Dynamic<I> {
    name: &'static str,
    make: Make<I>,
    bulk: Option<Bulk<I, u32>>,
    max_n: usize,
    pairs: fn(&I, &mut Tally),
    threads: usize,
    index: Option<I>,
    handles: Vec<Handle>,
    queries: Queries,
}

impl<I: SpatialIndex<f32, u32>> Dynamic<I> {
    /// Above one of `threads`, its queries are answered in batches ([`Queries`]).
    fn new(name: &'static str, make: Make<I>, threads: usize) -> Self {
        Self {
            name,
            make,
            bulk: None,
            max_n: usize::MAX,
            pairs: serial_pairs::<I, u32>,
            threads,
            index: None,
            handles: Vec::new(),
            queries: Queries::new(threads),
        }
    }

    fn up_to(mut self, max_n: usize) -> Self {
        self.max_n = max_n;
        self
    }

    /// Built in one go by `bulk` instead of inserting every element.
    fn bulk(mut self, bulk: Bulk<I, u32>) -> Self {
        self.bulk = Some(bulk);
        self
    }

    /// A new structure holding `boxes`, in order.
    fn fill(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        if let Some(bulk) = self.bulk {
            let index = bulk(world, boxes.iter().copied().zip(0..).collect());
            let mut handles = vec![None; boxes.len()];
            for item in index.iter() {
                handles[*item.value as usize] = Some(item.handle);
            }
            self.handles.clear();
            self.handles.extend(
                handles
                    .into_iter()
                    .map(|h| h.expect("every element was built")),
            );
            self.index = Some(index);
            return;
        }
        let mut index = (self.make)(world, boxes);
        self.handles.clear();
        self.handles.reserve(boxes.len());
        for (i, b) in boxes.iter().enumerate() {
            let handle = index
                .insert(*b, i as u32)
                .expect("workload boxes are valid");
            self.handles.push(handle);
        }
        index.maintain();
        self.index = Some(index);
    }

    fn index(&self) -> &I {
        self.index.as_ref().expect("built before use")
    }
}

impl<I: ParallelPairs<f32, u32>> Dynamic<I> {
    /// Above one thread, the pair pass runs on rayon's pool (`ParallelPairs`).
    fn parallel(mut self) -> Self {
        if self.threads > 1 {
            self.pairs = parallel_pairs::<I, u32>;
        }
        self
    }
}

/// A value that names its element by the position of its box in the workload.
trait Named {
    fn id(&self) -> u32;
}

impl Named for u32 {
    fn id(&self) -> u32 {
        *self
    }
}

/// An agent kept as the value of its element, with its position in the workload.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    agent: Agent<f32>,
    id: u32,
}

impl Named for Tracked {
    fn id(&self) -> u32 {
        self.id
    }
}

fn serial_pairs<I: SpatialQuery<f32, V>, V: Named>(index: &I, tally: &mut Tally) {
    let _ = index.for_each_pair(|a, b| {
        tally.pair(a.value.id(), b.value.id());
        ControlFlow::Continue(())
    });
}

/// The pairs tallied on every thread, each thread into a tally of its own, the tallies
/// added at the end (`ParallelPairs::par_fold_pairs`).
fn parallel_pairs<I: ParallelPairs<f32, V>, V: Named + Sync>(index: &I, tally: &mut Tally) {
    let (ControlFlow::Continue(found) | ControlFlow::Break(found)) = index.par_fold_pairs(
        Tally::default,
        |one, a, b| {
            one.pair(a.value.id(), b.value.id());
            ControlFlow::Continue(())
        },
        |mut one, other| {
            one.merge(other);
            one
        },
    );
    tally.merge(found);
}

impl<I: SpatialIndex<f32, u32> + Send + Sync> BoxIndex for Dynamic<I> {
    fn name(&self) -> String {
        format!("spatix {}", self.name)
    }

    fn moves(&self) -> Moves {
        Moves::Update
    }

    fn runs_at(&self, n: usize) -> bool {
        n <= self.max_n
    }

    fn build(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.fill(world, boxes);
    }

    /// Updates every element.
    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let index = self.index.as_mut().expect("built before use");
        for (&handle, b) in self.handles.iter().zip(boxes) {
            index.update(handle, *b).expect("live handle, valid box");
        }
    }

    fn maintain(&mut self) -> bool {
        self.index.as_mut().expect("built before use").maintain();
        true
    }

    fn pairs(&mut self, tally: &mut Tally) {
        (self.pairs)(self.index(), tally);
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let index = self.index.as_ref().expect("built before use");
        self.queries.query(index, squares, tally);
    }
}

/// A dynamic spatix structure that keeps each agent as its element's value and steps them
/// all in its own storage order with `update_all` (then the frame `maintain`s it).
struct Stepped<I> {
    name: &'static str,
    make: Make<I>,
    bulk: Option<Bulk<I, Tracked>>,
    pairs: fn(&I, &mut Tally),
    step: fn(&mut I, &Aabb<f32>),
    threads: usize,
    /// Measured only on the agents frame of agents of one size (a structure that holds
    /// boxes under one bound, fixed when it is made).
    same_size_only: bool,
    index: Option<I>,
    queries: Queries,
}

/// Steps every agent inside `update_all`.
fn serial_step<I: SpatialIndex<f32, Tracked>>(index: &mut I, arena: &Aabb<f32>) {
    index
        .update_all(|_, tracked, _| {
            tracked.agent.step(arena);
            tracked.agent.aabb()
        })
        .expect("agents' boxes stay valid");
}

/// Steps every agent inside `par_update_all`.
fn parallel_step<I: ParallelPairs<f32, Tracked> + SpatialIndex<f32, Tracked>>(
    index: &mut I,
    arena: &Aabb<f32>,
) {
    index
        .par_update_all(|_, tracked, _| {
            tracked.agent.step(arena);
            tracked.agent.aabb()
        })
        .expect("agents' boxes stay valid");
}

impl<I: SpatialIndex<f32, Tracked>> Stepped<I> {
    /// Above one of `threads`, its queries are answered in batches ([`Queries`]).
    fn new(name: &'static str, make: Make<I>, threads: usize) -> Self {
        Self {
            name,
            make,
            bulk: None,
            pairs: serial_pairs::<I, Tracked>,
            step: serial_step::<I>,
            threads,
            same_size_only: false,
            index: None,
            queries: Queries::new(threads),
        }
    }

    fn index(&self) -> &I {
        self.index.as_ref().expect("built before use")
    }

    /// Measured only on the agents frame of agents of one size.
    fn same_size_only(mut self) -> Self {
        self.same_size_only = true;
        self
    }

    /// Built in one go by `bulk` instead of inserting every element.
    fn bulk(mut self, bulk: Bulk<I, Tracked>) -> Self {
        self.bulk = Some(bulk);
        self
    }

    /// A new structure holding `boxes[i]` with value `agents[i]`, in order.
    fn fill(
        &mut self,
        world: &Aabb<f32>,
        boxes: &[Aabb<f32>],
        agents: impl Iterator<Item = Agent<f32>>,
    ) {
        if let Some(bulk) = self.bulk {
            let items = boxes
                .iter()
                .zip(agents)
                .zip(0..)
                .map(|((b, agent), id)| (*b, Tracked { agent, id }))
                .collect();
            self.index = Some(bulk(world, items));
            return;
        }
        let mut index = (self.make)(world, boxes);
        for (id, (b, agent)) in (0..).zip(boxes.iter().zip(agents)) {
            index
                .insert(*b, Tracked { agent, id })
                .expect("workload boxes are valid");
        }
        index.maintain();
        self.index = Some(index);
    }
}

impl<I: ParallelPairs<f32, Tracked> + SpatialIndex<f32, Tracked>> Stepped<I> {
    /// Above one thread, the pair pass and the stepping run on rayon's pool
    /// (`ParallelPairs::par_fold_pairs` and `par_update_all`).
    fn parallel(mut self) -> Self {
        if self.threads > 1 {
            self.pairs = parallel_pairs::<I, Tracked>;
            self.step = parallel_step::<I>;
        }
        self
    }
}

impl<I: SpatialIndex<f32, Tracked> + Send + Sync> BoxIndex for Stepped<I> {
    fn name(&self) -> String {
        format!("spatix {} (update_all)", self.name)
    }

    fn moves(&self) -> Moves {
        Moves::UpdateAll
    }

    fn does(&self, frame: Option<Mix>) -> bool {
        !self.same_size_only || frame.is_some_and(Mix::same_size)
    }

    /// Inserts each box with an agent at rest (the agents frame builds with
    /// [`build_frame`](BoxIndex::build_frame) instead, with the agents' velocities).
    fn build(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let agents = boxes.iter().map(|b| Agent {
            position: b.center(),
            velocity: Point::new(0.0, 0.0),
            half_extent: Point::new((b.max.x - b.min.x) * 0.5, (b.max.y - b.min.y) * 0.5),
        });
        self.fill(world, boxes, agents);
    }

    fn build_frame(&mut self, world: &Aabb<f32>, agents: &Agents<f32>, boxes: &[Aabb<f32>]) {
        self.fill(world, boxes, (0..agents.len()).map(|i| agents.agent(i)));
    }

    /// Moves element `i` to `boxes[i]` with `update_all` (the agents' own state is left).
    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let index = self.index.as_mut().expect("built before use");
        index
            .update_all(|_, tracked, _| boxes[tracked.id as usize])
            .expect("workload boxes are valid");
    }

    fn frame(&mut self, _world: &Aabb<f32>, agents: &mut Agents<f32>, _boxes: &mut Vec<Aabb<f32>>) {
        (self.step)(
            self.index.as_mut().expect("built before use"),
            &agents.arena,
        );
    }

    fn maintain(&mut self) -> bool {
        self.index.as_mut().expect("built before use").maintain();
        true
    }

    fn pairs(&mut self, tally: &mut Tally) {
        (self.pairs)(self.index(), tally);
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let index = self.index.as_ref().expect("built before use");
        self.queries.query(index, squares, tally);
    }
}

/// How an adapter answers the query workloads, and the memory it keeps for them between
/// runs: at one thread one call per query (`query`, `nearest` with a reused `Workspace`,
/// `within`), the serial baseline; above one, `ParallelQuery`'s batches on rayon's current
/// pool, into [`BatchBuffers`] kept here so that a warm batch allocates nothing.
struct Queries {
    batch: bool,
    workspace: Workspace<f32>,
    buffers: BatchBuffers<f32>,
}

impl Queries {
    /// Batches above one of `threads`.
    fn new(threads: usize) -> Self {
        Self {
            batch: threads > 1,
            workspace: Workspace::with_capacity(64, 1024),
            buffers: BatchBuffers::new(),
        }
    }

    /// Every element intersecting each square, into `tally` (a batch's handles read with
    /// `get`).
    fn query<I: ParallelQuery<f32, V>, V: Named>(
        &mut self,
        index: &I,
        squares: &[Aabb<f32>],
        tally: &mut Tally,
    ) {
        if self.batch {
            let found = index.query_batch(squares, &mut self.buffers);
            tally.merge(par_tally(found.par_iter(), |hits, tally| {
                for &handle in hits {
                    tally.hit(value(index, handle).id());
                }
            }));
            return;
        }
        for square in squares {
            let _ = index.query(square, |item| {
                tally.hit(item.value.id());
                ControlFlow::Continue(())
            });
        }
    }

    /// The `k` nearest of each query point, each result's value read with `get`.
    fn nearest<I: ParallelQuery<f32, u32>>(
        &mut self,
        index: &I,
        queries: &[Point<f32>],
        k: usize,
        out: &mut Vec<u32>,
    ) {
        if self.batch {
            let found = index.nearest_batch(queries, k, &mut self.buffers);
            out.par_extend(
                found
                    .par_iter()
                    .flat_map_iter(|found| found.iter().map(|n| *value(index, n.handle))),
            );
            return;
        }
        for q in queries {
            for found in index.nearest(*q, k, &mut self.workspace) {
                out.push(*value(index, found.handle));
            }
        }
    }

    /// Every element within `radius` of each query point, into `tally` (a batch's handles
    /// read with `get`).
    fn within<I: ParallelQuery<f32, u32>>(
        &mut self,
        index: &I,
        queries: &[Point<f32>],
        radius: f32,
        tally: &mut Tally,
    ) {
        if self.batch {
            let found = index.within_batch(queries, radius, &mut self.buffers);
            tally.merge(par_tally(found.par_iter(), |hits, tally| {
                for &handle in hits {
                    tally.hit(*value(index, handle));
                }
            }));
            return;
        }
        for q in queries {
            let _ = index.within(*q, radius, |item| {
                tally.hit(*item.value);
                ControlFlow::Continue(())
            });
        }
    }
}

/// The value of the element a query found, read with `get`.
fn value<I: SpatialQuery<f32, V>, V>(index: &I, handle: Handle) -> &V {
    index.get(handle).expect("a found handle is live").value
}

/// A batch's answers read on all threads (the values looked up with `get` are most of the
/// reading), a tally per piece of work, merged.
fn par_tally<'b>(
    answers: impl ParallelIterator<Item = &'b [Handle]>,
    read: impl Fn(&[Handle], &mut Tally) + Sync,
) -> Tally {
    answers
        .fold(Tally::default, |mut tally, hits| {
            read(hits, &mut tally);
            tally
        })
        .reduce(Tally::default, |mut a, b| {
            a.merge(b);
            a
        })
}

/// The static `PackedIndex`: built in one go from all elements (`PackedIndex::build`, or
/// `par_build` with `--threads`), so a frame rebuilds it; points are zero-size boxes.
struct Packed {
    threads: usize,
    index: Option<PackedIndex<f32, u32>>,
    queries: Queries,
}

impl Packed {
    fn new(threads: usize) -> Self {
        Self {
            threads,
            index: None,
            queries: Queries::new(threads),
        }
    }

    fn fill(&mut self, boxes: impl Iterator<Item = Aabb<f32>>) {
        let items = boxes.enumerate().map(|(i, b)| (b, i as u32));
        let index = if self.threads > 1 {
            PackedIndex::par_build(items)
        } else {
            PackedIndex::build(items)
        };
        self.index = Some(index.expect("workload boxes are valid"));
    }

    fn index(&self) -> &PackedIndex<f32, u32> {
        self.index.as_ref().expect("built before use")
    }
}

impl BoxIndex for Packed {
    fn name(&self) -> String {
        "spatix PackedIndex".into()
    }

    fn moves(&self) -> Moves {
        Moves::Rebuild
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.fill(boxes.iter().copied());
    }

    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.fill(boxes.iter().copied());
    }

    /// As every frame, but with `--threads` the agents step and their boxes are gathered on
    /// rayon's pool (each agent as `Agents::step` moves it), so that the rebuild, parallel
    /// itself, is not measured behind a serial walk of the agents.
    fn frame(&mut self, world: &Aabb<f32>, agents: &mut Agents<f32>, boxes: &mut Vec<Aabb<f32>>) {
        if self.threads == 1 {
            agents.step();
            boxes.clear();
            boxes.extend(agents.boxes());
        } else {
            let arena = agents.arena;
            let moved = (agents.positions.par_iter_mut())
                .zip(agents.velocities.par_iter_mut())
                .zip(agents.half_extents.par_iter())
                .map(|((position, velocity), &half_extent)| {
                    let mut agent = Agent {
                        position: *position,
                        velocity: *velocity,
                        half_extent,
                    };
                    agent.step(&arena);
                    (*position, *velocity) = (agent.position, agent.velocity);
                    agent.aabb()
                });
            boxes.clear();
            boxes.par_extend(moved);
        }
        self.moved(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        if self.threads > 1 {
            parallel_pairs(self.index(), tally);
        } else {
            serial_pairs(self.index(), tally);
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let index = self.index.as_ref().expect("built before use");
        self.queries.query(index, squares, tally);
    }
}

impl PointIndex for Packed {
    fn name(&self) -> String {
        "spatix PackedIndex".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        self.fill(
            points
                .iter()
                .map(|p| Aabb::point(*p).expect("workload points are finite")),
        );
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let index = self.index.as_ref().expect("built before use");
        self.queries.nearest(index, queries, k, out);
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let index = self.index.as_ref().expect("built before use");
        self.queries.within(index, queries, radius, tally);
        true
    }
}

impl<I: SpatialIndex<f32, u32> + Send + Sync> PointIndex for Dynamic<I> {
    fn name(&self) -> String {
        format!("spatix {}", self.name)
    }

    fn runs_at(&self, n: usize) -> bool {
        n <= self.max_n
    }

    fn build(&mut self, world: &Aabb<f32>, points: &[Point<f32>]) {
        let boxes: Vec<Aabb<f32>> = points
            .iter()
            .map(|p| Aabb::point(*p).expect("workload points are finite"))
            .collect();
        self.fill(world, &boxes);
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let index = self.index.as_ref().expect("built before use");
        self.queries.nearest(index, queries, k, out);
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let index = self.index.as_ref().expect("built before use");
        self.queries.within(index, queries, radius, tally);
        true
    }
}

/// The static kd-tree: built once from the points (in parallel with `--threads`), then
/// queried.
struct KdPoints {
    threads: usize,
    tree: Option<KdTree<f32, u32>>,
    queries: Queries,
}

impl KdPoints {
    fn new(threads: usize) -> Self {
        Self {
            threads,
            tree: None,
            queries: Queries::new(threads),
        }
    }
}

impl PointIndex for KdPoints {
    fn name(&self) -> String {
        "spatix KdTree".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        let input = points.iter().enumerate().map(|(i, &p)| (p, i as u32));
        let tree = if self.threads > 1 {
            KdTree::par_build(input, KdTreeConfig::default())
        } else {
            KdTree::build(input)
        };
        self.tree = Some(tree.expect("workload points are finite"));
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let tree = self.tree.as_ref().expect("built before use");
        self.queries.nearest(tree, queries, k, out);
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let tree = self.tree.as_ref().expect("built before use");
        self.queries.within(tree, queries, radius, tally);
        true
    }
}
