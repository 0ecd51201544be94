"""arrowfeat: vectorized feature-engineering functions over Apache Arrow.

Every function accepts pyarrow Arrays and ChunkedArrays, numpy arrays, pandas Series,
and plain Python values for parameters, and returns a pyarrow Array (a ChunkedArray for
chunked input, a pandas Series with the same index for Series input). Data is handed to
the Rust kernels through the Arrow C Data Interface without copying, and the GIL is
released while a kernel runs.

The same kernels back the DataFusion SQL functions (``arrowfeat sql``) and the PySpark
UDFs in :mod:`arrowfeat.spark`, so results are bit-identical across engines.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from . import _native
from .errors import ArrowfeatError, ArrowfeatInternalError, ArrowfeatTypeError, ArrowfeatValueError

__all__ = [
    "ArrowfeatError",
    "ArrowfeatInternalError",
    "ArrowfeatTypeError",
    "ArrowfeatValueError",
    "Feature",
    "as_of",
    "bucketize",
    "cosine_similarity",
    "dequantize_int8",
    "dot_product",
    "hash_bucket",
    "haversine_km",
    "hop_aggregate",
    "hop_windows",
    "l2_norm",
    "l2_normalize",
    "min_max_scale",
    "point_in_time",
    "quantize_int8",
    "rolling",
    "rolling_count",
    "rolling_max",
    "rolling_mean",
    "rolling_min",
    "rolling_sum",
    "session_aggregate",
    "session_window",
    "standard_scale",
    "tumble_start",
    "window",
    "xxhash64",
]

__version__ = "0.1.0"


def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _is_series(obj: Any) -> bool:
    return type(obj).__module__.startswith("pandas") and type(obj).__name__ == "Series"


def _is_ndarray(obj: Any) -> bool:
    return type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray"


def _is_polars_series(obj: Any) -> bool:
    return type(obj).__module__.startswith("polars") and type(obj).__name__ == "Series"


def _speaks_arrow(obj: Any) -> bool:
    """Whether `obj` exports itself through the Arrow PyCapsule interface (Polars, DuckDB,
    nanoarrow, ...), as a stream or as one array."""
    return hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_array__")


def _is_column(obj: Any) -> bool:
    return (
        isinstance(obj, (pa.Array, pa.ChunkedArray))
        or _is_series(obj)
        or (_is_ndarray(obj) and obj.ndim >= 1)
        or (_speaks_arrow(obj) and not isinstance(obj, (pa.Scalar, pa.Table, pa.RecordBatch)))
    )


def _to_arrow(function: str, argument: str, obj: Any) -> pa.Array | pa.ChunkedArray:
    """A column argument as Arrow, without copying where Arrow allows it."""
    if isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return obj
    if _is_series(obj):
        return pa.Array.from_pandas(obj)
    if _is_ndarray(obj):
        if obj.ndim == 1:
            return pa.array(obj)
        if obj.ndim == 2:
            # A (rows, dim) matrix is a column of fixed-size vectors.
            import numpy as np

            flat = pa.array(np.ascontiguousarray(obj).reshape(-1))
            return pa.FixedSizeListArray.from_arrays(flat, obj.shape[1])
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a 1-D or 2-D numpy array, found {obj.ndim} dimensions"
        )
    if hasattr(obj, "__arrow_c_stream__") and not isinstance(obj, (pa.Table, pa.RecordBatch)):
        # Zero-copy import of a stream of arrays (a Polars Series, a DuckDB column, ...).
        return pa.chunked_array(obj)
    if hasattr(obj, "__arrow_c_array__") and not isinstance(obj, (pa.Table, pa.RecordBatch)):
        return pa.array(obj)
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a pyarrow Array, ChunkedArray, numpy array, "
        f"pandas or Polars Series, or an object with __arrow_c_array__ / __arrow_c_stream__, "
        f"found {_type_name(obj)}"
    )


def _cast(function: str, argument: str, arr: Any, target: pa.DataType, what: str) -> Any:
    if arr.type == target:
        return arr
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        kind = (
            ArrowfeatValueError
            if isinstance(e, pa.ArrowInvalid) and _castable(arr.type, target)
            else ArrowfeatTypeError
        )
        raise kind(f"{function}: argument `{argument}`: expected {what}, found {arr.type} ({e})") from None


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    """Numeric to numeric casts fail on values (overflow), not on types."""
    numeric = (pa.types.is_integer, pa.types.is_floating)
    return any(f(source) for f in numeric) and any(f(target) for f in numeric)


def _number(function: str, argument: str, value: Any) -> Any:
    """A float64 argument: a column cast to float64, or a float64 scalar."""
    if _is_column(value):
        return _cast(function, argument, _to_arrow(function, argument, value), pa.float64(), "numbers")
    if value is None:
        return pa.scalar(None, pa.float64())
    if isinstance(value, pa.Scalar):
        return _cast(function, argument, value, pa.float64(), "a number")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return pa.scalar(float(value), pa.float64())
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a number or a column, found {_type_name(value)}"
    )


def _integer(function: str, argument: str, value: Any) -> Any:
    """An int64 argument: a column cast to int64, or an int64 scalar."""
    if _is_column(value):
        arr = _to_arrow(function, argument, value)
        if not pa.types.is_integer(arr.type):
            raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected integers, found {arr.type}")
        return _cast(function, argument, arr, pa.int64(), "integers")
    if value is None:
        return pa.scalar(None, pa.int64())
    if isinstance(value, pa.Scalar):
        return _cast(function, argument, value, pa.int64(), "an integer")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return pa.scalar(int(value), pa.int64())
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected an integer or a column, found {_type_name(value)}"
    )


def _is_list_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _with_element(t: pa.DataType, element: pa.DataType) -> pa.DataType:
    if pa.types.is_fixed_size_list(t):
        return pa.list_(element, t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(element)
    return pa.list_(element)


def _vector(function: str, argument: str, value: Any) -> Any:
    """A vector argument: a list column, or one vector (a list or 1-D array) as a scalar."""
    if (_is_column(value) and not _is_ndarray(value)) or (_is_ndarray(value) and value.ndim == 2):
        arr = _to_arrow(function, argument, value)
        if not _is_list_type(arr.type):
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a list or fixed-size list column of numbers, "
                f"found {arr.type}"
            )
        return arr
    if isinstance(value, pa.Scalar):
        return value
    if _is_ndarray(value) or isinstance(value, (list, tuple)):
        import numpy as np

        values = np.asarray(value)
        if values.ndim != 1 or values.dtype.kind not in "fiu":
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected one vector of numbers, found {values.dtype} with shape {values.shape}"
            )
        element = pa.float32() if values.dtype == np.float32 else pa.float64()
        return pa.scalar(values.tolist(), pa.list_(element))
    if value is None:
        return pa.scalar(None, pa.list_(pa.float64()))
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a vector column or one vector, found {_type_name(value)}"
    )


def _float_elements(function: str, args: dict[str, Any]) -> dict[str, Any]:
    """Casts vector arguments to one float element type (float32 only if all are float32)."""
    elements = {name: v.type.value_type for name, v in args.items()}
    for name, element in elements.items():
        if not (pa.types.is_integer(element) or pa.types.is_floating(element)):
            raise ArrowfeatTypeError(
                f"{function}: argument `{name}`: expected vectors of numbers, found vectors of {element}"
            )
    target = pa.float32() if all(e == pa.float32() for e in elements.values()) else pa.float64()
    return {
        name: _cast(function, name, v, _with_element(v.type, target), f"vectors of {target}")
        for name, v in args.items()
    }


def _hashable(function: str, argument: str, value: Any) -> Any:
    """A column to hash as it is (dictionaries decoded), or a scalar of its natural type."""
    if _is_column(value):
        arr = _to_arrow(function, argument, value)
        if pa.types.is_dictionary(arr.type):
            arr = arr.cast(arr.type.value_type)
        return arr
    if isinstance(value, pa.Scalar):
        return value
    if value is None:
        return pa.scalar(None, pa.null())
    if isinstance(value, bool):
        return pa.scalar(value, pa.bool_())
    if isinstance(value, numbers.Integral):
        return pa.scalar(int(value), pa.int64())
    if isinstance(value, numbers.Real):
        return pa.scalar(float(value), pa.float64())
    if isinstance(value, str):
        return pa.scalar(value, pa.string())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return pa.scalar(bytes(value), pa.binary())
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a column or a bool, int, float, str or bytes value, found {_type_name(value)}"
    )


_ROW = re.compile(r"\b(rows?) (\d+)")


def _shift_rows(message: str, offset: int) -> str:
    """`message` with every "row N" moved on by `offset` rows."""
    if offset == 0:
        return message
    return _ROW.sub(lambda m: f"{m.group(1)} {int(m.group(2)) + offset}", message)


def _apply(function: str, native: Callable[..., pa.Array], args: Sequence[Any], original: Sequence[Any]) -> Any:
    """Runs `native` over prepared Arrow arguments, chunk by chunk for chunked input, and
    shapes the result like the first column argument (ChunkedArray, Series or Array)."""
    chunked = [a for a in args if isinstance(a, pa.ChunkedArray)]
    if chunked:
        layouts = {tuple(len(c) for c in a.chunks) for a in chunked}
        columns = [a for a in args if isinstance(a, pa.Array)]
        if len(layouts) == 1 and not columns:
            chunk_lengths = next(iter(layouts))
            pieces = []
            start = 0
            for i, length in enumerate(chunk_lengths):
                chunk_args = [a.chunk(i) if isinstance(a, pa.ChunkedArray) else a for a in args]
                try:
                    pieces.append(native(*chunk_args))
                except (ValueError, TypeError) as e:
                    # Row numbers count from the start of the input, not of the chunk.
                    raise type(e)(_shift_rows(str(e), start)) from None
                start += length
        else:
            # Chunk boundaries differ between arguments: align by combining (one copy).
            flat = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in args]
            pieces = [native(*flat)]
        if not pieces:
            probe = native(*[a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in args])
            result: Any = pa.chunked_array([], type=probe.type)
        else:
            result = pa.chunked_array(pieces)
    else:
        result = native(*args)
    return _shape_like(result, *original)


def _shape_like(result: Any, *originals: Any) -> Any:
    """pandas in, pandas out (the index kept); Polars in, Polars out; else Arrow."""
    series = next((o for o in originals if _is_series(o)), None)
    if series is not None:
        out = result.to_pandas()
        out.index = series.index
        out.name = series.name
        return out
    polars_series = next((o for o in originals if _is_polars_series(o)), None)
    if polars_series is not None:
        import polars as pl

        return pl.Series(polars_series.name, result)
    return result


def standard_scale(x: Any, mean: Any, std: Any) -> Any:
    """``(x - mean) / std``. ``std`` must be > 0. Each argument is a column or a number."""
    f = "standard_scale"
    args = [_number(f, "x", x), _number(f, "mean", mean), _number(f, "std", std)]
    return _apply(f, _native.standard_scale, args, [x, mean, std])


def min_max_scale(x: Any, lo: Any, hi: Any) -> Any:
    """``(x - lo) / (hi - lo)`` clamped to [0, 1]. ``hi`` must be greater than ``lo``."""
    f = "min_max_scale"
    args = [_number(f, "x", x), _number(f, "lo", lo), _number(f, "hi", hi)]
    return _apply(f, _native.min_max_scale, args, [x, lo, hi])


def bucketize(x: Any, boundaries: Sequence[float]) -> Any:
    """Left-closed bucket index of ``x`` for strictly increasing ``boundaries`` (int32)."""
    f = "bucketize"
    if isinstance(boundaries, (str, bytes)) or not hasattr(boundaries, "__iter__"):
        raise ArrowfeatTypeError(
            f"{f}: argument `boundaries`: expected a sequence of numbers, found {_type_name(boundaries)}"
        )
    bounds = [float(b) for b in boundaries]
    return _apply(f, lambda a: _native.bucketize(a, bounds), [_number(f, "x", x)], [x])


def xxhash64(*columns: Any) -> Any:
    """Spark-compatible ``xxhash64(c1, c2, ...)`` (int64, never null)."""
    f = "xxhash64"
    if not columns:
        raise ArrowfeatTypeError(f"{f}: expected at least one column to hash")
    args = [_hashable(f, f"#{i + 1}", c) for i, c in enumerate(columns)]
    return _apply(f, lambda *a: _native.xxhash64(list(a)), args, columns)


def hash_bucket(*columns_then_buckets: Any) -> Any:
    """``pmod(xxhash64(c1, ...), num_buckets)``, bit-identical to Spark. The last argument
    is ``num_buckets`` (an int > 0 or an integer column)."""
    f = "hash_bucket"
    if len(columns_then_buckets) < 2:
        raise ArrowfeatTypeError(f"{f}: expected one or more columns then num_buckets")
    *columns, num_buckets = columns_then_buckets
    args = [_hashable(f, f"#{i + 1}", c) for i, c in enumerate(columns)]
    args.append(_integer(f, "num_buckets", num_buckets))
    return _apply(f, lambda *a: _native.hash_bucket(list(a[:-1]), a[-1]), args, columns_then_buckets)


def _pair(function: str, native: Callable[..., Any], a: Any, b: Any) -> Any:
    args = _float_elements(function, {"a": _vector(function, "a", a), "b": _vector(function, "b", b)})
    return _apply(function, native, [args["a"], args["b"]], [a, b])


def dot_product(a: Any, b: Any) -> Any:
    """Dot product of two vector columns (or a column and one vector), float64."""
    return _pair("dot_product", _native.dot_product, a, b)


def cosine_similarity(a: Any, b: Any) -> Any:
    """Cosine similarity in [-1, 1]; null where either vector is zero."""
    return _pair("cosine_similarity", _native.cosine_similarity, a, b)


def l2_norm(a: Any) -> Any:
    """Euclidean norm of each vector, float64."""
    args = _float_elements("l2_norm", {"a": _vector("l2_norm", "a", a)})
    return _apply("l2_norm", _native.l2_norm, [args["a"]], [a])


def l2_normalize(a: Any) -> Any:
    """Each vector scaled to unit length (same list and element type); null for zero vectors."""
    args = _float_elements("l2_normalize", {"a": _vector("l2_normalize", "a", a)})
    return _apply("l2_normalize", _native.l2_normalize, [args["a"]], [a])


def _float_or_vector(function: str, argument: str, value: Any) -> Any:
    if _is_column(value):
        # A 2-D numpy array arrives here as a fixed-size list column.
        arr = _to_arrow(function, argument, value)
        if _is_list_type(arr.type):
            return _float_elements(function, {argument: arr})[argument]
        if arr.type == pa.float32():
            return arr
        return _cast(function, argument, arr, pa.float64(), "floats or vectors of floats")
    return _number(function, argument, value)


def quantize_int8(x: Any, scale: Any, zero_point: Any) -> Any:
    """``clamp(round_half_even(x / scale) + zero_point, 0, 255)`` as uint8, elementwise or per vector."""
    f = "quantize_int8"
    args = [_float_or_vector(f, "x", x), _number(f, "scale", scale), _integer(f, "zero_point", zero_point)]
    return _apply(f, _native.quantize_int8, args, [x, scale, zero_point])


def dequantize_int8(q: Any, scale: Any, zero_point: Any) -> Any:
    """``(q - zero_point) * scale`` as float32, elementwise on uint8 or per vector of uint8."""
    f = "dequantize_int8"
    if _is_column(q):
        arr = _to_arrow(f, "q", q)
        target = _with_element(arr.type, pa.uint8()) if _is_list_type(arr.type) else pa.uint8()
        q_arg = _cast(f, "q", arr, target, "uint8 values in 0..=255")
    elif isinstance(q, numbers.Integral) and not isinstance(q, bool):
        if not 0 <= int(q) <= 255:
            raise ArrowfeatValueError(f"{f}: argument `q`: expected a value in 0..=255, found {q}")
        q_arg = pa.scalar(int(q), pa.uint8())
    else:
        raise ArrowfeatTypeError(f"{f}: argument `q`: expected a uint8 column or value, found {_type_name(q)}")
    args = [q_arg, _number(f, "scale", scale), _integer(f, "zero_point", zero_point)]
    return _apply(f, _native.dequantize_int8, args, [q, scale, zero_point])


def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> Any:
    """Great-circle distance in km between points in degrees; null for |latitude| > 90."""
    f = "haversine_km"
    raw = [lat1, lon1, lat2, lon2]
    args = [_number(f, n, v) for n, v in zip(["lat1", "lon1", "lat2", "lon2"], raw, strict=False)]
    return _apply(f, _native.haversine_km, args, raw)


# Event-time windows (imported last: the module uses the helpers above).
from .point_in_time import Feature, as_of, point_in_time, window  # noqa: E402
from .windows import (  # noqa: E402
    hop_aggregate,
    hop_windows,
    rolling,
    rolling_count,
    rolling_max,
    rolling_mean,
    rolling_min,
    rolling_sum,
    session_aggregate,
    session_window,
    tumble_start,
)
