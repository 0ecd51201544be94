//! `arrowfeat sql`: SQL over Parquet / CSV / JSON files with every arrowfeat UDF registered.

use std::io::Write;
use std::path::Path;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::options::{CsvReadOptions, JsonReadOptions, ParquetReadOptions};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::DFParser;
use datafusion::sql::sqlparser::dialect::dialect_from_str;

use crate::{CliError, CliResult};

/// How query results are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Aligned text table.
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line.
    Ndjson,
}

/// A `--table name=path` registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableArg {
    pub name: String,
    pub path: String,
}

impl std::str::FromStr for TableArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok(TableArg {
                name: name.to_string(),
                path: path.to_string(),
            }),
            _ => Err(format!(
                "expected NAME=PATH (for example events=data/events.parquet), found `{s}`"
            )),
        }
    }
}

/// A session with every UDF registered and file paths usable as tables in `FROM`.
pub fn session() -> SessionContext {
    let config = SessionConfig::new().with_information_schema(true);
    let ctx = SessionContext::new_with_config(config).enable_url_table();
    arrowfeat_udf::register_all(&ctx);
    ctx
}

fn format_of(path: &str) -> Option<&'static str> {
    let probe = Path::new(path);
    let file = if probe.is_dir() {
        // A directory of files: judge by the first file's extension.
        std::fs::read_dir(probe)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .min()?
    } else {
        probe.to_path_buf()
    };
    match file.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "parquet" | "pq" => Some("parquet"),
        "csv" => Some("csv"),
        "json" | "ndjson" | "jsonl" => Some("json"),
        _ => None,
    }
}

/// Registers `--table` arguments, checking that each file exists and has a known format.
pub async fn register_tables(ctx: &SessionContext, tables: &[TableArg]) -> CliResult<()> {
    for table in tables {
        let TableArg { name, path } = table;
        if !Path::new(path).exists() {
            return Err(CliError::usage(format!(
                "--table {name}={path}: no such file or directory `{path}`"
            )));
        }
        let registered = match format_of(path) {
            Some("parquet") => ctx.register_parquet(name, path, ParquetReadOptions::default()).await,
            Some("csv") => ctx.register_csv(name, path, CsvReadOptions::new()).await,
            Some("json") => {
                let options = JsonReadOptions::default().file_extension(
                    Path::new(path).extension().and_then(|e| e.to_str()).unwrap_or("json"),
                );
                ctx.register_json(name, path, options).await
            }
            _ => {
                return Err(CliError::usage(format!(
                    "--table {name}={path}: unknown file format: expected a .parquet, .csv, .json, .ndjson or .jsonl file"
                )))
            }
        };
        registered
            .map_err(|e| CliError::failure(format!("--table {name}={path}: {}", e.find_root())))?;
    }
    Ok(())
}

/// Runs every statement in `sql` (separated by `;`) and returns the last one's batches.
pub async fn run(ctx: &SessionContext, sql: &str) -> CliResult<Vec<RecordBatch>> {
    let dialect_name = ctx
        .state()
        .config()
        .options()
        .sql_parser
        .dialect
        .to_string();
    let dialect = dialect_from_str(&dialect_name)
        .ok_or_else(|| CliError::failure(format!("unsupported SQL dialect `{dialect_name}`")))?;
    let statements = DFParser::parse_sql_with_dialect(sql, dialect.as_ref())
        .map_err(|e| CliError::failure(format!("SQL syntax: {e}")))?;
    if statements.is_empty() {
        return Err(CliError::usage("no SQL statement given"));
    }
    let mut last = Vec::new();
    for statement in statements {
        let plan = ctx.state().statement_to_plan(statement).await?;
        last = ctx.execute_logical_plan(plan).await?.collect().await?;
    }
    Ok(last)
}

/// Writes `batches` to `out` in `format`.
pub fn write_batches(
    batches: &[RecordBatch],
    format: OutputFormat,
    out: &mut dyn Write,
) -> CliResult<()> {
    let io = |e: std::io::Error| CliError::failure(format!("writing output: {e}"));
    let arrow =
        |e: datafusion::arrow::error::ArrowError| CliError::failure(format!("writing output: {e}"));
    match format {
        OutputFormat::Table => {
            let table = pretty_format_batches(batches).map_err(arrow)?;
            writeln!(out, "{table}").map_err(io)?;
        }
        OutputFormat::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            for batch in batches {
                writer.write(batch).map_err(arrow)?;
            }
        }
        OutputFormat::Json => {
            let mut writer = datafusion::arrow::json::ArrayWriter::new(&mut *out);
            for batch in batches {
                writer.write(batch).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)?;
            writeln!(out).map_err(io)?;
        }
        OutputFormat::Ndjson => {
            let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut *out);
            for batch in batches {
                writer.write(batch).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)?;
        }
    }
    Ok(())
}

/// Reads the SQL text from the argument or from `--file`.
pub fn read_sql(query: Option<String>, file: Option<&Path>) -> CliResult<String> {
    match (query, file) {
        (Some(q), None) => Ok(q),
        (None, Some(f)) => std::fs::read_to_string(f)
            .map_err(|e| CliError::usage(format!("--file {}: {e}", f.display()))),
        (Some(_), Some(_)) => Err(CliError::usage("give either a query or --file, not both")),
        (None, None) => Err(CliError::usage(
            "give a query, e.g. arrowfeat sql \"SELECT 1\", or --file FILE",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_arg_parsing() {
        let t: TableArg = "events=data/e.parquet".parse().unwrap();
        assert_eq!(t.name, "events");
        assert_eq!(t.path, "data/e.parquet");
        assert!("events"
            .parse::<TableArg>()
            .unwrap_err()
            .contains("expected NAME=PATH"));
        assert!("=x".parse::<TableArg>().is_err());
    }

    #[test]
    fn formats_by_extension() {
        assert_eq!(format_of("a/b.PARQUET"), Some("parquet"));
        assert_eq!(format_of("b.csv"), Some("csv"));
        assert_eq!(format_of("b.jsonl"), Some("json"));
        assert_eq!(format_of("b.txt"), None);
    }

    #[tokio::test]
    async fn runs_several_statements_and_returns_the_last() {
        let ctx = session();
        let batches = run(
            &ctx,
            "CREATE TABLE t AS VALUES (1), (2); SELECT count(*) AS n FROM t;",
        )
        .await
        .unwrap();
        let mut out = Vec::new();
        write_batches(&batches, OutputFormat::Csv, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "n\n2\n");
    }

    #[tokio::test]
    async fn errors_are_one_line() {
        let ctx = session();
        let err = run(&ctx, "SELECT standard_scale('a', 1, 2)")
            .await
            .unwrap_err();
        let line = err.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("standard_scale(x: Float64, mean: Float64, std: Float64)"),
            "{line}"
        );
        let err = run(&ctx, "SELEC 1").await.unwrap_err();
        assert!(err.to_string().starts_with("SQL syntax:"), "{err}");
    }
}
