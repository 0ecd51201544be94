//! The public ways in: a session that reads files as the CLI does ([`session`],
//! [`enable`]), one path opened as a table ([`open_path`]) or registered under a name
//! ([`register_path`]). Every engine that reads a path goes through here: `arrowfeat sql`
//! (`--table`, `FROM 'path'`), `arrowfeat training-set`, the `point_in_time` table
//! function and Rust embedders, so that a hostile file gets the same error in each.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrowfeat_common::{cap, quote};
use datafusion::catalog::TableProvider;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionState;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::{
    data_files, differing_text_types, is_text_read_error, listing_table, local_path,
    text_read_failure, CsvDialect, DataFiles, LocalDataTables, TextTypes,
    INFER_TYPES_FROM_ALL_ROWS, KNOWN_EXTENSIONS, MAX_DEPTH,
};
use crate::sql::errors::{error_cause, ErrorCause};

/// Why a path cannot be read as a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// One line for the user: what was read (as the caller named it), then why not.
    pub message: String,
    pub kind: FileErrorKind,
}

/// Whether the path holds no table at all (a wrong argument: the CLI exits with 2), or
/// holds data that cannot be read (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileErrorKind {
    NotData,
    Unreadable,
}

impl FileError {
    fn not_data(message: String) -> Self {
        Self {
            message,
            kind: FileErrorKind::NotData,
        }
    }

    fn unreadable(message: String) -> Self {
        Self {
            message,
            kind: FileErrorKind::Unreadable,
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FileError {}

impl From<FileError> for DataFusionError {
    fn from(e: FileError) -> Self {
        match e.kind {
            FileErrorKind::NotData => DataFusionError::Plan(e.message),
            FileErrorKind::Unreadable => DataFusionError::Execution(e.message),
        }
    }
}

/// Begins the message of an error raised by the Parquet reader, which does not know the
/// file's name: callers name their Parquet inputs after it.
pub const PARQUET_UNREADABLE: &str = "a Parquet file cannot be read: ";

/// `e` in the user's words: the Parquet reader's errors begin with
/// [`PARQUET_UNREADABLE`], so that a caller can name the files it read.
pub fn error_message(e: &DataFusionError) -> String {
    match error_cause(e) {
        ErrorCause::Parquet(detail) => format!("{PARQUET_UNREADABLE}{detail}"),
        ErrorCause::Other(message) if message.starts_with("Object Store error") => {
            listing_words(&message)
        }
        ErrorCause::Other(message) => message,
    }
}

/// A session configured to read files as `arrowfeat sql` does, with every arrowfeat
/// function registered: paths usable in `FROM`, Spark's INT96 timestamps read as
/// microseconds (as nanoseconds they wrap outside 1677-2262), CSV and JSON column types
/// inferred from every row, and directories listed afresh by each statement.
pub fn session() -> Result<SessionContext> {
    session_within(None)
}

/// [`session`] whose operators hold at most `memory_limit` bytes (`None`: no limit):
/// aggregations and sorts past it spill to temporary files, a query that cannot spill
/// enough fails with "resources exhausted".
pub fn session_within(memory_limit: Option<usize>) -> Result<SessionContext> {
    let mut config = SessionConfig::new().with_information_schema(true);
    config.options_mut().execution.parquet.coerce_int96 = Some("us".to_string());
    // With DataFusion's cache of listings, a statement reading a directory an earlier one
    // wrote into missed the new files.
    let mut runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_object_list_cache_limit(0);
    if let Some(limit) = memory_limit {
        // One partition: DataFusion 55's repartitioning can stall for good once it spills
        // (apache/datafusion#24883), and a bounded run must end.
        config = config.with_target_partitions(1);
        // Fair among the spilling operators of a query, so none starves the others.
        runtime = runtime.with_memory_pool(std::sync::Arc::new(
            datafusion::execution::memory_pool::FairSpillPool::new(limit),
        ));
    }
    let runtime = runtime.build_arc()?;
    let ctx = enable(SessionContext::new_with_config_rt(config, runtime));
    crate::register_all(&ctx);
    Ok(ctx)
}

/// `ctx` reading files as [`session`]'s does: `FROM 'path'` and `CREATE EXTERNAL TABLE`
/// through this module's checks, CSV and JSON types inferred from every row. (The
/// listing cache and INT96 setting are the caller's: they are fixed when a session is
/// made.)
pub fn enable(ctx: SessionContext) -> SessionContext {
    let ctx = LocalDataTables::enable(ctx);
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        let options = state.table_options_mut();
        options.csv.schema_infer_max_rec = Some(INFER_TYPES_FROM_ALL_ROWS);
        options.json.schema_infer_max_rec = Some(INFER_TYPES_FROM_ALL_ROWS);
    }
    ctx
}

/// Registers the file or directory `path` as table `name` (see [`open_path`]).
pub async fn register_path(ctx: &SessionContext, name: &str, path: &str) -> Result<()> {
    let what = format!("'{}'", quote(path, 200));
    let table = open_path(&ctx.state(), &what, path).await?;
    ctx.register_table(name, table)?;
    Ok(())
}

/// The table a local file or directory holds (see [`check_path`]), with the listing's own
/// checks (directories whose files disagree). `what` names the input in messages, as the
/// caller's user wrote it (`--table t=dir/`, `'dir/'`).
pub async fn open_path(
    state: &SessionState,
    what: &str,
    name: &str,
) -> std::result::Result<Arc<dyn TableProvider>, FileError> {
    open_path_in(state, what, name, &TextTypes::default()).await
}

/// [`open_path`], reading the times of CSV and JSON files at `times` (the units and zones a schema
/// declares for them).
pub async fn open_path_in(
    state: &SessionState,
    what: &str,
    name: &str,
    times: &TextTypes,
) -> std::result::Result<Arc<dyn TableProvider>, FileError> {
    let (path, files) = check_path(what, name)?;
    listing_table(state, &path, &files, times)
        .await
        .map_err(|e| input_error(what, &path, &e))
}

/// The local path `name` names and its data files, refusing what cannot be read whole: a
/// name that is no local path, a missing path, a FIFO or device (the reader would block
/// forever), an empty Parquet file, a path of no known format, a directory of two data
/// extensions or of CSV files whose headers differ.
pub fn check_path(what: &str, name: &str) -> std::result::Result<(PathBuf, DataFiles), FileError> {
    let path = local_path(name).ok_or_else(|| {
        FileError::not_data(format!(
            "{what}: expected a local file or directory, or a file:///absolute/path URL"
        ))
    })?;
    let metadata = std::fs::metadata(&path)
        .map_err(|_| FileError::not_data(format!("{what}: no such file or directory")))?;
    if !(metadata.is_file() || metadata.is_dir()) {
        return Err(FileError::not_data(format!(
            "{what}: expected a regular file or a directory, found a FIFO, socket or device"
        )));
    }
    // The reader lists files through object_store, which refuses such names with an
    // error of its own.
    if path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().chars().any(char::is_control))
    {
        return Err(FileError::not_data(format!(
            "{what}: the name holds a control character, which the reader cannot list; rename it"
        )));
    }
    empty_parquet(what, &path, &metadata)?;
    let files = known_data_files(what, &path, metadata.is_dir())?;
    Ok((path, files))
}

/// The file format of `path` ("parquet", "csv" or "json"); `None` also for a directory
/// holding two data extensions, which reading refuses.
pub fn format_of_path(path: &Path) -> Option<&'static str> {
    data_files(path)
        .ok()
        .flatten()
        .map(|files| files.format.name())
}

