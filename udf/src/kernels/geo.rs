//! Great-circle distance.
//!
//! The trigonometry is our own: polynomials evaluated with plain multiplies and adds over
//! blocks of rows, which the compiler turns into SIMD. libm's scalar `sin`/`asin` per row
//! cost about 60 ns a row; numpy's vectorized ones were faster than that. Every machine
//! computes the same operations in the same order (no fused multiply-add), so the result
//! is bit-identical whichever instruction set runs it.

use arrow::array::{Array, Datum, Float64Array};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use std::f64::consts::FRAC_PI_2;

use super::operand::{compute_f64, F64Operand, Operand};
use super::Result;

/// Mean Earth radius (IUGG), in kilometres.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// Haversine distance in kilometres between `(lat1, lon1)` and `(lat2, lon2)` in degrees.
///
/// A latitude outside `[-90, 90]` gives null (bad coordinates are common in event data and
/// should not fail a whole batch); longitudes wrap. NaN in any coordinate gives NaN.
///
/// Accuracy: within a micrometre of the same formula in exact arithmetic on the same
/// float64 inputs, near-antipodal points included; see `docs/functions.md`.
pub fn haversine_km(
    lat1: &dyn Datum,
    lon1: &dyn Datum,
    lat2: &dyn Datum,
    lon2: &dyn Datum,
) -> Result<Float64Array> {
    const NAME: &str = "haversine_km";
    let lat1 = F64Operand::from_datum(NAME, "lat1", lat1)?;
    let lon1 = F64Operand::from_datum(NAME, "lon1", lon1)?;
    let lat2 = F64Operand::from_datum(NAME, "lat2", lat2)?;
    let lon2 = F64Operand::from_datum(NAME, "lon2", lon2)?;
    let operands = [&lat1, &lon1, &lat2, &lon2];
    let distances = compute_f64(NAME, ["lat1", "lon1", "lat2", "lon2"], operands, |len| {
        distances(operands, len)
    })?;
    let out_of_range = |op: &F64Operand| match op {
        F64Operand::Scalar(v) => v.is_some_and(|v| v.abs() > 90.0),
        F64Operand::Column { values, .. } => values.iter().any(|v| v.abs() > 90.0),
    };
    if !out_of_range(&lat1) && !out_of_range(&lat2) {
        return Ok(distances);
    }
    // NaN latitudes stay valid (NaN in, NaN out); only real out-of-range values are nulled.
    let lat_ok = |op: &F64Operand, row| op.value(row).abs() <= 90.0 || op.value(row).is_nan();
    let in_range = BooleanBuffer::collect_bool(distances.len(), |row| {
        lat_ok(&lat1, row) && lat_ok(&lat2, row)
    });
    let nulls = NullBuffer::union(distances.nulls(), Some(&NullBuffer::new(in_range)));
    let (_, values, _) = distances.into_parts();
    Ok(Float64Array::new(values, nulls))
}

/// Rows per block: each block's arguments are copied into arrays on the stack (a scalar
/// argument is repeated), so the arithmetic runs over plain arrays whatever mix of
/// columns and scalars the caller passed.
const BLOCK: usize = 256;

/// The distance of every row (values under nulls are computed too, and ignored).
fn distances(operands: [&F64Operand; 4], len: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(len);
    distance_loop::run(operands, len, &mut out);
    out
}

multiversion! {
    /// [`distances_portable`] also compiled for AVX2 (4 lanes instead of SSE2's 2) and
    /// AVX-512F (8 lanes). Rust never fuses a multiply and an add unless asked
    /// (`mul_add`), and every other operation here (add, multiply, divide, sqrt, compare)
    /// is exactly rounded by IEEE 754, so every build gives the same bits; a test checks.
    mod distance_loop {
        fn(operands: [&F64Operand; 4], len: usize, out: &mut Vec<f64>);
        portable = distances_portable;
        avx512 = ["avx512f"];
    }
}

