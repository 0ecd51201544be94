//! `point_in_time(...)`: the point-in-time join as a SQL table function, so that
//! `arrowfeat sql` users build a training set over registered tables or files:
//!
//! ```sql
//! SELECT * FROM point_in_time(
//!     'labels.parquet', 'events.parquet',   -- spine and events: table names or file paths
//!     'user_id', 'label_time', 'event_time', -- key column(s), spine time, event time
//!     'amount', 'amount:sum:1h', 'amount:count:7d as orders_7d',
//!     'ttl=30d', 'created=created_at')
//! ```
//!
//! The adapter only resolves the two tables and parses the text arguments; the join is
//! [`super::point_in_time_join`], run when the plan executes.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue, TableReference};
use datafusion::datasource::provider_as_source;
use datafusion::execution::session_state::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::prelude::DataFrame;
use futures::{StreamExt, TryStreamExt};

use super::{
    check_join, join_batches, parse_ttl, point_in_time_join, resolved_options, FeatureSpec,
    PointInTimeJoin, Spelling,
};
use crate::kernels::window::Closed;
use crate::kernels::KernelError;
use crate::sql::kernel_error;
use crate::sql::table_paths::{local_path, path_like};

/// The SQL name of the table function.
pub const NAME: &str = "point_in_time";

/// The catalogue entry of `point_in_time` (`arrowfeat functions point_in_time`).
pub fn documentation() -> datafusion::logical_expr::Documentation {
    datafusion::logical_expr::Documentation::builder(
        crate::sql::DOC_SECTION,
        "A training set: each row of the spine table with, per feature, the value or window \
         aggregate of the same key's events visible at the row's time (event time <= spine time, \
         within the TTL), in the spine's row order. Both tables are read into memory; the \
         join runs when the query executes. The example reads the bundled data as registered \
         tables: `arrowfeat sql \"...\" --table labels=examples/data/labels.csv --table \
         events=examples/data/events.parquet` (file paths work in their place).",
        "point_in_time(spine, events, keys, spine_time, event_time, features [, ...] [, 'ttl=30d'] [, 'created=COLUMN'] [, 'created_cutoff=true'] [, 'closed=right'])",
    )
    .with_argument("spine", "Labels: a registered table or view, or a Parquet/CSV/JSON file path.")
    .with_argument("events", "Events: a registered table or view, or a file path.")
    .with_argument("keys", "Key column(s), named the same in both tables: 'user_id' or 'user_id, shop_id'; '' for none.")
    .with_argument("spine_time", "Time column of the spine.")
    .with_argument("event_time", "Time column of the events.")
    .with_argument("features", "One string per feature: 'COLUMN' (as-of value), 'COLUMN:AGG' or 'COLUMN:AGG:PERIOD', AGG one of last, first, sum, count, mean, min, max; optionally ' as NAME'. Output columns are named COLUMN or COLUMN_AGG[_PERIOD].")
    .with_argument("ttl", "'ttl=DURATION': events older than the spine time minus DURATION are invisible (0: no limit).")
    .with_argument("created", "'created=COLUMN': the events' created time, breaking ties on event time (latest wins).")
    .with_argument("created_cutoff", "'created_cutoff=true': an event is visible only once created too (its created time not after the spine time, Feast's filter_by_created_timestamp); needs created= and as-of features only.")
    .with_argument("closed", "'closed=right' (default: events at the spine time are visible), 'left', 'both' or 'none'.")
    .with_sql_example(
        "> SELECT * FROM point_in_time('labels', 'events', 'user_id', 'label_ts', 'event_ts', 'amount', 'amount:sum:6h', 'ttl=7d') LIMIT 1;\n\
         +---------+---------------------+-------+--------+---------------+\n\
         | user_id | label_ts            | label | amount | amount_sum_6h |\n\
         +---------+---------------------+-------+--------+---------------+\n\
         | user_40 | 2026-11-01T21:08:40 | 1     | 25.11  | 281.5         |\n\
         +---------+---------------------+-------+--------+---------------+",
    )
    .build()
}

/// The positional arguments before the features and options.
const FIXED: [&str; 5] = ["spine", "events", "keys", "spine_time", "event_time"];

