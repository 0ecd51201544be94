//! Point-in-time features against a naive O(spine x events) reference on random data
//! (unsorted, duplicate, pre-1970 and extreme times, nulls in keys, times and values,
//! integer, string and struct keys, extreme values), for threads 1, 2 and 3, and unit
//! tests of each documented boundary.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, Int32Array, Int64Array, StringArray, StructArray,
    TimestampMicrosecondArray, TimestampSecondArray,
};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use proptest::prelude::*;

use super::*;
use crate::kernels::ErrorKind;

const ALL: [PitAggregation; 7] = [
    PitAggregation::Last,
    PitAggregation::First,
    PitAggregation::Sum,
    PitAggregation::Count,
    PitAggregation::Mean,
    PitAggregation::Min,
    PitAggregation::Max,
];

fn ints(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

fn floats(v: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from(v.to_vec()))
}

fn opts(closed: Closed, ttl: Option<i64>, threads: usize) -> PointInTimeOptions {
    PointInTimeOptions {
        closed,
        ttl,
        threads,
        null_keys_match: false,
        created_cutoff: false,
    }
}

fn i64s(a: &ArrayRef) -> Vec<Option<i64>> {
    a.as_primitive::<Int64Type>().iter().collect()
}

fn f64s(a: &ArrayRef) -> Vec<Option<f64>> {
    a.as_primitive::<Float64Type>().iter().collect()
}

/// As-of of one Int64 column, keyed by Int64, times Int64 ns.
#[allow(clippy::type_complexity)]
fn as_of(
    spine: (&[Option<i64>], &[Option<i64>]),
    events: (&[Option<i64>], &[Option<i64>], &[Option<i64>]),
    created: Option<&[Option<i64>]>,
    options: PointInTimeOptions,
) -> Vec<Option<i64>> {
    let created = created.map(ints);
    let out = point_in_time(
        Some(&ints(spine.0)),
        ints(spine.1).as_ref(),
        Some(&ints(events.0)),
        ints(events.1).as_ref(),
        created.as_deref(),
        &[ints(events.2)],
        &[PointInTimeFeature::as_of(0)],
        &options,
    )
    .unwrap();
    i64s(&out[0])
}

#[test]
fn as_of_sees_events_at_or_before_the_spine_time() {
    let events = (
        &[Some(1), Some(1), Some(1), Some(2)][..],
        &[Some(10), Some(20), Some(30), Some(5)][..],
        &[Some(100), Some(200), Some(300), Some(900)][..],
    );
    let spine = (
        &[Some(1), Some(1), Some(1), Some(2), Some(3), Some(1)][..],
        &[Some(20), Some(25), Some(9), Some(100), Some(100), None][..],
    );
    let right = as_of(spine, events, None, opts(Closed::Right, None, 1));
    assert_eq!(right, [Some(200), Some(200), None, Some(900), None, None]);
    // Exact matches excluded: strictly before the spine time.
    let left = as_of(spine, events, None, opts(Closed::Left, None, 1));
    assert_eq!(left, [Some(100), Some(200), None, Some(900), None, None]);
}

#[test]
fn ttl_boundary_is_inclusive_as_in_feast() {
    // Feast (dask offline store, `_filter_ttl`): event_ts >= entity_ts - ttl.
    let events = (&[Some(1)][..], &[Some(100)][..], &[Some(7)][..]);
    let spine = (
        &[Some(1), Some(1), Some(1)][..],
        &[Some(110), Some(111), Some(100)][..],
    );
    let out = as_of(spine, events, None, opts(Closed::Right, Some(10), 1));
    assert_eq!(out, [Some(7), None, Some(7)]);
    // TTL 0: only events at exactly t.
    let out = as_of(spine, events, None, opts(Closed::Right, Some(0), 1));
    assert_eq!(out, [None, None, Some(7)]);
    // TTL bounds windowed aggregates too.
    let out = point_in_time(
        Some(&ints(&[Some(1), Some(1)])),
        ints(&[Some(110), Some(111)]).as_ref(),
        Some(&ints(&[Some(1)])),
        ints(&[Some(100)]).as_ref(),
        None,
        &[ints(&[Some(7)])],
        &[PointInTimeFeature::window(0, PitAggregation::Count, 1000)],
        &opts(Closed::Right, Some(10), 1),
    )
    .unwrap();
    assert_eq!(i64s(&out[0]), [Some(1), Some(0)]);
}

#[test]
fn ties_go_to_the_latest_created_time_then_the_greatest_value() {
    let keys = [Some(1); 4];
    let ts = [Some(10); 4];
    let values = [Some(1), Some(2), Some(3), Some(4)];
    let spine = (&[Some(1)][..], &[Some(10)][..]);
    // Created: row 1 is the latest; a null created time loses.
    let created = [Some(5), Some(9), None, Some(7)];
    let out = as_of(
        spine,
        (&keys, &ts, &values),
        Some(&created),
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [Some(2)]);
    // Equal created times: the greatest value.
    let created = [Some(9), Some(9), Some(1), Some(9)];
    let out = as_of(
        spine,
        (&keys, &ts, &values),
        Some(&created),
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [Some(4)]);
    // No created column: the greatest value, wherever its row is.
    let out = as_of(
        spine,
        (&keys, &ts, &values),
        None,
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [Some(4)]);
    // The same events in another order: the same value (the greatest, not the last row).
    let out = as_of(
        spine,
        (&keys, &ts, &[Some(4), Some(2), Some(3), Some(1)]),
        None,
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [Some(4)]);
    // A later event time wins whatever its created time.
    let out = as_of(
        spine,
        (&keys, &[Some(9), Some(10), Some(9), Some(9)], &values),
        Some(&[Some(99), Some(1), Some(99), Some(99)]),
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [Some(2)]);
}

