//! `arrowfeat._native`: the kernels for Python, through the Arrow C Data Interface.
//!
//! Thin by design: each function imports its arguments (an Arrow array-like, imported
//! without copying, or a `pyarrow.Scalar`), releases the GIL, runs the kernel and exports
//! the result without copying. Type coercion and pandas / numpy / chunked inputs are
//! handled by the pure-Python layer in `arrowfeat/__init__.py`.

use std::sync::Arc;

use arrow::array::{make_array, Array, ArrayData, ArrayRef, Datum, Float64Array, Scalar};
use arrow::datatypes::DataType;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrowfeat_udf::kernels::{self, embedding, geo, hash, numeric, ErrorKind, KernelError};
use arrowfeat_udf::sql::ffi::{ffi_udfs, FFI_ScalarUDF};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyList};

/// Kernel outputs are large, fresh allocations on every call. With glibc they are mmapped
/// and unmapped each time, so every call pays the page faults of its output; mimalloc
/// keeps freed memory for reuse, as numpy (huge pages) and pyarrow (its memory pool) do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A kernel argument imported from Python.
enum Arg {
    Column(ArrayRef),
    Scalar(Scalar<ArrayRef>),
}

impl Arg {
    fn datum(&self) -> &dyn Datum {
        match self {
            Arg::Column(a) => a,
            Arg::Scalar(s) => s,
        }
    }
}

fn import(function: &str, argument: &str, obj: &Bound<'_, PyAny>) -> PyResult<Arg> {
    let py = obj.py();
    let pyarrow = py.import("pyarrow")?;
    if obj.is_instance(&pyarrow.getattr("Scalar")?)? {
        // A one-row array marked as a scalar: the kernels apply it to every row.
        let one = pyarrow.call_method1("array", (PyList::new(py, [obj])?, obj.getattr("type")?))?;
        let data = ArrayData::from_pyarrow_bound(&one)?;
        return Ok(Arg::Scalar(Scalar::new(make_array(data))));
    }
    if obj.hasattr("__arrow_c_array__")? || obj.is_instance(&pyarrow.getattr("Array")?)? {
        return Ok(Arg::Column(make_array(ArrayData::from_pyarrow_bound(obj)?)));
    }
    Err(PyTypeError::new_err(format!(
        "{function}: argument `{argument}`: expected a pyarrow Array or Scalar, found {}",
        obj.get_type().name()?
    )))
}

fn to_py_err(e: KernelError) -> PyErr {
    match e.kind {
        ErrorKind::WrongType => PyTypeError::new_err(e.to_string()),
        ErrorKind::BadValue => PyValueError::new_err(e.to_string()),
    }
}

fn export(py: Python<'_>, array: ArrayRef) -> PyResult<Py<PyAny>> {
    Ok(array.to_data().to_pyarrow(py)?.unbind())
}

/// Imports `objs`, runs `kernel` with the GIL released, exports the result.
fn run<const N: usize>(
    py: Python<'_>,
    function: &str,
    names: [&str; N],
    objs: [&Bound<'_, PyAny>; N],
    kernel: impl FnOnce([&dyn Datum; N]) -> kernels::Result<ArrayRef> + Send,
) -> PyResult<Py<PyAny>> {
    let mut args = Vec::with_capacity(N);
    for (name, obj) in names.iter().zip(objs) {
        args.push(import(function, name, obj)?);
    }
    let out = py.detach(|| {
        let datums: [&dyn Datum; N] = std::array::from_fn(|i| args[i].datum());
        kernel(datums)
    });
    export(py, out.map_err(to_py_err)?)
}

fn arc<A: Array + 'static>(r: kernels::Result<A>) -> kernels::Result<ArrayRef> {
    r.map(|a| Arc::new(a) as ArrayRef)
}

#[pyfunction]
fn standard_scale(py: Python<'_>, x: &Bound<'_, PyAny>, mean: &Bound<'_, PyAny>, std: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "standard_scale", ["x", "mean", "std"], [x, mean, std], |[x, m, s]| {
        arc(numeric::standard_scale(x, m, s))
    })
}

#[pyfunction]
fn min_max_scale(py: Python<'_>, x: &Bound<'_, PyAny>, lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "min_max_scale", ["x", "lo", "hi"], [x, lo, hi], |[x, l, h]| {
        arc(numeric::min_max_scale(x, l, h))
    })
}

#[pyfunction]
fn bucketize(py: Python<'_>, x: &Bound<'_, PyAny>, boundaries: Vec<f64>) -> PyResult<Py<PyAny>> {
    let boundaries = numeric::Boundaries::new("bucketize", boundaries).map_err(to_py_err)?;
    run(py, "bucketize", ["x"], [x], |[x]| arc(numeric::bucketize(x, &boundaries)))
}

fn import_all(function: &str, columns: &Bound<'_, PyList>) -> PyResult<Vec<Arg>> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| import(function, &format!("#{}", i + 1), &c))
        .collect()
}

#[pyfunction]
fn xxhash64(py: Python<'_>, columns: &Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    let args = import_all("xxhash64", columns)?;
    let out = py.detach(|| {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::xxhash64(&datums))
    });
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
fn hash_bucket(py: Python<'_>, columns: &Bound<'_, PyList>, num_buckets: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let args = import_all("hash_bucket", columns)?;
    let buckets = import("hash_bucket", "num_buckets", num_buckets)?;
    let out = py.detach(|| {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::hash_bucket(&datums, buckets.datum()))
    });
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
fn dot_product(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "dot_product", ["a", "b"], [a, b], |[a, b]| arc(embedding::dot_product(a, b)))
}

#[pyfunction]
fn cosine_similarity(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "cosine_similarity", ["a", "b"], [a, b], |[a, b]| {
        arc(embedding::cosine_similarity(a, b))
    })
}

