//! The contract's "no allocation once warm": after warm-up, a frame of moves and updates (by
//! handle on even frames, by `update_all` on odd ones), the
//! pair pass, rectangle queries, nearest, within and ray queries (plain and probed),
//! `visit_regions` and `maintain` allocates nothing, for every dynamic structure; and the queries allocate nothing on every static
//! one. With feature `rayon`, a second `par_collect_pairs` into the same `PairBuffers`, on
//! the same data and threads, allocates nothing, for every structure that has it, and so do
//! warm batch queries (`ParallelQuery`) on every structure, dynamic and static. One test
//! only: the allocation counter is process-wide.

use core::ops::ControlFlow;
use std::alloc::System;

use spatix::{
    Aabb, Handle, Layered, ListedIndex, ListedStatic, Point, QueryCost, Ray, SpatialIndex,
    SpatialQuery, Workspace,
};
use spatix_workload::{Agents, Layout, Sizes};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One frame of everything a simulation does with its index; returns a checksum so that no
/// work can be skipped.
fn frame<I: SpatialIndex<f32, u32>>(
    index: &mut I,
    agents: &mut Agents<f32>,
    handles: &[Handle],
    workspace: &mut Workspace<f32>,
    by_handle: bool,
) -> usize {
    agents.step();
    if by_handle {
        for (i, &h) in handles.iter().enumerate() {
            index.update(h, agents.aabb(i)).unwrap();
        }
    } else {
        index
            .update_all(|_, &mut i, b| {
                // The layered index's static walls (values past the agents) stay put.
                if (i as usize) < agents.len() {
                    agents.aabb(i as usize)
                } else {
                    *b
                }
            })
            .unwrap();
    }
    let sum = queries(index, agents, workspace);
    index.maintain();
    sum
}

/// Every query of a frame: the pair pass, the structure's regions, and rectangle, nearest,
/// within and ray queries around every 101st agent (rectangle, nearest and ray queries also
/// probed, counting their cost).
fn queries<I: SpatialQuery<f32, u32>>(
    index: &I,
    agents: &Agents<f32>,
    workspace: &mut Workspace<f32>,
) -> usize {
    let mut sum = 0;
    let _ = index.for_each_pair(|_, _| {
        sum += 1;
        ControlFlow::Continue(())
    });
    let _ = index.visit_regions(|r| {
        sum += r.elements;
        ControlFlow::Continue(())
    });
    let mut cost = QueryCost::default();
    for i in (0..agents.len()).step_by(101) {
        let _ = index.query_probed(&agents.aabb(i), &mut cost, |_| ControlFlow::Continue(()));
        sum += index
            .nearest_probed(agents.positions[i], 8, workspace, &mut cost)
            .len();
        let ray = Ray::new(agents.positions[i], Point::new(1.0, 0.5), 40.0).unwrap();
        let _ =
            index.raycast_all_probed(&ray, workspace, &mut cost, |_, _| ControlFlow::Continue(()));
        let _ = index.query(&agents.aabb(i), |_| {
            sum += 1;
            ControlFlow::Continue(())
        });
        sum += index.nearest(agents.positions[i], 8, workspace).len();
        let _ = index.within(agents.positions[i], 12.0, |_| {
            sum += 1;
            ControlFlow::Continue(())
        });
        let ray = Ray::new(agents.positions[i], Point::new(1.0, 0.5), 40.0).unwrap();
        let _ = index.raycast_all(&ray, workspace, |_, _| {
            sum += 1;
            ControlFlow::Continue(())
        });
    }
    sum + usize::from(cost.candidates > 0)
}

/// Allocations made by `measured` frames after `warm` frames, with feature `rayon` on
/// [`pool`], from inside it: the uniform grid's `maintain` packs its bands on rayon's pool,
/// and a call from outside a pool has rayon queue a job, whose queue allocates now and then.
fn allocations<I: SpatialIndex<f32, u32> + Sync + Send>(index: I, agents: Agents<f32>) -> usize {
    #[cfg(feature = "rayon")]
    return pool().install(|| frame_allocations(index, agents));
    #[cfg(not(feature = "rayon"))]
    frame_allocations(index, agents)
}

/// [`allocations`], on the calling thread.
fn frame_allocations<I: SpatialIndex<f32, u32> + Sync>(
    mut index: I,
    mut agents: Agents<f32>,
) -> usize {
    let handles: Vec<Handle> = (0..agents.len())
        .map(|i| index.insert(agents.aabb(i), i as u32).unwrap())
        .collect();
    // Sized up front: a tree search's front depends on the data, and a new high-water mark
    // is warm-up, not a per-call allocation.
    let mut workspace = Workspace::with_capacity(8, 4096);
    let mut sum = 0;
    for i in 0..100 {
        sum += frame(
            &mut index,
            &mut agents,
            &handles,
            &mut workspace,
            i % 2 == 0,
        );
    }
    let region = Region::new(GLOBAL);
    for i in 0..50 {
        sum += frame(
            &mut index,
            &mut agents,
            &handles,
            &mut workspace,
            i % 2 == 0,
        );
    }
    let made = region.change().allocations + region.change().reallocations;
    assert!(sum > 0);
    made + batch_allocations(&index, &agents)
}

