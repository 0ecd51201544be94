//! The checks of one schema file on its own, before any store or earlier revision is
//! consulted: types, duplicate names, constraints, the event timestamp, the TTL and the
//! version.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use crate::files::read_bounded;
use crate::report::{Actual, Check, Expected, FileReport, Uncompared};
use crate::rules::Rule;
use crate::spec::{
    self, name_version_suffix, parse::written, ExactNumber, SchemaFile, TtlSpec,
    MAX_SCHEMA_FILE_BYTES,
};
use crate::text::short;
use crate::ttl::MAX_TTL_SECONDS;
use crate::types::FeatureType;

/// The values of `file` that do not parse (a `type` outside the vocabulary, a TTL out of
/// range), each with the format finding that reports it: comparisons with `with` (e.g.
/// "the store") skip them, and [`Report::flag_unchecked_files`](crate::report::Report::flag_unchecked_files)
/// makes sure that skip is seen.
pub fn unreadable_values(file: &SchemaFile, with: &'static str) -> Vec<Uncompared> {
    let mut out = Vec::new();
    let mut push = |rule: Rule, because: String, subject: String, pointer: String| {
        out.push(Uncompared {
            because: (rule, because),
            subject,
            with,
            pos: file.root.locate(&pointer),
        })
    };
    for (index, feature) in file.spec.features.iter().enumerate() {
        if FeatureType::parse(&feature.type_name).is_err() {
            let name = crate::text::short(&feature.name);
            push(
                Rule::TypeSyntax,
                format!("feature {name}: type syntax"),
                format!("feature {name}: type"),
                format!("/features/{index}/type"),
            );
        }
    }
    for (index, entity) in file.spec.entities.iter().enumerate() {
        if FeatureType::parse(&entity.type_name).is_err() {
            let name = crate::text::short(&entity.name);
            push(
                Rule::TypeSyntax,
                format!("entity {name}: type syntax"),
                format!("entity {name}: type"),
                format!("/entities/{index}/type"),
            );
        }
    }
    let ts = &file.spec.event_timestamp;
    if ts.kind != "datetime64"
        && ts
            .tz
            .as_deref()
            .is_some_and(|tz| !crate::types::valid_time_zone(tz))
    {
        push(
            Rule::TimestampDeclaration,
            "event timestamp: declaration".into(),
            "event timestamp: type".into(),
            "/event_timestamp/tz".into(),
        );
    }
    if file
        .spec
        .ttl
        .as_ref()
        .is_some_and(|ttl| ttl.seconds().is_err())
    {
        push(
            Rule::SchemaViolation,
            "ttl".into(),
            "ttl".into(),
            "/ttl".into(),
        );
    }
    out
}

/// Reads and checks one schema file from disk. The report always names the file; the
/// schema is returned when it could be read and matches the format.
pub fn load_file(path: &Path) -> (FileReport, Option<SchemaFile>) {
    let label = path.display().to_string();
    let label = label
        .strip_prefix("./")
        .map_or(label.clone(), str::to_string);
    match read_bounded(path, MAX_SCHEMA_FILE_BYTES) {
        Ok(bytes) => load_bytes(&label, &bytes),
        Err(message) => {
            let mut report = FileReport::new(&label);
            report.checks.push(spec::parse::unreadable(message));
            (report, None)
        }
    }
}

/// Reads schema file content ([`spec::read`]) and runs the checks that need only the
/// file; `label` names it in findings (a path, or `REF:path`).
pub fn load_bytes(label: &str, bytes: &[u8]) -> (FileReport, Option<SchemaFile>) {
    let (mut report, file) = spec::read(label, bytes);
    if let Some(file) = &file {
        // `read` returns a file only for valid UTF-8.
        let text = std::str::from_utf8(bytes).unwrap_or_default();
        report.checks.extend(file_checks(file, text));
    }
    (report, file)
}

