//! The rule catalogue: every finding carries one of these stable ids. `docs/rules.md` is
//! generated from this table (a test keeps it in sync).

use crate::report::Severity;

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
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Input => "input",
            Category::Schema => "schema",
            Category::Store => "store",
            Category::Compatibility => "compatibility",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub summary: &'static str,
}

macro_rules! rules {
    ($($name:ident = $id:literal, $category:ident, $severity:ident, $summary:literal;)*) => {
        $(pub const $name: Rule = Rule {
            id: $id, category: Category::$category, severity: Severity::$severity, summary: $summary,
        };)*
        /// Every rule, in documentation order.
        pub const ALL: &[Rule] = &[$($name),*];
    };
}

rules! {
    INPUT_UNREADABLE = "input-unreadable", Input, Error,
        "The file or directory cannot be read: missing, a directory where a file was expected, no permission, not UTF-8, empty, or larger than the size limit.";
    YAML_SYNTAX = "yaml-syntax", Input, Error,
        "The file is not well-formed YAML (or JSON, for registries).";
    YAML_DUPLICATE_KEY = "yaml-duplicate-key", Input, Error,
        "A mapping has the same key twice; YAML parsers disagree on which one wins, so it is refused.";
    YAML_LIMITS = "yaml-limits", Input, Error,
        "The document exceeds a parsing budget: alias expansion (\"billion laughs\"), nesting depth or node count.";
    SCHEMA_VIOLATION = "schema-violation", Schema, Error,
        "The file does not match `schemas/feature-view.schema.json`: a required key is missing or a value has the wrong type or form.";
    SCHEMA_UNKNOWN_KEY = "schema-unknown-key", Schema, Error,
        "A key the format does not define (usually a typo); the finding suggests the closest known key.";
    TYPE_SYNTAX = "type-syntax", Schema, Error,
        "A `type` is not in the type vocabulary (docs/schema-format.md#types).";
    DUPLICATE_FEATURE = "duplicate-feature", Schema, Error,
        "Two features (or a feature and an entity join key) share a name.";
    DUPLICATE_VIEW = "duplicate-view", Schema, Error,
        "Two schema files declare the same feature view.";
    CONSTRAINT_INVALID = "constraint-invalid", Schema, Error,
        "Constraints that cannot hold: `min` greater than `max`, numeric bounds on a non-numeric type, allowed values of the wrong type.";
    TIMESTAMP_DECLARATION = "timestamp-declaration", Schema, Error,
        "The event timestamp is declared inconsistently (`datetime64` with a unit other than `ns` or with a time zone) or not `required`.";
    VERSION_SEMVER = "version-semver", Schema, Error,
        "`schema_version` is not a semantic version (MAJOR.MINOR.PATCH).";
    VERSION_NAME_SUFFIX = "version-name-suffix", Schema, Error,
        "The view name ends in `_vN` but N is not the major version of `schema_version`.";
    VIEW_MISSING = "view-missing", Store, Error,
        "The feature store has no feature view of this name.";
    VERSION_STORE_TAG = "version-store-tag", Store, Error,
        "The store's `schema_version` tag differs from the file's `schema_version` (or is absent: warning).";
    FEATURE_MISSING = "feature-missing", Store, Error,
        "A feature the schema declares is not in the store's feature view.";
    FEATURE_EXTRA = "feature-extra", Store, Error,
        "The store's feature view has a feature the schema does not declare.";
    FEATURE_COUNT = "feature-count", Store, Info,
        "The number of features differs between the schema and the store (a summary beside `feature-missing` and `feature-extra`).";
    FEATURE_TYPE = "feature-type", Store, Error,
        "A feature's type differs from the store's: incompatible is an error, a lossless difference (compatible) a warning.";
    FEATURE_NULLABILITY = "feature-nullability", Store, Error,
        "A feature's nullability differs from the store's, where the store records it.";
    ENTITY_MISSING = "entity-missing", Store, Error,
        "An entity the schema declares is not an entity of the store's feature view.";
    ENTITY_EXTRA = "entity-extra", Store, Error,
        "The store's feature view has an entity the schema does not declare.";
    ENTITY_JOIN_KEY = "entity-join-key", Store, Error,
        "An entity's join key differs from the store's.";
    ENTITY_TYPE = "entity-type", Store, Error,
        "An entity join key's type differs from the store's.";
    TIMESTAMP_FIELD = "timestamp-field", Store, Error,
        "The store's batch source uses another column (or none) as its event timestamp field.";
    TIMESTAMP_TYPE = "timestamp-type", Store, Warning,
        "The event timestamp's declared type differs from the store's timestamp type (warning when it converts losslessly, error otherwise).";
    CREATED_TIMESTAMP = "created-timestamp", Store, Error,
        "The created timestamp column differs from the store's `createdTimestampColumn`.";
    TTL = "ttl", Store, Error,
        "The TTL differs from the store's.";
    COMPAT_BREAKING = "compat-breaking-change", Compatibility, Error,
        "A change that breaks the configured compatibility mode (BACKWARD, FORWARD or FULL) without a major version bump, or a feature view removed from the new revision.";
    COMPAT_VERSION_BUMP = "compat-version-bump", Compatibility, Error,
        "The version bump is too small for the change (an additive change needs at least a minor bump, any change at least a patch) or the version went down.";
    COMPAT_CHANGE = "compat-change", Compatibility, Info,
        "A change between revisions that the version bump allows, listed for review.";
}

/// The rule with this id.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().find(|rule| rule.id == id)
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
    for rule in ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            rule.id,
            rule.category.as_str(),
            rule.severity.as_str(),
            rule.summary.replace('|', "\\|")
        ));
    }
    out
}
