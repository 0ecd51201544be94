//! The scalar kernels: scaling, bucketing, hashing, embeddings, quantization, geo.

use crate::convert::*;
use arrow::array::Datum;
use arrowfeat_udf::kernels::{embedding, geo, hash, numeric};
use pyo3::prelude::*;
use pyo3::types::PyList;

#[pyfunction]
pub(crate) fn standard_scale(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    mean: &Bound<'_, PyAny>,
    std: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(
        py,
        "standard_scale",
        ["x", "mean", "std"],
        [x, mean, std],
        |[x, m, s]| arc(numeric::standard_scale(x, m, s)),
    )
}

#[pyfunction]
pub(crate) fn min_max_scale(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    lo: &Bound<'_, PyAny>,
    hi: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(
        py,
        "min_max_scale",
        ["x", "lo", "hi"],
        [x, lo, hi],
        |[x, l, h]| arc(numeric::min_max_scale(x, l, h)),
    )
}

#[pyfunction]
pub(crate) fn bucketize(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    boundaries: Vec<f64>,
) -> PyResult<Py<PyAny>> {
    let boundaries = numeric::Boundaries::new("bucketize", boundaries).map_err(to_py_err)?;
    run(py, "bucketize", ["x"], [x], |[x]| {
        arc(numeric::bucketize(x, &boundaries))
    })
}

#[pyfunction]
pub(crate) fn xxhash64(py: Python<'_>, columns: &Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    let args = import_all("xxhash64", columns)?;
    let out = detach(py, "xxhash64", || {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::xxhash64(&datums))
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
pub(crate) fn murmur3_hash(py: Python<'_>, columns: &Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    let args = import_all("hash", columns)?;
    let out = detach(py, "hash", || {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::murmur3_hash(&datums))
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
pub(crate) fn hash_bucket(
    py: Python<'_>,
    columns: &Bound<'_, PyList>,
    num_buckets: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let args = import_all("hash_bucket", columns)?;
    let buckets = import("hash_bucket", "num_buckets", num_buckets)?;
    let out = detach(py, "hash_bucket", || {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::hash_bucket(&datums, buckets.datum()))
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
pub(crate) fn dot_product(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(py, "dot_product", ["a", "b"], [a, b], |[a, b]| {
        arc(embedding::dot_product(a, b))
    })
}

#[pyfunction]
pub(crate) fn cosine_similarity(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(py, "cosine_similarity", ["a", "b"], [a, b], |[a, b]| {
        arc(embedding::cosine_similarity(a, b))
    })
}

#[pyfunction]
pub(crate) fn l2_norm(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "l2_norm", ["a"], [a], |[a]| arc(embedding::l2_norm(a)))
}

#[pyfunction]
pub(crate) fn l2_normalize(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "l2_normalize", ["a"], [a], |[a]| {
        embedding::l2_normalize(a)
    })
}

#[pyfunction]
pub(crate) fn quantize_int8(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    zero_point: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(
        py,
        "quantize_int8",
        ["x", "scale", "zero_point"],
        [x, scale, zero_point],
        |[x, s, z]| embedding::quantize_int8(x, s, z),
    )
}

#[pyfunction]
pub(crate) fn dequantize_int8(
    py: Python<'_>,
    q: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    zero_point: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(
        py,
        "dequantize_int8",
        ["q", "scale", "zero_point"],
        [q, scale, zero_point],
        |[q, s, z]| embedding::dequantize_int8(q, s, z),
    )
}

#[pyfunction]
pub(crate) fn haversine_km(
    py: Python<'_>,
    lat1: &Bound<'_, PyAny>,
    lon1: &Bound<'_, PyAny>,
    lat2: &Bound<'_, PyAny>,
    lon2: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    run(
        py,
        "haversine_km",
        ["lat1", "lon1", "lat2", "lon2"],
        [lat1, lon1, lat2, lon2],
        |[a, b, c, d]| arc(geo::haversine_km(a, b, c, d)),
    )
}
