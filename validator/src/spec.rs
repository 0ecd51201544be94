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
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    #[serde(default)]
    pub allowed_values: Option<Vec<Value>>,
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
        report.checks.push(unreadable(format!(
            "{label} is empty; expected a feature view mapping"
        )));
        return (report, None);
    }
    let json = root.to_json();
    report.view = json.get("name").and_then(Value::as_str).map(str::to_string);
    report.schema_version = json
        .get("schema_version")
        .and_then(Value::as_str)
        .map(str::to_string);

    let violations = json_schema_checks(&root, &json);
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
    let file = SchemaFile {
        path: label.to_string(),
        root,
        spec,
    };
    report.checks.extend(file_checks(&file));
    (report, Some(file))
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

fn json_schema_checks(root: &Node, json: &Value) -> Vec<Check> {
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
                for key in unexpected {
                    let suggestion = suggest::closest(key, known.iter().map(String::as_str))
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    checks.push(Check::fail(
                        Rule::SchemaUnknownKey,
                        format!("{subject}: key `{key}`"),
                        Expected(format!("one of: {}", known.join(", "))),
                        Actual(key.clone()),
                        root.locate_key(&instance_path, key),
                        format!("unknown key `{key}` in {subject}{suggestion}"),
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
                let found = short_json(error.instance());
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
                    format!("{subject}: {}", error.masked()).replace("  ", " ")
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
            out.push_str(token);
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
fn file_checks(file: &SchemaFile) -> Vec<Check> {
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
                    Actual(type_name),
                    root.locate(&pointer),
                    format!("{subject}: {message}"),
                )),
            }
        };
    for (index, feature) in spec.features.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("feature {}: type syntax", feature.name),
            &feature.type_name,
            format!("/features/{index}/type"),
            &mut checks,
        );
    }
    for (index, entity) in spec.entities.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("entity {}: type syntax", entity.name),
            &entity.type_name,
            format!("/entities/{index}/type"),
            &mut checks,
        );
    }

    // Duplicate names among features and entity join keys.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut duplicates = 0;
    for (index, entity) in spec.entities.iter().enumerate() {
        if !seen.insert(&entity.join_key) {
            duplicates += 1;
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("entity {}: join key", entity.name),
                Expected("unique names"),
                Actual(format!("`{}` again", entity.join_key)),
                root.locate(&format!("/entities/{index}/join_key")),
                format!("join key `{}` is declared twice", entity.join_key),
            ));
        }
    }
    for (index, feature) in spec.features.iter().enumerate() {
        if !seen.insert(&feature.name) {
            duplicates += 1;
            let first = spec.entities.iter().any(|e| e.join_key == feature.name);
            let what = if first {
                "an entity join key"
            } else {
                "an earlier feature"
            };
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("feature {}", feature.name),
                Expected("unique names"),
                Actual(format!("`{}` again", feature.name)),
                root.locate(&format!("/features/{index}/name")),
                format!("feature `{}` has the same name as {what}", feature.name),
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
        let subject = format!("feature {}: constraints", feature.name);
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
                feature.type_name
            ));
        }
        if let (Some(min), Some(max)) = (constraints.min, constraints.max) {
            if min > max {
                problems.push(format!("min {min} is greater than max {max}"));
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
            ts.unit
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
            Actual(format!("{} {}", ts.name, ts.feature_type())),
            ts_pos,
        ));
    } else {
        checks.push(Check::fail(
            Rule::TimestampDeclaration,
            "event timestamp: declaration",
            Expected("a required timestamp"),
            Actual(ts_problems.join("; ")),
            ts_pos,
            format!("event timestamp `{}`: {}", ts.name, ts_problems.join("; ")),
        ));
    }

    // TTL: malformed or out of range is a finding at its position, never a skipped check.
    if let Some(ttl) = &spec.ttl {
        if let Err(message) = ttl.seconds() {
            checks.push(Check::fail(
                Rule::SchemaViolation,
                "ttl",
                Expected(format!("0 to {} s", crate::store::MAX_TTL_SECONDS)),
                Actual("out of range"),
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
                Actual(version.to_string()),
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
                    checks.push(Check::fail(Rule::VersionNameSuffix, "name suffix", Expected(format!("_v{}", version.major)), Actual(format!("_v{suffix}")), name_pos, format!("view name `{}` ends in _v{suffix} but schema_version {} has major version {}", spec.name, version, version.major)));
                }
            }
        }
        Err(error) => checks.push(Check::fail(
            Rule::VersionSemver,
            "schema_version",
            Expected("MAJOR.MINOR.PATCH"),
            Actual(spec.schema_version.clone()),
            version_pos,
            format!(
                "schema_version `{}` is not a semantic version: {error}",
                spec.schema_version
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
