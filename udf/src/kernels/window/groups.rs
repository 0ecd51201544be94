//! Grouping rows by key and ordering them by time, in O(rows) for the common case.
//!
//! Keys become dense group ids numbered in key order (nulls first), a stable counting
//! sort by group id then keeps each group's rows in input order, and only groups whose
//! times are not already non-decreasing are sorted. Event logs are usually written in
//! time order, so most groups need no sort at all.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Range;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::*;
use arrow::row::{RowConverter, SortField};

use super::{ensure_len, EventTimes};
use crate::kernels::{KernelError, Result};

/// Rows with a non-null time, ordered by (group, time, row).
pub(crate) struct Grouping<'a> {
    /// Input row of each sorted position; `None` when that is the position itself (one
    /// group, no null time, already in time order), so nothing needs gathering.
    order: Option<Vec<u32>>,
    /// Time (ns) of each sorted position.
    pub ts: Cow<'a, [i64]>,
    /// Group `g` holds positions `bounds[g]..bounds[g + 1]`; groups are in key order.
    pub bounds: Vec<usize>,
    /// Whether rows were grouped by keys (else all rows are one group).
    pub keyed: bool,
    /// The carried column (see [`group_and_sort`]) in sorted order, when `order` is set.
    carried: Option<Vec<u64>>,
}

impl Grouping<'_> {
    /// The input row of sorted position `p`.
    #[inline(always)]
    pub fn row(&self, p: usize) -> u32 {
        self.order.as_ref().map_or(p as u32, |o| o[p])
    }

    /// The input rows in sorted order, or `None` when they are already in order.
    pub fn permutation(&self) -> Option<&[u32]> {
        self.order.as_deref()
    }

    /// The input row and time of each sorted position, and the group bounds.
    pub fn into_parts(self) -> (Vec<u32>, Vec<i64>, Vec<usize>) {
        let order = self
            .order
            .unwrap_or_else(|| (0..self.ts.len() as u32).collect());
        (order, self.ts.into_owned(), self.bounds)
    }

    /// The carried column in sorted order, once (`None`: nothing was carried, or the
    /// input already is in order).
    pub fn take_carried(&mut self) -> Option<Vec<u64>> {
        self.carried.take()
    }

    /// Number of sorted positions (rows with a time).
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    /// Splits the groups into at most `parts` runs of consecutive groups with about the
    /// same number of positions, for threads: `(groups, positions)` index ranges.
    pub fn parts(&self, parts: usize) -> Vec<(Range<usize>, Range<usize>)> {
        split_groups(&self.bounds, parts)
    }
}

/// Rows grouped by key and ordered by time (see [`Grouping`]). `carry`, a 64-bit column
/// of the rows (the values to aggregate), is put in the same order on the way, while the
/// rows are read in sequence, rather than gathered afterwards in random order.
pub(crate) fn group_and_sort<'a>(
    function: &'static str,
    keys: Option<&ArrayRef>,
    times: &'a EventTimes<'_>,
    carry: Option<&[u64]>,
    threads: usize,
) -> Result<Grouping<'a>> {
    let (ids, groups) = key_ids(function, keys, times.len(), threads)?;
    Ok(group_and_sort_ids(
        &ids,
        groups,
        keys.is_some(),
        times,
        carry,
        threads,
    ))
}

/// Each row's group id (`keys` numbered in key order) and the number of groups; no ids
/// and one group without keys. Refuses more rows than a `u32` numbers.
pub(crate) fn key_ids(
    function: &'static str,
    keys: Option<&ArrayRef>,
    rows: usize,
    threads: usize,
) -> Result<(Vec<u32>, usize)> {
    if rows > u32::MAX as usize {
        return Err(KernelError::new(
            function,
            "ts",
            format!(
                "expected at most {} rows per call, found {rows}; split the input",
                u32::MAX
            ),
        ));
    }
    match keys {
        Some(keys) => {
            ensure_len(function, "by", keys.len(), rows)?;
            group_ids(function, keys, threads_for(rows, threads))
        }
        None => Ok((Vec::new(), 1)),
    }
}

/// [`group_and_sort`] with the rows' group ids already known ([`key_ids`]).
pub(crate) fn group_and_sort_ids<'a>(
    ids: &[u32],
    groups: usize,
    keyed: bool,
    times: &'a EventTimes<'_>,
    carry: Option<&[u64]>,
    threads: usize,
) -> Grouping<'a> {
    if ids.is_empty() && times.all_present_in_order() {
        // One group, every time present and in order: the input is its own sorted order.
        return Grouping {
            order: None,
            ts: Cow::Borrowed(&times.nanos[..]),
            bounds: vec![0, times.len()],
            keyed: false,
            carried: None,
        };
    }
    let mut grouping = sort_by_group(ids, groups, times, carry, threads);
    grouping.keyed = keyed;
    grouping
}

