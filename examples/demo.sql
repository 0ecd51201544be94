-- arrowfeat demo: per-event features for a fraud model (scaled amounts, buckets, hashes,
-- embeddings, distances and event-time windows), computed in SQL with the same kernels
-- that the Python / PySpark packages use.
--   arrowfeat sql --file examples/demo.sql --table events=examples/data/events.parquet --table users=examples/data/users.csv

WITH stats AS (
  SELECT avg(amount) AS mean_amount, stddev_pop(amount) AS std_amount FROM events
)
SELECT
  e.event_id,
  e.user_id,
  u.plan,
  round(standard_scale(e.amount, s.mean_amount, s.std_amount), 4) AS amount_z,
  bucketize(u.age, [25, 35, 50, 65])                               AS age_bucket,
  hash_bucket(e.user_id, e.channel, 1024)                          AS user_channel_bucket,
  round(haversine_km(e.lat, e.lon, 48.8566, 2.3522), 3)            AS km_from_store,
  round(cosine_similarity(e.embedding, [1, 0, 1, 0, 1, 0, 1, 0]), 4) AS sim_to_fraud_profile,
  quantize_int8(l2_normalize(e.embedding), 0.0078125, 128)         AS embedding_q8,
  round(rolling_sum(e.amount, e.event_ts, '6h') OVER per_user, 2)  AS amount_6h,
  rolling_count(e.amount, e.event_ts, '1d', 'left') OVER per_user   AS events_before_1d,
  get_field(session_window(e.event_ts, '3h') OVER per_user, 'start') AS session_start
FROM events e
JOIN users u ON u.user_id = e.user_id
CROSS JOIN stats s
WINDOW per_user AS (PARTITION BY e.user_id ORDER BY e.event_ts)
-- The latest events, which have history for the window features.
ORDER BY e.event_id DESC
LIMIT 10;
