"""The Python API over pyarrow, numpy and pandas: results, zero copy, errors."""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrowfeat as af
from arrowfeat import _native

RNG = np.random.default_rng(7)


def values(arr):
    return arr.to_pylist()


def test_standard_scale_matches_numpy_bit_for_bit():
    x = RNG.normal(50, 20, 10_001)
    out = af.standard_scale(x, 3.5, 2.25)
    assert out.type == pa.float64()
    np.testing.assert_array_equal(out.to_numpy(), (x - 3.5) / 2.25)


def test_nulls_nan_and_columns_as_parameters():
    x = pa.array([1.0, None, float("nan"), 4.0])
    mean = pa.array([0.0, 0.0, 0.0, 2.0])
    out = af.standard_scale(x, mean, 2.0)
    assert out[1].as_py() is None
    assert math.isnan(out[2].as_py())
    assert out[3].as_py() == 1.0
    assert af.standard_scale(x, None, 1.0).null_count == 4


def test_min_max_scale_and_bucketize():
    x = pa.array([-5.0, 0.0, 5.0, 15.0, None])
    assert values(af.min_max_scale(x, 0, 10)) == [0.0, 0.0, 0.5, 1.0, None]
    buckets = af.bucketize(pa.array([-5.0, 0.0, 9.99, 10.0, 150.0, float("nan"), None]), [0, 10, 100])
    assert buckets.type == pa.int32()
    assert values(buckets) == [0, 1, 1, 2, 3, None, None]


def test_hashing_types_and_chaining():
    ids = pa.array([1, 2, None], pa.int64())
    names = pa.array(["a", None, "c"])
    h = af.xxhash64(ids, names)
    assert h.type == pa.int64() and h.null_count == 0
    assert af.xxhash64(pa.array([None], pa.int32()))[0].as_py() == 42
    assert values(af.xxhash64("hello")) == [-4367754540140381902]
    b = af.hash_bucket(ids, names, 10)
    assert all(0 <= v < 10 for v in values(b))
    assert values(b) == [v % 10 for v in values(h)]
    # dictionary and large/view strings hash by value
    dictionary = pa.array(["a", "c"]).dictionary_encode()
    assert values(af.xxhash64(dictionary)) == values(af.xxhash64(pa.array(["a", "c"], pa.large_string())))


def test_embeddings_numpy_matrix_and_query_vector():
    m = RNG.normal(size=(50, 16)).astype(np.float32)
    q = RNG.normal(size=16).astype(np.float32)
    cos = af.cosine_similarity(m, q).to_numpy()
    m64, q64 = m.astype(np.float64), q.astype(np.float64)
    expected = (m64 @ q64) / (np.linalg.norm(m64, axis=1) * np.linalg.norm(q64))
    np.testing.assert_allclose(cos, expected, rtol=1e-12)
    np.testing.assert_allclose(af.dot_product(m, m).to_numpy(), (m64 * m64).sum(axis=1), rtol=1e-12)
    norms = af.l2_norm(pa.array([[3.0, 4.0], None, [0.0, 0.0]], pa.list_(pa.float32())))
    assert values(norms) == [5.0, None, 0.0]
    unit = af.l2_normalize(pa.array([[3.0, 4.0], [0.0, 0.0]], pa.list_(pa.float32(), 2)))
    assert unit.type == pa.list_(pa.float32(), 2)
    assert unit[1].as_py() is None
    assert cosine_is_null_for_zero_vector()


def cosine_is_null_for_zero_vector():
    out = af.cosine_similarity(pa.array([[0.0, 0.0]]), [1.0, 1.0])
    return out[0].as_py() is None


