//! The DataFusion UDFs as datafusion-ffi PyCapsules, for datafusion-python.

use arrowfeat_udf::sql::ffi::{ffi_udfs, ffi_udwfs, FFI_ScalarUDF, FFI_WindowUDF};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

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
