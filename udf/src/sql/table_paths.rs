//! Names in SQL that mean files: which names are paths, and where a path or `file://` URL
//! is on this machine. Shared by the `point_in_time` table function and the CLI's reader,
//! so that a name is a path (or a table) alike in both.

use std::path::PathBuf;

/// The data extensions read as tables (any case), without the dot.
pub const DATA_EXTENSIONS: [&str; 6] = ["parquet", "pq", "csv", "json", "ndjson", "jsonl"];

/// What follows the last `.` of the last part of `name` (`parquet` for `a/b.parquet` and
/// for a file named `.parquet`, as the reader's "ends with `.parquet`" sees it), if any.
pub fn extension(name: &str) -> Option<&str> {
    let file = name.rsplit(['/', '\\']).next()?;
    file.rsplit_once('.').map(|(_, extension)| extension)
}

/// Whether `name` ends with one of [`DATA_EXTENSIONS`].
pub fn has_data_extension(name: &str) -> bool {
    extension(name).is_some_and(|e| DATA_EXTENSIONS.iter().any(|d| e.eq_ignore_ascii_case(d)))
}

/// Whether `name` is a URL of the `file` scheme (in any case, as schemes are).
pub fn is_file_url(name: &str) -> bool {
    name.split_once("://")
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("file"))
}

/// Whether a table name in SQL is meant as a path: it holds a `/` (or `\`), ends with a
/// data extension, or is a `file://` URL. A bare name (`FROM events`) is a table's, even
/// when a directory of that name sits in the working directory.
pub fn path_like(name: &str) -> bool {
    name.contains('/') || name.contains('\\') || is_file_url(name) || has_data_extension(name)
}

/// The path on this machine that a table name or location names: itself, or a `file://`
/// URL's path, %-decoded. `None` for other URLs (object stores), and for `file://` URLs
/// that name no local path (`file://host/...`) or carry a `?query` or `#fragment` (which
/// the reader would drop: a `?` or `#` in a name is written `%3F`, `%23`).
pub fn local_path(name: &str) -> Option<PathBuf> {
    if !name.contains("://") {
        return Some(PathBuf::from(name));
    }
    if !is_file_url(name) {
        return None;
    }
    let url = url::Url::parse(name).ok()?;
    if url.query().is_some() || url.fragment().is_some() {
        return None;
    }
    url.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_as_the_reader_matches_them() {
        assert_eq!(extension("a/b.PARQUET"), Some("PARQUET"));
        assert_eq!(extension("dir/.parquet"), Some("parquet"));
        assert_eq!(extension("a.b/c"), None);
        assert!(has_data_extension("x.Pq") && has_data_extension(".jsonl"));
        assert!(!has_data_extension("notes.txt") && !has_data_extension("events"));
    }

    #[test]
    fn paths_and_file_urls() {
        assert_eq!(local_path("a/b c"), Some(PathBuf::from("a/b c")));
        assert_eq!(
            local_path("file:///x/a%20b/"),
            Some(PathBuf::from("/x/a b/"))
        );
        assert_eq!(local_path("FILE:///x/y"), Some(PathBuf::from("/x/y")));
        assert_eq!(local_path("file://localhost/x"), Some(PathBuf::from("/x")));
        assert_eq!(local_path("file://host/x"), None);
        assert_eq!(local_path("file:///x/?a.parquet"), None);
        assert_eq!(local_path("file:///x/a.parquet#b"), None);
        assert_eq!(local_path("s3://bucket/x"), None);
        assert!(path_like("out/") && path_like("x.PQ") && path_like("File:///x"));
        assert!(!path_like("events"));
    }
}
