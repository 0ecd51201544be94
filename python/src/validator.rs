//! The feature-schema gate (`arrowfeat check`) from Python.

use crate::convert::*;
use arrowfeat_gate::InputNames;
use pyo3::prelude::*;

pub(crate) fn report_format(format: &str) -> PyResult<arrowfeat_validator::output::Format> {
    use arrowfeat_validator::output::Format;
    Format::parse(format).ok_or_else(|| {
        value_error(format!(
            "format: expected one of {}, found `{format}`",
            Format::NAMES.join(", ")
        ))
    })
}

/// The report of one run of the validator's pipeline (`arrowfeat check`): rendered in any
/// format, and its exit code, without checking again. `arrowfeat.feast.Report` wraps it.
#[pyclass(frozen, name = "CheckReport", module = "arrowfeat._native")]
pub(crate) struct CheckReport {
    run: arrowfeat_validator::pipeline::RunReport,
}

#[pymethods]
impl CheckReport {
    /// Whether warnings fail the run: the `deny_warnings` argument or `arrowfeat.toml`.
    #[getter]
    fn deny_warnings(&self) -> bool {
        self.run.deny_warnings
    }

    /// The exit code `arrowfeat check` returns for this report: 0 pass, 1 findings, 2
    /// unreadable input. `deny_warnings=True` also fails on warnings.
    #[pyo3(signature = (deny_warnings = false))]
    fn exit_code(&self, deny_warnings: bool) -> i32 {
        self.run
            .exit_code_with(deny_warnings || self.run.deny_warnings)
    }

    /// The report in `format` (text, json, junit, sarif, github, markdown), exactly as
    /// `arrowfeat check --format` prints it (without colour). `verbose=True`: text lists
    /// every check, as `arrowfeat check --verbose`; by default only findings and the summary.
    #[pyo3(signature = (format = "text", deny_warnings = false, *, verbose = false))]
    fn render(&self, format: &str, deny_warnings: bool, verbose: bool) -> PyResult<String> {
        let format = report_format(format)?;
        let style = arrowfeat_validator::pipeline::Style {
            color: false,
            verbose,
        };
        Ok(self
            .run
            .render_with(format, style, deny_warnings || self.run.deny_warnings))
    }

    fn __repr__(&self) -> String {
        format!(
            "<arrowfeat._native.CheckReport against {}: exit code {}>",
            arrowfeat_validator::text::clean(&self.run.report.against),
            self.run.exit_code()
        )
    }
}

