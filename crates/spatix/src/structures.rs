//! The one list of spatix's structures that the tests, benchmarks, tools and bindings outside
//! the library are driven from ([`for_each_structure!`](crate::for_each_structure)), and what
//! each listed structure says of itself ([`Listed`], [`ListedIndex`], [`ListedStatic`]),
//! implemented in its own `mod.rs`: a consumer is one generic function over these traits,
//! called once per listed structure.

use crate::{Aabb, Error, Scalar, SpatialIndex, SpatialQuery};

/// What every listed structure says of itself (not part of the API): its name on the command
/// line and its one line of help.
#[doc(hidden)]
pub trait Listed {
    /// Its value of the command line's `--index`.
    const CLI: &'static str;
    /// One line on what it is, for help texts.
    const ABOUT: &'static str;
}

/// How a listed dynamic structure (or the oracle) is set up for data it has not seen (not
/// part of the API).
///
/// ```
/// use spatix::{Aabb, ListedIndex, Point, SpatialQuery, SweepGrid};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let items: Vec<_> = (0..100u32)
///     .map(|i| {
///         let p = Point::new((i % 10) as f32 * 10.0, (i / 10) as f32 * 10.0);
///         (Aabb::new(p, Point::new(p.x + 2.0, p.y + 2.0)).unwrap(), i)
///     })
///     .collect();
/// let grid = SweepGrid::with_items(world, items)?;
/// assert_eq!(grid.len(), 100);
/// # Ok::<(), spatix::Error>(())
/// ```
#[doc(hidden)]
pub trait ListedIndex<S: Scalar, T>: Listed + SpatialIndex<S, T> + Sized {
    /// Whether it refuses boxes larger than a bound ([`Error::BoxTooLarge`]), which
    /// [`for_sample`](Self::for_sample) takes from its sample: it is made for elements of one
    /// size.
    const BOUNDED: bool = false;

    /// Whether [`with_items`](Self::with_items) builds it in one go (a bulk build) rather
    /// than inserting each item.
    const BULK: bool = false;

    /// Empty, set up for `total` elements like `sample` (boxes drawn from them) over `world`,
    /// with room for them.
    ///
    /// # Errors
    /// What its constructors refuse: an invalid world, parameters out of range.
    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error>;

    /// Empty, holding boxes of half extent up to `half_extent` on each axis: a bounded
    /// structure refuses larger ones; the others are set up as
    /// [`for_sample`](Self::for_sample) of one such box among `total`.
    ///
    /// # Errors
    /// As [`for_sample`](Self::for_sample).
    fn with_bound(world: Aabb<S>, half_extent: S, total: usize) -> Result<Self, Error> {
        let corner = world.min;
        let far = crate::Point::new(
            corner.x + half_extent + half_extent,
            corner.y + half_extent + half_extent,
        );
        Self::for_sample(world, &[Aabb::new(corner, far)?], total)
    }

    /// Holding `items` over `world`: built in one go where it has a bulk build, else each
    /// item inserted, in order, into [`for_sample`](Self::for_sample) of an even stride of
    /// them.
    ///
    /// # Errors
    /// As [`for_sample`](Self::for_sample), and the first box refused.
    fn with_items(world: Aabb<S>, items: Vec<(Aabb<S>, T)>) -> Result<Self, Error> {
        let sample = stride_sample(&items);
        let mut index = Self::for_sample(world, &sample, items.len())?;
        for (aabb, value) in items {
            index.insert(aabb, value)?;
        }
        Ok(index)
    }
}

