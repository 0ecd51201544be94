//! SQL functions for event-time windows: the scalar functions `tumble_start` and
//! `hop_windows`, and the window functions `rolling_sum` / `count` / `mean` / `min` /
//! `max` and `session_window`, used `OVER (PARTITION BY key ORDER BY ts)`.
//!
//! Durations are constants: an interval (`INTERVAL '5 minutes'`), a string (`'5m'`,
//! `'500ns'`), a duration, or an integer number of nanoseconds.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::expr::{NullTreatment, WindowFunction};
use datafusion::logical_expr::function::{
    PartitionEvaluatorArgs, WindowFunctionSimplification, WindowUDFFieldArgs,
};
use datafusion::logical_expr::{
    Documentation, PartitionEvaluator, ScalarUDF, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use datafusion::logical_expr::{Expr, WindowFrameBound};
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::PhysicalExpr;

use crate::kernels::window::{self, parse_duration, Aggregation, Closed};
use crate::sql::{
    kernel_error, signature_error, FeatureFunction, FeatureUdf, KernelArg, DOC_SECTION,
};

pub(crate) fn udfs() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(FeatureUdf(TumbleStart::new())),
        ScalarUDF::new_from_impl(FeatureUdf(HopWindows::new())),
    ]
}

pub(crate) fn udwfs() -> Vec<WindowUDF> {
    let mut out: Vec<WindowUDF> = [
        Aggregation::Sum,
        Aggregation::Count,
        Aggregation::Mean,
        Aggregation::Min,
        Aggregation::Max,
    ]
    .into_iter()
    .map(|a| WindowUDF::new_from_impl(Rolling::new(a)))
    .collect();
    out.push(WindowUDF::new_from_impl(SessionWindow::new()));
    out
}

fn is_time(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Timestamp(..)
            | DataType::Date32
            | DataType::Date64
            | DataType::Int64
            | DataType::Null
    )
}

fn is_duration(t: &DataType) -> bool {
    t.is_integer()
        || matches!(
            t,
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Interval(_)
                | DataType::Duration(_)
        )
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The type window bounds are returned in for event times of type `ts`.
fn bound_type(ts: &DataType) -> DataType {
    match ts {
        DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Nanosecond, tz.clone()),
        DataType::Date32 | DataType::Date64 => DataType::Timestamp(TimeUnit::Nanosecond, None),
        _ => DataType::Int64,
    }
}

/// A constant duration argument as nanoseconds.
fn duration_nanos(function: &'static str, argument: &str, value: &ScalarValue) -> Result<i64> {
    const NS_PER_DAY: i64 = 86_400_000_000_000;
    let found = |what: &str| {
        exec_err!(
            "{function}: argument `{argument}`: expected a duration such as INTERVAL '5 minutes', '5m' or \
             an integer number of nanoseconds, found {what}"
        )
    };
    if value.is_null() {
        return found("NULL");
    }
    let too_long = || {
        datafusion::common::DataFusionError::Execution(format!(
            "{function}: argument `{argument}`: expected a duration shorter than 292 years, found {}",
            describe(value)
        ))
    };
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => {
            parse_duration(function, argument, s).map_err(kernel_error)
        }
        ScalarValue::IntervalMonthDayNano(Some(v)) => {
            if v.months != 0 {
                return found(&format!(
                    "an interval of {} month(s), which has no fixed length; use days",
                    v.months
                ));
            }
            (v.days as i64)
                .checked_mul(NS_PER_DAY)
                .and_then(|d| d.checked_add(v.nanoseconds))
                .ok_or_else(too_long)
        }
        ScalarValue::IntervalDayTime(Some(v)) => (v.days as i64)
            .checked_mul(NS_PER_DAY)
            .and_then(|d| d.checked_add(v.milliseconds as i64 * 1_000_000))
            .ok_or_else(too_long),
        ScalarValue::IntervalYearMonth(Some(v)) => found(&format!(
            "an interval of {v} month(s), which has no fixed length; use days"
        )),
        ScalarValue::DurationSecond(Some(v)) => v.checked_mul(1_000_000_000).ok_or_else(too_long),
        ScalarValue::DurationMillisecond(Some(v)) => v.checked_mul(1_000_000).ok_or_else(too_long),
        ScalarValue::DurationMicrosecond(Some(v)) => v.checked_mul(1_000).ok_or_else(too_long),
        ScalarValue::DurationNanosecond(Some(v)) => Ok(*v),
        v if v.data_type().is_integer() => match v.cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(n)) => Ok(n),
            _ => found(&v.to_string()),
        },
        other => found(&format!(
            "{} of type {}",
            describe(other),
            other.data_type()
        )),
    }
}

