//! Sliding aggregates over values already in (group, time) order.
//!
//! Windows only ever grow at the back and shrink at the front, so each accumulator
//! supports `push` (the next row enters) and `evict` (the oldest row leaves), both O(1)
//! amortized: subtract-on-evict for counts and integer sums, two stacks for float sums
//! and means (see [`FloatSum`]), a monotonic deque for min / max.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, PrimitiveArray};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, Float64Type, Int64Type};

use super::groups::{gather, parallel_chunks};
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
    /// The values of the rows in `order` (all rows, in place, when `order` is `None`).
    pub fn gather(values: &'a NumericValues, order: Option<&[u32]>, threads: usize) -> Self {
        fn validity(nulls: Option<&NullBuffer>, order: Option<&[u32]>) -> Option<Vec<bool>> {
            let nulls = nulls.filter(|n| n.null_count() > 0)?;
            Some(match order {
                Some(order) => order.iter().map(|&r| nulls.is_valid(r as usize)).collect(),
                None => nulls.iter().collect(),
            })
        }
        fn in_order<'v, T: Copy + Default + Send + Sync>(
            v: &'v [T],
            order: Option<&[u32]>,
            threads: usize,
        ) -> Cow<'v, [T]> {
            match order {
                Some(order) => Cow::Owned(gather(v, order, threads)),
                None => Cow::Borrowed(v),
            }
        }
        match values {
            NumericValues::Int(a) => Self::Int(
                in_order(a.values(), order, threads),
                validity(a.nulls(), order),
            ),
            NumericValues::Float(a) => Self::Float(
                in_order(a.values(), order, threads),
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

/// Per-position results (`values[p]`, `valid[p]`) as per-row results: row `r` takes
/// position `positions[r]` (`u32::MAX`: null), or position `r` without `positions`.
/// A gather rather than a scatter, so that threads can share it.
pub(crate) fn to_rows<T: ArrowPrimitiveType>(
    values: Vec<T::Native>,
    valid: Vec<bool>,
    positions: Option<&[u32]>,
    rows: usize,
    threads: usize,
) -> ArrayRef {
    let Some(positions) = positions else {
        return Arc::new(PrimitiveArray::<T>::new(
            ScalarBuffer::from(values),
            nulls_from_validity(valid),
        ));
    };
    let mut out = vec![T::Native::default(); rows];
    parallel_chunks(threads, &mut out, positions, |dst, from| {
        for (d, &p) in dst.iter_mut().zip(from) {
            if p != u32::MAX {
                *d = values[p as usize];
            }
        }
    });
    // Every row has a position (no null time) and every position a value: no null
    // buffer, and no second pass over the rows to build one.
    if values.len() == rows && valid.iter().all(|&v| v) {
        return Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(out), None));
    }
    let mut ok = vec![false; rows];
    parallel_chunks(threads, &mut ok, positions, |dst, from| {
        for (d, &p) in dst.iter_mut().zip(from) {
            *d = p != u32::MAX && valid[p as usize];
        }
    });
    Arc::new(PrimitiveArray::<T>::new(
        ScalarBuffer::from(out),
        nulls_from_validity(ok),
    ))
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

/// Mean of integers from their exact sum.
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
        (self.0.n > 0).then(|| self.0.sum as f64 / self.0.n as f64)
    }
}

/// A sum that keeps the rounding error of every addition (Knuth's TwoSum, branch-free: a
/// data-dependent branch here mispredicts on values of mixed sizes) and adds it back, as
/// Kahan–Babuška–Neumaier summation does. Exact while no intermediate overflows.
#[derive(Clone, Copy, Default)]
struct TwoSum {
    sum: f64,
    compensation: f64,
}

impl TwoSum {
    #[inline(always)]
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        let x_part = t - self.sum;
        let error = (self.sum - (t - x_part)) + (x - x_part);
        self.compensation += error;
        self.sum = t;
    }

    #[inline(always)]
    fn total(&self) -> f64 {
        self.sum + self.compensation
    }
}

/// Finite values at least this large (2^512) are summed apart, scaled down by it: a
/// window of values near `f64::MAX` would otherwise overflow an intermediate sum to
/// infinity, and subtracting a value from infinity never brings the finite sum back.
const HUGE: f64 = f64::from_bits((1023 + 512) << 52);
/// 2^-512: scaling by a power of two is exact for these magnitudes.
const HUGE_INVERSE: f64 = f64::from_bits((1023 - 512) << 52);

/// The compensated sums of some finite values: those below 2^512 in magnitude, and those
/// at or above it scaled by 2^-512, so that neither can overflow.
#[derive(Clone, Copy, Default)]
struct Partial {
    ordinary: TwoSum,
    huge: TwoSum,
}

impl Partial {
    #[inline(always)]
    fn add(&mut self, x: f64) {
        if x.abs() < HUGE {
            self.ordinary.add(x);
        } else {
            self.huge.add(x * HUGE_INVERSE);
        }
    }

    /// The sums of both parts' values.
    #[inline(always)]
    fn combined(&self, other: &Partial) -> Partial {
        let mut out = *self;
        for (sum, part) in [
            (&mut out.ordinary, &other.ordinary),
            (&mut out.huge, &other.huge),
        ] {
            sum.add(part.sum);
            sum.compensation += part.compensation;
        }
        out
    }
}

