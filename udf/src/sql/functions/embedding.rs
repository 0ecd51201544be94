//! SQL functions over embedding vectors: dot_product, cosine_similarity, l2_norm,
//! l2_normalize, quantize_int8, dequantize_int8.

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{Documentation, ScalarUDF, Signature, Volatility};

use crate::kernels::embedding;
use crate::sql::{
    is_numeric, kernel_error, signature_error, FeatureFunction, FeatureUdf, KernelArg, DOC_SECTION,
};

pub(crate) fn udfs() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(FeatureUdf(VectorPair::dot_product())),
        ScalarUDF::new_from_impl(FeatureUdf(
            CosineSimilarity(VectorPair::cosine_similarity()),
        )),
        ScalarUDF::new_from_impl(FeatureUdf(L2Norm::new())),
        ScalarUDF::new_from_impl(FeatureUdf(L2Normalize(L2Norm::normalize()))),
        ScalarUDF::new_from_impl(FeatureUdf(QuantizeInt8::new())),
        ScalarUDF::new_from_impl(FeatureUdf(DequantizeInt8(QuantizeInt8::dequantize()))),
    ]
}

/// The element type of a list-like type, if it is one.
fn list_element(t: &DataType) -> Option<&DataType> {
    match t {
        DataType::FixedSizeList(f, _) | DataType::List(f) | DataType::LargeList(f) => {
            Some(f.data_type())
        }
        _ => None,
    }
}

/// `t`'s list kind (fixed size, list, large list) around `element`, with the canonical
/// nullable "item" field that the kernels build.
fn list_of(t: &DataType, element: DataType) -> DataType {
    let field = Arc::new(Field::new_list_field(element, true));
    match t {
        DataType::FixedSizeList(_, size) => DataType::FixedSizeList(field, *size),
        DataType::LargeList(_) => DataType::LargeList(field),
        _ => DataType::List(field),
    }
}

/// Float32 stays Float32; every other numeric element becomes Float64.
fn float_element(t: &DataType) -> Option<DataType> {
    match list_element(t)? {
        DataType::Float32 => Some(DataType::Float32),
        e if is_numeric(e) => Some(DataType::Float64),
        _ => None,
    }
}

const VECTOR: &str = "FixedSizeList, List or LargeList of numbers";

/// Shared shape of the two-vector functions.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct VectorPair {
    signature: Signature,
    doc: Documentation,
}

fn pair_signature() -> Signature {
    Signature::user_defined(Volatility::Immutable)
        .with_parameter_names(vec!["a", "b"])
        .expect("two parameters")
}

impl VectorPair {
    fn dot_product() -> Self {
        Self {
            signature: pair_signature(),
            doc: Documentation::builder(
                DOC_SECTION,
                "Dot product of two vectors (FixedSizeList, List or LargeList of Float32 or \
                 Float64), accumulated in Float64. Vectors of different lengths are an error that \
                 names the row. Either side may be a constant vector, e.g. a query embedding. A sum \
                 whose intermediate overflows or underflows is computed again over scaled \
                 vectors, so the result is infinite or zero only when the true product is.",
                "dot_product(a, b)",
            )
            .with_argument("a", "Vector column or constant.")
            .with_argument("b", "Vector column or constant of the same length as `a`.")
            .with_sql_example(
                "> SELECT dot_product([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) AS dot;\n\
                 +------+\n\
                 | dot  |\n\
                 +------+\n\
                 | 32.0 |\n\
                 +------+",
            )
            .with_related_udf("cosine_similarity")
            .build(),
        }
    }

    fn cosine_similarity() -> Self {
        Self {
            signature: pair_signature(),
            doc: Documentation::builder(
                DOC_SECTION,
                "Cosine similarity `dot(a, b) / (|a| |b|)` of two vectors, clamped to [-1, 1]. \
                 A zero vector has no direction: the result is null. Vectors of huge or tiny \
                 elements (1e200, 1e-200) are scaled first, so they still give their cosine.",
                "cosine_similarity(a, b)",
            )
            .with_argument("a", "Vector column or constant.")
            .with_argument("b", "Vector column or constant of the same length as `a`.")
            .with_sql_example(
                "> SELECT cosine_similarity([1.0, 0.0], [1.0, 1.0]) AS cos, cosine_similarity([0.0, 0.0], [1.0, 1.0]) AS zero;\n\
                 +--------------------+------+\n\
                 | cos                | zero |\n\
                 +--------------------+------+\n\
                 | 0.7071067811865475 |      |\n\
                 +--------------------+------+",
            )
            .with_related_udf("dot_product")
            .build(),
        }
    }

