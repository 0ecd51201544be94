//! `--format markdown`: a summary, a table of findings and a collapsed table per view,
//! for a pull-request comment.

use std::fmt::Write as _;

use super::{location, summary_line, verdict, RenderOptions, Renderer};
use crate::report::{Check, FileReport, Report, Status};

pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, report: &Report, options: &RenderOptions) -> String {
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
                    "| {mark} | `{}` | <code>{}</code> | {} |",
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

    fn render_error(&self, message: &str, options: &RenderOptions) -> String {
        let command = options.command;
        format!(
            "### ❌ arrowfeat {command} could not run\n\n{}\n",
            md_cell(message)
        )
    }
}

/// `text` for a table cell, shown as written and never interpreted: HTML's `& < >`, the
/// cell separator `|` and the characters of Markdown's code spans, links and images,
/// emphasis, headings, math and escapes become numeric character references (`_` stays:
/// GitHub does not emphasise inside a word, and names are full of it), and
/// an `@`, a `://` and a `www.` get an invisible word joiner so that they mention no one
/// and link nowhere.
/// Values from files therefore cannot close a code span, add an image, a link or a
/// mention, or forge a row.
fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '`' | '*' | '[' | ']' | '(' | ')' | '!' | '\\' | '~' | '#' | '$' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            '@' => out.push_str("@&#8288;"),
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    // GitHub links bare URLs too: a word joiner keeps `https://` and `www.` from
    // starting one (the text reads the same).
    out.replace("://", ":&#8288;//")
        .replace("www.", "www&#8288;.")
        .replace("WWW.", "WWW&#8288;.")
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, render_error, Format};
    use super::md_cell;

    #[test]
    fn summary_findings_and_details() {
        let md = render(&sample(), Format::Markdown, &options());
        assert!(md.starts_with("### ❌ arrowfeat check failed: unreadable input\n\nAgainst registry.json: 2 file(s), 1 view(s), 5 check(s): 1 passed, 2 error(s), 1 warning(s), 1 info.\n\n"), "{md}");
        assert!(md.contains("| ❌ error | `feature-missing` | <code>features/trips v1.yaml:7:9</code> | feature &#96;b&#96; is declared but the store has no such feature |"), "{md}");
        assert!(md.contains("| ⚠️ warning | `timestamp-type` | <code>features/trips v1.yaml</code> | declared list&lt;int64&gt;, the store has a&#124;b, a, b: compatible |"), "{md}");
        assert!(
            md.contains(
                "<details><summary><code>trips_v1</code> (features/trips v1.yaml)</summary>"
            ),
            "{md}"
        );
        assert!(
            md.contains("| feature a: type | float32 | float32 | pass |"),
            "{md}"
        );
        assert_eq!(md.matches("</details>").count(), 2);
    }

    #[test]
    fn cells_escape_html_and_pipes() {
        assert_eq!(md_cell("a|b<c>&\nd"), "a&#124;b&lt;c&gt;&amp; d");
        assert_eq!(
            render_error("a|b", Format::Markdown, &options()),
            "### ❌ arrowfeat check could not run\n\na&#124;b\n"
        );
    }

    #[test]
    fn cells_cannot_close_code_add_images_links_or_mentions() {
        let hostile = "1.0` ![p](https://x.example/p.png) [ok @acme/security](https://x.example) `*b*_i_ \\# $x$";
        let cell = md_cell(hostile);
        // What is left once the character references are taken out.
        let mut bare = String::new();
        let mut rest = cell.as_str();
        while let Some(at) = rest.find("&#") {
            bare.push_str(&rest[..at]);
            rest = &rest[at + rest[at..].find(';').unwrap() + 1..];
        }
        bare.push_str(rest);
        for raw in ['`', '[', ']', '(', ')', '!', '*', '\\', '#', '$'] {
            assert!(!bare.contains(raw), "{raw:?} in {cell}");
        }
        assert!(cell.contains("@&#8288;acme"), "{cell}");
        assert!(!cell.contains("https://"), "{cell}");
        assert!(cell.contains("https:&#8288;//x.example/p.png"), "{cell}");
        assert_eq!(md_cell("see www.x.example"), "see www&#8288;.x.example");
    }
}
