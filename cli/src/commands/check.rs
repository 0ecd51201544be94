//! `arrowfeat check` and `arrowfeat diff`: the validator's pipeline as a CI gate. The run
//! itself (configuration, schema files, store, revisions, report) is
//! [`arrowfeat_validator::pipeline`]; this module maps the arguments onto it and writes
//! the report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use arrowfeat_validator::compat::Mode;
use arrowfeat_validator::output::Format;
use arrowfeat_validator::pipeline::{
    self, BaselineSource, ConfigSource, GateError, Inputs, StoreSource, Style,
};
use arrowfeat_validator::run::LoadOptions;

use crate::{CliError, CliResult};

/// The options `check` and `diff` share: the report, the configuration, the walk.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Configuration file (default: ./arrowfeat.toml if present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Compatibility mode between revisions (default: the configuration's, else backward).
    #[arg(long, value_enum, value_name = "MODE", ignore_case = true)]
    pub compatibility: Option<Mode>,
    /// Write the report to FILE instead of stdout (also when the run cannot start: a
    /// valid report with the error, exit code 2).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Follow symbolic links that lead out of a schema directory (refused by default).
    #[arg(long)]
    pub follow_symlinks: bool,
    /// Accepted findings (written by --write-baseline): they do not fail the run
    /// (default: ./arrowfeat-baseline.json if present).
    #[arg(long, value_name = "FILE", conflicts_with = "no_baseline")]
    pub baseline: Option<PathBuf>,
    /// Do not read ./arrowfeat-baseline.json.
    #[arg(long)]
    pub no_baseline: bool,
    /// Write today's findings to FILE as the baseline, then check with it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["baseline", "no_baseline"])]
    pub write_baseline: Option<PathBuf>,
    /// Text: list every check of every file (tables), not only findings and the summary.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print nothing on stdout: the exit code is the result (-o still writes the report;
    /// a usage error still prints its one line on stderr).
    #[arg(short, long)]
    pub quiet: bool,
    /// Colour in text output: auto (only on a terminal, and not with NO_COLOR set),
    /// always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour only when writing to a terminal and `NO_COLOR` is unset.
    Auto,
    Always,
    Never,
}

/// Where the feature store's metadata comes from (`check`, `drift`).
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Feature-store metadata: `feast registry-dump` JSON or arrowfeat store metadata.
    #[arg(long, value_name = "FILE", conflicts_with = "feast_repo")]
    pub registry: Option<PathBuf>,
    /// A Feast feature repo; its registry is read with the installed `feast` CLI.
    #[arg(long, value_name = "DIR")]
    pub feast_repo: Option<PathBuf>,
    /// Seconds `feast registry-dump` (--feast-repo) may run before it is stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::commands::feast_repo::DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub feast_timeout: u64,
}

impl StoreArgs {
    /// The metadata to read, if any.
    pub(crate) fn source(&self) -> Option<StoreSource<'static>> {
        match (&self.registry, &self.feast_repo) {
            (Some(path), _) => Some(StoreSource::File(path.clone())),
            (None, Some(repo)) => {
                let repo = repo.clone();
                let timeout = std::time::Duration::from_secs(self.feast_timeout);
                Some(StoreSource::Loader {
                    label: self.label(),
                    load: Box::new(move || {
                        crate::commands::feast_repo::registry_of_repo_within(&repo, timeout)
                            .map_err(|e| e.message)
                    }),
                })
            }
            (None, None) => None,
        }
    }

    /// How reports name the store: the registry file, or the Feast repo.
    pub(crate) fn label(&self) -> String {
        match (&self.registry, &self.feast_repo) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(repo)) => format!("Feast repo {}", repo.display()),
            (None, None) => String::new(),
        }
    }

    /// The store's batch sources, when the store is given.
    pub(crate) fn sources(&self) -> Option<arrowfeat_gate::from_store::StoreSources> {
        self.is_given()
            .then(|| arrowfeat_gate::from_store::StoreSources::new(self.repo_dir(), self.label()))
    }

    pub(crate) fn is_given(&self) -> bool {
        self.registry.is_some() || self.feast_repo.is_some()
    }

    /// Where the batch sources' relative paths start: the feature repo, else the working
    /// directory (as Feast reads a registry's relative paths).
    pub(crate) fn repo_dir(&self) -> PathBuf {
        self.feast_repo
            .clone()
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// `arrowfeat check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// A schema file, or a directory searched for *.yaml / *.yml.
    #[arg(long, value_name = "PATH")]
    pub schemas: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Earlier revision to check compatibility against: a directory or a git revision.
    #[arg(long, value_name = "DIR|GIT-REF")]
    pub against: Option<String>,
    /// The data of a view, checked against its schema: VIEW=PATH (repeat for several
    /// views), or PATH when the schemas declare one view. A Parquet, CSV or JSON file or a
    /// directory of them. Replaces `[data]` of arrowfeat.toml, which is checked otherwise.
    #[arg(long, value_name = "[VIEW=]PATH")]
    pub data: Vec<String>,
    /// "Now" for the data's point-in-time checks (events after it, keys older than the
    /// TTL): RFC 3339 (2026-12-01T00:00:00Z) or a date; default: the current time. Pin it
    /// in CI so a run does not change with the clock.
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// Check the data of every view whose path --data does not give at the path its
    /// store's batch source names (a Feast FileSource; relative paths from --feast-repo,
    /// or from the working directory with --registry).
    #[arg(long)]
    pub data_from_store: bool,
    /// At most this many offending rows are shown per data finding.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u16).range(0..=10_000))]
    pub data_sample: u16,
    /// Memory the data checks may hold (512MiB, 2GB); past it they spill to temporary
    /// files: slower, but bounded (duplicate detection holds every distinct pair of
    /// entity keys and event time). Default: no limit.
    #[arg(long, value_name = "SIZE", value_parser = memory_size)]
    pub memory_limit: Option<u64>,
    #[command(flatten)]
    pub report: ReportArgs,
}

