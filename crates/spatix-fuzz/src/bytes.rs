//! The decoders: arbitrary bytes given to `from_bytes`, which must refuse them with
//! `Error::Corrupt` or load a structure that passes its self-check and saves to exactly those
//! bytes, never panic, never allocate beyond the input's length. The static structures' bytes
//! are also opened as views (`PackedView`, `KdTreeView`), which must open whatever loads and
//! then answer exactly as the loaded structure, and must answer every query on whatever else
//! they open without a panic, a loop or a read out of bounds.

use core::ops::ControlFlow;

use spatix::{
    Aabb, AlignedBytes, BruteForce, ByteForm, Error, HierarchicalGrid, KdTree, KdTreeView, Layered,
    LooseGrid, LooseQuadtree, MxCifQuadtree, PackedConfig, PackedIndex, PackedView, Point,
    PointGrid, Quadtree, Ray, Scalar, SpatialIndex, SpatialQuery, SweepGrid, TreeConfig,
    UniformGrid, Workspace, checksum,
};

use crate::{POINT_BOUND, WORLD};

/// The kd-tree's decoder (`f64` points from pairs of bytes, `u64` values).
pub(crate) fn kdtree(data: &[u8]) {
    decode_with(
        data,
        |elements| {
            KdTree::<f64, u64>::build(
                elements
                    .chunks_exact(2)
                    .map(|c| Point::new(f64::from(c[0]), f64::from(c[1])))
                    .zip(0..),
            )
            .expect("finite points")
        },
        |bytes, loaded| viewed(KdTreeView::<f64, u64>::open(bytes), loaded),
    );
}

/// The packed index's decoder (`f64` boxes from four bytes each, a corner and a size, `u64`
/// values, nodes of three so that a few boxes make several levels).
pub(crate) fn packed(data: &[u8]) {
    decode_with(
        data,
        |elements| {
            let boxes = elements.chunks_exact(4).map(corner_box);
            PackedIndex::<f64, u64>::with_config(boxes.zip(0..), PackedConfig { node_size: 3 })
                .expect("valid boxes")
        },
        |bytes, loaded| viewed(PackedView::<f64, u64>::open(bytes), loaded),
    );
}

/// A view's opening of bytes that `loaded` is the loading of: opened if they loaded, and then
/// answering as the loaded structure; whatever it opens, answering every query.
fn viewed<V, X>(view: Result<V, Error>, loaded: Option<&X>)
where
    V: SpatialQuery<f64, u64>,
    X: SpatialQuery<f64, u64>,
{
    let view = match (view, loaded) {
        (Ok(view), _) => view,
        (Err(Error::Corrupt(why)), Some(_)) => panic!("loaded, but the view refused: {why}"),
        (Err(Error::Corrupt(_)), None) => return,
        (Err(e), _) => panic!("the view refused with {e:?}, not Error::Corrupt"),
    };
    let answers = answers(&view);
    if let Some(loaded) = loaded {
        assert_eq!(answers, self::answers(loaded), "the view answers otherwise");
        let items = |all: spatix::Iter<'_, f64, u64>| {
            all.map(|i| (i.handle, i.aabb, *i.value))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            items(view.iter()),
            items(loaded.iter()),
            "the view holds other elements"
        );
    }
}

/// What every query of the contract answers on `index`, over the fuzzed coordinates' range:
/// the values found, sorted (ray hits with their entries, pairs as pairs of values, nearest
/// neighbours by distance).
fn answers<X: SpatialQuery<f64, u64>>(index: &X) -> Vec<Vec<u64>> {
    let mut ws = Workspace::new();
    let (mut query, mut within, mut rays, mut pairs) = (vec![], vec![], vec![], vec![]);
    let area = Aabb::new(Point::new(20.0, 30.0), Point::new(140.0, 90.0)).expect("a box");
    let _ = index.query(&area, |item| {
        query.push(*item.value);
        ControlFlow::Continue(())
    });
    let _ = index.within(Point::new(100.0, 60.0), 50.0, |item| {
        within.push(*item.value);
        ControlFlow::Continue(())
    });
    let near = index.nearest(Point::new(64.0, 200.0), 4, &mut ws);
    let near = near.iter().map(|n| n.distance.to_bits()).collect();
    let ray = Ray::new(Point::new(0.0, 0.0), Point::new(1.0, 0.5), 400.0).expect("a ray");
    let _ = index.raycast_all(&ray, &mut ws, |item, t| {
        rays.push(*item.value ^ t.to_bits());
        ControlFlow::Continue(())
    });
    let _ = index.for_each_pair(|a, b| {
        pairs.push((*a.value).min(*b.value) << 32 | (*a.value).max(*b.value));
        ControlFlow::Continue(())
    });
    let _ = index.check_invariants();
    let mut out = vec![query, within, near, rays, pairs, vec![index.len() as u64]];
    out.iter_mut().for_each(|v| v.sort_unstable());
    out
}

