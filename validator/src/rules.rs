//! The rule catalogue: every finding carries one of these stable ids. `docs/rules.md` is
//! generated from this table (a test keeps it in sync).

use serde::{Deserialize, Serialize};

/// How serious a finding of a rule is, by default (see [`Rule::default_severity`]) or as
/// configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The input could not be read at all: `arrowfeat check` exits with 2.
    Input,
    /// The schema file itself is wrong, before any store is consulted.
    Schema,
    /// The schema file disagrees with the feature store.
    Store,
    /// A change between two revisions of a schema file.
    Compatibility,
    /// A baseline entry or an inline ignore comment.
    Suppression,
    /// The data of a view disagrees with its schema file (`arrowfeat check --data`).
    Data,
    /// The current data of a view drifted from its reference (`arrowfeat drift`).
    Drift,
    /// Serving data disagrees with training data (`arrowfeat skew`).
    Skew,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Input => "input",
            Category::Schema => "schema",
            Category::Store => "store",
            Category::Compatibility => "compatibility",
            Category::Suppression => "suppression",
            Category::Data => "data",
            Category::Drift => "drift",
            Category::Skew => "skew",
        }
    }
}

macro_rules! rules {
    ($($variant:ident = $id:literal, $category:ident, $severity:ident, $summary:literal;)*) => {
        /// A rule id. Its string form ([`Rule::as_str`]) is what reports print and what
        /// `arrowfeat.toml` names; [`Rule::from_str`](std::str::FromStr) parses it back.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $(#[doc = $summary] $variant,)*
        }

        impl Rule {
            /// Every rule, in documentation order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable id: `feature-type`, `compat-breaking-change`, ...
            pub const fn as_str(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            pub const fn category(self) -> Category {
                match self { $(Rule::$variant => Category::$category,)* }
            }

            /// The severity of its findings unless `arrowfeat.toml` changes it.
            pub const fn default_severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$severity,)* }
            }

            /// What makes it fire (docs/rules.md).
            pub const fn summary(self) -> &'static str {
                match self { $(Rule::$variant => $summary,)* }
            }
        }
    };
}

