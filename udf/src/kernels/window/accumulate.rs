//! Sliding aggregates over values already in (group, time) order.
//!
//! Windows only ever grow at the back and shrink at the front, so each accumulator
//! supports `push` (the next row enters) and `evict` (the oldest row leaves), both O(1)
//! amortized: subtract-on-evict for counts, integer sums and float sums (exact, in fixed
//! point: see [`FloatSum`]), a monotonic deque for min / max.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, PrimitiveArray};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, Float64Type, Int64Type};

use super::exact_sum::integer_mean;
use super::groups::{gather, map_units};
use super::window_sum::{RunUnit, WindowSum};
use super::NumericValues;
use crate::kernels::nulls_from_validity;

/// Values in sorted order (borrowed when the input already is in order). `valid` is
/// `None` when no value is null.
pub(crate) enum SortedValues<'a> {
    Int(Cow<'a, [i64]>, Option<Vec<bool>>),
    Float(Cow<'a, [f64]>, Option<Vec<bool>>),
    Validity(Option<Vec<bool>>),
}

impl<'a> SortedValues<'a> {
    /// The values of the rows in `order` (all rows, in place, when `order` is `None`);
    /// `carried`: the values already in that order, as words (see `group_and_sort`).
    pub fn gather(
        values: &'a NumericValues,
        order: Option<&[u32]>,
        carried: Option<Vec<u64>>,
        threads: usize,
    ) -> Self {
        fn validity(nulls: Option<&NullBuffer>, order: Option<&[u32]>) -> Option<Vec<bool>> {
            let nulls = nulls.filter(|n| n.null_count() > 0)?;
            Some(match order {
                Some(order) => order.iter().map(|&r| nulls.is_valid(r as usize)).collect(),
                None => nulls.iter().collect(),
            })
        }
        fn in_order<'v, T: Word>(
            v: &'v [T],
            order: Option<&[u32]>,
            carried: Option<Vec<u64>>,
            threads: usize,
        ) -> Cow<'v, [T]> {
            match (order, carried) {
                // Same size and alignment: converted in place.
                (Some(order), Some(words)) if words.len() == order.len() => {
                    Cow::Owned(words.into_iter().map(T::from_word).collect())
                }
                (Some(order), _) => Cow::Owned(gather(v, order, threads)),
                (None, _) => Cow::Borrowed(v),
            }
        }
        match values {
            NumericValues::Int(a) => Self::Int(
                in_order(a.values(), order, carried, threads),
                validity(a.nulls(), order),
            ),
            NumericValues::Float(a) => Self::Float(
                in_order(a.values(), order, carried, threads),
                validity(a.nulls(), order),
            ),
            NumericValues::Validity(nulls) => Self::Validity(validity(nulls.as_ref(), order)),
        }
    }

    pub fn valid(&self) -> Valid<'_> {
        match self {
            SortedValues::Int(_, v) | SortedValues::Float(_, v) | SortedValues::Validity(v) => {
                Valid(v.as_deref())
            }
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Valid<'a>(Option<&'a [bool]>);

impl Valid<'_> {
    #[inline(always)]
    fn get(&self, i: usize) -> bool {
        self.0.is_none_or(|v| v[i])
    }
}

/// A sliding aggregate over positions of the sorted values.
pub(crate) trait Accumulator {
    type Out: ArrowPrimitiveType;
    /// The next position enters the window.
    fn push(&mut self, i: usize);
    /// The oldest position in the window leaves it.
    fn evict(&mut self, i: usize);
    /// Empties the window (between groups and sessions).
    fn clear(&mut self);
    /// Empties the window, and announces that every push until the next `begin` is one
    /// of `positions` (a group, or the part of one that a piece of work covers): an
    /// accumulator may prepare for them (see [`FloatSum`]). Pushing another position
    /// then panics.
    fn begin(&mut self, positions: std::ops::Range<usize>) {
        let _ = positions;
        self.clear();
    }
    /// The aggregate of the window; `None` is null.
    fn value(&mut self) -> Option<<Self::Out as ArrowPrimitiveType>::Native>;
    /// Whether an integer sum left the `Int64` range.
    fn overflowed(&self) -> bool {
        false
    }
}

