//! Accepting findings: a baseline file (today's findings, written by `check
//! --write-baseline`, honoured by `check --baseline`) and inline ignore comments in schema
//! files (`# arrowfeat: ignore[rule-id] reason`). Both are keyed without line numbers where
//! they can be, so moving lines does not break them; both report what they no longer match.
//!
//! A baseline entry is (file path, view, rule, subject, fingerprint of expected and
//! actual): the same finding after lines moved matches; a finding whose store or file
//! value changed does not. Entries match findings one to one (a multiset), so two equal
//! findings need two entries.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::{Actual, Check, Expected, FileReport, Report};
use crate::rules::{Category, Rule};
use crate::yaml::Pos;

/// The largest baseline file read.
pub const MAX_BASELINE_BYTES: u64 = 16 * 1024 * 1024;

/// The name `check` looks for in the working directory when `--baseline` is not given.
pub const DEFAULT_BASELINE: &str = "arrowfeat-baseline.json";

const FORMAT: &str = "arrowfeat-baseline";
const FORMAT_VERSION: u64 = 1;

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
    #[serde(deserialize_with = "rule_id", serialize_with = "rule_str")]
    pub rule: Rule,
    pub subject: String,
    /// 16 hex digits: FNV-1a of the check's expected and actual values.
    pub fingerprint: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    format_version: u64,
    findings: Vec<Entry>,
}

fn rule_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Rule, D::Error> {
    let id = String::deserialize(d)?;
    id.parse::<Rule>()
        .map_err(|e| serde::de::Error::custom(e.to_string()))
}

fn rule_str<S: serde::Serializer>(rule: &Rule, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(rule.as_str())
}

/// FNV-1a 64 of expected, NUL, actual (and NUL, [`Check::detail`] when there is one: a
/// change between revisions, so that accepting `int64 → int32` does not accept a later
/// `int64 → string` under the same version bump): stable across Rust versions and
/// platforms.
pub fn fingerprint(check: &Check) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let detail = (!check.detail.is_empty()).then_some(check.detail.as_bytes());
    for byte in check
        .expected
        .bytes()
        .chain([0u8])
        .chain(check.actual.bytes())
        .chain(
            detail
                .into_iter()
                .flat_map(|d| [0u8].into_iter().chain(d.iter().copied())),
        )
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn entry(file: &FileReport, check: &Check) -> Entry {
    Entry {
        path: file.path.clone(),
        view: file.view.clone(),
        rule: check.rule,
        subject: check.subject.clone(),
        fingerprint: fingerprint(check),
    }
}

/// Whether a finding may be accepted: not unreadable input (it always fails the run, as
/// in `arrowfeat.toml`), and not a finding about the suppressions themselves.
fn acceptable(check: &Check) -> bool {
    check.status.is_finding()
        && check.category() != Category::Input
        && !matches!(check.rule, Rule::BaselineUnused)
}

/// The baseline of `report`: every acceptable finding, sorted, as a file's text.
pub fn write(report: &Report) -> String {
    let mut findings: Vec<Entry> = report
        .findings()
        .filter(|(_, check)| acceptable(check))
        .map(|(file, check)| entry(file, check))
        .collect();
    findings.sort_by(|a, b| {
        (
            &a.path,
            &a.view,
            a.rule.as_str(),
            &a.subject,
            &a.fingerprint,
        )
            .cmp(&(
                &b.path,
                &b.view,
                b.rule.as_str(),
                &b.subject,
                &b.fingerprint,
            ))
    });
    let file = File {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        findings,
    };
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads a baseline file: a regular file of at most [`MAX_BASELINE_BYTES`], JSON of the
/// format [`write`] produces. Errors name `file:line:column`.
pub fn load(path: &Path) -> Result<Vec<Entry>, String> {
    let bytes = crate::files::read_bounded(path, MAX_BASELINE_BYTES)?;
    parse(&bytes).map_err(|e| format!("{}:{e}", crate::text::clean(&path.display().to_string())))
}

/// [`load`] of bytes; errors are `line:column: message`.
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let file: File = serde_json::from_slice(bytes).map_err(|e| {
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        // serde's wording (`expected u64`) in plain words, with the field it is about.
        let text = String::from_utf8_lossy(bytes);
        let field =
            crate::text::key_before(&text, crate::files::offset_of(&text, e.line(), e.column()));
        format!(
            "{}:{}: {}",
            e.line(),
            e.column(),
            crate::text::clean(&crate::text::plain_serde(&message, field.as_deref()))
        )
    })?;
    if file.format != FORMAT || file.format_version != FORMAT_VERSION {
        return Err(format!(
            "1:1: not an arrowfeat baseline: expected \"format\": \"{FORMAT}\", \"format_version\": {FORMAT_VERSION}, found {} version {}",
            crate::text::quote_hashed(&file.format, 60),
            file.format_version
        ));
    }
    // A fingerprint that is not 16 hex digits matches nothing: say so, never ignore it.
    for (index, entry) in file.findings.iter().enumerate() {
        let fp = &entry.fingerprint;
        if fp.len() != 16
            || !fp
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            let text = String::from_utf8_lossy(bytes);
            let offset = text.find(&format!("\"{fp}\"")).unwrap_or(0);
            let (line, column) = crate::files::line_column_at(bytes, offset);
            return Err(format!(
                "{line}:{column}: findings[{index}].fingerprint: expected 16 lowercase hex digits (as --write-baseline writes them), found `{}`",
                crate::text::short(fp)
            ));
        }
    }
    Ok(file.findings)
}

