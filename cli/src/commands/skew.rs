//! `arrowfeat skew`: training/serving skew of each view as a CI gate, with the report,
//! formats, configuration and exit codes of `check`. The matching and comparison are
//! [`arrowfeat_gate::skew`]; this module maps the flags onto it.

use std::path::PathBuf;

use arrowfeat_gate::skew::{SkewOptions, SkewSources};
use arrowfeat_gate::Data;
use arrowfeat_udf::kernels::compare::Tolerance;
use arrowfeat_validator::pipeline;
use arrowfeat_validator::run::LoadOptions;

use crate::commands::check::{view_paths, Outcome, ReportArgs};
use crate::{CliError, CliResult};

/// `arrowfeat skew`.
#[derive(Debug, Clone, clap::Args)]
pub struct SkewArgs {
    /// A schema file, or a directory searched for *.yaml / *.yml: the entity keys, the
    /// event timestamp and the features to compare.
    #[arg(long, value_name = "PATH")]
    pub schemas: PathBuf,
    /// What was served (the online log): [VIEW=]PATH, with the entity keys, the serving
    /// time and the features as served.
    #[arg(long, value_name = "[VIEW=]PATH")]
    pub serving: Vec<String>,
    /// The same features computed for training (the backfill): [VIEW=]PATH, with the
    /// entity keys, the event timestamp and the features.
    #[arg(long, value_name = "[VIEW=]PATH")]
    pub training: Vec<String>,
    /// A training row matches a serving row of its keys when its event time is at most
    /// this long before the serving time (the latest such row): 0s for equal times, 5m,
    /// 1h 30m, ...
    #[arg(long, value_name = "DURATION")]
    pub time_tolerance: String,
    /// The serving log's time column (default: the schema's event timestamp name).
    #[arg(long, value_name = "COLUMN")]
    pub serving_time: Option<String>,
    /// Floats within this absolute difference are equal.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    pub absolute_tolerance: f64,
    /// Floats within this difference relative to the larger magnitude are equal.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    pub relative_tolerance: f64,
    /// Floats at most this many representable values apart are equal.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub ulps: u64,
    /// At most this many rows are shown per finding.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u16).range(0..=10_000))]
    pub sample: u16,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Errors before and after the run leave a report in the requested format, as the run's
/// own errors do ([`ReportArgs::run`]).
pub fn skew(args: &SkewArgs) -> CliResult<Outcome> {
    let refuse = |e: CliError| args.report.run(Err(e), pipeline::Command::Skew);
    let sources = match sources(args) {
        Ok(sources) => sources,
        Err(e) => return refuse(e),
    };
    let inputs = args
        .report
        .data_inputs(pipeline::Command::Skew, &args.schemas, &sources);
    args.report.run(Ok(inputs), pipeline::Command::Skew)
}

/// The serving and training data and the tolerances the flags give, checked before
/// anything is read.
fn sources(args: &SkewArgs) -> CliResult<SkewSources> {
    let load = LoadOptions {
        follow_symlinks: args.report.follow_symlinks,
    };
    let data = |flag: &str, given: &[String]| -> CliResult<Vec<(Option<String>, Data)>> {
        if given.is_empty() {
            return Err(CliError::usage(format!(
                "give {flag} [VIEW=]PATH: skew compares the serving data with the training data"
            )));
        }
        Ok(view_paths(flag, given, &args.schemas, &load)?
            .into_iter()
            .map(|(view, path)| (view, Data::Path(path)))
            .collect())
    };
    let serving = data("--serving", &args.serving)?;
    let training = data("--training", &args.training)?;
    let time_tolerance_nanos = arrowfeat_common::duration::parse_duration(&args.time_tolerance)
        .map_err(|e| CliError::usage(format!("--time-tolerance: {e}")))
        .and_then(|nanos| match nanos >= 0 {
            true => Ok(nanos),
            false => Err(CliError::usage(format!(
                "--time-tolerance: expected a duration of 0 or more, found \"{}\"",
                arrowfeat_common::quote(&args.time_tolerance, 60)
            ))),
        })?;
    let values = Tolerance::new(args.absolute_tolerance, args.relative_tolerance, args.ulps)
        .map_err(|e| CliError::usage(format!("--{}-tolerance: {}", e.argument, e.message)))?;
    Ok(SkewSources::new(
        serving,
        training,
        SkewOptions {
            time_tolerance_nanos,
            time_tolerance_text: arrowfeat_common::quote(args.time_tolerance.trim(), 60),
            values,
            serving_time: args.serving_time.clone(),
            sample_rows: usize::from(args.sample),
        },
    ))
}
