//! The data gate on fixture data: each rule fires on its fault with the right count and a
//! bounded sample, and stays quiet on clean data, in Parquet, CSV, JSON and a
//! Hive-partitioned directory; unreadable data is an input finding, never a panic.

use arrowfeat_gate::DataPaths;
use arrowfeat_validator::checks::data::DataOptions;
use arrowfeat_validator::checks::load_bytes;
use arrowfeat_validator::report::{Check, Status};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::run::DataSource;
use arrowfeat_validator::spec::model::SchemaFile;

const SCHEMA: &str = "\
name: payments_v1
schema_version: 1.0.0
entities:
  - name: customer
    join_key: k
    type: int64
event_timestamp:
  name: ts
  type: timestamp
  unit: us
  tz: UTC
created_timestamp:
  name: created
ttl: 1h
features:
  - name: x
    type: float64
    nullable: false
    constraints:
      min: 0
      max: 10
  - name: c
    type: string
    constraints:
      allowed_values: [a, b]
";

/// 2026-01-01T12:00:00Z
const AS_OF: i64 = 1_767_268_800_000_000_000;

/// Rows as SQL: (k, ts, created, x, c).
const CLEAN: &[&str] = &[
    "(1, '2026-01-01T11:00:00Z', '2026-01-01T11:00:01Z', 1.5, 'a')",
    "(1, '2026-01-01T11:30:00Z', '2026-01-01T11:30:00Z', 2.5, 'b')",
    "(2, '2026-01-01T11:45:00Z', '2026-01-01T11:46:00Z', 0.0, NULL)",
    "(3, '2026-01-01T11:59:59Z', '2026-01-01T12:00:00Z', 10.0, 'a')",
];

fn schema() -> SchemaFile {
    let (report, file) = load_bytes("payments.yaml", SCHEMA.as_bytes());
    assert!(
        report.checks.iter().all(|c| c.status == Status::Pass),
        "{:?}",
        report.checks
    );
    file.expect("the fixture schema reads")
}

/// Writes `rows` to `path` in `format` (parquet, csv, json) with DataFusion.
fn write(path: &std::path::Path, rows: &[&str], format: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ctx = datafusion::prelude::SessionContext::new();
        let sql = format!(
            "COPY (SELECT CAST(column1 AS BIGINT) AS k, \
                    arrow_cast(CAST(column2 AS TIMESTAMP), 'Timestamp(µs, \"UTC\")') AS ts, \
                    arrow_cast(CAST(column3 AS TIMESTAMP), 'Timestamp(µs, \"UTC\")') AS created, \
                    CAST(column4 AS DOUBLE) AS x, CAST(column5 AS VARCHAR) AS c \
             FROM (VALUES {})) TO '{}' STORED AS {format}",
            rows.join(", "),
            path.display()
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    });
}

fn check(path: &std::path::Path, sample_rows: usize) -> Vec<Check> {
    let paths = DataPaths::new(
        vec![(None, path.to_string_lossy().into_owned())],
        DataOptions {
            as_of_nanos: AS_OF,
            sample_rows,
        },
    );
    paths
        .check(&schema(), None, &Default::default())
        .expect("data for the view")
}

fn findings(checks: &[Check]) -> Vec<(Rule, String)> {
    checks
        .iter()
        .filter(|c| c.status.is_finding())
        .map(|c| (c.rule, c.message.clone()))
        .collect()
}

#[test]
fn clean_data_passes_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["parquet", "csv", "json"] {
        let path = dir.path().join(format!("clean.{format}"));
        write(&path, CLEAN, format);
        let checks = check(&path, 5);
        let found = findings(&checks);
        // CSV and JSON hold times as text, read in the zone the schema declares.
        assert!(found.is_empty(), "{format}: {found:#?}");
        assert!(checks.len() > 15, "{format}: {} checks", checks.len());
        assert!(checks.iter().any(|c| c.rule == Rule::DataStaleKeys));
    }
}

/// [`SCHEMA`] with event times in nanoseconds in `tz`, and a TTL no key outlives.
fn nanosecond_schema(tz: &str) -> String {
    SCHEMA
        .replace(
            "  unit: us\n  tz: UTC\n",
            &format!("  unit: ns\n  tz: {tz}\n"),
        )
        .replace("ttl: 1h", "ttl: 100000d")
}

/// A CSV time with an offset is that instant; one without is a time in the declared
/// zone (UTC here), as a naive Parquet time is: 12:30+02:00 is 10:30Z, not a future event
/// at 12:00Z; 12:30Z and a naive 12:30 are.
#[test]
fn csv_times_are_read_in_the_declared_zone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("times.csv");
    std::fs::write(
        &path,
        "k,ts,created,x,c\n\
         1,2026-01-01T12:30:00+02:00,2026-01-01T12:30:00+02:00,1.0,a\n\
         2,2026-01-01T12:30:00Z,2026-01-01T12:30:00Z,1.0,a\n\
         3,2026-01-01T12:30:00,2026-01-01T12:30:00,1.0,a\n",
    )
    .unwrap();
    let checks = check(&path, 5);
    let found = findings(&checks);
    // No type finding: the text's times are read at the declared unit and zone. k=1's
    // one event is 10:30Z: not in the future, and older than the TTL (1 h) at 12:00Z.
    let rules: Vec<Rule> = found.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(
        rules,
        [Rule::DataFutureEvent, Rule::DataStaleKeys],
        "{found:#?}"
    );
    let (future, stale) = (&found[0].1, &found[1].1);
    assert!(future.starts_with("2 of 3 rows"), "{future}");
    assert!(!future.contains("k=1"), "{future}");
    assert!(future.contains("k=3, ts=2026-01-01T12:30:00Z"), "{future}");
    assert!(stale.starts_with("1 of 3 keys"), "{stale}");
    assert!(
        stale.contains("k=1, #latest event=2026-01-01T10:30:00Z"),
        "{stale}"
    );
}

