//! Checks of a view's data against its schema file, without an engine: [`plan`] says what
//! to count in the data (its columns, and predicates over their values); an engine
//! (DataFusion for the CLI) counts them over the data, with a bounded sample of rows for
//! each, and [`findings`] turns the counts into checks of the usual report.

use crate::report::{Actual, Check, Expected};
use crate::rules::{Rule, Severity};
use crate::spec::model::{ExactNumber, SchemaFile};
use crate::types::{compare, FeatureType, TypeMatch};
use crate::yaml::Pos;

/// What a column of the data is to the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    EntityKey,
    EventTime,
    CreatedTime,
    Feature,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::EntityKey => "entity key",
            Role::EventTime => "event timestamp",
            Role::CreatedTime => "created timestamp",
            Role::Feature => "feature",
        }
    }
}

/// A column the schema declares.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredColumn {
    pub name: String,
    /// `None`: any timestamp (the created time has no declared type).
    pub declared: Option<FeatureType>,
    pub role: Role,
    pub nullable: bool,
    pub pos: Pos,
}

/// A value of `allowed_values`.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowedValue {
    Text(String),
    Number(ExactNumber),
    Bool(bool),
}

/// What makes a row of a column a finding.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// Null in a column that may not hold nulls.
    Null,
    /// NaN, +inf or -inf in a float column (counted apart from nulls).
    NaN,
    PositiveInfinity,
    NegativeInfinity,
    /// Below `min` / above `max` (NaN is not counted here).
    Below(ExactNumber),
    Above(ExactNumber),
    /// A non-null value outside `allowed_values`.
    NotAllowed(Vec<AllowedValue>),
    /// An event time after the run's `as_of` instant.
    AfterAsOf,
    /// A created time earlier than the row's event time (this predicate's column is
    /// the created time).
    CreatedBeforeEvent,
}

/// One predicate over one column.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueCheck {
    pub column: String,
    pub role: Role,
    pub predicate: Predicate,
    pub pos: Pos,
}

/// What to count in one view's data.
#[derive(Debug, Clone, PartialEq)]
pub struct DataPlan {
    pub view: String,
    /// Where the data is, as the user named it (shown in findings).
    pub source: String,
    pub columns: Vec<DeclaredColumn>,
    pub checks: Vec<ValueCheck>,
    pub keys: Vec<String>,
    pub event_time: String,
    pub created: Option<String>,
    pub feature_columns: Vec<String>,
    pub ttl_seconds: Option<u64>,
    pub ttl_pos: Pos,
    /// The instant "now" for the point-in-time checks, in nanoseconds since the epoch.
    pub as_of_nanos: i64,
    /// At most this many rows are sampled for a finding.
    pub sample_rows: usize,
}

impl DataPlan {
    /// The entity keys, then the event time unless a key has its name: what identifies a
    /// row in time, each column once.
    pub fn keys_and_time(&self) -> Vec<&str> {
        let mut columns: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        if !columns.contains(&self.event_time.as_str()) {
            columns.push(&self.event_time);
        }
        columns
    }
}

/// The options of a data check run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataOptions {
    pub as_of_nanos: i64,
    pub sample_rows: usize,
}

