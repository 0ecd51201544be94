//! The data gate: a feature view's data checked against its schema file.
//!
//! The validator says what to count ([`arrowfeat_validator::checks::data::plan`]) and
//! what the counts mean ([`arrowfeat_validator::checks::data::findings`]); this crate
//! reads the data with arrowfeat's file reading (the same checks as `arrowfeat sql`) and
//! counts in DataFusion SQL: one scan for every value check; for duplicates, the keys and
//! event times of two rows or more, then the whole rows of those only; for stale keys, one
//! aggregation. The results stream through a bounded sample of rows for each finding.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod canonical;
pub mod drift;
pub mod from_store;
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
use datafusion::arrow::array::{Array, BooleanArray, Int64Array, RecordBatch};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, TimeUnit as ArrowUnit};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use futures::StreamExt;

/// The name the data is registered under in its session.
const TABLE: &str = "data";
/// At most this many characters of a sampled value are shown.
const SAMPLE_VALUE_CHARS: usize = 60;
/// Result columns of our own: names no schema identifier can take (they hold `#`).
const ROWS_NAME: &str = "#rows";
const LATEST: &str = "\"#latest event\"";
const LATEST_NAME: &str = "#latest event";
const STALE: &str = "\"#stale\"";
const STALE_NAME: &str = "#stale";
const MULTIPLICITY: &str = "\"#multiplicity\"";
const COPIES: &str = "\"#copies\"";
const COPIES_NAME: &str = "#copies";
const VERSIONS: &str = "\"#versions\"";
const VERSIONS_NAME: &str = "#versions";
const SURPLUS: &str = "\"#surplus\"";
const SURPLUS_NAME: &str = "#surplus";
/// Table aliases of the duplicate search: no schema identifier can take them.
const CANDIDATE: &str = "\"#candidate\"";
const ROW: &str = "\"#row\"";

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
    /// Compared already for skew, in parts (buckets of entity keys of both tables, each
    /// compared by [`skew::compare_part_of`] where it lives), for each schema file
    /// declaring the view; given as the serving data, whose columns `schema` holds (the
    /// training data is then given as a table of its columns).
    Compared {
        label: String,
        schema: datafusion::arrow::datatypes::SchemaRef,
        parts: Vec<(String, Vec<skew::SkewPart>)>,
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
            Data::Compared {
                label,
                schema,
                parts,
            } => Data::Compared {
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
            | Data::Summarized { label, .. }
            | Data::Compared { label, .. } => label,
        }
    }
}

/// How findings name the inputs given per view: the CLI's flags (`--current VIEW=PATH`)
/// or the Python arguments (`current={"VIEW": data}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InputNames {
    #[default]
    Flags,
    Arguments,
}

impl InputNames {
    /// The input `flag` (`--current`) as these names spell it.
    pub fn given(self, flag: &'static str) -> Given {
        Given { flag, names: self }
    }
}

/// One input given per view (`--data`, `--current`, `--reference`, `--serving`,
/// `--training`), spelled as the front end the user called spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Given {
    flag: &'static str,
    names: InputNames,
}

impl Given {
    /// How to give `view` its data: `--current v=PATH` or `current={"v": data}`.
    pub fn for_view(self, view: &str) -> String {
        match self.names {
            InputNames::Flags => format!("{} {}=PATH", self.flag, quote(view, 100)),
            InputNames::Arguments => format!(
                "{}={{\"{}\": data}}",
                self.flag.trim_start_matches('-'),
                quote(view, 100)
            ),
        }
    }

    /// The usage error for data given for `view`, which no schema file declares.
    pub fn undeclared(self, view: &str) -> String {
        let lead = match self.names {
            InputNames::Flags => format!("{} {}=...", self.flag, quote(view, 100)),
            InputNames::Arguments => format!("argument {self}"),
        };
        undeclared_view(&lead, view)
    }
}

/// The finding of `view`, given no data while other views were given theirs by name
/// (`--data a=PATH` beside the schema files of `a` and `b`): nothing of it was `done`
/// ("checked"), and the run must not pass as if it had been. `give`: how to give it.
pub fn not_given(view: &str, done: &str, give: &str) -> Check {
    Check::fail(
        Rule::DataNotRead,
        format!("view `{}`", quote(view, 100)),
        Expected("data of the view"),
        Actual("none given"),
        arrowfeat_validator::yaml::Pos::UNKNOWN,
        format!(
            "view `{}` was given no data while other views were, so it was not {done}: give {give}, or leave its schema file out",
            quote(view, 100),
        ),
    )
}

/// `lead` (where the data was given) and why a run with data for `view` is refused.
fn undeclared_view(lead: &str, view: &str) -> String {
    format!(
        "{lead}: view `{}` is given data, but no schema file declares it",
        quote(view, 100)
    )
}

