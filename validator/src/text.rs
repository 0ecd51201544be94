//! Text that came from a file, made safe to print: the escaping and quoting of
//! [`arrowfeat_common`], shared with the kernels, the CLI and the Python package, and how
//! the validator's messages show values ([`short`], [`list`]). Every renderer runs its
//! input through [`escape_controls`] (see `output::render`).
//!
//! What a finding shows is also its identity (a baseline fingerprints it), so the
//! validator cuts values with [`quote_hashed`]: values that differ after the cut read
//! differently.

pub use arrowfeat_common::{
    cap, clean, escape_controls, is_unsafe_char, quote, quote_hashed, value_hash,
};

/// A serde error message in plain words, naming `field`: `invalid type: string "1",
/// expected u32` becomes ``format_version`: expected a whole number (0 or more), found
/// the string "1"``. Messages of another shape are returned as they are.
pub fn plain_serde(message: &str, field: Option<&str>) -> String {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    let Some((found, expected)) = rest.and_then(|r| r.rsplit_once(", expected ")) else {
        return message.to_string();
    };
    let expected = match expected.trim() {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a sequence" => "a list".to_string(),
        "a map" => "a table (an object)".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        other => other.trim_start_matches("a string ").to_string(),
    };
    // The value between its backticks: `1e20` as i128 is the number 1e20.
    let value = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .map(|v| v.trim_start_matches('`').split('`').next().unwrap_or(v))
    };
    // An integer beyond i64 reaches serde as i128 (TOML integers stop at i64): written
    // with a fraction or an exponent, it is read as the float it is.
    let beyond_i64 = found.starts_with("integer ") && found.ends_with(" as i128");
    let found = if let Some(v) = found.strip_prefix("string ") {
        format!("the string {v}")
    } else if let (true, Some(v)) = (beyond_i64 && expected == "a number", value("integer ")) {
        format!("the whole number {v}, beyond the integers TOML holds: write it as {v}.0")
    } else if let Some(v) = value("integer ").or_else(|| value("floating point ")) {
        format!("the number {v}")
    } else if let Some(v) = value("boolean ") {
        v.to_string()
    } else {
        match found {
            "sequence" => "a list".to_string(),
            "map" => "a table (an object)".to_string(),
            "null" | "unit value" => "null".to_string(),
            other => other.to_string(),
        }
    };
    match field {
        Some(field) => format!("`{}`: expected {expected}, found {found}", short(field)),
        None => format!("expected {expected}, found {found}"),
    }
}

/// The key whose value ends at byte `offset` of a JSON or TOML text (`"key": value`,
/// `key = value`), for errors that only know a position.
pub fn key_before(text: &str, offset: usize) -> Option<String> {
    let head = text.get(..offset.min(text.len()))?;
    // TOML: the key on the value's own line.
    let line = head.rsplit('\n').next().unwrap_or(head);
    if let Some((key, _)) = line.split_once('=') {
        let key = key.trim().trim_matches('"');
        if !key.is_empty() && !key.contains(['{', '"', ',']) {
            return Some(key.to_string());
        }
    }
    // JSON: the last `"key":` before the value.
    let colon = head.rfind("\":")?;
    let start = head[..colon].rfind('"')?;
    Some(head[start + 1..colon].to_string())
}

/// How many characters of one value from a file a message shows (see [`short`]).
pub const MAX_SHOWN: usize = 100;

/// How many items of a list from a file a message shows (see [`list`]).
pub const MAX_LISTED: usize = 10;

/// A float as a message shows it: its shortest round-trip digits, with an exponent for
/// very large and small magnitudes, which would print hundreds of digits in full.
pub fn number(value: f64) -> String {
    if value != 0.0 && !(1e-6..1e16).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}

/// A value from a file (a name, a type, a version, a key) as a message shows it: escaped
/// and cut to [`MAX_SHOWN`] characters, so a megabyte-long name cannot flood a CI log
/// (with the hash of the whole value, see [`quote_hashed`]).
pub fn short(text: &str) -> String {
    quote_hashed(text, MAX_SHOWN)
}

