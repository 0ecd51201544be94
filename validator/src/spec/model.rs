//! The feature schema model: what a schema file declares, decoded (see
//! [`super::parse`] for reading one).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::ttl::{parse_duration_seconds, MAX_TTL_SECONDS};
use crate::types::{FeatureType, TimeUnit};
use crate::yaml::{Node, Pos};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureViewSpec {
    pub name: String,
    pub schema_version: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    pub entities: Vec<EntitySpec>,
    pub event_timestamp: EventTimestampSpec,
    #[serde(default)]
    pub created_timestamp: Option<CreatedTimestampSpec>,
    #[serde(default)]
    pub ttl: Option<TtlSpec>,
    pub features: Vec<FeatureSpec>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntitySpec {
    pub name: String,
    pub join_key: String,
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventTimestampSpec {
    pub name: String,
    #[serde(rename = "type", default = "default_timestamp_kind")]
    pub kind: String,
    #[serde(default = "default_unit")]
    pub unit: String,
    #[serde(default = "default_tz")]
    pub tz: Option<String>,
    #[serde(default = "default_true")]
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatedTimestampSpec {
    pub name: String,
}

/// `ttl`: whole seconds, or a duration string. A number that is not a whole number of
/// seconds in range (negative, fractional, beyond 2^64) is kept as `Invalid` with its
/// text so the check can name it instead of failing to decode.
#[derive(Debug, Clone, PartialEq)]
pub enum TtlSpec {
    Seconds(u64),
    Duration(String),
    Invalid(String),
}

impl<'de> Deserialize<'de> for TtlSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TtlVisitor;
        impl serde::de::Visitor<'_> for TtlVisitor {
            type Value = TtlSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("seconds (an integer ≥ 0) or a duration such as 90s, 15m, 6h, 1d")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TtlSpec, E> {
                Ok(TtlSpec::Seconds(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TtlSpec, E> {
                Ok(u64::try_from(v).map_or(TtlSpec::Invalid(v.to_string()), TtlSpec::Seconds))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TtlSpec, E> {
                Ok(TtlSpec::Invalid(if v.fract() == 0.0 && v.is_finite() {
                    format!("{v:.0}")
                } else {
                    v.to_string()
                }))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TtlSpec, E> {
                Ok(TtlSpec::Duration(v.to_string()))
            }
        }
        deserializer.deserialize_any(TtlVisitor)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default = "default_true")]
    pub nullable: bool,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub constraints: Option<Constraints>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constraints {
    /// As written: integers stay exact (an int64 bound beyond 2^53 is not rounded).
    #[serde(default)]
    pub min: Option<serde_json::Number>,
    #[serde(default)]
    pub max: Option<serde_json::Number>,
    #[serde(default)]
    pub allowed_values: Option<Vec<Value>>,
    /// `min` and `max` as the file writes them (`9223372036854775808`, `1e23`), filled in
    /// after decoding: the decoded numbers are f64 beyond i64, so bounds are compared and
    /// shown from this text (see [`ExactNumber`]).
    #[serde(skip)]
    pub min_written: Option<String>,
    #[serde(skip)]
    pub max_written: Option<String>,
}

impl Constraints {
    pub fn min_exact(&self) -> Option<ExactNumber> {
        self.min
            .as_ref()
            .map(|n| ExactNumber::of(n, self.min_written.as_deref()))
    }

    pub fn max_exact(&self) -> Option<ExactNumber> {
        self.max
            .as_ref()
            .map(|n| ExactNumber::of(n, self.max_written.as_deref()))
    }
}

/// A number from a file compared by value and exactly: integers as written, whatever
/// their size (`9223372036854775808` is not `9223372036854775807`, which f64 cannot
/// tell apart), other numbers as f64; `1` equals `1.0`.
#[derive(Debug, Clone, PartialEq)]
pub enum ExactNumber {
    /// Decimal digits without leading zeros (`0` for zero, never negative).
    Int {
        negative: bool,
        digits: String,
    },
    Float(f64),
}

impl ExactNumber {
    /// `number` as decoded, or exactly from `written` when that is a decimal integer.
    pub fn of(number: &serde_json::Number, written: Option<&str>) -> ExactNumber {
        if let Some(int) = written.and_then(ExactNumber::parse_int) {
            return int;
        }
        if let Some(i) = number.as_i64() {
            return ExactNumber::parse_int(&i.to_string()).unwrap_or(ExactNumber::Float(i as f64));
        }
        if let Some(u) = number.as_u64() {
            return ExactNumber::parse_int(&u.to_string()).unwrap_or(ExactNumber::Float(u as f64));
        }
        ExactNumber::Float(number.as_f64().unwrap_or(f64::NAN))
    }

    /// `-12`, `+7`, `0042`; anything else (`1.0`, `1e3`, `0x10`) is not a decimal integer.
    pub fn parse_int(text: &str) -> Option<ExactNumber> {
        let text = text.trim();
        let (negative, digits) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        Some(ExactNumber::Int {
            negative: negative && digits != "0",
            digits: digits.to_string(),
        })
    }

    pub fn int(value: i128) -> ExactNumber {
        ExactNumber::parse_int(&value.to_string()).unwrap_or(ExactNumber::Float(value as f64))
    }

    /// Total order by value; NaN (never in a file: YAML's `.nan` is refused) sorts last.
    pub fn cmp_value(&self, other: &ExactNumber) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match (self, other) {
            (
                ExactNumber::Int {
                    negative: an,
                    digits: ad,
                },
                ExactNumber::Int {
                    negative: bn,
                    digits: bd,
                },
            ) => {
                let magnitude = ad.len().cmp(&bd.len()).then_with(|| ad.cmp(bd));
                match (an, bn) {
                    (false, false) => magnitude,
                    (true, true) => magnitude.reverse(),
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                }
            }
            (ExactNumber::Float(a), ExactNumber::Float(b)) => a.total_cmp(b),
            (ExactNumber::Int { .. }, ExactNumber::Float(f)) => {
                if !f.is_finite() {
                    return if *f > 0.0 {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    };
                }
                // Every finite f64 has an exact decimal integer part: compare with it,
                // then let the fraction decide.
                let whole = ExactNumber::parse_int(&format!("{:.0}", f.trunc()))
                    .unwrap_or(ExactNumber::Float(0.0));
                match self.cmp_value(&whole) {
                    Ordering::Equal if f.fract() > 0.0 => Ordering::Less,
                    Ordering::Equal if f.fract() < 0.0 => Ordering::Greater,
                    ordering => ordering,
                }
            }
            (ExactNumber::Float(_), ExactNumber::Int { .. }) => other.cmp_value(self).reverse(),
        }
    }
}

fn default_timestamp_kind() -> String {
    "timestamp".into()
}
fn default_unit() -> String {
    "us".into()
}
fn default_tz() -> Option<String> {
    Some("UTC".into())
}
fn default_true() -> bool {
    true
}

impl EventTimestampSpec {
    /// The timestamp's type in the vocabulary.
    pub fn feature_type(&self) -> FeatureType {
        if self.kind == "datetime64" {
            return FeatureType::Datetime64Ns;
        }
        let unit = match self.unit.as_str() {
            "s" => TimeUnit::Second,
            "ms" => TimeUnit::Millisecond,
            "ns" => TimeUnit::Nanosecond,
            _ => TimeUnit::Microsecond,
        };
        FeatureType::Timestamp {
            unit,
            tz: self.tz.clone(),
        }
    }
}

impl TtlSpec {
    /// The TTL in seconds, or why it has none: malformed, or beyond
    /// [`MAX_TTL_SECONDS`] (what a Feast registry can hold).
    pub fn seconds(&self) -> Result<u64, String> {
        let seconds = match self {
            TtlSpec::Seconds(seconds) => *seconds,
            TtlSpec::Duration(text) => parse_duration_seconds(text)?,
            TtlSpec::Invalid(text) => {
                return Err(format!(
                    "ttl {} is out of range or not a whole number: expected seconds from 0 to {}",
                    crate::text::quote_hashed(text, 40),
                    MAX_TTL_SECONDS
                ))
            }
        };
        if seconds > MAX_TTL_SECONDS {
            return Err(format!(
                "ttl {} is out of range: {seconds} s; the largest TTL is {} s (10,000 years, protobuf's Duration)",
                self.text(),
                MAX_TTL_SECONDS
            ));
        }
        Ok(seconds)
    }

    /// The TTL as the file writes it (a number or a duration string), unquoted.
    pub fn written(&self) -> String {
        match self {
            TtlSpec::Seconds(seconds) => seconds.to_string(),
            TtlSpec::Duration(text) | TtlSpec::Invalid(text) => text.clone(),
        }
    }

    fn text(&self) -> String {
        match self {
            TtlSpec::Seconds(seconds) => seconds.to_string(),
            TtlSpec::Duration(text) | TtlSpec::Invalid(text) => {
                format!("`{}`", crate::text::quote_hashed(text, 40))
            }
        }
    }
}

/// A schema file that parsed and matched the JSON Schema.
#[derive(Debug, Clone)]
pub struct SchemaFile {
    pub path: String,
    pub root: Node,
    pub spec: FeatureViewSpec,
}

impl SchemaFile {
    /// Where the feature named `name` is declared.
    pub fn feature_pos(&self, name: &str) -> Pos {
        match self
            .spec
            .features
            .iter()
            .position(|feature| feature.name == name)
        {
            Some(index) => self.root.locate(&format!("/features/{index}")),
            None => self.root.locate_key("", "features"),
        }
    }

    pub fn entity_pos(&self, name: &str) -> Pos {
        match self
            .spec
            .entities
            .iter()
            .position(|entity| entity.name == name)
        {
            Some(index) => self.root.locate(&format!("/entities/{index}")),
            None => self.root.locate_key("", "entities"),
        }
    }

    pub fn key_pos(&self, pointer: &str) -> Pos {
        self.root.locate(pointer)
    }
}

/// `driver_stats_v2` → `Some(Ok(2))`; no `_vN` suffix → `None`; a suffix beyond u64 →
/// `Some(Err(message))` (checked, never wrapped or skipped).
pub fn name_version_suffix(name: &str) -> Option<Result<u64, String>> {
    let (_, suffix) = name.rsplit_once("_v")?;
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(suffix.parse().map_err(|_| {
        format!(
            "view name `{}` ends in _v{} which is out of range: a major version is at most {}",
            crate::text::quote_hashed(name, 80),
            crate::text::quote_hashed(suffix, 40),
            u64::MAX
        )
    }))
}