/// Runs `arrowfeat check` through the validator's pipeline: the schema files under
/// `schemas` against store metadata (`feast registry-dump` JSON or arrowfeat store
/// metadata, named `against` in the report) and/or an earlier revision (`previous`: a
/// directory, or a git revision of `schemas`' path). `config`: an `arrowfeat.toml`; by
/// default `arrowfeat.toml` in the working directory if there is one, as the CLI.
/// `baseline`: accepted findings, as `--baseline FILE`; by default
/// `arrowfeat-baseline.json` in the working directory if there is one; `False`: none, as
/// `--no-baseline`. `write_baseline`: write today's findings there, then check with them.
/// `data`: (view or None, a path or an Arrow table through the C stream interface) pairs,
/// checked against their schemas as `--data` (`as_of` in ns since the epoch, default
/// now; at most `sample_rows` rows shown per finding). `registry`: a store metadata file,
/// read instead of `registry_json`. `data_from_store`: views `data` does not give are
/// read at their store's batch source, relative paths from `repo_dir`
/// (`--data-from-store`).
/// Unreadable top-level input or configuration raises ValueError (the CLI's exit code 2).
#[pyfunction]
#[pyo3(signature = (schemas, registry_json = None, against = String::new(), *, previous = None, config = None, compatibility = None, deny_warnings = false, follow_symlinks = false, baseline = None, write_baseline = None, data = Vec::new(), as_of = None, sample_rows = 5, counted = Vec::new(), memory_limit = None, registry = None, repo_dir = std::path::PathBuf::from("."), data_from_store = false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    py: Python<'_>,
    schemas: std::path::PathBuf,
    registry_json: Option<Vec<u8>>,
    against: String,
    previous: Option<String>,
    config: Option<std::path::PathBuf>,
    compatibility: Option<&str>,
    deny_warnings: bool,
    follow_symlinks: bool,
    baseline: Option<&Bound<'_, PyAny>>,
    write_baseline: Option<std::path::PathBuf>,
    data: Vec<(Option<String>, Bound<'_, PyAny>)>,
    as_of: Option<i64>,
    sample_rows: usize,
    counted: Vec<CountedView>,
    memory_limit: Option<String>,
    registry: Option<std::path::PathBuf>,
    repo_dir: std::path::PathBuf,
    data_from_store: bool,
) -> PyResult<CheckReport> {
    let memory_limit = memory_limit
        .map(|text| match arrowfeat_common::size::parse_size(&text) {
            Ok(0) => Err("expected a size above 0".to_string()),
            parsed => parsed,
        })
        .transpose()
        .map_err(|e| value_error(format!("argument `memory_limit`: {e}")))?;
    let store_label = match &registry {
        Some(path) => path.display().to_string(),
        None => against.clone(),
    };
    if data_from_store && registry.is_none() && registry_json.is_none() {
        return Err(value_error(
            "argument `data_from_store`: needs `registry` or `feast_repo`: their views' batch sources say where the data is",
        ));
    }
    let data = data_sources(data, counted, as_of, sample_rows, data_from_store)?.map(|data| {
        let data =
            data.with_memory_limit(memory_limit.map(|b| usize::try_from(b).unwrap_or(usize::MAX)));
        match data_from_store {
            true => data.with_store_sources(arrowfeat_gate::from_store::StoreSources::new(
                repo_dir,
                store_label,
            )),
            false => data,
        }
    });
    use arrowfeat_validator::compat::Mode;
    use arrowfeat_validator::pipeline::{
        self, BaselineSource, ConfigSource, Inputs, Names, StoreSource,
    };
    let baseline = match baseline {
        None => BaselineSource::Discover(std::path::PathBuf::from(".")),
        Some(b) if b.is_instance_of::<pyo3::types::PyBool>() => {
            if b.is_truthy()? {
                return Err(type_error(
                    "baseline: expected a file path, None (discover arrowfeat-baseline.json) or False (no baseline), found True",
                ));
            }
            BaselineSource::None
        }
        Some(b) => BaselineSource::File(b.extract::<std::path::PathBuf>().map_err(|_| {
            type_error(format!(
                "baseline: expected a file path, None or False, found {}",
                b.get_type()
                    .name()
                    .map_or_else(|_| "an object".to_string(), |n| n.to_string())
            ))
        })?),
    };
    if write_baseline.is_some() && !matches!(baseline, BaselineSource::Discover(_)) {
        return Err(value_error(
            "write_baseline: expected no `baseline` beside it (it checks with the file it writes)",
        ));
    }
    let compatibility = compatibility
        .map(|mode| {
            Mode::parse(mode).ok_or_else(|| {
                value_error(format!(
                    "compatibility: expected backward, forward, full or none, found `{mode}`"
                ))
            })
        })
        .transpose()?;
    let inputs = Inputs {
        store: match registry {
            Some(path) => Some(StoreSource::File(path)),
            None => registry_json.map(|json| StoreSource::Json {
                json,
                label: against,
            }),
        },
        previous,
        config: match config {
            Some(path) => ConfigSource::File(path),
            None => ConfigSource::Discover(std::path::PathBuf::from(".")),
        },
        compatibility,
        deny_warnings,
        load: arrowfeat_validator::run::LoadOptions { follow_symlinks },
        names: Names::ARGUMENTS,
        baseline,
        write_baseline,
        data: data
            .as_ref()
            .map(|d| d as &dyn arrowfeat_validator::run::DataSource),
        ..Inputs::check(schemas)
    };
    let run =
        detach(py, "check", move || pipeline::run(inputs))?.map_err(|e| value_error(e.message))?;
    Ok(CheckReport { run })
}

