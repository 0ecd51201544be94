"""Window benchmarks, side by side in one run: arrowfeat's window kernels against Polars,
DataFusion's and DuckDB's built-in RANGE windows, and Spark's session_window (local[2]).

    make bench-windows   (or: .venv/bin/python python/benchmarks/bench_windows.py)
    .venv/bin/python python/benchmarks/bench_windows.py scaling   (1 thread against all)
    .venv/bin/python python/benchmarks/bench_windows.py polars    (the Polars pairs, alternating)

Data: N events (default 10M) for 1,000 keys in time order (an event log), each key's
inter-arrival gaps random: exponential with a 1 minute mean, and 5% long pauses with a
2 hour mean. The dense case is N events of one key about 100 ns apart. Every timing is
the best of ROUNDS warm runs of the whole call, result materialized as Arrow. "events/s
per core" divides by the threads the engine may use: every engine here, arrowfeat's
kernels included (they split keys, and a large key's time range, over the cores for
inputs over 256K rows), uses all CORES.
"""

import os
import sys
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import datafusion
import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

import arrowfeat as af
import arrowfeat.datafusion as afd

N = int(os.environ.get("ARROWFEAT_BENCH_N", 10_000_000))
KEYS = 1_000
ROUNDS = int(os.environ.get("ARROWFEAT_BENCH_ROUNDS", 3))
CORES = os.cpu_count() or 1
MINUTE = 60_000_000_000


