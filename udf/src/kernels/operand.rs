//! Typed views of kernel arguments: a column of values or one value for every row.

use arrow::array::{Array, AsArray, Datum, PrimitiveArray};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, Float64Type};

use super::{KernelError, Result};

/// A primitive argument, resolved once per batch so that inner loops see plain slices.
#[derive(Debug, Clone, Copy)]
pub enum Operand<'a, T: ArrowPrimitiveType> {
    /// One value per row; `values` already honours the array's offset.
    Column {
        array: &'a PrimitiveArray<T>,
        values: &'a [T::Native],
    },
    /// One value (or null) for every row.
    Scalar(Option<T::Native>),
}

pub type F64Operand<'a> = Operand<'a, Float64Type>;

impl<'a, T: ArrowPrimitiveType> Operand<'a, T> {
    /// Reads a [`Datum`] that must hold `T` values.
    pub fn from_datum(
        function: &'static str,
        argument: &str,
        datum: &'a dyn Datum,
    ) -> Result<Self> {
        let (array, is_scalar) = datum.get();
        let typed = array.as_primitive_opt::<T>().ok_or_else(|| {
            KernelError::wrong_type(
                function,
                argument,
                format!("expected {}, found {}", T::DATA_TYPE, array.data_type()),
            )
        })?;
        Ok(Self::from_array(typed, is_scalar))
    }

    /// Wraps a typed array; `is_scalar` means its one row applies to every row.
    pub fn from_array(array: &'a PrimitiveArray<T>, is_scalar: bool) -> Self {
        if is_scalar {
            Operand::Scalar(array.is_valid(0).then(|| array.value(0)))
        } else {
            Operand::Column {
                array,
                values: array.values(),
            }
        }
    }

