//! The decoders: arbitrary bytes given to `from_bytes`, which must refuse them with
//! `Error::Corrupt` or load a structure that passes its self-check and saves to exactly those
//! bytes, never panic, never allocate beyond the input's length.

use spatix::{ByteForm, Error, KdTree, Point, SpatialQuery};

/// The kd-tree's decoder (`f64` points, `u64` values). The first byte chooses the input: even,
/// the rest as it is; odd, the byte form of a tree of points drawn from the rest (pairs of
/// bytes), then changed as the rest's tail says (a byte position and a mask, three bytes each,
/// up to eight), so that the decoder is reached deep as well as at its header.
pub(crate) fn kdtree(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let (points, changes) = rest.split_at(rest.len() / 2);
        let tree = KdTree::<f64, u64>::build(
            points
                .chunks_exact(2)
                .map(|c| Point::new(f64::from(c[0]), f64::from(c[1])))
                .zip(0..),
        )
        .expect("finite points");
        let mut bytes = tree.to_bytes();
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
    match KdTree::<f64, u64>::from_bytes(&bytes) {
        Ok(tree) => {
            if let Err(e) = tree.check_invariants() {
                panic!("loaded a tree that fails its self-check: {e}");
            }
            assert_eq!(tree.to_bytes(), bytes, "loaded bytes that save differently");
        }
        Err(Error::Corrupt(_)) => {}
        Err(e) => panic!("refused with {e:?}, not Error::Corrupt"),
    }
}
