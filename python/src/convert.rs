//! Arguments in from Python (Arrow arrays, scalars, tables through the C Data and
//! Stream interfaces, imported without copying) and results out, errors as Python
//! exceptions, and the GIL released around the work.

use std::cell::Cell;
use std::sync::{Arc, Once};

use arrow::array::RecordBatchReader;
use arrow::array::{make_array, Array, ArrayData, ArrayRef, Datum, Scalar};
use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow::record_batch::RecordBatch;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrowfeat_udf::kernels::{self, ErrorKind, KernelError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// A kernel argument imported from Python.
pub(crate) enum Arg {
    Column(ArrayRef),
    Scalar(Scalar<ArrayRef>),
}

impl Arg {
    pub(crate) fn datum(&self) -> &dyn Datum {
        match self {
            Arg::Column(a) => a,
            Arg::Scalar(s) => s,
        }
    }
}

pub(crate) fn import(function: &str, argument: &str, obj: &Bound<'_, PyAny>) -> PyResult<Arg> {
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
            catch_quietly(|| ArrayData::from_pyarrow_bound(o).map(make_array))
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
pub(crate) fn sliced_struct_of_structs(
    pyarrow: &Bound<'_, PyAny>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    pub(crate) fn nests_struct(types: &Bound<'_, PyAny>, t: &Bound<'_, PyAny>) -> PyResult<bool> {
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
pub(crate) fn arrowfeat_error(class: &str, message: String) -> PyErr {
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

pub(crate) fn value_error(message: impl Into<String>) -> PyErr {
    arrowfeat_error("ArrowfeatValueError", message.into())
}

pub(crate) fn type_error(message: impl Into<String>) -> PyErr {
    arrowfeat_error("ArrowfeatTypeError", message.into())
}

/// Runs `f` with the GIL released. A panic inside (a bug) becomes a `RuntimeError` that
/// names the function, never a `PanicException`, which `except Exception` does not catch.
pub(crate) fn detach<T: Send>(
    py: Python<'_>,
    function: &str,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    py.detach(|| catch_quietly(f)).map_err(|payload| {
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

thread_local! {
    /// This thread is inside [`catch_quietly`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// `f`'s result, or the payload of its panic, which the caller turns into an error: the
/// panic hook keeps quiet about it, as the user gets the error instead of Rust's panic
/// line on stderr.
fn catch_quietly<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    quiet_hook();
    let was = CATCHING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    result
}

/// Installs, once, a panic hook that passes every panic to the hook it replaces except
/// those on a thread inside [`catch_quietly`], which come back to the caller as an error.
/// Panics on other threads (a reader's blocking task, a scoped worker) still print: one
/// that nobody catches must not go unseen.
fn quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

pub(crate) fn to_py_err(e: KernelError) -> PyErr {
    match e.kind {
        ErrorKind::WrongType => type_error(e.to_string()),
        ErrorKind::BadValue => value_error(e.to_string()),
    }
}

pub(crate) fn export(py: Python<'_>, array: ArrayRef) -> PyResult<Py<PyAny>> {
    Ok(array.to_data().to_pyarrow(py)?.unbind())
}

/// Imports `objs`, runs `kernel` with the GIL released, exports the result.
pub(crate) fn run<const N: usize>(
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

pub(crate) fn arc<A: Array + 'static>(r: kernels::Result<A>) -> kernels::Result<ArrayRef> {
    r.map(|a| Arc::new(a) as ArrayRef)
}

pub(crate) fn import_all(function: &str, columns: &Bound<'_, PyList>) -> PyResult<Vec<Arg>> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| import(function, &format!("#{}", i + 1), &c))
        .collect()
}

/// An array argument of the window functions (scalars are not accepted there).
pub(crate) fn import_column(
    function: &str,
    argument: &str,
    obj: &Bound<'_, PyAny>,
) -> PyResult<ArrayRef> {
    match import(function, argument, obj)? {
        Arg::Column(a) => Ok(a),
        Arg::Scalar(_) => Err(type_error(format!(
            "{function}: argument `{argument}`: expected a column (pyarrow Array), found a scalar"
        ))),
    }
}

pub(crate) fn import_keys(
    function: &str,
    keys: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<ArrayRef>> {
    keys.filter(|k| !k.is_none())
        .map(|k| import_column(function, "by", k))
        .transpose()
}

/// A pyarrow Table (or any object with `__arrow_c_stream__`) as one record batch:
/// imported without copying when it has one chunk.
pub(crate) fn import_table(
    function: &str,
    argument: &str,
    obj: &Bound<'_, PyAny>,
) -> PyResult<RecordBatch> {
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

/// The batches as a Python list of `pyarrow.RecordBatch` (zero-copy).
pub(crate) fn batches_to_pyarrow(py: Python<'_>, batches: Vec<RecordBatch>) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for batch in batches {
        list.append(batch.to_pyarrow(py)?)?;
    }
    Ok(list.into_any().unbind())
}
