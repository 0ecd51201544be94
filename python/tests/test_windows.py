"""Event-time windows from Python, cross-checked against Polars and (in test_spark_windows)
Spark on the same random data: duplicates, unsorted rows, times before 1970, gaps, nulls."""

import datetime as dt
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowfeat as af

MINUTE = 60_000_000_000


def random_events(n=3000, keys=7, seed=0, nulls=True):
    """Unsorted events; times spread around 1970 (both sides) with duplicates and gaps."""
    rng = np.random.default_rng(seed)
    ts = rng.integers(-30, 90, n) * 20 * 1_000_000_000  # 20-second grid: many duplicates
    ts[rng.random(n) < 0.05] += 10**15  # a far cluster: a huge gap
    key = rng.integers(0, keys, n)
    value = rng.normal(100, 30, n).round(3)
    ivalue = rng.integers(-1000, 1000, n)
    valid = rng.random(n) > (0.1 if nulls else 0.0)
    return pa.table(
        {
            "key": pa.array(key, pa.int64()),
            "ts": pa.array(ts, pa.timestamp("ns", tz="UTC")),
            "value": pa.array(value, mask=~valid),
            "ivalue": pa.array(ivalue, mask=~valid),
        }
    )


@pytest.mark.parametrize("agg", ["sum", "count", "mean", "min", "max"])
@pytest.mark.parametrize("closed", ["right", "left", "both", "none"])
def test_rolling_matches_polars_rolling_by(agg, closed):
    table = random_events(nulls=False)
    period = "5m"
    ours = af.rolling(table["value"], table["ts"], period, agg, by=table["key"], closed=closed)
    df = pl.from_arrow(table).with_row_index("row")
    expr = {
        "sum": pl.col("value").rolling_sum_by("ts", period, closed=closed),
        "count": pl.col("value").is_not_null().cast(pl.Int64).rolling_sum_by("ts", period, closed=closed),
        "mean": pl.col("value").rolling_mean_by("ts", period, closed=closed),
        "min": pl.col("value").rolling_min_by("ts", period, closed=closed),
        "max": pl.col("value").rolling_max_by("ts", period, closed=closed),
    }[agg]
    theirs = df.with_columns(expr.over("key").alias("r")).sort("row")["r"].to_arrow()
    ours_list, theirs_list = ours.to_pylist(), theirs.to_pylist()
    if closed in ("left", "none") and agg == "sum":
        # An empty window (possible when the current time is excluded): Polars sums it to
        # 0.0, arrowfeat gives null as SQL's SUM does (its count gives 0).
        theirs_list = [None if o is None and t == 0 else t for o, t in zip(ours_list, theirs_list, strict=False)]
    assert len(ours_list) == len(theirs_list)
    for i, (a, b) in enumerate(zip(ours_list, theirs_list, strict=False)):
        if a is None or b is None:
            assert a == b, f"row {i}: {a} != {b}"
        else:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-9), f"row {i}"


def test_rolling_integer_sums_are_exact_and_nulls_ignored():
    table = random_events()
    ours = af.rolling_sum(table["ivalue"], table["ts"], dt.timedelta(minutes=5), by=table["key"])
    assert ours.type == pa.int64()
    # Reference: pandas per key, time-based rolling over (t - 5m, t], nulls skipped.
    df = table.to_pandas()
    df["row"] = range(len(df))
    expected = {}
    for _, g in df.groupby("key"):
        g = g.sort_values(["ts", "row"])
        times = g["ts"].astype("int64").to_numpy()
        vals = g["ivalue"].to_numpy()
        for row, t in zip(g["row"], times, strict=False):
            inside = (times > t - 5 * MINUTE) & (times <= t)
            window = [v for v in vals[inside] if not pd.isna(v)]
            expected[row] = int(sum(window)) if window else None
    assert ours.to_pylist() == [expected[i] for i in range(len(df))]


