//! `arrowfeat`: feature functions in SQL, and (soon) feature schema checks.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use arrowfeat_cli::functions::{catalogue, CatalogueFormat};
use arrowfeat_cli::sql::{self, OutputFormat, TableArg};
use arrowfeat_cli::{CliError, CliResult};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "arrowfeat", version, about = "Feature-engineering functions for Arrow engines")]
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
    /// List the functions, or show one with its arguments and an example.
    Functions {
        /// Function to describe.
        name: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CatalogueFormat::Text)]
        format: CatalogueFormat,
    },
}

async fn run(cli: Cli) -> CliResult<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Sql { query, file, tables, format } => {
            let text = sql::read_sql(query, file.as_deref())?;
            let ctx = sql::session();
            sql::register_tables(&ctx, &tables).await?;
            let batches = sql::run(&ctx, &text).await?;
            sql::write_batches(&batches, format, &mut out)?;
        }
        Command::Functions { name, format } => {
            let text = catalogue(name.as_deref(), format)?;
            out.write_all(text.as_bytes())
                .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
        }
    }
    Ok(())
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
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(run(cli))));
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("arrowfeat: error: {e}");
            ExitCode::from(e.exit_code as u8)
        }
        Err(_) => ExitCode::from(70),
    }
}
