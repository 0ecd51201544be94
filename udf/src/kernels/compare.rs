//! Whether two columns hold the same values row by row, floats within a tolerance: the
//! value comparison of training/serving skew (`arrowfeat skew`).
//!
//! Equal: two nulls; two NaNs (any sign or payload); `0.0` and `-0.0`; two floats within
//! the absolute, relative or ULP tolerance (either suffices); two lists of the same length
//! whose elements are equal so. Any other pair of types is compared exactly (Arrow's
//! total order: nested floats there compare bit for bit, NaN equal to NaN).

use arrow::array::{
    make_comparator, Array, AsArray, BooleanArray, BooleanBufferBuilder, Float32Array, Float64Array,
};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Float32Type, Float64Type};

use super::KernelError;

const FUNCTION: &str = "compare";

/// When two floats count as equal. All zero: only equal values.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    /// |a - b| <= absolute.
    pub absolute: f64,
    /// |a - b| <= relative * max(|a|, |b|).
    pub relative: f64,
    /// At most this many representable values apart (in the column's own float width).
    pub ulps: u64,
}

impl Tolerance {
    /// Checks the parameters: finite and not negative.
    pub fn new(absolute: f64, relative: f64, ulps: u64) -> Result<Tolerance, KernelError> {
        for (name, value) in [("absolute", absolute), ("relative", relative)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(KernelError::new(
                    FUNCTION,
                    name,
                    format!("expected a finite number >= 0, found {value}"),
                ));
            }
        }
        Ok(Tolerance {
            absolute,
            relative,
            ulps,
        })
    }

    /// `a` and `b` (floats of one width, widened exactly) within the tolerance;
    /// `ulps_apart`: how many values of their own width lie between them.
    fn close(&self, a: f64, b: f64, ulps_apart: impl FnOnce() -> u64) -> bool {
        if a == b {
            return true;
        }
        if a.is_nan() || b.is_nan() {
            return a.is_nan() && b.is_nan();
        }
        if a.is_infinite() || b.is_infinite() {
            return false;
        }
        let diff = (a - b).abs(); // may round to +inf (MAX - -MAX): then only ULPs can hold
        diff <= self.absolute
            || diff <= self.relative * a.abs().max(b.abs())
            || (self.ulps > 0 && ulps_apart() <= self.ulps)
    }

    fn close_f64(&self, a: f64, b: f64) -> bool {
        self.close(a, b, || ordered64(a).abs_diff(ordered64(b)))
    }

    fn close_f32(&self, a: f32, b: f32) -> bool {
        self.close(f64::from(a), f64::from(b), || {
            u64::from(ordered32(a).abs_diff(ordered32(b)))
        })
    }
}

/// Whether values of `data_type` are compared within a [`Tolerance`] (floats, and lists of
/// floats element by element); values of any other type are compared exactly.
pub fn uses_tolerance(data_type: &DataType) -> bool {
    match data_type {
        DataType::Float32 | DataType::Float64 => true,
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            matches!(item.data_type(), DataType::Float32 | DataType::Float64)
        }
        _ => false,
    }
}

/// The float's position in the ordered sequence of floats (0.0 and -0.0 both at 0).
fn ordered64(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    if bits < 0 {
        i64::MIN - bits
    } else {
        bits
    }
}

fn ordered32(x: f32) -> i32 {
    let bits = x.to_bits() as i32;
    if bits < 0 {
        i32::MIN - bits
    } else {
        bits
    }
}

/// Rows of two float arrays (by index) within the tolerance, nulls equal to nulls.
enum Floats<'a> {
    F64(&'a Float64Array, &'a Float64Array),
    F32(&'a Float32Array, &'a Float32Array),
}

impl Floats<'_> {
    fn of<'a>(left: &'a dyn Array, right: &'a dyn Array) -> Option<Floats<'a>> {
        match (left.data_type(), right.data_type()) {
            (DataType::Float64, DataType::Float64) => Some(Floats::F64(
                left.as_primitive::<Float64Type>(),
                right.as_primitive::<Float64Type>(),
            )),
            (DataType::Float32, DataType::Float32) => Some(Floats::F32(
                left.as_primitive::<Float32Type>(),
                right.as_primitive::<Float32Type>(),
            )),
            _ => None,
        }
    }

    fn equal(&self, tolerance: &Tolerance, i: usize, j: usize) -> bool {
        match self {
            Floats::F64(a, b) => match (a.is_valid(i), b.is_valid(j)) {
                (true, true) => tolerance.close_f64(a.value(i), b.value(j)),
                (valid_a, valid_b) => valid_a == valid_b,
            },
            Floats::F32(a, b) => match (a.is_valid(i), b.is_valid(j)) {
                (true, true) => tolerance.close_f32(a.value(i), b.value(j)),
                (valid_a, valid_b) => valid_a == valid_b,
            },
        }
    }
}

