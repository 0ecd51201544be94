//! Event-time windows and durations.

use std::sync::Arc;

use crate::convert::*;
use arrow::array::ArrayRef;
use arrowfeat_udf::kernels::window::{self, Aggregation, Closed};
use pyo3::prelude::*;

/// Parses an interval string ("500ns", "5m", "1h 30m") into nanoseconds.
#[pyfunction]
pub(crate) fn parse_duration(function: &str, argument: &str, text: &str) -> PyResult<i64> {
    // Kernel errors carry a static function name; Python passes its own.
    // The kernel error's own rendering escapes and cuts what the text quotes.
    window::parse_duration("duration", argument, text)
        .map_err(|e| value_error(e.called_as(function.to_string()).to_string()))
}

#[pyfunction]
pub(crate) fn tumble_start(
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
pub(crate) fn hop_windows(
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
pub(crate) fn rolling(
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
pub(crate) fn hop_aggregate(
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
pub(crate) fn session_window(
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
pub(crate) fn session_aggregate(
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
