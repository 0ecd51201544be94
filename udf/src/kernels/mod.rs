//! Feature-engineering kernels over arrow-rs arrays.
//!
//! This module knows only arrow-rs: no DataFusion, no Python. Every kernel takes its
//! arguments as [`Datum`](arrow::array::Datum)s, so each argument may be a column (an array
//! with one value per row) or a scalar (an [`arrow::array::Scalar`], one value for every
//! row). When every argument is a scalar the result has one row.
//!
//! Shared conventions:
//! - a null input row gives a null output row, unless the function says otherwise;
//! - sliced arrays (non-zero offsets) are read through their offsets, never copied;
//! - empty input gives empty output;
//! - invalid parameters (a zero standard deviation, unsorted boundaries, ...) are errors
//!   ([`KernelError`]) that name the function, the argument and, for columns, the row.

#[macro_use]
mod simd;

pub mod compare;
pub mod embedding;
pub mod geo;
pub mod hash;
pub mod numeric;
pub mod point_in_time;
pub mod window;

mod operand;

pub use operand::{broadcast_len, F64Operand};

use std::borrow::Cow;
use std::fmt;

/// Whether an argument had the wrong type or a bad value (Python maps these to
/// `TypeError` and `ValueError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    WrongType,
    BadValue,
}

/// An error raised by a kernel: which function, which argument, what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    pub kind: ErrorKind,
    /// SQL / Python name of the function, e.g. `standard_scale`; a binding that exposes
    /// the kernel under another name says so with [`KernelError::called_as`].
    pub function: Cow<'static, str>,
    /// Name of the offending argument, e.g. `std`.
    pub argument: String,
    /// What was expected and what was found.
    pub message: String,
}

impl KernelError {
    pub fn new(
        function: impl Into<Cow<'static, str>>,
        argument: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind: ErrorKind::BadValue,
            function: function.into(),
            argument: argument.into(),
            message: message.into(),
        }
    }

    /// An argument of a type the function does not accept.
    pub fn wrong_type(
        function: impl Into<Cow<'static, str>>,
        argument: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind: ErrorKind::WrongType,
            ..Self::new(function, argument, message)
        }
    }
}

impl KernelError {
    /// The same error under the name the user called, e.g. `get_historical_features` for
    /// the `point_in_time` kernel behind it: the message is built from the parts, never
    /// patched.
    pub fn called_as(mut self, function: impl Into<Cow<'static, str>>) -> Self {
        self.function = function.into();
        self
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Arguments and messages quote column names, field names and values from the
        // data, which may come from anyone's file: shown escaped and cut, never raw.
        write!(
            f,
            "{}: argument `{}`: {}",
            self.function,
            arrowfeat_common::quote(&self.argument, 200),
            arrowfeat_common::quote(&self.message, 2000)
        )
    }
}

impl std::error::Error for KernelError {}

pub type Result<T> = std::result::Result<T, KernelError>;

/// A null buffer from per-row validity, or `None` when every row is valid (arrays
/// without a null buffer are faster to read).
pub(crate) fn nulls_from_validity(valid: Vec<bool>) -> Option<arrow::buffer::NullBuffer> {
    // Most results have no null: one quick read, instead of packing the bits and
    // counting them.
    if valid.iter().all(|&v| v) {
        return None;
    }
    let nulls = arrow::buffer::NullBuffer::from(valid);
    (nulls.null_count() > 0).then_some(nulls)
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_show_names_from_files_escaped_and_cut() {
        let e = super::KernelError::new(
            "point_in_time",
            "event_values[\u{1b}]0;owned\u{7}]",
            format!("unknown column `{}`", "B".repeat(5000)),
        );
        let text = e.to_string();
        assert!(
            text.contains("event_values[\\u{1b}]0;owned\\u{7}]"),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control()));
        assert!(text.chars().count() < 2300 && text.ends_with('…'));
        // The same escaping as the validator's and the CLI's: workflow commands too.
        let command = super::KernelError::new("f", "x", "no column `##[add-mask]\u{fffe}`");
        assert_eq!(
            command.to_string(),
            "f: argument `x`: no column `#\\u{23}[add-mask]\\u{fffe}`"
        );
        let plain = super::KernelError::new("f", "x", "expected 1, found 2").to_string();
        assert_eq!(plain, "f: argument `x`: expected 1, found 2");
    }
}