pub(crate) type Native<A> = <<A as Accumulator>::Out as ArrowPrimitiveType>::Native;

/// Results under construction: one value (or null) per window.
pub(crate) struct Results<T: ArrowPrimitiveType> {
    pub values: Vec<T::Native>,
    pub valid: Vec<bool>,
}

impl<T: ArrowPrimitiveType> Results<T> {
    pub fn new() -> Self {
        Self {
            values: Vec::new(),
            valid: Vec::new(),
        }
    }

    #[inline(always)]
    pub fn push(&mut self, v: Option<T::Native>) {
        self.values.push(v.unwrap_or_default());
        self.valid.push(v.is_some());
    }

    pub fn into_array(self) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(
            ScalarBuffer::from(self.values),
            nulls_from_validity(self.valid),
        ))
    }
}

/// A 64-bit value as a raw word: values carried through the sort by key (see
/// `group_and_sort`), and results scattered through an `AtomicU64` by [`to_rows`].
pub(crate) trait Word: Copy + Default + Send + Sync {
    fn to_word(self) -> u64;
    fn from_word(word: u64) -> Self;
}

impl Word for i64 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_word(word: u64) -> Self {
        word as i64
    }
}

impl Word for f64 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_word(word: u64) -> Self {
        f64::from_bits(word)
    }
}

/// Per-position results (`values[p]`, `valid[p]`) as per-row results: position `p` goes
/// to row `order[p]` (rows no position names, those with a null time, are null), or to
/// row `p` without `order`. Threads scatter disjoint runs of positions into the shared
/// rows through relaxed atomic stores (plain stores on x86): one pass, with no inverse
/// permutation built first.
pub(crate) fn to_rows<T: ArrowPrimitiveType>(
    values: Vec<T::Native>,
    valid: Vec<bool>,
    order: Option<&[u32]>,
    rows: usize,
    threads: usize,
) -> ArrayRef
where
    T::Native: Word,
{
    let Some(order) = order else {
        return Arc::new(PrimitiveArray::<T>::new(
            ScalarBuffer::from(values),
            nulls_from_validity(valid),
        ));
    };
    let out: Vec<AtomicU64> = (0..rows).map(|_| AtomicU64::new(0)).collect();
    // Every row has a position (no null time) and every position a value: no nulls.
    let all_valid = order.len() == rows && valid.iter().all(|&v| v);
    let ok: Vec<AtomicBool> = if all_valid {
        Vec::new()
    } else {
        (0..rows).map(|_| AtomicBool::new(false)).collect()
    };
    let chunk = order.len().div_ceil(threads.max(1)).max(1);
    let units: Vec<_> = order
        .chunks(chunk)
        .zip(values.chunks(chunk).zip(valid.chunks(chunk)))
        .collect();
    map_units(units, |(rows_of, (values, valid))| {
        for (&row, &value) in rows_of.iter().zip(values) {
            out[row as usize].store(value.to_word(), AtomicOrdering::Relaxed);
        }
        if !all_valid {
            for (&row, &v) in rows_of.iter().zip(valid) {
                ok[row as usize].store(v, AtomicOrdering::Relaxed);
            }
        }
    });
    // Same size and alignment: collected in place.
    let out: Vec<T::Native> = out
        .into_iter()
        .map(|w| T::Native::from_word(w.into_inner()))
        .collect();
    let nulls = if all_valid {
        None
    } else {
        nulls_from_validity(ok.into_iter().map(AtomicBool::into_inner).collect())
    };
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(out), nulls))
}

