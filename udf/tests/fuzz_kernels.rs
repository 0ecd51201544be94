//! Fuzz-style property tests of every kernel on stable Rust: arbitrary Arrow arrays of
//! many types (nulls, slices, empty input, NaN, ±inf, subnormals, `f64::MAX`,
//! `i64::MIN/MAX`, nested lists with null elements) and arbitrary parameters. Every call
//! must return a result or a `KernelError`, never panic; an error must name its function
//! and argument and show no Rust internals; a result must have the right length and keep
//! each function's documented range.
//!
//! Short by default (256 cases per property); for a long run:
//!
//! ```sh
//! ARROWFEAT_FUZZ_CASES=100000 cargo test -p arrowfeat-udf --release --test fuzz_kernels
//! ```
//!
//! (`make fuzz` runs this and the validator's harness long.) Inputs that once failed are
//! kept as unit tests at the end of this file.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, FixedSizeListArray, Float32Array, Float64Array,
    Int32Array, Int64Array, ListArray, Scalar, StringArray, StringViewArray,
    TimestampMicrosecondArray, TimestampNanosecondArray, UInt64Array, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use arrowfeat_udf::kernels::embedding::{
    cosine_similarity, dequantize_int8, dot_product, l2_norm, l2_normalize, quantize_int8,
};
use arrowfeat_udf::kernels::geo::haversine_km;
use arrowfeat_udf::kernels::hash::{hash_bucket, xxhash64};
use arrowfeat_udf::kernels::numeric::{bucketize, min_max_scale, standard_scale, Boundaries};
use arrowfeat_udf::kernels::point_in_time::{
    point_in_time, PitAggregation, PointInTimeFeature, PointInTimeOptions,
};
use arrowfeat_udf::kernels::window::{
    hop_aggregate, hop_windows, parse_duration, rolling, session_aggregate, session_window,
    tumble_start, Aggregation, Closed,
};
use arrowfeat_udf::kernels::KernelError;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("ARROWFEAT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Floats from every corner of f64.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e3f64..1e3,
        2 => any::<f64>(),
        1 => prop::sample::select(vec![
            f64::MAX,
            -f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e308,
            -1e308,
        ]),
    ]
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -100i64..100,
        2 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1, 0]),
    ]
}

fn opt<T: std::fmt::Debug + Clone>(
    s: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![6 => s.prop_map(Some), 1 => Just(None)]
}

/// A column of one of many types, possibly sliced; `n` rows before slicing.
#[derive(Debug, Clone)]
enum Column {
    Float(Vec<Option<f64>>),
    Float32(Vec<Option<f32>>),
    Int(Vec<Option<i64>>),
    Int32(Vec<Option<i32>>),
    UInt(Vec<Option<u64>>),
    Text(Vec<Option<String>>),
    TextView(Vec<Option<String>>),
    TimestampNs(Vec<Option<i64>>),
    TimestampUs(Vec<Option<i64>>),
    Date(Vec<Option<i32>>),
    Vectors(Vec<Option<Vec<Option<f64>>>>),
    FixedVectors(usize, Vec<Option<Vec<f32>>>),
    Bytes(Vec<Option<u8>>),
}

fn column(n: usize) -> impl Strategy<Value = Column> {
    prop_oneof![
        4 => prop::collection::vec(opt(float()), n).prop_map(Column::Float),
        1 => prop::collection::vec(opt(float().prop_map(|f| f as f32)), n).prop_map(Column::Float32),
        3 => prop::collection::vec(opt(int()), n).prop_map(Column::Int),
        1 => prop::collection::vec(opt(any::<i32>()), n).prop_map(Column::Int32),
        1 => prop::collection::vec(opt(any::<u64>()), n).prop_map(Column::UInt),
        1 => prop::collection::vec(opt("[a-c\u{1b}é]{0,4}"), n).prop_map(Column::Text),
        1 => prop::collection::vec(opt("[a-c]{0,20}"), n).prop_map(Column::TextView),
        2 => prop::collection::vec(opt(int()), n).prop_map(Column::TimestampNs),
        1 => prop::collection::vec(opt(int()), n).prop_map(Column::TimestampUs),
        1 => prop::collection::vec(opt(any::<i32>()), n).prop_map(Column::Date),
        2 => prop::collection::vec(opt(prop::collection::vec(opt(float()), 0..5)), n).prop_map(Column::Vectors),
        1 => (1usize..4).prop_flat_map(move |d| {
            prop::collection::vec(opt(prop::collection::vec(float().prop_map(|f| f as f32), d)), n)
                .prop_map(move |rows| Column::FixedVectors(d, rows))
        }),
        1 => prop::collection::vec(opt(any::<u8>()), n).prop_map(Column::Bytes),
    ]
}

