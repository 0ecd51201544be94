//! The data a path names: a file, or a directory of files of one format, found by their
//! extension. One place decides it for `FROM 'path'`, `--table` and `training-set`, so
//! that they read a directory alike.
//!
//! A directory is read as Spark writes one: the files directly in it and in `key=value`
//! subdirectories (Hive partitions, which become columns); files of no data extension
//! (`_SUCCESS`, `.part-0.parquet.crc`, `notes.txt`) are left out. Refused rather than half
//! read: files of two data extensions in one directory (`.csv` beside `.parquet`, or `.pq`
//! beside `.parquet`), an empty (0-byte) Parquet file, CSV files whose headers differ
//! (the reader matches CSV columns by position, so `b,a` beside `a,b` would swap values),
//! partitions nested deeper than [`MAX_DEPTH`], a partition key that is also a column of
//! the files. Null partition values (Spark's `key=__HIVE_DEFAULT_PARTITION__`,
//! DataFusion's `key=`) read as null, not as those strings. `CREATE EXTERNAL TABLE`
//! locations are read the same way.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::catalog::{TableProvider, TableProviderFactory, UrlTableFactory};
use datafusion::common::DFSchema;
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
use datafusion::datasource::listing::{ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionState;
use datafusion::execution::options::{
    CsvReadOptions, JsonReadOptions, ParquetReadOptions, ReadOptions,
};

use crate::sql::table_paths::extension;
pub use crate::sql::table_paths::{is_file_url, local_path, path_like};
use arrowfeat_common::quote;
use parquet::CheckedParquet;

mod open;
pub mod parquet;
mod text_errors;
mod text_times;

pub use text_errors::{
    differing_text_types, inexact_integers, is_text_read_error, name_text_file, text_read_failure,
    TextErrorsExec, TextLayout,
};

pub use open::{
    check_path, enable, error_message, format_of_path, input_error, open_path, open_path_in,
    register_path, session, session_within, unreadable_file_note, unreadable_parquet_file,
    FileError, FileErrorKind, PARQUET_UNREADABLE,
};

/// Rows a CSV or JSON column's type is inferred from: all. From the first 1,000 only (the
/// reader's default), a time column of whole seconds became `Timestamp(s)` and a later
/// `10:00:00.500` was cut to `10:00:00`, silently, as `2024-01-01` rows made a later
/// `2024-01-01T23:00` a date: a training set then saw events from after the label. Over
/// all rows such a column is read as text, which the functions refuse by name.
pub const INFER_TYPES_FROM_ALL_ROWS: usize = usize::MAX;

/// The declared types at which columns of CSV and JSON files are read, where the
/// readers' inference would read them otherwise.
///
/// Time columns, which such files hold with no unit or zone: a
/// column whose text reads as times without a zone (every value parses, with an offset or
/// without) takes the declared zone, and the declared unit where it is finer than the one
/// the text needs. A value with an offset is the same instant either way; one without is
/// taken as a time in that zone, as a naive Parquet time is taken as UTC against
/// `tz: UTC`. A unit is never made coarser: that would cut digits the text holds.
///
/// Columns declared as text are read as text from CSV files, whatever their values look
/// like: an id column of `001`, `002` is not the integers 1 and 2 (which would lose the
/// zeros and match `01`).
#[derive(Debug, Clone, Default)]
pub struct TextTypes {
    times: Vec<DeclaredTime>,
    text: Vec<String>,
}

/// A time column's declared unit and zone.
#[derive(Debug, Clone)]
pub struct DeclaredTime {
    pub column: String,
    pub unit: TimeUnit,
    pub zone: Option<Arc<str>>,
}

impl TextTypes {
    pub fn new(times: Vec<DeclaredTime>) -> TextTypes {
        TextTypes {
            times,
            text: Vec::new(),
        }
    }

    /// These times, and `columns` read as text from CSV files.
    pub fn with_text(mut self, columns: Vec<String>) -> TextTypes {
        self.text = columns;
        self
    }

    /// `schema` (of the `format` files at `path`) with the declared units and zones, if
    /// any column changes. A declared time column whose every value reads as a time
    /// (checked here, value by value: the readers' own inference goes by digits and
    /// shapes) is read at the coarsest unit that holds every value, or the declared one
    /// where that is finer. A column of nulls alone is one of the declared type.
    fn apply(
        &self,
        schema: &datafusion::arrow::datatypes::Schema,
        path: &Path,
        format: DataFormat,
    ) -> Option<datafusion::arrow::datatypes::SchemaRef> {
        use datafusion::arrow::datatypes::{Field, Schema};
        let files = std::cell::OnceCell::new();
        let files = || files.get_or_init(|| text_errors::files_of(&[path.to_path_buf()], format));
        let declared = |field: &Field| self.times.iter().find(|d| &d.column == field.name());
        // Every declared time column's values, read in one pass. CSV's own inference
        // takes `23:59:60` and a fraction of one chunk against whole seconds in another
        // differently by unit; JSON's reads times as text.
        let text_columns: Vec<usize> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, field)| {
                declared(field).is_some()
                    && match format {
                        DataFormat::Csv => matches!(
                            field.data_type(),
                            DataType::Timestamp(_, None)
                                | DataType::Utf8
                                | DataType::Date32
                                | DataType::Date64
                        ),
                        DataFormat::Json => field.data_type() == &DataType::Utf8,
                        DataFormat::Parquet => false,
                    }
            })
            .map(|(index, _)| index)
            .collect();
        let text_units = match (text_columns.is_empty(), format) {
            (true, _) | (_, DataFormat::Parquet) => Vec::new(),
            (false, DataFormat::Csv) => text_times::csv_time_units(files(), &text_columns),
            (false, DataFormat::Json) => {
                let names: Vec<&str> = text_columns
                    .iter()
                    .map(|&index| schema.field(index).name().as_str())
                    .collect();
                text_times::json_time_units(files(), &names)
            }
        };
        let mut changed = false;
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(index, field)| {
                // CSV text reads as text, always.
                let as_text = format == DataFormat::Csv
                    && self.text.contains(field.name())
                    && !matches!(
                        field.data_type(),
                        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                    );
                if as_text {
                    changed = true;
                    return field.as_ref().clone().with_data_type(DataType::Utf8);
                }
                let Some(declared) = declared(field) else {
                    return field.as_ref().clone();
                };
                let text_unit = text_columns
                    .iter()
                    .position(|&i| i == index)
                    .and_then(|at| text_units[at]);
                let read = match (text_unit, field.data_type()) {
                    (Some(unit), _) => {
                        DataType::Timestamp(finer(unit, declared.unit), declared.zone.clone())
                    }
                    // No value at all: nulls of the declared type, as a Parquet file's
                    // column of nulls has one.
                    (None, DataType::Null) => {
                        DataType::Timestamp(declared.unit, declared.zone.clone())
                    }
                    // Times the reader would read, but not as one instant whatever the
                    // unit: text, which the type check reports.
                    (None, DataType::Timestamp(..)) if format == DataFormat::Csv => DataType::Utf8,
                    (None, other) => other.clone(),
                };
                changed |= &read != field.data_type();
                field.as_ref().clone().with_data_type(read)
            })
            .collect();
        changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
    }
}

/// The finer of two time units.
fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let rank = |unit: TimeUnit| match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// A format arrowfeat reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    Parquet,
    Csv,
    Json,
}

