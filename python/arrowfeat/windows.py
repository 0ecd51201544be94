"""Event-time windows: tumbling, hopping (sliding), rolling and session windows, per key.

Times are pyarrow timestamps of any unit, pandas ``datetime64`` Series or int64
nanoseconds; durations are nanoseconds (``int``), interval strings (``"500ns"``,
``"5m"``, ``"1h 30m"``), ``datetime.timedelta``, ``numpy.timedelta64`` or
``pandas.Timedelta``. Window bounds come back as ``timestamp[ns]`` with the input's time
zone (int64 for int64 input). Input need not be sorted; rows with a null time are
dropped, as Spark drops them. See docs/windows.md for the exact semantics.

Per-row functions return the kind they were given (a pandas Series for pandas input, a
Polars Series for Polars input, else a pyarrow Array, one chunk); ``hop_aggregate`` and
``session_aggregate`` return a ``pyarrow.Table``. ``by`` (the keys) is keyword-only.
"""

from __future__ import annotations

import datetime as _dt
import numbers
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from . import _native
from ._convert import (
    _by_keyword_only,
    _decode_dictionary,
    _is_column,
    _shape_like,
    _to_arrow,
    _type_name,
    _visible,
)
from .errors import ArrowfeatTypeError, ArrowfeatValueError

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from ._typing import ArrowColumn, Column, Duration

__all__ = [
    "hop_aggregate",
    "hop_windows",
    "rolling",
    "rolling_count",
    "rolling_max",
    "rolling_mean",
    "rolling_min",
    "rolling_sum",
    "session_aggregate",
    "session_window",
    "to_nanoseconds",
    "tumble_start",
]

AGGREGATIONS = ("sum", "count", "mean", "min", "max")


# More threads than any machine has; bounded so that the count fits the native size.
MOST_THREADS = 1 << 16


def default_threads() -> int:
    """Threads for one in-process call: the cores, at most 8 (the kernels' results do not
    depend on it). Spark and DataFusion pass 1: they parallelise already."""
    return min(os.cpu_count() or 1, 8)


def _threads(function: str, threads: Any) -> int:
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or not 1 <= int(threads) <= MOST_THREADS:
        raise ArrowfeatValueError(
            f"{function}: argument `threads`: expected an int from 1 to {MOST_THREADS} or None, found {threads!r}"
        )
    return int(threads)


_NANOS_PER_UNIT = {
    "W": 604_800_000_000_000,
    "D": 86_400_000_000_000,
    "h": 3_600_000_000_000,
    "m": 60_000_000_000,
    "s": 1_000_000_000,
    "ms": 1_000_000,
    "us": 1_000,
    "ns": 1,
}


def to_nanoseconds(function: str, argument: str, value: Any) -> int:
    """A duration as integer nanoseconds, within the int64 range (checked, never wrapped)."""
    nanos = _nanoseconds(function, argument, value)
    if not -(2**63) <= nanos < 2**63:
        raise ArrowfeatValueError(
            f"{function}: argument `{argument}`: expected a duration within the int64 range of "
            f"nanoseconds (about 292 years), found {nanos} ns"
        )
    return nanos


