//! One run of the gate, from its inputs to a report ready to render: the configuration
//! (`arrowfeat.toml` discovered or named), the schema files, the store metadata, the earlier
//! revision (a directory or a git revision), the checks and the configured severities.
//! `arrowfeat check` / `arrowfeat diff` and the Python module (`arrowfeat.feast`) call
//! [`run`]; neither assembles a run of its own.

use std::path::{Path, PathBuf};

use crate::compat::Mode;
use crate::config::Config;
use crate::output::{render, render_error, Format, RenderOptions};
use crate::report::Report;
use crate::run::{self, LoadOptions, Loaded, Targets};
use crate::store::{self, StoreMetadata};

/// `arrowfeat check` (schemas against a store and/or an earlier revision) or `arrowfeat
/// diff` (only the revision checks, and the old revision must be readable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Check,
    Diff,
    /// `arrowfeat drift`: the check of the schema files, and the drift of their data.
    Drift,
    /// `arrowfeat skew`: the check of the schema files, and serving against training data.
    Skew,
}

impl Command {
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Diff => "diff",
            Command::Drift => "drift",
            Command::Skew => "skew",
        }
    }
}

/// How error messages name the inputs: the CLI's flags, or the Python arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    pub schemas: &'static str,
    pub registry: &'static str,
    pub against: &'static str,
    pub config: &'static str,
    /// The report's `against` when there is nothing to compare with (a lint).
    pub nothing_to_compare: &'static str,
}

impl Names {
    /// `arrowfeat check` and `arrowfeat diff`.
    pub fn cli(command: Command) -> Names {
        let (schemas, against) = match command {
            Command::Check => ("--schemas", "--against"),
            Command::Diff => ("NEW", "OLD"),
            Command::Drift | Command::Skew => ("--schemas", "--against"),
        };
        Names {
            schemas,
            registry: "--registry",
            against,
            config: "--config",
            nothing_to_compare: "the schema format only (no --registry, --feast-repo or --against)",
        }
    }

    /// Keyword arguments of a library call (Python's `arrowfeat.feast`).
    pub const ARGUMENTS: Names = Names {
        schemas: "schemas",
        registry: "registry",
        against: "against",
        config: "config",
        nothing_to_compare: "the schema format only (no store and no earlier revision)",
    };
}

/// Where the feature store's metadata comes from.
pub enum StoreSource<'a> {
    /// A `feast registry-dump` JSON or arrowfeat store metadata file.
    File(PathBuf),
    /// The same, in memory (e.g. built from Feast objects); `label` names it in the report.
    Json { json: Vec<u8>, label: String },
    /// Metadata the caller obtains (the CLI runs `feast registry-dump`), when the run gets
    /// to it; its error is reported as it is.
    Loader {
        label: String,
        load: Box<dyn FnOnce() -> Result<StoreMetadata, String> + Send + 'a>,
    },
}

/// Where the configuration comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigSource {
    /// `arrowfeat.toml` in this directory if it exists (the CLI: the working directory).
    /// One that exists but cannot be read (a FIFO, a broken link, a directory) is an
    /// error, not silently skipped.
    Discover(PathBuf),
    /// This file; it must exist.
    File(PathBuf),
    /// Built in code.
    Given(Config),
}

/// Where the baseline (accepted findings, [`crate::suppress`]) comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum BaselineSource {
    None,
    /// `arrowfeat-baseline.json` in this directory if it exists (the CLI: the working
    /// directory, beside `arrowfeat.toml`). One that exists but cannot be read is an error.
    Discover(PathBuf),
    /// This file; it must exist.
    File(PathBuf),
}

/// What one run checks, and against what.
pub struct Inputs<'a> {
    pub command: Command,
    /// A schema file, or a directory searched for `*.yaml` / `*.yml`.
    pub schemas: PathBuf,
    /// Always `None` for [`Command::Diff`].
    pub store: Option<StoreSource<'a>>,
    /// The views' data and the engine that checks it (`arrowfeat check --data`).
    pub data: Option<&'a dyn crate::run::DataSource>,
    /// The earlier revision: a path, else a git revision of `schemas`' path. Required for
    /// [`Command::Diff`].
    pub previous: Option<String>,
    pub config: ConfigSource,
    /// Overrides the configuration's mode.
    pub compatibility: Option<Mode>,
    /// Warnings fail the run too (besides the configuration's `deny_warnings`).
    pub deny_warnings: bool,
    pub load: LoadOptions,
    pub names: Names,
    pub baseline: BaselineSource,
    /// Write every acceptable finding to this baseline file (before any baseline is
    /// applied), then check with it as the baseline.
    pub write_baseline: Option<PathBuf>,
}

impl<'a> Inputs<'a> {
    /// `arrowfeat check` of `schemas` with everything else unset: no store, no revision,
    /// `arrowfeat.toml` discovered in the working directory, the CLI's names.
    pub fn check(schemas: impl Into<PathBuf>) -> Inputs<'a> {
        Inputs {
            command: Command::Check,
            schemas: schemas.into(),
            store: None,
            data: None,
            previous: None,
            config: ConfigSource::Discover(PathBuf::from(".")),
            compatibility: None,
            deny_warnings: false,
            load: LoadOptions::default(),
            names: Names::cli(Command::Check),
            baseline: BaselineSource::Discover(PathBuf::from(".")),
            write_baseline: None,
        }
    }

    /// `arrowfeat diff OLD NEW`.
    pub fn diff(old: impl Into<String>, new: impl Into<PathBuf>) -> Inputs<'a> {
        Inputs {
            command: Command::Diff,
            previous: Some(old.into()),
            names: Names::cli(Command::Diff),
            ..Inputs::check(new)
        }
    }
}

/// A run that could not check anything (exit code 2): a missing path, an unreadable
/// registry or configuration. The message is escaped (it may quote hostile input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateError {
    pub command: Command,
    pub message: String,
}

