"""arrowfeat functions as ready PySpark UDFs.

    from arrowfeat.spark import hash_bucket, standard_scale
    df.select(hash_bucket("user_id", 1000), standard_scale("amount", 60.0, 30.0))

Column arguments are column names (``str``) or ``Column`` expressions; parameters are plain
Python values and stay constants (pass ``F.lit(...)`` to use a constant *as a column*).
Event-time windows need all of a key's rows together: ``rolling``, ``hop_aggregate`` and
``session_aggregate`` take a DataFrame and run the kernels per key with
``groupBy(key).applyInArrow``; ``tumble_start`` and ``hop_windows`` are per-row columns.

Each per-row function builds an ``arrow_udf`` (Spark >= 4.1: pyarrow in and out, no pandas
conversion) by default; ``kind="pandas"`` builds the equivalent ``pandas_udf``.

The UDF body is the same Rust kernel as in-process Python and DataFusion SQL, so results
are bit-identical; each UDF returns exactly the Arrow type Spark expects for its declared
return type, so Spark does not cast.
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

import arrowfeat as _af

from ._convert import (
    _as_of_nanos,
    _baseline,
    _by_keyword_only,
    _check_columns,
    _check_drift_arguments,
    _check_sample_rows,
    _native_error,
    _not_empty,
    _save_reference,
    _skew_options,
    _visible,
)
from ._report import Report
from .errors import ArrowfeatTypeError, ArrowfeatValueError
from .windows import _check_agg, to_nanoseconds

if TYPE_CHECKING:
    from ._typing import Duration

Kind = Literal["arrow", "pandas"]

_GROUPED = {"hop_aggregate", "rolling", "session_aggregate", "point_in_time"}
_NOT_PER_ROW = {
    "rolling_sum",
    "rolling_count",
    "rolling_mean",
    "rolling_min",
    "rolling_max",
    "session_window",
}
# Feature specs and exception classes are used from `arrowfeat` itself.
_NOT_HERE = {"as_of", "window", "Feature", *(n for n in _af.__all__ if n.startswith("Arrowfeat"))}
__all__ = [n for n in _af.__all__ if n not in _NOT_PER_ROW | _NOT_HERE | _GROUPED]


def _is_column(value: Any) -> bool:
    return isinstance(value, (Column, str))


def _arrow_type(spark_type: T.DataType) -> pa.DataType:
    from pyspark.sql.pandas.types import to_arrow_type

    # Spark reads any time zone's timestamps as instants; UTC is the neutral label.
    return to_arrow_type(spark_type, timezone="UTC")


def _with_arity(function: Callable[..., Any], name: str, arity: int, hint: type) -> Callable[..., Any]:
    """Gives a variadic function a fixed signature with type hints: Spark picks the UDF kind
    (scalar, Array/Series in and out) from the hints of every parameter."""
    params = [inspect.Parameter(f"c{i}", inspect.Parameter.POSITIONAL_ONLY, annotation=hint) for i in range(arity)]
    function.__signature__ = inspect.Signature(params, return_annotation=hint)  # type: ignore[attr-defined]
    function.__annotations__ = {**{p.name: hint for p in params}, "return": hint}
    function.__name__ = name
    return function


def _udf(name: str, function: Callable[..., Any], return_type: T.DataType, args: tuple[Any, ...], kind: Kind) -> Column:
    """Applies `function(*args)` in a UDF: column arguments become the UDF's inputs, the
    other arguments are captured as constants."""
    positions = [i for i, a in enumerate(args) if _is_column(a)]
    if not positions:
        raise ArrowfeatTypeError(f"{name}: expected at least one column argument (a column name or Column)")
    target = _arrow_type(return_type)

    # The closure ships to the workers: it must hold only the constants, not Columns.
    constants = [None if i in positions else a for i, a in enumerate(args)]

    def compute(arrays: list[pa.Array]) -> pa.Array:
        full = list(constants)
        for i, array in zip(positions, arrays, strict=False):
            full[i] = array
        result = function(*full)
        return result if result.type == target else result.cast(target)

    if kind == "arrow":
        from pyspark.sql.functions import arrow_udf

        def run_arrow(*arrays: pa.Array) -> pa.Array:
            return compute(list(arrays))

        udf = arrow_udf(_with_arity(run_arrow, name, len(positions), pa.Array), return_type)
    elif kind == "pandas":
        import pandas as pd
        from pyspark.sql.functions import pandas_udf

        def run_pandas(*series: pd.Series) -> pd.Series:
            arrays = [pa.Array.from_pandas(s) for s in series]
            out = compute(arrays).to_pandas()
            out.index = series[0].index
            return out

        udf = pandas_udf(_with_arity(run_pandas, name, len(positions), pd.Series), return_type)
    else:
        raise ArrowfeatValueError(f"{name}: argument `kind`: expected 'arrow' or 'pandas', found {kind!r}")
    columns = [F.col(args[i]) if isinstance(args[i], str) else args[i] for i in positions]
    return udf(*columns)


def standard_scale(x: Any, mean: Any, std: Any, *, kind: Kind = "arrow") -> Column:
    """``(x - mean) / std`` as double."""
    return _udf("standard_scale", _af.standard_scale, T.DoubleType(), (x, mean, std), kind)


def min_max_scale(x: Any, lo: Any, hi: Any, *, kind: Kind = "arrow") -> Column:
    """``(x - lo) / (hi - lo)`` clamped to [0, 1], as double."""
    return _udf("min_max_scale", _af.min_max_scale, T.DoubleType(), (x, lo, hi), kind)


def bucketize(x: Any, boundaries: list[float], *, kind: Kind = "arrow") -> Column:
    """Left-closed bucket index of ``x`` (int)."""
    bounds = [float(b) for b in boundaries]
    return _udf("bucketize", lambda v: _af.bucketize(v, bounds), T.IntegerType(), (x,), kind)


def _exact_types_only(name: str, kind: Kind) -> None:
    if kind == "pandas":
        raise ArrowfeatValueError(
            f"{name}: kind='pandas' is not offered: hashing needs each column's exact type, and "
            "pandas_udf loses it (nullable integers arrive as float64, so they would hash as "
            "doubles); use the default kind='arrow'"
        )


def xxhash64(*columns: Any, kind: Kind = "arrow") -> Column:
    """Spark's ``xxhash64`` computed by arrowfeat (bigint); equal to ``F.xxhash64``."""
    _exact_types_only("xxhash64", kind)
    return _udf("xxhash64", _af.xxhash64, T.LongType(), columns, kind)


