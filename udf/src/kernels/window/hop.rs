//! Hopping (sliding) windows: every window of length `size` starting at
//! `offset + k * step`, like Spark's `window(ts, size, step)`.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, ListArray, UInt32Array};
use arrow::buffer::OffsetBuffer;
use arrow::compute::take;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;

use super::accumulate::{with_accumulator, Accumulator, Results, SortedValues};
use super::duration::ensure_hop;
use super::groups::{group_and_sort, map_units, threads_for, Grouping};
use super::tumble::{out_of_range, window_start};
use super::{ensure_len, event_times, numeric_values, Aggregation, KernelError, Result};

/// Most windows `hop_windows` lists for one event (size / step).
pub const MAX_WINDOWS_PER_EVENT: i64 = 100_000;

/// Most windows one `hop_aggregate` call emits; beyond this, memory runs out first.
pub const MAX_WINDOWS: usize = 1 << 28;

/// Most window starts one `hop_windows` call lists (128 MiB of starts): rows times
/// windows per event may not exceed it, whatever the batch size.
pub const MAX_LISTED_WINDOWS: usize = 1 << 24;

/// `hop_windows(ts, size, step, offset)`: the starts of every window `[start, start + size)`
/// holding each event, ascending; `ceil(size / step)` or `floor(size / step)` of them.
/// Null times give a null list. Use `UNNEST` and `GROUP BY` on the result for hopping
/// aggregates in SQL, or [`hop_aggregate`] for the same in O(rows + windows).
pub fn hop_windows(ts: &dyn Array, size: i64, step: i64, offset: i64) -> Result<ListArray> {
    const NAME: &str = "hop_windows";
    ensure_hop(NAME, size, step)?;
    // In 128 bits: size + step overflows i64 for windows near 292 years.
    let (size128, step128) = (size as i128, step as i128);
    let per_event = (size128 + step128 - 1) / step128;
    if per_event > MAX_WINDOWS_PER_EVENT as i128 {
        return Err(KernelError::new(
            NAME,
            "step",
            format!(
                "expected at most {MAX_WINDOWS_PER_EVENT} windows per event, found size / step = {per_event}; \
                 use hop_aggregate, which emits only the windows that hold events"
            ),
        ));
    }
    let times = event_times(NAME, "ts", ts)?;
    let offset = offset.rem_euclid(step);
    let capacity = times
        .len()
        .saturating_mul(per_event as usize)
        .min(MAX_LISTED_WINDOWS);
    let mut starts = Vec::with_capacity(capacity);
    let mut offsets = Vec::with_capacity(times.len() + 1);
    offsets.push(0i32);
    for (row, &t) in times.nanos.iter().enumerate() {
        if times.is_valid(row) {
            let last = window_start(t, offset, step).ok_or_else(|| out_of_range(NAME, row, t))?;
            // Windows holding t start in (t - size, last], every `step`; 0 <= t - last < step.
            let count = ((size128 - (t as i128 - last as i128) + step128 - 1) / step128) as i64;
            let first = (count - 1)
                .checked_mul(step)
                .and_then(|span| last.checked_sub(span))
                .ok_or_else(|| out_of_range(NAME, row, t))?;
            if starts.len() + count as usize > MAX_LISTED_WINDOWS {
                return Err(KernelError::new(
                    NAME,
                    "ts",
                    format!(
                        "expected at most {MAX_LISTED_WINDOWS} windows in one call, found more by row {row} \
                         ({count} per event); use smaller batches, a larger step, or hop_aggregate"
                    ),
                ));
            }
            // first + k * step <= last for k < count: no overflow.
            starts.extend((0..count).map(|k| first + k * step));
        }
        // Below MAX_LISTED_WINDOWS, so within i32.
        offsets.push(starts.len() as i32);
    }
    let values = times.bounds_array(starts, None);
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), false));
    Ok(ListArray::new(
        field,
        OffsetBuffer::new(offsets.into()),
        values,
        times.nulls.clone(),
    ))
}

/// Schema of an aggregate result: `[key,] <start>, <end>, value`.
pub(crate) fn aggregate_schema(
    keys: Option<&ArrayRef>,
    bound_type: &DataType,
    bounds: [&str; 2],
    value_type: DataType,
) -> Arc<Schema> {
    let mut fields = Vec::new();
    if let Some(keys) = keys {
        fields.push(Field::new("key", keys.data_type().clone(), true));
    }
    fields.push(Field::new(bounds[0], bound_type.clone(), false));
    fields.push(Field::new(bounds[1], bound_type.clone(), false));
    fields.push(Field::new("value", value_type, true));
    Arc::new(Schema::new(fields))
}

