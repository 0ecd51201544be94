//! Test references for float sums and means, independent of [`super::exact_sum`]: 64-bit
//! limbs in `i128`, carried to a sign and magnitude, rounded from the top 128 bits.

/// The reference sum (`mean`: mean) of `values`, with the tolerance the kernel may be off
/// by: none for sums (correctly rounded), two ulps for means (a rounded sum, divided).
/// IEEE rules for NaN and infinities; an overflowing true sum is infinite.
pub(crate) fn float_reference(values: &[f64], mean: bool) -> (f64, f64) {
    let nan = values.iter().any(|v| v.is_nan());
    let positive = values.contains(&f64::INFINITY);
    let negative = values.contains(&f64::NEG_INFINITY);
    if nan || (positive && negative) {
        return (f64::NAN, 0.0);
    }
    if positive || negative {
        return (
            if positive {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            },
            0.0,
        );
    }
    let sum = exact_sum(values);
    if !mean {
        return (sum, 0.0);
    }
    let n = values.len() as f64;
    let expected = if sum.is_finite() {
        sum / n
    } else {
        // Scaled down by 2^-64 (losing only bits far below the result) and back.
        const DOWN: f64 = 1.0 / 18_446_744_073_709_551_616.0;
        let scaled: Vec<f64> = values.iter().map(|v| v * DOWN).collect();
        exact_sum(&scaled) / n / DOWN
    };
    (expected, 2.0 * (expected.abs() * f64::EPSILON).max(5e-324))
}

/// The correctly rounded sum of finite floats, by adding them as exact fixed-point
/// numbers of 40 64-bit limbs (units of 2^-1074).
pub(crate) fn exact_sum(values: &[f64]) -> f64 {
    let mut total: Vec<i128> = vec![0; 40]; // little-endian limbs of 64 bits
    for &x in values {
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1 << 52) - 1);
        let mantissa = if exponent == 0 {
            fraction
        } else {
            fraction | (1 << 52)
        };
        let shift = (exponent.max(1) - 1) as usize; // x = mantissa * 2^(shift - 1074)
        let (limb, offset) = (shift / 64, shift % 64);
        let wide = (mantissa as u128) << offset;
        let sign = if x < 0.0 { -1 } else { 1 };
        total[limb] += sign * (wide as u64) as i128;
        total[limb + 1] += sign * ((wide >> 64) as u64) as i128;
    }
    for i in 0..total.len() - 1 {
        let carry = total[i].div_euclid(1 << 64);
        total[i] -= carry << 64;
        total[i + 1] += carry;
    }
    let negative = total[total.len() - 1] < 0;
    if negative {
        // Two's complement over the limbs.
        let mut borrow = 0i128;
        for limb in total.iter_mut() {
            let v = -*limb - borrow;
            borrow = if v < 0 { 1 } else { 0 };
            *limb = v.rem_euclid(1 << 64);
        }
    }
    let Some(top) = total.iter().rposition(|&l| l != 0) else {
        return 0.0;
    };
    // The top two limbs (the value is mantissa * 2^exponent plus the sticky rest).
    let low = top.saturating_sub(1);
    let mut mantissa: u128 = 0;
    for limb in total[low..=top].iter().rev() {
        mantissa = (mantissa << 64) | (*limb as u128);
    }
    let exponent = low as i64 * 64 - 1074;
    let sticky = total[..low].iter().any(|&l| l != 0);
    let lead = 127 - mantissa.leading_zeros() as i64;
    // Keep 53 bits, fewer where the result is subnormal (its last bit weighs 2^-1074).
    let drop = (lead + 1 - 53).max(0).max(-1074 - exponent) as u32;
    let kept = mantissa >> drop;
    let rest = mantissa & ((1u128 << drop) - 1);
    let half = if drop == 0 { 0 } else { 1u128 << (drop - 1) };
    let round_up = drop > 0 && (rest > half || (rest == half && (sticky || kept & 1 == 1)));
    let kept = kept + round_up as u128;
    // kept ≤ 2^53 is exact as a double, and so is the power of two (2^-1074 and up).
    let power = exponent + drop as i64;
    let scale = if power > 1023 {
        f64::INFINITY
    } else if power >= -1022 {
        f64::from_bits(((power + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (power + 1074))
    };
    let value = kept as f64 * scale;
    if negative {
        -value
    } else {
        value
    }
}

#[test]
fn the_reference_rounds_correctly() {
    assert_eq!(exact_sum(&[0.1, 0.2]), 0.1 + 0.2);
    assert_eq!(exact_sum(&[1e100, 1.0, -1e100]), 1.0);
    assert_eq!(exact_sum(&[5e-324, 5e-324, 5e-324]), 1.5e-323);
    assert_eq!(exact_sum(&[f64::MAX, f64::MAX]), f64::INFINITY);
    assert_eq!(exact_sum(&[-f64::MAX, 9e291]), -f64::MAX);
    assert_eq!(exact_sum(&[-f64::MAX, 1e292]), -1.7976931348623155e308);
    assert_eq!(exact_sum(&[1.0, f64::EPSILON / 2.0]), 1.0);
    assert_eq!(
        exact_sum(&[1.0, f64::EPSILON / 2.0, 5e-324]),
        1.0 + f64::EPSILON
    );
    assert_eq!(exact_sum(&[-2.5, 1e-310, -1e-310]), -2.5);
}
