//! The checksum every byte form ends with: XXH64 (seed 0) of every byte before it, written
//! here in safe, portable code (four independent 64-bit lanes per 32-byte stripe, so it runs
//! at several bytes per cycle without SIMD or a table), checked against the reference
//! implementation's published vectors in the tests below.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

/// The XXH64 checksum of `bytes` that a structure's byte form ends with (little-endian,
/// 8 bytes): [`ByteForm::from_bytes`](crate::ByteForm::from_bytes) and
/// [`ByteHeader::read`](crate::ByteHeader::read) refuse bytes whose last 8 bytes are not the
/// checksum of the bytes before them. For tools that write or change byte forms on purpose
/// (a fuzzer that damages the sections and wants the checks behind the checksum reached).
///
/// # Example
/// ```
/// use spatix::{checksum, ByteForm, KdTree, Point};
/// let bytes = KdTree::build([(Point::new(1.0f64, 2.0), 7u32)])?.to_bytes();
/// let (body, end) = bytes.split_at(bytes.len() - 8);
/// assert_eq!(end, checksum(body).to_le_bytes());
/// assert_eq!(checksum(b"abc"), 0x44BC_2CF5_AD77_0999); // XXH64, seed 0
/// # Ok::<(), spatix::Error>(())
/// ```
pub fn checksum(bytes: &[u8]) -> u64 {
    xxh64(bytes, 0)
}

/// One lane's step: `input` mixed into `acc`.
fn round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

/// A lane folded into the hash of the four.
fn merge(acc: u64, lane: u64) -> u64 {
    (acc ^ round(0, lane)).wrapping_mul(P1).wrapping_add(P4)
}

fn u64_at(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("eight bytes"))
}

/// XXH64 of `bytes` with `seed`.
fn xxh64(bytes: &[u8], seed: u64) -> u64 {
    Stripes::new(seed).finish(bytes)
}

/// XXH64 computed as a reader goes: its four lanes mixed with the input's 32-byte stripes
/// up to where the reader has taken the bytes ([`Stripes::advance`]), so that each block is
/// hashed just before it is decoded, while it is in cache, and the checksum costs no pass
/// of its own over the input; [`Stripes::finish`] mixes in the rest and gives the checksum.
#[derive(Clone, Debug)]
pub(crate) struct Stripes {
    seed: u64,
    lanes: [u64; 4],
    /// How many bytes from the input's start the lanes hold (a multiple of 32).
    done: usize,
}

