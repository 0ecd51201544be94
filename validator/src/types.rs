//! The feature type vocabulary, its Arrow and Feast equivalents, and how two types compare.
//!
//! Grammar (whitespace inside brackets is ignored):
//!
//! ```text
//! int32 | int64 | float32 | float64 | string | bytes | bool
//! timestamp                      = timestamp[us, UTC]
//! timestamp[UNIT] | timestamp[UNIT, TZ]     UNIT: s, ms, us, ns
//! datetime64[ns]                 pandas' naive nanosecond timestamps
//! list<T>
//! embedding[N] | embedding[N, float32|float64]   fixed-size vectors (float32 default)
//! ```

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeUnit {
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
}

impl TimeUnit {
    fn parse(text: &str) -> Option<TimeUnit> {
        Some(match text {
            "s" => TimeUnit::Second,
            "ms" => TimeUnit::Millisecond,
            "us" => TimeUnit::Microsecond,
            "ns" => TimeUnit::Nanosecond,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        }
    }

    fn arrow_name(self) -> &'static str {
        match self {
            TimeUnit::Second => "Second",
            TimeUnit::Millisecond => "Millisecond",
            TimeUnit::Microsecond => "Microsecond",
            TimeUnit::Nanosecond => "Nanosecond",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FeatureType {
    Int32,
    Int64,
    Float32,
    Float64,
    String,
    Bytes,
    Bool,
    /// An Arrow timestamp. `tz: None` is a naive (wall-clock) timestamp.
    Timestamp {
        unit: TimeUnit,
        tz: Option<String>,
    },
    /// pandas' `datetime64[ns]`: naive nanoseconds, the representation Feast hands to
    /// pandas for its timestamps. Same Arrow type as `timestamp[ns]`, named apart because
    /// users write it and because the store side records "a timestamp", not this.
    Datetime64Ns,
    List(Box<FeatureType>),
    /// A fixed-size vector of float32 or float64.
    Embedding {
        dim: u32,
        element: Box<FeatureType>,
    },
    /// A store type with no equivalent in the vocabulary (Feast MAP, JSON, STRUCT, ...).
    Other(String),
}

/// The primitive names, for "did you mean" suggestions.
pub const TYPE_NAMES: &[&str] = &[
    "int32",
    "int64",
    "float32",
    "float64",
    "string",
    "bytes",
    "bool",
    "timestamp",
    "datetime64[ns]",
    "list<",
    "embedding[",
];

impl FeatureType {
    /// Parses the vocabulary. The error says what was expected.
    pub fn parse(text: &str) -> Result<FeatureType, String> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        parse_compact(&compact).ok_or_else(|| {
            let suggestion = crate::suggest::closest(&compact, TYPE_NAMES.iter().copied())
                .map(|s| format!(" (did you mean `{}`?)", s.trim_end_matches(['<', '['])))
                .unwrap_or_default();
            format!(
                "expected a feature type (int32, int64, float32, float64, string, bytes, bool, \
                 timestamp[unit, tz], datetime64[ns], list<T>, embedding[N]), found `{text}`{suggestion}"
            )
        })
    }

    pub fn is_timestamp(&self) -> bool {
        matches!(
            self,
            FeatureType::Timestamp { .. } | FeatureType::Datetime64Ns
        )
    }

    /// The Arrow `DataType` this type is read as (its `Debug` spelling in arrow-rs).
    pub fn arrow_type(&self) -> String {
        match self {
            FeatureType::Int32 => "Int32".into(),
            FeatureType::Int64 => "Int64".into(),
            FeatureType::Float32 => "Float32".into(),
            FeatureType::Float64 => "Float64".into(),
            FeatureType::String => "Utf8".into(),
            FeatureType::Bytes => "Binary".into(),
            FeatureType::Bool => "Boolean".into(),
            FeatureType::Timestamp { unit, tz: None } => {
                format!("Timestamp({}, None)", unit.arrow_name())
            }
            FeatureType::Timestamp { unit, tz: Some(tz) } => {
                format!("Timestamp({}, Some(\"{tz}\"))", unit.arrow_name())
            }
            FeatureType::Datetime64Ns => "Timestamp(Nanosecond, None)".into(),
            FeatureType::List(item) => format!("List({})", item.arrow_type()),
            FeatureType::Embedding { dim, element } => {
                format!("FixedSizeList({}, {dim})", element.arrow_type())
            }
            FeatureType::Other(name) => format!("(no Arrow equivalent: {name})"),
        }
    }

    /// The Feast `ValueType` name this type registers as.
    pub fn feast_value_type(&self) -> String {
        match self {
            FeatureType::Int32 => "INT32".into(),
            FeatureType::Int64 => "INT64".into(),
            FeatureType::Float32 => "FLOAT".into(),
            FeatureType::Float64 => "DOUBLE".into(),
            FeatureType::String => "STRING".into(),
            FeatureType::Bytes => "BYTES".into(),
            FeatureType::Bool => "BOOL".into(),
            FeatureType::Timestamp { .. } | FeatureType::Datetime64Ns => "UNIX_TIMESTAMP".into(),
            FeatureType::List(item) | FeatureType::Embedding { element: item, .. } => {
                format!("{}_LIST", item.feast_value_type())
            }
            FeatureType::Other(name) => name.clone(),
        }
    }

    /// The type a Feast `ValueType` name stands for. Feast timestamps are read by Feast
    /// as Arrow `timestamp[us]` in UTC.
    pub fn from_feast(value_type: &str) -> FeatureType {
        let scalar = |name: &str| -> Option<FeatureType> {
            Some(match name {
                "INT32" => FeatureType::Int32,
                "INT64" => FeatureType::Int64,
                "FLOAT" => FeatureType::Float32,
                "DOUBLE" => FeatureType::Float64,
                "STRING" => FeatureType::String,
                "BYTES" => FeatureType::Bytes,
                "BOOL" => FeatureType::Bool,
                "UNIX_TIMESTAMP" => FeatureType::feast_timestamp(),
                _ => return None,
            })
        };
        if let Some(ty) = scalar(value_type) {
            return ty;
        }
        if let Some(item) = value_type.strip_suffix("_LIST").and_then(scalar) {
            return FeatureType::List(Box::new(item));
        }
        FeatureType::Other(value_type.to_string())
    }

    pub fn feast_timestamp() -> FeatureType {
        FeatureType::Timestamp {
            unit: TimeUnit::Microsecond,
            tz: Some("UTC".into()),
        }
    }
}

fn parse_compact(text: &str) -> Option<FeatureType> {
    Some(match text {
        "int32" => FeatureType::Int32,
        "int64" => FeatureType::Int64,
        "float32" => FeatureType::Float32,
        "float64" => FeatureType::Float64,
        "string" => FeatureType::String,
        "bytes" => FeatureType::Bytes,
        "bool" => FeatureType::Bool,
        "timestamp" => FeatureType::feast_timestamp(),
        "datetime64[ns]" => FeatureType::Datetime64Ns,
        _ => {
            if let Some(inner) = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
                return Some(FeatureType::List(Box::new(parse_compact(inner)?)));
            }
            if let Some(args) = text
                .strip_prefix("timestamp[")
                .and_then(|t| t.strip_suffix(']'))
            {
                let mut parts = args.splitn(2, ',');
                let unit = TimeUnit::parse(parts.next()?)?;
                let tz = match parts.next() {
                    Some(tz) if !tz.is_empty() => Some(tz.to_string()),
                    Some(_) => return None,
                    None => None,
                };
                return Some(FeatureType::Timestamp { unit, tz });
            }
            if let Some(args) = text
                .strip_prefix("embedding[")
                .and_then(|t| t.strip_suffix(']'))
            {
                let mut parts = args.splitn(2, ',');
                let dim: u32 = parts.next()?.parse().ok().filter(|d| *d > 0)?;
                let element = match parts.next() {
                    None | Some("float32") => FeatureType::Float32,
                    Some("float64") => FeatureType::Float64,
                    Some(_) => return None,
                };
                return Some(FeatureType::Embedding {
                    dim,
                    element: Box::new(element),
                });
            }
            return None;
        }
    })
}

impl fmt::Display for FeatureType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureType::Int32 => f.write_str("int32"),
            FeatureType::Int64 => f.write_str("int64"),
            FeatureType::Float32 => f.write_str("float32"),
            FeatureType::Float64 => f.write_str("float64"),
            FeatureType::String => f.write_str("string"),
            FeatureType::Bytes => f.write_str("bytes"),
            FeatureType::Bool => f.write_str("bool"),
            FeatureType::Timestamp { unit, tz: None } => write!(f, "timestamp[{}]", unit.as_str()),
            FeatureType::Timestamp { unit, tz: Some(tz) } => {
                write!(f, "timestamp[{}, {tz}]", unit.as_str())
            }
            FeatureType::Datetime64Ns => f.write_str("datetime64[ns]"),
            FeatureType::List(item) => write!(f, "list<{item}>"),
            FeatureType::Embedding { dim, element } if **element == FeatureType::Float32 => {
                write!(f, "embedding[{dim}]")
            }
            FeatureType::Embedding { dim, element } => write!(f, "embedding[{dim}, {element}]"),
            FeatureType::Other(name) => f.write_str(name),
        }
    }
}

