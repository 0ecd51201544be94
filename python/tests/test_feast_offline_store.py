"""Training sets against the real Feast: the offline store
``arrowfeat.feast.ArrowfeatOfflineStore`` and ``arrowfeat.feast.get_historical_features``
must return what Feast's own file offline store returns (``type: file``) for the same
feature repo: the same rows, columns, types and values.

Each test writes one feature repo with two configurations that share its registry and
Parquet files: ``feature_store.yaml`` (``type: file``, Feast's dask store) and
``arrowfeat.yaml`` (``type: arrowfeat.feast.ArrowfeatOfflineStore``)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

feast = pytest.importorskip("feast")

from feast import Entity, FeatureService, FeatureStore, FeatureView, Field, FileSource  # noqa: E402
from feast.types import Float32, Float64, Int32, Int64  # noqa: E402
from feast.value_type import ValueType  # noqa: E402

from arrowfeat.errors import ArrowfeatKeyError, ArrowfeatTypeError  # noqa: E402
from arrowfeat.feast import get_historical_features  # noqa: E402

BASE = pd.Timestamp("2024-03-01", tz="UTC")
HOUR = pd.Timedelta(hours=1)

CONFIG = """\
project: {project}
registry: registry.db
provider: local
online_store:
    type: sqlite
    path: {online}
offline_store:
    type: {offline}
entity_key_serialization_version: 3
"""


def stores(root: Path, objects: list[Any], project: str = "afs") -> tuple[Any, Any]:
    """Feast's file store and the arrowfeat store over one repo, after `apply(objects)`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "feature_store.yaml").write_text(CONFIG.format(project=project, online="online_file.db", offline="file"))
    (root / "arrowfeat.yaml").write_text(
        CONFIG.format(project=project, online="online_arrowfeat.db", offline="arrowfeat.feast.ArrowfeatOfflineStore")
    )
    file_store = FeatureStore(repo_path=str(root))
    ours = FeatureStore(repo_path=str(root), fs_yaml_file=root / "arrowfeat.yaml")
    for store in (file_store, ours):  # the same registry; each its own online store
        store.apply(objects)
    return file_store, ours


