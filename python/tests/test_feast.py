"""Feast end to end: a real feature repo (tests/feast/repo) applied with the pinned Feast,
its registry dumped, and the schemas checked by the CLI, by `--feast-repo`, by the Python
API on real FeatureView objects and by `python -m arrowfeat.feast`: the same findings."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

feast = pytest.importorskip("feast")

from arrowfeat.feast import validate_feature_view, validate_registry, validate_repo  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))
FEAST = str(Path(sys.executable).with_name("feast"))
EXAMPLES = REPO / "schemas" / "examples"
DRIFTED_STATS = REPO / "tests" / "fixtures" / "schemas" / "drifted" / "driver_hourly_stats_v1.yaml"


def run(args, cwd=None, env_extra=None):
    env = dict(os.environ, NO_COLOR="1", ARROWFEAT_FEAST=FEAST)
    env.update(env_extra or {})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def make_repo(tmp_path, features_py=None):
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "tests" / "feast" / "repo", repo, ignore=shutil.ignore_patterns("data"))
    if features_py is not None:
        (repo / "features.py").write_text(features_py)
    subprocess.run([sys.executable, "make_data.py", "data"], cwd=repo, check=True)
    return repo


@pytest.fixture(scope="module")
def applied(tmp_path_factory):
    """The test feature repo after `feast apply`, and its `feast registry-dump`."""
    repo = make_repo(tmp_path_factory.mktemp("feast"))
    applied = run([FEAST, "apply"], cwd=repo)
    assert applied.returncode == 0, applied.stderr
    dump = run([FEAST, "registry-dump"], cwd=repo)
    assert dump.returncode == 0, dump.stderr
    registry = repo / "registry.json"
    registry.write_text(dump.stdout)
    return repo, registry


@pytest.fixture
def applied_copy(applied, tmp_path):
    """A copy of the applied repo (registry, data and its dump) for a test that changes its
    data: each `feast` run costs seconds, and the sources' paths are relative to the repo."""
    repo, _ = applied
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy)
    return copy


def cli_findings(*args):
    out = run([str(BINARY), "check", *map(str, args), "--format", "json"])
    report = json.loads(out.stdout)
    found = sorted(
        (check["rule"], check["status"], Path(file["path"]).name, check["line"], check["column"])
        for file in report["files"]
        for check in file["checks"]
        if check["status"] != "pass"
    )
    return out.returncode, found


def api_findings(report):
    return sorted((f.rule, f.severity, Path(f.file).name, f.line, f.column) for f in report.findings)


def test_matching_schemas_pass(applied):
    repo, registry = applied
    code, found = cli_findings("--schemas", EXAMPLES, "--registry", registry)
    assert (code, found) == (0, [])
    code, found = cli_findings("--schemas", EXAMPLES, "--feast-repo", repo)
    assert (code, found) == (0, [])
    report = validate_repo(repo, EXAMPLES)
    assert report.ok and report.findings == [] and report.summary["views"] == 3


def test_drifted_schema_findings(applied):
    repo, registry = applied
    code, found = cli_findings("--schemas", DRIFTED_STATS, "--registry", registry)
    assert code == 1
    rules = {(rule, status) for rule, status, *_ in found}
    assert ("feature-missing", "error") in rules  # cancel_rate
    assert ("feature-type", "error") in rules  # conv_rate float64 vs FLOAT
    assert ("version-store-tag", "error") in rules  # 1.3.0 vs tag 1.2.0
    # datetime64[ns] vs Feast's timestamp[us, UTC]: ns to us loses precision, an error.
    assert ("timestamp-type", "error") in rules
    assert ("ttl", "error") in rules
    # --feast-repo and the Python API see exactly what the CLI sees on the dump.
    assert cli_findings("--schemas", DRIFTED_STATS, "--feast-repo", repo) == (code, found)
    report = validate_repo(repo, DRIFTED_STATS)
    assert (report.exit_code, api_findings(report)) == (code, found)
    lossy = next(f for f in report.errors if f.rule == "timestamp-type")
    assert (lossy.expected, lossy.actual) == ("datetime64[ns]", "timestamp[us, UTC]")
    assert "datetime64[ns]" in lossy.message and "timestamp[us, UTC]" in lossy.message


