//! arrowfeat-validator: checks declarative feature schema files against feature-store
//! metadata and against earlier revisions of themselves. It knows nothing of the kernels.
//!
//! The modules, from the bottom up: each uses only modules listed before it (`make lint`
//! fails on an import cycle, see `tools/check_module_cycles.py`).
//!
//! - [`text`], [`suggest`], [`files`]: quoting values from files, did-you-mean, bounded reads;
//! - [`yaml`], [`types`], [`ttl`]: positions in YAML, the type vocabulary, TTL durations;
//! - [`rules`] (the catalogue, with [`rules::Severity`]) and [`compat`] (the compatibility
//!   modes);
//! - [`report`]: findings and reports; [`suppress`]: baselines and ignore comments;
//! - [`spec`]: the schema [model](spec::model) and its [parsing](spec::parse); [`store`]:
//!   the store's metadata;
//! - [`checks`]: by family, of a [file](checks::file) on its own, against the
//!   [store](checks::store), against the earlier [revision](checks::revision);
//! - [`config`], [`run`], [`git`], [`output`] and [`pipeline`], the whole gate.

pub mod checks;
pub mod compat;
pub mod config;
pub mod files;
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
pub mod ttl;
pub mod types;
pub mod yaml;
