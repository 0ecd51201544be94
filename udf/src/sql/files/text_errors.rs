//! CSV and JSON read errors with the file and line named. DataFusion's readers see byte
//! ranges of files, not files: their errors name neither the file nor (for a range past
//! the start) the line in it. When a read fails with such an error, the inputs' CSV and
//! JSON files are read again here, one by one, until the first that fails, so the user
//! is told which file and which line.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrowfeat_common::quote;

use datafusion::arrow::datatypes::{DataType, Fields, Schema, TimeUnit};

use super::{CsvDialect, DataFormat, MAX_DEPTH};

/// Most files looked at for the failing one.
const PROBED_FILES: usize = 10_000;

/// Whether `message` (an error's text) is a CSV or JSON reader's error.
pub fn is_text_read_error(message: &str) -> bool {
    [
        "Csv error:",
        "Error while parsing value",
        "Error parsing column",
        "whilst decoding field",
        "Json error:",
        "Not valid JSON",
        "Encountered unequal lengths",
        "would overflow 64-bit signed nanoseconds",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// The JSON reader's type inference errors (which print the values they met as Rust
/// structures) in words, for when no single line is found at fault: a field is an object
/// in one place and a list or a scalar in another, at a depth the line check does not
/// follow (a list's items against a scalar, or across files).
fn json_inference_words(message: &str) -> Option<&'static str> {
    if message.contains("Expected JSON record to be an object") {
        return Some("a line holds a JSON value that is not an object (one object per line)");
    }
    [
        "Incompatible type found during schema inference",
        "Expected scalar or scalar array JSON type",
        "Expected scalar value for scalar array",
        "Got non array element in nested array",
        "Expected struct value for struct array",
        "Expected array json type",
        "Expected object json type",
    ]
    .iter()
    .any(|m| message.contains(m))
    .then_some(
        "the JSON values of one field are objects in one place and lists, numbers, strings \
         or booleans in another (at some depth), which the reader cannot read as one type",
    )
}

/// How a table's reader parses its CSV or JSON files: the columns the files hold (the
/// table's, less partition keys) with their declared or inferred types, and for CSV
/// whether files start with a header and the dialect. No columns (before the reader has
/// inferred them): the values are not read as types.
#[derive(Debug, Clone)]
pub struct TextLayout {
    pub file_schema: datafusion::arrow::datatypes::SchemaRef,
    pub csv_header: bool,
    pub csv_dialect: CsvDialect,
}

/// The first CSV or JSON file among `inputs` (files, or directories and their `key=value`
/// subdirectories, by path) that does not parse, as `'file' line N: why`, and with
/// `layout`, the first value that does not parse as its column's type; `None` when they
/// all parse.
fn first_unreadable_text_file(inputs: &[PathBuf], layout: Option<&TextLayout>) -> Option<String> {
    let typed = layout.filter(|l| !l.file_schema.fields().is_empty());
    text_files(inputs)
        .into_iter()
        .take(PROBED_FILES)
        .find_map(|file| {
            let why = match DataFormat::of_file(&file)? {
                DataFormat::Csv => csv_error(
                    &file,
                    layout.is_none_or(|l| l.csv_header),
                    layout.map_or_else(CsvDialect::default, |l| l.csv_dialect),
                    typed.map(|l| l.file_schema.fields().len()),
                )
                .or_else(|| typed.and_then(|l| csv_typed_error(&file, l))),
                // With the columns known, lines are decoded as the reader's decoder does,
                // which takes what a strict JSON parse does not (two objects on a line, a
                // control character in a string): its error decides the line, told in the
                // strict parse's words where a syntax fault is found on the same line. A
                // file the decoder reads whole is not at fault.
                DataFormat::Json => match typed {
                    None => json_error(&file),
                    Some(layout) => {
                        let decoded = json_typed_error(&file, &layout.file_schema)?;
                        match decoded.of_value {
                            true => Some(decoded.message),
                            false => Some(
                                json_error(&file)
                                    .filter(|strict| line_of(strict) == line_of(&decoded.message))
                                    .unwrap_or(decoded.message),
                            ),
                        }
                    }
                },
                DataFormat::Parquet => None,
            }?;
            let file = quote(&file.to_string_lossy(), 200);
            Some(
                match why.starts_with("line ") || why.starts_with("record ") {
                    true => format!("'{file}' {why}"),
                    false => format!("'{file}': {why}"),
                },
            )
        })
}

/// The first value of the CSV file `path` that the reader cannot parse as its column's
/// type in `layout`, as `line N: ...`.
fn csv_typed_error(path: &Path, layout: &TextLayout) -> Option<String> {
    let dialect = layout.csv_dialect;
    let reader = datafusion::arrow::csv::ReaderBuilder::new(Arc::clone(&layout.file_schema))
        .with_format(dialect.arrow_format(layout.csv_header))
        .build(BufReader::new(std::fs::File::open(path).ok()?))
        .ok()?;
    let error = reader
        .into_iter()
        .find_map(|batch| batch.err())?
        .to_string();
    // "Error while parsing value '{v}' as type '{t}' for column {i} at line {n}. Row
    // data: ..." where n counts records from 0, the header included.
    let parsed = (|| {
        let rest = error.split_once("Error while parsing value '")?.1;
        let (value, rest) = rest.split_once("' as type '")?;
        let (data_type, rest) = rest.split_once("' for column ")?;
        let (column, rest) = rest.split_once(" at line ")?;
        let record: usize = rest.split_once('.')?.0.parse().ok()?;
        let column: usize = column.parse().ok()?;
        Some((value, data_type, column, record))
    })();
    let Some((value, data_type, column, record)) = parsed else {
        return csv_time_error(path, layout, &error)
            .or_else(|| Some("a value does not parse as its column's type".to_string()));
    };
    let name = column_name(layout, column);
    let line = record_line(path, dialect, record);
    Some(format!(
        "{line}: expected a value of type {data_type} in column `{name}`, found '{}'",
        quote(value, 100)
    ))
}

/// The name of the column at `column` (from 0), or its number (from 1).
fn column_name(layout: &TextLayout, column: usize) -> String {
    layout
        .file_schema
        .fields()
        .get(column)
        .map_or_else(|| format!("{}", column + 1), |f| quote(f.name(), 100))
}

/// `line N` of the record `record` (from 0, the header included), or `record N`.
fn record_line(path: &Path, dialect: CsvDialect, record: usize) -> String {
    csv_record_line(path, dialect, record).map_or_else(
        || format!("record {}", record + 1),
        |line| format!("line {line}"),
    )
}

/// A time the CSV reader could not read at its column's unit and zone ("Error parsing
/// column {i} at line {n}: {why}", n from 0 with the header), in the user's words.
fn csv_time_error(path: &Path, layout: &TextLayout, error: &str) -> Option<String> {
    let rest = error.split_once("Error parsing column ")?.1;
    let (column, rest) = rest.split_once(" at line ")?;
    let (record, why) = rest.split_once(": ")?;
    let column: usize = column.parse().ok()?;
    let record: usize = record.parse().ok()?;
    let field = layout.file_schema.fields().get(column)?;
    let DataType::Timestamp(unit, zone) = field.data_type() else {
        return None;
    };
    let name = quote(field.name(), 100);
    let line = record_line(path, layout.csv_dialect, record);
    // The value is quoted in "from '{value}'"; an overflow names it re-spelled instead.
    let value = why
        .split_once("from '")
        .and_then(|(_, v)| v.rsplit_once("':"))
        .map(|(v, _)| v);
    let expected = time_expected(&name, *unit, zone.as_deref(), value, why);
    Some(format!("{line}: expected {expected}"))
}

/// What a time column `name` of `unit` in `zone` expected, for the reader's error `why`
/// on the text `value`: in words for a local time a daylight saving change skips or
/// repeats, and for a time nanoseconds cannot hold.
fn time_expected(
    name: &str,
    unit: TimeUnit,
    zone: Option<&str>,
    value: Option<&str>,
    why: &str,
) -> String {
    let found = value.map_or_else(String::new, |v| format!(", found '{}'", quote(v, 100)));
    if why.contains("error computing timezone offset") {
        let zone = zone.unwrap_or("UTC");
        format!(
            "a time in column `{name}`{found}: a local time that {} skips or repeats (a daylight saving change); write it with its offset (such as -04:00)",
            quote(zone, 100)
        )
    } else if why.contains("would overflow 64-bit signed nanoseconds") {
        let at = why
            .rsplit_once(" would overflow")
            .map_or("", |(v, _)| v.rsplit(": ").next().unwrap_or(v));
        format!(
            "a time from 1677-09-21 to 2262-04-11 in column `{name}`, which is read in nanoseconds (the unit the schema declares, or that its values' digits need), found {}",
            quote(at, 100)
        )
    } else {
        let unit = match unit {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        };
        format!("a time (timestamp[{unit}]) in column `{name}`{found}")
    }
}

/// N of a message `line N: ...`.
fn line_of(message: &str) -> Option<u64> {
    message
        .strip_prefix("line ")?
        .split_once(':')?
        .0
        .parse()
        .ok()
}

/// The line the record `record` (from 0) of the CSV file `path` starts on.
fn csv_record_line(path: &Path, dialect: CsvDialect, record: usize) -> Option<u64> {
    let mut reader = dialect
        .records()
        .from_reader(std::fs::File::open(path).ok()?);
    let mut found = csv::ByteRecord::new();
    for _ in 0..=record {
        if !reader.read_byte_record(&mut found).ok()? {
            return None;
        }
    }
    csv_line_at(path, found.position()?.byte(), dialect)
}

/// The line (from 1; `\n`, `\r\n` and a lone `\r` each end one) on which the CSV record the
/// reader places at `byte` starts: the reader's own count is off after `\r\n`, and its
/// place is before the blank and comment lines it skips to reach the record.
fn csv_line_at(path: &Path, byte: u64, dialect: CsvDialect) -> Option<u64> {
    use std::io::Read;
    let mut bytes = BufReader::new(std::fs::File::open(path).ok()?)
        .bytes()
        .map_while(|b| b.ok())
        .peekable();
    let mut line = 1;
    let mut after_cr = false;
    let mut count = |b: u8, line: &mut u64| {
        *line += u64::from(b == b'\r' || (b == b'\n' && !after_cr));
        after_cr = b == b'\r';
    };
    for _ in 0..byte {
        count(bytes.next()?, &mut line);
    }
    while let Some(&b) = bytes.peek() {
        if b == b'\r' || b == b'\n' {
            count(b, &mut line);
            bytes.next();
        } else if dialect.comment == Some(b) {
            while let Some(b) = bytes.next() {
                count(b, &mut line);
                if b == b'\n' || (b == b'\r' && bytes.peek() != Some(&b'\n')) {
                    break;
                }
            }
        } else {
            break;
        }
    }
    Some(line)
}

/// The first line of the newline-delimited JSON file `path` whose values the reader
/// cannot read as the types of `schema`, as `line N: ...`.
fn json_typed_error(
    path: &Path,
    schema: &datafusion::arrow::datatypes::SchemaRef,
) -> Option<JsonFault> {
    let mut decoder = datafusion::arrow::json::ReaderBuilder::new(Arc::clone(schema))
        .build_decoder()
        .ok()?;
    let file = std::fs::File::open(path).ok()?;
    // The decoder, as the reader's, takes an object over several lines: records are
    // decoded when none is left open, and a fault is placed on the line its record began.
    let mut record = Vec::new();
    let mut first_line = 1;
    let lines = BufReader::new(file).split(b'\n').map(Some);
    // At the end, a record left open is flushed: the file ends inside it.
    for (number, line) in lines.chain(std::iter::once(None)).enumerate() {
        let failed = match line {
            Some(line) => {
                let mut line = line.ok()?;
                if !decoder.has_partial_record() {
                    record.clear();
                    first_line = number + 1;
                }
                line.push(b'\n');
                record.extend_from_slice(&line);
                decode_all(&mut decoder, &line)
                    .and_then(|()| match decoder.has_partial_record() {
                        true => Ok(()),
                        false => decoder.flush().map(|_| ()),
                    })
                    .err()
            }
            None => decoder.flush().err(),
        };
        if let Some(e) = failed {
            let number = first_line - 1;
            let why = e.to_string();
            let why = why.trim_start_matches("Json error: ");
            // An overflow is the one error the reader does not name the field of.
            let named = match why.contains("would overflow 64-bit signed nanoseconds") {
                true => overflowing_field(schema, &record)
                    .map(|name| format!("whilst decoding field '{name}': {why}")),
                false => None,
            };
            let why = named.as_deref().unwrap_or(why);
            if let Some(expected) = json_time_error(schema, why) {
                return Some(JsonFault::value(format!(
                    "line {}: expected {expected}",
                    number + 1
                )));
            }
            // "whilst decoding field 'f': expected string got 12": the kind the other
            // lines gave the field.
            let kind = decoding_field(schema, why).and_then(|(field, rest)| {
                Some((
                    field.name(),
                    rest.strip_prefix("expected ")?.split_once(" got ")?,
                ))
            });
            if let Some((name, (expected, found))) = kind {
                return Some(JsonFault::value(format!(
                    "line {}: expected {} in field `{}` (the type read for it from all lines, which hold values of two kinds), found {}",
                    number + 1,
                    match expected {
                        "string" => "a string".to_string(),
                        "{" => "an object".to_string(),
                        "[" => "a list".to_string(),
                        other => format!("a {}", quote(other, 40)),
                    },
                    quote(name, 100),
                    quote(found, 100)
                )));
            }
            let message = format!("line {}: {}", number + 1, quote(why, 300));
            return Some(match decoding_field(schema, why) {
                Some(_) => JsonFault::value(message),
                None => JsonFault::syntax(message),
            });
        }
    }
    None
}

/// Why a JSON file does not decode, as `line N: ...`, and whether a value is at fault
/// (its type), not the JSON's syntax.
struct JsonFault {
    message: String,
    of_value: bool,
}

impl JsonFault {
    fn value(message: String) -> Self {
        Self {
            message,
            of_value: true,
        }
    }

    fn syntax(message: String) -> Self {
        Self {
            message,
            of_value: false,
        }
    }
}

/// Feeds all of `bytes` to `decoder`, flushing whenever its batch is full.
fn decode_all(
    decoder: &mut datafusion::arrow::json::reader::Decoder,
    mut bytes: &[u8],
) -> Result<(), datafusion::arrow::error::ArrowError> {
    while !bytes.is_empty() {
        let read = decoder.decode(bytes)?;
        bytes = &bytes[read..];
        if !bytes.is_empty() {
            decoder.flush()?;
        }
    }
    Ok(())
}

/// The field of `schema` a JSON reader's "whilst decoding field '{name}': {rest}" names,
/// and the rest. Matched against the schema's names (the longest), as a name may itself
/// hold `': `.
fn decoding_field<'a>(
    schema: &'a Schema,
    error: &'a str,
) -> Option<(&'a datafusion::arrow::datatypes::Field, &'a str)> {
    let named = error.strip_prefix("whilst decoding field '")?;
    schema
        .fields()
        .iter()
        .filter_map(|field| {
            let rest = named
                .strip_prefix(field.name().as_str())?
                .strip_prefix("': ")?;
            Some((field.as_ref(), rest))
        })
        .max_by_key(|(field, _)| field.name().len())
}

