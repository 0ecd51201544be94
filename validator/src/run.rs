//! Checking a set of schema files: against a store, against an earlier revision, or both.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrowfeat_common::path_io_message;

use crate::checks::{self, check_against_store, check_revision};
use crate::config::Config;
use crate::files::file_kind;
use crate::report::{Actual, Check, Expected, FileReport, Report};
use crate::rules::{Rule, Severity};
use crate::spec::SchemaFile;
use crate::store::StoreMetadata;

/// One schema file as read: its report so far, and the schema if it could be read.
pub type Loaded = (FileReport, Option<SchemaFile>);

fn is_schema_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

/// How a schema directory is walked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Follow symbolic links that lead outside the directory given (`--follow-symlinks`).
    /// Without it such links are refused with an `input-unreadable` finding; links that
    /// stay inside are followed either way. Loops are never walked twice.
    pub follow_symlinks: bool,
}

/// The schema files under `path`: the file itself, or every `*.yaml` / `*.yml` below a
/// directory (sorted, so reports are stable). A missing path is an error.
pub fn schema_paths(path: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(walk(path, &LoadOptions::default())?.0)
}

fn label(path: &Path) -> String {
    let label = path.display().to_string();
    label
        .strip_prefix("./")
        .map_or(label.clone(), str::to_string)
}

fn refused(path: &Path, message: String) -> Loaded {
    let mut report = FileReport::new(label(path));
    report.checks.push(Check::fail(
        Rule::InputUnreadable,
        "file",
        Expected("a regular file inside the schema directory"),
        Actual("refused"),
        crate::yaml::Pos::UNKNOWN,
        message,
    ));
    (report, None)
}

/// The files to read, and the entries refused (links out of the directory, broken links).
fn walk(path: &Path, options: &LoadOptions) -> Result<(Vec<PathBuf>, Vec<Loaded>), String> {
    let metadata = std::fs::metadata(path).map_err(|e| path_io_message(path, &e))?;
    if metadata.is_file() {
        return Ok((vec![path.to_path_buf()], Vec::new()));
    }
    if !metadata.is_dir() {
        return Err(format!(
            "{} is {}; expected a schema file or a directory",
            crate::text::clean(&path.display().to_string()),
            file_kind(&metadata.file_type())
        ));
    }
    let root = std::fs::canonicalize(path).map_err(|e| path_io_message(path, &e))?;
    let root_label = label(path);
    let mut visited = std::collections::HashSet::from([root.clone()]);
    let mut out = Vec::new();
    let mut refusals = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| path_io_message(&dir, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| path_io_message(&dir, &e))?;
            let path = entry.path();
            // `--schemas .` should report `x.yaml`, not `./x.yaml`.
            let path = path
                .strip_prefix(".")
                .map_or_else(|_| path.clone(), Path::to_path_buf);
            // The entry itself, not what a link points to.
            let file_type = entry.file_type().map_err(|e| path_io_message(&path, &e))?;
            if file_type.is_symlink() {
                let target = match std::fs::canonicalize(&path) {
                    Ok(target) => target,
                    Err(error) => {
                        // Dangling, or a loop (ELOOP): only worth a finding if it would
                        // have been a schema file.
                        if is_schema_file(&path) {
                            refusals.push(refused(
                                &path,
                                format!(
                                    "{}: broken symbolic link ({})",
                                    crate::text::clean(&label(&path)),
                                    path_io_message(&path, &error)
                                ),
                            ));
                        }
                        continue;
                    }
                };
                let Ok(target_metadata) = std::fs::metadata(&target) else {
                    continue;
                };
                let relevant = target_metadata.is_dir() || is_schema_file(&path);
                if !relevant {
                    continue;
                }
                if !options.follow_symlinks && !target.starts_with(&root) {
                    let link = std::fs::read_link(&path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    refusals.push(refused(
                        &path,
                        format!(
                            "{} is a symbolic link to `{}`, outside the schema directory {}; it is not followed (pass --follow-symlinks to follow it)",
                            crate::text::clean(&label(&path)),
                            crate::text::quote_hashed(&link, 200),
                            crate::text::clean(&root_label)
                        ),
                    ));
                    continue;
                }
                if target_metadata.is_dir() {
                    if visited.insert(target) {
                        pending.push(path);
                    }
                } else {
                    out.push(path);
                }
            } else if file_type.is_dir() {
                let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                if visited.insert(canonical) {
                    pending.push(path);
                }
            } else if is_schema_file(&path) {
                // FIFOs, sockets and devices too: reading refuses them with a finding.
                out.push(path);
            }
        }
    }
    out.sort();
    Ok((out, refusals))
}

