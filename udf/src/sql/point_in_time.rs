//! Point-in-time training sets on DataFusion [`DataFrame`]s, for embedders: the spine with
//! one column per feature, computed by [`crate::kernels::window::point_in_time`].
//!
//! ```no_run
//! # async fn example(ctx: datafusion::prelude::SessionContext) -> datafusion::common::Result<()> {
//! use arrowfeat_udf::kernels::window::{parse_duration, PitAggregation};
//! use arrowfeat_udf::sql::point_in_time::{point_in_time_join, FeatureSpec, PointInTimeJoin};
//!
//! let labels = ctx.read_parquet("labels.parquet", Default::default()).await?;
//! let events = ctx.read_parquet("events.parquet", Default::default()).await?;
//! let five_minutes = parse_duration("example", "period", "5m").unwrap();
//! let join = PointInTimeJoin::new(&["user_id"], "label_time", &["user_id"], "event_time")
//!     .ttl(Some(parse_duration("example", "ttl", "30d").unwrap()))
//!     .feature(FeatureSpec::as_of("amount"))                  // column `amount`
//!     .feature(FeatureSpec::window("amount", PitAggregation::Sum, five_minutes)); // `amount_sum_5m`
//! let training_set = point_in_time_join(labels, events, &join).await?;
//! # Ok(()) }
//! ```
//!
//! Both sides are collected into memory (the events only with the columns the features
//! need), the kernel runs once over them, and the result is a [`DataFrame`] over one
//! in-memory batch in the spine's session, in the spine's row order.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StructArray};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::{provider_as_source, MemTable};
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::prelude::DataFrame;

use super::kernel_error;
use crate::kernels::window::{
    name_value_column, parse_duration, point_in_time, Closed, PitAggregation, PointInTimeFeature,
    PointInTimeOptions,
};
use crate::kernels::KernelError;

const FUNCTION: &str = "point_in_time";

/// One feature: `aggregation` of event column `column` over the trailing `period`
/// nanoseconds (`None`: every earlier event, within the TTL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSpec {
    pub column: String,
    pub aggregation: PitAggregation,
    pub period: Option<i64>,
    /// Output column name; `None`: [`PointInTimeFeature::name`] (`amount`,
    /// `amount_sum_5m`, ...).
    pub name: Option<String>,
}

impl FeatureSpec {
    /// The as-of value of `column`, named `column`.
    pub fn as_of(column: &str) -> Self {
        Self {
            column: column.to_string(),
            aggregation: PitAggregation::Last,
            period: None,
            name: None,
        }
    }

    /// `aggregation` of `column` over the trailing `period` ns, named
    /// `{column}_{aggregation}_{period}`.
    pub fn window(column: &str, aggregation: PitAggregation, period: i64) -> Self {
        Self {
            column: column.to_string(),
            aggregation,
            period: Some(period),
            name: None,
        }
    }

    /// The same feature under another output name.
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
}

/// How to join: key and time columns on each side, the features, and the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointInTimeJoin {
    /// Spine key columns (several: matched as one composite key); empty: no key.
    pub spine_keys: Vec<String>,
    pub spine_time: String,
    /// Event key columns, matched in order with `spine_keys` (same types).
    pub event_keys: Vec<String>,
    pub event_time: String,
    /// Event created (ingestion) time column breaking ties on `event_time`.
    pub event_created: Option<String>,
    pub features: Vec<FeatureSpec>,
    /// `threads == 0`: the session's `target_partitions`.
    pub options: PointInTimeOptions,
}

impl PointInTimeJoin {
    pub fn new(
        spine_keys: &[&str],
        spine_time: &str,
        event_keys: &[&str],
        event_time: &str,
    ) -> Self {
        Self {
            spine_keys: spine_keys.iter().map(|s| s.to_string()).collect(),
            spine_time: spine_time.to_string(),
            event_keys: event_keys.iter().map(|s| s.to_string()).collect(),
            event_time: event_time.to_string(),
            event_created: None,
            features: Vec::new(),
            options: PointInTimeOptions {
                threads: 0,
                ..Default::default()
            },
        }
    }