/// Accepts the findings of `report` listed in `entries`: they are removed (and counted in
/// `report.baselined`). Entries that match nothing become `baseline-unused` findings of a
/// file entry named `label` (the baseline file).
pub fn apply_baseline(report: &mut Report, entries: &[Entry], label: &str) {
    let mut remaining: HashMap<&Entry, usize> = HashMap::new();
    for entry in entries {
        *remaining.entry(entry).or_default() += 1;
    }
    for file in &mut report.files {
        let (path, view) = (file.path.clone(), file.view.clone());
        let shell = FileReport {
            path,
            view,
            ..FileReport::new("")
        };
        file.checks.retain(|check| {
            if !acceptable(check) {
                return true;
            }
            match remaining.get_mut(&entry(&shell, check)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    report.baselined += 1;
                    false
                }
                _ => true,
            }
        });
    }
    let mut unused = FileReport::new(label);
    for entry in entries {
        let Some(n) = remaining.get_mut(entry) else {
            continue;
        };
        if *n == 0 {
            continue;
        }
        *n -= 1;
        let view = entry
            .view
            .as_deref()
            .map_or(String::new(), |v| format!(" ({v})"));
        unused.checks.push(Check::fail(
            Rule::BaselineUnused,
            format!("{} {}: {}", entry.path, entry.rule, entry.subject),
            Expected("a finding"),
            Actual("none"),
            Pos::UNKNOWN,
            format!(
                "baseline entry {} [{}] {}{view} matches no finding (fixed or changed); remove it (`--write-baseline`)",
                entry.path, entry.rule, entry.subject
            ),
        ));
    }
    if !unused.checks.is_empty() {
        report.files.push(unused);
    }
}

/// Finds where a line's comment starts, line after line, as YAML reads comments: a `#`
/// at the start of a line or after whitespace, outside quoted scalars (which may span
/// lines; `''` and `\\"` escape their quote) and outside block scalars (`|` or `>` ending
/// a line, then its more-indented lines). It errs towards seeing a string, never towards
/// seeing a comment: a quote that opens where a scalar may start counts as one even if
/// it never closes, so a marker after it is not an ignore comment. One pass over the
/// text, whatever its shape. (The parsed tree's string ranges are checked too; this also
/// covers strings the tree does not keep, such as merged `<<` keys or `!!null "..."`.)
#[derive(Default)]
struct CommentLexer {
    quote: Option<char>,
    /// The indentation of the line that opened a block scalar.
    block: Option<usize>,
}

impl CommentLexer {
    fn comment_start(&mut self, line: &str) -> Option<usize> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(opener) = self.block {
            if line.trim().is_empty() || indent > opener {
                return None;
            }
            self.block = None;
        }
        let mut previous: Option<char> = None;
        let mut chars = line.char_indices().peekable();
        let mut comment = None;
        while let Some((i, c)) = chars.next() {
            match self.quote {
                Some('"') if c == '\\' => {
                    chars.next();
                }
                Some('\'') if c == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                    chars.next();
                }
                Some(q) if c == q => self.quote = None,
                Some(_) => {}
                None if c == '#' && previous.is_none_or(char::is_whitespace) => {
                    comment = Some(i);
                    break;
                }
                None if (c == '"' || c == '\'')
                    && previous.is_none_or(|p| p.is_whitespace() || "[{,:-?".contains(p)) =>
                {
                    self.quote = Some(c);
                }
                None => {}
            }
            previous = Some(c);
        }
        if self.quote.is_none() {
            let code = comment.map_or(line, |at| &line[..at]).trim_end();
            let indicator =
                code.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
            if indicator.ends_with('|') || indicator.ends_with('>') {
                self.block = Some(indent);
            }
        }
        comment
    }
}

