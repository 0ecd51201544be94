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
//! Aggregates run in O(rows + windows): subtract-on-evict for counts, integer sums (exact
//! in 128 bits) and float sums and means (exact in fixed point, correctly rounded), a
//! monotonic deque for min and max.

pub(crate) mod accumulate;
pub(crate) mod duration;
mod exact_sum;
pub(crate) mod groups;
pub(crate) mod hop;
mod rolling;
mod rolling_in_order;
mod session;
mod tumble;
mod window_sum;

#[cfg(test)]
pub(crate) mod reference;
#[cfg(test)]
pub(crate) mod tests;

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, PrimitiveArray, TimestampNanosecondArray,
};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit, UInt64Type};

pub use duration::{ensure_positive, format_nanos, parse_duration};
pub use hop::{hop_aggregate, hop_aggregate_batches, hop_windows};
pub use rolling::{rolling, rolling_name};
pub use session::{session_aggregate, session_aggregate_batches, session_window};
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
            _ => return Err(unknown_name(function, argument, &Self::NAMES, name)),
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

/// A name that is not one of `names` (an aggregation or a `closed` choice).
fn unknown_name(function: &'static str, argument: &str, names: &[&str], name: &str) -> KernelError {
    KernelError::new(
        function,
        argument,
        format!("expected one of {}, found \"{name}\"", names.join(", ")),
    )
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
            _ => return Err(unknown_name(function, argument, &Self::NAMES, name)),
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

    /// Whether every time is present and they ascend (an event log).
    pub fn all_present_in_order(&self) -> bool {
        self.nulls.as_ref().is_none_or(|n| n.null_count() == 0) && self.nanos.is_sorted()
    }

    /// An array of window bounds in the output type.
    pub fn bounds_array(&self, values: Vec<i64>, nulls: Option<NullBuffer>) -> ArrayRef {
        bounds_array(&self.bound_type, values, nulls)
    }
}

pub(crate) fn bounds_array(
    bound_type: &DataType,
    values: Vec<i64>,
    nulls: Option<NullBuffer>,
) -> ArrayRef {
    match bound_type {
        DataType::Timestamp(_, tz) => Arc::new(
            TimestampNanosecondArray::new(ScalarBuffer::from(values), nulls)
                .with_timezone_opt(tz.clone()),
        ),
        _ => Arc::new(Int64Array::new(ScalarBuffer::from(values), nulls)),
    }
}

pub(crate) const TIME_TYPES: &str = "a timestamp (any unit), a date or Int64 nanoseconds";

/// Reads an event-time column, converting timestamps of coarser units to nanoseconds.
pub(crate) fn event_times<'a>(
    function: &'static str,
    argument: &str,
    array: &'a dyn Array,
) -> Result<EventTimes<'a>> {
    let (per_unit, tz) = match array.data_type() {
        DataType::Int64 => (1, None),
        // Dates are midnight UTC; their windows are timestamps without a time zone.
        DataType::Date32 => (86_400_000_000_000, Some(None)),
        DataType::Date64 => (1_000_000, Some(None)),
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
    let nulls = array.logical_nulls();
    if let DataType::Date32 = array.data_type() {
        let days = array
            .as_primitive::<arrow::datatypes::Date32Type>()
            .values()
            .iter()
            .map(|&d| d as i64);
        let nanos = to_nanos(function, argument, days, per_unit, false, nulls.as_ref())?;
        return Ok(EventTimes {
            nanos: Cow::Owned(nanos),
            nulls,
            bound_type: DataType::Timestamp(TimeUnit::Nanosecond, None),
        });
    }
    let raw: &'a [i64] = match array.data_type() {
        DataType::Date64 => array
            .as_primitive::<arrow::datatypes::Date64Type>()
            .values(),
        DataType::Timestamp(TimeUnit::Second, _) => {
            array.as_primitive::<TimestampSecondType>().values()
        }
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
    let nanos = if per_unit == 1 {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(to_nanos(
            function,
            argument,
            raw.iter().copied(),
            per_unit,
            matches!(tz, Some(Some(_))),
            nulls.as_ref(),
        )?)
    };
    let bound_type = match tz {
        Some(tz) => DataType::Timestamp(TimeUnit::Nanosecond, tz),
        None => DataType::Int64,
    };
    Ok(EventTimes {
        nanos,
        nulls,
        bound_type,
    })
}