/// Compensated float sum (or mean) over a sliding window, without subtraction.
///
/// Values never leave a sum by being subtracted: after `1e40` and `1e20` had passed
/// through a window, a running sum that subtracted them kept their rounding residue and
/// absorbed every later small value (a window of five 1.0 summed to 0.0). Instead the
/// window is two stacks, as in the classic FIFO aggregation: the newer events (the
/// "back") are summed as they come; the older ones (the "front") have their suffix sums
/// computed once, when the front runs empty and the back is turned into it. Each window's
/// sum is then one suffix sum plus the back's sum, each over the window's own values only,
/// so it is as exact as a compensated sum of those values, however long the window slid
/// and whatever passed through it before. Each event is added twice in all (O(1)
/// amortized). NaN and infinities are counted, not summed, and values of 2^512 and above
/// go to a second sum scaled by 2^-512: the result is infinite only when the window's
/// true sum is. Eviction must be in push order (a FIFO), as every window kernel does.
pub(crate) struct FloatSum<'a> {
    values: &'a [f64],
    valid: Valid<'a>,
    mean: bool,
    /// Whether the window is empty and its positions not yet set by a push.
    empty: bool,
    /// Next position to leave; the front holds `low..mid`, the back `mid..high`.
    low: usize,
    mid: usize,
    high: usize,
    /// `front[k]`: the sum of the values of `front_start + k..mid`.
    front: Vec<Partial>,
    front_start: usize,
    back: Partial,
    n: i64,
    nan: i64,
    positive_infinity: i64,
    negative_infinity: i64,
}

impl<'a> FloatSum<'a> {
    pub fn new(values: &'a [f64], valid: Option<&'a [bool]>, mean: bool) -> Self {
        Self {
            values,
            valid: Valid(valid),
            mean,
            empty: true,
            low: 0,
            mid: 0,
            high: 0,
            front: Vec::new(),
            front_start: 0,
            back: Partial::default(),
            n: 0,
            nan: 0,
            positive_infinity: 0,
            negative_infinity: 0,
        }
    }

    #[inline(always)]
    fn non_finite(&mut self, x: f64, delta: i64) {
        if x.is_nan() {
            self.nan += delta;
        } else if x > 0.0 {
            self.positive_infinity += delta;
        } else {
            self.negative_infinity += delta;
        }
    }

    /// The back becomes the front: the suffix sums of `low..high`, newest first.
    #[cold]
    fn turn(&mut self) {
        self.front.clear();
        self.front.resize(self.high - self.low, Partial::default());
        let mut suffix = Partial::default();
        for p in (self.low..self.high).rev() {
            let x = self.values[p];
            if self.valid.get(p) && x.is_finite() {
                suffix.add(x);
            }
            self.front[p - self.low] = suffix;
        }
        self.front_start = self.low;
        self.mid = self.high;
        self.back = Partial::default();
    }

    /// The sum of the window's finite values, or their mean when `divisor` is the count.
    #[inline(always)]
    fn finite_total(&self, divisor: Option<f64>) -> f64 {
        let window = if self.low < self.mid {
            self.front[self.low - self.front_start].combined(&self.back)
        } else {
            self.back
        };
        let divide = |x: f64| divisor.map_or(x, |d| x / d);
        let ordinary = divide(window.ordinary.total());
        let huge = window.huge.total();
        if huge == 0.0 {
            ordinary
        } else {
            // Dividing first keeps a mean of huge values finite; scaling back up is exact
            // unless the true result itself is beyond f64::MAX.
            divide(huge) * HUGE + ordinary
        }
    }
}

impl Accumulator for FloatSum<'_> {
    type Out = Float64Type;
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if self.empty {
            (self.low, self.mid, self.high, self.empty) = (i, i, i, false);
        }
        debug_assert_eq!(i, self.high, "positions enter in order");
        self.high = i + 1;
        if !self.valid.get(i) {
            return;
        }
        let x = self.values[i];
        self.n += 1;
        if x.is_finite() {
            self.back.add(x);
        } else {
            self.non_finite(x, 1);
        }
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        debug_assert!(self.empty || i == self.low, "positions leave in push order");
        if self.empty || i != self.low {
            return;
        }
        if self.low == self.mid {
            self.turn();
        }
        self.low = i + 1;
        if !self.valid.get(i) {
            return;
        }
        let x = self.values[i];
        self.n -= 1;
        if !x.is_finite() {
            self.non_finite(x, -1);
        }
    }
    fn clear(&mut self) {
        self.empty = true;
        self.back = Partial::default();
        self.front.clear();
        self.n = 0;
        self.nan = 0;
        self.positive_infinity = 0;
        self.negative_infinity = 0;
    }
    #[inline(always)]
    fn value(&mut self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let divisor = if self.mean { Some(self.n as f64) } else { None };
        Some(
            if self.nan > 0 || (self.positive_infinity > 0 && self.negative_infinity > 0) {
                f64::NAN
            } else if self.positive_infinity > 0 {
                f64::INFINITY
            } else if self.negative_infinity > 0 {
                f64::NEG_INFINITY
            } else {
                self.finite_total(divisor)
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
            (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
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
