//! Embedding math and per-tensor int8 quantization.
//!
//! Vectors are rows of a `FixedSizeList`, `List` or `LargeList` of `Float32` or `Float64`
//! (quantized vectors: of `UInt8`). Sums are accumulated in `f64` over eight independent
//! lanes, added in a fixed order, so results are deterministic and vectorize.
//!
//! A null row, or a row with a null element, gives a null result.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Datum, FixedSizeListArray, Float32Array, Float64Array,
    GenericListArray, PrimitiveArray, UInt8Array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Float32Type, Float64Type, Int64Type, UInt8Type,
};

use super::operand::{broadcast_len, F64Operand, Operand};
use super::{nulls_from_validity, KernelError, Result};

/// Element types that vectors may hold.
pub trait Element: Copy + Default + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Element for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Element for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl Element for u8 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as u8
    }
}

/// Where each row's elements start and end in the flat child values.
#[derive(Debug, Clone, Copy)]
enum Layout<'a> {
    Fixed(usize),
    Offsets(&'a [i32]),
    LargeOffsets(&'a [i64]),
}

/// A column (or scalar) of vectors, read in place.
struct Vectors<'a, T: ArrowPrimitiveType> {
    values: &'a [T::Native],
    layout: Layout<'a>,
    /// Row validity: the list's own nulls and rows holding a null element.
    nulls: Option<NullBuffer>,
    rows: usize,
    is_scalar: bool,
}

impl<'a, T: ArrowPrimitiveType> Vectors<'a, T> {
    fn from_datum(function: &'static str, argument: &str, datum: &'a dyn Datum) -> Result<Self> {
        let (array, is_scalar) = datum.get();
        let wrong_type = || {
            KernelError::wrong_type(
                function,
                argument,
                format!(
                    "expected a FixedSizeList, List or LargeList of {}, found {}",
                    T::DATA_TYPE,
                    array.data_type()
                ),
            )
        };
        let (child, layout) = match array.data_type() {
            DataType::FixedSizeList(_, size) => {
                let list = array.as_fixed_size_list();
                (list.values(), Layout::Fixed(*size as usize))
            }
            DataType::List(_) => {
                let list = array.as_list::<i32>();
                (list.values(), Layout::Offsets(list.value_offsets()))
            }
            DataType::LargeList(_) => {
                let list = array.as_list::<i64>();
                (list.values(), Layout::LargeOffsets(list.value_offsets()))
            }
            _ => return Err(wrong_type()),
        };
        let values = child
            .as_primitive_opt::<T>()
            .ok_or_else(wrong_type)?
            .values();
        let mut vectors = Vectors {
            values,
            layout,
            nulls: array.logical_nulls(),
            rows: array.len(),
            is_scalar,
        };
        if let Some(child_nulls) = child.logical_nulls().filter(|n| n.null_count() > 0) {
            let complete = BooleanBuffer::collect_bool(vectors.rows, |row| {
                let range = vectors.range(row);
                child_nulls.slice(range.start, range.len()).null_count() == 0
            });
            vectors.nulls =
                NullBuffer::union(vectors.nulls.as_ref(), Some(&NullBuffer::new(complete)));
        }
        Ok(vectors)
    }

    #[inline(always)]
    fn range(&self, row: usize) -> std::ops::Range<usize> {
        match self.layout {
            Layout::Fixed(size) => row * size..(row + 1) * size,
            Layout::Offsets(o) => o[row] as usize..o[row + 1] as usize,
            Layout::LargeOffsets(o) => o[row] as usize..o[row + 1] as usize,
        }
    }

    /// Row index into this argument for output row `row` (scalars repeat row 0).
    #[inline(always)]
    fn source_row(&self, row: usize) -> usize {
        if self.is_scalar {
            0
        } else {
            row
        }
    }

    #[inline(always)]
    fn get(&self, row: usize) -> &'a [T::Native] {
        let values: &'a [T::Native] = self.values;
        &values[self.range(self.source_row(row))]
    }

    #[inline(always)]
    fn is_valid(&self, row: usize) -> bool {
        let row = self.source_row(row);
        self.nulls.as_ref().is_none_or(|n| n.is_valid(row))
    }

    fn len(&self) -> Option<usize> {
        (!self.is_scalar).then_some(self.rows)
    }
}

const LANES: usize = 8;

/// Sum over eight independent lanes, combined in a fixed order.
#[inline(always)]
fn lane_sum<T: Element>(a: &[T], b: &[T], term: impl Fn(f64, f64) -> f64) -> f64 {
    let mut acc = [0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] += term(x[k].to_f64(), y[k].to_f64());
        }
    }
    for (k, (x, y)) in ra.iter().zip(rb).enumerate() {
        acc[k] += term(x.to_f64(), y.to_f64());
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

#[inline(always)]
fn squared_norm<T: Element>(a: &[T]) -> f64 {
    lane_sum(a, a, |x, _| x * x)
}

/// Dot product, both squared norms, in one pass over the two vectors, after scaling
/// the elements of `a` by `scale_a` and those of `b` by `scale_b` (powers of two).
#[inline(always)]
fn dot_and_norms<T: Element>(a: &[T], b: &[T], scale_a: Pow2, scale_b: Pow2) -> (f64, f64, f64) {
    let mut dot = [0f64; LANES];
    let mut na = [0f64; LANES];
    let mut nb = [0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            let (x, y) = (scale_a.apply(x[k].to_f64()), scale_b.apply(y[k].to_f64()));
            dot[k] += x * y;
            na[k] += x * x;
            nb[k] += y * y;
        }
    }
    for (k, (x, y)) in ra.iter().zip(rb).enumerate() {
        let (x, y) = (scale_a.apply(x.to_f64()), scale_b.apply(y.to_f64()));
        dot[k] += x * y;
        na[k] += x * x;
        nb[k] += y * y;
    }
    let fold = |a: [f64; LANES]| ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    (fold(dot), fold(na), fold(nb))
}

