"""arrowfeat UDFs inside datafusion-python (through datafusion-ffi PyCapsules)."""

import pyarrow as pa
import pytest
from datafusion import SessionContext

import arrowfeat as af
import arrowfeat.datafusion as afd


@pytest.fixture()
def ctx():
    ctx = SessionContext()
    afd.register(ctx)
    return ctx


# Python-only entry points with no SQL function of the same name: in SQL, hop and session
# aggregates are hop_windows / session_window with GROUP BY, and `rolling` is rolling_<agg>.
PYTHON_ONLY = {"hop_aggregate", "session_aggregate", "rolling"}
# Training sets are whole-table operations (`arrowfeat training-set` and the Rust
# DataFrame API in SQL's place), and the rest of __all__ are classes.
NOT_FUNCTIONS = {
    "point_in_time",
    "as_of",
    "window",
    "Feature",
    "ArrowfeatError",
    "ArrowfeatInternalError",
    "ArrowfeatTypeError",
    "ArrowfeatValueError",
}


def test_every_function_is_registered(ctx):
    scalar = {u.name for u in af._native.datafusion_udfs()}
    window = {u.name for u in af._native.datafusion_udwfs()}
    assert sorted(scalar | window) == sorted(set(af.__all__) - PYTHON_ONLY - NOT_FUNCTIONS)
    assert window == {"rolling_sum", "rolling_count", "rolling_mean", "rolling_min", "rolling_max", "session_window"}


def test_window_functions_cross_the_ffi(ctx):
    ts = pa.array([0, 1, 1, 3, 20, 21], pa.int64())
    v = pa.array([1, 2, None, 4, 5, 6], pa.int64())
    k = pa.array(["a", "a", "a", "a", "a", "b"])
    ctx.register_record_batches("w", [[pa.record_batch({"k": k, "ts": ts, "v": v})]])
    out = ctx.sql(
        "SELECT rolling_sum(v, ts, 2) OVER (PARTITION BY k ORDER BY ts) AS s, "
        "rolling_count(v, ts, '2ns', 'left') OVER (PARTITION BY k ORDER BY ts) AS c, "
        "session_window(ts, 10) OVER (PARTITION BY k ORDER BY ts) AS sess "
        "FROM w ORDER BY k, ts, v"
    ).to_arrow_table()
    assert out["s"].to_pylist() == af.rolling_sum(v, ts, 2, by=k).to_pylist()
    assert out["c"].to_pylist() == af.rolling_count(v, ts, 2, by=k, closed="left").to_pylist()
    assert out["sess"].to_pylist() == af.session_window(ts, 10, by=k).to_pylist()
    scalars = ctx.sql(
        "SELECT tumble_start(ts, 2) AS t, hop_windows(ts, 4, 2) AS h FROM w ORDER BY k, ts, v"
    ).to_arrow_table()
    assert scalars["t"].to_pylist() == af.tumble_start(ts, 2).to_pylist()
    assert scalars["h"].to_pylist() == af.hop_windows(ts, 4, 2).to_pylist()
    with pytest.raises(Exception, match="rolling_sum: argument `period`: expected a duration > 0"):
        ctx.sql("SELECT rolling_sum(v, ts, 0) OVER (ORDER BY ts) FROM w").to_arrow_table()


def test_sql_results_equal_in_process(ctx):
    x = pa.array([1.0, None, float("nan"), -4.5, 1e300])
    names = pa.array(["a", None, "c", "", "user_42"])
    ctx.register_record_batches("t", [[pa.record_batch({"x": x, "name": names})]])
    out = ctx.sql(
        "SELECT standard_scale(x, 1.5, 2.0) AS s, hash_bucket(name, 1000) AS b, xxhash64(name, x) AS h, "
        "bucketize(x, [0, 10]) AS k FROM t"
    ).to_arrow_table()
    assert out["s"].to_pylist()[:2] == af.standard_scale(x, 1.5, 2.0).to_pylist()[:2]
    assert out["b"].to_pylist() == af.hash_bucket(names, 1000).to_pylist()
    assert out["h"].to_pylist() == af.xxhash64(names, x).to_pylist()
    assert out["k"].to_pylist() == af.bucketize(x, [0, 10]).to_pylist()


def test_vectors_and_errors(ctx):
    out = ctx.sql("SELECT cosine_similarity([1.0, 0.0], [1.0, 1.0]) AS c, l2_norm([3.0, 4.0]) AS n").to_arrow_table()
    assert out["n"].to_pylist() == [5.0]
    assert abs(out["c"].to_pylist()[0] - 0.7071067811865475) < 1e-15
    with pytest.raises(Exception, match=r"standard_scale: argument `std`: expected a standard deviation > 0, found 0"):
        ctx.sql("SELECT standard_scale(1.0, 0.0, 0.0)").collect()
    with pytest.raises(Exception, match=r"hash_bucket: no signature accepts"):
        ctx.sql("SELECT hash_bucket(1, 'x')").collect()


def test_register_path_reads_hostile_files_with_the_cli_checks(tmp_path):
    """datafusion-python through the FFI table: the errors `arrowfeat sql` gives."""
    import os

    import pyarrow.parquet as pq

    ctx = SessionContext()
    good = tmp_path / "good"
    good.mkdir()
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int64())}), good / "a.parquet")
    pq.write_table(pa.table({"k": pa.array([3], pa.int64()), "extra": [1.5]}), good / "b.parquet")
    (good / "_SUCCESS").write_text("")
    afd.register_path(ctx, "t", str(good))
    assert ctx.sql("SELECT count(*) AS n, count(extra) AS e FROM t").to_pydict() == {"n": [3], "e": [1]}
    # A FIFO: refused, not a reader blocked forever.
    fifo = tmp_path / "events.csv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="expected a regular file or a directory, found a FIFO"):
        afd.register_path(ctx, "f", str(fifo))
    # A corrupt footer in a directory: the file is named.
    bad = tmp_path / "bad"
    bad.mkdir()
    pq.write_table(pa.table({"k": [1]}), bad / "a.parquet")
    (bad / "b.parquet").write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    with pytest.raises(ValueError, match=r"the first file that cannot be read: 'b\.parquet'"):
        afd.register_path(ctx, "b", str(bad))
    # CSV files of one table with two headers: both named.
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    (csvs / "a.csv").write_text("k,v\n1,2\n")
    (csvs / "b.csv").write_text("v,k\n3,4\n")
    with pytest.raises(ValueError, match=r"'b\.csv' has `v` as column 1 where 'a\.csv' has `k` as column 1"):
        afd.register_path(ctx, "c", str(csvs))


def test_point_in_time_through_the_ffi_reads_files_and_says_so_for_tables():
    ctx = SessionContext()
    afd.register(ctx)
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "examples" / "data"
    out = ctx.sql(
        f"SELECT * FROM point_in_time('{data / 'labels.csv'}', '{data / 'events.parquet'}', "
        "'user_id', 'label_ts', 'event_ts', 'amount', 'amount:sum:6h', 'ttl=7d') LIMIT 1"
    ).to_pydict()
    assert out["user_id"] == ["user_40"] and out["amount"] == [25.11] and out["amount_sum_6h"] == [281.5]
    ctx.register_record_batches("labels", [[pa.record_batch({"k": [1]})]])
    with pytest.raises(Exception, match="tables registered in the session are not visible to it"):
        ctx.sql("SELECT * FROM point_in_time('labels', 'events', 'k', 't', 't', 'v')").to_arrow_table()
