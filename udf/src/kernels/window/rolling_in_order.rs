//! Rolling sums, means and counts per key over rows already in time order (an event
//! log), in one pass in row order.
//!
//! The general way sorts the rows by key, slides each key's window over its own rows, and
//! scatters the results back to the input rows, at random. Rows in time order need
//! neither: each key's window is a sum and a count in a table by key; a row enters its
//! key's window when it is read and leaves when a second cursor, one period behind, passes
//! it; and every result is written where its row is. Sums are exact (integers in 128 bits, floats in one fixed
//! point per key, [`RunUnit`]), so the results are bit for bit the general way's.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow::array::{Array, ArrayRef};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{ArrowPrimitiveType, Float64Type, Int64Type};

use super::accumulate::Results;
use super::exact_sum::integer_mean;
use super::groups::{map_units, split_pair, threads_for};
use super::window_sum::{RunExtremes, RunUnit};
use super::{Aggregation, Closed, NumericValues};

/// Most keys the one pass takes: their windows' states (32 bytes each) stay in cache.
/// More keys take the general way.
const MOST_KEYS: usize = 1 << 16;

/// The rolling window: `period` and which ends it includes.
#[derive(Clone, Copy)]
pub(super) struct Window {
    pub period: i64,
    pub closed: Closed,
}

/// `rolling` over rows whose times are all present and ascending, grouped by `ids` (of
/// `groups` keys): the per-row results and whether an integer sum left the `Int64` range.
/// `None` when this way does not apply (min and max, too many keys, float values with no
/// common fixed point for some key); the general way then gives the same results.
pub(super) fn rolling_in_row_order(
    ids: &[u32],
    groups: usize,
    ts: &[i64],
    values: &NumericValues,
    window: Window,
    aggregation: Aggregation,
    threads: usize,
) -> Option<(ArrayRef, bool)> {
    debug_assert!(ts.is_sorted() && ids.len() == ts.len());
    if groups > MOST_KEYS || matches!(aggregation, Aggregation::Min | Aggregation::Max) {
        return None;
    }
    let mean = aggregation == Aggregation::Mean;
    let overflow = AtomicBool::new(false);
    let out = match values {
        NumericValues::Validity(nulls) => run::<Int64Type>(
            ids,
            groups,
            ts,
            window,
            nulls.as_ref(),
            threads,
            |_, _| 0,
            |_, _, count| Some(count),
        ),
        NumericValues::Int(array) if mean => {
            let v = array.values();
            run::<Float64Type>(
                ids,
                groups,
                ts,
                window,
                array.nulls(),
                threads,
                |_, row| v[row] as i128,
                |_, sum, count| (count > 0).then(|| integer_mean(sum, count as u64)),
            )
        }
        NumericValues::Int(array) => {
            let v = array.values();
            run::<Int64Type>(
                ids,
                groups,
                ts,
                window,
                array.nulls(),
                threads,
                |_, row| v[row] as i128,
                |_, sum, count| {
                    if count == 0 {
                        return None;
                    }
                    let sum = i64::try_from(sum).ok();
                    if sum.is_none() {
                        // An error for the whole call.
                        overflow.store(true, Ordering::Relaxed);
                    }
                    sum
                },
            )
        }
        NumericValues::Float(array) => {
            let v = array.values();
            let units = key_units(ids, groups, v, array.nulls(), threads)?;
            let units = &units[..];
            run::<Float64Type>(
                ids,
                groups,
                ts,
                window,
                array.nulls(),
                threads,
                |key, row| units[key as usize].term(v[row]),
                |key, sum, count| {
                    let unit = units[key as usize];
                    (count > 0).then(|| {
                        if mean {
                            unit.mean(sum, count as u64)
                        } else {
                            unit.value(sum)
                        }
                    })
                },
            )
        }
    };
    Some((out, overflow.into_inner()))
}

