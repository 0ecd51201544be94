//! `arrowfeat`: feature functions in SQL, and feature schema checks for CI.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use arrowfeat_cli::commands::check::{self, CheckArgs, DiffArgs, Outcome};
use arrowfeat_cli::commands::drift::{drift, DriftArgs};
use arrowfeat_cli::commands::functions::{catalogue, CatalogueFormat};
use arrowfeat_cli::commands::skew::{skew, SkewArgs};
use arrowfeat_cli::commands::sql::{self, OutputFormat, TableArg};
use arrowfeat_cli::commands::training_set::{training_set, TrainingSetArgs};
use arrowfeat_cli::{CliError, CliResult};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "arrowfeat",
    version,
    about = "Feature-engineering functions for Arrow engines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run SQL with every arrowfeat function registered.
    ///
    /// Files can be queried by path (FROM 'data/events.parquet') or registered as tables
    /// with --table. Several statements may be separated by `;`; the last one's result is
    /// printed.
    Sql {
        /// The SQL to run.
        query: Option<String>,
        /// Read the SQL from a file instead.
        #[arg(short, long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// Register a Parquet, CSV or JSON (newline-delimited) file or directory as a table.
        #[arg(short, long = "table", value_name = "NAME=PATH")]
        tables: Vec<TableArg>,
        /// Output format (default: by the extension of --output .csv, .json, .ndjson or
        /// .jsonl, else table).
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// Most rows the table format prints (0: all). The other formats stream every row.
        #[arg(long, value_name = "N", default_value_t = sql::DEFAULT_MAX_ROWS)]
        max_rows: usize,
        /// Write the result to FILE instead of standard output, as text (Parquet: use
        /// COPY (...) TO 'FILE.parquet' with --allow-write).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Allow statements that write files or tables (COPY ... TO, INSERT); without it
        /// arrowfeat sql is read-only.
        #[arg(long)]
        allow_write: bool,
    },
    /// Check feature schema files against a feature store and/or an earlier revision.
    ///
    /// Exit codes: 0 pass; 1 findings at error level (or warnings with --deny-warnings);
    /// 2 usage error or unreadable input.
    Check(CheckArgs),
    /// Print a shell completion script, e.g. `arrowfeat completions bash >
    /// ~/.local/share/bash-completion/completions/arrowfeat`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Compare two revisions of schema files: classify changes and enforce semver.
    Diff(DiffArgs),
    /// Measure how far each feature's current data drifted from its reference: PSI,
    /// Jensen-Shannon and Kolmogorov-Smirnov for numbers, PSI, Jensen-Shannon and the
    /// largest share change for categories, and the change of the missing share.
    ///
    /// Thresholds: [drift] in arrowfeat.toml. Exit codes as for check. Example:
    /// arrowfeat drift --schemas schemas/ --reference last_week.parquet --current
    /// today.parquet
    Drift(DriftArgs),
    /// Compare what was served with what training used: each serving row is matched with
    /// the training row of its entity keys current at the serving time (within
    /// --time-tolerance), and each feature's values are compared (floats within the
    /// tolerances). Reports the mismatching, missing and extra rows.
    ///
    /// Example: arrowfeat skew --schemas schemas/ --serving online_log.parquet
    /// --training backfill.parquet --time-tolerance 5m --absolute-tolerance 1e-9
    Skew(SkewArgs),
    /// Build a point-in-time training set: for each label row (key, time), as-of values
    /// and windowed aggregates of the same key's events visible at that time.
    ///
    /// Example: arrowfeat training-set --spine labels.parquet --events events.parquet
    /// --by user_id --spine-time label_ts --event-time ts --ttl 30d --feature plan
    /// --feature amount:sum:5m --feature amount:count:7d -o training.parquet
    TrainingSet(TrainingSetArgs),
    /// List the functions, or show one with its arguments and an example.
    Functions {
        /// Function to describe.
        name: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CatalogueFormat::Text)]
        format: CatalogueFormat,
    },
}

