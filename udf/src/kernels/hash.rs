//! Spark-compatible `xxhash64`, `hash` (Murmur3) and `hash_bucket`.
//!
//! Spark's `xxhash64(c1, c2, ...)` and `hash(c1, c2, ...)` start from seed 42 and feed
//! each column's value in turn, the previous hash becoming the next seed. A null value
//! leaves the running hash unchanged, so the result is never null (a lone null hashes to
//! 42). Per-type encoding, as Spark's `HashExpression.computeHash`:
//! - boolean, int8, int16, int32, date: the value as an int (dates: days since 1970);
//! - int64, timestamps (with or without a time zone): a long, timestamps in microseconds
//!   since the epoch (other units converted, nanoseconds rounding toward negative infinity);
//! - float32 / float64: the IEEE bits, with `-0.0` hashed as `0.0` and every NaN as the
//!   canonical NaN (Java's `floatToIntBits` / `doubleToLongBits`);
//! - decimals: of precision <= 18 the unscaled value as a long; wider ones the bytes of the
//!   unscaled big integer (Java's `BigInteger.toByteArray`: minimal two's complement, big
//!   endian);
//! - strings and binary: the UTF-8 / raw bytes;
//! - lists: the elements in order, each seeding the next (an empty list leaves the seed; a
//!   null element leaves the running hash unchanged); structs: the fields in order, likewise;
//! - dictionaries: their values (Spark has no dictionaries).
//!
//! Maps are refused as Spark refuses them. XXH64 is the `twox-hash` crate's; Murmur3 is
//! Spark's `Murmur3_x86_32`, including its treatment of the last 1-3 bytes of a string
//! (each byte, sign-extended, mixed as a whole block), which differs from reference Murmur3.

use std::cell::Cell;

use arrow::array::{Array, AsArray, Datum, Int32Array, Int64Array};
use arrow::buffer::{Buffer, ScalarBuffer};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type,
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, IntervalUnit,
    IntervalYearMonthType, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use twox_hash::XxHash64;

use super::operand::{broadcast_len, Operand};
use super::{KernelError, Result};

/// Spark's seed for `xxhash64` and `hash`.
pub const SPARK_XXHASH64_SEED: u64 = 42;

/// Human-readable list of the column types the hash functions accept.
pub const HASHABLE_TYPES: &str = "boolean, int8, int16, int32, int64, float32, float64, \
     decimal (up to 38 digits), date, timestamp, time, duration, year-month interval, utf8, \
     large_utf8, utf8_view, binary, large_binary, binary_view, fixed_size_binary, null, and \
     lists, structs and dictionaries of these";

/// Why Spark cannot hash a column of `data_type` (with the path to the offending nested
/// type), or `None` when it can.
pub fn unhashable_reason(data_type: &DataType) -> Option<String> {
    use DataType::*;
    match data_type {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Date32 | Date64
        | Timestamp(_, _) | Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView
        | FixedSizeBinary(_) | Decimal32(_, _) | Decimal64(_, _) | Decimal128(_, _) => None,
        // Spark's day-time intervals (microseconds), TIME (nanoseconds of the day) and
        // year-month intervals (months).
        Duration(_) | Time32(_) | Time64(_) | Interval(IntervalUnit::YearMonth) => None,
        Decimal256(precision, _) if *precision <= 38 => None,
        Decimal256(_, _) => Some(format!(
            "{data_type}: Spark has no decimal of more than 38 digits"
        )),
        Dictionary(_, value) => unhashable_reason(value),
        List(field) | LargeList(field) | FixedSizeList(field, _) => {
            unhashable_reason(field.data_type()).map(|r| format!("a list element of {r}"))
        }
        Struct(fields) => fields.iter().find_map(|f| {
            unhashable_reason(f.data_type()).map(|r| format!("struct field `{}` of {r}", f.name()))
        }),
        Map(_, _) => Some(format!(
            "{data_type}: Spark refuses to hash maps (unless spark.sql.legacy.allowHashOnMapType is set)"
        )),
        UInt8 | UInt16 | UInt32 | UInt64 => Some(format!(
            "{data_type}: Spark has no unsigned integers (cast to a signed type first)"
        )),
        Interval(_) => Some(format!(
            "{data_type}: calendar intervals are not hashed (Spark's CalendarInterval; use a duration or a year-month interval)"
        )),
        other => Some(format!("{other}: Spark has no hash for this type")),
    }
}

/// Whether the hash functions accept a column of this type.
pub fn is_hashable(data_type: &DataType) -> bool {
    unhashable_reason(data_type).is_none()
}

/// One of Spark's hash functions: how an int, a long and bytes are mixed into the running
/// hash. Everything else (types, nesting, nulls) is shared.
pub trait SparkHash {
    type Value: Copy + Send + Sync;
    const SEED: Self::Value;
    fn int(value: i32, seed: Self::Value) -> Self::Value;
    fn long(value: i64, seed: Self::Value) -> Self::Value;
    fn bytes(bytes: &[u8], seed: Self::Value) -> Self::Value;

    /// Four rows' bytes, each with its own seed; by default one after the other.
    #[inline(always)]
    fn bytes_x4(values: [&[u8]; 4], seeds: [Self::Value; 4]) -> [Self::Value; 4] {
        std::array::from_fn(|k| Self::bytes(values[k], seeds[k]))
    }
}

/// Spark's `xxhash64` (`XxHash64Function`).
#[derive(Debug, Clone, Copy)]
pub struct SparkXxHash64;

impl SparkHash for SparkXxHash64 {
    type Value = u64;
    const SEED: u64 = SPARK_XXHASH64_SEED;

    #[inline(always)]
    fn int(value: i32, seed: u64) -> u64 {
        xxh64_of_4_bytes(value as u32, seed)
    }

    #[inline(always)]
    fn long(value: i64, seed: u64) -> u64 {
        xxh64_of_8_bytes(value as u64, seed)
    }

    #[inline(always)]
    fn bytes(bytes: &[u8], seed: u64) -> u64 {
        XxHash64::oneshot(seed, bytes)
    }

    #[inline(always)]
    fn bytes_x4(values: [&[u8]; 4], seeds: [u64; 4]) -> [u64; 4] {
        let len = values[0].len();
        if len < XXH_STRIPE && values.iter().all(|v| v.len() == len) {
            xxh64_of_short_bytes_x4(values, seeds)
        } else {
            std::array::from_fn(|k| Self::bytes(values[k], seeds[k]))
        }
    }
}

// XXH64's primes (from its specification).
const XXH_PRIME_1: u64 = 0x9E37_79B1_85EB_CA87;
const XXH_PRIME_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const XXH_PRIME_3: u64 = 0x1656_67B1_9E37_79F9;
const XXH_PRIME_4: u64 = 0x85EB_CA77_C2B2_AE63;
const XXH_PRIME_5: u64 = 0x27D4_EB2F_1656_67C5;

