//! Drift between a reference and a current sample of a view's data, without an engine:
//! an engine summarizes each feature of the data (its distinct values with their
//! counts, [`Summary`]); this module turns a reference summary into a small
//! [`ReferenceProfile`] (bin edges at the reference's quantiles, category frequencies,
//! its empirical distribution), compares a current summary with it and reports the
//! effect sizes as checks of the usual report.
//!
//! The definitions (docs/drift.md):
//! - numeric features: the population stability index over 10 bins cut at the
//!   reference's deciles (numpy's default "linear" quantiles; a bin holds the values
//!   from its lower edge up to, not including, its upper edge), empty bins counted as
//!   1e-4, natural log; the Jensen–Shannon divergence over the same bins, base 2, and
//!   its square root, the distance; the Kolmogorov–Smirnov statistic D, the largest
//!   gap between the two empirical distribution functions (scipy's `ks_2samp`);
//! - categorical features (strings, booleans, integers with `allowed_values`): PSI and
//!   Jensen–Shannon over the categories, and the largest change of one category's share
//!   (L-infinity);
//! - every feature: the change in the share of missing values (null, and NaN in
//!   floats). NaN is left out of the distributions; ±inf are values like any other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::{Actual, Check, Expected};
use crate::rules::Rule;
use crate::spec::model::SchemaFile;
use crate::types::FeatureType;
use crate::yaml::Pos;

/// Bins of a numeric feature.
pub const BINS: usize = 10;
/// The share an empty bin counts as in PSI (as Evidently counts it).
pub const EMPTY_BIN: f64 = 1e-4;
/// At most this many categories are kept per feature in a saved profile, the most
/// frequent; the rest are one "other" category. (Reference data read in the run is
/// compared over all its categories.)
pub const MAX_CATEGORIES: usize = 100_000;
/// A category longer than this many bytes is its first characters and a hash of the
/// whole value, on both sides, so a profile stays small.
pub const MAX_CATEGORY_BYTES: usize = 200;
/// At most this many points of a numeric feature's distribution are saved in a profile:
/// D is exact when the reference has at most this many distinct values, else within
/// 1 / `ECDF_POINTS`.
pub const ECDF_POINTS: usize = 2_000;
/// The `format` of a saved profile.
pub const PROFILE_FORMAT: &str = "arrowfeat-drift-reference";
pub const PROFILE_VERSION: u32 = 1;

/// When a metric is a finding (`[drift]` in `arrowfeat.toml`): above these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub psi: f64,
    pub jensen_shannon: f64,
    pub ks: f64,
    pub categories: f64,
    pub null_rate: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            psi: 0.2,
            jensen_shannon: 0.1,
            ks: 0.1,
            categories: 0.1,
            null_rate: 0.05,
        }
    }
}

/// How a feature's distribution is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Numeric,
    Categorical,
    /// Values without a distribution to compare (lists, embeddings, bytes): only their
    /// missing share is.
    Presence,
}

/// A feature to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftFeature {
    pub name: String,
    pub kind: Kind,
    pub declared: FeatureType,
    pub pos: Pos,
}

/// The features of `file`'s view that drift is measured on, and those it is not
/// (lists, bytes, maps: named, with why).
pub fn features(file: &SchemaFile) -> (Vec<DriftFeature>, Vec<(String, String)>) {
    let mut compared = Vec::new();
    let mut skipped = Vec::new();
    for feature in &file.spec.features {
        if compared
            .iter()
            .any(|c: &DriftFeature| c.name == feature.name)
        {
            continue; // declared twice: `duplicate-feature` says so
        }
        let declared = FeatureType::parse(&feature.type_name)
            .unwrap_or(FeatureType::Other(feature.type_name.clone()));
        let has_allowed = feature
            .constraints
            .as_ref()
            .is_some_and(|c| c.allowed_values.is_some());
        let kind = match &declared {
            FeatureType::String | FeatureType::Bool => Some(Kind::Categorical),
            FeatureType::Int32 | FeatureType::Int64 if has_allowed => Some(Kind::Categorical),
            FeatureType::Int32
            | FeatureType::Int64
            | FeatureType::Float32
            | FeatureType::Float64
            | FeatureType::Timestamp { .. }
            | FeatureType::Datetime64Ns => Some(Kind::Numeric),
            FeatureType::List(_) | FeatureType::Embedding { .. } | FeatureType::Bytes => {
                Some(Kind::Presence)
            }
            FeatureType::Other(_) => None,
        };
        match kind {
            Some(kind) => compared.push(DriftFeature {
                name: feature.name.clone(),
                kind,
                declared,
                pos: file.feature_pos(&feature.name),
            }),
            None => skipped.push((
                feature.name.clone(),
                format!("{declared} has no distribution to compare"),
            )),
        }
    }
    (compared, skipped)
}

/// What an engine read of one feature: rows, missing values, and the distinct values
/// with their counts (numbers in ascending order, as `f64`; categories in any order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub rows: u64,
    pub nulls: u64,
    pub nans: u64,
    pub numbers: Vec<(f64, u64)>,
    pub categories: Vec<(String, u64)>,
}

/// A float that survives JSON: finite numbers as numbers (shortest round-trip form),
/// ±inf as the strings "inf" and "-inf".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Float(pub f64);

impl Serialize for Float {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            f if f == f64::INFINITY => s.serialize_str("inf"),
            f if f == f64::NEG_INFINITY => s.serialize_str("-inf"),
            f => s.serialize_f64(f),
        }
    }
}

impl<'de> Deserialize<'de> for Float {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Float, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(f) => Ok(Float(f)),
            Raw::Text(t) if t == "inf" => Ok(Float(f64::INFINITY)),
            Raw::Text(t) if t == "-inf" => Ok(Float(f64::NEG_INFINITY)),
            Raw::Text(_) => Err(serde::de::Error::custom(
                "expected a number, \"inf\" or \"-inf\"",
            )),
        }
    }
}

/// The reference distribution of one feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Distribution {
    Numeric {
        /// The 9 inner bin edges (the reference's deciles), ascending.
        edges: Vec<Float>,
        /// The reference's count in each of the 10 bins.
        bins: Vec<u64>,
        /// Points (value, values <= it) of the empirical distribution, ascending; every
        /// distinct value unless `thinned`.
        ecdf: Vec<(Float, u64)>,
        thinned: bool,
    },
    Categorical {
        /// The most frequent categories with their counts, most frequent first.
        categories: Vec<(String, u64)>,
        /// Values of the other categories.
        other: u64,
    },
    /// Only the rows and missing values (lists, embeddings, bytes).
    Presence {},
}

/// One feature of a reference profile.
// No `deny_unknown_fields`: serde does not support it beside `flatten`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureProfile {
    pub rows: u64,
    /// Nulls, and NaN in floats.
    pub missing: u64,
    #[serde(flatten)]
    pub distribution: Distribution,
}

