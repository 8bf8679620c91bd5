//! The conformance suite of spatix: one set of tests, written once and instantiated for every
//! structure by one line of `conformance!` (see `suite.rs`).
//!
//! Per instantiation: random operation sequences over six data variants (`ops_*`, proptest,
//! fixed seed, shrinking), hand-written edge-case sequences (`scenarios`), and seeded bulk tests
//! with the moving-agents workload at 0, 1, 1000 and 20_000 elements (`bulk_*`; 100_000 in the
//! deep tier, `SPATIX_TESTS=deep`, which also runs four times the random cases). Every result
//! is compared with `BruteForce`, and `check_invariants` runs after every step. `broken.rs`
//! shows that the checks catch deliberately broken structures.
//!
//! Static structures (built once, then only read) get the query half instead, one line of
//! `conformance_static!` each (see `static_suite.rs`): random data sets of every variant,
//! read-only probes, bulk sets of 2·10^3 elements (10^4 in the deep tier), and invalid data.
//!
//! `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override the number of cases and the seed.

#[macro_use]
mod suite;
#[macro_use]
mod static_suite;
mod adversarial;
#[cfg(feature = "rayon")]
mod batches;
mod broken;
mod bulk;
mod check;
mod data;
mod erased;
mod exact;
mod extreme_world;
#[macro_use]
mod forward;
// After `forward`, whose macros it uses.
mod bytes;
#[cfg(feature = "rayon")]
mod frames;
mod harness;
mod layered;
mod ops;
mod probes;
mod scenarios;
mod strays;

// Every structure of `spatix::for_each_structure!` set up as it sets itself up from a sample
// (`ListedIndex::for_sample`) of elements a 64th of the world wide, 64² of them; a bounded one
// for half extents up to 4 (`ListedIndex::with_bound`) (module `listed`): a new structure
// gets the whole suite from its line there. The instances below add configurations of each
// (the oracle is `brute_*`). The fast tier runs, besides `listed`, each structure once in f32
// (its arithmetic in the other scalar), the configurations at an edge (depth limits, the
// smallest cells and bands, a bound), and every wrapper (parallel frames, byte forms, static
// elements) on each structure that has it; module `deep` (at the end) holds the rest.
mod listed {
    use spatix::{Aabb, Error, ListedIndex, ListedStatic};

    /// The half extent up to which a bounded structure holds boxes.
    pub(crate) const MAX_HALF_EXTENT: f64 = 4.0;

    /// An empty `I` for `world`: bounded by [`MAX_HALF_EXTENT`], or for 64² elements a 64th of it wide.
    pub(crate) fn made<I: ListedIndex<f64, u64>>(world: Aabb<f64>) -> I {
        if I::BOUNDED {
            return I::with_bound(world, MAX_HALF_EXTENT, 0).unwrap();
        }
        let side = (world.size().x.max(world.size().y) / 64.0).max(1.0);
        I::with_bound(world, side / 2.0, 64 * 64).unwrap()
    }

    /// `I` built from the data set.
    pub(crate) fn built<I: ListedStatic<f64, u64>>(data: &[(Aabb<f64>, u64)]) -> Result<I, Error> {
        I::build_from(data.iter().copied())
    }

    /// One instance per structure.
    macro_rules! instances {
        (oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
            fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
            $(instance!($name, $ty);)*
            $(instance!($serial, $serial_ty);)*
            $(conformance_static!($boxes, f64, boxes, super::built::<spatix::$boxes_ty<f64, u64>>);)*
            $(conformance_static!($points, f64, points, super::built::<spatix::$points_ty<f64, u64>>);)*
        };
    }

    /// The suite for one dynamic structure.
    macro_rules! instance {
        ($name:ident, $ty:ident) => {
            conformance!(
                $name,
                f64,
                |world| super::made::<spatix::$ty<f64, u64>>(world),
                bounded_if = <spatix::$ty<f64, u64> as spatix::ListedIndex<f64, u64>>::BOUNDED,
                max_half_extent = super::MAX_HALF_EXTENT
            );
        };
    }

    spatix::for_each_structure!(instances);
}

