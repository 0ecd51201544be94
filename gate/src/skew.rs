//! Training/serving skew of a view: both tables are read with arrowfeat's file reading,
//! each serving row is matched with the training row of its entity keys current at the
//! serving time, within a time tolerance, by the point-in-time kernel (the join of
//! `arrowfeat training-set`, with the tolerance as its TTL), and each feature's values
//! are compared by [`arrowfeat_udf::kernels::compare`]. The validator's
//! [`arrowfeat_validator::checks::skew`] says what the counts mean.

use std::sync::Arc;

use arrowfeat_common::quote;
use arrowfeat_udf::kernels::compare::{differ, uses_tolerance, Tolerance};
use arrowfeat_udf::kernels::point_in_time::join::{
    comparable_keys, point_in_time_join, FeatureSpec, PointInTimeJoin, Spelling,
};
use arrowfeat_udf::kernels::point_in_time::PointInTimeOptions;
use arrowfeat_validator::checks::skew::{findings, FeatureSkew, SkewCounts, SkewLabels};
use arrowfeat_validator::config::Config;
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::run::DataSource;
use arrowfeat_validator::spec::model::SchemaFile;
use arrowfeat_validator::store::StoreView;
use arrowfeat_validator::types::FeatureType;
use arrowfeat_validator::yaml::Pos;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use crate::part::PartMatched;
use crate::{
    collect, count_matching, ident, register, run_blocking, unreadable, ByView, Data, InputNames,
    Tail, TABLE,
};

/// The name of the training row index carried through the join (no schema name has `#`).
const ROW: &str = "#training row";

/// How rows and values are matched.
#[derive(Debug, Clone)]
pub struct SkewOptions {
    /// A training row matches a serving row at time t when its event time is in
    /// [t - tolerance, t] (nanoseconds, >= 0).
    pub time_tolerance_nanos: i64,
    /// How the tolerance is shown ("5m").
    pub time_tolerance_text: String,
    pub values: Tolerance,
    /// The serving table's time column; `None`: the schema's event timestamp name.
    pub serving_time: Option<String>,
    /// At most this many rows are sampled per finding.
    pub sample_rows: usize,
}

/// The serving and training data of views, compared.
#[derive(Debug)]
pub struct SkewSources {
    serving: ByView,
    training: ByView,
    options: SkewOptions,
    names: InputNames,
}

impl SkewSources {
    pub fn new(
        serving: Vec<(Option<String>, Data)>,
        training: Vec<(Option<String>, Data)>,
        options: SkewOptions,
    ) -> SkewSources {
        SkewSources {
            serving: ByView::new(serving),
            training: ByView::new(training),
            options,
            names: InputNames::Flags,
        }
    }

    /// Findings name the inputs as `names` spells them (the CLI's by default).
    pub fn named(mut self, names: InputNames) -> SkewSources {
        self.names = names;
        self
    }
}

fn value_tolerance_text(t: &Tolerance) -> String {
    use arrowfeat_validator::text::number;
    let mut parts = Vec::new();
    if t.absolute > 0.0 {
        parts.push(format!("absolute {}", number(t.absolute)));
    }
    if t.relative > 0.0 {
        parts.push(format!("relative {}", number(t.relative)));
    }
    if t.ulps > 0 {
        parts.push(format!("{} ULPs", t.ulps));
    }
    if parts.is_empty() {
        "exactly equal".to_string()
    } else {
        format!("floats within {}", parts.join(" or "))
    }
}

impl DataSource for SkewSources {
    fn check(
        &self,
        file: &SchemaFile,
        _store: Option<&StoreView>,
        _config: &Config,
    ) -> Option<Vec<Check>> {
        let view = &file.spec.name;
        let serving_given = self.names.given("--serving");
        let training_given = self.names.given("--training");
        let serving = match self.serving.get(view, serving_given) {
            Ok(found) => found,
            Err(refused) => return Some(vec![*refused]),
        };
        let training = match self.training.get(view, training_given) {
            Ok(found) => found,
            Err(refused) => return Some(vec![*refused]),
        };
        let (serving, training) = match (serving, training) {
            (None, None) => {
                let named = self.serving.by_name() || self.training.by_name();
                let give = format!(
                    "{} and {}",
                    serving_given.for_view(view),
                    training_given.for_view(view)
                );
                return named.then(|| vec![crate::not_given(view, "compared", &give)]);
            }
            (Some(serving), Some(training)) => (serving, training),
            (serving, _) => {
                let (given, lacking) = match serving {
                    Some(_) => (serving_given, training_given),
                    None => (training_given, serving_given),
                };
                // Not `skew-missing` (rows the training data lacks), which teams lower
                // for sampled logs: a view not compared at all must not pass with it.
                return Some(vec![Check::fail(
                    Rule::DataNotRead,
                    format!("skew: view `{}`", quote(view, 100)),
                    Expected("serving and training data of the view"),
                    Actual(format!("only {given}")),
                    Pos::UNKNOWN,
                    format!(
                        "{given} gives data of view `{}` but {lacking} does not: give {}",
                        quote(view, 100),
                        lacking.for_view(view)
                    ),
                )]);
            }
        };
        let serving = serving.for_file(file);
        let compared = run_blocking(compare_view(file, &serving, &training, &self.options))
            .map_err(|message| (serving.label().to_string(), message))
            .and_then(|result| result);
        Some(match compared {
            Ok(checks) => checks,
            Err((label, message)) => vec![unreadable(&label, message)],
        })
    }

