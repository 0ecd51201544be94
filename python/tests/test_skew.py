"""`arrowfeat.data.skew` (and `arrowfeat skew`): serving rows matched with training rows
by keys and an as-of join within the time tolerance, features compared within the value
tolerances; counts checked against a plain Python reference on random data, the CLI
against Python on the same files, and refusals."""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_data_gate import BINARY

from arrowfeat.data import skew
from arrowfeat.errors import ArrowfeatTypeError, ArrowfeatValueError

SCHEMA_TEXT = """\
name: payments_v1
schema_version: 1.0.0
owner: risk@example.com
entities:
  - {name: user, join_key: user_id, type: string}
event_timestamp: {name: event_ts, type: timestamp, unit: us, tz: UTC}
ttl: 1d
features:
  - {name: amount, type: float64}
  - {name: count, type: int64}
  - {name: channel, type: string}
"""
SECOND = 1_000_000  # microseconds


def make_tables(seed: int) -> tuple[pa.Table, pa.Table]:
    rng = random.Random(seed)
    training: list[dict[str, Any]] = []
    for u in range(40):
        t = rng.randrange(0, 600) * SECOND
        for _ in range(rng.randrange(1, 12)):
            t += rng.randrange(1, 120) * SECOND  # distinct times per key: no ties
            amount = rng.choice([rng.uniform(-100, 100), 0.0, -0.0, math.nan, None, 1e308])
            training.append(
                {
                    "user_id": f"u{u}",
                    "event_ts": t,
                    "amount": amount,
                    "count": rng.choice([rng.randrange(-5, 5), None, 2**63 - 1]),
                    "channel": rng.choice(["web", "ios", None]),
                }
            )
    serving: list[dict[str, Any]] = []
    for row in rng.sample(training, len(training) // 2):
        served = dict(row)
        served["served_at"] = row["event_ts"] + rng.choice([0, 5, 59, 60, 61, 200]) * SECOND
        change = rng.random()
        if change < 0.15 and isinstance(row["amount"], float) and math.isfinite(row["amount"]):
            served["amount"] = row["amount"] + rng.choice([1e-9, 1e-3, 1.0])
        elif change < 0.2:
            served["count"] = (row["count"] or 0) // 2 + 1
        elif change < 0.25:
            served["channel"] = "pos"
        serving.append(served)
    for u in range(40, 45):  # keys training never saw
        serving.append({"user_id": f"u{u}", "served_at": 10 * SECOND, "amount": 1.0, "count": 1, "channel": "web"})
    ts = pa.timestamp("us", tz="UTC")
    training_schema = pa.schema(
        [
            ("user_id", pa.string()),
            ("event_ts", ts),
            ("amount", pa.float64()),
            ("count", pa.int64()),
            ("channel", pa.string()),
        ]
    )
    serving_schema = pa.schema([("served_at", ts), *[f for f in training_schema if f.name != "event_ts"]])
    rng.shuffle(serving)
    return (
        pa.Table.from_pylist(serving, schema=serving_schema),
        pa.Table.from_pylist(training, schema=training_schema),
    )


def close(a: Any, b: Any, absolute: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= absolute
    return bool(a == b)


def reference(serving: pa.Table, training: pa.Table, tolerance_s: int, absolute: float) -> dict[str, str]:
    """What the report should count: "N of M" per finding, by a plain scan."""
    by_key: dict[str, list[dict[str, Any]]] = {}
    as_int = pa.int64()
    training = training.set_column(1, "event_ts", training["event_ts"].cast(as_int))
    serving = serving.set_column(0, "served_at", serving["served_at"].cast(as_int))
    for index, row in enumerate(training.to_pylist()):
        by_key.setdefault(row["user_id"], []).append(row | {"#": index})
    missing = 0
    used: set[int] = set()
    differ = {"amount": 0, "count": 0, "channel": 0}
    matched = 0
    served = serving.to_pylist()
    for row in served:
        t = row["served_at"]
        candidates = [r for r in by_key.get(row["user_id"], []) if t - tolerance_s * SECOND <= r["event_ts"] <= t]
        if not candidates:
            missing += 1
            continue
        best = max(candidates, key=lambda r: r["event_ts"])
        used.add(best["#"])
        matched += 1
        for feature in differ:
            if not close(row[feature], best[feature], absolute):
                differ[feature] += 1
    out = {
        "skew-missing": f"{missing} of {len(served)}",
        "skew-extra": f"{training.num_rows - len(used)} of {training.num_rows}",
    }
    for feature, n in differ.items():
        out[f"skew-mismatch {feature}"] = f"{n} of {matched} differ"
    return out


def counted(report: Any) -> dict[str, str]:
    out = {}
    for f in report.findings:
        key = f.rule if f.rule != "skew-mismatch" else f"skew-mismatch {f.message.split('`')[1]}"
        out[key] = f.actual
    return out


def cli_skew(served: Path, trained: Path, schema: Path, *flags: str) -> Any:
    """`arrowfeat skew --format json` of the two files (serving time `served_at`, within
    1m, floats within 0.001), which must exit 1."""
    out = subprocess.run(
        [
            str(BINARY),
            "skew",
            "--schemas",
            str(schema),
            "--serving",
            str(served),
            "--training",
            str(trained),
            "--serving-time",
            "served_at",
            "--time-tolerance",
            "1m",
            "--absolute-tolerance",
            "0.001",
            *flags,
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_counts_equal_a_plain_reference(tmp_path: Path, seed: int) -> None:
    schema = tmp_path / "payments_v1.yaml"
    schema.write_text(SCHEMA_TEXT)
    serving, training = make_tables(seed)
    for tolerance, absolute in (("1m", 1e-6), ("0s", 0.0), ("3m 20s", 2.0)):
        seconds = {"1m": 60, "0s": 0, "3m 20s": 200}[tolerance]
        report = skew(
            serving,
            training,
            schema,
            time_tolerance=tolerance,
            serving_time="served_at",
            absolute_tolerance=absolute,
            sample_rows=2,
        )
        want = reference(serving, training, seconds, absolute)
        got = counted(report)
        for rule, actual in want.items():
            zero = actual.startswith("0 of")
            assert got.get(rule, actual if zero else None) == actual, (tolerance, rule, got)
        assert report.exit_code in (0, 1)


def test_cli_and_python_give_one_report(tmp_path: Path) -> None:
    import polars as pl

    schema = tmp_path / "payments_v1.yaml"
    schema.write_text(SCHEMA_TEXT)
    serving, training = make_tables(7)
    pq.write_table(serving, tmp_path / "served.parquet")
    pq.write_table(training, tmp_path / "trained.parquet")
    cli = cli_skew(tmp_path / "served.parquet", tmp_path / "trained.parquet", schema)
    options = {"time_tolerance": "1m", "serving_time": "served_at", "absolute_tolerance": 0.001}
    paths = skew(tmp_path / "served.parquet", tmp_path / "trained.parquet", schema, **options)
    assert json.loads(paths.render("json"))["files"] == cli["files"]
    for serving_in, training_in in (
        (serving, training),
        (pl.from_arrow(serving), training.to_pandas(types_mapper=__import__("pandas").ArrowDtype)),
        ({"payments_v1": serving.to_reader()}, {"payments_v1": training}),
    ):
        in_memory = skew(serving_in, training_in, schema, **options)
        assert [(f.rule, f.line, f.actual) for f in in_memory.findings] == [
            (f.rule, f.line, f.actual) for f in paths.findings
        ]


def test_refusals_name_the_argument(tmp_path: Path) -> None:
    schema = tmp_path / "payments_v1.yaml"
    schema.write_text(SCHEMA_TEXT)
    serving, training = make_tables(1)
    with pytest.raises(ArrowfeatValueError, match="skew: argument `time_tolerance`"):
        skew(serving, training, schema, time_tolerance="soon")
    with pytest.raises(ArrowfeatValueError, match="expected a duration of 0 or more"):
        skew(serving, training, schema, time_tolerance="-5m")
    with pytest.raises(ArrowfeatTypeError, match="argument `time_tolerance`"):
        skew(serving, training, schema, time_tolerance=60)  # type: ignore[arg-type]
    with pytest.raises(ArrowfeatValueError, match="argument `absolute_tolerance`: expected a finite number"):
        skew(serving, training, schema, time_tolerance="1m", absolute_tolerance=math.nan)
    with pytest.raises(ArrowfeatValueError, match="argument `relative_tolerance`"):
        skew(serving, training, schema, time_tolerance="1m", relative_tolerance=-1.0)
    with pytest.raises(ArrowfeatValueError, match="argument `ulps`"):
        skew(serving, training, schema, time_tolerance="1m", ulps=-1)
    with pytest.raises(
        ArrowfeatValueError,
        match=r"^skew: argument `serving`: view `nope` is given data, but no schema file declares it$",
    ):
        skew({"nope": serving}, training, schema, time_tolerance="1m")
    with pytest.raises(ArrowfeatTypeError, match="argument `serving`"):
        skew(42, training, schema, time_tolerance="1m")
    missing = skew(tmp_path / "none.parquet", training, schema, time_tolerance="1m")
    assert missing.exit_code == 2
    # No data at all never passes: refused, as the CLI refuses a run without a path.
    with pytest.raises(ArrowfeatValueError, match="argument `serving`: expected the data of at least one view"):
        skew({}, {}, schema, time_tolerance="1m")
    with pytest.raises(ArrowfeatValueError, match="argument `serving`: expected a path, a table or a mapping"):
        skew(None, training, schema, time_tolerance="1m")  # type: ignore[arg-type]
    from arrowfeat.data import check_data, drift

    with pytest.raises(ArrowfeatValueError, match="check_data: argument `data`: expected the data of at least one"):
        check_data({}, schema)
    with pytest.raises(ArrowfeatValueError, match="drift: argument `current`: expected the data of at least one"):
        drift({}, schema, reference=training)


def one_feature_schema(tmp_path: Path) -> Path:
    """View `s_v1`: key `k` (int64), event time `ts` (us, UTC), feature `m` (float64)."""
    schema = tmp_path / "s_v1.yaml"
    schema.write_text(
        "name: s_v1\nschema_version: 1.0.0\nowner: a@example.com\n"
        "entities: [{name: k, join_key: k, type: int64}]\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: m, type: float64}\n"
    )
    return schema


def test_values_that_do_not_convert_are_a_type_finding(tmp_path: Path) -> None:
    """A serving column of another type is compared in the training column's type only
    when every value converts and back: 1.5 is no integer, 1e300 is no float32."""
    schema = one_feature_schema(tmp_path)
    ts = pa.array([0, 1], pa.timestamp("us", tz="UTC"))
    keys = pa.array([1, 2], pa.int64())

    def run(served: pa.Array, trained: pa.Array) -> list[str]:
        report = skew(
            pa.table({"k": keys, "ts": ts, "m": served}),
            pa.table({"k": keys, "ts": ts, "m": trained}),
            schema,
            time_tolerance="0s",
        )
        return sorted(f.rule for f in report.findings)

    assert run(pa.array([1.5, 2.0]), pa.array([1, 2], pa.int64())) == ["data-column-type"]
    # The types in the schema vocabulary, as `arrowfeat check --data` names them.
    report = skew(
        pa.table({"k": keys, "ts": ts, "m": pa.array([1.5, 2.0])}),
        pa.table({"k": keys, "ts": ts, "m": pa.array([1, 2], pa.int64())}),
        schema,
        time_tolerance="0s",
    )
    (finding,) = report.findings
    assert (finding.expected, finding.actual) == ("int64", "float64"), finding.message
    assert "`m` is float64 in the serving data" in finding.message, finding.message
    assert run(pa.array([1e300, 2.0]), pa.array([math.inf, 2.0], pa.float32())) == ["data-column-type"]
    assert run(pa.array([1.0, 2.0]), pa.array([1, 2], pa.int64())) == []
    assert run(pa.array([1, 3], pa.int32()), pa.array([1, 2], pa.int64())) == ["skew-mismatch"]
    assert run(pa.array([math.nan, None]), pa.array([math.nan, None], pa.float32())) == []


@pytest.mark.parametrize("form", ["csv", "json"])
def test_text_times_are_read_in_the_declared_zone(tmp_path: Path, form: str) -> None:
    """A serving log in CSV or JSON holds times as text: one without an offset is a time
    in the zone the schema declares (UTC), one with an offset is that instant; both match
    the training rows at 12:00Z exactly."""
    schema = one_feature_schema(tmp_path)
    served = tmp_path / f"served.{form}"
    if form == "csv":
        served.write_text("k,ts,m\n1,2026-01-01T12:00:00,1.5\n2,2026-01-01T14:00:00+02:00,2.5\n")
    else:
        served.write_text(
            '{"k": 1, "ts": "2026-01-01T12:00:00", "m": 1.5}\n{"k": 2, "ts": "2026-01-01T14:00:00+02:00", "m": 2.5}\n'
        )
    noon = pa.array([1_767_268_800 * SECOND] * 2, pa.timestamp("us", tz="UTC"))
    trained = tmp_path / "trained.parquet"
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int64()), "ts": noon, "m": [1.5, 2.5]}), trained)
    report = skew(served, trained, schema, time_tolerance="0s")
    assert report.findings == [], [f.message for f in report.findings]
    assert report.exit_code == 0