// BruteForce's for_each_pair is quadratic: its largest bulk test is capped at 10^4 agents.
conformance!(
    brute_f32,
    f32,
    |world| spatix::BruteForce::new(),
    bulk_max = 10_000
);
// Quadtrees are configured as the seed recommends (deepest leaves a few element sizes wide),
// for two element sizes, so the ops tests see shallow and deep trees; the third instance
// splits eagerly, so leaves overflow at the depth limit and elements straddle many leaves.
conformance!(quadtree_f32, f32, |world| {
    spatix::Quadtree::for_element_size(world, 1.0).unwrap()
});
conformance!(quadtree_small_leaves_f64, f64, |world| {
    spatix::Quadtree::with_config(
        world,
        spatix::TreeConfig {
            max_elements: 1,
            max_depth: 4,
        },
    )
    .unwrap()
});
// Loose quadtrees configured for two element sizes, and one that splits eagerly (a leaf of
// one element, depth 4), so that crowded leaves sit at the depth limit and loose boxes
// overhang many neighbours.
conformance!(loose_quadtree_f32, f32, |world| {
    spatix::LooseQuadtree::for_element_size(world, 1.0).unwrap()
});
// Grids with cells about an element wide, and with cells far smaller than the elements
// (every element spans many cells; the reference-cell rule does all the de-duplication).
conformance!(grid_f32, f32, |world| {
    spatix::UniformGrid::new(world, world.size().x / 16.0).unwrap()
});
// Loose grids: loose cells about an element wide with the default tight cells and reach;
// tiny loose cells, tight cells finer still and no reach (nearly every loose cell is
// irregular, listed in many tight cells, and every move grows its cell's box); and a reach
// of two cells (elements drift far from their cells until `maintain`, regions are wide and
// regular cells meet cells several apart).
conformance!(loose_grid_f32, f32, |world| {
    spatix::LooseGrid::new(world, world.size().x / 16.0).unwrap()
});
conformance!(loose_grid_far_reach_f32, f32, |world| {
    let cell = world.size().x / 16.0;
    let config = spatix::LooseGridConfig {
        reach: 2.0 * cell,
        ..spatix::LooseGridConfig::new(cell)
    };
    spatix::LooseGrid::with_config(world, config).unwrap()
});
// Layered indexes: agents (half-size up to a 64th of the world) in a point grid and the rest
// in a loose grid; a threshold of 0, where only points are agents, so that elements move
// between the parts whenever they change size (built from parts, with coarser cells than
// `new` would give); and every third element static (inserted
// with `insert_static`, built into the packed index by `maintain`, marked gone there by
// removals, updates and clears until the next build).
conformance!(layered_f32, f32, |world| {
    spatix::Layered::new(world, world.size().x / 64.0).unwrap()
});
conformance!(layered_static_f32, f32, |world| {
    crate::layered::ThirdStatic(spatix::Layered::new(world, world.size().x / 64.0).unwrap())
});
// MX-CIF quadtrees: the seed's parameters; a small threshold (deep trees, elements high up
// above many descendants); and a threshold of 1 with a shallow depth limit (leaves crowded
// at the limit, splits and merges on almost every operation).
conformance!(mxcif_f32, f32, |world| spatix::MxCifQuadtree::new(world)
    .unwrap());