/// A naive CSV time that the declared zone skips (a daylight saving change) names the
/// file, line, column and value, in words; a created time is read at its own unit, so a
/// far sentinel against nanosecond event times reads; an unknown declared zone reads the
/// times in UTC, as a Parquet file's (a warning, not the data's fault).
#[test]
fn csv_times_in_zones_name_what_does_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let schema = nanosecond_schema;
    let gap = dir.path().join("gap.csv");
    std::fs::write(
        &gap,
        "k,ts,created,x,c\n1,2025-03-08 02:30:00,2025-03-08 02:30:00,1.0,a\n\
         1,2025-03-09 02:30:00,2025-03-09 03:30:00,1.0,a\n",
    )
    .unwrap();
    let checks = check_yaml(&schema("America/New_York"), &gap);
    assert_unreadable(&checks, "gap.csv' line 3: expected a time in column `ts`, found '2025-03-09 02:30:00': a local time that America/New_York skips or repeats");
    // Whole seconds written with a `.000` fraction are whole seconds, not milliseconds
    // that a schema of seconds would cut; `.500` would be.
    let millis = dir.path().join("millis.csv");
    let seconds = SCHEMA.replace("  unit: us\n", "  unit: s\n");
    for (fraction, cut) in [(".000", false), (".500", true)] {
        std::fs::write(
            &millis,
            format!("k,ts,created,x,c\n1,2026-01-01T11:00:00{fraction}Z,,1.0,a\n"),
        )
        .unwrap();
        let found = findings(&check_yaml(&seconds, &millis));
        assert_eq!(
            found
                .iter()
                .any(|(rule, m)| *rule == Rule::DataColumnType && m.contains("truncated")),
            cut,
            "{fraction}: {found:#?}"
        );
    }
    let sentinel = dir.path().join("sentinel.csv");
    std::fs::write(
        &sentinel,
        "k,ts,created,x,c\n1,2026-01-01T11:00:00Z,9999-12-31T00:00:00Z,1.0,a\n",
    )
    .unwrap();
    let checks = check_yaml(&schema("UTC"), &sentinel);
    assert!(findings(&checks).is_empty(), "{:#?}", findings(&checks));
    let checks = check_yaml(&schema("Mars/Olympus"), &sentinel);
    let found = findings(&checks);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Rule::DataColumnType);
    assert_eq!(
        checks
            .iter()
            .find(|c| c.status.is_finding())
            .unwrap()
            .status,
        Status::Warning
    );
}

/// JSON's times are strings: read as CSV's are, in the declared zone, at a unit that
/// holds every value (the created time at its own: 11:00:00 is before 11:00:00.5; a
/// `.000` fraction is whole seconds); a column with a value
/// that is no time stays text, a type finding; a value the declared zone skips names the
/// file, line, column and value; a time nanoseconds cannot hold too.
#[test]
fn json_times_are_read_in_the_declared_zone_without_cutting_digits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("times.json");
    std::fs::write(
        &path,
        "{\"k\": 1, \"ts\": \"2026-01-01T12:30:00+02:00\", \"created\": \"2026-01-01T12:30:00+02:00\", \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 2, \"ts\": \"2026-01-01T12:30:00Z\", \"created\": \"2026-01-01T12:30:00.000Z\", \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 3, \"ts\": \"2026-01-01 12:30:00\", \"created\": null, \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 4, \"ts\": \"2026-01-01T11:00:00.5Z\", \"created\": \"2026-01-01T11:00:00Z\", \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let checks = check(&path, 5);
    let found = findings(&checks);
    let rules: Vec<Rule> = found.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(
        rules,
        [
            Rule::DataFutureEvent,
            Rule::DataCreatedBeforeEvent,
            Rule::DataStaleKeys
        ],
        "{found:#?}"
    );
    let (future, created, stale) = (&found[0].1, &found[1].1, &found[2].1);
    assert!(created.contains("k=4"), "{created}");
    assert!(created.contains("ts=2026-01-01T11:00:00.500Z"), "{created}");
    assert!(future.starts_with("2 of 4 rows"), "{future}");
    assert!(future.contains("k=3, ts=2026-01-01T12:30:00Z"), "{future}");
    assert!(
        stale.contains("k=1, #latest event=2026-01-01T10:30:00Z"),
        "{stale}"
    );

    let text = dir.path().join("text.json");
    std::fs::write(
        &text,
        "{\"k\": 1, \"ts\": \"2026-01-01T11:00:00Z\", \"created\": \"2026-01-01T11:00:00Z\", \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 2, \"ts\": \"yesterday\", \"created\": \"2026-01-01T11:00:00Z\", \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let found = findings(&check(&text, 5));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Rule::DataColumnType);
    assert!(found[0].1.starts_with("`ts` in "), "{}", found[0].1);

    let schema = nanosecond_schema;
    let gap = dir.path().join("gap.json");
    std::fs::write(
        &gap,
        "{\"k\": 1, \"ts\": \"2025-03-08 02:30:00\", \"created\": \"2025-03-08 02:30:00\", \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 1, \"ts\": \"2025-03-09 02:30:00\", \"created\": \"2025-03-09 03:30:00\", \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let checks = check_yaml(&schema("America/New_York"), &gap);
    assert_unreadable(&checks, "gap.json' line 2: expected a time in column `ts`, found '2025-03-09 02:30:00': a local time that America/New_York skips or repeats");
    let far = dir.path().join("far.json");
    std::fs::write(
        &far,
        "{\"k\": 1, \"ts\": \"9999-12-31T00:00:00Z\", \"created\": \"9999-12-31T00:00:00Z\", \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let checks = check_yaml(&schema("UTC"), &far);
    assert_unreadable(&checks, "far.json' line 1: expected a time from 1677-09-21 to 2262-04-11 in column `ts`, which is read in nanoseconds (the unit the schema declares, or that its values' digits need), found 9999-12-31T00:00:00+00:00");
}

/// CSV files of one directory whose times have different digits (one file of whole
/// seconds, one with fractions) are one table at the finer unit, as one file of both is;
/// a column of empty values is the declared time's nulls, not a column of no type; a
/// column of two other types is refused naming that column, not the times.
#[test]
fn csv_files_with_times_of_different_digits_are_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("table");
    std::fs::create_dir(&table).unwrap();
    let header = "k,ts,created,x,c\n";
    std::fs::write(
        table.join("a.csv"),
        format!("{header}1,2026-01-01T11:00:00Z,,1.0,a\n"),
    )
    .unwrap();
    std::fs::write(
        table.join("b.csv"),
        format!("{header}2,2026-01-01T11:00:00.5Z,,1.0,a\n3,2026-01-01T12:00:00.25Z,,1.0,a\n"),
    )
    .unwrap();
    let found = findings(&check(&table, 5));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Rule::DataFutureEvent);
    assert!(
        found[0].1.contains("k=3, ts=2026-01-01T12:00:00.250Z"),
        "{}",
        found[0].1
    );
    std::fs::write(
        table.join("c.csv"),
        format!("{header}4,2026-01-01T11:00:00Z,,many,a\n"),
    )
    .unwrap();
    let checks = check(&table, 5);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0].rule, Rule::DataUnreadable);
    let message = &checks[0].message;
    assert!(
        message.contains("give column `x` two types: 'c.csv' has Utf8 where 'a.csv' has Float64"),
        "{message}"
    );
    assert_eq!(message.matches("table'").count(), 1, "{message}");
}

