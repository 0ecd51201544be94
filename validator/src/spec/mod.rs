//! Feature schema files: the [model](model) of what a file declares, and its
//! [parsing](parse) (YAML, the JSON Schema, decoding). The checks run on a schema are in
//! [`crate::checks`].

pub mod model;
pub mod parse;

pub use model::{
    name_version_suffix, Constraints, CreatedTimestampSpec, EntitySpec, EventTimestampSpec,
    ExactNumber, FeatureSpec, FeatureViewSpec, SchemaFile, TtlSpec,
};
pub use parse::{display_path, read, JSON_SCHEMA, MAX_SCHEMA_FILE_BYTES};
