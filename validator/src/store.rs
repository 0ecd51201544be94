//! Feature-store metadata: the store-neutral model the checks compare against, and the
//! formats it is read from (Feast `registry-dump` JSON, arrowfeat store metadata JSON).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::FeatureType;

/// Registries of tens of thousands of views are tens of MiB.
pub const MAX_REGISTRY_BYTES: u64 = 512 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct StoreMetadata {
    /// "Feast registry (project X)" or the `store` name of arrowfeat metadata.
    pub description: String,
    pub views: BTreeMap<String, StoreView>,
    pub entities: BTreeMap<String, StoreEntity>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StoreView {
    pub name: String,
    pub features: Vec<StoreField>,
    pub entities: Vec<String>,
    /// Join key columns with their types, when the store records them.
    pub entity_columns: Vec<StoreField>,
    /// `None`: the store did not say. `Some(0)`: no expiry.
    pub ttl_seconds: Option<u64>,
    pub tags: BTreeMap<String, String>,
    pub timestamp_field: Option<String>,
    /// The event timestamp's type; Feast timestamps are `timestamp[us, UTC]`.
    pub timestamp_type: Option<FeatureType>,
    pub created_timestamp_column: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StoreField {
    pub name: String,
    pub ty: FeatureType,
    /// The store's own spelling of the type (e.g. Feast `FLOAT`), for reports.
    pub store_type: String,
    /// `None` where the store does not record nullability (Feast).
    pub nullable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StoreEntity {
    pub name: String,
    pub join_key: String,
    pub ty: Option<FeatureType>,
    pub store_type: Option<String>,
}

impl StoreView {
    pub fn feature(&self, name: &str) -> Option<&StoreField> {
        self.features.iter().find(|f| f.name == name)
    }
}

/// Reads store metadata from a file, detecting the format.
pub fn load(path: &Path) -> Result<StoreMetadata, String> {
    let bytes = crate::spec::read_bounded(path, MAX_REGISTRY_BYTES)?;
    parse(&bytes).map_err(|message| format!("{}: {message}", path.display()))
}

/// Parses Feast `registry-dump` JSON or arrowfeat store metadata JSON.
pub fn parse(bytes: &[u8]) -> Result<StoreMetadata, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not valid UTF-8 (byte {})", e.valid_up_to()))?;
    if text.trim().is_empty() {
        return Err(
            "empty file; expected Feast `registry-dump` JSON or arrowfeat store metadata".into(),
        );
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json ends its message with the location we already put in front.
        let message = e.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        format!("{}:{}: malformed JSON: {message}", e.line(), e.column())
    })?;
    let Value::Object(object) = &value else {
        return Err(format!(
            "expected a JSON object, found {}",
            json_kind(&value)
        ));
    };
    if object.get("format").and_then(Value::as_str) == Some(NEUTRAL_FORMAT) {
        return parse_neutral(value);
    }
    if FEAST_KEYS.iter().any(|key| object.contains_key(*key)) {
        return parse_feast(&value);
    }
    let keys: Vec<&str> = object.keys().map(String::as_str).take(8).collect();
    Err(format!(
        "unrecognised metadata: expected Feast `registry-dump` JSON (keys such as `featureViews`, `entities`, `project`) \
         or arrowfeat store metadata (`\"format\": \"{NEUTRAL_FORMAT}\"`), found keys [{}]",
        keys.join(", ")
    ))
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---- arrowfeat store metadata ----------------------------------------------------------

pub const NEUTRAL_FORMAT: &str = "arrowfeat-store-metadata";

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NeutralDocument {
    format: String,
    format_version: u32,
    store: String,
    #[serde(default)]
    entities: Vec<NeutralEntity>,
    feature_views: Vec<NeutralView>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NeutralEntity {
    name: String,
    join_key: String,
    #[serde(rename = "type", default)]
    type_name: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NeutralView {
    name: String,
    #[serde(default)]
    entities: Vec<String>,
    #[serde(default)]
    ttl_seconds: Option<u64>,
    #[serde(default)]
    tags: BTreeMap<String, String>,
    #[serde(default)]
    event_timestamp: Option<NeutralTimestamp>,
    #[serde(default)]
    created_timestamp: Option<String>,
    features: Vec<NeutralField>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NeutralTimestamp {
    name: String,
    #[serde(rename = "type", default)]
    type_name: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NeutralField {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    #[serde(default)]
    nullable: Option<bool>,
}

fn parse_neutral(value: Value) -> Result<StoreMetadata, String> {
    let document: NeutralDocument =
        serde_json::from_value(value).map_err(|e| format!("arrowfeat store metadata: {e}"))?;
    if document.format_version != 1 {
        return Err(format!(
            "arrowfeat store metadata format_version {} is not supported; expected 1",
            document.format_version
        ));
    }
    let parse_type = |context: &str, text: &str| {
        FeatureType::parse(text)
            .map_err(|message| format!("arrowfeat store metadata: {context}: {message}"))
    };
    let mut entities = BTreeMap::new();
    for entity in &document.entities {
        let ty = match &entity.type_name {
            Some(text) => Some(parse_type(&format!("entity {}", entity.name), text)?),
            None => None,
        };
        entities.insert(
            entity.name.clone(),
            StoreEntity {
                name: entity.name.clone(),
                join_key: entity.join_key.clone(),
                ty,
                store_type: entity.type_name.clone(),
            },
        );
    }
    let mut views = BTreeMap::new();
    for view in document.feature_views {
        let mut features = Vec::new();
        for field in &view.features {
            features.push(StoreField {
                name: field.name.clone(),
                ty: parse_type(
                    &format!("view {} feature {}", view.name, field.name),
                    &field.type_name,
                )?,
                store_type: field.type_name.clone(),
                nullable: field.nullable,
            });
        }
        let entity_columns = view
            .entities
            .iter()
            .filter_map(|name| entities.get(name))
            .filter_map(|entity: &StoreEntity| {
                Some(StoreField {
                    name: entity.join_key.clone(),
                    ty: entity.ty.clone()?,
                    store_type: entity.store_type.clone()?,
                    nullable: Some(false),
                })
            })
            .collect();
        let timestamp_type = match view
            .event_timestamp
            .as_ref()
            .and_then(|ts| ts.type_name.as_deref())
        {
            Some(text) => Some(parse_type(
                &format!("view {} event_timestamp", view.name),
                text,
            )?),
            None => None,
        };
        let store_view = StoreView {
            name: view.name.clone(),
            features,
            entities: view.entities,
            entity_columns,
            ttl_seconds: view.ttl_seconds,
            tags: view.tags,
            timestamp_field: view.event_timestamp.map(|ts| ts.name),
            timestamp_type,
            created_timestamp_column: view.created_timestamp,
        };
        if views.insert(view.name.clone(), store_view).is_some() {
            return Err(format!(
                "arrowfeat store metadata: feature view `{}` appears twice",
                view.name
            ));
        }
    }
    if views.is_empty() {
        return Err("arrowfeat store metadata holds no feature views".into());
    }
    Ok(StoreMetadata {
        description: document.store,
        views,
        entities,
    })
}

// ---- Feast registry-dump ---------------------------------------------------------------

const FEAST_KEYS: &[&str] = &[
    "featureViews",
    "entities",
    "project",
    "dataSources",
    "streamFeatureViews",
    "projectMetadata",
];

/// Feature view lists that carry a batch source and features; on-demand views have
/// neither a timestamp nor a TTL and are not schema-checked.
const FEAST_VIEW_LISTS: &[&str] = &["featureViews", "streamFeatureViews"];

fn parse_feast(value: &Value) -> Result<StoreMetadata, String> {
    let project = value
        .get("project")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let mut entities = BTreeMap::new();
    for (index, entity) in array(value, "entities")?.iter().enumerate() {
        let spec = spec_of(entity, &format!("entities[{index}]"))?;
        let name = string(spec, "name", &format!("entities[{index}].spec"))?;
        if name.starts_with("__") {
            continue; // Feast's internal `__dummy` entity for entity-less views.
        }
        let join_key = spec
            .get("joinKey")
            .and_then(Value::as_str)
            .unwrap_or(&name)
            .to_string();
        let store_type = spec
            .get("valueType")
            .and_then(Value::as_str)
            .map(str::to_string);
        let ty = store_type.as_deref().map(FeatureType::from_feast);
        entities.insert(
            name.clone(),
            StoreEntity {
                name,
                join_key,
                ty,
                store_type,
            },
        );
    }
    let mut views = BTreeMap::new();
    for list in FEAST_VIEW_LISTS {
        for (index, view) in array(value, list)?.iter().enumerate() {
            let context = format!("{list}[{index}]");
            let spec = spec_of(view, &context)?;
            let name = string(spec, "name", &format!("{context}.spec"))?;
            let fields = |key: &str| -> Result<Vec<StoreField>, String> {
                let mut out = Vec::new();
                for (i, field) in array(spec, key)?.iter().enumerate() {
                    let field_context = format!("{context}.spec.{key}[{i}]");
                    let field_name = string(field, "name", &field_context)?;
                    // Feast omits `valueType` when it is the proto default (INVALID).
                    let store_type = field
                        .get("valueType")
                        .and_then(Value::as_str)
                        .unwrap_or("INVALID")
                        .to_string();
                    out.push(StoreField {
                        name: field_name,
                        ty: FeatureType::from_feast(&store_type),
                        store_type,
                        nullable: None,
                    });
                }
                Ok(out)
            };
            let source = spec.get("batchSource");
            let text_of = |key: &str| {
                source
                    .and_then(|s| s.get(key))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            let timestamp_field = text_of("timestampField");
            let ttl_seconds = match spec.get("ttl") {
                None => Some(0),
                Some(Value::String(text)) => Some(parse_proto_duration(text).ok_or_else(|| {
                    format!("{context}.spec.ttl: expected a protobuf duration such as \"86400s\", found {text:?}")
                })?),
                Some(other) => return Err(format!("{context}.spec.ttl: expected a duration string, found {other}")),
            };
            let tags = spec
                .get("tags")
                .and_then(Value::as_object)
                .map(|tags| {
                    tags.iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str().map_or_else(|| v.to_string(), str::to_string),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let store_view = StoreView {
                name: name.clone(),
                features: fields("features")?,
                entities: array(spec, "entities")?
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|name| !name.starts_with("__"))
                    .map(str::to_string)
                    .collect(),
                entity_columns: fields("entityColumns")?,
                ttl_seconds,
                tags,
                timestamp_type: timestamp_field
                    .as_ref()
                    .map(|_| FeatureType::feast_timestamp()),
                timestamp_field,
                created_timestamp_column: text_of("createdTimestampColumn"),
            };
            views.insert(name, store_view);
        }
    }
    if views.is_empty() {
        return Err(format!(
            "the Feast registry of project `{project}` holds no feature views (run `feast apply` in the feature repo first)"
        ));
    }
    Ok(StoreMetadata {
        description: format!("Feast registry (project {project})"),
        views,
        entities,
    })
}

fn array<'a>(value: &'a Value, key: &str) -> Result<&'a [Value], String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!(
            "`{key}`: expected an array, found {}",
            json_kind(other)
        )),
    }
}

fn spec_of<'a>(value: &'a Value, context: &str) -> Result<&'a Value, String> {
    value
        .get("spec")
        .filter(|spec| spec.is_object())
        .ok_or_else(|| {
            format!(
                "{context}: no `spec` object; this registry layout is not supported \
             (arrowfeat reads `feast registry-dump` output of Feast 0.30 and later)"
            )
        })
}

fn string(value: &Value, key: &str, context: &str) -> Result<String, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("{context}: expected a string `{key}`"))
}

