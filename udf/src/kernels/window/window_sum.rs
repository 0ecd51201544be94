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
            Holder::Fixed => {
                // The top 63 bits, every bit below them folded into the last ("round to
                // odd"): converting that rounds as the whole integer would (10 bits to
                // spare), in one signed 64-bit conversion instead of a 128-bit one. The
                // product by a power of two is exact: normal, and below 2^836.
                let magnitude = self.fixed.unsigned_abs();
                let shift = 65u32.saturating_sub(magnitude.leading_zeros());
                let kept = (magnitude >> shift) as i64;
                let below = magnitude & ((1u128 << shift) - 1) != 0;
                let value = (kept | below as i64) as f64 * power_of_two(self.unit + shift as i64);
                if self.fixed < 0 {
                    -value
                } else {
                    value
                }
            }
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
