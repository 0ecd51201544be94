//! One test per rule: a change that makes it fire, and the untouched baseline that keeps
//! it quiet. The baseline schema matches the baseline store exactly.

use arrowfeat_validator::checks;
use arrowfeat_validator::compat::Mode;
use arrowfeat_validator::config::Config;
use arrowfeat_validator::report::{Report, Status};
use arrowfeat_validator::rules::{self, Rule};
use arrowfeat_validator::run::{self, Targets};
use arrowfeat_validator::spec;
use arrowfeat_validator::store::{self, StoreMetadata};

const SCHEMA: &str = "\
name: trips_v1
schema_version: 1.2.0
entities:
  - name: driver
    join_key: driver_id
    type: int64
event_timestamp:
  name: event_ts
  type: timestamp
  unit: us
  tz: UTC
created_timestamp:
  name: created
ttl: 1d
features:
  - name: fare
    type: float64
    nullable: false
    constraints: {min: 0, max: 1000}
  - name: city
    type: string
    constraints: {allowed_values: [berlin, paris]}
";

const STORE: &str = r#"{
  "format": "arrowfeat-store-metadata", "format_version": 1, "store": "test store",
  "entities": [{"name": "driver", "join_key": "driver_id", "type": "int64"},
               {"name": "rider", "join_key": "rider_id", "type": "string"}],
  "feature_views": [{
    "name": "trips_v1", "entities": ["driver"], "ttl_seconds": 86400,
    "tags": {"schema_version": "1.2.0"},
    "event_timestamp": {"name": "event_ts", "type": "timestamp[us, UTC]"},
    "created_timestamp": "created",
    "features": [{"name": "fare", "type": "float64", "nullable": false},
                 {"name": "city", "type": "string", "nullable": true}]
  }]
}"#;

fn check(schema: &str, store_json: &str, previous: Option<&str>) -> Report {
    let store: StoreMetadata = store::parse(store_json.as_bytes()).unwrap();
    let loaded = vec![checks::load_bytes("trips_v1.yaml", schema.as_bytes())];
    let previous =
        previous.map(|old| vec![checks::load_bytes("old/trips_v1.yaml", old.as_bytes())]);
    let targets = Targets {
        compare_store: true,
        data: None,
        store: Some(&store),
        previous: previous.as_deref(),
        against: "test".into(),
    };
    run::check(
        loaded,
        &targets,
        &Config {
            compatibility: Mode::Backward,
            ..Config::default()
        },
    )
}

fn statuses(report: &Report, rule: Rule) -> Vec<Status> {
    report
        .findings()
        .filter(|(_, c)| c.rule == rule)
        .map(|(_, c)| c.status)
        .collect()
}

/// `rule` fires (at `status`) on the mutated schema/store and stays quiet on the baseline.
fn fires(rule: Rule, status: Status, schema: &str, store_json: &str) {
    let baseline = check(SCHEMA, STORE, None);
    assert!(
        statuses(&baseline, rule).is_empty(),
        "{} fired on the baseline: {baseline:#?}",
        rule
    );
    let report = check(schema, store_json, None);
    let found = statuses(&report, rule);
    assert!(
        found.contains(&status),
        "{} did not fire as {status:?}: {:#?}",
        rule,
        report.findings().collect::<Vec<_>>()
    );
    for (file, finding) in report.findings().filter(|(_, c)| c.rule == rule) {
        assert!(!finding.message.is_empty());
        assert_eq!(file.path, "trips_v1.yaml");
    }
}

fn schema_with(from: &str, to: &str) -> String {
    assert!(SCHEMA.contains(from), "{from}");
    SCHEMA.replacen(from, to, 1)
}

fn store_with(from: &str, to: &str) -> String {
    assert!(STORE.contains(from), "{from}");
    STORE.replacen(from, to, 1)
}

#[test]
fn baseline_passes_everything() {
    let report = check(SCHEMA, STORE, None);
    assert_eq!(
        report.findings().count(),
        0,
        "{:#?}",
        report.findings().collect::<Vec<_>>()
    );
    assert!(report.summary().passed > 25);
}

#[test]
fn input_rules() {
    let report = |bytes: &[u8]| checks::load_bytes("x.yaml", bytes).0;
    let rule_of = |bytes: &[u8]| report(bytes).checks[0].rule;
    assert_eq!(rule_of(b""), Rule::InputUnreadable);
    assert_eq!(rule_of(b"name: caf\xe9\n"), Rule::InputUnreadable);
    assert_eq!(rule_of(b"name: [a\n"), Rule::YamlSyntax);
    assert_eq!(rule_of(b"name: a\nname: b\n"), Rule::YamlDuplicateKey);
    assert_eq!(
        rule_of(format!("{}1{}", "[".repeat(500), "]".repeat(500)).as_bytes()),
        Rule::YamlLimits
    );
    let utf8 = report(b"name: ok\nowner: caf\xe9\n");
    assert_eq!((utf8.checks[0].line, utf8.checks[0].column), (2, 11));
    assert!(utf8.checks[0]
        .message
        .contains("not valid UTF-8: byte 0xe9 at line 2, column 11"));
    let huge = vec![b'#'; spec::MAX_SCHEMA_FILE_BYTES as usize + 1];
    assert!(report(&huge).checks[0].message.contains("the limit is"));
    assert!(statuses(&check(SCHEMA, STORE, None), Rule::InputUnreadable).is_empty());
}

