"""`arrowfeat.data.check_data`: the data gate from Python gives the CLI's findings, for a
path and for tables in memory (pyarrow, pandas, Polars, DuckDB)."""

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

from arrowfeat.data import check_data
from arrowfeat.errors import ArrowfeatTypeError, ArrowfeatValueError

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))
SCHEMA = REPO / "examples" / "schemas" / "user_events_v1.yaml"
AS_OF = "2026-11-02T00:00:00+00:00"


def faulty_events() -> pa.Table:
    """The bundled events with one row of each fault appended."""
    events = pq.read_table(REPO / "examples" / "data" / "events.parquet")
    events = events.cast(pa.schema([f.with_nullable(True) for f in events.schema]))
    extra = events.slice(3, 4).to_pylist()
    extra[0] |= {"event_id": 9001, "amount": -5.0, "channel": "tv"}
    extra[1] |= {"event_id": 9002, "user_id": None, "amount": math.nan}
    extra[3] |= {"amount": extra[3]["amount"] + 1}  # conflicts with row 6
    extra[3]["event_id"] = events.column("event_id")[6].as_py()
    extra[3]["user_id"] = events.column("user_id")[6].as_py()
    extra[3]["event_ts"] = events.column("event_ts")[6].as_py()
    return pa.concat_tables([events, pa.Table.from_pylist(extra, schema=events.schema)])


def keyed(findings: Any) -> list[tuple[str, str, int, int, str]]:
    return sorted((f.rule, f.severity, f.line, f.column, f.actual) for f in findings)


def cli_keyed(path: Path) -> list[tuple[str, str, int, int, str]]:
    out = subprocess.run(
        [str(BINARY), "check", "--schemas", str(SCHEMA), "--data", str(path), "--as-of", AS_OF, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(out.stdout)
    return sorted(
        (c["rule"], c["status"], c["line"], c["column"], c["actual"])
        for f in report["files"]
        for c in f["checks"]
        if c["status"] != "pass"
    )


def test_python_and_the_cli_find_the_same(tmp_path: Path) -> None:
    import duckdb
    import polars as pl

    table = faulty_events()
    path = tmp_path / "events.parquet"
    pq.write_table(table, path)
    expected = cli_keyed(path)
    rules = {rule for rule, *_ in expected}
    assert {"data-null", "data-out-of-range", "data-not-allowed", "data-non-finite", "data-conflicting-rows"} <= rules
    as_pandas = table.to_pandas(types_mapper=pd_arrow_dtype())
    relation = duckdb.arrow(table)
    for data in (path, str(path), table, pl.from_arrow(table), as_pandas, table.to_reader()):
        report = check_data(data, SCHEMA, as_of=AS_OF)
        assert keyed(report.findings) == expected, type(data)
        assert report.exit_code == 1
    # DuckDB exports a UTC timestamp in its zone name `Etc/UTC`: the same instants, a
    # compatible type (a warning), and otherwise the same findings.
    found = keyed(check_data(relation, SCHEMA, as_of=AS_OF).findings)
    zone = [f for f in found if f[0] == "data-column-type"]
    assert [(f[1], f[4]) for f in zone] == [("warning", "timestamp[us, Etc/UTC]")]
    assert [f for f in found if f[0] != "data-column-type"] == expected
    named = check_data({"user_events_v1": table}, SCHEMA, as_of=AS_OF)
    assert keyed(named.findings) == expected
    assert "data[" in named.findings[0].message or "of data" in named.findings[0].message


def pd_arrow_dtype() -> Any:
    import pandas as pd

    return pd.ArrowDtype


def test_clean_data_passes_and_samples_are_bounded() -> None:
    events = pq.read_table(REPO / "examples" / "data" / "events.parquet")
    report = check_data(events, SCHEMA, as_of="2026-11-02T00:00:00")
    assert report.ok and report.findings == [], report.findings
    # Data for a view no schema declares is refused, not checked against nothing.
    with pytest.raises(ValueError, match="view `user_events_v1x` is given data, but no schema file declares it"):
        check_data({"user_events_v1x": events}, SCHEMA, as_of="2026-11-02T00:00:00")
    with pytest.raises(ValueError, match=r"^check_data: argument `as_of`"):
        check_data(events, SCHEMA, as_of="yesterday")
    # NumPy's bools are yes/no arguments too.
    assert check_data(events, SCHEMA, as_of="2026-11-02T00:00:00", data_from_store=np.False_).ok
    assert check_data(events, SCHEMA, as_of="2026-11-02T00:00:00", baseline=np.False_).ok
    with pytest.raises(
        TypeError, match="check_data: argument `baseline`: expected a file path, None or False, found int"
    ):
        check_data(events, SCHEMA, baseline=5)
    faulty = faulty_events()
    bad = events.set_column(events.schema.get_field_index("channel"), "channel", pa.array(["tv"] * events.num_rows))
    found = check_data(bad, SCHEMA, as_of=AS_OF, sample_rows=2)
    [not_allowed] = [f for f in found.findings if f.rule == "data-not-allowed"]
    assert not_allowed.message.count('channel="tv"') == 2
    assert check_data(faulty, SCHEMA, as_of=AS_OF, sample_rows=0).findings
    # A memory limit spills what does not fit; the report is the same.
    unlimited = check_data(faulty, SCHEMA, as_of=AS_OF).render("json")
    for limit in ("16MiB", 4 << 20):
        assert check_data(faulty, SCHEMA, as_of=AS_OF, memory_limit=limit).render("json") == unlimited


def test_refusals_name_the_argument(tmp_path: Path) -> None:
    import polars as pl

    with pytest.raises(ArrowfeatTypeError, match="argument `data`: expected a path or a table"):
        check_data(42, SCHEMA)
    with pytest.raises(ArrowfeatTypeError, match=r"LazyFrame; call \.collect\(\)"):
        check_data(pl.DataFrame({"a": [1]}).lazy(), SCHEMA)
    with pytest.raises(ArrowfeatValueError, match="argument `sample_rows`"):
        check_data(tmp_path, SCHEMA, sample_rows=-1)
    with pytest.raises(ArrowfeatValueError, match="argument `as_of`"):
        check_data(tmp_path, SCHEMA, as_of="yesterday")
    with pytest.raises(ArrowfeatValueError, match="argument `memory_limit`: expected a size"):
        check_data(tmp_path, SCHEMA, memory_limit="lots")
    with pytest.raises(ArrowfeatTypeError, match="argument `memory_limit`"):
        check_data(tmp_path, SCHEMA, memory_limit=0)
    missing = check_data(tmp_path / "none.parquet", SCHEMA, as_of=AS_OF)
    assert [f.rule for f in missing.findings] == ["data-unreadable"]
    assert missing.exit_code == 2


def test_a_reader_panic_is_a_finding_and_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The Parquet crate panics on some corrupt footers: the gate turns that into a
    data-unreadable finding, and Rust's panic line does not reach stderr."""
    corrupt = tmp_path / "events.parquet"
    corrupt.write_bytes((REPO / "tests" / "fixtures" / "corrupt" / "footer-panics-reader.parquet").read_bytes())
    report = check_data(corrupt, SCHEMA, as_of=AS_OF)
    [finding] = [f for f in report.findings if f.severity == "error"]
    assert finding.rule == "data-unreadable"
    assert "the file is most likely corrupt" in finding.message
    assert report.exit_code == 2
    captured = capfd.readouterr()
    assert "panicked" not in captured.err and "RUST_BACKTRACE" not in captured.err, captured.err
