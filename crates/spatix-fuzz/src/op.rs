//! The operations of a fuzz input: the low four bits of each operation's byte name it, bit
//! [`BATCH`] turns a read into a batch. `scripts/fuzz-seeds.py` reads the numbers from this
//! file.

/// An operation, by the low four bits of its byte ([`Op::of`]; the numbers are those bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    /// Insert a decoded element (bytes 1 and 2 insert too).
    Insert = 0,
    /// Insert, by the target's own insert where it has one (the layered index's
    /// `insert_static`).
    InsertOwn = 3,
    /// Remove a live element.
    Remove = 4,
    /// Move a live element to a decoded box.
    Update = 5,
    /// Move every element (`update_all`, or the target's own frame).
    UpdateAll = 6,
    /// `maintain` (the static structures: rebuild).
    Maintain = 7,
    /// `clear`, one time in sixteen.
    Clear = 8,
    /// A rectangle query.
    Query = 9,
    /// The k nearest to a point.
    Nearest = 10,
    /// Everything within a radius of a point.
    Within = 11,
    /// A ray cast (byte 13 casts too).
    Ray = 12,
    /// A stale or forged handle, which must change nothing.
    Stale = 14,
    /// Every intersecting pair.
    Pairs = 15,
}

/// The flag that turns a read (query to ray) into a batch of such reads.
pub(crate) const BATCH: u8 = 0x80;

impl Op {
    /// The operation a byte names (its low four bits).
    pub(crate) fn of(byte: u8) -> Self {
        match byte % 16 {
            0..=2 => Self::Insert,
            3 => Self::InsertOwn,
            4 => Self::Remove,
            5 => Self::Update,
            6 => Self::UpdateAll,
            7 => Self::Maintain,
            8 => Self::Clear,
            9 => Self::Query,
            10 => Self::Nearest,
            11 => Self::Within,
            12 | 13 => Self::Ray,
            14 => Self::Stale,
            _ => Self::Pairs,
        }
    }

    /// Whether this is a read that a set [`BATCH`] bit turns into a batch.
    pub(crate) fn batches(self) -> bool {
        matches!(self, Self::Query | Self::Nearest | Self::Within | Self::Ray)
    }
}
