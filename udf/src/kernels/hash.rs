//! Spark-compatible `xxhash64` and `hash_bucket`.
//!
//! Spark's `xxhash64(c1, c2, ...)` starts from seed 42 and feeds each column's value in
//! turn, the previous hash becoming the next seed. A null value leaves the running hash
//! unchanged, so the result is never null (a lone null hashes to 42). Per-type encoding,
//! as Spark's `XxHash64Function`:
//! - boolean, int8, int16, int32, date32: the value as a 4-byte little-endian int;
//! - int64: 8 bytes; timestamps: microseconds since the epoch as 8 bytes (other units
//!   are converted to microseconds, nanoseconds rounding toward negative infinity);
//! - float32 / float64: the IEEE bits, with `-0.0` hashed as `0.0` and every NaN as the
//!   canonical NaN (Java's `floatToIntBits` / `doubleToLongBits`);
//! - strings and binary: the UTF-8 / raw bytes.
//!
//! The hash itself is XXH64 from the `twox-hash` crate.

use arrow::array::{Array, AsArray, Datum, Int64Array};
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use twox_hash::XxHash64;

use super::operand::{broadcast_len, Operand};
use super::{KernelError, Result};

/// Spark's seed for `xxhash64`.
pub const SPARK_XXHASH64_SEED: u64 = 42;

/// Human-readable list of the column types `xxhash64` and `hash_bucket` accept.
pub const HASHABLE_TYPES: &str = "boolean, int8, int16, int32, int64, float32, float64, \
     date32, timestamp, utf8, large_utf8, utf8_view, binary, large_binary, binary_view, null";

/// Whether `xxhash64` can hash a column of this type.
pub fn is_hashable(data_type: &DataType) -> bool {
    use DataType::*;
    matches!(
        data_type,
        Null | Boolean
            | Int8
            | Int16
            | Int32
            | Int64
            | Float32
            | Float64
            | Date32
            | Timestamp(_, _)
            | Utf8
            | LargeUtf8
            | Utf8View
            | Binary
            | LargeBinary
            | BinaryView
    )
}

#[inline(always)]
fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    XxHash64::oneshot(seed, bytes)
}

#[inline(always)]
fn hash_int(value: i32, seed: u64) -> u64 {
    hash_bytes(&value.to_le_bytes(), seed)
}

#[inline(always)]
fn hash_long(value: i64, seed: u64) -> u64 {
    hash_bytes(&value.to_le_bytes(), seed)
}

/// Java's `floatToIntBits` after Spark's `-0.0 -> 0.0` normalisation.
#[inline(always)]
fn spark_float_bits(value: f32) -> i32 {
    if value == 0.0 {
        0
    } else if value.is_nan() {
        0x7fc0_0000
    } else {
        value.to_bits() as i32
    }
}

/// Java's `doubleToLongBits` after Spark's `-0.0 -> 0.0` normalisation.
#[inline(always)]
fn spark_double_bits(value: f64) -> i64 {
    if value == 0.0 {
        0
    } else if value.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        value.to_bits() as i64
    }
}

/// Feeds one column into the running hashes; null rows keep their hash.
#[inline(always)]
fn fold_column(
    hashes: &mut [u64],
    array: &dyn Array,
    is_scalar: bool,
    hash: impl Fn(usize, u64) -> u64,
) {
    if is_scalar {
        if array.is_valid(0) {
            hashes.iter_mut().for_each(|h| *h = hash(0, *h));
        }
        return;
    }
    match array.logical_nulls() {
        None => hashes
            .iter_mut()
            .enumerate()
            .for_each(|(row, h)| *h = hash(row, *h)),
        Some(nulls) => {
            for row in nulls.valid_indices() {
                hashes[row] = hash(row, hashes[row]);
            }
        }
    }
}

