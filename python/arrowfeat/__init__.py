"""arrowfeat: vectorized feature-engineering functions over Apache Arrow.

Every function accepts pyarrow Arrays and ChunkedArrays, numpy arrays, pandas and Polars
Series, and plain Python values for parameters, and returns the kind it was given: a
pyarrow Array (a ChunkedArray for chunked input), a pandas Series with the same index for
pandas input, a Polars Series for Polars input (the overloads of each signature say so).
Data is handed to the Rust kernels through the Arrow C Data Interface without copying,
and the GIL is released while a kernel runs.

The same kernels back the DataFusion SQL functions (``arrowfeat sql``) and the PySpark
UDFs in :mod:`arrowfeat.spark`, so results are bit-identical across engines.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from . import _native
from ._convert import (
    _apply,
    _cast,
    _float_elements,
    _float_or_vector,
    _hashable,
    _integer,
    _is_column,
    _is_list_type,
    _number,
    _pair,
    _to_arrow,
    _type_name,
    _vector,
    _with_element,
)
from .errors import ArrowfeatError, ArrowfeatInternalError, ArrowfeatTypeError, ArrowfeatValueError
from .point_in_time import Feature, as_of, point_in_time, window
from .windows import (
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
    "hash",
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

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from ._typing import ArrayArg, ChunkedArg, Hashable, Integer, NDArray, Number, PandasArg, PolarsArg, Vector


@overload
def standard_scale(x: pl.Series, mean: PolarsArg[Number], std: PolarsArg[Number]) -> pl.Series: ...
@overload
def standard_scale(x: pd.Series, mean: PandasArg[Number], std: PandasArg[Number]) -> pd.Series: ...
@overload
def standard_scale(x: pa.ChunkedArray, mean: ChunkedArg[Number], std: ChunkedArg[Number]) -> pa.ChunkedArray: ...
@overload
def standard_scale(x: pa.Array | NDArray, mean: ArrayArg[Number], std: ArrayArg[Number]) -> pa.Array: ...
@overload
def standard_scale(x: Any, mean: Any, std: Any) -> Any: ...
def standard_scale(x: Any, mean: Any, std: Any) -> Any:
    """``(x - mean) / std``. ``std`` must be > 0. Each argument is a column or a number."""
    f = "standard_scale"
    args = [_number(f, "x", x), _number(f, "mean", mean), _number(f, "std", std)]
    return _apply(f, _native.standard_scale, args, [x, mean, std])


@overload
def min_max_scale(x: pl.Series, lo: PolarsArg[Number], hi: PolarsArg[Number]) -> pl.Series: ...
@overload
def min_max_scale(x: pd.Series, lo: PandasArg[Number], hi: PandasArg[Number]) -> pd.Series: ...
@overload
def min_max_scale(x: pa.ChunkedArray, lo: ChunkedArg[Number], hi: ChunkedArg[Number]) -> pa.ChunkedArray: ...
@overload
def min_max_scale(x: pa.Array | NDArray, lo: ArrayArg[Number], hi: ArrayArg[Number]) -> pa.Array: ...
@overload
def min_max_scale(x: Any, lo: Any, hi: Any) -> Any: ...
def min_max_scale(x: Any, lo: Any, hi: Any) -> Any:
    """``(x - lo) / (hi - lo)`` clamped to [0, 1]. ``hi`` must be greater than ``lo``."""
    f = "min_max_scale"
    args = [_number(f, "x", x), _number(f, "lo", lo), _number(f, "hi", hi)]
    return _apply(f, _native.min_max_scale, args, [x, lo, hi])


@overload
def bucketize(x: pl.Series, boundaries: Sequence[float]) -> pl.Series: ...
@overload
def bucketize(x: pd.Series, boundaries: Sequence[float]) -> pd.Series: ...
@overload
def bucketize(x: pa.ChunkedArray, boundaries: Sequence[float]) -> pa.ChunkedArray: ...
@overload
def bucketize(x: pa.Array | NDArray, boundaries: Sequence[float]) -> pa.Array: ...
@overload
def bucketize(x: Any, boundaries: Sequence[float]) -> Any: ...
def bucketize(x: Any, boundaries: Sequence[float]) -> Any:
    """Left-closed bucket index of ``x`` for strictly increasing ``boundaries`` (int32)."""
    f = "bucketize"
    if isinstance(boundaries, (str, bytes)) or not hasattr(boundaries, "__iter__"):
        raise ArrowfeatTypeError(
            f"{f}: argument `boundaries`: expected a sequence of numbers, found {_type_name(boundaries)}"
        )
    bounds = [float(b) for b in boundaries]
    return _apply(f, lambda a: _native.bucketize(a, bounds), [_number(f, "x", x)], [x])


@overload
def xxhash64(column: pl.Series, /, *columns: PolarsArg[Hashable]) -> pl.Series: ...
@overload
def xxhash64(column: pd.Series, /, *columns: PandasArg[Hashable]) -> pd.Series: ...
@overload
def xxhash64(column: pa.ChunkedArray, /, *columns: ChunkedArg[Hashable]) -> pa.ChunkedArray: ...
@overload
def xxhash64(column: ArrayArg[Hashable], /, *columns: ArrayArg[Hashable]) -> pa.Array: ...
@overload
def xxhash64(*columns: Any) -> Any: ...
def xxhash64(*columns: Any) -> Any:
    """Spark-compatible ``xxhash64(c1, c2, ...)`` (int64, never null)."""
    f = "xxhash64"
    if not columns:
        raise ArrowfeatTypeError(f"{f}: expected at least one column to hash")
    args = [_hashable(f, f"#{i + 1}", c) for i, c in enumerate(columns)]
    return _apply(f, lambda *a: _native.xxhash64(list(a)), args, columns)


@overload
def hash(column: pl.Series, /, *columns: PolarsArg[Hashable]) -> pl.Series: ...
@overload
def hash(column: pd.Series, /, *columns: PandasArg[Hashable]) -> pd.Series: ...
@overload
def hash(column: pa.ChunkedArray, /, *columns: ChunkedArg[Hashable]) -> pa.ChunkedArray: ...
@overload
def hash(column: ArrayArg[Hashable], /, *columns: ArrayArg[Hashable]) -> pa.Array: ...
@overload
def hash(*columns: Any) -> Any: ...
def hash(*columns: Any) -> Any:
    """Spark-compatible ``hash(c1, c2, ...)``: Murmur3 x86 32-bit, seed 42 (int32, never
    null), the hash behind Spark's ``pmod(hash(key), n)`` bucketing."""
    f = "hash"
    if not columns:
        raise ArrowfeatTypeError(f"{f}: expected at least one column to hash")
    args = [_hashable(f, f"#{i + 1}", c) for i, c in enumerate(columns)]
    return _apply(f, lambda *a: _native.murmur3_hash(list(a)), args, columns)


