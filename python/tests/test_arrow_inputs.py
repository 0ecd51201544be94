"""Every kind of Arrow input (pyarrow, a RecordBatchReader, Polars, a DuckDB relation,
nanoarrow, a bare object of the PyCapsule interface) gives the result of the same data as
pyarrow, for column functions, window functions and point_in_time's two tables."""

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

import arrowfeat as af
from arrowfeat import _convert


class StreamOnly:
    """An object that only exports an Arrow stream (as DuckDB and Polars do)."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.data.__arrow_c_stream__(requested_schema)


class ArrayOnly:
    """An object that only exports one Arrow array (a record batch is a struct array)."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self.data.__arrow_c_array__(requested_schema)


def _reader(table: pa.Table) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=2))


def _polars() -> Any:
    return pytest.importorskip("polars")


def _duckdb() -> Any:
    return pytest.importorskip("duckdb")


def _nanoarrow() -> Any:
    return pytest.importorskip("nanoarrow")


# Each kind of table: a function of a pyarrow Table giving the same data in that kind.
TABLES: dict[str, Callable[[pa.Table], Any]] = {
    "pyarrow Table": lambda t: t,
    "pyarrow RecordBatch": lambda t: t.combine_chunks().to_batches()[0],
    "pyarrow RecordBatchReader": _reader,
    "Polars DataFrame": lambda t: _polars().from_arrow(t),
    "DuckDB relation": lambda t: _duckdb().from_arrow(t),
    "nanoarrow stream": lambda t: _nanoarrow().ArrayStream(t),
    "nanoarrow array": lambda t: _nanoarrow().Array(t.combine_chunks().to_batches()[0]),
    "bare __arrow_c_stream__": StreamOnly,
    "bare __arrow_c_stream__ of a reader": lambda t: StreamOnly(_reader(t)),
    "bare __arrow_c_array__": lambda t: ArrayOnly(t.combine_chunks().to_batches()[0]),
}


def _one_column(table: Callable[[pa.Table], Any]) -> Callable[[str, pa.Array], Any]:
    return lambda name, a: table(pa.table({name: a}))


# Each kind of column: the column itself, or a table of that one column.
COLUMNS: dict[str, Callable[[str, pa.Array], Any]] = {
    "pyarrow Array": lambda name, a: a,
    "pyarrow ChunkedArray": lambda name, a: pa.chunked_array([a[:2], a[2:]]),
    "Polars Series": lambda name, a: _polars().Series(name, a),
    "nanoarrow array": lambda name, a: _nanoarrow().Array(a),
    "nanoarrow stream": lambda name, a: _nanoarrow().ArrayStream(a),
    "bare __arrow_c_stream__": lambda name, a: StreamOnly(pa.chunked_array([a[:2], a[2:]])),
    "bare __arrow_c_array__": lambda name, a: ArrayOnly(a),
    **{f"one-column {kind}": _one_column(make) for kind, make in TABLES.items()},
}


def _values(result: Any) -> Any:
    """A result of any kind as Python values."""
    if isinstance(result, pa.Table):
        return result.to_pylist()
    if hasattr(result, "to_pylist"):
        return result.to_pylist()
    if hasattr(result, "to_dicts"):  # Polars DataFrame
        return result.to_dicts()
    return result.to_list()  # Polars Series