impl DataFormat {
    /// The format of a file by its extension (any case), if it is a data file.
    pub fn of_file(path: &Path) -> Option<Self> {
        match extension(path.to_str()?)?.to_ascii_lowercase().as_str() {
            "parquet" | "pq" => Some(Self::Parquet),
            "csv" => Some(Self::Csv),
            "json" | "ndjson" | "jsonl" => Some(Self::Json),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Parquet => "parquet",
            Self::Csv => "csv",
            Self::Json => "json",
        }
    }
}

/// What a file or directory holds: a format, and the extension its files carry (as
/// written: the reader keeps files whose names end with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFiles {
    pub format: DataFormat,
    pub extension: String,
    /// A `key=__HIVE_DEFAULT_PARTITION__` subdirectory is there: Spark's name for the
    /// rows whose `key` is null.
    pub null_partitions: bool,
}

/// The partition value Spark and Hive write for null.
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// The extensions accepted, for messages.
pub const KNOWN_EXTENSIONS: &str = ".parquet, .pq, .csv, .json, .ndjson or .jsonl";

/// Directory entries looked at to choose a format, at most: past them the first format
/// found is taken.
const MAX_ENTRIES: usize = 1_000_000;

/// Levels of `key=value` subdirectories looked into.
pub const MAX_DEPTH: usize = 8;

/// What `path` holds. A path that is not a directory (or does not exist yet, for an
/// output) by its own extension; a directory by the data files in it. `Ok(None)` when
/// there is no data file; an error (a sentence, names quoted) when a directory holds
/// files of two data extensions or an empty Parquet file.
pub fn data_files(path: &Path) -> std::result::Result<Option<DataFiles>, String> {
    data_files_with(path, Some(CsvDialect::default()))
}

/// How a table's CSV files are parsed, as far as their header goes: DataFusion's
/// `format.delimiter`, `format.quote`, `format.escape`, `format.comment` and
/// `format.terminator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvDialect {
    pub delimiter: u8,
    pub quote: u8,
    pub escape: Option<u8>,
    pub comment: Option<u8>,
    pub terminator: Option<u8>,
    /// `format.truncated_rows`: rows of fewer fields than the columns are read, the rest
    /// null.
    pub truncated_rows: bool,
}

impl Default for CsvDialect {
    fn default() -> Self {
        Self {
            delimiter: b',',
            quote: b'"',
            escape: None,
            comment: None,
            terminator: None,
            truncated_rows: false,
        }
    }
}

impl CsvDialect {
    /// arrow's CSV format of this dialect, the files starting with a header or not.
    fn arrow_format(&self, header: bool) -> datafusion::arrow::csv::reader::Format {
        let mut format = datafusion::arrow::csv::reader::Format::default()
            .with_header(header)
            .with_delimiter(self.delimiter)
            .with_quote(self.quote)
            .with_truncated_rows(self.truncated_rows);
        if let Some(escape) = self.escape {
            format = format.with_escape(escape);
        }
        if let Some(comment) = self.comment {
            format = format.with_comment(comment);
        }
        if let Some(terminator) = self.terminator {
            format = format.with_terminator(terminator);
        }
        format
    }

    /// A reader of a CSV file's records in this dialect, the header as the first, rows of
    /// any length.
    fn records(&self) -> csv::ReaderBuilder {
        let mut builder = csv::ReaderBuilder::new();
        builder
            .has_headers(false)
            .flexible(true)
            .delimiter(self.delimiter)
            .quote(self.quote)
            .escape(self.escape)
            .comment(self.comment)
            .terminator(
                self.terminator
                    .map_or(csv::Terminator::CRLF, csv::Terminator::Any),
            );
        builder
    }

    /// The dialect `options` (`format.*` keys, any case; values of one byte) give, or a
    /// sentence saying which option cannot be followed.
    pub fn of_options<'a>(
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> std::result::Result<Self, String> {
        let mut dialect = Self::default();
        for (key, value) in options {
            let key = key.to_ascii_lowercase();
            let name = key.strip_prefix("format.").unwrap_or(&key);
            if name == "truncated_rows" {
                dialect.truncated_rows = value.eq_ignore_ascii_case("true");
                continue;
            }
            let slot = match name {
                "delimiter" => &mut dialect.delimiter,
                "quote" => &mut dialect.quote,
                "escape" => dialect.escape.insert(0),
                "comment" => dialect.comment.insert(0),
                "terminator" => dialect.terminator.insert(0),
                _ => continue,
            };
            let [byte] = value.as_bytes() else {
                return Err(format!(
                    "option `{}`: expected one character, found '{}'",
                    quote(&key, 60),
                    quote(value, 60)
                ));
            };
            *slot = *byte;
        }
        Ok(dialect)
    }
}

/// [`data_files`]; `csv_headers`: how CSV files are parsed when they start with a header
/// (then all must share one), `None` when they have none.
pub fn data_files_with(
    path: &Path,
    csv_headers: Option<CsvDialect>,
) -> std::result::Result<Option<DataFiles>, String> {
    if !path.is_dir() {
        return Ok(DataFormat::of_file(path).map(|format| DataFiles {
            format,
            extension: extension_of(path),
            null_partitions: false,
        }));
    }
    let walk = Walk::all(path, csv_headers)?;
    let null_partitions = walk.null_partitions;
    Ok(walk.found.map(|(files, _)| DataFiles {
        null_partitions,
        ..files
    }))
}

/// A directory's data files in path order, until two extensions are found.
struct Walk<'a> {
    root: &'a Path,
    /// The first data file's format and extension, and the file.
    found: Option<(DataFiles, PathBuf)>,
    /// Entries looked at so far.
    seen: usize,
    /// Directories walked (links resolved), so that a link back up is walked once.
    visited: HashSet<DirId>,
    /// The first CSV file with a header, to which the others' are compared.
    first_csv: FirstCsv,
    /// How CSV files with a header are parsed; `None`: they have none.
    csv_headers: Option<CsvDialect>,
    /// A partition directory of Spark's null value was walked.
    null_partitions: bool,
    /// Subdirectories the reader leaves out (names not key=value), looked into once the
    /// table's own directories are all known: a link in one to a partition of the table
    /// leaves nothing out, whichever name sorts first.
    left_out: Vec<PathBuf>,
}

/// The first CSV file of a directory: read only when a second one makes its header
/// matter.
enum FirstCsv {
    None,
    Unread(PathBuf),
    Read(PathBuf, csv::ByteRecord),
}

/// Bytes a CSV header may take, at most.
const MAX_CSV_HEADER_BYTES: u64 = 16 << 20;

/// The first record of a CSV file as the reader parses it; `Ok(None)` for an empty or
/// unreadable file (which the reader itself reports or reads as no rows).
fn csv_header(
    path: &Path,
    dialect: CsvDialect,
) -> std::result::Result<Option<csv::ByteRecord>, ()> {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    let mut reader = dialect
        .records()
        .from_reader(file.take(MAX_CSV_HEADER_BYTES + 1));
    let mut header = csv::ByteRecord::new();
    match reader.read_byte_record(&mut header) {
        Ok(true) if reader.position().byte() > MAX_CSV_HEADER_BYTES => Err(()),
        Ok(true) => Ok(Some(header)),
        Ok(false) | Err(_) => Ok(None),
    }
}

/// A header's field for messages: quoted, cut, bytes that are not UTF-8 as `\xNN`.
fn field_text(field: &[u8]) -> String {
    let mut text = String::new();
    for chunk in field.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    format!("`{}`", quote(&text, 100))
}

