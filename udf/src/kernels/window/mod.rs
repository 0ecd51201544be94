//! Event-time windows: tumbling, hopping (sliding), rolling and session windows, per key.
//!
//! Times are handled as `i64` nanoseconds since the Unix epoch. Inputs may be Arrow
//! timestamps of any unit (converted to nanoseconds; an error names the row whose time
//! falls outside the nanosecond range, years 1677 to 2262) or `Int64` nanoseconds. Window
//! bounds come back as `Timestamp(Nanosecond, tz)` with the input's time zone, or as
//! `Int64` for `Int64` input. Durations are nanoseconds (see [`parse_duration`]).
//!
//! Shared rules, the same as Spark's:
//! - windows are half-open `[start, end)`; a window start is `offset + k * step` for an
//!   integer `k`, found with floor (Euclidean) division, so times before 1970 are right;
//! - rows with a null time are dropped (per-row outputs are null there);
//! - null values are ignored by aggregates (`count` counts non-null values; an aggregate
//!   over no non-null value is null, except `count`, which is 0);
//! - input need not be sorted: rows are grouped by key and sorted by time internally, and
//!   per-row results are written back in input order.
//!
//! Aggregates run in O(rows + windows): subtract-on-evict for sum, count and mean (integer
//! sums exact in 128 bits, float sums compensated), a monotonic deque for min and max.

mod accumulate;
mod duration;
mod groups;
mod hop;
mod rolling;
mod session;
mod tumble;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, PrimitiveArray, TimestampNanosecondArray};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};

pub use duration::{format_nanos, parse_duration};
pub use hop::{hop_aggregate, hop_windows};
pub use rolling::{rolling, rolling_name};
pub use session::{session_aggregate, session_window};
pub use tumble::tumble_start;

use super::{KernelError, Result};

/// The aggregate computed over each window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aggregation {
    Sum,
    Count,
    Mean,
    Min,
    Max,
}