impl FeatureProfile {
    fn kind(&self) -> Kind {
        match self.distribution {
            Distribution::Numeric { .. } => Kind::Numeric,
            Distribution::Categorical { .. } => Kind::Categorical,
            Distribution::Presence {} => Kind::Presence,
        }
    }

    /// The values in the distribution (not missing).
    fn values(&self) -> u64 {
        self.rows.saturating_sub(self.missing)
    }
}

/// The reference of one view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewProfile {
    /// The reference data, as the user named it.
    pub source: String,
    #[serde(deserialize_with = "unique_keys")]
    pub features: BTreeMap<String, FeatureProfile>,
}

/// What `--save-reference` writes and `--reference-profile` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceProfile {
    pub format: String,
    pub version: u32,
    #[serde(deserialize_with = "unique_keys")]
    pub views: BTreeMap<String, ViewProfile>,
}

/// A JSON object into a map, refusing a key given twice (which one would win is a
/// guess: serde_json keeps the last).
fn unique_keys<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((key, value)) = map.next_entry::<String, V>()? {
                if out.contains_key(&key) {
                    return Err(serde::de::Error::custom(format!(
                        "the key {} is given twice",
                        crate::text::short(&key)
                    )));
                }
                out.insert(key, value);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Unique(std::marker::PhantomData))
}

impl Default for ReferenceProfile {
    fn default() -> ReferenceProfile {
        ReferenceProfile {
            format: PROFILE_FORMAT.to_string(),
            version: PROFILE_VERSION,
            views: BTreeMap::new(),
        }
    }
}

impl ReferenceProfile {
    /// Parses a saved profile and checks that it is one (untrusted input: a file from a
    /// pull request). Errors say what is wrong, without the path (the caller adds it).
    pub fn parse(text: &str) -> Result<ReferenceProfile, String> {
        let profile: ReferenceProfile = serde_json::from_str(text).map_err(|e| {
            // serde's words for a value of the wrong kind, in the file's terms where
            // [`crate::text::plain_serde`] knows them (`-1` for a count: "expected a whole
            // number"); else, rather than its type names (`struct ReferenceProfile`,
            // `untagged enum Raw`), what a profile holds.
            let message = e.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m);
            let plain = crate::text::plain_serde(message, None);
            let internal = [
                "struct", "enum", "variant", "tuple", "invalid", "sequence", "u64",
            ]
            .iter()
            .any(|word| plain.contains(word));
            // serde's words for an unknown field of a presence entry, which has none of
            // its own beside `rows`, `missing` and `kind`.
            let plain = plain.replace(
                "there are no fields",
                "a presence entry holds only `rows`, `missing` and `kind`",
            );
            let what = match (e.classify(), internal) {
                (serde_json::error::Category::Data, true) => "a value is not of the kind a \
                     saved profile holds there (an object of `format`, `version` and \
                     `views`, each view's features with their counts, edges and points)"
                    .to_string(),
                _ => crate::text::clean(&plain),
            };
            format!(
                "not a reference profile: line {} column {}: {what}",
                e.line(),
                e.column()
            )
        })?;
        if profile.format != PROFILE_FORMAT {
            return Err(format!(
                "not a reference profile: `format` is {}, expected \"{PROFILE_FORMAT}\"",
                crate::text::short(&profile.format)
            ));
        }
        if profile.version != PROFILE_VERSION {
            return Err(format!(
                "reference profile version {} is not supported (this arrowfeat reads version {PROFILE_VERSION})",
                profile.version
            ));
        }
        for (view, view_profile) in &profile.views {
            for (name, feature) in &view_profile.features {
                feature.validate().map_err(|why| {
                    format!(
                        "view {} feature {}: {why}",
                        crate::text::short(view),
                        crate::text::short(name)
                    )
                })?;
            }
        }
        Ok(profile)
    }

    pub fn to_json(&self) -> String {
        // Nothing here fails to serialize: strings, integers and [`Float`]s. Compact: a
        // profile holds thousands of points.
        serde_json::to_string(self).unwrap_or_default() + "\n"
    }
}

impl FeatureProfile {
    fn validate(&self) -> Result<(), String> {
        if self.missing > self.rows {
            return Err(format!(
                "missing ({}) exceeds rows ({})",
                self.missing, self.rows
            ));
        }
        let values = self.values();
        match &self.distribution {
            Distribution::Numeric {
                edges, bins, ecdf, ..
            } => {
                if edges.len() != BINS - 1 || bins.len() != BINS {
                    return Err(format!(
                        "expected {} edges and {BINS} bins, found {} and {}",
                        BINS - 1,
                        edges.len(),
                        bins.len()
                    ));
                }
                if edges.iter().any(|e| e.0.is_nan()) || !edges.windows(2).all(|w| w[0].0 <= w[1].0)
                {
                    return Err("edges are not ascending numbers".into());
                }
                if sum(bins) != Some(values) {
                    return Err("bin counts do not add up to rows - missing".into());
                }
                let ascending = ecdf
                    .windows(2)
                    .all(|w| w[0].0 .0 < w[1].0 .0 && w[0].1 < w[1].1);
                if ecdf.iter().any(|p| p.0 .0.is_nan()) || !ascending {
                    return Err("ecdf points are not ascending".into());
                }
                if ecdf.last().map_or(0, |p| p.1) != values || ecdf.len() > values as usize {
                    return Err("the ecdf does not end at rows - missing".into());
                }
            }
            Distribution::Categorical { categories, other } => {
                let total = sum(&categories.iter().map(|c| c.1).collect::<Vec<_>>())
                    .and_then(|t| t.checked_add(*other));
                if total != Some(values) {
                    return Err("category counts do not add up to rows - missing".into());
                }
                let mut seen = std::collections::HashSet::new();
                if !categories.iter().all(|c| seen.insert(c.0.as_str())) {
                    return Err("a category is listed twice".into());
                }
            }
            Distribution::Presence {} => {}
        }
        Ok(())
    }
}

fn sum(counts: &[u64]) -> Option<u64> {
    counts.iter().try_fold(0u64, |a, &b| a.checked_add(b))
}

/// The `k`-th smallest value (0-based) of a distribution given as ascending distinct
/// values with counts.
fn order_statistic(numbers: &[(f64, u64)], cumulative: &[u64], k: u64) -> f64 {
    let at = cumulative.partition_point(|&c| c <= k);
    numbers[at.min(numbers.len() - 1)].0
}

