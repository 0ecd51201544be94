//! Point-in-time features: for each row of a *spine* (key, time), the as-of value and
//! windowed aggregates of the same key's *events* visible at that time, as a training set
//! needs them (no event after the label's time leaks into its features).
//!
//! One call computes many features: as-of values of several columns and aggregates over
//! several periods (`5m`, `1h`, `7d`, ...) of several columns. The spine and the events are
//! grouped by key and sorted by time once; then, per period, two pointers sweep each key's
//! events while its spine times are walked in order, giving every spine row the range of
//! sorted events in its window. As-of, `first` and `last` values are read off those ranges
//! (one `take` per column); the other aggregates slide the window accumulators of the
//! rolling kernels (exact integer sums, exact float sums, monotonic min / max) over
//! them. O(spine + events) per feature after the sort.
//!
//! Threads split the sorted spine into blocks whose boundaries depend on the data only
//! (never on the number of threads), and each block rebuilds its window: results are the
//! same, bit for bit, for every `threads`, and one key holding most events is split over
//! all cores like any other.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, PrimitiveArray, UInt32Array};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType};

use crate::kernels::window::accumulate::{with_accumulator, Accumulator, Native, SortedValues};
use crate::kernels::window::duration::{ensure_positive, format_nanos};
use crate::kernels::window::groups::{
    map_units, matched_ids, sort_by_group, split_pair, threads_for,
};
use crate::kernels::window::hop::overflow_error;
use crate::kernels::window::{event_times, numeric_values, Aggregation, Closed, EventTimes};
use crate::kernels::{KernelError, Result};
use as_of::latest_indices;
use ties::TieOrder;

mod as_of;
pub mod join;
mod ties;

const FUNCTION: &str = "point_in_time";

/// What a point-in-time feature computes over the events in its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PitAggregation {
    /// The value of the latest event (the as-of value when the feature has no period).
    /// Ties on time go to the greatest created timestamp, then to the last event row.
    /// The value is returned as it is, null included (as Feast does).
    Last,
    /// The value of the earliest event in the window (ties: the smallest created
    /// timestamp, then the first event row), null included.
    First,
    Sum,
    Count,
    Mean,
    Min,
    Max,
}

impl PitAggregation {
    pub const NAMES: [&'static str; 7] = ["last", "first", "sum", "count", "mean", "min", "max"];

    /// Parses a name (`"asof"` is `last`, `"avg"` is `mean`); errors name `function` and
    /// `argument`.
    pub fn parse(function: &'static str, argument: &str, name: &str) -> Result<Self> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "last" | "asof" | "as_of" => Self::Last,
            "first" => Self::First,
            other => Self::from(Aggregation::parse(function, argument, other).map_err(|_| {
                KernelError::new(
                    function,
                    argument,
                    format!(
                        "expected one of {}, found \"{name}\"",
                        Self::NAMES.join(", ")
                    ),
                )
            })?),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Last => "last",
            Self::First => "first",
            Self::Sum => "sum",
            Self::Count => "count",
            Self::Mean => "mean",
            Self::Min => "min",
            Self::Max => "max",
        }
    }

    /// The window aggregate, or `None` for `last` / `first` (value picks).
    pub fn window_aggregation(self) -> Option<Aggregation> {
        match self {
            Self::Last | Self::First => None,
            Self::Sum => Some(Aggregation::Sum),
            Self::Count => Some(Aggregation::Count),
            Self::Mean => Some(Aggregation::Mean),
            Self::Min => Some(Aggregation::Min),
            Self::Max => Some(Aggregation::Max),
        }
    }

    /// The output type for values of `value_type`: the value's own type for `last` and
    /// `first`, else as the rolling aggregates ([`Aggregation::output_type`]).
    pub fn output_type(
        self,
        value_type: &arrow::datatypes::DataType,
    ) -> arrow::datatypes::DataType {
        match self.window_aggregation() {
            None => value_type.clone(),
            Some(a) => a.output_type(value_type),
        }
    }
}