conformance!(mxcif_threshold_one_f64, f64, |world| {
    spatix::MxCifQuadtree::with_config(
        world,
        spatix::TreeConfig {
            max_elements: 1,
            max_depth: 4,
        },
    )
    .unwrap()
});
// The kd-tree stores points: its static suite runs on zero-size boxes. Buckets of the default
// size, and buckets of two with the seed's cycling axes (the deepest tree, every split line
// crowded with equal coordinates).
conformance_static!(kdtree_f32, f32, points, |data| {
    spatix::KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))
});
conformance_static!(kdtree_small_buckets_f64, f64, points, |data| {
    let config = spatix::KdTreeConfig {
        bucket_size: 2,
        split: spatix::SplitRule::Cycle,
    };
    spatix::KdTree::with_config(data.iter().map(|&(b, id)| (b.min, id)), config)
});
// Every data set saved to bytes and loaded back (`to_bytes`, `from_bytes`): the loaded tree
// goes through the whole static suite in the built one's place.
conformance_static!(kdtree_from_bytes_f32, f32, points, |data| {
    let built = spatix::KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))?;
    <spatix::KdTree<f32, u64> as spatix::ByteForm>::from_bytes(&spatix::ByteForm::to_bytes(&built))
});
// The packed index of static boxes: the default fan-out, and nodes of two (the deepest tree).
conformance_static!(packed_f32, f32, boxes, |data| {
    spatix::PackedIndex::build(data.iter().copied())
});
conformance_static!(packed_small_nodes_f64, f64, boxes, |data| {
    spatix::PackedIndex::with_config(data.iter().copied(), spatix::PackedConfig { node_size: 2 })
});
// Every data set's packed index saved to bytes and loaded back: the loaded index goes through
// the whole static suite in the built one's place.
conformance_static!(packed_from_bytes_f32, f32, boxes, |data| {
    let built = spatix::PackedIndex::build(data.iter().copied())?;
    <spatix::PackedIndex<f32, u64> as spatix::ByteForm>::from_bytes(&spatix::ByteForm::to_bytes(
        &built,
    ))
});
// Every data set's index saved to bytes and read in place by a view (`PackedView`; the
// kd-tree's `KdTreeView` in the deep tier): the view goes through the whole static suite in
// the built one's place. The bytes are leaked, so that the view lives as long as the suite
// needs it.
conformance_static!(packed_view_f32, f32, boxes, |data| {
    let built = spatix::PackedIndex::build(data.iter().copied())?;
    let bytes = spatix::AlignedBytes::copy_of(&spatix::ByteForm::to_bytes(&built));
    spatix::PackedView::<f32, u64>::open(Box::leak(Box::new(bytes)))
});
// The uniform grid built in one go (`UniformGrid::build`) over the data's usual world: its
// reads, as a static structure; its updates after a bulk build are in the grid's unit tests.
conformance_static!(grid_built_f32, f32, boxes, |data| {
    let world = spatix::Aabb::new(
        spatix::Point::new(0.0, 0.0),
        spatix::Point::new(100.0, 100.0),
    )?;
    spatix::UniformGrid::build(world, data.iter().copied())
});
// Point grids hold only boxes up to a bound (the half sizes of uniform data), and must refuse
// larger ones (the dragons of mixed sizes, the far and enclosing boxes of out-of-world data):
// cells four times the bound (elements re-filed by maintain), and cells at the smallest size
// allowed (re-filed at once), so that neighbouring cells do the work.
conformance!(
    points_f32,
    f32,
    |world| spatix::PointGrid::new(world, 4.0).unwrap(),
    max_half_extent = 4.0
);
conformance!(
    points_tight_f64,
    f64,
    |world| spatix::PointGrid::with_cell_size(world, 4.0, 8.01).unwrap(),
    max_half_extent = 4.0
);
// Hierarchical grids: levels from cells smaller than the elements up; and with a factor of 2,
// many levels, every size class in its own.
conformance!(hierarchical_f32, f32, |world| {
    spatix::HierarchicalGrid::new(world, world.size().x / 64.0).unwrap()
});
conformance!(hierarchical_factor2_f64, f64, |world| {
    spatix::HierarchicalGrid::with_factor(world, 0.5, 2).unwrap()
});
// Sweep grids: bands about an element tall; bands much thinner than the elements (every
// element reaches many bands up, arrivals crowd bands and force new layouts); and a single
// band (the world's height: the pass is one sweep along x).
conformance!(sweep_f32, f32, |world| {
    spatix::SweepGrid::new(world, world.size().y / 16.0).unwrap()
});
conformance!(sweep_thin_f64, f64, |world| {
    spatix::SweepGrid::new(world, world.size().y / 256.0).unwrap()
});
// Frames on rayon's threads (`par_update_all`), with bands or cells fine enough that many
// elements change band or cell in a frame (re-filed after the parallel pass), and for the
// point grid, boxes too large refused by it.
#[cfg(feature = "rayon")]
conformance!(sweep_parallel_f32, f32, |world| {
    crate::frames::ParallelFrames(spatix::SweepGrid::new(world, world.size().y / 64.0).unwrap())
});
#[cfg(feature = "rayon")]
conformance!(grid_parallel_f32, f32, |world| {
    crate::frames::ParallelFrames(spatix::UniformGrid::new(world, world.size().x / 64.0).unwrap())
});
#[cfg(feature = "rayon")]
conformance!(loose_grid_parallel_f64, f64, |world| {
    crate::frames::ParallelFrames(spatix::LooseGrid::new(world, world.size().x / 64.0).unwrap())
});
#[cfg(feature = "rayon")]
conformance!(hierarchical_parallel_f64, f64, |world| {
    crate::frames::ParallelFrames(spatix::HierarchicalGrid::with_factor(world, 0.5, 2).unwrap())
});
#[cfg(feature = "rayon")]
conformance!(
    points_parallel_f32,
    f32,
    |world| crate::frames::ParallelFrames(spatix::PointGrid::new(world, 4.0).unwrap()),
    max_half_extent = 4.0
);

