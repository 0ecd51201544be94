//! `--feast-repo`: read a Feast feature repo's registry through the installed Feast CLI.
//!
//! The Feast CLI is an external program: it may hang (a registry on an unreachable
//! object store, a prompt). It runs with stdin closed, in its own process group, and is
//! stopped (the whole group) when it has not finished within the timeout
//! (`--feast-timeout`, default [`DEFAULT_TIMEOUT_SECS`]).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arrowfeat_validator::store::{self, StoreMetadata, MAX_REGISTRY_BYTES};

use crate::{CliError, CliResult};

/// How long `feast registry-dump` may run, in seconds, unless `--feast-timeout` says.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;

/// Feast's stderr kept for the error message.
const MAX_STDERR_BYTES: u64 = 1024 * 1024;

/// The Feast CLI to run: `$ARROWFEAT_FEAST`, else `feast` on PATH.
fn feast_command() -> String {
    std::env::var("ARROWFEAT_FEAST").unwrap_or_else(|_| "feast".to_string())
}

/// Runs `feast registry-dump` in `repo` and parses its output, waiting at most
/// [`DEFAULT_TIMEOUT_SECS`].
pub fn registry_of_repo(repo: &Path) -> CliResult<StoreMetadata> {
    registry_of_repo_within(repo, Duration::from_secs(DEFAULT_TIMEOUT_SECS))
}

fn read_limited(
    mut source: impl Read + Send + 'static,
    limit: u64,
) -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = (&mut source)
            .take(limit)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        // Drain the rest so the child never blocks on a full pipe.
        let _ = std::io::copy(&mut source, &mut std::io::sink());
        let _ = send.send(result);
    });
    receive
}

/// Stops the child and everything it started (its process group, on Unix).
fn stop(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `feast registry-dump` in `repo` and parses its output; gives up (and stops
/// Feast) after `timeout`.
pub fn registry_of_repo_within(repo: &Path, timeout: Duration) -> CliResult<StoreMetadata> {
    let shown = repo.display().to_string();
    if !repo.join("feature_store.yaml").is_file() {
        return Err(CliError::usage(format!(
            "--feast-repo {shown}: not a Feast feature repo (no feature_store.yaml)"
        )));
    }
    let feast = feast_command();
    let mut command = Command::new(&feast);
    command
        .arg("registry-dump")
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn().map_err(|e| {
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
    let stdout = read_limited(
        child.stdout.take().expect("piped stdout"),
        MAX_REGISTRY_BYTES + 1,
    );
    let stderr = read_limited(child.stderr.take().expect("piped stderr"), MAX_STDERR_BYTES);
    let deadline = Instant::now() + timeout;
    let timed_out = || {
        CliError::usage(format!(
            "--feast-repo {shown}: `{feast} registry-dump` did not finish within {} s and was stopped; \
             raise the limit with --feast-timeout SECONDS, or pass the output of `feast registry-dump` with --registry",
            timeout.as_secs()
        ))
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                stop(&mut child);
                return Err(timed_out());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                stop(&mut child);
                return Err(CliError::usage(format!(
                    "--feast-repo {shown}: waiting for `{feast}`: {e}"
                )));
            }
        }
    };
    // Feast has exited; something it started may still hold the pipes open.
    let remaining = || deadline.saturating_duration_since(Instant::now());
    let output = stdout.recv_timeout(remaining()).map_err(|_| {
        stop(&mut child);
        timed_out()
    })?;
    let errors = stderr
        .recv_timeout(remaining())
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let output = output.map_err(|e| {
        CliError::usage(format!("--feast-repo {shown}: reading Feast's output: {e}"))
    })?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&errors);
        // Feast ends its tracebacks with the line that says what went wrong.
        let reason = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(CliError::usage(format!(
            "--feast-repo {shown}: `feast registry-dump` failed ({status}): {reason}"
        )));
    }
    if output.len() as u64 > MAX_REGISTRY_BYTES {
        return Err(CliError::usage(format!(
            "--feast-repo {shown}: `feast registry-dump` printed more than {MAX_REGISTRY_BYTES} bytes"
        )));
    }
    store::parse(&output).map_err(|e| {
        CliError::usage(format!(
            "--feast-repo {shown}: `feast registry-dump` output: {e}"
        ))
    })
}
