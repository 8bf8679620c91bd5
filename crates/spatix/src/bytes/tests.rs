//! The checksum and the header, for every structure: a bit flipped anywhere in a byte form is
//! refused, and a byte form of another structure, scalar, value type or version is refused
//! saying what was expected and what was found.

use spatix_workload::Rng;

use super::resealed;
use crate::{
    Aabb, ByteForm, Error, KdTree, ListedIndex, ListedStatic, PackedIndex, Point, SpatialIndex,
    UniformGrid,
};

/// How many single bits each structure's byte form is tested with.
const FLIPS: usize = 200;

/// A field of 300 boxes up to 4 wide (for the point grid's bound of 4) in a world 100 wide.
fn boxes() -> Vec<Aabb<f64>> {
    let mut rng = Rng::new(39);
    (0..300)
        .map(|_| {
            let min = Point::new(rng.range(0.0, 96.0), rng.range(0.0, 96.0));
            let max = Point::new(min.x + rng.range(0.0, 4.0), min.y + rng.range(0.0, 4.0));
            Aabb::new(min, max).unwrap()
        })
        .collect()
}

fn world() -> Aabb<f64> {
    Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0)).unwrap()
}

/// `index` filled with `boxes`, a third of them removed again (free slots, generations).
fn filled<I: SpatialIndex<f64, u64>>(mut index: I, boxes: &[Aabb<f64>]) -> I {
    let handles: Vec<_> = (0u64..)
        .zip(boxes)
        .map(|(i, &b)| index.insert(b, i).unwrap())
        .collect();
    for h in handles.into_iter().step_by(3) {
        index.remove(h).unwrap();
    }
    index
}

/// [`FLIPS`] bits of `X`'s byte form `bytes` flipped one at a time (seeded by `seed`): every
/// one refused as corrupt, as damaged wherever the version does not already refuse it.
/// Returns how many were refused.
fn flips_refused<X: ByteForm>(bytes: &[u8], seed: u64) -> usize {
    X::from_bytes(bytes).unwrap_or_else(|e| panic!("{}: its own bytes refused: {e}", X::NAME));
    let mut rng = Rng::new(seed);
    let mut refused = 0;
    for _ in 0..FLIPS {
        let bit = rng.below(bytes.len() * 8);
        let mut changed = bytes.to_vec();
        changed[bit / 8] ^= 1 << (bit % 8);
        match X::from_bytes(&changed) {
            Err(Error::Corrupt(text)) => {
                // A flipped bit of the version makes another version: refused as such, or,
                // if it is one this build reads too (2), by the checksum.
                let why: &[&str] = if bit / 8 < 6 {
                    &["not spatix bytes"]
                } else if bit / 8 < 8 {
                    &["format version", "checksum mismatch"]
                } else {
                    &["checksum mismatch"]
                };
                let named = why.iter().any(|why| text.contains(why));
                assert!(named, "{} bit {bit}: {text}", X::NAME);
                refused += 1;
            }
            Err(e) => panic!("{} bit {bit}: refused as {e:?}, not as corrupt", X::NAME),
            Ok(_) => panic!("{} bit {bit} flipped: loaded", X::NAME),
        }
    }
    refused
}

/// A dynamic structure holding the boxes, set up from the first 20 (a bounded one for half
/// extents up to 4): how many of its flipped bits were refused.
fn dynamic_refused<I: ListedIndex<f64, u64> + ByteForm>(boxes: &[Aabb<f64>], seed: u64) -> usize {
    let made = if I::BOUNDED {
        I::with_bound(world(), 4.0, boxes.len())
    } else {
        I::for_sample(world(), &boxes[..20], boxes.len())
    };
    let index = filled(made.unwrap(), boxes);
    flips_refused::<I>(&index.to_bytes(), seed)
}

/// A static structure built from the boxes: how many of its flipped bits were refused.
fn static_refused<I: ListedStatic<f64, u64> + ByteForm>(boxes: &[Aabb<f64>], seed: u64) -> usize {
    let index = I::build_from(boxes.iter().copied().zip(0u64..)).unwrap();
    flips_refused::<I>(&index.to_bytes(), seed)
}

