"""`arrowfeat drift` and `arrowfeat.data.drift`: the metrics equal a straightforward
numpy/scipy computation, a saved reference gives the raw reference's results, and the
CLI and Python report the same findings."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import ks_2samp

from arrowfeat.data import drift
from arrowfeat.errors import ArrowfeatValueError

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))

SCHEMA = """\
name: scores_v1
schema_version: 1.0.0
entities:
  - name: user
    join_key: user_id
    type: int64
event_timestamp:
  name: ts
  type: timestamp
  unit: us
  tz: UTC
features:
  - name: score
    type: float64
  - name: clicks
    type: int64
  - name: plan
    type: string
  - name: tier
    type: int32
    constraints:
      allowed_values: [1, 2, 3]
  - name: tags
    type: list<string>
"""


def table(rng: np.random.Generator, n: int, shift: float, new_plan: float) -> pa.Table:
    plans = rng.choice(["free", "pro", "team"], size=n, p=[0.6, 0.3, 0.1]).astype(object)
    plans[rng.random(n) < new_plan] = "enterprise"
    score = rng.normal(shift, 1.0, size=n)
    score_list: list[float | None] = list(score)
    for i in rng.choice(n, size=n // 50, replace=False):
        score_list[i] = None
    return pa.table(
        {
            "user_id": pa.array(np.arange(n), pa.int64()),
            "ts": pa.array(np.arange(n) * 1_000_000, pa.timestamp("us", "UTC")),
            "score": pa.array(score_list, pa.float64()),
            "clicks": pa.array(rng.poisson(3.0 + shift, size=n), pa.int64()),  # many ties
            "plan": pa.array(plans, pa.string()),
            "tier": pa.array(rng.integers(1, 4, size=n), pa.int32()),
            "tags": pa.array([["a"]] * n, pa.list_(pa.string())),
        }
    )


def checks(report: Any) -> dict[tuple[str, str], str]:
    """(feature, rule) -> actual, for every drift check of the report."""
    out = {}
    for file in json.loads(report.render("json", verbose=True))["files"]:
        for check in file["checks"]:
            if check["rule"].startswith("drift-"):
                feature = check["subject"].split("feature `")[1].split("`")[0]
                out[(feature, check["rule"])] = check["actual"]
    return out


def value(actual: str) -> float:
    return float(actual.split(" ")[0])


def numpy_numeric(ref: np.ndarray, cur: np.ndarray) -> dict[str, float]:
    ref = ref[~np.isnan(ref)]
    cur = cur[~np.isnan(cur)]
    edges = np.quantile(ref, np.arange(1, 10) / 10)
    p = np.bincount(np.searchsorted(edges, ref, side="right"), minlength=10) / len(ref)
    q = np.bincount(np.searchsorted(edges, cur, side="right"), minlength=10) / len(cur)
    return reference_metrics(p, q) | {"drift-ks": float(ks_2samp(ref, cur).statistic)}


def reference_metrics(p: np.ndarray, q: np.ndarray) -> dict[str, float]:
    ps = np.where(p == 0, 1e-4, p)
    qs = np.where(q == 0, 1e-4, q)
    return {
        "drift-psi": float(np.sum((qs - ps) * np.log(qs / ps))),
        "drift-jensen-shannon": float(jensenshannon(p, q, base=2)),
    }


def numpy_categorical(ref: list[str], cur: list[str]) -> dict[str, float]:
    categories = sorted(set(ref))
    p = np.array([ref.count(c) for c in categories] + [0]) / len(ref)
    q = np.array([cur.count(c) for c in categories] + [sum(c not in categories for c in cur)]) / len(cur)
    return reference_metrics(p, q) | {"drift-categories": float(np.max(np.abs(p - q)))}


@pytest.fixture()
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "scores_v1.yaml"
    path.write_text(SCHEMA)
    return path


@pytest.mark.parametrize(("seed", "rows"), [(1, 3017), (2, 3034), (3, 3051), (4, 101), (5, 21), (6, 1001)])
def test_metrics_equal_numpy_and_scipy(schema: Path, seed: int, rows: int) -> None:
    # 21, 101 and 1001 rows put numpy's virtual index (n - 1) * q on whole numbers.
    rng = np.random.default_rng(seed)
    reference = table(rng, rows, 0.0, 0.0)
    current = table(rng, 2000 + seed * 31, 0.15 * seed, 0.02 * seed)
    found = checks(drift(current, schema, reference=reference))
    for feature in ("score", "clicks"):
        ref = reference.column(feature).to_numpy(zero_copy_only=False).astype(float)
        cur = current.column(feature).to_numpy(zero_copy_only=False).astype(float)
        for rule, expected in numpy_numeric(ref, cur).items():
            assert value(found[(feature, rule)]) == pytest.approx(expected, rel=1e-12, abs=1e-15), (feature, rule)
    for feature in ("plan", "tier"):
        ref_values = [str(v) for v in reference.column(feature).to_pylist()]
        cur_values = [str(v) for v in current.column(feature).to_pylist()]
        for rule, expected in numpy_categorical(ref_values, cur_values).items():
            assert value(found[(feature, rule)]) == pytest.approx(expected, rel=1e-12, abs=1e-15), (feature, rule)
    nulls = current.column("score").null_count / len(current) - reference.column("score").null_count / len(reference)
    assert value(found[("score", "drift-null-rate")]) == pytest.approx(nulls, abs=1e-15)
    # Both sample sizes in every finding.
    assert found[("score", "drift-ks")].endswith(
        f"(reference n={len(reference) - reference.column('score').null_count}, "
        f"current n={len(current) - current.column('score').null_count})"
    )
    # The list feature: its missing share only (no distribution to compare).
    assert value(found[("tags", "drift-null-rate")]) == 0
    assert not [key for key in found if key[0] == "tags" and key[1] != "drift-null-rate"]


def test_a_saved_reference_gives_the_raw_references_results(schema: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    reference = table(rng, 5000, 0.0, 0.0)  # `score`: 4900 distinct values, thinned
    current = table(rng, 4000, 0.2, 0.05)
    saved = tmp_path / "reference.json"
    raw = checks(drift(current, schema, reference=reference, save_reference=saved))
    again = checks(drift(current, schema, reference_profile=saved))
    assert raw.keys() == again.keys()
    for key, actual in raw.items():
        if key == ("score", "drift-ks"):
            assert abs(value(actual) - value(again[key])) <= 1 / 2000
        else:
            assert actual == again[key], key
    assert saved.stat().st_size < 200_000  # small: edges, shares, at most 2000 points
    # Saving alone (no current) writes the same profile.
    alone = tmp_path / "alone.json"
    drift(None, schema, reference=reference, save_reference=alone)
    assert json.loads(alone.read_text()) == json.loads(saved.read_text())


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BINARY), "drift", *args], capture_output=True, text=True, timeout=120)


def test_python_and_the_cli_report_the_same(schema: Path, tmp_path: Path) -> None:
    import polars as pl

    rng = np.random.default_rng(11)
    reference = table(rng, 2000, 0.0, 0.0)
    current = table(rng, 1500, 0.5, 0.3)
    pq.write_table(reference, tmp_path / "reference.parquet")
    pq.write_table(current, tmp_path / "current.parquet")
    run = cli(
        "--schemas",
        str(schema),
        "--reference",
        str(tmp_path / "reference.parquet"),
        "--current",
        str(tmp_path / "current.parquet"),
        "--format",
        "json",
        "--verbose",
    )
    assert run.returncode == 1, run.stderr
    from_cli = {
        (c["subject"].split("feature `")[1].split("`")[0], c["rule"]): c["actual"]
        for f in json.loads(run.stdout)["files"]
        for c in f["checks"]
        if c["rule"].startswith("drift-")
    }
    for reference_data, current_data in (
        (tmp_path / "reference.parquet", tmp_path / "current.parquet"),
        (reference, current),
        (pl.from_arrow(reference), current.to_pandas()),
    ):
        report = drift(current_data, schema, reference=reference_data)
        assert checks(report) == from_cli
        assert report.exit_code == 1
        assert {f.rule for f in report.findings} >= {"drift-psi", "drift-ks", "drift-categories"}


def test_identical_data_passes(schema: Path) -> None:
    data = table(np.random.default_rng(5), 1000, 0.0, 0.0)
    report = drift(data, schema, reference=data)
    assert report.exit_code == 0
    assert all(value(actual) == 0 for actual in checks(report).values() if actual[0].isdigit())


def test_bad_input_is_refused_with_a_clear_error(schema: Path, tmp_path: Path) -> None:
    data = table(np.random.default_rng(5), 100, 0.0, 0.0)
    profile = tmp_path / "profile.json"
    for text in ("", "{}", '{"format": "other", "version": 1, "views": {}}', "\x00\xff"):
        profile.write_text(text, errors="surrogateescape")
        with pytest.raises(ArrowfeatValueError, match="reference_profile"):
            drift(data, schema, reference_profile=profile)
        run = cli("--schemas", str(schema), "--reference-profile", str(profile), "--current", str(tmp_path))
        assert run.returncode == 2 and "--reference-profile" in run.stderr, run.stderr
        assert "panicked" not in run.stderr
    with pytest.raises(ArrowfeatValueError, match=r"give the reference: `reference` \(data\)"):
        drift(data, schema)
    # A missing column and unreadable data are findings; exit code 2 for the unreadable.
    report = drift(data.drop_columns(["plan"]), schema, reference=data)
    assert any(f.rule == "data-column-missing" and "plan" in f.message for f in report.findings)
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    report = drift(tmp_path / "broken.parquet", schema, reference=data)
    assert report.exit_code == 2
    assert [f.rule for f in report.findings] == ["data-unreadable"]
    run = cli("--schemas", str(schema), "--reference", str(tmp_path / "missing.parquet"), "--current", str(tmp_path))
    assert run.returncode == 2
    run = cli("--schemas", str(schema), "--reference", str(tmp_path / "x.parquet"))
    assert run.returncode == 2 and "--current" in run.stderr


def test_extremes_are_values_and_nan_is_missing(schema: Path) -> None:
    values = [-math.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308, math.inf, math.nan, None]
    data = table(np.random.default_rng(3), len(values), 0.0, 0.0).set_column(2, "score", pa.array(values, pa.float64()))
    found = checks(drift(data, schema, reference=data))
    assert value(found[("score", "drift-ks")]) == 0.0
    assert value(found[("score", "drift-psi")]) == 0.0
    shifted = data.set_column(2, "score", pa.array([math.inf] * len(values), pa.float64()))
    moved = checks(drift(shifted, schema, reference=data))
    assert value(moved[("score", "drift-ks")]) == pytest.approx(5 / 6)
    assert value(moved[("score", "drift-null-rate")]) == pytest.approx(-0.25)


def test_edges_on_whole_indexes_equal_numpy() -> None:
    """The decile edges of 101 and 21 values are values of the data, exactly as numpy
    computes them, so no value moves to the bin below."""
    import pathlib
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        schema = pathlib.Path(tmp) / "s.yaml"
        schema.write_text(SCHEMA)
        for n in (21, 101):
            data = table(np.random.default_rng(1), n, 0.0, 0.0).set_column(
                2, "score", pa.array(np.arange(n, dtype=float) - 10)
            )
            current = data.set_column(2, "score", pa.array(np.resize([10.0, 20.0, 40.0, 80.0], n)))
            saved = pathlib.Path(tmp) / "p.json"
            drift(current, schema, reference=data, save_reference=saved)
            edges = json.loads(saved.read_text())["views"]["scores_v1"]["features"]["score"]["edges"]
            assert edges == list(np.quantile(np.arange(n, dtype=float) - 10, np.arange(1, 10) / 10))


def test_timestamps_compare_as_instants_whatever_the_unit(tmp_path: Path) -> None:
    schema = tmp_path / "s.yaml"
    schema.write_text(SCHEMA.replace("type: int64\n  - name: plan", "type: timestamp[us, UTC]\n  - name: plan"))
    data = table(np.random.default_rng(2), 500, 0.0, 0.0)
    micros = pa.array(np.arange(500) * 1_000_000 + 1_700_000_000_000_000, pa.timestamp("us", "UTC"))
    reference = data.set_column(3, "clicks", micros)
    current = data.set_column(3, "clicks", micros.cast(pa.timestamp("ns", "UTC")))
    found = checks(drift(current, schema, reference=reference))
    assert value(found[("clicks", "drift-ks")]) == 0.0
    assert value(found[("clicks", "drift-psi")]) == 0.0


def test_no_values_and_wrong_kinds_are_findings(schema: Path, tmp_path: Path) -> None:
    data = table(np.random.default_rng(4), 200, 0.0, 0.0)
    report = drift(data.slice(0, 0), schema, reference=data)
    assert report.exit_code == 1
    assert any("cannot be compared" in f.message for f in report.findings)
    ints = data.set_column(4, "plan", pa.array(np.arange(200) % 2, pa.int64()))
    report = drift(ints, schema, reference=data)
    assert any(f.rule == "data-column-type" and "plan" in f.message for f in report.findings)
    # A reference that lacks a feature is reported as such, and is not saved.
    with pytest.raises(ArrowfeatValueError, match="not saved"):
        drift(data, schema, reference=data.drop_columns(["plan"]), save_reference=tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()
    found = drift(data, schema, reference=data.drop_columns(["plan"]))
    assert [f.rule for f in found.findings if "plan" in f.message] == ["data-column-missing"]


@pytest.mark.parametrize("form", ["csv", "json"])
def test_text_timestamp_features_are_read_in_their_declared_zone(tmp_path: Path, form: str) -> None:
    """A timestamp feature in CSV or JSON, written as naive wall times of its declared
    zone, is the same data as its Parquet copy: no drift."""
    schema = tmp_path / "v.yaml"
    schema.write_text(
        "name: v\nschema_version: 1.0.0\nowner: a@example.com\n"
        "entities: [{name: user, join_key: user_id, type: string}]\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: t, type: 'timestamp[us, America/New_York]'}\n"
    )
    start = 1_767_225_600  # 2026-01-01T00:00:00Z
    instants = [start + 180 * i for i in range(500)]
    zone = pa.timestamp("us", tz="America/New_York")
    table = pa.table(
        {
            "user_id": [f"u{i}" for i in range(500)],
            "ts": pa.array([s * 1_000_000 for s in instants], pa.timestamp("us", tz="UTC")),
            "t": pa.array([s * 1_000_000 for s in instants], zone),
        }
    )
    pq.write_table(table, tmp_path / "ref.parquet")
    wall = pa.compute.local_timestamp(table["t"]).cast(pa.timestamp("s")).cast(pa.string())
    rows = enumerate(zip(table["ts"].cast(pa.string()).to_pylist(), wall.to_pylist(), strict=True))
    if form == "csv":
        lines = ["user_id,ts,t"] + [f"u{i},{s},{w}" for i, (s, w) in rows]
    else:
        lines = [f'{{"user_id": "u{i}", "ts": "{s}", "t": "{w}"}}' for i, (s, w) in rows]
    (tmp_path / f"cur.{form}").write_text("\n".join(lines) + "\n")
    report = drift(tmp_path / f"cur.{form}", schema, reference=tmp_path / "ref.parquet")
    assert [f.message for f in report.findings] == []
    assert report.exit_code == 0


def test_a_column_of_no_values_has_a_null_rate_not_a_type(tmp_path: Path) -> None:
    """A CSV feature column empty in every row (no type) is all nulls: the change in its
    null rate is measured, and a distribution of no values cannot be compared."""
    schema = tmp_path / "v.yaml"
    schema.write_text(
        "name: v\nschema_version: 1.0.0\nowner: a@example.com\n"
        "entities: [{name: user, join_key: user_id, type: string}]\n"
        "event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}\n"
        "features:\n  - {name: m, type: float64}\n"
    )
    (tmp_path / "ref.csv").write_text("user_id,ts,m\nu1,2026-01-01T00:00:00Z,1.5\nu2,2026-01-01T00:00:00Z,2.5\n")
    (tmp_path / "cur.csv").write_text("user_id,ts,m\nu1,2026-01-01T00:00:00Z,\nu2,2026-01-01T00:00:00Z,\n")
    report = drift(tmp_path / "cur.csv", schema, reference=tmp_path / "ref.csv")
    messages = {f.rule: f.message for f in report.findings}
    assert set(messages) == {"drift-null-rate", "drift-psi"}, messages
    assert "2 of 2 now" in messages["drift-null-rate"]
    assert "the current data has no values" in messages["drift-psi"]
