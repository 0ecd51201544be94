//! Tumbling windows: the start of the fixed-size window holding each event.

use arrow::array::{Array, ArrayRef};

use super::duration::ensure_positive;
use super::{event_times, KernelError, Result};

/// Start of the window `[start, start + step)` holding `t`, for starts at
/// `offset + k * step` (`offset` already reduced to `0..step`). Floor division, so
/// times before 1970 land in the right window. `None` when the start is below `i64::MIN`.
#[inline(always)]
pub(crate) fn window_start(t: i64, offset: i64, step: i64) -> Option<i64> {
    let r = match t.checked_sub(offset) {
        Some(d) => d.rem_euclid(step),
        // Only near i64::MIN: the start may still be in range, so compute it exactly.
        None => (t as i128 - offset as i128).rem_euclid(step as i128) as i64,
    };
    t.checked_sub(r)
}

pub(crate) fn out_of_range(function: &'static str, row: usize, t: i64) -> KernelError {
    KernelError::new(
        function,
        "ts",
        format!(
            "the window of the time {} at row {row} starts or ends outside the nanosecond range (years 1677 to 2262)",
            arrowfeat_common::instant::time_value_text(t, 1)
        ),
    )
}

/// `tumble_start(ts, size, offset)`: start of the tumbling window of length `size` (ns)
/// holding each event; windows start at `offset + k * size`. Null times give null.
pub fn tumble_start(ts: &dyn Array, size: i64, offset: i64) -> Result<ArrayRef> {
    const NAME: &str = "tumble_start";
    ensure_positive(NAME, "size", size)?;
    let times = event_times(NAME, "ts", ts)?;
    let offset = offset.rem_euclid(size);
    let mut starts = Vec::with_capacity(times.len());
    for (row, &t) in times.nanos.iter().enumerate() {
        if !times.is_valid(row) {
            starts.push(0);
            continue;
        }
        starts.push(window_start(t, offset, size).ok_or_else(|| out_of_range(NAME, row, t))?);
    }
    Ok(times.bounds_array(starts, times.nulls.clone()))
}