fn memory_size(text: &str) -> Result<u64, String> {
    match arrowfeat_common::size::parse_size(text)? {
        0 => Err("expected a size above 0".to_string()),
        bytes => Ok(bytes),
    }
}

/// `arrowfeat diff`.
#[derive(Debug, Clone, clap::Args)]
pub struct DiffArgs {
    /// The old revision: a file, a directory or a git revision of NEW's path.
    pub old: String,
    /// The new revision: a file or a directory.
    pub new: PathBuf,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The rendered report and the exit code it calls for.
pub struct Outcome {
    pub rendered: String,
    pub exit_code: i32,
    pub output: Option<PathBuf>,
    /// What the command could not do after the run (`drift --save-reference`): the report
    /// is still written, then this is the error, with the report's exit code (at least 1).
    pub refusal: Option<String>,
}

fn color_wanted(choice: ColorChoice, output: Option<&Path>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
        }
    }
}

impl ReportArgs {
    /// `--config FILE`, else `./arrowfeat.toml` if there is one.
    pub(crate) fn config_source(&self) -> ConfigSource {
        match &self.config {
            Some(path) => ConfigSource::File(path.clone()),
            None => ConfigSource::Discover(PathBuf::from(".")),
        }
    }

    /// `inputs` with this report's settings.
    pub(crate) fn apply<'a>(&self, mut inputs: Inputs<'a>) -> Inputs<'a> {
        inputs.config = self.config_source();
        inputs.compatibility = self.compatibility;
        inputs.deny_warnings = self.deny_warnings;
        inputs.load = LoadOptions {
            follow_symlinks: self.follow_symlinks,
        };
        inputs.baseline = match (&self.baseline, self.no_baseline) {
            (Some(path), _) => BaselineSource::File(path.clone()),
            (None, true) => BaselineSource::None,
            (None, false) => BaselineSource::Discover(PathBuf::from(".")),
        };
        inputs.write_baseline = self.write_baseline.clone();
        inputs
    }

    /// The inputs of a data command (`drift`, `skew`): `data` for the schema files under
    /// `schemas`, with this report's settings, named by the command's flags.
    pub(crate) fn data_inputs<'a>(
        &self,
        command: pipeline::Command,
        schemas: &Path,
        data: &'a dyn arrowfeat_validator::run::DataSource,
    ) -> Inputs<'a> {
        Inputs {
            command,
            names: pipeline::Names::cli(command),
            data: Some(data),
            ..self.apply(Inputs::check(schemas))
        }
    }

    /// Runs the pipeline and renders its report (`--color`, `--verbose`, `--quiet`).
    /// When the gate cannot run, the error still leaves a valid report in the requested
    /// format: in `--output` when given, else on stdout for the machine-readable formats
    /// (text keeps the one line on stderr only).
    pub(crate) fn run(
        &self,
        inputs: CliResult<Inputs<'_>>,
        command: pipeline::Command,
    ) -> CliResult<Outcome> {
        let result = inputs
            .map_err(|e| GateError {
                command,
                message: arrowfeat_common::clean(&e.message),
            })
            .and_then(pipeline::run);
        match result {
            Ok(run) => {
                let style = Style {
                    color: color_wanted(self.color, self.output.as_deref()),
                    verbose: self.verbose,
                };
                Ok(Outcome {
                    // --quiet: the report only where -o sends it, nothing on stdout.
                    rendered: if self.quiet && self.output.is_none() {
                        String::new()
                    } else {
                        run.render(self.format, style)
                    },
                    exit_code: run.exit_code(),
                    output: self.output.clone(),
                    refusal: None,
                })
            }
            Err(error) => Err(self.error_report(error)),
        }
    }

    fn error_report(&self, error: GateError) -> CliError {
        let mut message = error.message.clone();
        if let Err(e) = deliver_error(&error, self.format, self.output.as_deref(), self.quiet) {
            message = format!("{message}; and the report {e}");
        }
        CliError::usage(message)
    }
}

