//! Window kernels against naive O(rows x window) references on random data: duplicate
//! and unsorted times, times before 1970, huge gaps, one-row groups, null keys, times
//! and values.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, Int64Array, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use proptest::prelude::*;

use super::*;

const AGGREGATIONS: [Aggregation; 5] = [
    Aggregation::Sum,
    Aggregation::Count,
    Aggregation::Mean,
    Aggregation::Min,
    Aggregation::Max,
];

#[derive(Debug, Clone)]
struct Events {
    keys: Vec<Option<i64>>,
    ts: Vec<Option<i64>>,
    ints: Vec<Option<i64>>,
    floats: Vec<Option<f64>>,
}

/// Times clustered near zero (both sides of 1970) with duplicates, plus far outliers.
fn time() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        8 => (-60i64..60).prop_map(Some),
        2 => (-2_000_000_000_000i64..2_000_000_000_000).prop_map(Some),
        1 => Just(None),
    ]
}

fn events() -> impl Strategy<Value = Events> {
    (0usize..60).prop_flat_map(|n| {
        (
            proptest::collection::vec(
                prop_oneof![6 => (0i64..4).prop_map(Some), 1 => Just(None)],
                n,
            ),
            proptest::collection::vec(time(), n),
            proptest::collection::vec(
                prop_oneof![6 => (-1000i64..1000).prop_map(Some), 1 => Just(None)],
                n,
            ),
            proptest::collection::vec(
                prop_oneof![6 => (-1e6f64..1e6).prop_map(Some), 1 => Just(None), 1 => extreme_float().prop_map(Some)],
                n,
            ),
        )
            .prop_map(|(keys, ts, ints, floats)| Events {
                keys,
                ts,
                ints,
                floats,
            })
    })
}

fn arrays(e: &Events) -> (ArrayRef, ArrayRef, ArrayRef, ArrayRef) {
    (
        Arc::new(Int64Array::from(e.keys.clone())),
        Arc::new(TimestampNanosecondArray::from(e.ts.clone())),
        Arc::new(Int64Array::from(e.ints.clone())),
        Arc::new(Float64Array::from(e.floats.clone())),
    )
}

/// Values at the extremes of f64: near `f64::MAX` (sums overflow), infinities, NaN,
/// subnormals and signed zeros.
fn extreme_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::MAX),
        Just(-f64::MAX),
        Just(1e308),
        Just(-1e308),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::NAN),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(-5e-324),
        Just(-0.0),
        Just(1e300),
    ]
}

/// A reference value, exact: integers, and floats rounded once.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Int(i128),
    Float(f64),
}

fn reference_float_sum(values: &[f64], mean: bool) -> Value {
    Value::Float(super::reference::float_reference(values, mean))
}

fn naive_aggregate(aggregation: Aggregation, values: &[Value]) -> Option<Value> {
    if aggregation == Aggregation::Count {
        return Some(Value::Int(values.len() as i128));
    }
    if values.is_empty() {
        return None;
    }
    let as_f64 = |v: &Value| match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
    };
    let int = matches!(values[0], Value::Int(_));
    Some(match aggregation {
        Aggregation::Sum if int => Value::Int(
            values
                .iter()
                .map(|v| if let Value::Int(i) = v { *i } else { 0 })
                .sum(),
        ),
        Aggregation::Sum => {
            reference_float_sum(&values.iter().map(as_f64).collect::<Vec<_>>(), false)
        }
        Aggregation::Mean if int => {
            let s: i128 = values
                .iter()
                .map(|v| if let Value::Int(i) = v { *i } else { 0 })
                .sum();
            Value::Float(super::reference::integer_mean(s, values.len() as u64))
        }
        Aggregation::Mean => {
            reference_float_sum(&values.iter().map(as_f64).collect::<Vec<_>>(), true)
        }
        Aggregation::Min => *values
            .iter()
            .min_by(|a, b| as_f64(a).total_cmp(&as_f64(b)))
            .unwrap(),
        Aggregation::Max => *values
            .iter()
            .max_by(|a, b| as_f64(a).total_cmp(&as_f64(b)))
            .unwrap(),
        Aggregation::Count => unreachable!(),
    })
}

fn actual(array: &dyn Array, row: usize) -> Option<Value> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(row) as i128),
        _ => Value::Float(array.as_primitive::<Float64Type>().value(row)),
    })
}

fn close(expected: Option<Value>, found: Option<Value>) -> bool {
    match (expected, found) {
        (None, None) => true,
        (Some(Value::Int(a)), Some(Value::Int(b))) => a == b,
        (Some(Value::Int(a)), Some(Value::Float(b))) => {
            (a as f64 - b).abs() <= 1e-9 * (a as f64).abs().max(1.0)
        }
        (Some(Value::Float(a)), Some(Value::Float(b))) => {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a == 0.0 && b == 0.0)
        }
        _ => false,
    }
}

fn row_values(e: &Events, rows: &[usize], float: bool) -> Vec<Value> {
    rows.iter()
        .filter_map(|&r| {
            if float {
                e.floats[r].map(Value::Float)
            } else {
                e.ints[r].map(|i| Value::Int(i as i128))
            }
        })
        .collect()
}

/// Rows (with a time) of each key, nulls as their own key.
fn by_key(e: &Events) -> BTreeMap<Option<i64>, Vec<usize>> {
    let mut groups: BTreeMap<Option<i64>, Vec<usize>> = BTreeMap::new();
    for r in 0..e.ts.len() {
        if e.ts[r].is_some() {
            groups.entry(e.keys[r]).or_default().push(r);
        }
    }
    groups
}

fn in_rolling(t: i64, u: i64, period: i64, closed: Closed) -> bool {
    let (lo, hi) = (t as i128 - period as i128, t as i128);
    let u = u as i128;
    let above = if matches!(closed, Closed::Left | Closed::Both) {
        u >= lo
    } else {
        u > lo
    };
    let below = if matches!(closed, Closed::Right | Closed::Both) {
        u <= hi
    } else {
        u < hi
    };
    above && below
}

/// `e` with every time present and its rows in time order (an event log).
fn in_time_order(e: Events) -> Events {
    let ts: Vec<i64> = e.ts.iter().map(|t| t.unwrap_or(0)).collect();
    let mut rows: Vec<usize> = (0..ts.len()).collect();
    rows.sort_by_key(|&r| ts[r]);
    Events {
        keys: rows.iter().map(|&r| e.keys[r]).collect(),
        ts: rows.iter().map(|&r| Some(ts[r])).collect(),
        ints: rows.iter().map(|&r| e.ints[r]).collect(),
        floats: rows.iter().map(|&r| e.floats[r]).collect(),
    }
}

