"""PySpark benchmarks (local[2], warm session): arrowfeat's arrow_udf against a numpy
pandas_udf, a pure-Python pandas_udf and Spark's built-in expression for the same
result, side by side in one run. Each query writes to Spark's `noop` sink so the whole
column is computed without collecting it.

    make bench-python   (or: .venv/bin/python python/benchmarks/bench_spark.py)
"""

import os
import statistics
import sys
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

import arrowfeat.spark as afs

N = 10_000_000
HASH_N = 1_000_000  # the pure-Python baseline is too slow for 10M rows
ROUNDS = 3

P1, P2 = 11400714785074694791, 14029467366897019727
P3, P4, P5 = 1609587929392839161, 9650029242287828579, 2870177450012600261
M = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M, 31) * P1) & M


def xxh64_py(data: bytes, seed: int) -> int:
    """Reference XXH64 in pure Python: the 'pure-Python UDF' baseline."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i + 8 * k : i + 8 * k + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[i : i + 8], "little")), 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[i : i + 4], "little") * P1 & M), 23) * P2 + P3) & M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5 & M), 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h - (1 << 64) if h >= 1 << 63 else h


def run(df, column):
    df.select(column.alias("out")).write.format("noop").mode("overwrite").save()


def compare(name, df, contenders):
    for column in contenders.values():
        run(df, column)  # warm up workers
    times = {label: [] for label in contenders}
    for _ in range(ROUNDS):
        for label, column in contenders.items():
            start = time.perf_counter()
            run(df, column)
            times[label].append(time.perf_counter() - start)
    med = {label: statistics.median(v) for label, v in times.items()}
    ours = med["arrowfeat arrow_udf"]
    for label, t in med.items():
        print(f"| {name} | {label} | {t:.2f} | {t / ours:.2f} |")


def main():
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(f"PySpark {spark.version}, local[2]\n")
    print("| kernel | implementation | seconds | time / arrowfeat arrow_udf |")
    print("| --- | --- | --- | --- |")
    df = (
        spark.range(N, numPartitions=2)
        .select(
            (F.rand(1) * 100).alias("x"),
            (F.rand(2) * 170 - 85).alias("lat"),
            (F.rand(3) * 350 - 175).alias("lon"),
            F.format_string("u%015d", (F.rand(4) * 1e15).cast("long")).alias("id"),
        )
        .cache()
    )
    df.count()

    @pandas_udf("double")
    def numpy_scale(x: pd.Series) -> pd.Series:
        return (x - 3.5) / 2.25

    compare(
        "standard_scale, 10M",
        df,
        {
            "arrowfeat arrow_udf": afs.standard_scale("x", 3.5, 2.25),
            "arrowfeat pandas_udf": afs.standard_scale("x", 3.5, 2.25, kind="pandas"),
            "numpy pandas_udf": numpy_scale("x"),
            "Spark built-in `(x - m) / s`": (F.col("x") - 3.5) / 2.25,
        },
    )

    @pandas_udf("double")
    def numpy_haversine(lat: pd.Series, lon: pd.Series) -> pd.Series:
        p1, p2 = np.radians(lat.to_numpy()), np.radians(48.8566)
        dl = np.radians(2.3522 - lon.to_numpy())
        h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
        return pd.Series(2 * 6371.0088 * np.arcsin(np.sqrt(np.minimum(h, 1.0))))

    p1, dl = F.radians("lat"), F.radians(F.lit(2.3522) - F.col("lon"))
    h = F.pow(F.sin((F.lit(np.radians(48.8566)) - p1) / 2), 2) + F.cos(p1) * F.lit(np.cos(np.radians(48.8566))) * F.pow(
        F.sin(dl / 2), 2
    )
    compare(
        "haversine_km, 10M",
        df,
        {
            "arrowfeat arrow_udf": afs.haversine_km("lat", "lon", 48.8566, 2.3522),
            "numpy pandas_udf": numpy_haversine("lat", "lon"),
            "Spark built-in expression": F.lit(2 * 6371.0088) * F.asin(F.sqrt(F.least(h, F.lit(1.0)))),
        },
    )

    small = df.limit(HASH_N).cache()
    small.count()

    @pandas_udf("long")
    def python_hash_bucket(ids: pd.Series) -> pd.Series:
        return ids.map(lambda s: xxh64_py(s.encode(), 42) % 1000)

    compare(
        "hash_bucket, 1M 16-byte strings",
        small,
        {
            "arrowfeat arrow_udf": afs.hash_bucket("id", 1000),
            "pure-Python pandas_udf": python_hash_bucket("id"),
            "Spark built-in `pmod(xxhash64(id), n)`": F.pmod(F.xxhash64("id"), F.lit(1000)),
        },
    )
    compare(
        "hash_bucket, 10M 16-byte strings",
        df,
        {
            "arrowfeat arrow_udf": afs.hash_bucket("id", 1000),
            "Spark built-in `pmod(xxhash64(id), n)`": F.pmod(F.xxhash64("id"), F.lit(1000)),
        },
    )
    spark.stop()


if __name__ == "__main__":
    main()