/// Assembles an aggregate result from [`run_parts`]' parts (at least one): one batch per
/// part holding windows, or one empty batch when none does.
pub(crate) fn aggregate_batches(
    function: &'static str,
    keys: Option<&ArrayRef>,
    bound_type: &DataType,
    bounds: [&str; 2],
    parts: Vec<WindowColumns>,
) -> Result<Vec<RecordBatch>> {
    let value_type = parts[0].values.data_type().clone();
    let schema = aggregate_schema(keys, bound_type, bounds, value_type);
    let batches = parts
        .into_iter()
        .filter(|part| !part.starts.is_empty())
        .map(|part| aggregate_batch(function, keys, bound_type, &schema, part))
        .collect::<Result<Vec<_>>>()?;
    if batches.is_empty() {
        return Ok(vec![RecordBatch::new_empty(schema)]);
    }
    Ok(batches)
}

/// One part's windows as a batch of `schema`.
fn aggregate_batch(
    function: &'static str,
    keys: Option<&ArrayRef>,
    bound_type: &DataType,
    schema: &Arc<Schema>,
    part: WindowColumns,
) -> Result<RecordBatch> {
    let WindowColumns {
        key_rows,
        starts,
        ends,
        values: value,
    } = part;
    let mut columns = Vec::with_capacity(4);
    if let Some(keys) = keys {
        let key_rows = UInt32Array::from(key_rows);
        columns.push(take(keys.as_ref(), &key_rows, None).map_err(|e| {
            KernelError::new(
                function,
                "by",
                format!("cannot copy keys of type {}: {e}", keys.data_type()),
            )
        })?);
    }
    columns.push(super::bounds_array(bound_type, starts, None));
    columns.push(super::bounds_array(bound_type, ends, None));
    columns.push(value);
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(|e| {
        KernelError::new(
            function,
            "value",
            format!("cannot assemble the result: {e}"),
        )
    })
}

/// The batches as one (a copy only when there are several).
pub(crate) fn one_batch(
    function: &'static str,
    mut batches: Vec<RecordBatch>,
) -> Result<RecordBatch> {
    if batches.len() == 1 {
        return Ok(batches.remove(0));
    }
    let schema = batches[0].schema();
    arrow::compute::concat_batches(&schema, &batches).map_err(|e| {
        KernelError::new(
            function,
            "value",
            format!("cannot assemble the result: {e}"),
        )
    })
}

pub(crate) fn overflow_error(function: &'static str) -> KernelError {
    KernelError::new(
        function,
        "value",
        "expected window sums within the Int64 range; cast the values to double for a float sum"
            .to_string(),
    )
}

/// `hop_aggregate(keys, ts, values, size, step, offset, agg)`: for each key, every
/// non-empty window `[start, start + size)` with `start = offset + k * step`, and the
/// aggregate of the values of the events in it. Returns columns `key` (when `keys` is
/// given), `window_start`, `window_end`, `value`, ordered by key then window start.
///
/// Runs in O(rows + windows): two pointers move over each key's events, the aggregate
/// slides (see `accumulate`), and empty stretches of time are
/// jumped over, not walked. Keys are split over at most `threads` threads (0: one per
/// core); neither the result nor the window limit depends on it.
#[allow(clippy::too_many_arguments)]
pub fn hop_aggregate(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    size: i64,
    step: i64,
    offset: i64,
    aggregation: Aggregation,
    threads: usize,
) -> Result<RecordBatch> {
    let batches =
        hop_aggregate_batches(keys, ts, values, size, step, offset, aggregation, threads)?;
    one_batch("hop_aggregate", batches)
}

