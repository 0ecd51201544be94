"""Point-in-time features against a naive reference, real Feast and the other engines."""

from __future__ import annotations

import datetime as dt
import math
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrowfeat as af

BASE = pd.Timestamp("2024-03-01", tz="UTC")


def make_events(seed: int, n: int = 400, keys: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    events = pd.DataFrame(
        {
            "driver_id": rng.integers(0, keys, n),
            "event_timestamp": BASE + pd.to_timedelta(rng.integers(-86_400, 3 * 86_400, n), unit="s"),
            "created": BASE + pd.to_timedelta(rng.integers(0, 3 * 86_400, n), unit="s"),
            "conv_rate": rng.random(n),
            "trips": rng.integers(0, 100, n),
        }
    )
    # Ties on the event time, broken by the created time.
    events.loc[1, ["driver_id", "event_timestamp"]] = events.loc[0, ["driver_id", "event_timestamp"]].to_numpy()
    events.loc[3, ["driver_id", "event_timestamp"]] = events.loc[2, ["driver_id", "event_timestamp"]].to_numpy()
    return events


def make_spine(events: pd.DataFrame, seed: int, n: int = 300, ttl: pd.Timedelta | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    spine = pd.DataFrame(
        {
            "driver_id": rng.integers(0, 7, n),
            "event_timestamp": BASE + pd.to_timedelta(rng.integers(-7_200, 3 * 86_400 + 7_200, n), unit="s"),
        }
    )
    # Labels at exactly an event's time, and (with a TTL) at exactly event time + ttl.
    for i in range(0, 40, 2):
        spine.loc[i, ["driver_id", "event_timestamp"]] = events.loc[i, ["driver_id", "event_timestamp"]].to_numpy()
        if ttl is not None:
            spine.loc[i + 1, "driver_id"] = events.loc[i, "driver_id"]
            spine.loc[i + 1, "event_timestamp"] = events.loc[i, "event_timestamp"] + ttl
    spine["label_id"] = np.arange(n)
    return spine


def naive(spine: pd.DataFrame, events: pd.DataFrame, column: str, how: str, period: pd.Timedelta | None) -> list:
    """For each spine row: `how` of the same key's events in (t - period, t] (all events
    at or before t without a period); as-of = the latest, ties to the latest created."""
    out = []
    for key, t in zip(spine["driver_id"], spine["event_timestamp"], strict=True):
        rows = events[(events["driver_id"] == key) & (events["event_timestamp"] <= t)]
        if period is not None:
            rows = rows[rows["event_timestamp"] > t - period]
        if how == "count":
            out.append(len(rows))
            continue
        if rows.empty:
            out.append(None)
            continue
        ordered = rows.sort_values(["event_timestamp", "created"], kind="stable")
        values = ordered[column]
        out.append(
            {
                "last": values.iloc[-1],
                "first": values.iloc[0],
                "sum": values.sum(),
                "mean": values.mean(),
                "min": values.min(),
                "max": values.max(),
            }[how]
        )
    return out


def same(found: list, expected: list) -> bool:
    for f, e in zip(found, expected, strict=True):
        if e is None or (isinstance(e, float) and math.isnan(e)):
            if not (f is None or (isinstance(f, float) and math.isnan(f))):
                return False
        elif f is None or not math.isclose(float(f), float(e), rel_tol=1e-12, abs_tol=1e-12):
            return False
    return True


def test_every_aggregation_matches_a_naive_reference_for_any_thread_count():
    events = make_events(1)
    spine = make_spine(events, 2)
    features = [af.as_of("conv_rate")]
    for how in ("last", "first", "sum", "count", "mean", "min", "max"):
        for period in ("5m", "6h", "1d"):
            features.append(af.window("trips", how, period))
            features.append(af.window("conv_rate", how, period))
    results = [
        af.point_in_time(
            spine,
            events,
            by="driver_id",
            spine_time="event_timestamp",
            event_time="event_timestamp",
            created="created",
            features=features,
            threads=threads,
        )
        for threads in (1, 2, 3)
    ]
    out = results[0]
    assert isinstance(out, pd.DataFrame)
    assert list(out.index) == list(spine.index)
    for other in results[1:]:
        pd.testing.assert_frame_equal(out, other)
    assert same(list(out["conv_rate"]), naive(spine, events, "conv_rate", "last", None))
    for how in ("last", "first", "sum", "count", "mean", "min", "max"):
        for period in ("5m", "6h", "1d"):
            delta = pd.Timedelta(period.replace("m", "min"))
            for column in ("trips", "conv_rate"):
                name = f"{column}_{how}_{period}"
                found = [None if pd.isna(v) else v for v in out[name]]
                assert same(found, naive(spine, events, column, how, delta)), name


def test_counts_are_zero_without_events_and_types_are_kept():
    events = pa.table({"k": pa.array([1, 1], pa.int64()), "ts": pa.array([10, 20], pa.int64()), "v": [1, 2]})
    spine = pa.table({"k": pa.array([1, 2, 1], pa.int64()), "t": pa.array([15, 15, None], pa.int64())})
    out = af.point_in_time(
        spine,
        events,
        by="k",
        spine_time="t",
        event_time="ts",
        features=["v", ("v", "count", 100), ("v", "sum", "100ns")],
    )
    assert isinstance(out, pa.Table)
    assert out.column_names == ["k", "t", "v", "v_count_100ns", "v_sum_100ns"]
    assert out["v"].to_pylist() == [1, None, None]
    assert out["v_count_100ns"].to_pylist() == [1, 0, None]
    assert out["v_sum_100ns"].type == pa.int64()


def test_several_key_columns_and_polars():
    pl = pytest.importorskip("polars")
    events = pl.DataFrame({"a": [1, 1, 2], "b": ["x", "y", "x"], "ts": [1, 2, 3], "v": [1.0, 2.0, 3.0]})
    spine = pl.DataFrame({"a": [1, 2, 1], "b": ["y", "x", "x"], "ts": [5, 5, 0]})
    out = af.point_in_time(spine, events, by=["a", "b"], spine_time="ts", event_time="ts", features=["v"])
    assert isinstance(out, pl.DataFrame)
    assert out["v"].to_list() == [2.0, 3.0, None]


def test_errors_name_the_argument():
    events = pa.table({"k": [1], "ts": [1], "v": [1.0]})
    spine = pa.table({"k": [1], "ts": [1]})
    with pytest.raises(
        ValueError,
        match=r"point_in_time: argument `spine_time`: expected a column `nope` in the spine, found columns `k`, `ts`",
    ):
        af.point_in_time(spine, events, by="k", spine_time="nope", event_time="ts", features=["v"])
    with pytest.raises(ValueError, match=r"point_in_time: argument `by`: expected a column `k` in the events"):
        af.point_in_time(spine, events.drop_columns(["k"]), by="k", spine_time="ts", event_time="ts", features=["v"])
    with pytest.raises(
        TypeError, match=r"point_in_time: argument `event_time`: expected a column name, found builtins.int"
    ):
        af.point_in_time(spine, events, by="k", spine_time="ts", event_time=1, features=["v"])
    with pytest.raises(ValueError, match=r"argument `features`: column `v`: expected one of last, first, sum"):
        af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=[("v", "median", "1m")])
    with pytest.raises(ValueError, match=r"point_in_time: argument `features`: column `v`: expected a duration > 0"):
        af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=[("v", "sum", "0s")])
    with pytest.raises(ValueError, match=r"point_in_time: argument `features`"):
        af.point_in_time(
            spine, events, by="k", spine_time="ts", event_time="ts", features=[("v", "sum", "1 fortnight")]
        )
    with pytest.raises(TypeError, match=r"argument `spine`: expected a pyarrow Table"):
        af.point_in_time([1, 2], events, by="k", spine_time="ts", event_time="ts", features=["v"])
    # Two spine columns of one name: refused, not one of them read (pyarrow: a bare KeyError).
    twice = pa.Table.from_arrays([pa.array([1]), pa.array([300]), pa.array([100])], names=["k", "ts", "ts"])
    with pytest.raises(
        ValueError,
        match=r"point_in_time: argument `spine_time`: expected a name that the spine gives one column, "
        r"found `ts` naming 2 columns",
    ):
        af.point_in_time(twice, events, by="k", spine_time="ts", event_time="ts", features=["v"])
    with pytest.raises(ValueError, match=r"expected distinct output column names, found `v` twice"):
        af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=["v", ("v", "last", None)])


