"""The error of a memory limit that can not be met, with the smallest one that can."""
from __future__ import annotations

from bladec.errors import BladecError
from bladec.units import format_size


class LimitError(BladecError):
    """No plan meets ``limit`` for this binding; ``smallest`` is the smallest limit that
    works by the same accounting (the device's, when the executor raises it; the
    model's, when the planner alone does)."""

    def __init__(self, limit: int, smallest: int, detail: str = "") -> None:
        self.limit, self.smallest = limit, smallest
        extra = f"; {detail}" if detail else ""
        super().__init__(f"no plan fits the limit of {format_size(limit)} ({limit} bytes) "
                         f"for this binding; the smallest limit that works is "
                         f"{format_size(smallest)} ({smallest} bytes{extra})")
