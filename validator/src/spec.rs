//! Feature schema files: reading, JSON Schema validation and the checks that need only
//! the file itself.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde::Deserialize;
use serde_json::Value;

use crate::report::{Actual, Check, Expected, FileReport};
use crate::rules::Rule;
use crate::suggest;
use crate::text::short;
use crate::types::{FeatureType, TimeUnit};
use crate::yaml::{self, Node, Pos, YamlErrorKind};

/// The JSON Schema that defines the format (`schemas/feature-view.schema.json`).
pub const JSON_SCHEMA: &str = include_str!("../../schemas/feature-view.schema.json");

/// Larger schema files are refused before parsing: a feature view with thousands of
/// features is a few hundred KiB.
pub const MAX_SCHEMA_FILE_BYTES: u64 = 8 * 1024 * 1024;

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
    /// [`MAX_TTL_SECONDS`](crate::store::MAX_TTL_SECONDS) (what a Feast registry can hold).
    pub fn seconds(&self) -> Result<u64, String> {
        let seconds = match self {
            TtlSpec::Seconds(seconds) => *seconds,
            TtlSpec::Duration(text) => parse_duration_seconds(text)?,
            TtlSpec::Invalid(text) => {
                return Err(format!(
                    "ttl {} is out of range or not a whole number: expected seconds from 0 to {}",
                    crate::text::quote(text, 40),
                    crate::store::MAX_TTL_SECONDS
                ))
            }
        };
        if seconds > crate::store::MAX_TTL_SECONDS {
            return Err(format!(
                "ttl {} is out of range: {seconds} s; the largest TTL is {} s (10,000 years, protobuf's Duration)",
                self.text(),
                crate::store::MAX_TTL_SECONDS
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
                format!("`{}`", crate::text::quote(text, 40))
            }
        }
    }
}

/// `90s`, `15m`, `6h`, `1d`, `2w`, and sums of them such as `1d12h`, with checked
/// arithmetic: a value beyond 2^64 - 1 seconds is an error, never a wrap.
pub fn parse_duration_seconds(text: &str) -> Result<u64, String> {
    let quoted = || crate::text::quote(text, 40);
    let malformed = || {
        format!(
            "ttl `{}` is not a duration: expected seconds or NUMBER+UNIT (s, m, h, d, w) such as 90s, 6h, 1d12h",
            quoted()
        )
    };
    let overflow = || {
        format!(
            "ttl `{}` is out of range: more than {} s",
            quoted(),
            u64::MAX
        )
    };
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return Err(malformed()),
        };
        if number.is_empty() {
            return Err(malformed());
        }
        let value: u64 = number.parse().map_err(|_| overflow())?;
        total = value
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(overflow)?;
        number.clear();
    }
    if number.is_empty() && !text.is_empty() {
        Ok(total)
    } else {
        Err(malformed())
    }
}