// Every dynamic structure saved to bytes and replaced by the structure loaded from them every
// few changes, at every `maintain` and after `clear` (`bytes.rs`): the loaded structures go
// through the whole suite in the original's place.
conformance!(
    brute_through_bytes_f64,
    f64,
    |world| { crate::bytes::ThroughBytes::new(spatix::BruteForce::new()) },
    bulk_max = 10_000
);
conformance!(grid_through_bytes_f32, f32, |world| {
    crate::bytes::ThroughBytes::new(spatix::UniformGrid::new(world, world.size().x / 16.0).unwrap())
});
conformance!(
    loose_grid_through_bytes_f64,
    f64,
    |world| {
        let cell = world.size().x / 16.0;
        let config = spatix::LooseGridConfig {
            reach: 2.0 * cell,
            ..spatix::LooseGridConfig::new(cell)
        };
        crate::bytes::ThroughBytes::new(spatix::LooseGrid::with_config(world, config).unwrap())
    },
    no_adversarial
);
conformance!(
    hierarchical_through_bytes_f32,
    f32,
    |world| {
        crate::bytes::ThroughBytes::new(
            spatix::HierarchicalGrid::with_factor(world, 0.5, 2).unwrap(),
        )
    },
    no_adversarial
);
conformance!(
    points_through_bytes_f64,
    f64,
    |world| crate::bytes::ThroughBytes::new(spatix::PointGrid::new(world, 4.0).unwrap()),
    no_adversarial,
    max_half_extent = 4.0
);
conformance!(
    quadtree_through_bytes_f64,
    f64,
    |world| {
        crate::bytes::ThroughBytes::new(
            spatix::Quadtree::with_config(
                world,
                spatix::TreeConfig {
                    max_elements: 1,
                    max_depth: 4,
                },
            )
            .unwrap(),
        )
    },
    no_adversarial
);
conformance!(
    loose_quadtree_through_bytes_f32,
    f32,
    |world| {
        crate::bytes::ThroughBytes::new(
            spatix::LooseQuadtree::for_element_size(world, 1.0).unwrap(),
        )
    },
    no_adversarial
);
conformance!(
    mxcif_through_bytes_f64,
    f64,
    |world| {
        crate::bytes::ThroughBytes::new(
            spatix::MxCifQuadtree::with_config(
                world,
                spatix::TreeConfig {
                    max_elements: 1,
                    max_depth: 4,
                },
            )
            .unwrap(),
        )
    },
    no_adversarial
);

conformance!(
    sweep_through_bytes_f32,
    f32,
    |world| {
        crate::bytes::ThroughBytes::new(
            spatix::SweepGrid::new(world, world.size().y / 16.0).unwrap(),
        )
    },
    no_adversarial
);
conformance!(
    layered_static_through_bytes_f64,
    f64,
    |world| {
        crate::bytes::ThroughBytes::new(crate::layered::ThirdStatic(
            spatix::Layered::new(world, world.size().x / 64.0).unwrap(),
        ))
    },
    no_adversarial
);