impl From<Aggregation> for PitAggregation {
    fn from(a: Aggregation) -> Self {
        match a {
            Aggregation::Sum => Self::Sum,
            Aggregation::Count => Self::Count,
            Aggregation::Mean => Self::Mean,
            Aggregation::Min => Self::Min,
            Aggregation::Max => Self::Max,
        }
    }
}

/// One output column: `aggregation` of event value column `value` over the window
/// `(t - period, t]` ending at each spine time `t` (ends per [`PointInTimeOptions::closed`]),
/// or over every earlier event when `period` is `None` (for `Last`: the as-of value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PointInTimeFeature {
    /// Index into the event value columns.
    pub value: usize,
    pub aggregation: PitAggregation,
    /// Window length in nanoseconds (> 0), or `None` for no lower bound but the TTL.
    pub period: Option<i64>,
}

impl PointInTimeFeature {
    /// The as-of value of column `value`: its latest event at or before the spine time.
    pub fn as_of(value: usize) -> Self {
        Self {
            value,
            aggregation: PitAggregation::Last,
            period: None,
        }
    }

    /// `aggregation` of column `value` over the trailing `period` nanoseconds.
    pub fn window(value: usize, aggregation: PitAggregation, period: i64) -> Self {
        Self {
            value,
            aggregation,
            period: Some(period),
        }
    }

    /// The output column name for a value column called `column`: `column` for an
    /// as-of value, else `{column}_{aggregation}[_{period}]`, e.g. `amount_sum_5m`,
    /// `amount_count` (no period), `amount_last_1h`. Periods are written by
    /// [`format_nanos`] (`5m`, `1500ms`, `1d`).
    pub fn name(&self, column: &str) -> String {
        match (self.aggregation, self.period) {
            (PitAggregation::Last, None) => column.to_string(),
            (a, None) => format!("{column}_{}", a.name()),
            (a, Some(p)) => format!("{column}_{}_{}", a.name(), format_nanos(p)),
        }
    }
}

/// Options shared by every feature of a [`point_in_time`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointInTimeOptions {
    /// Window ends. The upper end (the spine time `t`) is included for `Right` (default)
    /// and `Both`: events at exactly `t` are visible (Feast's and DuckDB's `<=`); `Left`
    /// and `Neither` see only events strictly before `t` (Polars'
    /// `allow_exact_matches=False`). The lower end `t - period` is included for `Left`
    /// and `Both`, as in the rolling windows.
    pub closed: Closed,
    /// Time to live in nanoseconds (>= 0): events older than `t - ttl` are invisible to
    /// every feature; an event at exactly `t - ttl` is still visible, as in Feast.
    /// `None`: no limit. (Feast's `ttl=0` means no limit: pass `None` for it.)
    pub ttl: Option<i64>,
    /// Threads to use (`0` and `1`: the calling thread only). Results do not depend on it.
    pub threads: usize,
    /// Whether a null key matches a null key, as in pandas `merge` (and so in Feast's
    /// file / dask offline store). `false` (default): as SQL joins, DuckDB and Polars do,
    /// a key that is null (or, for a struct key, has a null field) matches nothing.
    pub null_keys_match: bool,
    /// Whether an event is visible only from its created time on (Feast's opt-in
    /// `filter_by_created_timestamp`): at spine time `t` it needs a created time that
    /// passes the upper end like the event time does (`<= t`, or `< t` for `Left` /
    /// `Neither`); an event without a created time is never visible. Needs
    /// `event_created`, and as-of values only (an error otherwise).
    pub created_cutoff: bool,
}

impl Default for PointInTimeOptions {
    fn default() -> Self {
        Self {
            closed: Closed::Right,
            ttl: None,
            threads: 1,
            null_keys_match: false,
            created_cutoff: false,
        }
    }
}

