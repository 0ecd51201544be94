"""Feast training sets from the arrowfeat point-in-time kernel: what Feast's
``store.get_historical_features(entity_df, features).to_df()`` returns for views over
Parquet ``FileSource``s, row for row and value for value, without Feast's pandas/dask join.

Feast's semantics, as its file (dask) offline store implements them (feast 0.67,
``infra/offline_stores/dask.py``), and as this module reproduces them:

- a feature row is visible at an entity row's time ``t`` when its event timestamp is in
  ``[t - ttl, t]`` (both ends included; no TTL, or a TTL of 0: ``(-inf, t]``);
- among visible rows the latest event timestamp wins, ties to the latest created
  timestamp;
- join keys match as pandas ``merge`` matches them (a null key matches a null key);
- an entity row whose key has feature rows, none of them visible, is **dropped** from
  the result (Feast filters the merged rows by the TTL after a left join, so nothing of
  that entity row is left); an entity row whose key has no feature row at all is kept,
  with nulls. With several feature views the drops compound;
- entity rows repeating the same join keys and timestamp appear once (the last);
- with ``filter_by_created_timestamp=True`` (opt-in, Feast 0.66+), in a view with a
  created timestamp column, a row created after ``t`` (or without a created timestamp)
  is blanked: it is not seen, but unlike the TTL it does not drop the entity row, which
  keeps nulls when no row is left (``_apply_created_timestamp_cutoff``);
- feature rows without an event timestamp pass the TTL filter and are never blanked:
  they are the answer when no timestamped row is (the latest created among them).

Not reproduced yet (docs/point-in-time.md, "Known differences"): Feast's per-view removal
of repeated entity rows when views have different join keys.
"""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._convert import _visible
from .errors import ArrowfeatTypeError, ArrowfeatValueError
from .point_in_time import _point_in_time, as_of

_FUNCTION = "get_historical_features"


def _view_and_features(store: Any, features: list[str]) -> dict[str, list[str]]:
    views: dict[str, list[str]] = {}
    for reference in features:
        if not isinstance(reference, str) or reference.count(":") != 1:
            raise ArrowfeatValueError(
                f"{_FUNCTION}: argument `features`: expected references such as 'view:feature', found {reference!r}"
            )
        view, feature = reference.split(":")
        views.setdefault(view, []).append(feature)
    return views


def _source_table(view: Any, columns: list[str]) -> tuple[pa.Table, str, str | None]:
    from feast.infra.offline_stores.file_source import FileSource

    source = view.batch_source
    if not isinstance(source, FileSource):
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: feature view {view.name!r}: expected a FileSource (Parquet), found {type(source).__name__}"
        )
    mapping = dict(source.field_mapping or {})
    reverse = {v: k for k, v in mapping.items()}
    timestamp = source.timestamp_field
    created = source.created_timestamp_column or None
    wanted = {reverse.get(c, c) for c in columns} | {timestamp} | ({created} if created else set())
    path = source.path
    table = pq.read_table(path, columns=sorted(wanted))
    table = table.rename_columns([mapping.get(c, c) for c in table.column_names])
    return table, mapping.get(timestamp, timestamp), mapping.get(created, created) if created else None


