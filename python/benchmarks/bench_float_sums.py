"""Float window sums on one build: rolling_sum (float64 and int64) and the dense hop,
best of 5 calls each. Run it with two builds of the extension, alternately, to compare
them side by side (docs/benchmarks.md, "Correctly rounded float window sums")."""

import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import arrowfeat as af

sys.path.insert(0, str(Path(__file__).parent))
import bench_windows as bw

N = 10_000_000


def main() -> None:
    table = bw.event_log(N, bw.KEYS)
    dense = bw.dense_log(N)
    ints = pa.array((np.asarray(table["value"]) * 100).astype(np.int64))
    cases = {
        "rolling_sum f64 1 thread": lambda: af.rolling_sum(
            table["value"], table["ts"], "5m", by=table["key"], threads=1
        ),
        "rolling_sum i64 1 thread": lambda: af.rolling_sum(ints, table["ts"], "5m", by=table["key"], threads=1),
        "rolling_sum f64 2 threads": lambda: af.rolling_sum(
            table["value"], table["ts"], "5m", by=table["key"], threads=2
        ),
        "hop sum dense 1 thread": lambda: af.hop_aggregate(
            dense["ts"], dense["value"], "500ns", "100ns", "sum", threads=1
        ),
    }
    for name, fn in cases.items():
        fn()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        print(f"{name}: {min(times):.3f} s", flush=True)


if __name__ == "__main__":
    main()
