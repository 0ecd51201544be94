//! An exact sum of finite `f64` values that values can leave again.
//!
//! Every finite double is an integer multiple of 2^-1074 below 2^1024, so a sum of them is
//! an integer of about 2100 bits in units of 2^-1074. Integer addition is exact and
//! reversible: a value leaves the sum by being subtracted, with no residue, and the window
//! slides in O(1) per event. The sum is read correctly rounded (to nearest, ties to even),
//! so a window's result depends only on the values in it, never on their order, on what
//! passed through before, or on the thread that computed it.
//!
//! The integer is kept in 32-bit digits held in `i64`s ("carry-save"): an addition puts a
//! mantissa, shifted to its exponent, into three digits without propagating carries; the
//! carries are propagated only when the sum is read (over the digits in use, a handful for
//! values of similar magnitudes).

/// Bits per digit.
const DIGIT_BITS: u32 = 32;
/// Zero digits below the lowest used one (weight 2^-1074): reading the sum takes the
/// three digits at the top, which then always exist.
const FLOOR: usize = 2;
/// A double's mantissa (53 bits) shifted by at most 31 spans three digits from
/// `FLOOR + position / 32` (position ≤ 2045): digits up to 67, plus one digit of headroom
/// for the carries out of them, which holds the sign.
const DIGITS: usize = FLOOR + 2045 / DIGIT_BITS as usize + 4;
/// Additions between two carry propagations. Each adds less than 2^32 in magnitude to a
/// digit, so no `i64` digit can overflow in between.
const CARRY_EVERY: u32 = 1 << 30;
const DIGIT_MASK: i64 = (1 << DIGIT_BITS) - 1;

/// The exact sum of the finite doubles added (and not yet subtracted).
#[derive(Clone)]
pub(crate) struct ExactSum {
    /// Digit `k` weighs 2^(32 (k - FLOOR) - 1074). Digits outside `low..=high` are zero.
    digits: [i64; DIGITS],
    low: usize,
    /// The highest digit in use: after a carry propagation the only one that may be
    /// negative (it carries the sign); all below are in `0..2^32`.
    high: usize,
    /// Additions since the last carry propagation.
    pending: u32,
}

impl Default for ExactSum {
    fn default() -> Self {
        Self {
            digits: [0; DIGITS],
            low: DIGITS,
            high: 0,
            pending: 0,
        }
    }
}

/// A rounded number as `sign`, `significand` and `scale`: the value is
/// `significand * 2^(scale - 1074)`, with `significand` < 2^53, or `scale` 0 for results
/// up to 2^-1021 (subnormals and the smallest normals, as their bit patterns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rounded {
    pub negative: bool,
    pub significand: u64,
    pub scale: i64,
}