    pub fn feature(mut self, feature: FeatureSpec) -> Self {
        self.features.push(feature);
        self
    }

    pub fn created(mut self, column: &str) -> Self {
        self.event_created = Some(column.to_string());
        self
    }

    pub fn ttl(mut self, ttl: Option<i64>) -> Self {
        self.options.ttl = ttl;
        self
    }

    /// An event is visible only once created, too: its created time must not be after
    /// the spine time (Feast's `created_timestamp` rule). Needs [`Self::created`], and
    /// only as-of values (`last`) as features.
    pub fn created_cutoff(mut self, on: bool) -> Self {
        self.options.created_cutoff = on;
        self
    }

    pub fn closed(mut self, closed: Closed) -> Self {
        self.options.closed = closed;
        self
    }

    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = threads;
        self
    }

    /// The output column name of each feature.
    pub fn feature_names(&self) -> Vec<String> {
        self.features
            .iter()
            .map(|f| {
                f.name.clone().unwrap_or_else(|| {
                    PointInTimeFeature {
                        value: 0,
                        aggregation: f.aggregation,
                        period: f.period,
                    }
                    .name(&f.column)
                })
            })
            .collect()
    }
}

fn error(argument: &str, message: String) -> DataFusionError {
    kernel_error(KernelError::new(FUNCTION, argument, message))
}

impl FeatureSpec {
    /// Parses the text form shared by `arrowfeat training-set --feature` and the SQL
    /// table function: `COLUMN` (its as-of value), `COLUMN:AGG` (over every visible
    /// event) or `COLUMN:AGG:PERIOD`, each optionally followed by ` AS NAME`, e.g.
    /// `amount:sum:5m as spend_5m`. A column whose name holds `:` or ` as ` is written
    /// in backticks (`` `a:b`:sum:5m ``). Errors are plain sentences for the caller to
    /// prefix.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        const SHAPE: &str = "COLUMN, COLUMN:AGGREGATION or COLUMN:AGGREGATION:PERIOD, optionally followed by AS NAME (for example amount:sum:5m as spend_5m; a column name holding `:` in backticks)";
        let (quoted_column, trimmed) = match text.trim().strip_prefix('`') {
            Some(quoted) => {
                let end = quoted.find('`').ok_or_else(|| {
                    format!("expected a closing backtick after the column name, found `{text}`")
                })?;
                (Some(&quoted[..end]), &quoted[end + 1..])
            }
            None => (None, text.trim()),
        };
        let lower = trimmed.to_ascii_lowercase();
        if lower.ends_with(" as") || lower == "as" {
            return Err(format!("expected an output name after AS, found `{text}`"));
        }
        let (spec, name) = match split_alias(trimmed) {
            Some((spec, name)) => {
                if name.is_empty() || name.chars().any(char::is_whitespace) {
                    return Err(format!(
                        "expected one output name without spaces after AS, found `{text}`"
                    ));
                }
                (spec.trim_end(), Some(name.to_string()))
            }
            None => (trimmed, None),
        };
        let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
        let column = match quoted_column {
            // Nothing may stand between the closing backtick and the first `:`.
            Some(column) if parts[0].is_empty() => column,
            Some(_) => return Err(format!("expected {SHAPE}, found `{text}`")),
            None => parts[0],
        };
        if column.is_empty() || parts.len() > 3 {
            return Err(format!("expected {SHAPE}, found `{text}`"));
        }
        let aggregation = match parts.get(1) {
            None => PitAggregation::Last,
            Some(agg) => PitAggregation::parse(FUNCTION, "feature", agg).map_err(|e| e.message)?,
        };
        let period = match parts.get(2) {
            None => None,
            Some(period) => {
                let nanos = parse_duration(FUNCTION, "feature", period).map_err(|e| e.message)?;
                if nanos <= 0 {
                    return Err(format!("expected a period > 0, found `{period}`"));
                }
                Some(nanos)
            }
        };
        Ok(FeatureSpec {
            column: column.to_string(),
            aggregation,
            period,
            name,
        })
    }
}

