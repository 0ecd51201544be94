//! The data gate: a feature view's data checked against its schema file.
//!
//! The validator says what to count ([`arrowfeat_validator::checks::data::plan`]) and
//! what the counts mean ([`arrowfeat_validator::checks::data::findings`]); this crate
//! reads the data with arrowfeat's file reading (the same checks as `arrowfeat sql`) and
//! counts in DataFusion SQL: one scan for every value check, one query each for
//! duplicates and stale keys, and a bounded sample of rows for each finding.

use std::collections::BTreeMap;

pub mod drift;
pub mod part;
pub mod skew;

use arrowfeat_common::quote;
use arrowfeat_udf::sql::files;
use arrowfeat_validator::checks::data::{
    findings, plan, AllowedValue, DataColumn, DataCounts, DataOptions, DataPlan, Predicate,
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
/// Result columns of our own: names no schema identifier can take (they hold `#`).
const ROWS: &str = "\"#rows\"";
const ROWS_NAME: &str = "#rows";
const LATEST: &str = "\"#latest event\"";

/// The data of one view: files, or a table in memory (from Python).
#[derive(Debug, Clone)]
pub enum Data {
    /// A file or directory, read with arrowfeat's file reading.
    Path(String),
    /// Record batches, named in findings by `label` (the caller's argument).
    Table {
        label: String,
        schema: datafusion::arrow::datatypes::SchemaRef,
        batches: Vec<RecordBatch>,
    },
    /// Counted already, in parts (the partitions of a Spark DataFrame, each counted by
    /// [`count_part`] where it lives), for each schema file declaring the view (by the
    /// file's label); merged here.
    Counted {
        label: String,
        parts: Vec<(String, Vec<part::PartCounts>)>,
    },
    /// Summarized already for drift, in parts, for each schema file declaring the view;
    /// `schema`: the data's columns (the parts summarize the features it can compare).
    Summarized {
        label: String,
        schema: datafusion::arrow::datatypes::SchemaRef,
        parts: Vec<(String, Vec<drift::SummaryPart>)>,
    },
}

impl Data {
    /// Data counted or summarized elsewhere: only the parts done with `file`'s checks.
    pub fn for_file(self, file: &SchemaFile) -> Data {
        fn of<T>(parts: Vec<(String, Vec<T>)>, file: &SchemaFile) -> Vec<(String, Vec<T>)> {
            let kept = parts
                .into_iter()
                .filter(|(schema, _)| *schema == file.path)
                .flat_map(|(_, parts)| parts)
                .collect();
            vec![(file.path.clone(), kept)]
        }
        match self {
            Data::Counted { label, parts } => Data::Counted {
                label,
                parts: of(parts, file),
            },
            Data::Summarized {
                label,
                schema,
                parts,
            } => Data::Summarized {
                label,
                schema,
                parts: of(parts, file),
            },
            data => data,
        }
    }

    /// How findings name it.
    pub fn label(&self) -> &str {
        match self {
            Data::Path(path) => path,
            Data::Table { label, .. }
            | Data::Counted { label, .. }
            | Data::Summarized { label, .. } => label,
        }
    }
}

/// Data given per view name, or one source for the one view the schemas declare.
#[derive(Debug)]
pub struct ByView {
    by_view: BTreeMap<String, Data>,
    any_view: Option<Data>,
    /// The views asked for so far.
    used: std::sync::Mutex<Vec<String>>,
}

impl ByView {
    /// `(view, data)` pairs; a pair without a view applies to every view (when the
    /// schemas declare one view).
    pub fn new(data: Vec<(Option<String>, Data)>) -> ByView {
        let mut by_view = BTreeMap::new();
        let mut any_view = None;
        for (view, data) in data {
            match view {
                Some(view) => {
                    by_view.insert(view, data);
                }
                None => any_view = Some(data),
            }
        }
        ByView {
            by_view,
            any_view,
            used: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_view.is_empty() && self.any_view.is_none()
    }

    /// The data of `view`, `Ok(None)` when none is given for it; a finding when the one
    /// source given without a view is asked for a second view (`flag` names the option).
    pub fn get(&self, view: &str, flag: &str) -> Result<Option<Data>, Box<Check>> {
        let from_any = !self.by_view.contains_key(view) && self.any_view.is_some();
        let Some(data) = self.by_view.get(view).or(self.any_view.as_ref()) else {
            return Ok(None);
        };
        let others: Vec<String> = {
            let mut used = self
                .used
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if !used.iter().any(|v| v == view) {
                used.push(view.to_string());
            }
            used.iter().filter(|v| *v != view).cloned().collect()
        };
        if from_any && !others.is_empty() {
            let path = data.label();
            // One path for several views: which view's data it is cannot be guessed.
            return Err(Box::new(Check::fail(
                Rule::DataUnreadable,
                format!("data {}", quote(path, 200)),
                Expected("the data of one view"),
                Actual("several views"),
                arrowfeat_validator::yaml::Pos::UNKNOWN,
                format!(
                    "{flag} {} is given without a view, but the schemas declare several views (`{}` and `{}`): give {flag} VIEW=PATH",
                    quote(path, 200),
                    quote(&others[0], 100),
                    quote(view, 100)
                ),
            )));
        }
        Ok(Some(data.clone()))
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

    /// The sources, for a report's "against" line.
    pub fn labels(&self) -> Vec<String> {
        self.by_view
            .values()
            .chain(&self.any_view)
            .map(|d| quote(d.label(), 200))
            .collect()
    }
}

/// The data of feature views, by view name (or one source for every view), checked with
/// DataFusion.
#[derive(Debug)]
pub struct DataPaths {
    data: ByView,
    /// Views without a path read their store's batch source, relative paths from this
    /// directory (the feature repo).
    from_store: Option<std::path::PathBuf>,
    options: DataOptions,
}

impl DataPaths {
    /// `paths`: (view, path) pairs; a pair without a view applies to every view (when the
    /// schemas declare one view).
    pub fn new(paths: Vec<(Option<String>, String)>, options: DataOptions) -> DataPaths {
        Self::of(
            paths
                .into_iter()
                .map(|(view, path)| (view, Data::Path(path)))
                .collect(),
            options,
        )
    }

    /// [`DataPaths::new`] with data of any kind.
    pub fn of(data: Vec<(Option<String>, Data)>, options: DataOptions) -> DataPaths {
        DataPaths {
            data: ByView::new(data),
            from_store: None,
            options,
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
        self.data.unused_views()
    }
}

impl DataSource for DataPaths {
    fn check(
        &self,
        file: &SchemaFile,
        store: Option<&StoreView>,
        _config: &arrowfeat_validator::config::Config,
    ) -> Option<Vec<Check>> {
        let view = &file.spec.name;
        let from_store = || -> Option<String> {
            let repo = self.from_store.as_ref()?;
            let uri = store?.batch_source_path.as_deref()?;
            let local = uri.strip_prefix("file://").unwrap_or(uri);
            if uri.contains("://") && !uri.starts_with("file://") {
                return Some(uri.to_string()); // read as given: the reader says it cannot
            }
            if local.is_empty() {
                return Some(String::new()); // refused below: never the repo itself
            }
            let path = std::path::Path::new(local);
            Some(match path.is_absolute() {
                true => local.to_string(),
                false => repo.join(path).to_string_lossy().into_owned(),
            })
        };
        let data = match self.data.get(view, "--data") {
            Ok(Some(data)) => data,
            Ok(None) => Data::Path(from_store()?),
            Err(refused) => return Some(vec![*refused]),
        };
        if matches!(&data, Data::Path(path) if path.is_empty()) {
            return Some(vec![Check::fail(
                Rule::DataUnreadable,
                "data of the store's batch source",
                Expected("a path"),
                Actual("an empty path"),
                arrowfeat_validator::yaml::Pos::UNKNOWN,
                format!(
                    "the store's batch source of view `{}` has an empty path: give --data {}=PATH",
                    quote(view, 100),
                    quote(view, 100)
                ),
            )]);
        }
        let data = data.for_file(file);
        let path = data.label();
        let plan = plan(file, path, &self.options);
        let counted = run_blocking(count(&plan, &data)).and_then(|counted| counted);
        Some(match counted {
            Ok(counts) => findings(&plan, &counts),
            Err(message) => vec![unreadable(path, message)],
        })
    }

    fn label(&self) -> String {
        let mut paths = self.data.labels();
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

/// [`count_part`] of `file`'s view over `data` (a partition, on a Spark worker), from
/// synchronous code: the part's counts as text for the driver to merge
/// ([`Data::Counted`]). Runs on the calling thread only (the host owns parallelism).
pub fn count_part_of(
    file: &SchemaFile,
    data: &Data,
    options: &DataOptions,
) -> Result<part::PartCounts, String> {
    let plan = plan(file, data.label(), options);
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime that reads the data: {e}"))?;
    current_thread.block_on(count_part(&plan, data))
}

/// The finding of data that cannot be read.
fn unreadable(path: &str, message: String) -> Check {
    Check::fail(
        Rule::DataUnreadable,
        format!("data {}", quote(path, 200)),
        Expected("data that can be read"),
        Actual("unreadable"),
        arrowfeat_validator::yaml::Pos::UNKNOWN,
        message,
    )
}

/// `future` to completion from synchronous code, inside a Tokio runtime (the CLI's) or
/// not (Python's).
fn run_blocking<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(tokio::task::block_in_place(|| handle.block_on(future))),
        Err(_) => Ok(tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime that reads the data: {e}"))?
            .block_on(future)),
    }
}

/// A session with `data` registered as [`TABLE`], and its schema.
async fn register(
    data: &Data,
) -> Result<(SessionContext, datafusion::arrow::datatypes::SchemaRef), String> {
    let ctx = files::session().map_err(|e| files::error_message(&e))?;
    let table: std::sync::Arc<dyn datafusion::catalog::TableProvider> = match data {
        Data::Path(path) => {
            let what = format!("'{}'", quote(path, 200));
            files::open_path(&ctx.state(), &what, path)
                .await
                .map_err(|e| e.message)?
        }
        Data::Table {
            schema, batches, ..
        } => std::sync::Arc::new(
            datafusion::datasource::MemTable::try_new(schema.clone(), vec![batches.clone()])
                .map_err(|e| files::error_message(&e))?,
        ),
        Data::Counted { .. } | Data::Summarized { .. } => {
            return Err("data counted elsewhere is not read again".into())
        }
    };
    let schema = table.schema();
    ctx.register_table(TABLE, table)
        .map_err(|e| files::error_message(&e))?;
    Ok((ctx, schema))
}

/// The counts `plan` asks for, over `data`.
pub async fn count(plan: &DataPlan, data: &Data) -> Result<DataCounts, String> {
    let counted = match data {
        Data::Counted { parts, .. } => part::PartCounts::merge_all(
            parts.iter().flat_map(|(_, parts)| parts).cloned(),
            plan.sample_rows,
        )?
        .ok_or_else(|| "no part of the data was counted with this schema file".to_string())?,
        _ => count_part(plan, data).await?,
    };
    Ok(counted.finish())
}

/// The counts `plan` asks for over `data`, to merge with other parts' counts
/// ([`part::PartCounts::merge`]): each sample holds the first rows in one total order.
pub async fn count_part(plan: &DataPlan, data: &Data) -> Result<part::PartCounts, String> {
    let (ctx, schema) = register(data).await?;
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
    let mut counts = part::PartCounts {
        columns,
        keyless: plan.keys.is_empty(),
        ..part::PartCounts::default()
    };

    // Every value check in one scan.
    let conditions: Vec<Option<String>> = plan
        .checks
        .iter()
        .map(|check| condition(plan, &check.column, &check.predicate, &type_of))
        .collect();
    let checked: Vec<(usize, &String)> = conditions
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
        .collect();
    let (rows, mut matched) = scan_checks(&ctx, plan, &checked, &type_of).await?;
    counts.rows = rows;
    counts.checks = conditions
        .iter()
        .enumerate()
        .map(|(i, c)| c.as_ref().map(|_| matched.remove(&i).unwrap_or_default()))
        .collect();

    // Duplicates over the declared columns the data has, when it has the keys and time.
    let keys_and_time: Vec<&str> = plan
        .keys
        .iter()
        .map(String::as_str)
        .chain([plan.event_time.as_str()])
        .collect();
    if keys_and_time.iter().all(|c| type_of(c).is_some()) {
        // Every NaN is one value here (a sign or payload bit changes no feature).
        let declared: Vec<String> = plan
            .columns
            .iter()
            .filter_map(|c| type_of(&c.name).map(|t| (c, t)))
            .map(|(c, t)| {
                let (expr, t) = value_expr(&c.name, t);
                match is_float(t) {
                    true => format!(
                        "CASE WHEN isnan({expr}) THEN CAST('NaN' AS DOUBLE) ELSE {expr} END AS {}",
                        ident(&c.name)
                    ),
                    false => format!("{expr} AS {}", ident(&c.name)),
                }
            })
            .collect();
        let columns: Vec<String> = plan
            .columns
            .iter()
            .filter(|c| type_of(&c.name).is_some())
            .map(|c| ident(&c.name))
            .collect();
        let keys: Vec<String> = keys_and_time.iter().map(|c| ident(c)).collect();
        let normalized = format!("SELECT {} FROM {TABLE}", declared.join(", "));
        let distinct = format!("SELECT DISTINCT * FROM ({normalized})");
        let distinct_rows = one_row(&ctx, &format!("SELECT count(*) FROM ({distinct})")).await?[0];
        let exact = counts.rows.saturating_sub(distinct_rows);
        let exact_sample = if exact == 0 {
            Vec::new()
        } else {
            let query = format!(
                "SELECT {}, count(*) AS {ROWS} FROM ({normalized}) GROUP BY {} HAVING count(*) > 1 ORDER BY {} LIMIT {}",
                keys.join(", "),
                columns.join(", "),
                ascending(&with_types(&keys_and_time, &type_of, ROWS)),
                plan.sample_rows
            );
            render_rows(&ctx, &query, "rows").await?
        };
        counts.exact_duplicates = Some(part::PartMatched {
            rows: exact,
            sample: exact_sample,
        });
        let conflicting_groups = format!(
            "SELECT {keys}, count(*) AS {ROWS} FROM ({distinct}) GROUP BY {keys} HAVING count(*) > 1",
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
            let query = format!(
                "{conflicting_groups} ORDER BY {} LIMIT {}",
                ascending(&with_types(&keys_and_time, &type_of, ROWS)),
                plan.sample_rows
            );
            render_rows(&ctx, &query, "versions").await?
        };
        counts.conflicting = Some(part::PartMatched {
            rows: conflicting,
            sample: conflicting_sample,
        });
    }

    // Keys whose latest event is older than the TTL at `as_of`.
    if let (Some(ttl), Some(time_type)) = (plan.ttl_seconds, type_of(&plan.event_time)) {
        let has_keys = plan.keys.iter().all(|k| type_of(k).is_some());
        let (time, time_type) = value_expr(&plan.event_time, time_type);
        if let (DataType::Timestamp(unit, _), true) = (time_type, has_keys) {
            let cutoff = i128::from(plan.as_of_nanos) - i128::from(ttl) * 1_000_000_000;
            let keys: Vec<String> = plan.keys.iter().map(|k| ident(k)).collect();
            let latest = format!(
                "SELECT {}max({time}) AS {LATEST} FROM {TABLE}{}",
                keys.iter().map(|k| format!("{k}, ")).collect::<String>(),
                if keys.is_empty() {
                    String::new()
                } else {
                    format!(" GROUP BY {}", keys.join(", "))
                }
            );
            // In the column's unit (no cast of the column can overflow); a time within the
            // cutoff's own unit step is not older than it (the cutoff is rounded up).
            let stale = format!(
                "{LATEST} < {}",
                time_literal(ceil_in_unit(cutoff, *unit), time_type)
            );
            let row = one_row(
                &ctx,
                &format!(
                    "SELECT count(*), count(*) FILTER (WHERE {stale}), count({LATEST}) FROM ({latest})"
                ),
            )
            .await?;
            let key_names: Vec<&str> = plan.keys.iter().map(String::as_str).collect();
            counts.has_latest = row[2] > 0;
            let sample = if row[1] == 0 || keys.is_empty() {
                Vec::new()
            } else {
                let query = format!(
                    "SELECT {}, {LATEST} FROM ({latest}) WHERE {stale} ORDER BY {} LIMIT {}",
                    keys.join(", "),
                    ascending(&with_types(&key_names, &type_of, LATEST)),
                    plan.sample_rows
                );
                render_rows(&ctx, &query, "").await?
            };
            counts.keys = Some(row[0]);
            counts.stale_keys = Some(part::PartMatched {
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
    let (c, data_type) = value_expr(column, type_of(column)?);
    let c = c.as_str();
    let float = is_float(data_type);
    let number = float || data_type.is_integer();
    // A bound on a float32 column is the float32 value nearest it, as a float32 value
    // written 0.1 is (compared as float64, 0.1f32 is above 0.1).
    let bound = |n: &ExactNumber| match data_type {
        DataType::Float32 | DataType::Float16 => float32_literal(n),
        _ => number_literal(n),
    };
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
            format!("{c} < {}{}", bound(min), not_nan(float, c))
        }
        Predicate::Above(max) if number => {
            format!("{c} > {}{}", bound(max), not_nan(float, c))
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
                    AllowedValue::Number(n) if number => Some(bound(n)),
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
        // In the column's own type and unit: no cast of the column can overflow.
        Predicate::AfterAsOf => match data_type {
            DataType::Timestamp(unit, _) => format!(
                "{c} > {}",
                time_literal(
                    floor_in_unit(i128::from(plan.as_of_nanos), *unit),
                    data_type
                )
            ),
            _ => return None,
        },
        Predicate::CreatedBeforeEvent => {
            let (event, event_type) = value_expr(&plan.event_time, type_of(&plan.event_time)?);
            if !is_timestamp(data_type) || !is_timestamp(event_type) {
                return None;
            }
            match data_type == event_type {
                true => format!("{c} < {event}"),
                // Other units or zones: both as microseconds in UTC.
                false => format!("{} < {}", utc_micros(c), utc_micros(&event)),
            }
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

fn is_float(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

/// The SQL of a column and the type its values have: a dictionary column is read as its
/// values (pandas `category`, Parquet dictionary pages kept as such).
fn value_expr<'a>(column: &str, data_type: &'a DataType) -> (String, &'a DataType) {
    match data_type {
        DataType::Dictionary(_, values) => (
            format!("arrow_cast({}, '{}')", ident(column), values),
            values.as_ref(),
        ),
        _ => (ident(column), data_type),
    }
}

/// `nanos` (since the epoch) in `unit`, rounded down / up.
fn floor_in_unit(nanos: i128, unit: ArrowUnit) -> i128 {
    nanos.div_euclid(unit_nanos(unit))
}

fn ceil_in_unit(nanos: i128, unit: ArrowUnit) -> i128 {
    -(-nanos).div_euclid(unit_nanos(unit))
}

fn unit_nanos(unit: ArrowUnit) -> i128 {
    match unit {
        ArrowUnit::Second => 1_000_000_000,
        ArrowUnit::Millisecond => 1_000_000,
        ArrowUnit::Microsecond => 1_000,
        ArrowUnit::Nanosecond => 1,
    }
}

/// A literal of the timestamp type `data_type` holding `value` in its unit, clamped to
/// the type's range (a bound beyond it compares as the type's extreme).
fn time_literal(value: i128, data_type: &DataType) -> String {
    let value = value.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    format!("arrow_cast(arrow_cast({value}, 'Int64'), '{data_type}')")
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn string_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `n` rounded to the nearest float32, as a float64 literal.
fn float32_literal(n: &ExactNumber) -> String {
    let value = match n {
        ExactNumber::Float(f) => *f,
        ExactNumber::Int { negative, digits } => {
            let magnitude: f64 = digits.parse().unwrap_or(f64::INFINITY);
            if *negative {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    // The nearest float32 (beyond its range: infinity, which no finite value passes).
    number_literal(&ExactNumber::Float(f64::from(value as f32)))
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

/// The columns shown for a row matching `condition`: the keys and the event time, as far
/// as the data has them, then every column the condition names (each once).
fn shown_columns<'a>(
    plan: &DataPlan,
    condition: &str,
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
) -> Vec<String> {
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
    shown
}

/// The rows of the data, and for each of `conditions` (their index among the plan's
/// checks, and the condition) the rows matching it with up to `plan.sample_rows` of them,
/// each value escaped and cut: the first rows in [`ascending`]'s order over the columns
/// shown, as `ORDER BY ... LIMIT` would give. One scan for every condition: each batch's
/// conditions are counted, and its matching rows go through a bounded selection (memory
/// stays at the sample size, however many rows match).
async fn scan_checks<'a>(
    ctx: &SessionContext,
    plan: &DataPlan,
    conditions: &[(usize, &String)],
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
) -> Result<(u64, BTreeMap<usize, part::PartMatched>), String> {
    use datafusion::arrow::array::{BooleanArray, UInt32Array};
    use datafusion::arrow::compute::{filter_record_batch, take_record_batch};
    use futures::StreamExt;
    let limit = plan.sample_rows;
    let mut out: BTreeMap<usize, part::PartMatched> = conditions
        .iter()
        .map(|(i, _)| (*i, part::PartMatched::default()))
        .collect();
    if conditions.is_empty() {
        let rows = one_row(ctx, &format!("SELECT count(*) FROM {TABLE}")).await?[0];
        return Ok((rows, out));
    }
    let shown: Vec<Vec<String>> = conditions
        .iter()
        .map(|(_, c)| shown_columns(plan, c, type_of))
        .collect();
    let mut union: Vec<&String> = Vec::new();
    for column in shown.iter().flatten() {
        if !union.contains(&column) {
            union.push(column);
        }
    }
    let flag = |i: usize| format!("#check {i}");
    let query = format!(
        "SELECT {} FROM {TABLE}",
        union
            .iter()
            .map(|c| ident(c))
            .chain(
                conditions
                    .iter()
                    .map(|(i, c)| format!("({c}) AS {}", ident(&flag(*i))))
            )
            .collect::<Vec<_>>()
            .join(", "),
    );
    let mut rows_seen: u64 = 0;
    let mut stream = ctx
        .sql(&query)
        .await
        .map_err(|e| files::error_message(&e))?
        .execute_stream()
        .await
        .map_err(|e| files::error_message(&e))?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| files::error_message(&e))?;
        rows_seen += batch.num_rows() as u64;
        let schema = batch.schema();
        for ((i, _), columns) in conditions.iter().zip(&shown) {
            let Some(matches) = batch
                .column_by_name(&flag(*i))
                .and_then(|c| c.as_any().downcast_ref::<BooleanArray>())
            else {
                return Err("a sample query lost its condition".into());
            };
            // A null condition is not a match.
            let matches = match matches.nulls() {
                Some(nulls) => BooleanArray::new(matches.values() & nulls.inner(), None),
                None => matches.clone(),
            };
            let found = matches.true_count();
            let kept = out.entry(*i).or_default();
            kept.rows += found as u64;
            if found == 0 || limit == 0 {
                continue;
            }
            let indices = columns
                .iter()
                .map(|c| schema.index_of(c))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let rows = filter_record_batch(
                &batch.project(&indices).map_err(|e| e.to_string())?,
                &matches,
            )
            .map_err(|e| e.to_string())?;
            // The first rows of this batch in key order, then only those rendered.
            let keys = sort_keys(&rows)?;
            let mut order: Vec<u32> = (0..rows.num_rows() as u32).collect();
            order.sort_by(|a, b| keys.row(*a as usize).cmp(&keys.row(*b as usize)));
            order.truncate(limit);
            if kept.sample.len() == limit {
                // Nothing here comes before the last row kept: nothing to render.
                let first: String = keys
                    .row(order[0] as usize)
                    .as_ref()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                if kept.sample.last().is_some_and(|last| first >= last.key) {
                    continue;
                }
            }
            let first =
                take_record_batch(&rows, &UInt32Array::from(order)).map_err(|e| e.to_string())?;
            kept.sample.extend(render_batch(&first, "")?);
            kept.sample.sort_by(|a, b| a.key.cmp(&b.key));
            kept.sample.truncate(limit);
        }
    }
    Ok((rows_seen, out))
}

/// Characters of a text value that order a sample: a sampled value shows fewer
/// ([`SAMPLE_VALUE_CHARS`]), so rows equal in these look the same, and sort keys stay small.
const ORDER_CHARS: usize = 64;

/// The columns `names` (identifiers) with their types, then `last` (a result column).
fn with_types<'a>(
    names: &[&str],
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
    last: &str,
) -> Vec<(String, Option<&'a DataType>)> {
    names
        .iter()
        .map(|c| (ident(c), type_of(c)))
        .chain([(last.to_string(), None)])
        .collect()
}

fn is_text(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, value) => is_text(value),
        _ => false,
    }
}

/// `ORDER BY` over `columns` (identifiers and their types), in the order of
/// [`part::SampledRow::key`] (the Arrow row format's: ascending, nulls first, floats in
/// IEEE total order; text by its first [`ORDER_CHARS`] characters), so that a sample is
/// the first rows in one order however the data is split.
fn ascending(columns: &[(String, Option<&DataType>)]) -> String {
    columns
        .iter()
        .map(|(c, data_type)| match data_type.is_some_and(is_text) {
            true => format!("left({c}, {ORDER_CHARS}) ASC NULLS FIRST"),
            false => format!("{c} ASC NULLS FIRST"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A column as [`ascending`] orders it: text cut to [`ORDER_CHARS`] characters, as Utf8.
fn order_column(
    column: &datafusion::arrow::array::ArrayRef,
) -> Result<datafusion::arrow::array::ArrayRef, String> {
    use datafusion::arrow::array::StringArray;
    if !is_text(column.data_type()) {
        return Ok(column.clone());
    }
    let text =
        datafusion::arrow::compute::cast(column, &DataType::Utf8).map_err(|e| e.to_string())?;
    let text = text
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| "a text column is not text".to_string())?;
    datafusion::arrow::compute::kernels::substring::substring_by_char(
        text,
        0,
        Some(ORDER_CHARS as u64),
    )
    .map(|cut| std::sync::Arc::new(cut) as datafusion::arrow::array::ArrayRef)
    .map_err(|e| e.to_string())
}

/// The rows of `query`, each as `name=value, ...` (values escaped and cut) with its sort
/// key over every column; a last column named [`ROWS_NAME`] is shown as "(N `unit`)".
async fn render_rows(
    ctx: &SessionContext,
    query: &str,
    unit: &str,
) -> Result<Vec<part::SampledRow>, String> {
    let mut out = Vec::new();
    for batch in &collect(ctx, query).await? {
        out.extend(render_batch(batch, unit)?);
    }
    Ok(out)
}

/// Each row's sort key over every column of `batch` ([`ascending`]'s order).
fn sort_keys(batch: &RecordBatch) -> Result<datafusion::arrow::row::Rows, String> {
    use datafusion::arrow::compute::SortOptions;
    use datafusion::arrow::row::{RowConverter, SortField};
    let order = SortOptions {
        descending: false,
        nulls_first: true,
    };
    let ordered = batch
        .columns()
        .iter()
        .map(order_column)
        .collect::<Result<Vec<_>, _>>()?;
    let converter = RowConverter::new(
        ordered
            .iter()
            .map(|c| SortField::new_with_options(c.data_type().clone(), order))
            .collect(),
    )
    .map_err(|e| e.to_string())?;
    converter
        .convert_columns(&ordered)
        .map_err(|e| e.to_string())
}

/// The rows of `batch` as [`render_rows`] shows them.
fn render_batch(batch: &RecordBatch, unit: &str) -> Result<Vec<part::SampledRow>, String> {
    let options = FormatOptions::default().with_null("null");
    let schema = batch.schema();
    let keys = sort_keys(batch)?;
    let formatters: Vec<ArrayFormatter> = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let mut parts = Vec::new();
        let mut count = None;
        for (field, formatter) in schema.fields().iter().zip(&formatters) {
            let value = formatter.value(row).to_string();
            if field.name() == ROWS_NAME {
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
        let key = keys
            .row(row)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.push(part::SampledRow { key, text });
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