/// [`hop_aggregate`] as the batches the threads made, in order, without copying them into
/// one: the same rows, in chunks that depend on the number of threads.
#[allow(clippy::too_many_arguments)]
pub fn hop_aggregate_batches(
    keys: Option<&ArrayRef>,
    ts: &dyn Array,
    values: &dyn Array,
    size: i64,
    step: i64,
    offset: i64,
    aggregation: Aggregation,
    threads: usize,
) -> Result<Vec<RecordBatch>> {
    const NAME: &str = "hop_aggregate";
    ensure_hop(NAME, size, step)?;
    let times = event_times(NAME, "ts", ts)?;
    ensure_len(NAME, "value", values.len(), times.len())?;
    let values = numeric_values(NAME, "value", values, aggregation)?;
    let mut grouping = group_and_sort(NAME, keys, &times, values.words(), threads)?;
    let threads = threads_for(grouping.len(), threads);
    let carried = grouping.take_carried();
    let sorted = SortedValues::gather(&values, grouping.permutation(), carried, threads);
    let produced = AtomicUsize::new(0);
    let hop = Hop {
        size,
        step,
        offset: offset.rem_euclid(step),
        produced: &produced,
    };
    ensure_window_limit(&grouping, hop)?;
    let pieces = pieces(&grouping, hop);
    let runs = runs_of_pieces(&pieces, threads);
    let parts = with_accumulator!(aggregation, &sorted, make => run_parts(NAME, runs, Some(size), make, |acc, run| {
        hop_windows_of(acc, &grouping, &pieces[run], hop)
    }))?;
    // Exact, after the parts: the early stops above only ever fire when this would.
    if parts.iter().map(|p| p.starts.len()).sum::<usize>() > MAX_WINDOWS {
        return Err(too_many_windows());
    }
    aggregate_batches(
        NAME,
        keys,
        &times.bound_type,
        ["window_start", "window_end"],
        parts,
    )
}

fn too_many_windows() -> KernelError {
    KernelError::new(
        "hop_aggregate",
        "step",
        format!("expected at most {MAX_WINDOWS} windows, found more; use a larger step or fewer rows per call"),
    )
}

#[derive(Clone, Copy)]
struct Hop<'a> {
    size: i64,
    step: i64,
    offset: i64,
    /// Windows made so far by every part, counted in blocks: the limit is on the whole
    /// call, whatever the number of threads.
    produced: &'a AtomicUsize,
}

/// Windows a part makes before adding them to the shared count.
const COUNT_BLOCK: usize = 4096;

/// Windows (or sessions) of a run of groups: the key row, bounds and aggregate of each.
/// Key rows are kept only when there are keys, and ends only when windows differ in
/// length (sessions): hopping windows all end at start + size.
pub(crate) struct Windows<T: arrow::datatypes::ArrowPrimitiveType> {
    pub key_rows: Option<Vec<u32>>,
    pub starts: Vec<i64>,
    pub ends: Option<Vec<i64>>,
    pub results: Results<T>,
}

impl<T: arrow::datatypes::ArrowPrimitiveType> Windows<T> {
    pub fn new(keys: bool, ends: bool) -> Self {
        Self {
            key_rows: keys.then(Vec::new),
            starts: Vec::new(),
            ends: ends.then(Vec::new),
            results: Results::new(),
        }
    }

    pub fn reserve(&mut self, windows: usize) {
        if let Some(k) = &mut self.key_rows {
            k.reserve(windows);
        }
        self.starts.reserve(windows);
        if let Some(e) = &mut self.ends {
            e.reserve(windows);
        }
        self.results.values.reserve(windows);
        self.results.valid.reserve(windows);
    }

    #[inline(always)]
    pub fn push(&mut self, key_row: u32, start: i64, end: i64, value: Option<T::Native>) {
        if let Some(k) = &mut self.key_rows {
            k.push(key_row);
        }
        self.starts.push(start);
        if let Some(e) = &mut self.ends {
            e.push(end);
        }
        self.results.push(value);
    }
}

/// The windows of one part, with the aggregate as an array.
pub(crate) struct WindowColumns {
    pub key_rows: Vec<u32>,
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub values: ArrayRef,
}

