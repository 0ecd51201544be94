"""A feature store's metadata for the native gate: a registry file's path (read, bounded, by
the native reader), or the JSON ``feast registry-dump`` prints, loaded from a feature repo
with the Feast SDK. One place for ``arrowfeat.feast`` and the data gate's ``registry=`` /
``feast_repo=`` arguments."""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from .errors import ArrowfeatTypeError, ArrowfeatValueError

_Path = str | os.PathLike[str]


class StoreArguments(NamedTuple):
    """The native functions' store arguments."""

    registry: str | None
    """A ``feast registry-dump`` JSON or arrowfeat store metadata file."""
    registry_json: tuple[bytes, str] | None
    """Metadata JSON with how reports name it."""
    repo_dir: str
    """Where the batch sources' relative paths start: the feature repo, else the working
    directory (as Feast reads a registry's relative paths)."""


def _path(argument: str, value: object) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise ArrowfeatTypeError(f"{argument}: expected a path, found {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str):
        raise ArrowfeatTypeError(f"{argument}: expected a text path, found bytes")
    return path


def repo_registry_json(repo_path: _Path, argument: str) -> bytes:
    """The registry of the feature repo at ``repo_path`` (``feast apply`` has written it),
    through the Feast SDK. ``argument`` names it in errors ("drift: argument
    `feast_repo`")."""
    repo = _path(argument, repo_path)
    if not os.path.isfile(os.path.join(repo, "feature_store.yaml")):
        from ._convert import _visible

        raise ArrowfeatValueError(
            f"{argument}: {_visible(repo, 200)} is not a Feast feature repo (it has no feature_store.yaml)"
        )
    try:
        from feast import FeatureStore
    except ImportError as e:  # pragma: no cover - exercised by users without Feast
        raise ImportError("reading a Feast feature repo needs Feast: pip install feast") from e
    store = FeatureStore(repo_path=repo)
    return json.dumps(store.registry.to_dict(project=store.project)).encode()


def store_of(function: str, registry: object, feast_repo: object) -> StoreArguments | None:
    """The store of ``registry`` or ``feast_repo``; None without either."""
    if registry is not None and feast_repo is not None:
        raise ArrowfeatValueError(f"{function}: give either `registry` or `feast_repo`, not both")
    if feast_repo is not None:
        repo = _path(f"{function}: argument `feast_repo`", feast_repo)
        json_bytes = repo_registry_json(repo, f"{function}: argument `feast_repo`")
        return StoreArguments(None, (json_bytes, f"Feast repo {repo}"), repo)
    if registry is not None:
        return StoreArguments(_path(f"{function}: argument `registry`", registry), None, ".")
    return None