/// The report of `error` where the command line asks for one: in `output`, else on
/// stdout for a machine-readable `format` (not when `quiet`). Text keeps the one line on
/// stderr only. `Err`: why `output` could not be written.
fn deliver_error(
    error: &GateError,
    format: Format,
    output: Option<&Path>,
    quiet: bool,
) -> Result<(), String> {
    match output {
        Some(path) => std::fs::write(path, error.render(format)).map_err(|e| {
            format!(
                "could not be written to --output {}: {}",
                arrowfeat_common::clean(&path.display().to_string()),
                arrowfeat_common::io_message(&e)
            )
        }),
        None if format != Format::Text && !quiet => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(error.render(format).as_bytes());
            Ok(())
        }
        None => Ok(()),
    }
}

/// Errors before and after the run leave a report in the requested format, as the run's
/// own errors do ([`ReportArgs::run`]).
pub fn check(args: &CheckArgs) -> CliResult<Outcome> {
    let refuse = |e: CliError| args.report.run(Err(e), pipeline::Command::Check);
    let data = match data_paths(args) {
        Ok(data) => data,
        Err(e) => return refuse(e),
    };
    let inputs = Ok(Inputs {
        store: args.store.source(),
        previous: args.against.clone(),
        data: data
            .as_ref()
            .map(|d| d as &dyn arrowfeat_validator::run::DataSource),
        ..args.report.apply(Inputs::check(&args.schemas))
    });
    args.report.run(inputs, pipeline::Command::Check)
}

/// `--data` (else the configuration's `[data]`), `--as-of` and `--data-sample`.
fn data_paths(args: &CheckArgs) -> CliResult<Option<arrowfeat_gate::DataPaths>> {
    // `--data` on the command line replaces `[data]`.
    // A configuration that does not load is the run's usage error, not a missing `[data]`.
    let (from_config, config_loads) = match args.data.is_empty() {
        true => match pipeline::config_data(&args.report.config_source()) {
            Ok(data) => (data, true),
            Err(_) => (Vec::new(), false),
        },
        false => (Vec::new(), true),
    };
    if args.data.is_empty() && from_config.is_empty() && !args.data_from_store {
        if args.as_of.is_some() && config_loads {
            return Err(CliError::usage(
                "--as-of needs --data, --data-from-store or [data] in arrowfeat.toml",
            ));
        }
        return Ok(None);
    }
    if args.data_from_store && !args.store.is_given() {
        return Err(CliError::usage(
            "--data-from-store needs --registry or --feast-repo: their views' batch sources say where the data is",
        ));
    }
    let as_of_nanos = match &args.as_of {
        Some(text) => {
            datafusion::arrow::compute::kernels::cast_utils::string_to_timestamp_nanos(text.trim())
                .map_err(|_| {
                    CliError::usage(format!(
                "--as-of: expected a time from 1677-09-22 to 2262-04-11 such as 2026-12-01T00:00:00Z or 2026-12-01, found '{}'",
                arrowfeat_common::quote(text, 60)
            ))
                })?
        }
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
            .unwrap_or(0),
    };
    let load = LoadOptions {
        follow_symlinks: args.report.follow_symlinks,
    };
    let mut paths = view_paths("--data", &args.data, &args.schemas, &load)?;
    let configured = !from_config.is_empty();
    paths.extend(
        from_config
            .into_iter()
            .map(|(view, path)| (Some(view), path)),
    );
    let options = arrowfeat_validator::checks::data::DataOptions {
        as_of_nanos,
        sample_rows: usize::from(args.data_sample),
    };
    let data = arrowfeat_gate::DataPaths::new(paths, options).with_memory_limit(
        args.memory_limit
            .map(|bytes| usize::try_from(bytes).unwrap_or(usize::MAX)),
    );
    let data = match args.store.sources().filter(|_| args.data_from_store) {
        Some(sources) => data.with_store_sources(sources),
        None => data,
    };
    Ok(Some(match configured {
        true => data.from_config(
            args.report
                .config
                .as_ref()
                .map_or("arrowfeat.toml".to_string(), |p| {
                    arrowfeat_common::quote(&p.display().to_string(), 200)
                }),
        ),
        false => data,
    }))
}

