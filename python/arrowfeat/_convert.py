"""Conversions shared by the public functions: column arguments to Arrow, results back
to the caller's kind (pandas in, pandas out; Polars in, Polars out), and the checks every
module makes the same way. The type aliases of the signatures are in `_typing`."""

from __future__ import annotations

import ctypes
import datetime as dt
import functools
import inspect
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import pyarrow as pa

from .errors import ArrowfeatTypeError, ArrowfeatValueError


def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _flag(function: str, argument: str, value: Any) -> bool:
    """A yes/no argument: a bool, or NumPy's (a mask's element, ``df[c].any()``)."""
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    raise ArrowfeatTypeError(f"{function}: argument `{argument}`: expected True or False, found {type(value).__name__}")


def _baseline(function: str, baseline: Any) -> Literal[False] | str | None:
    """`baseline` as the native check takes it: None (discover), False (none; NumPy's
    too) or a path."""
    import os

    if baseline is None:
        return None
    if isinstance(baseline, bool) or (
        type(baseline).__module__ == "numpy" and type(baseline).__name__ in ("bool", "bool_")
    ):
        if baseline:
            raise ArrowfeatTypeError(
                f"{function}: argument `baseline`: expected a file path, None (discover arrowfeat-baseline.json) "
                "or False (no baseline), found True"
            )
        return False
    try:
        path = os.fspath(baseline)
    except TypeError:
        raise ArrowfeatTypeError(
            f"{function}: argument `baseline`: expected a file path, None or False, found {type(baseline).__name__}"
        ) from None
    return path if isinstance(path, str) else os.fsdecode(path)


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


def _is_polars_frame(obj: Any) -> bool:
    return type(obj).__module__.startswith("polars") and type(obj).__name__ == "DataFrame"


def _is_lazy_frame(obj: Any) -> bool:
    return type(obj).__module__.startswith("polars") and type(obj).__name__ == "LazyFrame"


def _is_table(obj: Any) -> bool:
    """pyarrow's tables and readers, which a column argument also takes when they hold one
    column (other tables, Polars' or DuckDB's, speak the PyCapsule interface)."""
    return isinstance(obj, (pa.Table, pa.RecordBatch, pa.RecordBatchReader))


def _is_column(obj: Any) -> bool:
    """Whether a column argument holds data (rather than a constant): a column, a table of
    one column, or anything exporting Arrow data (a LazyFrame too, refused by name)."""
    return (
        isinstance(obj, (pa.Array, pa.ChunkedArray))
        or _is_table(obj)
        or _is_series(obj)
        or (_is_ndarray(obj) and obj.ndim >= 1)
        or _is_lazy_frame(obj)
        or (_speaks_arrow(obj) and not isinstance(obj, pa.Scalar))
    )


def _is_polars_object_dtype(dtype: Any) -> bool:
    """Polars' Object dtype (checked without importing Polars). Polars exports such a
    column to Arrow as the 8-byte addresses of its Python objects."""
    return str(dtype) == "Object"


def _is_polars_objects(obj: Any) -> bool:
    """A Polars Series of dtype Object."""
    return type(obj).__module__.startswith("polars") and _is_polars_object_dtype(getattr(obj, "dtype", ""))


# The C Data Interface's structs (their layout is part of the ABI), to read the top-level
# schema of what an object exports before pyarrow imports it.
class _ArrowSchema(ctypes.Structure):
    _fields_ = (
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_char_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    )


_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowSchema))


