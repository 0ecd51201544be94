"""Drift and skew side by side: `arrowfeat drift` (from the reference data, and from a
saved reference profile) against the same metrics in numpy/scipy and Evidently's column
drift metrics; `arrowfeat skew` against a DuckDB ASOF JOIN counting the same rows. Every
contender's figures are cross-checked against arrowfeat's JSON report.

    .venv/bin/python python/benchmarks/bench_drift_skew.py [--rows N] [--repeat N]
        [--timeout SECONDS] [--only NAME[,NAME]] [--binary PATH]

--only takes contender names (below) or `drift` / `skew` for all of a task's.

Setup, once. This script, arrowfeat, numpy/scipy and DuckDB run with the main venv
(.venv). Evidently 0.7 runs from a venv of its own: it does not import with pandas 3
(`infer_dtype_from_object` is gone from pandas 3), which the pandera/GX venv of
bench_data_gate.py has:

    python3 -m venv /tmp/evidentlyvenv
    /tmp/evidentlyvenv/bin/pip install 'evidently==0.7.*' 'pandas<3' pyarrow

(tested with evidently 0.7.23, pandas 2.3.3, numpy 2.4.6, scipy 1.17.1, pyarrow 26.0.1;
--evidently-python picks another interpreter). Every contender runs as a subprocess, and
the harness (launcher, peak RSS, formatting) is bench_data_gate.py's, imported: both
files import only the standard library at the top, so any venv can run them as workers.
Build the CLI in release mode first (`cargo build --release --locked -p arrowfeat-cli`):
the binary is target/release/arrowfeat, else target/debug/arrowfeat (its timings are not
representative), or --binary.

Data (generated once, deterministically, cached under /tmp/bench_drift_skew/ by row count):

- Drift: a reference and a current Parquet file of ROWS rows each (default 10M), 20
  columns: an int64 entity key (Zipf(1.2) over 1M keys), an event time, and 18 features:
  8 float64 (lognormal, beta, normal, uniform, Student-t with a few +-inf, one rounded to
  0.1 so that it has many ties), 4 int64, a timestamp, an int32 with allowed_values,
  3 strings (4, 8 and 50 categories) and a bool, with nulls (and NaN) in some. The
  current file is drifted: shifted and scaled numbers, other category shares, a new
  channel, more nulls and NaN in `lon`, `device` and `score`.
- Skew: a training table of ROWS rows (an int64 entity key, Zipf(1.2) over 1M keys, a
  microsecond UTC event time over 92 days, no key with two events at the same time, so
  the match has no ties to break; 8 features: 4 float64 with NaN, nulls and a few +inf,
  2 int64, 2 strings) and a serving log of ROWS/10 of its rows, served up to 90 s after
  the event (uniform; 0.1% exactly 1 minute after, 0.1% 1 minute and 1 us after), with
  0.2% of each feature's values perturbed per kind (floats by 1e-6, or by 1e-12, which
  the tolerance accepts; set to null or NaN; integers +1; another string) and 0.5% of
  rows for keys the training table lacks.

Contenders:

- `arrowfeat-drift`: `arrowfeat drift --reference R --current C --format json`, the
  whole process. `arrowfeat-profile`: `--reference-profile P --current C`, with P saved
  beforehand by `--save-reference` (untimed; its time is printed); its KS D is within
  1/2000 of the exact one (docs/drift.md), the rest exact.
- `numpy`: the definitions of docs/drift.md as python/tests/test_drift.py computes them
  (mirrored below): pyarrow reads, PSI and Jensen-Shannon at the reference's deciles,
  scipy's ks_2samp, category counts (pyarrow's value_counts), the missing-share change.
- `evidently`: `ValueDrift(column, method)` for psi, jensenshannon and ks on numeric
  features and psi, jensenshannon on categorical ones, over pandas frames (timestamps as
  int64 microseconds). Its definitions differ, so its figures are shown, not compared,
  except where they match: PSI bins at Sturges' edges of both samples together (or at
  the values, when the reference has at most 20 distinct ones), empty bins as 1e-4 (or
  1e-6 of the smallest share), each new category a bin of its own; Jensen-Shannon in
  natural log; KS reports the p-value only, not D; +-inf is dropped as missing; no
  null-rate metric. Categorical PSI and JS (divided by sqrt(ln 2)) are cross-checked on
  the features where the bins match: no category gone, at most one new one, every
  reference share above 1e-4. It is the slow and large one: at 1M rows per file,
  43 s and 1.4 GiB peak RSS (pandas frames of both files and Evidently's copies).
- `arrowfeat-skew`: `arrowfeat skew --serving-time served_at --time-tolerance 1m
  --absolute-tolerance 1e-9 --format json`. `duckdb`: the serving log ASOF LEFT JOINed
  with the training table (the latest event at or before the serving time), the match
  kept when that event is at most the tolerance older; mismatches per feature with
  arrowfeat's semantics (null equals null, NaN equals NaN, floats within the absolute
  tolerance, the rest exactly); extra = training rows minus the distinct (key, event
  time) matched, which identifies a training row because this data has no ties.

Timing and memory as in bench_data_gate.py: the best of --repeat runs (default 3);
arrowfeat's time is the whole process, the Python contenders' from before reading the
files to the figures (interpreter start and imports excluded; "process" includes them).
A run past --timeout seconds (default 900) is killed; a run over SLOW_RUN seconds is not
repeated. Peak memory is the maximum RSS (wait4, from a small launcher process), also
divided by the data's decompressed size (the Arrow buffers of both files).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_data_gate as gate  # the harness (standard library only)

ROOT = gate.ROOT
EVIDENTLY_PYTHON = Path("/tmp/evidentlyvenv/bin/python")
CACHE = Path("/tmp/bench_drift_skew")
GENERATOR_VERSION = 1
SEED = 20260201
DRIFT = ["arrowfeat-drift", "arrowfeat-profile", "numpy", "evidently"]
SKEW = ["arrowfeat-skew", "duckdb"]
CONTENDERS = DRIFT + SKEW

US = 1_000_000
DAY_US = 86_400 * US
START_US = 1_759_276_800 * US  # 2025-10-01T00:00:00Z
DISTINCT_KEYS = 1_000_000
ZIPF_A = 1.2
KEY, EVENT, SERVING_TIME = "user_id", "event_ts", "served_at"
TIME_TOLERANCE, TIME_TOLERANCE_US = "1m", 60 * US
ABSOLUTE_TOLERANCE = 1e-9
MAX_DELAY_US = 90 * US
SERVING_SHARE = 10  # one training row in ten is served
UNKNOWN_KEY_RATE = 5e-3
PERTURB_RATE = 2e-3  # per kind of perturbation and feature
BOUNDARY_RATE = 1e-3  # serving rows exactly the tolerance after their event, or 1 us more
RELATIVE = 1e-9  # the cross-check's relative tolerance
ABSOLUTE = 1e-12  # ... and absolute, for figures that are 0
ECDF_POINTS = 2_000  # a saved profile's KS D is within 1/ECDF_POINTS

CHANNELS = ["web", "ios", "android", "pos"]
COUNTRIES = ["US", "GB", "FR", "DE", "JP", "BR", "IN", "MX"]
DEVICES = [f"device_{i:02d}" for i in range(50)]

# (name, schema type, drift kind); the drift view has the key and event time besides.
DRIFT_FEATURES: list[tuple[str, str, str]] = [
    ("amount", "float64", "numeric"),
    ("rate", "float64", "numeric"),
    ("score", "float64", "numeric"),
    ("lat", "float64", "numeric"),
    ("lon", "float64", "numeric"),
    ("ctr", "float64", "numeric"),
    ("temperature", "float64", "numeric"),
    ("balance", "float64", "numeric"),
    ("count_7d", "int64", "numeric"),
    ("age", "int64", "numeric"),
    ("items", "int64", "numeric"),
    ("tenure_days", "int64", "numeric"),
    ("last_login_ts", "timestamp[us, UTC]", "numeric"),
    ("tier", "int32", "categorical"),  # allowed_values: categorical
    ("channel", "string", "categorical"),
    ("country", "string", "categorical"),
    ("device", "string", "categorical"),
    ("is_premium", "bool", "categorical"),
]
SKEW_FEATURES: list[tuple[str, str]] = [
    ("amount", "float64"),
    ("rate", "float64"),
    ("score", "float64"),
    ("lat", "float64"),
    ("count_7d", "int64"),
    ("items", "int64"),
    ("channel", "string"),
    ("country", "string"),
]
# arrowfeat's drift rules and the names of their figures here.
METRICS = {
    "drift-psi": "psi",
    "drift-jensen-shannon": "js",
    "drift-ks": "ks",
    "drift-categories": "categories",
    "drift-null-rate": "null_rate",
}


# ---------------------------------------------------------------------------------------
# The schemas.


def schema_yaml(name: str, features: list[tuple[str, str]]) -> str:
    lines = [
        "# Generated by python/benchmarks/bench_drift_skew.py.",
        f"name: {name}",
        "schema_version: 1.0.0",
        "owner: bench@example.com",
        "entities:",
        "  - name: user",
        f"    join_key: {KEY}",
        "    type: int64",
        "event_timestamp:",
        f"  name: {EVENT}",
        "  type: timestamp",
        "  unit: us",
        "  tz: UTC",
        "features:",
    ]
    for feature, type_name in features:
        lines += [f"  - name: {feature}", f"    type: {type_name}"]
        if feature == "tier":
            lines.append("    constraints: {allowed_values: [1, 2, 3]}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# The data.


def zipf_keys(rng: Any, n: int) -> Any:
    import numpy as np

    return ((rng.zipf(ZIPF_A, n) - 1) % DISTINCT_KEYS).astype(np.int64)


def strings(codes: Any, values: list[str], mask: Any) -> Any:
    import pyarrow as pa

    indices = pa.array(codes.astype("int32"), pa.int32(), mask=mask)
    return pa.DictionaryArray.from_arrays(indices, pa.array(values, pa.string())).cast(pa.string())


def drift_table(rng: Any, n: int, drifted: bool) -> Any:
    """One side of the drift data: the reference (`drifted` false) or the current."""
    import numpy as np
    import pyarrow as pa

    d = drifted

    def share(rate: float) -> Any:
        return rng.random(n) < rate

    def shares(k: int, power: float) -> Any:
        w = 1.0 / np.arange(1, k + 1) ** power
        return w / w.sum()

    start = START_US + (7 * DAY_US if d else 0)
    event = start + rng.integers(0, 7 * DAY_US, n)
    amount = rng.lognormal(3.0, 1.0, n)
    if d:
        amount[share(1 / 3)] *= 1.15
    score = rng.normal(0.3 if d else 0.0, 1.0, n)
    score[share(0.03 if d else 0.005)] = np.nan
    lon = rng.uniform(-180.0, 180.0, n)
    if d:
        lon[share(0.04)] = np.nan
    balance = rng.standard_t(3, n) * (1200.0 if d else 1000.0)
    infinite = np.flatnonzero(share(1e-5))
    balance[infinite] = np.where(rng.random(len(infinite)) < 0.5, np.inf, -np.inf)
    floats = {
        "amount": (amount, share(0.01)),
        "rate": (rng.beta(2.0, 5.0, n), None),
        "score": (score, None),
        "lat": (rng.uniform(-90.0, 90.0, n), None),
        "lon": (lon, share(0.04 if d else 0.01)),
        "ctr": (rng.beta(1.0, 30.0, n) * (1.05 if d else 1.0), None),
        "temperature": (np.round(rng.normal(17.0 if d else 15.0, 10.0, n), 1), None),
        "balance": (balance, None),
    }
    ints = {
        "count_7d": (rng.poisson(3.5 if d else 3.0, n), None),
        "age": (rng.integers(13, 91, n), share(0.005)),
        "items": (rng.geometric(0.3, n), None),
        "tenure_days": (rng.integers(0, 3301 if d else 3651, n), None),
    }
    last_login = event - (rng.exponential((4.0 if d else 3.0) * DAY_US, n)).astype(np.int64)
    channels = CHANNELS + (["kiosk"] if d else [])
    channel_p = [0.5, 0.25, 0.2, 0.05] if not d else [0.45, 0.25, 0.2, 0.08, 0.02]

    arrays: dict[str, Any] = {
        KEY: pa.array(zipf_keys(rng, n), pa.int64()),
        EVENT: pa.array(event, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
    }
    for name, (values, mask) in floats.items():
        arrays[name] = pa.array(values, pa.float64(), mask=mask)
    for name, (values, mask) in ints.items():
        arrays[name] = pa.array(values, pa.int64(), mask=mask)
    arrays["last_login_ts"] = pa.array(last_login, pa.int64(), mask=share(0.02)).cast(pa.timestamp("us", tz="UTC"))
    tier = rng.choice(3, n, p=[0.5, 0.35, 0.15] if d else [0.6, 0.3, 0.1]) + 1
    arrays["tier"] = pa.array(tier, pa.int32())
    arrays["channel"] = strings(rng.choice(len(channels), n, p=channel_p), channels, None)
    arrays["country"] = strings(rng.choice(8, n, p=shares(8, 0.8 if d else 1.0)), COUNTRIES, share(0.01))
    arrays["device"] = strings(rng.choice(50, n, p=shares(50, 1.0)), DEVICES, share(0.06 if d else 0.01))
    arrays["is_premium"] = pa.array(rng.random(n) < (0.25 if d else 0.2), pa.bool_(), mask=share(0.005))
    return pa.table(arrays)


def skew_tables(rng: Any, n: int) -> tuple[Any, Any]:
    """The training table and the serving log."""
    import numpy as np
    import pyarrow as pa

    key = zipf_keys(rng, n)
    event = START_US + rng.integers(0, 92 * DAY_US, n)
    # No key with two events at the same microsecond (arrowfeat would break the tie by
    # the values; a plain ASOF JOIN picks either): move the later ones on by 1 us.
    order = np.lexsort((event, key))
    k, e = key[order], event[order]
    while True:
        clash = np.flatnonzero((k[1:] == k[:-1]) & (e[1:] <= e[:-1])) + 1
        if not len(clash):
            break
        e[clash] = e[clash - 1] + 1
    event[order] = e

    def share(count: int, rate: float) -> Any:
        return rng.random(count) < rate

    amount = rng.lognormal(3.0, 1.0, n)
    amount[share(n, 1e-4)] = np.inf
    rate = rng.beta(2.0, 5.0, n)
    rate[share(n, 0.01)] = np.nan
    values: dict[str, Any] = {
        "amount": amount,
        "rate": rate,
        "score": rng.normal(0.0, 1.0, n),
        "lat": rng.uniform(-90.0, 90.0, n),
        "count_7d": rng.poisson(3.0, n),
        "items": rng.geometric(0.3, n),
        "channel": rng.choice(len(CHANNELS), n, p=[0.5, 0.25, 0.2, 0.05]),
        "country": rng.choice(len(COUNTRIES), n),
    }
    nulls = {name: np.zeros(n, dtype=bool) for name in values}
    for name in ("score", "items", "country"):
        nulls[name] = share(n, 0.01)

    # The serving log: a sample of the rows, served up to 90 s after the event.
    s = n // SERVING_SHARE
    picked = np.sort(rng.choice(n, s, replace=False))
    served_key = key[picked].copy()
    unknown = share(s, UNKNOWN_KEY_RATE)
    served_key[unknown] = DISTINCT_KEYS + rng.integers(0, 10_000, int(unknown.sum()))
    delay = rng.integers(0, MAX_DELAY_US + 1, s)
    delay[share(s, BOUNDARY_RATE)] = TIME_TOLERANCE_US  # still matches: [t - tolerance, t]
    delay[share(s, BOUNDARY_RATE)] = TIME_TOLERANCE_US + 1  # one microsecond too late
    served_at = event[picked] + delay
    served = {name: v[picked].copy() for name, v in values.items()}
    served_nulls = {name: m[picked].copy() for name, m in nulls.items()}
    for name, type_name in SKEW_FEATURES:
        v, m = served[name], served_nulls[name]
        m[share(s, PERTURB_RATE)] = True
        if type_name == "float64":
            v[share(s, PERTURB_RATE)] += 1e-6  # differs
            v[share(s, PERTURB_RATE)] += 1e-12  # within the tolerance
            v[share(s, PERTURB_RATE)] = np.nan
        elif type_name == "int64":
            v[share(s, PERTURB_RATE)] += 1
        else:
            changed = share(s, PERTURB_RATE)
            v[changed] = (v[changed] + 1) % (len(CHANNELS) if name == "channel" else len(COUNTRIES))
    log_order = np.argsort(served_at, kind="stable")  # a log in serving order

    def columns(vals: dict[str, Any], masks: dict[str, Any], rows: Any) -> dict[str, Any]:
        out = {}
        for name, type_name in SKEW_FEATURES:
            v, m = vals[name][rows], masks[name][rows]
            if type_name == "string":
                out[name] = strings(v, CHANNELS if name == "channel" else COUNTRIES, m)
            else:
                out[name] = pa.array(v, pa.float64() if type_name == "float64" else pa.int64(), mask=m)
        return out

    ts = pa.timestamp("us", tz="UTC")
    every = np.arange(n)
    training = pa.table(
        {KEY: pa.array(key, pa.int64()), EVENT: pa.array(event, pa.int64()).cast(ts)} | columns(values, nulls, every)
    )
    serving = pa.table(
        {
            KEY: pa.array(served_key[log_order], pa.int64()),
            SERVING_TIME: pa.array(served_at[log_order], pa.int64()).cast(ts),
        }
        | columns(served, served_nulls, log_order)
    )
    return training, serving


def generate_main(task: str, rows: int, directory: Path) -> None:
    """Writes the task's files and their metadata (rows, decompressed and file sizes)."""
    import numpy as np
    import pyarrow.parquet as pq

    rng = np.random.default_rng([SEED, rows, 0 if task == "drift" else 1])
    if task == "drift":
        tables = {"reference": drift_table(rng, rows, False), "current": drift_table(rng, rows, True)}
    else:
        training, serving = skew_tables(rng, rows)
        tables = {"training": training, "serving": serving}
    meta: dict[str, Any] = {"decompressed_bytes": 0, "file_bytes": 0}
    for side, table in tables.items():
        path = directory / f"{side}.parquet"
        pq.write_table(table, path.with_suffix(".tmp"))
        path.with_suffix(".tmp").rename(path)
        meta[f"{side}_rows"] = table.num_rows
        meta["decompressed_bytes"] += pq.read_table(path).nbytes
        meta["file_bytes"] += path.stat().st_size
    (directory / "meta.json").write_text(json.dumps(meta))