/// Every aggregate of `rolling` over `e` against the naive reference.
fn check_rolling(
    e: &Events,
    period: i64,
    closed: Closed,
    float: bool,
    threads: usize,
) -> std::result::Result<(), TestCaseError> {
    let (keys, ts, ints, floats) = arrays(e);
    let values = if float { &floats } else { &ints };
    let groups = by_key(e);
    for aggregation in AGGREGATIONS {
        let out = rolling(
            Some(&keys),
            ts.as_ref(),
            values.as_ref(),
            period,
            closed,
            aggregation,
            threads,
        )
        .unwrap();
        prop_assert_eq!(out.len(), e.ts.len());
        for row in 0..e.ts.len() {
            let expected = e.ts[row].and_then(|t| {
                let peers: Vec<usize> = groups[&e.keys[row]]
                    .iter()
                    .copied()
                    .filter(|&r| in_rolling(t, e.ts[r].unwrap(), period, closed))
                    .collect();
                naive_aggregate(aggregation, &row_values(e, &peers, float))
            });
            let found = actual(out.as_ref(), row);
            prop_assert!(
                close(expected, found),
                "{aggregation:?} {closed:?} row {row}: expected {expected:?}, found {found:?}"
            );
        }
    }
    Ok(())
}

fn floor_start(t: i64, offset: i64, step: i64) -> i128 {
    let d = t as i128 - offset as i128;
    d.div_euclid(step as i128) * step as i128 + offset as i128
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn rolling_matches_naive(e in events(), period in 1i64..40, closed in 0usize..4, float in any::<bool>()) {
        let closed = [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][closed];
        check_rolling(&e, period, closed, float, 0)?;
    }

    /// Rows in time order (an event log) take the one pass in row order: it matches the
    /// reference, and the general way (the same rows in reverse) bit for bit, on any
    /// number of threads.
    #[test]
    fn rolling_in_time_order_matches_naive_and_the_general_way(
        e in events(),
        period in 1i64..40,
        closed in 0usize..4,
        float in any::<bool>(),
        threads in 1usize..5,
    ) {
        let closed = [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][closed];
        let e = in_time_order(e);
        check_rolling(&e, period, closed, float, threads)?;
        let reversed = Events {
            keys: e.keys.iter().rev().copied().collect(),
            ts: e.ts.iter().rev().copied().collect(),
            ints: e.ints.iter().rev().copied().collect(),
            floats: e.floats.iter().rev().copied().collect(),
        };
        let (keys, ts, ints, floats) = arrays(&e);
        let (rkeys, rts, rints, rfloats) = arrays(&reversed);
        let (values, rvalues) = if float { (&floats, &rfloats) } else { (&ints, &rints) };
        for aggregation in AGGREGATIONS {
            let ordered = rolling(Some(&keys), ts.as_ref(), values.as_ref(), period, closed, aggregation, threads);
            let general = rolling(Some(&rkeys), rts.as_ref(), rvalues.as_ref(), period, closed, aggregation, threads);
            match (ordered, general) {
                (Ok(ordered), Ok(general)) => {
                    let general = arrow::compute::take(general.as_ref(), &arrow::array::UInt32Array::from_iter_values((0..e.ts.len() as u32).rev()), None).unwrap();
                    prop_assert!(same_bits(ordered.as_ref(), general.as_ref()), "{aggregation:?} {closed:?}: {ordered:?} against {general:?}");
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "{aggregation:?}: {a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn hop_aggregate_matches_naive(e in events(), size in 1i64..30, step_divisor in 1i64..6, offset in -50i64..50, float in any::<bool>()) {
        let step = (size / step_divisor).max(1);
        let (keys, ts, ints, floats) = arrays(&e);
        let values = if float { &floats } else { &ints };
        for aggregation in AGGREGATIONS {
            let batch = hop_aggregate(Some(&keys), ts.as_ref(), values.as_ref(), size, step, offset, aggregation, 0).unwrap();
            let mut expected = Vec::new();
            for (key, rows) in by_key(&e) {
                let starts: BTreeSet<i128> = rows.iter().flat_map(|&r| {
                    let t = e.ts[r].unwrap();
                    let last = floor_start(t, offset, step);
                    (0..).map(move |k| last - k * step as i128).take_while(move |s| *s > t as i128 - size as i128)
                }).collect();
                for s in starts {
                    let members: Vec<usize> = rows.iter().copied().filter(|&r| {
                        let t = e.ts[r].unwrap() as i128;
                        s <= t && t < s + size as i128
                    }).collect();
                    prop_assert!(!members.is_empty());
                    expected.push((key, s as i64, naive_aggregate(aggregation, &row_values(&e, &members, float))));
                }
            }
            prop_assert_eq!(batch.num_rows(), expected.len(), "{:?}", aggregation);
            let key_col = batch.column(0).as_primitive::<Int64Type>();
            let start_col = batch.column(1).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
            let end_col = batch.column(2).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
            for (i, (key, start, value)) in expected.iter().enumerate() {
                prop_assert_eq!(key_col.is_valid(i).then(|| key_col.value(i)), *key);
                prop_assert_eq!(start_col.value(i), *start);
                prop_assert_eq!(end_col.value(i), *start + size);
                let found = actual(batch.column(3).as_ref(), i);
                prop_assert!(close(*value, found), "{aggregation:?} window {i}: expected {value:?}, found {found:?}");
            }
        }
    }

    #[test]
    fn sessions_match_naive(e in events(), gap in 1i64..20, float in any::<bool>()) {
        let (keys, ts, ints, floats) = arrays(&e);
        let values = if float { &floats } else { &ints };
        // Reference: sessions are the connected components of "within gap of each other".
        let mut expected_rows = Vec::new();
        let mut session_of = vec![None; e.ts.len()];
        for (key, rows) in by_key(&e) {
            let mut seen = vec![false; rows.len()];
            let mut components = Vec::new();
            for i in 0..rows.len() {
                if seen[i] { continue; }
                let mut stack = vec![i];
                let mut members = Vec::new();
                seen[i] = true;
                while let Some(a) = stack.pop() {
                    members.push(rows[a]);
                    for b in 0..rows.len() {
                        let (ta, tb) = (e.ts[rows[a]].unwrap() as i128, e.ts[rows[b]].unwrap() as i128);
                        if !seen[b] && (ta - tb).abs() <= gap as i128 {
                            seen[b] = true;
                            stack.push(b);
                        }
                    }
                }
                let start = members.iter().map(|&r| e.ts[r].unwrap()).min().unwrap();
                let end = members.iter().map(|&r| e.ts[r].unwrap()).max().unwrap() + gap;
                components.push((start, end, members));
            }
            components.sort_by_key(|c| c.0);
            for (start, end, members) in components {
                for &r in &members { session_of[r] = Some((start, end)); }
                expected_rows.push((key, start, end, members));
            }
        }
        let windows = session_window(Some(&keys), ts.as_ref(), gap, 0).unwrap();
        let starts = windows.column(0).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
        let ends = windows.column(1).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
        for (row, expected) in session_of.iter().enumerate() {
            let found = windows.is_valid(row).then(|| (starts.value(row), ends.value(row)));
            prop_assert_eq!(found, *expected, "row {}", row);
        }
        for aggregation in AGGREGATIONS {
            let batch = session_aggregate(Some(&keys), ts.as_ref(), values.as_ref(), gap, aggregation, 0).unwrap();
            prop_assert_eq!(batch.num_rows(), expected_rows.len());
            let key_col = batch.column(0).as_primitive::<Int64Type>();
            let start_col = batch.column(1).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
            let end_col = batch.column(2).as_primitive::<arrow::datatypes::TimestampNanosecondType>();
            for (i, (key, start, end, members)) in expected_rows.iter().enumerate() {
                prop_assert_eq!(key_col.is_valid(i).then(|| key_col.value(i)), *key);
                prop_assert_eq!((start_col.value(i), end_col.value(i)), (*start, *end));
                let expected = naive_aggregate(aggregation, &row_values(&e, members, float));
                let found = actual(batch.column(3).as_ref(), i);
                prop_assert!(close(expected, found), "{aggregation:?} session {i}: expected {expected:?}, found {found:?}");
            }
        }
    }

    #[test]
    fn tumble_and_hop_windows_match_naive(ts in proptest::collection::vec(time(), 0..40), size in 1i64..50, step_divisor in 1i64..6, offset in -100i64..100) {
        let step = (size / step_divisor).max(1);
        let array = TimestampNanosecondArray::from(ts.clone());
        let tumbled = tumble_start(&array, size, offset).unwrap();
        let tumbled = tumbled.as_primitive::<arrow::datatypes::TimestampNanosecondType>();
        let lists = hop_windows(&array, size, step, offset).unwrap();
        for (row, t) in ts.iter().enumerate() {
            match t {
                None => {
                    prop_assert!(tumbled.is_null(row));
                    prop_assert!(lists.is_null(row));
                }
                Some(t) => {
                    let start = floor_start(*t, offset, size);
                    prop_assert!(start <= *t as i128 && (*t as i128) < start + size as i128);
                    prop_assert_eq!(tumbled.value(row) as i128, start);
                    let expected: Vec<i64> = (-(size / step) - 2..=0)
                        .map(|k| floor_start(*t, offset, step) + k as i128 * step as i128)
                        .filter(|s| *s <= *t as i128 && (*t as i128) < s + size as i128)
                        .map(|s| s as i64)
                        .collect();
                    let found = lists.value(row);
                    let found = found.as_primitive::<arrow::datatypes::TimestampNanosecondType>();
                    prop_assert_eq!(found.values().to_vec(), expected);
                }
            }
        }
    }
}

/// Whether two results hold the same bits: types, nulls, and each valid value (NaN
/// included, and the sign of zero).
fn same_bits(a: &dyn Array, b: &dyn Array) -> bool {
    if a.data_type() != b.data_type()
        || a.len() != b.len()
        || a.logical_nulls() != b.logical_nulls()
    {
        return false;
    }
    match a.data_type() {
        DataType::Float64 => {
            let (a, b) = (
                a.as_primitive::<Float64Type>(),
                b.as_primitive::<Float64Type>(),
            );
            (0..a.len()).all(|i| a.is_null(i) || a.value(i).to_bits() == b.value(i).to_bits())
        }
        _ => a.to_data() == b.to_data(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The window kernels compiled with the bit-manipulation instructions (LZCNT, BMI1/2)
    /// and for baseline x86-64 give the same bits. (On a CPU without the instructions
    /// both runs take the baseline build.)
    #[test]
    fn builds_with_and_without_bit_instructions_agree(
        e in events(),
        period in 1i64..40,
        step_divisor in 1i64..6,
        closed in 0usize..4,
        float in any::<bool>(),
    ) {
        let closed = [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][closed];
        let (keys, ts, ints, floats) = arrays(&e);
        let values = if float { &floats } else { &ints };
        let step = (period / step_divisor).max(1);
        for aggregation in AGGREGATIONS {
            let run = || {
                (
                    rolling(Some(&keys), ts.as_ref(), values.as_ref(), period, closed, aggregation, 0),
                    hop_aggregate(Some(&keys), ts.as_ref(), values.as_ref(), period, step, 0, aggregation, 0),
                )
            };
            let (rolled, hopped) = run();
            let (rolled_portable, hopped_portable) = crate::kernels::simd::portable_only(run);
            let (rolled, rolled_portable) = (rolled.unwrap(), rolled_portable.unwrap());
            prop_assert!(same_bits(rolled.as_ref(), rolled_portable.as_ref()), "rolling {aggregation:?} {closed:?}");
            let (hopped, hopped_portable) = (hopped.unwrap(), hopped_portable.unwrap());
            prop_assert_eq!(hopped.num_columns(), hopped_portable.num_columns());
            for (a, b) in hopped.columns().iter().zip(hopped_portable.columns()) {
                prop_assert!(same_bits(a.as_ref(), b.as_ref()), "hop_aggregate {aggregation:?}");
            }
        }
    }
}

#[test]
fn float_sums_do_not_drift_while_sliding() {
    // Large and tiny values alternate: a plain running sum with subtract-on-evict loses
    // the small ones; the compensated sum keeps every window exact.
    let n = 20_000;
    let ts: Vec<i64> = (0..n).collect();
    let values: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1e16 } else { 1.0 })
        .collect();
    let out = rolling(
        None,
        &Int64Array::from(ts),
        &Float64Array::from(values.clone()),
        2,
        Closed::Right,
        Aggregation::Sum,
        0,
    )
    .unwrap();
    let out = out.as_primitive::<Float64Type>();
    for i in 1..n as usize {
        assert_eq!(out.value(i), values[i] + values[i - 1], "row {i}");
    }
}

#[test]
fn non_finite_values_leave_the_window_cleanly() {
    let ts = Int64Array::from(vec![0, 1, 2, 3]);
    let values = Float64Array::from(vec![1.0, f64::NAN, f64::INFINITY, 2.0]);
    let sum = rolling(None, &ts, &values, 1, Closed::Right, Aggregation::Sum, 0).unwrap();
    let sum = sum.as_primitive::<Float64Type>();
    assert_eq!(sum.value(0), 1.0);
    assert!(sum.value(1).is_nan());
    assert_eq!(sum.value(2), f64::INFINITY);
    assert_eq!(sum.value(3), 2.0, "NaN and inf left the window");
    let max = rolling(None, &ts, &values, 2, Closed::Right, Aggregation::Max, 0).unwrap();
    assert!(
        max.as_primitive::<Float64Type>().value(1).is_nan(),
        "NaN is the largest value, as in Spark"
    );
}

#[test]
fn signed_zeros_are_ordered_whatever_their_order_in_time() {
    let ts = Int64Array::from(vec![0, 1]);
    for zeros in [[0.0, -0.0], [-0.0, 0.0]] {
        let values = Float64Array::from(zeros.to_vec());
        for (aggregation, expected) in [(Aggregation::Min, -0.0f64), (Aggregation::Max, 0.0)] {
            let out = rolling(None, &ts, &values, 10, Closed::Right, aggregation, 0).unwrap();
            let found = out.as_primitive::<Float64Type>().value(1);
            assert_eq!(
                found.to_bits(),
                expected.to_bits(),
                "{aggregation:?} of {zeros:?}: {found}"
            );
        }
    }
}

#[test]
fn integer_sums_are_exact_and_overflow_is_an_error() {
    let ts = Int64Array::from(vec![0, 1, 2]);
    let big = Int64Array::from(vec![i64::MAX, i64::MAX, -i64::MAX]);
    let out = rolling(None, &ts, &big, 10, Closed::Right, Aggregation::Mean, 0).unwrap();
    assert_eq!(out.as_primitive::<Float64Type>().value(1), i64::MAX as f64);
    let err = rolling(None, &ts, &big, 10, Closed::Right, Aggregation::Sum, 0).unwrap_err();
    assert_eq!(err.function, "rolling_sum");
    assert!(err.message.contains("Int64 range"), "{}", err.message);
    // One-event windows fit.
    let ok = rolling(None, &ts, &big, 1, Closed::Right, Aggregation::Sum, 0).unwrap();
    assert_eq!(
        ok.as_primitive::<Int64Type>().values().to_vec(),
        vec![i64::MAX, i64::MAX, -i64::MAX]
    );
}

#[test]
fn hop_jumps_over_long_gaps() {
    // 1 ns steps across a gap of ~31 years: walking would take forever.
    let ts = Int64Array::from(vec![
        -1_000_000_000_000_000_000,
        0,
        1_000_000_000_000_000_000,
    ]);
    let values = Int64Array::from(vec![1, 2, 3]);
    let batch = hop_aggregate(None, &ts, &values, 500, 1, 0, Aggregation::Sum, 0).unwrap();
    assert_eq!(batch.num_rows(), 1500);
    assert_eq!(batch.schema().field(0).name(), "window_start");
    let starts = batch.column(0).as_primitive::<Int64Type>();
    assert_eq!(starts.value(0), -1_000_000_000_000_000_000 - 499);
    assert_eq!(starts.value(1499), 1_000_000_000_000_000_000);
}

#[test]
fn dense_nanosecond_hop_matches_spark_example() {
    // size 500 ns, step 100 ns: each event is in 5 windows.
    let ts = TimestampNanosecondArray::from(vec![1_000, 1_050, 1_499, 1_500]).with_timezone("UTC");
    let lists = hop_windows(&ts, 500, 100, 0).unwrap();
    let first = lists.value(0);
    assert_eq!(
        first
            .as_primitive::<arrow::datatypes::TimestampNanosecondType>()
            .values()
            .to_vec(),
        vec![600, 700, 800, 900, 1000]
    );
    assert_eq!(
        lists.value_type(),
        DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
    );
    let batch = hop_aggregate(
        None,
        &ts,
        &Int64Array::from(vec![1, 1, 1, 1]),
        500,
        100,
        0,
        Aggregation::Count,
        0,
    )
    .unwrap();
    let counts = batch
        .column(2)
        .as_primitive::<Int64Type>()
        .values()
        .to_vec();
    // Windows 600..1500 by 100: [600,1100) holds 1000, 1050; ...; [1500,2000) holds 1500.
    assert_eq!(
        batch
            .column(0)
            .as_primitive::<arrow::datatypes::TimestampNanosecondType>()
            .values()
            .to_vec(),
        (6..=15).map(|k| k * 100).collect::<Vec<i64>>()
    );
    assert_eq!(counts, vec![2, 2, 2, 2, 3, 2, 2, 2, 2, 1]);
}

#[test]
fn coarse_units_string_keys_and_sliced_input() {
    // Microsecond input: bounds come back in nanoseconds with the time zone kept.
    let ts = TimestampMicrosecondArray::from(vec![Some(0), Some(1), None, Some(-1), Some(5)])
        .with_timezone("UTC");
    let keys: ArrayRef = Arc::new(StringArray::from(vec![
        Some("b"),
        Some("a"),
        Some("a"),
        None,
        Some("b"),
    ]));
    let values = Int64Array::from(vec![1, 2, 3, 4, 5]);
    let batch = session_aggregate(Some(&keys), &ts, &values, 3_000, Aggregation::Sum, 0).unwrap();
    let keys_out = batch.column(0).as_string::<i32>();
    assert_eq!(
        keys_out.iter().collect::<Vec<_>>(),
        vec![None, Some("a"), Some("b"), Some("b")]
    );
    assert_eq!(
        batch
            .column(3)
            .as_primitive::<Int64Type>()
            .values()
            .to_vec(),
        vec![4, 2, 1, 5]
    );
    assert_eq!(
        batch.schema().field(1).data_type(),
        &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
    );
    // A slice reads through its offset.
    let sliced = ts.slice(3, 2);
    let starts = tumble_start(&sliced, 1_000_000, 0).unwrap();
    assert_eq!(
        starts
            .as_primitive::<arrow::datatypes::TimestampNanosecondType>()
            .values()
            .to_vec(),
        vec![-1_000_000, 0]
    );
}

#[test]
fn errors_name_function_argument_and_expectation() {
    let ts = Int64Array::from(vec![1, 2]);
    let v = Int64Array::from(vec![1, 2]);
    let e = hop_aggregate(None, &ts, &v, 100, 200, 0, Aggregation::Sum, 0).unwrap_err();
    assert_eq!(
        (e.function.as_ref(), e.argument.as_str()),
        ("hop_aggregate", "step")
    );
    let e = rolling(None, &ts, &v, 0, Closed::Right, Aggregation::Max, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "rolling_max: argument `period`: expected a duration > 0, found 0ns"
    );
    let e = session_window(None, &Float64Array::from(vec![1.0]), 5, 0).unwrap_err();
    assert_eq!(e.to_string(), "session_window: argument `ts`: expected a timestamp (any unit), a date or Int64 nanoseconds, found Float64");
    let e = rolling(
        None,
        &ts,
        &StringArray::from(vec!["a", "b"]),
        5,
        Closed::Right,
        Aggregation::Sum,
        0,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "rolling_sum: argument `value`: expected numbers for `sum`, found Utf8"
    );
    let e = session_aggregate(
        None,
        &ts,
        &Int64Array::from(vec![1]),
        5,
        Aggregation::Sum,
        0,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "session_aggregate: argument `value`: expected 2 rows like argument `ts`, found 1 rows"
    );
    let far = arrow::array::TimestampSecondArray::from(vec![0, 10_000_000_000]);
    let e = tumble_start(&far, 10, 0).unwrap_err();
    assert!(e.message.contains("at row 1"), "{}", e.message);
    assert_eq!(
        Aggregation::parse("f", "agg", "median")
            .unwrap_err()
            .message,
        "expected one of sum, count, mean, min, max, found \"median\""
    );
    let e = hop_windows(&ts, 1_000_000, 1, 0).unwrap_err();
    assert!(e.message.contains("use hop_aggregate"), "{}", e.message);
}

#[test]
fn dates_are_midnight_utc() {
    let days = arrow::array::Date32Array::from(vec![Some(-1), None, Some(0), Some(1)]);
    let starts = tumble_start(&days, 2 * 86_400_000_000_000, 0).unwrap();
    assert_eq!(
        starts.data_type(),
        &DataType::Timestamp(TimeUnit::Nanosecond, None)
    );
    let starts = starts.as_primitive::<arrow::datatypes::TimestampNanosecondType>();
    assert_eq!(starts.value(0), -2 * 86_400_000_000_000);
    assert!(starts.is_null(1));
    assert_eq!((starts.value(2), starts.value(3)), (0, 0));
    let far = arrow::array::Date32Array::from(vec![0, 200_000]);
    let e = tumble_start(&far, 10, 0).unwrap_err();
    assert!(
        e.message.contains("found 2517-08-01T00:00:00 at row 1"),
        "{}",
        e.message
    );
}

#[test]
fn empty_input() {
    let ts = Int64Array::from(Vec::<i64>::new());
    assert_eq!(
        rolling(None, &ts, &ts, 5, Closed::Right, Aggregation::Sum, 0)
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        hop_aggregate(None, &ts, &ts, 5, 1, 0, Aggregation::Sum, 0)
            .unwrap()
            .num_rows(),
        0
    );
    assert_eq!(
        session_aggregate(None, &ts, &ts, 5, Aggregation::Count, 0)
            .unwrap()
            .num_rows(),
        0
    );
    assert_eq!(session_window(None, &ts, 5, 0).unwrap().len(), 0);
    assert_eq!(hop_windows(&ts, 5, 1, 0).unwrap().len(), 0);
}

#[test]
fn large_inputs_split_over_threads_give_the_per_key_results() {
    // 300K rows are split over threads (on machines with more than one core); each key's
    // rows alone are below the threshold and run on one thread: the results must agree.
    let rows = 300_000usize;
    let keys: Vec<i64> = (0..rows).map(|i| ((i * 7919) % 13) as i64).collect();
    let ts: Vec<i64> = (0..rows)
        .map(|i| (i as i64 * 37) % 1_000_003 - 500_000)
        .collect();
    let values: Vec<Option<f64>> = (0..rows)
        .map(|i| (i % 17 != 0).then_some((i % 101) as f64 - 50.0))
        .collect();
    let keys_array: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
    let ts_array = Int64Array::from(ts.clone());
    let values_array = Float64Array::from(values.clone());
    let rolled = rolling(
        Some(&keys_array),
        &ts_array,
        &values_array,
        5_000,
        Closed::Right,
        Aggregation::Max,
        0,
    )
    .unwrap();
    let rolled = rolled.as_primitive::<Float64Type>();
    let hopped = hop_aggregate(
        Some(&keys_array),
        &ts_array,
        &values_array,
        2_000,
        500,
        0,
        Aggregation::Sum,
        0,
    )
    .unwrap();
    let sessions = session_aggregate(
        Some(&keys_array),
        &ts_array,
        &values_array,
        60,
        Aggregation::Count,
        0,
    )
    .unwrap();
    let (mut hop_rows, mut session_rows) = (0, 0);
    for key in 0..13 {
        let rows_of: Vec<usize> = (0..rows).filter(|&r| keys[r] == key).collect();
        let sub_ts = Int64Array::from(rows_of.iter().map(|&r| ts[r]).collect::<Vec<_>>());
        let sub_values = Float64Array::from(rows_of.iter().map(|&r| values[r]).collect::<Vec<_>>());
        let alone = rolling(
            None,
            &sub_ts,
            &sub_values,
            5_000,
            Closed::Right,
            Aggregation::Max,
            0,
        )
        .unwrap();
        let alone = alone.as_primitive::<Float64Type>();
        for (i, &r) in rows_of.iter().enumerate() {
            assert_eq!(rolled.is_valid(r), alone.is_valid(i), "row {r}");
            assert_eq!(rolled.value(r), alone.value(i), "row {r}");
        }
        let hop_alone = hop_aggregate(
            None,
            &sub_ts,
            &sub_values,
            2_000,
            500,
            0,
            Aggregation::Sum,
            0,
        )
        .unwrap();
        let n = hop_alone.num_rows();
        assert_eq!(
            hopped.column(3).slice(hop_rows, n).as_ref(),
            hop_alone.column(2).as_ref(),
            "key {key}"
        );
        assert_eq!(
            hopped.column(1).slice(hop_rows, n).as_ref(),
            hop_alone.column(0).as_ref(),
            "key {key}"
        );
        hop_rows += n;
        let sessions_alone =
            session_aggregate(None, &sub_ts, &sub_values, 60, Aggregation::Count, 0).unwrap();
        let n = sessions_alone.num_rows();
        assert_eq!(
            sessions.column(3).slice(session_rows, n).as_ref(),
            sessions_alone.column(2).as_ref(),
            "key {key}"
        );
        session_rows += n;
    }
    assert_eq!(
        (hop_rows, session_rows),
        (hopped.num_rows(), sessions.num_rows())
    );
}

#[test]
fn overflowed_float_sums_do_not_poison_later_windows() {
    // The SQL example of issue 11: (0, 1e308), (1, 1e308), (5, 1.0), (6, 2.0), period 2.
    let ts = Int64Array::from(vec![0, 1, 5, 6]);
    let values = Float64Array::from(vec![1e308, 1e308, 1.0, 2.0]);
    let sum = rolling(None, &ts, &values, 2, Closed::Right, Aggregation::Sum, 0).unwrap();
    let sum = sum.as_primitive::<Float64Type>().values().to_vec();
    assert_eq!(sum, vec![1e308, f64::INFINITY, 1.0, 3.0]);
    // A mean of huge values is representable although their sum is not.
    let mean = rolling(None, &ts, &values, 2, Closed::Right, Aggregation::Mean, 0).unwrap();
    assert_eq!(mean.as_primitive::<Float64Type>().value(1), 1e308);
    // Huge values that cancel leave the small ones exact, while the window still holds
    // other values (so it is never emptied and reset).
    let ts = Int64Array::from(vec![0, 1, 2, 3, 4]);
    let values = Float64Array::from(vec![0.5, f64::MAX, f64::MAX, -f64::MAX, 0.25]);
    let sum = rolling(None, &ts, &values, 10, Closed::Right, Aggregation::Sum, 0).unwrap();
    let sum = sum.as_primitive::<Float64Type>().values().to_vec();
    assert_eq!(sum, vec![0.5, f64::MAX, f64::INFINITY, f64::MAX, f64::MAX]);
    let sum = rolling(None, &ts, &values, 2, Closed::Right, Aggregation::Sum, 0).unwrap();
    let sum = sum.as_primitive::<Float64Type>().values().to_vec();
    assert_eq!(
        sum,
        vec![0.5, f64::MAX, f64::INFINITY, 0.0, -f64::MAX + 0.25]
    );
    // The same through hopping windows and sessions.
    let ts = Int64Array::from(vec![0, 1, 5, 6]);
    let values = Float64Array::from(vec![1e308, 1e308, 1.0, 2.0]);
    let hop = hop_aggregate(None, &ts, &values, 2, 1, 0, Aggregation::Sum, 0).unwrap();
    let sums = hop
        .column(2)
        .as_primitive::<Float64Type>()
        .values()
        .to_vec();
    assert_eq!(sums, vec![1e308, f64::INFINITY, 1e308, 1.0, 3.0, 2.0]);
    let sessions = session_aggregate(None, &ts, &values, 2, Aggregation::Sum, 0).unwrap();
    let sums = sessions
        .column(2)
        .as_primitive::<Float64Type>()
        .values()
        .to_vec();
    assert_eq!(sums, vec![f64::INFINITY, 3.0]);
}

#[test]
fn window_parameters_near_the_i64_limits_are_exact_or_errors() {
    // 106751 days is just below i64::MAX nanoseconds: size + step overflows i64.
    let days = parse_duration("hop_windows", "size", "106751 days").unwrap();
    let ts = Int64Array::from(vec![Some(0), None, Some(-1)]);
    let lists = hop_windows(&ts, days, days, 0).unwrap();
    assert_eq!(
        lists.value(0).as_primitive::<Int64Type>().values().to_vec(),
        vec![0]
    );
    assert!(lists.is_null(1));
    assert_eq!(
        lists.value(2).as_primitive::<Int64Type>().values().to_vec(),
        vec![-days]
    );
    for (size, step) in [
        (i64::MAX, i64::MAX),
        (i64::MAX, i64::MAX / 2 + 1),
        (i64::MAX, 1),
    ] {
        let out = hop_windows(
            &Int64Array::from(vec![0, i64::MAX, i64::MIN]),
            size,
            step,
            0,
        );
        if let Err(e) = out {
            assert!(
                e.message.contains("windows per event") || e.message.contains("range"),
                "{e}"
            );
        } else {
            let out = out.unwrap();
            for row in 0..3 {
                for s in out.value(row).as_primitive::<Int64Type>().values() {
                    let t = [0, i64::MAX, i64::MIN][row] as i128;
                    assert!((*s as i128) <= t && t < *s as i128 + size as i128);
                }
            }
        }
    }
    // Offsets at the limits.
    // t - offset overflows, yet the window starts in range (at MIN + 3, = 95 mod 100).
    let starts = tumble_start(&Int64Array::from(vec![i64::MIN + 5]), 100, 95).unwrap();
    assert_eq!(starts.as_primitive::<Int64Type>().value(0), i64::MIN + 3);
    // The window would start before i64::MIN: an error that says so, not a wrap.
    let e = tumble_start(&Int64Array::from(vec![i64::MIN + 5]), 100, i64::MAX).unwrap_err();
    assert!(e.message.contains("outside the nanosecond range"), "{e}");
    // Duration terms that overflow 128 bits are errors, not panics.
    let e =
        parse_duration("f", "size", "1ns 170141183460469231731687303715884105727ns").unwrap_err();
    assert!(
        e.message.contains("too large") || e.message.contains("292 years"),
        "{e}"
    );
    assert!(parse_duration("f", "size", "99999999999999999999s").is_err());
}

#[test]
fn hop_windows_caps_the_windows_of_one_call() {
    // 10,000 windows per event on 10,000 rows would be 800 MB in one allocation.
    let ts = Int64Array::from((0..10_000).collect::<Vec<i64>>());
    let e = hop_windows(&ts, 10_000, 1, 0).unwrap_err();
    assert!(e.message.contains("windows in one call"), "{e}");
    assert!(e.message.contains("by row 1677"), "{e}");
}

/// A xorshift generator from `seed` (not 0): fixed pseudo-random inputs for large tests.
pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The caller owns the threads (DataFusion and Spark pass 1); the results are the same for
/// every thread count, on inputs large enough to be split (2^17 rows per thread).
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let rows = 300_000usize;
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..rows).map(|_| (next() % 500) as i64),
    ));
    let ts = Int64Array::from_iter_values((0..rows).map(|_| (next() % 10_000_000) as i64));
    let values = Float64Array::from_iter_values((0..rows).map(|_| (next() % 1000) as f64 / 8.0));
    let at = |threads: usize| {
        (
            rolling(
                Some(&keys),
                &ts,
                &values,
                50_000,
                Closed::Right,
                Aggregation::Sum,
                threads,
            )
            .unwrap(),
            hop_aggregate(
                Some(&keys),
                &ts,
                &values,
                100_000,
                50_000,
                0,
                Aggregation::Max,
                threads,
            )
            .unwrap(),
            session_aggregate(
                Some(&keys),
                &ts,
                &values,
                20_000,
                Aggregation::Mean,
                threads,
            )
            .unwrap(),
            session_window(Some(&keys), &ts, 20_000, threads).unwrap(),
        )
    };
    let one = at(1);
    for threads in [2, 3, 0] {
        let other = at(threads);
        assert_eq!(
            one.0.as_ref(),
            other.0.as_ref(),
            "rolling, {threads} threads"
        );
        assert_eq!(one.1, other.1, "hop_aggregate, {threads} threads");
        assert_eq!(one.2, other.2, "session_aggregate, {threads} threads");
        assert_eq!(one.3, other.3, "session_window, {threads} threads");
    }
}

