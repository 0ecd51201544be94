//! 1,000 schema files against a Feast registry of 1,000 feature views, end to end in one
//! process: read, parse, JSON Schema, store checks, JSON report. Prints the wall time
//! (best of 5) and leaves the files in target/bench-schemas/ so the CLI can be timed too:
//!
//!     cargo bench -p arrowfeat-validator --bench many_files
//!     time target/release/arrowfeat check --schemas target/bench-schemas/schemas \
//!         --registry target/bench-schemas/registry.json --format json > /dev/null

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use arrowfeat_validator::config::Config;
use arrowfeat_validator::output::{render, Format, RenderOptions};
use arrowfeat_validator::run::{self, Targets};
use arrowfeat_validator::store;

const VIEWS: usize = 1000;
const FEATURES: usize = 20;
const TYPES: [(&str, &str); 5] = [
    ("float32", "FLOAT"),
    ("float64", "DOUBLE"),
    ("int64", "INT64"),
    ("string", "STRING"),
    ("list<float32>", "FLOAT_LIST"),
];

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-schemas");
    let schemas = root.join("schemas");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&schemas).unwrap();
    let mut registry_views = Vec::new();
    for v in 0..VIEWS {
        let name = format!("view_{v:04}_v1");
        let mut yaml = format!(
            "name: {name}\nschema_version: 1.{}.0\nowner: team{}@example.com\nentities:\n  - name: user\n    join_key: user_id\n    type: int64\n\
             event_timestamp:\n  name: event_timestamp\n  type: timestamp\n  unit: us\n  tz: UTC\ncreated_timestamp:\n  name: created\nttl: 1d\nfeatures:\n",
            v % 7,
            v % 13
        );
        let mut features = Vec::new();
        for f in 0..FEATURES {
            let (ty, feast) = TYPES[(v + f) % TYPES.len()];
            let _ = write!(yaml, "  - name: feature_{f:02}\n    type: {ty}\n    description: Feature {f} of view {v}\n");
            if ty.starts_with("float") || ty == "int64" {
                yaml.push_str("    constraints: {min: 0, max: 1000}\n");
            }
            features
                .push(serde_json::json!({"name": format!("feature_{f:02}"), "valueType": feast}));
        }
        std::fs::write(schemas.join(format!("{name}.yaml")), yaml).unwrap();
        registry_views.push(serde_json::json!({"spec": {
            "name": name, "entities": ["user"], "entityColumns": [{"name": "user_id", "valueType": "INT64"}],
            "features": features, "ttl": "86400s", "tags": {"schema_version": format!("1.{}.0", v % 7)},
            "batchSource": {"type": "BATCH_FILE", "timestampField": "event_timestamp", "createdTimestampColumn": "created"}
        }}));
    }
    let registry = serde_json::json!({
        "project": "bench",
        "entities": [{"spec": {"name": "user", "joinKey": "user_id", "valueType": "INT64"}}],
        "featureViews": registry_views,
    });
    std::fs::write(
        root.join("registry.json"),
        serde_json::to_vec(&registry).unwrap(),
    )
    .unwrap();

    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let metadata = store::load(&root.join("registry.json")).unwrap();
        let loaded = run::load_path(&schemas).unwrap();
        let targets = Targets {
            compare_store: true,
            data: None,
            store: Some(&metadata),
            previous: None,
            against: "registry.json".into(),
        };
        let report = run::check(loaded, &targets, &Config::default());
        let json = render(
            &report,
            Format::Json,
            &RenderOptions {
                color: false,
                verbose: true,
                deny_warnings: false,
                command: "check",
            },
        );
        let elapsed = start.elapsed().as_secs_f64();
        assert_eq!(
            report.exit_code(false),
            0,
            "the generated files should all pass"
        );
        assert!(json.len() > 1000);
        best = best.min(elapsed);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{VIEWS} schema files x {FEATURES} features against {VIEWS} Feast views: best of 5 = {:.3} s ({threads} threads)", best);
}