/// One fixed point per key for all of its non-null values, or `None` when some key has
/// none (see [`RunUnit::of`]). Read on up to `threads` threads.
fn key_units(
    ids: &[u32],
    groups: usize,
    values: &[f64],
    nulls: Option<&NullBuffer>,
    threads: usize,
) -> Option<Vec<RunUnit>> {
    let nulls = nulls.filter(|n| n.null_count() > 0);
    let rows = values.len();
    let threads = threads_for(rows, threads);
    let chunks: Vec<Range<usize>> = (0..threads)
        .map(|k| rows * k / threads..rows * (k + 1) / threads)
        .collect();
    let partial = map_units(chunks, |chunk| {
        let mut extremes = vec![RunExtremes::default(); groups];
        for row in chunk {
            if nulls.is_none_or(|n| n.is_valid(row)) {
                extremes[ids[row] as usize].include(values[row]);
            }
        }
        extremes
    });
    let mut merged = vec![RunExtremes::default(); groups];
    for extremes in partial {
        for (all, part) in merged.iter_mut().zip(extremes) {
            *all = all.merge(part);
        }
    }
    merged.into_iter().map(RunExtremes::unit).collect()
}

/// The rows split into at most `threads` parts (where the time changes, so that the
/// rows of one time are in one part), each slid on its own thread; the results as one
/// array. `term(key, row)`: row's value (not null) in the key's units; `result(key, sum,
/// count)`: the result of a window holding `count` values whose terms sum to `sum`.
#[allow(clippy::too_many_arguments)]
fn run<T: ArrowPrimitiveType>(
    ids: &[u32],
    groups: usize,
    ts: &[i64],
    window: Window,
    nulls: Option<&NullBuffer>,
    threads: usize,
    term: impl Fn(u32, usize) -> i128 + Sync,
    result: impl Fn(u32, i128, i64) -> Option<T::Native> + Sync,
) -> ArrayRef {
    let rows = ts.len();
    let parts = balanced_parts(ts, window.period, threads_for(rows, threads));
    let mut values = vec![T::Native::default(); rows];
    let mut valid = vec![false; rows];
    let slices = split_pair(&mut values, &mut valid, parts.iter().map(|p| p.len()));
    let reads = Reads {
        ids,
        ts,
        nulls: nulls.filter(|n| n.null_count() > 0),
        term: &term,
        result: &result,
        groups,
        period: window.period,
    };
    let tasks: Vec<_> = parts.into_iter().zip(slices).collect();
    map_units(tasks, |(part, (values, valid))| {
        let warm_up = warm_up_start(ts, part.start, window.period);
        // One copy of the slide per choice of ends, so that its comparisons are fixed.
        match window.closed {
            Closed::Right => {
                best_slide::<_, _, _, true, false>(reads, warm_up, part, values, valid)
            }
            Closed::Both => best_slide::<_, _, _, true, true>(reads, warm_up, part, values, valid),
            Closed::Left => best_slide::<_, _, _, false, true>(reads, warm_up, part, values, valid),
            Closed::Neither => {
                best_slide::<_, _, _, false, false>(reads, warm_up, part, values, valid)
            }
        }
    });
    Results::<T> { values, valid }.into_array()
}

/// What a slide reads.
struct Reads<'a, F, R> {
    /// Each row's key.
    ids: &'a [u32],
    ts: &'a [i64],
    nulls: Option<&'a NullBuffer>,
    term: &'a F,
    result: &'a R,
    groups: usize,
    period: i64,
}

impl<F, R> Clone for Reads<'_, F, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F, R> Copy for Reads<'_, F, R> {}

/// [`parts`] for at most `threads` threads, fewer when the rows each part reads again
/// before it (one period's worth: [`warm_up_start`]) would pass half of all rows: a
/// period as long as the data gains nothing from more threads, only more reading.
fn balanced_parts(ts: &[i64], period: i64, mut threads: usize) -> Vec<Range<usize>> {
    loop {
        let parts = parts(ts, threads);
        let again: usize = parts
            .iter()
            .map(|p| p.start - warm_up_start(ts, p.start, period))
            .sum();
        if threads <= 1 || again <= ts.len() / 2 {
            return parts;
        }
        threads -= 1;
    }
}