#[pyfunction]
fn l2_norm(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "l2_norm", ["a"], [a], |[a]| arc(embedding::l2_norm(a)))
}

#[pyfunction]
fn l2_normalize(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "l2_normalize", ["a"], [a], |[a]| embedding::l2_normalize(a))
}

#[pyfunction]
fn quantize_int8(py: Python<'_>, x: &Bound<'_, PyAny>, scale: &Bound<'_, PyAny>, zero_point: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "quantize_int8", ["x", "scale", "zero_point"], [x, scale, zero_point], |[x, s, z]| {
        embedding::quantize_int8(x, s, z)
    })
}

#[pyfunction]
fn dequantize_int8(py: Python<'_>, q: &Bound<'_, PyAny>, scale: &Bound<'_, PyAny>, zero_point: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "dequantize_int8", ["q", "scale", "zero_point"], [q, scale, zero_point], |[q, s, z]| {
        embedding::dequantize_int8(q, s, z)
    })
}

#[pyfunction]
fn haversine_km(
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

/// Address of an array's first value buffer (after its offset), for zero-copy tests.
#[pyfunction]
fn _value_buffer_address(array: &Bound<'_, PyAny>) -> PyResult<usize> {
    let data = ArrayData::from_pyarrow_bound(array)?;
    let Some(buffer) = data.buffers().first() else {
        return Err(PyValueError::new_err("array has no value buffer"));
    };
    let width = match data.data_type() {
        DataType::Boolean => 0,
        t => t.primitive_width().unwrap_or(0),
    };
    Ok(buffer.as_ptr() as usize + data.offset() * width)
}

/// A `Float64` array of `values` built in Rust, with the address of its value buffer
/// before export (tests check that pyarrow sees the same memory).
#[pyfunction]
fn _float64_array(py: Python<'_>, values: Vec<f64>) -> PyResult<(Py<PyAny>, usize)> {
    let array = Float64Array::from(values);
    let address = array.values().inner().as_ptr() as usize;
    Ok((export(py, Arc::new(array))?, address))
}

/// One arrowfeat UDF for datafusion-python: `datafusion.udf(obj)` takes it through the
/// `__datafusion_scalar_udf__` PyCapsule protocol (datafusion-ffi).
#[pyclass(frozen, name = "DataFusionUdf", module = "arrowfeat._native")]
struct DataFusionUdf {
    name: String,
    ffi: FFI_ScalarUDF,
}

#[pymethods]
impl DataFusionUdf {
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __datafusion_scalar_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        PyCapsule::new(py, self.ffi.clone(), Some(c"datafusion_scalar_udf".to_owned()))
    }

    fn __repr__(&self) -> String {
        format!("<arrowfeat UDF {}>", self.name)
    }
}

/// Every arrowfeat UDF, ready for datafusion-python.
#[pyfunction]
fn datafusion_udfs() -> Vec<DataFusionUdf> {
    ffi_udfs().into_iter().map(|(name, ffi)| DataFusionUdf { name, ffi }).collect()
}

/// Checks the schema files under `schemas` against store metadata (`feast registry-dump`
/// JSON or arrowfeat store metadata) and renders the report: the same checks, rule ids
/// and formats as `arrowfeat check`. Returns (report, exit code). Unreadable top-level
/// input raises ValueError (the CLI's exit code 2).
#[pyfunction]
#[pyo3(signature = (schemas, registry_json, against, format = "json", deny_warnings = false))]
fn check_schemas(
    py: Python<'_>,
    schemas: std::path::PathBuf,
    registry_json: Vec<u8>,
    against: String,
    format: &str,
    deny_warnings: bool,
) -> PyResult<(String, i32)> {
    use arrowfeat_validator::{config::Config, output, run, store};
    let format = output::Format::parse(format).ok_or_else(|| {
        PyValueError::new_err(format!(
            "check_schemas: argument `format`: expected one of {}, found `{format}`",
            output::Format::NAMES.join(", ")
        ))
    })?;
    py.detach(move || {
        let metadata = store::parse(&registry_json).map_err(|e| format!("{against}: {e}"))?;
        let loaded = run::load_path(&schemas)?;
        if loaded.is_empty() {
            return Err(format!("{}: no schema files (*.yaml, *.yml) found", schemas.display()));
        }
        let targets = run::Targets { store: Some(&metadata), previous: None, against };
        let report = run::check(loaded, &targets, &Config::default());
        let options = output::RenderOptions { color: false, deny_warnings, command: "check" };
        Ok((output::render(&report, format, &options), report.exit_code(deny_warnings)))
    })
    .map_err(PyValueError::new_err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DataFusionUdf>()?;
    m.add_function(wrap_pyfunction!(datafusion_udfs, m)?)?;
    m.add_function(wrap_pyfunction!(check_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(standard_scale, m)?)?;
    m.add_function(wrap_pyfunction!(min_max_scale, m)?)?;
    m.add_function(wrap_pyfunction!(bucketize, m)?)?;
    m.add_function(wrap_pyfunction!(xxhash64, m)?)?;
    m.add_function(wrap_pyfunction!(hash_bucket, m)?)?;
    m.add_function(wrap_pyfunction!(dot_product, m)?)?;
    m.add_function(wrap_pyfunction!(cosine_similarity, m)?)?;
    m.add_function(wrap_pyfunction!(l2_norm, m)?)?;
    m.add_function(wrap_pyfunction!(l2_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(quantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(haversine_km, m)?)?;
    m.add_function(wrap_pyfunction!(_value_buffer_address, m)?)?;
    m.add_function(wrap_pyfunction!(_float64_array, m)?)?;
    Ok(())
}