    fn undeclared(&self) -> Option<String> {
        self.serving
            .undeclared(self.names.given("--serving"))
            .or_else(|| self.training.undeclared(self.names.given("--training")))
    }

    fn label(&self) -> String {
        format!(
            "serving {} and training {}",
            self.serving.labels().join(", "),
            self.training.labels().join(", ")
        )
    }
}

/// What one part of the data counted (a bucket of entity keys of both tables, on a Spark
/// worker, or both tables whole), to merge with the other parts' counts: every entity
/// key's serving and training rows are in one part, so counts add up, and each sample
/// holds the first rows in one total order (their sort keys), whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SkewPart {
    pub serving_rows: u64,
    pub training_rows: u64,
    /// Serving rows without a training row to match.
    pub missing: PartMatched,
    /// Training rows no serving row matched.
    pub extra: PartMatched,
    /// The compared features, in the schema's order.
    pub features: Vec<FeaturePart>,
    /// The part could not be compared: the data concerned and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<(String, String)>,
}

/// One feature's comparison in a part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeaturePart {
    pub name: String,
    /// Serving rows matched with a training row.
    pub compared: u64,
    pub mismatched: PartMatched,
    /// The serving and the training type, when some serving value does not convert to
    /// the training type unchanged: the feature is then a type finding, not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconverted: Option<(String, String)>,
    /// The values are compared exactly (not floats): the value tolerance does not apply.
    #[serde(default)]
    pub exact: bool,
}

impl SkewPart {
    /// A part that could not be compared: the data concerned, and why.
    pub fn unreadable(label: String, message: String) -> SkewPart {
        SkewPart {
            unreadable: Some((label, message)),
            ..SkewPart::default()
        }
    }

    /// The counts of both parts together; `limit`: the rows a sample keeps.
    pub fn merge(self, other: SkewPart, limit: usize) -> Result<SkewPart, String> {
        let names = |p: &SkewPart| {
            p.features
                .iter()
                .map(|f| f.name.clone())
                .collect::<Vec<_>>()
        };
        if names(&self) != names(&other) {
            return Err("the parts of the data were compared with different features".into());
        }
        Ok(SkewPart {
            serving_rows: self.serving_rows.saturating_add(other.serving_rows),
            training_rows: self.training_rows.saturating_add(other.training_rows),
            missing: self.missing.merge(other.missing, limit),
            extra: self.extra.merge(other.extra, limit),
            features: self
                .features
                .into_iter()
                .zip(other.features)
                .map(|(a, b)| FeaturePart {
                    name: a.name,
                    compared: a.compared.saturating_add(b.compared),
                    mismatched: a.mismatched.merge(b.mismatched, limit),
                    unconverted: a.unconverted.or(b.unconverted),
                    exact: a.exact,
                })
                .collect(),
            unreadable: None,
        })
    }

    /// Every part merged; `None` for no part. A part that could not be compared makes
    /// the whole unreadable (the first reason in text order, whatever the order of parts).
    pub fn merge_all(
        parts: impl IntoIterator<Item = SkewPart>,
        limit: usize,
    ) -> Result<Option<SkewPart>, (String, String)> {
        let parts: Vec<SkewPart> = parts.into_iter().collect();
        if let Some(reason) = parts.iter().filter_map(|p| p.unreadable.as_ref()).min() {
            return Err(reason.clone());
        }
        let mut merged: Option<SkewPart> = None;
        for part in parts {
            merged = Some(match merged {
                None => SkewPart {
                    missing: part.missing.cut(limit),
                    extra: part.extra.cut(limit),
                    features: part
                        .features
                        .into_iter()
                        .map(|f| FeaturePart {
                            mismatched: f.mismatched.cut(limit),
                            ..f
                        })
                        .collect(),
                    ..part
                },
                Some(merged) => merged.merge(part, limit).map_err(|e| (String::new(), e))?,
            });
        }
        Ok(merged)
    }

    /// The part as text, to send from a worker to the driver.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A part [`SkewPart::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<SkewPart, String> {
        crate::part::from_json(text, "the skew counts of a part of the data")
    }
}