/// A TTL as `arrowfeat training-set --ttl` and SQL `'ttl=...'` take it: a duration >= 0
/// (`30d`, `1h 30m`) or a bare `0`, which like Feast's 0 means no limit (`None`).
pub fn parse_ttl(function: &'static str, text: &str) -> std::result::Result<Option<i64>, String> {
    let nanos = if text.trim() == "0" {
        0
    } else {
        parse_duration(function, "ttl", text).map_err(|e| e.message)?
    };
    if nanos < 0 {
        return Err(format!("expected a duration >= 0, found `{text}`"));
    }
    Ok((nanos > 0).then_some(nanos))
}

/// `spec AS name` split at the last ` as ` (any case), if there is one.
fn split_alias(text: &str) -> Option<(&str, &str)> {
    let lower = text.to_ascii_lowercase();
    let at = lower.rfind(" as ")?;
    Some((&text[..at], text[at + 4..].trim()))
}

fn column_names(schema: &Schema) -> String {
    if schema.fields().is_empty() {
        return "none (an empty file has no columns)".to_string();
    }
    let names: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("`{}`", f.name()))
        .collect();
    names.join(", ")
}

/// Checks that `side` has every column in `columns`.
fn ensure_columns(schema: &Schema, side: &str, argument: &str, columns: &[&String]) -> Result<()> {
    for c in columns {
        if schema.field_with_name(c).is_err() {
            return Err(error(
                argument,
                format!(
                    "expected a column `{c}` in the {side}, found columns {}",
                    column_names(schema)
                ),
            ));
        }
    }
    Ok(())
}

/// The rows of `df` in one batch, in the order of its input (file order for files): read
/// on one partition, because rows read in parallel arrive interleaved, and both the
/// spine's order and the tie-break on equal event times (the last row wins) depend on it.
async fn collect(df: DataFrame) -> Result<RecordBatch> {
    let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
    let (mut state, plan) = df.into_parts();
    // Only this copy's configuration: the catalogs stay shared with the session.
    state.config_mut().options_mut().execution.target_partitions = 1;
    let batches = DataFrame::new(state, plan).collect().await?;
    Ok(concat_batches(&schema, &batches)?)
}

/// Whether two key types hold the same values in another representation: strings of
/// any layout, integers of any width, or a dictionary of either.
fn same_family(a: &DataType, b: &DataType) -> bool {
    fn family(t: &DataType) -> Option<u8> {
        match t {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(0),
            t if t.is_integer() => Some(1),
            DataType::Dictionary(_, value) => family(value),
            _ => None,
        }
    }
    family(a).is_some() && family(a) == family(b)
}

/// The plain type two keys of one family are compared as: strings as views (no offset
/// limit); integers as their own type when both sides have it, else as a type that holds
/// every value of both (Int64, UInt64, or Decimal128(20, 0) for UInt64 beside a signed
/// type), so that no key is lost to a cast.
fn comparison_key_type(spine: &DataType, events: &DataType) -> DataType {
    fn plain(t: &DataType) -> &DataType {
        match t {
            DataType::Dictionary(_, value) => plain(value),
            t => t,
        }
    }
    let (spine, events) = (plain(spine), plain(events));
    match (spine, events) {
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View, _) => DataType::Utf8View,
        (s, e) if s == e => s.clone(),
        (DataType::UInt64, e) | (e, DataType::UInt64) if e.is_signed_integer() => {
            DataType::Decimal128(20, 0)
        }
        (s, e) if s.is_unsigned_integer() && e.is_unsigned_integer() => DataType::UInt64,
        _ => DataType::Int64,
    }
}

