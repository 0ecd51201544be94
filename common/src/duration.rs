//! The one duration grammar: window sizes and periods (SQL, Python, `training-set`), a
//! point-in-time TTL, and a feature schema's `ttl` are all read by [`parse_exact`].
//!
//! A duration is one or more `<number><unit>` terms, with optional spaces and commas
//! between them and an optional leading `-`: `"500ns"`, `"1.5s"`, `"1h30m"`, `"1h 30m"`,
//! `"1 hour, 30 minutes"`, `"2 Days"`. Units (any case): `ns`, `us`/`µs`, `ms`, `s`,
//! `m`/`min`, `h`/`hr`, `d`, `w`, and their words (`nsec`, `seconds`, `minutes`, `days`,
//! `weeks`...). A fraction must come out as whole nanoseconds. Refused: months and years
//! (no fixed length), and `M`, `MS`, `Ms` (pandas' month end and month start, which here
//! would read as minutes and milliseconds).
//!
//! Each user decides what range it accepts: the kernels want `i64` nanoseconds
//! ([`parse_duration`], up to about 292 years), a schema's `ttl` whole seconds up to
//! 10,000 years (protobuf's `Duration`).

use std::fmt;

const NANOS_PER_UNIT: &[(&[&str], i128)] = &[
    (&["ns", "nsec", "nsecs", "nanosecond", "nanoseconds"], 1),
    (
        &["us", "µs", "usec", "usecs", "microsecond", "microseconds"],
        1_000,
    ),
    (
        &["ms", "msec", "msecs", "millisecond", "milliseconds"],
        1_000_000,
    ),
    (&["s", "sec", "secs", "second", "seconds"], 1_000_000_000),
    (&["m", "min", "mins", "minute", "minutes"], 60_000_000_000),
    (&["h", "hr", "hrs", "hour", "hours"], 3_600_000_000_000),
    (&["d", "day", "days"], 86_400_000_000_000),
    (&["w", "week", "weeks"], 604_800_000_000_000),
];

const CALENDAR_UNITS: &[&str] = &["mon", "mons", "month", "months", "y", "year", "years"];

/// Nanoseconds in a second.
pub const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// What the grammar accepts, for messages.
pub const ACCEPTED: &str =
    "a duration such as \"500ns\", \"250ms\", \"5m\", \"1h 30m\" or \"2 days\" \
     (units: ns, us, ms, s, m, h, d, w)";

/// Why a text is not a duration (or not one in range).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError {
    /// The text as given (raw: a message that shows it must quote it).
    pub text: String,
    /// What is wrong, e.g. ``unknown unit `fortnights` ``; quotes parts of the text raw.
    pub problem: String,
    /// The value is well-formed but too large (an overflow), rather than malformed.
    pub too_large: bool,
}

impl fmt::Display for DurationError {
    /// `expected a duration such as ..., found "TEXT": PROBLEM`, as the kernels say it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected {ACCEPTED}, found \"{}\": {}",
            self.text, self.problem
        )
    }
}

impl std::error::Error for DurationError {}

/// Parses `text` into exact nanoseconds, at any length the grammar can write (128 bits;
/// a term or sum beyond them is an error with `too_large`). See the [module](self) for
/// the grammar.
pub fn parse_exact(text: &str) -> Result<i128, DurationError> {
    let error = |problem: String, too_large: bool| DurationError {
        text: text.to_string(),
        problem,
        too_large,
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(error("it is empty".into(), false));
    }
    let negative = if let Some(r) = rest.strip_prefix('-') {
        rest = r.trim_start();
        true
    } else {
        false
    };
    if rest.is_empty() {
        return Err(error("expected a number after `-`".into(), false));
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        if number.is_empty() {
            return Err(error(format!("expected a number at \"{rest}\""), false));
        }
        let after = after.trim_start();
        let unit_len = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(error(format!("the number {number} has no unit"), false));
        }
        // pandas reads these as month end and month start; here they would be minutes
        // and milliseconds, a window 43,000 times too short or too long.
        if matches!(unit, "M" | "MS" | "Ms") {
            return Err(error(
                format!(
                    "`{unit}` is ambiguous: write `m` or `min` for minutes, `ms` for \
                     milliseconds (months have no fixed length)"
                ),
                false,
            ));
        }
        let lower = unit.to_lowercase();
        if CALENDAR_UNITS.contains(&lower.as_str()) {
            return Err(error(
                format!("`{unit}` has no fixed length; use days or weeks"),
                false,
            ));
        }
        let Some(&(_, scale)) = NANOS_PER_UNIT
            .iter()
            .find(|(names, _)| names.contains(&lower.as_str()))
        else {
            return Err(error(format!("unknown unit `{unit}`"), false));
        };
        let term = match term_nanos(number, scale) {
            Term::Nanos(nanos) => nanos,
            Term::Malformed => {
                return Err(error(format!("`{number}` is not a number"), false));
            }
            Term::Inexact => {
                return Err(error(
                    format!("{number}{unit} is not a whole number of nanoseconds"),
                    false,
                ));
            }
            Term::TooLarge => {
                return Err(error(format!("{number}{unit} is too large"), true));
            }
        };
        total = total
            .checked_add(term)
            .ok_or_else(|| error("it is too large".into(), true))?;
        rest = after.trim_start().trim_start_matches(',').trim_start();
    }
    Ok(if negative { -total } else { total })
}

/// Parses `text` into `i64` nanoseconds (about ±292 years), as the window kernels and
/// the point-in-time join hold durations.
pub fn parse_duration(text: &str) -> Result<i64, DurationError> {
    let nanos = parse_exact(text)?;
    i64::try_from(nanos).map_err(|_| DurationError {
        text: text.to_string(),
        problem: "it is longer than 292 years (the range of i64 nanoseconds)".into(),
        too_large: true,
    })
}

