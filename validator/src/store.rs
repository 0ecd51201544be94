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
    /// Where the view's batch source reads its data (Feast `FileSource` path, as the
    /// registry records it: relative paths are relative to the feature repo).
    pub batch_source_path: Option<String>,
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
    let bytes = crate::files::read_bounded(path, MAX_REGISTRY_BYTES)?;
    parse(&bytes).map_err(|message| {
        format!(
            "{}: {message}",
            crate::text::escape_controls(&path.display().to_string())
        )
    })
}

pub use crate::ttl::MAX_TTL_SECONDS;

/// Parses Feast `registry-dump` JSON or arrowfeat store metadata JSON. Errors name the
/// place in the document (`line:column`, or a path such as `featureViews[2].spec`) and
/// quote values from it with control characters escaped.
pub fn parse(bytes: &[u8]) -> Result<StoreMetadata, String> {
    parse_unescaped(bytes).map_err(|message| crate::text::clean(&message))
}

fn parse_unescaped(bytes: &[u8]) -> Result<StoreMetadata, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = crate::files::line_column_at(bytes, e.valid_up_to());
        format!(
            "{line}:{column}: not valid UTF-8 (byte offset {}); registries must be UTF-8 JSON",
            e.valid_up_to()
        )
    })?;
    if text.trim().is_empty() {
        return Err(
            "empty file; expected Feast `registry-dump` JSON or arrowfeat store metadata".into(),
        );
    }
    // serde_json stops at 128 levels of nesting ("recursion limit exceeded") before its
    // stack is at risk; that is a clean error here like any other malformed JSON.
    let value: Value = serde_json::from_str::<UniqueKeys>(text)
        .map_err(|e| json_error("malformed JSON", &e))?
        .0;
    let Value::Object(object) = &value else {
        return Err(format!(
            "expected a JSON object, found {}",
            json_kind(&value)
        ));
    };
    if object.get("format").and_then(Value::as_str) == Some(NEUTRAL_FORMAT) {
        return parse_neutral(text);
    }
    if FEAST_KEYS.iter().any(|key| object.contains_key(*key)) {
        return parse_feast(&value);
    }
    let keys: Vec<String> = object
        .keys()
        .take(8)
        .map(|k| crate::text::quote_hashed(k, 40))
        .collect();
    Err(format!(
        "unrecognised metadata: expected Feast `registry-dump` JSON (keys such as `featureViews`, `entities`, `project`) \
         or arrowfeat store metadata (`\"format\": \"{NEUTRAL_FORMAT}\"`), found keys [{}]",
        keys.join(", ")
    ))
}