/// numpy's default ("linear") quantile `q` of the distribution, computed the way numpy
/// computes it (virtual index `(n - 1) * q`, its `_lerp`) so that edges equal
/// `np.quantile`'s.
fn quantile(numbers: &[(f64, u64)], cumulative: &[u64], n: u64, q: f64) -> f64 {
    let virtual_index = (n - 1) as f64 * q;
    let below = virtual_index.floor();
    let gamma = virtual_index - below;
    let last = (n - 1) as f64;
    let lower = below.clamp(0.0, last) as u64;
    let upper = (below + 1.0).clamp(0.0, last) as u64;
    let a = order_statistic(numbers, cumulative, lower);
    let b = order_statistic(numbers, cumulative, upper);
    if a == b {
        return a; // also keeps ±inf from becoming NaN
    }
    if !a.is_finite() || !b.is_finite() {
        // Between -inf and a number (or +inf), numpy's answer is ±inf or NaN; the nearer
        // value keeps the edges ordered and the bins meaningful.
        return if gamma >= 0.5 { b } else { a };
    }
    let diff = b - a;
    let edge = if diff.is_infinite() {
        // Opposite signs near f64::MAX: the difference overflows, the weighted sum does not.
        a * (1.0 - gamma) + b * gamma
    } else if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    };
    edge.clamp(a, b)
}

/// The bin of `value` given the inner edges: bin i holds edges[i-1] <= value < edges[i].
fn bin_of(edges: &[f64], value: f64) -> usize {
    edges.partition_point(|&e| e <= value)
}

fn cumulative(numbers: &[(f64, u64)]) -> Vec<u64> {
    let mut total = 0u64;
    numbers
        .iter()
        .map(|&(_, c)| {
            total = total.saturating_add(c);
            total
        })
        .collect()
}

/// Distinct values in ascending order, equal values merged (0.0 and -0.0 are one value,
/// as SQL compares them), NaN and zero counts left out.
pub fn normalized(numbers: &[(f64, u64)]) -> Vec<(f64, u64)> {
    let mut sorted: Vec<(f64, u64)> = numbers
        .iter()
        .copied()
        .filter(|(v, c)| !v.is_nan() && *c > 0)
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, u64)> = Vec::with_capacity(sorted.len());
    for (value, count) in sorted {
        match out.last_mut() {
            Some(last) if last.0 == value => last.1 = last.1.saturating_add(count),
            _ => out.push((if value == 0.0 { 0.0 } else { value }, count)),
        }
    }
    out
}

impl Summary {
    /// The summary of two parts of the data together (the partitions of a Spark
    /// DataFrame): counts added, values kept distinct.
    pub fn merge(mut self, other: Summary) -> Summary {
        self.rows = self.rows.saturating_add(other.rows);
        self.nulls = self.nulls.saturating_add(other.nulls);
        self.nans = self.nans.saturating_add(other.nans);
        self.numbers.extend(other.numbers);
        self.numbers = normalized(&self.numbers);
        self.categories.extend(other.categories);
        self.categories = merged_categories(&self.categories);
        self
    }
}

/// `summary` with its numbers moved onto as few values as the comparison with
/// `reference` can tell apart: each value equal to a point of the reference (a bin edge
/// or a point of its distribution) stays; the values between two neighbouring points
/// become one value between them. Bins and Kolmogorov-Smirnov D are the same (between
/// two points the reference's distribution is flat, so D is reached at their ends), and
/// the summary is at most about twice the reference's points: what a worker sends.
pub fn coarsened(reference: &FeatureProfile, summary: &Summary) -> Summary {
    let Distribution::Numeric { edges, ecdf, .. } = &reference.distribution else {
        return summary.clone();
    };
    let mut points: Vec<f64> = edges
        .iter()
        .map(|e| e.0)
        .chain(ecdf.iter().map(|p| p.0 .0))
        .filter(|v| !v.is_nan())
        .collect();
    points.sort_by(f64::total_cmp);
    points.dedup_by(|a, b| a == b);
    if points.is_empty() {
        return summary.clone();
    }
    let mut numbers: Vec<(f64, u64)> = Vec::new();
    for (value, count) in normalized(&summary.numbers) {
        let at = points.partition_point(|p| *p < value);
        let kept = match (points.get(at), at) {
            (Some(&p), _) if p == value => value,
            (Some(&above), 0) => above.next_down(),
            (None, _) => points[at - 1].next_up(),
            (Some(&above), _) => between(points[at - 1], above),
        };
        match numbers.last_mut() {
            Some(last) if last.0 == kept => last.1 = last.1.saturating_add(count),
            _ => numbers.push((kept, count)),
        }
    }
    Summary {
        rows: summary.rows,
        nulls: summary.nulls,
        nans: summary.nans,
        numbers,
        categories: summary.categories.clone(),
    }
}

/// One value strictly between `a < b` (there is one: a value of the data lies there),
/// from `a` and `b` alone, so every part of the data picks the same.
fn between(a: f64, b: f64) -> f64 {
    let middle = a / 2.0 + b / 2.0;
    if middle > a && middle < b {
        middle
    } else {
        a.next_up()
    }
}

/// The reference profile of one feature, from its summary (the distribution in full).
pub fn profile(kind: Kind, summary: &Summary) -> FeatureProfile {
    let missing = summary.nulls.saturating_add(summary.nans);
    let distribution = match kind {
        Kind::Numeric => {
            let numbers = normalized(&summary.numbers);
            let cumulative = cumulative(&numbers);
            let n = cumulative.last().copied().unwrap_or(0);
            let edges: Vec<f64> = if n == 0 {
                Vec::new()
            } else {
                (1..BINS)
                    .map(|i| quantile(&numbers, &cumulative, n, i as f64 / BINS as f64))
                    .collect()
            };
            let mut bins = vec![0u64; BINS];
            if !edges.is_empty() {
                for &(value, count) in &numbers {
                    bins[bin_of(&edges, value)] += count;
                }
            }
            Distribution::Numeric {
                edges: if edges.is_empty() {
                    vec![Float(0.0); BINS - 1]
                } else {
                    edges.into_iter().map(Float).collect()
                },
                bins,
                ecdf: numbers
                    .iter()
                    .zip(&cumulative)
                    .map(|(&(v, _), &c)| (Float(v), c))
                    .collect(),
                thinned: false,
            }
        }
        Kind::Categorical => {
            let mut categories = merged_categories(&summary.categories);
            categories.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            Distribution::Categorical {
                categories,
                other: 0,
            }
        }
        Kind::Presence => Distribution::Presence {},
    };
    FeatureProfile {
        rows: summary.rows,
        missing,
        distribution,
    }
}

/// How a category is kept: as it is, or, when long, its first characters and a hash of
/// the whole value.
pub fn category_key(value: &str) -> std::borrow::Cow<'_, str> {
    if value.len() <= MAX_CATEGORY_BYTES {
        return std::borrow::Cow::Borrowed(value);
    }
    let mut cut = 64;
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}…(#{})",
        &value[..cut],
        arrowfeat_common::value_hash(value.bytes())
    ))
}

fn merged_categories(categories: &[(String, u64)]) -> Vec<(String, u64)> {
    let mut merged: BTreeMap<std::borrow::Cow<'_, str>, u64> = BTreeMap::new();
    for (value, count) in categories {
        let slot = merged.entry(category_key(value)).or_insert(0);
        *slot = slot.saturating_add(*count);
    }
    merged
        .into_iter()
        .filter(|(_, c)| *c > 0)
        .map(|(v, c)| (v.into_owned(), c))
        .collect()
}

