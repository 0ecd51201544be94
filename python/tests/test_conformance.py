"""Conformance: one fixture set through every engine that offers the point-in-time join,
with identical Arrow output required of all of them.

Engines: the SQL table function (`arrowfeat sql`, and datafusion-python through the
FFI), `arrowfeat training-set` (the Rust DataFrame API), Python with pyarrow, pandas and
Polars input, and PySpark (`local[2]`,
events read in at least 5 input partitions, 7 shuffle partitions). Every case also runs
with the events in another row order, and through directories of several files, which
engines read in different orders: the result may not change.

Documented differences, applied here and nowhere else:
- pandas: a float NaN in a numpy-backed column is missing data, so it arrives as null.
  The pandas engine is fed `pd.ArrowDtype` columns, which keep NaN as a value.
- The Feast offline store (`offline_store: {type: arrowfeat.feast.ArrowfeatOfflineStore}`,
  an unchanged `store.get_historical_features`) answers as Feast does (docs/feast.md): as-of
  values only; an entity row whose key has events, none within the TTL, is dropped;
  repeated (keys, time) entity rows appear once; its frames are pandas, so a float NaN is
  null. `as_feast_returns` applies exactly these to the pyarrow engine's rows.
- Spark has no unsigned or 32-bit time types; fixtures use int64, double, string and
  `timestamp[us, UTC]`, which every engine holds as they are.
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import arrowfeat as af

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))
US = pa.timestamp("us", tz="UTC")
HOUR = 3_600_000_000


def times(values: Any) -> pa.Array:
    return pa.array(values, US)


# ---------------------------------------------------------------------------- fixtures


class Case:
    """A spine, events and the join's options, in the Python spelling."""

    def __init__(
        self,
        spine: pa.Table,
        events: pa.Table,
        features: list[Any],
        *,
        by: list[str],
        created: str | None = None,
        ttl: str | None = None,
        created_cutoff: bool = False,
        spark: bool = True,
    ) -> None:
        self.spine = spine
        self.events = events
        self.features = features
        self.by = by
        self.created = created
        self.ttl = ttl
        self.created_cutoff = created_cutoff
        self.spark = spark

    def options(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "spine_time": "label_ts",
            "event_time": "event_ts",
            "features": self.features,
            "created": self.created,
            "ttl": self.ttl,
            "created_cutoff": self.created_cutoff,
        }

    def feature_texts(self) -> list[str]:
        """The features as `--feature` / SQL text."""
        out = []
        for f in self.features:
            if isinstance(f, str):
                out.append(f)
            elif f.period is None and f.aggregation == "last":
                out.append(f.column)
            elif f.period is None:
                out.append(f"{f.column}:{f.aggregation}")
            else:
                out.append(f"{f.column}:{f.aggregation}:{f.period}")
        return out


WINDOWS = [
    af.as_of("amount"),
    af.as_of("label"),
    af.window("amount", "first", "3h"),
    af.window("amount", "last", "3h"),
    af.window("label", "first", "3h"),
    af.window("amount", "sum", "3h"),
    af.window("amount", "count", "1d"),
    af.window("amount", "mean", "3h"),
    af.window("amount", "min", "3h"),
    af.window("amount", "max", "3h"),
]


def tied_events(rng: np.random.Generator, rows: int, keys: int, base: int = 1_700_000_000_000_000) -> pa.Table:
    """Events with few distinct times per key (many ties), values with NaN, -0.0 and 0.0."""
    amount = rng.normal(50, 20, rows).round(2)
    amount[::17] = np.nan
    amount[5::23] = -0.0
    amount[7::23] = 0.0
    return pa.table(
        {
            "key": pa.array(rng.integers(0, keys, rows), pa.int64()),
            "event_ts": times(base + rng.integers(0, 6, rows) * HOUR),
            "amount": pa.array(amount, mask=np.arange(rows) % 29 == 3),
            "label": pa.array([None if i % 31 == 1 else f"v{rng.integers(0, 9)}" for i in range(rows)]),
            "created": times(
                [None if i % 13 == 2 else base + int(c) * HOUR for i, c in enumerate(rng.integers(0, 3, rows))]
            ),
        }
    )