impl Stripes {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            seed,
            lanes: [
                seed.wrapping_add(P1).wrapping_add(P2),
                seed.wrapping_add(P2),
                seed,
                seed.wrapping_sub(P1),
            ],
            done: 0,
        }
    }

    /// Mixes in every whole stripe of `bytes` (the whole input, each time) that ends at or
    /// before `upto`.
    pub(crate) fn advance(&mut self, bytes: &[u8], upto: usize) {
        let end = upto.min(bytes.len()) / 32 * 32;
        if end <= self.done {
            return;
        }
        let v = &mut self.lanes;
        for stripe in bytes[self.done..end].chunks_exact(32) {
            v[0] = round(v[0], u64_at(&stripe[..8]));
            v[1] = round(v[1], u64_at(&stripe[8..16]));
            v[2] = round(v[2], u64_at(&stripe[16..24]));
            v[3] = round(v[3], u64_at(&stripe[24..]));
        }
        self.done = end;
    }

    /// The XXH64 of all of `bytes` (the input [`Stripes::advance`] was given).
    pub(crate) fn finish(mut self, bytes: &[u8]) -> u64 {
        self.advance(bytes, bytes.len());
        let v = self.lanes;
        let mut h = if bytes.len() >= 32 {
            let h = v[0]
                .rotate_left(1)
                .wrapping_add(v[1].rotate_left(7))
                .wrapping_add(v[2].rotate_left(12))
                .wrapping_add(v[3].rotate_left(18));
            v.iter().fold(h, |h, &lane| merge(h, lane))
        } else {
            self.seed.wrapping_add(P5)
        };
        h = h.wrapping_add(bytes.len() as u64);
        let words = bytes[self.done..].chunks_exact(8);
        let rest = words.remainder();
        for word in words {
            h = (h ^ round(0, u64_at(word)))
                .rotate_left(27)
                .wrapping_mul(P1)
                .wrapping_add(P4);
        }
        let rest = if let Some((word, rest)) = rest.split_first_chunk::<4>() {
            h = (h ^ u64::from(u32::from_le_bytes(*word)).wrapping_mul(P1))
                .rotate_left(23)
                .wrapping_mul(P2)
                .wrapping_add(P3);
            rest
        } else {
            rest
        };
        for &b in rest {
            h = (h ^ u64::from(b).wrapping_mul(P5))
                .rotate_left(11)
                .wrapping_mul(P1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(P2);
        h ^= h >> 29;
        h = h.wrapping_mul(P3);
        h ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::{checksum, xxh64};

    /// The reference implementation's sanity vectors (xxHash's `xxhsum`, `BMK_sanityCheck`):
    /// a 101-byte buffer from a fixed generator, hashed whole and in prefixes of 0, 1 and 14
    /// bytes, with seed 0 and seed 2654435761 (so the stripes, the tail's words and its
    /// single bytes are all covered).
    #[test]
    fn matches_the_reference_vectors() {
        const PRIME: u32 = 2_654_435_761;
        let mut generator = PRIME;
        let buffer: Vec<u8> = (0..101)
            .map(|_| {
                let byte = (generator >> 24) as u8;
                generator = generator.wrapping_mul(generator);
                byte
            })
            .collect();
        let seed = u64::from(PRIME);
        for (len, zero, primed) in [
            (0, 0xEF46_DB37_51D8_E999, 0xAC75_FDA2_929B_17EF),
            (1, 0x4FCE_394C_C889_52D8, 0x7398_40CB_819F_A723),
            (14, 0xCFFA_8DB8_81BC_3A3D, 0x5B96_1158_5EFC_C9CB),
            (101, 0x0EAB_5433_84F8_78AD, 0xCAA6_5939_306F_1E21),
        ] {
            assert_eq!(xxh64(&buffer[..len], 0), zero, "{len} bytes, seed 0");
            assert_eq!(
                xxh64(&buffer[..len], seed),
                primed,
                "{len} bytes, seed {seed}"
            );
        }
        // Published vectors of text (seed 0): one byte, three bytes, and 39 bytes (a stripe,
        // a 4-byte word and single bytes).
        assert_eq!(checksum(b"a"), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(checksum(b"abc"), 0x44BC_2CF5_AD77_0999);
        assert_eq!(
            checksum(b"Nobody inspects the spammish repetition"),
            0xFBCE_A83C_8A37_8BF1
        );
    }

    /// Advanced in pieces of any length (as a reader takes its input), the checksum is the
    /// one of the whole.
    #[test]
    fn advancing_in_pieces_changes_nothing() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 97 + 5) as u8).collect();
        for len in [0, 5, 31, 32, 33, 100, 300] {
            let whole = checksum(&bytes[..len]);
            for piece in [1, 3, 8, 31, 32, 45, 64] {
                let mut stripes = super::Stripes::new(0);
                for upto in (0..len).step_by(piece) {
                    stripes.advance(&bytes[..len], upto);
                }
                assert_eq!(
                    stripes.finish(&bytes[..len]),
                    whole,
                    "{len} bytes by {piece}"
                );
            }
        }
    }

    /// Every single-bit change of a buffer changes its checksum (lengths around the stripe
    /// and word boundaries).
    #[test]
    fn every_flipped_bit_changes_it() {
        for len in [1, 7, 8, 31, 32, 33, 64, 100] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let sum = checksum(&bytes);
            for bit in 0..len * 8 {
                let mut changed = bytes.clone();
                changed[bit / 8] ^= 1 << (bit % 8);
                assert_ne!(checksum(&changed), sum, "{len} bytes, bit {bit}");
            }
        }
    }
}