def hash(*columns: Any, kind: Kind = "arrow") -> Column:
    """Spark's ``hash`` (Murmur3, int) computed by arrowfeat; equal to ``F.hash``."""
    _exact_types_only("hash", kind)
    return _udf("hash", _af.hash, T.IntegerType(), columns, kind)


def hash_bucket(*columns_then_buckets: Any, kind: Kind = "arrow") -> Column:
    """``pmod(xxhash64(c1, ...), num_buckets)`` (bigint); the last argument is num_buckets."""
    _exact_types_only("hash_bucket", kind)
    return _udf("hash_bucket", _af.hash_bucket, T.LongType(), columns_then_buckets, kind)


def dot_product(a: Any, b: Any, *, kind: Kind = "arrow") -> Column:
    """Dot product of two array<float|double> columns (or a column and a list), as double."""
    return _udf("dot_product", _af.dot_product, T.DoubleType(), (a, b), kind)


def cosine_similarity(a: Any, b: Any, *, kind: Kind = "arrow") -> Column:
    """Cosine similarity of two vectors (null for zero vectors), as double."""
    return _udf("cosine_similarity", _af.cosine_similarity, T.DoubleType(), (a, b), kind)


def l2_norm(a: Any, *, kind: Kind = "arrow") -> Column:
    """Euclidean norm of an array<float|double> column, as double."""
    return _udf("l2_norm", _af.l2_norm, T.DoubleType(), (a,), kind)


def l2_normalize(a: Any, *, element: T.DataType | None = None, kind: Kind = "arrow") -> Column:
    """Unit-length vectors as array<float> (``element=T.DoubleType()`` for array<double>)."""
    return _udf("l2_normalize", _af.l2_normalize, T.ArrayType(element or T.FloatType()), (a,), kind)


def quantize_int8(x: Any, scale: Any, zero_point: Any, *, vectors: bool = False, kind: Kind = "arrow") -> Column:
    """Quantized values in 0..255 as smallint (Spark has no unsigned byte), or
    array<smallint> with ``vectors=True``."""
    out = T.ArrayType(T.ShortType()) if vectors else T.ShortType()
    return _udf("quantize_int8", _af.quantize_int8, out, (x, scale, zero_point), kind)


def dequantize_int8(q: Any, scale: Any, zero_point: Any, *, vectors: bool = False, kind: Kind = "arrow") -> Column:
    """``(q - zero_point) * scale`` as float, or array<float> with ``vectors=True``."""
    out = T.ArrayType(T.FloatType()) if vectors else T.FloatType()
    return _udf("dequantize_int8", _af.dequantize_int8, out, (q, scale, zero_point), kind)


def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any, *, kind: Kind = "arrow") -> Column:
    """Great-circle distance in km, as double."""
    return _udf("haversine_km", _af.haversine_km, T.DoubleType(), (lat1, lon1, lat2, lon2), kind)