/// A constant as a user wrote it: intervals as their parts, not as Rust structs.
fn describe(value: &ScalarValue) -> String {
    match value {
        ScalarValue::IntervalMonthDayNano(Some(v)) => format!(
            "INTERVAL '{} months {} days {} nanoseconds'",
            v.months, v.days, v.nanoseconds
        ),
        ScalarValue::IntervalDayTime(Some(v)) => {
            format!("INTERVAL '{} days {} milliseconds'", v.days, v.milliseconds)
        }
        ScalarValue::IntervalYearMonth(Some(v)) => format!("INTERVAL '{v} months'"),
        other => other.to_string(),
    }
}

/// A constant argument's value. Scalars stay scalars; a column is accepted only when
/// every row holds the same value (datafusion-ffi expands constants into columns).
fn constant(function: &'static str, argument: &str, arg: &KernelArg) -> Result<ScalarValue> {
    match arg {
        KernelArg::Scalar(_, value) => Ok(value.clone()),
        KernelArg::Column(column) => constant_column(function, argument, column),
    }
}

fn constant_column(
    function: &'static str,
    argument: &str,
    column: &ArrayRef,
) -> Result<ScalarValue> {
    if column.is_empty() {
        return ScalarValue::try_from(column.data_type());
    }
    let first = ScalarValue::try_from_array(column, 0)?;
    for row in 1..column.len() {
        if ScalarValue::try_from_array(column, row)? != first {
            return exec_err!(
                "{function}: argument `{argument}`: expected a constant, found a column whose rows differ (row {row})"
            );
        }
    }
    Ok(first)
}

/// The event-time argument as an array (a scalar time is a one-row array).
fn time_array(arg: &KernelArg) -> Result<ArrayRef> {
    match arg {
        KernelArg::Column(a) => Ok(Arc::clone(a)),
        KernelArg::Scalar(_, value) => value.to_array(),
    }
}

const TUMBLE_ACCEPTS: &[&str] = &["tumble_start(timestamp | date | int64, duration[, duration])"];
const HOP_ACCEPTS: &[&str] =
    &["hop_windows(timestamp | date | int64, duration, duration[, duration])"];

fn coerce_time_and_durations(
    name: &str,
    accepts: &[&str],
    arg_types: &[DataType],
    durations: std::ops::RangeInclusive<usize>,
) -> Result<Vec<DataType>> {
    let ok = durations.contains(&(arg_types.len().saturating_sub(1)))
        && is_time(&arg_types[0])
        && arg_types[1..].iter().all(is_duration);
    if !ok {
        return signature_error(name, accepts, arg_types);
    }
    let mut types = arg_types.to_vec();
    if types[0].is_null() {
        types[0] = DataType::Timestamp(TimeUnit::Nanosecond, None);
    }
    Ok(types)
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct TumbleStart {
    signature: Signature,
    doc: Documentation,
}

impl TumbleStart {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                "Start of the tumbling (fixed, non-overlapping) window of length `size` that holds \
                 `ts`: windows are [start, start + size) with start = offset + k * size, computed by \
                 floor division so that times before 1970 are right. Returns a nanosecond timestamp \
                 with the input's time zone (Int64 nanoseconds for Int64 input); null for a null time.",
                "tumble_start(ts, size[, offset])",
            )
            .with_argument("ts", "Event time: a timestamp of any unit, a date, or Int64 nanoseconds.")
            .with_argument("size", "Window length: INTERVAL '5 minutes', '5m', '500ns' or nanoseconds.")
            .with_argument("offset", "Shift of the window grid, e.g. '30s' (default 0).")
            .with_sql_example(
                "> SELECT tumble_start(TIMESTAMP '2024-03-01 10:07:42', INTERVAL '5 minutes') AS w;\n\
                 +---------------------+\n\
                 | w                   |\n\
                 +---------------------+\n\
                 | 2024-03-01T10:05:00 |\n\
                 +---------------------+",
            )
            .with_related_udf("hop_windows")
            .build(),
        }
    }
}