/// The nanosecond time field of `schema` whose value on the JSON `line` overflows.
fn overflowing_field(schema: &Schema, line: &[u8]) -> Option<String> {
    schema
        .fields()
        .iter()
        .filter(|f| matches!(f.data_type(), DataType::Timestamp(TimeUnit::Nanosecond, _)))
        .find(|field| {
            let alone = Arc::new(Schema::new(vec![field.as_ref().clone()]));
            datafusion::arrow::json::ReaderBuilder::new(alone)
                .build_decoder()
                .is_ok_and(|mut decoder| {
                    decoder
                        .decode(line)
                        .and_then(|_| decoder.decode(b"\n"))
                        .and_then(|_| decoder.flush())
                        .is_err()
                })
        })
        .map(|field| field.name().clone())
}

/// The CSV and JSON files of `dir` and its `key=value` subdirectories, `depth` levels
/// down, links followed as the reader follows them (each directory once).
fn text_files_below(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let mut visited = HashSet::new();
    text_files_within(dir, depth, files, &mut visited);
}

fn text_files_within(
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    visited: &mut HashSet<PathBuf>,
) {
    let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !visited.insert(resolved) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let partition = name.to_string_lossy().contains('=');
        let format = DataFormat::of_file(&path);
        if !partition && !matches!(format, Some(DataFormat::Csv | DataFormat::Json)) {
            continue;
        }
        let Ok(metadata) = std::fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() && partition && depth > 0 {
            text_files_within(&path, depth - 1, files, visited);
        } else if metadata.is_file() && matches!(format, Some(DataFormat::Csv | DataFormat::Json)) {
            files.push(path);
        }
    }
}

