//! `--format github`: GitHub Actions workflow commands, one annotation per finding.

use std::fmt::Write as _;

use super::{RenderOptions, Renderer};
use crate::report::{Report, Status};

pub struct Github;

impl Renderer for Github {
    /// GitHub Actions workflow commands: one annotation per finding.
    fn render(&self, report: &Report, _options: &RenderOptions) -> String {
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

    fn render_error(&self, message: &str, options: &RenderOptions) -> String {
        let command = options.command;
        format!(
            "::error title={}::{}\n",
            escape_property(&format!("arrowfeat {command}")),
            escape_data(message)
        )
    }
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, render_error, Format};

    #[test]
    fn one_annotation_per_finding() {
        let text = render(&sample(), Format::Github, &options());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "::error file=features/trips v1.yaml,line=7,col=9,title=arrowfeat feature-missing::feature `b` is declared but the store has no such feature");
        // A file-level finding has no line; the property escapes `,` and `:`, the data `%`.
        assert_eq!(lines[1], "::warning file=features/trips v1.yaml,title=arrowfeat timestamp-type::declared list<int64>, the store has a|b, a, b: compatible");
        assert!(lines[2].starts_with("::notice "), "{text}");
        assert!(
            lines[3].starts_with("::error file=broken.yaml,title="),
            "{text}"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(super::escape_property("a:b,c%"), "a%3Ab%2Cc%25");
        assert_eq!(super::escape_data("a:b\r\n%"), "a:b%0D%0A%25");
        assert_eq!(
            render_error("x", Format::Github, &options()),
            "::error title=arrowfeat check::x\n"
        );
    }
}
