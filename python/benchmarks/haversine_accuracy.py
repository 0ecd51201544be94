"""Accuracy of arrowfeat's haversine_km, in metres, against two references:

- exact arithmetic (mpmath at 40 digits) on the same float64 inputs, the true error;
- the textbook float64 formula with numpy's sin/cos/arcsin, what users compare with.

Random points over the whole sphere, plus near-coincident pairs (where the distance is
tiny and relative error shows) and near-antipodal pairs (where the haversine formula
itself is ill-conditioned in float64).

    .venv/bin/python python/benchmarks/haversine_accuracy.py [exact_points] [numpy_points]
"""

import sys

import mpmath
import numpy as np
import pyarrow as pa

import arrowfeat as af

R = 6371.0088
mpmath.mp.dps = 40


def exact_km(lat1: float, lon1: float, lat2: float, lon2: float) -> mpmath.mpf:
    rad = mpmath.pi / 180
    p1, p2 = mpmath.mpf(lat1) * rad, mpmath.mpf(lat2) * rad
    dl = (mpmath.mpf(lon2) - mpmath.mpf(lon1)) * rad
    h = mpmath.sin((p2 - p1) / 2) ** 2 + mpmath.cos(p1) * mpmath.cos(p2) * mpmath.sin(dl / 2) ** 2
    return 2 * mpmath.mpf(R) * mpmath.asin(mpmath.sqrt(min(h, mpmath.mpf(1))))


def numpy_km(lat1, lon1, lat2, lon2):
    p1, p2 = np.radians(lat1), np.radians(lat2)
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2
    return 2 * R * np.arcsin(np.sqrt(np.minimum(h, 1.0)))


def points(n: int, rng: np.random.Generator, kind: str):
    lat1 = np.degrees(np.arcsin(rng.uniform(-1, 1, n)))
    lon1 = rng.uniform(-180, 180, n)
    if kind == "random":
        lat2 = np.degrees(np.arcsin(rng.uniform(-1, 1, n)))
        lon2 = rng.uniform(-180, 180, n)
    elif kind == "near":  # within about a kilometre
        lat2 = np.clip(lat1 + rng.normal(0, 0.01, n), -90, 90)
        lon2 = lon1 + rng.normal(0, 0.01, n)
    else:  # near the antipode, within about a kilometre
        lat2 = np.clip(-lat1 + rng.normal(0, 0.01, n), -90, 90)
        lon2 = lon1 + 180 + rng.normal(0, 0.01, n)
    return lat1, lon1, lat2, lon2


def ours_km(lat1, lon1, lat2, lon2):
    return af.haversine_km(pa.array(lat1), pa.array(lon1), pa.array(lat2), pa.array(lon2)).to_numpy()


def main() -> None:
    exact_n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    numpy_n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    rng = np.random.default_rng(7)
    print("| points | pairs | reference | arrowfeat max error, m | numpy formula max error, m |")
    print("| --- | --- | --- | --- | --- |")
    for kind in ["random", "near", "antipodal"]:
        lat1, lon1, lat2, lon2 = points(exact_n, rng, kind)
        ours, theirs = ours_km(lat1, lon1, lat2, lon2), numpy_km(lat1, lon1, lat2, lon2)
        worst_ours = worst_numpy = 0.0
        for i in range(exact_n):
            e = exact_km(lat1[i], lon1[i], lat2[i], lon2[i])
            worst_ours = max(worst_ours, float(abs(ours[i] - e)) * 1000)
            worst_numpy = max(worst_numpy, float(abs(theirs[i] - e)) * 1000)
        print(f"| {kind} | {exact_n:,} | exact (mpmath) | {worst_ours:.3g} | {worst_numpy:.3g} |")
    for kind in ["random", "near", "antipodal"]:
        lat1, lon1, lat2, lon2 = points(numpy_n, rng, kind)
        diff = np.abs(ours_km(lat1, lon1, lat2, lon2) - numpy_km(lat1, lon1, lat2, lon2)).max() * 1000
        print(f"| {kind} | {numpy_n:,} | numpy float64 formula | {diff:.3g} | - |")


if __name__ == "__main__":
    main()
