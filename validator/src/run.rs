//! Checking a set of schema files: against a store, against an earlier revision, or both.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::check::check_against_store;
use crate::compat::check_revision;
use crate::config::Config;
use crate::report::{Check, FileReport, Report};
use crate::rules;
use crate::spec::{self, SchemaFile};
use crate::store::StoreMetadata;

/// One schema file as read: its report so far, and the schema if it could be read.
pub type Loaded = (FileReport, Option<SchemaFile>);

fn is_schema_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

/// The schema files under `path`: the file itself, or every `*.yaml` / `*.yml` below a
/// directory (sorted, so reports are stable). A missing path is an error.
pub fn schema_paths(path: &Path) -> Result<Vec<PathBuf>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| spec::io_message(path, &e))?;
    if metadata.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| spec::io_message(&dir, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| spec::io_message(&dir, &e))?;
            let path = entry.path();
            // `--schemas .` should report `x.yaml`, not `./x.yaml`.
            let path = path
                .strip_prefix(".")
                .map_or_else(|_| path.clone(), Path::to_path_buf);
            let file_type = entry.file_type().map_err(|e| spec::io_message(&path, &e))?;
            if file_type.is_dir() {
                pending.push(path);
            } else if is_schema_file(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads every schema file under `path`. Per-file problems become findings; only a
/// missing or unreadable `path` itself is an error.
pub fn load_path(path: &Path) -> Result<Vec<Loaded>, String> {
    let paths = schema_paths(path)?;
    // Files are independent; reading and validating them on every core keeps large
    // repositories fast.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len().max(1));
    if threads <= 1 || paths.len() < 64 {
        return Ok(paths.iter().map(|p| spec::load_file(p)).collect());
    }
    let chunk = paths.len().div_ceil(threads);
    let loaded = std::thread::scope(|scope| {
        let handles: Vec<_> = paths
            .chunks(chunk)
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|p| spec::load_file(p)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    Ok(loaded)
}

/// Reads schema files given as (label, bytes), e.g. from a git revision.
pub fn load_sources(sources: &[(String, Vec<u8>)]) -> Vec<Loaded> {
    sources
        .iter()
        .map(|(label, bytes)| spec::load_bytes(label, bytes))
        .collect()
}

/// What to check the schema files against.
pub struct Targets<'a> {
    pub store: Option<&'a StoreMetadata>,
    /// Earlier revisions of the schema files, matched by view name.
    pub previous: Option<&'a [Loaded]>,
    /// Shown in reports: the registry path, the revision, ...
    pub against: String,
}

/// Runs every check and applies the configuration.
pub fn check(loaded: Vec<Loaded>, targets: &Targets, config: &Config) -> Report {
    let previous: HashMap<&str, &SchemaFile> = targets
        .previous
        .unwrap_or(&[])
        .iter()
        .filter_map(|(_, file)| file.as_ref())
        .map(|file| (file.spec.name.as_str(), file))
        .collect();
    let mut first_file_of_view: HashMap<String, String> = HashMap::new();
    let mut files = Vec::with_capacity(loaded.len());
    for (mut report, file) in loaded {
        if let Some(file) = &file {
            if let Some(first) = first_file_of_view.get(&file.spec.name) {
                report.checks.push(Check::fail(
                    rules::DUPLICATE_VIEW,
                    "feature view",
                    "declared once",
                    format!("also in {first}"),
                    file.key_pos("/name"),
                    format!(
                        "feature view `{}` is also declared in {first}",
                        file.spec.name
                    ),
                ));
                files.push(report);
                continue;
            }
            first_file_of_view.insert(file.spec.name.clone(), file.path.clone());
            if let Some(store) = targets.store {
                report.checks.extend(check_against_store(file, store));
            }
            if let Some(old) = previous.get(file.spec.name.as_str()) {
                report
                    .checks
                    .extend(check_revision(old, file, config.compatibility));
            }
        }
        files.push(report);
    }
    // A view that the earlier revision has and this one lacks was deleted: every consumer
    // of it breaks, and there is no file left to carry a version bump.
    for (old_report, old) in targets.previous.unwrap_or(&[]) {
        let Some(old) = old else { continue };
        if first_file_of_view.contains_key(&old.spec.name) {
            continue;
        }
        let mut report = FileReport::new(old.path.clone());
        report.view = Some(old.spec.name.clone());
        report.schema_version = old_report.schema_version.clone();
        let message = format!(
            "feature view `{}` ({} {}) was removed from this revision",
            old.spec.name, old.path, old.spec.schema_version
        );
        report
            .checks
            .push(if config.compatibility == crate::compat::Mode::None {
                Check::finding(
                    rules::COMPAT_CHANGE,
                    crate::report::Severity::Info,
                    "feature view",
                    "present",
                    "removed",
                    crate::yaml::Pos::UNKNOWN,
                    message,
                )
            } else {
                Check::fail(
                    rules::COMPAT_BREAKING,
                    "feature view",
                    "present",
                    "removed",
                    crate::yaml::Pos::UNKNOWN,
                    format!(
                        "{message}; removing a view breaks {} compatibility for its consumers",
                        config.compatibility
                    ),
                )
            });
        files.push(report);
    }
    let mut report = Report {
        against: targets.against.clone(),
        files,
    };
    config.apply(&mut report);
    report
}
