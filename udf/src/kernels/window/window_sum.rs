//! The exact float sum of a window, fast while its values have similar magnitudes.
//!
//! [`ExactSum`] spans every double, so reading it propagates carries over the digits in
//! use and rounds by hand. Most windows hold values within a few powers of two of each
//! other: their exact sum fits a 128-bit integer in units of a power of two chosen from
//! the first value, and reading it is one correctly rounded conversion. A value that does
//! not fit (far smaller or larger, or a sum that would overflow) moves the sum into an
//! [`ExactSum`] until the window is empty again. Both hold the same exact sum, so the
//! result never depends on which one held it, on the order of the values, or on threads.

use super::exact_sum::{fixed_point_mean, power_of_two, ExactSum};

/// Bits kept below the first value's top bit: values down to 2^-40 of it keep all 53.
const BELOW_FIRST: i64 = 92;
/// Largest shift of a 53-bit mantissa into the 127 bits of an `i128` magnitude.
const MOST_SHIFT: i64 = 73;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Holder {
    /// No value in the sum: the next one chooses the unit.
    Empty,
    /// In `fixed`, units of 2^`unit`.
    Fixed,
    /// In `exact`.
    Exact,
}

/// The exact sum of the finite doubles added and not yet subtracted.
#[derive(Clone)]
pub(crate) struct WindowSum {
    holder: Holder,
    fixed: i128,
    /// The exponent of `fixed`'s unit, in `-1022..=708`: every non-zero sum is then a
    /// normal double or beyond, and nothing in it reaches 2^836.
    unit: i64,
    /// Non-zero values in the sum.
    terms: u64,
    /// Additions and removals since the sum moved to `exact` (or was last refitted).
    general_operations: u64,
    exact: ExactSum,
}

impl Default for WindowSum {
    fn default() -> Self {
        Self {
            holder: Holder::Empty,
            fixed: 0,
            unit: 0,
            terms: 0,
            general_operations: 0,
            exact: ExactSum::default(),
        }
    }
}

/// `mantissa * 2^at` in units of 2^`unit`, when that is a whole number below 2^126.
#[inline(always)]
fn term_in(mantissa: u64, at: i64, unit: i64) -> Option<i128> {
    let shift = at - unit;
    if (0..=MOST_SHIFT).contains(&shift) {
        Some((mantissa as i128) << shift)
    } else if shift < 0 && -shift <= mantissa.trailing_zeros() as i64 {
        // Below the unit, but only zero bits there.
        Some((mantissa >> -shift) as i128)
    } else {
        None
    }
}

/// `x` as `±mantissa * 2^unit` (`x` finite and non-zero): sign, mantissa, unit.
#[inline(always)]
fn parts(bits: u64) -> (bool, u64, i64) {
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = (bits & ((1 << 52) - 1)) | (((biased != 0) as u64) << 52);
    (bits >> 63 != 0, mantissa, biased.max(1) - 1075)
}

impl WindowSum {
    /// Adds `x` (`subtract`: removes it, which must have been added). `x` must be finite.
    #[inline(always)]
    pub fn add(&mut self, x: f64, subtract: bool) {
        let bits = x.to_bits();
        if bits << 1 == 0 {
            // ±0.0 adds nothing.
            return;
        }
        debug_assert!(x.is_finite(), "only finite values are summed");
        if subtract {
            self.terms -= 1;
        } else {
            self.terms += 1;
        }
        let (negative, mantissa, unit) = parts(bits);
        match self.holder {
            Holder::Fixed => {
                if let Some(sum) = self.fixed_plus(mantissa, unit, negative != subtract) {
                    self.fixed = sum;
                } else {
                    self.move_to_exact();
                    self.exact.add(x, subtract);
                }
            }
            Holder::Exact => {
                self.exact.add(x, subtract);
                self.general_operations += 1;
            }
            Holder::Empty => {
                let chosen = unit + 52 - BELOW_FIRST;
                if (-1022..=708).contains(&chosen) {
                    self.holder = Holder::Fixed;
                    self.unit = chosen;
                    let term = (mantissa as i128) << (unit - chosen);
                    self.fixed = if negative != subtract { -term } else { term };
                } else {
                    // Near the ends of the double range: the general sum.
                    self.holder = Holder::Exact;
                    self.exact.add(x, subtract);
                }
            }
        }
        if self.terms == 0 {
            // Empty again (the sum is exactly zero): the next value chooses anew.
            self.clear();
        }
    }

