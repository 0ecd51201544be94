//! Report renderers: text, json, junit, sarif, github, markdown.

//!
//! Each format is a module with a [`Renderer`]; [`Format::renderer`] picks one. [`render`]
//! and [`render_error`] escape every string from a file before any renderer sees it.

mod github;
mod json;
mod junit;
mod markdown;
mod sarif;
mod text;

use crate::report::{Check, FileReport, Report, Summary};

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

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Sarif => "sarif",
            Format::Github => "github",
            Format::Markdown => "markdown",
        }
    }

    /// The renderer of this format.
    pub fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Text => &text::Text,
            Format::Json => &json::Json,
            Format::Junit => &junit::Junit,
            Format::Sarif => &sarif::Sarif,
            Format::Github => &github::Github,
            Format::Markdown => &markdown::Markdown,
        }
    }

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

/// One report format.
pub trait Renderer {
    /// `report`, whose strings [`render`] has already escaped.
    fn render(&self, report: &Report, options: &RenderOptions) -> String;

    /// The report of a run that could not check anything; `message` is escaped.
    fn render_error(&self, message: &str, options: &RenderOptions) -> String;
}

pub struct RenderOptions {
    pub color: bool,
    /// Text only: every check of every file (the per-view tables), not just the findings
    /// and the summary. The structured formats ignore it.
    pub verbose: bool,
    pub deny_warnings: bool,
    /// The command, for report titles: "check" or "diff".
    pub command: &'static str,
}

/// Renders `report`. Every string in it may come from a hostile file, so the renderers
/// never see it raw: they render [`escaped`] copy, in which control characters and bidi
/// overrides are visible escapes (`\u{1b}`). Format-specific escaping (XML, JSON,
/// workflow commands, Markdown) comes on top.
pub fn render(report: &Report, format: Format, options: &RenderOptions) -> String {
    format.renderer().render(&escaped(report), options)
}

/// The most characters of one report field (a message, an expected or actual value, a
/// path) that any format writes. Messages quote values from files cut to
/// [`MAX_SHOWN`](crate::text::MAX_SHOWN); this bound holds for every field even where a
/// value reached one whole, so no file can flood a CI log.
pub const MAX_FIELD_CHARS: usize = 4000;

/// `report` with [`escape_controls`](crate::text::escape_controls) applied to every string,
/// each cut to [`MAX_FIELD_CHARS`].
pub fn escaped(report: &Report) -> Report {
    // The middle of a long field is left out, not its end (see `text::cap`).
    let clean = |text: &str| crate::text::cap(text, MAX_FIELD_CHARS);
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
                ignores: file.ignores.clone(),
                unchecked: file.unchecked,
                uncompared: file.uncompared.clone(),
            })
            .collect(),
        against_detail: crate::report::AgainstDetail {
            registry: report.against_detail.registry.as_deref().map(clean),
            revision: report.against_detail.revision.as_deref().map(clean),
            ..report.against_detail.clone()
        },
        baselined: report.baselined,
        ignored: report.ignored,
    }
}

/// The report of a run that could not check anything (exit code 2: a missing path, an
/// unreadable registry or configuration, a bad option), in `format`, so that CI steps
/// uploading the report (`if: always()`) find a valid file: JSON with an `error` field,
/// SARIF with the error as a tool execution notification and `executionSuccessful:
/// false`, JUnit with an `<error>`, a GitHub `::error` annotation, a Markdown note.
pub fn render_error(message: &str, format: Format, options: &RenderOptions) -> String {
    format
        .renderer()
        .render_error(&crate::text::cap(message, MAX_FIELD_CHARS), options)
}

fn location(path: &str, check: &Check) -> String {
    if check.line > 0 {
        format!("{path}:{}:{}", check.line, check.column)
    } else {
        path.to_string()
    }
}

fn summary_line(summary: &Summary) -> String {
    let mut accepted = String::new();
    if summary.baselined > 0 {
        accepted.push_str(&format!(", {} baselined", summary.baselined));
    }
    if summary.ignored > 0 {
        accepted.push_str(&format!(", {} ignored inline", summary.ignored));
    }
    format!(
        "{} file(s), {} view(s), {} check(s): {} passed, {} error(s), {} warning(s), {} info{accepted}",
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

/// A small report with a pass, an error, a file-level warning, an info and an unreadable
/// file, for the renderers' own tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::RenderOptions;
    use crate::report::{Actual, Check, Expected, FileReport, Report};
    use crate::rules::{Rule, Severity};
    use crate::yaml::Pos;

    pub fn sample() -> Report {
        let mut trips = FileReport::new("features/trips v1.yaml");
        trips.view = Some("trips_v1".into());
        trips.schema_version = Some("1.2.0".into());
        trips.checks = vec![
            Check::pass(
                Rule::FeatureType,
                "feature a: type",
                Expected("float32"),
                Actual("float32"),
                Pos::new(3, 5),
            ),
            Check::fail(
                Rule::FeatureMissing,
                "feature b",
                Expected("present"),
                Actual("absent"),
                Pos::new(7, 9),
                "feature `b` is declared but the store has no such feature",
            ),
            Check::finding(
                Rule::TimestampType,
                Severity::Warning,
                "event timestamp: type",
                Expected("list<int64>"),
                Actual("a|b"),
                Pos::UNKNOWN,
                "declared list<int64>, the store has a|b, a, b: compatible",
            ),
            Check::fail(
                Rule::FeatureCount,
                "feature count",
                Expected("2"),
                Actual("1"),
                Pos::new(1, 1),
                "2 declared, 1 in the store",
            ),
        ];
        let mut broken = FileReport::new("broken.yaml");
        broken.checks.push(Check::fail(
            Rule::InputUnreadable,
            "file",
            Expected("a feature view mapping"),
            Actual("empty"),
            Pos::UNKNOWN,
            "broken.yaml is empty; expected a feature view mapping",
        ));
        Report::new("registry.json", vec![trips, broken])
    }

    pub fn options() -> RenderOptions {
        RenderOptions {
            color: false,
            verbose: false,
            deny_warnings: false,
            command: "check",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Actual, Expected};
    use crate::rules::Rule;
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
            crate::rules::Severity::Warning,
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
        Report::new(HOSTILE, vec![file])
    }

    fn options() -> RenderOptions {
        RenderOptions {
            color: false,
            verbose: false,
            deny_warnings: false,
            command: "check",
        }
    }

    /// `&#NN;` references as the characters they stand for.
    fn decode_character_references(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("&#") {
            out.push_str(&rest[..at]);
            let end = at + rest[at..].find(';').unwrap();
            let code: u32 = rest[at + 2..end].parse().unwrap();
            out.push(char::from_u32(code).unwrap());
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
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
                // JSON doubles the backslash of the visible escape; Markdown writes
                // punctuation as character references.
                let shown = decode_character_references(&rendered.replace("\\\\", "\\"));
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