/// The views the schema files under `schemas` declare, for an engine that counts their
/// data where it lives (PySpark): (view, file label, file content, entity join keys,
/// event timestamp column) of each schema file; the view is `None` for a file that does
/// not parse (the check reports it).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn schema_views(
    py: Python<'_>,
    schemas: std::path::PathBuf,
) -> PyResult<Vec<(Option<String>, String, Vec<u8>, Vec<String>, String)>> {
    detach(py, "check_data", move || {
        // Named as the in-process run names the argument.
        let paths = arrowfeat_validator::run::schema_paths(&schemas).map_err(|e| {
            format!(
                "{} {e}",
                arrowfeat_validator::pipeline::Names::ARGUMENTS.schemas
            )
        })?;
        let mut views = Vec::new();
        for path in paths {
            let label = path.display().to_string();
            let label = label
                .strip_prefix("./")
                .map_or(label.clone(), str::to_string);
            let bytes = arrowfeat_validator::files::read_bounded(
                &path,
                arrowfeat_validator::spec::MAX_SCHEMA_FILE_BYTES,
            )
            .unwrap_or_default();
            match arrowfeat_validator::checks::load_bytes(&label, &bytes) {
                (_, Some(file)) => {
                    let spec = &file.spec;
                    views.push((
                        Some(spec.name.clone()),
                        label,
                        bytes,
                        spec.entities.iter().map(|e| e.join_key.clone()).collect(),
                        spec.event_timestamp.name.clone(),
                    ));
                }
                (_, None) => views.push((None, label, Vec::new(), Vec::new(), String::new())),
            }
        }
        Ok::<_, String>(views)
    })?
    .map_err(value_error)
}

/// A part of the data (any Arrow stream, on a worker) as a table named `label` in
/// findings.
fn part_table(
    function: &str,
    label: String,
    data: Bound<'_, PyAny>,
) -> PyResult<arrowfeat_gate::Data> {
    match sources_of(function, &label, vec![(None, data)])?.pop() {
        Some((
            _,
            arrowfeat_gate::Data::Table {
                schema, batches, ..
            },
        )) => Ok(arrowfeat_gate::Data::Table {
            label,
            schema,
            batches,
        }),
        _ => Err(type_error(format!(
            "{function}: expected an Arrow table for a part of the data, found a path"
        ))),
    }
}

/// One part of a view's data counted for `check(counted=...)`: the schema file
/// (`schema_label`, its `schema_bytes`), the data's name in findings (`source`), the
/// run's `as_of` (ns since the epoch) and `sample_rows`, and the part (any Arrow
/// stream). Returns the counts as text. Runs on the calling thread.
#[pyfunction]
#[pyo3(signature = (schema_label, schema_bytes, source, data, *, as_of, sample_rows))]
pub(crate) fn count_part(
    py: Python<'_>,
    schema_label: String,
    schema_bytes: Vec<u8>,
    source: String,
    data: Bound<'_, PyAny>,
    as_of: i64,
    sample_rows: usize,
) -> PyResult<String> {
    let table = part_table("check_data", source, data)?;
    let options = arrowfeat_validator::checks::data::DataOptions {
        as_of_nanos: as_of,
        sample_rows,
    };
    // A part that cannot be counted is a finding of the whole run, not a failed Spark job.
    detach(py, "check_data", move || {
        let counted = match arrowfeat_validator::checks::load_bytes(&schema_label, &schema_bytes) {
            (_, Some(file)) => arrowfeat_gate::count_part_of(&file, &table, &options),
            (_, None) => Err(format!(
                "the schema file {} does not parse",
                arrowfeat_common::quote(&schema_label, 200)
            )),
        };
        counted
            .unwrap_or_else(arrowfeat_gate::part::PartCounts::unreadable)
            .to_json()
    })
}