/// Sums of squares and products below this (2^-960) may have lost digits to underflow;
/// such rows, and rows whose sums overflowed, are computed again scaled.
const TINY: f64 = f64::from_bits((1023 - 960) << 52);

/// Multiplication by a power of two, as two factors so that every exponent from -1074
/// to 1074 is representable (a single 2^1074 is not).
#[derive(Clone, Copy)]
struct Pow2(f64, f64);

impl Pow2 {
    const ONE: Pow2 = Pow2(1.0, 1.0);

    /// 2^k for |k| <= 2046.
    fn new(k: i32) -> Self {
        let half = k / 2;
        Pow2(exact_pow2(half), exact_pow2(k - half))
    }

    #[inline(always)]
    fn apply(self, x: f64) -> f64 {
        x * self.0 * self.1
    }
}

/// 2^k for k in -1022..=1023 (a normal number).
fn exact_pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The binary exponent of a finite `m > 0`: 2^e <= m < 2^(e+1).
fn exponent(m: f64) -> i32 {
    if m < f64::MIN_POSITIVE {
        exponent(m * exact_pow2(64)) - 64
    } else {
        ((m.to_bits() >> 52) & 0x7ff) as i32 - 1023
    }
}

/// The largest magnitude in `a`, or `None` when an element is NaN or infinite.
fn max_abs<T: Element>(a: &[T]) -> Option<f64> {
    let mut max = 0f64;
    for x in a {
        let x = x.to_f64();
        if !x.is_finite() {
            return None;
        }
        max = max.max(x.abs());
    }
    Some(max)
}

/// The scale that brings a vector's largest magnitude `m` (finite, > 0) into [1, 2).
fn unit_scale(m: f64) -> (Pow2, i32) {
    let e = exponent(m);
    (Pow2::new(-e), e)
}

/// `sqrt(sum(a[i]^2))` without overflow or underflow where the norm is representable
/// (as `hypot` does): the fast sum first, the sum over the vector scaled to a largest
/// magnitude near 1 when that sum overflowed or may have underflowed.
#[inline(always)]
fn norm<T: Element>(a: &[T]) -> f64 {
    let squares = squared_norm(a);
    if squares.is_finite() && squares >= TINY {
        return squares.sqrt();
    }
    match max_abs(a) {
        // NaN or infinite elements: the plain sum says what IEEE arithmetic says.
        None => squares.sqrt(),
        Some(0.0) => 0.0,
        Some(m) => {
            let (scale, e) = unit_scale(m);
            lane_sum(a, a, |x, _| {
                let x = scale.apply(x);
                x * x
            })
            .sqrt()
                * exact_pow2_product(e)
        }
    }
}

/// 2^k for |k| <= 2148, applied by [`Pow2`]; returned as the product when it fits.
fn exact_pow2_product(k: i32) -> f64 {
    Pow2::new(k).apply(1.0)
}

/// `sum(a[i] * b[i])` without an intermediate overflow or underflow where the result is
/// representable: recomputed over both vectors scaled to unit magnitude, then scaled back.
#[inline(always)]
fn dot<T: Element>(a: &[T], b: &[T]) -> f64 {
    let d = lane_sum(a, b, |p, q| p * q);
    if d.is_finite() && d.abs() >= TINY {
        return d;
    }
    let (Some(ma), Some(mb)) = (max_abs(a), max_abs(b)) else {
        return d;
    };
    if ma == 0.0 || mb == 0.0 {
        return 0.0;
    }
    let ((sa, ea), (sb, eb)) = (unit_scale(ma), unit_scale(mb));
    let scaled = lane_sum(a, b, |p, q| sa.apply(p) * sb.apply(q));
    // Scale back in steps that each stay representable, so only a true result beyond
    // the f64 range overflows (or underflows).
    let mut k = ea + eb;
    let mut result = scaled;
    while k != 0 {
        let step = k.clamp(-1000, 1000);
        result *= exact_pow2(step);
        k -= step;
    }
    result
}

/// `dot(a, b) / (|a| |b|)` clamped to [-1, 1]; `None` for a zero vector. Cosine does not
/// change when a vector is scaled, so rows whose sums overflowed or underflowed are
/// computed again with each vector scaled to unit magnitude.
#[inline(always)]
fn cosine<T: Element>(a: &[T], b: &[T]) -> Option<f64> {
    let formula = |(dot, na, nb): (f64, f64, f64)| {
        (na != 0.0 && nb != 0.0).then(|| (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0))
    };
    let sums = dot_and_norms(a, b, Pow2::ONE, Pow2::ONE);
    let (d, na, nb) = sums;
    let ordinary = |s: f64| s.is_finite() && s >= TINY;
    if ordinary(na) && ordinary(nb) && d.is_finite() {
        return formula(sums);
    }
    let (Some(ma), Some(mb)) = (max_abs(a), max_abs(b)) else {
        return formula(sums);
    };
    if ma == 0.0 || mb == 0.0 {
        return None;
    }
    formula(dot_and_norms(a, b, unit_scale(ma).0, unit_scale(mb).0))
}

/// The element type shared by two vector arguments.
fn element_type(function: &'static str, argument: &str, datum: &dyn Datum) -> Result<DataType> {
    let (array, _) = datum.get();
    match array.data_type() {
        DataType::FixedSizeList(f, _) | DataType::List(f) | DataType::LargeList(f) => {
            Ok(f.data_type().clone())
        }
        other => Err(KernelError::wrong_type(
            function,
            argument,
            format!(
                "expected a FixedSizeList, List or LargeList of Float32 or Float64, found {other}"
            ),
        )),
    }
}