def test_quantize_roundtrip():
    x = pa.array([0.5, 1.5, 2.5, -0.5, 1000.0, float("nan"), None], pa.float32())
    q = af.quantize_int8(x, 1.0, 10)
    assert q.type == pa.uint8()
    assert values(q) == [10, 12, 12, 10, 255, None, None]
    back = af.dequantize_int8(q, 1.0, 10)
    assert back.type == pa.float32()
    assert values(back)[:3] == [0.0, 2.0, 2.0]
    vecs = pa.array([[0.1, -0.2, 0.3]], pa.list_(pa.float32(), 3))
    qv = af.quantize_int8(vecs, 0.01, 128)
    assert qv.type == pa.list_(pa.uint8(), 3)
    assert values(qv) == [[138, 108, 158]]


def test_haversine():
    d = af.haversine_km(pa.array([48.8566, 95.0]), pa.array([2.3522, 0.0]), 51.5074, -0.1278)
    assert abs(d[0].as_py() - 343.556) < 0.01
    assert d[1].as_py() is None


def test_pandas_series_in_series_out():
    s = pd.Series([1.0, 2.0, 3.0], index=["a", "b", "c"], name="amount")
    out = af.standard_scale(s, 1.0, 1.0)
    assert isinstance(out, pd.Series)
    assert list(out.index) == ["a", "b", "c"] and out.name == "amount"
    assert list(out) == [0.0, 1.0, 2.0]
    ints = pd.Series([1, 2, 3])
    assert list(af.hash_bucket(ints, 7)) == [v % 7 for v in values(af.xxhash64(pa.array([1, 2, 3])))]


def test_chunked_input_gives_chunked_output():
    x = pa.chunked_array([[1.0, 2.0], [3.0], []])
    out = af.standard_scale(x, 1.0, 1.0)
    assert isinstance(out, pa.ChunkedArray)
    assert [len(c) for c in out.chunks] == [2, 1, 0]
    assert out.to_pylist() == [0.0, 1.0, 2.0]
    # differently chunked columns are aligned
    y = pa.chunked_array([[1.0], [2.0, 3.0]])
    assert af.standard_scale(x, y, 1.0).to_pylist() == [0.0, 0.0, 0.0]
    assert af.standard_scale(pa.chunked_array([], pa.float64()), 0, 1).to_pylist() == []


def test_sliced_and_non_contiguous_inputs():
    base = pa.array([10.0, 20.0, 30.0, 40.0])
    assert values(af.standard_scale(base.slice(1, 2), 0, 10)) == [2.0, 3.0]
    strided = np.arange(10, dtype=np.float64)[::2]
    assert values(af.standard_scale(strided, 0, 1)) == [0.0, 2.0, 4.0, 6.0, 8.0]
    names = pa.array(["x", "a", "b"]).slice(1)
    assert values(af.xxhash64(names)) == values(af.xxhash64(pa.array(["a", "b"])))
    assert len(af.standard_scale(pa.array([], pa.float64()), 0, 1)) == 0


def test_sliced_struct_of_structs_imports_without_noise(capfd: pytest.CaptureFixture[str]) -> None:
    # arrow-rs cannot import a struct inside a struct at an offset: a contiguous copy is
    # imported instead, and nothing is printed on stderr on the way.
    nested = pa.array([{"a": {"b": i}, "c": i} for i in range(10)])
    assert values(af.xxhash64(nested.slice(3, 4))) == values(af.xxhash64(pa.concat_arrays([nested.slice(3, 4)])))
    assert "panicked" not in capfd.readouterr().err


def test_zero_copy_in_and_out():
    x = pa.array(np.arange(1000, dtype=np.float64))
    # pyarrow reads numpy memory in place...
    arr = np.arange(1000, dtype=np.float64)
    assert pa.array(arr).buffers()[1].address == arr.ctypes.data
    # ...Rust reads pyarrow memory in place (also through a slice offset)...
    assert _native._value_buffer_address(x) == x.buffers()[1].address
    sliced = x.slice(10)
    assert _native._value_buffer_address(sliced) == x.buffers()[1].address + 10 * 8
    # ...and pyarrow reads Rust's output in place.
    out, rust_address = _native._float64_array([1.0, 2.0, 3.0])
    assert out.buffers()[1].address == rust_address
    result = af.standard_scale(x, 0, 1)
    assert _native._value_buffer_address(result) == result.buffers()[1].address


