//! Checks of one schema file against the feature store's metadata.

use crate::report::{Actual, Check, Expected};
use crate::rules::{Rule, Severity};
use crate::spec::SchemaFile;
use crate::store::{StoreField, StoreMetadata, StoreView};
use crate::suggest;
use crate::text::{list, short as q};
use crate::ttl::format_duration;
use crate::types::{compare, FeatureType, TypeMatch};
use crate::yaml::Pos;

/// The most name comparisons "did you mean" makes for one view's features (beyond it,
/// findings carry no suggestion): about a second in a debug build.
pub const MAX_SUGGESTION_COMPARISONS: usize = 200_000;

/// Every store check of `file`, passing ones included (they fill the report's tables).
pub fn check_against_store(file: &SchemaFile, store: &StoreMetadata) -> Vec<Check> {
    let spec = &file.spec;
    let name_pos = file.key_pos("/name");
    let Some(view) = store.views.get(&spec.name) else {
        // Bounded as for features: every file of a large repository may be missing.
        let suggestion = (store.views.len() <= MAX_SUGGESTION_COMPARISONS / 100)
            .then(|| suggest::closest(&spec.name, store.views.keys().map(String::as_str)))
            .flatten()
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return vec![Check::fail(
            Rule::ViewMissing,
            "feature view",
            Expected(q(&spec.name)),
            Actual("absent"),
            name_pos,
            format!(
                "feature view `{}` is not in the {}{suggestion}",
                q(&spec.name),
                q(&store.description)
            ),
        )];
    };
    let mut checks = vec![Check::pass(
        Rule::ViewMissing,
        "feature view",
        Expected(q(&spec.name)),
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
    let declared = &q(&file.spec.schema_version);
    let pos = file.key_pos("/schema_version");
    let subject = "store tag schema_version";
    Some(match view.tags.get("schema_version") {
        Some(tag) if *tag == file.spec.schema_version => Check::pass(Rule::VersionStoreTag, subject, Expected(declared.clone()), Actual(q(tag)), pos),
        Some(tag) => Check::fail(
            Rule::VersionStoreTag,
            subject,
            Expected(declared.clone()),
            Actual(q(tag)),
            pos,
            format!("the store tags view `{}` with schema_version {}, the file declares {declared}", q(&view.name), q(tag)),
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
                q(&view.name)
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
    let store_type = q(store_type);
    let actual_text = if store_type == actual.to_string() {
        store_type
    } else {
        format!("{} ({store_type})", q(&actual.to_string()))
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
                q(&actual.arrow_type()),
                if why.is_empty() { String::new() } else { format!(": {why}") }
            ),
        ),
    }
}

fn features(file: &SchemaFile, view: &StoreView) -> Vec<Check> {
    let spec = &file.spec;
    let mut checks = Vec::new();
    // By name once, not a search of the store's features per declared feature: a view of
    // tens of thousands of features stays linear.
    let stored_by_name: std::collections::HashMap<&str, &StoreField> =
        view.features.iter().map(|f| (f.name.as_str(), f)).collect();
    // "Did you mean" compares each missing name with every stored one: with thousands of
    // each that is millions of edit distances (2,500 took 22 s). Suggest only while the
    // comparisons stay few; the finding itself is the same either way.
    let missing = spec
        .features
        .iter()
        .filter(|f| !stored_by_name.contains_key(f.name.as_str()))
        .count();
    let suggest_features =
        missing.saturating_mul(view.features.len()) <= MAX_SUGGESTION_COMPARISONS;
    for (index, feature) in spec.features.iter().enumerate() {
        let pos = file.key_pos(&format!("/features/{index}"));
        let Some(stored) = stored_by_name.get(feature.name.as_str()).copied() else {
            let suggestion = suggest_features
                .then(|| {
                    suggest::closest(&feature.name, view.features.iter().map(|f| f.name.as_str()))
                })
                .flatten()
                .map(|s| format!("; the store has `{s}`"))
                .unwrap_or_default();
            checks.push(Check::fail(
                Rule::FeatureMissing,
                format!("feature {}", q(&feature.name)),
                Expected("present"),
                Actual("absent"),
                pos,
                format!("feature `{}` is declared but view `{}` in the store has no such feature{suggestion}", q(&feature.name), q(&view.name)),
            ));
            continue;
        };
        checks.push(Check::pass(
            Rule::FeatureMissing,
            format!("feature {}", q(&feature.name)),
            Expected("present"),
            Actual("present"),
            pos,
        ));
        // A type that does not parse was already reported by `type-syntax`.
        if let Ok(declared) = FeatureType::parse(&feature.type_name) {
            checks.push(type_check(
                Rule::FeatureType,
                format!("feature {}: type", q(&feature.name)),
                &declared,
                &stored.ty,
                &stored.store_type,
                file.key_pos(&format!("/features/{index}/type")),
            ));
        }
        if let Some(nullable) = stored.nullable {
            let show = |n: bool| if n { "nullable" } else { "not null" };
            let subject = format!("feature {}: nullability", q(&feature.name));
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
            format!("feature {}", q(name)),
            Expected("absent"),
            Actual("present in store"),
            features_pos,
            format!(
                "view `{}` in the store has feature `{}`, which the schema does not declare",
                q(&view.name),
                q(name)
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
                q(&view.name)
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
        let subject = format!("entity {}", q(&entity.name));
        if !view.entities.contains(&entity.name) {
            let suggestion =
                suggest::closest(&entity.name, view.entities.iter().map(String::as_str))
                    .map(|s| format!("; the store has `{s}`"))
                    .unwrap_or_default();
            let keyed_by = list(view.entities.iter().map(String::as_str));
            let actual = if view.entities.is_empty() {
                "none".to_string()
            } else {
                keyed_by.clone()
            };
            checks.push(Check::fail(
                Rule::EntityMissing,
                subject,
                Expected(q(&entity.name)),
                Actual(actual),
                pos,
                format!("entity `{}` is declared but view `{}` in the store is keyed by [{keyed_by}]{suggestion}", q(&entity.name), q(&view.name)),
            ));
            continue;
        }
        checks.push(Check::pass(
            Rule::EntityMissing,
            subject.clone(),
            Expected(q(&entity.name)),
            Actual("present"),
            pos,
        ));
        let stored_entity = store.entities.get(&entity.name);
        let join_key = stored_entity.map(|e| e.join_key.as_str());
        let key_pos = file.key_pos(&format!("/entities/{index}/join_key"));
        let type_pos = file.key_pos(&format!("/entities/{index}/type"));
        if stored_entity.is_none() {
            // The view names an entity the store does not define: its join key cannot
            // be compared, which must not pass as a match.
            checks.push(Check::fail(
                Rule::EntityJoinKey,
                format!("{subject}: join key"),
                Expected(q(&entity.join_key)),
                Actual("entity not defined in the store"),
                key_pos,
                format!(
                    "entity `{}`: the join key was not checked: view `{}` in the {} names entity `{}`, which the store does not define (expected an entity with its join key and type, found none)",
                    q(&entity.name),
                    q(&view.name),
                    q(&store.description),
                    q(&entity.name)
                ),
            ));
        }
        if let Some(join_key) = join_key {
            checks.push(
                Check::pass(
                    Rule::EntityJoinKey,
                    format!("{subject}: join key"),
                    Expected(q(&entity.join_key)),
                    Actual(q(join_key)),
                    key_pos,
                )
                .fail_unless(join_key == entity.join_key, || {
                    format!(
                        "entity `{}`: declared join key `{}`, the store's is `{}`",
                        q(&entity.name),
                        q(&entity.join_key),
                        q(join_key)
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
        // A declared type that does not parse is `type-syntax`'s finding (and, if that is
        // accepted, `Report::flag_unchecked_files`'); a type the store does not record is
        // this check's own finding, never a silent pass.
        let Ok(declared) = FeatureType::parse(&entity.type_name) else {
            continue;
        };
        match stored_type {
            Some((actual, store_type)) => checks.push(type_check(
                Rule::EntityType,
                format!("{subject}: type"),
                &declared,
                &actual,
                &store_type,
                type_pos,
            )),
            None => checks.push(Check::fail(
                Rule::EntityType,
                format!("{subject}: type"),
                Expected(declared.to_string()),
                Actual("unknown"),
                type_pos,
                format!(
                    "entity `{}`: the type was not checked: expected the {} to record the type of join key `{}` (in its entity or the view's entity columns), found none",
                    q(&entity.name),
                    q(&store.description),
                    q(join_key.unwrap_or(&entity.join_key))
                ),
            )),
        }
    }
    let entities_pos = file.root.locate_key("", "entities");
    let declared_entities: std::collections::HashSet<&str> =
        spec.entities.iter().map(|e| e.name.as_str()).collect();
    let extra: Vec<&String> = view
        .entities
        .iter()
        .filter(|name| !declared_entities.contains(name.as_str()))
        .collect();
    for name in &extra {
        checks.push(Check::fail(
            Rule::EntityExtra,
            format!("entity {}", q(name)),
            Expected("absent"),
            Actual("present in store"),
            entities_pos,
            format!("view `{}` in the store is also keyed by entity `{}`, which the schema does not declare", q(&view.name), q(name)),
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
            Check::pass(Rule::TimestampField, "event timestamp: field", Expected(q(&ts.name)), Actual(q(field)), name_pos)
        }
        Some(field) => Check::fail(
            Rule::TimestampField,
            "event timestamp: field",
            Expected(q(&ts.name)),
            Actual(q(field)),
            name_pos,
            format!("event timestamp: declared column `{}`, the store's source uses `{}` as its timestamp field", q(&ts.name), q(field)),
        ),
        None => Check::fail(
            Rule::TimestampField,
            "event timestamp: field",
            Expected(q(&ts.name)),
            Actual("none"),
            name_pos,
            format!("event timestamp: declared column `{}`, but the store's source of view `{}` has no timestamp field", q(&ts.name), q(&view.name)),
        ),
    });
    let pos = file
        .root
        .get("/event_timestamp/type")
        .or_else(|| file.root.get("/event_timestamp"))
        .map_or(name_pos, |n| n.pos);
    // A time zone that does not exist is `timestamp-declaration`'s finding; compared, it
    // would read as "the same instants" in another zone. If that finding is accepted,
    // `Report::flag_unchecked_files` says the type was not compared.
    let unknown_zone = ts.kind != "datetime64"
        && ts
            .tz
            .as_deref()
            .is_some_and(|tz| !crate::types::valid_time_zone(tz));
    if let (None, Some(_)) = (&view.timestamp_type, &view.timestamp_field) {
        // The store names the column but not its type: never a silent pass. An error
        // when the file spells the type out (as for an entity's type), a warning when
        // it only has the default `timestamp[us, UTC]`.
        let declared = ts.feature_type();
        let explicit = ["type", "unit", "tz"]
            .iter()
            .any(|key| file.root.get(&format!("/event_timestamp/{key}")).is_some());
        checks.push(Check::finding(
            Rule::TimestampType,
            if explicit {
                Severity::Error
            } else {
                Severity::Warning
            },
            "event timestamp: type",
            Expected(declared.to_string()),
            Actual("unknown"),
            pos,
            format!(
                "event timestamp `{}`: the type was not checked: expected the store to record the type of `{}` (declared {declared}{}), found none",
                q(&ts.name),
                q(&ts.name),
                if explicit { "" } else { " by default" }
            ),
        ));
    }
    if let (Some(actual), Some(field), false) =
        (&view.timestamp_type, &view.timestamp_field, unknown_zone)
    {
        let declared = ts.feature_type();
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
                format!("event timestamp `{}`: the schema declares {declared}, the store reads `{}` as {actual}; {why}", q(&ts.name), q(field)),
            ),
            TypeMatch::Incompatible(why) => Check::finding(
                Rule::TimestampType,
                Severity::Error,
                subject,
                Expected(declared.to_string()),
                Actual(actual.to_string()),
                pos,
                format!(
                    "event timestamp `{}`: the schema declares {declared}, the store reads `{}` as {actual}; not lossless{}",
                    q(&ts.name),
                    q(field),
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
    let show = |c: Option<&str>| c.map_or("none".to_string(), q);
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
                declared_created.map_or("none".into(), |c| format!("`{}`", q(c))),
                stored_created.map_or("none".into(), |c| format!("`{}`", q(c)))
            )
        }),
    );
    checks
}

fn ttl(file: &SchemaFile, view: &StoreView) -> Option<Check> {
    // A malformed or out-of-range TTL is already a `schema-violation` finding.
    let declared = file.spec.ttl.as_ref()?.seconds().ok()?;
    let pos = file.key_pos("/ttl");
    let Some(actual) = view.ttl_seconds else {
        // A declared TTL the store does not record cannot be confirmed: an error, as
        // for an entity's type, never a skipped check.
        return Some(Check::fail(
            Rule::Ttl,
            "ttl",
            Expected(format_duration(declared)),
            Actual("unknown"),
            pos,
            format!(
                "ttl: the TTL was not checked: expected view `{}` in the store to record its TTL (declared {}), found none",
                q(&view.name),
                format_duration(declared)
            ),
        ));
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    const SCHEMA: &str = "name: v_v1\nschema_version: 1.0.0\nentities: [{name: driver, join_key: no_such_column, type: bytes}]\nevent_timestamp: {name: ts}\nfeatures: [{name: f, type: int64}]\n";

    fn findings(store_json: &str, rule: Rule) -> Vec<Check> {
        let (_, file) = crate::checks::file::load_bytes("v.yaml", SCHEMA.as_bytes());
        let store = crate::store::parse(store_json.as_bytes()).unwrap();
        check_against_store(&file.unwrap(), &store)
            .into_iter()
            .filter(|c| c.rule == rule && c.status.is_finding())
            .collect()
    }

    fn feast(entities: &str, entity_columns: &str) -> String {
        format!(
            r#"{{"project": "p", "entities": [{entities}], "featureViews": [{{"spec": {{"name": "v_v1",
               "entities": ["driver"], "features": [{{"name": "f", "valueType": "INT64"}}],
               "entityColumns": [{entity_columns}], "tags": {{"schema_version": "1.0.0"}},
               "batchSource": {{"timestampField": "ts"}}}}}}]}}"#
        )
    }

    /// A view keyed by an entity the store does not define, or whose type it does not
    /// record, left the join key and the type unchecked: exit 0.
    #[test]
    fn entities_the_store_cannot_describe_are_findings() {
        let neutral = r#"{"format":"arrowfeat-store-metadata","format_version":1,"store":"s","feature_views":[{"name":"v_v1","entities":["driver"],"tags":{"schema_version":"1.0.0"},"event_timestamp":{"name":"ts"},"features":[{"name":"f","type":"int64"}]}]}"#;
        let join_key = findings(neutral, Rule::EntityJoinKey);
        assert_eq!(join_key.len(), 1, "{join_key:#?}");
        assert_eq!(join_key[0].status, Status::Error);
        assert!(
            join_key[0]
                .message
                .contains("names entity `driver`, which the store does not define"),
            "{}",
            join_key[0].message
        );
        assert_eq!(join_key[0].line, 3);
        let ty = findings(neutral, Rule::EntityType);
        assert_eq!(ty.len(), 1, "{ty:#?}");
        assert!(ty[0].message.contains("the type was not checked"), "{ty:?}");

        // Feast: the entity removed from `entities`, no entity columns either.
        let missing = feast("", "");
        assert_eq!(findings(&missing, Rule::EntityJoinKey).len(), 1);
        assert_eq!(findings(&missing, Rule::EntityType).len(), 1);
        // Feast: the entity without `valueType`, no entity columns: the type is unknown.
        let untyped = feast(
            r#"{"spec": {"name": "driver", "joinKey": "no_such_column"}}"#,
            "",
        );
        assert!(findings(&untyped, Rule::EntityJoinKey).is_empty());
        let ty = findings(&untyped, Rule::EntityType);
        assert_eq!(ty.len(), 1, "{ty:#?}");
        assert_eq!(ty[0].actual, "unknown");
        // With the type recorded, it is compared as before (bytes against INT64).
        let typed = feast(
            r#"{"spec": {"name": "driver", "joinKey": "no_such_column", "valueType": "INT64"}}"#,
            "",
        );
        let ty = findings(&typed, Rule::EntityType);
        assert_eq!(ty.len(), 1);
        assert!(ty[0].message.contains("incompatible"), "{ty:?}");
    }

    /// Every one of thousands of features differing from the store's made "did you
    /// mean" quadratic: 5,000 took 82 s.
    #[test]
    fn many_missing_features_stay_fast() {
        let n = 5_000;
        let declared: String = (0..n)
            .map(|i| format!("  - name: declared_feature_{i}\n    type: int64\n"))
            .collect();
        let schema = format!("name: v_v1\nschema_version: 1.0.0\nentities: [{{name: driver, join_key: d, type: int64}}]\nevent_timestamp: {{name: ts}}\nfeatures:\n{declared}");
        let stored: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"name":"stored_feature_{i}","type":"int64"}}"#))
            .collect();
        let store = format!(
            r#"{{"format":"arrowfeat-store-metadata","format_version":1,"store":"s","feature_views":[{{"name":"v_v1","entities":["driver"],"features":[{}]}}]}}"#,
            stored.join(",")
        );
        let (_, file) = crate::checks::file::load_bytes("v.yaml", schema.as_bytes());
        let store = crate::store::parse(store.as_bytes()).unwrap();
        let checks = check_against_store(&file.unwrap(), &store);
        assert_eq!(
            checks
                .iter()
                .filter(|c| c.rule == Rule::FeatureMissing && c.status.is_finding())
                .count(),
            n
        );
        // Past the bound no name gets a suggestion (each would compare it with every
        // stored name); nothing here is timed (machines are shared and noisy).
        assert!(checks
            .iter()
            .filter(|c| c.rule == Rule::FeatureMissing)
            .all(|c| !c.message.contains("did you mean")));
        // A few missing names still get their suggestion.
        let (_, file) = crate::checks::file::load_bytes(
            "v.yaml",
            SCHEMA.replace("name: f,", "name: ff,").as_bytes(),
        );
        let store = crate::store::parse(
            br#"{"format":"arrowfeat-store-metadata","format_version":1,"store":"s","feature_views":[{"name":"v_v1","entities":["driver"],"features":[{"name":"f","type":"int64"}]}]}"#,
        )
        .unwrap();
        let checks = check_against_store(&file.unwrap(), &store);
        assert!(
            checks
                .iter()
                .any(|c| c.message.contains("the store has `f`")),
            "{checks:#?}"
        );
    }

    /// Names from the store and the file are cut in every message and field.
    #[test]
    fn long_names_are_cut() {
        let long = "x".repeat(100_000);
        let store = format!(
            r#"{{"format":"arrowfeat-store-metadata","format_version":1,"store":"{long}","feature_views":[{{"name":"v_v1","entities":["driver"],"features":[{{"name":"{long}","type":"int64"}}]}}]}}"#
        );
        let (_, file) = crate::checks::file::load_bytes("v.yaml", SCHEMA.as_bytes());
        let store = crate::store::parse(store.as_bytes()).unwrap();
        for check in check_against_store(&file.unwrap(), &store) {
            for text in [
                &check.subject,
                &check.expected,
                &check.actual,
                &check.message,
            ] {
                assert!(text.len() < 1_000, "{}: {} bytes", check.rule, text.len());
            }
        }
    }
}