/// XXH64 of the 8 little-endian bytes of `value`: the general algorithm with the length
/// fixed, so that a column's loop has no branch on lengths and no call (as Spark's own
/// `XXH64.hashLong`). A test holds it equal to `twox-hash` on every kind of input.
#[inline(always)]
fn xxh64_of_8_bytes(value: u64, seed: u64) -> u64 {
    let lane = value
        .wrapping_mul(XXH_PRIME_2)
        .rotate_left(31)
        .wrapping_mul(XXH_PRIME_1);
    let hash = seed.wrapping_add(XXH_PRIME_5).wrapping_add(8) ^ lane;
    xxh64_avalanche(
        hash.rotate_left(27)
            .wrapping_mul(XXH_PRIME_1)
            .wrapping_add(XXH_PRIME_4),
    )
}

/// XXH64 of the 4 little-endian bytes of `value` (as Spark's `XXH64.hashInt`).
#[inline(always)]
fn xxh64_of_4_bytes(value: u32, seed: u64) -> u64 {
    let hash =
        seed.wrapping_add(XXH_PRIME_5).wrapping_add(4) ^ (value as u64).wrapping_mul(XXH_PRIME_1);
    xxh64_avalanche(
        hash.rotate_left(23)
            .wrapping_mul(XXH_PRIME_2)
            .wrapping_add(XXH_PRIME_3),
    )
}

/// XXH64 reads inputs of at least this many bytes in stripes of four lanes; shorter ones
/// lane by lane into one accumulator.
const XXH_STRIPE: usize = 32;

/// XXH64 of four values of one length below [`XXH_STRIPE`], each with its own seed.
///
/// Row by row, a short value's hash is one chain of dependent multiplies, and the CPU
/// overlaps few rows' chains. With the length shared, the four chains run in one loop
/// with one control flow, so they overlap: 16-byte strings hash in about 0.8 of the time
/// of `twox-hash` per row (docs/benchmarks.md). A test holds it equal to `twox-hash`.
#[inline(always)]
fn xxh64_of_short_bytes_x4(values: [&[u8]; 4], seeds: [u64; 4]) -> [u64; 4] {
    let len = values[0].len();
    // Each cut to the shared length, so that the compiler sees every read below in bounds.
    let values = [
        &values[0][..len],
        &values[1][..len],
        &values[2][..len],
        &values[3][..len],
    ];
    // Plain loops, not `array::map`, which is not always inlined.
    let mut hashes = seeds;
    for hash in &mut hashes {
        *hash = hash.wrapping_add(XXH_PRIME_5).wrapping_add(len as u64);
    }
    let mut at = 0;
    while at + 8 <= len {
        for (hash, value) in hashes.iter_mut().zip(values) {
            let lane = u64::from_le_bytes(value[at..at + 8].try_into().expect("8 bytes"));
            let lane = lane
                .wrapping_mul(XXH_PRIME_2)
                .rotate_left(31)
                .wrapping_mul(XXH_PRIME_1);
            *hash = (*hash ^ lane)
                .rotate_left(27)
                .wrapping_mul(XXH_PRIME_1)
                .wrapping_add(XXH_PRIME_4);
        }
        at += 8;
    }
    if at + 4 <= len {
        for (hash, value) in hashes.iter_mut().zip(values) {
            let lane = u32::from_le_bytes(value[at..at + 4].try_into().expect("4 bytes"));
            *hash = (*hash ^ u64::from(lane).wrapping_mul(XXH_PRIME_1))
                .rotate_left(23)
                .wrapping_mul(XXH_PRIME_2)
                .wrapping_add(XXH_PRIME_3);
        }
        at += 4;
    }
    while at < len {
        for (hash, value) in hashes.iter_mut().zip(values) {
            *hash = (*hash ^ u64::from(value[at]).wrapping_mul(XXH_PRIME_5))
                .rotate_left(11)
                .wrapping_mul(XXH_PRIME_1);
        }
        at += 1;
    }
    for hash in &mut hashes {
        *hash = xxh64_avalanche(*hash);
    }
    hashes
}

/// XXH64's final mix.
#[inline(always)]
fn xxh64_avalanche(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(XXH_PRIME_2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(XXH_PRIME_3);
    hash ^ (hash >> 32)
}

/// Spark's `hash` (`Murmur3HashFunction`, `Murmur3_x86_32`).
#[derive(Debug, Clone, Copy)]
pub struct SparkMurmur3;

impl SparkMurmur3 {
    #[inline(always)]
    fn mix_k1(k1: u32) -> u32 {
        k1.wrapping_mul(0xcc9e_2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b87_3593)
    }

    #[inline(always)]
    fn mix_h1(h1: u32, k1: u32) -> u32 {
        (h1 ^ k1)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64)
    }

    #[inline(always)]
    fn finish(h1: u32, length: u32) -> u32 {
        let mut h = h1 ^ length;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }
}

impl SparkHash for SparkMurmur3 {
    type Value = u32;
    const SEED: u32 = 42;

    #[inline(always)]
    fn int(value: i32, seed: u32) -> u32 {
        Self::finish(Self::mix_h1(seed, Self::mix_k1(value as u32)), 4)
    }

    #[inline(always)]
    fn long(value: i64, seed: u32) -> u32 {
        let low = value as u32;
        let high = ((value as u64) >> 32) as u32;
        let h1 = Self::mix_h1(seed, Self::mix_k1(low));
        Self::finish(Self::mix_h1(h1, Self::mix_k1(high)), 8)
    }