/// Runs `body` with `make` bound to a factory (`Fn() -> impl Accumulator`, callable from
/// several threads) for `aggregation` over `values`.
macro_rules! with_accumulator {
    ($aggregation:expr, $values:expr, $make:ident => $body:expr) => {{
        use $crate::kernels::window::accumulate::*;
        use $crate::kernels::window::Aggregation as A;
        let values: &SortedValues = $values;
        match ($aggregation, values) {
            (A::Count, v) => {
                let valid = v.valid();
                let $make = move || Count::new(valid);
                $body
            }
            (A::Sum, SortedValues::Int(v, valid)) => {
                let $make = || IntSum::new(v, valid.as_deref());
                $body
            }
            (A::Mean, SortedValues::Int(v, valid)) => {
                let $make = || IntMean(IntSum::new(v, valid.as_deref()));
                $body
            }
            (A::Sum, SortedValues::Float(v, valid)) => {
                let $make = || FloatSum::new(v, valid.as_deref(), false);
                $body
            }
            (A::Mean, SortedValues::Float(v, valid)) => {
                let $make = || FloatSum::new(v, valid.as_deref(), true);
                $body
            }
            (A::Min, SortedValues::Int(v, valid)) => {
                let $make =
                    || Extreme::<arrow::datatypes::Int64Type, false>::new(v, valid.as_deref());
                $body
            }
            (A::Max, SortedValues::Int(v, valid)) => {
                let $make =
                    || Extreme::<arrow::datatypes::Int64Type, true>::new(v, valid.as_deref());
                $body
            }
            (A::Min, SortedValues::Float(v, valid)) => {
                let $make =
                    || Extreme::<arrow::datatypes::Float64Type, false>::new(v, valid.as_deref());
                $body
            }
            (A::Max, SortedValues::Float(v, valid)) => {
                let $make =
                    || Extreme::<arrow::datatypes::Float64Type, true>::new(v, valid.as_deref());
                $body
            }
            (_, SortedValues::Validity(_)) => unreachable!("only count reads validity alone"),
        }
    }};
}
pub(crate) use with_accumulator;

/// Number of non-null values.
pub(crate) struct Count<'a> {
    valid: Valid<'a>,
    n: i64,
}

impl<'a> Count<'a> {
    pub fn new(valid: Valid<'a>) -> Self {
        Self { valid, n: 0 }
    }
}

impl Accumulator for Count<'_> {
    type Out = Int64Type;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        self.n += self.valid.get(i) as i64;
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        self.n -= self.valid.get(i) as i64;
    }
    fn clear(&mut self) {
        self.n = 0;
    }
    #[inline(always)]
    fn value(&mut self) -> Option<i64> {
        Some(self.n)
    }
}

/// Exact integer sum in 128 bits.
pub(crate) struct IntSum<'a> {
    values: &'a [i64],
    valid: Valid<'a>,
    sum: i128,
    n: i64,
    overflow: bool,
}

impl<'a> IntSum<'a> {
    pub fn new(values: &'a [i64], valid: Option<&'a [bool]>) -> Self {
        Self {
            values,
            valid: Valid(valid),
            sum: 0,
            n: 0,
            overflow: false,
        }
    }
}

impl Accumulator for IntSum<'_> {
    type Out = Int64Type;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        let ok = self.valid.get(i);
        self.sum += if ok { self.values[i] as i128 } else { 0 };
        self.n += ok as i64;
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        let ok = self.valid.get(i);
        self.sum -= if ok { self.values[i] as i128 } else { 0 };
        self.n -= ok as i64;
    }
    fn clear(&mut self) {
        self.sum = 0;
        self.n = 0;
    }
    #[inline(always)]
    fn value(&mut self) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        match i64::try_from(self.sum) {
            Ok(v) => Some(v),
            Err(_) => {
                self.overflow = true;
                None
            }
        }
    }
    fn overflowed(&self) -> bool {
        self.overflow
    }
}

/// Mean of integers from their exact sum, correctly rounded.
pub(crate) struct IntMean<'a>(pub IntSum<'a>);

impl Accumulator for IntMean<'_> {
    type Out = Float64Type;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        self.0.push(i)
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        self.0.evict(i)
    }
    fn clear(&mut self) {
        self.0.clear()
    }
    #[inline(always)]
    fn value(&mut self) -> Option<f64> {
        (self.0.n > 0).then(|| integer_mean(self.0.sum, self.0.n as u64))
    }
}

