"""Produce golden values for arrowfeat's Spark hashes of nested and wide types.

Runs real PySpark (local[1]) and writes tests/spark/nested_hash_golden.parquet: one value
column per type (lists, nested lists, structs with nested fields, lists of structs,
decimals narrow and wide, every integer width, float32, dates and timestamps with and
without a time zone, before and after 1970, with nulls at every level and empty lists),
and for each of them Spark's `xxhash64` (column `xx_NAME`) and `hash` (`mm_NAME`), plus both
hashes of several columns at once (`xx_multi`, `mm_multi`). The Rust test
udf/tests/spark_golden.rs and the Python tests replay them through arrowfeat.

    .venv/bin/python tests/spark/make_nested_hash_golden.py
"""

import datetime as dt
import decimal
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pyarrow.parquet as pq  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

OUT = Path(__file__).with_name("nested_hash_golden.parquet")
ROWS = 40
rng = random.Random(20261203)

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
D = decimal.Decimal
UTC = dt.timezone.utc


def maybe(value, p=0.15):
    return None if rng.random() < p else value


def small_list(make, max_len=8):
    return [maybe(make(), 0.1) for _ in range(rng.randint(0, max_len))]


def timestamp():
    return dt.datetime(1900, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rng.randint(0, 200 * 365 * 86400 * 10**6))


