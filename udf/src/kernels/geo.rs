//! Great-circle distance.

use arrow::array::{Array, Datum, Float64Array};
use arrow::buffer::{BooleanBuffer, NullBuffer};

use super::operand::{map_f64, F64Operand};
use super::Result;

/// Mean Earth radius (IUGG), in kilometres.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// Haversine distance in kilometres between `(lat1, lon1)` and `(lat2, lon2)` in degrees.
///
/// A latitude outside `[-90, 90]` gives null (bad coordinates are common in event data and
/// should not fail a whole batch); longitudes wrap. NaN in any coordinate gives NaN.
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
    let distances = map_f64(
        NAME,
        ["lat1", "lon1", "lat2", "lon2"],
        [&lat1, &lon1, &lat2, &lon2],
        |[a, b, c, d]| haversine(a, b, c, d),
    )?;
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

#[inline(always)]
fn haversine(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (phi1, phi2) = (lat1.to_radians(), lat2.to_radians());
    let dphi = phi2 - phi1;
    // Longitudes wrap: reduce far-out ones exactly (`rem_euclid` is exact), so that
    // their difference neither overflows nor loses its digits in `to_radians`.
    let (lon1, lon2) = if lon1.abs() > 720.0 || lon2.abs() > 720.0 {
        (lon1.rem_euclid(360.0), lon2.rem_euclid(360.0))
    } else {
        (lon1, lon2)
    };
    let dlambda = (lon2 - lon1).to_radians();
    let h = (dphi * 0.5).sin().powi(2) + phi1.cos() * phi2.cos() * (dlambda * 0.5).sin().powi(2);
    // Rounding can push h a hair above 1 for antipodal points (`min` would also turn NaN into 1).
    let h = if h > 1.0 { 1.0 } else { h };
    2.0 * EARTH_RADIUS_KM * h.sqrt().asin()
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

    proptest! {
        #[test]
        fn matches_reference_and_is_symmetric(
            pts in prop::collection::vec((-90f64..=90.0, -180f64..=180.0, -90f64..=90.0, -180f64..=180.0), 0..40),
            start in 0usize..4,
        ) {
            let start = start.min(pts.len());
            let n = pts.len() - start;
            let col = |f: fn(&(f64, f64, f64, f64)) -> f64| Float64Array::from(pts.iter().map(f).collect::<Vec<_>>()).slice(start, n);
            let (a, b, c, d) = (col(|p| p.0), col(|p| p.1), col(|p| p.2), col(|p| p.3));
            let out = haversine_km(&a, &b, &c, &d).unwrap();
            let back = haversine_km(&c, &d, &a, &b).unwrap();
            for (i, p) in pts[start..].iter().enumerate() {
                let (p1, p2) = (p.0.to_radians(), p.2.to_radians());
                let h = ((p2 - p1) / 2.0).sin().powi(2) + p1.cos() * p2.cos() * ((p.3 - p.1).to_radians() / 2.0).sin().powi(2);
                let expected = 2.0 * EARTH_RADIUS_KM * h.min(1.0).sqrt().asin();
                prop_assert!((out.value(i) - expected).abs() < 1e-6);
                prop_assert!((out.value(i) - back.value(i)).abs() < 1e-6);
                prop_assert!(out.value(i) >= 0.0 && out.value(i) <= std::f64::consts::PI * EARTH_RADIUS_KM + 1e-6);
            }
        }
    }
}
