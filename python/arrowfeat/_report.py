"""The report of a check: the same content as ``arrowfeat check --format json``, for the
Feast module and the data checks alike."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import _native

FORMATS = ("text", "json", "junit", "sarif", "github", "markdown")


@dataclass(frozen=True)
class Finding:
    """One failed (or noteworthy) check: a rule id from docs/rules.md and where it fired."""

    rule: str
    severity: str  # "error", "warning" or "info"
    file: str
    line: int  # 1-based; 0 when the finding concerns the whole file
    column: int
    view: str | None
    subject: str
    expected: str
    actual: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{self.severity}[{self.rule}] {where}: {self.message}"


class Report:
    """The outcome of a validation: the same content as ``arrowfeat check --format json``.

    It wraps the validator's report: ``render`` and ``exit_code_with`` do not check again."""

    def __init__(self, native: _native.CheckReport):
        self._native = native
        self.exit_code: int = native.exit_code()
        self.data: dict[str, Any] = json.loads(native.render("json"))

    @property
    def summary(self) -> dict[str, int]:
        return dict(self.data["summary"])

    @property
    def findings(self) -> list[Finding]:
        return [
            Finding(
                rule=check["rule"],
                severity=check["status"],
                file=file["path"],
                line=check["line"],
                column=check["column"],
                view=file["view"],
                subject=check["subject"],
                expected=check["expected"],
                actual=check["actual"],
                message=check["message"],
            )
            for file in self.data["files"]
            for check in file["checks"]
            if check["status"] != "pass"
        ]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        """True when nothing fails at error level (the exit code is 0)."""
        return self.exit_code == 0

    def render(self, format: str = "text", deny_warnings: bool = False, *, verbose: bool = False) -> str:
        """The report in one of ``FORMATS``, exactly as ``arrowfeat check --format`` prints it.
        Warnings fail it with ``deny_warnings`` or ``deny_warnings = true`` in the config.
        Text lists findings and a summary; ``verbose=True`` every check (``--verbose``)."""
        return self._native.render(format, deny_warnings, verbose=verbose)

    def exit_code_with(self, deny_warnings: bool) -> int:
        return self._native.exit_code(deny_warnings)

    def __repr__(self) -> str:
        s = self.summary
        return f"<arrowfeat.feast.Report against {self.data['against']}: {s['views']} view(s): {s['errors']} error(s), {s['warnings']} warning(s), exit code {self.exit_code}>"
