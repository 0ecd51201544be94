//! The point-in-time join of two Arrow tables: the one join every engine calls.

use crate::convert::*;
use arrow_pyarrow::ToPyArrow;
use arrowfeat_udf::kernels::point_in_time::join::{
    point_in_time_join, ttl_from_nanos, FeatureSpec, PointInTimeJoin,
};
use arrowfeat_udf::kernels::point_in_time::{PitAggregation, PointInTimeOptions};
use arrowfeat_udf::kernels::window::Closed;
use arrowfeat_udf::kernels::KernelError;
use pyo3::prelude::*;

/// The point-in-time join of two Arrow tables
/// ([`arrowfeat_udf::kernels::point_in_time::join::point_in_time_join`]): the spine with
/// one column per feature. `features`: `(column, aggregation, period in ns or None,
/// output name or None)`; `ttl` in ns (0: no limit). Returns a `pyarrow.RecordBatch`.
/// `function`: the name errors give (the caller's, e.g. `get_historical_features`).
#[pyfunction]
#[pyo3(signature = (spine, events, by, spine_time, event_time, features, *, created = None, ttl = None, closed = "right", null_keys_match = false, created_cutoff = false, threads = 1, function = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn point_in_time(
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
