//! The one list of spatix's structures that the tests, benchmarks, tools and bindings outside
//! the library are driven from: [`for_each_structure!`](crate::for_each_structure).

/// Calls the macro `$callback` with the list of spatix's structures (not part of the API:
/// the workspace's tests, benchmarks, `compare`, the command line, the fuzzer and the Python
/// bindings enumerate the structures with it, so that a new structure joins them all here).
///
/// `for_each_structure!(callback)` expands to `callback! { oracle { .. } dynamic { .. }
/// fixed { .. } }`, and `for_each_structure!(callback, tokens..)` to `callback! { tokens..
/// oracle { .. } dynamic { .. } fixed { .. } }`. Each group lists its structures as `Type {
/// field: value, .. }`, `Type` the name of the structure at the crate's root, every entry of
/// a group with the same fields in the same order:
///
/// * `oracle`: [`BruteForce`](crate::BruteForce), which every other structure is checked
///   against (quadratic pairs: small inputs only); fields `name`, `cli` and `about` as below.
/// * `dynamic`: the [`SpatialIndex`](crate::SpatialIndex) structures, fields:
///   * `name`: its short name (`snake_case`): of its benchmarks, conformance tests and fuzz
///     targets (there with `-` for `_`);
///   * `cli`: its variant of the command line's `--index` (which clap writes in kebab-case);
///   * `make`: how it is set up for data it has not seen: `element_size`
///     (`for_element_size(world, typical extent)`, or `auto(world, sample)`; `reserve(n)`
///     makes room), `sample` (`auto(world, sample)` and `auto_sampled(world, sample,
///     total)`), or `threshold` (`new(world, threshold)`: the largest half extent of a
///     common agent);
///   * `pairs`: `parallel` where it implements [`ParallelPairs`](crate::ParallelPairs)
///     (with `par_update_all`), else `serial`;
///   * `holds`: `boxes`, or `bounded` where it refuses boxes larger than a bound taken from
///     its sample (`Error::BoxTooLarge`: for same-size agents only; `new(world, bound)`
///     makes one with that bound);
///   * `bulk`: `build_auto` where `build_auto(world, items)` builds it in one go, else
///     `none`;
///   * `about`: one line on what it is, for help texts.
/// * `fixed`: the [`StaticIndex`](crate::StaticIndex) structures, built once by `build`
///   (and `par_build` with feature `rayon`) from their elements, fields `name`, `cli` and
///   `about` as above and `holds`: `boxes` (`build` takes `(Aabb, value)` pairs) or `points`
///   (`build` takes `(Point, value)` pairs).
///
/// ```
/// macro_rules! names {
///     (
///         oracle { $($o:ident { $($of:ident: $ov:tt),* })* }
///         dynamic { $($d:ident { $($df:ident: $dv:tt),* })* }
///         fixed { $($f:ident { $($ff:ident: $fv:tt),* })* }
///     ) => {
///         [$(stringify!($o),)* $(stringify!($d),)* $(stringify!($f),)*]
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
            oracle {
                BruteForce {
                    name: brute,
                    cli: BruteForce,
                    about: "`BruteForce`: one array, every pair tested (O(n²) pairs: for small inputs)."
                }
            }
            dynamic {
                Quadtree {
                    name: quadtree,
                    cli: Quadtree,
                    make: element_size,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`Quadtree`: tight quadtree, depth from the elements' size."
                }
                LooseQuadtree {
                    name: loose_quadtree,
                    cli: LooseQuadtree,
                    make: element_size,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`LooseQuadtree`: each element in one leaf by its centre, loose node boxes; depth from the elements' size."
                }
                MxCifQuadtree {
                    name: mxcif,
                    cli: Mxcif,
                    make: element_size,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`MxCifQuadtree`: each element in the smallest node that contains it; depth from the elements' size."
                }
                UniformGrid {
                    name: grid,
                    cli: Grid,
                    make: sample,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`UniformGrid`: cells from the elements' size and count."
                }
                LooseGrid {
                    name: loose_grid,
                    cli: LooseGrid,
                    make: sample,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`LooseGrid`: the loose/tight double grid, each element in one loose cell by its centre."
                }
                PointGrid {
                    name: points,
                    cli: PointGrid,
                    make: sample,
                    pairs: parallel,
                    holds: bounded,
                    bulk: none,
                    about: "`PointGrid`: each element as one point, under the largest half extent of the initial boxes (larger boxes are refused)."
                }
                HierarchicalGrid {
                    name: hierarchical,
                    cli: Hierarchical,
                    make: sample,
                    pairs: parallel,
                    holds: boxes,
                    bulk: none,
                    about: "`HierarchicalGrid`: levels of grids, each element in the level that fits its size."
                }
                Layered {
                    name: layered,
                    cli: Layered,
                    make: threshold,
                    pairs: serial,
                    holds: boxes,
                    bulk: none,
                    about: "`Layered`: agents up to the typical size in a point grid, larger ones in a loose grid."
                }
                SweepGrid {
                    name: sweep,
                    cli: Sweep,
                    make: sample,
                    pairs: parallel,
                    holds: boxes,
                    bulk: build_auto,
                    about: "`SweepGrid`: horizontal bands by the bottom of each box, each band sorted by the left; pairs by sweep-and-prune. Made for many similar agents moved every frame."
                }
            }
            fixed {
                KdTree {
                    name: kdtree,
                    cli: KdTree,
                    holds: points,
                    about: "`KdTree`: points only, built once."
                }
                PackedIndex {
                    name: packed,
                    cli: Packed,
                    holds: boxes,
                    about: "`PackedIndex`: boxes (or points) built once into one Hilbert-sorted packed tree."
                }
            }
        }
    };
}