# --- Event-time windows ------------------------------------------------------------------


def tumble_start(ts: Any, size: Duration, offset: Duration = 0, *, kind: Kind = "arrow") -> Column:
    """Start of the tumbling window holding ``ts`` (a timestamp column), as timestamp."""
    size_ns, offset_ns = to_nanoseconds("tumble_start", "size", size), to_nanoseconds("tumble_start", "offset", offset)
    return _udf("tumble_start", lambda t: _af.tumble_start(t, size_ns, offset_ns), T.TimestampType(), (ts,), kind)


def hop_windows(ts: Any, size: Duration, step: Duration, offset: Duration = 0, *, kind: Kind = "arrow") -> Column:
    """Starts of every hopping window holding ``ts``, as array<timestamp> (explode it and
    group by it for Spark's ``window(ts, size, step)`` without its candidate expansion)."""
    f = "hop_windows"
    sizes = [to_nanoseconds(f, a, v) for a, v in (("size", size), ("step", step), ("offset", offset))]
    return _udf(f, lambda t: _af.hop_windows(t, *sizes), T.ArrayType(T.TimestampType(), False), (ts,), kind)


def _check_window_columns(function: str, df: DataFrame, by: str | None, ts: str, value: str) -> None:
    columns = {"ts": ts, "value": value} if by is None else {"by": by, "ts": ts, "value": value}
    _check_columns(function, "the DataFrame", df.columns, columns)
    ts_type = df.schema[ts].dataType
    if not isinstance(ts_type, (T.TimestampType, T.TimestampNTZType, T.LongType)):
        raise ArrowfeatTypeError(
            f"{function}: argument `ts`: expected a timestamp or bigint (nanoseconds) column, found `{_visible(ts, 200)}` of type {ts_type.simpleString()}"
        )


def _df_column_at(argument: str) -> Callable[[dict[str, Any]], str | None]:
    """The check of an old call: a column where a duration belongs (`by` was second)."""

    def check(bound: dict[str, Any]) -> str | None:
        value = bound.get(argument)
        named = isinstance(value, str) and value in getattr(bound.get("df"), "columns", ())
        return argument if named or isinstance(value, Column) else None

    return check


def _value_type(function: str, df: DataFrame, value: str, agg: str) -> T.DataType:
    source = df.schema[value].dataType
    if agg == "count":
        return T.LongType()
    if not isinstance(source, T.NumericType):
        raise ArrowfeatTypeError(
            f"{function}: argument `value`: expected a numeric column for `{agg}`, found `{_visible(value, 200)}` of type {source.simpleString()}"
        )
    if agg in ("sum", "min", "max") and isinstance(source, T.IntegralType):
        return T.LongType()
    return T.DoubleType()


def _conform(table: pa.Table, schema: T.StructType) -> pa.Table:
    """Casts each column to the Arrow type Spark expects for the declared schema, so that
    Spark does not have to (nanosecond bounds become microseconds, exactly or an error)."""
    columns = [table.column(i).cast(_arrow_type(field.dataType)) for i, field in enumerate(schema.fields)]
    return pa.Table.from_arrays(columns, names=schema.names)


@_by_keyword_only("rolling", "rolling(df, ts, value, period, agg, by=key)", 5, _df_column_at("period"))
def rolling(
    df: DataFrame,
    ts: str,
    value: str,
    period: Duration,
    agg: str = "sum",
    *,
    by: str | None = None,
    closed: str = "right",
    output: str | None = None,
) -> DataFrame:
    """``df`` with a column ``output`` (default ``<agg>_<value>``): the ``agg`` of ``value``
    over each row's ``(ts - period, ts]`` among the rows of the same ``by`` key (without
    ``by``, among all rows, in one group: one task)."""
    f = "rolling"
    _check_window_columns(f, df, by, ts, value)
    agg = _check_agg(f, agg)
    period_ns = to_nanoseconds("rolling_" + agg, "period", period)
    output = output or f"{agg}_{value}"
    schema = T.StructType([*df.schema.fields, T.StructField(output, _value_type(f, df, value, agg), True)])

    def per_key(table: pa.Table) -> pa.Table:
        # One thread per Python worker: Spark runs the workers in parallel already.
        result = _af.rolling(table.column(value), table.column(ts), period_ns, agg, closed=closed, threads=1)
        return _conform(table.append_column(output, pa.chunked_array([result])), schema)

    return df.groupBy(*([] if by is None else [by])).applyInArrow(per_key, schema)