impl FeatureFunction for TumbleStart {
    const NAME: &'static str = "tumble_start";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_time_and_durations(Self::NAME, TUMBLE_ACCEPTS, arg_types, 1..=2)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(bound_type(&arg_types[0]))
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let size = duration_nanos(Self::NAME, "size", &constant(Self::NAME, "size", &args[1])?)?;
        let offset = match args.get(2) {
            Some(a) => duration_nanos(Self::NAME, "offset", &constant(Self::NAME, "offset", a)?)?,
            None => 0,
        };
        window::tumble_start(time_array(&args[0])?.as_ref(), size, offset).map_err(kernel_error)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct HopWindows {
    signature: Signature,
    doc: Documentation,
}

impl HopWindows {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                "Starts of every hopping (sliding) window [start, start + size) that holds `ts`, \
                 with start = offset + k * step, ascending: Spark's window(ts, size, step). \
                 `step` must be > 0 and <= `size`. Aggregate per window with UNNEST and GROUP BY \
                 (see the example); windows without events are never produced.",
                "hop_windows(ts, size, step[, offset])",
            )
            .with_argument(
                "ts",
                "Event time: a timestamp of any unit, a date, or Int64 nanoseconds.",
            )
            .with_argument(
                "size",
                "Window length: INTERVAL '10 minutes', '10m', '500ns' or nanoseconds.",
            )
            .with_argument("step", "Distance between window starts, 0 < step <= size.")
            .with_argument("offset", "Shift of the window grid (default 0).")
            .with_sql_example(
                "> SELECT w AS window_start, count(*) AS events \
                 FROM (SELECT unnest(hop_windows(ts, 500, 100)) AS w \
                 FROM (VALUES (1000), (1050), (1499), (1500)) AS t(ts)) \
                 GROUP BY w ORDER BY w LIMIT 3;\n\
                 +--------------+--------+\n\
                 | window_start | events |\n\
                 +--------------+--------+\n\
                 | 600          | 2      |\n\
                 | 700          | 2      |\n\
                 | 800          | 2      |\n\
                 +--------------+--------+",
            )
            .with_related_udf("tumble_start")
            .build(),
        }
    }
}

impl FeatureFunction for HopWindows {
    const NAME: &'static str = "hop_windows";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_time_and_durations(Self::NAME, HOP_ACCEPTS, arg_types, 2..=3)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(Arc::new(Field::new_list_field(
            bound_type(&arg_types[0]),
            false,
        ))))
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let size = duration_nanos(Self::NAME, "size", &constant(Self::NAME, "size", &args[1])?)?;
        let step = duration_nanos(Self::NAME, "step", &constant(Self::NAME, "step", &args[2])?)?;
        let offset = match args.get(3) {
            Some(a) => duration_nanos(Self::NAME, "offset", &constant(Self::NAME, "offset", a)?)?,
            None => 0,
        };
        let lists = window::hop_windows(time_array(&args[0])?.as_ref(), size, step, offset)
            .map_err(kernel_error)?;
        Ok(Arc::new(lists))
    }
}

/// A constant argument of a window function: its literal, read at planning time, or
/// `Deferred` when the expression is not a literal DataFusion can see (datafusion-ffi
/// wraps expressions), in which case the evaluated column must hold one value.
enum Constant<'a> {
    Absent,
    Literal(&'a ScalarValue),
    Deferred(usize),
}

