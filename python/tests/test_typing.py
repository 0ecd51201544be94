"""The overloads of the public signatures, checked twice.

mypy (``make lint-python`` checks this file strictly) verifies with ``assert_type`` that a
call picks the overload of its input kind, and with ``type: ignore[...]`` comments (unused
ones are errors) that calls in the order before 0.1 are rejected. pyarrow and pandas have
no type information in this environment (their classes are ``Any`` to mypy), so for them
only Polars and the arity are checked statically. At run time, pytest calls every function
with an input of each overload's first-parameter kind and checks that the result is of the
kind that overload declares, so no overload can say something the code does not do.
"""

import typing
from collections.abc import Callable
from typing import Any, assert_type

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import arrowfeat as af

NUMBERS = [1, 2, 3]
VECTORS = [[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]]


def test_polars_in_polars_out() -> None:
    x = pl.Series("x", NUMBERS)
    v = pl.Series("v", VECTORS)
    assert isinstance(assert_type(af.standard_scale(x, 1.0, 2.0), pl.Series), pl.Series)
    assert isinstance(assert_type(af.min_max_scale(x, 0, x), pl.Series), pl.Series)
    assert isinstance(assert_type(af.bucketize(x, [0.0, 2.0]), pl.Series), pl.Series)
    assert isinstance(assert_type(af.xxhash64(x, "salt", 7), pl.Series), pl.Series)
    assert isinstance(assert_type(af.hash_bucket(x, x, 10), pl.Series), pl.Series)
    assert isinstance(assert_type(af.dot_product(v, [1.0, 0.0]), pl.Series), pl.Series)
    assert isinstance(assert_type(af.cosine_similarity(v, v), pl.Series), pl.Series)
    assert isinstance(assert_type(af.l2_norm(v), pl.Series), pl.Series)
    assert isinstance(assert_type(af.l2_normalize(v), pl.Series), pl.Series)
    assert isinstance(assert_type(af.quantize_int8(x, 0.5, 128), pl.Series), pl.Series)
    assert isinstance(assert_type(af.dequantize_int8(x, 0.5, 128), pl.Series), pl.Series)
    assert isinstance(assert_type(af.haversine_km(x, x, 0.0, 0.0), pl.Series), pl.Series)
    assert isinstance(assert_type(af.tumble_start(x, "5m"), pl.Series), pl.Series)
    assert isinstance(assert_type(af.hop_windows(x, 10, 5), pl.Series), pl.Series)
    assert isinstance(assert_type(af.rolling(x, x, 5, "mean", by=x), pl.Series), pl.Series)
    for rolling in (af.rolling_sum, af.rolling_count, af.rolling_mean, af.rolling_min, af.rolling_max):
        assert isinstance(assert_type(rolling(x, x, "5ns", closed="left"), pl.Series), pl.Series)
    assert isinstance(assert_type(af.session_window(x, 5, by=x), pl.Series), pl.Series)
    spine = pl.DataFrame({"k": [1, 2], "ts": [5, 5]})
    events = pl.DataFrame({"k": [1, 2], "ts": [1, 2], "v": [1.0, 2.0]})
    out = af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=["v"], ttl="1h")
    assert isinstance(assert_type(out, pl.DataFrame), pl.DataFrame)


def test_pandas_and_pyarrow_in_same_kind_out() -> None:
    # Statically vacuous here (pandas and pyarrow are Any without their stubs); with
    # pandas-stubs or pyarrow-stubs installed mypy checks these too.
    x = pd.Series(NUMBERS, index=[7, 8, 9])
    assert isinstance(assert_type(af.standard_scale(x, 1.0, 2.0), pd.Series), pd.Series)
    assert isinstance(assert_type(af.rolling_sum(x, x, 5, by=x), pd.Series), pd.Series)
    chunked = pa.chunked_array([NUMBERS[:1], NUMBERS[1:]])
    assert isinstance(assert_type(af.hash_bucket(chunked, 10), pa.ChunkedArray), pa.ChunkedArray)
    array = pa.array(NUMBERS)
    assert isinstance(assert_type(af.haversine_km(array, 0.0, 0.0, 0.0), pa.Array), pa.Array)
    assert isinstance(assert_type(af.l2_norm(np.array(VECTORS)), pa.Array), pa.Array)
    assert isinstance(assert_type(af.hop_aggregate(array, array, 10, 5, by=array), pa.Table), pa.Table)
    assert isinstance(assert_type(af.session_aggregate(array, array, 10, "max"), pa.Table), pa.Table)


