//! `--format json`: the documented, stable, versioned report (docs/ci.md#report-formats).

use serde::Serialize;

use super::{RenderOptions, Renderer};
use crate::report::{FileReport, Report, Summary};

pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report, options: &RenderOptions) -> String {
        let document = JsonReport {
            format: "arrowfeat-check-report",
            format_version: 1,
            tool_version: env!("CARGO_PKG_VERSION"),
            command: options.command,
            against: &report.against,
            against_detail: &report.against_detail,
            exit_code: report.exit_code(options.deny_warnings),
            summary: report.summary(),
            files: &report.files,
        };
        // Serializing plain structs of strings and numbers cannot fail.
        serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
    }

    fn render_error(&self, message: &str, options: &RenderOptions) -> String {
        use serde_json::json;
        let command = options.command;
        let document = json!({
            "format": "arrowfeat-check-report",
            "format_version": 1,
            "tool_version": env!("CARGO_PKG_VERSION"),
            "command": command,
            "against": "",
            "against_detail": crate::report::AgainstDetail::default(),
            "exit_code": 2,
            "error": message,
            "summary": Summary::default(),
            "files": [],
        });
        serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
    }
}

/// The documented, stable JSON report (docs/ci.md#json-report).
#[derive(Serialize)]
struct JsonReport<'a> {
    format: &'static str,
    format_version: u32,
    tool_version: &'static str,
    command: &'static str,
    against: &'a str,
    against_detail: &'a crate::report::AgainstDetail,
    exit_code: i32,
    summary: Summary,
    files: &'a [FileReport],
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, render_error, Format, RenderOptions};

    #[test]
    fn documented_shape() {
        let json: serde_json::Value =
            serde_json::from_str(&render(&sample(), Format::Json, &options())).unwrap();
        assert_eq!(json["format"], "arrowfeat-check-report");
        assert_eq!(json["format_version"], 1);
        assert_eq!(json["command"], "check");
        assert_eq!(json["against"], "registry.json");
        assert_eq!(json["exit_code"], 2);
        assert_eq!(json["summary"]["unreadable"], 1);
        assert_eq!(json["summary"]["checks"], 5);
        let check = &json["files"][0]["checks"][1];
        assert_eq!(check["rule"], "feature-missing");
        assert_eq!(check["status"], "error");
        assert_eq!(
            (check["line"].as_u64(), check["column"].as_u64()),
            (Some(7), Some(9))
        );
        assert_eq!(json["files"][1]["view"], serde_json::Value::Null);
    }

    #[test]
    fn deny_warnings_changes_the_exit_code_only() {
        let mut report = sample();
        report.files.truncate(1);
        report.files[0]
            .checks
            .retain(|c| c.rule != crate::rules::Rule::FeatureMissing);
        let exit = |deny_warnings| {
            let options = RenderOptions {
                deny_warnings,
                ..options()
            };
            let json: serde_json::Value =
                serde_json::from_str(&render(&report, Format::Json, &options)).unwrap();
            json["exit_code"].as_i64()
        };
        assert_eq!((exit(false), exit(true)), (Some(0), Some(1)));
    }

    #[test]
    fn error_report() {
        let json: serde_json::Value =
            serde_json::from_str(&render_error("bad", Format::Json, &options())).unwrap();
        assert_eq!(json["error"], "bad");
        assert_eq!(json["exit_code"], 2);
        assert_eq!(json["files"], serde_json::json!([]));
    }
}