impl Aggregation {
    pub const NAMES: [&'static str; 5] = ["sum", "count", "mean", "min", "max"];

    pub fn parse(function: &'static str, argument: &str, name: &str) -> Result<Self> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "sum" => Self::Sum,
            "count" => Self::Count,
            "mean" | "avg" => Self::Mean,
            "min" => Self::Min,
            "max" => Self::Max,
            _ => {
                return Err(KernelError::new(
                    function,
                    argument,
                    format!("expected one of {}, found \"{name}\"", Self::NAMES.join(", ")),
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Count => "count",
            Self::Mean => "mean",
            Self::Min => "min",
            Self::Max => "max",
        }
    }

    /// The result type for values of `value_type` (after the kernels' numeric widening).
    pub fn output_type(self, value_type: &DataType) -> DataType {
        let integer = value_type.is_integer();
        match self {
            Self::Count => DataType::Int64,
            Self::Mean => DataType::Float64,
            Self::Sum | Self::Min | Self::Max if integer => DataType::Int64,
            Self::Sum | Self::Min | Self::Max => DataType::Float64,
        }
    }
}

/// Which ends of a rolling window `(t - period, t]` are included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Closed {
    /// `(t - period, t]`: the default, as Polars' `rolling_*_by` and SQL `RANGE` frames.
    #[default]
    Right,
    /// `[t - period, t)`: excludes the current time, e.g. for leakage-free features.
    Left,
    /// `[t - period, t]`.
    Both,
    /// `(t - period, t)`.
    Neither,
}

impl Closed {
    pub const NAMES: [&'static str; 4] = ["right", "left", "both", "none"];

    pub fn parse(function: &'static str, argument: &str, name: &str) -> Result<Self> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "right" => Self::Right,
            "left" => Self::Left,
            "both" => Self::Both,
            "none" | "neither" => Self::Neither,
            _ => {
                return Err(KernelError::new(
                    function,
                    argument,
                    format!("expected one of {}, found \"{name}\"", Self::NAMES.join(", ")),
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Event times as nanoseconds, borrowed when the input already is nanoseconds.
pub(crate) struct EventTimes<'a> {
    pub nanos: Cow<'a, [i64]>,
    pub nulls: Option<NullBuffer>,
    /// The type in which window bounds are returned.
    pub bound_type: DataType,
}

impl EventTimes<'_> {
    pub fn len(&self) -> usize {
        self.nanos.len()
    }

    pub fn is_valid(&self, row: usize) -> bool {
        self.nulls.as_ref().is_none_or(|n| n.is_valid(row))
    }

    /// An array of window bounds in the output type.
    pub fn bounds_array(&self, values: Vec<i64>, nulls: Option<NullBuffer>) -> ArrayRef {
        bounds_array(&self.bound_type, values, nulls)
    }
}

pub(crate) fn bounds_array(bound_type: &DataType, values: Vec<i64>, nulls: Option<NullBuffer>) -> ArrayRef {
    match bound_type {
        DataType::Timestamp(_, tz) => Arc::new(
            TimestampNanosecondArray::new(ScalarBuffer::from(values), nulls).with_timezone_opt(tz.clone()),
        ),
        _ => Arc::new(Int64Array::new(ScalarBuffer::from(values), nulls)),
    }
}

pub(crate) const TIME_TYPES: &str = "a timestamp (any unit) or Int64 nanoseconds";

/// Reads an event-time column, converting timestamps of coarser units to nanoseconds.
pub(crate) fn event_times<'a>(
    function: &'static str,
    argument: &str,
    array: &'a dyn Array,
) -> Result<EventTimes<'a>> {
    let (per_unit, tz) = match array.data_type() {
        DataType::Int64 => (1, None),
        DataType::Timestamp(unit, tz) => (
            match unit {
                TimeUnit::Second => 1_000_000_000,
                TimeUnit::Millisecond => 1_000_000,
                TimeUnit::Microsecond => 1_000,
                TimeUnit::Nanosecond => 1,
            },
            Some(tz.clone()),
        ),
        other => {
            return Err(KernelError::wrong_type(
                function,
                argument,
                format!("expected {TIME_TYPES}, found {other}"),
            ))
        }
    };
    use arrow::datatypes::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    let raw: &'a [i64] = match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => array.as_primitive::<TimestampSecondType>().values(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            array.as_primitive::<TimestampMillisecondType>().values()
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            array.as_primitive::<TimestampMicrosecondType>().values()
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            array.as_primitive::<TimestampNanosecondType>().values()
        }
        _ => array.as_primitive::<Int64Type>().values(),
    };
    let nulls = array.logical_nulls();
    let nanos = if per_unit == 1 {
        Cow::Borrowed(raw)
    } else {
        let mut out = Vec::with_capacity(raw.len());
        for (row, &v) in raw.iter().enumerate() {
            let valid = nulls.as_ref().is_none_or(|n| n.is_valid(row));
            match v.checked_mul(per_unit) {
                Some(ns) => out.push(ns),
                None if !valid => out.push(0),
                None => {
                    return Err(KernelError::new(
                        function,
                        argument,
                        format!(
                            "expected times between 1677-09-21 and 2262-04-11 (nanosecond \
                             timestamps), found {v} {} at row {row}",
                            match per_unit {
                                1_000_000_000 => "s",
                                1_000_000 => "ms",
                                _ => "us",
                            }
                        ),
                    ))
                }
            }
        }
        Cow::Owned(out)
    };
    let bound_type = match tz {
        Some(tz) => DataType::Timestamp(TimeUnit::Nanosecond, tz),
        None => DataType::Int64,
    };
    Ok(EventTimes { nanos, nulls, bound_type })
}

/// Aggregated values, widened: integers to `Int64`, everything else numeric to `Float64`.
pub(crate) enum NumericValues {
    Int(PrimitiveArray<Int64Type>),
    Float(PrimitiveArray<Float64Type>),
    /// For `count`: any type; only validity matters.
    Validity(Option<NullBuffer>),
}

pub(crate) fn numeric_values(
    function: &'static str,
    argument: &str,
    array: &dyn Array,
    aggregation: Aggregation,
) -> Result<NumericValues> {
    let t = array.data_type();
    if aggregation == Aggregation::Count {
        return Ok(NumericValues::Validity(array.logical_nulls()));
    }
    let cast = |to: DataType| {
        let options = CastOptions { safe: false, ..Default::default() };
        cast_with_options(array, &to, &options).map_err(|e| {
            KernelError::new(function, argument, format!("cannot convert {t} values to {to}: {e}"))
        })
    };
    if t.is_integer() {
        let a = if *t == DataType::Int64 { arrow::array::make_array(array.to_data()) } else { cast(DataType::Int64)? };
        Ok(NumericValues::Int(a.as_primitive::<Int64Type>().clone()))
    } else if t.is_floating() || matches!(t, DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..) | DataType::Null) {
        let a = if *t == DataType::Float64 { arrow::array::make_array(array.to_data()) } else { cast(DataType::Float64)? };
        Ok(NumericValues::Float(a.as_primitive::<Float64Type>().clone()))
    } else {
        Err(KernelError::wrong_type(
            function,
            argument,
            format!("expected numbers for `{}`, found {t}", aggregation.name()),
        ))
    }
}

/// Checks that every column argument has `len` rows.
pub(crate) fn ensure_len(function: &'static str, argument: &str, found: usize, expected: usize) -> Result<()> {
    if found != expected {
        return Err(KernelError::new(
            function,
            argument,
            format!("expected {expected} rows like argument `ts`, found {found} rows"),
        ));
    }
    Ok(())
}
