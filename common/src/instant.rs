//! Instants as people read them: a count of time units since 1970-01-01 as a calendar
//! date and time (proleptic Gregorian, no leap seconds), for any `i64` count, so that a
//! time far outside the range a reader supports can still be named by its date.

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// Days since 1970-01-01 as (year, month, day).
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    // Howard Hinnant's days-to-civil algorithm, in i128 so that no day count overflows.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i128::from(m <= 2);
    // 1 <= m <= 12 and 1 <= d <= 31 by construction.
    (y, m as u32, d as u32)
}

/// `seconds` since 1970-01-01T00:00:00 as `YYYY-MM-DDTHH:MM:SS`.
pub fn date_time_text(seconds: i128) -> String {
    let (y, m, d) = civil_from_days(seconds.div_euclid(86_400));
    let rest = seconds.rem_euclid(86_400);
    // ISO 8601's expanded years: a sign, then at least four digits (-0001, not -001).
    let sign = if y < 0 { "-" } else { "" };
    format!(
        "{sign}{:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        y.unsigned_abs(),
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `value` units of `unit_nanos` nanoseconds each since 1970 as `YYYY-MM-DDTHH:MM:SS`,
/// with the fraction of a second when there is one (`.5`, `.000001`).
pub fn time_value_text(value: i64, unit_nanos: i64) -> String {
    let nanos = i128::from(value) * i128::from(unit_nanos);
    let text = date_time_text(nanos.div_euclid(NANOS_PER_SECOND));
    match nanos.rem_euclid(NANOS_PER_SECOND) {
        0 => text,
        fraction => {
            let digits = format!("{fraction:09}");
            format!("{text}.{}", digits.trim_end_matches('0'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_the_epoch_leap_days_and_before_1970() {
        assert_eq!(date_time_text(0), "1970-01-01T00:00:00");
        assert_eq!(date_time_text(-1), "1969-12-31T23:59:59");
        assert_eq!(date_time_text(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(date_time_text(1_709_294_400), "2024-03-01T12:00:00");
        // 1600-01-01, outside the nanosecond range.
        assert_eq!(date_time_text(-11_676_096_000), "1600-01-01T00:00:00");
        // Day -719529 is 31 December of year -1 (1 BC).
        assert_eq!(date_time_text(-719_529 * 86_400), "-0001-12-31T00:00:00");
        assert_eq!(date_time_text(-62_167_219_200), "0000-01-01T00:00:00");
    }

    #[test]
    fn fractions_and_units() {
        assert_eq!(
            time_value_text(-11_676_096_000_000_000, 1_000),
            "1600-01-01T00:00:00"
        );
        assert_eq!(time_value_text(1_500, 1_000_000), "1970-01-01T00:00:01.5");
        assert_eq!(time_value_text(-1, 1), "1969-12-31T23:59:59.999999999");
        assert_eq!(
            time_value_text(1, 86_400_000_000_000),
            "1970-01-02T00:00:00"
        );
    }

    #[test]
    fn every_i64_count_has_a_date() {
        for unit in [1, 1_000, 1_000_000, 1_000_000_000, 86_400_000_000_000] {
            for value in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX] {
                let text = time_value_text(value, unit);
                assert!(text.contains('T'), "{value} x {unit}: {text}");
            }
        }
        assert!(time_value_text(i64::MAX, 1_000_000_000).starts_with("292277026596-12-04"));
    }
}
