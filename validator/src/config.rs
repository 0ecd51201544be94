//! `arrowfeat.toml`: compatibility mode, per-rule severities, ignores.
//!
//! ```toml
//! compatibility = "backward"      # backward | forward | full | none
//! deny_warnings = false
//!
//! [severity]
//! feature-extra = "warning"       # error | warning | info | off
//!
//! [[ignore]]
//! rule = "ttl"
//! views = ["driver_hourly_stats_v1", "legacy_*"]   # omit for every view
//! reason = "TTL is managed by the platform team"
//!
//! [drift]                         # `arrowfeat drift`: findings above these
//! psi = 0.2
//! jensen_shannon = 0.1            # the distance, base 2
//! ks = 0.1
//! categories = 0.1                # the largest change of one category's share
//! null_rate = 0.05                # the change of the share of missing values
//!
//! [data]                          # `arrowfeat check`: each view's data, checked
//! user_events_v1 = "data/events/" # relative to this file's directory
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::compat::Mode;
use crate::report::{Report, Status};
use crate::rules::{Category, Rule, Severity};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub compatibility: Mode,
    pub deny_warnings: bool,
    /// `None` turns the rule off.
    pub severity: BTreeMap<Rule, Option<Severity>>,
    pub ignore: Vec<Ignore>,
    /// `[drift]`: when a drift metric is a finding.
    pub drift: crate::checks::drift::Thresholds,
    /// `[data]`: (view, path) of each view whose data `arrowfeat check` checks; paths
    /// relative to the file's directory once [`Config::load`] read it.
    pub data: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ignore {
    pub rule: Rule,
    /// Empty: every view. A trailing `*` matches a prefix.
    pub views: Vec<String>,
    pub reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    compatibility: Option<String>,
    #[serde(default)]
    deny_warnings: Option<bool>,
    #[serde(default)]
    severity: BTreeMap<String, String>,
    #[serde(default)]
    ignore: Vec<IgnoreFile>,
    #[serde(default)]
    drift: Option<DriftFile>,
    #[serde(default)]
    data: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriftFile {
    psi: Option<f64>,
    jensen_shannon: Option<f64>,
    ks: Option<f64>,
    categories: Option<f64>,
    null_rate: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IgnoreFile {
    rule: String,
    #[serde(default)]
    views: Option<Vec<String>>,
    #[serde(default)]
    reason: Option<String>,
}

/// What `[[ignore]] views` supports: an exact view name, or a name prefix followed by one
/// trailing `*` (`*` alone matches every view). View names are `[A-Za-z_][A-Za-z0-9_]*`,
/// so anything else (globs such as `*_v1` or `a?c`, brackets, spaces) could never match:
/// it is a configuration error rather than a silent no-match.
fn check_view_pattern(pattern: &str) -> Result<(), String> {
    let (stem, star) = match pattern.strip_suffix('*') {
        Some(stem) => (stem, true),
        None => (pattern, false),
    };
    if stem.is_empty() && star {
        return Ok(());
    }
    let mut chars = stem.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Ok(());
    }
    Err(if stem.contains(['*', '?', '[', ']', '{', '}']) {
        "only one `*`, at the end, is supported (exact names or prefixes such as `legacy_*`)"
            .to_string()
    } else if pattern.is_empty() {
        "an empty pattern matches no view".to_string()
    } else {
        "view names are [A-Za-z_][A-Za-z0-9_]*, so this pattern can never match; use exact names or prefixes such as `legacy_*`".to_string()
    })
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, String> {
        let bytes = crate::files::read_bounded(path, 1024 * 1024)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| format!("{}: not valid UTF-8", path.display()))?;
        let mut config =
            Config::parse(text).map_err(|message| format!("{}:{message}", path.display()))?;
        // Data paths are the file's, wherever the gate runs from.
        let dir = path.parent().unwrap_or(Path::new(""));
        for (_, data) in &mut config.data {
            if Path::new(data.as_str()).is_relative() && !data.contains("://") {
                *data = dir.join(data.as_str()).to_string_lossy().into_owned();
            }
        }
        Ok(config)
    }

    /// Errors start with `line:column: `.
    pub fn parse(text: &str) -> Result<Config, String> {
        let file: ConfigFile = toml::from_str(text).map_err(|error| {
            let (line, column) = error
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            let message = error.message().trim().lines().next().unwrap_or("");
            let field = error
                .span()
                .and_then(|span| crate::text::key_before(text, span.start));
            format!(
                "{line}:{column}: {}",
                crate::text::clean(&crate::text::plain_serde(message, field.as_deref()))
            )
        })?;
        let locate = |needle: &str| -> String {
            let offset = text.find(needle).unwrap_or(0);
            let (line, column) = line_column(text, offset);
            format!("{line}:{column}")
        };
        let check_rule = |id: &str| -> Result<Rule, String> {
            let rule: Rule = id
                .parse()
                .map_err(|unknown| format!("{}: {unknown}", locate(id)))?;
            // Unreadable input always fails the run (exit 2): a file that cannot be
            // read must never vanish from the report because of a configuration.
            if rule.category() == Category::Input {
                return Err(format!(
                    "{}: rule `{rule}` is of category `input` (unreadable files); its findings always fail the run with exit code 2 and cannot be turned off, downgraded or ignored",
                    locate(id)
                ));
            }
            Ok(rule)
        };
        let mut config = Config::default();
        if let Some(mode) = &file.compatibility {
            config.compatibility = Mode::parse(mode).ok_or_else(|| {
                format!(
                    "{}: compatibility must be backward, forward, full or none, found `{}`",
                    locate(mode),
                    crate::text::quote_hashed(mode, 80)
                )
            })?;
        }
        config.deny_warnings = file.deny_warnings.unwrap_or(false);
        if let Some(drift) = &file.drift {
            let thresholds = &mut config.drift;
            for (key, given, slot) in [
                ("psi", drift.psi, &mut thresholds.psi),
                (
                    "jensen_shannon",
                    drift.jensen_shannon,
                    &mut thresholds.jensen_shannon,
                ),
                ("ks", drift.ks, &mut thresholds.ks),
                ("categories", drift.categories, &mut thresholds.categories),
                ("null_rate", drift.null_rate, &mut thresholds.null_rate),
            ] {
                let Some(value) = given else { continue };
                if !(value.is_finite() && value >= 0.0) {
                    return Err(format!(
                        "{}: [drift] {key} must be a number >= 0, found {value}",
                        locate(key)
                    ));
                }
                *slot = value;
            }
        }
        for (view, path) in &file.data {
            let at = || {
                let key = [
                    format!("{view} ="),
                    format!("{view}="),
                    format!("\"{view}\""),
                ]
                .into_iter()
                .find(|key| text.contains(key.as_str()))
                .unwrap_or_else(|| view.clone());
                locate(&key)
            };
            if view.ends_with('*') || check_view_pattern(view).is_err() {
                return Err(format!(
                    "{}: [data] `{}`: expected a feature view name ([A-Za-z_][A-Za-z0-9_]*)",
                    at(),
                    crate::text::quote_hashed(view, 80)
                ));
            }
            if path.trim().is_empty() {
                return Err(format!(
                    "{}: [data] {view}: expected the path of the view's data, found an empty string",
                    at()
                ));
            }
            config.data.push((view.clone(), path.clone()));
        }
        for (id, severity) in &file.severity {
            let rule = check_rule(id)?;
            let value = match severity.as_str() {
                "error" => Some(Severity::Error),
                "warning" => Some(Severity::Warning),
                "info" => Some(Severity::Info),
                "off" => None,
                other => {
                    return Err(format!(
                        "{}: severity of `{rule}` must be error, warning, info or off, found `{}`",
                        locate(id),
                        crate::text::quote_hashed(other, 80)
                    ))
                }
            };
            config.severity.insert(rule, value);
        }
        for ignore in file.ignore {
            let rule = check_rule(&ignore.rule)?;
            let views = match ignore.views {
                None => Vec::new(),
                Some(views) if views.is_empty() => {
                    return Err(format!(
                        "{}: [[ignore]] of `{}` has `views = []`, which would match no view; omit `views` to ignore the rule for every view",
                        locate("views"),
                        rule
                    ))
                }
                Some(views) => views,
            };
            for pattern in &views {
                check_view_pattern(pattern).map_err(|why| {
                    format!(
                        "{}: [[ignore]] of `{}`: unsupported view pattern `{}`: {why}",
                        locate(&format!("\"{pattern}\"")),
                        rule,
                        crate::text::quote_hashed(pattern, 80)
                    )
                })?;
            }
            config.ignore.push(Ignore {
                rule,
                views,
                reason: ignore.reason,
            });
        }
        Ok(config)
    }

    fn ignored(&self, rule: Rule, view: Option<&str>) -> bool {
        self.ignore.iter().any(|ignore| {
            ignore.rule == rule
                && (ignore.views.is_empty()
                    || view.is_some_and(|view| {
                        ignore
                            .views
                            .iter()
                            .any(|pattern| match pattern.strip_suffix('*') {
                                Some(prefix) => view.starts_with(prefix),
                                None => pattern == view,
                            })
                    }))
        })
    }

    /// Applies severity overrides and ignores to the findings of `report`. Passing checks
    /// stay as they are.
    pub fn apply(&self, report: &mut Report) {
        for file in &mut report.files {
            let view = file.view.clone();
            file.checks.retain_mut(|check| {
                // Input findings (unreadable files) are never dropped or downgraded;
                // `parse` refuses such settings, and this holds for a `Config` built in code.
                if !check.status.is_finding() || check.category() == Category::Input {
                    return true;
                }
                if self.ignored(check.rule, view.as_deref()) {
                    return false;
                }
                match self.severity.get(&check.rule) {
                    Some(None) => false,
                    Some(Some(severity)) => {
                        check.status = Status::from_severity(*severity);
                        true
                    }
                    None => true,
                }
            });
        }
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's `expected a sequence` / `expected a map` reached users.
    #[test]
    fn type_errors_name_the_key_in_plain_words() {
        let error =
            Config::parse("[[ignore]]\nrule = \"ttl\"\nviews = \"legacy_*\"\nreason = \"x\"\n")
                .unwrap_err();
        assert!(
            error.contains("`views`: expected a list, found the string \"legacy_*\""),
            "{error}"
        );
        let error = Config::parse("severity = 3\n").unwrap_err();
        assert!(
            error.contains("`severity`: expected a table (an object), found the number 3"),
            "{error}"
        );
    }
    use crate::report::{Actual, Expected};

    #[test]
    fn data_paths_are_views_and_relative_to_the_file() {
        let config =
            Config::parse("[data]\nuser_v1 = \"events/\"\nother_v1 = \"/abs.parquet\"\n").unwrap();
        assert_eq!(
            config.data,
            [
                ("other_v1".to_string(), "/abs.parquet".to_string()),
                ("user_v1".to_string(), "events/".to_string())
            ]
        );
        let error = Config::parse("[data]\n\"a b\" = \"x\"\n").unwrap_err();
        assert!(
            error.starts_with("2:1: [data] `a b`: expected a feature view name"),
            "{error}"
        );
        let error = Config::parse("[data]\nv = \" \"\n").unwrap_err();
        assert!(error.contains("found an empty string"), "{error}");
        let error = Config::parse("[data]\nv = 3\n").unwrap_err();
        assert!(error.contains("expected a string"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("arrowfeat.toml");
        std::fs::write(&file, "[data]\nv = \"events/\"\nw = \"s3://bucket/x\"\n").unwrap();
        let config = Config::load(&file).unwrap();
        assert_eq!(
            config.data[0].1,
            dir.path().join("events/").to_string_lossy()
        );
        assert_eq!(config.data[1].1, "s3://bucket/x");
    }

    #[test]
    fn parses_every_setting() {
        let config = Config::parse(
            "compatibility = \"full\"\ndeny_warnings = true\n[severity]\nfeature-extra = \"warning\"\nttl = \"off\"\n\
             [[ignore]]\nrule = \"entity-extra\"\nviews = [\"legacy_*\"]\nreason = \"old\"\n",
        )
        .unwrap();
        assert_eq!(config.compatibility, Mode::Full);
        assert!(config.deny_warnings);
        assert_eq!(
            config.severity[&Rule::FeatureExtra],
            Some(Severity::Warning)
        );
        assert_eq!(config.severity[&Rule::Ttl], None);
        assert!(config.ignored(Rule::EntityExtra, Some("legacy_stats_v1")));
        assert!(!config.ignored(Rule::EntityExtra, Some("driver_stats_v1")));
    }

    #[test]
    fn errors_name_line_column_and_suggest() {
        let error = Config::parse("[severity]\nfeature-extar = \"warning\"\n").unwrap_err();
        assert_eq!(error, "2:1: unknown rule `feature-extar` (rules are listed in docs/rules.md); did you mean `feature-extra`?");
        let error = Config::parse("[severity]\nttl = \"loud\"\n").unwrap_err();
        assert!(
            error.starts_with("2:1: severity of `ttl` must be"),
            "{error}"
        );
        let error = Config::parse("compatibility = \"sideways\"\n").unwrap_err();
        assert!(error.starts_with("1:18: compatibility must be"), "{error}");
        let error = Config::parse("colour = true\n").unwrap_err();
        assert!(error.starts_with("1:1: unknown field `colour`"), "{error}");
        let error = Config::parse("[severity\n").unwrap_err();
        assert!(error.starts_with("1:"), "{error}");
    }

    #[test]
    fn input_rules_cannot_be_silenced() {
        for text in [
            "[severity]\ninput-unreadable = \"off\"\n",
            "[severity]\nyaml-syntax = \"warning\"\n",
            "[severity]\nyaml-limits = \"info\"\n",
            "[[ignore]]\nrule = \"yaml-duplicate-key\"\n",
            "[[ignore]]\nrule = \"input-unreadable\"\nviews = [\"x\"]\n",
        ] {
            let error = Config::parse(text).unwrap_err();
            assert!(error.contains("category `input`"), "{text}: {error}");
            assert!(error.starts_with("2:"), "{error}");
        }
        // A Config built in code that tries anyway leaves input findings alone.
        let mut config = Config::default();
        config.severity.insert(Rule::InputUnreadable, None);
        config.ignore.push(Ignore {
            rule: Rule::YamlSyntax,
            views: vec![],
            reason: None,
        });
        let mut report = Report::new("", vec![crate::report::FileReport::new("x.yaml")]);
        for rule in [Rule::InputUnreadable, Rule::YamlSyntax] {
            report.files[0].checks.push(crate::report::Check::fail(
                rule,
                "file",
                Expected(""),
                Actual(""),
                crate::yaml::Pos::UNKNOWN,
                "unreadable",
            ));
        }
        config.apply(&mut report);
        assert_eq!(report.files[0].checks.len(), 2);
        assert_eq!(report.exit_code(false), 2);
    }

    #[test]
    fn unsupported_ignore_patterns_are_errors() {
        for pattern in [
            "*_v1",
            "legacy_*_v2",
            "a?c",
            "[ab]c",
            "",
            "has space",
            "x-y",
            "**",
            "é",
        ] {
            let text = format!("[[ignore]]\nrule = \"ttl\"\nviews = [\"{pattern}\"]\n");
            let error = Config::parse(&text).unwrap_err();
            assert!(
                error.contains("unsupported view pattern"),
                "{pattern}: {error}"
            );
            assert!(error.starts_with("3:"), "{pattern}: {error}");
        }
        let error = Config::parse("[[ignore]]\nrule = \"ttl\"\nviews = []\n").unwrap_err();
        assert!(error.contains("views = []"), "{error}");
        for pattern in ["*", "legacy_*", "driver_stats_v1", "_x", "v2*"] {
            let text = format!("[[ignore]]\nrule = \"ttl\"\nviews = [\"{pattern}\"]\n");
            assert!(Config::parse(&text).is_ok(), "{pattern}");
        }
    }
}