def test_validate_feature_view_on_real_objects(applied, tmp_path):
    repo, registry = applied
    store = feast.FeatureStore(repo_path=str(repo))
    view = store.get_feature_view("driver_hourly_stats_v1")
    entities = [store.get_entity(name) for name in view.entities]
    good = validate_feature_view(view, EXAMPLES / "driver_hourly_stats_v1.yaml", entities=entities)
    assert good.ok and good.findings == [], good.render()
    drifted = validate_feature_view(view, DRIFTED_STATS, entities=entities)
    _, cli = cli_findings("--schemas", DRIFTED_STATS, "--registry", registry)
    assert api_findings(drifted) == cli
    # A wrong major version and a missing timestamp field are errors.
    text = (EXAMPLES / "driver_hourly_stats_v1.yaml").read_text()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(
        text.replace("schema_version: 1.2.0", "schema_version: 2.0.0").replace("name: event_timestamp", "name: ts")
    )
    report = validate_feature_view(view, wrong, entities=entities)
    errors = {f.rule for f in report.errors}
    assert {"version-name-suffix", "version-store-tag", "timestamp-field"} <= errors
    assert report.render("github").startswith("::error file=")
    assert "driver_hourly_stats_v1" in repr(report)


def test_in_memory_feature_view_before_apply():
    from datetime import timedelta

    from feast import Entity, FeatureView, Field, FileSource
    from feast.types import Float32, Int64
    from feast.value_type import ValueType

    driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
    view = FeatureView(
        name="driver_hourly_stats_v1",
        entities=[driver],
        ttl=timedelta(days=1),
        schema=[
            Field(name="driver_id", dtype=Int64),
            Field(name="conv_rate", dtype=Float32),
            Field(name="acc_rate", dtype=Float32),
            Field(name="avg_daily_trips", dtype=Int64),
        ],
        source=FileSource(path="x.parquet", timestamp_field="event_timestamp", created_timestamp_column="created"),
        tags={"schema_version": "1.2.0"},
    )
    report = validate_feature_view(view, EXAMPLES / "driver_hourly_stats_v1.yaml", entities=[driver])
    assert report.ok, report.render()


def test_module_cli_exits_like_arrowfeat(applied):
    repo, _ = applied
    module = [sys.executable, "-m", "arrowfeat.feast", "check", str(repo)]
    assert run([*module, str(EXAMPLES)]).returncode == 0
    drifted = run([*module, str(DRIFTED_STATS), "--format", "github"])
    assert drifted.returncode == 1
    assert "title=arrowfeat feature-missing::" in drifted.stdout
    warn_only = run([*module, str(EXAMPLES / "customer_profile_v2.yaml"), "--deny-warnings"])
    assert warn_only.returncode == 0
    missing = run([*module, "no/such/schemas"])
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    not_a_repo = run([sys.executable, "-m", "arrowfeat.feast", "check", str(EXAMPLES), str(EXAMPLES)])
    assert not_a_repo.returncode == 2 and "not a Feast feature repo" in not_a_repo.stderr


def test_feast_not_installed_is_explained(tmp_path):
    out = run(
        [str(BINARY), "check", "--schemas", str(EXAMPLES), "--feast-repo", str(REPO / "tests" / "feast" / "repo")],
        env_extra={"ARROWFEAT_FEAST": str(tmp_path / "no-feast")},
    )
    assert out.returncode == 2
    assert "needs the Feast CLI" in out.stderr and "pip install feast" in out.stderr
    assert out.stderr.count("\n") == 1


def test_broken_repo_is_a_clear_error(tmp_path):
    repo = make_repo(tmp_path, features_py="from feast import Entity\nthis is not python\n")
    out = run([str(BINARY), "check", "--schemas", str(EXAMPLES), "--feast-repo", str(repo)])
    assert out.returncode == 2
    assert out.stderr.startswith(f"arrowfeat: error: --feast-repo {repo}: ")
    assert out.stderr.count("\n") == 1