class _ArrowArrayStream(ctypes.Structure):
    _fields_ = (
        ("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_ArrowSchema))),
        ("get_next", ctypes.c_void_p),
        ("get_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    )


# A prototype of our own: setting `argtypes` on `ctypes.pythonapi`'s would change it for
# every other user in the process.
_CAPSULE_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)

_NULLABLE = 2  # ARROW_FLAG_NULLABLE


class _ExportError(Exception):
    """An exported stream that cannot give its schema."""


def _is_record_batch_schema(schema: _ArrowSchema) -> bool:
    """A table's top-level schema: a struct that cannot be null. pyarrow, Polars, DuckDB,
    nanoarrow and arrow-rs export record batches so; a struct column is nullable."""
    return schema.format == b"+s" and not schema.flags & _NULLABLE


def _stream_holds_batches(capsule: object) -> bool:
    address = _CAPSULE_POINTER(capsule, b"arrow_array_stream")
    stream = _ArrowArrayStream.from_address(address)
    schema = _ArrowSchema()
    code = stream.get_schema(address, ctypes.byref(schema))
    if code != 0:
        error = stream.get_last_error(address)
        detail = error.decode("utf-8", "backslashreplace") if error else f"error code {code}"
        raise _ExportError(f"its stream gave no schema ({_visible(detail, 200)})")
    try:
        return _is_record_batch_schema(schema)
    finally:
        if schema.release:
            _RELEASE_SCHEMA(schema.release)(ctypes.byref(schema))


def _array_holds_batch(schema_capsule: object) -> bool:
    return _is_record_batch_schema(_ArrowSchema.from_address(_CAPSULE_POINTER(schema_capsule, b"arrow_schema")))


class _TakenStream:
    """A stream already taken from its producer (some give theirs once), for pyarrow."""

    def __init__(self, capsule: object) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.capsule


class _TakenArray:
    """An array already taken from its producer, for pyarrow."""

    def __init__(self, capsules: tuple[object, object]) -> None:
        self.capsules = capsules

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self.capsules


def _import_arrow(function: str, argument: str, obj: Any) -> pa.Array | pa.ChunkedArray | pa.Table:
    """Arrow data of any producer as pyarrow, without copying: a column (Array or
    ChunkedArray) or a table. A PyCapsule object is asked for its data once (a stream may
    be read only once: a RecordBatchReader is consumed), and the top-level schema of what
    it gives tells record batches (a table) from a column, a struct column included."""
    if isinstance(obj, (pa.Array, pa.ChunkedArray, pa.Table)):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    try:
        if isinstance(obj, pa.RecordBatchReader):
            return obj.read_all()
        if hasattr(obj, "__arrow_c_stream__"):
            stream = _TakenStream(obj.__arrow_c_stream__())
            if _stream_holds_batches(stream.capsule):
                return pa.table(stream)
            return pa.chunked_array(stream)
        array = _TakenArray(obj.__arrow_c_array__())
        if _array_holds_batch(array.capsules[0]):
            return pa.Table.from_batches([pa.record_batch(array)])
        return pa.array(array)
    except (pa.ArrowException, _ExportError, ValueError) as e:
        # ValueError: a capsule of another name than the interface's.
        raise ArrowfeatValueError(
            f"{function}: argument `{argument}`: expected Arrow data through the PyCapsule interface, "
            f"found {_type_name(obj)} whose export failed ({_visible(str(e), 300)})"
        ) from None


def _lazy_frame(function: str, argument: str, expected: str) -> ArrowfeatTypeError:
    # Collecting runs the whole query plan: the caller decides when, not a feature function.
    return ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected {expected}, found a Polars LazyFrame; call .collect() on it first"
    )


def _only_column(function: str, argument: str, table: pa.Table, obj: Any) -> pa.ChunkedArray:
    """The column of a one-column table given for a column argument."""
    if table.num_columns != 1:
        shown = ", ".join(_visible(name, 60) for name in table.column_names[:20])
        if table.num_columns > 20:
            shown += ", ..."
        found = f"{table.num_columns} columns ({shown})" if shown else "no columns"
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a column or a table of one column, "
            f"found a table of {found} from {_type_name(obj)}; pass one column"
        )
    if _is_polars_frame(obj) and _is_polars_object_dtype(obj.dtypes[0]):
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a column Arrow can hold, "
            f"found a Polars DataFrame whose column is of dtype Object (Python objects)"
        )
    return table.column(0)


