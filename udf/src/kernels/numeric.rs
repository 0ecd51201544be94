//! Numeric scaling and bucketing.

use arrow::array::{Array, Datum, Float64Array, Int32Array, PrimitiveArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::arity::unary;
use arrow::datatypes::Int32Type;

use super::operand::{broadcast_len, map_f64, F64Operand};
use super::{KernelError, Result};

/// `(x - mean) / std`, the z-score used by StandardScaler.
///
/// `std` must be > 0 (a zero or negative standard deviation is an error, not `inf`).
/// NaN in `x` or `mean` gives NaN.
pub fn standard_scale(x: &dyn Datum, mean: &dyn Datum, std: &dyn Datum) -> Result<Float64Array> {
    const NAME: &str = "standard_scale";
    let x = F64Operand::from_datum(NAME, "x", x)?;
    let mean = F64Operand::from_datum(NAME, "mean", mean)?;
    let std = F64Operand::from_datum(NAME, "std", std)?;
    std.ensure(NAME, "std", "a standard deviation > 0", |s| s > 0.0)?;
    match (x.column(), mean.scalar(), std.scalar()) {
        (Some(column), Some(m), Some(s)) => Ok(unary(column, |v| z_score(v, m, s))),
        _ => map_f64(NAME, ["x", "mean", "std"], [&x, &mean, &std], |[v, m, s]| {
            z_score(v, m, s)
        }),
    }
}

#[inline(always)]
fn z_score(v: f64, mean: f64, std: f64) -> f64 {
    let difference = v - mean;
    if difference.is_infinite() && v.is_finite() && mean.is_finite() {
        // `v - mean` overflowed although both are finite: halve first (exact at these
        // magnitudes), so a representable z-score is not lost to an infinite intermediate.
        ((v * 0.5 - mean * 0.5) / std) * 2.0
    } else {
        difference / std
    }
}

/// `(x - lo) / (hi - lo)` clamped to `[0, 1]`, as MinMaxScaler with clipping.
///
/// `hi` must be greater than `lo`. NaN in `x` gives NaN (it is not clamped).
pub fn min_max_scale(x: &dyn Datum, lo: &dyn Datum, hi: &dyn Datum) -> Result<Float64Array> {
    const NAME: &str = "min_max_scale";
    let x = F64Operand::from_datum(NAME, "x", x)?;
    let lo = F64Operand::from_datum(NAME, "lo", lo)?;
    let hi = F64Operand::from_datum(NAME, "hi", hi)?;
    let len = broadcast_len(NAME, &[("x", x.len()), ("lo", lo.len()), ("hi", hi.len())])?;
    // hi > lo is checked only where both are present; NaN bounds fail the check.
    let constant_bounds = lo.len().is_none() && hi.len().is_none();
    let rows = if constant_bounds { 1 } else { len };
    if let Some(row) = (0..rows).find(|&r| {
        // NaN bounds are incomparable and fail too.
        lo.is_valid(r)
            && hi.is_valid(r)
            && hi.value(r).partial_cmp(&lo.value(r)) != Some(std::cmp::Ordering::Greater)
    }) {
        let at = if constant_bounds {
            String::new()
        } else {
            format!(" at row {row}")
        };
        return Err(KernelError::new(
            NAME,
            "hi",
            format!(
                "expected hi > lo, found lo = {} and hi = {}{at}",
                lo.value(row),
                hi.value(row)
            ),
        ));
    }
    match (x.column(), lo.scalar(), hi.scalar()) {
        (Some(column), Some(l), Some(h)) => Ok(unary(column, |v| unit_range(v, l, h))),
        _ => map_f64(NAME, ["x", "lo", "hi"], [&x, &lo, &hi], |[v, l, h]| {
            unit_range(v, l, h)
        }),
    }
}

#[inline(always)]
fn unit_range(v: f64, lo: f64, hi: f64) -> f64 {
    let range = hi - lo;
    let scaled = if range.is_infinite() && hi.is_finite() && lo.is_finite() {
        // The bounds are more than f64::MAX apart: halve everything (exact at these
        // magnitudes) instead of dividing infinity by infinity.
        (v * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5)
    } else {
        // `v - lo` may overflow only when v is far outside [lo, hi]: the clamp is right.
        (v - lo) / range
    };
    scaled.clamp(0.0, 1.0)
}

/// Sorted bucket boundaries, checked once and reused for every row.
#[derive(Debug, Clone, PartialEq)]
pub struct Boundaries(Vec<f64>);

/// Above this many boundaries a binary search beats a branch-free linear count.
const LINEAR_SCAN_MAX: usize = 32;

impl Boundaries {
    /// Boundaries must be non-empty, free of NaN and strictly increasing.
    pub fn new(function: &'static str, values: Vec<f64>) -> Result<Self> {
        if values.is_empty() {
            return Err(KernelError::new(
                function,
                "boundaries",
                "expected at least one boundary, found an empty list",
            ));
        }
        if let Some(i) = values.iter().position(|b| b.is_nan()) {
            return Err(KernelError::new(
                function,
                "boundaries",
                format!("expected numbers, found NaN at position {i}"),
            ));
        }
        if let Some(i) = values.windows(2).position(|w| w[0] >= w[1]) {
            return Err(KernelError::new(
                function,
                "boundaries",
                format!(
                    "expected strictly increasing values, found {} then {} at positions {} and {}",
                    values[i],
                    values[i + 1],
                    i,
                    i + 1
                ),
            ));
        }
        Ok(Self(values))
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.0
    }

    /// Number of boundaries `<= v`: bucket `i` is `[b[i-1], b[i])`, left-closed.
    #[inline(always)]
    pub fn bucket_of(&self, v: f64) -> i32 {
        if self.0.len() <= LINEAR_SCAN_MAX {
            self.0.iter().map(|b| (*b <= v) as i32).sum()
        } else {
            self.0.partition_point(|b| *b <= v) as i32
        }
    }
}

/// Index of the bucket holding `x` for sorted `boundaries` `b0 < b1 < ... < b(n-1)`.
///
/// Buckets are left-closed: bucket 0 is `(-inf, b0)`, bucket `i` is `[b(i-1), b(i))`,
/// bucket `n` is `[b(n-1), +inf]`. The result is in `0..=n`. NaN has no bucket: null.
pub fn bucketize(x: &dyn Datum, boundaries: &Boundaries) -> Result<Int32Array> {
    const NAME: &str = "bucketize";
    let x = F64Operand::from_datum(NAME, "x", x)?;
    match x {
        F64Operand::Scalar(v) => Ok(Int32Array::from(vec![v
            .filter(|v| !v.is_nan())
            .map(|v| boundaries.bucket_of(v))])),
        F64Operand::Column { array, values } => {
            let buckets: PrimitiveArray<Int32Type> = unary(array, |v| boundaries.bucket_of(v));
            if !values.iter().any(|v| v.is_nan()) {
                return Ok(buckets);
            }
            let not_nan = NullBuffer::new(BooleanBuffer::collect_bool(values.len(), |i| {
                !values[i].is_nan()
            }));
            let nulls = NullBuffer::union(array.nulls(), Some(&not_nan));
            let (_, values, _) = buckets.into_parts();
            Ok(Int32Array::new(values, nulls))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Scalar;
    use proptest::prelude::*;

    fn scalar(v: f64) -> Scalar<Float64Array> {
        Scalar::new(Float64Array::from(vec![v]))
    }

    fn naive_standard_scale(x: &[Option<f64>], m: f64, s: f64) -> Vec<Option<f64>> {
        x.iter().map(|v| v.map(|v| (v - m) / s)).collect()
    }

    #[test]
    fn scaling_at_the_extremes_of_f64() {
        let one =
            |f: fn(&dyn Datum, &dyn Datum, &dyn Datum) -> Result<Float64Array>,
             x: f64,
             a: f64,
             b: f64| { f(&scalar(x), &scalar(a), &scalar(b)).unwrap().value(0) };
        assert_eq!(one(min_max_scale, 1e308, -1e308, 1e308), 1.0);
        assert_eq!(one(min_max_scale, -1e308, -1e308, 1e308), 0.0);
        assert_eq!(one(min_max_scale, 0.0, -f64::MAX, f64::MAX), 0.5);
        assert_eq!(one(min_max_scale, f64::MAX, 0.0, 1.0), 1.0);
        assert_eq!(one(min_max_scale, -f64::MAX, 0.0, 1.0), 0.0);
        assert_eq!(one(min_max_scale, 5e-324, 0.0, 1e-323), 0.5);
        assert_eq!(one(standard_scale, 1e308, -1e308, 4.0), 5e307);
        assert_eq!(one(standard_scale, f64::MAX, -f64::MAX, 2.0), f64::MAX);
        // The true z-score is beyond f64::MAX: infinity is right.
        assert_eq!(one(standard_scale, f64::MAX, -f64::MAX, 1.0), f64::INFINITY);
        assert_eq!(one(standard_scale, 5e-324, 0.0, 5e-324), 1.0);
        // Column bounds take the same path.
        let x = Float64Array::from(vec![1e308, 0.0]);
        let lo = Float64Array::from(vec![-1e308, -f64::MAX]);
        let hi = Float64Array::from(vec![1e308, f64::MAX]);
        let out = min_max_scale(&x, &lo, &hi).unwrap();
        assert_eq!(out.values().as_ref(), &[1.0, 0.5]);
    }

    proptest! {
        #[test]
        fn scaling_is_finite_where_the_result_is(
            v in prop_oneof![any::<f64>(), Just(f64::MAX), Just(-f64::MAX), Just(5e-324)],
            lo in prop_oneof![-1e308f64..1e308, Just(-f64::MAX)],
            width in prop_oneof![1e-300f64..1e308, Just(f64::MAX)],
        ) {
            let hi = lo + width;
            prop_assume!(hi.is_finite() && hi > lo);
            let out = min_max_scale(&scalar(v), &scalar(lo), &scalar(hi)).unwrap().value(0);
            if v.is_nan() {
                prop_assert!(out.is_nan());
            } else {
                prop_assert!((0.0..=1.0).contains(&out), "{v} in [{lo}, {hi}] gave {out}");
                if v <= lo { prop_assert_eq!(out, 0.0); }
                if v >= hi { prop_assert_eq!(out, 1.0); }
            }
            // Reference: half the z-score computed from halves, which cannot overflow.
            let std = width.max(1.0);
            let z = standard_scale(&scalar(v), &scalar(lo), &scalar(std)).unwrap().value(0);
            let half = (v / 2.0 - lo / 2.0) / std;
            if v.is_finite() && half.abs() < f64::MAX / 2.0 {
                prop_assert!(z.is_finite(), "({v} - {lo}) / {std} gave {z}");
                prop_assert!((z - 2.0 * half).abs() <= 4.0 * f64::EPSILON * z.abs() + 1e-300, "{z} vs {}", 2.0 * half);
            }
        }
    }

    #[test]
    fn standard_scale_column_with_scalars() {
        let x = Float64Array::from(vec![Some(1.0), None, Some(5.0), Some(f64::NAN)]);
        let out = standard_scale(&x, &scalar(1.0), &scalar(2.0)).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(out.value(0), 0.0);
        assert!(out.is_null(1));
        assert_eq!(out.value(2), 2.0);
        assert!(out.value(3).is_nan());
    }

    #[test]
    fn standard_scale_zero_std_is_an_error() {
        let x = Float64Array::from(vec![1.0]);
        let err = standard_scale(&x, &scalar(0.0), &scalar(0.0)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "standard_scale: argument `std`: expected a standard deviation > 0, found 0"
        );
        let std = Float64Array::from(vec![Some(1.0), None, Some(-1.0)]);
        let x = Float64Array::from(vec![1.0, 2.0, 3.0]);
        let err = standard_scale(&x, &scalar(0.0), &std).unwrap_err();
        assert!(err.message.ends_with("found -1 at row 2"), "{err}");
        let err = standard_scale(&x, &scalar(0.0), &scalar(f64::NAN)).unwrap_err();
        assert!(err.message.ends_with("found NaN"), "{err}");
    }

    #[test]
    fn standard_scale_null_scalar_gives_all_null() {
        let x = Float64Array::from(vec![1.0, 2.0]);
        let null = Scalar::new(Float64Array::from(vec![None]));
        let out = standard_scale(&x, &null, &scalar(1.0)).unwrap();
        assert_eq!(out.null_count(), 2);
    }

    #[test]
    fn standard_scale_all_scalars_gives_one_row() {
        let out = standard_scale(&scalar(3.0), &scalar(1.0), &scalar(4.0)).unwrap();
        assert_eq!(out, Float64Array::from(vec![0.5]));
    }

    #[test]
    fn standard_scale_empty() {
        let x = Float64Array::from(Vec::<f64>::new());
        assert_eq!(
            standard_scale(&x, &scalar(0.0), &scalar(1.0))
                .unwrap()
                .len(),
            0
        );
    }

    #[test]
    fn min_max_scale_clamps_and_validates() {
        let x = Float64Array::from(vec![Some(-5.0), Some(0.0), Some(5.0), Some(15.0), None]);
        let out = min_max_scale(&x, &scalar(0.0), &scalar(10.0)).unwrap();
        assert_eq!(
            out,
            Float64Array::from(vec![Some(0.0), Some(0.0), Some(0.5), Some(1.0), None])
        );
        let err = min_max_scale(&x, &scalar(3.0), &scalar(3.0)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "min_max_scale: argument `hi`: expected hi > lo, found lo = 3 and hi = 3"
        );
        let lo = Float64Array::from(vec![0.0, 0.0, 9.0, 0.0, 0.0]);
        let err = min_max_scale(&x, &lo, &scalar(3.0)).unwrap_err();
        assert!(err.message.ends_with("at row 2"), "{err}");
        let nan = min_max_scale(&scalar(f64::NAN), &scalar(0.0), &scalar(1.0)).unwrap();
        assert!(nan.value(0).is_nan());
    }

    #[test]
    fn boundaries_must_be_sorted() {
        let err = Boundaries::new("bucketize", vec![1.0, 3.0, 2.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bucketize: argument `boundaries`: expected strictly increasing values, found 3 then 2 at positions 1 and 2"
        );
        assert!(Boundaries::new("bucketize", vec![1.0, 1.0]).is_err());
        assert!(Boundaries::new("bucketize", vec![]).is_err());
        assert!(Boundaries::new("bucketize", vec![f64::NAN]).is_err());
    }

    #[test]
    fn bucketize_left_closed_edges() {
        let b = Boundaries::new("bucketize", vec![0.0, 10.0, 100.0]).unwrap();
        let x = Float64Array::from(vec![
            Some(-5.0),
            Some(0.0),
            Some(9.99),
            Some(10.0),
            Some(150.0),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(f64::NAN),
            None,
        ]);
        let out = bucketize(&x, &b).unwrap();
        assert_eq!(
            out,
            Int32Array::from(vec![
                Some(0),
                Some(1),
                Some(1),
                Some(2),
                Some(3),
                Some(3),
                Some(0),
                None,
                None
            ])
        );
    }

    fn arb_column() -> impl Strategy<Value = Vec<Option<f64>>> {
        prop::collection::vec(
            prop_oneof![
                8 => any::<f64>().prop_map(Some),
                1 => Just(Some(f64::NAN)),
                1 => Just(None),
            ],
            0..64,
        )
    }

    fn same(a: Option<f64>, b: Option<f64>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            (None, None) => true,
            _ => false,
        }
    }

    proptest! {
        #[test]
        fn standard_scale_matches_reference(
            col in arb_column(), start in 0usize..8, m in -1e6f64..1e6, s in 1e-6f64..1e6
        ) {
            let full = Float64Array::from(col.clone());
            let start = start.min(col.len());
            let sliced = full.slice(start, col.len() - start);
            let expected = naive_standard_scale(&col[start..], m, s);
            let out = standard_scale(&sliced, &scalar(m), &scalar(s)).unwrap();
            prop_assert_eq!(out.len(), expected.len());
            for (i, e) in expected.iter().enumerate() {
                let got = out.is_valid(i).then(|| out.value(i));
                prop_assert!(same(got, *e), "row {}: {:?} vs {:?}", i, got, e);
            }
            // The general path (column mean) agrees bit for bit with the fast path.
            let means = Float64Array::from(vec![m; sliced.len()]);
            let general = standard_scale(&sliced, &means, &scalar(s)).unwrap();
            for i in 0..sliced.len() {
                let a = out.is_valid(i).then(|| out.value(i));
                let b = general.is_valid(i).then(|| general.value(i));
                prop_assert!(same(a, b));
            }
        }

        #[test]
        fn min_max_scale_matches_reference(
            col in arb_column(), lo in -1e6f64..1e6, width in 1e-3f64..1e6
        ) {
            let hi = lo + width;
            let x = Float64Array::from(col.clone());
            let out = min_max_scale(&x, &scalar(lo), &scalar(hi)).unwrap();
            for (i, v) in col.iter().enumerate() {
                let expected = v.map(|v| {
                    let r = (v - lo) / (hi - lo);
                    if r.is_nan() { r } else { r.clamp(0.0, 1.0) }
                });
                let got = out.is_valid(i).then(|| out.value(i));
                prop_assert!(same(got, expected));
                if let Some(g) = got { prop_assert!(g.is_nan() || (0.0..=1.0).contains(&g)); }
            }
        }

        #[test]
        fn bucketize_matches_reference(
            col in arb_column(),
            mut bounds in prop::collection::vec(-1e3f64..1e3, 1..80),
            start in 0usize..4,
        ) {
            bounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
            bounds.dedup();
            let b = Boundaries::new("bucketize", bounds.clone()).unwrap();
            let start = start.min(col.len());
            let x = Float64Array::from(col.clone()).slice(start, col.len() - start);
            let out = bucketize(&x, &b).unwrap();
            for (i, v) in col[start..].iter().enumerate() {
                let expected = v.filter(|v| !v.is_nan()).map(|v| {
                    let mut bucket = 0;
                    for bound in &bounds { if v >= *bound { bucket += 1; } }
                    bucket
                });
                prop_assert_eq!(out.is_valid(i).then(|| out.value(i)), expected);
            }
        }
    }
}