/// Why the CSV file `path` does not parse as the reader parses it (with `header`, a
/// header of distinct names unless `declared` columns are as many, then rows of as many
/// fields, UTF-8), as `line N: ...`.
fn csv_error(
    path: &Path,
    header: bool,
    dialect: CsvDialect,
    declared: Option<usize>,
) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = dialect.records().from_reader(file);
    let mut record = csv::ByteRecord::new();
    let mut fields = None;
    let line_at = |byte: u64| csv_line_at(path, byte, dialect).unwrap_or(0);
    loop {
        let before = reader.position().byte();
        match reader.read_byte_record(&mut record) {
            Ok(false) => return None,
            Ok(true) => {}
            Err(e) => return Some(format!("line {}: {}", line_at(before), e.kind_text())),
        }
        // Counted only for the record at fault: counting reads the file from its start.
        let line = || line_at(record.position().map_or(before, |p| p.byte()));
        // Columns declared as many as the header's are read by position, names aside.
        if header && fields.is_none() && declared != Some(record.len()) {
            if let Some(duplicate) = duplicate_name(&record) {
                return Some(format!("line {}: {duplicate}", line()));
            }
        }
        let expected = *fields.get_or_insert(declared.unwrap_or(record.len()));
        let short = dialect.truncated_rows && record.len() < expected;
        if record.len() != expected && !short {
            return Some(format!(
                "line {}: expected {expected} fields {}, found {}",
                line(),
                match declared {
                    Some(_) => "(the table's columns)",
                    None => "as in the header",
                },
                record.len()
            ));
        }
        if let Some(at) = record.iter().position(|f| std::str::from_utf8(f).is_err()) {
            return Some(format!(
                "line {}: field {} is not UTF-8 text",
                line(),
                at + 1
            ));
        }
    }
}