COLUMNS = {
    "i8": (T.ByteType(), [-128, 127, 0, -1] + [rng.randint(-128, 127) for _ in range(ROWS)]),
    "i16": (T.ShortType(), [-(2**15), 2**15 - 1, 0, -1] + [rng.randint(-(2**15), 2**15 - 1) for _ in range(ROWS)]),
    "i32": (T.IntegerType(), [-(2**31), 2**31 - 1, 0, -1] + [rng.randint(-(2**31), 2**31 - 1) for _ in range(ROWS)]),
    "i64": (T.LongType(), [I64_MIN, I64_MAX, 0, -1] + [rng.randint(I64_MIN, I64_MAX) for _ in range(ROWS)]),
    "f32": (T.FloatType(), [0.0, -0.0, float("nan"), float("-inf")] + [rng.uniform(-1e6, 1e6) for _ in range(ROWS)]),
    "dec_10_2": (
        T.DecimalType(10, 2),
        [D("99999999.99"), D("-99999999.99"), D("0.00"), D("-0.01")]
        + [D(rng.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2) for _ in range(ROWS)],
    ),
    "dec_18_0": (
        T.DecimalType(18, 0),
        [D(10**18 - 1), D(-(10**18) + 1), D(0), D(-1)] + [D(rng.randint(-(10**18) + 1, 10**18 - 1)) for _ in range(ROWS)],
    ),
    "dec_20_0": (
        T.DecimalType(20, 0),
        [D(2**63), D(-(2**63) - 1), D(128), D(-129)] + [D(rng.randint(-(10**20) + 1, 10**20 - 1)) for _ in range(ROWS)],
    ),
    "dec_38_10": (
        T.DecimalType(38, 10),
        [D("1.5"), D("-1.0000000000"), D(0), D("9999999999999999999999999999.9999999999")]
        + [D(rng.randint(-(10**38) + 1, 10**38 - 1)).scaleb(-10) for _ in range(ROWS)],
    ),
    "date": (
        T.DateType(),
        [dt.date(1969, 12, 31), dt.date(1, 1, 1), dt.date(1970, 1, 1), dt.date(9999, 12, 31)]
        + [dt.date(1900, 1, 1) + dt.timedelta(days=rng.randint(0, 200 * 365)) for _ in range(ROWS)],
    ),
    "ts": (
        T.TimestampType(),
        [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), dt.datetime(1970, 1, 1, tzinfo=UTC)]
        + [timestamp() for _ in range(ROWS + 2)],
    ),
    "ts_ntz": (
        T.TimestampNTZType(),
        [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1970, 1, 1)]
        + [timestamp().replace(tzinfo=None) for _ in range(ROWS + 2)],
    ),
    "list_i64": (
        T.ArrayType(T.LongType()),
        [[], [None], [None, 5], [I64_MIN, I64_MAX, 0]] + [small_list(lambda: rng.randint(I64_MIN, I64_MAX)) for _ in range(ROWS)],
    ),
    "list_str": (
        T.ArrayType(T.StringType()),
        [[], [""], ["a", None, "héllo ✓"], ["x" * 33]] + [small_list(lambda: "u" * rng.randint(0, 9)) for _ in range(ROWS)],
    ),
    "list_list": (
        T.ArrayType(T.ArrayType(T.IntegerType())),
        [[], [[]], [[1, None], None, []], [[2**31 - 1]]]
        + [small_list(lambda: small_list(lambda: rng.randint(-1000, 1000), 3), 3) for _ in range(ROWS)],
    ),
    "struct_a": (
        T.StructType([T.StructField("a", T.LongType()), T.StructField("b", T.StringType())]),
        [(None, None), (1, None), (None, "x"), (I64_MIN, "")]
        + [(maybe(rng.randint(-(10**12), 10**12)), maybe("s" * rng.randint(0, 5))) for _ in range(ROWS)],
    ),
    "struct_nested": (
        T.StructType(
            [
                T.StructField("id", T.IntegerType()),
                T.StructField("tags", T.ArrayType(T.StringType())),
                T.StructField(
                    "inner",
                    T.StructType([T.StructField("x", T.DoubleType()), T.StructField("d", T.DecimalType(20, 2))]),
                ),
            ]
        ),
        [(1, [], (None, None)), (None, None, None), (2, ["a", None], (-0.0, D("-0.01"))), (3, None, (float("nan"), D("123456789012345678.90")))]
        + [
            (
                maybe(rng.randint(-100, 100)),
                maybe(small_list(lambda: "t" * rng.randint(0, 3), 3)),
                maybe((maybe(rng.uniform(-1, 1)), maybe(D(rng.randint(-(10**20) + 1, 10**20 - 1)).scaleb(-2)))),
            )
            for _ in range(ROWS)
        ],
    ),
    "list_struct": (
        T.ArrayType(T.StructType([T.StructField("k", T.StringType()), T.StructField("v", T.IntegerType())])),
        [[], [None], [("a", 1), (None, None)], [("b", None)]]
        + [small_list(lambda: (maybe("k" * rng.randint(0, 3)), maybe(rng.randint(-9, 9))), 4) for _ in range(ROWS)],
    ),
    "bin": (T.BinaryType(), [b"", b"\x00", b"\xff\xfe\xfd", b"abcde"] + [bytes(rng.randrange(256) for _ in range(rng.randint(0, 9))) for _ in range(ROWS)]),
}
MULTI = ["i32", "list_i64", "struct_a", "dec_38_10", "date", "list_struct"]


def main() -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("arrowfeat-nested-hash-golden")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    names = list(COLUMNS)
    n = len(next(iter(COLUMNS.values()))[1])
    assert all(len(values) == n for _, values in COLUMNS.values())
    # Nulls at the top level too: every column's value is null in some rows.
    rows = [tuple(maybe(COLUMNS[c][1][i], 0.1 if i >= 4 else 0.0) for c in names) for i in range(n)]
    rows.append(tuple(None for _ in names))
    schema = T.StructType([T.StructField(c, COLUMNS[c][0]) for c in names])
    df = spark.createDataFrame(rows, schema)
    hashes = [F.xxhash64(c).alias(f"xx_{c}") for c in names] + [F.hash(c).alias(f"mm_{c}") for c in names]
    multi = [F.xxhash64(*MULTI).alias("xx_multi"), F.hash(*MULTI).alias("mm_multi")]
    table = df.select(*names, *hashes, *multi).toArrow()
    pq.write_table(table, OUT, compression="zstd")
    print(f"wrote {OUT}: {table.num_rows} rows, {len(names)} value columns; multi = {', '.join(MULTI)}")
    spark.stop()


if __name__ == "__main__":
    main()