/// The names in the header of the first CSV file `path` holds (itself, if a file; in
/// path order, if a directory), if there is one with a header.
pub fn first_csv_header(
    path: &Path,
    dialect: CsvDialect,
) -> std::result::Result<Option<Vec<String>>, String> {
    let names = |header: &csv::ByteRecord| {
        header
            .iter()
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect()
    };
    let file = if path.is_dir() {
        match Walk::all(path, Some(dialect))?.first_csv {
            FirstCsv::Read(_, header) => return Ok(Some(names(&header))),
            FirstCsv::Unread(file) => file,
            FirstCsv::None => return Ok(None),
        }
    } else {
        path.to_path_buf()
    };
    let header = csv_header(&file, dialect).map_err(|()| {
        format!(
            "the header is longer than {} MiB",
            MAX_CSV_HEADER_BYTES >> 20
        )
    })?;
    Ok(header.as_ref().map(names))
}

impl<'a> Walk<'a> {
    /// The walk of the whole directory `root`.
    fn all(root: &'a Path, csv_headers: Option<CsvDialect>) -> std::result::Result<Self, String> {
        let mut walk = Walk {
            root,
            found: None,
            seen: 0,
            visited: HashSet::new(),
            first_csv: FirstCsv::None,
            csv_headers,
            null_partitions: false,
            left_out: Vec::new(),
        };
        walk.dir(root, 0)?;
        for dir in std::mem::take(&mut walk.left_out) {
            walk.refuse_left_out(&dir)?;
        }
        Ok(walk)
    }

    /// Refuses the subdirectory `dir` (which the reader leaves out) if it holds data
    /// files of the table's that the reader would not read through another path.
    fn refuse_left_out(&self, dir: &Path) -> std::result::Result<(), String> {
        let holds = match left_out_data(dir, &self.visited) {
            LeftOut::Nothing => return Ok(()),
            LeftOut::Data(file) => format!(
                "it holds data files (such as '{}') that the reader would leave out",
                self.relative(&file)
            ),
            LeftOut::TooLarge => format!(
                "it is too large to look through (more than {LEFT_OUT_ENTRIES} entries \
                 or {LEFT_OUT_DEPTH} levels) for data files the reader would leave out"
            ),
        };
        Err(format!(
            "'{}' is a subdirectory whose name is not key=value, and {holds}: name it \
             key=value (a Hive partition), move it out of the table's directory, or \
             start its name with `_` if it holds no data of the table",
            self.relative(dir),
        ))
    }

    fn dir(&mut self, dir: &Path, depth: usize) -> std::result::Result<(), String> {
        let Some(id) = dir_id(dir) else {
            return Ok(());
        };
        if !self.visited.insert(id) {
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        // Only names that may matter (a data extension, `=` for a partition, or a
        // directory that is not hidden) are looked at further, so that a directory of
        // many other files costs no `stat`.
        let mut names: Vec<(PathBuf, Option<DataFormat>)> = entries
            .filter_map(|e| {
                let e = e.ok()?;
                let path = e.path();
                let name = path.file_name()?.to_str()?;
                let format = DataFormat::of_file(Path::new(name));
                let other_dir = !name.starts_with(['_', '.'])
                    && e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink());
                (format.is_some() || name.contains('=') || other_dir).then_some((path, format))
            })
            .collect();
        // By name, so that the files named in a message do not depend on the file system.
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (entry, format) in names {
            self.seen += 1;
            if self.seen > MAX_ENTRIES {
                return Err(format!(
                    "the directory holds more than {MAX_ENTRIES} files and partition \
                     directories; split the table"
                ));
            }
            // The reader lists files through object_store, which refuses such names with
            // an error of its own, naming its internals.
            if entry
                .file_name()
                .is_some_and(|n| n.to_string_lossy().chars().any(char::is_control))
            {
                return Err(format!(
                    "'{}' has a control character in its name, which the reader cannot \
                     list; rename it",
                    self.relative(&entry)
                ));
            }
            // Links followed, as the reader follows them; one that leads nowhere would be
            // skipped by the reader, and the table read without its data.
            let Ok(metadata) = std::fs::metadata(&entry) else {
                // A link of another name (`notes`) is not the reader's to read.
                let named_as_data = format.is_some()
                    || entry
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().contains('='));
                if named_as_data
                    && std::fs::symlink_metadata(&entry).is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err(format!(
                        "'{}' is a link to nothing (its target does not exist); restore the \
                         target or remove the link",
                        self.relative(&entry)
                    ));
                }
                continue;
            };
            if metadata.is_dir() {
                let partition = entry
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split_once('='));
                if let Some((_, value)) = partition {
                    if depth == MAX_DEPTH {
                        // The reader would read them, unchecked.
                        return Err(format!(
                            "partition directories nest more than {MAX_DEPTH} levels deep \
                             ('{}')",
                            self.relative(&entry)
                        ));
                    }
                    // DataFusion writes a null key as `key=`.
                    self.null_partitions |= value == NULL_PARTITION || value.is_empty();
                    self.dir(&entry, depth + 1)?;
                    continue;
                }
                // The reader leaves such a directory out, and the table would be read
                // without its rows. `_` and `.` names (Spark's `_temporary`, Delta's
                // `_delta_log`) are the writers' own and are not looked into.
                if entry
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(['_', '.']))
                {
                    continue;
                }
                self.left_out.push(entry);
                continue;
            }
            let Some(format) = format.filter(|_| metadata.is_file()) else {
                continue;
            };
            if format == DataFormat::Parquet && metadata.len() == 0 {
                return Err(format!(
                    "the directory holds an empty (0-byte) Parquet file, '{}', which the \
                     reader would skip: a Parquet file holds at least its footer",
                    self.relative(&entry)
                ));
            }
            let extension = extension_of(&entry);
            match &self.found {
                None => {
                    let files = DataFiles {
                        format,
                        extension,
                        null_partitions: false,
                    };
                    self.found = Some((files, entry.clone()));
                }
                Some((first, first_path)) if first.extension != extension => {
                    return Err(format!(
                        "the directory holds files of two data extensions, `{}` (such as \
                         '{}') and `{}` (such as '{}'); a table reads files of one \
                         extension: move the others out",
                        quote(&first.extension, 40),
                        self.relative(first_path),
                        quote(&extension, 40),
                        self.relative(&entry),
                    ));
                }
                Some(_) => {}
            }
            if format == DataFormat::Csv && self.csv_headers.is_some() {
                self.csv_file(&entry)?;
            }
        }
        Ok(())
    }

    /// Refuses a CSV file whose header is not the first CSV file's: the reader takes
    /// the table's columns from the headers but reads every file's fields by position.
    /// Empty files have no header and take no part.
    fn csv_file(&mut self, path: &Path) -> std::result::Result<(), String> {
        match std::mem::replace(&mut self.first_csv, FirstCsv::None) {
            FirstCsv::None => self.first_csv = FirstCsv::Unread(path.to_path_buf()),
            FirstCsv::Unread(first) => match self.header(&first)? {
                None => self.first_csv = FirstCsv::Unread(path.to_path_buf()),
                Some(header) => {
                    self.first_csv = FirstCsv::Read(first, header);
                    self.same_header(path)?;
                }
            },
            read @ FirstCsv::Read(..) => {
                self.first_csv = read;
                self.same_header(path)?;
            }
        }
        Ok(())
    }

    fn header(&self, path: &Path) -> std::result::Result<Option<csv::ByteRecord>, String> {
        csv_header(path, self.csv_headers.unwrap_or_default()).map_err(|()| {
            format!(
                "the header of '{}' is longer than {} MiB; is it a CSV file?",
                self.relative(path),
                MAX_CSV_HEADER_BYTES >> 20
            )
        })
    }

    fn same_header(&self, path: &Path) -> std::result::Result<(), String> {
        let FirstCsv::Read(first_path, first) = &self.first_csv else {
            return Ok(());
        };
        let Some(header) = self.header(path)? else {
            return Ok(());
        };
        let Some(at) = (0..first.len().max(header.len())).find(|&i| first.get(i) != header.get(i))
        else {
            return Ok(());
        };
        let column = |h: &csv::ByteRecord| match h.get(at) {
            Some(name) => format!("{} as column {}", field_text(name), at + 1),
            None => format!("no column {} ({} columns)", at + 1, h.len()),
        };
        Err(format!(
            "'{}' has {} where '{}' has {}; the CSV files of one table are read by column \
             position, so they must share one header: write them with the same columns in \
             the same order",
            self.relative(path),
            column(&header),
            self.relative(first_path),
            column(first),
        ))
    }

    /// A file's path within the directory, quoted, and cut at the front when long, so
    /// that the file's own name is kept.
    fn relative(&self, path: &Path) -> String {
        let text = path
            .strip_prefix(self.root)
            .unwrap_or(path)
            .to_string_lossy();
        let chars = text.chars().count();
        if chars <= 200 {
            return quote(&text, 200);
        }
        let tail: String = text.chars().skip(chars - 200).collect();
        format!("…{}", quote(&tail, 200))
    }
}