rules! {
    InputUnreadable = "input-unreadable", Input, Error,
        "The file or directory cannot be read: missing, a directory where a file was expected, no permission, not UTF-8, empty, or larger than the size limit.";
    YamlSyntax = "yaml-syntax", Input, Error,
        "The file is not well-formed YAML (or JSON, for registries).";
    YamlDuplicateKey = "yaml-duplicate-key", Input, Error,
        "A mapping has the same key twice; YAML parsers disagree on which one wins, so it is refused.";
    YamlLimits = "yaml-limits", Input, Error,
        "The document exceeds a parsing budget: alias expansion (\"billion laughs\"), nesting depth or node count.";
    SchemaViolation = "schema-violation", Schema, Error,
        "The file does not match `schemas/feature-view.schema.json`: a required key is missing or a value has the wrong type or form.";
    SchemaUnknownKey = "schema-unknown-key", Schema, Error,
        "A key the format does not define (usually a typo); the finding suggests the closest known key.";
    TypeSyntax = "type-syntax", Schema, Error,
        "A `type` is not in the type vocabulary (docs/schema-format.md#types).";
    DuplicateFeature = "duplicate-feature", Schema, Error,
        "Two features (or a feature and an entity join key, two entities, or a timestamp and any of these) share a name; the comparison with an earlier revision then compares each declaration.";
    DuplicateView = "duplicate-view", Schema, Error,
        "Two schema files declare the same feature view.";
    ConstraintInvalid = "constraint-invalid", Schema, Error,
        "Constraints that cannot hold: `min` greater than `max`, numeric bounds on a non-numeric type, allowed values of the wrong type.";
    TimestampDeclaration = "timestamp-declaration", Schema, Error,
        "The event timestamp is declared inconsistently (`datetime64` with a unit other than `ns` or with a time zone) or not `required`.";
    VersionSemver = "version-semver", Schema, Error,
        "`schema_version` is not a semantic version (MAJOR.MINOR.PATCH).";
    VersionNameSuffix = "version-name-suffix", Schema, Error,
        "The view name ends in `_vN` but N is not the major version of `schema_version`.";
    ViewMissing = "view-missing", Store, Error,
        "The feature store has no feature view of this name.";
    VersionStoreTag = "version-store-tag", Store, Error,
        "The store's `schema_version` tag differs from the file's `schema_version` (or is absent: warning).";
    FeatureMissing = "feature-missing", Store, Error,
        "A feature the schema declares is not in the store's feature view.";
    FeatureExtra = "feature-extra", Store, Error,
        "The store's feature view has a feature the schema does not declare.";
    FeatureCount = "feature-count", Store, Info,
        "The number of features differs between the schema and the store (a summary beside `feature-missing` and `feature-extra`).";
    FeatureType = "feature-type", Store, Error,
        "A feature's type differs from the store's: incompatible is an error, a lossless difference (compatible) a warning.";
    FeatureNullability = "feature-nullability", Store, Error,
        "A feature's nullability differs from the store's, where the store records it.";
    EntityMissing = "entity-missing", Store, Error,
        "An entity the schema declares is not an entity of the store's feature view.";
    EntityExtra = "entity-extra", Store, Error,
        "The store's feature view has an entity the schema does not declare.";
    EntityJoinKey = "entity-join-key", Store, Error,
        "An entity's join key differs from the store's.";
    EntityType = "entity-type", Store, Error,
        "An entity join key's type differs from the store's.";
    TimestampField = "timestamp-field", Store, Error,
        "The store's batch source uses another column (or none) as its event timestamp field.";
    TimestampType = "timestamp-type", Store, Warning,
        "The event timestamp's declared type differs from the store's timestamp type (warning when it converts losslessly, error otherwise).";
    CreatedTimestamp = "created-timestamp", Store, Error,
        "The created timestamp column differs from the store's `createdTimestampColumn`.";
    Ttl = "ttl", Store, Error,
        "The TTL differs from the store's.";
    CompatBreaking = "compat-breaking-change", Compatibility, Error,
        "A change that breaks the configured compatibility mode (BACKWARD, FORWARD or FULL) without a major version bump, or a feature view removed from the new revision.";
    CompatVersionBump = "compat-version-bump", Compatibility, Error,
        "The version bump is too small for the change (an additive change needs at least a minor bump, any change at least a patch) or the version went down.";
    CompatChange = "compat-change", Compatibility, Info,
        "A change between revisions that the version bump allows, listed for review.";
    DataUnreadable = "data-unreadable", Input, Error,
        "The data given for a view cannot be read: a missing path, a corrupt or truncated Parquet file, a CSV or JSON file that does not parse, files of a directory that disagree.";
    DataNotRead = "data-not-read", Data, Error,
        "The store names no file to read for a view whose data comes from it (`--data-from-store`, `--current-from-store`, `--reference-from-store`; in Python `data_from_store`, `current_from_store`, `reference_from_store`): it has no view of that name, or the view's batch source is not a file source. The view's data was not read; give its path instead. Also a view given no data while other views of the run were given theirs by name (`--data a=PATH` beside the schema files of `a` and `b`), or given one side only of `skew`'s serving and training data: it was not checked, and the run does not pass as if it had been.";
    DataColumnMissing = "data-column-missing", Data, Error,
        "A column the schema declares (an entity key, the event or created timestamp, a feature) is not in the data.";
    DataColumnType = "data-column-type", Data, Error,
        "A column of the data has another type than the schema declares: incompatible is an error, a lossless difference (compatible) a warning, as for `feature-type`; a column of nulls alone that the data gives no type (CSV, JSON) a warning.";
    DataNull = "data-null", Data, Error,
        "Null values in an entity key, the event timestamp or a feature declared `nullable: false` (counted apart from NaN and infinities).";
    DataNonFinite = "data-non-finite", Data, Warning,
        "NaN, +inf or -inf values in a float column (each counted apart), or rows of a list or embedding of floats holding such an element.";
    DataOutOfRange = "data-out-of-range", Data, Error,
        "Values below the feature's `min` or above its `max`.";
    DataNotAllowed = "data-not-allowed", Data, Error,
        "Non-null values that are not in the feature's `allowed_values`.";
    DataFutureEvent = "data-future-event", Data, Error,
        "Event timestamps after the run's as-of instant (`--as-of`, `as_of` in Python; default: now): rows from the future leak into training sets.";
    DataCreatedBeforeEvent = "data-created-before-event", Data, Error,
        "Created (ingestion) timestamps earlier than the row's event timestamp.";
    DataStaleKeys = "data-stale-keys", Data, Info,
        "Entity keys whose latest row is older than the TTL at the run's as-of instant: a training set at that time gets no value for them (the share is reported).";
    DataDuplicateRows = "data-duplicate-rows", Data, Warning,
        "Rows that repeat another row with the same entity keys and event timestamp and the same values in every declared column.";
    DataConflictingRows = "data-conflicting-rows", Data, Error,
        "Entity keys and an event timestamp with two or more rows whose values differ: which one a point-in-time join takes is a tie-break, not the truth.";
    DriftNullRate = "drift-null-rate", Drift, Error,
        "The share of missing values (null, and NaN in floats) of a feature changed by more than `[drift] null_rate` (default 0.05) between the reference and the current data.";
    DriftPsi = "drift-psi", Drift, Error,
        "A feature's population stability index exceeds `[drift] psi` (default 0.2): numeric features over 10 bins at the reference's deciles, categorical ones over their categories; empty bins count as 1e-4, natural log.";
    DriftJensenShannon = "drift-jensen-shannon", Drift, Error,
        "A feature's Jensen-Shannon distance (the square root of the divergence, base 2, over the same bins or categories as PSI) exceeds `[drift] jensen_shannon` (default 0.1).";
    DriftKs = "drift-ks", Drift, Error,
        "A numeric feature's Kolmogorov-Smirnov statistic D (the largest gap between the two empirical distribution functions, as scipy's `ks_2samp` computes it) exceeds `[drift] ks` (default 0.1).";
    DriftCategories = "drift-categories", Drift, Error,
        "The share of one category of a categorical feature changed by more than `[drift] categories` (default 0.1): the L-infinity distance; new categories are named.";
    DriftReference = "drift-reference", Drift, Error,
        "The reference and the current data of a view do not pair up: the saved reference profile (`--reference-profile`, `reference_profile` in Python) has no profile of the view or of a feature the schema declares, or profiles it as another kind (numeric or categorical), so save it again; or a view has current data but no reference, or reference data but no current data (unless the reference is being saved).";
    ReferenceNotSaved = "reference-not-saved", Input, Error,
        "The reference profile was not saved (`--save-reference`, `save_reference` in Python): a view's reference data could not be profiled in full (the view's findings say why), and a partial profile would replace a complete one. Like every input finding it cannot be lowered or ignored, so a run that was asked to save and did not never passes.";
    SkewMismatch = "skew-mismatch", Skew, Error,
        "A feature's served value differs from its training value (beyond the value tolerance) in rows matched on the entity keys and, as of the serving time, within the time tolerance.";
    SkewMissing = "skew-missing", Skew, Error,
        "Serving rows with no training row of their entity keys within the time tolerance before the serving time: the training data lacks what was served.";
    SkewExtra = "skew-extra", Skew, Info,
        "Training rows that no serving row matched (usual when the serving log is a sample; the share is reported).";
    IgnoreComment = "ignore-comment", Suppression, Error,
        "An inline `# arrowfeat: ignore[rule-id] reason` comment without a reason, with an unknown rule id (the finding suggests the closest), with a rule of category `input`, or without brackets.";
    IgnoreUnused = "ignore-unused", Suppression, Warning,
        "An inline ignore comment that matches no finding of its rules on its own line or the next.";
    BaselineUnused = "baseline-unused", Suppression, Warning,
        "An entry of the baseline file that matches no finding: it was fixed or changed; rewrite the baseline (`--write-baseline`, `write_baseline` in Python).";
}

