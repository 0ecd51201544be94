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

/// The entry at `path` (from the repository's root) in the tree of `reference`, if any.
fn entry_at(dir: &Path, reference: &str, path: &str) -> Result<Option<TreeEntry>, String> {
    Ok(ls_tree(dir, reference, false, path)?
        .into_iter()
        .find(|e| e.path == path))
}

/// The target of the link at `link` (a path from the repository's root, whose directories
/// are real) in the tree of `reference`, resolved as the kernel resolves it: component by
/// component, each link met on the way followed first, so `d/../v.yaml` through a link
/// `d -> deep/b` is `deep/v.yaml`, not `v.yaml`. `Ok(None)`: it leaves the repository (or
/// is absolute). `hops` counts the links followed, at most 40.
fn resolve(
    dir: &Path,
    reference: &str,
    link: &str,
    target: &str,
    hops: &mut usize,
) -> Result<Option<String>, String> {
    if target.starts_with('/') {
        return Ok(None);
    }
    let mut parts: Vec<String> = link.split('/').map(str::to_string).collect();
    parts.pop(); // the link's own name
    let mut rest: std::collections::VecDeque<String> =
        target.split('/').map(str::to_string).collect();
    while let Some(part) = rest.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if parts.pop().is_none() {
                    return Ok(None);
                }
                continue;
            }
            _ => {}
        }
        parts.push(part);
        // The last component is the caller's to follow; a link on the way is followed here.
        if rest.iter().all(|p| p.is_empty() || p == ".") {
            continue;
        }
        let path = parts.join("/");
        let Some(entry) = entry_at(dir, reference, &path)? else {
            // Nothing there: the caller reports the whole target as broken.
            continue;
        };
        if entry.mode == SYMLINK {
            *hops += 1;
            if *hops > 40 {
                return Err("a symbolic link in a loop (more than 40 links)".into());
            }
            let inner = String::from_utf8_lossy(&git(dir, &["cat-file", "blob", &entry.object])?)
                .into_owned();
            if inner.starts_with('/') {
                return Ok(None);
            }
            parts.pop();
            for (i, component) in inner.split('/').enumerate() {
                rest.insert(i, component.to_string());
            }
        }
    }
    Ok(Some(parts.join("/")))
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
    let mut hops = 0;
    while hops <= 40 {
        if current.mode != SYMLINK {
            return Ok(current);
        }
        hops += 1;
        let target = String::from_utf8_lossy(&git(dir, &["cat-file", "blob", &current.object])?)
            .into_owned();
        let shown = crate::text::quote_hashed(&target, 200);
        let Some(resolved) = resolve(dir, reference, &current.path, &target, &mut hops)? else {
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
        current = match entry_at(dir, reference, &resolved)? {
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

/// Whether `reference` names a commit in the repository holding `schemas`.
pub fn is_revision(reference: &str, schemas: &Path) -> bool {
    let dir = if schemas.is_dir() {
        schemas
    } else {
        schemas
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{reference}^{{commit}}"),
        ],
    )
    .is_ok()
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
        // The path the user named is read whatever its name, as on disk.
        let named = entry.path == top;
        if named && name.is_none() && entry.mode == SYMLINK {
            // The schema directory itself is a link at that revision: its files are not
            // walked there; never an empty, passing comparison.
            out.refused.push((
                label(&entry.path),
                "the schema directory is a symbolic link at this revision; it is not walked \
                 at a git revision (compare with a checked-out directory instead)"
                    .into(),
            ));
            continue;
        }
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
                Ok(target) if named && target.mode == TREE => out.refused.push((
                    label(&entry.path),
                    "a symbolic link to a directory at this revision, where a file is named".into(),
                )),
                Ok(target) if is_schema_name(base) || named => out.files.push((
                    label(&entry.path),
                    git(&dir, &["cat-file", "blob", &target.object])?,
                )),
                Ok(_) => {}
                Err(why) if is_schema_name(base) || named || name.is_some() => {
                    out.refused.push((label(&entry.path), why))
                }
                Err(_) => {}
            }
            continue;
        }
        // Submodules (commits) and other entries are not schema files.
        if !(is_schema_name(base) || named) || !entry.mode.starts_with("100") {
            continue;
        }
        out.files.push((
            label(&entry.path),
            git(&dir, &["cat-file", "blob", &entry.object])?,
        ));
    }
    Ok(out)
}
