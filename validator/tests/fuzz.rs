//! Fuzz-style property tests of every parser of the gate, on stable Rust: arbitrary
//! bytes and structured-but-mangled schema YAML, registry JSON, configuration TOML, type
//! strings, drift reference profiles and baseline files. Each must return (a report or an error) without panicking, and nothing
//! they render may carry a control character or bidi override raw.
//!
//! Short by default (256 cases per property, a few seconds); for a long run:
//!
//! ```sh
//! ARROWFEAT_FUZZ_CASES=100000 cargo test -p arrowfeat-validator --release --test fuzz
//! ```
//!
//! Inputs that once failed are kept in `regressions()` below (and proptest's own
//! `proptest-regressions/fuzz.txt`, if it writes one, should be committed too).

use arrowfeat_validator::checks;
use arrowfeat_validator::checks::drift::{
    self as drift, Distribution, DriftFeature, Kind, ReferenceProfile, Summary, Thresholds,
    ViewProfile,
};
use arrowfeat_validator::config::Config;
use arrowfeat_validator::output::{render, render_error, Format, RenderOptions};
use arrowfeat_validator::report::{FileReport, Report};
use arrowfeat_validator::run::{self, Targets};
use arrowfeat_validator::store;
use arrowfeat_validator::suppress;
use arrowfeat_validator::text::is_unsafe_char;
use arrowfeat_validator::ttl;
use arrowfeat_validator::types::FeatureType;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("ARROWFEAT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const SCHEMA: &str = include_str!("../../schemas/examples/driver_hourly_stats_v1.yaml");
const REGISTRY: &str = include_str!("../../tests/fixtures/feast/registry.json");
const CONFIG: &str = "compatibility = \"full\"\ndeny_warnings = true\n[severity]\nfeature-extra = \"warning\"\nttl = \"off\"\n[[ignore]]\nrule = \"entity-extra\"\nviews = [\"legacy_*\", \"driver_hourly_stats_v1\"]\nreason = \"old\"\n";

/// Pieces that stress the parsers: controls, bidi, huge numbers, deep nesting, YAML and
/// JSON syntax, time zones, durations.
const PIECES: &[&str] = &[
    "\u{1b}[31m",
    "\u{7}",
    "\r",
    "\u{202e}",
    "\u{2066}",
    "\u{0}",
    "\u{85}",
    "\u{feff}",
    "99999999999999999999",
    "-1",
    "1e308",
    ".nan",
    ".inf",
    "0x10",
    "18446744073709551616",
    "list<",
    ">",
    "[",
    "]",
    "{",
    "}",
    "&a",
    "*a",
    "<<: *a",
    "---",
    "...",
    ": ",
    "- ",
    "\"",
    "'",
    "#",
    "\t",
    "\n",
    "  ",
    "timestamp[us, Mars/Olympus]",
    "timestamp[ns]",
    "embedding[0]",
    "_v99999999999999999999999",
    "99999999999999999999s",
    "1d12h",
    "!!binary",
    "? ",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "featureViews",
    "streamFeatureViews",
    "spec",
    "\"inf\"",
    "-0.0",
    "5e-324",
    "1e309",
    "18446744073709551615",
    "\"kind\": \"categorical\"",
    "\"thinned\": true",
    "[1.5, 18446744073709551615]",
];

fn mangled(base: &'static str) -> impl Strategy<Value = String> {
    (proptest::collection::vec(
        (any::<prop::sample::Index>(), 0..PIECES.len(), 0u8..4),
        1..8,
    ),)
        .prop_map(move |(edits,)| {
            let mut text = base.to_string();
            for (at, piece, op) in edits {
                let mut index = at.index(text.len() + 1);
                while !text.is_char_boundary(index) {
                    index -= 1;
                }
                let piece = PIECES[piece];
                match op {
                    0 => text.insert_str(index, piece),
                    1 => {
                        // Replace a line fragment.
                        let end = text[index..].find('\n').map_or(text.len(), |e| index + e);
                        text.replace_range(index..end, piece);
                    }
                    2 => text.truncate(index),
                    _ => {
                        // Repeat a piece many times (deep nesting, long names).
                        text.insert_str(index, &piece.repeat(200));
                    }
                }
            }
            text
        })
}

fn options() -> RenderOptions {
    RenderOptions {
        color: false,
        verbose: true,
        deny_warnings: false,
        command: "check",
    }
}

/// Renders `report` in every format; no raw control character (but newlines) survives,
/// and JSON/SARIF stay valid JSON.
fn assert_clean(report: &Report) {
    for name in Format::NAMES {
        let format = Format::parse(name).unwrap();
        let rendered = render(report, format, &options());
        assert_rendered_clean(name, &rendered);
    }
}

fn assert_rendered_clean(name: &str, rendered: &str) {
    let bad: Vec<char> = rendered
        .chars()
        .filter(|c| *c != '\n' && is_unsafe_char(*c))
        .collect();
    assert!(bad.is_empty(), "{name}: raw {bad:?}");
    if name == "json" || name == "sarif" {
        serde_json::from_str::<serde_json::Value>(rendered).expect("valid JSON");
    }
}

fn assert_message_clean(message: &str) {
    assert!(
        !message.chars().any(is_unsafe_char),
        "raw control character in {message:?}"
    );
    for internal in ["untagged enum", "Documents {", "BudgetBreach", "oneOf"] {
        assert!(!message.contains(internal), "{internal} in {message}");
    }
}

fn check_schema_bytes(bytes: &[u8]) {
    // Findings keep file text as it is (escaping happens at the renderer boundary, see
    // assert_clean below); they must not show Rust internals.
    let (report, _) = checks::load_bytes("fuzz.yaml", bytes);
    for check in &report.checks {
        assert_message_clean(&arrowfeat_validator::text::clean(&check.message));
    }
    let store = store::parse(REGISTRY.as_bytes()).unwrap();
    let loaded = vec![checks::load_bytes("fuzz.yaml", bytes)];
    let previous = vec![checks::load_bytes("old.yaml", SCHEMA.as_bytes())];
    let targets = Targets {
        compare_store: true,
        data: None,
        store: Some(&store),
        previous: Some(&previous),
        against: "fuzz".into(),
    };
    let report = run::check(loaded, &targets, &Config::default());
    assert_clean(&report);
}

fn check_registry_bytes(bytes: &[u8]) {
    match store::parse(bytes) {
        Ok(store) => {
            let loaded = vec![checks::load_bytes("x.yaml", SCHEMA.as_bytes())];
            let targets = Targets {
                compare_store: true,
                data: None,
                store: Some(&store),
                previous: None,
                against: "fuzz".into(),
            };
            assert_clean(&run::check(loaded, &targets, &Config::default()));
        }
        Err(message) => {
            assert_message_clean(&message);
            for name in Format::NAMES {
                let format = Format::parse(name).unwrap();
                assert_rendered_clean(name, &render_error(&message, format, &options()));
            }
        }
    }
}

fn check_config_text(text: &str) {
    if let Err(message) = Config::parse(text) {
        assert_message_clean(&message);
    }
}

fn check_type_text(text: &str) {
    match FeatureType::parse(text) {
        Ok(ty) => {
            // What parses, prints and parses back to the same type.
            assert_eq!(FeatureType::parse(&ty.to_string()).unwrap(), ty, "{text}");
        }
        Err(message) => assert_message_clean(&message),
    }
}

/// A reference profile of one numeric and one categorical feature, as `--save-reference`
/// writes it (leaked: the mangling strategy takes a `'static` base).
fn saved_profile() -> &'static str {
    let numbers: Vec<(f64, u64)> = (0..40)
        .map(|i| (f64::from(i) * 0.5 - 3.0, 1 + i as u64 % 3))
        .collect();
    let rows = numbers.iter().map(|n| n.1).sum::<u64>() + 2;
    let numeric = Summary {
        rows,
        nulls: 1,
        nans: 1,
        numbers,
        categories: Vec::new(),
    };
    let categorical = Summary {
        rows: 7,
        nulls: 1,
        nans: 0,
        numbers: Vec::new(),
        categories: vec![("web".into(), 3), ("ios".into(), 2), ("pos".into(), 1)],
    };
    let features = [
        (
            "amount".to_string(),
            drift::profile(Kind::Numeric, &numeric),
        ),
        (
            "channel".to_string(),
            drift::profile(Kind::Categorical, &categorical),
        ),
        (
            "tags".to_string(),
            drift::profile(Kind::Presence, &categorical),
        ),
    ];
    let profile = ReferenceProfile {
        format: drift::PROFILE_FORMAT.into(),
        version: drift::PROFILE_VERSION,
        views: [(
            "payments_v1".to_string(),
            ViewProfile {
                source: "ref.parquet".into(),
                features: features.into_iter().collect(),
            },
        )]
        .into_iter()
        .collect(),
    };
    Box::leak(profile.to_json().into_boxed_str())
}

