//! This library's own runtime and session, for calls from a DataFusion loaded separately
//! (datafusion-python, through the FFI): the host's runtime and session belong to another
//! copy of tokio and DataFusion, which this library's code cannot reach.

use std::sync::{Arc, OnceLock};

use super::files;

/// The runtime that runs this library's side of an FFI table (listing, footers, the scan):
/// the host's runtime is another copy of tokio, which this library's code cannot reach.
pub(crate) fn runtime() -> datafusion::common::Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("arrowfeat-ffi")
        .enable_all()
        .build()
        .map_err(|e| {
            datafusion::common::DataFusionError::Execution(format!(
                "cannot start arrowfeat's threads for datafusion-python: {e}"
            ))
        })?;
    Ok(RUNTIME.get_or_init(|| runtime))
}

/// The session this library reads paths in when called across the FFI: the host's
/// session belongs to another DataFusion. Made once, kept for the process (the FFI's task
/// contexts refer to it).
pub(crate) fn session(
) -> datafusion::common::Result<&'static Arc<datafusion::prelude::SessionContext>> {
    static SESSION: OnceLock<Arc<datafusion::prelude::SessionContext>> = OnceLock::new();
    if let Some(session) = SESSION.get() {
        return Ok(session);
    }
    let session = Arc::new(files::session()?);
    Ok(SESSION.get_or_init(|| session))
}