def test_empty_registry_is_a_clear_error(tmp_path):
    repo = make_repo(
        tmp_path, features_py="from feast import Entity\ndriver = Entity(name='driver', join_keys=['driver_id'])\n"
    )
    assert run([FEAST, "apply"], cwd=repo).returncode == 0
    out = run([str(BINARY), "check", "--schemas", str(EXAMPLES), "--feast-repo", str(repo)])
    assert out.returncode == 2
    assert "holds no feature views (run `feast apply` in the feature repo first)" in out.stderr


def test_unsupported_registry_layout(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"featureViews": [{"name": "driver_hourly_stats_v1", "features": []}]}))
    out = run([str(BINARY), "check", "--schemas", str(EXAMPLES), "--registry", str(old)])
    assert out.returncode == 2
    assert "this registry layout is not supported" in out.stderr


REGISTRY_FIXTURE = REPO / "tests" / "fixtures" / "feast" / "registry.json"


def test_config_and_one_pipeline_with_the_cli(tmp_path, monkeypatch):
    """arrowfeat.toml applies in Python as in the CLI (named or found in the working
    directory), the reports are byte-identical, and rendering does not check again."""
    plain = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS)
    assert ("ttl", "error") in {(f.rule, f.severity) for f in plain.findings}
    (tmp_path / "arrowfeat.toml").write_text('deny_warnings = true\n[severity]\nttl = "off"\n')
    configured = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, config=tmp_path / "arrowfeat.toml")
    assert "ttl" not in {f.rule for f in configured.findings}
    assert configured.exit_code_with(False) == configured.exit_code == 1
    monkeypatch.chdir(tmp_path)
    discovered = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS)
    assert discovered.data == configured.data
    for format, verbose in (("json", False), ("sarif", False), ("github", False), ("text", False), ("text", True)):
        cli = run(
            [
                str(BINARY),
                "check",
                "--schemas",
                str(DRIFTED_STATS),
                "--registry",
                str(REGISTRY_FIXTURE),
                "--format",
                format,
                "--color",
                "never",
                *(["--verbose"] if verbose else []),
            ],
            cwd=tmp_path,
        )
        rendered = discovered.render(format, verbose=verbose)
        assert (cli.returncode, cli.stdout) == (discovered.exit_code, rendered), (format, verbose)
    # Quiet text by default: findings and the summary; verbose adds every check.
    assert "STATUS" not in discovered.render("text")
    assert "STATUS" in discovered.render("text", verbose=True)
    (tmp_path / "bad.toml").write_text('[severity]\nfeature-extar = "off"\n')
    with pytest.raises(ValueError, match=r"unknown rule `feature-extar`.*did you mean `feature-extra`"):
        validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, config=tmp_path / "bad.toml")


def test_render_does_not_check_again(tmp_path):
    schema = tmp_path / "driver_hourly_stats_v1.yaml"
    schema.write_bytes(DRIFTED_STATS.read_bytes())
    report = validate_registry(REGISTRY_FIXTURE, schema)
    text = report.render("text")
    schema.unlink()  # a second check would now fail to read it
    assert report.render("text") == text
    assert report.render("junit").startswith("<?xml")
    assert report.exit_code_with(True) == 1
    with pytest.raises(ValueError, match=r"format: expected one of text, json"):
        report.render("xml")


