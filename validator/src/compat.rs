//! Compatibility between two revisions of a feature view schema.
//!
//! Modes follow Confluent Schema Registry: BACKWARD means consumers on the new schema can
//! read data written with the old one; FORWARD means consumers on the old schema can read
//! data written with the new one; FULL is both; NONE checks only the version bump.
//! A change that breaks the mode needs a major bump; an additive change at least a minor
//! bump; any other change at least a patch bump.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::report::{Actual, Check, Expected, Severity};
use crate::rules::Rule;
use crate::spec::{format_duration, SchemaFile};
use crate::types::{compare, FeatureType, TypeMatch};
use crate::yaml::Pos;

/// Which changes between revisions a minor or patch version bump may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Consumers of the new schema can read data written with the old one.
    #[default]
    Backward,
    /// Consumers of the old schema can read data written with the new one.
    Forward,
    /// Both backward and forward.
    Full,
    /// Only the version bump is checked; changes are listed.
    None,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Mode> {
        Some(match text.to_ascii_lowercase().as_str() {
            "backward" => Mode::Backward,
            "forward" => Mode::Forward,
            "full" => Mode::Full,
            "none" => Mode::None,
            _ => return None,
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Backward => "BACKWARD",
            Mode::Forward => "FORWARD",
            Mode::Full => "FULL",
            Mode::None => "NONE",
        })
    }
}

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
    let mut out = Vec::new();
    let mut push = |kind, subject: String, old: String, new: String, pos| {
        out.push(Change {
            kind,
            subject,
            old,
            new,
            pos,
        })
    };

    for (index, feature) in n.features.iter().enumerate() {
        let pos = new.key_pos(&format!("/features/{index}"));
        let Some(before) = o.features.iter().find(|f| f.name == feature.name) else {
            push(
                ChangeKind::FeatureAdded {
                    nullable: feature.nullable,
                },
                format!("feature {}", feature.name),
                "absent".into(),
                format!(
                    "{}{}",
                    feature.type_name,
                    if feature.nullable { "" } else { " not null" }
                ),
                pos,
            );
            continue;
        };
        let subject = format!("feature {}", feature.name);
        if let (Ok(t_old), Ok(t_new)) = (
            FeatureType::parse(&before.type_name),
            FeatureType::parse(&feature.type_name),
        ) {
            if t_old != t_new {
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
        if before.description != feature.description || before.constraints != feature.constraints {
            push(
                ChangeKind::Metadata,
                format!("{subject}: description/constraints"),
                "…".into(),
                "…".into(),
                pos,
            );
        }
    }
    let features_pos = new.root.locate_key("", "features");
    for feature in &o.features {
        if !n.features.iter().any(|f| f.name == feature.name) {
            push(
                ChangeKind::FeatureRemoved {
                    nullable: feature.nullable,
                },
                format!("feature {}", feature.name),
                feature.type_name.clone(),
                "absent".into(),
                features_pos,
            );
        }
    }

    for (index, entity) in n.entities.iter().enumerate() {
        let pos = new.key_pos(&format!("/entities/{index}"));
        match o.entities.iter().find(|e| e.name == entity.name) {
            None => push(
                ChangeKind::EntityAdded,
                format!("entity {}", entity.name),
                "absent".into(),
                format!("{} {}", entity.join_key, entity.type_name),
                pos,
            ),
            Some(before)
                if before.join_key != entity.join_key
                    || FeatureType::parse(&before.type_name).ok()
                        != FeatureType::parse(&entity.type_name).ok() =>
            {
                push(
                    ChangeKind::EntityChanged,
                    format!("entity {}", entity.name),
                    format!("{} {}", before.join_key, before.type_name),
                    format!("{} {}", entity.join_key, entity.type_name),
                    pos,
                )
            }
            Some(_) => {}
        }
    }
    let entities_pos = new.root.locate_key("", "entities");
    for entity in &o.entities {
        if !n.entities.iter().any(|e| e.name == entity.name) {
            push(
                ChangeKind::EntityRemoved,
                format!("entity {}", entity.name),
                format!("{} {}", entity.join_key, entity.type_name),
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
            format!("{} {}", ts_old.name, ts_old.feature_type()),
            format!("{} {}", ts_new.name, ts_new.feature_type()),
            new.key_pos("/event_timestamp"),
        );
    }
    let created = |s: &crate::spec::FeatureViewSpec| {
        s.created_timestamp
            .as_ref()
            .map_or("none".to_string(), |c| c.name.clone())
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
    let ttl = |s: &crate::spec::FeatureViewSpec| s.ttl.as_ref().and_then(|t| t.seconds().ok());
    if ttl(o) != ttl(n) {
        let show = |t: Option<u64>| t.map_or("not declared".into(), format_duration);
        push(
            ChangeKind::TtlChanged,
            "ttl".into(),
            show(ttl(o)),
            show(ttl(n)),
            new.key_pos("/ttl"),
        );
    }
    if o.description != n.description || o.owner != n.owner || o.tags != n.tags {
        push(
            ChangeKind::Metadata,
            "description/owner/tags".into(),
            "…".into(),
            "…".into(),
            new.key_pos("/name"),
        );
    }
    out
}

/// The compatibility checks of `new` against `old` under `mode`, with the semver rules.
pub fn check_revision(old: &SchemaFile, new: &SchemaFile, mode: Mode) -> Vec<Check> {
    let version_pos = new.key_pos("/schema_version");
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
        return vec![Check::fail(
            Rule::CompatVersionBump,
            "schema_version",
            Expected("MAJOR.MINOR.PATCH in both revisions"),
            Actual(crate::text::quote(version, 80)),
            version_pos,
            format!(
                "cannot check the changes against {}: the {side} revision's schema_version `{}` \
                 (in {path}) is not a semantic version",
                old.path,
                crate::text::quote(version, 80)
            ),
        )];
    };
    let changes = changes(old, new);
    let mut checks = Vec::new();
    let Some(bump) = Bump::between(&v_old, &v_new) else {
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
        return checks;
    };
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
                Actual(format!("{} bump ({v_old} → {v_new})", bump.as_str())),
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
                Actual(format!("{} bump ({v_old} → {v_new})", bump.as_str())),
                change.pos,
                format!("{described} breaks {mode} compatibility; it needs a major version bump, found {v_old} → {v_new}"),
            )
        } else {
            Check::fail(
                Rule::CompatVersionBump,
                change.subject.clone(),
                Expected(format!("{} bump", needed.as_str())),
                Actual(format!("{} bump ({v_old} → {v_new})", bump.as_str())),
                change.pos,
                format!(
                    "{described} needs at least a {} version bump, found {v_old} → {v_new}",
                    needed.as_str()
                ),
            )
        };
        checks.push(check);
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
    checks
}
