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


class DeviceMemoryError(BladecError):
    """The device's allocator refused an allocation while bladec compiled or ran a step:
    memory the plan does not know of was in use (another process on the device, arrays
    the caller holds, or an allocator capped below the limit, as
    ``XLA_PYTHON_CLIENT_MEM_FRACTION`` caps it). A user's condition, not a bug: the CLI
    says so in one line and exits 1."""

    def __init__(self, detail: str) -> None:
        first = detail.strip().splitlines()[0] if detail.strip() else "out of memory"
        super().__init__(
            f"the device ran out of memory ({first[:300]}); the plan counts only what "
            "it allocates itself: free the device of other work, or give the allocator "
            "at least the limit (XLA_PYTHON_CLIENT_MEM_FRACTION)")

    @classmethod
    def of(cls, exc: BaseException) -> "DeviceMemoryError | None":
        """This error for XLA's out-of-memory status (``RESOURCE_EXHAUSTED``, raised as
        jaxlib's runtime error, whose type varies across its versions), else None.
        XLA runs asynchronously, so the status can surface where the results are
        waited for, not only where a step was dispatched."""
        text = str(exc)
        return cls(text[text.index("RESOURCE_EXHAUSTED"):]) \
            if "RESOURCE_EXHAUSTED" in text else None


class BladecWarning(UserWarning):
    """Something the user should hear about that does not stop the work (an input array
    nobody reads, a padding larger than asked). The library raises it with
    ``warnings.warn``; the CLI prints each on stderr as ``warning: ...``."""