/// A name the header of the CSV file `path` gives two columns, as `line N: ...`.
fn csv_duplicate_header(path: &Path, dialect: CsvDialect) -> Option<String> {
    let mut reader = dialect
        .records()
        .from_reader(std::fs::File::open(path).ok()?);
    let mut header = csv::ByteRecord::new();
    reader.read_byte_record(&mut header).ok()?;
    let why = duplicate_name(&header)?;
    let line = csv_line_at(path, header.position()?.byte(), dialect)?;
    Some(format!("line {line}: {why}"))
}

/// A name the CSV header `record` gives two columns: the reader, inferring the columns
/// from the header, keeps one column of that name, and every row then has a field too many.
fn duplicate_name(record: &csv::ByteRecord) -> Option<String> {
    let mut seen = std::collections::HashMap::new();
    record.iter().enumerate().find_map(|(at, name)| {
        let first = *seen.entry(name).or_insert(at);
        (first != at).then(|| {
            format!(
                "the header names two columns `{}` (fields {} and {}); each column needs a \
                 name of its own",
                quote(&String::from_utf8_lossy(name), 100),
                first + 1,
                at + 1
            )
        })
    })
}

trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for csv::Error {
    fn kind_text(&self) -> String {
        match self.kind() {
            csv::ErrorKind::Io(e) => format!("cannot be read ({})", e.kind()),
            csv::ErrorKind::Utf8 { .. } => "a field is not UTF-8 text".to_string(),
            _ => "not CSV as the reader reads it".to_string(),
        }
    }
}