/// Allocations made by `measured` rounds of every query after `warm` rounds.
fn static_allocations<I: SpatialQuery<f32, u32> + Sync>(index: &I, agents: &Agents<f32>) -> usize {
    let mut workspace = Workspace::with_capacity(8, 4096);
    let mut sum = 0;
    for _ in 0..3 {
        sum += queries(index, agents, &mut workspace);
    }
    let region = Region::new(GLOBAL);
    for _ in 0..5 {
        sum += queries(index, agents, &mut workspace);
    }
    let made = region.change().allocations + region.change().reallocations;
    assert!(sum > 0);
    made + batch_allocations(index, agents)
}

/// The pool of two threads every parallel measurement runs on, made once: the threads of a
/// pool dropped during a measurement would allocate as they exit.
#[cfg(feature = "rayon")]
fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    })
}

/// Allocations made by three rounds of batch queries (windows, radii, k nearest and rays
/// around every 7th agent) into the same buffers after three warm rounds, on [`pool`] from
/// inside it (a call from outside has rayon queue a job, which allocates now and then).
#[cfg(feature = "rayon")]
fn batch_allocations<I: SpatialQuery<f32, u32> + Sync>(index: &I, agents: &Agents<f32>) -> usize {
    use spatix::{BatchBuffers, ParallelQuery};
    let picked = (0..agents.len()).step_by(7);
    let windows: Vec<Aabb<f32>> = picked.clone().map(|i| agents.aabb(i)).collect();
    let points: Vec<Point<f32>> = picked.map(|i| agents.positions[i]).collect();
    let rays: Vec<Ray<f32>> = points
        .iter()
        .map(|&p| Ray::new(p, Point::new(1.0, 0.5), 40.0).unwrap())
        .collect();
    pool().install(|| {
        let mut buffers = BatchBuffers::new();
        let round = |buffers: &mut BatchBuffers<f32>| {
            index.query_batch(&windows, buffers).total()
                + index.within_batch(&points, 12.0, buffers).total()
                + index.nearest_batch(&points, 8, buffers).total()
                + index.raycast_batch(&rays, buffers).total()
        };
        let mut found = 0;
        for _ in 0..3 {
            found += round(&mut buffers);
        }
        let region = Region::new(GLOBAL);
        for _ in 0..3 {
            found += round(&mut buffers);
        }
        let made = region.change().allocations + region.change().reallocations;
        assert!(found > 0);
        made
    })
}

/// Without rayon there are no batch queries.
#[cfg(not(feature = "rayon"))]
fn batch_allocations<I: SpatialQuery<f32, u32>>(_: &I, _: &Agents<f32>) -> usize {
    0
}

/// Allocations made by the second of two `par_collect_pairs` on the same data into the same
/// buffers, on `pool`, after each of a few frames of `par_update_all`, and by those frames
/// once warm (after the first five, which grow the scratch lists to the movers a frame of
/// these agents has); also checks that both calls found the same pairs. Called from inside the
/// pool: a call from outside has rayon queue a job, and its queue allocates a block now and
/// then.
#[cfg(feature = "rayon")]
fn collect_allocations<I: spatix::ParallelPairs<f32, u32> + SpatialIndex<f32, u32> + Send>(
    pool: &rayon::ThreadPool,
    mut index: I,
    mut agents: Agents<f32>,
) -> usize {
    for i in 0..agents.len() {
        index.insert(agents.aabb(i), i as u32).unwrap();
    }
    pool.install(|| {
        let mut buffers = spatix::PairBuffers::new();
        let mut made = 0;
        let mut pairs = 0;
        for frame in 0..9 {
            agents.step();
            let region = Region::new(GLOBAL);
            index
                .par_update_all(|_, &mut i, _| agents.aabb(i as usize))
                .unwrap();
            if frame >= 5 {
                made += region.change().allocations + region.change().reallocations;
            }
            index.maintain();
            index.par_collect_pairs(&mut buffers);
            let first: Vec<_> = buffers.iter().collect();
            let region = Region::new(GLOBAL);
            index.par_collect_pairs(&mut buffers);
            made += region.change().allocations + region.change().reallocations;
            assert!(
                buffers.iter().eq(first.iter().copied()),
                "the same pairs in the same order"
            );
            pairs += first.len();
        }
        assert!(pairs > 0);
        made
    })
}