/// The columns a view's skew reads: the entity keys, the times, the compared features.
struct Layout<'a> {
    keys: Vec<&'a str>,
    event_time: &'a str,
    serving_time: &'a str,
    created: Option<&'a str>,
    features: Vec<&'a str>,
    /// The event timestamp's declared type, at which the times of CSV and JSON files
    /// (the serving time and the created time too) are read.
    time_type: FeatureType,
    /// The features' declared types (those that parse).
    feature_types: Vec<(&'a str, FeatureType)>,
    /// The entity keys' declared types (those that parse) and where each is declared.
    key_types: Vec<(&'a str, FeatureType, Pos)>,
    /// Where the event timestamp is declared.
    time_pos: Pos,
}

impl<'a> Layout<'a> {
    fn of(file: &'a SchemaFile, options: &'a SkewOptions) -> Layout<'a> {
        let spec = &file.spec;
        let event_time = spec.event_timestamp.name.as_str();
        let serving_time = options.serving_time.as_deref().unwrap_or(event_time);
        // A column named twice is one column (`duplicate-feature` reports the schema): a
        // key named as a time is matched as that time.
        let mut keys: Vec<&str> = Vec::new();
        for entity in &spec.entities {
            let key = entity.join_key.as_str();
            if !keys.contains(&key) && key != event_time && key != serving_time {
                keys.push(key);
            }
        }
        let mut features: Vec<&str> = Vec::new();
        for feature in &spec.features {
            if !features.contains(&feature.name.as_str()) && !keys.contains(&feature.name.as_str())
            {
                features.push(&feature.name);
            }
        }
        Layout {
            keys,
            event_time,
            serving_time,
            created: spec.created_timestamp.as_ref().map(|c| c.name.as_str()),
            features,
            time_type: spec.event_timestamp.feature_type(),
            feature_types: spec
                .features
                .iter()
                .filter_map(|f| Some((f.name.as_str(), FeatureType::parse(&f.type_name).ok()?)))
                .collect(),
            key_types: spec
                .entities
                .iter()
                .enumerate()
                .filter_map(|(index, entity)| {
                    Some((
                        entity.join_key.as_str(),
                        FeatureType::parse(&entity.type_name).ok()?,
                        file.key_pos(&format!("/entities/{index}")),
                    ))
                })
                .collect(),
            time_pos: file.key_pos("/event_timestamp"),
        }
    }

    /// The findings that keep any row from being matched, in `check --data`'s words: a
    /// key or time of either side that the join cannot match as the declared type holds
    /// it ([`joinable`]) and that is neither that type nor compatible with it (an integer
    /// serving time for a timestamp, a naive time for a zoned one, a float or text key for
    /// an integer one, a type without an equivalent in the schema), each on the side at
    /// fault; or keys of the two sides, each of the declared kind,
    /// that the join cannot match (float32 beside float64).
    fn unmatchable(&self, serving: (&Schema, &str), training: (&Schema, &str)) -> Vec<Check> {
        let mut out = Vec::new();
        let sides = [
            ("serving", serving, self.serving_time),
            ("training", training, self.event_time),
        ];
        for (side, (schema, label), time) in sides {
            let keys = self
                .key_types
                .iter()
                .filter(|(key, _, _)| self.keys.contains(key))
                .map(|(key, declared, pos)| (*key, declared, *pos, "entity key"));
            for (column, declared, pos, role) in
                keys.chain([(time, &self.time_type, self.time_pos, "time")])
            {
                let Ok(field) = schema.field_with_name(column) else {
                    continue;
                };
                if joinable(declared, field.data_type()) {
                    continue;
                }
                out.extend(crate::incompatible_type(
                    format!(
                        "skew {}: {role} `{}`",
                        quote(label, 200),
                        quote(column, 100)
                    ),
                    &side_data(side, label),
                    column,
                    field.data_type(),
                    declared,
                    pos,
                ));
            }
        }
        if !out.is_empty() {
            return out;
        }
        for key in &self.keys {
            let (Ok(served), Ok(trained)) = (
                serving.0.field_with_name(key),
                training.0.field_with_name(key),
            ) else {
                continue;
            };
            if comparable_keys(served.data_type(), trained.data_type()) {
                continue;
            }
            let (served, trained) = type_names(served.data_type(), trained.data_type());
            let pos = self
                .key_types
                .iter()
                .find(|(k, _, _)| k == key)
                .map_or(Pos::UNKNOWN, |(_, _, pos)| *pos);
            out.push(Check::fail(
                Rule::DataColumnType,
                format!("skew: entity key `{}`", quote(key, 100)),
                Expected("one type on both sides"),
                Actual(format!("{served} and {trained}")),
                pos,
                format!(
                    "the entity key `{}` is {served} in the serving data {} and {trained} in the training data {}: the join matches keys of one type (text of any layout, bytes of any layout and integers of any width count as one); write both sides with one type",
                    quote(key, 100),
                    quote(serving.1, 200),
                    quote(training.1, 200)
                ),
            ));
        }
        out
    }

    /// The units and zones at which the times of CSV and JSON files are read: the event
    /// time's for the serving and the created time (the created time at the unit its
    /// text gives), each timestamp feature's own; and the keys and features declared as
    /// text, which CSV files give as text.
    fn text_types(&self) -> arrowfeat_udf::sql::files::TextTypes {
        use crate::{declared_time, text_unit};
        let times = [self.event_time, self.serving_time]
            .into_iter()
            .filter_map(|column| declared_time(column, &self.time_type))
            .chain(
                self.created
                    .and_then(|created| declared_time(created, &self.time_type))
                    .map(text_unit),
            )
            .chain(
                self.feature_types
                    .iter()
                    .filter_map(|(name, declared)| declared_time(name, declared)),
            );
        let text = self
            .key_types
            .iter()
            .map(|(name, declared, _)| (*name, declared))
            .chain(
                self.feature_types
                    .iter()
                    .map(|(name, declared)| (*name, declared)),
            )
            .filter(|(_, declared)| **declared == FeatureType::String)
            .map(|(name, _)| name.to_string())
            .collect();
        arrowfeat_udf::sql::files::TextTypes::new(times.collect()).with_text(text)
    }

    fn training_wanted(&self) -> Vec<&'a str> {
        self.keys
            .iter()
            .copied()
            .chain([self.event_time])
            .chain(self.created)
            .chain(self.features.iter().copied())
            .collect()
    }

    fn serving_wanted(&self) -> Vec<&'a str> {
        self.keys
            .iter()
            .copied()
            .chain([self.serving_time])
            .chain(self.features.iter().copied())
            .collect()
    }

    /// A column without which no row can be matched.
    fn structural(&self, column: &str) -> bool {
        self.keys.contains(&column) || column == self.serving_time || column == self.event_time
    }
}

