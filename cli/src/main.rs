//! `arrowfeat`: feature functions in SQL, and feature schema checks for CI.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use arrowfeat_cli::check::{self, CheckArgs, DiffArgs, Outcome};
use arrowfeat_cli::functions::{catalogue, CatalogueFormat};
use arrowfeat_cli::sql::{self, OutputFormat, TableArg};
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
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// Check feature schema files against a feature store and/or an earlier revision.
    ///
    /// Exit codes: 0 pass; 1 findings at error level (or warnings with --deny-warnings);
    /// 2 usage error or unreadable input.
    Check {
        /// A schema file, or a directory searched for *.yaml / *.yml.
        #[arg(long, value_name = "PATH")]
        schemas: PathBuf,
        /// Feature-store metadata: `feast registry-dump` JSON or arrowfeat store metadata.
        #[arg(long, value_name = "FILE")]
        registry: Option<PathBuf>,
        /// A Feast feature repo; its registry is read with the installed `feast` CLI.
        #[arg(long, value_name = "DIR")]
        feast_repo: Option<PathBuf>,
        /// Earlier revision to check compatibility against: a directory or a git revision.
        #[arg(long, value_name = "DIR|GIT-REF")]
        against: Option<String>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Compare two revisions of schema files: classify changes and enforce semver.
    Diff {
        /// The old revision: a file, a directory or a git revision of NEW's path.
        old: String,
        /// The new revision: a file or a directory.
        new: PathBuf,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// List the functions, or show one with its arguments and an example.
    Functions {
        /// Function to describe.
        name: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CatalogueFormat::Text)]
        format: CatalogueFormat,
    },
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Report format: text, json, junit, sarif, github, markdown.
    #[arg(long, default_value = "text")]
    format: String,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// Configuration file (default: ./arrowfeat.toml if present).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Compatibility mode between revisions: backward (default), forward, full, none.
    #[arg(long, value_name = "MODE")]
    compatibility: Option<String>,
    /// Write the report to FILE instead of stdout (also when the run cannot start: a
    /// valid report with the error, exit code 2).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Follow symbolic links that lead out of a schema directory (refused by default).
    #[arg(long)]
    follow_symlinks: bool,
    /// Seconds `feast registry-dump` (--feast-repo) may run before it is stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = arrowfeat_cli::feast::DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    feast_timeout: u64,
}

fn emit(outcome: Outcome, out: &mut impl Write) -> CliResult<i32> {
    match &outcome.output {
        Some(path) => std::fs::write(path, &outcome.rendered)
            .map_err(|e| CliError::usage(format!("--output {}: {e}", path.display())))?,
        None => out
            .write_all(outcome.rendered.as_bytes())
            .map_err(|e| CliError::failure(format!("writing output: {e}")))?,
    }
    Ok(outcome.exit_code)
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
        } => {
            let text = sql::read_sql(query, file.as_deref())?;
            let ctx = sql::session();
            sql::register_tables(&ctx, &tables).await?;
            let batches = sql::run(&ctx, &text).await?;
            sql::write_batches(&batches, format, &mut out)?;
        }
        Command::Check {
            schemas,
            registry,
            feast_repo,
            against,
            report,
        } => {
            let args = CheckArgs {
                schemas,
                registry,
                feast_repo,
                against,
                format: report.format,
                deny_warnings: report.deny_warnings,
                config: report.config,
                compatibility: report.compatibility,
                output: report.output,
                follow_symlinks: report.follow_symlinks,
                feast_timeout: report.feast_timeout,
            };
            return emit(check::check(&args)?, &mut out);
        }
        Command::Diff { old, new, report } => {
            let args = DiffArgs {
                old,
                new,
                format: report.format,
                deny_warnings: report.deny_warnings,
                config: report.config,
                compatibility: report.compatibility,
                output: report.output,
                follow_symlinks: report.follow_symlinks,
            };
            return emit(check::diff(&args)?, &mut out);
        }
        Command::Functions { name, format } => {
            let text = catalogue(name.as_deref(), format)?;
            out.write_all(text.as_bytes())
                .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        }
    }
    Ok(0)
}

fn main() -> ExitCode {
    // A bug must still end in one readable line, not a Rust backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("arrowfeat: internal error (please report it): {info}");
    }));
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("arrowfeat: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(run(cli))));
    match result {
        Ok(Ok(code)) => ExitCode::from(code as u8),
        Ok(Err(e)) => {
            eprintln!("arrowfeat: error: {e}");
            ExitCode::from(e.exit_code as u8)
        }
        Err(_) => ExitCode::from(70),
    }
}