/// What a directory the reader leaves out holds.
enum LeftOut {
    Nothing,
    /// A data file, the first found.
    Data(PathBuf),
    /// More than could be looked through.
    TooLarge,
}

/// Entries and levels looked through in a directory the reader leaves out.
const LEFT_OUT_ENTRIES: usize = 100_000;
const LEFT_OUT_DEPTH: usize = 32;

/// Whether the directory `dir` (which the reader leaves out) or one below it holds a data
/// file. Links are followed; directories in `walked` (those of the table, already walked)
/// and hidden `_` and `.` names are not looked into. Only links and directories cost a
/// `stat`.
fn left_out_data(dir: &Path, walked: &HashSet<DirId>) -> LeftOut {
    let mut pending = vec![(dir.to_path_buf(), 0)];
    let mut visited = HashSet::new();
    let mut seen = 0;
    while let Some((dir, depth)) = pending.pop() {
        let Some(id) = dir_id(&dir) else { continue };
        if walked.contains(&id) || !visited.insert(id) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(['_', '.']) {
                continue;
            }
            seen += 1;
            if seen > LEFT_OUT_ENTRIES {
                return LeftOut::TooLarge;
            }
            let Ok(mut kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                let Ok(metadata) = std::fs::metadata(entry.path()) else {
                    continue;
                };
                kind = metadata.file_type();
            }
            if kind.is_file() && DataFormat::of_file(Path::new(&name)).is_some() {
                return LeftOut::Data(entry.path());
            }
            if kind.is_dir() {
                if depth == LEFT_OUT_DEPTH {
                    return LeftOut::TooLarge;
                }
                pending.push((entry.path(), depth + 1));
            }
        }
    }
    LeftOut::Nothing
}

/// A directory's identity, links resolved: the same for every path that reaches it.
#[cfg(unix)]
type DirId = (u64, u64);

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(dir).ok()?;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> Option<DirId> {
    std::fs::canonicalize(dir).ok()
}

/// `.ext` of a file name, as written (`.parquet` for a file named `.parquet`).
fn extension_of(path: &Path) -> String {
    extension(&path.to_string_lossy())
        .map(|e| format!(".{e}"))
        .unwrap_or_default()
}

/// The table a local file or directory holds, read as DataFusion reads `FROM 'path'`
/// (Hive partitions in `key=value` directories become columns), with the format and
/// extension `files` gives. `path` is taken literally: `[`, `*` or `?` in a name are not
/// patterns.
pub async fn listing_table(
    state: &SessionState,
    path: &Path,
    files: &DataFiles,
    times: &TextTypes,
) -> Result<Arc<dyn TableProvider>> {
    let config = state.config();
    let table_options = state.default_table_options();
    let extension = files.extension.as_str();
    let options = match files.format {
        DataFormat::Parquet => {
            let mut options = ParquetReadOptions {
                file_extension: extension,
                ..Default::default()
            }
            .to_listing_options(config, table_options);
            options.format = CheckedParquet::wrap(options.format);
            options
        }
        DataFormat::Csv => CsvReadOptions::new()
            .file_extension(extension)
            .schema_infer_max_records(INFER_TYPES_FROM_ALL_ROWS)
            .to_listing_options(config, table_options),
        DataFormat::Json => JsonReadOptions::default()
            .file_extension(extension)
            .schema_infer_max_records(INFER_TYPES_FROM_ALL_ROWS)
            .to_listing_options(config, table_options),
    };
    let config = ListingTableConfig::new(literal_url(path)?)
        .with_listing_options(options)
        .infer_partitions_from_path(state)
        .await
        .map_err(
            |e| match e.to_string().contains("Found mixed partition values") {
                true => DataFusionError::Plan(format!(
                    "'{}': the directory holds data files both beside and inside `key=value` \
                 subdirectories; keep them all in one layout",
                    quote(&path.to_string_lossy(), 200)
                )),
                false => e,
            },
        )?;
    let mut table = match config.clone().infer_schema(state).await {
        Ok(table) => table,
        // Also one file: a CSV header naming a column twice, with values of two types.
        Err(e) if e.to_string().contains("Fail to merge schema field") => {
            let merged = match (files.format, &config.options) {
                (DataFormat::Csv, Some(options)) if path.is_dir() => {
                    merged_time_units(state, options, path, &times.text).await
                }
                _ => None,
            };
            match merged {
                Some(schema) => config.with_schema(schema),
                // The reader's merge error names no file: the two files are found and
                // named.
                None => {
                    return Err(
                        differing_text_types(path, true, CsvDialect::default()).map_or(
                            e,
                            |found| {
                                DataFusionError::Plan(format!(
                                    "'{}': {found}",
                                    quote(&path.to_string_lossy(), 200)
                                ))
                            },
                        ),
                    )
                }
            }
        }
        Err(e) => return Err(e),
    };
    if files.format != DataFormat::Parquet {
        if let Some(zoned) = table
            .file_schema
            .as_deref()
            .and_then(|s| times.apply(s, path, files.format))
        {
            table.file_schema = Some(zoned);
        }
    }
    if let Some(schema) = &table.file_schema {
        if let Some(found) = inexact_integers(
            &[path.to_path_buf()],
            files.format,
            schema,
            true,
            CsvDialect::default(),
        ) {
            return Err(DataFusionError::Plan(format!("cannot read {found}")));
        }
    }
    if let (Some(schema), Some(options)) = (&table.file_schema, &table.options) {
        if let Some((key, _)) = options
            .table_partition_cols
            .iter()
            .find(|(key, _)| schema.field_with_name(key).is_ok())
        {
            return Err(DataFusionError::Plan(format!(
                "the files of '{}' hold a column `{}` that is also the key of `{}=...` \
                 subdirectories; rename the column or the directories",
                quote(&path.to_string_lossy(), 200),
                quote(key, 100),
                quote(key, 100)
            )));
        }
    }
    let partition_keys: Vec<String> = table
        .options
        .iter()
        .flat_map(|o| o.table_partition_cols.iter().map(|(key, _)| key.clone()))
        .collect();
    let null_partition_keys = if files.null_partitions {
        partition_keys
    } else {
        Vec::new()
    };
    let csv_check = (files.format == DataFormat::Csv && path.is_dir())
        .then(|| (path.to_path_buf(), CsvDialect::default()));
    let text = match (files.format, &table.file_schema) {
        (DataFormat::Csv | DataFormat::Json, Some(schema)) => Some((
            vec![path.to_path_buf()],
            TextLayout {
                file_schema: Arc::clone(schema),
                csv_header: true,
                csv_dialect: CsvDialect::default(),
            },
        )),
        _ => None,
    };
    local_files_table(
        Arc::new(ListingTable::try_new(table)?),
        None,
        &null_partition_keys,
        csv_check,
        text,
    )
}