def event_log(n: int, keys: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    per_key = n // keys
    long_pause = rng.random((keys, per_key)) < 0.05
    gaps = np.where(
        long_pause, rng.exponential(120 * MINUTE, (keys, per_key)), rng.exponential(MINUTE, (keys, per_key))
    )
    # Microsecond times, so that Spark sees exactly the same events.
    ts = (1_700_000_000_000_000_000 + np.cumsum(gaps, axis=1)).astype(np.int64) // 1000 * 1000
    key = np.repeat(np.arange(keys, dtype=np.int64), per_key)
    order = np.argsort(ts.ravel(), kind="stable")
    return pa.table(
        {
            "key": pa.array(key[order]),
            "ts": pa.array(ts.ravel()[order], pa.timestamp("ns")),
            "value": pa.array(rng.normal(100.0, 30.0, key.size)[order]),
        }
    )


def dense_log(n: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.integers(1, 200, n))  # ~100 ns apart
    return pa.table({"ts": pa.array(ts, pa.timestamp("ns")), "value": pa.array(rng.normal(0, 1, n))})


def best(fn, rounds=ROUNDS):
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        del out
    return min(times)


RESULTS = []


def record(case: str, engine: str, seconds: float, threads: int, rows: int):
    RESULTS.append((case, engine, seconds, threads, rows))
    print(
        f"{case:<28} {engine:<46} {seconds:8.3f} s  {rows / seconds / threads / 1e6:8.2f} M events/s/core", flush=True
    )


def rolling_case(table: pa.Table):
    case = "rolling_sum 5m"
    n = table.num_rows
    record(
        case,
        f"arrowfeat af.rolling_sum ({CORES} threads)",
        best(lambda: af.rolling_sum(table["value"], table["ts"], "5m", by=table["key"])),
        CORES,
        n,
    )

    df = pl.from_arrow(table)
    record(
        case,
        f"Polars rolling_sum_by().over(key) ({CORES} threads)",
        best(lambda: df.select(pl.col("value").rolling_sum_by("ts", "5m").over("key")).to_arrow()),
        CORES,
        n,
    )

    ctx = datafusion.SessionContext()
    afd.register(ctx)
    ctx.register_record_batches("t", [table.to_batches()])
    builtin = (
        "SELECT sum(value) OVER (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL '5 minutes' "
        "PRECEDING AND CURRENT ROW) FROM t"
    )
    record(
        case, f"DataFusion RANGE window ({CORES} threads)", best(lambda: ctx.sql(builtin).to_arrow_table()), CORES, n
    )
    ours_sql = "SELECT rolling_sum(value, ts, '5m') OVER (PARTITION BY key ORDER BY ts) FROM t"
    record(
        case,
        f"arrowfeat rolling_sum in DataFusion ({CORES} threads)",
        best(lambda: ctx.sql(ours_sql).to_arrow_table()),
        CORES,
        n,
    )

    con = duckdb.connect()
    con.register("t", table)
    duck = (
        "SELECT sum(value) OVER (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL 5 MINUTE "
        "PRECEDING AND CURRENT ROW) FROM t"
    )
    record(case, f"DuckDB RANGE window ({CORES} threads)", best(lambda: con.sql(duck).fetch_arrow_table()), CORES, n)


def hop_case(table: pa.Table):
    case = "hop sum 10m / 1m"
    n = table.num_rows
    record(
        case,
        f"arrowfeat af.hop_aggregate ({CORES} threads)",
        best(lambda: af.hop_aggregate(table["ts"], table["value"], "10m", "1m", "sum", by=table["key"])),
        CORES,
        n,
    )
    df = pl.from_arrow(table)
    record(
        case,
        f"Polars group_by_dynamic ({CORES} threads)",
        best(
            lambda: (
                df.group_by_dynamic("ts", every="1m", period="10m", group_by="key", closed="left")
                .agg(pl.col("value").sum())
                .to_arrow()
            )
        ),
        CORES,
        n,
    )


def dense_case(table: pa.Table):
    case = "hop sum 500ns / 100ns dense"
    n = table.num_rows
    # One key, cut into pieces of its time range that run on every core.
    record(
        case,
        f"arrowfeat af.hop_aggregate ({CORES} threads, one key)",
        best(lambda: af.hop_aggregate(table["ts"], table["value"], "500ns", "100ns", "sum")),
        CORES,
        n,
    )
    df = pl.from_arrow(table)
    record(
        case,
        f"Polars group_by_dynamic ({CORES} threads)",
        best(
            lambda: (
                df.group_by_dynamic("ts", every="100ns", period="500ns", closed="left")
                .agg(pl.col("value").sum())
                .to_arrow()
            )
        ),
        CORES,
        n,
    )


def session_case(table: pa.Table):
    case = "session sum gap 30m"
    n = table.num_rows
    record(
        case,
        f"arrowfeat af.session_aggregate ({CORES} threads)",
        best(lambda: af.session_aggregate(table["ts"], table["value"], "30m", "sum", by=table["key"])),
        CORES,
        n,
    )

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import arrowfeat.spark as afs

    spark = (
        SparkSession.builder.master(f"local[{CORES}]")
        .appName("arrowfeat-bench-windows")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "8g")
        .config("spark.sql.shuffle.partitions", str(CORES * 2))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    path = "/tmp/arrowfeat-bench-events.parquet"
    import pyarrow.parquet as pq

    pq.write_table(table.set_column(1, "ts", table["ts"].cast(pa.timestamp("us", tz="UTC"))), path)
    sdf = spark.read.parquet(path).cache()
    sdf.count()

    def builtin():
        return (
            sdf.groupBy("key", F.session_window("ts", "30 minutes"))
            .agg(F.sum("value"))
            .write.format("noop")
            .mode("overwrite")
            .save()
        )

    record(case, f"Spark session_window, local[{CORES}]", best(builtin, rounds=2), CORES, n)

    def helper():
        return (
            afs.session_aggregate(sdf, "ts", "value", "30m", "sum", by="key")
            .write.format("noop")
            .mode("overwrite")
            .save()
        )

    record(case, f"arrowfeat afs.session_aggregate in Spark, local[{CORES}]", best(helper, rounds=2), CORES, n)
    spark.stop()


def shuffled_log(n: int, keys: int, skewed: bool, seed: int = 2) -> pa.Table:
    """n events over `keys` keys in random order (not grouped, not in time order); with
    `skewed`, key 0 holds a third of the events and the rest are uniform."""
    rng = np.random.default_rng(seed)
    key = rng.integers(0, keys, n)
    if skewed:
        key[rng.random(n) < 1 / 3] = 0
    ts = 1_700_000_000_000_000_000 + rng.integers(0, 30 * 24 * 60 * MINUTE // keys * 10, n)
    return pa.table(
        {
            "key": pa.array(key, pa.int64()),
            "ts": pa.array(ts, pa.timestamp("ns")),
            "value": pa.array(rng.normal(100.0, 30.0, n)),
        }
    )


def scaling():
    """Each window kernel on 1 thread and on CORES threads, in one process, on shuffled
    events over 5,000 keys, uniform and skewed (one key with a third of the events)."""
    calls = {
        "rolling_sum 5m": lambda t, threads: af.rolling_sum(t["value"], t["ts"], "5m", by=t["key"], threads=threads),
        "hop sum 10m / 1m": lambda t, threads: af.hop_aggregate(
            t["ts"], t["value"], "10m", "1m", "sum", by=t["key"], threads=threads
        ),
        "session sum gap 30m": lambda t, threads: af.session_aggregate(
            t["ts"], t["value"], "30m", "sum", by=t["key"], threads=threads
        ),
    }
    print(f"\n{N:,} shuffled events over 5,000 keys, best of {ROUNDS}, 1 against {CORES} threads", flush=True)
    print(f"\n| case | keys | 1 thread (s) | {CORES} threads (s) | speed-up | skewed ÷ uniform ({CORES} threads) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    tables = {"uniform": shuffled_log(N, 5_000, False), "skewed": shuffled_log(N, 5_000, True)}
    for case, call in calls.items():
        many_uniform = None
        for name, table in tables.items():
            one = best(lambda call=call, table=table: call(table, 1))
            many = best(lambda call=call, table=table: call(table, CORES))
            skew = "" if many_uniform is None else f"{many / many_uniform:.2f}"
            many_uniform = many_uniform or many
            print(f"| {case} | {name} | {one:.3f} | {many:.3f} | {one / many:.2f}x | {skew} |", flush=True)


def against_polars(rounds: int = 7):
    """The two Polars comparisons only (rolling_sum per key, dense one-key hop), each pair
    timed alternately in the same rounds; prints best and median of each side."""
    table = event_log(N, KEYS)
    dense = dense_log(N)
    df, dense_df = pl.from_arrow(table), pl.from_arrow(dense)
    pairs = {
        "rolling_sum 5m per key": (
            lambda: af.rolling_sum(table["value"], table["ts"], "5m", by=table["key"]),
            lambda: df.select(pl.col("value").rolling_sum_by("ts", "5m").over("key")).to_arrow(),
        ),
        "hop sum 500ns/100ns dense": (
            lambda: af.hop_aggregate(dense["ts"], dense["value"], "500ns", "100ns", "sum"),
            lambda: (
                dense_df.group_by_dynamic("ts", every="100ns", period="500ns", closed="left")
                .agg(pl.col("value").sum())
                .to_arrow()
            ),
        ),
    }
    print(f"N = {N:,}, {CORES} cores, {rounds} alternating rounds; polars {pl.__version__}")
    print("| case | arrowfeat best s | Polars best s | Polars / arrowfeat (best) | (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for case, (ours, theirs) in pairs.items():
        ours(), theirs()  # warm-up
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        for _ in range(rounds):
            for side, fn in (("ours", ours), ("theirs", theirs)):
                start = time.perf_counter()
                out = fn()
                times[side].append(time.perf_counter() - start)
                del out
        a, b = sorted(times["ours"]), sorted(times["theirs"])
        print(f"| {case} | {a[0]:.3f} | {b[0]:.3f} | {b[0] / a[0]:.2f}x | {b[rounds // 2] / a[rounds // 2]:.2f}x |")


def limits(rounds: int = 5):
    """What bounds the two Polars ratios still missed: each Polars call beside arrowfeat's
    sum, the same call without float work (int64), without a sum (count), with the rows
    already in key order, and bare memory work of the same size (random gathers, fresh
    writes), all timed alternately in the same rounds; prints the best of each."""
    table = event_log(N, KEYS)
    dense = dense_log(N)
    df, dense_df = pl.from_arrow(table), pl.from_arrow(dense)
    ints = pa.array((np.asarray(table["value"]) * 100).astype(np.int64))
    in_key_order = table.sort_by([("key", "ascending"), ("ts", "ascending")])
    values = np.asarray(table["value"])
    shuffle = np.random.default_rng(3).permutation(N)
    groups = {
        "rolling 5m per key": {
            "Polars rolling_sum_by over key": lambda: df.select(
                pl.col("value").rolling_sum_by("ts", "5m").over("key")
            ).to_arrow(),
            "arrowfeat rolling_sum, float64": lambda: af.rolling_sum(
                table["value"], table["ts"], "5m", by=table["key"]
            ),
            "arrowfeat rolling_sum, int64 (no float work)": lambda: af.rolling_sum(
                ints, table["ts"], "5m", by=table["key"]
            ),
            "arrowfeat rolling_count (no sum at all)": lambda: af.rolling_count(
                table["value"], table["ts"], "5m", by=table["key"]
            ),
            "arrowfeat rolling_sum, float64, rows already in key order": lambda: af.rolling_sum(
                in_key_order["value"], in_key_order["ts"], "5m", by=in_key_order["key"]
            ),
            "numpy: 10M doubles gathered at random, three times": lambda: (
                values[shuffle],
                values[shuffle],
                values[shuffle],
            ),
        },
        "hop 500ns / 100ns, one dense key": {
            "Polars group_by_dynamic sum": lambda: (
                dense_df.group_by_dynamic("ts", every="100ns", period="500ns", closed="left")
                .agg(pl.col("value").sum())
                .to_arrow()
            ),
            "arrowfeat hop sum, float64": lambda: af.hop_aggregate(
                dense["ts"], dense["value"], "500ns", "100ns", "sum"
            ),
            "arrowfeat hop count (no sum)": lambda: af.hop_aggregate(
                dense["ts"], dense["value"], "500ns", "100ns", "count"
            ),
            "numpy: three fresh 10M-element arrays written": lambda: (
                np.full(N, 1, np.int64),
                np.full(N, 2, np.int64),
                np.full(N, 3.0),
            ),
        },
    }
    print(f"N = {N:,}, {CORES} cores, {rounds} alternating rounds, best of each; polars {pl.__version__}")
    for group, calls in groups.items():
        for fn in calls.values():
            fn()  # warm-up
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(rounds):
            for name, fn in calls.items():
                start = time.perf_counter()
                out = fn()
                times[name].append(time.perf_counter() - start)
                del out
        polars = min(next(iter(times.values())))
        print(f"\n| {group} | best s | Polars time / this time |")
        print("| --- | ---: | ---: |")
        for name, t in times.items():
            print(f"| {name} | {min(t):.3f} | {polars / min(t):.2f}x |")


def kernels(rounds: int = 5):
    """arrowfeat alone on the two Polars cases, on 1 thread and on every core: best of
    `rounds` calls each. Run it once per build (swap the extension file in between) for
    an A/B of two builds."""
    table = event_log(N, KEYS)
    dense = dense_log(N)
    calls = {
        "rolling_sum 5m per key": lambda threads: af.rolling_sum(
            table["value"], table["ts"], "5m", by=table["key"], threads=threads
        ),
        "hop sum 500ns/100ns dense": lambda threads: af.hop_aggregate(
            dense["ts"], dense["value"], "500ns", "100ns", "sum", threads=threads
        ),
    }
    print(f"N = {N:,}, best of {rounds}")
    print("| case | threads | best s |")
    print("| --- | ---: | ---: |")
    for case, call in calls.items():
        for threads in (1, CORES):
            seconds = best(lambda call=call, threads=threads: call(threads), rounds)
            print(f"| {case} | {threads} | {seconds:.3f} |", flush=True)


def main():
    if sys.argv[1:] == ["kernels"]:
        kernels()
        return
    if sys.argv[1:] == ["scaling"]:
        scaling()
        return
    if sys.argv[1:] == ["limits"]:
        limits()
        return
    if sys.argv[1:] == ["polars"]:
        against_polars()
        return
    print(
        f"N = {N:,} events, {KEYS} keys, {CORES} cores, best of {ROUNDS}; arrowfeat {af.__version__}, "
        f"polars {pl.__version__}, datafusion {datafusion.__version__}, duckdb {duckdb.__version__}",
        flush=True,
    )
    table = event_log(N, KEYS)
    rolling_case(table)
    hop_case(table)
    dense_case(dense_log(N))
    session_case(table)
    print("\n| case | engine | seconds | time / arrowfeat time | M events/s per core |")
    print("| --- | --- | ---: | ---: | ---: |")
    for case in dict.fromkeys(r[0] for r in RESULTS):
        rows = [r for r in RESULTS if r[0] == case]
        ours = rows[0][2]
        for _, engine, seconds, threads, n in rows:
            ratio = "—" if engine == rows[0][1] else f"{seconds / ours:.1f}x"
            print(f"| {case} | {engine} | {seconds:.3f} | {ratio} | {n / seconds / threads / 1e6:.2f} |")


if __name__ == "__main__":
    main()