impl std::fmt::Display for Given {
    /// `--current`, or `` `current` ``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.names {
            InputNames::Flags => f.write_str(self.flag),
            InputNames::Arguments => write!(f, "`{}`", self.flag.trim_start_matches('-')),
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
    pub fn get(&self, view: &str, given: Given) -> Result<Option<Data>, Box<Check>> {
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
                    "{} is given without a view, but the schemas declare several views (`{}` and `{}`): give {}",
                    // A table in memory is named by its argument already.
                    match given.names {
                        InputNames::Flags => format!("{given} {}", quote(path, 200)),
                        InputNames::Arguments => given.to_string(),
                    },
                    quote(&others[0], 100),
                    quote(view, 100),
                    given.for_view("VIEW")
                ),
            )));
        }
        Ok(Some(data.clone()))
    }

    /// Whether views were given data by name (`--data a=PATH`), not one source for all.
    pub fn by_name(&self) -> bool {
        !self.by_view.is_empty() && self.any_view.is_none()
    }

    /// The first view given by name that no schema file asked for (after a run).
    pub fn unused_view(&self) -> Option<&str> {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        self.by_view
            .keys()
            .find(|view| !used.contains(view))
            .map(String::as_str)
    }

    /// [`Given::undeclared`] for the first view given by name that no schema file asked
    /// for (after a run).
    pub fn undeclared(&self, given: Given) -> Option<String> {
        self.unused_view().map(|view| given.undeclared(view))
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
    /// Views given no path read their store's batch source.
    from_store: Option<from_store::StoreSources>,
    options: DataOptions,
    /// Bytes the queries may hold before they spill to disk (`None`: no limit).
    memory_limit: Option<usize>,
    names: InputNames,
    /// The configuration file whose `[data]` gave the paths.
    from_config: Option<String>,
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
            memory_limit: None,
            names: InputNames::Flags,
            from_config: None,
        }
    }

    /// Findings name the inputs as `names` spells them (the CLI's by default).
    pub fn named(mut self, names: InputNames) -> DataPaths {
        self.names = names;
        self
    }

    /// The queries hold at most `bytes` in memory, spilling past it to temporary files
    /// (slower, but bounded: duplicate detection holds every distinct pair of entity keys
    /// and event time).
    pub fn with_memory_limit(mut self, bytes: Option<usize>) -> DataPaths {
        self.memory_limit = bytes;
        self
    }

    /// Views given no path read the file their store's batch source names (a Feast
    /// `FileSource`).
    pub fn with_store_sources(mut self, sources: from_store::StoreSources) -> DataPaths {
        self.from_store = Some(sources);
        self
    }

    /// The paths are the configuration's `[data]` (`config`: the file, as the user named
    /// it), not the command line's: refusals name that table.
    pub fn from_config(mut self, config: String) -> DataPaths {
        self.from_config = Some(config);
        self
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
        // The unreadable finding of data read from the store says where its path came from.
        let given = self.names.given("--data");
        let (data, hint) = match self.data.get(view, given) {
            Ok(Some(data)) => (data, String::new()),
            Ok(None) => match &self.from_store {
                Some(sources) => match sources.data_of(view, store, given, "data") {
                    Ok(data) => (data, sources.unreadable_hint(view, given)),
                    Err(finding) => return Some(vec![*finding]),
                },
                None => {
                    let give = match &self.from_config {
                        Some(config) => {
                            format!("`{}` = \"PATH\" under [data] in {config}", quote(view, 100))
                        }
                        None => given.for_view(view),
                    };
                    return self
                        .data
                        .by_name()
                        .then(|| vec![not_given(view, "checked", &give)]);
                }
            },
            Err(refused) => return Some(vec![*refused]),
        };
        let data = data.for_file(file);
        let path = data.label();
        let plan = plan(file, path, &self.options);
        let counted =
            run_blocking(count(&plan, &data, self.memory_limit)).and_then(|counted| counted);
        Some(match counted {
            Ok(counts) => findings(&plan, &counts),
            // The engine's words name its operators: say what to change instead.
            Err(message) if message.starts_with("Resources exhausted") => {
                let limit = self.memory_limit.unwrap_or(usize::MAX);
                vec![unreadable(
                    path,
                    format!(
                        "the checks need more memory than the limit of {} MiB allows, even spilling to disk: raise the memory limit",
                        limit >> 20
                    ),
                )]
            }
            Err(message) => vec![unreadable(path, message + &hint)],
        })
    }

    fn undeclared(&self) -> Option<String> {
        match &self.from_config {
            Some(config) => self.data.unused_view().map(|view| {
                undeclared_view(&format!("{config} [data] {}", quote(view, 100)), view)
            }),
            None => self.data.undeclared(self.names.given("--data")),
        }
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
    // A worker's memory is its host's to bound.
    reader_runtime()?.block_on(count_part(&plan, data, None))
}

/// `check --data`'s check of the column `name` (of `data_type`, in `source`) against the
/// `declared` feature type: a pass, a warning (compatible) or an error.
fn type_check(
    subject: String,
    source: &str,
    name: &str,
    data_type: &DataType,
    declared: &FeatureType,
    pos: arrowfeat_validator::yaml::Pos,
) -> Check {
    arrowfeat_validator::checks::data::column_type(
        subject,
        source,
        &arrowfeat_validator::checks::data::DataColumn {
            name: name.to_string(),
            read_as: feature_type(data_type),
            arrow: data_type.to_string(),
        },
        declared,
        pos,
    )
}

/// The `data-column-type` error of the column `name` (of `data_type`, in `source`) when
/// its values are of another kind than the `declared` feature type (text for a float, a
/// naive time for a zoned one), in `check --data`'s words: drift and skew refuse to
/// compare such a column converted. `None` when the kinds agree.
fn wrong_kind(
    subject: String,
    source: &str,
    name: &str,
    data_type: &DataType,
    declared: &FeatureType,
    pos: arrowfeat_validator::yaml::Pos,
) -> Option<Check> {
    let found = feature_type(data_type)?;
    (!arrowfeat_validator::types::same_kind(declared, &found))
        .then(|| type_check(subject, source, name, data_type, declared, pos))
}

