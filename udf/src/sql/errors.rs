//! DataFusion errors in words for users: the Parquet reader's own text without the
//! prefixes each layer adds and without the Rust structures some of its errors print.

use datafusion::arrow::error::ArrowError;
use datafusion::common::DataFusionError;

/// What went wrong, as a user should read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCause {
    /// The Parquet reader (or writer) failed: a file is corrupt or holds what it cannot
    /// handle. The text is the crate's own, cleaned.
    Parquet(String),
    /// Anything else: the innermost error's message.
    Other(String),
}

/// The cause of `e`, from its innermost error.
pub fn error_cause(e: &DataFusionError) -> ErrorCause {
    let root = e.find_root();
    let parquet = match root {
        // Kernel errors already name the function and argument; planning errors say what
        // is wrong without the "Error during planning: " label.
        DataFusionError::Execution(message) | DataFusionError::Plan(message) => {
            return ErrorCause::Other(
                function_call_error(message).unwrap_or_else(|| message.clone()),
            )
        }
        DataFusionError::ParquetError(e) => e.to_string(),
        DataFusionError::ArrowError(e, _) => match e.as_ref() {
            ArrowError::ParquetError(text) => text.clone(),
            _ => return ErrorCause::Other(root.to_string()),
        },
        _ => return ErrorCause::Other(root.to_string()),
    };
    let text = strip_prefixes(&parquet);
    // A filter pushed into the Parquet scan fails inside the reader: that is the query's
    // error (a kernel's, a cast's), which the reader prints as a Rust value.
    if let Some(inner) = text
        .strip_prefix("Compute error: Error evaluating filter predicate: ")
        .or_else(|| text.strip_prefix("Error evaluating filter predicate: "))
    {
        return ErrorCause::Other(first_string_literal(inner).unwrap_or_else(|| inner.into()));
    }
    ErrorCause::Parquet(without_rust_structures(text))
}

/// DataFusion's planning error about a call of an arrowfeat function, in one line: the
/// function, what it expects, what it was given, and a correct call from its
/// documentation. A window function called without `OVER` says so. `None` for any other
/// error, and for calls of functions that are not arrowfeat's.
pub fn function_call_error(message: &str) -> Option<String> {
    let between = |start: &str, end: &str| -> Option<String> {
        let rest = message.split_once(start)?.1;
        Some(rest.split_once(end)?.0.to_string())
    };
    let docs = super::function_docs();
    let doc_of = |name: &str| docs.iter().find(|d| d.name == name);
    // "Invalid function 'rolling_sum'.\nDid you mean 'list_sum'?"
    if let Some(name) = between("Invalid function '", "'") {
        let doc = doc_of(&name).filter(|d| d.kind == super::FunctionKind::Window)?;
        let syntax = &doc.documentation.syntax_example;
        let call = match syntax.contains(" OVER ") {
            true => syntax.clone(),
            false => format!("{syntax} OVER (PARTITION BY key ORDER BY ts)"),
        };
        return Some(format!(
            "{name} is a window function: expected a call with OVER, found none; call it as {call}"
        ));
    }
    // "Failed to coerce arguments to satisfy a call to 'f' function: coercion from A, B to
    // the signature ... failed. ... Candidate functions: f(x: Float64, ...)"
    let (name, found, expected) = if let Some(name) = between(
        "Failed to coerce arguments to satisfy a call to '",
        "' function",
    ) {
        let found = between("coercion from ", " to the signature")?;
        let expected = message
            .rsplit_once("Candidate functions:")
            .map(|(_, c)| c.split_whitespace().collect::<Vec<_>>().join(" "))?;
        (name, found, expected)
    } else if let Some(name) = between("Function '", "' user-defined coercion failed") {
        // Our own coercion's words: "f: no signature accepts (A, B); accepted: ...".
        let found = between("no signature accepts (", "); accepted: ")?;
        let expected = between("); accepted: ", ". No function matches")?;
        (name, found, expected)
    } else {
        return None;
    };
    let doc = doc_of(&name)?;
    let example = doc
        .documentation
        .sql_example
        .as_deref()
        .and_then(|e| e.lines().next())
        .map(|line| {
            line.trim_start_matches("> ")
                .trim_end_matches(';')
                .to_string()
        });
    let found = if found.is_empty() {
        "no arguments".to_string()
    } else {
        format!("{name}({found})")
    };
    Some(match example {
        Some(example) => {
            format!("{name}: expected {expected}, found {found}; for example: {example}")
        }
        None => format!("{name}: expected {expected}, found {found}"),
    })
}

fn strip_prefixes(text: &str) -> &str {
    let mut rest = text.trim();
    while let Some(inner) = [
        "Parquet error: ",
        "Parquet argument error: ",
        "External: ",
        "Arrow: ",
    ]
    .iter()
    .find_map(|p| rest.strip_prefix(p))
    {
        rest = inner.trim_start();
    }
    rest
}

/// The flatbuffer decoder of the embedded Arrow schema prints its errors as Rust
/// structures (`RangeOutOfBounds { range: .. }`): said in words instead. Other text is
/// kept whole, braces included (a column may be named `a {x}`).
fn without_rust_structures(text: &str) -> String {
    if text.contains("Unable to get root as message stored in ARROW:schema")
        || text.contains("the message is not Arrow Schema")
    {
        return "the Arrow schema stored in its metadata (ARROW:schema) is corrupt".into();
    }
    text.to_string()
}

/// The first Rust string literal in a `Debug` rendering such as
/// `Execution("min_max_scale: argument ..")`, unescaped.
fn first_string_literal(text: &str) -> Option<String> {
    let start = text.find('"')? + 1;
    let mut out = String::new();
    let mut chars = text[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                // `\u{..}` stays as written: it is already a visible escape.
                'u' => out.push_str("\\u"),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::parquet::errors::ParquetError;

    #[test]
    fn parquet_errors_lose_prefixes_and_rust_structures_only() {
        let parquet = |text: &str| {
            error_cause(&DataFusionError::ParquetError(Box::new(
                ParquetError::General(text.into()),
            )))
        };
        assert_eq!(
            parquet("Parquet error: Invalid Parquet file. Corrupt footer"),
            ErrorCause::Parquet("Invalid Parquet file. Corrupt footer".into())
        );
        assert_eq!(
            parquet("Arrow: Unable to get root as message stored in ARROW:schema: X { a: 1 }"),
            ErrorCause::Parquet(
                "the Arrow schema stored in its metadata (ARROW:schema) is corrupt".into()
            )
        );
        assert_eq!(
            parquet("incompatible arrow schema, expected field named a {x} but got a {y}"),
            ErrorCause::Parquet(
                "incompatible arrow schema, expected field named a {x} but got a {y}".into()
            )
        );
        assert_eq!(
            parquet(
                "Arrow: Compute error: Error evaluating filter predicate: \
                 Execution(\"f: argument `x`: expected \\\"a\\\"\")"
            ),
            ErrorCause::Other("f: argument `x`: expected \"a\"".into())
        );
        assert_eq!(
            error_cause(&DataFusionError::Execution("f: argument `x`: bad".into())),
            ErrorCause::Other("f: argument `x`: bad".into())
        );
    }
}