fn fold_datum(
    function: &'static str,
    position: usize,
    hashes: &mut [u64],
    datum: &dyn Datum,
) -> Result<()> {
    let (array, is_scalar) = datum.get();
    macro_rules! fold_primitive {
        ($t:ty, $hash:expr) => {{
            let values = array.as_primitive::<$t>().values();
            fold_column(hashes, array, is_scalar, |row, seed| {
                $hash(values[row], seed)
            })
        }};
    }
    macro_rules! fold_bytes {
        ($typed:expr) => {{
            let typed = $typed;
            fold_column(hashes, array, is_scalar, |row, seed| {
                hash_bytes(AsRef::<[u8]>::as_ref(typed.value(row)), seed)
            })
        }};
    }
    match array.data_type() {
        DataType::Null => {}
        DataType::Boolean => {
            let values = array.as_boolean();
            fold_column(hashes, array, is_scalar, |row, seed| {
                hash_int(values.value(row) as i32, seed)
            })
        }
        DataType::Int8 => fold_primitive!(Int8Type, |v: i8, s| hash_int(v as i32, s)),
        DataType::Int16 => fold_primitive!(Int16Type, |v: i16, s| hash_int(v as i32, s)),
        DataType::Int32 => fold_primitive!(Int32Type, hash_int),
        DataType::Date32 => fold_primitive!(Date32Type, hash_int),
        DataType::Int64 => fold_primitive!(Int64Type, hash_long),
        DataType::Float32 => {
            fold_primitive!(Float32Type, |v: f32, s| hash_int(spark_float_bits(v), s))
        }
        DataType::Float64 => {
            fold_primitive!(Float64Type, |v: f64, s| hash_long(spark_double_bits(v), s))
        }
        DataType::Timestamp(TimeUnit::Second, _) => fold_primitive!(
            TimestampSecondType,
            |v: i64, s| hash_long(v.saturating_mul(1_000_000), s)
        ),
        DataType::Timestamp(TimeUnit::Millisecond, _) => fold_primitive!(
            TimestampMillisecondType,
            |v: i64, s| hash_long(v.saturating_mul(1_000), s)
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            fold_primitive!(TimestampMicrosecondType, hash_long)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => fold_primitive!(
            TimestampNanosecondType,
            |v: i64, s| hash_long(v.div_euclid(1_000), s)
        ),
        DataType::Utf8 => fold_bytes!(array.as_string::<i32>()),
        DataType::LargeUtf8 => fold_bytes!(array.as_string::<i64>()),
        DataType::Utf8View => fold_bytes!(array.as_string_view()),
        DataType::Binary => fold_bytes!(array.as_binary::<i32>()),
        DataType::LargeBinary => fold_bytes!(array.as_binary::<i64>()),
        DataType::BinaryView => fold_bytes!(array.as_binary_view()),
        other => {
            return Err(KernelError::wrong_type(
                function,
                format!("#{}", position + 1),
                format!("expected one of {HASHABLE_TYPES}, found {other}"),
            ))
        }
    }
    Ok(())
}

fn running_hashes(
    function: &'static str,
    columns: &[&dyn Datum],
    extra: &[(&str, Option<usize>)],
) -> Result<Vec<u64>> {
    if columns.is_empty() {
        return Err(KernelError::new(
            function,
            "#1",
            "expected at least one column to hash, found none",
        ));
    }
    let names: Vec<String> = (1..=columns.len()).map(|i| format!("#{i}")).collect();
    let mut lengths: Vec<(&str, Option<usize>)> = columns
        .iter()
        .zip(&names)
        .map(|(c, name)| {
            let (array, is_scalar) = c.get();
            (name.as_str(), (!is_scalar).then(|| array.len()))
        })
        .collect();
    lengths.extend_from_slice(extra);
    let len = broadcast_len(function, &lengths)?;
    let mut hashes = vec![SPARK_XXHASH64_SEED; len];
    for (position, column) in columns.iter().enumerate() {
        fold_datum(function, position, &mut hashes, *column)?;
    }
    Ok(hashes)
}

/// `h.rem_euclid(n)` (Spark's `pmod`) for one fixed `n > 0`, by multiplication instead of
/// a 64-bit division per row (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019): the division dominated hash_bucket's time.
#[derive(Debug, Clone, Copy)]
struct PositiveModulus {
    n: u64,
    /// ceil(2^128 / n), wrapping to 0 for n = 1 (which then correctly gives 0).
    inverse: u128,
    /// 2^64 mod n: the correction for negative `h`, read as unsigned.
    wrap: u64,
}

impl PositiveModulus {
    fn new(n: i64) -> Self {
        debug_assert!(n > 0);
        let n = n as u64;
        Self {
            n,
            inverse: (u128::MAX / n as u128).wrapping_add(1),
            wrap: ((1u128 << 64) % n as u128) as u64,
        }
    }

    /// `a mod n` for unsigned `a`: the high 64 bits of (inverse * a mod 2^128) * n.
    #[inline(always)]
    fn unsigned_rem(&self, a: u64) -> u64 {
        let low = self.inverse.wrapping_mul(a as u128);
        let n = self.n as u128;
        let (hi, lo) = (low >> 64, low as u64 as u128);
        ((hi * n + ((lo * n) >> 64)) >> 64) as u64
    }

    #[inline(always)]
    fn pmod(&self, h: i64) -> i64 {
        let r = self.unsigned_rem(h as u64);
        if h >= 0 {
            r as i64
        } else {
            // h = u - 2^64, so h mod n = (r - 2^64 mod n) mod n.
            let r = r + (self.n - self.wrap);
            (if r >= self.n { r - self.n } else { r }) as i64
        }
    }
}

/// Spark's `xxhash64(c1, c2, ...)`: never null.
pub fn xxhash64(columns: &[&dyn Datum]) -> Result<Int64Array> {
    let hashes = running_hashes("xxhash64", columns, &[])?;
    let values: Vec<i64> = hashes.into_iter().map(|h| h as i64).collect();
    Ok(Int64Array::new(ScalarBuffer::from(values), None))
}

/// `pmod(xxhash64(c1, c2, ...), num_buckets)`, a bucket in `0..num_buckets`.
///
/// `num_buckets` must be > 0; a null `num_buckets` gives null (as Spark's `pmod`).
pub fn hash_bucket(columns: &[&dyn Datum], num_buckets: &dyn Datum) -> Result<Int64Array> {
    const NAME: &str = "hash_bucket";
    let buckets = Operand::<Int64Type>::from_datum(NAME, "num_buckets", num_buckets)?;
    buckets.ensure(NAME, "num_buckets", "a bucket count > 0", |n| n > 0)?;
    let hashes = running_hashes(NAME, columns, &[("num_buckets", buckets.len())])?;
    let len = hashes.len();
    match buckets {
        Operand::Scalar(None) => Ok(Int64Array::new_null(len)),
        Operand::Scalar(Some(n)) => {
            let modulus = PositiveModulus::new(n);
            // Maps in place (same layout): no second allocation.
            let values: Vec<i64> = hashes.into_iter().map(|h| modulus.pmod(h as i64)).collect();
            Ok(Int64Array::new(ScalarBuffer::from(values), None))
        }
        Operand::Column { array, values: n } => {
            // Null bucket counts hold arbitrary values: guard the division.
            let values: Vec<i64> = hashes
                .into_iter()
                .zip(n)
                .map(|(h, n)| (h as i64).rem_euclid((*n).max(1)))
                .collect();
            Ok(Int64Array::new(
                ScalarBuffer::from(values),
                array.nulls().cloned(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array, Scalar, StringArray,
        StringViewArray,
    };
    use proptest::prelude::*;

    #[test]
    fn fast_pmod_edges() {
        for n in [1i64, 2, 3, 7, 1000, 1 << 32, (1 << 62) + 1, i64::MAX] {
            let m = PositiveModulus::new(n);
            for h in [
                0i64,
                1,
                -1,
                i64::MIN,
                i64::MAX,
                i64::MIN + 1,
                n - 1,
                -n,
                n.wrapping_mul(3),
            ] {
                assert_eq!(m.pmod(h), h.rem_euclid(n), "h={h} n={n}");
            }
        }
    }

    #[test]
    fn lone_null_hashes_to_seed() {
        let col = Int32Array::from(vec![None, Some(1)]);
        let out = xxhash64(&[&col]).unwrap();
        assert_eq!(out.value(0), 42);
        assert_eq!(out.null_count(), 0);
    }

    #[test]
    fn negative_zero_and_nan_are_normalised() {
        let a = Float64Array::from(vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::from_bits(0x7ff8_dead_beef_0001),
        ]);
        let out = xxhash64(&[&a]).unwrap();
        assert_eq!(out.value(0), out.value(1));
        assert_eq!(out.value(2), out.value(3));
        let f = Float32Array::from(vec![0.0f32, -0.0]);
        let out = xxhash64(&[&f]).unwrap();
        assert_eq!(out.value(0), out.value(1));
    }

    #[test]
    fn string_encodings_agree() {
        let utf8 = StringArray::from(vec!["a", "hello world, this is long", ""]);
        let view = StringViewArray::from(vec!["a", "hello world, this is long", ""]);
        let bin = BinaryArray::from(vec![&b"a"[..], b"hello world, this is long", b""]);
        let a = xxhash64(&[&utf8]).unwrap();
        assert_eq!(a, xxhash64(&[&view]).unwrap());
        assert_eq!(a, xxhash64(&[&bin]).unwrap());
    }

    #[test]
    fn scalar_column_broadcasts() {
        let col = Int32Array::from(vec![1, 2, 3]);
        let s = Scalar::new(StringArray::from(vec!["x"]));
        let mixed = xxhash64(&[&col, &s]).unwrap();
        let full = StringArray::from(vec!["x"; 3]);
        assert_eq!(mixed, xxhash64(&[&col, &full]).unwrap());
        assert_eq!(xxhash64(&[&s]).unwrap().len(), 1);
    }

    #[test]
    fn sliced_columns_hash_their_own_rows() {
        let col = StringArray::from(vec![Some("a"), None, Some("c"), Some("d")]);
        let sliced = col.slice(1, 3);
        let expected = xxhash64(&[&StringArray::from(vec![None, Some("c"), Some("d")])]).unwrap();
        assert_eq!(xxhash64(&[&sliced]).unwrap(), expected);
    }

    #[test]
    fn errors_name_the_argument() {
        let col = arrow::array::UInt32Array::from(vec![1]);
        let err = xxhash64(&[&col]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("xxhash64: argument `#1`: expected one of boolean"),
            "{err}"
        );
        let ok = Int32Array::from(vec![1]);
        let zero = Scalar::new(Int64Array::from(vec![0]));
        let err = hash_bucket(&[&ok], &zero).unwrap_err();
        assert_eq!(
            err.to_string(),
            "hash_bucket: argument `num_buckets`: expected a bucket count > 0, found 0"
        );
        let err = xxhash64(&[]).unwrap_err();
        assert!(err.message.contains("at least one column"));
    }

    #[test]
    fn hash_bucket_nulls_and_columns() {
        let col = BooleanArray::from(vec![true, false, true]);
        let n = Int64Array::from(vec![Some(10), None, Some(3)]);
        let out = hash_bucket(&[&col], &n).unwrap();
        assert!(out.is_null(1));
        let hashes = xxhash64(&[&col]).unwrap();
        assert_eq!(out.value(0), hashes.value(0).rem_euclid(10));
        assert_eq!(out.value(2), hashes.value(2).rem_euclid(3));
    }

    /// Straightforward reference: Spark's algorithm row by row, on owned values.
    fn reference(rows: &[(Option<i64>, Option<String>)]) -> Vec<i64> {
        rows.iter()
            .map(|(a, b)| {
                let mut h = 42u64;
                if let Some(a) = a {
                    h = XxHash64::oneshot(h, &a.to_le_bytes());
                }
                if let Some(b) = b {
                    h = XxHash64::oneshot(h, b.as_bytes());
                }
                h as i64
            })
            .collect()
    }

    proptest! {
        #[test]
        fn fast_pmod_matches_rem_euclid(
            h in any::<i64>(),
            n in prop_oneof![1i64..1000, 1i64..=i64::MAX, Just(1i64 << 62), Just(i64::MAX)],
        ) {
            prop_assert_eq!(PositiveModulus::new(n).pmod(h), h.rem_euclid(n));
        }

        #[test]
        fn multi_column_matches_reference(
            rows in prop::collection::vec((any::<Option<i64>>(), any::<Option<String>>()), 0..40),
            start in 0usize..5,
            n in 1i64..1000,
        ) {
            let a = Int64Array::from(rows.iter().map(|r| r.0).collect::<Vec<_>>());
            let b = StringArray::from(rows.iter().map(|r| r.1.clone()).collect::<Vec<_>>());
            let start = start.min(rows.len());
            let len = rows.len() - start;
            let out = xxhash64(&[&a.slice(start, len), &b.slice(start, len)]).unwrap();
            let expected = reference(&rows[start..]);
            prop_assert_eq!(out.values().to_vec(), expected.clone());
            let buckets = hash_bucket(
                &[&a.slice(start, len), &b.slice(start, len)],
                &Scalar::new(Int64Array::from(vec![n])),
            ).unwrap();
            for (i, h) in expected.iter().enumerate() {
                let b = buckets.value(i);
                prop_assert!((0..n).contains(&b));
                prop_assert_eq!(b, h.rem_euclid(n));
            }
        }
    }
}
