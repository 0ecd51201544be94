"""The data gate side by side: `arrowfeat check --data` against hand-written DuckDB and
DataFusion SQL, pandera (Polars backend) and Great Expectations (pandas), each counting
the same statistics over the same Parquet file, and each cross-checked against
arrowfeat's JSON report.

    .venv/bin/python python/benchmarks/bench_data_gate.py [--rows N] [--repeat N]
        [--timeout SECONDS] [--only NAME[,NAME]] [--binary PATH]

Setup, once. This script, arrowfeat, DuckDB and DataFusion run with the main venv
(.venv: pyarrow, numpy, polars, duckdb, datafusion 55). pandera and Great Expectations
are not in it: they run from a venv of their own, so that the main one stays clean
(every contender runs as a subprocess with its own interpreter; this file imports only
the standard library at the top, so both venvs can run it as a worker):

    python3 -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install 'pandera[polars]==0.35.*' 'great_expectations==1.*' \\
        polars pyarrow pandas duckdb

(tested with pandera 0.35.0, great_expectations 1.24.1, polars 2.1.0, pandas 3.1.1,
pyarrow 26.0.1; --peer-python picks another interpreter). Build the CLI in release mode
first (`cargo build --release --locked -p arrowfeat-cli`): the binary is
target/release/arrowfeat, else target/debug/arrowfeat (its timings are not
representative), or --binary.

Data (generated once, deterministically, cached under /tmp/bench_data_gate/ by row count):
ROWS rows (default 10M) of 20 columns: an int64 entity key drawn from Zipf(1.3) over 1M
keys (the hottest key holds a quarter of the rows), a microsecond UTC event time at
millisecond resolution over 92 days up to AS_OF, a created time up to an hour later, 10
float64, 4 int64, 2 string and 1 bool features. Every column is constrained in the schema
(non-null, min/max, allowed_values; TTL 7 days), and a small share of faults is injected
in each: nulls, NaN, +inf, -inf, values out of range or not allowed, events after AS_OF,
created times before the event, rows whose key and event time copy another row's
(conflicts; hot keys also collide at millisecond resolution) and exact copies of rows
(duplicates).

Statistics (what `arrowfeat check --data` counts, docs/ci.md "Checking the data"): per
column, nulls in non-nullable columns, NaN / +inf / -inf in float columns, values below
min / above max (NaN neither), non-null values outside allowed_values; event times after
AS_OF; created times before the event time; duplicate rows (rows minus distinct rows over
every declared column); conflicting groups (keys and event time with rows that differ);
keys whose latest event is older than the TTL at AS_OF. DuckDB and DataFusion compute
all of them. pandera and Great Expectations compute what their checks can express:

- pandera's `nullable=False` fails nulls and NaN alike, `in_range` fails NaN too: each
  is split by the failure case's value. Its `unique=` flags every row of a duplicate group
  (first occurrences included), over every declared column and (a custom wide check) over
  keys and event time: `dup_group_rows` and `keytime_group_rows`, which arrowfeat does not
  report; they are checked against an untimed DuckDB reference query.
- Great Expectations reads pandas' default (NumPy) dtypes, where NaN is null: its
  not-null count is nulls plus NaN, "between" is below plus above, +inf and -inf are one
  two-sided "between" (+-DBL_MAX). Duplicates as pandera.
- Neither can express conflicting groups or stale keys (both need an aggregate per key):
  their timings leave that work out.

Timing: the best of --repeat runs (default 3). arrowfeat's time is the whole process
(`arrowfeat-nosample` is the same run with `--data-sample 0`: no sampled rows;
`arrowfeat-512mib` with `--memory-limit 512MiB`: queries spill past 512 MiB); the Python contenders' time is measured inside the worker, from
before reading the file to the counts (interpreter start and imports excluded; "process"
includes them). A run past --timeout seconds (default 900) is killed and reported
"> timeout"; a run over SLOW_RUN seconds is not repeated. Peak memory is the process's
maximum RSS (wait4, from a small launcher process: about 10 MiB is the floor), also
divided by the data's decompressed size (the sum of its Arrow buffers read with pyarrow).
Every engine may use every core (pandas and Great Expectations use one).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
PEER_PYTHON = Path("/tmp/benchvenv/bin/python")
CACHE = Path("/tmp/bench_data_gate")
GENERATOR_VERSION = 1
SEED = 20260101
SLOW_RUN = 300.0
REFERENCE_TIMEOUT = 86_400.0  # the untimed runs that give the reference counts
# arrowfeat-nosample: `--data-sample 0`, without the query per finding that samples rows.
CONTENDERS = ["arrowfeat", "arrowfeat-nosample", "arrowfeat-512mib", "duckdb", "datafusion", "pandera", "gx"]

US = 1_000_000
DAY_US = 86_400 * US
AS_OF = "2026-01-01T00:00:00Z"
AS_OF_US = 1_767_225_600 * US  # 2026-01-01T00:00:00Z
TTL_DAYS = 7
CUTOFF = "2025-12-25T00:00:00Z"  # AS_OF - TTL
START_US = AS_OF_US - 92 * DAY_US  # 2025-10-01T00:00:00Z
DISTINCT_KEYS = 1_000_000
ZIPF_A = 1.3
FAULT_RATE = 5e-4  # per fault kind and column
CONFLICT_RATE = 5e-4
DUPLICATE_RATE = 1e-3
DBL_MAX = 1.7976931348623157e308

KEY = "user_id"
EVENT = "event_ts"
CREATED = "created_ts"
FLOATS: list[tuple[str, float, float]] = [
    ("amount", 0.0, 10_000.0),
    ("rate", 0.0, 1.0),
    ("score", -5.0, 5.0),
    ("lat", -90.0, 90.0),
    ("lon", -180.0, 180.0),
    ("ctr", 0.0, 1.0),
    ("temperature", -60.0, 60.0),
    ("speed", 0.0, 300.0),
    ("balance", -1_000_000.0, 1_000_000.0),
    ("risk", 0.0, 100.0),
]
INTS: list[tuple[str, int, int]] = [
    ("count_7d", 0, 1000),
    ("age", 13, 120),
    ("items", 1, 50),
    ("tenure_days", 0, 36_500),
]
STRINGS: list[tuple[str, list[str]]] = [
    ("channel", ["web", "ios", "android", "pos"]),
    ("country", ["US", "GB", "FR", "DE", "JP", "BR", "IN", "MX"]),
]
DISALLOWED = ["", "unknown", "Web"]
BOOL = ("is_test", [False])


# ---------------------------------------------------------------------------------------
# The schema: one description, written as the YAML arrowfeat reads and the JSON the
# workers read.


def spec() -> dict[str, Any]:
    columns: list[dict[str, Any]] = [
        {"name": KEY, "kind": "key", "nullable": False},
        {"name": EVENT, "kind": "event", "nullable": False},
        {"name": CREATED, "kind": "created", "nullable": True},
    ]
    columns += [{"name": n, "kind": "float", "nullable": False, "min": lo, "max": hi} for n, lo, hi in FLOATS]
    columns += [{"name": n, "kind": "int", "nullable": False, "min": lo, "max": hi} for n, lo, hi in INTS]
    columns += [{"name": n, "kind": "string", "nullable": False, "allowed": a} for n, a in STRINGS]
    columns.append({"name": BOOL[0], "kind": "bool", "nullable": False, "allowed": BOOL[1]})
    return {
        "key": KEY,
        "event": EVENT,
        "created": CREATED,
        "as_of": AS_OF,
        "cutoff": CUTOFF,
        "columns": columns,
    }


def schema_yaml() -> str:
    types = {"float": "float64", "int": "int64", "string": "string", "bool": "bool"}
    lines = [
        "# Generated by python/benchmarks/bench_data_gate.py: every column constrained.",
        "name: bench_events_v1",
        "schema_version: 1.0.0",
        "owner: bench@example.com",
        "entities:",
        "  - name: user",
        f"    join_key: {KEY}",
        "    type: int64",
        "event_timestamp:",
        f"  name: {EVENT}",
        "  type: timestamp",
        "  unit: us",
        "  tz: UTC",
        "created_timestamp:",
        f"  name: {CREATED}",
        f"ttl: {TTL_DAYS}d",
        "features:",
    ]
    for c in spec()["columns"]:
        if c["kind"] not in types:
            continue
        lines += [
            f"  - name: {c['name']}",
            f"    type: {types[c['kind']]}",
            f"    nullable: {str(c['nullable']).lower()}",
        ]
        if "min" in c:
            lines.append(f"    constraints: {{min: {c['min']}, max: {c['max']}}}")
        if "allowed" in c:
            values = ", ".join(json.dumps(v) for v in c["allowed"])
            lines.append(f"    constraints: {{allowed_values: [{values}]}}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# The data.


def generate_main(rows: int, data: Path) -> None:
    """Writes the data and its metadata (rows, decompressed and file size)."""
    import pyarrow.parquet as pq

    generate(rows, data)
    table = pq.read_table(data)
    meta = {"rows": table.num_rows, "decompressed_bytes": table.nbytes, "file_bytes": data.stat().st_size}
    data.with_suffix(".meta.json").write_text(json.dumps(meta))


def generate(rows: int, path: Path) -> None:
    """ROWS rows with faults injected, written to `path` (deterministic for a row count)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    n = rows
    k = max(1, round(n * FAULT_RATE))

    def at(count: int) -> np.ndarray:
        return rng.integers(0, n, max(1, count))

    values: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}

    def null_mask(name: str, count: int) -> None:
        mask = np.zeros(n, dtype=bool)
        mask[at(count)] = True
        nulls[name] = mask

    values[KEY] = ((rng.zipf(ZIPF_A, n) - 1) % DISTINCT_KEYS).astype(np.int64)
    null_mask(KEY, k // 10)
    event = START_US + rng.integers(0, (AS_OF_US - START_US) // 1000, n) * 1000
    created = event + rng.integers(0, 3_600_000, n) * 1000
    event[at(k)] = AS_OF_US + rng.integers(1, 30 * 86_400_000, max(1, k)) * 1000
    before = at(k)
    created[before] = event[before] - rng.integers(1, 3_600_000, len(before)) * 1000
    values[EVENT], values[CREATED] = event, created
    null_mask(EVENT, k // 10)
    null_mask(CREATED, k)

    for name, lo, hi in FLOATS:
        v = rng.uniform(lo, hi, n)
        span = hi - lo
        v[at(k)] = np.nan
        v[at(k // 5)] = np.inf
        v[at(k // 5)] = -np.inf
        v[at(k)] = lo - span * rng.uniform(0.001, 1.0, max(1, k))
        v[at(k)] = hi + span * rng.uniform(0.001, 1.0, max(1, k))
        values[name] = v
        null_mask(name, k)
    for name, ilo, ihi in INTS:
        iv = rng.integers(ilo, ihi + 1, n)
        ispan = ihi - ilo + 1
        iv[at(k)] = ilo - 1 - rng.integers(0, ispan, max(1, k))
        iv[at(k)] = ihi + 1 + rng.integers(0, ispan, max(1, k))
        values[name] = iv
        null_mask(name, k)
    for name, allowed in STRINGS:
        weights = 1.0 / np.arange(1, len(allowed) + 1)
        codes = rng.choice(len(allowed), n, p=weights / weights.sum()).astype(np.int32)
        codes[at(k)] = len(allowed) + rng.integers(0, len(DISALLOWED), max(1, k))
        values[name] = codes
        null_mask(name, k)
    flag = np.zeros(n, dtype=bool)
    flag[at(k)] = True
    values[BOOL[0]] = flag
    null_mask(BOOL[0], k)

    # Conflicts: another row's key and event time; then exact copies of rows.
    src, dst = at(round(n * CONFLICT_RATE)), at(round(n * CONFLICT_RATE))
    for name in (KEY, EVENT):
        values[name][dst] = values[name][src]
        nulls[name][dst] = nulls[name][src]
    src, dst = at(round(n * DUPLICATE_RATE)), at(round(n * DUPLICATE_RATE))
    for name in values:
        values[name][dst] = values[name][src]
        nulls[name][dst] = nulls[name][src]

    arrays: dict[str, pa.Array] = {}
    for c in spec()["columns"]:
        name, kind = c["name"], c["kind"]
        mask = nulls[name]
        if kind in ("event", "created"):
            arrays[name] = pa.array(values[name], pa.int64(), mask=mask).cast(pa.timestamp("us", tz="UTC"))
        elif kind == "string":
            dictionary = pa.array(c["allowed"] + DISALLOWED, pa.string())
            indices = pa.array(values[name], pa.int32(), mask=mask)
            arrays[name] = pa.DictionaryArray.from_arrays(indices, dictionary).cast(pa.string())
        else:
            arrays[name] = pa.array(values[name], mask=mask)
    table = pa.table(arrays)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.rename(path)


def prepare(rows: int) -> tuple[Path, Path, Path, dict[str, Any]]:
    """The cached data file, schema YAML, worker spec and metadata for `rows`."""
    CACHE.mkdir(parents=True, exist_ok=True)
    stem = CACHE / f"events_v{GENERATOR_VERSION}_{rows}"
    data, schema, spec_path, meta_path = (
        stem.with_suffix(".parquet"),
        stem.with_suffix(".yaml"),
        stem.with_suffix(".spec.json"),
        stem.with_suffix(".meta.json"),
    )
    schema.write_text(schema_yaml())
    spec_path.write_text(json.dumps(spec(), indent=1))
    if not data.exists() or not meta_path.exists():
        # In a process of its own: the harness stays small while the contenders run.
        print(f"generating {rows:,} rows into {data} ...", flush=True)
        started = time.perf_counter()
        command = [sys.executable, str(Path(__file__).resolve()), "--rows", str(rows), "--generate-into", str(data)]
        subprocess.run(command, check=True)
        print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    return data, schema, spec_path, json.loads(meta_path.read_text())


# ---------------------------------------------------------------------------------------
# Workers: each runs in its own process and prints {"seconds", "stats", "versions"}.


def sql_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def value_checks(s: dict[str, Any], timestamp: Callable[[str], str]) -> list[tuple[str, str]]:
    """(statistic, SQL condition) of every per-row check; `timestamp` formats a UTC time
    literal in the dialect."""
    checks: list[tuple[str, str]] = []
    for c in s["columns"]:
        q = sql_ident(c["name"])
        if not c["nullable"]:
            checks.append((f"null:{c['name']}", f"{q} IS NULL"))
        if c["kind"] == "float":
            checks += [
                (f"nan:{c['name']}", f"isnan({q})"),
                (f"posinf:{c['name']}", f"{q} = CAST('inf' AS DOUBLE)"),
                (f"neginf:{c['name']}", f"{q} = CAST('-inf' AS DOUBLE)"),
            ]
        if "min" in c:
            nan = f" AND NOT isnan({q})" if c["kind"] == "float" else ""
            checks += [
                (f"below:{c['name']}", f"{q} < {sql_literal(c['min'])}{nan}"),
                (f"above:{c['name']}", f"{q} > {sql_literal(c['max'])}{nan}"),
            ]
        if "allowed" in c:
            values = ", ".join(sql_literal(v) for v in c["allowed"])
            checks.append((f"not_allowed:{c['name']}", f"{q} NOT IN ({values})"))
    event, created = sql_ident(s["event"]), sql_ident(s["created"])
    checks.append((f"future:{s['event']}", f"{event} > {timestamp(s['as_of'])}"))
    checks.append((f"created_before_event:{s['created']}", f"{created} < {event}"))
    return checks


def sql_queries(s: dict[str, Any], timestamp: Callable[[str], str]) -> dict[str, str]:
    """The hand-written queries: one scan for the value checks, one for duplicates and
    conflicts, one for stale keys (as arrowfeat plans them)."""
    checks = value_checks(s, timestamp)
    counts = ", ".join(f"count(*) FILTER (WHERE {cond}) AS {sql_ident(stat)}" for stat, cond in checks)
    columns = ", ".join(sql_ident(c["name"]) for c in s["columns"])
    keys = f"{sql_ident(s['key'])}, {sql_ident(s['event'])}"
    return {
        "values": f"SELECT count(*) AS {sql_ident('rows')}, {counts} FROM data",
        "duplicates": f"""
            SELECT sum(versions) AS distinct_rows, count(*) FILTER (WHERE versions > 1) AS conflicting
            FROM (SELECT {keys}, count(*) AS versions FROM (SELECT DISTINCT {columns} FROM data) d GROUP BY {keys}) g
        """,
        "stale": f"""
            SELECT count(*) AS keys, count(*) FILTER (WHERE latest < {timestamp(s["cutoff"])}) AS stale_keys
            FROM (SELECT {sql_ident(s["key"])}, max({sql_ident(s["event"])}) AS latest FROM data GROUP BY {sql_ident(s["key"])}) k
        """,
    }


def sql_stats(rows: list[dict[str, Any]]) -> dict[str, int]:
    values, duplicates, stale = rows
    stats = {name: int(v) for name, v in values.items()}
    stats["duplicates"] = stats["rows"] - int(duplicates["distinct_rows"])
    stats["conflicting"] = int(duplicates["conflicting"])
    stats["keys"] = int(stale["keys"])
    stats["stale_keys"] = int(stale["stale_keys"])
    return stats


def worker_duckdb(data: str, s: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    import duckdb

    queries = sql_queries(s, lambda t: f"TIMESTAMPTZ '{t}'")
    con = duckdb.connect()
    con.execute(f"CREATE VIEW data AS SELECT * FROM read_parquet({sql_literal(data)})")

    def one(sql: str) -> dict[str, Any]:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        row = cursor.fetchone()
        assert row is not None
        return dict(zip(names, row, strict=True))

    stats = sql_stats([one(queries[q]) for q in ("values", "duplicates", "stale")])
    return stats, {"duckdb": duckdb.__version__}


def worker_datafusion(data: str, s: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    import datafusion

    queries = sql_queries(s, lambda t: f"TIMESTAMP '{t}'")
    ctx = datafusion.SessionContext()
    ctx.register_parquet("data", data)

    def one(sql: str) -> dict[str, Any]:
        rows = ctx.sql(sql).to_pylist()
        return dict(rows[0])

    stats = sql_stats([one(queries[q]) for q in ("values", "duplicates", "stale")])
    return stats, {"datafusion": datafusion.__version__}


def worker_reference(data: str, s: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    """Untimed: the statistics of pandera and Great Expectations that arrowfeat does not
    report (rows in groups of two or more, first occurrences included)."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE VIEW data AS SELECT * FROM read_parquet({sql_literal(data)})")
    columns = ", ".join(sql_ident(c["name"]) for c in s["columns"])
    keys = f"{sql_ident(s['key'])}, {sql_ident(s['event'])}"
    stats: dict[str, int] = {}
    for stat, by in (("dup_group_rows", columns), ("keytime_group_rows", keys)):
        sql = f"SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM data GROUP BY {by} HAVING count(*) > 1)"
        row = con.execute(sql).fetchone()
        assert row is not None
        stats[stat] = int(row[0])
    return stats, {"duckdb": duckdb.__version__}


def worker_pandera(data: str, s: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    import datetime as dt

    import pandera
    import pandera.polars as pa
    import polars as pl

    assert os.environ.get("PANDERA_VALIDATION_DEPTH") == "SCHEMA_AND_DATA"
    dtypes = {"key": pl.Int64, "float": pl.Float64, "int": pl.Int64, "string": pl.String, "bool": pl.Boolean}
    as_of = dt.datetime.fromisoformat(s["as_of"])
    key, event, created = s["key"], s["event"], s["created"]

    def finite(data: Any) -> Any:
        return data.lazyframe.select(pl.col(data.key).is_infinite().not_())

    def created_not_before_event(data: Any) -> Any:
        c, e = pl.col(created), pl.col(event)
        return data.lazyframe.select((c >= e) | c.is_null() | e.is_null())

    def keys_and_time_unique(data: Any) -> Any:
        return data.lazyframe.select(pl.struct(key, event).is_duplicated().not_())

    columns: dict[str, Any] = {}
    for c in s["columns"]:
        checks: list[Any] = []
        if c["kind"] == "float":
            checks.append(pa.Check(finite, name="finite"))
        if "min" in c:
            checks.append(pa.Check.in_range(c["min"], c["max"]))
        if "allowed" in c:
            checks.append(pa.Check.isin(c["allowed"]))
        if c["kind"] == "event":
            checks.append(pa.Check.le(as_of))
        dtype = pl.Datetime("us", "UTC") if c["kind"] in ("event", "created") else dtypes[c["kind"]]
        columns[c["name"]] = pa.Column(dtype, nullable=c["nullable"], checks=checks)
    schema = pa.DataFrameSchema(
        columns,
        unique=[c["name"] for c in s["columns"]],
        checks=[
            pa.Check(created_not_before_event, name="created_not_before_event"),
            pa.Check(keys_and_time_unique, name="keys_and_time_unique"),
        ],
    )

    df = pl.read_parquet(data)
    stats: dict[str, int] = {"rows": df.height}
    try:
        schema.validate(df, lazy=True)
        return stats, {}
    except pa.errors.SchemaErrors as errors:
        failures = errors.failure_cases
    # One statistic per failure case, from its check and (for nulls, ranges and
    # infinities) its value.
    bounds = pl.DataFrame(
        {
            "column": [c["name"] for c in s["columns"] if "min" in c],
            "lo": [float(c["min"]) for c in s["columns"] if "min" in c],
            "hi": [float(c["max"]) for c in s["columns"] if "min" in c],
        }
    )
    check, value = pl.col("check"), pl.col("failure_case")
    number = value.cast(pl.Float64, strict=False)
    kind = (
        pl.when(check == "not_nullable")
        .then(pl.when(value.is_null()).then(pl.lit("null")).otherwise(pl.lit("nan")))
        .when(check == "finite")
        .then(pl.when(number > 0).then(pl.lit("posinf")).otherwise(pl.lit("neginf")))
        .when(check.str.starts_with("in_range"))
        .then(
            pl.when(number.is_nan())
            .then(pl.lit(None))  # counted as nan by not_nullable
            .when(number < pl.col("lo"))
            .then(pl.lit("below"))
            .when(number > pl.col("hi"))
            .then(pl.lit("above"))
        )
        .when(check.str.starts_with("isin"))
        .then(pl.lit("not_allowed"))
        .when(check.str.starts_with("less_than_or_equal_to"))
        .then(pl.lit("future"))
        .when(check == "created_not_before_event")
        .then(pl.lit("created_before_event"))
        .when(check == "multiple_fields_uniqueness")
        .then(pl.lit("dup_group_rows"))
        .when(check == "keys_and_time_unique")
        .then(pl.lit("keytime_group_rows"))
        .otherwise(pl.lit("unknown-") + check)
    )
    counted = (
        failures.join(bounds, on="column", how="left")
        .with_columns(kind=kind)
        .filter(pl.col("kind").is_not_null())
        .group_by("kind", "column")
        .len()
    )
    for row in counted.iter_rows(named=True):
        if row["kind"].endswith("group_rows"):
            stats[row["kind"]] = row["len"]
        elif row["kind"] == "created_before_event":
            stats[f"created_before_event:{created}"] = row["len"]
        else:
            stats[f"{row['kind']}:{row['column']}"] = row["len"]
    return stats, {"pandera": pandera.__version__, "polars": pl.__version__}


def worker_gx(data: str, s: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    import datetime as dt
    import logging

    import great_expectations as gx
    import pandas as pd

    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    expect = gx.expectations
    context = gx.get_context(mode="ephemeral")
    batch = (
        context.data_sources.add_pandas("bench")
        .add_dataframe_asset("events")
        .add_batch_definition_whole_dataframe("whole")
    )
    suite = gx.ExpectationSuite(name="bench_events_v1")

    def add(stat: str, expectation: type[Any], **kwargs: Any) -> None:
        suite.add_expectation(expectation(meta={"stat": stat}, **kwargs))

    for c in s["columns"]:
        name = c["name"]
        if not c["nullable"]:
            nulls = f"null+nan:{name}" if c["kind"] == "float" else f"null:{name}"
            add(nulls, expect.ExpectColumnValuesToNotBeNull, column=name)
        if c["kind"] == "float":
            add(
                f"posinf+neginf:{name}",
                expect.ExpectColumnValuesToBeBetween,
                column=name,
                min_value=-DBL_MAX,
                max_value=DBL_MAX,
            )
        if "min" in c:
            add(
                f"below+above:{name}",
                expect.ExpectColumnValuesToBeBetween,
                column=name,
                min_value=c["min"],
                max_value=c["max"],
            )
        if "allowed" in c:
            add(f"not_allowed:{name}", expect.ExpectColumnValuesToBeInSet, column=name, value_set=c["allowed"])
    as_of = dt.datetime.fromisoformat(s["as_of"])
    add(f"future:{s['event']}", expect.ExpectColumnValuesToBeBetween, column=s["event"], max_value=as_of)
    add(
        f"created_before_event:{s['created']}",
        expect.ExpectColumnPairValuesAToBeGreaterThanB,
        column_A=s["created"],
        column_B=s["event"],
        or_equal=True,
        ignore_row_if="either_value_is_missing",
    )
    declared = [c["name"] for c in s["columns"]]
    add("dup_group_rows", expect.ExpectCompoundColumnsToBeUnique, column_list=declared)
    add("keytime_group_rows", expect.ExpectCompoundColumnsToBeUnique, column_list=[s["key"], s["event"]])
    suite = context.suites.add(suite)
    validation = context.validation_definitions.add(gx.ValidationDefinition(name="bench", data=batch, suite=suite))

    df = pd.read_parquet(data)
    result = validation.run(batch_parameters={"dataframe": df}, result_format="SUMMARY")
    stats: dict[str, int] = {"rows": len(df)}
    for r in result.results:
        if r.exception_info.get("raised_exception"):
            raise RuntimeError(f"{r.expectation_config.type}: {r.exception_info.get('exception_message')}")
        stats[r.expectation_config.meta["stat"]] = int(r.result.get("unexpected_count") or 0)
    return stats, {"great_expectations": gx.__version__, "pandas": pd.__version__}


WORKERS = {
    "duckdb": worker_duckdb,
    "datafusion": worker_datafusion,
    "pandera": worker_pandera,
    "gx": worker_gx,
    "reference": worker_reference,
}


# The libraries each worker imports, loaded before its clock starts (interpreter start
# and imports are in "process", not in "time").
WORKER_IMPORTS = {
    "duckdb": ["duckdb"],
    "datafusion": ["datafusion"],
    "reference": ["duckdb"],
    "pandera": ["pandera", "pandera.polars", "polars"],
    "gx": ["great_expectations", "pandas"],
}


def worker_main(name: str, data: str, spec_path: str) -> None:
    import importlib

    s = json.loads(Path(spec_path).read_text())
    for module in WORKER_IMPORTS.get(name, []):
        importlib.import_module(module)
    started = time.perf_counter()
    stats, versions = WORKERS[name](data, s)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "stats": stats, "versions": versions}))


# ---------------------------------------------------------------------------------------
# arrowfeat's report as statistics.

SUBJECT = re.compile(r"^data .*?: (?:entity key|event timestamp|created timestamp|feature) `([^`]*)`: (.*)$")
KINDS = [
    ("null values", "null"),
    ("NaN values", "nan"),
    ("+inf values", "posinf"),
    ("-inf values", "neginf"),
    ("values below min", "below"),
    ("values above max", "above"),
    ("values not in allowed_values", "not_allowed"),
    ("event times after", "future"),
    ("created times earlier than", "created_before_event"),
]


def arrowfeat_stats(report: dict[str, Any]) -> dict[str, int]:
    stats: dict[str, int] = {}
    for file in report["files"]:
        for check in file["checks"]:
            rule, subject, actual = check["rule"], check["subject"], check["actual"]
            if not rule.startswith("data-"):
                continue
            if rule in ("data-column-type", "data-column-missing"):
                if check["status"] != "pass":
                    raise SystemExit(f"arrowfeat: {subject}: {check['message']}")
                continue
            count, _, whole = actual.partition(" of ")
            if rule == "data-stale-keys":
                stats["stale_keys"] = int(count)
                if whole:
                    stats["keys"] = int(whole)
                continue
            if rule == "data-duplicate-rows":
                stats["duplicates"] = int(count)
                continue
            if rule == "data-conflicting-rows":
                stats["conflicting"] = int(count)
                continue
            match = SUBJECT.match(subject)
            kind = next((k for prefix, k in KINDS if match and match.group(2).startswith(prefix)), None)
            if match is None or kind is None:
                raise SystemExit(f"arrowfeat: unexpected finding {rule}: {subject}")
            stats[f"{kind}:{match.group(1)}"] = int(count)
            if whole:
                stats["rows"] = int(whole)
    return stats


# ---------------------------------------------------------------------------------------
# The harness.


@dataclass
class Run:
    wall: float
    max_rss: int  # bytes
    exit_code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str


@dataclass
class Result:
    name: str
    seconds: float | None = None
    process: float | None = None
    max_rss: int = 0
    runs: int = 0
    timed_out: bool = False
    error: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


# Runs its command and writes the wall time, exit status and maximum RSS to a file. A
# child's maximum RSS starts at its parent's (the kernel carries the address space's
# high-water mark over exec), so the command is started by this small process rather
# than by the harness, which may hold much more.
LAUNCHER = """
import json, os, sys, time
started = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
with open(sys.argv[1], "w") as f:
    json.dump({"wall": wall, "exit_code": os.waitstatus_to_exitcode(status), "max_rss_kib": usage.ru_maxrss}, f)
"""


def run_process(argv: list[str], timeout: float, env: dict[str, str], cwd: Path) -> Run:
    """`argv` to completion or `timeout`: wall time and maximum RSS (wait4)."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r", suffix=".json") as answer,
    ):
        launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER, answer.name, *argv]
        process = subprocess.Popen(launcher, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.seek(0)
        err.seek(0)
        text = answer.read()
        measured = json.loads(text) if text else {"wall": timeout, "exit_code": None, "max_rss_kib": 0}
        return Run(
            wall=measured["wall"],
            max_rss=measured["max_rss_kib"] * 1024,
            exit_code=measured["exit_code"],
            stdout=out.read(),
            stderr=err.read(),
        )


def contender_argv(name: str, args: argparse.Namespace, data: Path, schema: Path, spec_path: Path) -> list[str]:
    if name.startswith("arrowfeat"):
        return [
            str(args.binary),
            "check",
            "--schemas",
            str(schema),
            "--data",
            str(data),
            "--as-of",
            AS_OF,
            "--format",
            "json",
            "--no-baseline",
            *(["--data-sample", "0"] if name == "arrowfeat-nosample" else []),
            *(["--memory-limit", "512MiB"] if name == "arrowfeat-512mib" else []),
        ]
    python = args.peer_python if name in ("pandera", "gx") else args.main_python
    return [str(python), str(Path(__file__).resolve()), "--worker", name, "--data", str(data), "--spec", str(spec_path)]


def measure(
    name: str,
    args: argparse.Namespace,
    data: Path,
    schema: Path,
    spec_path: Path,
    repeat: int,
    timeout: float | None = None,
) -> Result:
    env = dict(os.environ, PANDERA_VALIDATION_DEPTH="SCHEMA_AND_DATA", GX_ANALYTICS_ENABLED="False")
    argv = contender_argv(name, args, data, schema, spec_path)
    return run_contender(name, argv, env, args, repeat, timeout, arrowfeat_stats)


def run_contender(
    name: str,
    argv: list[str],
    env: dict[str, str],
    args: argparse.Namespace,
    repeat: int,
    timeout: float | None,
    arrowfeat_stats: Callable[[dict[str, Any]], dict[str, Any]],
) -> Result:
    """The best of `repeat` runs of `argv` (one only past SLOW_RUN seconds): arrowfeat's
    whole process, its JSON report read by `arrowfeat_stats`; a worker's own timing and
    statistics from its last line of JSON."""
    result = Result(name)
    for _ in range(repeat):
        run = run_process(argv, args.timeout if timeout is None else timeout, env, CACHE)
        result.runs += 1
        result.max_rss = max(result.max_rss, run.max_rss)
        if run.exit_code is None:
            result.timed_out = True
            break
        ok = run.exit_code in (0, 1) if name.startswith("arrowfeat") else run.exit_code == 0
        if not ok:
            tail = (run.stderr or run.stdout).strip().splitlines()[-5:]
            result.error = f"exit {run.exit_code}: " + " | ".join(tail)
            break
        if name.startswith("arrowfeat"):
            seconds = run.wall
            result.stats = arrowfeat_stats(json.loads(run.stdout))
            result.versions = {"arrowfeat": args.binary_version}
        else:
            answer = json.loads(run.stdout.strip().splitlines()[-1])
            seconds = answer["seconds"]
            result.stats, result.versions = answer["stats"], answer["versions"]
            result.extra = answer.get("extra", {})
        result.seconds = seconds if result.seconds is None else min(result.seconds, seconds)
        result.process = run.wall if result.process is None else min(result.process, run.wall)
        if run.wall > SLOW_RUN:
            break
    return result


def expected(stat: str, reference: dict[str, int]) -> int | None:
    """`stat` from the reference; `a+b:col` sums `a:col` and `b:col`."""
    if "+" in stat and ":" in stat:
        kinds, column = stat.split(":", 1)
        parts = [reference.get(f"{kind}:{column}") for kind in kinds.split("+")]
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
    return reference.get(stat)


def compare(result: Result, reference: dict[str, int]) -> tuple[int, list[str]]:
    mismatches = []
    compared = 0
    for stat, count in sorted(result.stats.items()):
        want = expected(stat, reference)
        if want is None:
            mismatches.append(f"{stat}: {count} (no reference)")
            continue
        compared += 1
        if want != count:
            mismatches.append(f"{stat}: {count}, reference {want}")
    return compared, mismatches


def kind_totals(stats: dict[str, int]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for stat, count in stats.items():
        kind = stat.split(":", 1)[0] if ":" in stat else stat
        totals[kind] = totals.get(kind, 0) + count
    return totals


def print_counts(shown: list[Result], reference: dict[str, int]) -> None:
    """Each contender's counts summed per kind of statistic; `*`: some column's count
    differs from the reference's."""
    kinds: list[str] = []
    for stats in [reference, *(r.stats for r in shown)]:
        kinds += [k for k in kind_totals(stats) if k not in kinds]
    ref_totals = kind_totals(reference)
    print("\nCounts summed over columns (reference: arrowfeat's report, and DuckDB for *_group_rows):\n")
    print("| statistic | reference | " + " | ".join(r.name for r in shown) + " |")
    print("|---|---:|" + "---:|" * len(shown))
    for kind in kinds:
        cells = []
        for r in shown:
            mine = {stat: count for stat, count in r.stats.items() if stat.split(":", 1)[0] == kind}
            if not mine:
                cells.append("")
                continue
            wrong = any(expected(stat, reference) != count for stat, count in mine.items())
            cells.append(f"{sum(mine.values()):,}{' *' if wrong else ''}")
        ref = ref_totals.get(kind)
        print(f"| {kind} | {'' if ref is None else f'{ref:,}'} | " + " | ".join(cells) + " |")


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a run may take (default 900)")
    parser.add_argument(
        "--only", default=",".join(CONTENDERS), help=f"comma-separated subset of {', '.join(CONTENDERS)}"
    )
    parser.add_argument(
        "--binary", type=Path, default=None, help="arrowfeat binary (default: target/release, else target/debug)"
    )
    parser.add_argument("--main-python", type=Path, default=MAIN_PYTHON)
    parser.add_argument("--peer-python", type=Path, default=PEER_PYTHON, help="the venv with pandera and GX")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--generate-into", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_into:
        generate_main(args.rows, args.generate_into)
        return
    if args.worker:
        worker_main(args.worker, args.data, args.spec)
        return

    only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in only if n not in CONTENDERS]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)}; expected some of {', '.join(CONTENDERS)}")
    if args.binary is None:
        release, debug = ROOT / "target" / "release" / "arrowfeat", ROOT / "target" / "debug" / "arrowfeat"
        args.binary = release if release.exists() else debug
    if not args.binary.exists():
        raise SystemExit(f"no arrowfeat binary at {args.binary}: build it, or pass --binary")
    version = subprocess.run([str(args.binary), "--version"], capture_output=True, text=True, check=True)
    args.binary_version = version.stdout.strip().removeprefix("arrowfeat ")
    debug_build = "debug" in args.binary.parts
    if any(n in ("pandera", "gx") for n in only) and not args.peer_python.exists():
        raise SystemExit(
            f"no {args.peer_python}: create the peer venv (see the top of this file) or pass --peer-python"
        )

    data, schema, spec_path, meta = prepare(args.rows)
    cores = os.cpu_count() or 1
    print(
        f"data: {data} ({meta['rows']:,} rows, 20 columns, {human_bytes(meta['file_bytes'])} Parquet, {human_bytes(meta['decompressed_bytes'])} decompressed)"
    )
    print(f"schema: {schema}; as of {AS_OF}; {cores} cores; best of {args.repeat}; timeout {args.timeout:.0f} s")
    print(f"arrowfeat: {args.binary}{' (DEBUG BUILD: timings not representative)' if debug_build else ''}")

    results: list[Result] = []
    for name in only:
        print(f"running {name} ...", flush=True)
        results.append(measure(name, args, data, schema, spec_path, args.repeat))
        r = results[-1]
        print(f"  {'> timeout' if r.timed_out else r.error or f'{r.seconds:.3f} s'}", flush=True)

    # The reference: arrowfeat's report (an untimed run when it was not measured), and
    # an untimed DuckDB query for the duplicate-group statistics arrowfeat does not report.
    by_name = {r.name: r for r in results}
    arrowfeat = by_name.get("arrowfeat") or by_name.get("arrowfeat-nosample")
    if arrowfeat is None or not arrowfeat.stats:
        arrowfeat = measure("arrowfeat-nosample", args, data, schema, spec_path, 1, REFERENCE_TIMEOUT)
    if not arrowfeat.stats:
        raise SystemExit(f"arrowfeat gave no report: {arrowfeat.error or 'timeout'}")
    reference = dict(arrowfeat.stats)
    reference.setdefault("rows", meta["rows"])
    extra = measure("reference", args, data, schema, spec_path, 1, REFERENCE_TIMEOUT)
    if extra.error or extra.timed_out:
        raise SystemExit(f"reference query failed: {extra.error or 'timeout'}")
    reference.update(extra.stats)

    # Statistics side by side (summed over columns per kind), then per-statistic agreement.
    shown = [r for r in results if r.stats]
    print_counts(shown, reference)
    failed = False
    agreement: dict[str, str] = {}
    for r in shown:
        compared, mismatches = compare(r, reference)
        lacks = [k for k in ("conflicting", "stale_keys") if k not in r.stats]
        note = "; duplicates as group rows" if "duplicates" not in r.stats and "dup_group_rows" in r.stats else ""
        note += f"; no {', '.join(lacks)}" if lacks else ""
        agreement[r.name] = f"{compared - len(mismatches)}/{compared} agree{note}"
        if mismatches:
            failed = True
            print(f"\n{r.name}: {len(mismatches)} statistic(s) disagree with the reference:")
            for m in mismatches:
                print(f"  {m}")

    base = by_name.get("arrowfeat")
    base_seconds = base.seconds if base else None
    print(
        f"\n## Data gate, {meta['rows']:,} rows x 20 columns ({human_bytes(meta['decompressed_bytes'])} decompressed), best of {args.repeat}, {cores} cores\n"
    )
    print("| contender | versions | time | vs arrowfeat | process | peak RSS | RSS / data | statistics |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        if r.timed_out:
            time_text, ratio = f"> {args.timeout:.0f} s", ""
        elif r.seconds is None:
            time_text, ratio = f"error ({r.error})", ""
        else:
            time_text = f"{r.seconds:.3f} s"
            ratio = f"{r.seconds / base_seconds:.2f}x" if base_seconds else ""
        process = "" if r.process is None else f"{r.process:.3f} s"
        rss = human_bytes(r.max_rss) if r.max_rss else ""
        share = f"{r.max_rss / meta['decompressed_bytes']:.2f}" if r.max_rss else ""
        versions = ", ".join(f"{k} {v}" for k, v in r.versions.items())
        print(
            f"| {r.name} | {versions} | {time_text} | {ratio} | {process} | {rss} | {share} | {agreement.get(r.name, '')} |"
        )
    if debug_build:
        print("\n(arrowfeat is a debug build: its time and the ratios are not representative)")
    if failed:
        raise SystemExit("statistics disagree: see above")


if __name__ == "__main__":
    main()