def _utc(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Naive timestamps are UTC, as Feast normalises them."""
    if pa.types.is_timestamp(column.type) and column.type.tz is None:
        return column.cast(pa.timestamp(column.type.unit, tz="UTC"))
    return column


def _key_tuples(table: pa.Table, keys: list[str]) -> list[tuple[Any, ...]]:
    return list(zip(*(table.column(k).to_pylist() for k in keys), strict=True))


def _has_rows(spine: pa.Table, events: pa.Table, keys: list[str]) -> pa.Array:
    """Whether each spine row's key has any event row (a null key matching a null key, as
    in pandas ``merge``)."""
    if len(keys) == 1:
        present = pc.unique(events.column(keys[0]).combine_chunks())
        return pc.is_in(spine.column(keys[0]), value_set=present, skip_nulls=False).combine_chunks()
    seen = set(_key_tuples(events, keys))
    return pa.array([k in seen for k in _key_tuples(spine, keys)])


def _untimed_fallback(
    result: pa.Table, untimed: pa.Table, keys: list[str], outputs: list[str], created: str | None, visible: str
) -> tuple[pa.Table, pa.Array]:
    """`result` with the values of each key's last untimed feature row (by created time,
    nulls first) where no timestamped row was found, and which rows have such a row."""
    fallback = untimed.select([*keys, *outputs, *([created] if created else [])]).to_pandas()
    if created:
        fallback = fallback.sort_values(created, na_position="first", kind="stable")
    fallback = fallback.drop_duplicates(keys, keep="last").drop(columns=[created] if created else [])
    frame = result.to_pandas()
    # pandas merge matches null keys with null keys, as Feast's join does.
    matched = frame[keys].merge(fallback, on=keys, how="left", indicator=True)
    found = (matched["_merge"] == "both").to_numpy()
    use = found & frame[visible].isna().to_numpy()
    for column in outputs:
        frame.loc[use, column] = matched.loc[use, column].to_numpy()
    frame.loc[use, visible] = 1
    return pa.Table.from_pandas(frame, preserve_index=False), pa.array(found)


def get_historical_features(
    store: Any,
    entity_df: Any,
    features: list[str],
    *,
    full_feature_names: bool = False,
    filter_by_created_timestamp: bool = False,
) -> Any:
    """The training set Feast's ``store.get_historical_features(entity_df, features).to_df()``
    builds, computed by the arrowfeat kernels (see the module docstring for the exact
    semantics reproduced). ``entity_df``: a pandas DataFrame with the views' join keys and
    an ``event_timestamp`` column (or one datetime column, as Feast infers it).
    ``filter_by_created_timestamp`` as in Feast: in views with a created timestamp
    column, a row created after the entity row's time is not seen (the entity row is
    kept, with nulls, when that leaves nothing)."""
    import pandas as pd
    from feast.infra.offline_stores.offline_utils import infer_event_timestamp_from_entity_df

    if not isinstance(entity_df, pd.DataFrame):
        raise ArrowfeatTypeError(
            f"{_FUNCTION}: argument `entity_df`: expected a pandas DataFrame, found {type(entity_df)}"
        )
    timestamp = infer_event_timestamp_from_entity_df(dict(entity_df.dtypes))
    spine = pa.Table.from_pandas(entity_df, preserve_index=False)
    spine = spine.set_column(spine.column_names.index(timestamp), timestamp, _utc(spine.column(timestamp)))
    keep = pa.array([True] * spine.num_rows)
    views = _view_and_features(store, features)
    join_keys: list[str] = []
    for view_name, names in views.items():
        view = store.get_feature_view(view_name)
        keys = [c.name for c in view.entity_columns]
        missing = [k for k in keys if k not in spine.column_names]
        if missing:
            raise ArrowfeatValueError(
                f"{_FUNCTION}: argument `entity_df`: expected the join keys of {_visible(repr(view_name), 200)} "
                f"({', '.join(_visible(k, 60) for k in keys[:20])}), "
                f"found no column {', '.join(_visible(k, 60) for k in missing[:20])}"
            )
        join_keys += [k for k in keys if k not in join_keys]
        events, event_time, created = _source_table(view, keys + names)
        for k in keys:
            # pandas merge matches 1 and 1.0; the kernel needs one key type.
            events = events.set_column(
                events.column_names.index(k), k, events.column(k).cast(spine.schema.field(k).type)
            )
        events = events.set_column(events.column_names.index(event_time), event_time, _utc(events.column(event_time)))
        ttl = view.ttl if view.ttl and view.ttl.total_seconds() != 0 else None
        visible = "__arrowfeat_visible"
        renamed = events.rename_columns(
            [f"{view_name}__{c}" if c in names and full_feature_names else c for c in events.column_names]
        )
        outputs = [f"{view_name}__{n}" if full_feature_names else n for n in names]
        flagged = renamed.append_column(visible, pa.nulls(renamed.num_rows, pa.int8()).fill_null(1))
        cutoff = filter_by_created_timestamp and created is not None

        training = functools.partial(
            _point_in_time,
            "get_historical_features",
            spine,
            flagged,
            by=keys,
            spine_time=timestamp,
            event_time=event_time,
            created=created,
            ttl=ttl,
            null_keys_match=True,
        )
        # As-of values only (the flag too: null when no event is visible), which the
        # kernel computes without sorting the events.
        result = training(features=[*(as_of(o) for o in outputs), as_of(visible)], created_cutoff=cutoff)
        # Feast drops an entity row whose key has feature rows, none of them within the
        # TTL; rows only created too late are blanked, not dropped, so with the cutoff
        # the flag comes from a call without it.
        flags = training(features=[as_of(visible)], created_cutoff=False) if cutoff else result
        none_visible = pc.is_null(flags.column(visible))
        untimed = pc.is_null(renamed.column(event_time))
        if pc.any(untimed).as_py():
            # Feature rows without an event timestamp pass Feast's TTL filter and are never
            # blanked; they sort before every timestamped row, so they are the answer only
            # when no timestamped row is (the latest created among them).
            result, found = _untimed_fallback(result, renamed.filter(untimed), keys, outputs, created, visible)
            none_visible = pc.and_(none_visible, pc.invert(found))
        keep = pc.and_(keep, pc.invert(pc.and_(_has_rows(spine, events, keys), none_visible)))
        spine = result.drop_columns([visible])
    out = spine.to_pandas()
    out = out[keep.to_numpy(zero_copy_only=False)]
    # Entity rows with the same keys and timestamp appear once, the last.
    out = out.drop_duplicates([*join_keys, timestamp], keep="last")
    return out.reset_index(drop=True)
