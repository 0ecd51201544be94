//! arrowfeat-validator: checks declarative feature schema files against feature-store
//! metadata and against earlier revisions of themselves. It knows nothing of the kernels.

pub mod yaml;
pub mod suggest;
pub mod types;
pub mod output;
pub mod report;
pub mod rules;
pub mod run;
pub mod check;
pub mod compat;
pub mod config;
pub mod spec;
pub mod store;