def prepare(task: str, rows: int) -> tuple[Path, Path, dict[str, Any]]:
    """The cached data directory, the schema and the metadata of `task` at `rows`."""
    directory = CACHE / f"{task}_v{GENERATOR_VERSION}_{rows}"
    directory.mkdir(parents=True, exist_ok=True)
    schema = directory / "schema.yaml"
    if task == "drift":
        schema.write_text(schema_yaml("bench_drift_v1", [(n, t) for n, t, _ in DRIFT_FEATURES]))
    else:
        schema.write_text(schema_yaml("bench_skew_v1", SKEW_FEATURES))
    if not (directory / "meta.json").exists():
        print(f"generating the {task} data ({rows:,} rows) into {directory} ...", flush=True)
        started = time.perf_counter()
        command = [sys.executable, str(Path(__file__).resolve()), "--rows", str(rows)]
        subprocess.run([*command, "--generate", task, "--generate-into", str(directory)], check=True)
        print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    return directory, schema, json.loads((directory / "meta.json").read_text())


# ---------------------------------------------------------------------------------------
# Workers: each runs in its own process and prints {"seconds", "stats", "versions",
# "extra"}; `seconds` runs from before reading the data to the figures.


def reference_metrics(p: Any, q: Any) -> dict[str, float]:
    """PSI and the Jensen-Shannon distance of two share vectors (python/tests/test_drift.py)."""
    import numpy as np
    from scipy.spatial.distance import jensenshannon

    ps = np.where(p == 0, 1e-4, p)
    qs = np.where(q == 0, 1e-4, q)
    return {"psi": float(np.sum((qs - ps) * np.log(qs / ps))), "js": float(jensenshannon(p, q, base=2))}


