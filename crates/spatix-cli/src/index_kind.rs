//! The structures `--index` can name, and the one generic entry point that runs a command on
//! any of them.
//!
//! The trait has generic methods, so structures are dispatched with an enum and a generic
//! function rather than `dyn`: [`IndexKind::with_index`] builds the chosen structure and hands
//! it to a [`UseIndex`], whose `run` is generic over the structure. The enums, `with_index`,
//! `with_items`, [`StaticKind::with_items`] (a static structure built from its elements and
//! handed to a [`UseStatic`]), [`BatchIndex::with_type`] (the type of each structure, so that `spatix
//! build` saves it and the batch commands load it) and the [`Structure`] impls are made from
//! `spatix::for_each_structure!`: a new structure joins the command with its entry there and
//! an impl of [`Summary`] here (how it describes itself, what it draws).

use core::ops::ControlFlow;
use std::sync::OnceLock;

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::stats::decimal;
use spatix::{
    Aabb, BruteForce, ByteForm, ByteValue, Error, Handle, HierarchicalGrid, Item, KdTree, Layered,
    Listed, ListedIndex, ListedStatic, LooseGrid, LooseQuadtree, MxCifQuadtree, PackedIndex,
    ParallelPairs, PointGrid, Quadtree, Scalar, SpatialIndex, SpatialQuery, SweepGrid, UniformGrid,
};