def spine_for(rng: np.random.Generator, rows: int, keys: int, base: int = 1_700_000_000_000_000) -> pa.Table:
    key = rng.integers(0, keys + 3, rows)
    return pa.table(
        {
            "rid": pa.array(np.arange(rows), pa.int64()),
            "key": pa.array(key, pa.int64(), mask=np.arange(rows) % 37 == 5),
            "label_ts": times(base + rng.integers(-1, 14, rows) * HOUR // 2),
            "target": pa.array(rng.integers(0, 2, rows), pa.int64()),
        }
    )


def cases() -> dict[str, Case]:
    rng = np.random.default_rng(20261206)
    events = tied_events(rng, 4000, 40)
    spine = spine_for(rng, 400, 40)
    early = -20 * 365 * 24 * HOUR  # 1950
    out = {
        "ties": Case(spine, events.drop_columns(["created"]), WINDOWS, by=["key"], ttl="5h"),
        "ties_with_created": Case(spine, events, WINDOWS, by=["key"], created="created"),
        "created_cutoff": Case(
            spine,
            events,
            [af.as_of("amount"), af.as_of("label")],
            by=["key"],
            created="created",
            created_cutoff=True,
        ),
        "ttl_zero_is_no_limit": Case(
            spine, events, [af.as_of("amount"), af.window("amount", "sum", "1d")], by=["key"], ttl="0s"
        ),
        "before_1970": Case(
            spine_for(rng, 200, 10, base=early),
            tied_events(rng, 1000, 10, base=early),
            WINDOWS,
            by=["key"],
            ttl="2h",
        ),
        "empty_spine": Case(spine.slice(0, 0), events, WINDOWS, by=["key"]),
        "empty_events": Case(spine, events.slice(0, 0), WINDOWS, by=["key"]),
        "no_key": Case(spine.drop_columns(["key"]), events.drop_columns(["key"]), WINDOWS[:4], by=[]),
    }
    # Float keys: -0.0 matches 0.0 and NaN matches NaN, as SQL equality compares them.
    float_spine = pa.table(
        {
            "rid": pa.array(range(6), pa.int64()),
            "key": pa.array([0.0, -0.0, math.nan, 1.5, None, 2.5]),
            "label_ts": times([10 * HOUR] * 6),
        }
    )
    float_events = pa.table(
        {
            "key": pa.array([-0.0, 0.0, math.nan, 1.5, None, 1.5]),
            "event_ts": times([1 * HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 5 * HOUR, 4 * HOUR]),
            "amount": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, -4.0]),
        }
    )
    out["float_keys"] = Case(
        float_spine, float_events, [af.as_of("amount"), af.window("amount", "count", "1d")], by=["key"]
    )
    # Composite keys of two types.
    comp_events = events.append_column("shop", pa.array([f"s{i % 3}" for i in range(events.num_rows)]))
    comp_spine = spine.append_column("shop", pa.array([f"s{i % 4}" for i in range(spine.num_rows)]))
    out["composite_keys"] = Case(comp_spine, comp_events, WINDOWS[:6], by=["key", "shop"])
    # Keys of one family in two widths match by value.
    narrow = spine.set_column(1, "key", spine.column("key").cast(pa.int32()))
    out["int32_spine_keys"] = Case(narrow, events, WINDOWS[:3], by=["key"])
    return out


CASES = cases()

# ----------------------------------------------------------------------------- engines

Engine = Callable[[Case, pa.Table, Path], pa.Table]


def python_arrow(case: Case, events: pa.Table, _: Path) -> pa.Table:
    result: pa.Table = af.point_in_time(case.spine, events, **case.options())
    return result


def python_pandas(case: Case, events: pa.Table, _: Path) -> pa.Table:
    import pandas as pd

    spine = case.spine.to_pandas(types_mapper=pd.ArrowDtype)
    result = af.point_in_time(spine, events.to_pandas(types_mapper=pd.ArrowDtype), **case.options())
    return pa.Table.from_pandas(result, preserve_index=False)


def python_polars(case: Case, events: pa.Table, _: Path) -> pa.Table:
    import polars as pl

    spine = pl.from_arrow(case.spine)
    result = af.point_in_time(spine, pl.from_arrow(events), **case.options())
    return result.to_arrow()