def test_type_errors():
    with pytest.raises(TypeError, match=r"standard_scale: argument `x`: expected numbers, found string"):
        af.standard_scale(pa.array(["a"]), 0, 1)
    with pytest.raises(
        TypeError, match=r"standard_scale: argument `mean`: expected a number or a column, found builtins.str"
    ):
        af.standard_scale(pa.array([1.0]), "0", 1)
    with pytest.raises(
        TypeError,
        match=r"xxhash64: argument `#1`: expected a type Spark hashes \(boolean, .*found UInt32: Spark has no unsigned integers",
    ):
        af.xxhash64(pa.array([1], pa.uint32()))
    with pytest.raises(TypeError, match=r"hash_bucket: argument `num_buckets`: expected integers, found double"):
        af.hash_bucket(pa.array([1]), pa.array([1.5]))
    with pytest.raises(TypeError, match=r"dot_product: argument `a`: expected a list or fixed-size list column"):
        af.dot_product(pa.array([1.0]), [1.0])
    with pytest.raises(
        TypeError, match=r"l2_norm: argument `a`: expected one vector of numbers, found float64 with shape \(2, 2, 2\)"
    ):
        af.l2_norm(np.zeros((2, 2, 2)))


def test_value_errors():
    with pytest.raises(ValueError, match=r"standard_scale: argument `std`: expected a standard deviation > 0, found 0"):
        af.standard_scale(pa.array([1.0]), 0, 0)
    with pytest.raises(ValueError, match=r"expected 2 rows like argument `x`, found 3 rows"):
        af.standard_scale(pa.array([1.0, 2.0]), pa.array([1.0, 2.0, 3.0]), 1)
    with pytest.raises(
        ValueError,
        match=r"dot_product: argument `b`: expected a vector of 2 elements like `a`, found 3 elements at row 0",
    ):
        af.dot_product(pa.array([[1.0, 2.0]]), pa.array([[1.0, 2.0, 3.0]]))
    with pytest.raises(ValueError, match=r"bucketize: argument `boundaries`: expected strictly increasing"):
        af.bucketize(pa.array([1.0]), [3, 1])
    with pytest.raises(ValueError, match=r"hash_bucket: argument `num_buckets`: expected a bucket count > 0, found -1"):
        af.hash_bucket(pa.array([1]), -1)
    with pytest.raises(ValueError, match=r"dequantize_int8: argument `q`: expected uint8 values in 0..=255"):
        af.dequantize_int8(pa.array([300]), 1.0, 0)
    with pytest.raises(
        ValueError, match=r"quantize_int8: argument `zero_point`: expected a zero point in 0..=255, found 300"
    ):
        af.quantize_int8(pa.array([1.0]), 1.0, 300)


def test_gil_is_released_threads_agree():
    x = RNG.normal(size=2_000_000)
    expected = af.standard_scale(x, 1.0, 2.0)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: af.standard_scale(x, 1.0, 2.0), range(4)))
    assert all(r.equals(expected) for r in results)


def test_errors_count_rows_from_the_start_of_chunked_input():
    x = pa.chunked_array([[1.0, 2.0], [3.0, 4.0, 5.0]])
    std = pa.chunked_array([[1.0, 1.0], [1.0, 1.0, -1.0]])
    with pytest.raises(ValueError, match=r"found -1 at row 4$"):
        af.standard_scale(x, 0.0, std)


