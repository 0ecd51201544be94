//! The files a command line writes (`--output`, `--save-reference`, `--write-baseline`),
//! checked against every other path it names before anything is written: a report
//! written over a schema, the data, a saved profile or the baseline destroys it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The arguments that name a file the command writes.
const OUTPUTS: [&str; 3] = ["output", "save_reference", "write_baseline"];

/// The first output of `matches` (the subcommand `command`'s) that is also another path
/// of the command line, in words; `None` when every output is a file of its own.
pub fn clash(command: &clap::Command, matches: &clap::ArgMatches) -> Option<String> {
    let paths: Vec<(&clap::Arg, &OsStr)> = command
        .get_arguments()
        .filter(|arg| names_paths(arg))
        .filter_map(|arg| {
            let values = matches.try_get_raw(arg.get_id().as_str()).ok()??;
            Some(values.map(move |value| (arg, value)))
        })
        .flatten()
        .collect();
    for (i, (output, written)) in paths.iter().enumerate() {
        if !OUTPUTS.contains(&output.get_id().as_str()) {
            continue;
        }
        let written = Path::new(written);
        for (j, (other, value)) in paths.iter().enumerate() {
            // `VIEW=PATH` and `NAME=PATH` name their path after the first `=`.
            let after_name = value
                .to_str()
                .and_then(|v| v.split_once('='))
                .map(|(_, path)| OsStr::new(path));
            if i != j
                && [Some(*value), after_name]
                    .into_iter()
                    .flatten()
                    .any(|path| same_file(written, Path::new(path)))
            {
                return Some(format!(
                    "{} {}: is also {} {}: writing it would replace that file; give another path",
                    flag(output),
                    arrowfeat_common::clean(&written.display().to_string()),
                    flag(other),
                    arrowfeat_common::clean(&Path::new(value).display().to_string()),
                ));
            }
            let data_dir = after_name.unwrap_or(value);
            if i != j && names_data(other) && inside_data_dir(written, Path::new(data_dir)) {
                return Some(format!(
                    "{} {}: is inside {} {}, a directory whose data files are read as the \
                     table: a file of a data extension written there is read with the data \
                     next time (or replaces some); give a path outside it",
                    flag(output),
                    arrowfeat_common::clean(&written.display().to_string()),
                    flag(other),
                    arrowfeat_common::clean(&Path::new(data_dir).display().to_string()),
                ));
            }
        }
    }
    None
}

/// The command line `words` as far as clap can read it, past the arguments it refuses:
/// each refused argument (an unknown flag, a flag with a value it does not take) is left
/// out and the rest read again, so that `--output` after a typo is still found. `None`
/// when nothing parses.
pub fn parse_past_errors(
    root: &clap::Command,
    words: Vec<std::ffi::OsString>,
) -> Option<clap::ArgMatches> {
    use clap::error::{ContextKind, ContextValue};
    let mut words = words;
    for _ in 0..16 {
        let Err(error) = root.clone().try_get_matches_from(&words) else {
            break;
        };
        let text = |kind| match error.get(kind) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        let (Some(refused), value) = (
            text(ContextKind::InvalidArg),
            text(ContextKind::InvalidValue),
        ) else {
            break;
        };
        // `--data-sample <N>`: the flag, in any of its spellings; `--bogus`: itself.
        let flag = refused
            .split_whitespace()
            .next()
            .unwrap_or(&refused)
            .to_string();
        let short = flag.strip_prefix("--").and_then(|long| {
            root.get_subcommands()
                .flat_map(|c| c.get_arguments())
                .find(|a| a.get_long() == Some(long))
                .and_then(clap::Arg::get_short)
        });
        let is_flag = |w: &str| {
            w == flag
                || w.strip_prefix(flag.as_str())
                    .is_some_and(|v| v.starts_with('='))
                || short.is_some_and(|s| w.strip_prefix('-') == Some(&s.to_string()))
        };
        let before = words.len();
        let mut kept = Vec::with_capacity(words.len());
        let mut skip_value = false;
        for word in words {
            let text = word.to_string_lossy();
            if skip_value {
                skip_value = false;
                if value.as_deref() == Some(text.as_ref()) {
                    continue;
                }
            }
            if is_flag(&text) {
                skip_value = text == flag || short.is_some_and(|s| text == format!("-{s}"));
                continue;
            }
            kept.push(word);
        }
        words = kept;
        if words.len() == before {
            break;
        }
    }
    root.clone()
        .ignore_errors(true)
        .try_get_matches_from(&words)
        .ok()
}

/// Whether `arg`'s values are paths: a positional argument, or a value named as a path.
fn names_paths(arg: &clap::Arg) -> bool {
    arg.is_positional()
        || arg.get_value_names().is_some_and(|names| {
            names
                .iter()
                .any(|n| ["PATH", "FILE", "DIR"].iter().any(|p| n.contains(p)))
        })
}

/// Whether `arg`'s values are data (`[VIEW=]PATH`): a directory of them is a table.
fn names_data(arg: &clap::Arg) -> bool {
    arg.get_value_names()
        .is_some_and(|names| names.iter().any(|n| n.as_str() == "[VIEW=]PATH"))
}

/// Whether `written`, a file of a data extension, would be within the directory `dir`.
fn inside_data_dir(written: &Path, dir: &Path) -> bool {
    if !dir.is_dir() || arrowfeat_udf::sql::files::DataFormat::of_file(written).is_none() {
        return false;
    }
    matches!((normalized(written), normalized(dir)), (Some(w), Some(d)) if w.starts_with(&d))
}

/// How the user spelled `arg`: `--save-reference`, or a positional's name (`NEW`).
fn flag(arg: &clap::Arg) -> String {
    match arg.get_long() {
        Some(long) => format!("--{long}"),
        None => arg
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(|| arg.get_id().to_string(), |n| n.to_string()),
    }
}

/// Whether `a` and `b` are one file: the same file where both exist (links and `..`
/// included), else the same normalized absolute path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    matches!((normalized(a), normalized(b)), (Some(a), Some(b)) if a == b)
}

/// `path` absolute with its links and `..` resolved, as far as it exists: its parent's
/// real path and its own name when the file is not there yet.
fn normalized(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    match absolute.canonicalize() {
        Ok(real) => Some(real),
        Err(_) => Some(
            absolute
                .parent()?
                .canonicalize()
                .ok()?
                .join(absolute.file_name()?),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_by_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ref.json");
        let sub = dir.path().join("d");
        std::fs::create_dir(&sub).unwrap();
        // Not there yet: the same normalized path.
        assert!(same_file(&file, &sub.join("..").join("ref.json")));
        std::fs::write(&file, "x").unwrap();
        #[cfg(unix)]
        {
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(same_file(&file, &link));
        }
        assert!(same_file(&file, &sub.join("../ref.json")));
        assert!(!same_file(&file, &dir.path().join("other.json")));
        assert!(!same_file(Path::new("json"), Path::new("")));
    }

    #[test]
    fn a_data_file_written_into_a_data_directory_is_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("part=a")).unwrap();
        assert!(inside_data_dir(&data.join("part=a/x.parquet"), &data));
        assert!(inside_data_dir(&data.join("profile.json"), &data));
        assert!(inside_data_dir(
            &dir.path().join("data/../data/new.csv"),
            &data
        ));
        // Not a data extension, beside the directory, or the directory is a file.
        assert!(!inside_data_dir(&data.join("report.sarif"), &data));
        assert!(!inside_data_dir(&dir.path().join("profile.json"), &data));
        assert!(!inside_data_dir(
            &dir.path().join("data.json"),
            &dir.path().join("data.parquet")
        ));
    }
}