#[inline(always)]
fn distances_portable(operands: [&F64Operand; 4], len: usize, out: &mut Vec<f64>) {
    let mut args = [[0.0f64; BLOCK]; 4];
    let mut block_out = [0.0f64; BLOCK];
    let mut start = 0;
    while start < len {
        let n = BLOCK.min(len - start);
        for (arg, op) in args.iter_mut().zip(operands) {
            match op {
                Operand::Column { values, .. } => {
                    arg[..n].copy_from_slice(&values[start..start + n])
                }
                Operand::Scalar(v) => arg[..n].fill(v.unwrap_or_default()),
            }
        }
        let [lat1, lon1, lat2, lon2] = &mut args;
        wrap_far_longitudes(&mut lon1[..n], &mut lon2[..n]);
        for ((((d, &a), &b), &c), &e) in block_out[..n]
            .iter_mut()
            .zip(&lat1[..n])
            .zip(&lon1[..n])
            .zip(&lat2[..n])
            .zip(&lon2[..n])
        {
            *d = haversine(a, b, c, e);
        }
        out.extend_from_slice(&block_out[..n]);
        start += n;
    }
}

/// Longitudes wrap: far-out ones (beyond two turns) are reduced with `rem_euclid` (exact,
/// except that a tiny negative value rounds to a whole turn, 360) before their difference
/// is taken, so that it neither overflows nor loses its digits. Rare, so the check is a
/// branch-free scan and the fix a scalar loop.
#[inline(always)]
fn wrap_far_longitudes(lon1: &mut [f64], lon2: &mut [f64]) {
    let far = |a: f64, b: f64| a.abs() > 720.0 || b.abs() > 720.0;
    let any_far = lon1
        .iter()
        .zip(lon2.iter())
        .fold(false, |acc, (&a, &b)| acc | far(a, b));
    if any_far {
        for (a, b) in lon1.iter_mut().zip(lon2.iter_mut()) {
            if far(*a, *b) {
                (*a, *b) = (a.rem_euclid(360.0), b.rem_euclid(360.0));
            }
        }
    }
}

#[inline(always)]
fn haversine(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (phi1, phi2) = (lat1.to_radians(), lat2.to_radians());
    // Whole turns are removed from the longitude difference exactly (the difference is
    // below 2^11 and the turns are integers), leaving [-180, 180] for the polynomials.
    let dlon = lon2 - lon1;
    let dlon = dlon - round_small(dlon * (1.0 / 360.0)) * 360.0;
    let half_dlambda = dlon.to_radians() * 0.5;
    let sin_dphi = sin_half_turn((phi2 - phi1) * 0.5);
    let sin_sum = sin_half_turn((phi1 + phi2) * 0.5);
    let sin_dlambda = sin_half_turn(half_dlambda);
    let cos_dlambda = cos_half_turn(half_dlambda);
    let cos_cos = cos_half_turn(phi1) * cos_half_turn(phi2);
    // The haversine of the angle, h, and of its supplement, 1 - h, each computed without
    // cancellation: near the antipode, 1 - h is tiny and `1.0 - h` would have lost its
    // digits (the float64 textbook formula is off by up to 20 cm there).
    let h = sin_dphi * sin_dphi + cos_cos * (sin_dlambda * sin_dlambda);
    let supplement = sin_sum * sin_sum + cos_cos * (cos_dlambda * cos_dlambda);
    // asin(sqrt(h)) from the smaller of the two (both are within [0, 1] and sum to 1);
    // the comparison keeps NaN.
    let near = h <= supplement;
    let x = if near { h } else { supplement };
    let x = if x < 0.0 { 0.0 } else { x };
    let half_angle = asin_sqrt(x);
    let half_angle = if near {
        half_angle
    } else {
        FRAC_PI_2 - half_angle
    };
    2.0 * EARTH_RADIUS_KM * half_angle
}

/// Round to the nearest integer for |x| < 2^51, branch-free (adding 1.5 * 2^52 pushes
/// the fraction out of the mantissa).
#[inline(always)]
fn round_small(x: f64) -> f64 {
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    (x + SHIFT) - SHIFT
}

/// Coefficients of `(sin(x) - x) / x^3` as a polynomial in `x^2` on `[0, (pi/2)^2]`
/// (Chebyshev interpolation, degree 7): sin within 2 ulp on `[-pi/2, pi/2]`.
const SIN_COEFFICIENTS: [f64; 8] = [
    -0.16666666666666666,
    0.008333333333333316,
    -0.00019841269841254974,
    2.7557319219163234e-06,
    -2.5052107616996182e-08,
    1.6058977312464087e-10,
    -7.643970296798572e-13,
    2.7314447669863995e-15,
];