/// The plan for `file`'s view over the data at `source`.
pub fn plan(file: &SchemaFile, source: &str, options: &DataOptions) -> DataPlan {
    let spec = &file.spec;
    let mut columns = Vec::new();
    let mut checks = Vec::new();
    let mut push =
        |name: &str, declared: Option<FeatureType>, role: Role, nullable: bool, pos: Pos| {
            if columns.iter().any(|c: &DeclaredColumn| c.name == name) {
                return; // declared twice: `duplicate-feature` says so
            }
            columns.push(DeclaredColumn {
                name: name.to_string(),
                declared,
                role,
                nullable,
                pos,
            });
        };
    for (index, entity) in spec.entities.iter().enumerate() {
        let declared = FeatureType::parse(&entity.type_name)
            .unwrap_or(FeatureType::Other(entity.type_name.clone()));
        let pos = file.key_pos(&format!("/entities/{index}"));
        push(
            &entity.join_key,
            Some(declared),
            Role::EntityKey,
            false,
            pos,
        );
    }
    let event = &spec.event_timestamp;
    push(
        &event.name,
        Some(event.feature_type()),
        Role::EventTime,
        false,
        file.key_pos("/event_timestamp"),
    );
    if let Some(created) = &spec.created_timestamp {
        push(
            &created.name,
            None,
            Role::CreatedTime,
            true,
            file.key_pos("/created_timestamp"),
        );
    }
    for feature in &spec.features {
        let declared = FeatureType::parse(&feature.type_name)
            .unwrap_or(FeatureType::Other(feature.type_name.clone()));
        push(
            &feature.name,
            Some(declared),
            Role::Feature,
            feature.nullable,
            file.feature_pos(&feature.name),
        );
    }
    for column in &columns {
        if !column.nullable {
            checks.push(ValueCheck {
                column: column.name.clone(),
                role: column.role,
                predicate: Predicate::Null,
                pos: column.pos,
            });
        }
        // Floats, and the float elements of lists and embeddings (a row counts once).
        let float = |t: &FeatureType| matches!(t, FeatureType::Float32 | FeatureType::Float64);
        if column.declared.as_ref().is_some_and(|t| match t {
            FeatureType::List(element) | FeatureType::Embedding { element, .. } => float(element),
            t => float(t),
        }) {
            for predicate in [
                Predicate::NaN,
                Predicate::PositiveInfinity,
                Predicate::NegativeInfinity,
            ] {
                checks.push(ValueCheck {
                    column: column.name.clone(),
                    role: column.role,
                    predicate,
                    pos: column.pos,
                });
            }
        }
    }
    for feature in &spec.features {
        let Some(constraints) = &feature.constraints else {
            continue;
        };
        let pos = file.feature_pos(&feature.name);
        let mut add = |predicate| {
            checks.push(ValueCheck {
                column: feature.name.clone(),
                role: Role::Feature,
                predicate,
                pos,
            })
        };
        if let Some(min) = constraints.min_exact() {
            add(Predicate::Below(min));
        }
        if let Some(max) = constraints.max_exact() {
            add(Predicate::Above(max));
        }
        if let Some(allowed) = &constraints.allowed_values {
            let values = allowed
                .iter()
                .filter_map(|v| match v {
                    serde_json::Value::String(s) => Some(AllowedValue::Text(s.clone())),
                    serde_json::Value::Number(n) => {
                        Some(AllowedValue::Number(ExactNumber::of(n, None)))
                    }
                    serde_json::Value::Bool(b) => Some(AllowedValue::Bool(*b)),
                    _ => None,
                })
                .collect();
            add(Predicate::NotAllowed(values));
        }
    }
    checks.push(ValueCheck {
        column: event.name.clone(),
        role: Role::EventTime,
        predicate: Predicate::AfterAsOf,
        pos: file.key_pos("/event_timestamp"),
    });
    if let Some(created) = &spec.created_timestamp {
        checks.push(ValueCheck {
            column: created.name.clone(),
            role: Role::CreatedTime,
            predicate: Predicate::CreatedBeforeEvent,
            pos: file.key_pos("/created_timestamp"),
        });
    }
    DataPlan {
        view: spec.name.clone(),
        source: source.to_string(),
        columns,
        checks,
        // Two entities sharing a join key share its column (`duplicate-feature` says so).
        keys: spec.entities.iter().fold(Vec::new(), |mut keys, e| {
            if !keys.contains(&e.join_key) {
                keys.push(e.join_key.clone());
            }
            keys
        }),
        event_time: event.name.clone(),
        created: spec.created_timestamp.as_ref().map(|c| c.name.clone()),
        feature_columns: spec.features.iter().map(|f| f.name.clone()).collect(),
        ttl_seconds: spec
            .ttl
            .as_ref()
            .and_then(|t| t.seconds().ok())
            .filter(|s| *s > 0),
        ttl_pos: file.key_pos("/ttl"),
        as_of_nanos: options.as_of_nanos,
        sample_rows: options.sample_rows,
    }
}

/// A column of the data: its name and type (`None` when the type has no equivalent in
/// the schema vocabulary; `arrow` names it then).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DataColumn {
    pub name: String,
    pub read_as: Option<FeatureType>,
    pub arrow: String,
}

/// Rows a predicate matched: how many, and a few of them, each already rendered for a
/// report (escaped, cut).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matched {
    pub rows: u64,
    pub sample: Vec<String>,
}

