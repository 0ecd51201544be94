//! A feature view's time to live, in whole seconds: read from a schema's `ttl` with the
//! one duration grammar of [`arrowfeat_common::duration`] (the grammar of window sizes,
//! SQL, Python and `training-set --ttl`), range-checked, and shown in reports.

use arrowfeat_common::duration::{self, ACCEPTED, NANOS_PER_SECOND};

use crate::text::quote_hashed;

/// The longest TTL a Feast registry can hold: protobuf `Duration` ends at 10,000 years
/// (315,576,000,000 s). Larger values are refused rather than wrapped or clamped.
pub const MAX_TTL_SECONDS: u64 = 315_576_000_000;

/// A `ttl` written as a duration (`90s`, `6h`, `1d12h`, `1h 30m`, `2 days`) in whole
/// seconds. What the kernels accept as a duration is accepted here, and what they refuse
/// is refused (months, `M`/`MS`, unknown units). A duration that is negative, not a whole
/// number of seconds (TTLs are compared in whole seconds) or beyond 2^64 - 1 seconds is
/// refused too, with a message that quotes the value; [`MAX_TTL_SECONDS`] is checked by
/// the caller.
pub fn parse_duration_seconds(text: &str) -> Result<u64, String> {
    let quoted = || quote_hashed(text, 40);
    let out_of_range = || {
        format!(
            "ttl `{}` is out of range: more than {} s",
            quoted(),
            u64::MAX
        )
    };
    let nanos = match duration::parse_exact(text) {
        Ok(nanos) => nanos,
        Err(error) if error.too_large => return Err(out_of_range()),
        Err(error) => {
            return Err(format!(
                "ttl `{}` is not a duration: {}; expected seconds or {ACCEPTED}",
                quoted(),
                quote_hashed(&error.problem, 120)
            ))
        }
    };
    if nanos < 0 {
        return Err(format!(
            "ttl `{}` is negative: expected 0 (no expiry) or more",
            quoted()
        ));
    }
    if nanos % NANOS_PER_SECOND != 0 {
        return Err(format!(
            "ttl `{}` is not a whole number of seconds: TTLs are compared in whole seconds",
            quoted()
        ));
    }
    u64::try_from(nanos / NANOS_PER_SECOND).map_err(|_| out_of_range())
}

/// Seconds as the shortest duration string (`86400` → `1d`), for reports.
pub fn format_duration(seconds: u64) -> String {
    if seconds == 0 {
        return "0s (no expiry)".into();
    }
    let mut rest = seconds;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_read_the_kernels_grammar_in_whole_seconds() {
        for (text, seconds) in [
            ("90s", 90),
            ("15m", 900),
            ("1d12h", 129_600),
            ("1h 30m", 5_400),
            ("1 hour, 30 minutes", 5_400),
            ("2 days", 172_800),
            ("1.5m", 90),
            ("1000ms", 1),
            ("0s", 0),
            ("2W", 1_209_600),
        ] {
            assert_eq!(parse_duration_seconds(text), Ok(seconds), "{text}");
        }
        for (text, why) in [
            ("soon", "not a duration: expected a number at \"soon\""),
            ("5", "the number 5 has no unit"),
            ("1 month", "`month` has no fixed length"),
            ("5M", "`M` is ambiguous"),
            ("-5s", "is negative"),
            ("1500ms", "not a whole number of seconds"),
            ("99999999999999999999s", "out of range"),
            (
                "999999999999999999999999999999999999999999w",
                "out of range",
            ),
        ] {
            let error = parse_duration_seconds(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn long_values_are_quoted_short() {
        let error = parse_duration_seconds(&format!("1s {}", "x".repeat(10_000))).unwrap_err();
        assert!(error.len() < 600, "{error}");
    }

    #[test]
    fn durations_are_shown_in_the_largest_units() {
        assert_eq!(format_duration(0), "0s (no expiry)");
        assert_eq!(format_duration(86_400), "1d");
        assert_eq!(format_duration(93_784), "1d2h3m4s");
    }
}
