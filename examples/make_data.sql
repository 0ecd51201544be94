-- Generates the bundled example data deterministically (no randomness):
--   cargo run -p arrowfeat-cli -- sql --file examples/make_data.sql
-- Writes examples/data/events.parquet and examples/data/users.csv.

COPY (
  SELECT
    i AS event_id,
    'user_' || CAST(i * 7919 % 200 AS VARCHAR) AS user_id,
    arrow_cast(1793491200000000 + i * 37000000, 'Timestamp(Microsecond, Some("UTC"))') AS event_ts,
    round(5 + abs(sin(i * 1.3)) * 120 + (i % 7) * 3.5, 2) AS amount,
    48.80 + (i % 50) * 0.004 AS lat,
    2.30 + (i % 37) * 0.005 AS lon,
    CASE i % 4 WHEN 0 THEN 'web' WHEN 1 THEN 'ios' WHEN 2 THEN 'android' ELSE 'pos' END AS channel,
    arrow_cast(make_array(
      sin(i * 0.11), cos(i * 0.13), sin(i * 0.17), cos(i * 0.19),
      sin(i * 0.23), cos(i * 0.29), sin(i * 0.31), cos(i * 0.37)
    ), 'FixedSizeList(8, Float32)') AS embedding
  FROM generate_series(0, 1999) AS s(i)
) TO 'examples/data/events.parquet' STORED AS PARQUET;

COPY (
  SELECT
    'user_' || CAST(u AS VARCHAR) AS user_id,
    CASE u % 3 WHEN 0 THEN 'free' WHEN 1 THEN 'plus' ELSE 'pro' END AS plan,
    18 + (u * 13) % 60 AS age
  FROM generate_series(0, 199) AS s(u)
) TO 'examples/data/users.csv' STORED AS CSV OPTIONS ('format.has_header' 'true');
