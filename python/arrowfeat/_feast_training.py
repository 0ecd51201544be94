"""Feast training sets from the arrowfeat point-in-time join: what Feast's
``store.get_historical_features(entity_df, features).to_df()`` returns for views over
Parquet ``FileSource``s, row for row and value for value, without Feast's pandas/dask join.
One implementation serves ``arrowfeat.feast.get_historical_features`` and the Feast
offline store ``arrowfeat.feast.ArrowfeatOfflineStore`` (``_feast_store``).

Feast's semantics, as its file (dask) offline store implements them (feast 0.67,
``infra/offline_stores/dask.py``), and as this module reproduces them:

- a feature row is visible at an entity row's time ``t`` when its event timestamp is in
  ``[t - ttl, t]`` (both ends included; no TTL, or a TTL of 0: ``(-inf, t]``);
- among visible rows the latest event timestamp wins, ties to the latest created
  timestamp;
- join keys match as pandas ``merge`` matches them: by value across integer widths, a
  float key against an integer one as floats, a null key matches a null key; a string
  key against a number is an error (pandas refuses to merge them);
- a view without entities (Feast's dummy entity) has no join key: every entity row sees
  every row of the view;
- an entity row whose key has feature rows, none of them visible, is **dropped** from
  the result (Feast filters the merged rows by the TTL after a left join, so nothing of
  that entity row is left); an entity row whose key has no feature row at all is kept,
  with nulls. With several feature views the drops compound;
- after each view, entity rows repeating the join keys of the views so far and the
  timestamp appear once (the last in ``entity_df`` order): Feast's ``drop_duplicates``
  after each view. A view without entities listed first therefore keeps one entity row
  per timestamp, as Feast does;
- with ``filter_by_created_timestamp=True`` (opt-in, Feast 0.66+), in a view with a
  created timestamp column, a row created after ``t`` (or without a created timestamp)
  is blanked: it is not seen, but unlike the TTL it does not drop the entity row, which
  keeps nulls when no row is left (``_apply_created_timestamp_cutoff``);
- feature rows without an event timestamp pass the TTL filter and are never blanked:
  they are the answer when no timestamped row is (the latest created among them);
- a relative ``FileSource`` path is read from the feature repo, as Feast reads it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._convert import _type_name, _visible
from .errors import ArrowfeatKeyError, ArrowfeatTypeError, ArrowfeatValueError
from .point_in_time import _point_in_time, as_of

if TYPE_CHECKING:
    import pandas as pd

_FUNCTION = "get_historical_features"
_TIMESTAMP = "event_timestamp"  # Feast's DEFAULT_ENTITY_DF_EVENT_TIMESTAMP_COL
# Working columns: never in the result.
_VISIBLE = "__arrowfeat_visible"
_TIME = "__arrowfeat_time"
_KEY = "__arrowfeat_key_{}"

# A view, and the names of the features asked of it.
ViewFeatures = tuple[Any, Sequence[str]]


def _names(names: Sequence[str]) -> str:
    return ", ".join(_visible(repr(n), 60) for n in names[:20]) + (", ..." if len(names) > 20 else "")


def _view_and_features(store: Any, features: Sequence[str]) -> list[ViewFeatures]:
    if isinstance(features, str):
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: argument `features`: expected a list of references such as 'view:feature', found a str"
        )
    views: dict[str, list[str]] = {}
    for reference in features:
        if not isinstance(reference, str) or reference.count(":") != 1:
            raise ArrowfeatValueError(
                f"{_FUNCTION}: argument `features`: expected references such as 'view:feature', found {reference!r}"
            )
        view, feature = reference.split(":")
        views.setdefault(view, []).append(feature)
    return [(store.get_feature_view(view), names) for view, names in views.items()]


def _entity_columns(view: Any) -> list[str]:
    """`view`'s entity columns: none for a view without entities (Feast's dummy entity)."""
    from feast.feature_view import DUMMY_ENTITY_ID

    return [c.name for c in view.entity_columns if c.name != DUMMY_ENTITY_ID]


def _join_keys(view: Any) -> list[str]:
    """The entity_df columns `view` joins on: its entity columns renamed by the
    projection's join key map (``with_join_key_map``)."""
    renamed = dict(view.projection.join_key_map or {})
    return [renamed.get(c, c) for c in _entity_columns(view)]