/// `batch` with column `name` cast to `target`, which holds each of its values.
fn cast_column(
    batch: &RecordBatch,
    name: &str,
    target: &DataType,
    argument: &str,
) -> Result<RecordBatch> {
    let index = batch.schema().index_of(name)?;
    if batch.column(index).data_type() == target {
        return Ok(batch.clone());
    }
    let cast = datafusion::arrow::compute::cast(batch.column(index), target).map_err(|e| {
        error(
            argument,
            format!("cannot compare key `{name}` as {target}: {e}"),
        )
    })?;
    let mut columns = batch.columns().to_vec();
    columns[index] = cast;
    let mut fields: Vec<Arc<Field>> = batch.schema().fields().iter().cloned().collect();
    fields[index] = Arc::new(Field::new(name, target.clone(), true));
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// The key columns as one array: the column itself, or a struct of them (fields named
/// by position, so spine and event key names may differ).
fn key_array(batch: &RecordBatch, columns: &[String]) -> Result<Option<ArrayRef>> {
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|c| batch.column_by_name(c).expect("checked").clone())
        .collect();
    Ok(match arrays.len() {
        0 => None,
        1 => Some(arrays[0].clone()),
        _ => {
            let fields: Fields = arrays
                .iter()
                .enumerate()
                .map(|(i, a)| Field::new(format!("k{i}"), a.data_type().clone(), true))
                .collect();
            Some(Arc::new(StructArray::try_new(fields, arrays, None)?))
        }
    })
}

/// The distinct value columns of `join`'s features, in first-use order.
fn value_columns(join: &PointInTimeJoin) -> Vec<&String> {
    let mut values: Vec<&String> = Vec::new();
    for f in &join.features {
        if !values.contains(&&f.column) {
            values.push(&f.column);
        }
    }
    values
}

/// The event columns `join` reads: keys, time, created time and values, each once.
pub(crate) fn event_columns(join: &PointInTimeJoin) -> Vec<&str> {
    let mut unique: Vec<&str> = Vec::new();
    let needed = join
        .event_keys
        .iter()
        .chain([&join.event_time])
        .chain(join.event_created.iter())
        .chain(value_columns(join));
    for c in needed {
        if !unique.contains(&c.as_str()) {
            unique.push(c);
        }
    }
    unique
}

