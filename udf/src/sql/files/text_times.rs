//! The unit a CSV or JSON column of times needs. Neither format has a time type. JSON's
//! reader infers a column of times as text, and given a time type it cuts the digits past
//! that type's unit silently; CSV's infers the unit from the digits (`.000` is
//! milliseconds). So a column the schema declares a time is read as one only when every
//! value reads as a time, at the coarsest unit that holds every value exactly.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::compute::kernels::cast_utils::string_to_datetime;
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::arrow::json::ReaderBuilder;

use super::{finer, CsvDialect};

/// For each column at `indices` of the CSV `files` (with a header, in the default
/// dialect), in one pass: the coarsest unit that holds every value exactly, when every
/// value that is not empty (null) reads as a time; `None` otherwise, as when no value
/// does.
pub(super) fn csv_time_units(files: &[PathBuf], indices: &[usize]) -> Vec<Option<TimeUnit>> {
    let dialect = CsvDialect::default();
    // Per column: `Ok(unit so far)`, or `Err(())` once a value is no time.
    let mut units: Vec<Result<Option<TimeUnit>, ()>> = vec![Ok(None); indices.len()];
    let mut record = csv::ByteRecord::new();
    'files: for file in files {
        let Ok(opened) = File::open(file) else {
            units.fill(Err(()));
            break;
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .delimiter(dialect.delimiter)
            .quote(dialect.quote)
            .from_reader(BufReader::new(opened));
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(true) => {}
                Ok(false) => break,
                Err(_) => {
                    units.fill(Err(()));
                    break 'files;
                }
            }
            for (unit, &index) in units.iter_mut().zip(indices) {
                let Ok(so_far) = unit else { continue };
                let needed = match record.get(index) {
                    Some([]) => continue,
                    Some(text) => std::str::from_utf8(text).ok().and_then(time_text_unit),
                    None => None,
                };
                *unit = match needed {
                    Some(needed) => Ok(Some(so_far.map_or(needed, |u| finer(u, needed)))),
                    None => Err(()),
                };
            }
            if units.iter().all(Result::is_err) {
                break 'files;
            }
        }
    }
    units.into_iter().map(|u| u.ok().flatten()).collect()
}

/// For each top-level field of `columns` of the newline-delimited JSON `files`: the
/// coarsest unit that holds every value exactly, when every value that is not null is a
/// string of a time; `None` otherwise (the column stays text), as when no value is one.
/// One pass reads them all; when it cannot (a value of one of them is a number, or a line
/// is broken), each is read alone, so that one column of numbers leaves the others' units.
pub(super) fn json_time_units(files: &[PathBuf], columns: &[&str]) -> Vec<Option<TimeUnit>> {
    let alone = |column: &&str| json_units(files, &[column]).ok().and_then(|units| units[0]);
    match columns {
        [_, _, ..] => {
            json_units(files, columns).unwrap_or_else(|()| columns.iter().map(alone).collect())
        }
        _ => columns.iter().map(alone).collect(),
    }
}

/// [`json_time_units`] in one pass; `Err(())` when a value of one of `columns` is not a
/// string or null, or a line does not read.
fn json_units(files: &[PathBuf], columns: &[&str]) -> Result<Vec<Option<TimeUnit>>, ()> {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|column| Field::new(*column, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    // Per column: `Ok(unit so far)`, or `Err(())` once a value is no time.
    let mut units: Vec<Result<Option<TimeUnit>, ()>> = vec![Ok(None); columns.len()];
    'files: for file in files {
        let opened = File::open(file).map_err(|_| ())?;
        let reader = ReaderBuilder::new(Arc::clone(&schema))
            .build(BufReader::new(opened))
            .map_err(|_| ())?;
        for batch in reader {
            // A number, object or broken line: not a column of times (the read of the
            // whole file reports a broken line).
            let batch = batch.map_err(|_| ())?;
            for (unit, array) in units.iter_mut().zip(batch.columns()) {
                for text in array.as_string::<i32>().iter().flatten() {
                    let Ok(so_far) = unit else { break };
                    *unit = match time_text_unit(text) {
                        Some(needed) => Ok(Some(so_far.map_or(needed, |u| finer(u, needed)))),
                        None => Err(()),
                    };
                }
            }
            if units.iter().all(Result::is_err) {
                break 'files;
            }
        }
    }
    Ok(units.into_iter().map(|u| u.ok().flatten()).collect())
}

