//! Compatibility modes between two revisions of a feature view schema: which changes a
//! minor or patch version bump may carry. The checks that apply them are
//! [`crate::checks::revision`].
//!
//! Modes follow Confluent Schema Registry: BACKWARD means consumers on the new schema can
//! read data written with the old one; FORWARD means consumers on the old schema can read
//! data written with the new one; FULL is both; NONE checks only the version bump.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which changes between revisions a minor or patch version bump may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Consumers of the new schema can read data written with the old one.
    #[default]
    Backward,
    /// Consumers of the old schema can read data written with the new one.
    Forward,
    /// Both backward and forward.
    Full,
    /// Only the version bump is checked; changes are listed.
    None,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        Some(match text.to_ascii_lowercase().as_str() {
            "backward" => Mode::Backward,
            "forward" => Mode::Forward,
            "full" => Mode::Full,
            "none" => Mode::None,
            _ => return None,
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Backward => "BACKWARD",
            Mode::Forward => "FORWARD",
            Mode::Full => "FULL",
            Mode::None => "NONE",
        })
    }
}