#[test]
fn schema_violation() {
    fires(
        Rule::SchemaViolation,
        Status::Error,
        &schema_with("schema_version: 1.2.0\n", ""),
        STORE,
    );
    fires(
        Rule::SchemaViolation,
        Status::Error,
        &schema_with("ttl: 1d", "ttl: soon"),
        STORE,
    );
    fires(
        Rule::SchemaViolation,
        Status::Error,
        &schema_with("nullable: false", "nullable: nope"),
        STORE,
    );
}

#[test]
fn schema_unknown_key_suggests() {
    let schema = schema_with("features:", "feautres:");
    fires(Rule::SchemaUnknownKey, Status::Error, &schema, STORE);
    let report = check(&schema, STORE, None);
    let (_, finding) = report
        .findings()
        .find(|(_, c)| c.rule == Rule::SchemaUnknownKey)
        .unwrap();
    assert_eq!(
        finding.message,
        "unknown key `feautres` in the document; did you mean `features`?"
    );
    assert_eq!((finding.line, finding.column), (15, 1));
    let nested = check(
        &schema_with("    nullable: false", "    nulable: false"),
        STORE,
        None,
    );
    let (_, finding) = nested
        .findings()
        .find(|(_, c)| c.rule == Rule::SchemaUnknownKey)
        .unwrap();
    assert_eq!(
        finding.message,
        "unknown key `nulable` in features[0]; did you mean `nullable`?"
    );
    assert_eq!((finding.line, finding.column), (18, 5));
}

#[test]
fn type_syntax() {
    fires(
        Rule::TypeSyntax,
        Status::Error,
        &schema_with("type: float64", "type: flaot64"),
        STORE,
    );
}

#[test]
fn duplicate_feature() {
    fires(
        Rule::DuplicateFeature,
        Status::Error,
        &schema_with("name: city", "name: fare"),
        STORE,
    );
    fires(
        Rule::DuplicateFeature,
        Status::Error,
        &schema_with("name: city", "name: driver_id"),
        STORE,
    );
    // A timestamp named as a key, a feature or the other timestamp: one column read as two.
    for (from, to) in [
        ("name: event_ts", "name: driver_id"),
        ("name: event_ts", "name: fare"),
        ("name: created", "name: event_ts"),
    ] {
        let report = check(&schema_with(from, to), STORE, None);
        let messages: Vec<String> = report
            .findings()
            .filter(|(_, c)| c.rule == Rule::DuplicateFeature)
            .map(|(_, c)| c.message.clone())
            .collect();
        assert_eq!(messages.len(), 1, "{to}: {messages:?}");
        assert!(messages[0].contains("has the same name as"), "{messages:?}");
    }
}

#[test]
fn duplicate_view() {
    let store = store::parse(STORE.as_bytes()).unwrap();
    let loaded = vec![
        checks::load_bytes("a.yaml", SCHEMA.as_bytes()),
        checks::load_bytes("b.yaml", SCHEMA.as_bytes()),
    ];
    let report = run::check(
        loaded,
        &Targets {
            compare_store: true,
            data: None,
            store: Some(&store),
            previous: None,
            against: "t".into(),
        },
        &Config::default(),
    );
    assert!(report.files[0].findings().next().is_none());
    let finding = report.files[1].findings().next().unwrap();
    assert_eq!(finding.rule, Rule::DuplicateView);
    assert_eq!(
        finding.message,
        "feature view `trips_v1` is also declared in a.yaml"
    );
}

#[test]
fn constraint_invalid() {
    fires(
        Rule::ConstraintInvalid,
        Status::Error,
        &schema_with("{min: 0, max: 1000}", "{min: 10, max: 1}"),
        STORE,
    );
    fires(
        Rule::ConstraintInvalid,
        Status::Error,
        &schema_with("[berlin, paris]", "[berlin, 3]"),
        STORE,
    );
    let on_string = schema_with("allowed_values: [berlin, paris]", "min: 3");
    fires(Rule::ConstraintInvalid, Status::Error, &on_string, STORE);
}

#[test]
fn timestamp_declaration() {
    fires(
        Rule::TimestampDeclaration,
        Status::Error,
        &schema_with("  tz: UTC\n", "  tz: UTC\n  required: false\n"),
        STORE,
    );
    let naive_with_unit = schema_with(
        "  type: timestamp\n  unit: us\n  tz: UTC\n",
        "  type: datetime64\n  unit: us\n",
    );
    fires(
        Rule::TimestampDeclaration,
        Status::Error,
        &naive_with_unit,
        STORE,
    );
}