/// Runs `each` with a fresh accumulator from `make` over each unit of work (runs of
/// groups, or of pieces of groups), one thread per unit, and gives each unit's windows
/// as columns, in unit order: not concatenated, since copying every window's start, end
/// and value once more cost more than making them (the result is a table of chunks).
/// `size` gives the ends of fixed-length windows. An integer sum outside Int64 is an
/// error of `function`.
pub(crate) fn run_parts<A: Accumulator, U: Send>(
    function: &'static str,
    units: Vec<U>,
    size: Option<i64>,
    make: impl Fn() -> A + Sync,
    each: impl Fn(&mut A, U) -> Result<Windows<A::Out>> + Sync,
) -> Result<Vec<WindowColumns>> {
    let part = |unit: U| {
        let mut acc = make();
        let windows = each(&mut acc, unit)?;
        if acc.overflowed() {
            return Err(overflow_error(function));
        }
        // Each window's end was checked to fit i64 when the window was made.
        let ends = windows.ends.unwrap_or_else(|| {
            let size = size.unwrap_or(0);
            windows.starts.iter().map(|s| s + size).collect()
        });
        Ok(WindowColumns {
            key_rows: windows.key_rows.unwrap_or_default(),
            starts: windows.starts,
            ends,
            values: windows.results.into_array(),
        })
    };
    if units.is_empty() {
        // No work: one empty part, so that the result still has its types.
        return Ok(vec![WindowColumns {
            key_rows: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
            values: Results::<A::Out>::new().into_array(),
        }]);
    }
    map_units(units, part).into_iter().collect()
}

/// Events of one key that a piece of it covers before the next piece starts.
const PIECE_EVENTS: usize = if cfg!(test) { 8 } else { 1 << 16 };

/// Windows of one group starting in `[from, to)` (`None`: no bound), made from its events
/// `events` (those before `from` cannot be in them). Every piece starts from an empty
/// window, and the pieces come from the data alone, so the results (float sums included)
/// do not depend on which thread makes which piece.
#[derive(Clone, Debug)]
struct Piece {
    group: usize,
    events: Range<usize>,
    from: Option<i64>,
    to: Option<i64>,
    /// Events from this piece's start to the next one's, for balancing threads.
    work: usize,
}

/// Each group as one piece, or a large group (one dense key, say) cut every
/// [`PIECE_EVENTS`] events at a window start, so that its windows can be made on several
/// threads.
fn pieces(grouping: &Grouping<'_>, hop: Hop<'_>) -> Vec<Piece> {
    let ts = &grouping.ts[..];
    let mut out = Vec::new();
    for group in 0..grouping.bounds.len() - 1 {
        let range = grouping.bounds[group]..grouping.bounds[group + 1];
        if range.is_empty() {
            continue;
        }
        let mut piece = Piece {
            group,
            events: range.clone(),
            from: None,
            to: None,
            work: 0,
        };
        let mut cut = range.start + PIECE_EVENTS;
        while cut < range.end {
            // Windows starting at or after the start of the window around ts[cut] go to
            // the next piece, which needs only the events from that start on. It pushes
            // again the events of the window it starts with: cut only where a piece spans
            // at least four window sizes, so that this costs at most a quarter more.
            let since = piece.from.unwrap_or(ts[range.start]) as i128;
            let next = window_start(ts[cut], hop.offset, hop.step)
                .filter(|&s| s as i128 - since >= 4 * hop.size as i128);
            if let Some(start) = next {
                let events = &ts[piece.events.clone()];
                let first = piece.events.start + events.partition_point(|&t| t < start);
                let window_end = start as i128 + hop.size as i128;
                let again = events.partition_point(|&t| (t as i128) < window_end);
                piece.to = Some(start);
                // Its own events, and those it pushes for windows the next piece makes.
                piece.work = again;
                out.push(piece.clone());
                piece = Piece {
                    group,
                    events: first..range.end,
                    from: Some(start),
                    to: None,
                    work: 0,
                };
            }
            cut += PIECE_EVENTS;
        }
        piece.work = piece.events.len();
        out.push(piece);
    }
    out
}

/// The pieces split into at most `threads` runs of consecutive pieces with about the same
/// work.
fn runs_of_pieces(pieces: &[Piece], threads: usize) -> Vec<Range<usize>> {
    let total: usize = pieces.iter().map(|p| p.work).sum();
    let target = total.div_ceil(threads.max(1)).max(1);
    let mut runs = Vec::new();
    let (mut first, mut work) = (0, 0);
    for (i, piece) in pieces.iter().enumerate() {
        work += piece.work;
        if work >= target || i + 1 == pieces.len() {
            runs.push(first..i + 1);
            (first, work) = (i + 1, 0);
        }
    }
    runs
}

