//! `point_in_time_join` on DataFrames: names, composite keys, spine order, errors.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};
use datafusion::prelude::SessionContext;

use super::*;
use crate::kernels::point_in_time::PitAggregation;

fn spine(ctx: &SessionContext) -> DataFrame {
    let batch = RecordBatch::try_from_iter(vec![
        (
            "user",
            Arc::new(StringArray::from(vec!["a", "b", "a", "c"])) as ArrayRef,
        ),
        (
            "shop",
            Arc::new(Int64Array::from(vec![1, 1, 2, 1])) as ArrayRef,
        ),
        (
            "label_time",
            Arc::new(TimestampMicrosecondArray::from(vec![400, 400, 400, 400])) as ArrayRef,
        ),
        (
            "label",
            Arc::new(Int64Array::from(vec![1, 0, 1, 0])) as ArrayRef,
        ),
    ])
    .unwrap();
    ctx.read_batch(batch).unwrap()
}

fn events(ctx: &SessionContext) -> DataFrame {
    let batch = RecordBatch::try_from_iter(vec![
        (
            "uid",
            Arc::new(StringArray::from(vec!["a", "a", "a", "b", "a"])) as ArrayRef,
        ),
        (
            "shop_id",
            Arc::new(Int64Array::from(vec![1, 1, 1, 1, 2])) as ArrayRef,
        ),
        (
            "ts",
            Arc::new(TimestampMicrosecondArray::from(vec![
                100, 300, 500, 399, 50,
            ])) as ArrayRef,
        ),
        (
            "amount",
            Arc::new(Float64Array::from(vec![1.0, 2.0, 4.0, 8.0, 16.0])) as ArrayRef,
        ),
        ("unused", Arc::new(Int64Array::from(vec![0; 5])) as ArrayRef),
    ])
    .unwrap();
    ctx.read_batch(batch).unwrap()
}

fn join() -> PointInTimeJoin {
    PointInTimeJoin::new(&["user", "shop"], "label_time", &["uid", "shop_id"], "ts")
        .feature(FeatureSpec::as_of("amount"))
        .feature(FeatureSpec::window("amount", PitAggregation::Sum, 250_000))
        .feature(FeatureSpec::window("amount", PitAggregation::Count, 250_000).named("n"))
}

#[tokio::test]
async fn spine_columns_then_one_column_per_feature() {
    let ctx = SessionContext::new();
    let out = point_in_time_join(spine(&ctx), events(&ctx), &join())
        .await
        .unwrap();
    let batches = out.collect().await.unwrap();
    let batch = concat_batches(&batches[0].schema(), &batches).unwrap();
    let names: Vec<_> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "user",
            "shop",
            "label_time",
            "label",
            "amount",
            "amount_sum_250us",
            "n"
        ]
    );
    let floats = |i: usize| -> Vec<Option<f64>> {
        batch
            .column(i)
            .as_primitive::<Float64Type>()
            .iter()
            .collect()
    };
    // (a, 1) at 400us: events at 100 and 300 (500 is later); window (150, 400]: 300.
    assert_eq!(floats(4), [Some(2.0), Some(8.0), Some(16.0), None]);
    assert_eq!(floats(5), [Some(2.0), Some(8.0), None, None]);
    let n: Vec<_> = batch.column(6).as_primitive::<Int64Type>().iter().collect();
    assert_eq!(n, [Some(1), Some(1), Some(0), Some(0)]);
    assert_eq!(batch.column(3).as_primitive::<Int64Type>().value(0), 1);
}