/// Seconds as the shortest duration string (`86400` → `1d`), for reports.
pub fn format_duration(seconds: u64) -> String {
    if seconds == 0 {
        return "0s (no expiry)".into();
    }
    let mut rest = seconds;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
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

/// The values of `file` that do not parse (a `type` outside the vocabulary, a TTL out of
/// range), each with the format finding that reports it: comparisons with `with` (e.g.
/// "the store") skip them, and [`Report::flag_unchecked_files`](crate::report::Report::flag_unchecked_files)
/// makes sure that skip is seen.
pub fn unreadable_values(file: &SchemaFile, with: &'static str) -> Vec<crate::report::Uncompared> {
    let mut out = Vec::new();
    let mut push = |rule: Rule, because: String, subject: String, pointer: String| {
        out.push(crate::report::Uncompared {
            because: (rule, because),
            subject,
            with,
            pos: file.root.locate(&pointer),
        })
    };
    for (index, feature) in file.spec.features.iter().enumerate() {
        if FeatureType::parse(&feature.type_name).is_err() {
            let name = crate::text::short(&feature.name);
            push(
                Rule::TypeSyntax,
                format!("feature {name}: type syntax"),
                format!("feature {name}: type"),
                format!("/features/{index}/type"),
            );
        }
    }
    for (index, entity) in file.spec.entities.iter().enumerate() {
        if FeatureType::parse(&entity.type_name).is_err() {
            let name = crate::text::short(&entity.name);
            push(
                Rule::TypeSyntax,
                format!("entity {name}: type syntax"),
                format!("entity {name}: type"),
                format!("/entities/{index}/type"),
            );
        }
    }
    let ts = &file.spec.event_timestamp;
    if ts.kind != "datetime64"
        && ts
            .tz
            .as_deref()
            .is_some_and(|tz| !crate::types::valid_time_zone(tz))
    {
        push(
            Rule::TimestampDeclaration,
            "event timestamp: declaration".into(),
            "event timestamp: type".into(),
            "/event_timestamp/tz".into(),
        );
    }
    if file
        .spec
        .ttl
        .as_ref()
        .is_some_and(|ttl| ttl.seconds().is_err())
    {
        push(
            Rule::SchemaViolation,
            "ttl".into(),
            "ttl".into(),
            "/ttl".into(),
        );
    }
    out
}

/// Reads and checks one schema file from disk. The report always names the file; the
/// schema is returned when it could be read and matches the format.
pub fn load_file(path: &Path) -> (FileReport, Option<SchemaFile>) {
    let label = path.display().to_string();
    let label = label
        .strip_prefix("./")
        .map_or(label.clone(), str::to_string);
    match read_bounded(path, MAX_SCHEMA_FILE_BYTES) {
        Ok(bytes) => load_bytes(&label, &bytes),
        Err(message) => {
            let mut report = FileReport::new(&label);
            report.checks.push(unreadable(message));
            (report, None)
        }
    }
}

/// What a file that is not a regular file is, for "expected a regular file" messages.
pub fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Reads a whole regular file of at most `limit` bytes. Directories, FIFOs, sockets and
/// devices are refused before they are opened (reading a FIFO blocks until a writer
/// comes; a device may never end), with a message that says which; on Linux the file is
/// also opened non-blocking and checked again, so one swapped in meanwhile cannot hang
/// the run either. The read itself stops at `limit + 1` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = || crate::text::clean(&path.display().to_string());
    let metadata = std::fs::metadata(path).map_err(|e| io_message(path, &e))?;
    let refuse = |metadata: &std::fs::Metadata| -> Result<(), String> {
        if !metadata.is_file() {
            return Err(format!(
                "{} is {}; expected a regular file",
                shown(),
                file_kind(&metadata.file_type())
            ));
        }
        if metadata.len() > limit {
            return Err(format!(
                "{} is {} bytes; the limit is {limit} bytes",
                shown(),
                metadata.len()
            ));
        }
        Ok(())
    };
    refuse(&metadata)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000; // Linux, every architecture Rust supports
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_message(path, &e))?;
    refuse(&file.metadata().map_err(|e| io_message(path, &e))?)?;
    let mut bytes = Vec::with_capacity(metadata.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_message(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{} is larger than the limit of {limit} bytes",
            shown()
        ));
    }
    Ok(bytes)
}

pub fn io_message(path: &Path, error: &std::io::Error) -> String {
    let shown = crate::text::clean(&path.display().to_string());
    match error.kind() {
        std::io::ErrorKind::NotFound => format!("{shown}: no such file or directory"),
        std::io::ErrorKind::PermissionDenied => format!("{shown}: permission denied"),
        std::io::ErrorKind::NotADirectory => format!("{shown}: not a directory"),
        _ => {
            // The OS message without Rust's " (os error N)" suffix.
            let message = error.to_string();
            let message = message
                .split(" (os error")
                .next()
                .unwrap_or(&message)
                .to_string();
            format!("{shown}: {message}")
        }
    }
}

fn unreadable(message: String) -> Check {
    Check::fail(
        Rule::InputUnreadable,
        "file",
        Expected("a readable UTF-8 YAML file"),
        Actual("unreadable"),
        Pos::UNKNOWN,
        message,
    )
}