/// Checks that need only the file: types, duplicates, constraints, versions, timestamps.
fn file_checks(file: &SchemaFile, text: &str) -> Vec<Check> {
    let spec = &file.spec;
    let root = &file.root;
    let mut checks = Vec::new();

    // Types.
    let typed =
        |rule: Rule, subject: String, type_name: &str, pointer: String, checks: &mut Vec<Check>| {
            match FeatureType::parse(type_name) {
                Ok(ty) => checks.push(Check::pass(
                    rule,
                    subject,
                    Expected("a known type"),
                    Actual(ty.to_string()),
                    root.locate(&pointer),
                )),
                Err(message) => checks.push(Check::fail(
                    rule,
                    subject.clone(),
                    Expected("a known type"),
                    Actual(crate::text::short(type_name)),
                    root.locate(&pointer),
                    format!("{subject}: {message}"),
                )),
            }
        };
    for (index, feature) in spec.features.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("feature {}: type syntax", crate::text::short(&feature.name)),
            &feature.type_name,
            format!("/features/{index}/type"),
            &mut checks,
        );
    }
    for (index, entity) in spec.entities.iter().enumerate() {
        typed(
            Rule::TypeSyntax,
            format!("entity {}: type syntax", crate::text::short(&entity.name)),
            &entity.type_name,
            format!("/entities/{index}/type"),
            &mut checks,
        );
    }

    // Duplicate names among features and entity join keys.
    let mut seen: HashSet<&str> = HashSet::new();
    let join_keys: HashSet<&str> = spec.entities.iter().map(|e| e.join_key.as_str()).collect();
    let mut duplicates = 0;
    // Two entities of one name (with different join keys) are as ambiguous: which one
    // would the store and the earlier revision be compared with?
    let mut entity_names: HashSet<&str> = HashSet::new();
    for (index, entity) in spec.entities.iter().enumerate() {
        if !entity_names.insert(&entity.name) {
            duplicates += 1;
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("entity {}", short(&entity.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&entity.name))),
                root.locate(&format!("/entities/{index}/name")),
                format!("entity `{}` is declared twice", short(&entity.name)),
            ));
        }
    }
    for (index, entity) in spec.entities.iter().enumerate() {
        if !seen.insert(&entity.join_key) {
            duplicates += 1;
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("entity {}: join key", short(&entity.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&entity.join_key))),
                root.locate(&format!("/entities/{index}/join_key")),
                format!("join key `{}` is declared twice", short(&entity.join_key)),
            ));
        }
    }
    for (index, feature) in spec.features.iter().enumerate() {
        if !seen.insert(&feature.name) {
            duplicates += 1;
            let first = join_keys.contains(feature.name.as_str());
            let what = if first {
                "an entity join key"
            } else {
                "an earlier feature"
            };
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                format!("feature {}", short(&feature.name)),
                Expected("unique names"),
                Actual(format!("`{}` again", short(&feature.name))),
                root.locate(&format!("/features/{index}/name")),
                format!(
                    "feature `{}` has the same name as {what}",
                    short(&feature.name)
                ),
            ));
        }
    }
    let names = seen.len();
    // The timestamps are columns of the same rows: a key or feature of the same name
    // would be one column read as two things.
    let times = [
        Some((
            &spec.event_timestamp.name,
            "/event_timestamp",
            "event timestamp",
        )),
        spec.created_timestamp
            .as_ref()
            .map(|c| (&c.name, "/created_timestamp", "created timestamp")),
    ];
    for (name, pointer, what) in times.into_iter().flatten() {
        if !seen.insert(name) {
            duplicates += 1;
            let other = if join_keys.contains(name.as_str()) {
                "an entity join key"
            } else if spec.features.iter().any(|f| &f.name == name) {
                "a feature"
            } else {
                "the event timestamp"
            };
            checks.push(Check::fail(
                Rule::DuplicateFeature,
                what,
                Expected("unique names"),
                Actual(format!("`{}` again", short(name))),
                root.locate(&format!("{pointer}/name")),
                format!("{what} `{}` has the same name as {other}", short(name)),
            ));
        }
    }
    if duplicates == 0 {
        checks.push(Check::pass(
            Rule::DuplicateFeature,
            "feature names",
            Expected("unique"),
            Actual(format!("{names} unique")),
            root.locate_key("", "features"),
        ));
    }

    // Constraints.
    for (index, feature) in spec.features.iter().enumerate() {
        let Some(constraints) = &feature.constraints else {
            continue;
        };
        let pointer = format!("/features/{index}/constraints");
        let subject = format!("feature {}: constraints", short(&feature.name));
        let ty = FeatureType::parse(&feature.type_name).ok();
        let numeric = matches!(
            ty,
            Some(
                FeatureType::Int32
                    | FeatureType::Int64
                    | FeatureType::Float32
                    | FeatureType::Float64
            )
        );
        let mut problems = Vec::new();
        if (constraints.min.is_some() || constraints.max.is_some()) && ty.is_some() && !numeric {
            problems.push(format!(
                "min/max need a numeric type, found {}",
                short(&feature.type_name)
            ));
        }
        // Bounds as written (`1e23`, not `1e+23`) and compared exactly, whatever their size:
        // through f64, 9223372036854775808 > 9223372036854775807 is false.
        let shown = |written: &Option<String>, number: &Option<serde_json::Number>| {
            written.as_deref().map_or_else(
                || number.as_ref().map_or(String::new(), |n| n.to_string()),
                short,
            )
        };
        let (min_shown, max_shown) = (
            shown(&constraints.min_written, &constraints.min),
            shown(&constraints.max_written, &constraints.max),
        );
        let (min, max) = (constraints.min_exact(), constraints.max_exact());
        if let (Some(min), Some(max)) = (&min, &max) {
            if min.cmp_value(max) == std::cmp::Ordering::Greater {
                problems.push(format!("min {min_shown} is greater than max {max_shown}"));
            }
        }
        // In the type's range: `min: 5000000000` holds for no int32.
        let range = match ty {
            Some(FeatureType::Int32) => Some((
                ExactNumber::int(i32::MIN.into()),
                ExactNumber::int(i32::MAX.into()),
            )),
            Some(FeatureType::Int64) => Some((
                ExactNumber::int(i64::MIN.into()),
                ExactNumber::int(i64::MAX.into()),
            )),
            Some(FeatureType::Float32) => Some((
                ExactNumber::Float(-f64::from(f32::MAX)),
                ExactNumber::Float(f64::from(f32::MAX)),
            )),
            Some(FeatureType::Float64) => {
                Some((ExactNumber::Float(f64::MIN), ExactNumber::Float(f64::MAX)))
            }
            _ => None,
        };
        if let Some((lo, hi)) = &range {
            for (what, bound, written) in [("min", &min, &min_shown), ("max", &max, &max_shown)] {
                let Some(bound) = bound else { continue };
                if bound.cmp_value(lo).is_lt() || bound.cmp_value(hi).is_gt() {
                    problems.push(format!(
                        "{what} {written} is outside the range of {}",
                        short(&feature.type_name)
                    ));
                }
            }
        }
        if let (Some(values), Some(ty)) = (&constraints.allowed_values, &ty) {
            // In the type's range too: 3000000000 is no int32 value.
            let fits = |v: &Value| match ty {
                FeatureType::String => v.is_string(),
                FeatureType::Bool => v.is_boolean(),
                FeatureType::Int32 => v.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                FeatureType::Int64 => v.is_i64(),
                FeatureType::Float32 => v
                    .as_f64()
                    .is_some_and(|f| f.is_finite() && f.abs() <= f64::from(f32::MAX)),
                FeatureType::Float64 => v.as_f64().is_some_and(f64::is_finite),
                _ => false,
            };
            if let Some(bad) = values.iter().find(|v| !fits(v)) {
                problems.push(format!(
                    "allowed value {} is not a {ty} value",
                    crate::text::quote_hashed(&bad.to_string(), 60)
                ));
            }
        }
        if problems.is_empty() {
            checks.push(Check::pass(
                Rule::ConstraintInvalid,
                subject,
                Expected("satisfiable"),
                Actual("ok"),
                root.locate(&pointer),
            ));
        } else {
            checks.push(Check::fail(
                Rule::ConstraintInvalid,
                subject.clone(),
                Expected("satisfiable constraints"),
                Actual(problems.join("; ")),
                root.locate(&pointer),
                format!("{subject}: {}", problems.join("; ")),
            ));
        }
    }

    // Event timestamp declaration.
    let ts = &spec.event_timestamp;
    let ts_pos = root.locate("/event_timestamp");
    let mut ts_problems = Vec::new();
    if ts.kind == "datetime64" && ts.unit != "ns" && root.get("/event_timestamp/unit").is_some() {
        ts_problems.push(format!(
            "datetime64 is always in ns, found unit {}",
            short(&ts.unit)
        ));
    }
    if ts.kind == "datetime64" && root.get("/event_timestamp/tz").is_some() && ts.tz.is_some() {
        ts_problems.push("datetime64 is naive; remove tz or use type: timestamp".to_string());
    }
    if let Some(tz) = &ts.tz {
        if ts.kind != "datetime64" && !crate::types::valid_time_zone(tz) {
            ts_problems.push(format!(
                "unknown time zone `{}`: expected an IANA time-zone name (UTC, Europe/Paris, ...) or a fixed offset (+05:30)",
                crate::text::quote_hashed(tz, 60)
            ));
        }
    }
    if !ts.required {
        ts_problems.push(
            "required: false; point-in-time joins need every row to carry an event timestamp"
                .to_string(),
        );
    }
    if ts_problems.is_empty() {
        checks.push(Check::pass(
            Rule::TimestampDeclaration,
            "event timestamp: declaration",
            Expected("required timestamp"),
            Actual(format!("{} {}", short(&ts.name), ts.feature_type())),
            ts_pos,
        ));
    } else {
        checks.push(Check::fail(
            Rule::TimestampDeclaration,
            "event timestamp: declaration",
            Expected("a required timestamp"),
            Actual(ts_problems.join("; ")),
            ts_pos,
            format!(
                "event timestamp `{}`: {}",
                short(&ts.name),
                ts_problems.join("; ")
            ),
        ));
    }

    // TTL: malformed or out of range is a finding at its position, never a skipped check.
    if let Some(ttl) = &spec.ttl {
        if let Err(message) = ttl.seconds() {
            // Quote the value as written: `86400.0` and `1e5` were shown as 86400 and
            // 100000, `9223372036854775808` as a float.
            let found = written(root, text, "/ttl").unwrap_or_else(|| ttl.written());
            let message = match ttl {
                TtlSpec::Duration(_) => message,
                _ => format!(
                    "ttl: expected a whole number of seconds from 0 to {} (10,000 years) or a duration such as 90s, 6h, 1d12h; found `{found}`{}",
                    MAX_TTL_SECONDS,
                    if found.bytes().all(|b| b.is_ascii_digit()) {
                        ", which is out of range"
                    } else {
                        ""
                    }
                ),
            };
            checks.push(Check::fail(
                Rule::SchemaViolation,
                "ttl",
                Expected(format!("0 to {} s", MAX_TTL_SECONDS)),
                Actual(found),
                root.locate("/ttl"),
                message,
            ));
        }
    }

    // Versions.
    let version_pos = root.locate("/schema_version");
    match semver::Version::parse(&spec.schema_version) {
        Ok(version) => {
            checks.push(Check::pass(
                Rule::VersionSemver,
                "schema_version",
                Expected("MAJOR.MINOR.PATCH"),
                Actual(short(&version.to_string())),
                version_pos,
            ));
            let name_pos = root.locate("/name");
            if let Some(Err(message)) = name_version_suffix(&spec.name) {
                checks.push(Check::fail(
                    Rule::VersionNameSuffix,
                    "name suffix",
                    Expected(format!("_v{}", version.major)),
                    Actual("out of range"),
                    name_pos,
                    message,
                ));
            }
            if let Some(Ok(suffix)) = name_version_suffix(&spec.name) {
                if suffix == version.major {
                    checks.push(Check::pass(
                        Rule::VersionNameSuffix,
                        "name suffix",
                        Expected(format!("_v{}", version.major)),
                        Actual(format!("_v{suffix}")),
                        name_pos,
                    ));
                } else {
                    checks.push(Check::fail(Rule::VersionNameSuffix, "name suffix", Expected(format!("_v{}", version.major)), Actual(format!("_v{suffix}")), name_pos, format!("view name `{}` ends in _v{suffix} but schema_version {} has major version {}", short(&spec.name), short(&version.to_string()), version.major)));
                }
            }
        }
        Err(error) => checks.push(Check::fail(
            Rule::VersionSemver,
            "schema_version",
            Expected("MAJOR.MINOR.PATCH"),
            Actual(short(&spec.schema_version)),
            version_pos,
            format!(
                "schema_version `{}` is not a semantic version (expected MAJOR.MINOR.PATCH such as 1.2.0): {}",
                short(&spec.schema_version),
                short(&error.to_string())
            ),
        )),
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIEW: &str = "name: v_v1\nschema_version: 1.0.0\nentities: [{name: driver, join_key: d, type: int64}]\nevent_timestamp: {name: ts}\nfeatures:\n  - name: f\n    type: int64\n";

    fn findings(text: &str, rule: Rule) -> Vec<Check> {
        load_bytes("v.yaml", text.as_bytes())
            .0
            .checks
            .into_iter()
            .filter(|c| c.rule == rule && c.status.is_finding())
            .collect()
    }

    /// Compared through f64, 9007199254740993 > 9007199254740992 was false.
    #[test]
    fn integer_bounds_are_compared_exactly() {
        let bounds =
            |min: &str, max: &str| format!("{VIEW}    constraints: {{min: {min}, max: {max}}}\n");
        let found = findings(
            &bounds("9007199254740993", "9007199254740992"),
            Rule::ConstraintInvalid,
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0]
                .message
                .contains("min 9007199254740993 is greater than max 9007199254740992"),
            "{}",
            found[0].message
        );
        assert!(findings(
            &bounds("9007199254740992", "9007199254740993"),
            Rule::ConstraintInvalid
        )
        .is_empty());
        assert_eq!(
            findings(&bounds("1.5", "1"), Rule::ConstraintInvalid).len(),
            1
        );
        assert!(findings(&bounds("-1", "0.5"), Rule::ConstraintInvalid).is_empty());
    }

    /// Bounds beyond i64 were compared through f64 (`9223372036854775808 > i64::MAX` was
    /// false), never against the type's range, and shown as serde prints them (`1e+23`).
    #[test]
    fn bounds_are_exact_in_range_and_shown_as_written() {
        let typed = |ty: &str, min: &str, max: &str| {
            format!("{VIEW}    constraints: {{min: {min}, max: {max}}}\n").replace(
                "type: int64\n    constraints",
                &format!("type: {ty}\n    constraints"),
            )
        };
        let messages = |text: &str| -> Vec<String> {
            findings(text, Rule::ConstraintInvalid)
                .into_iter()
                .map(|c| c.message)
                .collect()
        };
        let found = messages(&typed(
            "int64",
            "9223372036854775808",
            "9223372036854775807",
        ));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains("min 9223372036854775808 is greater than max 9223372036854775807"),
            "{found:?}"
        );
        assert!(
            found[0].contains("min 9223372036854775808 is outside the range of int64"),
            "{found:?}"
        );
        let found = messages(&typed("int64", "-9223372036854775809", "0"));
        assert!(
            found[0].contains("min -9223372036854775809 is outside the range"),
            "{found:?}"
        );
        let found = messages(&typed("int64", "0", "18446744073709551615"));
        assert!(
            found[0].contains("max 18446744073709551615 is outside the range"),
            "{found:?}"
        );
        let found = messages(&typed("int32", "5000000000", "6000000000"));
        assert!(
            found[0].contains("min 5000000000 is outside the range of int32"),
            "{found:?}"
        );
        let found = messages(&typed("float64", "1e23", "1e22"));
        assert!(
            found[0].contains("min 1e23 is greater than max 1e22"),
            "{found:?}"
        );
        // The extremes of the type are in range; floats beyond f32 are not float32.
        assert!(messages(&typed(
            "int64",
            "-9223372036854775808",
            "9223372036854775807"
        ))
        .is_empty());
        assert!(messages(&typed("int32", "-2147483648", "2147483647")).is_empty());
        assert_eq!(messages(&typed("float32", "0", "1e39")).len(), 1);
        assert!(messages(&typed("float64", "0", "1e39")).is_empty());
    }

    /// TTLs that are not whole seconds are quoted as written, with what was expected.
    #[test]
    fn ttl_findings_quote_the_value_as_written() {
        for written in [
            "010",
            "86400.0",
            "1e5",
            "9223372036854775808",
            "-1",
            "999999999999",
        ] {
            let text = VIEW.replace("features:", &format!("ttl: {written}\nfeatures:"));
            let (report, file) = load_bytes("v.yaml", text.as_bytes());
            let found: Vec<&Check> = report.findings().collect();
            assert!(!found.is_empty(), "{written}");
            let message = &found[0].message;
            assert!(
                message.contains(&format!("found `{written}`")),
                "{written}: {message}"
            );
            if file.is_some() {
                assert!(message.contains("whole number of seconds"), "{message}");
                assert_eq!(found[0].actual, written);
            }
        }
        let text = VIEW.replace("features:", "ttl: .inf\nfeatures:");
        let (report, _) = load_bytes("v.yaml", text.as_bytes());
        let message = &report.findings().next().unwrap().message;
        assert!(!message.contains("policy"), "{message}");
        assert!(
            message.contains("expected a finite number, found `.inf`"),
            "{message}"
        );
    }
}