def assert_same(ours: pd.DataFrame, theirs: pd.DataFrame, by: list[str]) -> None:
    """Equal frames, up to row order (Feast's file store returns its rows in the order
    its sorts leave them; arrowfeat returns them in entity_df order)."""
    assert list(ours.columns) == list(theirs.columns)
    ours = ours.sort_values(by, kind="stable").reset_index(drop=True)
    theirs = theirs.sort_values(by, kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(ours, theirs)


def unique_times(rng: np.random.Generator, n: int, low: int, high: int) -> pd.Series:
    """`n` distinct times (seconds from BASE in [low, high)): no ties on the event time,
    where Feast's file store breaks ties by an unstable sort."""
    return pd.Series(BASE + pd.to_timedelta(rng.choice(np.arange(low, high), n, replace=False), unit="s"))


def driver_repo(root: Path) -> tuple[Any, Any, pd.DataFrame]:
    """Three views, one of them without entities, and an entity_df (in another time
    zone than UTC, with a second datetime column) that hits the TTL boundaries."""
    rng = np.random.default_rng(11)
    data = root / "data"
    data.mkdir(parents=True)
    stats = pd.DataFrame(
        {
            "driver_id": rng.integers(0, 6, 400),
            "event_timestamp": unique_times(rng, 400, -86_400, 3 * 86_400),
            "conv_rate": rng.random(400),
            "trips": rng.integers(0, 100, 400),
        }
    )
    stats["created"] = stats["event_timestamp"] + pd.to_timedelta(rng.integers(-3_600, 4 * 3_600, 400), unit="s")
    stats.to_parquet(data / "stats.parquet")
    profile = pd.DataFrame(
        {
            "driver_id": rng.integers(0, 5, 150),
            "ts": unique_times(rng, 150, -2 * 86_400, 3 * 86_400),
            "raw_rating": rng.random(150),
        }
    )
    profile.to_parquet(data / "profile.parquet")
    weather = pd.DataFrame(
        {
            "event_timestamp": unique_times(rng, 60, -86_400, 3 * 86_400),
            "temp": rng.normal(10, 5, 60),
            "code": rng.integers(0, 9, 60).astype(np.int32),
        }
    )
    weather["created"] = weather["event_timestamp"] + pd.to_timedelta(rng.integers(0, 2 * 3_600, 60), unit="s")
    weather.to_parquet(data / "weather.parquet")

    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    views = [
        FeatureView(
            name="stats",
            entities=[driver],
            ttl=dt.timedelta(hours=6),
            schema=[Field(name="conv_rate", dtype=Float64), Field(name="trips", dtype=Int64)],
            source=FileSource(
                path=str(data / "stats.parquet"), timestamp_field="event_timestamp", created_timestamp_column="created"
            ),
        ),
        FeatureView(
            name="profile",
            entities=[driver],
            ttl=dt.timedelta(days=2),
            schema=[Field(name="rating", dtype=Float64)],
            source=FileSource(
                path=str(data / "profile.parquet"), timestamp_field="ts", field_mapping={"raw_rating": "rating"}
            ),
        ),
        FeatureView(
            name="weather",
            entities=[],
            ttl=dt.timedelta(hours=3),
            schema=[Field(name="temp", dtype=Float64), Field(name="code", dtype=Int32)],
            source=FileSource(
                path=str(data / "weather.parquet"),
                timestamp_field="event_timestamp",
                created_timestamp_column="created",
            ),
        ),
    ]
    file_store, ours = stores(root, [driver, *views])

    n = 400
    times = pd.Series(BASE + pd.to_timedelta(rng.integers(-7_200, 3 * 86_400 + 7_200, n), unit="s"))
    keys = rng.integers(0, 8, n)  # 6 and 7 have no rows in any view, 5 none in `profile`
    # Labels at exactly an event's time and at exactly event time + TTL (both visible).
    for i in range(0, 60, 3):
        keys[i], times[i] = stats.loc[i, "driver_id"], stats.loc[i, "event_timestamp"]
        keys[i + 1], times[i + 1] = stats.loc[i, "driver_id"], stats.loc[i, "event_timestamp"] + 6 * HOUR
        times[i + 2] = weather.loc[i // 3, "event_timestamp"] + 3 * HOUR
    entity_df = pd.DataFrame({"driver_id": keys, "event_timestamp": times.dt.tz_convert("Europe/Paris")})
    # Feast keeps one entity row per (keys, timestamp): keep them unique, so that no row
    # depends on which of two equal rows Feast's sorts leave last.
    entity_df = entity_df.drop_duplicates(["driver_id", "event_timestamp"]).reset_index(drop=True)
    entity_df["label_id"] = np.arange(len(entity_df))
    entity_df["label_time"] = entity_df["event_timestamp"].dt.tz_convert("America/New_York")
    return file_store, ours, entity_df


def test_the_store_is_loaded_from_feature_store_yaml(tmp_path):
    from arrowfeat.feast import ArrowfeatOfflineStore, ArrowfeatOfflineStoreConfig

    _, ours, _ = driver_repo(tmp_path)
    assert isinstance(ours.config.offline_store, ArrowfeatOfflineStoreConfig)
    assert ours.config.offline_store.type == "arrowfeat.feast.ArrowfeatOfflineStore"
    assert isinstance(ours._get_provider().offline_store, ArrowfeatOfflineStore)
    assert ArrowfeatOfflineStoreConfig().type == "arrowfeat.feast.ArrowfeatOfflineStore"


@pytest.mark.parametrize(
    ("full_feature_names", "filter_by_created_timestamp"), [(False, False), (True, False), (False, True)]
)
def test_equals_the_file_store(tmp_path, full_feature_names, filter_by_created_timestamp):
    """TTLs, created timestamps, a field mapping, keys without rows, a view without
    entities between two with, an entity_df in another time zone: the store, its
    to_arrow() and arrowfeat.feast.get_historical_features all equal the file store."""
    file_store, ours, entity_df = driver_repo(tmp_path)
    refs = ["stats:conv_rate", "stats:trips", "weather:temp", "profile:rating", "weather:code"]
    kwargs: dict[str, Any] = {"full_feature_names": full_feature_names}
    if filter_by_created_timestamp:
        kwargs["filter_by_created_timestamp"] = True
    job = file_store.get_historical_features(entity_df=entity_df, features=refs, **kwargs)
    expected = job.to_df()
    # The data exercise what they should: rows dropped by the TTL, nulls, values.
    assert 0.5 * len(entity_df) < len(expected) < len(entity_df)
    temp = "weather__temp" if full_feature_names else "temp"
    assert expected[temp].notna().sum() > 100 and expected.isna().any().any()

    our_job = ours.get_historical_features(entity_df=entity_df, features=refs, **kwargs)
    assert_same(our_job.to_df(), expected, ["label_id"])
    assert_same(our_job.to_arrow().to_pandas(), job.to_arrow().to_pandas(), ["label_id"])
    assert our_job.to_arrow().schema == job.to_arrow().schema
    assert our_job.full_feature_names == full_feature_names
    assert our_job.metadata.features == job.metadata.features
    assert sorted(our_job.metadata.keys) == sorted(job.metadata.keys)
    assert our_job.metadata.min_event_timestamp == job.metadata.min_event_timestamp
    assert our_job.metadata.max_event_timestamp == job.metadata.max_event_timestamp
    standalone = get_historical_features(file_store, entity_df, refs, **kwargs)
    assert_same(standalone, expected, ["label_id"])


def test_a_view_without_entities_listed_first_keeps_one_row_per_timestamp(tmp_path):
    """Feast removes repeated entity rows after each view, on the join keys of the views
    so far: after a first view without entities, rows sharing a timestamp are one."""
    (tmp_path / "data").mkdir(parents=True)
    weather = pd.DataFrame({"event_timestamp": [BASE, BASE + HOUR, BASE + 3 * HOUR], "temp": [1.0, 2.0, 4.0]})
    weather.to_parquet(tmp_path / "data" / "weather.parquet")
    rates = pd.DataFrame({"driver_id": [1, 2, 3], "event_timestamp": [BASE] * 3, "rate": [10.0, 20.0, 30.0]})
    rates.to_parquet(tmp_path / "data" / "rates.parquet")
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    weather_view = FeatureView(
        name="weather",
        entities=[],
        ttl=dt.timedelta(hours=2),
        schema=[Field(name="temp", dtype=Float64)],
        source=FileSource(path=str(tmp_path / "data" / "weather.parquet"), timestamp_field="event_timestamp"),
    )
    rates_view = FeatureView(
        name="rates",
        entities=[driver],
        ttl=dt.timedelta(hours=2),
        schema=[Field(name="rate", dtype=Float64)],
        source=FileSource(path=str(tmp_path / "data" / "rates.parquet"), timestamp_field="event_timestamp"),
    )
    file_store, ours = stores(tmp_path, [driver, weather_view, rates_view])
    entity_df = pd.DataFrame(
        {
            "driver_id": [1, 2, 3, 4, 1, 2],
            # Before every weather row and 4h after the last one: dropped (none visible).
            "event_timestamp": [BASE + HOUR / 2] * 4 + [BASE - HOUR, BASE + 7 * HOUR],
            "label": [0, 1, 2, 3, 4, 5],
        }
    )
    for refs, rows in ((["weather:temp", "rates:rate"], 1), (["rates:rate", "weather:temp"], 4)):
        expected = file_store.get_historical_features(entity_df=entity_df, features=refs).to_df()
        assert len(expected) == rows
        assert_same(ours.get_historical_features(entity_df=entity_df, features=refs).to_df(), expected, ["label"])
        assert_same(get_historical_features(file_store, entity_df, refs), expected, ["label"])


@pytest.mark.parametrize("created", [False, True], ids=["no-created", "created"])
def test_rows_without_event_timestamps_and_null_keys_as_in_feast(tmp_path, created):
    """Feature rows without an event timestamp are the last resort (the latest created),
    in a view without entities too; a NaN entity key; float entity keys."""
    (tmp_path / "data").mkdir(parents=True)
    weather = pd.DataFrame(
        {
            "event_timestamp": pd.to_datetime([BASE, BASE + HOUR, pd.NaT, pd.NaT], utc=True),
            "temp": [1.0, 2.0, 3.0, 4.0],
        }
    )
    if created:
        weather["created"] = pd.to_datetime([BASE, BASE, BASE + 2 * HOUR, BASE + HOUR], utc=True)
    weather.to_parquet(tmp_path / "data" / "weather.parquet")
    rates = pd.DataFrame(
        {
            "driver_id": [1, 2, 3],
            "event_timestamp": pd.to_datetime([BASE, pd.NaT, BASE], utc=True),
            "rate": [1.0, 2.0, 3.0],
        }
    )
    rates.to_parquet(tmp_path / "data" / "rates.parquet")
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    weather_view = FeatureView(
        name="weather",
        entities=[],
        ttl=dt.timedelta(hours=1),
        schema=[Field(name="temp", dtype=Float64)],
        source=FileSource(
            path=str(tmp_path / "data" / "weather.parquet"),
            timestamp_field="event_timestamp",
            created_timestamp_column="created" if created else None,
        ),
    )
    rates_view = FeatureView(
        name="rates",
        entities=[driver],
        ttl=dt.timedelta(hours=1),
        schema=[Field(name="rate", dtype=Float64)],
        source=FileSource(path=str(tmp_path / "data" / "rates.parquet"), timestamp_field="event_timestamp"),
    )
    file_store, ours = stores(tmp_path, [driver, weather_view, rates_view])
    entity_df = pd.DataFrame(
        {
            "driver_id": [1.0, 2.0, 3.0, np.nan, 1.0],
            "event_timestamp": [BASE + HOUR / 2, BASE - HOUR, BASE + 5 * HOUR, BASE, BASE + 3 * HOUR],
            "label": range(5),
        }
    )
    for refs in (["rates:rate", "weather:temp"], ["weather:temp", "rates:rate"]):
        expected = file_store.get_historical_features(entity_df=entity_df, features=refs).to_df()
        assert expected["temp"].isin([3.0 if created else 4.0]).any()  # an untimed row answered
        assert_same(ours.get_historical_features(entity_df=entity_df, features=refs).to_df(), expected, ["label"])
        assert_same(get_historical_features(file_store, entity_df, refs), expected, ["label"])


def key_repo(root: Path, keys: list[int]) -> tuple[Any, Any]:
    (root / "data").mkdir(parents=True)
    rows = pd.DataFrame(
        {
            "driver_id": pd.array(keys, dtype="int64"),
            "event_timestamp": [BASE] * len(keys),
            "rate": np.arange(len(keys), dtype=np.float64),
        }
    )
    rows.to_parquet(root / "data" / "rates.parquet")
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    view = FeatureView(
        name="rates",
        entities=[driver],
        ttl=dt.timedelta(hours=2),
        schema=[Field(name="rate", dtype=Float64)],
        source=FileSource(path=str(root / "data" / "rates.parquet"), timestamp_field="event_timestamp"),
    )
    return stores(root, [driver, view])


@pytest.mark.parametrize(
    "keys",
    [
        # 705_032_704 is 5e9 wrapped to 32 bits: a cast of the feature keys would match it.
        pd.array([1, 2, 705_032_704, 3], dtype="int32"),
        pd.array([1, 2, 3], dtype="uint64"),
        pd.array([1, None, 3], dtype="Int64"),
        # pandas compares a float key with integer keys as floats: 1.0 and 5e9 match.
        np.array([1.0, 2.5, np.nan, 5e9]),
        np.array([True, False]),
    ],
    ids=["int32", "uint64", "nullable-int64", "float64", "bool"],
)
def test_keys_of_another_type_match_by_value_as_in_feast(tmp_path, keys):
    file_store, ours = key_repo(tmp_path, [1, 2, 5_000_000_000, 7])
    entity_df = pd.DataFrame({"driver_id": keys, "event_timestamp": BASE + HOUR / 2})
    entity_df["label"] = np.arange(len(entity_df))
    expected = file_store.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df()
    assert expected["rate"].notna().any()
    assert_same(ours.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df(), expected, ["label"])
    assert_same(get_historical_features(file_store, entity_df, ["rates:rate"]), expected, ["label"])


def test_string_keys_against_integer_keys_are_refused(tmp_path):
    file_store, ours = key_repo(tmp_path, [1, 2])
    entity_df = pd.DataFrame({"driver_id": ["1", "2"], "event_timestamp": BASE + HOUR / 2})
    with pytest.raises(ValueError, match="merge on object and int64 columns"):  # pandas, in Feast
        file_store.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df()
    message = (
        r"^get_historical_features: argument `entity_df`: column 'driver_id' \(a join key of feature view "
        r"'rates'\): expected values comparable with the view's keys \(int64\), found string$"
    )
    with pytest.raises(ArrowfeatTypeError, match=message):
        get_historical_features(file_store, entity_df, ["rates:rate"])
    with pytest.raises(ArrowfeatTypeError, match=message):
        ours.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df()
    # A column of several types is named, never a raw pyarrow error.
    mixed = pd.DataFrame({"driver_id": [1, "2"], "event_timestamp": BASE + HOUR / 2})
    with pytest.raises(
        ArrowfeatTypeError, match=r"^get_historical_features: argument `entity_df`: .*column 'driver_id'"
    ):
        get_historical_features(file_store, mixed, ["rates:rate"])


def test_a_relative_source_path_is_read_from_the_feature_repo(tmp_path, monkeypatch):
    """Feast's templates write paths relative to the repo (`data/x.parquet`); Feast reads
    them from there, whatever the working directory."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    pd.DataFrame({"driver_id": [1, 2], "event_timestamp": [BASE, BASE], "rate": [0.5, 0.25]}).to_parquet(
        repo / "data" / "rates.parquet"
    )
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    view = FeatureView(
        name="rates",
        entities=[driver],
        schema=[Field(name="rate", dtype=Float64)],
        source=FileSource(path="data/rates.parquet", timestamp_field="event_timestamp"),
    )
    file_store, ours = stores(repo, [driver, view])
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "data").mkdir(parents=True)
    # A file of the same relative name in the working directory must not be read.
    pd.DataFrame({"driver_id": [1, 2], "event_timestamp": [BASE, BASE], "rate": [9.0, 9.0]}).to_parquet(
        elsewhere / "data" / "rates.parquet"
    )
    monkeypatch.chdir(elsewhere)
    entity_df = pd.DataFrame({"driver_id": [1, 2, 3], "event_timestamp": BASE + HOUR})
    expected = file_store.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df()
    assert sorted(expected["rate"].dropna()) == [0.25, 0.5]
    assert_same(
        ours.get_historical_features(entity_df=entity_df, features=["rates:rate"]).to_df(), expected, ["driver_id"]
    )
    assert_same(get_historical_features(file_store, entity_df, ["rates:rate"]), expected, ["driver_id"])


def test_a_feature_the_view_does_not_declare_is_a_key_error(tmp_path):
    """Feast's test_historical_features_with_shared_batch_source: two views share one
    file; asking one view for a feature only the other declares raises KeyError, though
    the file has the column."""
    (tmp_path / "data").mkdir(parents=True)
    pd.DataFrame({"driver_id": [1], "event_timestamp": [BASE], "avg_daily_trips": [3], "conv_rate": [0.5]}).to_parquet(
        tmp_path / "data" / "driver.parquet"
    )
    source = FileSource(path=str(tmp_path / "data" / "driver.parquet"), timestamp_field="event_timestamp")
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    v1 = FeatureView(
        name="driver_stats_v1", entities=[driver], schema=[Field(name="avg_daily_trips", dtype=Int32)], source=source
    )
    v2 = FeatureView(
        name="driver_stats_v2",
        entities=[driver],
        schema=[Field(name="avg_daily_trips", dtype=Int32), Field(name="conv_rate", dtype=Float32)],
        source=source,
    )
    # A view declaring a feature its file lacks.
    v3 = FeatureView(
        name="driver_stats_v3", entities=[driver], schema=[Field(name="acc_rate", dtype=Float32)], source=source
    )
    file_store, ours = stores(tmp_path, [driver, v1, v2, v3])
    entity_df = pd.DataFrame({"driver_id": [1], "event_timestamp": [BASE + HOUR]})
    for full_feature_names in (False, True):
        for store in (file_store, ours):
            with pytest.raises(KeyError):
                store.get_historical_features(
                    entity_df=entity_df, features=["driver_stats_v1:conv_rate"], full_feature_names=full_feature_names
                ).to_df()
        with pytest.raises(
            ArrowfeatKeyError,
            match=r"^get_historical_features: argument `features`: feature view 'driver_stats_v1' has no feature "
            r"'conv_rate' \(its features: 'avg_daily_trips'\)$",
        ):
            get_historical_features(
                file_store, entity_df, ["driver_stats_v1:conv_rate"], full_feature_names=full_feature_names
            )
    with pytest.raises(KeyError):
        file_store.get_historical_features(entity_df=entity_df, features=["driver_stats_v3:acc_rate"]).to_df()
    missing = r"^get_historical_features: feature view 'driver_stats_v3': expected column 'acc_rate' in its source '.*driver\.parquet', found columns"
    for run in (
        lambda: ours.get_historical_features(entity_df=entity_df, features=["driver_stats_v3:acc_rate"]).to_df(),
        lambda: get_historical_features(file_store, entity_df, ["driver_stats_v3:acc_rate"]),
    ):
        with pytest.raises(ArrowfeatKeyError, match=missing) as raised:
            run()
        assert isinstance(raised.value, KeyError) and str(raised.value).startswith("get_historical_features:")
    # The declared features still work, from either view.
    refs = ["driver_stats_v1:avg_daily_trips", "driver_stats_v2:conv_rate"]
    expected = file_store.get_historical_features(entity_df=entity_df, features=refs).to_df()
    assert_same(ours.get_historical_features(entity_df=entity_df, features=refs).to_df(), expected, ["driver_id"])


def test_entity_df_kinds_as_in_the_file_store(tmp_path):
    """A SQL query needs a SQL store: refused, as the file store refuses it. No
    entity_df (a time range) is the file store's own retrieval."""
    file_store, ours = key_repo(tmp_path, [1, 2, 3])
    with pytest.raises(ValueError, match="Please provide an entity_df of type"):
        file_store.get_historical_features(entity_df="SELECT * FROM t", features=["rates:rate"]).to_df()
    query = r"^get_historical_features: argument `entity_df`: expected a pandas DataFrame \(a SQL query needs an offline store that runs SQL\), found builtins\.str$"
    with pytest.raises(ArrowfeatTypeError, match=query):
        ours.get_historical_features(entity_df="SELECT * FROM t", features=["rates:rate"])
    with pytest.raises(ArrowfeatTypeError, match=query):
        get_historical_features(file_store, "SELECT * FROM t", ["rates:rate"])
    span = {"start_date": (BASE - HOUR).to_pydatetime(), "end_date": (BASE + HOUR).to_pydatetime()}
    expected = file_store.get_historical_features(features=["rates:rate"], **span).to_df()
    assert len(expected) == 3
    assert_same(ours.get_historical_features(features=["rates:rate"], **span).to_df(), expected, ["driver_id"])
    no_time = pd.DataFrame({"driver_id": [1], "a": [BASE], "b": [BASE]})
    with pytest.raises(
        ValueError,
        match=r"^get_historical_features: argument `entity_df`: expected a column 'event_timestamp' or exactly one datetime column, found 2 datetime columns: 'a', 'b'$",
    ):
        ours.get_historical_features(entity_df=no_time, features=["rates:rate"])


def test_materialization_writes_and_saved_datasets_work_with_the_store(tmp_path):
    """Everything but training sets is Feast's file store: materialization into the
    online store, writes to the offline store, saved datasets."""
    from feast.infra.offline_stores.file_source import SavedDatasetFileStorage

    file_store, ours, entity_df = driver_repo(tmp_path)
    end = (BASE + 3 * pd.Timedelta(days=1)).to_pydatetime()
    for store in (file_store, ours):
        store.materialize(start_date=(BASE - pd.Timedelta(days=2)).to_pydatetime(), end_date=end)
    rows = [{"driver_id": k} for k in range(8)]
    online = [
        store.get_online_features(
            features=["stats:conv_rate", "profile:rating", "weather:temp"], entity_rows=rows
        ).to_dict()
        for store in (file_store, ours)
    ]
    assert online[0] == online[1] and any(v is not None for v in online[0]["conv_rate"])

    late = BASE + 4 * pd.Timedelta(days=1)
    row = pd.DataFrame(
        {"driver_id": [3], "event_timestamp": [late], "conv_rate": [0.125], "trips": [42], "created": [late]}
    )
    ours.write_to_offline_store("stats", row)
    entity = pd.DataFrame({"driver_id": [3], "event_timestamp": [late + HOUR]})
    for store in (file_store, ours):
        assert store.get_historical_features(entity_df=entity, features=["stats:trips"]).to_df()["trips"].tolist() == [
            42
        ]

    job = ours.get_historical_features(entity_df=entity_df, features=["stats:conv_rate", "weather:temp"])
    saved = ours.create_saved_dataset(
        from_=job, name="training", storage=SavedDatasetFileStorage(path=str(tmp_path / "training.parquet"))
    )
    training, stored = job.to_df(), saved.to_df()  # the keys, timestamp and features
    assert_same(stored, training[list(stored.columns)], ["driver_id", "event_timestamp"])


def universal_repo(tmp_path: Path, *, no_ttl: bool = False) -> tuple[Any, Any, pd.DataFrame, Any, Any]:
    """Feast's universal test repo (test_universal_historical_retrieval.py,
    construct_universal_feature_views) on Feast's own test data (feast.driver_test_data):
    driver, customer, order and location views, the two views without entities
    (global_stats; field_mapping, with a field mapping), an on-demand view with request
    data, feature services with projections and a join key map; the file store and the
    arrowfeat store over it, the entity_df, and the two services."""
    from feast import RequestSource
    from feast import driver_test_data as data
    from feast.on_demand_feature_view import on_demand_feature_view

    np.random.seed(0)
    end = dt.datetime(2024, 3, 4, tzinfo=dt.UTC)
    start = end - dt.timedelta(days=3)
    customers, drivers, locations = list(range(1001, 1020)), list(range(5001, 5020)), list(range(1, 50))
    frames = {
        "customer_profile": data.create_customer_daily_profile_df(customers, start, end),
        "driver_hourly": data.create_driver_hourly_stats_df(drivers, start, end),
        "location_hourly": data.create_location_stats_df(locations, start, end),
        "orders": data.create_orders_df(customers, drivers, start, end, order_count=20, locations=locations),
        "global": data.create_global_daily_stats_df(start, end),
        "field_mapping": data.create_field_mapping_df(start, end),
    }
    (tmp_path / "data").mkdir(parents=True)
    sources = {}
    for name, frame in frames.items():
        frame.to_parquet(tmp_path / "data" / f"{name}.parquet")
        sources[name] = FileSource(
            name=name,
            path=str(tmp_path / "data" / f"{name}.parquet"),
            timestamp_field="event_timestamp",
            created_timestamp_column=None if name == "orders" else "created",
            field_mapping={"column_name": "feature_name"} if name == "field_mapping" else None,
        )
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    customer = Entity(name="customer_id", join_keys=["customer_id"], value_type=ValueType.INT64)
    location = Entity(name="location_id", join_keys=["location_id"], value_type=ValueType.INT64)
    driver_stats = FeatureView(
        name="driver_stats",
        entities=[driver],
        schema=[
            Field(name="conv_rate", dtype=Float32),
            Field(name="acc_rate", dtype=Float32),
            Field(name="avg_daily_trips", dtype=Int32),
            Field(name="driver_id", dtype=Int64),
        ],
        source=sources["driver_hourly"],
        ttl=dt.timedelta(hours=2),
    )
    customer_profile = FeatureView(
        name="customer_profile",
        entities=[customer],
        schema=[
            Field(name="current_balance", dtype=Float32),
            Field(name="avg_passenger_count", dtype=Float32),
            Field(name="lifetime_trip_count", dtype=Int32),
        ],
        source=sources["customer_profile"],
        ttl=dt.timedelta(days=2),
    )
    global_stats = FeatureView(
        name="global_stats",
        entities=[],
        schema=[Field(name="num_rides", dtype=Int32), Field(name="avg_ride_length", dtype=Float32)],
        source=sources["global"],
        ttl=dt.timedelta(days=2),
    )
    order = FeatureView(
        name="order",
        entities=[customer, driver],
        schema=[Field(name="order_is_success", dtype=Int32), Field(name="driver_id", dtype=Int64)],
        source=sources["orders"],
        ttl=dt.timedelta(days=2),
    )
    location_stats = FeatureView(
        name="location_stats",
        entities=[location],
        schema=[Field(name="temperature", dtype=Int32), Field(name="location_id", dtype=Int64)],
        source=sources["location_hourly"],
        ttl=dt.timedelta(days=2),
    )
    field_mapping = FeatureView(
        name="field_mapping",
        entities=[],
        schema=[Field(name="feature_name", dtype=Int32)],
        source=sources["field_mapping"],
        ttl=dt.timedelta(days=2),
    )

    @on_demand_feature_view(
        sources=[
            driver_stats[["conv_rate"]],
            RequestSource(name="conv_rate_input", schema=[Field(name="val_to_add", dtype=Int32)]),
        ],
        schema=[
            Field(name="conv_rate_plus_100", dtype=Float64),
            Field(name="conv_rate_plus_val_to_add", dtype=Float64),
            Field(name="conv_rate_plus_100_rounded", dtype=Int32),
        ],
        mode="pandas",
    )
    def conv_rate_plus_100(features_df: pd.DataFrame) -> pd.DataFrame:
        df = pd.DataFrame()
        df["conv_rate_plus_100"] = features_df["conv_rate"] + 100
        df["conv_rate_plus_val_to_add"] = features_df["conv_rate"] + features_df["val_to_add"]
        df["conv_rate_plus_100_rounded"] = df["conv_rate_plus_100"].astype("float").round().astype(pd.Int32Dtype())
        return df

    convrate_service = FeatureService(
        name="convrate_plus100", features=[driver_stats[["conv_rate"]], conv_rate_plus_100]
    )
    mapping_service = FeatureService(
        name="entity_mapping",
        features=[
            location_stats.with_name("origin").with_join_key_map({"location_id": "origin_id"}),
            location_stats.with_name("destination").with_join_key_map({"location_id": "destination_id"}),
        ],
    )
    if no_ttl:  # as Feast's test_historical_features_with_no_ttl sets them
        for view in (customer_profile, order, global_stats, field_mapping):
            view.ttl = dt.timedelta(seconds=0)
    views = [driver_stats, customer_profile, global_stats, order, location_stats, field_mapping, conv_rate_plus_100]
    file_store, ours = stores(
        tmp_path, [driver, customer, location, convrate_service, mapping_service, *views], project="universal"
    )

    entity_df = frames["orders"][
        ["customer_id", "driver_id", "order_id", "origin_id", "destination_id", "event_timestamp"]
    ]
    entity_df = entity_df.assign(val_to_add=np.arange(len(entity_df)), driver_age=np.arange(len(entity_df)) + 100)
    return file_store, ours, entity_df, convrate_service, mapping_service


@pytest.mark.parametrize("full_feature_names", [False, True])
def test_feast_historical_features_main_ported(tmp_path, full_feature_names):
    """A port of Feast's test_historical_features_main (test_universal_historical_retrieval.py)
    on Feast's own test data (feast.driver_test_data): driver, customer and order views,
    the two views without entities (global_stats; field_mapping, with a field mapping),
    an on-demand view with request data, feature services with projections and a join
    key map, and entity timestamps in four kinds of time zone. The store must equal the
    file store, which Feast's test checks against its expected frame."""
    file_store, ours, entity_df, convrate_service, mapping_service = universal_repo(tmp_path)
    refs = [
        "driver_stats:conv_rate",
        "driver_stats:avg_daily_trips",
        "customer_profile:current_balance",
        "customer_profile:avg_passenger_count",
        "customer_profile:lifetime_trip_count",
        "conv_rate_plus_100:conv_rate_plus_100",
        "conv_rate_plus_100:conv_rate_plus_100_rounded",
        "conv_rate_plus_100:conv_rate_plus_val_to_add",
        "order:order_is_success",
        "global_stats:num_rides",
        "global_stats:avg_ride_length",
        "field_mapping:feature_name",
    ]
    by = ["event_timestamp", "order_id", "driver_id", "customer_id"]
    cases: list[Any] = [refs, convrate_service]
    if full_feature_names:  # the two location projections share feature names
        cases.append(mapping_service)
    for features in cases:
        expected = file_store.get_historical_features(
            entity_df=entity_df, features=features, full_feature_names=full_feature_names
        ).to_df()
        found = ours.get_historical_features(
            entity_df=entity_df, features=features, full_feature_names=full_feature_names
        )
        assert_same(found.to_df(), expected, by)
        if features is refs:
            # Feast's test data were all created "now", after every order: the cutoff
            # blanks every view but `order` (no created timestamps), compares naive
            # created times with UTC entity times, and keeps the orders.
            cut = file_store.get_historical_features(
                entity_df=entity_df,
                features=refs,
                full_feature_names=full_feature_names,
                filter_by_created_timestamp=True,
            ).to_df()
            assert len(cut) == len(entity_df)
            found = ours.get_historical_features(
                entity_df=entity_df,
                features=refs,
                full_feature_names=full_feature_names,
                filter_by_created_timestamp=True,
            )
            assert_same(found.to_df(), cut, by)
            # Every order was kept, and the views without entities joined to it.
            assert len(expected) == len(entity_df)
            prefix = "global_stats__" if full_feature_names else ""
            assert expected[f"{prefix}num_rides"].notna().all()
            assert expected["field_mapping__feature_name" if full_feature_names else "feature_name"].notna().any()


UNIVERSAL_REFS_WITHOUT_DRIVER = [
    "customer_profile:current_balance",
    "customer_profile:avg_passenger_count",
    "customer_profile:lifetime_trip_count",
    "order:order_is_success",
    "global_stats:num_rides",
    "global_stats:avg_ride_length",
    "field_mapping:feature_name",
]


@pytest.mark.parametrize("full_feature_names", [False, True])
def test_feast_historical_features_with_no_ttl_ported(tmp_path, full_feature_names):
    """A port of Feast's test_historical_features_with_no_ttl: TTL 0 (no limit) on the
    customer, order and both entity-less views."""
    file_store, ours, entity_df, _, _ = universal_repo(tmp_path, no_ttl=True)
    entity_df = entity_df.drop(columns=["order_id", "origin_id", "destination_id"])
    expected = file_store.get_historical_features(
        entity_df=entity_df, features=UNIVERSAL_REFS_WITHOUT_DRIVER, full_feature_names=full_feature_names
    ).to_df()
    found = ours.get_historical_features(
        entity_df=entity_df, features=UNIVERSAL_REFS_WITHOUT_DRIVER, full_feature_names=full_feature_names
    ).to_df()
    assert_same(found, expected, ["event_timestamp", "driver_id", "customer_id"])
    # Without a TTL, the entity-less views answer every order.
    prefix = "global_stats__" if full_feature_names else ""
    assert len(found) == len(entity_df) and found[f"{prefix}num_rides"].notna().all()


@pytest.mark.parametrize("full_feature_names", [False, True])
def test_feast_historical_features_persisting_ported(tmp_path, full_feature_names):
    """A port of Feast's test_historical_features_persisting: a saved dataset of a
    training set with the entity-less views reads back the job's frame."""
    from feast.infra.offline_stores.file_source import SavedDatasetFileStorage

    file_store, ours, entity_df, _, _ = universal_repo(tmp_path)
    entity_df = entity_df.drop(columns=["order_id", "origin_id", "destination_id"])
    by = ["event_timestamp", "driver_id", "customer_id"]
    expected = file_store.get_historical_features(
        entity_df=entity_df, features=UNIVERSAL_REFS_WITHOUT_DRIVER, full_feature_names=full_feature_names
    ).to_df()
    job = ours.get_historical_features(
        entity_df=entity_df, features=UNIVERSAL_REFS_WITHOUT_DRIVER, full_feature_names=full_feature_names
    )
    saved = ours.create_saved_dataset(
        from_=job,
        name="saved_dataset",
        storage=SavedDatasetFileStorage(path=str(tmp_path / "saved.parquet")),
        tags={"env": "test"},
        allow_overwrite=True,
    )
    assert_same(job.to_df(), expected, by)
    stored = saved.to_df()
    assert_same(stored, job.to_df()[list(stored.columns)], by)


def test_feast_historical_features_containing_backfills_ported(tmp_path):
    """A port of Feast's test_historical_features_containing_backfills: equal event times
    go to the later created time; a backfilled row with a later event time but an
    earlier created time still wins."""
    now = pd.Timestamp.now(tz="UTC").floor("h")
    tomorrow, after = now + pd.Timedelta(days=1), now + pd.Timedelta(days=2)
    stats = pd.DataFrame(
        {
            "driver_id": [1001, 1001, 1002, 1002],
            "avg_daily_trips": np.array([10, 20, 30, 40], np.int32),
            "event_timestamp": [now, now, now, tomorrow],
            "created": [now, tomorrow, tomorrow, now],
        }
    )
    (tmp_path / "data").mkdir()
    stats.to_parquet(tmp_path / "data" / "stats.parquet")
    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    view = FeatureView(
        name="driver_stats",
        entities=[driver],
        schema=[Field(name="avg_daily_trips", dtype=Int32)],
        source=FileSource(
            path=str(tmp_path / "data" / "stats.parquet"),
            timestamp_field="event_timestamp",
            created_timestamp_column="created",
        ),
    )
    file_store, ours = stores(tmp_path, [driver, view])
    entity_df = pd.DataFrame({"driver_id": [1001, 1002], "event_timestamp": [after, after]})
    found = ours.get_historical_features(entity_df=entity_df, features=["driver_stats:avg_daily_trips"]).to_df()
    expected = file_store.get_historical_features(
        entity_df=entity_df, features=["driver_stats:avg_daily_trips"]
    ).to_df()
    assert_same(found, expected, ["driver_id"])
    assert found.sort_values("driver_id")["avg_daily_trips"].tolist() == [20, 40]


def test_the_training_set_examples_in_the_docs_run(tmp_path, monkeypatch, capsys):
    """docs/feast.md, "Training sets": the examples run as written and print what they say."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "feast.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text[text.index("## Training sets") :], re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/feast.md", "exec"), namespace)
    printed = "\n".join(line[2:] for line in blocks[0].splitlines() if line.startswith("# "))
    assert printed in capsys.readouterr().out
    from_store = namespace["training"]
    exec(compile(blocks[1], "docs/feast.md", "exec"), namespace)
    pd.testing.assert_frame_equal(namespace["training"], from_store)