#[test]
fn version_semver() {
    fires(
        Rule::VersionSemver,
        Status::Error,
        &schema_with("schema_version: 1.2.0", "schema_version: \"1.2\""),
        STORE,
    );
}

#[test]
fn version_name_suffix() {
    let store = store_with(
        "\"schema_version\": \"1.2.0\"",
        "\"schema_version\": \"2.0.0\"",
    );
    fires(
        Rule::VersionNameSuffix,
        Status::Error,
        &schema_with("schema_version: 1.2.0", "schema_version: 2.0.0"),
        &store,
    );
}

#[test]
fn view_missing_suggests() {
    let store = store_with("\"name\": \"trips_v1\"", "\"name\": \"trip_v1\"");
    fires(Rule::ViewMissing, Status::Error, SCHEMA, &store);
    let report = check(SCHEMA, &store, None);
    let (_, finding) = report.findings().next().unwrap();
    assert_eq!(
        finding.message,
        "feature view `trips_v1` is not in the test store; did you mean `trip_v1`?"
    );
    assert_eq!((finding.line, finding.column), (1, 7));
}

#[test]
fn version_store_tag() {
    fires(
        Rule::VersionStoreTag,
        Status::Error,
        SCHEMA,
        &store_with(
            "\"schema_version\": \"1.2.0\"",
            "\"schema_version\": \"1.1.0\"",
        ),
    );
    fires(
        Rule::VersionStoreTag,
        Status::Warning,
        SCHEMA,
        &store_with("\"schema_version\": \"1.2.0\"", "\"team\": \"x\""),
    );
}

#[test]
fn feature_set_rules() {
    let extra_in_store = store_with(
        "\"nullable\": true}",
        "\"nullable\": true}, {\"name\": \"tip\", \"type\": \"float64\"}",
    );
    fires(Rule::FeatureExtra, Status::Error, SCHEMA, &extra_in_store);
    fires(Rule::FeatureCount, Status::Info, SCHEMA, &extra_in_store);
    let missing = schema_with("name: city", "name: town");
    fires(Rule::FeatureMissing, Status::Error, &missing, STORE);
    let report = check(&missing, STORE, None);
    let (_, finding) = report
        .findings()
        .find(|(_, c)| c.rule == Rule::FeatureMissing)
        .unwrap();
    assert_eq!(
        finding.message,
        "feature `town` is declared but view `trips_v1` in the store has no such feature"
    );
    assert_eq!((finding.line, finding.column), (20, 5));
}

#[test]
fn feature_type_three_outcomes() {
    fires(
        Rule::FeatureType,
        Status::Error,
        &schema_with("type: float64", "type: int64"),
        STORE,
    );
    // float32 declared, float64 stored: lossless, a warning.
    fires(
        Rule::FeatureType,
        Status::Warning,
        &schema_with("type: float64", "type: float32"),
        STORE,
    );
    let report = check(&schema_with("type: float64", "type: int64"), STORE, None);
    let (_, finding) = report
        .findings()
        .find(|(_, c)| c.rule == Rule::FeatureType)
        .unwrap();
    assert_eq!(finding.message, "feature fare: type: declared int64 (Arrow Int64), the store has float64 (Arrow Float64); these types are incompatible");
    assert_eq!((finding.line, finding.column), (17, 11));
}

#[test]
fn feature_nullability() {
    fires(
        Rule::FeatureNullability,
        Status::Error,
        &schema_with("nullable: false", "nullable: true"),
        STORE,
    );
}

#[test]
fn entity_rules() {
    fires(
        Rule::EntityMissing,
        Status::Error,
        &schema_with("  - name: driver\n", "  - name: rider\n"),
        STORE,
    );
    fires(
        Rule::EntityExtra,
        Status::Error,
        SCHEMA,
        &store_with(
            "\"entities\": [\"driver\"]",
            "\"entities\": [\"driver\", \"rider\"]",
        ),
    );
    fires(
        Rule::EntityJoinKey,
        Status::Error,
        &schema_with("join_key: driver_id", "join_key: driver"),
        STORE,
    );
    fires(
        Rule::EntityType,
        Status::Error,
        &schema_with("    type: int64", "    type: string"),
        STORE,
    );
}

#[test]
fn timestamp_rules() {
    fires(
        Rule::TimestampField,
        Status::Error,
        &schema_with("name: event_ts", "name: ts"),
        STORE,
    );
    // Lossy: naive nanoseconds against timestamp[us, UTC] truncate and change the instant.
    fires(
        Rule::TimestampType,
        Status::Error,
        &schema_with(
            "  type: timestamp\n  unit: us\n  tz: UTC\n",
            "  type: datetime64\n  tz: null\n",
        ),
        STORE,
    );
    fires(
        Rule::TimestampType,
        Status::Error,
        &schema_with("unit: us", "unit: ns"),
        STORE,
    );
    fires(
        Rule::TimestampType,
        Status::Error,
        &schema_with("tz: UTC", "tz: null"),
        STORE,
    );
    // Lossless: a coarser unit, or the same instants in another zone.
    fires(
        Rule::TimestampType,
        Status::Warning,
        &schema_with("unit: us", "unit: ms"),
        STORE,
    );
    fires(
        Rule::TimestampType,
        Status::Warning,
        &schema_with("tz: UTC", "tz: Europe/Paris"),
        STORE,
    );
    fires(
        Rule::CreatedTimestamp,
        Status::Error,
        &schema_with("name: created", "name: inserted_at"),
        STORE,
    );
}

