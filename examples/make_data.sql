-- Generates the bundled example data deterministically (no randomness):
--   cargo run -p arrowfeat-cli -- sql --file examples/make_data.sql
-- Writes examples/data/events.parquet, events_next_day.parquet, users.csv and labels.csv.

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

-- Labels for a training set: one per 40th event's user, an hour after that event, with
-- whether the user's next event was large (arrowfeat training-set joins features to them).
COPY (
  SELECT
    e.user_id,
    e.event_ts + INTERVAL '1 hour' AS label_ts,
    CAST(e.event_id % 7 = 0 AS INT) AS label
  FROM 'examples/data/events.parquet' e
  WHERE e.event_id % 40 = 0
  ORDER BY e.event_id DESC
) TO 'examples/data/labels.csv' STORED AS CSV OPTIONS ('format.has_header' 'true');

-- The next day's events, for `arrowfeat drift`: amounts up 15% on every third event, a
-- new channel `kiosk` on every tenth, and `lon` missing on every eighth.
COPY (
  SELECT
    i AS event_id,
    'user_' || CAST(i * 7919 % 200 AS VARCHAR) AS user_id,
    arrow_cast(1793491200000000 + i * 37000000, 'Timestamp(Microsecond, Some("UTC"))') AS event_ts,
    round((5 + abs(sin(i * 1.3)) * 120 + (i % 7) * 3.5) * CASE WHEN i % 3 = 0 THEN 1.15 ELSE 1 END, 2) AS amount,
    48.80 + (i % 50) * 0.004 AS lat,
    CASE WHEN i % 8 = 0 THEN NULL ELSE 2.30 + (i % 37) * 0.005 END AS lon,
    CASE WHEN i % 10 = 0 THEN 'kiosk' ELSE
      CASE i % 4 WHEN 0 THEN 'web' WHEN 1 THEN 'ios' WHEN 2 THEN 'android' ELSE 'pos' END
    END AS channel,
    arrow_cast(make_array(
      sin(i * 0.11), cos(i * 0.13), sin(i * 0.17), cos(i * 0.19),
      sin(i * 0.23), cos(i * 0.29), sin(i * 0.31), cos(i * 0.37)
    ), 'FixedSizeList(8, Float32)') AS embedding
  FROM generate_series(2000, 3999) AS s(i)
) TO 'examples/data/events_next_day.parquet' STORED AS PARQUET;