#[test]
fn created_cutoff_hides_events_created_later() {
    let keys = [Some(1); 3];
    let ts = [Some(5), Some(3), Some(8)];
    let values = [Some(1), Some(2), Some(3)];
    // Created at 12, at 4, never.
    let created = [Some(12), Some(4), None];
    let spine = (&[Some(1), Some(1)][..], &[Some(10), Some(12)][..]);
    let cut = |closed| PointInTimeOptions {
        created_cutoff: true,
        ..opts(closed, None, 1)
    };
    let events = (&keys[..], &ts[..], &values[..]);
    let plain = as_of(spine, events, Some(&created), opts(Closed::Right, None, 1));
    assert_eq!(plain, [Some(3), Some(3)]);
    // At 10 only the event created at 4 exists; at 12 the one created at 12 too.
    assert_eq!(
        as_of(spine, events, Some(&created), cut(Closed::Right)),
        [Some(2), Some(1)]
    );
    // Strictly before the spine time, for the created time as for the event time.
    assert_eq!(
        as_of(spine, events, Some(&created), cut(Closed::Left)),
        [Some(2), Some(2)]
    );
    // The TTL still applies to the event time of the event chosen: 3 at 10, 5 at 12.
    let ttl = |ttl| PointInTimeOptions {
        ttl: Some(ttl),
        ..cut(Closed::Right)
    };
    assert_eq!(
        as_of(spine, events, Some(&created), ttl(7)),
        [Some(2), Some(1)]
    );
    assert_eq!(as_of(spine, events, Some(&created), ttl(6)), [None, None]);
}

#[test]
fn as_of_returns_the_latest_row_even_if_its_value_is_null() {
    let out = as_of(
        (&[Some(1)], &[Some(50)]),
        (&[Some(1), Some(1)], &[Some(10), Some(20)], &[Some(5), None]),
        None,
        opts(Closed::Right, None, 1),
    );
    assert_eq!(out, [None]);
}

#[test]
fn null_keys_match_nothing_unless_asked() {
    let spine = (&[None, Some(1)][..], &[Some(50), Some(50)][..]);
    let events = (
        &[None, Some(1)][..],
        &[Some(10), Some(10)][..],
        &[Some(5), Some(6)][..],
    );
    let out = as_of(spine, events, None, opts(Closed::Right, None, 1));
    assert_eq!(out, [None, Some(6)]);
    let mut o = opts(Closed::Right, None, 1);
    o.null_keys_match = true;
    assert_eq!(as_of(spine, events, None, o), [Some(5), Some(6)]);
}

#[test]
fn windows_at_spine_times_with_every_aggregate() {
    // Events of key "a" at 1..=5 with values 1..=5, one key "b" event, a null value.
    let event_keys: ArrayRef = Arc::new(StringArray::from(vec!["a", "a", "a", "a", "a", "b", "a"]));
    let event_ts = ints(&[
        Some(5),
        Some(1),
        Some(3),
        Some(2),
        Some(4),
        Some(3),
        Some(3),
    ]);
    let values = ints(&[Some(5), Some(1), Some(3), Some(2), Some(4), Some(100), None]);
    let spine_keys: ArrayRef = Arc::new(StringArray::from(vec![
        Some("a"),
        Some("a"),
        Some("c"),
        None,
    ]));
    let spine_ts = ints(&[Some(4), Some(100), Some(4), Some(4)]);
    let features: Vec<_> = ALL
        .iter()
        .map(|&a| PointInTimeFeature::window(0, a, 3))
        .collect();
    let out = point_in_time(
        Some(&spine_keys),
        spine_ts.as_ref(),
        Some(&event_keys),
        event_ts.as_ref(),
        None,
        &[values],
        &features,
        &PointInTimeOptions::default(),
    )
    .unwrap();
    // Spine "a" at 4: window (1, 4] holds times 2, 3, 3, 4 with values 2, 3, null, 4.
    assert_eq!(i64s(&out[0]), [Some(4), None, None, None]); // last
    assert_eq!(i64s(&out[1]), [Some(2), None, None, None]); // first
    assert_eq!(i64s(&out[2]), [Some(9), None, None, None]); // sum
    assert_eq!(i64s(&out[3]), [Some(3), Some(0), Some(0), Some(0)]); // count
    assert_eq!(f64s(&out[4]), [Some(3.0), None, None, None]); // mean
    assert_eq!(i64s(&out[5]), [Some(2), None, None, None]); // min
    assert_eq!(i64s(&out[6]), [Some(4), None, None, None]); // max
    for (a, f) in ALL.iter().zip(&features) {
        assert_eq!(
            out[ALL.iter().position(|x| x == a).unwrap()].data_type(),
            &a.output_type(&DataType::Int64)
        );
        let _ = f;
    }
}

#[test]
fn as_of_keeps_any_value_type_and_struct_keys_work() {
    let key = |a: Vec<Option<i32>>, b: Vec<Option<&str>>| -> ArrayRef {
        Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("a", DataType::Int32, true)),
                Arc::new(Int32Array::from(a)) as ArrayRef,
            ),
            (
                Arc::new(Field::new("b", DataType::Utf8, true)),
                Arc::new(StringArray::from(b)) as ArrayRef,
            ),
        ]))
    };
    let event_keys = key(
        vec![Some(1), Some(1), Some(2), None],
        vec![Some("x"), Some("y"), Some("x"), Some("x")],
    );
    let spine_keys = key(
        vec![Some(1), Some(1), Some(2), Some(3), None],
        vec![Some("y"), Some("x"), Some("x"), Some("x"), Some("x")],
    );
    let names: ArrayRef = Arc::new(StringArray::from(vec!["one-x", "one-y", "two-x", "null-x"]));
    let out = point_in_time(
        Some(&spine_keys),
        ints(&[Some(9); 5]).as_ref(),
        Some(&event_keys),
        ints(&[Some(1); 4]).as_ref(),
        None,
        &[names],
        &[PointInTimeFeature::as_of(0)],
        &PointInTimeOptions::default(),
    )
    .unwrap();
    let got: Vec<Option<&str>> = out[0].as_string::<i32>().iter().collect();
    assert_eq!(
        got,
        [Some("one-y"), Some("one-x"), Some("two-x"), None, None]
    );
}

