//! Rolling windows per event: the aggregate over each event's trailing `period`.

use arrow::array::{Array, ArrayRef};

use super::accumulate::{float_output, with_accumulator, Output, SortedValues};
use super::duration::ensure_positive;
use super::groups::group_and_sort;
use super::hop::overflow_error;
use super::{ensure_len, event_times, numeric_values, Aggregation, Closed, Result};

/// `rolling(keys, ts, values, period, closed, agg)`: for each event at time `t`, the
/// aggregate of the values of the same key's events in `(t - period, t]` (`closed`
/// chooses which ends are included). Events at the same time are peers: each sees all of
/// them, as in SQL `RANGE` frames. One result per input row, in input order; rows with a
/// null time give null.
pub fn rolling(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    period: i64,
    closed: Closed,
    aggregation: Aggregation,
) -> Result<ArrayRef> {
    let function = rolling_name(aggregation);
    ensure_positive(function, "period", period)?;
    let times = event_times(function, "ts", ts)?;
    ensure_len(function, "value", values.len(), times.len())?;
    let values = numeric_values(function, "value", values, aggregation)?;
    let grouping = group_and_sort(function, keys, &times)?;
    let sorted = SortedValues::gather(&values, &grouping.order);
    let mut out = Output::with_capacity(float_output(aggregation, &sorted), grouping.ts.len());
    let ts = &grouping.ts;
    let include_current = matches!(closed, Closed::Right | Closed::Both);
    let include_oldest = matches!(closed, Closed::Left | Closed::Both);
    with_accumulator!(aggregation, &sorted, acc => {
        for group in grouping.groups() {
            let (mut low, mut high) = (group.start, group.start);
            for &t in &ts[group.clone()] {
                while high < group.end && (ts[high] < t || (include_current && ts[high] == t)) {
                    acc.push(high);
                    high += 1;
                }
                let oldest = t.saturating_sub(period);
                while low < high && (ts[low] < oldest || (!include_oldest && ts[low] == oldest)) {
                    acc.evict(low);
                    low += 1;
                }
                acc.emit(&mut out);
            }
            acc.clear();
        }
        if acc.overflowed() {
            return Err(overflow_error(function));
        }
    });
    Ok(out.scatter(&grouping.order, times.len()).into_array())
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