/// A view's data summarized in parts for drift: (view, an empty table of its columns,
/// [(schema file, each part's summaries as text)]).
type SummarizedView<'py> = (
    Option<String>,
    Bound<'py, PyAny>,
    Vec<(String, Vec<String>)>,
);

/// `drift`'s data summarized in parts ([`drift_part`]), named as tables of `argument`.
fn summarized(
    argument: &str,
    views: Vec<SummarizedView<'_>>,
) -> PyResult<Vec<(Option<String>, arrowfeat_gate::Data)>> {
    let mut out = Vec::with_capacity(views.len());
    for (view, columns, by_file) in views {
        let label = argument_label(argument, view.as_deref());
        let Some((_, arrowfeat_gate::Data::Table { schema, .. })) =
            sources_of("drift", argument, vec![(view.clone(), columns)])?.pop()
        else {
            return Err(type_error(format!(
                "drift: argument `{argument}`: expected a table of the data's columns"
            )));
        };
        let parts = parse_parts(
            "drift",
            by_file,
            arrowfeat_gate::drift::SummaryPart::from_json,
        )?;
        out.push((
            view,
            arrowfeat_gate::Data::Summarized {
                label,
                schema,
                parts,
            },
        ));
    }
    Ok(out)
}

/// One part of a view's data summarized for `drift(current_parts=...)`: the schema file
/// (`schema_label`, its `schema_bytes`), the data's name (`source`), the part (any Arrow
/// stream) and, when the reference is a saved profile, its text (numbers are then
/// coarsened against it: a small part whatever the data). Runs on the calling thread.
#[pyfunction]
#[pyo3(signature = (schema_label, schema_bytes, source, data, *, reference_profile = None))]
pub(crate) fn drift_part(
    py: Python<'_>,
    schema_label: String,
    schema_bytes: Vec<u8>,
    source: String,
    data: Bound<'_, PyAny>,
    reference_profile: Option<String>,
) -> PyResult<String> {
    let table = part_table("drift", source, data)?;
    detach(py, "drift", move || {
        use arrowfeat_gate::drift::{summarize_part_of, SummaryPart};
        let unreadable = SummaryPart::unreadable;
        let part = match arrowfeat_validator::checks::load_bytes(&schema_label, &schema_bytes) {
            (_, None) => unreadable(format!(
                "the schema file {} does not parse",
                arrowfeat_common::quote(&schema_label, 200)
            )),
            (_, Some(file)) => {
                let profile = match reference_profile
                    .as_deref()
                    .map(arrowfeat_validator::checks::drift::ReferenceProfile::parse)
                {
                    Some(Err(e)) => {
                        return unreadable(format!("the reference profile: {e}")).to_json()
                    }
                    Some(Ok(profile)) => profile.views.get(&file.spec.name).cloned(),
                    None => None,
                };
                summarize_part_of(&file, &table, profile.as_ref())
            }
        };
        part.to_json()
    })
}

/// Each schema file's parts, from the text the workers sent (`parse`: its reader).
fn parse_parts<T>(
    function: &str,
    by_file: Vec<(String, Vec<String>)>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> PyResult<Vec<(String, Vec<T>)>> {
    by_file
        .into_iter()
        .map(|(file, texts)| {
            let parts = texts
                .iter()
                .map(|text| parse(text))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| value_error(format!("{function}: {e}")))?;
            Ok((file, parts))
        })
        .collect()
}

/// A view's data counted in parts: (view, [(schema file, each part's counts as text)]).
type CountedView = (Option<String>, Vec<(String, Vec<String>)>);