def test_baselines_as_in_the_cli(tmp_path, monkeypatch):
    """``write_baseline`` accepts today's findings, ``baseline`` honours them, a baseline in
    the working directory is found as the CLI finds it, ``False`` ignores it; the reports
    equal ``arrowfeat check --baseline``'s byte for byte."""
    monkeypatch.chdir(tmp_path)
    plain = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS)
    assert not plain.ok
    written = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, write_baseline=tmp_path / "accepted.json")
    assert written.ok and (tmp_path / "accepted.json").is_file()
    honoured = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, baseline=tmp_path / "accepted.json")
    assert honoured.ok and honoured.data == written.data
    cli = run(
        [
            str(BINARY),
            "check",
            "--schemas",
            str(DRIFTED_STATS),
            "--registry",
            str(REGISTRY_FIXTURE),
            "--baseline",
            str(tmp_path / "accepted.json"),
            "--format",
            "json",
        ],
        cwd=tmp_path,
    )
    assert (cli.returncode, cli.stdout) == (honoured.exit_code, honoured.render("json"))
    (tmp_path / "arrowfeat-baseline.json").write_bytes((tmp_path / "accepted.json").read_bytes())
    assert validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS).ok
    ignored = validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, baseline=False)
    assert ignored.data == plain.data and not ignored.ok
    with pytest.raises(ValueError, match=r"no-such\.json"):
        validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, baseline=tmp_path / "no-such.json")
    with pytest.raises(
        TypeError, match=r"validate_registry: argument `baseline`: expected a file path, None .*found True"
    ):
        validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, baseline=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"write_baseline: expected no `baseline` beside it"):
        validate_registry(REGISTRY_FIXTURE, DRIFTED_STATS, baseline=False, write_baseline=tmp_path / "b.json")