/// Current data to compare a parsed profile with: the extremes of `f64`, nothing but
/// missing values, and hostile category text.
fn current_summaries(kind: Kind) -> Vec<Summary> {
    match kind {
        Kind::Numeric => vec![
            Summary {
                rows: 10,
                nulls: 1,
                nans: 1,
                numbers: [
                    f64::NEG_INFINITY,
                    -f64::MAX,
                    -0.0,
                    5e-324,
                    1.0,
                    f64::MAX,
                    f64::INFINITY,
                ]
                .iter()
                .map(|&v| (v, 1))
                .chain([(2.0, u64::MAX / 4)])
                .collect(),
                categories: Vec::new(),
            },
            Summary {
                rows: 3,
                nulls: 3,
                ..Summary::default()
            },
            Summary::default(),
        ],
        Kind::Categorical => vec![
            Summary {
                rows: 8,
                nulls: 1,
                categories: vec![
                    ("web".into(), 3),
                    ("\u{1b}[31m\u{202e}".into(), 2),
                    (String::new(), 2),
                ],
                ..Summary::default()
            },
            Summary {
                rows: 2,
                nulls: 2,
                ..Summary::default()
            },
            Summary::default(),
        ],
        Kind::Presence => vec![
            Summary {
                rows: u64::MAX,
                nulls: u64::MAX / 2,
                ..Summary::default()
            },
            Summary {
                rows: 2,
                nulls: 2,
                ..Summary::default()
            },
            Summary::default(),
        ],
    }
}