/// How a listed static structure is built (not part of the API).
#[doc(hidden)]
pub trait ListedStatic<S: Scalar, T>: Listed + SpatialQuery<S, T> + Sized {
    /// Built from `items` (a structure of points, listed under `points`, takes each box's
    /// lower-left corner).
    ///
    /// # Errors
    /// What its build refuses ([`Error::InvalidAabb`] for an invalid box).
    fn build_from(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error>;
}

/// [`LISTED`]'s entries, from the groups of [`for_each_structure!`](crate::for_each_structure).
macro_rules! listed {
    (
        oracle { $($o:ident: $oty:ident),* }
        dynamic {
            parallel { $($p:ident: $pty:ident),* }
            serial { $($s:ident: $sty:ident),* }
        }
        fixed {
            boxes { $($b:ident: $bty:ident),* }
            points { $($q:ident: $qty:ident),* }
        }
    ) => {
        &[
            $((stringify!($pty), <crate::$pty<f32, ()> as Listed>::ABOUT),)*
            $((stringify!($sty), <crate::$sty<f32, ()> as Listed>::ABOUT),)*
            $((stringify!($bty), <crate::$bty<f32, ()> as Listed>::ABOUT),)*
            $((stringify!($qty), <crate::$qty<f32, ()> as Listed>::ABOUT),)*
        ]
    };
}

/// Every listed structure but the oracle, in the list's order: the name of its type and
/// its [`Listed::ABOUT`] (not part of the API: for the bindings' surfaces and their tests,
/// which name the structures to another language).
///
/// ```
/// assert!(spatix::LISTED.iter().any(|&(name, _)| name == "KdTree"));
/// assert!(spatix::LISTED.iter().all(|&(name, _)| name != "BruteForce"));
/// ```
#[doc(hidden)]
pub const LISTED: &[(&str, &str)] = crate::for_each_structure!(listed);

/// At most this many boxes of `with_items`' input size a structure.
const SAMPLE: usize = 16_384;

/// An even stride of at most [`SAMPLE`] of the items' boxes.
fn stride_sample<S: Scalar, T>(items: &[(Aabb<S>, T)]) -> Vec<Aabb<S>> {
    let step = items.len().div_ceil(SAMPLE).max(1);
    items.iter().step_by(step).map(|(b, _)| *b).collect()
}

/// The size of a typical element of `sample` for the quadtrees' depth: the mean extent (mean
/// of width and height) of its valid boxes, each capped at the 99.5% quantile (so that a few
/// huge boxes do not set the size), but at least a quarter of the mean spacing of `total`
/// elements over `world` (so that points and tiny boxes still get a tree deep enough to hold
/// a few elements per leaf), and at most a quarter of the world's longer side (so that cells
/// sized from it stay finite); 0 for an invalid world.
pub(crate) fn typical_size<S: Scalar>(world: &Aabb<S>, sample: &[Aabb<S>], total: usize) -> S {
    let mut extents: Vec<f64> = sample
        .iter()
        .filter(|b| b.is_valid())
        .map(|b| (b.size().x.to_f64() + b.size().y.to_f64()) * 0.5)
        .collect();
    let cap = match extents.len() {
        0 => 0.0,
        len => {
            *extents
                .select_nth_unstable_by(len - 1 - len / 200, f64::total_cmp)
                .1
        }
    };
    let n = extents.len().max(1) as f64;
    let extent = extents.iter().map(|e| e.min(cap)).sum::<f64>() / n;
    let size = world.size();
    let (w, h) = (size.x.to_f64(), size.y.to_f64());
    let spacing = (w * h / total.max(1) as f64).sqrt();
    let typical = extent.max(spacing / 4.0).min(w.max(h) * 0.25);
    S::from_f64(if typical.is_finite() { typical } else { 0.0 })
}

/// The 95th percentile of the sample's half sizes (the larger of each valid box's two): the
/// layered index's threshold, the common agents in its point grid, the rare large ones in its
/// loose grid.
pub(crate) fn common_half_size<S: Scalar>(sample: &[Aabb<S>]) -> S {
    let mut halves: Vec<S> = sample
        .iter()
        .filter(|b| b.is_valid())
        .map(|b| b.size().x.max_s(b.size().y) * S::HALF)
        .collect();
    halves.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(core::cmp::Ordering::Equal));
    halves
        .get(halves.len() * 95 / 100)
        .copied()
        .unwrap_or(S::ZERO)
}

/// Calls the macro `$callback` with the list of spatix's structures (not part of the API:
/// the workspace's tests, benchmarks, `compare`, the command line and the fuzzer enumerate
/// the structures with it, so that a new structure joins them all here).
///
/// `for_each_structure!(callback)` expands to `callback! { oracle { .. } dynamic {
/// parallel { .. } serial { .. } } fixed { boxes { .. } points { .. } } }`, and `for_each_structure!(callback,
/// tokens..)` to `callback! { tokens.. oracle { .. } .. }`. Each group lists its structures
/// as `name: Type`: `name` its short name (`snake_case`: of its benchmarks, conformance tests
/// and fuzz targets, there with `-` for `_`), `Type` the structure at the crate's root. What
/// a structure says of itself is in its impls of [`Listed`] (its command-line name and
/// help), [`ListedIndex`] (how it is set up from a sample, what it refuses, its bulk build)
/// or [`ListedStatic`] (its build). The groups:
///
/// * `oracle`: [`BruteForce`](crate::BruteForce), which every other structure is checked
///   against (quadratic pairs: small inputs only);
/// * `dynamic`: the [`SpatialIndex`] structures, `parallel` those that implement
///   [`ParallelPairs`](crate::ParallelPairs) (with `par_update_all`), `serial` the others;
/// * `fixed`: the [`StaticIndex`](crate::StaticIndex) structures, built once from their
///   elements: `boxes` those of boxes, `points` those of points.
///
/// ```
/// macro_rules! names {
///     (
///         oracle { $($o:ident: $oty:ident),* }
///         dynamic {
///             parallel { $($p:ident: $pty:ident),* }
///             serial { $($s:ident: $sty:ident),* }
///         }
///         fixed {
///             boxes { $($b:ident: $bty:ident),* }
///             points { $($q:ident: $qty:ident),* }
///         }
///     ) => {
///         [
///             $(stringify!($oty),)* $(stringify!($pty),)* $(stringify!($sty),)*
///             $(stringify!($bty),)* $(stringify!($qty),)*
///         ]
///     };
/// }
/// let names = spatix::for_each_structure!(names);
/// assert_eq!(names[0], "BruteForce");
/// assert!(names.contains(&"SweepGrid") && names.contains(&"KdTree"));
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_structure {
    ($callback:ident $(, $($tokens:tt)*)?) => {
        $callback! {
            $($($tokens)*)?
            oracle { brute: BruteForce }
            dynamic {
                parallel {
                    quadtree: Quadtree,
                    loose_quadtree: LooseQuadtree,
                    mxcif: MxCifQuadtree,
                    grid: UniformGrid,
                    loose_grid: LooseGrid,
                    points: PointGrid,
                    hierarchical: HierarchicalGrid,
                    sweep: SweepGrid,
                    layered: Layered
                }
                serial {}
            }
            fixed {
                boxes { packed: PackedIndex }
                points { kdtree: KdTree }
            }
        }
    };
}
