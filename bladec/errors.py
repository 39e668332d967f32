"""Diagnostics: every user-facing problem is reported as ``FILE:LINE:COL: error: message``."""
from __future__ import annotations

from dataclasses import dataclass

from bladec.ir import NOWHERE, Loc


@dataclass(frozen=True)
class Diagnostic:
    loc: Loc
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.loc}: {self.severity}: {self.message}"


class BladecError(Exception):
    """A user error at a source location; the CLI prints it and exits 1."""

    def __init__(self, message: str, loc: Loc = NOWHERE) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(loc, message)

    @property
    def loc(self) -> Loc:
        return self.diagnostic.loc

    def __str__(self) -> str:
        if self.loc is NOWHERE or self.loc.line == 0:
            return f"error: {self.diagnostic.message}"
        return str(self.diagnostic)


class BladecWarning(UserWarning):
    """Something the user should hear about that does not stop the work (an input array
    nobody reads, a padding larger than asked). The library raises it with
    ``warnings.warn``; the CLI prints each on stderr as ``warning: ...``."""
