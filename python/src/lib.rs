//! `arrowfeat._native`: the kernels for Python, through the Arrow C Data Interface.
//!
//! Thin by design: each function imports its arguments (an Arrow array-like, imported
//! without copying, or a `pyarrow.Scalar`), releases the GIL, runs the kernel and exports
//! the result without copying. Type coercion and pandas / numpy / chunked inputs are
//! handled by the pure-Python layer in `arrowfeat/__init__.py`.
//!
//! By area: `convert` (arguments in, results and errors out), `scalar` (the scalar
//! kernels), `windows`, `join` (the point-in-time join), `ffi_udfs` (datafusion-python)
//! and `validator` (the schema gate).

mod convert;
mod ffi_udfs;
mod join;
mod scalar;
mod validator;
mod windows;

use std::sync::Arc;

use arrow::array::{ArrayData, Float64Array};
use arrow::datatypes::DataType;
use arrow_pyarrow::FromPyArrow;
use convert::*;
use pyo3::prelude::*;

/// Kernel outputs are large, fresh allocations on every call. With glibc they are mmapped
/// and unmapped each time, so every call pays the page faults of its output; mimalloc
/// keeps freed memory for reuse, as numpy (huge pages) and pyarrow (its memory pool) do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Text from someone's data (a column name, say) made safe to put in a message: the one
/// escaping the kernels, the validator and the CLI use (controls, bidirectional marks and
/// workflow commands as visible escapes), cut to `limit` characters.
#[pyfunction]
fn _quote(text: &str, limit: usize) -> String {
    arrowfeat_common::quote(text, limit)
}

/// Address of an array's first value buffer (after its offset), for zero-copy tests.
#[pyfunction]
fn _value_buffer_address(array: &Bound<'_, PyAny>) -> PyResult<usize> {
    let data = ArrayData::from_pyarrow_bound(array)?;
    let Some(buffer) = data.buffers().first() else {
        return Err(value_error("array has no value buffer"));
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ffi_udfs::DataFusionUdf>()?;
    m.add_function(wrap_pyfunction!(ffi_udfs::datafusion_udfs, m)?)?;
    m.add_class::<ffi_udfs::DataFusionWindowUdf>()?;
    m.add_function(wrap_pyfunction!(ffi_udfs::datafusion_udwfs, m)?)?;
    m.add_class::<ffi_udfs::FileTable>()?;
    m.add_class::<ffi_udfs::PointInTimeFunction>()?;
    m.add_function(wrap_pyfunction!(ffi_udfs::file_table, m)?)?;
    m.add_class::<validator::CheckReport>()?;
    m.add_function(wrap_pyfunction!(validator::check, m)?)?;
    m.add_function(wrap_pyfunction!(validator::drift, m)?)?;
    m.add_function(wrap_pyfunction!(validator::schema_views, m)?)?;
    m.add_function(wrap_pyfunction!(validator::count_part, m)?)?;
    m.add_function(wrap_pyfunction!(validator::skew, m)?)?;
    m.add_function(wrap_pyfunction!(validator::drift_part, m)?)?;
    m.add_function(wrap_pyfunction!(validator::skew_part, m)?)?;
    m.add_function(wrap_pyfunction!(validator::check_skew_options, m)?)?;
    m.add_function(wrap_pyfunction!(join::point_in_time, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::standard_scale, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::min_max_scale, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::bucketize, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::xxhash64, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::murmur3_hash, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::hash_bucket, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::dot_product, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::cosine_similarity, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::l2_norm, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::l2_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::quantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::dequantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::haversine_km, m)?)?;
    m.add_function(wrap_pyfunction!(windows::parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(windows::tumble_start, m)?)?;
    m.add_function(wrap_pyfunction!(windows::hop_windows, m)?)?;
    m.add_function(wrap_pyfunction!(windows::rolling, m)?)?;
    m.add_function(wrap_pyfunction!(windows::hop_aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(windows::session_window, m)?)?;
    m.add_function(wrap_pyfunction!(windows::session_aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(_value_buffer_address, m)?)?;
    m.add_function(wrap_pyfunction!(_quote, m)?)?;
    m.add_function(wrap_pyfunction!(_float64_array, m)?)?;
    Ok(())
}
