//! Reading a feature schema file: UTF-8, YAML, ignore comments, the JSON Schema
//! (`schemas/feature-view.schema.json`), then the [model](super::model).

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::model::{FeatureViewSpec, SchemaFile};
use crate::files::line_column_at;
use crate::report::{Actual, Check, Expected, FileReport};
use crate::rules::Rule;
use crate::suggest;
use crate::text::short;
use crate::yaml::{self, Node, Pos, YamlErrorKind};

/// The JSON Schema that defines the format (`schemas/feature-view.schema.json`).
pub const JSON_SCHEMA: &str = include_str!("../../../schemas/feature-view.schema.json");

/// Larger schema files are refused before parsing: a feature view with thousands of
/// features is a few hundred KiB.
pub const MAX_SCHEMA_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The finding for a file that cannot be read as a schema at all.
pub(crate) fn unreadable(message: String) -> Check {
    Check::fail(
        Rule::InputUnreadable,
        "file",
        Expected("a readable UTF-8 YAML file"),
        Actual("unreadable"),
        Pos::UNKNOWN,
        message,
    )
}

/// Reads schema file content: UTF-8, YAML, the file's ignore comments, the JSON Schema,
/// then the model. `label` names the file in findings (a path, or `REF:path`). The
/// report holds what reading found; the schema is returned when the file matches the
/// format. The checks that need only the file are
/// [`checks::file`](crate::checks::file)'s.
pub fn read(label: &str, bytes: &[u8]) -> (FileReport, Option<SchemaFile>) {
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
    (report, Some(file))
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
pub fn written(root: &Node, text: &str, pointer: &str) -> Option<String> {
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
                let mut message = if matches!(keyword, "oneOf" | "anyOf" | "allOf" | "not") {
                    format!("{subject}: expected {expected}, found {found}")
                } else {
                    // `masked` leaves the value out; say what was found, as written.
                    format!("{subject}: {}, found {found}", error.masked()).replace("  ", " ")
                };
                // YAML reads `1.2`, `yes` or `2024` unquoted as a number or a boolean:
                // where text was expected, say how to write it as text.
                let read_as = match error.instance().as_ref() {
                    Value::Number(_) => Some("a number"),
                    Value::Bool(_) => Some("a boolean"),
                    _ => None,
                };
                if let (Some(read_as), true) = (read_as, expected.contains("string")) {
                    message.push_str(&format!(
                        "; YAML reads it as {read_as}: quote it ({}) to write text",
                        found.replace('`', "\"")
                    ));
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    const VIEW: &str = "name: v_v1\nschema_version: 1.0.0\nentities: [{name: driver, join_key: d, type: int64}]\nevent_timestamp: {name: ts}\nfeatures:\n  - name: f\n    type: int64\n";

    fn findings(text: &str, rule: Rule) -> Vec<Check> {
        read("v.yaml", text.as_bytes())
            .0
            .checks
            .into_iter()
            .filter(|c| c.rule == rule && c.status.is_finding())
            .collect()
    }

    #[test]
    fn a_null_document_says_what_it_is() {
        for (text, found) in [
            ("null\n", "found `null`"),
            ("~", "found `~`"),
            ("\n\n", "an empty file"),
        ] {
            let (report, _) = read("t.yaml", text.as_bytes());
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