/// An error about value column `event_values[i]` restated for a caller who knows the
/// columns by name: argument `features`, the column named in the message.
pub fn name_value_column(mut error: KernelError, names: &[impl AsRef<str>]) -> KernelError {
    let index = error
        .argument
        .strip_prefix("event_values[")
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|i| i.parse::<usize>().ok());
    if let Some(name) = index.and_then(|i| names.get(i)) {
        error.argument = "features".to_string();
        error.message = format!("column `{}`: {}", name.as_ref(), error.message);
    }
    error
}

/// Point-in-time features of the events at each spine row, one output column per
/// feature, in spine row order.
///
/// - `spine_keys` / `event_keys`: the key of each row (any groupable Arrow type; several
///   key columns as one `StructArray`), both or neither, of the same type. `None`: every
///   row is one key.
/// - `spine_ts` / `event_ts`: times (any timestamp unit, dates or `Int64` nanoseconds).
///   Event rows with a null time are dropped; a spine row with a null time gets null in
///   every feature (`count` included).
/// - `event_created`: optional created (ingestion) times breaking ties on `event_ts`: the
///   greatest wins for `last` (null created times lose), as in Feast.
/// - `event_values`: the value columns features refer to by index.
///
/// A spine row whose key has no visible event gets null, except `count`, which is 0.
/// Integer sums are exact (an error if a window's sum leaves the `Int64` range); float
/// sums are exact until one final rounding.
#[allow(clippy::too_many_arguments)]
pub fn point_in_time(
    spine_keys: Option<&ArrayRef>,
    spine_ts: &dyn Array,
    event_keys: Option<&ArrayRef>,
    event_ts: &dyn Array,
    event_created: Option<&dyn Array>,
    event_values: &[ArrayRef],
    features: &[PointInTimeFeature],
    options: &PointInTimeOptions,
) -> Result<Vec<ArrayRef>> {
    validate(
        spine_keys,
        spine_ts,
        event_keys,
        event_ts,
        event_created,
        event_values,
        features,
        options,
    )?;
    let spine_times = event_times(FUNCTION, "spine_ts", spine_ts)?;
    let event_times_ = event_times(FUNCTION, "event_ts", event_ts)?;
    let created = event_created
        .map(|c| event_times(FUNCTION, "event_created", c))
        .transpose()?;
    let ties = TieOrder::new(FUNCTION, created.as_ref(), event_values)?;
    // At most what the caller asked for (0: the calling thread), and no more than one
    // thread per 128K rows: a huge `threads` once started a thread per row.
    let threads = threads_for(
        event_times_.len().max(spine_times.len()),
        options.threads.max(1),
    );
    let as_of_only = features
        .iter()
        .all(|f| f.aggregation == PitAggregation::Last && f.period.is_none());
    if as_of_only {
        // Only as-of values: no window needs the events in order.
        let indices = latest_indices(
            spine_keys,
            &spine_times,
            event_keys,
            &event_times_,
            created.as_ref(),
            &ties,
            options,
        )?;
        return features
            .iter()
            .map(|f| take_values(&event_values[f.value], f.value, &indices))
            .collect();
    }
    let sorted = sort_both(
        spine_keys,
        &spine_times,
        event_keys,
        &event_times_,
        &ties,
        options.null_keys_match,
        threads,
    )?;

    // Window ranges for each distinct period, computed once and shared by its features.
    let mut periods: Vec<Option<i64>> = Vec::new();
    for f in features {
        if !periods.contains(&f.period) {
            periods.push(f.period);
        }
    }
    let windows: HashMap<Option<i64>, Windows> = periods
        .iter()
        .map(|&period| {
            let window = WindowSpec {
                period,
                ttl: options.ttl,
                closed: options.closed,
            };
            (period, Windows::new(&sorted, window, threads))
        })
        .collect();

    let spine_rows = spine_ts.len();
    let spine_valid = |row: usize| spine_times.is_valid(row);
    let mut out: Vec<Option<ArrayRef>> = vec![None; features.len()];

    // Value picks: one index array per (period, first/last), one `take` per feature.
    let mut picks: HashMap<(Option<i64>, PitAggregation), UInt32Array> = HashMap::new();
    for (i, f) in features.iter().enumerate() {
        if f.aggregation.window_aggregation().is_some() {
            continue;
        }
        let indices = picks.entry((f.period, f.aggregation)).or_insert_with(|| {
            pick_indices(
                &sorted,
                &windows[&f.period],
                f.aggregation == PitAggregation::Last,
                spine_rows,
            )
        });
        out[i] = Some(take_values(&event_values[f.value], f.value, indices)?);
    }
    drop(picks);

    // Aggregates, one value column at a time: its values are put in sorted event order
    // once and shared by its features.
    for (column, event_column) in event_values.iter().enumerate() {
        let mine: Vec<usize> = (0..features.len())
            .filter(|&i| {
                features[i].value == column
                    && features[i].aggregation.window_aggregation().is_some()
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        let argument = format!("event_values[{column}]");
        // Numbers (widened) when any feature needs them, else validity only for `count`.
        let needs = mine
            .iter()
            .filter_map(|&i| features[i].aggregation.window_aggregation())
            .find(|a| *a != Aggregation::Count)
            .unwrap_or(Aggregation::Count);
        let values = numeric_values(FUNCTION, &argument, event_column.as_ref(), needs)?;
        let sorted_values = SortedValues::gather(&values, Some(&sorted.event_rows), None, threads);
        for &i in &mine {
            let f = features[i];
            let aggregation = f.aggregation.window_aggregation().expect("an aggregate");
            let windows = &windows[&f.period];
            let count = aggregation == Aggregation::Count;
            let array = with_accumulator!(aggregation, &sorted_values, make => {
                let (array, overflow) =
                    run(make, &sorted, windows, threads, spine_rows, count, &spine_valid);
                if overflow {
                    return Err(overflow_error(FUNCTION));
                }
                array
            });
            out[i] = Some(array);
        }
        drop(sorted_values);
        drop(values);
    }
    Ok(out
        .into_iter()
        .map(|a| a.expect("every feature computed"))
        .collect())
}

/// The values of event column `event_values[column]` at `indices` (null where null).
fn take_values(values: &ArrayRef, column: usize, indices: &UInt32Array) -> Result<ArrayRef> {
    let argument = || format!("event_values[{column}]");
    let taken = arrow::compute::take(values.as_ref(), indices, None).map_err(|e| {
        KernelError::new(FUNCTION, argument(), format!("cannot gather values: {e}"))
    })?;
    // Never a value where no event was visible: every null index must give a null.
    if let Some(missing) = indices.nulls().filter(|n| n.null_count() > 0) {
        let got = taken.logical_nulls();
        let leaked = missing
            .iter()
            .zip(0..)
            .any(|(valid, row)| !valid && got.as_ref().is_none_or(|g| g.is_valid(row)));
        if leaked {
            return Err(KernelError::wrong_type(
                FUNCTION,
                argument(),
                format!(
                    "expected a column that can hold a missing value, found {}: decode it to \
                     its value type first",
                    values.data_type()
                ),
            ));
        }
    }
    Ok(taken)
}

#[allow(clippy::too_many_arguments)]
fn validate(
    spine_keys: Option<&ArrayRef>,
    spine_ts: &dyn Array,
    event_keys: Option<&ArrayRef>,
    event_ts: &dyn Array,
    event_created: Option<&dyn Array>,
    event_values: &[ArrayRef],
    features: &[PointInTimeFeature],
    options: &PointInTimeOptions,
) -> Result<()> {
    let rows = |argument: &str, found: usize, like: &str, expected: usize| {
        if found != expected {
            return Err(KernelError::new(
                FUNCTION,
                argument,
                format!("expected {expected} rows like argument `{like}`, found {found} rows"),
            ));
        }
        Ok(())
    };
    match (spine_keys, event_keys) {
        (Some(s), Some(e)) => {
            rows("spine_keys", s.len(), "spine_ts", spine_ts.len())?;
            rows("event_keys", e.len(), "event_ts", event_ts.len())?;
            if s.data_type() != e.data_type() {
                return Err(KernelError::wrong_type(
                    FUNCTION,
                    "event_keys",
                    format!(
                        "expected keys of the type of `spine_keys` ({}), found {}",
                        s.data_type(),
                        e.data_type()
                    ),
                ));
            }
        }
        (None, None) => {}
        (Some(_), None) => {
            return Err(KernelError::new(
                FUNCTION,
                "event_keys",
                "expected event keys since `spine_keys` is given, found none",
            ))
        }
        (None, Some(_)) => {
            return Err(KernelError::new(
                FUNCTION,
                "spine_keys",
                "expected spine keys since `event_keys` is given, found none",
            ))
        }
    }
    if let Some(c) = event_created {
        rows("event_created", c.len(), "event_ts", event_ts.len())?;
    }
    for (i, v) in event_values.iter().enumerate() {
        rows(
            &format!("event_values[{i}]"),
            v.len(),
            "event_ts",
            event_ts.len(),
        )?;
        // A spine row without a visible event gets null; these types cannot be gathered
        // with a null (arrow's `take` gives a run-end-encoded column the run's value and a
        // union has no nulls of its own), so they would hand out a value from elsewhere.
        if matches!(
            v.data_type(),
            DataType::RunEndEncoded(..) | DataType::Union(..)
        ) {
            return Err(KernelError::wrong_type(
                FUNCTION,
                format!("event_values[{i}]"),
                format!(
                    "expected a column that can hold a missing value, found {}: decode it \
                     to its value type first",
                    v.data_type()
                ),
            ));
        }
    }
    let total = spine_ts.len() as u128 + event_ts.len() as u128;
    if total > u32::MAX as u128 {
        return Err(KernelError::new(
            FUNCTION,
            "event_ts",
            format!(
                "expected at most {} spine and event rows together per call, found {total}; \
                 split the input by key",
                u32::MAX
            ),
        ));
    }
    for (i, f) in features.iter().enumerate() {
        if f.value >= event_values.len() {
            return Err(KernelError::new(
                FUNCTION,
                format!("features[{i}].value"),
                format!(
                    "expected an index below {} (the number of event value columns), found {}",
                    event_values.len(),
                    f.value
                ),
            ));
        }
        if let Some(p) = f.period {
            ensure_positive(FUNCTION, &format!("features[{i}].period"), p)?;
        }
    }
    if options.created_cutoff {
        let Some(created) = event_created else {
            return Err(KernelError::new(
                FUNCTION,
                "event_created",
                "expected a created time column since `created_cutoff` is set, found none",
            ));
        };
        // Compared with the spine times now, so both must be times of one kind: an
        // integer (nanoseconds) beside a timestamp would compare in the wrong unit.
        let integer = |t: &DataType| matches!(t, DataType::Int64);
        if integer(created.data_type()) != integer(spine_ts.data_type()) {
            return Err(KernelError::wrong_type(
                FUNCTION,
                "event_created",
                format!(
                    "expected created times of the kind of `spine_ts` ({}) with `created_cutoff`, found {}",
                    spine_ts.data_type(),
                    created.data_type()
                ),
            ));
        }
        if let Some((i, f)) = features
            .iter()
            .enumerate()
            .find(|(_, f)| f.aggregation != PitAggregation::Last || f.period.is_some())
        {
            return Err(KernelError::new(
                FUNCTION,
                format!("features[{i}]"),
                format!(
                    "expected only as-of values with `created_cutoff`, found `{}`{}",
                    f.aggregation.name(),
                    f.period
                        .map(|p| format!(" over {}", format_nanos(p)))
                        .unwrap_or_default()
                ),
            ));
        }
    }
    if let Some(ttl) = options.ttl {
        if ttl < 0 {
            return Err(KernelError::new(
                FUNCTION,
                "ttl",
                format!("expected a duration >= 0, found {}", format_nanos(ttl)),
            ));
        }
    }
    Ok(())
}

/// Spine and event rows of the keys present on both sides, each sorted by (key, time);
/// events with equal times by [`TieOrder`].
struct SortedInput {
    /// Spine row and time of each sorted spine position.
    spine_rows: Vec<u32>,
    spine_ts: Vec<i64>,
    /// Event row and time of each sorted event position.
    event_rows: Vec<u32>,
    event_ts: Vec<i64>,
    /// Keys with spine rows (their events may be none), in group order.
    keys: Vec<KeyRanges>,
}

#[derive(Clone)]
struct KeyRanges {
    spine: Range<usize>,
    events: Range<usize>,
}

/// Numbers the spine's keys, finds the events' keys among them (events of other keys are
/// left out), then sorts each side by (key, time); events with equal times by `ties`.
fn sort_both(
    spine_keys: Option<&ArrayRef>,
    spine_times: &EventTimes<'_>,
    event_keys: Option<&ArrayRef>,
    event_times: &EventTimes<'_>,
    ties: &TieOrder<'_>,
    null_keys_match: bool,
    threads: usize,
) -> Result<SortedInput> {
    let (spine_ids, event_ids, groups) = match (spine_keys, event_keys) {
        (Some(s), Some(e)) => matched_ids(FUNCTION, s, e, null_keys_match)?,
        _ => (Vec::new(), Vec::new(), 1),
    };
    let (spine_rows, spine_ts, spine_bounds) =
        sort_by_group(&spine_ids, groups, spine_times, None, threads).into_parts();
    drop(spine_ids);
    let (mut event_rows, event_ts, event_bounds) =
        sort_by_group(&event_ids, groups, event_times, None, threads).into_parts();
    drop(event_ids);
    let mut keys = Vec::new();
    for g in 0..groups {
        let spine = spine_bounds[g]..spine_bounds[g + 1];
        let events = event_bounds[g]..event_bounds[g + 1];
        // A key without spine rows needs nothing; one without events keeps its (empty)
        // place, so that window bounds grow along the sorted spine.
        if spine.is_empty() {
            continue;
        }
        ties.sort_runs(&mut event_rows[events.clone()], &event_ts[events.clone()]);
        keys.push(KeyRanges { spine, events });
    }
    Ok(SortedInput {
        spine_rows,
        spine_ts,
        event_rows,
        event_ts,
        keys,
    })
}

#[derive(Clone, Copy)]
struct WindowSpec {
    period: Option<i64>,
    ttl: Option<i64>,
    closed: Closed,
}

impl WindowSpec {
    /// Whether an event at `e` is still in the future of spine time `t` (after the window).
    #[inline(always)]
    fn not_yet(&self, e: i64, t: i64) -> bool {
        e > t || (e == t && matches!(self.closed, Closed::Left | Closed::Neither))
    }

    /// Whether an event at `e` is too old for spine time `t` (before the window). In
    /// 128 bits: a window reaching below `i64::MIN` starts at the first event.
    #[inline(always)]
    fn too_old(&self, e: i64, t: i64) -> bool {
        let (e, t) = (e as i128, t as i128);
        let by_period = self.period.is_some_and(|p| {
            let oldest = t - p as i128;
            e < oldest || (e == oldest && matches!(self.closed, Closed::Right | Closed::Neither))
        });
        by_period || self.ttl.is_some_and(|ttl| e < t - ttl as i128)
    }
}

/// The window of each sorted spine position: sorted event positions `low..high`, and
/// the block boundaries where the sweeps rebuild their window.
struct Windows {
    low: Vec<u32>,
    high: Vec<u32>,
    /// Sorted spine positions starting a block, ascending, from 0 (empty without spine).
    blocks: Vec<usize>,
}

/// Least work (spine positions plus events entering and leaving) per block.
const MIN_BLOCK_WORK: usize = if cfg!(test) { 6 } else { 1 << 15 };

/// Fewest spine positions worth a thread of their own when finding windows.
const MIN_SPINE_PER_THREAD: usize = if cfg!(test) { 2 } else { 1 << 14 };

impl Windows {
    fn new(sorted: &SortedInput, window: WindowSpec, threads: usize) -> Self {
        let n = sorted.spine_rows.len();
        let mut low = vec![0u32; n];
        let mut high = vec![0u32; n];
        let threads = threads.min(n.div_ceil(MIN_SPINE_PER_THREAD)).max(1);
        let chunk = n.div_ceil(threads).max(1);
        let fill = |start: usize, low: &mut [u32], high: &mut [u32]| {
            let end = start + low.len();
            let first_key = sorted.keys.partition_point(|k| k.spine.end <= start);
            for key in sorted.keys[first_key..]
                .iter()
                .take_while(|k| k.spine.start < end)
            {
                let span = key.spine.start.max(start)..key.spine.end.min(end);
                let events = &sorted.event_ts[key.events.clone()];
                // Seeded by binary search, then two pointers.
                let t0 = sorted.spine_ts[span.start];
                let mut hi = events.partition_point(|&e| !window.not_yet(e, t0));
                let mut lo = events[..hi].partition_point(|&e| window.too_old(e, t0));
                for p in span {
                    let t = sorted.spine_ts[p];
                    while hi < events.len() && !window.not_yet(events[hi], t) {
                        hi += 1;
                    }
                    while lo < hi && window.too_old(events[lo], t) {
                        lo += 1;
                    }
                    low[p - start] = (key.events.start + lo) as u32;
                    high[p - start] = (key.events.start + hi) as u32;
                }
            }
        };
        if threads <= 1 || n <= chunk {
            fill(0, &mut low, &mut high);
        } else {
            std::thread::scope(|scope| {
                for (i, (l, h)) in low
                    .chunks_mut(chunk)
                    .zip(high.chunks_mut(chunk))
                    .enumerate()
                {
                    let fill = &fill;
                    scope.spawn(move || fill(i * chunk, l, h));
                }
            });
        }
        // Block boundaries from the data alone: a new block once the work since the last
        // boundary is at least MIN_BLOCK_WORK and four times the window to rebuild.
        let mut blocks = Vec::new();
        let mut start = 0;
        for p in 0..n {
            let work = |q: usize| q + high[q] as usize + low[q] as usize;
            let size = (high[p] - low[p]) as usize;
            if p == 0 || work(p) - work(start) >= MIN_BLOCK_WORK.max(4 * size) {
                blocks.push(p);
                start = p;
            }
        }
        Self { low, high, blocks }
    }

    /// Work up to sorted spine position `p`, for balancing threads.
    fn work(&self, p: usize) -> usize {
        if p == self.low.len() {
            return p + self.high.last().map_or(0, |&h| 2 * h as usize);
        }
        p + self.high[p] as usize + self.low[p] as usize
    }

    /// The blocks split into at most `parts` runs of consecutive blocks with about the
    /// same work: ranges of sorted spine positions.
    fn runs(&self, parts: usize) -> Vec<Range<usize>> {
        let n = self.low.len();
        if n == 0 {
            return Vec::new();
        }
        let total = self.work(n);
        let target = total.div_ceil(parts.max(1)).max(1);
        let mut runs = Vec::new();
        let mut start = 0;
        for &b in &self.blocks[1..] {
            if runs.len() + 1 < parts && self.work(b) - self.work(start) >= target {
                runs.push(start..b);
                start = b;
            }
        }
        runs.push(start..n);
        runs
    }

    /// The block starts in `run`.
    fn blocks_in(&self, run: &Range<usize>) -> &[usize] {
        let a = self.blocks.partition_point(|&b| b < run.start);
        let b = self.blocks.partition_point(|&b| b < run.end);
        &self.blocks[a..b]
    }
}

/// The event row to take for each spine row: the latest (`last`) or earliest event of
/// its window; null for an empty window, a null spine time or an unmatched key.
fn pick_indices(sorted: &SortedInput, windows: &Windows, last: bool, rows: usize) -> UInt32Array {
    let mut indices = vec![0u32; rows];
    let mut valid = vec![false; rows];
    for (p, &row) in sorted.spine_rows.iter().enumerate() {
        let (lo, hi) = (windows.low[p] as usize, windows.high[p] as usize);
        if lo < hi {
            let at = if last { hi - 1 } else { lo };
            indices[row as usize] = sorted.event_rows[at];
            valid[row as usize] = true;
        }
    }
    UInt32Array::new(ScalarBuffer::from(indices), Some(NullBuffer::from(valid)))
}

/// One aggregate for every spine row: blocks swept by up to `threads` threads, then
/// written to spine row order. `count` is 0 (not null) for a spine row with a time.
fn run<A: Accumulator>(
    make: impl Fn() -> A + Sync,
    sorted: &SortedInput,
    windows: &Windows,
    threads: usize,
    rows: usize,
    count: bool,
    spine_valid: &dyn Fn(usize) -> bool,
) -> (ArrayRef, bool) {
    let n = sorted.spine_rows.len();
    let mut values = vec![Native::<A>::default(); n];
    let mut valid = vec![false; n];
    // Each run owns its positions' slots.
    let runs = windows.runs(threads);
    let slices = split_pair(&mut values, &mut valid, runs.iter().map(|run| run.len()));
    let tasks: Vec<_> = runs
        .into_iter()
        .zip(slices)
        .map(|(run, (v, ok))| (run, v, ok))
        .collect();
    let overflow = map_units(tasks, |(run, v, ok)| {
        let mut acc = make();
        sweep(&mut acc, windows, run, v, ok);
        acc.overflowed()
    })
    .contains(&true);
    let mut out = vec![Native::<A>::default(); rows];
    let mut out_valid: Vec<bool> = if count {
        (0..rows).map(spine_valid).collect()
    } else {
        vec![false; rows]
    };
    for (p, &row) in sorted.spine_rows.iter().enumerate() {
        out[row as usize] = values[p];
        out_valid[row as usize] = valid[p];
    }
    let nulls = NullBuffer::from(out_valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    (
        Arc::new(PrimitiveArray::<A::Out>::new(
            ScalarBuffer::from(out),
            nulls,
        )),
        overflow,
    )
}

/// Slides `acc` over the windows of the spine positions `run` (whole blocks), writing
/// `values` / `valid` from `run.start`. Each block starts from an empty window, as does
/// any window that shares no event with the previous one.
fn sweep<A: Accumulator>(
    acc: &mut A,
    windows: &Windows,
    run: Range<usize>,
    values: &mut [<A::Out as ArrowPrimitiveType>::Native],
    valid: &mut [bool],
) {
    let blocks = windows.blocks_in(&run);
    for (i, &block) in blocks.iter().enumerate() {
        let end = blocks.get(i + 1).copied().unwrap_or(run.end);
        acc.clear();
        let (mut lo, mut hi) = (windows.low[block] as usize, windows.low[block] as usize);
        for p in block..end {
            let (low, high) = (windows.low[p] as usize, windows.high[p] as usize);
            if low >= hi {
                acc.clear();
                lo = low;
                hi = low;
            }
            while hi < high {
                acc.push(hi);
                hi += 1;
            }
            while lo < low {
                acc.evict(lo);
                lo += 1;
            }
            if let Some(v) = acc.value() {
                values[p - run.start] = v;
                valid[p - run.start] = true;
            }
        }
    }
}

#[cfg(test)]
mod tests;
