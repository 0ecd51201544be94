//! Text that came from a file or from data, made safe to print.
//!
//! Schema files, registries, configuration and data files come from pull requests and
//! other teams. A string from them (a view name, a column name, a value, a path) may carry
//! terminal escape sequences (ESC, BEL, CR), other C0/C1 controls or Unicode bidirectional
//! overrides that make a CI log or a code review show something other than what is there,
//! or GitHub workflow commands that the runner would obey. Every message and report that
//! quotes such text runs it through [`escape_controls`] or [`quote`]: the validator's
//! renderers, kernel errors, the CLI and the Python package, one definition for all.

use std::borrow::Cow;

/// Characters that must never reach an output raw: C0 controls (tab and newline
/// included: report fields are single-line), DEL, C1 controls, the bidi embeddings,
/// overrides and isolates (U+202A-U+202E, U+2066-U+2069), the invisible direction marks
/// (U+061C, U+200E, U+200F), line/paragraph separators (U+2028, U+2029), the BOM
/// (U+FEFF) and the XML-illegal noncharacters U+FFFE and U+FFFF.
pub fn is_unsafe_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}' | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fffe}' | '\u{ffff}')
}

/// `text` with every [unsafe character](is_unsafe_char) replaced by a visible escape:
/// `\u{1b}` for ESC, `\u{202e}` for RIGHT-TO-LEFT OVERRIDE. GitHub's runner also reads
/// workflow commands out of a job's log: `::command::` where a line starts with it (after
/// spaces) and the older `##[command]` anywhere in a line. A string from a file may start
/// a printed line (a path does, in the text report), so a leading `::` becomes
/// `:\u{3a}` and every `##[` becomes `#\u{23}[`: shown, never obeyed. Borrowed when
/// nothing needed escaping.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let leading_command = text.trim_start().starts_with("::");
    if !leading_command && !text.contains("##[") && !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    // The escapes above hold no `#`, `[`, `:` or space, so these find only the text's
    // own (an escaped tab before `::` already keeps the line from starting with it).
    if out.trim_start().starts_with("::") {
        let second = out.len() - out.trim_start().len() + 1;
        out.replace_range(second..second + 1, "\\u{3a}");
    }
    if out.contains("##[") {
        out = out.replace("##[", "#\\u{23}[");
    }
    Cow::Owned(out)
}

/// Owned [`escape_controls`].
pub fn clean(text: &str) -> String {
    escape_controls(text).into_owned()
}

/// A value from a file or from data quoted in a message: escaped, then cut to its first
/// `max` characters (then `…`), so a hostile megabyte-long name does not flood the log.
///
/// Escaping first is what bounds the output: one ESC is six characters (`\u{1b}`), so
/// cutting before escaping let 100 characters become 600. An escape is never cut in half
/// (the cut moves back to its start).
///
/// Where what is shown is also an identity (a validator finding, which a baseline
/// fingerprints), use [`quote_hashed`], which tells apart values that differ after the cut.
pub fn quote(text: &str, max: usize) -> String {
    let escaped = escape_controls(text);
    match char_index(&escaped, max) {
        None => escaped.into_owned(),
        Some(at) => format!("{}…", &escaped[..cut_before(&escaped, at)]),
    }
}

/// [`quote`], and a cut value ends with `…` and `(#` 8 hex digits of a hash of the whole
/// value `)`: two values that differ only after the cut still read differently, so a
/// baseline, which fingerprints what a finding shows, never accepts one for the other.
pub fn quote_hashed(text: &str, max: usize) -> String {
    let escaped = escape_controls(text);
    match char_index(&escaped, max) {
        None => escaped.into_owned(),
        Some(at) => format!(
            "{}…(#{})",
            &escaped[..cut_before(&escaped, at)],
            value_hash(text.bytes())
        ),
    }
}

/// 8 hex digits of FNV-1a 64 of `bytes`: stable across Rust versions and platforms. What
/// [`quote_hashed`] appends to a cut value.
pub fn value_hash(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:08x}", hash >> 32)
}