@overload
def hash_bucket(column: pl.Series, /, *columns_then_buckets: PolarsArg[Hashable]) -> pl.Series: ...
@overload
def hash_bucket(column: pd.Series, /, *columns_then_buckets: PandasArg[Hashable]) -> pd.Series: ...
@overload
def hash_bucket(column: pa.ChunkedArray, /, *columns_then_buckets: ChunkedArg[Hashable]) -> pa.ChunkedArray: ...
@overload
def hash_bucket(column: ArrayArg[Hashable], /, *columns_then_buckets: ArrayArg[Hashable]) -> pa.Array: ...
@overload
def hash_bucket(*columns_then_buckets: Any) -> Any: ...
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


@overload
def dot_product(a: pl.Series, b: PolarsArg[Vector]) -> pl.Series: ...
@overload
def dot_product(a: pd.Series, b: PandasArg[Vector]) -> pd.Series: ...
@overload
def dot_product(a: pa.ChunkedArray, b: ChunkedArg[Vector]) -> pa.ChunkedArray: ...
@overload
def dot_product(a: pa.Array | NDArray, b: ArrayArg[Vector]) -> pa.Array: ...
@overload
def dot_product(a: Any, b: Any) -> Any: ...
def dot_product(a: Any, b: Any) -> Any:
    """Dot product of two vector columns (or a column and one vector), float64."""
    return _pair("dot_product", _native.dot_product, a, b)


@overload
def cosine_similarity(a: pl.Series, b: PolarsArg[Vector]) -> pl.Series: ...
@overload
def cosine_similarity(a: pd.Series, b: PandasArg[Vector]) -> pd.Series: ...
@overload
def cosine_similarity(a: pa.ChunkedArray, b: ChunkedArg[Vector]) -> pa.ChunkedArray: ...
@overload
def cosine_similarity(a: pa.Array | NDArray, b: ArrayArg[Vector]) -> pa.Array: ...
@overload
def cosine_similarity(a: Any, b: Any) -> Any: ...
def cosine_similarity(a: Any, b: Any) -> Any:
    """Cosine similarity in [-1, 1]; null where either vector is zero."""
    return _pair("cosine_similarity", _native.cosine_similarity, a, b)


