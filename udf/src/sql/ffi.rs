//! C ABI adapter: the UDFs as datafusion-ffi structs, for a DataFusion built separately and
//! loaded in the same process (datafusion-python imports them from PyCapsules).

use std::sync::Arc;

pub use datafusion::catalog::TableProvider;
pub use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
pub use datafusion_ffi::table_provider::FFI_TableProvider;
pub use datafusion_ffi::udf::FFI_ScalarUDF;
pub use datafusion_ffi::udtf::FFI_TableFunction;
pub use datafusion_ffi::udwf::FFI_WindowUDF;

use super::files::{self, FileError};
use super::foreign;

/// The `point_in_time` table function for a DataFusion loaded separately
/// (datafusion-python): its table arguments are file paths, read with arrowfeat's file
/// checks in [`foreign::session`]. `codec`: the host's logical codec, if it gives one.
pub fn ffi_point_in_time(
    codec: Option<FFI_LogicalExtensionCodec>,
) -> datafusion::common::Result<FFI_TableFunction> {
    let udtf: Arc<dyn datafusion::catalog::TableFunctionImpl> =
        Arc::new(super::point_in_time::table::PointInTimeFunction);
    let handle = Some(foreign::runtime()?.handle().clone());
    Ok(match codec {
        Some(codec) => FFI_TableFunction::new_with_ffi_codec(udtf, handle, codec),
        None => {
            // The FFI refers to the session weakly: `foreign::session` holds it for the process.
            let provider: Arc<dyn datafusion::execution::TaskContextProvider> =
                Arc::clone(foreign::session()?) as _;
            FFI_TableFunction::new(udtf, handle, &provider, None)
        }
    })
}

/// The file or directory `path` opened as a table with arrowfeat's file checks
/// ([`files::open_path`]), for a DataFusion loaded separately (datafusion-python).
pub fn open_path_for_ffi(path: &str) -> Result<Arc<dyn TableProvider>, FileError> {
    let what = format!("'{}'", arrowfeat_common::quote(path, 200));
    let runtime = foreign::runtime().map_err(|e| FileError {
        message: format!("{what}: {e}"),
        kind: files::FileErrorKind::Unreadable,
    })?;
    runtime.block_on(async {
        let ctx = files::session().map_err(|e| FileError {
            message: format!("{what}: {e}"),
            kind: files::FileErrorKind::Unreadable,
        })?;
        files::open_path(&ctx.state(), &what, path).await
    })
}

/// `provider` as a datafusion-ffi table for a host whose logical codec is `codec`, run on
/// this library's runtime.
pub fn ffi_table(
    provider: Arc<dyn TableProvider>,
    codec: FFI_LogicalExtensionCodec,
) -> datafusion::common::Result<FFI_TableProvider> {
    Ok(FFI_TableProvider::new_with_ffi_codec(
        provider,
        false,
        Some(foreign::runtime()?.handle().clone()),
        codec,
    ))
}

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