/// Why the newline-delimited JSON file `path` does not parse, as `line N: ...`: each
/// non-blank line must hold one JSON object, and a field (at any depth, list items
/// included) must not be an object on one line and a number, string, boolean or list on
/// another, as the reader's type inference cannot merge the two. Nothing of a value is
/// shown: only where it is and what kind of value it is.
fn json_error(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut kinds = FieldKinds::default();
    for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
        let at = number + 1;
        let Ok(line) = line else {
            return Some(format!("line {at}: cannot be read"));
        };
        if line.starts_with(b"\xEF\xBB\xBF") {
            return Some(match number {
                0 => "line 1: the file starts with a UTF-8 byte order mark, which \
                      newline-delimited JSON does not take: save the file without it"
                    .to_string(),
                _ => format!(
                    "line {at}: a UTF-8 byte order mark starts the line (were files joined \
                     together?), which newline-delimited JSON does not take: remove it"
                ),
            });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value = match serde_json::from_slice::<serde_json::Value>(&line) {
            Ok(value) => value,
            Err(e) => {
                let text = e.to_string();
                let why = text
                    .rsplit_once(" at line ")
                    .map_or(text.as_str(), |(why, _)| why);
                return Some(format!(
                    "line {at}: not valid JSON: {} at column {}",
                    quote(why, 100),
                    e.column()
                ));
            }
        };
        let serde_json::Value::Object(record) = &value else {
            return Some(format!(
                "line {at}: expected a JSON object (one per line), found {}",
                json_kind(&value)
            ));
        };
        if let Some(conflict) = kinds.add_object(&mut Vec::new(), record, at) {
            return Some(conflict);
        }
    }
    None
}

/// A JSON value's kind in words.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Where each field of a JSON file (by its path of names, a list's items as a step of
/// their own) was first an object, and first some other kind (a list included): the two
/// do not merge.
#[derive(Default)]
struct FieldKinds {
    seen: std::collections::HashMap<Vec<FieldStep>, FieldSeen>,
}

/// A step down a JSON value: into an object's field, or into a list's items.
#[derive(Clone, PartialEq, Eq, Hash)]
enum FieldStep {
    Field(String),
    Items,
}

/// The line where a field was first an object, and the kind and line where it was first
/// something else.
#[derive(Default)]
struct FieldSeen {
    object: Option<usize>,
    other: Option<(&'static str, usize)>,
}

impl FieldKinds {
    fn add_object(
        &mut self,
        path: &mut Vec<FieldStep>,
        record: &serde_json::Map<String, serde_json::Value>,
        line: usize,
    ) -> Option<String> {
        record.iter().find_map(|(name, value)| {
            path.push(FieldStep::Field(name.clone()));
            let conflict = self.add(path, value, line);
            path.pop();
            conflict
        })
    }

    fn add(
        &mut self,
        path: &mut Vec<FieldStep>,
        value: &serde_json::Value,
        line: usize,
    ) -> Option<String> {
        let FieldSeen {
            object: object_at,
            other: other_at,
        } = self.seen.entry(path.clone()).or_default();
        let conflict = match value {
            serde_json::Value::Null => None,
            serde_json::Value::Object(_) => {
                object_at.get_or_insert(line);
                other_at.map(|(kind, other)| ("an object", line, kind, other))
            }
            other => {
                let (kind, _) = other_at.get_or_insert((json_kind(other), line));
                object_at.map(|object| (*kind, line, "an object", object))
            }
        };
        if let Some((here, line, there, other)) = conflict {
            let (first, first_kind, second, second_kind) = match other <= line {
                true => (other, there, line, here),
                false => (line, here, other, there),
            };
            let field = quote(&field_path(path), 100);
            let rule = "the reader needs a field to be always an object or never one";
            return Some(match first == second {
                true => format!(
                    "line {second}: field `{field}` is both {first_kind} and {second_kind}; {rule}"
                ),
                false => format!(
                    "line {second}: field `{field}` is {second_kind} here but {first_kind} on \
                     line {first}; {rule}"
                ),
            });
        }
        match value {
            serde_json::Value::Object(fields) => self.add_object(path, fields, line),
            serde_json::Value::Array(items) => {
                path.push(FieldStep::Items);
                let conflict = items.iter().find_map(|item| self.add(path, item, line));
                path.pop();
                conflict
            }
            _ => None,
        }
    }
}

/// A field's path in messages: names joined by `.`, a list's items as `[]`, a name that
/// holds either (or is empty) in JSON quotes.
fn field_path(path: &[FieldStep]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            FieldStep::Items => text.push_str("[]"),
            FieldStep::Field(name) => {
                if !text.is_empty() {
                    text.push('.');
                }
                let plain = !name.is_empty() && !name.contains(['.', '[', ']', '"']);
                match plain {
                    true => text.push_str(name),
                    false => text.push_str(&serde_json::Value::from(name.as_str()).to_string()),
                }
            }
        }
    }
    text
}