impl Rule {
    /// The rule with this id.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|rule| rule.as_str() == id)
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A rule id that is not in the catalogue, with the closest one when it looks like a typo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRule {
    /// The id as given, escaped and cut for display.
    pub id: String,
    pub suggestion: Option<Rule>,
}

impl std::fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown rule `{}` (rules are listed in docs/rules.md)",
            self.id
        )?;
        if let Some(rule) = self.suggestion {
            write!(f, "; did you mean `{rule}`?")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownRule {}

impl std::str::FromStr for Rule {
    type Err = UnknownRule;

    fn from_str(id: &str) -> Result<Rule, UnknownRule> {
        Rule::from_id(id).ok_or_else(|| {
            let id = crate::text::quote_hashed(id, 80);
            let suggestion = crate::suggest::closest(&id, Rule::ALL.iter().map(|r| r.as_str()))
                .and_then(Rule::from_id);
            UnknownRule { id, suggestion }
        })
    }
}

/// `docs/rules.md`.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated from validator/src/rules.rs by `make docs`; do not edit by hand. -->\n\n\
         Every finding of `arrowfeat check` and `arrowfeat diff` carries one of these rule ids. \
         The severity is the default; `arrowfeat.toml` can change it per rule or ignore a rule \
         for some views (see [ci.md](ci.md#configuration)). Findings of category `input` make \
         `arrowfeat check` exit with 2, whatever their severity.\n\n\
         | rule | category | default severity | fires when |\n|---|---|---|---|\n",
    );
    for rule in Rule::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            rule.as_str(),
            rule.category().as_str(),
            rule.default_severity().as_str(),
            rule.summary().replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_typos_are_explained() {
        for rule in Rule::ALL {
            assert_eq!(rule.as_str().parse::<Rule>(), Ok(*rule));
            assert_eq!(serde_json::to_value(rule).unwrap(), rule.as_str());
        }
        let error = "feature-extar".parse::<Rule>().unwrap_err();
        assert_eq!(error.suggestion, Some(Rule::FeatureExtra));
        assert_eq!(
            error.to_string(),
            "unknown rule `feature-extar` (rules are listed in docs/rules.md); did you mean `feature-extra`?"
        );
        let error = "\u{1b}zzz".parse::<Rule>().unwrap_err();
        assert_eq!(error.suggestion, None);
        assert_eq!(
            error.to_string(),
            "unknown rule `\\u{1b}zzz` (rules are listed in docs/rules.md)"
        );
    }
}