def _per_key_aggregate(
    function: str,
    df: DataFrame,
    by: str | None,
    ts: str,
    value: str,
    agg: str,
    output: str | None,
    bounds: tuple[str, str],
    compute: Callable[[pa.Array | None, pa.Array, pa.Array, str], pa.Table],
) -> DataFrame:
    """``df.groupBy(by).applyInArrow`` of ``compute(keys, ts, values, agg)``, a kernel that
    returns ``[key,] <start>, <end>, value`` per window, with Spark's types."""
    _check_window_columns(function, df, by, ts, value)
    agg = _check_agg(function, agg)
    output = output or f"{agg}_{value}"
    bound = df.schema[ts].dataType
    schema = T.StructType(
        [
            *([] if by is None else [df.schema[by]]),
            T.StructField(bounds[0], bound, False),
            T.StructField(bounds[1], bound, False),
            T.StructField(output, _value_type(function, df, value, agg), True),
        ]
    )

    def per_key(table: pa.Table) -> pa.Table:
        keys = None if by is None else table.column(by)
        return _conform(compute(keys, table.column(ts), table.column(value), agg), schema)

    return df.groupBy(*([] if by is None else [by])).applyInArrow(per_key, schema)


@_by_keyword_only("hop_aggregate", "hop_aggregate(df, ts, value, size, step, agg, by=key)", 6, _df_column_at("size"))
def hop_aggregate(
    df: DataFrame,
    ts: str,
    value: str,
    size: Duration,
    step: Duration,
    agg: str = "sum",
    *,
    by: str | None = None,
    offset: Duration = 0,
    output: str | None = None,
) -> DataFrame:
    """One row per key and non-empty hopping window: ``by, window_start, window_end,
    <output>``: Spark's ``groupBy(by, window(ts, size, step)).agg(...)`` in O(rows + windows)
    (without ``by``: no key column, every row in one group)."""
    f = "hop_aggregate"
    size_ns, step_ns, offset_ns = (
        to_nanoseconds(f, a, v) for a, v in (("size", size), ("step", step), ("offset", offset))
    )
    return _per_key_aggregate(
        f,
        df,
        by,
        ts,
        value,
        agg,
        output,
        ("window_start", "window_end"),
        lambda k, t, v, a: _af.hop_aggregate(t, v, size_ns, step_ns, a, offset_ns, by=k, threads=1),
    )


@_by_keyword_only("session_aggregate", "session_aggregate(df, ts, value, gap, agg, by=key)", 5, _df_column_at("gap"))
def session_aggregate(
    df: DataFrame,
    ts: str,
    value: str,
    gap: Duration,
    agg: str = "sum",
    *,
    by: str | None = None,
    output: str | None = None,
) -> DataFrame:
    """One row per key and session: ``by, session_start, session_end, <output>``, the
    sessions of Spark's ``session_window(ts, gap)`` (without ``by``: no key column, every
    row in one group)."""
    gap_ns = to_nanoseconds("session_aggregate", "gap", gap)
    return _per_key_aggregate(
        "session_aggregate",
        df,
        by,
        ts,
        value,
        agg,
        output,
        ("session_start", "session_end"),
        lambda k, t, v, a: _af.session_aggregate(t, v, gap_ns, a, by=k, threads=1),
    )


__all__ += sorted(_GROUPED)


def point_in_time(
    spine: DataFrame,
    events: DataFrame,
    *,
    by: str | list[str] | None,
    spine_time: str,
    event_time: str,
    features: list[Any],
    created: str | None = None,
    ttl: Duration | None = None,
    closed: str = "right",
    null_keys_match: bool = False,
    created_cutoff: bool = False,
    threads: int = 1,
) -> DataFrame:
    """Point-in-time features of ``events`` at each row of ``spine``, as
    :func:`arrowfeat.point_in_time` computes them in process, for data past one machine:
    ``spine.groupBy(by).cogroup(events.groupBy(by)).applyInArrow(...)`` (Spark 4.0+) runs
    the same kernel on each key's rows (one key's spine and events must fit in a
    worker's memory). Returns the spine's columns plus one column per feature, with the
    same names and values as in process. ``threads`` (default 1): threads per key
    within a Spark task; Spark already runs tasks in parallel."""
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    options: dict[str, Any] = {
        "by": keys,
        "spine_time": spine_time,
        "event_time": event_time,
        "features": features,
        "created": created,
        "ttl": ttl,
        "closed": closed,
        "null_keys_match": null_keys_match,
        "created_cutoff": created_cutoff,
    }
    # The output types: the in-process function on empty tables of the same schemas.
    probe = _af.point_in_time(
        to_arrow_schema(spine.schema, timezone="UTC").empty_table(),
        to_arrow_schema(events.schema, timezone="UTC").empty_table(),
        threads=1,
        **options,
    )
    added = from_arrow_schema(probe.schema.remove_metadata(), prefer_timestamp_ntz=False)
    schema = T.StructType([*spine.schema.fields, *added.fields[len(spine.schema.fields) :]])

    spine, events, groups, hidden = _grouping_columns(spine, events, keys)

    def per_key(spine_rows: pa.Table, event_rows: pa.Table) -> pa.Table:
        spine_rows = spine_rows.drop_columns([c for c in hidden if c in spine_rows.column_names])
        event_rows = event_rows.drop_columns([c for c in hidden if c in event_rows.column_names])
        result = _af.point_in_time(spine_rows, event_rows, threads=threads, **options)
        return _conform(result, schema)

    return spine.groupBy(*groups).cogroup(events.groupBy(*groups)).applyInArrow(per_key, schema)


