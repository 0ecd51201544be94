//! Sliding aggregates over values already in (group, time) order.
//!
//! Windows only ever grow at the back and shrink at the front, so each accumulator
//! supports `push` (the next row enters) and `evict` (the oldest row leaves), both O(1)
//! amortized: subtract-on-evict for sum / count / mean, a monotonic deque for min / max.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array};
use arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};

use super::{Aggregation, NumericValues};

/// Values gathered into sorted order. `valid` is `None` when no value is null.
pub(crate) enum SortedValues {
    Int(Vec<i64>, Option<Vec<bool>>),
    Float(Vec<f64>, Option<Vec<bool>>),
    Validity(Option<Vec<bool>>),
}

impl SortedValues {
    pub fn gather(values: &NumericValues, order: &[u32]) -> Self {
        fn validity(nulls: Option<&NullBuffer>, order: &[u32]) -> Option<Vec<bool>> {
            let nulls = nulls.filter(|n| n.null_count() > 0)?;
            Some(order.iter().map(|&r| nulls.is_valid(r as usize)).collect())
        }
        match values {
            NumericValues::Int(a) => {
                let v = a.values();
                Self::Int(order.iter().map(|&r| v[r as usize]).collect(), validity(a.nulls(), order))
            }
            NumericValues::Float(a) => {
                let v = a.values();
                Self::Float(order.iter().map(|&r| v[r as usize]).collect(), validity(a.nulls(), order))
            }
            NumericValues::Validity(nulls) => Self::Validity(validity(nulls.as_ref(), order)),
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
    /// The next position enters the window.
    fn push(&mut self, i: usize);
    /// The oldest position in the window leaves it.
    fn evict(&mut self, i: usize);
    /// Empties the window (between groups and sessions).
    fn clear(&mut self);
    /// Appends the current result to `out`.
    fn emit(&mut self, out: &mut Output);
}

/// Results under construction: one value (or null) per window or row.
pub(crate) enum Output {
    Int(Vec<i64>, Vec<bool>),
    Float(Vec<f64>, Vec<bool>),
}

impl Output {
    pub fn with_capacity(float: bool, capacity: usize) -> Self {
        if float {
            Output::Float(Vec::with_capacity(capacity), Vec::with_capacity(capacity))
        } else {
            Output::Int(Vec::with_capacity(capacity), Vec::with_capacity(capacity))
        }
    }

    #[inline(always)]
    fn int(&mut self, v: Option<i64>) {
        if let Output::Int(values, valid) = self {
            values.push(v.unwrap_or_default());
            valid.push(v.is_some());
        }
    }

    #[inline(always)]
    fn float(&mut self, v: Option<f64>) {
        if let Output::Float(values, valid) = self {
            values.push(v.unwrap_or_default());
            valid.push(v.is_some());
        }
    }


    pub fn into_array(self) -> ArrayRef {
        fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
            let nulls = NullBuffer::new(BooleanBuffer::from(valid));
            (nulls.null_count() > 0).then_some(nulls)
        }
        match self {
            Output::Int(v, valid) => Arc::new(Int64Array::new(ScalarBuffer::from(v), nulls(valid))),
            Output::Float(v, valid) => Arc::new(Float64Array::new(ScalarBuffer::from(v), nulls(valid))),
        }
    }

    /// Reorders `self` (one entry per sorted position) to input rows: entry `i` goes to
    /// row `order[i]`; rows not in `order` are null.
    pub fn scatter(self, order: &[u32], rows: usize) -> Output {
        fn place<T: Copy + Default>(v: Vec<T>, valid: Vec<bool>, order: &[u32], rows: usize) -> (Vec<T>, Vec<bool>) {
            let mut out = vec![T::default(); rows];
            let mut out_valid = vec![false; rows];
            for ((&row, value), ok) in order.iter().zip(v).zip(valid) {
                out[row as usize] = value;
                out_valid[row as usize] = ok;
            }
            (out, out_valid)
        }
        match self {
            Output::Int(v, valid) => {
                let (v, valid) = place(v, valid, order, rows);
                Output::Int(v, valid)
            }
            Output::Float(v, valid) => {
                let (v, valid) = place(v, valid, order, rows);
                Output::Float(v, valid)
            }
        }
    }
}

/// Runs `body` with `acc` bound to the accumulator for `aggregation` over `values`.
macro_rules! with_accumulator {
    ($aggregation:expr, $values:expr, $acc:ident => $body:expr) => {{
        use $crate::kernels::window::accumulate::*;
        use $crate::kernels::window::Aggregation as A;
        match ($aggregation, $values) {
            (A::Count, v) => {
                let mut $acc = Count::new(v.valid());
                $body
            }
            (A::Sum, SortedValues::Int(v, valid)) => {
                let mut $acc = IntSum::new(v, valid.as_deref(), false);
                $body
            }
            (A::Mean, SortedValues::Int(v, valid)) => {
                let mut $acc = IntSum::new(v, valid.as_deref(), true);
                $body
            }
            (A::Sum, SortedValues::Float(v, valid)) => {
                let mut $acc = FloatSum::new(v, valid.as_deref(), false);
                $body
            }
            (A::Mean, SortedValues::Float(v, valid)) => {
                let mut $acc = FloatSum::new(v, valid.as_deref(), true);
                $body
            }
            (A::Min, SortedValues::Int(v, valid)) => {
                let mut $acc = Extreme::<i64, false>::new(v, valid.as_deref());
                $body
            }
            (A::Max, SortedValues::Int(v, valid)) => {
                let mut $acc = Extreme::<i64, true>::new(v, valid.as_deref());
                $body
            }
            (A::Min, SortedValues::Float(v, valid)) => {
                let mut $acc = Extreme::<f64, false>::new(v, valid.as_deref());
                $body
            }
            (A::Max, SortedValues::Float(v, valid)) => {
                let mut $acc = Extreme::<f64, true>::new(v, valid.as_deref());
                $body
            }
            (_, SortedValues::Validity(_)) => unreachable!("only count reads validity alone"),
        }
    }};
}
pub(crate) use with_accumulator;

impl SortedValues {
    pub fn valid(&self) -> Valid<'_> {
        match self {
            SortedValues::Int(_, v) | SortedValues::Float(_, v) | SortedValues::Validity(v) => Valid(v.as_deref()),
        }
    }
}

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
    fn emit(&mut self, out: &mut Output) {
        out.int(Some(self.n));
    }
}