def test_untrusted_text_in_errors_is_escaped(tmp_path: Path) -> None:
    schema = tmp_path / "payments_v1.yaml"
    schema.write_text(SCHEMA_TEXT)
    serving, training = make_tables(1)
    with pytest.raises(ArrowfeatValueError) as raised:
        skew(serving, training, schema, time_tolerance="1\u202e\x1b[31m s")
    assert "\x1b" not in str(raised.value) and "\u202e" not in str(raised.value), str(raised.value)
    with pytest.raises(ArrowfeatValueError, match="absolute_tolerance"):
        skew(serving, training, schema, time_tolerance="1m", absolute_tolerance=10**400)


def test_a_column_of_no_values_is_compared_as_nulls(tmp_path: Path) -> None:
    """A serving log whose feature column is empty in every row (CSV gives it no type)
    served nulls: each matched row mismatches the trained value, in both directions."""
    schema = one_feature_schema(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text("k,ts,m\n1,2026-01-01T12:00:00Z,\n2,2026-01-01T12:00:00Z,\n")
    full = tmp_path / "full.csv"
    full.write_text("k,ts,m\n1,2026-01-01T12:00:00Z,1.5\n2,2026-01-01T12:00:00Z,2.5\n")
    for served, trained, sample in [
        (empty, full, "served null, trained 1.5"),
        (full, empty, "served 1.5, trained null"),
    ]:
        report = skew(served, trained, schema, time_tolerance="0s")
        assert [f.rule for f in report.findings] == ["skew-mismatch"], [f.message for f in report.findings]
        assert "in 2 of 2 matched rows" in report.findings[0].message
        assert sample in report.findings[0].message
    assert skew(empty, empty, schema, time_tolerance="0s").findings == []
