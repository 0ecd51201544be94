"""`arrowfeat.spark.check_data`: Spark DataFrames checked against their schema without
collecting them (partitions counted on the workers, merged on the driver), with the same
report as `arrowfeat.data.check_data` and the CLI on the same rows, whatever the
partitioning."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_data_gate import AS_OF, BINARY, SCHEMA, faulty_events

from arrowfeat.data import check_data
from arrowfeat.errors import ArrowfeatTypeError, ArrowfeatValueError

pytest.importorskip("pyspark")

from arrowfeat import spark as af_spark


def report_json(report: Any) -> Any:
    return json.loads(report.render("json"))


def cli_json(path: Path, schema: Path, as_of: str, sample: int = 5) -> Any:
    out = subprocess.run(
        [
            str(BINARY),
            "check",
            "--schemas",
            str(schema),
            "--data",
            str(path),
            "--as-of",
            as_of,
            "--data-sample",
            str(sample),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def findings(report: Any, label: str) -> list[tuple[str, str, int, int, str, str]]:
    """Every finding, with the data's name in messages replaced by `label`."""
    return sorted(
        (c["rule"], c["status"], c["line"], c["column"], c["actual"], c["message"].replace(label, "DATA"))
        for f in report["files"]
        for c in f["checks"]
        if c["status"] != "pass"
    )


@pytest.fixture(scope="module")
def faulty_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spark_gate") / "events.parquet"
    pq.write_table(faulty_events(), path)
    return path


def test_spark_python_and_cli_give_one_report(spark: Any, faulty_parquet: Path, tmp_path: Path) -> None:
    df = spark.read.parquet(str(faulty_parquet))
    rows = df.toArrow()  # the rows as Spark has them (a fixed-size embedding is a list)
    expected = check_data(rows, SCHEMA, as_of=AS_OF)
    rules = {f.rule for f in expected.findings}
    assert {"data-null", "data-out-of-range", "data-not-allowed", "data-non-finite", "data-conflicting-rows"} <= rules
    got = af_spark.check_data(df, SCHEMA, as_of=AS_OF)
    assert report_json(got) == report_json(expected)
    assert got.exit_code == expected.exit_code == 1
    # Partitioned otherwise, in another order: the same report, samples included.
    for other in (df.repartition(7), df.coalesce(1), df.orderBy("amount", ascending=False).repartition(3, "channel")):
        assert report_json(af_spark.check_data(other, SCHEMA, as_of=AS_OF)) == report_json(expected)
    # The CLI on a file of the same rows: the same findings and messages.
    path = tmp_path / "as_spark_reads.parquet"
    pq.write_table(rows, path)
    assert findings(cli_json(path, SCHEMA, AS_OF), str(path)) == findings(report_json(expected), "data")
    # By view name.
    named = af_spark.check_data({"user_events_v1": df}, SCHEMA, as_of=AS_OF)
    assert findings(report_json(named), "data[user_events_v1]") == findings(report_json(expected), "data")


def test_duplicates_and_stale_keys_split_across_partitions(spark: Any, faulty_parquet: Path) -> None:
    """Exact duplicates, conflicting rows and stale keys need all of a key's rows: they
    are counted in full after the split by key, never per arbitrary partition."""
    table = faulty_events()
    doubled = pa.concat_tables([table, table.slice(0, 40)])
    later = "2026-12-01T00:00:00+00:00"  # every key's latest event is older than the 1d TTL
    df = spark.createDataFrame(doubled.to_pandas()).repartition(5)
    df = spark.read.parquet(str(faulty_parquet)).limit(0).unionByName(df, allowMissingColumns=False)
    rows = df.toArrow()
    expected = check_data(rows, SCHEMA, as_of=later, sample_rows=3)
    rules = {f.rule for f in expected.findings}
    assert {"data-duplicate-rows", "data-conflicting-rows", "data-stale-keys"} <= rules, rules
    got = af_spark.check_data(df, SCHEMA, as_of=later, sample_rows=3)
    assert report_json(got) == report_json(expected)


def test_view_without_entity_keys(spark: Any, tmp_path: Path) -> None:
    schema = tmp_path / "clicks_v1.yaml"
    schema.write_text(
        "name: clicks_v1\nschema_version: 1.0.0\nowner: a@example.com\nentities: []\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\nttl: 1h\n"
        "features:\n  - {name: clicks, type: int64, nullable: false}\n"
    )
    ts = pa.array([0, 3_600_000_000, 3_600_000_000, 7_200_000_000] * 3, pa.timestamp("us", tz="UTC"))
    table = pa.table({"ts": ts, "clicks": pa.array([1, 2, 2, None] * 3, pa.int64())})
    pq.write_table(table, tmp_path / "clicks.parquet")
    df = spark.read.parquet(str(tmp_path / "clicks.parquet")).repartition(4)
    for as_of in ("1970-01-01T02:30:00+00:00", "1970-01-01T04:00:00+00:00"):
        expected = check_data(df.toArrow(), schema, as_of=as_of)
        assert report_json(af_spark.check_data(df, schema, as_of=as_of)) == report_json(expected)
    stale = {f.rule for f in check_data(df.toArrow(), schema, as_of="1970-01-01T04:00:00+00:00").findings}
    assert "data-stale-keys" in stale