def test_by_is_keyword_only_for_type_checkers_too() -> None:
    x = pl.Series("x", NUMBERS)
    with pytest.raises(af.ArrowfeatTypeError, match="keyword-only"):
        af.rolling_sum(x, x, 5, x)  # type: ignore[call-overload]
    with pytest.raises(af.ArrowfeatTypeError, match="keyword-only"):
        af.rolling(x, x, 5, "sum", x)  # type: ignore[call-overload]
    with pytest.raises(af.ArrowfeatTypeError, match="keyword-only"):
        af.session_window(x, 5, x)  # type: ignore[call-overload]
    with pytest.raises(af.ArrowfeatTypeError, match="keyword-only"):
        af.hop_aggregate(x, x, x, "10m", "1m")  # type: ignore[arg-type]
    with pytest.raises(af.ArrowfeatTypeError, match="keyword-only"):
        af.session_aggregate(x, x, x, "2m")  # type: ignore[arg-type]


class _Stream:
    """An object that only speaks the Arrow PyCapsule stream interface (as DuckDB's)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


def _columns(data: list[Any]) -> dict[str, list[Any]]:
    """Inputs of each kind an overload's first parameter names, for `data`."""
    array = pa.array(data)
    arrow = [array, pa.chunked_array([array[:1], array[1:]]), np.array(data)]
    return {
        "pl.Series": [pl.Series("c", data)],
        "pd.Series": [pd.Series(data, index=range(10, 10 + len(data)))],
        "pa.ChunkedArray": [pa.chunked_array([array[:1], array[1:]])],
        "pa.Array | NDArray": [array, np.array(data)],
        "ArrayArg[Hashable]": [array, np.array(data)],
        "ArrayArg[Vector]": [array, np.array(data)],
        "ArrowColumn": arrow,
    }


def _tables() -> dict[str, list[Any]]:
    spine = pa.table({"k": [1, 2], "ts": [5, 5]})
    return {
        "pl.DataFrame": [pl.from_arrow(spine)],
        "pd.DataFrame": [spine.to_pandas()],
        "pa.Table | pa.RecordBatch": [spine, spine.to_batches()[0]],
        "ArrowStreamExportable": [_Stream(spine)],
    }


_EVENTS = pa.table({"k": [1, 2], "ts": [1, 2], "v": [1.0, 2.0]})