STRUCT = pa.struct([("a", pa.int64()), ("b", pa.string())])
X = pa.array([1.0, None, 4.0, -2.0, 0.5])
TS = pa.array([1, 2, 3, 10, 11], pa.int64())
KEYS = pa.array(["u", "v", "u", None, "u"])
STRUCTS = pa.array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}, {"a": None, "b": "y"}, {"a": 5, "b": "z"}], STRUCT)
VECTORS = pa.array([[3.0, 4.0], None, [1.0, 0.0], [0.0, 0.0], [2.0, 2.0]], pa.list_(pa.float64()))


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_column_functions_read_every_kind_like_pyarrow(kind: str) -> None:
    make = COLUMNS[kind]
    assert _values(af.standard_scale(make("x", X), 1.0, 2.0)) == af.standard_scale(X, 1.0, 2.0).to_pylist()
    assert _values(af.hash_bucket(make("k", KEYS), 7)) == af.hash_bucket(KEYS, 7).to_pylist()
    assert _values(af.cosine_similarity(make("v", VECTORS), [1.0, 0.0])) == (
        af.cosine_similarity(VECTORS, [1.0, 0.0]).to_pylist()
    )
    # A constant for a numeric parameter, a column for another: both read the same way.
    assert _values(af.standard_scale(X, 0.0, make("s", pa.array([1.0, 2.0, 4.0, 8.0, 1.0])))) == (
        af.standard_scale(X, 0.0, pa.array([1.0, 2.0, 4.0, 8.0, 1.0])).to_pylist()
    )


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_a_struct_column_with_nulls_is_a_column_of_every_kind(kind: str) -> None:
    """A struct column (null rows, null fields) is hashed as a struct whatever carries it:
    a nullable struct is a column, not a table of its fields."""
    make = COLUMNS[kind]
    expected = af.hash(STRUCTS).to_pylist()
    assert expected[1] == 42  # a null row hashes to the seed
    assert _values(af.hash(make("s", STRUCTS))) == expected
    assert _values(af.xxhash64(make("s", STRUCTS), make("k", KEYS))) == af.xxhash64(STRUCTS, KEYS).to_pylist()


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_window_functions_read_every_kind_like_pyarrow(kind: str) -> None:
    make = COLUMNS[kind]
    sums = af.rolling_sum(make("x", X), make("ts", TS), 5, by=make("k", KEYS))
    assert _values(sums) == af.rolling_sum(X, TS, 5, by=KEYS).to_pylist()
    hops = af.hop_aggregate(make("ts", TS), make("x", X), 4, 2, "max", by=make("k", KEYS))
    # Keys come back in the input's type (string_view from Polars): values compared.
    assert _values(hops) == af.hop_aggregate(TS, X, 4, 2, "max", by=KEYS).to_pylist()
    sessions = af.session_window(make("ts", TS), 3, by=make("s", STRUCTS))
    assert _values(sessions) == af.session_window(TS, 3, by=STRUCTS).to_pylist()


SPINE = pa.table({"k": ["u", "v", "u", None], "t": pa.array([3, 5, 12, 4], pa.int64()), "label": [1, 0, 1, None]})
EVENTS = pa.table(
    {
        "k": ["u", "v", "u", "u", None],
        "ts": pa.array([1, 2, 3, 10, 2], pa.int64()),
        "amount": [1.0, None, 4.0, 2.5, 9.0],
        "s": STRUCTS,
    }
)
FEATURES = [af.as_of("amount"), af.as_of("s"), af.window("amount", "sum", 5), af.window("amount", "count", 100)]


def _training(spine: Any, events: Any) -> Any:
    return af.point_in_time(spine, events, by="k", spine_time="t", event_time="ts", features=FEATURES)


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_point_in_time_reads_every_kind_of_spine_and_events_like_pyarrow(kind: str) -> None:
    expected = _training(SPINE, EVENTS).to_pylist()
    assert expected[0]["s"] == {"a": 3, "b": None} and expected[3]["amount"] is None
    make = TABLES[kind]
    assert _values(_training(make(SPINE), EVENTS)) == expected
    assert _values(_training(SPINE, make(EVENTS))) == expected
    assert _values(_training(make(SPINE), make(EVENTS))) == expected


def test_polars_in_polars_out_for_a_one_column_frame() -> None:
    pl = _polars()
    out = af.standard_scale(pl.DataFrame({"x": [1.0, 3.0]}), 1.0, 2.0)
    assert isinstance(out, pl.Series) and out.name == "x" and out.to_list() == [0.0, 1.0]


def test_pyarrow_tables_and_streams_are_read_without_copying() -> None:
    table = pa.table({"x": X})
    values = table.column(0).chunk(0).buffers()[1].address
    for source in (table, StreamOnly(table), ArrayOnly(table.to_batches()[0]), _reader(table)):
        column = _convert._to_arrow("f", "x", source)
        assert column.chunk(0).buffers()[1].address == values, type(source).__name__
    # A stream of a struct column stays one column (not a table of its fields).
    structs = _convert._to_arrow("f", "s", StreamOnly(pa.chunked_array([STRUCTS])))
    assert structs.type == STRUCT