/// Rows with a time and a group id (`ids[row]`, or group 0 for all when `ids` is empty;
/// `u32::MAX`: the row belongs to no group and is left out), ordered by (group, time,
/// row): [`partition_by_group`], then a sort of each group whose times are not already in
/// order, groups shared out over up to `threads` threads.
pub(crate) fn sort_by_group<'a>(
    ids: &[u32],
    groups: usize,
    times: &EventTimes<'_>,
    carry: Option<&[u64]>,
    threads: usize,
) -> Grouping<'a> {
    let (mut order, mut ts, mut carried, bounds) =
        partition_by_group(ids, groups, times, carry, threads);
    let mut grouping = Grouping {
        order: None,
        ts: Cow::Owned(Vec::new()),
        bounds,
        keyed: true,
        carried: None,
    };
    let threads = threads_for(order.len(), threads);
    // A group larger than half a thread's share (one key with a third of the events, say)
    // would keep one thread sorting while the others wait: it is sorted by all of them.
    let large = order.len() / (2 * threads);
    // The work left for the runs of groups below: a group's size, none for a large one
    // (sorted here), as group bounds.
    let mut work = Vec::with_capacity(grouping.bounds.len());
    work.push(0);
    for g in 0..grouping.bounds.len() - 1 {
        let range = grouping.bounds[g]..grouping.bounds[g + 1];
        let size = range.len();
        if threads > 1 && size > large {
            if !ts[range.clone()].is_sorted() {
                sort_in_parallel(&mut ts[range.clone()], &mut order[range.clone()], threads);
                if let Some(carry) = carry {
                    gather_into(&mut carried[range.clone()], carry, &order[range], threads);
                }
            }
            work.push(work[g]);
        } else {
            work.push(work[g] + size);
        }
    }
    let parts: Vec<_> = split_groups(&work, threads)
        .into_iter()
        .map(|(groups, _)| {
            let positions = grouping.bounds[groups.start]..grouping.bounds[groups.end];
            (groups, positions)
        })
        .collect();
    // Each part owns the groups of one contiguous range of positions.
    let slices = split_pair(
        &mut ts,
        &mut order,
        parts.iter().map(|(_, range)| range.len()),
    );
    let carried_slices = split_lengths(
        &mut carried,
        parts
            .iter()
            .map(|(_, range)| carried_len(carry, range.len())),
    );
    let tasks: Vec<_> = parts
        .iter()
        .zip(slices)
        .zip(carried_slices)
        .map(|(((groups, range), (t, o)), c)| (groups.clone(), range.start, t, o, c))
        .collect();
    let bounds = &grouping.bounds;
    type SortTask<'t> = (
        Range<usize>,
        usize,
        &'t mut [i64],
        &'t mut [u32],
        &'t mut [u64],
    );
    let sort_part = |(groups, start, ts, order, carried): SortTask<'_>| {
        let mut scratch: Vec<(i64, u32)> = Vec::new();
        for g in groups {
            let range = bounds[g] - start..bounds[g + 1] - start;
            if ts[range.clone()].is_sorted() {
                continue;
            }
            scratch.clear();
            scratch.extend(range.clone().map(|p| (ts[p], order[p])));
            scratch.sort_unstable();
            for (p, &(t, row)) in range.zip(&scratch) {
                ts[p] = t;
                order[p] = row;
                if let Some(carry) = carry {
                    carried[p] = carry[row as usize];
                }
            }
        }
    };
    map_units(tasks, sort_part);
    grouping.order = Some(order);
    grouping.ts = Cow::Owned(ts);
    grouping.carried = carry.map(|_| carried);
    grouping
}