/// A created time of another unit than its event time is compared exactly: half a
/// microsecond before its event is before it, also before 1970 (where a cast to a common
/// unit rounds toward zero), and a created time in 9999 against nanosecond event times
/// overflows nothing.
#[test]
fn created_times_of_another_unit_compare_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("times.csv");
    let far = SCHEMA.replace("ttl: 1h", "ttl: 100000d");
    // Event times in microseconds, created times in nanoseconds (from their digits).
    std::fs::write(
        &path,
        "k,ts,created,x,c\n\
         1,1969-12-31T23:59:59.999999Z,1969-12-31T23:59:59.9999985Z,1.0,a\n\
         2,1969-12-31T23:59:59.999999Z,1969-12-31T23:59:59.9999995Z,1.0,a\n",
    )
    .unwrap();
    let found = findings(&check_yaml(&far, &path));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Rule::DataCreatedBeforeEvent);
    assert!(found[0].1.starts_with("1 of 2 rows"), "{}", found[0].1);
    assert!(found[0].1.contains("k=1"), "{}", found[0].1);
    // Event times in nanoseconds, created times in microseconds and seconds.
    std::fs::write(
        &path,
        "k,ts,created,x,c\n\
         1,1970-01-01T00:00:00.0000015Z,1970-01-01T00:00:00.000001Z,1.0,a\n\
         2,1970-01-01T00:00:00.0000015Z,1970-01-01T00:00:00.000002Z,1.0,a\n",
    )
    .unwrap();
    let found = findings(&check_yaml(&nanosecond_schema("UTC"), &path));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Rule::DataCreatedBeforeEvent);
    assert!(found[0].1.contains("k=1"), "{}", found[0].1);
    std::fs::write(
        &path,
        "k,ts,created,x,c\n1,2262-04-11T23:47:16.854775807Z,9999-12-31T00:00:00Z,1.0,a\n\
         2,1677-09-21T00:12:43.145224192Z,1677-09-21T00:12:43Z,1.0,a\n",
    )
    .unwrap();
    let found = findings(&check_yaml(&nanosecond_schema("UTC"), &path));
    let rules: Vec<Rule> = found.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(
        rules,
        // k=2's one event, in 1677, is older than the TTL.
        [
            Rule::DataFutureEvent,
            Rule::DataCreatedBeforeEvent,
            Rule::DataStaleKeys
        ],
        "{found:#?}"
    );
    assert!(found[1].1.contains("k=2"), "{}", found[1].1);
}

/// A CSV column of empty values has no type: its type cannot be checked (a warning, not
/// a type error), its nulls are counted as nulls, and a created time of empty values is
/// the created time's nulls. A column declared as text is text, empty or not.
#[test]
fn csv_columns_of_empty_values_are_nulls_of_no_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.csv");
    std::fs::write(
        &path,
        "k,ts,created,x,c\n1,2026-01-01T11:00:00Z,,,\n2,2026-01-01T11:30:00Z,,,\n",
    )
    .unwrap();
    let checks = check(&path, 5);
    let found: Vec<(Rule, String, Status)> = checks
        .iter()
        .filter(|c| c.status.is_finding())
        .map(|c| (c.rule, c.message.clone(), c.status))
        .collect();
    let rules: Vec<(Rule, Status)> = found.iter().map(|(r, _, s)| (*r, *s)).collect();
    assert_eq!(
        rules,
        [
            (Rule::DataColumnType, Status::Warning),
            (Rule::DataNull, Status::Error),
        ],
        "{found:#?}"
    );
    assert!(
        found[0].1.starts_with("`x` in ")
            && found[0].1.contains("cannot be checked against float64"),
        "{}",
        found[0].1
    );
    assert!(found[1].1.starts_with("2 of 2 rows"), "{}", found[1].1);
    // `c`, declared `string`, is read as text: a column of nulls, of the declared type.
    assert!(
        checks.iter().any(|c| c.rule == Rule::DataColumnType
            && c.subject.contains("`c`")
            && c.status == Status::Pass),
        "{checks:#?}"
    );
}

/// What decides a text time's unit sees every file the reader reads, linked ones too; a
/// CSV file long enough that the reader infers its chunks apart (whole seconds in one,
/// fractions in another: text) is read as times; a JSON column of a leap second or of
/// numbers among strings is not, and says why in words.
#[test]
fn text_times_are_judged_on_every_value_the_reader_reads() {
    let dir = tempfile::tempdir().unwrap();
    let seconds = SCHEMA.replace("  unit: us\n", "  unit: s\n");
    let header = "k,ts,created,x,c\n";
    #[cfg(unix)]
    {
        let table = dir.path().join("linked");
        std::fs::create_dir(&table).unwrap();
        std::fs::write(
            table.join("a.csv"),
            format!("{header}1,2026-01-01T11:30:00.000Z,,1.0,a\n"),
        )
        .unwrap();
        let elsewhere = dir.path().join("b.csv.data");
        std::fs::write(
            &elsewhere,
            format!("{header}2,2026-01-01T11:40:00.500Z,,1.0,a\n"),
        )
        .unwrap();
        std::os::unix::fs::symlink(&elsewhere, table.join("b.csv")).unwrap();
        let found = findings(&check_yaml(&seconds, &table));
        assert!(
            found
                .iter()
                .any(|(rule, m)| *rule == Rule::DataColumnType && m.contains("truncated")),
            "{found:#?}"
        );
    }
    let long = dir.path().join("long.csv");
    let mut text = header.to_string();
    for k in 0..2_000 {
        text.push_str(&format!(
            "{k},2026-01-01T11:30:00Z,2026-01-01T11:30:00Z,1.0,a\n"
        ));
    }
    text.push_str("2000,2026-01-01T11:40:00.5Z,2026-01-01T11:40:00.5Z,1.0,a\n");
    std::fs::write(&long, text).unwrap();
    let found = findings(&check(&long, 5));
    assert!(found.is_empty(), "{found:#?}");

    // A CSV leap second is no time either: the reader would read it as 23:59:59 at
    // seconds and as the next day at microseconds.
    let leap = dir.path().join("leap.csv");
    std::fs::write(
        &leap,
        format!("{header}1,2026-01-01T11:59:59Z,,1.0,a\n2,2016-12-31T23:59:60Z,,1.0,a\n"),
    )
    .unwrap();
    let found = findings(&check(&leap, 5));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].1.starts_with("`ts` in "), "{}", found[0].1);
    // A date alone is midnight, in every file and column alike.
    let dates = dir.path().join("dates.csv");
    std::fs::write(
        &dates,
        format!("{header}1,2026-01-01,2026-01-01,1.0,a\n2,2026-01-01T11:30:00Z,2026-01-01,1.0,a\n"),
    )
    .unwrap();
    let found = findings(&check(&dates, 5));
    let rules: Vec<Rule> = found.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(
        rules,
        [Rule::DataCreatedBeforeEvent, Rule::DataStaleKeys],
        "{found:#?}"
    );
    assert!(
        found[1]
            .1
            .contains("k=1, #latest event=2026-01-01T00:00:00Z"),
        "{}",
        found[1].1
    );
    let leap = dir.path().join("leap.json");
    std::fs::write(
        &leap,
        "{\"k\": 1, \"ts\": \"2025-12-31T23:59:60Z\", \"created\": \"2025-12-31T23:59:60Z\", \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let found = findings(&check(&leap, 5));
    let rules: Vec<Rule> = found.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(
        rules,
        [Rule::DataColumnType, Rule::DataColumnType],
        "{found:#?}"
    );
    let mixed = dir.path().join("mixed.json");
    std::fs::write(
        &mixed,
        "{\"k\": 1, \"ts\": \"2026-01-01T11:30:00Z\", \"created\": null, \"x\": 1.0, \"c\": \"a\"}\n\
         {\"k\": 2, \"ts\": 1767267000, \"created\": null, \"x\": 1.0, \"c\": \"a\"}\n",
    )
    .unwrap();
    let checks = check(&mixed, 5);
    assert_unreadable(&checks, "mixed.json' line 2: expected a string in field `ts` (the type read for it from all lines, which hold values of two kinds), found 1767267000");
}

