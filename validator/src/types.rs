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
use std::str::FromStr;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    /// Parses the vocabulary. The error says what was expected and quotes what was found
    /// (control characters escaped).
    pub fn parse(text: &str) -> Result<FeatureType, String> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let found = crate::text::quote_hashed(text, 120);
        match parse_compact(&compact, 0) {
            Ok(ty) => Ok(ty),
            Err(ParseError::TooDeep) => Err(format!(
                "type `{found}` nests deeper than {MAX_TYPE_DEPTH} levels; the limit is \
                 {MAX_TYPE_DEPTH} nested list<...> levels"
            )),
            Err(ParseError::TimeZone(tz)) => Err(format!(
                "unknown time zone `{}` in type `{found}`: expected an IANA time-zone name \
                 (UTC, Europe/Paris, America/New_York, ...) or a fixed offset (+05:30){}",
                crate::text::quote_hashed(&tz, 60),
                suggest_time_zone(&tz)
            )),
            Err(ParseError::Dimension(dim)) => Err(format!(
                "embedding dimension `{}` in type `{found}`: expected an integer from 1 to {}",
                crate::text::quote_hashed(&dim, 40),
                u32::MAX
            )),
            Err(ParseError::Syntax) => {
                let suggestion = crate::suggest::closest(&compact, TYPE_NAMES.iter().copied())
                    .map(|s| format!(" (did you mean `{}`?)", s.trim_end_matches(['<', '['])))
                    .unwrap_or_default();
                Err(format!(
                    "expected a feature type (int32, int64, float32, float64, string, bytes, bool, \
                     timestamp[unit, tz], datetime64[ns], list<T>, embedding[N]), found `{found}`{suggestion}"
                ))
            }
        }
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

/// How deeply `list<...>` may nest: the limit docs/schema-format.md promises for every
/// nested structure. Checked before recursing, so a hostile type string cannot exhaust
/// the stack.
pub const MAX_TYPE_DEPTH: usize = 32;

enum ParseError {
    Syntax,
    TooDeep,
    TimeZone(String),
    Dimension(String),
}

/// Whether Arrow readers accept `tz`: an IANA name of the tz database Arrow itself reads
/// them with (`chrono-tz`, exact spelling) or a fixed offset
/// `+HH:MM`, `-HH:MM`, `+HHMM`, `+HH` with hours ≤ 23 and minutes ≤ 59.
pub fn valid_time_zone(tz: &str) -> bool {
    if chrono_tz::Tz::from_str(tz).is_ok() {
        return true;
    }
    let Some(rest) = tz.strip_prefix(['+', '-']) else {
        return false;
    };
    let digits: String = match rest.len() {
        2 | 4 if rest.bytes().all(|b| b.is_ascii_digit()) => rest.to_string(),
        5 if rest.as_bytes()[2] == b':' => rest.replacen(':', "", 1),
        _ => return false,
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let hours: u32 = digits[..2].parse().unwrap_or(99);
    let minutes: u32 = match &digits[2..] {
        "" => 0,
        rest => rest.parse().unwrap_or(99),
    };
    hours <= 23 && minutes <= 59
}

fn suggest_time_zone(tz: &str) -> String {
    crate::suggest::closest(tz, chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name()))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

fn parse_compact(text: &str, depth: usize) -> Result<FeatureType, ParseError> {
    if depth > MAX_TYPE_DEPTH {
        return Err(ParseError::TooDeep);
    }
    Ok(match text {
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
                return Ok(FeatureType::List(Box::new(parse_compact(
                    inner,
                    depth + 1,
                )?)));
            }
            if let Some(args) = text
                .strip_prefix("timestamp[")
                .and_then(|t| t.strip_suffix(']'))
            {
                let mut parts = args.splitn(2, ',');
                let unit = TimeUnit::parse(parts.next().unwrap_or("")).ok_or(ParseError::Syntax)?;
                let tz = match parts.next() {
                    Some(tz) if !tz.is_empty() => {
                        if !valid_time_zone(tz) {
                            return Err(ParseError::TimeZone(tz.to_string()));
                        }
                        Some(tz.to_string())
                    }
                    Some(_) => return Err(ParseError::Syntax),
                    None => None,
                };
                return Ok(FeatureType::Timestamp { unit, tz });
            }
            if let Some(args) = text
                .strip_prefix("embedding[")
                .and_then(|t| t.strip_suffix(']'))
            {
                let mut parts = args.splitn(2, ',');
                let dim_text = parts.next().unwrap_or("");
                if dim_text.is_empty() || !dim_text.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ParseError::Syntax);
                }
                let dim: u32 = dim_text
                    .parse()
                    .ok()
                    .filter(|d| *d > 0)
                    .ok_or_else(|| ParseError::Dimension(dim_text.to_string()))?;
                let element = match parts.next() {
                    None | Some("float32") => FeatureType::Float32,
                    Some("float64") => FeatureType::Float64,
                    Some(_) => return Err(ParseError::Syntax),
                };
                return Ok(FeatureType::Embedding {
                    dim,
                    element: Box::new(element),
                });
            }
            return Err(ParseError::Syntax);
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
    /// Loses or changes values; the reason when there is more to say than "different
    /// types" (truncation, range, time zone), else empty.
    Incompatible(String),
}

