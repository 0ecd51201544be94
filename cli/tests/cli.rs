//! The `arrowfeat` binary as a user runs it: output snapshots, exit codes, one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn arrowfeat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run arrowfeat")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A fresh directory, removed when the guard drops (even if the test panics).
/// `arrowfeat sql QUERY --format csv`.
fn sql_csv(query: &str) -> Output {
    arrowfeat(&["sql", query, "--format", "csv"])
}

fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("arrowfeat-{name}-"))
        .tempdir()
        .unwrap()
}

const EVENTS: &str = "events=examples/data/events.parquet";
const USERS: &str = "users=examples/data/users.csv";

#[test]
fn demo_query_over_bundled_data() {
    let out = arrowfeat(&[
        "sql",
        "--file",
        "examples/demo.sql",
        "--table",
        EVENTS,
        "--table",
        USERS,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn csv_and_json_output() {
    let sql = "SELECT user_id, hash_bucket(user_id, 16) AS b, round(standard_scale(amount, 60, 30), 3) AS z \
               FROM events ORDER BY event_id LIMIT 3";
    let csv = arrowfeat(&["sql", sql, "--table", EVENTS, "--format", "csv"]);
    assert!(csv.status.success(), "{}", stderr(&csv));
    insta::assert_snapshot!("csv", stdout(&csv));
    let json = arrowfeat(&["sql", sql, "--table", EVENTS, "--format", "json"]);
    insta::assert_snapshot!("json", stdout(&json));
    let ndjson = arrowfeat(&["sql", sql, "--table", EVENTS, "--format", "ndjson"]);
    insta::assert_snapshot!("ndjson", stdout(&ndjson));
}

#[test]
fn files_can_be_named_in_from() {
    let out = sql_csv("SELECT count(*) AS n FROM 'examples/data/users.csv'");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "n\n200\n");
}

#[test]
fn kernel_errors_are_one_line_exit_1() {
    let out = arrowfeat(&[
        "sql",
        "SELECT standard_scale(amount, 0, 0) FROM events",
        "--table",
        EVENTS,
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&out), @"arrowfeat: error: standard_scale: argument `std`: expected a standard deviation > 0, found 0
");
}

#[test]
fn planning_errors_name_the_signature() {
    let out = arrowfeat(&["sql", "SELECT haversine_km('x', 1, 2)"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("haversine_km(lat1: Float64, lon1: Float64, lat2: Float64, lon2: Float64)"),
        "{err}"
    );
    // DataFusion's label for the stage is not part of the message.
    assert!(!err.contains("Error during planning"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let out = arrowfeat(&["sql", "SELECT 1", "--table", "t=missing.parquet"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out), @"arrowfeat: error: --table t=missing.parquet: no such file or directory
");
    let out = arrowfeat(&["sql", "SELECT 1", "--table", "t=Cargo.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown file format"),
        "{}",
        stderr(&out)
    );
    let out = arrowfeat(&["sql", "SELECT 1", "--table", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected NAME=PATH"),
        "{}",
        stderr(&out)
    );
    let out = arrowfeat(&["sql"]);
    assert_eq!(out.status.code(), Some(2));
    let out = arrowfeat(&["functions", "cosine"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean `cosine_similarity`?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn syntax_errors_exit_1() {
    let out = arrowfeat(&["sql", "SELEC 1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("arrowfeat: error: SQL syntax:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn functions_catalogue() {
    let out = arrowfeat(&["functions"]);
    assert!(out.status.success());
    insta::assert_snapshot!("functions_list", stdout(&out));
    let out = arrowfeat(&["functions", "hash_bucket"]);
    assert!(out.status.success());
    insta::assert_snapshot!("functions_hash_bucket", stdout(&out));
}

#[test]
fn hostile_sql_input_ends_in_one_line_errors_not_crashes() {
    // 1,500 chained operators: deep recursion in the planner, not a stack overflow.
    let deep = format!("SELECT 1{} AS n", " + 1".repeat(1500));
    let out = arrowfeat(&["sql", &deep, "--format", "csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "n\n1501\n");
    // Parentheses nested past the parser's limit: a syntax error that says so.
    let nested = format!("SELECT {}1{}", "(".repeat(1000), ")".repeat(1000));
    let out = arrowfeat(&["sql", &nested]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("more than 50 levels deep"),
        "{}",
        stderr(&out)
    );
    // A Parquet file whose footer makes the parquet crate panic.
    let corrupt = "t=tests/fixtures/corrupt/footer-panics-reader.parquet";
    let out = arrowfeat(&["sql", "SELECT * FROM t", "--table", corrupt]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err,
        "arrowfeat: error: cannot read the Parquet file t=tests/fixtures/corrupt/footer-panics-reader.parquet: \
         the file is corrupt (the Parquet reader failed on it)\n"
    );
    // Errors of the reader name the file and print no Rust structures or internals.
    for (query, want) in [
        (
            "SELECT * FROM 'tests/fixtures/corrupt/arrow-schema-metadata.parquet'",
            "cannot read the Parquet file 'tests/fixtures/corrupt/arrow-schema-metadata.parquet': \
             the Arrow schema stored in its metadata (ARROW:schema) is corrupt",
        ),
        (
            "SELECT * FROM 'tests/fixtures/corrupt/arrow-schema-panics-reader.parquet'",
            "cannot read the Parquet file 'tests/fixtures/corrupt/arrow-schema-panics-reader.parquet': \
             the file is corrupt (the Parquet reader failed on it)",
        ),
        (
            "SELECT * FROM 'tests/fixtures/corrupt/arrow-schema-metadata.parquet' \
             CROSS JOIN 'examples/data/events.parquet'",
            "cannot read one of the Parquet inputs: the Arrow schema stored in its metadata \
             (ARROW:schema) is corrupt (inputs: 'examples/data/events.parquet', \
             'tests/fixtures/corrupt/arrow-schema-metadata.parquet')",
        ),
        // An external table's LOCATION is one of the files read; an unused --table is not.
        (
            "CREATE EXTERNAL TABLE t STORED AS PARQUET \
             LOCATION 'tests/fixtures/corrupt/arrow-schema-metadata.parquet'; \
             SELECT count(*) FROM t",
            "cannot read the Parquet file \
             LOCATION 'tests/fixtures/corrupt/arrow-schema-metadata.parquet': \
             the Arrow schema stored in its metadata (ARROW:schema) is corrupt",
        ),
        // A filter pushed into the Parquet scan fails with the query's own error, not
        // a Parquet one.
        (
            "SET datafusion.execution.parquet.pushdown_filters = true; \
             SELECT count(*) FROM 'examples/data/events.parquet' \
             WHERE min_max_scale(amount, 1.0, 1.0) > 0",
            "min_max_scale: argument `hi`: expected hi > lo, found lo = 1 and hi = 1",
        ),
    ] {
        let out = arrowfeat(&["sql", query, "--table", "unused=examples/data/events.parquet"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(stderr(&out), format!("arrowfeat: error: {want}\n"));
    }
    // An error of the Parquet writer is not blamed on an input alone.
    let tmp = tempdir("writer");
    let query = format!(
        "COPY (SELECT interval '1 month' AS i FROM 'examples/data/events.parquet' LIMIT 1) \
         TO '{}/o.parquet'",
        tmp.path().display()
    );
    let out = arrowfeat(&["sql", &query, "--allow-write"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("arrowfeat: error: a Parquet file cannot be read or written: "),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).ends_with("(inputs: 'examples/data/events.parquet'; or the output)\n"));
    // A writer that panics on options it cannot honour is not called a corrupt input.
    let query = format!(
        "COPY (SELECT amount FROM 'examples/data/events.parquet') TO '{}/p.parquet' \
         STORED AS PARQUET OPTIONS ('format.max_row_group_size' '0')",
        tmp.path().display()
    );
    let out = arrowfeat(&["sql", &query, "--allow-write"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "arrowfeat: error: a Parquet file cannot be read or written: the Parquet library \
         failed (a corrupt input, or writer options it cannot honour) \
         (inputs: 'examples/data/events.parquet'; or the output)\n"
    );
    // A 0-byte Parquet file is not an empty table.
    let empty = tmp.path().join("empty.parquet");
    std::fs::write(&empty, b"").unwrap();
    let out = arrowfeat(&[
        "sql",
        &format!("SELECT count(*) FROM '{}'", empty.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .ends_with("cannot read the Parquet file: it is empty (0 bytes), not a Parquet file\n"),
        "{}",
        stderr(&out)
    );
    let table = format!("e={}", empty.display());
    let out = arrowfeat(&["sql", "SELECT count(*) FROM e", "--table", &table]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("it is empty (0 bytes)"),
        "{}",
        stderr(&out)
    );
    // `.pq` and upper-case extensions are Parquet files too.
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/data/events.parquet"
        ),
        tmp.path().join("e.PQ"),
    )
    .unwrap();
    let table = format!("e={}/e.PQ", tmp.path().display());
    let out = arrowfeat(&["sql", "SELECT count(*) AS n FROM e", "--table", &table]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("| 2000 |"), "{}", stdout(&out));
    // A missing file in FROM is a usage error, like a missing --table file.
    let out = arrowfeat(&["sql", "SELECT * FROM 'no/such/file.parquet'"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "arrowfeat: error: FROM 'no/such/file.parquet': no such file or directory\n"
    );
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_instead_of_blocking() {
    let tmp = tempdir("fifo");
    let fifo = tmp.path().join("events.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let table = format!("t={}", fifo.display());
    let out = arrowfeat(&["sql", "SELECT 1", "--table", &table]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("found a FIFO"), "{}", stderr(&out));
    let query = format!("SELECT * FROM '{}'", fifo.display());
    let out = arrowfeat(&["sql", &query]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("found a FIFO"), "{}", stderr(&out));
    let query = format!(
        "SELECT * FROM point_in_time('examples/data/labels.csv', '{}', 'user_id', 'label_ts', 'ts', 'x')",
        fifo.display()
    );
    let out = arrowfeat(&["sql", &query]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("found a FIFO"), "{}", stderr(&out));
    // An external table's location is read like a FROM path.
    let query = format!(
        "CREATE EXTERNAL TABLE t (a VARCHAR) STORED AS CSV LOCATION '{}'; SELECT * FROM t",
        fifo.display()
    );
    let out = arrowfeat(&["sql", &query]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("LOCATION"), "{}", stderr(&out));
    assert!(stderr(&out).contains("found a FIFO"), "{}", stderr(&out));
    // A glob, or a directory an INSERT creates, is not refused for not existing yet.
    let dir = tmp.path().join("new_dir/");
    let query = format!(
        "CREATE EXTERNAL TABLE t (a VARCHAR) STORED AS CSV LOCATION '{}'; \
         INSERT INTO t VALUES ('x'); SELECT count(*) AS n FROM t",
        dir.display()
    );
    let out = arrowfeat(&["sql", &query, "--allow-write"]);
    assert!(!stderr(&out).contains("no such file"), "{}", stderr(&out));
    // A FIFO inside a directory read as a table is skipped (listing reads regular files
    // only), not opened: the query ends, with the regular file's rows.
    let listed = tmp.path().join("listed");
    std::fs::create_dir(&listed).unwrap();
    assert!(Command::new("mkfifo")
        .arg(listed.join("a.csv"))
        .status()
        .unwrap()
        .success());
    std::fs::write(listed.join("b.csv"), "a\n1\n2\n").unwrap();
    for args in [
        vec![
            "sql".to_string(),
            format!("SELECT count(*) AS n FROM '{}/'", listed.display()),
        ],
        vec![
            "sql".to_string(),
            "SELECT count(*) AS n FROM t".to_string(),
            "--table".to_string(),
            format!("t={}/", listed.display()),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = arrowfeat(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("| 2 |"), "{}", stdout(&out));
    }
    // A directory of Hive partitions only (`day=1/`, `day=2/`) is a table of its files.
    let partitioned = tmp.path().join("partitioned");
    for day in ["day=1", "day=2"] {
        std::fs::create_dir_all(partitioned.join(day)).unwrap();
        std::fs::write(partitioned.join(day).join("part.csv"), "a\n1\n2\n").unwrap();
    }
    let table = format!("t={}", partitioned.display());
    let out = arrowfeat(&["sql", "SELECT count(*) AS n FROM t", "--table", &table]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("| 4 |"), "{}", stdout(&out));
}

#[test]
fn table_output_is_bounded_and_other_formats_stream() {
    let query = "SELECT value FROM generate_series(1, 50000)";
    let out = arrowfeat(&["sql", query, "--max-rows", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ")).count(),
        6,
        "{text}"
    );
    assert!(text.contains("only the first 5 rows are shown"), "{text}");
    let out = arrowfeat(&["sql", query, "--format", "ndjson", "--max-rows", "5"]);
    assert_eq!(stdout(&out).lines().count(), 50_000);
}

#[test]
fn training_set_from_files() {
    let args = [
        "training-set",
        "--spine",
        "examples/data/labels.csv",
        "--events",
        "examples/data/events.parquet",
        "--by",
        "user_id",
        "--spine-time",
        "label_ts",
        "--event-time",
        "event_ts",
        "--ttl",
        "7d",
        "--feature",
        "amount",
        "--feature",
        "amount:sum:6h",
        "--feature",
        "amount:count:1d",
        "--feature",
        "channel:last:1d",
        "--format",
        "csv",
    ];
    let out = arrowfeat(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
    // Bad input: one-line errors, exit 2 for usage errors.
    let mut bad = args.to_vec();
    bad[16] = "amount:median:6h";
    let out = arrowfeat(&bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("expected one of last, first, sum, count, mean, min, max, found \"median\""),
        "{}",
        stderr(&out)
    );
    let mut bad = args.to_vec();
    bad[4] = "examples/data/nothing.parquet";
    let out = arrowfeat(&bad);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "arrowfeat: error: --events examples/data/nothing.parquet: no such file or directory\n"
    );
    let mut bad = args.to_vec();
    bad[14] = "no_such_column";
    let out = arrowfeat(&bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no_such_column"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn training_set_in_sql_equals_the_subcommand() {
    let sql = "SELECT * FROM point_in_time('examples/data/labels.csv', \
               'examples/data/events.parquet', 'user_id', 'label_ts', 'event_ts', 'amount', \
               'amount:sum:6h', 'amount:count:1d', 'channel:last:1d', 'ttl=7d')";
    let from_sql = arrowfeat(&["sql", sql, "--format", "csv"]);
    assert!(from_sql.status.success(), "{}", stderr(&from_sql));
    let from_subcommand = arrowfeat(&[
        "training-set",
        "--spine",
        "examples/data/labels.csv",
        "--events",
        "examples/data/events.parquet",
        "--by",
        "user_id",
        "--spine-time",
        "label_ts",
        "--event-time",
        "event_ts",
        "--ttl",
        "7d",
        "--feature",
        "amount",
        "--feature",
        "amount:sum:6h",
        "--feature",
        "amount:count:1d",
        "--feature",
        "channel:last:1d",
        "--format",
        "csv",
    ]);
    assert!(
        from_subcommand.status.success(),
        "{}",
        stderr(&from_subcommand)
    );
    assert_eq!(stdout(&from_sql), stdout(&from_subcommand));
    assert_eq!(stdout(&from_sql).lines().count(), 51);

    // Files named in the call are checked like files in FROM: exit 2, one line.
    let out = arrowfeat(&[
        "sql",
        "SELECT * FROM point_in_time('examples/data/labels.csv', 'examples/data/nothing.parquet', \
         'user_id', 'label_ts', 'event_ts', 'amount')",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "arrowfeat: error: point_in_time events 'examples/data/nothing.parquet': no such file or directory\n"
    );
    // A bad feature is one line naming the function and the argument, exit 1.
    let out = arrowfeat(&[
        "sql",
        "SELECT * FROM point_in_time('examples/data/labels.csv', 'examples/data/events.parquet', \
         'user_id', 'label_ts', 'event_ts', 'amount:median')",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("point_in_time: argument `features`: argument 6: expected one of"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn training_sets_do_not_depend_on_how_files_are_read_in_parallel() {
    // Four event files with the same event time: the tie goes to the last row in file
    // order (files by path), on every run, although the session reads files in parallel.
    let tmp = tempdir("ties");
    let dir = tmp.path();
    let events = dir.join("events");
    std::fs::create_dir_all(&events).unwrap();
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        std::fs::write(
            events.join(format!("{name}.csv")),
            format!("k,ts,v\n1,10,{i}\n"),
        )
        .unwrap();
    }
    let mut spine = String::from("k,t\n");
    for row in 0..2000 {
        spine.push_str(&format!("{},{}\n", row % 3, 20 + row));
    }
    std::fs::write(dir.join("spine.csv"), &spine).unwrap();
    let query = format!(
        "SELECT * FROM point_in_time('{}', '{}/', 'k', 't', 'ts', 'v')",
        dir.join("spine.csv").display(),
        events.display()
    );
    let first = arrowfeat(&["sql", &query, "--format", "csv"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 2000);
    assert_eq!(rows[0], "0,20,");
    assert_eq!(rows[1], "1,21,3", "the last file's row wins the tie");
    // The spine's own order, row by row.
    for (i, row) in rows.iter().enumerate() {
        assert!(
            row.starts_with(&format!("{},{},", i % 3, 20 + i)),
            "row {i}: {row}"
        );
    }
    for _ in 0..3 {
        assert_eq!(
            stdout(&arrowfeat(&["sql", &query, "--format", "csv"])),
            text
        );
    }
    // An integer time beside a timestamp is refused, not silently read as nanoseconds.
    let query = format!(
        "SELECT * FROM point_in_time('{}', 'examples/data/events.parquet', '', 't', 'event_ts', 'amount')",
        dir.join("spine.csv").display()
    );
    let out = arrowfeat(&["sql", &query]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("argument `event_time`: expected event time `event_ts` of the kind of spine time `t` (Int64: an integer (nanoseconds)), found Timestamp"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn output_never_echoes_control_characters_and_parquet_is_not_written_as_text() {
    let out = arrowfeat(&["sql", "SELECT chr(27) || '[31mred' || chr(8238) AS s"]);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("\\u{1b}[31mred\\u{202e}"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains('\u{1b}'));
    // A newline inside a value (or a name) is a cell's escape, not another row.
    let out = arrowfeat(&["sql", "SELECT concat('a', chr(10), 'b') AS \"x\ny\""]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "+---------+\n| x\\u{a}y |\n+---------+\n| a\\u{a}b |\n+---------+\n"
    );
    let out = arrowfeat(&["sql", "SELECT * FROM point_in_time('examples/data/labels.csv', 'examples/data/events.parquet', 'user_id', 'label_ts', 'event_ts', 'x' || chr(27) || '[2J')"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("expected a column `x\\u{1b}[2J` in the events"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1);
    let tmp = tempdir("o");
    let target = tmp.path().join("out.parquet");
    let out = arrowfeat(&["sql", "SELECT 1 AS a", "-o", target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("arrowfeat sql writes text"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());
    // -o FILE.csv writes CSV without --format.
    let target = target.with_extension("csv");
    let out = arrowfeat(&["sql", "SELECT 1 AS a", "-o", target.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "a\n1\n");
}

#[test]
fn spark_int96_timestamps_keep_their_value() {
    // Spark writes timestamps as INT96 by default: read as microseconds, year 1 stays year
    // 1 (as nanoseconds it wrapped to 1754) and hashes as in Spark.
    let out = sql_csv("SELECT t, xxhash64(t) AS h FROM 'tests/fixtures/int96_timestamps.parquet'");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "t,h\n0001-01-02T00:00:00,2988787621189898543\n2024-03-01T10:00:00,8567409617254857896\n,42\n"
    );
}

#[test]
fn sql_like_psql_stdin_output_file_nulls_read_only_and_closed_pipes() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let run_with_stdin = |args: &[&str], input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
            .args(args)
            .current_dir(repo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    for args in [
        &["sql", "--format", "csv"][..],
        &["sql", "-f", "-", "--format", "csv"][..],
    ] {
        let out = run_with_stdin(args, "SELECT 1 AS a");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "a\n1\n");
    }
    // JSON keeps null columns.
    let out = arrowfeat(&["sql", "SELECT 1 AS a, NULL AS e", "--format", "json"]);
    assert_eq!(stdout(&out), "[{\"a\":1,\"e\":null}]\n");
    // -o FILE.
    let tmp = tempdir("sql");
    let dir = tmp.path();
    let file = dir.join("out.csv");
    let out = arrowfeat(&[
        "sql",
        "SELECT 2 AS b",
        "--format",
        "csv",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "b\n2\n");
    // Read-only unless --allow-write.
    let target = dir.join("copy.csv");
    let copy = format!("COPY (SELECT 1 AS a) TO '{}'", target.display());
    let out = arrowfeat(&["sql", &copy]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("read-only unless given --allow-write"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());
    let out = arrowfeat(&["sql", "--allow-write", &copy]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(target.exists());
    // A reader that stops early (`| head -1`): a quiet, successful end.
    let mut child = Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args([
            "sql",
            "SELECT * FROM generate_series(1, 2000000)",
            "--format",
            "csv",
        ])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 6];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_corrupt_parquet_file_in_a_directory_is_named() {
    // The reader's errors name only the directory; the first file whose footer or Arrow
    // schema cannot be read is named after them.
    let tmp = tempdir("corrupt-dir");
    let dir = tmp.path().join("day=1");
    std::fs::create_dir(&dir).unwrap();
    let events = std::fs::read(repo().join("examples/data/events.parquet")).unwrap();
    std::fs::write(dir.join("a.parquet"), &events).unwrap();
    std::fs::write(dir.join("b.parquet"), &events[..3000]).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/corrupt/arrow-schema-metadata.parquet"),
        dir.join("c.parquet"),
    )
    .unwrap();
    // A writer's own directory (`_` name): the reader ignores it, and so does the note.
    std::fs::create_dir(tmp.path().join("_aaa")).unwrap();
    std::fs::write(tmp.path().join("_aaa/a.parquet"), &events[..3000]).unwrap();
    let root = tmp.path().display().to_string();
    let culprit = |dir: &str| {
        format!(
            "(in '{dir}', the first file that cannot be read: 'day=1/b.parquet': \
             Invalid Parquet file. Corrupt footer)"
        )
    };
    let out = arrowfeat(&["sql", &format!("SELECT count(*) FROM '{root}/'")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The reader's own reason is whichever bad file it opened first; the note names the
    // first by path, with its own reason.
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "arrowfeat: error: cannot read a Parquet file in '{root}/': "
        )) && err.ends_with(&format!(" {}\n", culprit(&format!("{root}/")))),
        "{err}"
    );
    let out = arrowfeat(&[
        "sql",
        "SELECT count(*) FROM t",
        "--table",
        &format!("t={root}"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "arrowfeat: error: --table t={root}: cannot read a Parquet file of the directory "
        )) && err.ends_with(&format!(" {}\n", culprit(&root))),
        "{err}"
    );
    // With the bad footer gone, the file with a corrupt Arrow schema is the first.
    std::fs::remove_file(dir.join("b.parquet")).unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT count(*) FROM '{root}/'")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with(&format!(
            "(in '{root}/', the first file that cannot be read: 'day=1/c.parquet': \
             the Arrow schema stored in its metadata (ARROW:schema) is corrupt)\n"
        )),
        "{}",
        stderr(&out)
    );
    // Every footer readable: the directory alone is named, as before.
    std::fs::remove_file(dir.join("c.parquet")).unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT count(*) FROM '{root}/'")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "+----------+\n| count(*) |\n+----------+\n| 2000     |\n+----------+\n"
    );
}

#[test]
fn training_set_names_a_corrupt_parquet_input() {
    for (file, want) in [
        (
            "tests/fixtures/corrupt/arrow-schema-metadata.parquet",
            "--events tests/fixtures/corrupt/arrow-schema-metadata.parquet: cannot read the Parquet \
             file: the Arrow schema stored in its metadata (ARROW:schema) is corrupt",
        ),
        (
            "tests/fixtures/corrupt/footer-panics-reader.parquet",
            "cannot read the Parquet file --events tests/fixtures/corrupt/footer-panics-reader.parquet: \
             the file is corrupt (the Parquet reader failed on it)",
        ),
    ] {
        let out = arrowfeat(&[
            "training-set",
            "--spine",
            "examples/data/labels.csv",
            "--events",
            file,
            "--by",
            "user_id",
            "--spine-time",
            "label_ts",
            "--event-time",
            "event_ts",
            "--feature",
            "amount:sum:6h",
        ]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), format!("arrowfeat: error: {want}\n"));
    }
}

#[test]
fn training_set_created_cutoff_hides_events_not_yet_created() {
    let tmp = tempdir("cutoff");
    let spine = tmp.path().join("labels.csv");
    let events = tmp.path().join("events.csv");
    std::fs::write(
        &spine,
        "k,t\n1,2026-01-01T00:00:10\n1,2026-01-01T00:00:12\n",
    )
    .unwrap();
    std::fs::write(
        &events,
        "k,t,created,v\n\
         1,2026-01-01T00:00:05,2026-01-01T00:00:12,1\n\
         1,2026-01-01T00:00:03,2026-01-01T00:00:04,2\n",
    )
    .unwrap();
    let run_on = |spine: &Path, events: &Path, extra: &[&str]| {
        let mut args = vec![
            "training-set",
            "--spine",
            spine.to_str().unwrap(),
            "--events",
            events.to_str().unwrap(),
            "--by",
            "k",
            "--spine-time",
            "t",
            "--event-time",
            "t",
            "--created",
            "created",
            "--feature",
            "v",
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        arrowfeat(&args)
    };
    let run = |extra: &[&str]| run_on(&spine, &events, extra);
    // Without the cutoff the event at 5 s is visible at 10 s although created at 12 s.
    let out = run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,t,v\n1,2026-01-01T00:00:10,1\n1,2026-01-01T00:00:12,1\n"
    );
    let out = run(&["--created-cutoff"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,t,v\n1,2026-01-01T00:00:10,2\n1,2026-01-01T00:00:12,1\n"
    );
    // Windows are refused with the cutoff, by flag, as a usage error.
    let out = run(&["--created-cutoff", "--feature", "v:sum:1h"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "arrowfeat: error: --created-cutoff: expected only as-of features (COLUMN or COLUMN:last), found --feature v:sum:1h\n"
    );
    let out = run(&["--created-cutoff", "--feature", "v:SUM:3600s as total"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("found --feature v:SUM:3600s as total\n"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--created-cutoff", "--feature", "v:first"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("found --feature v:first\n"),
        "{}",
        stderr(&out)
    );
    // A run that fails while writing leaves no output behind (the CSV writer refuses a
    // list, after creating the file).
    let listed = tmp.path().join("listed.json");
    let spine_ns = tmp.path().join("labels_ns.csv");
    std::fs::write(
        &listed,
        "{\"k\":1,\"t\":1767225605000000000,\"created\":1767225600000000000,\"v\":[1,2]}\n",
    )
    .unwrap();
    std::fs::write(&spine_ns, "k,t\n1,1767225610000000000\n").unwrap();
    let output = tmp.path().join("training.csv");
    let out = run_on(&spine_ns, &listed, &["-o", output.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not supported in CSV"),
        "{}",
        stderr(&out)
    );
    assert!(!output.exists(), "a partial training set was left behind");
    // Created times compared with label times must be times too, named by column.
    std::fs::write(&events, "k,t,created,v\n1,2026-01-01T00:00:05,12,1\n").unwrap();
    let out = run(&["--created-cutoff"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("expected created time `created` of the kind of spine time `t`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn spark_output_directories_read_as_one_table_and_mixed_ones_are_refused() {
    // Spark writes `_SUCCESS` and `.crc` files beside its parts; DataFusion's own `FROM`
    // took the format from the first file and answered "table not found".
    let tmp = tempdir("spark-output");
    let events = std::fs::read(repo().join("examples/data/events.parquet")).unwrap();
    let out_dir = tmp.path().join("out");
    std::fs::create_dir_all(out_dir.join("day=2")).unwrap();
    std::fs::write(out_dir.join("_SUCCESS"), b"").unwrap();
    std::fs::write(out_dir.join(".part-0.parquet.crc"), b"crc").unwrap();
    std::fs::write(out_dir.join("README.txt"), b"notes").unwrap();
    std::fs::create_dir_all(out_dir.join("day=1")).unwrap();
    std::fs::write(out_dir.join("day=1/part-0.parquet"), &events).unwrap();
    std::fs::write(out_dir.join("day=1/_SUCCESS"), b"").unwrap();
    std::fs::write(out_dir.join("day=2/part-1.parquet"), &events).unwrap();
    let root = out_dir.display().to_string();
    let single = sql_csv("SELECT count(*) AS n FROM 'examples/data/events.parquet'");
    let n: u64 = stdout(&single).lines().nth(1).unwrap().parse().unwrap();
    for from in [format!("'{root}/'"), format!("'{root}'"), "t".to_string()] {
        let out = arrowfeat(&[
            "sql",
            &format!("SELECT count(*) AS n, count(DISTINCT day) AS days FROM {from}"),
            "--table",
            &format!("t={root}"),
            "--format",
            "csv",
        ]);
        assert_eq!(out.status.code(), Some(0), "{from}: {}", stderr(&out));
        // Hive partitions are columns, as in Spark.
        assert_eq!(stdout(&out), format!("n,days\n{},2\n", 2 * n), "{from}");
    }
    // A `.pq` file by itself, and a directory of them, read as Parquet.
    std::fs::write(tmp.path().join("one.pq"), &events).unwrap();
    let pq = tmp.path().join("one.pq").display().to_string();
    let out = sql_csv(&format!("SELECT count(*) AS n FROM '{pq}'"));
    assert_eq!(stdout(&out), format!("n\n{n}\n"), "{}", stderr(&out));
    // Two data extensions: refused, naming one file of each, rather than half read.
    std::fs::write(out_dir.join("day=2/extra.csv"), b"a\n1\n").unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT count(*) FROM '{root}/'")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "arrowfeat: error: FROM '{root}/': the directory holds files of two data \
             extensions, `.parquet` (such as 'day=1/part-0.parquet') and `.csv` (such as \
             'day=2/extra.csv'); a table reads files of one extension: move the others out\n"
        )
    );
    let out = arrowfeat(&["sql", "SELECT 1", "--table", &format!("t={root}")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("--table t={root}: the directory holds")));
    // No data file at all: said so, not "table not found".
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("_SUCCESS"), b"").unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT 1 FROM '{}/'", empty.display())]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no data file in the directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn spark_null_partitions_read_as_null_and_other_partitions_are_still_pruned() {
    // Spark writes the rows whose partition key is null under
    // `key=__HIVE_DEFAULT_PARTITION__`; DataFusion alone read that name as the value.
    let tmp = tempdir("null-partitions");
    let events = std::fs::read(repo().join("examples/data/events.parquet")).unwrap();
    let root = tmp.path().join("out");
    for dir in [
        "day=1/hour=__HIVE_DEFAULT_PARTITION__",
        "day=__HIVE_DEFAULT_PARTITION__/hour=2",
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join("part-0.parquet"), &events).unwrap();
    }
    let root = root.display().to_string();
    let single = sql_csv("SELECT count(*) AS n FROM 'examples/data/events.parquet'");
    let n: u64 = stdout(&single).lines().nth(1).unwrap().parse().unwrap();
    let query = "SELECT day, hour, count(*) AS n FROM t GROUP BY day, hour ORDER BY day";
    for (from, table) in [
        (format!("'{root}/'"), vec![]),
        ("t".into(), vec!["--table".to_string(), format!("t={root}")]),
    ] {
        let mut args = vec![
            "sql".to_string(),
            query.replace("FROM t", &format!("FROM {from}")),
            "--format".into(),
            "csv".into(),
        ];
        args.extend(table);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = arrowfeat(&args);
        assert_eq!(
            stdout(&out),
            format!("day,hour,n\n1,,{n}\n,2,{n}\n"),
            "{from}: {}",
            stderr(&out)
        );
    }
    let out = sql_csv(&format!(
        "SELECT count(*) AS n FROM '{root}/' WHERE day IS NULL AND hour = '2'"
    ));
    assert_eq!(stdout(&out), format!("n\n{n}\n"), "{}", stderr(&out));
    // A filter on a key still prunes: the plan reads one file.
    let out = sql_csv(&format!(
        "EXPLAIN SELECT user_id FROM '{root}/' WHERE day = '1'"
    ));
    let plan = stdout(&out);
    assert!(plan.contains("file_groups={1 group: [["), "{plan}");
    assert!(
        !plan.contains("day=__HIVE_DEFAULT_PARTITION__/hour=2"),
        "{plan}"
    );
    // DataFusion writes a null key as `key=`: read back as null.
    let copied = tmp.path().join("copied").display().to_string();
    let out = arrowfeat(&[
        "sql",
        &format!(
            "COPY (SELECT user_id, day FROM '{root}/') TO '{copied}/' STORED AS PARQUET \
             PARTITIONED BY (day)"
        ),
        "--allow-write",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sql_csv(&format!(
        "SELECT count(*) AS n FROM '{copied}/' WHERE day IS NULL"
    ));
    assert_eq!(stdout(&out), format!("n\n{n}\n"), "{}", stderr(&out));
    // An external table reads them alike, and takes inserts.
    let out = arrowfeat(&[
        "sql",
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{root}/'; \
             INSERT INTO t SELECT * EXCLUDE (hour), '3' FROM t WHERE day = '1'; \
             SELECT count(*) AS n FROM t WHERE day IS NULL OR hour = '3'"
        ),
        "--format",
        "csv",
        "--allow-write",
    ]);
    assert_eq!(stdout(&out), format!("n\n{}\n", 2 * n), "{}", stderr(&out));
    let out = sql_csv(&format!(
        "SELECT count(*) AS n FROM '{root}/' WHERE hour = '3'"
    ));
    assert_eq!(stdout(&out), format!("n\n{n}\n"), "{}", stderr(&out));
    // Keys declared with a type read the null names as null and the others as that type
    // (DataFusion failed to parse `__HIVE_DEFAULT_PARTITION__` as an INT).
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE typed (event_id BIGINT, day INT, hour INT) STORED AS PARQUET \
         PARTITIONED BY (day, hour) LOCATION '{root}/'; \
         SELECT day, hour, arrow_typeof(day) AS t, count(*) AS n FROM typed \
         GROUP BY day, hour ORDER BY day, hour"
    ));
    assert_eq!(
        stdout(&out),
        format!("day,hour,t,n\n1,3,Int32,{n}\n1,,Int32,{n}\n,2,Int32,{n}\n"),
        "{}",
        stderr(&out)
    );
    // Filters on a key leave out its null rows: the listing table took a key filter as
    // exact, and `day <> 1` returned the null partition's rows.
    for (table, filter, rows) in [
        ("typed", "day <> 1", 0),
        ("typed", "hour < 100", 2),
        ("typed", "NOT (day = 1)", 0),
        ("typed", "hour BETWEEN 0 AND 100", 2),
        ("t", "day <> '1'", 0),
        (&format!("'{root}/'"), "day <> '1'", 0),
        (&format!("'{root}/'"), "hour <> '2'", 1),
    ] {
        let out = sql_csv(&format!(
            "CREATE EXTERNAL TABLE typed (event_id BIGINT, day INT, hour INT) STORED AS PARQUET \
             PARTITIONED BY (day, hour) LOCATION '{root}/'; \
             CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{root}/'; \
             SELECT count(*) AS n FROM {table} WHERE {filter}"
        ));
        assert_eq!(
            stdout(&out),
            format!("n\n{}\n", rows * n),
            "{table} WHERE {filter}: {}",
            stderr(&out)
        );
    }
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE typed (event_id BIGINT, day INT, hour INT) STORED AS PARQUET \
         PARTITIONED BY (day, hour) LOCATION '{root}/'; \
         SELECT count(*) AS n FROM typed WHERE day = 1 AND hour IS NULL"
    ));
    assert_eq!(stdout(&out), format!("n\n{n}\n"), "{}", stderr(&out));
}

#[test]
fn a_copy_output_beside_another_writers_parquet_reads_as_one_table() {
    // The bundled file embeds `channel` as `string`, DataFusion's COPY as `string_view`:
    // DataFusion merged the two before reading both as views, and failed the directory.
    let tmp = tempdir("mixed-strings");
    let dir = tmp.path().join("d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        repo().join("examples/data/events.parquet"),
        dir.join("a.parquet"),
    )
    .unwrap();
    let root = dir.display().to_string();
    let out = arrowfeat(&[
        "sql",
        &format!("COPY (SELECT * FROM '{root}/a.parquet' LIMIT 3) TO '{root}/b.parquet'"),
        "--allow-write",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let count = |from: &str| {
        let out = sql_csv(&format!(
            "SELECT count(*) AS n, count(channel) AS c FROM {from}"
        ));
        assert_eq!(out.status.code(), Some(0), "{from}: {}", stderr(&out));
        stdout(&out)
    };
    let n: u64 = count(&format!("'{root}/a.parquet'"))
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        count(&format!("'{root}/'")),
        format!("n,c\n{},{}\n", n + 3, n + 3)
    );
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{root}/'; \
         SELECT count(*) AS n, count(channel) AS c FROM t"
    ));
    assert_eq!(
        stdout(&out),
        format!("n,c\n{},{}\n", n + 3, n + 3),
        "{}",
        stderr(&out)
    );
}

#[test]
fn csv_files_with_reordered_headers_are_refused_not_read_by_position() {
    // DataFusion takes a CSV table's columns from the headers but reads each file by
    // position: `b,a` beside `a,b` printed a=2 for a row whose `a` is 1.
    let tmp = tempdir("csv-headers");
    let dir = tmp.path().join("d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("1.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(dir.join("2.csv"), "a,b\n3,4\n").unwrap();
    let root = dir.display().to_string();
    let query = format!("SELECT a, b FROM '{root}/' ORDER BY a");
    let out = arrowfeat(&["sql", &query, "--format", "csv"]);
    assert_eq!(stdout(&out), "a,b\n1,2\n3,4\n", "{}", stderr(&out));
    std::fs::write(dir.join("2.csv"), "b,a\n4,3\n").unwrap();
    for args in [
        vec!["sql", query.as_str()],
        vec!["sql", "SELECT * FROM t", "--table", &format!("t={root}")],
    ] {
        let out = arrowfeat(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).ends_with(
                ": '2.csv' has `b` as column 1 where '1.csv' has `a` as column 1; the CSV \
                 files of one table are read by column position, so they must share one \
                 header: write them with the same columns in the same order\n"
            ),
            "{}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "");
    }
    // External tables are checked as `FROM` is; headerless files are not compared, and a
    // pattern (whose files would go unchecked) is refused.
    let external = |location: &str, options: &str| {
        sql_csv(&format!(
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{location}' {options}; \
                 SELECT count(*) AS n FROM t"
        ))
    };
    let out = external(&format!("{root}/"), "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("'2.csv' has `b` as column 1"));
    let out = external(&format!("{root}/"), "OPTIONS ('format.has_header' 'false')");
    assert_eq!(stdout(&out), "n\n4\n", "{}", stderr(&out));
    let out = external(&format!("{root}/*.csv"), "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("*.csv': patterns are not read; name a file or a directory"));
    // A setting that would read plain subdirectories, which are not checked, is fixed;
    // and a plain subdirectory holding data is refused, as the reader leaves it out.
    std::fs::write(dir.join("2.csv"), "a,b\n3,4\n").unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/3.csv"), "b,a\n6,5\n").unwrap();
    let out = arrowfeat(&[
        "sql",
        &format!("SET datafusion.execution.listing_table_ignore_subdirectory = false; {query}"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this setting is fixed"),
        "{}",
        stderr(&out)
    );
    let out = arrowfeat(&["sql", &query, "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("'sub' is a subdirectory whose name is not key=value, and it holds data files (such as 'sub/3.csv')"),
        "{}",
        stderr(&out)
    );
    std::fs::rename(dir.join("sub"), dir.join("_sub")).unwrap();
    let out = arrowfeat(&["sql", &query, "--format", "csv"]);
    assert_eq!(stdout(&out), "a,b\n1,2\n3,4\n", "{}", stderr(&out));
    std::fs::remove_dir_all(dir.join("_sub")).unwrap();
    // `has_header` given twice (DataFusion takes the last), and a comment line before
    // the header: both compared as the reader reads them.
    std::fs::write(dir.join("2.csv"), "b,a\n4,3\n").unwrap();
    let out = external(
        &format!("{root}/"),
        "OPTIONS ('format.has_header' 'false', 'FORMAT.HAS_HEADER' 'true')",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    std::fs::write(dir.join("1.csv"), "# made by hand\na,b\n1,2\n").unwrap();
    std::fs::write(dir.join("2.csv"), "# made by hand\nb,a\n4,3\n").unwrap();
    let out = external(&format!("{root}/"), "OPTIONS ('format.comment' '#')");
    assert!(
        stderr(&out).contains("'2.csv' has `b` as column 1"),
        "{}",
        stderr(&out)
    );
    // Declared columns in another order than the header's would be read by position.
    std::fs::write(dir.join("2.csv"), "# made by hand\na,b\n3,4\n").unwrap();
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE t (b INT, a INT) STORED AS CSV LOCATION '{root}/' \
         OPTIONS ('format.comment' '#'); SELECT * FROM t"
    ));
    assert!(
        stderr(&out).contains("declares `b` as column 1 but the files' header has it as column 2"),
        "{}",
        stderr(&out)
    );
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE t (x INT, y INT) STORED AS CSV LOCATION '{root}/' \
         OPTIONS ('format.comment' '#'); SELECT * FROM t ORDER BY x"
    ));
    assert_eq!(stdout(&out), "x,y\n1,2\n3,4\n", "{}", stderr(&out));
    // A pattern is refused even where a directory of that very name exists.
    std::fs::create_dir_all(tmp.path().join("d*")).unwrap();
    let out = external(&format!("{root}*"), "");
    assert!(
        stderr(&out).contains("patterns are not read"),
        "{}",
        stderr(&out)
    );
    // A file written by an earlier statement is checked (and seen: no stale listing),
    // also for tables made before it was written.
    std::fs::write(dir.join("1.csv"), "a,b\n1,2\n").unwrap();
    std::fs::remove_file(dir.join("2.csv")).unwrap();
    let copy = format!("COPY (SELECT 4 AS b, 3 AS a) TO '{root}/2.csv'");
    for (setup, table) in [
        (
            format!("CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{root}/'"),
            vec![],
        ),
        (
            "SELECT * FROM t".to_string(),
            vec!["--table".to_string(), format!("t={root}")],
        ),
    ] {
        let mut args = vec![
            "sql".to_string(),
            format!("{setup}; {copy}; SELECT * FROM t"),
            "--allow-write".to_string(),
        ];
        args.extend(table);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = arrowfeat(&args);
        assert_eq!(out.status.code(), Some(1), "{setup}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("'2.csv' has `b` as column 1"),
            "{}",
            stderr(&out)
        );
        std::fs::remove_file(dir.join("2.csv")).unwrap();
    }
    let out = arrowfeat(&[
        "sql",
        &format!(
            "SELECT count(*) FROM '{root}/'; COPY (SELECT 3 AS a, 4 AS b) TO '{root}/2.csv'; \
             SELECT count(*) AS n FROM '{root}/'"
        ),
        "--allow-write",
        "--format",
        "csv",
    ]);
    assert_eq!(stdout(&out), "n\n2\n", "{}", stderr(&out));
}

fn arrowfeat_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run arrowfeat")
}

#[test]
fn table_paths_are_literal_and_hostile_directories_are_refused() {
    let tmp = tempdir("literal-paths");
    let dir = tmp.path();
    let events = std::fs::read(repo().join("examples/data/events.parquet")).unwrap();
    let users = std::fs::read(repo().join("examples/data/users.csv")).unwrap();
    let count = |out: &Output| -> String {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        stdout(out).lines().nth(1).unwrap_or_default().to_string()
    };
    let csv = ["--format", "csv"];
    // `[1]` is part of the name, not a pattern matching `f1.parquet`.
    std::fs::write(dir.join("f[1].csv"), &users).unwrap();
    std::fs::write(dir.join("f1.csv"), b"user_id\n1\n").unwrap();
    let users_rows = count(&arrowfeat(
        &[
            &["sql", "SELECT count(*) FROM 'examples/data/users.csv'"][..],
            &csv[..],
        ]
        .concat(),
    ));
    let out = arrowfeat_in(
        dir,
        &[&["sql", "SELECT count(*) FROM 'f[1].csv'"][..], &csv[..]].concat(),
    );
    assert_eq!(count(&out), users_rows);
    let out = arrowfeat_in(
        dir,
        &[
            &["sql", "SELECT count(*) FROM t", "--table", "t=f[1].csv"][..],
            &csv[..],
        ]
        .concat(),
    );
    assert_eq!(count(&out), users_rows);
    // A `file://` URL is %-decoded: `a%20b` names `a b`.
    std::fs::create_dir(dir.join("a b")).unwrap();
    std::fs::write(dir.join("a b/x.csv"), &users).unwrap();
    let url = format!("file://{}/a%20b/", dir.display());
    let out = arrowfeat(
        &[
            &["sql", &format!("SELECT count(*) FROM '{url}'")][..],
            &csv[..],
        ]
        .concat(),
    );
    assert_eq!(count(&out), users_rows);
    let out = arrowfeat(
        &[
            &[
                "sql",
                "SELECT count(*) FROM t",
                "--table",
                &format!("t={url}"),
            ][..],
            &csv[..],
        ]
        .concat(),
    );
    assert_eq!(count(&out), users_rows);
    let out = arrowfeat(&["sql", "SELECT count(*) FROM 'file://host/x.csv'"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("file:///absolute/path"),
        "{}",
        stderr(&out)
    );
    // A bare name is a table's, not the directory's beside it: a view or table of that
    // name can be made, also over that directory.
    std::fs::create_dir(dir.join("spark")).unwrap();
    std::fs::write(dir.join("spark/part-0.parquet"), &events).unwrap();
    let sql =
        |statements: &str, cwd: &Path| arrowfeat_in(cwd, &["sql", statements, "--format", "csv"]);
    let out = sql(
        "CREATE VIEW spark AS SELECT 42 AS x; SELECT x FROM spark",
        dir,
    );
    assert_eq!(count(&out), "42");
    let out = sql(
        "CREATE TABLE spark AS SELECT 42 AS x; SELECT x FROM spark",
        dir,
    );
    assert_eq!(count(&out), "42");
    let rows = count(&sql(
        "SELECT count(*) FROM 'examples/data/events.parquet'",
        &repo(),
    ));
    let out = sql(
        "CREATE EXTERNAL TABLE spark STORED AS PARQUET LOCATION 'spark/'; \
         SELECT count(*) FROM spark",
        dir,
    );
    assert_eq!(count(&out), rows);
    // `..` in a path.
    let parent = format!(
        "../../{}/spark/",
        dir.file_name().unwrap().to_string_lossy()
    );
    let out = sql(
        &format!("SELECT count(*) FROM '{parent}'"),
        &dir.join("spark"),
    );
    assert_eq!(count(&out), rows);
    // A file named only by its extension is one (the reader reads it).
    std::fs::write(dir.join("spark/.parquet"), &events).unwrap();
    let out = sql("SELECT count(*) FROM 'spark/'", dir);
    assert_eq!(count(&out), (2 * rows.parse::<u64>().unwrap()).to_string());
    std::fs::remove_file(dir.join("spark/.parquet")).unwrap();
    // A `?` or `#` in a file URL would be dropped by the reader: refused.
    let out = arrowfeat(&[
        "sql",
        &format!("SELECT 1 FROM 'file://{}/spark/?x'", dir.display()),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // An empty Parquet file in a directory: refused, as a lone one is, not skipped.
    std::fs::write(dir.join("spark/part-1.parquet"), b"").unwrap();
    let out = arrowfeat_in(dir, &["sql", "SELECT count(*) FROM 'spark/'"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("an empty (0-byte) Parquet file, 'part-1.parquet'"),
        "{}",
        stderr(&out)
    );
    // A partition key that is also a column of the files.
    std::fs::create_dir_all(dir.join("clash/user_id=1")).unwrap();
    std::fs::write(dir.join("clash/user_id=1/a.csv"), &users).unwrap();
    let out = arrowfeat_in(dir, &["sql", "SELECT 1", "--table", "t=clash"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a column `user_id` that is also the key of `user_id=...`"),
        "{}",
        stderr(&out)
    );
    // A link back up is walked once, not until the entry limit.
    #[cfg(unix)]
    {
        std::fs::create_dir(dir.join("loop")).unwrap();
        std::fs::write(dir.join("loop/a.txt"), b"").unwrap();
        for k in 0..10 {
            std::os::unix::fs::symlink(".", dir.join(format!("loop/k{k}=v"))).unwrap();
        }
        let start = std::time::Instant::now();
        let out = arrowfeat_in(dir, &["sql", "SELECT 1 FROM 'loop/'"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("no data file in the directory"),
            "{}",
            stderr(&out)
        );
        // Not a timing assertion on the code's speed: a walk of every path through ten
        // links eight deep would not end within the test's lifetime.
        assert!(start.elapsed() < std::time::Duration::from_secs(60));
    }
}

#[test]
fn a_statement_without_result_columns_prints_nothing_and_succeeds() {
    for format in ["table", "csv", "json", "ndjson"] {
        let out = arrowfeat(&["sql", "CREATE VIEW v AS SELECT 1 AS a", "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{format}");
    }
}

/// `arrowfeat training-set` of `feature` (repeatable, `;`-separated) with key `k` and
/// time `t` on both sides, as CSV.
fn training_set_csv(spine: &str, events: &str, features: &str) -> Output {
    let mut args = vec![
        "training-set",
        "--spine",
        spine,
        "--events",
        events,
        "--by",
        "k",
        "--spine-time",
        "t",
        "--event-time",
        "t",
        "--format",
        "csv",
    ];
    for feature in features.split(';') {
        args.extend(["--feature", feature]);
    }
    arrowfeat(&args)
}

#[test]
fn float_columns_holding_nan_are_read_whole_not_from_their_bounds() {
    // Parquet writers leave NaN out of a float column's min and max. DataFusion took
    // [NaN, 2.0], with min = max = 2.0 and no nulls, for the constant 2.0 (so a label saw
    // the 2.0 of a later event), skipped it for `v > 3` and answered `max(v)` from the
    // footer. Each query is compared with the same query over the rows in memory.
    let tmp = tempdir("nan-bounds");
    let file = tmp.path().join("e.parquet").display().to_string();
    let rows = "SELECT column1 AS k, arrow_cast(column2, 'Timestamp(Nanosecond, None)') AS t, \
                column3 AS v, arrow_cast(column3, 'Float32') AS f, \
                arrow_cast(column3, 'Dictionary(Int32, Float64)') AS d FROM (VALUES \
                (1, 1, CAST('NaN' AS DOUBLE)), (1, 2, 2.0))";
    let out = arrowfeat(&[
        "sql",
        &format!("COPY ({rows}) TO '{file}'"),
        "--allow-write",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sql_csv(&format!(
        "SELECT arrow_typeof(d) AS d FROM '{file}' LIMIT 1"
    ));
    assert_eq!(stdout(&out), "d\n\"Dictionary(Int32, Float64)\"\n");
    for query in [
        "SELECT k, v, f, d FROM rows ORDER BY t",
        "SELECT count(*) AS n FROM rows WHERE d > 3",
        "SELECT count(*) AS n FROM rows WHERE v > 3",
        "SELECT count(*) AS n FROM rows WHERE f > 3",
        "SELECT count(*) AS n FROM rows WHERE v = 2.0",
        "SELECT max(v) AS high, min(v) AS low, max(f) AS f FROM rows",
        "SELECT v FROM rows ORDER BY v DESC LIMIT 1",
    ] {
        let from_memory = sql_csv(&query.replace("rows", &format!("({rows})")));
        let from_file = sql_csv(&query.replace("rows", &format!("'{file}'")));
        assert_eq!(
            from_memory.status.code(),
            Some(0),
            "{}",
            stderr(&from_memory)
        );
        assert_eq!(
            stdout(&from_file),
            stdout(&from_memory),
            "{query}: {}",
            stderr(&from_file)
        );
    }
    assert_eq!(
        stdout(&sql_csv(&format!(
            "SELECT count(*) AS n FROM '{file}' WHERE v > 3"
        ))),
        "n\n1\n",
        "NaN is above every number"
    );
    let spine = tmp.path().join("s.csv");
    std::fs::write(&spine, "k,t\n1,1970-01-01T00:00:00.000000001\n").unwrap();
    let out = training_set_csv(spine.to_str().unwrap(), &file, "v;v:max;d");
    assert_eq!(
        stdout(&out),
        "k,t,v,v_max,d\n1,1970-01-01T00:00:00.000000001,NaN,NaN,NaN\n",
        "{}",
        stderr(&out)
    );
}

#[test]
fn csv_types_are_inferred_from_every_row_so_no_time_is_cut() {
    // From its first 1,000 rows, a column of whole seconds was Timestamp(s) and a later
    // `10:00:00.500` read as 10:00:00, and `2024-01-01` rows made a later
    // `2024-01-01T23:00:00` a date: both events, after the label, were visible.
    let tmp = tempdir("csv-inference");
    let spine = tmp.path().join("s.csv");
    std::fs::write(&spine, "k,t\n1,2024-01-01T10:00:00\n").unwrap();
    for (name, filler, late) in [
        (
            "seconds.csv",
            "2024-01-01T09:00:00",
            "2024-01-01T10:00:00.500",
        ),
        ("dates.csv", "2023-01-01", "2024-01-01T23:00:00"),
    ] {
        let events = tmp.path().join(name);
        let mut text = "k,t,v\n".to_string();
        for _ in 0..1000 {
            text.push_str(&format!("2,{filler},0\n"));
        }
        text.push_str(&format!("1,{late},99\n"));
        std::fs::write(&events, text).unwrap();
        let out = training_set_csv(spine.to_str().unwrap(), events.to_str().unwrap(), "v");
        assert!(!stdout(&out).contains("99"), "{name}: {}", stdout(&out));
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("`t`") && stderr(&out).contains("Utf8"),
            "{name}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn training_set_keys_of_two_integer_types_all_match_and_the_spine_is_kept() {
    // A UInt64 spine key beside Int64 event keys was compared as Int64: 2^63 became null
    // in the output, and the key column came back as Int64.
    let tmp = tempdir("key-types");
    let spine = tmp.path().join("s.parquet").display().to_string();
    let events = tmp.path().join("e.parquet").display().to_string();
    let uint64_events = tmp.path().join("u.parquet").display().to_string();
    for (file, rows) in [
        (
            &spine,
            "SELECT arrow_cast(column1, 'UInt64') AS k, arrow_cast(10, 'Timestamp(Nanosecond, None)') AS t \
             FROM (VALUES (arrow_cast('9223372036854775808', 'UInt64')), (arrow_cast('5', 'UInt64')))",
        ),
        (
            &events,
            "SELECT arrow_cast(5, 'Int64') AS k, arrow_cast(1, 'Timestamp(Nanosecond, None)') AS t, 1.0 AS v",
        ),
        (
            &uint64_events,
            "SELECT arrow_cast(column1, 'Dictionary(Int32, UInt64)') AS k, \
             arrow_cast(1, 'Timestamp(Nanosecond, None)') AS t, 2.0 AS v \
             FROM (VALUES (arrow_cast('9223372036854775808', 'UInt64')))",
        ),
    ] {
        let out = arrowfeat(&["sql", &format!("COPY ({rows}) TO '{file}'"), "--allow-write"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = training_set_csv(&spine, &events, "v");
    assert_eq!(
        stdout(&out),
        "k,t,v\n9223372036854775808,1970-01-01T00:00:00.000000010,\n5,1970-01-01T00:00:00.000000010,1.0\n",
        "{}",
        stderr(&out)
    );
    // A key above Int64 matches its equal in another integer type.
    let out = training_set_csv(&spine, &uint64_events, "v");
    assert_eq!(
        stdout(&out),
        "k,t,v\n9223372036854775808,1970-01-01T00:00:00.000000010,2.0\n5,1970-01-01T00:00:00.000000010,\n",
        "{}",
        stderr(&out)
    );
    let out = sql_csv(&format!(
        "SELECT arrow_typeof(k) AS k FROM point_in_time('{spine}', '{events}', 'k', 't', 't', 'v')"
    ));
    assert_eq!(stdout(&out), "k\nUInt64\nUInt64\n", "{}", stderr(&out));
}

#[test]
fn an_events_csv_holding_only_its_header_has_no_events() {
    let tmp = tempdir("header-only");
    let spine = tmp.path().join("s.csv");
    let events = tmp.path().join("e.csv");
    std::fs::write(&spine, "k,t\n1,2024-01-01T10:00:00\n").unwrap();
    std::fs::write(&events, "k,t,v\n").unwrap();
    let out = training_set_csv(
        spine.to_str().unwrap(),
        events.to_str().unwrap(),
        "v;v:count;v:sum:1h",
    );
    assert_eq!(
        stdout(&out),
        "k,t,v,v_count,v_sum_1h\n1,2024-01-01T10:00:00,,0,\n",
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_parquet_file_with_two_columns_of_one_name_is_refused() {
    // The reader read one of them under that name and dropped the other, silently.
    let tmp = tempdir("repeated-column");
    let file = tmp.path().join("s.parquet");
    std::fs::copy(repo().join("tests/fixtures/repeated_column.parquet"), &file).unwrap();
    let file = file.display().to_string();
    let out = sql_csv(&format!("SELECT * FROM '{file}'"));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("s.parquet' has two columns named `t`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn parquet_files_whose_column_types_do_not_merge_are_refused_naming_both() {
    let tmp = tempdir("unmerged");
    let dir = tmp.path().join("d");
    std::fs::create_dir_all(&dir).unwrap();
    let root = dir.display().to_string();
    for (file, value) in [
        ("1", "make_array(arrow_cast('x', 'Utf8'))"),
        ("2", "make_array(arrow_cast('x', 'Utf8View'))"),
    ] {
        let out = arrowfeat(&[
            "sql",
            &format!("COPY (SELECT {value} AS tags) TO '{root}/{file}.parquet'"),
            "--allow-write",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = sql_csv(&format!("SELECT count(*) AS n FROM '{root}/'"));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let message = stderr(&out);
    assert!(
        message.contains("give column `tags` two types: '")
            && message.contains("2.parquet' has ")
            && message.contains("1.parquet' has "),
        "{message}"
    );
}

#[test]
fn csv_files_whose_times_have_different_digits_are_one_table() {
    let tmp = tempdir("time_units");
    let dir = tmp.path().join("d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.csv"), "k,t\n1,2026-01-01T11:00:00\n").unwrap();
    std::fs::write(dir.join("b.csv"), "k,t\n2,2026-01-01T11:00:00.5\n").unwrap();
    let root = dir.display().to_string();
    let out = sql_csv(&format!(
        "SELECT k, t, arrow_typeof(t) AS type FROM '{root}/' ORDER BY k"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,t,type\n1,2026-01-01T11:00:00,Timestamp(ms)\n2,2026-01-01T11:00:00.500,Timestamp(ms)\n"
    );
    // An external table infers its own schema: the difference is named, in words.
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{root}/' \
         OPTIONS ('format.has_header' 'true'); SELECT * FROM t"
    ));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let message = stderr(&out);
    assert!(
        message.contains("give a column two types") && !message.contains("Fail to merge"),
        "{message}"
    );
    // The two files are named with the table's own dialect: another delimiter, no header.
    let semi = tmp.path().join("semi");
    std::fs::create_dir_all(&semi).unwrap();
    std::fs::write(semi.join("a.csv"), "k;v\n1;2\n").unwrap();
    std::fs::write(semi.join("b.csv"), "k;v\n1;x\n").unwrap();
    let headless = tmp.path().join("headless");
    std::fs::create_dir_all(&headless).unwrap();
    std::fs::write(headless.join("a.csv"), "1,2\n").unwrap();
    std::fs::write(headless.join("b.csv"), "1,x\n").unwrap();
    for (dir, options, column) in [
        (&semi, "'format.delimiter' ';'", "v"),
        (&headless, "'format.has_header' 'false'", "column_2"),
    ] {
        let out = sql_csv(&format!(
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{}/' OPTIONS ({options}); \
             SELECT * FROM t",
            dir.display()
        ));
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let expected =
            format!("give column `{column}` two types: 'b.csv' has Utf8 where 'a.csv' has Int64");
        assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    }
    // A row of too many fields, in the table's own dialect.
    std::fs::write(semi.join("b.csv"), "k;v\n1;2\n3;4;5\n").unwrap();
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{}/' \
         OPTIONS ('format.delimiter' ';'); SELECT * FROM t",
        semi.display()
    ));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("b.csv' line 3: expected 2 fields as in the header, found 3"),
        "{}",
        stderr(&out)
    );
}

/// Files the reader would skip or not lay out as one table are refused in words: a link
/// to nothing (the table would be read without that file's rows), files beside and inside
/// partition directories.
#[cfg(unix)]
#[test]
fn dangling_links_and_mixed_layouts_are_refused_in_words() {
    let tmp = tempdir("layouts");
    let linked = tmp.path().join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::write(linked.join("a.csv"), "k\n1\n").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("gone.csv"), linked.join("b.csv")).unwrap();
    let out = sql_csv(&format!("SELECT * FROM '{}/'", linked.display()));
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("'b.csv' is a link to nothing"),
        "{}",
        stderr(&out)
    );
    let mixed = tmp.path().join("mixed");
    std::fs::create_dir_all(mixed.join("p=2")).unwrap();
    std::fs::write(mixed.join("a.csv"), "k\n1\n").unwrap();
    std::fs::write(mixed.join("p=2").join("b.csv"), "k\n2\n").unwrap();
    let out = sql_csv(&format!("SELECT * FROM '{}/'", mixed.display()));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let message = stderr(&out);
    assert!(
        message.contains("both beside and inside `key=value` subdirectories")
            && !message.contains("Found mixed"),
        "{message}"
    );
}

#[test]
fn json_output_keeps_nan_and_infinities() {
    // arrow-json writes them as null, which reads as "no value".
    let query = "SELECT CAST('NaN' AS DOUBLE) AS n, 1e308 * 10 AS i, -1e308 * 10 AS m, \
                 CAST(NULL AS DOUBLE) AS z, 0.5 AS h";
    for format in ["json", "ndjson"] {
        let out = arrowfeat(&["sql", query, "--format", format]);
        let text = stdout(&out);
        assert!(
            text.contains(r#"{"n":"NaN","i":"Infinity","m":"-Infinity","z":null,"h":0.5}"#),
            "{format}: {text}{}",
            stderr(&out)
        );
    }
    let tmp = tempdir("json-training-set");
    let spine = tmp.path().join("s.csv");
    let events = tmp.path().join("e.csv");
    let output = tmp.path().join("o.json");
    std::fs::write(&spine, "k,t\n1,2024-01-01T10:00:00\n").unwrap();
    std::fs::write(
        &events,
        "k,t,v\n1,2024-01-01T09:00:00,1e308\n1,2024-01-01T09:30:00,1e308\n",
    )
    .unwrap();
    let out = arrowfeat(&[
        "training-set",
        "--spine",
        spine.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--by",
        "k",
        "--spine-time",
        "t",
        "--event-time",
        "t",
        "--feature",
        "v:sum",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "{\"k\":1,\"t\":\"2024-01-01T10:00:00\",\"v_sum\":\"Infinity\"}\n"
    );
    // Read back as a number where the column is declared one.
    let out = sql_csv(&format!(
        "CREATE EXTERNAL TABLE back (v_sum DOUBLE) STORED AS JSON LOCATION '{}'; \
         SELECT v_sum > 1e308 AS big FROM back",
        output.display()
    ));
    assert_eq!(stdout(&out), "big\ntrue\n", "{}", stderr(&out));
}

#[test]
fn training_set_output_into_a_missing_directory_is_refused() {
    // DataFusion's writers made the missing directories, so a typo made a new tree.
    let tmp = tempdir("missing-dir");
    let output = tmp.path().join("no/such/dir/o.parquet");
    let out = arrowfeat(&[
        "training-set",
        "--spine",
        "examples/data/labels.csv",
        "--events",
        "examples/data/events.parquet",
        "--by",
        "user_id",
        "--spine-time",
        "label_ts",
        "--event-time",
        "event_ts",
        "--feature",
        "channel",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("expected a file in an existing directory, found no directory"),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.path().join("no").exists());
}

#[test]
fn malformed_json_lines_and_csv_headers_are_told_in_words_without_their_values() {
    let tmp = tempdir("text-shapes");
    let secret = "\\u001b[31mSECRET";
    let cases = [
        (
            "array.json",
            format!("[{{\"k\": \"{secret}\"}}]\n"),
            "line 1: expected a JSON object (one per line), found a list",
        ),
        (
            "bom.json",
            "\u{feff}{\"k\": 1}\n".to_string(),
            "line 1: the file starts with a UTF-8 byte order mark",
        ),
        (
            "kinds.json",
            format!("{{\"k\": {{\"a\": \"{secret}\"}}}}\n{{\"k\": [1]}}\n"),
            "line 2: field `k` is a list here but an object on line 1",
        ),
        (
            "items.json",
            format!("{{\"k\": [{{\"a\": 1}}, \"{secret}\"]}}\n"),
            "line 1: field `k[]` is both an object and a string",
        ),
        (
            "deep.json",
            format!("{{\"k\": [{{\"a\": \"{secret}\"}}]}}\n{{\"k\": 5}}\n"),
            "deep.json': the JSON values of one field are objects in one place and lists",
        ),
        (
            "header.csv",
            "k,v,k\n1,2,3\n".to_string(),
            "line 1: the header names two columns `k` (fields 1 and 3)",
        ),
        (
            "typed_header.csv",
            "k,v,k\n1,2.5,x\n".to_string(),
            "line 1: the header names two columns `k` (fields 1 and 3)",
        ),
        (
            "joined.json",
            "{\"k\": 1}\n\u{feff}{\"k\": 2}\n".to_string(),
            "line 2: a UTF-8 byte order mark starts the line",
        ),
        (
            "dotted.json",
            "{\"a.b\": {}}\n{\"a\": {\"b\": 1}}\n[1]\n".to_string(),
            "line 3: expected a JSON object (one per line), found a list",
        ),
        (
            "crlf.csv",
            "a,b\r\n1,2\r\n\r\n\r\n3,4,5\r\n".to_string(),
            "line 5: expected 2 fields as in the header, found 3",
        ),
    ];
    for (name, text, expected) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = arrowfeat(&["sql", &format!("SELECT * FROM '{}'", path.display())]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(expected), "{name}: {err}");
        for leak in ["SECRET", "\u{1b}", "Object", "Scalar", "Array ["] {
            assert!(!err.contains(leak), "{name} shows {leak:?}: {err}");
        }
    }
    // Declared columns are read by position and decoded as the reader decodes them: a
    // header naming a column twice, two objects on one line are no fault there.
    let header = tmp.path().join("declared.csv");
    std::fs::write(&header, "k,v,k\n1,2,3\n4,zz,6\n").unwrap();
    let lines = tmp.path().join("declared.json");
    std::fs::write(&lines, "{\"a\": 1} {\"a\": 2}\n{\"a\": \"zz\"}\n").unwrap();
    for (path, table, expected) in [
        (
            &header,
            "(a INT, b INT, c INT) STORED AS CSV",
            "line 3: expected a value of type Int32 in column `b`",
        ),
        (
            &lines,
            "(a INT) STORED AS JSON",
            "line 2: whilst decoding field 'a'",
        ),
    ] {
        let out = arrowfeat(&[
            "sql",
            &format!(
                "CREATE EXTERNAL TABLE t {table} LOCATION '{}'; SELECT * FROM t",
                path.display()
            ),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
    }
    // A file read alone is named once, by the argument that names it.
    let path = tmp.path().join("array.json");
    let table = format!("t={}", path.display());
    let out = arrowfeat(&["sql", "--table", &table, "SELECT * FROM t"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "--table {table}: cannot read line 1: expected a JSON object"
        )),
        "{}",
        stderr(&out)
    );
}

/// Files read as an external table declares (its dialect, its columns) are judged as its
/// reader reads them: the line named is the one it fails on, and a file it reads whole is
/// never blamed.
#[test]
fn external_tables_name_the_line_their_reader_fails_on() {
    let tmp = tempdir("external-lines");
    let columns = "(user_id VARCHAR, event_ts TIMESTAMP, amount DOUBLE)";
    let at = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let cases = [
        (
            format!(
                "STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true', 'format.delimiter' ';')",
                at("semi.csv", "k;amount\nu1;1.5\nu2;9007199254740993\n")
            ),
            "semi.csv' line 3: column `amount` is read as floats".to_string(),
        ),
        (
            format!(
                "STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true')",
                at("crlf.csv", "k,amount\r\nu1,1.5\r\n\r\nu2,9007199254740993\r\n")
            ),
            "crlf.csv' line 4: column `amount` is read as floats".to_string(),
        ),
        (
            format!(
                "(a INT) STORED AS JSON LOCATION '{}/'",
                {
                    at("jd/a.json", "{\"a\":1}{\"a\":2}\n");
                    at("jd/b.json", "{\"a\":1}\n{\"a\":\"x\"}\n");
                    tmp.path().join("jd").display().to_string()
                }
            ),
            "b.json' line 2: whilst decoding field 'a'".to_string(),
        ),
        (
            format!(
                "{columns} STORED AS JSON LOCATION '{}'",
                at(
                    "pretty.json",
                    "{\"user_id\":\"u1\",\n \"amount\":1.5}\n{\"user_id\":\"u2\",\"amount\":\"x\"}\n"
                )
            ),
            "pretty.json' line 3: whilst decoding field 'amount'".to_string(),
        ),
        (
            format!(
                "{columns} STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true', 'format.truncated_rows' 'true')",
                at("short.csv", "user_id,event_ts,amount\nu1,2026-01-01T00:00:00Z\nu3,2026-01-01T00:00:00Z,x\n")
            ),
            "short.csv' line 3: expected a value of type Float64 in column `amount`".to_string(),
        ),
        (
            format!(
                "{columns} STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true')",
                at("cr.csv", "user_id,event_ts,amount\ru1,2026-01-01T00:00:00Z,1.5\ru2,2026-01-01T00:00:00Z,x\r")
            ),
            "cr.csv' line 3: expected a value of type Float64 in column `amount`".to_string(),
        ),
        (
            format!(
                "{columns} STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'false')",
                at("wide.csv", "u1,2026-01-01T00:00:00Z,1.5,7\n")
            ),
            "wide.csv' line 1: expected 3 fields (the table's columns), found 4".to_string(),
        ),
        (
            format!(
                "STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true')",
                at("twice.csv", "user_id,amount,amount\nu1,1.5,999\n")
            ),
            "twice.csv': line 1: the header names two columns `amount` (fields 2 and 3)".to_string(),
        ),
    ];
    for (table, expected) in cases {
        let out = arrowfeat(&[
            "sql",
            &format!("CREATE EXTERNAL TABLE t {table}; SELECT * FROM t"),
        ]);
        assert_ne!(out.status.code(), Some(0), "{table}: {}", stdout(&out));
        assert!(
            stderr(&out).contains(&expected),
            "{table}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn csv_and_json_read_errors_name_the_file_and_line() {
    let tmp = tempdir("text-errors");
    let dir = tmp.path().join("events");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a.csv"), "k,v\n1,2\n").unwrap();
    std::fs::write(dir.join("b.csv"), "k,v\n1,2\n3,4,5\n").unwrap();
    let query = format!("SELECT * FROM '{}/'", dir.display());
    let out = arrowfeat(&["sql", &query]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("b.csv' line 3: expected 2 fields as in the header, found 3"),
        "{}",
        stderr(&out)
    );
    let json = tmp.path().join("bad.json");
    std::fs::write(&json, "{\"k\": 1}\n{\"k\": 2\n").unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT * FROM '{}'", json.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("bad.json' line 2: not valid JSON"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn integers_a_float_column_cannot_hold_are_refused_not_rounded() {
    let tmp = tempdir("json-big");
    let json = tmp.path().join("keys.json");
    // Read as Float64, both became 9.223372036854776e18: two keys, one value.
    std::fs::write(
        &json,
        "{\"k\": 9223372036854775807}\n{\"k\": 9223372036854775808}\n",
    )
    .unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT * FROM '{}'", json.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "keys.json' line 1: column `k` is read as floats (other rows hold fractions or \
             larger numbers), and the integer 9223372036854775807 in it has more digits than \
             a float keeps (it would read as 9223372036854775808"
        ),
        "{}",
        stderr(&out)
    );
    // In strings, and as floats, large numbers are read as they are; an integer a float
    // holds exactly is read too.
    std::fs::write(
        &json,
        "{\"k\": \"9223372036854775808\", \"x\": 1e30, \"y\": 0.5}\n{\"y\": 100000000000000000}\n",
    )
    .unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT * FROM '{}'", json.display())]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A fraction elsewhere in the column makes it floats: 2^53 + 1 would read as 2^53.
    let csv = tmp.path().join("keys.csv");
    std::fs::write(&csv, "k,v\n1.5,1\n9007199254740993,2\n9007199254740992,3\n").unwrap();
    let out = arrowfeat(&["sql", &format!("SELECT * FROM '{}'", csv.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("keys.csv' line 3: column `k` is read as floats"),
        "{}",
        stderr(&out)
    );
    // An external table infers types the same way.
    let sql = format!(
        "CREATE EXTERNAL TABLE e STORED AS CSV LOCATION '{}'; SELECT * FROM e",
        csv.display()
    );
    let out = arrowfeat(&["sql", &sql]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("column `k` is read as floats"),
        "{}",
        stderr(&out)
    );
}

/// Calls of arrowfeat functions that DataFusion cannot plan, in the user's words: one
/// line each with the function, what it expects, what it was given and a correct call; a
/// window function without OVER says so. Also for the YAML hint and CLI flags, the words
/// are snapshots so that a change is reviewed.
#[test]
fn planning_errors_of_our_functions_in_the_users_words() {
    let calls = [
        "SELECT standard_scale('a', 1.0, 2.0)",
        "SELECT haversine_km(1.0, 2.0, 3.0)",
        "SELECT hash_bucket(user_id) FROM 'examples/data/events.parquet'",
        "SELECT cosine_similarity(amount, 1.0) FROM 'examples/data/events.parquet'",
        "SELECT bucketize(amount, 'x') FROM 'examples/data/events.parquet'",
        "SELECT rolling_sum(amount, event_ts, '5m') FROM 'examples/data/events.parquet'",
        "SELECT session_window(event_ts, '30m') FROM 'examples/data/events.parquet'",
        // Not ours: DataFusion's own words stay.
        "SELECT no_such_function(1)",
    ];
    let mut report = String::new();
    for sql in calls {
        let out = arrowfeat(&["sql", sql]);
        assert_eq!(out.status.code(), Some(1), "{sql}");
        report.push_str(&format!("{sql}\n{}\n", stderr(&out)));
    }
    insta::assert_snapshot!("planning_errors", report);
}