enum Term {
    Nanos(i128),
    Malformed,
    Inexact,
    TooLarge,
}

/// `number` (decimal digits with an optional fraction) times `scale`, exactly.
fn term_nanos(number: &str, scale: i128) -> Term {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Term::Malformed;
    }
    // Digits only from here on (the caller took digits and dots).
    let whole: i128 = if whole.is_empty() {
        0
    } else {
        match whole.parse() {
            Ok(whole) => whole,
            Err(_) => return Term::TooLarge,
        }
    };
    let Some(mut nanos) = whole.checked_mul(scale) else {
        return Term::TooLarge;
    };
    // Trailing zeros of a fraction change nothing (`1.500000000000000000000s`).
    let fraction = fraction.trim_end_matches('0');
    if !fraction.is_empty() {
        // Every scale is at most 10^15 times a small factor: a fraction of more than
        // 18 significant digits cannot be whole nanoseconds of any unit.
        if fraction.len() > 18 {
            return Term::Inexact;
        }
        let denominator = 10i128.pow(fraction.len() as u32);
        let numerator = match fraction.parse::<i128>() {
            Ok(n) => n * scale, // < 10^18 * 10^15: no overflow
            Err(_) => return Term::Malformed,
        };
        if numerator % denominator != 0 {
            return Term::Inexact;
        }
        let Some(sum) = nanos.checked_add(numerator / denominator) else {
            return Term::TooLarge;
        };
        nanos = sum;
    }
    Term::Nanos(nanos)
}

/// A duration in the largest unit that divides it, e.g. `5m`, `1500ms`, `-3ns`: text
/// that [`parse_duration`] reads back to the same value.
pub fn format_nanos(nanos: i64) -> String {
    const UNITS: &[(i64, &str)] = &[
        (604_800_000_000_000, "w"),
        (86_400_000_000_000, "d"),
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    if nanos == 0 {
        return "0ns".into();
    }
    for &(scale, name) in UNITS {
        if nanos % scale == 0 {
            return format!("{}{name}", nanos / scale);
        }
    }
    format!("{nanos}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<i64, DurationError> {
        parse_duration(text)
    }

    #[test]
    fn units_and_compound_terms() {
        assert_eq!(parse("500ns").unwrap(), 500);
        assert_eq!(parse("10us").unwrap(), 10_000);
        assert_eq!(parse("10µs").unwrap(), 10_000);
        assert_eq!(parse("250ms").unwrap(), 250_000_000);
        assert_eq!(parse("5m").unwrap(), 300_000_000_000);
        assert_eq!(parse("5 minutes").unwrap(), 300_000_000_000);
        assert_eq!(parse("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("1h 30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("1d12h").unwrap(), 129_600_000_000_000);
        assert_eq!(parse("1 hour, 30 minutes").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse("1.500000000000000000000000s").unwrap(), 1_500_000_000);
        assert_eq!(parse(".5s").unwrap(), 500_000_000);
        assert_eq!(parse(" 2 Days ").unwrap(), 172_800_000_000_000);
        assert_eq!(parse("-5s").unwrap(), -5_000_000_000);
        assert_eq!(parse("0s").unwrap(), 0);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let message = |t: &str| parse(t).unwrap_err().to_string();
        assert!(
            message("5").contains("the number 5 has no unit"),
            "{}",
            message("5")
        );
        assert!(message("5 fortnights").contains("unknown unit `fortnights`"));
        assert!(message("1 month").contains("`month` has no fixed length"));
        assert!(message("1.5ns").contains("not a whole number of nanoseconds"));
        assert!(message("1.2.3s").contains("`1.2.3` is not a number"));
        assert!(message("").contains("it is empty"));
        assert!(message(" - ").contains("expected a number after `-`"));
        assert!(message("300y").contains("no fixed length"));
        assert!(message("200000d").contains("longer than 292 years"));
        assert!(message("m").contains("expected a number at \"m\""));
        assert!(message("5 fortnights").starts_with("expected a duration such as"));
        // pandas' month end and month start; Spark's upper-case words still read.
        for ambiguous in ["5M", "5MS", "1h 5Ms"] {
            assert!(message(ambiguous).contains("is ambiguous"), "{ambiguous}");
        }
        assert_eq!(parse("5 MINUTES").unwrap(), 300_000_000_000);
        assert_eq!(parse("5MIN").unwrap(), 300_000_000_000);
        assert_eq!(parse("5H").unwrap(), 18_000_000_000_000);
    }

    #[test]
    fn overflow_is_an_error_that_says_so() {
        for text in [
            "200000d",
            "99999999999999999999s",
            "1ns 170141183460469231731687303715884105727ns",
            "999999999999999999999999999999999999999999w",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.too_large, "{text}: {e}");
        }
        // Exact at any length the grammar writes: 10,000 years is a valid exact value.
        assert_eq!(
            parse_exact("521775w").unwrap(),
            521_775 * 604_800 * NANOS_PER_SECOND
        );
        assert!(!parse_exact("1 fortnight").unwrap_err().too_large);
    }

    #[test]
    fn formatting_reads_back() {
        assert_eq!(format_nanos(300_000_000_000), "5m");
        assert_eq!(format_nanos(1_500_000_000), "1500ms");
        assert_eq!(format_nanos(-7), "-7ns");
        assert_eq!(format_nanos(0), "0ns");
        for nanos in [
            1,
            999,
            1_000,
            86_400_000_000_000,
            -604_800_000_000_000,
            i64::MAX,
            i64::MIN + 1,
        ] {
            assert_eq!(parse(&format_nanos(nanos)).unwrap(), nanos);
        }
    }
}
