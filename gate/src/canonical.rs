//! Floats as duplicate detection compares them: `-0.0` is `0.0` and every NaN is one
//! value (a sign or payload bit changes no feature), at the top level and inside lists and
//! embeddings. DataFusion groups lists by their bytes, where `-0.0` and `0.0` differ, so
//! the values are made canonical before they are grouped.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, OffsetSizeTrait, PrimitiveArray,
};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Float16Type, Float32Type, Float64Type,
};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// Arrow's half-precision float (the `half` crate's, which arrow does not re-export).
type F16 = <Float16Type as ArrowPrimitiveType>::Native;

/// The SQL name of [`CanonicalFloats`] in the gate's own sessions.
pub(crate) const NAME: &str = "canonical_floats";

/// Whether `data_type` holds floats, at the top level or as the elements of (nested)
/// lists: the types [`canonical`] changes.
pub(crate) fn holds_floats(data_type: &DataType) -> bool {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => true,
        DataType::List(field) | DataType::LargeList(field) | DataType::FixedSizeList(field, _) => {
            holds_floats(field.data_type())
        }
        _ => false,
    }
}

/// `array` with `-0.0` as `0.0` and every NaN as the one NaN; other values, nulls, list
/// offsets and validity unchanged. Types that hold no floats come back as they are.
pub(crate) fn canonical(array: &ArrayRef) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Float16 => {
            floats::<Float16Type>(array, |x| if x.is_nan() { F16::NAN } else { x + F16::ZERO })
        }
        DataType::Float32 => {
            floats::<Float32Type>(array, |x| if x.is_nan() { f32::NAN } else { x + 0.0 })
        }
        DataType::Float64 => {
            floats::<Float64Type>(array, |x| if x.is_nan() { f64::NAN } else { x + 0.0 })
        }
        DataType::List(_) => list(array.as_list::<i32>())?,
        DataType::LargeList(_) => list(array.as_list::<i64>())?,
        // Lists of no element hold no float (and rebuilt, would lose their length).
        DataType::FixedSizeList(_, 0) => array.clone(),
        DataType::FixedSizeList(field, size) => {
            let lists = array.as_fixed_size_list();
            Arc::new(FixedSizeListArray::try_new(
                field.clone(),
                *size,
                canonical(lists.values())?,
                lists.nulls().cloned(),
            )?)
        }
        _ => array.clone(),
    })
}

fn floats<T: ArrowPrimitiveType>(array: &ArrayRef, f: impl Fn(T::Native) -> T::Native) -> ArrayRef {
    // Every slot is mapped, null or not: the function cannot fail, and the validity is kept.
    let mapped: PrimitiveArray<T> = array.as_primitive::<T>().unary(f);
    Arc::new(mapped)
}

fn list<O: OffsetSizeTrait>(lists: &GenericListArray<O>) -> Result<ArrayRef> {
    let (DataType::List(field) | DataType::LargeList(field)) = lists.data_type() else {
        return exec_err!("{NAME} expected a list");
    };
    Ok(Arc::new(GenericListArray::<O>::try_new(
        field.clone(),
        lists.offsets().clone(),
        canonical(lists.values())?,
        lists.nulls().cloned(),
    )?))
}

/// [`canonical`] as a SQL function of one argument, returning its argument's type.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct CanonicalFloats {
    signature: Signature,
}

impl CanonicalFloats {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(CanonicalFloats {
            signature: Signature::any(1, Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for CanonicalFloats {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [one] => Ok(one.clone()),
            _ => exec_err!("{NAME} takes one argument"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("{NAME} takes one argument");
        };
        Ok(match value {
            ColumnarValue::Array(array) => ColumnarValue::Array(canonical(array)?),
            ColumnarValue::Scalar(scalar) => {
                let array = canonical(&scalar.to_array()?)?;
                ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&array, 0)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float32Array, Float64Array, ListArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::Field;

    fn bits64(array: &ArrayRef) -> Vec<Option<u64>> {
        array
            .as_primitive::<Float64Type>()
            .iter()
            .map(|x| x.map(f64::to_bits))
            .collect()
    }

    #[test]
    fn zeros_and_nans_become_one_value_and_the_rest_stays() {
        let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63) | 7);
        let values: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            Some(negative_nan),
            Some(f64::NAN),
            None,
            Some(f64::NEG_INFINITY),
            Some(-f64::MIN_POSITIVE / 2.0),
            Some(f64::MAX),
        ]));
        let out = canonical(&values).unwrap();
        assert_eq!(
            bits64(&out),
            vec![
                Some(0),
                Some(0),
                Some(f64::NAN.to_bits()),
                Some(f64::NAN.to_bits()),
                None,
                Some(f64::NEG_INFINITY.to_bits()),
                Some((-f64::MIN_POSITIVE / 2.0).to_bits()),
                Some(f64::MAX.to_bits()),
            ]
        );
    }

    #[test]
    fn lists_keep_offsets_and_nulls_and_sliced_lists_stay_sliced() {
        let field = Arc::new(Field::new("item", DataType::Float32, true));
        let lists = ListArray::try_new(
            field.clone(),
            OffsetBuffer::from_lengths([1, 2, 0, 1]),
            Arc::new(Float32Array::from(vec![
                Some(7.0),
                Some(-0.0),
                Some(-f32::NAN),
                None,
            ])),
            Some(vec![true, true, false, true].into()),
        )
        .unwrap();
        let sliced: ArrayRef = Arc::new(lists.slice(1, 3));
        let out = canonical(&sliced).unwrap();
        let out = out.as_list::<i32>();
        assert_eq!(out.len(), 3);
        assert!(out.is_null(1));
        let first = out.value(0);
        let first = first.as_primitive::<Float32Type>();
        assert_eq!(first.value(0).to_bits(), 0);
        assert_eq!(first.value(1).to_bits(), f32::NAN.to_bits());
        assert!(out.value(2).is_null(0));
    }

    #[test]
    fn embeddings_become_canonical_and_other_types_pass() {
        let field = Arc::new(Field::new("item", DataType::Float64, true));
        let embeddings: ArrayRef = Arc::new(
            FixedSizeListArray::try_new(
                field,
                2,
                Arc::new(Float64Array::from(vec![-0.0, 1.0, -f64::NAN, 2.0])),
                None,
            )
            .unwrap(),
        );
        let out = canonical(&embeddings).unwrap();
        assert_eq!(
            bits64(out.as_fixed_size_list().values()),
            vec![
                Some(0),
                Some(1f64.to_bits()),
                Some(f64::NAN.to_bits()),
                Some(2f64.to_bits())
            ]
        );
        let empty: ArrayRef = Arc::new(FixedSizeListArray::new_null(
            Arc::new(Field::new("item", DataType::Float32, true)),
            0,
            3,
        ));
        assert_eq!(canonical(&empty).unwrap().len(), 3);
        let ints: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from(vec![1, -1]));
        assert_eq!(canonical(&ints).unwrap().as_ref(), ints.as_ref());
        assert!(holds_floats(embeddings.data_type()));
        assert!(!holds_floats(&DataType::Utf8));
    }
}
