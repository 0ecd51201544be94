//! The data gate: a feature view's data checked against its schema file.
//!
//! The validator says what to count ([`arrowfeat_validator::checks::data::plan`]) and
//! what the counts mean ([`arrowfeat_validator::checks::data::findings`]); this crate
//! reads the data with arrowfeat's file reading (the same checks as `arrowfeat sql`) and
//! counts in DataFusion SQL: one scan for every value check, one query each for
//! duplicates and stale keys, and a bounded sample of rows for each finding.

use std::collections::BTreeMap;

use arrowfeat_common::quote;
use arrowfeat_udf::sql::files;
use arrowfeat_validator::checks::data::{
    findings, plan, AllowedValue, DataColumn, DataCounts, DataOptions, DataPlan, Matched, Predicate,
};
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::run::DataSource;
use arrowfeat_validator::spec::model::{ExactNumber, SchemaFile};
use arrowfeat_validator::store::StoreView;
use arrowfeat_validator::types::{FeatureType, TimeUnit};
use datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, TimeUnit as ArrowUnit};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

/// The name the data is registered under in its session.
const TABLE: &str = "data";
/// At most this many characters of a sampled value are shown.
const SAMPLE_VALUE_CHARS: usize = 60;

/// The data of feature views, by view name (or one path for every view), checked with
/// DataFusion.
#[derive(Debug)]
pub struct DataPaths {
    by_view: BTreeMap<String, String>,
    any_view: Option<String>,
    /// Views without a path read their store's batch source, relative paths from this
    /// directory (the feature repo).
    from_store: Option<std::path::PathBuf>,
    options: DataOptions,
    /// The views checked so far.
    used: std::sync::Mutex<Vec<String>>,
}

impl DataPaths {
    /// `paths`: (view, path) pairs; a pair without a view applies to every view (when the
    /// schemas declare one view).
    pub fn new(paths: Vec<(Option<String>, String)>, options: DataOptions) -> DataPaths {
        let mut by_view = BTreeMap::new();
        let mut any_view = None;
        for (view, path) in paths {
            match view {
                Some(view) => {
                    by_view.insert(view, path);
                }
                None => any_view = Some(path),
            }
        }
        DataPaths {
            by_view,
            any_view,
            from_store: None,
            options,
            used: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Views given no path read the file their store's batch source names (a Feast
    /// `FileSource`), a relative one from `repo`, as Feast reads it.
    pub fn with_store_sources(mut self, repo: std::path::PathBuf) -> DataPaths {
        self.from_store = Some(repo);
        self
    }

    /// The views given by name that no schema file declared (after a run).
    pub fn unused_views(&self) -> Vec<String> {
        let used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        self.by_view
            .keys()
            .filter(|view| !used.contains(view))
            .cloned()
            .collect()
    }
}

impl DataSource for DataPaths {
    fn check(&self, file: &SchemaFile, store: Option<&StoreView>) -> Option<Vec<Check>> {
        let view = &file.spec.name;
        let from_store = || -> Option<String> {
            let repo = self.from_store.as_ref()?;
            let uri = store?.batch_source_path.as_deref()?;
            let local = uri.strip_prefix("file://").unwrap_or(uri);
            if uri.contains("://") && !uri.starts_with("file://") {
                return Some(uri.to_string()); // read as given: the reader says it cannot
            }
            let path = std::path::Path::new(local);
            Some(match path.is_absolute() {
                true => local.to_string(),
                false => repo.join(path).to_string_lossy().into_owned(),
            })
        };
        let from_any = !self.by_view.contains_key(view) && self.any_view.is_some();
        let path = match self.by_view.get(view).or(self.any_view.as_ref()) {
            Some(path) => path.clone(),
            None => from_store()?,
        };
        let path = &path;
        let others: Vec<String> = {
            let mut used = self.used.lock().ok()?;
            used.push(view.clone());
            used.iter().filter(|v| *v != view).cloned().collect()
        };
        if from_any && !others.is_empty() {
            // One path for several views: which view's data it is cannot be guessed.
            return Some(vec![Check::fail(
                Rule::DataUnreadable,
                format!("data {}", quote(path, 200)),
                Expected("the data of one view"),
                Actual("several views"),
                arrowfeat_validator::yaml::Pos::UNKNOWN,
                format!(
                    "--data {} is given without a view, but the schemas declare several views (`{}` and `{}`): give --data VIEW=PATH",
                    quote(path, 200),
                    quote(&others[0], 100),
                    quote(view, 100)
                ),
            )]);
        }
        let plan = plan(file, path, &self.options);
        let counted = run_blocking(count(&plan, path));
        Some(match counted {
            Ok(counts) => findings(&plan, &counts),
            Err(message) => vec![Check::fail(
                Rule::DataUnreadable,
                format!("data {}", quote(path, 200)),
                Expected("data that can be read"),
                Actual("unreadable"),
                arrowfeat_validator::yaml::Pos::UNKNOWN,
                message,
            )],
        })
    }

    fn label(&self) -> String {
        let mut paths: Vec<String> = self.by_view.values().map(|p| quote(p, 200)).collect();
        paths.extend(self.any_view.iter().map(|p| quote(p, 200)));
        if self.from_store.is_some() {
            paths.push("of the store's batch sources".to_string());
        }
        format!(
            "data {} (as of {})",
            paths.join(", "),
            arrowfeat_validator::checks::data::as_of_text(self.options.as_of_nanos)
        )
    }
}

/// `future` to completion from synchronous code, inside a Tokio runtime (the CLI's) or
/// not (Python's).
fn run_blocking<T>(future: impl std::future::Future<Output = T>) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => tokio::task::block_in_place(|| handle.block_on(future)),
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime")
            .block_on(future),
    }
}