/// Coefficients of `(asin(s) - s) / s^3` as a polynomial in `z = s^2` on `[0, 1/4]`
/// (Chebyshev interpolation, degree 11): asin within 6 ulp on `[0, 1/2]`.
const ASIN_COEFFICIENTS: [f64; 12] = [
    0.1666666666666665,
    0.07500000000020764,
    0.044642857103423646,
    0.03038194736709848,
    0.02237204763174451,
    0.017355259955786323,
    0.013929652902326633,
    0.011875494382636922,
    0.0078029494773533175,
    0.01603551434914882,
    -0.010749050339697808,
    0.028169218060881414,
];

#[inline(always)]
fn horner<const N: usize>(coefficients: &[f64; N], t: f64) -> f64 {
    let mut acc = coefficients[N - 1];
    for c in coefficients[..N - 1].iter().rev() {
        acc = acc * t + c;
    }
    acc
}

/// sin(x) for x in `[-pi/2, pi/2]` (a little beyond stays accurate).
#[inline(always)]
fn sin_half_turn(x: f64) -> f64 {
    let t = x * x;
    x + x * t * horner(&SIN_COEFFICIENTS, t)
}

/// cos(x) for x in `[-pi/2, pi/2]`, as sin(pi/2 - |x|); never negative.
#[inline(always)]
fn cos_half_turn(x: f64) -> f64 {
    let c = sin_half_turn(FRAC_PI_2 - x.abs());
    if c < 0.0 {
        0.0
    } else {
        c
    }
}

