//! A schema's `ttl` and the kernels read one duration grammar: every case of
//! `common/tests/durations.txt` (which the kernels' tests read too) is accepted or
//! refused here as there, through the whole schema check. A TTL is also a whole,
//! non-negative number of seconds: durations the kernels accept beyond that (`-5s`,
//! `1500ms`) are findings that say so.

use arrowfeat_validator::checks;
use arrowfeat_validator::report::Check;
use arrowfeat_validator::rules::Rule;

const SCHEMA: &str = include_str!("../../schemas/examples/driver_hourly_stats_v1.yaml");
const CASES: &str = include_str!("../../common/tests/durations.txt");

fn ttl_finding(ttl: &str) -> (Option<Check>, Option<u64>) {
    let text = SCHEMA.replace("ttl: 1d", &format!("ttl: \"{ttl}\""));
    assert_ne!(text, SCHEMA);
    let (report, file) = checks::load_bytes("v.yaml", text.as_bytes());
    let finding = report
        .findings()
        .find(|c| c.rule == Rule::SchemaViolation && c.subject == "ttl")
        .cloned();
    let others: Vec<&Check> = report
        .findings()
        .filter(|c| c.rule == Rule::SchemaViolation && c.subject != "ttl")
        .collect();
    assert!(others.is_empty(), "{ttl:?}: {others:#?}");
    let seconds = file.and_then(|f| f.spec.ttl.and_then(|t| t.seconds().ok()));
    (finding, seconds)
}

#[test]
fn schema_ttls_read_the_kernels_durations() {
    let mut cases = 0;
    for line in CASES.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        cases += 1;
        let (text, expected) = line.split_once(" => ").expect("TEXT => EXPECTED");
        let (finding, seconds) = ttl_finding(text);
        match expected.strip_prefix("error: ") {
            Some(what) => {
                let finding = finding.unwrap_or_else(|| panic!("{text:?}: accepted"));
                assert!(
                    finding.message.contains(what),
                    "{text:?}: {}",
                    finding.message
                );
            }
            None => {
                let nanos: i128 = expected.parse().unwrap();
                if nanos >= 0 && nanos % 1_000_000_000 == 0 {
                    assert!(finding.is_none(), "{text:?}: {finding:?}");
                    assert_eq!(seconds, Some((nanos / 1_000_000_000) as u64), "{text:?}");
                } else {
                    let message = finding
                        .unwrap_or_else(|| panic!("{text:?}: accepted"))
                        .message;
                    let why = if nanos < 0 {
                        "is negative"
                    } else {
                        "is not a whole number of seconds"
                    };
                    assert!(message.contains(why), "{text:?}: {message}");
                }
            }
        }
    }
    assert!(cases > 30);
}

/// `ttl: 1h 30m` was refused while `training-set --ttl` accepted it.
#[test]
fn compound_durations_with_spaces_are_ttls() {
    let (finding, seconds) = ttl_finding("1h 30m");
    assert!(finding.is_none(), "{finding:?}");
    assert_eq!(seconds, Some(5_400));
}
