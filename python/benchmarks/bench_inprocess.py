"""In-process benchmarks: arrowfeat against numpy, pyarrow.compute and polars doing the
same math on the same data, timed side by side in one run (medians of interleaved
rounds). Run with a release build:  make bench-python  (or this file directly).

Prints a Markdown table for docs/benchmarks.md."""

import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

import arrowfeat as af

ROUNDS = 7
N = 10_000_000
VEC_N = 1_000_000
DIM = 128


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(name, contenders):
    """contenders: {label: callable}; the first is arrowfeat. Interleaved rounds."""
    for fn in contenders.values():
        fn()  # warm up
    times = {label: [] for label in contenders}
    for _ in range(ROUNDS):
        for label, fn in contenders.items():
            times[label].append(timed(fn))
    med = {label: statistics.median(v) for label, v in times.items()}
    ours = med["arrowfeat"]
    for label, t in med.items():
        if label == "arrowfeat":
            continue
        print(f"| {name} | {label} | {t * 1e3:.1f} | {ours * 1e3:.1f} | {t / ours:.2f} |")


def main():
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, pyarrow {pa.__version__}, polars {pl.__version__}\n")
    print("| kernel | compared with | their ms | arrowfeat ms | speed-up (their / ours) |")
    print("| --- | --- | --- | --- | --- |")

    x = rng.normal(50, 20, N)
    xa = pa.array(x)
    xs = pl.Series(x)
    compare(
        "standard_scale, 10M f64",
        {
            "arrowfeat": lambda: af.standard_scale(xa, 3.5, 2.25),
            "numpy `(x - m) / s`": lambda: (x - 3.5) / 2.25,
            "pyarrow.compute": lambda: pc.divide(pc.subtract(xa, 3.5), 2.25),
            "polars": lambda: (xs - 3.5) / 2.25,
        },
    )

    a = rng.normal(size=(VEC_N, DIM)).astype(np.float32)
    b = rng.normal(size=(VEC_N, DIM)).astype(np.float32)
    fa = pa.FixedSizeListArray.from_arrays(pa.array(a.reshape(-1)), DIM)
    fb = pa.FixedSizeListArray.from_arrays(pa.array(b.reshape(-1)), DIM)
    pa_ = pl.Series(a).cast(pl.Array(pl.Float32, DIM))
    pb_ = pl.Series(b).cast(pl.Array(pl.Float32, DIM))

    def numpy_cosine():
        return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))

    def polars_cosine():
        df = pl.DataFrame({"a": pa_, "b": pb_})
        return df.select(
            (pl.col("a") * pl.col("b")).arr.sum()
            / ((pl.col("a") * pl.col("a")).arr.sum().sqrt() * (pl.col("b") * pl.col("b")).arr.sum().sqrt())
        )

    compare(
        "cosine_similarity, 1M x 128 f32",
        {
            "arrowfeat": lambda: af.cosine_similarity(fa, fb),
            "numpy einsum + norm": numpy_cosine,
            "polars array arithmetic": polars_cosine,
        },
    )

    ids = pa.array([f"u{v:015d}" for v in rng.integers(0, 10**15, N)])
    ids_pl = pl.Series(ids)
    compare(
        "hash_bucket, 10M 16-byte strings",
        {
            "arrowfeat": lambda: af.hash_bucket(ids, 1000),
            "polars `hash() % n` (not Spark-compatible)": lambda: ids_pl.hash(seed=42) % 1000,
        },
    )

    lat1, lon1 = rng.uniform(-89, 89, N), rng.uniform(-179, 179, N)
    la, lo = pa.array(lat1), pa.array(lon1)
    lat_s, lon_s = pl.Series(lat1), pl.Series(lon1)

    def numpy_haversine():
        p1, p2 = np.radians(lat1), np.radians(48.8566)
        dl = np.radians(2.3522 - lon1)
        h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
        return 2 * 6371.0088 * np.arcsin(np.sqrt(np.minimum(h, 1.0)))

    def polars_haversine():
        p1, p2 = lat_s.radians(), np.radians(48.8566)
        dl = (2.3522 - lon_s).radians()
        h = ((p2 - p1) / 2).sin() ** 2 + p1.cos() * np.cos(p2) * (dl / 2).sin() ** 2
        return 2 * 6371.0088 * h.clip(upper_bound=1.0).sqrt().arcsin()

    compare(
        "haversine_km to a point, 10M",
        {
            "arrowfeat": lambda: af.haversine_km(la, lo, 48.8566, 2.3522),
            "numpy": numpy_haversine,
            "polars": polars_haversine,
        },
    )

    # GIL release: the same total work on one thread and split over two.
    halves = [xa.slice(0, N // 2), xa.slice(N // 2)]
    with ThreadPoolExecutor(2) as pool:
        compare(
            "standard_scale, 10M f64, 2 threads",
            {
                "arrowfeat": lambda: list(pool.map(lambda h: af.standard_scale(h, 3.5, 2.25), halves)),
                "arrowfeat, 1 thread": lambda: af.standard_scale(xa, 3.5, 2.25),
            },
        )
        compare(
            "haversine_km, 10M, 2 threads",
            {
                "arrowfeat": lambda: list(
                    pool.map(
                        lambda s: af.haversine_km(la.slice(*s), lo.slice(*s), 48.8566, 2.3522),
                        [(0, N // 2), (N // 2, N)],
                    )
                ),
                "arrowfeat, 1 thread": lambda: af.haversine_km(la, lo, 48.8566, 2.3522),
            },
        )


if __name__ == "__main__":
    main()
