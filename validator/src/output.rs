//! Report renderers: text, json, junit, sarif, github, markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::report::{Check, FileReport, Report, Status, Summary};
use crate::rules::{Category, Rule};

/// A report format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// Tables per file and findings, for a terminal.
    Text,
    /// The stable, versioned JSON report.
    Json,
    /// JUnit XML, for test-report viewers (GitLab, Jenkins).
    Junit,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations on the diff).
    Github,
    /// A pull-request comment.
    Markdown,
}

impl Format {
    pub const NAMES: &'static [&'static str] =
        &["text", "json", "junit", "sarif", "github", "markdown"];

    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "text" => Format::Text,
            "json" => Format::Json,
            "junit" => Format::Junit,
            "sarif" => Format::Sarif,
            "github" => Format::Github,
            "markdown" => Format::Markdown,
            _ => return None,
        })
    }
}

pub struct RenderOptions {
    pub color: bool,
    pub deny_warnings: bool,
    /// The command, for report titles: "check" or "diff".
    pub command: &'static str,
}

/// Renders `report`. Every string in it may come from a hostile file, so the renderers
/// never see it raw: they render [`escaped`] copy, in which control characters and bidi
/// overrides are visible escapes (`\u{1b}`). Format-specific escaping (XML, JSON,
/// workflow commands, Markdown) comes on top.
pub fn render(report: &Report, format: Format, options: &RenderOptions) -> String {
    let report = &escaped(report);
    match format {
        Format::Text => text(report, options),
        Format::Json => json(report, options),
        Format::Junit => junit(report, options),
        Format::Sarif => sarif(report),
        Format::Github => github(report),
        Format::Markdown => markdown(report, options),
    }
}