/// The counts `plan` asks for, over the data at `path`.
pub async fn count(plan: &DataPlan, path: &str) -> Result<DataCounts, String> {
    let ctx = files::session().map_err(|e| files::error_message(&e))?;
    let what = format!("'{}'", quote(path, 200));
    let table = files::open_path(&ctx.state(), &what, path)
        .await
        .map_err(|e| e.message)?;
    let schema = table.schema();
    ctx.register_table(TABLE, table)
        .map_err(|e| files::error_message(&e))?;
    let columns: Vec<DataColumn> = schema
        .fields()
        .iter()
        .map(|f| DataColumn {
            name: f.name().clone(),
            read_as: feature_type(f.data_type()),
            arrow: f.data_type().to_string(),
        })
        .collect();
    let type_of = |name: &str| -> Option<&DataType> {
        schema.field_with_name(name).ok().map(|f| f.data_type())
    };
    let mut counts = DataCounts {
        columns,
        ..DataCounts::default()
    };

    // Every value check in one scan.
    let conditions: Vec<Option<String>> = plan
        .checks
        .iter()
        .map(|check| condition(plan, &check.column, &check.predicate, &type_of))
        .collect();
    let mut select = vec!["count(*)".to_string()];
    select.extend(
        conditions
            .iter()
            .flatten()
            .map(|c| format!("count(*) FILTER (WHERE {c})")),
    );
    let row = one_row(&ctx, &format!("SELECT {} FROM {TABLE}", select.join(", "))).await?;
    counts.rows = row[0];
    let mut next = 1;
    for condition in &conditions {
        let matched = match condition {
            Some(c) => {
                let rows = row[next];
                next += 1;
                let sample = sample(&ctx, plan, Some(c), rows, &type_of).await?;
                Some(Matched { rows, sample })
            }
            None => None,
        };
        counts.checks.push(matched);
    }

    // Duplicates over the declared columns the data has, when it has the keys and time.
    let keys_and_time: Vec<&str> = plan
        .keys
        .iter()
        .map(String::as_str)
        .chain([plan.event_time.as_str()])
        .collect();
    if keys_and_time.iter().all(|c| type_of(c).is_some()) {
        let declared: Vec<String> = plan
            .columns
            .iter()
            .filter(|c| type_of(&c.name).is_some())
            .map(|c| ident(&c.name))
            .collect();
        let keys: Vec<String> = keys_and_time.iter().map(|c| ident(c)).collect();
        let distinct = format!("SELECT DISTINCT {} FROM {TABLE}", declared.join(", "));
        let distinct_rows = one_row(&ctx, &format!("SELECT count(*) FROM ({distinct})")).await?[0];
        let exact = counts.rows.saturating_sub(distinct_rows);
        let exact_sample = if exact == 0 {
            Vec::new()
        } else {
            let query = format!(
                "SELECT {}, count(*) AS arrowfeat_rows FROM {TABLE} GROUP BY {} HAVING count(*) > 1 LIMIT {}",
                keys.join(", "),
                declared.join(", "),
                plan.sample_rows
            );
            render_rows(&ctx, &query, "rows").await?
        };
        counts.exact_duplicates = Some(Matched {
            rows: exact,
            sample: exact_sample,
        });
        let conflicting_groups = format!(
            "SELECT {keys}, count(*) AS arrowfeat_rows FROM ({distinct}) GROUP BY {keys} HAVING count(*) > 1",
            keys = keys.join(", ")
        );
        let conflicting = one_row(
            &ctx,
            &format!("SELECT count(*) FROM ({conflicting_groups})"),
        )
        .await?[0];
        let conflicting_sample = if conflicting == 0 {
            Vec::new()
        } else {
            let query = format!("{conflicting_groups} LIMIT {}", plan.sample_rows);
            render_rows(&ctx, &query, "versions").await?
        };
        counts.conflicting = Some(Matched {
            rows: conflicting,
            sample: conflicting_sample,
        });
    }

    // Keys whose latest event is older than the TTL at `as_of`.
    if let (Some(ttl), Some(time_type)) = (plan.ttl_seconds, type_of(&plan.event_time)) {
        let has_keys = plan.keys.iter().all(|k| type_of(k).is_some());
        if is_timestamp(time_type) && has_keys {
            let cutoff = plan.as_of_nanos.div_euclid(1_000).saturating_sub(
                i64::try_from(ttl)
                    .unwrap_or(i64::MAX)
                    .saturating_mul(1_000_000),
            );
            let keys: Vec<String> = plan.keys.iter().map(|k| ident(k)).collect();
            let latest = format!(
                "SELECT {}max({}) AS latest_event FROM {TABLE}{}",
                keys.iter().map(|k| format!("{k}, ")).collect::<String>(),
                utc_micros(&ident(&plan.event_time)),
                if keys.is_empty() {
                    String::new()
                } else {
                    format!(" GROUP BY {}", keys.join(", "))
                }
            );
            let stale = format!("latest_event < {}", micros_literal(cutoff));
            let row = one_row(
                &ctx,
                &format!("SELECT count(*), count(*) FILTER (WHERE {stale}) FROM ({latest})"),
            )
            .await?;
            let sample = if row[1] == 0 || keys.is_empty() {
                Vec::new()
            } else {
                let query = format!(
                    "SELECT {}, latest_event FROM ({latest}) WHERE {stale} LIMIT {}",
                    keys.join(", "),
                    plan.sample_rows
                );
                render_rows(&ctx, &query, "").await?
            };
            counts.keys = Some(row[0]);
            counts.stale_keys = Some(Matched {
                rows: row[1],
                sample,
            });
        }
    }
    Ok(counts)
}