#[test]
fn each_fault_is_found_with_its_count_and_a_sample() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faults.parquet");
    let mut rows = CLEAN.to_vec();
    rows.extend([
        // null key; null non-nullable feature
        "(NULL, '2026-01-01T11:10:00Z', '2026-01-01T11:10:00Z', 1.0, 'a')",
        "(4, '2026-01-01T11:11:00Z', '2026-01-01T11:11:00Z', NULL, 'a')",
        // NaN, +inf, -inf (the infinities are out of range too)
        "(5, '2026-01-01T11:12:00Z', '2026-01-01T11:12:00Z', 'NaN', 'a')",
        "(6, '2026-01-01T11:13:00Z', '2026-01-01T11:13:00Z', 'inf', 'a')",
        "(7, '2026-01-01T11:14:00Z', '2026-01-01T11:14:00Z', '-inf', 'a')",
        // below min, above max, not allowed
        "(8, '2026-01-01T11:15:00Z', '2026-01-01T11:15:00Z', -0.5, 'a')",
        "(9, '2026-01-01T11:16:00Z', '2026-01-01T11:16:00Z', 10.5, 'zz')",
        // from the future; created before its event
        "(10, '2026-01-02T00:00:00Z', '2026-01-02T00:00:00Z', 1.0, 'a')",
        "(11, '2026-01-01T11:20:00Z', '2026-01-01T11:19:00Z', 1.0, 'a')",
        // an exact duplicate of a clean row, and a conflicting version of another
        "(1, '2026-01-01T11:00:00Z', '2026-01-01T11:00:01Z', 1.5, 'a')",
        "(1, '2026-01-01T11:30:00Z', '2026-01-01T11:30:00Z', 2.75, 'b')",
        // a key whose latest event is older than the TTL (1h) at AS_OF
        "(12, '2026-01-01T09:00:00Z', '2026-01-01T09:00:00Z', 1.0, 'a')",
    ]);
    write(&path, &rows, "parquet");
    let found = findings(&check(&path, 5));
    let count = |rule: Rule| found.iter().filter(|(r, _)| *r == rule).count();
    let message = |rule: Rule, part: &str| {
        found
            .iter()
            .find(|(r, m)| *r == rule && m.contains(part))
            .map(|(_, m)| m.clone())
            .unwrap_or_else(|| panic!("no {rule} finding with {part:?} in {found:#?}"))
    };
    assert_eq!(count(Rule::DataNull), 2, "{found:#?}");
    message(Rule::DataNull, "1 of 16 rows");
    assert!(message(Rule::DataNull, "entity key `k`").contains("k=null"));
    assert_eq!(count(Rule::DataNonFinite), 3);
    message(Rule::DataNonFinite, "NaN values");
    message(Rule::DataNonFinite, "+inf values");
    message(Rule::DataNonFinite, "-inf values");
    // -0.5 and -inf below; 10.5 and +inf above; NaN in neither.
    assert!(message(Rule::DataOutOfRange, "below min 0").starts_with("2 of 16 rows"));
    assert!(message(Rule::DataOutOfRange, "above max 10").starts_with("2 of 16 rows"));
    assert!(message(Rule::DataNotAllowed, "allowed_values").contains("c=\"zz\""));
    assert!(message(Rule::DataFutureEvent, "2026-01-01T12:00:00Z").starts_with("1 of 16"));
    assert!(message(Rule::DataCreatedBeforeEvent, "created").contains("k=11"));
    assert!(message(Rule::DataDuplicateRows, "repeat")
        .contains("k=1, ts=2026-01-01T11:00:00Z (2 rows)"));
    assert!(message(Rule::DataConflictingRows, "different values").starts_with("1 group(s)"));
    // Keys 12 (09:00) is stale at 12:00 with a 1h TTL; 1..11 have events within the hour
    // (10's is in the future), so 1 of 13 keys (the null key is a key too).
    let stale = message(Rule::DataStaleKeys, "TTL");
    assert!(stale.starts_with("1 of 13 keys"), "{stale}");
    assert!(stale.contains("k=12"), "{stale}");
}

#[test]
fn samples_are_bounded_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.parquet");
    let bad: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "({i}, '2026-01-01T11:{:02}:00Z', '2026-01-01T11:59:00Z', 1.0, 'bad\u{1b}[31m{i}')",
                i + 1
            )
        })
        .collect();
    let rows: Vec<&str> = bad.iter().map(String::as_str).collect();
    write(&path, &rows, "parquet");
    let found = findings(&check(&path, 3));
    let (_, message) = found
        .iter()
        .find(|(r, _)| *r == Rule::DataNotAllowed)
        .expect("not-allowed finding");
    assert!(message.starts_with("40 of 40 rows"), "{message}");
    assert_eq!(message.matches("c=").count(), 3, "{message}");
    assert!(!message.contains('\u{1b}'), "{message}");
    assert!(message.contains("\\u{1b}"), "{message}");
}

#[test]
fn a_hive_partitioned_directory_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    for (day, rows) in [("2026-01-01", &CLEAN[..2]), ("2026-01-02", &CLEAN[2..])] {
        let part = dir.path().join(format!("day={day}"));
        std::fs::create_dir(&part).unwrap();
        write(&part.join("part-0.parquet"), rows, "parquet");
    }
    let checks = check(dir.path(), 5);
    assert_eq!(findings(&checks), vec![]);
    let rows = checks
        .iter()
        .find(|c| c.rule == Rule::DataNull)
        .map(|c| c.actual.clone());
    assert_eq!(rows.as_deref(), Some("0"));
}

