"""PySpark benchmarks (local[2], warm session). Each query writes to Spark's `noop` sink so
the whole column is computed without collecting it; the input DataFrame is cached and
counted first; each timing is the median of ROUNDS runs after one warm-up run, and the
contenders of a table run interleaved (round by round) so that noise hits them all.

Section `compare` (the default): arrowfeat's arrow_udf against a numpy pandas_udf, a
pure-Python pandas_udf and Spark's built-in expression for the same result, side by side,
and beside each arrowfeat UDF the *transport floor*: an arrow_udf with the same input
columns and the same output type that does no work (it returns its first input column
unchanged when that column already has the output type, else a zero-filled column of the
output type and the same length). No arrow_udf can beat that round trip (Arrow batches
to the Python worker and a same-length column back), so a second table reports each
arrowfeat UDF as a multiple of its floor, against the goal of <= 1.1x the floor at 10M
rows (issue 14).

Section `batch-sizes`: how the Arrow batch settings move the floor. Sweeps the runtime
SQL confs `spark.sql.execution.arrow.maxRecordsPerBatch` over 10000 (Spark's default),
100000 and 1000000 and, where the installed Spark has it (4.3.0, installed here, does),
`spark.sql.execution.arrow.maxBytesPerBatch` over 1, 8 and 64 MiB (64 MiB is 4.3.0's
default) with the record limit off (0), so the byte limit alone cuts the batches. At each setting it times the floor
and arrowfeat's standard_scale on one float64 column, interleaved across settings, and
names the setting with the lowest floor.

    make bench-python   (or: .venv/bin/python python/benchmarks/bench_spark.py)
    .venv/bin/python python/benchmarks/bench_spark.py batch-sizes
    .venv/bin/python python/benchmarks/bench_spark.py compare batch-sizes   (both)

ARROWFEAT_BENCH_ROWS sets the row count (default 10M), ARROWFEAT_BENCH_ROUNDS the timed
rounds per contender (default 3).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.functions import arrow_udf, pandas_udf
from pyspark.sql.pandas.types import to_arrow_type

import arrowfeat.spark as afs

N = int(os.environ.get("ARROWFEAT_BENCH_ROWS", 10_000_000))
HASH_N = min(N, 1_000_000)  # the pure-Python baseline is too slow for 10M rows
ROUNDS = int(os.environ.get("ARROWFEAT_BENCH_ROUNDS", 3))
GOAL = 1.1  # issue 14: an arrowfeat arrow_udf within 1.1x its transport floor at 10M rows
OURS, FLOOR = "arrowfeat arrow_udf", "transport floor arrow_udf"
SECTIONS = ("compare", "batch-sizes")
RECORDS, BYTES = "spark.sql.execution.arrow.maxRecordsPerBatch", "spark.sql.execution.arrow.maxBytesPerBatch"

P1, P2 = 11400714785074694791, 14029467366897019727
P3, P4, P5 = 1609587929392839161, 9650029242287828579, 2870177450012600261
M = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc: int, lane: int) -> int:
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


def rows(n: int) -> str:
    """10_000_000 -> '10M', 20_000 -> '20k'."""
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n / 1e3:g}k" if n >= 1_000 else str(n)


def transport_floor(df: DataFrame, return_type: T.DataType, *names: str) -> Column:
    """The transport floor of an arrow_udf over the columns `names` that returns
    `return_type`: an arrow_udf with the same input columns and output type that does no
    work. When the first input column already has the output type it is returned
    unchanged (zero copy); otherwise (e.g. a string column in, bigint out) the floor
    returns a zero-filled column of the output type and the batch's length, a calloc
    and nothing more. Numeric output types only, which is all this file needs."""
    if df.schema[names[0]].dataType == return_type:

        def identity(*columns: pa.Array) -> pa.Array:
            return columns[0]

        udf = arrow_udf(identity, return_type)
    else:
        dtype = to_arrow_type(return_type).to_pandas_dtype()

        def zeros(*columns: pa.Array) -> pa.Array:
            return pa.array(np.zeros(len(columns[0]), dtype=dtype))

        udf = arrow_udf(zeros, return_type)
    return udf(*names)


def run(df: DataFrame, column: Column) -> float:
    start = time.perf_counter()
    df.select(column.alias("out")).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def timed(df: DataFrame, column: Column) -> Callable[[], float]:
    return lambda: run(df, column)


def interleaved(contenders: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Runs each contender once to warm up, then ROUNDS rounds of all of them in turn;
    returns each contender's median."""
    for go in contenders.values():
        go()
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for _ in range(ROUNDS):
        for label, go in contenders.items():
            times[label].append(go())
    return {label: statistics.median(v) for label, v in times.items()}


def compare(name: str, df: DataFrame, contenders: dict[str, Column], floors: list[tuple[str, float, float]]) -> None:
    """Prints one table row per contender; appends (name, arrowfeat, floor) to `floors`."""
    med = interleaved({label: timed(df, column) for label, column in contenders.items()})
    ours = med[OURS]
    for label, t in med.items():
        print(f"| {name} | {label} | {t:.2f} | {t / ours:.2f} |")
    floors.append((name, ours, med[FLOOR]))


def session() -> SparkSession:
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def data(spark: SparkSession) -> DataFrame:
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
    return df


