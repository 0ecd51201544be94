//! Checks of one schema file against the feature store's metadata.

use crate::report::{Actual, Check, Expected, Severity};
use crate::rules::Rule;
use crate::spec::{format_duration, SchemaFile};
use crate::store::{StoreMetadata, StoreView};
use crate::suggest;
use crate::types::{compare, FeatureType, TypeMatch};
use crate::yaml::Pos;

/// Every store check of `file`, passing ones included (they fill the report's tables).
pub fn check_against_store(file: &SchemaFile, store: &StoreMetadata) -> Vec<Check> {
    let spec = &file.spec;
    let name_pos = file.key_pos("/name");
    let Some(view) = store.views.get(&spec.name) else {
        let suggestion = suggest::closest(&spec.name, store.views.keys().map(String::as_str))
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return vec![Check::fail(
            Rule::ViewMissing,
            "feature view",
            Expected(spec.name.clone()),
            Actual("absent"),
            name_pos,
            format!(
                "feature view `{}` is not in the {}{suggestion}",
                spec.name, store.description
            ),
        )];
    };
    let mut checks = vec![Check::pass(
        Rule::ViewMissing,
        "feature view",
        Expected(spec.name.clone()),
        Actual("present"),
        name_pos,
    )];
    checks.extend(version_tag(file, view));
    checks.extend(features(file, view));
    checks.extend(entities(file, view, store));
    checks.extend(timestamps(file, view));
    checks.extend(ttl(file, view));
    checks
}

fn version_tag(file: &SchemaFile, view: &StoreView) -> Option<Check> {
    let declared = &file.spec.schema_version;
    let pos = file.key_pos("/schema_version");
    let subject = "store tag schema_version";
    Some(match view.tags.get("schema_version") {
        Some(tag) if tag == declared => Check::pass(Rule::VersionStoreTag, subject, Expected(declared.clone()), Actual(tag.clone()), pos),
        Some(tag) => Check::fail(
            Rule::VersionStoreTag,
            subject,
            Expected(declared.clone()),
            Actual(tag.clone()),
            pos,
            format!("the store tags view `{}` with schema_version {tag}, the file declares {declared}", view.name),
        ),
        None => Check::finding(
            Rule::VersionStoreTag,
            Severity::Warning,
            subject,
            Expected(declared.clone()),
            Actual("no tag"),
            pos,
            format!(
                "view `{}` has no schema_version tag in the store, so its version cannot be confirmed; tag it `schema_version: {declared}`",
                view.name
            ),
        ),
    })
}

fn type_check(
    rule: Rule,
    subject: String,
    declared: &FeatureType,
    actual: &FeatureType,
    store_type: &str,
    pos: Pos,
) -> Check {
    let actual_text = if store_type == actual.to_string() {
        store_type.to_string()
    } else {
        format!("{actual} ({store_type})")
    };
    match compare(declared, actual) {
        TypeMatch::Exact => Check::pass(rule, subject, Expected(declared.to_string()), Actual(actual_text), pos),
        TypeMatch::Compatible(why) => Check::finding(
            rule,
            Severity::Warning,
            subject.clone(),
            Expected(declared.to_string()),
            Actual(actual_text.clone()),
            pos,
            format!("{subject}: declared {declared}, the store has {actual_text}; compatible: {why}"),
        ),
        TypeMatch::Incompatible(why) => Check::finding(
            rule,
            Severity::Error,
            subject.clone(),
            Expected(declared.to_string()),
            Actual(actual_text.clone()),
            pos,
            format!(
                "{subject}: declared {declared} (Arrow {}), the store has {actual_text} (Arrow {}); these types are incompatible{}",
                declared.arrow_type(),
                actual.arrow_type(),
                if why.is_empty() { String::new() } else { format!(": {why}") }
            ),
        ),
    }
}