def test_empty_and_mistyped_dataframes(spark: Any, faulty_parquet: Path) -> None:
    df = spark.read.parquet(str(faulty_parquet))
    empty = df.limit(0)
    assert report_json(af_spark.check_data(empty, SCHEMA, as_of=AS_OF)) == report_json(
        check_data(empty.toArrow(), SCHEMA, as_of=AS_OF)
    )
    from pyspark.sql import functions as F

    mistyped = df.withColumn("amount", F.col("amount").cast("string")).drop("event_id")
    expected = check_data(mistyped.toArrow(), SCHEMA, as_of=AS_OF)
    assert {"data-column-missing", "data-column-type"} <= {f.rule for f in expected.findings}
    assert report_json(af_spark.check_data(mistyped, SCHEMA, as_of=AS_OF)) == report_json(expected)


def test_refusals_name_the_argument(spark: Any, faulty_parquet: Path) -> None:
    df = spark.read.parquet(str(faulty_parquet))
    with pytest.raises(ArrowfeatTypeError, match="argument `data`: expected a Spark DataFrame"):
        af_spark.check_data(df.toArrow(), SCHEMA)
    # The native run refuses it, in process and on Spark alike.
    undeclared = "^check_data: argument `data`: view `nope` is given data, but no schema file declares it$"
    with pytest.raises(ArrowfeatValueError, match=undeclared):
        af_spark.check_data({"nope": df}, SCHEMA)
    with pytest.raises(ArrowfeatValueError, match=undeclared):
        check_data({"nope": df.toArrow()}, SCHEMA)
    with pytest.raises(ArrowfeatValueError, match="argument `sample_rows`"):
        af_spark.check_data(df, SCHEMA, sample_rows=10_001)
    with pytest.raises(ArrowfeatValueError, match="argument `as_of`"):
        af_spark.check_data(df, SCHEMA, as_of="soon")


def test_hostile_shapes_match_the_in_memory_check(spark: Any, faulty_parquet: Path, tmp_path: Path) -> None:
    """Two files declaring one view, a session in another time zone, `k` beside `K`,
    duplicate column names and a schema file that does not parse."""
    from pyspark.sql import functions as F

    both = tmp_path / "both"
    both.mkdir()
    text = (
        "name: v\nschema_version: 1.0.0\nowner: a@example.com\n"
        "entities: [{name: k, join_key: k, type: int64}]\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: x, type: float64, constraints: {max: MAX}}\n"
    )
    (both / "a.yaml").write_text(text.replace("MAX", "10"))
    (both / "b.yaml").write_text(text.replace("MAX", "100"))
    table = pa.table(
        {
            "k": pa.array([1, 2, 3], pa.int64()),
            "ts": pa.array([0, 0, 0], pa.timestamp("us", tz="UTC")),
            "x": [5.0, 50.0, 500.0],
        }
    )
    df = spark.createDataFrame(table.to_pandas())
    expected = check_data(df.toArrow(), both, as_of=AS_OF)
    # The first file's checks count (the second is a `duplicate-view`), not the last's.
    assert [f.actual for f in expected.findings if f.rule == "data-out-of-range"] == ["2 of 3"]
    assert "duplicate-view" in {f.rule for f in expected.findings}
    assert report_json(af_spark.check_data(df, both, as_of=AS_OF)) == report_json(expected)

    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        events = spark.read.parquet(str(faulty_parquet))
        assert report_json(af_spark.check_data(events, SCHEMA, as_of=AS_OF)) == report_json(
            check_data(events.toArrow(), SCHEMA, as_of=AS_OF)
        )
        empty = events.limit(0)
        assert report_json(af_spark.check_data(empty, SCHEMA, as_of=AS_OF)) == report_json(
            check_data(empty.toArrow(), SCHEMA, as_of=AS_OF)
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)

    cased = df.withColumn("K", F.col("k") + 1)
    assert report_json(af_spark.check_data(cased, both / "a.yaml", as_of=AS_OF)) == report_json(
        check_data(cased.toArrow(), both / "a.yaml", as_of=AS_OF)
    )
    twice = df.select("k", "ts", "x", F.col("x").alias("k"))
    spark_twice = af_spark.check_data(twice, both / "a.yaml", as_of=AS_OF)
    assert [f.rule for f in spark_twice.findings] == ["data-unreadable"]
    assert spark_twice.exit_code == 2

    broken = tmp_path / "broken.yaml"
    broken.write_text(text.replace("join_key: k", "join_key: k.k").replace("MAX", "1"))
    report = af_spark.check_data(df, broken, as_of=AS_OF)
    assert report.exit_code != 0 and any(f.rule.startswith("schema") for f in report.findings), report.findings
    assert report_json(report) == report_json(check_data(df.toArrow(), broken, as_of=AS_OF))
    # A view named for a file that does not parse is no refusal: the file's findings are
    # the report, in process and on Spark alike.
    named = af_spark.check_data({"v": df}, broken, as_of=AS_OF)
    assert report_json(named) == report_json(check_data({"v": df.toArrow()}, broken, as_of=AS_OF))
    assert [f.rule for f in named.findings] == [f.rule for f in report.findings]