#[test]
fn times_of_different_units_and_before_1970() {
    // Spine in seconds, events in microseconds, before 1970.
    let spine_ts: ArrayRef = Arc::new(TimestampSecondArray::from(vec![-10, -1]));
    let event_ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
        -10_000_000,
        -5_000_000,
        -1,
    ]));
    let out = point_in_time(
        None,
        spine_ts.as_ref(),
        None,
        event_ts.as_ref(),
        None,
        &[ints(&[Some(1), Some(2), Some(3)])],
        &[
            PointInTimeFeature::as_of(0),
            PointInTimeFeature::window(0, PitAggregation::Sum, 5_000_000_000),
        ],
        &PointInTimeOptions::default(),
    )
    .unwrap();
    assert_eq!(i64s(&out[0]), [Some(1), Some(2)]);
    // At -1s: (-6s, -1s] holds -5s only (the event at -1us is after -1s).
    assert_eq!(i64s(&out[1]), [Some(1), Some(2)]);
}

#[test]
fn windows_reaching_below_i64_min_start_at_the_first_event() {
    let out = point_in_time(
        None,
        ints(&[Some(i64::MIN + 5), Some(i64::MAX)]).as_ref(),
        None,
        ints(&[Some(i64::MIN), Some(i64::MIN + 5), Some(0), Some(i64::MAX)]).as_ref(),
        None,
        &[ints(&[Some(1), Some(2), Some(4), Some(8)])],
        &[
            PointInTimeFeature::window(0, PitAggregation::Sum, i64::MAX),
            PointInTimeFeature::window(0, PitAggregation::Sum, 10),
            PointInTimeFeature {
                value: 0,
                aggregation: PitAggregation::Sum,
                period: None,
            },
        ],
        &opts(Closed::Right, Some(i64::MAX), 1),
    )
    .unwrap();
    // At MIN + 5, (MIN + 5 - MAX, MIN + 5] reaches below i64::MIN: both early events.
    // At MAX, (0, MAX] holds MAX only.
    assert_eq!(i64s(&out[0]), [Some(3), Some(8)]);
    assert_eq!(i64s(&out[1]), [Some(3), Some(8)]);
    // TTL MAX: at MAX, [0, MAX] holds 0 and MAX.
    assert_eq!(i64s(&out[2]), [Some(3), Some(12)]);
}

#[test]
fn integer_overflow_is_an_error_float_sums_are_not() {
    let run = |values: ArrayRef| {
        point_in_time(
            None,
            ints(&[Some(10)]).as_ref(),
            None,
            ints(&[Some(1), Some(2)]).as_ref(),
            None,
            &[values],
            &[PointInTimeFeature::window(0, PitAggregation::Sum, 100)],
            &PointInTimeOptions::default(),
        )
    };
    let e = run(ints(&[Some(i64::MAX), Some(1)])).unwrap_err();
    assert_eq!(e.function, "point_in_time");
    assert!(e.message.contains("Int64 range"), "{e}");
    let out = run(floats(&[Some(f64::MAX), Some(-f64::MAX)])).unwrap();
    assert_eq!(f64s(&out[0]), [Some(0.0)]);
}

#[test]
fn errors_name_the_argument() {
    let k = ints(&[Some(1)]);
    let t = ints(&[Some(1)]);
    let v = [ints(&[Some(1)])];
    let f = [PointInTimeFeature::as_of(0)];
    let o = PointInTimeOptions::default();
    let err = |r: Result<Vec<ArrayRef>>| r.unwrap_err();
    let strings: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
    let e = err(point_in_time(
        Some(&k),
        t.as_ref(),
        Some(&strings),
        t.as_ref(),
        None,
        &v,
        &f,
        &o,
    ));
    assert_eq!(
        (e.argument.as_str(), e.kind),
        ("event_keys", ErrorKind::WrongType)
    );
    assert!(
        e.message.contains("Int64") && e.message.contains("Utf8"),
        "{e}"
    );
    let e = err(point_in_time(
        Some(&k),
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        &v,
        &f,
        &o,
    ));
    assert_eq!(e.argument, "event_keys");
    let two = ints(&[Some(1), Some(2)]);
    let e = err(point_in_time(
        Some(&k),
        t.as_ref(),
        Some(&two),
        t.as_ref(),
        None,
        &v,
        &f,
        &o,
    ));
    assert_eq!(e.argument, "event_keys");
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        std::slice::from_ref(&two),
        &f,
        &o,
    ));
    assert_eq!(e.argument, "event_values[0]");
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        Some(two.as_ref()),
        &v,
        &f,
        &o,
    ));
    assert_eq!(e.argument, "event_created");
    let e = err(point_in_time(
        None,
        strings.as_ref(),
        None,
        t.as_ref(),
        None,
        &v,
        &f,
        &o,
    ));
    assert_eq!(
        (e.argument.as_str(), e.kind),
        ("spine_ts", ErrorKind::WrongType)
    );
    let bad = [PointInTimeFeature::as_of(3)];
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        &v,
        &bad,
        &o,
    ));
    assert_eq!(e.argument, "features[0].value");
    let bad = [PointInTimeFeature::window(0, PitAggregation::Sum, 0)];
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        &v,
        &bad,
        &o,
    ));
    assert_eq!(e.argument, "features[0].period");
    let bad_ttl = opts(Closed::Right, Some(-1), 1);
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        &v,
        &f,
        &bad_ttl,
    ));
    assert_eq!(e.argument, "ttl");
    let sum = [PointInTimeFeature::window(0, PitAggregation::Sum, 5)];
    let e = err(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        std::slice::from_ref(&strings),
        &sum,
        &o,
    ));
    assert_eq!(
        (e.argument.as_str(), e.kind),
        ("event_values[0]", ErrorKind::WrongType)
    );
    // Strings can be counted and picked.
    let ok = [
        PointInTimeFeature::window(0, PitAggregation::Count, 5),
        PointInTimeFeature::window(0, PitAggregation::First, 5),
    ];
    assert!(point_in_time(
        None,
        t.as_ref(),
        None,
        t.as_ref(),
        None,
        &[strings],
        &ok,
        &o
    )
    .is_ok());
}