def test_data_of_the_feast_repo_sources_is_checked(applied_copy, monkeypatch):
    """`check --feast-repo REPO --data-from-store`: each view's data is read from its
    FileSource path (relative to the repo, as Feast reads it). The repo's own data passes
    its schemas' data checks; a drifted source file is found."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = applied_copy
    args = ["--schemas", EXAMPLES, "--feast-repo", repo, "--data-from-store", "--as-of", "2026-01-01T03:00:00Z"]
    code, found = cli_findings(*args)
    data_findings = [f for f in found if f[0].startswith("data-")]
    # The repo's data is clean; its events are at hours 0-2, within every view's TTL (the
    # shortest, 6h) at 03:00.
    assert data_findings == [], found
    stats = repo / "data" / "driver_stats.parquet"
    table = pq.read_table(stats)
    drifted = table.set_column(
        table.schema.get_field_index("conv_rate"), "conv_rate", pa.array([0.5, 1.5, None], pa.float32())
    ).set_column(table.schema.get_field_index("driver_id"), "driver_id", pa.array([1001, None, 1003], pa.int64()))
    pq.write_table(drifted, stats)
    code, found = cli_findings(*args)
    rules = sorted({f[0] for f in found if f[2] == "driver_hourly_stats_v1.yaml"})
    assert code == 1, found
    assert rules == ["data-null", "data-out-of-range"], found

    # Python: the same findings, the store read with the Feast SDK or from a registry dump
    # (relative paths from the working directory), the data of one view given by hand.
    from arrowfeat.data import check_data

    as_of = "2026-01-01T03:00:00Z"
    by_repo = check_data(None, EXAMPLES, feast_repo=repo, data_from_store=True, as_of=as_of)
    assert by_repo.exit_code == code and api_findings(by_repo) == found
    monkeypatch.chdir(repo)
    by_registry = check_data(None, EXAMPLES, registry="registry.json", data_from_store=True, as_of=as_of)
    assert api_findings(by_registry) == found
    clean = {"driver_hourly_stats_v1": table}
    given = check_data(clean, EXAMPLES, registry="registry.json", data_from_store=True, as_of=as_of)
    assert not [f for f in given.findings if f.rule.startswith("data-")], given.findings
    with pytest.raises(ValueError, match="`data_from_store` needs `registry` or `feast_repo`"):
        check_data(None, EXAMPLES, data_from_store=True)


def test_drift_of_every_view_of_the_feast_repo(applied_copy, tmp_path, monkeypatch):
    """`drift --feast-repo REPO --reference-from-store --save-reference P` profiles every
    view's batch source; `--current-from-store --reference-profile P` later compares each
    view's source with it. A drifted source file is found in its view only; the schemas
    are not checked against the store (that is `check`); Python (`feast_repo=`, and
    `registry=` of a registry dump, relative paths from the working directory) reports
    the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arrowfeat.data import drift

    repo = applied_copy
    profile = tmp_path / "profile.json"
    store = ["--schemas", str(EXAMPLES), "--feast-repo", str(repo)]

    saved = run([str(BINARY), "drift", *store, "--reference-from-store", "--save-reference", str(profile)])
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert "saved the reference profile of 3 view(s)" in saved.stderr
    views = json.loads(profile.read_text())["views"]
    assert sorted(views) == ["customer_profile_v2", "driver_customer_trips_v1", "driver_hourly_stats_v1"]
    assert views["driver_hourly_stats_v1"]["source"].endswith("data/driver_stats.parquet")

    def cli_drift():
        out = run(
            [
                str(BINARY),
                "drift",
                *store,
                "--current-from-store",
                "--reference-profile",
                str(profile),
                "--format",
                "json",
            ]
        )
        report = json.loads(out.stdout)
        return out.returncode, report

    code, report = cli_drift()
    assert code == 0, report
    rules = {c["rule"] for f in report["files"] for c in f["checks"]}
    assert {"drift-psi", "drift-ks", "drift-categories", "drift-null-rate"} <= rules, rules

    def check_rules(*args):
        out = run([str(BINARY), "check", "--schemas", str(EXAMPLES), *args, "--format", "json"])
        return {c["rule"] for f in json.loads(out.stdout)["files"] for c in f["checks"]}

    store_rules = check_rules("--feast-repo", str(repo)) - check_rules()
    assert store_rules and not rules & store_rules, (rules, store_rules)
    assert f"current data at the batch sources of Feast repo {repo}" in report["against"]

    stats = repo / "data" / "driver_stats.parquet"
    table = pq.read_table(stats)
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("conv_rate"), "conv_rate", pa.array([5.0, 6.0, 7.0], pa.float32())
        ),
        stats,
    )
    code, report = cli_drift()
    assert code == 1, report
    # The subject names the data by its path, which differs with how the store was given.
    found = sorted(
        (Path(f["path"]).name, c["rule"], c["subject"].split(": ", 1)[1], c["actual"])
        for f in report["files"]
        for c in f["checks"]
        if c["status"] != "pass"
    )
    assert {name for name, *_ in found} == {"driver_hourly_stats_v1.yaml"}, found
    assert {"drift-psi", "drift-ks"} <= {rule for _, rule, *_ in found}, found
    assert all(subject.startswith("feature `conv_rate`") for _, _, subject, _ in found), found

    by_repo = drift(None, EXAMPLES, reference_profile=profile, feast_repo=repo, current_from_store=True)
    monkeypatch.chdir(repo)  # a registry dump's relative paths start at the working directory
    by_registry = drift(None, EXAMPLES, reference_profile=profile, registry="registry.json", current_from_store=True)
    for report_py in (by_repo, by_registry):
        assert report_py.exit_code == 1
        assert (
            sorted((Path(f.file).name, f.rule, f.subject.split(": ", 1)[1], f.actual) for f in report_py.findings)
            == found
        )

    # The data of one view given by hand replaces its store source.
    clean = tmp_path / "clean_stats.parquet"
    pq.write_table(table, clean)
    given = drift(
        {"driver_hourly_stats_v1": clean},
        EXAMPLES,
        reference_profile=profile,
        registry="registry.json",
        current_from_store=True,
    )
    assert given.ok, given.findings