/// Runs `f(a[row], b[row])` for every row where both vectors are present and of equal length.
fn pairwise<T: ArrowPrimitiveType>(
    function: &'static str,
    a: &dyn Datum,
    b: &dyn Datum,
    f: impl Fn(&[T::Native], &[T::Native]) -> Option<f64>,
) -> Result<Float64Array> {
    let a = Vectors::<T>::from_datum(function, "a", a)?;
    let b = Vectors::<T>::from_datum(function, "b", b)?;
    let len = broadcast_len(function, &[("a", a.len()), ("b", b.len())])?;
    let mut values = Vec::with_capacity(len);
    let mut valid = Vec::with_capacity(len);
    for row in 0..len {
        if !(a.is_valid(row) && b.is_valid(row)) {
            values.push(0.0);
            valid.push(false);
            continue;
        }
        let (x, y) = (a.get(row), b.get(row));
        if x.len() != y.len() {
            return Err(KernelError::new(
                function,
                "b",
                format!(
                    "expected a vector of {} elements like `a`, found {} elements at row {row}",
                    x.len(),
                    y.len()
                ),
            ));
        }
        let out = f(x, y);
        values.push(out.unwrap_or(0.0));
        valid.push(out.is_some());
    }
    Ok(Float64Array::new(
        ScalarBuffer::from(values),
        nulls_from_validity(valid),
    ))
}

macro_rules! dispatch_float {
    ($function:expr, $arg:expr, $datum:expr, $t:ident => $body:expr) => {
        match element_type($function, $arg, $datum)? {
            DataType::Float32 => {
                type $t = Float32Type;
                $body
            }
            DataType::Float64 => {
                type $t = Float64Type;
                $body
            }
            other => Err(KernelError::wrong_type(
                $function,
                $arg,
                format!("expected vectors of Float32 or Float64, found vectors of {other}"),
            )),
        }
    };
}

fn same_element_type(function: &'static str, a: &dyn Datum, b: &dyn Datum) -> Result<()> {
    let (ta, tb) = (
        element_type(function, "a", a)?,
        element_type(function, "b", b)?,
    );
    if ta != tb {
        return Err(KernelError::wrong_type(
            function,
            "b",
            format!("expected vectors of {ta} like `a`, found vectors of {tb}"),
        ));
    }
    Ok(())
}

/// `sum(a[i] * b[i])`.
pub fn dot_product(a: &dyn Datum, b: &dyn Datum) -> Result<Float64Array> {
    const NAME: &str = "dot_product";
    same_element_type(NAME, a, b)?;
    dispatch_float!(NAME, "a", a, T => pairwise::<T>(NAME, a, b, |x, y| Some(dot(x, y))))
}

/// `dot(a, b) / (|a| |b|)`, clamped to `[-1, 1]`; null when either vector has norm 0.
pub fn cosine_similarity(a: &dyn Datum, b: &dyn Datum) -> Result<Float64Array> {
    const NAME: &str = "cosine_similarity";
    same_element_type(NAME, a, b)?;
    dispatch_float!(NAME, "a", a, T => pairwise::<T>(NAME, a, b, cosine))
}

/// Euclidean norm `sqrt(sum(a[i]^2))`.
pub fn l2_norm(a: &dyn Datum) -> Result<Float64Array> {
    const NAME: &str = "l2_norm";
    dispatch_float!(NAME, "a", a, T => {
        let v = Vectors::<T>::from_datum(NAME, "a", a)?;
        let len = v.len().unwrap_or(1);
        let values: Vec<f64> = (0..len).map(|row| norm(v.get(row))).collect();
        Ok(Float64Array::new(ScalarBuffer::from(values), v.nulls.clone()))
    })
}

/// Rebuilds a list column of the same layout as `input` around new child values.
fn rebuild_list(
    input: &dyn Array,
    child: ArrayRef,
    lengths: &[usize],
    nulls: Option<NullBuffer>,
) -> ArrayRef {
    let field = Arc::new(Field::new_list_field(child.data_type().clone(), true));
    match input.data_type() {
        DataType::FixedSizeList(_, size) => {
            Arc::new(FixedSizeListArray::new(field, *size, child, nulls))
        }
        DataType::LargeList(_) => Arc::new(GenericListArray::<i64>::new(
            field,
            OffsetBuffer::from_lengths(lengths.iter().copied()),
            child,
            nulls,
        )),
        _ => Arc::new(GenericListArray::<i32>::new(
            field,
            OffsetBuffer::from_lengths(lengths.iter().copied()),
            child,
            nulls,
        )),
    }
}

/// Maps every present row's vector to a new vector of the same length, element by element.
///
/// `prepare(row, input)` gives the row's parameter (a norm, a scale), or `None` to make the
/// row null; `element(parameter, x)` maps one element. The output is written once, in one
/// pass per row that the compiler can vectorize. Null rows of a FixedSizeList keep their
/// width (zeros); null rows of a List become empty.
fn map_vectors<T: ArrowPrimitiveType, O: ArrowPrimitiveType, P: Copy>(
    input: &Vectors<'_, T>,
    input_array: &dyn Array,
    len: usize,
    extra_nulls: impl Fn(usize) -> bool,
    prepare: impl Fn(usize, &[T::Native]) -> Option<P>,
    element: impl Fn(P, T::Native) -> O::Native,
) -> ArrayRef
where
    O::Native: Element,
{
    let fixed = matches!(input.layout, Layout::Fixed(_));
    // The elements the output rows read: a sliced list's child may be far longer.
    let capacity = if input.is_scalar {
        input.get(0).len().checked_mul(len).unwrap_or(0)
    } else if len == 0 {
        0
    } else {
        input.range(len - 1).end - input.range(0).start
    };
    let mut values: Vec<O::Native> = Vec::with_capacity(capacity);
    let mut lengths = Vec::with_capacity(len);
    let mut valid = Vec::with_capacity(len);
    for row in 0..len {
        let source = input.get(row);
        let present = input.is_valid(row) && !extra_nulls(row);
        let width = if present || fixed { source.len() } else { 0 };
        match present.then(|| prepare(row, source)).flatten() {
            Some(parameter) => {
                values.extend(source.iter().map(|&x| element(parameter, x)));
                valid.push(true);
            }
            None => {
                values.resize(values.len() + width, O::Native::default());
                valid.push(false);
            }
        }
        lengths.push(width);
    }
    let child: ArrayRef = Arc::new(PrimitiveArray::<O>::new(ScalarBuffer::from(values), None));
    rebuild_list(input_array, child, &lengths, nulls_from_validity(valid))
}

