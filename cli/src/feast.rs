//! `--feast-repo`: read a Feast feature repo's registry through the installed Feast CLI.

use std::path::Path;
use std::process::Command;

use arrowfeat_validator::store::{self, StoreMetadata};

use crate::{CliError, CliResult};

/// The Feast CLI to run: `$ARROWFEAT_FEAST`, else `feast` on PATH.
fn feast_command() -> String {
    std::env::var("ARROWFEAT_FEAST").unwrap_or_else(|_| "feast".to_string())
}

/// Runs `feast registry-dump` in `repo` and parses its output.
pub fn registry_of_repo(repo: &Path) -> CliResult<StoreMetadata> {
    if !repo.join("feature_store.yaml").is_file() {
        return Err(CliError::usage(format!(
            "--feast-repo {}: not a Feast feature repo (no feature_store.yaml)",
            repo.display()
        )));
    }
    let feast = feast_command();
    let output = Command::new(&feast)
        .arg("registry-dump")
        .current_dir(repo)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CliError::usage(format!(
                "--feast-repo needs the Feast CLI, and `{feast}` was not found: install it with \
                 `pip install feast` (or point ARROWFEAT_FEAST at it), or pass the output of \
                 `feast registry-dump` with --registry"
            ))
            } else {
                CliError::usage(format!("--feast-repo: cannot run `{feast}`: {e}"))
            }
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // Feast ends its tracebacks with the line that says what went wrong.
        let reason = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(CliError::usage(format!(
            "--feast-repo {}: `feast registry-dump` failed ({}): {reason}",
            repo.display(),
            output.status
        )));
    }
    store::parse(&output.stdout).map_err(|e| {
        CliError::usage(format!(
            "--feast-repo {}: `feast registry-dump` output: {e}",
            repo.display()
        ))
    })
}