/// The files of `inputs` (files, or directories and their `key=value` subdirectories, by
/// path) of `format`.
pub(super) fn files_of(inputs: &[PathBuf], format: DataFormat) -> Vec<PathBuf> {
    let mut files = text_files(inputs);
    files.retain(|f| DataFormat::of_file(f) == Some(format));
    files
}

/// The CSV and JSON files of `inputs`: files as they are, directories (and their
/// `key=value` subdirectories) by path.
fn text_files(inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut below = Vec::new();
            text_files_below(input, MAX_DEPTH, &mut below);
            below.sort();
            files.extend(below);
        } else if input.is_file() {
            files.push(input.clone());
        }
    }
    files
}

/// The names of the fields of `schema`, at any depth, that hold floats (a list of floats
/// under its own name).
fn float_field_names(fields: &Fields, names: &mut Vec<String>) {
    for field in fields {
        let mut data_type = field.data_type();
        while let DataType::List(item)
        | DataType::LargeList(item)
        | DataType::FixedSizeList(item, _) = data_type
        {
            data_type = item.data_type();
        }
        match data_type {
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                names.push(field.name().clone())
            }
            DataType::Struct(children) => float_field_names(children, names),
            _ => {}
        }
    }
}

/// Whether the integer literal `text` (an optional sign, then digits) is a value Float64
/// holds exactly: 9007199254740993 is not (it reads as ...992, so two keys become one).
fn exact_as_float(text: &str) -> bool {
    let digits = text.trim_start_matches(['-', '+']).trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => format!("{:.0}", value.abs()) == digits,
        _ => false,
    }
}

/// Why the CSV or JSON data at `inputs`, read with the inferred `schema`, would lose
/// digits: an integer in a column read as floats (because another row of it holds a
/// fraction, or an integer beyond Int64) that Float64 cannot hold exactly, as `'file' line
/// N: ...`. Such integers are usually keys, and two of them would become one value. CSV
/// files are parsed with `csv_header` and `dialect`, their fields by position.
pub fn inexact_integers(
    inputs: &[PathBuf],
    format: DataFormat,
    schema: &Schema,
    csv_header: bool,
    dialect: CsvDialect,
) -> Option<String> {
    let mut floats = Vec::new();
    float_field_names(schema.fields(), &mut floats);
    if floats.is_empty() {
        return None;
    }
    // The reader reads a CSV file's fields by position, whatever its header says.
    let csv_floats: Vec<(usize, String)> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.data_type().is_floating())
        .map(|(at, f)| (at, f.name().clone()))
        .collect();
    files_of(inputs, format).into_iter().find_map(|file| {
        let (line, column, number) = match format {
            DataFormat::Json => json_inexact_integer(&file, &floats)?,
            DataFormat::Csv => csv_inexact_integer(&file, &csv_floats, csv_header, dialect)?,
            DataFormat::Parquet => return None,
        };
        Some(format!(
            "'{}' line {line}: column `{}` is read as floats (other rows hold fractions or \
             larger numbers), and the integer {} in it has more digits than a float keeps \
             (it would read as {}; two keys could become one); write the column as strings, \
             or declare its type",
            quote(&file.to_string_lossy(), 200),
            quote(&column, 100),
            quote(&number, 60),
            number
                .parse::<f64>()
                .map_or_else(|_| "another number".to_string(), |v| format!("{v:.0}"))
        ))
    })
}