/// The `data-column-type` error of a column whose type is neither the declared one nor
/// compatible with it, in `check --data`'s judgment (its warnings aside): for the keys
/// and times a join matches on, which it does not convert. A column of no values (a CSV
/// column of only its header) matches nothing and is not judged.
fn incompatible_type(
    subject: String,
    source: &str,
    name: &str,
    data_type: &DataType,
    declared: &FeatureType,
    pos: arrowfeat_validator::yaml::Pos,
) -> Option<Check> {
    if data_type.is_null() {
        return None;
    }
    let check = type_check(subject, source, name, data_type, declared, pos);
    (check.status == arrowfeat_validator::report::Status::Error).then_some(check)
}

/// The finding of data that cannot be read.
fn unreadable(path: &str, message: String) -> Check {
    // The Parquet reader's errors past the footer (a corrupt page) name no file.
    let message = match message.strip_prefix(files::PARQUET_UNREADABLE) {
        Some(detail) if Path::new(path).is_file() => format!(
            "cannot read the Parquet file '{}': {detail}",
            quote(path, 200)
        ),
        Some(detail) if Path::new(path).is_dir() => format!(
            "cannot read a Parquet file of '{}': {detail}{}",
            quote(path, 200),
            files::unreadable_file_note(&[PathBuf::from(path)])
        ),
        _ => message,
    };
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
/// not (Python's). A panic while reading is the reader failing on a corrupt file (the
/// Parquet crate panics on some instead of failing): an error of this view's data, so
/// that the other views are still checked.
fn run_blocking<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    let run = std::panic::AssertUnwindSafe(|| match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(tokio::task::block_in_place(|| handle.block_on(future))),
        Err(_) => Ok(reader_runtime()?.block_on(future)),
    });
    std::panic::catch_unwind(run).unwrap_or_else(|_| Err(READER_FAILED.to_string()))
}

/// A runtime on the calling thread, to read data from synchronous code.
pub(crate) fn reader_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime that reads the data: {e}"))
}

/// What a reader's panic is to the user.
const READER_FAILED: &str =
    "the file reader failed on it (an internal error of the reader; the file is most likely corrupt)";

/// The units and zones `columns` declare for their times, at which the times of CSV and
/// JSON files (text, without either) are read, and the columns declared as text, which
/// CSV files give as text whatever their values look like. The created time, whose type is not
/// declared, is read in the event time's zone (the two are compared) at the unit its text
/// gives.
fn declared_times(
    columns: &[arrowfeat_validator::checks::data::DeclaredColumn],
) -> files::TextTypes {
    use arrowfeat_validator::checks::data::Role;
    let event = columns
        .iter()
        .find(|c| c.role == Role::EventTime)
        .and_then(|c| c.declared.as_ref());
    files::TextTypes::new(
        columns
            .iter()
            .filter_map(|column| match (&column.declared, column.role) {
                (Some(declared), _) => declared_time(&column.name, declared),
                (None, Role::CreatedTime) => event
                    .and_then(|event| declared_time(&column.name, event))
                    .map(text_unit),
                (None, _) => None,
            })
            .collect(),
    )
    .with_text(
        columns
            .iter()
            .filter(|c| c.declared == Some(FeatureType::String))
            .map(|c| c.name.clone())
            .collect(),
    )
}

/// `time` at the unit the text gives (the coarsest asked for: a finer one in the text wins).
pub(crate) fn text_unit(time: files::DeclaredTime) -> files::DeclaredTime {
    files::DeclaredTime {
        unit: datafusion::arrow::datatypes::TimeUnit::Second,
        ..time
    }
}

/// How a text column `column` declared `declared` is read: `None` for a type that is no
/// time.
pub(crate) fn declared_time(column: &str, declared: &FeatureType) -> Option<files::DeclaredTime> {
    use arrowfeat_validator::types::{valid_time_zone, TimeUnit as Declared};
    use datafusion::arrow::datatypes::TimeUnit;
    let (unit, zone) = match declared {
        FeatureType::Timestamp { unit, tz } => (*unit, tz.as_deref()),
        FeatureType::Datetime64Ns => (Declared::Nanosecond, None),
        _ => return None,
    };
    // A zone no reader knows (the schema's finding names it) is not the data's fault:
    // its times are read in UTC, as Feast reads naive times, and compare as a Parquet
    // file's UTC times do.
    let zone = zone.map(|zone| if valid_time_zone(zone) { zone } else { "UTC" });
    Some(files::DeclaredTime {
        column: column.to_string(),
        unit: match unit {
            Declared::Second => TimeUnit::Second,
            Declared::Millisecond => TimeUnit::Millisecond,
            Declared::Microsecond => TimeUnit::Microsecond,
            Declared::Nanosecond => TimeUnit::Nanosecond,
        },
        zone: zone.map(std::sync::Arc::from),
    })
}