/// The structures `--index` can name ([`IndexKind`], [`StaticKind`]), the types they name
/// ([`BatchIndex::with_type`]), how each is made ([`IndexKind::with_index`],
/// [`IndexKind::with_items`]) and its [`Structure`] impl, from `spatix::for_each_structure!`;
/// names and help from each structure's [`Listed`].
macro_rules! structures {
    (oracle { $($oracle_name:ident: $oracle:ident),* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
        /// A structure `--index` can name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum IndexKind {
            $($oracle,)*
            $($ty,)*
            $($serial_ty,)*
        }

        impl ValueEnum for IndexKind {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$oracle,)* $(Self::$ty,)* $(Self::$serial_ty,)*]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(Self::$oracle => listed::<spatix::$oracle<f64, ()>>(),)*
                    $(Self::$ty => listed::<spatix::$ty<f64, ()>>(),)*
                    $(Self::$serial_ty => listed::<spatix::$serial_ty<f64, ()>>(),)*
                })
            }
        }

        /// A static structure the batch commands can name: built once from all the elements.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum StaticKind {
            $($boxes_ty,)*
            $($points_ty,)*
        }

        impl ValueEnum for StaticKind {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$boxes_ty,)* $(Self::$points_ty,)*]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(Self::$boxes_ty => listed::<spatix::$boxes_ty<f64, ()>>(),)*
                    $(Self::$points_ty => listed::<spatix::$points_ty<f64, ()>>(),)*
                })
            }
        }

        impl StaticKind {
            /// Whether this structure holds points (it takes each box's lower-left corner).
            pub(crate) fn holds_points(self) -> bool {
                matches!(self, $(Self::$points_ty)|*)
            }

            /// Builds this structure from `items` ([`ListedStatic::build_from`]) and runs
            /// `user` on it.
            pub(crate) fn with_items<S, T, U>(
                self,
                items: Vec<(Aabb<S>, T)>,
                user: U,
            ) -> Result<U::Output, Error>
            where
                S: Scalar,
                T: Sync,
                U: UseStatic<S, T>,
            {
                Ok(match self {
                    $(Self::$boxes_ty => user.run(
                        <spatix::$boxes_ty<S, T> as ListedStatic<S, T>>::build_from(items)?,
                    ),)*
                    $(Self::$points_ty => user.run(
                        <spatix::$points_ty<S, T> as ListedStatic<S, T>>::build_from(items)?,
                    ),)*
                })
            }
        }

        impl BatchIndex {
            /// Runs `user` with this structure's type (ids as values): the one list of the
            /// structures that `spatix build` saves and the batch commands load.
            pub(crate) fn with_type<S: Scalar, U: UseType<S>>(self, user: U) -> U::Output {
                match self {
                    $(Self::Static(StaticKind::$boxes_ty) => user.run::<spatix::$boxes_ty<S, u64>>(),)*
                    $(Self::Static(StaticKind::$points_ty) => user.run::<spatix::$points_ty<S, u64>>(),)*
                    $(Self::Dynamic(IndexKind::$oracle) => user.run::<spatix::$oracle<S, u64>>(),)*
                    $(Self::Dynamic(IndexKind::$ty) => user.run::<spatix::$ty<S, u64>>(),)*
                    $(Self::Dynamic(IndexKind::$serial_ty) => user.run::<spatix::$serial_ty<S, u64>>(),)*
                }
            }
        }

        impl IndexKind {
            /// Builds this structure for `plan` (empty, memory reserved: as it sets itself up
            /// from the plan's sample and count, [`ListedIndex::for_sample`]), frees the
            /// plan's sample and runs `user` on the structure.
            pub(crate) fn with_index<S, T, U>(self, plan: Plan<S>, user: U) -> Result<U::Output, Error>
            where
                S: Scalar,
                T: Send + Sync,
                U: UseIndex<S, T>,
            {
                Ok(match self {
                    $(Self::$oracle => start::<spatix::$oracle<S, T>, _, _, _>(plan, user)?,)*
                    $(Self::$ty => start::<spatix::$ty<S, T>, _, _, _>(plan, user)?,)*
                    $(Self::$serial_ty => start::<spatix::$serial_ty<S, T>, _, _, _>(plan, user)?,)*
                })
            }

            /// Builds this structure holding `items` and runs `user` on it: in one go where
            /// it has a bulk build (the sweep grid's `build_auto`, which numbers its slots in
            /// storage order, so that walking its storage reads the slot table in order), the
            /// others by inserting each item, in order, into what
            /// [`with_index`](Self::with_index) makes for `plan`.
            pub(crate) fn with_items<S, T, U>(
                self,
                plan: Plan<S>,
                items: Vec<(Aabb<S>, T)>,
                user: U,
            ) -> Result<U::Output, Error>
            where
                S: Scalar,
                T: Send + Sync,
                U: UseIndex<S, T>,
            {
                let bulk = match self {
                    $(Self::$oracle => <spatix::$oracle<S, T> as ListedIndex<S, T>>::BULK,)*
                    $(Self::$ty => <spatix::$ty<S, T> as ListedIndex<S, T>>::BULK,)*
                    $(Self::$serial_ty => <spatix::$serial_ty<S, T> as ListedIndex<S, T>>::BULK,)*
                };
                if !bulk {
                    return self.with_index(plan, Inserting { items, user })?;
                }
                let world = plan.world;
                drop(plan);
                Ok(match self {
                    $(Self::$oracle => user.run(spatix::$oracle::with_items(world, items)?),)*
                    $(Self::$ty => user.run(spatix::$ty::with_items(world, items)?),)*
                    $(Self::$serial_ty => user.run(spatix::$serial_ty::with_items(world, items)?),)*
                })
            }
        }

        $(impl<S: Scalar, T: Sync> Structure<S, T> for spatix::$oracle<S, T> {
            byte_form!();
        })*
        $(impl<S: Scalar, T: Sync> Structure<S, T> for spatix::$ty<S, T> {
            byte_form!();

            parallel_pairs!();
        })*
        $(impl<S: Scalar, T: Sync> Structure<S, T> for spatix::$serial_ty<S, T> {
            byte_form!();
        })*
        $(impl<S: Scalar, T: Sync> Structure<S, T> for spatix::$boxes_ty<S, T> {
            byte_form!();
        })*
        $(impl<S: Scalar, T: Sync> Structure<S, T> for spatix::$points_ty<S, T> {
            byte_form!();
        })*
    };
}

/// `X`'s name and help on the command line.
fn listed<X: Listed>() -> PossibleValue {
    PossibleValue::new(X::CLI).help(X::ABOUT)
}

/// Makes `I` for `plan` ([`ListedIndex::for_sample`]), frees the plan and runs `user` on it.
fn start<I, S, T, U>(plan: Plan<S>, user: U) -> Result<U::Output, Error>
where
    I: ListedIndex<S, T> + Structure<S, T>,
    S: Scalar,
    U: UseIndex<S, T>,
{
    let index = I::for_sample(plan.world, &plan.sample, plan.count)?;
    drop(plan);
    Ok(user.run(index))
}

impl Default for IndexKind {
    /// The sweep grid: the fastest frames of `sim`.
    fn default() -> Self {
        Self::SweepGrid
    }
}

/// What `--index` of a batch command names: a static structure, built once from the whole
/// file, or any dynamic one, filled by inserting every element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchIndex {
    Static(StaticKind),
    Dynamic(IndexKind),
}