    /// `fixed ± mantissa * 2^unit` when the term is a whole number of units that fits
    /// and the sum does not overflow.
    #[inline(always)]
    fn fixed_plus(&self, mantissa: u64, unit: i64, minus: bool) -> Option<i128> {
        let term = term_in(mantissa, unit, self.unit)?;
        if minus {
            self.fixed.checked_sub(term)
        } else {
            self.fixed.checked_add(term)
        }
    }

    /// Whether the sum is held in the general form.
    #[inline(always)]
    pub fn is_general(&self) -> bool {
        self.holder == Holder::Exact
    }

    /// Whether the sum left the fixed point and has taken `operations` additions since,
    /// (or since the last [`Self::refit`]): worth trying to return.
    #[inline(always)]
    pub fn general_for(&self, operations: u64) -> bool {
        self.holder == Holder::Exact && self.general_operations >= operations
    }

    /// Moves a sum held in the general form back into the fixed point when `values`
    /// (every finite value in the sum, nothing else) all fit one unit, chosen from the
    /// largest of them; else leaves it. The sum stays the same exact number.
    #[cold]
    pub fn refit(&mut self, values: impl Iterator<Item = f64> + Clone) {
        self.general_operations = 0;
        if self.holder != Holder::Exact {
            return;
        }
        let nonzero = values.filter(|v| *v != 0.0);
        let Some(top) = nonzero.clone().map(|v| parts(v.to_bits()).2).max() else {
            return;
        };
        let unit = top + 52 - BELOW_FIRST;
        if !(-1022..=708).contains(&unit) {
            return;
        }
        let mut sum = 0i128;
        for v in nonzero {
            let (negative, mantissa, at) = parts(v.to_bits());
            let Some(term) = term_in(mantissa, at, unit) else {
                return;
            };
            let next = if negative {
                sum.checked_sub(term)
            } else {
                sum.checked_add(term)
            };
            let Some(next) = next else { return };
            sum = next;
        }
        self.exact.clear();
        self.holder = Holder::Fixed;
        self.unit = unit;
        self.fixed = sum;
    }

    /// Moves the fixed-point sum into `exact`, as three doubles of 52 bits each (exact:
    /// each chunk's weight is a normal power of two below 2^836).
    #[cold]
    fn move_to_exact(&mut self) {
        self.exact.clear();
        let magnitude = self.fixed.unsigned_abs();
        for chunk in 0..3 {
            let bits = (magnitude >> (52 * chunk)) & ((1 << 52) - 1);
            if bits != 0 {
                let part = bits as f64 * power_of_two(self.unit + 52 * chunk as i64);
                self.exact.add(part, self.fixed < 0);
            }
        }
        self.holder = Holder::Exact;
    }

    /// Empties the sum.
    pub fn clear(&mut self) {
        if self.holder == Holder::Exact {
            self.exact.clear();
        }
        self.holder = Holder::Empty;
        self.fixed = 0;
        self.terms = 0;
        self.general_operations = 0;
    }

    /// The sum as a double, correctly rounded (ties to even); infinite beyond `f64::MAX`.
    #[inline]
    pub fn value(&mut self) -> f64 {
        match self.holder {
            Holder::Empty => 0.0,
            Holder::Fixed => fixed_to_f64(self.fixed, self.unit),
            Holder::Exact => self.exact.value(),
        }
    }

    /// The sum divided by `count` (≥ 1), correctly rounded (ties to even).
    #[inline]
    pub fn mean(&mut self, count: u64) -> f64 {
        match self.holder {
            Holder::Empty => 0.0,
            Holder::Fixed => fixed_point_mean(self.fixed, self.unit, count),
            Holder::Exact => self.exact.mean(count),
        }
    }
}

/// `fixed` units of 2^`unit` (`unit` in -1022..=708, |fixed| < 2^127) as a double,
/// correctly rounded (ties to even).
#[inline(always)]
pub(crate) fn fixed_to_f64(fixed: i128, unit: i64) -> f64 {
    // The top 63 bits, every bit below them folded into the last ("round to odd"):
    // converting that rounds as the whole integer would (10 bits to spare), in one signed
    // 64-bit conversion instead of a 128-bit one. The product by a power of two is exact:
    // normal, and below 2^836.
    let magnitude = fixed.unsigned_abs();
    let shift = 65u32.saturating_sub(magnitude.leading_zeros());
    let kept = (magnitude >> shift) as i64;
    let below = magnitude & ((1u128 << shift) - 1) != 0;
    let value = (kept | below as i64) as f64 * power_of_two(unit + shift as i64);
    if fixed < 0 {
        -value
    } else {
        value
    }
}