/// `check`'s `data`: paths as they are, anything else read as an Arrow table.
/// `counted`: (view, [(schema file, parts)]) of data counted in parts ([`count_part`])
/// for each schema file declaring the view, named in findings as a table of `data` is.
fn data_sources(
    data: Vec<(Option<String>, Bound<'_, PyAny>)>,
    counted: Vec<CountedView>,
    as_of: Option<i64>,
    sample_rows: usize,
    from_store: bool,
) -> PyResult<Option<arrowfeat_gate::DataPaths>> {
    if data.is_empty() && counted.is_empty() && !from_store {
        return Ok(None);
    }
    let mut sources = sources_of("check_data", "data", data)?;
    for (view, by_file) in counted {
        let label = argument_label("data", view.as_deref());
        let parts = parse_parts(
            "check_data",
            by_file,
            arrowfeat_gate::part::PartCounts::from_json,
        )?;
        sources.push((view, arrowfeat_gate::Data::Counted { label, parts }));
    }
    let as_of_nanos = match as_of {
        Some(nanos) => nanos,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
            .unwrap_or(0),
    };
    let options = arrowfeat_validator::checks::data::DataOptions {
        as_of_nanos,
        sample_rows,
    };
    Ok(Some(
        arrowfeat_gate::DataPaths::of(sources, options).named(InputNames::Arguments),
    ))
}

/// How findings name the data given for `view` in `argument`.
fn argument_label(argument: &str, view: Option<&str>) -> String {
    match view {
        Some(view) => format!("{argument}[{}]", arrowfeat_common::quote(view, 100)),
        None => argument.to_string(),
    }
}

/// (view, path or Arrow table) pairs of `function`'s `argument`: paths as they are,
/// anything else read through the Arrow C stream interface.
fn sources_of(
    function: &str,
    argument: &str,
    data: Vec<(Option<String>, Bound<'_, PyAny>)>,
) -> PyResult<Vec<(Option<String>, arrowfeat_gate::Data)>> {
    use arrow::ffi_stream::ArrowArrayStreamReader;
    use arrow::record_batch::RecordBatchReader;
    use arrow_pyarrow::FromPyArrow;
    use arrowfeat_gate::Data;
    let mut sources = Vec::with_capacity(data.len());
    for (view, obj) in data {
        let argument = argument_label(argument, view.as_deref());
        let source = if let Ok(path) = obj.extract::<std::path::PathBuf>() {
            Data::Path(path.to_string_lossy().into_owned())
        } else {
            let reader = ArrowArrayStreamReader::from_pyarrow_bound(&obj).map_err(|e| {
                type_error(format!(
                    "{function}: argument `{argument}`: expected a path or an Arrow table, found {}: {e}",
                    obj.get_type()
                        .name()
                        .map_or_else(|_| "an object".to_string(), |n| n.to_string())
                ))
            })?;
            let schema = reader.schema();
            let batches = reader
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| value_error(format!("{function}: argument `{argument}`: {e}")))?;
            Data::Table {
                label: argument,
                schema,
                batches,
            }
        };
        sources.push((view, source));
    }
    Ok(sources)
}

/// Runs `arrowfeat drift`: the schema files under `schemas` and the drift of each view's
/// `current` data ((view or None, path or Arrow table) pairs) from its `reference` data
/// (pairs) or from `reference_profile` (a file `--save-reference` wrote). Returns the
/// report, the reference data's profile as JSON (what `--save-reference` writes; no views
/// when `reference_profile` is given) and the views whose reference could not be
/// profiled in full. The store (a `registry` file, or `registry_json` with its label)
/// names in its views' batch sources the current data of views `current` does not give
/// (`current_from_store`) and the reference data of views `reference` does not give
/// (`reference_from_store`), relative paths from `repo_dir`. `saving`: the reference's
/// profile is to be saved (a view without current data is only profiled).
#[pyfunction]
#[pyo3(signature = (schemas, *, reference = Vec::new(), reference_profile = None, current = Vec::new(), config = None, baseline = None, reference_parts = Vec::new(), current_parts = Vec::new(), registry = None, registry_json = None, repo_dir = std::path::PathBuf::from("."), current_from_store = false, reference_from_store = false, saving = false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn drift(
    py: Python<'_>,
    schemas: std::path::PathBuf,
    reference: Vec<(Option<String>, Bound<'_, PyAny>)>,
    reference_profile: Option<std::path::PathBuf>,
    current: Vec<(Option<String>, Bound<'_, PyAny>)>,
    config: Option<std::path::PathBuf>,
    baseline: Option<std::path::PathBuf>,
    reference_parts: Vec<SummarizedView<'_>>,
    current_parts: Vec<SummarizedView<'_>>,
    registry: Option<std::path::PathBuf>,
    registry_json: Option<(Vec<u8>, String)>,
    repo_dir: std::path::PathBuf,
    current_from_store: bool,
    reference_from_store: bool,
    saving: bool,
) -> PyResult<(CheckReport, String, Option<String>)> {
    use arrowfeat_gate::drift::{DriftSources, Reference};
    use arrowfeat_validator::pipeline::Command;
    let reference = match reference_profile {
        Some(path) => {
            let label = arrowfeat_common::clean(&path.display().to_string());
            // Bounded, and refusing pipes and devices, as the CLI reads it.
            let bytes = arrowfeat_validator::files::read_bounded(&path, 256 * 1024 * 1024)
                .map_err(|e| value_error(format!("drift: argument `reference_profile`: {e}")))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                value_error(format!(
                    "drift: argument `reference_profile`: {label}: not a reference profile (not UTF-8 text)"
                ))
            })?;
            Reference::Profile {
                profile: arrowfeat_validator::checks::drift::ReferenceProfile::parse(&text)
                    .map_err(|e| {
                        value_error(format!("drift: argument `reference_profile`: {label}: {e}"))
                    })?,
                label,
            }
        }
        None => {
            let mut sources = sources_of("drift", "reference", reference)?;
            sources.extend(summarized("reference", reference_parts)?);
            Reference::Data(arrowfeat_gate::ByView::new(sources))
        }
    };
    let mut current = sources_of("drift", "current", current)?;
    current.extend(summarized("current", current_parts)?);
    use arrowfeat_validator::pipeline::StoreSource;
    let (store, store_label) = match (registry, registry_json) {
        (Some(path), _) => {
            let label = path.display().to_string();
            (Some(StoreSource::File(path)), label)
        }
        (None, Some((json, label))) => (
            Some(StoreSource::Json {
                json,
                label: label.clone(),
            }),
            label,
        ),
        (None, None) => (None, String::new()),
    };
    if (current_from_store || reference_from_store) && store.is_none() {
        return Err(value_error(
            "drift: `current_from_store` and `reference_from_store` need `registry` or `feast_repo`: their views' batch sources say where the data is",
        ));
    }
    let sources = |wanted: bool| {
        wanted.then(|| {
            arrowfeat_gate::from_store::StoreSources::new(repo_dir.clone(), store_label.clone())
        })
    };
    let sources = DriftSources::new(reference, current)
        .named(InputNames::Arguments)
        .saving(saving)
        .with_store_sources(sources(current_from_store), sources(reference_from_store))
        .map_err(|e| {
            value_error(format!(
                "drift: `current_from_store` with `reference_from_store`: {e}"
            ))
        })?;
    let report = run_compare(
        py,
        "drift",
        Command::Drift,
        schemas,
        config,
        baseline,
        store,
        &sources,
    )?;
    let not_saved_because = sources.not_saved_because(report.run.exit_code_with(false) == 2);
    Ok((report, sources.saved_profile().to_json(), not_saved_because))
}

