//! Session windows: events of a key closer than `gap` to the previous one share a session.

use arrow::array::{Array, ArrayRef, StructArray};
use arrow::datatypes::{Field, Fields};
use arrow::record_batch::RecordBatch;

use super::accumulate::{with_accumulator, Accumulator, SortedValues};
use super::duration::ensure_positive;
use super::groups::{group_and_sort, threads_for, Grouping};
use super::hop::{aggregate_batches, one_batch, run_parts, Windows};
use super::tumble::out_of_range;
use super::{ensure_len, event_times, numeric_values, Aggregation, Result};

/// Calls `each(first, last)` for every session (positions, inclusive) of the groups
/// `groups`. An event at exactly `last + gap` joins the session, as in Spark.
fn sessions(
    grouping: &Grouping<'_>,
    groups: std::ops::Range<usize>,
    gap: i64,
    mut each: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let ts = &grouping.ts[..];
    for g in groups {
        let group = grouping.bounds[g]..grouping.bounds[g + 1];
        if group.is_empty() {
            continue;
        }
        let mut first = group.start;
        for p in group.start + 1..group.end {
            if ts[p] > ts[p - 1].saturating_add(gap) {
                each(first, p - 1)?;
                first = p;
            }
        }
        each(first, group.end - 1)?;
    }
    Ok(())
}

/// `session_window(keys, ts, gap)`: for each event, the session holding it as a struct
/// `{start, end}`: `start` is the session's first event time, `end` its last event time
/// plus `gap` (Spark's `session_window`). Rows with a null time give null. Sorting uses at
/// most `threads` threads (0: one per core).
pub fn session_window(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    gap: i64,
    threads: usize,
) -> Result<StructArray> {
    const NAME: &str = "session_window";
    ensure_positive(NAME, "gap", gap)?;
    let times = event_times(NAME, "ts", ts)?;
    let grouping = group_and_sort(NAME, keys, &times, None, threads)?;
    let rows = times.len();
    let mut starts = vec![0i64; rows];
    let mut ends = vec![0i64; rows];
    sessions(
        &grouping,
        0..grouping.bounds.len() - 1,
        gap,
        |first, last| {
            let start = grouping.ts[first];
            let end = grouping.ts[last].checked_add(gap).ok_or_else(|| {
                out_of_range(NAME, grouping.row(last) as usize, grouping.ts[last])
            })?;
            for p in first..=last {
                let row = grouping.row(p) as usize;
                starts[row] = start;
                ends[row] = end;
            }
            Ok(())
        },
    )?;
    // The children carry the nulls too, so that `s['start']` is null where `s` is.
    let start = times.bounds_array(starts, times.nulls.clone());
    let end = times.bounds_array(ends, times.nulls.clone());
    let fields = Fields::from(vec![
        Field::new("start", start.data_type().clone(), true),
        Field::new("end", end.data_type().clone(), true),
    ]);
    Ok(StructArray::new(
        fields,
        vec![start, end],
        times.nulls.clone(),
    ))
}

/// `session_aggregate(keys, ts, values, gap, agg)`: one row per session per key:
/// `key` (when `keys` is given), `session_start`, `session_end` (last event + gap) and
/// the aggregate of the session's values, ordered by key then session start. Keys are
/// split over at most `threads` threads (0: one per core); the result does not depend on it.
pub fn session_aggregate(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    gap: i64,
    aggregation: Aggregation,
    threads: usize,
) -> Result<RecordBatch> {
    let batches = session_aggregate_batches(keys, ts, values, gap, aggregation, threads)?;
    one_batch("session_aggregate", batches)
}

/// [`session_aggregate`] as the batches the threads made, in order, without copying them
/// into one: the same rows, in chunks that depend on the number of threads.
pub fn session_aggregate_batches(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    gap: i64,
    aggregation: Aggregation,
    threads: usize,
) -> Result<Vec<RecordBatch>> {
    const NAME: &str = "session_aggregate";
    ensure_positive(NAME, "gap", gap)?;
    let times = event_times(NAME, "ts", ts)?;
    ensure_len(NAME, "value", values.len(), times.len())?;
    let values = numeric_values(NAME, "value", values, aggregation)?;
    let mut grouping = group_and_sort(NAME, keys, &times, values.words(), threads)?;
    let threads = threads_for(grouping.len(), threads);
    let carried = grouping.take_carried();
    let sorted = SortedValues::gather(&values, grouping.permutation(), carried, threads);
    let runs: Vec<_> = grouping
        .parts(threads)
        .into_iter()
        .map(|(groups, _)| groups)
        .collect();
    let parts = with_accumulator!(aggregation, &sorted, make => run_parts(NAME, runs, None, make, |acc, groups| {
        sessions_of(acc, &grouping, groups, gap)
    }))?;
    aggregate_batches(
        NAME,
        keys,
        &times.bound_type,
        ["session_start", "session_end"],
        parts,
    )
}

/// One row per session of the groups `groups`, with the aggregate of its values.
fn sessions_of<A: Accumulator>(
    acc: &mut A,
    grouping: &Grouping<'_>,
    groups: std::ops::Range<usize>,
    gap: i64,
) -> Result<Windows<A::Out>> {
    const NAME: &str = "session_aggregate";
    let mut out = Windows::new(grouping.keyed, true);
    sessions(grouping, groups, gap, |first, last| {
        acc.begin(first..last + 1);
        for p in first..=last {
            acc.push(p);
        }
        let end = grouping.ts[last]
            .checked_add(gap)
            .ok_or_else(|| out_of_range(NAME, grouping.row(last) as usize, grouping.ts[last]))?;
        out.push(grouping.row(first), grouping.ts[first], end, acc.value());
        acc.clear();
        Ok(())
    })?;
    Ok(out)
}