# One call of each function with its first column argument `x` (of the overload's kind).
CALLS: dict[str, tuple[Callable[[Any], Any], Callable[[], dict[str, list[Any]]]]] = {
    "standard_scale": (lambda x: af.standard_scale(x, 1.0, 2.0), lambda: _columns(NUMBERS)),
    "min_max_scale": (lambda x: af.min_max_scale(x, 0.0, 10.0), lambda: _columns(NUMBERS)),
    "bucketize": (lambda x: af.bucketize(x, [0.0, 2.0]), lambda: _columns(NUMBERS)),
    "xxhash64": (lambda x: af.xxhash64(x, "salt"), lambda: _columns(NUMBERS)),
    "hash": (lambda x: af.hash(x, "salt"), lambda: _columns(NUMBERS)),
    "hash_bucket": (lambda x: af.hash_bucket(x, 10), lambda: _columns(NUMBERS)),
    "dot_product": (lambda x: af.dot_product(x, [1.0, 2.0]), lambda: _columns(VECTORS)),
    "cosine_similarity": (lambda x: af.cosine_similarity(x, [1.0, 2.0]), lambda: _columns(VECTORS)),
    "l2_norm": (af.l2_norm, lambda: _columns(VECTORS)),
    "l2_normalize": (af.l2_normalize, lambda: _columns(VECTORS)),
    "quantize_int8": (lambda x: af.quantize_int8(x, 0.5, 128), lambda: _columns(NUMBERS)),
    "dequantize_int8": (lambda x: af.dequantize_int8(x, 0.5, 128), lambda: _columns(NUMBERS)),
    "haversine_km": (lambda x: af.haversine_km(x, 0.0, 0.0, 0.0), lambda: _columns(NUMBERS)),
    "tumble_start": (lambda x: af.tumble_start(x, 2), lambda: _columns(NUMBERS)),
    "hop_windows": (lambda x: af.hop_windows(x, 2, 1), lambda: _columns(NUMBERS)),
    "rolling": (lambda x: af.rolling(x, x, 2, "min", by=x), lambda: _columns(NUMBERS)),
    "rolling_sum": (lambda x: af.rolling_sum(x, x, 2), lambda: _columns(NUMBERS)),
    "rolling_count": (lambda x: af.rolling_count(x, x, 2), lambda: _columns(NUMBERS)),
    "rolling_mean": (lambda x: af.rolling_mean(x, x, 2), lambda: _columns(NUMBERS)),
    "rolling_min": (lambda x: af.rolling_min(x, x, 2), lambda: _columns(NUMBERS)),
    "rolling_max": (lambda x: af.rolling_max(x, x, 2), lambda: _columns(NUMBERS)),
    "session_window": (lambda x: af.session_window(x, 2, by=x), lambda: _columns(NUMBERS)),
    "point_in_time": (
        lambda spine: af.point_in_time(spine, _EVENTS, by="k", spine_time="ts", event_time="ts", features=["v"]),
        _tables,
    ),
}

RESULTS: dict[str, type] = {
    "pl.Series": pl.Series,
    "pd.Series": pd.Series,
    "pa.ChunkedArray": pa.ChunkedArray,
    "pa.Array": pa.Array,
    "pl.DataFrame": pl.DataFrame,
    "pd.DataFrame": pd.DataFrame,
    "pa.Table": pa.Table,
}


def test_every_function_that_shapes_its_result_has_overloads() -> None:
    # Functions with one result kind (tables, feature specs) need no overloads.
    single = {"hop_aggregate", "session_aggregate", "as_of", "window", "Feature"}
    shaped = {n for n in af.__all__ if not n.startswith("Arrowfeat") and n not in single}
    assert shaped == set(CALLS)
    for name in shaped:
        overloads = typing.get_overloads(getattr(af, name))
        assert overloads, name
        # The last one is the general fallback: anything else gives Any.
        first = next(iter(_parameters(overloads[-1]).values()))
        assert first.annotation == "Any" and overloads[-1].__annotations__["return"] == "Any", name


def _parameters(function: Callable[..., Any]) -> dict[str, Any]:
    import inspect

    return dict(inspect.signature(function).parameters)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_each_overload_says_what_the_function_returns(name: str) -> None:
    call, inputs = CALLS[name]
    samples = inputs()
    for overload in typing.get_overloads(getattr(af, name))[:-1]:
        first = next(iter(_parameters(overload).values())).annotation
        returned = overload.__annotations__["return"]
        assert first in samples, f"{name}: no sample input for an overload taking {first}"
        assert returned in RESULTS, f"{name}: no result kind for {returned}"
        for sample in samples[first]:
            result = call(sample)
            assert isinstance(result, RESULTS[returned]), (
                f"{name}({type(sample).__name__}): {type(result).__name__}, the overload says {returned}"
            )
            if isinstance(result, pd.Series | pd.DataFrame) and isinstance(sample, pd.Series | pd.DataFrame):
                assert list(result.index) == list(sample.index), name
