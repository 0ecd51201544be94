//! `arrowfeat functions`: the function catalogue, from the UDFs' own documentation.

use std::fmt::Write;

use arrowfeat_udf::sql::{FunctionDoc, FunctionKind};
use arrowfeat_validator::suggest::closest;

use crate::{CliError, CliResult};

/// How the catalogue is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CatalogueFormat {
    /// Plain text for the terminal.
    Text,
    /// Markdown, as in docs/functions.md.
    Markdown,
}

fn sorted_udfs() -> Vec<FunctionDoc> {
    arrowfeat_udf::function_docs()
}

fn kind_note(udf: &FunctionDoc) -> &'static str {
    match udf.kind {
        FunctionKind::Scalar => "",
        FunctionKind::Window => " (window function)",
        FunctionKind::Table => " (table function, in FROM)",
    }
}

fn describe_text(udf: &FunctionDoc, out: &mut String) {
    let doc = &udf.documentation;
    let _ = writeln!(out, "{}\n", doc.syntax_example);
    let _ = writeln!(out, "{}\n", doc.description);
    if let Some(args) = &doc.arguments {
        let _ = writeln!(out, "Arguments:");
        for (name, text) in args {
            let _ = writeln!(out, "  {name:<12} {text}");
        }
        let _ = writeln!(out);
    }
    if let Some(example) = &doc.sql_example {
        let _ = writeln!(out, "Example:\n{example}");
    }
}

fn describe_markdown(udf: &FunctionDoc, out: &mut String) {
    let doc = &udf.documentation;
    let _ = writeln!(out, "## `{}`\n", udf.name);
    let _ = writeln!(out, "{}\n", doc.description);
    let _ = writeln!(out, "```sql\n{}\n```\n", doc.syntax_example);
    if let Some(args) = &doc.arguments {
        let _ = writeln!(out, "| argument | meaning |\n| --- | --- |");
        for (name, text) in args {
            let _ = writeln!(out, "| `{name}` | {text} |");
        }
        let _ = writeln!(out);
    }
    if let Some(example) = &doc.sql_example {
        let _ = writeln!(out, "```text\n{example}\n```\n");
    }
}

/// The first sentence of a description, cut to fit one terminal line.
fn summary(description: &str) -> String {
    const MAX: usize = 90;
    // A sentence ends at ". " after a non-dot, so "b0 < ... < bn" does not end one.
    let bytes = description.as_bytes();
    let end = (1..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i] == b'.' && bytes[i + 1] == b' ' && bytes[i - 1] != b'.')
        .unwrap_or(description.len());
    let sentence = description[..end].trim_end_matches('.');
    if sentence.chars().count() <= MAX {
        sentence.to_string()
    } else {
        let cut: String = sentence.chars().take(MAX - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The catalogue, or one function's page when `name` is given.
pub fn catalogue(name: Option<&str>, format: CatalogueFormat) -> CliResult<String> {
    let udfs = sorted_udfs();
    let mut out = String::new();
    match name {
        Some(name) => {
            let Some(udf) = udfs
                .iter()
                .find(|u| u.name.as_str().eq_ignore_ascii_case(name))
            else {
                let lower = name.to_ascii_lowercase();
                let closest = udfs
                    .iter()
                    .find(|u| u.name.as_str().contains(&lower))
                    .map(|u| u.name.as_str())
                    .or_else(|| closest(&lower, udfs.iter().map(|u| u.name.as_str())))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                return Err(CliError::usage(format!(
                    "functions: no function named `{name}`{closest} (`arrowfeat functions` lists them all)"
                )));
            };
            match format {
                CatalogueFormat::Text => describe_text(udf, &mut out),
                CatalogueFormat::Markdown => describe_markdown(udf, &mut out),
            }
        }
        None => match format {
            CatalogueFormat::Text => {
                // Summaries stay in one column: a signature wider than it gets a line
                // of its own, as `cargo --list` and `ruff linter` do.
                const COLUMN: usize = 46;
                for udf in &udfs {
                    let doc = &udf.documentation;
                    let signature = doc.syntax_example.as_str();
                    if signature.chars().count() > COLUMN {
                        let _ = writeln!(out, "{signature}");
                        let _ = writeln!(out, "{:<COLUMN$} {}", "", summary(&doc.description));
                    } else {
                        let _ = writeln!(out, "{signature:<COLUMN$} {}", summary(&doc.description));
                    }
                }
                let _ = writeln!(
                    out,
                    "\n`arrowfeat functions NAME` shows arguments and an example."
                );
            }
            CatalogueFormat::Markdown => {
                let _ = writeln!(
                    out,
                    "# Function reference\n\n<!-- generated by `arrowfeat functions --format markdown`; \
                     a test keeps it in sync -->\n\nEvery function is registered in DataFusion by \
                     `arrowfeat_udf::register_all(&ctx)` and available in `arrowfeat sql`. Window \
                     functions are called with `OVER (PARTITION BY ... ORDER BY ...)`; see \
                     [windows.md](windows.md) for their semantics.\n"
                );
                for udf in &udfs {
                    let _ = writeln!(out, "- [`{}`](#{}){}", udf.name, udf.name, kind_note(udf));
                }
                let _ = writeln!(out);
                for udf in &udfs {
                    describe_markdown(udf, &mut out);
                }
            }
        },
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_name_suggests_the_closest() {
        let err = catalogue(Some("hash_buckets"), CatalogueFormat::Text).unwrap_err();
        assert_eq!(
            err.message,
            "functions: no function named `hash_buckets`; did you mean `hash_bucket`? (`arrowfeat functions` lists them all)"
        );
        assert_eq!(err.exit_code, 2);
    }

    #[test]
    fn docs_functions_md_is_generated_from_the_udfs() {
        let generated = catalogue(None, CatalogueFormat::Markdown).unwrap();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/functions.md");
        if std::env::var_os("ARROWFEAT_UPDATE_DOCS").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/functions.md is stale: run `ARROWFEAT_UPDATE_DOCS=1 cargo test -p arrowfeat-cli`"
        );
    }
}