impl BatchIndex {
    /// The name `--index` gives this structure.
    pub(crate) fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }
}

/// A command that runs with the type of whichever structure [`BatchIndex::with_type`] names.
pub(crate) trait UseType<S: Scalar> {
    /// What the command returns.
    type Output;

    /// Runs the command with the structure `X`.
    fn run<X: ByteForm + Structure<S, u64>>(self) -> Self::Output;
}

impl ValueEnum for BatchIndex {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<BatchIndex>> = OnceLock::new();
        ALL.get_or_init(|| {
            let statics = StaticKind::value_variants()
                .iter()
                .map(|&k| Self::Static(k));
            let dynamics = IndexKind::value_variants()
                .iter()
                .map(|&k| Self::Dynamic(k));
            statics.chain(dynamics).collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            Self::Static(kind) => kind.to_possible_value(),
            Self::Dynamic(kind) => kind.to_possible_value(),
        }
    }
}

/// What `--index` of `pairs` and `query` names: a structure that holds boxes, every batch
/// structure but the kd-tree (parsed, yet hidden from the help, so that it is refused with
/// the reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BoxIndex(pub(crate) BatchIndex);

impl ValueEnum for BoxIndex {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<BoxIndex>> = OnceLock::new();
        ALL.get_or_init(|| {
            BatchIndex::value_variants()
                .iter()
                .map(|&k| Self(k))
                .collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value = self.0.to_possible_value()?;
        Some(value.hide(self.0 == BatchIndex::Static(StaticKind::KdTree)))
    }
}

/// What a structure is built for: the world to declare, a sample of the boxes to come (all of
/// them, or a random subset), and how many will come.
#[derive(Clone, Debug)]
pub(crate) struct Plan<S> {
    pub(crate) world: Aabb<S>,
    pub(crate) sample: Vec<Aabb<S>>,
    pub(crate) count: usize,
}

/// How a structure shows itself: its own code, for each structure.
pub(crate) trait Summary<S: Scalar> {
    /// One line for the summary: the structure and its parameters.
    fn describe(&self) -> String;

    /// Visits the boxes to outline when drawing the structure (cells, leaves, loose
    /// boxes). Structures with nothing to draw visit none.
    fn outlines(&self, _visit: &mut dyn FnMut(&Aabb<S>)) {}
}

/// What the command needs from a structure beyond [`SpatialQuery`] (an impl for each
/// structure of the list, [`structures!`]).
pub(crate) trait Structure<S: Scalar, T>: SpatialQuery<S, T> + Sync + Summary<S> {
    /// The structure's byte form ([`ByteForm::to_bytes`]).
    fn to_bytes(&self) -> Vec<u8>
    where
        T: ByteValue;

    /// Whether the structure implements [`ParallelPairs`]: its pair pass runs on rayon's
    /// threads, and [`update_on_threads`](Self::update_on_threads) is its `par_update_all`.
    const PARALLEL: bool = false;

    /// Every colliding pair folded into `first` (`threads` false, or no parallel pair
    /// pass: on the calling thread), or into states of each thread's own on rayon's current
    /// pool, made by `init`, joined with `join`, then joined into `first`.
    fn fold_pairs<A: Send>(
        &self,
        _threads: bool,
        mut first: A,
        _init: impl Fn() -> A + Sync,
        visit: impl Fn(&mut A, Item<'_, S, T>, Item<'_, S, T>) + Sync,
        _join: impl Fn(A, A) -> A + Sync,
    ) -> A {
        let _ = self.for_each_pair(|a, b| {
            visit(&mut first, a, b);
            ControlFlow::Continue(())
        });
        first
    }