/// Where each row of a list column is in its values.
enum ListRows<'a> {
    Offsets32(&'a [i32]),
    Offsets64(&'a [i64]),
    /// A slice of a fixed-size list slices its values: row i starts at i * size.
    Fixed(usize),
}

impl ListRows<'_> {
    fn of(array: &dyn Array) -> Option<(ListRows<'_>, &dyn Array)> {
        match array.data_type() {
            DataType::List(_) => {
                let list = array.as_list::<i32>();
                Some((
                    ListRows::Offsets32(list.value_offsets()),
                    list.values().as_ref(),
                ))
            }
            DataType::LargeList(_) => {
                let list = array.as_list::<i64>();
                Some((
                    ListRows::Offsets64(list.value_offsets()),
                    list.values().as_ref(),
                ))
            }
            DataType::FixedSizeList(_, size) => {
                let list = array.as_fixed_size_list();
                let size = usize::try_from(*size).unwrap_or(0);
                Some((ListRows::Fixed(size), list.values().as_ref()))
            }
            _ => None,
        }
    }

    /// The element range of row `i`.
    fn range(&self, i: usize) -> (usize, usize) {
        match self {
            ListRows::Offsets32(o) => (o[i] as usize, o[i + 1] as usize),
            ListRows::Offsets64(o) => (o[i] as usize, o[i + 1] as usize),
            ListRows::Fixed(size) => (i * size, (i + 1) * size),
        }
    }
}