/// A whole message (which already quotes its values) escaped and cut to `max` characters
/// by leaving out its middle (` … `), so the end of the sentence (what was expected, the
/// bump it needs) survives a message full of long values.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_are_escaped_visibly() {
        assert_eq!(escape_controls("plain name"), "plain name");
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("a\x1b[31mred\x07\r\n\t"),
            "a\\u{1b}[31mred\\u{7}\\u{d}\\u{a}\\u{9}"
        );
        assert_eq!(
            escape_controls("x\u{202e}y\u{2066}z"),
            "x\\u{202e}y\\u{2066}z"
        );
        assert_eq!(
            escape_controls("\u{85}\u{9b}\u{7f}"),
            "\\u{85}\\u{9b}\\u{7f}"
        );
        // Ordinary non-ASCII text stays as it is.
        assert_eq!(escape_controls("café → 東京 ✅"), "café → 東京 ✅");
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            assert!(is_unsafe_char(c), "{c:?}");
        }
    }

    #[test]
    fn workflow_commands_are_shown_not_obeyed() {
        assert_eq!(
            escape_controls("::error file=a,line=1::LGTM.yaml"),
            ":\\u{3a}error file=a,line=1::LGTM.yaml"
        );
        assert_eq!(escape_controls("  ::warning::x"), "  :\\u{3a}warning::x");
        assert_eq!(
            escape_controls("1.0.0 ##[add-mask]failed"),
            "1.0.0 #\\u{23}[add-mask]failed"
        );
        assert_eq!(escape_controls("a###[b"), "a##\\u{23}[b");
        assert_eq!(escape_controls("\u{1b}::x"), "\\u{1b}::x");
        assert_eq!(escape_controls("\t::x"), "\\u{9}::x");
        assert_eq!(escape_controls("\u{3000}::x"), "\u{3000}:\\u{3a}x");
        // `::` inside a string, and `#` alone, are left as they are.
        assert!(matches!(escape_controls("a::b #1 ##"), Cow::Borrowed(_)));
    }

    /// Quotes are escaped, then cut: what is shown is at most `max` characters and `…`,
    /// whatever the value holds, and an escape is never cut in half.
    #[test]
    fn quotes_are_escaped_then_cut() {
        assert_eq!(quote("abcdef", 3), "abc…");
        assert_eq!(quote("abc", 3), "abc");
        assert_eq!(quote("a\x1b", 10), "a\\u{1b}");
        assert_eq!(quote("\x1b\x1b\x1b", 12), "\\u{1b}\\u{1b}…");
        assert_eq!(quote("\x1b\x1b\x1b", 14), "\\u{1b}\\u{1b}…");
        assert_eq!(quote("##[add-mask]", 10), "#\\u{23}[ad…");
        // 1,000 ESC characters stay within the bound (cutting first let them grow 6x).
        let esc = "\u{1b}".repeat(1_000);
        assert!(quote(&esc, 100).chars().count() <= 101);
        for max in 0..40 {
            let quoted = quote(&format!("a{esc}"), max);
            let shown = quoted.trim_end_matches('…');
            assert!(shown.replace("\\u{1b}", "").len() <= 1, "{max}: {quoted}");
        }
    }

    #[test]
    fn hashed_quotes_tell_apart_values_that_differ_after_the_cut() {
        let key = |end: &str| format!("{}{end}", "k".repeat(100));
        assert_ne!(quote_hashed(&key("_a"), 100), quote_hashed(&key("_b"), 100));
        assert_eq!(quote(&key("_a"), 100), quote(&key("_b"), 100));
        assert_eq!(quote_hashed(&key("_a"), 100), quote_hashed(&key("_a"), 100));
        let shown = quote_hashed(&key("_a"), 100);
        assert!(shown.starts_with(&"k".repeat(100)) && shown.contains("…(#"));
        assert_eq!(shown.chars().count(), 100 + 12);
        // Uncut, both are the escaped value.
        assert_eq!(quote_hashed("a\u{1b}", 10), quote("a\u{1b}", 10));
        assert_eq!(value_hash(*b"abc"), value_hash(*b"abc"));
        assert_eq!(value_hash([]).len(), 8);
    }

    #[test]
    fn caps_keep_both_ends() {
        let esc = "\u{1b}".repeat(1_000);
        let capped = cap(&format!("{esc} needs at least a patch version bump"), 4_000);
        assert!(capped.chars().count() <= 4_000);
        assert!(capped.ends_with("needs at least a patch version bump"));
        assert!(capped.starts_with("\\u{1b}") && capped.contains(" … "));
        for max in 10..40 {
            let capped = cap(&format!("a{esc}"), max);
            let without = capped.replace("\\u{1b}", "").replace(" … ", "");
            assert!(without == "a" || without.is_empty(), "{max}: {capped}");
        }
        assert_eq!(cap("short", 10), "short");
    }
}