    /// `update_all`, or where the structure implements [`ParallelPairs`], its
    /// `par_update_all` on `pool`.
    fn update_on_threads(
        &mut self,
        _pool: &rayon::ThreadPool,
        f: impl Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
    ) -> Result<(), Error>
    where
        T: Send,
        Self: SpatialIndex<S, T>,
    {
        self.update_all(f)
    }
}

/// `fold_pairs` and `update_on_threads` for a structure that implements [`ParallelPairs`]
/// (pairs by [`ParallelPairs::par_fold_pairs`]); the defaults for a serial one.
macro_rules! parallel_pairs {
    () => {
        const PARALLEL: bool = true;

        fn fold_pairs<A: Send>(
            &self,
            threads: bool,
            mut first: A,
            init: impl Fn() -> A + Sync,
            visit: impl Fn(&mut A, Item<'_, S, T>, Item<'_, S, T>) + Sync,
            join: impl Fn(A, A) -> A + Sync,
        ) -> A {
            if !threads {
                let _ = self.for_each_pair(|a, b| {
                    visit(&mut first, a, b);
                    ControlFlow::Continue(())
                });
                return first;
            }
            let (ControlFlow::Continue(found) | ControlFlow::Break(found)) = self.par_fold_pairs(
                init,
                |state, a, b| {
                    visit(state, a, b);
                    ControlFlow::Continue(())
                },
                &join,
            );
            join(first, found)
        }

        fn update_on_threads(
            &mut self,
            pool: &rayon::ThreadPool,
            f: impl Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        ) -> Result<(), Error>
        where
            T: Send,
        {
            let f = &f;
            pool.install(|| self.par_update_all(f))
        }
    };
}

/// `to_bytes` for a structure that implements [`ByteForm`].
macro_rules! byte_form {
    () => {
        fn to_bytes(&self) -> Vec<u8>
        where
            T: ByteValue,
        {
            ByteForm::to_bytes(self)
        }
    };
}

/// The parameters of a quadtree in its summary: depth limit, and how many elements a `node`
/// holds when it splits (`above` or `at` that count).
fn tree_parameters(max_depth: u32, split: &str, max_elements: u32, node: &str) -> String {
    format!("max depth {max_depth}, split {split} {max_elements} elements per {node}")
}

/// The parameters of a grid in its summary: its `cells`' count and side.
fn grid_parameters<S: Scalar>((cols, rows): (u32, u32), cells: &str, side: S) -> String {
    format!("{cols} x {rows} {cells} of side {}", decimal(side.to_f64()))
}

/// A `traverse` visitor of the tight quadtrees that passes their leaves' boxes to `visit`.
fn leaves<S: Scalar>(
    visit: &mut dyn FnMut(&Aabb<S>),
) -> impl FnMut(&Aabb<S>, u32, spatix::NodeKind) + '_ {
    move |aabb, _, kind| {
        if let spatix::NodeKind::Leaf { .. } = kind {
            visit(aabb);
        }
    }
}

impl<S: Scalar, T> Summary<S> for BruteForce<S, T> {
    fn describe(&self) -> String {
        "brute-force (one array)".to_owned()
    }
}

impl<S: Scalar, T> Summary<S> for Quadtree<S, T> {
    fn describe(&self) -> String {
        let config = self.config();
        let parameters = tree_parameters(config.max_depth, "above", config.max_elements, "leaf");
        format!("quadtree ({parameters})")
    }

    fn outlines(&self, visit: &mut dyn FnMut(&Aabb<S>)) {
        self.traverse(leaves(visit));
    }
}

impl<S: Scalar, T> Summary<S> for LooseQuadtree<S, T> {
    fn describe(&self) -> String {
        let config = self.config();
        let parameters = tree_parameters(config.max_depth, "above", config.max_elements, "leaf");
        format!("loose-quadtree ({parameters})")
    }

    /// The leaves' loose boxes (where elements are), not their quadrants.
    fn outlines(&self, visit: &mut dyn FnMut(&Aabb<S>)) {
        self.traverse(|node| {
            if let (spatix::NodeKind::Leaf { .. }, Some(loose)) = (node.kind, node.loose) {
                visit(&loose);
            }
        });
    }
}

impl<S: Scalar, T> Summary<S> for UniformGrid<S, T> {
    fn describe(&self) -> String {
        format!(
            "grid ({})",
            grid_parameters(self.dims(), "cells", self.cell_size())
        )
    }

    fn outlines(&self, visit: &mut dyn FnMut(&Aabb<S>)) {
        self.for_each_cell(|cell, _| visit(&cell));
    }
}

impl<S: Scalar, T> Summary<S> for MxCifQuadtree<S, T> {
    fn describe(&self) -> String {
        let config = self.config();
        let parameters = tree_parameters(config.max_depth, "at", config.max_elements, "node");
        format!("mxcif (MX-CIF quadtree, {parameters})")
    }

    fn outlines(&self, visit: &mut dyn FnMut(&Aabb<S>)) {
        self.traverse(leaves(visit));
    }
}

impl<S: Scalar, T> Summary<S> for LooseGrid<S, T> {
    fn describe(&self) -> String {
        let parameters = grid_parameters(self.dims(), "loose cells", self.cell_size());
        format!("loose-grid ({parameters})")
    }