#[test]
fn ttl() {
    fires(
        Rule::Ttl,
        Status::Error,
        &schema_with("ttl: 1d", "ttl: 12h"),
        STORE,
    );
    // The same TTL spelt differently is the same TTL.
    assert!(statuses(
        &check(&schema_with("ttl: 1d", "ttl: 86400"), STORE, None),
        Rule::Ttl
    )
    .is_empty());
}

#[test]
fn compatibility_rules() {
    let quiet = check(SCHEMA, STORE, Some(SCHEMA));
    assert!(quiet.findings().next().is_none());
    // A nullable feature added with a minor bump: allowed, listed as info.
    let added = schema_with("schema_version: 1.2.0", "schema_version: 1.3.0")
        + "  - name: tip\n    type: float64\n";
    let store = store_with(
        "\"nullable\": true}",
        "\"nullable\": true}, {\"name\": \"tip\", \"type\": \"float64\"}",
    )
    .replace("\"1.2.0\"", "\"1.3.0\"");
    let report = check(&added, &store, Some(SCHEMA));
    assert_eq!(
        statuses(&report, Rule::CompatChange),
        vec![Status::Info],
        "{report:#?}"
    );
    // The same addition with a patch bump only: too small.
    let patch = added.replace("1.3.0", "1.2.1");
    assert_eq!(
        statuses(
            &check(&patch, &store.replace("1.3.0", "1.2.1"), Some(SCHEMA)),
            Rule::CompatVersionBump
        ),
        vec![Status::Error]
    );
    // A narrowed type breaks BACKWARD: a major bump is needed.
    let narrowed = schema_with("type: float64", "type: float32");
    let report = check(&narrowed.replace("1.2.0", "1.3.0"), STORE, Some(SCHEMA));
    let breaking: Vec<_> = report
        .findings()
        .filter(|(_, c)| c.rule == Rule::CompatBreaking)
        .collect();
    assert_eq!(breaking.len(), 1);
    assert_eq!(breaking[0].1.message, "type narrowed: feature fare: type (float64 → float32) breaks BACKWARD compatibility; it needs a major version bump, found 1.2.0 → 1.3.0");
    // Version going down.
    let down = schema_with("schema_version: 1.2.0", "schema_version: 1.1.0");
    assert_eq!(
        statuses(&check(&down, STORE, Some(SCHEMA)), Rule::CompatVersionBump),
        vec![Status::Error]
    );
}

#[test]
fn removed_view_breaks_compatibility() {
    let old = vec![checks::load_bytes("old/trips_v1.yaml", SCHEMA.as_bytes())];
    let new = vec![checks::load_bytes(
        "stats_v1.yaml",
        SCHEMA.replace("trips_v1", "stats_v1").as_bytes(),
    )];
    let targets = Targets {
        compare_store: true,
        data: None,
        store: None,
        previous: Some(&old),
        against: "old".into(),
    };
    let report = run::check(new, &targets, &Config::default());
    let removed: Vec<_> = report
        .findings()
        .filter(|(f, _)| f.path == "old/trips_v1.yaml")
        .collect();
    assert_eq!(removed.len(), 1, "{report:#?}");
    assert_eq!(removed[0].1.rule, Rule::CompatBreaking);
    assert_eq!(removed[0].1.message, "feature view `trips_v1` (old/trips_v1.yaml 1.2.0) was removed from this revision; removing a view breaks BACKWARD compatibility for its consumers");
}

