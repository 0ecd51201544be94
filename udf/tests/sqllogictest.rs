//! Runs the SQL files in udf/tests/sql/*.slt (sqllogictest format) against a DataFusion
//! SessionContext with every arrowfeat UDF registered.
//!
//! `ARROWFEAT_SLT_COMPLETE=1 cargo test -p arrowfeat-udf --test sqllogictest` rewrites the
//! expected results in place (review the diff before committing).

use std::path::PathBuf;

use arrowfeat_udf::register_all;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{DBOutput, DefaultColumnType, Runner};

struct DataFusionDb {
    ctx: SessionContext,
}

fn column_type(t: &DataType) -> DefaultColumnType {
    match t {
        t if t.is_integer() => DefaultColumnType::Integer,
        t if t.is_floating() => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

fn rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, DataFusionError> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            rows.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Ok(rows)
}

#[async_trait::async_trait]
impl sqllogictest::AsyncDB for DataFusionDb {
    type Error = DataFusionError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        let df = self.ctx.sql(sql).await?;
        let schema = df.schema().as_arrow().clone();
        let batches = df.collect().await?;
        if schema.fields().is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        Ok(DBOutput::Rows {
            types: schema
                .fields()
                .iter()
                .map(|f| column_type(f.data_type()))
                .collect(),
            rows: rows(&batches)?,
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "datafusion"
    }
}

fn make_db() -> DataFusionDb {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_information_schema(true));
    register_all(&ctx);
    DataFusionDb { ctx }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("udf/tests/sql exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    let complete = std::env::var_os("ARROWFEAT_SLT_COMPLETE").is_some();
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let mut runner = Runner::new(|| async { Ok(make_db()) });
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let result = if complete {
            runner
                .update_test_file(
                    file,
                    " ",
                    sqllogictest::default_validator,
                    sqllogictest::default_normalizer,
                    sqllogictest::default_column_validator,
                )
                .await
                .map_err(|e| e.to_string())
        } else {
            runner
                .run_file_async(file)
                .await
                .map_err(|e| e.display(true).to_string())
        };
        match result {
            Ok(()) => {
                passed += 1;
                println!("sqllogictest {name} ... ok");
            }
            Err(e) => {
                failed += 1;
                println!("sqllogictest {name} ... FAILED\n{e}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
