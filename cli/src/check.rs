//! `arrowfeat check` and `arrowfeat diff`: the validator as a CI gate.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrowfeat_validator::compat::Mode;
use arrowfeat_validator::config::Config;
use arrowfeat_validator::output::{render, render_error, Format, RenderOptions};
use arrowfeat_validator::report::Report;
use arrowfeat_validator::run::{self, LoadOptions, Loaded, Targets};
use arrowfeat_validator::store::{self, StoreMetadata};

use crate::{CliError, CliResult};

pub struct CheckArgs {
    pub schemas: PathBuf,
    pub registry: Option<PathBuf>,
    pub feast_repo: Option<PathBuf>,
    pub against: Option<String>,
    pub format: String,
    pub deny_warnings: bool,
    pub config: Option<PathBuf>,
    pub compatibility: Option<String>,
    pub output: Option<PathBuf>,
    /// Follow symbolic links out of the schema directory (refused by default).
    pub follow_symlinks: bool,
    /// Seconds `feast registry-dump` (--feast-repo) may run.
    pub feast_timeout: u64,
}

pub struct DiffArgs {
    pub old: String,
    pub new: PathBuf,
    pub format: String,
    pub deny_warnings: bool,
    pub config: Option<PathBuf>,
    pub compatibility: Option<String>,
    pub output: Option<PathBuf>,
    /// Follow symbolic links out of the schema directories (refused by default).
    pub follow_symlinks: bool,
}

/// The rendered report and the exit code it calls for.
pub struct Outcome {
    pub rendered: String,
    pub exit_code: i32,
    pub output: Option<PathBuf>,
}

/// Renders `report` for `command` (check or diff); colour only when writing to a terminal.
fn outcome(
    report: &Report,
    format: Format,
    command: &'static str,
    deny_warnings: bool,
    output: Option<PathBuf>,
) -> Outcome {
    let options = RenderOptions {
        color: color_wanted(output.as_deref()),
        deny_warnings,
        command,
    };
    Outcome {
        rendered: render(report, format, &options),
        exit_code: report.exit_code(deny_warnings),
        output,
    }
}

fn parse_format(name: &str) -> CliResult<Format> {
    Format::parse(name).ok_or_else(|| {
        CliError::usage(format!(
            "--format: expected one of {}, found `{name}`",
            Format::NAMES.join(", ")
        ))
    })
}

/// `--config`, else `arrowfeat.toml` in the working directory if there is one. An
/// `arrowfeat.toml` that exists but cannot be read (a FIFO, a broken link, a directory)
/// is an error, not silently skipped.
fn load_config(path: Option<&Path>, compatibility: Option<&str>) -> CliResult<Config> {
    let default = Path::new("arrowfeat.toml");
    let mut config = match path {
        Some(path) => Config::load(path).map_err(|e| CliError::usage(format!("--config {e}")))?,
        None if default.symlink_metadata().is_ok() => {
            Config::load(default).map_err(CliError::usage)?
        }
        None => Config::default(),
    };
    if let Some(mode) = compatibility {
        config.compatibility = Mode::parse(mode).ok_or_else(|| {
            CliError::usage(format!(
                "--compatibility: expected backward, forward, full or none, found `{mode}`"
            ))
        })?;
    }
    Ok(config)
}

fn color_wanted(output: Option<&Path>) -> bool {
    output.is_none() && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Schema files of a directory (or file) on disk, or of a git revision of that path.
fn load_revision(
    reference: &str,
    schemas: &Path,
    options: &LoadOptions,
) -> CliResult<(Vec<Loaded>, String)> {
    let as_path = Path::new(reference);
    if as_path.symlink_metadata().is_ok() {
        return Ok((
            run::load_path_with(as_path, options).map_err(CliError::usage)?,
            reference.to_string(),
        ));
    }
    let sources = git_sources(reference, schemas).map_err(|e| {
        CliError::usage(format!(
            "--against `{reference}`: not an existing path, and not a git revision: {e}"
        ))
    })?;
    Ok((
        run::load_sources(&sources),
        format!("git revision {reference}"),
    ))
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr)
            .trim()
            .lines()
            .next()
            .unwrap_or("git failed")
            .to_string())
    }
}

/// (`REF:path`, bytes) of every schema file under `schemas` at `reference`.
fn git_sources(reference: &str, schemas: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let (dir, pathspec) = if schemas.is_dir() {
        (schemas.to_path_buf(), ".".to_string())
    } else {
        let parent = schemas
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = schemas
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent.to_path_buf(), name)
    };
    git(
        &dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{reference}^{{commit}}"),
        ],
    )
    .map_err(|_| {
        format!(
            "git does not know a revision `{reference}` in {}",
            dir.display()
        )
    })?;
    let listing = git(
        &dir,
        &[
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            reference,
            "--",
            &pathspec,
        ],
    )?;
    let mut sources = Vec::new();
    for name in listing.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let bytes = git(&dir, &["show", &format!("{reference}:./{name}")])?;
        sources.push((format!("{reference}:{}", dir.join(&name).display()), bytes));
    }
    Ok(sources)
}