impl Rounded {
    /// As a double: infinite when beyond `f64::MAX` after rounding.
    pub fn to_f64(self) -> f64 {
        let magnitude = if self.scale == 0 {
            // Below 2^53 units of 2^-1074 the bit pattern is the number itself.
            f64::from_bits(self.significand)
        } else if self.scale + 1 >= 2047 {
            f64::INFINITY
        } else {
            // significand in [2^52, 2^53): the biased exponent is `scale + 1`.
            f64::from_bits(((self.scale as u64 + 1) << 52) | (self.significand & ((1 << 52) - 1)))
        };
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Long division of a non-negative integer, fed as 32-bit digits from the top, by a
/// divisor ≥ 1: enough quotient bits, with the remainder, to round the quotient correctly.
struct LongDivision {
    divisor: u64,
    quotient: u128,
    remainder: u64,
}

impl LongDivision {
    fn new(divisor: u64) -> Self {
        debug_assert!(divisor >= 1);
        Self {
            divisor,
            quotient: 0,
            remainder: 0,
        }
    }

    /// Feeds the next digit: below 2^32, except the first, which may hold up to 63 bits.
    #[inline]
    fn feed(&mut self, digit: u64) {
        if self.divisor >> DIGIT_BITS == 0 {
            // remainder < divisor < 2^32: the partial dividend fits 64 bits, and one
            // hardware division serves.
            let current = (self.remainder << DIGIT_BITS) | digit;
            self.quotient = (self.quotient << DIGIT_BITS) | (current / self.divisor) as u128;
            self.remainder = current % self.divisor;
        } else {
            let current = ((self.remainder as u128) << DIGIT_BITS) | digit as u128;
            let divisor = self.divisor as u128;
            self.quotient = (self.quotient << DIGIT_BITS) | (current / divisor);
            self.remainder = (current % divisor) as u64;
        }
    }

    /// Whether the quotient holds 65 bits or more, 12 more than a double keeps: the
    /// remainder and the digits not fed then only decide ties. (Fed further, the quotient
    /// could overflow.)
    #[inline]
    fn full(&self) -> bool {
        self.quotient >> 64 != 0
    }
}

/// The mean of integers, `sum / count` (count ≥ 1), correctly rounded (to nearest, ties
/// to even).
#[inline]
pub(crate) fn integer_mean(sum: i128, count: u64) -> f64 {
    fixed_point_mean(sum, 0, count)
}

/// `2^exponent` for `exponent` in `-1022..=1023` (a normal double).
#[inline(always)]
pub(crate) fn power_of_two(exponent: i64) -> f64 {
    debug_assert!((-1022..=1023).contains(&exponent));
    f64::from_bits(((exponent + 1023) as u64) << 52)
}

/// The mean `sum * 2^unit / count` (count ≥ 1, `unit` ≥ -1074), correctly rounded (to
/// nearest, ties to even).
#[inline]
pub(crate) fn fixed_point_mean(sum: i128, unit: i64, count: u64) -> f64 {
    let magnitude = sum.unsigned_abs();
    if magnitude == 0 {
        // A zero quotient never fills the division below.
        return 0.0;
    }
    if magnitude < 1 << 53 && count < 1 << 53 && (-1022..=1023).contains(&unit) {
        // Both are exact doubles and an IEEE division rounds correctly; scaling by a power
        // of two keeps that rounding while the product is normal and finite. (Exactly
        // f64::MIN_POSITIVE may be a subnormal product rounded up: a second rounding.)
        let mean = sum as f64 / count as f64 * power_of_two(unit);
        if mean.abs() > f64::MIN_POSITIVE && mean.is_finite() {
            return mean;
        }
    }
    if count < 1 << 62 {
        // The magnitude moved up to 127 bits (nothing lost) and divided at once: the
        // quotient has at least 65 bits, the remainder says whether anything is left.
        let shift = magnitude.leading_zeros().saturating_sub(1);
        let numerator = magnitude << shift;
        let quotient = numerator / count as u128;
        let remainder = numerator - quotient * count as u128;
        let base = 1074 + unit - shift as i64;
        return round(quotient, remainder != 0, base, sum < 0).to_f64();
    }
    let mut division = LongDivision::new(count);
    // The magnitude's four digits from the top, then zero digits below the units; `next`
    // is the index of the digit to feed (negative: below the units).
    let mut next = 3i64;
    while !division.full() {
        let digit = if next >= 0 {
            (magnitude >> (DIGIT_BITS as i64 * next)) as u64 & DIGIT_MASK as u64
        } else {
            0
        };
        division.feed(digit);
        next -= 1;
    }
    // The quotient's last bit weighs 2^(unit + 32 (next + 1)), that is
    // 2^(1074 + unit + 32 (next + 1)) units of 2^-1074; the digits not fed are those
    // below that bit.
    let fed_to = DIGIT_BITS as i64 * (next + 1);
    let unfed = fed_to > 0 && magnitude & ((1u128 << fed_to) - 1) != 0;
    let sticky = division.remainder != 0 || unfed;
    round(division.quotient, sticky, 1074 + unit + fed_to, sum < 0).to_f64()
}

impl ExactSum {
    /// Adds `x` (`subtract`: removes it). `x` must be finite.
    #[inline(always)]
    pub fn add(&mut self, x: f64, subtract: bool) {
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as usize;
        let fraction = bits & ((1 << 52) - 1);
        if biased == 0 && fraction == 0 {
            // ±0.0 adds nothing; skipping it keeps the digits in use few.
            return;
        }
        debug_assert!(biased != 0x7ff, "only finite values are summed");
        let mantissa = fraction | (((biased != 0) as u64) << 52);
        // x = ±mantissa * 2^(position - 1074); subnormals have position 0.
        let position = biased.max(1) - 1;
        let digit = FLOOR + position / DIGIT_BITS as usize;
        let shift = (position % DIGIT_BITS as usize) as u32;
        // The 85-bit `mantissa << shift` as three digits, with 64-bit shifts only.
        let first = ((mantissa << shift) as i64) & DIGIT_MASK;
        let second = ((mantissa >> (DIGIT_BITS - shift)) as i64) & DIGIT_MASK;
        let third = ((mantissa >> (2 * DIGIT_BITS - 1 - shift)) >> 1) as i64;
        let sign = if ((bits >> 63) != 0) != subtract {
            -1
        } else {
            1
        };
        self.digits[digit] += sign * first;
        self.digits[digit + 1] += sign * second;
        self.digits[digit + 2] += sign * third;
        self.low = self.low.min(digit);
        self.high = self.high.max(digit + 3);
        self.pending += 1;
        if self.pending == CARRY_EVERY {
            self.carry();
        }
    }

    /// Empties the sum.
    pub fn clear(&mut self) {
        if self.low <= self.high {
            self.digits[self.low..=self.high].fill(0);
        }
        self.low = DIGITS;
        self.high = 0;
        self.pending = 0;
    }

    /// Propagates the carries: digits below `high` into `0..2^32`, the sign into `high`.
    /// Narrows `low..=high` to the digits that carry the value: `low` is the lowest
    /// non-zero digit, `high` the top one, which is neither 0 nor -1 unless it is the only
    /// one. Returns whether the sum is non-zero. One pass, with no branch on the sign.
    fn carry(&mut self) -> bool {
        const NONE: usize = usize::MAX;
        self.pending = 0;
        if self.low > self.high {
            return false;
        }
        let (low, high) = (self.low, self.high);
        // The carry travels in a register, not through memory.
        let mut carry = 0i64;
        let (mut lowest_nonzero, mut highest_nonzero, mut highest_not_ones) = (NONE, NONE, NONE);
        for k in low..high {
            let v = self.digits[k] + carry;
            let digit = v & DIGIT_MASK;
            self.digits[k] = digit;
            carry = v >> DIGIT_BITS; // floor division
            lowest_nonzero = lowest_nonzero.min(if digit != 0 { k } else { NONE });
            highest_nonzero = if digit != 0 { k } else { highest_nonzero };
            highest_not_ones = if digit != DIGIT_MASK {
                k
            } else {
                highest_not_ones
            };
        }
        let sign = self.digits[high] + carry;
        // Digits above the top one only extend the sign: zeros above a positive value;
        // all ones, then -1, above a negative one, which fold into the digit below
        // (-2^32 + d there).
        if sign == 0 && highest_nonzero == NONE {
            self.digits[low..=high].fill(0);
            self.low = DIGITS;
            self.high = 0;
            return false;
        }
        // Selects rather than branches: the sign of a window's sum is often random. (All
        // ones below a -1 is -1 at the lowest digit: MASK - 2^32.)
        let fold_to = if sign == 0 {
            highest_nonzero
        } else if highest_not_ones == NONE {
            low
        } else {
            highest_not_ones
        };
        let folded = self.digits[fold_to] - if sign == 0 { 0 } else { 1 << DIGIT_BITS };
        // With one digit in use there is nothing below to fold into.
        let extends_sign = (sign == 0 || sign == -1) && low < high;
        let top = if extends_sign { fold_to } else { high };
        let top_digit = if extends_sign { folded } else { sign };
        self.digits[top] = top_digit;
        self.digits[top + 1..=high].fill(0);
        self.high = top;
        self.low = lowest_nonzero.min(top);
        true
    }

    /// The sum as a double, correctly rounded (ties to even); infinite when beyond
    /// `f64::MAX`.
    #[inline]
    pub fn value(&mut self) -> f64 {
        if !self.carry() {
            return 0.0;
        }
        let (magnitude, sticky, base, negative) = self.top_window();
        let length = 128 - magnitude.leading_zeros() as i64;
        // The exponent of the value's top bit.
        let exponent = base + length - 1 - 1074;
        if length < 64 || !(-1022..=1022).contains(&exponent) {
            // Subnormal, near the floor, or near overflow: the exact rounding.
            return round(magnitude, sticky, base, negative).to_f64();
        }
        // Keep 64 bits and fold every bit below them into the last one ("round to odd"):
        // with 11 bits more than a double keeps, converting that rounds as the whole
        // number would. The result is normal and finite, so its exponent is only moved.
        let k = (length - 64) as u32;
        let kept = (magnitude >> k) as u64;
        let below = magnitude & ((1u128 << k) - 1) != 0;
        let odd = kept | (below || sticky) as u64;
        let scale = base + k as i64 - 1074;
        let bits = ((odd as f64).to_bits() as i64 + (scale << 52)) as u64;
        f64::from_bits(bits | ((negative as u64) << 63))
    }

    /// The sum divided by `count` (≥ 1), correctly rounded (to nearest, ties to even):
    /// the exact sum is divided digit by digit from the top until the quotient has enough
    /// bits, so the mean is rounded once. Finite whenever the values are.
    ///
    /// (A shortcut through one 128-bit division of the top 64 bits, falling back to this
    /// near rounding boundaries, measured no faster: both cost a few hardware divisions.)
    #[inline]
    pub fn mean(&mut self, count: u64) -> f64 {
        if !self.carry() {
            return 0.0;
        }
        let (top, low) = (self.high, self.low);
        let negative = self.digits[top] < 0;
        let digits = &self.digits;
        // Digit k of the magnitude. A negative sum is negated as complement plus one; the
        // one carries up through the zero digits below `low` and stops there.
        let magnitude_digit = |k: usize| -> u64 {
            let d = digits[k];
            let m = if !negative || k < low {
                d
            } else if k == top {
                if k == low {
                    -d
                } else {
                    -1 - d
                }
            } else if k == low {
                (1 << DIGIT_BITS) - d
            } else {
                DIGIT_MASK - d
            };
            // Below 2^32, except the top digit, which carries may widen (never to 63 bits).
            m as u64
        };
        let mut division = LongDivision::new(count);
        let mut k = top + 1;
        while k > 0 && !division.full() {
            k -= 1;
            division.feed(magnitude_digit(k));
        }
        // Stopped after digit k: below it only the digits from `low` remain.
        let base = DIGIT_BITS as i64 * (k as i64 - FLOOR as i64);
        let sticky = division.remainder != 0 || k > low;
        round(division.quotient, sticky, base, negative).to_f64()
    }

    /// The sum, correctly rounded to a 53-bit significand (ties to even): the slow path
    /// that tests hold [`Self::value`] to.
    #[cfg(test)]
    pub fn rounded(&mut self) -> Rounded {
        if !self.carry() {
            return Rounded {
                negative: false,
                significand: 0,
                scale: 0,
            };
        }
        let (magnitude, sticky, base, negative) = self.top_window();
        round(magnitude, sticky, base, negative)
    }

    /// After [`Self::carry`] of a non-zero sum: the magnitude of the top three digits,
    /// whether anything non-zero lies below them, their weight (the value is about
    /// `magnitude * 2^base` units of 2^-1074) and the sign.
    #[inline(always)]
    fn top_window(&self) -> (u128, bool, i64, bool) {
        let top = self.high;
        let digits = &self.digits;
        // The top three digits, signed: the value is window * 2^base + rest (units of
        // 2^-1074), with 0 <= rest < 2^base held by the digits below.
        let window = (digits[top] as i128) * (1 << (2 * DIGIT_BITS))
            + (digits[top - 1] as i128) * (1 << DIGIT_BITS)
            + digits[top - 2] as i128;
        // `low` is the lowest non-zero digit.
        let rest = self.low < top - 2;
        let base = DIGIT_BITS as i64 * (top as i64 - 2 - FLOOR as i64);
        // A negative value's magnitude is -window * 2^base - rest, that is
        // (-window - 1) * 2^base + (2^base - rest) when rest is not zero: the window less
        // one, and a non-zero remainder below it.
        let negative = window < 0;
        let magnitude = if negative {
            (-window - rest as i128) as u128
        } else {
            window as u128
        };
        (magnitude, rest, base, negative)
    }
}

/// Rounds `magnitude * 2^base` (units of 2^-1074) plus a remainder below it, non-zero when
/// `sticky`. A magnitude from three digits whose top one is neither 0 nor -1 has at least
/// 64 bits, and so has a full quotient; below 2^53 units the rounding is at the unit.
#[inline]
fn round(magnitude: u128, sticky: bool, base: i64, negative: bool) -> Rounded {
    let length = 128 - magnitude.leading_zeros() as i64;
    if length + base <= 53 {
        // Below 2^53 units: the last bit kept weighs one unit (2^-1074).
        if base >= 0 {
            // Nothing lies below the units: a sum's digits there are zero, and a quotient
            // stops above them only when it has more bits than fit here.
            debug_assert!(!sticky);
            return Rounded {
                negative,
                significand: (magnitude << base) as u64,
                scale: 0,
            };
        }
        let drop = (-base) as u32; // below 128: a quotient stops within 160 bits of the unit
        let mut significand = (magnitude >> drop) as u64;
        let rest = magnitude & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        if rest > half || (rest == half && (sticky || significand & 1 == 1)) {
            // Up to 2^53 units, 2^-1021: the bit pattern is still the number.
            significand += 1;
        }
        return Rounded {
            negative,
            significand,
            scale: 0,
        };
    }
    let drop = (length - 53) as u32; // at least 11
    let mut significand = (magnitude >> drop) as u64;
    let rest = magnitude & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    if rest > half || (rest == half && (sticky || significand & 1 == 1)) {
        significand += 1;
    }
    let mut scale = base + drop as i64;
    if significand == 1 << 53 {
        significand >>= 1;
        scale += 1;
    }
    Rounded {
        negative,
        significand,
        scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(values: &[f64]) -> f64 {
        let mut s = ExactSum::default();
        for &v in values {
            s.add(v, false);
        }
        let via_rounded = s.clone().rounded().to_f64();
        let value = s.value();
        assert_eq!(value.to_bits(), via_rounded.to_bits(), "{values:?}");
        value
    }

    #[test]
    fn small_cases_are_exact() {
        assert_eq!(sum(&[]), 0.0);
        assert_eq!(sum(&[1.0, 2.0]), 3.0);
        assert_eq!(sum(&[0.1, 0.2]), 0.30000000000000004);
        assert_eq!(sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(sum(&[-1e300, -1.7e308, 1.7e308, 1e300, 1e200]), 1e200);
        assert_eq!(sum(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
        assert_eq!(sum(&[f64::MAX, f64::MAX]), f64::INFINITY);
        assert_eq!(sum(&[-f64::MAX, -f64::MAX]), f64::NEG_INFINITY);
        assert_eq!(sum(&[5e-324, 5e-324]), 1e-323);
        assert_eq!(sum(&[-5e-324]), -5e-324);
        assert_eq!(
            sum(&[f64::MIN_POSITIVE, -5e-324]).to_bits(),
            (f64::MIN_POSITIVE.to_bits() - 1)
        );
        assert_eq!(sum(&[-3.5, 1.25]), -2.25);
        assert_eq!(sum(&[-0.0]), 0.0);
    }

    #[test]
    fn ties_round_to_even_and_the_rest_breaks_them() {
        let one = 1.0f64;
        let half_ulp = f64::EPSILON / 2.0; // 2^-53: a tie between 1 and 1 + 2^-52
        assert_eq!(sum(&[one, half_ulp]), 1.0);
        assert_eq!(sum(&[one, half_ulp, 1e-300]), 1.0 + f64::EPSILON);
        assert_eq!(sum(&[one, half_ulp, -1e-300]), 1.0);
        let odd = 1.0 + f64::EPSILON;
        assert_eq!(sum(&[odd, half_ulp]), 1.0 + 2.0 * f64::EPSILON);
        // MAX's ulp is 2^971: MAX + 2^970 is a tie between MAX (odd) and 2^1024, so it
        // overflows; MAX + 2^969 rounds back to MAX.
        let quarter_ulp_of_max = f64::from_bits((1023 + 969) << 52);
        assert_eq!(sum(&[f64::MAX, quarter_ulp_of_max]), f64::MAX);
        assert_eq!(sum(&[f64::MAX, 2.0 * quarter_ulp_of_max]), f64::INFINITY);
    }

    #[test]
    fn subtracting_leaves_no_residue() {
        let mut s = ExactSum::default();
        for v in [1e308, 1e40, 1e-300, 7.0, -1e20] {
            s.add(v, false);
        }
        for v in [1e308, 1e40, 1e-300, -1e20] {
            s.add(v, true);
        }
        assert_eq!(s.rounded().to_f64(), 7.0);
        // The range of digits in use narrows again once the extremes have left.
        assert!(s.high - s.low <= 3, "{}..={}", s.low, s.high);
        s.add(7.0, true);
        assert_eq!(
            s.rounded(),
            Rounded {
                negative: false,
                significand: 0,
                scale: 0
            }
        );
        s.clear();
        s.add(-2.0, false);
        assert_eq!(s.rounded().to_f64(), -2.0);
    }

    #[test]
    fn means_of_huge_values_stay_finite() {
        let mut s = ExactSum::default();
        s.add(f64::MAX, false);
        s.add(f64::MAX, false);
        assert_eq!(s.mean(2), f64::MAX);
        s.add(-f64::MAX, false);
        s.add(-f64::MAX, false);
        s.add(-f64::MAX, false);
        assert_eq!(s.mean(5), -f64::MAX / 5.0);
        let mut s = ExactSum::default();
        s.add(5e-324, false);
        assert_eq!(s.mean(1), 5e-324);
        s.add(1.0, false);
        s.add(2.0, false);
        assert_eq!(s.mean(3), 1.0);
    }

    fn mean(values: &[f64]) -> f64 {
        let mut s = ExactSum::default();
        for &v in values {
            s.add(v, false);
        }
        s.mean(values.len() as u64)
    }

    #[test]
    fn means_are_rounded_once() {
        assert_eq!(mean(&[1.0, 2.0]), 1.5);
        assert_eq!(mean(&[0.1, 0.2, 0.3]), 0.2);
        assert_eq!(mean(&[-1.0, -2.0, -4.0]), -7.0 / 3.0);
        // Expected values from exact rational arithmetic (Python's Fraction); the rounded
        // sum divided by the count gives -3333333333333332.5 and 1.7761904761904763.
        assert_eq!(
            mean(&[0.3333333333333333, 1.0000000000000002, -1e16]),
            -3333333333333333.0
        );
        assert_eq!(
            mean(&[
                3.0,
                0.3333333333333333,
                7.0,
                -1.0000000000000002,
                0.1,
                2.0,
                1.0000000000000002
            ]),
            1.776190476190476
        );
        // Exact ties go to even: 1 + 2^-53 to 1, 1 + 3 * 2^-53 to 1 + 2^-51.
        let e = f64::EPSILON;
        assert_eq!(mean(&[1.0, 1.0 + e]), 1.0);
        assert_eq!(mean(&[1.0 + e, 1.0 + 2.0 * e]), 1.0 + 2.0 * e);
        assert_eq!(mean(&[-1.0, -1.0 - e]), -1.0);
        assert_eq!(mean(&[-1.0 - e, -1.0 - 2.0 * e]), -1.0 - 2.0 * e);
        // Subnormal means: 3 units over 2 is a tie (1.5 units), to even: 2 units.
        assert_eq!(mean(&[5e-324, 1e-323]), 1e-323);
        assert_eq!(mean(&[5e-324, 5e-324, 5e-324, 0.0]), 5e-324);
        assert_eq!(mean(&[-5e-324, 0.0, 0.0]), -0.0);
        assert_eq!(mean(&[-1e-323, -5e-324]), -1e-323);
        // Far below, far above and cancelling.
        assert_eq!(mean(&[1e300, -1e300, 3e-300]), 1e-300);
        assert_eq!(mean(&[f64::MAX, f64::MAX, f64::MAX]), f64::MAX);
        assert_eq!(mean(&[-f64::MAX, -f64::MAX]), -f64::MAX);
        assert_eq!(mean(&[0.0, -0.0]), 0.0);
    }

    #[test]
    fn long_division_takes_wide_divisors() {
        let mut s = ExactSum::default();
        s.add(3.0, false);
        // Divisors above 2^32 take the 128-bit path; 2^40 is exact.
        assert_eq!(s.mean(1 << 40), 3.0 / (1u64 << 40) as f64);
        assert_eq!(s.mean((1 << 33) + 1), 3.0 / ((1u64 << 33) + 1) as f64);
        assert_eq!(s.mean(u64::MAX), 1.6263032587282567e-19);
    }

    #[test]
    fn integer_means_are_rounded_once() {
        assert_eq!(integer_mean(7, 2), 3.5);
        assert_eq!(integer_mean(-7, 3), -7.0 / 3.0);
        // 2^53 + 1 is not a double: converting first would round it to 2^53.
        let odd = (1i128 << 53) + 1;
        assert_eq!(integer_mean(odd * 3, 3), 9007199254740992.0);
        assert_eq!(integer_mean(odd * 2 + 1, 2), 9007199254740994.0);
        assert_eq!(integer_mean(i64::MAX as i128 * 3, 3), i64::MAX as f64);
        assert_eq!(integer_mean(i64::MIN as i128 * 5, 5), i64::MIN as f64);
        // (2^64 + 2^11 + 1) / 1: a tie for the sum alone, broken by the last bit.
        let above_tie = (1i128 << 64) + (1 << 11) + 1;
        assert_eq!(integer_mean(above_tie, 1), 18446744073709555712.0);
        assert_eq!(integer_mean(1, u64::MAX), 5.421010862427522e-20);
        assert_eq!(integer_mean(i128::MIN, 1), -1.7014118346046923e38);
        assert_eq!(integer_mean(i128::MAX, 3), 5.671372782015641e37);
        // A quotient just below 2^53 units of 2^-1074 (found by review): dividing first
        // and scaling would round twice, up to f64::MIN_POSITIVE.
        let below = f64::from_bits(0x000f_ffff_ffff_ffff);
        assert_eq!(fixed_point_mean((1 << 53) - 2, -1022, (1 << 53) - 1), below);
        assert_eq!(
            fixed_point_mean(-(1 << 53) + 2, -1022, (1 << 53) - 1),
            -below
        );
        assert_eq!(fixed_point_mean((1 << 53) - 3, -1022, (1 << 53) - 2), below);
        // Zero over any count, also where the IEEE shortcut does not apply.
        assert_eq!(integer_mean(0, 1 << 53), 0.0);
        assert_eq!(integer_mean(0, u64::MAX), 0.0);
    }

    #[test]
    fn many_additions_carry_before_a_digit_overflows() {
        // 2^32 - 1 in the lowest chunk of every addition: without the periodic carry the
        // digit would pass i64::MAX after 2^31 additions; here the carry is forced.
        let mut s = ExactSum::default();
        let v = f64::from_bits(0x4330_0000_ffff_ffff); // 2^52 + 2^32 - 1
        s.pending = CARRY_EVERY - 3;
        for _ in 0..5 {
            s.add(v, false);
        }
        assert_eq!(s.rounded().to_f64(), 5.0 * v);
    }

    /// Any finite double: every exponent, subnormals and signed zeros alike.
    fn finite() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            any::<u64>()
                .prop_map(f64::from_bits)
                .prop_filter("finite", |x| x.is_finite()),
            (-1000i64..1000).prop_map(|i| i as f64),
            // Means of these fall on rounding boundaries (1 + k/2 * 2^-52).
            (0u64..8).prop_map(|k| 1.0 + k as f64 * f64::EPSILON),
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(5e-324),
            // -1 in one digit: 2^14 = 2^(32 * 34 - 1074) starts a digit, as 2^-1074 does.
            Just(-16384.0),
            Just(-5e-324),
        ]
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Integer means against the reference's full division, at the extremes too.
        #[test]
        fn integer_means_equal_the_reference(
            sum in proptest::prop_oneof![
                proptest::prelude::any::<i128>(),
                proptest::prelude::any::<i64>().prop_map(|v| v as i128 * 3),
                (-(1i128 << 60)..(1i128 << 60)),
                proptest::strategy::Just(i128::MIN),
                proptest::strategy::Just(i128::MAX),
            ],
            count in proptest::prop_oneof![
                1u64..100,
                proptest::prelude::any::<u64>().prop_map(|c| c.max(1)),
                proptest::strategy::Just((1u64 << 32) - 1),
                proptest::strategy::Just(1u64 << 32),
                proptest::strategy::Just(u64::MAX),
            ],
        ) {
            let got = integer_mean(sum, count);
            let want = crate::kernels::window::reference::integer_mean(sum, count);
            proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "{} / {}", sum, count);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Values enter, some leave again (in any order): the sum is the correctly rounded
        /// sum of those that stayed, as the independent reference computes it.
        #[test]
        fn equals_the_reference_after_any_removals(
            values in proptest::collection::vec(finite(), 0..40),
            leave in proptest::collection::vec(proptest::prelude::any::<bool>(), 40),
        ) {
            let mut s = ExactSum::default();
            for &v in &values {
                s.add(v, false);
            }
            let mut stayed = Vec::new();
            for (i, &v) in values.iter().enumerate().rev() {
                if leave[i] {
                    s.add(v, true);
                } else {
                    stayed.push(v);
                }
                if i % 3 == 0 {
                    // Reading narrows the digits in use; later additions widen them.
                    s.rounded();
                }
            }
            let want = crate::kernels::window::reference::exact_sum(&stayed);
            if !stayed.is_empty() {
                let n = stayed.len() as u64;
                let want = crate::kernels::window::reference::float_reference(&stayed, true);
                let mean = s.clone().mean(n);
                proptest::prop_assert!(
                    mean.to_bits() == want.to_bits() || (mean == 0.0 && want == 0.0),
                    "mean {mean:e} against {want:e} for {stayed:?}"
                );
            }
            // Twice: a read after a read starts from narrowed digits.
            for _ in 0..2 {
                let got = s.clone().rounded().to_f64();
                let fast = s.value();
                proptest::prop_assert_eq!(fast.to_bits(), got.to_bits(), "value() and rounded()");
                proptest::prop_assert!(
                    got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                    "{got:e} against {want:e} for {stayed:?}"
                );
            }
        }
    }
}