/// Sorts one group's positions by (time, row) on `threads` threads: each copies and sorts
/// a share, then pairs of sorted runs are merged, each merge cut into pieces for the
/// threads a round leaves idle, until one run is left, which the threads copy back.
/// (time, row) pairs are distinct, so the order does not depend on the thread count.
fn sort_in_parallel(ts: &mut [i64], order: &mut [u32], threads: usize) {
    let n = ts.len();
    let chunk = n.div_ceil(threads).max(1);
    let mut source = vec![(0i64, 0u32); n];
    let shares: Vec<_> = source
        .chunks_mut(chunk)
        .zip(ts.chunks(chunk).zip(order.chunks(chunk)))
        .collect();
    map_units(shares, |(share, (t, o))| {
        for (slot, pair) in share
            .iter_mut()
            .zip(t.iter().copied().zip(o.iter().copied()))
        {
            *slot = pair;
        }
        share.sort_unstable();
    });
    let mut runs: Vec<Range<usize>> = (0..n)
        .step_by(chunk)
        .map(|start| start..(start + chunk).min(n))
        .collect();
    let mut target = vec![(0i64, 0u32); n];
    while runs.len() > 1 {
        let pairs: Vec<&[Range<usize>]> = runs.chunks(2).collect();
        let pieces = (threads / pairs.len()).max(1);
        let mut rest = &mut target[..];
        let mut tasks = Vec::new();
        for pair in &pairs {
            let first = &source[pair[0].clone()];
            let second = pair.get(1).map_or(&[][..], |r| &source[r.clone()]);
            let total = first.len() + second.len();
            // Cut the output at equal steps; each cut takes a prefix of each run.
            let mut cut = (0, 0);
            for piece in 1..=pieces {
                let end = if piece == pieces {
                    (first.len(), second.len())
                } else {
                    split_of_merge(first, second, total * piece / pieces)
                };
                let length = (end.0 - cut.0) + (end.1 - cut.1);
                let (out, tail) = std::mem::take(&mut rest).split_at_mut(length);
                rest = tail;
                tasks.push((&first[cut.0..end.0], &second[cut.1..end.1], out));
                cut = end;
            }
        }
        map_units(tasks, |(first, second, out)| merge(first, second, out));
        runs = pairs
            .iter()
            .map(|pair| pair[0].start..pair[pair.len() - 1].end)
            .collect();
        std::mem::swap(&mut source, &mut target);
    }
    let back: Vec<_> = ts
        .chunks_mut(chunk)
        .zip(order.chunks_mut(chunk))
        .zip(source.chunks(chunk))
        .collect();
    map_units(back, |((t, o), sorted)| {
        for ((time, row), &(from_time, from_row)) in t.iter_mut().zip(o.iter_mut()).zip(sorted) {
            *time = from_time;
            *row = from_row;
        }
    });
}

/// How many of `first` and of `second` (sorted, no value in both) the first `k` values of
/// their merge take: the `a` with `a + b = k`, `first[a - 1] < second[b]` and
/// `second[b - 1] < first[a]`, by binary search.
fn split_of_merge(first: &[(i64, u32)], second: &[(i64, u32)], k: usize) -> (usize, usize) {
    let (mut low, mut high) = (k.saturating_sub(second.len()), k.min(first.len()));
    while low < high {
        let a = (low + high) / 2;
        // Too few from `first` while its next value is below the last taken from `second`.
        if first[a] < second[k - a - 1] {
            low = a + 1;
        } else {
            high = a;
        }
    }
    (low, k - low)
}

/// Merges two sorted runs into `out` (`first.len() + second.len()` long).
fn merge(first: &[(i64, u32)], second: &[(i64, u32)], out: &mut [(i64, u32)]) {
    let (mut i, mut j) = (0, 0);
    for slot in out.iter_mut() {
        let take_first = j == second.len() || (i < first.len() && first[i] <= second[j]);
        *slot = if take_first {
            i += 1;
            first[i - 1]
        } else {
            j += 1;
            second[j - 1]
        };
    }
}

/// Rows with a time and a group id (as in [`sort_by_group`]) ordered by (group, row): a
/// stable counting sort by group. Returns the input row, time and carried word (empty
/// without `carry`) of each position, and the group bounds (group `g` holds positions `bounds[g]..bounds[g + 1]`). With threads,
/// each thread counts a share of the rows, then fills the positions of its own run of
/// groups (so no two threads write to the same place).
pub(crate) fn partition_by_group(
    ids: &[u32],
    groups: usize,
    times: &EventTimes<'_>,
    carry: Option<&[u64]>,
    threads: usize,
) -> (Vec<u32>, Vec<i64>, Vec<u64>, Vec<usize>) {
    let rows = times.len();
    debug_assert!(
        (ids.is_empty() && (groups >= 1 || rows == 0)) || ids.len() == rows,
        "one id per row, or none and at least one group"
    );
    let threads = threads_for(rows, threads);
    let group_of = |row: usize| if ids.is_empty() { 0 } else { ids[row] };
    let included = |row: usize| times.is_valid(row) && group_of(row) != u32::MAX;
    let count = |rows: Range<usize>| {
        let mut counts = vec![0usize; groups + 1];
        for row in rows.filter(|&r| included(r)) {
            counts[group_of(row) as usize + 1] += 1;
        }
        counts
    };
    let chunk = rows.div_ceil(threads.max(1)).max(1);
    let shares = (0..threads.max(1))
        .map(|i| (i * chunk).min(rows)..((i + 1) * chunk).min(rows))
        .collect();
    let mut bounds = vec![0usize; groups + 1];
    for counts in map_units(shares, count) {
        bounds.iter_mut().zip(counts).for_each(|(t, c)| *t += c);
    }
    for g in 0..groups {
        bounds[g + 1] += bounds[g];
    }
    let mut order = vec![0u32; bounds[groups]];
    let mut ts = vec![0i64; bounds[groups]];
    let mut carried = vec![0u64; carried_len(carry, bounds[groups])];
    let fill = |groups: Range<usize>, order: &mut [u32], ts: &mut [i64], carried: &mut [u64]| {
        let base = bounds[groups.start];
        let mut next: Vec<usize> = bounds[groups.clone()].iter().map(|b| b - base).collect();
        let first = groups.start as u32;
        let width = groups.len() as u32;
        for row in 0..rows {
            // One unsigned comparison: the group is in this thread's run.
            let g = group_of(row).wrapping_sub(first);
            if g < width && times.is_valid(row) {
                let at = &mut next[g as usize];
                order[*at] = row as u32;
                ts[*at] = times.nanos[row];
                if let Some(carry) = carry {
                    carried[*at] = carry[row];
                }
                *at += 1;
            }
        }
    };
    let parts = split_groups(&bounds, threads);
    let slices = split_pair(&mut order, &mut ts, parts.iter().map(|(_, p)| p.len()));
    let carried_slices = split_lengths(
        &mut carried,
        parts.iter().map(|(_, p)| carried_len(carry, p.len())),
    );
    let tasks: Vec<_> = parts
        .into_iter()
        .zip(slices)
        .zip(carried_slices)
        .map(|(((groups, _), (o, t)), c)| (groups, o, t, c))
        .collect();
    map_units(tasks, |(groups, o, t, c)| fill(groups, o, t, c));
    (order, ts, carried, bounds)
}