/// Float sum (or mean) over a sliding window, exact until the final rounding.
///
/// The finite values are added to and subtracted from a [`WindowSum`], a fixed-point
/// integer in which leaving is exact: each window's result is its values' exact sum
/// correctly rounded (a mean: that sum divided by the count, rounded once), however
/// long the window slid and whatever passed through it before. NaN and infinities are
/// counted, not summed: the result is infinite only when the window holds an infinity or
/// its true sum is beyond `f64::MAX`.
pub(crate) struct FloatSum<'a> {
    values: &'a [f64],
    valid: Valid<'a>,
    mean: bool,
    pub(super) sum: WindowSum,
    n: i64,
    nan: i64,
    positive_infinity: i64,
    negative_infinity: i64,
    /// The positions in the window: they enter and leave in order, so they are a range.
    window: std::ops::Range<usize>,
    /// Whether they did so far (else the window is not known, and the sum not refitted).
    in_order: bool,
    /// One fixed point for every value [`Accumulator::begin`] announced, when they have
    /// one: the window's sum is then `run_sum` (in its units), kept by plain integer
    /// additions, and `sum` is not used.
    run: Option<RunUnit>,
    run_sum: i128,
    run_positions: std::ops::Range<usize>,
}

/// A sum moved out of the fixed point is refitted from the window's values after this
/// many additions and removals plus twice the window's length: amortised, O(1) each.
/// (Tiny in tests, so that small inputs refit too.)
const REFIT_AFTER: u64 = if cfg!(test) { 1 } else { 64 };

impl<'a> FloatSum<'a> {
    pub fn new(values: &'a [f64], valid: Option<&'a [bool]>, mean: bool) -> Self {
        Self {
            values,
            valid: Valid(valid),
            mean,
            sum: WindowSum::default(),
            n: 0,
            nan: 0,
            positive_infinity: 0,
            negative_infinity: 0,
            window: 0..0,
            in_order: true,
            run: None,
            run_sum: 0,
            run_positions: 0..0,
        }
    }

    /// Adds (`leave`: removes) position `i` of the announced run.
    #[inline(always)]
    fn run_enter(&mut self, unit: RunUnit, i: usize, leave: bool) {
        assert!(
            self.run_positions.contains(&i),
            "position {i} outside the run {:?} begun",
            self.run_positions
        );
        let term = unit.term(self.values[i]);
        // No overflow: the run's values fit one i128 together (RunUnit::of).
        if leave {
            self.run_sum -= term;
            self.n -= 1;
        } else {
            self.run_sum += term;
            self.n += 1;
        }
    }

    #[inline(always)]
    fn enter(&mut self, i: usize, leave: bool) {
        if !self.valid.get(i) {
            return;
        }
        let x = self.values[i];
        let delta = if leave { -1 } else { 1 };
        self.n += delta;
        if x.is_finite() {
            self.sum.add(x, leave);
        } else if x.is_nan() {
            self.nan += delta;
        } else if x > 0.0 {
            self.positive_infinity += delta;
        } else {
            self.negative_infinity += delta;
        }
    }
}

impl FloatSum<'_> {
    /// A sum moved to the general form by one value stays there while the window never
    /// empties; once enough has passed, it is rebuilt from the window's values, which
    /// may all fit a fixed point again (the outlier gone).
    #[inline(always)]
    fn refit_now_and_then(&mut self) {
        if self.sum.is_general() {
            self.refit();
        }
    }

    #[cold]
    fn refit(&mut self) {
        let window = self.window.clone();
        if self.in_order && self.sum.general_for(REFIT_AFTER + 2 * window.len() as u64) {
            let valid = self.valid;
            let values = self.values;
            self.sum.refit(
                window
                    .filter(move |&i| valid.get(i))
                    .map(move |i| values[i])
                    .filter(|v| v.is_finite()),
            );
        }
    }
}

