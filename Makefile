# arrowfeat developer entry points. Quick start: `make demo`, then `make test`.

CARGO ?= cargo
DEMO_TABLES = --table events=examples/data/events.parquet --table users=examples/data/users.csv

.PHONY: demo test test-rust example-data bench docs

## Run the demo feature query over the bundled example data.
demo:
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- sql --file examples/demo.sql $(DEMO_TABLES)

## The whole test suite: Rust unit, property, SQL-logic and CLI tests.
test: test-rust

test-rust:
	$(CARGO) test --workspace --locked

## Regenerate the bundled example data (deterministic).
example-data:
	$(CARGO) run --quiet --locked -p arrowfeat-cli -- sql --file examples/make_data.sql

## Regenerate docs/functions.md from the UDFs' documentation.
docs:
	ARROWFEAT_UPDATE_DOCS=1 $(CARGO) test --locked -p arrowfeat-cli docs_functions_md

## Criterion benchmarks of the kernels (release build; not part of `make test`).
bench:
	$(CARGO) bench --locked -p arrowfeat-udf --bench kernels
