//! Training/serving skew, without an engine: an engine matches each row of the serving
//! log with the training row of the same entity keys that was current at the serving time
//! (an as-of join with a time tolerance) and counts, per feature, the matched rows whose
//! values differ beyond the value tolerance; this module says what the counts mean.

use crate::checks::data::{sample_text, share, Matched};
use crate::report::{Actual, Check, Expected};
use crate::rules::Rule;
use crate::yaml::Pos;

/// What an engine counted for one feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSkew {
    pub name: String,
    pub pos: Pos,
    /// Matched rows compared.
    pub compared: u64,
    /// Matched rows whose values differ, with a sample (keys, time, both values).
    pub mismatched: Matched,
    /// The values are compared exactly (not floats): the value tolerance does not apply.
    pub exact: bool,
}

/// What an engine counted for one view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkewCounts {
    pub serving_rows: u64,
    pub training_rows: u64,
    /// Serving rows without a training row of their keys in the time tolerance.
    pub missing: Matched,
    /// Training rows that no serving row matched.
    pub extra: Matched,
    pub features: Vec<FeatureSkew>,
}

/// How the rows were matched, for messages: "within 5m before the serving time", "values
/// within 1e-9 absolute".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkewLabels {
    pub serving: String,
    pub training: String,
    pub time_tolerance: String,
    pub value_tolerance: String,
}

/// The checks of one view's skew.
pub fn findings(labels: &SkewLabels, counts: &SkewCounts) -> Vec<Check> {
    let serving = crate::text::short(&labels.serving);
    let training = crate::text::short(&labels.training);
    let mut out = Vec::new();
    let subject = |what: &str| format!("skew {serving} against {training}: {what}");
    let matched = counts.serving_rows.saturating_sub(counts.missing.rows);
    out.push(
        Check::pass(
            Rule::SkewMissing,
            subject("serving rows without a training row"),
            Expected("0"),
            Actual(format!("{} of {}", counts.missing.rows, counts.serving_rows)),
            Pos::UNKNOWN,
        )
        .fail_unless(counts.missing.rows == 0, || {
            format!(
                "{} of {} serving rows of {serving} ({}) have no training row of their keys in {training} {}{}",
                counts.missing.rows,
                counts.serving_rows,
                share(counts.missing.rows, counts.serving_rows),
                labels.time_tolerance,
                sample_text(&counts.missing)
            )
        }),
    );
    out.push(
        Check::pass(
            Rule::SkewExtra,
            subject("training rows no serving row matched"),
            Expected("0"),
            Actual(format!("{} of {}", counts.extra.rows, counts.training_rows)),
            Pos::UNKNOWN,
        )
        .fail_unless(counts.extra.rows == 0, || {
            format!(
                "{} of {} training rows of {training} ({}) match no serving row of {serving}{}",
                counts.extra.rows,
                counts.training_rows,
                share(counts.extra.rows, counts.training_rows),
                sample_text(&counts.extra)
            )
        }),
    );
    for feature in &counts.features {
        let name = crate::text::short(&feature.name);
        let rows = feature.mismatched.rows;
        let tolerance = match feature.exact {
            true => "exactly equal",
            false => labels.value_tolerance.as_str(),
        };
        out.push(
            Check::pass(
                Rule::SkewMismatch,
                subject(&format!("feature `{name}`")),
                Expected(format!("equal values ({tolerance})")),
                Actual(format!("{rows} of {} differ", feature.compared)),
                feature.pos,
            )
            .fail_unless(rows == 0, || {
                format!(
                    "`{name}` differs between serving and training in {rows} of {} matched rows ({}; {matched} of {} serving rows matched, values {}){}",
                    feature.compared,
                    share(rows, feature.compared),
                    counts.serving_rows,
                    tolerance,
                    sample_text(&feature.mismatched)
                )
            }),
        );
    }
    out
}