/// `a / |a|`, same layout and element type as `a`; null for a zero vector.
pub fn l2_normalize(a: &dyn Datum) -> Result<ArrayRef> {
    const NAME: &str = "l2_normalize";
    let (array, _) = a.get();
    dispatch_float!(NAME, "a", a, T => {
        let v = Vectors::<T>::from_datum(NAME, "a", a)?;
        let len = v.len().unwrap_or(1);
        Ok(map_vectors::<T, T, (f64, f64)>(
            &v,
            array,
            len,
            |_| false,
            |_, x| {
                let n = norm(x);
                if n.is_infinite() && x.iter().all(|e| e.to_f64().is_finite()) {
                    // Finite elements whose norm is beyond f64::MAX ([MAX, MAX] has norm
                    // sqrt(2) MAX): x / inf would be 0. Scaled by 2^-600 (exact), the norm
                    // is finite and the quotient the same.
                    let scaled = lane_sum(x, x, |e, _| {
                        let e = e * NORM_SCALE;
                        e * e
                    })
                    .sqrt();
                    return Some((NORM_SCALE, scaled));
                }
                Some((1.0, n)).filter(|&(_, n)| n != 0.0)
            },
            |(scale, norm), x| Element::from_f64(x.to_f64() * scale / norm),
        ))
    })
}

/// 2^-600: brings a vector whose norm overflows back into range, exactly.
const NORM_SCALE: f64 = f64::from_bits((1023 - 600) << 52);

/// Adding then subtracting 1.5 * 2^52 rounds to the nearest integer, ties to even, in
/// the default rounding mode, and vectorizes where `round_ties_even` would not.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// Per-tensor affine quantization: `clamp(round_half_even(x / scale) + zero_point, 0, 255)`.
#[inline(always)]
fn quantize_value(x: f64, scale: f64, zero_point: f64) -> u8 {
    // Anything beyond +-1024 saturates after adding a zero point in 0..=255.
    let scaled = (x / scale).clamp(-1024.0, 1024.0);
    let rounded = (scaled + ROUND_MAGIC) - ROUND_MAGIC;
    (rounded + zero_point).clamp(0.0, 255.0) as u8
}

#[inline(always)]
fn dequantize_value(q: u8, scale: f64, zero_point: f64) -> f32 {
    ((q as f64 - zero_point) * scale) as f32
}

/// Checked quantization parameters: `scale > 0`, `zero_point` in `0..=255`.
struct QuantParams<'a> {
    scale: F64Operand<'a>,
    zero_point: Operand<'a, Int64Type>,
}

impl<'a> QuantParams<'a> {
    fn new(
        function: &'static str,
        scale: &'a dyn Datum,
        zero_point: &'a dyn Datum,
    ) -> Result<Self> {
        let scale = F64Operand::from_datum(function, "scale", scale)?;
        scale.ensure(function, "scale", "a scale > 0", |s| {
            s > 0.0 && s.is_finite()
        })?;
        let zero_point = Operand::<Int64Type>::from_datum(function, "zero_point", zero_point)?;
        zero_point.ensure(function, "zero_point", "a zero point in 0..=255", |z| {
            (0..=255).contains(&z)
        })?;
        Ok(Self { scale, zero_point })
    }

    #[inline(always)]
    fn is_valid(&self, row: usize) -> bool {
        self.scale.is_valid(row) && self.zero_point.is_valid(row)
    }

    #[inline(always)]
    fn get(&self, row: usize) -> (f64, f64) {
        (self.scale.value(row), self.zero_point.value(row) as f64)
    }

    /// Both parameters as constants, when they are non-null scalars.
    fn scalars(&self) -> Option<(f64, f64)> {
        Some((self.scale.scalar()?, self.zero_point.scalar()? as f64))
    }

