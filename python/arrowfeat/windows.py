"""Event-time windows: tumbling, hopping (sliding), rolling and session windows, per key.

Times are pyarrow timestamps of any unit, pandas ``datetime64`` Series or int64
nanoseconds; durations are nanoseconds (``int``), interval strings (``"500ns"``,
``"5m"``, ``"1h 30m"``), ``datetime.timedelta``, ``numpy.timedelta64`` or
``pandas.Timedelta``. Window bounds come back as ``timestamp[ns]`` with the input's time
zone (int64 for int64 input). Input need not be sorted; rows with a null time are
dropped, as Spark drops them. See docs/windows.md for the exact semantics.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from typing import Any

import pyarrow as pa

from . import _native, _shape_like, _to_arrow, _type_name
from .errors import ArrowfeatTypeError, ArrowfeatValueError

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


def to_nanoseconds(function: str, argument: str, value: Any) -> int:
    """A duration as integer nanoseconds."""
    if isinstance(value, bool):
        raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected a duration, found bool")
    if type(value).__module__ == "numpy" and type(value).__name__ == "timedelta64":
        # Checked first: numpy counts timedelta64 as an integer type.
        import numpy as np

        return int(value.astype("timedelta64[ns]").astype(np.int64))
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
    arr = _column(function, argument, value)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr


def _keys(function: str, by: Any) -> pa.Array | None:
    return None if by is None else _decoded(function, "by", by)


def _values(function: str, value: Any) -> pa.Array:
    return _decoded(function, "value", value)


def _check_agg(function: str, agg: str) -> str:
    """The aggregation's canonical name (``avg`` is ``mean``, as in the kernels)."""
    if not isinstance(agg, str) or agg.lower() not in (*AGGREGATIONS, "avg"):
        raise ArrowfeatValueError(
            f"{function}: argument `agg`: expected one of {', '.join(AGGREGATIONS)}, found {agg!r}"
        )
    return "mean" if agg.lower() == "avg" else agg.lower()


def tumble_start(ts: Any, size: Any, offset: Any = 0) -> Any:
    """Start of the tumbling window ``[start, start + size)`` holding each time."""
    f = "tumble_start"
    result = _native.tumble_start(_times(f, ts), to_nanoseconds(f, "size", size), to_nanoseconds(f, "offset", offset))
    return _shape_like(result, ts)


def hop_windows(ts: Any, size: Any, step: Any, offset: Any = 0) -> Any:
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


def rolling(value: Any, ts: Any, period: Any, agg: str, by: Any = None, closed: str = "right") -> Any:
    """``agg`` of the values of the same key's events in ``(t - period, t]`` for each event.

    ``closed`` is ``"right"`` (default), ``"left"`` (``[t - period, t)``, excludes the
    current time), ``"both"`` or ``"none"``. Events at the same time see each other.
    Returns one value per row, in input order (a pandas Series for Series input)."""
    agg = _check_agg("rolling", agg)
    f = "rolling_" + agg
    result = _native.rolling(
        _keys(f, by), _times(f, ts), _values(f, value), to_nanoseconds(f, "period", period), closed, agg
    )
    return _shape_like(result, value, ts)


def rolling_sum(value: Any, ts: Any, period: Any, by: Any = None, closed: str = "right") -> Any:
    """Sum over ``(t - period, t]`` per event: int64 exact for integers, compensated for floats."""
    return rolling(value, ts, period, "sum", by=by, closed=closed)


def rolling_count(value: Any, ts: Any, period: Any, by: Any = None, closed: str = "right") -> Any:
    """Number of non-null values over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "count", by=by, closed=closed)


def rolling_mean(value: Any, ts: Any, period: Any, by: Any = None, closed: str = "right") -> Any:
    """Mean over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "mean", by=by, closed=closed)


def rolling_min(value: Any, ts: Any, period: Any, by: Any = None, closed: str = "right") -> Any:
    """Minimum over ``(t - period, t]`` per event."""
    return rolling(value, ts, period, "min", by=by, closed=closed)


def rolling_max(value: Any, ts: Any, period: Any, by: Any = None, closed: str = "right") -> Any:
    """Maximum over ``(t - period, t]`` per event (NaN counts as the largest, as in Spark)."""
    return rolling(value, ts, period, "max", by=by, closed=closed)


def hop_aggregate(by: Any, ts: Any, value: Any, size: Any, step: Any, agg: str = "sum", offset: Any = 0) -> pa.Table:
    """Every non-empty hopping window ``[start, start + size)`` (starts ``offset + k * step``)
    per key with the ``agg`` of its values. ``by`` may be None for one group.

    Returns a table ``key, window_start, window_end, value`` sorted by key then start
    (without ``key`` when ``by`` is None). Runs in O(rows + windows) and jumps over gaps."""
    f = "hop_aggregate"
    agg = _check_agg(f, agg)
    batch = _native.hop_aggregate(
        _keys(f, by),
        _times(f, ts),
        _values(f, value),
        to_nanoseconds(f, "size", size),
        to_nanoseconds(f, "step", step),
        to_nanoseconds(f, "offset", offset),
        agg,
    )
    return pa.Table.from_batches([batch])


def session_window(ts: Any, gap: Any, by: Any = None) -> Any:
    """The session ``{start, end}`` of each event: events of a key at most ``gap`` apart
    share a session (an event at exactly last + gap joins it, as in Spark); ``end`` is
    the last time plus ``gap``."""
    f = "session_window"
    result = _native.session_window(_keys(f, by), _times(f, ts), to_nanoseconds(f, "gap", gap))
    return _shape_like(result, ts)


def session_aggregate(by: Any, ts: Any, value: Any, gap: Any, agg: str = "sum") -> pa.Table:
    """One row per session per key: ``key, session_start, session_end, value``, sorted by
    key then start (without ``key`` when ``by`` is None)."""
    f = "session_aggregate"
    agg = _check_agg(f, agg)
    batch = _native.session_aggregate(
        _keys(f, by), _times(f, ts), _values(f, value), to_nanoseconds(f, "gap", gap), agg
    )
    return pa.Table.from_batches([batch])
