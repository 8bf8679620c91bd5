//! The decoders: arbitrary bytes given to `from_bytes`, which must refuse them with
//! `Error::Corrupt` or load a structure that passes its self-check and saves to exactly those
//! bytes, never panic, never allocate beyond the input's length.

use spatix::{
    Aabb, ByteForm, Error, KdTree, PackedConfig, PackedIndex, Point, Scalar, SpatialQuery,
};

/// The kd-tree's decoder (`f64` points from pairs of bytes, `u64` values).
pub(crate) fn kdtree(data: &[u8]) {
    decoder(data, |elements| {
        KdTree::<f64, u64>::build(
            elements
                .chunks_exact(2)
                .map(|c| Point::new(f64::from(c[0]), f64::from(c[1])))
                .zip(0..),
        )
        .expect("finite points")
    });
}

/// The packed index's decoder (`f64` boxes from four bytes each, a corner and a size, `u64`
/// values, nodes of three so that a few boxes make several levels).
pub(crate) fn packed(data: &[u8]) {
    decoder(data, |elements| {
        let boxes = elements.chunks_exact(4).map(|c| {
            let min = Point::new(f64::from(c[0]), f64::from(c[1]));
            let size = (f64::from(c[2] % 16), f64::from(c[3] % 16));
            Aabb::new(min, Point::new(min.x + size.0, min.y + size.1)).expect("a valid box")
        });
        PackedIndex::<f64, u64>::with_config(boxes.zip(0..), PackedConfig { node_size: 3 })
            .expect("valid boxes")
    });
}

/// Feeds a structure's decoder. The first byte chooses the input: even, the rest as it is;
/// odd, the byte form of the structure `build` makes from the first half of the rest, then
/// changed as the second half's tail says (a byte position and a mask, three bytes each, up to
/// eight), and cut short when the first byte's second bit is set, so that the decoder is
/// reached deep as well as at its header.
fn decoder<S, X>(data: &[u8], build: impl FnOnce(&[u8]) -> X)
where
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
    match X::from_bytes(&bytes) {
        Ok(loaded) => {
            if let Err(e) = loaded.check_invariants() {
                panic!("loaded a {} that fails its self-check: {e}", X::NAME);
            }
            assert_eq!(
                loaded.to_bytes(),
                bytes,
                "loaded bytes that save differently"
            );
        }
        Err(Error::Corrupt(_)) => {}
        Err(e) => panic!("refused with {e:?}, not Error::Corrupt"),
    }
}