    /// The column, when this operand is one.
    pub fn column(&self) -> Option<&'a PrimitiveArray<T>> {
        match self {
            Operand::Column { array, .. } => Some(array),
            Operand::Scalar(_) => None,
        }
    }

    /// The scalar's value when this operand is a non-null scalar.
    pub fn scalar(&self) -> Option<T::Native> {
        match self {
            Operand::Scalar(v) => *v,
            Operand::Column { .. } => None,
        }
    }

    /// Number of rows of a column, `None` for a scalar.
    pub fn len(&self) -> Option<usize> {
        match self {
            Operand::Column { values, .. } => Some(values.len()),
            Operand::Scalar(_) => None,
        }
    }

    pub fn nulls(&self) -> Option<&'a NullBuffer> {
        match self {
            Operand::Column { array, .. } => Array::nulls(*array),
            Operand::Scalar(_) => None,
        }
    }

    pub fn is_null_scalar(&self) -> bool {
        matches!(self, Operand::Scalar(None))
    }

    /// The value at `row`; for nulls this is whatever the buffer holds.
    #[inline(always)]
    pub fn value(&self, row: usize) -> T::Native {
        match self {
            Operand::Column { values, .. } => values[row],
            Operand::Scalar(v) => v.unwrap_or_default(),
        }
    }

    #[inline(always)]
    pub fn is_valid(&self, row: usize) -> bool {
        match self {
            Operand::Column { array, .. } => array.is_valid(row),
            Operand::Scalar(v) => v.is_some(),
        }
    }

    /// Checks every non-null value with `accept`; the error says what was `expected` and
    /// where the first rejected value is.
    pub fn ensure(
        &self,
        function: &'static str,
        argument: &str,
        expected: &str,
        accept: impl Fn(T::Native) -> bool,
    ) -> Result<()>
    where
        T::Native: std::fmt::Display,
    {
        match self {
            Operand::Scalar(Some(v)) if !accept(*v) => Err(KernelError::new(
                function,
                argument,
                format!("expected {expected}, found {v}"),
            )),
            Operand::Scalar(_) => Ok(()),
            Operand::Column { array, values } => {
                let nulls = array.nulls();
                let bad = values
                    .iter()
                    .enumerate()
                    .find(|(row, v)| nulls.is_none_or(|n| n.is_valid(*row)) && !accept(**v));
                match bad {
                    Some((row, v)) => Err(KernelError::new(
                        function,
                        argument,
                        format!("expected {expected}, found {v} at row {row}"),
                    )),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The row count shared by all column arguments (1 when all are scalars).
///
/// `lengths` pairs each argument name with its column length (`None` for scalars).
pub fn broadcast_len(function: &'static str, lengths: &[(&str, Option<usize>)]) -> Result<usize> {
    let mut columns = lengths
        .iter()
        .filter_map(|(name, len)| len.map(|l| (*name, l)));
    let Some((first_name, first_len)) = columns.next() else {
        return Ok(1);
    };
    for (name, len) in columns {
        if len != first_len {
            return Err(KernelError::new(
                function,
                name,
                format!("expected {first_len} rows like argument `{first_name}`, found {len} rows"),
            ));
        }
    }
    Ok(first_len)
}

/// Union of the validity of all operands.
pub(crate) fn union_nulls<T: ArrowPrimitiveType>(
    operands: &[&Operand<'_, T>],
) -> Option<NullBuffer> {
    operands
        .iter()
        .fold(None, |acc, op| NullBuffer::union(acc.as_ref(), op.nulls()))
}

/// Applies `f` row by row over broadcast `f64` operands. The general (slower) path for
/// argument mixes that have no dedicated `unary`/`binary` fast path.
pub(crate) fn map_f64<const N: usize>(
    function: &'static str,
    names: [&str; N],
    operands: [&F64Operand<'_>; N],
    f: impl Fn([f64; N]) -> f64,
) -> Result<PrimitiveArray<Float64Type>> {
    compute_f64(function, names, operands, |len| {
        (0..len)
            .map(|row| f(std::array::from_fn(|k| operands[k].value(row))))
            .collect()
    })
}

/// The broadcast length, null handling and validity of [`map_f64`], with the values of
/// every row computed by `values(len)` (for kernels that walk the operands themselves).
pub(crate) fn compute_f64<const N: usize>(
    function: &'static str,
    names: [&str; N],
    operands: [&F64Operand<'_>; N],
    values: impl FnOnce(usize) -> Vec<f64>,
) -> Result<PrimitiveArray<Float64Type>> {
    let lengths: Vec<(&str, Option<usize>)> = names
        .iter()
        .zip(operands.iter())
        .map(|(n, o)| (*n, o.len()))
        .collect();
    let len = broadcast_len(function, &lengths)?;
    if operands.iter().any(|o| o.is_null_scalar()) {
        return Ok(PrimitiveArray::new_null(len));
    }
    let nulls = union_nulls(&operands);
    Ok(PrimitiveArray::new(ScalarBuffer::from(values(len)), nulls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Scalar};

    #[test]
    fn scalar_and_sliced_column() {
        let col = Float64Array::from(vec![Some(1.0), None, Some(3.0), Some(4.0)]).slice(1, 3);
        let op = F64Operand::from_datum("f", "x", &col).unwrap();
        assert_eq!(op.len(), Some(3));
        assert!(!op.is_valid(0));
        assert_eq!(op.value(1), 3.0);
        let s = Scalar::new(Float64Array::from(vec![2.5]));
        let op = F64Operand::from_datum("f", "x", &s).unwrap();
        assert_eq!(op.len(), None);
        assert_eq!(op.value(7), 2.5);
    }

    #[test]
    fn wrong_type_names_argument() {
        let col = arrow::array::Int32Array::from(vec![1]);
        let err = F64Operand::from_datum("f", "x", &col).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f: argument `x`: expected Float64, found Int32"
        );
    }

    #[test]
    fn length_mismatch_names_both_arguments() {
        let err = broadcast_len("f", &[("a", Some(3)), ("b", None), ("c", Some(2))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f: argument `c`: expected 3 rows like argument `a`, found 2 rows"
        );
        assert_eq!(broadcast_len("f", &[("a", None)]).unwrap(), 1);
    }

    #[test]
    fn ensure_reports_first_bad_row_and_skips_nulls() {
        let col = Float64Array::from(vec![Some(1.0), None, Some(0.0)]);
        let op = F64Operand::from_datum("f", "std", &col).unwrap();
        let err = op
            .ensure("f", "std", "a value > 0", |v| v > 0.0)
            .unwrap_err();
        assert_eq!(err.message, "expected a value > 0, found 0 at row 2");
    }
}