impl GateError {
    fn new(command: Command, message: impl AsRef<str>) -> GateError {
        // Cut as well as escaped: a loader's message may carry a tool's whole stderr
        // (`feast registry-dump`), and it goes into the report as well as onto stderr.
        GateError {
            command,
            message: crate::text::cap(message.as_ref(), crate::output::MAX_FIELD_CHARS),
        }
    }

    /// A valid report of the error in `format` (see [`render_error`]).
    pub fn render(&self, format: Format) -> String {
        let options = RenderOptions {
            color: false,
            verbose: false,
            deny_warnings: false,
            command: self.command.as_str(),
        };
        render_error(&self.message, format, &options)
    }

    pub fn exit_code(&self) -> i32 {
        2
    }
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GateError {}

/// How a report is shown: ANSI colour (text only) and, for text, every check (`verbose`)
/// or only the findings and the summary (the default). The structured formats have the
/// same content either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
    pub verbose: bool,
}

/// The report of a run, with what rendering it needs: the command and whether warnings
/// fail it. Rendering never checks again.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub report: Report,
    pub command: Command,
    /// `Inputs::deny_warnings` or the configuration's `deny_warnings`.
    pub deny_warnings: bool,
}

impl RunReport {
    /// 0 pass; 1 errors (or warnings when denied); 2 unreadable input.
    pub fn exit_code(&self) -> i32 {
        self.report.exit_code(self.deny_warnings)
    }

    /// The exit code if warnings were denied (or not) regardless of the run's setting.
    pub fn exit_code_with(&self, deny_warnings: bool) -> i32 {
        self.report.exit_code(deny_warnings)
    }

    /// The report in `format`; `style` sets colour and, for text, whether every check is
    /// listed (`verbose`) or only the findings and the summary.
    pub fn render(&self, format: Format, style: Style) -> String {
        self.render_with(format, style, self.deny_warnings)
    }

    /// [`RunReport::render`] with warnings denied (or not) regardless of the run's setting.
    pub fn render_with(&self, format: Format, style: Style, deny_warnings: bool) -> String {
        let options = RenderOptions {
            color: style.color,
            verbose: style.verbose,
            deny_warnings,
            command: self.command.as_str(),
        };
        render(&self.report, format, &options)
    }
}

/// The `[data]` paths of the configuration `source` names, for a caller that builds its
/// data sources before the run; an error when the configuration cannot be read (the run
/// reports it).
pub fn config_data(source: &ConfigSource) -> Result<Vec<(String, String)>, String> {
    load_config(source.clone(), &Names::ARGUMENTS).map(|config| config.data)
}

fn load_config(source: ConfigSource, names: &Names) -> Result<Config, String> {
    match source {
        ConfigSource::Given(config) => Ok(config),
        ConfigSource::File(path) => {
            Config::load(&path).map_err(|e| format!("{} {e}", names.config))
        }
        ConfigSource::Discover(dir) => {
            // `arrowfeat.toml`, not `./arrowfeat.toml`, in messages about the working directory.
            let path = if dir.as_os_str().is_empty() || dir == Path::new(".") {
                PathBuf::from("arrowfeat.toml")
            } else {
                dir.join("arrowfeat.toml")
            };
            if path.symlink_metadata().is_ok() {
                Config::load(&path)
            } else {
                Ok(Config::default())
            }
        }
    }
}

fn load_store(source: StoreSource<'_>, names: &Names) -> Result<(StoreMetadata, String), String> {
    match source {
        StoreSource::File(path) => {
            let metadata = store::load(&path).map_err(|e| format!("{} {e}", names.registry))?;
            Ok((metadata, path.display().to_string()))
        }
        StoreSource::Json { json, label } => {
            let metadata = store::parse(&json).map_err(|e| format!("{label}: {e}"))?;
            Ok((metadata, label))
        }
        StoreSource::Loader { label, load } => Ok((load()?, label)),
    }
}

/// The schema files of an earlier revision, how the report names it, and the links of a
/// git revision that were not followed (label, why): a file or directory on disk if
/// `reference` exists, else a git revision of `schemas`' path.
#[allow(clippy::type_complexity)]
fn load_revision(
    reference: &str,
    schemas: &Path,
    options: &LoadOptions,
    names: &Names,
) -> Result<(Vec<Loaded>, String, Vec<(String, String)>), String> {
    let as_path = Path::new(reference);
    if as_path.symlink_metadata().is_ok() {
        // A directory named like a branch (`main`) would silently be compared instead of
        // the branch: the name is refused until written as one or the other.
        if crate::git::is_revision(reference, schemas) {
            return Err(format!(
                "{} `{}`: both a path and a git revision; write `./{}` for the path, or \
                 `refs/heads/{}` (or a commit) for the revision",
                names.against,
                crate::text::short(reference),
                crate::text::short(reference.trim_start_matches("./")),
                crate::text::short(reference)
            ));
        }
        return Ok((
            run::load_path_with(as_path, options)?,
            reference.to_string(),
            Vec::new(),
        ));
    }
    let sources =
        crate::git::schema_sources(reference, schemas, options.follow_symlinks).map_err(|e| {
            if e.contains("does not exist at git revision") {
                format!("{} `{reference}`: {e}", names.against)
            } else {
                format!(
                    "{} `{reference}`: not an existing path, and not a git revision: {e}",
                    names.against
                )
            }
        })?;
    Ok((
        run::load_sources(&sources.files),
        format!("git revision {reference}"),
        sources.refused,
    ))
}