#[test]
fn missing_columns_and_wrong_types_are_findings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.parquet");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ctx = datafusion::prelude::SessionContext::new();
        let sql = format!(
            "COPY (SELECT CAST(1 AS INT) AS k, arrow_cast(TIMESTAMP '2026-01-01T11:00:00', 'Timestamp(ns, \"UTC\")') AS ts, \
             '1.5' AS x FROM (VALUES (1))) TO '{}' STORED AS PARQUET",
            path.display()
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    });
    let found = findings(&check(&path, 5));
    let rules: Vec<Rule> = found.iter().map(|(r, _)| *r).collect();
    // created and c are missing; x is text; ts is ns (truncated to us: incompatible);
    // k is int32 for int64 (compatible: a warning).
    assert_eq!(
        rules
            .iter()
            .filter(|r| **r == Rule::DataColumnMissing)
            .count(),
        2,
        "{found:#?}"
    );
    assert_eq!(
        rules.iter().filter(|r| **r == Rule::DataColumnType).count(),
        3,
        "{found:#?}"
    );
    let checks = check(&path, 5);
    let k = checks
        .iter()
        .find(|c| c.rule == Rule::DataColumnType && c.subject.contains("`k`"))
        .unwrap();
    assert_eq!(k.status, Status::Warning, "{k:?}");
}

#[test]
fn unreadable_data_is_an_input_finding() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.parquet");
    write(&truncated, CLEAN, "parquet");
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let empty = dir.path().join("empty.parquet");
    std::fs::write(&empty, b"").unwrap();
    for path in [truncated, empty, dir.path().join("missing.parquet")] {
        let checks = check(&path, 5);
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert_eq!(checks[0].rule, Rule::DataUnreadable);
        assert_eq!(
            checks[0].rule.category(),
            arrowfeat_validator::rules::Category::Input
        );
        assert!(checks[0]
            .message
            .contains(&path.file_name().unwrap().to_string_lossy().into_owned()));
    }
}

/// `checks` is the one data-unreadable finding, with `text` in its message.
fn assert_unreadable(checks: &[Check], text: &str) {
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0].rule, Rule::DataUnreadable);
    assert!(checks[0].message.contains(text), "{}", checks[0].message);
}

fn check_yaml(yaml: &str, path: &std::path::Path) -> Vec<Check> {
    let (report, file) = load_bytes("view.yaml", yaml.as_bytes());
    let failed: Vec<&String> = report
        .checks
        .iter()
        .filter(|c| c.status.is_finding())
        .map(|c| &c.message)
        .collect();
    assert!(file.is_some(), "{failed:#?}");
    let paths = DataPaths::new(
        vec![(None, path.to_string_lossy().into_owned())],
        DataOptions {
            as_of_nanos: AS_OF,
            sample_rows: 5,
        },
    );
    paths
        .check(&file.expect("the schema reads"), None, &Default::default())
        .expect("data for the view")
}

/// Runs `sql` (a SELECT) into a Parquet file at `path`.
fn write_select(path: &std::path::Path, sql: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ctx = datafusion::prelude::SessionContext::new();
        let copy = format!("COPY ({sql}) TO '{}' STORED AS PARQUET", path.display());
        ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    });
}

const ONE_FEATURE: &str = "\
name: v
schema_version: 1.0.0
entities: [{name: user, join_key: k, type: int64}]
event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}
ttl: 1h
features:
";

/// Reproducers of a hostile review: each was a wrong answer before.
#[test]
fn dictionary_columns_are_checked_as_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dict.parquet");
    write_select(
        &path,
        "SELECT CAST(column1 AS BIGINT) AS k,
                arrow_cast(arrow_cast(arrow_cast(column2, 'Int64'), 'Timestamp(µs, \"UTC\")'), 'Dictionary(Int32, Timestamp(µs, \"UTC\"))') AS ts,
                arrow_cast(CAST(column3 AS BIGINT), 'Dictionary(Int32, Int64)') AS cnt,
                arrow_cast(CAST(column4 AS DOUBLE), 'Dictionary(Int32, Float64)') AS f
         FROM (VALUES (1, 1767265200000000, 1, 'NaN'), (2, 4102444800000000, 99, '7.0'))",
    );
    let yaml = format!(
        "{ONE_FEATURE}  - {{name: cnt, type: int64, constraints: {{min: 0, max: 10, allowed_values: [1, 2, 3]}}}}\n  - {{name: f, type: float64, constraints: {{min: 0, max: 1}}}}\n"
    );
    let found = findings(&check_yaml(&yaml, &path));
    let rules: Vec<Rule> = found.iter().map(|(r, _)| *r).collect();
    for rule in [
        Rule::DataOutOfRange,
        Rule::DataNotAllowed,
        Rule::DataNonFinite,
        Rule::DataFutureEvent,
    ] {
        assert!(rules.contains(&rule), "{rule}: {found:#?}");
    }
    // cnt=99 above 10, f=7 above 1.
    assert_eq!(
        rules.iter().filter(|r| **r == Rule::DataOutOfRange).count(),
        2,
        "{found:#?}"
    );
}

#[test]
fn float32_values_equal_to_a_decimal_bound_are_in_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f32.parquet");
    write_select(
        &path,
        "SELECT CAST(1 AS BIGINT) AS k, arrow_cast(arrow_cast(1767265200000000, 'Int64'), 'Timestamp(µs, \"UTC\")') AS ts,
                CAST(column1 AS FLOAT) AS x FROM (VALUES (0.1), (0.1), (0.05), (0.2))",
    );
    let yaml = format!("{ONE_FEATURE}  - {{name: x, type: float32, constraints: {{max: 0.1, allowed_values: [0.1, 0.05]}}}}\n");
    let found = findings(&check_yaml(&yaml, &path));
    let above: Vec<&String> = found
        .iter()
        .filter(|(r, _)| *r == Rule::DataOutOfRange)
        .map(|(_, m)| m)
        .collect();
    assert_eq!(above.len(), 1, "{found:#?}");
    assert!(above[0].starts_with("1 of 4 rows"), "{above:?}");
    let not_allowed: Vec<&String> = found
        .iter()
        .filter(|(r, _)| *r == Rule::DataNotAllowed)
        .map(|(_, m)| m)
        .collect();
    assert!(not_allowed[0].starts_with("1 of 4 rows"), "{not_allowed:?}");
}

#[test]
fn nans_of_another_sign_are_one_value_for_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.parquet");
    write_select(
        &path,
        "SELECT CAST(1 AS BIGINT) AS k, arrow_cast(arrow_cast(1767265200000000, 'Int64'), 'Timestamp(µs, \"UTC\")') AS ts,
                column1 AS x FROM (VALUES (CAST('NaN' AS DOUBLE)), (-CAST('NaN' AS DOUBLE)))",
    );
    let yaml = format!("{ONE_FEATURE}  - {{name: x, type: float64}}\n");
    let found = findings(&check_yaml(&yaml, &path));
    let rules: Vec<Rule> = found.iter().map(|(r, _)| *r).collect();
    assert!(rules.contains(&Rule::DataDuplicateRows), "{found:#?}");
    assert!(!rules.contains(&Rule::DataConflictingRows), "{found:#?}");
}