/// Reads every schema file under `path`. Per-file problems become findings; only a
/// missing or unreadable `path` itself is an error.
pub fn load_path(path: &Path) -> Result<Vec<Loaded>, String> {
    load_path_with(path, &LoadOptions::default())
}

/// [`load_path`] with options: whether links out of the directory are followed.
pub fn load_path_with(path: &Path, options: &LoadOptions) -> Result<Vec<Loaded>, String> {
    let (paths, refusals) = walk(path, options)?;
    // Files are independent; reading and validating them on every core keeps large
    // repositories fast.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len().max(1));
    let mut loaded: Vec<Loaded> = if threads <= 1 || paths.len() < 64 {
        paths.iter().map(|p| checks::load_file(p)).collect()
    } else {
        let chunk = paths.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = paths
                .chunks(chunk)
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .map(|p| checks::load_file(p))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                // A reader that panicked must not leave its files out of the report
                // silently: the panic goes on to the caller, which reports an
                // internal error.
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    if !refusals.is_empty() {
        loaded.extend(refusals);
        loaded.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    }
    Ok(loaded)
}

/// Reads schema files given as (label, bytes), e.g. from a git revision.
pub fn load_sources(sources: &[(String, Vec<u8>)]) -> Vec<Loaded> {
    sources
        .iter()
        .map(|(label, bytes)| checks::load_bytes(label, bytes))
        .collect()
}

/// The data behind feature views, checked by an engine the caller provides (the
/// validator reads no data; see [`checks::data`]).
pub trait DataSource: Sync {
    /// The checks of `file`'s view's data, `None` when no data is given for the view.
    /// `store` is the store's view of that name, when a store is given (its batch
    /// source says where the data is).
    /// `config` is the run's `arrowfeat.toml` (its `[drift]` thresholds, for drift).
    fn check(
        &self,
        file: &SchemaFile,
        store: Option<&crate::store::StoreView>,
        config: &Config,
    ) -> Option<Vec<Check>>;
    /// What the data is, for the report's "against" line.
    fn label(&self) -> String;
    /// After the run, when every schema file was read: data given for a view that no
    /// schema file declares, as the usage error that refuses the run (a misspelt view
    /// name must not pass with nothing checked), in the caller's words.
    fn undeclared(&self) -> Option<String> {
        None
    }
}

/// What to check the schema files against.
pub struct Targets<'a> {
    pub store: Option<&'a StoreMetadata>,
    /// Whether the schema files are checked against `store`; when not, the store only
    /// says where each view's data is (`drift --current-from-store`).
    pub compare_store: bool,
    /// The views' data.
    pub data: Option<&'a dyn DataSource>,
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
                    Rule::DuplicateView,
                    "feature view",
                    Expected("declared once"),
                    Actual(format!("also in {first}")),
                    file.key_pos("/name"),
                    format!(
                        "feature view `{}` is also declared in {first}",
                        file.spec.name
                    ),
                ));
                // Checked against nothing: a second declaration is not compared.
                report.unchecked = Some("it declares a feature view another file declares");
                files.push(report);
                continue;
            }
            first_file_of_view.insert(file.spec.name.clone(), file.path.clone());
            if let Some(store) = targets.store.filter(|_| targets.compare_store) {
                report.checks.extend(check_against_store(file, store));
                if store.views.contains_key(&file.spec.name) {
                    report
                        .uncompared
                        .extend(checks::unreadable_values(file, "the store"));
                }
            }
            let store_view = targets
                .store
                .and_then(|store| store.views.get(&file.spec.name));
            if let Some(found) = targets
                .data
                .and_then(|data| data.check(file, store_view, config))
            {
                report.checks.extend(found);
            }
            if let Some(old) = previous.get(file.spec.name.as_str()) {
                let revision = check_revision(old, file, config.compatibility);
                report.checks.extend(revision.checks);
                report.uncompared.extend(revision.uncompared);
            }
        } else {
            report.unchecked = Some("it does not match the feature view format");
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
                    Rule::CompatChange,
                    Severity::Info,
                    "feature view",
                    Expected("present"),
                    Actual("removed"),
                    crate::yaml::Pos::UNKNOWN,
                    message,
                )
            } else {
                Check::fail(
                    Rule::CompatBreaking,
                    "feature view",
                    Expected("present"),
                    Actual("removed"),
                    crate::yaml::Pos::UNKNOWN,
                    format!(
                        "{message}; removing a view breaks {} compatibility for its consumers",
                        config.compatibility
                    ),
                )
            });
        files.push(report);
    }
    let mut report = Report::new(targets.against.clone(), files);
    config.apply(&mut report);
    report
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fresh directory, removed when the guard drops (even if the test panics).
    fn tempdir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("arrowfeat-run-{name}-"))
            .tempdir()
            .unwrap()
    }

    fn paths(loaded: &[Loaded]) -> Vec<(String, bool)> {
        loaded
            .iter()
            .map(|(report, file)| {
                let name = report.path.rsplit('/').next().unwrap().to_string();
                (
                    name,
                    file.is_some()
                        || report
                            .checks
                            .iter()
                            .all(|c| c.rule != Rule::InputUnreadable),
                )
            })
            .collect()
    }

    #[test]
    fn links_out_of_the_directory_are_refused_unless_asked() {
        let tmp = tempdir("links");
        let base = tmp.path();
        let outside = base.join("outside");
        let schemas = base.join("schemas");
        std::fs::create_dir_all(outside.join("more")).unwrap();
        std::fs::create_dir_all(schemas.join("sub")).unwrap();
        std::fs::write(outside.join("secret.yaml"), "name: secret\n").unwrap();
        std::fs::write(outside.join("more/other.yaml"), "name: other\n").unwrap();
        std::fs::write(schemas.join("sub/inside.yaml"), "name: inside\n").unwrap();
        symlink(outside.join("secret.yaml"), schemas.join("leak.yaml")).unwrap();
        symlink(outside.join("more"), schemas.join("leakdir")).unwrap();
        symlink(schemas.join("sub/inside.yaml"), schemas.join("alias.yaml")).unwrap();
        symlink(schemas.join("nowhere.yaml"), schemas.join("dangling.yaml")).unwrap();
        symlink(&schemas, schemas.join("sub/loop")).unwrap(); // a loop back to the root
        symlink(schemas.join("sub/self"), schemas.join("sub/self")).unwrap(); // ELOOP

        let loaded = load_path(&schemas).unwrap();
        let names = paths(&loaded);
        assert!(names.contains(&("leak.yaml".into(), false)), "{names:?}");
        assert!(names.contains(&("leakdir".into(), false)), "{names:?}");
        assert!(
            names.contains(&("dangling.yaml".into(), false)),
            "{names:?}"
        );
        assert!(names.contains(&("alias.yaml".into(), true)), "{names:?}");
        assert!(names.contains(&("inside.yaml".into(), true)), "{names:?}");
        assert!(!names
            .iter()
            .any(|(n, _)| n == "secret.yaml" || n == "other.yaml"));
        let leak = loaded
            .iter()
            .find(|(r, _)| r.path.ends_with("leak.yaml"))
            .unwrap();
        let message = &leak.0.checks[0].message;
        assert!(
            message.contains("outside the schema directory"),
            "{message}"
        );
        assert!(message.contains("--follow-symlinks"), "{message}");
        // The content behind the link never reaches the report.
        assert!(loaded
            .iter()
            .all(|(r, _)| r.view.as_deref() != Some("secret")));

        let followed = load_path_with(
            &schemas,
            &LoadOptions {
                follow_symlinks: true,
            },
        )
        .unwrap();
        let names = paths(&followed);
        assert!(names.contains(&("leak.yaml".into(), true)), "{names:?}");
        assert!(names.contains(&("other.yaml".into(), true)), "{names:?}");
        assert!(
            names.contains(&("dangling.yaml".into(), false)),
            "{names:?}"
        );
        // The loop back to the root is not walked twice.
        assert_eq!(
            names.iter().filter(|(n, _)| n == "inside.yaml").count(),
            1,
            "{names:?}"
        );
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let tmp = tempdir("fifo");
        let dir = tmp.path();
        let fifo = dir.join("pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mkfifo unavailable; skipped");
            return;
        }
        std::fs::write(dir.join("ok.yaml"), "name: x\n").unwrap();
        // As a file in a directory, and given directly: refused, never opened.
        let loaded = load_path(dir).unwrap();
        let pipe = loaded
            .iter()
            .find(|(r, _)| r.path.ends_with("pipe.yaml"))
            .unwrap();
        assert!(
            pipe.0.checks[0]
                .message
                .contains("is a FIFO (named pipe); expected a regular file"),
            "{:?}",
            pipe.0.checks
        );
        let error = load_path(&fifo).unwrap_err();
        assert!(error.contains("FIFO"), "{error}");
        let error = crate::store::load(&fifo).unwrap_err();
        assert!(error.contains("FIFO"), "{error}");
        let error = crate::config::Config::load(&fifo).unwrap_err();
        assert!(error.contains("FIFO"), "{error}");
        let error = crate::files::read_bounded(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(error.contains("is a device"), "{error}");
    }
}