/// What an engine counted, for [`findings`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataCounts {
    pub rows: u64,
    pub columns: Vec<DataColumn>,
    /// One per [`DataPlan::checks`] entry, in order; `None` where the engine did not
    /// evaluate it (a missing column, a type the predicate does not apply to).
    pub checks: Vec<Option<Matched>>,
    /// Rows that repeat another row of the same keys and event time in every column the
    /// schema declares.
    pub exact_duplicates: Option<Matched>,
    /// (keys, event time) with two or more rows that differ in a declared column.
    pub conflicting: Option<Matched>,
    /// Keys, and keys whose latest event is older than the TTL at `as_of`.
    pub keys: Option<u64>,
    pub stale_keys: Option<Matched>,
}

fn declared_text(column: &DeclaredColumn) -> String {
    column
        .declared
        .as_ref()
        .map_or_else(|| "timestamp".to_string(), ToString::to_string)
}

/// "; for example ..." of a finding's sampled rows, or nothing.
pub(crate) fn sample_text(matched: &Matched) -> String {
    if matched.sample.is_empty() {
        return String::new();
    }
    format!("; for example {}", matched.sample.join("; "))
}

/// `part` as a percentage of `whole`: "<0.01%" rather than a rounded zero, ">99.99%"
/// rather than a rounded hundred.
pub(crate) fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0%".into();
    }
    let percent = part as f64 * 100.0 / whole as f64;
    if percent > 0.0 && percent < 0.01 {
        "<0.01%".into()
    } else if part < whole && percent > 99.99 {
        ">99.99%".into()
    } else {
        format!("{percent:.2}%")
    }
}

fn number_text(n: &ExactNumber) -> String {
    match n {
        ExactNumber::Int { negative, digits } => {
            format!("{}{digits}", if *negative { "-" } else { "" })
        }
        ExactNumber::Float(f) => crate::text::number(*f),
    }
}

/// The check of a data column's type, `found`, against the `declared` feature type: a
/// pass when they are one type, a warning when compatible, an error otherwise. The words
/// of `check --data`, which `drift` and `skew` use for their columns too.
pub fn column_type(
    subject: String,
    source: &str,
    found: &DataColumn,
    declared: &FeatureType,
    pos: Pos,
) -> Check {
    let arrow = crate::text::short(&found.arrow);
    // Arrow has one type of naive nanoseconds: for data it is `datetime64[ns]` exactly.
    let naive_nanos = FeatureType::Timestamp {
        unit: crate::types::TimeUnit::Nanosecond,
        tz: None,
    };
    let judged = |actual: &FeatureType| match declared {
        FeatureType::Datetime64Ns if *actual == naive_nanos => TypeMatch::Exact,
        _ => compare(actual, declared),
    };
    match &found.read_as {
        Some(actual) => match judged(actual) {
            TypeMatch::Exact => Check::pass(
                Rule::DataColumnType,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
            ),
            TypeMatch::Compatible(why) => Check::finding(
                Rule::DataColumnType,
                Severity::Warning,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
                format!(
                    "`{}` in {source} is {actual} ({arrow}), the schema declares {} (compatible: {why})",
                    crate::text::short(&found.name),
                    declared
                ),
            ),
            TypeMatch::Incompatible(why) => Check::fail(
                Rule::DataColumnType,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
                format!(
                    "`{}` in {source} is {actual} ({arrow}), the schema declares {}{}",
                    crate::text::short(&found.name),
                    declared,
                    if why.is_empty() { String::new() } else { format!(": {why}") }
                ),
            ),
        },
        None => Check::fail(
            Rule::DataColumnType,
            subject,
            Expected(declared.to_string()),
            Actual(arrow.clone()),
            pos,
            format!(
                "`{}` in {source} is {arrow}, which has no equivalent in the schema types; the schema declares {}",
                crate::text::short(&found.name),
                declared
            ),
        ),
    }
}