/// The one type two CSV or JSON files' types for a column read as: the same, the other
/// where one file holds no value (`Null`), the finer of two units of naive times; `None`
/// for two other types, which cannot be one column.
fn merged_text_type(a: &DataType, b: &DataType) -> Option<DataType> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (DataType::Null, other) | (other, DataType::Null) => Some(other.clone()),
        (DataType::Timestamp(a, None), DataType::Timestamp(b, None)) => {
            Some(DataType::Timestamp(finer(*a, *b), None))
        }
        _ => None,
    }
}

/// The schema of the CSV files of `dir` when they differ only in the unit of times
/// (`11:00:00` in one file, `11:00:00.5` in another: seconds and milliseconds) or in a
/// column some files hold only empty values of: the finest unit, and the type the other
/// files give; columns declared as text (`text`) are text. Each file's schema is inferred
/// as the reader infers it; `None` when two files give a column two other types, or one
/// cannot be inferred.
async fn merged_time_units(
    state: &SessionState,
    options: &datafusion::datasource::listing::ListingOptions,
    dir: &Path,
    text: &[String],
) -> Option<datafusion::arrow::datatypes::SchemaRef> {
    use datafusion::arrow::datatypes::{Field, Schema};
    let mut fields: Vec<Field> = Vec::new();
    for file in text_errors::files_of(&[dir.to_path_buf()], DataFormat::Csv) {
        if std::fs::metadata(&file).ok()?.len() == 0 {
            continue;
        }
        let schema = options
            .infer_schema(state, &literal_url(&file).ok()?)
            .await
            .ok()?;
        for field in schema.fields() {
            // A column declared as text is text in every file, whatever each one infers.
            let field = match text.contains(field.name()) {
                true => Arc::new(field.as_ref().clone().with_data_type(DataType::Utf8)),
                false => field.clone(),
            };
            let Some(seen) = fields.iter_mut().find(|f| f.name() == field.name()) else {
                fields.push(field.as_ref().clone());
                continue;
            };
            let merged = merged_text_type(seen.data_type(), field.data_type())?;
            *seen = seen.clone().with_data_type(merged).with_nullable(true);
        }
    }
    Some(Arc::new(Schema::new(fields)))
}

/// A view of `table` with each partition key's null values read as null: Spark's
/// `key=__HIVE_DEFAULT_PARTITION__` and DataFusion's own `key=`, which the reader alone
/// gives as those strings. A key `table` reads as a string but `typed` declares otherwise
/// (`PARTITIONED BY (day INT)`) is cast to its declared type after that, as the reader
/// could not parse those names as one. Only for directories that hold one, as the view
/// costs partition pruning on those keys.
fn null_partitions_as_null(
    table: &Arc<dyn TableProvider>,
    partition_keys: &[String],
    typed: &datafusion::arrow::datatypes::Schema,
) -> Result<datafusion::datasource::ViewTable> {
    use datafusion::datasource::provider_as_source;
    use datafusion::logical_expr::LogicalPlanBuilder;
    use datafusion::prelude::{cast, ident, lit, nullif};
    use datafusion::scalar::ScalarValue;

    let columns = table
        .schema()
        .fields()
        .iter()
        .map(|field| {
            let column = ident(field.name());
            if !partition_keys.contains(field.name()) {
                return Ok(column);
            }
            let null_value = |text: &str| {
                ScalarValue::Utf8(Some(text.into()))
                    .cast_to(field.data_type())
                    .map(lit)
            };
            let mut read = nullif(nullif(column, null_value(NULL_PARTITION)?), null_value("")?);
            let declared = typed.field_with_name(field.name())?.data_type();
            if declared != field.data_type() {
                read = cast(read, declared.clone());
            }
            Ok(read.alias(field.name()))
        })
        .collect::<Result<Vec<_>>>()?;
    let plan = LogicalPlanBuilder::scan("files", provider_as_source(Arc::clone(table)), None)?
        .project(columns)?
        .build()?;
    Ok(datafusion::datasource::ViewTable::new(plan, None))
}

/// `files` (a listing table) as arrowfeat reads a local directory: null partition values
/// of `null_partition_keys` read as null ([`null_partitions_as_null`], through
/// `null_partition_reader`, `files` with those keys read as strings when `files` declares
/// other types, or `files` itself), and a CSV
/// directory's headers checked again at each scan (`csv_check`: the directory and how its
/// files are parsed), since a statement may have written a file with other columns into
/// it since the table was made, which the reader would read by position. Scans of
/// `text` (CSV or JSON files or directories, and how they are parsed) name the file and
/// line of a read error ([`TextErrorsExec`]). `files` itself when there is nothing to add.
fn local_files_table(
    files: Arc<dyn TableProvider>,
    null_partition_reader: Option<Arc<dyn TableProvider>>,
    null_partition_keys: &[String],
    csv_check: Option<(PathBuf, CsvDialect)>,
    text: Option<(Vec<PathBuf>, TextLayout)>,
) -> Result<Arc<dyn TableProvider>> {
    if null_partition_keys.is_empty() && csv_check.is_none() && text.is_none() {
        return Ok(files);
    }
    let read: Arc<dyn TableProvider> = if null_partition_keys.is_empty() {
        Arc::clone(&files)
    } else {
        let reader = null_partition_reader.unwrap_or_else(|| Arc::clone(&files));
        Arc::new(null_partitions_as_null(
            &reader,
            null_partition_keys,
            &files.schema(),
        )?)
    };
    Ok(Arc::new(LocalFilesTable {
        files,
        read,
        csv_check,
        text,
    }))
}

/// See [`local_files_table`]: reads go through `read`, inserts to `files`.
#[derive(Debug)]
struct LocalFilesTable {
    files: Arc<dyn TableProvider>,
    read: Arc<dyn TableProvider>,
    csv_check: Option<(PathBuf, CsvDialect)>,
    text: Option<(Vec<PathBuf>, TextLayout)>,
}

