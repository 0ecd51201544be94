//! arrowfeat-validator: checks declarative feature schema files against feature-store
//! metadata and against earlier revisions of themselves. It knows nothing of the kernels.

pub mod check;
pub mod compat;
pub mod config;
pub mod git;
pub mod output;
pub mod pipeline;
pub mod report;
pub mod rules;
pub mod run;
pub mod spec;
pub mod store;
pub mod suggest;
pub mod suppress;
pub mod text;
pub mod types;
mod tz_names;
pub mod yaml;
