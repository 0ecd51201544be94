//! C ABI adapter: the UDFs as datafusion-ffi structs, for a DataFusion built separately and
//! loaded in the same process (datafusion-python imports them from PyCapsules).

use std::sync::Arc;

pub use datafusion_ffi::udf::FFI_ScalarUDF;
pub use datafusion_ffi::udwf::FFI_WindowUDF;

/// Every arrowfeat UDF with its name, as a datafusion-ffi `FFI_ScalarUDF`.
pub fn ffi_udfs() -> Vec<(String, FFI_ScalarUDF)> {
    super::all_udfs()
        .into_iter()
        .map(|udf| (udf.name().to_string(), FFI_ScalarUDF::from(Arc::new(udf))))
        .collect()
}

/// Every arrowfeat window function with its name, as a datafusion-ffi `FFI_WindowUDF`.
pub fn ffi_udwfs() -> Vec<(String, FFI_WindowUDF)> {
    super::all_udwfs()
        .into_iter()
        .map(|udwf| (udwf.name().to_string(), FFI_WindowUDF::from(Arc::new(udwf))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::ScalarUDFImpl;

    #[test]
    fn every_udf_crosses_the_ffi_with_its_name() {
        let udfs = ffi_udfs();
        assert_eq!(udfs.len(), super::super::all_udfs().len());
        for (name, ffi) in &udfs {
            let foreign: Arc<dyn ScalarUDFImpl> = ffi.into();
            assert_eq!(foreign.name(), name);
        }
    }
}
