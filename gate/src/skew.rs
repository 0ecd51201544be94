//! Training/serving skew of a view: both tables are read with arrowfeat's file reading,
//! each serving row is matched with the training row of its entity keys current at the
//! serving time, within a time tolerance, by the point-in-time kernel (the join of
//! `arrowfeat training-set`, with the tolerance as its TTL), and each feature's values
//! are compared by [`arrowfeat_udf::kernels::compare`]. The validator's
//! [`arrowfeat_validator::checks::skew`] says what the counts mean.

use std::sync::Arc;

use arrowfeat_common::quote;
use arrowfeat_udf::kernels::compare::{differ, Tolerance};
use arrowfeat_udf::kernels::point_in_time::join::{
    point_in_time_join, FeatureSpec, PointInTimeJoin, Spelling,
};
use arrowfeat_udf::kernels::point_in_time::PointInTimeOptions;
use arrowfeat_validator::checks::data::Matched;
use arrowfeat_validator::checks::skew::{findings, FeatureSkew, SkewCounts, SkewLabels};
use arrowfeat_validator::config::Config;
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::run::DataSource;
use arrowfeat_validator::spec::model::SchemaFile;
use arrowfeat_validator::store::StoreView;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::{collect, ident, register, run_blocking, unreadable, ByView, Data, TABLE};

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
        }
    }

    /// Views given by name that no schema file declared, with the flag that named them.
    pub fn unused_views(&self) -> Vec<(&'static str, String)> {
        let mut views: Vec<(&'static str, String)> = self
            .serving
            .unused_views()
            .into_iter()
            .map(|v| ("--serving", v))
            .collect();
        views.extend(
            self.training
                .unused_views()
                .into_iter()
                .map(|v| ("--training", v)),
        );
        views
    }
}

fn value_tolerance_text(t: &Tolerance) -> String {
    let mut parts = Vec::new();
    if t.absolute > 0.0 {
        parts.push(format!("absolute {}", t.absolute));
    }
    if t.relative > 0.0 {
        parts.push(format!("relative {}", t.relative));
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
        let serving = match self.serving.get(view, "--serving") {
            Ok(found) => found,
            Err(refused) => return Some(vec![*refused]),
        };
        let training = match self.training.get(view, "--training") {
            Ok(found) => found,
            Err(refused) => return Some(vec![*refused]),
        };
        let (serving, training) = match (serving, training) {
            (None, None) => return None,
            (Some(serving), Some(training)) => (serving, training),
            (serving, _) => {
                let (given, lacking) = match serving {
                    Some(_) => ("--serving", "--training"),
                    None => ("--training", "--serving"),
                };
                return Some(vec![Check::fail(
                    Rule::SkewMissing,
                    format!("skew: view `{}`", quote(view, 100)),
                    Expected("serving and training data of the view"),
                    Actual(format!("only {given}")),
                    arrowfeat_validator::yaml::Pos::UNKNOWN,
                    format!(
                        "{given} gives data of view `{}` but {lacking} does not: give {lacking} {}=PATH",
                        quote(view, 100),
                        quote(view, 100)
                    ),
                )]);
            }
        };
        let compared = run_blocking(compare_view(file, &serving, &training, &self.options))
            .map_err(|message| (serving.label().to_string(), message))
            .and_then(|result| result);
        Some(match compared {
            Ok(checks) => checks,
            Err((label, message)) => vec![unreadable(&label, message)],
        })
    }

    fn label(&self) -> String {
        format!(
            "serving {} and training {}",
            self.serving.labels().join(", "),
            self.training.labels().join(", ")
        )
    }
}