/// The `point_in_time` table function (register with
/// `ctx.register_udtf(NAME, Arc::new(PointInTimeFunction))`; [`crate::register_all`]
/// does).
#[derive(Debug, Default)]
pub struct PointInTimeFunction;

fn error(argument: &str, message: String) -> DataFusionError {
    kernel_error(KernelError::new(NAME, argument, message))
}

/// Argument `index` as text: a string literal (of any string type) and nothing else.
fn text_argument(args: &[Expr], index: usize, argument: &str) -> Result<String> {
    let expr = &args[index];
    match expr {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        ) => Ok(s.clone()),
        other => Err(error(
            argument,
            format!(
                "expected a string literal (argument {}), found {}",
                index + 1,
                describe(other)
            ),
        )),
    }
}

/// A short description of a non-literal argument, without DataFusion's internals.
fn describe(expr: &Expr) -> String {
    match expr {
        Expr::Literal(value, _) if value.is_null() => "NULL".to_string(),
        Expr::Literal(value, _) => format!("{value} ({})", value.data_type()),
        Expr::Column(c) => format!("a column reference `{}`", c.name),
        _ => "an expression".to_string(),
    }
}

/// The file extensions the error below names.
const TABLE_FILES: [&str; 3] = [".parquet", ".csv", ".json"];

/// Waits for `future` without a `Future`-aware caller: on a multi-threaded Tokio runtime
/// by blocking this worker in place; otherwise only if it is ready at once (registered
/// tables are; a file that must be listed and inferred is not).
fn wait<F: Future>(future: F) -> Option<F::Output> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            Some(tokio::task::block_in_place(|| handle.block_on(future)))
        }
        // No runtime of this library's tokio on this thread: a host across the FFI.
        Err(_) => crate::sql::foreign::runtime()
            .ok()
            .map(|runtime| runtime.block_on(future)),
        _ => {
            let mut future = pin!(future);
            match future
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
            {
                Poll::Ready(output) => Some(output),
                Poll::Pending => None,
            }
        }
    }
}

/// The table named `name`: a registered table or view, or (where the session reads files
/// in `FROM`) a local file or directory path.
fn resolve(
    state: &SessionState,
    argument: &str,
    name: &str,
) -> Result<(TableReference, Arc<dyn TableProvider>)> {
    let reference = if path_like(name) || name.contains("://") {
        TableReference::bare(name)
    } else {
        TableReference::from(name)
    };
    let registered = state
        .schema_for_ref(reference.clone())
        .is_ok_and(|schema| schema.table_exist(reference.table()));
    if !registered {
        // Anything that is on disk is checked, named like a file or not: a FIFO or device
        // would block the reader forever.
        match local_path(name).map(std::fs::metadata) {
            Some(Err(_)) if path_like(name) => {
                return Err(error(
                    argument,
                    format!("expected a table name or an existing file, found `{name}`: no such file or directory"),
                ))
            }
            Some(Ok(m)) if !(m.is_file() || m.is_dir()) => {
                return Err(error(
                    argument,
                    format!("expected a regular file or a directory, found `{name}`: a FIFO, socket or device"),
                ))
            }
            Some(Ok(m)) if m.is_file() && !path_like(name) => {
                return Err(error(
                    argument,
                    format!(
                        "expected a table name or a {} file, found `{name}`: register other files as tables first (arrowfeat sql --table NAME=PATH)",
                        TABLE_FILES.join(", ")
                    ),
                ))
            }
            _ => {}
        }
        // Paths are read through the file checks in any session (not only where `FROM
        // 'path'` goes through them), so that a hostile directory gets the same error here
        // as in `arrowfeat sql`.
        if path_like(name) && local_path(name).is_some_and(|p| p.exists()) {
            let what = format!("`{name}`");
            match wait(crate::sql::files::open_path(state, &what, name)) {
                Some(Ok(provider)) => return Ok((reference, provider)),
                Some(Err(e)) => return Err(error(argument, e.message)),
                None => {}
            }
        }
    }
    let missing = || {
        let what = if local_path(name).is_some_and(|p| p.exists()) {
            format!(
                "it exists but is not readable as a table (an empty directory, or not a {} file?)",
                TABLE_FILES.join(", ")
            )
        } else {
            "no such table".to_string()
        };
        error(
            argument,
            format!("expected a registered table, view or file, found `{name}`: {what}"),
        )
    };
    let schema = state
        .schema_for_ref(reference.clone())
        .map_err(|_| missing())?;
    match wait(schema.table(reference.table())) {
        Some(Ok(Some(provider))) => Ok((reference, provider)),
        Some(Ok(None)) => Err(missing()),
        Some(Err(e)) => Err(error(
            argument,
            match crate::sql::errors::error_cause(&e) {
                crate::sql::errors::ErrorCause::Parquet(detail) => {
                    format!("cannot read the Parquet file `{name}`: {detail}")
                }
                crate::sql::errors::ErrorCause::Other(detail) => {
                    format!("cannot read `{name}`: {detail}")
                }
            },
        )),
        None => Err(error(
            argument,
            format!("cannot resolve `{name}` here without blocking: register it as a table first"),
        )),
    }
}

