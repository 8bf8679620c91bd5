//! The parallel query mode of the peers that have none of their own but answer a query with
//! `&self` on a `Sync` structure: rayon over the queries. The queries are cut into consecutive
//! chunks on rayon's current pool, as spatix's `ParallelQuery` cuts its batches (about eight
//! per thread, at least 32 queries each); each chunk is answered by one thread into a tally or
//! list of its own, and those are merged (lists concatenated in input order) at the end. On one
//! thread the same closure answers the whole slice on the calling thread: the serial path.

use rayon::prelude::*;

use crate::check::Tally;

/// Chunks per thread of the pool, so that the pool evens out uneven query costs.
const CHUNKS_PER_THREAD: usize = 8;

/// The fewest queries of a chunk, over which a task's cost is spread.
const MIN_PER_CHUNK: usize = 32;

/// The length of the chunks `count` queries are cut into on rayon's current pool.
fn chunk_len(count: usize) -> usize {
    count
        .div_ceil(rayon::current_num_threads() * CHUNKS_PER_THREAD)
        .max(MIN_PER_CHUNK)
}

/// `answer(chunk, tally)` for `queries`: on the calling thread over the whole slice, or with
/// `parallel` over each chunk on rayon's pool, each into a tally of its own, all merged into
/// `tally`.
pub(crate) fn tally<Q: Sync>(
    parallel: bool,
    queries: &[Q],
    tally: &mut Tally,
    answer: impl Fn(&[Q], &mut Tally) + Sync,
) {
    if !parallel {
        answer(queries, tally);
        return;
    }
    let found = queries
        .par_chunks(chunk_len(queries.len()))
        .map(|chunk| {
            let mut one = Tally::default();
            answer(chunk, &mut one);
            one
        })
        .reduce(Tally::default, |mut one, other| {
            one.merge(other);
            one
        });
    tally.merge(found);
}

/// `answer(chunk, list)` for `queries`: on the calling thread over the whole slice into `out`,
/// or with `parallel` over each chunk on rayon's pool, each into a list of its own, appended
/// to `out` in input order.
pub(crate) fn extend<Q: Sync, R: Send>(
    parallel: bool,
    queries: &[Q],
    out: &mut Vec<R>,
    answer: impl Fn(&[Q], &mut Vec<R>) + Sync,
) {
    if !parallel {
        answer(queries, out);
        return;
    }
    let lists: Vec<Vec<R>> = queries
        .par_chunks(chunk_len(queries.len()))
        .map(|chunk| {
            let mut list = Vec::new();
            answer(chunk, &mut list);
            list
        })
        .collect();
    for list in lists {
        out.extend(list);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_chunks_answer_in_input_order_as_the_serial_path() {
        let queries: Vec<u32> = (0..1000).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool of two threads starts");
        let answer = |chunk: &[u32], out: &mut Vec<u32>| {
            out.extend(chunk.iter().flat_map(|&q| [q, q * 2]));
        };
        let count = |chunk: &[u32], tally: &mut Tally| chunk.iter().for_each(|&q| tally.hit(q));
        let (mut serial, mut parallel) = (vec![7], vec![7]);
        let (mut one, mut many) = (Tally::default(), Tally::default());
        extend(false, &queries, &mut serial, answer);
        tally(false, &queries, &mut one, count);
        pool.install(|| {
            extend(true, &queries, &mut parallel, answer);
            tally(true, &queries, &mut many, count);
        });
        assert_eq!(serial, parallel);
        assert_eq!(serial.len(), 2001);
        assert_eq!((one, one.count), (many, 1000));
    }
}
