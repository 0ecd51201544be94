"""arrowfeat UDFs in a real local PySpark session: equal to in-process Python bit for bit,
and the hash functions equal to Spark's built-in xxhash64 / pmod."""

import math
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import arrowfeat as af
import arrowfeat.spark as afs

ROWS = 257

SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("i32", T.IntegerType()),
        T.StructField("name", T.StringType()),
        T.StructField("x", T.DoubleType()),
        T.StructField("mean", T.DoubleType()),
        T.StructField("lat", T.DoubleType()),
        T.StructField("lon", T.DoubleType()),
        T.StructField("ts", T.TimestampType()),
        T.StructField("flag", T.BooleanType()),
        T.StructField("emb", T.ArrayType(T.FloatType())),
        T.StructField("emb2", T.ArrayType(T.FloatType())),
        T.StructField("q", T.ArrayType(T.ShortType())),
    ]
)


def make_rows():
    import datetime as dt

    rows = []
    for i in range(ROWS):
        null = i % 11 == 0
        rows.append(
            (
                None if i % 13 == 0 else i * 7919 - 1000,
                None if i % 17 == 0 else i - 100,
                None if null else f"user_{i % 37}",
                None if i % 19 == 0 else (float("nan") if i % 23 == 0 else (i * 0.37) - 20.0),
                1.5 + (i % 3),
                None if i % 29 == 0 else -80.0 + (i * 0.61) % 160,
                -170.0 + (i * 1.3) % 340,
                None
                if i % 31 == 0
                else dt.datetime(2026, 1, 1, tzinfo=dt.UTC) - dt.timedelta(days=i * 40, microseconds=i * 7),
                None if i % 5 == 0 else i % 2 == 0,
                None if null else [float((i * k) % 7) - 3.0 for k in range(1, 9)],
                [float((i + k) % 5) - 2.0 for k in range(1, 9)],
                None if null else [(i * k) % 256 for k in range(1, 9)],
            )
        )
    return rows


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(make_rows(), SCHEMA).repartition(3).cache()


@pytest.fixture(scope="module")
def table(df):
    """The same rows as pyarrow, in Spark's row order."""
    return df.toArrow()