/// One fixed point for a whole run of values, found before they are summed: when every
/// value is finite and within 2^(74 - bits of the run's length) of the others, each is a
/// whole number of units of the smallest one's last bit, and any sum of them fits an
/// `i128`. Sums over the run are then plain integer additions and subtractions, with no
/// check per value. The exact sum is the same integer as in a [`WindowSum`], so results
/// are bit for bit the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunUnit {
    /// The smallest biased exponent of a non-zero value (≥ 1: no subnormal): the unit
    /// is 2^(`least` - 1075), the last bit of a double with that exponent.
    least: i64,
}

impl RunUnit {
    /// The run's unit, or `None` when a value is NaN, infinite or subnormal, or the
    /// values are too far apart for one `i128` (or the unit is outside -1022..=708).
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut extremes = RunExtremes::default();
        for &x in values {
            extremes.include(x);
        }
        extremes.unit()
    }

    /// `x` (one of the run's values) in units.
    #[inline(always)]
    pub fn term(self, x: f64) -> i128 {
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let mantissa = (bits & ((1 << 52) - 1)) | (((biased != 0) as u64) << 52);
        // For a run's non-zero value 0 <= biased - least <= 74 - 53; a zero's mantissa is
        // 0, whatever its (wrapped) shift.
        let magnitude = (mantissa as i128).wrapping_shl((biased - self.least) as u32);
        let negative = -((bits >> 63) as i128);
        (magnitude ^ negative) - negative
    }

    /// A sum of the run's values (in units) as a double, correctly rounded.
    #[inline(always)]
    pub fn value(self, sum: i128) -> f64 {
        fixed_to_f64(sum, self.least - 1075)
    }

    /// A sum of `count` (≥ 1) of the run's values, divided by `count`, correctly rounded.
    #[inline(always)]
    pub fn mean(self, sum: i128, count: u64) -> f64 {
        fixed_point_mean(sum, self.least - 1075, count)
    }
}

/// What decides a run's unit, gathered one value at a time (a key's values, say, read
/// in row order): [`Self::unit`] is then [`RunUnit::of`] those values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunExtremes {
    /// The largest magnitude's bits (NaN and infinities have the largest of all).
    largest: u64,
    /// The smallest biased exponent of a non-zero value (0: a subnormal).
    least: u64,
    len: u64,
}

impl Default for RunExtremes {
    fn default() -> Self {
        Self {
            largest: 0,
            least: 0x7ff,
            len: 0,
        }
    }
}

impl RunExtremes {
    #[inline(always)]
    pub fn include(&mut self, x: f64) {
        let magnitude = x.to_bits() & !(1 << 63);
        self.largest = self.largest.max(magnitude);
        // Zeros add nothing and take no part in the unit.
        let exponent = if magnitude == 0 {
            0x7ff
        } else {
            magnitude >> 52
        };
        self.least = self.least.min(exponent);
        self.len += 1;
    }

    /// The extremes of both runs' values together.
    pub fn merge(self, other: Self) -> Self {
        Self {
            largest: self.largest.max(other.largest),
            least: self.least.min(other.least),
            len: self.len + other.len,
        }
    }

    /// The unit of the values included (see [`RunUnit::of`]).
    pub fn unit(self) -> Option<RunUnit> {
        if self.largest == 0 {
            // Only zeros: any unit holds them.
            return Some(RunUnit { least: 1075 });
        }
        // NaN and infinities have the largest bits of all; subnormals a zero exponent.
        if self.largest >= f64::INFINITY.to_bits() || self.least == 0 {
            return None;
        }
        let (least, top) = (self.least as i64, (self.largest >> 52) as i64);
        let unit = least - 1075;
        // The largest magnitude needs `top - least + 53` bits in units; `len` of them
        // fewer than `len_bits` more, and an i128 has 127 for the magnitude.
        let len_bits = 64 - self.len.leading_zeros() as i64;
        ((-1022..=708).contains(&unit) && top - least + 53 + len_bits <= 127)
            .then_some(RunUnit { least })
    }
}

