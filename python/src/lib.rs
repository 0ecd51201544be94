//! `arrowfeat._native`: the kernels for Python, through the Arrow C Data Interface.
//!
//! Thin by design: each function imports its arguments (an Arrow array-like, imported
//! without copying, or a `pyarrow.Scalar`), releases the GIL, runs the kernel and exports
//! the result without copying. Type coercion and pandas / numpy / chunked inputs are
//! handled by the pure-Python layer in `arrowfeat/__init__.py`.

use std::sync::Arc;

use arrow::array::RecordBatchReader;
use arrow::array::{make_array, Array, ArrayData, ArrayRef, Datum, Float64Array, Scalar};
use arrow::datatypes::DataType;
use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow::record_batch::RecordBatch;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrowfeat_udf::kernels::point_in_time::join::{
    point_in_time_join, ttl_from_nanos, FeatureSpec, PointInTimeJoin,
};
use arrowfeat_udf::kernels::point_in_time::{PitAggregation, PointInTimeOptions};
use arrowfeat_udf::kernels::window::{self, Aggregation, Closed};
use arrowfeat_udf::kernels::{self, embedding, geo, hash, numeric, ErrorKind, KernelError};
use arrowfeat_udf::sql::ffi::{ffi_udfs, ffi_udwfs, FFI_ScalarUDF, FFI_WindowUDF};
use pyo3::exceptions::PyRuntimeError;
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
        let attempt = |o: &Bound<'_, PyAny>| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ArrayData::from_pyarrow_bound(o).map(make_array)
            }))
        };
        // Import a contiguous copy straight away where arrow-rs is known to fail (its
        // assertion would print a panic message on stderr before the fallback below).
        if sliced_struct_of_structs(&pyarrow, obj)? {
            let copy = pyarrow.call_method1("concat_arrays", (PyList::new(py, [obj])?,))?;
            if let Ok(array) = attempt(&copy) {
                return Ok(Arg::Column(array?));
            }
        }
        return match attempt(obj) {
            Ok(array) => Ok(Arg::Column(array?)),
            // arrow-rs cannot import some sliced nested arrays (a struct inside a struct or
            // a fixed-size list, at an offset); a contiguous copy of the same values can.
            Err(_) => {
                let copy = pyarrow.call_method1("array", (obj,))?;
                let copy = pyarrow.call_method1("concat_arrays", (PyList::new(py, [copy])?,))?;
                match attempt(&copy) {
                    Ok(array) => Ok(Arg::Column(array?)),
                    Err(_) => Err(arrowfeat_error(
                        "ArrowfeatInternalError",
                        format!(
                            "{function}: argument `{argument}`: this Arrow array could not be read (please report it)"
                        ),
                    )),
                }
            }
        };
    }
    Err(type_error(format!(
        "{function}: argument `{argument}`: expected a pyarrow Array or Scalar, found {}",
        obj.get_type().name()?
    )))
}

/// Whether `obj` is a pyarrow struct array at an offset with a struct among its fields
/// (a struct directly inside a struct): arrow-rs 59 cannot import it in place.
fn sliced_struct_of_structs(pyarrow: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    fn nests_struct(types: &Bound<'_, PyAny>, t: &Bound<'_, PyAny>) -> PyResult<bool> {
        for i in 0..t.getattr("num_fields")?.extract::<usize>()? {
            let child = t.call_method1("field", (i,))?.getattr("type")?;
            if types.call_method1("is_struct", (&child,))?.is_truthy()? {
                return Ok(true);
            }
        }
        Ok(false)
    }
    if !obj.is_instance(&pyarrow.getattr("Array")?)?
        || obj.getattr("offset")?.extract::<usize>()? == 0
    {
        return Ok(false);
    }
    let types = pyarrow.getattr("types")?;
    let t = obj.getattr("type")?;
    Ok(types.call_method1("is_struct", (&t,))?.is_truthy()? && nests_struct(&types, &t)?)
}

