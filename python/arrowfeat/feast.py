"""Validate Feast feature views against arrowfeat feature schema files.

The checks, rule ids and report formats are those of ``arrowfeat check``: this module
turns Feast objects into the same registry JSON that ``feast registry-dump`` prints and
hands it to the validator compiled into ``arrowfeat._native``.

    from arrowfeat.feast import validate_feature_view, validate_repo
    report = validate_repo("feature_repo/", "schemas/")
    if not report.ok:
        print(report.render("text"))

The run is the validator's own pipeline, as in ``arrowfeat check``: ``arrowfeat.toml`` in
the working directory applies (or the ``config`` file given), and a ``Report`` renders in
every format without checking again.

From a shell (exit codes as ``arrowfeat check``: 0 pass, 1 findings, 2 unreadable input)::

    python -m arrowfeat.feast check feature_repo/ schemas/ [--format github] [--deny-warnings] [--config FILE]

Training sets: ``get_historical_features(store, entity_df, features)`` returns what Feast's
``store.get_historical_features(entity_df, features).to_df()`` returns with its file
offline store, from the arrowfeat join; or configure the feature repo's offline store as
``type: arrowfeat.feast.ArrowfeatOfflineStore`` (``ArrowfeatOfflineStore`` and
``ArrowfeatOfflineStoreConfig``, loaded from here when Feast asks for them) and keep
calling Feast. See docs/feast.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from . import _native
from ._convert import _baseline, _visible
from ._feast_training import get_historical_features
from ._registry import repo_registry_json
from ._report import FORMATS, Finding, Report
from .errors import ArrowfeatKeyError

__all__ = [
    "ArrowfeatKeyError",
    "Finding",
    "Report",
    "get_historical_features",
    "main",
    "validate_feature_view",
    "validate_registry",
    "validate_repo",
]


# The Feast offline store, imported when asked for (it needs Feast; the rest of this
# module does not). Not in __all__, so that `import *` works without Feast.
_OFFLINE_STORE = ("ArrowfeatOfflineStore", "ArrowfeatOfflineStoreConfig", "ArrowfeatRetrievalJob")


def __getattr__(name: str) -> Any:
    if name in _OFFLINE_STORE:
        try:
            from . import _feast_store
        except ImportError as e:
            if e.name is not None and e.name.split(".")[0] != "feast":
                raise
            raise ImportError(f"arrowfeat.feast.{name} needs Feast: pip install feast") from e
        return getattr(_feast_store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_Path = str | os.PathLike[str]


_Baseline = _Path | Literal[False] | None


def _check(
    function: str,
    schemas: _Path,
    registry_json: bytes,
    against: str,
    config: _Path | None,
    baseline: _Baseline = None,
    write_baseline: _Path | None = None,
) -> Report:
    return Report(
        _native.check(
            os.fspath(schemas),
            registry_json,
            against,
            config=None if config is None else os.fspath(config),
            baseline=_baseline(function, baseline),
            write_baseline=None if write_baseline is None else os.fspath(write_baseline),
        )
    )


def _feast() -> Callable[..., str]:
    try:
        import feast  # noqa: F401
        from google.protobuf.json_format import MessageToJson
    except ImportError as e:  # pragma: no cover - exercised by users without Feast
        raise ImportError("arrowfeat.feast needs Feast: pip install feast") from e
    to_json: Callable[..., str] = MessageToJson
    return to_json


def _proto_dict(obj: Any) -> dict[str, Any]:
    # The same conversion `feast registry-dump` applies, so findings equal the CLI's.
    message_to_json = _feast()
    parsed: dict[str, Any] = json.loads(message_to_json(obj.to_proto(), sort_keys=True))
    return parsed


def validate_feature_view(
    feature_view: Any,
    schema_path: _Path,
    *,
    entities: Iterable[Any] = (),
    config: _Path | None = None,
    baseline: _Baseline = None,
    write_baseline: _Path | None = None,
) -> Report:
    """Checks one Feast ``FeatureView`` (its schema fields, entity columns, batch source
    timestamp fields, TTL and tags) against a schema file or a directory of them.

    ``entities``: the view's ``feast.Entity`` objects, to check join keys and their types
    against the schema; without them only the view's entity columns are compared.
    ``config``: an ``arrowfeat.toml``; by default the one in the working directory, if any.
    ``baseline``: accepted findings (``arrowfeat check --baseline``); by default
    ``arrowfeat-baseline.json`` in the working directory, if any; ``False``: none.
    ``write_baseline``: write today's findings to this file, then check with it.
    """
    registry = {
        "project": getattr(feature_view, "project", None) or "(in memory)",
        "entities": [_proto_dict(e) for e in entities],
        "featureViews": [_proto_dict(feature_view)],
    }
    return _check(
        "validate_feature_view",
        schema_path,
        json.dumps(registry).encode(),
        f"Feast feature view {feature_view.name}",
        config,
        baseline,
        write_baseline,
    )


def validate_registry(
    registry: _Path,
    schemas: _Path,
    *,
    config: _Path | None = None,
    baseline: _Baseline = None,
    write_baseline: _Path | None = None,
) -> Report:
    """Checks the schema files under ``schemas`` against a ``feast registry-dump`` JSON file
    (or arrowfeat store metadata): ``arrowfeat check --registry``, without Feast installed.
    ``config``, ``baseline`` and ``write_baseline`` as in ``validate_feature_view``."""
    with open(registry, "rb") as f:
        registry_json = f.read()
    return _check("validate_registry", schemas, registry_json, os.fspath(registry), config, baseline, write_baseline)


def validate_repo(
    repo_path: _Path,
    schemas_dir: _Path,
    *,
    config: _Path | None = None,
    baseline: _Baseline = None,
    write_baseline: _Path | None = None,
) -> Report:
    """Loads the ``FeatureStore`` of a feature repo (whose registry ``feast apply`` has
    written) and checks every schema file under ``schemas_dir`` against it. ``config``,
    ``baseline`` and ``write_baseline`` as in ``validate_feature_view``."""
    _feast()
    return _check(
        "validate_repo",
        schemas_dir,
        repo_registry_json(repo_path, "validate_repo: argument `repo_path`"),
        f"Feast repo {os.fspath(repo_path)}",
        config,
        baseline,
        write_baseline,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arrowfeat.feast", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check schema files against a Feast feature repo")
    check.add_argument("repo", help="Feast feature repo (directory with feature_store.yaml)")
    check.add_argument("schemas", help="schema file or directory of *.yaml files")
    check.add_argument("--format", default="text", choices=FORMATS)
    check.add_argument("--deny-warnings", action="store_true")
    check.add_argument("-v", "--verbose", action="store_true", help="text: every check, not only findings")
    check.add_argument("--config", help="arrowfeat.toml to use (default: ./arrowfeat.toml if present)")
    accepted = check.add_mutually_exclusive_group()
    accepted.add_argument("--baseline", help="accepted findings (default: ./arrowfeat-baseline.json if present)")
    accepted.add_argument("--no-baseline", action="store_true", help="do not read ./arrowfeat-baseline.json")
    accepted.add_argument("--write-baseline", metavar="FILE", help="write today's findings to FILE, then check")
    args = parser.parse_args(argv)

    if not os.path.isfile(os.path.join(args.repo, "feature_store.yaml")):
        print(f"arrowfeat.feast: error: {args.repo}: not a Feast feature repo (no feature_store.yaml)", file=sys.stderr)
        return 2
    try:
        report = validate_repo(
            args.repo,
            args.schemas,
            config=args.config,
            baseline=False if args.no_baseline else args.baseline,
            write_baseline=args.write_baseline,
        )
    except ImportError as e:
        print(f"arrowfeat.feast: error: {_visible(str(e), 2000)}", file=sys.stderr)
        return 2
    except ValueError as e:  # unreadable schemas or registry: the CLI's exit code 2
        print(f"arrowfeat.feast: error: {_visible(str(e), 4000)}", file=sys.stderr)
        return 2
    except Exception as e:  # a broken feature repo: Feast raises many kinds
        # Feast's message quotes the repo's files (feature_store.yaml, definitions):
        # escaped and cut like everything else printed from a file.
        detail = " ".join(str(e).split()) or type(e).__name__
        print(
            f"arrowfeat.feast: error: cannot load the Feast repo {_visible(str(args.repo), 400)}: "
            f"{type(e).__name__}: {_visible(detail, 2000)}",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(report.render(args.format, args.deny_warnings, verbose=args.verbose))
    return report.exit_code_with(args.deny_warnings)


if __name__ == "__main__":
    sys.exit(main())