#[async_trait]
impl TableProvider for LocalFilesTable {
    fn schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        self.read.schema()
    }

    fn constraints(&self) -> Option<&datafusion::common::Constraints> {
        self.files.constraints()
    }

    fn table_type(&self) -> datafusion::datasource::TableType {
        self.files.table_type()
    }

    fn get_column_default(&self, column: &str) -> Option<&datafusion::prelude::Expr> {
        self.files.get_column_default(column)
    }

    fn get_logical_plan(
        &self,
    ) -> Option<std::borrow::Cow<'_, datafusion::logical_expr::LogicalPlan>> {
        // Not inlined: a view inlined by the planner is never scanned here, where the CSV
        // check is, and its filters would reach the listing table as exact (see
        // `supports_filters_pushdown`).
        None
    }

    async fn scan(
        &self,
        state: &dyn datafusion::catalog::Session,
        projection: Option<&Vec<usize>>,
        filters: &[datafusion::prelude::Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        if let Some((dir, dialect)) = &self.csv_check {
            data_files_with(dir, Some(*dialect)).map_err(|e| {
                DataFusionError::Plan(format!("'{}': {e}", quote(&dir.to_string_lossy(), 200)))
            })?;
        }
        let plan = self.read.scan(state, projection, filters, limit).await?;
        Ok(match &self.text {
            None => plan,
            Some((sources, layout)) => Arc::new(TextErrorsExec::new(
                plan,
                sources.clone(),
                Some(layout.clone()),
            )),
        })
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&datafusion::prelude::Expr],
    ) -> Result<Vec<datafusion::logical_expr::TableProviderFilterPushDown>> {
        use datafusion::logical_expr::TableProviderFilterPushDown::{Exact, Inexact};
        let pushed = self.read.supports_filters_pushdown(filters)?;
        if Arc::ptr_eq(&self.read, &self.files) {
            return Ok(pushed);
        }
        // Through the null-partition view, a filter on a key still prunes partitions,
        // but the listing table, taking a partition filter as exact, did not apply it to
        // the rows the view turns null (`k <> 1` returned the `k=` rows): it is applied
        // again above the scan.
        Ok(pushed
            .into_iter()
            .map(|p| if p == Exact { Inexact } else { p })
            .collect())
    }

    async fn insert_into(
        &self,
        state: &dyn datafusion::catalog::Session,
        input: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
        insert_op: datafusion::logical_expr::dml::InsertOp,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        self.files.insert_into(state, input, insert_op).await
    }
}

/// A `file://` URL for `path` (resolved: no `..`, no links), so that the reader takes
/// every character of it literally.
fn literal_url(path: &Path) -> Result<ListingTableUrl> {
    let absolute = std::fs::canonicalize(path)?;
    let url = if absolute.is_dir() {
        url::Url::from_directory_path(&absolute)
    } else {
        url::Url::from_file_path(&absolute)
    }
    .map_err(|()| {
        DataFusionError::Plan(format!(
            "'{}' is not a path a file URL can hold",
            quote(&absolute.to_string_lossy(), 200)
        ))
    })?;
    ListingTableUrl::try_new(url, None)
}

/// Tables for paths in `FROM 'path'`: local files and directories through
/// [`data_files`] and [`listing_table`]; anything else (object-store URLs) as DataFusion
/// reads it. DataFusion's own factory takes a directory's format from its first file,
/// and gives up ("table not found") on Spark's `_SUCCESS` or `.crc` files.
#[derive(Debug, Default)]
pub struct LocalDataTables {
    datafusion: DynamicListTableFactory,
}

impl LocalDataTables {
    /// `ctx` with paths usable as tables in `FROM`.
    pub fn enable(ctx: datafusion::prelude::SessionContext) -> datafusion::prelude::SessionContext {
        let factory = Arc::new(Self::default());
        let catalogs = Arc::new(datafusion::catalog::DynamicFileCatalog::new(
            Arc::clone(ctx.state().catalog_list()),
            Arc::clone(&factory) as Arc<dyn UrlTableFactory>,
        ));
        // `CREATE EXTERNAL TABLE ... LOCATION 'dir/'` reads null partitions as `FROM` does.
        let external = ctx
            .state()
            .table_factories()
            .iter()
            .map(|(name, inner)| {
                let factory: Arc<dyn TableProviderFactory> = Arc::new(ExternalTables {
                    inner: Arc::clone(inner),
                });
                (name.clone(), factory)
            })
            .collect();
        let mut state = datafusion::execution::SessionStateBuilder::new_from_existing(ctx.state())
            .with_catalog_list(catalogs)
            .with_table_factories(external)
            .build();
        // `STORED AS PARQUET` reads files whose strings were written two ways. (This
        // cannot fail: the factory DataFusion registered is replaced.)
        let _ =
            state.register_file_format(Arc::new(parquet::CheckedParquetFactory::default()), true);
        let ctx = datafusion::prelude::SessionContext::new_with_state(state);
        factory
            .datafusion
            .session_store()
            .with_state(ctx.state_weak_ref());
        ctx
    }
}

#[async_trait]
impl UrlTableFactory for LocalDataTables {
    async fn try_new(&self, url: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if url.contains("://") && !is_file_url(url) {
            return self.datafusion.try_new(url).await;
        }
        // Bare names are tables' (`CREATE VIEW out` beside a directory `out/`).
        if !path_like(url) {
            return Ok(None);
        }
        let Some(local) = local_path(url) else {
            return Ok(None);
        };
        // Names that hold no data or two extensions were refused with their reason
        // before planning; here they are simply not tables.
        if !std::fs::metadata(&local).is_ok_and(|m| m.is_file() || m.is_dir()) {
            return Ok(None);
        }
        let Ok(Some(files)) = data_files(&local) else {
            return Ok(None);
        };
        let session = self
            .datafusion
            .session_store()
            .get_session()
            .upgrade()
            .ok_or_else(|| DataFusionError::Plan("the SQL session has ended".into()))?;
        let state = session
            .read()
            .as_any()
            .downcast_ref::<SessionState>()
            .cloned()
            .ok_or_else(|| DataFusionError::Plan("the SQL session has no state".into()))?;
        listing_table(&state, &local, &files, &TextTypes::default())
            .await
            .map(Some)
    }
}

/// The local directory an external table reads, if it reads one (one location, a path or
/// a `file://` URL, that is a directory).
fn local_dir(cmd: &datafusion::logical_expr::CreateExternalTable) -> Option<PathBuf> {
    let [location] = cmd.locations.as_slice() else {
        return None;
    };
    if location.contains("://") && !is_file_url(location) {
        return None;
    }
    local_path(location).filter(|path| path.is_dir())
}

/// How an external table's CSV files are parsed, if it is stored as CSV with headers:
/// headers unless every `has_header` option (any case, with or without `format.`) says
/// `false`, or none is given and the session's default is false.
pub fn csv_headers_of_options<'a>(
    file_type: &str,
    options: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
    session_default: bool,
) -> Result<Option<CsvDialect>> {
    if !file_type.eq_ignore_ascii_case("csv") {
        return Ok(None);
    }
    let said: Vec<bool> = options
        .clone()
        .into_iter()
        .filter(|(key, _)| {
            let key = key.to_ascii_lowercase();
            key == "format.has_header" || key == "has_header"
        })
        .map(|(_, value)| !value.eq_ignore_ascii_case("false"))
        .collect();
    let headers = if said.is_empty() {
        session_default
    } else {
        said.iter().any(|&header| header)
    };
    if !headers {
        return Ok(None);
    }
    CsvDialect::of_options(options)
        .map(Some)
        .map_err(DataFusionError::Plan)
}

fn csv_headers(
    state: &dyn datafusion::catalog::Session,
    cmd: &datafusion::logical_expr::CreateExternalTable,
) -> Result<Option<CsvDialect>> {
    csv_headers_of_options(
        &cmd.file_type,
        cmd.options.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        state.config_options().catalog.has_header,
    )
}

/// DataFusion's factory for `CREATE EXTERNAL TABLE`, with null partition values of a
/// local directory read as null (see [`null_partitions_as_null`]). The statement's other
/// checks (headers, depth) are made before it runs, where the statement is read.
#[derive(Debug)]
struct ExternalTables {
    inner: Arc<dyn TableProviderFactory>,
}

