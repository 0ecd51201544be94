//! Compatibility between two revisions of a feature view schema, under a
//! [mode](crate::compat::Mode).
//!
//! A change that breaks the mode needs a major bump; an additive change at least a minor
//! bump; any other change at least a patch bump.

use std::collections::{HashMap, HashSet};

use crate::compat::Mode;
use crate::report::{Actual, Check, Expected, Uncompared};
use crate::rules::{Rule, Severity};
use crate::spec::{
    Constraints, EntitySpec, EventTimestampSpec, ExactNumber, FeatureSpec, FeatureViewSpec,
    SchemaFile,
};
use crate::text::short as q;
use crate::ttl::format_duration;
use crate::types::{compare, FeatureType, TypeMatch};
use crate::yaml::Pos;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bump {
    None,
    Patch,
    Minor,
    Major,
}

impl Bump {
    pub fn between(old: &semver::Version, new: &semver::Version) -> Option<Bump> {
        if new < old {
            return None;
        }
        Some(if new.major > old.major {
            Bump::Major
        } else if new.minor > old.minor {
            Bump::Minor
        } else if new.patch > old.patch || new.pre != old.pre {
            Bump::Patch
        } else {
            Bump::None
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    FeatureAdded {
        nullable: bool,
    },
    FeatureRemoved {
        nullable: bool,
    },
    TypeWidened,
    TypeNarrowed,
    TypeChanged,
    NullabilityRelaxed,
    NullabilityTightened,
    TimestampChanged,
    CreatedTimestampChanged,
    EntityAdded,
    EntityRemoved,
    EntityChanged,
    TtlChanged,
    /// Description, owner, tags or constraints.
    Metadata,
}

impl ChangeKind {
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::FeatureAdded { .. } => "feature added",
            ChangeKind::FeatureRemoved { .. } => "feature removed",
            ChangeKind::TypeWidened => "type widened",
            ChangeKind::TypeNarrowed => "type narrowed",
            ChangeKind::TypeChanged => "type changed",
            ChangeKind::NullabilityRelaxed => "nullability relaxed",
            ChangeKind::NullabilityTightened => "nullability tightened",
            ChangeKind::TimestampChanged => "event timestamp changed",
            ChangeKind::CreatedTimestampChanged => "created timestamp changed",
            ChangeKind::EntityAdded => "entity added",
            ChangeKind::EntityRemoved => "entity removed",
            ChangeKind::EntityChanged => "entity changed",
            ChangeKind::TtlChanged => "ttl changed",
            ChangeKind::Metadata => "metadata changed",
        }
    }

    /// New readers cannot read old data.
    fn breaks_backward(self) -> bool {
        matches!(
            self,
            ChangeKind::FeatureAdded { nullable: false }
                | ChangeKind::TypeNarrowed
                | ChangeKind::TypeChanged
                | ChangeKind::NullabilityTightened
                | ChangeKind::TimestampChanged
                | ChangeKind::EntityAdded
                | ChangeKind::EntityRemoved
                | ChangeKind::EntityChanged
        )
    }

    /// Old readers cannot read new data.
    fn breaks_forward(self) -> bool {
        matches!(
            self,
            ChangeKind::FeatureRemoved { nullable: false }
                | ChangeKind::TypeWidened
                | ChangeKind::TypeChanged
                | ChangeKind::NullabilityRelaxed
                | ChangeKind::TimestampChanged
                | ChangeKind::EntityAdded
                | ChangeKind::EntityRemoved
                | ChangeKind::EntityChanged
        )
    }

    pub fn breaks(self, mode: Mode) -> bool {
        match mode {
            Mode::Backward => self.breaks_backward(),
            Mode::Forward => self.breaks_forward(),
            Mode::Full => self.breaks_backward() || self.breaks_forward(),
            Mode::None => false,
        }
    }

    /// The smallest version bump for this change when it does not break the mode.
    fn additive_bump(self) -> Bump {
        match self {
            ChangeKind::Metadata => Bump::Patch,
            _ => Bump::Minor,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub kind: ChangeKind,
    pub subject: String,
    pub old: String,
    pub new: String,
    /// Where in the new file (for removals: where the list starts).
    pub pos: Pos,
}

/// The changes from `old` to `new`, in file order.
pub fn changes(old: &SchemaFile, new: &SchemaFile) -> Vec<Change> {
    let (o, n) = (&old.spec, &new.spec);
    // Looked up by name, not searched per feature: two revisions of tens of thousands of
    // features compare in linear time.
    // Every declaration of a name, not the last one: a revision that declares a feature or
    // an entity twice (a `duplicate-feature` finding of its own) is compared with each, so
    // `[f: int64, f: string]` → `[f: string]` still shows the type change.
    let mut old_features: HashMap<&str, Vec<&FeatureSpec>> = HashMap::new();
    for f in &o.features {
        old_features.entry(f.name.as_str()).or_default().push(f);
    }
    let new_features: HashSet<&str> = n.features.iter().map(|f| f.name.as_str()).collect();
    let mut old_entities: HashMap<&str, Vec<&EntitySpec>> = HashMap::new();
    for e in &o.entities {
        old_entities.entry(e.name.as_str()).or_default().push(e);
    }
    let new_entities: HashSet<&str> = n.entities.iter().map(|e| e.name.as_str()).collect();
    let mut out: Vec<Change> = Vec::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    let mut push = |kind, subject: String, old: String, new: String, pos| {
        // The same change found against two equal duplicates is listed once.
        if seen.insert((subject.clone(), old.clone(), new.clone())) {
            out.push(Change {
                kind,
                subject,
                old,
                new,
                pos,
            })
        }
    };

    for (index, feature) in n.features.iter().enumerate() {
        let pos = new.key_pos(&format!("/features/{index}"));
        let Some(befores) = old_features.get(feature.name.as_str()) else {
            push(
                ChangeKind::FeatureAdded {
                    nullable: feature.nullable,
                },
                format!("feature {}", q(&feature.name)),
                "absent".into(),
                format!(
                    "{}{}",
                    q(&feature.type_name),
                    if feature.nullable { "" } else { " not null" }
                ),
                pos,
            );
            continue;
        };
        let subject = format!("feature {}", q(&feature.name));
        for before in befores {
            match (
                FeatureType::parse(&before.type_name),
                FeatureType::parse(&feature.type_name),
            ) {
                (Ok(t_old), Ok(t_new)) if t_old != t_new => {
                    let kind = match (compare(&t_old, &t_new), compare(&t_new, &t_old)) {
                        (TypeMatch::Compatible(_), TypeMatch::Incompatible(_)) => {
                            ChangeKind::TypeWidened
                        }
                        (TypeMatch::Incompatible(_), TypeMatch::Compatible(_)) => {
                            ChangeKind::TypeNarrowed
                        }
                        _ => ChangeKind::TypeChanged,
                    };
                    push(
                        kind,
                        format!("{subject}: type"),
                        t_old.to_string(),
                        t_new.to_string(),
                        new.key_pos(&format!("/features/{index}/type")),
                    );
                }
                (Ok(_), Ok(_)) => {}
                // A type that does not parse on either side cannot be shown compatible: a
                // different text is a type change (never skipped as "no change").
                _ if before.type_name != feature.type_name => push(
                    ChangeKind::TypeChanged,
                    format!("{subject}: type"),
                    q(&before.type_name),
                    q(&feature.type_name),
                    new.key_pos(&format!("/features/{index}/type")),
                ),
                _ => {}
            }
            if before.nullable != feature.nullable {
                let kind = if feature.nullable {
                    ChangeKind::NullabilityRelaxed
                } else {
                    ChangeKind::NullabilityTightened
                };
                let show = |n: bool| if n { "nullable" } else { "not null" }.to_string();
                push(
                    kind,
                    format!("{subject}: nullability"),
                    show(before.nullable),
                    show(feature.nullable),
                    pos,
                );
            }
            if before.description != feature.description {
                push(
                    ChangeKind::Metadata,
                    format!("{subject}: description"),
                    show_text(&before.description),
                    show_text(&feature.description),
                    pos,
                );
            }
            if !same_constraints(&before.constraints, &feature.constraints) {
                push(
                    ChangeKind::Metadata,
                    format!("{subject}: constraints"),
                    show_constraints(&before.constraints),
                    show_constraints(&feature.constraints),
                    pos,
                );
            }
        }
    }
    let features_pos = new.root.locate_key("", "features");
    for feature in &o.features {
        if !new_features.contains(feature.name.as_str()) {
            push(
                ChangeKind::FeatureRemoved {
                    nullable: feature.nullable,
                },
                format!("feature {}", q(&feature.name)),
                q(&feature.type_name),
                "absent".into(),
                features_pos,
            );
        }
    }

    for (index, entity) in n.entities.iter().enumerate() {
        let pos = new.key_pos(&format!("/entities/{index}"));
        let key = |e: &EntitySpec| format!("{} {}", q(&e.join_key), q(&e.type_name));
        let Some(befores) = old_entities.get(entity.name.as_str()) else {
            push(
                ChangeKind::EntityAdded,
                format!("entity {}", q(&entity.name)),
                "absent".into(),
                key(entity),
                pos,
            );
            continue;
        };
        for before in befores {
            {
                if before.join_key != entity.join_key
                    || !same_type(&before.type_name, &entity.type_name)
                {
                    push(
                        ChangeKind::EntityChanged,
                        format!("entity {}", q(&entity.name)),
                        key(before),
                        key(entity),
                        pos,
                    )
                }
                // Documented as a patch-level change, like a feature's description.
                if before.description != entity.description {
                    push(
                        ChangeKind::Metadata,
                        format!("entity {}: description", q(&entity.name)),
                        show_text(&before.description),
                        show_text(&entity.description),
                        pos,
                    )
                }
            }
        }
    }
    let entities_pos = new.root.locate_key("", "entities");
    for entity in &o.entities {
        if !new_entities.contains(entity.name.as_str()) {
            push(
                ChangeKind::EntityRemoved,
                format!("entity {}", q(&entity.name)),
                format!("{} {}", q(&entity.join_key), q(&entity.type_name)),
                "absent".into(),
                entities_pos,
            );
        }
    }

    let (ts_old, ts_new) = (&o.event_timestamp, &n.event_timestamp);
    if ts_old.name != ts_new.name
        || ts_old.feature_type() != ts_new.feature_type()
        || ts_old.required != ts_new.required
    {
        push(
            ChangeKind::TimestampChanged,
            "event timestamp".into(),
            show_timestamp(ts_old),
            show_timestamp(ts_new),
            new.key_pos("/event_timestamp"),
        );
    }
    let created = |s: &FeatureViewSpec| {
        s.created_timestamp
            .as_ref()
            .map_or("none".to_string(), |c| q(&c.name))
    };
    if created(o) != created(n) {
        push(
            ChangeKind::CreatedTimestampChanged,
            "created timestamp".into(),
            created(o),
            created(n),
            new.key_pos("/created_timestamp"),
        );
    }
    // A TTL that cannot be read (out of range) is compared as written, never taken for
    // "not declared" on both sides.
    let ttl = |s: &FeatureViewSpec| {
        s.ttl.as_ref().map(|t| match t.seconds() {
            Ok(seconds) => format_duration(seconds),
            Err(_) => format!("{} (unreadable)", q(&t.written())),
        })
    };
    if ttl(o) != ttl(n) {
        let show = |t: Option<String>| t.unwrap_or_else(|| "not declared".into());
        push(
            ChangeKind::TtlChanged,
            "ttl".into(),
            show(ttl(o)),
            show(ttl(n)),
            new.key_pos("/ttl"),
        );
    }
    for (what, before, after) in [
        ("description", &o.description, &n.description),
        ("owner", &o.owner, &n.owner),
    ] {
        if before != after {
            push(
                ChangeKind::Metadata,
                what.into(),
                show_text(before),
                show_text(after),
                new.key_pos("/name"),
            );
        }
    }
    if o.tags != n.tags {
        push(
            ChangeKind::Metadata,
            "tags".into(),
            show_tags(&o.tags),
            show_tags(&n.tags),
            new.key_pos("/name"),
        );
    }
    out
}

/// An event timestamp as a change shows it: `required: false` too, so that a change of
/// `required` alone does not read as `ts timestamp[us, UTC] → ts timestamp[us, UTC]`.
fn show_timestamp(ts: &EventTimestampSpec) -> String {
    format!(
        "{} {}{}",
        q(&ts.name),
        ts.feature_type(),
        if ts.required {
            ""
        } else {
            " (required: false)"
        }
    )
}

/// Constraints compared by value: `min: 1` and `min: 1.0` are the same bound.
fn same_constraints(a: &Option<Constraints>, b: &Option<Constraints>) -> bool {
    use ExactNumber;
    let same_number = |x: Option<ExactNumber>, y: Option<ExactNumber>| match (x, y) {
        (Some(x), Some(y)) => x.cmp_value(&y).is_eq(),
        (None, None) => true,
        _ => false,
    };
    let same_value = |x: &serde_json::Value, y: &serde_json::Value| match (x, y) {
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) => ExactNumber::of(x, None)
            .cmp_value(&ExactNumber::of(y, None))
            .is_eq(),
        _ => x == y,
    };
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            same_number(a.min_exact(), b.min_exact())
                && same_number(a.max_exact(), b.max_exact())
                && match (&a.allowed_values, &b.allowed_values) {
                    (Some(x), Some(y)) => {
                        x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
                    }
                    (None, None) => true,
                    _ => false,
                }
        }
        _ => false,
    }
}