impl Column {
    fn array(&self) -> ArrayRef {
        match self {
            Column::Float(v) => Arc::new(Float64Array::from(v.clone())),
            Column::Float32(v) => Arc::new(Float32Array::from(v.clone())),
            Column::Int(v) => Arc::new(Int64Array::from(v.clone())),
            Column::Int32(v) => Arc::new(Int32Array::from(v.clone())),
            Column::UInt(v) => Arc::new(UInt64Array::from(v.clone())),
            Column::Text(v) => Arc::new(StringArray::from(v.clone())),
            Column::TextView(v) => Arc::new(StringViewArray::from(v.clone())),
            Column::TimestampNs(v) => {
                Arc::new(TimestampNanosecondArray::from(v.clone()).with_timezone("UTC"))
            }
            Column::TimestampUs(v) => Arc::new(TimestampMicrosecondArray::from(v.clone())),
            Column::Date(v) => Arc::new(Date32Array::from(v.clone())),
            Column::Vectors(rows) => Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(
                rows.clone(),
            )),
            Column::FixedVectors(d, rows) => {
                let values: Vec<f32> = rows
                    .iter()
                    .flat_map(|r| r.clone().unwrap_or_else(|| vec![0.0; *d]))
                    .collect();
                let nulls: Vec<bool> = rows.iter().map(Option::is_some).collect();
                Arc::new(FixedSizeListArray::new(
                    Arc::new(Field::new_list_field(DataType::Float32, true)),
                    *d as i32,
                    Arc::new(Float32Array::from(values)),
                    Some(nulls.into()),
                ))
            }
            Column::Bytes(v) => Arc::new(UInt8Array::from(v.clone())),
        }
    }
}

/// A column and a slice of it.
fn sliced(max: usize) -> impl Strategy<Value = ArrayRef> {
    (0..max)
        .prop_flat_map(|n| (column(n), 0..=n, 0..=n))
        .prop_map(|(c, a, b)| {
            let array = c.array();
            let (start, end) = (a.min(b), a.max(b));
            array.slice(start, end - start)
        })
}

/// Two columns of the same length (after slicing).
fn pair(max: usize) -> impl Strategy<Value = (ArrayRef, ArrayRef)> {
    (0..max)
        .prop_flat_map(|n| (column(n), column(n), 0..=n))
        .prop_map(|(a, b, start)| {
            let (a, b) = (a.array(), b.array());
            let len = a.len() - start;
            (a.slice(start, len), b.slice(start, len))
        })
}

/// An error must name its function and argument and hold no Rust debug output.
fn clean_error(function: &str, e: &KernelError) -> Result<(), TestCaseError> {
    let text = e.to_string();
    prop_assert!(
        text.starts_with(&format!("{function}: argument `")) || e.function != function,
        "{text}"
    );
    for internal in ["Some(", "None)", "{ ", "::", "\\u{", "Utf8View {"] {
        prop_assert!(
            !text.contains(internal),
            "Rust internals ({internal}) in: {text}"
        );
    }
    Ok(())
}

fn in_unit_range_or_nan(a: &Float64Array) -> bool {
    a.iter()
        .flatten()
        .all(|v| v.is_nan() || (0.0..=1.0).contains(&v))
}