/// The coarsest unit that holds the time `text` exactly, if it is one: the shape CSV's
/// reader reads as a time (`2024-01-01T10:00:00` or with a space, a fraction of 1 to 9
/// digits, then `Z`, an offset or nothing) that also parses as one, or a date alone
/// (midnight). Not a leap second: each unit would read it as another instant.
fn time_text_unit(text: &str) -> Option<TimeUnit> {
    let b = text.as_bytes();
    let digits = |at: usize, n: usize| {
        b.get(at..at + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let is = |at: usize, c: &[u8]| b.get(at).is_some_and(|found| c.contains(found));
    let shape = digits(0, 4)
        && is(4, b"-")
        && digits(5, 2)
        && is(7, b"-")
        && digits(8, 2)
        && is(10, b"T ")
        && digits(11, 2)
        && is(13, b":")
        && digits(14, 2)
        && is(16, b":")
        && digits(17, 2);
    let date = digits(0, 4) && is(4, b"-") && digits(5, 2) && is(7, b"-") && digits(8, 2);
    if date && b.len() == 10 {
        // A date alone: midnight, as the readers take it.
        return string_to_datetime(&utc()?, text)
            .ok()
            .map(|_| TimeUnit::Second);
    }
    if !shape {
        return None;
    }
    let rest = if is(19, b".") {
        let fraction = b[20..].iter().take_while(|d| d.is_ascii_digit()).count();
        if !(1..=9).contains(&fraction) {
            // More than 9 digits would be cut even at nanoseconds.
            return None;
        }
        20 + fraction
    } else {
        19
    };
    if is(rest, b"0123456789.") {
        return None;
    }
    let time = string_to_datetime(&utc()?, text).ok()?;
    let nanos = time.timestamp_subsec_nanos();
    if nanos >= 1_000_000_000 {
        // A leap second (`23:59:60`): each unit would read it as another instant.
        return None;
    }
    Some(if nanos == 0 {
        TimeUnit::Second
    } else if nanos % 1_000_000 == 0 {
        TimeUnit::Millisecond
    } else if nanos % 1_000 == 0 {
        TimeUnit::Microsecond
    } else {
        TimeUnit::Nanosecond
    })
}

/// UTC, in which a time's shape and digits are judged (its zone changes neither).
fn utc() -> Option<Tz> {
    "+00:00".parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text: no panic, and a unit only for a time whose value that unit holds
        /// exactly (against the nanosecond parse, a naive reference).
        #[test]
        fn any_text_reads_as_a_time_at_a_unit_that_holds_it(text in "\\PC{0,40}") {
            check_unit(&text);
        }

        #[test]
        fn times_of_any_digits_read_at_the_coarsest_exact_unit(
            year in 0u32..10_000,
            day in 1u32..29,
            seconds in 0u32..86_400,
            fraction in proptest::option::of("[0-9]{1,12}"),
            zone in prop_oneof![Just(""), Just("Z"), Just("+05:30"), Just("-00:00"), Just("z")],
            space in any::<bool>(),
        ) {
            let text = format!(
                "{year:04}-02-{day:02}{}{:02}:{:02}:{:02}{}{zone}",
                if space { ' ' } else { 'T' },
                seconds / 3600,
                seconds / 60 % 60,
                seconds % 60,
                fraction.as_ref().map_or(String::new(), |f| format!(".{f}")),
            );
            let digits = fraction.map_or(0, |f| f.len());
            prop_assert_eq!(time_text_unit(&text).is_some(), digits <= 9, "{}", text);
            check_unit(&text);
        }
    }

    fn check_unit(text: &str) {
        let Some(unit) = time_text_unit(text) else {
            return;
        };
        let utc = utc().unwrap();
        let nanos = string_to_datetime(&utc, text)
            .expect("a time the unit was given for parses")
            .timestamp_subsec_nanos();
        let per_unit = match unit {
            TimeUnit::Second => 1_000_000_000,
            TimeUnit::Millisecond => 1_000_000,
            TimeUnit::Microsecond => 1_000,
            TimeUnit::Nanosecond => 1,
        };
        assert_eq!(nanos % per_unit, 0, "{text}: {unit:?}");
        // The coarsest: the next coarser unit would not hold it.
        if per_unit < 1_000_000_000 {
            assert_ne!(nanos % (per_unit * 1_000), 0, "{text}: {unit:?}");
        }
        // Every fraction digit was counted: none past the ninth.
        let fraction = text
            .get(20..)
            .filter(|_| text.as_bytes().get(19) == Some(&b'.'))
            .map_or(0, |rest| {
                rest.bytes().take_while(u8::is_ascii_digit).count()
            });
        assert!(fraction <= 9, "{text}");
    }

    #[test]
    fn a_time_needs_the_unit_its_value_needs_not_its_digits() {
        for (text, unit) in [
            ("2024-01-01T10:00:00", Some(TimeUnit::Second)),
            ("2024-01-01 10:00:00.000", Some(TimeUnit::Second)),
            ("2024-01-01T10:00:00.5Z", Some(TimeUnit::Millisecond)),
            (
                "2024-01-01T10:00:00.100000+02:00",
                Some(TimeUnit::Millisecond),
            ),
            ("2024-01-01T10:00:00.000001", Some(TimeUnit::Microsecond)),
            (
                "2024-01-01T10:00:00.123456789-05:30",
                Some(TimeUnit::Nanosecond),
            ),
            ("9999-12-31T23:59:59.999999999", Some(TimeUnit::Nanosecond)),
            // Not times as CSV reads them: a date, minutes only, 10 digits, a number.
            ("2024-01-01", Some(TimeUnit::Second)),
            ("2024-02-30", None),
            ("2024-01-01Z", None),
            ("2025-12-31T23:59:60", None),
            ("2025-12-31T23:59:60.5Z", None),
            ("2024-01-01T10:00", None),
            ("2024-01-01T10:00:00.1234567891", None),
            ("2024-01-01T10:00:00.", None),
            ("2024-01-01T10:00:001", None),
            ("1700000000", None),
            ("2024-13-01T10:00:00", None),
            ("2024-01-01T10:00:00 nowhere", None),
            ("", None),
            ("２０２４-01-01T10:00:00", None),
        ] {
            assert_eq!(time_text_unit(text), unit, "{text}");
        }
    }

    #[test]
    fn a_csv_column_needs_the_unit_its_values_need() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let a = write("a.csv", "k,ts\n1,2024-01-01T10:00:00.000\n2,\n");
        let b = write("b.csv", "k,ts\n1,\"2024-01-01 10:00:00.000100\"\n");
        let c = write("c.csv", "k,ts\n1,soon\n");
        let unit = |files: &[PathBuf], index: usize| csv_time_units(files, &[index])[0];
        assert_eq!(unit(std::slice::from_ref(&a), 1), Some(TimeUnit::Second));
        assert_eq!(unit(&[a.clone(), b], 1), Some(TimeUnit::Microsecond));
        assert_eq!(unit(&[a.clone(), c], 1), None);
        assert_eq!(unit(&[a], 2), None);
    }

    #[test]
    fn a_column_is_times_only_when_every_value_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let a = write(
            "a.json",
            "{\"ts\": \"2024-01-01T10:00:00\"}\n{\"ts\": null}\n{\"x\": 1}\n",
        );
        let b = write("b.json", "{\"ts\": \"2024-01-01T10:00:00.25Z\"}\n");
        let number = write("n.json", "{\"ts\": 1700000000}\n");
        let text = write("t.json", "{\"ts\": \"soon\"}\n");
        let none = write("z.json", "{\"ts\": null}\n");
        let json_time_unit = |files: &[PathBuf], column: &str| json_time_units(files, &[column])[0];
        assert_eq!(
            json_time_unit(std::slice::from_ref(&a), "ts"),
            Some(TimeUnit::Second)
        );
        assert_eq!(
            json_time_unit(&[a.clone(), b.clone()], "ts"),
            Some(TimeUnit::Millisecond)
        );
        assert_eq!(json_time_unit(&[a.clone(), number], "ts"), None);
        assert_eq!(json_time_unit(&[b, text], "ts"), None);
        assert_eq!(json_time_unit(&[none], "ts"), None);
        assert_eq!(json_time_unit(&[a], "other"), None);
    }

    #[test]
    fn json_columns_read_together_keep_their_own_units() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let both = write(
            "a.json",
            "{\"a\": \"2024-01-01T10:00:00\", \"b\": \"2024-01-01T10:00:00.000001Z\", \"c\": \"soon\"}\n\
             {\"a\": null, \"c\": \"2024-01-01\"}\n",
        );
        assert_eq!(
            json_time_units(std::slice::from_ref(&both), &["a", "b", "c", "d"]),
            vec![
                Some(TimeUnit::Second),
                Some(TimeUnit::Microsecond),
                None,
                None
            ]
        );
        // A number in one column: the others are still read, each alone.
        let number = write(
            "n.json",
            "{\"a\": \"2024-01-01T10:00:00.5\", \"b\": 1700000000}\n",
        );
        assert_eq!(
            json_time_units(&[both, number], &["a", "b"]),
            vec![Some(TimeUnit::Millisecond), None]
        );
        assert_eq!(json_time_units(&[], &["a"]), vec![None]);
        assert!(json_time_units(&[], &[]).is_empty());
    }
}
