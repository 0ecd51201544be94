//! The checks, by family: of a schema [file](file) on its own, of a file against the
//! feature [store](store)'s metadata, and of a file against its earlier
//! [revision](revision) under a compatibility mode, and of a view's [data](data).

pub mod data;
pub mod drift;
pub mod file;
pub mod revision;
pub mod skew;
pub mod store;

pub use file::{load_bytes, load_file, unreadable_values};
pub use revision::check_revision;
pub use store::check_against_store;
