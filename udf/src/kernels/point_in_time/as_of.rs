//! As-of values without sorting the events by time: the spine is sorted by (key, time),
//! the events are only put in key order (a counting sort), and each event is placed, by a
//! binary search in its key's spine times, at the first spine position that can see it.
//! The latest event so far, carried along each key's positions, is then the as-of event
//! of every position. O(events × log(spine rows per key) + spine × log), which is what
//! makes it faster than sorting both sides when the events outnumber the spine, as they
//! usually do. Threads take equal shares of the key-ordered events, whatever the skew.

use std::ops::Range;

use arrow::array::{ArrayRef, UInt32Array};
use arrow::buffer::{NullBuffer, ScalarBuffer};

use super::ties::TieOrder;
use super::PointInTimeOptions;
use crate::kernels::window::groups::{
    map_units, matched_ids, partition_by_group, sort_by_group, threads_for,
};
use crate::kernels::window::{Closed, EventTimes};
use crate::kernels::Result;

const FUNCTION: &str = "point_in_time";

/// The event row of each spine row's as-of value: its key's latest event visible at the
/// spine time (`closed`: at or strictly before it; with `created_cutoff`, its created
/// time too) and not older than `ttl`, the latest by time, then by `ties`; null when
/// there is none.
pub(super) fn latest_indices(
    spine_keys: Option<&ArrayRef>,
    spine_times: &EventTimes<'_>,
    event_keys: Option<&ArrayRef>,
    event_times: &EventTimes<'_>,
    created: Option<&EventTimes<'_>>,
    ties: &TieOrder<'_>,
    options: &PointInTimeOptions,
) -> Result<UInt32Array> {
    let PointInTimeOptions {
        closed,
        ttl,
        threads,
        null_keys_match,
        created_cutoff,
    } = *options;
    let threads = threads.max(1);
    // With the cutoff, an event becomes visible at the later of its two times.
    let cutoff = created.filter(|_| created_cutoff);
    let (spine_ids, event_ids, groups) = match (spine_keys, event_keys) {
        (Some(s), Some(e)) => matched_ids(FUNCTION, s, e, null_keys_match)?,
        _ => (Vec::new(), Vec::new(), 1),
    };
    let spine = sort_by_group(&spine_ids, groups, spine_times, None, threads);
    drop(spine_ids);
    // Events in key order (not time order): each key's binary searches then stay within
    // its own spine times, in cache, rather than jumping across the whole spine.
    let (event_rows, event_ts, _, event_bounds) =
        partition_by_group(&event_ids, groups, event_times, None, threads);
    drop(event_ids);
    let strict = matches!(closed, Closed::Left | Closed::Neither);
    let events = event_rows.len();
    let threads = threads_for(events, threads);
    let chunk = events.div_ceil(threads).max(1);
    // Equal shares of the partitioned events, whatever the key skew; a key cut between
    // two shares is merged below.
    let latest = |share: Range<usize>| {
        let mut best = Latest::new(spine.len());
        let mut index = TimeIndex::default();
        let mut g = event_bounds
            .partition_point(|&b| b <= share.start)
            .saturating_sub(1);
        let mut p = share.start;
        while p < share.end {
            let end = event_bounds[g + 1].min(share.end);
            let (a, b) = (spine.bounds[g], spine.bounds[g + 1]);
            if p < end && a < b {
                index.build(&spine.ts[a..b]);
                for (&e, &row) in event_ts[p..end].iter().zip(&event_rows[p..end]) {
                    let seen_from = match cutoff {
                        None => e,
                        Some(c) if c.is_valid(row as usize) => e.max(c.nanos[row as usize]),
                        Some(_) => continue,
                    };
                    // The first spine position of the key whose time can see the event.
                    let first = index.first_seeing(&spine.ts[a..b], seen_from, strict);
                    if first < b - a {
                        best.offer(a + first, e, row, ties);
                    }
                }
            }
            p = end;
            g += 1;
        }
        best
    };
    let shares: Vec<Range<usize>> = (0..threads)
        .map(|i| (i * chunk).min(events)..((i + 1) * chunk).min(events))
        .collect();
    let mut best = if shares.len() <= 1 {
        latest(0..events)
    } else {
        let parts = map_units(shares, latest);
        let mut parts = parts.into_iter();
        let mut best = parts.next().unwrap_or_else(|| Latest::new(spine.len()));
        for part in parts {
            for p in 0..part.row.len() {
                if part.row[p] != NONE {
                    best.offer(p, part.ts[p], part.row[p], ties);
                }
            }
        }
        best
    };

    // Carry the latest event along each key's positions, then apply the TTL to it: when
    // the latest visible event is too old, every earlier one is too.
    let mut indices = vec![0u32; spine_times.len()];
    let mut valid = vec![false; spine_times.len()];
    for g in 0..groups {
        let range = spine.bounds[g]..spine.bounds[g + 1];
        for p in range.clone().skip(1) {
            if best.row[p - 1] != NONE {
                let (ts, row) = (best.ts[p - 1], best.row[p - 1]);
                best.offer(p, ts, row, ties);
            }
        }
        for p in range {
            let t = spine.ts[p];
            let fresh = ttl.is_none_or(|ttl| best.ts[p] as i128 >= t as i128 - ttl as i128);
            if best.row[p] != NONE && fresh {
                let spine_row = spine.row(p) as usize;
                indices[spine_row] = best.row[p];
                valid[spine_row] = true;
            }
        }
    }
    Ok(UInt32Array::new(
        ScalarBuffer::from(indices),
        Some(NullBuffer::from(valid)),
    ))
}