def _to_arrow(function: str, argument: str, obj: Any) -> pa.Array | pa.ChunkedArray:
    """A column argument as Arrow, without copying where Arrow allows it."""
    if isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return obj
    if _is_series(obj):
        try:
            return pa.Array.from_pandas(obj)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a column Arrow can hold, "
                f"found a pandas Series of dtype {obj.dtype} whose values Arrow cannot convert"
            ) from None
    if _is_polars_objects(obj):
        # Hashing or scaling object addresses would give an answer that means nothing.
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a column Arrow can hold, "
            f"found a Polars Series of dtype Object (Python objects)"
        )
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
    if _is_lazy_frame(obj):
        raise _lazy_frame(function, argument, "a column")
    if _is_table(obj) or _speaks_arrow(obj):
        # Zero-copy import of an array or a stream (a Polars Series, a DuckDB relation, ...).
        data = _import_arrow(function, argument, obj)
        return _only_column(function, argument, data, obj) if isinstance(data, pa.Table) else data
    raise ArrowfeatTypeError(
        f"{function}: argument `{argument}`: expected a pyarrow Array, ChunkedArray, numpy array, "
        f"pandas or Polars Series, a table of one column, or an object with __arrow_c_array__ / "
        f"__arrow_c_stream__, found {_type_name(obj)}"
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
        # pyarrow's message quotes the data value that failed: escaped and cut.
        raise kind(
            f"{function}: argument `{argument}`: expected {what}, found {arr.type} ({_visible(str(e), 300)})"
        ) from None


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
    """A column to hash as it is, or a scalar of its natural type."""
    if _is_column(value):
        # Dictionaries as they are: the kernel hashes their values (pyarrow cannot decode
        # every dictionary, e.g. Polars' Categorical of string views).
        return _to_arrow(function, argument, value)
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
    polars = next((o for o in originals if _is_polars_series(o) or _is_polars_frame(o)), None)
    if polars is not None:
        import polars as pl

        # A one-column DataFrame given for a column gives a Series of that column's name.
        return pl.Series(polars.name if _is_polars_series(polars) else polars.columns[0], result)
    return result


def _pair(function: str, native: Callable[..., Any], a: Any, b: Any) -> Any:
    args = _float_elements(function, {"a": _vector(function, "a", a), "b": _vector(function, "b", b)})
    return _apply(function, native, [args["a"], args["b"]], [a, b])


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


def _visible(text: str, limit: int) -> str:
    """`text` from someone's data (a column name, say) made safe to put in a message:
    control characters, bidirectional marks and GitHub workflow commands as visible
    escapes, cut to `limit` characters (the escaping of every arrowfeat message)."""
    from . import _native

    # A lone surrogate (possible in a Python str) cannot cross to Rust as it is.
    return _native._quote(text.encode("utf-8", "backslashreplace").decode("utf-8"), limit)


def _decode_dictionary(arr: pa.Array) -> pa.Array:
    """A dictionary-encoded column as its plain values (the window kernels read values).
    By `take`, not `cast`: pyarrow cannot cast Polars' Categorical (string_view values,
    uint32 indices) to its value type."""
    if not pa.types.is_dictionary(arr.type):
        return arr
    values = arr.dictionary
    # pyarrow has no `take` for the view types either: their values go to large ones.
    if pa.types.is_string_view(values.type):
        values = values.cast(pa.large_string())
    elif pa.types.is_binary_view(values.type):
        values = values.cast(pa.large_binary())
    return values.take(arr.indices)


def _check_columns(function: str, where: str, available: Sequence[str], columns: Mapping[str, object]) -> None:
    """Checks that each argument of `columns` names a column of `available`, the columns of
    `where` (e.g. "the DataFrame")."""
    for argument, name in columns.items():
        if not isinstance(name, str):
            raise ArrowfeatTypeError(
                f"{function}: argument `{argument}`: expected a column name, found {_type_name(name)}"
            )
        if name not in available:
            shown = ", ".join(_visible(column, 60) for column in list(available)[:20])
            if len(available) > 20:
                shown += f", ... ({len(available)} in all)"
            raise ArrowfeatValueError(
                f"{function}: argument `{argument}`: expected a column of {where}, "
                f"found {_visible(repr(name), 200)} (columns: {shown})"
            )
        repeats = list(available).count(name)
        if repeats > 1:
            # pyarrow would raise a bare KeyError; reading either one would be a guess.
            raise ArrowfeatValueError(
                f"{function}: argument `{argument}`: expected a name that {where} gives one column, "
                f"found {_visible(repr(name), 200)} naming {repeats} columns; rename them apart"
            )


_F = TypeVar("_F", bound=Callable[..., Any])


def _by_keyword_only(
    function: str, usage: str, positional: int, shifted: Callable[[dict[str, Any]], str | None] | None = None
) -> Callable[[_F], _F]:
    """Fails the calls written for arrowfeat < 0.1, where `by` was positional, instead of
    reading their arguments in the wrong places.

    `positional`: how many arguments may be positional now; `shifted`: given the arguments
    as bound now, names the parameter that holds what an old call order put there (a
    column where a duration belongs), or None."""

    def decorate(f: _F) -> _F:
        signature = inspect.signature(f)

        @functools.wraps(f)
        def checked(*args: Any, **kwargs: Any) -> Any:
            found = None
            if len(args) > positional:
                found = f"{len(args)} positional arguments (at most {positional} now)"
            elif shifted is not None:
                try:
                    bound = signature.bind_partial(*args, **kwargs).arguments
                except TypeError:
                    bound = None  # The call itself raises Python's own message.
                argument = None if bound is None else shifted(bound)
                if argument is not None:
                    found = f"a column in place of `{argument}` (the order before 0.1, with `by` before `ts`)"
            if found is not None:
                raise ArrowfeatTypeError(
                    f"{function}: argument `by`: expected `by=` as a keyword argument, found {found}; "
                    f"`by` is keyword-only since arrowfeat 0.1: call {usage}"
                )
            return f(*args, **kwargs)

        return cast(_F, checked)

    return decorate


def _as_of_nanos(function: str, as_of: dt.datetime | str | None) -> int | None:
    """`as_of` in nanoseconds since the epoch; naive times are UTC, as the CLI reads them."""
    if as_of is None:
        return None
    if isinstance(as_of, str):
        try:
            as_of = dt.datetime.fromisoformat(as_of)
        except ValueError:
            raise ArrowfeatValueError(
                f"{function}: argument `as_of`: expected a time such as 2026-12-01T00:00:00Z, found {_visible(repr(as_of), 60)}"
            ) from None
    if not isinstance(as_of, dt.datetime):
        raise ArrowfeatTypeError(f"{function}: argument `as_of`: expected a datetime, found {_type_name(as_of)}")
    if as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=dt.UTC)  # naive times are UTC, as the CLI reads them
    delta = as_of - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def _check_sample_rows(function: str, sample_rows: object) -> int:
    """`sample_rows` as the CLI's `--data-sample` bounds it: an integer from 0 to 10000."""
    if not isinstance(sample_rows, int) or isinstance(sample_rows, bool) or not 0 <= sample_rows <= 10_000:
        raise ArrowfeatValueError(
            f"{function}: argument `sample_rows`: expected an integer from 0 to 10000, found {_visible(repr(sample_rows), 40)}"
        )
    return sample_rows