/// One flag per row: whether `left` and `right` differ there (see the module). They must
/// have the same length and type.
pub fn differ(
    left: &dyn Array,
    right: &dyn Array,
    tolerance: &Tolerance,
) -> Result<BooleanArray, KernelError> {
    if left.len() != right.len() {
        return Err(KernelError::new(
            FUNCTION,
            "right",
            format!("expected {} rows, found {}", left.len(), right.len()),
        ));
    }
    if left.data_type() != right.data_type() {
        return Err(KernelError::wrong_type(
            FUNCTION,
            "right",
            format!("expected {}, found {}", left.data_type(), right.data_type()),
        ));
    }
    let mut out = BooleanBufferBuilder::new(left.len());
    if let Some(floats) = Floats::of(left, right) {
        for i in 0..left.len() {
            out.append(!floats.equal(tolerance, i, i));
        }
        return Ok(BooleanArray::new(out.finish(), None));
    }
    if let (Some((left_rows, left_values)), Some((right_rows, right_values))) =
        (ListRows::of(left), ListRows::of(right))
    {
        if let Some(floats) = Floats::of(left_values, right_values) {
            for i in 0..left.len() {
                let same = match (left.is_valid(i), right.is_valid(i)) {
                    (true, true) => {
                        let (a, a_end) = left_rows.range(i);
                        let (b, b_end) = right_rows.range(i);
                        a_end - a == b_end - b
                            && (0..a_end - a).all(|k| floats.equal(tolerance, a + k, b + k))
                    }
                    (valid_a, valid_b) => valid_a == valid_b,
                };
                out.append(!same);
            }
            return Ok(BooleanArray::new(out.finish(), None));
        }
    }
    let compare = make_comparator(left, right, SortOptions::default()).map_err(|e| {
        KernelError::wrong_type(
            FUNCTION,
            "right",
            format!("cannot compare values of type {}: {e}", left.data_type()),
        )
    })?;
    for i in 0..left.len() {
        out.append(compare(i, i).is_ne());
    }
    Ok(BooleanArray::new(out.finish(), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, FixedSizeListArray, Int64Array, StringArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    fn flags(mask: &BooleanArray) -> Vec<bool> {
        mask.iter().map(|v| v.unwrap_or(false)).collect()
    }

    #[test]
    fn floats_within_each_tolerance() {
        let a = Float64Array::from(vec![
            Some(1.0),
            Some(f64::NAN),
            Some(0.0),
            None,
            Some(1.0),
            Some(f64::INFINITY),
            Some(f64::MAX),
            Some(1e300),
            None,
        ]);
        let b = Float64Array::from(vec![
            Some(1.0 + 1e-12),
            Some(-f64::NAN),
            Some(-0.0),
            None,
            Some(1.1),
            Some(f64::INFINITY),
            Some(-f64::MAX),
            Some(1e300 * (1.0 + f64::EPSILON)),
            Some(0.0),
        ]);
        let exact = Tolerance::default();
        assert_eq!(
            flags(&differ(&a, &b, &exact).unwrap()),
            [true, false, false, false, true, false, true, true, true]
        );
        let loose = Tolerance::new(1e-9, 0.0, 0).unwrap();
        assert!(!flags(&differ(&a, &b, &loose).unwrap())[0]);
        let ulps = Tolerance::new(0.0, 0.0, 1).unwrap();
        assert!(!flags(&differ(&a, &b, &ulps).unwrap())[7]);
        let relative = Tolerance::new(0.0, 0.2, 0).unwrap();
        assert!(!flags(&differ(&a, &b, &relative).unwrap())[4]);
        // MAX against -MAX: the difference overflows, and stays a difference.
        assert!(flags(&differ(&a, &b, &relative).unwrap())[6]);
        assert!(Tolerance::new(f64::NAN, 0.0, 0).is_err());
        assert!(Tolerance::new(0.0, -1.0, 0).is_err());
    }

    #[test]
    fn ulps_cross_zero_and_count_in_the_columns_width() {
        let tiny = f64::from_bits(1);
        let a = Float64Array::from(vec![tiny, -tiny]);
        let b = Float64Array::from(vec![-tiny, tiny]);
        let two = Tolerance::new(0.0, 0.0, 2).unwrap();
        assert_eq!(flags(&differ(&a, &b, &two).unwrap()), [false, false]);
        let one = Tolerance::new(0.0, 0.0, 1).unwrap();
        assert_eq!(flags(&differ(&a, &b, &one).unwrap()), [true, true]);
        let x = Float32Array::from(vec![1.0f32]);
        let y = Float32Array::from(vec![f32::from_bits(1.0f32.to_bits() + 1)]);
        assert_eq!(flags(&differ(&x, &y, &one).unwrap()), [false]);
    }

    #[test]
    fn lists_compare_element_by_element_and_slices_are_read_in_place() {
        let field = Arc::new(Field::new("item", DataType::Float32, true));
        let values = Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])) as ArrayRef;
        let a = FixedSizeListArray::new(field.clone(), 2, values, None);
        let shifted = Arc::new(Float32Array::from(vec![9.0, 9.0, 1.0, 2.0, 3.0, 4.5])) as ArrayRef;
        let b = FixedSizeListArray::new(field, 2, shifted, None).slice(1, 2);
        let a = a.slice(0, 2);
        assert_eq!(
            flags(&differ(&a, &b, &Tolerance::default()).unwrap()),
            [false, true]
        );
        let half = Tolerance::new(0.5, 0.0, 0).unwrap();
        assert_eq!(flags(&differ(&a, &b, &half).unwrap()), [false, false]);
    }

    #[test]
    fn other_types_compare_exactly() {
        let a = StringArray::from(vec![Some("a"), None, Some("b")]);
        let b = StringArray::from(vec![Some("a"), None, Some("c")]);
        assert_eq!(
            flags(&differ(&a, &b, &Tolerance::default()).unwrap()),
            [false, false, true]
        );
        let i = Int64Array::from(vec![i64::MIN, i64::MAX]);
        let j = Int64Array::from(vec![i64::MIN, i64::MAX - 1]);
        assert_eq!(
            flags(&differ(&i, &j, &Tolerance::default()).unwrap()),
            [false, true]
        );
        assert!(differ(&a, &i.slice(0, 2), &Tolerance::default()).is_err());
        let empty = Float64Array::from(Vec::<f64>::new());
        assert_eq!(
            differ(&empty, &empty, &Tolerance::default()).unwrap().len(),
            0
        );
    }
}
