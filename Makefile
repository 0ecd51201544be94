# arrowfeat developer entry points. Quick start: `make demo`, then `make test`.

CARGO ?= cargo
PYTHON3 ?= python3
VENV ?= .venv
VENV_ABS := $(abspath $(VENV))
PY := $(VENV)/bin/python
# Package downloads retry within pip (and resume a cut wheel) and, through tools/retry,
# as a whole: a dropped connection once failed CI in the middle of pyarrow's wheel.
PIP_INSTALL = $(VENV)/bin/pip install --quiet --retries 10 --timeout 60 --resume-retries 10
DEMO_TABLES = --table events=examples/data/events.parquet --table users=examples/data/users.csv
# The Python crate is built by maturin, not by `cargo test`.
RUST_PACKAGES = --workspace --exclude arrowfeat-python

.PHONY: wheel demo test lint lint-rust lint-python test-rust test-python fuzz python-dev python-release example-data docs bench bench-python bench-windows bench-point-in-time

## Run the demo feature query over the bundled example data, build a point-in-time
## training set from the bundled labels, then check the example feature schemas against
## the bundled Feast registry, and the bundled event data against its schema.
demo:
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- sql --file examples/demo.sql $(DEMO_TABLES)
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- training-set --spine examples/data/labels.csv \
		--events examples/data/events.parquet --by user_id --spine-time label_ts --event-time event_ts \
		--ttl 7d --feature channel --feature amount:sum:6h --feature amount:count:1d --max-rows 5
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- check --schemas schemas/examples --registry tests/fixtures/feast/registry.json
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- check --schemas examples/schemas --data examples/data/events.parquet --as-of 2026-11-02T00:00:00Z

## The whole test suite: Rust (unit, property, SQL-logic, CLI), then Python (pytest,
## with a real local PySpark session). Creates .venv with pinned dependencies.
test: lint-rust test-rust test-python lint-python

## Formatter and linters, as CI runs them: no import cycle between the modules of any
## crate (tools/check_module_cycles.py, and its own tests), rustfmt, clippy (warnings are
## errors), ruff (lint and format), mypy (strict) and the import contracts (import-linter,
## `[tool.importlinter]` in python/pyproject.toml) of the Python package.
lint: lint-rust lint-python

lint-rust:
	$(PYTHON3) tools/check_module_cycles.py
	$(PYTHON3) -m unittest discover --start-directory tools --pattern 'test_*.py' --quiet
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

lint-python: $(VENV)/.installed
	cd python && $(VENV_ABS)/bin/ruff check arrowfeat tests benchmarks
	cd python && $(VENV_ABS)/bin/ruff format --check arrowfeat tests benchmarks
	cd python && $(VENV_ABS)/bin/mypy
	cd python && $(VENV_ABS)/bin/lint-imports --no-cache

## Long fuzz-style runs of every parser of the gate and every kernel (stable Rust,
## proptest). `make test` runs the same properties briefly. FUZZ_CASES sets the length.
FUZZ_CASES ?= 20000
fuzz:
	ARROWFEAT_FUZZ_CASES=$(FUZZ_CASES) $(CARGO) test --locked -p arrowfeat-validator --test fuzz
	ARROWFEAT_FUZZ_CASES=$(FUZZ_CASES) $(CARGO) test --locked -p arrowfeat-udf --test fuzz_kernels

# The CLI tests validate every SARIF report with Microsoft's SARIF Multitool (pinned in
# tools/package-lock.json, installed into the git-ignored tools/node_modules); with
# ARROWFEAT_REQUIRE_SARIF_MULTITOOL set, a missing tool fails that test instead of skipping it.
test-rust: tools/node_modules/.installed
	ARROWFEAT_REQUIRE_SARIF_MULTITOOL=1 $(CARGO) test $(RUST_PACKAGES) --locked

tools/node_modules/.installed: tools/package.json tools/package-lock.json
	tools/retry 3 npm ci --prefix tools --no-audit --no-fund
	touch $@

$(VENV)/.installed: python/requirements-test.txt
	$(PYTHON3) -m venv $(VENV)
	tools/retry 3 $(VENV)/bin/pip install --quiet --retries 10 --timeout 60 pip==26.3
	tools/retry 3 $(PIP_INSTALL) -r python/requirements-test.txt
	touch $@

## Build the extension into .venv (debug build; shares target/ with cargo). An extension
## file tagged for one Python version would shadow the abi3 one: it is removed first.
python-dev: $(VENV)/.installed
	rm -f python/arrowfeat/_native.cpython-*.so
	cd python && VIRTUAL_ENV=$(VENV_ABS) $(VENV_ABS)/bin/maturin develop --quiet --locked

## One abi3 wheel (CPython 3.11 and later) in target/wheels: `pip install target/wheels/arrowfeat-*.whl`.
wheel: $(VENV)/.installed
	cd python && $(VENV_ABS)/bin/maturin build --quiet --release --locked --out ../target/wheels

## Release build of the extension, for benchmarks.
python-release: $(VENV)/.installed
	rm -f python/arrowfeat/_native.cpython-*.so
	cd python && VIRTUAL_ENV=$(VENV_ABS) $(VENV_ABS)/bin/maturin develop --quiet --locked --release

# `cargo test --no-run` (not `cargo build`) provides target/debug/arrowfeat for the engine
# tests: it resolves features like test-rust, so it reuses that build instead of
# compiling DataFusion again.
test-python: python-dev
	$(CARGO) test $(RUST_PACKAGES) --locked --no-run --quiet
	$(PY) -m pytest -q python/tests

## Regenerate the bundled example data (deterministic).
example-data:
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- sql --allow-write --file examples/make_data.sql

## Regenerate docs/functions.md and docs/rules.md from the code.
docs:
	ARROWFEAT_UPDATE_DOCS=1 $(CARGO) test --locked -p arrowfeat-validator --test rules docs_rules_md
	ARROWFEAT_UPDATE_DOCS=1 $(CARGO) test --locked -p arrowfeat-cli docs_functions_md

## Criterion benchmarks and side-by-side ratios of the kernels (release; not in `make test`).
bench:
	$(CARGO) bench --locked $(RUST_PACKAGES) --bench kernels
	$(CARGO) bench --locked $(RUST_PACKAGES) --bench ratios

## Python and PySpark benchmarks against numpy, pyarrow, polars and Spark built-ins.
bench-python: python-release
	$(PY) python/benchmarks/bench_inprocess.py
	$(PY) python/benchmarks/bench_spark.py

## Window benchmarks: arrowfeat against Polars, DataFusion, DuckDB and Spark (10M events).
bench-windows: python-release
	tools/retry 3 $(PIP_INSTALL) -r python/requirements-bench.txt
	$(PY) python/benchmarks/bench_windows.py

## Point-in-time benchmarks: arrowfeat against DuckDB, Polars and Feast (10M events, 1M labels).
bench-point-in-time: python-release
	tools/retry 3 $(PIP_INSTALL) -r python/requirements-bench.txt
	$(PY) python/benchmarks/bench_point_in_time.py