/// Inline ignore comments (`ignore-comment`, `ignore-unused`) and baseline entries
/// (`baseline-unused`): the suppression rules.
#[test]
fn suppression_rules() {
    use arrowfeat_validator::suppress;
    let run = |schema: &str| {
        let mut report = check(schema, STORE, None);
        suppress::apply_ignores(&mut report);
        report
    };
    // A reasoned ignore on the line before the finding accepts it.
    let ignored = run(&schema_with(
        "ttl: 1d",
        "# arrowfeat: ignore[ttl] the platform team sets TTLs\nttl: 2d",
    ));
    assert!(statuses(&ignored, Rule::Ttl).is_empty(), "{ignored:#?}");
    assert_eq!(ignored.ignored, 1);
    // Without a reason it is itself a finding, and accepts nothing.
    let unreasoned = run(&schema_with("ttl: 1d", "ttl: 2d # arrowfeat: ignore[ttl]"));
    assert_eq!(
        statuses(&unreasoned, Rule::IgnoreComment),
        vec![Status::Error]
    );
    assert_eq!(statuses(&unreasoned, Rule::Ttl), vec![Status::Error]);
    // An ignore with nothing to accept is reported.
    let unused = run(&schema_with(
        "ttl: 1d",
        "ttl: 1d # arrowfeat: ignore[ttl] stale",
    ));
    assert_eq!(statuses(&unused, Rule::IgnoreUnused), vec![Status::Warning]);
    // A baseline entry with nothing to accept is reported.
    let drifted = run(&schema_with("ttl: 1d", "ttl: 2d"));
    let entries = suppress::parse(suppress::write(&drifted).as_bytes()).unwrap();
    let mut fixed = run(SCHEMA);
    suppress::apply_baseline(&mut fixed, &entries, "arrowfeat-baseline.json");
    assert_eq!(
        statuses(&fixed, Rule::BaselineUnused),
        vec![Status::Warning]
    );
    let mut same = drifted.clone();
    suppress::apply_baseline(&mut same, &entries, "arrowfeat-baseline.json");
    assert_eq!(same.findings().count(), 0, "{same:#?}");
    assert_eq!(same.baselined, drifted.findings().count());
}

/// The data rules from an engine's counts (the counting itself is tested with DataFusion
/// in gate/tests/data_gate.rs): each fires on a count, stays quiet on zero, and reaches
/// the report through `Targets::data`.
#[test]
fn data_rules_from_counts() {
    use arrowfeat_validator::checks::data::{self, DataColumn, DataCounts, DataOptions, Matched};
    use arrowfeat_validator::report::{Actual, Check, Expected};
    use arrowfeat_validator::spec::model::SchemaFile;
    use arrowfeat_validator::store::StoreView;
    use arrowfeat_validator::types::{FeatureType, TimeUnit};

    struct Counted(DataCounts, bool);
    impl run::DataSource for Counted {
        fn check(
            &self,
            file: &SchemaFile,
            _: Option<&StoreView>,
            _: &arrowfeat_validator::config::Config,
        ) -> Option<Vec<Check>> {
            if self.1 {
                return Some(vec![Check::fail(
                    Rule::DataUnreadable,
                    "data",
                    Expected("data that can be read"),
                    Actual("unreadable"),
                    arrowfeat_validator::yaml::Pos::UNKNOWN,
                    "cannot read",
                )]);
            }
            let options = DataOptions {
                as_of_nanos: 0,
                sample_rows: 5,
            };
            Some(data::findings(
                &data::plan(file, "d.parquet", &options),
                &self.0,
            ))
        }
        fn label(&self) -> String {
            "data d.parquet".into()
        }
    }
    let run_with = |counts: DataCounts, unreadable: bool| {
        let source = Counted(counts, unreadable);
        let targets = Targets {
            compare_store: true,
            data: Some(&source),
            store: None,
            previous: None,
            against: String::new(),
        };
        run::check(
            vec![checks::load_bytes("trips_v1.yaml", SCHEMA.as_bytes())],
            &targets,
            &Config::default(),
        )
    };
    let utc = |unit| {
        Some(FeatureType::Timestamp {
            unit,
            tz: Some("UTC".into()),
        })
    };
    let column = |name: &str, read_as: Option<FeatureType>| DataColumn {
        name: name.into(),
        read_as,
        arrow: "T".into(),
    };
    let options = DataOptions {
        as_of_nanos: 0,
        sample_rows: 5,
    };
    let (_, file) = checks::load_bytes("trips_v1.yaml", SCHEMA.as_bytes());
    let plan = data::plan(&file.unwrap(), "d.parquet", &options);
    let counts = |rows: u64| DataCounts {
        rows: 10,
        columns: vec![
            column("driver_id", Some(FeatureType::Int64)),
            column("event_ts", utc(TimeUnit::Microsecond)),
            column("created", utc(TimeUnit::Second)),
            column("fare", Some(FeatureType::Float64)),
            column("city", Some(FeatureType::String)),
        ],
        checks: vec![
            Some(Matched {
                rows,
                sample: vec!["driver_id=1".into()]
            });
            plan.checks.len()
        ],
        exact_duplicates: Some(Matched {
            rows,
            sample: vec![],
        }),
        conflicting: Some(Matched {
            rows,
            sample: vec![],
        }),
        keys: Some(10),
        stale_keys: Some(Matched {
            rows,
            sample: vec![],
        }),
    };
    let clean = run_with(counts(0), false);
    assert_eq!(clean.findings().count(), 0, "{clean:#?}");
    let faulty = run_with(counts(1), false);
    for (rule, status) in [
        (Rule::DataNull, Status::Error),
        (Rule::DataNonFinite, Status::Warning),
        (Rule::DataOutOfRange, Status::Error),
        (Rule::DataNotAllowed, Status::Error),
        (Rule::DataFutureEvent, Status::Error),
        (Rule::DataCreatedBeforeEvent, Status::Error),
        (Rule::DataStaleKeys, Status::Info),
        (Rule::DataDuplicateRows, Status::Warning),
        (Rule::DataConflictingRows, Status::Error),
    ] {
        assert!(
            statuses(&faulty, rule).contains(&status),
            "{rule}: {faulty:#?}"
        );
    }
    // `fare` as text, `city` missing.
    let mut typed = counts(0);
    typed.columns[3] = column("fare", Some(FeatureType::String));
    typed.columns.pop();
    let typed = run_with(typed, false);
    assert_eq!(statuses(&typed, Rule::DataColumnType), vec![Status::Error]);
    assert_eq!(
        statuses(&typed, Rule::DataColumnMissing),
        vec![Status::Error]
    );
    let unreadable = run_with(counts(0), true);
    assert_eq!(
        statuses(&unreadable, Rule::DataUnreadable),
        vec![Status::Error]
    );
    assert_eq!(unreadable.exit_code(false), 2);
}

