"""Point-in-time benchmarks, side by side in one run: arrowfeat's point-in-time kernel
against DuckDB's ASOF JOIN and RANGE windows, Polars' join_asof, and Feast's own
get_historical_features (file offline store).

    make bench-point-in-time   (or: .venv/bin/python python/benchmarks/bench_point_in_time.py)

Data: EVENTS events (default 10M) over KEYS keys (10,000) drawn uniformly, or from a
Zipf(1.2) distribution with ARROWFEAT_BENCH_KEYS=zipf (skewed: the largest key holds a
large share of all events), times random
over 30 days, shuffled; a spine of SPINE labels (default 1M) with keys from the same
distribution and random times, unsorted. Every timing is the best of ROUNDS warm runs of
the whole call, result materialized (Arrow, or pandas for Feast). Sorts the other engines
need are inside their timings. "events/s per core" divides events by seconds and by the
cores the engine may use (all of them for every engine here).

A DuckDB query that runs past ARROWFEAT_BENCH_TIMEOUT seconds (default 900) is interrupted
and reported as "> TIMEOUT s" (DataFusion's runs in a child process, killed then); a SQL run
past 30 s is not repeated.

Feast runs on its own smaller repo (FEAST_EVENTS events, FEAST_LABELS labels: its pandas
join does not scale to the main data in reasonable time), against
`arrowfeat.feast.get_historical_features` on the same repo, and their outputs are checked
equal (rows with ties on the event time excepted, see docs/point-in-time.md).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

import arrowfeat as af

EVENTS = int(os.environ.get("ARROWFEAT_BENCH_EVENTS", 10_000_000))
SPINE = int(os.environ.get("ARROWFEAT_BENCH_SPINE", 1_000_000))
KEYS = 10_000
ROUNDS = int(os.environ.get("ARROWFEAT_BENCH_ROUNDS", 3))
FEAST_EVENTS = int(os.environ.get("ARROWFEAT_BENCH_FEAST_EVENTS", 1_000_000))
FEAST_LABELS = int(os.environ.get("ARROWFEAT_BENCH_FEAST_LABELS", 100_000))
KEY_DISTRIBUTION = os.environ.get("ARROWFEAT_BENCH_KEYS", "uniform")
TIMEOUT = float(os.environ.get("ARROWFEAT_BENCH_TIMEOUT", 900))
CORES = os.cpu_count() or 1
SECOND = 1_000_000
DAY = 86_400 * SECOND


def zipf_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.zipf(1.2, n) - 1) % KEYS


def keys(rng: np.random.Generator, n: int) -> np.ndarray:
    if KEY_DISTRIBUTION == "zipf":
        return zipf_keys(rng, n)
    if KEY_DISTRIBUTION != "uniform":
        raise SystemExit(f"ARROWFEAT_BENCH_KEYS: expected uniform or zipf, found {KEY_DISTRIBUTION!r}")
    return rng.integers(0, KEYS, n)


def data(seed: int = 0) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    start = 1_700_000_000 * SECOND
    events = pa.table(
        {
            "k": pa.array(keys(rng, EVENTS), pa.int64()),
            "ts": pa.array(start + rng.integers(0, 30 * DAY, EVENTS), pa.int64()).cast(pa.timestamp("us")),
            "a": pa.array(rng.normal(100.0, 30.0, EVENTS)),
            "b": pa.array(rng.integers(0, 1_000, EVENTS), pa.int64()),
            "c": pa.array(rng.random(EVENTS)),
        }
    )
    spine = pa.table(
        {
            "k": pa.array(keys(rng, SPINE), pa.int64()),
            "ts": pa.array(start + rng.integers(0, 30 * DAY, SPINE), pa.int64()).cast(pa.timestamp("us")),
            "row": pa.array(np.arange(SPINE)),
        }
    )
    return spine, events


def best(f, rounds: int = ROUNDS) -> tuple[float, object]:
    out = None
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def timed_sql(run, interrupt, interrupted: type[BaseException]) -> tuple[float | None, object]:
    """Best of ROUNDS runs of `run()` (one if it takes over 30 s), or None if a run passes
    TIMEOUT, when `interrupt()` stops it."""
    times: list[float] = []
    out = None
    for _ in range(ROUNDS):
        timer = threading.Timer(TIMEOUT, interrupt)
        timer.start()
        t = time.perf_counter()
        try:
            out = run()
        except interrupted:
            return None, None
        finally:
            timer.cancel()
        times.append(time.perf_counter() - t)
        if times[-1] > 30:
            break
    return min(times), out


def duckdb_tables(spine: pa.Table, events: pa.Table) -> tuple[duckdb.DuckDBPyConnection, float]:
    """A connection holding the two tables as DuckDB tables, and the seconds the copy took.
    Queried as registered Arrow views instead, DuckDB's ASOF JOIN was 55x slower (200k
    events, 2026-12-03), so the engine is timed on its own storage and the load is
    reported beside it."""
    con = duckdb.connect()
    con.register("spine_arrow", spine)
    con.register("events_arrow", events)
    t = time.perf_counter()
    con.execute("CREATE TABLE spine AS SELECT * FROM spine_arrow")
    con.execute("CREATE TABLE events AS SELECT * FROM events_arrow")
    return con, time.perf_counter() - t


def timed_duckdb(con: duckdb.DuckDBPyConnection, query: str) -> tuple[float | None, object]:
    return timed_sql(lambda: con.execute(query).fetch_arrow_table(), con.interrupt, duckdb.InterruptException)


def table(title: str, rows: list[tuple[str, float | None]], events: int) -> None:
    """Rows of (engine, seconds or None when stopped at TIMEOUT); the first is arrowfeat,
    the reference of the ratios."""
    reference = rows[0][1]
    assert reference is not None
    print(f"\n{title}\n")
    print("| engine | time | arrowfeat is faster by | events/s per core |")
    print("| --- | --- | --- | --- |")
    for name, seconds in rows:
        if seconds is None:
            print(
                f"| {name} | > {TIMEOUT:.0f} s (stopped) | > {TIMEOUT / reference:.0f}x | "
                f"< {events / TIMEOUT / CORES / 1e6:.2f}M |"
            )
        else:
            print(f"| {name} | {seconds:.3f} s | {seconds / reference:.2f}x | {events / seconds / CORES / 1e6:.1f}M |")


def as_of(spine: pa.Table, events: pa.Table) -> None:
    features = [af.as_of("a"), af.as_of("b"), af.as_of("c")]
    ours, result = best(
        lambda: af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=features)
    )
    con, load = duckdb_tables(spine, events)
    duck, duck_out = timed_duckdb(
        con, "SELECT s.row, e.a, e.b, e.c FROM spine s ASOF LEFT JOIN events e ON s.k = e.k AND s.ts >= e.ts"
    )
    spine_pl, events_pl = pl.from_arrow(spine), pl.from_arrow(events)
    polars, _ = best(
        lambda: spine_pl.sort("ts").join_asof(events_pl.sort("ts"), on="ts", by="k", strategy="backward").to_arrow()
    )
    # The same values (DuckDB returns rows in another order; ties on an event time may
    # go either way there).
    if duck_out is None:
        compared = "DuckDB stopped, not compared"
    else:
        check = duck_out.sort_by("row")
        x = np.array(check["a"].to_pylist(), dtype=float)
        y = np.array(result["a"].to_pylist(), dtype=float)
        equal = np.mean((x == y) | (np.isnan(x) & np.isnan(y)))
        nulls = check["a"].null_count == result["a"].null_count
        compared = f"equal to DuckDB: {equal:.4%} of values, the same {check['a'].null_count:,} nulls: {nulls}"
    table(
        f"As-of value of 3 columns, {SPINE:,} labels, {EVENTS:,} events, {KEY_DISTRIBUTION} keys ({compared})",
        [
            ("arrowfeat point_in_time", ours),
            (f"DuckDB ASOF JOIN (tables loaded first, in {load:.2f} s)", duck),
            ("Polars join_asof (with sorts)", polars),
        ],
        EVENTS,
    )


def windows(spine: pa.Table, events: pa.Table) -> None:
    periods = ["1h", "1d", "7d", "30d"]
    features = [af.window(col, agg, p) for p in periods for col, agg in (("a", "sum"), ("b", "mean"), ("c", "max"))]
    ours, _ = best(lambda: af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=features))
    con, load = duckdb_tables(spine, events)
    seconds = {"1h": 3_600, "1d": 86_400, "7d": 7 * 86_400, "30d": 30 * 86_400}
    # (t - period, t] on microsecond times: period - 1 microsecond PRECEDING, both ends in.
    duck_aggregates = ",\n".join(
        f"{agg}({col}) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL ({seconds[p] * SECOND - 1}) "
        f"MICROSECOND PRECEDING AND CURRENT ROW) AS {col}_{agg}_{p}"
        for p in periods
        for col, agg in (("a", "sum"), ("b", "avg"), ("c", "max"))
    )
    fusion_aggregates = duck_aggregates.replace("INTERVAL (", "INTERVAL '").replace(") MICROSECOND", " microseconds'")
    # The spine unioned into the events (null values; RANGE's CURRENT ROW takes the events
    # of the same time as peers), RANGE windows over the union, then the spine's rows kept.
    union = """
        SELECT k, ts, a, b, c, CAST(NULL AS BIGINT) AS row FROM events
        UNION ALL
        SELECT k, ts, CAST(NULL AS DOUBLE), CAST(NULL AS BIGINT), CAST(NULL AS DOUBLE), row FROM spine
    """
    duck, _ = timed_duckdb(con, f"SELECT * FROM (SELECT row, {duck_aggregates} FROM ({union})) WHERE row IS NOT NULL")
    fusion = datafusion_sql(
        spine, events, f"SELECT * FROM (SELECT row, {fusion_aggregates} FROM ({union})) WHERE row IS NOT NULL"
    )
    table(
        f"4 windows x 3 aggregates at each label, {SPINE:,} labels, {EVENTS:,} events, {KEY_DISTRIBUTION} keys",
        [
            ("arrowfeat point_in_time", ours),
            (f"DuckDB RANGE windows over spine UNION events (tables loaded first, in {load:.2f} s)", duck),
            ("DataFusion (datafusion-python) RANGE windows over spine UNION events", fusion),
        ],
        EVENTS,
    )


def datafusion_sql(spine: pa.Table, events: pa.Table, query: str) -> float | None:
    """DataFusion's time for `query` over the two tables, all cores (its default), or None
    past TIMEOUT. datafusion-python has no interrupt, so the query runs in a forked child
    process (which shares the tables copy-on-write) that is killed at the timeout."""
    import multiprocessing

    def child(conn) -> None:
        import datafusion

        ctx = datafusion.SessionContext()
        ctx.register_record_batches("spine", [spine.to_batches()])
        ctx.register_record_batches("events", [events.to_batches()])
        seconds, _ = timed_sql(lambda: ctx.sql(query).to_arrow_table(), lambda: None, KeyboardInterrupt)
        conn.send(seconds)

    fork = multiprocessing.get_context("fork")
    receive, send = fork.Pipe(duplex=False)
    process = fork.Process(target=child, args=(send,))
    process.start()
    # Every round may take up to TIMEOUT; the first one past 30 s is the last.
    seconds = receive.recv() if receive.poll(TIMEOUT * ROUNDS) else None
    process.kill()
    process.join()
    return seconds


def rss(field: str) -> int:
    """A line of /proc/self/status (VmRSS, VmHWM) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"/proc/self/status has no {field}")