#[async_trait]
impl TableProviderFactory for ExternalTables {
    async fn create(
        &self,
        state: &dyn datafusion::catalog::Session,
        cmd: &datafusion::logical_expr::CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let format = match cmd.file_type.to_ascii_lowercase().as_str() {
            "csv" => Some(DataFormat::Csv),
            "json" => Some(DataFormat::Json),
            _ => None,
        };
        let locations: Vec<PathBuf> = match format {
            Some(_) => cmd
                .locations
                .iter()
                .filter(|l| !l.contains("://") || is_file_url(l))
                .filter_map(|l| local_path(l))
                .collect(),
            None => Vec::new(),
        };
        let header = csv_headers(state, cmd)?;
        let dialect = match header {
            Some(dialect) => dialect,
            None => {
                CsvDialect::of_options(cmd.options.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                    .unwrap_or_default()
            }
        };
        let table = self.inner.create(state, cmd).await.map_err(|e| {
            // The reader's errors name no file: the files are read again to name it.
            let message = e.to_string();
            let csv = format == Some(DataFormat::Csv);
            let untyped = TextLayout {
                file_schema: Arc::new(datafusion::arrow::datatypes::Schema::empty()),
                csv_header: header.is_some(),
                csv_dialect: dialect,
            };
            if let Some(words) = text_read_failure(&message, &locations, Some(&untyped)) {
                return DataFusionError::Plan(words);
            }
            // One file too: a header naming a column twice, with values of two types.
            let files = local_dir(cmd).or_else(|| match locations.as_slice() {
                [one] if one.is_file() => Some(one.clone()),
                _ => None,
            });
            match (message.contains("Fail to merge schema field"), files) {
                (true, Some(dir)) if csv => DataFusionError::Plan(format!(
                    "'{}': {}",
                    quote(&dir.to_string_lossy(), 200),
                    differing_text_types(&dir, header.is_some(), dialect).unwrap_or_else(|| {
                        "the files of one table give a column two types (values of two \
                         kinds, or times of two units: whole seconds in one file, fractions \
                         in another); declare the columns' types, or read the directory as \
                         FROM 'path/', which reads times of two units at the finer unit"
                            .to_string()
                    })
                )),
                _ => e,
            }
        })?;
        // Types inferred from CSV or JSON files: integers a float column cannot hold are
        // refused, as for `FROM 'path'`.
        if let (Some(format), true) = (format, cmd.schema.fields().is_empty()) {
            let file_schema = datafusion::arrow::datatypes::Schema::new(
                table
                    .schema()
                    .fields()
                    .iter()
                    .filter(|f| !cmd.table_partition_cols.contains(f.name()))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            if let Some(found) =
                inexact_integers(&locations, format, &file_schema, header.is_some(), dialect)
            {
                return Err(DataFusionError::Plan(format!("cannot read {found}")));
            }
        }
        let text = match format {
            Some(_) if !locations.is_empty() => {
                let file_fields: Vec<_> = table
                    .schema()
                    .fields()
                    .iter()
                    .filter(|f| !cmd.table_partition_cols.contains(f.name()))
                    .cloned()
                    .collect();
                Some((
                    locations,
                    TextLayout {
                        file_schema: Arc::new(datafusion::arrow::datatypes::Schema::new(
                            file_fields,
                        )),
                        csv_header: header.is_some(),
                        csv_dialect: dialect,
                    },
                ))
            }
            _ => None,
        };
        let Some(dir) = local_dir(cmd) else {
            return local_files_table(table, None, &[], None, text);
        };
        let csv_check = header.map(|dialect| (dir.clone(), dialect));
        let null_partitions = data_files_with(&dir, None)
            .ok()
            .flatten()
            .is_some_and(|files| files.null_partitions);
        let any: &dyn std::any::Any = table.as_ref();
        let partition_keys: Vec<(String, DataType)> = match any.downcast_ref::<ListingTable>() {
            Some(listing) if null_partitions => listing.options().table_partition_cols.clone(),
            _ => Vec::new(),
        };
        // The reader parses a declared key type (`PARTITIONED BY (day INT)`) from each
        // directory name, and fails on the null names: those keys are read as strings by a
        // second table over the same files, then cast after the null names are taken out.
        let typed_keys: Vec<&str> = partition_keys
            .iter()
            .filter(|(_, data_type)| !is_string(data_type))
            .map(|(key, _)| key.as_str())
            .collect();
        let reader = if typed_keys.is_empty() {
            None
        } else {
            let declared = cmd.schema.inner();
            let as_strings = datafusion::arrow::datatypes::Schema::new_with_metadata(
                declared
                    .fields()
                    .iter()
                    .map(|field| match typed_keys.contains(&field.name().as_str()) {
                        true => Arc::new(field.as_ref().clone().with_data_type(DataType::Utf8)),
                        false => Arc::clone(field),
                    })
                    .collect::<Vec<_>>(),
                declared.metadata().clone(),
            );
            let mut strings_cmd = cmd.clone();
            strings_cmd.schema = Arc::new(DFSchema::try_from(as_strings)?);
            Some(self.inner.create(state, &strings_cmd).await?)
        };
        let keys: Vec<String> = partition_keys.into_iter().map(|(key, _)| key).collect();
        local_files_table(table, reader, &keys, csv_check, text)
    }
}

/// Whether values of `data_type` are strings, as partition directory names are read.
fn is_string(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => is_string(values),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, name: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"x").unwrap();
    }

