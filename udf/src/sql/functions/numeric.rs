//! SQL functions: standard_scale, min_max_scale, bucketize.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type};
use datafusion::common::utils::take_function_args;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{Documentation, ScalarUDF, Signature, Volatility};

use crate::kernels::numeric::{self, Boundaries};
use crate::sql::{
    is_numeric, kernel_error, signature_error, FeatureFunction, FeatureUdf, KernelArg, DOC_SECTION,
};

pub(crate) fn udfs() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(FeatureUdf(StandardScale::new())),
        ScalarUDF::new_from_impl(FeatureUdf(MinMaxScale::new())),
        ScalarUDF::new_from_impl(FeatureUdf(Bucketize::new())),
    ]
}

fn float64_signature(names: &[&str]) -> Signature {
    Signature::uniform(names.len(), vec![DataType::Float64], Volatility::Immutable)
        .with_parameter_names(names.to_vec())
        .expect("parameter names match the arity")
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct StandardScale {
    signature: Signature,
    doc: Documentation,
}

impl StandardScale {
    fn new() -> Self {
        Self {
            signature: float64_signature(&["x", "mean", "std"]),
            doc: Documentation::builder(
                DOC_SECTION,
                "Standardizes `x` to a z-score: `(x - mean) / std`. `std` must be greater than 0 \
                 (zero is an error, not infinity). Null in any argument gives null; NaN gives NaN. \
                 A difference `x - mean` beyond the Float64 range does not make the result \
                 infinite when the z-score itself is representable.",
                "standard_scale(x, mean, std)",
            )
            .with_argument("x", "Numeric column or value to scale (cast to Float64).")
            .with_argument("mean", "Mean to subtract: a constant or a column.")
            .with_argument(
                "std",
                "Standard deviation to divide by, > 0: a constant or a column.",
            )
            .with_sql_example(
                "> SELECT standard_scale(5.0, 3.0, 2.0) AS z;\n\
                 +-----+\n\
                 | z   |\n\
                 +-----+\n\
                 | 1.0 |\n\
                 +-----+",
            )
            .with_related_udf("min_max_scale")
            .build(),
        }
    }
}

impl FeatureFunction for StandardScale {
    const NAME: &'static str = "standard_scale";

    feature_function_common!();

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [x, mean, std] = take_function_args(Self::NAME, args)?;
        let out =
            numeric::standard_scale(x.datum(), mean.datum(), std.datum()).map_err(kernel_error)?;
        Ok(Arc::new(out))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct MinMaxScale {
    signature: Signature,
    doc: Documentation,
}

impl MinMaxScale {
    fn new() -> Self {
        Self {
            signature: float64_signature(&["x", "lo", "hi"]),
            doc: Documentation::builder(
                DOC_SECTION,
                "Rescales `x` to [0, 1]: `(x - lo) / (hi - lo)`, clamped to [0, 1]. `hi` must be \
                 greater than `lo`. NaN stays NaN. Bounds more than `f64::MAX` apart (such as \
                 -1e308 and 1e308) still give exact results, not NaN.",
                "min_max_scale(x, lo, hi)",
            )
            .with_argument("x", "Numeric column or value to scale (cast to Float64).")
            .with_argument("lo", "Value mapped to 0: a constant or a column.")
            .with_argument(
                "hi",
                "Value mapped to 1, greater than `lo`: a constant or a column.",
            )
            .with_sql_example(
                "> SELECT min_max_scale(25, 0, 100) AS a, min_max_scale(150, 0, 100) AS b;\n\
                 +------+-----+\n\
                 | a    | b   |\n\
                 +------+-----+\n\
                 | 0.25 | 1.0 |\n\
                 +------+-----+",
            )
            .with_related_udf("standard_scale")
            .build(),
        }
    }
}

impl FeatureFunction for MinMaxScale {
    const NAME: &'static str = "min_max_scale";

    feature_function_common!();

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [x, lo, hi] = take_function_args(Self::NAME, args)?;
        let out =
            numeric::min_max_scale(x.datum(), lo.datum(), hi.datum()).map_err(kernel_error)?;
        Ok(Arc::new(out))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Bucketize {
    signature: Signature,
    doc: Documentation,
}

impl Bucketize {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable)
                .with_parameter_names(vec!["x", "boundaries"])
                .expect("two parameters"),
            doc: Documentation::builder(
                DOC_SECTION,
                "Index of the bucket holding `x` for strictly increasing `boundaries` \
                 b0 < b1 < ... < b(n-1). Buckets are left-closed: 0 is (-inf, b0), i is \
                 [b(i-1), b(i)), n is [b(n-1), +inf]. NaN and null give null. Spark ML's \
                 Bucketizer with splits [-inf, b0, ..., b(n-1), +inf] gives the same indices.",
                "bucketize(x, boundaries)",
            )
            .with_argument("x", "Numeric column or value (cast to Float64).")
            .with_argument(
                "boundaries",
                "Constant list of strictly increasing numbers, e.g. [0, 10, 100].",
            )
            .with_sql_example(
                "> SELECT bucketize(-5, [0, 10, 100]) AS a, bucketize(10, [0, 10, 100]) AS b, bucketize(1e6, [0, 10, 100]) AS c;\n\
                 +---+---+---+\n\
                 | a | b | c |\n\
                 +---+---+---+\n\
                 | 0 | 2 | 3 |\n\
                 +---+---+---+",
            )
            .build(),
        }
    }
}