/// The SQL condition of `predicate` on `column`, `None` when the column is missing or
/// the predicate does not apply to its type (the type check reports that).
fn condition<'a>(
    plan: &DataPlan,
    column: &str,
    predicate: &Predicate,
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
) -> Option<String> {
    let data_type = type_of(column)?;
    let c = ident(column);
    let float = matches!(
        data_type,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    );
    let number = float || data_type.is_integer();
    Some(match predicate {
        Predicate::Null => format!("{c} IS NULL"),
        Predicate::NaN if float => format!("isnan({c})"),
        // NaN sorts above every number (and -NaN below) in Arrow's comparisons.
        Predicate::PositiveInfinity if float => {
            format!("{c} > 1.7976931348623157e308 AND NOT isnan({c})")
        }
        Predicate::NegativeInfinity if float => {
            format!("{c} < -1.7976931348623157e308 AND NOT isnan({c})")
        }
        Predicate::Below(min) if number => {
            format!("{c} < {}{}", number_literal(min), not_nan(float, &c))
        }
        Predicate::Above(max) if number => {
            format!("{c} > {}{}", number_literal(max), not_nan(float, &c))
        }
        Predicate::NotAllowed(values) => {
            let text = matches!(
                data_type,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) || matches!(data_type, DataType::Dictionary(_, v) if v.is_string());
            let literals: Vec<String> = values
                .iter()
                .filter_map(|v| match v {
                    AllowedValue::Text(s) if text => Some(string_literal(s)),
                    AllowedValue::Number(n) if number => Some(number_literal(n)),
                    AllowedValue::Bool(b) if *data_type == DataType::Boolean => Some(b.to_string()),
                    _ => None,
                })
                .collect();
            if !(text || number || *data_type == DataType::Boolean) {
                return None;
            }
            if literals.is_empty() {
                format!("{c} IS NOT NULL")
            } else {
                format!("{c} IS NOT NULL AND {c} NOT IN ({})", literals.join(", "))
            }
        }
        Predicate::AfterAsOf if is_timestamp(data_type) => format!(
            "{} > {}",
            utc_micros(&c),
            micros_literal(plan.as_of_nanos.div_euclid(1_000))
        ),
        Predicate::CreatedBeforeEvent => {
            let event = type_of(&plan.event_time)?;
            if !is_timestamp(data_type) || !is_timestamp(event) {
                return None;
            }
            format!(
                "{} < {}",
                utc_micros(&c),
                utc_micros(&ident(&plan.event_time))
            )
        }
        _ => return None,
    })
}