/// An error while opening the input `what` at `path`, naming the first unreadable Parquet
/// file of a directory where the reader named none.
pub fn input_error(what: &str, path: &Path, e: &DataFusionError) -> FileError {
    match error_cause(e) {
        ErrorCause::Parquet(detail) => {
            let dirs: Vec<PathBuf> = std::iter::once(path.to_path_buf())
                .filter(|p| p.is_dir())
                .collect();
            let note = unreadable_file_note(&dirs);
            match (dirs.is_empty(), note.is_empty()) {
                (true, _) | (false, true) => FileError::unreadable(format!(
                    "{what}: cannot read the Parquet file{}: {detail}{note}",
                    if dirs.is_empty() {
                        ""
                    } else {
                        "s of the directory"
                    }
                )),
                (false, false) => FileError::unreadable(format!(
                    "{what}: cannot read a Parquet file of the directory{note}"
                )),
            }
        }
        ErrorCause::Other(message) => {
            let found = match is_text_read_error(&message) {
                true => text_read_failure(&message, &[path.to_path_buf()], None),
                false if message.contains("Fail to merge schema field") => {
                    differing_text_types(path, true, CsvDialect::default())
                }
                false if message.starts_with("Object Store error") => Some(listing_words(&message)),
                false => None,
            };
            // The listing names the directory itself where the reader names nothing.
            let own = format!("'{}'", quote(&path.to_string_lossy(), 200));
            let found =
                found.unwrap_or_else(|| cap(&message.replacen(&format!("{own}: "), "", 1), 500));
            // `what` already names a file read alone.
            let found = match path.is_file() {
                true => found
                    .replacen(&format!("cannot read {own} "), "cannot read ", 1)
                    .replacen(&format!("cannot read {own}: "), "cannot read: ", 1),
                false => found,
            };
            FileError::unreadable(format!("{what}: {found}"))
        }
    }
}

/// The file listing's errors in the user's words, without the names of the layers below.
fn listing_words(message: &str) -> String {
    if message.contains("File system loop found") {
        "cannot list the directory: a symbolic link in it leads back to a directory above (a loop)"
            .to_string()
    } else if message.contains("invalid path") {
        "cannot list the directory: a name in it, or in its path, has characters the file listing does not take (control characters, for example)".to_string()
    } else {
        let detail = message
            .trim_start_matches("Object Store error:")
            .trim_start()
            .trim_start_matches("Generic LocalFileSystem error:")
            .trim_start();
        format!("cannot list the directory: {}", quote(detail, 300))
    }
}