/// `data` registered as [`TABLE`], and its schema; the times of CSV and JSON files are
/// read at `times`.
async fn register(
    data: &Data,
    memory_limit: Option<usize>,
    times: &files::TextTypes,
) -> Result<(SessionContext, datafusion::arrow::datatypes::SchemaRef), String> {
    let ctx = files::session_within(memory_limit).map_err(|e| files::error_message(&e))?;
    ctx.register_udf(canonical::CanonicalFloats::udf());
    let table: std::sync::Arc<dyn datafusion::catalog::TableProvider> = match data {
        Data::Path(path) => {
            let what = format!("'{}'", quote(path, 200));
            files::open_path_in(&ctx.state(), &what, path, times)
                .await
                .map_err(|e| e.message)?
        }
        Data::Table {
            schema, batches, ..
        } => std::sync::Arc::new(
            datafusion::datasource::MemTable::try_new(schema.clone(), vec![batches.clone()])
                .map_err(|e| files::error_message(&e))?,
        ),
        Data::Counted { .. } | Data::Summarized { .. } | Data::Compared { .. } => {
            return Err("data counted elsewhere is not read again".into())
        }
    };
    let schema = table.schema();
    ctx.register_table(TABLE, table)
        .map_err(|e| files::error_message(&e))?;
    Ok((ctx, schema))
}

/// The counts `plan` asks for, over `data`.
/// `memory_limit`: bytes the queries may hold before they spill to disk (`None`: no limit).
pub async fn count(
    plan: &DataPlan,
    data: &Data,
    memory_limit: Option<usize>,
) -> Result<DataCounts, String> {
    let counted = match data {
        Data::Counted { parts, .. } => part::PartCounts::merge_all(
            parts.iter().flat_map(|(_, parts)| parts).cloned(),
            plan.sample_rows,
        )?
        .ok_or_else(|| "no part of the data was counted with this schema file".to_string())?,
        _ => count_part(plan, data, memory_limit).await?,
    };
    Ok(counted.finish())
}

