//! YAML parsing into a tree that remembers where every node came from.
//!
//! Findings must point at `file:line:column`, so schema files are parsed into [`Node`]s
//! that carry their location (through serde-saphyr's `Spanned`). The tree converts to a
//! `serde_json::Value` for JSON Schema validation, and a JSON pointer into that value
//! leads back to the node (see [`Node::locate`]).
//!
//! Parsing is bounded: aliases, depth and node counts have budgets, so an alias bomb or
//! a deeply nested file is an error, not an out-of-memory.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Budget, DuplicateKeyPolicy, Options, Spanned};

/// A 1-based line and column in a source file. `line == 0` means "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Pos {
    pub line: u64,
    pub column: u64,
}

impl Pos {
    pub const UNKNOWN: Pos = Pos { line: 0, column: 0 };

    pub fn new(line: u64, column: u64) -> Self {
        Pos { line, column }
    }

    pub fn is_known(&self) -> bool {
        self.line > 0
    }

    fn from_saphyr(location: serde_saphyr::Location) -> Self {
        Pos::new(location.line(), location.column())
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: NodeValue,
    pub pos: Pos,
    /// Bytes of the source the node was read from (`start..end`), where known: a `#`
    /// inside a string's bytes is text, not a comment.
    pub bytes: Option<std::ops::Range<usize>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys keep their own position, for "unknown key" findings.
    Map(Vec<(MapKey, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapKey {
    pub name: String,
    pub pos: Pos,
    /// As [`Node::bytes`].
    pub bytes: Option<std::ops::Range<usize>>,
}

/// A YAML document that could not be read, with the position serde-saphyr reported.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub kind: YamlErrorKind,
    pub pos: Pos,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YamlErrorKind {
    Syntax,
    DuplicateKey,
    /// A budget was exceeded: alias expansion, depth, node count.
    Limits,
}

/// Budgets for schema files. A feature view is a few hundred nodes nested a few levels
/// deep; these leave a wide margin while stopping alias bombs within milliseconds.
fn schema_file_options() -> Options {
    let mut budget = Budget::default();
    budget.max_depth = 32;
    budget.max_nodes = 200_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_documents = 1;
    let mut options = Options::default();
    options.budget = Some(budget);
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.alias_limits.max_total_replayed_events = 100_000;
    options.with_snippet = false;
    options
}

/// The budget `error` breached, looking through the wrappers serde-saphyr puts around it.
fn budget_breach(error: &serde_saphyr::Error) -> Option<&serde_saphyr::budget::BudgetBreach> {
    let mut current: &(dyn std::error::Error + 'static) = error;
    loop {
        if let Some(serde_saphyr::Error::Budget { breach, .. }) =
            current.downcast_ref::<serde_saphyr::Error>()
        {
            return Some(breach);
        }
        current = current.source()?;
    }
}

/// What a breached budget means, in words (serde-saphyr's own message is its `Debug`).
fn describe_breach(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    match breach {
        B::Depth { .. } => "it nests deeper than 32 levels".into(),
        B::Documents { .. } => {
            "it holds more than one YAML document (`---`); a schema file declares one feature view"
                .into()
        }
        B::Aliases { .. } => "it uses more than 1000 aliases (`*name`)".into(),
        B::Anchors { .. } => "it defines more than 1000 anchors (`&name`)".into(),
        B::AliasAnchorRatio { .. } => {
            "it uses far more aliases than anchors (an alias-expansion bomb)".into()
        }
        B::Nodes { .. } => "it has more than 200000 nodes".into(),
        B::SequenceUnbalanced => "its structure is unbalanced (truncated input)".into(),
        _ => "it exceeds a parsing budget (events, scalar bytes or merge keys)".into(),
    }
}

thread_local! {
    /// Where the visitor found a duplicate key that serde-saphyr let through.
    static DUPLICATE_AT: std::cell::Cell<Option<Pos>> = const { std::cell::Cell::new(None) };
}

/// Parses one YAML document. An empty document (only comments or whitespace) is `Null`.
/// Error messages are one clean line (no Rust type names), with the location apart.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    DUPLICATE_AT.with(|at| at.set(None));
    serde_saphyr::from_str_with_options::<Node>(text, schema_file_options()).map_err(|error| {
        let pos = DUPLICATE_AT
            .with(|at| at.take())
            .or_else(|| error.location().map(Pos::from_saphyr))
            .unwrap_or(Pos::UNKNOWN);
        let message = first_line(&error.to_string());
        let lower = message.to_ascii_lowercase();
        let breach = budget_breach(&error);
        let kind = if breach.is_some() {
            YamlErrorKind::Limits
        } else if lower.contains("duplicate") {
            YamlErrorKind::DuplicateKey
        } else if lower.contains("budget")
            || lower.contains("limit")
            || lower.contains("alias")
            || lower.contains("depth")
        {
            YamlErrorKind::Limits
        } else {
            YamlErrorKind::Syntax
        };
        let message = match kind {
            YamlErrorKind::DuplicateKey => match message.strip_prefix("duplicate mapping key: ") {
                Some(rest) => {
                    let key = rest
                        .split(", set DuplicateKeyPolicy")
                        .next()
                        .unwrap_or(rest);
                    format!(
                        "duplicate key `{}`; a key may appear once per mapping",
                        crate::text::quote_hashed(key, 80)
                    )
                }
                None => message,
            },
            YamlErrorKind::Limits => {
                let why = match breach {
                    Some(breach) => describe_breach(breach),
                    None if lower.contains("replay") => {
                        "its aliases expand to more than 100000 nodes (an alias-expansion bomb)"
                            .into()
                    }
                    None if lower.contains("depth") || lower.contains("recursion") => {
                        "it nests deeper than 32 levels".into()
                    }
                    None => "it exceeds a parsing limit".into(),
                };
                format!(
                    "the document is refused: {why}; schema files are limited to 32 levels of \
                     nesting, 1000 aliases and 100000 alias-expanded nodes"
                )
            }
            // serde-saphyr's wording names its own configuration, not the file's problem.
            YamlErrorKind::Syntax if message.contains("rejected by the configured policy") => {
                let value = message
                    .split('`')
                    .nth(1)
                    .map_or_else(String::new, |v| format!(" `{}`", crate::text::short(v)));
                format!(
                    "expected a finite number, found{value}: infinity and NaN are not accepted in schema files"
                )
            }
            YamlErrorKind::Syntax => message,
        };
        YamlError {
            kind,
            pos,
            // The parser's message may quote the document: cut as well as escaped.
            message: crate::text::quote_hashed(&message, 500),
        }
    })
}

/// serde-saphyr's messages may end with a location or a snippet; keep one clean line
/// without a trailing "at line X column Y" (we print the location ourselves).
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    let line = match line.find(" at line ") {
        Some(index) => &line[..index],
        None => line,
    };
    line.trim_end_matches('.').to_string()
}

impl Node {
    /// The JSON value of this tree, for JSON Schema validation and typed decoding.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Int(i) => Value::from(*i),
            NodeValue::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
            }
            NodeValue::Str(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.name.clone(), value.to_json()))
                    .collect(),
            ),
        }
    }

    /// The node a JSON pointer (RFC 6901, as jsonschema reports instance paths) names.
    pub fn get(&self, pointer: &str) -> Option<&Node> {
        let mut node = self;
        for token in pointer_tokens(pointer) {
            node = match &node.value {
                NodeValue::Map(entries) => &entries.iter().find(|(key, _)| key.name == token)?.1,
                NodeValue::Seq(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Where the node at `pointer` starts; the nearest existing ancestor if the pointer
    /// names something absent (a missing required key is reported at its parent).
    pub fn locate(&self, pointer: &str) -> Pos {
        let mut node = self;
        for token in pointer_tokens(pointer) {
            let next = match &node.value {
                NodeValue::Map(entries) => entries
                    .iter()
                    .find(|(key, _)| key.name == token)
                    .map(|e| &e.1),
                NodeValue::Seq(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            match next {
                Some(child) => node = child,
                None => break,
            }
        }
        node.pos
    }

    /// Where a key of the map at `pointer` is written (for unknown-key findings).
    pub fn locate_key(&self, pointer: &str, key: &str) -> Pos {
        match self.get(pointer).map(|node| &node.value) {
            Some(NodeValue::Map(entries)) => entries
                .iter()
                .find(|(k, _)| k.name == key)
                .map_or_else(|| self.locate(pointer), |(k, _)| k.pos),
            _ => self.locate(pointer),
        }
    }
}

fn pointer_tokens(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
}

/// The byte range a location covers in the source text, when serde-saphyr knows it.
fn source_bytes(location: &serde_saphyr::Location) -> Option<std::ops::Range<usize>> {
    let span = location.span();
    let start = usize::try_from(span.byte_offset()?).ok()?;
    let len = usize::try_from(span.byte_len()?).ok()?;
    Some(start..start.checked_add(len)?)
}

impl Node {
    /// The byte ranges of every string scalar and key below this node, in no order.
    pub fn string_bytes(&self, out: &mut Vec<std::ops::Range<usize>>) {
        match &self.value {
            NodeValue::Str(_) => out.extend(self.bytes.clone()),
            NodeValue::Seq(items) => items.iter().for_each(|item| item.string_bytes(out)),
            NodeValue::Map(entries) => {
                for (key, value) in entries {
                    out.extend(key.bytes.clone());
                    value.string_bytes(out);
                }
            }
            _ => {}
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<NodeValue>::deserialize(deserializer)?;
        Ok(Node {
            bytes: source_bytes(&spanned.referenced),
            value: spanned.value,
            pos: Pos::from_saphyr(spanned.referenced),
        })
    }
}

impl<'de> Deserialize<'de> for NodeValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = NodeValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<NodeValue, D::Error> {
        NodeValue::deserialize(deserializer)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<NodeValue, E> {
        Ok(NodeValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<NodeValue, E> {
        Ok(NodeValue::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<NodeValue, E> {
        Ok(i64::try_from(v).map_or(NodeValue::Float(v as f64), NodeValue::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<NodeValue, E> {
        Ok(i64::try_from(v).map_or(NodeValue::Float(v as f64), NodeValue::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<NodeValue, E> {
        Ok(i64::try_from(v).map_or(NodeValue::Float(v as f64), NodeValue::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NodeValue, E> {
        Ok(NodeValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<NodeValue, E> {
        Ok(NodeValue::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<NodeValue, E> {
        Ok(NodeValue::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<NodeValue, E> {
        Ok(NodeValue::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(NodeValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeValue, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1024));
        // serde-saphyr refuses duplicate keys, but not when one of them carries a tag
        // (`!x ttl: 2d` after `ttl: 1d`), and then the last one would win: refused here
        // by name, whatever the spelling.
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<Spanned<KeyName>>()? {
            let key = Spanned::new(key.value.0, key.referenced, key.defined);
            if !seen.insert(key.value.clone()) {
                // A custom error carries no location: `parse` takes it from here.
                DUPLICATE_AT.with(|at| at.set(Some(Pos::from_saphyr(key.referenced))));
                return Err(de::Error::custom(format!(
                    "duplicate mapping key: {}",
                    crate::text::short(&key.value)
                )));
            }
            let value = map.next_value::<Node>()?;
            entries.push((
                MapKey {
                    name: key.value,
                    bytes: source_bytes(&key.referenced),
                    pos: Pos::from_saphyr(key.referenced),
                },
                value,
            ));
        }
        Ok(NodeValue::Map(entries))
    }
}

/// A mapping key: a string, or a clear error naming what was found instead (serde's own
/// message for a null key spoke of Rust's `Option<String>`).
struct KeyName(String);

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = KeyName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<KeyName, E> {
                Ok(KeyName(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyName, E> {
                Err(E::custom(
                    "a mapping key is null (`~` or empty); expected a name",
                ))
            }
            fn visit_none<E: de::Error>(self) -> Result<KeyName, E> {
                self.visit_unit()
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<KeyName, D::Error> {
                // Not null: the key's own text, as YAML wrote it (`010` stays `010`).
                d.deserialize_str(self)
            }
        }
        deserializer.deserialize_option(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_are_not_names_say_so_in_words() {
        for (text, said) in [
            ("name: a_v1\n~: x\n", "a mapping key is null"),
            ("[a, b]: x\n", "expected string scalar"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.message.contains(said), "{text:?}: {error:?}");
            assert!(!error.message.contains("Option"), "{error:?}");
        }
    }

    #[test]
    fn tagged_duplicate_keys_are_refused_too() {
        let error = parse("ttl: 1d\n!foo ttl: 2d\n").unwrap_err();
        assert_eq!(error.kind, YamlErrorKind::DuplicateKey, "{error:?}");
        assert!(error.message.contains("`ttl`"), "{error:?}");
        assert_eq!(error.pos.line, 2, "{error:?}");
    }

    #[test]
    fn strings_know_their_bytes() {
        let text =
            "a: 'x # y'\nb: \"p\n  # q\"\nc: |\n  r # s\n  t\nd: plain # comment\n'k # e': 1\n";
        let root = parse(text).unwrap();
        let mut ranges = Vec::new();
        root.string_bytes(&mut ranges);
        let inside = |needle: &str| {
            let at = text.find(needle).unwrap();
            ranges.iter().any(|r| r.contains(&at))
        };
        for hash in ["# y", "# q", "# s", "# e"] {
            assert!(inside(hash), "{hash}: {ranges:?}");
        }
        assert!(!inside("# comment"), "{ranges:?}");
    }

    #[test]
    fn nodes_remember_line_and_column() {
        let text = "name: driver_stats\nfeatures:\n  - name: conv_rate\n    type: float32\n";
        let root = parse(text).unwrap();
        assert_eq!(root.locate("/name"), Pos::new(1, 7));
        assert_eq!(root.locate("/features/0/type"), Pos::new(4, 11));
        assert_eq!(root.locate_key("/features/0", "type"), Pos::new(4, 5));
        // A missing key is reported where its parent starts.
        assert_eq!(root.locate("/features/0/nullable"), Pos::new(3, 5));
        assert_eq!(
            root.to_json(),
            serde_json::json!({"name": "driver_stats", "features": [{"name": "conv_rate", "type": "float32"}]})
        );
    }

    #[test]
    fn scalars_keep_their_yaml_types() {
        let root = parse("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\n").unwrap();
        assert_eq!(
            root.to_json(),
            serde_json::json!({"a": 1, "b": 1.5, "c": true, "d": null, "e": "1"})
        );
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(parse("# only a comment\n").unwrap().value, NodeValue::Null);
        assert_eq!(parse("").unwrap().value, NodeValue::Null);
    }

    #[test]
    fn duplicate_keys_are_errors_with_a_location() {
        let error = parse("name: a\nowner: b\nname: c\n").unwrap_err();
        assert_eq!(error.kind, YamlErrorKind::DuplicateKey, "{error:?}");
        assert_eq!(error.pos.line, 3, "{error:?}");
    }

    #[test]
    fn syntax_errors_have_a_location() {
        let error = parse("name: a\nfeatures: [1, 2\nowner: x\n").unwrap_err();
        assert_eq!(error.kind, YamlErrorKind::Syntax, "{error:?}");
        assert!(error.pos.is_known(), "{error:?}");
    }

    #[test]
    fn alias_bomb_is_stopped() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let error = parse(&text).unwrap_err();
        assert_eq!(error.kind, YamlErrorKind::Limits, "{error:?}");
    }

    /// Budget breaches are explained in words, never as serde-saphyr's Debug output.
    #[test]
    fn limit_messages_show_no_internals() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{p}"); 10].join(", ")
            ));
        }
        let many_aliases = format!("a: &a x\nb: [{}]\n", vec!["*a"; 2000].join(", "));
        for text in [
            "a: 1\n---\nb: 2\n".to_string(),
            format!("{}1{}", "[".repeat(40), "]".repeat(40)),
            format!("{}1{}", "{a: ".repeat(40), "}".repeat(40)),
            bomb,
            many_aliases,
        ] {
            let error = parse(&text).unwrap_err();
            assert_eq!(error.kind, YamlErrorKind::Limits, "{error:?}");
            for internal in ["{", "}", "Documents", "Depth", "Budget", "breach", "_"] {
                assert!(
                    !error.message.contains(internal),
                    "{internal}: {}",
                    error.message
                );
            }
        }
        let error = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(
            error.message.contains("more than one YAML document"),
            "{}",
            error.message
        );
        let error = parse(&format!("{}1{}", "[".repeat(40), "]".repeat(40))).unwrap_err();
        assert!(
            error.message.contains("deeper than 32 levels"),
            "{}",
            error.message
        );
    }

    #[test]
    fn deep_nesting_is_stopped() {
        let text = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let error = parse(&text).unwrap_err();
        assert_eq!(error.kind, YamlErrorKind::Limits, "{error:?}");
        let text = (0..200)
            .map(|depth| format!("{}k{depth}:\n", "  ".repeat(depth)))
            .collect::<String>();
        assert_eq!(parse(&text).unwrap_err().kind, YamlErrorKind::Limits);
    }
}