/// A profile file parses or is refused with a clean message; what parses compares with
/// any current data without a panic, to metrics that are numbers (a NaN metric would be
/// no finding: a silent pass), and its findings render clean.
fn check_profile_text(text: &str) {
    let profile = match ReferenceProfile::parse(text) {
        Ok(profile) => profile,
        Err(message) => return assert_message_clean(&message),
    };
    let mut report_checks = Vec::new();
    for view in profile.views.values() {
        for (name, feature) in &view.features {
            let kind = match feature.distribution {
                Distribution::Numeric { .. } => Kind::Numeric,
                Distribution::Categorical { .. } => Kind::Categorical,
                Distribution::Presence {} => Kind::Presence,
            };
            let thinned = feature.thinned();
            for current in current_summaries(kind) {
                for reference in [feature, &thinned] {
                    for summary in [current.clone(), drift::coarsened(reference, &current)] {
                        let metrics = drift::compare(reference, &summary);
                        let numbers = [
                            Some(metrics.missing_change),
                            metrics.psi,
                            metrics.jensen_shannon_divergence,
                            metrics.jensen_shannon_distance,
                            metrics.ks,
                            Some(metrics.ks_bound),
                            metrics.categories_linf,
                        ];
                        assert!(
                            numbers.iter().flatten().all(|m| !m.is_nan()),
                            "{name}: {metrics:?}"
                        );
                    }
                }
                let declared = FeatureType::parse(match kind {
                    Kind::Numeric => "float64",
                    Kind::Categorical => "string",
                    Kind::Presence => "list<float32>",
                })
                .unwrap();
                let feature_spec = DriftFeature {
                    name: name.clone(),
                    kind,
                    declared,
                    pos: Default::default(),
                };
                report_checks.extend(drift::findings(
                    (&view.source, "current.parquet"),
                    &feature_spec,
                    Some(feature),
                    &current,
                    &Thresholds::default(),
                ));
            }
        }
    }
    let mut file = FileReport::new("payments_v1.yaml");
    file.checks = report_checks;
    assert_clean(&Report::new("fuzz", vec![file]));
}