/// Checks schema file content; `label` names it in findings (a path, or `REF:path`).
pub fn load_bytes(label: &str, bytes: &[u8]) -> (FileReport, Option<SchemaFile>) {
    let mut report = FileReport::new(label);
    if bytes.len() as u64 > MAX_SCHEMA_FILE_BYTES {
        report.checks.push(unreadable(format!(
            "{label} is {} bytes; the limit is {MAX_SCHEMA_FILE_BYTES} bytes",
            bytes.len()
        )));
        return (report, None);
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let (line, column) = line_column_at(bytes, error.valid_up_to());
            let mut check = unreadable(format!(
                "not valid UTF-8: byte 0x{:02x} at line {line}, column {column}; schema files must be UTF-8",
                bytes[error.valid_up_to()]
            ));
            check.line = line;
            check.column = column;
            report.checks.push(check);
            return (report, None);
        }
    };
    let root = match yaml::parse(text) {
        Ok(root) => root,
        Err(error) => {
            let rule = match error.kind {
                YamlErrorKind::Syntax => Rule::YamlSyntax,
                YamlErrorKind::DuplicateKey => Rule::YamlDuplicateKey,
                YamlErrorKind::Limits => Rule::YamlLimits,
            };
            report.checks.push(Check::fail(
                rule,
                "file",
                Expected("well-formed YAML"),
                Actual("malformed"),
                error.pos,
                error.message,
            ));
            return (report, None);
        }
    };
    // Ignore comments, read once the strings are known (a `#` inside one is text).
    let mut strings = Vec::new();
    root.string_bytes(&mut strings);
    let (ignores, malformed) = crate::suppress::scan(text, &strings);
    report.ignores = ignores;
    report.checks.extend(malformed);
    if root.value == yaml::NodeValue::Null {
        // The path is the finding's own prefix; say what the document is instead.
        let found = if text.trim().is_empty() {
            "an empty file".to_string()
        } else {
            format!("`{}`", short(text.trim()))
        };
        let mut check = unreadable(format!("expected a feature view mapping, found {found}"));
        check.line = 1;
        check.column = 1;
        report.checks.push(check);
        return (report, None);
    }
    let json = root.to_json();
    report.view = json.get("name").and_then(Value::as_str).map(str::to_string);
    report.schema_version = json
        .get("schema_version")
        .and_then(Value::as_str)
        .map(str::to_string);

    let violations = json_schema_checks(&root, &json, text);
    let valid = violations.is_empty();
    report.checks.extend(violations);
    if valid {
        report.checks.push(Check::pass(
            Rule::SchemaViolation,
            "format",
            Expected("feature-view.schema.json"),
            Actual("matches"),
            Pos::new(1, 1),
        ));
    } else {
        return (report, None);
    }
    let spec: FeatureViewSpec = match serde_json::from_value(json) {
        Ok(spec) => spec,
        Err(error) => {
            // The JSON Schema and the Rust types describe the same format; this only fires
            // if they drift apart, and then it still names the file.
            report.checks.push(Check::fail(
                Rule::SchemaViolation,
                "format",
                Expected("feature-view.schema.json"),
                Actual("does not decode"),
                Pos::new(1, 1),
                format!(
                    "the file matches feature-view.schema.json but does not decode: {}",
                    crate::text::clean(error.to_string().lines().next().unwrap_or(""))
                ),
            ));
            return (report, None);
        }
    };
    let mut spec = spec;
    for (index, feature) in spec.features.iter_mut().enumerate() {
        if let Some(constraints) = &mut feature.constraints {
            let raw = |key: &str| {
                let bytes = root
                    .get(&format!("/features/{index}/constraints/{key}"))?
                    .bytes
                    .clone()?;
                text.get(bytes).map(|t| t.trim().to_string())
            };
            constraints.min_written = raw("min");
            constraints.max_written = raw("max");
        }
    }
    let file = SchemaFile {
        path: label.to_string(),
        root,
        spec,
    };
    report.checks.extend(file_checks(&file, text));
    (report, Some(file))
}

/// The byte offset of 1-based `line`, `column` (a column counted in bytes, as serde_json
/// counts) in `text`, clamped to its end.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column).min(text.len())
}

pub(crate) fn line_column_at(bytes: &[u8], offset: usize) -> (u64, u64) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count() as u64
        + 1;
    (line, column)
}

struct CompiledSchema {
    validator: jsonschema::Validator,
    document: Value,
}

fn compiled_schema() -> &'static CompiledSchema {
    static SCHEMA: OnceLock<CompiledSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        // Both parse steps are over a file compiled into the binary and covered by tests.
        let document: Value =
            serde_json::from_str(JSON_SCHEMA).expect("bundled JSON Schema is JSON");
        let validator =
            jsonschema::draft202012::new(&document).expect("bundled JSON Schema is valid");
        CompiledSchema {
            validator,
            document,
        }
    })
}

/// The value at `pointer` as the file writes it (`1e5`, `010`, `.inf`), cut and escaped;
/// `None` where the parser kept no source bytes.
fn written(root: &Node, text: &str, pointer: &str) -> Option<String> {
    let bytes = root.get(pointer)?.bytes.clone()?;
    Some(short(text.get(bytes)?))
}