def _check_drift_arguments(
    reference: Any,
    reference_profile: Any,
    current: Any,
    save_reference: Any,
    current_from_store: bool = False,
    reference_from_store: bool = False,
) -> None:
    """The combinations `drift` takes, in process and in PySpark."""
    import os

    for name, flag in (("current_from_store", current_from_store), ("reference_from_store", reference_from_store)):
        _flag("drift", name, flag)
    _not_empty("drift", "reference", reference, current)
    _not_empty("drift", "current", current, reference)
    if reference_profile is not None and (reference is not None or reference_from_store):
        raise ArrowfeatValueError(
            "drift: give the reference either as data (`reference`, `reference_from_store`) or as `reference_profile`, not both"
        )
    if reference is None and reference_profile is None and not reference_from_store:
        raise ArrowfeatValueError(
            "drift: give the reference: `reference` (data), `reference_profile` (a file saved by save_reference) "
            "or reference_from_store=True (with `registry` or `feast_repo`)"
        )
    if current is None and not current_from_store and save_reference is None:
        raise ArrowfeatValueError(
            "drift: give `current` or current_from_store=True (with `registry` or `feast_repo`) to compare, "
            "or `save_reference` to save the reference's profile"
        )
    if save_reference is not None and reference_profile is not None:
        raise ArrowfeatValueError(
            "drift: `save_reference` saves reference data's profile; with `reference_profile` there is none"
        )
    if save_reference is not None and not os.path.isdir(os.path.dirname(os.fspath(save_reference)) or "."):
        raise ArrowfeatValueError(
            f"drift: argument `save_reference`: the directory of {_visible(os.fspath(save_reference), 200)} does not exist"
        )
    if save_reference is not None and os.path.isdir(save_reference):
        raise ArrowfeatValueError(
            f"drift: argument `save_reference`: {_visible(os.fspath(save_reference), 200)} is a directory"
        )


