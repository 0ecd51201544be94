//! arrowfeat feature-engineering functions.
//!
//! - [`kernels`]: the math, as plain functions over arrow-rs arrays (no engine types);
//! - [`sql`]: thin DataFusion adapters; [`register_all`] registers every function.

pub mod kernels;
#[cfg(feature = "sql")]
pub mod sql;

#[cfg(feature = "sql")]
pub use sql::{all_udfs, all_udwfs, function_docs, register_all};