fn features(file: &SchemaFile, view: &StoreView) -> Vec<Check> {
    let spec = &file.spec;
    let mut checks = Vec::new();
    for (index, feature) in spec.features.iter().enumerate() {
        let pos = file.feature_pos(&feature.name);
        let Some(stored) = view.feature(&feature.name) else {
            let suggestion =
                suggest::closest(&feature.name, view.features.iter().map(|f| f.name.as_str()))
                    .map(|s| format!("; the store has `{s}`"))
                    .unwrap_or_default();
            checks.push(Check::fail(
                Rule::FeatureMissing,
                format!("feature {}", feature.name),
                Expected("present"),
                Actual("absent"),
                pos,
                format!("feature `{}` is declared but view `{}` in the store has no such feature{suggestion}", feature.name, view.name),
            ));
            continue;
        };
        checks.push(Check::pass(
            Rule::FeatureMissing,
            format!("feature {}", feature.name),
            Expected("present"),
            Actual("present"),
            pos,
        ));
        // A type that does not parse was already reported by `type-syntax`.
        if let Ok(declared) = FeatureType::parse(&feature.type_name) {
            checks.push(type_check(
                Rule::FeatureType,
                format!("feature {}: type", feature.name),
                &declared,
                &stored.ty,
                &stored.store_type,
                file.key_pos(&format!("/features/{index}/type")),
            ));
        }
        if let Some(nullable) = stored.nullable {
            let show = |n: bool| if n { "nullable" } else { "not null" };
            let subject = format!("feature {}: nullability", feature.name);
            let pos = file
                .root
                .get(&format!("/features/{index}/nullable"))
                .map_or(pos, |node| node.pos);
            checks.push(
                Check::pass(
                    Rule::FeatureNullability,
                    subject.clone(),
                    Expected(show(feature.nullable)),
                    Actual(show(nullable)),
                    pos,
                )
                .fail_unless(nullable == feature.nullable, || {
                    format!(
                        "{subject}: declared {}, the store has {}",
                        show(feature.nullable),
                        show(nullable)
                    )
                }),
            );
        }
    }
    let features_pos = file.root.locate_key("", "features");
    let declared_names: std::collections::HashSet<&str> =
        spec.features.iter().map(|f| f.name.as_str()).collect();
    let extra: Vec<&str> = view
        .features
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| !declared_names.contains(n))
        .collect();
    for name in &extra {
        checks.push(Check::fail(
            Rule::FeatureExtra,
            format!("feature {name}"),
            Expected("absent"),
            Actual("present in store"),
            features_pos,
            format!(
                "view `{}` in the store has feature `{name}`, which the schema does not declare",
                view.name
            ),
        ));
    }
    if extra.is_empty() {
        checks.push(Check::pass(
            Rule::FeatureExtra,
            "undeclared store features",
            Expected("none"),
            Actual("none"),
            features_pos,
        ));
    }
    let (declared, stored) = (spec.features.len(), view.features.len());
    checks.push(
        Check::pass(
            Rule::FeatureCount,
            "feature count",
            Expected(declared.to_string()),
            Actual(stored.to_string()),
            features_pos,
        )
        .fail_unless(declared == stored, || {
            format!(
                "the schema declares {declared} features, view `{}` in the store has {stored}",
                view.name
            )
        }),
    );
    checks
}

fn entities(file: &SchemaFile, view: &StoreView, store: &StoreMetadata) -> Vec<Check> {
    let spec = &file.spec;
    let mut checks = Vec::new();
    for (index, entity) in spec.entities.iter().enumerate() {
        let pos = file.entity_pos(&entity.name);
        let subject = format!("entity {}", entity.name);
        if !view.entities.contains(&entity.name) {
            let suggestion =
                suggest::closest(&entity.name, view.entities.iter().map(String::as_str))
                    .map(|s| format!("; the store has `{s}`"))
                    .unwrap_or_default();
            let actual = if view.entities.is_empty() {
                "none".to_string()
            } else {
                view.entities.join(", ")
            };
            checks.push(Check::fail(
                Rule::EntityMissing,
                subject,
                Expected(entity.name.clone()),
                Actual(actual),
                pos,
                format!("entity `{}` is declared but view `{}` in the store is keyed by [{}]{suggestion}", entity.name, view.name, view.entities.join(", ")),
            ));
            continue;
        }
        checks.push(Check::pass(
            Rule::EntityMissing,
            subject.clone(),
            Expected(entity.name.clone()),
            Actual("present"),
            pos,
        ));
        let stored_entity = store.entities.get(&entity.name);
        let join_key = stored_entity.map(|e| e.join_key.as_str());
        let key_pos = file.key_pos(&format!("/entities/{index}/join_key"));
        if let Some(join_key) = join_key {
            checks.push(
                Check::pass(
                    Rule::EntityJoinKey,
                    format!("{subject}: join key"),
                    Expected(entity.join_key.clone()),
                    Actual(join_key),
                    key_pos,
                )
                .fail_unless(join_key == entity.join_key, || {
                    format!(
                        "entity `{}`: declared join key `{}`, the store's is `{join_key}`",
                        entity.name, entity.join_key
                    )
                }),
            );
        }
        let stored_type = view
            .entity_columns
            .iter()
            .find(|column| Some(column.name.as_str()) == join_key || column.name == entity.join_key)
            .map(|column| (column.ty.clone(), column.store_type.clone()))
            .or_else(|| {
                Some((
                    stored_entity?.ty.clone()?,
                    stored_entity?.store_type.clone()?,
                ))
            });
        if let (Ok(declared), Some((actual, store_type))) =
            (FeatureType::parse(&entity.type_name), stored_type)
        {
            checks.push(type_check(
                Rule::EntityType,
                format!("{subject}: type"),
                &declared,
                &actual,
                &store_type,
                file.key_pos(&format!("/entities/{index}/type")),
            ));
        }
    }
    let entities_pos = file.root.locate_key("", "entities");
    let extra: Vec<&String> = view
        .entities
        .iter()
        .filter(|name| !spec.entities.iter().any(|e| &e.name == *name))
        .collect();
    for name in &extra {
        checks.push(Check::fail(
            Rule::EntityExtra,
            format!("entity {name}"),
            Expected("absent"),
            Actual("present in store"),
            entities_pos,
            format!("view `{}` in the store is also keyed by entity `{name}`, which the schema does not declare", view.name),
        ));
    }
    if extra.is_empty() {
        checks.push(Check::pass(
            Rule::EntityExtra,
            "undeclared store entities",
            Expected("none"),
            Actual("none"),
            entities_pos,
        ));
    }
    checks
}

