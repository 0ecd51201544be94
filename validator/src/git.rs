//! Schema files of a git revision (`--against origin/main`), read with the `git` program.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        // Paths are paths, never globs: a file named `*.yaml` must not match every file.
        .arg("--literal-pathspecs")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr)
            .trim()
            .lines()
            .next()
            .unwrap_or("git failed")
            .to_string())
    }
}

/// The schema files of a revision, and the entries that could not be followed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevisionFiles {
    /// (`REF:path`, bytes) of every schema file (`*.yaml`, `*.yml`).
    pub files: Vec<(String, Vec<u8>)>,
    /// (`REF:path`, why) of every symbolic link that was not followed: one leaving the
    /// schema directory (unless `follow_symlinks`), the repository, or leading nowhere.
    pub refused: Vec<(String, String)>,
}

/// One `git ls-tree` entry: mode, object id and path from the repository's root.
struct TreeEntry {
    mode: String,
    object: String,
    path: String,
}

fn ls_tree(
    dir: &Path,
    reference: &str,
    recursive: bool,
    path: &str,
) -> Result<Vec<TreeEntry>, String> {
    let mut args = vec!["ls-tree", "-z", "--full-tree"];
    if recursive {
        args.push("-r");
    }
    args.extend([reference, "--", path]);
    let listing = git(dir, &args)?;
    Ok(listing
        .split(|b| *b == 0)
        .filter(|line| !line.is_empty())
        .filter_map(|line| {
            let line = String::from_utf8_lossy(line);
            let (meta, path) = line.split_once('\t')?;
            let mut meta = meta.split(' ');
            let mode = meta.next()?.to_string();
            let _kind = meta.next()?;
            let object = meta.next()?.to_string();
            Some(TreeEntry {
                mode,
                object,
                path: path.to_string(),
            })
        })
        .collect())
}

const SYMLINK: &str = "120000";
const TREE: &str = "040000";

fn is_schema_name(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// `base/target` with `.` and `..` resolved, from the repository's root; `None` when it
/// leaves the repository (or the target is absolute).
fn resolve(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop(); // the link's own name
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// What a link in the tree of `reference` leads to, following links (at most 40, as
/// the kernel does): the final entry, or why it cannot be followed.
fn follow(
    dir: &Path,
    reference: &str,
    link: &TreeEntry,
    inside: &str,
) -> Result<TreeEntry, String> {
    let mut current = TreeEntry {
        mode: link.mode.clone(),
        object: link.object.clone(),
        path: link.path.clone(),
    };
    for _ in 0..40 {
        if current.mode != SYMLINK {
            return Ok(current);
        }
        let target = String::from_utf8_lossy(&git(dir, &["cat-file", "blob", &current.object])?)
            .into_owned();
        let shown = crate::text::quote(&target, 200);
        let Some(resolved) = resolve(&current.path, &target) else {
            return Err(format!(
                "a symbolic link to `{shown}`, outside the repository; it is not followed"
            ));
        };
        if !(resolved == inside.trim_end_matches('/') || resolved.starts_with(inside)) {
            return Err(format!(
                "a symbolic link to `{shown}`, outside the schema directory; it is not followed \
                 (pass --follow-symlinks to follow it)"
            ));
        }
        current = match ls_tree(dir, reference, false, &resolved)?
            .into_iter()
            .find(|e| e.path == resolved)
        {
            Some(entry) => entry,
            None => {
                return Err(format!(
                    "a broken symbolic link: `{shown}` does not exist at this revision"
                ))
            }
        };
    }
    Err("a symbolic link in a loop (more than 40 links)".into())
}

/// The schema files under `schemas` at `reference`. A path that does not exist at that
/// revision is an error (nothing could be compared); symbolic links are followed within
/// the revision's tree like the working-tree walk follows them: inside the schema
/// directory (anywhere in the repository with `follow_symlinks`), never out of the
/// repository.
pub fn schema_sources(
    reference: &str,
    schemas: &Path,
    follow_symlinks: bool,
) -> Result<RevisionFiles, String> {
    let (dir, name) = if schemas.is_dir() {
        (schemas.to_path_buf(), None)
    } else {
        let parent = schemas
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = schemas
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent.to_path_buf(), Some(name))
    };
    git(
        &dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{reference}^{{commit}}"),
        ],
    )
    .map_err(|_| {
        format!(
            "git does not know a revision `{reference}` in {}",
            dir.display()
        )
    })?;
    // Paths from the repository's root: `features/`, or `` at the root.
    let prefix = String::from_utf8_lossy(&git(&dir, &["rev-parse", "--show-prefix"])?)
        .trim_end_matches('\n')
        .to_string();
    let top = match &name {
        Some(name) => format!("{prefix}{name}"),
        None if prefix.is_empty() => ".".to_string(),
        None => prefix.trim_end_matches('/').to_string(),
    };
    let missing = || {
        format!(
            "`{}` does not exist at git revision `{reference}`, so nothing could be compared with it \
             (renamed or added since?); compare with the earlier path as a directory, or leave out \
             --against for the change that adds it",
            crate::text::clean(&schemas.display().to_string())
        )
    };
    if top != "." && ls_tree(&dir, reference, false, &top)?.is_empty() {
        return Err(missing());
    }
    // Links may lead anywhere inside the schema directory (a single file: its directory).
    // A single file given as `--schemas` may itself be a link anywhere, as on disk.
    let inside = if follow_symlinks || name.is_some() {
        ""
    } else {
        prefix.as_str()
    };
    let label = |path: &str| {
        let relative = path.strip_prefix(prefix.as_str()).unwrap_or(path);
        format!("{reference}:{}", dir.join(relative).display())
    };
    let mut out = RevisionFiles::default();
    for entry in ls_tree(&dir, reference, true, &top)? {
        let base = entry.path.rsplit('/').next().unwrap_or(&entry.path);
        if entry.mode == SYMLINK {
            match follow(&dir, reference, &entry, inside) {
                Ok(target) if target.mode == TREE => {
                    // Files inside the schema directory are listed under their own path;
                    // a directory elsewhere is not walked at a revision.
                    if !(target.path.starts_with(prefix.as_str()) || name.is_some()) {
                        out.refused.push((
                            label(&entry.path),
                            "a symbolic link to a directory outside the schema directory; it is not \
                             followed at a git revision (compare with a checked-out directory instead)"
                                .into(),
                        ));
                    }
                }
                Ok(target) if is_schema_name(base) => out.files.push((
                    label(&entry.path),
                    git(&dir, &["cat-file", "blob", &target.object])?,
                )),
                Ok(_) => {}
                Err(why) if is_schema_name(base) || name.is_some() => {
                    out.refused.push((label(&entry.path), why))
                }
                Err(_) => {}
            }
            continue;
        }
        // Submodules (commits) and other entries are not schema files.
        if !is_schema_name(base) || !entry.mode.starts_with("100") {
            continue;
        }
        out.files.push((
            label(&entry.path),
            git(&dir, &["cat-file", "blob", &entry.object])?,
        ));
    }
    Ok(out)
}