/// Items from a file joined with `, `, each [`short`], at most [`MAX_LISTED`] of them
/// (then `… (N more)`): a list of thousands of names stays one readable line.
/// Like a cut value, a cut list ends with a hash of the whole list (see [`quote_hashed`]).
pub fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = Vec::new();
    let mut more = 0usize;
    let mut all: Vec<u8> = Vec::new();
    for item in items {
        all.extend(item.bytes().chain([0u8]));
        if out.len() < MAX_LISTED {
            out.push(short(item));
        } else {
            more += 1;
        }
    }
    let mut text = out.join(", ");
    if more > 0 {
        text.push_str(&format!(", … ({more} more, #{})", value_hash(all)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `quote` cut before escaping: 100 ESC characters became 600; a field cut at its
    /// end lost what the sentence was about.
    #[test]
    fn cuts_are_made_after_escaping() {
        let esc = "\u{1b}".repeat(1_000);
        let shown = short(&esc);
        // The value, `…`, and `(#` 8 hex digits `)`.
        assert!(shown.chars().count() <= MAX_SHOWN + 12, "{}", shown.len());
        assert!(shown.contains("\\u{1b}…(#"), "{shown}");
        let capped = cap(&format!("{esc} needs at least a patch version bump"), 4_000);
        assert!(
            capped.chars().count() <= 4_000,
            "{}",
            capped.chars().count()
        );
        assert!(
            capped.ends_with("needs at least a patch version bump"),
            "{capped}"
        );
        assert!(capped.starts_with("\\u{1b}") && capped.contains(" … "));
        // No escape is cut in half, at either side of the cut.
        for max in 10..40 {
            let capped = cap(&format!("a{esc}"), max);
            let without = capped.replace("\\u{1b}", "").replace(" … ", "");
            assert!(without == "a" || without.is_empty(), "{max}: {capped}");
            let quoted = quote_hashed(&format!("a{esc}"), max);
            let shown = quoted
                .split_once('…')
                .map_or(quoted.as_str(), |(shown, _)| shown);
            assert_eq!(shown.replace("\\u{1b}", ""), "a", "{max}: {quoted}");
        }
        assert_eq!(cap("short", 10), "short");
    }

    /// serde's wording (`expected u32`, `expected a sequence`) reached users.
    #[test]
    fn serde_errors_read_in_plain_words() {
        assert_eq!(
            plain_serde(
                "invalid type: string \"1\", expected u32",
                Some("format_version")
            ),
            "`format_version`: expected a whole number (0 or more), found the string \"1\""
        );
        assert_eq!(
            plain_serde(
                "invalid value: integer `-5`, expected u64",
                Some("ttl_seconds")
            ),
            "`ttl_seconds`: expected a whole number (0 or more), found the number -5"
        );
        assert_eq!(
            plain_serde(
                "invalid type: string \"legacy_*\", expected a sequence",
                Some("views")
            ),
            "`views`: expected a list, found the string \"legacy_*\""
        );
        assert_eq!(
            plain_serde(
                "invalid type: integer `3`, expected a map",
                Some("severity")
            ),
            "`severity`: expected a table (an object), found the number 3"
        );
        assert_eq!(plain_serde("missing field `x`", None), "missing field `x`");
        assert_eq!(
            plain_serde(
                "invalid type: integer `100000000000000000000` as i128, expected f64",
                Some("ks")
            ),
            "`ks`: expected a number, found the whole number 100000000000000000000, beyond the integers TOML holds: write it as 100000000000000000000.0"
        );
        assert_eq!(
            plain_serde(
                "invalid type: integer `100000000000000000000` as i128, expected u64",
                Some("count")
            ),
            "`count`: expected a whole number (0 or more), found the number 100000000000000000000"
        );
        assert_eq!(
            key_before("a = 1\nviews = \"x\"", 16).as_deref(),
            Some("views")
        );
        assert_eq!(
            key_before(r#"{"a": {"ttl_seconds": -5"#, 25).as_deref(),
            Some("ttl_seconds")
        );
    }

    #[test]
    fn values_and_lists_are_bounded() {
        let long = "A".repeat(1_000_000);
        let shown = short(&long);
        assert_eq!(shown.chars().count(), MAX_SHOWN + 12);
        assert!(shown.starts_with(&"A".repeat(MAX_SHOWN)));
        assert!(shown.ends_with(')') && shown.contains("…(#"), "{shown}");
        assert_eq!(short("a\u{1b}"), "a\\u{1b}");
        let names: Vec<String> = (0..25).map(|i| format!("n{i}")).collect();
        let listed = list(names.iter().map(String::as_str));
        assert!(listed.starts_with("n0, n1, "), "{listed}");
        assert!(listed.contains("n9, … (15 more, #"), "{listed}");
        assert_eq!(list(["a", "b"]), "a, b");
    }

    /// A baseline fingerprints what a finding shows: values that differ only after the
    /// cut (a join key of 100 `k` then `_a` or `_b`, an 11th tag) must show differently.
    #[test]
    fn values_differing_after_the_cut_show_differently() {
        let key = |end: &str| format!("{}{end}", "k".repeat(MAX_SHOWN));
        assert_ne!(short(&key("_a")), short(&key("_b")));
        assert_eq!(short(&key("_a")), short(&key("_a")));
        let tags = |last: &str| {
            let mut tags: Vec<String> = (0..MAX_LISTED).map(|i| format!("t{i}")).collect();
            tags.push(last.to_string());
            tags
        };
        let (a, b) = (tags("x"), tags("y"));
        assert_ne!(
            list(a.iter().map(String::as_str)),
            list(b.iter().map(String::as_str))
        );
    }
}
