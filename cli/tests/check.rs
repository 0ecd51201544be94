//! `arrowfeat check` / `arrowfeat diff` as CI runs them: every report format (snapshots),
//! exit codes, bad input, configuration, git revisions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn arrowfeat_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("ARROWFEAT_FEAST")
        .output()
        .expect("run arrowfeat")
}

fn arrowfeat(args: &[&str]) -> Output {
    arrowfeat_in(&repo(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

const REGISTRY: &str = "tests/fixtures/feast/registry.json";
const DRIFTED: &str = "tests/fixtures/schemas/drifted";

#[test]
fn examples_match_the_feast_registry() {
    let out = arrowfeat(&[
        "check",
        "--schemas",
        "schemas/examples",
        "--registry",
        REGISTRY,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).ends_with("passed\n3 file(s), 3 view(s), 91 check(s): 91 passed, 0 error(s), 0 warning(s), 0 info\n"), "{}", stdout(&out));
}

/// Quiet by default (findings and a summary, as ruff and buf), every check with
/// --verbose, nothing on stdout with --quiet; --color.
#[test]
fn quiet_default_verbose_and_quiet() {
    let examples = [
        "check",
        "--schemas",
        "schemas/examples",
        "--registry",
        REGISTRY,
    ];
    // All passing: the verdict and the summary, nothing else.
    let out = arrowfeat(&examples);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("examples_quiet_default", stdout(&out));
    let out = arrowfeat(&[&examples[..], &["--verbose"]].concat());
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).lines().count() > 91, "{}", stdout(&out));
    assert!(stdout(&out).contains("  CHECK "), "{}", stdout(&out));
    // Findings: only the files that have some.
    let drifted = ["check", "--schemas", DRIFTED, "--registry", REGISTRY];
    let out = arrowfeat(&[&drifted[..], &["-v"]].concat());
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("drifted_text_verbose", stdout(&out));
    // --quiet: the exit code only; -o still writes the report.
    for args in [&drifted[..], &examples[..]] {
        for format in ["text", "json", "sarif"] {
            let out = arrowfeat(&[args, &["--quiet", "--format", format]].concat());
            assert_eq!(stdout(&out), "", "{format}");
            assert_eq!(stderr(&out), "", "{format}");
        }
    }
    let out = arrowfeat(&[&drifted[..], &["-q"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let tmp = tempdir("quiet-output");
    let dir = tmp.path();
    let file = dir.join("report.txt");
    let out = arrowfeat(&[&drifted[..], &["-q", "-o", file.to_str().unwrap()]].concat());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(2), ""));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        stdout(&arrowfeat(&drifted))
    );
    // --quiet and --verbose together is a usage error.
    let out = arrowfeat(&[&drifted[..], &["-q", "-v"]].concat());
    assert_eq!(out.status.code(), Some(2));
    // --color always colours even into a pipe and with NO_COLOR (set by arrowfeat_in);
    // auto never does into a pipe; never never does.
    let colored = stdout(&arrowfeat(&[&drifted[..], &["--color", "always"]].concat()));
    assert!(colored.contains("\x1b[31;1merror["), "{colored}");
    for when in ["auto", "never"] {
        let plain = stdout(&arrowfeat(&[&drifted[..], &["--color", when]].concat()));
        assert!(!plain.contains('\x1b'), "{when}: {plain}");
    }
    // Structured formats have the same content with or without --verbose.
    for format in ["json", "junit", "sarif", "github", "markdown"] {
        let quiet = arrowfeat(&[&drifted[..], &["--format", format]].concat());
        let verbose = arrowfeat(&[&drifted[..], &["--format", format, "--verbose"]].concat());
        assert_eq!(stdout(&quiet), stdout(&verbose), "{format}");
    }
}

#[test]
fn every_format_on_drifted_schemas() {
    for format in ["text", "json", "junit", "sarif", "github", "markdown"] {
        let out = arrowfeat(&[
            "check",
            "--schemas",
            DRIFTED,
            "--registry",
            REGISTRY,
            "--format",
            format,
        ]);
        // malformed.yaml is unreadable input: exit 2, and the other files are still checked.
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        assert_eq!(stderr(&out), "");
        insta::assert_snapshot!(format!("drifted_{format}"), stdout(&out));
    }
}

#[test]
fn json_report_is_documented_shape() {
    let out = arrowfeat(&[
        "check",
        "--schemas",
        "schemas/examples/driver_hourly_stats_v1.yaml",
        "--registry",
        REGISTRY,
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["format"], "arrowfeat-check-report");
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["exit_code"], 0);
    let check = &report["files"][0]["checks"][0];
    for key in [
        "rule", "subject", "expected", "actual", "status", "message", "line", "column",
    ] {
        assert!(check.get(key).is_some(), "{key} missing in {check}");
    }
    // `against` is prose; `against_detail` the same as fields.
    assert_eq!(
        report["against_detail"],
        serde_json::json!({"registry": REGISTRY, "revision": null, "revision_kind": null, "mode": null})
    );
    let old = "tests/fixtures/schemas/revisions/old";
    let out = arrowfeat(&[
        "diff",
        old,
        "tests/fixtures/schemas/revisions/new",
        "--format",
        "json",
        "--compatibility",
        "full",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["against_detail"],
        serde_json::json!({"registry": null, "revision": old, "revision_kind": "path", "mode": "full"})
    );
}

#[test]
fn sarif_has_what_code_scanning_requires() {
    let out = arrowfeat(&[
        "check",
        "--schemas",
        DRIFTED,
        "--registry",
        REGISTRY,
        "--format",
        "sarif",
    ]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()));
        assert!(!result["message"]["text"].as_str().unwrap().is_empty());
        let physical = &result["locations"][0]["physicalLocation"];
        assert!(physical["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .starts_with("tests/fixtures/"));
        assert!(physical["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(physical["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn warnings_pass_unless_denied() {
    let tmp = tempdir("warnings");
    let dir = tmp.path();
    let text = std::fs::read_to_string(repo().join("schemas/examples/driver_hourly_stats_v1.yaml"))
        .unwrap()
        .replace("  unit: us\n  tz: UTC\n", "  unit: ms\n  tz: UTC\n");
    std::fs::write(dir.join("v.yaml"), text).unwrap();
    let registry = repo().join(REGISTRY);
    let args = [
        "check",
        "--schemas",
        "v.yaml",
        "--registry",
        registry.to_str().unwrap(),
        "--format",
        "github",
    ];
    let out = arrowfeat_in(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out)
            .starts_with("::warning file=v.yaml,line=14,col=9,title=arrowfeat timestamp-type::"),
        "{}",
        stdout(&out)
    );
    let denied = arrowfeat_in(dir, &[&args[..], &["--deny-warnings"]].concat());
    assert_eq!(denied.status.code(), Some(1));
}

#[test]
fn config_overrides_and_ignores() {
    let tmp = tempdir("config");
    let dir = tmp.path();
    std::fs::write(
        dir.join("arrowfeat.toml"),
        "[severity]\nfeature-extra = \"warning\"\nttl = \"off\"\n\n[[ignore]]\nrule = \"version-store-tag\"\nviews = [\"driver_*\"]\n",
    )
    .unwrap();
    let schemas = repo().join(DRIFTED).join("driver_hourly_stats_v1.yaml");
    let registry = repo().join(REGISTRY);
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            schemas.to_str().unwrap(),
            "--registry",
            registry.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<(String, String)> = report["files"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "pass")
        .map(|c| {
            (
                c["rule"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("feature-extra".into(), "warning".into())),
        "{statuses:?}"
    );
    assert!(
        !statuses
            .iter()
            .any(|(rule, _)| rule == "ttl" || rule == "version-store-tag"),
        "{statuses:?}"
    );
    assert!(statuses.contains(&("feature-type".into(), "error".into())));

    std::fs::write(
        dir.join("bad.toml"),
        "[severity]\nfeature-extar = \"warning\"\n",
    )
    .unwrap();
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            schemas.to_str().unwrap(),
            "--config",
            "bad.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out), @"arrowfeat: error: --config bad.toml:2:1: unknown rule `feature-extar` (rules are listed in docs/rules.md); did you mean `feature-extra`?");
}

#[test]
fn diff_classifies_changes_and_enforces_semver() {
    let old = "tests/fixtures/schemas/revisions/old";
    let new = "tests/fixtures/schemas/revisions/new";
    let backward = arrowfeat(&["diff", old, new]);
    assert_eq!(backward.status.code(), Some(1));
    insta::assert_snapshot!("diff_backward", stdout(&backward));
    let none = arrowfeat(&[
        "diff",
        old,
        new,
        "--compatibility",
        "none",
        "--format",
        "github",
    ]);
    // Without a compatibility mode, the minor bump covers every change.
    assert_eq!(none.status.code(), Some(0), "{}", stdout(&none));
    insta::assert_snapshot!("diff_none_github", stdout(&none));
    let full = arrowfeat(&[
        "diff",
        old,
        new,
        "--compatibility",
        "full",
        "--format",
        "github",
    ]);
    insta::assert_snapshot!("diff_full_github", stdout(&full));
}

/// A revision that cannot be compared never passes as "no change": an unreadable old
/// file is a usage error for `diff` and a warning naming it for `check --against`, and a
/// schema_version that is not semver on either side is a `compat-version-bump` error.
#[test]
fn an_earlier_revision_that_cannot_be_compared_is_never_a_pass() {
    let tmp = tempdir("uncomparable");
    let dir = tmp.path();
    for sub in ["old", "new"] {
        std::fs::create_dir(dir.join(sub)).unwrap();
    }
    let old = example();
    let new = old
        .replace("schema_version: 1.2.0", "schema_version: 1.2.1")
        .replace("ttl: 1d", "ttl: 2d");
    assert_ne!(new, old, "the example changed: update this test");
    std::fs::write(dir.join("new/driver.yaml"), &new).unwrap();
    let against = |old_text: &str| {
        std::fs::write(dir.join("old/driver.yaml"), old_text).unwrap();
        (
            arrowfeat_in(dir, &["check", "--schemas", "new", "--against", "old"]),
            arrowfeat_in(dir, &["diff", "old", "new"]),
        )
    };
    for (check, diff) in [
        against(&format!("{old}team: x\n")),
        against("name: [unclosed\n"),
    ] {
        // `diff` needs the old file; `check` warns (the PR that repairs it must pass).
        assert_eq!(diff.status.code(), Some(2), "{}", stdout(&diff));
        assert!(
            stderr(&diff).contains("cannot read old/driver.yaml"),
            "{}",
            stderr(&diff)
        );
        assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
        assert!(
            stdout(&check).contains(
                "old/driver.yaml in the earlier revision cannot be read as a feature view"
            ),
            "{}",
            stdout(&check)
        );
    }
    let (check, diff) = against(&old.replace("schema_version: 1.2.0", "schema_version: \"1.2\""));
    for out in [check, diff] {
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(
            stdout(&out).contains("the earlier revision's schema_version `1.2` (in old/driver.yaml) is not a semantic version"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn against_a_git_revision() {
    let tmp = tempdir("git");
    let dir = tmp.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    let old = std::fs::read(
        repo().join("tests/fixtures/schemas/revisions/old/driver_hourly_stats_v1.yaml"),
    )
    .unwrap();
    std::fs::write(dir.join("schemas/stats.yaml"), old).unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "v1.2.0"]);
    let new = std::fs::read(
        repo().join("tests/fixtures/schemas/revisions/new/driver_hourly_stats_v1.yaml"),
    )
    .unwrap();
    std::fs::write(dir.join("schemas/stats.yaml"), new).unwrap();
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            "schemas",
            "--against",
            "HEAD",
            "--format",
            "github",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("title=arrowfeat compat-breaking-change::feature added: feature cancel_rate"),
        "{}",
        stdout(&out)
    );
    let out = arrowfeat_in(
        dir,
        &["check", "--schemas", "schemas", "--against", "no-such-ref"],
    );
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out), @"arrowfeat: error: --against `no-such-ref`: not an existing path, and not a git revision: git does not know a revision `no-such-ref` in schemas");
}

/// A fresh directory, removed when the guard drops (even if the test panics).
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("arrowfeat-check-{name}-"))
        .tempdir()
        .unwrap()
}

/// Every kind of bad input gets one finding with its location; the good file beside them
/// is still checked; the run exits with 2.
#[test]
fn bad_input_never_panics() {
    let tmp = tempdir("bad");
    let dir = tmp.path();
    let good = std::fs::read(repo().join("schemas/examples/driver_hourly_stats_v1.yaml")).unwrap();
    std::fs::write(dir.join("good.yaml"), &good).unwrap();
    std::fs::write(dir.join("empty.yaml"), "").unwrap();
    std::fs::write(dir.join("comments_only.yaml"), "# nothing here\n").unwrap();
    std::fs::write(
        dir.join("latin1.yaml"),
        b"name: driver_v1\nowner: Jos\xe9\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("duplicate_key.yaml"),
        "name: a_v1\nschema_version: 1.0.0\nname: b_v1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("malformed.yaml"),
        "name: a\n  bad: indentation\n: x\n",
    )
    .unwrap();
    let mut bomb = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..12 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 9].join(", ")
        ));
    }
    std::fs::write(dir.join("billion_laughs.yaml"), bomb).unwrap();
    std::fs::write(
        dir.join("deep.yaml"),
        format!("{}x{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    std::fs::write(
        dir.join("huge.yaml"),
        format!("name: x\n{}", "# padding\n".repeat(1_000_000)),
    )
    .unwrap();
    std::fs::write(dir.join("list.yaml"), "- just\n- a list\n").unwrap();
    let features = (0..3)
        .map(|_| "  - name: conv_rate\n    type: float32\n")
        .collect::<String>();
    let duplicated = String::from_utf8(good.clone()).unwrap();
    let head = &duplicated[..duplicated.find("features:").unwrap()];
    std::fs::write(
        dir.join("duplicate_feature.yaml"),
        format!("{head}features:\n{features}"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("nested.yaml")).unwrap(); // a directory with a schema-like name is skipped

    let registry = repo().join(REGISTRY);
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            ".",
            "--registry",
            registry.to_str().unwrap(),
            "--format",
            "github",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let mut lines: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.replace(dir.to_str().unwrap(), "DIR"))
        .collect();
    lines.sort();
    insta::assert_snapshot!("bad_input", lines.join("\n"));

    // Unreadable top-level inputs are usage errors with one line each.
    let cases: [(&[&str], &str); 4] = [
        (&["check", "--schemas", "missing_dir"], "arrowfeat: error: --schemas missing_dir: no such file or directory\n"),
        (&["check", "--schemas", "good.yaml", "--registry", "missing.json"], "arrowfeat: error: --registry missing.json: no such file or directory\n"),
        (&["check", "--schemas", "good.yaml", "--registry", "empty.yaml"], "arrowfeat: error: --registry empty.yaml: empty file; expected Feast `registry-dump` JSON or arrowfeat store metadata\n"),
        (&["check", "--schemas", "good.yaml", "--registry", "list.yaml"], "arrowfeat: error: --registry list.yaml: 1:2: malformed JSON: invalid number\n"),
    ];
    for (args, expected) in cases {
        let out = arrowfeat_in(dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), expected, "{args:?}");
    }
    // --format and --compatibility are clap value enums: a usage error listing the values.
    for (args, expected) in [
        (
            &["check", "--schemas", "good.yaml", "--format", "xml"][..],
            "[possible values: text, json, junit, sarif, github, markdown]",
        ),
        (
            &[
                "diff",
                "good.yaml",
                "good.yaml",
                "--compatibility",
                "sideways",
            ][..],
            "[possible values: backward, forward, full, none]",
        ),
    ] {
        let out = arrowfeat_in(dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = arrowfeat_in(
        dir,
        &["diff", "good.yaml", "good.yaml", "--compatibility", "FULL"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// ---- hostile input (issue 11) ------------------------------------------------------------

fn example() -> String {
    std::fs::read_to_string(repo().join("schemas/examples/driver_hourly_stats_v1.yaml")).unwrap()
}

/// A baseline written by one command accepts today's findings, keyed without line
/// numbers; fixed findings leave unused entries, which are reported.
#[test]
fn baseline_round_trip() {
    let tmp = tempdir("baseline");
    let dir = tmp.path();
    std::fs::copy(repo().join(REGISTRY), dir.join("registry.json")).unwrap();
    let drifted = example().replace("ttl: 1d", "ttl: 2d");
    std::fs::write(dir.join("driver.yaml"), &drifted).unwrap();
    let check = [
        "check",
        "--schemas",
        "driver.yaml",
        "--registry",
        "registry.json",
    ];
    assert_eq!(arrowfeat_in(dir, &check).status.code(), Some(1));
    let out = arrowfeat_in(
        dir,
        &[&check[..], &["--write-baseline", "arrowfeat-baseline.json"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let baseline = std::fs::read_to_string(dir.join("arrowfeat-baseline.json")).unwrap();
    insta::assert_snapshot!("baseline_file", baseline);
    // Lines moved: still accepted (./arrowfeat-baseline.json is found by default).
    std::fs::write(
        dir.join("driver.yaml"),
        format!("# moved\n# down\n{drifted}"),
    )
    .unwrap();
    let out = arrowfeat_in(dir, &check);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    insta::assert_snapshot!("baseline_accepted", stdout(&out));
    // --no-baseline: the finding again.
    let out = arrowfeat_in(dir, &[&check[..], &["--no-baseline"]].concat());
    assert_eq!(out.status.code(), Some(1));
    // Fixed: the entry is unused, a warning (fails only with --deny-warnings).
    std::fs::write(dir.join("driver.yaml"), example()).unwrap();
    let out = arrowfeat_in(dir, &check);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("baseline_unused", stdout(&out));
    let out = arrowfeat_in(dir, &[&check[..], &["--deny-warnings"]].concat());
    assert_eq!(out.status.code(), Some(1));
    // Hostile baselines: clean errors with file:line:column, exit 2, no panic.
    let hostile: [(&[u8], &str); 4] = [
        (b"{\n  \"format\": 1", "arrowfeat: error: baseline bad.json:2:13: `format`: expected a string, found the number 1\n"),
        (b"{\"format\":\"arrowfeat-baseline\",\"format_version\":1,\"findings\":[{\"path\":\"a\",\"rule\":\"tttl\",\"subject\":\"s\",\"fingerprint\":\"f\"}]}", "arrowfeat: error: baseline bad.json:1:87: unknown rule `tttl`"),
        (b"\x1b[2J", "arrowfeat: error: baseline bad.json:1:1: expected value\n"),
        (b"", "arrowfeat: error: baseline bad.json:1:0: EOF while parsing a value\n"),
    ];
    for (bytes, expected) in hostile {
        std::fs::write(dir.join("bad.json"), bytes).unwrap();
        let out = arrowfeat_in(dir, &[&check[..], &["--baseline", "bad.json"]].concat());
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).starts_with(expected), "{}", stderr(&out));
    }
    let big = vec![b' '; 17 * 1024 * 1024];
    std::fs::write(dir.join("bad.json"), big).unwrap();
    let out = arrowfeat_in(dir, &[&check[..], &["--baseline", "bad.json"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the limit is 16777216 bytes"),
        "{}",
        stderr(&out)
    );
    for args in [&["--baseline", "."][..], &["--baseline", "missing.json"]] {
        let out = arrowfeat_in(dir, &[&check[..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).starts_with("arrowfeat: error: baseline "),
            "{}",
            stderr(&out)
        );
    }
    #[cfg(unix)]
    {
        let fifo = dir.join("fifo.json");
        let _ = std::process::Command::new("mkfifo").arg(&fifo).status();
        if fifo.exists() {
            let out = arrowfeat_in(dir, &[&check[..], &["--baseline", "fifo.json"]].concat());
            assert_eq!(out.status.code(), Some(2));
            assert!(stderr(&out).contains("FIFO"), "{}", stderr(&out));
        }
    }
}

/// `# arrowfeat: ignore[rule] reason` on the finding's line or the line before; a missing
/// reason is a finding; an unused ignore is reported.
#[test]
fn inline_ignore_comments() {
    let tmp = tempdir("ignore");
    let dir = tmp.path();
    std::fs::copy(repo().join(REGISTRY), dir.join("registry.json")).unwrap();
    let schema = example()
        .replace(
            "ttl: 1d",
            "# arrowfeat: ignore[ttl] the platform team manages TTLs\nttl: 2d",
        )
        .replace(
            "  - name: acc_rate",
            "  - name: acc_rate # arrowfeat: ignore[feature-type]",
        )
        .replace(
            "tags:",
            "tags: # arrowfeat: ignore[feature-extra] nothing to ignore here",
        );
    std::fs::write(dir.join("driver.yaml"), schema).unwrap();
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            "driver.yaml",
            "--registry",
            "registry.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!("ignore_comments", stdout(&out));
}

/// Accepting the finding that a file does not match the format (ignore comment,
/// configuration, baseline) does not make the file pass unchecked: it was checked for
/// nothing else, against the store or otherwise, so the run says so and exits 2.
#[test]
fn accepted_format_findings_never_pass_an_unchecked_file() {
    let tmp = tempdir("unchecked");
    let dir = tmp.path();
    std::fs::copy(repo().join(REGISTRY), dir.join("registry.json")).unwrap();
    // Drifted from the store (TTL) and with an unknown key, whose finding is accepted.
    let drifted = example().replace("ttl: 1d", "ttl: 99d");
    let schema = format!("{drifted}colour: red # arrowfeat: ignore[schema-unknown-key] legacy\n");
    std::fs::write(dir.join("driver.yaml"), &schema).unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--schemas",
            "driver.yaml",
            "--registry",
            "registry.json",
        ];
        args.extend_from_slice(extra);
        arrowfeat_in(dir, &args)
    };
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out)
            .contains("driver.yaml was not checked: it does not match the feature view format"),
        "{}",
        stdout(&out)
    );
    // The same through the configuration and through a baseline.
    std::fs::write(dir.join("driver.yaml"), format!("{drifted}colour: red\n")).unwrap();
    std::fs::write(
        dir.join("arrowfeat.toml"),
        "[severity]\nschema-unknown-key = \"warning\"\n",
    )
    .unwrap();
    assert_eq!(check(&[]).status.code(), Some(2));
    std::fs::remove_file(dir.join("arrowfeat.toml")).unwrap();
    let written = check(&["--write-baseline", "baseline.json"]);
    assert_eq!(written.status.code(), Some(2), "{}", stdout(&written));
    let out = check(&["--baseline", "baseline.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    // A second declaration of a view, its duplicate-view finding ignored: not checked.
    std::fs::create_dir(dir.join("two")).unwrap();
    std::fs::write(dir.join("two/a.yaml"), example()).unwrap();
    let second = example().replacen(
        "name: driver_hourly_stats_v1",
        "name: driver_hourly_stats_v1 # arrowfeat: ignore[duplicate-view] legacy copy",
        1,
    );
    std::fs::write(
        dir.join("two/b.yaml"),
        second.replace("ttl: 1d", "ttl: 99d"),
    )
    .unwrap();
    let out = arrowfeat_in(
        dir,
        &["check", "--schemas", "two", "--registry", "registry.json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out)
            .contains("b.yaml was not checked: it declares a feature view another file declares"),
        "{}",
        stdout(&out)
    );
    // Once the format is right, the TTL drift it hid is found.
    std::fs::write(dir.join("driver.yaml"), &drifted).unwrap();
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("error[ttl]"), "{}", stdout(&out));
}

/// A configuration cannot make an unreadable file vanish: exit 2 whatever it says.
#[test]
fn config_cannot_silence_unreadable_input() {
    let tmp = tempdir("silence");
    let dir = tmp.path();
    std::fs::write(dir.join("broken.yaml"), "name: [unclosed\n").unwrap();
    std::fs::write(dir.join("good.yaml"), example()).unwrap();
    for config in [
        "[severity]\nyaml-syntax = \"off\"\n",
        "[severity]\ninput-unreadable = \"info\"\n",
        "[[ignore]]\nrule = \"yaml-syntax\"\n",
    ] {
        std::fs::write(dir.join("arrowfeat.toml"), config).unwrap();
        let out = arrowfeat_in(dir, &["check", "--schemas", "."]);
        assert_eq!(out.status.code(), Some(2), "{config}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("category `input`"),
            "{}",
            stderr(&out)
        );
    }
    std::fs::write(
        dir.join("arrowfeat.toml"),
        "[[ignore]]\nrule = \"ttl\"\nviews = [\"*_v1\"]\n",
    )
    .unwrap();
    let out = arrowfeat_in(dir, &["check", "--schemas", "good.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out), @"arrowfeat: error: arrowfeat.toml:3:10: [[ignore]] of `ttl`: unsupported view pattern `*_v1`: only one `*`, at the end, is supported (exact names or prefixes such as `legacy_*`)");
}

/// FIFOs are refused before they are opened: as schema, in a schema directory, as
/// registry, as configuration (explicit or the default arrowfeat.toml), as --against.
#[cfg(unix)]
#[test]
fn fifos_never_hang_the_gate() {
    let tmp = tempdir("fifo");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::write(dir.join("schemas/good.yaml"), example()).unwrap();
    for fifo in ["pipe.yaml", "schemas/pipe.yaml", "pipe.json", "pipe.toml"] {
        let status = Command::new("mkfifo").arg(dir.join(fifo)).status().unwrap();
        assert!(status.success());
    }
    let started = std::time::Instant::now();
    let cases: [(&[&str], &str); 5] = [
        (
            &["check", "--schemas", "pipe.yaml"],
            "pipe.yaml is a FIFO (named pipe); expected a schema file or a directory",
        ),
        (
            &["check", "--schemas", "schemas"],
            "schemas/pipe.yaml is a FIFO (named pipe); expected a regular file",
        ),
        (
            &["check", "--schemas", "schemas", "--registry", "pipe.json"],
            "--registry pipe.json is a FIFO (named pipe); expected a regular file",
        ),
        (
            &["check", "--schemas", "schemas", "--config", "pipe.toml"],
            "--config pipe.toml is a FIFO (named pipe); expected a regular file",
        ),
        (
            &[
                "check",
                "--schemas",
                "schemas/good.yaml",
                "--against",
                "pipe.yaml",
            ],
            "pipe.yaml is a FIFO (named pipe); expected a schema file or a directory",
        ),
    ];
    for (args, expected) in cases {
        let out = arrowfeat_in(dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let all = stdout(&out) + &stderr(&out);
        assert!(all.contains(expected), "{args:?}: {all}");
    }
    std::fs::rename(dir.join("pipe.toml"), dir.join("arrowfeat.toml")).unwrap();
    let out = arrowfeat_in(dir, &["check", "--schemas", "schemas/good.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("arrowfeat.toml is a FIFO"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// An external `feast` that never returns is stopped after --feast-timeout.
#[cfg(unix)]
#[test]
fn hanging_feast_times_out() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempdir("feast-hang");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join("repo/feature_store.yaml"), "project: p\n").unwrap();
    std::fs::write(dir.join("good.yaml"), example()).unwrap();
    let fake = dir.join("feast");
    // Sleeps in a grandchild too, holding the pipes: the whole group must be stopped.
    std::fs::write(&fake, "#!/bin/sh\nsleep 600 &\nsleep 600\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args([
            "check",
            "--schemas",
            "good.yaml",
            "--feast-repo",
            "repo",
            "--feast-timeout",
            "1",
            "--format",
            "sarif",
            "-o",
            "report.sarif",
        ])
        .current_dir(dir)
        .env("ARROWFEAT_FEAST", &fake)
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`")
            && stderr(&out).contains("registry-dump` did not finish within 1 s and was stopped"),
        "{}",
        stderr(&out)
    );
    // The report of the failed run is still valid SARIF.
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.sarif")).unwrap()).unwrap();
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    // --feast-timeout must be at least 1.
    let out = arrowfeat_in(
        dir,
        &["check", "--schemas", "good.yaml", "--feast-timeout", "0"],
    );
    assert_eq!(out.status.code(), Some(2));
}

/// Control characters and bidi overrides from files never reach any output raw.
#[test]
fn control_characters_are_escaped_in_every_format() {
    let tmp = tempdir("escape");
    let dir = tmp.path();
    let hostile = example()
        .replace(
            "description: ",
            "description: \"\\e]0;pwned\\a\\e[2J\\r::error::forged \\u202Egnp.exe\" # ",
        )
        .replacen("name: conv_rate", "name: \"conv_rate\\e[31m\"", 1);
    std::fs::write(dir.join("hostile\u{7}.yaml"), hostile).unwrap();
    let registry = repo().join(REGISTRY);
    for format in ["text", "json", "junit", "sarif", "github", "markdown"] {
        let out = arrowfeat_in(
            dir,
            &[
                "check",
                "--schemas",
                ".",
                "--registry",
                registry.to_str().unwrap(),
                "--format",
                format,
                // Text: the tables too, which quote the offending value.
                "--verbose",
            ],
        );
        assert_ne!(out.status.code(), Some(70), "{format}");
        let text = stdout(&out) + &stderr(&out);
        let raw: Vec<char> = text
            .chars()
            .filter(|c| {
                (c.is_control() && *c != '\n')
                    || ('\u{202a}'..='\u{202e}').contains(c)
                    || ('\u{2066}'..='\u{2069}').contains(c)
            })
            .collect();
        assert!(raw.is_empty(), "{format}: {raw:?}");
        // JSON doubles the backslash of the visible escape; Markdown writes punctuation
        // as character references.
        let shown = decode_character_references(&text.replace("\\\\", "\\"));
        // SARIF percent-encodes the path into a URI.
        assert!(
            shown.contains("hostile\\u{7}.yaml") || shown.contains("hostile%5Cu%7B7%7D.yaml"),
            "{format}: {text}"
        );
        // JUnit and GitHub show messages only; the others show the offending value too,
        // decoded and escaped or as the file writes it (YAML's `\e`).
        assert!(
            format == "junit"
                || format == "github"
                || shown.contains("\\u001b[31m")
                || shown.contains("\\u{1b}[31m")
                || shown.contains("conv_rate\\e[31m"),
            "{format}: {text}"
        );
        if format == "github" {
            insta::assert_snapshot!("hostile_github", text);
        }
    }
}

/// When the gate cannot run, -o still gets a valid report in the requested format.
#[test]
fn unrunnable_gate_still_writes_the_report() {
    let tmp = tempdir("error-report");
    let dir = tmp.path();
    std::fs::write(dir.join("good.yaml"), example()).unwrap();
    for (format, check) in [
        ("sarif", "executionSuccessful"),
        ("json", "\"error\""),
        ("junit", "<error type=\"usage\""),
        ("github", "::error title=arrowfeat check::"),
        ("markdown", "could not run"),
        ("text", "error: --registry missing.json"),
    ] {
        let file = format!("report.{format}");
        let out = arrowfeat_in(
            dir,
            &[
                "check",
                "--schemas",
                "good.yaml",
                "--registry",
                "missing.json",
                "--format",
                format,
                "-o",
                &file,
            ],
        );
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            "arrowfeat: error: --registry missing.json: no such file or directory\n"
        );
        let written = std::fs::read_to_string(dir.join(&file)).unwrap();
        assert!(written.contains(check), "{format}: {written}");
        if format == "sarif" || format == "json" {
            let _: serde_json::Value = serde_json::from_str(&written).unwrap();
        }
        if format == "sarif" {
            insta::assert_snapshot!("error_report_sarif", written);
        }
    }
    // diff too; and without -o the machine-readable formats go to stdout.
    let out = arrowfeat_in(
        dir,
        &["diff", "missing_old", "good.yaml", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["command"], "diff");
    assert!(report["error"].as_str().unwrap().contains("missing_old"));
}

/// Links out of the schema directory are refused (exit 2) unless --follow-symlinks.
#[cfg(unix)]
#[test]
fn symlinks_out_of_the_schema_directory() {
    let tmp = tempdir("symlinks");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::create_dir_all(dir.join("outside")).unwrap();
    std::fs::write(dir.join("outside/secret.yaml"), example()).unwrap();
    std::os::unix::fs::symlink(
        dir.join("outside/secret.yaml"),
        dir.join("schemas/leak.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("schemas"), dir.join("schemas/loop")).unwrap();
    let out = arrowfeat_in(
        dir,
        &["check", "--schemas", "schemas", "--format", "github"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("is a symbolic link to"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("driver_hourly_stats_v1"),
        "{}",
        stdout(&out)
    );
    let out = arrowfeat_in(dir, &["check", "--schemas", "schemas", "--follow-symlinks"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// A registry with one view twice is refused, not read as "the last one wins".
#[test]
fn duplicate_views_in_a_registry_are_refused() {
    let tmp = tempdir("dup-registry");
    let dir = tmp.path();
    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join(REGISTRY)).unwrap()).unwrap();
    let mut doubled = registry.clone();
    let first = doubled["featureViews"][0].clone();
    doubled["streamFeatureViews"] = serde_json::json!([first]);
    std::fs::write(dir.join("r.json"), doubled.to_string()).unwrap();
    std::fs::write(dir.join("good.yaml"), example()).unwrap();
    let out = arrowfeat_in(
        dir,
        &["check", "--schemas", "good.yaml", "--registry", "r.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("appears twice (at featureViews[0] and streamFeatureViews[0])"),
        "{}",
        stderr(&out)
    );
}

/// Deeply nested types and documents are findings, not stack overflows.
#[test]
fn deep_nesting_is_a_finding() {
    let tmp = tempdir("deep");
    let dir = tmp.path();
    let deep_type = format!("{}int64{}", "list<".repeat(5000), ">".repeat(5000));
    std::fs::write(
        dir.join("deep_type.yaml"),
        example().replacen("type: float32", &format!("type: \"{deep_type}\""), 1),
    )
    .unwrap();
    let out = arrowfeat_in(dir, &["check", "--schemas", ".", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("nests deeper than 32 levels"));
    let deep_json = format!(
        "{{\"featureViews\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(dir.join("deep.json"), deep_json).unwrap();
    let out = arrowfeat_in(
        dir,
        &[
            "check",
            "--schemas",
            "deep_type.yaml",
            "--registry",
            "deep.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nested deeper than 128 levels"),
        "{}",
        stderr(&out)
    );
}

/// Microsoft's SARIF Multitool (`tools/`, `npm ci --prefix tools`, run by `make test`)
/// validates every SARIF snapshot and SARIF reports made now: the 2.1.0 schema and its
/// authoring rules; any error or warning fails. Skipped when the tool is not installed,
/// unless ARROWFEAT_REQUIRE_SARIF_MULTITOOL is set (as `make test` does).
#[test]
fn sarif_multitool_validates_every_sarif_report() {
    let tool = repo().join("tools/node_modules/@microsoft/sarif-multitool/bin.js");
    if !tool.exists() {
        assert!(
            std::env::var_os("ARROWFEAT_REQUIRE_SARIF_MULTITOOL").is_none(),
            "{} is missing: run `npm ci --prefix tools`",
            tool.display()
        );
        eprintln!("skipped: the SARIF Multitool is not installed (npm ci --prefix tools)");
        return;
    }
    let tmp = tempdir("sarif-multitool");
    let dir = tmp.path();
    let mut files = Vec::new();
    // The snapshots, without insta's header.
    for entry in std::fs::read_dir(repo().join("cli/tests/snapshots")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains("sarif") || !name.ends_with(".snap") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let body = text.splitn(3, "---\n").nth(2).unwrap();
        let file = dir.join(name.replace(".snap", ".sarif"));
        std::fs::write(&file, body).unwrap();
        files.push(file);
    }
    assert!(files.len() >= 2, "{files:?}");
    // Reports made now: passing, findings, a revision diff, baselined, unrunnable.
    std::fs::copy(repo().join(REGISTRY), dir.join("registry.json")).unwrap();
    std::fs::write(
        dir.join("driver.yaml"),
        example().replace("ttl: 1d", "ttl: 2d"),
    )
    .unwrap();
    let registry = repo().join(REGISTRY);
    let runs: Vec<Vec<String>> = vec![
        vec![
            "check".into(),
            "--schemas".into(),
            repo().join("schemas/examples").display().to_string(),
            "--registry".into(),
            registry.display().to_string(),
        ],
        vec![
            "check".into(),
            "--schemas".into(),
            repo().join(DRIFTED).display().to_string(),
            "--registry".into(),
            registry.display().to_string(),
        ],
        vec![
            "diff".into(),
            repo()
                .join("tests/fixtures/schemas/revisions/old")
                .display()
                .to_string(),
            repo()
                .join("tests/fixtures/schemas/revisions/new")
                .display()
                .to_string(),
        ],
        vec![
            "check".into(),
            "--schemas".into(),
            "driver.yaml".into(),
            "--registry".into(),
            "registry.json".into(),
            "--write-baseline".into(),
            "baseline.json".into(),
        ],
        vec!["check".into(), "--schemas".into(), "missing".into()],
    ];
    for (i, args) in runs.iter().enumerate() {
        let file = dir.join(format!("run{i}.sarif"));
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        let path = file.to_str().unwrap();
        args.extend(["--format", "sarif", "-o", path]);
        let out = arrowfeat_in(dir, &args);
        assert_ne!(out.status.code(), Some(70), "{args:?}");
        assert!(file.exists(), "{args:?}: {}", stderr(&out));
        files.push(file);
    }
    let log = dir.join("multitool.sarif");
    let out = Command::new("node")
        .arg(&tool)
        .arg("validate")
        .arg("--output")
        .arg(&log)
        .args(&files)
        .output()
        .expect("run node");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let problems: Vec<String> = results
        .iter()
        .filter(|r| r["level"].as_str().unwrap_or("warning") != "note")
        .map(|r| format!("{} {}", r["ruleId"], r["message"]))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `arrowfeat completions SHELL` prints a completion script naming the subcommands and
/// the gate's flags.
#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = arrowfeat(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for word in ["arrowfeat", "check", "write-baseline", "color"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let out = arrowfeat(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `&#NN;` references as the characters they stand for.
fn decode_character_references(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("&#") {
        out.push_str(&rest[..at]);
        let end = at + rest[at..].find(';').expect("a reference ends with ;");
        let code: u32 = rest[at + 2..end].parse().expect("a decimal reference");
        out.push(char::from_u32(code).expect("a character"));
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A report that cannot be written is not "findings" (exit 1): the gate could not deliver
/// its result (exit 2).
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_report_is_exit_2() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arrowfeat"))
        .args([
            "check",
            "--schemas",
            DRIFTED,
            "--registry",
            REGISTRY,
            "--format",
            "json",
        ])
        .current_dir(repo())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write the report"),
        "{}",
        stderr(&out)
    );
}

/// A value YAML reads as a number or a boolean where text is expected: the message says
/// how to write it as text.
#[test]
fn unquoted_numbers_and_booleans_get_a_quote_it_hint() {
    let dir = tempdir("quote-it");
    let text = std::fs::read_to_string(repo().join("schemas/examples/customer_profile_v2.yaml"))
        .unwrap()
        .replace("schema_version: 2.1.0", "schema_version: 1.2")
        .replace("owner: growth@example.com", "owner: yes");
    std::fs::write(dir.path().join("customer.yaml"), text).unwrap();
    let out = arrowfeat_in(dir.path(), &["check", "--schemas", "customer.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stdout(&out), @r#"
    customer.yaml — customer_profile_v2
      error[schema-violation] customer.yaml:4:8: owner: value is not of type "string", found `yes`; YAML reads it as a boolean: quote it ("yes") to write text
      error[schema-violation] customer.yaml:3:17: schema_version: value is not of type "string", found `1.2`; YAML reads it as a number: quote it ("1.2") to write text

    arrowfeat check against the schema format only (no --registry, --feast-repo or --against): failed
    1 file(s), 1 view(s), 2 check(s): 0 passed, 2 error(s), 0 warning(s), 0 info
    "#);
}

/// `check --data`: the bundled event log passes its schema; a copy with one row of each
/// fault gets one finding each (text report snapshot, exit 1); data that cannot be read
/// is exit 2; a view no schema declares is a usage error.
#[test]
fn data_against_its_schema() {
    let schema = "examples/schemas/user_events_v1.yaml";
    let clean = arrowfeat(&[
        "check",
        "--schemas",
        schema,
        "--data",
        "examples/data/events.parquet",
        "--as-of",
        "2026-11-02T00:00:00Z",
    ]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    insta::assert_snapshot!(stdout(&clean), @r"
    arrowfeat check against data examples/data/events.parquet (as of 2026-11-02T00:00:00Z): passed
    1 file(s), 1 view(s), 45 check(s): 45 passed, 0 error(s), 0 warning(s), 0 info
    ");

    let dir = tempdir("data-gate");
    std::fs::copy(repo().join(schema), dir.path().join("user_events.yaml")).unwrap();
    let events = repo().join("examples/data/events.parquet");
    let events = events.to_str().unwrap();
    let copy = format!(
        "COPY (SELECT * FROM '{events}'
           UNION ALL SELECT 9001, 'user_1', arrow_cast(TIMESTAMP '2026-11-05T00:00:00Z', 'Timestamp(µs, \"UTC\")'), -5.0, 1.0, 1.0, 'tv', embedding FROM '{events}' WHERE event_id = 3
           UNION ALL SELECT 9002, NULL, event_ts, 'NaN'::double, 1.0, 1.0, 'web', embedding FROM '{events}' WHERE event_id = 4
           UNION ALL SELECT * FROM '{events}' WHERE event_id = 5
           UNION ALL SELECT event_id, user_id, event_ts, amount + 1, lat, lon, channel, embedding FROM '{events}' WHERE event_id = 6
         ) TO 'faulty.parquet' STORED AS PARQUET"
    );
    let written = arrowfeat_in(dir.path(), &["sql", "--allow-write", &copy]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let faulty = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "user_events.yaml",
            "--data",
            "user_events_v1=faulty.parquet",
            "--as-of",
            "2026-11-02T00:00:00Z",
        ],
    );
    assert_eq!(faulty.status.code(), Some(1));
    insta::assert_snapshot!("data_faults_text", stdout(&faulty));

    let missing = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "user_events.yaml",
            "--data",
            "nothing.parquet",
        ],
    );
    assert_eq!(missing.status.code(), Some(2), "{}", stdout(&missing));
    assert!(
        stdout(&missing).contains("error[data-unreadable]"),
        "{}",
        stdout(&missing)
    );

    let unknown = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "user_events.yaml",
            "--data",
            "other_view=faulty.parquet",
        ],
    );
    assert_eq!(unknown.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&unknown), @"arrowfeat: error: --data other_view=...: view `other_view` is given data, but no schema file declares it");
    // Refused before the baseline is written: it would record a run that checked nothing.
    let baseline = dir.path().join("baseline.json");
    let refused = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "user_events.yaml",
            "--data",
            "other_view=faulty.parquet",
            "--write-baseline",
            "baseline.json",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(!baseline.exists(), "{}", stderr(&refused));
    // A schema file that does not parse may be the one declaring the view: its finding is
    // the answer (exit 1 or 2 from the report, not the refusal).
    let broken_dir = dir.path().join("with_broken");
    std::fs::create_dir_all(&broken_dir).unwrap();
    std::fs::copy(
        dir.path().join("user_events.yaml"),
        broken_dir.join("user_events.yaml"),
    )
    .unwrap();
    std::fs::write(broken_dir.join("other_view.yaml"), "name: [\n").unwrap();
    let unparsed = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "with_broken",
            "--data",
            "other_view=faulty.parquet",
            "--format",
            "json",
        ],
    );
    assert_ne!(unparsed.status.code(), Some(0), "{}", stdout(&unparsed));
    assert!(
        !stderr(&unparsed).contains("no schema file declares"),
        "{}",
        stderr(&unparsed)
    );
    assert!(
        stdout(&unparsed).contains("other_view.yaml"),
        "{}",
        stdout(&unparsed)
    );
    // One path per view; a path without a view needs one view; a path at all.
    for (args, expected) in [
        (
            vec!["--schemas", schema, "--data", "user_events_v1=a.parquet", "--data", "user_events_v1=b.parquet"],
            "arrowfeat: error: --data user_events_v1=...: given twice; give one path per view (a directory holds several files)",
        ),
        (
            vec!["--schemas", "schemas/examples", "--data", "examples/data/events.parquet"],
            "arrowfeat: error: --data 'examples/data/events.parquet' names no view, but the schemas declare 3 views (`customer_profile_v2`, `driver_customer_trips_v1`, `driver_hourly_stats_v1`): give --data VIEW=PATH",
        ),
        (vec!["--schemas", schema, "--data="], "arrowfeat: error: --data '': expected [VIEW=]PATH, found no path"),
    ] {
        let out = arrowfeat(&[&["check"], args.as_slice()].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).trim_end(), expected);
    }
    let huge = arrowfeat(&[
        "check",
        "--schemas",
        schema,
        "--data",
        "examples/data/events.parquet",
        "--data-sample",
        "18446744073709551615",
    ]);
    assert_eq!(huge.status.code(), Some(2));
    let bad_time = arrowfeat(&[
        "check",
        "--schemas",
        schema,
        "--data",
        "examples/data/events.parquet",
        "--as-of",
        "yesterday",
    ]);
    assert_eq!(bad_time.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&bad_time), @"arrowfeat: error: --as-of: expected a time from 1677-09-22 to 2262-04-11 such as 2026-12-01T00:00:00Z or 2026-12-01, found 'yesterday'");
}

#[test]
fn drift_reports_formats_and_usage_errors() {
    let schema = "examples/schemas/user_events_v1.yaml";
    let reference = "examples/data/events.parquet";
    let current = "examples/data/events_next_day.parquet";
    let drifted = arrowfeat(&[
        "drift",
        "--schemas",
        schema,
        "--reference",
        reference,
        "--current",
        current,
    ]);
    assert_eq!(drifted.status.code(), Some(1), "{}", stderr(&drifted));
    insta::assert_snapshot!("drift_text", stdout(&drifted));
    let markdown = arrowfeat(&[
        "drift",
        "--schemas",
        schema,
        "--reference",
        reference,
        "--current",
        current,
        "--format",
        "markdown",
    ]);
    insta::assert_snapshot!("drift_markdown", stdout(&markdown));
    let same = arrowfeat(&[
        "drift",
        "--schemas",
        schema,
        "--reference",
        reference,
        "--current",
        reference,
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));

    // The same data as CSV, JSON and a Hive-partitioned directory measures the same.
    let dir = tempdir("drift");
    let events = repo().join(current);
    let events = events.to_str().unwrap();
    let written = arrowfeat_in(
        dir.path(),
        &[
            "sql",
            "--allow-write",
            &format!(
                "COPY (SELECT * EXCEPT (embedding) FROM '{events}') TO 'today.csv' STORED AS CSV OPTIONS ('format.has_header' 'true'); \
                 COPY (SELECT * EXCEPT (embedding) FROM '{events}') TO 'today.json' STORED AS JSON; \
                 COPY (SELECT *, event_id % 3 AS part FROM '{events}') TO 'today_dir' STORED AS PARQUET PARTITIONED BY (part)"
            ),
        ],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let actuals = |current: &str| -> Vec<(String, String)> {
        let run = arrowfeat_in(
            dir.path(),
            &[
                "drift",
                "--schemas",
                repo().join(schema).to_str().unwrap(),
                "--reference",
                repo().join(reference).to_str().unwrap(),
                "--current",
                current,
                "--format",
                "json",
            ],
        );
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        let mut out: Vec<(String, String)> = report["files"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["rule"].as_str().unwrap().starts_with("drift-")
                    && !c["subject"].as_str().unwrap().contains("embedding")
            })
            .map(|c| {
                let subject = c["subject"].as_str().unwrap();
                let feature = subject.split("feature").nth(1).unwrap().to_string();
                (feature, c["actual"].as_str().unwrap().to_string())
            })
            .collect();
        out.sort();
        out
    };
    let from_parquet = actuals(events);
    assert_eq!(from_parquet.len(), 20, "{from_parquet:#?}");
    assert_eq!(actuals("today.csv"), from_parquet);
    assert_eq!(actuals("today.json"), from_parquet);
    assert_eq!(actuals("today_dir"), from_parquet);

    // Saved, then read back: the same report.
    let saved = arrowfeat_in(
        dir.path(),
        &[
            "drift",
            "--schemas",
            repo().join(schema).to_str().unwrap(),
            "--reference",
            repo().join(reference).to_str().unwrap(),
            "--save-reference",
            "reference.json",
        ],
    );
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    insta::assert_snapshot!(stderr(&saved), @"saved the reference profile of 1 view(s), 6 feature(s), to reference.json");
    let from_profile = arrowfeat_in(
        dir.path(),
        &[
            "drift",
            "--schemas",
            repo().join(schema).to_str().unwrap(),
            "--reference-profile",
            "reference.json",
            "--current",
            events,
        ],
    );
    assert_eq!(
        stdout(&from_profile).lines().take(8).collect::<Vec<_>>(),
        stdout(&drifted)
            .lines()
            .take(8)
            .map(|l| l.replace(schema, repo().join(schema).to_str().unwrap()))
            .collect::<Vec<_>>()
    );

    // Usage errors: exit 2, one line in the user's words.
    std::fs::write(dir.path().join("bad.json"), "{\"format\": \"x\"").unwrap();
    let schema_path = repo().join(schema);
    let schema_arg = schema_path.to_str().unwrap();
    let usage = |args: &[&str]| -> String {
        let run = arrowfeat_in(dir.path(), args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stdout(&run));
        stderr(&run)
    };
    let mut errors = vec![
        usage(&["drift", "--schemas", schema_arg, "--current", events]),
        usage(&["drift", "--schemas", schema_arg, "--reference", events]),
        usage(&[
            "drift",
            "--schemas",
            schema_arg,
            "--reference-profile",
            "bad.json",
            "--current",
            events,
        ]),
        usage(&[
            "drift",
            "--schemas",
            schema_arg,
            "--reference",
            events,
            "--current",
            "other_view=x.parquet",
        ]),
        usage(&[
            "drift",
            "--schemas",
            schema_arg,
            "--reference",
            events,
            "--save-reference",
            ".",
        ]),
    ];
    for error in &mut errors {
        *error = error.replace(events, "EVENTS");
    }
    insta::assert_snapshot!("drift_usage_errors", errors.join(""));

    // A usage error leaves a machine-readable report too: on stdout, or in --output.
    for (command, args) in [
        ("drift", vec!["--current-from-store", "--reference", events]),
        (
            "drift",
            vec!["--reference", events, "--current", "other_view=x.parquet"],
        ),
        ("check", vec!["--data-from-store"]),
        (
            "skew",
            vec![
                "--time-tolerance=-1s",
                "--serving",
                events,
                "--training",
                events,
            ],
        ),
    ] {
        let mut all = vec![command, "--schemas", schema_arg];
        all.extend(args.iter().copied());
        let run = arrowfeat_in(
            dir.path(),
            &[all.as_slice(), &["--format", "json"]].concat(),
        );
        assert_eq!(run.status.code(), Some(2), "{all:?}");
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        assert_eq!(report["exit_code"], 2, "{all:?}");
        assert_eq!(report["command"], command, "{all:?}");
        assert!(
            stderr(&run).contains(report["error"].as_str().unwrap()),
            "{all:?}: {report}"
        );
        let written = arrowfeat_in(
            dir.path(),
            &[all.as_slice(), &["--format", "sarif", "-o", "usage.sarif"]].concat(),
        );
        assert_eq!(written.status.code(), Some(2), "{all:?}");
        assert_eq!(stdout(&written), "", "{all:?}");
        let sarif = std::fs::read_to_string(dir.path().join("usage.sarif")).unwrap();
        assert!(sarif.contains("\"version\": \"2.1.0\""), "{all:?}: {sarif}");
        std::fs::remove_file(dir.path().join("usage.sarif")).unwrap();
    }
    // So does a command line the parser refuses: an earlier run's report is replaced.
    std::fs::write(dir.path().join("stale.json"), "{\"exit_code\": 0}").unwrap();
    let refused = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            schema_arg,
            "--data-sample",
            "abc",
            "--format=json",
            "-ostale.json",
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("stale.json")).unwrap())
            .unwrap();
    assert_eq!(report["exit_code"], 2);
    assert!(
        report["error"].as_str().unwrap().contains("--data-sample"),
        "{report}"
    );
    // The profile is never the report.
    let same = arrowfeat_in(
        dir.path(),
        &[
            "drift",
            "--schemas",
            schema_arg,
            "--reference",
            events,
            "--save-reference",
            "stale.json",
            "-o",
            "./stale.json",
        ],
    );
    assert_eq!(same.status.code(), Some(2));
    assert!(
        stderr(&same).contains("is also --output"),
        "{}",
        stderr(&same)
    );
    // No output replaces another file the command line names, however it is spelled,
    // not even the error report of a command line the parser refuses.
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::copy(schema_arg, dir.path().join("s.yaml")).unwrap();
    std::fs::copy(repo().join(events), dir.path().join("r.parquet")).unwrap();
    let kept = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    let (schema_bytes, data_bytes, stale_bytes) =
        (kept("s.yaml"), kept("r.parquet"), kept("stale.json"));
    for args in [
        vec!["check", "--schemas", "s.yaml", "-o", "d/../s.yaml"],
        vec![
            "drift",
            "--schemas",
            "s.yaml",
            "--reference",
            "r.parquet",
            "--save-reference",
            "r.parquet",
        ],
        vec![
            "drift",
            "--schemas",
            "s.yaml",
            "--reference",
            "v=r.parquet",
            "--save-reference",
            "./r.parquet",
        ],
        vec![
            "check",
            "--schemas",
            "s.yaml",
            "--write-baseline",
            "stale.json",
            "--output=stale.json",
        ],
        vec![
            "drift",
            "--schemas",
            "s.yaml",
            "--save-reference",
            "stale.json",
            "-ostale.json",
            "--bogus",
        ],
    ] {
        let run = arrowfeat_in(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&run).contains("writing it would replace that file"),
            "{args:?}: {}",
            stderr(&run)
        );
        assert_eq!(kept("s.yaml"), schema_bytes, "{args:?}");
        assert_eq!(kept("r.parquet"), data_bytes, "{args:?}");
        assert_eq!(kept("stale.json"), stale_bytes, "{args:?}");
    }
    // Nor is a data file written into a directory the command reads as data: it would be
    // read with the data next time, or replace some.
    std::fs::create_dir_all(dir.path().join("table/part=a")).unwrap();
    std::fs::copy(
        repo().join(events),
        dir.path().join("table/part=a/data.parquet"),
    )
    .unwrap();
    let table_bytes = kept("table/part=a/data.parquet");
    for (flag, written) in [
        ("--save-reference", "table/part=a/data.parquet"),
        ("--save-reference", "table/profile.json"),
        ("-o", "./table/report.json"),
    ] {
        let args = [
            "drift",
            "--schemas",
            "s.yaml",
            "--reference",
            "table",
            "--current",
            "r.parquet",
            flag,
            written,
        ];
        let run = arrowfeat_in(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&run).contains("is inside --reference table, a directory whose data files"),
            "{args:?}: {}",
            stderr(&run)
        );
        assert_eq!(kept("table/part=a/data.parquet"), table_bytes);
        assert!(!dir.path().join("table/profile.json").exists());
        assert!(!dir.path().join("table/report.json").exists());
    }
    // A report of another extension is no data of the table.
    let sarif = arrowfeat_in(
        dir.path(),
        &[
            "drift",
            "--schemas",
            "s.yaml",
            "--reference",
            "table",
            "--current",
            "r.parquet",
            "--format",
            "sarif",
            "-o",
            "table/report.sarif",
        ],
    );
    assert_eq!(sarif.status.code(), Some(0), "{}", stderr(&sarif));
}

/// `drift` and `skew` judge each feature column's type as `check --data` does: text for a
/// float is an error and that feature is not compared (it used to be compared converted).
#[test]
fn drift_and_skew_refuse_columns_of_another_kind() {
    let dir = tempdir("kinds");
    let events = repo().join("examples/data/events.parquet");
    let events = events.to_str().unwrap();
    let written = arrowfeat_in(
        dir.path(),
        &[
            "sql",
            "--allow-write",
            &format!(
                "COPY (SELECT * EXCEPT (amount), CAST(amount AS VARCHAR) AS amount FROM '{events}') \
                 TO 'text.parquet'"
            ),
        ],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let schema = repo().join("examples/schemas/user_events_v1.yaml");
    let schema = schema.to_str().unwrap();
    let refused = |args: &[&str]| {
        let run = arrowfeat_in(dir.path(), &[args, &["--format", "json"]].concat());
        assert_eq!(run.status.code(), Some(1), "{args:?}: {}", stderr(&run));
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        let checks = report["files"][0]["checks"].as_array().unwrap().clone();
        let amount: Vec<&serde_json::Value> = checks
            .iter()
            .filter(|c| c["subject"].as_str().unwrap().contains("`amount`"))
            .collect();
        assert_eq!(amount.len(), 1, "{args:?}: {amount:#?}");
        assert_eq!(amount[0]["rule"], "data-column-type");
        assert_eq!(amount[0]["status"], "error");
        let message = amount[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("`amount` in ")
                && message.contains("text.parquet")
                && message.contains(" is string (")
                && message.contains("the schema declares float64"),
            "{message}"
        );
    };
    refused(&[
        "drift",
        "--schemas",
        schema,
        "--reference",
        events,
        "--current",
        "text.parquet",
    ]);
    refused(&[
        "skew",
        "--schemas",
        schema,
        "--serving",
        "text.parquet",
        "--training",
        events,
        "--time-tolerance",
        "0s",
    ]);
}

/// `[data]` in `arrowfeat.toml`: each view's data, relative to the file's directory, is
/// checked without `--data`; `--data` on the command line replaces it; a view no schema
/// declares and a bad entry are usage errors naming the file.
#[test]
fn data_paths_from_the_configuration() {
    let dir = tempdir("data-config");
    let conf_dir = dir.path().join("conf");
    std::fs::create_dir(&conf_dir).unwrap();
    std::fs::copy(
        repo().join("examples/data/events.parquet"),
        conf_dir.join("events.parquet"),
    )
    .unwrap();
    let config = conf_dir.join("arrowfeat.toml");
    std::fs::write(&config, "[data]\nuser_events_v1 = \"events.parquet\"\n").unwrap();
    let schema = repo().join("examples/schemas/user_events_v1.yaml");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--schemas",
            schema.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        arrowfeat_in(dir.path(), &args)
    };
    let clean = run(&["--as-of", "2026-11-02T00:00:00Z"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(
        stdout(&clean).contains("conf/events.parquet (as of 2026-11-02T00:00:00Z): passed"),
        "{}",
        stdout(&clean)
    );
    // The clock decides "now" without --as-of: the bundled events are long stale, an info.
    let unpinned = run(&[]);
    assert_eq!(unpinned.status.code(), Some(0), "{}", stdout(&unpinned));
    // --data replaces [data].
    let replaced = run(&["--data", "missing.parquet"]);
    assert_eq!(replaced.status.code(), Some(2), "{}", stdout(&replaced));
    assert!(
        stdout(&replaced).contains("missing.parquet"),
        "{}",
        stdout(&replaced)
    );

    std::fs::write(&config, "[data]\nnobody_v1 = \"events.parquet\"\n").unwrap();
    let unknown = run(&[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains(
            "[data] nobody_v1: view `nobody_v1` is given data, but no schema file declares it"
        ),
        "{}",
        stderr(&unknown)
    );
    std::fs::write(&config, "[data]\n\"bad view\" = \"events.parquet\"\n").unwrap();
    let bad = run(&[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("2:1: [data] `bad view`: expected a feature view name"),
        "{}",
        stderr(&bad)
    );
    // With --as-of too: the configuration's error, not a missing [data].
    let bad_as_of = run(&["--as-of", "2026-11-02T00:00:00Z"]);
    assert_eq!(bad_as_of.status.code(), Some(2));
    assert!(
        stderr(&bad_as_of).contains("2:1: [data] `bad view`: expected a feature view name")
            && !stderr(&bad_as_of).contains("--as-of needs"),
        "{}",
        stderr(&bad_as_of)
    );
}

/// arrowfeat's own store metadata names each view's data with `batch_source`
/// (`--data-from-store` reads it, relative paths from the working directory); a view
/// without one is `data-not-read`, an error.
#[test]
fn store_metadata_batch_sources_are_read() {
    let dir = tempdir("neutral-sources");
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::copy(
        repo().join("examples/data/events_next_day.parquet"),
        dir.path().join("data/events.parquet"),
    )
    .unwrap();
    let store = |source: &str| {
        format!(
            r#"{{"format": "arrowfeat-store-metadata", "format_version": 1, "store": "s",
 "entities": [{{"name": "user", "join_key": "user_id", "type": "string"}}],
 "feature_views": [{{"name": "user_events_v1", "entities": ["user"], "ttl_seconds": 86400,
   "tags": {{"schema_version": "1.0.0"}},
   "event_timestamp": {{"name": "event_ts", "type": "timestamp[us, UTC]"}},{source}
   "features": [{{"name": "event_id", "type": "int64"}}, {{"name": "amount", "type": "float64"}},
     {{"name": "channel", "type": "string"}}, {{"name": "lat", "type": "float64"}},
     {{"name": "lon", "type": "float64"}}, {{"name": "embedding", "type": "embedding[8]"}}]}}]}}"#
        )
    };
    std::fs::write(
        dir.path().join("store.json"),
        store(r#" "batch_source": "data/events.parquet","#),
    )
    .unwrap();
    std::fs::write(dir.path().join("bare.json"), store("")).unwrap();
    let schema = repo().join("examples/schemas/user_events_v1.yaml");
    let run = |registry: &str| {
        arrowfeat_in(
            dir.path(),
            &[
                "check",
                "--schemas",
                schema.to_str().unwrap(),
                "--registry",
                registry,
                "--data-from-store",
                "--as-of",
                "2026-11-03T00:00:00Z",
                "--format",
                "json",
            ],
        )
    };
    let rules = |out: &Output| -> Vec<String> {
        let report: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
        report["files"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] != "pass")
            .map(|c| c["rule"].as_str().unwrap().to_string())
            .collect()
    };
    let read = run("store.json");
    assert_eq!(rules(&read), ["data-not-allowed"], "{}", stdout(&read));
    assert_eq!(read.status.code(), Some(1));
    let bare = run("bare.json");
    assert_eq!(rules(&bare), ["data-not-read"], "{}", stdout(&bare));
    assert_eq!(bare.status.code(), Some(1));
}

/// skew's keys and times against their declared types, in `check --data`'s words: an
/// integer serving time, a float key beside a string one, a naive time for a zoned one
/// are each a `data-column-type` error naming the side and the column, and no row is
/// compared.
#[test]
fn skew_refuses_keys_and_times_of_another_kind() {
    let dir = tempdir("skew-kinds");
    let events = repo().join("examples/data/events.parquet");
    let events = events.to_str().unwrap();
    let schema = repo().join("examples/schemas/user_events_v1.yaml");
    let schema = schema.to_str().unwrap();
    let write = |name: &str, select: &str| {
        let written = arrowfeat_in(
            dir.path(),
            &[
                "sql",
                "--allow-write",
                &format!("COPY (SELECT {select} FROM '{events}') TO '{name}'"),
            ],
        );
        assert!(written.status.success(), "{}", stderr(&written));
    };
    write(
        "int_time.parquet",
        "* EXCEPT (event_ts), CAST(to_unixtime(event_ts) AS BIGINT) AS event_ts",
    );
    write(
        "naive_time.parquet",
        "* EXCEPT (event_ts), CAST(event_ts AS TIMESTAMP) AS event_ts",
    );
    write("int_key.parquet", "* EXCEPT (user_id), event_id AS user_id");
    let skew = |serving: &str, training: &str| {
        let run = arrowfeat_in(
            dir.path(),
            &[
                "skew",
                "--schemas",
                schema,
                "--serving",
                serving,
                "--training",
                training,
                "--time-tolerance",
                "0s",
                "--format",
                "json",
            ],
        );
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        report["files"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] != "pass")
            .map(|c| {
                (
                    c["rule"].as_str().unwrap().to_string(),
                    c["subject"].as_str().unwrap().to_string(),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    // The serving side's integer time is the serving side's fault, not the training's.
    let found = skew("int_time.parquet", events);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (rule, subject, message) = &found[0];
    assert_eq!(rule, "data-column-type");
    assert_eq!(subject, "skew int_time.parquet: time `event_ts`");
    assert!(
        message.starts_with("`event_ts` in the serving data int_time.parquet is int64 (")
            && message.contains("the schema declares timestamp[us, UTC]"),
        "{message}"
    );
    let found = skew(events, "naive_time.parquet");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].1.contains("naive_time.parquet: time `event_ts`"),
        "{found:#?}"
    );
    // An integer key where the schema declares a string one.
    let found = skew("int_key.parquet", events);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].1, "skew int_key.parquet: entity key `user_id`");
    assert!(
        found[0].2.contains("is int64") && found[0].2.contains("the schema declares string"),
        "{found:#?}"
    );
    // Nanoseconds (pandas' unit) for a schema of microseconds: the join compares times in
    // nanoseconds, so nothing is lost and every row is compared.
    write(
        "ns_time.parquet",
        "* EXCEPT (event_ts), arrow_cast(event_ts, 'Timestamp(Nanosecond, Some(\"UTC\"))') AS event_ts",
    );
    let run = arrowfeat_in(
        dir.path(),
        &[
            "skew",
            "--schemas",
            schema,
            "--serving",
            "ns_time.parquet",
            "--training",
            events,
            "--time-tolerance",
            "0s",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stdout(&run));
    // A training time out of the nanosecond range is the training data's finding, named
    // by its date.
    write(
        "old.parquet",
        "* EXCEPT (event_ts), CASE WHEN event_id = 5 THEN \
         arrow_cast(-14831769600000000, 'Timestamp(Microsecond, Some(\"UTC\"))') \
         ELSE event_ts END AS event_ts",
    );
    let run = arrowfeat_in(
        dir.path(),
        &[
            "skew",
            "--schemas",
            schema,
            "--serving",
            events,
            "--training",
            "old.parquet",
            "--time-tolerance",
            "0s",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
    let unreadable = report["files"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "data-unreadable")
        .unwrap();
    assert_eq!(unreadable["subject"], "data old.parquet");
    let message = unreadable["message"].as_str().unwrap();
    assert!(
        message.contains("training column `event_ts`")
            && message.contains("found 1500-01-01T00:00:00Z at row "),
        "{message}"
    );
}

/// A CSV column declared `string` is read as text, whatever its values look like: ids
/// `001` and `01` stay two ids, and neither `check --data` nor `skew` calls them integers.
#[test]
fn csv_text_columns_that_look_like_numbers_stay_text() {
    let dir = tempdir("csv-text-ids");
    std::fs::write(
        dir.path().join("v.yaml"),
        "name: v\nschema_version: 1.0.0\nentities: [{name: u, join_key: user_id, type: string}]\n\
         event_timestamp: {name: event_ts, unit: us, tz: UTC}\n\
         features: [{name: amount, type: float64}, {name: code, type: string}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("serving.csv"),
        "user_id,event_ts,amount,code\n001,2026-01-01T00:00:00Z,1.0,10\n01,2026-01-01T00:00:00Z,2.0,20\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("training.csv"),
        "user_id,event_ts,amount,code\n001,2026-01-01T00:00:00Z,1.0,10\n01,2026-01-01T00:00:00Z,3.0,20\n",
    )
    .unwrap();
    let check = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "v.yaml",
            "--data",
            "serving.csv",
            "--as-of",
            "2027-01-01",
        ],
    );
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let skew = arrowfeat_in(
        dir.path(),
        &[
            "skew",
            "--schemas",
            "v.yaml",
            "--serving",
            "serving.csv",
            "--training",
            "training.csv",
            "--time-tolerance",
            "0s",
            "--format",
            "json",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&skew)).unwrap();
    let mismatch = report["files"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "skew-mismatch" && c["status"] == "error")
        .unwrap_or_else(|| panic!("{report:#}"));
    // A directory whose files infer the column as integers in one and text in another.
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    std::fs::write(
        parts.join("a.csv"),
        "user_id,event_ts,amount,code\n001,2026-01-01T00:00:00Z,1.0,10\n",
    )
    .unwrap();
    std::fs::write(
        parts.join("b.csv"),
        "user_id,event_ts,amount,code\nabc,2026-01-01T00:00:00Z,1.0,x\n",
    )
    .unwrap();
    let check = arrowfeat_in(
        dir.path(),
        &[
            "check",
            "--schemas",
            "v.yaml",
            "--data",
            "parts",
            "--as-of",
            "2027-01-01",
        ],
    );
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    // Only `01` differs: as integers, `001` and `01` would be one key.
    let message = mismatch["message"].as_str().unwrap();
    assert!(
        message.contains("in 1 of 2 matched rows") && message.contains("user_id=\"01\""),
        "{message}"
    );
}

/// A view given no data while another view of the run was given its own by name is a
/// `data-not-read` error in `check --data`, `drift` and `skew` alike: the run does not
/// pass on data it did not read.
#[test]
fn a_view_given_no_data_beside_others_is_not_read() {
    let dir = tempdir("not-given");
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    let original =
        std::fs::read_to_string(repo().join("examples/schemas/user_events_v1.yaml")).unwrap();
    std::fs::write(schemas.join("a.yaml"), &original).unwrap();
    std::fs::write(
        schemas.join("b.yaml"),
        original.replace("name: user_events_v1", "name: other_events_v1"),
    )
    .unwrap();
    let events = repo().join("examples/data/events.parquet");
    let given = format!("user_events_v1={}", events.to_str().unwrap());
    let runs: [&[&str]; 3] = [
        &["check", "--schemas", "schemas", "--data", &given],
        &[
            "drift",
            "--schemas",
            "schemas",
            "--reference",
            &given,
            "--current",
            &given,
        ],
        &[
            "skew",
            "--schemas",
            "schemas",
            "--serving",
            &given,
            "--training",
            &given,
            "--time-tolerance",
            "0s",
        ],
    ];
    for args in runs {
        let run = arrowfeat_in(dir.path(), &[args, &["--format", "json"]].concat());
        assert_eq!(run.status.code(), Some(1), "{args:?}: {}", stderr(&run));
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        let not_read: Vec<&serde_json::Value> = report["files"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["checks"].as_array().unwrap())
            .filter(|c| c["rule"] == "data-not-read")
            .collect();
        assert_eq!(not_read.len(), 1, "{args:?}: {not_read:#?}");
        let message = not_read[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("view `other_events_v1` was given no data while other views were"),
            "{message}"
        );
        assert!(message.contains("other_events_v1=PATH"), "{message}");
        assert_eq!(not_read[0]["status"], "error");
    }
    // A profile saved without the view would replace one that has it: not saved, exit 2.
    let save = arrowfeat_in(
        dir.path(),
        &[
            "drift",
            "--schemas",
            "schemas",
            "--reference",
            &given,
            "--save-reference",
            "profile.json",
        ],
    );
    assert_eq!(save.status.code(), Some(2), "{}", stdout(&save));
    assert!(
        stdout(&save).contains("reference-not-saved"),
        "{}",
        stdout(&save)
    );
    assert!(!dir.path().join("profile.json").exists());
    // Data from `[data]` in arrowfeat.toml: the advice names the file's table.
    std::fs::write(
        dir.path().join("arrowfeat.toml"),
        format!("[data]\nuser_events_v1 = {:?}\n", events.to_str().unwrap()),
    )
    .unwrap();
    let configured = arrowfeat_in(dir.path(), &["check", "--schemas", "schemas"]);
    assert_eq!(configured.status.code(), Some(1), "{}", stderr(&configured));
    assert!(
        stdout(&configured)
            .contains("give `other_events_v1` = \"PATH\" under [data] in arrowfeat.toml"),
        "{}",
        stdout(&configured)
    );
}

/// Lists, embeddings and bytes are compared by their missing share, after their column's
/// type is judged as `check --data` judges it; a side of no rows is not compared.
#[test]
fn drift_of_embeddings_judges_their_type_and_refuses_no_rows() {
    let dir = tempdir("drift-presence");
    let events = repo().join("examples/data/events.parquet");
    let events = events.to_str().unwrap();
    let schema = repo().join("examples/schemas/user_events_v1.yaml");
    let schema = schema.to_str().unwrap();
    for (name, query) in [
        (
            "text.parquet",
            format!("SELECT * EXCEPT (embedding), channel AS embedding FROM '{events}'"),
        ),
        (
            "empty.parquet",
            format!("SELECT * FROM '{events}' WHERE false"),
        ),
    ] {
        let written = arrowfeat_in(
            dir.path(),
            &[
                "sql",
                "--allow-write",
                &format!("COPY ({query}) TO '{name}'"),
            ],
        );
        assert!(written.status.success(), "{}", stderr(&written));
    }
    let drift = |current: &str| {
        let run = arrowfeat_in(
            dir.path(),
            &[
                "drift",
                "--schemas",
                schema,
                "--reference",
                events,
                "--current",
                current,
                "--format",
                "json",
            ],
        );
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        let report: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
        report["files"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["subject"].as_str().unwrap().contains("`embedding`"))
            .map(|c| {
                (
                    c["rule"].as_str().unwrap().to_string(),
                    c["status"].as_str().unwrap().to_string(),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let text = drift("text.parquet");
    assert_eq!(text.len(), 1, "{text:#?}");
    assert_eq!(
        (text[0].0.as_str(), text[0].1.as_str()),
        ("data-column-type", "error")
    );
    assert!(
        text[0].2.contains("the schema declares embedding[8]"),
        "{text:#?}"
    );
    let empty = drift("empty.parquet");
    assert_eq!(empty.len(), 1, "{empty:#?}");
    assert_eq!(
        (empty[0].0.as_str(), empty[0].1.as_str()),
        ("drift-null-rate", "error")
    );
    assert!(
        empty[0]
            .2
            .contains("cannot be compared: the current data has no rows"),
        "{empty:#?}"
    );
}
