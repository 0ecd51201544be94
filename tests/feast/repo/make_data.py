"""Writes the small Parquet files the feature repo's sources point at (deterministic)."""

import pathlib
import sys
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "data")
out.mkdir(parents=True, exist_ok=True)
ts = pa.array([datetime(2026, 1, 1, h, tzinfo=timezone.utc) for h in range(3)], pa.timestamp("us", "UTC"))

pq.write_table(pa.table({
    "driver_id": pa.array([1001, 1002, 1003], pa.int64()),
    "conv_rate": pa.array([0.5, 0.25, 0.75], pa.float32()),
    "acc_rate": pa.array([0.9, 0.8, 0.95], pa.float32()),
    "avg_daily_trips": pa.array([10, 20, 30], pa.int64()),
    "event_timestamp": ts,
    "created": ts,
}), out / "driver_stats.parquet")

pq.write_table(pa.table({
    "customer_id": pa.array(["c1", "c2", "c3"]),
    "lifetime_value": pa.array([10.0, 250.5, 99.9]),
    "signup_channel": pa.array(["web", "app", "web"]),
    "last_order_ts": ts,
    "profile_embedding": pa.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], pa.list_(pa.float32())),
    "event_timestamp": ts,
}), out / "customer_profile.parquet")

pq.write_table(pa.table({
    "driver_id": pa.array([1001, 1002, 1003], pa.int64()),
    "customer_id": pa.array(["c1", "c2", "c3"]),
    "trips_7d": pa.array([3, 5, 1], pa.int32()),
    "avg_rating_7d": pa.array([4.5, 4.8, 3.9]),
    "trip_ts": ts,
}), out / "driver_customer_trips.parquet")