def _grouping_columns(
    spine: DataFrame, events: DataFrame, keys: list[str]
) -> tuple[DataFrame, DataFrame, list[str], list[str]]:
    """The columns to cogroup by: each key as it is, or, where Spark would not put equal
    keys in one group, a hidden copy both sides share. Float keys: `-0.0` as `0.0` and
    one NaN (the join matches them as SQL equality does; Spark's cogroup fails on them).
    Integer keys of two widths: both as bigint (the join matches them by value)."""
    groups: list[str] = []
    hidden: list[str] = []
    spine_types = {f.name: f.dataType for f in spine.schema.fields}
    event_types = {f.name: f.dataType for f in events.schema.fields}

    def unused(i: int) -> str:
        # A name neither side has, so no column of the user's is overwritten.
        name = f"__arrowfeat_group_{i}"
        while name in spine_types or name in event_types:
            name += "_"
        return name

    for i, key in enumerate(keys):
        s_type, e_type = spine_types.get(key), event_types.get(key)
        floats = (T.FloatType, T.DoubleType)
        integers = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
        if isinstance(s_type, floats) or isinstance(e_type, floats):
            name = unused(i)

            def canonical(df: DataFrame, key: str = key, name: str = name) -> DataFrame:
                c = F.col(key).cast("double")
                value = F.when(F.isnan(c), F.lit(float("nan"))).when(c == 0, F.lit(0.0)).otherwise(c)
                return df.withColumn(name, value)

            spine, events = canonical(spine), canonical(events)
            groups.append(name)
            hidden.append(name)
        elif isinstance(s_type, integers) and isinstance(e_type, integers) and type(s_type) is not type(e_type):
            name = unused(i)
            spine = spine.withColumn(name, F.col(key).cast("bigint"))
            events = events.withColumn(name, F.col(key).cast("bigint"))
            groups.append(name)
            hidden.append(name)
        else:
            groups.append(key)
    return spine, events, groups, hidden


__all__ += ["check_data", "drift", "skew"]


def _in_utc(table: pa.Table) -> pa.Table:
    """Spark's instants in UTC, as ``df.toArrow()`` gives them (``mapInArrow`` hands them
    in the session time zone): the same values, named in one zone whatever the session's."""
    columns = [
        column.cast(pa.timestamp(field.type.unit, tz="UTC"))
        if pa.types.is_timestamp(field.type) and field.type.tz not in (None, "UTC")
        else column
        for field, column in zip(table.schema, table.columns, strict=True)
    ]
    schema = pa.schema([field.with_type(column.type) for field, column in zip(table.schema, columns, strict=True)])
    return pa.Table.from_arrays(columns, schema=schema)


def _one_part(names: list[str], compute: Callable[[pa.Table], str], batches: Any) -> Any:
    """On a worker: `compute` over one partition (its columns under their own names, times
    in UTC), one row of text; nothing for an empty partition."""
    batches = list(batches)
    if batches:
        text = compute(_in_utc(pa.Table.from_batches(batches).rename_columns(names)))
        yield pa.RecordBatch.from_pydict({"part": [text]}, schema=pa.schema([("part", pa.string())]))


def _parts(df: DataFrame, names: list[str], compute: Callable[[pa.Table], str]) -> list[str]:
    """`compute` over every partition of `df` (columns under hidden names), collected."""
    import functools

    return [row["part"] for row in df.mapInArrow(functools.partial(_one_part, names, compute), "part string").collect()]


def _positional(df: DataFrame) -> DataFrame:
    return df.toDF(*[f"__arrowfeat_{i}" for i in range(len(df.columns))])


