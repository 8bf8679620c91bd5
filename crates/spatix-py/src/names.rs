//! How a dynamic index names its elements to Python: by made-up ids (a handle's 64 bits,
//! [`Names::MadeUp`]) or by the caller's own `int64` ids ([`Names::Given`]: an id → handle
//! map and a table from slot to id), and the caller's ids in the byte form.

use std::collections::HashMap;

use spatix::Handle;

use crate::array::{handle_of, id_of};

/// How an index's elements are named. Which one is decided by the first insert into an
/// empty index (with `ids=` or without) and holds until the index is empty again.
#[derive(Clone, Debug, Default)]
pub(crate) enum Names {
    /// The handle's bits, made up by the index.
    #[default]
    MadeUp,
    /// The caller's ids.
    Given {
        /// The handle of each live id.
        handles: HashMap<i64, Handle>,
        /// The id of the element in each slot (stale entries for free slots).
        by_slot: Vec<i64>,
    },
}

impl Names {
    /// Caller's ids, none yet.
    pub(crate) fn given() -> Self {
        Self::Given {
            handles: HashMap::new(),
            by_slot: Vec::new(),
        }
    }

    /// Whether the caller's ids name the elements.
    pub(crate) fn is_given(&self) -> bool {
        matches!(self, Self::Given { .. })
    }

    /// The id of the live element `handle`.
    #[inline]
    pub(crate) fn id(&self, handle: Handle) -> i64 {
        match self {
            Self::MadeUp => id_of(handle),
            Self::Given { by_slot, .. } => by_slot[handle.slot() as usize],
        }
    }

    /// The handle `id` names: for made-up ids the handle whose bits it is (which may be
    /// stale: the index says so), for the caller's `None` unless it is live.
    #[inline]
    pub(crate) fn handle(&self, id: i64) -> Option<Handle> {
        match self {
            Self::MadeUp => Some(handle_of(id)),
            Self::Given { handles, .. } => handles.get(&id).copied(),
        }
    }

    /// Records that `handles[i]` (just inserted) is named `ids[i]`; for made-up ids, their
    /// ids.
    pub(crate) fn inserted(&mut self, handles: &[Handle], ids: Option<&[i64]>) -> Vec<i64> {
        match (self, ids) {
            (
                Self::Given {
                    handles: map,
                    by_slot,
                },
                Some(ids),
            ) => {
                map.reserve(ids.len());
                for (&h, &id) in handles.iter().zip(ids) {
                    let slot = h.slot() as usize;
                    if by_slot.len() <= slot {
                        by_slot.resize(slot + 1, 0);
                    }
                    by_slot[slot] = id;
                    map.insert(id, h);
                }
                ids.to_vec()
            }
            _ => handles.iter().map(|&h| id_of(h)).collect(),
        }
    }

    /// Forgets the caller's ids `ids` (removed elements).
    pub(crate) fn removed(&mut self, ids: &[i64]) {
        if let Self::Given { handles, .. } = self {
            for id in ids {
                handles.remove(id);
            }
        }
    }

    /// The byte form of the index whose own byte form is `index`: `index` itself for
    /// made-up ids; for the caller's, `MAGIC`, the index's bytes, then each live (handle,
    /// id), and a checksum of all before it.
    pub(crate) fn to_bytes(&self, index: Vec<u8>) -> Vec<u8> {
        let Self::Given { handles, .. } = self else {
            return index;
        };
        let mut out = Vec::with_capacity(MAGIC.len() + 24 + index.len() + 16 * handles.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(index.len() as u64).to_le_bytes());
        out.extend_from_slice(&index);
        out.extend_from_slice(&(handles.len() as u64).to_le_bytes());
        let mut pairs: Vec<(u64, i64)> = handles.iter().map(|(&id, h)| (h.to_bits(), id)).collect();
        pairs.sort_unstable();
        for (h, id) in pairs {
            out.extend_from_slice(&h.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
        }
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Splits a byte form written by [`Names::to_bytes`] into the index's own bytes and the
    /// (handle, id) pairs; the bytes whole and no pairs when they do not start with `MAGIC`.
    ///
    /// # Errors
    /// What is wrong with bytes that start with `MAGIC` but are cut short, damaged (the
    /// checksum) or of the wrong length.
    pub(crate) fn split(data: &[u8]) -> Result<(&[u8], Option<Pairs>), String> {
        let Some(rest) = data.strip_prefix(MAGIC) else {
            return Ok((data, None));
        };
        let short = || "the caller's ids are cut short".to_string();
        let (body, sum) = data
            .split_at_checked(data.len().checked_sub(8).ok_or_else(short)?)
            .ok_or_else(short)?;
        if body.len() < MAGIC.len() + 8 {
            return Err(short());
        }
        if checksum(body).to_le_bytes() != sum {
            return Err("the caller's ids are damaged (checksum)".into());
        }
        let rest = &rest[..rest.len() - 8];
        let u64_at = |b: &[u8], at: usize| -> Result<u64, String> {
            b.get(at..at + 8)
                .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
                .ok_or_else(short)
        };
        let len = usize::try_from(u64_at(rest, 0)?).map_err(|_| short())?;
        let index = rest
            .get(8..8usize.checked_add(len).ok_or_else(short)?)
            .ok_or_else(short)?;
        let after = &rest[8 + len..];
        let count = usize::try_from(u64_at(after, 0)?).map_err(|_| short())?;
        let pairs = &after[8..];
        if count.checked_mul(16) != Some(pairs.len()) {
            return Err(format!(
                "{count} ids announced, {} bytes of them",
                pairs.len()
            ));
        }
        let pairs = pairs
            .chunks_exact(16)
            .map(|p| {
                let h = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
                let id = i64::from_le_bytes(p[8..].try_into().expect("8 bytes"));
                (Handle::from_bits(h), id)
            })
            .collect();
        Ok((index, Some(pairs)))
    }

    /// The caller's ids of an index of `len` elements from the pairs [`Names::split`] read,
    /// each handle checked live by `live`.
    ///
    /// # Errors
    /// For a handle that is not live, or a handle or an id named twice, or as many pairs as
    /// elements.
    pub(crate) fn from_pairs(
        pairs: Pairs,
        len: usize,
        live: impl Fn(Handle) -> bool,
    ) -> Result<Self, String> {
        if pairs.len() != len {
            return Err(format!("{} ids for {len} elements", pairs.len()));
        }
        let mut names = Self::given();
        let Self::Given { handles, by_slot } = &mut names else {
            unreachable!("given() is Given");
        };
        let mut seen = vec![false; 0];
        for (h, id) in pairs {
            let slot = h.slot() as usize;
            if !live(h) {
                return Err(format!("id {id} names no element"));
            }
            if seen.len() <= slot {
                seen.resize(slot + 1, false);
                by_slot.resize(slot + 1, 0);
            }
            if std::mem::replace(&mut seen[slot], true) || handles.insert(id, h).is_some() {
                return Err(format!("id {id} or its element is named twice"));
            }
            by_slot[slot] = id;
        }
        Ok(names)
    }
}

/// Each live element's handle and the caller's id for it, as a byte form carries them.
pub(crate) type Pairs = Vec<(Handle, i64)>;

/// The first bytes of a byte form that carries the caller's ids.
const MAGIC: &[u8; 8] = b"SPXPYIDS";

/// FNV-1a over `bytes`: enough to tell damaged bytes from whole ones.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
