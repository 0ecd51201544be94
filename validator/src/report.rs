//! Findings and reports: what every output format renders.

use serde::Serialize;

use crate::compat::Mode;
pub use crate::rules::Severity;
use crate::rules::{Category, Rule};
use crate::yaml::Pos;

/// The result of one check. `status` is `Pass` or the severity of the finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub rule: Rule,
    /// What was checked, e.g. "feature conv_rate: type".
    pub subject: String,
    /// What the schema file (or the rule) calls for.
    pub expected: String,
    /// What was found: in the store, in the file, in the new revision.
    pub actual: String,
    pub status: Status,
    /// Empty when the check passed.
    pub message: String,
    /// Where in the file; `line == 0` when the finding concerns the file as a whole.
    pub line: u64,
    pub column: u64,
    /// What else identifies the finding for a baseline (see
    /// [`crate::suppress::fingerprint`]), not shown: for a change between revisions, the
    /// change itself (old and new value), which `expected`/`actual` (the version bumps)
    /// leave out. Empty for most checks.
    #[serde(skip)]
    pub detail: String,
}

/// The expected side of a check (`Check::pass(rule, subject, Expected(..), Actual(..), pos)`):
/// a named wrapper, so the two sides cannot be swapped without it showing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected<T>(pub T);

/// The side of a check that was found (see [`Expected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actual<T>(pub T);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Info,
    Warning,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Info => "info",
            Status::Warning => "warning",
            Status::Error => "error",
        }
    }

    pub fn from_severity(severity: Severity) -> Status {
        match severity {
            Severity::Info => Status::Info,
            Severity::Warning => Status::Warning,
            Severity::Error => Status::Error,
        }
    }

    pub fn is_finding(self) -> bool {
        self != Status::Pass
    }
}

impl Check {
    pub fn pass(
        rule: Rule,
        subject: impl Into<String>,
        expected: Expected<impl Into<String>>,
        actual: Actual<impl Into<String>>,
        pos: Pos,
    ) -> Check {
        Check {
            rule,
            subject: subject.into(),
            expected: expected.0.into(),
            actual: actual.0.into(),
            status: Status::Pass,
            message: String::new(),
            line: pos.line,
            column: pos.column,
            detail: String::new(),
        }
    }

    /// A finding at the rule's default severity.
    pub fn fail(
        rule: Rule,
        subject: impl Into<String>,
        expected: Expected<impl Into<String>>,
        actual: Actual<impl Into<String>>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Check {
        Check::finding(
            rule,
            rule.default_severity(),
            subject,
            expected,
            actual,
            pos,
            message,
        )
    }

    pub fn finding(
        rule: Rule,
        severity: Severity,
        subject: impl Into<String>,
        expected: Expected<impl Into<String>>,
        actual: Actual<impl Into<String>>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Check {
        Check {
            status: Status::from_severity(severity),
            message: message.into(),
            ..Check::pass(rule, subject, expected, actual, pos)
        }
    }

    /// This (passing) check, or, unless `holds`, a finding at the rule's default severity
    /// with `message()`: the same subject, expected and actual either way.
    pub fn fail_unless(self, holds: bool, message: impl FnOnce() -> String) -> Check {
        if holds {
            return self;
        }
        Check {
            status: Status::from_severity(self.rule.default_severity()),
            message: message(),
            ..self
        }
    }

    /// The rule's category: `input` findings make the run exit with 2.
    pub fn category(&self) -> Category {
        self.rule.category()
    }

    pub fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }
}

/// Everything checked for one schema file (one feature view).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    pub path: String,
    /// The feature view the file declares, when it could be read that far.
    pub view: Option<String>,
    pub schema_version: Option<String>,
    pub checks: Vec<Check>,
    /// The file's `# arrowfeat: ignore[...]` comments (see [`crate::suppress`]).
    #[serde(skip)]
    pub ignores: Vec<InlineIgnore>,
    /// Why nothing but the file's own format was checked (it could not be decoded as a
    /// feature view, or it declares a view another file declares), if so: see
    /// [`Report::flag_unchecked_files`].
    #[serde(skip)]
    pub unchecked: Option<&'static str>,
    /// Values of the file that a comparison (with the store) could not read, each with
    /// the format finding that says why: see [`Report::flag_unchecked_files`].
    #[serde(skip)]
    pub uncompared: Vec<Uncompared>,
}

/// `# arrowfeat: ignore[rule-id, ...] reason` in a schema file: it accepts findings of
/// those rules on its own line or on the next line (read by `suppress::scan`, applied by
/// `suppress::apply_ignores`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineIgnore {
    pub rules: Vec<Rule>,
    pub line: u64,
    pub column: u64,
}

/// A value a comparison skipped because it cannot be read (a `type` outside the
/// vocabulary, a TTL out of range). The format finding `because` (rule and subject)
/// reports it; if that finding is accepted, the comparison must not pass unseen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncompared {
    pub because: (Rule, String),
    /// What was not compared, e.g. "feature f: type".
    pub subject: String,
    /// With what: "the store", "the earlier revision".
    pub with: &'static str,
    pub pos: Pos,
}