/// The columns of `wanted` that `schema` has (each once), and those it lacks.
fn present<'a>(schema: &Schema, wanted: &[&'a str]) -> (Vec<&'a str>, Vec<String>) {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for name in wanted {
        match schema.field_with_name(name) {
            Ok(_) if !present.contains(name) => present.push(*name),
            Ok(_) => {}
            Err(_) => missing.push(name.to_string()),
        }
    }
    (present, missing)
}

/// A table read whole: the columns `wanted` that it has, the times of a CSV or JSON
/// file at `times`.
async fn read(
    data: &Data,
    wanted: &[&str],
    times: &arrowfeat_udf::sql::files::TextTypes,
) -> Result<RecordBatch, String> {
    let (ctx, schema) = register(data, None, times).await?;
    let (present, _) = present(&schema, wanted);
    let projected = Arc::new(Schema::new(
        present
            .iter()
            .map(|name| schema.field_with_name(name).cloned())
            .collect::<Result<Vec<Field>, _>>()
            .map_err(|e| e.to_string())?,
    ));
    if present.is_empty() {
        return Ok(RecordBatch::new_empty(projected));
    }
    let query = format!(
        "SELECT {} FROM {TABLE}",
        present
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let batches = collect(&ctx, &query).await?;
    datafusion::arrow::compute::concat_batches(&projected, &batches).map_err(|e| e.to_string())
}

/// [`SkewPart`] of `file`'s view over `serving` and `training` (tables holding a bucket of
/// entity keys, on a Spark worker), from synchronous code, on the calling thread only
/// (the host owns parallelism). An error is in the part: the driver reports it.
pub fn compare_part_of(
    file: &SchemaFile,
    serving: &Data,
    training: &Data,
    options: &SkewOptions,
) -> SkewPart {
    let layout = Layout::of(file, options);
    let times = layout.text_types();
    let run = async {
        let serving_batch = read(serving, &layout.serving_wanted(), &times)
            .await
            .map_err(|e| (serving.label().to_string(), e))?;
        let training_batch = read(training, &layout.training_wanted(), &times)
            .await
            .map_err(|e| (training.label().to_string(), e))?;
        compare_part(
            &layout,
            &serving_batch,
            &training_batch,
            options,
            serving.label(),
            training.label(),
        )
    };
    let compared = crate::reader_runtime()
        .map_err(|message| (serving.label().to_string(), message))
        .and_then(|runtime| runtime.block_on(run));
    compared.unwrap_or_else(|(label, message)| SkewPart::unreadable(label, message))
}

/// The checks of one view; an error names the data it concerns.
async fn compare_view(
    file: &SchemaFile,
    serving: &Data,
    training: &Data,
    options: &SkewOptions,
) -> Result<Vec<Check>, (String, String)> {
    let layout = Layout::of(file, options);
    let serving_label = serving.label().to_string();
    let training_label = training.label().to_string();
    let (part, serving_schema, training_schema) = match serving {
        Data::Compared { schema, parts, .. } => {
            let Data::Table {
                schema: training_schema,
                ..
            } = training
            else {
                return Err((
                    training_label,
                    "the training data of data compared in parts is not a table of its columns"
                        .into(),
                ));
            };
            let part = SkewPart::merge_all(
                parts.iter().flat_map(|(_, parts)| parts).cloned(),
                options.sample_rows,
            )
            .map_err(|(label, message)| match label.is_empty() {
                true => (serving_label.clone(), message),
                false => (label, message),
            })?
            .ok_or_else(|| {
                (
                    serving_label.clone(),
                    "no part of the data was compared with this schema file".to_string(),
                )
            })?;
            (part, schema.clone(), training_schema.clone())
        }
        _ => {
            let times = layout.text_types();
            let serving_batch = read(serving, &layout.serving_wanted(), &times)
                .await
                .map_err(|e| (serving_label.clone(), e))?;
            let training_batch = read(training, &layout.training_wanted(), &times)
                .await
                .map_err(|e| (training_label.clone(), e))?;
            let part = compare_part(
                &layout,
                &serving_batch,
                &training_batch,
                options,
                &serving_label,
                &training_label,
            )?;
            (part, serving_batch.schema(), training_batch.schema())
        }
    };
    Ok(finish(
        file,
        &layout,
        part,
        (&serving_schema, &serving_label),
        (&training_schema, &training_label),
        options,
    ))
}

/// The name of a serving and a training value in a mismatch's sampled row.
const SERVED: &str = "#served";
const TRAINED: &str = "#trained";

/// The counts of one part: `serving_batch` and `training_batch` hold the columns of
/// `layout` they have; every entity key's rows of both are here.
fn compare_part(
    layout: &Layout,
    serving_batch: &RecordBatch,
    training_batch: &RecordBatch,
    options: &SkewOptions,
    serving_label: &str,
    training_label: &str,
) -> Result<SkewPart, (String, String)> {
    let mut part = SkewPart {
        serving_rows: serving_batch.num_rows() as u64,
        training_rows: training_batch.num_rows() as u64,
        ..SkewPart::default()
    };
    let (_, serving_missing) = present(&serving_batch.schema(), &layout.serving_wanted());
    let (_, training_missing) = present(&training_batch.schema(), &layout.training_wanted());
    let lacking = |c: &str| {
        serving_missing
            .iter()
            .chain(&training_missing)
            .any(|m| m == c)
    };
    if serving_missing
        .iter()
        .chain(&training_missing)
        .any(|c| layout.structural(c))
    {
        return Ok(part); // no join without the keys and times
    }
    let sides = (
        (serving_batch.schema_ref().as_ref(), serving_label),
        (training_batch.schema_ref().as_ref(), training_label),
    );
    if !layout.unmatchable(sides.0, sides.1).is_empty() {
        return Ok(part); // `finish` reports them
    }
    let compared: Vec<&str> = layout
        .features
        .iter()
        .copied()
        .filter(|f| !lacking(f))
        .collect();
    let keys = &layout.keys;
    let serving_time = layout.serving_time;
    let on_serving = |e: String| (serving_label.to_string(), e);

    // The events: the training columns and each row's index, to tell matched rows.
    let mut event_fields: Vec<Field> = training_batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    event_fields.push(Field::new(ROW, DataType::UInt64, false));
    let mut event_columns: Vec<ArrayRef> = training_batch.columns().to_vec();
    event_columns.push(Arc::new(UInt64Array::from_iter_values(
        0..training_batch.num_rows() as u64,
    )));
    let events = RecordBatch::try_new(Arc::new(Schema::new(event_fields)), event_columns)
        .map_err(|e| (training_label.to_string(), e.to_string()))?;
    let spine_columns: Vec<&str> = keys.iter().copied().chain([serving_time]).collect();
    let index_of = |batch: &RecordBatch, columns: &[&str]| {
        columns
            .iter()
            .map(|c| batch.schema().index_of(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    };
    let spine = serving_batch
        .project(&index_of(serving_batch, &spine_columns).map_err(on_serving)?)
        .map_err(|e| on_serving(e.to_string()))?;
    let training_name = |f: &str| format!("#training {f}");
    let join = PointInTimeJoin {
        spine_keys: keys.iter().map(|k| k.to_string()).collect(),
        spine_time: serving_time.to_string(),
        event_keys: keys.iter().map(|k| k.to_string()).collect(),
        event_time: layout.event_time.to_string(),
        event_created: layout
            .created
            .filter(|c| !training_missing.iter().any(|m| m == c))
            .map(str::to_string),
        features: compared
            .iter()
            .map(|f| FeatureSpec::as_of(f).named(&training_name(f)))
            .chain([FeatureSpec::as_of(ROW).named(ROW)])
            .collect(),
        options: PointInTimeOptions {
            ttl: Some(options.time_tolerance_nanos),
            ..PointInTimeOptions::default()
        },
        spelling: Spelling::Cli,
    };
    let joined = point_in_time_join(&spine, &events, &join).map_err(|e| {
        // The kernel names the side of a column it could not read: the finding is that
        // side's data's.
        let label = match e.message.starts_with("events column") {
            true => training_label,
            false => serving_label,
        };
        (
            label.to_string(),
            format!(
                "cannot match the serving data {} with the training data {}: {}",
                quote(serving_label, 200),
                quote(training_label, 200),
                in_skew_words(&e.message)
            ),
        )
    })?;
    let rows = joined
        .column_by_name(ROW)
        .and_then(|c| c.as_any().downcast_ref::<UInt64Array>().cloned())
        .ok_or_else(|| on_serving("the join lost its row index".to_string()))?;
    let limit = options.sample_rows;
    // The serving rows' identity (keys, serving time) as the join returns it.
    let identity = joined
        .project(&index_of(&joined, &spine_columns).map_err(on_serving)?)
        .map_err(|e| on_serving(e.to_string()))?;
    let sampled = |kept: &mut PartMatched, rows: &RecordBatch, mask: &BooleanArray, tail: Tail| {
        count_matching(kept, rows, mask, limit, tail)
    };

    let unmatched = BooleanArray::from_iter((0..rows.len()).map(|row| Some(rows.is_null(row))));
    sampled(&mut part.missing, &identity, &unmatched, Tail::Nothing).map_err(on_serving)?;
    let mut used = vec![false; training_batch.num_rows()];
    for row in rows.iter().flatten() {
        if let Some(slot) = usize::try_from(row).ok().and_then(|r| used.get_mut(r)) {
            *slot = true;
        }
    }
    let unused = BooleanArray::from_iter(used.iter().map(|u| Some(!u)));
    let training_identity = training_batch
        .project(
            &index_of(
                training_batch,
                &keys
                    .iter()
                    .copied()
                    .chain([layout.event_time])
                    .collect::<Vec<_>>(),
            )
            .map_err(|e| (training_label.to_string(), e))?,
        )
        .map_err(|e| (training_label.to_string(), e.to_string()))?;
    sampled(&mut part.extra, &training_identity, &unused, Tail::Nothing)
        .map_err(|e| (training_label.to_string(), e))?;

    for feature in &compared {
        let served = serving_batch.column_by_name(feature);
        let trained = joined.column_by_name(&training_name(feature));
        let (Some(served), Some(trained)) = (served, trained) else {
            continue;
        };
        let mut compared_feature = FeaturePart {
            name: feature.to_string(),
            compared: (rows.len() - rows.null_count()) as u64,
            exact: !uses_tolerance(trained.data_type()),
            ..FeaturePart::default()
        };
        // A side of no values at all (a CSV or JSON column of empty values) is nulls of
        // the other side's type.
        use datafusion::arrow::array::new_null_array;
        let (served, trained) = match (served.data_type(), trained.data_type()) {
            (DataType::Null, other) => (new_null_array(other, served.len()), trained.clone()),
            (other, DataType::Null) => (served.clone(), new_null_array(other, trained.len())),
            _ => (served.clone(), trained.clone()),
        };
        let (served, trained) = (&served, &trained);
        // The serving side in the training side's type (a Utf8View log against a Utf8
        // backfill, Int32 against Int64); values that do not convert are a type finding.
        let served = match served.data_type() == trained.data_type() {
            true => served.clone(),
            false => match lossless_cast(served, trained.data_type()) {
                Some(cast) => cast,
                None => {
                    compared_feature.unconverted =
                        Some(type_names(served.data_type(), trained.data_type()));
                    part.features.push(compared_feature);
                    continue;
                }
            },
        };
        let differs: BooleanArray = differ(served.as_ref(), trained.as_ref(), &options.values)
            .map_err(|e| on_serving(e.message))?;
        let mismatched = BooleanArray::from_iter(
            (0..rows.len()).map(|row| Some(rows.is_valid(row) && differs.value(row))),
        );
        let mut fields: Vec<Field> = identity
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new(SERVED, served.data_type().clone(), true));
        fields.push(Field::new(TRAINED, trained.data_type().clone(), true));
        let mut columns = identity.columns().to_vec();
        columns.extend([served, trained.clone()]);
        let shown = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| on_serving(e.to_string()))?;
        sampled(
            &mut compared_feature.mismatched,
            &shown,
            &mismatched,
            Tail::Compared,
        )
        .map_err(on_serving)?;
        part.features.push(compared_feature);
    }
    Ok(part)
}

/// The checks of a view's skew from its counts: the columns either table lacks (from
/// their schemas), features whose serving values do not convert, and the skew findings.
fn finish(
    file: &SchemaFile,
    layout: &Layout,
    part: SkewPart,
    (serving_schema, serving_label): (&Schema, &str),
    (training_schema, training_label): (&Schema, &str),
    options: &SkewOptions,
) -> Vec<Check> {
    let spec = &file.spec;
    let (_, serving_missing) = present(serving_schema, &layout.serving_wanted());
    let (_, training_missing) = present(training_schema, &layout.training_wanted());
    let mut out = Vec::new();
    let missing_column = |label: &str, column: &str, what: &str| {
        Check::fail(
            Rule::DataColumnMissing,
            format!(
                "skew {}: {what} `{}`",
                quote(label, 200),
                quote(column, 100)
            ),
            Expected("a column"),
            Actual("missing"),
            if spec.features.iter().any(|f| f.name == column) {
                file.feature_pos(column)
            } else {
                Pos::UNKNOWN
            },
            format!(
                "the data {} has no column `{}` ({what})",
                quote(label, 200),
                quote(column, 100)
            ),
        )
    };
    let role = |column: &str| -> &'static str {
        if layout.keys.contains(&column) {
            "entity key"
        } else if column == layout.serving_time || column == layout.event_time {
            "time"
        } else if Some(column) == layout.created {
            "created timestamp"
        } else {
            "feature"
        }
    };
    for column in &serving_missing {
        out.push(missing_column(serving_label, column, role(column)));
    }
    for column in training_missing
        .iter()
        .filter(|c| Some(c.as_str()) != layout.created)
    {
        out.push(missing_column(training_label, column, role(column)));
    }
    if serving_missing
        .iter()
        .chain(&training_missing)
        .any(|c| layout.structural(c))
    {
        return out; // no join without the keys and times
    }
    let unmatchable = layout.unmatchable(
        (serving_schema, serving_label),
        (training_schema, training_label),
    );
    if !unmatchable.is_empty() {
        out.extend(unmatchable);
        return out;
    }
    // Each side's column against the declared kind, in `check --data`'s words: text for
    // a float, integers for a timestamp or a naive time for a zoned one are refused
    // rather than compared converted.
    let refused = |side: &str, schema: &Schema, label: &str, name: &str| -> Option<Check> {
        let declared = &layout.feature_types.iter().find(|(n, _)| *n == name)?.1;
        let field = schema.field_with_name(name).ok()?;
        crate::wrong_kind(
            format!("skew {}: feature `{}`", quote(label, 200), quote(name, 100)),
            &side_data(side, label),
            name,
            field.data_type(),
            declared,
            file.feature_pos(name),
        )
    };
    let mut skews = Vec::new();
    for feature in part.features {
        let pos = file.feature_pos(&feature.name);
        let wrong: Vec<Check> = [
            ("serving", serving_schema, serving_label),
            ("training", training_schema, training_label),
        ]
        .into_iter()
        .filter_map(|(side, schema, label)| refused(side, schema, label, &feature.name))
        .collect();
        if !wrong.is_empty() {
            out.extend(wrong);
            continue;
        }
        if let Some((served, trained)) = &feature.unconverted {
            out.push(Check::fail(
                Rule::DataColumnType,
                format!(
                    "skew {}: feature `{}`",
                    quote(serving_label, 200),
                    quote(&feature.name, 100)
                ),
                Expected(trained.clone()),
                Actual(served.clone()),
                pos,
                format!(
                    "`{}` is {served} in the serving data {} and {trained} in the training data {}: the values cannot be compared",
                    quote(&feature.name, 100),
                    quote(serving_label, 200),
                    quote(training_label, 200)
                ),
            ));
            continue;
        }
        skews.push(FeatureSkew {
            name: feature.name,
            pos,
            compared: feature.compared,
            mismatched: feature.mismatched.finish(),
            exact: feature.exact,
        });
    }
    let labels = SkewLabels {
        serving: serving_label.to_string(),
        training: training_label.to_string(),
        time_tolerance: format!(
            "at most {} before the serving time",
            options.time_tolerance_text
        ),
        value_tolerance: value_tolerance_text(&options.values),
    };
    out.extend(findings(
        &labels,
        &SkewCounts {
            serving_rows: part.serving_rows,
            training_rows: part.training_rows,
            missing: part.missing.finish(),
            extra: part.extra.finish(),
            features: skews,
        },
    ));
    out
}