/// `report` with [`escape_controls`](crate::text::escape_controls) applied to every string.
pub fn escaped(report: &Report) -> Report {
    use crate::text::clean;
    Report {
        against: clean(&report.against),
        files: report
            .files
            .iter()
            .map(|file| FileReport {
                path: clean(&file.path),
                view: file.view.as_deref().map(clean),
                schema_version: file.schema_version.as_deref().map(clean),
                checks: file
                    .checks
                    .iter()
                    .map(|check| Check {
                        subject: clean(&check.subject),
                        expected: clean(&check.expected),
                        actual: clean(&check.actual),
                        message: clean(&check.message),
                        ..check.clone()
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The report of a run that could not check anything (exit code 2: a missing path, an
/// unreadable registry or configuration, a bad option), in `format`, so that CI steps
/// uploading the report (`if: always()`) find a valid file: JSON with an `error` field,
/// SARIF with the error as a tool execution notification and `executionSuccessful:
/// false`, JUnit with an `<error>`, a GitHub `::error` annotation, a Markdown note.
pub fn render_error(message: &str, format: Format, options: &RenderOptions) -> String {
    use serde_json::json;
    let message = crate::text::clean(message);
    let command = options.command;
    match format {
        Format::Text => format!("arrowfeat {command}: error: {message}\n"),
        Format::Json => {
            let document = json!({
                "format": "arrowfeat-check-report",
                "format_version": 1,
                "tool_version": env!("CARGO_PKG_VERSION"),
                "command": command,
                "against": "",
                "exit_code": 2,
                "error": message,
                "summary": Summary::default(),
                "files": [],
            });
            serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
        }
        Format::Junit => format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"arrowfeat {command}\" tests=\"1\" failures=\"0\" errors=\"1\">\n  \
             <testsuite name=\"arrowfeat {command}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    \
             <testcase name=\"arrowfeat {command}\" classname=\"arrowfeat\">\n      \
             <error type=\"usage\" message=\"{}\">{}</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n",
            xml_escape(&message),
            xml_escape(&message)
        ),
        Format::Sarif => {
            let document = json!({
                "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
                "version": "2.1.0",
                "runs": [{
                    "tool": {"driver": {
                        "name": "arrowfeat",
                        "version": env!("CARGO_PKG_VERSION"),
                        "informationUri": "https://github.com/arrowfeat/arrowfeat",
                        "rules": [],
                    }},
                    "invocations": [{
                        "executionSuccessful": false,
                        "exitCode": 2,
                        "toolExecutionNotifications": [{
                            "level": "error",
                            "message": {"text": message},
                        }],
                    }],
                    "results": [],
                }],
            });
            serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
        }
        Format::Github => format!(
            "::error title={}::{}\n",
            escape_property(&format!("arrowfeat {command}")),
            escape_data(&message)
        ),
        Format::Markdown => format!(
            "### ❌ arrowfeat {command} could not run\n\n{}\n",
            md_cell(&message)
        ),
    }
}

fn location(path: &str, check: &Check) -> String {
    if check.line > 0 {
        format!("{path}:{}:{}", check.line, check.column)
    } else {
        path.to_string()
    }
}

fn summary_line(summary: &Summary) -> String {
    format!(
        "{} file(s), {} view(s), {} check(s): {} passed, {} error(s), {} warning(s), {} info",
        summary.files,
        summary.views,
        summary.checks,
        summary.passed,
        summary.errors,
        summary.warnings,
        summary.infos
    )
}

fn verdict(report: &Report, deny_warnings: bool) -> &'static str {
    match report.exit_code(deny_warnings) {
        0 => "passed",
        1 => "failed",
        _ => "failed: unreadable input",
    }
}

// ---- text -------------------------------------------------------------------------------

fn paint(text: &str, status: Status, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let code = match status {
        Status::Pass => "32",
        Status::Info => "36",
        Status::Warning => "33",
        Status::Error => "31;1",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(width - 1).collect::<String>())
    }
}

fn text(report: &Report, options: &RenderOptions) -> String {
    let mut out = String::new();
    for file in &report.files {
        let title = match (&file.view, &file.schema_version) {
            (Some(view), Some(version)) => format!("{} — {view} {version}", file.path),
            (Some(view), None) => format!("{} — {view}", file.path),
            _ => file.path.clone(),
        };
        let _ = writeln!(
            out,
            "{}",
            if options.color {
                format!("\x1b[1m{title}\x1b[0m")
            } else {
                title
            }
        );
        let widths = [
            file.checks
                .iter()
                .map(|c| c.subject.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(5, 40),
            file.checks
                .iter()
                .map(|c| c.expected.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(8, 32),
            file.checks
                .iter()
                .map(|c| c.actual.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(6, 40),
        ];
        let _ = writeln!(
            out,
            "  {:<w0$}  {:<w1$}  {:<w2$}  STATUS",
            "CHECK",
            "EXPECTED",
            "ACTUAL",
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        for check in &file.checks {
            let status = paint(check.status.as_str(), check.status, options.color);
            let _ = writeln!(
                out,
                "  {:<w0$}  {:<w1$}  {:<w2$}  {status}",
                clip(&check.subject, widths[0]),
                clip(&check.expected, widths[1]),
                clip(&check.actual, widths[2]),
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            );
        }
        let findings: Vec<&Check> = file.findings().collect();
        if !findings.is_empty() {
            out.push('\n');
        }
        for check in findings {
            let label = paint(
                &format!("{}[{}]", check.status.as_str(), check.rule),
                check.status,
                options.color,
            );
            let _ = writeln!(
                out,
                "  {label} {}: {}",
                location(&file.path, check),
                check.message
            );
        }
        out.push('\n');
    }
    let summary = report.summary();
    let _ = writeln!(
        out,
        "arrowfeat {} against {}: {}",
        options.command,
        report.against,
        verdict(report, options.deny_warnings)
    );
    let _ = writeln!(out, "{}", summary_line(&summary));
    out
}

// ---- json -------------------------------------------------------------------------------

/// The documented, stable JSON report (docs/ci.md#json-report).
#[derive(Serialize)]
struct JsonReport<'a> {
    format: &'static str,
    format_version: u32,
    tool_version: &'static str,
    command: &'static str,
    against: &'a str,
    exit_code: i32,
    summary: Summary,
    files: &'a [FileReport],
}

fn json(report: &Report, options: &RenderOptions) -> String {
    let document = JsonReport {
        format: "arrowfeat-check-report",
        format_version: 1,
        tool_version: env!("CARGO_PKG_VERSION"),
        command: options.command,
        against: &report.against,
        exit_code: report.exit_code(options.deny_warnings),
        summary: report.summary(),
        files: &report.files,
    };
    // Serializing plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
}

// ---- junit ------------------------------------------------------------------------------

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// One test suite per file, one test case per (view, rule).
fn junit(report: &Report, options: &RenderOptions) -> String {
    let mut suites = String::new();
    let mut total_tests = 0;
    let mut total_failures = 0;
    let mut total_errors = 0;
    for file in &report.files {
        let suite_name = file.view.clone().unwrap_or_else(|| file.path.clone());
        let mut by_rule: BTreeMap<&str, Vec<&Check>> = BTreeMap::new();
        for check in &file.checks {
            by_rule.entry(check.rule.as_str()).or_default().push(check);
        }
        let mut cases = String::new();
        let (mut failures, mut errors) = (0, 0);
        for (rule, checks) in &by_rule {
            let is_input = checks[0].category() == Category::Input;
            let failing: Vec<&&Check> = checks
                .iter()
                .filter(|c| {
                    c.status == Status::Error
                        || (options.deny_warnings && c.status == Status::Warning)
                })
                .collect();
            let notes: Vec<&&Check> = checks
                .iter()
                .filter(|c| c.status.is_finding() && !failing.contains(c))
                .collect();
            let _ = write!(
                cases,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"",
                xml_escape(rule),
                xml_escape(&suite_name),
                xml_escape(&file.path)
            );
            if failing.is_empty() && notes.is_empty() {
                cases.push_str("/>\n");
                continue;
            }
            cases.push_str(">\n");
            if !failing.is_empty() {
                let element = if is_input { "error" } else { "failure" };
                if is_input {
                    errors += 1
                } else {
                    failures += 1
                }
                let body: Vec<String> = failing
                    .iter()
                    .map(|c| format!("{}: {}", location(&file.path, c), c.message))
                    .collect();
                let _ = writeln!(
                    cases,
                    "      <{element} type=\"{}\" message=\"{}\">{}</{element}>",
                    xml_escape(rule),
                    xml_escape(&failing[0].message),
                    xml_escape(&body.join("\n"))
                );
            }
            if !notes.is_empty() {
                let body: Vec<String> = notes
                    .iter()
                    .map(|c| {
                        format!(
                            "{}[{}] {}: {}",
                            c.status.as_str(),
                            c.rule,
                            location(&file.path, c),
                            c.message
                        )
                    })
                    .collect();
                let _ = writeln!(
                    cases,
                    "      <system-out>{}</system-out>",
                    xml_escape(&body.join("\n"))
                );
            }
            cases.push_str("    </testcase>\n");
        }
        total_tests += by_rule.len();
        total_failures += failures;
        total_errors += errors;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">\n{cases}  </testsuite>\n",
            xml_escape(&suite_name),
            by_rule.len()
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"arrowfeat {}\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"{total_errors}\">\n{suites}</testsuites>\n",
        options.command
    )
}

// ---- sarif ------------------------------------------------------------------------------

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

fn sarif(report: &Report) -> String {
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
    let document = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "arrowfeat",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/arrowfeat/arrowfeat",
                "rules": descriptors,
            }},
            "invocations": [{"executionSuccessful": true}],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
}

// ---- github -----------------------------------------------------------------------------

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions workflow commands: one annotation per finding.
fn github(report: &Report) -> String {
    let mut out = String::new();
    for (file, check) in report.findings() {
        let command = match check.status {
            Status::Error => "error",
            Status::Warning => "warning",
            _ => "notice",
        };
        let mut properties = format!("file={}", escape_property(&file.path));
        if check.line > 0 {
            let _ = write!(properties, ",line={},col={}", check.line, check.column);
        }
        let _ = write!(
            properties,
            ",title={}",
            escape_property(&format!("arrowfeat {}", check.rule))
        );
        let _ = writeln!(
            out,
            "::{command} {properties}::{}",
            escape_data(&check.message)
        );
    }
    out
}

// ---- markdown ---------------------------------------------------------------------------

fn md_cell(text: &str) -> String {
    // `<` would open an HTML tag in GitHub's Markdown (`list<float32>`).
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

fn markdown(report: &Report, options: &RenderOptions) -> String {
    let summary = report.summary();
    let icon = match report.exit_code(options.deny_warnings) {
        0 => "✅",
        _ => "❌",
    };
    let mut out = format!(
        "### {icon} arrowfeat {} {}\n\nAgainst {}: {}.\n\n",
        options.command,
        verdict(report, options.deny_warnings),
        md_cell(&report.against),
        summary_line(&summary)
    );
    let findings: Vec<(&FileReport, &Check)> = report.findings().collect();
    if !findings.is_empty() {
        out.push_str("| | rule | location | message |\n|---|---|---|---|\n");
        for (file, check) in &findings {
            let mark = match check.status {
                Status::Error => "❌ error",
                Status::Warning => "⚠️ warning",
                _ => "ℹ️ info",
            };
            let _ = writeln!(
                out,
                "| {mark} | `{}` | `{}` | {} |",
                check.rule,
                md_cell(&location(&file.path, check)),
                md_cell(&check.message)
            );
        }
        out.push('\n');
    }
    for file in &report.files {
        let title = file.view.clone().unwrap_or_else(|| file.path.clone());
        let _ = writeln!(
            out,
            "<details><summary><code>{}</code> ({})</summary>\n",
            md_cell(&title),
            md_cell(&file.path)
        );
        out.push_str("| check | expected | actual | status |\n|---|---|---|---|\n");
        for check in &file.checks {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                md_cell(&check.subject),
                md_cell(&check.expected),
                md_cell(&check.actual),
                check.status.as_str()
            );
        }
        out.push_str("\n</details>\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Actual, Expected};
    use crate::text::is_unsafe_char;
    use crate::yaml::Pos;

    const HOSTILE: &str = "x\u{1b}]0;owned\u{7}\u{1b}[2J\r\n::error::fake\u{202e}gpj.exe\u{2066}\u{85}\u{0}\u{fffe}`|<&>\"'%,:";

    fn hostile_report() -> Report {
        let mut file = FileReport::new(format!("dir/{HOSTILE}.yaml"));
        file.view = Some(HOSTILE.into());
        file.schema_version = Some(HOSTILE.into());
        for rule in [Rule::FeatureType, Rule::YamlSyntax, Rule::Ttl] {
            file.checks.push(Check::fail(
                rule,
                HOSTILE,
                Expected(HOSTILE),
                Actual(HOSTILE),
                Pos::new(3, 4),
                HOSTILE,
            ));
        }
        file.checks.push(Check::finding(
            Rule::CompatChange,
            crate::report::Severity::Warning,
            HOSTILE,
            Expected(HOSTILE),
            Actual(HOSTILE),
            Pos::UNKNOWN,
            HOSTILE,
        ));
        file.checks.push(Check::pass(
            Rule::Ttl,
            HOSTILE,
            Expected(HOSTILE),
            Actual(HOSTILE),
            Pos::new(1, 1),
        ));
        Report {
            against: HOSTILE.into(),
            files: vec![file],
        }
    }

    fn options() -> RenderOptions {
        RenderOptions {
            color: false,
            deny_warnings: false,
            command: "check",
        }
    }

    /// No format lets a control character or bidi override from a file through raw; the
    /// machine-readable formats stay valid.
    #[test]
    fn every_format_escapes_hostile_strings() {
        let report = hostile_report();
        for name in Format::NAMES {
            let format = Format::parse(name).unwrap();
            for rendered in [
                render(&report, format, &options()),
                render_error(HOSTILE, format, &options()),
            ] {
                // Newlines separate lines of the format itself; nothing else.
                let bad: Vec<char> = rendered
                    .chars()
                    .filter(|c| *c != '\n' && is_unsafe_char(*c))
                    .collect();
                assert!(bad.is_empty(), "{name}: {bad:?} in\n{rendered}");
                // JSON doubles the backslash of the visible escape.
                let shown = rendered.replace("\\\\", "\\");
                assert!(
                    shown.contains("\\u{1b}]0;owned\\u{7}"),
                    "{name}: {rendered}"
                );
                assert!(shown.contains("\\u{202e}"), "{name}");
                match format {
                    Format::Json | Format::Sarif => {
                        let value: serde_json::Value = serde_json::from_str(&rendered).unwrap();
                        assert!(value.is_object());
                    }
                    Format::Github => {
                        // One command per finding; a message cannot start a line, so it
                        // cannot issue a command of its own.
                        let lines: Vec<&str> = rendered.lines().collect();
                        assert!(lines.len() == 4 || lines.len() == 1, "{rendered}");
                        for line in lines {
                            assert!(
                                ["::error ", "::warning ", "::notice "]
                                    .iter()
                                    .any(|p| line.starts_with(p)),
                                "{line}"
                            );
                        }
                    }
                    Format::Junit => {
                        assert!(rendered.starts_with("<?xml"));
                        assert!(!rendered.contains("<&"), "{rendered}");
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn error_reports_are_valid_in_every_format() {
        let message = "--registry missing.json: no such file or directory";
        let sarif: serde_json::Value =
            serde_json::from_str(&render_error(message, Format::Sarif, &options())).unwrap();
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            message
        );
        assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
        let json: serde_json::Value =
            serde_json::from_str(&render_error(message, Format::Json, &options())).unwrap();
        assert_eq!(json["error"], message);
        assert_eq!(json["exit_code"], 2);
        let junit = render_error(message, Format::Junit, &options());
        assert!(junit.contains("errors=\"1\""), "{junit}");
        assert!(junit.contains("<error type=\"usage\""), "{junit}");
        let github = render_error(message, Format::Github, &options());
        assert!(
            github.starts_with("::error title=arrowfeat check::--registry"),
            "{github}"
        );
    }
}