#[test]
fn created_cutoff_needs_created_times_and_as_of_values() {
    let k = ints(&[Some(1)]);
    let t = ints(&[Some(1)]);
    let options = PointInTimeOptions {
        created_cutoff: true,
        ..opts(Closed::Right, None, 1)
    };
    let call = |created: Option<&dyn Array>, features: &[PointInTimeFeature]| {
        point_in_time(
            Some(&k),
            t.as_ref(),
            Some(&k),
            t.as_ref(),
            created,
            std::slice::from_ref(&t),
            features,
            &options,
        )
        .unwrap_err()
        .to_string()
    };
    let e = call(None, &[PointInTimeFeature::as_of(0)]);
    assert!(
        e.contains("argument `event_created`: expected a created time column"),
        "{e}"
    );
    // Integer created times beside timestamp spine times: refused, not compared as ns.
    let stamps: ArrayRef = Arc::new(arrow::array::TimestampSecondArray::from(vec![100]));
    let e = point_in_time(
        Some(&k),
        stamps.as_ref(),
        Some(&k),
        stamps.as_ref(),
        Some(t.as_ref()),
        std::slice::from_ref(&t),
        &[PointInTimeFeature::as_of(0)],
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("argument `event_created`: expected created times of the kind of `spine_ts`"),
        "{e}"
    );
    let window = PointInTimeFeature::window(0, PitAggregation::Sum, 60_000_000_000);
    let e = call(Some(t.as_ref()), &[PointInTimeFeature::as_of(0), window]);
    assert!(
        e.contains("argument `features[1]`: expected only as-of values with `created_cutoff`, found `sum` over 1m"),
        "{e}"
    );
}

#[test]
fn names_say_what_features_are() {
    assert_eq!(PointInTimeFeature::as_of(0).name("amount"), "amount");
    let f = PointInTimeFeature::window(0, PitAggregation::Sum, 300_000_000_000);
    assert_eq!(f.name("amount"), "amount_sum_5m");
    let f = PointInTimeFeature {
        value: 0,
        aggregation: PitAggregation::Count,
        period: None,
    };
    assert_eq!(f.name("amount"), "amount_count");
    assert_eq!(
        PitAggregation::parse("f", "agg", "AsOf").unwrap(),
        PitAggregation::Last
    );
    assert_eq!(
        PitAggregation::parse("f", "agg", "avg").unwrap(),
        PitAggregation::Mean
    );
    let e = PitAggregation::parse("f", "agg", "median").unwrap_err();
    assert!(e.message.contains("last, first, sum"), "{e}");
}

/// One key holding most events and spine rows: split over threads, same results bit for
/// bit (float sums included) as on one thread.
#[test]
fn a_skewed_key_is_split_over_threads_with_identical_results() {
    let n = 20_000;
    let mut keys = Vec::new();
    let mut ts = Vec::new();
    let mut values = Vec::new();
    let mut state = 12345u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..n {
        let r = next();
        keys.push(Some(if r % 3 == 0 { (r % 50) as i64 } else { 7 }));
        ts.push(Some((next() % 100_000) as i64 - 50_000));
        values.push(Some(if i % 97 == 0 {
            1e16
        } else {
            (next() % 1000) as f64 * 0.1
        }));
    }
    let spine_keys: Vec<_> = (0..n / 2)
        .map(|i| Some(if i % 4 == 0 { (i % 50) as i64 } else { 7 }))
        .collect();
    let spine_ts: Vec<_> = (0..n / 2)
        .map(|_| Some((next() % 120_000) as i64 - 60_000))
        .collect();
    let features: Vec<_> = [None, Some(100), Some(5_000)]
        .into_iter()
        .flat_map(|period| {
            ALL.iter().map(move |&a| PointInTimeFeature {
                value: 0,
                aggregation: a,
                period,
            })
        })
        .collect();
    let run = |threads| {
        point_in_time(
            Some(&ints(&spine_keys)),
            ints(&spine_ts).as_ref(),
            Some(&ints(&keys)),
            ints(&ts).as_ref(),
            None,
            &[floats(&values)],
            &features,
            &opts(Closed::Both, Some(40_000), threads),
        )
        .unwrap()
    };
    let one = run(1);
    for threads in [2, 3, 8] {
        assert_same(&one, &run(threads));
    }
}

