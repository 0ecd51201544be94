//! Session windows: events of a key closer than `gap` to the previous one share a session.

use arrow::array::{Array, ArrayRef, StructArray};
use arrow::datatypes::{Field, Fields};
use arrow::record_batch::RecordBatch;

use super::accumulate::{float_output, with_accumulator, Output, SortedValues};
use super::duration::ensure_positive;
use super::groups::{group_and_sort, Grouping};
use super::hop::{aggregate_batch, overflow_error};
use super::tumble::out_of_range;
use super::{ensure_len, event_times, numeric_values, Aggregation, Result};

/// Calls `each(first, last)` for every session (positions, inclusive) of every group.
/// An event at exactly `last + gap` joins the session, as in Spark.
fn sessions(grouping: &Grouping, gap: i64, mut each: impl FnMut(usize, usize) -> Result<()>) -> Result<()> {
    let ts = &grouping.ts;
    for group in grouping.groups() {
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
/// plus `gap` (Spark's `session_window`). Rows with a null time give null.
pub fn session_window(keys: Option<&ArrayRef>, ts: &dyn Array, gap: i64) -> Result<StructArray> {
    const NAME: &str = "session_window";
    ensure_positive(NAME, "gap", gap)?;
    let times = event_times(NAME, "ts", ts)?;
    let grouping = group_and_sort(NAME, keys, &times)?;
    let rows = times.len();
    let mut starts = vec![0i64; rows];
    let mut ends = vec![0i64; rows];
    sessions(&grouping, gap, |first, last| {
        let start = grouping.ts[first];
        let end = grouping.ts[last]
            .checked_add(gap)
            .ok_or_else(|| out_of_range(NAME, grouping.order[last] as usize, grouping.ts[last]))?;
        for &row in &grouping.order[first..=last] {
            starts[row as usize] = start;
            ends[row as usize] = end;
        }
        Ok(())
    })?;
    // The children carry the nulls too, so that `s['start']` is null where `s` is.
    let start = times.bounds_array(starts, times.nulls.clone());
    let end = times.bounds_array(ends, times.nulls.clone());
    let fields = Fields::from(vec![
        Field::new("start", start.data_type().clone(), true),
        Field::new("end", end.data_type().clone(), true),
    ]);
    Ok(StructArray::new(fields, vec![start, end], times.nulls.clone()))
}

/// `session_aggregate(keys, ts, values, gap, agg)`: one row per session per key:
/// `key` (when `keys` is given), `session_start`, `session_end` (last event + gap) and
/// the aggregate of the session's values, ordered by key then session start.
pub fn session_aggregate(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    gap: i64,
    aggregation: Aggregation,
) -> Result<RecordBatch> {
    const NAME: &str = "session_aggregate";
    ensure_positive(NAME, "gap", gap)?;
    let times = event_times(NAME, "ts", ts)?;
    ensure_len(NAME, "values", values.len(), times.len())?;
    let values = numeric_values(NAME, "values", values, aggregation)?;
    let grouping = group_and_sort(NAME, keys, &times)?;
    let sorted = SortedValues::gather(&values, &grouping.order);
    let mut out = Output::with_capacity(float_output(aggregation, &sorted), 0);
    let mut key_rows = Vec::new();
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    with_accumulator!(aggregation, &sorted, acc => {
        sessions(&grouping, gap, |first, last| {
            for p in first..=last {
                acc.push(p);
            }
            acc.emit(&mut out);
            acc.clear();
            key_rows.push(grouping.order[first]);
            starts.push(grouping.ts[first]);
            ends.push(
                grouping.ts[last]
                    .checked_add(gap)
                    .ok_or_else(|| out_of_range(NAME, grouping.order[last] as usize, grouping.ts[last]))?,
            );
            Ok(())
        })?;
        if acc.overflowed() {
            return Err(overflow_error(NAME));
        }
    });
    aggregate_batch(NAME, keys, key_rows, &times.bound_type, ["session_start", "session_end"], starts, ends, out)
}
