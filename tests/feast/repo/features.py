"""Feature definitions for arrowfeat's Feast tests.

Each feature view carries a `schema_version` tag; arrowfeat checks it against the
`schema_version` of the matching schema file in tests/feast/schemas/.
"""

from datetime import timedelta

from feast import Entity, FeatureView, Field, FileSource
from feast.types import Array, Float32, Float64, Int32, Int64, String, UnixTimestamp
from feast.value_type import ValueType

driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
customer = Entity(name="customer", join_keys=["customer_id"], value_type=ValueType.STRING)

driver_stats_source = FileSource(
    name="driver_stats_source",
    path="data/driver_stats.parquet",
    timestamp_field="event_timestamp",
    created_timestamp_column="created",
)

customer_source = FileSource(
    name="customer_profile_source",
    path="data/customer_profile.parquet",
    timestamp_field="event_timestamp",
)

trips_source = FileSource(
    name="driver_customer_trips_source",
    path="data/driver_customer_trips.parquet",
    timestamp_field="trip_ts",
)

driver_hourly_stats_v1 = FeatureView(
    name="driver_hourly_stats_v1",
    entities=[driver],
    ttl=timedelta(days=1),
    schema=[
        Field(name="driver_id", dtype=Int64),
        Field(name="conv_rate", dtype=Float32, description="Conversion rate over the hour"),
        Field(name="acc_rate", dtype=Float32),
        Field(name="avg_daily_trips", dtype=Int64),
    ],
    online=True,
    source=driver_stats_source,
    tags={"schema_version": "1.2.0", "team": "drivers"},
    owner="drivers@example.com",
)

customer_profile_v2 = FeatureView(
    name="customer_profile_v2",
    entities=[customer],
    ttl=timedelta(days=30),
    schema=[
        Field(name="customer_id", dtype=String),
        Field(name="lifetime_value", dtype=Float64),
        Field(name="signup_channel", dtype=String),
        Field(name="last_order_ts", dtype=UnixTimestamp),
        Field(name="profile_embedding", dtype=Array(Float32)),
    ],
    source=customer_source,
    tags={"schema_version": "2.1.0"},
)

driver_customer_trips_v1 = FeatureView(
    name="driver_customer_trips_v1",
    entities=[driver, customer],
    ttl=timedelta(hours=6),
    schema=[
        Field(name="driver_id", dtype=Int64),
        Field(name="customer_id", dtype=String),
        Field(name="trips_7d", dtype=Int32),
        Field(name="avg_rating_7d", dtype=Float64),
    ],
    source=trips_source,
    tags={"schema_version": "1.0.0"},
)