def write_inputs(case: Case, events: pa.Table, tmp: Path) -> tuple[Path, Path]:
    """The spine as one Parquet file, the events as a directory of 8 files."""
    spine_path = tmp / "spine.parquet"
    pq.write_table(case.spine, spine_path)
    events_dir = tmp / "events"
    events_dir.mkdir()
    parts = 8
    size = max(1, -(-events.num_rows // parts))
    for i in range(parts):
        pq.write_table(events.slice(i * size, size), events_dir / f"part-{i}.parquet")
    return spine_path, events_dir


def run_binary(args: list[str]) -> subprocess.CompletedProcess[str]:
    assert BINARY.exists(), f"{BINARY} is missing: build it with `cargo build -p arrowfeat-cli`"
    return subprocess.run([str(BINARY), *args], capture_output=True, text=True, timeout=300)


def cli_training_set(case: Case, events: pa.Table, tmp: Path) -> pa.Table:
    spine_path, events_dir = write_inputs(case, events, tmp)
    out = tmp / "out.parquet"
    args = ["training-set", "--spine", str(spine_path), "--events", str(events_dir)]
    args += [f"--by={k}" for k in case.by]
    args += ["--spine-time", "label_ts", "--event-time", "event_ts", "-o", str(out)]
    args += [f"--feature={f}" for f in case.feature_texts()]
    if case.created:
        args += ["--created", case.created]
    if case.created_cutoff:
        args += ["--created-cutoff"]
    if case.ttl:
        args += ["--ttl", case.ttl]
    run = run_binary(args)
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    return pq.read_table(out)


def sql_arguments(case: Case, spine_path: Path, events_dir: Path) -> str:
    """The arguments of the SQL table function for `case`, quoted."""
    arguments = [str(spine_path), f"{events_dir}/", ", ".join(case.by), "label_ts", "event_ts"]
    arguments += case.feature_texts()
    if case.created:
        arguments.append(f"created={case.created}")
    if case.created_cutoff:
        arguments.append("created_cutoff=true")
    if case.ttl:
        arguments.append(f"ttl={case.ttl}")
    return ", ".join("'" + a.replace("'", "''") + "'" for a in arguments)


def sql_table_function(case: Case, events: pa.Table, tmp: Path) -> pa.Table:
    spine_path, events_dir = write_inputs(case, events, tmp)
    out = tmp / "out.parquet"
    sql = f"COPY (SELECT * FROM point_in_time({sql_arguments(case, spine_path, events_dir)})) TO '{out}' STORED AS PARQUET"
    run = run_binary(["sql", "--allow-write", sql])
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    return pq.read_table(out)


def datafusion_python(case: Case, events: pa.Table, tmp: Path) -> pa.Table:
    """The SQL table function in datafusion-python, through the FFI."""
    from datafusion import SessionContext

    import arrowfeat.datafusion as afd

    spine_path, events_dir = write_inputs(case, events, tmp)
    ctx = SessionContext()
    afd.register(ctx)
    result: pa.Table = ctx.sql(
        f"SELECT * FROM point_in_time({sql_arguments(case, spine_path, events_dir)})"
    ).to_arrow_table()
    return result


def pyspark(case: Case, events: pa.Table, tmp: Path) -> pa.Table:
    from arrowfeat import spark as afs

    session = pytest.spark_session  # type: ignore[attr-defined]
    spine_path, events_dir = write_inputs(case, events, tmp)
    spine_df = session.read.parquet(str(spine_path))
    events_df = session.read.parquet(str(events_dir))
    assert events.num_rows == 0 or events_df.rdd.getNumPartitions() >= 5
    options = case.options()
    by = options.pop("by")
    result = afs.point_in_time(spine_df, events_df, by=by, **options)
    return result.toArrow()


ENGINES: dict[str, Engine] = {
    "pyarrow": python_arrow,
    "pandas": python_pandas,
    "polars": python_polars,
    "training-set": cli_training_set,
    "sql": sql_table_function,
    "datafusion-python": datafusion_python,
    "pyspark": pyspark,
}

# ---------------------------------------------------------------------------- checking


def same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to NaN, -0.0 apart from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def normalized(result: pa.Table, reference: pa.Table) -> pa.Table:
    """`result` in the reference's column order and types (string_view as string, ns as
    us: lossless), sorted by the spine's row id."""
    assert result.column_names == reference.column_names
    result = result.cast(reference.schema.remove_metadata())
    if "rid" in result.column_names:
        result = result.sort_by("rid")
    return result


def assert_same(result: pa.Table, reference: pa.Table, what: str) -> None:
    result = normalized(result, reference)
    reference = normalized(reference, reference)
    assert result.num_rows == reference.num_rows, what
    for name in reference.column_names:
        got, want = result.column(name).to_pylist(), reference.column(name).to_pylist()
        bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not same(g, w)]
        assert not bad, (
            f"{what}: column {name}: rows {bad[:5]}: {[got[i] for i in bad[:5]]} != {[want[i] for i in bad[:5]]}"
        )


@pytest.fixture(scope="module")
def spark_conformance(spark):  # type: ignore[no-untyped-def]
    """The session, with an odd shuffle partition count and small input splits (the
    events directory is read in several partitions, in Spark's own file order)."""
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    pytest.spark_session = spark  # type: ignore[attr-defined]
    yield spark
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    spark.conf.unset("spark.sql.files.openCostInBytes")


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_engine_gives_the_same_rows(name: str, tmp_path: Path, spark_conformance: Any) -> None:
    case = CASES[name]
    reference = python_arrow(case, case.events, tmp_path)
    assert reference.num_rows == case.spine.num_rows
    order = np.random.default_rng(7).permutation(case.events.num_rows)
    shuffled = case.events.take(pa.array(order, pa.int64()))
    for engine_name, engine in ENGINES.items():
        if engine_name == "pyspark" and not case.spark:
            continue
        for label, events in (("file order", case.events), ("shuffled", shuffled)):
            where = tmp_path / f"{engine_name}-{label.replace(' ', '-')}"
            where.mkdir()
            assert_same(engine(case, events, where), reference, f"{name}: {engine_name}, events in {label}")


def test_ties_are_broken_by_values_not_by_row_order() -> None:
    """Equal key and time, no created time: the greatest value is the as-of value and the
    window's `last`, the smallest its `first`, in any row order."""
    spine = pa.table({"key": [1], "label_ts": times([10 * HOUR])})
    values = [2.0, math.nan, -0.0, None, 0.0, 7.5]
    for order in ([0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [3, 1, 5, 0, 2, 4]):
        events = pa.table(
            {
                "key": [1] * 6,
                "event_ts": times([9 * HOUR] * 6),
                "amount": pa.array([values[i] for i in order]),
            }
        )
        out = af.point_in_time(
            spine,
            events,
            by="key",
            spine_time="label_ts",
            event_time="event_ts",
            features=[af.as_of("amount"), af.window("amount", "first", "2h"), af.window("amount", "last", "2h")],
        )
        # Null lowest, then -0.0 < 0.0 < 2.0 < 7.5 < NaN (IEEE 754 totalOrder).
        assert out.column("amount_first_2h").to_pylist() == [None]
        last = out.column("amount").to_pylist()[0]
        assert math.isnan(last) and math.isnan(out.column("amount_last_2h").to_pylist()[0])


def test_a_name_clash_is_the_same_error_in_every_engine(tmp_path: Path) -> None:
    spine = pa.table({"key": [1], "label_ts": times([HOUR]), "amount": [0.0]})
    events = pa.table({"key": [1], "event_ts": times([HOUR]), "amount": [1.0]})
    case = Case(spine, events, ["amount"], by=["key"])
    expected = "expected output columns that are not spine columns, found `amount` in both"
    with pytest.raises(af.ArrowfeatValueError, match=expected):
        python_arrow(case, events, tmp_path)
    for engine in (cli_training_set, sql_table_function):
        where = tmp_path / engine.__name__
        where.mkdir()
        with pytest.raises(RuntimeError, match=expected):
            engine(case, events, where)


def test_keys_of_one_family_match_by_value_in_python() -> None:
    """int32 against int64 and large_string against string match by value, as in SQL."""
    events = pa.table({"k": pa.array([5_000_000_000, 7], pa.int64()), "event_ts": times([1, 1]), "v": [1.0, 2.0]})
    spine = pa.table({"k": pa.array([7], pa.int32()), "label_ts": times([2])})
    out = af.point_in_time(spine, events, by="k", spine_time="label_ts", event_time="event_ts", features=["v"])
    assert out.column("v").to_pylist() == [2.0]
    s_events = pa.table({"k": pa.array(["a"], pa.string()), "event_ts": times([1]), "v": [3.0]})
    for t in (pa.large_string(), pa.string_view()):
        s_spine = pa.table({"k": pa.array(["a"], t), "label_ts": times([2])})
        out = af.point_in_time(s_spine, s_events, by="k", spine_time="label_ts", event_time="event_ts", features=["v"])
        assert out.column("v").to_pylist() == [3.0]


# ------------------------------------------------------------------------- Feast store

FEAST_CONFIG = """\
project: conformance
registry: registry.db
provider: local
online_store:
    type: sqlite
    path: online.db
offline_store:
    type: arrowfeat.feast.ArrowfeatOfflineStore
entity_key_serialization_version: 3
"""

# Cases the Feast store cannot express: windows aside (Feast has as-of values only),
# Feast's created-timestamp filter is its own rule (docs/feast.md), and Feast entities
# have no float key type.
NOT_IN_FEAST = {"created_cutoff": "Feast's own created filter", "float_keys": "no float entity type"}


def feast_offline_store(case: Case, events: pa.Table, tmp: Path) -> pa.Table:
    """`store.get_historical_features(...).to_arrow()` of an unchanged Feast, with
    `offline_store: {type: arrowfeat.feast.ArrowfeatOfflineStore}`, over the events as a
    directory of Parquet files (one feature view, its as-of features)."""
    import datetime as dt

    import pandas as pd
    from feast import Entity, FeatureStore, FeatureView, Field, FileSource
    from feast.types import Float64, String
    from feast.value_type import ValueType

    _, events_dir = write_inputs(case, events, tmp)
    (tmp / "feature_store.yaml").write_text(FEAST_CONFIG)
    key_types = {"key": ValueType.INT64, "shop": ValueType.STRING}
    entities = [Entity(name=k, join_keys=[k], value_type=key_types[k]) for k in case.by]
    ttl = dt.timedelta(seconds=pd.Timedelta(case.ttl).total_seconds()) if case.ttl else None
    view = FeatureView(
        name="events",
        entities=entities,
        ttl=ttl,
        schema=[Field(name="amount", dtype=Float64), Field(name="label", dtype=String)],
        source=FileSource(
            path=str(events_dir), timestamp_field="event_ts", created_timestamp_column=case.created or ""
        ),
    )
    store = FeatureStore(repo_path=str(tmp))
    store.apply([*entities, view])
    names = [f.column for f in case.features if not isinstance(f, str) and f.period is None]
    job = store.get_historical_features(entity_df=case.spine.to_pandas(), features=[f"events:{n}" for n in names])
    result: pa.Table = job.to_arrow()
    return result


def as_feast_returns(reference: pa.Table, case: Case) -> pa.Table:
    """The pyarrow engine's rows as Feast's semantics (docs/feast.md) shape them: an entity
    row whose key has events, none within the TTL, is dropped; repeated (keys, time)
    entity rows appear once, the last; a float NaN is missing data (pandas)."""
    seen = af.point_in_time(
        case.spine,
        case.events.append_column("seen", pa.array([1] * case.events.num_rows, pa.int8())),
        by=case.by,
        spine_time="label_ts",
        event_time="event_ts",
        features=[af.as_of("seen")],
        created=case.created,
        ttl=case.ttl,
    ).column("seen")
    # Whether the key has events at all, at any time: every event before every label.
    at = {"t": pa.array([0] * case.spine.num_rows, pa.int64())}
    probe = pa.table({**{k: case.spine.column(k) for k in case.by}, **at})
    rows = pa.table(
        {
            **{k: case.events.column(k) for k in case.by},
            "t": pa.array([-1] * case.events.num_rows, pa.int64()),
            "seen": pa.array([1] * case.events.num_rows, pa.int8()),
        }
    )
    has_events = pc.is_valid(
        af.point_in_time(probe, rows, by=case.by, spine_time="t", event_time="t", features=["seen"]).column("seen")
    )
    kept = pc.invert(pc.and_(has_events, pc.is_null(seen)))
    result = reference.filter(kept)
    frame = result.select([*case.by, "label_ts"]).to_pandas()
    last = ~frame.duplicated([*case.by, "label_ts"], keep="last").to_numpy()
    result = result.filter(pa.array(last))
    for i, field in enumerate(result.schema):
        if pa.types.is_floating(field.type):
            column = result.column(i)
            result = result.set_column(i, field.name, pc.if_else(pc.is_nan(column), None, column))
    return result


@pytest.mark.parametrize("name", sorted(set(CASES) - set(NOT_IN_FEAST)))
def test_the_feast_offline_store_gives_the_same_rows(name: str, tmp_path: Path) -> None:
    pytest.importorskip("feast")
    case = CASES[name]
    as_of_only = [f for f in case.features if isinstance(f, str) or f.period is None]
    case = Case(case.spine, case.events, as_of_only, by=case.by, created=case.created, ttl=case.ttl, spark=case.spark)
    expected = as_feast_returns(python_arrow(case, case.events, tmp_path), case)
    order = np.random.default_rng(7).permutation(case.events.num_rows)
    for label, events in (("file order", case.events), ("shuffled", case.events.take(pa.array(order, pa.int64())))):
        where = tmp_path / label.replace(" ", "-")
        where.mkdir()
        result = feast_offline_store(case, events, where)
        assert sorted(result.column_names) == sorted(expected.column_names)
        assert_same(result.select(expected.column_names), expected, f"{name}: Feast offline store, events in {label}")