// The deep tier only (`scripts/test-deep.sh`; nextest's default filter leaves `deep::` out of
// README's test command, see `.config/nextest.toml`): the f64 twins of configurations the fast
// tier runs in f32 or through `listed`, and more settings of each structure, described with
// their groups above. A new instance goes here unless it covers a structure, a wrapper or an
// edge (a depth limit, a bound, the thinnest bands) that the fast tier does not, and says so.
mod deep {
    conformance!(
        brute_f64,
        f64,
        |world| spatix::BruteForce::new(),
        bulk_max = 10_000
    );
    conformance!(quadtree_f64, f64, |world| {
        spatix::Quadtree::for_element_size(world, 0.25).unwrap()
    });
    conformance!(loose_quadtree_f64, f64, |world| {
        spatix::LooseQuadtree::for_element_size(world, 0.25).unwrap()
    });
    conformance!(loose_quadtree_small_leaves_f64, f64, |world| {
        spatix::LooseQuadtree::with_config(
            world,
            spatix::TreeConfig {
                max_elements: 1,
                max_depth: 4,
            },
        )
        .unwrap()
    });
    conformance!(grid_f64, f64, |world| {
        spatix::UniformGrid::new(world, world.size().x / 16.0).unwrap()
    });
    conformance!(grid_fine_f64, f64, |world| {
        spatix::UniformGrid::new(world, world.size().x / 128.0).unwrap()
    });
    conformance!(loose_grid_f64, f64, |world| {
        spatix::LooseGrid::new(world, world.size().x / 16.0).unwrap()
    });
    conformance!(loose_grid_fine_f64, f64, |world| {
        let cell = world.size().x / 64.0;
        let config = spatix::LooseGridConfig {
            cell_size: cell,
            tight_cell_size: cell / 2.0,
            reach: 0.0,
        };
        spatix::LooseGrid::with_config(world, config).unwrap()
    });
    conformance!(layered_f64, f64, |world| {
        spatix::Layered::new(world, world.size().x / 64.0).unwrap()
    });
    conformance!(layered_static_f64, f64, |world| {
        crate::layered::ThirdStatic(spatix::Layered::new(world, world.size().x / 64.0).unwrap())
    });
    conformance!(mxcif_f64, f64, |world| {
        spatix::MxCifQuadtree::with_config(
            world,
            spatix::TreeConfig {
                max_elements: 4,
                max_depth: 10,
            },
        )
        .unwrap()
    });
    conformance_static!(kdtree_f64, f64, points, |data| {
        spatix::KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))
    });
    conformance_static!(kdtree_view_f64, f64, points, |data| {
        let built = spatix::KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))?;
        let bytes = spatix::AlignedBytes::copy_of(&spatix::ByteForm::to_bytes(&built));
        spatix::KdTreeView::<f64, u64>::open(Box::leak(Box::new(bytes)))
    });
    conformance_static!(kdtree_from_bytes_small_buckets_f64, f64, points, |data| {
        let config = spatix::KdTreeConfig {
            bucket_size: 2,
            split: spatix::SplitRule::Variance,
        };
        let built = spatix::KdTree::with_config(data.iter().map(|&(b, id)| (b.min, id)), config)?;
        <spatix::KdTree<f64, u64> as spatix::ByteForm>::from_bytes(&spatix::ByteForm::to_bytes(
            &built,
        ))
    });
    conformance_static!(packed_f64, f64, boxes, |data| {
        spatix::PackedIndex::build(data.iter().copied())
    });
    conformance_static!(packed_from_bytes_small_nodes_f64, f64, boxes, |data| {
        let config = spatix::PackedConfig { node_size: 2 };
        let built = spatix::PackedIndex::with_config(data.iter().copied(), config)?;
        <spatix::PackedIndex<f64, u64> as spatix::ByteForm>::from_bytes(
            &spatix::ByteForm::to_bytes(&built),
        )
    });
    conformance_static!(grid_built_f64, f64, points, |data| {
        let world = spatix::Aabb::new(
            spatix::Point::new(-64.0, -64.0),
            spatix::Point::new(64.0, 64.0),
        )?;
        spatix::UniformGrid::build(world, data.iter().copied())
    });
    conformance!(
        points_f64,
        f64,
        |world| spatix::PointGrid::new(world, 4.0).unwrap(),
        max_half_extent = 4.0
    );
    conformance!(hierarchical_f64, f64, |world| {
        spatix::HierarchicalGrid::new(world, 4.0).unwrap()
    });
    conformance!(sweep_f64, f64, |world| {
        spatix::SweepGrid::new(world, world.size().y / 16.0).unwrap()
    });
    conformance!(sweep_one_band_f32, f32, |world| {
        spatix::SweepGrid::new(world, world.size().y.max(1.0)).unwrap()
    });
    conformance!(layered_points_f64, f64, |world| {
        // Cells of a 64th of the world (`Layered::new` would make them as fine as it allows).
        let cell = world.size().x.max(world.size().y) / 64.0;
        spatix::Layered::from_parts(
            spatix::PointGrid::with_cell_size(world, 0.0, cell.max(1.0)).unwrap(),
            spatix::LooseGrid::new(world, cell.max(1.0)).unwrap(),
            spatix::PackedIndex::build([]).unwrap(),
            0.0,
        )
        .unwrap()
    });
}