/// Splits groups (`bounds` as in [`Grouping::bounds`]) into at most `parts` runs of
/// consecutive groups with about the same number of positions: `(groups, positions)`.
fn split_groups(bounds: &[usize], parts: usize) -> Vec<(Range<usize>, Range<usize>)> {
    let groups = bounds.len() - 1;
    let target = bounds[groups].div_ceil(parts.max(1)).max(1);
    let mut out = Vec::with_capacity(parts);
    let mut first = 0;
    for g in 0..groups {
        let end = bounds[g + 1];
        if end - bounds[first] >= target || g + 1 == groups {
            out.push((first..g + 1, bounds[first]..end));
            first = g + 1;
        }
    }
    out
}

/// Fewest rows worth a thread of their own.
/// (Tiny in tests, so that small test inputs take the threaded paths too.)
const MIN_ROWS_PER_THREAD: usize = if cfg!(test) { 4 } else { 1 << 17 };

/// How many threads to use for `rows` rows: one per 128K rows, at most `threads` (the
/// caller's choice: 1 inside an engine that parallelises already, as DataFusion and Spark
/// do), or at most one per core for `threads == 0`.
pub(crate) fn threads_for(rows: usize, threads: usize) -> usize {
    let most = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    most.min(rows / MIN_ROWS_PER_THREAD).max(1)
}

/// `f` of every unit, each unit on a scoped thread of its own (on the calling thread when
/// there is only one), the results in the units' order. A worker's panic is passed on as
/// it was raised.
pub(crate) fn map_units<T: Send, R: Send>(units: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    if units.len() <= 1 {
        return units.into_iter().map(f).collect();
    }
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = units
            .into_iter()
            .map(|unit| scope.spawn(move || f(unit)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Runs `f` over matching chunks of `dst` and `src` on up to `threads` threads.
pub(crate) fn parallel_chunks<T: Send, U: Sync>(
    threads: usize,
    dst: &mut [T],
    src: &[U],
    f: impl Fn(&mut [T], &[U]) + Sync,
) {
    if threads <= 1 {
        return f(dst, src);
    }
    let chunk = dst.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (d, i) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
            let f = &f;
            scope.spawn(move || f(d, i));
        }
    });
}

/// Cuts `first` and `second` into consecutive pieces of the given lengths, one pair of
/// slices per piece: the disjoint outputs that threads fill side by side.
pub(crate) fn split_pair<'a, A, B>(
    first: &'a mut [A],
    second: &'a mut [B],
    lengths: impl IntoIterator<Item = usize>,
) -> Vec<(&'a mut [A], &'a mut [B])> {
    let lengths: Vec<usize> = lengths.into_iter().collect();
    split_lengths(first, lengths.iter().copied())
        .into_iter()
        .zip(split_lengths(second, lengths))
        .collect()
}

/// Positions of the carried column (see [`group_and_sort`]) in a piece of `len`
/// positions: all of them when a column is carried, none otherwise.
fn carried_len(carry: Option<&[u64]>, len: usize) -> usize {
    if carry.is_some() {
        len
    } else {
        0
    }
}