/// Equal arrays, floats compared bit for bit.
fn assert_same(a: &[ArrayRef], b: &[ArrayRef]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        if x.data_type() == &DataType::Float64 {
            let bits = |a: &ArrayRef| -> Vec<Option<u64>> {
                f64s(a).iter().map(|v| v.map(f64::to_bits)).collect()
            };
            assert_eq!(bits(x), bits(y));
        } else {
            assert_eq!(x.to_data(), y.to_data());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Property tests against a naive reference.

#[derive(Debug, Clone, Copy, PartialEq)]
enum KeyKind {
    Int,
    Str,
    Struct,
}

/// A key: two parts (the struct key uses both; int and string keys only the first).
type Key = (Option<i64>, Option<i64>);

#[derive(Debug, Clone)]
struct Case {
    kind: KeyKind,
    spine_keys: Vec<Key>,
    spine_ts: Vec<Option<i64>>,
    event_keys: Vec<Key>,
    event_ts: Vec<Option<i64>>,
    created: Option<Vec<Option<i64>>>,
    ints: Vec<Option<i64>>,
    floats: Vec<Option<f64>>,
    closed: Closed,
    ttl: Option<i64>,
    periods: Vec<Option<i64>>,
    null_keys_match: bool,
}

fn time() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        10 => (-40i64..40).prop_map(Some),
        2 => (-3_000_000_000_000i64..3_000_000_000_000).prop_map(Some),
        1 => prop_oneof![Just(i64::MIN), Just(i64::MIN + 1), Just(i64::MAX), Just(i64::MAX - 1)].prop_map(Some),
        2 => Just(None),
    ]
}

fn key() -> impl Strategy<Value = Key> {
    let part = || prop_oneof![8 => (0i64..3).prop_map(Some), 1 => Just(None)];
    (part(), part())
}

fn int_value() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        10 => (-1000i64..1000).prop_map(Some),
        2 => Just(None),
        1 => prop_oneof![Just(i64::MIN), Just(i64::MAX)].prop_map(Some),
    ]
}

fn float_value() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        10 => (-1e6f64..1e6).prop_map(Some),
        2 => Just(None),
        2 => prop_oneof![
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(-0.0),
            Just(1e300),
            Just(5e-324),
        ]
        .prop_map(Some),
    ]
}

fn period() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        Just(None),
        (1i64..50).prop_map(Some),
        Just(Some(1_000_000_000_000)),
        Just(Some(i64::MAX)),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (0usize..25, 0usize..50).prop_flat_map(|(s, e)| {
        (
            (
                prop_oneof![
                    Just(KeyKind::Int),
                    Just(KeyKind::Str),
                    Just(KeyKind::Struct)
                ],
                proptest::collection::vec(key(), s),
                proptest::collection::vec(time(), s),
                proptest::collection::vec(key(), e),
                proptest::collection::vec(time(), e),
                proptest::option::of(proptest::collection::vec(
                    prop_oneof![4 => (0i64..3).prop_map(Some), 1 => Just(None)],
                    e,
                )),
            ),
            (
                proptest::collection::vec(int_value(), e),
                proptest::collection::vec(float_value(), e),
                prop_oneof![
                    Just(Closed::Right),
                    Just(Closed::Left),
                    Just(Closed::Both),
                    Just(Closed::Neither)
                ],
                prop_oneof![Just(None), (0i64..30).prop_map(Some), Just(Some(i64::MAX))],
                proptest::collection::vec(period(), 1..4),
                any::<bool>(),
            ),
        )
            .prop_map(
                |(
                    (kind, spine_keys, spine_ts, event_keys, event_ts, created),
                    (ints, floats, closed, ttl, periods, null_keys_match),
                )| Case {
                    kind,
                    spine_keys,
                    spine_ts,
                    event_keys,
                    event_ts,
                    created,
                    ints,
                    floats,
                    closed,
                    ttl,
                    periods,
                    null_keys_match,
                },
            )
    })
}

fn key_array(kind: KeyKind, keys: &[Key]) -> ArrayRef {
    match kind {
        KeyKind::Int => ints(&keys.iter().map(|k| k.0).collect::<Vec<_>>()),
        KeyKind::Str => Arc::new(StringArray::from(
            keys.iter()
                .map(|k| k.0.map(|v| format!("key-{v}")))
                .collect::<Vec<_>>(),
        )),
        KeyKind::Struct => Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("a", DataType::Int64, true)),
                ints(&keys.iter().map(|k| k.0).collect::<Vec<_>>()),
            ),
            (
                Arc::new(Field::new("b", DataType::Utf8, true)),
                Arc::new(StringArray::from(
                    keys.iter()
                        .map(|k| k.1.map(|v| v.to_string()))
                        .collect::<Vec<_>>(),
                )) as ArrayRef,
            ),
        ])),
    }
}

impl Case {
    fn key_matches(&self, s: usize, e: usize) -> bool {
        let (a, b) = (self.spine_keys[s], self.event_keys[e]);
        let (a, b) = match self.kind {
            KeyKind::Struct => (a, b),
            _ => ((a.0, None), (b.0, None)),
        };
        let has_null = |k: Key| k.0.is_none() || (self.kind == KeyKind::Struct && k.1.is_none());
        if !self.null_keys_match && (has_null(a) || has_null(b)) {
            return false;
        }
        a == b
    }

    fn visible(&self, t: i64, e: i64, period: Option<i64>) -> bool {
        let (t, e) = (t as i128, e as i128);
        let upper = match self.closed {
            Closed::Right | Closed::Both => e <= t,
            _ => e < t,
        };
        let lower = period.is_none_or(|p| {
            let oldest = t - p as i128;
            match self.closed {
                Closed::Left | Closed::Both => e >= oldest,
                _ => e > oldest,
            }
        });
        let ttl = self.ttl.is_none_or(|l| e >= t - l as i128);
        upper && lower && ttl
    }