/// The `side` ("serving") data named `label` as findings name it: "the serving data
/// x.parquet", or "the serving data" for a table in memory that is named by its side.
fn side_data(side: &str, label: &str) -> String {
    match label == side {
        true => format!("the {side} data"),
        false => format!("the {side} data {}", quote(label, 200)),
    }
}

/// Whether the join matches values of `data_type` as the `declared` key or time type
/// holds them, unconverted: integers of any width for an integer, text or bytes of any
/// layout for text or bytes, a timestamp of any unit and zone for a zoned timestamp (a
/// naive one for a naive timestamp), or a date (midnight). The join compares times in
/// nanoseconds, so a unit finer than the declared one loses nothing. Other types are
/// judged as `check --data` judges them.
fn joinable(declared: &FeatureType, data_type: &DataType) -> bool {
    let plain = match data_type {
        DataType::Dictionary(_, values) => values.as_ref(),
        other => other,
    };
    let date = matches!(plain, DataType::Date32 | DataType::Date64);
    match declared {
        FeatureType::Int32 | FeatureType::Int64 => plain.is_integer(),
        FeatureType::String => matches!(
            plain,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ),
        FeatureType::Bytes => matches!(
            plain,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ),
        FeatureType::Timestamp { tz, .. } => {
            date || matches!(plain, DataType::Timestamp(_, zone) if zone.is_some() == tz.is_some())
        }
        FeatureType::Datetime64Ns => date || matches!(plain, DataType::Timestamp(_, None)),
        _ => false,
    }
}