    /// The occupied cells' loose boxes.
    fn outlines(&self, visit: &mut dyn FnMut(&Aabb<S>)) {
        self.for_each_cell(|cell, _| visit(&cell));
    }
}

impl<S: Scalar, T> Summary<S> for PointGrid<S, T> {
    fn describe(&self) -> String {
        format!(
            "point-grid ({}, half extents up to {})",
            grid_parameters(self.dims(), "cells", self.cell_size()),
            decimal(self.max_half_extent().to_f64())
        )
    }
}

impl<S: Scalar, T> Summary<S> for HierarchicalGrid<S, T> {
    fn describe(&self) -> String {
        let finest = self.cell_size(0).map_or(0.0, |c| c.to_f64());
        format!(
            "hierarchical ({} levels, finest cells of side {})",
            self.levels(),
            decimal(finest)
        )
    }
}

impl<S: Scalar, T> Summary<S> for SweepGrid<S, T> {
    fn describe(&self) -> String {
        format!(
            "sweep ({} bands of height {})",
            self.band_count(),
            decimal(self.band_height().to_f64())
        )
    }
}

impl<S: Scalar, T> Summary<S> for Layered<S, T> {
    fn describe(&self) -> String {
        format!(
            "layered (agents up to half extent {} apart from larger elements)",
            decimal(self.threshold().to_f64())
        )
    }
}

impl<S: Scalar, T> Summary<S> for KdTree<S, T> {
    fn describe(&self) -> String {
        let config = self.config();
        format!(
            "kd-tree (height {}, up to {} points per leaf)",
            self.height(),
            config.bucket_size
        )
    }
}

impl<S: Scalar, T> Summary<S> for spatix::KdTreeView<'_, S, T> {
    fn describe(&self) -> String {
        format!(
            "kd-tree (height {}, up to {} points per leaf; read in place)",
            self.height(),
            self.config().bucket_size
        )
    }
}

impl<S: Scalar, T> Summary<S> for spatix::PackedView<'_, S, T> {
    fn describe(&self) -> String {
        format!(
            "packed (Hilbert-packed tree, {} children per node; read in place)",
            self.config().node_size
        )
    }
}

/// A view's byte form: the bytes it reads.
impl<S: Scalar, T: Sync> Structure<S, T> for spatix::KdTreeView<'_, S, T> {
    fn to_bytes(&self) -> Vec<u8>
    where
        T: ByteValue,
    {
        self.bytes().to_vec()
    }
}

/// A view's byte form: the bytes it reads.
impl<S: Scalar, T: Sync> Structure<S, T> for spatix::PackedView<'_, S, T> {
    fn to_bytes(&self) -> Vec<u8>
    where
        T: ByteValue,
    {
        self.bytes().to_vec()
    }
}

impl<S: Scalar, T> Summary<S> for PackedIndex<S, T> {
    fn describe(&self) -> String {
        format!(
            "packed (Hilbert-packed tree, {} children per node)",
            self.config().node_size
        )
    }
}

/// A command that runs on whichever structure `--index` chose.
pub(crate) trait UseIndex<S: Scalar, T> {
    /// What the command returns.
    type Output;

    /// Runs the command on `index`, empty and with room reserved for the plan's elements.
    fn run<I: Structure<S, T> + SpatialIndex<S, T>>(self, index: I) -> Self::Output;
}

/// A command that runs on whichever static structure [`StaticKind::with_items`] built.
pub(crate) trait UseStatic<S: Scalar, T> {
    /// What the command returns.
    type Output;

    /// Runs the command on `index`, built from all its elements.
    fn run<I: Structure<S, T>>(self, index: I) -> Self::Output;
}

/// Inserts its items, in order, into the structure it is given, then runs its user on it.
struct Inserting<S, T, U> {
    items: Vec<(Aabb<S>, T)>,
    user: U,
}

impl<S: Scalar, T, U: UseIndex<S, T>> UseIndex<S, T> for Inserting<S, T, U> {
    type Output = Result<U::Output, Error>;

    fn run<I: Structure<S, T> + SpatialIndex<S, T>>(self, mut index: I) -> Self::Output {
        for (aabb, value) in self.items {
            index.insert(aabb, value)?;
        }
        Ok(self.user.run(index))
    }
}

spatix::for_each_structure!(structures);
