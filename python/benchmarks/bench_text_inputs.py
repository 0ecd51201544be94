"""The data gate on CSV and JSON inputs: what checking a text file costs next to reading it.

    .venv/bin/python python/benchmarks/bench_text_inputs.py [--rows N] [--repeat N] [--binary PATH]

The data: the first N rows (default 1M) of bench_data_gate.py's file (generated there and
cached), written once as Parquet, CSV and newline-delimited JSON under
/tmp/bench_text_inputs/. Times are ISO 8601 strings with `Z` in the text files (the event
time and the created time, both declared as times by the schema); floats that are NaN or
infinite become nulls there, as JSON cannot write them.

Contenders, each a whole process, timed alternately (median of --repeat runs, default 3):

- `check`: `arrowfeat check --data FILE` with bench_data_gate.py's schema (every column
  constrained), for each of the three formats;
- `scan`: `arrowfeat sql` reading every column of the same file once (a count of each
  column), the floor the check is compared with: a text file is first read whole to infer
  its columns' types, then scanned;
- `duckdb`: DuckDB 1.4 counting every column of the same file (`read_csv` / `read_json`,
  types inferred from all rows), for scale.

The ratio that matters is check / scan per format: what the gate adds over reading the file.
Build the CLI in release mode first (`cargo build --release --locked -p arrowfeat-cli`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_data_gate as gate

CACHE = Path("/tmp/bench_text_inputs")
FORMATS = ["parquet", "csv", "json"]


def write_inputs(rows: int) -> tuple[dict[str, Path], Path, list[str]]:
    """The three files of the first `rows` rows, the schema and the column names."""
    import duckdb

    source, schema, _, _ = gate.prepare(max(rows, 10_000_000))
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = {f: CACHE / f"events_{rows}.{f}" for f in FORMATS}
    con = duckdb.connect()
    columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{source}')").fetchall()]
    floats = {n for n, _, _ in gate.FLOATS}
    times = {gate.EVENT, gate.CREATED}

    def text(name: str) -> str:
        quoted = gate.sql_ident(name)
        if name in times:
            return f"strftime({quoted} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') AS {quoted}"
        if name in floats:
            return f"CASE WHEN isfinite({quoted}) THEN {quoted} END AS {quoted}"
        return quoted

    base = f"SELECT * FROM read_parquet('{source}') LIMIT {rows}"
    textual = f"SELECT {', '.join(text(c) for c in columns)} FROM ({base})"
    if not paths["parquet"].exists():
        con.execute(f"COPY ({base}) TO '{paths['parquet']}' (FORMAT parquet)")
    if not paths["csv"].exists():
        con.execute(f"COPY ({textual}) TO '{paths['csv']}' (FORMAT csv, HEADER)")
    if not paths["json"].exists():
        con.execute(f"COPY ({textual}) TO '{paths['json']}' (FORMAT json)")
    return paths, schema, columns


def commands(binary: Path, path: Path, schema: Path, columns: list[str]) -> dict[str, list[str]]:
    counts = ", ".join(f"count({gate.sql_ident(c)})" for c in columns)
    reader = {"parquet": "read_parquet", "csv": "read_csv", "json": "read_json"}[path.suffix[1:]]
    duck = f"SELECT {counts} FROM {reader}('{path}'" + (", sample_size=-1)" if reader != "read_parquet" else ")")
    duckdb_script = f"import duckdb; print(duckdb.sql({json.dumps(duck)}).fetchall())"
    return {
        "check": [
            str(binary),
            "check",
            "--schemas",
            str(schema),
            "--data",
            str(path),
            "--as-of",
            gate.AS_OF,
            "--format",
            "json",
        ],
        "scan": [str(binary), "sql", f"SELECT {counts} FROM '{path}'", "--format", "csv"],
        "duckdb": [str(gate.MAIN_PYTHON), "-c", duckdb_script],
    }


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    # check exits 1 on findings (the data has faults on purpose); anything else is a failure.
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--binary", type=Path, default=gate.ROOT / "target" / "release" / "arrowfeat")
    args = parser.parse_args()
    paths, schema, columns = write_inputs(args.rows)
    runs = {(f, c): [] for f in FORMATS for c in ("check", "scan", "duckdb")}
    for _ in range(args.repeat):
        for f in FORMATS:
            for contender, command in commands(args.binary, paths[f], schema, columns).items():
                runs[(f, contender)].append(timed(command))
    print(f"{args.rows:,} rows, {len(columns)} columns; median of {args.repeat} runs")
    print("| format | file size | check | scan | check / scan | DuckDB counts |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for f in FORMATS:
        check, scan, duck = (statistics.median(runs[(f, c)]) for c in ("check", "scan", "duckdb"))
        size = paths[f].stat().st_size / 2**20
        print(f"| {f} | {size:.0f} MiB | {check:.2f} s | {scan:.2f} s | {check / scan:.2f}x | {duck:.2f} s |")


if __name__ == "__main__":
    main()
