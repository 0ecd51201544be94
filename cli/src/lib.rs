//! The `arrowfeat` command line: argument parsing lives in `main.rs`; the commands live
//! here so tests can call them without a process.

/// `eprintln!` that loses the line when stderr is closed (`2>&-`, a reader that went
/// away) instead of panicking: the exit code still says what happened.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod commands;
pub mod json_output;

// File reading lives in the DataFusion adapter crate, where every engine reaches it.
pub use arrowfeat_udf::sql::files as data_files;
pub use arrowfeat_udf::sql::files::parquet as parquet_format;

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

/// An I/O error in plain words (one definition for every crate).
pub use arrowfeat_common::io_message;

/// Begins the message of an error raised by the Parquet reader, which does not know
/// the file's name: the `sql` command names its Parquet inputs after it.
pub use arrowfeat_udf::sql::files::PARQUET_UNREADABLE;

impl From<datafusion::error::DataFusionError> for CliError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        CliError::failure(arrowfeat_udf::sql::files::error_message(&e))
    }
}

pub type CliResult<T> = Result<T, CliError>;
