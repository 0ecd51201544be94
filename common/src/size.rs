//! Sizes in bytes as people write them: `512MiB`, `2 GB`, `1.5G`, `1048576`.
//!
//! `KiB`, `MiB`, `GiB`, `TiB` and the bare `K`, `M`, `G`, `T` are powers of 1024; `KB`,
//! `MB`, `GB`, `TB` powers of 1000; `B` or no unit are bytes. Units are case-insensitive.

/// `text` as a number of bytes (a fraction rounds down); the error says what was expected
/// and what was found.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let shown = crate::quote(trimmed, 40);
    let expected = || {
        format!("expected a size such as \"512MiB\", \"2GB\" or \"1073741824\" (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), found \"{shown}\"")
    };
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(expected()),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(expected());
    }
    let too_large = || format!("expected a size below 16 EiB, found \"{shown}\"");
    let whole: u64 = match whole {
        "" => 0,
        digits => digits.parse().map_err(|_| too_large())?,
    };
    let bytes = whole.checked_mul(multiplier).ok_or_else(too_large)?;
    // The fraction exactly, rounded down (no float rounding): 0.5 of a GiB. Digits past
    // the 19th cannot add a byte to a multiplier below 2^41.
    let digits = &fraction[..fraction.len().min(19)];
    let part = match digits {
        "" => 0,
        digits => {
            let numerator = u128::from(digits.parse::<u64>().map_err(|_| expected())?);
            let denominator = 10u128.pow(digits.len() as u32);
            (numerator * u128::from(multiplier) / denominator) as u64
        }
    };
    let bytes = bytes.checked_add(part).ok_or_else(too_large)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_in_every_unit() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size(" 2 GB "), Ok(2_000_000_000));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("0.5kb"), Ok(500));
        assert_eq!(parse_size(".25M"), Ok(1 << 18));
        assert!(parse_size("16383PiB")
            .unwrap_err()
            .starts_with("expected a size such as"));
        assert!(parse_size("16777216TiB")
            .unwrap_err()
            .contains("below 16 EiB"));
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("below 16 EiB"));
        for bad in [
            "",
            "MiB",
            "-1G",
            "1..5G",
            "1e9",
            "1.5.2G",
            "lots",
            "\u{1b}[31m",
        ] {
            let error = parse_size(bad).unwrap_err();
            assert!(error.starts_with("expected a size"), "{bad}: {error}");
            assert!(!error.contains('\u{1b}'), "{error}");
        }
    }
}