/// The counts `plan` asks for over `data`, to merge with other parts' counts
/// ([`part::PartCounts::merge`]): each sample holds the first rows in one total order.
pub async fn count_part(
    plan: &DataPlan,
    data: &Data,
    memory_limit: Option<usize>,
) -> Result<part::PartCounts, String> {
    let (ctx, schema) = register(data, memory_limit, &declared_times(&plan.columns)).await?;
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
    let keys_and_time = plan.keys_and_time();
    if keys_and_time.iter().all(|c| type_of(c).is_some()) {
        // -0.0 is 0.0 and every NaN one value here, inside lists too (a sign or payload
        // bit changes no feature).
        let declared: Vec<String> = plan
            .columns
            .iter()
            .filter_map(|c| type_of(&c.name).map(|t| compared_column(&c.name, t)))
            .collect();
        let columns: Vec<String> = plan
            .columns
            .iter()
            .filter(|c| type_of(&c.name).is_some())
            .map(|c| ident(&c.name))
            .collect();
        let keys: Vec<String> = keys_and_time.iter().map(|c| ident(c)).collect();
        let normalized = format!("SELECT {} FROM {TABLE}", declared.join(", "));
        // One aggregation for both findings: the distinct rows with their multiplicity,
        // then per keys and time how many distinct rows (versions) and copies there are.
        // Only groups with a finding leave the engine; each is counted and offered to the
        // bounded samples as it streams.
        let distinct = match memory_limit {
            // Only keys and times of two rows or more can hold duplicates or conflicts:
            // they are found first (a hash table of keys and times, not of whole rows),
            // and only their rows are grouped whole. The candidates are the join's build
            // side (left), the data streams past them; nulls match nulls, as they group
            // together.
            None => {
                let candidates = format!(
                    "SELECT {keys} FROM ({normalized}) GROUP BY {keys} HAVING count(*) > 1",
                    keys = keys.join(", ")
                );
                let matched = keys
                    .iter()
                    .map(|k| format!("({CANDIDATE}.{k} IS NOT DISTINCT FROM {ROW}.{k})"))
                    .collect::<Vec<_>>()
                    .join(" AND ");
                format!(
                    "SELECT {keys}, count(*) AS {MULTIPLICITY} FROM ({candidates}) {CANDIDATE} \
                     JOIN ({normalized}) {ROW} ON {matched} GROUP BY {columns}",
                    keys = keys
                        .iter()
                        .map(|k| format!("{ROW}.{k} AS {k}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    columns = columns
                        .iter()
                        .map(|c| format!("{ROW}.{c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            // Under a memory limit every row is grouped whole: aggregations spill, a
            // join's build side cannot.
            Some(_) => format!(
                "SELECT {keys}, count(*) AS {MULTIPLICITY} FROM ({normalized}) GROUP BY {columns}",
                keys = keys.join(", "),
                columns = columns.join(", ")
            ),
        };
        let query = format!(
            "SELECT {keys}, count(*) AS {VERSIONS}, sum({MULTIPLICITY}) - count(*) AS {SURPLUS}, \
             sum(CASE WHEN {MULTIPLICITY} > 1 THEN {MULTIPLICITY} ELSE 0 END) AS {COPIES} \
             FROM ({distinct}) GROUP BY {keys} HAVING count(*) > 1 OR sum({MULTIPLICITY}) > count(*)",
            keys = keys.join(", "),
        );
        let mut exact = part::PartMatched::default();
        let mut conflicting = part::PartMatched::default();
        let limit = plan.sample_rows;
        let mut stream = stream(&ctx, &query).await?;
        while let Some(batch) = stream.next().await {
            let batch = batch.map_err(|e| files::error_message(&e))?;
            let versions = int_column(&batch, VERSIONS_NAME)?;
            let surplus = int_column(&batch, SURPLUS_NAME)?;
            let copies = int_column(&batch, COPIES_NAME)?;
            exact.rows = exact.rows.saturating_add(sum_of(&surplus));
            let conflicts = gt(&versions, 1)?;
            conflicting.rows = conflicting
                .rows
                .saturating_add(conflicts.true_count() as u64);
            if limit == 0 {
                continue;
            }
            let key_columns: Vec<_> = batch.columns()[..keys.len()].to_vec();
            let shown = |count: &Int64Array, matches: &BooleanArray| {
                let mut fields: Vec<_> = batch.schema().fields()[..keys.len()].to_vec();
                fields.push(std::sync::Arc::new(
                    datafusion::arrow::datatypes::Field::new(ROWS_NAME, DataType::Int64, true),
                ));
                let mut columns = key_columns.clone();
                columns.push(std::sync::Arc::new(count.clone()));
                let rows = RecordBatch::try_new(
                    std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(fields)),
                    columns,
                )
                .map_err(|e| e.to_string())?;
                filter_record_batch(&rows, matches).map_err(|e| e.to_string())
            };
            let copied = gt(&copies, 0)?;
            if copied.true_count() > 0 {
                keep_first(
                    &mut exact.sample,
                    &shown(&copies, &copied)?,
                    limit,
                    Tail::Count("rows"),
                )?;
            }
            if conflicts.true_count() > 0 {
                keep_first(
                    &mut conflicting.sample,
                    &shown(&versions, &conflicts)?,
                    limit,
                    Tail::Count("versions"),
                )?;
            }
        }
        counts.exact_duplicates = Some(exact);
        counts.conflicting = Some(conflicting);
    }

    // Keys whose latest event is older than the TTL at `as_of`.
    if let (Some(ttl), Some(time_type)) = (plan.ttl_seconds, type_of(&plan.event_time)) {
        let has_keys = plan.keys.iter().all(|k| type_of(k).is_some());
        let (time, time_type) = value_expr(&plan.event_time, time_type);
        if let (DataType::Timestamp(unit, _), true) = (time_type, has_keys) {
            let cutoff = i128::from(plan.as_of_nanos) - i128::from(ttl) * 1_000_000_000;
            let keys: Vec<String> = plan.keys.iter().map(|k| ident(k)).collect();
            // Keys as duplicates compare them (-0.0 is 0.0, every NaN one key).
            let compared: Vec<String> = plan
                .keys_and_time()
                .into_iter()
                .filter_map(|c| type_of(c).map(|t| compared_column(c, t)))
                .collect();
            let latest = format!(
                "SELECT {}max({time}) AS {LATEST} FROM (SELECT {} FROM {TABLE}) {TABLE}{}",
                keys.iter().map(|k| format!("{k}, ")).collect::<String>(),
                compared.join(", "),
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
            // Every key's latest event streams out once: counted, and the stale ones
            // offered to the bounded sample.
            let query = format!("SELECT *, ({stale}) AS {STALE} FROM ({latest})");
            let mut stream = stream(&ctx, &query).await?;
            let mut key_count: u64 = 0;
            let mut stale_keys = part::PartMatched::default();
            while let Some(batch) = stream.next().await {
                let batch = batch.map_err(|e| files::error_message(&e))?;
                key_count += batch.num_rows() as u64;
                let latest = batch
                    .column_by_name(LATEST_NAME)
                    .ok_or_else(|| "the latest events lost their column".to_string())?;
                counts.has_latest |= latest.null_count() < latest.len();
                let matches = batch
                    .column_by_name(STALE_NAME)
                    .and_then(|c| c.as_any().downcast_ref::<BooleanArray>())
                    .map(true_where_set)
                    .ok_or_else(|| "the latest events lost their condition".to_string())?;
                // Keys are shown; a view without keys has none to show.
                let shown: Vec<usize> = (0..=keys.len()).collect();
                count_matching(
                    &mut stale_keys,
                    &batch.project(&shown).map_err(|e| e.to_string())?,
                    &matches,
                    if keys.is_empty() { 0 } else { plan.sample_rows },
                    Tail::Nothing,
                )?;
            }
            counts.keys = Some(key_count);
            counts.stale_keys = Some(stale_keys);
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
    // A list or embedding of floats: the rows holding a non-finite element. Its largest
    // and smallest elements in the total order are NaN when any element is (+NaN sorts
    // last, -NaN first); infinities are matched exactly.
    if list_element(data_type).is_some_and(is_float) {
        match predicate {
            Predicate::NaN => {
                return Some(format!("(isnan(array_max({c})) OR isnan(array_min({c})))"))
            }
            Predicate::PositiveInfinity => {
                return Some(format!("array_has({c}, CAST('inf' AS DOUBLE))"))
            }
            Predicate::NegativeInfinity => {
                return Some(format!("array_has({c}, CAST('-inf' AS DOUBLE))"))
            }
            _ => {}
        }
    }
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
        // Integers against their bound's floor or ceiling in their own type: a cast to
        // float64 would round values beyond 2^53 onto the bound.
        Predicate::Below(min) if data_type.is_signed_integer() => {
            integer_condition(c, "<", integer_cut(min, Cut::Ceiling))
        }
        Predicate::Above(max) if data_type.is_signed_integer() => {
            integer_condition(c, ">", integer_cut(max, Cut::Floor))
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
                    // An integer equals only an integral value in its range, compared as
                    // an integer (not as a float64, which rounds beyond 2^53).
                    AllowedValue::Number(n) if data_type.is_signed_integer() => {
                        match (integer_cut(n, Cut::Floor), integer_cut(n, Cut::Ceiling)) {
                            (IntegerCut::At(a), IntegerCut::At(b)) if a == b => Some(a.to_string()),
                            _ => None,
                        }
                    }
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
            match (data_type, event_type) {
                _ if data_type == event_type => format!("{c} < {event}"),
                // Other units or zones: both as exact nanoseconds. A zone does not change
                // the stored instant, and a naive time's is read as UTC (as Feast does).
                (DataType::Timestamp(a, _), DataType::Timestamp(b, _)) => {
                    format!("{} < {}", exact_nanos(c, *a), exact_nanos(&event, *b))
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Which integer a bound rounds to.
#[derive(Debug, Clone, Copy)]
enum Cut {
    Floor,
    Ceiling,
}

/// A bound rounded to an integer, or past every Int64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntegerCut {
    BelowAll,
    At(i64),
    AboveAll,
}

/// `n` rounded down or up to an integer, exactly.
fn integer_cut(n: &ExactNumber, cut: Cut) -> IntegerCut {
    let exact: Option<i128> = match n {
        // At most 39 digits fit an i128; more are past every Int64 either way.
        ExactNumber::Int { negative, digits } => Some(
            digits
                .parse::<i128>()
                .map(|v| if *negative { -v } else { v })
                .unwrap_or(if *negative { i128::MIN } else { i128::MAX }),
        ),
        ExactNumber::Float(f) if f.is_nan() => None,
        // `as` saturates: an infinite or huge bound is past every Int64.
        ExactNumber::Float(f) => Some(match cut {
            Cut::Floor => f.floor() as i128,
            Cut::Ceiling => f.ceil() as i128,
        }),
    };
    match exact {
        None => IntegerCut::AboveAll,
        Some(v) if v < i128::from(i64::MIN) => IntegerCut::BelowAll,
        Some(v) if v > i128::from(i64::MAX) => IntegerCut::AboveAll,
        Some(v) => IntegerCut::At(v as i64),
    }
}

/// `c op cut` for an integer column (`op`: `<` or `>`): a cut past every value is a
/// condition no value or every value meets.
fn integer_condition(c: &str, op: &str, cut: IntegerCut) -> String {
    match (op, cut) {
        (_, IntegerCut::At(v)) => format!("{c} {op} {v}"),
        ("<", IntegerCut::AboveAll) | (">", IntegerCut::BelowAll) => format!("{c} IS NOT NULL"),
        _ => "FALSE".to_string(),
    }
}

fn not_nan(float: bool, c: &str) -> String {
    if float {
        format!(" AND NOT isnan({c})")
    } else {
        String::new()
    }
}

/// The element type of a list or fixed-size list.
fn list_element(data_type: &DataType) -> Option<&DataType> {
    match data_type {
        DataType::List(field) | DataType::LargeList(field) | DataType::FixedSizeList(field, _) => {
            Some(field.data_type())
        }
        _ => None,
    }
}

fn is_timestamp(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Timestamp(_, _))
}

/// The time `c` of `unit` as nanoseconds since the epoch, exactly: a decimal, as an
/// `Int64` of nanoseconds ends in 2262 and rounding to a common coarser unit would hide
/// a created time a nanosecond before its event.
fn exact_nanos(c: &str, unit: datafusion::arrow::datatypes::TimeUnit) -> String {
    use datafusion::arrow::datatypes::TimeUnit;
    let per_unit = match unit {
        TimeUnit::Second => "1000000000",
        TimeUnit::Millisecond => "1000000",
        TimeUnit::Microsecond => "1000",
        TimeUnit::Nanosecond => "1",
    };
    format!(
        "(CAST(arrow_cast({c}, 'Int64') AS DECIMAL(38, 0)) * CAST({per_unit} AS DECIMAL(38, 0)))"
    )
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
            // The type names a zone from the file: a literal, escaped.
            format!(
                "arrow_cast({}, {})",
                ident(column),
                string_literal(&values.to_string())
            ),
            values.as_ref(),
        ),
        _ => (ident(column), data_type),
    }
}

/// `column` as duplicates and keys compare it, under its own name: a dictionary as its
/// values, floats (also inside lists) with -0.0 as 0.0 and every NaN as one value.
fn compared_column(column: &str, data_type: &DataType) -> String {
    let (expr, values) = value_expr(column, data_type);
    match canonical::holds_floats(values) {
        true => format!("{}({expr}) AS {}", canonical::NAME, ident(column)),
        false => format!("{expr} AS {}", ident(column)),
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
    format!(
        "arrow_cast(arrow_cast({value}, 'Int64'), {})",
        string_literal(&data_type.to_string())
    )
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
        .keys_and_time()
        .into_iter()
        .filter(|c| type_of(c).is_some())
        .map(str::to_string)
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
/// each value escaped and cut: the first rows in the order of [`sort_keys`] over the columns
/// shown, as `ORDER BY ... LIMIT` would give. One scan for every condition: each batch's
/// conditions are counted, and its matching rows go through a bounded selection (memory
/// stays at the sample size, however many rows match).
async fn scan_checks<'a>(
    ctx: &SessionContext,
    plan: &DataPlan,
    conditions: &[(usize, &String)],
    type_of: &impl Fn(&str) -> Option<&'a DataType>,
) -> Result<(u64, BTreeMap<usize, part::PartMatched>), String> {
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
    let mut stream = stream(ctx, &query).await?;
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
            let matches = true_where_set(matches);
            let indices = columns
                .iter()
                .map(|c| schema.index_of(c))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let shown = batch.project(&indices).map_err(|e| e.to_string())?;
            count_matching(
                out.entry(*i).or_default(),
                &shown,
                &matches,
                limit,
                Tail::Nothing,
            )?;
        }
    }
    Ok((rows_seen, out))
}

/// The result of `sql`, batch by batch.
async fn stream(
    ctx: &SessionContext,
    sql: &str,
) -> Result<datafusion::physical_plan::SendableRecordBatchStream, String> {
    ctx.sql(sql)
        .await
        .map_err(|e| files::error_message(&e))?
        .execute_stream()
        .await
        .map_err(|e| files::error_message(&e))
}

/// True where `condition` is true: a null condition is not a match.
fn true_where_set(condition: &BooleanArray) -> BooleanArray {
    match condition.nulls() {
        Some(nulls) => BooleanArray::new(condition.values() & nulls.inner(), None),
        None => condition.clone(),
    }
}

/// The count column `name` of `batch` as Int64 (nulls as 0).
fn int_column(batch: &RecordBatch, name: &str) -> Result<Int64Array, String> {
    let column = batch
        .column_by_name(name)
        .ok_or_else(|| format!("a count query lost its column {name}"))?;
    let column =
        datafusion::arrow::compute::cast(column, &DataType::Int64).map_err(|e| e.to_string())?;
    column
        .as_any()
        .downcast_ref::<Int64Array>()
        .cloned()
        .ok_or_else(|| "a count is not an integer".to_string())
}

/// The sum of the positive counts in `values`.
fn sum_of(values: &Int64Array) -> u64 {
    values
        .iter()
        .flatten()
        .map(|v| u64::try_from(v).unwrap_or(0))
        .fold(0u64, u64::saturating_add)
}

/// True where `values` is above `bound`.
fn gt(values: &Int64Array, bound: i64) -> Result<BooleanArray, String> {
    let bound = Int64Array::new_scalar(bound);
    datafusion::arrow::compute::kernels::cmp::gt(values, &bound)
        .map(|m| true_where_set(&m))
        .map_err(|e| e.to_string())
}

/// Counts into `kept` the rows of `rows` where `mask` is set, and offers them to its
/// bounded sample of `limit` rows ([`keep_first`]).
pub(crate) fn count_matching(
    kept: &mut part::PartMatched,
    rows: &RecordBatch,
    mask: &BooleanArray,
    limit: usize,
    tail: Tail,
) -> Result<(), String> {
    let found = mask.true_count();
    kept.rows += found as u64;
    if found == 0 || limit == 0 {
        return Ok(());
    }
    let rows = filter_record_batch(rows, mask).map_err(|e| e.to_string())?;
    keep_first(&mut kept.sample, &rows, limit, tail)
}

/// Keeps in `kept` the first `limit` of the rows offered so far, in the order of [`sort_keys`]
/// over their columns (as `ORDER BY ... LIMIT` would give), rendered with `tail`: only
/// this batch's first rows are sorted, and none is rendered when all come after the last
/// kept, so memory stays at the limit however many rows are offered.
pub(crate) fn keep_first(
    kept: &mut Vec<part::SampledRow>,
    rows: &RecordBatch,
    limit: usize,
    tail: Tail,
) -> Result<(), String> {
    use datafusion::arrow::array::UInt32Array;
    use datafusion::arrow::compute::take_record_batch;
    if rows.num_rows() == 0 || limit == 0 {
        return Ok(());
    }
    let keys = sort_keys(rows)?;
    let mut order: Vec<u32> = (0..rows.num_rows() as u32).collect();
    if order.len() > limit {
        order.select_nth_unstable_by(limit - 1, |a, b| {
            keys.row(*a as usize).cmp(&keys.row(*b as usize))
        });
        order.truncate(limit);
    }
    order.sort_by(|a, b| keys.row(*a as usize).cmp(&keys.row(*b as usize)));
    if kept.len() == limit {
        let first: String = keys
            .row(order[0] as usize)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if kept.last().is_some_and(|last| first >= last.key) {
            return Ok(());
        }
    }
    let first = take_record_batch(rows, &UInt32Array::from(order)).map_err(|e| e.to_string())?;
    kept.extend(render_batch(&first, tail)?);
    kept.sort_by(|a, b| a.key.cmp(&b.key));
    kept.truncate(limit);
    Ok(())
}

/// Characters of a text value that order a sample: a sampled value shows fewer
/// ([`SAMPLE_VALUE_CHARS`]), so rows equal in these look the same, and sort keys stay small.
const ORDER_CHARS: usize = 64;

fn is_text(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, value) => is_text(value),
        _ => false,
    }
}

/// A column as samples order it: text cut to [`ORDER_CHARS`] characters, as Utf8.
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

/// Each row's sort key over every column of `batch`, the order of every sample and of
/// [`part::SampledRow::key`]: the Arrow row format's (ascending, nulls first, floats in IEEE
/// total order; text by its first [`ORDER_CHARS`] characters), so that a sample is the
/// first rows in one order however the data is split.
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

/// How a sampled row ends, after its columns shown as `name=value`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tail<'a> {
    /// Nothing: every column is shown as `name=value`.
    Nothing,
    /// The last column is a count, shown as " (N `unit`)".
    Count(&'a str),
    /// The last two columns are a served and a trained value: ": served X, trained Y".
    Compared,
}

/// The rows of `batch`, each as `name=value, ...` (values escaped and cut) then its
/// `tail`, with its sort key over every column ([`sort_keys`]).
pub(crate) fn render_batch(
    batch: &RecordBatch,
    tail: Tail,
) -> Result<Vec<part::SampledRow>, String> {
    let schema = batch.schema();
    let keys = sort_keys(batch)?;
    let columns = batch.columns();
    let named = columns.len().saturating_sub(match tail {
        Tail::Nothing => 0,
        Tail::Count(_) => 1,
        Tail::Compared => 2,
    });
    let mut out = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let value = |i: usize| shown_value(columns[i].as_ref(), row);
        let mut text = (0..named)
            .map(|i| {
                Ok(format!(
                    "{}={}",
                    quote(schema.field(i).name(), 60),
                    value(i)?
                ))
            })
            .collect::<Result<Vec<_>, String>>()?
            .join(", ");
        match tail {
            Tail::Nothing => {}
            Tail::Count(unit) => text.push_str(&format!(" ({} {unit})", value(named)?)),
            Tail::Compared => text.push_str(&format!(
                ": served {}, trained {}",
                value(named)?,
                value(named + 1)?
            )),
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

/// One value of a sample, escaped and cut to [`SAMPLE_VALUE_CHARS`]. Text is shown in
/// double quotes (`\"` and `\\` escaped), also inside lists, so that the text "null",
/// "" or "a, b" never reads as a null, as nothing or as two values.
fn shown_value(array: &dyn Array, row: usize) -> Result<String, String> {
    let shown = match holds_text(array.data_type()) {
        true => text_value(array, row)?,
        false => ArrayFormatter::try_new(array, &FormatOptions::default().with_null("null"))
            .map_err(|e| e.to_string())?
            .value(row)
            .to_string(),
    };
    // Bytes are shown in hex: `0x32`, never `32`, which reads as the integer 32.
    let bytes = matches!(
        array.data_type(),
        DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    );
    let shown = match bytes && array.is_valid(row) {
        true => format!("0x{shown}"),
        false => shown,
    };
    let cut = quote(&shown, SAMPLE_VALUE_CHARS);
    // A cut between the two characters of an escape (`\"`, `\\`) leaves a lone `\`.
    Ok(match cut.strip_suffix('…') {
        Some(kept) if kept.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1 => {
            format!("{}…", &kept[..kept.len() - 1])
        }
        _ => cut,
    })
}

/// Whether values of `data_type` are text, or lists holding text.
fn holds_text(data_type: &DataType) -> bool {
    is_text(data_type) || list_element(data_type).is_some_and(holds_text)
}

/// A text value (`"..."`) or a list of them (`["a", null]`); `null` for a null (of the
/// dictionary's values too). A list stops after about four times what a sample shows
/// (`…`): a hostile row of a million strings costs no more than a short one.
fn text_value(array: &dyn Array, row: usize) -> Result<String, String> {
    let mut out = String::new();
    push_text_value(&mut out, array, row)?;
    Ok(out)
}

fn push_text_value(out: &mut String, array: &dyn Array, row: usize) -> Result<(), String> {
    use datafusion::arrow::array::AsArray;
    // One row, so that a dictionary's null values are looked up for it alone.
    let one = array.slice(row, 1);
    if one.logical_nulls().is_some_and(|nulls| nulls.is_null(0)) {
        out.push_str("null");
        return Ok(());
    }
    let mut list = |values: datafusion::arrow::array::ArrayRef| -> Result<(), String> {
        out.push('[');
        for i in 0..values.len() {
            if i > 0 {
                out.push_str(", ");
            }
            if out.len() > 4 * SAMPLE_VALUE_CHARS {
                out.push('…');
                break;
            }
            push_text_value(out, values.as_ref(), i)?;
        }
        out.push(']');
        Ok(())
    };
    match one.data_type() {
        DataType::List(_) => list(one.as_list::<i32>().value(0)),
        DataType::LargeList(_) => list(one.as_list::<i64>().value(0)),
        DataType::FixedSizeList(..) => list(one.as_fixed_size_list().value(0)),
        _ => {
            let text = ArrayFormatter::try_new(one.as_ref(), &FormatOptions::default())
                .map_err(|e| e.to_string())?
                .value(0)
                .to_string();
            let text: String = text.chars().take(4 * SAMPLE_VALUE_CHARS).collect();
            out.push('"');
            out.push_str(&text.replace('\\', "\\\\").replace('"', "\\\""));
            out.push('"');
            Ok(())
        }
    }
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