/// A Parquet file of 0 bytes is refused: the reader would take it for an empty table and
/// the query would pass on no data.
fn empty_parquet(
    what: &str,
    path: &Path,
    metadata: &std::fs::Metadata,
) -> std::result::Result<(), FileError> {
    if metadata.is_file() && metadata.len() == 0 && format_of_path(path) == Some("parquet") {
        return Err(FileError::unreadable(format!(
            "{what}: cannot read the Parquet file: it is empty (0 bytes), not a Parquet file"
        )));
    }
    Ok(())
}

/// The data files of an existing `path`, or why it cannot be read as a table.
fn known_data_files(
    what: &str,
    path: &Path,
    is_dir: bool,
) -> std::result::Result<DataFiles, FileError> {
    match data_files(path) {
        Ok(Some(files)) => Ok(files),
        Ok(None) if is_dir => Err(FileError::not_data(format!(
            "{what}: no data file in the directory: expected {KNOWN_EXTENSIONS} files in \
             it or in its key=value subdirectories (up to {MAX_DEPTH} levels down)"
        ))),
        Ok(None) => Err(FileError::not_data(format!(
            "{what}: unknown file format: expected a {KNOWN_EXTENSIONS} file"
        ))),
        Err(reason) => Err(FileError::not_data(format!("{what}: {reason}"))),
    }
}

/// Most files of a directory whose footers are read to find one that cannot be read.
const PROBED_FILES: usize = 10_000;

/// Most file names of a directory listed to find the first by path.
const LISTED_FILES: usize = 1_000_000;

/// The first Parquet file (by path) in the directory `dir` or below it whose footer (or
/// the Arrow schema in it) the Parquet reader refuses or panics on, and why: the
/// reader's own errors name only the directory. `None` when every footer reads (the fault
/// is further into a file: not looked for, as it means decoding every file) or `dir` is
/// not a directory. At most the first [`PROBED_FILES`] files by path are read (of at
/// most [`LISTED_FILES`] listed).
pub fn unreadable_parquet_file(dir: &Path) -> Option<(PathBuf, String)> {
    let mut files = Vec::new();
    parquet_files_below(dir, 16, &mut files);
    files.sort();
    files.into_iter().take(PROBED_FILES).find_map(|file| {
        let opened = match std::fs::File::open(&file) {
            Ok(opened) => opened,
            Err(e) => return Some((file, format!("cannot be opened ({})", e.kind()))),
        };
        // The footer and the Arrow schema stored in it, as the reader reads them; some
        // corrupt ones make it panic rather than fail.
        let read = std::panic::catch_unwind(move || {
            use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
            ParquetRecordBatchReaderBuilder::try_new(opened).map(|_| ())
        });
        let why = match read {
            Ok(Ok(())) => return None,
            Ok(Err(e)) => match error_cause(&DataFusionError::from(e)) {
                ErrorCause::Parquet(detail) => detail,
                ErrorCause::Other(message) => message,
            },
            Err(_) => "the Parquet reader failed on it".to_string(),
        };
        Some((file, why))
    })
}

/// The regular `.parquet` files in `dir` and its Hive partitions (`key=value`
/// subdirectories, to `depth` levels; the reader ignores other subdirectories, and links
/// to directories are not followed), into `files`, until there are [`LISTED_FILES`].
fn parquet_files_below(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if files.len() >= LISTED_FILES {
            return;
        }
        // Hidden and `_` files too: the reader lists every file with the extension.
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && depth > 0 && name.contains('=') => {
                parquet_files_below(&path, depth - 1, files);
            }
            Ok(kind) if kind.is_dir() => {}
            _ if name.ends_with(".parquet") && path.is_file() => files.push(path),
            _ => {}
        }
    }
}

/// `" (...)"` naming the first unreadable Parquet file in `dirs` and why, or nothing.
/// The file is named within its directory, so that a cut long path keeps its name.
pub fn unreadable_file_note(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .find_map(|dir| unreadable_parquet_file(dir).map(|found| (dir, found)))
        .map(|(dir, (file, why))| {
            let within = file.strip_prefix(dir).unwrap_or(&file);
            format!(
                " (in '{}', the first file that cannot be read: '{}': {why})",
                quote(&dir.to_string_lossy(), 200),
                quote(&within.to_string_lossy(), 200)
            )
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::listing_words;

    #[test]
    fn listing_errors_lose_the_layer_names_and_keep_their_cause() {
        let loop_found = listing_words(
            "Object Store error: Generic LocalFileSystem error: Unable to walk dir: File system loop found: /proc/self/task/1/cwd points to an ancestor /",
        );
        assert!(loop_found.contains("(a loop)"), "{loop_found}");
        let invalid = listing_words(
            "Object Store error: Encountered object with invalid path: Error parsing Path \"a\u{1b}b\"",
        );
        assert!(invalid.contains("control characters"), "{invalid}");
        let other = listing_words(
            "Object Store error: Generic LocalFileSystem error: Permission denied \u{1b}[31m",
        );
        assert_eq!(
            other,
            "cannot list the directory: Permission denied \\u{1b}[31m"
        );
        for words in [loop_found, invalid, other] {
            assert!(!words.contains("Object Store") && !words.contains("LocalFileSystem"));
        }
    }
}
