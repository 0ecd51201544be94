//! As-of values without sorting the events: the spine is sorted by (key, time), and each
//! event is placed, by binary search, at the first spine position of its key that can see
//! it. The latest event so far, carried along each key's positions, is then the as-of
//! event of every position. O(events × log(spine rows per key) + spine × log), one pass
//! over the events (split over threads by row), which is what makes it faster than
//! sorting both sides when the events outnumber the spine, as they usually do.

use arrow::array::{ArrayRef, UInt32Array};
use arrow::buffer::{NullBuffer, ScalarBuffer};

use super::groups::{matched_ids, sort_by_group, threads_for};
use super::{Closed, EventTimes};
use crate::kernels::Result;

const FUNCTION: &str = "point_in_time";

/// The event row of each spine row's as-of value: its key's latest event visible at the
/// spine time (`closed`: at or strictly before it) and not older than `ttl`, the latest
/// by (time, created time with nulls lowest, row); null when there is none.
#[allow(clippy::too_many_arguments)]
pub(super) fn latest_indices(
    spine_keys: Option<&ArrayRef>,
    spine_times: &EventTimes<'_>,
    event_keys: Option<&ArrayRef>,
    event_times: &EventTimes<'_>,
    created: Option<&EventTimes<'_>>,
    closed: Closed,
    ttl: Option<i64>,
    null_keys_match: bool,
    threads: usize,
) -> Result<UInt32Array> {
    let (spine_ids, event_ids, groups) = match (spine_keys, event_keys) {
        (Some(s), Some(e)) => matched_ids(FUNCTION, s, e, null_keys_match)?,
        _ => (Vec::new(), Vec::new(), 1),
    };
    let spine = sort_by_group(&spine_ids, groups, spine_times, false, threads);
    drop(spine_ids);
    let strict = matches!(closed, Closed::Left | Closed::Neither);
    let rows = event_times.len();
    let threads = threads_for(rows, threads);
    let chunk = rows.div_ceil(threads).max(1);
    let latest = |from: usize| {
        let mut best = Latest::new(spine.len());
        for row in from..(from + chunk).min(rows) {
            let group = if event_ids.is_empty() {
                0
            } else {
                event_ids[row]
            };
            if group == u32::MAX || !event_times.is_valid(row) {
                continue;
            }
            let (a, b) = (
                spine.bounds[group as usize],
                spine.bounds[group as usize + 1],
            );
            let e = event_times.nanos[row];
            // The first spine position of the key whose time can see the event.
            let first = a + if strict {
                spine.ts[a..b].partition_point(|&t| t <= e)
            } else {
                spine.ts[a..b].partition_point(|&t| t < e)
            };
            if first < b {
                best.offer(first, e, row as u32, created);
            }
        }
        best
    };
    let mut best = if threads <= 1 {
        latest(0)
    } else {
        let parts: Vec<Latest> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let latest = &latest;
                    scope.spawn(move || latest(i * chunk))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("as-of worker thread panicked"))
                .collect()
        });
        let mut parts = parts.into_iter();
        let mut best = parts.next().expect("one part per thread");
        for part in parts {
            for p in 0..part.row.len() {
                if part.row[p] != NONE {
                    best.offer(p, part.ts[p], part.row[p], created);
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
                best.offer(p, ts, row, created);
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
    /// by time, then created time (a null created time is the lowest), then row. This is
    /// the order in which the sorting path breaks ties, so both give the same row.
    #[inline(always)]
    fn offer(&mut self, p: usize, ts: i64, row: u32, created: Option<&EventTimes<'_>>) {
        let (held_ts, held) = (self.ts[p], self.row[p]);
        let later = held == NONE
            || ts > held_ts
            || (ts == held_ts
                && match created {
                    None => row > held,
                    Some(c) => {
                        let key = |r: u32| {
                            let r = r as usize;
                            let valid = c.is_valid(r);
                            (valid, if valid { c.nanos[r] } else { 0 }, r)
                        };
                        key(row) > key(held)
                    }
                });
        if later {
            self.ts[p] = ts;
            self.row[p] = row;
        }
    }
}
