//! `arrowfeat sql`: SQL over Parquet / CSV / JSON files with every arrowfeat UDF registered.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::catalog::TableProvider;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{DFParser, Statement};
use datafusion::sql::sqlparser::dialect::dialect_from_str;

use futures::StreamExt;

use crate::data_files::{
    self as files, data_files_with, is_file_url, local_path, path_like, FileError, FileErrorKind,
};
use crate::{CliError, CliResult};
use arrowfeat_common::quote;

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

/// The format of `arrowfeat sql` output: as given, else by the extension of `--output`,
/// else a table. A `.parquet` output is refused: -o writes text, which would make a file
/// named like Parquet that no Parquet reader opens.
pub fn output_format(
    given: Option<OutputFormat>,
    output: Option<&Path>,
) -> CliResult<OutputFormat> {
    let extension = output
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if let Some("parquet" | "pq") = extension.as_deref() {
        return Err(CliError::usage(format!(
            "--output {}: arrowfeat sql writes text (table, csv, json, ndjson); write Parquet with COPY (query) TO 'FILE.parquet' and --allow-write",
            output.map(|p| p.display().to_string()).unwrap_or_default()
        )));
    }
    Ok(given.unwrap_or(match extension.as_deref() {
        Some("csv") => OutputFormat::Csv,
        Some("json") => OutputFormat::Json,
        Some("ndjson" | "jsonl") => OutputFormat::Ndjson,
        _ => OutputFormat::Table,
    }))
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

/// A session with every UDF registered and file paths usable as tables in `FROM`
/// ([`arrowfeat_udf::sql::files::session`], the one embedders use too).
pub fn session() -> CliResult<SessionContext> {
    Ok(files::session()?)
}

/// The file format of `path` ("parquet", "csv" or "json"): see [`data_files`]. `None`
/// also for a directory holding two data extensions, which reading refuses.
pub fn format_of(path: &str) -> Option<&'static str> {
    format_of_path(Path::new(path))
}

/// [`format_of`] a path.
pub fn format_of_path(path: &Path) -> Option<&'static str> {
    files::format_of_path(path)
}

/// The Parquet files and directories a run reads, as the user wrote them, and whether it
/// writes any file. Parquet errors name them, since the reader does not know which file it
/// was reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParquetFiles {
    /// `--table` arguments the query uses, paths in `FROM` or `point_in_time`, and
    /// `LOCATION`s of external tables stored as Parquet.
    pub read: Vec<String>,
    /// Whether a statement writes (`COPY ... TO`, `INSERT`): the error may be the
    /// writer's.
    pub written: bool,
    /// The local directories among `read`: an error names the first file in them that
    /// cannot be read, if one is found (see [`files::unreadable_parquet_file`]).
    pub dirs: Vec<std::path::PathBuf>,
    /// The local CSV and JSON files and directories read: a CSV or JSON reader's error
    /// (which names no file) names the first of their files that does not parse.
    pub text: Vec<std::path::PathBuf>,
}

/// The local path of `name` if it is a CSV or JSON file or directory.
fn text_input(name: &str) -> Option<std::path::PathBuf> {
    local_path(name).filter(|p| matches!(format_of_path(p), Some("csv" | "json")))
}

/// Those of `tables` that are Parquet files or directories, as `NAME=PATH`.
fn parquet_table_args<'a>(tables: impl IntoIterator<Item = &'a TableArg>) -> Vec<String> {
    tables
        .into_iter()
        .filter(|t| format_of(&t.path) == Some("parquet"))
        .map(|t| format!("{}={}", t.name, t.path))
        .collect()
}

/// The `--table` arguments that are Parquet files or directories.
pub fn parquet_tables(tables: &[TableArg]) -> ParquetFiles {
    ParquetFiles {
        read: parquet_table_args(tables),
        written: false,
        dirs: parquet_table_dirs(tables),
        text: tables.iter().filter_map(|t| text_input(&t.path)).collect(),
    }
}

/// The directories among those of `tables` that are Parquet.
fn parquet_table_dirs<'a>(
    tables: impl IntoIterator<Item = &'a TableArg>,
) -> Vec<std::path::PathBuf> {
    local_dirs(
        tables
            .into_iter()
            .filter(|t| format_of(&t.path) == Some("parquet"))
            .map(|t| t.path.as_str()),
    )
}

