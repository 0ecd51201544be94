//! `arrowfeat training-set`: point-in-time features of an event file at each row of a
//! label (spine) file, without writing Python or SQL.

use std::path::{Path, PathBuf};

use arrowfeat_udf::kernels::point_in_time::PitAggregation;
use arrowfeat_udf::kernels::window::Closed;
use arrowfeat_udf::sql::point_in_time::{
    parse_ttl, point_in_time_join, FeatureSpec, PointInTimeJoin, Spelling,
};
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::prelude::DataFrame;

use crate::commands::sql::{self, OutputFormat};
use crate::{CliError, CliResult};

/// A `--feature` argument: `COLUMN` (its as-of value), `COLUMN:AGG` (over every visible
/// event) or `COLUMN:AGG:PERIOD`, each optionally `AS NAME`, e.g. `amount:sum:5m`
/// ([`FeatureSpec::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureArg {
    pub spec: FeatureSpec,
    /// The argument as written, for messages.
    pub text: String,
}

impl std::str::FromStr for FeatureArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FeatureSpec::parse(s).map(|spec| FeatureArg {
            spec,
            text: s.to_string(),
        })
    }
}

/// The arguments of `arrowfeat training-set`.
#[derive(Debug, clap::Args)]
pub struct TrainingSetArgs {
    /// Labels: a Parquet, CSV or JSON file (or directory) with the key and time columns.
    #[arg(long, value_name = "PATH")]
    pub spine: PathBuf,
    /// Events: a Parquet, CSV or JSON file (or directory) with the key, time and value columns.
    #[arg(long, value_name = "PATH")]
    pub events: PathBuf,
    /// Key column, named the same in both files (repeat for a composite key).
    #[arg(long = "by", value_name = "COLUMN")]
    pub by: Vec<String>,
    /// Time column of the labels.
    #[arg(long, value_name = "COLUMN")]
    pub spine_time: String,
    /// Time column of the events.
    #[arg(long, value_name = "COLUMN")]
    pub event_time: String,
    /// Created (ingestion) time column of the events: breaks ties on the event time, the
    /// latest wins.
    #[arg(long, value_name = "COLUMN")]
    pub created: Option<String>,
    /// An event is visible only once created, too: its created time must not be after the
    /// label's time (Feast's rule for `created_timestamp`). Needs --created, and as-of
    /// features only.
    #[arg(long, requires = "created")]
    pub created_cutoff: bool,
    /// Events older than the label's time minus TTL are invisible (e.g. 30d).
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,
    /// Which window ends are included: right (default: events at the label's time are
    /// visible), left, both or none.
    #[arg(long, value_name = "ENDS", default_value = "right")]
    pub closed: String,
    /// A feature: COLUMN (as-of value), COLUMN:AGG or COLUMN:AGG:PERIOD with AGG one of
    /// last, first, sum, count, mean, min, max (e.g. amount:sum:5m), optionally followed by
    /// `as NAME`. Repeatable.
    #[arg(long = "feature", value_name = "SPEC", required = true)]
    pub features: Vec<FeatureArg>,
    /// Write the training set to FILE (.parquet, .csv or .json) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Most rows the table format prints (0: all).
    #[arg(long, value_name = "N", default_value_t = sql::DEFAULT_MAX_ROWS)]
    pub max_rows: usize,
}

async fn read(
    ctx: &datafusion::prelude::SessionContext,
    flag: &str,
    path: &Path,
) -> CliResult<DataFrame> {
    let what = format!("--{flag} {}", path.display());
    let table = sql::open_table(ctx, &what, &path.to_string_lossy()).await?;
    ctx.read_table(table)
        .map_err(|e| sql::input_error(&what, path, e))
}

/// The Parquet files among the spine and events, as `--flag path`, and whether the
/// output is a Parquet file.
pub fn parquet_inputs(args: &TrainingSetArgs) -> sql::ParquetFiles {
    // (flag, path as given, path on this machine)
    let parquet: Vec<(&str, &PathBuf, PathBuf)> =
        [("spine", &args.spine), ("events", &args.events)]
            .into_iter()
            .map(|(flag, path)| {
                let local = crate::data_files::local_path(&path.to_string_lossy());
                (flag, path, local.unwrap_or_else(|| path.clone()))
            })
            .filter(|(_, _, local)| sql::format_of_path(local) == Some("parquet"))
            .collect();
    sql::ParquetFiles {
        read: parquet
            .iter()
            .map(|(flag, path, _)| format!("--{flag} {}", path.display()))
            .collect(),
        written: args
            .output
            .as_ref()
            .is_some_and(|o| sql::format_of_path(o) == Some("parquet")),
        dirs: parquet
            .into_iter()
            .map(|(_, _, local)| local)
            .filter(|local| local.is_dir())
            .collect(),
        text: [&args.spine, &args.events]
            .into_iter()
            .filter_map(|path| crate::data_files::local_path(&path.to_string_lossy()))
            .filter(|local| matches!(sql::format_of_path(local), Some("csv" | "json")))
            .collect(),
    }
}

