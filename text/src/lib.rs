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

/// A value from a file quoted in a message: cut to its first `max` characters (so a
/// hostile megabyte-long name does not flood the log), then escaped.
pub fn quote(text: &str, max: usize) -> String {
    // Cut before escaping, so that an escape is never cut in half.
    match text.char_indices().nth(max) {
        None => escape_controls(text).into_owned(),
        Some((cut, _)) => format!("{}…", escape_controls(&text[..cut])),
    }
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

    #[test]
    fn quotes_are_cut() {
        assert_eq!(quote("abcdef", 3), "abc…");
        assert_eq!(quote("a\x1b", 10), "a\\u{1b}");
        // Cut on the text's own characters: escapes stay whole.
        assert_eq!(quote("\x1b\x1b\x1b", 2), "\\u{1b}\\u{1b}…");
        assert_eq!(quote("##[add-mask]", 5), "#\\u{23}[ad…");
    }
}