def _check_declared(view: Any, names: Sequence[str]) -> None:
    declared = [f.name for f in view.features]
    for name in names:
        if name not in declared:
            # Feast raises KeyError here, even when the view's source file has the column.
            raise ArrowfeatKeyError(
                f"{_FUNCTION}: argument `features`: feature view {_visible(repr(view.name), 200)} has no feature "
                f"{_visible(repr(name), 200)} (its features: {_names(declared)})"
            )


def _source_table(view: Any, repo_path: Any, names: Sequence[str]) -> tuple[pa.Table, str, str | None]:
    """The columns of `view`'s Parquet source that the join needs, under the names Feast
    gives them (field mapping, then join key map), and the event and created time names."""
    from feast.infra.offline_stores.file_source import FileSource

    source = view.batch_source
    label = f"feature view {_visible(repr(view.name), 200)}"
    if not isinstance(source, FileSource):
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: {label}: expected a FileSource (Parquet), found {type(source).__name__}"
        )
    mapping = dict(source.field_mapping or {})
    reverse = {v: k for k, v in mapping.items()}
    renamed = dict(view.projection.join_key_map or {})
    entities = _entity_columns(view)
    timestamp = source.timestamp_field
    created = source.created_timestamp_column or None
    wanted = [reverse.get(c, c) for c in [*entities, *names]] + [timestamp] + ([created] if created else [])
    wanted = list(dict.fromkeys(wanted))
    # A relative path is relative to the feature repo (FileSource.get_uri_for_file_path).
    uri = FileSource.get_uri_for_file_path(repo_path, source.file_options.uri)

    def unreadable(e: Exception) -> ArrowfeatValueError:
        return ArrowfeatValueError(
            f"{_FUNCTION}: {label}: cannot read its source {_visible(repr(uri), 400)}: "
            f"{type(e).__name__}: {_visible(str(e), 1000)}"
        )

    try:
        filesystem, path = FileSource.create_filesystem_and_path(uri, source.file_options.s3_endpoint_override)
        dataset = pq.ParquetDataset(path, filesystem=filesystem)
    except (OSError, pa.ArrowException) as e:
        raise unreadable(e) from e
    found = list(dataset.schema.names)
    missing = [c for c in wanted if c not in found]
    if missing:
        # Feast (pandas) raises KeyError for a column its source lacks.
        raise ArrowfeatKeyError(
            f"{_FUNCTION}: {label}: expected column {_visible(repr(missing[0]), 200)} in its source "
            f"{_visible(repr(uri), 400)}, found columns {_names(found)}"
        )
    try:
        table = dataset.read(columns=wanted)
    except (OSError, pa.ArrowException) as e:
        raise unreadable(e) from e
    table = table.rename_columns([renamed.get(mapping.get(c, c), mapping.get(c, c)) for c in table.column_names])
    return table, mapping.get(timestamp, timestamp), mapping.get(created, created) if created else None