/// Runs the gate: reads the configuration, the schema files, the store metadata and the
/// earlier revision (in this order; the first that cannot be read is the error), checks,
/// and applies the configuration.
pub fn run(inputs: Inputs<'_>) -> Result<RunReport, GateError> {
    let command = inputs.command;
    let deny_warnings = inputs.deny_warnings;
    run_inner(inputs)
        .map(|(report, config)| RunReport {
            report,
            command,
            deny_warnings: deny_warnings || config.deny_warnings,
        })
        .map_err(|message| GateError::new(command, message))
}

fn run_inner(inputs: Inputs<'_>) -> Result<(Report, Config), String> {
    let names = inputs.names;
    let mut config = load_config(inputs.config, &names)?;
    if let Some(mode) = inputs.compatibility {
        config.compatibility = mode;
    }
    let loaded = run::load_path_with(&inputs.schemas, &inputs.load)
        .map_err(|e| format!("{} {e}", names.schemas))?;
    if inputs.command != Command::Diff && loaded.is_empty() {
        return Err(format!(
            "{} {}: no schema files (*.yaml, *.yml) found",
            names.schemas,
            inputs.schemas.display()
        ));
    }
    let store = match inputs.store {
        Some(source) => Some(load_store(source, &names)?),
        None => None,
    };
    let (previous, refused_old) = match &inputs.previous {
        Some(reference) => {
            let (loaded, label, refused) =
                load_revision(reference, &inputs.schemas, &inputs.load, &names)?;
            (Some((loaded, label)), refused)
        }
        None => (None, Vec::new()),
    };
    // Only the new revision's files are reported; the old one is what they are compared
    // with. `diff` needs every old file; `check --against` says which it could not read
    // (a warning on each: the pull request that repairs a broken file must be able to
    // pass), never skips them without a word.
    let unreadable_old: Vec<String> = previous
        .iter()
        .flat_map(|(old, _)| old)
        .filter(|(_, file)| file.is_none())
        .map(|(report, _)| report.path.clone())
        .collect();
    if inputs.command == Command::Diff {
        let mut unreadable = unreadable_old.clone();
        unreadable.extend(refused_old.iter().map(|(label, _)| label.clone()));
        if !unreadable.is_empty() {
            return Err(format!(
                "{}: cannot read {} (run `arrowfeat check --schemas` on it to see why)",
                names.against,
                unreadable.join(", ")
            ));
        }
    }
    // `drift` and `skew` read the store only for where each view's data is.
    let compare_store = matches!(inputs.command, Command::Check | Command::Diff);
    let mut against = Vec::new();
    if let Some((_, label)) = store.as_ref().filter(|_| compare_store) {
        against.push(label.clone());
    }
    if let Some((_, label)) = &previous {
        against.push(format!("{label} ({} compatibility)", config.compatibility));
    }
    if let Some(data) = inputs.data {
        against.push(data.label());
    }
    if against.is_empty() {
        against.push(names.nothing_to_compare.to_string());
    }
    let targets = Targets {
        store: store.as_ref().map(|(metadata, _)| metadata),
        compare_store,
        data: inputs.data,
        previous: previous.as_ref().map(|(loaded, _)| loaded.as_slice()),
        against: against.join(" and "),
    };
    // A file that does not parse may be the one declaring the view: its finding is the
    // report's answer until it parses.
    let every_file_read = loaded.iter().all(|(_, file)| file.is_some());
    let mut report = run::check(loaded, &targets, &config);
    // Refused before anything is written (the baseline of `--write-baseline`).
    if let Some(message) = inputs
        .data
        .filter(|_| every_file_read)
        .and_then(|data| data.undeclared())
    {
        return Err(message);
    }
    for path in unreadable_old {
        let mut file = crate::report::FileReport::new(path.clone());
        file.checks.push(crate::report::Check::finding(
            crate::rules::Rule::CompatChange,
            crate::rules::Severity::Warning,
            "earlier revision",
            crate::report::Expected("a feature view"),
            crate::report::Actual("unreadable"),
            crate::yaml::Pos::UNKNOWN,
            format!(
                "{path} in the earlier revision cannot be read as a feature view, so the views \
                 of this revision were not compared with it (run `arrowfeat check --schemas` \
                 on that revision to see why)"
            ),
        ));
        report.files.push(file);
    }
    // A link of the earlier revision that was not followed hides a view from the
    // comparison: an error (exit 2), as the same link is in a directory walk.
    for (label, why) in refused_old {
        let mut file = crate::report::FileReport::new(label.clone());
        file.checks.push(crate::report::Check::fail(
            crate::rules::Rule::InputUnreadable,
            "earlier revision",
            crate::report::Expected("a schema file of the earlier revision"),
            crate::report::Actual("link not followed"),
            crate::yaml::Pos::UNKNOWN,
            format!(
                "{} in the earlier revision is {why}, so the view behind it was not compared",
                crate::text::clean(&label)
            ),
        ));
        report.files.push(file);
    }
    report.against_detail = crate::report::AgainstDetail {
        registry: store
            .as_ref()
            .filter(|_| compare_store)
            .map(|(_, label)| label.clone()),
        revision: inputs.previous.clone(),
        revision_kind: previous
            .as_ref()
            .zip(inputs.previous.as_ref())
            .map(|((_, label), reference)| if label == reference { "path" } else { "git" }),
        mode: previous.as_ref().map(|_| config.compatibility),
    };
    crate::suppress::apply_ignores(&mut report);
    let baseline = match inputs.write_baseline {
        Some(path) => {
            let text = crate::suppress::write(&report);
            std::fs::write(&path, &text).map_err(|e| {
                format!(
                    "--write-baseline {}: {e}",
                    crate::text::clean(&path.display().to_string())
                )
            })?;
            let entries = crate::suppress::parse(text.as_bytes())
                .map_err(|e| format!("the baseline just written: {e}"))?;
            Some((entries, path))
        }
        None => load_baseline(inputs.baseline)?,
    };
    if let Some((entries, path)) = baseline {
        let label = path.display().to_string();
        let label = label.strip_prefix("./").unwrap_or(&label).to_string();
        crate::suppress::apply_baseline(&mut report, &entries, &label);
    }
    report.flag_unchecked_files();
    Ok((report, config))
}

