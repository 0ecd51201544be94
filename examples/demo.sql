-- arrowfeat demo: per-event features for a fraud model, computed in SQL with the same
-- kernels that the Python / PySpark packages use.
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
  quantize_int8(l2_normalize(e.embedding), 0.0078125, 128)         AS embedding_q8
FROM events e
JOIN users u ON u.user_id = e.user_id
CROSS JOIN stats s
ORDER BY e.event_id
LIMIT 10;