def _nanoseconds(function: str, argument: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected a duration, found bool")
    if type(value).__module__ == "numpy" and type(value).__name__ == "timedelta64":
        # Checked first: numpy counts timedelta64 as an integer type.
        import numpy as np

        if np.isnat(value):
            raise ArrowfeatValueError(f"{function}: argument `{argument}`: expected a duration, found NaT")
        unit, count = np.datetime_data(value.dtype)
        ticks = int(value.astype(np.int64)) * count
        # In Python integers: numpy's own cast to [ns] wraps silently past 292 years.
        if unit in ("generic", "ns"):
            return ticks
        if unit in _NANOS_PER_UNIT:
            return ticks * _NANOS_PER_UNIT[unit]
        per_nanosecond = {"ps": 1_000, "fs": 1_000_000, "as": 1_000_000_000}.get(unit)
        if per_nanosecond is None:
            raise ArrowfeatValueError(
                f"{function}: argument `{argument}`: expected a fixed-length timedelta64 (weeks to "
                f"attoseconds), found one in {unit!r}"
            )
        if ticks % per_nanosecond:
            raise ArrowfeatValueError(
                f"{function}: argument `{argument}`: expected a whole number of nanoseconds, found {ticks} {unit}"
            )
        return ticks // per_nanosecond
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        return _native.parse_duration(function, argument, value)
    if isinstance(value, _dt.timedelta):
        # pandas.Timedelta is a timedelta subclass with nanosecond precision.
        nanos = getattr(value, "value", None)
        if isinstance(nanos, numbers.Integral) and type(value).__module__.startswith("pandas"):
            return int(nanos)
        return (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1_000
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a duration (int nanoseconds, a string such as "
        f"'5m', or a timedelta), found {_type_name(value)}"
    )


def _column(function: str, argument: str, value: Any) -> pa.Array:
    """A column as one contiguous Arrow array (windows need whole groups)."""
    if value is None:
        raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected a column, found None")
    arr = _to_arrow(function, argument, value)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _times(function: str, value: Any) -> pa.Array:
    # Timestamps of any unit, dates and int64 nanoseconds go to the kernels as they are.
    return _column(function, "ts", value)


def _decoded(function: str, argument: str, value: Any) -> pa.Array:
    """A column with dictionaries decoded (the kernels read plain values)."""
    return _decode_dictionary(_column(function, argument, value))


def _keys(function: str, by: Any) -> pa.Array | None:
    return None if by is None else _decoded(function, "by", by)


def _values(function: str, value: Any) -> pa.Array:
    return _decoded(function, "value", value)


def _check_agg(function: str, agg: str) -> str:
    """The aggregation's canonical name (``avg`` is ``mean``, as in the kernels)."""
    if not isinstance(agg, str) or agg.lower() not in (*AGGREGATIONS, "avg"):
        raise ArrowfeatValueError(
            f"{function}: argument `agg`: expected one of {', '.join(AGGREGATIONS)}, found {_visible(repr(agg), 100)}"
        )
    return "mean" if agg.lower() == "avg" else agg.lower()


def _column_at(argument: str) -> Callable[[dict[str, Any]], str | None]:
    """The check of an old call: a column where a duration belongs (`by` was first)."""
    return lambda bound: argument if _is_column(bound.get(argument)) else None


@overload
def tumble_start(ts: pl.Series, size: Duration, offset: Duration = ...) -> pl.Series: ...
@overload
def tumble_start(ts: pd.Series, size: Duration, offset: Duration = ...) -> pd.Series: ...
@overload
def tumble_start(ts: ArrowColumn, size: Duration, offset: Duration = ...) -> pa.Array: ...
@overload
def tumble_start(ts: Any, size: Duration, offset: Duration = ...) -> Any: ...
def tumble_start(ts: Any, size: Duration, offset: Duration = 0) -> Any:
    """Start of the tumbling window ``[start, start + size)`` holding each time."""
    f = "tumble_start"
    result = _native.tumble_start(_times(f, ts), to_nanoseconds(f, "size", size), to_nanoseconds(f, "offset", offset))
    return _shape_like(result, ts)


@overload
def hop_windows(ts: pl.Series, size: Duration, step: Duration, offset: Duration = ...) -> pl.Series: ...
@overload
def hop_windows(ts: pd.Series, size: Duration, step: Duration, offset: Duration = ...) -> pd.Series: ...
@overload
def hop_windows(ts: ArrowColumn, size: Duration, step: Duration, offset: Duration = ...) -> pa.Array: ...
@overload
def hop_windows(ts: Any, size: Duration, step: Duration, offset: Duration = ...) -> Any: ...
def hop_windows(ts: Any, size: Duration, step: Duration, offset: Duration = 0) -> Any:
    """Starts of every hopping window ``[start, start + size)`` holding each time (a list
    per row, ascending), as Spark's ``window(ts, size, step)``."""
    f = "hop_windows"
    result = _native.hop_windows(
        _times(f, ts),
        to_nanoseconds(f, "size", size),
        to_nanoseconds(f, "step", step),
        to_nanoseconds(f, "offset", offset),
    )
    return _shape_like(result, ts)


@overload
def rolling(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    agg: str,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling(
    value: pd.Series,
    ts: Column,
    period: Duration,
    agg: str,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    agg: str,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling(
    value: Any, ts: Any, period: Duration, agg: str, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling", "rolling(value, ts, period, agg, by=keys)", 4)
def rolling(
    value: Any,
    ts: Any,
    period: Duration,
    agg: str,
    *,
    by: Any = None,
    closed: str = "right",
    threads: int | None = None,
) -> Any:
    """``agg`` of the values of the same key's events in ``(t - period, t]`` for each event.

    ``closed`` is ``"right"`` (default), ``"left"`` (``[t - period, t)``, excludes the
    current time), ``"both"`` or ``"none"``. Events at the same time see each other.
    Returns one value per row, in input order (a pandas Series for Series input)."""
    agg = _check_agg("rolling", agg)
    f = "rolling_" + agg
    result = _native.rolling(
        _keys(f, by),
        _times(f, ts),
        _values(f, value),
        to_nanoseconds(f, "period", period),
        closed,
        agg,
        _threads(f, threads),
    )
    return _shape_like(result, value, ts)


@overload
def rolling_sum(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling_sum(
    value: pd.Series,
    ts: Column,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling_sum(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling_sum(
    value: Any, ts: Any, period: Duration, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling_sum", "rolling_sum(value, ts, period, by=keys)", 3)
def rolling_sum(
    value: Any, ts: Any, period: Duration, *, by: Any = None, closed: str = "right", threads: int | None = None
) -> Any:
    """Sum over ``(t - period, t]`` per event: int64 exact for integers, correctly rounded for floats."""
    return rolling(value, ts, period, "sum", by=by, closed=closed, threads=threads)


@overload
def rolling_count(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling_count(
    value: pd.Series,
    ts: Column,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling_count(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling_count(
    value: Any, ts: Any, period: Duration, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling_count", "rolling_count(value, ts, period, by=keys)", 3)
def rolling_count(
    value: Any, ts: Any, period: Duration, *, by: Any = None, closed: str = "right", threads: int | None = None
) -> Any:
    """Number of non-null values over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "count", by=by, closed=closed, threads=threads)


@overload
def rolling_mean(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling_mean(
    value: pd.Series,
    ts: Column,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling_mean(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling_mean(
    value: Any, ts: Any, period: Duration, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling_mean", "rolling_mean(value, ts, period, by=keys)", 3)
def rolling_mean(
    value: Any, ts: Any, period: Duration, *, by: Any = None, closed: str = "right", threads: int | None = None
) -> Any:
    """Mean over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "mean", by=by, closed=closed, threads=threads)


@overload
def rolling_min(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling_min(
    value: pd.Series,
    ts: Column,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling_min(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling_min(
    value: Any, ts: Any, period: Duration, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling_min", "rolling_min(value, ts, period, by=keys)", 3)
def rolling_min(
    value: Any, ts: Any, period: Duration, *, by: Any = None, closed: str = "right", threads: int | None = None
) -> Any:
    """Minimum over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "min", by=by, closed=closed, threads=threads)


@overload
def rolling_max(
    value: pl.Series,
    ts: ArrowColumn | pl.Series,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pl.Series: ...
@overload
def rolling_max(
    value: pd.Series,
    ts: Column,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pd.Series: ...
@overload
def rolling_max(
    value: ArrowColumn,
    ts: ArrowColumn,
    period: Duration,
    *,
    by: Column | None = ...,
    closed: str = ...,
    threads: int | None = ...,
) -> pa.Array: ...
@overload
def rolling_max(
    value: Any, ts: Any, period: Duration, *, by: Any = ..., closed: str = ..., threads: int | None = ...
) -> Any: ...
@_by_keyword_only("rolling_max", "rolling_max(value, ts, period, by=keys)", 3)
def rolling_max(
    value: Any, ts: Any, period: Duration, *, by: Any = None, closed: str = "right", threads: int | None = None
) -> Any:
    """Maximum over ``(t - period, t]`` per event (NaN counts as the largest, as in Spark)."""
    return rolling(value, ts, period, "max", by=by, closed=closed, threads=threads)


@_by_keyword_only("hop_aggregate", "hop_aggregate(ts, value, size, step, agg, offset, by=keys)", 6, _column_at("size"))
def hop_aggregate(
    ts: Column,
    value: Column,
    size: Duration,
    step: Duration,
    agg: str = "sum",
    offset: Duration = 0,
    *,
    by: Column | None = None,
    threads: int | None = None,
) -> pa.Table:
    """Every non-empty hopping window ``[start, start + size)`` (starts ``offset + k * step``)
    per key (``by``) with the ``agg`` of its values; without ``by``, one group.

    Returns a table ``key, window_start, window_end, value`` sorted by key then start
    (without ``key`` when ``by`` is None). Runs in O(rows + windows) and jumps over gaps."""
    f = "hop_aggregate"
    agg = _check_agg(f, agg)
    batches = _native.hop_aggregate(
        _keys(f, by),
        _times(f, ts),
        _values(f, value),
        to_nanoseconds(f, "size", size),
        to_nanoseconds(f, "step", step),
        to_nanoseconds(f, "offset", offset),
        agg,
        _threads(f, threads),
    )
    # One chunk per thread that made windows: no copy into one.
    return pa.Table.from_batches(batches)


@overload
def session_window(
    ts: pl.Series, gap: Duration, *, by: Column | None = ..., threads: int | None = ...
) -> pl.Series: ...
@overload
def session_window(
    ts: pd.Series, gap: Duration, *, by: Column | None = ..., threads: int | None = ...
) -> pd.Series: ...
@overload
def session_window(
    ts: ArrowColumn, gap: Duration, *, by: Column | None = ..., threads: int | None = ...
) -> pa.Array: ...
@overload
def session_window(ts: Any, gap: Duration, *, by: Any = ..., threads: int | None = ...) -> Any: ...
@_by_keyword_only("session_window", "session_window(ts, gap, by=keys)", 2)
def session_window(ts: Any, gap: Duration, *, by: Any = None, threads: int | None = None) -> Any:
    """The session ``{start, end}`` of each event: events of a key at most ``gap`` apart
    share a session (an event at exactly last + gap joins it, as in Spark); ``end`` is
    the last time plus ``gap``."""
    f = "session_window"
    result = _native.session_window(_keys(f, by), _times(f, ts), to_nanoseconds(f, "gap", gap), _threads(f, threads))
    return _shape_like(result, ts)


@_by_keyword_only("session_aggregate", "session_aggregate(ts, value, gap, agg, by=keys)", 4, _column_at("gap"))
def session_aggregate(
    ts: Column, value: Column, gap: Duration, agg: str = "sum", *, by: Column | None = None, threads: int | None = None
) -> pa.Table:
    """One row per session per key: ``key, session_start, session_end, value``, sorted by
    key then start (without ``key`` when ``by`` is None)."""
    f = "session_aggregate"
    agg = _check_agg(f, agg)
    batches = _native.session_aggregate(
        _keys(f, by), _times(f, ts), _values(f, value), to_nanoseconds(f, "gap", gap), agg, _threads(f, threads)
    )
    # One chunk per thread that made windows: no copy into one.
    return pa.Table.from_batches(batches)