/// Those of `paths` that are directories on this machine.
fn local_dirs<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<std::path::PathBuf> {
    paths
        .into_iter()
        .filter_map(local_path)
        .filter(|p| p.is_dir())
        .collect()
}

/// Appends those of `new` not in `dirs` yet.
fn push_dirs(dirs: &mut Vec<std::path::PathBuf>, new: Vec<std::path::PathBuf>) {
    for dir in new {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
}

/// The Parquet files that running `statements` reads (see [`ParquetFiles`]).
pub fn parquet_files(
    ctx: &SessionContext,
    statements: &[Statement],
    tables: &[TableArg],
) -> ParquetFiles {
    let mut files = ParquetFiles::default();
    let push = |files: &mut ParquetFiles, name: String| {
        if !files.read.contains(&name) {
            files.read.push(name);
        }
    };
    let mut referenced: Vec<String> = Vec::new();
    for statement in statements {
        let mut names: Vec<String> = ctx
            .state()
            .resolve_table_references(statement)
            .map(|references| {
                references
                    .into_iter()
                    .filter(|r| r.schema().is_none())
                    .map(|r| r.table().to_string())
                    .collect()
            })
            .unwrap_or_default();
        names.extend(
            point_in_time_tables(statement)
                .into_iter()
                .map(|(_, name)| name),
        );
        match statement {
            Statement::CreateExternalTable(create)
                if create.file_type.eq_ignore_ascii_case("parquet") =>
            {
                for location in &create.locations {
                    push(&mut files, format!("LOCATION '{location}'"));
                    push_dirs(&mut files.dirs, local_dirs([location.as_str()]));
                }
            }
            Statement::CopyTo(_) => files.written = true,
            Statement::Statement(inner)
                if matches!(
                    inner.as_ref(),
                    datafusion::sql::sqlparser::ast::Statement::Insert(_)
                ) =>
            {
                files.written = true
            }
            _ => {}
        }
        for name in names {
            let registered = ctx
                .table_exist(datafusion::common::TableReference::bare(name.as_str()))
                .unwrap_or(false);
            // Object-store URLs too: they are read all the same.
            let parquet = match local_path(&name) {
                Some(path) => format_of_path(&path),
                None => format_of(&name),
            } == Some("parquet");
            if !registered && parquet {
                push(&mut files, format!("'{name}'"));
                push_dirs(&mut files.dirs, local_dirs([name.as_str()]));
            }
            if let Some(text) = text_input(&name).filter(|_| !registered) {
                push_dirs(&mut files.text, vec![text]);
            }
            referenced.push(name);
        }
    }
    // Only the `--table` files the query uses: an unused one is not a suspect.
    let used: Vec<&TableArg> = tables
        .iter()
        .filter(|t| referenced.iter().any(|r| r.eq_ignore_ascii_case(&t.name)))
        .collect();
    files
        .read
        .splice(0..0, parquet_table_args(used.iter().copied()));
    let mut text: Vec<std::path::PathBuf> =
        used.iter().filter_map(|t| text_input(&t.path)).collect();
    push_dirs(&mut text, std::mem::take(&mut files.text));
    files.text = text;
    let mut dirs = parquet_table_dirs(used.iter().copied());
    push_dirs(&mut dirs, std::mem::take(&mut files.dirs));
    files.dirs = dirs;
    files
}

/// An error the Parquet reader or writer raised, with the Parquet files named: the reason
/// first, then the files (each escaped and cut; at most ten listed).
pub fn name_parquet_inputs(e: CliError, files: &ParquetFiles) -> CliError {
    const LISTED: usize = 10;
    if let Some(words) = files::text_read_failure(&e.message, &files.text, None) {
        return CliError::failure(words);
    }
    let Some(detail) = e.message.strip_prefix(files::PARQUET_UNREADABLE) else {
        return e;
    };
    let names: Vec<String> = files
        .read
        .iter()
        .take(LISTED)
        .map(|n| arrowfeat_common::quote(n, 200))
        .collect();
    let mut list = names.join(", ");
    if files.read.len() > LISTED {
        list.push_str(&format!(" and {} more", files.read.len() - LISTED));
    }
    // Reads footers: only where the message names inputs.
    let note = || files::unreadable_file_note(&files.dirs);
    let message = match (names.as_slice(), files.written) {
        ([], false) => return e,
        ([], true) => format!("a Parquet file cannot be read or written: {detail}"),
        ([one], false) if files.dirs.is_empty() => {
            format!("cannot read the Parquet file {one}: {detail}{}", note())
        }
        ([one], false) => format!("cannot read a Parquet file in {one}: {detail}{}", note()),
        (_, false) => format!(
            "cannot read one of the Parquet inputs: {detail} (inputs: {list}){}",
            note()
        ),
        (_, true) => format!(
            "a Parquet file cannot be read or written: {detail} (inputs: {list}; or the output){}",
            note()
        ),
    };
    CliError {
        message,
        exit_code: e.exit_code,
    }
}

/// A file error as the CLI reports it: a path that holds no table is a usage error (exit
/// 2, like a wrong flag), data that cannot be read a failure (exit 1).
pub fn file_error(e: FileError) -> CliError {
    match e.kind {
        FileErrorKind::NotData => CliError::usage(e.message),
        FileErrorKind::Unreadable => CliError::failure(e.message),
    }
}

/// An error while opening the input `what` (such as `--table t=a.parquet`) at `path`.
pub fn input_error(what: &str, path: &Path, e: datafusion::error::DataFusionError) -> CliError {
    file_error(files::input_error(what, path, &e))
}

/// The table a `--table` or `training-set` input holds ([`files::open_path`]).
pub async fn open_table(
    ctx: &SessionContext,
    what: &str,
    name: &str,
) -> CliResult<Arc<dyn TableProvider>> {
    files::open_path(&ctx.state(), what, name)
        .await
        .map_err(file_error)
}

/// Registers `--table` arguments (see [`open_table`]).
pub async fn register_tables(ctx: &SessionContext, tables: &[TableArg]) -> CliResult<()> {
    for TableArg { name, path } in tables {
        let what = format!("--table {name}={path}");
        let table = open_table(ctx, &what, path).await?;
        ctx.register_table(name.as_str(), table)
            .map_err(|e| input_error(&what, Path::new(path), e))?;
    }
    Ok(())
}

/// The statements of `sql` (separated by `;`), parsed in the session's dialect.
pub fn parse(ctx: &SessionContext, sql: &str) -> CliResult<Vec<Statement>> {
    let dialect_name = ctx
        .state()
        .config()
        .options()
        .sql_parser
        .dialect
        .to_string();
    let dialect = dialect_from_str(&dialect_name)
        .ok_or_else(|| CliError::failure(format!("unsupported SQL dialect `{dialect_name}`")))?;
    let statements = DFParser::parse_sql_with_dialect(sql, dialect.as_ref()).map_err(|e| {
        let e = e.to_string();
        if e.contains("RecursionLimitExceeded") {
            CliError::failure(
                "SQL syntax: the query nests expressions more than 50 levels deep (parentheses, subqueries or function calls)",
            )
        } else {
            CliError::failure(format!("SQL syntax: {e}"))
        }
    })?;
    Ok(statements.into())
}

/// Parses and runs `sql`: see [`run_statements`].
pub async fn run(
    ctx: &SessionContext,
    sql: &str,
    allow_write: bool,
) -> CliResult<SendableRecordBatchStream> {
    run_statements(ctx, parse(ctx, sql)?, allow_write).await
}

/// Runs every statement: the earlier ones to completion, their output discarded batch by
/// batch, and returns the last one's output as a stream, so that results are written as
/// they are computed rather than held in memory.
pub async fn run_statements(
    ctx: &SessionContext,
    statements: Vec<Statement>,
    allow_write: bool,
) -> CliResult<SendableRecordBatchStream> {
    let count = statements.len();
    if count == 0 {
        return Err(CliError::usage("no SQL statement given"));
    }
    for (i, statement) in statements.into_iter().enumerate() {
        check_file_references(ctx, &statement)?;
        let plan = ctx
            .state()
            .statement_to_plan(statement)
            .await
            .map_err(CliError::from)?;
        refuse_reading_settings(&plan)?;
        // Read-only unless asked: a query from a pull request must not write files.
        if !allow_write && writes(&plan) {
            return Err(CliError::usage(
                "this statement writes (COPY ... TO, INSERT or CREATE EXTERNAL TABLE ... AS); \
                 arrowfeat sql is read-only unless given --allow-write",
            ));
        }
        let mut stream = ctx
            .execute_logical_plan(plan)
            .await?
            .execute_stream()
            .await?;
        if i + 1 == count {
            return Ok(stream);
        }
        while let Some(batch) = stream.next().await {
            batch?;
        }
    }
    unreachable!("the last statement returns")
}

/// Files named in `FROM 'path'` must exist and be regular files or directories: a
/// missing file is a usage error (exit 2, like a missing `--table` file), and a FIFO or
/// device would block the reader forever.
fn check_file_references(
    ctx: &SessionContext,
    statement: &datafusion::sql::parser::Statement,
) -> CliResult<()> {
    let references = ctx
        .state()
        .resolve_table_references(statement)
        .map_err(CliError::from)?;
    let mut named: Vec<(String, String)> = references
        .into_iter()
        .filter(|r| r.schema().is_none())
        .map(|r| {
            (
                format!("FROM '{}'", quote(r.table(), 400)),
                r.table().to_string(),
            )
        })
        .collect();
    named.extend(point_in_time_tables(statement));
    // `CREATE EXTERNAL TABLE ... LOCATION 'path'` reads its location at the next query.
    // It may be a directory an `INSERT` creates; an existing one is checked as `FROM`
    // checks it (a FIFO would block the reader; CSV headers that differ would be read by
    // position).
    if let datafusion::sql::parser::Statement::CreateExternalTable(create) = statement {
        for location in &create.locations {
            if location.contains("://") && !is_file_url(location) {
                continue;
            }
            let place = format!("LOCATION '{}'", quote(location, 400));
            let Some(local) = local_path(location) else {
                continue;
            };
            match std::fs::metadata(&local) {
                Ok(m) if !(m.is_file() || m.is_dir()) => {
                    return Err(CliError::usage(format!(
                        "{place}: expected a regular file or a directory, found a FIFO, \
                         socket or device"
                    )));
                }
                // The reader takes `*`, `?` and `[` as a pattern, over files that would
                // not be checked, even when a file of that very name exists.
                _ if !is_file_url(location) && location.contains(['*', '?', '[']) => {
                    return Err(CliError::usage(format!(
                        "{place}: patterns are not read; name a file or a directory (a \
                         name holding `*`, `?` or `[` as a file:// URL)"
                    )));
                }
                Ok(_) => {
                    let headers = csv_headers(ctx, create)?;
                    data_files_with(&local, headers)
                        .map_err(|e| CliError::usage(format!("{place}: {e}")))?;
                    if let Some(dialect) = headers.filter(|_| !create.columns.is_empty()) {
                        declared_in_header_order(&place, &local, dialect, create)?;
                    }
                }
                Err(_) => {}
            }
        }
    }
    for (place, name) in named {
        if ctx
            .table_exist(datafusion::common::TableReference::bare(name.as_str()))
            .unwrap_or(false)
        {
            continue;
        }
        // A bare name is a table's (also the one a CREATE statement makes): the file or
        // directory of that name is never read, so it is not checked.
        if !path_like(&name) {
            continue;
        }
        // Paths and `file://` URLs: what is on disk is checked, since a FIFO or device
        // would block the reader forever.
        let Some(local) = local_path(&name) else {
            if is_file_url(&name) {
                return Err(CliError::usage(format!(
                    "{place}: expected a file URL of a path on this machine, \
                     file:///absolute/path, with `?` and `#` written %3F and %23"
                )));
            }
            continue;
        };
        files::check_path(&place, &local.to_string_lossy()).map_err(file_error)?;
    }
    Ok(())
}

/// Refuses declared columns that the files' header names in another order: DataFusion
/// reads CSV fields by position, whatever the header says (`(b INT, a INT)` over a file
/// of `a,b` gives b the values of a). Columns the header does not name are taken as
/// renamed by position.
fn declared_in_header_order(
    place: &str,
    local: &Path,
    dialect: crate::data_files::CsvDialect,
    create: &datafusion::sql::parser::CreateExternalTable,
) -> CliResult<()> {
    let header = crate::data_files::first_csv_header(local, dialect)
        .map_err(|e| CliError::usage(format!("{place}: {e}")))?;
    let Some(header) = header else {
        return Ok(());
    };
    for (position, column) in create.columns.iter().enumerate() {
        let name = &column.name.value;
        if let Some(at) = header.iter().position(|h| h.eq_ignore_ascii_case(name)) {
            if at != position {
                return Err(CliError::usage(format!(
                    "{place}: the table declares `{}` as column {} but the files' header \
                     has it as column {}; CSV fields are read by position: declare the \
                     columns in the header's order",
                    quote(name, 100),
                    position + 1,
                    at + 1
                )));
            }
        }
    }
    Ok(())
}

/// How the CSV files of `create` are parsed when they have headers (see
/// [`crate::data_files::csv_headers_of_options`]); `None` when they have none or it is
/// not CSV.
fn csv_headers(
    ctx: &SessionContext,
    create: &datafusion::sql::parser::CreateExternalTable,
) -> CliResult<Option<crate::data_files::CsvDialect>> {
    let options: Vec<(String, String)> = create
        .options
        .iter()
        .map(|(key, value)| {
            let value = value.to_string();
            (key.clone(), value.trim_matches(['\'', '"']).to_string())
        })
        .collect();
    crate::data_files::csv_headers_of_options(
        &create.file_type,
        options.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ctx.state().config().options().catalog.has_header,
    )
    .map_err(CliError::from)
}

/// The spine and events tables named in `point_in_time('spine', 'events', ...)` calls, as
/// (where, name): they are files or tables just like names in `FROM`.
fn point_in_time_tables(statement: &datafusion::sql::parser::Statement) -> Vec<(String, String)> {
    use datafusion::sql::sqlparser::ast::{
        Expr, FunctionArg, FunctionArgExpr, TableFactor, Value, Visit, Visitor,
    };
    use std::ops::ControlFlow;

    struct Finder(Vec<(String, String)>);
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
            let TableFactor::Table {
                name,
                args: Some(args),
                ..
            } = factor
            else {
                return ControlFlow::Continue(());
            };
            if !name
                .to_string()
                .eq_ignore_ascii_case(arrowfeat_udf::sql::point_in_time::table::NAME)
            {
                return ControlFlow::Continue(());
            }
            for (argument, arg) in ["spine", "events"].iter().zip(&args.args) {
                if let FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(value))) = arg {
                    if let Value::SingleQuotedString(text) = &value.value {
                        self.0.push((
                            format!("point_in_time {argument} '{}'", quote(text, 400)),
                            text.clone(),
                        ));
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut finder = Finder(Vec::new());
    if let datafusion::sql::parser::Statement::Statement(inner) = statement {
        let _ = inner.visit(&mut finder);
    }
    finder.0
}

/// Settings that would make the reader read files the checks of [`check_file_references`]
/// do not see.
const READING_SETTINGS: [&str; 3] = [
    "datafusion.execution.listing_table_ignore_subdirectory",
    // A cache of listings hides files written by an earlier statement.
    "datafusion.runtime.list_files_cache_limit",
    "datafusion.runtime.list_files_cache_ttl",
];

/// Refuses `SET` of a [`READING_SETTINGS`] entry: with subdirectories read, CSV files
/// that were never compared would be read by column position.
fn refuse_reading_settings(plan: &datafusion::logical_expr::LogicalPlan) -> CliResult<()> {
    use datafusion::logical_expr::{LogicalPlan, Statement};
    if let LogicalPlan::Statement(Statement::SetVariable(set)) = plan {
        if READING_SETTINGS
            .iter()
            .any(|name| set.variable.eq_ignore_ascii_case(name))
        {
            return Err(CliError::usage(format!(
                "SET {}: arrowfeat reads a directory's files and its `key=value` \
                 subdirectories, as Spark writes them, and lists them afresh for each \
                 statement; this setting is fixed",
                quote(&set.variable, 100)
            )));
        }
    }
    Ok(())
}

/// Whether `plan` writes files or tables: `COPY ... TO` and `INSERT` (in-memory tables
/// and views created with `CREATE TABLE ... AS` / `CREATE VIEW` are allowed).
fn writes(plan: &datafusion::logical_expr::LogicalPlan) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::LogicalPlan;
    let mut found = false;
    let _ = plan.apply(|node| {
        if matches!(node, LogicalPlan::Copy(_) | LogicalPlan::Dml(_)) {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

/// Runs `sql` and collects the last statement's result (for tests and small results).
pub async fn run_collect(ctx: &SessionContext, sql: &str) -> CliResult<Vec<RecordBatch>> {
    let mut stream = run(ctx, sql, false).await?;
    let mut batches = Vec::new();
    while let Some(batch) = stream.next().await {
        batches.push(batch?);
    }
    Ok(batches)
}

/// A writer that remembers whether its reader went away (a broken pipe).
struct PipeWatch<'a> {
    inner: &'a mut dyn Write,
    closed: &'a std::cell::Cell<bool>,
}

impl PipeWatch<'_> {
    fn watch<T>(&self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                self.closed.set(true);
            }
        }
        result
    }
}

impl Write for PipeWatch<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// Rows the `table` format prints unless told otherwise: a text table needs every row in
/// memory to align its columns, so it stops here (the other formats stream every row).
pub const DEFAULT_MAX_ROWS: usize = 10_000;

/// Writes a result stream to `out` in `format`, batch by batch. The `table` format keeps
/// at most `max_rows` rows (0: no limit) and says so when it stopped early.
pub async fn write_stream(
    mut stream: SendableRecordBatchStream,
    format: OutputFormat,
    max_rows: usize,
    out: &mut dyn Write,
) -> CliResult<()> {
    // A reader that went away (`| head`) ends the command quietly, as for other tools;
    // the writers wrap the I/O error in their own, so the pipe is watched directly.
    let closed = std::cell::Cell::new(false);
    let out = &mut PipeWatch {
        inner: out,
        closed: &closed,
    };
    let fail = |message: String| {
        if closed.get() {
            CliError::closed_pipe()
        } else {
            CliError::failure(format!("writing output: {message}"))
        }
    };
    let io = |e: std::io::Error| fail(crate::io_message(&e));
    let arrow = |e: datafusion::arrow::error::ArrowError| fail(e.to_string());
    // A statement with no result columns (`CREATE VIEW`, `SET`): run, nothing to print.
    if stream.schema().fields().is_empty() {
        while let Some(batch) = stream.next().await {
            batch?;
        }
        return Ok(());
    }
    match format {
        OutputFormat::Table => {
            let mut batches = Vec::new();
            let mut rows = 0usize;
            let mut truncated = false;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                if max_rows > 0 && rows + batch.num_rows() > max_rows {
                    batches.push(batch.slice(0, max_rows - rows));
                    truncated = true;
                    break;
                }
                rows += batch.num_rows();
                batches.push(batch);
            }
            // An empty result still prints its header.
            if batches.is_empty() {
                batches.push(RecordBatch::new_empty(stream.schema()));
            }
            // Control characters, bidi overrides and workflow commands from the data are
            // shown escaped, never interpreted: each cell before the layout, since a
            // newline inside a value would otherwise look like another row.
            let batches = batches
                .iter()
                .map(escaped_cells)
                .collect::<Result<Vec<_>, _>>()
                .map_err(arrow)?;
            let table = pretty_format_batches(&batches).map_err(arrow)?.to_string();
            // The table is for a terminal or a CI log: its cells and names are escaped
            // above (CSV and JSON keep the data as it is).
            writeln!(out, "{table}").map_err(io)?;
            if truncated {
                writeln!(
                    out,
                    "(only the first {max_rows} rows are shown: use --max-rows N, --max-rows 0 for all, \
                     or --format csv, json or ndjson, which stream every row)"
                )
                .map_err(io)?;
            }
        }
        OutputFormat::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut *out);
            let mut any = false;
            while let Some(batch) = stream.next().await {
                writer.write(&batch?).map_err(arrow)?;
                any = true;
            }
            if !any {
                writer
                    .write(&RecordBatch::new_empty(stream.schema()))
                    .map_err(arrow)?;
            }
        }
        OutputFormat::Json => {
            // Null values are written as `"column": null`, not left out of the object.
            let mut writer = datafusion::arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .with_encoder_factory(crate::json_output::NonFiniteFloatsKept::factory())
                .build::<_, datafusion::arrow::json::writer::JsonArray>(&mut *out);
            while let Some(batch) = stream.next().await {
                writer.write(&batch?).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)?;
            writeln!(out).map_err(io)?;
        }
        OutputFormat::Ndjson => {
            let mut writer = datafusion::arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .with_encoder_factory(crate::json_output::NonFiniteFloatsKept::factory())
                .build::<_, datafusion::arrow::json::writer::LineDelimited>(&mut *out);
            while let Some(batch) = stream.next().await {
                writer.write(&batch?).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)?;
        }
    }
    out.flush().map_err(io)?;
    Ok(())
}

