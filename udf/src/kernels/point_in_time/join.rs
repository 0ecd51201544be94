//! The point-in-time join over two Arrow tables: the spine with one column per feature,
//! computed by [`point_in_time`](super::point_in_time) from the events. Every engine calls
//! this one function (DataFusion's table function and DataFrame API, `arrowfeat
//! training-set`, Python, PySpark and Feast), so key matching, type checks, output names
//! and tie-breaks are the same everywhere.
//!
//! - Keys match by value across representations: integers of any width (compared in a
//!   type that holds both sides), `Utf8` / `LargeUtf8` / `Utf8View`, and dictionaries of
//!   either; floats as SQL equality compares them (`-0.0` equals `0.0`, NaN equals NaN);
//!   several key columns as one composite key.
//! - The value columns are handed to the kernel in the events' column order, so that
//!   ties on event time are broken the same way whatever order the features are listed in.
//! - Errors name the argument as the Python function spells it (`by`, `spine_time`,
//!   `event_time`, `created`, `features`, `ttl`); other engines restate them in their
//!   own words.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};

use super::{
    name_value_column, point_in_time, PitAggregation, PointInTimeFeature, PointInTimeOptions,
};
use crate::kernels::window::{format_nanos, parse_duration, Closed};
use crate::kernels::{KernelError, Result};

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
    /// How errors name the arguments: as the caller's engine spells them.
    pub spelling: Spelling,
}

/// The words an engine uses for the join's arguments, so that an error names what the
/// user wrote: `by` in Python, `keys` in SQL, `--by` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spelling {
    /// Python's keyword arguments (`by`, `spine_time`, `features`, ...); also the Rust API's.
    #[default]
    Python,
    /// The SQL table function's arguments (`keys`, `features`, `'ttl=...'`, ...).
    Sql,
    /// `arrowfeat training-set`'s flags (`--by`, `--feature`, ...).
    Cli,
}

impl Spelling {
    /// `argument` (in the Python spelling) as this engine spells it.
    pub fn argument(self, argument: &str) -> String {
        let (sql, cli) = match argument {
            "by" => ("keys", "--by"),
            "spine_time" => ("spine_time", "--spine-time"),
            "event_time" => ("event_time", "--event-time"),
            "created" => ("created", "--created"),
            "created_cutoff" => ("created_cutoff", "--created-cutoff"),
            "features" => ("features", "--feature"),
            "ttl" => ("ttl", "--ttl"),
            "closed" => ("closed", "--closed"),
            other => (other, other),
        };
        match self {
            Self::Python => argument.to_string(),
            Self::Sql => sql.to_string(),
            Self::Cli => cli.to_string(),
        }
    }