/// Refuses, before any window is built, a call that would make more than
/// [`MAX_WINDOWS`] windows (one event with a day-long window and a 1 ns step makes 86
/// trillion: building them until the limit took 6 GiB). A cheap upper bound per key
/// usually settles it; otherwise the exact count: the union, over the key's events in
/// time order, of the window numbers `k` with `offset + k * step` in `(t - size, t]`.
fn ensure_window_limit(grouping: &Grouping<'_>, hop: Hop<'_>) -> Result<()> {
    let (size, step, offset) = (hop.size as i128, hop.step as i128, hop.offset as i128);
    let ts = &grouping.ts[..];
    let groups = || {
        grouping
            .bounds
            .windows(2)
            .map(|b| b[0]..b[1])
            .filter(|g| !g.is_empty())
    };
    let bound: i128 = groups().map(|g| window_bound(ts, &g, hop)).sum();
    if bound <= MAX_WINDOWS as i128 {
        return Ok(());
    }
    let mut total: i128 = 0;
    for g in groups() {
        let mut last = None::<i128>;
        for &t in &ts[g] {
            let t = t as i128;
            let first = (t - size - offset).div_euclid(step) + 1;
            let end = (t - offset).div_euclid(step);
            let from = last.map_or(first, |l| first.max(l + 1));
            total += (end - from + 1).max(0);
            last = Some(last.map_or(end, |l| l.max(end)));
        }
        if total > MAX_WINDOWS as i128 {
            return Err(too_many_windows());
        }
    }
    Ok(())
}

/// About how many windows the events `events` make (at most ceil(size / step) per event,
/// and at most one per step of their time span), to reserve room once rather than grow.
fn expected_windows(ts: &[i64], events: &Range<usize>, hop: Hop<'_>) -> usize {
    // Capped: a reservation is a guess, and the window limit is checked as windows come.
    window_bound(ts, events, hop).min(1 << 24) as usize
}

/// At most how many windows the events `events` (in time order) make: ceil(size / step)
/// per event, and one per step of their time span.
fn window_bound(ts: &[i64], events: &Range<usize>, hop: Hop<'_>) -> i128 {
    if events.is_empty() {
        return 0;
    }
    let per_event = (hop.size as i128 + hop.step as i128 - 1) / hop.step as i128;
    let span = ts[events.end - 1] as i128 - ts[events.start] as i128 + hop.size as i128;
    (events.len() as i128 * per_event).min(span / hop.step as i128 + 1)
}

with_bit_instructions! {
    /// The non-empty hopping windows of `pieces`.
    fn hop_windows_of<A: Accumulator>(
        acc: &mut A,
        grouping: &Grouping<'_>,
        pieces: &[Piece],
        hop: Hop<'_>,
    ) -> Result<Windows<A::Out>> = hop_windows_portable;
}

