"""Window kernels against Spark's own window() and session_window() in a real local
session, and the PySpark helpers (groupBy(key).applyInArrow) against both."""

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from test_windows import random_events

import arrowfeat as af
import arrowfeat.spark as afs


def spark_events(spark, nulls=True):
    table = random_events(n=2000, keys=5, seed=11, nulls=nulls)
    # Spark timestamps are microseconds; the random times are whole seconds.
    table = table.set_column(1, "ts", table["ts"].cast(pa.timestamp("us", tz="UTC")))
    return table, spark.createDataFrame(table)


def rows(df, *columns):
    return sorted(tuple(r[c] for c in columns) for r in df.collect())


def test_hop_aggregate_equals_spark_window(spark):
    table, df = spark_events(spark)
    spark_out = (
        df.groupBy("key", F.window("ts", "10 minutes", "1 minute"))
        .agg(F.sum("ivalue").alias("total"))
        .select("key", F.col("window.start").alias("start"), F.col("window.end").alias("end"), "total")
    )
    helper = afs.hop_aggregate(df, "ts", "ivalue", "10m", "1m", "sum", by="key", output="total")
    assert helper.columns == ["key", "window_start", "window_end", "total"]
    expected = rows(spark_out, "key", "start", "end", "total")
    assert rows(helper, "key", "window_start", "window_end", "total") == expected
    local = af.hop_aggregate(table["ts"], table["ivalue"], "10m", "1m", "sum", by=table["key"])
    # As Spark collects them: naive microsecond datetimes in the session time zone (UTC).
    naive = [
        local[c].cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us")).to_pylist()
        for c in ("window_start", "window_end")
    ]
    local_rows = sorted(zip(local["key"].to_pylist(), naive[0], naive[1], local["value"].to_pylist(), strict=False))
    assert [r[:3] for r in local_rows] == [r[:3] for r in expected]
    assert [r[3] for r in local_rows] == [r[3] for r in expected]


def test_session_aggregate_equals_spark_session_window(spark):
    table, df = spark_events(spark)
    spark_out = (
        df.groupBy("key", F.session_window("ts", "2 minutes"))
        .agg(F.count("value").alias("n"), F.max("value").alias("top"))
        .select(
            "key", F.col("session_window.start").alias("start"), F.col("session_window.end").alias("end"), "n", "top"
        )
    )
    counts = afs.session_aggregate(df, "ts", "value", "2m", "count", by="key", output="n")
    tops = afs.session_aggregate(df, "ts", "value", "2m", "max", by="key", output="top")
    expected = rows(spark_out, "key", "start", "end", "n", "top")
    assert rows(counts, "key", "session_start", "session_end", "n") == [r[:4] for r in expected]
    assert rows(tops, "key", "session_start", "session_end", "top") == [r[:3] + r[4:] for r in expected]
    local = af.session_aggregate(table["ts"], table["value"], "2m", "count", by=table["key"])
    assert local.num_rows == len(expected)


def test_rolling_helper_equals_spark_range_window(spark):
    from pyspark.sql import Window

    _, df = spark_events(spark)
    # Spark's RANGE frame over seconds: (t - 300 s, t] is rangeBetween(-299, 0) on whole seconds.
    w = Window.partitionBy("key").orderBy(F.col("ts").cast("long")).rangeBetween(-299, 0)
    spark_out = df.withColumn("expected", F.sum("ivalue").over(w))
    ours = afs.rolling(spark_out, "ts", "ivalue", "5m", "sum", by="key", output="rolled")
    result = ours.select("expected", "rolled").collect()
    assert len(result) == 2000
    assert all(r["expected"] == r["rolled"] for r in result)


def test_per_row_columns_and_errors(spark):
    _, df = spark_events(spark, nulls=False)
    out = df.select(
        "ts",
        afs.tumble_start("ts", "5m").alias("t5"),
        F.window("ts", "5 minutes").start.alias("spark_t5"),
        afs.hop_windows("ts", "10m", "5m").alias("hops"),
    ).collect()
    assert all(r["t5"] == r["spark_t5"] for r in out)
    assert all(len(r["hops"]) == 2 and r["hops"][1] == r["t5"] for r in out)
    with pytest.raises(
        ValueError,
        match=r"hop_aggregate: argument `value`: expected a column of the DataFrame, found 'nope' \(columns: key, ts,",
    ):
        afs.hop_aggregate(df, "ts", "nope", "10m", "1m", by="key")
    with pytest.raises(TypeError, match=r"session_aggregate: argument `ts`: expected a timestamp or bigint"):
        afs.session_aggregate(df, "value", "value", "2m", by="key")