/// `skew`'s options from its arguments, checked.
fn skew_options(
    time_tolerance: &str,
    serving_time: Option<String>,
    absolute_tolerance: f64,
    relative_tolerance: f64,
    ulps: u64,
    sample_rows: usize,
) -> PyResult<arrowfeat_gate::skew::SkewOptions> {
    let shown = arrowfeat_common::quote(time_tolerance.trim(), 60);
    let time_tolerance_nanos =
        arrowfeat_common::duration::parse_duration(time_tolerance).map_err(|e| {
            value_error(format!(
                "skew: argument `time_tolerance`: {}",
                arrowfeat_common::clean(&e.to_string())
            ))
        })?;
    if time_tolerance_nanos < 0 {
        return Err(value_error(format!(
            "skew: argument `time_tolerance`: expected a duration of 0 or more, found \"{shown}\""
        )));
    }
    let values = arrowfeat_udf::kernels::compare::Tolerance::new(
        absolute_tolerance,
        relative_tolerance,
        ulps,
    )
    .map_err(|e| {
        value_error(format!(
            "skew: argument `{}_tolerance`: {}",
            e.argument, e.message
        ))
    })?;
    Ok(arrowfeat_gate::skew::SkewOptions {
        time_tolerance_nanos,
        time_tolerance_text: shown,
        values,
        serving_time,
        sample_rows,
    })
}

