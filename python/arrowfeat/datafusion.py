"""Register arrowfeat's functions in a datafusion-python ``SessionContext``.

    from datafusion import SessionContext
    import arrowfeat.datafusion

    ctx = SessionContext()
    arrowfeat.datafusion.register(ctx)
    ctx.sql("SELECT hash_bucket('user_42', 1000)").to_arrow_table()

The UDFs cross into datafusion-python through datafusion-ffi PyCapsules. This build of
arrowfeat uses datafusion-ffi 55, so it needs datafusion-python 55.x (``pip install
"datafusion>=55,<56"``); other major versions are refused, as the FFI layout changes
between them.
"""

from __future__ import annotations

from typing import Any

from . import _native

SUPPORTED_MAJOR = 55


def _check_version() -> None:
    try:
        import datafusion
    except ImportError as e:  # pragma: no cover - exercised only without datafusion
        raise ImportError('arrowfeat.datafusion needs datafusion-python 55.x: pip install "datafusion>=55,<56"') from e
    major = int(datafusion.__version__.split(".")[0])
    if major != SUPPORTED_MAJOR:
        raise RuntimeError(
            f"arrowfeat.datafusion: datafusion-python {datafusion.__version__} is installed, but this "
            f"arrowfeat build speaks the FFI of datafusion {SUPPORTED_MAJOR}.x; install "
            f'"datafusion>={SUPPORTED_MAJOR},<{SUPPORTED_MAJOR + 1}"'
        )


def udfs() -> list[Any]:
    """Every arrowfeat function as a datafusion-python ``ScalarUDF``."""
    _check_version()
    from datafusion import udf

    return [udf(f) for f in _native.datafusion_udfs()]


def udwfs() -> list[Any]:
    """Every arrowfeat window function (``rolling_*``, ``session_window``) as a
    datafusion-python ``WindowUDF``."""
    _check_version()
    from datafusion import udwf

    return [udwf(f) for f in _native.datafusion_udwfs()]


def point_in_time() -> Any:
    """The ``point_in_time`` table function as a datafusion-python ``TableFunction``. Its
    spine and events are file paths, read with arrowfeat's file checks (tables registered
    in the session are not visible to it across the FFI)."""
    _check_version()
    from datafusion import udtf

    return udtf(_native.PointInTimeFunction(), "point_in_time")


def register(ctx: Any) -> None:
    """Registers every arrowfeat function (scalar, window and the ``point_in_time`` table
    function) in a datafusion-python ``SessionContext``."""
    for f in udfs():
        ctx.register_udf(f)
    for f in udwfs():
        ctx.register_udwf(f)
    ctx.register_udtf(point_in_time())


def register_path(ctx: Any, name: str, path: str) -> None:
    """Registers the Parquet, CSV or JSON file or directory ``path`` as table ``name`` in a
    datafusion-python ``SessionContext``, read with arrowfeat's file checks (the same as
    ``arrowfeat sql`` and ``arrowfeat_udf::sql::files::register_path``; see docs/files.md).
    datafusion-python's own ``register_parquet`` / ``FROM 'path'`` read without them.
    Raises ``ValueError`` naming the file when the path holds no table or cannot be read."""
    _check_version()
    ctx.register_table(name, _native.file_table(path))