def test_hop_aggregate_matches_polars_group_by_dynamic():
    table = random_events(nulls=False)
    ours = af.hop_aggregate(table["ts"], table["value"], "10m", "1m", "sum", by=table["key"])
    assert ours.column_names == ["key", "window_start", "window_end", "value"]
    df = pl.from_arrow(table).sort("ts")
    theirs = (
        df.group_by_dynamic(
            "ts", every="1m", period="10m", group_by="key", closed="left", label="left", start_by="window"
        )
        .agg(pl.col("value").sum().alias("value"), pl.len().alias("n"))
        .filter(pl.col("n") > 0)
        .sort("key", "ts")
    )
    # Polars starts each key's first window at the truncated first time, so it omits the
    # windows that start before the first event yet hold it; compare the windows it has.
    first = {k: t for k, t in df.group_by("key").agg(pl.col("ts").min()).iter_rows()}
    ours_rows = {
        (k, s): v
        for k, s, v in zip(
            ours["key"].to_pylist(), ours["window_start"].to_pylist(), ours["value"].to_pylist(), strict=False
        )
    }
    theirs_rows = {(k, s): v for k, s, v, _ in theirs.iter_rows()}
    assert set(theirs_rows) == {ks for ks in ours_rows if ks[1] >= _floor_minute(first[ks[0]])}
    for ks, v in theirs_rows.items():
        assert ours_rows[ks] == pytest.approx(v, rel=1e-12), ks
    # Every window in arrowfeat's output holds at least one event (none are empty).
    assert len(ours_rows) == ours.num_rows


def _floor_minute(t):
    return t.replace(second=0, microsecond=0)


def test_session_aggregate_and_session_window():
    table = random_events()
    sessions = af.session_aggregate(table["ts"], table["ivalue"], "2m", "count", by=table["key"])
    per_row = af.session_window(table["ts"], "2m", by=table["key"])
    assert per_row.type == pa.struct([("start", pa.timestamp("ns", tz="UTC")), ("end", pa.timestamp("ns", tz="UTC"))])
    # The per-row sessions grouped and counted give the per-session counts.
    grouped = (
        pa.table(
            {
                "key": table["key"],
                "start": pc.struct_field(per_row, "start"),
                "end": pc.struct_field(per_row, "end"),
                "v": table["ivalue"],
            }
        )
        .group_by(["key", "start", "end"])
        .aggregate([("v", "count")])
        .sort_by([("key", "ascending"), ("start", "ascending")])
    )
    assert grouped["v_count"].to_pylist() == sessions["value"].to_pylist()
    assert grouped["start"].to_pylist() == sessions["session_start"].to_pylist()
    # Sessions of one key never overlap and are at least a gap apart.
    df = sessions.to_pandas()
    for _, g in df.groupby("key"):
        starts, ends = g["session_start"].to_numpy(), g["session_end"].to_numpy()
        assert (starts[1:] > ends[:-1]).all()


def test_polars_rolling_over_dense_nanoseconds():
    # 500 ns / 100 ns hop on dense nanosecond data equals group_by_dynamic here too.
    rng = np.random.default_rng(3)
    ts = np.sort(rng.integers(0, 20_000, 5000))
    table = pa.table({"ts": pa.array(ts, pa.timestamp("ns")), "v": pa.array(rng.integers(0, 10, 5000))})
    ours = af.hop_aggregate(table["ts"], table["v"], "500ns", "100ns", "sum")
    theirs = (
        pl.from_arrow(table)
        .group_by_dynamic("ts", every="100ns", period="500ns", closed="left", start_by="window")
        .agg(pl.col("v").sum())
        .with_columns(pl.col("ts").cast(pl.Int64))
    )
    # Compare as integer nanoseconds (Python datetimes stop at microseconds).
    ours_map = dict(zip(ours["window_start"].cast(pa.int64()).to_pylist(), ours["value"].to_pylist(), strict=False))
    assert theirs.height > 150
    for start, v in theirs.iter_rows():
        assert ours_map[start] == v, start
    # The windows before the first event's truncated time are the only extra ones.
    assert len(ours_map) - theirs.height == 4