    #[test]
    fn a_spark_output_directory_is_parquet() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "_SUCCESS",
            ".part-0.parquet.crc",
            "part-0.parquet",
            "notes.txt",
        ] {
            touch(dir.path(), name);
        }
        let files = data_files(dir.path()).unwrap().unwrap();
        assert_eq!(files.format, DataFormat::Parquet);
        assert_eq!(files.extension, ".parquet");
    }

    #[test]
    fn hive_partitions_are_looked_into_and_other_directories_not() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "day=1/hour=2/a.PQ");
        touch(dir.path(), "_temporary/0/b.PQ");
        touch(dir.path(), ".spark-staging/c.PQ");
        touch(dir.path(), "notes/README");
        let files = data_files(dir.path()).unwrap().unwrap();
        assert_eq!(
            (files.format, files.extension.as_str()),
            (DataFormat::Parquet, ".PQ")
        );
        assert!(!files.null_partitions);
        touch(dir.path(), "day=__HIVE_DEFAULT_PARTITION__/hour=2/b.PQ");
        assert!(data_files(dir.path()).unwrap().unwrap().null_partitions);
        let empty = tempfile::tempdir().unwrap();
        touch(empty.path(), "_SUCCESS");
        assert_eq!(data_files(empty.path()).unwrap(), None);
    }

    #[test]
    fn data_in_a_directory_the_reader_leaves_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), "2026-11-01/more/b.csv");
        let err = data_files(dir.path()).unwrap_err();
        assert!(
            err.contains("'2026-11-01' is a subdirectory whose name is not key=value"),
            "{err}"
        );
        assert!(err.contains("(such as '2026-11-01/more/b.csv')"), "{err}");
        // Spark writes a table as a directory named like a file.
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "out.parquet/part-0.parquet");
        let err = data_files(dir.path()).unwrap_err();
        assert!(err.contains("'out.parquet' is a subdirectory"), "{err}");
        // Deeper than can be looked through: refused, not passed over.
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        let deep: Vec<String> = (0..=LEFT_OUT_DEPTH + 1).map(|n| n.to_string()).collect();
        touch(dir.path(), &format!("{}/notes.txt", deep.join("/")));
        let err = data_files(dir.path()).unwrap_err();
        assert!(err.contains("'0' is a subdirectory"), "{err}");
        assert!(err.contains("too large to look through"), "{err}");
        // A writer's own directory, even named like a file, is not looked into.
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), "_out.parquet/part-0.parquet");
        touch(dir.path(), "notes/README");
        assert!(data_files(dir.path()).unwrap().is_some());
    }

    #[cfg(unix)]
    #[test]
    fn links_the_reader_does_not_read_are_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        // A link to nothing, of a name that is not data.
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("notes.txt")).unwrap();
        assert!(data_files(dir.path()).unwrap().is_some());
        // A link back to the table is the listing's to refuse (as a loop), not data left out.
        std::os::unix::fs::symlink(".", dir.path().join("again")).unwrap();
        assert!(data_files(dir.path()).unwrap().is_some());
        // A link in a plain subdirectory to a partition of the table leaves nothing out,
        // whether the subdirectory's name sorts before the partition's or after.
        for plain in ["a_links", "z_links"] {
            let dir = tempfile::tempdir().unwrap();
            touch(dir.path(), "k=1/a.parquet");
            std::fs::create_dir(dir.path().join(plain)).unwrap();
            std::os::unix::fs::symlink("../k=1", dir.path().join(plain).join("k1")).unwrap();
            assert!(data_files(dir.path()).unwrap().is_some(), "{plain}");
            // A link to data of no partition is data left out.
            touch(dir.path(), "_elsewhere/b.parquet");
            std::os::unix::fs::symlink("../_elsewhere", dir.path().join(plain).join("more"))
                .unwrap();
            let err = data_files(dir.path()).unwrap_err();
            assert!(
                err.contains(&format!("'{plain}' is a subdirectory")),
                "{err}"
            );
        }
    }

    #[test]
    fn names_with_control_characters_are_refused_in_our_words() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), "b\n\u{1b}[31m.parquet");
        let err = data_files(dir.path()).unwrap_err();
        assert!(
            err.contains("'b\\u{a}\\u{1b}[31m.parquet' has a control character in its name"),
            "{err}"
        );
    }

    #[test]
    fn two_data_extensions_are_refused_naming_one_file_of_each() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), "day=2/b\u{202e}.csv");
        let err = data_files(dir.path()).unwrap_err();
        assert!(err.contains("`.parquet` (such as 'a.parquet')"), "{err}");
        assert!(
            err.contains("`.csv` (such as 'day=2/b\\u{202e}.csv')"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), "b.pq");
        assert!(data_files(dir.path()).is_err());
    }

    #[test]
    fn csv_files_of_one_table_share_one_header() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // The same header written differently (quotes, CRLF), and an empty file: one table.
        write("1.csv", "a,b\n1,2\n");
        write("2.csv", "\"a\",b\r\n3,4\r\n");
        write("3.csv", "");
        write("day=1/4.csv", "a,b\n");
        assert_eq!(
            data_files(dir.path()).unwrap().unwrap().format,
            DataFormat::Csv
        );
        // Reordered columns would be read by position: refused, naming both files and
        // the first column that differs.
        write("day=2/5.csv", "b,a\n5,6\n");
        assert_eq!(
            data_files(dir.path()).unwrap_err(),
            "'day=2/5.csv' has `b` as column 1 where '1.csv' has `a` as column 1; the CSV \
             files of one table are read by column position, so they must share one header: \
             write them with the same columns in the same order"
        );
        // Headerless files (an external table's option) are not compared.
        assert!(data_files_with(dir.path(), None).is_ok());
        write("day=2/5.csv", "a,b,\"c\x1b,\u{202e}\"\n");
        assert!(data_files(dir.path()).unwrap_err().contains(
            "has `c\\u{1b},\\u{202e}` as column 3 where '1.csv' has no column 3 (2 columns)"
        ));
        std::fs::write(dir.path().join("day=2/5.csv"), b"a,\xff\n").unwrap();
        assert!(data_files(dir.path())
            .unwrap_err()
            .contains("has `\\xff` as column 2 where '1.csv' has `b` as column 2"));
        // A header past the cap is refused rather than read to the end; a lone file is
        // not read at all.
        write(
            "day=2/5.csv",
            &"a".repeat(MAX_CSV_HEADER_BYTES as usize + 1),
        );
        assert!(data_files(dir.path())
            .unwrap_err()
            .contains("the header of 'day=2/5.csv' is longer than 16 MiB"));
        assert!(data_files(&dir.path().join("day=2")).is_ok());
    }

    #[test]
    fn external_csv_options_are_read_as_the_reader_reads_them() {
        let headers = |options: &[(&str, &str)], default| {
            csv_headers_of_options("CSV", options.iter().copied(), default)
        };
        // Headers unless every `has_header` says false.
        assert_eq!(headers(&[], true).unwrap(), Some(CsvDialect::default()));
        assert_eq!(headers(&[], false).unwrap(), None);
        assert_eq!(
            headers(&[("format.has_header", "false")], true).unwrap(),
            None
        );
        assert!(headers(
            &[("format.has_header", "false"), ("HAS_HEADER", "true")],
            false
        )
        .unwrap()
        .is_some());
        let dialect = headers(
            &[
                ("format.delimiter", ";"),
                ("Format.Comment", "#"),
                ("format.escape", "\\"),
            ],
            true,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (
                dialect.delimiter,
                dialect.comment,
                dialect.escape,
                dialect.quote
            ),
            (b';', Some(b'#'), Some(b'\\'), b'"')
        );
        assert!(headers(&[("format.delimiter", ";;")], true).is_err());
        assert_eq!(
            csv_headers_of_options("parquet", [("format.delimiter", ";")], true).unwrap(),
            None
        );
    }

    #[test]
    fn partitions_deeper_than_the_walk_goes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let nine: String = (1..=9).map(|level| format!("k{level}=1/")).collect();
        touch(dir.path(), &format!("{nine}a.parquet"));
        let err = data_files(dir.path()).unwrap_err();
        assert!(
            err.contains("nest more than 8 levels deep ('k1=1/"),
            "{err}"
        );
        let eight: String = (1..=8).map(|level| format!("k{level}=/")).collect();
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), &format!("{eight}a.parquet"));
        // `key=`: DataFusion's name for a null key.
        assert!(data_files(dir.path()).unwrap().unwrap().null_partitions);
    }

    #[test]
    fn hidden_data_files_count_as_the_reader_reads_them_and_empty_parquet_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        touch(dir.path(), ".b.csv");
        assert!(data_files(dir.path()).unwrap_err().contains("'.b.csv'"));
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        std::fs::write(dir.path().join("b.parquet"), b"").unwrap();
        let err = data_files(dir.path()).unwrap_err();
        assert!(
            err.contains("empty (0-byte) Parquet file, 'b.parquet'"),
            "{err}"
        );
    }

    #[test]
    fn a_long_path_is_cut_at_the_front_keeping_the_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let deep = format!(
            "k={}/l={}/m={}",
            "a".repeat(100),
            "b".repeat(100),
            "c".repeat(100)
        );
        touch(dir.path(), "a.parquet");
        touch(dir.path(), &format!("{deep}/the_culprit.csv"));
        let err = data_files(dir.path()).unwrap_err();
        assert!(err.contains("the_culprit.csv')"), "{err}");
        assert!(err.contains("(such as '…"), "{err}");
    }

    #[test]
    fn a_file_named_only_by_its_extension_is_one() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.parquet");
        std::fs::write(dir.path().join(".parquet"), b"").unwrap();
        assert!(data_files(dir.path()).unwrap_err().contains("'.parquet'"));
    }

    #[test]
    fn a_file_or_an_output_is_known_by_its_extension() {
        let files = data_files(Path::new("/no/such/out.ndjson"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (files.format, files.extension.as_str()),
            (DataFormat::Json, ".ndjson")
        );
        assert_eq!(data_files(Path::new("/no/such/out.txt")).unwrap(), None);
        assert_eq!(data_files(Path::new("/no/such/out")).unwrap(), None);
    }
}
