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
                    "name": rule.as_str(),
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
        document(
            json!(descriptors),
            json!({"executionSuccessful": true}),
            json!(results),
        )
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

fn sarif_level(status: Status) -> &'static str {
    match status {
        Status::Error => "error",
        Status::Warning => "warning",
        Status::Info | Status::Pass => "note",
    }
}

/// A relative URI reference for a file path (RFC 3986: percent-encode what is not allowed).
fn uri(path: &str) -> String {
    // Windows separators become `/`; elsewhere a backslash is part of a name (or of a
    // visible escape such as `\u{7}`) and is percent-encoded like any other byte.
    let path = if cfg!(windows) {
        path.replace('\\', "/")
    } else {
        path.to_string()
    };
    let path = path.strip_prefix("./").unwrap_or(&path);
    let mut out = String::new();
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
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
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
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
    fn uris_are_percent_encoded() {
        assert_eq!(uri("./a b/ü.yaml"), "a%20b/%C3%BC.yaml");
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
}