def test_keyless_part_of_null_times_keeps_the_key_stale(tmp_path: Path) -> None:
    from arrowfeat import _native

    schema = tmp_path / "clicks_v1.yaml"
    schema.write_text(
        "name: clicks_v1\nschema_version: 1.0.0\nowner: a@example.com\nentities: []\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\nttl: 1h\n"
        "features:\n  - {name: clicks, type: int64}\n"
    )
    ts = pa.timestamp("us", tz="UTC")
    one = pa.table({"ts": pa.array([0], ts), "clicks": pa.array([1], pa.int64())})
    nulls = pa.table({"ts": pa.array([None, None], ts), "clicks": pa.array([1, 2], pa.int64())})
    [(_, label, text, _, _)] = _native.schema_views(str(schema))
    as_of = 10 * 3600 * 10**9
    parts = [_native.count_part(label, text, "data", t, as_of=as_of, sample_rows=5) for t in (one, nulls)]
    merged = _native.check(str(schema), counted=[(None, [(label, parts)])], as_of=as_of, baseline=False)
    whole = check_data(pa.concat_tables([one, nulls]), schema, as_of="1970-01-01T10:00:00+00:00", baseline=False)
    assert json.loads(merged.render("json")) == report_json(whole)
    assert "data-stale-keys" in {f.rule for f in whole.findings}


def test_drift_from_spark_equals_drift_in_process(spark: Any, tmp_path: Path) -> None:
    """Against a saved profile (workers send coarsened summaries) and against a reference
    DataFrame (full summaries), the report is drift's on the same rows, to the bit."""
    from arrowfeat.data import drift

    repo = Path(__file__).resolve().parents[2]
    reference = spark.read.parquet(str(repo / "examples" / "data" / "events.parquet")).repartition(3)
    current = spark.read.parquet(str(repo / "examples" / "data" / "events_next_day.parquet")).repartition(4)
    profile = tmp_path / "reference.json"
    in_process = drift(current.toArrow(), SCHEMA, reference=reference.toArrow(), save_reference=profile)
    rules = {f.rule for f in in_process.findings}
    assert {"drift-psi", "drift-ks"} <= rules, rules
    spark_profile = tmp_path / "spark_reference.json"
    from_spark = af_spark.drift(current, SCHEMA, reference=reference, save_reference=spark_profile)
    assert report_json(from_spark) == report_json(in_process)
    assert spark_profile.read_text() == profile.read_text()
    saved = drift(current.toArrow(), SCHEMA, reference_profile=profile)
    assert report_json(af_spark.drift(current, SCHEMA, reference_profile=profile)) == report_json(saved)
    assert report_json(af_spark.drift(current.coalesce(1), SCHEMA, reference_profile=profile)) == report_json(saved)
    named = af_spark.drift({"user_events_v1": current}, SCHEMA, reference_profile=profile)
    assert [f.actual for f in named.findings] == [f.actual for f in saved.findings]
    empty = af_spark.drift(current.limit(0), SCHEMA, reference_profile=profile)
    assert report_json(empty) == report_json(drift(current.limit(0).toArrow(), SCHEMA, reference_profile=profile))
    with pytest.raises(ArrowfeatValueError, match="give the reference"):
        af_spark.drift(current, SCHEMA)
    # A view no schema file declares is refused by the native run, as in process; and
    # the reference is not saved.
    undeclared = "^drift: argument `current`: view `nope` is given data, but no schema file declares it$"
    unsaved = tmp_path / "unsaved.json"
    with pytest.raises(ArrowfeatValueError, match=undeclared):
        af_spark.drift({"nope": current}, SCHEMA, reference=reference, save_reference=unsaved)
    with pytest.raises(ArrowfeatValueError, match=undeclared):
        drift({"nope": current.toArrow()}, SCHEMA, reference=reference.toArrow(), save_reference=unsaved)
    assert not unsaved.exists()
    with pytest.raises(ArrowfeatTypeError, match="argument `reference`: expected a Spark DataFrame"):
        af_spark.drift(current, SCHEMA, reference=current.toArrow())