impl FeatureProfile {
    /// The profile as saved: at most [`ECDF_POINTS`] points of the distribution, chosen
    /// at evenly spaced ranks (each keeps its exact cumulative count).
    pub fn thinned(&self) -> FeatureProfile {
        let mut out = self.clone();
        if let Distribution::Categorical { categories, other } = &mut out.distribution {
            if categories.len() > MAX_CATEGORIES {
                *other = categories[MAX_CATEGORIES..]
                    .iter()
                    .fold(*other, |a, c| a.saturating_add(c.1));
                categories.truncate(MAX_CATEGORIES);
            }
        }
        if let Distribution::Numeric { ecdf, thinned, .. } = &mut out.distribution {
            if ecdf.len() > ECDF_POINTS {
                let n = ecdf.last().map_or(0, |p| p.1);
                let mut kept = Vec::with_capacity(ECDF_POINTS);
                for k in 1..=ECDF_POINTS as u64 {
                    // The first point whose cumulative count reaches rank k * n / points.
                    let rank = (u128::from(k) * u128::from(n)).div_ceil(ECDF_POINTS as u128);
                    let at = ecdf.partition_point(|p| u128::from(p.1) < rank);
                    if let Some(point) = ecdf.get(at) {
                        if kept.last() != Some(point) {
                            kept.push(*point);
                        }
                    }
                }
                *ecdf = kept;
                *thinned = true;
            }
        }
        out
    }
}

/// The metrics of one feature.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub reference_values: u64,
    pub current_values: u64,
    pub reference_rows: u64,
    pub current_rows: u64,
    /// The change in the share of missing values (current - reference).
    pub missing_change: f64,
    /// `None` when either side has no values.
    pub psi: Option<f64>,
    pub jensen_shannon_divergence: Option<f64>,
    pub jensen_shannon_distance: Option<f64>,
    /// Numeric: D; `ks_bound` is how far from the exact D it may be (0 unless the
    /// reference was thinned).
    pub ks: Option<f64>,
    pub ks_bound: f64,
    /// Categorical: the largest change of one category's share.
    pub categories_linf: Option<f64>,
    /// Categorical: the most frequent categories of the current data that the reference
    /// does not have (at most 3), or, for a saved reference that keeps only its most
    /// frequent categories, that are not among those (`pooled`).
    pub new_categories: Vec<String>,
    pub pooled: bool,
}

fn shares(counts: &[u64], total: u64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| c as f64 / total as f64)
        .collect::<Vec<_>>()
}

/// PSI over two vectors of shares: Σ (q - p) ln(q / p), empty shares counted as 1e-4.
pub fn psi(reference: &[f64], current: &[f64]) -> f64 {
    reference
        .iter()
        .zip(current)
        .map(|(&p, &q)| {
            let p = if p == 0.0 { EMPTY_BIN } else { p };
            let q = if q == 0.0 { EMPTY_BIN } else { q };
            (q - p) * (q / p).ln()
        })
        .sum()
}

/// The Jensen–Shannon divergence, base 2 (between 0 and 1).
pub fn jensen_shannon(reference: &[f64], current: &[f64]) -> f64 {
    let mut divergence = 0.0;
    for (&p, &q) in reference.iter().zip(current) {
        let m = (p + q) / 2.0;
        if p > 0.0 {
            divergence += p * (p / m).log2();
        }
        if q > 0.0 {
            divergence += q * (q / m).log2();
        }
    }
    (divergence / 2.0).max(0.0)
}

/// D = sup |F_ref - F_cur| over the points of both distributions; the reference as
/// (value, values <= it) points, the current as ascending distinct values with counts.
pub fn ks(reference: &[(Float, u64)], reference_n: u64, current: &[(f64, u64)]) -> f64 {
    let current_n: u64 = current.iter().map(|c| c.1).sum();
    if reference_n == 0 || current_n == 0 {
        return 0.0;
    }
    let (mut i, mut j) = (0usize, 0usize);
    let (mut below_ref, mut below_cur) = (0u64, 0u64);
    // The largest gap as a numerator over `reference_n * current_n`: exact, so that a D
    // of exactly a threshold is not above it by a rounding.
    let mut d: u128 = 0;
    while i < reference.len() || j < current.len() {
        let next_ref = reference.get(i).map_or(f64::NAN, |p| p.0 .0);
        let next_cur = current.get(j).map_or(f64::NAN, |p| p.0);
        let x = match (i < reference.len(), j < current.len()) {
            (true, true) => next_ref.min(next_cur),
            (true, false) => next_ref,
            _ => next_cur,
        };
        while i < reference.len() && reference[i].0 .0 <= x {
            below_ref = reference[i].1;
            i += 1;
        }
        while j < current.len() && current[j].0 <= x {
            below_cur += current[j].1;
            j += 1;
        }
        d = d.max(share_gap(below_ref, reference_n, below_cur, current_n));
    }
    ratio(d, u128::from(reference_n) * u128::from(current_n))
}

/// |a / a_n - b / b_n| as a numerator over `a_n * b_n`, exactly.
fn share_gap(a: u64, a_n: u64, b: u64, b_n: u64) -> u128 {
    (u128::from(a) * u128::from(b_n)).abs_diff(u128::from(b) * u128::from(a_n))
}

/// `numerator / denominator` (0 for 0 / 0), reduced first: a share of counts that fit
/// in 53 bits is the nearest `f64` (1 / 10 is `0.1`, not `0.4 - 0.3`).
fn ratio(numerator: u128, denominator: u128) -> f64 {
    if denominator == 0 {
        return 0.0;
    }
    let (mut a, mut b) = (numerator, denominator);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    (numerator / a) as f64 / (denominator / a) as f64
}