def batch_sizes(spark: SparkSession, df: DataFrame) -> None:
    """The floor and arrowfeat's standard_scale at each Arrow batch setting."""
    defaults = {RECORDS: spark.conf.get(RECORDS)}
    settings: list[dict[str, str]] = [{RECORDS: str(n)} for n in (10_000, 100_000, 1_000_000)]
    # spark.conf.isModifiable is true only for a runtime SQL conf this Spark defines.
    if spark.conf.isModifiable(BYTES):
        defaults[BYTES] = spark.conf.get(BYTES)
        settings += [{RECORDS: "0", BYTES: str(mib << 20)} for mib in (1, 8, 64)]
    else:
        print(f"(this Spark has no `{BYTES}`: only the record limit is swept)\n")
    print(f"Defaults: {', '.join(f'`{k}` = {v}' for k, v in defaults.items())}\n")

    def label(setting: dict[str, str]) -> str:
        return ", ".join(f"{k.rsplit('.', 1)[1]}={v}" for k, v in setting.items())

    def at(setting: dict[str, str], column: Column) -> Callable[[], float]:
        def go() -> float:
            for key, value in {**defaults, **setting}.items():
                spark.conf.set(key, value)
            return run(df, column)

        return go

    ours, floor = afs.standard_scale("x", 3.5, 2.25), transport_floor(df, T.DoubleType(), "x")
    names = [label(setting) for setting in settings]
    contenders: dict[str, Callable[[], float]] = {}
    for name, setting in zip(names, settings, strict=True):
        contenders[f"{name} floor"] = at(setting, floor)
        contenders[f"{name} arrowfeat"] = at(setting, ours)
    med = interleaved(contenders)
    for key, value in defaults.items():
        spark.conf.set(key, value)

    print(f"standard_scale on one float64 column, {rows(N)} rows\n")
    print("| setting | floor s | arrowfeat s | ratio |")
    print("| --- | --- | --- | --- |")
    for name in names:
        f, o = med[f"{name} floor"], med[f"{name} arrowfeat"]
        print(f"| {name} | {f:.2f} | {o:.2f} | {o / f:.2f} |")
    best = min(names, key=lambda name: med[f"{name} floor"])
    print(f"\nLowest floor: {best} ({med[best + ' floor']:.2f} s)")


def main(sections: list[str]) -> None:
    spark = session()
    print(f"PySpark {spark.version}, local[2], {rows(N)} rows, median of {ROUNDS} rounds\n")
    df = data(spark)
    if "compare" in sections:
        compare_all(df)
    if "batch-sizes" in sections:
        print("\n## Arrow batch settings and the transport floor\n")
        batch_sizes(spark, df)
    spark.stop()


def compare_all(df: DataFrame) -> None:
    floors: list[tuple[str, float, float]] = []
    print("| kernel | implementation | seconds | time / arrowfeat arrow_udf |")
    print("| --- | --- | --- | --- |")

    @pandas_udf("double")  # type: ignore[untyped-decorator]
    def numpy_scale(x: pd.Series) -> pd.Series:
        return (x - 3.5) / 2.25

    compare(
        f"standard_scale, {rows(N)}",
        df,
        {
            OURS: afs.standard_scale("x", 3.5, 2.25),
            FLOOR: transport_floor(df, T.DoubleType(), "x"),  # x is double: returned as is
            "arrowfeat pandas_udf": afs.standard_scale("x", 3.5, 2.25, kind="pandas"),
            "numpy pandas_udf": numpy_scale("x"),
            "Spark built-in `(x - m) / s`": (F.col("x") - 3.5) / 2.25,
        },
        floors,
    )

    @pandas_udf("double")  # type: ignore[untyped-decorator]
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
        f"haversine_km, {rows(N)}",
        df,
        {
            OURS: afs.haversine_km("lat", "lon", 48.8566, 2.3522),
            FLOOR: transport_floor(df, T.DoubleType(), "lat", "lon"),  # lat is double: returned as is
            "numpy pandas_udf": numpy_haversine("lat", "lon"),
            "Spark built-in expression": F.lit(2 * 6371.0088) * F.asin(F.sqrt(F.least(h, F.lit(1.0)))),
        },
        floors,
    )

    small = df.limit(HASH_N).cache()
    small.count()

    @pandas_udf("long")  # type: ignore[untyped-decorator]
    def python_hash_bucket(ids: pd.Series) -> pd.Series:
        return ids.map(lambda s: xxh64_py(s.encode(), 42) % 1000)

    # id is a string and hash_bucket returns bigint: this floor returns zeros of bigint.
    compare(
        f"hash_bucket, {rows(HASH_N)} 16-byte strings",
        small,
        {
            OURS: afs.hash_bucket("id", 1000),
            FLOOR: transport_floor(small, T.LongType(), "id"),
            "pure-Python pandas_udf": python_hash_bucket("id"),
            "Spark built-in `pmod(xxhash64(id), n)`": F.pmod(F.xxhash64("id"), F.lit(1000)),
        },
        floors,
    )
    if N > HASH_N:  # else the table above already covers all N rows
        compare(
            f"hash_bucket, {rows(N)} 16-byte strings",
            df,
            {
                OURS: afs.hash_bucket("id", 1000),
                FLOOR: transport_floor(df, T.LongType(), "id"),
                "Spark built-in `pmod(xxhash64(id), n)`": F.pmod(F.xxhash64("id"), F.lit(1000)),
            },
            floors,
        )
    small.unpersist()

    print(f"\n## arrowfeat against the transport floor (goal <= {GOAL}x the floor at 10M rows)\n")
    print(f"| UDF | arrowfeat s | floor s | arrowfeat / floor | goal <= {GOAL} met/MISSED |")
    print("| --- | --- | --- | --- | --- |")
    for name, ours, floor in floors:
        ratio = ours / floor
        print(f"| {name} | {ours:.2f} | {floor:.2f} | {ratio:.2f}x | {'met' if ratio <= GOAL else 'MISSED'} |")


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["compare"]
    unknown = [a for a in chosen if a not in SECTIONS]
    if unknown:
        sys.exit(f"usage: bench_spark.py [{' | '.join(SECTIONS)}]...  (unknown: {' '.join(unknown)})")
    main(chosen)