/// Times in units of `per_unit` nanoseconds as nanoseconds; an error names the first
/// (non-null) row outside the nanosecond range, by its date (in UTC, with `Z`, when the
/// times are `zoned`).
fn to_nanos(
    function: &'static str,
    argument: &str,
    values: impl Iterator<Item = i64>,
    per_unit: i64,
    zoned: bool,
    nulls: Option<&NullBuffer>,
) -> Result<Vec<i64>> {
    let mut out = Vec::with_capacity(values.size_hint().0);
    for (row, v) in values.enumerate() {
        match v.checked_mul(per_unit) {
            Some(ns) => out.push(ns),
            None if nulls.is_some_and(|n| n.is_null(row)) => out.push(0),
            None => {
                return Err(KernelError::new(
                    function,
                    argument,
                    format!(
                        "expected times between 1677-09-21 and 2262-04-11 (nanosecond timestamps), \
                         found {}{} at row {row}",
                        arrowfeat_common::instant::time_value_text(v, per_unit),
                        if zoned { "Z" } else { "" }
                    ),
                ))
            }
        }
    }
    Ok(out)
}

/// Aggregated values, widened: integers to `Int64`, everything else numeric to `Float64`.
pub(crate) enum NumericValues {
    Int(PrimitiveArray<Int64Type>),
    Float(PrimitiveArray<Float64Type>),
    /// For `count`: any type; only validity matters.
    Validity(Option<NullBuffer>),
}

impl NumericValues {
    /// The values as 64-bit words, to be carried through a sort; none for `count`.
    pub fn words(&self) -> Option<&[u64]> {
        match self {
            NumericValues::Int(a) => Some(a.values().inner().typed_data::<u64>()),
            NumericValues::Float(a) => Some(a.values().inner().typed_data::<u64>()),
            NumericValues::Validity(_) => None,
        }
    }
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
        let options = CastOptions {
            safe: false,
            ..Default::default()
        };
        cast_with_options(array, &to, &options).map_err(|e| {
            KernelError::new(
                function,
                argument,
                format!("cannot convert {t} values to {to}: {e}"),
            )
        })
    };
    if let Some(values) = array.as_primitive_opt::<UInt64Type>() {
        // Named here, by value: the cast's own error is Rust's ("Cast error: Can't cast").
        if let Some(big) = values.iter().flatten().find(|&v| v > i64::MAX as u64) {
            return Err(KernelError::new(
                function,
                argument,
                format!(
                    "expected integers up to {} for `{}` (they are added as Int64), found {big}; \
                     cast the column to a DOUBLE",
                    i64::MAX,
                    aggregation.name()
                ),
            ));
        }
    }
    if t.is_integer() {
        let a = if *t == DataType::Int64 {
            arrow::array::make_array(array.to_data())
        } else {
            cast(DataType::Int64)?
        };
        Ok(NumericValues::Int(a.as_primitive::<Int64Type>().clone()))
    } else if t.is_floating()
        || matches!(
            t,
            DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
                | DataType::Null
        )
    {
        let a = if *t == DataType::Float64 {
            arrow::array::make_array(array.to_data())
        } else {
            cast(DataType::Float64)?
        };
        Ok(NumericValues::Float(
            a.as_primitive::<Float64Type>().clone(),
        ))
    } else {
        Err(KernelError::wrong_type(
            function,
            argument,
            format!("expected numbers for `{}`, found {t}", aggregation.name()),
        ))
    }
}

/// Checks that every column argument has `len` rows.
pub(crate) fn ensure_len(
    function: &'static str,
    argument: &str,
    found: usize,
    expected: usize,
) -> Result<()> {
    if found != expected {
        return Err(KernelError::new(
            function,
            argument,
            format!("expected {expected} rows like argument `ts`, found {found} rows"),
        ));
    }
    Ok(())
}