def test_errors_name_the_function_the_user_called():
    """The Feast path runs the same code but its errors name get_historical_features, from
    the Python checks and from the kernel alike (built from parts, not patched)."""
    from arrowfeat.point_in_time import _point_in_time

    events = pa.table({"k": [1], "ts": [1], "v": [True]})
    spine = pa.table({"k": [1], "ts": [1]})
    with pytest.raises(
        ValueError, match=r"^get_historical_features: argument `by`: expected a column `k` in the events"
    ):
        _point_in_time(
            "get_historical_features",
            spine,
            events.drop_columns(["k"]),
            by="k",
            spine_time="ts",
            event_time="ts",
            features=["v"],
        )
    with pytest.raises(
        TypeError, match=r"^get_historical_features: argument `features`: column `v`: expected numbers for `sum`"
    ):
        _point_in_time(
            "get_historical_features",
            spine,
            events,
            by="k",
            spine_time="ts",
            event_time="ts",
            features=[("v", "sum", None)],
        )


def test_equals_feast_get_historical_features(tmp_path):
    pytest.importorskip("feast")
    from feast import Entity, FeatureStore, FeatureView, Field, FileSource
    from feast.types import Float64, Int64

    ttl = pd.Timedelta(hours=6)
    events = make_events(3)
    events.to_parquet(tmp_path / "events.parquet")
    (tmp_path / "feature_store.yaml").write_text(
        textwrap.dedent(
            """\
            project: pit
            registry: registry.db
            provider: local
            online_store:
                type: sqlite
                path: online.db
            entity_key_serialization_version: 3
            """
        )
    )
    store = FeatureStore(repo_path=str(tmp_path))
    driver = Entity(name="driver", join_keys=["driver_id"])
    source = FileSource(
        path=str(tmp_path / "events.parquet"),
        timestamp_field="event_timestamp",
        created_timestamp_column="created",
    )
    view = FeatureView(
        name="stats",
        entities=[driver],
        ttl=dt.timedelta(hours=6),
        schema=[Field(name="conv_rate", dtype=Float64), Field(name="trips", dtype=Int64)],
        source=source,
    )
    store.apply([driver, view])
    spine = make_spine(events, 4, ttl=ttl)
    # Feast keeps one row per (entity, timestamp) of the entity frame: keep the spine unique.
    spine = spine.drop_duplicates(["driver_id", "event_timestamp"]).reset_index(drop=True)
    expected = (
        store.get_historical_features(entity_df=spine, features=["stats:conv_rate", "stats:trips"])
        .to_df()
        .sort_values("label_id")
        .reset_index(drop=True)
    )
    ours = af.point_in_time(
        spine,
        events,
        by="driver_id",
        spine_time="event_timestamp",
        event_time="event_timestamp",
        created="created",
        ttl=ttl,
        features=["conv_rate", "trips"],
    )
    # Feast's file (dask) offline store drops some entity rows that have no feature row
    # within the TTL; arrowfeat keeps every spine row, with nulls. Those rows must indeed
    # have no visible event.
    dropped = ~ours["label_id"].isin(expected["label_id"])
    assert dropped.sum() < len(ours) // 10
    assert ours.loc[dropped, ["conv_rate", "trips"]].isna().all().all()
    ours = ours[~dropped].sort_values("label_id").reset_index(drop=True)
    assert list(ours["label_id"]) == list(expected["label_id"])
    for column in ("conv_rate", "trips"):
        found = [None if pd.isna(v) else float(v) for v in ours[column]]
        feast_values = [None if pd.isna(v) else float(v) for v in expected[column]]
        mismatches = [i for i, (a, b) in enumerate(zip(found, feast_values, strict=True)) if a != b]
        assert not mismatches, (column, [(spine.iloc[i].to_dict(), found[i], feast_values[i]) for i in mismatches[:5]])
    # The boundaries were exercised: labels at exactly an event's time and at exactly
    # event time + ttl (Feast includes that event: the TTL is inclusive), compared above.
    at_ttl = spine[spine["event_timestamp"].isin(events["event_timestamp"] + ttl)]["label_id"]
    compared = expected[expected["label_id"].isin(at_ttl)]
    assert compared["conv_rate"].notna().sum() >= 5