/// Checks `skew`'s options as [`skew`] reads them (on the driver, before any Spark job
/// runs [`skew_part`] with them).
#[pyfunction]
#[pyo3(signature = (*, time_tolerance, serving_time = None, absolute_tolerance = 0.0, relative_tolerance = 0.0, ulps = 0, sample_rows = 5))]
pub(crate) fn check_skew_options(
    time_tolerance: String,
    serving_time: Option<String>,
    absolute_tolerance: f64,
    relative_tolerance: f64,
    ulps: u64,
    sample_rows: usize,
) -> PyResult<()> {
    skew_options(
        &time_tolerance,
        serving_time,
        absolute_tolerance,
        relative_tolerance,
        ulps,
        sample_rows,
    )
    .map(|_| ())
}

/// A view's data compared for skew in parts: (view, an empty table of the serving
/// data's columns, [(schema file, each part's counts as text)]).
type ComparedView<'py> = (
    Option<String>,
    Bound<'py, PyAny>,
    Vec<(String, Vec<String>)>,
);

/// Runs `arrowfeat skew`: each view's `serving` data ((view or None, path or Arrow table)
/// pairs) matched with its `training` data on the entity keys and an as-of join within
/// `time_tolerance`, features compared within the value tolerances. `compared`: views
/// compared in parts ([`skew_part`]), given instead of their serving data (their training
/// data is then a table of its columns). Returns the report.
#[pyfunction]
#[pyo3(signature = (schemas, *, serving, training, time_tolerance, serving_time = None, absolute_tolerance = 0.0, relative_tolerance = 0.0, ulps = 0, sample_rows = 5, config = None, baseline = None, compared = Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn skew(
    py: Python<'_>,
    schemas: std::path::PathBuf,
    serving: Vec<(Option<String>, Bound<'_, PyAny>)>,
    training: Vec<(Option<String>, Bound<'_, PyAny>)>,
    time_tolerance: String,
    serving_time: Option<String>,
    absolute_tolerance: f64,
    relative_tolerance: f64,
    ulps: u64,
    sample_rows: usize,
    config: Option<std::path::PathBuf>,
    baseline: Option<std::path::PathBuf>,
    compared: Vec<ComparedView<'_>>,
) -> PyResult<CheckReport> {
    use arrowfeat_gate::skew::{SkewPart, SkewSources};
    use arrowfeat_validator::pipeline::Command;
    let options = skew_options(
        &time_tolerance,
        serving_time,
        absolute_tolerance,
        relative_tolerance,
        ulps,
        sample_rows,
    )?;
    let mut serving = sources_of("skew", "serving", serving)?;
    for (view, columns, by_file) in compared {
        let label = argument_label("serving", view.as_deref());
        let Some((_, arrowfeat_gate::Data::Table { schema, .. })) =
            sources_of("skew", "serving", vec![(view.clone(), columns)])?.pop()
        else {
            return Err(type_error(
                "skew: argument `serving`: expected a table of the data's columns",
            ));
        };
        let parts = parse_parts("skew", by_file, SkewPart::from_json)?;
        serving.push((
            view,
            arrowfeat_gate::Data::Compared {
                label,
                schema,
                parts,
            },
        ));
    }
    let sources = SkewSources::new(serving, sources_of("skew", "training", training)?, options)
        .named(InputNames::Arguments);
    run_compare(
        py,
        "skew",
        Command::Skew,
        schemas,
        config,
        baseline,
        None,
        &sources,
    )
}

/// One part of a view's data compared for `skew(compared=...)`: the schema file
/// (`schema_label`, its `schema_bytes`), the names of the serving and training data in
/// findings, and the part's rows of both (Arrow tables holding every row of their entity
/// keys), with `skew`'s options. Returns the counts as text. Runs on the calling thread.
#[pyfunction]
#[pyo3(signature = (schema_label, schema_bytes, serving_label, training_label, serving, training, *, time_tolerance, serving_time = None, absolute_tolerance = 0.0, relative_tolerance = 0.0, ulps = 0, sample_rows = 5))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn skew_part(
    py: Python<'_>,
    schema_label: String,
    schema_bytes: Vec<u8>,
    serving_label: String,
    training_label: String,
    serving: Bound<'_, PyAny>,
    training: Bound<'_, PyAny>,
    time_tolerance: String,
    serving_time: Option<String>,
    absolute_tolerance: f64,
    relative_tolerance: f64,
    ulps: u64,
    sample_rows: usize,
) -> PyResult<String> {
    use arrowfeat_gate::skew::{compare_part_of, SkewPart};
    let options = skew_options(
        &time_tolerance,
        serving_time,
        absolute_tolerance,
        relative_tolerance,
        ulps,
        sample_rows,
    )?;
    let serving = part_table("skew", serving_label, serving)?;
    let training = part_table("skew", training_label, training)?;
    // A part that cannot be compared is a finding of the whole run, not a failed Spark job.
    detach(py, "skew", move || {
        match arrowfeat_validator::checks::load_bytes(&schema_label, &schema_bytes) {
            (_, Some(file)) => compare_part_of(&file, &serving, &training, &options),
            (_, None) => SkewPart::unreadable(
                serving.label().to_string(),
                format!(
                    "the schema file {} does not parse",
                    arrowfeat_common::quote(&schema_label, 200)
                ),
            ),
        }
        .to_json()
    })
}