/// `batch` as text columns, each cell as the table shows it with control characters,
/// bidirectional overrides and workflow commands escaped.
fn escaped_cells(batch: &RecordBatch) -> Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    use datafusion::arrow::array::{Array, ArrayRef, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default();
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let formatter = ArrayFormatter::try_new(column.as_ref(), &options)?;
        let cells: StringArray = (0..column.len())
            .map(|row| {
                (!column.is_null(row)).then(|| {
                    arrowfeat_common::escape_controls(&formatter.value(row).to_string())
                        .into_owned()
                })
            })
            .collect();
        let name = arrowfeat_common::escape_controls(field.name());
        fields.push(Field::new(name, DataType::Utf8, true));
        columns.push(std::sync::Arc::new(cells));
    }
    RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), columns)
}

/// Reads the SQL text from the argument or from `--file`.
pub fn read_sql(query: Option<String>, file: Option<&Path>) -> CliResult<String> {
    use std::io::{IsTerminal, Read};
    let stdin = || {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::usage(format!("reading SQL from standard input: {e}")))?;
        Ok(text)
    };
    match (query, file) {
        (Some(q), None) => Ok(q),
        (None, Some(f)) if f == Path::new("-") => stdin(),
        (None, Some(f)) => std::fs::read_to_string(f)
            .map_err(|e| CliError::usage(format!("--file {}: {e}", f.display()))),
        (Some(_), Some(_)) => Err(CliError::usage("give either a query or --file, not both")),
        // A pipe or a redirected file: read the SQL from it, as psql does.
        (None, None) if !std::io::stdin().is_terminal() => stdin(),
        (None, None) => Err(CliError::usage(
            "give a query, e.g. arrowfeat sql \"SELECT 1\", --file FILE, or SQL on standard input",
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
        let ctx = session().unwrap();
        let stream = run(
            &ctx,
            "CREATE TABLE t AS VALUES (1), (2); SELECT count(*) AS n FROM t;",
            false,
        )
        .await
        .unwrap();
        let mut out = Vec::new();
        write_stream(stream, OutputFormat::Csv, 0, &mut out)
            .await
            .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "n\n2\n");
    }

    #[tokio::test]
    async fn table_output_stops_at_the_row_limit_and_says_so() {
        let ctx = session().unwrap();
        let query = "SELECT value FROM generate_series(1, 100000)";
        let mut out = Vec::new();
        write_stream(
            run(&ctx, query, false).await.unwrap(),
            OutputFormat::Table,
            3,
            &mut out,
        )
        .await
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with("| ")).count(),
            4,
            "{text}"
        );
        assert!(text.contains("only the first 3 rows are shown"), "{text}");
        let mut out = Vec::new();
        write_stream(
            run(&ctx, query, false).await.unwrap(),
            OutputFormat::Csv,
            3,
            &mut out,
        )
        .await
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 100_001);
        // Empty results keep their header in every format.
        let mut out = Vec::new();
        let empty = "SELECT 1 AS a WHERE false";
        write_stream(
            run(&ctx, empty, false).await.unwrap(),
            OutputFormat::Csv,
            0,
            &mut out,
        )
        .await
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a\n");
    }

    #[tokio::test]
    async fn errors_are_one_line() {
        let ctx = session().unwrap();
        let err = run(&ctx, "SELECT standard_scale('a', 1, 2)", false)
            .await
            .err()
            .expect("a planning error");
        let line = err.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("standard_scale(x: Float64, mean: Float64, std: Float64)"),
            "{line}"
        );
        let err = run(&ctx, "SELEC 1", false)
            .await
            .err()
            .expect("a syntax error");
        assert!(err.to_string().starts_with("SQL syntax:"), "{err}");
    }
}