def _utc(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Timestamps in UTC, as Feast normalises them (naive ones are UTC)."""
    if pa.types.is_timestamp(column.type) and column.type.tz != "UTC":
        return column.cast(pa.timestamp(column.type.unit, tz="UTC"))
    return column


def _set(table: pa.Table, name: str, column: pa.ChunkedArray | pa.Array) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, column)


def _entity_timestamp(entity_df: Any) -> str:
    """The name of `entity_df`'s timestamp column, found as Feast finds it:
    ``event_timestamp``, else its only datetime column."""
    import pandas as pd

    if not isinstance(entity_df, pd.DataFrame):
        hint = " (a SQL query needs an offline store that runs SQL)" if isinstance(entity_df, str) else ""
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: argument `entity_df`: expected a pandas DataFrame{hint}, found {_type_name(entity_df)}"
        )
    if _TIMESTAMP in entity_df.columns:
        return _TIMESTAMP
    times = [c for c, t in entity_df.dtypes.items() if pd.api.types.is_datetime64_any_dtype(t)]
    if len(times) != 1:
        raise ArrowfeatValueError(
            f"{_FUNCTION}: argument `entity_df`: expected a column {_TIMESTAMP!r} or exactly one datetime column, "
            f"found {len(times)} datetime columns{': ' + _names([str(c) for c in times]) if times else ''}"
        )
    name: str = times[0]
    return name


def _entity_table(entity_df: Any) -> tuple[pa.Table, str]:
    """`entity_df` as an Arrow table with its timestamp column in UTC (naive times are
    UTC; times in other zones, or Python objects in several, are converted, as Feast
    converts them), and that column's name."""
    import pandas as pd

    timestamp = _entity_timestamp(entity_df)
    times = entity_df[timestamp]
    if not (isinstance(times.dtype, pd.DatetimeTZDtype) and str(times.dtype.tz) == "UTC"):
        try:
            utc = pd.to_datetime(times, utc=True)
        except (ValueError, TypeError, OverflowError) as e:
            raise ArrowfeatValueError(
                f"{_FUNCTION}: argument `entity_df`: column {_visible(repr(timestamp), 200)}: expected times, "
                f"found {times.dtype} ({type(e).__name__}: {_visible(str(e), 400)})"
            ) from e
        entity_df = entity_df.copy(deep=False)
        entity_df[timestamp] = utc
    try:
        spine = pa.Table.from_pandas(entity_df, preserve_index=False)
    except (pa.ArrowException, ValueError, TypeError) as e:
        column = next((c for c in entity_df.columns if not _converts(entity_df[c])), None)
        where = f"column {_visible(repr(column), 200)}" if column is not None else "its columns"
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: argument `entity_df`: expected columns of one type each, found {where} that Arrow "
            f"cannot hold ({type(e).__name__}: {_visible(str(e), 400)})"
        ) from e
    return _set(spine, timestamp, _utc(spine.column(timestamp))), timestamp


def _converts(series: Any) -> bool:
    try:
        pa.Array.from_pandas(series)
    except (pa.ArrowException, ValueError, TypeError):
        return False
    return True


def _plain(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def _is_number(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t))


def _comparable_keys(
    spine: pa.Table, events: pa.Table, keys: Sequence[str], view: str
) -> tuple[pa.Table, pa.Table, list[str]]:
    """The tables with join keys the join compares as pandas ``merge`` does, and the
    names to join on. The join itself matches integers of any width and strings of any
    layout by value; a float against an integer or a bool (which pandas compares as
    floats) is joined on float copies of both, under a working name."""
    by: list[str] = []
    for i, key in enumerate(keys):
        st, et = _plain(spine.schema.field(key).type), _plain(events.schema.field(key).type)
        if (
            st == et
            or pa.types.is_null(st)
            or pa.types.is_null(et)
            or (_is_text(st) and _is_text(et))
            or (pa.types.is_integer(st) and pa.types.is_integer(et))
        ):
            by.append(key)
        elif _is_number(st) and _is_number(et):
            name = _KEY.format(i)
            spine = spine.append_column(name, pc.cast(spine.column(key), pa.float64(), safe=False))
            events = events.append_column(name, pc.cast(events.column(key), pa.float64(), safe=False))
            by.append(name)
        else:
            raise ArrowfeatTypeError(
                f"{_FUNCTION}: argument `entity_df`: column {_visible(repr(key), 200)} (a join key of feature view "
                f"{_visible(repr(view), 200)}): expected values comparable with the view's keys ({et}), found {st}"
            )
    return spine, events, by