#[test]
fn drift_rules_from_summaries() {
    use arrowfeat_validator::checks::drift::{self, Kind, Summary};
    let (_, file) = checks::load_bytes("trips_v1.yaml", SCHEMA.as_bytes());
    let file = file.unwrap();
    let (features, skipped) = drift::features(&file);
    let kinds: Vec<(&str, Kind)> = features.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    assert_eq!(
        kinds,
        vec![("fare", Kind::Numeric), ("city", Kind::Categorical)]
    );
    assert!(skipped.is_empty());
    let numbers = |from: u32, nulls: u64| Summary {
        rows: 100 + nulls,
        nulls,
        numbers: (from..from + 100).map(|v| (f64::from(v), 1)).collect(),
        ..Summary::default()
    };
    let cities = |pairs: &[(&str, u64)]| Summary {
        rows: pairs.iter().map(|p| p.1).sum(),
        categories: pairs.iter().map(|(v, c)| (v.to_string(), *c)).collect(),
        ..Summary::default()
    };
    let fare_reference = drift::profile(Kind::Numeric, &numbers(0, 0));
    let city_reference =
        drift::profile(Kind::Categorical, &cities(&[("berlin", 50), ("paris", 50)]));
    let run = |thresholds: &drift::Thresholds| {
        let mut out = drift::findings(
            ("ref.parquet", "cur.parquet"),
            &features[0],
            Some(&fare_reference),
            &numbers(60, 30),
            thresholds,
        );
        out.extend(drift::findings(
            ("ref.parquet", "cur.parquet"),
            &features[1],
            Some(&city_reference),
            &cities(&[("berlin", 10), ("paris", 10), ("rome", 80)]),
            thresholds,
        ));
        out
    };
    let status_of = |checks: &[arrowfeat_validator::report::Check], rule: Rule| -> Vec<Status> {
        checks
            .iter()
            .filter(|c| c.rule == rule)
            .map(|c| c.status)
            .collect()
    };
    let drifted = run(&drift::Thresholds::default());
    for rule in [
        Rule::DriftPsi,
        Rule::DriftJensenShannon,
        Rule::DriftKs,
        Rule::DriftCategories,
        Rule::DriftNullRate,
    ] {
        assert!(status_of(&drifted, rule).contains(&Status::Error), "{rule}");
    }
    let ks = drifted.iter().find(|c| c.rule == Rule::DriftKs).unwrap();
    // As scipy computes it: a difference of two shares (0.7 - 0.1).
    assert_eq!(ks.actual, "0.6 (reference n=100, current n=100)");
    let categories = drifted
        .iter()
        .find(|c| c.rule == Rule::DriftCategories)
        .unwrap();
    assert!(
        categories.message.contains("new: rome"),
        "{}",
        categories.message
    );
    // Thresholds from arrowfeat.toml: the same numbers pass.
    let config = Config::parse(
        "[drift]\npsi = 100\njensen_shannon = 1\nks = 1\ncategories = 1\nnull_rate = 1\n",
    )
    .unwrap();
    assert!(run(&config.drift).iter().all(|c| c.status == Status::Pass));
    for bad in [
        "[drift]\npsi = -1\n",
        "[drift]\npsi = nan\n",
        "[drift]\nkl = 1\n",
    ] {
        assert!(Config::parse(bad).is_err(), "{bad}");
    }
    // No reference profile of the feature, or one of another kind.
    let missing = drift::findings(
        ("profile.json", "cur.parquet"),
        &features[0],
        None,
        &numbers(0, 0),
        &drift::Thresholds::default(),
    );
    assert_eq!(
        status_of(&missing, Rule::DriftReference),
        vec![Status::Error]
    );
    let other_kind = drift::findings(
        ("profile.json", "cur.parquet"),
        &features[0],
        Some(&city_reference),
        &numbers(0, 0),
        &drift::Thresholds::default(),
    );
    assert_eq!(
        status_of(&other_kind, Rule::DriftReference),
        vec![Status::Error]
    );
}