/// arrowfeat's Python exception classes (`arrowfeat.errors`), which subclass `ValueError`,
/// `TypeError` and `RuntimeError` so that existing `except` clauses keep working.
fn arrowfeat_error(class: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py
            .import("arrowfeat.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.cast_into::<pyo3::types::PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            // The package is importable wherever this module is; this is a last resort.
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

fn value_error(message: impl Into<String>) -> PyErr {
    arrowfeat_error("ArrowfeatValueError", message.into())
}

fn type_error(message: impl Into<String>) -> PyErr {
    arrowfeat_error("ArrowfeatTypeError", message.into())
}

/// Runs `f` with the GIL released. A panic inside (a bug) becomes a `RuntimeError` that
/// names the function, never a `PanicException`, which `except Exception` does not catch.
fn detach<T: Send>(py: Python<'_>, function: &str, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".into());
            arrowfeat_error(
                "ArrowfeatInternalError",
                format!("{function}: internal error (please report it): {message}"),
            )
        })
}

fn to_py_err(e: KernelError) -> PyErr {
    match e.kind {
        ErrorKind::WrongType => type_error(e.to_string()),
        ErrorKind::BadValue => value_error(e.to_string()),
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
    let out = detach(py, function, || {
        let datums: [&dyn Datum; N] = std::array::from_fn(|i| args[i].datum());
        kernel(datums)
    })?;
    export(py, out.map_err(to_py_err)?)
}

fn arc<A: Array + 'static>(r: kernels::Result<A>) -> kernels::Result<ArrayRef> {
    r.map(|a| Arc::new(a) as ArrayRef)
}

