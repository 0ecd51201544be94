//! `arrowfeat drift`: the drift of each view's current data from its reference, as a CI
//! gate with the same report, formats, configuration and exit codes as `check`. The
//! comparison is [`arrowfeat_gate::drift`]; this module maps the flags onto it.

use std::path::PathBuf;

use arrowfeat_gate::drift::{DriftSources, Reference};
use arrowfeat_gate::{ByView, Data};
use arrowfeat_validator::checks::drift::ReferenceProfile;
use arrowfeat_validator::pipeline::{self, Inputs};
use arrowfeat_validator::run::LoadOptions;

use crate::commands::check::{view_paths, Outcome, ReportArgs, StoreArgs};
use crate::{CliError, CliResult};

/// A saved profile larger than this is refused (a profile of 100 views of 50 features
/// is a few tens of megabytes).
const PROFILE_LIMIT: u64 = 256 * 1024 * 1024;

/// `arrowfeat drift`.
#[derive(Debug, Clone, clap::Args)]
pub struct DriftArgs {
    /// A schema file, or a directory searched for *.yaml / *.yml: which features to
    /// compare, and how (numeric or categorical).
    #[arg(long, value_name = "PATH")]
    pub schemas: PathBuf,
    /// The reference data of a view: VIEW=PATH (repeat for several views), or PATH when
    /// the schemas declare one view. A Parquet, CSV or JSON file or a directory of them.
    #[arg(long, value_name = "[VIEW=]PATH", conflicts_with = "reference_profile")]
    pub reference: Vec<String>,
    /// A reference profile saved by --save-reference, read instead of reference data.
    #[arg(long, value_name = "FILE")]
    pub reference_profile: Option<PathBuf>,
    /// The current data of a view, compared with its reference: [VIEW=]PATH.
    #[arg(long, value_name = "[VIEW=]PATH")]
    pub current: Vec<String>,
    /// Write the reference data's profile (bin edges, category shares, distribution
    /// points) to FILE, for later runs' --reference-profile.
    #[arg(long, value_name = "FILE", conflicts_with = "reference_profile")]
    pub save_reference: Option<PathBuf>,
    /// The current data of every view --current does not give is the file its store's
    /// batch source names (a Feast FileSource; relative paths from --feast-repo, or from
    /// the working directory with --registry).
    #[arg(long)]
    pub current_from_store: bool,
    /// The reference data of every view --reference does not give is the file its
    /// store's batch source names (to save with --save-reference, for example).
    #[arg(long, conflicts_with = "reference_profile")]
    pub reference_from_store: bool,
    // The store whose batch sources --current-from-store / --reference-from-store read
    // (the schema files are not checked against it: that is `arrowfeat check`).
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Errors before and after the run leave a report in the requested format, as the run's
/// own errors do ([`ReportArgs::run`]).
pub fn drift(args: &DriftArgs) -> CliResult<Outcome> {
    let refuse = |e: CliError| args.report.run(Err(e), pipeline::Command::Drift);
    let sources = match sources(args) {
        Ok(sources) => sources,
        Err(e) => return refuse(e),
    };
    let inputs = Inputs {
        store: args.store.source(),
        ..args
            .report
            .data_inputs(pipeline::Command::Drift, &args.schemas, &sources)
    };
    let mut outcome = args.report.run(Ok(inputs), pipeline::Command::Drift)?;
    // Not when any input could not be read: a partial profile must not replace a good one.
    if let Some(path) = &args.save_reference {
        if let Some(why) = sources.not_saved_because(outcome.exit_code == 2) {
            outcome.refusal = Some(format!(
                "--save-reference {}: not saved: {why}",
                arrowfeat_common::clean(&path.display().to_string()),
            ));
            return Ok(outcome);
        }
        let profile = sources.saved_profile();
        let shown = arrowfeat_common::clean(&path.display().to_string());
        if let Err(e) = std::fs::write(path, profile.to_json()) {
            return refuse(CliError::usage(format!(
                "--save-reference {shown}: {}",
                arrowfeat_common::io_message(&e)
            )));
        }
        let features: usize = profile.views.values().map(|v| v.features.len()).sum();
        crate::say!(
            "saved the reference profile of {} view(s), {features} feature(s), to {shown}",
            profile.views.len()
        );
    }
    Ok(outcome)
}

/// The reference and current data the flags give, checked before anything is read.
fn sources(args: &DriftArgs) -> CliResult<DriftSources> {
    let load = LoadOptions {
        follow_symlinks: args.report.follow_symlinks,
    };
    let data = |flag: &str, given: &[String]| -> CliResult<Vec<(Option<String>, Data)>> {
        Ok(view_paths(flag, given, &args.schemas, &load)?
            .into_iter()
            .map(|(view, path)| (view, Data::Path(path)))
            .collect())
    };
    let from_store = args.current_from_store || args.reference_from_store;
    if from_store != args.store.is_given() {
        return Err(CliError::usage(match from_store {
            true => "--current-from-store and --reference-from-store need --registry or --feast-repo: their views' batch sources say where the data is",
            false => "--registry and --feast-repo are read by drift only for where each view's data is: add --current-from-store or --reference-from-store (`arrowfeat check` checks the schemas against the store)",
        }));
    }
    let reference = match (
        &args.reference_profile,
        args.reference.is_empty() && !args.reference_from_store,
    ) {
        (Some(path), _) => Reference::Profile {
            label: arrowfeat_common::clean(&path.display().to_string()),
            profile: read_profile(path)?,
        },
        (None, false) => Reference::Data(ByView::new(data("--reference", &args.reference)?)),
        (None, true) => {
            return Err(CliError::usage(
                "give the reference: --reference [VIEW=]PATH (data), --reference-profile FILE (saved by --save-reference) or --reference-from-store",
            ))
        }
    };
    if let Some(path) = &args.save_reference {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(CliError::usage(format!(
                "--save-reference {}: the directory {} does not exist",
                arrowfeat_common::clean(&path.display().to_string()),
                arrowfeat_common::clean(&parent.display().to_string())
            )));
        }
    }
    if let Some(path) = args.save_reference.as_deref().filter(|p| p.is_dir()) {
        return Err(CliError::usage(format!(
            "--save-reference {}: is a directory; give the path of the file to write",
            arrowfeat_common::clean(&path.display().to_string())
        )));
    }
    if args.current.is_empty() && !args.current_from_store && args.save_reference.is_none() {
        return Err(CliError::usage(
            "give --current [VIEW=]PATH or --current-from-store to compare with the reference, or --save-reference FILE to save its profile",
        ));
    }
    DriftSources::new(reference, data("--current", &args.current)?)
        .saving(args.save_reference.is_some())
        .with_store_sources(
            args.store.sources().filter(|_| args.current_from_store),
            args.store.sources().filter(|_| args.reference_from_store),
        )
        .map_err(|e| {
            CliError::usage(format!(
                "--current-from-store with --reference-from-store: {e}"
            ))
        })
}

fn read_profile(path: &std::path::Path) -> CliResult<ReferenceProfile> {
    let shown = arrowfeat_common::clean(&path.display().to_string());
    let bytes = arrowfeat_validator::files::read_bounded(path, PROFILE_LIMIT)
        .map_err(|e| CliError::usage(format!("--reference-profile {e}")))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        CliError::usage(format!(
            "--reference-profile {shown}: not a reference profile (not UTF-8 text)"
        ))
    })?;
    ReferenceProfile::parse(text)
        .map_err(|e| CliError::usage(format!("--reference-profile {shown}: {e}")))
}
