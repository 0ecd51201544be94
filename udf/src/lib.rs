//! arrowfeat feature-engineering functions.
//!
//! - [`kernels`]: the math, as plain functions over arrow-rs arrays (no engine types);
//! - [`sql`]: thin DataFusion adapters; [`register_all`] registers every function.

pub mod kernels;
#[cfg(feature = "sql")]
pub mod sql;

#[cfg(feature = "sql")]
pub use sql::{all_udfs, all_udwfs, function_docs, register_all};

// The Rust examples of the user documentation, compiled by `cargo test --doc` (each
// Rust code block of these files): an example that no longer builds fails the tests.
#[cfg(all(doctest, feature = "sql"))]
mod user_docs {
    #[doc = include_str!("../../docs/files.md")]
    pub struct Files;
    #[doc = include_str!("../../docs/point-in-time.md")]
    pub struct PointInTime;
}