/// Cuts `slice` into consecutive pieces of the given lengths.
fn split_lengths<T>(slice: &mut [T], lengths: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut rest = slice;
    let mut pieces = Vec::new();
    for length in lengths {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(length);
        rest = tail;
        pieces.push(piece);
    }
    pieces
}

/// `src[order[p]]` for every position `p`.
pub(crate) fn gather<T: Copy + Default + Send + Sync>(
    src: &[T],
    order: &[u32],
    threads: usize,
) -> Vec<T> {
    let mut out = vec![T::default(); order.len()];
    gather_into(&mut out, src, order, threads);
    out
}

/// `dst[p] = src[order[p]]` for every position `p`, on up to `threads` threads.
fn gather_into<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], order: &[u32], threads: usize) {
    parallel_chunks(threads, dst, order, |dst, rows| {
        for (d, &r) in dst.iter_mut().zip(rows) {
            *d = src[r as usize];
        }
    });
}

/// Group ids by key. Keys come from other teams' files, so they may be chosen to collide:
/// an unkeyed hash (FxHash, say) can be inverted, and a few hundred thousand colliding keys
/// made one call run for minutes, quadratic in the keys. foldhash with a random seed per
/// map keeps the speed of a multiplicative hash without a fixed, invertible function; ids
/// never depend on the seed (they are renumbered in key order or first-seen order).
type KeyMap<K> = HashMap<K, u32, foldhash::fast::RandomState>;

/// `$primitive!(T)` for the key types numbered by their values (integers and dates),
/// `$other` for the rest (strings, structs, ...), numbered through the row format.
macro_rules! by_key_type {
    ($data_type:expr, $primitive:ident, $other:expr) => {
        match $data_type {
            DataType::Int8 => $primitive!(Int8Type),
            DataType::Int16 => $primitive!(Int16Type),
            DataType::Int32 => $primitive!(Int32Type),
            DataType::Int64 => $primitive!(Int64Type),
            DataType::UInt8 => $primitive!(UInt8Type),
            DataType::UInt16 => $primitive!(UInt16Type),
            DataType::UInt32 => $primitive!(UInt32Type),
            DataType::UInt64 => $primitive!(UInt64Type),
            DataType::Date32 => $primitive!(Date32Type),
            DataType::Date64 => $primitive!(Date64Type),
            _ => $other,
        }
    };
}

/// Dense group ids in key order (nulls first) and the number of groups.
fn group_ids(function: &'static str, keys: &ArrayRef, threads: usize) -> Result<(Vec<u32>, usize)> {
    macro_rules! primitive {
        ($t:ty) => {
            Ok(primitive_ids(keys.as_primitive::<$t>(), threads))
        };
    }
    by_key_type!(keys.data_type(), primitive, row_ids(function, keys))
}

fn primitive_ids<T: ArrowPrimitiveType>(
    keys: &PrimitiveArray<T>,
    threads: usize,
) -> (Vec<u32>, usize)
where
    T::Native: Hash + Eq + Ord,
{
    if let Some(dense) = dense_ids(keys, threads) {
        return dense;
    }
    let mut map: KeyMap<T::Native> = KeyMap::default();
    let mut distinct: Vec<Option<T::Native>> = Vec::new();
    let mut null_id = None;
    let mut ids = Vec::with_capacity(keys.len());
    // Keys often come in runs: remember the last one to skip the hash lookup.
    let mut last: Option<(T::Native, u32)> = None;
    for (row, &k) in keys.values().iter().enumerate() {
        let id = if keys.is_null(row) {
            *null_id.get_or_insert_with(|| {
                distinct.push(None);
                distinct.len() as u32 - 1
            })
        } else if let Some((lk, lid)) = last.filter(|(lk, _)| *lk == k) {
            let _ = lk;
            lid
        } else {
            let id = *map.entry(k).or_insert_with(|| {
                distinct.push(Some(k));
                distinct.len() as u32 - 1
            });
            last = Some((k, id));
            id
        };
        ids.push(id);
    }
    renumber_in_order(&mut ids, &distinct);
    (ids, distinct.len())
}

