"""Nested hashing, side by side in one run: arrowfeat's xxhash64 / hash of a list<int64>
of 8 elements and of a struct<int64, string>, in process (pyarrow) and inside Spark as
arrow_udfs, against Spark's built-in xxhash64 / hash in the same local[2] session, and
against Spark's transport floor (an arrow_udf that returns its input's first column).

    .venv/bin/python python/benchmarks/bench_nested_hash.py   (ARROWFEAT_BENCH_ROWS, default 10M)

Every timing is the best of ROUNDS runs. Spark timings write to the `noop` sink, so the
whole column is computed and nothing is collected; the input DataFrame is cached and
counted first.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pyarrow as pa

import arrowfeat as af

ROWS = int(os.environ.get("ARROWFEAT_BENCH_ROWS", 10_000_000))
ROUNDS = int(os.environ.get("ARROWFEAT_BENCH_ROUNDS", 3))


def best(f, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def in_process() -> dict[str, float]:
    ids = np.arange(ROWS, dtype=np.int64)
    values = (ids[:, None] * np.arange(1, 9, dtype=np.int64)).ravel()
    lists = pa.ListArray.from_arrays(pa.array(np.arange(0, 8 * ROWS + 1, 8, dtype=np.int32)), pa.array(values))
    names = pa.array([f"user_{i}" for i in range(ROWS)])
    structs = pa.StructArray.from_arrays([pa.array(ids), names], names=["id", "name"])
    flat = pa.array(ids)
    return {
        "xxhash64 list<int64>[8]": best(lambda: af.xxhash64(lists)),
        "hash list<int64>[8]": best(lambda: af.hash(lists)),
        "xxhash64 struct<int64, string>": best(lambda: af.xxhash64(structs)),
        "hash struct<int64, string>": best(lambda: af.hash(structs)),
        "xxhash64 int64 (flat, for scale)": best(lambda: af.xxhash64(flat)),
    }


def in_spark() -> list[tuple[str, float, float, float]]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.functions import arrow_udf

    import arrowfeat.spark as afs

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "6g")
        .getOrCreate()
    )
    df = spark.range(ROWS).select(
        F.array(*[F.col("id") * i for i in range(1, 9)]).alias("l"),
        F.struct(F.col("id"), F.concat(F.lit("user_"), F.col("id").cast("string")).alias("name")).alias("s"),
    )
    df = df.cache()
    df.count()

    @arrow_udf("long")  # type: ignore[misc]
    def floor(column: pa.Array) -> pa.Array:
        # The transport floor: Arrow batches to Python and a column of the same length back.
        return pa.array(np.zeros(len(column), dtype=np.int64))

    def run(column) -> float:
        return best(lambda: df.select(column.alias("h")).write.format("noop").mode("overwrite").save())

    rows = []
    for name, ours, builtin, transport in (
        ("xxhash64 list<int64>[8]", afs.xxhash64("l"), F.xxhash64("l"), floor("l")),
        ("hash list<int64>[8]", afs.hash("l"), F.hash("l"), floor("l")),
        ("xxhash64 struct<int64, string>", afs.xxhash64("s"), F.xxhash64("s"), floor("s")),
        ("hash struct<int64, string>", afs.hash("s"), F.hash("s"), floor("s")),
    ):
        rows.append((name, run(ours), run(builtin), run(transport)))
    spark.stop()
    return rows


def main() -> None:
    cores = os.cpu_count() or 1
    print(f"\nIn process, {ROWS:,} rows, one thread (the hash kernels do not start threads)\n")
    print("| column | arrowfeat | rows/s |")
    print("| --- | --- | --- |")
    for name, seconds in in_process().items():
        print(f"| {name} | {seconds:.3f} s | {ROWS / seconds / 1e6:.1f}M |")
    print(f"\nInside Spark local[2] ({cores} cores), {ROWS:,} rows, noop sink\n")
    print(
        "| column | arrowfeat arrow_udf | Spark built-in | transport floor | arrowfeat / floor | arrowfeat / built-in |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, ours, builtin, transport in in_spark():
        print(
            f"| {name} | {ours:.2f} s | {builtin:.2f} s | {transport:.2f} s | "
            f"{ours / transport:.2f}x | {ours / builtin:.2f}x |"
        )


if __name__ == "__main__":
    main()