/// `index` with a lattice of 400 static walls (long and thin, every other one upright) over
/// `world`, built into its static part.
fn with_walls(mut index: Layered<f32, u32>, world: &Aabb<f32>) -> Layered<f32, u32> {
    let size = world.size();
    for i in 0..400u32 {
        let x = world.min.x + size.x * (i % 20) as f32 / 20.0;
        let y = world.min.y + size.y * (i / 20) as f32 / 20.0;
        let (w, h) = if i % 2 == 0 { (30.0, 2.0) } else { (2.0, 30.0) };
        let wall = Aabb::new(Point::new(x, y), Point::new(x + w, y + h)).unwrap();
        index.insert_static(wall, u32::MAX - i).unwrap();
    }
    index.maintain();
    assert_eq!(index.part_lens(), (0, 0, 400));
    index
}

/// A dynamic structure set up from the agents' boxes (`ListedIndex::for_sample`; a bounded one
/// only on agents of one size, whose bound it takes from them): no allocation in its warm
/// frames, nor in its parallel pair collection where it has one (`collect`).
fn check_dynamic<I>(
    name: &str,
    agents: &Agents<f32>,
    sample: &[Aabb<f32>],
    sizes: Sizes,
) -> Option<I>
where
    I: ListedIndex<f32, u32> + Sync + Send,
{
    if I::BOUNDED && sizes != Sizes::Uniform {
        return None;
    }
    let made = || I::for_sample(agents.world, sample, agents.len()).unwrap();
    assert_eq!(
        allocations(made(), agents.clone()),
        0,
        "{name}, {sizes:?} sizes"
    );
    Some(made())
}

/// [`check_dynamic`], and the parallel pair collection.
#[cfg(feature = "rayon")]
fn check_parallel<I>(name: &str, agents: &Agents<f32>, sample: &[Aabb<f32>], sizes: Sizes)
where
    I: ListedIndex<f32, u32> + spatix::ParallelPairs<f32, u32> + Sync + Send,
{
    if let Some(index) = check_dynamic::<I>(name, agents, sample, sizes) {
        let made = collect_allocations(pool(), index, agents.clone());
        assert_eq!(made, 0, "par_collect_pairs, {name}, {sizes:?} sizes");
    }
}

/// [`check_dynamic`] (no parallel pair pass without feature `rayon`).
#[cfg(not(feature = "rayon"))]
fn check_parallel<I>(name: &str, agents: &Agents<f32>, sample: &[Aabb<f32>], sizes: Sizes)
where
    I: ListedIndex<f32, u32> + Sync + Send,
{
    check_dynamic::<I>(name, agents, sample, sizes);
}

/// A static structure built from the agents (their positions, in coinciding pairs, for a
/// structure of points, so that the pair pass reports something): no allocation in its
/// queries.
fn check_static<I: ListedStatic<f32, u32> + Sync>(
    name: &str,
    agents: &Agents<f32>,
    points: bool,
    sizes: Sizes,
) {
    let index = if points {
        I::build_from(
            (0..agents.len())
                .map(|i| (Aabb::point(agents.positions[i / 2 * 2]).unwrap(), i as u32)),
        )
    } else {
        I::build_from(agents.boxes().zip(0..))
    }
    .unwrap();
    assert_eq!(
        static_allocations(&index, agents),
        0,
        "{name}, {sizes:?} sizes"
    );
}

/// The checks of every structure of `spatix::for_each_structure!` on `$agents` (of `$sizes`,
/// with `$sample` their boxes).
macro_rules! checks {
    ($agents:ident, $sample:ident, $sizes:ident; oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
        $(check_parallel::<spatix::$ty<f32, u32>>(stringify!($name), &$agents, &$sample, $sizes);)*
        $(check_dynamic::<spatix::$serial_ty<f32, u32>>(stringify!($serial), &$agents, &$sample, $sizes);)*
        $(check_static::<spatix::$boxes_ty<f32, u32>>(stringify!($boxes), &$agents, false, $sizes);)*
        $(check_static::<spatix::$points_ty<f32, u32>>(stringify!($points), &$agents, true, $sizes);)*
    };
}

#[test]
fn warm_frames_allocate_nothing() {
    for sizes in [Sizes::Uniform, Sizes::Mixed] {
        let agents = Agents::<f32>::new(20_000, Layout::Uniform, sizes, 11);
        let sample: Vec<Aabb<f32>> = agents.boxes().collect();
        spatix::for_each_structure!(checks, agents, sample, sizes;);
        // The layered index with a threshold of 3 (the agents of the mixed sizes in one part,
        // their dragons in another) and walls in its static part (built once: the frames'
        // `maintain` must not rebuild it).
        let layered = with_walls(Layered::new(agents.world, 3.0).unwrap(), &agents.world);
        assert_eq!(
            allocations(layered, agents.clone()),
            0,
            "layered with walls, {sizes:?} sizes"
        );
    }
}
