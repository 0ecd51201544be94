//! Drift of a view's data: DataFusion summarizes each feature of the reference and the
//! current data (its distinct values with their counts, one grouped query per feature),
//! and [`arrowfeat_validator::checks::drift`] profiles and compares them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use arrowfeat_common::quote;
use arrowfeat_validator::checks::drift::{
    coarsened, features, findings, profile, DriftFeature, FeatureProfile, Float, Kind,
    ReferenceProfile, Summary, ViewProfile,
};
use arrowfeat_validator::config::Config;
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::run::DataSource;
use arrowfeat_validator::spec::model::SchemaFile;
use arrowfeat_validator::store::StoreView;
use arrowfeat_validator::types::FeatureType;
use arrowfeat_validator::yaml::Pos;
use datafusion::arrow::array::{Array, Float64Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use serde::{Deserialize, Serialize};

use crate::from_store::StoreSources;
use crate::{
    collect, ident, is_float, register, run_blocking, unreadable, value_expr, ByView, Data, Given,
    InputNames, TABLE,
};

/// Where the reference comes from.
#[derive(Debug)]
pub enum Reference {
    /// Reference data, profiled in this run.
    Data(ByView),
    /// A profile saved by an earlier run (`--save-reference`), named by `label`.
    Profile {
        label: String,
        profile: ReferenceProfile,
    },
}

/// The reference of one view: where it comes from, and its features' profiles.
struct ViewReference {
    label: String,
    features: BTreeMap<String, FeatureProfile>,
    /// Features of the reference data that cannot be profiled (missing, wrong type).
    problems: Vec<Check>,
    /// Reference data read in this run (not a saved profile).
    raw: bool,
}

/// The reference and current data of views, compared with DataFusion.
#[derive(Debug)]
pub struct DriftSources {
    reference: Reference,
    current: ByView,
    /// The profiles of the reference data read in this run, as they are saved.
    saved: Mutex<ReferenceProfile>,
    /// Views whose reference data could not be profiled in full, with the first reason.
    incomplete: Mutex<Vec<(String, String)>>,
    /// Views given no current data read their store's batch source.
    current_from_store: Option<StoreSources>,
    /// Views given no reference data read their store's batch source.
    reference_from_store: Option<StoreSources>,
    /// The reference's profile is to be saved: a view without current data is only
    /// profiled, and one whose reference is not profiled in full says the profile is not
    /// saved.
    saving: bool,
    names: InputNames,
}

impl DriftSources {
    pub fn new(reference: Reference, current: Vec<(Option<String>, Data)>) -> DriftSources {
        DriftSources {
            reference,
            current: ByView::new(current),
            saved: Mutex::new(ReferenceProfile::default()),
            incomplete: Mutex::new(Vec::new()),
            current_from_store: None,
            reference_from_store: None,
            saving: false,
            names: InputNames::Flags,
        }
    }

    /// Findings name the inputs as `names` spells them (the CLI's by default).
    pub fn named(mut self, names: InputNames) -> DriftSources {
        self.names = names;
        self
    }

    /// The reference's profile is to be saved (`--save-reference`).
    pub fn saving(mut self, saving: bool) -> DriftSources {
        self.saving = saving;
        self
    }

    /// Views given no current data (`current`) or no reference data (`reference`) read
    /// the file their store's batch source names, as `check --data-from-store` does.
    /// Refused for both: the store names one source per view, which would be compared
    /// with itself.
    pub fn with_store_sources(
        mut self,
        current: Option<StoreSources>,
        reference: Option<StoreSources>,
    ) -> Result<DriftSources, String> {
        if current.is_some() && reference.is_some() {
            return Err("the current and the reference data cannot both come from the store: it names one source per view, which would be compared with itself (compare the store's sources with a profile saved earlier, or with reference data given by path)".to_string());
        }
        self.current_from_store = current;
        self.reference_from_store = reference;
        Ok(self)
    }

    /// The profile of the reference data read in this run, as `--save-reference` writes
    /// it (at most [`arrowfeat_validator::checks::drift::ECDF_POINTS`] points per feature).
    pub fn saved_profile(&self) -> ReferenceProfile {
        self.saved
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Why the profile of this run's reference data must not be saved: a view's reference
    /// could not be profiled in full (a feature missing or of another type, or no file its
    /// store names), some input could not be read (`input_unreadable`: the run's exit
    /// code is 2), or no view was profiled; so that a partial profile would replace a
    /// complete one. `None`: it may be saved.
    pub fn not_saved_because(&self, input_unreadable: bool) -> Option<String> {
        let incomplete = self.incomplete.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((view, _)) = incomplete.first() {
            return Some(format!(
                "the reference data of view `{}` could not be profiled in full (see the report); a partial profile would replace a complete one",
                quote(view, 100)
            ));
        }
        if input_unreadable {
            return Some(
                "some input could not be read (see the report), so the new profile might lack a view that the one saved before holds"
                    .into(),
            );
        }
        let saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        saved.views.is_empty().then(|| {
            "no view was profiled (see the report: a schema file with errors is not compared)"
                .to_string()
        })
    }

    /// Why `view`'s reference was not profiled in full, if it was not.
    fn incomplete_because(&self, view: &str) -> Option<String> {
        self.incomplete
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(v, _)| v == view)
            .map(|(_, why)| why.clone())
    }

    fn mark_incomplete(&self, view: &str, why: &str) {
        let mut incomplete = self.incomplete.lock().unwrap_or_else(|p| p.into_inner());
        if !incomplete.iter().any(|(v, _)| v == view) {
            incomplete.push((view.to_string(), why.to_string()));
        }
    }

    fn reference_of(
        &self,
        file: &SchemaFile,
        store: Option<&StoreView>,
        compared: &[DriftFeature],
    ) -> Result<Option<ViewReference>, Box<Check>> {
        let view = &file.spec.name;
        match &self.reference {
            Reference::Profile { label, profile } => match profile.views.get(view) {
                Some(found) => Ok(Some(ViewReference {
                    label: label.clone(),
                    features: found.features.clone(),
                    problems: Vec::new(),
                    raw: false,
                })),
                None => Err(Box::new(Check::fail(
                    Rule::DriftReference,
                    format!("drift: view `{}`", quote(view, 100)),
                    Expected("a reference profile of the view"),
                    Actual("none"),
                    Pos::UNKNOWN,
                    format!(
                        "the reference profile {label} has no view `{}` (it profiles {}): save the reference again with this schema",
                        quote(view, 100),
                        if profile.views.is_empty() {
                            "no view".to_string()
                        } else {
                            profile
                                .views
                                .keys()
                                .take(5)
                                .map(|v| format!("`{}`", quote(v, 100)))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                ))),
            },
            Reference::Data(by_view) => {
                let given = self.names.given("--reference");
                let (data, hint) = match (
                    by_view.get(view, given)?,
                    &self.reference_from_store,
                ) {
                    (Some(data), _) => (data, String::new()),
                    (None, Some(sources)) => (
                        sources
                            .data_of(view, store, given, "reference data")
                            .inspect_err(|e| self.mark_incomplete(view, &e.message))?,
                        sources.unreadable_hint(view, given),
                    ),
                    (None, None) => return Ok(None),
                };
                let data = data.for_file(file);
                let label = data.label().to_string();
                let summaries = run_blocking(summarize(&data, compared))
                    .and_then(|s| s)
                    .map_err(|message| Box::new(unreadable(&label, message + &hint)))
                    .inspect_err(|e| self.mark_incomplete(view, &e.message))?;
                let mut profiles = BTreeMap::new();
                let mut problems = Vec::new();
                for feature in compared {
                    match summaries.get(&feature.name) {
                        Some(Ok(summary)) => {
                            profiles.insert(feature.name.clone(), profile(feature.kind, summary));
                        }
                        Some(Err(check)) => problems.push(check.clone()),
                        None => {}
                    }
                }
                if let Some(first) = problems.first() {
                    self.mark_incomplete(view, &first.message);
                }
                let mut saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
                saved.views.insert(
                    view.clone(),
                    ViewProfile {
                        source: label.clone(),
                        features: profiles.iter().map(|(k, p)| (k.clone(), p.thinned())).collect(),
                    },
                );
                Ok(Some(ViewReference {
                    label,
                    features: profiles,
                    problems,
                    raw: true,
                }))
            }
        }
    }
}

impl DataSource for DriftSources {
    fn check(
        &self,
        file: &SchemaFile,
        store: Option<&StoreView>,
        config: &Config,
    ) -> Option<Vec<Check>> {
        let view = &file.spec.name;
        let (compared, skipped) = features(file);
        // `Some(Err)`: the store names no current data for the view.
        let given = self.names.given("--current");
        let (current, hint) = match (self.current.get(view, given), &self.current_from_store) {
            (Ok(None), Some(sources)) => (
                Some(sources.data_of(view, store, given, "current data")),
                sources.unreadable_hint(view, given),
            ),
            (Ok(current), _) => (current.map(Ok), String::new()),
            (Err(refused), _) => return Some(vec![*refused]),
        };
        // The reference first, even when the current data is not read: a view whose
        // reference is not profiled in full stops the save.
        let reference = self.reference_of(file, store, &compared);
        let mut out = Vec::new();
        if let Some(why) = self.saving.then(|| self.incomplete_because(view)).flatten() {
            out.push(not_saved(view, &why));
        }
        let reference = match reference {
            Ok(Some(found)) => found,
            Ok(None) => {
                return match current {
                    None => {
                        let Reference::Data(references) = &self.reference else {
                            return None;
                        };
                        let reference = self.names.given("--reference").for_view(view);
                        let (named, done, give) = match self.saving {
                            true => (references.by_name(), "profiled", reference),
                            false => (
                                references.by_name() || self.current.by_name(),
                                "compared",
                                format!("{reference} and {}", given.for_view(view)),
                            ),
                        };
                        let finding = named.then(|| crate::not_given(view, done, &give))?;
                        // A profile without this view must not replace one that has it.
                        self.mark_incomplete(view, &finding.message);
                        let refused = self.saving.then(|| not_saved(view, &finding.message));
                        Some([finding].into_iter().chain(refused).collect())
                    }
                    Some(Err(finding)) => Some(vec![*finding]),
                    Some(Ok(current)) => Some(vec![no_pair(
                        view,
                        "reference data",
                        current.label(),
                        self.names.given("--reference"),
                    )]),
                };
            }
            Err(check) => {
                out.push(*check);
                out.extend(current.and_then(Result::err).map(|f| *f));
                return Some(out);
            }
        };
        out.extend(reference.problems.iter().cloned());
        let current = match current {
            Some(Ok(current)) => current,
            Some(Err(finding)) => {
                out.push(*finding);
                return Some(out);
            }
            // Only saving: the reference's own problems are the report.
            None if self.saving => return Some(out),
            None => {
                out.push(no_pair(view, "current data", &reference.label, given));
                return Some(out);
            }
        };
        let current = current.for_file(file);
        let label = current.label().to_string();
        let summaries = match run_blocking(summarize(&current, &compared)).and_then(|s| s) {
            Ok(summaries) => summaries,
            Err(message) => {
                out.push(unreadable(&label, message + &hint));
                return Some(out);
            }
        };
        for feature in &compared {
            let profiled = reference.features.get(&feature.name);
            if profiled.is_none() && reference.raw {
                continue; // the reference data's finding says why
            }
            match summaries.get(&feature.name) {
                Some(Ok(summary)) => out.extend(findings(
                    (&reference.label, &label),
                    feature,
                    profiled,
                    summary,
                    &config.drift,
                )),
                Some(Err(check)) => out.push(check.clone()),
                None => {}
            }
        }
        for (name, why) in skipped {
            out.push(Check::pass(
                Rule::DriftPsi,
                format!(
                    "drift {}: feature `{}`: not compared",
                    quote(&label, 200),
                    quote(&name, 100)
                ),
                Expected("a numeric or categorical feature"),
                Actual(why),
                file.feature_pos(&name),
            ));
        }
        Some(out)
    }

    fn undeclared(&self) -> Option<String> {
        let reference = match &self.reference {
            Reference::Data(by_view) => by_view.undeclared(self.names.given("--reference")),
            Reference::Profile { .. } => None,
        };
        self.current
            .undeclared(self.names.given("--current"))
            .or(reference)
    }

    fn label(&self) -> String {
        let from_store = |sources: &StoreSources| {
            format!(
                "data at the batch sources of {}",
                quote(sources.label(), 200)
            )
        };
        let reference = match &self.reference {
            Reference::Data(by_view) => {
                let mut labels = by_view.labels();
                labels.extend(self.reference_from_store.as_ref().map(from_store));
                labels.join(", ")
            }
            Reference::Profile { label, .. } => format!("the profile {label}"),
        };
        let mut current = self.current.labels();
        current.extend(self.current_from_store.as_ref().map(from_store));
        let current = current.join(", ");
        if current.is_empty() {
            return format!("reference {reference}");
        }
        format!("reference {reference} and current {current}")
    }
}

/// The finding of a view given one side of the comparison only: `missing` ("reference
/// data"), the side it has (`given`, named), and the flag that gives the other.
fn no_pair(view: &str, missing: &'static str, given: &str, lacking: Given) -> Check {
    Check::fail(
        Rule::DriftReference,
        format!("drift: view `{}`", quote(view, 100)),
        Expected(format!("{missing} of the view")),
        Actual("none"),
        Pos::UNKNOWN,
        format!(
            "view `{}` has {} ({}) but no {missing}, so it was not compared: give {}",
            quote(view, 100),
            match missing {
                "reference data" => "current data",
                _ => "reference data",
            },
            quote(given, 200),
            lacking.for_view(view)
        ),
    )
}

/// The finding that the reference profile is not saved because `view`'s reference was
/// not profiled in full.
fn not_saved(view: &str, why: &str) -> Check {
    Check::fail(
        Rule::ReferenceNotSaved,
        format!("drift: view `{}`: reference profile", quote(view, 100)),
        Expected("a complete profile to save"),
        Actual("incomplete"),
        Pos::UNKNOWN,
        format!(
            "the reference profile is not saved: the reference data of view `{}` could not be profiled in full ({}), and a partial profile would replace a complete one",
            quote(view, 100),
            arrowfeat_common::cap(why, 300)
        ),
    )
}

/// A feature's summary over one part of the data, as text (numbers as [`Float`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct FeaturePart {
    rows: u64,
    nulls: u64,
    nans: u64,
    numbers: Vec<(Float, u64)>,
    categories: Vec<(String, u64)>,
}

/// The summaries of a view's features over one part of the data (a partition of a
/// Spark DataFrame), what a worker sends: features whose column can be compared, each
/// coarsened against the saved reference when there is one
/// ([`arrowfeat_validator::checks::drift::coarsened`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryPart {
    features: BTreeMap<String, FeaturePart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unreadable: Option<String>,
}

impl SummaryPart {
    /// A part that could not be summarized, and why.
    pub fn unreadable(message: String) -> SummaryPart {
        SummaryPart {
            features: BTreeMap::new(),
            unreadable: Some(message),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<SummaryPart, String> {
        serde_json::from_str(text).map_err(|e| {
            format!(
                "not the summaries of a part of the data (line {}, column {})",
                e.line(),
                e.column()
            )
        })
    }
}

/// [`summarize`] of `file`'s features over `data` (a partition, on a Spark worker), on
/// the calling thread; numbers coarsened against `reference` (a saved profile of the
/// view) when given. A part that cannot be read says why.
pub fn summarize_part_of(
    file: &SchemaFile,
    data: &Data,
    reference: Option<&ViewProfile>,
) -> SummaryPart {
    let (compared, _) = features(file);
    let summaries =
        crate::reader_runtime().and_then(|runtime| runtime.block_on(summarize(data, &compared)));
    let summaries = match summaries {
        Ok(summaries) => summaries,
        Err(message) => return SummaryPart::unreadable(message),
    };
    let features = summaries
        .into_iter()
        .filter_map(|(name, summary)| {
            let summary = summary.ok()?;
            let summary = match reference.and_then(|r| r.features.get(&name)) {
                Some(profile) => coarsened(profile, &summary),
                None => summary,
            };
            let part = FeaturePart {
                rows: summary.rows,
                nulls: summary.nulls,
                nans: summary.nans,
                numbers: summary
                    .numbers
                    .into_iter()
                    .map(|(v, c)| (Float(v), c))
                    .collect(),
                categories: summary.categories,
            };
            Some((name, part))
        })
        .collect();
    SummaryPart {
        features,
        unreadable: None,
    }
}

/// Each feature's summary over `data`, or the finding that its column cannot be compared
/// (missing, or of a type without the feature's kind of distribution). Data summarized
/// in parts: the findings of its columns, and the parts' summaries merged.
pub async fn summarize(
    data: &Data,
    compared: &[DriftFeature],
) -> Result<BTreeMap<String, Result<Summary, Check>>, String> {
    let Data::Summarized {
        label,
        schema,
        parts,
    } = data
    else {
        return summarize_table(data, compared).await;
    };
    let columns = Data::Table {
        label: label.clone(),
        schema: schema.clone(),
        batches: Vec::new(),
    };
    let mut out = summarize_table(&columns, compared).await?;
    let parts: Vec<&SummaryPart> = parts.iter().flat_map(|(_, parts)| parts).collect();
    if let Some(reason) = parts.iter().filter_map(|p| p.unreadable.as_ref()).min() {
        return Err(reason.clone());
    }
    for (name, slot) in out.iter_mut() {
        if let Ok(summary) = slot {
            *summary = parts.iter().filter_map(|p| p.features.get(name)).fold(
                Summary::default(),
                |merged, part| {
                    merged.merge(Summary {
                        rows: part.rows,
                        nulls: part.nulls,
                        nans: part.nans,
                        numbers: part.numbers.iter().map(|(v, c)| (v.0, *c)).collect(),
                        categories: part.categories.clone(),
                    })
                },
            );
        }
    }
    Ok(out)
}

/// [`summarize`] reading the data.
async fn summarize_table(
    data: &Data,
    compared: &[DriftFeature],
) -> Result<BTreeMap<String, Result<Summary, Check>>, String> {
    // Timestamp features of CSV files are read at their declared units and zones, as
    // `check --data` reads them: the same instants as in Parquet.
    let times = compared
        .iter()
        .filter_map(|feature| crate::declared_time(&feature.name, &feature.declared))
        .collect();
    let (ctx, schema) = register(
        data,
        None,
        &arrowfeat_udf::sql::files::TextTypes::new(times).with_text(
            compared
                .iter()
                .filter(|f| f.declared == FeatureType::String)
                .map(|f| f.name.clone())
                .collect(),
        ),
    )
    .await?;
    let source = quote(data.label(), 200);
    let mut out = BTreeMap::new();
    let mut counted: Vec<(&DriftFeature, String, Option<String>)> = Vec::new();
    for feature in compared {
        let subject = format!("drift {source}: feature `{}`", quote(&feature.name, 100));
        let Ok(field) = schema.field_with_name(&feature.name) else {
            out.insert(
                feature.name.clone(),
                Err(Check::fail(
                    Rule::DataColumnMissing,
                    subject,
                    Expected(format!("a column of type {}", feature.declared)),
                    Actual("missing"),
                    feature.pos,
                    format!(
                        "the data {source} has no column `{}` (feature {})",
                        quote(&feature.name, 100),
                        feature.declared
                    ),
                )),
            );
            continue;
        };
        // A feature compared by its missing share alone is judged as `check --data` judges
        // its type, in full: a list of another element type, or a string for a list, has
        // no missing share of the feature. Distributions are compared across widths.
        // Spark and pandas keep an embedding as a list of its numbers, and numpy's are
        // float64: its missing share is the embedding's.
        let float = |t: &FeatureType| matches!(t, FeatureType::Float32 | FeatureType::Float64);
        let embedding_as_list = match (&feature.declared, crate::feature_type(field.data_type())) {
            (FeatureType::Embedding { .. }, Some(FeatureType::List(item))) => float(&item),
            (
                FeatureType::Embedding { dim, .. },
                Some(FeatureType::Embedding {
                    dim: found,
                    element,
                }),
            ) => *dim == found && float(&element),
            _ => false,
        };
        let judge = match feature.kind {
            Kind::Presence => crate::incompatible_type,
            Kind::Numeric | Kind::Categorical => crate::wrong_kind,
        };
        let refused = judge(
            subject.clone(),
            &source,
            &feature.name,
            field.data_type(),
            &feature.declared,
            feature.pos,
        );
        if let Some(refused) = refused.filter(|_| !embedding_as_list) {
            out.insert(feature.name.clone(), Err(refused));
            continue;
        }
        let (expr, data_type) = value_expr(&feature.name, field.data_type());
        let value = match (feature.kind, data_type) {
            (Kind::Numeric, t)
                if t.is_integer()
                    || t.is_floating()
                    || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) =>
            {
                Some(format!("CAST({expr} AS DOUBLE)"))
            }
            // Nanoseconds since the epoch, whatever the file's unit, so a reference in
            // microseconds and current data in nanoseconds compare as the same instants.
            (Kind::Numeric, DataType::Timestamp(unit, _)) => {
                let per_unit = match unit {
                    datafusion::arrow::datatypes::TimeUnit::Second => "1e9",
                    datafusion::arrow::datatypes::TimeUnit::Millisecond => "1e6",
                    datafusion::arrow::datatypes::TimeUnit::Microsecond => "1e3",
                    datafusion::arrow::datatypes::TimeUnit::Nanosecond => "1.0",
                };
                Some(format!(
                    "CAST(arrow_cast({expr}, 'Int64') AS DOUBLE) * {per_unit}"
                ))
            }
            // Categories of the declared kind only: 0/1 integers are not booleans.
            (Kind::Categorical, t)
                if match &feature.declared {
                    FeatureType::Bool => *t == DataType::Boolean,
                    FeatureType::String => {
                        matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
                    }
                    _ => t.is_integer(),
                } =>
            {
                Some(format!("CAST({expr} AS VARCHAR)"))
            }
            // No value at all (a CSV or JSON column of empty values): nulls only.
            (Kind::Numeric, DataType::Null) => Some("CAST(NULL AS DOUBLE)".to_string()),
            (Kind::Categorical, DataType::Null) => Some("CAST(NULL AS VARCHAR)".to_string()),
            // Only rows and nulls are counted: a null list is missing, a list holding a
            // NaN or a null is not.
            (Kind::Presence, _) => Some(String::new()),
            _ => None,
        };
        let Some(value) = value else {
            out.insert(
                feature.name.clone(),
                Err(Check::fail(
                    Rule::DataColumnType,
                    subject,
                    Expected(feature.declared.to_string()),
                    Actual(field.data_type().to_string()),
                    feature.pos,
                    format!(
                        "`{}` in {source} is {}, which has no {} distribution to compare with feature type {}",
                        quote(&feature.name, 100),
                        field.data_type(),
                        match feature.kind {
                            Kind::Numeric => "numeric",
                            Kind::Categorical | Kind::Presence => "categorical",
                        },
                        feature.declared
                    ),
                )),
            );
            continue;
        };
        let nan = is_float(data_type).then(|| format!("isnan({expr})"));
        counted.push((feature, value, nan));
    }
    if counted.is_empty() {
        return Ok(out);
    }
    // Rows, nulls and NaN of every feature in one scan.
    let mut select = vec!["count(*) AS \"#rows\"".to_string()];
    for (index, (feature, _, nan)) in counted.iter().enumerate() {
        let column = ident(&feature.name);
        select.push(format!(
            "count(*) FILTER (WHERE {column} IS NULL) AS \"#nulls {index}\""
        ));
        select.push(match nan {
            Some(nan) => format!("count(*) FILTER (WHERE {nan}) AS \"#nan {index}\""),
            None => format!("0 AS \"#nan {index}\""),
        });
    }
    let row = crate::one_row(&ctx, &format!("SELECT {} FROM {TABLE}", select.join(", "))).await?;
    for (index, (feature, value, _)) in counted.iter().enumerate() {
        let mut summary = Summary {
            rows: row[0],
            nulls: row[1 + 2 * index],
            nans: row[2 + 2 * index],
            ..Summary::default()
        };
        if feature.kind == Kind::Presence {
            out.insert(feature.name.clone(), Ok(summary));
            continue;
        }
        let query = format!(
            "SELECT {value} AS v, count(*) AS n FROM {TABLE} WHERE {} IS NOT NULL GROUP BY 1",
            ident(&feature.name)
        );
        for batch in collect(&ctx, &query).await? {
            let counts = datafusion::arrow::compute::cast(batch.column(1), &DataType::Int64)
                .map_err(|e| e.to_string())?;
            let counts = counts
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or("a count is not an integer")?;
            match feature.kind {
                Kind::Numeric => {
                    let values =
                        datafusion::arrow::compute::cast(batch.column(0), &DataType::Float64)
                            .map_err(|e| e.to_string())?;
                    let values = values
                        .as_any()
                        .downcast_ref::<Float64Array>()
                        .ok_or("a value is not a number")?;
                    for i in 0..batch.num_rows() {
                        if values.is_valid(i) {
                            summary.numbers.push((
                                values.value(i),
                                u64::try_from(counts.value(i)).unwrap_or(0),
                            ));
                        }
                    }
                }
                Kind::Categorical | Kind::Presence => {
                    let values = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8)
                        .map_err(|e| e.to_string())?;
                    let values = values
                        .as_any()
                        .downcast_ref::<StringArray>()
                        .ok_or("a value is not text")?;
                    for i in 0..batch.num_rows() {
                        if values.is_valid(i) {
                            summary.categories.push((
                                values.value(i).to_string(),
                                u64::try_from(counts.value(i)).unwrap_or(0),
                            ));
                        }
                    }
                }
            }
        }
        out.insert(feature.name.clone(), Ok(summary));
    }
    Ok(out)
}