def test_point_in_time_in_spark_equals_in_process(spark):
    from test_point_in_time import make_events, make_spine

    events = make_events(5, n=600)
    spine = make_spine(events, 6)
    events_table = pa.Table.from_pandas(events, preserve_index=False)
    spine_table = pa.Table.from_pandas(spine, preserve_index=False)
    for table in (events_table, spine_table):
        assert table.schema.field("event_timestamp").type == pa.timestamp("ns", tz="UTC")
    # Spark holds microseconds: the random times are whole seconds, so nothing is lost.
    events_table = events_table.set_column(
        1, "event_timestamp", events_table["event_timestamp"].cast(pa.timestamp("us", tz="UTC"))
    )
    spine_table = spine_table.set_column(
        1, "event_timestamp", spine_table["event_timestamp"].cast(pa.timestamp("us", tz="UTC"))
    )
    features = [af.as_of("conv_rate"), af.window("trips", "sum", "6h"), af.window("conv_rate", "mean", "1d")]
    options = {
        "by": "driver_id",
        "spine_time": "event_timestamp",
        "event_time": "event_timestamp",
        "created": "created",
        "ttl": "12h",
        "features": features,
    }
    local = af.point_in_time(spine_table, events_table, **options)
    out = afs.point_in_time(spark.createDataFrame(spine_table), spark.createDataFrame(events_table), **options)
    assert out.columns == local.column_names
    names = ["label_id", "conv_rate", "trips_sum_6h", "conv_rate_mean_1d"]
    expected = sorted(zip(*(local[n].to_pylist() for n in names), strict=True))
    assert rows(out, *names) == expected
    # Feast's created-time rule (as-of values only), in Spark as in process.
    cutoff = {**options, "features": [af.as_of("conv_rate")], "created_cutoff": True}
    local = af.point_in_time(spine_table, events_table, **cutoff)
    out = afs.point_in_time(spark.createDataFrame(spine_table), spark.createDataFrame(events_table), **cutoff)
    expected = sorted(zip(local["label_id"].to_pylist(), local["conv_rate"].to_pylist(), strict=True))
    assert rows(out, "label_id", "conv_rate") == expected
    assert expected != sorted(
        zip(
            local["label_id"].to_pylist(),
            af.point_in_time(spine_table, events_table, **{**cutoff, "created_cutoff": False})["conv_rate"].to_pylist(),
            strict=True,
        )
    ), "the cutoff changes some rows of this data"


def test_by_is_keyword_only_and_optional(spark):
    table, df = spark_events(spark, nulls=False)
    # Calls in the order before 0.1 (`by` second) fail with a message, in Python.
    old_calls = {
        "rolling": [
            lambda: afs.rolling(df, "key", "ts", "ivalue", "5m"),
            lambda: afs.rolling(df, "key", "ts", "ivalue", "5m", "sum"),
        ],
        "hop_aggregate": [
            lambda: afs.hop_aggregate(df, "key", "ts", "ivalue", "10m", "1m"),
            lambda: afs.hop_aggregate(df, "key", "ts", "ivalue", "10m", "1m", "sum"),
        ],
        "session_aggregate": [
            lambda: afs.session_aggregate(df, "key", "ts", "ivalue", "2m"),
            lambda: afs.session_aggregate(df, F.col("key"), "ts", F.col("ivalue"), "2m"),
        ],
    }
    for name, calls in old_calls.items():
        for call in calls:
            with pytest.raises(
                af.ArrowfeatTypeError,
                match=rf"^{name}: argument `by`: expected `by=` as a keyword argument, .* call {name}\(df, .*by=key\)",
            ):
                call()
    # Without `by`, every row is in one group, as in process without `by`.
    hops = afs.hop_aggregate(df, "ts", "ivalue", "10m", "1m")
    assert hops.columns == ["window_start", "window_end", "sum_ivalue"]
    local = af.hop_aggregate(table["ts"], table["ivalue"], "10m", "1m")
    assert sorted(r["sum_ivalue"] for r in hops.collect()) == sorted(local["value"].to_pylist())
    rolled = afs.rolling(df, "ts", "ivalue", "5m", "max").select("ts", "ivalue", "max_ivalue").collect()
    expected = af.rolling_max(table["ivalue"], table["ts"], "5m")
    naive = table["ts"].cast(pa.timestamp("us")).to_pylist()
    assert sorted((r["ts"], r["ivalue"], r["max_ivalue"]) for r in rolled) == sorted(
        zip(naive, table["ivalue"].to_pylist(), expected.to_pylist(), strict=True)
    )