/// Checks `join` against the two sides' schemas: columns present, key types matching,
/// output names distinct. Everything the kernel would otherwise find only after reading.
pub(crate) fn check_join(spine: &Schema, events: &Schema, join: &PointInTimeJoin) -> Result<()> {
    if join.spine_keys.len() != join.event_keys.len() {
        return Err(error(
            "event_keys",
            format!(
                "expected {} key columns like `spine_keys` ({}), found {} ({})",
                join.spine_keys.len(),
                join.spine_keys.join(", "),
                join.event_keys.len(),
                join.event_keys.join(", ")
            ),
        ));
    }
    if join.features.is_empty() {
        return Err(error(
            "features",
            "expected at least one feature, found none".to_string(),
        ));
    }
    let spine_keys: Vec<&String> = join.spine_keys.iter().collect();
    ensure_columns(spine, "spine", "spine_keys", &spine_keys)?;
    ensure_columns(spine, "spine", "spine_time", &[&join.spine_time])?;
    let event_keys: Vec<&String> = join.event_keys.iter().collect();
    ensure_columns(events, "events", "event_keys", &event_keys)?;
    ensure_columns(events, "events", "event_time", &[&join.event_time])?;
    if let Some(created) = &join.event_created {
        ensure_columns(events, "events", "created", &[created])?;
    }
    ensure_columns(events, "events", "features", &value_columns(join))?;
    // An integer time is nanoseconds since 1970: beside a timestamp it would be compared
    // in another unit, silently, so both sides must be times of one kind.
    let time_kind = |t: &DataType| match t {
        DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 => "a timestamp",
        t if t.is_integer() => "an integer (nanoseconds)",
        _ => "other",
    };
    let st = spine.field_with_name(&join.spine_time)?.data_type();
    // A time column of the events (`what` it is, for `argument`) compared with the spine's.
    let same_kind = |argument: &str, what: &str, column: &str, condition: &str| {
        let et = events.field_with_name(column)?.data_type();
        if time_kind(st) != time_kind(et) && time_kind(st) != "other" && time_kind(et) != "other" {
            return Err(kernel_error(KernelError::wrong_type(
                FUNCTION,
                argument,
                format!(
                    "expected {what} `{column}` of the kind of spine time `{}` ({st}: {}){condition}, found {et} ({}); cast one side",
                    join.spine_time,
                    time_kind(st),
                    time_kind(et)
                ),
            )));
        }
        Ok(())
    };
    same_kind("event_time", "event time", &join.event_time, "")?;
    if let (Some(created), true) = (&join.event_created, join.options.created_cutoff) {
        // Compared with the spine times too (the kernel checks this as well, but knows the
        // columns only as its arguments).
        same_kind("created", "created time", created, " with created_cutoff")?;
        let ct = events.field_with_name(created)?.data_type();
        if time_kind(ct) == "other" && !ct.is_null() {
            return Err(kernel_error(KernelError::wrong_type(
                FUNCTION,
                "created",
                format!(
                    "expected created time `{created}` to be a timestamp, a date or an integer (nanoseconds) with created_cutoff, found {ct}"
                ),
            )));
        }
        if let Some(window) = join
            .features
            .iter()
            .find(|f| f.aggregation != PitAggregation::Last || f.period.is_some())
        {
            return Err(error(
                "features",
                format!(
                    "expected only as-of values with created_cutoff, found `{}` of `{}`{}",
                    window.aggregation.name(),
                    window.column,
                    window
                        .period
                        .map(|p| format!(" over {}", crate::kernels::window::format_nanos(p)))
                        .unwrap_or_default()
                ),
            ));
        }
    }
    for (s, e) in join.spine_keys.iter().zip(&join.event_keys) {
        let st = spine.field_with_name(s)?.data_type();
        let et = events.field_with_name(e)?.data_type();
        // A column of type Null (from a CSV file holding only its header) has no value to
        // compare: it matches nothing, whatever the other side's type.
        if st != et && !same_family(st, et) && !st.is_null() && !et.is_null() {
            return Err(kernel_error(KernelError::wrong_type(
                FUNCTION,
                "event_keys",
                format!(
                    "expected event key `{e}` of the type of spine key `{s}` ({st}), found {et}"
                ),
            )));
        }
    }
    let names = join.feature_names();
    for (i, name) in names.iter().enumerate() {
        if spine.field_with_name(name).is_ok() || names[..i].contains(name) {
            return Err(error(
                "features",
                format!("expected distinct output column names, found `{name}` twice (name the feature)"),
            ));
        }
    }
    Ok(())
}

