//! The `arrowfeat` command line: argument parsing lives in `main.rs`; the commands live
//! here so tests can call them without a process.

pub mod check;
pub mod data_files;
pub mod feast;
pub mod functions;
pub mod json_output;
pub mod parquet_format;
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

/// An I/O error as the operating system says it, without Rust's " (os error N)".
pub fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.split_once(" (os error") {
        Some((message, _)) => message.to_string(),
        None => text,
    }
}

/// Begins the message of an error raised by the Parquet reader, which does not know
/// the file's name: the `sql` command names its Parquet inputs after it.
pub const PARQUET_UNREADABLE: &str = "a Parquet file cannot be read: ";

impl From<datafusion::error::DataFusionError> for CliError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        use arrowfeat_udf::sql::errors::{error_cause, ErrorCause};
        match error_cause(&e) {
            ErrorCause::Parquet(detail) => {
                CliError::failure(format!("{PARQUET_UNREADABLE}{detail}"))
            }
            ErrorCause::Other(message) => CliError::failure(message),
        }
    }
}

pub type CliResult<T> = Result<T, CliError>;
