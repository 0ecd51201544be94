//! Schema files of a git revision (`--against origin/main`), read with the `git` program.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
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

/// (`REF:path`, bytes) of every schema file (`*.yaml`, `*.yml`) under `schemas` at
/// `reference`.
pub fn schema_sources(reference: &str, schemas: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let (dir, pathspec) = if schemas.is_dir() {
        (schemas.to_path_buf(), ".".to_string())
    } else {
        let parent = schemas
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = schemas
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent.to_path_buf(), name)
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
    let listing = git(
        &dir,
        &[
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            reference,
            "--",
            &pathspec,
        ],
    )?;
    let mut sources = Vec::new();
    for name in listing.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let bytes = git(&dir, &["show", &format!("{reference}:./{name}")])?;
        sources.push((format!("{reference}:{}", dir.join(&name).display()), bytes));
    }
    Ok(sources)
}
