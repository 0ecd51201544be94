"""Point-in-time training sets: each label row of a *spine* gets the as-of values and the
windowed aggregates of the same key's *events* visible at the label's time, so no event
after a label leaks into its features.

```python
import arrowfeat as af

training = af.point_in_time(
    labels,                     # pyarrow Table, pandas or Polars DataFrame: key, label time, label
    events,                     # the same kinds: key, event time, values
    by="user_id",               # or a list of key columns, present on both sides
    spine_time="label_ts",
    event_time="ts",
    features=[
        af.as_of("plan"),                        # latest value at or before label_ts
        af.window("amount", "sum", "5m"),         # sum over (label_ts - 5m, label_ts]
        af.window("amount", "count", "7d"),
    ],
    ttl="30d",                  # events older than label_ts - 30d are invisible (as Feast)
)
```

The result is the spine in its original row order with one column per feature:
``plan``, ``amount_sum_5m``, ``amount_count_7d`` (``{column}_{aggregation}_{period}``;
as-of values keep the column's name). pandas in gives pandas out (the spine's index
kept), Polars in gives Polars out. See docs/point-in-time.md for the exact semantics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from . import _native
from ._convert import _import_arrow, _is_lazy_frame, _is_polars_object_dtype, _lazy_frame, _type_name, _visible
from .errors import ArrowfeatTypeError, ArrowfeatValueError
from .windows import _threads, to_nanoseconds

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from ._typing import ArrowStreamExportable, Duration, FeatureSpec, Table

__all__ = ["Feature", "as_of", "point_in_time", "window"]

_FUNCTION = "point_in_time"
AGGREGATIONS = ("last", "first", "sum", "count", "mean", "min", "max")


@dataclass(frozen=True)
class Feature:
    """One output column: ``aggregation`` of event column ``column`` over the trailing
    ``period`` (``None``: every visible event, within the TTL)."""

    column: str
    aggregation: str = "last"
    period: Duration | None = None


def as_of(column: str) -> Feature:
    """The value of ``column`` at the latest visible event (``null`` when there is none)."""
    return Feature(column, "last", None)


def window(column: str, aggregation: str, period: Duration | None = None) -> Feature:
    """``aggregation`` (last, first, sum, count, mean, min, max) of ``column`` over the
    events in ``(t - period, t]`` (ends per ``closed``) at each spine time ``t``."""
    return Feature(column, aggregation, period)


def _feature(spec: Any, function: str = _FUNCTION) -> Feature:
    if isinstance(spec, Feature):
        return spec
    if isinstance(spec, str):
        return as_of(spec)
    if isinstance(spec, tuple) and 1 <= len(spec) <= 3:
        return Feature(*spec)
    raise ArrowfeatTypeError(
        f"{function}: argument `features`: expected af.as_of(column), af.window(column, aggregation, period), "
        f"a column name or a (column, aggregation, period) tuple, found {_type_name(spec)}"
    )


def _kind(obj: Any) -> str:
    module = type(obj).__module__
    if isinstance(obj, pa.Table):
        return "arrow"
    if module.startswith("pandas") and type(obj).__name__ == "DataFrame":
        return "pandas"
    if module.startswith("polars") and type(obj).__name__ == "DataFrame":
        return "polars"
    if _is_lazy_frame(obj):
        return "lazy"
    if isinstance(obj, (pa.RecordBatch, pa.RecordBatchReader)) or hasattr(obj, "__arrow_c_stream__"):
        return "arrow"
    if hasattr(obj, "__arrow_c_array__") and not isinstance(obj, pa.Scalar):
        return "arrow"
    return "unknown"


_TABLES = (
    "a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or Polars DataFrame, a DuckDB relation "
    "or an object with __arrow_c_stream__ / __arrow_c_array__ giving record batches"
)


_POLARS_OBJECTS = b"arrowfeat.polars_object_columns"


def _object_columns(table: pa.Table) -> list[str]:
    """The columns `_table` found to be Polars Object columns."""
    names: list[str] = json.loads((table.schema.metadata or {}).get(_POLARS_OBJECTS, b"[]"))
    return names


def _table(argument: str, obj: Any, function: str = _FUNCTION) -> pa.Table:
    kind = _kind(obj)
    if kind == "pandas":
        try:
            return pa.Table.from_pandas(obj, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a DataFrame of columns Arrow can hold, "
                f"found a pandas DataFrame Arrow cannot convert ({_visible(str(e), 300)})"
            ) from None
    if kind == "polars":
        table = pa.table(obj)
        # Polars exports an Object column as the addresses of its Python objects: note
        # which columns those are, so that using one is refused by name (`_column`).
        objects = [name for name, dtype in obj.schema.items() if _is_polars_object_dtype(dtype)]
        if objects:
            table = table.replace_schema_metadata({_POLARS_OBJECTS: json.dumps(objects)})
        return table
    if kind == "lazy":
        raise _lazy_frame(function, argument, "a table")
    if kind == "arrow":
        data = _import_arrow(function, argument, obj)
        if isinstance(data, pa.Table):
            return data
        # A struct column without null rows is a table of its fields, as pyarrow reads it.
        if pa.types.is_struct(data.type) and data.null_count == 0:
            return pa.Table.from_struct_array(data)
        found = "of structs with null rows" if pa.types.is_struct(data.type) else f"of type {data.type}"
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected {_TABLES}, found a column {found} from {_type_name(obj)}"
        )
    raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected {_TABLES}, found {_type_name(obj)}")


def _refuse_objects(table: pa.Table, where: str, argument: str, names: Sequence[str], function: str) -> None:
    """Refuses, by name, a column `_table` found to be a Polars Object column (its values
    are the addresses of Python objects, not data)."""
    objects = _object_columns(table)
    for name in names:
        if name in objects:
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a column Arrow can hold, found column "
                f"{_visible(repr(name), 200)} of `{where}` of Polars dtype Object (Python objects)"
            )


@overload
def point_in_time(
    spine: pl.DataFrame,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = ...,
    ttl: Duration | None = ...,
    closed: str = ...,
    null_keys_match: bool = ...,
    created_cutoff: bool = ...,
    threads: int | None = ...,
) -> pl.DataFrame: ...
@overload
def point_in_time(
    spine: pd.DataFrame,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = ...,
    ttl: Duration | None = ...,
    closed: str = ...,
    null_keys_match: bool = ...,
    created_cutoff: bool = ...,
    threads: int | None = ...,
) -> pd.DataFrame: ...
@overload
def point_in_time(
    spine: pa.Table | pa.RecordBatch,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = ...,
    ttl: Duration | None = ...,
    closed: str = ...,
    null_keys_match: bool = ...,
    created_cutoff: bool = ...,
    threads: int | None = ...,
) -> pa.Table: ...
@overload
def point_in_time(
    spine: ArrowStreamExportable,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = ...,
    ttl: Duration | None = ...,
    closed: str = ...,
    null_keys_match: bool = ...,
    created_cutoff: bool = ...,
    threads: int | None = ...,
) -> pa.Table: ...
@overload
def point_in_time(
    spine: Any,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = ...,
    ttl: Duration | None = ...,
    closed: str = ...,
    null_keys_match: bool = ...,
    created_cutoff: bool = ...,
    threads: int | None = ...,
) -> Any: ...
def point_in_time(
    spine: Any,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = None,
    ttl: Duration | None = None,
    closed: str = "right",
    null_keys_match: bool = False,
    created_cutoff: bool = False,
    threads: int | None = None,
) -> Any:
    """The spine with one column per feature, computed from the events visible at each
    spine row's time (see the module docstring and docs/point-in-time.md).

    - ``by``: key column(s), named the same in both tables (``None``: one group).
    - ``created``: an event column of created (ingestion) times that breaks ties on
      ``event_time``: the latest created wins, as in Feast. Events still tied are
      ordered by their feature values (docs/point-in-time.md, "Ties"), never by the
      order rows arrive in.
    - ``ttl``: events older than ``t - ttl`` are invisible (an event at exactly
      ``t - ttl`` is visible, as in Feast); ``None`` or 0: no limit.
    - ``closed``: ``"right"`` (default) sees events at exactly ``t``; ``"left"`` and
      ``"none"`` only events strictly before it.
    - ``null_keys_match``: whether a null key matches null keys (pandas ``merge``
      semantics) rather than nothing (SQL, DuckDB, Polars; the default).
    - ``created_cutoff``: an event is visible only once created, too (Feast's
      ``filter_by_created_timestamp``): its ``created`` time must also pass the upper
      end (at or before the spine time; strictly before with ``closed="left"`` or
      ``"none"``); an event without a created time is never visible. Needs ``created``
      (a time of the spine time's kind); as-of values only.
    - ``threads``: threads for the call (default: the cores, at most 8); the results do
      not depend on it.
    """
    return _point_in_time(
        _FUNCTION,
        spine,
        events,
        by=by,
        spine_time=spine_time,
        event_time=event_time,
        features=features,
        created=created,
        ttl=ttl,
        closed=closed,
        null_keys_match=null_keys_match,
        created_cutoff=created_cutoff,
        threads=threads,
    )


def _point_in_time(
    function: str,
    spine: Any,
    events: Table,
    *,
    by: str | Sequence[str] | None,
    spine_time: str,
    event_time: str,
    features: Sequence[FeatureSpec],
    created: str | None = None,
    ttl: Duration | None = None,
    closed: str = "right",
    null_keys_match: bool = False,
    created_cutoff: bool = False,
    threads: int | None = None,
) -> Any:
    """`point_in_time` whose errors name `function`, the caller the user called (for
    example `get_historical_features`)."""
    spine_kind = _kind(spine)
    spine_table = _table("spine", spine, function)
    event_table = _table("events", events, function)
    # Every spine column comes back in the result: Python objects cannot make the trip.
    spine_objects = _object_columns(spine_table)
    if spine_objects:
        raise ArrowfeatTypeError(
            f"{function}: argument `spine`: expected columns Arrow can hold (the spine comes back "
            f"in the result), found column {spine_objects[0]!r} of Polars dtype Object (Python objects)"
        )
    keys: list[str] = [] if by is None else [by] if isinstance(by, str) else list(by)
    names = {"spine_time": spine_time, "event_time": event_time, **({} if created is None else {"created": created})}
    for argument, name in [*(("by", key) for key in keys), *names.items()]:
        if not isinstance(name, str):
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a column name, found {_type_name(name)}"
            )
    specs = [_feature(f, function) for f in features]
    native_features: list[tuple[str, str, int | None, str | None]] = []
    for spec in specs:
        if not isinstance(spec.column, str):
            raise ArrowfeatTypeError(
                f"{function}: argument `features`: expected a column name, found {_type_name(spec.column)}"
            )
        if not isinstance(spec.aggregation, str):
            raise ArrowfeatValueError(
                f"{function}: argument `features`: expected an aggregation among {', '.join(AGGREGATIONS)}, "
                f"found {_visible(repr(spec.aggregation), 100)} for column {_visible(repr(spec.column), 200)}"
            )
        period = None if spec.period is None else to_nanoseconds(function, "features", spec.period)
        native_features.append((spec.column, spec.aggregation, period, None))
    _refuse_objects(spine_table, "spine", "by", keys, function)
    _refuse_objects(spine_table, "spine", "spine_time", [spine_time], function)
    _refuse_objects(event_table, "events", "by", keys, function)
    _refuse_objects(event_table, "events", "event_time", [event_time], function)
    _refuse_objects(event_table, "events", "created", [] if created is None else [created], function)
    _refuse_objects(event_table, "events", "features", [spec.column for spec in specs], function)
    # The join (key matching, type checks, tie-breaks, names) is the Rust one every engine
    # calls; this module only converts tables and spells the arguments.
    batch = _native.point_in_time(
        spine_table,
        event_table,
        keys,
        spine_time,
        event_time,
        native_features,
        created=created,
        ttl=None if ttl is None else to_nanoseconds(function, "ttl", ttl),
        closed=closed,
        null_keys_match=bool(null_keys_match),
        created_cutoff=bool(created_cutoff),
        threads=_threads(function, threads),
        function=function,
    )
    result = pa.Table.from_batches([batch])
    if spine_kind == "pandas":
        import pandas as pd

        # Arrow-backed in, Arrow-backed out: nulls and NaN stay apart. numpy-backed
        # columns hold both as NaN (pandas' missing data).
        arrow_backed = any(isinstance(dtype, pd.ArrowDtype) for dtype in spine.dtypes)
        frame = result.to_pandas(types_mapper=pd.ArrowDtype if arrow_backed else None)
        frame.index = spine.index
        return frame
    if spine_kind == "polars":
        import polars as pl

        return pl.from_arrow(result)
    return result