fn load_baseline(
    source: BaselineSource,
) -> Result<Option<(Vec<crate::suppress::Entry>, PathBuf)>, String> {
    let path = match source {
        BaselineSource::None => return Ok(None),
        BaselineSource::File(path) => path,
        BaselineSource::Discover(dir) => {
            let path = if dir.as_os_str().is_empty() || dir == Path::new(".") {
                PathBuf::from(crate::suppress::DEFAULT_BASELINE)
            } else {
                dir.join(crate::suppress::DEFAULT_BASELINE)
            };
            if path.symlink_metadata().is_err() {
                return Ok(None);
            }
            path
        }
    };
    let entries = crate::suppress::load(&path).map_err(|e| format!("baseline {e}"))?;
    Ok(Some((entries, path)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;
    use crate::rules::Rule;

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
    }

    /// A fresh directory, removed when the guard drops (even if the test panics).
    fn tempdir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("arrowfeat-pipeline-{name}-"))
            .tempdir()
            .unwrap()
    }

    fn registry() -> StoreSource<'static> {
        StoreSource::File(repo("tests/fixtures/feast/registry.json"))
    }

    fn statuses(run: &RunReport, rule: Rule) -> Vec<Status> {
        run.report
            .findings()
            .filter(|(_, c)| c.rule == rule)
            .map(|(_, c)| c.status)
            .collect()
    }

    #[test]
    fn a_discovered_config_applies_and_render_does_not_check_again() {
        let drifted = repo("tests/fixtures/schemas/drifted");
        let plain = run(Inputs {
            store: Some(registry()),
            config: ConfigSource::Given(Config::default()),
            ..Inputs::check(&drifted)
        })
        .unwrap();
        assert!(statuses(&plain, Rule::Ttl).contains(&Status::Error));

        let tmp = tempdir("config");
        let dir = tmp.path();
        std::fs::write(
            dir.join("arrowfeat.toml"),
            "deny_warnings = true\n[severity]\nttl = \"warning\"\n",
        )
        .unwrap();
        let configured = run(Inputs {
            store: Some(registry()),
            config: ConfigSource::Discover(dir.to_path_buf()),
            ..Inputs::check(&drifted)
        })
        .unwrap();
        assert!(!statuses(&configured, Rule::Ttl).is_empty());
        assert!(statuses(&configured, Rule::Ttl)
            .iter()
            .all(|s| *s == Status::Warning));
        assert!(configured.deny_warnings, "deny_warnings from the config");
        // Every format renders from the same report.
        let json: serde_json::Value =
            serde_json::from_str(&configured.render(Format::Json, Style::default())).unwrap();
        assert_eq!(json["exit_code"], configured.exit_code());
        assert_eq!(json["command"], "check");

        // The same directory given as a file; a broken one names the input.
        let named = run(Inputs {
            store: Some(registry()),
            config: ConfigSource::File(dir.join("arrowfeat.toml")),
            ..Inputs::check(&drifted)
        })
        .unwrap();
        assert_eq!(named.report, configured.report);
        std::fs::write(dir.join("arrowfeat.toml"), "[severity]\nttl = \"loud\"\n").unwrap();
        let error = run(Inputs {
            config: ConfigSource::Discover(dir.to_path_buf()),
            ..Inputs::check(&drifted)
        })
        .unwrap_err();
        assert!(
            error
                .message
                .contains("arrowfeat.toml:2:1: severity of `ttl`"),
            "{error}"
        );
        let error = run(Inputs {
            config: ConfigSource::File(dir.join("missing.toml")),
            ..Inputs::check(&drifted)
        })
        .unwrap_err();
        assert!(error.message.starts_with("--config "), "{error}");
    }

    #[test]
    fn json_store_matches_the_file_and_errors_use_the_names() {
        let schemas = repo("schemas/examples");
        let json = std::fs::read(repo("tests/fixtures/feast/registry.json")).unwrap();
        let from_file = run(Inputs {
            store: Some(registry()),
            ..Inputs::check(&schemas)
        })
        .unwrap();
        let from_json = run(Inputs {
            store: Some(StoreSource::Json {
                json,
                label: "in memory".into(),
            }),
            ..Inputs::check(&schemas)
        })
        .unwrap();
        assert_eq!(from_file.report.files, from_json.report.files);
        assert_eq!(from_json.report.against, "in memory");
        assert_eq!(from_json.exit_code(), 0);

        let error = run(Inputs {
            store: Some(StoreSource::Json {
                json: b"[".to_vec(),
                label: "bad\x1b".into(),
            }),
            ..Inputs::check(&schemas)
        })
        .unwrap_err();
        assert!(error.message.starts_with("bad\\u{1b}: "), "{error}");
        let error = run(Inputs {
            names: Names::ARGUMENTS,
            ..Inputs::check(repo("no/such/dir"))
        })
        .unwrap_err();
        assert!(error.message.starts_with("schemas "), "{error}");
        let rendered = error.render(Format::Sarif);
        assert!(
            rendered.contains("\"executionSuccessful\": false"),
            "{rendered}"
        );
    }

    const VIEW: &str = "name: v_v1\nschema_version: VERSION\nentities: [{name: driver, join_key: driver_id, type: int64}]\nevent_timestamp: {name: ts}\nTTL\nfeatures:\n  - name: a\n    type: int64\n  - name: f\nFEATURE\n";
    const STORE: &str = r#"{"format":"arrowfeat-store-metadata","format_version":1,"store":"s","entities":[{"name":"driver","join_key":"driver_id","type":"int64"}],"feature_views":[{"name":"v_v1","entities":["driver"],"ttl_seconds":86400,"tags":{"schema_version":"1.0.0"},"event_timestamp":{"name":"ts"},"features":[{"name":"a","type":"int64"},{"name":"f","type":"float32"}]}]}"#;

    fn view(version: &str, ttl: &str, feature: &str) -> String {
        VIEW.replace("VERSION", version)
            .replace("TTL", ttl)
            .replace("FEATURE", feature)
    }

    /// A check of one schema file (`schema`, in its own directory) against the store.
    fn check_one(schema: &str, config: Config) -> RunReport {
        let tmp = tempdir("one");
        std::fs::write(tmp.path().join("v.yaml"), schema).unwrap();
        run(Inputs {
            store: Some(StoreSource::Json {
                json: STORE.as_bytes().to_vec(),
                label: "store".into(),
            }),
            config: ConfigSource::Given(config),
            baseline: BaselineSource::None,
            ..Inputs::check(tmp.path().join("v.yaml"))
        })
        .unwrap()
    }

    /// Accepting the format finding about a value (a type outside the vocabulary, a TTL
    /// out of range) accepted the comparisons it made impossible too: exit 0 against a
    /// store that disagrees.
    #[test]
    fn accepted_format_findings_do_not_hide_comparisons() {
        let ok = check_one(
            &view("1.0.0", "ttl: 1d", "    type: float32"),
            Config::default(),
        );
        assert_eq!(
            ok.exit_code(),
            0,
            "{:#?}",
            ok.report.findings().collect::<Vec<_>>()
        );
        let unaccepted = check_one(
            &view("1.0.0", "ttl: 1d", "    type: map<string,float32>"),
            Config::default(),
        );
        // Reported as the type-syntax error, once: nothing else to say.
        assert_eq!(unaccepted.exit_code(), 1);
        assert!(statuses(&unaccepted, Rule::InputUnreadable).is_empty());
        for schema in [
            view(
                "1.0.0",
                "ttl: 1d",
                "    # arrowfeat: ignore[type-syntax] JIRA-1\n    type: map<string,float32>",
            ),
            view(
                "1.0.0",
                "ttl: 999999999999 # arrowfeat: ignore[schema-violation] x",
                "    type: float32",
            ),
        ] {
            let run = check_one(&schema, Config::default());
            assert_eq!(run.exit_code(), 2, "{schema}");
            let flagged: Vec<_> = run
                .report
                .findings()
                .filter(|(_, c)| c.rule == Rule::InputUnreadable)
                .collect();
            assert_eq!(flagged.len(), 1, "{flagged:#?}");
            let (file, check) = flagged[0];
            assert!(file.path.ends_with("v.yaml"));
            assert!(check.line > 0, "{check:?}");
            assert!(
                check.message.contains("was not compared with the store"),
                "{}",
                check.message
            );
        }
        // `[severity]` downgrading the format rule is the same acceptance.
        let mut config = Config::default();
        config
            .severity
            .insert(Rule::TypeSyntax, Some(crate::rules::Severity::Warning));
        let run = check_one(
            &view("1.0.0", "ttl: 1d", "    type: map<string,float32>"),
            config,
        );
        assert_eq!(run.exit_code(), 2);
    }

    fn diff_dirs(old: &str, new: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempdir("revisions");
        let (o, n) = (tmp.path().join("old"), tmp.path().join("new"));
        std::fs::create_dir_all(&o).unwrap();
        std::fs::create_dir_all(&n).unwrap();
        std::fs::write(o.join("v.yaml"), old).unwrap();
        std::fs::write(n.join("v.yaml"), new).unwrap();
        (tmp, o, n)
    }

    /// The type (or TTL) that cannot be read is still compared with the earlier revision.
    #[test]
    fn unreadable_values_still_count_as_changes() {
        let old = view("1.0.0", "ttl: 1d", "    type: float32");
        for new in [
            view(
                "1.0.0",
                "ttl: 1d",
                "    # arrowfeat: ignore[type-syntax] JIRA-1\n    type: map<string,float32>",
            ),
            view(
                "1.0.0",
                "ttl: 999999999999 # arrowfeat: ignore[schema-violation] x",
                "    type: float32",
            ),
        ] {
            let (_tmp, o, n) = diff_dirs(&old, &new);
            let run = run(Inputs {
                config: ConfigSource::Given(Config::default()),
                baseline: BaselineSource::None,
                ..Inputs::diff(o.display().to_string(), n)
            })
            .unwrap();
            assert_eq!(run.exit_code(), 1, "{new}");
            assert!(
                !statuses(&run, Rule::CompatBreaking).is_empty()
                    || !statuses(&run, Rule::CompatVersionBump).is_empty(),
                "{:#?}",
                run.report.findings().collect::<Vec<_>>()
            );
        }
    }

    /// A baseline accepted `a: int64 → int32` under a minor bump; `a: int64 → string`
    /// under the same bump is another finding.
    #[test]
    fn baselines_of_changes_name_the_change() {
        let old = view("1.0.0", "ttl: 1d", "    type: float32");
        let int32 = old
            .replace("1.0.0", "1.1.0")
            .replace("    type: int64", "    type: int32");
        let (tmp, o, n) = diff_dirs(&old, &int32);
        let baseline = tmp.path().join("acc.json");
        let diff = |baseline: BaselineSource, write: Option<PathBuf>| {
            run(Inputs {
                config: ConfigSource::Given(Config::default()),
                baseline,
                write_baseline: write,
                ..Inputs::diff(o.display().to_string(), n.clone())
            })
            .unwrap()
        };
        let written = diff(BaselineSource::None, Some(baseline.clone()));
        assert_eq!(written.exit_code(), 0);
        assert_eq!(written.report.baselined, 1);
        let again = diff(BaselineSource::File(baseline.clone()), None);
        assert_eq!(again.exit_code(), 0);
        std::fs::write(
            n.join("v.yaml"),
            int32.replace("    type: int32", "    type: string"),
        )
        .unwrap();
        let changed = diff(BaselineSource::File(baseline), None);
        assert_eq!(changed.exit_code(), 1);
        assert_eq!(changed.report.baselined, 0);
        assert_eq!(
            statuses(&changed, Rule::CompatBreaking),
            vec![Status::Error]
        );
    }

    /// Values from files are cut in every format: a megabyte `schema_version` or feature
    /// name gives a report of kilobytes.
    #[test]
    fn huge_values_do_not_flood_the_report() {
        let long = "A".repeat(1_000_000);
        for schema in [
            view(&long, "ttl: 1d", "    type: float32"),
            view("1.0.0", "ttl: 1d", "    type: float32")
                .replace("name: f", &format!("name: {long}")),
            view("1.0.0", "ttl: 1d", "    type: float32").replace("ttl: 1d", &format!("{long}: 1")),
        ] {
            let run = check_one(&schema, Config::default());
            assert_ne!(run.exit_code(), 0);
            for format in [Format::Text, Format::Json, Format::Github, Format::Markdown] {
                let rendered = run.render(
                    format,
                    Style {
                        color: false,
                        verbose: true,
                    },
                );
                assert!(
                    rendered.len() < 40_000,
                    "{format:?}: {} bytes",
                    rendered.len()
                );
            }
        }
        let error = GateError::new(Command::Check, "x".repeat(1_000_000));
        assert!(error.message.len() < 5_000);
        assert!(error.render(Format::Json).len() < 5_000);
    }

    #[test]
    fn diff_needs_a_readable_old_revision() {
        let revisions = repo("tests/fixtures/schemas/revisions");
        let diffed = run(Inputs::diff(
            revisions.join("old").display().to_string(),
            revisions.join("new"),
        ))
        .unwrap();
        assert_eq!(diffed.command, Command::Diff);
        assert!(diffed.report.against.ends_with("(BACKWARD compatibility)"));
        let tmp = tempdir("diff");
        let dir = tmp.path();
        std::fs::write(dir.join("broken.yaml"), "name: [\n").unwrap();
        let error = run(Inputs::diff(
            dir.display().to_string(),
            revisions.join("new"),
        ))
        .unwrap_err();
        assert!(error.message.starts_with("OLD: cannot read "), "{error}");
        let error = run(Inputs::diff("no-such-ref", revisions.join("new"))).unwrap_err();
        assert!(
            error
                .message
                .starts_with("OLD `no-such-ref`: not an existing path"),
            "{error}"
        );
    }

    const BASE: &str = "name: v\nschema_version: VERSION\nentities: [{name: driver, join_key: driver_id, type: int64}]\nevent_timestamp: {name: ts}\nfeatures: [{name: f, type: FTYPE}]\n";

    fn base(version: &str, ftype: &str) -> String {
        BASE.replace("VERSION", version).replace("FTYPE", ftype)
    }

    fn diff_with(old: &str, new: &str, config: Config) -> RunReport {
        let (_tmp, o, n) = diff_dirs(old, new);
        run(Inputs {
            config: ConfigSource::Given(config),
            baseline: BaselineSource::None,
            command: Command::Check,
            names: Names::cli(Command::Check),
            ..Inputs::diff(o.display().to_string(), n)
        })
        .unwrap()
    }

    /// An accepted `compat-version-bump` finding (a version that went down, or one that is
    /// not semver) hid every other revision check: `f: int64 → string` passed.
    #[test]
    fn an_accepted_version_finding_does_not_hide_the_changes() {
        let mut warn = Config::default();
        warn.severity.insert(
            Rule::CompatVersionBump,
            Some(crate::rules::Severity::Warning),
        );
        let down = diff_with(
            &base("2.0.0", "int64"),
            &base("1.0.0", "string"),
            warn.clone(),
        );
        assert_eq!(down.exit_code(), 1);
        assert_eq!(statuses(&down, Rule::CompatBreaking), vec![Status::Error]);
        assert_eq!(
            statuses(&down, Rule::CompatVersionBump),
            vec![Status::Warning]
        );
        // The same with the version finding left as an error: both are reported.
        let down = diff_with(
            &base("2.0.0", "int64"),
            &base("1.0.0", "string"),
            Config::default(),
        );
        assert_eq!(statuses(&down, Rule::CompatBreaking), vec![Status::Error]);

        // Not semver in the earlier revision: the changes cannot be classified.
        let unreadable = diff_with(
            &base("\"2.0\"", "int64"),
            &base("1.0.0", "string"),
            warn.clone(),
        );
        assert_eq!(unreadable.exit_code(), 2);
        let flagged: Vec<_> = unreadable
            .report
            .findings()
            .filter(|(_, c)| c.rule == Rule::InputUnreadable)
            .collect();
        assert_eq!(flagged.len(), 1, "{flagged:#?}");
        assert!(flagged[0]
            .1
            .message
            .contains("was not compared with the earlier revision"));
        // Without changes there is nothing left unchecked.
        let same = diff_with(&base("\"2.0\"", "int64"), &base("1.0.0", "int64"), warn);
        assert_eq!(
            same.exit_code(),
            0,
            "{:#?}",
            same.report.findings().collect::<Vec<_>>()
        );
    }

    /// A revision declaring a feature or an entity twice was compared with one of them
    /// (the last): `[f: int64, f: string]` → `[f: string]` passed.
    #[test]
    fn duplicates_are_compared_with_every_declaration() {
        let old = base("1.0.0", "int64").replace(
            "features: [{name: f, type: int64}]",
            "features: [{name: f, type: int64}, {name: f, type: string}]",
        );
        let run = diff_with(&old, &base("1.0.0", "string"), Config::default());
        assert_eq!(run.exit_code(), 1);
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);

        let entity = "entities: [{name: driver, join_key: driver_id, type: int64}]";
        let old = base("1.0.0", "int64").replace(
            entity,
            "entities: [{name: driver, join_key: d2, type: string}, {name: driver, join_key: driver_id, type: int64}]",
        );
        let run = diff_with(&old, &base("1.0.0", "int64"), Config::default());
        assert_eq!(run.exit_code(), 1);
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);
        // In the new revision it is a finding of the file itself.
        let run = diff_with(&base("1.0.0", "int64"), &old, Config::default());
        assert!(statuses(&run, Rule::DuplicateFeature).contains(&Status::Error));
    }

    /// `min: 1` → `min: 1.0` is the same bound (serde_json's `1 != 1.0` made it a change).
    #[test]
    fn equal_bounds_written_differently_are_no_change() {
        let with = |c: &str| {
            base("1.0.0", "float64").replace(
                "type: float64}",
                &format!("type: float64, constraints: {{{c}}}}}"),
            )
        };
        let run = diff_with(&with("min: 1"), &with("min: 1.0"), Config::default());
        assert_eq!(
            run.exit_code(),
            0,
            "{:#?}",
            run.report.findings().collect::<Vec<_>>()
        );
        let run = diff_with(&with("min: 1"), &with("min: 1.5"), Config::default());
        assert_eq!(statuses(&run, Rule::CompatVersionBump), vec![Status::Error]);
        let big = |v: &str| {
            base("1.0.0", "int64").replace(
                "f, type: int64}",
                &format!("f, type: int64, constraints: {{max: {v}}}}}"),
            )
        };
        // Beyond f64's precision, still different.
        let run = diff_with(
            &big("9007199254740993"),
            &big("9007199254740992"),
            Config::default(),
        );
        assert_eq!(statuses(&run, Rule::CompatVersionBump), vec![Status::Error]);
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(status.status.success(), "{args:?}: {status:?}");
    }

    fn check_against(dir: &Path, schemas: &str, reference: &str) -> Result<RunReport, GateError> {
        run(Inputs {
            previous: Some(reference.into()),
            config: ConfigSource::Given(Config::default()),
            baseline: BaselineSource::None,
            ..Inputs::check(dir.join(schemas))
        })
    }

    /// A committed symbolic link was read as the text of its target path (unreadable: a
    /// warning, the view uncompared, exit 0); a schema path that does not exist at the
    /// revision compared with nothing and passed.
    #[cfg(unix)]
    #[test]
    fn git_revisions_follow_links_and_name_missing_paths() {
        let tmp = tempdir("git");
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        std::fs::create_dir_all(dir.join("features/impl")).unwrap();
        std::fs::create_dir_all(dir.join("shared")).unwrap();
        std::fs::write(dir.join("features/impl/v.yaml.txt"), base("1.0.0", "int64")).unwrap();
        std::os::unix::fs::symlink("impl/v.yaml.txt", dir.join("features/v.yaml")).unwrap();
        std::fs::write(
            dir.join("shared/w.yaml"),
            base("1.0.0", "int64").replace("name: v", "name: w"),
        )
        .unwrap();
        std::os::unix::fs::symlink("../shared/w.yaml", dir.join("features/w.yaml")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        std::fs::write(
            dir.join("features/impl/v.yaml.txt"),
            base("1.0.0", "string"),
        )
        .unwrap();
        let run = check_against(dir, "features", "HEAD").unwrap();
        // The link inside is followed: the type change is found.
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);
        // The link leaving the directory is refused at the revision as on disk: exit 2.
        assert_eq!(run.exit_code(), 2);
        let refused: Vec<_> = run
            .report
            .findings()
            .filter(|(_, c)| c.rule == Rule::InputUnreadable)
            .map(|(f, c)| (f.path.clone(), c.message.clone()))
            .collect();
        assert!(
            refused.iter().any(|(p, m)| p.starts_with("HEAD:")
                && p.ends_with("features/w.yaml")
                && m.contains("outside the schema directory")),
            "{refused:#?}"
        );
        let run = run_follow(dir);
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);
        assert_eq!(run.exit_code(), 1);

        // Renamed since the revision: an error, not "zero earlier files".
        git(dir, &["mv", "features", "feature_views"]);
        let error = check_against(dir, "feature_views", "HEAD").unwrap_err();
        assert!(
            error
                .message
                .contains("does not exist at git revision `HEAD`"),
            "{error}"
        );
    }

    /// Ways a revision's schema files were dropped, so that everything read as added and
    /// passed: a named file without a `.yaml` name, the schema directory as a link at the
    /// revision, a link resolved by its text where the kernel follows a link on the way,
    /// a directory named like the revision.
    #[cfg(unix)]
    #[test]
    fn git_revisions_never_drop_what_the_working_tree_reads() {
        let tmp = tempdir("git-drops");
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("view.json"), base("1.0.0", "int64")).unwrap();
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::fs::write(dir.join("real/v.yaml"), base("1.0.0", "int64")).unwrap();
        std::os::unix::fs::symlink("real", dir.join("schemas")).unwrap();
        std::fs::create_dir_all(dir.join("linked/deep/b")).unwrap();
        std::fs::write(dir.join("linked/deep/b/.keep"), "").unwrap();
        std::fs::write(dir.join("linked/deep/v.txt"), base("1.0.0", "int64")).unwrap();
        std::fs::write(dir.join("linked/v.txt"), base("1.0.0", "string")).unwrap();
        std::os::unix::fs::symlink("deep/b", dir.join("linked/d")).unwrap();
        std::os::unix::fs::symlink("d/../v.txt", dir.join("linked/x.yaml")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "one"]);

        std::fs::write(dir.join("view.json"), base("1.0.0", "string")).unwrap();
        let run = check_against(dir, "view.json", "HEAD").unwrap();
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);

        std::fs::remove_file(dir.join("schemas")).unwrap();
        std::fs::create_dir_all(dir.join("schemas")).unwrap();
        std::fs::write(dir.join("schemas/v.yaml"), base("1.0.0", "string")).unwrap();
        let run = check_against(dir, "schemas", "HEAD").unwrap();
        assert_eq!(run.exit_code(), 2);
        assert!(!statuses(&run, Rule::InputUnreadable).is_empty());

        // On disk (and at the revision) `x.yaml` is deep/v.txt, an int64: unchanged.
        let run = check_against(dir, "linked", "HEAD").unwrap();
        assert!(statuses(&run, Rule::CompatBreaking).is_empty());
        assert_eq!(run.exit_code(), 0);
        std::fs::write(dir.join("linked/deep/v.txt"), base("1.0.0", "string")).unwrap();
        let run = check_against(dir, "linked", "HEAD").unwrap();
        assert_eq!(statuses(&run, Rule::CompatBreaking), vec![Status::Error]);

        // `src` is a directory beside the tests (their working directory) and, now, a
        // branch: refused rather than compared with the directory.
        git(dir, &["branch", "src"]);
        let error = check_against(dir, "linked", "src").unwrap_err();
        assert!(
            error.message.contains("both a path and a git revision"),
            "{error}"
        );
    }

    fn run_follow(dir: &Path) -> RunReport {
        run(Inputs {
            previous: Some("HEAD".into()),
            config: ConfigSource::Given(Config::default()),
            baseline: BaselineSource::None,
            load: LoadOptions {
                follow_symlinks: true,
            },
            ..Inputs::check(dir.join("features"))
        })
        .unwrap()
    }

    fn check_store(schema: &str, store: &str) -> RunReport {
        let tmp = tempdir("store");
        std::fs::write(tmp.path().join("v.yaml"), schema).unwrap();
        run(Inputs {
            store: Some(StoreSource::Json {
                json: store.as_bytes().to_vec(),
                label: "store".into(),
            }),
            config: ConfigSource::Given(Config::default()),
            baseline: BaselineSource::None,
            ..Inputs::check(tmp.path().join("v.yaml"))
        })
        .unwrap()
    }

    const NEUTRAL: &str = r#"{"format":"arrowfeat-store-metadata","format_version":1,"store":"s","entities":[{"name":"driver","join_key":"driver_id","type":"int64"}],"feature_views":[{"name":"v","entities":["driver"],TTL"tags":{"schema_version":"1.0.0"},"event_timestamp":{"name":"ts"TS},"features":[{"name":"f","type":"int64"}]}]}"#;

    /// A store that records neither the timestamp's type nor the TTL left both unchecked
    /// (exit 0, not a word), where an entity's type is an error.
    #[test]
    fn a_timestamp_type_or_ttl_the_store_lacks_is_a_finding() {
        let store = NEUTRAL.replace("TTL", "").replace("TS", "");
        let declared = base("1.0.0", "int64").replace("{name: ts}", "{name: ts, type: datetime64}")
            + "ttl: 0\n";
        let run = check_store(&declared, &store);
        assert_eq!(run.exit_code(), 1);
        assert_eq!(statuses(&run, Rule::TimestampType), vec![Status::Error]);
        assert_eq!(statuses(&run, Rule::Ttl), vec![Status::Error]);
        let (_, ttl) = run
            .report
            .findings()
            .find(|(_, c)| c.rule == Rule::Ttl)
            .unwrap();
        assert!(
            ttl.message.contains("the TTL was not checked"),
            "{}",
            ttl.message
        );
        // Only the default type: a warning that says so.
        let run = check_store(&base("1.0.0", "int64"), &store);
        assert_eq!(run.exit_code(), 0);
        assert_eq!(statuses(&run, Rule::TimestampType), vec![Status::Warning]);
        // Recorded: compared as before.
        let store = NEUTRAL
            .replace("TTL", r#""ttl_seconds":0,"#)
            .replace("TS", r#","type":"datetime64[ns]""#);
        let run = check_store(&declared, &store);
        assert_eq!(
            run.exit_code(),
            0,
            "{:#?}",
            run.report.findings().collect::<Vec<_>>()
        );
    }

    /// An unknown time zone whose `timestamp-declaration` finding was accepted compared
    /// with the store as "the same instants" in another zone: a warning, exit 0.
    #[test]
    fn an_unknown_time_zone_is_never_compared() {
        let store = NEUTRAL
            .replace("TTL", "")
            .replace("TS", r#","type":"timestamp[us, UTC]""#);
        let schema = base("1.0.0", "int64").replace(
            "event_timestamp: {name: ts}",
            "# arrowfeat: ignore[timestamp-declaration] JIRA-9\nevent_timestamp: {name: ts, tz: Mars/Olympus}",
        );
        let run = check_store(&schema, &store);
        assert_eq!(run.exit_code(), 2);
        assert!(statuses(&run, Rule::TimestampType).is_empty());
        let (_, flagged) = run
            .report
            .findings()
            .find(|(_, c)| c.rule == Rule::InputUnreadable)
            .unwrap();
        assert!(
            flagged
                .message
                .contains("event timestamp: type was not compared with the store"),
            "{}",
            flagged.message
        );
        // Not accepted: the declaration error alone.
        let run = check_store(
            &schema.replace("# arrowfeat: ignore[timestamp-declaration] JIRA-9\n", ""),
            &store,
        );
        assert_eq!(run.exit_code(), 1);
        assert_eq!(
            statuses(&run, Rule::TimestampDeclaration),
            vec![Status::Error]
        );
        assert!(statuses(&run, Rule::TimestampType).is_empty());
        assert!(statuses(&run, Rule::InputUnreadable).is_empty());
    }
}
