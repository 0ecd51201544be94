//! A view's data where its feature store says it is: the file its batch source names (a
//! Feast `FileSource`), read as Feast reads it. One place for `check --data-from-store`
//! and `drift --current-from-store` / `--reference-from-store`.

use std::path::{Path, PathBuf};

use arrowfeat_common::quote;
use arrowfeat_validator::report::{Actual, Check, Expected};
use arrowfeat_validator::rules::Rule;
use arrowfeat_validator::store::StoreView;
use arrowfeat_validator::yaml::Pos;

use crate::Data;

/// The batch sources of a store's views, relative paths resolved from `repo` (the
/// feature repo; the working directory for a registry file given alone).
#[derive(Debug, Clone)]
pub struct StoreSources {
    repo: PathBuf,
}

impl StoreSources {
    pub fn new(repo: PathBuf) -> StoreSources {
        StoreSources { repo }
    }

    /// The data of `view` at the path its batch source names. A finding instead when the
    /// store has no such view or its batch source names no file (`data-not-read`), or
    /// names an empty path (`data-unreadable`). `flag`, `role`: the option that
    /// gives the path instead (`--data`) and what the data is for ("data", "current
    /// data").
    pub fn data_of(
        &self,
        view: &str,
        store: Option<&StoreView>,
        flag: &str,
        role: &str,
    ) -> Result<Data, Box<Check>> {
        let not_read = |found: &'static str, why: &str| {
            Box::new(Check::fail(
                Rule::DataNotRead,
                format!("{role} of the store's batch source"),
                Expected("a file source"),
                Actual(found),
                Pos::UNKNOWN,
                format!(
                    "the {role} of view `{}` was not read: {why}; give {flag} {}=PATH",
                    quote(view, 100),
                    quote(view, 100)
                ),
            ))
        };
        let Some(store) = store else {
            return Err(not_read(
                "no view",
                "the store has no feature view of that name",
            ));
        };
        let Some(uri) = store.batch_source_path.as_deref() else {
            return Err(not_read(
                "another source",
                "its batch source is not a file source (FileSource) with a path",
            ));
        };
        if uri.contains("://") && !uri.starts_with("file://") {
            // Read as given: the file reading says which schemes it cannot read.
            return Ok(Data::Path(uri.to_string()));
        }
        let local = uri.strip_prefix("file://").unwrap_or(uri);
        if local.is_empty() {
            // Never the repo itself.
            return Err(Box::new(Check::fail(
                Rule::DataUnreadable,
                format!("{role} of the store's batch source"),
                Expected("a path"),
                Actual("an empty path"),
                Pos::UNKNOWN,
                format!(
                    "the store's batch source of view `{}` has an empty path: give {flag} {}=PATH",
                    quote(view, 100),
                    quote(view, 100)
                ),
            )));
        }
        let path = Path::new(local);
        Ok(Data::Path(
            match path.is_absolute() || self.repo == Path::new(".") {
                true => local.to_string(),
                false => self.repo.join(path).to_string_lossy().into_owned(),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let sources = StoreSources::new(PathBuf::from("/repo"));
        let of = |p| sources.data_of("v", Some(&view(Some(p))), "--data", "data");
        assert_eq!(path_of(of("data/x.parquet")), "/repo/data/x.parquet");
        assert_eq!(path_of(of("file:///abs/x.parquet")), "/abs/x.parquet");
        assert_eq!(path_of(of("file://rel/x.parquet")), "/repo/rel/x.parquet");
        assert_eq!(path_of(of("/abs/y.parquet")), "/abs/y.parquet");
        assert_eq!(
            path_of(of("s3://bucket/x.parquet")),
            "s3://bucket/x.parquet"
        );
        // From the working directory: the path as the store names it.
        let here = StoreSources::new(PathBuf::from("."));
        let found = here.data_of("v", Some(&view(Some("data/x.parquet"))), "--data", "data");
        assert_eq!(path_of(found), "data/x.parquet");
    }

    #[test]
    fn a_view_it_cannot_read_is_a_finding_naming_the_flag() {
        let sources = StoreSources::new(PathBuf::from("."));
        let missing = sources
            .data_of("v", None, "--current", "current data")
            .unwrap_err();
        assert_eq!(missing.rule, Rule::DataNotRead);
        assert!(
            missing.message.contains("give --current v=PATH"),
            "{}",
            missing.message
        );
        let other = sources
            .data_of("v", Some(&view(None)), "--data", "data")
            .unwrap_err();
        assert!(
            other.message.contains("not a file source"),
            "{}",
            other.message
        );
        for empty in ["", "file://"] {
            let refused = sources
                .data_of("v", Some(&view(Some(empty))), "--data", "data")
                .unwrap_err();
            assert_eq!(refused.rule, Rule::DataUnreadable);
            assert!(
                refused.message.contains("empty path"),
                "{}",
                refused.message
            );
        }
    }
}