    fn coerce(&self, name: &str, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let accepted = [format!("{name}({VECTOR}, {VECTOR})")];
        let accepted: Vec<&str> = accepted.iter().map(String::as_str).collect();
        match arg_types {
            [a, b] => match (float_element(a), float_element(b)) {
                (Some(ea), Some(eb)) => {
                    let element = if ea == eb { ea } else { DataType::Float64 };
                    Ok(vec![list_of(a, element.clone()), list_of(b, element)])
                }
                _ => signature_error(name, &accepted, arg_types),
            },
            _ => signature_error(name, &accepted, arg_types),
        }
    }
}

impl FeatureFunction for VectorPair {
    const NAME: &'static str = "dot_product";
    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.coerce(Self::NAME, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [a, b] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        Ok(Arc::new(
            embedding::dot_product(a.datum(), b.datum()).map_err(kernel_error)?,
        ))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct CosineSimilarity(VectorPair);

impl FeatureFunction for CosineSimilarity {
    const NAME: &'static str = "cosine_similarity";

    fn signature(&self) -> &Signature {
        &self.0.signature
    }

    fn documentation(&self) -> &Documentation {
        &self.0.doc
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.0.coerce(Self::NAME, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        true
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [a, b] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        Ok(Arc::new(
            embedding::cosine_similarity(a.datum(), b.datum()).map_err(kernel_error)?,
        ))
    }
}

/// Shared shape of the one-vector functions.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct L2Norm {
    signature: Signature,
    doc: Documentation,
}

fn single_signature() -> Signature {
    Signature::user_defined(Volatility::Immutable)
        .with_parameter_names(vec!["a"])
        .expect("one parameter")
}

fn coerce_single(name: &str, arg_types: &[DataType]) -> Result<Vec<DataType>> {
    match arg_types {
        [a] => match float_element(a) {
            Some(element) => Ok(vec![list_of(a, element)]),
            None => signature_error(name, &[&format!("{name}({VECTOR})")], arg_types),
        },
        _ => signature_error(name, &[&format!("{name}({VECTOR})")], arg_types),
    }
}

impl L2Norm {
    fn new() -> Self {
        Self {
            signature: single_signature(),
            doc: Documentation::builder(
                DOC_SECTION,
                "Euclidean norm `sqrt(sum(a[i]^2))` of a vector, accumulated in Float64. Like \
                 `hypot`, it neither overflows nor underflows where the norm is representable: \
                 `l2_norm([1e200, 1e200])` is 1.414e200 and `l2_norm([1e-200, 1e-200])` is \
                 1.414e-200.",
                "l2_norm(a)",
            )
            .with_argument(
                "a",
                "Vector column or constant (FixedSizeList, List or LargeList of numbers).",
            )
            .with_sql_example(
                "> SELECT l2_norm([3.0, 4.0]) AS n;\n\
                 +-----+\n\
                 | n   |\n\
                 +-----+\n\
                 | 5.0 |\n\
                 +-----+",
            )
            .with_related_udf("l2_normalize")
            .build(),
        }
    }

    fn normalize() -> Self {
        Self {
            signature: single_signature(),
            doc: Documentation::builder(
                DOC_SECTION,
                "Scales a vector to unit length, `a / |a|`, keeping its list type and element \
                 type. A zero vector has no direction: the result is null. Vectors of huge or tiny \
                 elements (1e200, 1e-200) are scaled first, so they still give their cosine.",
                "l2_normalize(a)",
            )
            .with_argument(
                "a",
                "Vector column or constant (FixedSizeList, List or LargeList of numbers).",
            )
            .with_sql_example(
                "> SELECT l2_normalize([3.0, 4.0]) AS unit;\n\
                 +------------+\n\
                 | unit       |\n\
                 +------------+\n\
                 | [0.6, 0.8] |\n\
                 +------------+",
            )
            .with_related_udf("l2_norm")
            .build(),
        }
    }
}

impl FeatureFunction for L2Norm {
    const NAME: &'static str = "l2_norm";
    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_single(Self::NAME, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [a] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        Ok(Arc::new(
            embedding::l2_norm(a.datum()).map_err(kernel_error)?,
        ))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct L2Normalize(L2Norm);

impl FeatureFunction for L2Normalize {
    const NAME: &'static str = "l2_normalize";

    fn signature(&self) -> &Signature {
        &self.0.signature
    }

    fn documentation(&self) -> &Documentation {
        &self.0.doc
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_single(Self::NAME, arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        true
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [a] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        embedding::l2_normalize(a.datum()).map_err(kernel_error)
    }
}

/// Shared shape of quantize / dequantize.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct QuantizeInt8 {
    signature: Signature,
    doc: Documentation,
}

fn quant_signature(first: &str) -> Signature {
    Signature::user_defined(Volatility::Immutable)
        .with_parameter_names(vec![first, "scale", "zero_point"])
        .expect("three parameters")
}

/// Coerces `(values, scale, zero_point)`: `value_type` maps the first argument.
fn coerce_quant(
    name: &str,
    accepted: &str,
    arg_types: &[DataType],
    value_type: impl Fn(&DataType) -> Option<DataType>,
) -> Result<Vec<DataType>> {
    match arg_types {
        [x, scale, zp] if is_numeric(scale) && (zp.is_integer() || zp.is_null()) => {
            match value_type(x) {
                Some(x) => Ok(vec![x, DataType::Float64, DataType::Int64]),
                None => signature_error(name, &[accepted], arg_types),
            }
        }
        _ => signature_error(name, &[accepted], arg_types),
    }
}

impl QuantizeInt8 {
    fn new() -> Self {
        Self {
            signature: quant_signature("x"),
            doc: Documentation::builder(
                DOC_SECTION,
                "Per-tensor affine quantization to UInt8, as in quantization-aware training: \
                 `clamp(round_half_to_even(x / scale) + zero_point, 0, 255)`, computed in Float64. \
                 Works elementwise on a float column (NaN gives null) and on vectors \
                 (FixedSizeList/List of floats give the same list type of UInt8; a vector holding \
                 NaN gives null). `scale` must be > 0 and `zero_point` in 0..=255.",
                "quantize_int8(x, scale, zero_point)",
            )
            .with_argument("x", "Float column, or vector column, to quantize.")
            .with_argument("scale", "Quantization step, > 0: a constant or a column.")
            .with_argument("zero_point", "Integer in 0..=255 that 0.0 maps to: a constant or a column.")
            .with_sql_example(
                "> SELECT quantize_int8(0.5, 0.01, 128) AS q, quantize_int8([0.1, -0.2, 9.0], 0.01, 128) AS qv;\n\
                 +-----+-----------------+\n\
                 | q   | qv              |\n\
                 +-----+-----------------+\n\
                 | 178 | [138, 108, 255] |\n\
                 +-----+-----------------+",
            )
            .with_related_udf("dequantize_int8")
            .build(),
        }
    }

    fn dequantize() -> Self {
        Self {
            signature: quant_signature("q"),
            doc: Documentation::builder(
                DOC_SECTION,
                "Inverse of quantize_int8: `(q - zero_point) * scale` as Float32, elementwise on \
                 UInt8 (other integers are cast, out of range is an error) or on vectors of UInt8.",
                "dequantize_int8(q, scale, zero_point)",
            )
            .with_argument("q", "UInt8 column, or vector column of UInt8.")
            .with_argument("scale", "Quantization step used to quantize, > 0.")
            .with_argument("zero_point", "Zero point used to quantize, in 0..=255.")
            .with_sql_example(
                "> SELECT dequantize_int8(quantize_int8(0.5, 0.01, 128), 0.01, 128) AS x;\n\
                 +-----+\n\
                 | x   |\n\
                 +-----+\n\
                 | 0.5 |\n\
                 +-----+",
            )
            .with_related_udf("quantize_int8")
            .build(),
        }
    }
}

const QUANTIZE_ACCEPTS: &str =
    "quantize_int8(numeric or vector of numbers, numeric scale, integer zero_point)";
const DEQUANTIZE_ACCEPTS: &str =
    "dequantize_int8(integer or vector of integers, numeric scale, integer zero_point)";

impl FeatureFunction for QuantizeInt8 {
    const NAME: &'static str = "quantize_int8";
    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_quant(Self::NAME, QUANTIZE_ACCEPTS, arg_types, |x| match x {
            DataType::Float32 => Some(DataType::Float32),
            t if is_numeric(t) => Some(DataType::Float64),
            t => float_element(t).map(|e| list_of(t, e)),
        })
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match &arg_types[0] {
            t if list_element(t).is_some() => list_of(t, DataType::UInt8),
            _ => DataType::UInt8,
        })
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        true
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [x, scale, zp] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        embedding::quantize_int8(x.datum(), scale.datum(), zp.datum()).map_err(kernel_error)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct DequantizeInt8(QuantizeInt8);

impl FeatureFunction for DequantizeInt8 {
    const NAME: &'static str = "dequantize_int8";

    fn signature(&self) -> &Signature {
        &self.0.signature
    }

    fn documentation(&self) -> &Documentation {
        &self.0.doc
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        coerce_quant(Self::NAME, DEQUANTIZE_ACCEPTS, arg_types, |q| match q {
            t if t.is_integer() || t.is_null() => Some(DataType::UInt8),
            t => list_element(t)
                .filter(|e| e.is_integer())
                .map(|_| list_of(t, DataType::UInt8)),
        })
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match &arg_types[0] {
            t if list_element(t).is_some() => list_of(t, DataType::Float32),
            _ => DataType::Float32,
        })
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let [q, scale, zp] = datafusion::common::utils::take_function_args(Self::NAME, args)?;
        embedding::dequantize_int8(q.datum(), scale.datum(), zp.datum()).map_err(kernel_error)
    }
}
