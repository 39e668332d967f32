"""How many bytes a plan may use at each step of its trace.

The user's limit is one number, but the per-op model (trace.py) is only an estimate of
what the device holds: inside a compiled segment XLA allocates every output up front,
keeps the segment's arguments until it ends, and adds temporaries of its own. The
executor measures that difference per segment from the compiled executables and hands
it back to the planner as a *margin* per compute op: the planner then keeps the model
below ``limit - margin`` at the steps of that op, and below ``limit`` elsewhere. Margins
only grow, so the closed loop (plan, compile, measure, tighten) ends.
"""
from __future__ import annotations

from bladec.runtime.planning.trace import Measure, Step, position_ops


class Budget:
    """``limit`` less ``margins[op]`` at the trace steps of compute op ``op`` (a
    regeneration counts as the op it precedes)."""

    def __init__(self, limit: int, margins: dict[int, int] | None = None) -> None:
        self.limit = limit
        self.margins = {k: m for k, m in (margins or {}).items() if m > 0}

    def allowed(self, trace: list[Step], lo: int = 0, hi: int | None = None
                ) -> list[int] | None:
        """Bytes allowed at each memory position of ``trace`` (as ``simulate`` lays them
        out), or None when every position allows ``limit``. ``lo``, ``hi``: only at the
        positions of steps lo..hi-1 (position_ops)."""
        if not self.margins:
            return None
        margins, limit = self.margins, self.limit
        return [limit - (margins.get(k, 0) if k >= 0 else 0)
                for k in position_ops(trace, lo, hi)]

    def first_over(self, measure: Measure, allowed: list[int] | None) -> int | None:
        """The first memory position over its bound, or None."""
        if allowed is None:
            if measure.peak <= self.limit:
                return None
            return next(p for p, m in enumerate(measure.memory) if m > self.limit)
        return next((p for p, (m, a) in enumerate(zip(measure.memory, allowed)) if m > a),
                    None)

    def fits(self, measure: Measure, allowed: list[int] | None) -> bool:
        return self.first_over(measure, allowed) is None

    def room(self, measure: Measure, allowed: list[int] | None, a: int, b: int) -> int:
        """The fewest spare bytes over memory positions a..b-1 (large when empty)."""
        if a >= b:
            return 1 << 62
        if allowed is None:
            return self.limit - max(measure.memory[a:b])
        return min(x - m for m, x in zip(measure.memory[a:b], allowed[a:b]))
