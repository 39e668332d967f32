"""What ``f.lower(*args)`` and ``f.listing`` give a ``bladec.jit`` function's caller:
the optimized listing for given arguments, or, before any call has traced it, an error
that ``hasattr`` reads as an absent attribute (as ``jax.jit``'s callers expect)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bladec.errors import BladecError


class NotTracedError(BladecError, AttributeError):
    """An attribute that exists only once the function is traced (``listing``): an
    AttributeError too, so that ``hasattr`` and ``getattr(f, name, default)`` answer."""


@dataclass
class Lowered:
    """The optimized listing for given arguments (what ``f.lower(*args)`` returns)."""
    module: Any
    names: dict[str, str]          # bladec symbol -> the caller's dim name

    def as_text(self) -> str:
        from bladec.printer import format_module
        return format_module(self.module)

    def __str__(self) -> str:
        return self.as_text()
