//! `--format text`: each finding as `severity[rule] file:line:column: message` under its
//! file, then the verdict and a summary line; with `verbose`, every file with a table of
//! check / expected / actual / status before its findings. ANSI colour when asked.

use std::fmt::Write as _;

use super::{location, summary_line, verdict, RenderOptions, Renderer};
use crate::report::{Check, FileReport, Report, Status};

pub struct Text;

impl Renderer for Text {
    fn render(&self, report: &Report, options: &RenderOptions) -> String {
        let mut out = String::new();
        for file in &report.files {
            let findings: Vec<&Check> = file.findings().collect();
            // Quiet by default (as ruff and buf): a file with nothing to say is not shown.
            if !options.verbose && findings.is_empty() {
                continue;
            }
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
            if options.verbose {
                table(&mut out, file, options.color);
            }
            if options.verbose && !findings.is_empty() {
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

    fn render_error(&self, message: &str, options: &RenderOptions) -> String {
        let command = options.command;
        format!("arrowfeat {command}: error: {message}\n")
    }
}

/// The table of every check of `file`: check / expected / actual / status (`--verbose`).
fn table(out: &mut String, file: &FileReport, color: bool) {
    let widths = [
        width(&file.checks, |c| &c.subject, 5, 56),
        width(&file.checks, |c| &c.expected, 8, 32),
        width(&file.checks, |c| &c.actual, 6, 40),
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
        let status = paint(check.status.as_str(), check.status, color);
        let _ = writeln!(
            out,
            "  {:<w0$}  {:<w1$}  {:<w2$}  {status}",
            clip_start(&check.subject, widths[0]),
            clip(&check.expected, widths[1]),
            clip(&check.actual, widths[2]),
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
}

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

/// The width of a table column: the longest value, within `min..=max`.
fn width(checks: &[Check], field: fn(&Check) -> &String, min: usize, max: usize) -> usize {
    checks
        .iter()
        .map(|c| field(c).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(min, max)
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(width - 1).collect::<String>())
    }
}

/// `text` cut at its start: a subject ends with what tells it from its neighbours (the
/// feature and the measure after a long data path).
fn clip_start(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        text.to_string()
    } else {
        format!(
            "…{}",
            text.chars().skip(count - (width - 1)).collect::<String>()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, Format, RenderOptions};

    fn verbose() -> RenderOptions {
        RenderOptions {
            verbose: true,
            ..options()
        }
    }

    #[test]
    fn quiet_by_default_findings_and_the_summary() {
        let text = render(&sample(), Format::Text, &options());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "features/trips v1.yaml — trips_v1 1.2.0");
        assert!(
            lines[1].starts_with("  error[feature-missing] features/trips v1.yaml:7:9: "),
            "{text}"
        );
        assert!(!text.contains("STATUS"), "{text}");
        assert!(!text.contains("feature a: type"), "{text}");
        assert_eq!(lines.len(), 10, "{text}");
        // A report without findings is its verdict and summary only.
        let mut clean = sample();
        clean.files.truncate(1);
        clean.files[0].checks.truncate(1);
        assert_eq!(
            render(&clean, Format::Text, &options()),
            "arrowfeat check against registry.json: passed\n\
             1 file(s), 1 view(s), 1 check(s): 1 passed, 0 error(s), 0 warning(s), 0 info\n"
        );
    }

    #[test]
    fn verbose_tables_then_findings_then_the_verdict() {
        let text = render(&sample(), Format::Text, &verbose());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "features/trips v1.yaml — trips_v1 1.2.0");
        assert!(lines[1].starts_with("  CHECK "), "{text}");
        assert!(lines[1].ends_with("  STATUS"), "{text}");
        assert!(text.contains("  error[feature-missing] features/trips v1.yaml:7:9: feature `b`"));
        // A finding about the whole file has no line:column.
        assert!(text.contains("  warning[timestamp-type] features/trips v1.yaml: declared"));
        assert!(text.contains("broken.yaml\n"), "{text}");
        assert_eq!(
            lines[lines.len() - 2],
            "arrowfeat check against registry.json: failed: unreadable input"
        );
        assert_eq!(
            lines[lines.len() - 1],
            "2 file(s), 1 view(s), 5 check(s): 1 passed, 2 error(s), 1 warning(s), 1 info"
        );
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn colour_only_when_asked() {
        let options = RenderOptions {
            color: true,
            ..verbose()
        };
        let text = render(&sample(), Format::Text, &options);
        assert!(text.contains("\x1b[1mfeatures/trips v1.yaml — trips_v1 1.2.0\x1b[0m"));
        assert!(text.contains("\x1b[31;1merror[feature-missing]\x1b[0m"));
        assert!(text.contains("\x1b[32mpass\x1b[0m"));
    }

    #[test]
    fn error_report_is_one_line() {
        let rendered = super::super::render_error("no\x1bpe", Format::Text, &options());
        assert_eq!(rendered, "arrowfeat check: error: no\\u{1b}pe\n");
    }
}
