//! Text that came from a file, made safe to print: see [`arrowfeat_text`], shared with
//! the kernels, the CLI and the Python package. Every renderer runs its input through
//! [`escape_controls`] (see `output::render`).

pub use arrowfeat_text::{clean, escape_controls, is_unsafe_char};

/// The `\\u{..}` escape of `escaped` that byte `at` falls strictly inside, if any, as
/// (start, end) byte indices.
fn escape_around(escaped: &str, at: usize) -> Option<(usize, usize)> {
    let mut search = 0;
    while let Some(found) = escaped[search..].find("\\u{") {
        let start = search + found;
        if start >= at {
            return None;
        }
        let end = escaped[start..]
            .find('}')
            .map_or(escaped.len(), |close| start + close + 1);
        if at < end {
            return Some((start, end));
        }
        search = end;
    }
    None
}

/// A cut at byte `at` moved back to the start of an escape it would split.
fn cut_before(escaped: &str, at: usize) -> usize {
    escape_around(escaped, at).map_or(at, |(start, _)| start)
}

/// The byte index after the first `chars` characters of `text`, if it is longer.
fn char_index(text: &str, chars: usize) -> Option<usize> {
    text.char_indices().nth(chars).map(|(i, _)| i)
}

/// A value from a file quoted in a message: escaped, then cut to `max` characters (then
/// `…`). Escaping first is what bounds the output: one ESC is six characters (`\u{1b}`),
/// so cutting before escaping let 100 characters become 600. An escape is never cut in
/// half.
///
/// A cut value ends with `…` and 8 hex digits of a hash of the whole value: two values
/// that differ only after the cut still read differently, so a baseline, which
/// fingerprints what a finding shows, never accepts one for the other.
pub fn quote(text: &str, max: usize) -> String {
    let escaped = escape_controls(text);
    match char_index(&escaped, max) {
        None => escaped.into_owned(),
        Some(at) => format!(
            "{}…(#{})",
            &escaped[..cut_before(&escaped, at)],
            whole_value_hash(text.bytes())
        ),
    }
}

/// 8 hex digits of FNV-1a 64 of `bytes`: stable across Rust versions and platforms.
fn whole_value_hash(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:08x}", hash >> 32)
}

/// A whole report field or message (which already quotes its values) escaped and cut to
/// `max` characters by leaving out its middle (` … `), so the end of the sentence (what
/// was expected, the bump it needs) survives a field full of long values.
pub fn cap(text: &str, max: usize) -> String {
    let escaped = escape_controls(text);
    let total = escaped.chars().count();
    if total <= max {
        return escaped.into_owned();
    }
    let keep = max.saturating_sub(3) / 2;
    let head_end = cut_before(
        &escaped,
        char_index(&escaped, keep).unwrap_or(escaped.len()),
    );
    // The tail starts after any escape it would begin inside of.
    let tail_start = char_index(&escaped, total - keep).unwrap_or(escaped.len());
    let tail_start = escape_around(&escaped, tail_start).map_or(tail_start, |(_, end)| end);
    format!("{} … {}", &escaped[..head_end], &escaped[tail_start..])
}

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
    let value = |prefix: &str| found.strip_prefix(prefix).map(|v| v.trim_matches('`'));
    let found = if let Some(v) = found.strip_prefix("string ") {
        format!("the string {v}")
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

/// A value from a file (a name, a type, a version, a key) as a message shows it: escaped
/// and cut to [`MAX_SHOWN`] characters, so a megabyte-long name cannot flood a CI log.
pub fn short(text: &str) -> String {
    quote(text, MAX_SHOWN)
}

/// Items from a file joined with `, `, each [`short`], at most [`MAX_LISTED`] of them
/// (then `… (N more)`): a list of thousands of names stays one readable line.
/// Like a cut value, a cut list ends with a hash of the whole list (see [`quote`]).
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
        text.push_str(&format!(", … ({more} more, #{})", whole_value_hash(all)));
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
            let quoted = quote(&format!("a{esc}"), max);
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