impl FileReport {
    pub fn new(path: impl Into<String>) -> FileReport {
        FileReport {
            path: path.into(),
            view: None,
            schema_version: None,
            checks: Vec::new(),
            ignores: Vec::new(),
            unchecked: None,
            uncompared: Vec::new(),
        }
    }

    pub fn findings(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|check| check.status.is_finding())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub files: usize,
    pub views: usize,
    pub checks: usize,
    pub passed: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Findings of category `input`: unreadable files.
    pub unreadable: usize,
    /// Findings accepted by the baseline file (not counted above).
    pub baselined: usize,
    /// Findings accepted by inline ignore comments (not counted above).
    pub ignored: usize,
}

/// What a run compared the schema files with, as fields (`against` is the same as prose).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgainstDetail {
    /// The store metadata: the registry file's path, a Feast repo, or a caller's label.
    pub registry: Option<String>,
    /// The earlier revision as given: a path or a git revision.
    pub revision: Option<String>,
    /// `path` or `git`, with `revision`.
    pub revision_kind: Option<&'static str>,
    /// The compatibility mode the revision was checked with.
    pub mode: Option<Mode>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Where the store metadata came from (a registry file, a Feast repo), or the old
    /// revision for `diff`.
    pub against: String,
    pub files: Vec<FileReport>,
    pub against_detail: AgainstDetail,
    /// Findings the baseline accepted (removed from `files`).
    pub baselined: usize,
    /// Findings inline ignore comments accepted (removed from `files`).
    pub ignored: usize,
}

impl Report {
    pub fn new(against: impl Into<String>, files: Vec<FileReport>) -> Report {
        Report {
            against: against.into(),
            files,
            against_detail: AgainstDetail::default(),
            baselined: 0,
            ignored: 0,
        }
    }

    pub fn summary(&self) -> Summary {
        let mut summary = Summary {
            files: self.files.len(),
            baselined: self.baselined,
            ignored: self.ignored,
            ..Summary::default()
        };
        for file in &self.files {
            if file.view.is_some() {
                summary.views += 1;
            }
            for check in &file.checks {
                summary.checks += 1;
                match check.status {
                    Status::Pass => summary.passed += 1,
                    Status::Info => summary.infos += 1,
                    Status::Warning => summary.warnings += 1,
                    Status::Error => summary.errors += 1,
                }
                if check.category() == Category::Input && check.status.is_finding() {
                    summary.unreadable += 1;
                }
            }
        }
        summary
    }

    /// 0 pass; 1 errors (or warnings with `deny_warnings`); 2 unreadable input.
    pub fn exit_code(&self, deny_warnings: bool) -> i32 {
        let summary = self.summary();
        if summary.unreadable > 0 {
            2
        } else if summary.errors > 0 || (deny_warnings && summary.warnings > 0) {
            1
        } else {
            0
        }
    }

    /// A file that could not be decoded as a feature view was checked for nothing but its
    /// format: not against the store, not against the earlier revision, not for its own
    /// consistency. When the findings that say so were all accepted (ignore comments, a
    /// baseline, `[severity]` or `[[ignore]]`), the run would pass without checking the
    /// file; an `input-unreadable` finding, which nothing can accept, says so instead.
    /// Call it after every suppression.
    ///
    /// The same for a single value a comparison could not read ([`FileReport::uncompared`]):
    /// when the format finding about it is no longer an error, an `input-unreadable`
    /// finding at the value says it was not compared.
    pub fn flag_unchecked_files(&mut self) {
        for file in &mut self.files {
            let mut flags = Vec::new();
            for skipped in &file.uncompared {
                let (rule, subject) = &skipped.because;
                let reported = file
                    .checks
                    .iter()
                    .any(|c| c.rule == *rule && c.subject == *subject && c.status == Status::Error);
                if reported {
                    continue;
                }
                flags.push(Check::fail(
                    crate::rules::Rule::InputUnreadable,
                    skipped.subject.clone(),
                    Expected(format!(
                        "a value arrowfeat can compare with {}",
                        skipped.with
                    )),
                    Actual(format!("{rule} finding accepted")),
                    skipped.pos,
                    format!(
                        "{} was not compared with {}: it cannot be read (`{rule}`), and the \
                         finding that says so was accepted (ignore comment, baseline or \
                         configuration)",
                        skipped.subject, skipped.with
                    ),
                ));
            }
            file.checks.extend(flags);
            let Some(reason) = file.unchecked else {
                continue;
            };
            if file.checks.iter().any(|c| c.status == Status::Error) {
                continue;
            }
            let message = format!(
                "{} was not checked: {reason}, and the findings that say so were accepted \
                 (ignore comment, baseline or configuration)",
                file.path
            );
            file.checks.push(Check::fail(
                crate::rules::Rule::InputUnreadable,
                "file",
                Expected("a feature view the checks can read"),
                Actual("format findings accepted"),
                crate::yaml::Pos::new(1, 1),
                message,
            ));
        }
    }

    pub fn findings(&self) -> impl Iterator<Item = (&FileReport, &Check)> {
        self.files
            .iter()
            .flat_map(|file| file.findings().map(move |check| (file, check)))
    }
}