/// The checks of the plan's view's data, from what the engine counted.
pub fn findings(plan: &DataPlan, counts: &DataCounts) -> Vec<Check> {
    let mut out = Vec::new();
    let source = crate::text::short(&plan.source);
    let rows = counts.rows;
    for column in &plan.columns {
        let subject = format!(
            "data {}: {} `{}`",
            source,
            column.role.as_str(),
            crate::text::short(&column.name)
        );
        let found = counts.columns.iter().find(|c| c.name == column.name);
        let Some(found) = found else {
            out.push(Check::fail(
                Rule::DataColumnMissing,
                subject,
                Expected(format!("a column of type {}", declared_text(column))),
                Actual("missing"),
                column.pos,
                format!(
                    "the data {source} has no column `{}` ({} {}); its columns: {}",
                    crate::text::short(&column.name),
                    column.role.as_str(),
                    declared_text(column),
                    if counts.columns.is_empty() {
                        "none".to_string()
                    } else {
                        counts
                            .columns
                            .iter()
                            .map(|c| format!("`{}`", crate::text::short(&c.name)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ));
            continue;
        };
        let arrow = crate::text::short(&found.arrow);
        if found.arrow == "Null" {
            // Nothing to check the type of, nor to fail: the null checks count the rows.
            out.push(Check::finding(
                Rule::DataColumnType,
                Severity::Warning,
                subject,
                Expected(declared_text(column)),
                Actual("nulls of no type"),
                column.pos,
                format!(
                    "`{}` in {source} holds only nulls, of no type (Arrow's null type, which CSV and JSON give a column of empty values): it cannot be checked against {}",
                    crate::text::short(&column.name),
                    declared_text(column)
                ),
            ));
            continue;
        }
        let Some(declared) = &column.declared else {
            // The created time: any timestamp.
            let is_timestamp = found
                .read_as
                .as_ref()
                .is_some_and(FeatureType::is_timestamp);
            out.push(
                Check::pass(
                    Rule::DataColumnType,
                    subject,
                    Expected("a timestamp"),
                    Actual(arrow.clone()),
                    column.pos,
                )
                .fail_unless(is_timestamp, || {
                    format!(
                        "`{}` in {source} is {arrow}; the created timestamp must be a timestamp",
                        crate::text::short(&column.name)
                    )
                }),
            );
            continue;
        };
        let check = column_type(subject, &source, found, declared, column.pos);
        out.push(check);
    }
    for (check, matched) in plan.checks.iter().zip(&counts.checks) {
        let Some(matched) = matched else { continue };
        out.push(value_finding(plan, check, matched, rows, &source));
    }
    let keys_text = if plan.keys.is_empty() {
        "event time".to_string()
    } else {
        format!(
            "keys ({}) and event time",
            plan.keys
                .iter()
                .map(|k| crate::text::short(k))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if let Some(matched) = &counts.exact_duplicates {
        let subject = format!("data {source}: duplicate rows");
        out.push(if matched.rows == 0 {
            Check::pass(Rule::DataDuplicateRows, subject, Expected("0"), Actual("0"), Pos::UNKNOWN)
        } else {
            Check::fail(
                Rule::DataDuplicateRows,
                subject,
                Expected("0"),
                Actual(matched.rows.to_string()),
                Pos::UNKNOWN,
                format!(
                    "{} of {rows} rows of {source} ({}) repeat another row with the same {keys_text} and the same values{}",
                    matched.rows,
                    share(matched.rows, rows),
                    sample_text(matched)
                ),
            )
        });
    }
    if let Some(matched) = &counts.conflicting {
        let subject = format!("data {source}: conflicting rows");
        out.push(if matched.rows == 0 {
            Check::pass(Rule::DataConflictingRows, subject, Expected("0"), Actual("0"), Pos::UNKNOWN)
        } else {
            Check::fail(
                Rule::DataConflictingRows,
                subject,
                Expected("0"),
                Actual(matched.rows.to_string()),
                Pos::UNKNOWN,
                format!(
                    "{} group(s) of rows with the same {keys_text} hold different values in {source}: a point-in-time join cannot tell which is true{}",
                    matched.rows,
                    sample_text(matched)
                ),
            )
        });
    }
    if let (Some(keys), Some(matched), Some(ttl)) =
        (counts.keys, &counts.stale_keys, plan.ttl_seconds)
    {
        let subject = format!("data {source}: keys older than the TTL");
        let pos = plan.ttl_pos;
        out.push(if matched.rows == 0 {
            Check::pass(Rule::DataStaleKeys, subject, Expected("0"), Actual("0"), pos)
        } else {
            Check::fail(
                Rule::DataStaleKeys,
                subject,
                Expected("0"),
                Actual(format!("{} of {keys}", matched.rows)),
                pos,
                format!(
                    "{} of {keys} keys in {source} ({}) have no event in the TTL ({ttl} s) before {}: a training set at that time gets no value for them{}",
                    matched.rows,
                    share(matched.rows, keys),
                    as_of_text(plan.as_of_nanos),
                    sample_text(matched)
                ),
            )
        });
    }
    out
}

/// `as_of` as an RFC 3339 UTC instant, to the second.
pub fn as_of_text(nanos: i64) -> String {
    let seconds = i128::from(nanos.div_euclid(1_000_000_000));
    format!("{}Z", arrowfeat_common::instant::date_time_text(seconds))
}

fn value_finding(
    plan: &DataPlan,
    check: &ValueCheck,
    matched: &Matched,
    rows: u64,
    source: &str,
) -> Check {
    let column = crate::text::short(&check.column);
    let (rule, what, expected) = match &check.predicate {
        Predicate::Null => (
            Rule::DataNull,
            "null values".to_string(),
            "no nulls".to_string(),
        ),
        Predicate::NaN => (
            Rule::DataNonFinite,
            "NaN values".to_string(),
            "no NaN".to_string(),
        ),
        Predicate::PositiveInfinity => (
            Rule::DataNonFinite,
            "+inf values".to_string(),
            "no +inf".to_string(),
        ),
        Predicate::NegativeInfinity => (
            Rule::DataNonFinite,
            "-inf values".to_string(),
            "no -inf".to_string(),
        ),
        Predicate::Below(min) => (
            Rule::DataOutOfRange,
            format!("values below min {}", number_text(min)),
            format!(">= {}", number_text(min)),
        ),
        Predicate::Above(max) => (
            Rule::DataOutOfRange,
            format!("values above max {}", number_text(max)),
            format!("<= {}", number_text(max)),
        ),
        Predicate::NotAllowed(_) => (
            Rule::DataNotAllowed,
            "values not in allowed_values".to_string(),
            "allowed_values only".to_string(),
        ),
        Predicate::AfterAsOf => (
            Rule::DataFutureEvent,
            format!("event times after {}", as_of_text(plan.as_of_nanos)),
            format!("<= {}", as_of_text(plan.as_of_nanos)),
        ),
        Predicate::CreatedBeforeEvent => (
            Rule::DataCreatedBeforeEvent,
            format!(
                "created times earlier than the event time `{}`",
                crate::text::short(&plan.event_time)
            ),
            "created >= event time".to_string(),
        ),
    };
    let subject = format!("data {source}: {} `{column}`: {what}", check.role.as_str());
    if matched.rows == 0 {
        return Check::pass(rule, subject, Expected(expected), Actual("0"), check.pos);
    }
    Check::fail(
        rule,
        subject,
        Expected(expected),
        Actual(format!("{} of {rows}", matched.rows)),
        check.pos,
        format!(
            "{} of {rows} rows of {source} ({}) hold {what} in {} `{column}`{}",
            matched.rows,
            share(matched.rows, rows),
            check.role.as_str(),
            sample_text(matched)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_of_is_rendered_in_utc() {
        assert_eq!(as_of_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            as_of_text(1_709_294_400_000_000_000),
            "2024-03-01T12:00:00Z"
        );
        assert_eq!(as_of_text(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn shares_are_never_rounded_to_zero() {
        assert_eq!(share(1, 1_000_000), "<0.01%");
        assert_eq!(share(0, 10), "0.00%");
        assert_eq!(share(5, 0), "0%");
        assert_eq!(share(1, 3), "33.33%");
        assert_eq!(share(99_999, 100_000), ">99.99%");
        assert_eq!(share(100_000, 100_000), "100.00%");
    }

    #[test]
    fn naive_nanoseconds_are_datetime64_ns_exactly() {
        use crate::types::TimeUnit;
        let column = |tz: Option<&str>| DataColumn {
            name: "t".into(),
            read_as: Some(FeatureType::Timestamp {
                unit: TimeUnit::Nanosecond,
                tz: tz.map(str::to_string),
            }),
            arrow: "Timestamp(ns)".into(),
        };
        let judged = |found| {
            column_type(
                "t".into(),
                "d",
                &found,
                &FeatureType::Datetime64Ns,
                Pos::UNKNOWN,
            )
            .status
        };
        assert_eq!(judged(column(None)), crate::report::Status::Pass);
        assert_eq!(judged(column(Some("UTC"))), crate::report::Status::Error);
    }
}
