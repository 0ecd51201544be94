"""A Feast offline store whose ``get_historical_features`` is the arrowfeat join.

In ``feature_store.yaml``::

    offline_store:
        type: arrowfeat.feast.ArrowfeatOfflineStore

Feast then imports ``ArrowfeatOfflineStore`` and ``ArrowfeatOfflineStoreConfig`` from
``arrowfeat.feast``. Training sets (``store.get_historical_features(entity_df, ...)``)
come from ``_feast_training``, the code behind ``arrowfeat.feast.get_historical_features``;
everything else (materialization, ``pull_latest_from_table_or_query``,
``pull_all_from_table_or_query``, ``offline_write_batch``, saved datasets, logging,
retrieval without an ``entity_df``) is Feast's own file (dask) offline store, which this
store extends, on the same Parquet ``FileSource``s.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
import pyarrow as pa
from feast.infra.offline_stores.dask import (
    DaskOfflineStore,
    DaskOfflineStoreConfig,
    DaskRetrievalJob,
    _get_entity_df_event_timestamp_range,
)
from feast.infra.offline_stores.offline_store import RetrievalMetadata
from feast.on_demand_feature_view import OnDemandFeatureView
from feast.utils import _get_requested_feature_views_to_features_dict

from ._feast_training import _entity_timestamp, training_set

__all__ = ["ArrowfeatOfflineStore", "ArrowfeatOfflineStoreConfig", "ArrowfeatRetrievalJob"]


class ArrowfeatOfflineStoreConfig(DaskOfflineStoreConfig):  # type: ignore[misc]
    """The ``offline_store`` section of ``feature_store.yaml``: only ``type``. It extends
    the file store's config, so the file store's methods accept it."""

    type: Literal["arrowfeat.feast.ArrowfeatOfflineStore"] = "arrowfeat.feast.ArrowfeatOfflineStore"


class ArrowfeatRetrievalJob(DaskRetrievalJob):  # type: ignore[misc]
    """A lazy training set: the join runs on ``to_df()`` / ``to_arrow()``, each time, as
    in the file store. ``to_arrow()`` is the Arrow table of the frame, as the file store
    makes it (so types are the same in both stores); ``persist`` writes Parquet as the
    file store does."""

    def _to_df_internal(self, timeout: int | None = None) -> pd.DataFrame:
        frame: pd.DataFrame = self.evaluation_function()
        return frame

    def _to_arrow_internal(self, timeout: int | None = None) -> pa.Table:
        return pa.Table.from_pandas(self.evaluation_function())


class ArrowfeatOfflineStore(DaskOfflineStore):  # type: ignore[misc]
    """Feast's file offline store with training sets from the arrowfeat join: the same
    rows and values as ``type: file`` (docs/feast.md), without its pandas/dask join."""

    @staticmethod
    def get_historical_features(
        config: Any,
        feature_views: list[Any],
        feature_refs: list[str],
        entity_df: Any,
        registry: Any,
        project: str,
        full_feature_names: bool = False,
        filter_by_created_timestamp: bool = False,
        **kwargs: Any,
    ) -> Any:
        if entity_df is None:
            # A time range instead of entity rows (start_date, end_date): Feast's own.
            return DaskOfflineStore.get_historical_features(
                config,
                feature_views,
                feature_refs,
                entity_df,
                registry,
                project,
                full_feature_names,
                filter_by_created_timestamp=filter_by_created_timestamp,
                **kwargs,
            )
        # What the file store checks at once: the entity_df's type and timestamp column,
        # and the feature references. The join waits for to_df() / to_arrow().
        timestamp = _entity_timestamp(entity_df)
        on_demand = OnDemandFeatureView.get_requested_odfvs(feature_refs, project, registry)
        views, _ = _get_requested_feature_views_to_features_dict(feature_refs, feature_views, on_demand)
        requested = list(views.items())

        def evaluate() -> pd.DataFrame:
            return training_set(
                requested,
                entity_df,
                repo_path=config.repo_path,
                full_feature_names=full_feature_names,
                filter_by_created_timestamp=filter_by_created_timestamp,
            )

        start, end = _get_entity_df_event_timestamp_range(entity_df, timestamp)
        return ArrowfeatRetrievalJob(
            evaluation_function=evaluate,
            full_feature_names=full_feature_names,
            repo_path=str(config.repo_path),
            on_demand_feature_views=on_demand,
            metadata=RetrievalMetadata(
                features=feature_refs,
                keys=list(set(entity_df.columns) - {timestamp}),
                min_event_timestamp=start,
                max_event_timestamp=end,
            ),
        )