def numpy_numeric(ref: Any, cur: Any) -> dict[str, float]:
    """Numeric metrics without NaN (python/tests/test_drift.py's `numpy_numeric`)."""
    import numpy as np
    from scipy.stats import ks_2samp

    edges = np.quantile(ref, np.arange(1, 10) / 10)
    p = np.bincount(np.searchsorted(edges, ref, side="right"), minlength=10) / len(ref)
    q = np.bincount(np.searchsorted(edges, cur, side="right"), minlength=10) / len(cur)
    return reference_metrics(p, q) | {"ks": float(ks_2samp(ref, cur).statistic)}


def numpy_categorical(ref: dict[Any, int], cur: dict[Any, int]) -> dict[str, float]:
    """Categorical metrics from counts: the reference's categories and one "new" category
    (python/tests/test_drift.py's `numpy_categorical`, from value counts)."""
    import numpy as np

    categories = list(ref)
    n_ref, n_cur = sum(ref.values()), sum(cur.values())
    seen = [cur.get(c, 0) for c in categories]
    p = np.array([ref[c] for c in categories] + [0]) / n_ref
    q = np.array([*seen, n_cur - sum(seen)]) / n_cur
    return reference_metrics(p, q) | {"categories": float(np.max(np.abs(p - q)))}


def worker_numpy(spec: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import scipy

    def as_float(column: Any) -> Any:
        """float64, null as NaN; timestamps as their integer, as scipy converts them."""
        if pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        return pc.fill_null(column.cast(pa.float64(), safe=False), math.nan).to_numpy()

    def counts(column: Any) -> dict[Any, int]:
        found = column.value_counts()
        pairs = zip(found.field("values").to_pylist(), found.field("counts").to_pylist(), strict=True)
        return {v: c for v, c in pairs if v is not None}

    started = time.perf_counter()
    names = [f["name"] for f in spec["features"]]
    ref_table, cur_table = (pq.read_table(spec[side], columns=names) for side in ("reference", "current"))
    stats: dict[str, float] = {}
    for f in spec["features"]:
        name = f["name"]
        ref_col, cur_col = ref_table.column(name), cur_table.column(name)
        if f["kind"] == "numeric":
            ref, cur = as_float(ref_col), as_float(cur_col)
            ref_nan, cur_nan = np.isnan(ref), np.isnan(cur)
            missing = (int(ref_nan.sum()), int(cur_nan.sum()))
            ref, cur = ref[~ref_nan], cur[~cur_nan]
            metrics, n = numpy_numeric(ref, cur), (len(ref), len(cur))
        else:
            ref_counts, cur_counts = counts(ref_col), counts(cur_col)
            missing = (ref_col.null_count, cur_col.null_count)
            metrics = numpy_categorical(ref_counts, cur_counts)
            n = (sum(ref_counts.values()), sum(cur_counts.values()))
        metrics["null_rate"] = missing[1] / len(cur_col) - missing[0] / len(ref_col)
        stats |= {f"{metric}:{name}": value for metric, value in metrics.items()}
        stats[f"n_reference:{name}"], stats[f"n_current:{name}"] = n
    seconds = time.perf_counter() - started
    versions = {"numpy": np.__version__, "scipy": scipy.__version__, "pyarrow": pa.__version__}
    return {"seconds": seconds, "stats": stats, "versions": versions}


def worker_evidently(spec: dict[str, Any]) -> dict[str, Any]:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from evidently import DataDefinition, Dataset, Report
    from evidently import __version__ as evidently_version
    from evidently.metrics import ValueDrift

    numeric = [f["name"] for f in spec["features"] if f["kind"] == "numeric"]
    categorical = [f["name"] for f in spec["features"] if f["kind"] == "categorical"]
    methods = {"numeric": ["psi", "jensenshannon", "ks"], "categorical": ["psi", "jensenshannon"]}

    started = time.perf_counter()
    frames = []
    for side in ("reference", "current"):
        table = pq.read_table(spec[side], columns=numeric + categorical)
        for i, column in enumerate(table.columns):
            if pa.types.is_timestamp(column.type):  # Evidently compares no datetimes
                table = table.set_column(i, table.field(i).name, column.cast(pa.int64()))
        frames.append(table.to_pandas())
    definition = DataDefinition(numerical_columns=numeric, categorical_columns=categorical)
    reference, current = (Dataset.from_pandas(df, data_definition=definition) for df in frames)
    metrics = [ValueDrift(column=c, method=m) for c in numeric for m in methods["numeric"]]
    metrics += [ValueDrift(column=c, method=m) for c in categorical for m in methods["categorical"]]
    snapshot = Report(metrics).run(current_data=current, reference_data=reference)
    stats: dict[str, float] = {}
    for metric in snapshot.dict()["metrics"]:
        config = metric["config"]
        stats[f"evidently_{config['method']}:{config['column']}"] = float(metric["value"])
    seconds = time.perf_counter() - started

    # Untimed: the categorical features where Evidently's definitions give arrowfeat's
    # bins: no category gone, at most one new one (arrowfeat merges the new ones into one
    # bin), and every reference share above 1e-4 (else Evidently fills the new one's
    # empty reference bin with a millionth of the smallest share, not 1e-4).
    same = []
    for c in categorical:
        ref_shares = frames[0][c].value_counts(normalize=True)
        ref, cur = set(ref_shares.index), set(frames[1][c].dropna().unique())
        if ref <= cur and len(cur - ref) <= 1 and ref_shares.min() > 1e-4:
            same.append(c)
    versions = {"evidently": evidently_version, "pandas": pd.__version__}
    return {"seconds": seconds, "stats": stats, "versions": versions, "extra": {"comparable": same}}


def skew_query(spec: dict[str, Any], serving: str, training: str) -> str:
    """The counts of `arrowfeat skew` as one DuckDB query."""
    q, lit = gate.sql_ident, gate.sql_literal
    key, event, served_at = q(spec["key"]), q(spec["event"]), q(spec["serving_time"])
    trained = ", ".join(f"t.{q(f)} AS {q('#t ' + f)}" for f, _ in spec["features"])
    counts = []
    for f, type_name in spec["features"]:
        a, b = q(f), q("#t " + f)
        # DuckDB: NaN = NaN, -0.0 = 0.0, NULL IS NOT DISTINCT FROM NULL, and NaN > x for
        # every x (so abs(NaN - x) <= tol is false).
        differs = f"{a} IS DISTINCT FROM {b}"
        if type_name.startswith("float"):
            differs += f" AND NOT coalesce(abs({a} - {b}) <= {spec['absolute_tolerance']!r}, false)"
        counts.append(f"count(*) FILTER (WHERE matched AND {differs}) AS {q('mismatch:' + f)}")
    return f"""
        WITH joined AS (
            SELECT s.*, t.{event} AS "#t event", {trained}
            FROM read_parquet({lit(serving)}) s
            ASOF LEFT JOIN read_parquet({lit(training)}) t ON s.{key} = t.{key} AND s.{served_at} >= t.{event}
        ), m AS (
            SELECT *, coalesce("#t event" >= {served_at} - to_microseconds({spec["tolerance_us"]}), false) AS matched
            FROM joined
        )
        SELECT
            (SELECT count(*) FROM read_parquet({lit(training)})) AS training_rows,
            (SELECT count(*) FROM (SELECT DISTINCT {key}, "#t event" FROM m WHERE matched)) AS used,
            count(*) AS serving_rows,
            count(*) FILTER (WHERE NOT matched) AS missing,
            count(*) FILTER (WHERE matched) AS matched,
            {", ".join(counts)}
        FROM m
    """


def worker_duckdb(spec: dict[str, Any]) -> dict[str, Any]:
    import duckdb

    started = time.perf_counter()
    con = duckdb.connect()
    cursor = con.execute(skew_query(spec, spec["serving"], spec["training"]))
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    assert row is not None
    stats = {name: int(v) for name, v in zip(names, row, strict=True)}
    stats["extra"] = stats["training_rows"] - stats.pop("used")
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "stats": stats, "versions": {"duckdb": duckdb.__version__}}


WORKERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "numpy": worker_numpy,
    "evidently": worker_evidently,
    "duckdb": worker_duckdb,
}


def worker_main(name: str, spec_path: str) -> None:
    answer = WORKERS[name](json.loads(Path(spec_path).read_text()))
    print(json.dumps(answer))


# ---------------------------------------------------------------------------------------
# arrowfeat's reports as figures.

FEATURE = re.compile(r"feature `([^`]*)`")
SIZES = re.compile(r"reference n=(\d+), current n=(\d+)")


def refused(check: dict[str, Any]) -> None:
    if check["rule"].startswith(("data-", "drift-reference")) and check["status"] != "pass":
        raise SystemExit(f"arrowfeat: {check['subject']}: {check['message']}")


def drift_stats(report: dict[str, Any]) -> dict[str, float]:
    stats: dict[str, float] = {}
    for file in report["files"]:
        for check in file["checks"]:
            refused(check)
            metric = METRICS.get(check["rule"])
            feature = FEATURE.search(check["subject"])
            if metric is None or feature is None:
                continue
            name = feature.group(1)
            stats[f"{metric}:{name}"] = float(check["actual"].split(" ")[0])
            sizes = SIZES.search(check["actual"])
            if sizes:
                stats[f"n_reference:{name}"], stats[f"n_current:{name}"] = int(sizes[1]), int(sizes[2])
    return stats