/// serde_json's error as `line:column: what: message`, without its trailing location.
fn json_error(what: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    let message = if message.contains("recursion limit exceeded") {
        "nested deeper than 128 levels (the JSON nesting limit)"
    } else {
        message
    };
    format!("{}:{}: {what}: {message}", e.line(), e.column())
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
    /// Where the view's data is (a file, a directory or a URL), for the checks that read
    /// the data at the store's batch sources.
    #[serde(default)]
    batch_source: Option<String>,
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

fn parse_neutral(text: &str) -> Result<StoreMetadata, String> {
    let document: NeutralDocument = serde_json::from_str(text).map_err(|e| {
        // serde's wording (`expected u32`) in plain words, with the field it is about.
        let offset = crate::files::offset_of(text, e.line(), e.column());
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message);
        format!(
            "{}:{}: arrowfeat store metadata: {}",
            e.line(),
            e.column(),
            crate::text::plain_serde(message, crate::text::key_before(text, offset).as_deref())
        )
    })?;
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
        if entities.contains_key(&entity.name) {
            return Err(format!(
                "arrowfeat store metadata: entity `{}` appears twice; refusing to guess which one the store uses",
                entity.name
            ));
        }
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
        let mut features: Vec<StoreField> = Vec::new();
        for field in &view.features {
            if let Some(first) = features.iter().find(|f| f.name == field.name) {
                return Err(duplicate_feature(
                    "arrowfeat store metadata",
                    &view.name,
                    &field.name,
                    &first.store_type,
                    &field.type_name,
                ));
            }
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
            ttl_seconds: match view.ttl_seconds {
                Some(ttl) if ttl > MAX_TTL_SECONDS => {
                    return Err(format!(
                        "arrowfeat store metadata: view {}: ttl_seconds {ttl} is out of range; the largest TTL is {MAX_TTL_SECONDS} s (10,000 years)",
                        view.name
                    ))
                }
                ttl => ttl,
            },
            tags: view.tags,
            timestamp_field: view.event_timestamp.map(|ts| ts.name),
            timestamp_type,
            created_timestamp_column: view.created_timestamp,
            batch_source_path: view.batch_source,
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
    let mut entity_context: BTreeMap<String, String> = BTreeMap::new();
    for (index, entity) in array(value, "entities")?.iter().enumerate() {
        let spec = spec_of(entity, &format!("entities[{index}]"))?;
        let name = string(spec, "name", &format!("entities[{index}].spec"))?;
        if name.starts_with("__") {
            continue; // Feast's internal `__dummy` entity for entity-less views.
        }
        if let Some(first) = entity_context.insert(name.clone(), format!("entities[{index}]")) {
            return Err(format!(
                "entity `{name}` appears twice (at {first} and entities[{index}]); refusing to guess which one the store uses"
            ));
        }
        let join_key = spec
            .get("joinKey")
            .and_then(Value::as_str)
            .unwrap_or(&name)
            .to_string();
        // A number (`"valueType": 4`) is not a registry-dump spelling: shown as what it is
        // (and compared as a type arrowfeat does not know), never as "none".
        let store_type = match spec.get("valueType") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(other) => Some(format!(
                "valueType {} (expected a Feast type name such as INT64)",
                crate::text::short(&other.to_string())
            )),
        };
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
    let mut view_context: BTreeMap<String, String> = BTreeMap::new();
    for list in FEAST_VIEW_LISTS {
        for (index, view) in array(value, list)?.iter().enumerate() {
            let context = format!("{list}[{index}]");
            let spec = spec_of(view, &context)?;
            let name = string(spec, "name", &format!("{context}.spec"))?;
            // The same view twice (in one list or in both) would leave the check to
            // whichever came last: refuse the registry instead.
            if let Some(first) = view_context.insert(name.clone(), context.clone()) {
                return Err(format!(
                    "feature view `{name}` appears twice (at {first} and {context}); refusing to guess which one the store uses"
                ));
            }
            let fields = |key: &str| -> Result<Vec<StoreField>, String> {
                let mut out: Vec<StoreField> = Vec::new();
                for (i, field) in array_in(spec, key, &format!("{context}.spec"))?
                    .iter()
                    .enumerate()
                {
                    let field_context = format!("{context}.spec.{key}[{i}]");
                    let field_name = string(field, "name", &field_context)?;
                    // Feast omits `valueType` when it is the proto default (INVALID).
                    // Feast omits `valueType` when it is the proto default (INVALID); a
                    // number is not a registry-dump spelling. Either is shown as what it
                    // is, never as a bare "INVALID".
                    let store_type = match field.get("valueType") {
                        Some(Value::String(name)) => name.clone(),
                        None | Some(Value::Null) => "no valueType (INVALID)".to_string(),
                        Some(other) => format!(
                            "valueType {} (expected a Feast type name such as INT64)",
                            crate::text::short(&other.to_string())
                        ),
                    };
                    if let Some(first) = out.iter().find(|f| f.name == field_name) {
                        return Err(duplicate_feature(
                            &format!("{context}.spec.{key}[{i}]"),
                            &name,
                            &field_name,
                            &first.store_type,
                            &store_type,
                        ));
                    }
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
            // Kept as written, empty too: the data gate refuses a path that names no file.
            let batch_source_path = match source
                .and_then(|s| s.get("fileOptions"))
                .and_then(|o| o.get("uri"))
            {
                None | Some(Value::Null) => None,
                Some(Value::String(uri)) => Some(uri.clone()),
                Some(other) => {
                    return Err(format!(
                        "{context}.spec.batchSource.fileOptions.uri: expected a path or URI string, found {}",
                        json_kind(other)
                    ))
                }
            };
            let ttl_seconds = match spec.get("ttl") {
                None => Some(0),
                Some(Value::String(text)) => Some(
                    parse_proto_duration(text)
                        .map_err(|why| format!("{context}.spec.ttl: {why}"))?,
                ),
                Some(other) => {
                    return Err(format!(
                    "{context}.spec.ttl: expected a duration string such as \"86400s\", found {}",
                    json_kind(other)
                ))
                }
            };
            // Tags that are not an object were read as no tags at all.
            if let Some(other) = spec.get("tags").filter(|t| !t.is_object() && !t.is_null()) {
                return Err(format!(
                    "{context}.spec.tags: expected an object of tag names to values, found {}",
                    json_kind(other)
                ));
            }
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
                entities: array_in(spec, "entities", &format!("{context}.spec"))?
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
                batch_source_path,
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
    array_in(value, key, "")
}

/// [`array`] whose error names where the value is (`featureViews[0].spec.entities`).
fn array_in<'a>(value: &'a Value, key: &str, context: &str) -> Result<&'a [Value], String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!(
            "{}`{key}`: expected an array, found {}",
            if context.is_empty() {
                String::new()
            } else {
                format!("{context}.")
            },
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

fn duplicate_feature(context: &str, view: &str, name: &str, first: &str, second: &str) -> String {
    let types = if first == second {
        format!("both {first}")
    } else {
        format!("conflicting types {first} and {second}")
    };
    format!(
        "{context}: feature `{name}` of view `{view}` is listed twice ({types}); refusing to guess which one the store uses"
    )
}

/// Protobuf JSON durations: `"86400s"`, `"0s"`, `"1.000s"`. A fraction other than zero
/// (the checks compare whole seconds), a negative or malformed value, or one beyond
/// [`MAX_TTL_SECONDS`] is an error that quotes the value.
fn parse_proto_duration(text: &str) -> Result<u64, String> {
    let quoted = crate::text::quote_hashed(text, 40);
    let malformed =
        || format!("expected a protobuf duration such as \"86400s\", found \"{quoted}\"");
    let number = text.strip_suffix('s').ok_or_else(malformed)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
        || fraction.len() > 9
        || (number.contains('.') && fraction.is_empty())
    {
        return Err(malformed());
    }
    if fraction.bytes().any(|b| b != b'0') {
        return Err(format!(
            "TTL \"{quoted}\" has a fraction of a second; arrowfeat compares TTLs in whole seconds"
        ));
    }
    let out_of_range = || {
        format!("TTL \"{quoted}\" is out of range; the largest TTL is {MAX_TTL_SECONDS}s (10,000 years)")
    };
    let seconds: u64 = whole.parse().map_err(|_| out_of_range())?;
    if seconds > MAX_TTL_SECONDS {
        return Err(out_of_range());
    }
    Ok(seconds)
}

/// A JSON value whose objects have no key twice. `serde_json::Value` keeps the last of
/// two equal keys (a view's `spec` given twice took the second `ttl` without a word); a
/// registry that says two things is refused instead, with the line and column.
struct UniqueKeys(Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(UniqueKeysVisitor)
            .map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let UniqueKeys(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` appears twice in one object",
                    crate::text::quote_hashed(&key, 80)
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's `expected u32` / `expected u64` reached users, without the field; a
    /// Feast view's `entities` that is not a list did not say which view.
    #[test]
    fn metadata_errors_name_the_field_in_plain_words() {
        let neutral = |version: &str, ttl: &str| {
            format!(
                r#"{{"format":"arrowfeat-store-metadata","format_version":{version},"store":"s","feature_views":[{{"name":"v","ttl_seconds":{ttl},"features":[]}}]}}"#
            )
        };
        let error = parse(neutral("\"1\"", "1").as_bytes()).unwrap_err();
        assert!(
            error.contains(
                "`format_version`: expected a whole number (0 or more), found the string \"1\""
            ),
            "{error}"
        );
        let error = parse(neutral("1", "-5").as_bytes()).unwrap_err();
        assert!(
            error.contains(
                "`ttl_seconds`: expected a whole number (0 or more), found the number -5"
            ),
            "{error}"
        );
        let feast =
            r#"{"project": "p", "featureViews": [{"spec": {"name": "v", "entities": "driver"}}]}"#;
        let error = parse(feast.as_bytes()).unwrap_err();
        assert!(
            error.starts_with("featureViews[0].spec.`entities`: expected an array"),
            "{error}"
        );
    }

    #[test]
    fn proto_durations() {
        assert_eq!(parse_proto_duration("86400s"), Ok(86_400));
        assert_eq!(parse_proto_duration("0s"), Ok(0));
        assert_eq!(parse_proto_duration("60.000s"), Ok(60));
        assert_eq!(parse_proto_duration("315576000000s"), Ok(MAX_TTL_SECONDS));
        for (bad, why) in [
            ("1d", "expected a protobuf duration"),
            ("-5s", "expected a protobuf duration"),
            ("s", "expected a protobuf duration"),
            ("1.s", "expected a protobuf duration"),
            ("1.5s", "fraction of a second"),
            ("315576000001s", "out of range"),
            ("99999999999999999999s", "out of range"),
        ] {
            let error = parse_proto_duration(bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    fn feast(views: &str, streams: &str) -> String {
        format!(
            r#"{{"project": "p", "entities": [{{"spec": {{"name": "driver", "joinKey": "driver_id", "valueType": "INT64"}}}}],
               "featureViews": [{views}], "streamFeatureViews": [{streams}]}}"#
        )
    }

    fn view(name: &str, features: &str) -> String {
        format!(
            r#"{{"spec": {{"name": "{name}", "entities": ["driver"], "features": [{features}], "ttl": "86400s"}}}}"#
        )
    }

    #[test]
    fn duplicate_json_keys_are_refused_with_their_place() {
        let f = r#"{"name": "a", "valueType": "INT64"}"#;
        let twice = view("v", f).replace(
            r#"{"spec": {"#,
            r#"{"spec": {"name": "v", "ttl": "999s"}, "spec": {"#,
        );
        let error = parse(feast(&twice, "").as_bytes()).unwrap_err();
        assert!(
            error.contains("the key `spec` appears twice in one object"),
            "{error}"
        );
        assert!(error.starts_with("2:"), "{error}");
    }

    #[test]
    fn duplicates_in_a_registry_are_refused_not_last_one_wins() {
        let f = r#"{"name": "a", "valueType": "INT64"}"#;
        let g = r#"{"name": "a", "valueType": "STRING"}"#;
        assert!(parse(feast(&view("v", f), "").as_bytes()).is_ok());
        let error = parse(feast(&format!("{}, {}", view("v", f), view("v", f)), "").as_bytes())
            .unwrap_err();
        assert!(
            error.contains(
                "feature view `v` appears twice (at featureViews[0] and featureViews[1])"
            ),
            "{error}"
        );
        let error = parse(feast(&view("v", f), &view("v", f)).as_bytes()).unwrap_err();
        assert!(
            error.contains("at featureViews[0] and streamFeatureViews[0]"),
            "{error}"
        );
        let error = parse(feast(&view("v", &format!("{f}, {g}")), "").as_bytes()).unwrap_err();
        assert!(
            error.contains(
                "feature `a` of view `v` is listed twice (conflicting types INT64 and STRING)"
            ),
            "{error}"
        );
        let error = parse(feast(&view("v", &format!("{f}, {f}")), "").as_bytes()).unwrap_err();
        assert!(error.contains("listed twice (both INT64)"), "{error}");
        let twice = feast(&view("v", f), "").replace(
            r#""entities": [{"#,
            r#""entities": [{"spec": {"name": "driver"}}, {"#,
        );
        assert!(parse(twice.as_bytes())
            .unwrap_err()
            .contains("entity `driver` appears twice"));
        // The same in arrowfeat store metadata.
        let neutral = |features: &str| {
            format!(
                r#"{{"format": "arrowfeat-store-metadata", "format_version": 1, "store": "s",
            "feature_views": [{{"name": "v", "features": [{features}]}}]}}"#
            )
        };
        let f = r#"{"name": "a", "type": "int64"}"#;
        let g = r#"{"name": "a", "type": "string"}"#;
        assert!(parse(neutral(f).as_bytes()).is_ok());
        let error = parse(neutral(&format!("{f}, {g}")).as_bytes()).unwrap_err();
        assert!(
            error.contains("conflicting types int64 and string"),
            "{error}"
        );
    }

    #[test]
    fn registry_numbers_out_of_range_are_errors() {
        let big = feast(
            &view("v", "").replace("86400s", "99999999999999999999s"),
            "",
        );
        let error = parse(big.as_bytes()).unwrap_err();
        assert!(
            error.contains(
                "featureViews[0].spec.ttl: TTL \"99999999999999999999s\" is out of range"
            ),
            "{error}"
        );
        let neutral = r#"{"format": "arrowfeat-store-metadata", "format_version": 99999999999, "store": "s", "feature_views": []}"#;
        let error = parse(neutral.as_bytes()).unwrap_err();
        assert!(error.starts_with("1:"), "{error}");
        let neutral = r#"{"format": "arrowfeat-store-metadata", "format_version": 1, "store": "s",
            "feature_views": [{"name": "v", "ttl_seconds": 99999999999999, "features": []}]}"#;
        assert!(parse(neutral.as_bytes())
            .unwrap_err()
            .contains("out of range"));
    }

    #[test]
    fn feast_types_and_tags_are_read_or_refused_by_what_they_are() {
        let store = |field: &str, tags: &str| {
            parse(
                feast(
                    &view("v", field).replace("\"ttl\"", &format!("\"tags\": {tags}, \"ttl\"")),
                    "",
                )
                .as_bytes(),
            )
        };
        let untyped = store(r#"{"name": "a"}"#, "{}").unwrap();
        assert_eq!(
            untyped.views["v"].features[0].store_type,
            "no valueType (INVALID)"
        );
        let numbered = store(r#"{"name": "a", "valueType": 6}"#, "{}").unwrap();
        assert!(numbered.views["v"].features[0]
            .store_type
            .starts_with("valueType 6 (expected a Feast type name"));
        let error = store(
            r#"{"name": "a", "valueType": "INT64"}"#,
            r#"["schema_version"]"#,
        )
        .unwrap_err();
        assert!(
            error.contains("featureViews[0].spec.tags: expected an object of tag names to values, found an array"),
            "{error}"
        );
    }

    #[test]
    fn deep_json_is_a_clean_error() {
        for depth in [200, 100_000] {
            let text = format!(
                "{{\"featureViews\": {}{}}}",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let error = parse(text.as_bytes()).unwrap_err();
            assert!(error.contains("nested deeper than 128 levels"), "{error}");
        }
    }

    #[test]
    fn errors_escape_control_characters_and_show_no_internals() {
        let text = feast(
            &view(
                "v\\u001b]0;pwned\\u0007",
                r#"{"name": "a", "valueType": "INT64"}"#,
            ),
            "",
        );
        let twice = text.replace(
            "\"featureViews\": [",
            &format!(
                "\"featureViews\": [{}, ",
                view("v\\u001b]0;pwned\\u0007", "")
            ),
        );
        let error = parse(twice.as_bytes()).unwrap_err();
        assert!(error.contains("v\\u{1b}]0;pwned\\u{7}"), "{error}");
        assert!(!error.chars().any(crate::text::is_unsafe_char), "{error}");
        let neutral = r#"{"format": "arrowfeat-store-metadata", "format_version": 1, "store": "s",
            "feature_views": [{"name": "v", "features": [{"name": "a", "type": "timestamp[us, Mars/Olympus]"}]}]}"#;
        let error = parse(neutral.as_bytes()).unwrap_err();
        assert!(
            error.contains("unknown time zone `Mars/Olympus`"),
            "{error}"
        );
        let neutral = r#"{"format": "arrowfeat-store-metadata", "format_version": 1, "store": "s", "feature_views": [{"name": 1}]}"#;
        let error = parse(neutral.as_bytes()).unwrap_err();
        assert!(
            error.starts_with("1:") && !error.contains("NeutralView"),
            "{error}"
        );
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