    fn lengths(&self) -> [(&'static str, Option<usize>); 2] {
        [
            ("scale", self.scale.len()),
            ("zero_point", self.zero_point.len()),
        ]
    }
}

/// Validity of an elementwise quantization result: input and parameter nulls, and
/// `extra_invalid` rows (NaN inputs). `None` when every row is valid.
fn elementwise_nulls<T: ArrowPrimitiveType>(
    x: &Operand<'_, T>,
    params: &QuantParams<'_>,
    len: usize,
    any_extra: bool,
    extra_invalid: impl Fn(usize) -> bool,
) -> Option<NullBuffer> {
    if params.scale.is_null_scalar() || params.zero_point.is_null_scalar() || x.is_null_scalar() {
        return Some(NullBuffer::new_null(len));
    }
    let nulls = NullBuffer::union(
        x.nulls(),
        NullBuffer::union(params.scale.nulls(), params.zero_point.nulls()).as_ref(),
    );
    if !any_extra {
        return nulls;
    }
    let extra = NullBuffer::new(BooleanBuffer::collect_bool(len, |row| !extra_invalid(row)));
    NullBuffer::union(nulls.as_ref(), Some(&extra))
}

fn quantize_elementwise<T: ArrowPrimitiveType>(
    x: Operand<'_, T>,
    params: &QuantParams<'_>,
) -> Result<ArrayRef>
where
    T::Native: Element,
{
    const NAME: &str = "quantize_int8";
    let [s, z] = params.lengths();
    let len = broadcast_len(NAME, &[("x", x.len()), s, z])?;
    let values: Vec<u8> = match (&x, params.scalars()) {
        // The common case: a column with constant parameters, one tight loop.
        (Operand::Column { values, .. }, Some((scale, zp))) => values
            .iter()
            .map(|v| quantize_value(v.to_f64(), scale, zp))
            .collect(),
        _ => (0..len)
            .map(|row| {
                let (scale, zp) = params.get(row);
                quantize_value(x.value(row).to_f64(), scale, zp)
            })
            .collect(),
    };
    let is_nan = |row: usize| x.value(row).to_f64().is_nan();
    let any_nan = match &x {
        Operand::Column { values, .. } => values.iter().any(|v| v.to_f64().is_nan()),
        Operand::Scalar(v) => v.is_some_and(|v| v.to_f64().is_nan()),
    };
    let nulls = elementwise_nulls(&x, params, len, any_nan, is_nan);
    Ok(Arc::new(UInt8Array::new(ScalarBuffer::from(values), nulls)))
}

/// Quantizes floats (a Float32/Float64 column, or vectors of them) to `UInt8`.
///
/// Elementwise: NaN gives null. Vectors: a vector holding NaN gives a null row.
pub fn quantize_int8(x: &dyn Datum, scale: &dyn Datum, zero_point: &dyn Datum) -> Result<ArrayRef> {
    const NAME: &str = "quantize_int8";
    let params = QuantParams::new(NAME, scale, zero_point)?;
    let (array, is_scalar) = x.get();
    match array.data_type() {
        DataType::Float32 => quantize_elementwise(
            Operand::from_array(array.as_primitive::<Float32Type>(), is_scalar),
            &params,
        ),
        DataType::Float64 => quantize_elementwise(
            Operand::from_array(array.as_primitive::<Float64Type>(), is_scalar),
            &params,
        ),
        _ => dispatch_float!(NAME, "x", x, T => {
            let v = Vectors::<T>::from_datum(NAME, "x", x)?;
            let [s, z] = params.lengths();
            let len = broadcast_len(NAME, &[("x", v.len()), s, z])?;
            Ok(map_vectors::<T, UInt8Type, (f64, f64)>(
                &v,
                array,
                len,
                |row| !params.is_valid(row),
                // A vector holding a NaN quantizes to null.
                |row, src| (!src.iter().any(|x| x.to_f64().is_nan())).then(|| params.get(row)),
                |(scale, zp), x| quantize_value(x.to_f64(), scale, zp),
            ))
        }),
    }
}

/// `(q - zero_point) * scale` as `Float32`, elementwise on `UInt8` or on vectors of `UInt8`.
pub fn dequantize_int8(
    q: &dyn Datum,
    scale: &dyn Datum,
    zero_point: &dyn Datum,
) -> Result<ArrayRef> {
    const NAME: &str = "dequantize_int8";
    let params = QuantParams::new(NAME, scale, zero_point)?;
    let (array, _) = q.get();
    let [s, z] = params.lengths();
    if array.data_type() == &DataType::UInt8 {
        let q = Operand::<UInt8Type>::from_datum(NAME, "q", q)?;
        let len = broadcast_len(NAME, &[("q", q.len()), s, z])?;
        let values: Vec<f32> = match (&q, params.scalars()) {
            (Operand::Column { values, .. }, Some((scale, zp))) => values
                .iter()
                .map(|v| dequantize_value(*v, scale, zp))
                .collect(),
            _ => (0..len)
                .map(|row| {
                    let (scale, zp) = params.get(row);
                    dequantize_value(q.value(row), scale, zp)
                })
                .collect(),
        };
        let nulls = elementwise_nulls(&q, &params, len, false, |_| false);
        return Ok(Arc::new(Float32Array::new(
            ScalarBuffer::from(values),
            nulls,
        )));
    }
    let v = Vectors::<UInt8Type>::from_datum(NAME, "q", q).map_err(|_| {
        let (array, _) = q.get();
        KernelError::wrong_type(
            NAME,
            "q",
            format!(
                "expected a FixedSizeList, List or LargeList of UInt8, or UInt8 values, found {}",
                array.data_type()
            ),
        )
    })?;
    let len = broadcast_len(NAME, &[("q", v.len()), s, z])?;
    Ok(map_vectors::<UInt8Type, Float32Type, (f64, f64)>(
        &v,
        array,
        len,
        |row| !params.is_valid(row),
        |row, _| Some(params.get(row)),
        |(scale, zp), q| dequantize_value(q, scale, zp),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ListArray, Scalar};
    use proptest::prelude::*;

    fn fsl(rows: Vec<Option<Vec<f32>>>, size: i32) -> FixedSizeListArray {
        FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.into_iter()
                .map(|r| r.map(|v| v.into_iter().map(Some).collect::<Vec<_>>())),
            size,
        )
    }

    fn list(rows: Vec<Option<Vec<f32>>>) -> ListArray {
        ListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.into_iter()
                .map(|r| r.map(|v| v.into_iter().map(Some).collect::<Vec<_>>())),
        )
    }

    #[test]
    fn dot_cosine_norm_basics() {
        let a = fsl(
            vec![Some(vec![1.0, 2.0, 3.0]), None, Some(vec![0.0, 0.0, 0.0])],
            3,
        );
        let b = fsl(
            vec![
                Some(vec![4.0, 5.0, 6.0]),
                Some(vec![1.0, 1.0, 1.0]),
                Some(vec![1.0, 0.0, 0.0]),
            ],
            3,
        );
        let dot = dot_product(&a, &b).unwrap();
        assert_eq!(dot.value(0), 32.0);
        assert!(dot.is_null(1));
        let cos = cosine_similarity(&a, &b).unwrap();
        assert!((cos.value(0) - 32.0 / (14f64.sqrt() * 77f64.sqrt())).abs() < 1e-12);
        assert!(cos.is_null(2), "zero vector has no direction");
        let norm = l2_norm(&a).unwrap();
        assert_eq!(norm.value(0), 14f64.sqrt());
        assert_eq!(norm.value(2), 0.0);
    }