def _split_by(df: DataFrame, keys: list[str], event_time: str) -> DataFrame:
    """``df`` with its columns under hidden names (``__arrowfeat_<position>``: Spark
    refuses `k` beside `K`, or a name twice, where arrowfeat reports them), partitioned
    so that all rows of an entity key (of an event time, for a view without keys) are in
    one partition: duplicates and stale keys are then counted in full per partition.
    Float keys are partitioned as SQL equality compares them."""
    names = df.columns
    positional = _positional(df)
    hidden = positional.columns
    by = keys or [event_time]
    if not all(k in names for k in by):
        return positional  # the type check reports the missing column; nothing is grouped
    types = [f.dataType for f in df.schema.fields]
    return positional.repartition(*[_canonical_key(F.col(hidden[names.index(k)]), types[names.index(k)]) for k in by])


def _canonical_key(c: Column, spark_type: T.DataType) -> Column:
    """A key column as the join and the checks compare keys, for Spark to hash: floats as
    doubles with `-0.0` as `0.0` and one NaN, integers of every width as bigint."""
    if isinstance(spark_type, (T.FloatType, T.DoubleType)):
        c = c.cast("double")
        return F.when(F.isnan(c), F.lit(float("nan"))).when(c == 0, F.lit(0.0)).otherwise(c)
    if isinstance(spark_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return c.cast("bigint")
    return c


_SchemaFile = tuple[str, bytes, list[str], str]  # label, content, entity keys, event time


def _frames(function: str, argument: str, data: Any) -> list[tuple[str | None, str, DataFrame]]:
    """(view or None, name in findings, DataFrame) of one DataFrame or a mapping of views."""
    if isinstance(data, DataFrame):
        return [(None, argument, data)]
    if isinstance(data, dict) and all(isinstance(v, DataFrame) for v in data.values()):
        return [(str(view), f"{argument}[{str(view)!r}]", df) for view, df in data.items()]
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a Spark DataFrame or a mapping of view names to "
        f"DataFrames, found {type(data).__name__}"
    )


def _declaring(
    function: str, argument: str, schemas: str | os.PathLike[str], frames: list[tuple[str | None, str, DataFrame]]
) -> list[list[_SchemaFile]]:
    """For each of `frames`, the schema files declaring its view (none for a view no
    parsed file declares: the native run refuses it, as it does in process). Every file
    declaring a view works with its own checks."""
    from . import _native

    try:
        files = _native.schema_views(os.fspath(schemas))
    except ValueError as e:
        raise ArrowfeatValueError(f"{function}: {e}") from None
    by_view: dict[str, list[_SchemaFile]] = {}
    for view_name, schema_label, schema_bytes, keys, event_time in files:
        if view_name is not None:
            by_view.setdefault(view_name, []).append((schema_label, schema_bytes, keys, event_time))
    out = []
    for view, _, _ in frames:
        if view is None and len(by_view) > 1:
            raise ArrowfeatValueError(
                f"{function}: argument `{argument}`: the schemas declare {len(by_view)} views; "
                "give a mapping of view names to DataFrames"
            )
        declaring = by_view.get(view, []) if view is not None else next(iter(by_view.values()), [])
        out.append(declaring)
    return out


def check_data(
    data: DataFrame | dict[str, DataFrame],
    schemas: str | os.PathLike[str],
    *,
    as_of: dt.datetime | str | None = None,
    sample_rows: int = 5,
    config: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | Literal[False] | None = None,
) -> Report:
    """Checks Spark DataFrames against their schema file(s), as
    :func:`arrowfeat.data.check_data` checks tables in memory, without collecting the
    data: each view's DataFrame is partitioned by its entity keys, every partition is
    counted by the same engine on its worker (``mapInArrow``), and the driver merges the
    counts (a few kilobytes per partition). The findings, counts and sampled rows are those
    of ``arrowfeat.data.check_data`` on the same rows (``df.toArrow()``), whatever the
    partitioning. ``data``: one DataFrame (the schemas declare one view) or a mapping of
    view names to DataFrames."""
    import functools

    from . import _native

    _not_empty("check_data", "data", data)
    frames = _frames("check_data", "data", data)
    _check_sample_rows("check_data", sample_rows)
    as_of_nanos = _as_of_nanos("check_data", as_of)
    if as_of_nanos is None:
        import time

        as_of_nanos = time.time_ns()  # one "now" for every worker
    counted: list[tuple[str | None, list[tuple[str, list[str]]]]] = []
    for (view, label, df), declaring in zip(frames, _declaring("check_data", "data", schemas, frames), strict=True):
        by_file = []
        for schema_label, schema_bytes, keys, event_time in declaring:
            count = functools.partial(
                _native.count_part, schema_label, schema_bytes, label, as_of=as_of_nanos, sample_rows=sample_rows
            )
            parts = _parts(_split_by(df, keys, event_time), df.columns, count)
            if not parts:  # no rows anywhere: the empty table still has its columns' types
                parts = [count(_empty_table(df))]
            by_file.append((schema_label, parts))
        counted.append((view, by_file))  # none for an undeclared view: the run refuses it
    try:
        native = _native.check(
            os.fspath(schemas),
            config=None if config is None else os.fspath(config),
            baseline=_baseline("check_data", baseline),
            counted=counted,
            as_of=as_of_nanos,
            sample_rows=sample_rows,
        )
    except ValueError as e:
        raise ArrowfeatValueError(f"check_data: {e}") from None
    return Report(native)


