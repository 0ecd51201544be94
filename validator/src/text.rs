//! Text that came from a file, made safe to print: see [`arrowfeat_text`], shared with
//! the kernels, the CLI and the Python package. Every renderer runs its input through
//! [`escape_controls`] (see `output::render`).

pub use arrowfeat_text::{clean, escape_controls, is_unsafe_char, quote};