/// Compares the current data's summary of a feature with its reference.
pub fn compare(reference: &FeatureProfile, current: &Summary) -> Metrics {
    let current_missing = current.nulls.saturating_add(current.nans);
    // A side without rows has a missing share of 0. Both shares over one denominator:
    // the change is exact, its sign the order of the numerators.
    let (reference_rows, current_rows) = (reference.rows.max(1), current.rows.max(1));
    let now = u128::from(current_missing) * u128::from(reference_rows);
    let before = u128::from(reference.missing) * u128::from(current_rows);
    let size = ratio(
        now.abs_diff(before),
        u128::from(current_rows) * u128::from(reference_rows),
    );
    let mut metrics = Metrics {
        reference_values: reference.values(),
        current_values: 0,
        reference_rows: reference.rows,
        current_rows: current.rows,
        missing_change: if now < before { -size } else { size },
        psi: None,
        jensen_shannon_divergence: None,
        jensen_shannon_distance: None,
        ks: None,
        ks_bound: 0.0,
        categories_linf: None,
        new_categories: Vec::new(),
        pooled: false,
    };
    let (reference_shares, current_shares) = match &reference.distribution {
        Distribution::Numeric {
            edges,
            bins,
            ecdf,
            thinned,
        } => {
            let numbers = normalized(&current.numbers);
            let n: u64 = numbers.iter().fold(0u64, |a, c| a.saturating_add(c.1));
            metrics.current_values = n;
            if n == 0 || metrics.reference_values == 0 {
                return metrics;
            }
            let edges: Vec<f64> = edges.iter().map(|e| e.0).collect();
            let mut current_bins = vec![0u64; BINS];
            for &(value, count) in &numbers {
                current_bins[bin_of(&edges, value)] += count;
            }
            metrics.ks = Some(ks(ecdf, metrics.reference_values, &numbers));
            if *thinned {
                metrics.ks_bound = 1.0 / ECDF_POINTS as f64;
            }
            (
                shares(bins, metrics.reference_values),
                shares(&current_bins, n),
            )
        }
        Distribution::Categorical { categories, other } => {
            let merged = merged_categories(&current.categories);
            let n: u64 = merged.iter().fold(0u64, |a, c| a.saturating_add(c.1));
            metrics.current_values = n;
            if n == 0 || metrics.reference_values == 0 {
                return metrics;
            }
            let index: BTreeMap<&str, usize> = categories
                .iter()
                .enumerate()
                .map(|(i, c)| (c.0.as_str(), i))
                .collect();
            let mut current_counts = vec![0u64; categories.len() + 1];
            let mut new = Vec::new();
            for (value, count) in &merged {
                match index.get(value.as_str()) {
                    Some(&i) => current_counts[i] += count,
                    None => {
                        current_counts[categories.len()] += count;
                        new.push((value.clone(), *count));
                    }
                }
            }
            new.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            metrics.new_categories = new.into_iter().take(3).map(|c| c.0).collect();
            metrics.pooled = *other > 0;
            let mut reference_counts: Vec<u64> = categories.iter().map(|c| c.1).collect();
            reference_counts.push(*other);
            let p = shares(&reference_counts, metrics.reference_values);
            let q = shares(&current_counts, n);
            let largest = reference_counts
                .iter()
                .zip(&current_counts)
                .map(|(&a, &b)| share_gap(a, metrics.reference_values, b, n))
                .max()
                .unwrap_or(0);
            metrics.categories_linf = Some(ratio(
                largest,
                u128::from(metrics.reference_values) * u128::from(n),
            ));
            (p, q)
        }
        Distribution::Presence {} => {
            metrics.current_values = current.rows.saturating_sub(current_missing);
            return metrics;
        }
    };
    metrics.psi = Some(psi(&reference_shares, &current_shares));
    let divergence = jensen_shannon(&reference_shares, &current_shares);
    metrics.jensen_shannon_divergence = Some(divergence);
    metrics.jensen_shannon_distance = Some(divergence.sqrt());
    metrics
}