/// Integer keys spanning a small range (ids 0..1000, say) are numbered through a table
/// indexed by value: no hashing, and ids come out in key order directly (looked up on
/// up to `threads` threads).
fn dense_ids<T: ArrowPrimitiveType>(
    keys: &PrimitiveArray<T>,
    threads: usize,
) -> Option<(Vec<u32>, usize)> {
    let min = arrow::compute::min(keys)?.to_i64()?;
    let max = arrow::compute::max(keys)?.to_i64()?;
    let span = (max as i128 - min as i128 + 1) as u128;
    if span > (4 * keys.len() as u128).max(1 << 16) || span > 1 << 24 {
        return None;
    }
    let nulls = keys.nulls().filter(|n| n.null_count() > 0);
    let slot = |v: T::Native| (v.to_i64().unwrap_or(min) - min) as usize;
    let mut id_of = vec![u32::MAX; span as usize];
    for (row, &v) in keys.values().iter().enumerate() {
        if nulls.is_none_or(|n| n.is_valid(row)) {
            id_of[slot(v)] = 0;
        }
    }
    // Null keys, if any, are group 0, first, as in the other paths.
    let mut next = nulls.is_some() as u32;
    for id in id_of.iter_mut().filter(|id| **id == 0) {
        *id = next;
        next += 1;
    }
    let ids = match nulls {
        None => {
            let mut ids = vec![0u32; keys.len()];
            parallel_chunks(threads, &mut ids, keys.values(), |ids, values| {
                for (id, &v) in ids.iter_mut().zip(values) {
                    *id = id_of[slot(v)];
                }
            });
            ids
        }
        Some(n) => keys
            .values()
            .iter()
            .enumerate()
            .map(|(row, &v)| if n.is_valid(row) { id_of[slot(v)] } else { 0 })
            .collect(),
    };
    Some((ids, next as usize))
}

/// Keys with every float, at any depth (struct fields, list elements, dictionary values),
/// made canonical: `-0.0` as `0.0` and every NaN as one NaN. Arrow's row format orders
/// floats by their bits, which would put `-0.0` and `0.0`, or two NaNs with different
/// payloads, in different groups; Spark groups and joins them as equal (it normalizes
/// floats before grouping), and so does arrowfeat. Borrowed when there is no float.
pub(crate) fn canonical_float_keys<'a>(
    function: &'static str,
    argument: &str,
    keys: &'a ArrayRef,
) -> Result<Cow<'a, ArrayRef>> {
    if !has_floats(keys.data_type()) {
        return Ok(Cow::Borrowed(keys));
    }
    let data = canonical_floats(keys.to_data()).map_err(|e| {
        KernelError::new(
            function,
            argument,
            format!("cannot group keys of type {}: {e}", keys.data_type()),
        )
    })?;
    Ok(Cow::Owned(arrow::array::make_array(data)))
}

fn has_floats(data_type: &DataType) -> bool {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => has_floats(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_floats(f.data_type())),
        DataType::Union(fields, _) => fields.iter().any(|(_, f)| has_floats(f.data_type())),
        DataType::Dictionary(_, values) => has_floats(values),
        DataType::RunEndEncoded(_, values) => has_floats(values.data_type()),
        _ => false,
    }
}

fn canonical_floats(
    data: arrow::array::ArrayData,
) -> std::result::Result<arrow::array::ArrayData, arrow::error::ArrowError> {
    use arrow::array::ArrayData;
    type F16 = <Float16Type as ArrowPrimitiveType>::Native;
    macro_rules! canonical {
        ($t:ty, $zero:expr, $nan:expr) => {{
            let array = PrimitiveArray::<$t>::from(data);
            array
                .unary::<_, $t>(|v| {
                    if v == $zero {
                        $zero
                    } else if v.is_nan() {
                        $nan
                    } else {
                        v
                    }
                })
                .into_data()
        }};
    }
    match data.data_type() {
        DataType::Float16 => Ok(canonical!(Float16Type, F16::ZERO, F16::NAN)),
        DataType::Float32 => Ok(canonical!(Float32Type, 0.0f32, f32::NAN)),
        DataType::Float64 => Ok(canonical!(Float64Type, 0.0f64, f64::NAN)),
        data_type if has_floats(data_type) => {
            let children = data
                .child_data()
                .iter()
                .map(|child| canonical_floats(child.clone()))
                .collect::<std::result::Result<Vec<ArrayData>, _>>()?;
            // Same buffers, offsets and nulls; each child keeps its length.
            data.into_builder().child_data(children).build()
        }
        _ => Ok(data),
    }
}

/// Any key type (strings, floats, dictionaries, structs...) through arrow's row format,
/// whose byte order is the key order.
fn row_ids(function: &'static str, keys: &ArrayRef) -> Result<(Vec<u32>, usize)> {
    let keys = canonical_float_keys(function, "by", keys)?;
    let keys = keys.as_ref();
    let converter =
        RowConverter::new(vec![SortField::new(keys.data_type().clone())]).map_err(|e| {
            KernelError::wrong_type(
                function,
                "by",
                format!(
                    "expected keys that can be grouped, found {}: {e}",
                    keys.data_type()
                ),
            )
        })?;
    let rows = converter
        .convert_columns(std::slice::from_ref(keys))
        .map_err(|e| {
            KernelError::new(
                function,
                "by",
                format!("cannot group keys of type {}: {e}", keys.data_type()),
            )
        })?;
    let mut map: KeyMap<&[u8]> = KeyMap::default();
    let mut distinct: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(keys.len());
    for row in rows.iter() {
        let bytes: &[u8] = row.data();
        let id = *map.entry(bytes).or_insert_with(|| {
            distinct.push(bytes);
            distinct.len() as u32 - 1
        });
        ids.push(id);
    }
    renumber_in_order(&mut ids, &distinct);
    Ok((ids, distinct.len()))
}