/// Parses the arguments after the five fixed ones: `name=value` options (`ttl`,
/// `created`, `created_cutoff`, `closed`) and features.
fn parse_rest(args: &[Expr], mut join: PointInTimeJoin) -> Result<PointInTimeJoin> {
    let mut given: Vec<String> = Vec::new();
    for index in FIXED.len()..args.len() {
        let text = text_argument(args, index, "features")?;
        // A feature whose column name holds `=` is written in backticks, as for `:`.
        let option = match text.trim_start().starts_with('`') {
            true => None,
            false => text.split_once('='),
        };
        match option {
            Some((option, value)) => {
                let (option, value) = (option.trim().to_ascii_lowercase(), value.trim());
                if given.contains(&option) {
                    return Err(error(
                        &option,
                        format!(
                            "expected `{option}=` once, found it again in argument {}",
                            index + 1
                        ),
                    ));
                }
                match option.as_str() {
                    "ttl" => {
                        join = join.ttl(parse_ttl(NAME, value).map_err(|m| error("ttl", m))?);
                    }
                    "created" => join = join.created(value),
                    "created_cutoff" => {
                        let on = match value.to_ascii_lowercase().as_str() {
                            "true" => true,
                            "false" => false,
                            _ => {
                                return Err(error(
                                    "created_cutoff",
                                    format!("expected true or false, found `{value}`"),
                                ))
                            }
                        };
                        join = join.created_cutoff(on);
                    }
                    "closed" => {
                        join =
                            join.closed(Closed::parse(NAME, "closed", value).map_err(kernel_error)?)
                    }
                    _ => {
                        return Err(error(
                            "options",
                            format!("expected an option ttl=, created=, created_cutoff= or closed=, found `{text}`"),
                        ))
                    }
                }
                given.push(option);
            }
            None => {
                let feature = FeatureSpec::parse(&text).map_err(|message| {
                    error("features", format!("argument {}: {message}", index + 1))
                })?;
                join = join.feature(feature);
            }
        }
    }
    if join.options.created_cutoff && !given.iter().any(|o| o == "created") {
        return Err(error(
            "created_cutoff",
            "expected `created=COLUMN` with it (the created time the cutoff compares), found none"
                .to_string(),
        ));
    }
    Ok(join)
}

