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

/// Spark's hashes of nested and wide types (tests/spark/nested_hash_golden.parquet, made by
/// tests/spark/make_nested_hash_golden.py): value columns `NAME` with `xx_NAME` (xxhash64)
/// and `mm_NAME` (hash), and both hashes of the `MULTI` columns together.
#[cfg(feature = "sql")]
mod nested {
    use std::sync::Arc;

    use arrow::array::{Array, ArrayRef, AsArray, Datum, RecordBatch};
    use arrow::compute::{cast, concat_batches};
    use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, TimeUnit};
    use arrowfeat_udf::kernels::hash::{murmur3_hash, xxhash64};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    const MULTI: [&str; 6] = [
        "i32",
        "list_i64",
        "struct_a",
        "dec_38_10",
        "date",
        "list_struct",
    ];

    fn golden() -> RecordBatch {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/spark/nested_hash_golden.parquet"
        );
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        concat_batches(&batches[0].schema(), &batches).unwrap()
    }

    fn value_columns(batch: &RecordBatch) -> Vec<String> {
        batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| !n.starts_with("xx_") && !n.starts_with("mm_"))
            .collect()
    }

    fn expected(batch: &RecordBatch, name: &str) -> (Vec<i64>, Vec<i32>) {
        (
            batch
                .column_by_name(&format!("xx_{name}"))
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec(),
            batch
                .column_by_name(&format!("mm_{name}"))
                .unwrap()
                .as_primitive::<Int32Type>()
                .values()
                .to_vec(),
        )
    }

    fn hashes(columns: &[&ArrayRef]) -> (Vec<i64>, Vec<i32>) {
        let datums: Vec<&dyn Datum> = columns.iter().map(|c| *c as &dyn Datum).collect();
        (
            xxhash64(&datums).unwrap().values().to_vec(),
            murmur3_hash(&datums).unwrap().values().to_vec(),
        )
    }

    /// The same values in encodings Spark cannot produce: strings as views and
    /// dictionaries (also inside lists and structs), timestamps in nanoseconds, dates as
    /// Date64, integers as dictionaries.
    fn other_encodings(column: &ArrayRef) -> Vec<ArrayRef> {
        fn recode(t: &DataType) -> DataType {
            match t {
                DataType::Utf8 => DataType::Utf8View,
                DataType::Binary => DataType::BinaryView,
                DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                    DataType::Timestamp(TimeUnit::Nanosecond, tz.clone())
                }
                DataType::Date32 => DataType::Date64,
                DataType::List(f) => {
                    DataType::LargeList(Arc::new(Field::new(f.name(), recode(f.data_type()), true)))
                }
                DataType::Struct(fields) => DataType::Struct(
                    fields
                        .iter()
                        .map(|f| Field::new(f.name(), recode(f.data_type()), true))
                        .collect(),
                ),
                other => other.clone(),
            }
        }
        let mut out = Vec::new();
        let target = recode(column.data_type());
        if &target != column.data_type() {
            out.push(cast(column, &target).unwrap());
        }
        let flat = !matches!(
            column.data_type(),
            DataType::List(_) | DataType::Struct(_) | DataType::Decimal128(_, _)
        );
        if flat {
            let dictionary = DataType::Dictionary(
                Box::new(DataType::Int16),
                Box::new(column.data_type().clone()),
            );
            if let Ok(d) = cast(column, &dictionary) {
                out.push(d);
            }
        }
        out
    }

    #[test]
    fn every_type_equals_spark_in_every_encoding_and_slice() {
        let batch = golden();
        let names = value_columns(&batch);
        assert!(names.len() >= 19, "{names:?}");
        let mut encodings = Vec::new();
        for name in &names {
            let column = batch.column_by_name(name).unwrap();
            let want = expected(&batch, name);
            assert_eq!(
                hashes(&[column]),
                want,
                "column {name} ({})",
                column.data_type()
            );
            for encoded in other_encodings(column) {
                encodings.push(encoded.data_type().to_string());
                assert_eq!(
                    hashes(&[&encoded]),
                    want,
                    "column {name} as {}",
                    encoded.data_type()
                );
            }
            // A sliced column hashes its own rows; chunks hash like the whole.
            let n = column.len();
            let (head, tail) = (column.slice(0, 7), column.slice(7, n - 7));
            let (mut xx, mut mm) = hashes(&[&head]);
            let (xx_tail, mm_tail) = hashes(&[&tail]);
            xx.extend(xx_tail);
            mm.extend(mm_tail);
            assert_eq!((xx, mm), want, "column {name} in two slices");
        }
        let all = encodings.join("; ");
        for wanted in [
            "Dictionary(Int16, Binary)",
            "Dictionary(Int16, Int64)",
            "Utf8View",
            "BinaryView",
            "Timestamp(ns, \"UTC\")",
            "Timestamp(ns)",
            "Date64",
            "LargeList(Utf8View",
            "Dictionary(Int16, Float32)",
        ] {
            assert!(all.contains(wanted), "{wanted} not tested: {all}");
        }
    }

    #[test]
    fn several_columns_chain_as_in_spark() {
        let batch = golden();
        let columns: Vec<&ArrayRef> = MULTI
            .iter()
            .map(|c| batch.column_by_name(c).unwrap())
            .collect();
        assert_eq!(hashes(&columns), expected(&batch, "multi"));
    }

    #[test]
    fn maps_unsigned_and_wider_decimals_are_refused_by_name() {
        use arrow::array::{Decimal256Array, Int32Builder, MapBuilder, StringBuilder, UInt8Array};
        use arrow::datatypes::i256;
        let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        map.keys().append_value("a");
        map.values().append_value(1);
        map.append(true).unwrap();
        let map: ArrayRef = Arc::new(map.finish());
        let e = xxhash64(&[&map as &dyn Datum]).unwrap_err().to_string();
        assert!(
            e.starts_with("xxhash64: argument `#1`: expected a type Spark hashes"),
            "{e}"
        );
        assert!(
            e.contains(
                "Spark refuses to hash maps (unless spark.sql.legacy.allowHashOnMapType is set)"
            ),
            "{e}"
        );
        let e = murmur3_hash(&[&UInt8Array::from(vec![1]) as &dyn Datum])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("hash: argument `#1`"), "{e}");
        assert!(
            e.ends_with(
                "found UInt8: Spark has no unsigned integers (cast to a signed type first)"
            ),
            "{e}"
        );
        let wide = Decimal256Array::from(vec![i256::from(1)])
            .with_precision_and_scale(40, 0)
            .unwrap();
        let e = xxhash64(&[&wide as &dyn Datum]).unwrap_err().to_string();
        assert!(
            e.ends_with("Decimal256(40, 0): Spark has no decimal of more than 38 digits"),
            "{e}"
        );
        // Nested: the path to the offending type.
        let inner: ArrayRef = Arc::new(UInt8Array::from(vec![1]));
        let list = arrow::array::ListArray::new(
            Arc::new(Field::new("item", DataType::UInt8, true)),
            arrow::buffer::OffsetBuffer::from_lengths([1]),
            inner,
            None,
        );
        let e = xxhash64(&[&list as &dyn Datum]).unwrap_err().to_string();
        assert!(
            e.contains("found a list element of UInt8: Spark has no unsigned"),
            "{e}"
        );
        // A Decimal256 within 38 digits hashes as the Decimal128 of the same value.
        let d256 = Decimal256Array::from(vec![i256::from_i128(-123456789012345678901234567890)])
            .with_precision_and_scale(38, 2)
            .unwrap();
        let d128 = arrow::array::Decimal128Array::from(vec![-123456789012345678901234567890i128])
            .with_precision_and_scale(38, 2)
            .unwrap();
        assert_eq!(
            xxhash64(&[&d256 as &dyn Datum]).unwrap(),
            xxhash64(&[&d128 as &dyn Datum]).unwrap()
        );
        assert_eq!(
            murmur3_hash(&[&d256 as &dyn Datum]).unwrap(),
            murmur3_hash(&[&d128 as &dyn Datum]).unwrap()
        );
    }
}