macro_rules! every_structure {
    (oracle { $($oracle_name:ident: $oracle:ident),* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {{
        let boxes = boxes();
        let mut seed = 0;
        let mut refused = Vec::new();
        $({
            seed += 1;
            refused.push(dynamic_refused::<crate::$oracle<f64, u64>>(&boxes, seed));
        })*
        $({
            seed += 1;
            refused.push(dynamic_refused::<crate::$ty<f64, u64>>(&boxes, seed));
        })*
        $({
            seed += 1;
            refused.push(dynamic_refused::<crate::$serial_ty<f64, u64>>(&boxes, seed));
        })*
        $({
            seed += 1;
            refused.push(static_refused::<crate::$boxes_ty<f64, u64>>(&boxes, seed));
        })*
        $({
            seed += 1;
            refused.push(static_refused::<crate::$points_ty<f64, u64>>(&boxes, seed));
        })*
        refused
    }};
}

/// Every structure's byte form, a bit flipped at [`FLIPS`] random places one at a time:
/// every one refused.
#[test]
fn every_flipped_bit_is_refused() {
    let refused = crate::for_each_structure!(every_structure);
    assert_eq!(refused, vec![FLIPS; 12], "refused per structure");
}

/// The error of loading `bytes` as `X`.
fn refusal<X: ByteForm + core::fmt::Debug>(bytes: &[u8]) -> String {
    match X::from_bytes(bytes) {
        Err(Error::Corrupt(text)) => text,
        other => panic!("{other:?}"),
    }
}

/// Bytes of another structure, scalar, value type or version: refused, naming what was
/// expected and what was found.
#[test]
fn refusals_say_what_was_expected_and_found() {
    let points = [(Point::new(1.0f64, 2.0), 7u64)];
    let bytes = KdTree::build(points).unwrap().to_bytes();
    assert_eq!(
        refusal::<KdTree<f64, u32>>(&bytes),
        "expected u32 values, found u64 values"
    );
    assert_eq!(
        refusal::<KdTree<f64, [u8; 3]>>(&bytes),
        "expected [u8; 3] values, found u64 values"
    );
    assert_eq!(
        refusal::<KdTree<f32, u64>>(&bytes),
        "expected f32 coordinates, found f64 coordinates"
    );
    assert_eq!(
        refusal::<PackedIndex<f64, u64>>(&bytes),
        "expected a packed, found a kd-tree"
    );
    let grid = UniformGrid::<f32, ()>::new(
        Aabb::new(Point::new(0.0, 0.0), Point::new(1.0, 1.0)).unwrap(),
        0.5,
    )
    .unwrap();
    assert_eq!(
        refusal::<UniformGrid<f32, u8>>(&grid.to_bytes()),
        "expected u8 values, found () values"
    );
    // A value size that its kind does not say (made by hand), and coordinates of 2 bytes.
    let mut sized = bytes.clone();
    sized[25..33].copy_from_slice(&4u64.to_le_bytes());
    assert_eq!(
        refusal::<KdTree<f64, u64>>(&resealed(&sized)),
        "expected u64 (8 bytes each) values, found u64 (4 bytes each) values"
    );
    let mut scalar = bytes.clone();
    scalar[16] = 2;
    assert_eq!(
        refusal::<KdTree<f64, u64>>(&resealed(&scalar)),
        "expected f64 coordinates, found coordinates of 2 bytes"
    );
    // Version 1 (before the checksum) and a version to come.
    let mut old = bytes[..bytes.len() - 8].to_vec();
    old[6..8].copy_from_slice(&1u16.to_le_bytes());
    assert!(refusal::<KdTree<f64, u64>>(&old).contains("build the index again and save it"));
    let mut later = bytes.clone();
    later[6..8].copy_from_slice(&4u16.to_le_bytes());
    assert_eq!(
        refusal::<KdTree<f64, u64>>(&resealed(&later)),
        "format version 4; this build reads versions 2 to 3"
    );
    // Damaged, added to, cut short, and not spatix bytes at all.
    let mut damaged = bytes.clone();
    damaged[40] ^= 4;
    let text = refusal::<KdTree<f64, u64>>(&damaged);
    assert!(
        text.starts_with("checksum mismatch: the bytes end with 0x"),
        "{text}"
    );
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(refusal::<KdTree<f64, u64>>(&longer).starts_with("checksum mismatch"));
    assert!(refusal::<KdTree<f64, u64>>(&bytes[..20]).starts_with("cut short"));
    assert_eq!(
        refusal::<KdTree<f64, u64>>(b"SPAT"),
        "not spatix bytes (no SPATIX header)"
    );
}

/// Byte forms saved by the build before version 3 (version 2: arrays not aligned, the kd-tree's
/// splits in preorder): a kd-tree of 40 points in buckets of four and a packed index of 50
/// boxes in nodes of four, from the inputs below.
const V2_KD_TREE: &[u8] = include_bytes!("fixtures/v2-kd-tree-f64-u64.bin");
const V2_PACKED: &[u8] = include_bytes!("fixtures/v2-packed-f32-u32.bin");

/// Version 2 still loads, into the structure the same input builds today (the same points or
/// boxes in the same order, the same handles), which saves as version 3.
#[test]
fn version_2_still_loads() {
    use crate::{KdTreeConfig, PackedConfig, SpatialQuery, SplitRule};
    let points = (0..40u64).map(|i| (Point::new((i * 7 % 13) as f64, (i * 5 % 11) as f64), i));
    let config = KdTreeConfig {
        bucket_size: 4,
        split: SplitRule::Spread,
    };
    let built = KdTree::with_config(points, config).unwrap();
    assert_eq!(V2_KD_TREE[6..8], 2u16.to_le_bytes());
    let loaded = KdTree::<f64, u64>::from_bytes(V2_KD_TREE).unwrap();
    loaded.check_invariants().unwrap();
    let same = |a: crate::Item<'_, f64, u64>, b: crate::Item<'_, f64, u64>| {
        (a.handle.slot(), a.aabb, *a.value) == (b.handle.slot(), b.aabb, *b.value)
    };
    assert!(loaded.iter().zip(built.iter()).all(|(a, b)| same(a, b)));
    assert_eq!(loaded.len(), 40);
    let again = loaded.to_bytes();
    assert_eq!(again[6..8], 3u16.to_le_bytes());
    assert_eq!(
        KdTree::<f64, u64>::from_bytes(&again).unwrap().to_bytes(),
        again
    );

    let boxes = (0..50u32).map(|i| {
        let (x, y) = ((i * 7 % 13) as f32, (i * 5 % 11) as f32);
        (
            Aabb::new(Point::new(x, y), Point::new(x + 1.5, y + 0.5)).unwrap(),
            i,
        )
    });
    let built = PackedIndex::with_config(boxes, PackedConfig { node_size: 4 }).unwrap();
    let loaded = PackedIndex::<f32, u32>::from_bytes(V2_PACKED).unwrap();
    loaded.check_invariants().unwrap();
    for i in 0..50 {
        let (a, b) = (loaded.handle(i).unwrap(), built.handle(i).unwrap());
        let (a, b) = (loaded.get(a).unwrap(), built.get(b).unwrap());
        assert_eq!((a.aabb, *a.value), (b.aabb, *b.value));
    }
    let again = loaded.to_bytes();
    assert_eq!(again[6..8], 3u16.to_le_bytes());
    assert_eq!(
        PackedIndex::<f32, u32>::from_bytes(&again)
            .unwrap()
            .to_bytes(),
        again
    );
}

/// A view reads only version 3 (aligned arrays): version 2 is refused with a word to load it.
#[cfg(feature = "views")]
#[test]
fn views_refuse_version_2() {
    use crate::{AlignedBytes, KdTreeView, PackedView};
    let kd = AlignedBytes::copy_of(V2_KD_TREE);
    let text = KdTreeView::<f64, u64>::open(&kd).unwrap_err().to_string();
    assert!(
        text.contains("format version 2") && text.contains("from_bytes"),
        "{text}"
    );
    let packed = AlignedBytes::copy_of(V2_PACKED);
    let text = PackedView::<f32, u32>::open(&packed)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("format version 2") && text.contains("from_bytes"),
        "{text}"
    );
}

/// Every query of the contract on `index`, its answers dropped: what a view of damaged bytes
/// must survive without a panic, a loop or a read out of bounds.
#[cfg(feature = "views")]
fn exercise<S: crate::Scalar, I: crate::SpatialQuery<S, u16>>(index: &I) {
    use core::ops::ControlFlow;
    let mut ws = crate::Workspace::new();
    let (zero, ten) = (S::from_f64(0.0), S::from_f64(10.0));
    let area = Aabb::new(Point::new(zero, zero), Point::new(ten, ten)).unwrap();
    let _ = index.query(&area, |_| ControlFlow::Continue(()));
    let _ = index.within(Point::new(ten, zero), ten, |_| ControlFlow::Continue(()));
    let _ = index.nearest(Point::new(zero, ten), 5, &mut ws);
    let ray = crate::Ray::new(Point::new(zero, zero), Point::new(ten, ten), ten).unwrap();
    let _ = index.raycast_all(&ray, &mut ws, |_, _| ControlFlow::Continue(()));
    let _ = index.for_each_pair(|_, _| ControlFlow::Continue(()));
    let handles: Vec<_> = index.iter().map(|item| item.handle).collect();
    assert!(handles.iter().all(|&h| index.get(h).is_some()) || index.check_invariants().is_err());
    let _ = index.check_invariants();
    let _ = index.memory_bytes();
}

/// Every byte of a packed index's and a kd-tree's byte form changed two ways, the checksum
/// made right: a view opens only what it can read safely, and answers every query on it
/// without a panic; where the bytes still make a sound index, it answers as the index loaded
/// from them.
#[cfg(feature = "views")]
#[test]
fn views_of_damaged_bytes_never_panic() {
    use crate::SpatialQuery;
    use crate::{AlignedBytes, KdTreeConfig, KdTreeView, PackedConfig, PackedView, SplitRule};
    let boxes = (0..40u16).map(|i| {
        let (x, y) = (f64::from(i % 7), f64::from(i / 7));
        (
            Aabb::new(Point::new(x, y), Point::new(x + 0.5, y + 1.5)).unwrap(),
            i,
        )
    });
    let packed = PackedIndex::with_config(boxes, PackedConfig { node_size: 4 }).unwrap();
    let points = (0..50u16).map(|i| (Point::new(f64::from(i % 9), f64::from(i / 9)), i));
    let config = KdTreeConfig {
        bucket_size: 2,
        split: SplitRule::Cycle,
    };
    let kd = KdTree::with_config(points, config).unwrap();
    for bytes in [packed.to_bytes(), kd.to_bytes()] {
        for at in 0..bytes.len() {
            for flip in [0x01, 0xFF] {
                let mut changed = bytes.clone();
                changed[at] ^= flip;
                let raw = AlignedBytes::copy_of(&changed);
                assert!(PackedView::<f64, u16>::open(&raw).is_err(), "byte {at}");
                assert!(KdTreeView::<f64, u16>::open(&raw).is_err(), "byte {at}");
                let changed = AlignedBytes::copy_of(&resealed(&changed));
                if let Ok(view) = PackedView::<f64, u16>::open(&changed) {
                    exercise(&view);
                    if let Ok(loaded) = PackedIndex::<f64, u16>::from_bytes(&changed) {
                        assert!(view.iter().zip(loaded.iter()).all(|(a, b)| {
                            (a.handle, a.aabb, a.value) == (b.handle, b.aabb, b.value)
                        }));
                    }
                }
                if let Ok(view) = KdTreeView::<f64, u16>::open(&changed) {
                    exercise(&view);
                }
            }
        }
    }
}

/// Bytes at an address the arrays cannot be read at in place: refused, saying why.
#[cfg(feature = "views")]
#[test]
fn views_refuse_misaligned_bytes() {
    use crate::{AlignedBytes, KdTreeView, PackedView};
    let packed = PackedIndex::build([(Aabb::point(Point::new(1.0f64, 2.0)).unwrap(), 7u16)]);
    let kd = KdTree::build([(Point::new(1.0f32, 2.0), 7u16)]).unwrap();
    let mut shifted = vec![0u8; 4];
    shifted.extend_from_slice(&packed.unwrap().to_bytes());
    let shifted = AlignedBytes::copy_of(&shifted);
    let text = PackedView::<f64, u16>::open(&shifted[4..])
        .unwrap_err()
        .to_string();
    assert!(text.contains("not a multiple of 8"), "{text}");
    let mut shifted = vec![0u8; 32];
    shifted.extend_from_slice(&kd.to_bytes());
    let shifted = AlignedBytes::copy_of(&shifted);
    let text = KdTreeView::<f32, u16>::open(&shifted[32..])
        .unwrap_err()
        .to_string();
    assert!(text.contains("not a multiple of 64"), "{text}");
    assert!(KdTreeView::<f32, u16>::open(&AlignedBytes::copy_of(&kd.to_bytes())).is_ok());
}

/// What every query answers on `index` (sorted where the contract leaves the order open):
/// the values found by a window, a circle, the 5 nearest (with their distances), a ray's hits
/// (with their entries), and every pair.
#[cfg(feature = "views")]
fn answers<S: crate::Scalar, I: crate::SpatialQuery<S, u16>>(index: &I) -> Vec<Vec<(u16, u16)>> {
    use core::ops::ControlFlow;
    let mut ws = crate::Workspace::new();
    let s = S::from_f64;
    let (mut window, mut circle, mut rays, mut pairs) = (vec![], vec![], vec![], vec![]);
    let area = Aabb::new(Point::new(s(2.0), s(1.0)), Point::new(s(6.5), s(4.0))).unwrap();
    let _ = index.query(&area, |i| {
        window.push((*i.value, 0));
        ControlFlow::Continue(())
    });
    let _ = index.within(Point::new(s(4.0), s(3.0)), s(2.5), |i| {
        circle.push((*i.value, 0));
        ControlFlow::Continue(())
    });
    let near = index
        .nearest(Point::new(s(3.3), s(2.2)), 5, &mut ws)
        .to_vec();
    let near = near.iter().map(|n| {
        (
            *index.get(n.handle).unwrap().value,
            n.distance.to_f64() as u16,
        )
    });
    let near = near.collect();
    let ray = crate::Ray::new(
        Point::new(s(0.0), s(0.5)),
        Point::new(s(1.0), s(0.4)),
        s(20.0),
    );
    let _ = index.raycast_all(&ray.unwrap(), &mut ws, |i, t| {
        rays.push((*i.value, (t.to_f64() * 1000.0) as u16));
        ControlFlow::Continue(())
    });
    let _ = index.for_each_pair(|a, b| {
        pairs.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    let mut all = vec![window, circle, near, rays, pairs];
    all.iter_mut().for_each(|v| v.sort_unstable());
    all
}

/// A view answers every query as the structure whose bytes it reads, holds the same elements
/// under the same handles, and passes the self-check (both structures, both scalars).
#[cfg(feature = "views")]
#[test]
fn views_answer_as_the_structures() {
    use crate::{AlignedBytes, KdTreeView, PackedConfig, PackedView, SpatialQuery};
    let mut rng = Rng::new(41);
    let mut coordinate = |scale: f64| (rng.below(1000) as f64) * scale / 1000.0;
    let boxes: Vec<_> = (0..300u16)
        .map(|i| {
            let (x, y) = (coordinate(9.0), coordinate(6.0));
            let (w, h) = (coordinate(0.8), coordinate(0.8));
            (
                Aabb::new(Point::new(x, y), Point::new(x + w, y + h)).unwrap(),
                i,
            )
        })
        .collect();
    let items = |all: crate::Iter<'_, f64, u16>| {
        all.map(|i| (i.handle, i.aabb, *i.value))
            .collect::<Vec<_>>()
    };
    let packed = PackedIndex::with_config(boxes.iter().copied(), PackedConfig { node_size: 5 });
    let packed = packed.unwrap();
    let bytes = AlignedBytes::copy_of(&packed.to_bytes());
    let view = PackedView::<f64, u16>::open(&bytes).unwrap();
    view.check_invariants().unwrap();
    assert_eq!(answers(&view), answers(&packed));
    assert_eq!(items(view.iter()), items(packed.iter()));
    assert_eq!(view.len(), packed.len());
    let kd = KdTree::build(boxes.iter().map(|&(b, i)| (b.min, i))).unwrap();
    let bytes = AlignedBytes::copy_of(&kd.to_bytes());
    let view = KdTreeView::<f64, u16>::open(&bytes).unwrap();
    view.check_invariants().unwrap();
    assert_eq!(answers(&view), answers(&kd));
    assert_eq!(items(view.iter()), items(kd.iter()));
    let narrow = |(b, i): (Aabb<f64>, u16)| {
        let p = |p: Point<f64>| Point::new(p.x as f32, p.y as f32);
        (Aabb::new(p(b.min), p(b.max)).unwrap(), i)
    };
    let kd = KdTree::build(boxes.iter().map(|&e| narrow(e)).map(|(b, i)| (b.min, i))).unwrap();
    let bytes = AlignedBytes::copy_of(&kd.to_bytes());
    let view = KdTreeView::<f32, u16>::open(&bytes).unwrap();
    assert_eq!(answers(&view), answers(&kd));
    let packed = PackedIndex::build(boxes.iter().map(|&e| narrow(e))).unwrap();
    let bytes = AlignedBytes::copy_of(&packed.to_bytes());
    let view = PackedView::<f32, u16>::open(&bytes).unwrap();
    assert_eq!(answers(&view), answers(&packed));
}