def _constant_times(n: int, value: int) -> pa.Array:
    return pa.nulls(n, pa.int64()).fill_null(value).cast(pa.timestamp("ns", tz="UTC"))


def _has_rows(spine: pa.Table, events: pa.Table, by: list[str]) -> pa.Array:
    """Whether each spine row's key has any event row, timed or not (the join's key
    matching, a null key matching a null key as in pandas ``merge``)."""
    probe = pa.table({_TIME: _constant_times(spine.num_rows, 1), **{k: spine.column(k) for k in by}})
    rows = pa.table(
        {
            _TIME: _constant_times(events.num_rows, 0),
            _VISIBLE: pa.nulls(events.num_rows, pa.int8()).fill_null(1),
            **{k: events.column(k) for k in by},
        }
    )
    found = _point_in_time(
        _FUNCTION,
        probe,
        rows,
        by=by or None,
        spine_time=_TIME,
        event_time=_TIME,
        features=[as_of(_VISIBLE)],
        null_keys_match=True,
    )
    return pc.is_valid(found.column(_VISIBLE)).combine_chunks()


def _untimed_fallback(
    result: pa.Table, untimed: pa.Table, by: list[str], outputs: list[str], created: str | None
) -> tuple[pa.Table, pa.Array]:
    """`result` with the values of each key's last untimed feature row (by created time,
    nulls first) where no timestamped row was found, and which rows have such a row."""
    fallback = untimed.select([*by, *outputs, *([created] if created else [])]).to_pandas()
    frame = result.to_pandas()
    on = by or [_KEY.format("all")]
    if not by:  # a view without entities: every row's "key" is the same
        fallback[on[0]] = frame[on[0]] = 0
    if created:
        fallback = fallback.sort_values(created, na_position="first", kind="stable")
    fallback = fallback.drop_duplicates(on, keep="last").drop(columns=[created] if created else [])
    # pandas merge matches null keys with null keys, as Feast's join does.
    matched = frame[on].merge(fallback, on=on, how="left", indicator=True)
    found = (matched["_merge"] == "both").to_numpy()
    use = found & frame[_VISIBLE].isna().to_numpy()
    for column in outputs:
        frame.loc[use, column] = matched.loc[use, column].to_numpy()
    frame.loc[use, _VISIBLE] = 1
    if not by:
        frame = frame.drop(columns=on)
    return pa.Table.from_pandas(frame, preserve_index=False), pa.array(found)


def _join_view(
    spine: pa.Table,
    timestamp: str,
    view: Any,
    names: Sequence[str],
    repo_path: Any,
    full_feature_names: bool,
    filter_by_created_timestamp: bool,
) -> pa.Table:
    """`spine` with `view`'s features `names`, less the entity rows Feast's join drops."""
    events, event_time, created = _source_table(view, repo_path, names)
    prefix = view.projection.name_to_use()
    outputs = [f"{prefix}__{n}" if full_feature_names else n for n in names]
    events = events.rename_columns([dict(zip(names, outputs, strict=True)).get(c, c) for c in events.column_names])
    # Feast reads both times in UTC (naive ones as UTC).
    for name in [event_time, *([created] if created else [])]:
        events = _set(events, name, _utc(events.column(name)))
    joined, events, by = _comparable_keys(spine, events, _join_keys(view), view.name)
    flagged = events.append_column(_VISIBLE, pa.nulls(events.num_rows, pa.int8()).fill_null(1))
    ttl = view.ttl if view.ttl and view.ttl.total_seconds() != 0 else None
    cutoff = filter_by_created_timestamp and created is not None
    training = functools.partial(
        _point_in_time,
        _FUNCTION,
        joined,
        flagged,
        by=by or None,
        spine_time=timestamp,
        event_time=event_time,
        created=created,
        ttl=ttl,
        null_keys_match=True,
    )
    # As-of values only (the flag too: null when no event is visible), which the join
    # computes without sorting the events.
    result = training(features=[*(as_of(o) for o in outputs), as_of(_VISIBLE)], created_cutoff=cutoff)
    # Feast drops an entity row whose key has feature rows, none of them within the
    # TTL; rows only created too late are blanked, not dropped, so with the cutoff the
    # flag comes from a call without it.
    flags = training(features=[as_of(_VISIBLE)], created_cutoff=False) if cutoff else result
    none_visible = pc.is_null(flags.column(_VISIBLE))
    untimed = pc.is_null(flagged.column(event_time))
    if pc.any(untimed).as_py():
        # Feature rows without an event timestamp pass Feast's TTL filter and are never
        # blanked; they sort before every timestamped row, so they are the answer only
        # when no timestamped row is (the latest created among them).
        result, found = _untimed_fallback(result, flagged.filter(untimed), by, outputs, created)
        none_visible = pc.and_(none_visible, pc.invert(found))
    dropped = pc.and_(_has_rows(joined, events, by), none_visible)
    working = [_VISIBLE, *(c for c in by if c not in spine.column_names)]
    return result.filter(pc.invert(dropped)).drop_columns(working)