/// How a declared type relates to another (the store's, or a later revision's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeMatch {
    Exact,
    /// Converts without loss, but is not the same type: reported as a warning.
    Compatible(String),
    Incompatible,
}

/// How `declared` (what the schema file says) relates to `actual` (what the store has).
/// `Compatible` covers lossless differences: integer or float widening from declared to
/// actual, timestamp unit or time zone representation, a fixed-size embedding stored as a
/// variable-length list.
pub fn compare(declared: &FeatureType, actual: &FeatureType) -> TypeMatch {
    use FeatureType as T;
    if declared == actual {
        return TypeMatch::Exact;
    }
    match (declared, actual) {
        (T::Int32, T::Int64) => TypeMatch::Compatible("int32 values widen losslessly to int64".into()),
        (T::Float32, T::Float64) => {
            TypeMatch::Compatible("float32 values widen losslessly to float64".into())
        }
        (T::Datetime64Ns, T::Timestamp { unit, tz }) | (T::Timestamp { unit, tz }, T::Datetime64Ns) => {
            let other = T::Timestamp { unit: *unit, tz: tz.clone() };
            TypeMatch::Compatible(format!(
                "datetime64[ns] (pandas, naive nanoseconds) and {other} are both timestamps and convert \
                 without loss within the datetime64[ns] range (1677-2262); check the time zone"
            ))
        }
        (T::Timestamp { unit: u1, tz: tz1 }, T::Timestamp { unit: u2, tz: tz2 }) => {
            let mut differences = Vec::new();
            if u1 != u2 {
                differences.push(format!("unit {} vs {}", u1.as_str(), u2.as_str()));
            }
            if tz1 != tz2 {
                differences.push(format!(
                    "time zone {} vs {}",
                    tz1.as_deref().unwrap_or("none (naive)"),
                    tz2.as_deref().unwrap_or("none (naive)")
                ));
            }
            TypeMatch::Compatible(format!("both are timestamps; {}", differences.join(", ")))
        }
        (T::Embedding { element, dim }, T::List(item)) if element == item => TypeMatch::Compatible(format!(
            "the store keeps a variable-length list<{item}>; the schema fixes the dimension at {dim}"
        )),
        (T::List(a), T::List(b)) => match compare(a, b) {
            TypeMatch::Exact => TypeMatch::Exact,
            TypeMatch::Compatible(why) => TypeMatch::Compatible(format!("list items: {why}")),
            TypeMatch::Incompatible => TypeMatch::Incompatible,
        },
        _ => TypeMatch::Incompatible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_round_trips() {
        for text in [
            "int32",
            "int64",
            "float32",
            "float64",
            "string",
            "bytes",
            "bool",
            "timestamp[ns]",
            "timestamp[us, UTC]",
            "timestamp[ms, Europe/Paris]",
            "datetime64[ns]",
            "list<int64>",
            "list<list<string>>",
            "embedding[768]",
            "embedding[3, float64]",
        ] {
            let ty = FeatureType::parse(text).unwrap();
            assert_eq!(ty.to_string(), text);
            assert_eq!(FeatureType::parse(&ty.to_string()).unwrap(), ty);
        }
        assert_eq!(
            FeatureType::parse("timestamp").unwrap(),
            FeatureType::feast_timestamp()
        );
        assert_eq!(
            FeatureType::parse(" list< int64 > ").unwrap().to_string(),
            "list<int64>"
        );
    }

    #[test]
    fn bad_types_say_what_was_expected() {
        let error = FeatureType::parse("flaot32").unwrap_err();
        assert!(error.contains("did you mean `float32`?"), "{error}");
        for bad in [
            "timestamp[h]",
            "embedding[0]",
            "embedding[4, int8]",
            "list<>",
            "timestamp[us,]",
            "",
        ] {
            assert!(FeatureType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn feast_types_map_both_ways() {
        for text in [
            "int32",
            "int64",
            "float32",
            "float64",
            "string",
            "bytes",
            "bool",
            "list<float32>",
        ] {
            let ty = FeatureType::parse(text).unwrap();
            assert_eq!(FeatureType::from_feast(&ty.feast_value_type()), ty);
        }
        assert_eq!(
            FeatureType::from_feast("UNIX_TIMESTAMP").to_string(),
            "timestamp[us, UTC]"
        );
        assert_eq!(
            FeatureType::from_feast("MAP"),
            FeatureType::Other("MAP".into())
        );
    }

    #[test]
    fn comparison_has_three_outcomes() {
        let t = |s: &str| FeatureType::parse(s).unwrap();
        assert_eq!(compare(&t("int64"), &t("int64")), TypeMatch::Exact);
        assert!(matches!(
            compare(&t("int32"), &t("int64")),
            TypeMatch::Compatible(_)
        ));
        assert_eq!(compare(&t("int64"), &t("int32")), TypeMatch::Incompatible);
        assert_eq!(compare(&t("int64"), &t("float64")), TypeMatch::Incompatible);
        assert!(matches!(
            compare(&t("datetime64[ns]"), &t("timestamp")),
            TypeMatch::Compatible(_)
        ));
        assert!(matches!(
            compare(&t("timestamp[ns, UTC]"), &t("timestamp[us, UTC]")),
            TypeMatch::Compatible(_)
        ));
        assert!(matches!(
            compare(&t("embedding[8]"), &t("list<float32>")),
            TypeMatch::Compatible(_)
        ));
        assert_eq!(
            compare(&t("embedding[8]"), &t("list<float64>")),
            TypeMatch::Incompatible
        );
        assert_eq!(
            compare(&t("string"), &FeatureType::Other("JSON".into())),
            TypeMatch::Incompatible
        );
    }
}