def skew_stats(report: dict[str, Any]) -> dict[str, float]:
    stats: dict[str, float] = {}
    for file in report["files"]:
        for check in file["checks"]:
            refused(check)
            rule, actual = check["rule"], check["actual"]
            count, _, whole = actual.removesuffix(" differ").partition(" of ")
            if rule == "skew-missing":
                stats["missing"], stats["serving_rows"] = int(count), int(whole)
            elif rule == "skew-extra":
                stats["extra"], stats["training_rows"] = int(count), int(whole)
            elif rule == "skew-mismatch":
                feature = FEATURE.search(check["subject"])
                assert feature is not None, check
                stats[f"mismatch:{feature.group(1)}"], stats["matched"] = int(count), int(whole)
    return stats


# ---------------------------------------------------------------------------------------
# The harness.


@dataclass
class Task:
    name: str  # drift or skew
    directory: Path
    schema: Path
    meta: dict[str, Any]
    spec: Path  # the workers' description of the data
    profile: Path | None = None  # drift: the saved reference profile


def arrowfeat_argv(name: str, args: argparse.Namespace, task: Task) -> list[str]:
    d, common = task.directory, ["--schemas", str(task.schema), "--format", "json", "--no-baseline"]
    if name == "arrowfeat-drift":
        return [
            str(args.binary),
            "drift",
            *common,
            "--reference",
            str(d / "reference.parquet"),
            "--current",
            str(d / "current.parquet"),
        ]
    if name == "arrowfeat-profile":
        return [
            str(args.binary),
            "drift",
            *common,
            "--reference-profile",
            str(task.profile),
            "--current",
            str(d / "current.parquet"),
        ]
    if name == "arrowfeat-save":
        return [
            str(args.binary),
            "drift",
            *common,
            "--reference",
            str(d / "reference.parquet"),
            "--save-reference",
            str(task.profile),
        ]
    assert name == "arrowfeat-skew"
    return [
        str(args.binary),
        "skew",
        *common,
        "--serving",
        str(d / "serving.parquet"),
        "--training",
        str(d / "training.parquet"),
        "--serving-time",
        SERVING_TIME,
        "--time-tolerance",
        TIME_TOLERANCE,
        "--absolute-tolerance",
        repr(ABSOLUTE_TOLERANCE),
    ]


