"""`arrowfeat.spark.skew`: training/serving skew of Spark DataFrames without collecting
them (buckets of entity keys compared on the workers, merged on the driver), with the same
report as `arrowfeat.data.skew` and the CLI on the same rows, whatever the bucketing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_skew import SCHEMA_TEXT, cli_skew, make_tables

from arrowfeat.data import skew
from arrowfeat.errors import ArrowfeatValueError

pytest.importorskip("pyspark")

from arrowfeat import spark as af_spark

OPTIONS: dict[str, Any] = {"time_tolerance": "1m", "serving_time": "served_at", "absolute_tolerance": 0.001}


def files(report: Any) -> Any:
    return json.loads(report.render("json"))["files"]


def frames(spark: Any, *tables: pa.Table) -> list[Any]:
    return [spark.createDataFrame(t) for t in tables]


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "payments_v1.yaml"
    path.write_text(SCHEMA_TEXT)
    return path


@pytest.mark.parametrize("seed", [7, 8])
def test_spark_equals_in_process_and_cli_whatever_the_buckets(
    spark: Any, tmp_path: Path, schema: Path, seed: int
) -> None:
    serving, training = make_tables(seed)
    serving_df, training_df = frames(spark, serving, training)
    # The rows as Spark holds them, for the in-process run and the CLI.
    serving_rows, training_rows = serving_df.toArrow(), training_df.toArrow()
    pq.write_table(serving_rows, tmp_path / "served.parquet")
    pq.write_table(training_rows, tmp_path / "trained.parquet")
    cli = cli_skew(tmp_path / "served.parquet", tmp_path / "trained.parquet", schema, "--sample", "3")["files"]
    in_process = files(skew(serving_rows, training_rows, schema, sample_rows=3, **OPTIONS))
    rules = {c["rule"] for f in in_process for c in f["checks"] if c["status"] != "pass"}
    assert {"skew-missing", "skew-extra", "skew-mismatch"} <= rules, rules
    for buckets in (1, 3, 7):
        report = af_spark.skew(
            serving_df.repartition(5), training_df, schema, sample_rows=3, buckets=buckets, **OPTIONS
        )
        assert files(report) == in_process, buckets
    # The CLI names the data by its paths; the counts and samples are the same.
    assert unnamed(in_process) == unnamed(cli)
    assert sum(bool(c["sample"]) for f in unnamed(cli) for c in f) >= 3


def unnamed(report_files: Any) -> Any:
    """Each check without its subject and message, with the message's sampled rows."""
    return [
        [
            {k: v for k, v in c.items() if k not in ("subject", "message")}
            | {"sample": c["message"].split("for example")[1:]}
            for c in f["checks"]
        ]
        for f in report_files
    ]


def test_a_value_that_does_not_convert_in_one_bucket_is_a_type_finding(spark: Any, schema: Path) -> None:
    """The serving `count` is float64 against int64 training: one row of 1.5 (in one
    bucket only) makes the feature a type finding, as in process."""
    serving, training = make_tables(3)
    counts = [None if c is None else float(c % 1000) for c in serving["count"].to_pylist()]
    counts[0] = 1.5
    serving = serving.set_column(serving.schema.get_field_index("count"), "count", pa.array(counts, pa.float64()))
    serving_df, training_df = frames(spark, serving, training)
    want = files(skew(serving_df.toArrow(), training_df.toArrow(), schema, **OPTIONS))
    assert any(c["rule"] == "data-column-type" for f in want for c in f["checks"])
    assert files(af_spark.skew(serving_df, training_df, schema, buckets=5, **OPTIONS)) == want


def test_key_widths_views_without_keys_empty_frames_and_time_zones(spark: Any, tmp_path: Path) -> None:
    ts = pa.timestamp("us", tz="UTC")
    keyed = tmp_path / "keyed"
    keyed.mkdir()
    (keyed / "k_v1.yaml").write_text(
        "name: k_v1\nschema_version: 1.0.0\nowner: a@example.com\n"
        "entities: [{name: k, join_key: k, type: int64}]\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: m, type: float64}\n"
    )
    keyless = tmp_path / "keyless"
    keyless.mkdir()
    (keyless / "g_v1.yaml").write_text(
        "name: g_v1\nschema_version: 1.0.0\nowner: a@example.com\nentities: []\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: m, type: float64}\n"
    )
    n = 60
    training = pa.table(
        {
            "k": pa.array([i % 9 for i in range(n)], pa.int64()),
            "ts": pa.array([i * 1_000_000 for i in range(n)], ts),
            "m": pa.array([float(i % 4) for i in range(n)]),
        }
    )
    serving = pa.table(
        {
            "k": pa.array([i % 11 for i in range(0, n, 2)], pa.int32()),  # another width
            "ts": pa.array([i * 1_000_000 + 500_000 for i in range(0, n, 2)], ts),
            "m": pa.array([float(i % 3) for i in range(0, n, 2)]),
        }
    )
    serving_df, training_df = frames(spark, serving, training)
    options: dict[str, Any] = {"time_tolerance": "3s", "sample_rows": 4}
    for schemas in (keyed, keyless):
        want = files(skew(serving_df.toArrow(), training_df.toArrow(), schemas, **options))
        assert any(c["status"] != "pass" for f in want for c in f["checks"]), want
        assert files(af_spark.skew(serving_df, training_df, schemas, buckets=4, **options)) == want
        empty_s, empty_t = serving_df.limit(0), training_df.limit(0)
        want = files(skew(empty_s.toArrow(), empty_t.toArrow(), schemas, **options))
        assert files(af_spark.skew(empty_s, empty_t, schemas, buckets=4, **options)) == want
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        shifted = files(af_spark.skew(serving_df, training_df, keyed, buckets=3, **options))
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    assert shifted == files(skew(serving_df.toArrow(), training_df.toArrow(), keyed, **options))


def test_views_given_by_name_and_refusals(spark: Any, schema: Path) -> None:
    serving, training = make_tables(2)
    serving_df, training_df = frames(spark, serving, training)
    want = files(skew(serving_df.toArrow(), training_df.toArrow(), schema, **OPTIONS))
    by_name = af_spark.skew({"payments_v1": serving_df}, {"payments_v1": training_df}, schema, **OPTIONS)
    assert [(c["rule"], c["actual"]) for f in files(by_name) for c in f["checks"]] == [
        (c["rule"], c["actual"]) for f in want for c in f["checks"]
    ]
    only_serving = af_spark.skew({"payments_v1": serving_df}, {}, schema, **OPTIONS)
    assert [(f.rule, f.actual) for f in only_serving.findings] == [("data-not-read", "only `serving`")]
    with pytest.raises(ArrowfeatValueError, match="argument `buckets`"):
        af_spark.skew(serving_df, training_df, schema, buckets=0, **OPTIONS)
    with pytest.raises(ArrowfeatValueError, match="view `nope` is given data"):
        af_spark.skew({"nope": serving_df}, training_df, schema, **OPTIONS)
    with pytest.raises(ArrowfeatValueError, match="argument `time_tolerance`"):
        af_spark.skew(serving_df, training_df, schema, time_tolerance="soon")
