//! Test references for float sums and means, and integer means, independent of
//! [`super::exact_sum`]: 64-bit limbs in `i128`, carried to a sign and magnitude, divided
//! in full (128-bit steps), rounded from the top 128 bits.

/// The reference sum (`mean`: mean) of `values`, rounded once (correctly, ties to even),
/// as the kernels must give it. IEEE rules for NaN and infinities; an overflowing true sum
/// is infinite.
pub(crate) fn float_reference(values: &[f64], mean: bool) -> f64 {
    let nan = values.iter().any(|v| v.is_nan());
    let positive = values.contains(&f64::INFINITY);
    let negative = values.contains(&f64::NEG_INFINITY);
    if nan || (positive && negative) {
        return f64::NAN;
    }
    if positive || negative {
        return if positive {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    let (negative, limbs) = exact_total(values);
    let divisor = if mean { values.len() as u64 } else { 1 };
    round_quotient(negative, &limbs, -1074, divisor.max(1))
}

/// The correctly rounded sum of finite floats.
pub(crate) fn exact_sum(values: &[f64]) -> f64 {
    let (negative, limbs) = exact_total(values);
    round_quotient(negative, &limbs, -1074, 1)
}

/// The correctly rounded mean `sum / count` of integers.
pub(crate) fn integer_mean(sum: i128, count: u64) -> f64 {
    let magnitude = sum.unsigned_abs();
    let limbs = [magnitude as u64, (magnitude >> 64) as u64];
    round_quotient(sum < 0, &limbs, 0, count)
}

/// The exact sum of finite floats as a sign and little-endian 64-bit limbs of its
/// magnitude, in units of 2^-1074.
fn exact_total(values: &[f64]) -> (bool, Vec<u64>) {
    let mut total: Vec<i128> = vec![0; 40];
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
    (negative, total.iter().map(|&l| l as u64).collect())
}

/// `magnitude / divisor` correctly rounded to a double, signed; `magnitude` holds
/// little-endian 64-bit limbs, the lowest weighing `2^lowest`. The whole quotient is
/// computed, with two more limbs below the lowest, and rounded from its top 128 bits
/// and whether anything (limbs or remainder) lies below them.
fn round_quotient(negative: bool, magnitude: &[u64], lowest: i64, divisor: u64) -> f64 {
    let mut dividend = vec![0u64, 0];
    dividend.extend_from_slice(magnitude);
    let mut quotient = vec![0u64; dividend.len()];
    let mut remainder: u128 = 0;
    for i in (0..dividend.len()).rev() {
        let current = (remainder << 64) | dividend[i] as u128;
        quotient[i] = (current / divisor as u128) as u64;
        remainder = current % divisor as u128;
    }
    let Some(top) = quotient.iter().rposition(|&l| l != 0) else {
        // Non-zero quotients of finite values never reach below 2^-1074-128.
        return if negative && remainder != 0 {
            -0.0
        } else {
            0.0
        };
    };
    let low = top.saturating_sub(1);
    let mut mantissa: u128 = 0;
    for limb in quotient[low..=top].iter().rev() {
        mantissa = (mantissa << 64) | (*limb as u128);
    }
    let exponent = low as i64 * 64 + lowest - 128;
    let sticky = remainder != 0 || quotient[..low].iter().any(|&l| l != 0);
    let lead = 127 - mantissa.leading_zeros() as i64;
    // Keep 53 bits, fewer where the result is subnormal (its last bit weighs 2^-1074).
    let drop = (lead + 1 - 53).max(0).max(-1074 - exponent) as u32;
    let (kept, rest) = if drop >= 128 {
        (0, mantissa)
    } else {
        (mantissa >> drop, mantissa & ((1u128 << drop) - 1))
    };
    let half = match drop {
        0 => 0,
        1..=128 => 1u128 << (drop - 1),
        _ => u128::MAX, // far below half a unit
    };
    let round_up =
        drop > 0 && drop <= 128 && (rest > half || (rest == half && (sticky || kept & 1 == 1)));
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
    let value = if kept == 0 { 0.0 } else { kept as f64 * scale };
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
    // Means, against exact rational arithmetic (Python's Fraction).
    let mean = |v: &[f64]| float_reference(v, true);
    assert_eq!(
        mean(&[0.3333333333333333, 1.0000000000000002, -1e16]),
        -3333333333333333.0
    );
    assert_eq!(mean(&[5e-324, 1e-323]), 1e-323);
    assert_eq!(mean(&[-5e-324, 0.0, 0.0]), 0.0);
    assert_eq!(mean(&[f64::MAX, f64::MAX]), f64::MAX);
    assert_eq!(integer_mean((1 << 53) * 3 + 3, 3), 9007199254740992.0);
    assert_eq!(integer_mean(1, u64::MAX), 5.421010862427522e-20);
    assert_eq!(integer_mean(-7, 3), -7.0 / 3.0);
}
