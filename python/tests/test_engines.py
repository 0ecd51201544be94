"""The same data through DataFusion SQL (the `arrowfeat sql` binary) and in-process Python
gives bit-identical results for every function."""

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import arrowfeat as af

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ARROWFEAT_BIN", REPO / "target" / "debug" / "arrowfeat"))


def data(rows=3001):
    rng = np.random.default_rng(11)
    x = rng.normal(10, 30, rows)
    x[::97] = np.nan
    mask = np.zeros(rows, bool)
    mask[::13] = True
    emb = rng.normal(size=(rows, 16)).astype(np.float32)
    emb[5] = 0.0
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(emb.reshape(-1)), 16)
    return pa.table(
        {
            "rid": pa.array(np.arange(rows)),
            "x": pa.array(x, mask=mask),
            "mean": pa.array(rng.normal(0, 1, rows)),
            "id": pa.array(rng.integers(-(2**40), 2**40, rows), mask=mask[::-1].copy()),
            "name": pa.array([f"user_{i % 101}" if i % 7 else None for i in range(rows)]),
            "lat": pa.array(rng.uniform(-95, 95, rows)),
            "lon": pa.array(rng.uniform(-180, 180, rows)),
            "emb": fsl,
        }
    )


SQL = {
    "standard_scale": ("standard_scale(x, mean, 2.5)", lambda t: af.standard_scale(t["x"], t["mean"], 2.5)),
    "min_max_scale": ("min_max_scale(x, -10, 40)", lambda t: af.min_max_scale(t["x"], -10, 40)),
    "bucketize": ("bucketize(x, [-10, 0, 10, 50])", lambda t: af.bucketize(t["x"], [-10, 0, 10, 50])),
    "xxhash64": ("xxhash64(id, name, x)", lambda t: af.xxhash64(t["id"], t["name"], t["x"])),
    "hash_bucket": ("hash_bucket(name, 1000)", lambda t: af.hash_bucket(t["name"], 1000)),
    "dot_product": ("dot_product(emb, emb)", lambda t: af.dot_product(t["emb"], t["emb"])),
    "cosine_similarity": (
        "cosine_similarity(emb, arrow_cast([1.0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], 'FixedSizeList(16, Float32)'))",
        lambda t: af.cosine_similarity(t["emb"], np.array([1.0, 0] * 8, np.float32)),
    ),
    "l2_norm": ("l2_norm(emb)", lambda t: af.l2_norm(t["emb"])),
    "l2_normalize": ("l2_normalize(emb)", lambda t: af.l2_normalize(t["emb"])),
    "quantize_int8": ("quantize_int8(emb, 0.05, 128)", lambda t: af.quantize_int8(t["emb"], 0.05, 128)),
    "haversine_km": (
        "haversine_km(lat, lon, 48.8566, 2.3522)",
        lambda t: af.haversine_km(t["lat"], t["lon"], 48.8566, 2.3522),
    ),
}


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=False))
    return a == b


def test_datafusion_sql_equals_python(tmp_path):
    assert BINARY.exists(), f"{BINARY} is missing: build it with `cargo build -p arrowfeat-cli`"
    table = data()
    source = tmp_path / "in.parquet"
    out = tmp_path / "out.parquet"
    pq.write_table(table, source, row_group_size=1000)
    columns = ", ".join(f"{expr} AS {name}" for name, (expr, _) in SQL.items())
    sql = f"COPY (SELECT rid, {columns} FROM t ORDER BY rid) TO '{out}' STORED AS PARQUET"
    run = subprocess.run(
        [str(BINARY), "sql", "--allow-write", sql, "--table", f"t={source}"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    result = pq.read_table(out)
    assert result["rid"].to_pylist() == list(range(len(table)))
    for name, (_, in_process) in SQL.items():
        sql_values = result[name].to_pylist()
        py_values = in_process(table).to_pylist()
        bad = [i for i, (a, b) in enumerate(zip(sql_values, py_values, strict=False)) if not same(a, b)]
        assert len(sql_values) == len(py_values) and not bad, f"{name}: rows {bad[:5]} differ"