fn json_schema_checks(root: &Node, json: &Value, text: &str) -> Vec<Check> {
    let schema = compiled_schema();
    let mut checks = Vec::new();
    for error in schema.validator.iter_errors(json) {
        let instance_path = error.instance_path().as_str().to_string();
        let subject = if instance_path.is_empty() {
            "the document".to_string()
        } else {
            display_path(&instance_path)
        };
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let schema_path = error.schema_path().as_str();
                let known = known_keys(&schema.document, schema_path);
                let one_of = format!("one of: {}", known.join(", "));
                // Where each key is written, by name once: a search of the mapping per
                // unknown key made 80,000 of them take minutes.
                let positions: std::collections::HashMap<&str, Pos> =
                    match root.get(&instance_path).map(|node| &node.value) {
                        Some(yaml::NodeValue::Map(entries)) => entries
                            .iter()
                            .map(|(k, _)| (k.name.as_str(), k.pos))
                            .collect(),
                        _ => Default::default(),
                    };
                let parent_pos = root.locate(&instance_path);
                for key in unexpected {
                    let suggestion = suggest::closest(key, known.iter().map(String::as_str))
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    let shown = crate::text::short(key);
                    checks.push(Check::fail(
                        Rule::SchemaUnknownKey,
                        format!("{subject}: key `{shown}`"),
                        Expected(one_of.clone()),
                        Actual(shown.clone()),
                        positions.get(key.as_str()).copied().unwrap_or(parent_pos),
                        format!("unknown key `{shown}` in {subject}{suggestion}"),
                    ));
                }
            }
            ValidationErrorKind::Required { property } => {
                let property = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                checks.push(Check::fail(
                    Rule::SchemaViolation,
                    format!("{subject}: key `{property}`"),
                    Expected("present"),
                    Actual("missing"),
                    root.locate(&instance_path),
                    format!("{subject} is missing the required key `{property}`"),
                ));
            }
            _ => {
                let found = written(root, text, &instance_path)
                    .filter(|_| !error.instance().is_object() && !error.instance().is_array())
                    .map_or_else(|| short_json(error.instance()), |w| format!("`{w}`"));
                let expected = expectation(&schema.document, error.schema_path().as_str());
                let keyword = error
                    .schema_path()
                    .as_str()
                    .rsplit('/')
                    .next()
                    .unwrap_or("");
                // Combinator keywords say "not valid under any of the schemas listed in
                // the 'oneOf' keyword": JSON Schema internals. Say what was expected.
                let message = if matches!(keyword, "oneOf" | "anyOf" | "allOf" | "not") {
                    format!("{subject}: expected {expected}, found {found}")
                } else {
                    // `masked` leaves the value out; say what was found, as written.
                    format!("{subject}: {}, found {found}", error.masked()).replace("  ", " ")
                };
                checks.push(Check::fail(
                    Rule::SchemaViolation,
                    subject.clone(),
                    Expected(expected),
                    Actual(found),
                    root.locate(&instance_path),
                    message,
                ));
            }
        }
    }
    checks
}

/// `/features/0/type` → `features[0].type`, the way users read paths.
pub fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for token in pointer.split('/').skip(1) {
        if token.parse::<usize>().is_ok() {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            // A key from the file (a tag's name): cut like every value shown.
            out.push_str(&crate::text::short(token));
        }
    }
    out
}