/// Runs `command` (drift, skew) over `sources` through the validator's pipeline, as its
/// CLI subcommand does.
#[allow(clippy::too_many_arguments)]
fn run_compare(
    py: Python<'_>,
    function: &str,
    command: arrowfeat_validator::pipeline::Command,
    schemas: std::path::PathBuf,
    config: Option<std::path::PathBuf>,
    baseline: Option<std::path::PathBuf>,
    store: Option<arrowfeat_validator::pipeline::StoreSource<'static>>,
    sources: &dyn arrowfeat_validator::run::DataSource,
) -> PyResult<CheckReport> {
    use arrowfeat_validator::pipeline::{self, BaselineSource, ConfigSource, Inputs, Names};
    let inputs = Inputs {
        command,
        config: match config {
            Some(path) => ConfigSource::File(path),
            None => ConfigSource::Discover(std::path::PathBuf::from(".")),
        },
        names: Names::ARGUMENTS,
        baseline: match baseline {
            Some(path) => BaselineSource::File(path),
            None => BaselineSource::None,
        },
        data: Some(sources),
        store,
        ..Inputs::check(schemas)
    };
    let run =
        detach(py, function, move || pipeline::run(inputs))?.map_err(|e| value_error(e.message))?;
    Ok(CheckReport { run })
}
