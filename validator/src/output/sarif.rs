//! `--format sarif`: SARIF 2.1.0 with the rule catalogue and one result per finding.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{RenderOptions, Renderer};
use crate::report::{Report, Status};
use crate::rules::Rule;

pub struct Sarif;

impl Renderer for Sarif {
    fn render(&self, report: &Report, _options: &RenderOptions) -> String {
        use serde_json::json;
        let rule_index: BTreeMap<&str, usize> = Rule::ALL
            .iter()
            .enumerate()
            .map(|(i, r)| (r.as_str(), i))
            .collect();
        let descriptors: Vec<_> = Rule::ALL
            .iter()
            .map(|rule| {
                json!({
                    "id": rule.as_str(),
                    "name": rule_name(*rule),
                    "shortDescription": {"text": rule.summary()},
                    "defaultConfiguration": {"level": sarif_level(Status::from_severity(rule.default_severity()))},
                    "helpUri": format!("https://github.com/arrowfeat/arrowfeat/blob/main/docs/rules.md#{}", rule.as_str()),
                    "properties": {"category": rule.category().as_str()},
                })
            })
            .collect();
        let mut results = Vec::new();
        for (file, check) in report.findings() {
            let mut physical = json!({"artifactLocation": {"uri": uri(&file.path)}});
            if check.line > 0 {
                physical["region"] =
                    json!({"startLine": check.line, "startColumn": check.column.max(1)});
            }
            let mut result = json!({
                "ruleId": check.rule,
                "level": sarif_level(check.status),
                "message": {"text": check.message},
                "locations": [{"physicalLocation": physical}],
                "properties": {"subject": check.subject, "expected": check.expected, "actual": check.actual},
            });
            if let Some(index) = rule_index.get(check.rule.as_str()) {
                result["ruleIndex"] = json!(index);
            }
            if let Some(view) = &file.view {
                result["properties"]["view"] = json!(view);
            }
            results.push(result);
        }
        // Unreadable input (exit 2) means the run did not check everything: not a
        // successful execution, as for a run that could not start.
        let invocation = if report.summary().unreadable > 0 {
            json!({"executionSuccessful": false, "exitCode": 2})
        } else {
            json!({"executionSuccessful": true})
        };
        document(json!(descriptors), invocation, json!(results))
    }

    fn render_error(&self, message: &str, _options: &RenderOptions) -> String {
        use serde_json::json;
        document(
            json!([]),
            json!({
                "executionSuccessful": false,
                "exitCode": 2,
                "toolExecutionNotifications": [{
                    "level": "error",
                    "message": {"text": message},
                }],
            }),
            json!([]),
        )
    }
}

/// The SARIF log of one run of arrowfeat.
fn document(
    rules: serde_json::Value,
    invocation: serde_json::Value,
    results: serde_json::Value,
) -> String {
    let document = serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "arrowfeat",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/arrowfeat/arrowfeat",
                "rules": rules,
            }},
            "invocations": [invocation],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
}

/// A rule's SARIF `name`: its id in PascalCase (`feature-type` → `FeatureType`). SARIF
/// wants `name` readable and distinct from the opaque `id`, case aside (SARIF1001).
fn rule_name(rule: Rule) -> String {
    match rule {
        Rule::Ttl => "TimeToLive".into(),
        _ => pascal_case(rule.as_str()),
    }
}

fn pascal_case(id: &str) -> String {
    id.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

fn sarif_level(status: Status) -> &'static str {
    match status {
        Status::Error => "error",
        Status::Warning => "warning",
        Status::Info | Status::Pass => "note",
    }
}