def test_feast_training_set_equals_get_historical_features(tmp_path):
    pytest.importorskip("feast")
    from feast import Entity, FeatureStore, FeatureView, Field, FileSource
    from feast.types import Float64, Int64

    from arrowfeat.feast import get_historical_features

    (tmp_path / "feature_store.yaml").write_text(
        "project: pit2\nregistry: registry.db\nprovider: local\n"
        "online_store:\n    type: sqlite\n    path: online.db\nentity_key_serialization_version: 3\n"
    )
    stats = make_events(7, n=500)
    # Rows without an event timestamp (keys 5 and 6): Feast's TTL filter keeps them, and
    # they are the answer when no timestamped row is visible.
    untimed = pd.DataFrame(
        {
            "driver_id": [5, 6, 6],
            "event_timestamp": pd.Series([pd.NaT] * 3, dtype=stats["event_timestamp"].dtype),
            "created": [BASE + pd.Timedelta(hours=1), BASE + pd.Timedelta(hours=2), pd.NaT],
            "conv_rate": [0.25, 0.5, 0.75],
            "trips": [7, 8, 9],
        }
    )
    stats = pd.concat([stats, untimed], ignore_index=True)
    stats.to_parquet(tmp_path / "stats.parquet")
    # A second view without created timestamps, another TTL and a renamed column.
    rng = np.random.default_rng(8)
    profile = pd.DataFrame(
        {
            "driver_id": rng.integers(0, 5, 200),
            "ts": BASE + pd.to_timedelta(rng.integers(-86_400, 3 * 86_400, 200), unit="s"),
            "raw_rating": rng.random(200),
        }
    )
    profile.to_parquet(tmp_path / "profile.parquet")
    store = FeatureStore(repo_path=str(tmp_path))
    driver = Entity(name="driver", join_keys=["driver_id"])
    views = [
        FeatureView(
            name="stats",
            entities=[driver],
            ttl=dt.timedelta(hours=6),
            schema=[Field(name="conv_rate", dtype=Float64), Field(name="trips", dtype=Int64)],
            source=FileSource(
                path=str(tmp_path / "stats.parquet"),
                timestamp_field="event_timestamp",
                created_timestamp_column="created",
            ),
        ),
        FeatureView(
            name="profile",
            entities=[driver],
            ttl=dt.timedelta(days=2),
            schema=[Field(name="rating", dtype=Float64)],
            source=FileSource(
                path=str(tmp_path / "profile.parquet"),
                timestamp_field="ts",
                field_mapping={"raw_rating": "rating"},
            ),
        ),
    ]
    store.apply([driver, *views])
    # Keys 0..6: 6 has no rows in either view, 5 none in `profile`.
    spine = make_spine(stats, 9, ttl=pd.Timedelta(hours=6))
    refs = ["stats:conv_rate", "stats:trips", "profile:rating"]

    # Entity rows whose latest visible `stats` row ties on the event timestamp: Feast
    # documents "the latest created timestamp wins", but its file store sorts by created
    # then by event time with an unstable sort, so it may pick either row there.
    # arrowfeat follows the documented rule; those rows are checked against it instead.
    def tied_rows(cutoff: bool) -> set[tuple[int, float]]:
        tied = set()
        for key, t, label in zip(spine["driver_id"], spine["event_timestamp"], spine["label_id"], strict=True):
            rows = stats[
                (stats["driver_id"] == key)
                & (stats["event_timestamp"] <= t)
                & (stats["event_timestamp"] >= t - pd.Timedelta(hours=6))
                & ((stats["created"] <= t) | (not cutoff))
            ]
            if len(rows) and (rows["event_timestamp"] == rows["event_timestamp"].max()).sum() > 1:
                latest = rows[rows["event_timestamp"] == rows["event_timestamp"].max()]
                tied.add((label, float(latest.sort_values("created")["conv_rate"].iloc[-1])))
        return tied

    assert tied_rows(False), "the data has ties to break"
    # (full feature names, Feast's opt-in created-timestamp cutoff)
    for full, cutoff in ((False, False), (True, False), (False, True)):
        tied = tied_rows(cutoff)
        kwargs = {"filter_by_created_timestamp": True} if cutoff else {}
        expected = store.get_historical_features(
            entity_df=spine, features=refs, full_feature_names=full, **kwargs
        ).to_df()
        ours = get_historical_features(store, spine, refs, full_feature_names=full, filter_by_created_timestamp=cutoff)
        if cutoff:
            # The cutoff blanks rows: it must change some values, and keep entity rows.
            plain = get_historical_features(store, spine, refs)
            assert len(ours) == len(plain)
            assert ours["conv_rate"].isna().sum() > plain["conv_rate"].isna().sum()
        expected = expected.sort_values("label_id").reset_index(drop=True)
        ours = ours.sort_values("label_id").reset_index(drop=True)
        assert sorted(ours.columns) == sorted(expected.columns)
        assert list(ours["label_id"]) == list(expected["label_id"]), "the same entity rows"
        conv_rate = "stats__conv_rate" if full else "conv_rate"
        for label, value in tied:
            assert ours.loc[ours["label_id"] == label, conv_rate].iloc[0] == value
        ambiguous = ours["label_id"].isin([label for label, _ in tied])
        for column in expected.columns:
            a = [None if pd.isna(v) else v for v in ours.loc[~ambiguous, column]]
            b = [None if pd.isna(v) else v for v in expected.loc[~ambiguous, column]]
            if column != "event_timestamp":
                a = [None if v is None else float(v) for v in a]
                b = [None if v is None else float(v) for v in b]
            assert a == b, column