def _last_of_repeats(table: pa.Table, columns: list[str]) -> pa.Table:
    """`table` without rows repeating an earlier row's `columns` (the last one kept)."""
    repeated = table.select(columns).to_pandas().duplicated(columns, keep="last").to_numpy()
    return table.filter(pa.array(~repeated)) if repeated.any() else table


def training_set(
    views: Sequence[ViewFeatures],
    entity_df: Any,
    *,
    repo_path: Any,
    full_feature_names: bool = False,
    filter_by_created_timestamp: bool = False,
) -> pd.DataFrame:
    """The frame Feast's file offline store returns for `entity_df` and the features
    `views` lists (each view with the names of its features asked for), computed by the
    arrowfeat join (see the module docstring for the semantics reproduced)."""
    spine, timestamp = _entity_table(entity_df)
    seen: list[str] = []
    for view, names in views:
        _check_declared(view, names)
        keys = _join_keys(view)
        missing = [k for k in keys if k not in spine.column_names]
        if missing:
            raise ArrowfeatValueError(
                f"{_FUNCTION}: argument `entity_df`: expected the join keys of feature view "
                f"{_visible(repr(view.name), 200)} ({_names(keys)}), found no column {_names(missing)}"
            )
        spine = _join_view(spine, timestamp, view, names, repo_path, full_feature_names, filter_by_created_timestamp)
        # Feast removes repeated entity rows after each view, on the join keys seen so far.
        seen += [k for k in keys if k not in seen]
        spine = _last_of_repeats(spine, [*seen, timestamp])
    return spine.to_pandas()


def get_historical_features(
    store: Any,
    entity_df: Any,
    features: Sequence[str],
    *,
    full_feature_names: bool = False,
    filter_by_created_timestamp: bool = False,
) -> Any:
    """The training set Feast's ``store.get_historical_features(entity_df, features).to_df()``
    builds with its file offline store, computed by the arrowfeat join (see the module
    docstring for the exact semantics reproduced). ``entity_df``: a pandas DataFrame with
    the views' join keys and an ``event_timestamp`` column (or one datetime column, as
    Feast infers it). ``filter_by_created_timestamp`` as in Feast: in views with a created
    timestamp column, a row created after the entity row's time is not seen (the entity
    row is kept, with nulls, when that leaves nothing). Rows come in ``entity_df`` order."""
    import pandas as pd

    if isinstance(entity_df, pd.DataFrame) and getattr(store.config, "coerce_tz_aware", True):
        from feast.utils import make_df_tzaware

        # What FeatureStore.get_historical_features does first: every datetime column in UTC.
        entity_df = make_df_tzaware(entity_df)
    return training_set(
        _view_and_features(store, features),
        entity_df,
        repo_path=store.config.repo_path,
        full_feature_names=full_feature_names,
        filter_by_created_timestamp=filter_by_created_timestamp,
    )