#[pyfunction]
fn standard_scale(
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
fn min_max_scale(
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
fn bucketize(py: Python<'_>, x: &Bound<'_, PyAny>, boundaries: Vec<f64>) -> PyResult<Py<PyAny>> {
    let boundaries = numeric::Boundaries::new("bucketize", boundaries).map_err(to_py_err)?;
    run(py, "bucketize", ["x"], [x], |[x]| {
        arc(numeric::bucketize(x, &boundaries))
    })
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
    let out = detach(py, "xxhash64", || {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::xxhash64(&datums))
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
fn murmur3_hash(py: Python<'_>, columns: &Bound<'_, PyList>) -> PyResult<Py<PyAny>> {
    let args = import_all("hash", columns)?;
    let out = detach(py, "hash", || {
        let datums: Vec<&dyn Datum> = args.iter().map(Arg::datum).collect();
        arc(hash::murmur3_hash(&datums))
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
fn hash_bucket(
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
fn dot_product(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    run(py, "dot_product", ["a", "b"], [a, b], |[a, b]| {
        arc(embedding::dot_product(a, b))
    })
}

#[pyfunction]
fn cosine_similarity(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
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
    run(py, "l2_normalize", ["a"], [a], |[a]| {
        embedding::l2_normalize(a)
    })
}

#[pyfunction]
fn quantize_int8(
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
fn dequantize_int8(
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

/// An array argument of the window functions (scalars are not accepted there).
fn import_column(function: &str, argument: &str, obj: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    match import(function, argument, obj)? {
        Arg::Column(a) => Ok(a),
        Arg::Scalar(_) => Err(type_error(format!(
            "{function}: argument `{argument}`: expected a column (pyarrow Array), found a scalar"
        ))),
    }
}

fn import_keys(function: &str, keys: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ArrayRef>> {
    keys.filter(|k| !k.is_none())
        .map(|k| import_column(function, "by", k))
        .transpose()
}

/// A pyarrow Table (or any object with `__arrow_c_stream__`) as one record batch:
/// imported without copying when it has one chunk.
fn import_table(function: &str, argument: &str, obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let reader = ArrowArrayStreamReader::from_pyarrow_bound(obj).map_err(|e| {
        type_error(format!(
            "{function}: argument `{argument}`: expected an Arrow table, found {}: {e}",
            obj.get_type()
                .name()
                .map_or_else(|_| "an object".to_string(), |n| n.to_string())
        ))
    })?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<RecordBatch>, _>>()
        .map_err(|e| value_error(format!("{function}: argument `{argument}`: {e}")))?;
    match batches.len() {
        1 => Ok(batches.into_iter().next().expect("one batch")),
        _ => arrow::compute::concat_batches(&schema, &batches)
            .map_err(|e| value_error(format!("{function}: argument `{argument}`: {e}"))),
    }
}

/// The point-in-time join of two Arrow tables
/// ([`arrowfeat_udf::kernels::point_in_time::join::point_in_time_join`]): the spine with
/// one column per feature. `features`: `(column, aggregation, period in ns or None,
/// output name or None)`; `ttl` in ns (0: no limit). Returns a `pyarrow.RecordBatch`.
/// `function`: the name errors give (the caller's, e.g. `get_historical_features`).
#[pyfunction]
#[pyo3(signature = (spine, events, by, spine_time, event_time, features, *, created = None, ttl = None, closed = "right", null_keys_match = false, created_cutoff = false, threads = 1, function = None))]
#[allow(clippy::too_many_arguments)]
fn point_in_time(
    py: Python<'_>,
    spine: &Bound<'_, PyAny>,
    events: &Bound<'_, PyAny>,
    by: Vec<String>,
    spine_time: String,
    event_time: String,
    features: Vec<(String, String, Option<i64>, Option<String>)>,
    created: Option<String>,
    ttl: Option<i64>,
    closed: &str,
    null_keys_match: bool,
    created_cutoff: bool,
    threads: usize,
    function: Option<String>,
) -> PyResult<Py<PyAny>> {
    let function = function.unwrap_or_else(|| "point_in_time".to_string());
    let to_py_err = |e: KernelError| to_py_err(e.called_as(function.clone()));
    let spine = import_table(&function, "spine", spine)?;
    let events = import_table(&function, "events", events)?;
    let features = features
        .into_iter()
        .map(|(column, aggregation, period, name)| {
            let aggregation = PitAggregation::parse("point_in_time", "features", &aggregation)
                .map_err(|e| KernelError {
                    message: format!("column `{column}`: {}", e.message),
                    ..e
                })
                .map_err(to_py_err)?;
            Ok(FeatureSpec {
                column,
                aggregation,
                period,
                name,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let keys: Vec<&str> = by.iter().map(String::as_str).collect();
    let mut join = PointInTimeJoin::new(&keys, &spine_time, &keys, &event_time);
    join.features = features;
    join.event_created = created;
    join.options = PointInTimeOptions {
        closed: Closed::parse("point_in_time", "closed", closed).map_err(to_py_err)?,
        ttl: ttl
            .map(ttl_from_nanos)
            .transpose()
            .map_err(to_py_err)?
            .flatten(),
        threads,
        null_keys_match,
        created_cutoff,
    };
    let out =
        detach(py, &function, || point_in_time_join(&spine, &events, &join))?.map_err(to_py_err)?;
    out.to_pyarrow(py).map(Bound::unbind)
}

/// Parses an interval string ("500ns", "5m", "1h 30m") into nanoseconds.
#[pyfunction]
fn parse_duration(function: &str, argument: &str, text: &str) -> PyResult<i64> {
    // Kernel errors carry a static function name; Python passes its own.
    // The kernel error's own rendering escapes and cuts what the text quotes.
    window::parse_duration("duration", argument, text)
        .map_err(|e| value_error(e.called_as(function.to_string()).to_string()))
}

#[pyfunction]
fn tumble_start(
    py: Python<'_>,
    ts: &Bound<'_, PyAny>,
    size: i64,
    offset: i64,
) -> PyResult<Py<PyAny>> {
    let ts = import_column("tumble_start", "ts", ts)?;
    let out = detach(py, "tumble_start", || {
        window::tumble_start(ts.as_ref(), size, offset)
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
fn hop_windows(
    py: Python<'_>,
    ts: &Bound<'_, PyAny>,
    size: i64,
    step: i64,
    offset: i64,
) -> PyResult<Py<PyAny>> {
    let ts = import_column("hop_windows", "ts", ts)?;
    let out = detach(py, "hop_windows", || {
        window::hop_windows(ts.as_ref(), size, step, offset).map(|a| Arc::new(a) as ArrayRef)
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
#[pyo3(signature = (keys, ts, values, period, closed, agg, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn rolling(
    py: Python<'_>,
    keys: Option<&Bound<'_, PyAny>>,
    ts: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    period: i64,
    closed: &str,
    agg: &str,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let aggregation = Aggregation::parse("rolling", "agg", agg).map_err(to_py_err)?;
    let name = window::rolling_name(aggregation);
    let closed = Closed::parse(name, "closed", closed).map_err(to_py_err)?;
    let keys = import_keys(name, keys)?;
    let ts = import_column(name, "ts", ts)?;
    let values = import_column(name, "value", values)?;
    let out = detach(py, "rolling", || {
        window::rolling(
            keys.as_ref(),
            ts.as_ref(),
            values.as_ref(),
            period,
            closed,
            aggregation,
            threads,
        )
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
#[pyo3(signature = (keys, ts, values, size, step, offset, agg, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn hop_aggregate(
    py: Python<'_>,
    keys: Option<&Bound<'_, PyAny>>,
    ts: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    size: i64,
    step: i64,
    offset: i64,
    agg: &str,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let aggregation = Aggregation::parse("hop_aggregate", "agg", agg).map_err(to_py_err)?;
    let keys = import_keys("hop_aggregate", keys)?;
    let ts = import_column("hop_aggregate", "ts", ts)?;
    let values = import_column("hop_aggregate", "values", values)?;
    let out = detach(py, "hop_aggregate", || {
        window::hop_aggregate_batches(
            keys.as_ref(),
            ts.as_ref(),
            values.as_ref(),
            size,
            step,
            offset,
            aggregation,
            threads,
        )
    })?;
    batches_to_pyarrow(py, out.map_err(to_py_err)?)
}

#[pyfunction]
#[pyo3(signature = (keys, ts, gap, threads = 0))]
fn session_window(
    py: Python<'_>,
    keys: Option<&Bound<'_, PyAny>>,
    ts: &Bound<'_, PyAny>,
    gap: i64,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let keys = import_keys("session_window", keys)?;
    let ts = import_column("session_window", "ts", ts)?;
    let out = detach(py, "session_window", || {
        window::session_window(keys.as_ref(), ts.as_ref(), gap, threads)
            .map(|a| Arc::new(a) as ArrayRef)
    })?;
    export(py, out.map_err(to_py_err)?)
}

#[pyfunction]
#[pyo3(signature = (keys, ts, values, gap, agg, threads = 0))]
fn session_aggregate(
    py: Python<'_>,
    keys: Option<&Bound<'_, PyAny>>,
    ts: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    gap: i64,
    agg: &str,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let aggregation = Aggregation::parse("session_aggregate", "agg", agg).map_err(to_py_err)?;
    let keys = import_keys("session_aggregate", keys)?;
    let ts = import_column("session_aggregate", "ts", ts)?;
    let values = import_column("session_aggregate", "values", values)?;
    let out = detach(py, "session_aggregate", || {
        window::session_aggregate_batches(
            keys.as_ref(),
            ts.as_ref(),
            values.as_ref(),
            gap,
            aggregation,
            threads,
        )
    })?;
    batches_to_pyarrow(py, out.map_err(to_py_err)?)
}

/// The batches as a Python list of `pyarrow.RecordBatch` (zero-copy).
fn batches_to_pyarrow(py: Python<'_>, batches: Vec<RecordBatch>) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for batch in batches {
        list.append(batch.to_pyarrow(py)?)?;
    }
    Ok(list.into_any().unbind())
}

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

/// A class holding one FFI function for datafusion-python, which recognises scalar and
/// window functions by the name of their PyCapsule method: hence two classes, one macro.
macro_rules! datafusion_function_class {
    ($(#[$doc:meta])* $class:ident, $ffi:ty, $method:ident, $capsule:literal, $what:literal) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "arrowfeat._native")]
        struct $class {
            name: String,
            ffi: $ffi,
        }

        #[pymethods]
        impl $class {
            #[getter]
            fn name(&self) -> &str {
                &self.name
            }

            fn $method<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
                PyCapsule::new_with_value(py, self.ffi.clone(), $capsule)
            }

            fn __repr__(&self) -> String {
                format!(concat!("<arrowfeat ", $what, " {}>"), self.name)
            }
        }
    };
}

datafusion_function_class!(
    /// One arrowfeat UDF for datafusion-python: `datafusion.udf(obj)` takes it through the
    /// `__datafusion_scalar_udf__` PyCapsule protocol (datafusion-ffi).
    DataFusionUdf,
    FFI_ScalarUDF,
    __datafusion_scalar_udf__,
    c"datafusion_scalar_udf",
    "UDF"
);

datafusion_function_class!(
    /// One arrowfeat window function for datafusion-python: `datafusion.udwf(obj)` takes
    /// it through the `__datafusion_window_udf__` PyCapsule protocol.
    DataFusionWindowUdf,
    FFI_WindowUDF,
    __datafusion_window_udf__,
    c"datafusion_window_udf",
    "window UDF"
);

/// Every arrowfeat window function, ready for datafusion-python.
#[pyfunction]
fn datafusion_udwfs() -> Vec<DataFusionWindowUdf> {
    ffi_udwfs()
        .into_iter()
        .map(|(name, ffi)| DataFusionWindowUdf { name, ffi })
        .collect()
}

/// Every arrowfeat UDF, ready for datafusion-python.
#[pyfunction]
fn datafusion_udfs() -> Vec<DataFusionUdf> {
    ffi_udfs()
        .into_iter()
        .map(|(name, ffi)| DataFusionUdf { name, ffi })
        .collect()
}

fn report_format(format: &str) -> PyResult<arrowfeat_validator::output::Format> {
    use arrowfeat_validator::output::Format;
    Format::parse(format).ok_or_else(|| {
        value_error(format!(
            "format: expected one of {}, found `{format}`",
            Format::NAMES.join(", ")
        ))
    })
}

/// The report of one run of the validator's pipeline (`arrowfeat check`): rendered in any
/// format, and its exit code, without checking again. `arrowfeat.feast.Report` wraps it.
#[pyclass(frozen, name = "CheckReport", module = "arrowfeat._native")]
struct CheckReport {
    run: arrowfeat_validator::pipeline::RunReport,
}

#[pymethods]
impl CheckReport {
    /// Whether warnings fail the run: the `deny_warnings` argument or `arrowfeat.toml`.
    #[getter]
    fn deny_warnings(&self) -> bool {
        self.run.deny_warnings
    }

    /// The exit code `arrowfeat check` returns for this report: 0 pass, 1 findings, 2
    /// unreadable input. `deny_warnings=True` also fails on warnings.
    #[pyo3(signature = (deny_warnings = false))]
    fn exit_code(&self, deny_warnings: bool) -> i32 {
        self.run
            .exit_code_with(deny_warnings || self.run.deny_warnings)
    }

    /// The report in `format` (text, json, junit, sarif, github, markdown), exactly as
    /// `arrowfeat check --format` prints it (without colour). `verbose=True`: text lists
    /// every check, as `arrowfeat check --verbose`; by default only findings and the summary.
    #[pyo3(signature = (format = "text", deny_warnings = false, *, verbose = false))]
    fn render(&self, format: &str, deny_warnings: bool, verbose: bool) -> PyResult<String> {
        let format = report_format(format)?;
        let style = arrowfeat_validator::pipeline::Style {
            color: false,
            verbose,
        };
        Ok(self
            .run
            .render_with(format, style, deny_warnings || self.run.deny_warnings))
    }

    fn __repr__(&self) -> String {
        format!(
            "<arrowfeat._native.CheckReport against {}: exit code {}>",
            arrowfeat_validator::text::clean(&self.run.report.against),
            self.run.exit_code()
        )
    }
}

/// Runs `arrowfeat check` through the validator's pipeline: the schema files under
/// `schemas` against store metadata (`feast registry-dump` JSON or arrowfeat store
/// metadata, named `against` in the report) and/or an earlier revision (`previous`: a
/// directory, or a git revision of `schemas`' path). `config`: an `arrowfeat.toml`; by
/// default `arrowfeat.toml` in the working directory if there is one, as the CLI.
/// `baseline`: accepted findings, as `--baseline FILE`; by default
/// `arrowfeat-baseline.json` in the working directory if there is one; `False`: none, as
/// `--no-baseline`. `write_baseline`: write today's findings there, then check with them.
/// Unreadable top-level input or configuration raises ValueError (the CLI's exit code 2).
#[pyfunction]
#[pyo3(signature = (schemas, registry_json = None, against = String::new(), *, previous = None, config = None, compatibility = None, deny_warnings = false, follow_symlinks = false, baseline = None, write_baseline = None))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    schemas: std::path::PathBuf,
    registry_json: Option<Vec<u8>>,
    against: String,
    previous: Option<String>,
    config: Option<std::path::PathBuf>,
    compatibility: Option<&str>,
    deny_warnings: bool,
    follow_symlinks: bool,
    baseline: Option<&Bound<'_, PyAny>>,
    write_baseline: Option<std::path::PathBuf>,
) -> PyResult<CheckReport> {
    use arrowfeat_validator::compat::Mode;
    use arrowfeat_validator::pipeline::{
        self, BaselineSource, ConfigSource, Inputs, Names, StoreSource,
    };
    let baseline = match baseline {
        None => BaselineSource::Discover(std::path::PathBuf::from(".")),
        Some(b) if b.is_instance_of::<pyo3::types::PyBool>() => {
            if b.is_truthy()? {
                return Err(type_error(
                    "baseline: expected a file path, None (discover arrowfeat-baseline.json) or False (no baseline), found True",
                ));
            }
            BaselineSource::None
        }
        Some(b) => BaselineSource::File(b.extract::<std::path::PathBuf>().map_err(|_| {
            type_error(format!(
                "baseline: expected a file path, None or False, found {}",
                b.get_type()
                    .name()
                    .map_or_else(|_| "an object".to_string(), |n| n.to_string())
            ))
        })?),
    };
    if write_baseline.is_some() && !matches!(baseline, BaselineSource::Discover(_)) {
        return Err(value_error(
            "write_baseline: expected no `baseline` beside it (it checks with the file it writes)",
        ));
    }
    let compatibility = compatibility
        .map(|mode| {
            Mode::parse(mode).ok_or_else(|| {
                value_error(format!(
                    "compatibility: expected backward, forward, full or none, found `{mode}`"
                ))
            })
        })
        .transpose()?;
    let inputs = Inputs {
        store: registry_json.map(|json| StoreSource::Json {
            json,
            label: against,
        }),
        previous,
        config: match config {
            Some(path) => ConfigSource::File(path),
            None => ConfigSource::Discover(std::path::PathBuf::from(".")),
        },
        compatibility,
        deny_warnings,
        load: arrowfeat_validator::run::LoadOptions { follow_symlinks },
        names: Names::ARGUMENTS,
        baseline,
        write_baseline,
        ..Inputs::check(schemas)
    };
    let run =
        detach(py, "check", move || pipeline::run(inputs))?.map_err(|e| value_error(e.message))?;
    Ok(CheckReport { run })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DataFusionUdf>()?;
    m.add_function(wrap_pyfunction!(datafusion_udfs, m)?)?;
    m.add_class::<DataFusionWindowUdf>()?;
    m.add_function(wrap_pyfunction!(datafusion_udwfs, m)?)?;
    m.add_class::<CheckReport>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(point_in_time, m)?)?;
    m.add_function(wrap_pyfunction!(standard_scale, m)?)?;
    m.add_function(wrap_pyfunction!(min_max_scale, m)?)?;
    m.add_function(wrap_pyfunction!(bucketize, m)?)?;
    m.add_function(wrap_pyfunction!(xxhash64, m)?)?;
    m.add_function(wrap_pyfunction!(murmur3_hash, m)?)?;
    m.add_function(wrap_pyfunction!(hash_bucket, m)?)?;
    m.add_function(wrap_pyfunction!(dot_product, m)?)?;
    m.add_function(wrap_pyfunction!(cosine_similarity, m)?)?;
    m.add_function(wrap_pyfunction!(l2_norm, m)?)?;
    m.add_function(wrap_pyfunction!(l2_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(quantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize_int8, m)?)?;
    m.add_function(wrap_pyfunction!(haversine_km, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(tumble_start, m)?)?;
    m.add_function(wrap_pyfunction!(hop_windows, m)?)?;
    m.add_function(wrap_pyfunction!(rolling, m)?)?;
    m.add_function(wrap_pyfunction!(hop_aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(session_window, m)?)?;
    m.add_function(wrap_pyfunction!(session_aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(_value_buffer_address, m)?)?;
    m.add_function(wrap_pyfunction!(_quote, m)?)?;
    m.add_function(wrap_pyfunction!(_float64_array, m)?)?;
    Ok(())
}
