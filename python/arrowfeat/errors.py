"""arrowfeat's exceptions. Every error arrowfeat raises is an :class:`ArrowfeatError`; each
also subclasses the built-in exception code written before these classes existed catches
(``ValueError`` for bad values, ``TypeError`` for wrong types), so ``except ValueError``
keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ArrowfeatError", "ArrowfeatInternalError", "ArrowfeatKeyError", "ArrowfeatTypeError", "ArrowfeatValueError"]


class ArrowfeatError(Exception):
    """Base class of every arrowfeat error."""


class ArrowfeatValueError(ArrowfeatError, ValueError):
    """An argument has the right type but a value the function does not accept (a zero
    standard deviation, an unknown aggregation, a bad schema file, ...)."""

    report: Any = None
    """The run's ``Report`` when the run finished but what was asked after it could not be
    done (``drift(save_reference=...)`` refusing a partial profile): its findings say
    why."""


class ArrowfeatTypeError(ArrowfeatError, TypeError):
    """An argument has a type the function does not accept."""


class ArrowfeatKeyError(ArrowfeatError, KeyError):
    """A name the function looks up is not there (a feature a Feast feature view does not
    declare, a column its source file lacks), where the library it stands in for raises
    ``KeyError``."""

    def __str__(self) -> str:
        # KeyError prints its argument as a repr (quotes, escapes); the message reads plain.
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class ArrowfeatInternalError(ArrowfeatError, RuntimeError):
    """A bug in arrowfeat (a panic in the native code, caught at the boundary): please
    report it with the message."""