/// [`hop_windows_of`], in whichever build it chose.
#[inline(always)]
fn hop_windows_portable<A: Accumulator>(
    acc: &mut A,
    grouping: &Grouping<'_>,
    pieces: &[Piece],
    hop: Hop<'_>,
) -> Result<Windows<A::Out>> {
    const NAME: &str = "hop_aggregate";
    let Hop {
        size, step, offset, ..
    } = hop;
    let ts = &grouping.ts[..];
    // The first window holding t starts just after t - size; in 128 bits, as t - size
    // and its window start may be below i64::MIN when that first start is not.
    let first_start = |p: usize| -> Result<i64> {
        let t = ts[p];
        let low = t as i128 - size as i128;
        let start = low - (low - offset as i128).rem_euclid(step as i128) + step as i128;
        i64::try_from(start).map_err(|_| out_of_range(NAME, grouping.row(p) as usize, t))
    };
    let mut out = Windows::new(grouping.keyed, false);
    for piece in pieces {
        let end_of_group = grouping.bounds[piece.group + 1];
        let group = piece.events.start..end_of_group;
        if group.is_empty() {
            continue;
        }
        // Only the events its windows can hold: before `to + size`.
        let until = piece.to.map_or(piece.events.end, |to| {
            let end = to as i128 + size as i128;
            piece.events.start + ts[piece.events.clone()].partition_point(|&t| (t as i128) < end)
        });
        out.reserve(expected_windows(ts, &(piece.events.start..until), hop));
        acc.begin(piece.events.start..until);
        let before_end = |start: i64| piece.to.is_none_or(|to| start < to);
        let key_row = grouping.row(grouping.bounds[piece.group]);
        let (mut left, mut right) = (group.start, group.start);
        let mut start = first_start(group.start)?.max(piece.from.unwrap_or(i64::MIN));
        while before_end(start) {
            while left < right && ts[left] < start {
                acc.evict(left);
                left += 1;
            }
            if left == right {
                if right == group.end {
                    break;
                }
                // Nothing in the window: jump to the first window of the next event.
                start = start.max(first_start(right)?);
                if !before_end(start) {
                    break;
                }
            }
            let end = start.checked_add(size).ok_or_else(|| {
                out_of_range(
                    NAME,
                    grouping.row(right.min(group.end - 1)) as usize,
                    ts[right.min(group.end - 1)],
                )
            })?;
            while right < group.end && ts[right] < end {
                acc.push(right);
                right += 1;
            }
            out.push(key_row, start, end, acc.value());
            if out.starts.len().is_multiple_of(COUNT_BLOCK)
                && hop.produced.fetch_add(COUNT_BLOCK, Ordering::Relaxed) + COUNT_BLOCK
                    > MAX_WINDOWS
            {
                return Err(too_many_windows());
            }
            match start.checked_add(step) {
                Some(next) => start = next,
                None => break,
            }
        }
        acc.clear();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, AsArray, Float64Array, Int64Array};
    use arrow::datatypes::Int64Type;

    use super::*;
    use crate::kernels::window::groups::group_and_sort;

    fn hop_of(size: i64, step: i64) -> Hop<'static> {
        static PRODUCED: AtomicUsize = AtomicUsize::new(0);
        Hop {
            size,
            step,
            offset: 0,
            produced: &PRODUCED,
        }
    }

    /// Pieces of one dense key: cut only every four window sizes, so events pushed again
    /// by the next piece add at most a quarter; no cut when windows are wide.
    #[test]
    fn pieces_repeat_little_work() {
        let ts = Int64Array::from_iter_values(0..4000);
        let times = event_times("hop_aggregate", "ts", &ts).unwrap();
        let grouping = group_and_sort("hop_aggregate", None, &times, None, 1).unwrap();
        let wide = pieces(&grouping, hop_of(4000, 64));
        assert_eq!(wide.len(), 1, "{wide:?}");
        let narrow = pieces(&grouping, hop_of(16, 4));
        assert!(narrow.len() > 10, "{narrow:?}");
        let work: usize = narrow.iter().map(|p| p.work).sum();
        assert!(work <= 4000 * 5 / 4 + 16, "work {work} for 4000 events");
        for pair in narrow.windows(2) {
            assert_eq!(pair[0].to, pair[1].from);
            assert!(pair[1].from.unwrap() - pair[0].from.unwrap_or(0) >= 64);
        }
    }

    /// The first window of an event near i64::MIN is in range even when t - size is not.
    #[test]
    fn first_window_near_the_earliest_time() {
        let ts = Int64Array::from(vec![i64::MIN + 12]);
        let values = Int64Array::from(vec![1i64]);
        let batch = hop_aggregate(None, &ts, &values, 10, 10, 0, Aggregation::Sum, 1).unwrap();
        // Int64 times give Int64 bounds.
        let starts = batch.column(0).as_primitive::<Int64Type>();
        assert_eq!(starts.values().to_vec(), vec![i64::MIN + 8]);
        let sums = batch.column(2).as_primitive::<Int64Type>();
        assert_eq!(sums.value(0), 1);
        let listed = hop_windows(&ts, 10, 10, 0).unwrap();
        assert_eq!(listed.value(0).len(), 1);
    }

    /// A dense key cut into pieces gives the same windows on 1 and 3 threads, and the
    /// same as without cuts (integer sums are exact).
    #[test]
    fn pieces_give_the_same_windows_on_any_threads() {
        let ts = Int64Array::from_iter_values((0..3000).map(|i| i * 3 - 4500));
        let ints = Int64Array::from_iter_values((0..3000).map(|i| i % 17 - 8));
        let floats = Float64Array::from_iter_values((0..3000).map(|i| (i % 13) as f64 * 0.1));
        for (size, step) in [(10, 5), (30, 10), (7, 7), (200, 3)] {
            for values in [&ints as &dyn Array, &floats] {
                let one =
                    hop_aggregate(None, &ts, values, size, step, 1, Aggregation::Sum, 1).unwrap();
                let three =
                    hop_aggregate(None, &ts, values, size, step, 1, Aggregation::Sum, 3).unwrap();
                assert_eq!(one, three, "size {size}, step {step}");
            }
        }
    }
}