def test_inputs_pandas_chunked_and_durations():
    ts = pd.Series(
        pd.to_datetime(["2024-03-01 10:07:42", "1969-12-31 23:59:59.5", None], format="ISO8601"), index=[10, 11, 12]
    )
    out = af.tumble_start(ts, "5m")
    assert isinstance(out, pd.Series) and list(out.index) == [10, 11, 12]
    assert out.iloc[0] == pd.Timestamp("2024-03-01 10:05:00")
    assert pd.isna(out.iloc[2])
    secs = af.tumble_start(ts, np.timedelta64(1, "s"))
    assert secs.iloc[1] == pd.Timestamp("1969-12-31 23:59:59")
    chunked = pa.chunked_array([[0, 5], [10]], pa.int64())
    assert af.rolling_count(chunked, chunked, pd.Timedelta(nanoseconds=6)).to_pylist() == [1, 2, 2]
    assert af.hop_windows(pa.array([1000], pa.int64()), 500, 100).to_pylist() == [[600, 700, 800, 900, 1000]]
    assert af.rolling_sum(pa.array([1, 2]), pa.array([0, 1], pa.timestamp("s")), "1 second").to_pylist() == [1, 2]


def test_errors_name_function_and_argument():
    ts = pa.array([0, 1], pa.int64())
    with pytest.raises(ValueError, match=r"hop_aggregate: argument `step`: expected a step <= size \(5m\), found 10m"):
        af.hop_aggregate(ts, ts, "5m", "10m")
    with pytest.raises(ValueError, match=r"rolling_sum: argument `period`: expected a duration > 0, found 0ns"):
        af.rolling_sum(ts, ts, 0)
    with pytest.raises(ValueError, match=r"session_aggregate: argument `gap`: .*unknown unit `fortnights`"):
        af.session_aggregate(ts, ts, "2 fortnights")
    with pytest.raises(
        ValueError,
        match=r"session_aggregate: argument `agg`: expected one of sum, count, mean, min, max, found 'median'",
    ):
        af.session_aggregate(ts, ts, 5, "median")
    with pytest.raises(
        TypeError,
        match=r"rolling_max: argument `ts`: expected a timestamp \(any unit\), a date or Int64 nanoseconds, found Float64",
    ):
        af.rolling_max(ts, pa.array([0.0, 1.0]), 5)
    with pytest.raises(TypeError, match=r"tumble_start: argument `size`: expected a duration"):
        af.tumble_start(ts, 1.5)
    with pytest.raises(ValueError, match=r"rolling_mean: argument `closed`: expected one of right, left, both, none"):
        af.rolling_mean(ts, ts, 5, closed="middle")
    with pytest.raises(ValueError, match=r"expected 2 rows like argument `ts`, found 3 rows"):
        af.rolling_sum(pa.array([1, 2, 3]), ts, 5)


def test_by_is_keyword_only_and_old_calls_fail_loudly():
    # arrowfeat 0.1 made `by` keyword-only everywhere: calls in the old orders must fail
    # with a message, never run with their arguments in the wrong places.
    ts = pa.array([0, 1], pa.int64())
    keys = pa.array(["a", "b"])
    old_calls = {
        "hop_aggregate": [
            lambda: af.hop_aggregate(keys, ts, ts, "5m", "1m"),  # `ts` would be the keys
            lambda: af.hop_aggregate(None, ts, ts, "5m", "1m", "sum"),
            lambda: af.hop_aggregate(keys, ts, ts, "5m", "1m", "sum", 0),
        ],
        "session_aggregate": [
            lambda: af.session_aggregate(keys, ts, ts, "2m"),
            lambda: af.session_aggregate(keys, ts, ts, "2m", "count"),
        ],
        "rolling": [lambda: af.rolling(ts, ts, 5, "sum", keys)],
        "rolling_sum": [lambda: af.rolling_sum(ts, ts, 5, keys), lambda: af.rolling_sum(ts, ts, 5, None, "left")],
        "rolling_max": [lambda: af.rolling_max(ts, ts, 5, keys)],
        "session_window": [lambda: af.session_window(ts, 5, keys)],
    }
    for name, calls in old_calls.items():
        for call in calls:
            with pytest.raises(
                af.ArrowfeatTypeError,
                match=rf"^{name}: argument `by`: expected `by=` as a keyword argument, found .*; "
                rf"`by` is keyword-only since arrowfeat 0.1: call {name}\(.*by=keys",
            ):
                call()
    # The same calls with keywords run.
    assert af.hop_aggregate(ts, ts, "5m", "1m", by=keys).column_names == ["key", "window_start", "window_end", "value"]
    assert af.session_aggregate(ts, ts, "2m", "count", by=keys)["value"].to_pylist() == [1, 1]
    assert af.rolling_sum(ts, ts, 5, by=keys).to_pylist() == [0, 1]
    assert af.session_window(ts, 5, by=keys).to_pylist() == [{"start": 0, "end": 5}, {"start": 1, "end": 6}]