fn timestamps(file: &SchemaFile, view: &StoreView) -> Vec<Check> {
    let ts = &file.spec.event_timestamp;
    let mut checks = Vec::new();
    let name_pos = file
        .root
        .get("/event_timestamp/name")
        .map_or(Pos::UNKNOWN, |n| n.pos);
    checks.push(match &view.timestamp_field {
        Some(field) if *field == ts.name => {
            Check::pass(Rule::TimestampField, "event timestamp: field", Expected(ts.name.clone()), Actual(field.clone()), name_pos)
        }
        Some(field) => Check::fail(
            Rule::TimestampField,
            "event timestamp: field",
            Expected(ts.name.clone()),
            Actual(field.clone()),
            name_pos,
            format!("event timestamp: declared column `{}`, the store's source uses `{field}` as its timestamp field", ts.name),
        ),
        None => Check::fail(
            Rule::TimestampField,
            "event timestamp: field",
            Expected(ts.name.clone()),
            Actual("none"),
            name_pos,
            format!("event timestamp: declared column `{}`, but the store's source of view `{}` has no timestamp field", ts.name, view.name),
        ),
    });
    if let (Some(actual), Some(field)) = (&view.timestamp_type, &view.timestamp_field) {
        let declared = ts.feature_type();
        let pos = file
            .root
            .get("/event_timestamp/type")
            .or_else(|| file.root.get("/event_timestamp"))
            .map_or(name_pos, |n| n.pos);
        let subject = "event timestamp: type".to_string();
        checks.push(match compare(&declared, actual) {
            TypeMatch::Exact => Check::pass(Rule::TimestampType, subject, Expected(declared.to_string()), Actual(actual.to_string()), pos),
            TypeMatch::Compatible(why) => Check::finding(
                Rule::TimestampType,
                Severity::Warning,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
                format!("event timestamp `{}`: the schema declares {declared}, the store reads `{field}` as {actual}; {why}", ts.name),
            ),
            TypeMatch::Incompatible(why) => Check::finding(
                Rule::TimestampType,
                Severity::Error,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
                format!(
                    "event timestamp `{}`: the schema declares {declared}, the store reads `{field}` as {actual}; not lossless{}",
                    ts.name,
                    if why.is_empty() { String::new() } else { format!(": {why}") }
                ),
            ),
        });
    }
    let declared_created = file
        .spec
        .created_timestamp
        .as_ref()
        .map(|c| c.name.as_str());
    let stored_created = view.created_timestamp_column.as_deref();
    let pos = file
        .root
        .get("/created_timestamp/name")
        .map_or_else(|| file.key_pos("/event_timestamp"), |n| n.pos);
    let show = |c: Option<&str>| c.unwrap_or("none").to_string();
    checks.push(
        Check::pass(
            Rule::CreatedTimestamp,
            "created timestamp",
            Expected(show(declared_created)),
            Actual(show(stored_created)),
            pos,
        )
        .fail_unless(declared_created == stored_created, || {
            format!(
                "created timestamp: the schema declares {}, the store's source has {}",
                declared_created.map_or("none".into(), |c| format!("`{c}`")),
                stored_created.map_or("none".into(), |c| format!("`{c}`"))
            )
        }),
    );
    checks
}

fn ttl(file: &SchemaFile, view: &StoreView) -> Option<Check> {
    // A malformed or out-of-range TTL is already a `schema-violation` finding.
    let declared = file.spec.ttl.as_ref()?.seconds().ok()?;
    let actual = view.ttl_seconds?;
    let pos = file.key_pos("/ttl");
    Some(
        Check::pass(
            Rule::Ttl,
            "ttl",
            Expected(format_duration(declared)),
            Actual(format_duration(actual)),
            pos,
        )
        .fail_unless(declared == actual, || {
            format!(
                "ttl: declared {} ({declared} s), the store has {} ({actual} s)",
                format_duration(declared),
                format_duration(actual)
            )
        }),
    )
}
