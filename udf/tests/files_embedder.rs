//! A Rust program embedding DataFusion: `SessionContext::new()` + `register_all`, then
//! files through `register_path` and the `point_in_time` table function. Hostile files
//! get the errors `arrowfeat sql` gives (cli/tests/cli.rs checks the same words there).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrowfeat_udf::register_all;
use arrowfeat_udf::sql::files::register_path;
use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::SessionContext;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
}

fn session() -> SessionContext {
    let ctx = SessionContext::new();
    register_all(&ctx);
    ctx
}

async fn register_error(path: &Path) -> String {
    let ctx = session();
    let e = register_path(&ctx, "t", &path.to_string_lossy())
        .await
        .expect_err("refused");
    e.to_string()
}

fn write_parquet(path: &Path, columns: &[&str]) {
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(*c, DataType::Int64, false))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|_| Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_is_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("events.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = register_error(&fifo).await;
    assert!(
        e.contains("expected a regular file or a directory, found a FIFO"),
        "{e}"
    );
    // The table function refuses it too, in a session that never enabled `FROM 'path'`.
    let sql = format!(
        "SELECT * FROM point_in_time('{}', '{}', 'k', 't', 't', 'v')",
        fifo.display(),
        fifo.display()
    );
    let e = session().sql(&sql).await.expect_err("refused").to_string();
    assert!(e.contains("a FIFO, socket or device"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_footer_is_named() {
    let corrupt = repo().join("tests/fixtures/corrupt/arrow-schema-metadata.parquet");
    let e = register_error(&corrupt).await;
    assert!(
        e.contains("cannot read the Parquet file")
            && e.contains("the Arrow schema stored in its metadata (ARROW:schema) is corrupt"),
        "{e}"
    );
    // In a directory: the first unreadable file is named.
    let dir = tempfile::tempdir().unwrap();
    write_parquet(&dir.path().join("a.parquet"), &["k"]);
    std::fs::copy(&corrupt, dir.path().join("b.parquet")).unwrap();
    let e = register_error(dir.path()).await;
    assert!(
        e.contains("the first file that cannot be read: 'b.parquet'"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn csv_files_with_two_headers_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.csv"), "k,v\n1,2\n").unwrap();
    std::fs::write(dir.path().join("b.csv"), "v,k\n3,4\n").unwrap();
    let e = register_error(dir.path()).await;
    assert!(
        e.contains("'b.csv' has `v` as column 1 where 'a.csv' has `k` as column 1"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_files_with_other_columns_read_the_missing_ones_as_null() {
    // Non-nullable columns in each file: a column one file lacks failed the whole read
    // ("declared as non-nullable but contains null values"), naming no file.
    let dir = tempfile::tempdir().unwrap();
    write_parquet(&dir.path().join("a.parquet"), &["k"]);
    write_parquet(&dir.path().join("b.parquet"), &["k", "extra"]);
    let ctx = session();
    register_path(&ctx, "t", &dir.path().to_string_lossy())
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT count(*) AS n, count(extra) AS with_extra FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(text.contains("| 4 | 2          |"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_table_function_reads_a_directory_in_a_plain_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spine.csv"), "k,t\n1,10\n").unwrap();
    let events = dir.path().join("events");
    std::fs::create_dir(&events).unwrap();
    std::fs::write(events.join("part-0.csv"), "k,t,v\n1,5,2.5\n").unwrap();
    std::fs::write(events.join("part-1.csv"), "k,t,v\n1,7,4.5\n").unwrap();
    std::fs::write(events.join("_SUCCESS"), "").unwrap();
    let sql = format!(
        "SELECT v FROM point_in_time('{}', '{}/', 'k', 't', 't', 'v')",
        dir.path().join("spine.csv").display(),
        events.display()
    );
    let batches = session().sql(&sql).await.unwrap().collect().await.unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(text.contains("| 4.5 |"), "{text}");
}

/// The error of a query over `ctx`, as text.
async fn query_error(ctx: &SessionContext, sql: &str) -> String {
    let run = async { ctx.sql(sql).await?.collect().await };
    run.await.expect_err("the query fails").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_csv_row_that_fails_while_the_query_runs_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    std::fs::create_dir(&events).unwrap();
    std::fs::write(events.join("a.csv"), "k,v\n1,2\n3,4\n").unwrap();
    std::fs::write(events.join("b.csv"), "k,v\n5,6\n7,x\n").unwrap();
    // Declared types: nothing is inferred, so the bad value is met by the query.
    let ctx = arrowfeat_udf::sql::files::enable(session());
    let create = format!(
        "CREATE EXTERNAL TABLE t (k BIGINT, v BIGINT) STORED AS CSV LOCATION '{}/' \
         OPTIONS ('format.has_header' 'true')",
        events.display()
    );
    ctx.sql(&create).await.unwrap();
    let e = query_error(&ctx, "SELECT sum(v) FROM t").await;
    assert!(
        e.ends_with("b.csv' line 3: expected a value of type Int64 in column `v`, found 'x'"),
        "{e}"
    );

    // A file registered while it parsed, then rewritten.
    let single = dir.path().join("one.json");
    std::fs::write(&single, "{\"k\": 1}\n{\"k\": 2}\n").unwrap();
    let ctx = session();
    register_path(&ctx, "j", &single.to_string_lossy())
        .await
        .unwrap();
    std::fs::write(&single, "{\"k\": 1}\n{\"k\": \n").unwrap();
    let e = query_error(&ctx, "SELECT count(k) FROM j").await;
    assert!(e.contains("one.json' line 2: not valid JSON"), "{e}");

    // JSON with declared types: a string where a number is declared.
    let typed = dir.path().join("typed.json");
    std::fs::write(&typed, "{\"k\": 1}\n\n{\"k\": \"abc\"}\n").unwrap();
    let ctx = arrowfeat_udf::sql::files::enable(session());
    let create = format!(
        "CREATE EXTERNAL TABLE t (k BIGINT) STORED AS JSON LOCATION '{}'",
        typed.display()
    );
    ctx.sql(&create).await.unwrap();
    let e = query_error(&ctx, "SELECT sum(k) FROM t").await;
    assert!(e.contains("typed.json' line 3: "), "{e}");
}
