//! The world and cell size the `auto` constructors pick from a sample.

use super::{DEFAULT_CELLS_PER_SIDE, dims_for, extent_of};
use crate::{Aabb, Error, Point, Scalar};

/// The world an `auto` constructor lays its cells over: `world` cut down to where the bulk of
/// `sample` lies ([`Aabb::bulk_of`]) grown by its own width and height on every side, so that
/// a few stray elements (or a declared world far larger than the data) do not make the cells
/// huge or countless: elements beyond it are filed in the border cells. Kept within ±MAX/4
/// so that its width and height are finite. `world` itself when it is invalid (the caller
/// reports that), or when the sample is empty or lies wholly outside it (only clamped).
pub(crate) fn auto_world<S: Scalar>(world: &Aabb<S>, sample: &[Aabb<S>]) -> Aabb<S> {
    if !world.is_valid() {
        return *world;
    }
    let quarter = S::MAX.to_f64() * 0.25;
    let cut = |lo: S, hi: S, bulk: Option<(S, S)>| {
        let (mut lo, mut hi) = (lo.to_f64(), hi.to_f64());
        if let Some((a, b)) = bulk {
            let (a, b) = (a.to_f64(), b.to_f64());
            let (a, b) = (a - (b - a), b + (b - a));
            if a <= hi && lo <= b {
                (lo, hi) = (lo.max(a), hi.min(b));
            }
        }
        let (lo, hi) = (lo.clamp(-quarter, quarter), hi.clamp(-quarter, quarter));
        (S::from_f64(lo), S::from_f64(hi))
    };
    let bulk = Aabb::bulk_of(sample);
    let (x0, x1) = cut(world.min.x, world.max.x, bulk.map(|b| (b.min.x, b.max.x)));
    let (y0, y1) = cut(world.min.y, world.max.y, bulk.map(|b| (b.min.y, b.max.y)));
    Aabb {
        min: Point::new(x0, y0),
        max: Point::new(x1, y1),
    }
}

/// The width and height of where the bulk of `sample` lies ([`Aabb::bulk_of`]) within
/// `world`: the area the elements fill, over which the `auto` constructors spread them when
/// they put a floor under the cell side or band height (over the world itself, a few stray
/// elements that widen an [`auto_world`] would make every cell or band as much larger). Each
/// at least a quarter of the world's, so that a floor taken over it never asks for more than
/// 16 times the cells (or 4 times the bands) the same floor over the world would: a bulk of
/// no area (most elements at one spot, a few spread over the world) must not make the cells
/// countless. The world's own when the sample has no valid box.
pub(crate) fn bulk_extent<S: Scalar>(world: &Aabb<S>, sample: &[Aabb<S>]) -> (f64, f64) {
    let Some(bulk) = Aabb::bulk_of(sample) else {
        return extent_of(world);
    };
    let span = |lo: S, hi: S, from: S, to: S| {
        let whole = to.to_f64() - from.to_f64();
        (hi.to_f64().min(to.to_f64()) - lo.to_f64().max(from.to_f64())).max(whole * 0.25)
    };
    (
        span(bulk.min.x, bulk.max.x, world.min.x, world.max.x),
        span(bulk.min.y, bulk.max.y, world.min.y, world.max.y),
    )
}

/// The side of the square cells that `count` elements spread evenly over a `width` × `height`
/// world fill with `per_cell` elements each: the floor an `auto` constructor puts under its cell
/// side, so that a few tiny elements do not ask for far more cells than elements (0, no floor,
/// for no elements). Where the area overflows (a world about MAX wide), the side is the
/// product of square roots instead.
pub(crate) fn cell_for_count(width: f64, height: f64, count: usize, per_cell: f64) -> f64 {
    if count == 0 {
        return 0.0;
    }
    let share = per_cell / count as f64;
    let cell = (width * height * share).sqrt();
    if cell.is_finite() {
        cell
    } else {
        width.sqrt() * height.sqrt() * share.sqrt()
    }
}

/// What [`auto_cell`] chose for a grid: its world (from [`auto_world`]), its cell side, how
/// many valid boxes were sampled and how many elements it is sized for.
pub(crate) struct AutoCells<S> {
    pub(crate) world: Aabb<S>,
    pub(crate) cell: S,
    pub(crate) sampled: usize,
    pub(crate) elements: usize,
}

/// A world (see [`auto_world`]) and cell side for a grid that will hold boxes like those of
/// `sample`, a sample of `total` elements (or of as many as it holds, if more): `factor` times
/// the sample's mean
/// extent (mean of width and height), raised if needed so that cells hold at least `per_cell`
/// of the elements on average and so that the grid has at most 2^28 cells. Invalid boxes in
/// the sample are ignored; an empty sample (or boxes and a world of no area) gives 64 cells
/// along the world's longer side. The elements counted are `total`, or the sample's if more.
///
/// # Errors
/// [`Error::InvalidParameter`] if `world` is not a valid box.
pub(crate) fn auto_cell<S: Scalar>(
    world: &Aabb<S>,
    sample: &[Aabb<S>],
    total: usize,
    factor: f64,
    per_cell: f64,
) -> Result<AutoCells<S>, Error> {
    let world = &auto_world(world, sample);
    world.valid_world()?;
    let (width, height) = extent_of(world);
    // The mean extent, each capped at the 99.5% quantile: a few huge boxes do not set it.
    let mut extents: Vec<f64> = sample
        .iter()
        .filter(|b| b.is_valid())
        .map(|b| {
            let (w, h) = extent_of(b);
            (w + h) * 0.5
        })
        .collect();
    let sampled = extents.len();
    let extent = if sampled == 0 {
        0.0
    } else {
        let cap = *extents
            .select_nth_unstable_by(sampled - 1 - sampled / 200, f64::total_cmp)
            .1;
        extents.iter().map(|e| e.min(cap)).sum::<f64>()
    };
    let n = total.max(sampled);
    let side = width.max(height);
    let mut cell = if sampled == 0 {
        side / DEFAULT_CELLS_PER_SIDE
    } else {
        let by_extent = factor * extent / sampled as f64;
        let (bulk_width, bulk_height) = bulk_extent(world, sample);
        by_extent.max(cell_for_count(bulk_width, bulk_height, n, per_cell))
    };
    if !(cell > 0.0 && cell.is_finite()) {
        // A world or boxes of no area.
        cell = if side > 0.0 {
            side / DEFAULT_CELLS_PER_SIDE
        } else {
            1.0
        };
    }
    while dims_for(width, height, cell).is_none() && cell.is_finite() {
        cell *= 2.0;
    }
    // At most one cell per element over the whole world, whatever the bulk's shape: elements
    // crowded on one spot or beyond the world's border (filed in its border cells) must not
    // make the cells outnumber them. Cells grow by 1/16 steps until they fit the count.
    if sampled > 0 {
        let cap = n as f64;
        cell = cell.max((width * height / cap).sqrt());
        while dims_for(width, height, cell).is_some_and(|(c, r)| f64::from(c) * f64::from(r) > cap)
            && cell.is_finite()
        {
            cell *= 1.0625;
        }
    }
    // Boxes near `S::MAX` wide make a cell past what `S` holds: one that big already puts
    // the whole world in one cell.
    let cell = cell.min(S::MAX.to_f64() * 0.25);
    Ok(AutoCells {
        world: *world,
        cell: S::from_f64(cell),
        sampled,
        elements: n,
    })
}