/// A metric for a report: 4 significant digits.
fn short(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let digits = (3 - value.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{value:.digits$}")
}

/// The checks of one feature's drift.
pub fn findings(
    view_source: (&str, &str),
    feature: &DriftFeature,
    reference: Option<&FeatureProfile>,
    current: &Summary,
    thresholds: &Thresholds,
) -> Vec<Check> {
    let (reference_source, current_source) = view_source;
    let name = crate::text::short(&feature.name);
    let subject = |metric: &str| format!("drift {current_source}: feature `{name}`: {metric}");
    let Some(reference) = reference else {
        // A profile saved before lists, embeddings and bytes were profiled lacks them:
        // their missing share is not compared, which must be seen, yet the profile
        // lacking them is no reason to fail the gate.
        if feature.kind == Kind::Presence {
            return vec![Check::finding(
                Rule::DriftReference,
                crate::rules::Severity::Warning,
                subject("reference"),
                Expected("a reference profile of the feature"),
                Actual("none"),
                feature.pos,
                format!(
                    "the reference {} has no feature `{name}`, so its missing share is not compared: save the reference again with this schema",
                    crate::text::short(reference_source)
                ),
            )];
        }
        return vec![Check::fail(
            Rule::DriftReference,
            subject("reference"),
            Expected("a reference profile of the feature"),
            Actual("none"),
            feature.pos,
            format!(
                "the reference {} has no feature `{name}`: save the reference again with this schema",
                crate::text::short(reference_source)
            ),
        )];
    };
    if reference.kind() != feature.kind {
        return vec![Check::fail(
            Rule::DriftReference,
            subject("reference"),
            Expected(format!("a {} profile", kind_text(feature.kind))),
            Actual(format!("a {} profile", kind_text(reference.kind()))),
            feature.pos,
            format!(
                "the reference {} profiles `{name}` as {}, the schema declares it {} ({}): save the reference again with this schema",
                crate::text::short(reference_source),
                kind_text(reference.kind()),
                kind_text(feature.kind),
                feature.declared
            ),
        )];
    }
    let metrics = compare(reference, current);
    // A saved reference of more categories than it keeps cannot tell apart those it
    // pools: every measure of the feature says so, passing ones included.
    let pooled = match &reference.distribution {
        Distribution::Categorical { categories, other } if *other > 0 => format!(
            "; the saved reference keeps its {} most frequent categories and pools the \
             other {other} value(s) as one category, within which a change is not seen",
            categories.len()
        ),
        _ => String::new(),
    };
    let sizes = format!(
        "reference n={}, current n={}{pooled}",
        metrics.reference_values, metrics.current_values
    );
    // A side of no rows has no missing share to compare.
    if feature.kind == Kind::Presence && (reference.rows == 0 || current.rows == 0) {
        let side = match (reference.rows, current.rows) {
            (0, 0) => "both the reference and the current data have",
            (0, _) => "the reference has",
            _ => "the current data has",
        };
        return vec![Check::fail(
            Rule::DriftNullRate,
            subject("rows"),
            Expected("rows on both sides"),
            Actual(format!(
                "reference rows={}, current rows={}",
                reference.rows, current.rows
            )),
            feature.pos,
            format!(
                "`{name}` cannot be compared: {side} no rows (reference rows={}, current rows={})",
                reference.rows, current.rows
            ),
        )];
    }
    let distributed = feature.kind != Kind::Presence;
    let no_values = (distributed && metrics.psi.is_none()).then(|| {
        let side = match (metrics.reference_values, metrics.current_values) {
            (0, 0) => "both the reference and the current data have",
            (0, _) => "the reference has",
            _ => "the current data has",
        };
        Check::fail(
            Rule::DriftPsi,
            subject("values"),
            Expected("values on both sides"),
            Actual(sizes.clone()),
            feature.pos,
            format!(
                "`{name}` cannot be compared: {side} no values (null, NaN or no rows); {sizes}"
            ),
        )
    });
    let mut out = Vec::new();
    // `bound`: how far the value may be from the exact one (0: exact), shown pass or fail.
    let mut metric =
        |rule: Rule, label: &str, value: f64, bound: f64, threshold: f64, explain: &str| {
            let limit = crate::text::number(threshold);
            let actual = match bound > 0.0 {
                true => format!("{value} (within {bound}; {sizes})"),
                false => format!("{value} ({sizes})"),
            };
            // A change (of the missing share) may be a fall: its size is what is bounded.
            let expected = match rule {
                Rule::DriftNullRate => format!("between -{limit} and {limit}"),
                _ => format!("<= {limit}"),
            };
            let check = Check::pass(
                rule,
                subject(label),
                Expected(expected),
                Actual(actual),
                feature.pos,
            );
            out.push(check.fail_unless(value.abs() <= threshold, || {
                let beyond = match value < 0.0 {
                    true => format!("{}, a fall of more than {limit}", short(value)),
                    false => format!("{} > {limit}", short(value)),
                };
                format!("`{name}` drifted: {label} {beyond} ({explain}; {sizes})")
            }));
        };
    metric(
        Rule::DriftNullRate,
        "missing share change",
        metrics.missing_change,
        0.0,
        thresholds.null_rate,
        &format!(
            "missing values {} of {} rows in the reference, {} of {} now",
            reference.missing,
            reference.rows,
            current.nulls.saturating_add(current.nans),
            current.rows
        ),
    );
    if let Some(psi) = metrics.psi {
        let bins = match feature.kind {
            Kind::Numeric => "10 bins at the reference's deciles".to_string(),
            Kind::Categorical | Kind::Presence => "over the categories".to_string(),
        };
        metric(Rule::DriftPsi, "PSI", psi, 0.0, thresholds.psi, &bins);
    }
    if let Some(distance) = metrics.jensen_shannon_distance {
        metric(
            Rule::DriftJensenShannon,
            "Jensen-Shannon distance",
            distance,
            0.0,
            thresholds.jensen_shannon,
            &format!(
                "divergence {}, base 2",
                short(metrics.jensen_shannon_divergence.unwrap_or(0.0))
            ),
        );
    }
    if let Some(d) = metrics.ks {
        let how = if metrics.ks_bound > 0.0 {
            format!(
                "the largest gap between the two distributions, within {} (the saved reference keeps {ECDF_POINTS} points)",
                metrics.ks_bound
            )
        } else {
            "the largest gap between the two distributions".to_string()
        };
        metric(
            Rule::DriftKs,
            "Kolmogorov-Smirnov D",
            d,
            metrics.ks_bound,
            thresholds.ks,
            &how,
        );
    }
    if let Some(linf) = metrics.categories_linf {
        let new = if metrics.new_categories.is_empty() {
            String::new()
        } else {
            format!(
                "; {}: {}",
                if metrics.pooled {
                    "not among the reference's most frequent"
                } else {
                    "new"
                },
                metrics
                    .new_categories
                    .iter()
                    .map(|c| crate::text::short(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        metric(
            Rule::DriftCategories,
            "largest category share change",
            linf,
            0.0,
            thresholds.categories,
            &format!("L-infinity over the category shares{new}"),
        );
    }
    out.extend(no_values);
    out
}

fn kind_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Numeric => "numeric",
        Kind::Categorical => "categorical",
        Kind::Presence => "missing-share-only",
    }
}

#[cfg(test)]
mod tests {

    mod coarse {
        use super::super::*;
        use proptest::prelude::*;

        fn value() -> impl Strategy<Value = f64> {
            prop_oneof![
                (-20i32..20).prop_map(|v| f64::from(v) / 4.0),
                any::<f64>(),
                Just(0.0),
                Just(-0.0),
                Just(f64::MAX),
                Just(-f64::MAX),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(f64::MIN_POSITIVE / 8.0),
                Just(f64::NAN),
            ]
        }

        fn summary(values: &[f64]) -> Summary {
            Summary {
                rows: values.len() as u64 + 1,
                nulls: 1,
                nans: values.iter().filter(|v| v.is_nan()).count() as u64,
                numbers: values
                    .iter()
                    .filter(|v| !v.is_nan())
                    .map(|&v| (v, 1))
                    .collect(),
                categories: Vec::new(),
            }
        }

        fn same(a: &Metrics, b: &Metrics) -> bool {
            let bits = |m: &Metrics| {
                (
                    m.psi.map(f64::to_bits),
                    m.jensen_shannon_divergence.map(f64::to_bits),
                    m.ks.map(f64::to_bits),
                    m.current_values,
                    m.current_rows,
                    m.missing_change.to_bits(),
                )
            };
            bits(a) == bits(b)
        }

        proptest! {
            /// A coarsened summary, whole or merged from parts, compares with the
            /// reference as the full one does, to the bit, for full and thinned profiles.
            #[test]
            fn coarsened_parts_compare_as_the_whole(
                reference in proptest::collection::vec(value(), 0..3000),
                current in proptest::collection::vec(value(), 0..300),
                split in 0usize..300,
            ) {
                let full = profile(Kind::Numeric, &summary(&reference));
                for profile in [full.clone(), full.thinned()] {
                    let whole = compare(&profile, &summary(&current));
                    let split = split.min(current.len());
                    let (a, b) = current.split_at(split);
                    let merged = coarsened(&profile, &summary(a)).merge(coarsened(&profile, &summary(b)));
                    let mut merged = merged;
                    merged.rows -= 1; // each part counted one null row; the whole has one
                    merged.nulls -= 1;
                    prop_assert!(same(&whole, &compare(&profile, &coarsened(&profile, &summary(&current)))));
                    prop_assert!(same(&whole, &compare(&profile, &merged)), "{:?} vs {:?}", whole, compare(&profile, &merged));
                }
            }
        }
    }
    use super::*;

    fn summary_of(values: &[f64]) -> Summary {
        let mut numbers: Vec<(f64, u64)> = values.iter().map(|&v| (v, 1)).collect();
        numbers.sort_by(|a, b| a.0.total_cmp(&b.0));
        Summary {
            rows: values.len() as u64,
            nulls: 0,
            nans: values.iter().filter(|v| v.is_nan()).count() as u64,
            numbers,
            categories: Vec::new(),
        }
    }

    /// numpy.quantile(values, q) with the default method, written the textbook way.
    fn naive_quantile(sorted: &[f64], q: f64) -> f64 {
        let h = (sorted.len() - 1) as f64 * q;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (h - lo as f64)
    }

    fn naive_ks(a: &[f64], b: &[f64]) -> f64 {
        let cdf = |s: &[f64], x: f64| s.iter().filter(|&&v| v <= x).count() as f64 / s.len() as f64;
        a.iter()
            .chain(b)
            .map(|&x| (cdf(a, x) - cdf(b, x)).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn edges_and_ks_agree_with_naive_references() {
        let mut state = 42u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / (1u64 << 53) as f64
        };
        for round in 0..20 {
            let a: Vec<f64> = (0..200 + round * 7)
                .map(|_| (next() * 50.0).floor())
                .collect();
            let b: Vec<f64> = (0..150 + round)
                .map(|_| (next() * 60.0).floor() - 5.0)
                .collect();
            let reference = profile(Kind::Numeric, &summary_of(&a));
            let mut sorted = a.clone();
            sorted.sort_by(f64::total_cmp);
            let Distribution::Numeric { edges, bins, .. } = &reference.distribution else {
                panic!("numeric")
            };
            for (i, edge) in edges.iter().enumerate() {
                let naive = naive_quantile(&sorted, (i + 1) as f64 / 10.0);
                assert!(
                    (edge.0 - naive).abs() <= 1e-9 * naive.abs().max(1.0),
                    "{edge:?} {naive}"
                );
            }
            assert_eq!(bins.iter().sum::<u64>(), a.len() as u64);
            let metrics = compare(&reference, &summary_of(&b));
            // The naive D subtracts rounded shares; ours is the exact fraction, rounded once.
            let naive = naive_ks(&a, &b);
            assert!(
                (metrics.ks.unwrap() - naive).abs() <= 1e-15,
                "{metrics:?} {naive}"
            );
            let saved = reference.thinned();
            assert_eq!(
                compare(&saved, &summary_of(&b)),
                metrics,
                "exact when few values"
            );
        }
    }

    #[test]
    fn identical_samples_do_not_drift_and_shifted_ones_do() {
        let a: Vec<f64> = (0..1000).map(f64::from).collect();
        let same = compare(&profile(Kind::Numeric, &summary_of(&a)), &summary_of(&a));
        assert_eq!(same.psi, Some(0.0));
        assert_eq!(same.ks, Some(0.0));
        assert_eq!(same.jensen_shannon_distance, Some(0.0));
        let shifted: Vec<f64> = a.iter().map(|v| v + 500.0).collect();
        let moved = compare(
            &profile(Kind::Numeric, &summary_of(&a)),
            &summary_of(&shifted),
        );
        assert_eq!(moved.ks, Some(0.5));
        assert!(moved.psi.unwrap() > 1.0);
    }

    #[test]
    fn thinned_profiles_bound_d() {
        let a: Vec<f64> = (0..50_000).map(|i| f64::from(i) * 0.37).collect();
        let b: Vec<f64> = (0..30_000).map(|i| f64::from(i) * 0.5 + 11.0).collect();
        let full = profile(Kind::Numeric, &summary_of(&a));
        let saved = full.thinned();
        let Distribution::Numeric { ecdf, thinned, .. } = &saved.distribution else {
            panic!("numeric")
        };
        assert!(*thinned && ecdf.len() <= ECDF_POINTS);
        let exact = compare(&full, &summary_of(&b));
        let approximate = compare(&saved, &summary_of(&b));
        assert_eq!(exact.psi, approximate.psi);
        assert_eq!(
            exact.jensen_shannon_divergence,
            approximate.jensen_shannon_divergence
        );
        let gap = (exact.ks.unwrap() - approximate.ks.unwrap()).abs();
        assert!(gap <= approximate.ks_bound, "{gap}");
    }

    #[test]
    fn extremes_neither_panic_nor_make_nan() {
        let values = [
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            5e-324,
            f64::NAN,
        ];
        let reference = profile(Kind::Numeric, &summary_of(&values));
        let metrics = compare(&reference, &summary_of(&values));
        assert_eq!(metrics.psi, Some(0.0));
        assert_eq!(metrics.ks, Some(0.0));
        let one = compare(&reference, &summary_of(&[f64::INFINITY]));
        assert!(one.psi.unwrap().is_finite() && one.ks.unwrap() > 0.0);
        let empty = compare(&reference, &Summary::default());
        assert_eq!((empty.psi, empty.ks), (None, None));
        let json = ReferenceProfile {
            views: [(
                "v".to_string(),
                ViewProfile {
                    source: "x".into(),
                    features: [("f".to_string(), reference.clone())].into(),
                },
            )]
            .into(),
            ..ReferenceProfile::default()
        }
        .to_json();
        let back = ReferenceProfile::parse(&json).unwrap();
        assert_eq!(back.views["v"].features["f"], reference);
    }

    #[test]
    fn categories_compare_by_share() {
        let summary = |pairs: &[(&str, u64)]| Summary {
            rows: pairs.iter().map(|p| p.1).sum(),
            categories: pairs.iter().map(|(v, c)| (v.to_string(), *c)).collect(),
            ..Summary::default()
        };
        let reference = profile(Kind::Categorical, &summary(&[("a", 50), ("b", 50)]));
        let metrics = compare(&reference, &summary(&[("a", 25), ("b", 25), ("new", 50)]));
        assert_eq!(metrics.categories_linf, Some(0.5));
        assert_eq!(metrics.new_categories, vec!["new".to_string()]);
        let p = [0.5, 0.5, 0.0];
        let q = [0.25, 0.25, 0.5];
        assert_eq!(metrics.psi, Some(psi(&p, &q)));
        assert!(
            (metrics.jensen_shannon_divergence.unwrap() - jensen_shannon(&p, &q)).abs() < 1e-15
        );
    }

    #[test]
    fn hostile_profiles_are_refused() {
        for text in [
            "",
            "[]",
            r#"{"format":"other","version":1,"views":{}}"#,
            r#"{"format":"arrowfeat-drift-reference","version":9,"views":{}}"#,
            r#"{"format":"arrowfeat-drift-reference","version":1,"views":{"v":{"source":"s","features":{"f":{"rows":1,"missing":2,"kind":"categorical","categories":[],"other":0}}}}}"#,
            r#"{"format":"arrowfeat-drift-reference","version":1,"views":{"v":{"source":"s","features":{"f":{"rows":1,"missing":0,"kind":"numeric","edges":[],"bins":[],"ecdf":[],"thinned":false}}}}}"#,
            r#"{"format":"arrowfeat-drift-reference","version":1,"views":{"v":{"source":"s","features":{"f":{"rows":18446744073709551615,"missing":0,"kind":"categorical","categories":[["a",18446744073709551615],["b",1]],"other":0}}}}}"#,
        ] {
            assert!(ReferenceProfile::parse(text).is_err(), "{text}");
        }
        // The wrong shape is told in the profile's terms, not serde's.
        for text in [
            "[]",
            r#"{"format":"arrowfeat-drift-reference","version":1,"views":{"v":{"source":"s","features":{"f":{"rows":-1,"missing":0,"kind":"categorical","categories":[],"other":0}}}}}"#,
            r#"{"format":"arrowfeat-drift-reference","version":1,"views":{"v":{"source":"s","features":{"f":{"rows":1,"missing":0,"kind":"categorical","categories":{"a":1},"other":0}}}}}"#,
        ] {
            let why = ReferenceProfile::parse(text).unwrap_err();
            assert!(
                ["struct", "u64", "sequence", "invalid"]
                    .iter()
                    .all(|word| !why.contains(word))
                    && why.contains("line 1 column"),
                "{why}"
            );
        }
    }

    fn float_feature() -> DriftFeature {
        DriftFeature {
            name: "x".into(),
            kind: Kind::Numeric,
            declared: FeatureType::Float64,
            pos: Pos::UNKNOWN,
        }
    }

    /// `rows` rows, `missing` of them null and the others 1.0.
    fn with_missing(rows: u64, missing: u64) -> Summary {
        Summary {
            rows,
            nulls: missing,
            ..summary_of(&vec![1.0; (rows - missing) as usize])
        }
    }

    /// A measure of exactly a threshold is not above it: shares of counts are exact
    /// fractions, not differences of rounded shares (0.4 - 0.3 > 0.1 in floats).
    #[test]
    fn shares_of_counts_are_exact_at_a_threshold() {
        let mut values = vec![0.0; 4];
        values.extend([1.0; 6]);
        let reference = profile(Kind::Numeric, &summary_of(&values));
        let mut current = vec![0.0; 3];
        current.extend([1.0; 7]);
        let metrics = compare(&reference, &summary_of(&current));
        assert_eq!(metrics.ks, Some(0.1));
        let thresholds = Thresholds::default();
        let feature = float_feature();
        let checks = findings(
            ("r", "c"),
            &feature,
            Some(&reference),
            &summary_of(&current),
            &Thresholds {
                ks: 0.1,
                ..thresholds
            },
        );
        assert!(checks.iter().all(|c| !c.status.is_finding()), "{checks:#?}");
        // The missing share: 11 of 20, then 10 of 20, a change of exactly -0.05.
        let with_missing = |missing| with_missing(20, missing);
        let metrics = compare(
            &profile(Kind::Numeric, &with_missing(11)),
            &with_missing(10),
        );
        assert_eq!(metrics.missing_change, -0.05);
        let rose = compare(
            &profile(Kind::Numeric, &with_missing(10)),
            &with_missing(11),
        );
        assert_eq!(rose.missing_change, 0.05);
        // Categories: 8 of 20, then 6 of 20.
        let categories = |a: u64| Summary {
            rows: 20,
            categories: vec![("a".into(), a), ("b".into(), 20 - a)],
            ..Summary::default()
        };
        let metrics = compare(&profile(Kind::Categorical, &categories(8)), &categories(6));
        assert_eq!(metrics.categories_linf, Some(0.1));
        assert_eq!(ratio(0, 0), 0.0);
        assert_eq!(ratio(u128::MAX, u128::MAX), 1.0);
    }

    #[test]
    fn a_fall_is_told_as_one() {
        let with_missing = |missing| with_missing(10, missing);
        let feature = float_feature();
        let checks = findings(
            ("r", "c"),
            &feature,
            Some(&profile(Kind::Numeric, &with_missing(9))),
            &with_missing(1),
            &Thresholds::default(),
        );
        let fell = checks
            .iter()
            .find(|c| c.rule == Rule::DriftNullRate)
            .unwrap();
        assert!(
            fell.message
                .contains("missing share change -0.8000, a fall of more than 0.05"),
            "{}",
            fell.message
        );
    }

    #[test]
    fn a_saved_reference_that_pools_categories_says_so() {
        let many = Summary {
            rows: (MAX_CATEGORIES + 2) as u64,
            categories: (0..MAX_CATEGORIES + 2)
                .map(|i| (format!("c{i}"), 1))
                .collect(),
            ..Summary::default()
        };
        let saved = profile(Kind::Categorical, &many).thinned();
        let feature = DriftFeature {
            name: "c".into(),
            kind: Kind::Categorical,
            declared: FeatureType::String,
            pos: Pos::UNKNOWN,
        };
        let checks = findings(
            ("r", "c"),
            &feature,
            Some(&saved),
            &many,
            &Thresholds::default(),
        );
        assert!(!checks.is_empty());
        for check in &checks {
            assert!(
                check
                    .actual
                    .contains("pools the other 2 value(s) as one category"),
                "{check:#?}"
            );
        }
    }

    #[test]
    fn lists_are_compared_by_their_missing_share_alone() {
        let feature = DriftFeature {
            name: "tags".into(),
            kind: Kind::Presence,
            declared: FeatureType::List(Box::new(FeatureType::String)),
            pos: Pos::UNKNOWN,
        };
        let rows = |rows, nulls| Summary {
            rows,
            nulls,
            ..Summary::default()
        };
        let saved = profile(Kind::Presence, &rows(10, 2));
        let text = ReferenceProfile {
            views: BTreeMap::from([(
                "v".to_string(),
                ViewProfile {
                    source: "r".into(),
                    features: BTreeMap::from([("tags".to_string(), saved.thinned())]),
                },
            )]),
            ..ReferenceProfile::default()
        }
        .to_json();
        assert!(
            text.contains(r#""tags":{"rows":10,"missing":2,"kind":"presence"}"#),
            "{text}"
        );
        let read = ReferenceProfile::parse(&text).unwrap().views["v"].features["tags"].clone();
        assert_eq!(read, saved);
        let checks = findings(
            ("r", "c"),
            &feature,
            Some(&read),
            &rows(10, 5),
            &Thresholds::default(),
        );
        assert_eq!(checks.len(), 1, "{checks:#?}");
        assert_eq!(checks[0].rule, Rule::DriftNullRate);
        assert_eq!(checks[0].status, crate::report::Status::Error);
        assert!(
            checks[0]
                .message
                .contains("missing share change 0.3000 > 0.05 (missing values 2 of 10 rows in the reference, 5 of 10 now; reference n=8, current n=5)"),
            "{}",
            checks[0].message
        );
        // No rows on a side: no missing share to compare, and no pass.
        let checks = findings(
            ("r", "c"),
            &feature,
            Some(&read),
            &rows(0, 0),
            &Thresholds::default(),
        );
        assert_eq!(checks.len(), 1, "{checks:#?}");
        assert_eq!(checks[0].status, crate::report::Status::Error);
        assert!(
            checks[0]
                .message
                .contains("cannot be compared: the current data has no rows"),
            "{}",
            checks[0].message
        );
        // A profile saved before lists were profiled: a warning, not a failed gate.
        let checks = findings(
            ("r", "c"),
            &feature,
            None,
            &rows(10, 5),
            &Thresholds::default(),
        );
        assert_eq!(checks.len(), 1, "{checks:#?}");
        assert_eq!(checks[0].status, crate::report::Status::Warning);
        assert!(
            checks[0]
                .message
                .contains("its missing share is not compared"),
            "{}",
            checks[0].message
        );
    }
}
