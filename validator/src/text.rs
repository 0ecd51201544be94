//! Text that came from a file, made safe to print: see [`arrowfeat_text`], shared with
//! the kernels, the CLI and the Python package. Every renderer runs its input through
//! [`escape_controls`] (see `output::render`).

pub use arrowfeat_text::{clean, escape_controls, is_unsafe_char, quote};

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
pub fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = Vec::new();
    let mut more = 0usize;
    for item in items {
        if out.len() < MAX_LISTED {
            out.push(short(item));
        } else {
            more += 1;
        }
    }
    let mut text = out.join(", ");
    if more > 0 {
        text.push_str(&format!(", … ({more} more)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_lists_are_bounded() {
        let long = "A".repeat(1_000_000);
        let shown = short(&long);
        assert_eq!(shown.chars().count(), MAX_SHOWN + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(short("a\u{1b}"), "a\\u{1b}");
        let names: Vec<String> = (0..25).map(|i| format!("n{i}")).collect();
        let listed = list(names.iter().map(String::as_str));
        assert!(listed.starts_with("n0, n1, "), "{listed}");
        assert!(listed.ends_with("n9, … (15 more)"), "{listed}");
        assert_eq!(list(["a", "b"]), "a, b");
    }
}
