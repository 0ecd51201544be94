//! The `arrowfeat` command line: argument parsing lives in `main.rs`; the commands live
//! here so tests can call them without a process.

pub mod check;
pub mod feast;
pub mod functions;
pub mod sql;
pub mod training_set;

use std::fmt;

/// A user-facing failure: printed as one line, exit code 1 (2 for usage errors).
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit_code: i32,
}

impl CliError {
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 1,
        }
    }

    /// The reader of the output went away (`arrowfeat sql ... | head`): stop quietly,
    /// with success, as `cat` and `psql` do.
    pub fn closed_pipe() -> Self {
        Self {
            message: String::new(),
            exit_code: 0,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 2,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line: DataFusion messages may carry newlines and tabs (candidate lists).
        let one_line: Vec<&str> = self.message.split_whitespace().collect();
        write!(f, "{}", one_line.join(" "))
    }
}

/// Begins the message of an error raised by the Parquet reader, which does not know
/// the file's name: the `sql` command names its Parquet inputs after it.
pub const PARQUET_UNREADABLE: &str = "a Parquet file cannot be read: ";

/// The reader's own words, without the "Parquet error: " prefixes that each layer adds,
/// and without the Rust structures some of its errors print.
fn parquet_detail(text: &str) -> String {
    let mut rest = text.trim();
    while let Some(inner) = [
        "Parquet error: ",
        "Parquet argument error: ",
        "External: ",
        "Arrow: ",
    ]
    .iter()
    .find_map(|p| rest.strip_prefix(p))
    {
        rest = inner.trim_start();
    }
    if rest.contains("ARROW:schema") || rest.contains("not Arrow Schema") {
        // The flatbuffer decoder prints its error as a Rust structure.
        return "the Arrow schema stored in its metadata (ARROW:schema) is corrupt".into();
    }
    // Any other Rust structure (`Name { field: .. }`) is cut off.
    match rest.find(" {") {
        Some(at) => format!("{} (a corrupt structure)", rest[..at].trim_end_matches(':')),
        None => rest.to_string(),
    }
}

impl From<datafusion::error::DataFusionError> for CliError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        use datafusion::arrow::error::ArrowError;
        use datafusion::error::DataFusionError as E;
        // `find_root` drops DataFusion's "Execution error:" / context wrappers that repeat
        // what our kernels already say.
        let root = e.find_root();
        let parquet = match root {
            // Kernel errors already name the function and argument.
            E::Execution(message) => return CliError::failure(message.clone()),
            E::ParquetError(e) => Some(e.to_string()),
            E::ArrowError(e, _) => match e.as_ref() {
                ArrowError::ParquetError(text) => Some(text.clone()),
                _ => None,
            },
            _ => None,
        };
        match parquet {
            Some(text) => {
                CliError::failure(format!("{PARQUET_UNREADABLE}{}", parquet_detail(&text)))
            }
            None => CliError::failure(root.to_string()),
        }
    }
}

pub type CliResult<T> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parquet_errors_lose_their_prefixes_and_rust_structures() {
        assert_eq!(
            parquet_detail("Parquet error: Parquet error: Invalid Parquet file. Corrupt footer"),
            "Invalid Parquet file. Corrupt footer"
        );
        assert_eq!(
            parquet_detail(
                "Arrow: Unable to get root as message stored in ARROW:schema: RangeOutOfBounds { range: 1..2 }"
            ),
            "the Arrow schema stored in its metadata (ARROW:schema) is corrupt"
        );
        assert_eq!(
            parquet_detail("External: bad page: Unaligned { position: 3 }"),
            "bad page: Unaligned (a corrupt structure)"
        );
    }
}