/// The boundaries list: a scalar, or a column whose rows are all the same list (scalars
/// arrive expanded to columns through datafusion-ffi, e.g. from datafusion-python).
fn constant_list(arg: &KernelArg) -> Result<Vec<f64>> {
    let list = match arg {
        KernelArg::Scalar(_, ScalarValue::List(list)) => list.as_ref().clone(),
        KernelArg::Scalar(_, other) => {
            return exec_err!(
                "bucketize: argument `boundaries`: expected a list of numbers, found {other}"
            )
        }
        KernelArg::Column(column) => column.as_list::<i32>().clone(),
    };
    if list.is_empty() || list.is_null(0) {
        return exec_err!(
            "bucketize: argument `boundaries`: expected a non-null list of numbers, found null"
        );
    }
    let first = list.value(0);
    let first = first.as_primitive::<Float64Type>();
    if first.null_count() > 0 {
        return exec_err!(
            "bucketize: argument `boundaries`: expected numbers, found a null element"
        );
    }
    let constant = (1..list.len()).all(|row| {
        list.is_valid(row) && {
            let other = list.value(row);
            let other = other.as_primitive::<Float64Type>();
            other.null_count() == 0 && other.values() == first.values()
        }
    });
    if !constant {
        return exec_err!(
            "bucketize: argument `boundaries`: expected a constant (a literal list such as [0, 10, 100]), found a column whose rows differ"
        );
    }
    Ok(first.values().to_vec())
}

const BUCKETIZE_ACCEPTS: &[&str] = &["bucketize(numeric, list of numeric)"];

impl FeatureFunction for Bucketize {
    const NAME: &'static str = "bucketize";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types {
            [x, DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)]
                if is_numeric(x) && is_numeric(f.data_type()) =>
            {
                Ok(vec![
                    DataType::Float64,
                    DataType::List(Arc::new(Field::new_list_field(DataType::Float64, true))),
                ])
            }
            _ => signature_error(Self::NAME, BUCKETIZE_ACCEPTS, arg_types),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn nullable(&self, _arg_fields: &[datafusion::arrow::datatypes::FieldRef]) -> bool {
        true
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [x, boundaries] = take_function_args(Self::NAME, args)?;
        let values = constant_list(boundaries)?;
        let boundaries = Boundaries::new(Self::NAME, values).map_err(kernel_error)?;
        Ok(Arc::new(
            numeric::bucketize(x.datum(), &boundaries).map_err(kernel_error)?,
        ))
    }
}
