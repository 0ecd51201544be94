//! What every arrowfeat crate shares, so that it is written once: the kernels, the
//! DataFusion adapters, the validator, the CLI and the Python module all use it.
//!
//! - text from files and data made safe to print: [`escape_controls`], [`quote`] (and
//!   [`quote_hashed`] where what is shown is also an identity), [`cap`];
//! - I/O errors in plain words: [`io_message`], [`path_io_message`];
//! - the one duration grammar and its parser: [`duration`];
//! - times since 1970 as calendar dates, for any count: [`instant`];
//! - sizes in bytes as people write them: [`size`].
//!
//! It depends on nothing, and nothing here knows of Arrow, DataFusion or feature schemas.

pub mod duration;
pub mod instant;
mod io;
pub mod size;
mod text;

pub use io::{io_message, path_io_message};
pub use text::{cap, clean, escape_controls, is_unsafe_char, quote, quote_hashed, value_hash};