    #[inline(always)]
    fn bytes(bytes: &[u8], seed: u32) -> u32 {
        let blocks = bytes.chunks_exact(4);
        let tail = blocks.remainder();
        let mut h1 = seed;
        for block in blocks {
            let k1 = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
            h1 = Self::mix_h1(h1, Self::mix_k1(k1));
        }
        // Spark's `hashUnsafeBytes`: each remaining byte, sign-extended, is a block.
        for &byte in tail {
            h1 = Self::mix_h1(h1, Self::mix_k1(byte as i8 as i32 as u32));
        }
        Self::finish(h1, bytes.len() as u32)
    }
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

thread_local! {
    /// The first time value hashed on this thread since the last reset whose value in
    /// Spark's unit does not fit in 64 bits. Recorded where the value is hashed, so values
    /// under nulls, outside a slice or in unused dictionary slots never count.
    static OUT_OF_RANGE: Cell<Option<(i64, &'static str)>> = const { Cell::new(None) };
}

#[cold]
fn record_out_of_range(value: i64, unit: &'static str) {
    OUT_OF_RANGE.with(|c| {
        if c.get().is_none() {
            c.set(Some((value, unit)));
        }
    });
}

/// `value * scale`, recording an overflow (the caller turns it into an error).
#[inline(always)]
fn scaled(value: i64, scale: i64, unit: &'static str) -> i64 {
    value.checked_mul(scale).unwrap_or_else(|| {
        record_out_of_range(value, unit);
        value.saturating_mul(scale)
    })
}

/// Microseconds since the epoch, as Spark stores timestamps.
#[inline(always)]
fn micros(value: i64, unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => scaled(value, 1_000_000, "seconds"),
        TimeUnit::Millisecond => scaled(value, 1_000, "milliseconds"),
        TimeUnit::Microsecond => value,
        TimeUnit::Nanosecond => value.div_euclid(1_000),
    }
}

/// Java's `BigInteger.toByteArray()` of `value`, given as big-endian two's complement
/// bytes: the shortest form that keeps the sign, at least one byte.
fn minimal_twos_complement(be: &[u8]) -> &[u8] {
    let mut start = 0;
    while start + 1 < be.len() {
        let (byte, next) = (be[start], be[start + 1]);
        if (byte == 0x00 && next & 0x80 == 0) || (byte == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    &be[start..]
}

/// A decimal's unscaled `value` hashed as Spark hashes a decimal of `precision`.
#[inline(always)]
fn hash_decimal<H: SparkHash>(value: i128, precision: u8, seed: H::Value) -> H::Value {
    if precision <= 18 {
        H::long(value as i64, seed)
    } else {
        H::bytes(minimal_twos_complement(&value.to_be_bytes()), seed)
    }
}

/// The dictionary key of `row` as an index into the values, `None` if out of range.
fn dictionary_index(array: &dyn Array, row: usize) -> Option<usize> {
    let keys = array.as_any_dictionary().keys();
    let key: i64 = match keys.data_type() {
        DataType::Int8 => keys.as_primitive::<Int8Type>().value(row).into(),
        DataType::Int16 => keys.as_primitive::<Int16Type>().value(row).into(),
        DataType::Int32 => keys.as_primitive::<Int32Type>().value(row).into(),
        DataType::Int64 => keys.as_primitive::<Int64Type>().value(row),
        DataType::UInt8 => keys.as_primitive::<UInt8Type>().value(row).into(),
        DataType::UInt16 => keys.as_primitive::<UInt16Type>().value(row).into(),
        DataType::UInt32 => keys.as_primitive::<UInt32Type>().value(row).into(),
        DataType::UInt64 => i64::try_from(keys.as_primitive::<UInt64Type>().value(row)).ok()?,
        _ => return None,
    };
    usize::try_from(key).ok()
}

/// A column's hash of one value, seeded: `(row, seed) -> hash`.
type RowHash<'a, V> = Box<dyn Fn(usize, V) -> V + 'a>;
/// A column's hashes of the values `start..end` in order, each seeding the next (a list's
/// elements): `(start, end, seed) -> hash`.
type RangeHash<'a, V> = Box<dyn Fn(usize, usize, V) -> V + 'a>;

/// `value` (which ignores nulls) behind `array`'s null check: a null leaves the seed.
fn row_of<'a, V: Copy + 'a>(
    array: &'a dyn Array,
    value: impl Fn(usize, V) -> V + 'a,
) -> RowHash<'a, V> {
    match skipped_nulls(array) {
        None => Box::new(value),
        Some(nulls) => Box::new(move |i, seed| {
            if nulls.is_valid(i) {
                value(i, seed)
            } else {
                seed
            }
        }),
    }
}

/// The rows whose value leaves the hash unchanged, if any. For a dictionary, only its
/// keys' nulls: a key pointing at a null value is skipped by the value hasher itself
/// (the same result), and the dictionary's logical nulls cost a pass over every key,
/// which a list of dictionaries paid once per block of rows (quadratic in the rows).
fn skipped_nulls(array: &dyn Array) -> Option<arrow::buffer::NullBuffer> {
    let nulls = match array.data_type() {
        DataType::Dictionary(_, _) => array.nulls().cloned(),
        _ => array.logical_nulls(),
    };
    nulls.filter(|n| n.null_count() > 0)
}

/// `value` folded over a range of `array`'s rows, nulls skipped, in one loop per type.
fn range_of<'a, V: Copy + 'a>(
    array: &'a dyn Array,
    value: impl Fn(usize, V) -> V + 'a,
) -> RangeHash<'a, V> {
    match skipped_nulls(array) {
        None => Box::new(move |start, end, seed| (start..end).fold(seed, |h, i| value(i, h))),
        Some(nulls) => Box::new(move |start, end, seed| {
            (start..end).fold(seed, |h, i| if nulls.is_valid(i) { value(i, h) } else { h })
        }),
    }
}

/// Calls `$wrap!(array, value)` with `value` hashing one value of `array` (nulls not
/// checked), typed once per column so that `$wrap`'s loop is specialised per type. Nested
/// and dictionary columns get a boxed value hasher built from their children. Strings
/// and binaries go to `$wrap_bytes!(array, bytes)` instead, `bytes` giving a row's bytes,
/// so that a loop may hash several rows at once.
macro_rules! with_value_hasher {
    ($H:ty, $array:expr, $wrap:ident, $wrap_bytes:ident) => {{
        let array: &dyn Array = $array;
        macro_rules! primitive {
            ($t:ty, $hash:expr) => {{
                let values = array.as_primitive::<$t>().values();
                $wrap!(array, move |i: usize, seed| $hash(values[i], seed))
            }};
        }
        macro_rules! bytes {
            ($typed:expr) => {{
                let typed = $typed;
                $wrap_bytes!(array, move |i: usize| AsRef::<[u8]>::as_ref(typed.value(i)))
            }};
        }
        match array.data_type() {
            DataType::Boolean => {
                let values = array.as_boolean();
                $wrap!(array, move |i: usize, seed| {
                    <$H>::int(values.value(i) as i32, seed)
                })
            }
            DataType::Int8 => primitive!(Int8Type, |v: i8, s| <$H>::int(v as i32, s)),
            DataType::Int16 => primitive!(Int16Type, |v: i16, s| <$H>::int(v as i32, s)),
            DataType::Int32 => primitive!(Int32Type, <$H>::int),
            DataType::Int64 => primitive!(Int64Type, <$H>::long),
            DataType::Float32 => {
                primitive!(Float32Type, |v: f32, s| <$H>::int(spark_float_bits(v), s))
            }
            DataType::Float64 => {
                primitive!(Float64Type, |v: f64, s| <$H>::long(spark_double_bits(v), s))
            }
            DataType::Date32 => primitive!(Date32Type, <$H>::int),
            DataType::Date64 => primitive!(Date64Type, |v: i64, s| <$H>::int(date64_days(v), s)),
            DataType::Timestamp(TimeUnit::Second, _) => primitive!(
                TimestampSecondType,
                |v: i64, s| <$H>::long(micros(v, TimeUnit::Second), s)
            ),
            DataType::Timestamp(TimeUnit::Millisecond, _) => primitive!(
                TimestampMillisecondType,
                |v: i64, s| <$H>::long(micros(v, TimeUnit::Millisecond), s)
            ),
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                primitive!(TimestampMicrosecondType, <$H>::long)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => primitive!(
                TimestampNanosecondType,
                |v: i64, s| <$H>::long(micros(v, TimeUnit::Nanosecond), s)
            ),
            DataType::Duration(TimeUnit::Second) => {
                primitive!(DurationSecondType, |v: i64, s| <$H>::long(
                    micros(v, TimeUnit::Second),
                    s
                ))
            }
            DataType::Duration(TimeUnit::Millisecond) => primitive!(
                DurationMillisecondType,
                |v: i64, s| <$H>::long(micros(v, TimeUnit::Millisecond), s)
            ),
            DataType::Duration(TimeUnit::Microsecond) => {
                primitive!(DurationMicrosecondType, <$H>::long)
            }
            DataType::Duration(TimeUnit::Nanosecond) => primitive!(
                DurationNanosecondType,
                |v: i64, s| <$H>::long(micros(v, TimeUnit::Nanosecond), s)
            ),
            // Spark's TIME is nanoseconds since midnight, hashed as a long.
            DataType::Time32(TimeUnit::Second) => primitive!(Time32SecondType, |v: i32, s| {
                <$H>::long(i64::from(v) * 1_000_000_000, s)
            }),
            DataType::Time32(_) => primitive!(Time32MillisecondType, |v: i32, s| {
                <$H>::long(i64::from(v) * 1_000_000, s)
            }),
            DataType::Time64(TimeUnit::Microsecond) => {
                primitive!(Time64MicrosecondType, |v: i64, s| <$H>::long(
                    scaled(v, 1_000, "microseconds of a time of day"),
                    s
                ))
            }
            DataType::Time64(_) => primitive!(Time64NanosecondType, <$H>::long),
            DataType::Interval(IntervalUnit::YearMonth) => {
                primitive!(IntervalYearMonthType, <$H>::int)
            }
            DataType::Decimal32(_, _) => {
                primitive!(Decimal32Type, |v: i32, s| <$H>::long(v.into(), s))
            }
            DataType::Decimal64(p, _) => {
                let p = *p;
                primitive!(Decimal64Type, |v: i64, s| hash_decimal::<$H>(
                    v.into(),
                    p,
                    s
                ))
            }
            DataType::Decimal128(p, _) => {
                let p = *p;
                primitive!(Decimal128Type, |v: i128, s| hash_decimal::<$H>(v, p, s))
            }
            DataType::Decimal256(p, _) => {
                let p = *p;
                primitive!(
                    Decimal256Type,
                    |v: arrow::datatypes::i256, s| match v.to_i128() {
                        Some(v) => hash_decimal::<$H>(v, p, s),
                        // Beyond 38 digits: refused before hashing; the bytes, should one slip by.
                        None => <$H>::bytes(minimal_twos_complement(&v.to_be_bytes()), s),
                    }
                )
            }
            DataType::Utf8 => bytes!(array.as_string::<i32>()),
            DataType::LargeUtf8 => bytes!(array.as_string::<i64>()),
            DataType::Utf8View => bytes!(array.as_string_view()),
            DataType::Binary => bytes!(array.as_binary::<i32>()),
            DataType::LargeBinary => bytes!(array.as_binary::<i64>()),
            DataType::BinaryView => bytes!(array.as_binary_view()),
            DataType::FixedSizeBinary(_) => bytes!(array.as_fixed_size_binary()),
            _ => {
                let value = nested_value_hasher::<$H>(array);
                $wrap!(array, move |i: usize, seed| value(i, seed))
            }
        }
    }};
}

/// One value's hash of `array` (of a type [`unhashable_reason`] accepts), nulls included.
fn row_hasher<'a, H: SparkHash + 'a>(array: &'a dyn Array) -> RowHash<'a, H::Value> {
    macro_rules! wrap {
        ($array:expr, $value:expr) => {
            row_of($array, $value)
        };
    }
    macro_rules! wrap_bytes {
        ($array:expr, $value:expr) => {{
            let value = $value;
            row_of($array, move |i, seed| H::bytes(value(i), seed))
        }};
    }
    with_value_hasher!(H, array, wrap, wrap_bytes)
}

/// A range of `array`'s values hashed in order (a list's elements), nulls included.
fn range_hasher<'a, H: SparkHash + 'a>(array: &'a dyn Array) -> RangeHash<'a, H::Value> {
    macro_rules! wrap {
        ($array:expr, $value:expr) => {
            range_of($array, $value)
        };
    }
    macro_rules! wrap_bytes {
        ($array:expr, $value:expr) => {{
            let value = $value;
            range_of($array, move |i, seed| H::bytes(value(i), seed))
        }};
    }
    with_value_hasher!(H, array, wrap, wrap_bytes)
}

/// One value's hash of a list, struct, dictionary or null column, nulls not checked: the
/// children's hashers are built once here, not per value.
fn nested_value_hasher<'a, H: SparkHash + 'a>(array: &'a dyn Array) -> RowHash<'a, H::Value> {
    match array.data_type() {
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            let elements = range_hasher::<H>(list.values().as_ref());
            Box::new(move |i, seed| elements(offsets[i] as usize, offsets[i + 1] as usize, seed))
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let offsets = list.value_offsets();
            let elements = range_hasher::<H>(list.values().as_ref());
            Box::new(move |i, seed| elements(offsets[i] as usize, offsets[i + 1] as usize, seed))
        }
        DataType::FixedSizeList(_, _) => {
            let list = array.as_fixed_size_list();
            let elements = range_hasher::<H>(list.values().as_ref());
            // In usize: `value_offset` is an i32 and wraps past 2^31 values.
            let size = list.value_length() as usize;
            Box::new(move |i, seed| elements(i * size, i * size + size, seed))
        }
        DataType::Struct(_) => {
            let fields: Vec<RowHash<'a, H::Value>> = array
                .as_struct()
                .columns()
                .iter()
                .map(|field| row_hasher::<H>(field.as_ref()))
                .collect();
            Box::new(move |i, seed| fields.iter().fold(seed, |h, field| field(i, h)))
        }
        DataType::Dictionary(_, _) => {
            let values = array.as_any_dictionary().values();
            let value = row_hasher::<H>(values.as_ref());
            let len = values.len();
            Box::new(move |i, seed| match dictionary_index(array, i) {
                Some(index) if index < len => value(index, seed),
                _ => seed,
            })
        }
        // Null columns, and types refused by `unhashable_reason` before any row is hashed.
        _ => Box::new(|_, seed| seed),
    }
}

/// Days since 1970 of a Date64 (milliseconds), as Spark's date.
#[inline(always)]
fn date64_days(ms: i64) -> i32 {
    // Spark's DATE is 32-bit days; a wider date64 would wrap onto another date.
    i32::try_from(ms.div_euclid(86_400_000)).unwrap_or_else(|_| {
        record_out_of_range(ms, "ms (a date beyond 32-bit days)");
        0
    })
}

/// Feeds one column into the running hashes; null rows keep their hash.
#[inline(always)]
fn fold_column<V: Copy>(
    hashes: &mut [V],
    array: &dyn Array,
    is_scalar: bool,
    hash: impl Fn(usize, V) -> V,
) {
    if is_scalar {
        if array.logical_nulls().is_none_or(|n| n.is_valid(0)) {
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

/// [`fold_column`] for strings and binaries: four rows at a time when no row is null,
/// so that a hash may run four rows side by side ([`SparkHash::bytes_x4`]).
#[inline(always)]
fn fold_bytes_column<'a, H: SparkHash>(
    hashes: &mut [H::Value],
    array: &dyn Array,
    is_scalar: bool,
    value: impl Fn(usize) -> &'a [u8],
) {
    if is_scalar || array.logical_nulls().is_some() {
        return fold_column(hashes, array, is_scalar, |i, seed| H::bytes(value(i), seed));
    }
    let hashes_len = hashes.len();
    let mut quads = hashes.chunks_exact_mut(4);
    for (quad, row) in quads.by_ref().zip((0..).step_by(4)) {
        let seeds = [quad[0], quad[1], quad[2], quad[3]];
        let values = [value(row), value(row + 1), value(row + 2), value(row + 3)];
        quad.copy_from_slice(&H::bytes_x4(values, seeds));
    }
    let rest = quads.into_remainder();
    let first = hashes_len - rest.len();
    for (hash, row) in rest.iter_mut().zip(first..) {
        *hash = H::bytes(value(row), *hash);
    }
}

/// Refuses a column Spark cannot hash, naming it.
fn check_datum(function: &'static str, position: usize, datum: &dyn Datum) -> Result<()> {
    let (array, _) = datum.get();
    if let Some(reason) = unhashable_reason(array.data_type()) {
        return Err(KernelError::wrong_type(
            function,
            format!("#{}", position + 1),
            format!("expected a type Spark hashes ({HASHABLE_TYPES}), found {reason}"),
        ));
    }
    Ok(())
}

/// Feeds one column (or a scalar, for every row) into the running hashes: flat columns in
/// one tight loop per type, structs field by field.
fn fold_array<H: SparkHash>(hashes: &mut [H::Value], array: &dyn Array, is_scalar: bool) {
    macro_rules! fold {
        ($array:expr, $value:expr) => {
            fold_column(hashes, $array, is_scalar, $value)
        };
    }
    macro_rules! fold_bytes {
        ($array:expr, $value:expr) => {
            fold_bytes_column::<H>(hashes, $array, is_scalar, $value)
        };
    }
    match array.data_type() {
        DataType::Null => {}
        DataType::Struct(_) => fold_struct::<H>(hashes, array, is_scalar),
        // Flat columns in one loop per type; lists and dictionaries through hashers built
        // once for the column (a list of flat values hashes its elements in one typed loop).
        _ => with_value_hasher!(H, array, fold, fold_bytes),
    }
}

/// A struct feeds its fields in order: column by column (each in its own typed loop) when
/// no row is null; otherwise row by row, a null struct keeping its hash as in Spark.
fn fold_struct<H: SparkHash>(hashes: &mut [H::Value], array: &dyn Array, is_scalar: bool) {
    match array.logical_nulls().filter(|n| n.null_count() > 0) {
        // A null scalar struct leaves every row's hash.
        Some(_) if is_scalar => {}
        // Row by row, so that the fields under a null struct are never hashed (their
        // values may be anything, times out of range included).
        Some(_) => fold_column(hashes, array, false, row_hasher::<H>(array)),
        None => {
            for field in array.as_struct().columns() {
                fold_array::<H>(hashes, field.as_ref(), is_scalar);
            }
        }
    }
}

/// Spark's running hash of `columns` for every row; `finish` rewrites each block of
/// hashes in place once every column is folded in (see hash_bucket's `pmod`).
fn running_hashes<H: SparkHash>(
    function: &'static str,
    columns: &[&dyn Datum],
    extra: &[(&str, Option<usize>)],
    finish: impl Fn(&mut [H::Value]),
) -> Result<Vec<H::Value>> {
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
    for (position, column) in columns.iter().enumerate() {
        check_datum(function, position, *column)?;
    }
    let arrays: Vec<(&dyn Array, bool)> = columns.iter().map(|c| c.get()).collect();
    // Block by block, so that a block of hashes stays in cache while every column is
    // folded in and `finish` rewrites it: the output is walked once, not once per
    // column and once more for `finish`.
    let mut hashes = Vec::with_capacity(len);
    OUT_OF_RANGE.with(|c| c.set(None));
    for start in (0..len).step_by(HASH_BLOCK) {
        let rows = HASH_BLOCK.min(len - start);
        hashes.resize(start + rows, H::SEED);
        let block = &mut hashes[start..];
        for (position, &(array, is_scalar)) in arrays.iter().enumerate() {
            if is_scalar || (start == 0 && rows == array.len()) {
                fold_array::<H>(block, array, is_scalar);
            } else {
                fold_array::<H>(block, array.slice(start, rows).as_ref(), false);
            }
            if let Some(found) = OUT_OF_RANGE.with(|c| c.take()) {
                // Name the first column holding such a time, as one pass per column
                // would: an earlier column may hold one in a later block.
                let earlier = arrays[..position]
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, is_scalar))| !is_scalar)
                    .find_map(|(earlier, &(array, _))| {
                        let rest = array.len() - start;
                        let mut scratch = vec![H::SEED; rest];
                        fold_array::<H>(&mut scratch, array.slice(start, rest).as_ref(), false);
                        OUT_OF_RANGE
                            .with(|c| c.take())
                            .map(|found| (earlier, found))
                    });
                let (position, (value, unit)) = earlier.unwrap_or((position, found));
                return Err(KernelError::new(
                    function,
                    format!("#{}", position + 1),
                    format!(
                        "expected times Spark can hold (64-bit microseconds, nanoseconds for a \
                         time of day), found {value} {unit}"
                    ),
                ));
            }
        }
        finish(block);
    }
    Ok(hashes)
}

/// Rows hashed per block: 8,192 running hashes (64 KiB for XXH64) stay in L2.
const HASH_BLOCK: usize = 8192;

/// `h.rem_euclid(n)` (Spark's `pmod`) for one fixed `n > 0`, by multiplication instead of
/// a 64-bit division per row (Granlund and Montgomery, "Division by invariant integers
/// using multiplication", 1994, figure 4.1): a high and a low 64-bit multiply a row, in
/// a loop the compiler vectorizes with AVX2 or AVX-512 (chosen at run time; integer
/// arithmetic, so every build gives the same result). The division used to dominate
/// hash_bucket's time; a 128-bit fixed-point remainder (Lemire) does not vectorize.
#[derive(Debug, Clone, Copy)]
struct PositiveModulus {
    n: u64,
    /// floor(2^64 (2^l - n) / n) + 1, where l = ceil(log2 n).
    magic: u64,
    /// min(l, 1) and max(l - 1, 0): the quotient is (t + ((a - t) >> sh1)) >> sh2.
    sh1: u32,
    sh2: u32,
    /// n - (2^63 mod n): added after reducing h + 2^63, it takes the 2^63 back off.
    shift: u64,
}

impl PositiveModulus {
    fn new(n: i64) -> Self {
        debug_assert!(n > 0);
        let n = n as u64;
        // l = ceil(log2 n): 0 for n = 1, at most 63 as n < 2^63.
        let l = u64::BITS - (n - 1).leading_zeros();
        let magic = (((1u128 << 64) * ((1u128 << l) - n as u128)) / n as u128 + 1) as u64;
        Self {
            n,
            magic,
            sh1: l.min(1),
            sh2: l.saturating_sub(1),
            shift: n - ((1u128 << 63) % n as u128) as u64,
        }
    }

    /// `a mod n` for unsigned `a`: the quotient from a high multiply, then `a - q n`.
    #[inline(always)]
    fn unsigned_rem(&self, a: u64) -> u64 {
        let t = ((self.magic as u128 * a as u128) >> 64) as u64;
        let q = (t + ((a - t) >> self.sh1)) >> self.sh2;
        a - q * self.n
    }

    /// `pmod` of each hash of a block, in place (the results are `i64`s in `u64`s).
    fn pmod_block(&self, hashes: &mut [u64]) {
        pmod_loop::run(self, hashes)
    }

    /// Without a branch on the sign of `h`: hashes are negative half of the time, and a
    /// mispredicted branch per row cost more than the remainder itself.
    #[inline(always)]
    fn pmod(&self, h: i64) -> i64 {
        // h + 2^63 as an unsigned number: every i64 maps into 0..2^64 in order.
        let biased = (h as u64) ^ (1 << 63);
        // (biased mod n) + n - (2^63 mod n) is in 0..2n and equals h modulo n.
        let r = self.unsigned_rem(biased) + self.shift;
        (r - self.n * u64::from(r >= self.n)) as i64
    }
}

/// Spark's `xxhash64(c1, c2, ...)`: never null.
pub fn xxhash64(columns: &[&dyn Datum]) -> Result<Int64Array> {
    let values = running_hashes::<SparkXxHash64>("xxhash64", columns, &[], |_| {})?;
    let len = values.len();
    // Spark's i64 is the hash's bits: the same buffer, read as i64s.
    Ok(Int64Array::new(
        ScalarBuffer::new(Buffer::from_vec(values), 0, len),
        None,
    ))
}

/// Spark's `hash(c1, c2, ...)` (Murmur3 x86 32-bit, seed 42): never null.
pub fn murmur3_hash(columns: &[&dyn Datum]) -> Result<Int32Array> {
    let values = running_hashes::<SparkMurmur3>("hash", columns, &[], |_| {})?;
    let len = values.len();
    Ok(Int32Array::new(
        ScalarBuffer::new(Buffer::from_vec(values), 0, len),
        None,
    ))
}

/// `pmod` of each hash of a block, row by row: a loop of multiplies and shifts that the
/// wider builds turn into SIMD.
#[inline(always)]
fn pmod_block_portable(modulus: &PositiveModulus, hashes: &mut [u64]) {
    for h in hashes {
        *h = modulus.pmod(*h as i64) as u64;
    }
}

multiversion! {
    /// [`pmod_block_portable`] also compiled for AVX2 and for AVX-512 with DQ (its 64-bit
    /// multiply). Integer arithmetic: every build gives the same result; a test checks.
    mod pmod_loop {
        fn(modulus: &PositiveModulus, hashes: &mut [u64]);
        portable = pmod_block_portable;
        avx512 = ["avx512f", "avx512dq"];
    }
}

/// `pmod(xxhash64(c1, c2, ...), num_buckets)`, a bucket in `0..num_buckets`.
///
/// `num_buckets` must be > 0; a null `num_buckets` gives null (as Spark's `pmod`).
pub fn hash_bucket(columns: &[&dyn Datum], num_buckets: &dyn Datum) -> Result<Int64Array> {
    const NAME: &str = "hash_bucket";
    let buckets = Operand::<Int64Type>::from_datum(NAME, "num_buckets", num_buckets)?;
    buckets.ensure(NAME, "num_buckets", "a bucket count > 0", |n| n > 0)?;
    let extra = [("num_buckets", buckets.len())];
    match buckets {
        Operand::Scalar(None) => {
            let len = running_hashes::<SparkXxHash64>(NAME, columns, &extra, |_| {})?.len();
            Ok(Int64Array::new_null(len))
        }
        Operand::Scalar(Some(n)) => {
            let modulus = PositiveModulus::new(n);
            let hashes = running_hashes::<SparkXxHash64>(NAME, columns, &extra, |block| {
                modulus.pmod_block(block)
            })?;
            // The buckets are in 0..n as u64s: the same bits as i64s, so no copy.
            let len = hashes.len();
            let values = ScalarBuffer::new(Buffer::from_vec(hashes), 0, len);
            Ok(Int64Array::new(values, None))
        }
        Operand::Column { array, values: n } => {
            let hashes = running_hashes::<SparkXxHash64>(NAME, columns, &extra, |_| {})?;
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
    fn out_of_range_time_names_the_first_such_column_whatever_the_block() {
        use arrow::array::TimestampSecondArray;
        let rows = 3 * HASH_BLOCK;
        let bad = i64::MAX / 10;
        let column = |bad_row: usize| {
            let mut v = vec![0i64; rows];
            v[bad_row] = bad + bad_row as i64;
            TimestampSecondArray::from(v)
        };
        // #1 holds one in the last block, #2 in the first: #1 is named, with its value.
        let (first, second) = (column(rows - 1), column(0));
        let err = xxhash64(&[&first, &second]).unwrap_err().to_string();
        assert!(
            err.contains("`#1`") && err.contains(&(bad + rows as i64 - 1).to_string()),
            "{err}"
        );
        let err = xxhash64(&[&second, &first]).unwrap_err().to_string();
        assert!(
            err.contains("`#1`") && err.contains(&bad.to_string()),
            "{err}"
        );
    }

    #[test]
    fn fast_pmod_edges() {
        for n in [
            1i64,
            2,
            3,
            7,
            1000,
            (1 << 31) - 1,
            1 << 32,
            (1 << 32) + 1,
            (1 << 62) - 1,
            1 << 62,
            (1 << 62) + 1,
            i64::MAX - 1,
            i64::MAX,
        ] {
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

    proptest! {
        #[test]
        fn fast_pmod_is_rem_euclid(
            h in any::<i64>(),
            n in prop_oneof![
                1i64..2000,
                1i64..=i64::MAX,
                // Powers of two and their neighbours, where the magic number's shifts change.
                (0u32..63, -1i64..=1).prop_map(|(k, d)| ((1i64 << k) + d).max(1)),
            ],
        ) {
            prop_assert_eq!(PositiveModulus::new(n).pmod(h), h.rem_euclid(n));
        }

        /// The block loop, in every instruction set this CPU has, equals row-by-row pmod.
        #[test]
        fn pmod_block_is_pmod_in_every_build(
            hashes in prop::collection::vec(any::<u64>(), 0..300),
            n in prop_oneof![1i64..2000, 1i64..=i64::MAX],
        ) {
            let m = PositiveModulus::new(n);
            let want: Vec<u64> = hashes.iter().map(|&h| (h as i64).rem_euclid(n) as u64).collect();
            let mut got = hashes.clone();
            m.pmod_block(&mut got);
            prop_assert_eq!(&got, &want);
            pmod_loop::each(|build, pmod_block| {
                let mut got = hashes.clone();
                pmod_block(&m, &mut got);
                assert_eq!(&got, &want, "{}", build);
            });
        }
    }

    proptest! {
        /// The fixed-length XXH64 of ints and longs is the general one (`twox-hash`).
        #[test]
        fn fixed_length_xxh64_is_the_general_one(
            value in prop_oneof![any::<i64>(), Just(0i64), Just(-1), Just(i64::MIN), Just(i64::MAX)],
            seed in prop_oneof![any::<u64>(), Just(0u64), Just(u64::MAX), Just(SPARK_XXHASH64_SEED)],
        ) {
            prop_assert_eq!(
                SparkXxHash64::long(value, seed),
                XxHash64::oneshot(seed, &value.to_le_bytes())
            );
            let int = value as i32;
            prop_assert_eq!(
                SparkXxHash64::int(int, seed),
                XxHash64::oneshot(seed, &int.to_le_bytes())
            );
        }
    }

    proptest! {
        /// Four values at once are each value's `twox-hash`: one length below a stripe
        /// (the side-by-side loop), mixed lengths and longer ones (row by row).
        #[test]
        fn four_values_at_once_are_each_values_xxh64(
            values in prop_oneof![
                (0usize..40).prop_flat_map(|len| prop::array::uniform4(
                    prop::collection::vec(any::<u8>(), len..=len),
                )),
                prop::array::uniform4(prop::collection::vec(any::<u8>(), 0..70)),
            ],
            seeds in prop::array::uniform4(prop_oneof![any::<u64>(), Just(0u64), Just(u64::MAX)]),
        ) {
            let got = SparkXxHash64::bytes_x4(
                std::array::from_fn(|k| values[k].as_slice()),
                seeds,
            );
            for k in 0..4 {
                prop_assert_eq!(got[k], XxHash64::oneshot(seeds[k], &values[k]), "value {}", k);
            }
        }

        /// Columns of equal-length strings (four rows at a time), sliced, with and without
        /// nulls and with a seed from an earlier column: each row is its `twox-hash`.
        #[test]
        fn equal_length_string_columns_hash_row_by_row(
            len in 0usize..36,
            rows in prop::collection::vec((any::<u64>(), any::<bool>(), any::<i64>()), 0..40),
            offset in 0usize..5,
            with_nulls in any::<bool>(),
        ) {
            let text = |seed: u64| -> String {
                (0..len).map(|i| char::from(b'!' + ((seed >> (i % 60)) as u8 % 90))).collect()
            };
            let strings: StringArray = rows
                .iter()
                .map(|&(seed, valid, _)| (valid || !with_nulls).then(|| text(seed)))
                .collect();
            let longs = arrow::array::Int64Array::from_iter_values(rows.iter().map(|r| r.2));
            let offset = offset.min(rows.len());
            let strings = strings.slice(offset, rows.len() - offset);
            let longs = longs.slice(offset, rows.len() - offset);
            let got = xxhash64(&[&longs, &strings]).unwrap();
            for row in 0..strings.len() {
                let mut want = XxHash64::oneshot(42, &longs.value(row).to_le_bytes());
                if strings.is_valid(row) {
                    want = XxHash64::oneshot(want, strings.value(row).as_bytes());
                }
                prop_assert_eq!(got.value(row) as u64, want, "row {}", row);
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
    fn lists_of_dictionaries_with_null_values_hash_as_their_values() {
        use arrow::array::{DictionaryArray, ListArray};
        use arrow::buffer::OffsetBuffer;
        use arrow::datatypes::{Field, Int32Type};
        // A null *value* (key 1 points at it), not a null key: skipped like a null string.
        let rows = 3 * HASH_BLOCK;
        let keys = Int32Array::from_iter_values((0..rows as i32).map(|i| i % 2));
        let dictionary = DictionaryArray::<Int32Type>::try_new(
            keys,
            std::sync::Arc::new(StringArray::from(vec![Some("x"), None])),
        )
        .unwrap();
        let plain = StringArray::from_iter((0..rows).map(|i| (i % 2 == 0).then_some("x")));
        let list = |values: arrow::array::ArrayRef| {
            let field = std::sync::Arc::new(Field::new("item", values.data_type().clone(), true));
            let offsets = OffsetBuffer::from_lengths(vec![1; rows]);
            ListArray::new(field, offsets, values, None)
        };
        let (a, b) = (
            list(std::sync::Arc::new(dictionary)),
            list(std::sync::Arc::new(plain)),
        );
        assert_eq!(xxhash64(&[&a]).unwrap(), xxhash64(&[&b]).unwrap());
        assert_eq!(murmur3_hash(&[&a]).unwrap(), murmur3_hash(&[&b]).unwrap());
    }

    #[test]
    fn dates_beyond_32_bit_days_are_refused_not_wrapped() {
        use arrow::array::Date64Array;
        let wide = Date64Array::from(vec![0, (1i64 << 32) * 86_400_000]);
        let err = xxhash64(&[&wide]).unwrap_err().to_string();
        assert!(err.contains("32-bit days"), "{err}");
        let fine = Date64Array::from(vec![0, -86_400_000]);
        assert!(xxhash64(&[&fine]).is_ok());
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
                .starts_with("xxhash64: argument `#1`: expected a type Spark hashes (boolean"),
            "{err}"
        );
        assert!(
            err.to_string().ends_with(
                "found UInt32: Spark has no unsigned integers (cast to a signed type first)"
            ),
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

#[cfg(test)]
mod nested_tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, ListArray, StringArray, StructArray};
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    use arrow::datatypes::{DataType, Field};
    use proptest::prelude::*;

    use super::*;

    type Row = Option<(Option<i64>, Option<Vec<Option<String>>>)>;

    /// Spark's algorithm on owned values: struct fields, then list elements, chained.
    fn reference<H: SparkHash>(rows: &[Row]) -> Vec<H::Value> {
        rows.iter()
            .map(|row| {
                let mut h = H::SEED;
                if let Some((id, tags)) = row {
                    if let Some(id) = id {
                        h = H::long(*id, h);
                    }
                    for tag in tags.iter().flatten().flatten() {
                        h = H::bytes(tag.as_bytes(), h);
                    }
                }
                h
            })
            .collect()
    }

    /// A struct<id: int64, tags: list<utf8>> column of `rows`.
    fn column(rows: &[Row]) -> ArrayRef {
        let ids = Int64Array::from(
            rows.iter()
                .map(|r| r.as_ref().and_then(|r| r.0))
                .collect::<Vec<_>>(),
        );
        let tags: Vec<Option<Vec<Option<String>>>> = rows
            .iter()
            .map(|r| r.as_ref().and_then(|r| r.1.clone()))
            .collect();
        let lengths = tags.iter().map(|t| t.as_ref().map_or(0, Vec::len));
        let values =
            StringArray::from(tags.iter().flatten().flatten().cloned().collect::<Vec<_>>());
        let list = ListArray::new(
            Arc::new(Field::new("item", DataType::Utf8, true)),
            OffsetBuffer::from_lengths(lengths),
            Arc::new(values),
            Some(NullBuffer::from(
                tags.iter().map(Option::is_some).collect::<Vec<_>>(),
            )),
        );
        let fields = vec![
            Field::new("id", DataType::Int64, true),
            Field::new("tags", list.data_type().clone(), true),
        ];
        Arc::new(StructArray::new(
            fields.into(),
            vec![Arc::new(ids), Arc::new(list)],
            Some(NullBuffer::from(
                rows.iter().map(Option::is_some).collect::<Vec<_>>(),
            )),
        ))
    }

    fn rows() -> impl Strategy<Value = Vec<Row>> {
        prop::collection::vec(
            prop::option::weighted(
                0.85,
                (
                    prop::option::of(any::<i64>()),
                    prop::option::of(prop::collection::vec(
                        prop::option::of("[a-zé✓]{0,6}"),
                        0..5,
                    )),
                ),
            ),
            0..30,
        )
    }

    proptest! {
        #[test]
        fn nested_columns_match_the_reference_sliced_and_chunked(rows in rows(), start in 0usize..8, split in 0usize..30) {
            let start = start.min(rows.len());
            let whole = column(&rows);
            let sliced = whole.slice(start, rows.len() - start);
            let copy = column(&rows[start..]);
            let xx: Vec<i64> = reference::<SparkXxHash64>(&rows[start..]).into_iter().map(|h| h as i64).collect();
            let mm: Vec<i32> = reference::<SparkMurmur3>(&rows[start..]).into_iter().map(|h| h as i32).collect();
            prop_assert_eq!(xxhash64(&[&sliced]).unwrap().values().to_vec(), xx.clone());
            prop_assert_eq!(xxhash64(&[&copy]).unwrap().values().to_vec(), xx);
            prop_assert_eq!(murmur3_hash(&[&sliced]).unwrap().values().to_vec(), mm.clone());
            prop_assert_eq!(murmur3_hash(&[&copy]).unwrap().values().to_vec(), mm);
            // Chunked input equals the concatenation.
            let split = split.min(sliced.len());
            let mut chunks = xxhash64(&[&sliced.slice(0, split)]).unwrap().values().to_vec();
            chunks.extend(xxhash64(&[&sliced.slice(split, sliced.len() - split)]).unwrap().values().iter());
            prop_assert_eq!(chunks, xxhash64(&[&sliced]).unwrap().values().to_vec());
        }
    }

    type Nested = Option<Vec<Option<Vec<Option<i64>>>>>;

    /// A list<list<int64>> column of `rows`, nulls at every level.
    fn list_of_lists(rows: &[Nested]) -> ArrayRef {
        let inner: Vec<&Option<Vec<Option<i64>>>> = rows.iter().flatten().flatten().collect();
        let values = Int64Array::from(
            inner
                .iter()
                .copied()
                .flatten()
                .flatten()
                .copied()
                .collect::<Vec<_>>(),
        );
        let inner_list = ListArray::new(
            Arc::new(Field::new("item", DataType::Int64, true)),
            OffsetBuffer::from_lengths(inner.iter().map(|l| l.as_ref().map_or(0, Vec::len))),
            Arc::new(values),
            Some(NullBuffer::from(
                inner.iter().map(|l| l.is_some()).collect::<Vec<_>>(),
            )),
        );
        Arc::new(ListArray::new(
            Arc::new(Field::new("item", inner_list.data_type().clone(), true)),
            OffsetBuffer::from_lengths(rows.iter().map(|r| r.as_ref().map_or(0, Vec::len))),
            Arc::new(inner_list),
            Some(NullBuffer::from(
                rows.iter().map(Option::is_some).collect::<Vec<_>>(),
            )),
        ))
    }

    proptest! {
        #[test]
        fn lists_of_lists_match_the_reference(
            rows in prop::collection::vec(
                prop::option::of(prop::collection::vec(
                    prop::option::of(prop::collection::vec(prop::option::of(any::<i64>()), 0..4)),
                    0..4,
                )),
                0..20,
            ),
            start in 0usize..5,
        ) {
            let start = start.min(rows.len());
            let expected: Vec<i64> = rows[start..]
                .iter()
                .map(|row| {
                    let values = row.iter().flatten().flatten().flatten().flatten();
                    values.fold(SparkXxHash64::SEED, |h, v| SparkXxHash64::long(*v, h)) as i64
                })
                .collect();
            let column = list_of_lists(&rows).slice(start, rows.len() - start);
            prop_assert_eq!(xxhash64(&[&column]).unwrap().values().to_vec(), expected);
        }
    }

    /// Out-of-range times Spark never sees (outside a slice, under a null list or struct,
    /// in an unused dictionary slot) do not refuse the column.
    #[test]
    fn unhashed_times_beyond_microseconds_are_not_refused() {
        use arrow::array::{DictionaryArray, TimestampMillisecondArray, TimestampSecondArray};
        let big = i64::MAX / 10;
        let item = |t: &DataType| Arc::new(Field::new("item", t.clone(), true));
        let seconds = TimestampSecondArray::from(vec![0, big]);
        let list = ListArray::new(
            item(seconds.data_type()),
            OffsetBuffer::from_lengths([1, 1]),
            Arc::new(seconds.clone()),
            None,
        );
        let expected = SparkXxHash64::long(0, SparkXxHash64::SEED) as i64;
        assert_eq!(
            xxhash64(&[&list.slice(0, 1)]).unwrap().values(),
            &[expected]
        );
        assert!(xxhash64(&[&list.slice(1, 1)]).is_err());
        let null_list = ListArray::new(
            item(seconds.data_type()),
            OffsetBuffer::from_lengths([2]),
            Arc::new(seconds.clone()),
            Some(NullBuffer::from(vec![false])),
        );
        assert_eq!(xxhash64(&[&null_list]).unwrap().values(), &[42]);
        let structs = StructArray::new(
            vec![Field::new("ts", seconds.data_type().clone(), true)].into(),
            vec![Arc::new(seconds.clone())],
            Some(NullBuffer::from(vec![true, false])),
        );
        assert_eq!(xxhash64(&[&structs]).unwrap().values(), &[expected, 42]);
        let dictionary = DictionaryArray::new(
            arrow::array::Int32Array::from(vec![0, 0]),
            Arc::new(TimestampMillisecondArray::from(vec![0, i64::MAX])),
        );
        assert_eq!(
            xxhash64(&[&dictionary]).unwrap().values(),
            &[expected, expected]
        );
    }

    #[test]
    fn nested_times_beyond_microseconds_are_refused() {
        let seconds = arrow::array::TimestampSecondArray::from(vec![0, i64::MAX / 10]);
        let list = ListArray::new(
            Arc::new(Field::new("item", seconds.data_type().clone(), true)),
            OffsetBuffer::from_lengths([2]),
            Arc::new(seconds),
            None,
        );
        let error = xxhash64(&[&list as &dyn Datum]).unwrap_err().to_string();
        assert!(error.contains("922337203685477580"), "{error}");
        assert!(error.contains("xxhash64"), "{error}");
    }

    #[test]
    fn java_big_integer_bytes() {
        for (value, bytes) in [
            (0i128, vec![0x00]),
            (-1, vec![0xff]),
            (127, vec![0x7f]),
            (128, vec![0x00, 0x80]),
            (-128, vec![0x80]),
            (-129, vec![0xff, 0x7f]),
            (i128::MAX, [vec![0x7f], vec![0xff; 15]].concat()),
            (i128::MIN, [vec![0x80], vec![0x00; 15]].concat()),
        ] {
            assert_eq!(
                minimal_twos_complement(&value.to_be_bytes()),
                bytes.as_slice(),
                "{value}"
            );
        }
        // The 18-digit boundary: a long below it, bytes above.
        let narrow = hash_decimal::<SparkXxHash64>(5, 18, 42);
        assert_eq!(narrow, SparkXxHash64::long(5, 42));
        assert_eq!(
            hash_decimal::<SparkXxHash64>(5, 19, 42),
            SparkXxHash64::bytes(&[5], 42)
        );
    }
}