#[cfg(test)]
impl WindowSum {
    /// Whether the sum is held in the fixed point.
    pub fn is_fixed(&self) -> bool {
        self.holder == Holder::Fixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::window::reference;
    use proptest::prelude::*;

    /// Values of similar magnitudes (the fixed-point path), with outliers that move the
    /// sum to the general one: tiny, huge, subnormal, near f64::MAX, and round numbers
    /// below the unit.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            8 => -1e6f64..1e6,
            2 => (-1000i64..1000).prop_map(|i| i as f64),
            1 => any::<u64>()
                .prop_map(f64::from_bits)
                .prop_filter("finite", |x| x.is_finite()),
            1 => Just(1e-300),
            1 => Just(-3e250),
            1 => Just(f64::MAX),
            1 => Just(-f64::MAX),
            1 => Just(5e-324),
            1 => Just(0.0),
            1 => Just(-0.0),
            1 => (0u32..200).prop_map(|k| f64::powi(2.0, k as i32 + 60)),
            1 => (0u64..8).prop_map(|k| 1.0 + k as f64 * f64::EPSILON),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// A sliding window over the values (each enters, then leaves `width` values
        /// later): every read equals the reference sum and mean of the values inside.
        #[test]
        fn sliding_sums_and_means_equal_the_reference(
            values in proptest::collection::vec(value(), 1..60),
            width in 1usize..8,
        ) {
            let mut sum = WindowSum::default();
            for i in 0..values.len() {
                sum.add(values[i], false);
                if i >= width {
                    sum.add(values[i - width], true);
                }
                let inside = &values[i.saturating_sub(width - 1)..=i];
                let want = reference::exact_sum(inside);
                let got = sum.value();
                prop_assert!(
                    got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                    "sum {got:e} against {want:e} for {inside:?}"
                );
                let want = reference::float_reference(inside, true);
                let got = sum.mean(inside.len() as u64);
                prop_assert!(
                    got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                    "mean {got:e} against {want:e} for {inside:?}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whenever a run has a unit, every sliding window over it read through that unit
        /// equals the reference sum and mean bit for bit; values of similar magnitude
        /// always have one.
        #[test]
        fn run_units_sum_like_the_reference(
            values in proptest::collection::vec(value(), 1..60),
            similar in proptest::collection::vec(-1e6f64..1e6, 1..60),
            width in 1usize..8,
        ) {
            prop_assert!(RunUnit::of(&similar).is_some(), "{similar:?}");
            for run in [&values, &similar] {
                let Some(unit) = RunUnit::of(run) else { continue };
                let mut sum = 0i128;
                for i in 0..run.len() {
                    sum += unit.term(run[i]);
                    if i >= width {
                        sum -= unit.term(run[i - width]);
                    }
                    let inside = &run[i.saturating_sub(width - 1)..=i];
                    let want = reference::exact_sum(inside);
                    let got = unit.value(sum);
                    prop_assert!(
                        got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                        "sum {got:e} against {want:e} for {inside:?}"
                    );
                    let want = reference::float_reference(inside, true);
                    let got = unit.mean(sum, inside.len() as u64);
                    prop_assert!(
                        got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                        "mean {got:e} against {want:e} for {inside:?}"
                    );
                }
            }
        }
    }

    /// Which runs have a unit: finite normal values whose largest sum fits 127 bits.
    #[test]
    fn run_units_refuse_what_they_cannot_hold() {
        assert!(RunUnit::of(&[]).is_some());
        assert!(RunUnit::of(&[0.0, -0.0]).is_some());
        for outlier in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            5e-324,
            f64::MAX,
            1e-300,
        ] {
            assert_eq!(RunUnit::of(&[1.0, outlier, 2.0]), None, "{outlier:e}");
        }
        // The widest spread for two values (2 bits of length): top - least <= 127 - 53 - 2,
        // 72 binades apart.
        let (large, small) = (f64::from_bits(0x3ff0_0000_0000_0000), 2f64.powi(-72));
        assert!(RunUnit::of(&[large, small]).is_some());
        assert_eq!(RunUnit::of(&[large, small / 2.0]), None);
        // The sums that need every bit: the largest magnitudes with full mantissas.
        let full = f64::from_bits(0x3fff_ffff_ffff_ffff);
        let run = vec![-full; 3];
        let mut with_small = run.clone();
        with_small.push(2f64.powi(-71));
        let unit = RunUnit::of(&with_small).expect("72 binades apart, 4 values");
        let sum: i128 = with_small.iter().map(|&x| unit.term(x)).sum();
        assert_eq!(unit.value(sum), reference::exact_sum(&with_small));
        // Units outside -1022..=708 (sums near the ends of the double range) are refused.
        assert_eq!(RunUnit::of(&[1e300, 3e299]), None);
        assert!(RunUnit::of(&[1e200, 3e199]).is_some());
        assert_eq!(RunUnit::of(&[2f64.powi(-1000)]), None);
    }

    /// Sliding windows that never empty, through the accumulator that tracks them: after
    /// an outlier leaves, the sum returns to the fixed point, with the same results.
    #[test]
    fn a_window_that_never_empties_returns_to_the_fixed_point() {
        use crate::kernels::window::accumulate::{Accumulator, FloatSum};
        // A small first value, then values 2^40 times larger that do not fit its unit.
        let mut values = vec![1e-3];
        values.extend((0..300).map(|i| 1e8 + i as f64 * 0.37));
        values[150] = -1e-30; // another outlier, later
        let valid = vec![true; values.len()];
        let mut sum = FloatSum::new(&values, Some(&valid), false);
        let width = 20;
        let mut fixed_after_outliers = false;
        for i in 0..values.len() {
            sum.push(i);
            if i >= width {
                sum.evict(i - width);
            }
            let inside = &values[i.saturating_sub(width - 1)..=i];
            let got = sum.value().unwrap();
            let want = reference::exact_sum(inside);
            assert_eq!(got.to_bits(), want.to_bits(), "row {i}: {inside:?}");
            if i > 200 {
                fixed_after_outliers |= sum.sum.is_fixed();
            }
        }
        assert!(fixed_after_outliers, "the sum stayed in the general form");
    }

    #[test]
    fn the_fixed_point_holds_similar_values_and_yields_to_others() {
        let mut sum = WindowSum::default();
        for v in [100.5, 99.25, -3.0, 1e-9] {
            sum.add(v, false);
        }
        assert_eq!(sum.holder, Holder::Fixed);
        assert_eq!(sum.value(), 100.5 + 99.25 - 3.0 + 1e-9);
        // 1e-30 has bits far below the unit chosen from 100.5.
        sum.add(1e-30, false);
        assert_eq!(sum.holder, Holder::Exact);
        assert_eq!(
            sum.value(),
            reference::exact_sum(&[100.5, 99.25, -3.0, 1e-9, 1e-30])
        );
        for v in [100.5, 99.25, -3.0, 1e-9, 1e-30] {
            sum.add(v, true);
        }
        // Empty again: the next value chooses a unit of its own.
        assert_eq!(sum.holder, Holder::Empty);
        sum.add(-1e-30, false);
        assert_eq!((sum.holder, sum.value()), (Holder::Fixed, -1e-30));
        // Ties: 2^64 + 2^11 is halfway (the ulp there is 2^12) and goes to even; a last
        // bit 92 places below breaks it upwards, read through the 64 bits kept.
        let mut sum = WindowSum::default();
        sum.add(2f64.powi(64), false);
        sum.add(2f64.powi(11), false);
        assert_eq!((sum.holder, sum.value()), (Holder::Fixed, 2f64.powi(64)));
        sum.add(2f64.powi(-28), false);
        assert_eq!(
            (sum.holder, sum.value()),
            (Holder::Fixed, 2f64.powi(64) + 2f64.powi(12))
        );
        sum.add(-2f64.powi(-27), false);
        assert_eq!(sum.value(), 2f64.powi(64));
        // A sum past the 127 bits: moved, still exact.
        let mut sum = WindowSum::default();
        sum.add(1.0, false);
        for _ in 0..40 {
            sum.add(2f64.powi(33), false);
        }
        assert_eq!(sum.holder, Holder::Exact);
        assert_eq!(sum.value(), 1.0 + 40.0 * 2f64.powi(33));
        // Values at the ends of the range never use the fixed point.
        let mut sum = WindowSum::default();
        sum.add(f64::MAX, false);
        sum.add(f64::MAX, false);
        assert_eq!((sum.holder, sum.value()), (Holder::Exact, f64::INFINITY));
        assert_eq!(sum.mean(2), f64::MAX);
    }
}