/// The point-in-time join's message `message` in skew's words: its spine is the serving
/// data, its events the training data. Only the words before a quoted column name
/// (`spine key \`k\``) are the join's: a column's own name is left as it is.
fn in_skew_words(message: &str) -> String {
    [
        ("spine key `", "serving key `"),
        ("spine time `", "serving time `"),
        ("spine column `", "serving column `"),
        ("events column `", "training column `"),
        ("event key `", "training key `"),
        ("event time `", "training time `"),
        ("created time `", "training created time `"),
    ]
    .iter()
    .fold(message.to_string(), |text, (kernel, skew)| {
        text.replace(kernel, skew)
    })
}

/// Both types in the schema vocabulary (`int64`; Arrow's name for a type it lacks), with
/// their Arrow names beside when those are all that tells them apart.
pub(crate) fn type_names(served: &DataType, trained: &DataType) -> (String, String) {
    let name =
        |t: &DataType| crate::feature_type(t).map_or_else(|| t.to_string(), |f| f.to_string());
    let (a, b) = (name(served), name(trained));
    match a == b {
        true => (format!("{a} ({served})"), format!("{b} ({trained})")),
        false => (a, b),
    }
}

/// `array` in type `to` when every value converts and converts back to itself (nulls
/// stay nulls, NaN stays NaN): 1.5 is not an integer, 1e300 is not a float32. For
/// types the comparison kernels do not take (lists), the cast alone decides.
fn lossless_cast(array: &ArrayRef, to: &DataType) -> Option<ArrayRef> {
    use datafusion::arrow::compute::{cast_with_options, CastOptions};
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let cast = cast_with_options(array, to, &options).ok()?;
    let back = cast_with_options(&cast, array.data_type(), &options).ok()?;
    match datafusion::arrow::compute::kernels::cmp::not_distinct(array, &back) {
        Ok(same) => (same.true_count() == same.len()).then_some(cast),
        Err(_) => Some(cast),
    }
}