/// The window functions define their own window (the period or gap over event time), so
/// modifiers that would change which rows they see cannot be honoured: reject them at
/// planning instead of silently ignoring them. Only the frames DataFusion adds by
/// default (from the first row to the current row or to the last) are accepted.
fn reject_modifiers(function: &'static str) -> WindowFunctionSimplification {
    Box::new(move |call: WindowFunction, _| {
        let params = &call.params;
        let refuse = |what: &str| {
            plan_err!(
                "{function}: {what} is not supported: the function computes its own window \
                 over event time (see `arrowfeat functions {function}`)"
            )
        };
        if params.distinct {
            return refuse("DISTINCT");
        }
        if params.filter.is_some() {
            return refuse("FILTER (WHERE ...)");
        }
        if params.null_treatment == Some(NullTreatment::IgnoreNulls) {
            return plan_err!(
                "{function}: IGNORE NULLS is not supported: null values are always ignored"
            );
        }
        let frame = &params.window_frame;
        let unbounded = |v: &ScalarValue| v.is_null();
        let default_start =
            matches!(&frame.start_bound, WindowFrameBound::Preceding(v) if unbounded(v));
        let default_end = match &frame.end_bound {
            WindowFrameBound::CurrentRow => true,
            WindowFrameBound::Following(v) => unbounded(v),
            WindowFrameBound::Preceding(_) => false,
        };
        if !(default_start && default_end) {
            return refuse(&format!("the frame `{frame}`"));
        }
        Ok(Expr::WindowFunction(Box::new(call)))
    })
}

fn literal(index: usize, exprs: &[Arc<dyn PhysicalExpr>]) -> Constant<'_> {
    match exprs.get(index) {
        None => Constant::Absent,
        Some(expr) => match expr.downcast_ref::<Literal>() {
            Some(l) => Constant::Literal(l.value()),
            None => Constant::Deferred(index),
        },
    }
}

/// A window-function parameter, known at planning time or read from the partition.
#[derive(Debug, Clone)]
enum Param<T> {
    Known(T),
    FromColumn(usize),
}

impl<T: Clone> Param<T> {
    fn resolve(
        &self,
        function: &'static str,
        argument: &str,
        values: &[ArrayRef],
        parse: impl Fn(&ScalarValue) -> Result<T>,
    ) -> Result<T> {
        match self {
            Param::Known(v) => Ok(v.clone()),
            Param::FromColumn(i) => {
                let value = constant_column(function, argument, &values[*i])?;
                parse(&value)
            }
        }
    }
}

fn closed_of(function: &'static str, value: &ScalarValue) -> Result<Closed> {
    match value {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => {
            Closed::parse(function, "closed", s).map_err(kernel_error)
        }
        other => exec_err!(
            "{function}: argument `closed`: expected one of 'right', 'left', 'both', 'none', found {other}"
        ),
    }
}

/// `rolling_<agg>(value, ts, period[, closed])`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Rolling {
    aggregation: Aggregation,
    name: &'static str,
    signature: Signature,
    doc: Documentation,
}

impl Rolling {
    fn new(aggregation: Aggregation) -> Self {
        let name = window::rolling_name(aggregation);
        let what = match aggregation {
            Aggregation::Sum => {
                "Sum of the non-null values (Int64 for integers, exact; Float64 exact until correctly rounded)"
            }
            Aggregation::Count => "Number of non-null values",
            Aggregation::Mean => "Mean of the non-null values",
            Aggregation::Min => "Smallest non-null value (NaN counts as the largest, as in Spark)",
            Aggregation::Max => "Largest non-null value (NaN counts as the largest, as in Spark)",
        };
        let results: [&str; 4] = match aggregation {
            Aggregation::Sum => ["1", "3", "3", "4"],
            Aggregation::Count => ["1", "2", "2", "1"],
            Aggregation::Mean => ["1.0", "1.5", "1.5", "4.0"],
            Aggregation::Min => ["1", "1", "1", "4"],
            Aggregation::Max => ["1", "2", "2", "4"],
        };
        let width = results[0].len();
        let rule = "-".repeat(width + 2);
        let rows: String = [0, 1, 1, 3]
            .iter()
            .zip(results)
            .map(|(ts, r)| format!("| {ts}  | {r:<width$} |\n"))
            .collect();
        let example = format!(
            "> SELECT ts, {name}(v, ts, 2) OVER (PARTITION BY k ORDER BY ts) AS r \
             FROM (VALUES ('a', 0, 1), ('a', 1, 2), ('a', 1, NULL), ('a', 3, 4)) AS t(k, ts, v) ORDER BY ts;\n\
             +----+{rule}+\n\
             | ts | {:<width$} |\n\
             +----+{rule}+\n\
             {rows}\
             +----+{rule}+",
            "r"
        );
        Self {
            aggregation,
            name,
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                format!(
                    "{what} of the rows of the partition whose time lies in (ts - period, ts], for \
                     each row (a window function: use it with OVER). Rows at the same time are peers and see each \
                     other, as in RANGE frames. `closed` picks the included ends: 'right' (default), \
                     'left' [ts - period, ts), 'both' or 'none'. Correct whatever the ORDER BY (rows \
                     are ordered by `ts` internally); rows with a null time give null. O(rows)."
                ),
                format!("{name}(value, ts, period[, closed]) OVER (PARTITION BY key ORDER BY ts)"),
            )
            .with_argument("value", "Numeric column to aggregate (integers stay Int64).")
            .with_argument("ts", "Event time: a timestamp of any unit, a date, or Int64 nanoseconds.")
            .with_argument("period", "Look-back: INTERVAL '5 minutes', '5m' or nanoseconds.")
            .with_argument("closed", "'right' (default), 'left', 'both' or 'none'.")
            .with_sql_example(example)
            .build(),
        }
    }
}

