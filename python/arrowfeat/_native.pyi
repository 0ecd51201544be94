"""Native kernels (Rust). Arguments are pyarrow Arrays (columns) or pyarrow Scalars
(constants); use the typed wrappers in `arrowfeat` rather than calling these directly."""

from typing import Any, Literal

import pyarrow as pa

_Arg = pa.Array | pa.Scalar

def standard_scale(x: _Arg, mean: _Arg, std: _Arg) -> pa.Array: ...
def min_max_scale(x: _Arg, lo: _Arg, hi: _Arg) -> pa.Array: ...
def bucketize(x: _Arg, boundaries: list[float]) -> pa.Array: ...
def xxhash64(columns: list[_Arg]) -> pa.Array: ...
def murmur3_hash(columns: list[_Arg]) -> pa.Array: ...
def hash_bucket(columns: list[_Arg], num_buckets: _Arg) -> pa.Array: ...
def dot_product(a: _Arg, b: _Arg) -> pa.Array: ...
def cosine_similarity(a: _Arg, b: _Arg) -> pa.Array: ...
def l2_norm(a: _Arg) -> pa.Array: ...
def l2_normalize(a: _Arg) -> pa.Array: ...
def quantize_int8(x: _Arg, scale: _Arg, zero_point: _Arg) -> pa.Array: ...
def dequantize_int8(q: _Arg, scale: _Arg, zero_point: _Arg) -> pa.Array: ...
def haversine_km(lat1: _Arg, lon1: _Arg, lat2: _Arg, lon2: _Arg) -> pa.Array: ...
def _value_buffer_address(array: pa.Array) -> int: ...
def _quote(text: str, limit: int) -> str: ...
def _float64_array(values: list[float]) -> tuple[pa.Array, int]: ...

class CheckReport:
    @property
    def deny_warnings(self) -> bool: ...
    def exit_code(self, deny_warnings: bool = False) -> int: ...
    def render(self, format: str = "text", deny_warnings: bool = False, *, verbose: bool = False) -> str: ...

def check(
    schemas: str,
    registry_json: bytes | None = None,
    against: str = "",
    *,
    previous: str | None = None,
    config: str | None = None,
    compatibility: str | None = None,
    deny_warnings: bool = False,
    follow_symlinks: bool = False,
    baseline: str | Literal[False] | None = None,
    write_baseline: str | None = None,
    data: list[tuple[str | None, Any]] = ...,
    as_of: int | None = None,
    sample_rows: int = 5,
    counted: list[tuple[str | None, list[tuple[str, list[str]]]]] = ...,
    memory_limit: str | None = None,
    registry: str | None = None,
    repo_dir: str = ".",
    data_from_store: bool = False,
) -> CheckReport: ...
def schema_views(schemas: str) -> list[tuple[str | None, str, bytes, list[str], str]]: ...
def count_part(
    schema_label: str, schema_bytes: bytes, source: str, data: Any, *, as_of: int, sample_rows: int
) -> str: ...
def skew(
    schemas: str,
    *,
    serving: list[tuple[str | None, Any]],
    training: list[tuple[str | None, Any]],
    time_tolerance: str,
    serving_time: str | None = None,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
    ulps: int = 0,
    sample_rows: int = 5,
    config: str | None = None,
    baseline: str | None = None,
    compared: list[tuple[str | None, Any, list[tuple[str, list[str]]]]] = ...,
) -> CheckReport: ...
def skew_part(
    schema_label: str,
    schema_bytes: bytes,
    serving_label: str,
    training_label: str,
    serving: Any,
    training: Any,
    *,
    time_tolerance: str,
    serving_time: str | None = None,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
    ulps: int = 0,
    sample_rows: int = 5,
) -> str: ...
def check_skew_options(
    *,
    time_tolerance: str,
    serving_time: str | None = None,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
    ulps: int = 0,
    sample_rows: int = 5,
) -> None: ...
def drift(
    schemas: str,
    *,
    reference: list[tuple[str | None, Any]] = ...,
    reference_profile: str | None = None,
    current: list[tuple[str | None, Any]] = ...,
    config: str | None = None,
    baseline: str | None = None,
    reference_parts: list[tuple[str | None, Any, list[tuple[str, list[str]]]]] = ...,
    current_parts: list[tuple[str | None, Any, list[tuple[str, list[str]]]]] = ...,
    registry: str | None = None,
    registry_json: tuple[bytes, str] | None = None,
    repo_dir: str = ".",
    current_from_store: bool = False,
    reference_from_store: bool = False,
    saving: bool = False,
) -> tuple[CheckReport, str, str | None]: ...
def drift_part(
    schema_label: str, schema_bytes: bytes, source: str, data: Any, *, reference_profile: str | None = None
) -> str: ...
def parse_duration(function: str, argument: str, text: str) -> int: ...
def tumble_start(ts: pa.Array, size: int, offset: int) -> pa.Array: ...
def hop_windows(ts: pa.Array, size: int, step: int, offset: int) -> pa.Array: ...
def rolling(
    keys: pa.Array | None, ts: pa.Array, values: pa.Array, period: int, closed: str, agg: str, threads: int = 0
) -> pa.Array: ...
def hop_aggregate(
    keys: pa.Array | None, ts: pa.Array, values: pa.Array, size: int, step: int, offset: int, agg: str, threads: int = 0
) -> list[pa.RecordBatch]: ...
def session_window(keys: pa.Array | None, ts: pa.Array, gap: int, threads: int = 0) -> pa.Array: ...
def session_aggregate(
    keys: pa.Array | None, ts: pa.Array, values: pa.Array, gap: int, agg: str, threads: int = 0
) -> list[pa.RecordBatch]: ...

class DataFusionWindowUdf:
    @property
    def name(self) -> str: ...
    def __datafusion_window_udf__(self) -> object: ...

def datafusion_udwfs() -> list[DataFusionWindowUdf]: ...

class DataFusionUdf:
    @property
    def name(self) -> str: ...
    def __datafusion_scalar_udf__(self) -> object: ...

def datafusion_udfs() -> list[DataFusionUdf]: ...

class PointInTimeFunction:
    def __init__(self) -> None: ...
    def __datafusion_table_function__(self, session: object = None) -> object: ...

class FileTable:
    def __datafusion_table_provider__(self, session: object) -> object: ...

def file_table(path: str) -> FileTable: ...
def point_in_time(
    spine: pa.Table,
    events: pa.Table,
    by: list[str],
    spine_time: str,
    event_time: str,
    features: list[tuple[str, str, int | None, str | None]],
    *,
    created: str | None = None,
    ttl: int | None = None,
    closed: str = "right",
    null_keys_match: bool = False,
    created_cutoff: bool = False,
    threads: int = 1,
    function: str | None = None,
) -> pa.RecordBatch: ...