def _skew_options(
    time_tolerance: object,
    serving_time: str | None,
    absolute_tolerance: object,
    relative_tolerance: object,
    ulps: object,
    sample_rows: object,
) -> dict[str, Any]:
    """`skew`'s options, checked, as the native functions take them (in process and in
    PySpark); the duration and the tolerances' ranges are checked natively."""
    if not isinstance(time_tolerance, str):
        raise ArrowfeatTypeError(
            f"skew: argument `time_tolerance`: expected a duration such as '5m', found {_type_name(time_tolerance)}"
        )
    _check_sample_rows("skew", sample_rows)
    if not isinstance(ulps, int) or isinstance(ulps, bool) or not 0 <= ulps < 2**64:
        raise ArrowfeatValueError(
            f"skew: argument `ulps`: expected an integer of 0 or more, found {_visible(repr(ulps), 40)}"
        )
    options: dict[str, Any] = {
        "time_tolerance": time_tolerance,
        "serving_time": serving_time,
        "ulps": ulps,
        "sample_rows": sample_rows,
    }
    for name, value in (("absolute_tolerance", absolute_tolerance), ("relative_tolerance", relative_tolerance)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ArrowfeatTypeError(f"skew: argument `{name}`: expected a number, found {_type_name(value)}")
        try:
            options[name] = float(value)
        except OverflowError:
            raise ArrowfeatValueError(
                f"skew: argument `{name}`: expected a finite number >= 0, found an integer too large for a float"
            ) from None
    return options


def _native_error(function: str, error: ValueError) -> ArrowfeatValueError:
    """A native function's refusal, named by `function` once."""
    message = str(error)
    return ArrowfeatValueError(message if message.startswith(f"{function}:") else f"{function}: {message}")


def _save_reference(report: Any, profile: str, not_saved_because: str | None, save_reference: Any) -> None:
    """Writes the reference's profile to `save_reference` unless the native run says why
    not (a partial profile never replaces a complete one): then the error carries the
    run's `report`, whose findings say why."""
    import os

    if save_reference is not None:
        if not_saved_because is not None:
            error = ArrowfeatValueError(
                f"drift: argument `save_reference`: not saved: {not_saved_because} (the error's `report`)"
            )
            error.report = report
            raise error
        try:
            with open(save_reference, "w", encoding="utf-8") as f:
                f.write(profile)
        except OSError as e:
            raise ArrowfeatValueError(
                f"drift: argument `save_reference`: cannot write {_visible(os.fspath(save_reference), 200)}: {e.strerror}"
            ) from None


def _not_empty(function: str, argument: str, data: Any, other: Any = None) -> None:
    """Refuses a mapping of no views unless `other` (the comparison's other side) names
    some, whose views then say what they lack: a run given no data at all must not pass
    as if it had read some (the CLI refuses the same run: its flags need a path)."""
    from collections.abc import Mapping

    if isinstance(data, Mapping) and not data and not (isinstance(other, Mapping) and other):
        raise ArrowfeatValueError(
            f"{function}: argument `{argument}`: expected the data of at least one view, found an empty mapping"
        )