def test_drift_from_the_store_refuses_what_it_cannot_read(applied, tmp_path, monkeypatch):
    """The store flags go together, and the two from-store flags never together; a view
    the store lacks, or whose batch source has no file path, is an error naming the flag
    that gives its data instead, and stops a save of the reference's profile (the report
    says so, whichever side failed first); a view given one side only is a finding."""
    from arrowfeat.data import drift
    from arrowfeat.errors import ArrowfeatTypeError, ArrowfeatValueError

    repo, registry = applied
    base = [str(BINARY), "drift", "--schemas", str(EXAMPLES)]
    alone = run([*base, "--current-from-store", "--reference", "x.parquet"])
    assert alone.returncode == 2
    assert "--current-from-store and --reference-from-store need --registry or --feast-repo" in alone.stderr
    unused = run([*base, "--registry", str(registry), "--reference", "x.parquet", "--current", "y.parquet"])
    assert unused.returncode == 2
    assert "add --current-from-store or --reference-from-store" in unused.stderr
    both = run([*base, "--registry", str(registry), "--feast-repo", str(repo), "--current-from-store"])
    assert both.returncode == 2 and "cannot be used with" in both.stderr
    itself = run([*base, "--registry", str(registry), "--current-from-store", "--reference-from-store"])
    assert itself.returncode == 2 and "would be compared with itself" in itself.stderr, itself.stderr
    with pytest.raises(ArrowfeatValueError, match="need `registry` or `feast_repo`"):
        drift(None, EXAMPLES, reference_profile=tmp_path / "p.json", current_from_store=True)
    with pytest.raises(ArrowfeatValueError, match="add current_from_store=True"):
        drift(tmp_path / "c.parquet", EXAMPLES, reference_profile=tmp_path / "p.json", registry=registry)
    with pytest.raises(ArrowfeatValueError, match="would be compared with itself"):
        drift(None, EXAMPLES, registry=registry, current_from_store=True, reference_from_store=True)
    with pytest.raises(ArrowfeatTypeError, match="argument `current_from_store`: expected True or False, found str"):
        drift(None, EXAMPLES, reference_profile=tmp_path / "p.json", registry=registry, current_from_store="yes")
    with pytest.raises(ArrowfeatTypeError, match="argument `registry`: expected a path, found int"):
        drift(None, EXAMPLES, reference_profile=tmp_path / "p.json", registry=5, current_from_store=True)
    with pytest.raises(ArrowfeatValueError, match="argument `feast_repo`: nope is not a Feast feature repo"):
        drift(None, EXAMPLES, reference_profile=tmp_path / "p.json", feast_repo="nope", current_from_store=True)

    # A registry whose driver view reads another kind of source, and which lacks the
    # customer view.
    dump = json.loads(registry.read_text())
    views = [v for v in dump["featureViews"] if v["spec"]["name"] != "customer_profile_v2"]
    for view in views:
        if view["spec"]["name"] == "driver_hourly_stats_v1":
            view["spec"]["batchSource"].pop("fileOptions")
    dump["featureViews"] = views
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(dump))
    profile = tmp_path / "p.json"
    profile.write_text("complete")  # a partial profile never replaces it
    for current in ([], ["--current", "driver_customer_trips_v1=data/driver_customer_trips.parquet"]):
        out = run(
            [
                *base,
                "--registry",
                str(partial),
                "--reference-from-store",
                *current,
                "--save-reference",
                str(profile),
                "--format",
                "json",
            ],
            cwd=repo,
        )
        report = json.loads(out.stdout)
        found = sorted(
            (Path(f["path"]).name, c["rule"], c["status"], c["message"])
            for f in report["files"]
            for c in f["checks"]
            if c["status"] != "pass"
        )
        assert [(name, rule, status) for name, rule, status, _ in found] == [
            ("customer_profile_v2.yaml", "data-not-read", "error"),
            ("customer_profile_v2.yaml", "reference-not-saved", "error"),
            ("driver_hourly_stats_v1.yaml", "data-not-read", "error"),
            ("driver_hourly_stats_v1.yaml", "reference-not-saved", "error"),
        ], found
        assert "partial.json has no feature view of that name; give --reference customer_profile_v2=PATH" in found[0][3]
        assert "the reference profile is not saved" in found[1][3]
        assert "names no file path" in found[2][3]
        # The report is written, and its exit code is the process's; the profile,
        # partial, is not.
        assert out.returncode == report["exit_code"] == 2, out.stderr
        assert "not saved: the reference data of view `customer_profile_v2` could not be profiled in full" in out.stderr
        assert profile.read_text() == "complete"

    # Reference data from the store for every view, current data for one: the others
    # are findings, not silently left out.
    one = run(
        [
            *base,
            "--registry",
            str(registry),
            "--reference-from-store",
            "--format",
            "json",
            "--current",
            "driver_hourly_stats_v1=data/driver_stats.parquet",
        ],
        cwd=repo,
    )
    report = json.loads(one.stdout)
    unpaired = sorted(
        Path(f["path"]).name for f in report["files"] for c in f["checks"] if c["rule"] == "drift-reference"
    )
    assert unpaired == ["customer_profile_v2.yaml", "driver_customer_trips_v1.yaml"], report
    assert one.returncode == 1

    # A path the store names that cannot be read says where it came from.
    dump = json.loads(registry.read_text())
    for view in dump["featureViews"]:
        view["spec"]["batchSource"]["fileOptions"] = {"uri": "data/missing.parquet"}
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(dump))
    given = ["--reference", "driver_hourly_stats_v1=data/driver_stats.parquet", "--current-from-store"]
    out = run([*base, "--registry", str(missing), *given], cwd=repo)
    assert out.returncode == 2
    assert "the path is the batch source of view `driver_hourly_stats_v1` in" in out.stdout, out.stdout
    # A path of another JSON type is a registry error.
    view = dump["featureViews"][0]
    view["spec"]["batchSource"]["fileOptions"] = {"uri": 5}
    missing.write_text(json.dumps(dump))
    out = run([*base, "--registry", str(missing), *given], cwd=repo)
    assert out.returncode == 2
    assert "fileOptions.uri: expected a path or URI string, found a number" in out.stderr, out.stderr

    monkeypatch.chdir(repo)
    with pytest.raises(ArrowfeatValueError, match="not saved: the reference data of view `customer_profile_v2`") as e:
        drift(None, EXAMPLES, registry=partial, reference_from_store=True, save_reference=profile)
    assert {f.rule for f in e.value.report.findings} == {"data-not-read", "reference-not-saved"}
    # Findings in Python name Python's arguments, not the CLI's flags.
    not_read = [f.message for f in e.value.report.findings if f.rule == "data-not-read"]
    assert any('give reference={"customer_profile_v2": data}' in m for m in not_read), not_read
    assert not any("--" in m for m in not_read), not_read
    assert profile.read_text() == "complete"

    # Reference data that cannot be read (exit 2) stops the save too, and says so.
    missing_reference = "driver_hourly_stats_v1=data/missing.parquet"
    driver = EXAMPLES / "driver_hourly_stats_v1.yaml"
    unread = run(
        [
            str(BINARY),
            "drift",
            "--schemas",
            str(driver),
            "--reference",
            missing_reference,
            "--save-reference",
            str(profile),
            "--format",
            "json",
        ],
        cwd=repo,
    )
    assert unread.returncode == 2, unread.stderr
    not_profiled = "not saved: the reference data of view `driver_hourly_stats_v1` could not be profiled in full"
    assert not_profiled in unread.stderr, unread.stderr
    # The report's finding says why, in itself (the view's findings may be accepted).
    [why] = [
        c["message"]
        for f in json.loads(unread.stdout)["files"]
        for c in f["checks"]
        if c["rule"] == "reference-not-saved"
    ]
    assert "missing.parquet" in why, why
    with pytest.raises(ArrowfeatValueError, match=not_profiled) as e:
        drift(None, driver, reference={"driver_hourly_stats_v1": "data/missing.parquet"}, save_reference=profile)
    assert e.value.report.exit_code == 2
    assert profile.read_text() == "complete"
    # Reference data for one view of several: the others were given none, and the
    # profile, which would lack them, is not saved.
    one_of_three = run(
        [*base, "--reference", "driver_hourly_stats_v1=data/driver_stats.parquet", "--save-reference", str(profile)],
        cwd=repo,
    )
    assert one_of_three.returncode == 2, one_of_three.stdout
    assert "was given no data while other views were, so it was not profiled" in one_of_three.stdout
    assert profile.read_text() == "complete"