@overload
def l2_norm(a: pl.Series) -> pl.Series: ...
@overload
def l2_norm(a: pd.Series) -> pd.Series: ...
@overload
def l2_norm(a: pa.ChunkedArray) -> pa.ChunkedArray: ...
@overload
def l2_norm(a: ArrayArg[Vector]) -> pa.Array: ...
@overload
def l2_norm(a: Any) -> Any: ...
def l2_norm(a: Any) -> Any:
    """Euclidean norm of each vector, float64."""
    args = _float_elements("l2_norm", {"a": _vector("l2_norm", "a", a)})
    return _apply("l2_norm", _native.l2_norm, [args["a"]], [a])


@overload
def l2_normalize(a: pl.Series) -> pl.Series: ...
@overload
def l2_normalize(a: pd.Series) -> pd.Series: ...
@overload
def l2_normalize(a: pa.ChunkedArray) -> pa.ChunkedArray: ...
@overload
def l2_normalize(a: ArrayArg[Vector]) -> pa.Array: ...
@overload
def l2_normalize(a: Any) -> Any: ...
def l2_normalize(a: Any) -> Any:
    """Each vector scaled to unit length (same list and element type); null for zero vectors."""
    args = _float_elements("l2_normalize", {"a": _vector("l2_normalize", "a", a)})
    return _apply("l2_normalize", _native.l2_normalize, [args["a"]], [a])


@overload
def quantize_int8(x: pl.Series, scale: PolarsArg[Number], zero_point: PolarsArg[Integer]) -> pl.Series: ...
@overload
def quantize_int8(x: pd.Series, scale: PandasArg[Number], zero_point: PandasArg[Integer]) -> pd.Series: ...
@overload
def quantize_int8(
    x: pa.ChunkedArray, scale: ChunkedArg[Number], zero_point: ChunkedArg[Integer]
) -> pa.ChunkedArray: ...
@overload
def quantize_int8(x: pa.Array | NDArray, scale: ArrayArg[Number], zero_point: ArrayArg[Integer]) -> pa.Array: ...
@overload
def quantize_int8(x: Any, scale: Any, zero_point: Any) -> Any: ...
def quantize_int8(x: Any, scale: Any, zero_point: Any) -> Any:
    """``clamp(round_half_even(x / scale) + zero_point, 0, 255)`` as uint8, elementwise or per vector."""
    f = "quantize_int8"
    args = [_float_or_vector(f, "x", x), _number(f, "scale", scale), _integer(f, "zero_point", zero_point)]
    return _apply(f, _native.quantize_int8, args, [x, scale, zero_point])


@overload
def dequantize_int8(q: pl.Series, scale: PolarsArg[Number], zero_point: PolarsArg[Integer]) -> pl.Series: ...
@overload
def dequantize_int8(q: pd.Series, scale: PandasArg[Number], zero_point: PandasArg[Integer]) -> pd.Series: ...
@overload
def dequantize_int8(
    q: pa.ChunkedArray, scale: ChunkedArg[Number], zero_point: ChunkedArg[Integer]
) -> pa.ChunkedArray: ...
@overload
def dequantize_int8(q: pa.Array | NDArray, scale: ArrayArg[Number], zero_point: ArrayArg[Integer]) -> pa.Array: ...
@overload
def dequantize_int8(q: Any, scale: Any, zero_point: Any) -> Any: ...
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


@overload
def haversine_km(
    lat1: pl.Series, lon1: PolarsArg[Number], lat2: PolarsArg[Number], lon2: PolarsArg[Number]
) -> pl.Series: ...
@overload
def haversine_km(
    lat1: pd.Series, lon1: PandasArg[Number], lat2: PandasArg[Number], lon2: PandasArg[Number]
) -> pd.Series: ...
@overload
def haversine_km(
    lat1: pa.ChunkedArray, lon1: ChunkedArg[Number], lat2: ChunkedArg[Number], lon2: ChunkedArg[Number]
) -> pa.ChunkedArray: ...
@overload
def haversine_km(
    lat1: pa.Array | NDArray, lon1: ArrayArg[Number], lat2: ArrayArg[Number], lon2: ArrayArg[Number]
) -> pa.Array: ...
@overload
def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> Any: ...
def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> Any:
    """Great-circle distance in km between points in degrees; null for |latitude| > 90.

    Within a micrometre of the exact haversine of the same float64 inputs (antipodes
    included), the same bits on every machine; see docs/functions.md."""
    f = "haversine_km"
    raw = [lat1, lon1, lat2, lon2]
    args = [_number(f, n, v) for n, v in zip(["lat1", "lon1", "lat2", "lon2"], raw, strict=False)]
    return _apply(f, _native.haversine_km, args, raw)
