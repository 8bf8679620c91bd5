//! The internal nodes' splits, stored in blocks of four levels, one cache line each (`f32`).

use super::{Cursor, MAX_HEIGHT, Split};
use crate::Scalar;

/// Levels of internal nodes a block holds.
const LEVELS: u32 = 4;

/// Internal nodes a block holds: a complete subtree of [`LEVELS`] levels.
const NODES: usize = (1 << LEVELS) - 1;

/// Most block levels a tree has.
const MAX_LEVELS: usize = MAX_HEIGHT.div_ceil(LEVELS as usize);

/// A subtree of up to four levels of internal nodes, in breadth-first order: its root is node
/// 0 and node `i`'s children are `2i + 1` and `2i + 2`. Bit `i` of `axes` is node `i`'s axis.
/// In `f32` a block is exactly one cache line; in `f64` the axes and the top three levels
/// share the first line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "views",
    derive(zerocopy::FromBytes, zerocopy::Immutable, zerocopy::KnownLayout)
)]
#[repr(C, align(64))]
pub(super) struct Block<S> {
    pub(super) axes: u32,
    pub(super) values: [S; NODES],
}

const _: () = assert!(size_of::<Block<f32>>() == 64 && size_of::<Block<f64>>() == 128);

/// The splits of a tree of height `height`, blocked from the leaves up: the lowest block level
/// holds the nodes of heights 1 to 4, the next one heights 5 to 8, and so on (the top level
/// may hold fewer). A descent from the root reads one block per four levels, where a preorder
/// array of 8-byte splits made it read a new cache line at about every other level below the
/// top ones; and the blocks take 4.3 bytes per internal node in `f32`, against 8.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Splits<S> {
    blocks: Vec<Block<S>>,
    /// The index of the first block of each block level, lowest level first.
    first: [u32; MAX_LEVELS],
    height: u32,
}

impl<S: Scalar> Splits<S> {
    /// The blocks of the splits given in preorder (node `i`'s left child is `i + 1`, its right
    /// child `i + 2^(h-1)` at height `h`), for a tree of height `height`.
    pub(super) fn from_preorder(preorder: &[Split<S>], height: u32) -> Self {
        debug_assert_eq!(preorder.len(), (1usize << height) - 1);
        let mut first = [0u32; MAX_LEVELS];
        let mut total = 0usize;
        for (level, first) in first
            .iter_mut()
            .enumerate()
            .take(height.div_ceil(LEVELS) as usize)
        {
            *first = total as u32;
            total += 1 << (height - block_root(level as u32, height));
        }
        let empty = Block {
            axes: 0,
            values: [S::ZERO; NODES],
        };
        let mut splits = Self {
            blocks: vec![empty; total],
            first,
            height,
        };
        splits.fill(preorder, 0, height);
        splits
    }

    /// Stores the subtree whose preorder splits are `preorder`, whose first leaf is `leaf` and
    /// whose height is `height`.
    fn fill(&mut self, preorder: &[Split<S>], leaf: u32, height: u32) {
        if height == 0 {
            return;
        }
        self.set(Cursor { leaf, height }, preorder[0]);
        let half = 1usize << (height - 1);
        self.fill(&preorder[1..half], leaf, height - 1);
        self.fill(&preorder[half..], leaf + half as u32, height - 1);
    }

    /// The blocks, borrowed: what the queries read (a view's come from its bytes).
    #[inline]
    pub(super) fn as_ref(&self) -> SplitsRef<'_, S> {
        SplitsRef {
            blocks: &self.blocks,
            first: self.first,
            height: self.height,
        }
    }

    /// The splits of a tree of `height` from its blocks, if they are as many as that height
    /// has.
    pub(super) fn from_blocks(blocks: Vec<Block<S>>, height: u32) -> Option<Self> {
        let first = firsts(blocks.len(), height)?;
        Some(Self {
            blocks,
            first,
            height,
        })
    }

    /// The blocks, in order: what the byte form saves.
    pub(super) fn blocks(&self) -> &[Block<S>] {
        &self.blocks
    }

    #[inline]
    fn locate(&self, node: Cursor) -> (usize, usize) {
        self.as_ref().locate(node)
    }

    /// The split of an internal node.
    #[cfg(test)]
    pub(super) fn get(&self, node: Cursor) -> Split<S> {
        self.as_ref().get(node)
    }

    /// Sets the split of an internal node (`split.axis` is 0 or 1).
    pub(super) fn set(&mut self, node: Cursor, split: Split<S>) {
        let (block, i) = self.locate(node);
        let block = &mut self.blocks[block];
        block.values[i] = split.value;
        block.axes = (block.axes & !(1 << i)) | ((split.axis & 1) << i);
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.blocks.capacity() * size_of::<Block<S>>()
    }
}

/// The height of the roots of the blocks of block level `level` in a tree of height `height`.
#[inline]
fn block_root(level: u32, height: u32) -> u32 {
    (LEVELS * (level + 1)).min(height)
}

/// A tree's split blocks, borrowed from its [`Splits`] or from the bytes a view reads.
#[derive(Debug)]
pub(super) struct SplitsRef<'a, S> {
    blocks: &'a [Block<S>],
    first: [u32; MAX_LEVELS],
    height: u32,
}

impl<S> Clone for SplitsRef<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for SplitsRef<'_, S> {}

impl<'a, S: Scalar> SplitsRef<'a, S> {
    /// The splits of a tree of `height` (at most `MAX_HEIGHT`) from its blocks, if they are
    /// as many as that height has: then every internal node's block is one of them.
    #[cfg(feature = "views")]
    pub(super) fn from_blocks(blocks: &'a [Block<S>], height: u32) -> Option<Self> {
        let first = firsts(blocks.len(), height)?;
        Some(Self {
            blocks,
            first,
            height,
        })
    }

    /// The height of the tree whose splits these are.
    pub(super) fn height(&self) -> u32 {
        self.height
    }

    /// Bytes the blocks take.
    #[cfg(feature = "views")]
    pub(super) fn memory_bytes(&self) -> usize {
        size_of_val(self.blocks)
    }

    /// Where an internal node's split lives: its block and its place in the block.
    #[inline]
    fn locate(&self, node: Cursor) -> (usize, usize) {
        let level = (node.height - 1) / LEVELS;
        let root = block_root(level, self.height);
        let block = self.first[level as usize] as usize + (node.leaf >> root) as usize;
        let depth = root - node.height;
        let row = (node.leaf >> node.height) & ((1 << depth) - 1);
        (block, ((1 << depth) - 1 + row) as usize)
    }

    /// The split of an internal node.
    #[inline]
    pub(super) fn get(&self, node: Cursor) -> Split<S> {
        let (block, i) = self.locate(node);
        let block = &self.blocks[block];
        Split {
            value: block.values[i],
            axis: (block.axes >> i) & 1,
        }
    }
}

/// Where each block level starts in the blocks of a tree of `height`, if it has `blocks`
/// blocks and a height of at most `MAX_HEIGHT`.
fn firsts(blocks: usize, height: u32) -> Option<[u32; MAX_LEVELS]> {
    if height as usize > MAX_HEIGHT {
        return None;
    }
    let mut first = [0u32; MAX_LEVELS];
    let mut total = 0usize;
    for (level, first) in first
        .iter_mut()
        .enumerate()
        .take(height.div_ceil(LEVELS) as usize)
    {
        *first = total as u32;
        total += 1 << (height - block_root(level as u32, height));
    }
    (total == blocks).then_some(first)
}