/// A column declared twice (two entities sharing a join key, a key named as the event
/// time) is read once: duplicates and stale keys are counted, never a query error.
#[test]
fn a_column_declared_twice_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.parquet");
    write_select(
        &path,
        "SELECT CAST(column1 AS BIGINT) AS k,
                arrow_cast(arrow_cast(column2, 'Int64'), 'Timestamp(µs, \"UTC\")') AS ts,
                column3 AS x
         FROM (VALUES (1, 1767265200000000, 1.0), (1, 1767265200000000, 1.0), (2, 1767265200000000, 2.0))",
    );
    let shared_key = "\
name: v
schema_version: 1.0.0
entities: [{name: a, join_key: k, type: int64}, {name: b, join_key: k, type: int64}]
event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}
ttl: 30m
features: [{name: x, type: float64}]
";
    let key_is_time = shared_key.replace(
        "[{name: a, join_key: k, type: int64}, {name: b, join_key: k, type: int64}]",
        "[{name: a, join_key: ts, type: timestamp}]",
    );
    for yaml in [shared_key, key_is_time.as_str()] {
        let found = findings(&check_yaml(yaml, &path));
        let rules: Vec<Rule> = found.iter().map(|(r, _)| *r).collect();
        assert!(!rules.contains(&Rule::DataUnreadable), "{found:#?}");
        let duplicates = found
            .iter()
            .find(|(r, _)| *r == Rule::DataDuplicateRows)
            .expect("duplicates");
        assert!(duplicates.1.starts_with("1 of 3 rows"), "{duplicates:?}");
        assert!(rules.contains(&Rule::DataStaleKeys), "{found:#?}");
    }
}

#[test]
fn key_names_like_our_result_columns_and_extreme_times_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("names.parquet");
    // Times far outside the microsecond range, in milliseconds.
    write_select(
        &path,
        "SELECT CAST(column1 AS BIGINT) AS latest_event, CAST(column1 AS BIGINT) AS arrowfeat_rows,
                arrow_cast(arrow_cast(column2, 'Int64'), 'Timestamp(ms, \"UTC\")') AS ts, 1.0 AS v
         FROM (VALUES (1, 4611686018427387904), (2, -4611686018427387904), (2, -4611686018427387904), (3, 0))",
    );
    let yaml = "\
name: v
schema_version: 1.0.0
entities: [{name: a, join_key: latest_event, type: int64}, {name: b, join_key: arrowfeat_rows, type: int64}]
event_timestamp: {name: ts, type: timestamp, unit: ms, tz: UTC}
ttl: 1h
features: [{name: v, type: float64}]
";
    let found = findings(&check_yaml(yaml, &path));
    let rules: Vec<Rule> = found.iter().map(|(r, _)| *r).collect();
    assert!(!rules.contains(&Rule::DataUnreadable), "{found:#?}");
    // The far future is after as_of; key 2 and 3 are stale; key 2 is a duplicate.
    assert!(rules.contains(&Rule::DataFutureEvent), "{found:#?}");
    assert!(rules.contains(&Rule::DataDuplicateRows), "{found:#?}");
    let stale = found
        .iter()
        .find(|(r, _)| *r == Rule::DataStaleKeys)
        .expect("stale keys");
    assert!(stale.1.starts_with("2 of 3 keys"), "{stale:?}");
}

#[test]
fn integers_compare_exactly_with_bounds_beyond_2_to_the_53() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("int.parquet");
    write_select(
        &path,
        "SELECT CAST(column1 AS BIGINT) AS k, arrow_cast(arrow_cast(1767265200000000, 'Int64'), 'Timestamp(µs, \"UTC\")') AS ts,
                column2 AS x FROM (VALUES (1, CAST(9007199254740993 AS BIGINT)), (2, CAST(9223372036854775807 AS BIGINT)),
                                          (3, CAST(-9223372036854775807 AS BIGINT) - 1), (4, CAST(5 AS BIGINT)))",
    );
    let count = |constraints: &str, rule: Rule| -> Option<String> {
        let yaml =
            format!("{ONE_FEATURE}  - {{name: x, type: int64, constraints: {{{constraints}}}}}\n");
        let found = findings(&check_yaml(&yaml, &path));
        assert!(
            !found.iter().any(|(r, _)| *r == Rule::DataUnreadable),
            "{found:#?}"
        );
        found
            .iter()
            .find(|(r, _)| *r == rule)
            .map(|(_, m)| m.split(" rows").next().unwrap_or_default().to_string())
    };
    // 2^53 + 1 rounds onto 2^53 as a float64: it is above a bound of 2^53 all the same.
    assert_eq!(
        count("max: 9007199254740992.0", Rule::DataOutOfRange).as_deref(),
        Some("2 of 4")
    );
    // Integer bounds past Int64: every value is below 2^63, none above it.
    assert_eq!(
        count("min: 9223372036854775808", Rule::DataOutOfRange).as_deref(),
        Some("4 of 4")
    );
    assert_eq!(
        count("max: 9223372036854775808", Rule::DataOutOfRange),
        None
    );
    assert_eq!(
        count("min: -1.0e300, max: 1.0e300", Rule::DataOutOfRange),
        None
    );
    assert_eq!(
        count("min: 5.5", Rule::DataOutOfRange).as_deref(),
        Some("2 of 4")
    );
    // An integer equals an allowed value only exactly: 2.5 is none, 2^53 is not 2^53 + 1.
    assert_eq!(
        count(
            "allowed_values: [9007199254740992.0, 5, 2.5]",
            Rule::DataNotAllowed
        )
        .as_deref(),
        Some("3 of 4")
    );
}

#[test]
fn a_memory_limit_changes_no_finding_and_too_small_a_limit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.parquet");
    // 400k rows, distinct but for every 7th (a copy) and every 11th (a conflict).
    write_select(
        &path,
        "SELECT CAST(v % 50000 AS BIGINT) AS k,
                arrow_cast(arrow_cast(1767265200000000 + CASE WHEN v % 7 = 0 OR v % 11 = 0 THEN 0 ELSE v END, 'Int64'), 'Timestamp(µs, \"UTC\")') AS ts,
                CAST(CASE WHEN v % 7 = 0 THEN 0 ELSE v END AS DOUBLE) AS x,
                repeat('p', 40) || CAST(CASE WHEN v % 7 = 0 THEN 0 ELSE v END AS VARCHAR) AS c
         FROM (SELECT unnest(range(400000)) AS v)",
    );
    let yaml =
        format!("{ONE_FEATURE}  - {{name: x, type: float64}}\n  - {{name: c, type: string}}\n");
    let (_, file) = load_bytes("view.yaml", yaml.as_bytes());
    let file = file.expect("the schema reads");
    let run = |limit: Option<usize>| {
        DataPaths::new(
            vec![(None, path.to_string_lossy().into_owned())],
            DataOptions {
                as_of_nanos: AS_OF,
                sample_rows: 3,
            },
        )
        .with_memory_limit(limit)
        .check(&file, None, &Default::default())
        .expect("data for the view")
    };
    let unlimited = findings(&run(None));
    let rules: Vec<Rule> = unlimited.iter().map(|(r, _)| *r).collect();
    assert!(rules.contains(&Rule::DataDuplicateRows), "{unlimited:#?}");
    assert!(rules.contains(&Rule::DataConflictingRows), "{unlimited:#?}");
    assert_eq!(findings(&run(Some(64 << 20))), unlimited);
    let starved = findings(&run(Some(1 << 20)));
    assert_eq!(starved.len(), 1, "{starved:#?}");
    assert_eq!(starved[0].0, Rule::DataUnreadable);
    assert!(
        starved[0]
            .1
            .contains("need more memory than the limit of 1 MiB allows")
            && !starved[0].1.contains("Stream"),
        "{starved:#?}"
    );
}