def measure(name: str, args: argparse.Namespace, task: Task, repeat: int, timeout: float | None = None) -> gate.Result:
    if name.startswith("arrowfeat"):
        argv = arrowfeat_argv(name, args, task)
    else:
        python = args.evidently_python if name == "evidently" else args.main_python
        argv = [str(python), str(Path(__file__).resolve()), "--worker", name, "--spec", str(task.spec)]
    env = dict(os.environ, DO_NOT_TRACK="1")
    stats = skew_stats if task.name == "skew" else drift_stats
    return gate.run_contender(name, argv, env, args, repeat, timeout, stats)


def comparable(result: gate.Result) -> dict[str, float]:
    """The figures of `result` that share arrowfeat's definitions, under its names."""
    if result.name != "evidently":
        return result.stats
    out = {}
    for feature in result.extra.get("comparable", []):
        out[f"psi:{feature}"] = result.stats[f"evidently_psi:{feature}"]
        # Evidently's distance is in natural log: the divergence is ln 2 times base 2's.
        out[f"js:{feature}"] = result.stats[f"evidently_jensenshannon:{feature}"] / math.sqrt(math.log(2))
    return out


def compare(result: gate.Result, reference: dict[str, float]) -> tuple[int, list[str], float, float]:
    """(figures compared, disagreements, the largest relative difference of the metrics,
    the largest absolute difference of a saved profile's KS D)."""
    compared, wrong, worst, ks_gap = 0, [], 0.0, 0.0
    for stat, value in sorted(comparable(result).items()):
        want = reference.get(stat)
        if want is None:
            wrong.append(f"{stat}: {value!r} (arrowfeat has none)")
            continue
        compared += 1
        difference = abs(value - want)
        if result.name == "arrowfeat-profile" and stat.startswith("ks:"):
            ks_gap = max(ks_gap, difference)
            ok = difference <= 1 / ECDF_POINTS + ABSOLUTE  # a saved profile's D: within 1/2000
        else:
            if stat.split(":")[0] in METRICS.values():
                worst = max(worst, difference / abs(want) if want else difference)
            ok = math.isclose(value, want, rel_tol=RELATIVE, abs_tol=ABSOLUTE)
        if not ok:
            wrong.append(f"{stat}: {value!r}, arrowfeat {want!r}")
    return compared, wrong, worst, ks_gap


def fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def print_drift_figures(reference: dict[str, float], evidently: gate.Result | None) -> None:
    """arrowfeat's figures per feature, with Evidently's beside them (other definitions)."""
    ev = evidently.stats if evidently else {}
    print("\narrowfeat's drift figures (and Evidently's, by its own definitions; `=` where cross-checked):\n")
    print(
        "| feature | kind | PSI | Evidently PSI | JS distance | Evidently JS (ln) | KS D | Evidently KS p | categories | null-rate change |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    same = set(evidently.extra.get("comparable", [])) if evidently else set()
    for name, _, kind in DRIFT_FEATURES:
        mark = " =" if name in same else ""

        def get(stats: dict[str, float], key: str, name: str = name) -> float | None:
            return stats.get(f"{key}:{name}")

        cells = [
            fmt(get(reference, "psi")),
            fmt(get(ev, "evidently_psi")) + mark,
            fmt(get(reference, "js")),
            fmt(get(ev, "evidently_jensenshannon")) + mark,
            fmt(get(reference, "ks")),
            fmt(get(ev, "evidently_ks")),
            fmt(get(reference, "categories")),
            fmt(get(reference, "null_rate")),
        ]
        print(f"| {name} | {kind} | " + " | ".join(cells) + " |")


def print_skew_counts(shown: list[gate.Result], reference: dict[str, float]) -> None:
    print("\nSkew counts (reference: arrowfeat's report):\n")
    print("| statistic | arrowfeat | " + " | ".join(r.name for r in shown) + " |")
    print("|---|---:|" + "---:|" * len(shown))
    order = ["serving_rows", "training_rows", "matched", "missing", "extra"]
    for stat in sorted(reference, key=lambda k: (order.index(k) if k in order else len(order), k)):
        cells = []
        for r in shown:
            value = r.stats.get(stat)
            cells.append("" if value is None else f"{value:,}{'' if value == reference[stat] else ' *'}")
        print(f"| {stat} | {reference[stat]:,} | " + " | ".join(cells) + " |")


def print_table(
    title: str,
    results: list[gate.Result],
    base: str,
    agreement: dict[str, str],
    meta: dict[str, Any],
    args: argparse.Namespace,
) -> None:
    by_name = {r.name: r for r in results}
    base_seconds = by_name[base].seconds if base in by_name else None
    print(f"\n## {title}\n")
    print("| contender | versions | time | vs arrowfeat | process | peak RSS | RSS / data | cross-check |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        if r.timed_out:
            time_text, ratio = f"> {args.timeout:.0f} s", ""
        elif r.seconds is None:
            time_text, ratio = f"error ({r.error})", ""
        else:
            time_text = f"{r.seconds:.3f} s"
            ratio = f"{r.seconds / base_seconds:.2f}x" if base_seconds else ""
        process = "" if r.process is None else f"{r.process:.3f} s"
        rss = gate.human_bytes(r.max_rss) if r.max_rss else ""
        share = f"{r.max_rss / meta['decompressed_bytes']:.2f}" if r.max_rss else ""
        versions = ", ".join(f"{k} {v}" for k, v in r.versions.items())
        print(
            f"| {r.name} | {versions} | {time_text} | {ratio} | {process} | {rss} | {share} | {agreement.get(r.name, '')} |"
        )


def run_task(task: Task, names: list[str], args: argparse.Namespace) -> bool:
    """Measures `names` on `task`, prints the tables; false when a cross-check failed."""
    base = "arrowfeat-drift" if task.name == "drift" else "arrowfeat-skew"
    if task.profile is not None and "arrowfeat-profile" in names:
        saved = measure("arrowfeat-save", args, task, 1)
        if saved.seconds is None or not task.profile.exists():
            raise SystemExit(f"arrowfeat drift --save-reference failed: {saved.error or 'timeout'}")
        print(
            f"saved the reference profile ({gate.human_bytes(task.profile.stat().st_size)}) in {saved.seconds:.3f} s, peak RSS {gate.human_bytes(saved.max_rss)} (untimed setup)",
            flush=True,
        )
    results: list[gate.Result] = []
    for name in names:
        print(f"running {name} ...", flush=True)
        results.append(measure(name, args, task, args.repeat))
        r = results[-1]
        print(f"  {'> timeout' if r.timed_out else r.error or f'{r.seconds:.3f} s'}", flush=True)

    by_name = {r.name: r for r in results}
    arrowfeat = by_name.get(base)
    if arrowfeat is None or not arrowfeat.stats:
        arrowfeat = measure(base, args, task, 1, gate.REFERENCE_TIMEOUT)
    if not arrowfeat.stats:
        raise SystemExit(f"{base} gave no report: {arrowfeat.error or 'timeout'}")
    reference = arrowfeat.stats

    failed = False
    agreement: dict[str, str] = {}
    for r in results:
        if r.name == base:
            agreement[r.name] = "the reference"
            continue
        if not r.stats:
            continue
        compared, wrong, worst, ks_gap = compare(r, reference)
        note = f"; largest relative difference {worst:.1e}" if task.name == "drift" and compared else ""
        if r.name == "arrowfeat-profile":
            note += f"; KS D within {ks_gap:.1e} (bound 1/{ECDF_POINTS})"
        if r.name == "evidently":
            note += " (categorical PSI and JS where the bins match, `=` above)"
        agreement[r.name] = f"{compared - len(wrong)}/{compared} agree{note}"
        if wrong:
            failed = True
            print(f"\n{r.name}: {len(wrong)} figure(s) disagree with arrowfeat's:")
            for w in wrong:
                print(f"  {w}")

    meta, cores = task.meta, os.cpu_count() or 1
    size = gate.human_bytes(meta["decompressed_bytes"])
    if task.name == "drift":
        print_drift_figures(reference, by_name.get("evidently"))
        title = f"Drift, {meta['reference_rows']:,} + {meta['current_rows']:,} rows x 20 columns ({size} decompressed), best of {args.repeat}, {cores} cores"
    else:
        print_skew_counts([r for r in results if r.name != base and r.stats], reference)
        title = f"Skew, {meta['training_rows']:,} training and {meta['serving_rows']:,} serving rows ({size} decompressed), best of {args.repeat}, {cores} cores"
    print_table(title, results, base, agreement, meta, args)
    return not failed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows per drift file and training rows")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a run may take (default 900)")
    parser.add_argument(
        "--only",
        default=",".join(CONTENDERS),
        help=f"comma-separated subset of {', '.join(CONTENDERS)}, or drift, skew",
    )
    parser.add_argument(
        "--binary", type=Path, default=None, help="arrowfeat binary (default: target/release, else target/debug)"
    )
    parser.add_argument("--main-python", type=Path, default=gate.MAIN_PYTHON)
    parser.add_argument("--evidently-python", type=Path, default=EVIDENTLY_PYTHON, help="the venv with Evidently")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--generate", choices=["drift", "skew"], help=argparse.SUPPRESS)
    parser.add_argument("--generate-into", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate_main(args.generate, args.rows, args.generate_into)
        return
    if args.worker:
        worker_main(args.worker, args.spec)
        return

    only: list[str] = []
    for n in (n.strip() for n in args.only.split(",")):
        for name in {"drift": DRIFT, "skew": SKEW}.get(n, [n] if n else []):
            if name not in only:
                only.append(name)
    unknown = [n for n in only if n not in CONTENDERS]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)}; expected some of {', '.join(CONTENDERS)}, drift, skew")
    if args.binary is None:
        release, debug = ROOT / "target" / "release" / "arrowfeat", ROOT / "target" / "debug" / "arrowfeat"
        args.binary = release if release.exists() else debug
    if not args.binary.exists():
        raise SystemExit(f"no arrowfeat binary at {args.binary}: build it, or pass --binary")
    version = subprocess.run([str(args.binary), "--version"], capture_output=True, text=True, check=True)
    args.binary_version = version.stdout.strip().removeprefix("arrowfeat ")
    debug_build = "debug" in args.binary.parts
    if "evidently" in only and not args.evidently_python.exists():
        raise SystemExit(
            f"no {args.evidently_python}: create the Evidently venv (see the top of this file) or pass --evidently-python"
        )
    print(f"arrowfeat: {args.binary}{' (DEBUG BUILD: timings not representative)' if debug_build else ''}")
    print(f"{os.cpu_count() or 1} cores; best of {args.repeat}; timeout {args.timeout:.0f} s")

    ok = True
    for task_name, names in (("drift", [n for n in only if n in DRIFT]), ("skew", [n for n in only if n in SKEW])):
        if not names:
            continue
        directory, schema, meta = prepare(task_name, args.rows)
        files = ", ".join(f"{p.name} {gate.human_bytes(p.stat().st_size)}" for p in sorted(directory.glob("*.parquet")))
        print(f"\n{task_name} data: {directory} ({files}; {gate.human_bytes(meta['decompressed_bytes'])} decompressed)")
        spec: dict[str, Any] = {
            side: str(directory / f"{side}.parquet") for side in ("reference", "current", "serving", "training")
        }
        if task_name == "drift":
            spec["features"] = [{"name": n, "type": t, "kind": k} for n, t, k in DRIFT_FEATURES]
        else:
            spec |= {
                "key": KEY,
                "event": EVENT,
                "serving_time": SERVING_TIME,
                "tolerance_us": TIME_TOLERANCE_US,
                "absolute_tolerance": ABSOLUTE_TOLERANCE,
                "features": SKEW_FEATURES,
            }
        spec_path = directory / "spec.json"
        spec_path.write_text(json.dumps(spec, indent=1))
        profile = directory / "reference-profile.json" if task_name == "drift" else None
        ok = run_task(Task(task_name, directory, schema, meta, spec_path, profile), names, args) and ok
    if debug_build:
        print("\n(arrowfeat is a debug build: its time and the ratios are not representative)")
    if not ok:
        raise SystemExit("figures disagree: see above")


if __name__ == "__main__":
    main()
