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

/// A rounded sum as `sign`, `significand` < 2^53 and `scale`: the value is
/// `significand * 2^(scale - 1074)`, with `scale` 0 for results below 2^-1021 (subnormals
/// and the smallest normals, represented exactly).
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

    /// The value divided by `divisor` (a count ≥ 1), rounded: within about an ulp of
    /// the exact quotient, and finite whenever the quotient is (a mean of values near
    /// `f64::MAX` whose sum is not).
    pub fn divided_by(self, divisor: f64) -> f64 {
        let quotient = self.significand as f64 / divisor;
        let magnitude = scale_by_power_of_two(quotient, self.scale - 1074);
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// `x * 2^exponent` in steps that neither overflow nor underflow early.
fn scale_by_power_of_two(mut x: f64, mut exponent: i64) -> f64 {
    const UP: f64 = f64::from_bits((1023 + 960) << 52); // 2^960
    const DOWN: f64 = f64::from_bits((1023 - 960) << 52); // 2^-960
    while exponent > 960 {
        x *= UP;
        exponent -= 960;
    }
    while exponent < -960 {
        x *= DOWN;
        exponent += 960;
    }
    // |exponent| ≤ 960: 2^exponent is a normal double.
    x * f64::from_bits(((1023 + exponent) as u64) << 52)
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

    /// The sum divided by `count` (≥ 1): the rounded sum divided (within about an ulp
    /// of the exact mean), and finite whenever the mean is.
    #[inline]
    pub fn mean(&mut self, count: f64) -> f64 {
        let sum = self.value();
        if sum.is_finite() && (sum == 0.0 || sum.abs() >= f64::MIN_POSITIVE) {
            sum / count
        } else {
            // Beyond f64::MAX or subnormal: divide the significand, then scale.
            self.rounded().divided_by(count)
        }
    }

    /// The sum, correctly rounded to a 53-bit significand (ties to even).
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
/// 64 bits; below the floor (`base` < 0) the digits are zero, so the value is exact.
#[inline]
fn round(magnitude: u128, sticky: bool, base: i64, negative: bool) -> Rounded {
    let length = 128 - magnitude.leading_zeros() as i64;
    if length + base <= 53 {
        // At most 53 bits in all: exact.
        let exact = if base >= 0 {
            magnitude << base
        } else {
            magnitude >> -base
        };
        return Rounded {
            negative,
            significand: exact as u64,
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
        assert_eq!(s.rounded().divided_by(2.0), f64::MAX);
        let mut s = ExactSum::default();
        s.add(5e-324, false);
        assert_eq!(s.rounded().divided_by(1.0), 5e-324);
        s.add(1.0, false);
        s.add(2.0, false);
        assert_eq!(s.rounded().divided_by(3.0), 1.0);
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
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(5e-324),
            // -1 in one digit: 2^14 = 2^(32 * 34 - 1074) starts a digit, as 2^-1074 does.
            Just(-16384.0),
            Just(-5e-324),
        ]
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
