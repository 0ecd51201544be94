"""The type aliases of the public signatures, shared by every module: what a column, a
table, a duration or a feature argument may be. Only for type checkers: pandas, Polars and
numpy stay optional at run time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pyarrow as pa

if TYPE_CHECKING:
    import datetime
    from typing import TypeAlias

    import numpy as np
    import numpy.typing as npt
    import pandas as pd
    import polars as pl

    from .point_in_time import Feature

    _T = TypeVar("_T")

    NDArray: TypeAlias = npt.NDArray[Any]
    # A constant argument (one value for every row); int is accepted where float is.
    Number: TypeAlias = float | pa.Scalar | None
    Integer: TypeAlias = int | pa.Scalar | None
    Hashable: TypeAlias = bool | int | float | str | bytes | pa.Scalar | None
    # One vector for every row (a query embedding): a list, tuple or 1-D numpy array.
    Vector: TypeAlias = Sequence[float] | NDArray | pa.Scalar | None
    # The other arguments of a call whose result is of one kind: constants of type _T, or
    # columns that do not change that kind (a pandas Series anywhere gives pandas, a
    # Polars Series Polars, a ChunkedArray chunked; see _shape_like).
    ArrayArg: TypeAlias = _T | pa.Array | NDArray
    ChunkedArg: TypeAlias = _T | pa.Array | pa.ChunkedArray | NDArray
    PolarsArg: TypeAlias = _T | pa.Array | pa.ChunkedArray | NDArray | pl.Series
    PandasArg: TypeAlias = _T | pa.Array | pa.ChunkedArray | NDArray | pl.Series | pd.Series
    # A duration: integer nanoseconds, a string such as "5m", a timedelta (pandas.Timedelta
    # included) or a numpy timedelta64.
    Duration: TypeAlias = int | str | datetime.timedelta | np.timedelta64
    # A feature of point_in_time: af.as_of / af.window, a column name or a tuple.
    FeatureSpec: TypeAlias = Feature | str | tuple[str] | tuple[str, str] | tuple[str, str, Duration | None]


class ArrowArrayExportable(Protocol):
    """An object that exports one Arrow array through the PyCapsule interface."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...


class ArrowStreamExportable(Protocol):
    """An object that exports a stream of Arrow arrays or batches through the PyCapsule
    interface (Polars, DuckDB, nanoarrow, ...)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


if TYPE_CHECKING:
    # The columns that give a pyarrow result.
    ArrowColumn: TypeAlias = pa.Array | pa.ChunkedArray | NDArray
    # Any column argument, whatever kind of result it gives (a table of one column is
    # that column: pyarrow's and any other exporting record batches).
    Column: TypeAlias = (
        pa.Array | pa.ChunkedArray | NDArray | pd.Series | pl.Series | ArrowArrayExportable | ArrowStreamExportable
    )
    # A table argument of point_in_time (a DuckDB relation exports a stream; a
    # RecordBatchReader is consumed by the call).
    Table: TypeAlias = (
        pa.Table
        | pa.RecordBatch
        | pa.RecordBatchReader
        | pd.DataFrame
        | pl.DataFrame
        | ArrowStreamExportable
        | ArrowArrayExportable
    )