/// Exact duplicates and conflicting rows against a naive count, over two keys (one of
/// them text), null keys, and float values, alone and in lists, where -0.0 equals 0.0 and
/// every NaN is one value: the candidates-then-rows search (and, under a memory limit,
/// grouping every row) finds what a naive count does.
mod duplicates_against_a_naive_count {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use arrowfeat_gate::Data;
    use arrowfeat_validator::checks::data::{plan, DataOptions};
    use datafusion::arrow::array::{
        Float64Array, Float64Builder, Int64Array, ListBuilder, StringArray,
        TimestampMicrosecondArray,
    };
    use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
    use datafusion::arrow::record_batch::RecordBatch;
    use proptest::prelude::*;

    const YAML: &str = "\
name: v
schema_version: 1.0.0
entities: [{name: user, join_key: k, type: int64}, {name: shop, join_key: g, type: string}]
event_timestamp: {name: ts, type: timestamp, unit: us, tz: UTC}
features:
  - {name: x, type: float64}
  - {name: l, type: \"list<float64>\"}
";

    type List = Option<Vec<Option<f64>>>;
    type Row = (Option<i64>, Option<&'static str>, i64, Option<f64>, List);

    fn value() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(0.0)),
            Just(Some(-0.0)),
            Just(Some(1.0)),
            Just(Some(f64::NAN)),
            Just(Some(-f64::NAN)),
        ]
    }

    fn list() -> impl Strategy<Value = List> {
        prop::option::of(prop::collection::vec(value(), 0..2))
    }

    fn row() -> impl Strategy<Value = Row> {
        (
            prop_oneof![Just(None), (0i64..3).prop_map(Some)],
            prop_oneof![Just(None), Just(Some("a")), Just(Some("b"))],
            0i64..2,
            value(),
            list(),
        )
    }

    /// (duplicate rows, conflicting key-and-time groups), counted by hand.
    fn naive(rows: &[Row]) -> (u64, u64) {
        // -0.0 is 0.0, every NaN one value, null its own value.
        let canonical = |x: Option<f64>| {
            x.map(|x| match x {
                x if x.is_nan() => u64::MAX,
                x => (x + 0.0).to_bits(),
            })
        };
        // Per (k, g, ts): the canonical values of its rows.
        type Group = (Option<i64>, Option<&'static str>, i64);
        type Values = (Option<u64>, Option<Vec<Option<u64>>>);
        let mut groups: BTreeMap<Group, Vec<Values>> = BTreeMap::new();
        for (k, g, ts, x, l) in rows {
            let l = l
                .as_ref()
                .map(|l| l.iter().map(|x| canonical(*x)).collect());
            groups
                .entry((*k, *g, *ts))
                .or_default()
                .push((canonical(*x), l));
        }
        let (mut duplicates, mut conflicting) = (0, 0);
        for values in groups.values() {
            let mut distinct = values.clone();
            distinct.sort();
            distinct.dedup();
            duplicates += (values.len() - distinct.len()) as u64;
            conflicting += u64::from(distinct.len() > 1);
        }
        (duplicates, conflicting)
    }

    fn table(rows: &[Row], batches: usize) -> Data {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("g", DataType::Utf8, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("x", DataType::Float64, true),
            Field::new("l", DataType::new_list(DataType::Float64, true), true),
        ]));
        let size = rows.len().div_ceil(batches.max(1)).max(1);
        let batches = rows
            .chunks(size)
            .map(|chunk| {
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(chunk.iter().map(|r| r.0).collect::<Int64Array>()),
                        Arc::new(chunk.iter().map(|r| r.1).collect::<StringArray>()),
                        Arc::new(
                            chunk
                                .iter()
                                .map(|r| Some(r.2))
                                .collect::<TimestampMicrosecondArray>()
                                .with_timezone("UTC"),
                        ),
                        Arc::new(chunk.iter().map(|r| r.3).collect::<Float64Array>()),
                        Arc::new({
                            let mut lists = ListBuilder::new(Float64Builder::new());
                            for row in chunk {
                                match &row.4 {
                                    Some(l) => lists.append_value(l.iter().copied()),
                                    None => lists.append_null(),
                                }
                            }
                            lists.finish()
                        }),
                    ],
                )
                .unwrap()
            })
            .collect();
        Data::Table {
            label: "rows".into(),
            schema,
            batches,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn counts_equal_the_naive_ones(rows in proptest::collection::vec(row(), 0..40), batches in 1usize..4) {
            let (_, file) = arrowfeat_validator::checks::load_bytes("v.yaml", YAML.as_bytes());
            let options = DataOptions { as_of_nanos: 0, sample_rows: 3 };
            let plan = plan(&file.unwrap(), "rows", &options);
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let (duplicates, conflicting) = naive(&rows);
            // Without a memory limit (candidates, then their rows) and with one (every
            // row grouped whole, spilling past the limit).
            for limit in [None, Some(64 << 20)] {
                let counts = runtime
                    .block_on(arrowfeat_gate::count(&plan, &table(&rows, batches), limit))
                    .unwrap();
                prop_assert_eq!(counts.exact_duplicates.map(|m| m.rows), Some(duplicates));
                prop_assert_eq!(counts.conflicting.map(|m| m.rows), Some(conflicting));
            }
        }
    }
}