/// How `declared` (what the schema file says) relates to `actual` (what the store has, or
/// a later revision). `Compatible` means every value of `declared` converts to `actual`
/// without loss: same instant, same precision, in range. It covers integer and float
/// widening, a timestamp moving to a coarser-or-equal range with a finer-or-equal
/// precision (`s` → `ms` → `us`; never into `ns`, whose range ends in 1677 and 2262),
/// the same instant shown in another time zone, and a fixed-size embedding stored as a
/// variable-length list. Everything else is `Incompatible`: truncation (`ns` → `us`),
/// range loss (into `ns`), a naive timestamp against a zoned one (the instant changes),
/// narrowing, integer against float.
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
        (T::Datetime64Ns, T::Timestamp { .. })
        | (T::Timestamp { .. }, T::Datetime64Ns)
        | (T::Timestamp { .. }, T::Timestamp { .. }) => compare_timestamps(declared, actual),
        (T::Embedding { element, dim }, T::List(item)) if element == item => TypeMatch::Compatible(format!(
            "the store keeps a variable-length list<{item}>; the schema fixes the dimension at {dim}"
        )),
        (T::List(a), T::List(b)) => match compare(a, b) {
            TypeMatch::Exact => TypeMatch::Exact,
            TypeMatch::Compatible(why) => TypeMatch::Compatible(format!("list items: {why}")),
            // An incompatible item says why only when there is more to say than its type.
            TypeMatch::Incompatible(why) if why.is_empty() => {
                TypeMatch::Incompatible(format!("the list items differ in type ({a} and {b})"))
            }
            TypeMatch::Incompatible(why) => TypeMatch::Incompatible(format!("list items: {why}")),
        },
        _ => TypeMatch::Incompatible(String::new()),
    }
}

/// Whether values of the data type `actual` are values of the kind `declared` calls for,
/// whatever their width or unit: numbers for a number, text for a string, instants for a
/// zoned timestamp and wall-clock times for a naive one. Values of another kind (text for
/// a float, integers for a time, a naive time for a zoned one) compared with the declared
/// kind's values would be compared converted or shifted: drift and skew refuse them.
/// Lists, embeddings and types without an equivalent are not judged here.
pub fn same_kind(declared: &FeatureType, actual: &FeatureType) -> bool {
    use FeatureType as T;
    #[derive(PartialEq)]
    enum Kind {
        Number,
        Text,
        Bytes,
        Bool,
        Time { naive: bool },
        Unjudged,
    }
    let kind = |t: &FeatureType| match t {
        T::Int32 | T::Int64 | T::Float32 | T::Float64 => Kind::Number,
        T::String => Kind::Text,
        T::Bytes => Kind::Bytes,
        T::Bool => Kind::Bool,
        T::Timestamp { tz, .. } => Kind::Time {
            naive: tz.is_none(),
        },
        T::Datetime64Ns => Kind::Time { naive: true },
        T::List(_) | T::Embedding { .. } | T::Other(_) => Kind::Unjudged,
    };
    let (a, b) = (kind(declared), kind(actual));
    a == Kind::Unjudged || b == Kind::Unjudged || a == b
}