/// The first integer in a float column (by position, and its name) of the CSV file `path`
/// that Float64 cannot hold exactly: line, column and text.
fn csv_inexact_integer(
    path: &Path,
    columns: &[(usize, String)],
    header: bool,
    dialect: CsvDialect,
) -> Option<(u64, String, String)> {
    if columns.is_empty() {
        return None;
    }
    let mut reader = dialect
        .records()
        .from_reader(std::fs::File::open(path).ok()?);
    let mut record = csv::ByteRecord::new();
    if header && !reader.read_byte_record(&mut record).ok()? {
        return None;
    }
    while reader.read_byte_record(&mut record).ok()? {
        for (i, name) in columns {
            let Some(value) = record.get(*i) else {
                continue;
            };
            let value = value.trim_ascii();
            let integer = !value.is_empty()
                && value
                    .iter()
                    .enumerate()
                    .all(|(at, c)| c.is_ascii_digit() || (at == 0 && matches!(c, b'-' | b'+')))
                && value.iter().any(u8::is_ascii_digit);
            if integer {
                let text = String::from_utf8_lossy(value);
                if !exact_as_float(&text) {
                    let line = csv_line_at(path, record.position()?.byte(), dialect)?;
                    return Some((line, name.clone(), text.into_owned()));
                }
            }
        }
    }
    None
}

/// A time the JSON reader could not read at its column's unit and zone ("whilst decoding
/// field '{name}': failed to parse \"{value}\" as {type}: {why}"), in the user's words.
fn json_time_error(schema: &Schema, error: &str) -> Option<String> {
    let (field, why) = decoding_field(schema, error)?;
    let name = field.name();
    let DataType::Timestamp(unit, zone) = field.data_type() else {
        return None;
    };
    let value = why
        .strip_prefix("failed to parse \"")
        .and_then(|v| v.split_once("\" as "))
        .map(|(v, _)| v);
    Some(time_expected(
        &quote(name, 100),
        *unit,
        zone.as_deref(),
        value,
        why,
    ))
}

/// The first integer literal in a float field (by name, at any depth) of the JSON file
/// `path` that Float64 cannot hold exactly: line, field and text. Field names are the
/// keys the literal stands under (the last key before it, in its object).
fn json_inexact_integer(path: &Path, floats: &[String]) -> Option<(u64, String, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut in_string = false;
    let mut escaped = false;
    let mut string = Vec::new();
    // The last string that ended, until something other than space or `:` follows it.
    let mut last_string: Option<Vec<u8>> = None;
    // The key of the value being read, per nesting level of objects.
    let mut keys: Vec<Option<Vec<u8>>> = Vec::new();
    for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.ok()?;
        let mut i = 0;
        while i < line.len() {
            let b = line[i];
            if in_string {
                match (escaped, b) {
                    (true, _) => {
                        escaped = false;
                        string.push(b);
                    }
                    (false, b'\\') => escaped = true,
                    (false, b'"') => {
                        in_string = false;
                        last_string = Some(std::mem::take(&mut string));
                    }
                    _ => string.push(b),
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => {
                    in_string = true;
                    string.clear();
                }
                b':' => {
                    if let Some(level) = keys.last_mut() {
                        *level = last_string.take();
                    }
                }
                b'{' => keys.push(None),
                b'}' => {
                    keys.pop();
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    i += 1;
                    while i < line.len()
                        && (line[i].is_ascii_digit()
                            || matches!(line[i], b'.' | b'e' | b'E' | b'+' | b'-'))
                    {
                        i += 1;
                    }
                    let token = &line[start..i];
                    let integer = !token.iter().any(|c| matches!(c, b'.' | b'e' | b'E'))
                        && token.iter().any(u8::is_ascii_digit);
                    let key = keys.last().cloned().flatten();
                    if let (true, Some(key)) = (integer, key) {
                        let key = String::from_utf8_lossy(&key).into_owned();
                        let text = String::from_utf8_lossy(token);
                        if floats.contains(&key) && !exact_as_float(&text) {
                            return Some((number as u64 + 1, key, text.into_owned()));
                        }
                    }
                    continue;
                }
                b if b.is_ascii_whitespace() => {}
                _ => last_string = None,
            }
            i += 1;
        }
    }
    None
}