fn duration() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 1i64..100,
        1 => int(),
        1 => prop::sample::select(vec![i64::MAX, i64::MAX / 2 + 1, 1, 0, -1]),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn scaling_and_bucketing(x in sliced(40), a in float(), b in float(), boundaries in prop::collection::vec(float(), 0..6)) {
        let (sa, sb) = (Scalar::new(Float64Array::from(vec![a])), Scalar::new(Float64Array::from(vec![b])));
        match standard_scale(&x, &sa, &sb) {
            Ok(out) => prop_assert_eq!(out.len(), x.len()),
            Err(e) => clean_error("standard_scale", &e)?,
        }
        match min_max_scale(&x, &sa, &sb) {
            Ok(out) => {
                prop_assert_eq!(out.len(), x.len());
                prop_assert!(in_unit_range_or_nan(&out));
            }
            Err(e) => clean_error("min_max_scale", &e)?,
        }
        match Boundaries::new("bucketize", boundaries.clone()) {
            Ok(b) => match bucketize(&x, &b) {
                Ok(out) => {
                    prop_assert_eq!(out.len(), x.len());
                    prop_assert!(out.iter().flatten().all(|v| (0..=boundaries.len() as i32).contains(&v)));
                }
                Err(e) => clean_error("bucketize", &e)?,
            },
            Err(e) => clean_error("bucketize", &e)?,
        }
    }

    #[test]
    fn column_parameters_broadcast_or_fail_cleanly((x, p) in pair(30)) {
        for result in [standard_scale(&x, &p, &p), min_max_scale(&x, &p, &p)] {
            match result {
                Ok(out) => prop_assert_eq!(out.len(), x.len()),
                Err(e) => clean_error(&e.function, &e)?,
            }
        }
        match haversine_km(&x, &p, &p, &x) {
            Ok(out) => {
                prop_assert_eq!(out.len(), x.len());
                prop_assert!(out.iter().flatten().all(|d| d.is_nan() || (0.0..=20_016.0).contains(&d)));
            }
            Err(e) => clean_error("haversine_km", &e)?,
        }
    }

    #[test]
    fn hashing((a, b) in pair(30), buckets in int()) {
        let columns: [&dyn arrow::array::Datum; 2] = [&a, &b];
        match xxhash64(&columns) {
            Ok(out) => prop_assert_eq!(out.len(), a.len()),
            Err(e) => clean_error("xxhash64", &e)?,
        }
        let n = Scalar::new(Int64Array::from(vec![buckets]));
        match hash_bucket(&columns, &n) {
            Ok(out) => {
                prop_assert_eq!(out.len(), a.len());
                prop_assert!(out.iter().flatten().all(|v| (0..buckets).contains(&v)));
            }
            Err(e) => clean_error("hash_bucket", &e)?,
        }
        // Hashing a slice equals hashing its copy.
        if let Ok(whole) = xxhash64(&[&a]) {
            let copy = arrow::compute::concat(&[a.as_ref()]).unwrap();
            prop_assert_eq!(whole, xxhash64(&[&copy]).unwrap());
        }
    }

    #[test]
    fn embeddings((a, b) in pair(20), scale in float(), zero_point in int()) {
        let checks: [(&str, Result<Float64Array, KernelError>); 3] = [
            ("dot_product", dot_product(&a, &b)),
            ("cosine_similarity", cosine_similarity(&a, &b)),
            ("l2_norm", l2_norm(&a)),
        ];
        for (name, result) in checks {
            match result {
                Ok(out) => {
                    prop_assert_eq!(out.len(), a.len());
                    if name == "cosine_similarity" {
                        prop_assert!(out.iter().flatten().all(|c| c.is_nan() || (-1.0..=1.0).contains(&c)));
                    }
                    if name == "l2_norm" {
                        prop_assert!(out.iter().flatten().all(|n| n.is_nan() || n >= 0.0));
                    }
                }
                Err(e) => clean_error(name, &e)?,
            }
        }
        match l2_normalize(&a) {
            Ok(out) => prop_assert_eq!(out.len(), a.len()),
            Err(e) => clean_error("l2_normalize", &e)?,
        }
        let scale = Scalar::new(Float64Array::from(vec![scale]));
        let zero_point = Scalar::new(Int64Array::from(vec![zero_point]));
        match quantize_int8(&a, &scale, &zero_point) {
            Ok(out) => prop_assert_eq!(out.len(), a.len()),
            Err(e) => clean_error("quantize_int8", &e)?,
        }
        match dequantize_int8(&a, &scale, &zero_point) {
            Ok(out) => prop_assert_eq!(out.len(), a.len()),
            Err(e) => clean_error("dequantize_int8", &e)?,
        }
    }

    #[test]
    fn windows((ts, values) in pair(40), keys in sliced(40), size in duration(), step in duration(), offset in int(), aggregation in 0usize..5, closed in 0usize..4) {
        let aggregation = [Aggregation::Sum, Aggregation::Count, Aggregation::Mean, Aggregation::Min, Aggregation::Max][aggregation];
        let closed = [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][closed];
        // Keys of another length must be refused, never read out of bounds.
        let keys = Some(&keys);
        match tumble_start(ts.as_ref(), size, offset) {
            Ok(out) => prop_assert_eq!(out.len(), ts.len()),
            Err(e) => clean_error("tumble_start", &e)?,
        }
        match hop_windows(ts.as_ref(), size, step, offset) {
            Ok(out) => {
                prop_assert_eq!(out.len(), ts.len());
                for row in 0..out.len() {
                    if out.is_valid(row) {
                        prop_assert!(!out.value(row).is_empty());
                    }
                }
            }
            Err(e) => clean_error("hop_windows", &e)?,
        }
        match rolling(keys, ts.as_ref(), values.as_ref(), size, closed, aggregation, 0) {
            Ok(out) => {
                prop_assert_eq!(out.len(), ts.len());
                if aggregation == Aggregation::Count {
                    prop_assert!(out.as_primitive::<Int64Type>().iter().flatten().all(|c| c >= 0));
                }
            }
            Err(e) => clean_error(&e.function, &e)?,
        }
        match rolling(None, ts.as_ref(), values.as_ref(), size, closed, aggregation, 0) {
            Ok(out) => prop_assert_eq!(out.len(), ts.len()),
            Err(e) => clean_error(&e.function, &e)?,
        }
        match hop_aggregate(None, ts.as_ref(), values.as_ref(), size, step, offset, aggregation, 0) {
            Ok(out) => prop_assert!(out.num_rows() <= ts.len().saturating_mul(100_000)),
            Err(e) => clean_error("hop_aggregate", &e)?,
        }
        match session_window(None, ts.as_ref(), size, 0) {
            Ok(out) => prop_assert_eq!(out.len(), ts.len()),
            Err(e) => clean_error("session_window", &e)?,
        }
        match session_aggregate(keys, ts.as_ref(), values.as_ref(), size, aggregation, 0) {
            Ok(out) => prop_assert!(out.num_rows() <= ts.len()),
            Err(e) => clean_error("session_aggregate", &e)?,
        }
    }

    #[test]
    fn point_in_time_features((spine_ts, spine_keys) in pair(30), (event_ts, values) in pair(40), event_keys in sliced(40), period in duration(), ttl in prop::option::of(duration()), closed in 0usize..4, threads in 1usize..4, null_keys_match in any::<bool>()) {
        let closed = [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][closed];
        let options = PointInTimeOptions { closed, ttl, threads, null_keys_match, created_cutoff: false };
        let features: Vec<PointInTimeFeature> = [
            PitAggregation::Last, PitAggregation::First, PitAggregation::Sum, PitAggregation::Count,
            PitAggregation::Mean, PitAggregation::Min, PitAggregation::Max,
        ]
        .into_iter()
        .flat_map(|a| [PointInTimeFeature { value: 0, aggregation: a, period: None }, PointInTimeFeature::window(0, a, period)])
        .collect();
        let values = [values];
        match point_in_time(Some(&spine_keys), spine_ts.as_ref(), Some(&event_keys), event_ts.as_ref(), None, &values, &features, &options) {
            Ok(columns) => {
                prop_assert_eq!(columns.len(), features.len());
                for c in &columns {
                    prop_assert_eq!(c.len(), spine_ts.len());
                }
            }
            Err(e) => clean_error("point_in_time", &e)?,
        }
    }

    #[test]
    fn feature_specs(text in "[a-z_ ]{0,6}(:[a-zA-Z]{0,6}){0,3}(:[-0-9]{0,3}[a-z]{0,2})?( [aA][sS] [a-z_ ]{0,5})?|\\PC{0,20}") {
        // The text form shared by `training-set --feature` and SQL `point_in_time`: a
        // sentence or a spec, never a panic; a parsed spec has a column and a positive period.
        #[cfg(feature = "sql")]
        match arrowfeat_udf::sql::point_in_time::FeatureSpec::parse(&text) {
            Ok(spec) => {
                prop_assert!(!spec.column.is_empty());
                prop_assert!(spec.period.is_none_or(|p| p > 0));
                prop_assert!(spec.name.as_ref().is_none_or(|n| !n.is_empty() && !n.contains(' ')));
            }
            Err(message) => prop_assert!(message.starts_with("expected"), "{message}"),
        }
    }

    #[test]
    fn durations(text in "[-0-9. ]{0,6}[a-zµ ]{0,8}[0-9.,]{0,4}[a-z]{0,3}") {
        if let Err(e) = parse_duration("rolling_sum", "period", &text) {
            clean_error("rolling_sum", &e)?;
        }
    }
}

/// Float32 sums never poison a window either (they are summed as f64).
#[test]
fn float32_values_with_infinities_leave_windows_cleanly() {
    let ts = Int64Array::from(vec![0, 1, 5, 6]);
    let values = Float32Array::from(vec![f32::MAX, f32::INFINITY, 1.0, 2.0]);
    match rolling(None, &ts, &values, 2, Closed::Right, Aggregation::Sum, 0) {
        Ok(out) => {
            let out = out.as_primitive::<Float64Type>();
            assert_eq!(out.value(2), 1.0);
            assert_eq!(out.value(3), 3.0);
        }
        Err(e) => assert!(
            e.to_string().starts_with("rolling_sum: argument `value`"),
            "{e}"
        ),
    }
}