def _empty_table(df: DataFrame) -> pa.Table:
    """No rows, `df`'s columns as the workers see them (times in UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, timezone="UTC").empty_table()


def drift(
    current: DataFrame | dict[str, DataFrame] | None,
    schemas: str | os.PathLike[str],
    *,
    reference: DataFrame | dict[str, DataFrame] | None = None,
    reference_profile: str | os.PathLike[str] | None = None,
    save_reference: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
) -> Report:
    """The drift of Spark DataFrames from their reference, as :func:`arrowfeat.data.drift`
    computes it, without collecting the data: every partition is summarized on its worker
    (``mapInArrow``) and the driver merges the summaries. Against a saved
    ``reference_profile`` each worker sends its numbers coarsened against the profile's
    points (a part of at most a few thousand values per feature), and the metrics are
    those ``arrowfeat.data.drift`` computes with the same profile, to the bit. A
    ``reference`` DataFrame is summarized in full (every distinct value with its count,
    merged on the driver: memory grows with the distinct values, as for
    ``arrowfeat drift``). ``save_reference`` saves the reference's profile."""
    import functools

    from . import _native

    _check_drift_arguments(reference, reference_profile, current, save_reference)
    profile_text = None
    if reference_profile is not None:
        try:
            if os.path.getsize(reference_profile) <= 256 * 1024 * 1024:
                with open(reference_profile, encoding="utf-8") as f:
                    profile_text = f.read()
        except (OSError, UnicodeDecodeError):
            profile_text = None  # the run reports the file in its words
    parts: dict[str, list[Any]] = {"current": [], "reference": []}
    for argument, data in (("current", current), ("reference", reference)):
        if data is None:
            continue
        frames = _frames("drift", argument, data)
        for (view, label, df), declaring in zip(frames, _declaring("drift", argument, schemas, frames), strict=True):
            by_file = []
            for schema_label, schema_bytes, _, _ in declaring:
                summarize = functools.partial(
                    _native.drift_part,
                    schema_label,
                    schema_bytes,
                    label,
                    reference_profile=profile_text if argument == "current" else None,
                )
                by_file.append((schema_label, _parts(_positional(df), df.columns, summarize)))
            parts[argument].append((view, _empty_table(df), by_file))  # none: undeclared, refused
    try:
        native, profile, not_saved_because = _native.drift(
            os.fspath(schemas),
            reference_profile=None if reference_profile is None else os.fspath(reference_profile),
            config=None if config is None else os.fspath(config),
            baseline=None if baseline is None else os.fspath(baseline),
            reference_parts=parts["reference"],
            current_parts=parts["current"],
            saving=save_reference is not None,
        )
    except ValueError as e:
        raise _native_error("drift", e) from None
    report = Report(native)
    _save_reference(report, profile, not_saved_because, save_reference)
    return report


_BUCKET = "__arrowfeat_bucket"  # no positional name (`__arrowfeat_<i>`) takes it


def _bucketed(df: DataFrame, keys: list[str], buckets: int) -> DataFrame:
    """``df`` with its columns under hidden names and a bucket of its entity keys: equal
    keys (as the join compares them) in both tables fall in one bucket. Without keys (or
    lacking one, which the report names), one bucket."""
    names = df.columns
    positional = _positional(df)
    if not keys or not all(k in names for k in keys):
        return positional.withColumn(_BUCKET, F.lit(0))
    types = [f.dataType for f in df.schema.fields]
    hidden = positional.columns
    hashed = F.xxhash64(*[_canonical_key(F.col(hidden[names.index(k)]), types[names.index(k)]) for k in keys])
    return positional.withColumn(_BUCKET, F.pmod(hashed, F.lit(buckets)))


def _one_bucket(
    serving_names: list[str],
    training_names: list[str],
    compare: Callable[[pa.Table, pa.Table], str],
    serving_rows: pa.Table,
    training_rows: pa.Table,
) -> pa.Table:
    """On a worker: `compare` over one bucket of both tables (columns under their own
    names, times in UTC), one row of text."""

    def own(table: pa.Table, names: list[str]) -> pa.Table:
        return _in_utc(table.drop_columns([_BUCKET]).rename_columns(names))

    text = compare(own(serving_rows, serving_names), own(training_rows, training_names))
    return pa.table({"part": pa.array([text], pa.string())})