fn emit(outcome: Outcome, out: &mut impl Write) -> CliResult<i32> {
    match &outcome.output {
        Some(path) => std::fs::write(path, &outcome.rendered).map_err(|e| {
            CliError::usage(format!(
                "--output {}",
                arrowfeat_common::path_io_message(path, &e)
            ))
        })?,
        None => out
            .write_all(outcome.rendered.as_bytes())
            // Not 1, the code for findings: the gate could not deliver its result.
            .map_err(|e| CliError::usage(format!("cannot write the report to stdout: {e}")))?,
    }
    // A refused request fails the run, with the report's own exit code when it has one
    // (its findings say why).
    match outcome.refusal {
        Some(message) => Err(CliError {
            message,
            exit_code: outcome.exit_code.max(1),
        }),
        None => Ok(outcome.exit_code),
    }
}

async fn run(cli: Cli) -> CliResult<i32> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Sql {
            query,
            file,
            tables,
            format,
            max_rows,
            output,
            allow_write,
        } => {
            let format = sql::output_format(format, output.as_deref())?;
            let text = sql::read_sql(query, file.as_deref())?;
            let ctx = sql::session()?;
            // A reader panic while registering names every Parquet table; once the query
            // is parsed, only the files it reads.
            if let Ok(mut named) = PARQUET_INPUTS.lock() {
                *named = sql::parquet_tables(&tables);
            }
            sql::register_tables(&ctx, &tables).await?;
            let statements = sql::parse(&ctx, &text)?;
            let inputs = sql::parquet_files(&ctx, &statements, &tables);
            if let Ok(mut named) = PARQUET_INPUTS.lock() {
                named.clone_from(&inputs);
            }
            let name = |e: CliError| sql::name_parquet_inputs(e, &inputs);
            let stream = sql::run_statements(&ctx, statements, allow_write)
                .await
                .map_err(name)?;
            match output {
                Some(path) => {
                    let file = std::fs::File::create(&path).map_err(|e| {
                        CliError::usage(format!(
                            "--output {}",
                            arrowfeat_common::path_io_message(&path, &e)
                        ))
                    })?;
                    let mut file = std::io::BufWriter::new(file);
                    sql::write_stream(stream, format, max_rows, &mut file)
                        .await
                        .map_err(name)?;
                }
                None => sql::write_stream(stream, format, max_rows, &mut out)
                    .await
                    .map_err(name)?,
            }
        }
        Command::Check(args) => return emit(check::check(&args)?, &mut out),
        Command::Diff(args) => return emit(check::diff(&args)?, &mut out),
        Command::Drift(args) => return emit(drift(&args)?, &mut out),
        Command::Skew(args) => return emit(skew(&args)?, &mut out),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "arrowfeat", &mut script);
            out.write_all(&script)
                .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        }
        Command::TrainingSet(args) => {
            if let Ok(mut named) = PARQUET_INPUTS.lock() {
                *named = arrowfeat_cli::commands::training_set::parquet_inputs(&args);
            }
            training_set(&args, &mut out).await?
        }
        Command::Functions { name, format } => {
            let text = catalogue(name.as_deref(), format)?;
            out.write_all(text.as_bytes())
                .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        }
    }
    Ok(0)
}

/// Stack of the threads that plan and run queries: deeply nested SQL (thousands of
/// chained operators) recurses deeply in DataFusion's planner. Only touched pages use
/// memory, so a large reservation costs nothing for ordinary queries.
const STACK_BYTES: usize = 1 << 30;

/// Marks a recorded panic raised inside the parquet crate (a corrupt input file).
const CORRUPT_PARQUET: &str = "\u{0}parquet\u{0}";

/// The Parquet inputs of an `sql` run, named when the Parquet reader panics.
static PARQUET_INPUTS: std::sync::Mutex<sql::ParquetFiles> =
    std::sync::Mutex::new(sql::ParquetFiles {
        read: Vec::new(),
        written: false,
        dirs: Vec::new(),
        text: Vec::new(),
    });

/// The message of the last panic, recorded by the hook for the boundary to report.
static PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into())
}

