"""haversine_km against the exact haversine (mpmath, 40 digits) of the same float64
inputs: the documented bound is a micrometre everywhere, near-antipodal pairs included."""

import mpmath
import numpy as np
import pyarrow as pa
import pytest

import arrowfeat as af

R = 6371.0088
BOUND_KM = 1e-9  # a micrometre


def exact_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    with mpmath.workdps(40):
        rad = mpmath.pi / 180
        p1, p2 = mpmath.mpf(lat1) * rad, mpmath.mpf(lat2) * rad
        # Longitudes wrap: the difference is taken exactly, then reduced.
        dl = mpmath.fmod(mpmath.mpf(lon2) - mpmath.mpf(lon1), 360) * rad
        h = mpmath.sin((p2 - p1) / 2) ** 2 + mpmath.cos(p1) * mpmath.cos(p2) * mpmath.sin(dl / 2) ** 2
        return float(2 * mpmath.mpf(R) * mpmath.asin(mpmath.sqrt(min(h, mpmath.mpf(1)))))


def pairs(kind: str, n: int, rng: np.random.Generator) -> list[tuple[float, float, float, float]]:
    lat1 = np.degrees(np.arcsin(rng.uniform(-1, 1, n)))
    lon1 = rng.uniform(-540, 540, n)
    if kind == "random":
        lat2, lon2 = np.degrees(np.arcsin(rng.uniform(-1, 1, n))), rng.uniform(-540, 540, n)
    elif kind == "near":
        lat2, lon2 = np.clip(lat1 + rng.normal(0, 1e-4, n), -90, 90), lon1 + rng.normal(0, 1e-4, n)
    else:  # within about a metre to a kilometre of the antipode
        scale = 10.0 ** rng.uniform(-5, -2, n)
        lat2 = np.clip(-lat1 + rng.normal(0, 1, n) * scale, -90, 90)
        lon2 = lon1 + 180 + rng.normal(0, 1, n) * scale
    return list(zip(lat1.tolist(), lon1.tolist(), lat2.tolist(), lon2.tolist(), strict=True))


AWKWARD = [
    (0.0, 0.0, 0.0, 180.0),
    (90.0, 0.0, -90.0, 0.0),
    (90.0, 10.0, 90.0, -170.0),
    (89.9999999, 0.0, -89.9999999, 180.0),
    (45.0, 720.0, -45.0, -540.0),
    (1e-300, -179.9999999, -5e-324, 179.9999999),
    (33.3, 12.5, 33.3, 12.5),
    (-90.0, 0.0, 90.0, 37.0),
]


@pytest.mark.parametrize("kind", ["random", "near", "antipodal"])
def test_haversine_within_a_micrometre_of_exact(kind: str) -> None:
    points = pairs(kind, 2000, np.random.default_rng(11)) + AWKWARD
    cols = [pa.array([p[i] for p in points], pa.float64()) for i in range(4)]
    got = af.haversine_km(*cols).to_pylist()
    errors = [abs(g - exact_km(*p)) for g, p in zip(got, points, strict=True)]
    worst = max(range(len(points)), key=errors.__getitem__)
    assert errors[worst] <= BOUND_KM, (points[worst], got[worst], errors[worst])