impl WindowUDFImpl for Rolling {
    fn name(&self) -> &str {
        self.name
    }

    fn simplify(&self) -> Option<WindowFunctionSimplification> {
        Some(reject_modifiers(self.name))
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let accepts = [format!(
            "{}(numeric, timestamp | date | int64, duration[, string])",
            self.name
        )];
        let accepts: Vec<&str> = accepts.iter().map(String::as_str).collect();
        let value_ok =
            |t: &DataType| self.aggregation == Aggregation::Count || t.is_numeric() || t.is_null();
        match arg_types {
            [v, t, p, rest @ ..]
                if value_ok(v)
                    && is_time(t)
                    && is_duration(p)
                    && rest.len() <= 1
                    && rest.iter().all(is_string) =>
            {
                let mut types = arg_types.to_vec();
                // Integers reach the kernel as they are: it widens them to Int64 itself,
                // naming a `uint64` value that does not fit (DataFusion's cast would fail
                // with its own text).
                if self.aggregation != Aggregation::Count && !v.is_integer() {
                    types[0] = DataType::Float64;
                }
                if t.is_null() {
                    types[1] = DataType::Timestamp(TimeUnit::Nanosecond, None);
                }
                Ok(types)
            }
            _ => signature_error(self.name, &accepts, arg_types),
        }
    }

    fn field(&self, field_args: WindowUDFFieldArgs) -> Result<FieldRef> {
        let value_type = field_args
            .get_input_field(0)
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Float64);
        let data_type = self.aggregation.output_type(&value_type);
        // Nullable for every aggregate: a row with a null time gets null.
        Ok(Arc::new(Field::new(field_args.name(), data_type, true)))
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        let exprs = args.input_exprs();
        let function = window::rolling_name(self.aggregation);
        if args.ignore_nulls() {
            return plan_err!(
                "{function}: IGNORE NULLS is not supported: null values are always ignored"
            );
        }
        let period = match literal(2, exprs) {
            Constant::Absent => {
                return plan_err!(
                    "{function}: argument `period`: expected a duration, found no argument"
                )
            }
            Constant::Literal(v) => Param::Known(duration_nanos(function, "period", v)?),
            Constant::Deferred(i) => Param::FromColumn(i),
        };
        let closed = match literal(3, exprs) {
            Constant::Absent => Param::Known(Closed::Right),
            Constant::Literal(v) => Param::Known(closed_of(function, v)?),
            Constant::Deferred(i) => Param::FromColumn(i),
        };
        Ok(Box::new(RollingEvaluator {
            aggregation: self.aggregation,
            period,
            closed,
        }))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&self.doc)
    }
}

#[derive(Debug)]
struct RollingEvaluator {
    aggregation: Aggregation,
    period: Param<i64>,
    closed: Param<Closed>,
}