fn load_store(args: &CheckArgs) -> CliResult<Option<(StoreMetadata, String)>> {
    match (&args.registry, &args.feast_repo) {
        (Some(_), Some(_)) => Err(CliError::usage(
            "give either --registry or --feast-repo, not both",
        )),
        (Some(path), None) => {
            let metadata =
                store::load(path).map_err(|e| CliError::usage(format!("--registry {e}")))?;
            Ok(Some((metadata, path.display().to_string())))
        }
        (None, Some(repo)) => {
            let metadata = crate::feast::registry_of_repo_within(
                repo,
                std::time::Duration::from_secs(args.feast_timeout),
            )?;
            Ok(Some((metadata, format!("Feast repo {}", repo.display()))))
        }
        (None, None) => Ok(None),
    }
}

/// A usage error (exit 2) of a run that could not check anything still leaves a valid
/// report in the requested format: in `--output` when given, else on stdout for the
/// machine-readable formats (text keeps the one line on stderr only). Messages quote
/// hostile input, so they are escaped here too.
fn with_error_report<T>(
    result: CliResult<T>,
    format: &str,
    output: Option<&Path>,
    command: &'static str,
) -> CliResult<T> {
    let mut error = match result {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    error.message = arrowfeat_validator::text::clean(&error.message);
    let Some(format) = Format::parse(format) else {
        return Err(error);
    };
    let options = RenderOptions {
        color: false,
        deny_warnings: false,
        command,
    };
    let rendered = render_error(&error.message, format, &options);
    match output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, rendered) {
                error.message = format!(
                    "{}; and the report could not be written to --output {}: {e}",
                    error.message,
                    arrowfeat_validator::text::clean(&path.display().to_string())
                );
            }
        }
        None if format != Format::Text => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(rendered.as_bytes());
        }
        None => {}
    }
    Err(error)
}

pub fn check(args: &CheckArgs) -> CliResult<Outcome> {
    with_error_report(
        check_inner(args),
        &args.format,
        args.output.as_deref(),
        "check",
    )
}

pub fn diff(args: &DiffArgs) -> CliResult<Outcome> {
    with_error_report(
        diff_inner(args),
        &args.format,
        args.output.as_deref(),
        "diff",
    )
}

fn check_inner(args: &CheckArgs) -> CliResult<Outcome> {
    let format = parse_format(&args.format)?;
    let config = load_config(args.config.as_deref(), args.compatibility.as_deref())?;
    let options = LoadOptions {
        follow_symlinks: args.follow_symlinks,
    };
    let loaded = run::load_path_with(&args.schemas, &options)
        .map_err(|e| CliError::usage(format!("--schemas {e}")))?;
    if loaded.is_empty() {
        return Err(CliError::usage(format!(
            "--schemas {}: no schema files (*.yaml, *.yml) found",
            args.schemas.display()
        )));
    }
    let store = load_store(args)?;
    let previous = match &args.against {
        Some(reference) => Some(load_revision(reference, &args.schemas, &options)?),
        None => None,
    };
    let mut against = Vec::new();
    if let Some((_, label)) = &store {
        against.push(label.clone());
    }
    if let Some((_, label)) = &previous {
        against.push(format!("{label} ({} compatibility)", config.compatibility));
    }
    if against.is_empty() {
        against.push("the schema format only (no --registry, --feast-repo or --against)".into());
    }
    let targets = Targets {
        store: store.as_ref().map(|(metadata, _)| metadata),
        previous: previous.as_ref().map(|(loaded, _)| loaded.as_slice()),
        against: against.join(" and "),
    };
    let report = run::check(loaded, &targets, &config);
    Ok(outcome(
        &report,
        format,
        "check",
        args.deny_warnings || config.deny_warnings,
        args.output.clone(),
    ))
}

fn diff_inner(args: &DiffArgs) -> CliResult<Outcome> {
    let format = parse_format(&args.format)?;
    let config = load_config(args.config.as_deref(), args.compatibility.as_deref())?;
    let options = LoadOptions {
        follow_symlinks: args.follow_symlinks,
    };
    let new = run::load_path_with(&args.new, &options)
        .map_err(|e| CliError::usage(format!("NEW {e}")))?;
    let (old, label) = load_revision(&args.old, &args.new, &options)?;
    // Only the new revision's files are reported; the old revision is the baseline.
    let old_unreadable: Vec<String> = old
        .iter()
        .filter(|(_, file)| file.is_none())
        .map(|(report, _)| report.path.clone())
        .collect();
    if !old_unreadable.is_empty() {
        return Err(CliError::usage(format!(
            "OLD: cannot read {} (run `arrowfeat check --schemas` on it to see why)",
            old_unreadable.join(", ")
        )));
    }
    let targets = Targets {
        store: None,
        previous: Some(&old),
        against: format!("{label} ({} compatibility)", config.compatibility),
    };
    let report = run::check(new, &targets, &config);
    Ok(outcome(
        &report,
        format,
        "diff",
        args.deny_warnings || config.deny_warnings,
        args.output.clone(),
    ))
}
