//! The checksum and the header, for every structure: a bit flipped anywhere in a byte form is
//! refused, and a byte form of another structure, scalar, value type or version is refused
//! saying what was expected and what was found.

use spatix_workload::Rng;

use super::resealed;
use crate::{Aabb, ByteForm, Error, KdTree, PackedIndex, Point, SpatialIndex, UniformGrid};

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
                let why = if bit / 8 < 6 {
                    "not spatix bytes"
                } else if bit / 8 < 8 {
                    "format version"
                } else {
                    "checksum mismatch"
                };
                assert!(text.contains(why), "{} bit {bit}: {text}", X::NAME);
                refused += 1;
            }
            Err(e) => panic!("{} bit {bit}: refused as {e:?}, not as corrupt", X::NAME),
            Ok(_) => panic!("{} bit {bit} flipped: loaded", X::NAME),
        }
    }
    refused
}

macro_rules! every_structure {
    (
        oracle { $($oracle:ident { $($of:ident: $ov:tt),* })* }
        dynamic { $(
            $ty:ident {
                name: $name:ident,
                cli: $cli:ident,
                make: $make:ident,
                pairs: $pairs:ident,
                holds: $holds:ident,
                bulk: $bulk:ident,
                about: $about:literal
            }
        )* }
        fixed { $(
            $fixed:ident {
                name: $fixed_name:ident,
                cli: $fixed_cli:ident,
                holds: $fixed_holds:ident,
                about: $fixed_about:literal
            }
        )* }
    ) => {{
        let boxes = boxes();
        let mut seed = 0;
        let mut refused = Vec::new();
        $(
            seed += 1;
            let index = filled(crate::$oracle::new(), &boxes);
            refused.push(flips_refused::<crate::$oracle<f64, u64>>(&index.to_bytes(), seed));
        )*
        $(
            seed += 1;
            let index = filled(made!($make, $holds, $ty), &boxes);
            refused.push(flips_refused::<crate::$ty<f64, u64>>(&index.to_bytes(), seed));
        )*
        $(
            seed += 1;
            let index = built!($fixed_holds, $fixed, boxes);
            refused.push(flips_refused::<crate::$fixed<f64, u64>>(&index.to_bytes(), seed));
        )*
        refused
    }};
}

/// An empty dynamic structure for the world, set up as its entry says (a bound or a
/// threshold of 4, or sized from a sample of the boxes).
macro_rules! made {
    (threshold, $holds:ident, $ty:ident) => {
        crate::$ty::new(world(), 4.0).unwrap()
    };
    ($make:ident, bounded, $ty:ident) => {
        crate::$ty::new(world(), 4.0).unwrap()
    };
    ($make:ident, boxes, $ty:ident) => {
        crate::$ty::auto(world(), &boxes()[..20]).unwrap()
    };
}

/// A static structure of the boxes (of their corners, for one of points).
macro_rules! built {
    (boxes, $ty:ident, $boxes:ident) => {
        crate::$ty::build($boxes.iter().copied().zip(0u64..)).unwrap()
    };
    (points, $ty:ident, $boxes:ident) => {
        crate::$ty::build($boxes.iter().map(|b| b.min).zip(0u64..)).unwrap()
    };
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
    later[6..8].copy_from_slice(&3u16.to_le_bytes());
    assert_eq!(
        refusal::<KdTree<f64, u64>>(&resealed(&later)),
        "format version 3; this build reads version 2"
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