impl PartitionEvaluator for RollingEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], _num_rows: usize) -> Result<ArrayRef> {
        let function = window::rolling_name(self.aggregation);
        let period = self.period.resolve(function, "period", values, |v| {
            duration_nanos(function, "period", v)
        })?;
        let closed = self
            .closed
            .resolve(function, "closed", values, |v| closed_of(function, v))?;
        window::rolling(
            None,
            values[1].as_ref(),
            values[0].as_ref(),
            period,
            closed,
            self.aggregation,
            // DataFusion already evaluates partitions in parallel: one thread each.
            1,
        )
        .map_err(kernel_error)
    }
}

/// `session_window(ts, gap)`: the session (`{start, end}`) of each row.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct SessionWindow {
    signature: Signature,
    doc: Documentation,
}

impl SessionWindow {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                "The session holding each row, as a struct {start, end} (a window function: use \
                 it with OVER). Rows of a partition whose times are at most `gap` apart form one session (a row at exactly \
                 last + gap joins it, as in Spark's session_window); `start` is the first time of \
                 the session and `end` the last time plus `gap`. Aggregate per session with \
                 GROUP BY on the result. Rows with a null time give null. O(rows).",
                "session_window(ts, gap) OVER (PARTITION BY key ORDER BY ts)",
            )
            .with_argument("ts", "Event time: a timestamp of any unit, a date, or Int64 nanoseconds.")
            .with_argument("gap", "Inactivity gap that closes a session: INTERVAL '30 minutes', '30m' or nanoseconds.")
            .with_sql_example(
                "> SELECT k, ts, session_window(ts, 10) OVER (PARTITION BY k ORDER BY ts) AS s \
                 FROM (VALUES ('a', 0), ('a', 10), ('a', 21), ('b', 5)) AS t(k, ts) ORDER BY k, ts;\n\
                 +---+----+----------------------+\n\
                 | k | ts | s                    |\n\
                 +---+----+----------------------+\n\
                 | a | 0  | {start: 0, end: 20}  |\n\
                 | a | 10 | {start: 0, end: 20}  |\n\
                 | a | 21 | {start: 21, end: 31} |\n\
                 | b | 5  | {start: 5, end: 15}  |\n\
                 +---+----+----------------------+",
            )
            .build(),
        }
    }
}

fn session_struct(ts: &DataType) -> DataType {
    let bound = bound_type(ts);
    DataType::Struct(Fields::from(vec![
        Field::new("start", bound.clone(), true),
        Field::new("end", bound, true),
    ]))
}

impl WindowUDFImpl for SessionWindow {
    fn name(&self) -> &str {
        "session_window"
    }

    fn simplify(&self) -> Option<WindowFunctionSimplification> {
        Some(reject_modifiers("session_window"))
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_time_and_durations(
            "session_window",
            &["session_window(timestamp | date | int64, duration)"],
            arg_types,
            1..=1,
        )
    }

    fn field(&self, field_args: WindowUDFFieldArgs) -> Result<FieldRef> {
        let ts = field_args
            .get_input_field(0)
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Int64);
        Ok(Arc::new(Field::new(
            field_args.name(),
            session_struct(&ts),
            true,
        )))
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        if args.ignore_nulls() {
            return plan_err!("session_window: IGNORE NULLS is not supported");
        }
        let gap = match literal(1, args.input_exprs()) {
            Constant::Absent => {
                return plan_err!(
                    "session_window: argument `gap`: expected a duration, found no argument"
                )
            }
            Constant::Literal(v) => Param::Known(duration_nanos("session_window", "gap", v)?),
            Constant::Deferred(i) => Param::FromColumn(i),
        };
        Ok(Box::new(SessionEvaluator { gap }))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&self.doc)
    }
}

#[derive(Debug)]
struct SessionEvaluator {
    gap: Param<i64>,
}

impl PartitionEvaluator for SessionEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], _num_rows: usize) -> Result<ArrayRef> {
        let gap = self.gap.resolve("session_window", "gap", values, |v| {
            duration_nanos("session_window", "gap", v)
        })?;
        let sessions =
            window::session_window(None, values[0].as_ref(), gap, 1).map_err(kernel_error)?;
        Ok(Arc::new(sessions))
    }
}
