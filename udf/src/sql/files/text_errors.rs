//! CSV and JSON read errors with the file and line named. DataFusion's readers see byte
//! ranges of files, not files: their errors name neither the file nor (for a range past
//! the start) the line in it. When a read fails with such an error, the inputs' CSV and
//! JSON files are read again here, one by one, until the first that fails, so the user
//! is told which file and which line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use arrowfeat_common::quote;

use super::{DataFormat, MAX_DEPTH};

/// Most files looked at for the failing one.
const PROBED_FILES: usize = 10_000;

/// Whether `message` (an error's text) is a CSV or JSON reader's error.
pub fn is_text_read_error(message: &str) -> bool {
    [
        "Csv error:",
        "Json error:",
        "Not valid JSON",
        "Encountered unequal lengths",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// The first CSV or JSON file among `inputs` (files, or directories and their `key=value`
/// subdirectories, by path) that does not parse, as `'file' line N: why`; `None` when
/// they all parse.
pub fn first_unreadable_text_file(inputs: &[PathBuf]) -> Option<String> {
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
    files.into_iter().take(PROBED_FILES).find_map(|file| {
        let why = match DataFormat::of_file(&file)? {
            DataFormat::Csv => csv_error(&file),
            DataFormat::Json => json_error(&file),
            DataFormat::Parquet => None,
        }?;
        Some(format!("'{}' {why}", quote(&file.to_string_lossy(), 200)))
    })
}

fn text_files_below(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind)
                if kind.is_dir()
                    && depth > 0
                    && entry.file_name().to_string_lossy().contains('=') =>
            {
                text_files_below(&path, depth - 1, files);
            }
            Ok(kind)
                if kind.is_file()
                    && matches!(
                        DataFormat::of_file(&path),
                        Some(DataFormat::Csv | DataFormat::Json)
                    ) =>
            {
                files.push(path);
            }
            _ => {}
        }
    }
}

/// Why the CSV file `path` does not parse as the reader parses it (a header, then rows
/// of as many fields, UTF-8), as `line N: ...`.
fn csv_error(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(file);
    let mut record = csv::ByteRecord::new();
    let mut fields = None;
    loop {
        let line = reader.position().line();
        match reader.read_byte_record(&mut record) {
            Ok(false) => return None,
            Ok(true) => {}
            Err(e) => return Some(format!("line {line}: {}", e.kind_text())),
        }
        let expected = *fields.get_or_insert(record.len());
        if record.len() != expected {
            return Some(format!(
                "line {}: expected {expected} fields as in the header, found {}",
                record.position().map_or(line, |p| p.line()),
                record.len()
            ));
        }
        if let Some(at) = record.iter().position(|f| std::str::from_utf8(f).is_err()) {
            return Some(format!(
                "line {}: field {} is not UTF-8 text",
                record.position().map_or(line, |p| p.line()),
                at + 1
            ));
        }
    }
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
/// non-blank line must hold one JSON object.
fn json_error(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
        let Ok(line) = line else {
            return Some(format!("line {}: cannot be read", number + 1));
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut cursor = std::io::Cursor::new(&line);
        if let Err(e) =
            datafusion::arrow::json::reader::infer_json_schema_from_seekable(&mut cursor, None)
        {
            let text = e.to_string();
            // The reader's position is within this line: keep its column only.
            let why = text
                .rsplit_once(" at line 1 column ")
                .map(|(why, column)| format!("{why} at column {column}"))
                .unwrap_or(text);
            let why = why
                .trim_start_matches("Json error: ")
                .trim_start_matches("Not valid JSON: ")
                .to_string();
            return Some(format!("line {}: not valid JSON: {why}", number + 1));
        }
    }
    None
}

/// The first integer in the JSON files among `inputs` (files, or directories and their
/// `key=value` subdirectories) that no Int64 holds, as `'file' line N: ...`. The JSON
/// reader infers such a column as Float64, where 9223372036854775807 and
/// 9223372036854775808 become one value: two keys would collide, silently.
pub fn json_integer_beyond_int64(inputs: &[PathBuf]) -> Option<String> {
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
        .into_iter()
        .filter(|f| DataFormat::of_file(f) == Some(DataFormat::Json))
        .find_map(|file| {
            let (line, number) = big_integer_in(&file)?;
            Some(format!(
                "'{}' line {line}: the integer {} is beyond the Int64 range: read as a float \
                 it would lose digits (two keys could become one); write it as a string",
                quote(&file.to_string_lossy(), 200),
                quote(&number, 60)
            ))
        })
}

/// The line and text of the first integer literal outside strings in the JSON file
/// `path` that does not fit an Int64.
fn big_integer_in(path: &Path) -> Option<(usize, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut in_string = false;
    let mut escaped = false;
    for (number, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.ok()?;
        let mut i = 0;
        while i < line.len() {
            let b = line[i];
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                i += 1;
                continue;
            }
            if b == b'"' {
                in_string = true;
                i += 1;
                continue;
            }
            if b == b'-' || b.is_ascii_digit() {
                let start = i;
                i += 1;
                while i < line.len()
                    && (line[i].is_ascii_digit()
                        || matches!(line[i], b'.' | b'e' | b'E' | b'+' | b'-'))
                {
                    i += 1;
                }
                let token = &line[start..i];
                let integer = !token.iter().any(|c| matches!(c, b'.' | b'e' | b'E'));
                if integer {
                    let text = String::from_utf8_lossy(token);
                    if text.parse::<i64>().is_err()
                        && text
                            .trim_start_matches('-')
                            .bytes()
                            .all(|c| c.is_ascii_digit())
                    {
                        return Some((number + 1, text.into_owned()));
                    }
                }
                continue;
            }
            i += 1;
        }
    }
    None
}