fn not_nan(float: bool, c: &str) -> String {
    if float {
        format!(" AND NOT isnan({c})")
    } else {
        String::new()
    }
}

fn is_timestamp(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Timestamp(_, _))
}

/// A timestamp column as microseconds in UTC (naive times read as UTC, as Feast does).
fn utc_micros(c: &str) -> String {
    format!("arrow_cast({c}, 'Timestamp(µs, \"UTC\")')")
}

fn micros_literal(micros: i64) -> String {
    format!("arrow_cast(arrow_cast({micros}, 'Int64'), 'Timestamp(µs, \"UTC\")')")
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn string_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn number_literal(n: &ExactNumber) -> String {
    match n {
        ExactNumber::Int { negative, digits } => {
            let text = format!("{}{digits}", if *negative { "-" } else { "" });
            match text.parse::<i64>() {
                Ok(_) => text,
                // Beyond Int64: compared as a double (no integer column holds it).
                Err(_) => format!("CAST('{text}' AS DOUBLE)"),
            }
        }
        ExactNumber::Float(f) if f.is_finite() => format!("{f:e}"),
        ExactNumber::Float(f) if *f > 0.0 => "1.7976931348623157e308".into(),
        ExactNumber::Float(_) => "-1.7976931348623157e308".into(),
    }
}

/// The integers of a one-row result.
async fn one_row(ctx: &SessionContext, sql: &str) -> Result<Vec<u64>, String> {
    let batches = collect(ctx, sql).await?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .ok_or_else(|| "the count query returned no row".to_string())?;
    batch
        .columns()
        .iter()
        .map(|column| {
            let column = datafusion::arrow::compute::cast(column, &DataType::Int64)
                .map_err(|e| e.to_string())?;
            let values = column
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| "a count is not an integer".to_string())?;
            Ok(u64::try_from(values.value(0)).unwrap_or(0))
        })
        .collect()
}

