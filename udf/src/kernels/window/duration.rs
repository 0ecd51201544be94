//! Durations as nanoseconds: interval strings such as `"500ns"`, `"5m"` or `"1h 30m"`
//! read with the one duration grammar of [`arrowfeat_common::duration`] (shared with the
//! validator's schema `ttl`), and the checks of window parameters.

use arrowfeat_common::duration;

use super::super::{KernelError, Result};

/// A duration in the largest unit that divides it, e.g. `5m`, `1500ms`, `-3ns`.
pub use arrowfeat_common::duration::format_nanos;

/// Parses an interval string into nanoseconds with the one duration grammar
/// ([`arrowfeat_common::duration`]): one or more `<number><unit>` terms, with optional
/// spaces, e.g. `"500ns"`, `"1.5s"`, `"1h30m"`, `"5 minutes"`. Fractions must come out as
/// whole nanoseconds. Months and years have no fixed length and are refused.
pub fn parse_duration(function: &'static str, argument: &str, text: &str) -> Result<i64> {
    duration::parse_duration(text).map_err(|e| KernelError::new(function, argument, e.to_string()))
}

/// A window length (`size`, `step`, `period`, `gap`) must be positive.
pub fn ensure_positive(function: &'static str, argument: &str, nanos: i64) -> Result<()> {
    if nanos <= 0 {
        return Err(KernelError::new(
            function,
            argument,
            format!("expected a duration > 0, found {}", format_nanos(nanos)),
        ));
    }
    Ok(())
}

/// `step` must be positive and at most `size` (a larger step would skip events).
pub(crate) fn ensure_hop(function: &'static str, size: i64, step: i64) -> Result<()> {
    ensure_positive(function, "size", size)?;
    ensure_positive(function, "step", step)?;
    if step > size {
        return Err(KernelError::new(
            function,
            "step",
            format!(
                "expected a step <= size ({}), found {}: windows would leave gaps and drop events",
                format_nanos(size),
                format_nanos(step)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<i64> {
        parse_duration("f", "size", text)
    }

    /// The grammar is tested in `arrowfeat_common::duration`; here, that the kernels
    /// read it and name their function and argument.
    #[test]
    fn the_one_grammar_with_the_kernels_names() {
        assert_eq!(parse("1h 30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("-5s").unwrap(), -5_000_000_000);
        let e = parse("5 fortnights").unwrap_err();
        assert_eq!(e.function, "f");
        assert_eq!(e.argument, "size");
        assert_eq!(
            e.message,
            "expected a duration such as \"500ns\", \"250ms\", \"5m\", \"1h 30m\" or \"2 days\" \
             (units: ns, us, ms, s, m, h, d, w), found \"5 fortnights\": unknown unit `fortnights`"
        );
        for ambiguous in ["5M", "5MS", "1h 5Ms"] {
            assert!(parse(ambiguous)
                .unwrap_err()
                .message
                .contains("is ambiguous"));
        }
        assert!(parse("200000d")
            .unwrap_err()
            .message
            .contains("longer than 292 years"));
    }

    /// The shared cases of the one grammar, which a schema's `ttl` reads too
    /// (`validator/tests/ttl.rs`).
    #[test]
    fn the_shared_duration_cases() {
        let cases = include_str!("../../../../common/tests/durations.txt");
        for line in cases.lines() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (text, expected) = line.split_once(" => ").unwrap();
            match (parse(text), expected.strip_prefix("error: ")) {
                (Ok(nanos), None) => assert_eq!(nanos.to_string(), expected, "{text:?}"),
                (Err(e), Some(what)) => assert!(e.message.contains(what), "{text:?}: {e}"),
                (got, _) => panic!("{text:?}: got {got:?}, expected {expected}"),
            }
        }
    }

    #[test]
    fn checks_and_formatting() {
        assert!(ensure_positive("f", "gap", 0)
            .unwrap_err()
            .message
            .contains("found 0ns"));
        let e = ensure_hop("f", 100, 200).unwrap_err();
        assert_eq!(e.argument, "step");
        assert!(e.message.contains("step <= size (100ns), found 200ns"));
        assert_eq!(format_nanos(300_000_000_000), "5m");
        assert_eq!(format_nanos(1_500_000_000), "1500ms");
        assert_eq!(format_nanos(-7), "-7ns");
    }
}