/// A profile that is valid but extreme: edges at the ends of `f64`, counts near
/// `u64::MAX`, few points.
fn extreme_profile() -> impl Strategy<Value = String> {
    let float = prop::sample::select(vec![
        f64::NEG_INFINITY,
        -f64::MAX,
        -1.0,
        -0.0,
        0.0,
        5e-324,
        1e-300,
        1.0,
        f64::MAX,
        f64::INFINITY,
    ]);
    let count = prop::sample::select(vec![0u64, 1, 2, u64::MAX / 16, u64::MAX / 10]);
    (
        proptest::collection::vec(float.clone(), 9),
        proptest::collection::vec(count, 10),
        proptest::collection::vec(float, 1..6),
        prop::sample::select(vec![0u64, 1, u64::MAX / 100]),
    )
        .prop_filter_map(
            "counts overflow",
            |(mut edges, bins, mut points, missing)| {
                edges.sort_by(f64::total_cmp);
                let total = bins.iter().try_fold(0u64, |a, &b| a.checked_add(b))?;
                points.sort_by(f64::total_cmp);
                points.dedup_by(|a, b| a == b);
                let k = points.len() as u64;
                if total < k {
                    return None;
                }
                // Cumulative counts rising to `total`, one step per point.
                let ecdf: Vec<(drift::Float, u64)> = points
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let at = i as u64 + 1;
                        let c = if at == k { total } else { at };
                        (drift::Float(v), c)
                    })
                    .collect();
                let feature = drift::FeatureProfile {
                    rows: total.checked_add(missing)?,
                    missing,
                    distribution: Distribution::Numeric {
                        edges: edges.into_iter().map(drift::Float).collect(),
                        bins,
                        ecdf,
                        thinned: true,
                    },
                };
                let profile = ReferenceProfile {
                    format: drift::PROFILE_FORMAT.into(),
                    version: drift::PROFILE_VERSION,
                    views: [(
                        "v".to_string(),
                        ViewProfile {
                            source: "ref.parquet".into(),
                            features: [("x".to_string(), feature)].into_iter().collect(),
                        },
                    )]
                    .into_iter()
                    .collect(),
                };
                Some(profile.to_json())
            },
        )
}