    /// `error` with its argument as this engine spells it.
    pub fn restate(self, mut error: KernelError) -> KernelError {
        error.argument = self.argument(&error.argument);
        error
    }
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
            spelling: Spelling::Python,
        }
    }

    /// The same join, its errors naming arguments as `spelling` does.
    pub fn spelled(mut self, spelling: Spelling) -> Self {
        self.spelling = spelling;
        self
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

fn error(argument: &str, message: String) -> KernelError {
    KernelError::new(FUNCTION, argument, message)
}

fn arrow_error(argument: &str, what: &str, e: arrow::error::ArrowError) -> KernelError {
    error(argument, format!("{what}: {e}"))
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
/// (`30d`, `1h 30m`) or a bare `0` ([`ttl_from_nanos`]).
pub fn parse_ttl(function: &'static str, text: &str) -> std::result::Result<Option<i64>, String> {
    let nanos = if text.trim() == "0" {
        0
    } else {
        parse_duration(function, "ttl", text).map_err(|e| e.message)?
    };
    ttl_from_nanos(nanos).map_err(|_| format!("expected a duration >= 0, found `{text}`"))
}

/// A TTL of `nanos` nanoseconds as [`PointInTimeOptions::ttl`] takes it: 0, as in Feast,
/// means no limit (`None`); a negative TTL is an error.
pub fn ttl_from_nanos(nanos: i64) -> Result<Option<i64>> {
    if nanos < 0 {
        return Err(error(
            "ttl",
            format!("expected a duration >= 0, found {}", format_nanos(nanos)),
        ));
    }
    Ok((nanos > 0).then_some(nanos))
}

/// `spec AS name` split at the last ` as ` (any case), if there is one.
fn split_alias(text: &str) -> Option<(&str, &str)> {
    let lower = text.to_ascii_lowercase();
    let at = lower.rfind(" as ")?;
    Some((&text[..at], text[at + 4..].trim()))
}

/// The columns of `schema` for a message: the first 20, each name cut to 60 characters
/// (a file may hold thousands of columns, with names of any length).
fn column_names(schema: &Schema) -> String {
    const SHOWN: usize = 20;
    const NAME: usize = 60;
    let fields = schema.fields();
    if fields.is_empty() {
        return "none (an empty file has no columns)".to_string();
    }
    let mut names: Vec<String> = fields
        .iter()
        .take(SHOWN)
        .map(|f| match f.name().char_indices().nth(NAME) {
            Some((end, _)) => format!("`{}…`", &f.name()[..end]),
            None => format!("`{}`", f.name()),
        })
        .collect();
    if fields.len() > SHOWN {
        names.push(format!("... ({} in all)", fields.len()));
    }
    names.join(", ")
}

/// Checks that `side` has every column in `columns`.
fn ensure_columns(schema: &Schema, side: &str, argument: &str, columns: &[&String]) -> Result<()> {
    for c in columns {
        match schema.fields().iter().filter(|f| f.name() == *c).count() {
            0 => {
                return Err(error(
                    argument,
                    format!(
                        "expected a column `{c}` in the {side}, found columns {}",
                        column_names(schema)
                    ),
                ))
            }
            // Reading either one would be a guess.
            1 => {}
            n => {
                return Err(error(
                    argument,
                    format!(
                        "expected a name that the {side} gives one column, found `{c}` naming {n} columns; rename them apart"
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// The type of column `name`, which [`check_join`] found.
fn column_type<'a>(schema: &'a Schema, name: &str) -> &'a DataType {
    schema
        .field_with_name(name)
        .map(|f| f.data_type())
        .unwrap_or(&DataType::Null)
}

/// Whether a spine key of type `spine` can be matched with an event key of type
/// `events`: one type, text with text, bytes with bytes, integers with integers, or a side of no values
/// (a CSV column of only its header), which matches nothing.
pub fn comparable_keys(spine: &DataType, events: &DataType) -> bool {
    spine == events || same_family(spine, events) || spine.is_null() || events.is_null()
}

/// Whether two key types hold the same values in another representation: strings of
/// any layout, bytes of any layout, integers of any width, or a dictionary of either.
fn same_family(a: &DataType, b: &DataType) -> bool {
    fn family(t: &DataType) -> Option<u8> {
        match t {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(0),
            t if t.is_integer() => Some(1),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Some(2),
            DataType::Dictionary(_, value) => family(value),
            _ => None,
        }
    }
    family(a).is_some() && family(a) == family(b)
}

/// The plain type two keys of one family are compared as: strings and bytes as views
/// (no offset limit); integers as their own type when both sides have it, else as a type that holds
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
        (DataType::Binary | DataType::LargeBinary | DataType::BinaryView, _) => {
            DataType::BinaryView
        }
        (s, e) if s == e => s.clone(),
        (DataType::UInt64, e) | (e, DataType::UInt64) if e.is_signed_integer() => {
            DataType::Decimal128(20, 0)
        }
        (s, e) if s.is_unsigned_integer() && e.is_unsigned_integer() => DataType::UInt64,
        _ => DataType::Int64,
    }
}

/// `column` cast to `target`, which holds each of its values.
fn cast_key(column: &ArrayRef, name: &str, target: &DataType) -> Result<ArrayRef> {
    if column.data_type() == target {
        return Ok(column.clone());
    }
    arrow::compute::cast(column, target)
        .map_err(|e| arrow_error("by", &format!("cannot compare key `{name}` as {target}"), e))
}

/// The key columns as one array: the column itself, or a struct of them (fields named
/// by position, so spine and event key names may differ).
fn key_array(arrays: Vec<ArrayRef>) -> Result<Option<ArrayRef>> {
    Ok(match arrays.len() {
        0 => None,
        1 => Some(arrays[0].clone()),
        _ => {
            let fields: Fields = arrays
                .iter()
                .enumerate()
                .map(|(i, a)| Field::new(format!("k{i}"), a.data_type().clone(), true))
                .collect();
            Some(Arc::new(
                StructArray::try_new(fields, arrays, None)
                    .map_err(|e| arrow_error("by", "cannot combine the key columns", e))?,
            ))
        }
    })
}

/// The distinct value columns of `join`'s features in the events' column order (the
/// order in which ties on event time compare them, whatever the features' order).
fn value_columns<'a>(events: &Schema, join: &'a PointInTimeJoin) -> Vec<&'a String> {
    let mut values: Vec<&String> = Vec::new();
    for f in &join.features {
        if !values.contains(&&f.column) {
            values.push(&f.column);
        }
    }
    values.sort_by_key(|c| events.index_of(c).unwrap_or(usize::MAX));
    values
}

/// The event columns `join` reads: keys, time, created time and values, each once.
pub fn event_columns(join: &PointInTimeJoin) -> Vec<&str> {
    let mut unique: Vec<&str> = Vec::new();
    let needed = join
        .event_keys
        .iter()
        .chain([&join.event_time])
        .chain(join.event_created.iter())
        .chain(join.features.iter().map(|f| &f.column));
    for c in needed {
        if !unique.contains(&c.as_str()) {
            unique.push(c);
        }
    }
    unique
}

/// How a time column is compared: timestamps and dates as instants, integers as
/// nanoseconds since 1970.
fn time_kind(t: &DataType) -> &'static str {
    match t {
        DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 => "a timestamp",
        t if t.is_integer() => "an integer (nanoseconds)",
        _ => "other",
    }
}

/// Checks `join` against the two sides' schemas: columns present, key types matching,
/// output names distinct. Everything the kernel would otherwise find only after reading.
pub fn check_join(spine: &Schema, events: &Schema, join: &PointInTimeJoin) -> Result<()> {
    check_join_spelled(spine, events, join).map_err(|e| join.spelling.restate(e))
}

fn check_join_spelled(spine: &Schema, events: &Schema, join: &PointInTimeJoin) -> Result<()> {
    if join.spine_keys.len() != join.event_keys.len() {
        return Err(error(
            "by",
            format!(
                "expected as many event key columns as spine key columns ({}: {}), found {} ({})",
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
    ensure_columns(spine, "spine", "by", &spine_keys)?;
    ensure_columns(spine, "spine", "spine_time", &[&join.spine_time])?;
    let event_keys: Vec<&String> = join.event_keys.iter().collect();
    ensure_columns(events, "events", "by", &event_keys)?;
    ensure_columns(events, "events", "event_time", &[&join.event_time])?;
    if let Some(created) = &join.event_created {
        ensure_columns(events, "events", "created", &[created])?;
    }
    ensure_columns(events, "events", "features", &value_columns(events, join))?;
    // An integer time is nanoseconds since 1970: beside a timestamp it would be compared
    // in another unit, silently, so both sides must be times of one kind.
    let st = column_type(spine, &join.spine_time);
    // A time column of the events (`what` it is, for `argument`) compared with the spine's.
    let same_kind = |argument: &str, what: &str, column: &str, condition: &str| {
        let et = column_type(events, column);
        if time_kind(st) != time_kind(et) && time_kind(st) != "other" && time_kind(et) != "other" {
            return Err(KernelError::wrong_type(
                FUNCTION,
                argument,
                format!(
                    "expected {what} `{column}` of the kind of spine time `{}` ({st}: {}){condition}, found {et} ({}); cast one side",
                    join.spine_time,
                    time_kind(st),
                    time_kind(et)
                ),
            ));
        }
        Ok(())
    };
    same_kind("event_time", "event time", &join.event_time, "")?;
    if join.options.created_cutoff {
        let Some(created) = &join.event_created else {
            return Err(error(
                "created_cutoff",
                "expected a `created` column to cut off at, found none".to_string(),
            ));
        };
        // Compared with the spine times too.
        same_kind("created", "created time", created, " with created_cutoff")?;
        let ct = column_type(events, created);
        if time_kind(ct) == "other" && !ct.is_null() {
            return Err(KernelError::wrong_type(
                FUNCTION,
                "created",
                format!(
                    "expected created time `{created}` to be a timestamp, a date or an integer (nanoseconds) with created_cutoff, found {ct}"
                ),
            ));
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
                        .map(|p| format!(" over {}", format_nanos(p)))
                        .unwrap_or_default()
                ),
            ));
        }
    }
    for (s, e) in join.spine_keys.iter().zip(&join.event_keys) {
        let st = column_type(spine, s);
        let et = column_type(events, e);
        if !comparable_keys(st, et) {
            return Err(KernelError::wrong_type(
                FUNCTION,
                "by",
                format!(
                    "expected event key `{e}` of the type of spine key `{s}` ({st}), found {et}"
                ),
            ));
        }
    }
    let names = join.feature_names();
    for (i, name) in names.iter().enumerate() {
        if spine.field_with_name(name).is_ok() {
            return Err(error(
                "features",
                format!("expected output columns that are not spine columns, found `{name}` in both (name the feature)"),
            ));
        }
        if names[..i].contains(name) {
            return Err(error(
                "features",
                format!("expected distinct output column names, found `{name}` twice (name the feature)"),
            ));
        }
    }
    Ok(())
}

/// The spine with one column per feature of `join`, computed from the events visible at
/// each spine row's time, in the spine's row order. The spine's columns come back as
/// they are; feature columns are named by [`PointInTimeJoin::feature_names`]. A value
/// returned unchanged (`last`, `first`, `min`, `max` of the same type) keeps the event
/// field's metadata, so an extension type (a UUID, say) survives the join.
/// `join.options.threads` threads (0 and 1: the calling thread); the result does not
/// depend on it, nor on the order of the event rows.
pub fn point_in_time_join(
    spine: &RecordBatch,
    events: &RecordBatch,
    join: &PointInTimeJoin,
) -> Result<RecordBatch> {
    join_spelled(spine, events, join).map_err(|e| join.spelling.restate(e))
}

fn join_spelled(
    spine: &RecordBatch,
    events: &RecordBatch,
    join: &PointInTimeJoin,
) -> Result<RecordBatch> {
    let (spine_schema, events_schema) = (spine.schema(), events.schema());
    check_join_spelled(&spine_schema, &events_schema, join)?;
    let column = |batch: &RecordBatch, name: &str| {
        batch.column_by_name(name).cloned().ok_or_else(|| {
            error(
                "features",
                format!("expected a column `{name}`, found none"),
            )
        })
    };
    // Keys of the same family in other types (Parquet's Utf8View against CSV's Utf8, Int32
    // against Int64, a dictionary against its values) are compared as one plain type, so
    // equal values match. Only the comparison uses the cast keys: the spine's own columns
    // are returned as they are.
    let mut spine_keys = Vec::with_capacity(join.spine_keys.len());
    let mut event_keys = Vec::with_capacity(join.event_keys.len());
    for (s, e) in join.spine_keys.iter().zip(&join.event_keys) {
        let (sk, ek) = (column(spine, s)?, column(events, e)?);
        let target = match sk.data_type() == ek.data_type() {
            true => sk.data_type().clone(),
            false => comparison_key_type(sk.data_type(), ek.data_type()),
        };
        spine_keys.push(cast_key(&sk, s, &target)?);
        event_keys.push(cast_key(&ek, e, &target)?);
    }
    let spine_keys = key_array(spine_keys)?;
    let event_keys = key_array(event_keys)?;
    let values = value_columns(&events_schema, join);
    let event_values: Vec<ArrayRef> = values
        .iter()
        .map(|c| column(events, c))
        .collect::<Result<_>>()?;
    let features: Vec<PointInTimeFeature> = join
        .features
        .iter()
        .map(|f| PointInTimeFeature {
            value: values.iter().position(|c| *c == &f.column).unwrap_or(0),
            aggregation: f.aggregation,
            period: f.period,
        })
        .collect();
    // Times of type Null (a CSV file holding only its header) are read as the other
    // side's times: all null, so nothing is visible, as with an empty file.
    let spine_time = column(spine, &join.spine_time)?;
    let event_time = column(events, &join.event_time)?;
    let time_type = [spine_time.data_type(), event_time.data_type()]
        .into_iter()
        .find(|t| !t.is_null())
        .unwrap_or(&DataType::Timestamp(TimeUnit::Nanosecond, None))
        .clone();
    let as_times = |argument: &str, times: ArrayRef| -> Result<ArrayRef> {
        match times.data_type().is_null() {
            true => arrow::compute::cast(&times, &time_type)
                .map_err(|e| arrow_error(argument, "cannot read an empty time column", e)),
            false => Ok(times),
        }
    };
    let spine_time = as_times("spine_time", spine_time)?;
    let event_time = as_times("event_time", event_time)?;
    let created = match join.event_created.as_ref() {
        Some(c) => Some(as_times("created", column(events, c)?)?),
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
        &join.options,
    )
    .map_err(|e| name_join_columns(name_value_column(e, &values), join))?;

    let mut fields: Vec<Arc<Field>> = spine_schema.fields().iter().cloned().collect();
    let mut columns: Vec<ArrayRef> = spine.columns().to_vec();
    for ((name, array), feature) in join.feature_names().iter().zip(outputs).zip(&join.features) {
        let mut field = Field::new(name, array.data_type().clone(), true);
        let source = events_schema.field_with_name(&feature.column).ok();
        let unchanged = matches!(
            feature.aggregation,
            PitAggregation::Last
                | PitAggregation::First
                | PitAggregation::Min
                | PitAggregation::Max
        );
        if let Some(source) = source.filter(|s| unchanged && s.data_type() == array.data_type()) {
            field = field.with_metadata(source.metadata().clone());
        }
        fields.push(Arc::new(field));
        columns.push(array);
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        spine_schema.metadata().clone(),
    ));
    let options = RecordBatchOptions::new().with_row_count(Some(spine.num_rows()));
    RecordBatch::try_new_with_options(schema, columns, &options)
        .map_err(|e| arrow_error("features", "cannot assemble the result", e))
}

/// `error` of the kernel with its argument named as the join names it (`event_ts` is
/// `event_time`), and the column it read.
fn name_join_columns(mut error: KernelError, join: &PointInTimeJoin) -> KernelError {
    // `features[2].period`: the feature as the caller wrote it.
    let feature = error
        .argument
        .strip_prefix("features[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(i, _)| i.parse::<usize>().ok())
        .and_then(|i| join.features.get(i));
    if let Some(feature) = feature {
        error.argument = "features".to_string();
        error.message = format!("column `{}`: {}", feature.column, error.message);
        return error;
    }
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
