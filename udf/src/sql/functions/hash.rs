//! SQL functions: xxhash64, hash (Murmur3), hash_bucket (Spark-compatible).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Datum};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{Documentation, ScalarUDF, Signature, Volatility};

use crate::kernels::hash::{self, unhashable_reason, HASHABLE_TYPES};
use crate::sql::{
    kernel_error, signature_error, FeatureFunction, FeatureUdf, KernelArg, DOC_SECTION,
};

pub(crate) fn udfs() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(FeatureUdf(XxHash64::new())),
        ScalarUDF::new_from_impl(FeatureUdf(Murmur3Hash::new())),
        ScalarUDF::new_from_impl(FeatureUdf(HashBucket::new())),
    ]
}

/// Every column as it is (dictionaries and views are hashed by value, without decoding),
/// or a planning error naming the first type Spark cannot hash and why.
fn hashable_columns(name: &str, accepted: &[&str], types: &[DataType]) -> Result<Vec<DataType>> {
    if types.is_empty() {
        return signature_error(name, accepted, types);
    }
    for (i, t) in types.iter().enumerate() {
        if let Some(reason) = unhashable_reason(t) {
            return plan_err!(
                "{name}: argument #{}: expected a type Spark hashes ({HASHABLE_TYPES}), found {reason}",
                i + 1
            );
        }
    }
    Ok(types.to_vec())
}

fn datums(args: &[KernelArg]) -> Vec<&dyn Datum> {
    args.iter().map(|a| a.datum()).collect()
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct XxHash64 {
    signature: Signature,
    doc: Documentation,
}

const XXHASH64_ACCEPTS: &[&str] =
    &["xxhash64(expr [, expr ...]) with each expr of a hashable type"];

impl XxHash64 {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                format!(
                    "64-bit xxHash of one or more values, bit-identical to Spark's built-in \
                     `xxhash64`: seed 42, each column's hash seeds the next, a null value leaves \
                     the hash unchanged (never null; a lone null gives 42), -0.0 hashes like 0.0. \
                     Hashable types: {HASHABLE_TYPES}."
                ),
                "xxhash64(expr [, expr ...])",
            )
            .with_argument(
                "expr",
                "Column or value to hash; several are hashed in order.",
            )
            .with_sql_example(
                "> SELECT xxhash64('hello') AS h, xxhash64(CAST(1 AS INT), 'a') AS h2;\n\
                 +----------------------+---------------------+\n\
                 | h                    | h2                  |\n\
                 +----------------------+---------------------+\n\
                 | -4367754540140381902 | 8205864924878002737 |\n\
                 +----------------------+---------------------+",
            )
            .with_related_udf("hash_bucket")
            .build(),
        }
    }
}

impl FeatureFunction for XxHash64 {
    const NAME: &'static str = "xxhash64";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        hashable_columns(Self::NAME, XXHASH64_ACCEPTS, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        false
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        Ok(Arc::new(
            hash::xxhash64(&datums(args)).map_err(kernel_error)?,
        ))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Murmur3Hash {
    signature: Signature,
    doc: Documentation,
}

const HASH_ACCEPTS: &[&str] = &["hash(expr [, expr ...]) with each expr of a hashable type"];

impl Murmur3Hash {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                format!(
                    "32-bit Murmur3 hash of one or more values, bit-identical to Spark's built-in \
                     `hash` (the one behind `pmod(hash(key), n)` bucketing): seed 42, each \
                     column's hash seeds the next, a null value leaves the hash unchanged (never \
                     null; a lone null gives 42). Hashable types: {HASHABLE_TYPES}."
                ),
                "hash(expr [, expr ...])",
            )
            .with_argument(
                "expr",
                "Column or value to hash; several are hashed in order.",
            )
            .with_sql_example(
                "> SELECT hash('hello') AS h, hash(CAST(1 AS INT), 'a') AS h2;\n\
                 +-------------+------------+\n\
                 | h           | h2         |\n\
                 +-------------+------------+\n\
                 | -1008564952 | -936062819 |\n\
                 +-------------+------------+",
            )
            .with_related_udf("xxhash64")
            .build(),
        }
    }
}

impl FeatureFunction for Murmur3Hash {
    const NAME: &'static str = "hash";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        hashable_columns(Self::NAME, HASH_ACCEPTS, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn nullable(&self, _arg_fields: &[FieldRef]) -> bool {
        false
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        Ok(Arc::new(
            hash::murmur3_hash(&datums(args)).map_err(kernel_error)?,
        ))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct HashBucket {
    signature: Signature,
    doc: Documentation,
}

const HASH_BUCKET_ACCEPTS: &[&str] = &[
    "hash_bucket(expr [, expr ...], num_buckets) with hashable exprs and an integer num_buckets",
];

impl HashBucket {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            doc: Documentation::builder(
                DOC_SECTION,
                "Bucket in [0, num_buckets) of one or more values: \
                 `pmod(xxhash64(expr, ...), num_buckets)`, bit-identical to the same expression \
                 in Spark. `num_buckets` must be > 0; a null `num_buckets` gives null.",
                "hash_bucket(expr [, expr ...], num_buckets)",
            )
            .with_argument(
                "expr",
                "Column or value to hash (see xxhash64 for the types).",
            )
            .with_argument(
                "num_buckets",
                "Number of buckets, an integer > 0: a constant or a column.",
            )
            .with_sql_example(
                "> SELECT hash_bucket('user_42', 1000) AS b;\n\
                 +-----+\n\
                 | b   |\n\
                 +-----+\n\
                 | 579 |\n\
                 +-----+",
            )
            .with_related_udf("xxhash64")
            .build(),
        }
    }
}

impl FeatureFunction for HashBucket {
    const NAME: &'static str = "hash_bucket";

    feature_function_common!();

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types {
            [columns @ .., buckets]
                if !columns.is_empty() && (buckets.is_integer() || buckets.is_null()) =>
            {
                let mut types = hashable_columns(Self::NAME, HASH_BUCKET_ACCEPTS, columns)?;
                types.push(DataType::Int64);
                Ok(types)
            }
            _ => signature_error(Self::NAME, HASH_BUCKET_ACCEPTS, arg_types),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn nullable(&self, arg_fields: &[FieldRef]) -> bool {
        arg_fields.last().is_none_or(|f| f.is_nullable())
    }

    fn invoke(&self, args: &[KernelArg]) -> Result<ArrayRef> {
        let (buckets, columns) = args
            .split_last()
            .expect("coerce_types requires two arguments");
        let out = hash::hash_bucket(&datums(columns), buckets.datum()).map_err(kernel_error)?;
        Ok(Arc::new(out))
    }
}