    #[test]
    fn scalar_query_vector_broadcasts_over_list_column() {
        let a = list(vec![Some(vec![1.0, 0.0]), Some(vec![0.0, 2.0]), None]);
        let q = Scalar::new(list(vec![Some(vec![1.0, 1.0])]));
        let dot = dot_product(&a, &q).unwrap();
        assert_eq!(dot, Float64Array::from(vec![Some(1.0), Some(2.0), None]));
    }

    #[test]
    fn length_mismatch_names_row() {
        let a = list(vec![Some(vec![1.0]), Some(vec![1.0, 2.0])]);
        let b = list(vec![Some(vec![1.0]), Some(vec![1.0])]);
        let err = dot_product(&a, &b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dot_product: argument `b`: expected a vector of 2 elements like `a`, found 1 elements at row 1"
        );
    }

    #[test]
    fn null_element_nulls_the_row_and_slices_respected() {
        let a = ListArray::from_iter_primitive::<Float32Type, _, _>(vec![
            Some(vec![Some(1.0), Some(2.0)]),
            Some(vec![Some(1.0), None]),
            Some(vec![Some(3.0), Some(4.0)]),
        ]);
        let norm = l2_norm(&a).unwrap();
        assert!(norm.is_null(1));
        let sliced = a.slice(1, 2);
        let norm = l2_norm(&sliced).unwrap();
        assert!(norm.is_null(0));
        assert_eq!(norm.value(1), 5.0);
    }

    fn f64_vectors(rows: Vec<Vec<f64>>) -> ListArray {
        ListArray::from_iter_primitive::<Float64Type, _, _>(
            rows.into_iter()
                .map(|r| Some(r.into_iter().map(Some).collect::<Vec<_>>())),
        )
    }

    #[test]
    fn norms_dot_and_cosine_at_the_extremes_of_f64() {
        let huge = f64_vectors(vec![vec![1e200, 1e200]]);
        let tiny = f64_vectors(vec![vec![1e-200, 1e-200]]);
        let sqrt2 = 2f64.sqrt();
        let close = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * b.abs();
        assert!(close(l2_norm(&huge).unwrap().value(0), 1e200 * sqrt2));
        assert!(close(l2_norm(&tiny).unwrap().value(0), 1e-200 * sqrt2));
        let sub = f64_vectors(vec![
            vec![5e-324],
            vec![0.0, -5e-324, 0.0],
            vec![f64::MAX, f64::MAX],
        ]);
        let norms = l2_norm(&sub).unwrap();
        assert_eq!(norms.value(0), 5e-324);
        assert_eq!(norms.value(1), 5e-324);
        // The true norm is beyond f64::MAX: infinity is the right answer here.
        assert_eq!(norms.value(2), f64::INFINITY);
        let one = f64_vectors(vec![vec![f64::MAX]]);
        assert_eq!(l2_norm(&one).unwrap().value(0), f64::MAX);

        for v in [&huge, &tiny] {
            let cos = cosine_similarity(v, v).unwrap();
            assert!(cos.is_valid(0), "{v:?}");
            assert!(close(cos.value(0), 1.0), "{}", cos.value(0));
            let unit = l2_normalize(v).unwrap();
            let unit = unit.as_list::<i32>().value(0);
            for x in unit.as_primitive::<Float64Type>().values() {
                assert!(close(*x, 1.0 / sqrt2), "{x}");
            }
        }
        let opposite = f64_vectors(vec![vec![-1e200, -1e200]]);
        assert!(close(
            cosine_similarity(&huge, &opposite).unwrap().value(0),
            -1.0
        ));

        // Intermediate overflow with a representable result.
        let a = f64_vectors(vec![vec![1e308, 1e308, -1e308]]);
        let ones = f64_vectors(vec![vec![1.0, 1.0, 1.0]]);
        assert_eq!(dot_product(&a, &ones).unwrap().value(0), 1e308);
        // Products that underflow individually but not in total.
        let a = f64_vectors(vec![vec![1e-160, 1e-160]]);
        let b = f64_vectors(vec![vec![1e-160, 1e-160]]);
        assert!(close(dot_product(&a, &b).unwrap().value(0), 2e-320));
        // NaN and infinities keep their IEEE meaning.
        let nan = f64_vectors(vec![vec![f64::NAN, 1.0]]);
        assert!(l2_norm(&nan).unwrap().value(0).is_nan());
        let inf = f64_vectors(vec![vec![f64::INFINITY, 1.0]]);
        assert_eq!(l2_norm(&inf).unwrap().value(0), f64::INFINITY);
    }