/// The dynamic structures' decoders: the first byte picks the structure, then as
/// [`decoder`], with the structure filled from four bytes per box (a corner and a size) and
/// the boxes whose first byte is odd removed again, so that the byte form holds free slots,
/// reused generations and a free list.
pub(crate) fn dynamic(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let world = Aabb::new(Point::new(0.0, 0.0), Point::new(WORLD, WORLD)).expect("a world");
    let small = TreeConfig {
        max_elements: 1,
        max_depth: 4,
    };
    match which % 10 {
        0 => decoder(rest, |e| filled(BruteForce::new(), e)),
        1 => decoder(rest, |e| {
            filled(UniformGrid::new(world, 8.0).expect("a grid"), e)
        }),
        2 => decoder(rest, |e| {
            filled(LooseGrid::new(world, 8.0).expect("a grid"), e)
        }),
        3 => decoder(rest, |e| {
            filled(
                HierarchicalGrid::with_factor(world, 1.0, 2).expect("a grid"),
                e,
            )
        }),
        4 => decoder(rest, |e| {
            filled(PointGrid::new(world, POINT_BOUND).expect("a grid"), e)
        }),
        5 => decoder(rest, |e| {
            filled(Quadtree::with_config(world, small).expect("a tree"), e)
        }),
        6 => decoder(rest, |e| {
            filled(LooseQuadtree::with_config(world, small).expect("a tree"), e)
        }),
        7 => decoder(rest, |e| {
            filled(MxCifQuadtree::with_config(world, small).expect("a tree"), e)
        }),
        8 => decoder(rest, |e| {
            filled(SweepGrid::new(world, 8.0).expect("a grid"), e)
        }),
        _ => decoder(rest, |e| {
            let mut layered = filled(Layered::new(world, 2.0).expect("an index"), e);
            // Some elements static and built into the static part, some waiting.
            for (i, c) in e.chunks_exact(4).enumerate().filter(|(i, _)| i % 4 == 0) {
                let _ = layered.insert_static(corner_box(c), i as u64);
                if c[3] % 2 == 0 {
                    layered.maintain();
                }
            }
            layered
        }),
    }
}

/// The box of four bytes: a corner, and a size below 16 (so the point grid refuses some).
fn corner_box(c: &[u8]) -> Aabb<f64> {
    let min = Point::new(f64::from(c[0]), f64::from(c[1]));
    let size = (f64::from(c[2] % 16), f64::from(c[3] % 16));
    Aabb::new(min, Point::new(min.x + size.0, min.y + size.1)).expect("a valid box")
}

/// `index` with a box inserted per four bytes of `elements` (refusals skipped), then the
/// boxes whose first byte is odd removed.
fn filled<I: SpatialIndex<f64, u64>>(mut index: I, elements: &[u8]) -> I {
    let mut handles = Vec::new();
    for (i, c) in elements.chunks_exact(4).enumerate() {
        if let Ok(h) = index.insert(corner_box(c), i as u64) {
            handles.push((h, c[0] % 2 == 1));
        }
    }
    for (h, gone) in handles {
        if gone {
            index.remove(h);
        }
    }
    index
}

/// Feeds a structure's decoder. The first byte chooses the input: even, the rest as it is;
/// odd, the byte form of the structure `build` makes from the first half of the rest, then
/// changed as the second half's tail says (a byte position and a mask, three bytes each, up to
/// eight), and cut short when the first byte's second bit is set, so that the decoder is
/// reached deep as well as at its header. When its third bit is set, the input's last 8 bytes
/// are then made the checksum of the bytes before them ([`resealed`]): a checksum refuses
/// nearly every changed byte form before its sections are read, and the resealed ones reach
/// the checks behind it (the header's fields, the counts, the sections, the self-check).
fn decoder<S, X>(data: &[u8], build: impl FnOnce(&[u8]) -> X)
where
    S: Scalar,
    X: ByteForm + SpatialQuery<S, u64>,
{
    decode_with(data, build, |_, _| {});
}

/// [`decoder`], then `view` given the bytes (copied to where a view can read them in place)
/// and the structure loaded from them, if they loaded.
fn decode_with<S, X>(
    data: &[u8],
    build: impl FnOnce(&[u8]) -> X,
    view: impl FnOnce(&[u8], Option<&X>),
) where
    S: Scalar,
    X: ByteForm + SpatialQuery<S, u64>,
{
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let (elements, changes) = rest.split_at(rest.len() / 2);
        let mut bytes = build(elements).to_bytes();
        for c in changes.chunks_exact(3).take(8) {
            let at = usize::from(u16::from_le_bytes([c[0], c[1]])) % (bytes.len() + 1);
            if let Some(b) = bytes.get_mut(at) {
                *b ^= c[2];
            }
        }
        if mode & 2 != 0 {
            bytes.truncate(usize::from(mode) % (bytes.len() + 1));
        }
        bytes
    };
    let bytes = if mode & 4 != 0 {
        resealed(bytes)
    } else {
        bytes
    };
    let loaded = match X::from_bytes(&bytes) {
        Ok(loaded) => {
            if let Err(e) = loaded.check_invariants() {
                panic!("loaded a {} that fails its self-check: {e}", X::NAME);
            }
            assert_eq!(
                loaded.to_bytes(),
                bytes,
                "loaded bytes that save differently"
            );
            Some(loaded)
        }
        Err(Error::Corrupt(_)) => None,
        Err(e) => panic!("refused with {e:?}, not Error::Corrupt"),
    };
    view(&AlignedBytes::copy_of(&bytes), loaded.as_ref());
}

/// `bytes` with their last 8 bytes made the [`checksum`] of the bytes before them (as they
/// are when shorter than 8).
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(body) = bytes.len().checked_sub(8) {
        let sum = checksum(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
    }
    bytes
}