def asof_data(seed: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    n, m = 3_000, 1_000
    keys = rng.integers(0, 40, n)
    # Unique times per key (DuckDB and Polars leave ties unspecified), unsorted, before 1970 too.
    times = rng.permutation(np.arange(-n, n))[:n] * 1_000 + keys
    events = pa.table(
        {
            "k": pa.array(keys, pa.int64()),
            "ts": pa.array(times, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "v": pa.array(rng.random(n)),
            "w": pa.array(rng.integers(-5, 5, n), pa.int64()),
        }
    )
    spine_keys = rng.integers(0, 45, m)
    spine_times = rng.integers(-n * 1_100, n * 1_100, m)
    # Labels at exactly an event's time, where `closed` matters.
    spine_keys[:100], spine_times[:100] = keys[:100], times[:100]
    spine = pa.table(
        {
            "k": pa.array(spine_keys, pa.int64()),
            "ts": pa.array(spine_times, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "row": pa.array(np.arange(m)),
        }
    )
    return spine, events


def test_as_of_values_equal_duckdb_asof_join_and_polars_join_asof():
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    spine, events = asof_data(12)
    ours = af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=["v", "w"])
    con = duckdb.connect()
    con.register("spine", spine)
    con.register("events", events)
    duck = con.execute(
        "SELECT s.row, e.v, e.w FROM spine s ASOF LEFT JOIN events e ON s.k = e.k AND s.ts >= e.ts ORDER BY s.row"
    ).fetch_arrow_table()
    assert duck["v"].to_pylist() == ours["v"].to_pylist()
    assert duck["w"].to_pylist() == ours["w"].to_pylist()
    joined = (
        pl.from_arrow(spine)
        .sort("ts")
        .join_asof(pl.from_arrow(events).sort("ts"), on="ts", by="k", strategy="backward")
        .sort("row")
    )
    assert joined["v"].to_list() == ours["v"].to_pylist()
    assert joined["w"].to_list() == ours["w"].to_pylist()
    # Strictly before the label's time: Polars' allow_exact_matches=False.
    strict = af.point_in_time(spine, events, by="k", spine_time="ts", event_time="ts", features=["v"], closed="left")
    joined = (
        pl.from_arrow(spine)
        .sort("ts")
        .join_asof(pl.from_arrow(events).sort("ts"), on="ts", by="k", strategy="backward", allow_exact_matches=False)
        .sort("row")
    )
    assert joined["v"].to_list() == strict["v"].to_pylist()


def test_threads_are_checked_as_in_the_window_functions():
    events = pa.table({"k": [1], "ts": [1], "v": [1.0]})
    spine = pa.table({"k": [1], "ts": [2]})
    kwargs = {"by": "k", "spine_time": "ts", "event_time": "ts", "features": ["v"]}
    assert af.point_in_time(spine, events, threads=3, **kwargs).equals(af.point_in_time(spine, events, **kwargs))
    with pytest.raises(
        ValueError, match=r"point_in_time: argument `threads`: expected an int from 1 to 65536 or None, found 0"
    ):
        af.point_in_time(spine, events, threads=0, **kwargs)


def test_created_cutoff_hides_late_rows_and_names_its_errors():
    spine = pa.table({"k": [1, 1], "t": pa.array([10, 12], pa.timestamp("ns"))})
    events = pa.table(
        {
            "k": [1, 1, 1],
            "t": pa.array([5, 3, 8], pa.timestamp("ns")),
            "created": pa.array([12, 4, None], pa.timestamp("ns")),
            "v": [1, 2, 3],
        }
    )
    common = {"by": "k", "spine_time": "t", "event_time": "t", "created": "created"}
    plain = af.point_in_time(spine, events, features=["v"], **common)
    assert plain.column("v").to_pylist() == [3, 3]
    cut = af.point_in_time(spine, events, features=["v"], created_cutoff=True, **common)
    assert cut.column("v").to_pylist() == [2, 1]
    without = {k: v for k, v in common.items() if k != "created"}
    with pytest.raises(ValueError, match=r"^point_in_time: argument `created_cutoff`: expected a `created` column"):
        af.point_in_time(spine, events, features=["v"], created_cutoff=True, **without)
    with pytest.raises(
        ValueError,
        match=r"argument `features`: expected only as-of values with created_cutoff, found `sum` of `v` over 1h",
    ):
        af.point_in_time(spine, events, features=[("v", "sum", "1h")], created_cutoff=True, **common)


def test_polars_object_columns_are_refused_by_name():
    pl = pytest.importorskip("polars")
    events = pl.DataFrame(
        {"k": [1], "t": [0], "v": [1.0], "payload": [object()]}, schema_overrides={"payload": pl.Object}
    )
    # An unused Object column of the events is fine; the spine comes back whole, so not there.
    out = af.point_in_time(
        pl.DataFrame({"k": [1], "t": [1]}), events, by="k", spine_time="t", event_time="t", features=[("v", "asof")]
    )
    assert out["v"].to_list() == [1.0]
    keys = pl.DataFrame({"k": [object()], "t": [1]}, schema_overrides={"k": pl.Object})
    with pytest.raises(af.ArrowfeatTypeError, match=r"argument `spine`: .*column 'k' of Polars dtype Object"):
        af.point_in_time(keys, events, by="k", spine_time="t", event_time="t", features=[("v", "asof")])
    with pytest.raises(
        af.ArrowfeatTypeError,
        match=r"^point_in_time: argument `features`: .*column 'payload' of `events` of Polars dtype Object",
    ):
        af.point_in_time(
            pl.DataFrame({"k": [1], "t": [1]}),
            events,
            by="k",
            spine_time="t",
            event_time="t",
            features=[("payload", "asof")],
        )


def test_values_keep_their_extension_type() -> None:
    """A uuid (an extension type over 16 bytes) comes back as a uuid from the aggregations
    that return a window's value unchanged; counts stay counts."""
    import uuid

    ids = pa.array([uuid.UUID(int=7).bytes, uuid.UUID(int=9).bytes], pa.uuid())
    events = pa.table({"k": [1, 1], "t": pa.array([1, 6], pa.timestamp("ns")), "u": ids})
    spine = pa.table({"k": [1, 1, 2], "t": pa.array([5, 10, 10], pa.timestamp("ns"))})
    out = af.point_in_time(
        spine,
        events,
        by="k",
        spine_time="t",
        event_time="t",
        features=["u", af.Feature("u", "first", "1h"), af.Feature("u", "count", "1h")],
    )
    assert out.schema.field("u").type == pa.uuid()
    # The "asof" spelling of the as-of value too.
    spelled = af.point_in_time(spine, events, by="k", spine_time="t", event_time="t", features=[("u", "asof")])
    assert spelled.schema.field(spelled.num_columns - 1).type == pa.uuid()
    assert out.schema.field("u_first_1h").type == pa.uuid()
    assert out.schema.field("u_count_1h").type == pa.int64()
    assert out["u"].to_pylist() == [uuid.UUID(int=7), uuid.UUID(int=9), None]
    assert out["u_first_1h"].to_pylist() == [uuid.UUID(int=7), uuid.UUID(int=7), None]