    /// Elements of every magnitude f64 has, so sums overflow and underflow.
    fn extreme_element() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-1e3f64..1e3),
            (-300i32..=307, any::<bool>()).prop_map(|(e, neg)| if neg {
                -(10f64.powi(e))
            } else {
                10f64.powi(e)
            }),
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(5e-324),
            Just(0.0),
        ]
    }

    proptest! {
        #[test]
        fn norm_and_cosine_match_hypot_reference_at_extremes(
            rows in prop::collection::vec((prop::collection::vec(extreme_element(), 1..12), prop::collection::vec(extreme_element(), 1..12)), 1..20)
        ) {
            let rows: Vec<(Vec<f64>, Vec<f64>)> = rows.into_iter().map(|(mut a, mut b)| {
                let n = a.len().min(b.len());
                a.truncate(n);
                b.truncate(n);
                (a, b)
            }).collect();
            let a = f64_vectors(rows.iter().map(|r| r.0.clone()).collect());
            let b = f64_vectors(rows.iter().map(|r| r.1.clone()).collect());
            let norms = l2_norm(&a).unwrap();
            let cos = cosine_similarity(&a, &b).unwrap();
            for (i, (x, y)) in rows.iter().enumerate() {
                // hypot never overflows or underflows where the norm is representable.
                let reference = x.iter().fold(0f64, |acc, v| acc.hypot(*v));
                let found = norms.value(i);
                prop_assert!(
                    (found - reference).abs() <= 1e-12 * reference + 1e-322 || found == reference,
                    "row {i}: norm {found}, hypot {reference}, of {x:?}"
                );
                // Reference: each vector divided by its largest magnitude, then by its
                // norm (hypot), and the dot product of the two unit vectors.
                let unit_vector = |v: &[f64]| -> Option<Vec<f64>> {
                    let m = v.iter().fold(0f64, |m, x| m.max(x.abs()));
                    if m == 0.0 {
                        return None;
                    }
                    let scaled: Vec<f64> = v.iter().map(|x| x / m).collect();
                    let n = scaled.iter().fold(0f64, |acc, v| acc.hypot(*v));
                    Some(scaled.iter().map(|x| x / n).collect())
                };
                let (Some(ux), Some(uy)) = (unit_vector(x), unit_vector(y)) else {
                    prop_assert!(cos.is_null(i), "row {i}: zero vector, found {}", cos.value(i));
                    continue;
                };
                let unit: f64 = ux.iter().zip(&uy).map(|(p, q)| p * q).sum();
                prop_assert!(cos.is_valid(i));
                let c = cos.value(i);
                prop_assert!((-1.0..=1.0).contains(&c), "row {i}: {c}");
                prop_assert!((c - unit.clamp(-1.0, 1.0)).abs() <= 1e-9, "row {i}: cosine {c}, reference {unit}");
            }
        }
    }

    #[test]
    fn l2_normalize_of_vectors_whose_norm_overflows() {
        use arrow::datatypes::Float64Type;
        let a = FixedSizeListArray::from_iter_primitive::<Float64Type, _, _>(
            vec![
                Some(vec![Some(f64::MAX), Some(f64::MAX)]),
                Some(vec![Some(f64::MAX), Some(1.0)]),
                Some(vec![Some(f64::MAX), Some(f64::INFINITY)]),
            ],
            2,
        );
        let out = l2_normalize(&a).unwrap();
        let out = out.as_fixed_size_list();
        let row = |i: usize| out.value(i).as_primitive::<Float64Type>().values().to_vec();
        let half = std::f64::consts::FRAC_1_SQRT_2;
        assert!(
            row(0).iter().all(|&x| (x - half).abs() < 1e-15),
            "{:?}",
            row(0)
        );
        assert_eq!(row(1)[0], 1.0);
        // An infinite element: IEEE arithmetic decides, as before.
        assert!(row(2)[1].is_nan(), "{:?}", row(2));
    }

    #[test]
    fn l2_normalize_keeps_layout() {
        let a = fsl(vec![Some(vec![3.0, 4.0]), Some(vec![0.0, 0.0]), None], 2);
        let out = l2_normalize(&a).unwrap();
        assert_eq!(out.data_type(), a.data_type());
        let out = out.as_fixed_size_list();
        assert_eq!(
            out.value(0).as_primitive::<Float32Type>().values(),
            &[0.6, 0.8]
        );
        assert!(out.is_null(1));
        assert!(out.is_null(2));
        let l = list(vec![Some(vec![0.0, 5.0]), None, Some(vec![2.0])]).slice(1, 2);
        let out = l2_normalize(&l).unwrap();
        let out = out.as_list::<i32>();
        assert!(out.is_null(0));
        assert_eq!(out.value(1).as_primitive::<Float32Type>().values(), &[1.0]);
        // A one-row slice of a long list reserves room for its own elements only.
        let long = list(vec![Some(vec![1.0; 100_000]), Some(vec![3.0, 4.0])]).slice(1, 1);
        let out = l2_normalize(&long).unwrap();
        let child = out.as_list::<i32>().values().clone();
        assert_eq!(child.as_primitive::<Float32Type>().values(), &[0.6, 0.8]);
        assert!(
            child.get_buffer_memory_size() < 1_000,
            "{}",
            child.get_buffer_memory_size()
        );
    }

    #[test]
    fn float64_vectors_and_mixed_element_types() {
        let a = ListArray::from_iter_primitive::<Float64Type, _, _>(vec![Some(vec![
            Some(1.0),
            Some(2.0),
        ])]);
        assert_eq!(dot_product(&a, &a).unwrap().value(0), 5.0);
        let b = list(vec![Some(vec![1.0, 2.0])]);
        let err = dot_product(&a, &b).unwrap_err();
        assert!(
            err.message.contains("expected vectors of Float64 like `a`"),
            "{err}"
        );
    }

    #[test]
    fn quantize_rounds_half_to_even_and_saturates() {
        let x = Float32Array::from(vec![
            Some(0.5),
            Some(1.5),
            Some(2.5),
            Some(-0.5),
            Some(1000.0),
            Some(-1000.0),
            Some(f32::NAN),
            None,
        ]);
        let s = Scalar::new(Float64Array::from(vec![1.0]));
        let z = Scalar::new(arrow::array::Int64Array::from(vec![10]));
        let q = quantize_int8(&x, &s, &z).unwrap();
        let q = q.as_primitive::<UInt8Type>();
        assert_eq!(
            q.iter().collect::<Vec<_>>(),
            vec![
                Some(10),
                Some(12),
                Some(12),
                Some(10),
                Some(255),
                Some(0),
                None,
                None
            ]
        );
        let back = dequantize_int8(q, &s, &z).unwrap();
        let back = back.as_primitive::<Float32Type>();
        assert_eq!(back.value(1), 2.0);
    }

    #[test]
    fn quantize_vectors_roundtrip_and_errors() {
        let a = fsl(vec![Some(vec![0.1, -0.2, 0.3]), None], 3);
        let s = Scalar::new(Float64Array::from(vec![0.01]));
        let z = Scalar::new(arrow::array::Int64Array::from(vec![128]));
        let q = quantize_int8(&a, &s, &z).unwrap();
        assert_eq!(
            q.data_type(),
            &DataType::FixedSizeList(Arc::new(Field::new_list_field(DataType::UInt8, true)), 3)
        );
        let fq = q.as_fixed_size_list();
        assert_eq!(
            fq.value(0).as_primitive::<UInt8Type>().values(),
            &[138, 108, 158]
        );
        assert!(fq.is_null(1));
        let back = dequantize_int8(&q, &s, &z).unwrap();
        let back = back.as_fixed_size_list().value(0);
        let back = back.as_primitive::<Float32Type>();
        assert!((back.value(0) - 0.1).abs() < 1e-6);
        let bad = Scalar::new(Float64Array::from(vec![0.0]));
        let err = quantize_int8(&a, &bad, &z).unwrap_err();
        assert_eq!(
            err.to_string(),
            "quantize_int8: argument `scale`: expected a scale > 0, found 0"
        );
        let badz = Scalar::new(arrow::array::Int64Array::from(vec![300]));
        assert!(quantize_int8(&a, &s, &badz)
            .unwrap_err()
            .message
            .contains("0..=255"));
    }

    type Rows = Vec<Option<Vec<f32>>>;

    fn arb_vectors() -> impl Strategy<Value = (usize, Rows, Rows)> {
        (1usize..20)
            .prop_flat_map(|dim| {
                let row = prop::option::weighted(0.9, prop::collection::vec(-100f32..100.0, dim));
                (
                    Just(dim),
                    prop::collection::vec(row.clone(), 0..30),
                    prop::collection::vec(row, 0..30),
                )
            })
            .prop_map(|(dim, mut a, mut b)| {
                let n = a.len().min(b.len());
                a.truncate(n);
                b.truncate(n);
                (dim, a, b)
            })
    }

    proptest! {
        #[test]
        fn pairwise_kernels_match_reference((dim, a, b) in arb_vectors(), start in 0usize..3) {
            let start = start.min(a.len());
            let n = a.len() - start;
            let fa = fsl(a.clone(), dim as i32).slice(start, n);
            let lb = list(b.clone()).slice(start, n);
            let dot = dot_product(&fa, &lb).unwrap();
            let cos = cosine_similarity(&fa, &lb).unwrap();
            for i in 0..n {
                match (&a[start + i], &b[start + i]) {
                    (Some(x), Some(y)) => {
                        let d: f64 = x.iter().zip(y).map(|(p, q)| *p as f64 * *q as f64).sum();
                        prop_assert!((dot.value(i) - d).abs() <= 1e-9 * (1.0 + d.abs()));
                        let nx: f64 = x.iter().map(|p| (*p as f64).powi(2)).sum();
                        let ny: f64 = y.iter().map(|p| (*p as f64).powi(2)).sum();
                        if nx == 0.0 || ny == 0.0 {
                            prop_assert!(cos.is_null(i));
                        } else {
                            let c = d / (nx.sqrt() * ny.sqrt());
                            prop_assert!((cos.value(i) - c).abs() < 1e-9);
                        }
                    }
                    _ => {
                        prop_assert!(dot.is_null(i));
                        prop_assert!(cos.is_null(i));
                    }
                }
            }
        }

        #[test]
        fn norm_and_normalize_match_reference((dim, a, _b) in arb_vectors(), start in 0usize..3) {
            let start = start.min(a.len());
            let n = a.len() - start;
            let column = list(a.clone()).slice(start, n);
            let norms = l2_norm(&column).unwrap();
            let unit = l2_normalize(&column).unwrap();
            let unit = unit.as_list::<i32>();
            prop_assert_eq!(norms.len(), n);
            for (i, row) in a[start..].iter().enumerate() {
                match row {
                    None => {
                        prop_assert!(norms.is_null(i));
                        prop_assert!(unit.is_null(i));
                    }
                    Some(v) => {
                        let norm = v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
                        prop_assert!((norms.value(i) - norm).abs() <= 1e-9 * (1.0 + norm));
                        if norm == 0.0 {
                            prop_assert!(unit.is_null(i));
                        } else {
                            let got = unit.value(i);
                            let got = got.as_primitive::<Float32Type>();
                            prop_assert_eq!(got.len(), dim);
                            for (g, x) in got.values().iter().zip(v) {
                                prop_assert!((*g as f64 - *x as f64 / norm).abs() < 1e-6);
                            }
                        }
                    }
                }
            }
        }

        #[test]
        fn dequantize_matches_reference(q in prop::collection::vec(any::<Option<u8>>(), 0..50), scale in 0.001f64..10.0, zp in 0i64..=255, start in 0usize..3) {
            let start = start.min(q.len());
            let col = UInt8Array::from(q.clone()).slice(start, q.len() - start);
            let out = dequantize_int8(&col, &Scalar::new(Float64Array::from(vec![scale])), &Scalar::new(arrow::array::Int64Array::from(vec![zp]))).unwrap();
            let out = out.as_primitive::<Float32Type>();
            for (i, v) in q[start..].iter().enumerate() {
                prop_assert_eq!(out.is_valid(i).then(|| out.value(i)), v.map(|v| ((v as f64 - zp as f64) * scale) as f32));
            }
        }

        #[test]
        fn quantize_matches_round_ties_even(x in prop::collection::vec(-300f64..300.0, 0..50), scale in 0.01f64..10.0, zp in 0i64..=255) {
            let col = Float64Array::from(x.clone());
            let q = quantize_int8(&col, &Scalar::new(Float64Array::from(vec![scale])), &Scalar::new(arrow::array::Int64Array::from(vec![zp]))).unwrap();
            let q = q.as_primitive::<UInt8Type>();
            for (i, v) in x.iter().enumerate() {
                let expected = ((v / scale).round_ties_even() + zp as f64).clamp(0.0, 255.0) as u8;
                prop_assert_eq!(q.value(i), expected);
            }
        }
    }
}