def test_extremes_of_float64_give_representable_results():
    assert af.min_max_scale(pa.array([1e308]), -1e308, 1e308).to_pylist() == [1.0]
    assert af.standard_scale(pa.array([1e308]), -1e308, 4.0).to_pylist() == [5e307]
    huge = pa.array([[1e200, 1e200]])
    assert af.cosine_similarity(huge, huge).to_pylist() == pytest.approx([1.0])
    assert af.l2_norm(huge).to_pylist() == pytest.approx([1e200 * math.sqrt(2)])
    tiny = pa.array([[1e-200, 1e-200]])
    assert af.cosine_similarity(tiny, tiny).to_pylist() == pytest.approx([1.0])


def test_polars_and_any_arrow_capsule_object_in_same_kind_out():
    pl = pytest.importorskip("polars")
    out = af.standard_scale(pl.Series("x", [1.0, 3.0]), 1.0, 2.0)
    assert isinstance(out, pl.Series) and out.name == "x" and out.to_list() == [0.0, 1.0]
    vectors = pl.Series("e", [[3.0, 4.0], [0.0, 0.0]])
    assert af.l2_norm(vectors).to_list() == [5.0, 0.0]
    assert af.cosine_similarity(vectors, [1.0, 0.0]).to_list() == [0.6, None]
    assert (
        af.hash_bucket(pl.Series("k", ["a", "b"]), 10).to_list() == af.hash_bucket(pa.array(["a", "b"]), 10).to_pylist()
    )
    sums = af.rolling_sum(pl.Series("v", [1.0, 2.0]), pl.Series("t", [1, 2]), 5)
    assert isinstance(sums, pl.Series) and sums.to_list() == [1.0, 3.0]

    class CapsuleOnly:
        """An object that only speaks the Arrow PyCapsule interface (as nanoarrow does)."""

        def __init__(self, array: pa.Array) -> None:
            self.array = array

        def __arrow_c_array__(self, requested_schema=None):
            return self.array.__arrow_c_array__(requested_schema)

    assert af.standard_scale(CapsuleOnly(pa.array([2.0])), 0.0, 2.0).to_pylist() == [1.0]


def test_errors_are_arrowfeat_errors_and_builtin_ones():
    with pytest.raises(af.ArrowfeatValueError) as native:
        af.standard_scale(pa.array([1.0]), 0.0, 0.0)  # raised by the Rust kernel
    assert isinstance(native.value, ValueError) and isinstance(native.value, af.ArrowfeatError)
    with pytest.raises(af.ArrowfeatTypeError) as python_side:
        af.standard_scale(object(), 0.0, 1.0)  # raised by the Python layer
    assert isinstance(python_side.value, TypeError)
    with pytest.raises(af.ArrowfeatTypeError):
        af.l2_norm(pa.array(["a"]))
    assert issubclass(af.ArrowfeatInternalError, RuntimeError)


def test_python_object_columns_are_refused_by_name():
    """Polars exports an Object column as the addresses of its objects and pandas cannot
    convert arbitrary objects: both are refused with the function and argument named,
    never hashed or scaled."""
    pl = pytest.importorskip("polars")
    objects = pl.Series("x", [object(), object()], dtype=pl.Object)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^xxhash64: argument `#1`: .*Polars Series of dtype Object"):
        af.xxhash64(objects)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^standard_scale: argument `x`: .*dtype Object"):
        af.standard_scale(objects, 0.0, 1.0)
    with pytest.raises(af.ArrowfeatTypeError, match=r"^hash_bucket: argument `#1`: .*pandas Series of dtype object"):
        af.hash_bucket(pd.Series([object(), object()]), 10)


def test_values_quoted_from_pyarrow_errors_are_escaped() -> None:
    hostile = "\x1b[31m##[add-mask]x\n::error::pwn"
    with pytest.raises(TypeError) as error:
        af.standard_scale(pa.array([hostile]), 0.0, 1.0)
    message = str(error.value)
    assert message.startswith("standard_scale: argument `x`: expected numbers")
    assert "\x1b" not in message and "\n" not in message and "##[" not in message
    assert "\\u{1b}[31m#\\u{23}[add-mask]x\\u{a}::error::pwn" in message
