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

from bladec.runtime.trace import Measure, Step


class Budget:
    """``limit`` less ``margins[op]`` at the trace steps of compute op ``op`` (a
    regeneration counts as the op it precedes)."""

    def __init__(self, limit: int, margins: dict[int, int] | None = None) -> None:
        self.limit = limit
        self.margins = {k: m for k, m in (margins or {}).items() if m > 0}

    def allowed(self, trace: list[Step]) -> list[int] | None:
        """Bytes allowed at each memory position of ``trace`` (as ``simulate`` lays them
        out), or None when every position allows ``limit``."""
        if not self.margins:
            return None
        out: list[int] = []
        pending = 0  # positions of regenerations waiting for the op they precede
        for step in trace:
            if step.kind == "op":
                bound = self.limit - self.margins.get(step.index, 0)
                out.extend([bound] * (pending + 1))
                pending = 0
            elif step.kind == "regen":
                pending += 1 if step.method == "reload" else len(step.region)
        out.extend([self.limit] * pending)
        return out

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