/// NaN (of either sign), +inf and -inf inside lists and embeddings: each row holding one
/// counts once per kind; null lists, null elements and empty lists hold none.
#[test]
fn non_finite_elements_of_lists_and_embeddings_are_counted_per_row() {
    use std::sync::Arc;

    use arrowfeat_gate::Data;
    use arrowfeat_validator::checks::data::{findings, plan};
    use datafusion::arrow::array::{
        FixedSizeListArray, Float32Array, Float64Array, Int64Array, ListArray,
        TimestampMicrosecondArray,
    };
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
    use datafusion::arrow::record_batch::RecordBatch;

    let yaml = format!(
        "{ONE_FEATURE}  - {{name: l, type: \"list<float32>\"}}\n  - {{name: e, type: \"embedding[2, float64]\"}}\n"
    );
    let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    // Rows: [1, NaN] [1, -NaN] [inf, NaN] [-inf] [null, 2] null [] [-NaN, inf]
    let l_values: Vec<Option<f32>> = vec![
        Some(1.0),
        Some(f32::NAN),
        Some(1.0),
        Some(-f32::NAN),
        Some(f32::INFINITY),
        Some(f32::NAN),
        Some(f32::NEG_INFINITY),
        None,
        Some(2.0),
        Some(-f32::NAN),
        Some(f32::INFINITY),
    ];
    let offsets = OffsetBuffer::from_lengths([2, 2, 2, 1, 2, 0, 0, 2]);
    let l_field = Arc::new(Field::new("item", DataType::Float32, true));
    let l = ListArray::new(
        l_field.clone(),
        offsets,
        Arc::new(l_values.into_iter().collect::<Float32Array>()),
        Some(vec![true, true, true, true, true, false, true, true].into()),
    );
    let e_values: Vec<Option<f64>> = vec![
        Some(1.0),
        Some(nan),
        Some(1.0),
        Some(negative_nan),
        Some(inf),
        Some(nan),
        Some(-inf),
        Some(0.0),
        None,
        Some(2.0),
        Some(0.0),
        Some(0.0),
        Some(0.0),
        Some(0.0),
        Some(negative_nan),
        Some(inf),
    ];
    let e_field = Arc::new(Field::new("item", DataType::Float64, true));
    let e = FixedSizeListArray::new(
        e_field.clone(),
        2,
        Arc::new(e_values.into_iter().collect::<Float64Array>()),
        Some(vec![true, true, true, true, true, false, true, true].into()),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("l", DataType::List(l_field), true),
        Field::new("e", DataType::FixedSizeList(e_field, 2), true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new((0..8).collect::<Int64Array>()),
            Arc::new(
                (0..8)
                    .map(Some)
                    .collect::<TimestampMicrosecondArray>()
                    .with_timezone("UTC"),
            ),
            Arc::new(l),
            Arc::new(e),
        ],
    )
    .unwrap();
    let data = Data::Table {
        label: "rows".into(),
        schema,
        batches: vec![batch.slice(0, 3), batch.slice(3, 5)],
    };
    let (_, file) = load_bytes("v.yaml", yaml.as_bytes());
    let options = DataOptions {
        as_of_nanos: AS_OF,
        sample_rows: 2,
    };
    let plan = plan(&file.unwrap(), "rows", &options);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let counts = runtime
        .block_on(arrowfeat_gate::count(&plan, &data, None))
        .unwrap();
    let found: Vec<String> = findings(&plan, &counts)
        .into_iter()
        .filter(|c| c.rule == Rule::DataNonFinite)
        .map(|c| c.message)
        .collect();
    for column in ["l", "e"] {
        for (what, rows) in [("NaN", 4), ("+inf", 2), ("-inf", 1)] {
            let expected = format!("{rows} of 8 rows");
            assert!(
                found.iter().any(|m| m.contains(&expected)
                    && m.contains(&format!("{what} values"))
                    && m.contains(&format!("`{column}`"))),
                "{column} {what}: {found:#?}"
            );
        }
    }
}

/// Data files from other teams, mangled: a byte changed, the file cut, bytes inserted, a
/// range repeated. Every one is read to findings or to one `data-unreadable` finding,
/// never a panic, and every report renders without a raw control character.
mod hostile_files {
    use super::*;
    use arrowfeat_validator::output::{render, Format, RenderOptions};
    use arrowfeat_validator::report::{FileReport, Report};
    use arrowfeat_validator::text::is_unsafe_char;
    use proptest::prelude::*;

    fn cases() -> u32 {
        std::env::var("ARROWFEAT_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(48, |n: u32| n / 4)
    }

    #[derive(Debug, Clone)]
    enum Edit {
        Set(prop::sample::Index, u8),
        Cut(prop::sample::Index),
        Insert(prop::sample::Index, Vec<u8>),
        Repeat(prop::sample::Index, usize),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            4 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
            1 => any::<prop::sample::Index>().prop_map(Edit::Cut),
            2 => (any::<prop::sample::Index>(), proptest::collection::vec(any::<u8>(), 1..16))
                .prop_map(|(i, b)| Edit::Insert(i, b)),
            1 => (any::<prop::sample::Index>(), 1usize..64).prop_map(|(i, n)| Edit::Repeat(i, n)),
        ]
    }

    fn mangle(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        for edit in edits {
            match edit {
                Edit::Set(i, b) if !bytes.is_empty() => {
                    let at = i.index(bytes.len());
                    bytes[at] = *b;
                }
                Edit::Cut(i) => bytes.truncate(i.index(bytes.len() + 1)),
                Edit::Insert(i, piece) => {
                    let at = i.index(bytes.len() + 1);
                    bytes.splice(at..at, piece.iter().copied());
                }
                Edit::Repeat(i, n) if !bytes.is_empty() => {
                    let at = i.index(bytes.len());
                    let end = (at + n).min(bytes.len());
                    let piece = bytes[at..end].to_vec();
                    bytes.splice(at..at, piece);
                }
                _ => {}
            }
        }
        bytes
    }

    fn originals() -> &'static [(String, Vec<u8>)] {
        static ORIGINALS: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
        ORIGINALS.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            ["parquet", "csv", "json"]
                .iter()
                .map(|format| {
                    let path = dir.path().join(format!("clean.{format}"));
                    write(&path, CLEAN, format);
                    (format.to_string(), std::fs::read(&path).unwrap())
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn mangled_files_are_findings_or_unreadable(
            which in 0usize..3,
            edits in proptest::collection::vec(edit(), 1..4),
        ) {
            let (format, original) = &originals()[which];
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(format!("mangled.{format}"));
            std::fs::write(&path, mangle(original.clone(), &edits)).unwrap();
            let checks = check(&path, 3);
            if checks.iter().any(|c| c.rule == Rule::DataUnreadable) {
                prop_assert_eq!(checks.len(), 1, "{:?}", checks);
            }
            let mut file = FileReport::new("payments.yaml");
            file.checks = checks;
            let report = Report::new("fuzz", vec![file]);
            let options = RenderOptions { color: false, verbose: true, deny_warnings: false, command: "check" };
            for name in Format::NAMES {
                let rendered = render(&report, Format::parse(name).unwrap(), &options);
                let raw: Vec<char> =
                    rendered.chars().filter(|c| *c != '\n' && is_unsafe_char(*c)).collect();
                prop_assert!(raw.is_empty(), "{}: raw {:?} in {}", name, raw, rendered);
            }
        }
    }
}
