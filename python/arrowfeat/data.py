"""Feature data checked against its schema file, and the drift of current data from a
reference: what ``arrowfeat check --data`` (docs/ci.md, "Checking the data") and
``arrowfeat drift`` (docs/drift.md) do, for paths or tables in memory (pyarrow, pandas,
Polars, DuckDB or any Arrow stream), with the same rules, numbers and ``Report``."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import Any, Literal

from . import _native
from ._convert import (
    _as_of_nanos,
    _baseline,
    _check_drift_arguments,
    _check_sample_rows,
    _flag,
    _native_error,
    _not_empty,
    _save_reference,
    _skew_options,
    _type_name,
    _visible,
)
from ._registry import store_of
from ._report import Report
from .errors import ArrowfeatTypeError, ArrowfeatValueError

_Path = str | os.PathLike[str]


def _stream(argument: str, obj: Any, function: str = "check_data") -> Any:
    """A path as it is; a pandas DataFrame as a pyarrow Table; anything else passes to the
    native reader, which takes every Arrow C stream."""
    if isinstance(obj, (str, os.PathLike)):
        return os.fspath(obj)
    if type(obj).__module__.startswith("pandas"):
        import pyarrow as pa

        return pa.Table.from_pandas(obj, preserve_index=False)
    if type(obj).__name__ == "LazyFrame":
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a table, found a Polars LazyFrame; call .collect() on it first"
        )
    if not hasattr(obj, "__arrow_c_stream__"):
        raise ArrowfeatTypeError(
            f"{function}: argument `{argument}`: expected a path or a table (pyarrow, pandas, Polars, "
            f"any object with __arrow_c_stream__), found {_type_name(obj)}"
        )
    return obj


def check_data(
    data: Any | Mapping[str, Any] | None,
    schemas: _Path,
    *,
    as_of: dt.datetime | str | None = None,
    sample_rows: int = 5,
    config: _Path | None = None,
    baseline: _Path | Literal[False] | None = None,
    memory_limit: int | str | None = None,
    registry: _Path | None = None,
    feast_repo: _Path | None = None,
    data_from_store: bool = False,
) -> Report:
    """Checks feature data against its schema file(s), as ``arrowfeat check --schemas
    SCHEMAS --data ...``: ``data`` is one path or table (the schemas declare one view), or
    a mapping of view names to paths or tables. ``as_of`` pins "now" for the
    point-in-time checks (default: the current time; naive times are UTC).
    ``memory_limit`` (bytes, or a size such as "512MiB"): past it the checks spill to
    temporary files, as ``--memory-limit``. Returns the same ``Report`` as
    ``arrowfeat.feast`` (findings, ``render(format)``, ``exit_code``).

    ``registry`` (a ``feast registry-dump`` JSON file) or ``feast_repo`` (a feature repo,
    read with the Feast SDK): the schemas are checked against that store too, as ``arrowfeat
    check --registry`` does; with ``data_from_store=True`` every view that ``data`` does not
    give is read at the path its batch source names (``--data-from-store``; ``data`` may
    then be None)."""
    data_from_store = _flag("check_data", "data_from_store", data_from_store)
    if not data_from_store:
        _not_empty("check_data", "data", data)
    pairs: list[tuple[str | None, Any]]
    if isinstance(data, Mapping):
        pairs = [(str(view), _stream(f"data[{view!r}]", obj)) for view, obj in data.items()]
    elif data is None and data_from_store:
        pairs = []
    else:
        pairs = [(None, _stream("data", data))]
    _check_sample_rows("check_data", sample_rows)
    store = store_of("check_data", registry, feast_repo)
    if data_from_store and store is None:
        raise ArrowfeatValueError(
            "check_data: `data_from_store` needs `registry` or `feast_repo`: their views' batch sources say where the data is"
        )
    try:
        native = _native.check(
            os.fspath(schemas),
            None if store is None or store.registry_json is None else store.registry_json[0],
            "" if store is None or store.registry_json is None else store.registry_json[1],
            registry=None if store is None else store.registry,
            repo_dir="." if store is None else store.repo_dir,
            data_from_store=data_from_store,
            config=None if config is None else os.fspath(config),
            baseline=_baseline("check_data", baseline),
            data=pairs,
            as_of=_as_of_nanos("check_data", as_of),
            sample_rows=sample_rows,
            memory_limit=_memory_limit(memory_limit),
        )
    except ValueError as e:
        raise _native_error("check_data", e) from None
    return Report(native)


def _memory_limit(memory_limit: object) -> str | None:
    """`memory_limit` as the native size grammar reads it."""
    if memory_limit is None or isinstance(memory_limit, str):
        return memory_limit
    if isinstance(memory_limit, int) and not isinstance(memory_limit, bool) and memory_limit > 0:
        return str(memory_limit)
    raise ArrowfeatTypeError(
        "check_data: argument `memory_limit`: expected a number of bytes above 0 or a size such as '512MiB', "
        f"found {_visible(repr(memory_limit), 40)}"
    )


def _pairs(function: str, argument: str, data: Any) -> list[tuple[str | None, Any]]:
    if data is None:
        return []
    if isinstance(data, Mapping):
        return [(str(view), _stream(f"{argument}[{view!r}]", obj, function)) for view, obj in data.items()]
    return [(None, _stream(argument, data, function))]


def drift(
    current: Any | Mapping[str, Any] | None,
    schemas: _Path,
    *,
    reference: Any | Mapping[str, Any] | None = None,
    reference_profile: _Path | None = None,
    save_reference: _Path | None = None,
    config: _Path | None = None,
    baseline: _Path | None = None,
    registry: _Path | None = None,
    feast_repo: _Path | None = None,
    current_from_store: bool = False,
    reference_from_store: bool = False,
) -> Report:
    """How far each feature of ``current`` drifted from ``reference``, as ``arrowfeat
    drift --schemas SCHEMAS --reference ... --current ...`` (docs/drift.md): numeric
    features by PSI, Jensen-Shannon and Kolmogorov-Smirnov D, categorical ones by PSI,
    Jensen-Shannon and the largest change of a category's share, every feature by the
    change of its missing share; thresholds from ``[drift]`` in ``config``
    (``arrowfeat.toml``). ``current`` and ``reference`` are each one path or table (the
    schemas declare one view) or a mapping of view names to them. ``reference_profile``:
    a profile saved earlier with ``save_reference``, read instead of reference data.
    ``current=None`` with ``save_reference`` only saves the profile.

    ``current_from_store`` (``reference_from_store``): the current (reference) data of
    every view not given is the file its batch source names in the store of ``registry``
    (a ``feast registry-dump`` JSON file; relative paths from the working directory) or
    of ``feast_repo`` (a feature repo, read with the Feast SDK; relative paths from it),
    as ``arrowfeat drift --current-from-store`` reads them."""
    current_from_store = _flag("drift", "current_from_store", current_from_store)
    reference_from_store = _flag("drift", "reference_from_store", reference_from_store)
    _check_drift_arguments(
        reference, reference_profile, current, save_reference, current_from_store, reference_from_store
    )
    store = store_of("drift", registry, feast_repo)
    if (current_from_store or reference_from_store) != (store is not None):
        raise ArrowfeatValueError(
            "drift: `current_from_store` and `reference_from_store` need `registry` or `feast_repo`: their views' batch sources say where the data is"
            if store is None
            else "drift: `registry` and `feast_repo` say where each view's data is: add current_from_store=True or reference_from_store=True (arrowfeat.feast.validate_registry checks schemas against a store)"
        )
    try:
        native, profile, not_saved_because = _native.drift(
            os.fspath(schemas),
            reference=_pairs("drift", "reference", reference),
            reference_profile=None if reference_profile is None else os.fspath(reference_profile),
            current=_pairs("drift", "current", current),
            config=None if config is None else os.fspath(config),
            baseline=None if baseline is None else os.fspath(baseline),
            registry=None if store is None else store.registry,
            registry_json=None if store is None else store.registry_json,
            repo_dir="." if store is None else store.repo_dir,
            current_from_store=current_from_store,
            reference_from_store=reference_from_store,
            saving=save_reference is not None,
        )
    except ValueError as e:
        raise _native_error("drift", e) from None
    report = Report(native)
    _save_reference(report, profile, not_saved_because, save_reference)
    return report


def skew(
    serving: Any | Mapping[str, Any],
    training: Any | Mapping[str, Any],
    schemas: _Path,
    *,
    time_tolerance: str,
    serving_time: str | None = None,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
    ulps: int = 0,
    sample_rows: int = 5,
    config: _Path | None = None,
    baseline: _Path | None = None,
) -> Report:
    """Training/serving skew, as ``arrowfeat skew --schemas SCHEMAS --serving ...
    --training ...`` (docs/drift.md): each serving row is matched with the latest training
    row of its entity keys whose event time is at most ``time_tolerance`` ("0s", "5m")
    before the serving time (column ``serving_time``, default the schema's event
    timestamp), and each feature is compared; floats are equal within
    ``absolute_tolerance``, ``relative_tolerance`` (of the larger magnitude) or ``ulps``.
    The report gives per feature the mismatching, missing and extra rows with a sample.
    ``serving`` and ``training`` are each one path or table (the schemas declare one
    view) or a mapping of view names to them."""
    for argument, data, other in (("serving", serving, training), ("training", training, serving)):
        _not_empty("skew", argument, data, other)
        if data is None:
            raise ArrowfeatValueError(
                f"skew: argument `{argument}`: expected a path, a table or a mapping of views to them, found None"
            )
    options = _skew_options(time_tolerance, serving_time, absolute_tolerance, relative_tolerance, ulps, sample_rows)
    try:
        native = _native.skew(
            os.fspath(schemas),
            serving=_pairs("skew", "serving", serving),
            training=_pairs("skew", "training", training),
            config=None if config is None else os.fspath(config),
            baseline=None if baseline is None else os.fspath(baseline),
            **options,
        )
    except ValueError as e:
        raise _native_error("skew", e) from None
    return Report(native)