/// Spine times of one key with a coarse table over equal time buckets, so that finding an
/// event's place reads a few neighbouring times instead of a binary search's scattered
/// ones (which miss the cache on a large key). Uneven times only make a bucket wider.
#[derive(Default)]
struct TimeIndex {
    /// `starts[i]`: the first position whose time is at least `low + i * width`.
    starts: Vec<u32>,
    low: i64,
    high: i64,
    width: u64,
}

/// Keys with fewer spine times than this are searched directly (they sit in the cache).
/// Tiny in tests, so that the small test inputs go through the index.
const INDEXED_FROM: usize = if cfg!(test) { 2 } else { 64 };
/// Spine times per bucket, on average.
const PER_BUCKET: usize = if cfg!(test) { 2 } else { 4 };

impl TimeIndex {
    /// Indexes `times` (sorted, not empty).
    fn build(&mut self, times: &[i64]) {
        self.starts.clear();
        if times.len() < INDEXED_FROM {
            return;
        }
        // At least 2, so that `span / buckets + 1` cannot overflow.
        let buckets = (times.len() / PER_BUCKET).max(2);
        self.low = times[0];
        self.high = times[times.len() - 1];
        // Differences of sorted i64 fit in u64; the width makes `span / width < buckets`.
        let span = self.high.wrapping_sub(self.low) as u64;
        self.width = span / buckets as u64 + 1;
        for (p, &t) in times.iter().enumerate() {
            let bucket = (t.wrapping_sub(self.low) as u64 / self.width) as usize;
            while self.starts.len() <= bucket {
                self.starts.push(p as u32);
            }
        }
        while self.starts.len() <= buckets {
            self.starts.push(times.len() as u32);
        }
    }

    /// The first position whose time sees an event at `e`: the time is at least `e`, or
    /// greater than `e` when `strict`. `times.len()` when there is none.
    #[inline(always)]
    fn first_seeing(&self, times: &[i64], e: i64, strict: bool) -> usize {
        let search = |times: &[i64]| {
            if strict {
                times.partition_point(|&t| t <= e)
            } else {
                times.partition_point(|&t| t < e)
            }
        };
        if self.starts.is_empty() {
            return search(times);
        }
        if e < self.low {
            return 0;
        }
        if e > self.high {
            return times.len();
        }
        let bucket = (e.wrapping_sub(self.low) as u64 / self.width) as usize;
        // Every earlier time is below the bucket's start (<= e), and the next bucket's
        // first time is above e: the answer is within.
        let (from, to) = (
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        );
        from + search(&times[from..to])
    }
}

/// No event yet.
const NONE: u32 = u32::MAX;

/// The latest event offered so far at each sorted spine position.
struct Latest {
    ts: Vec<i64>,
    row: Vec<u32>,
}

impl Latest {
    fn new(positions: usize) -> Self {
        Self {
            ts: vec![i64::MIN; positions],
            row: vec![NONE; positions],
        }
    }

    /// Keeps event `row` at time `ts` at position `p` if it is later than the one there:
    /// by time, then by `ties`, the order in which the sorting path breaks ties, so both
    /// give the same row.
    #[inline(always)]
    fn offer(&mut self, p: usize, ts: i64, row: u32, ties: &TieOrder<'_>) {
        let (held_ts, held) = (self.ts[p], self.row[p]);
        let later = held == NONE || ts > held_ts || (ts == held_ts && ties.cmp(row, held).is_gt());
        if later {
            self.ts[p] = ts;
            self.row[p] = row;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::TimeIndex;

    fn time() -> impl Strategy<Value = i64> {
        prop_oneof![
            8 => -50i64..50,
            1 => Just(i64::MIN),
            1 => Just(i64::MAX),
            1 => Just(i64::MIN + 1),
            1 => Just(i64::MAX - 1),
            1 => any::<i64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The index finds what a binary search over all the times finds, at the i64
        /// extremes, with duplicates and uneven gaps.
        #[test]
        fn the_index_agrees_with_a_binary_search(
            mut times in proptest::collection::vec(time(), 1..80),
            events in proptest::collection::vec(time(), 1..20),
        ) {
            times.sort_unstable();
            let mut index = TimeIndex::default();
            index.build(&times);
            for e in events.into_iter().chain(times.iter().copied()) {
                prop_assert_eq!(index.first_seeing(&times, e, false), times.partition_point(|&t| t < e));
                prop_assert_eq!(index.first_seeing(&times, e, true), times.partition_point(|&t| t <= e));
            }
        }
    }
}
