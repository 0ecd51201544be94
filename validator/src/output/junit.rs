//! `--format junit`: one `<testsuite>` per file, one `<testcase>` per (view, rule);
//! errors are `<failure>` (`<error>` for unreadable input), warnings and infos `<system-out>`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{location, RenderOptions, Renderer};
use crate::report::{Check, Report, Status};
use crate::rules::Category;

pub struct Junit;

impl Renderer for Junit {
    /// One test suite per file, one test case per (view, rule).
    fn render(&self, report: &Report, options: &RenderOptions) -> String {
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

    fn render_error(&self, message: &str, options: &RenderOptions) -> String {
        let command = options.command;
        format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"arrowfeat {command}\" tests=\"1\" failures=\"0\" errors=\"1\">\n  \
         <testsuite name=\"arrowfeat {command}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    \
         <testcase name=\"arrowfeat {command}\" classname=\"arrowfeat\">\n      \
         <error type=\"usage\" message=\"{}\">{}</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n",
        xml_escape(message),
        xml_escape(message)
    )
    }
}

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

#[cfg(test)]
mod tests {
    use super::super::fixtures::{options, sample};
    use super::super::{render, render_error, Format, RenderOptions};
    use super::xml_escape;

    #[test]
    fn one_case_per_view_and_rule() {
        let xml = render(&sample(), Format::Junit, &options());
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"arrowfeat check\" tests=\"5\" failures=\"1\" errors=\"1\">\n"), "{xml}");
        assert!(xml.contains("<testsuite name=\"trips_v1\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"0\">"), "{xml}");
        // Unreadable input is an <error>; a warning and an info go to <system-out>.
        assert!(xml.contains("<error type=\"input-unreadable\""), "{xml}");
        assert!(xml.contains("<system-out>warning[timestamp-type] features/trips v1.yaml: declared list&lt;int64&gt;"), "{xml}");
        assert!(xml.contains("<testcase name=\"feature-type\" classname=\"trips_v1\" file=\"features/trips v1.yaml\"/>"), "{xml}");
    }

    #[test]
    fn denied_warnings_fail() {
        let options = RenderOptions {
            deny_warnings: true,
            ..options()
        };
        let xml = render(&sample(), Format::Junit, &options);
        assert!(xml.contains("<failure type=\"timestamp-type\""), "{xml}");
        assert!(xml.contains("failures=\"2\" errors=\"1\">"), "{xml}");
    }

    #[test]
    fn xml_escaping() {
        assert_eq!(
            xml_escape("<a&'\"b>\u{1}\t"),
            "&lt;a&amp;&apos;&quot;b&gt;\u{fffd}\t"
        );
        let xml = render_error("a<b", Format::Junit, &options());
        assert!(
            xml.contains("<error type=\"usage\" message=\"a&lt;b\">a&lt;b</error>"),
            "{xml}"
        );
    }
}