/// `[VIEW=]PATH` values of `flag`: a path without a view only when it is the only one
/// and the schemas declare one view; a view at most once.
pub(crate) fn view_paths(
    flag: &str,
    given: &[String],
    schemas: &Path,
    load: &LoadOptions,
) -> CliResult<Vec<(Option<String>, String)>> {
    let mut paths: Vec<(Option<String>, String)> = Vec::new();
    for value in given {
        if value.is_empty() || value.ends_with('=') {
            return Err(CliError::usage(format!(
                "{flag} '{}': expected [VIEW=]PATH, found no path",
                arrowfeat_common::quote(value, 200)
            )));
        }
        // A path that exists is taken whole (a Hive directory `day=1/` has an `=`).
        let pair = match value.split_once('=') {
            Some((view, path))
                if !Path::new(value).exists() && !view.is_empty() && !view.contains('/') =>
            {
                (Some(view.to_string()), path.to_string())
            }
            _ => (None, value.clone()),
        };
        if pair.0.is_none() && given.len() > 1 {
            return Err(CliError::usage(format!(
                "{flag} '{}': with several {flag}, name each view: VIEW=PATH",
                arrowfeat_common::quote(value, 200)
            )));
        }
        if let Some(view) = &pair.0 {
            if paths.iter().any(|(v, _)| v.as_ref() == Some(view)) {
                return Err(CliError::usage(format!(
                    "{flag} {}=...: given twice; give one path per view (a directory holds several files)",
                    arrowfeat_common::quote(view, 100)
                )));
            }
        }
        paths.push(pair);
    }
    // A path without a view is the data of the one view the schemas declare.
    if paths.iter().any(|(view, _)| view.is_none()) {
        let mut views: Vec<String> = arrowfeat_validator::run::load_path_with(schemas, load)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(_, file)| file.map(|f| f.spec.name))
            .collect();
        views.sort();
        views.dedup();
        if views.len() > 1 {
            return Err(CliError::usage(format!(
                "{flag} '{}' names no view, but the schemas declare {} views ({}): give {flag} VIEW=PATH",
                arrowfeat_common::quote(&given[0], 200),
                views.len(),
                views
                    .iter()
                    .take(5)
                    .map(|v| format!("`{}`", arrowfeat_common::quote(v, 100)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(paths)
}

pub fn diff(args: &DiffArgs) -> CliResult<Outcome> {
    let inputs = args.report.apply(Inputs::diff(&args.old, &args.new));
    args.report.run(Ok(inputs), pipeline::Command::Diff)
}

/// A command-line error (one clap reports) of `check`, `diff`, `drift` or `skew` still
/// leaves a report where the command line asks for one: in `--output`, or on stdout for a
/// machine-readable `--format` (not with `--quiet`), so that a CI step never reads an
/// earlier run's report as this one's. `matches`: the command line as far as it parses
/// (`ignore_errors`); nothing is written over another path it names.
pub fn report_command_line_error(root: &clap::Command, matches: &clap::ArgMatches, message: &str) {
    let Some((name, matches)) = matches.subcommand() else {
        return;
    };
    let command = match name {
        "check" => pipeline::Command::Check,
        "diff" => pipeline::Command::Diff,
        "drift" => pipeline::Command::Drift,
        "skew" => pipeline::Command::Skew,
        _ => return,
    };
    let last = |id: &str| {
        matches
            .try_get_raw(id)
            .ok()
            .flatten()
            .and_then(|mut values| values.next_back())
    };
    let format = last("format")
        .and_then(|f| f.to_str())
        .and_then(|f| <Format as clap::ValueEnum>::from_str(f, true).ok())
        .unwrap_or(Format::Text);
    let quiet = matches.try_get_one::<bool>("quiet").ok().flatten() == Some(&true);
    let error = GateError {
        command,
        message: arrowfeat_common::clean(message),
    };
    let output = last("output").map(Path::new);
    let clash = output.and_then(|_| {
        root.find_subcommand(name)
            .and_then(|sub| crate::commands::outputs::clash(sub, matches))
    });
    if let Some(clash) = clash {
        crate::say!("arrowfeat: error: no report written: {clash}");
    } else if let Err(e) = deliver_error(&error, format, output, quiet) {
        crate::say!("arrowfeat: error: the report {e}");
    }
}