/// Two CSV or JSON files of the directory `dir` that give one column two types, as
/// `'b.json' has Utf8 where 'a.json' has Int64 ...`: the reader's own error names neither.
/// CSV files are parsed with `csv_header` (whether they start with one) and `dialect`.
pub fn differing_text_types(dir: &Path, csv_header: bool, dialect: CsvDialect) -> Option<String> {
    let name = |f: &Path| {
        let within = f
            .strip_prefix(dir)
            .ok()
            .filter(|p| !p.as_os_str().is_empty());
        quote(&within.unwrap_or(f).to_string_lossy(), 200)
    };
    let mut seen: Vec<(String, DataType, PathBuf)> = Vec::new();
    for format in [DataFormat::Csv, DataFormat::Json] {
        for file in files_of(&[dir.to_path_buf()], format) {
            // The reader infers one column of a name the header gives twice, of the two
            // columns' types.
            if format == DataFormat::Csv && csv_header {
                if let Some(why) = csv_duplicate_header(&file, dialect) {
                    // A file given alone is named by the caller.
                    return Some(match dir.is_dir() {
                        true => format!("'{}' {why}", name(&file)),
                        false => why,
                    });
                }
            }
            let Ok(opened) = std::fs::File::open(&file) else {
                continue;
            };
            let schema = match format {
                DataFormat::Csv => dialect
                    .arrow_format(csv_header)
                    .infer_schema(opened, None)
                    .map(|(schema, _)| schema),
                _ => datafusion::arrow::json::reader::infer_json_schema_from_seekable(
                    BufReader::new(opened),
                    None,
                )
                .map(|(schema, _)| schema),
            };
            let Ok(schema) = schema else { continue };
            for field in schema.fields() {
                match seen.iter_mut().find(|(name, _, _)| name == field.name()) {
                    None => seen.push((
                        field.name().clone(),
                        field.data_type().clone(),
                        file.clone(),
                    )),
                    // A column of no values gives no type: the next file's is compared.
                    Some((_, first, first_file)) if first.is_null() => {
                        *first = field.data_type().clone();
                        *first_file = file.clone();
                    }
                    // Types the table reads as one (times of two units) are no difference.
                    Some((_, first, first_file))
                        if super::merged_text_type(first, field.data_type()).is_none() =>
                    {
                        return Some(format!(
                            "the files of one table give column `{}` two types: '{}' has {} where '{}' has {}; read them as separate tables, or write them with one type",
                            quote(field.name(), 100),
                            name(&file),
                            field.data_type(),
                            name(first_file),
                            first
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    None
}

/// The CSV or JSON reader's error `message` in words, `cannot read ...`, with the first
/// file of `inputs` that does not parse (read with `layout` when given) and the line in
/// it; `None` when `message` is not a text reader's error.
pub fn text_read_failure(
    message: &str,
    inputs: &[PathBuf],
    layout: Option<&TextLayout>,
) -> Option<String> {
    if !is_text_read_error(message) {
        return None;
    }
    first_unreadable_text_file(inputs, layout)
        .map(|found| format!("cannot read {found}"))
        .or_else(|| {
            let words = json_inference_words(message)?;
            Some(match inputs {
                [one] => format!(
                    "cannot read '{}': {words}",
                    quote(&one.to_string_lossy(), 200)
                ),
                _ => format!("cannot read: {words}"),
            })
        })
}

/// `error` with the CSV or JSON file and line named, when it is a text reader's error and
/// one of `sources` is found not to parse; `error` itself otherwise.
pub fn name_text_file(
    error: datafusion::error::DataFusionError,
    sources: &[PathBuf],
    layout: Option<&TextLayout>,
) -> datafusion::error::DataFusionError {
    match text_read_failure(&error.to_string(), sources, layout) {
        Some(words) => datafusion::error::DataFusionError::Execution(words),
        None => error,
    }
}

/// A scan of CSV or JSON files whose read errors name the file and line
/// ([`name_text_file`]), in any session: a reader error found only while a query runs
/// (a bad row past the rows types were inferred from, a file changed since) would
/// otherwise name neither.
#[derive(Debug)]
pub struct TextErrorsExec {
    input: std::sync::Arc<dyn ExecutionPlan>,
    sources: std::sync::Arc<[PathBuf]>,
    layout: Option<std::sync::Arc<TextLayout>>,
}

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::StreamExt;

impl TextErrorsExec {
    pub fn new(
        input: std::sync::Arc<dyn ExecutionPlan>,
        sources: Vec<PathBuf>,
        layout: Option<TextLayout>,
    ) -> Self {
        Self {
            input,
            sources: sources.into(),
            layout: layout.map(std::sync::Arc::new),
        }
    }
}

impl DisplayAs for TextErrorsExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "TextErrorsExec")
    }
}

impl ExecutionPlan for TextErrorsExec {
    fn name(&self) -> &str {
        "TextErrorsExec"
    }

    fn properties(&self) -> &std::sync::Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&std::sync::Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(
            &std::sync::Arc<dyn PhysicalExpr>,
        ) -> datafusion::error::Result<TreeNodeRecursion>,
    ) -> datafusion::error::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: std::sync::Arc<Self>,
        mut children: Vec<std::sync::Arc<dyn ExecutionPlan>>,
    ) -> datafusion::error::Result<std::sync::Arc<dyn ExecutionPlan>> {
        Ok(std::sync::Arc::new(Self {
            input: children.swap_remove(0),
            sources: std::sync::Arc::clone(&self.sources),
            layout: self.layout.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: std::sync::Arc<TaskContext>,
    ) -> datafusion::error::Result<SendableRecordBatchStream> {
        let stream = self
            .input
            .execute(partition, context)
            .map_err(|e| name_text_file(e, &self.sources, self.layout.as_deref()))?;
        let sources = std::sync::Arc::clone(&self.sources);
        let layout = self.layout.clone();
        let schema = stream.schema();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.map(move |batch| {
                batch.map_err(|e| name_text_file(e, &sources, layout.as_deref()))
            }),
        )))
    }
}
