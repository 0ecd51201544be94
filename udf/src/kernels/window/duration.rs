//! Durations as nanoseconds: parsing interval strings such as `"500ns"`, `"5m"` or
//! `"1h 30m"`, and checking window parameters.

use super::super::{KernelError, Result};

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

const ACCEPTED: &str = "a duration such as \"500ns\", \"250ms\", \"5m\", \"1h 30m\" or \"2 days\" \
     (units: ns, us, ms, s, m, h, d, w)";

/// Parses an interval string into nanoseconds: one or more `<number><unit>` terms, with
/// optional spaces, e.g. `"500ns"`, `"1.5s"`, `"1h30m"`, `"5 minutes"`. Fractions must
/// come out as whole nanoseconds. Months and years have no fixed length and are refused.
pub fn parse_duration(function: &'static str, argument: &str, text: &str) -> Result<i64> {
    let error = |what: String| {
        KernelError::new(
            function,
            argument,
            format!("expected {ACCEPTED}, found \"{text}\": {what}"),
        )
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(error("it is empty".into()));
    }
    let negative = if let Some(r) = rest.strip_prefix('-') {
        rest = r.trim_start();
        true
    } else {
        false
    };
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        if number.is_empty() {
            return Err(error(format!("expected a number at \"{rest}\"")));
        }
        let after = after.trim_start();
        let unit_len = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(error(format!("the number {number} has no unit")));
        }
        // pandas reads these as month end and month start; here they would be minutes
        // and milliseconds, a window 43,000 times too short or too long.
        if matches!(unit, "M" | "MS" | "Ms") {
            return Err(error(format!(
                "`{unit}` is ambiguous: write `m` or `min` for minutes, `ms` for \
                 milliseconds (months have no fixed length)"
            )));
        }
        let lower = unit.to_lowercase();
        if CALENDAR_UNITS.contains(&lower.as_str()) {
            return Err(error(format!(
                "`{unit}` has no fixed length; use days or weeks"
            )));
        }
        let Some(&(_, scale)) = NANOS_PER_UNIT
            .iter()
            .find(|(names, _)| names.contains(&lower.as_str()))
        else {
            return Err(error(format!("unknown unit `{unit}`")));
        };
        let term = term_nanos(number, scale).ok_or_else(|| {
            error(format!(
                "{number}{unit} is not a whole number of nanoseconds or is too large"
            ))
        })?;
        total = total.saturating_add(term);
        if total > i64::MAX as i128 {
            return Err(error(
                "it is longer than 292 years (the range of i64 nanoseconds)".into(),
            ));
        }
        rest = after.trim_start().trim_start_matches(',').trim_start();
    }
    let total = if negative { -total } else { total };
    Ok(total as i64)
}

/// `number` (decimal digits with an optional fraction) times `scale`, exactly.
fn term_nanos(number: &str, scale: i128) -> Option<i128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) || fraction.len() > 18 {
        return None;
    }
    let whole: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut nanos = whole.checked_mul(scale)?;
    if !fraction.is_empty() {
        let denominator = 10i128.pow(fraction.len() as u32);
        let numerator = fraction.parse::<i128>().ok()?.checked_mul(scale)?;
        if numerator % denominator != 0 {
            return None;
        }
        nanos = nanos.checked_add(numerator / denominator)?;
    }
    Some(nanos)
}

/// A window length (`size`, `step`, `period`, `gap`) must be positive.
pub(crate) fn ensure_positive(function: &'static str, argument: &str, nanos: i64) -> Result<()> {
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

/// A duration in the largest unit that divides it, e.g. `5m`, `1500ms`, `-3ns`.
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

    fn parse(text: &str) -> Result<i64> {
        parse_duration("f", "size", text)
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
        assert_eq!(parse("1 hour, 30 minutes").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse(" 2 Days ").unwrap(), 172_800_000_000_000);
        assert_eq!(parse("-5s").unwrap(), -5_000_000_000);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let message = |t: &str| parse(t).unwrap_err().message;
        assert!(
            message("5").contains("the number 5 has no unit"),
            "{}",
            message("5")
        );
        assert!(message("5 fortnights").contains("unknown unit `fortnights`"));
        assert!(message("1 month").contains("`month` has no fixed length"));
        assert!(message("1.5ns").contains("not a whole number of nanoseconds"));
        assert!(message("").contains("it is empty"));
        assert!(message("300y").contains("no fixed length"));
        assert!(message("200000d").contains("longer than 292 years"));
        // pandas' month end and month start; Spark's upper-case words still read.
        for ambiguous in ["5M", "5MS", "1h 5Ms"] {
            assert!(message(ambiguous).contains("is ambiguous"), "{ambiguous}");
        }
        assert_eq!(parse("5 MINUTES").unwrap(), 300_000_000_000);
        assert_eq!(parse("5MIN").unwrap(), 300_000_000_000);
        assert_eq!(parse("5H").unwrap(), 18_000_000_000_000);
        let e = parse("m").unwrap_err();
        assert_eq!(e.function, "f");
        assert_eq!(e.argument, "size");
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