/// asin(sqrt(h)) for h in `[0, 1]`. Above h = 1/4 it uses
/// asin(s) = pi/2 - 2 asin(sqrt((1 - s) / 2)), with `1 - s` computed as
/// `(1 - h) / (1 + s)` (`1 - h` is exact there), which keeps near-antipodal
/// distances accurate.
#[inline(always)]
fn asin_sqrt(h: f64) -> f64 {
    let s = h.sqrt();
    let upper = h > 0.25;
    let z = if upper {
        (1.0 - h) / (2.0 * (1.0 + s))
    } else {
        h
    };
    let r = if upper { z.sqrt() } else { s };
    let p = r + r * z * horner(&ASIN_COEFFICIENTS, z);
    if upper {
        FRAC_PI_2 - 2.0 * p
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Scalar;
    use proptest::prelude::*;

    fn s(v: f64) -> Scalar<Float64Array> {
        Scalar::new(Float64Array::from(vec![v]))
    }

    #[test]
    fn known_distances() {
        // Paris -> London, about 343.5 km.
        let d = haversine_km(&s(48.8566), &s(2.3522), &s(51.5074), &s(-0.1278)).unwrap();
        assert!((d.value(0) - 343.56).abs() < 0.1, "{}", d.value(0));
        // Antipodes: half the circumference.
        let d = haversine_km(&s(0.0), &s(0.0), &s(0.0), &s(180.0)).unwrap();
        assert!((d.value(0) - std::f64::consts::PI * EARTH_RADIUS_KM).abs() < 1e-9);
        let d = haversine_km(&s(10.0), &s(10.0), &s(10.0), &s(10.0)).unwrap();
        assert_eq!(d.value(0), 0.0);
    }

    #[test]
    fn bad_latitude_is_null_nan_is_nan() {
        let lat = Float64Array::from(vec![Some(91.0), Some(-45.0), None, Some(f64::NAN)]);
        let d = haversine_km(&lat, &s(0.0), &s(0.0), &s(0.0)).unwrap();
        assert!(d.is_null(0));
        assert!(d.is_valid(1));
        assert!(d.is_null(2));
        assert!(d.value(3).is_nan());
        let d = haversine_km(&s(0.0), &s(0.0), &s(-90.5), &s(0.0)).unwrap();
        assert!(d.is_null(0));
    }

    /// The same formula with libm's scalar functions, well-conditioned everywhere: the
    /// angle from atan2 of the haversine and of its supplement (the textbook
    /// `asin(sqrt(h))` is off by centimetres near the antipode, where `h` rounds to 1).
    fn libm_haversine(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
        let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
        let (lon1, lon2) = if lon1.abs() > 720.0 || lon2.abs() > 720.0 {
            (lon1.rem_euclid(360.0), lon2.rem_euclid(360.0))
        } else {
            (lon1, lon2)
        };
        let half_dlambda = (lon2 - lon1).to_radians() / 2.0;
        let h = ((p2 - p1) / 2.0).sin().powi(2) + p1.cos() * p2.cos() * half_dlambda.sin().powi(2);
        let q = ((p2 + p1) / 2.0).sin().powi(2) + p1.cos() * p2.cos() * half_dlambda.cos().powi(2);
        2.0 * EARTH_RADIUS_KM * h.max(0.0).sqrt().atan2(q.max(0.0).sqrt())
    }

    /// Relative error in units of the last place of a double's mantissa (2^-52 of the value).
    fn ulps(got: f64, reference: f64) -> f64 {
        if got == reference {
            return 0.0;
        }
        (got - reference).abs() / (reference.abs() * f64::EPSILON)
    }

    #[test]
    fn sine_within_three_ulp_of_libm() {
        let n = 200_000;
        let mut worst: f64 = 0.0;
        for i in 0..=n {
            let x = -FRAC_PI_2 + std::f64::consts::PI * i as f64 / n as f64;
            for x in [x, x * 1e-3, x * 1e-9, x * 1e-300] {
                worst = worst.max(ulps(sin_half_turn(x), x.sin()));
            }
        }
        assert!(worst <= 3.0, "sin: {worst} ulp");
        assert_eq!(sin_half_turn(0.0), 0.0);
        assert!(sin_half_turn(f64::NAN).is_nan());
        let at_pole = cos_half_turn(FRAC_PI_2);
        assert!((0.0..1e-15).contains(&at_pole), "{at_pole}");
        assert_eq!(cos_half_turn(0.0), 1.0);
    }

    #[test]
    fn arcsine_of_root_within_eight_ulp() {
        // asin(sqrt(h)) = atan2(sqrt(h), sqrt(1 - h)) is well-conditioned everywhere
        // (1 - h is exact for h >= 1/2), so libm's atan2 is the reference.
        let reference = |h: f64| h.sqrt().atan2((1.0 - h).sqrt());
        let n = 400_000;
        let mut worst: f64 = 0.0;
        for i in 0..=n {
            let h = i as f64 / n as f64;
            for h in [h, h * 1e-12, 1.0 - h * 1e-12, 1.0 - f64::EPSILON * h] {
                worst = worst.max(ulps(asin_sqrt(h), reference(h)));
            }
        }
        assert!(worst <= 8.0, "asin: {worst} ulp");
        assert_eq!(asin_sqrt(0.0), 0.0);
        assert_eq!(asin_sqrt(1.0), FRAC_PI_2);
        assert!(asin_sqrt(f64::NAN).is_nan());
    }

    /// Deterministic coordinates that cover the awkward places: poles, antipodes, the
    /// date line, coincident points, wrapped and far-out longitudes, and the extremes.
    fn awkward_points() -> Vec<(f64, f64, f64, f64)> {
        let lats = [
            -90.0,
            -89.999_999_9,
            -45.0,
            -1e-300,
            0.0,
            5e-324,
            1e-9,
            33.3,
            89.999_999_9,
            90.0,
        ];
        let lons = [
            -720.0,
            -180.0,
            -179.999_999_9,
            -0.0,
            0.0,
            1e-9,
            90.0,
            179.999_999_9,
            180.0,
            540.0,
            721.0,
            -1e300,
            f64::MAX,
        ];
        let mut points = Vec::new();
        for &a in &lats {
            for &b in &lons {
                for &c in &lats {
                    for &d in &[0.0, 180.0, b, b + 1e-7, -b, 179.999_999] {
                        points.push((a, b, c, d));
                        points.push((a, b, -a, d));
                    }
                }
            }
        }
        points
    }

    #[test]
    fn within_a_micrometre_of_libm_at_awkward_points() {
        for (a, b, c, d) in awkward_points() {
            let got = haversine_km(&s(a), &s(b), &s(c), &s(d)).unwrap().value(0);
            let want = libm_haversine(a, b, c, d);
            assert!(
                (got - want).abs() < 1e-9,
                "({a}, {b}) -> ({c}, {d}): {got} vs {want}"
            );
            assert!((0.0..=std::f64::consts::PI * EARTH_RADIUS_KM).contains(&got));
        }
    }

    #[test]
    fn non_finite_longitude_gives_nan() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let d = haversine_km(&s(1.0), &s(bad), &s(2.0), &s(3.0)).unwrap();
            assert!(d.is_valid(0) && d.value(0).is_nan(), "{bad}");
            let d = haversine_km(&s(1.0), &s(3.0), &s(2.0), &s(bad)).unwrap();
            assert!(d.is_valid(0) && d.value(0).is_nan(), "{bad}");
        }
    }

    /// Every block size, every mix of columns and scalars, and the AVX2 build give the
    /// same bits as the row-by-row formula.
    #[test]
    fn columns_scalars_and_instruction_sets_agree_bit_for_bit() {
        let points = awkward_points();
        let col = |f: fn(&(f64, f64, f64, f64)) -> f64| {
            Float64Array::from(points.iter().map(f).collect::<Vec<_>>())
        };
        let (a, b, c, d) = (col(|p| p.0), col(|p| p.1), col(|p| p.2), col(|p| p.3));
        let out = haversine_km(&a, &b, &c, &d).unwrap();
        for (i, &(pa, pb, pc, pd)) in points.iter().enumerate() {
            let (mut lon1, mut lon2) = ([pb], [pd]);
            wrap_far_longitudes(&mut lon1, &mut lon2);
            let one = haversine(pa, lon1[0], pc, lon2[0]);
            assert_eq!(out.values()[i].to_bits(), one.to_bits(), "row {i}");
        }
        let (ops_a, ops_b, ops_c, ops_d) = (
            F64Operand::from_array(&a, false),
            F64Operand::from_array(&b, false),
            F64Operand::from_array(&c, false),
            F64Operand::from_array(&d, false),
        );
        let mut portable = Vec::new();
        distances_portable(
            [&ops_a, &ops_b, &ops_c, &ops_d],
            points.len(),
            &mut portable,
        );
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&portable), bits(out.values()));
        distance_loop::each(|build, distances| {
            let mut wide = Vec::new();
            distances([&ops_a, &ops_b, &ops_c, &ops_d], points.len(), &mut wide);
            assert_eq!(bits(&wide), bits(&portable), "{build}");
        });
        // A scalar second point equals the same value repeated as a column.
        let lat2 = Float64Array::from(vec![-33.9; points.len()]);
        let lon2 = Float64Array::from(vec![151.2; points.len()]);
        let by_column = haversine_km(&a, &b, &lat2, &lon2).unwrap();
        let by_scalar = haversine_km(&a, &b, &s(-33.9), &s(151.2)).unwrap();
        assert_eq!(by_column, by_scalar);
    }

    proptest! {
        #[test]
        fn matches_reference_and_is_symmetric(
            pts in prop::collection::vec((-90f64..=90.0, -1000f64..=1000.0, -90f64..=90.0, -1000f64..=1000.0), 0..600),
            start in 0usize..4,
        ) {
            let start = start.min(pts.len());
            let n = pts.len() - start;
            let col = |f: fn(&(f64, f64, f64, f64)) -> f64| Float64Array::from(pts.iter().map(f).collect::<Vec<_>>()).slice(start, n);
            let (a, b, c, d) = (col(|p| p.0), col(|p| p.1), col(|p| p.2), col(|p| p.3));
            let out = haversine_km(&a, &b, &c, &d).unwrap();
            let back = haversine_km(&c, &d, &a, &b).unwrap();
            for (i, p) in pts[start..].iter().enumerate() {
                let expected = libm_haversine(p.0, p.1, p.2, p.3);
                prop_assert!((out.value(i) - expected).abs() < 1e-9);
                prop_assert!((out.value(i) - back.value(i)).abs() < 1e-9);
                prop_assert!(out.value(i) >= 0.0 && out.value(i) <= std::f64::consts::PI * EARTH_RADIUS_KM + 1e-6);
            }
        }
    }
}