/// The lines of `text` with the byte offset each starts at, split as YAML splits them.
fn yaml_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = 0;
    std::iter::from_fn(move || {
        if rest >= text.len() {
            return None;
        }
        let start = rest;
        let tail = &text[start..];
        let (end, next) = match tail.find(['\n', '\r']) {
            Some(at) if tail[at..].starts_with("\r\n") => (start + at, start + at + 2),
            Some(at) => (start + at, start + at + 1),
            None => (text.len(), text.len()),
        };
        rest = next;
        Some((start, &text[start..end]))
    })
}

pub use crate::report::InlineIgnore;

/// The ignore comments of a schema file, and findings for malformed ones (no reason, an
/// unknown or unreadable-input rule, no closing `]`). A comment is `#` at the start of a
/// line or after whitespace, outside every string of the document (`strings`: the byte
/// ranges of its string scalars and keys, from the parsed YAML, so that a description
/// quoting `# arrowfeat: ignore[...]` accepts nothing), then `arrowfeat: ignore[`.
/// Lines end where YAML's do: at `\n`, `\r\n` or a lone `\r`.
pub fn scan(text: &str, strings: &[std::ops::Range<usize>]) -> (Vec<InlineIgnore>, Vec<Check>) {
    const MARK: &str = "arrowfeat: ignore";
    let mut ignores = Vec::new();
    let mut findings = Vec::new();
    let mut strings = strings.to_vec();
    strings.sort_by_key(|r| r.start);
    // Whether byte `at` is inside one of the parsed strings (they do not overlap).
    let in_string = |at: usize| {
        let next = strings.partition_point(|r| r.start <= at);
        next > 0 && strings[next - 1].contains(&at)
    };
    let mut lexer = CommentLexer::default();
    for (index, (start, line)) in yaml_lines(text).enumerate() {
        // Every line goes through the lexer: a quote opened on one line may close later.
        let comment = lexer.comment_start(line);
        if !line.contains(MARK) {
            continue;
        }
        let Some(hash) = comment
            .filter(|&i| !in_string(start + i) && line[i + 1..].trim_start().starts_with(MARK))
        else {
            continue;
        };
        let pos = Pos::new(index as u64 + 1, line[..hash].chars().count() as u64 + 1);
        let rest = line[hash + 1..].trim_start()[MARK.len()..].trim_start();
        let bad = |message: String| {
            Check::fail(
                Rule::IgnoreComment,
                "ignore comment",
                Expected("# arrowfeat: ignore[rule-id] reason"),
                Actual(crate::text::quote_hashed(line.trim(), 80)),
                pos,
                message,
            )
        };
        let Some((ids, reason)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) else {
            findings.push(bad(
                "an ignore comment names its rules in brackets: `# arrowfeat: ignore[rule-id] reason`"
                    .into(),
            ));
            continue;
        };
        let mut rules = Vec::new();
        let mut ok = true;
        for id in ids.split(',').map(str::trim) {
            match id.parse::<Rule>() {
                Ok(rule) if rule.category() == Category::Input => {
                    ok = false;
                    findings.push(bad(format!(
                        "`{id}` cannot be ignored: unreadable input always fails the run"
                    )));
                }
                Ok(rule) => rules.push(rule),
                Err(e) => {
                    ok = false;
                    findings.push(bad(e.to_string()));
                }
            }
        }
        if reason.trim().is_empty() {
            ok = false;
            findings.push(bad(format!(
                "ignore[{}] has no reason: write why after the `]`",
                crate::text::quote_hashed(ids, 80)
            )));
        }
        if ok && !rules.is_empty() {
            ignores.push(InlineIgnore {
                rules,
                line: pos.line,
                column: pos.column,
            });
        }
    }
    (ignores, findings)
}

