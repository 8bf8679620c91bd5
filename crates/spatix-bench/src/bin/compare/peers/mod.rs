//! The structures compared: one adapter module per crate, each implementing [`BoxIndex`] for
//! boxes and/or [`PointIndex`] for points, used the way its crate's documentation recommends
//! (docs/BENCHMARKS.md lists each adapter's choices).

mod broccoli;
mod flat_spatial;
mod geo_index;
mod kiddo;
mod over_queries;
mod parry;
mod rstar;
mod spatix;
mod static_aabb;

use ::spatix::{Aabb, Point};
use spatix_bench::Mix;
use spatix_workload::Agents;

use crate::check::Tally;

/// A crate compared, for the report.
pub(crate) struct Crate {
    pub(crate) name: &'static str,
    /// The version in Cargo.lock (a test keeps them equal).
    pub(crate) version: &'static str,
    /// How its adapter uses it, and why.
    pub(crate) how: &'static str,
}

/// Every crate compared, spatix first.
pub(crate) const CRATES: [Crate; 8] = [
    spatix::CRATE,
    rstar::CRATE,
    kiddo::CRATE,
    broccoli::CRATE,
    parry::CRATE,
    flat_spatial::CRATE,
    static_aabb::CRATE,
    geo_index::CRATE,
];

/// How a structure follows moving boxes in the agents frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Moves {
    /// It updates each moved element in place, by handle, in the caller's order.
    Update,
    /// It steps the agents kept as its values, in its own storage order
    /// (`SpatialIndex::update_all`).
    UpdateAll,
    /// It cannot update (or updating every element costs more than building anew, as its
    /// documentation says): the frame rebuilds it from all boxes.
    Rebuild,
}

/// A structure of boxes: the agents frame, building, pairs and rectangle queries. `Send`, so
/// that a run can move onto a pool of one thread (`--serial-fraction`).
pub(crate) trait BoxIndex: Send {
    /// Column name in the tables.
    fn name(&self) -> String;

    /// How the agents frame follows the moving boxes.
    fn moves(&self) -> Moves;

    /// Whether this structure is measured at `n` boxes (the brute-force oracle only at small N).
    fn runs_at(&self, _n: usize) -> bool {
        true
    }

    /// Whether this structure is measured on a workload: `frame` is the mix of agents of
    /// an agents frame, `None` for the other workloads (a structure made for agents of one
    /// size runs only on those frames).
    fn does(&self, _frame: Option<Mix>) -> bool {
        true
    }

    /// Builds the structure from `boxes` (box `i` has value `i`) in a world of `world`,
    /// replacing whatever it held.
    fn build(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]);

    /// The index work of one frame: box `i` has moved to `boxes[i]` (the tidying after it,
    /// where the structure has one, is [`maintain`](Self::maintain)).
    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]);

    /// Builds the structure for the agents frame from `agents`, whose boxes are `boxes`
    /// (by default [`build`](Self::build) from the boxes).
    fn build_frame(&mut self, world: &Aabb<f32>, _agents: &Agents<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    /// One timed frame before the pair pass: step every agent (`agents`, whose boxes the
    /// structure was built from) and follow the moves. By default the agents step in their
    /// arrays, `boxes` is refilled from them and [`moved`](Self::moved) follows; a structure
    /// that keeps the agents as its own values steps those instead (and leaves `agents`).
    fn frame(&mut self, world: &Aabb<f32>, agents: &mut Agents<f32>, boxes: &mut Vec<Aabb<f32>>) {
        agents.step();
        boxes.clear();
        boxes.extend(agents.boxes());
        self.moved(world, boxes);
    }

    /// The frame's tidying after the moves, timed as a phase of its own; `false` (nothing
    /// done) for a structure that has none.
    fn maintain(&mut self) -> bool {
        false
    }

    /// Every intersecting unordered pair, each once, into `tally`.
    fn pairs(&mut self, tally: &mut Tally);

    /// Every box intersecting each square, into `tally` (value of each hit).
    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally);
}

/// A structure of points: building, k nearest and radius queries. A structure that does not
/// do one of the queries says so by returning `false` and doing nothing. `Send`, so that a run
/// can move onto a pool of one thread (`--serial-fraction`).
pub(crate) trait PointIndex: Send {
    /// Column name in the tables.
    fn name(&self) -> String;

    /// Whether this structure is measured at `n` points.
    fn runs_at(&self, _n: usize) -> bool {
        true
    }

    /// Builds the structure from `points` (point `i` has value `i`) in `world`.
    fn build(&mut self, world: &Aabb<f32>, points: &[Point<f32>]);

    /// Appends, for each query point in order, the values of its `k` nearest points to `out`.
    fn nearest(&mut self, _queries: &[Point<f32>], _k: usize, _out: &mut Vec<u32>) -> bool {
        false
    }

    /// Every point at distance `<= radius` (`< radius` for some crates: the boundary has
    /// measure zero on this data) from each query point, into `tally`.
    fn within(&mut self, _queries: &[Point<f32>], _radius: f32, _tally: &mut Tally) -> bool {
        false
    }
}

/// Every box structure, spatix's first, each new and empty. `threads` above 1 lets the
/// structures with a parallel mode use it.
pub(crate) fn box_indexes(threads: usize) -> Vec<Box<dyn BoxIndex>> {
    let mut all = spatix::box_indexes(threads);
    all.extend([
        Box::new(rstar::Boxes::new(threads)) as Box<dyn BoxIndex>,
        Box::new(broccoli::Boxes::new(threads)),
        Box::new(parry::Boxes::new(threads)),
        Box::new(flat_spatial::Boxes::new(threads)),
        Box::new(static_aabb::Boxes::new(threads)),
        Box::new(geo_index::Boxes::new(threads)),
    ]);
    all
}

/// Every point structure, spatix's first, each new and empty.
pub(crate) fn point_indexes(threads: usize) -> Vec<Box<dyn PointIndex>> {
    let mut all = spatix::point_indexes(threads);
    all.extend([
        Box::new(rstar::Points::new(threads)) as Box<dyn PointIndex>,
        Box::new(kiddo::Points::new(threads)),
        Box::new(flat_spatial::Points::new(threads)),
        Box::new(static_aabb::Points::new(threads)),
        Box::new(geo_index::RTreePoints::new(threads)),
        Box::new(geo_index::KdPoints::new(threads)),
    ]);
    all
}

/// Whether a column belongs to spatix (for the headline rows).
pub(crate) fn is_spatix(name: &str) -> bool {
    name.starts_with("spatix ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_versions_are_those_in_the_lock_file() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("the workspace's Cargo.lock");
        for c in CRATES {
            let entry = format!("name = \"{}\"\nversion = \"{}\"", c.name, c.version);
            assert!(
                lock.contains(&entry),
                "{} {} is not in Cargo.lock",
                c.name,
                c.version
            );
        }
    }

    #[test]
    fn every_structure_has_a_distinct_name_within_its_kind() {
        let boxes: Vec<String> = box_indexes(1).iter().map(|i| i.name()).collect();
        let points: Vec<String> = point_indexes(1).iter().map(|i| i.name()).collect();
        for names in [boxes, points] {
            for (i, name) in names.iter().enumerate() {
                assert!(!names[i + 1..].contains(name), "{name} twice");
            }
        }
    }
}