    /// Events visible at spine row `s`, in (time, created, row) order; `None` for a null
    /// spine time.
    fn window(&self, s: usize, period: Option<i64>) -> Option<Vec<usize>> {
        let t = self.spine_ts[s]?;
        let mut rows: Vec<usize> = (0..self.event_ts.len())
            .filter(|&e| {
                self.event_ts[e].is_some_and(|u| self.visible(t, u, period))
                    && self.key_matches(s, e)
            })
            .collect();
        rows.sort_by_key(|&e| self.order(e));
        Some(rows)
    }

    /// The order of events with equal keys: time, created time, then the values (null
    /// lowest, floats in IEEE 754 total order), then the row.
    fn order(&self, e: usize) -> (Option<i64>, Option<i64>, Option<i64>, Option<i64>, usize) {
        let created = self.created.as_ref().and_then(|c| c[e]);
        let total = |f: f64| {
            let bits = f.to_bits() as i64;
            bits ^ (((bits >> 63) as u64) >> 1) as i64
        };
        (
            self.event_ts[e],
            created,
            self.ints[e],
            self.floats[e].map(total),
            e,
        )
    }

    fn run(&self, features: &[PointInTimeFeature], threads: usize) -> Result<Vec<ArrayRef>> {
        self.run_with(features, threads, false)
    }

    fn run_with(
        &self,
        features: &[PointInTimeFeature],
        threads: usize,
        created_cutoff: bool,
    ) -> Result<Vec<ArrayRef>> {
        let created = self.created.as_ref().map(|c| ints(c));
        point_in_time(
            Some(&key_array(self.kind, &self.spine_keys)),
            ints(&self.spine_ts).as_ref(),
            Some(&key_array(self.kind, &self.event_keys)),
            ints(&self.event_ts).as_ref(),
            created.as_deref(),
            &[ints(&self.ints), floats(&self.floats)],
            features,
            &PointInTimeOptions {
                closed: self.closed,
                ttl: self.ttl,
                threads,
                null_keys_match: self.null_keys_match,
                created_cutoff,
            },
        )
    }
}