/// Whether two type texts mean the same type; texts that do not parse are compared as
/// written.
fn same_type(a: &str, b: &str) -> bool {
    match (FeatureType::parse(a), FeatureType::parse(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// An optional text from a file as a change shows it.
fn show_text(text: &Option<String>) -> String {
    text.as_deref()
        .map_or("none".to_string(), |t| format!("`{}`", q(t)))
}

fn show_tags(tags: &std::collections::BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", crate::text::list(pairs.iter().map(String::as_str)))
}

fn show_constraints(constraints: &Option<Constraints>) -> String {
    let Some(c) = constraints else {
        return "none".into();
    };
    let mut parts = Vec::new();
    // As written: `1e23`, not serde's `1e+23`.
    let shown = |written: &Option<String>, number: &Option<serde_json::Number>| {
        written
            .clone()
            .or_else(|| number.as_ref().map(|n| n.to_string()))
    };
    if let Some(min) = shown(&c.min_written, &c.min) {
        parts.push(format!("min {}", q(&min)));
    }
    if let Some(max) = shown(&c.max_written, &c.max) {
        parts.push(format!("max {}", q(&max)));
    }
    if let Some(values) = &c.allowed_values {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        parts.push(format!(
            "allowed_values [{}]",
            crate::text::list(values.iter().map(String::as_str))
        ));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// What comparing a view with its earlier revision found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RevisionChecks {
    pub checks: Vec<Check>,
    /// Comparisons that could not be made (a `schema_version` that is not semver, with
    /// changes to classify): see [`crate::report::Report::flag_unchecked_files`].
    pub uncompared: Vec<Uncompared>,
}

/// The compatibility checks of `new` against `old` under `mode`, with the semver rules.
///
/// The version-bump findings and the breaking-change findings are separate: accepting a
/// `compat-version-bump` finding (a version that went down, or is not semver) never hides
/// a breaking change, and when the bump cannot be read at all the changes are flagged
/// as not compared.
pub fn check_revision(old: &SchemaFile, new: &SchemaFile, mode: Mode) -> RevisionChecks {
    let version_pos = new.key_pos("/schema_version");
    let changes = changes(old, new);
    let (Ok(v_old), Ok(v_new)) = (
        semver::Version::parse(&old.spec.schema_version),
        semver::Version::parse(&new.spec.schema_version),
    ) else {
        // `version-semver` reports the unparsable version in its own file; here the
        // comparison itself cannot be made, which must not pass as "no change".
        let (side, path, version) = match semver::Version::parse(&old.spec.schema_version) {
            Err(_) => ("earlier", &old.path, &old.spec.schema_version),
            Ok(_) => ("new", &new.path, &new.spec.schema_version),
        };
        let checks = vec![Check::fail(
            Rule::CompatVersionBump,
            "schema_version",
            Expected("MAJOR.MINOR.PATCH in both revisions"),
            Actual(crate::text::quote_hashed(version, 80)),
            version_pos,
            format!(
                "cannot check the {} change(s) against {}: the {side} revision's schema_version `{}` \
                 (in {path}) is not a semantic version",
                changes.len(),
                old.path,
                crate::text::quote_hashed(version, 80)
            ),
        )];
        // Without a bump no change can be classified: if this finding is accepted, the
        // changes were not checked (input-unreadable), never passed.
        let uncompared = if changes.is_empty() {
            Vec::new()
        } else {
            vec![Uncompared {
                because: (Rule::CompatVersionBump, "schema_version".into()),
                subject: format!("schema_version (with {} change(s))", changes.len()),
                with: "the earlier revision",
                pos: version_pos,
            }]
        };
        return RevisionChecks { checks, uncompared };
    };
    let mut checks = Vec::new();
    // A version that went down is its own finding; the changes are still classified (as
    // under no bump), so that accepting it does not accept them.
    let (bump, shown_bump) = match Bump::between(&v_old, &v_new) {
        Some(bump) => (bump, format!("{} bump ({v_old} → {v_new})", bump.as_str())),
        None => {
            checks.push(Check::fail(
                Rule::CompatVersionBump,
                "schema_version",
                Expected(format!("≥ {v_old}")),
                Actual(v_new.to_string()),
                version_pos,
                format!(
                    "schema_version went down from {v_old} (in {}) to {v_new}",
                    old.path
                ),
            ));
            (Bump::None, format!("downgrade ({v_old} → {v_new})"))
        }
    };
    let went_down = !checks.is_empty();
    for change in &changes {
        let breaking = change.kind.breaks(mode);
        let needed = if breaking {
            Bump::Major
        } else {
            change.kind.additive_bump()
        };
        let described = format!(
            "{}: {} ({} → {})",
            change.kind.label(),
            change.subject,
            change.old,
            change.new
        );
        let check = if bump >= needed {
            Check::finding(
                Rule::CompatChange,
                Severity::Info,
                change.subject.clone(),
                Expected(format!("{} bump", needed.as_str())),
                Actual(shown_bump.clone()),
                change.pos,
                format!(
                    "{described}; allowed by the {} bump {v_old} → {v_new}",
                    bump.as_str()
                ),
            )
        } else if breaking {
            Check::fail(
                Rule::CompatBreaking,
                change.subject.clone(),
                Expected("major bump"),
                Actual(shown_bump.clone()),
                change.pos,
                format!("{described} breaks {mode} compatibility; it needs a major version bump, found {v_old} → {v_new}"),
            )
        } else {
            Check::fail(
                Rule::CompatVersionBump,
                change.subject.clone(),
                Expected(format!("{} bump", needed.as_str())),
                Actual(shown_bump.clone()),
                change.pos,
                format!(
                    "{described} needs at least a {} version bump, found {v_old} → {v_new}",
                    needed.as_str()
                ),
            )
        };
        // The change is part of the finding's identity: a baseline that accepted one
        // change must not accept another under the same version bump.
        checks.push(Check {
            detail: described,
            ..check
        });
    }
    if went_down {
        // Nothing passes: the version finding and the changes' findings say it all.
        return RevisionChecks {
            checks,
            uncompared: Vec::new(),
        };
    }
    if changes.is_empty() {
        checks.push(Check::pass(
            Rule::CompatChange,
            format!("compatibility ({mode})"),
            Expected(format!("compatible with {}", old.path)),
            Actual("no changes"),
            version_pos,
        ));
    } else if checks.iter().all(|c| c.rule == Rule::CompatChange) {
        checks.push(Check::pass(
            Rule::CompatBreaking,
            format!("compatibility ({mode})"),
            Expected(format!("compatible with {}", old.path)),
            Actual(format!(
                "{} change(s), {} bump",
                changes.len(),
                bump.as_str()
            )),
            version_pos,
        ));
    }
    RevisionChecks {
        checks,
        uncompared: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    const VIEW: &str = "name: v_v1\nschema_version: VERSION\nentities: [{name: driver, join_key: d, type: int64, description: DESC}]\nevent_timestamp: {name: ts}\nfeatures:\n  - name: f\n    type: int64\n";

    fn file(version: &str, description: &str) -> SchemaFile {
        let text = VIEW
            .replace("VERSION", version)
            .replace("DESC", description);
        crate::checks::file::load_bytes("v.yaml", text.as_bytes())
            .1
            .unwrap()
    }

    /// The docs ask for a patch bump when a description changes; an entity's did not
    /// count as a change at all.
    #[test]
    fn an_entity_description_is_a_patch_change() {
        let old = file("1.0.0", "drivers");
        let same = check_revision(&old, &file("1.0.0", "drivers"), Mode::Backward).checks;
        assert!(same.iter().all(|c| !c.status.is_finding()), "{same:#?}");
        let checks = check_revision(&old, &file("1.0.0", "the drivers"), Mode::Backward).checks;
        let found: Vec<&Check> = checks.iter().filter(|c| c.status.is_finding()).collect();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].rule, Rule::CompatVersionBump);
        assert_eq!(found[0].status, Status::Error);
        assert_eq!(found[0].subject, "entity driver: description");
        assert!(
            found[0].message.contains("`drivers` → `the drivers`"),
            "{}",
            found[0].message
        );
        let patched = check_revision(&old, &file("1.0.1", "the drivers"), Mode::Backward).checks;
        assert!(
            patched.iter().all(|c| c.status != Status::Error),
            "{patched:#?}"
        );
    }

    /// Two revisions of many features compare by lookup (a search per feature made 30,000
    /// take 21 s); not timed here (shared machines), only checked to be whole.
    #[test]
    fn many_features_compare_in_linear_time() {
        let features = |ty: &str| -> String {
            (0..30_000)
                .map(|i| format!("  - name: f{i}\n    type: {ty}\n"))
                .collect()
        };
        let old = VIEW.replace("VERSION", "1.0.0").replace("DESC", "d") + &features("int64");
        let new = VIEW.replace("VERSION", "2.0.0").replace("DESC", "d") + &features("int32");
        let old = crate::checks::file::load_bytes("old.yaml", old.as_bytes())
            .1
            .unwrap();
        let new = crate::checks::file::load_bytes("new.yaml", new.as_bytes())
            .1
            .unwrap();
        let found = changes(&old, &new);
        assert_eq!(found.len(), 30_000);
    }
}