#[cfg(test)]
mod words {
    #[test]
    fn the_join_words_are_skews_and_column_names_stay() {
        assert_eq!(
            super::in_skew_words(
                "expected event key `spine key k` of the type of spine key `k` (Int64), found Utf8"
            ),
            "expected training key `spine key k` of the type of serving key `k` (Int64), found Utf8"
        );
        assert_eq!(
            super::in_skew_words("events column `event_ts`: expected times between"),
            "training column `event_ts`: expected times between"
        );
    }

    #[test]
    fn the_join_matches_keys_of_any_width_and_times_of_any_unit() {
        use super::joinable;
        use arrowfeat_validator::types::{FeatureType, TimeUnit};
        use datafusion::arrow::datatypes::{DataType, TimeUnit as Unit};
        let zoned = FeatureType::Timestamp {
            unit: TimeUnit::Microsecond,
            tz: Some("UTC".into()),
        };
        let paris = Some("Europe/Paris".into());
        assert!(joinable(
            &zoned,
            &DataType::Timestamp(Unit::Nanosecond, paris)
        ));
        assert!(joinable(&zoned, &DataType::Date32));
        assert!(!joinable(
            &zoned,
            &DataType::Timestamp(Unit::Microsecond, None)
        ));
        assert!(!joinable(&zoned, &DataType::Int64));
        assert!(joinable(&FeatureType::Int64, &DataType::UInt32));
        assert!(joinable(&FeatureType::Int64, &DataType::Int8));
        assert!(!joinable(&FeatureType::Int64, &DataType::Float64));
        let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        assert!(joinable(&FeatureType::String, &dictionary));
        assert!(joinable(&FeatureType::Bytes, &DataType::LargeBinary));
        assert!(!joinable(&FeatureType::String, &DataType::Int64));
    }
}