impl Accumulator for FloatSum<'_> {
    type Out = Float64Type;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if let Some(unit) = self.run {
            return self.run_enter(unit, i, false);
        }
        // In order: the window's next position (or any, into an empty window).
        if self.window.is_empty() {
            self.window.start = i;
        }
        self.in_order &= self.window.is_empty() || i == self.window.end;
        self.window.end = i + 1;
        self.enter(i, false);
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        if let Some(unit) = self.run {
            return self.run_enter(unit, i, true);
        }
        // In order: the window's oldest position.
        self.in_order &= i == self.window.start && !self.window.is_empty();
        self.window.start = i + 1;
        self.enter(i, true);
    }
    fn clear(&mut self) {
        self.sum.clear();
        self.window = 0..0;
        self.n = 0;
        self.nan = 0;
        self.positive_infinity = 0;
        self.negative_infinity = 0;
        self.run_sum = 0;
    }
    fn begin(&mut self, positions: std::ops::Range<usize>) {
        self.clear();
        let all_valid = self
            .valid
            .0
            .is_none_or(|v| v[positions.clone()].iter().all(|&b| b));
        self.run = if all_valid {
            RunUnit::of(&self.values[positions.clone()])
        } else {
            None
        };
        self.run_positions = positions;
    }
    #[inline(always)]
    fn value(&mut self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        if let Some(unit) = self.run {
            return Some(if self.mean {
                unit.mean(self.run_sum, self.n as u64)
            } else {
                unit.value(self.run_sum)
            });
        }
        Some(
            if self.nan > 0 || (self.positive_infinity > 0 && self.negative_infinity > 0) {
                f64::NAN
            } else if self.positive_infinity > 0 {
                f64::INFINITY
            } else if self.negative_infinity > 0 {
                f64::NEG_INFINITY
            } else if self.mean {
                self.refit_now_and_then();
                self.sum.mean(self.n as u64)
            } else {
                self.refit_now_and_then();
                self.sum.value()
            },
        )
    }
}

/// Values with a total order for min / max. Floats order NaN above every number (as
/// Spark does) and -0.0 equal to 0.0.
pub(crate) trait Ordered: Copy {
    fn order(a: Self, b: Self) -> Ordering;
}

impl Ordered for i64 {
    #[inline(always)]
    fn order(a: Self, b: Self) -> Ordering {
        a.cmp(&b)
    }
}

impl Ordered for f64 {
    #[inline(always)]
    fn order(a: Self, b: Self) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            // -0.0 below 0.0, as DataFusion orders them: equal, the result's sign would
            // follow which came last.
            (false, false) => a.total_cmp(&b),
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
        }
    }
}

/// Sliding min (`MAX = false`) or max (`MAX = true`) by a monotonic deque of positions:
/// the front is the extreme of the window, and each value enters and leaves once.
pub(crate) struct Extreme<'a, T: ArrowPrimitiveType, const MAX: bool> {
    values: &'a [T::Native],
    valid: Valid<'a>,
    deque: VecDeque<usize>,
}

impl<'a, T: ArrowPrimitiveType, const MAX: bool> Extreme<'a, T, MAX>
where
    T::Native: Ordered,
{
    pub fn new(values: &'a [T::Native], valid: Option<&'a [bool]>) -> Self {
        Self {
            values,
            valid: Valid(valid),
            deque: VecDeque::new(),
        }
    }

    /// Whether `a` makes `b` useless: `a` arrived later and is at least as extreme.
    #[inline(always)]
    fn dominates(a: T::Native, b: T::Native) -> bool {
        let o = <T::Native as Ordered>::order(a, b);
        if MAX {
            o != Ordering::Less
        } else {
            o != Ordering::Greater
        }
    }
}

impl<T: ArrowPrimitiveType, const MAX: bool> Accumulator for Extreme<'_, T, MAX>
where
    T::Native: Ordered,
{
    type Out = T;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if !self.valid.get(i) {
            return;
        }
        let v = self.values[i];
        while let Some(&back) = self.deque.back() {
            if Self::dominates(v, self.values[back]) {
                self.deque.pop_back();
            } else {
                break;
            }
        }
        self.deque.push_back(i);
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        if self.deque.front() == Some(&i) {
            self.deque.pop_front();
        }
    }
    fn clear(&mut self) {
        self.deque.clear();
    }
    #[inline(always)]
    fn value(&mut self) -> Option<T::Native> {
        self.deque.front().map(|&i| self.values[i])
    }
}