#[tokio::test]
async fn errors_name_the_argument_and_the_columns() {
    let ctx = SessionContext::new();
    let message = |r: Result<DataFrame>| r.unwrap_err().to_string();
    let mut j = join();
    j.event_time = "nope".into();
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(
        m.contains("point_in_time: argument `event_time`: expected a column `nope` in the events"),
        "{m}"
    );
    let mut j = join();
    j.event_keys = vec!["shop_id".into(), "uid".into()];
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(
        m.contains("expected event key `shop_id` of the type of spine key `user`"),
        "{m}"
    );
    let j = join().feature(FeatureSpec::as_of("label"));
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(m.contains("expected a column `label` in the events"), "{m}");
    let j = join().feature(FeatureSpec::as_of("amount"));
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(m.contains("`amount` twice"), "{m}");
    let j = join().ttl(Some(-5));
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(m.contains("argument `ttl`"), "{m}");
    // With the created cutoff: windows are refused by column, and created times must be
    // times of the spine's kind (`unused` holds integers beside a timestamp).
    let j = join().created("ts").created_cutoff(true);
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &j).await);
    assert!(
        m.contains("argument `features`: expected only as-of values with created_cutoff, found `sum` of `amount` over 250us"),
        "{m}"
    );
    // An as-of feature with the cutoff on `created`.
    let cutoff_on = |created: &str| {
        PointInTimeJoin::new(&["user", "shop"], "label_time", &["uid", "shop_id"], "ts")
            .feature(FeatureSpec::as_of("amount"))
            .created(created)
            .created_cutoff(true)
    };
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &cutoff_on("unused")).await);
    assert!(
        m.contains("argument `created`: expected created time `unused` of the kind of spine time `label_time`"),
        "{m}"
    );
    let m = message(point_in_time_join(spine(&ctx), events(&ctx), &cutoff_on("uid")).await);
    assert!(
        m.contains("argument `created`: expected created time `uid` to be a timestamp, a date or an integer (nanoseconds) with created_cutoff, found Utf8"),
        "{m}"
    );
}

#[test]
fn feature_text_forms() {
    let parse = |text: &str| FeatureSpec::parse(text);
    assert_eq!(parse("amount"), Ok(FeatureSpec::as_of("amount")));
    assert_eq!(
        parse(" amount : SUM : 5m "),
        Ok(FeatureSpec::window(
            "amount",
            PitAggregation::Sum,
            300_000_000_000
        ))
    );
    assert_eq!(
        parse("amount:count:1h AS orders_1h"),
        Ok(
            FeatureSpec::window("amount", PitAggregation::Count, 3_600_000_000_000)
                .named("orders_1h")
        )
    );
    let mut every = FeatureSpec::as_of("amount");
    every.aggregation = PitAggregation::Mean;
    assert_eq!(parse("amount:mean"), Ok(every));
    // A column name holding `:` or ` as ` in backticks.
    assert_eq!(
        parse("`a:b as c`:sum:5m as s"),
        Ok(FeatureSpec::window("a:b as c", PitAggregation::Sum, 300_000_000_000).named("s"))
    );
    assert_eq!(parse("`a:b`"), Ok(FeatureSpec::as_of("a:b")));
    assert_eq!(
        parse("`a:b` as x"),
        Ok(FeatureSpec::as_of("a:b").named("x"))
    );
    for text in ["`a:b", "`a`b:sum", "``:sum"] {
        assert!(parse(text).is_err(), "{text}");
    }
    // AS must be followed by a name.
    assert_eq!(
        parse("amount:sum:5m as"),
        Err("expected an output name after AS, found `amount:sum:5m as`".to_string())
    );
    for (text, expected) in [
        (
            "",
            "expected COLUMN, COLUMN:AGGREGATION or COLUMN:AGGREGATION:PERIOD",
        ),
        (":sum", "expected COLUMN, COLUMN:AGGREGATION"),
        ("a:sum:5m:x", "expected COLUMN, COLUMN:AGGREGATION"),
        (
            "a:median",
            "expected one of last, first, sum, count, mean, min, max, found \"median\"",
        ),
        ("a:sum:0s", "expected a period > 0, found `0s`"),
        ("a:sum:-5m", "expected a period > 0, found `-5m`"),
        ("a:sum:5 parsecs", "expected"),
        (
            "a as two words",
            "expected one output name without spaces after AS",
        ),
    ] {
        let message = parse(text).unwrap_err();
        assert!(message.starts_with(expected), "{text}: {message}");
    }
}