MEMORY_CASES = {
    "as-of value of 3 columns": [af.as_of(c) for c in "abc"],
    "as-of and 3 windows": [
        af.as_of("a"),
        af.window("a", "sum", "1d"),
        af.window("b", "count", "7d"),
        af.window("c", "max", "1h"),
    ],
}


def memory(spine: pa.Table | None = None, events: pa.Table | None = None, case: str | None = None) -> None:
    """Peak RSS of one call, each case in a fresh process (memory a first call freed stays
    with the allocator and would hide a second call's): the peak is reset first (Linux
    clear_refs 5), so the data generation's own peak does not count either."""
    if case is None:
        import subprocess

        for name in MEMORY_CASES:
            subprocess.run([sys.executable, __file__, "memory-case", name], check=True)
        return
    assert spine is not None and events is not None
    before = rss("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    out = af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=MEMORY_CASES[case])
    growth = rss("VmHWM") - before
    inputs = spine.nbytes + events.nbytes
    arrow = inputs + out.nbytes
    print(
        f"Peak RSS of one call ({case}, fresh process): {growth / 2**20:.0f} MiB above the RSS before it; inputs "
        f"{inputs / 2**20:.0f} MiB + output {out.nbytes / 2**20:.0f} MiB = {arrow / 2**20:.0f} MiB of Arrow; "
        f"(inputs + growth) / (inputs + output) = {(inputs + growth) / arrow:.2f} (goal <= 2)",
        flush=True,
    )


def feast_repo(root: Path) -> tuple[object, object]:
    import pandas as pd
    from feast import Entity, FeatureStore, FeatureView, Field, FileSource
    from feast.types import Float64, Int64

    rng = np.random.default_rng(3)
    start = pd.Timestamp("2024-03-01", tz="UTC")
    events = pd.DataFrame(
        {
            "driver_id": keys(rng, FEAST_EVENTS),
            "event_timestamp": start + pd.to_timedelta(rng.integers(0, 30 * 86_400, FEAST_EVENTS), unit="s"),
            "created": start + pd.to_timedelta(rng.integers(0, 30 * 86_400, FEAST_EVENTS), unit="s"),
            "conv_rate": rng.random(FEAST_EVENTS),
            "trips": rng.integers(0, 100, FEAST_EVENTS),
        }
    )
    events.to_parquet(root / "events.parquet")
    (root / "feature_store.yaml").write_text(
        "project: bench\nregistry: registry.db\nprovider: local\n"
        "online_store:\n    type: sqlite\n    path: online.db\nentity_key_serialization_version: 3\n"
    )
    store = FeatureStore(repo_path=str(root))
    driver = Entity(name="driver", join_keys=["driver_id"])
    view = FeatureView(
        name="stats",
        entities=[driver],
        ttl=dt.timedelta(days=2),
        schema=[Field(name="conv_rate", dtype=Float64), Field(name="trips", dtype=Int64)],
        source=FileSource(
            path=str(root / "events.parquet"), timestamp_field="event_timestamp", created_timestamp_column="created"
        ),
    )
    store.apply([driver, view])
    labels = pd.DataFrame(
        {
            "driver_id": keys(rng, FEAST_LABELS),
            "event_timestamp": start + pd.to_timedelta(rng.integers(0, 30 * 86_400, FEAST_LABELS), unit="s"),
            "label_id": np.arange(FEAST_LABELS),
        }
    ).drop_duplicates(["driver_id", "event_timestamp"])
    return store, labels


def feast() -> None:
    from arrowfeat.feast import get_historical_features

    refs = ["stats:conv_rate", "stats:trips"]
    with tempfile.TemporaryDirectory() as tmp:
        store, labels = feast_repo(Path(tmp))
        ours, ours_out = best(lambda: get_historical_features(store, labels, refs))
        try:
            theirs, theirs_out = best(
                lambda: store.get_historical_features(entity_df=labels, features=refs).to_df(), rounds=1
            )
        except MemoryError as e:
            # Its merge materializes every (label, event) pair of a key: skewed keys
            # make that quadratic (4.4 billion rows for Zipf keys at 100k x 1M).
            print(f"\nFeast get_historical_features ran out of memory ({KEY_DISTRIBUTION} keys): {e}")
            print(f"arrowfeat.feast.get_historical_features: {ours:.3f} s")
            return
    a = ours_out.sort_values("label_id").reset_index(drop=True)
    b = theirs_out.sort_values("label_id").reset_index(drop=True)
    same_rows = list(a["label_id"]) == list(b["label_id"])
    equal = (a["trips"].fillna(-1).astype(float) == b["trips"].fillna(-1).astype(float)).mean() if same_rows else 0
    table(
        f"Feast training set, {len(labels):,} labels, {FEAST_EVENTS:,} events (same rows: {same_rows}; "
        f"equal `trips` values: {equal:.2%}, the rest ties on the event time)",
        [("arrowfeat.feast.get_historical_features", ours), ("Feast get_historical_features", theirs)],
        FEAST_EVENTS,
    )


def main() -> None:
    what = sys.argv[1:] or ["as_of", "windows", "feast"]
    if what == ["feast"]:
        feast()
        return
    if "memory" in what:
        memory()
        what = [w for w in what if w != "memory"]
        if not what:
            return
    spine, events = data()
    if what[0] == "memory-case":
        memory(spine, events, what[1])
        return
    print(f"{CORES} cores; best of {ROUNDS} runs")
    if "as_of" in what:
        as_of(spine, events)
    if "windows" in what:
        windows(spine, events)
    if "feast" in what:
        feast()


if __name__ == "__main__":
    main()