/// (unit, time zone) of a timestamp type.
fn timestamp_parts(ty: &FeatureType) -> Option<(TimeUnit, Option<&str>)> {
    match ty {
        FeatureType::Timestamp { unit, tz } => Some((*unit, tz.as_deref())),
        FeatureType::Datetime64Ns => Some((TimeUnit::Nanosecond, None)),
        _ => None,
    }
}

fn compare_timestamps(declared: &FeatureType, actual: &FeatureType) -> TypeMatch {
    let (Some((u1, tz1)), Some((u2, tz2))) = (timestamp_parts(declared), timestamp_parts(actual))
    else {
        return TypeMatch::Incompatible(String::new());
    };
    let mut lossy = Vec::new();
    let mut lossless = Vec::new();
    if u1 > u2 {
        lossy.push(format!(
            "{declared} holds {} precision and {actual} only {}: values are truncated",
            u1.as_str(),
            u2.as_str()
        ));
    } else if u1 < u2 && u2 == TimeUnit::Nanosecond {
        lossy.push(format!(
            "{actual} counts nanoseconds in 64 bits and ends in 1677 and 2262; {declared} values \
             outside that range (e.g. 9999-12-31 sentinels) do not convert"
        ));
    } else if u1 < u2 {
        lossless.push(format!("unit {} widens to {}", u1.as_str(), u2.as_str()));
    }
    match (tz1, tz2) {
        (None, Some(tz)) | (Some(tz), None) => lossy.push(format!(
            "one is naive (wall-clock time) and the other is an instant in {tz}: reading one as \
             the other shifts every value by the time-zone offset"
        )),
        (Some(a), Some(b)) if a != b => lossless.push(format!(
            "time zone {a} vs {b}: the same instants, displayed in another zone"
        )),
        _ => {}
    }
    if !lossy.is_empty() {
        return TypeMatch::Incompatible(lossy.join("; "));
    }
    if lossless.is_empty() {
        // datetime64[ns] against timestamp[ns]: the same Arrow type under two names.
        return TypeMatch::Compatible(format!(
            "{declared} and {actual} are the same Arrow type (naive nanoseconds)"
        ));
    }
    TypeMatch::Compatible(format!("both are timestamps; {}", lossless.join(", ")))
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    #[test]
    fn kinds_are_families_of_types() {
        let zoned = |unit| FeatureType::Timestamp {
            unit,
            tz: Some("UTC".into()),
        };
        let naive = FeatureType::Timestamp {
            unit: TimeUnit::Microsecond,
            tz: None,
        };
        use FeatureType as T;
        for (declared, actual, same) in [
            (T::Float64, T::Int32, true),
            (T::Int64, T::Float32, true),
            (T::Float64, T::String, false),
            (T::Int64, T::Bool, false),
            (T::String, T::Int64, false),
            (T::Int64, zoned(TimeUnit::Nanosecond), false),
            (
                zoned(TimeUnit::Microsecond),
                zoned(TimeUnit::Nanosecond),
                true,
            ),
            (zoned(TimeUnit::Microsecond), naive.clone(), false),
            (T::Datetime64Ns, naive.clone(), true),
            (zoned(TimeUnit::Second), T::Int64, false),
            (T::List(Box::new(T::Float64)), T::String, true),
        ] {
            assert_eq!(same_kind(&declared, &actual), same, "{declared} / {actual}");
        }
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
        let incompatible =
            |a: &str, b: &str| matches!(compare(&t(a), &t(b)), TypeMatch::Incompatible(_));
        let compatible =
            |a: &str, b: &str| matches!(compare(&t(a), &t(b)), TypeMatch::Compatible(_));
        assert_eq!(compare(&t("int64"), &t("int64")), TypeMatch::Exact);
        assert!(compatible("int32", "int64"));
        assert!(incompatible("int64", "int32"));
        assert!(incompatible("int64", "float64"));
        assert!(compatible("embedding[8]", "list<float32>"));
        assert!(incompatible("embedding[8]", "list<float64>"));
        assert!(incompatible("list<float32>", "embedding[8]"));
        assert!(matches!(
            compare(&t("string"), &FeatureType::Other("JSON".into())),
            TypeMatch::Incompatible(_)
        ));
    }

    /// Every verdict of `compare` that says "compatible" must be lossless from declared
    /// to actual: no truncation, no range loss, no change of instant.
    #[test]
    fn lossy_timestamp_conversions_are_not_compatible() {
        let t = |s: &str| FeatureType::parse(s).unwrap();
        let verdict = |a: &str, b: &str| compare(&t(a), &t(b));
        // The issue's example: naive nanoseconds against Feast's timestamp[us, UTC].
        for (declared, actual) in [
            ("timestamp[ns]", "timestamp[us, UTC]"),
            ("datetime64[ns]", "timestamp"),
            ("timestamp[ns, UTC]", "timestamp[us, UTC]"), // truncation
            ("timestamp[us, UTC]", "timestamp[ms, UTC]"),
            ("timestamp[ms]", "timestamp[s]"),
            ("timestamp[us, UTC]", "timestamp[ns, UTC]"), // range: 1677-2262
            ("timestamp[s]", "datetime64[ns]"),
            ("timestamp[us]", "timestamp[us, UTC]"), // naive vs instant
            ("timestamp[us, Europe/Paris]", "timestamp[us]"),
            ("datetime64[ns]", "timestamp[ns, UTC]"),
            ("list<timestamp[ns]>", "list<timestamp[us]>"),
        ] {
            match verdict(declared, actual) {
                TypeMatch::Incompatible(why) => assert!(!why.is_empty(), "{declared} {actual}"),
                other => panic!("{declared} against {actual}: {other:?}"),
            }
        }
        for (declared, actual) in [
            ("timestamp[s, UTC]", "timestamp[us, UTC]"),
            ("timestamp[ms]", "timestamp[us]"),
            ("timestamp[us, Europe/Paris]", "timestamp[us, UTC]"),
            ("datetime64[ns]", "timestamp[ns]"),
            ("timestamp[ns]", "datetime64[ns]"),
            ("list<timestamp[ms, UTC]>", "list<timestamp[us, UTC]>"),
        ] {
            assert!(
                matches!(verdict(declared, actual), TypeMatch::Compatible(_)),
                "{declared} against {actual}: {:?}",
                verdict(declared, actual)
            );
        }
    }

    /// Exhaustive over a grid of types: when both directions are "compatible" the types
    /// must be the same Arrow type; a compatible verdict never goes to a narrower integer,
    /// a narrower float, a coarser unit, or between naive and zoned.
    #[test]
    fn compatible_verdicts_are_one_way_widenings() {
        let names = [
            "int32",
            "int64",
            "float32",
            "float64",
            "string",
            "bytes",
            "bool",
            "timestamp[s]",
            "timestamp[ms]",
            "timestamp[us]",
            "timestamp[ns]",
            "timestamp[s, UTC]",
            "timestamp[ms, UTC]",
            "timestamp[us, UTC]",
            "timestamp[ns, UTC]",
            "timestamp[us, Asia/Tokyo]",
            "datetime64[ns]",
            "embedding[4]",
            "embedding[4, float64]",
            "list<float32>",
            "list<float64>",
            "list<int32>",
            "list<int64>",
        ];
        for a in names {
            for b in names {
                let (ta, tb) = (
                    FeatureType::parse(a).unwrap(),
                    FeatureType::parse(b).unwrap(),
                );
                if let TypeMatch::Compatible(_) = compare(&ta, &tb) {
                    if let TypeMatch::Compatible(_) = compare(&tb, &ta) {
                        assert_eq!(
                            ta.arrow_type().replace("\"Asia/Tokyo\"", "\"UTC\""),
                            tb.arrow_type().replace("\"Asia/Tokyo\"", "\"UTC\""),
                            "{a} <-> {b}"
                        );
                    }
                    if let (Some((u1, z1)), Some((u2, z2))) =
                        (timestamp_parts(&ta), timestamp_parts(&tb))
                    {
                        assert!(
                            u1 <= u2 && (u2 != TimeUnit::Nanosecond || u1 == u2),
                            "{a} -> {b}"
                        );
                        assert_eq!(z1.is_some(), z2.is_some(), "{a} -> {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn time_zones_must_exist() {
        for good in [
            "timestamp[us, UTC]",
            "timestamp[ms, America/New_York]",
            "timestamp[s, +05:30]",
            "timestamp[ns, -0800]",
            "timestamp[us, +01]",
            "timestamp[us, Etc/GMT+5]",
            "timestamp[us, US/Pacific]",
        ] {
            assert!(FeatureType::parse(good).is_ok(), "{good}");
        }
        let error = FeatureType::parse("timestamp[us, Mars/Olympus]").unwrap_err();
        assert!(
            error.contains("unknown time zone `Mars/Olympus`"),
            "{error}"
        );
        let error = FeatureType::parse("timestamp[us, Europe/Pariss]").unwrap_err();
        assert!(error.contains("did you mean `Europe/Paris`?"), "{error}");
        for bad in [
            "timestamp[us, utc]",
            "timestamp[us, +25:00]",
            "timestamp[us, +05:61]",
            "timestamp[us, +5]",
            "timestamp[us, UTC\u{1b}]",
            "timestamp[us, ../../etc]",
        ] {
            assert!(FeatureType::parse(bad).is_err(), "{bad}");
        }
        // Links and old names are zones too; IANA names are spelt exactly.
        for good in [
            "timestamp[us, US/Pacific]",
            "timestamp[us, Etc/GMT+5]",
            "timestamp[ns, Asia/Kolkata]",
        ] {
            assert!(FeatureType::parse(good).is_ok(), "{good}");
        }
        let error = FeatureType::parse("timestamp[us, America/Sao_Paolo]").unwrap_err();
        assert!(
            error.contains("did you mean `America/Sao_Paulo`?"),
            "{error}"
        );
    }

    #[test]
    fn nesting_is_limited_before_recursing() {
        let nested = |depth: usize| format!("{}int64{}", "list<".repeat(depth), ">".repeat(depth));
        assert!(FeatureType::parse(&nested(MAX_TYPE_DEPTH)).is_ok());
        let error = FeatureType::parse(&nested(MAX_TYPE_DEPTH + 1)).unwrap_err();
        assert!(error.contains("deeper than 32 levels"), "{error}");
        // Thousands deep: a clean error, not a stack overflow; the type is quoted short.
        let error = FeatureType::parse(&nested(100_000)).unwrap_err();
        assert!(error.len() < 400, "{error}");
    }

    #[test]
    fn embedding_dimensions_out_of_range_are_named() {
        let error = FeatureType::parse("embedding[99999999999999999999]").unwrap_err();
        assert!(
            error.contains("embedding dimension `99999999999999999999`"),
            "{error}"
        );
        assert!(FeatureType::parse("embedding[4294967295]").is_ok());
        assert!(FeatureType::parse("embedding[4294967296]").is_err());
        assert!(FeatureType::parse("embedding[-1]").is_err());
        assert!(FeatureType::parse("embedding[+1]").is_err());
    }
}