/// Runs the kernel over one batch of each side (checked with [`check_join`]): the spine's
/// rows in order, with one column per feature. `options.threads` must be resolved (> 0).
pub(crate) fn join_batches(
    spine: &RecordBatch,
    events: &RecordBatch,
    join: &PointInTimeJoin,
    options: &PointInTimeOptions,
) -> Result<RecordBatch> {
    let column =
        |batch: &RecordBatch, name: &str| batch.column_by_name(name).expect("checked").clone();
    // Keys of the same family in other types (Parquet's Utf8View against CSV's Utf8, Int32
    // against Int64, a dictionary against its values) are compared as one plain type, so
    // equal values match. Only the comparison uses the cast keys: the spine's own columns
    // are returned as they are.
    let mut spine_for_keys = spine.clone();
    let mut events = events.clone();
    for (s, e) in join.spine_keys.iter().zip(&join.event_keys) {
        let st = spine.schema().field_with_name(s)?.data_type().clone();
        let et = events.schema().field_with_name(e)?.data_type().clone();
        if st != et {
            let target = comparison_key_type(&st, &et);
            spine_for_keys = cast_column(&spine_for_keys, s, &target, "spine_keys")?;
            events = cast_column(&events, e, &target, "event_keys")?;
        }
    }
    let spine_keys = key_array(&spine_for_keys, &join.spine_keys)?;
    let values = value_columns(join);
    let event_keys = key_array(&events, &join.event_keys)?;
    let event_values: Vec<ArrayRef> = values.iter().map(|c| column(&events, c)).collect();
    let features: Vec<PointInTimeFeature> = join
        .features
        .iter()
        .map(|f| PointInTimeFeature {
            value: values.iter().position(|c| *c == &f.column).expect("listed"),
            aggregation: f.aggregation,
            period: f.period,
        })
        .collect();
    // Times of type Null (a CSV file holding only its header) are read as the other
    // side's times: all null, so nothing is visible, as with an empty file.
    let spine_time = column(spine, &join.spine_time);
    let event_time = column(&events, &join.event_time);
    let time_type = [spine_time.data_type(), event_time.data_type()]
        .into_iter()
        .find(|t| !t.is_null())
        .unwrap_or(&DataType::Timestamp(TimeUnit::Nanosecond, None))
        .clone();
    let as_times = |times: ArrayRef| -> Result<ArrayRef> {
        match times.data_type().is_null() {
            true => Ok(datafusion::arrow::compute::cast(&times, &time_type)?),
            false => Ok(times),
        }
    };
    let (spine_time, event_time) = (as_times(spine_time)?, as_times(event_time)?);
    let created = match join.event_created.as_ref() {
        Some(c) => Some(as_times(column(&events, c))?),
        None => None,
    };
    let outputs = point_in_time(
        spine_keys.as_ref(),
        spine_time.as_ref(),
        event_keys.as_ref(),
        event_time.as_ref(),
        created.as_deref(),
        &event_values,
        &features,
        options,
    )
    .map_err(|e| kernel_error(name_join_columns(name_value_column(e, &values), join)))?;

    let spine_schema = spine.schema();
    let mut fields: Vec<Arc<Field>> = spine_schema.fields().iter().cloned().collect();
    let mut columns: Vec<ArrayRef> = spine.columns().to_vec();
    for (name, array) in join.feature_names().iter().zip(outputs) {
        fields.push(Arc::new(Field::new(name, array.data_type().clone(), true)));
        columns.push(array);
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        spine_schema.metadata().clone(),
    ));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// `error` of the kernel with its argument named as the join names it (`event_ts` is
/// `event_time`), and the column it read.
fn name_join_columns(mut error: KernelError, join: &PointInTimeJoin) -> KernelError {
    let (argument, columns) = match error.argument.as_str() {
        "spine_ts" => ("spine_time", vec![join.spine_time.clone()]),
        "event_ts" => ("event_time", vec![join.event_time.clone()]),
        "event_created" => ("created", join.event_created.iter().cloned().collect()),
        "spine_keys" => ("by", join.spine_keys.clone()),
        "event_keys" => ("by", join.event_keys.clone()),
        _ => return error,
    };
    let side = match error.argument.starts_with("spine") {
        true => "spine",
        false => "events",
    };
    error.argument = argument.to_string();
    let columns: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
    error.message = format!("{side} column {}: {}", columns.join(", "), error.message);
    error
}

/// The options with `threads == 0` resolved to the session's `target_partitions`.
pub(crate) fn resolved_options(
    join: &PointInTimeJoin,
    target_partitions: usize,
) -> PointInTimeOptions {
    let mut options = join.options;
    if options.threads == 0 {
        options.threads = target_partitions.max(1);
    }
    options
}

/// The spine with one column per feature of `join`, in the spine's row order.
pub async fn point_in_time_join(
    spine: DataFrame,
    events: DataFrame,
    join: &PointInTimeJoin,
) -> Result<DataFrame> {
    check_join(spine.schema().as_arrow(), events.schema().as_arrow(), join)?;
    let (state, _) = spine.clone().into_parts();
    let options = resolved_options(join, state.config().target_partitions());
    let events = collect(events.select_columns(&event_columns(join))?).await?;
    let spine = collect(spine).await?;
    let batch = join_batches(&spine, &events, join, &options)?;
    let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
    let plan =
        LogicalPlanBuilder::scan("point_in_time", provider_as_source(Arc::new(table)), None)?
            .build()?;
    Ok(DataFrame::new(state, plan))
}

#[cfg(test)]
#[path = "point_in_time_tests.rs"]
mod tests;