/// Applies each file's ignore comments: findings of a listed rule on the comment's line or
/// the next are removed (counted in `report.ignored`); a comment that removes nothing is an
/// `ignore-unused` finding.
pub fn apply_ignores(report: &mut Report) {
    for file in &mut report.files {
        if file.ignores.is_empty() {
            continue;
        }
        let mut used = vec![false; file.ignores.len()];
        let ignores = &file.ignores;
        let mut ignored = 0;
        file.checks.retain(|check| {
            if !check.status.is_finding()
                || check.line == 0
                || check.category() == Category::Input
                || matches!(check.rule, Rule::IgnoreComment | Rule::IgnoreUnused)
            {
                return true;
            }
            match ignores.iter().position(|ignore| {
                ignore.rules.contains(&check.rule)
                    && (check.line == ignore.line || check.line == ignore.line + 1)
            }) {
                Some(i) => {
                    used[i] = true;
                    ignored += 1;
                    false
                }
                None => true,
            }
        });
        report.ignored += ignored;
        for (ignore, used) in file.ignores.iter().zip(used) {
            if used {
                continue;
            }
            let ids: Vec<&str> = ignore.rules.iter().map(|r| r.as_str()).collect();
            file.checks.push(Check::fail(
                Rule::IgnoreUnused,
                "ignore comment",
                Expected("a finding to ignore"),
                Actual("none"),
                Pos::new(ignore.line, ignore.column),
                format!(
                    "ignore[{}] matches no finding on this line or the next; remove it",
                    ids.join(", ")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    /// serde's `expected u64` reached users; a malformed fingerprint matched nothing
    /// without a word.
    #[test]
    fn bad_baselines_are_explained_in_plain_words() {
        let error =
            parse(br#"{"format": "arrowfeat-baseline", "format_version": "1", "findings": []}"#)
                .unwrap_err();
        assert!(
            error.contains(
                "`format_version`: expected a whole number (0 or more), found the string \"1\""
            ),
            "{error}"
        );
        let error = parse(
            br#"{"format": "arrowfeat-baseline", "format_version": 1, "findings": [
  {"path": "v.yaml", "rule": "ttl", "subject": "ttl", "fingerprint": "zz"}]}"#,
        )
        .unwrap_err();
        assert!(
            error.starts_with("2:70: findings[0].fingerprint: expected 16 lowercase hex digits"),
            "{error}"
        );
    }

    fn report() -> Report {
        let mut file = FileReport::new("f.yaml");
        file.view = Some("v".into());
        file.checks = vec![
            Check::fail(
                Rule::Ttl,
                "ttl",
                Expected("1d"),
                Actual("2d"),
                Pos::new(5, 1),
                "m",
            ),
            Check::fail(
                Rule::Ttl,
                "ttl",
                Expected("1d"),
                Actual("2d"),
                Pos::new(9, 1),
                "m",
            ),
            Check::fail(
                Rule::InputUnreadable,
                "file",
                Expected("x"),
                Actual("y"),
                Pos::UNKNOWN,
                "m",
            ),
        ];
        Report::new("r", vec![file])
    }

    #[test]
    fn round_trip_ignores_lines_and_keeps_input_findings() {
        let text = write(&report());
        let entries = parse(text.as_bytes()).unwrap();
        assert_eq!(entries.len(), 2, "{text}");
        let mut moved = report();
        moved.files[0].checks[0].line = 50;
        apply_baseline(&mut moved, &entries, "b.json");
        assert_eq!(moved.baselined, 2);
        assert_eq!(moved.files.len(), 1);
        assert_eq!(moved.files[0].checks.len(), 1);
        // A changed value is not the accepted finding; the entry is unused.
        let mut changed = report();
        changed.files[0].checks[1].actual = "3d".into();
        apply_baseline(&mut changed, &entries, "b.json");
        assert_eq!(changed.baselined, 1);
        assert_eq!(changed.files[1].path, "b.json");
        assert_eq!(changed.files[1].checks[0].rule, Rule::BaselineUnused);
        assert_eq!(changed.files[1].checks[0].status, Status::Warning);
    }

    #[test]
    fn hostile_baselines_are_clean_errors() {
        for (bytes, expected) in [
            (&b"{"[..], "1:1: EOF while parsing an object"),
            (b"[]", "1:2: invalid length 0"),
            (
                b"{\"format\":\"arrowfeat-baseline\",\"format_version\":1,\"findings\":[{\"path\":\"a\",\"rule\":\"nope\",\"subject\":\"s\",\"fingerprint\":\"f\"}]}",
                "unknown rule `nope`",
            ),
            (
                b"{\"format\":\"x\",\"format_version\":1,\"findings\":[]}",
                "1:1: not an arrowfeat baseline",
            ),
            (
                b"{\"format\":\"arrowfeat-baseline\",\"format_version\":1,\"findings\":[],\"x\":1}",
                "unknown field `x`",
            ),
            (&[0xff, 0xfe][..], "1:1: expected value"),
        ] {
            let error = parse(bytes).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        let deep = "[".repeat(100_000);
        assert!(parse(deep.as_bytes()).is_err());
    }

    fn strings_of(text: &str) -> Vec<std::ops::Range<usize>> {
        let mut ranges = Vec::new();
        crate::yaml::parse(text).unwrap().string_bytes(&mut ranges);
        ranges
    }

    /// A marker inside a string (quoted, on several lines, a block scalar or a key) is
    /// text; lines end at a lone CR as in YAML.
    #[test]
    fn markers_inside_strings_accept_nothing() {
        for text in [
            "d: \"see # arrowfeat: ignore[feature-type] JIRA-12\"\nttl: 1d\n",
            "d: 'see # arrowfeat: ignore[feature-type] JIRA-12'\nttl: 1d\n",
            "d: \"one\n  two # arrowfeat: ignore[ttl] hidden\"\nttl: 1d\n",
            "d: |\n  text # arrowfeat: ignore[ttl] hidden\nttl: 1d\n",
            "\"k # arrowfeat: ignore[ttl] hidden\": 1\nttl: 1d\n",
            "<<: { d: \"x\n  # arrowfeat: ignore[ttl] hidden\" }\nttl: 1d\n",
            "tz: !!null \"x\n  # arrowfeat: ignore[ttl] hidden\"\nttl: 1d\n",
            "d: >-\n  folded\n  # arrowfeat: ignore[ttl] hidden\nttl: 1d\n",
            "d: 'it''s\n  # arrowfeat: ignore[ttl] hidden'\nttl: 1d\n",
        ] {
            let (ignores, findings) = scan(text, &strings_of(text));
            assert!(
                ignores.is_empty() && findings.is_empty(),
                "{text:?}: {ignores:?}"
            );
        }
        // Real comments still count, after a plain scalar with a quote inside a word and
        // after a block scalar ends.
        for (text, line) in [
            ("d: it's fine # arrowfeat: ignore[ttl] reason\nttl: 1d\n", 1),
            (
                "d: |\n  text\n# arrowfeat: ignore[ttl] reason\nttl: 1d\n",
                3,
            ),
            (
                "d: \"a\\\"b\" # arrowfeat: ignore[ttl] reason\nttl: 1d\n",
                1,
            ),
        ] {
            let (ignores, _) = scan(text, &strings_of(text));
            assert_eq!(ignores.len(), 1, "{text:?}");
            assert_eq!(ignores[0].line, line, "{text:?}");
        }
        // Many `#`s and strings: one pass, not one search per `#`.
        let many = format!(
            "{}x: \"{}\" # arrowfeat: ignore[ttl] r\n",
            "- \"a\"\n".repeat(20_000),
            " #".repeat(100_000)
        );
        let _ = scan(&many, &[]);
        let text = "a: 1\r# arrowfeat: ignore[ttl] reason\rttl: 1d\n";
        let (ignores, _) = scan(text, &strings_of(text));
        assert_eq!(
            ignores,
            vec![InlineIgnore {
                rules: vec![Rule::Ttl],
                line: 2,
                column: 1
            }]
        );
    }

    #[test]
    fn ignore_comments_need_a_reason_and_known_rules() {
        let text = "a: 1 # arrowfeat: ignore[ttl] managed elsewhere\n\
             # arrowfeat: ignore[ttl]\n\
             #arrowfeat: ignore[feature-typ] typo\n\
             # arrowfeat: ignore[yaml-syntax] no\n\
             b: \"x#arrowfeat: ignore[ttl] in a string\"\n\
             # arrowfeat: ignore ttl\n";
        let (ignores, findings) = scan(text, &strings_of(text));
        assert_eq!(
            ignores,
            vec![InlineIgnore {
                rules: vec![Rule::Ttl],
                line: 1,
                column: 6
            }]
        );
        let messages: Vec<String> = findings
            .iter()
            .map(|c| format!("{}:{} {}", c.line, c.column, c.message))
            .collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].starts_with("2:1 ignore[ttl] has no reason"));
        assert!(
            messages[1].contains("did you mean `feature-type`"),
            "{messages:?}"
        );
        assert!(messages[2].contains("cannot be ignored"));
        assert!(messages[3].starts_with("6:1 an ignore comment names"));
    }

    #[test]
    fn ignores_apply_to_their_line_and_the_next() {
        let mut r = report();
        r.files[0].ignores = vec![
            InlineIgnore {
                rules: vec![Rule::Ttl],
                line: 4,
                column: 1,
            },
            InlineIgnore {
                rules: vec![Rule::FeatureType],
                line: 9,
                column: 1,
            },
        ];
        apply_ignores(&mut r);
        assert_eq!(r.ignored, 1);
        let rules: Vec<(Rule, u64)> = r.files[0].checks.iter().map(|c| (c.rule, c.line)).collect();
        assert_eq!(
            rules,
            vec![
                (Rule::Ttl, 9),
                (Rule::InputUnreadable, 0),
                (Rule::IgnoreUnused, 9)
            ]
        );
    }
}