/// Exact integer sum (or mean) in 128 bits.
pub(crate) struct IntSum<'a> {
    values: &'a [i64],
    valid: Valid<'a>,
    mean: bool,
    sum: i128,
    n: i64,
    /// Set when a sum did not fit `Int64`.
    pub overflow: bool,
}

impl<'a> IntSum<'a> {
    pub fn new(values: &'a [i64], valid: Option<&'a [bool]>, mean: bool) -> Self {
        Self { values, valid: Valid(valid), mean, sum: 0, n: 0, overflow: false }
    }
}

impl Accumulator for IntSum<'_> {
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
    fn emit(&mut self, out: &mut Output) {
        if self.n == 0 {
            if self.mean { out.float(None) } else { out.int(None) }
        } else if self.mean {
            out.float(Some(self.sum as f64 / self.n as f64));
        } else {
            let sum = i64::try_from(self.sum).unwrap_or_else(|_| {
                self.overflow = true;
                0
            });
            out.int(Some(sum));
        }
    }
}

/// Compensated (Kahan–Babuška–Neumaier) float sum (or mean) that supports eviction.
///
/// Non-finite values are counted rather than summed: once a NaN or an infinity has been
/// added, subtracting it again cannot restore the finite sum, so they are kept apart and
/// the sum of the window's finite values stays exact to a few ulps however long it slides.
pub(crate) struct FloatSum<'a> {
    values: &'a [f64],
    valid: Valid<'a>,
    mean: bool,
    sum: f64,
    compensation: f64,
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
            sum: 0.0,
            compensation: 0.0,
            n: 0,
            nan: 0,
            positive_infinity: 0,
            negative_infinity: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.compensation += (self.sum - t) + x;
        } else {
            self.compensation += (x - t) + self.sum;
        }
        self.sum = t;
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
}

