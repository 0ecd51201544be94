//! Replays hash values computed by real Apache Spark (tests/spark/xxhash64_golden.tsv,
//! made by tests/spark/make_xxhash_golden.py) through the kernels.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Datum, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, Scalar, StringArray, StringViewArray,
    TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrowfeat_udf::kernels::hash::{hash_bucket, xxhash64};

const GOLDEN: &str = include_str!("../../tests/spark/xxhash64_golden.tsv");

fn decode_hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A one-row column of `kind` holding `encoded` (see the generator for the encoding).
fn column(kind: &str, encoded: &str) -> ArrayRef {
    let v = (encoded != "\\N").then_some(encoded);
    match kind {
        "boolean" => Arc::new(BooleanArray::from(vec![v.map(|v| v == "true")])),
        "int8" => Arc::new(Int8Array::from(vec![v.map(|v| v.parse().unwrap())])),
        "int16" => Arc::new(Int16Array::from(vec![v.map(|v| v.parse().unwrap())])),
        "int32" => Arc::new(Int32Array::from(vec![v.map(|v| v.parse().unwrap())])),
        "int64" => Arc::new(Int64Array::from(vec![v.map(|v| v.parse().unwrap())])),
        "date32" => Arc::new(Date32Array::from(vec![v.map(|v| v.parse().unwrap())])),
        "timestamp_us" => Arc::new(TimestampMicrosecondArray::from(vec![
            v.map(|v| v.parse().unwrap())
        ])),
        "float64" => Arc::new(Float64Array::from(vec![
            v.map(|v| f64::from_bits(u64::from_str_radix(v, 16).unwrap()))
        ])),
        "float32" => Arc::new(Float32Array::from(vec![
            v.map(|v| f32::from_bits(u32::from_str_radix(v, 16).unwrap()))
        ])),
        "utf8" => Arc::new(StringArray::from(vec![
            v.map(|v| String::from_utf8(decode_hex(v)).unwrap())
        ])),
        "binary" => {
            let bytes = v.map(decode_hex);
            Arc::new(BinaryArray::from(vec![bytes.as_deref()]))
        }
        other => panic!("unknown kind {other} in golden file"),
    }
}

struct Case {
    line: usize,
    columns: Vec<ArrayRef>,
    hash: i64,
    bucket: i64,
}

fn cases() -> Vec<Case> {
    GOLDEN
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.starts_with("types\t"))
        .map(|(i, line)| {
            let parts: Vec<&str> = line.split('\t').collect();
            let kinds = parts[0].split(',');
            let values = parts[1].split(',');
            Case {
                line: i + 1,
                columns: kinds.zip(values).map(|(k, v)| column(k, v)).collect(),
                hash: parts[2].parse().unwrap(),
                bucket: parts[3].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn golden_file_is_not_empty() {
    assert!(cases().len() > 70);
}

#[test]
fn xxhash64_equals_spark() {
    for case in cases() {
        let cols: Vec<&dyn Datum> = case.columns.iter().map(|c| c as &dyn Datum).collect();
        let got = xxhash64(&cols).unwrap().value(0);
        assert_eq!(got, case.hash, "golden line {}", case.line);
    }
}

#[test]
fn hash_bucket_equals_spark_pmod() {
    let n = Scalar::new(Int64Array::from(vec![1000]));
    for case in cases() {
        let cols: Vec<&dyn Datum> = case.columns.iter().map(|c| c as &dyn Datum).collect();
        let got = hash_bucket(&cols, &n).unwrap().value(0);
        assert_eq!(got, case.bucket, "golden line {}", case.line);
    }
}

#[test]
fn string_view_and_nanosecond_timestamps_match_spark_values() {
    // The same golden values through the other Arrow encodings Spark cannot produce.
    for case in cases() {
        let [col] = case.columns.as_slice() else {
            continue;
        };
        let converted: Option<ArrayRef> =
            if let Some(s) = col.as_any().downcast_ref::<StringArray>() {
                Some(Arc::new(s.iter().collect::<StringViewArray>()))
            } else if let Some(t) = col.as_any().downcast_ref::<TimestampMicrosecondArray>() {
                Some(Arc::new(TimestampNanosecondArray::from(
                    t.iter()
                        .map(|v| v.and_then(|v| v.checked_mul(1000)).map(|v| v + 999))
                        .collect::<Vec<_>>(),
                )))
            } else {
                None
            };
        if let Some(converted) = converted.filter(|c| c.null_count() == col.null_count()) {
            assert_eq!(
                xxhash64(&[&converted]).unwrap().value(0),
                case.hash,
                "golden line {}",
                case.line
            );
        }
    }
}