def test_the_caller_owns_the_threads():
    """threads=None uses the cores (at most 8); any count gives the same result; the Spark
    wrappers pass 1 (Spark runs its workers in parallel already)."""
    n = 300_000
    rng = np.random.default_rng(3)
    keys = pa.array(rng.integers(0, 400, n))
    ts = pa.array(rng.integers(0, 10_000_000, n))
    values = pa.array(rng.random(n))
    one = af.rolling_sum(values, ts, 50_000, by=keys, threads=1)
    assert af.rolling_sum(values, ts, 50_000, by=keys, threads=3).equals(one)
    assert af.rolling_sum(values, ts, 50_000, by=keys).equals(one)
    assert af.hop_aggregate(ts, values, 100_000, 50_000, by=keys, threads=1).equals(
        af.hop_aggregate(ts, values, 100_000, 50_000, by=keys, threads=2)
    )
    assert af.session_aggregate(ts, values, 20_000, by=keys, threads=1).equals(
        af.session_aggregate(ts, values, 20_000, by=keys, threads=2)
    )
    for threads in (0, 2**70):
        with pytest.raises(
            ValueError,
            match=rf"rolling_sum: argument `threads`: expected an int from 1 to 65536 or None, found {threads}",
        ):
            af.rolling_sum(values, ts, 50_000, by=keys, threads=threads)


def test_durations_beyond_int64_nanoseconds_are_refused_not_wrapped() -> None:
    ts = pa.array([0, 1000, 2000], pa.int64())
    values = pa.array([1.0, 1.0, 1.0])
    # numpy's own cast to [ns] wraps this to 384 ns.
    with pytest.raises(af.ArrowfeatValueError, match="int64 range"):
        af.rolling_sum(values, ts, np.timedelta64(18446744073709552, "us"))
    with pytest.raises(af.ArrowfeatValueError, match="int64 range"):
        af.rolling_sum(values, ts, 2**63)
    assert af.rolling_sum(values, ts, np.timedelta64(3, "us")).to_pylist() == [1.0, 2.0, 3.0]
    # No unit means nanoseconds; units below them must make whole nanoseconds.
    assert af.rolling_sum(values, ts, np.timedelta64(3000)).to_pylist() == [1.0, 2.0, 3.0]
    assert af.rolling_sum(values, ts, np.timedelta64(3_000_000, "ps")).to_pylist() == [1.0, 2.0, 3.0]
    with pytest.raises(af.ArrowfeatValueError, match="whole number of nanoseconds"):
        af.rolling_sum(values, ts, np.timedelta64(1500, "ps"))
    with pytest.raises(af.ArrowfeatValueError, match="fixed-length"):
        af.rolling_sum(values, ts, np.timedelta64(1, "M"))


def test_column_names_in_messages_are_escaped_and_cut() -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J" + "B" * 100
    events = pa.table({"k": [1], "t": pa.array([5], pa.int64()), **{f"{hostile}{i}": [1.0] for i in range(200)}})
    spine = pa.table({"k": [1], "t": pa.array([10], pa.int64())})
    with pytest.raises(af.ArrowfeatValueError) as error:
        af.point_in_time(spine, events, by="k", spine_time="t", event_time="t", features=["amount"])
    message = str(error.value)
    assert "\x1b" not in message and "\\u{1b}" in message
    assert len(message) < 2000 and "202 in all" in message
    # GitHub's runner obeys `##[command]` anywhere in a log line: shown, not obeyed, with
    # the same escaping as every Rust message (one definition, in arrowfeat-common).
    commands = pa.table({"k": [1], "t": pa.array([5], pa.int64()), "##[add-mask]x\ufffe": [1.0]})
    with pytest.raises(af.ArrowfeatValueError) as error:
        af.point_in_time(spine, commands, by="k", spine_time="t", event_time="t", features=["amount"])
    message = str(error.value)
    assert "##[" not in message and "#\\u{23}[add-mask]x\\u{fffe}" in message