/// A refused save is an input finding: no configuration lowers or ignores it, and the
/// run exits 2, as the CLI process does.
#[test]
fn reference_not_saved_cannot_be_accepted() {
    use arrowfeat_validator::report::{Actual, Check, Expected, FileReport};
    let error = Config::parse("[severity]\nreference-not-saved = \"warning\"\n").unwrap_err();
    assert!(error.contains("category `input`"), "{error}");
    let config = Config::parse(
        "[severity]\ndrift-reference = \"off\"\ndata-not-read = \"off\"\n[[ignore]]\nrule = \"drift-reference\"\n",
    )
    .unwrap();
    let mut report = Report::new("", vec![FileReport::new("v.yaml")]);
    report.files[0].checks.push(Check::fail(
        Rule::ReferenceNotSaved,
        "drift: view `v`: reference profile",
        Expected("a complete profile to save"),
        Actual("incomplete"),
        arrowfeat_validator::yaml::Pos::UNKNOWN,
        "the reference profile is not saved",
    ));
    config.apply(&mut report);
    assert_eq!(
        statuses(&report, Rule::ReferenceNotSaved),
        vec![Status::Error]
    );
    assert_eq!(report.exit_code(false), 2);
}

#[test]
fn skew_rules_from_counts() {
    use arrowfeat_validator::checks::data::Matched;
    use arrowfeat_validator::checks::skew::{findings, FeatureSkew, SkewCounts, SkewLabels};
    let labels = SkewLabels {
        serving: "log.parquet".into(),
        training: "backfill.parquet".into(),
        time_tolerance: "at most 5m before the serving time".into(),
        value_tolerance: "exactly equal".into(),
    };
    let matched = |rows: u64| Matched {
        rows,
        sample: if rows > 0 {
            vec!["user_id=1".into()]
        } else {
            Vec::new()
        },
    };
    let counts = |rows: u64| SkewCounts {
        serving_rows: 10,
        training_rows: 20,
        missing: matched(rows),
        extra: matched(rows),
        features: vec![FeatureSkew {
            name: "fare".into(),
            pos: arrowfeat_validator::yaml::Pos::UNKNOWN,
            compared: 10 - rows,
            mismatched: matched(rows),
            exact: false,
        }],
    };
    let status = |checks: &[arrowfeat_validator::report::Check], rule: Rule| {
        checks
            .iter()
            .filter(|c| c.rule == rule)
            .map(|c| c.status)
            .collect::<Vec<_>>()
    };
    let clean = findings(&labels, &counts(0));
    assert!(clean.iter().all(|c| c.status == Status::Pass));
    let skewed = findings(&labels, &counts(2));
    assert_eq!(status(&skewed, Rule::SkewMismatch), vec![Status::Error]);
    assert_eq!(status(&skewed, Rule::SkewMissing), vec![Status::Error]);
    assert_eq!(status(&skewed, Rule::SkewExtra), vec![Status::Info]);
    let mismatch = skewed
        .iter()
        .find(|c| c.rule == Rule::SkewMismatch)
        .unwrap();
    assert!(
        mismatch.message.contains("2 of 8 matched rows (25.00%")
            && mismatch.message.contains("user_id=1"),
        "{}",
        mismatch.message
    );
    // The value tolerance applies to floats only: other features say they are exact.
    let loose = SkewLabels {
        value_tolerance: "floats within absolute 0.001".into(),
        ..labels.clone()
    };
    let mut exact = counts(2);
    exact.features[0].exact = true;
    for (features, says) in [
        (counts(2), "floats within absolute 0.001"),
        (exact, "values exactly equal"),
    ] {
        let checks = findings(&loose, &features);
        let mismatch = checks
            .iter()
            .find(|c| c.rule == Rule::SkewMismatch)
            .unwrap();
        assert!(mismatch.message.contains(says), "{}", mismatch.message);
    }
}