/// At most `threads` ranges of rows of about equal length, in order and covering every
/// row, each starting where the time changes.
fn parts(ts: &[i64], threads: usize) -> Vec<Range<usize>> {
    let (rows, threads) = (ts.len(), threads.max(1));
    let mut starts: Vec<usize> = (0..threads)
        .map(|k| {
            let mut start = rows * k / threads;
            while start > 0 && start < rows && ts[start] == ts[start - 1] {
                start += 1;
            }
            start
        })
        .collect();
    starts.push(rows);
    starts.dedup();
    let mut parts: Vec<Range<usize>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    if parts.is_empty() {
        // No rows: one empty part.
        parts.push(0..rows);
    }
    parts
}

/// The first row a part starting at `start` reads: every row within one period before
/// its first time (all rows before it when that reaches below the oldest time).
fn warm_up_start(ts: &[i64], start: usize, period: i64) -> usize {
    if start == 0 {
        return 0;
    }
    match ts[start].checked_sub(period) {
        Some(oldest) => ts[..start].partition_point(|&t| t < oldest),
        None => 0,
    }
}

/// The state of one key's window: the sum of its non-null values' terms, and how many
/// they are.
#[derive(Clone, Copy, Default)]
struct KeyWindow {
    sum: i128,
    count: i64,
}

/// [`slide`] compiled with the bit-manipulation instructions when the CPU has them (as
/// `with_bit_instructions!` does; that macro takes one type parameter, this has five).
#[inline(always)]
fn best_slide<F, R, N, const INCLUDE_CURRENT: bool, const INCLUDE_OLDEST: bool>(
    reads: Reads<'_, F, R>,
    warm_up: usize,
    part: Range<usize>,
    values: &mut [N],
    valid: &mut [bool],
) where
    F: Fn(u32, usize) -> i128,
    R: Fn(u32, i128, i64) -> Option<N>,
    N: Copy,
{
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "lzcnt,bmi1,bmi2")]
        fn with_bits<F, R, N, const INCLUDE_CURRENT: bool, const INCLUDE_OLDEST: bool>(
            reads: Reads<'_, F, R>,
            warm_up: usize,
            part: Range<usize>,
            values: &mut [N],
            valid: &mut [bool],
        ) where
            F: Fn(u32, usize) -> i128,
            R: Fn(u32, i128, i64) -> Option<N>,
            N: Copy,
        {
            slide::<F, R, N, INCLUDE_CURRENT, INCLUDE_OLDEST>(reads, warm_up, part, values, valid)
        }
        if crate::kernels::simd::bit_instructions() {
            // SAFETY: the CPU reported every feature `with_bits` enables.
            return unsafe {
                with_bits::<F, R, N, INCLUDE_CURRENT, INCLUDE_OLDEST>(
                    reads, warm_up, part, values, valid,
                )
            };
        }
    }
    slide::<F, R, N, INCLUDE_CURRENT, INCLUDE_OLDEST>(reads, warm_up, part, values, valid)
}