/// Protobuf JSON durations: `"86400s"`, `"1.5s"`, `"0s"`. Fractions are truncated.
fn parse_proto_duration(text: &str) -> Option<u64> {
    let number = text.strip_suffix('s')?;
    let whole = number.split('.').next()?;
    whole.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_durations() {
        assert_eq!(parse_proto_duration("86400s"), Some(86_400));
        assert_eq!(parse_proto_duration("1.5s"), Some(1));
        assert_eq!(parse_proto_duration("0s"), Some(0));
        assert_eq!(parse_proto_duration("1d"), None);
    }

    #[test]
    fn unrecognised_documents_say_what_was_expected() {
        assert!(parse(b"").unwrap_err().contains("empty file"));
        assert!(parse(b"[1]")
            .unwrap_err()
            .contains("expected a JSON object, found an array"));
        assert!(parse(b"{\"foo\": 1}")
            .unwrap_err()
            .contains("found keys [foo]"));
        assert!(parse(b"{\"a\": ").unwrap_err().contains("malformed JSON"));
        assert!(parse(b"{\"project\": \"p\", \"featureViews\": []}")
            .unwrap_err()
            .contains("holds no feature views"));
        assert!(parse(b"{\"featureViews\": [{\"name\": \"x\"}]}")
            .unwrap_err()
            .contains("not supported"));
    }
}
