//! arrowfeat for datafusion-python, as datafusion-ffi PyCapsules: the UDFs, the
//! `point_in_time` table function, and file tables read with arrowfeat's checks.

use std::sync::Arc;

use arrowfeat_udf::sql::ffi::{
    ffi_point_in_time, ffi_table, ffi_udfs, ffi_udwfs, open_path_for_ffi,
    FFI_LogicalExtensionCodec, FFI_ScalarUDF, FFI_WindowUDF, TableProvider,
};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::convert::{detach, type_error, value_error};

/// The host's logical codec, from a datafusion-python session (or `None` when it offers
/// none).
fn host_codec(session: Option<&Bound<'_, PyAny>>) -> PyResult<Option<FFI_LogicalExtensionCodec>> {
    let Some(session) = session.filter(|s| !s.is_none()) else {
        return Ok(None);
    };
    if !session.hasattr("__datafusion_logical_extension_codec__")? {
        return Ok(None);
    }
    let capsule = session.call_method0("__datafusion_logical_extension_codec__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        type_error("expected a datafusion-python session whose logical codec is a PyCapsule")
    })?;
    let pointer = capsule.pointer_checked(Some(c"datafusion_logical_extension_codec"))?;
    // The capsule holds the host's codec while the session lives; it is cloned.
    Ok(Some(
        unsafe { pointer.cast::<FFI_LogicalExtensionCodec>().as_ref() }.clone(),
    ))
}

/// The `point_in_time` table function for datafusion-python
/// (`ctx.register_udtf(datafusion.udtf(obj, "point_in_time"))`): its tables are file paths.
#[pyclass(frozen, name = "PointInTimeFunction", module = "arrowfeat._native")]
pub(crate) struct PointInTimeFunction;

#[pymethods]
impl PointInTimeFunction {
    #[new]
    fn new() -> Self {
        Self
    }

    #[pyo3(signature = (session = None))]
    fn __datafusion_table_function__<'py>(
        &self,
        py: Python<'py>,
        session: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let function = ffi_point_in_time(host_codec(session)?)
            .map_err(|e| value_error(format!("point_in_time: {e}")))?;
        PyCapsule::new_with_value(py, function, c"datafusion_table_function")
    }
}

/// A file or directory opened with arrowfeat's file checks, for datafusion-python's
/// `ctx.register_table(name, table)` (the `__datafusion_table_provider__` protocol).
#[pyclass(frozen, name = "FileTable", module = "arrowfeat._native")]
pub(crate) struct FileTable {
    provider: Arc<dyn TableProvider>,
    path: String,
}

#[pymethods]
impl FileTable {
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = host_codec(Some(session))?.ok_or_else(|| {
            type_error("register_path: expected a datafusion-python session with a logical codec")
        })?;
        let table = ffi_table(Arc::clone(&self.provider), codec)
            .map_err(|e| value_error(format!("register_path: {e}")))?;
        PyCapsule::new_with_value(py, table, c"datafusion_table_provider")
    }

    fn __repr__(&self) -> String {
        format!(
            "<arrowfeat file table {}>",
            arrowfeat_common::quote(&self.path, 200)
        )
    }
}

/// Opens `path` as a table with arrowfeat's file checks; a path that holds no table or
/// data that cannot be read is a ValueError, in one line naming the file.
#[pyfunction]
pub(crate) fn file_table(py: Python<'_>, path: String) -> PyResult<FileTable> {
    let provider = detach(py, "register_path", || open_path_for_ffi(&path))?
        .map_err(|e| value_error(format!("register_path: {}", e.message)))?;
    Ok(FileTable { provider, path })
}

/// A class holding one FFI function for datafusion-python, which recognises scalar and
/// window functions by the name of their PyCapsule method: hence two classes, one macro.
macro_rules! datafusion_function_class {
    ($(#[$doc:meta])* $class:ident, $ffi:ty, $method:ident, $capsule:literal, $what:literal) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "arrowfeat._native")]
        pub(crate) struct $class {
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
pub(crate) fn datafusion_udwfs() -> Vec<DataFusionWindowUdf> {
    ffi_udwfs()
        .into_iter()
        .map(|(name, ffi)| DataFusionWindowUdf { name, ffi })
        .collect()
}

/// Every arrowfeat UDF, ready for datafusion-python.
#[pyfunction]
pub(crate) fn datafusion_udfs() -> Vec<DataFusionUdf> {
    ffi_udfs()
        .into_iter()
        .map(|(name, ffi)| DataFusionUdf { name, ffi })
        .collect()
}