/// Slides every key's window over the rows from `warm_up` to the part's end in order,
/// writing the results of the rows in `part` (`values[0]` is row `part.start`). Rows of
/// one time are peers: with the current time included each sees all of them, else none.
#[inline(always)]
fn slide<F, R, N, const INCLUDE_CURRENT: bool, const INCLUDE_OLDEST: bool>(
    reads: Reads<'_, F, R>,
    warm_up: usize,
    part: Range<usize>,
    values: &mut [N],
    valid: &mut [bool],
) where
    F: Fn(u32, usize) -> i128,
    R: Fn(u32, i128, i64) -> Option<N>,
    N: Copy,
{
    let Reads { ids, ts, nulls, .. } = reads;
    let is_valid = |row: usize| nulls.is_none_or(|n| n.is_valid(row));
    let mut windows = vec![KeyWindow::default(); reads.groups];
    // A row leaves its key's window when the time passes its own by the period, so rows
    // leave in row order, whatever their keys: one cursor through the rows, behind the
    // row being read, takes them out. (Links from each row to the next of its key, walked
    // per key, made each leaving row wait on the loads of the one before it.)
    let mut leaving = warm_up;
    // A macro, not a closure: the closure was not inlined, and its calls took 8% of an
    // event log's time.
    macro_rules! push {
        ($row:expr) => {{
            let row: usize = $row;
            if is_valid(row) {
                let key = ids[row];
                let w = &mut windows[key as usize];
                w.sum += (reads.term)(key, row);
                w.count += 1;
            }
        }};
    }
    let mut row = warm_up;
    while row < part.end {
        let t = ts[row];
        let mut end = row + 1;
        while end < part.end && ts[end] == t {
            end += 1;
        }
        if INCLUDE_CURRENT {
            for peer in row..end {
                push!(peer);
            }
        }
        if row >= part.start {
            // When `t - period` is below i64::MIN, no time is that old: nothing leaves.
            if let Some(oldest) = t.checked_sub(reads.period) {
                // Only rows already in a window leave (the period is positive, so this
                // bounds nothing but a window that excludes the current time).
                let pushed = if INCLUDE_CURRENT { end } else { row };
                while leaving < pushed
                    && (ts[leaving] < oldest || (!INCLUDE_OLDEST && ts[leaving] == oldest))
                {
                    if is_valid(leaving) {
                        let key = ids[leaving];
                        let w = &mut windows[key as usize];
                        w.sum -= (reads.term)(key, leaving);
                        w.count -= 1;
                    }
                    leaving += 1;
                }
            }
            for peer in row..end {
                let key = ids[peer];
                let w = windows[key as usize];
                if let Some(v) = (reads.result)(key, w.sum, w.count) {
                    values[peer - part.start] = v;
                    valid[peer - part.start] = true;
                }
            }
        }
        if !INCLUDE_CURRENT {
            for peer in row..end {
                push!(peer);
            }
        }
        row = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_row_and_start_where_the_time_changes() {
        let ts = [1, 1, 1, 2, 2, 3, 3, 3, 3, 4];
        for threads in 1..12 {
            let parts = parts(&ts, threads);
            assert!(parts.len() <= threads.max(1));
            assert_eq!(parts.first().map(|p| p.start), Some(0));
            assert_eq!(parts.last().map(|p| p.end), Some(ts.len()));
            for pair in parts.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert!(!pair[1].is_empty());
                assert_ne!(ts[pair[1].start - 1], ts[pair[1].start], "{parts:?}");
            }
        }
        // One time throughout: one part, whatever the threads.
        assert_eq!(parts(&[5; 7], 4), vec![Range { start: 0, end: 7 }]);
        assert_eq!(parts(&[], 3), vec![Range { start: 0, end: 0 }]);
    }

    #[test]
    fn warm_up_reads_one_period_back_from_the_first_row_of_a_time() {
        let ts = [0, 10, 10, 20, 30, 30, 40];
        assert_eq!(warm_up_start(&ts, 0, 5), 0);
        assert_eq!(warm_up_start(&ts, 4, 10), 3);
        assert_eq!(warm_up_start(&ts, 4, 20), 1);
        assert_eq!(warm_up_start(&ts, 6, 1000), 0);
        // Below the oldest time possible: from the first row.
        assert_eq!(warm_up_start(&[i64::MIN, i64::MIN + 1], 1, 2), 0);
    }

    #[test]
    fn a_period_as_long_as_the_data_takes_fewer_threads() {
        let ts: Vec<i64> = (0..1000).collect();
        assert_eq!(balanced_parts(&ts, 10, 8).len(), 8);
        // Every part would read all rows before it again: two parts at most.
        assert_eq!(balanced_parts(&ts, i64::MAX, 8).len(), 2);
        assert_eq!(balanced_parts(&ts, i64::MAX, 1).len(), 1);
    }
}