/// The keys the schema defines next to the `additionalProperties` keyword at `schema_path`.
fn known_keys(document: &Value, schema_path: &str) -> Vec<String> {
    let parent = schema_path.trim_end_matches("/additionalProperties");
    document
        .pointer(&format!("{parent}/properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// A short statement of what the failing keyword wanted.
fn expectation(document: &Value, schema_path: &str) -> String {
    let keyword = schema_path.rsplit('/').next().unwrap_or("");
    let value = document.pointer(schema_path);
    match (keyword, value) {
        ("type", Some(Value::String(ty))) => ty.clone(),
        ("type", Some(Value::Array(types))) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        ("enum", Some(Value::Array(options))) => {
            format!(
                "one of {}",
                options
                    .iter()
                    .map(short_json)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        ("pattern", Some(Value::String(pattern))) => format!("matching {pattern}"),
        ("oneOf", _) if schema_path.ends_with("/ttl/oneOf") => {
            "seconds (integer ≥ 0) or a duration like 90s, 15m, 6h, 1d".into()
        }
        ("minItems", Some(n)) => format!("at least {n} item(s)"),
        ("minimum", Some(n)) => format!(">= {n}"),
        ("minLength", Some(n)) => format!("at least {n} character(s)"),
        ("minProperties", Some(n)) => format!("at least {n} key(s)"),
        (keyword, _) => format!("valid `{keyword}`"),
    }
}

fn short_json(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(57).collect::<String>())
    } else {
        text
    }
}

/// Checks that need only the file: types, duplicates, constraints, versions, timestamps.
fn file_checks(file: &SchemaFile, text: &str) -> Vec<Check> {
    let spec = &file.spec;
    let root = &file.root;
    let mut checks = Vec::new();

    // Types.
    let typed =
        |rule: Rule, subject: String, type_name: &str, pointer: String, checks: &mut Vec<Check>| {
            match FeatureType::parse(type_name) {
                Ok(ty) => checks.push(Check::pass(
                    rule,
                    subject,
                    Expected("a known type"),
                    Actual(ty.to_string()),
                    root.locate(&pointer),
                )),
                Err(message) => checks.push(Check::fail(
                    rule,
                    subject.clone(),
                    Expected("a known type"),
                    Actual(crate::text::short(type_name)),
                    root.locate(&pointer),
                    format!("{subject}: {message}"),
                )),
            }
        };
    for (index, feature) in spec.features.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("feature {}: type syntax", crate::text::short(&feature.name)),
            &feature.type_name,
            format!("/features/{index}/type"),
            &mut checks,
        );
    }
    for (index, entity) in spec.entities.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("entity {}: type syntax", crate::text::short(&entity.name)),
            &entity.type_name,
            format!("/entities/{index}/type"),
            &mut checks,
        );
    }

    // Duplicate names among features and entity join keys.
    let mut seen: HashSet<&str> = HashSet::new();
    let join_keys: HashSet<&str> = spec.entities.iter().map(|e| e.join_key.as_str()).collect();
    let mut duplicates = 0;
    // Two entities of one name (with different join keys) are as ambiguous: which one
    // would the store and the earlier revision be compared with?
    let mut entity_names: HashSet<&str> = HashSet::new();
    for (index, entity) in spec.entities.iter().enumerate() {
        if !entity_names.insert(&entity.name) {
            duplicates += 1;
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("entity {}", short(&entity.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&entity.name))),
                root.locate(&format!("/entities/{index}/name")),
                format!("entity `{}` is declared twice", short(&entity.name)),
            ));
        }
    }
    for (index, entity) in spec.entities.iter().enumerate() {
        if !seen.insert(&entity.join_key) {
            duplicates += 1;
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("entity {}: join key", short(&entity.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&entity.join_key))),
                root.locate(&format!("/entities/{index}/join_key")),
                format!("join key `{}` is declared twice", short(&entity.join_key)),
            ));
        }
    }
    for (index, feature) in spec.features.iter().enumerate() {
        if !seen.insert(&feature.name) {
            duplicates += 1;
            let first = join_keys.contains(feature.name.as_str());
            let what = if first {
                "an entity join key"
            } else {
                "an earlier feature"
            };
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("feature {}", short(&feature.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&feature.name))),
                root.locate(&format!("/features/{index}/name")),
                format!(
                    "feature `{}` has the same name as {what}",
                    short(&feature.name)
                ),
            ));
        }
    }
    if duplicates == 0 {
        checks.push(Check::pass(
            Rule::DuplicateFeature,
            "feature names",
            Expected("unique"),
            Actual(format!("{} unique", seen.len())),
            root.locate_key("", "features"),
        ));
    }

    // Constraints.
    for (index, feature) in spec.features.iter().enumerate() {
        let Some(constraints) = &feature.constraints else {
            continue;
        };
        let pointer = format!("/features/{index}/constraints");
        let subject = format!("feature {}: constraints", short(&feature.name));
        let ty = FeatureType::parse(&feature.type_name).ok();
        let numeric = matches!(
            ty,
            Some(
                FeatureType::Int32
                    | FeatureType::Int64
                    | FeatureType::Float32
                    | FeatureType::Float64
            )
        );
        let mut problems = Vec::new();
        if (constraints.min.is_some() || constraints.max.is_some()) && ty.is_some() && !numeric {
            problems.push(format!(
                "min/max need a numeric type, found {}",
                short(&feature.type_name)
            ));
        }
        // Bounds as written (`1e23`, not `1e+23`) and compared exactly, whatever their size:
        // through f64, 9223372036854775808 > 9223372036854775807 is false.
        let shown = |written: &Option<String>, number: &Option<serde_json::Number>| {
            written.as_deref().map_or_else(
                || number.as_ref().map_or(String::new(), |n| n.to_string()),
                short,
            )
        };
        let (min_shown, max_shown) = (
            shown(&constraints.min_written, &constraints.min),
            shown(&constraints.max_written, &constraints.max),
        );
        let (min, max) = (constraints.min_exact(), constraints.max_exact());
        if let (Some(min), Some(max)) = (&min, &max) {
            if min.cmp_value(max) == std::cmp::Ordering::Greater {
                problems.push(format!("min {min_shown} is greater than max {max_shown}"));
            }
        }
        // In the type's range: `min: 5000000000` holds for no int32.
        let range = match ty {
            Some(FeatureType::Int32) => Some((
                ExactNumber::int(i32::MIN.into()),
                ExactNumber::int(i32::MAX.into()),
            )),
            Some(FeatureType::Int64) => Some((
                ExactNumber::int(i64::MIN.into()),
                ExactNumber::int(i64::MAX.into()),
            )),
            Some(FeatureType::Float32) => Some((
                ExactNumber::Float(-f64::from(f32::MAX)),
                ExactNumber::Float(f64::from(f32::MAX)),
            )),
            Some(FeatureType::Float64) => {
                Some((ExactNumber::Float(f64::MIN), ExactNumber::Float(f64::MAX)))
            }
            _ => None,
        };
        if let Some((lo, hi)) = &range {
            for (what, bound, written) in [("min", &min, &min_shown), ("max", &max, &max_shown)] {
                let Some(bound) = bound else { continue };
                if bound.cmp_value(lo).is_lt() || bound.cmp_value(hi).is_gt() {
                    problems.push(format!(
                        "{what} {written} is outside the range of {}",
                        short(&feature.type_name)
                    ));
                }
            }
        }
        if let (Some(values), Some(ty)) = (&constraints.allowed_values, &ty) {
            // In the type's range too: 3000000000 is no int32 value.
            let fits = |v: &Value| match ty {
                FeatureType::String => v.is_string(),
                FeatureType::Bool => v.is_boolean(),
                FeatureType::Int32 => v.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                FeatureType::Int64 => v.is_i64(),
                FeatureType::Float32 => v
                    .as_f64()
                    .is_some_and(|f| f.is_finite() && f.abs() <= f64::from(f32::MAX)),
                FeatureType::Float64 => v.as_f64().is_some_and(f64::is_finite),
                _ => false,
            };
            if let Some(bad) = values.iter().find(|v| !fits(v)) {
                problems.push(format!(
                    "allowed value {} is not a {ty} value",
                    crate::text::quote(&bad.to_string(), 60)
                ));
            }
        }
        if problems.is_empty() {
            checks.push(Check::pass(
                Rule::ConstraintInvalid,
                subject,
                Expected("satisfiable"),
                Actual("ok"),
                root.locate(&pointer),
            ));
        } else {
            checks.push(Check::fail(
                Rule::ConstraintInvalid,
                subject.clone(),
                Expected("satisfiable constraints"),
                Actual(problems.join("; ")),
                root.locate(&pointer),
                format!("{subject}: {}", problems.join("; ")),
            ));
        }
    }

    // Event timestamp declaration.
    let ts = &spec.event_timestamp;
    let ts_pos = root.locate("/event_timestamp");
    let mut ts_problems = Vec::new();
    if ts.kind == "datetime64" && ts.unit != "ns" && root.get("/event_timestamp/unit").is_some() {
        ts_problems.push(format!(
            "datetime64 is always in ns, found unit {}",
            short(&ts.unit)
        ));
    }
    if ts.kind == "datetime64" && root.get("/event_timestamp/tz").is_some() && ts.tz.is_some() {
        ts_problems.push("datetime64 is naive; remove tz or use type: timestamp".to_string());
    }
    if let Some(tz) = &ts.tz {
        if ts.kind != "datetime64" && !crate::types::valid_time_zone(tz) {
            ts_problems.push(format!(
                "unknown time zone `{}`: expected an IANA time-zone name (UTC, Europe/Paris, ...) or a fixed offset (+05:30)",
                crate::text::quote(tz, 60)
            ));
        }
    }
    if !ts.required {
        ts_problems.push(
            "required: false; point-in-time joins need every row to carry an event timestamp"
                .to_string(),
        );
    }
    if ts_problems.is_empty() {
        checks.push(Check::pass(
            Rule::TimestampDeclaration,
            "event timestamp: declaration",
            Expected("required timestamp"),
            Actual(format!("{} {}", short(&ts.name), ts.feature_type())),
            ts_pos,
        ));
    } else {
        checks.push(Check::fail(
            Rule::TimestampDeclaration,
            "event timestamp: declaration",
            Expected("a required timestamp"),
            Actual(ts_problems.join("; ")),
            ts_pos,
            format!(
                "event timestamp `{}`: {}",
                short(&ts.name),
                ts_problems.join("; ")
            ),
        ));
    }

    // TTL: malformed or out of range is a finding at its position, never a skipped check.
    if let Some(ttl) = &spec.ttl {
        if let Err(message) = ttl.seconds() {
            // Quote the value as written: `86400.0` and `1e5` were shown as 86400 and
            // 100000, `9223372036854775808` as a float.
            let found = written(root, text, "/ttl").unwrap_or_else(|| ttl.written());
            let message = match ttl {
                TtlSpec::Duration(_) => message,
                _ => format!(
                    "ttl: expected a whole number of seconds from 0 to {} (10,000 years) or a duration such as 90s, 6h, 1d12h; found `{found}`{}",
                    crate::store::MAX_TTL_SECONDS,
                    if found.bytes().all(|b| b.is_ascii_digit()) {
                        ", which is out of range"
                    } else {
                        ""
                    }
                ),
            };
            checks.push(Check::fail(
                Rule::SchemaViolation,
                "ttl",
                Expected(format!("0 to {} s", crate::store::MAX_TTL_SECONDS)),
                Actual(found),
                root.locate("/ttl"),
                message,
            ));
        }
    }

    // Versions.
    let version_pos = root.locate("/schema_version");
    match semver::Version::parse(&spec.schema_version) {
        Ok(version) => {
            checks.push(Check::pass(
                Rule::VersionSemver,
                "schema_version",
                Expected("MAJOR.MINOR.PATCH"),
                Actual(short(&version.to_string())),
                version_pos,
            ));
            let name_pos = root.locate("/name");
            if let Some(Err(message)) = name_version_suffix(&spec.name) {
                checks.push(Check::fail(
                    Rule::VersionNameSuffix,
                    "name suffix",
                    Expected(format!("_v{}", version.major)),
                    Actual("out of range"),
                    name_pos,
                    message,
                ));
            }
            if let Some(Ok(suffix)) = name_version_suffix(&spec.name) {
                if suffix == version.major {
                    checks.push(Check::pass(
                        Rule::VersionNameSuffix,
                        "name suffix",
                        Expected(format!("_v{}", version.major)),
                        Actual(format!("_v{suffix}")),
                        name_pos,
                    ));
                } else {
                    checks.push(Check::fail(Rule::VersionNameSuffix, "name suffix", Expected(format!("_v{}", version.major)), Actual(format!("_v{suffix}")), name_pos, format!("view name `{}` ends in _v{suffix} but schema_version {} has major version {}", short(&spec.name), short(&version.to_string()), version.major)));
                }
            }
        }
        Err(error) => checks.push(Check::fail(
            Rule::VersionSemver,
            "schema_version",
            Expected("MAJOR.MINOR.PATCH"),
            Actual(short(&spec.schema_version)),
            version_pos,
            format!(
                "schema_version `{}` is not a semantic version (expected MAJOR.MINOR.PATCH such as 1.2.0): {}",
                short(&spec.schema_version),
                short(&error.to_string())
            ),
        )),
    }
    checks
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
            crate::text::quote(name, 80),
            crate::text::quote(suffix, 40),
            u64::MAX
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    const VIEW: &str = "name: v_v1\nschema_version: 1.0.0\nentities: [{name: driver, join_key: d, type: int64}]\nevent_timestamp: {name: ts}\nfeatures:\n  - name: f\n    type: int64\n";

    fn findings(text: &str, rule: Rule) -> Vec<Check> {
        load_bytes("v.yaml", text.as_bytes())
            .0
            .checks
            .into_iter()
            .filter(|c| c.rule == rule && c.status.is_finding())
            .collect()
    }

    /// Compared through f64, 9007199254740993 > 9007199254740992 was false.
    #[test]
    fn integer_bounds_are_compared_exactly() {
        let bounds =
            |min: &str, max: &str| format!("{VIEW}    constraints: {{min: {min}, max: {max}}}\n");
        let found = findings(
            &bounds("9007199254740993", "9007199254740992"),
            Rule::ConstraintInvalid,
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0]
                .message
                .contains("min 9007199254740993 is greater than max 9007199254740992"),
            "{}",
            found[0].message
        );
        assert!(findings(
            &bounds("9007199254740992", "9007199254740993"),
            Rule::ConstraintInvalid
        )
        .is_empty());
        assert_eq!(
            findings(&bounds("1.5", "1"), Rule::ConstraintInvalid).len(),
            1
        );
        assert!(findings(&bounds("-1", "0.5"), Rule::ConstraintInvalid).is_empty());
    }

    /// Bounds beyond i64 were compared through f64 (`9223372036854775808 > i64::MAX` was
    /// false), never against the type's range, and shown as serde prints them (`1e+23`).
    #[test]
    fn bounds_are_exact_in_range_and_shown_as_written() {
        let typed = |ty: &str, min: &str, max: &str| {
            format!("{VIEW}    constraints: {{min: {min}, max: {max}}}\n").replace(
                "type: int64\n    constraints",
                &format!("type: {ty}\n    constraints"),
            )
        };
        let messages = |text: &str| -> Vec<String> {
            findings(text, Rule::ConstraintInvalid)
                .into_iter()
                .map(|c| c.message)
                .collect()
        };
        let found = messages(&typed(
            "int64",
            "9223372036854775808",
            "9223372036854775807",
        ));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains("min 9223372036854775808 is greater than max 9223372036854775807"),
            "{found:?}"
        );
        assert!(
            found[0].contains("min 9223372036854775808 is outside the range of int64"),
            "{found:?}"
        );
        let found = messages(&typed("int64", "-9223372036854775809", "0"));
        assert!(
            found[0].contains("min -9223372036854775809 is outside the range"),
            "{found:?}"
        );
        let found = messages(&typed("int64", "0", "18446744073709551615"));
        assert!(
            found[0].contains("max 18446744073709551615 is outside the range"),
            "{found:?}"
        );
        let found = messages(&typed("int32", "5000000000", "6000000000"));
        assert!(
            found[0].contains("min 5000000000 is outside the range of int32"),
            "{found:?}"
        );
        let found = messages(&typed("float64", "1e23", "1e22"));
        assert!(
            found[0].contains("min 1e23 is greater than max 1e22"),
            "{found:?}"
        );
        // The extremes of the type are in range; floats beyond f32 are not float32.
        assert!(messages(&typed(
            "int64",
            "-9223372036854775808",
            "9223372036854775807"
        ))
        .is_empty());
        assert!(messages(&typed("int32", "-2147483648", "2147483647")).is_empty());
        assert_eq!(messages(&typed("float32", "0", "1e39")).len(), 1);
        assert!(messages(&typed("float64", "0", "1e39")).is_empty());
    }

    /// TTLs that are not whole seconds are quoted as written, with what was expected.
    #[test]
    fn ttl_findings_quote_the_value_as_written() {
        for written in [
            "010",
            "86400.0",
            "1e5",
            "9223372036854775808",
            "-1",
            "999999999999",
        ] {
            let text = VIEW.replace("features:", &format!("ttl: {written}\nfeatures:"));
            let (report, file) = load_bytes("v.yaml", text.as_bytes());
            let found: Vec<&Check> = report.findings().collect();
            assert!(!found.is_empty(), "{written}");
            let message = &found[0].message;
            assert!(
                message.contains(&format!("found `{written}`")),
                "{written}: {message}"
            );
            if file.is_some() {
                assert!(message.contains("whole number of seconds"), "{message}");
                assert_eq!(found[0].actual, written);
            }
        }
        let text = VIEW.replace("features:", "ttl: .inf\nfeatures:");
        let (report, _) = load_bytes("v.yaml", text.as_bytes());
        let message = &report.findings().next().unwrap().message;
        assert!(!message.contains("policy"), "{message}");
        assert!(
            message.contains("expected a finite number, found `.inf`"),
            "{message}"
        );
    }

    #[test]
    fn a_null_document_says_what_it_is() {
        for (text, found) in [
            ("null\n", "found `null`"),
            ("~", "found `~`"),
            ("\n\n", "an empty file"),
        ] {
            let (report, _) = load_bytes("t.yaml", text.as_bytes());
            let check = report.findings().next().unwrap();
            assert_eq!(check.rule, Rule::InputUnreadable);
            assert_eq!((check.line, check.column), (1, 1));
            assert!(check.message.contains(found), "{}", check.message);
            assert!(!check.message.contains("t.yaml"), "{}", check.message);
        }
    }

    #[test]
    fn schema_violations_say_what_was_found() {
        let text = VIEW.replace("type: int64\n", "type: int64\n    nullable: 7\n");
        let found = findings(&text, Rule::SchemaViolation);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].message.ends_with("found `7`"),
            "{}",
            found[0].message
        );
    }

    /// Each unknown key was located by a search of its mapping: 80,000 of them took
    /// minutes. Not timed here (shared machines): every key is found, at its line.
    #[test]
    fn many_unknown_keys_are_linear() {
        let keys: String = (0..20_000).map(|i| format!("k{i}: 1\n")).collect();
        let found = findings(&format!("{VIEW}{keys}"), Rule::SchemaUnknownKey);
        assert_eq!(found.len(), 20_000);
        assert!(found
            .iter()
            .all(|c| c.line > 7 && c.status == Status::Error));
        let last = found.iter().find(|c| c.actual == "k19999").unwrap();
        assert_eq!(last.line, 20_007);
    }
}