/// Renumbers first-seen ids so that id order is key order.
fn renumber_in_order<K: Ord>(ids: &mut [u32], distinct: &[K]) {
    let mut by_key: Vec<u32> = (0..distinct.len() as u32).collect();
    by_key.sort_unstable_by(|&a, &b| distinct[a as usize].cmp(&distinct[b as usize]));
    if by_key.iter().enumerate().all(|(i, &id)| i as u32 == id) {
        return;
    }
    let mut rank = vec![0u32; distinct.len()];
    for (new, &old) in by_key.iter().enumerate() {
        rank[old as usize] = new as u32;
    }
    for id in ids {
        *id = rank[*id as usize];
    }
}

/// Group ids of `probe` keys (the events) in the id space of `build` keys (the spine):
/// `(build_ids, probe_ids, groups)`, ids in first-seen order of `build`, and `u32::MAX` for
/// a probe key absent from `build` or, unless `null_keys_match`, a key that is null (or,
/// for a struct key, has a null field) on either side. Both arrays have one type.
pub(crate) fn matched_ids(
    function: &'static str,
    build: &ArrayRef,
    probe: &ArrayRef,
    null_keys_match: bool,
) -> Result<(Vec<u32>, Vec<u32>, usize)> {
    macro_rules! primitive {
        ($t:ty) => {
            matched_primitive_ids(
                build.as_primitive::<$t>(),
                probe.as_primitive::<$t>(),
                null_keys_match,
            )
        };
    }
    let (mut build_ids, mut probe_ids, groups) = by_key_type!(
        build.data_type(),
        primitive,
        matched_row_ids(function, build, probe)?
    );
    if !null_keys_match {
        // Struct keys with a null field match nothing either, as in a SQL join.
        for (keys, ids) in [(build, &mut build_ids), (probe, &mut probe_ids)] {
            if let Some(nulls) = key_nulls(keys.as_ref()) {
                for row in nulls.iter().enumerate().filter(|(_, v)| !v).map(|(r, _)| r) {
                    ids[row] = u32::MAX;
                }
            }
        }
    }
    Ok((build_ids, probe_ids, groups))
}

fn matched_primitive_ids<T: ArrowPrimitiveType>(
    build: &PrimitiveArray<T>,
    probe: &PrimitiveArray<T>,
    null_keys_match: bool,
) -> (Vec<u32>, Vec<u32>, usize)
where
    T::Native: Hash + Eq,
{
    let (build_nulls, probe_nulls) = (
        build.nulls().filter(|n| n.null_count() > 0),
        probe.nulls().filter(|n| n.null_count() > 0),
    );
    let mut groups = 0u32;
    // The null key is one more group when null keys match, else no group at all.
    let mut null_id = u32::MAX;
    if null_keys_match && build_nulls.is_some() {
        null_id = groups;
        groups += 1;
    }
    let mut build_ids = Vec::with_capacity(build.len());
    let mut probe_ids = Vec::with_capacity(probe.len());
    let is_null = |nulls: Option<&arrow::buffer::NullBuffer>, row: usize| {
        nulls.is_some_and(|n| n.is_null(row))
    };
    // Integer keys spanning a small range are numbered through a table indexed by value.
    let range = arrow::compute::min(build)
        .and_then(|min| Some((min.to_i64()?, arrow::compute::max(build)?.to_i64()?)));
    if let Some((min, max)) = range.filter(|&(min, max)| {
        let span = max as i128 - min as i128 + 1;
        span <= (4 * build.len() as i128).max(1 << 16) && span <= 1 << 24
    }) {
        let mut id_of = vec![u32::MAX; (max as i128 - min as i128 + 1) as usize];
        let slot = |v: i64| (v as i128 - min as i128) as usize;
        for (row, &k) in build.values().iter().enumerate() {
            let id = if is_null(build_nulls, row) {
                null_id
            } else {
                let id = &mut id_of[slot(k.to_i64().unwrap_or(min))];
                if *id == u32::MAX {
                    *id = groups;
                    groups += 1;
                }
                *id
            };
            build_ids.push(id);
        }
        for (row, &k) in probe.values().iter().enumerate() {
            let id = if is_null(probe_nulls, row) {
                null_id
            } else {
                match k.to_i64().filter(|&v| v >= min && v <= max) {
                    Some(v) => id_of[slot(v)],
                    None => u32::MAX,
                }
            };
            probe_ids.push(id);
        }
        return (build_ids, probe_ids, groups as usize);
    }
    let mut map: KeyMap<T::Native> = KeyMap::default();
    for (row, &k) in build.values().iter().enumerate() {
        let id = if is_null(build_nulls, row) {
            null_id
        } else {
            *map.entry(k).or_insert_with(|| {
                groups += 1;
                groups - 1
            })
        };
        build_ids.push(id);
    }
    for (row, k) in probe.values().iter().enumerate() {
        let id = if is_null(probe_nulls, row) {
            null_id
        } else {
            map.get(k).copied().unwrap_or(u32::MAX)
        };
        probe_ids.push(id);
    }
    (build_ids, probe_ids, groups as usize)
}