def skew(
    serving: DataFrame | dict[str, DataFrame],
    training: DataFrame | dict[str, DataFrame],
    schemas: str | os.PathLike[str],
    *,
    time_tolerance: str,
    serving_time: str | None = None,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
    ulps: int = 0,
    sample_rows: int = 5,
    config: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
    buckets: int | None = None,
) -> Report:
    """Training/serving skew of Spark DataFrames, as :func:`arrowfeat.data.skew` computes
    it, without collecting the data: both tables are split into ``buckets`` (default
    ``spark.sql.shuffle.partitions``) by a hash of their entity keys, each bucket's
    serving and training rows are matched and compared by the same engine on a worker
    (``cogroup(...).applyInArrow``), and the driver merges the counts. The findings,
    counts and sampled rows are those of ``arrowfeat.data.skew`` on the same rows, whatever
    the bucketing. One bucket's rows of both tables must fit in a worker's memory; a view
    without entity keys is one bucket."""
    import functools

    from . import _native

    options = _skew_options(time_tolerance, serving_time, absolute_tolerance, relative_tolerance, ulps, sample_rows)
    try:
        _native.check_skew_options(**options)  # here, not in every Spark task
    except ValueError as e:
        raise _native_error("skew", e) from None
    _not_empty("skew", "serving", serving, training)
    _not_empty("skew", "training", training, serving)
    if buckets is None:
        buckets = int(_spark_session(serving).conf.get("spark.sql.shuffle.partitions") or 200)
    if not isinstance(buckets, int) or isinstance(buckets, bool) or not 1 <= buckets <= 1_000_000:
        raise ArrowfeatValueError(
            f"skew: argument `buckets`: expected an integer from 1 to 1000000, found {_visible(repr(buckets), 40)}"
        )
    serving_frames = _frames("skew", "serving", serving)
    training_frames = _frames("skew", "training", training)
    training_by_view = {view: df for view, _, df in training_frames}

    def label(argument: str, view: str | None) -> str:  # as the report names the data
        return argument if view is None else f"{argument}[{_visible(view, 100)}]"

    compared: list[tuple[str | None, pa.Table, list[tuple[str, list[str]]]]] = []
    alone: list[tuple[str | None, pa.Table]] = []  # serving data without training data: reported
    for (view, _, serving_df), declaring in zip(
        serving_frames, _declaring("skew", "serving", schemas, serving_frames), strict=True
    ):
        # The training data of the view, or the one given without a view (as in process).
        training_view = view if view in training_by_view else None
        if training_view not in training_by_view and view is None and len(training_by_view) == 1:
            training_view = next(iter(training_by_view))
        if training_view not in training_by_view or not declaring:
            alone.append((view, _empty_table(serving_df)))
            continue
        training_df = training_by_view[training_view]
        serving_label = label("serving", view)
        training_label = label("training", training_view)
        by_file = []
        for schema_label, schema_bytes, keys, _ in declaring:
            compare: Callable[[pa.Table, pa.Table], str] = functools.partial(
                _native.skew_part, schema_label, schema_bytes, serving_label, training_label, **options
            )
            per_bucket = functools.partial(_one_bucket, serving_df.columns, training_df.columns, compare)
            grouped = _bucketed(serving_df, keys, buckets).groupBy(_BUCKET)
            other = _bucketed(training_df, keys, buckets).groupBy(_BUCKET)
            parts = [row["part"] for row in grouped.cogroup(other).applyInArrow(per_bucket, "part string").collect()]
            if not parts:  # no rows in either table: the empty tables still have their columns
                parts = [compare(_empty_table(serving_df), _empty_table(training_df))]
            by_file.append((schema_label, parts))
        compared.append((view, _empty_table(serving_df), by_file))
    try:
        native = _native.skew(
            os.fspath(schemas),
            serving=alone,
            training=[(view, _empty_table(df)) for view, _, df in training_frames],
            compared=compared,
            config=None if config is None else os.fspath(config),
            baseline=None if baseline is None else os.fspath(baseline),
            **options,
        )
    except ValueError as e:
        raise _native_error("skew", e) from None
    return Report(native)


def _spark_session(data: DataFrame | dict[str, DataFrame]) -> Any:
    frames = data.values() if isinstance(data, dict) else [data]
    for df in frames:
        if isinstance(df, DataFrame):
            return df.sparkSession
    raise ArrowfeatTypeError(
        f"skew: argument `serving`: expected a Spark DataFrame or a mapping of view names to DataFrames, "
        f"found {type(data).__name__}"
    )