impl TableFunctionImpl for PointInTimeFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        if exprs.len() <= FIXED.len() {
            return Err(error(
                "features",
                format!(
                    "expected {} (then features and options), found {} argument{}",
                    FIXED.join(", "),
                    exprs.len(),
                    if exprs.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        // Called through the FFI (datafusion-python), the session is the host's, another
        // DataFusion: paths are read in this library's own session instead, and the
        // host's registered tables are out of reach.
        let (state, foreign) = match args.session().as_any().downcast_ref::<SessionState>() {
            Some(state) => (state.clone(), false),
            None => (crate::sql::foreign::session()?.state(), true),
        };
        // A name the host knows is no table here: say why, not just "no such table".
        let resolve = |argument: &str, name: &str| {
            resolve(&state, argument, name).map_err(|e| match foreign && !path_like(name) {
                true => error(
                    argument,
                    format!(
                        "expected a file path, found `{name}`: across datafusion-python's FFI \
                         the function reads files, and tables registered in the session are \
                         not visible to it"
                    ),
                ),
                false => e,
            })
        };
        let fixed: Vec<String> = FIXED
            .iter()
            .enumerate()
            .map(|(i, argument)| text_argument(exprs, i, argument))
            .collect::<Result<_>>()?;
        // '' is no key; otherwise every comma-separated name must be there.
        let keys: Vec<&str> = if fixed[2].is_empty() {
            Vec::new()
        } else {
            fixed[2].split(',').map(str::trim).collect()
        };
        if keys.iter().any(|k| k.is_empty()) {
            return Err(error(
                "keys",
                format!(
                    "expected column names separated by commas ('' for no key), found `{}`",
                    fixed[2]
                ),
            ));
        }
        let join = parse_rest(
            exprs,
            PointInTimeJoin::new(&keys, fixed[3].trim(), &keys, fixed[4].trim())
                .spelled(Spelling::Sql),
        )?;
        let spine = resolve("spine", &fixed[0])?;
        let events = resolve("events", &fixed[1])?;
        check_join(&spine.1.schema(), &events.1.schema(), &join).map_err(kernel_error)?;
        // The output schema: the join over no rows gives each feature's type.
        let empty = join_batches(
            &RecordBatch::new_empty(spine.1.schema()),
            &RecordBatch::new_empty(events.1.schema()),
            &join,
            &resolved_options(&join, 1),
        )?;
        let stream = PointInTimeStream {
            schema: empty.schema(),
            state,
            spine,
            events,
            join,
        };
        Ok(Arc::new(StreamingTable::try_new(
            stream.schema.clone(),
            vec![Arc::new(stream)],
        )?))
    }
}

/// Runs the join when the plan executes (so `EXPLAIN` reads nothing).
#[derive(Debug)]
struct PointInTimeStream {
    schema: SchemaRef,
    state: SessionState,
    spine: (TableReference, Arc<dyn TableProvider>),
    events: (TableReference, Arc<dyn TableProvider>),
    join: PointInTimeJoin,
}

impl PointInTimeStream {
    fn frame(&self, side: &(TableReference, Arc<dyn TableProvider>)) -> Result<DataFrame> {
        let plan =
            LogicalPlanBuilder::scan(side.0.clone(), provider_as_source(side.1.clone()), None)?
                .build()?;
        Ok(DataFrame::new(self.state.clone(), plan))
    }
}

impl PartitionStream for PointInTimeStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let frames = self
            .frame(&self.spine)
            .and_then(|s| Ok((s, self.frame(&self.events)?)));
        let join = self.join.clone();
        let schema = self.schema.clone();
        // The local files read, to name the one a CSV or JSON reader's error is about.
        let inputs: Vec<std::path::PathBuf> = [&self.spine.0, &self.events.0]
            .into_iter()
            .filter(|r| r.schema().is_none() && path_like(r.table()))
            .filter_map(|r| local_path(r.table()))
            .collect();
        let run = async move {
            let (spine, events) = frames?;
            let name_file = |e: DataFusionError| match crate::sql::files::text_read_failure(
                &e.to_string(),
                &inputs,
                None,
            ) {
                Some(words) => error("events", words),
                None => e,
            };
            let result = point_in_time_join(spine, events, &join)
                .await
                .map_err(name_file)?;
            // The schema given at planning, so a table changed since cannot slip through.
            let batches = result.collect().await?;
            let batches: Vec<Result<RecordBatch>> = batches
                .into_iter()
                .map(|b| {
                    if b.schema().fields() == schema.fields() {
                        Ok(b.with_schema(schema.clone())?)
                    } else {
                        Err(error(
                            "spine",
                            "expected the tables to keep the columns they had when the query was planned".to_string(),
                        ))
                    }
                })
                .collect();
            Ok::<_, DataFusionError>(futures::stream::iter(batches))
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(run).try_flatten().boxed(),
        ))
    }
}