/// A baseline file parses or is refused with a clean `line:column: message`.
fn check_baseline_bytes(bytes: &[u8]) {
    if let Err(message) = suppress::parse(bytes) {
        assert_message_clean(&message);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn profile_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_profile_text(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn profile_mangled(text in mangled(saved_profile())) {
        check_profile_text(&text);
    }

    #[test]
    fn profile_extreme(text in extreme_profile()) {
        // Valid by construction: the metrics are computed, not refused early.
        prop_assert!(ReferenceProfile::parse(&text).is_ok(), "{text}");
        check_profile_text(&text);
    }

    #[test]
    fn baseline_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_baseline_bytes(&bytes);
    }

    #[test]
    fn schema_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_schema_bytes(&bytes);
    }

    #[test]
    fn schema_mangled(text in mangled(SCHEMA)) {
        check_schema_bytes(text.as_bytes());
    }

    #[test]
    fn registry_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_registry_bytes(&bytes);
    }

    #[test]
    fn registry_mangled(text in mangled(REGISTRY)) {
        check_registry_bytes(text.as_bytes());
    }

    #[test]
    fn config_arbitrary(text in "\\PC{0,200}") {
        check_config_text(&text);
    }

    #[test]
    fn config_mangled(text in mangled(CONFIG)) {
        check_config_text(&text);
    }

    #[test]
    fn types_arbitrary(text in "\\PC{0,80}") {
        check_type_text(&text);
    }

    #[test]
    fn types_structured(
        depth in 0usize..40,
        unit in prop::sample::select(vec!["s", "ms", "us", "ns", "h", ""]),
        tz in prop::sample::select(vec!["", ", UTC", ", Europe/Paris", ", +05:30", ", Mars/Olympus", ", \u{1b}", ", +99:99"]),
        dim in prop::sample::select(vec!["0", "1", "4294967295", "4294967296", "99999999999999999999", "-1", ""]),
        leaf in 0usize..3,
    ) {
        let inner = match leaf {
            0 => format!("timestamp[{unit}{tz}]"),
            1 => format!("embedding[{dim}{}]", if tz.is_empty() { "" } else { ", float64" }),
            _ => "int64".to_string(),
        };
        check_type_text(&format!("{}{inner}{}", "list<".repeat(depth), ">".repeat(depth)));
    }

    /// A schema's `ttl` reads the kernels' duration grammar: accepted exactly when the
    /// grammar gives a whole, non-negative number of seconds that fits, and never wraps.
    #[test]
    fn ttl_durations_are_the_kernels_durations(text in "-?[0-9. ]{0,12}(s|m|h|d|w|ms|us|ns|min|M|days| )[0-9smhdw ,]{0,20}") {
        let grammar = arrowfeat_common::duration::parse_exact(&text);
        match ttl::parse_duration_seconds(&text) {
            Ok(seconds) => {
                prop_assert_eq!(grammar, Ok(i128::from(seconds) * 1_000_000_000));
            }
            Err(message) => {
                assert_message_clean(&message);
                if let Ok(nanos) = grammar {
                    prop_assert!(
                        nanos < 0 || nanos % 1_000_000_000 != 0 || nanos / 1_000_000_000 > i128::from(u64::MAX),
                        "{text}: {message}"
                    );
                }
            }
        }
    }
}

/// Inputs that once broke a parser, kept as regression tests.
#[test]
fn regressions() {
    // Deep nesting of every kind: no stack overflow.
    check_schema_bytes(format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000)).as_bytes());
    check_schema_bytes(format!("{}1", "- ".repeat(50_000)).as_bytes());
    check_type_text(&format!(
        "{}int64{}",
        "list<".repeat(100_000),
        ">".repeat(100_000)
    ));
    check_registry_bytes(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).as_bytes());
    check_registry_bytes(
        format!(
            "{{\"featureViews\": {}{}}}",
            "{\"a\":".repeat(100_000),
            "}".repeat(100_000)
        )
        .as_bytes(),
    );
    check_config_text(&format!(
        "a = {}1{}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    ));
    check_config_text(&format!(
        "a = {}1{}",
        "{b = ".repeat(10_000),
        "}".repeat(10_000)
    ));
    // Numbers out of range.
    check_schema_bytes(
        SCHEMA
            .replace("ttl: 1d", "ttl: 99999999999999999999s")
            .as_bytes(),
    );
    check_schema_bytes(SCHEMA.replace("ttl: 1d", "ttl: 1e400").as_bytes());
    check_schema_bytes(SCHEMA.replace("ttl: 1d", "ttl: .nan").as_bytes());
    check_schema_bytes(SCHEMA.replace("min: 0", "min: .nan").as_bytes());
    check_registry_bytes(
        REGISTRY
            .replacen("\"86400s\"", "\"99999999999999999999s\"", 1)
            .as_bytes(),
    );
    // Found by schema_mangled: a `ttl` of the wrong shape showed JSON Schema's "oneOf".
    check_schema_bytes(SCHEMA.replace("ttl: 1d", "ttl: [1]").as_bytes());
    check_schema_bytes(SCHEMA.replace("ttl: 1d", "ttl: 1x").as_bytes());
    // Found by schema_mangled: a key with tabs was quoted raw in the message.
    check_schema_bytes(SCHEMA.replace("join_key", "join_\t\t\tkey").as_bytes());
    // Multiple documents, tags, control characters in keys.
    check_schema_bytes(b"a: 1\n---\nb: 2\n");
    check_schema_bytes(b"!!binary aGVsbG8=\n");
    check_schema_bytes("\"\u{1b}\": 1\n".as_bytes());
}
