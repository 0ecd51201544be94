//! The shared duration cases (`durations.txt`) through the grammar itself.

use arrowfeat_common::duration::parse_duration;

/// `(text, Ok(nanoseconds) or Err(what the message says))` of `durations.txt`.
pub fn cases() -> Vec<(String, Result<i64, String>)> {
    include_str!("durations.txt")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (text, expected) = line.split_once(" => ").expect("TEXT => EXPECTED");
            let expected = match expected.strip_prefix("error: ") {
                Some(what) => Err(what.to_string()),
                None => Ok(expected.parse().expect("nanoseconds")),
            };
            (text.to_string(), expected)
        })
        .collect()
}

#[test]
fn every_case_reads_as_written_down() {
    let cases = cases();
    assert!(cases.len() > 30);
    for (text, expected) in cases {
        match (parse_duration(&text), expected) {
            (Ok(nanos), Ok(expected)) => assert_eq!(nanos, expected, "{text:?}"),
            (Err(error), Err(what)) => {
                assert!(error.to_string().contains(&what), "{text:?}: {error}")
            }
            (got, expected) => panic!("{text:?}: got {got:?}, expected {expected:?}"),
        }
    }
}