/// `data-not-read` (the store names no file for a view's data) is an error about the
/// data, not unreadable input: exit 1, not 2. A store given for
/// the data's whereabouts only (`compare_store: false`, as `drift` reads it) is not
/// compared with the schema files, but still reaches the data source.
#[test]
fn data_not_read_is_an_error_and_a_store_for_data_only_is_not_compared() {
    use arrowfeat_validator::report::{Actual, Check, Expected};
    use arrowfeat_validator::spec::model::SchemaFile;
    use arrowfeat_validator::store::StoreView;

    struct NotRead;
    impl run::DataSource for NotRead {
        fn check(
            &self,
            _: &SchemaFile,
            store: Option<&StoreView>,
            _: &Config,
        ) -> Option<Vec<Check>> {
            Some(vec![Check::fail(
                Rule::DataNotRead,
                "data of the store's batch source",
                Expected("a file source"),
                Actual(match store {
                    Some(_) => "another source",
                    None => "no view",
                }),
                arrowfeat_validator::yaml::Pos::UNKNOWN,
                "not read",
            )])
        }
        fn label(&self) -> String {
            "data of the store's batch sources".into()
        }
    }
    // A store that disagrees with the schema (another type for `fare`).
    let store: StoreMetadata = store::parse(
        STORE
            .replace(r#""type": "float64""#, r#""type": "int64""#)
            .as_bytes(),
    )
    .unwrap();
    let report = |compare_store: bool| {
        run::check(
            vec![checks::load_bytes("trips_v1.yaml", SCHEMA.as_bytes())],
            &Targets {
                compare_store,
                data: Some(&NotRead),
                store: Some(&store),
                previous: None,
                against: String::new(),
            },
            &Config::default(),
        )
    };
    let compared = report(true);
    assert_eq!(statuses(&compared, Rule::FeatureType), vec![Status::Error]);
    let data_only = report(false);
    assert_eq!(
        data_only
            .findings()
            .map(|(_, c)| c.rule)
            .collect::<Vec<_>>(),
        vec![Rule::DataNotRead]
    );
    let (_, finding) = data_only.findings().next().unwrap();
    assert_eq!(
        finding.actual, "another source",
        "the store reached the data source"
    );
    assert_eq!(finding.status, Status::Error);
    assert_eq!(data_only.exit_code(false), 1);
}

#[test]
fn every_rule_has_a_test_above() {
    let source = include_str!("rules.rs");
    for rule in Rule::ALL {
        let variant = format!("Rule::{rule:?}");
        assert!(source.contains(&variant), "no test names {variant}");
    }
}

#[test]
fn docs_rules_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let expected = rules::markdown();
    if std::env::var_os("ARROWFEAT_UPDATE_DOCS").is_some() {
        std::fs::write(path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/rules.md is out of date: run `make docs`"
    );
}

/// Every number parsed from a schema file is range-checked: out of range is a finding at
/// the value's line and column, never a wrap and never a skipped check.
#[test]
fn numbers_out_of_range_are_findings_with_a_location() {
    let finding = |schema: &str, rule: Rule, needle: &str| {
        let (report, _) = checks::load_bytes("trips_v1.yaml", schema.as_bytes());
        let found = report
            .checks
            .iter()
            .find(|c| c.rule == rule && c.status == Status::Error)
            .unwrap_or_else(|| panic!("no {} finding: {:#?}", rule, report.checks));
        assert!(found.message.contains(needle), "{}", found.message);
        assert!(found.line > 0, "{found:?}");
        (found.line, found.column)
    };
    for ttl in [
        "99999999999999999999s",
        "99999999999999999999",
        "18446744073709551615s",
        "30000000w",
        "315576000001",
    ] {
        let at = finding(
            &schema_with("ttl: 1d", &format!("ttl: {ttl}")),
            Rule::SchemaViolation,
            "out of range",
        );
        assert_eq!(at, (14, 6), "{ttl}");
    }
    let at = finding(
        &schema_with("ttl: 1d", "ttl: -5"),
        Rule::SchemaViolation,
        "ttl",
    );
    assert_eq!(at.0, 14);
    let at = finding(
        &schema_with("name: trips_v1", "name: trips_v99999999999999999999999"),
        Rule::VersionNameSuffix,
        "_v99999999999999999999999 which is out of range",
    );
    assert_eq!(at, (1, 7));
    finding(
        &schema_with(
            "schema_version: 1.2.0",
            "schema_version: 1.99999999999999999999.0",
        ),
        Rule::VersionSemver,
        "schema_version `1.99999999999999999999.0` is not a semantic version",
    );
    finding(
        &schema_with("type: string", "type: embedding[99999999999]"),
        Rule::TypeSyntax,
        "embedding dimension `99999999999`",
    );
    finding(
        &schema_with(
            "{allowed_values: [berlin, paris]}",
            "{allowed_values: [1, 3000000000]}",
        )
        .replace("type: string", "type: int32"),
        Rule::ConstraintInvalid,
        "allowed value 3000000000 is not a int32 value",
    );
    // The largest TTL a registry can hold still passes.
    let report = check(&schema_with("ttl: 1d", "ttl: 315576000000"), STORE, None);
    assert!(report
        .findings()
        .all(|(_, c)| c.rule != Rule::SchemaViolation));
}

#[test]
fn unknown_time_zones_are_findings() {
    let (report, _) = checks::load_bytes(
        "trips_v1.yaml",
        schema_with("tz: UTC", "tz: Mars/Olympus").as_bytes(),
    );
    let found = report
        .checks
        .iter()
        .find(|c| c.rule == Rule::TimestampDeclaration && c.status == Status::Error)
        .expect("timestamp-declaration finding");
    assert!(
        found.message.contains("unknown time zone `Mars/Olympus`"),
        "{}",
        found.message
    );
    let (report, _) = checks::load_bytes(
        "trips_v1.yaml",
        schema_with("type: string", "type: timestamp[us, Mars/Olympus]").as_bytes(),
    );
    let found = report
        .checks
        .iter()
        .find(|c| c.rule == Rule::TypeSyntax && c.status == Status::Error)
        .expect("type-syntax finding");
    assert!(
        found.message.contains("unknown time zone `Mars/Olympus`"),
        "{}",
        found.message
    );
    assert_eq!((found.line, found.column), (21, 11));
}