def test_polars_categorical_keys_are_decoded() -> None:
    # pyarrow cannot cast Polars' Categorical (string_view values) to its value type.
    keys = pl.Series("k", ["a", "b", "a", None], dtype=pl.Categorical)
    out = af.rolling_sum(pl.Series([1.0, 2.0, 3.0, 4.0]), pl.Series([1, 2, 3, 4]), 5, by=keys)
    assert out.to_list() == [1.0, 2.0, 4.0, 4.0]


def _exact_sum(values: np.ndarray) -> float:
    """The correctly rounded sum of floats, from their exact rational sum."""
    from fractions import Fraction

    total = sum((Fraction(float(v)) for v in values), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def test_float_window_sums_are_correctly_rounded() -> None:
    """Each window's float sum is its values' exact sum correctly rounded: across
    magnitudes from subnormal to near f64::MAX, with cancellation, and whatever left the
    window before (rolling and hopping windows alike)."""
    same_time = pa.array(np.zeros(5, np.int64), pa.timestamp("ns"))
    # A compensated (Kahan-Babuska-Neumaier) sum lost the 1e200 here.
    extreme = pa.array([-1e300, -1.7e308, 1.7e308, 1e300, 1e200])
    assert af.rolling_sum(extreme, same_time, "1ns").to_pylist() == [1e200] * 5

    rng = np.random.default_rng(11)
    scales = np.array([5e-324, 1e-300, 1.0, 1e16, 1e150, 1e300, 1.7e305])
    values = (rng.integers(-1000, 1001, 3000) * scales[rng.integers(0, len(scales), 3000)]).astype(np.float64)
    # Two events per time, four nanoseconds per window: eight events per window.
    _check_rolling_and_hop(values, 2, 4, "sum", _exact_sum)


def _check_rolling_and_hop(
    values: np.ndarray, per_time: int, period: int, aggregation: str, reference: Callable[[np.ndarray], float]
) -> None:
    """Every rolling window (one per event) and every hopping window (slide 1 ns) of
    `values`, `per_time` events per nanosecond, equals `reference` of the values in it."""
    ts = pa.array(np.arange(len(values)) // per_time, pa.timestamp("ns"))
    rolled = af.rolling(pa.array(values), ts, np.timedelta64(period, "ns"), aggregation).to_pylist()
    times = np.asarray(ts.cast(pa.int64()))
    for row in range(len(values)):
        inside = (times > times[row] - period) & (times <= times[row])
        assert rolled[row] == reference(values[inside]), row
    hop = af.hop_aggregate(ts, pa.array(values), np.timedelta64(period, "ns"), np.timedelta64(1, "ns"), aggregation)
    starts = hop["window_start"].cast(pa.int64()).to_pylist()
    for start, value in zip(starts, hop["value"].to_pylist(), strict=True):
        inside = (times >= start) & (times < start + period)
        assert value == reference(values[inside]), start


def _exact_mean(values: np.ndarray) -> float:
    """The correctly rounded mean of floats (int / int true division rounds correctly)."""
    from fractions import Fraction

    total = sum((Fraction(float(v)) for v in values), Fraction(0)) / len(values)
    return total.numerator / total.denominator


def test_float_and_integer_window_means_are_rounded_once() -> None:
    """A window's mean is its exact mean rounded once, not the rounded sum divided."""
    # The rounded sum divided by 3 gives -3333333333333332.5.
    three = pa.array([0.3333333333333333, 1.0000000000000002, -1e16])
    same_time = pa.array(np.zeros(3, np.int64), pa.timestamp("ns"))
    assert af.rolling_mean(three, same_time, "1ns").to_pylist() == [-3333333333333333.0] * 3
    # Integers beyond 2^53: their exact mean 2^53 + 1 is a tie that rounds to even, 2^53;
    # the sum converted first (3 * 2^53 + 4) and divided would give 2^53 + 2.
    big = pa.array([2**53 + 1] * 3, pa.int64())
    assert af.rolling_mean(big, same_time, "1ns").to_pylist() == [float(2**53)] * 3

    rng = np.random.default_rng(12)
    scales = np.array([5e-324, 1e-300, 1.0, 1e16, 1e150, 1.7e305])
    values = (rng.integers(-1000, 1001, 2000) * scales[rng.integers(0, len(scales), 2000)]).astype(np.float64)
    _check_rolling_and_hop(values, 3, 3, "mean", _exact_mean)