/// `result` as newline-delimited JSON in the file `path`.
async fn write_ndjson(result: DataFrame, path: &Path) -> CliResult<()> {
    use std::io::Write;
    let file = std::fs::File::create(path).map_err(|e| CliError::failure(crate::io_message(&e)))?;
    let mut out = std::io::BufWriter::new(file);
    let stream = result.execute_stream().await?;
    sql::write_stream(stream, OutputFormat::Ndjson, 0, &mut out).await?;
    out.flush()
        .map_err(|e| CliError::failure(crate::io_message(&e)))
}

/// Runs `arrowfeat training-set`.
pub async fn training_set(args: &TrainingSetArgs, out: &mut dyn std::io::Write) -> CliResult<()> {
    const FUNCTION: &str = "training-set";
    let closed = Closed::parse(FUNCTION, "closed", &args.closed)
        .map_err(|e| CliError::usage(format!("--closed: {}", e.message)))?;
    let ttl = match args.ttl.as_deref() {
        Some(text) => {
            parse_ttl(FUNCTION, text).map_err(|m| CliError::usage(format!("--ttl: {m}")))?
        }
        None => None,
    };
    if args.created_cutoff {
        // Refused here, by flag, before any file is read (the kernel would name its own
        // argument, `features[i]`, which the user never wrote).
        if let Some(window) = args
            .features
            .iter()
            .find(|f| f.spec.aggregation != PitAggregation::Last || f.spec.period.is_some())
        {
            return Err(CliError::usage(format!(
                "--created-cutoff: expected only as-of features (COLUMN or COLUMN:last), found --feature {}",
                arrowfeat_common::quote(&window.text, 200)
            )));
        }
    }
    if let Some(path) = &args.output {
        // DataFusion's writers create missing directories: a typo in the path would
        // quietly make a new tree. Checked before any input is read.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(CliError::usage(format!(
                    "--output {}: expected a file in an existing directory, found no directory {}",
                    arrowfeat_common::quote(&path.to_string_lossy(), 200),
                    arrowfeat_common::quote(&parent.to_string_lossy(), 200)
                )));
            }
        }
    }
    let ctx = sql::session()?;
    let inputs = parquet_inputs(args);
    let name = |e: CliError| sql::name_parquet_inputs(e, &inputs);
    let spine = read(&ctx, "spine", &args.spine).await?;
    let events = read(&ctx, "events", &args.events).await?;
    let by: Vec<&str> = args.by.iter().map(String::as_str).collect();
    let mut join = PointInTimeJoin::new(&by, &args.spine_time, &by, &args.event_time)
        .spelled(Spelling::Cli)
        .closed(closed)
        .ttl(ttl);
    if let Some(created) = &args.created {
        join = join.created(created).created_cutoff(args.created_cutoff);
    }
    for feature in &args.features {
        join = join.feature(feature.spec.clone());
    }
    let result = point_in_time_join(spine, events, &join)
        .await
        .map_err(|e| name(e.into()))?;
    match &args.output {
        Some(path) => {
            let text = path.to_string_lossy().to_string();
            let options = DataFrameWriteOptions::new();
            let failed = |e: datafusion::error::DataFusionError| {
                CliError::failure(format!("--output {text}: {}", e.find_root()))
            };
            let written = match sql::format_of(&text) {
                Some("parquet") => result
                    .write_parquet(&text, options, None)
                    .await
                    .map(drop)
                    .map_err(failed),
                Some("csv") => result
                    .write_csv(&text, options, None)
                    .await
                    .map(drop)
                    .map_err(failed),
                // Written as `--format ndjson` writes it, which keeps NaN and infinities
                // (DataFusion's JSON writer writes them as null).
                Some("json") => write_ndjson(result, path).await.map_err(|e| CliError {
                    message: format!("--output {text}: {}", e.message),
                    ..e
                }),
                _ => {
                    return Err(CliError::usage(format!(
                    "--output {text}: unknown file format: expected a .parquet, .csv or .json file"
                )))
                }
            };
            if let Err(e) = written {
                // A failed run leaves no file behind: a partial training set would look
                // like a whole one to the next step.
                let _ = std::fs::remove_file(path);
                return Err(name(e));
            }
        }
        None => {
            let stream = result.execute_stream().await.map_err(|e| name(e.into()))?;
            sql::write_stream(stream, args.format, args.max_rows, out)
                .await
                .map_err(name)?;
        }
    }
    Ok(())
}