def test_a_reader_is_consumed_by_the_call_that_reads_it() -> None:
    reader = _reader(pa.table({"x": X}))
    assert len(af.standard_scale(reader, 0.0, 1.0)) == len(X)
    # Read again, it is an empty stream: the second call sees no rows.
    assert len(af.standard_scale(reader, 0.0, 1.0)) == 0


def test_a_table_of_several_columns_for_a_column_is_refused_by_name() -> None:
    two = pa.table({"x": X, "ts": TS})
    with pytest.raises(
        af.ArrowfeatTypeError,
        match=r"^standard_scale: argument `x`: expected a column or a table of one column, "
        r"found a table of 2 columns \(x, ts\) from pyarrow\.lib\.Table; pass one column$",
    ):
        af.standard_scale(two, 0.0, 1.0)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^rolling_sum: argument `ts`: .*found a table of 2 columns"):
        af.rolling_sum(X, StreamOnly(two), 5)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^hash: argument `#2`: .*found a table of 2 columns"):
        af.hash(X, ArrayOnly(two.to_batches()[0]))
    with pytest.raises(af.ArrowfeatTypeError, match=r"^l2_norm: argument `a`: .*found a table of no columns"):
        af.l2_norm(pa.table({}))
    duckdb = _duckdb()
    with pytest.raises(
        af.ArrowfeatTypeError, match=r"^hop_aggregate: argument `by`: .*2 columns \(a, b\) from _?duckdb\."
    ):
        af.hop_aggregate(TS, X, 4, 2, by=duckdb.sql("select 1 as a, 2 as b"))


def test_a_lazy_frame_is_refused_with_collect() -> None:
    pl = _polars()
    lazy = pl.LazyFrame({"x": [1.0]})
    with pytest.raises(
        af.ArrowfeatTypeError,
        match=r"^standard_scale: argument `x`: expected a column, found a Polars LazyFrame; call \.collect\(\) on it first$",
    ):
        af.standard_scale(lazy, 0.0, 1.0)
    with pytest.raises(
        af.ArrowfeatTypeError, match=r"^point_in_time: argument `events`: expected a table, found a Polars LazyFrame"
    ):
        _training(SPINE, pl.from_arrow(EVENTS).lazy())


def test_a_stream_that_is_no_table_is_refused_for_a_table() -> None:
    with pytest.raises(
        af.ArrowfeatTypeError,
        match=r"^point_in_time: argument `events`: expected a pyarrow Table, .*giving record batches, "
        r"found a column of type int64 from .*StreamOnly$",
    ):
        _training(SPINE, StreamOnly(pa.chunked_array([[1, 2]])))
    with pytest.raises(
        af.ArrowfeatTypeError,
        match=r"^point_in_time: argument `spine`: .*found a column of structs with null rows from .*ArrayOnly$",
    ):
        _training(ArrayOnly(STRUCTS), EVENTS)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^point_in_time: argument `spine`: .*found builtins\.object$"):
        _training(object(), EVENTS)
    # A struct column without null rows is a table of its fields, as pyarrow reads it.
    as_struct = EVENTS.combine_chunks().to_batches()[0].to_struct_array()
    assert _training(SPINE, StreamOnly(pa.chunked_array([as_struct]))).equals(_training(SPINE, EVENTS))


def test_a_failed_export_is_an_arrowfeat_error() -> None:
    class Broken:
        def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
            raise pa.ArrowInvalid("the producer failed")

    class NotACapsule:
        def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
            return (object(), object())

    with pytest.raises(
        af.ArrowfeatValueError,
        match=r"^standard_scale: argument `x`: expected Arrow data through the PyCapsule interface, "
        r"found .*Broken whose export failed \(the producer failed\)$",
    ):
        af.standard_scale(Broken(), 0.0, 1.0)
    with pytest.raises(af.ArrowfeatValueError, match=r"^point_in_time: argument `events`: .*NotACapsule whose export"):
        _training(SPINE, NotACapsule())