impl Accumulator for FloatSum<'_> {
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if !self.valid.get(i) {
            return;
        }
        let x = self.values[i];
        self.n += 1;
        if x.is_finite() {
            self.add(x);
        } else {
            self.non_finite(x, 1);
        }
    }
    #[inline(always)]
    fn evict(&mut self, i: usize) {
        if !self.valid.get(i) {
            return;
        }
        let x = self.values[i];
        self.n -= 1;
        if self.n == 0 {
            // Nothing left: drop any rounding residue instead of carrying it forward.
            self.clear();
        } else if x.is_finite() {
            self.add(-x);
        } else {
            self.non_finite(x, -1);
        }
    }
    fn clear(&mut self) {
        self.sum = 0.0;
        self.compensation = 0.0;
        self.n = 0;
        self.nan = 0;
        self.positive_infinity = 0;
        self.negative_infinity = 0;
    }
    #[inline(always)]
    fn emit(&mut self, out: &mut Output) {
        if self.n == 0 {
            return out.float(None);
        }
        let sum = if self.nan > 0 || (self.positive_infinity > 0 && self.negative_infinity > 0) {
            f64::NAN
        } else if self.positive_infinity > 0 {
            f64::INFINITY
        } else if self.negative_infinity > 0 {
            f64::NEG_INFINITY
        } else {
            self.sum + self.compensation
        };
        out.float(Some(if self.mean { sum / self.n as f64 } else { sum }));
    }
}

/// Values with a total order for min / max. Floats order NaN above every number (as
/// Spark does) and -0.0 equal to 0.0.
pub(crate) trait Ordered: Copy {
    fn order(a: Self, b: Self) -> Ordering;
    fn put(out: &mut Output, v: Option<Self>);
}

impl Ordered for i64 {
    #[inline(always)]
    fn order(a: Self, b: Self) -> Ordering {
        a.cmp(&b)
    }
    fn put(out: &mut Output, v: Option<Self>) {
        out.int(v)
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
    fn put(out: &mut Output, v: Option<Self>) {
        out.float(v)
    }
}

/// Sliding min (`MAX = false`) or max (`MAX = true`) by a monotonic deque of positions:
/// the front is the extreme of the window, and each value enters and leaves once.
pub(crate) struct Extreme<'a, T, const MAX: bool> {
    values: &'a [T],
    valid: Valid<'a>,
    deque: VecDeque<usize>,
}

impl<'a, T: Ordered, const MAX: bool> Extreme<'a, T, MAX> {
    pub fn new(values: &'a [T], valid: Option<&'a [bool]>) -> Self {
        Self { values, valid: Valid(valid), deque: VecDeque::new() }
    }

    /// Whether `a` makes `b` useless: `a` arrived later and is at least as extreme.
    #[inline(always)]
    fn dominates(a: T, b: T) -> bool {
        let o = T::order(a, b);
        if MAX { o != Ordering::Less } else { o != Ordering::Greater }
    }
}

impl<T: Ordered, const MAX: bool> Accumulator for Extreme<'_, T, MAX> {
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
    fn emit(&mut self, out: &mut Output) {
        T::put(out, self.deque.front().map(|&i| self.values[i]));
    }
}

/// Whether an integer sum overflowed (only `IntSum` can).
pub(crate) trait Overflow {
    fn overflowed(&self) -> bool {
        false
    }
}
impl Overflow for Count<'_> {}
impl Overflow for FloatSum<'_> {}
impl<T, const MAX: bool> Overflow for Extreme<'_, T, MAX> {}
impl Overflow for IntSum<'_> {
    fn overflowed(&self) -> bool {
        self.overflow
    }
}

/// The output type of an aggregation: floats unless integer-valued.
pub(crate) fn float_output(aggregation: Aggregation, values: &SortedValues) -> bool {
    match aggregation {
        Aggregation::Count => false,
        Aggregation::Mean => true,
        _ => matches!(values, SortedValues::Float(..)),
    }
}