/// A table read whole: the columns `wanted` that it has, and the missing ones.
async fn read(data: &Data, wanted: &[&str]) -> Result<(RecordBatch, Vec<String>), String> {
    let (ctx, schema) = register(data).await?;
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for name in wanted {
        match schema.field_with_name(name) {
            Ok(_) if !present.contains(name) => present.push(*name),
            Ok(_) => {}
            Err(_) => missing.push(name.to_string()),
        }
    }
    let projected = Arc::new(Schema::new(
        present
            .iter()
            .map(|name| schema.field_with_name(name).cloned())
            .collect::<Result<Vec<Field>, _>>()
            .map_err(|e| e.to_string())?,
    ));
    if present.is_empty() {
        return Ok((RecordBatch::new_empty(projected), missing));
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
    let batch = datafusion::arrow::compute::concat_batches(&projected, &batches)
        .map_err(|e| e.to_string())?;
    Ok((batch, missing))
}

/// The checks of one view; an error names the data it concerns.
async fn compare_view(
    file: &SchemaFile,
    serving: &Data,
    training: &Data,
    options: &SkewOptions,
) -> Result<Vec<Check>, (String, String)> {
    let spec = &file.spec;
    let keys: Vec<&str> = spec.entities.iter().map(|e| e.join_key.as_str()).collect();
    let event_time = spec.event_timestamp.name.as_str();
    let serving_time = options.serving_time.as_deref().unwrap_or(event_time);
    let mut features: Vec<&str> = Vec::new();
    for feature in &spec.features {
        if !features.contains(&feature.name.as_str()) && !keys.contains(&feature.name.as_str()) {
            features.push(&feature.name);
        }
    }
    let created = spec.created_timestamp.as_ref().map(|c| c.name.as_str());
    let training_wanted: Vec<&str> = keys
        .iter()
        .copied()
        .chain([event_time])
        .chain(created)
        .chain(features.iter().copied())
        .collect();
    let serving_wanted: Vec<&str> = keys
        .iter()
        .copied()
        .chain([serving_time])
        .chain(features.iter().copied())
        .collect();
    let serving_label = serving.label().to_string();
    let training_label = training.label().to_string();
    let (serving_batch, serving_missing) = read(serving, &serving_wanted)
        .await
        .map_err(|e| (serving_label.clone(), e))?;
    let (training_batch, training_missing) = read(training, &training_wanted)
        .await
        .map_err(|e| (training_label.clone(), e))?;

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
                arrowfeat_validator::yaml::Pos::UNKNOWN
            },
            format!(
                "the data {} has no column `{}` ({what})",
                quote(label, 200),
                quote(column, 100)
            ),
        )
    };
    let role = |column: &str| -> &'static str {
        if keys.contains(&column) {
            "entity key"
        } else if column == serving_time || column == event_time {
            "time"
        } else if Some(column) == created {
            "created timestamp"
        } else {
            "feature"
        }
    };
    for column in &serving_missing {
        out.push(missing_column(&serving_label, column, role(column)));
    }
    for column in training_missing
        .iter()
        .filter(|c| Some(c.as_str()) != created)
    {
        out.push(missing_column(&training_label, column, role(column)));
    }
    let structural = |c: &str| keys.contains(&c) || c == serving_time || c == event_time;
    if serving_missing
        .iter()
        .chain(&training_missing)
        .any(|c| structural(c))
    {
        return Ok(out); // no join without the keys and times
    }
    let compared: Vec<&str> = features
        .iter()
        .copied()
        .filter(|f| {
            !serving_missing
                .iter()
                .chain(&training_missing)
                .any(|m| m == f)
        })
        .collect();

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
        .map_err(|e| (training_label.clone(), e.to_string()))?;
    let spine_columns: Vec<&str> = keys.iter().copied().chain([serving_time]).collect();
    let spine = serving_batch
        .project(
            &spine_columns
                .iter()
                .map(|c| serving_batch.schema().index_of(c))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| (serving_label.clone(), e.to_string()))?,
        )
        .map_err(|e| (serving_label.clone(), e.to_string()))?;
    let training_name = |f: &str| format!("#training {f}");
    let join = PointInTimeJoin {
        spine_keys: keys.iter().map(|k| k.to_string()).collect(),
        spine_time: serving_time.to_string(),
        event_keys: keys.iter().map(|k| k.to_string()).collect(),
        event_time: event_time.to_string(),
        event_created: created
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
        (
            serving_label.clone(),
            format!(
                "cannot match it with {}: {}",
                quote(&training_label, 200),
                e.message
            ),
        )
    })?;
    let rows = joined
        .column_by_name(ROW)
        .and_then(|c| c.as_any().downcast_ref::<UInt64Array>().cloned())
        .ok_or_else(|| {
            (
                serving_label.clone(),
                "the join lost its row index".to_string(),
            )
        })?;

    let options_text = FormatOptions::default().with_null("null");
    let render = |batch: &RecordBatch, columns: &[(&str, &str)], row: usize| -> String {
        columns
            .iter()
            .filter_map(|(column, shown)| {
                let array = batch.column_by_name(column)?;
                let formatter = ArrayFormatter::try_new(array.as_ref(), &options_text).ok()?;
                Some(format!(
                    "{}={}",
                    quote(shown, 60),
                    quote(&formatter.value(row).to_string(), 60)
                ))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let identity: Vec<(&str, &str)> = spine_columns.iter().map(|c| (*c, *c)).collect();
    let sample = |mask: &dyn Fn(usize) -> bool, len: usize, show: &dyn Fn(usize) -> String| {
        let mut matched = Matched::default();
        for row in 0..len {
            if mask(row) {
                matched.rows += 1;
                if matched.sample.len() < options.sample_rows {
                    matched.sample.push(show(row));
                }
            }
        }
        matched
    };
    let missing = sample(&|row| rows.is_null(row), rows.len(), &|row| {
        render(&joined, &identity, row)
    });
    let mut used = vec![false; training_batch.num_rows()];
    for row in rows.iter().flatten() {
        if let Some(slot) = usize::try_from(row).ok().and_then(|r| used.get_mut(r)) {
            *slot = true;
        }
    }
    let training_identity: Vec<(&str, &str)> = keys
        .iter()
        .map(|c| (*c, *c))
        .chain([(event_time, event_time)])
        .collect();
    let extra = sample(&|row| !used[row], used.len(), &|row| {
        render(&training_batch, &training_identity, row)
    });

    let mut skews = Vec::new();
    for feature in &compared {
        let pos = file.feature_pos(feature);
        let served = serving_batch.column_by_name(feature);
        let trained = joined.column_by_name(&training_name(feature));
        let (Some(served), Some(trained)) = (served, trained) else {
            continue;
        };
        // The serving side in the training side's type (a Utf8View log against a Utf8
        // backfill, Int32 against Int64); values that do not convert are a type finding.
        let served = match served.data_type() == trained.data_type() {
            true => served.clone(),
            false => match lossless_cast(served, trained.data_type()) {
                Some(cast) => cast,
                None => {
                    out.push(Check::fail(
                        Rule::DataColumnType,
                        format!("skew {}: feature `{}`", quote(&serving_label, 200), quote(feature, 100)),
                        Expected(trained.data_type().to_string()),
                        Actual(served.data_type().to_string()),
                        pos,
                        format!(
                            "`{}` is {} in the serving data {} and {} in the training data {}: the values cannot be compared",
                            quote(feature, 100),
                            served.data_type(),
                            quote(&serving_label, 200),
                            trained.data_type(),
                            quote(&training_label, 200)
                        ),
                    ));
                    continue;
                }
            },
        };
        let differs: BooleanArray = differ(served.as_ref(), trained.as_ref(), &options.values)
            .map_err(|e| (serving_label.clone(), e.message))?;
        let shown: Vec<(&str, &str)> = identity.clone();
        let mismatched = sample(
            &|row| rows.is_valid(row) && differs.value(row),
            rows.len(),
            &|row| {
                let formatter = |array: &ArrayRef| {
                    ArrayFormatter::try_new(array.as_ref(), &options_text)
                        .map(|f| quote(&f.value(row).to_string(), 60))
                        .unwrap_or_default()
                };
                format!(
                    "{}: served {}, trained {}",
                    render(&joined, &shown, row),
                    formatter(&served),
                    formatter(trained)
                )
            },
        );
        skews.push(FeatureSkew {
            name: feature.to_string(),
            pos,
            compared: (rows.len() - rows.null_count()) as u64,
            mismatched,
        });
    }
    let labels = SkewLabels {
        serving: serving_label,
        training: training_label,
        time_tolerance: format!(
            "at most {} before the serving time",
            options.time_tolerance_text
        ),
        value_tolerance: value_tolerance_text(&options.values),
    };
    out.extend(findings(
        &labels,
        &SkewCounts {
            serving_rows: serving_batch.num_rows() as u64,
            training_rows: training_batch.num_rows() as u64,
            missing,
            extra,
            features: skews,
        },
    ));
    Ok(out)
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