/// Rows in time order take the one pass in row order, split where the time changes and
/// each part warmed up one period back: on long windows over many keys, with peers,
/// nulls and every choice of ends, it matches the general way (the same rows reversed)
/// bit for bit on every thread count.
#[test]
fn rolling_in_time_order_split_over_threads_matches_the_general_way() {
    let rows = 60_000usize;
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut t = -1_000_000i64;
    let mut ts = Vec::with_capacity(rows);
    let mut keys = Vec::with_capacity(rows);
    let mut floats = Vec::with_capacity(rows);
    let mut ints = Vec::with_capacity(rows);
    for _ in 0..rows {
        // A quarter of the rows share the time before them (peers).
        t += [0, 1, 3, 40][(next() % 4) as usize];
        ts.push(t);
        keys.push((next() % 300) as i64);
        let null = next().is_multiple_of(13);
        let x = next() % 100_000;
        floats.push((!null).then_some(x as f64 / 64.0 - 700.0));
        ints.push((!null).then_some(x as i64 * 1_000_003 - i64::MAX / 4_000_000));
    }
    let reversed = |a: &dyn Array| {
        let order = arrow::array::UInt32Array::from_iter_values((0..rows as u32).rev());
        arrow::compute::take(a, &order, None).unwrap()
    };
    let keys: ArrayRef = Arc::new(Int64Array::from(keys));
    let ts = Int64Array::from(ts);
    let values: [ArrayRef; 2] = [
        Arc::new(Float64Array::from(floats)),
        Arc::new(Int64Array::from(ints)),
    ];
    let (rkeys, rts) = (reversed(keys.as_ref()), reversed(&ts));
    let rts = rts.as_primitive::<Int64Type>();
    for values in &values {
        let rvalues = reversed(values.as_ref());
        for closed in [Closed::Right, Closed::Left, Closed::Both, Closed::Neither] {
            for aggregation in [Aggregation::Sum, Aggregation::Mean, Aggregation::Count] {
                for period in [1, 500, 20_000] {
                    let general = rolling(
                        Some(&rkeys),
                        rts,
                        rvalues.as_ref(),
                        period,
                        closed,
                        aggregation,
                        1,
                    )
                    .unwrap();
                    let general = reversed(general.as_ref());
                    for threads in [1, 2, 3, 4] {
                        let ordered = rolling(
                            Some(&keys),
                            &ts,
                            values.as_ref(),
                            period,
                            closed,
                            aggregation,
                            threads,
                        )
                        .unwrap();
                        assert!(
                            same_bits(ordered.as_ref(), general.as_ref()),
                            "{aggregation:?} {closed:?} period {period}, {threads} threads"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn float_keys_group_negative_zero_with_zero_and_every_nan_together() {
    // Spark groups -0.0 with 0.0 and all NaNs as one key; the row format alone would not.
    let other_nan = f64::from_bits(f64::NAN.to_bits() | 1);
    let keys: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(0.0),
        Some(-0.0),
        Some(f64::NAN),
        Some(other_nan),
        Some(-f64::NAN),
        None,
        Some(1.5),
    ]));
    let ts = Int64Array::from(vec![1, 2, 3, 4, 5, 6, 7]);
    let values = Int64Array::from(vec![1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]);
    let sums = rolling(
        Some(&keys),
        &ts,
        &values,
        1_000,
        Closed::Right,
        Aggregation::Sum,
        0,
    )
    .unwrap();
    assert_eq!(
        sums.as_primitive::<Int64Type>().values().to_vec(),
        vec![1, 11, 100, 1_100, 11_100, 100_000, 1_000_000]
    );
    // The same through a slice, float32 and a struct field, in session_aggregate.
    let keys32: ArrayRef = Arc::new(arrow::array::Float32Array::from(vec![
        9.0,
        -0.0,
        0.0,
        f32::NAN,
        -f32::NAN,
    ]));
    let keys32 = keys32.slice(1, 4);
    let nested: ArrayRef = Arc::new(arrow::array::StructArray::from(vec![(
        Arc::new(arrow::datatypes::Field::new("x", DataType::Float32, true)),
        keys32.clone(),
    )]));
    let ts = Int64Array::from(vec![1, 2, 3, 4]);
    let values = Int64Array::from(vec![1, 2, 4, 8]);
    for keys in [&keys32, &nested] {
        let batch =
            session_aggregate(Some(keys), &ts, &values, 1_000, Aggregation::Sum, 0).unwrap();
        assert_eq!(batch.num_rows(), 2, "{keys:?}");
        assert_eq!(
            batch
                .column(3)
                .as_primitive::<Int64Type>()
                .values()
                .to_vec(),
            vec![3, 12],
            "{keys:?}"
        );
    }
}

#[test]
fn keys_crafted_to_collide_in_an_unkeyed_hash_group_in_linear_time() {
    // Keys whose FxHash (`k * 0x517cc1b727220a95`) share their low 40 bits: with that
    // hash, 40,000 of them took a second and 1M would take minutes (every insert probed
    // every earlier key). A seeded hash groups them like any other keys; a return of the
    // quadratic grouping shows as this test running for minutes.
    const FX_SEED: u64 = 0x517c_c1b7_2722_0a95;
    let inverse = (0..6).fold(FX_SEED, |x, _| {
        x.wrapping_mul(2u64.wrapping_sub(FX_SEED.wrapping_mul(x)))
    });
    assert_eq!(FX_SEED.wrapping_mul(inverse), 1);
    let rows = 200_000u64;
    let keys: Vec<i64> = (0..rows)
        .map(|j| ((j << 40).wrapping_mul(inverse)) as i64)
        .collect();
    let keys: ArrayRef = Arc::new(Int64Array::from(keys));
    let ts = Int64Array::from_iter_values(0..rows as i64);
    let values = Int64Array::from(vec![1; rows as usize]);
    let sums = rolling(
        Some(&keys),
        &ts,
        &values,
        10,
        Closed::Right,
        Aggregation::Sum,
        1,
    )
    .unwrap();
    assert!(sums
        .as_primitive::<Int64Type>()
        .values()
        .iter()
        .all(|&s| s == 1));
}

#[test]
fn rolling_at_the_oldest_time_keeps_its_own_events() {
    // t - period is below i64::MIN there: nothing is old enough to leave.
    let ts = Int64Array::from(vec![i64::MIN, i64::MIN + 5]);
    let values = Int64Array::from(vec![1, 1]);
    let sums = rolling(None, &ts, &values, 10, Closed::Right, Aggregation::Sum, 1).unwrap();
    assert_eq!(
        sums.as_primitive::<Int64Type>().values().to_vec(),
        vec![1, 2]
    );
}

#[test]
fn hop_refuses_too_many_windows_before_building_them() {
    // One event, a day-long window, a 1 ns step: 86 trillion windows.
    let ts = Int64Array::from(vec![0]);
    let values = Float64Array::from(vec![1.0]);
    let e = hop_aggregate(
        None,
        &ts,
        &values,
        86_400_000_000_000,
        1,
        0,
        Aggregation::Sum,
        1,
    )
    .unwrap_err();
    assert!(e.to_string().contains("windows"), "{e}");
    // Two far-apart clusters of events: the cheap bound (events x windows per event, as
    // the span is huge) is 600 x 2^20 > 2^28, but the events of a cluster share their
    // windows, so the exact count (2 x (2^20 + 299)) decides, and accepts.
    let ts = Int64Array::from_iter_values((0..300).chain(1_000_000_000_000..1_000_000_000_300));
    let values = Float64Array::from(vec![1.0; 600]);
    let batch = hop_aggregate(None, &ts, &values, 1 << 20, 1, 0, Aggregation::Count, 1).unwrap();
    assert_eq!(batch.num_rows(), 2 * ((1 << 20) + 299));
}

#[test]
fn float_sums_forget_what_left_the_window() {
    // 1e40 and 1e20 pass through: a running sum that subtracted them kept their residue
    // and gave 0.0 for every later window of ones.
    let mut values = vec![1e40, 1e20];
    values.extend(std::iter::repeat_n(1.0, 1000));
    let ts = Int64Array::from_iter_values(0..values.len() as i64);
    let v = Float64Array::from(values.clone());
    for (aggregation, want) in [(Aggregation::Sum, 5.0), (Aggregation::Mean, 1.0)] {
        let out = rolling(None, &ts, &v, 5, Closed::Right, aggregation, 1).unwrap();
        let out = out.as_primitive::<Float64Type>().values();
        assert!(
            out[10..].iter().all(|&x| x == want),
            "{aggregation:?}: {:?}",
            &out[..12]
        );
        let batch = hop_aggregate(None, &ts, &v, 5, 1, 0, aggregation, 1).unwrap();
        let hop = batch.column(2).as_primitive::<Float64Type>().values();
        assert!(
            hop[10..hop.len() - 10].iter().all(|&x| x == want),
            "{aggregation:?}"
        );
    }
    // Mixed magnitudes and signs: each window equals the exact sum of its own values.
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 11
    };
    let values: Vec<f64> = (0..5_000)
        .map(|_| {
            let magnitude =
                [5e-324, 1e-300, 1.0, 1e15, 1e150, 1e300, 1.7e305][(next() % 7) as usize];
            ((next() % 2001) as f64 - 1000.0) * magnitude
        })
        .collect();
    let ts = Int64Array::from_iter_values(0..values.len() as i64);
    let out = rolling(
        None,
        &ts,
        &Float64Array::from(values.clone()),
        7,
        Closed::Right,
        Aggregation::Sum,
        1,
    )
    .unwrap();
    let out = out.as_primitive::<Float64Type>().values();
    for (row, &got) in out.iter().enumerate() {
        let window = &values[row.saturating_sub(6)..=row];
        let exact = super::reference::exact_sum(window);
        assert_eq!(
            got.to_bits(),
            exact.to_bits(),
            "row {row}: {got} against {exact}: {window:?}"
        );
    }
}

#[test]
fn float_sums_are_correctly_rounded_where_compensation_is_not() {
    // A compensated (Kahan-Babuska-Neumaier) sum lost 1e200 here: its error bound grows
    // with eps^2 times the sum of magnitudes.
    let values = vec![-1e300, -1.7e308, 1.7e308, 1e300, 1e200];
    let ts = Int64Array::from(vec![0; 5]);
    let v = Float64Array::from(values);
    let sum = rolling(None, &ts, &v, 1, Closed::Right, Aggregation::Sum, 1).unwrap();
    assert_eq!(sum.as_primitive::<Float64Type>().value(4), 1e200);
    let mean = rolling(None, &ts, &v, 1, Closed::Right, Aggregation::Mean, 1).unwrap();
    assert_eq!(mean.as_primitive::<Float64Type>().value(4), 1e200 / 5.0);
    // Ties between two doubles round to even; a tiny remainder decides them.
    let v = Float64Array::from(vec![1.0, f64::EPSILON / 2.0, 5e-324]);
    let ts = Int64Array::from(vec![0, 0, 1]);
    let sum = rolling(None, &ts, &v, 2, Closed::Right, Aggregation::Sum, 1).unwrap();
    let sum = sum.as_primitive::<Float64Type>();
    assert_eq!(sum.value(0), 1.0);
    assert_eq!(sum.value(2), 1.0 + f64::EPSILON);
}
