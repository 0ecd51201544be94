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
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::compat::Mode;
use crate::report::{Report, Severity, Status};
use crate::rules;
use crate::suggest;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub compatibility: Mode,
    pub deny_warnings: bool,
    /// `None` turns the rule off.
    pub severity: BTreeMap<String, Option<Severity>>,
    pub ignore: Vec<Ignore>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ignore {
    pub rule: String,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IgnoreFile {
    rule: String,
    #[serde(default)]
    views: Vec<String>,
    #[serde(default)]
    reason: Option<String>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, String> {
        let bytes = crate::spec::read_bounded(path, 1024 * 1024)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| format!("{}: not valid UTF-8", path.display()))?;
        Config::parse(text).map_err(|message| format!("{}:{message}", path.display()))
    }

    /// Errors start with `line:column: `.
    pub fn parse(text: &str) -> Result<Config, String> {
        let file: ConfigFile = toml::from_str(text).map_err(|error| {
            let (line, column) = error
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            format!("{line}:{column}: {}", error.message().trim())
        })?;
        let locate = |needle: &str| -> String {
            let offset = text.find(needle).unwrap_or(0);
            let (line, column) = line_column(text, offset);
            format!("{line}:{column}")
        };
        let check_rule = |id: &str| -> Result<(), String> {
            if rules::by_id(id).is_some() {
                return Ok(());
            }
            let suggestion = suggest::closest(id, rules::ALL.iter().map(|r| r.id))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            Err(format!(
                "{}: unknown rule `{id}` (rules are listed in docs/rules.md){suggestion}",
                locate(id)
            ))
        };
        let mut config = Config::default();
        if let Some(mode) = &file.compatibility {
            config.compatibility = Mode::parse(mode).ok_or_else(|| {
                format!(
                    "{}: compatibility must be backward, forward, full or none, found `{mode}`",
                    locate(mode)
                )
            })?;
        }
        config.deny_warnings = file.deny_warnings.unwrap_or(false);
        for (rule, severity) in &file.severity {
            check_rule(rule)?;
            let value = match severity.as_str() {
                "error" => Some(Severity::Error),
                "warning" => Some(Severity::Warning),
                "info" => Some(Severity::Info),
                "off" => None,
                other => return Err(format!(
                    "{}: severity of `{rule}` must be error, warning, info or off, found `{other}`",
                    locate(&format!("{rule}"))
                )),
            };
            config.severity.insert(rule.clone(), value);
        }
        for ignore in file.ignore {
            check_rule(&ignore.rule)?;
            config.ignore.push(Ignore {
                rule: ignore.rule,
                views: ignore.views,
                reason: ignore.reason,
            });
        }
        Ok(config)
    }

    fn ignored(&self, rule: &str, view: Option<&str>) -> bool {
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
                if !check.status.is_finding() {
                    return true;
                }
                if self.ignored(check.rule, view.as_deref()) {
                    return false;
                }
                match self.severity.get(check.rule) {
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

    #[test]
    fn parses_every_setting() {
        let config = Config::parse(
            "compatibility = \"full\"\ndeny_warnings = true\n[severity]\nfeature-extra = \"warning\"\nttl = \"off\"\n\
             [[ignore]]\nrule = \"entity-extra\"\nviews = [\"legacy_*\"]\nreason = \"old\"\n",
        )
        .unwrap();
        assert_eq!(config.compatibility, Mode::Full);
        assert!(config.deny_warnings);
        assert_eq!(config.severity["feature-extra"], Some(Severity::Warning));
        assert_eq!(config.severity["ttl"], None);
        assert!(config.ignored("entity-extra", Some("legacy_stats_v1")));
        assert!(!config.ignored("entity-extra", Some("driver_stats_v1")));
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
}
