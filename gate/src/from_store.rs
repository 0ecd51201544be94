//! A view's data where its feature store says it is: the file its batch source names (a
//! Feast `FileSource`), read as Feast reads it. One place for `check --data-from-store`
//! and `drift --current-from-store` / `--reference-from-store`.

use std::path::{Path, PathBuf};

use arrowfeat_common::quote;
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::store::StoreView;
use arrowfeat_validator::yaml::Pos;

use crate::{Data, Given};

/// The batch sources of a store's views, relative paths resolved from `repo` (the
/// feature repo; the working directory for a registry file given alone).
#[derive(Debug, Clone)]
pub struct StoreSources {
    repo: PathBuf,
    /// How reports name the store ("Feast repo feature_repo", a registry path).
    label: String,
}

impl StoreSources {
    pub fn new(repo: PathBuf, label: impl Into<String>) -> StoreSources {
        StoreSources {
            repo,
            label: label.into(),
        }
    }

    /// How reports name the store.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The data of `view` at the path its batch source names. A finding instead when the
    /// store has no such view or its batch source has no file path (`data-not-read`), or
    /// a path that names no file (empty, `.`: `data-unreadable`). `given`, `role`: the
    /// input that gives the path instead (`--data`) and what the data is for ("data",
    /// "current data").
    pub fn data_of(
        &self,
        view: &str,
        store: Option<&StoreView>,
        given: Given,
        role: &str,
    ) -> Result<Data, Box<Check>> {
        let not_read = |expected: &'static str, found: &'static str, why: &str| {
            Box::new(Check::fail(
                Rule::DataNotRead,
                format!("{role} of the store's batch source"),
                Expected(expected),
                Actual(found),
                Pos::UNKNOWN,
                format!(
                    "the {role} of view `{}` was not read: {why}; give {}",
                    quote(view, 100),
                    given.for_view(view)
                ),
            ))
        };
        let Some(store) = store else {
            return Err(not_read(
                "a view of that name",
                "no view",
                &format!(
                    "{} has no feature view of that name",
                    quote(&self.label, 200)
                ),
            ));
        };
        let Some(uri) = store.batch_source_path.as_deref() else {
            return Err(not_read(
                "a file path",
                "none",
                &format!(
                    "its batch source in {} names no file path (a Feast FileSource has one, and so has `batch_source` in arrowfeat store metadata; other sources do not)",
                    quote(&self.label, 200)
                ),
            ));
        };
        let local = uri.strip_prefix("file://").unwrap_or(uri);
        // Never the repo itself.
        if matches!(local.trim().trim_end_matches('/'), "" | ".") {
            return Err(Box::new(Check::fail(
                Rule::DataUnreadable,
                format!("{role} of the store's batch source"),
                Expected("the path of a file or directory of data"),
                Actual(format!("'{}'", quote(uri, 60))),
                Pos::UNKNOWN,
                format!(
                    "the batch source of view `{}` in {} names no file ('{}'): give {}",
                    quote(view, 100),
                    quote(&self.label, 200),
                    quote(uri, 60),
                    given.for_view(view)
                ),
            )));
        }
        // A URL is read as given, as a path given by the user is: the file reading decodes it, or
        // says which schemes and hosts it cannot read.
        if uri.contains("://") {
            return Ok(Data::Path(uri.to_string()));
        }
        let path = Path::new(uri);
        Ok(Data::Path(
            match path.is_absolute() || self.repo == Path::new(".") {
                true => uri.to_string(),
                false => self.repo.join(path).to_string_lossy().into_owned(),
            },
        ))
    }

    /// What an unreadable finding on data read from `view`'s batch source adds: where
    /// the path came from, and the flag that gives another.
    pub fn unreadable_hint(&self, view: &str, given: Given) -> String {
        format!(
            " (the path is the batch source of view `{}` in {}{}; give {} to read other data)",
            quote(view, 100),
            quote(&self.label, 200),
            match self.repo == Path::new(".") {
                true => ", read from the working directory".to_string(),
                false => format!(
                    ", read from {}",
                    quote(&self.repo.display().to_string(), 200)
                ),
            },
            given.for_view(view)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InputNames::{Arguments, Flags};

    fn view(path: Option<&str>) -> StoreView {
        StoreView {
            name: "v".into(),
            features: Vec::new(),
            entities: Vec::new(),
            entity_columns: Vec::new(),
            ttl_seconds: None,
            tags: Default::default(),
            timestamp_field: None,
            timestamp_type: None,
            created_timestamp_column: None,
            batch_source_path: path.map(str::to_string),
        }
    }

    fn path_of(found: Result<Data, Box<Check>>) -> String {
        match found {
            Ok(Data::Path(path)) => path,
            other => panic!("expected a path, found {other:?}"),
        }
    }

    #[test]
    fn relative_paths_resolve_from_the_repo_and_others_stay() {
        let sources = StoreSources::new(PathBuf::from("/repo"), "Feast repo /repo");
        let of = |p| sources.data_of("v", Some(&view(Some(p))), Flags.given("--data"), "data");
        assert_eq!(path_of(of("data/x.parquet")), "/repo/data/x.parquet");
        // URLs as given, as the file reading takes them from the command line.
        assert_eq!(
            path_of(of("file:///abs/x.parquet")),
            "file:///abs/x.parquet"
        );
        assert_eq!(path_of(of("file://rel/x.parquet")), "file://rel/x.parquet");
        assert_eq!(path_of(of("/abs/y.parquet")), "/abs/y.parquet");
        assert_eq!(
            path_of(of("s3://bucket/x.parquet")),
            "s3://bucket/x.parquet"
        );
        // From the working directory: the path as the store names it.
        let here = StoreSources::new(PathBuf::from("."), "registry.json");
        let found = here.data_of(
            "v",
            Some(&view(Some("data/x.parquet"))),
            Flags.given("--data"),
            "data",
        );
        assert_eq!(path_of(found), "data/x.parquet");
    }

    #[test]
    fn a_view_it_cannot_read_is_a_finding_naming_the_flag() {
        let sources = StoreSources::new(PathBuf::from("."), "registry.json");
        let missing = sources
            .data_of("v", None, Flags.given("--current"), "current data")
            .unwrap_err();
        assert_eq!(missing.rule, Rule::DataNotRead);
        assert_eq!(missing.expected, "a view of that name");
        assert!(
            missing.message.contains("give --current v=PATH"),
            "{}",
            missing.message
        );
        // Python's arguments, in Python.
        let in_python = sources
            .data_of("v", None, Arguments.given("--current"), "current data")
            .unwrap_err();
        assert!(
            in_python.message.contains(r#"give current={"v": data}"#),
            "{}",
            in_python.message
        );
        let other = sources
            .data_of("v", Some(&view(None)), Flags.given("--data"), "data")
            .unwrap_err();
        assert!(
            other.message.contains("names no file path"),
            "{}",
            other.message
        );
        for empty in ["", "file://", ".", "./", " "] {
            let refused = sources
                .data_of("v", Some(&view(Some(empty))), Flags.given("--data"), "data")
                .unwrap_err();
            assert_eq!(refused.rule, Rule::DataUnreadable);
            assert!(
                refused.message.contains("names no file"),
                "{}",
                refused.message
            );
        }
    }
}