async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let run = async { ctx.sql(sql).await?.collect().await };
    run.await.map_err(|e| files::error_message(&e))
}

/// Up to `plan.sample_rows` rows matching `condition`: the keys, the event time and the
/// column, each value escaped and cut.
async fn sample<'a>(
    ctx: &SessionContext,
    plan: &DataPlan,
    condition: Option<&String>,
    matched: u64,
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
) -> Result<Vec<String>, String> {
    if matched == 0 || plan.sample_rows == 0 {
        return Ok(Vec::new());
    }
    let Some(condition) = condition else {
        return Ok(Vec::new());
    };
    // The keys and the event time, as far as the data has them, then every column the
    // condition names (at the end of the list: each shown once).
    let mut shown: Vec<String> = plan
        .keys
        .iter()
        .chain([&plan.event_time])
        .filter(|c| type_of(c).is_some())
        .cloned()
        .collect();
    for column in plan.columns.iter().map(|c| &c.name) {
        if condition.contains(&ident(column)) && !shown.contains(column) {
            shown.push(column.clone());
        }
    }
    let query = format!(
        "SELECT {} FROM {TABLE} WHERE {condition} LIMIT {}",
        shown
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", "),
        plan.sample_rows
    );
    render_rows(ctx, &query, "").await
}

/// The rows of `query`, each as `name=value, ...` (values escaped and cut); a last column
/// named `arrowfeat_rows` is shown as "(N `unit`)".
async fn render_rows(ctx: &SessionContext, query: &str, unit: &str) -> Result<Vec<String>, String> {
    let batches = collect(ctx, query).await?;
    let options = FormatOptions::default().with_null("null");
    let mut out = Vec::new();
    for batch in &batches {
        let schema = batch.schema();
        let formatters: Vec<ArrayFormatter> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        for row in 0..batch.num_rows() {
            let mut parts = Vec::new();
            let mut count = None;
            for (field, formatter) in schema.fields().iter().zip(&formatters) {
                let value = formatter.value(row).to_string();
                if field.name() == "arrowfeat_rows" {
                    count = Some(value);
                } else {
                    parts.push(format!(
                        "{}={}",
                        quote(field.name(), 60),
                        quote(&value, SAMPLE_VALUE_CHARS)
                    ));
                }
            }
            let mut text = parts.join(", ");
            if let Some(count) = count {
                text.push_str(&format!(" ({count} {unit})"));
            }
            out.push(text);
        }
    }
    Ok(out)
}

/// The schema vocabulary's type of an Arrow column type, `None` when it has none.
pub fn feature_type(data_type: &DataType) -> Option<FeatureType> {
    Some(match data_type {
        DataType::Int32 => FeatureType::Int32,
        DataType::Int64 => FeatureType::Int64,
        DataType::Float32 => FeatureType::Float32,
        DataType::Float64 => FeatureType::Float64,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => FeatureType::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => FeatureType::Bytes,
        DataType::Boolean => FeatureType::Bool,
        DataType::Timestamp(unit, tz) => FeatureType::Timestamp {
            unit: match unit {
                ArrowUnit::Second => TimeUnit::Second,
                ArrowUnit::Millisecond => TimeUnit::Millisecond,
                ArrowUnit::Microsecond => TimeUnit::Microsecond,
                ArrowUnit::Nanosecond => TimeUnit::Nanosecond,
            },
            tz: tz.as_ref().map(|tz| tz.to_string()),
        },
        DataType::List(item) | DataType::LargeList(item) | DataType::ListView(item) => {
            FeatureType::List(Box::new(feature_type(item.data_type())?))
        }
        DataType::FixedSizeList(item, dim) => match item.data_type() {
            DataType::Float32 | DataType::Float64 => FeatureType::Embedding {
                dim: u32::try_from(*dim).ok()?,
                element: Box::new(feature_type(item.data_type())?),
            },
            other => FeatureType::List(Box::new(feature_type(other)?)),
        },
        DataType::Dictionary(_, values) => return feature_type(values),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