/// Any key type, through arrow's row format (one converter for both sides, so equal keys
/// have equal bytes; a null key is a key of its own here, removed by the caller).
fn matched_row_ids(
    function: &'static str,
    build: &ArrayRef,
    probe: &ArrayRef,
) -> Result<(Vec<u32>, Vec<u32>, usize)> {
    let converter =
        RowConverter::new(vec![SortField::new(build.data_type().clone())]).map_err(|e| {
            KernelError::wrong_type(
                function,
                "spine_keys",
                format!(
                    "expected keys that can be matched, found {}: {e}",
                    build.data_type()
                ),
            )
        })?;
    let convert = |keys: &ArrayRef, argument: &str| {
        converter
            .convert_columns(std::slice::from_ref(keys))
            .map_err(|e| {
                KernelError::new(
                    function,
                    argument,
                    format!("cannot match keys of type {}: {e}", keys.data_type()),
                )
            })
    };
    let (build, probe) = (
        canonical_float_keys(function, "spine_keys", build)?,
        canonical_float_keys(function, "event_keys", probe)?,
    );
    let (build_rows, probe_rows) = (
        convert(&build, "spine_keys")?,
        convert(&probe, "event_keys")?,
    );
    let mut map: KeyMap<&[u8]> = KeyMap::default();
    let build_ids: Vec<u32> = build_rows
        .iter()
        .map(|row| {
            let next = map.len() as u32;
            *map.entry(row.data()).or_insert(next)
        })
        .collect();
    let probe_ids = probe_rows
        .iter()
        .map(|row| map.get(row.data()).copied().unwrap_or(u32::MAX))
        .collect();
    Ok((build_ids, probe_ids, map.len()))
}

/// Rows whose key is null or, for a struct key, has a null field (at any depth).
pub(crate) fn key_nulls(keys: &dyn Array) -> Option<NullBuffer> {
    let mut nulls = keys.logical_nulls();
    if let Some(s) = keys.as_any().downcast_ref::<arrow::array::StructArray>() {
        for child in s.columns() {
            nulls = NullBuffer::union(nulls.as_ref(), key_nulls(child.as_ref()).as_ref());
        }
    }
    nulls.filter(|n| n.null_count() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// The parallel sort of one large group equals a plain sort, on any thread count,
        /// with duplicate times (ordered by row) and runs of any length.
        #[test]
        fn a_group_sorted_in_parallel_equals_a_plain_sort(
            times in proptest::collection::vec(-5i64..5, 0..200),
            threads in 1usize..7,
        ) {
            let mut ts = times.clone();
            let mut order: Vec<u32> = (0..times.len() as u32).rev().collect();
            let mut expected: Vec<(i64, u32)> =
                ts.iter().copied().zip(order.iter().copied()).collect();
            expected.sort_unstable();
            sort_in_parallel(&mut ts, &mut order, threads);
            let got: Vec<(i64, u32)> = ts.into_iter().zip(order).collect();
            proptest::prop_assert_eq!(got, expected);
        }

        /// Every cut of a merge takes a prefix of each run, and together they are the
        /// first `k` values of the merge.
        #[test]
        fn merge_cuts_take_the_first_values(
            mut all in proptest::collection::btree_set((-20i64..20, 0u32..4), 0..40)
                .prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            pick in proptest::collection::vec(proptest::prelude::any::<bool>(), 40),
        ) {
            let (mut first, mut second) = (Vec::new(), Vec::new());
            for (i, v) in all.iter().enumerate() {
                if pick[i] { first.push(*v) } else { second.push(*v) }
            }
            all.sort_unstable();
            for k in 0..=all.len() {
                let (a, b) = split_of_merge(&first, &second, k);
                proptest::prop_assert_eq!(a + b, k);
                let mut taken: Vec<_> = first[..a].iter().chain(&second[..b]).copied().collect();
                taken.sort_unstable();
                proptest::prop_assert_eq!(&taken[..], &all[..k]);
            }
        }
    }
}