def same(a, b):
    """Equal as Python values, floats bit for bit (NaN equal to NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=False))
    return a == b


def assert_same(spark_values, python_values, what):
    assert len(spark_values) == len(python_values), what
    bad = [(i, s, p) for i, (s, p) in enumerate(zip(spark_values, python_values, strict=False)) if not same(s, p)]
    assert not bad, f"{what}: first mismatches {bad[:3]}"


CASES = {
    "standard_scale": (
        lambda: afs.standard_scale("x", "mean", 2.5),
        lambda t: af.standard_scale(t["x"], t["mean"], 2.5),
    ),
    "min_max_scale": (lambda: afs.min_max_scale("x", -10, 40), lambda t: af.min_max_scale(t["x"], -10, 40)),
    "bucketize": (lambda: afs.bucketize("x", [-10, 0, 10, 50]), lambda t: af.bucketize(t["x"], [-10, 0, 10, 50])),
    "xxhash64": (
        lambda: afs.xxhash64("id", "name", "ts", "flag"),
        lambda t: af.xxhash64(t["id"], t["name"], t["ts"], t["flag"]),
    ),
    "hash_bucket": (lambda: afs.hash_bucket("name", "i32", 1000), lambda t: af.hash_bucket(t["name"], t["i32"], 1000)),
    "dot_product": (lambda: afs.dot_product("emb", "emb2"), lambda t: af.dot_product(t["emb"], t["emb2"])),
    "cosine_similarity": (
        lambda: afs.cosine_similarity("emb", [1.0, 0, 1, 0, 1, 0, 1, 0]),
        lambda t: af.cosine_similarity(t["emb"], [1.0, 0, 1, 0, 1, 0, 1, 0]),
    ),
    "l2_norm": (lambda: afs.l2_norm("emb"), lambda t: af.l2_norm(t["emb"])),
    "l2_normalize": (lambda: afs.l2_normalize("emb"), lambda t: af.l2_normalize(t["emb"])),
    "quantize_int8": (
        lambda: afs.quantize_int8("x", 0.25, 128),
        lambda t: af.quantize_int8(t["x"], 0.25, 128).cast(pa.int16()),
    ),
    "quantize_vectors": (
        lambda: afs.quantize_int8("emb", 0.05, 128, vectors=True),
        lambda t: af.quantize_int8(t["emb"], 0.05, 128).cast(pa.list_(pa.int16())),
    ),
    "dequantize_vectors": (
        lambda: afs.dequantize_int8("q", 0.01, 128, vectors=True),
        lambda t: af.dequantize_int8(t["q"], 0.01, 128),
    ),
    "haversine_km": (
        lambda: afs.haversine_km("lat", "lon", 48.8566, 2.3522),
        lambda t: af.haversine_km(t["lat"], t["lon"], 48.8566, 2.3522),
    ),
}


@pytest.mark.parametrize("batch_rows", [10_000, 7])
@pytest.mark.parametrize("kind", ["arrow", "pandas"])
def test_spark_udfs_equal_in_process(spark, df, table, batch_rows, kind):
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch_rows))
    try:
        for name, (make_column, in_process) in CASES.items():
            column = make_column()
            if kind == "pandas" and name in ("xxhash64", "hash_bucket"):
                with pytest.raises(ValueError, match="pandas_udf loses it"):
                    rebuild_as_pandas(name)
                continue
            if kind == "pandas":
                # Rebuild the same UDF in its pandas_udf form.
                column = rebuild_as_pandas(name)
            got = df.select(column.alias("out")).toArrow()["out"].to_pylist()
            expected = in_process(table).to_pylist()
            if kind == "pandas":
                # pandas has one missing marker: Spark hands NaN and null in as NaN and
                # reads NaN back as null, so NaN results surface as null.
                expected = [None if isinstance(v, float) and math.isnan(v) else v for v in expected]
            assert_same(got, expected, f"{name} ({kind}, batches of {batch_rows})")
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")


def rebuild_as_pandas(name):
    calls = {
        "standard_scale": lambda: afs.standard_scale("x", "mean", 2.5, kind="pandas"),
        "min_max_scale": lambda: afs.min_max_scale("x", -10, 40, kind="pandas"),
        "bucketize": lambda: afs.bucketize("x", [-10, 0, 10, 50], kind="pandas"),
        "xxhash64": lambda: afs.xxhash64("id", "name", "ts", "flag", kind="pandas"),
        "hash_bucket": lambda: afs.hash_bucket("name", "i32", 1000, kind="pandas"),
        "dot_product": lambda: afs.dot_product("emb", "emb2", kind="pandas"),
        "cosine_similarity": lambda: afs.cosine_similarity("emb", [1.0, 0, 1, 0, 1, 0, 1, 0], kind="pandas"),
        "l2_norm": lambda: afs.l2_norm("emb", kind="pandas"),
        "l2_normalize": lambda: afs.l2_normalize("emb", kind="pandas"),
        "quantize_int8": lambda: afs.quantize_int8("x", 0.25, 128, kind="pandas"),
        "quantize_vectors": lambda: afs.quantize_int8("emb", 0.05, 128, vectors=True, kind="pandas"),
        "dequantize_vectors": lambda: afs.dequantize_int8("q", 0.01, 128, vectors=True, kind="pandas"),
        "haversine_km": lambda: afs.haversine_km("lat", "lon", 48.8566, 2.3522, kind="pandas"),
    }
    return calls[name]()


def test_hashes_equal_spark_builtins(spark, df):
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "50")
    try:
        out = df.select(
            afs.xxhash64("id").alias("a1"),
            F.xxhash64("id").alias("b1"),
            afs.xxhash64("name", "i32", "x").alias("a2"),
            F.xxhash64("name", "i32", "x").alias("b2"),
            afs.xxhash64("ts", "flag", "lat").alias("a3"),
            F.xxhash64("ts", "flag", "lat").alias("b3"),
            afs.hash_bucket("id", "name", 1000).alias("a4"),
            F.pmod(F.xxhash64("id", "name"), F.lit(1000)).alias("b4"),
            afs.hash_bucket("name", 7).alias("a5"),
            F.pmod(F.xxhash64("name"), F.lit(7)).alias("b5"),
        ).collect()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    for k in range(1, 6):
        assert [r[f"a{k}"] for r in out] == [r[f"b{k}"] for r in out], f"pair {k}"


def test_column_expressions_and_literal_columns(spark, df):
    out = df.select(
        afs.standard_scale(F.col("x") * 2, F.lit(1.0), 4.0).alias("s"),
        afs.hash_bucket(F.lit("salt"), "name", 100).alias("h"),
        F.pmod(F.xxhash64(F.lit("salt"), "name"), F.lit(100)).alias("h_builtin"),
    ).toArrow()
    assert out["h"].to_pylist() == out["h_builtin"].to_pylist()
    expected = af.standard_scale(af.standard_scale(df.select("x").toArrow()["x"], 0, 0.5), 1.0, 4.0)
    assert_same(out["s"].to_pylist(), expected.to_pylist(), "expression input")


def test_errors_are_clear(spark, df):
    with pytest.raises(TypeError, match="expected at least one column argument"):
        afs.standard_scale(1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="expected 'arrow' or 'pandas'"):
        afs.l2_norm("emb", kind="numpy")
    with pytest.raises(Exception, match=r"standard_scale: argument `std`: expected a standard deviation > 0, found 0"):
        df.select(afs.standard_scale("x", 0.0, 0.0)).collect()


NESTED_GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "spark" / "nested_hash_golden.parquet"


def test_nested_and_wide_types_hash_as_in_spark_in_process_and_in_a_live_session(spark):
    """Lists, nested lists, structs, lists of structs, narrow and wide decimals, every
    integer width, float32, dates and timestamps with nulls at every level: arrowfeat's
    xxhash64 and hash equal Spark's, in process on the golden file (made by real Spark) and
    as arrow_udfs beside F.xxhash64 / F.hash in this session."""
    import polars as pl
    import pyarrow.parquet as pq

    golden = pq.read_table(NESTED_GOLDEN)
    names = [n for n in golden.column_names if not n.startswith(("xx_", "mm_"))]
    assert len(names) >= 19
    for name in names:
        column = golden[name]
        assert af.xxhash64(column).to_pylist() == golden[f"xx_{name}"].to_pylist(), name
        assert af.hash(column).to_pylist() == golden[f"mm_{name}"].to_pylist(), name
        # Polars in (which keeps the types, unlike pandas' float64 for nullable ints), Polars out
        assert af.hash(pl.from_arrow(column)).to_list() == golden[f"mm_{name}"].to_pylist(), name
    df = spark.createDataFrame(golden.select(names))
    out = df.select(
        *[afs.xxhash64(n).alias(f"a_{n}") for n in names],
        *[F.xxhash64(n).alias(f"b_{n}") for n in names],
        *[afs.hash(n).alias(f"c_{n}") for n in names],
        *[F.hash(n).alias(f"d_{n}") for n in names],
        afs.xxhash64(*names).alias("a_all"),
        F.xxhash64(*names).alias("b_all"),
        afs.hash(*names).alias("c_all"),
        F.hash(*names).alias("d_all"),
        afs.hash_bucket("list_struct", "dec_38_10", 97).alias("a_bucket"),
        F.pmod(F.xxhash64("list_struct", "dec_38_10"), F.lit(97)).alias("b_bucket"),
    ).toArrow()
    for n in [*names, "all"]:
        assert out[f"a_{n}"].to_pylist() == out[f"b_{n}"].to_pylist(), f"xxhash64 {n}"
        assert out[f"c_{n}"].to_pylist() == out[f"d_{n}"].to_pylist(), f"hash {n}"
    assert out["a_bucket"].to_pylist() == out["b_bucket"].to_pylist()
    with pytest.raises(
        af.ArrowfeatTypeError, match=r"hash: argument `#1`: expected a type Spark hashes .*Spark refuses to hash maps"
    ):
        af.hash(pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32())))


def test_sliced_nested_arrays_and_categorical_dictionaries_hash_by_value():
    """A struct inside a struct (or a fixed-size list) at an offset, which arrow-rs cannot
    import as it is, and Polars' Categorical (a dictionary of string views, which pyarrow
    cannot decode) hash like their plain values."""
    import polars as pl

    nested = pa.array([{"s": {"x": v}} for v in range(6)])
    for offset in range(1, 5):
        part = nested.slice(offset, 2)
        plain = pa.array([{"s": {"x": v}} for v in range(offset, offset + 2)])
        assert af.xxhash64(part).to_pylist() == af.xxhash64(plain).to_pylist()
        assert af.hash(part).to_pylist() == af.hash(plain).to_pylist()
    fixed = pa.FixedSizeListArray.from_arrays(pa.array([{"x": v} for v in range(4)]), 1)
    assert (
        af.xxhash64(fixed.slice(1)).to_pylist()
        == af.xxhash64(pa.FixedSizeListArray.from_arrays(pa.array([{"x": v} for v in range(1, 4)]), 1)).to_pylist()
    )
    categorical = pl.Series(["a", None, "b", "a"], dtype=pl.Categorical)
    assert af.xxhash64(categorical).to_list() == af.xxhash64(pl.Series(["a", None, "b", "a"])).to_list()
    assert af.hash(categorical).to_list() == af.hash(pa.array(["a", None, "b", "a"])).to_pylist()