/// Whether a float result is the expected one: equal (NaN equal to NaN, -0.0 to 0.0).
fn float_close(expected: Option<f64>, found: Option<f64>) -> bool {
    match (expected, found) {
        (None, None) => true,
        (Some(a), Some(b)) if a.is_nan() || b.is_nan() => a.is_nan() && b.is_nan(),
        (Some(a), Some(b)) if a.is_infinite() || b.is_infinite() => a == b,
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Reference float sum or mean, rounded once.
fn reference_float(values: &[f64], mean: bool) -> f64 {
    crate::kernels::window::reference::float_reference(values, mean)
}

fn check(
    case: &Case,
    features: &[PointInTimeFeature],
    out: &[ArrayRef],
) -> std::result::Result<(), TestCaseError> {
    for (f, array) in features.iter().zip(out) {
        for s in 0..case.spine_ts.len() {
            let window = case.window(s, f.period);
            let float = f.value == 1;
            let what = format!("{f:?} at spine row {s}, window {window:?}");
            let Some(rows) = window else {
                prop_assert!(
                    array.is_null(s),
                    "{what}: expected null for a null spine time"
                );
                continue;
            };
            let int_values: Vec<i64> = rows.iter().filter_map(|&e| case.ints[e]).collect();
            let float_values: Vec<f64> = rows.iter().filter_map(|&e| case.floats[e]).collect();
            let n = if float {
                float_values.len()
            } else {
                int_values.len()
            };
            match f.aggregation {
                PitAggregation::Last | PitAggregation::First => {
                    let pick = if f.aggregation == PitAggregation::Last {
                        rows.last()
                    } else {
                        rows.first()
                    };
                    if float {
                        let expected = pick.and_then(|&e| case.floats[e]).map(f64::to_bits);
                        let found = (!array.is_null(s))
                            .then(|| array.as_primitive::<Float64Type>().value(s).to_bits());
                        prop_assert_eq!(expected, found, "{}", what);
                    } else {
                        let expected = pick.and_then(|&e| case.ints[e]);
                        let found =
                            (!array.is_null(s)).then(|| array.as_primitive::<Int64Type>().value(s));
                        prop_assert_eq!(expected, found, "{}", what);
                    }
                }
                PitAggregation::Count => {
                    prop_assert_eq!(
                        Some(n as i64),
                        (!array.is_null(s)).then(|| array.as_primitive::<Int64Type>().value(s)),
                        "{}",
                        what
                    );
                }
                agg => {
                    let found_f = || {
                        (!array.is_null(s)).then(|| array.as_primitive::<Float64Type>().value(s))
                    };
                    let found_i =
                        || (!array.is_null(s)).then(|| array.as_primitive::<Int64Type>().value(s));
                    if n == 0 {
                        prop_assert!(
                            array.is_null(s),
                            "{what}: expected null for an empty window"
                        );
                        continue;
                    }
                    match (agg, float) {
                        (PitAggregation::Sum, false) => {
                            let sum: i128 = int_values.iter().map(|&v| v as i128).sum();
                            prop_assert_eq!(Some(sum as i64), found_i(), "{}", what);
                        }
                        (PitAggregation::Mean, false) => {
                            let sum: i128 = int_values.iter().map(|&v| v as i128).sum();
                            let expected =
                                crate::kernels::window::reference::integer_mean(sum, n as u64);
                            prop_assert_eq!(Some(expected), found_f(), "{}", what);
                        }
                        (PitAggregation::Sum | PitAggregation::Mean, true) => {
                            let expected =
                                reference_float(&float_values, agg == PitAggregation::Mean);
                            prop_assert!(
                                float_close(Some(expected), found_f()),
                                "{what}: expected {expected}, found {:?}",
                                found_f()
                            );
                        }
                        (PitAggregation::Min | PitAggregation::Max, false) => {
                            let expected = if agg == PitAggregation::Min {
                                int_values.iter().min()
                            } else {
                                int_values.iter().max()
                            };
                            prop_assert_eq!(expected.copied(), found_i(), "{}", what);
                        }
                        (PitAggregation::Min | PitAggregation::Max, true) => {
                            // NaN is the largest value.
                            let key = |v: &&f64| if v.is_nan() { f64::INFINITY } else { **v };
                            let order = |a: &&f64, b: &&f64| match (a.is_nan(), b.is_nan()) {
                                (true, true) => std::cmp::Ordering::Equal,
                                (true, false) => std::cmp::Ordering::Greater,
                                (false, true) => std::cmp::Ordering::Less,
                                _ => key(a).partial_cmp(&key(b)).unwrap(),
                            };
                            let expected = if agg == PitAggregation::Min {
                                float_values.iter().min_by(order)
                            } else {
                                float_values.iter().max_by(order)
                            };
                            prop_assert!(
                                float_close(expected.copied(), found_f()),
                                "{what}: expected {expected:?}, found {:?}",
                                found_f()
                            );
                        }
                        _ => unreachable!(),
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether some window's integer sum leaves the Int64 range.
fn int_sum_overflows(case: &Case, features: &[PointInTimeFeature]) -> bool {
    features
        .iter()
        .filter(|f| f.value == 0 && f.aggregation == PitAggregation::Sum)
        .any(|f| {
            (0..case.spine_ts.len()).any(|s| {
                case.window(s, f.period).is_some_and(|rows| {
                    let sum: i128 = rows
                        .iter()
                        .filter_map(|&e| case.ints[e])
                        .map(|v| v as i128)
                        .sum();
                    i64::try_from(sum).is_err()
                })
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_feature_equals_the_naive_reference(case in case()) {
        let mut features: Vec<PointInTimeFeature> = Vec::new();
        for &period in &case.periods {
            for value in 0..2 {
                for aggregation in ALL {
                    features.push(PointInTimeFeature { value, aggregation, period });
                }
            }
        }
        let overflow = int_sum_overflows(&case, &features);
        let first = case.run(&features, 1);
        if overflow {
            let e = first.unwrap_err();
            prop_assert!(e.message.contains("Int64 range"), "{}", e);
            features.retain(|f| !(f.value == 0 && f.aggregation == PitAggregation::Sum));
        }
        let one = case.run(&features, 1).unwrap();
        check(&case, &features, &one)?;
        for threads in [2, 3] {
            let other = case.run(&features, threads).unwrap();
            assert_same(&one, &other);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// As-of values alone take the path that does not sort the events: the same values
    /// as the reference and as the sorting path (forced by adding a window feature).
    #[test]
    fn as_of_alone_equals_the_reference_and_the_sorting_path(case in case()) {
        let features = [PointInTimeFeature::as_of(0), PointInTimeFeature::as_of(1)];
        let one = case.run(&features, 1).unwrap();
        check(&case, &features, &one)?;
        let mut with_window = features.to_vec();
        with_window.push(PointInTimeFeature::window(1, PitAggregation::Count, 7));
        let sorted = case.run(&with_window, 1).unwrap();
        assert_same(&one, &sorted[..2]);
        for threads in [2, 3] {
            assert_same(&one, &case.run(&features, threads).unwrap());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// With the created-time cutoff: the latest (time, created, values) among the key's
    /// events whose event and created times both pass the upper end, within the TTL.
    #[test]
    fn created_cutoff_equals_a_naive_reference(case in case()) {
        prop_assume!(case.created.is_some());
        let created = case.created.clone().unwrap_or_default();
        let features = [PointInTimeFeature::as_of(0)];
        let out = case.run_with(&features, 1, true).unwrap();
        for threads in [2, 3] {
            assert_same(&out, &case.run_with(&features, threads, true).unwrap());
        }
        for (s, &t) in case.spine_ts.iter().enumerate() {
            let expected = t.and_then(|t| {
                let passes = |u: i64| match case.closed {
                    Closed::Right | Closed::Both => u <= t,
                    _ => u < t,
                };
                let latest = (0..case.event_ts.len())
                    .filter(|&e| {
                        case.key_matches(s, e)
                            && case.event_ts[e].is_some_and(&passes)
                            && created[e].is_some_and(passes)
                    })
                    .max_by_key(|&e| case.order(e))?;
                let e = case.event_ts[latest]? as i128;
                case.ttl.is_none_or(|l| e >= t as i128 - l as i128).then_some(latest)
            });
            // (The chosen event's value may itself be null.)
            let found = i64s(&out[0])[s];
            prop_assert_eq!(found, expected.and_then(|e| case.ints[e]), "spine row {}", s);
        }
    }
}

/// Rough timing on a skewed key distribution (run with `--release --ignored --nocapture`;
/// block sizes are the test ones, smaller than in production builds).
#[test]
#[ignore]
fn timing_on_skewed_keys() {
    let (n_events, n_spine) = (2_000_000usize, 200_000usize);
    let mut next = crate::kernels::window::tests::xorshift(0x9e37_79b9_7f4a_7c15);
    // A third of the events on key 0, the rest over 10,000 keys.
    let key = |r: u64| {
        if r.is_multiple_of(3) {
            0
        } else {
            (r % 10_000) as i64
        }
    };
    let day = 86_400_000_000_000i64;
    let event_keys: Vec<Option<i64>> = (0..n_events).map(|_| Some(key(next()))).collect();
    let event_ts: Vec<Option<i64>> = (0..n_events)
        .map(|_| Some((next() % (30 * day as u64)) as i64))
        .collect();
    let columns: Vec<ArrayRef> = (0..3)
        .map(|_| {
            floats(
                &(0..n_events)
                    .map(|_| Some((next() % 10_000) as f64 / 7.0))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let spine_keys: Vec<Option<i64>> = (0..n_spine).map(|_| Some(key(next()))).collect();
    let spine_ts: Vec<Option<i64>> = (0..n_spine)
        .map(|_| Some((next() % (30 * day as u64)) as i64))
        .collect();
    let (sk, st, ek, et) = (
        ints(&spine_keys),
        ints(&spine_ts),
        ints(&event_keys),
        ints(&event_ts),
    );
    let as_of: Vec<_> = (0..3).map(PointInTimeFeature::as_of).collect();
    let periods = [300_000_000_000, 3_600_000_000_000, day, 7 * day];
    let windows: Vec<_> = periods
        .iter()
        .flat_map(|&p| {
            [
                PitAggregation::Sum,
                PitAggregation::Count,
                PitAggregation::Max,
            ]
            .map(|a| PointInTimeFeature::window(0, a, p))
        })
        .collect();
    for threads in [1, 2] {
        for (what, features) in [("as-of x3", &as_of), ("4 windows x 3 aggs", &windows)] {
            let start = std::time::Instant::now();
            point_in_time(
                Some(&sk),
                st.as_ref(),
                Some(&ek),
                et.as_ref(),
                None,
                &columns,
                features,
                &opts(Closed::Right, None, threads),
            )
            .unwrap();
            let s = start.elapsed().as_secs_f64();
            println!(
                "{what}, threads {threads}: {s:.3} s, {:.1} M events/s",
                n_events as f64 / s / 1e6
            );
        }
    }
}

#[test]
fn float_keys_match_negative_zero_to_zero_and_nan_to_nan() {
    // As in a Spark join after its float normalization: -0.0 = 0.0 and NaN = NaN.
    let spine_keys: ArrayRef = Arc::new(Float64Array::from(vec![-0.0, f64::NAN, 2.0]));
    let event_keys: ArrayRef = Arc::new(Float64Array::from(vec![
        0.0,
        f64::from_bits(f64::NAN.to_bits() | 7),
        -2.0,
    ]));
    let names: ArrayRef = Arc::new(StringArray::from(vec!["zero", "nan", "minus two"]));
    let out = point_in_time(
        Some(&spine_keys),
        ints(&[Some(9); 3]).as_ref(),
        Some(&event_keys),
        ints(&[Some(1); 3]).as_ref(),
        None,
        &[names],
        &[PointInTimeFeature::as_of(0)],
        &PointInTimeOptions::default(),
    )
    .unwrap();
    let got: Vec<Option<&str>> = out[0].as_string::<i32>().iter().collect();
    assert_eq!(got, [Some("zero"), Some("nan"), None]);
}

#[test]
fn columns_that_cannot_hold_a_missing_value_are_refused() {
    use arrow::array::RunArray;
    use arrow::datatypes::Int32Type;
    let plan: ArrayRef = Arc::new(
        RunArray::<Int32Type>::try_new(
            &Int32Array::from(vec![2]),
            &StringArray::from(vec!["gold"]),
        )
        .unwrap(),
    );
    let e = point_in_time(
        Some(&ints(&[Some(1), Some(2), Some(1)])),
        ints(&[Some(15), Some(15), Some(5)]).as_ref(),
        Some(&ints(&[Some(1), Some(1)])),
        ints(&[Some(10), Some(20)]).as_ref(),
        None,
        &[plan],
        &[PointInTimeFeature::as_of(0)],
        &PointInTimeOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("event_values[0]") && e.to_string().contains("missing value"),
        "{e}"
    );
}

/// Bytes keys of two layouts (a Parquet file read as views beside a pyarrow table of
/// `binary`) match equal values, as strings of two layouts do.
#[test]
fn bytes_keys_of_two_layouts_match() {
    use super::join::{comparable_keys, point_in_time_join, FeatureSpec, PointInTimeJoin};
    use arrow::array::{BinaryArray, LargeBinaryArray};
    use arrow::record_batch::RecordBatch;
    assert!(comparable_keys(&DataType::Binary, &DataType::LargeBinary));
    assert!(comparable_keys(&DataType::BinaryView, &DataType::Binary));
    assert!(!comparable_keys(&DataType::Binary, &DataType::Utf8));
    let spine = RecordBatch::try_from_iter([
        (
            "k",
            Arc::new(BinaryArray::from_vec(vec![b"a", b"b", b"\xff"])) as ArrayRef,
        ),
        ("t", ints(&[Some(10), Some(10), Some(10)])),
    ])
    .unwrap();
    let events = RecordBatch::try_from_iter([
        (
            "k",
            Arc::new(LargeBinaryArray::from_vec(vec![b"\xff", b"a"])) as ArrayRef,
        ),
        ("t", ints(&[Some(1), Some(2)])),
        ("v", floats(&[Some(1.5), Some(2.5)])),
    ])
    .unwrap();
    let join = PointInTimeJoin {
        spine_keys: vec!["k".into()],
        spine_time: "t".into(),
        event_keys: vec!["k".into()],
        event_time: "t".into(),
        event_created: None,
        features: vec![FeatureSpec::as_of("v")],
        options: PointInTimeOptions::default(),
        spelling: Default::default(),
    };
    let out = point_in_time_join(&spine, &events, &join).unwrap();
    let values = out.column(2).as_primitive::<Float64Type>();
    assert_eq!(
        values.iter().collect::<Vec<_>>(),
        vec![Some(2.5), None, Some(1.5)]
    );
}
