//! Rolling windows per event: the aggregate over each event's trailing `period`.

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::ArrowPrimitiveType;

use super::accumulate::{to_rows, with_accumulator, Accumulator, Native, SortedValues, Word};
use super::duration::ensure_positive;
use super::groups::{group_and_sort_ids, key_ids, map_units, split_pair, threads_for, Grouping};
use super::hop::overflow_error;
use super::rolling_in_order::{rolling_in_row_order, Window};
use super::{ensure_len, event_times, numeric_values, Aggregation, Closed, Result};

/// `rolling(keys, ts, values, period, closed, agg)`: for each event at time `t`, the
/// aggregate of the values of the same key's events in `(t - period, t]` (`closed`
/// chooses which ends are included). Events at the same time are peers: each sees all of
/// them, as in SQL `RANGE` frames. One result per input row, in input order; rows with a
/// null time give null. Large inputs are split by key (rows already in time order: by
/// time) over at most `threads` threads (0: one per core); the result does not depend on
/// it.
pub fn rolling(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    period: i64,
    closed: Closed,
    aggregation: Aggregation,
    threads: usize,
) -> Result<ArrayRef> {
    let function = rolling_name(aggregation);
    ensure_positive(function, "period", period)?;
    let times = event_times(function, "ts", ts)?;
    ensure_len(function, "value", values.len(), times.len())?;
    let values = numeric_values(function, "value", values, aggregation)?;
    let window = Window { period, closed };
    let (ids, groups) = key_ids(function, keys, times.len(), threads)?;
    if keys.is_some() && times.all_present_in_order() {
        // An event log: every time present, in order.
        let by_rows = rolling_in_row_order(
            &ids,
            groups,
            &times.nanos,
            &values,
            window,
            aggregation,
            threads,
        );
        if let Some((out, overflow)) = by_rows {
            return if overflow {
                Err(overflow_error(function))
            } else {
                Ok(out)
            };
        }
    }
    let mut grouping = group_and_sort_ids(
        &ids,
        groups,
        keys.is_some(),
        &times,
        values.words(),
        threads,
    );
    let threads = threads_for(grouping.len(), threads);
    let carried = grouping.take_carried();
    let sorted = SortedValues::gather(&values, grouping.permutation(), carried, threads);
    with_accumulator!(aggregation, &sorted, make => {
        let (out, overflow) = run(make, &grouping, window, threads, times.len());
        if overflow {
            return Err(overflow_error(function));
        }
        Ok(out)
    })
}

/// Results per sorted position, computed by up to `threads` threads over disjoint runs
/// of groups, then written back to the `rows` input rows.
fn run<A: Accumulator>(
    make: impl Fn() -> A + Sync,
    grouping: &Grouping<'_>,
    window: Window,
    threads: usize,
    rows: usize,
) -> (ArrayRef, bool)
where
    Native<A>: Word,
{
    let positions = grouping.len();
    let mut values = vec![Native::<A>::default(); positions];
    let mut valid = vec![false; positions];
    // Each part owns the positions of one run of groups.
    let parts = grouping.parts(threads);
    let slices = split_pair(&mut values, &mut valid, parts.iter().map(|(_, s)| s.len()));
    let tasks: Vec<_> = parts
        .into_iter()
        .zip(slices)
        .map(|((groups, span), (part_values, part_valid))| {
            (groups, span.start, part_values, part_valid)
        })
        .collect();
    let overflow = map_units(tasks, |(groups, base, part_values, part_valid)| {
        let mut acc = make();
        fill(
            &mut acc,
            grouping,
            groups,
            base,
            part_values,
            part_valid,
            window,
        );
        acc.overflowed()
    })
    .contains(&true);
    (
        to_rows::<A::Out>(values, valid, grouping.permutation(), rows, threads),
        overflow,
    )
}

with_bit_instructions! {
    /// Fills `values` / `valid` (positions from `base`) for the groups `groups`.
    fn fill<A: Accumulator>(
        acc: &mut A,
        grouping: &Grouping<'_>,
        groups: std::ops::Range<usize>,
        base: usize,
        values: &mut [<A::Out as ArrowPrimitiveType>::Native],
        valid: &mut [bool],
        window: Window,
    ) = fill_portable;
}

/// [`fill`], in whichever build it chose.
#[inline(always)]
fn fill_portable<A: Accumulator>(
    acc: &mut A,
    grouping: &Grouping<'_>,
    groups: std::ops::Range<usize>,
    base: usize,
    values: &mut [<A::Out as ArrowPrimitiveType>::Native],
    valid: &mut [bool],
    window: Window,
) {
    // One copy of the sweep per choice of ends, so that its comparisons are fixed.
    match window.closed {
        Closed::Right => {
            sweep::<A, true, false>(acc, grouping, groups, base, values, valid, window)
        }
        Closed::Both => sweep::<A, true, true>(acc, grouping, groups, base, values, valid, window),
        Closed::Left => sweep::<A, false, true>(acc, grouping, groups, base, values, valid, window),
        Closed::Neither => {
            sweep::<A, false, false>(acc, grouping, groups, base, values, valid, window)
        }
    }
}

/// [`fill`] for one choice of window ends.
#[inline(always)]
fn sweep<A: Accumulator, const INCLUDE_CURRENT: bool, const INCLUDE_OLDEST: bool>(
    acc: &mut A,
    grouping: &Grouping<'_>,
    groups: std::ops::Range<usize>,
    base: usize,
    values: &mut [<A::Out as ArrowPrimitiveType>::Native],
    valid: &mut [bool],
    window: Window,
) {
    let ts = &grouping.ts[..];
    let (include_current, include_oldest) = (INCLUDE_CURRENT, INCLUDE_OLDEST);
    for g in groups {
        let group = grouping.bounds[g]..grouping.bounds[g + 1];
        acc.begin(group.clone());
        let (mut low, mut high) = (group.start, group.start);
        for p in group.clone() {
            let t = ts[p];
            while high < group.end && (ts[high] < t || (include_current && ts[high] == t)) {
                acc.push(high);
                high += 1;
            }
            // When `t - period` is below i64::MIN, no time is that old: nothing leaves.
            if let Some(oldest) = t.checked_sub(window.period) {
                while low < high && (ts[low] < oldest || (!include_oldest && ts[low] == oldest)) {
                    acc.evict(low);
                    low += 1;
                }
            }
            if let Some(v) = acc.value() {
                values[p - base] = v;
                valid[p - base] = true;
            }
        }
        acc.clear();
    }
}

/// The SQL / Python name of a rolling aggregate, for error messages.
pub fn rolling_name(aggregation: Aggregation) -> &'static str {
    match aggregation {
        Aggregation::Sum => "rolling_sum",
        Aggregation::Count => "rolling_count",
        Aggregation::Mean => "rolling_mean",
        Aggregation::Min => "rolling_min",
        Aggregation::Max => "rolling_max",
    }
}