fn main() -> ExitCode {
    // A bug must still end in one readable line, not a Rust backtrace: the hook records
    // the message and the boundary below prints it once.
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = PANIC.lock() {
            last.get_or_insert_with(|| {
                let message = panic_message(info.payload());
                if std::env::var_os("ARROWFEAT_DEBUG_PANIC").is_some() {
                    arrowfeat_cli::say!("{info}");
                }
                // The parquet crate panics on some corrupt files instead of failing (also
                // inside crates it calls, such as `bytes`): look for it on the stack.
                let in_parquet = info
                    .location()
                    .is_some_and(|l| l.file().contains("/parquet-"))
                    || std::backtrace::Backtrace::force_capture()
                        .to_string()
                        .lines()
                        // Frames of the parquet crate itself (`N: parquet::..` or
                        // `<parquet::..`), not DataFusion's `datafusion_datasource_parquet`,
                        // under which a UDF in a pushed-down filter runs.
                        .any(|frame| {
                            let frame = frame.trim_start();
                            let name = frame.split_once(": ").map_or(frame, |(_, n)| n);
                            name.starts_with("parquet::") || name.starts_with("<parquet::")
                        });
                if in_parquet {
                    format!("{CORRUPT_PARQUET}{message}")
                } else {
                    message
                }
            });
        }
    }));
    // clap's messages quote the arguments: escaped like everything else this tool prints
    // (an argument may come from a pull request, e.g. a file name).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let escaped: Vec<String> = text
                .lines()
                .map(|l| arrowfeat_common::escape_controls(l).into_owned())
                .collect();
            let text = escaped.join("\n") + "\n";
            if e.use_stderr() {
                // The message without clap's usage lines and hint.
                let message = escaped
                    .iter()
                    .map(|l| l.trim())
                    .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                let root = <Cli as clap::CommandFactory>::command();
                let words: Vec<_> = std::env::args_os().collect();
                if let Some(matches) =
                    arrowfeat_cli::commands::outputs::parse_past_errors(&root, words)
                {
                    check::report_command_line_error(
                        &root,
                        &matches,
                        message.strip_prefix("error: ").unwrap_or(&message),
                    );
                }
                {
                    use std::io::Write as _;
                    let _ = std::io::stderr().write_all(text.as_bytes());
                }
            } else {
                print!("{text}");
            }
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    // Before anything is read or written: no output may replace another file it names.
    let root = <Cli as clap::CommandFactory>::command();
    if let Ok(matches) = root.clone().try_get_matches_from(std::env::args_os()) {
        if let Some((name, sub)) = matches.subcommand() {
            let clash = root
                .find_subcommand(name)
                .and_then(|command| arrowfeat_cli::commands::outputs::clash(command, sub));
            if let Some(clash) = clash {
                arrowfeat_cli::say!("arrowfeat: error: {clash}");
                return ExitCode::from(2);
            }
        }
    }
    let worker = std::thread::Builder::new()
        .name("arrowfeat".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_stack_size(STACK_BYTES)
                .build()
                .map_err(|e| CliError::failure(format!("cannot start the runtime: {e}")))?;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runtime.block_on(run(cli))
            }));
            // Worker tasks may still hold the panicking query: do not wait for them.
            runtime.shutdown_background();
            result.unwrap_or_else(|payload| {
                let message = PANIC
                    .lock()
                    .ok()
                    .and_then(|mut p| p.take())
                    .unwrap_or_else(|| panic_message(payload.as_ref()));
                Err(match message.strip_prefix(CORRUPT_PARQUET) {
                    Some(_) => {
                        let inputs = PARQUET_INPUTS.lock().map(|n| n.clone()).unwrap_or_default();
                        // The panic's own words are Rust internals ("called
                        // `Option::unwrap()`"): ARROWFEAT_DEBUG_PANIC=1 prints them. A
                        // statement that writes Parquet may have hit the writer instead
                        // (options it cannot honour).
                        let cause = if inputs.written {
                            "the Parquet library failed (a corrupt input, or writer options it cannot honour)"
                        } else {
                            "the file is corrupt (the Parquet reader failed on it)"
                        };
                        sql::name_parquet_inputs(
                            CliError::failure(format!(
                                "{}{cause}",
                                arrowfeat_cli::PARQUET_UNREADABLE
                            )),
                            &inputs,
                        )
                    }
                    None => CliError {
                        message: format!("internal error (please report it): {message}"),
                        exit_code: 70,
                    },
                })
            })
        });
    let result = match worker.map(|w| w.join()) {
        Ok(Ok(result)) => result,
        _ => Err(CliError {
            message: "internal error (please report it): the worker thread failed".into(),
            exit_code: 70,
        }),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) if e.exit_code == 0 && e.message.is_empty() => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the message quotes from a query or a file: escaped, and
            // cut so that a hostile megabyte-long value does not flood the log.
            arrowfeat_cli::say!(
                "arrowfeat: error: {}",
                arrowfeat_common::quote(&e.to_string(), 4000)
            );
            ExitCode::from(e.exit_code as u8)
        }
    }
}
