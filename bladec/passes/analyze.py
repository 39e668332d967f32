"""``analyze``: solve the symbolic shapes and write them back into the listing."""
from __future__ import annotations

from bladec.ir import Module
from bladec.passes.pipeline import register
from bladec.symbolic.graph import write_back
from bladec.symbolic.shapes import analyze_shapes


@register
class AnalyzePass:
    name = "analyze"

    def apply(self, module: Module) -> Module:
        return write_back(module, analyze_shapes(module))