/// The URI of a file path (RFC 3986: percent-encode what is not allowed): a relative
/// reference for a relative path (with `:` encoded, so a first segment cannot read as a
/// scheme), a `file://` URI for an absolute one (SARIF1004: a relative reference must not
/// begin with `/`).
fn uri(path: &str) -> String {
    // Windows separators become `/`; elsewhere a backslash is part of a name (or of a
    // visible escape such as `\u{7}`) and is percent-encoded like any other byte.
    let path = if cfg!(windows) {
        path.replace('\\', "/")
    } else {
        path.to_string()
    };
    let path = path.strip_prefix("./").unwrap_or(&path);
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    let absolute = path.starts_with('/') || (cfg!(windows) && drive);
    let mut out = String::new();
    let normalized;
    let path = if absolute {
        out.push_str(if path.starts_with('/') {
            "file://"
        } else {
            "file:///"
        });
        // A file URI has no `.` or `..` segments (SARIF1002): removed as RFC 3986's
        // remove_dot_segments would.
        let mut segments: Vec<&str> = Vec::new();
        for segment in path.split('/') {
            match segment {
                "." => {}
                ".." => {
                    if segments.len() > 1 {
                        segments.pop();
                    }
                }
                _ => segments.push(segment),
            }
        }
        normalized = segments.join("/");
        normalized.as_str()
    } else {
        path
    };
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric()
            || b"-._~/!$&'()*+,;=@".contains(&byte)
            || (byte == b':' && absolute)
        {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    // Percent-encoding triples a path of escapes (`\u{1b}` is `%5Cu%7B1b%7D`): the URI
    // is held to the same bound as every field, cut before a `%XX`, never inside one.
    let max = super::MAX_FIELD_CHARS;
    if out.len() > max {
        let mut at = max - "%E2%80%A6".len();
        while out.as_bytes()[at - 1] == b'%' || out.as_bytes()[at - 2] == b'%' {
            at -= 1;
        }
        out.truncate(at);
        out.push_str("%E2%80%A6");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, render_error, Format};
    use super::uri;
    use crate::rules::Rule;

    #[test]
    fn results_point_at_rules_and_places() {
        let sarif: serde_json::Value =
            serde_json::from_str(&render(&sample(), Format::Sarif, &options())).unwrap();
        let run = &sarif["runs"][0];
        assert_eq!(
            run["tool"]["driver"]["rules"].as_array().unwrap().len(),
            Rule::ALL.len()
        );
        // The sample holds unreadable input: exit 2, not a successful execution.
        assert_eq!(run["invocations"][0]["executionSuccessful"], false);
        assert_eq!(run["invocations"][0]["exitCode"], 2);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 4);
        for result in results {
            let index = result["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(
                run["tool"]["driver"]["rules"][index]["id"],
                result["ruleId"]
            );
        }
        let missing = &results[0];
        assert_eq!(missing["level"], "error");
        let location = &missing["locations"][0]["physicalLocation"];
        assert_eq!(
            location["artifactLocation"]["uri"],
            "features/trips%20v1.yaml"
        );
        assert_eq!(location["region"]["startLine"], 7);
        // The whole-file warning has no region; the info is a note.
        assert!(results[1]["locations"][0]["physicalLocation"]
            .get("region")
            .is_none());
        assert_eq!(results[2]["level"], "note");
        assert_eq!(results[0]["properties"]["view"], "trips_v1");
    }

    #[test]
    fn rule_names_are_pascal_case_and_differ_from_ids() {
        assert_eq!(
            super::pascal_case("compat-breaking-change"),
            "CompatBreakingChange"
        );
        assert_eq!(super::pascal_case("ttl"), "Ttl");
        let sarif: serde_json::Value =
            serde_json::from_str(&render(&sample(), Format::Sarif, &options())).unwrap();
        for rule in sarif["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
        {
            let (name, id) = (rule["name"].as_str().unwrap(), rule["id"].as_str().unwrap());
            assert!(!name.eq_ignore_ascii_case(id), "{name}");
        }
    }

    #[test]
    fn long_uris_are_cut_between_escapes() {
        let path = "\u{1b}".repeat(3_000);
        let escaped = crate::text::cap(&path, crate::output::MAX_FIELD_CHARS);
        for prefix in ["", "a", "ab"] {
            let encoded = uri(&format!("{prefix}{escaped}"));
            assert!(
                encoded.len() <= crate::output::MAX_FIELD_CHARS,
                "{}",
                encoded.len()
            );
            assert!(encoded.ends_with("%E2%80%A6"));
            let body = encoded.trim_end_matches("%E2%80%A6");
            assert!(
                !body[body.len() - 2..].contains('%'),
                "{}",
                &body[body.len() - 6..]
            );
        }
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("./a b/ü.yaml"), "a%20b/%C3%BC.yaml");
        assert_eq!(uri("/abs/a b.yaml"), "file:///abs/a%20b.yaml");
        assert_eq!(uri("/a/./b/../../../c.yaml"), "file:///c.yaml");
        assert_eq!(uri("é:x"), "%C3%A9%3Ax");
        assert_eq!(uri("c:d.yaml"), "c%3Ad.yaml");
        assert_eq!(uri("x\\u{7}.yaml"), "x%5Cu%7B7%7D.yaml");
    }

    #[test]
    fn error_report_is_a_failed_invocation() {
        let sarif: serde_json::Value =
            serde_json::from_str(&render_error("bad", Format::Sarif, &options())).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        assert_eq!(invocation["exitCode"], 2);
    }

    /// Only unreadable input (exit 2) makes the execution unsuccessful; findings do not.
    #[test]
    fn findings_alone_are_a_successful_execution() {
        let mut report = sample();
        for file in &mut report.files {
            file.checks
                .retain(|c| c.rule.category() != crate::rules::Category::Input);
        }
        assert_ne!(report.exit_code(false), 2);
        let sarif: serde_json::Value =
            serde_json::from_str(&render(&report, Format::Sarif, &options())).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], true);
        assert!(invocation.get("exitCode").is_none());
    }
}
