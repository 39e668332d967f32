"""Auto-batching of per-instance control flow (DESIGN.md section 14, after ACRoBat).

``bladec.autobatch(model)`` runs ``model(params, instance)``, plain Python over one
instance's structure calling :func:`bladec.cell` functions, over a mini-batch of
instances with one batched kernel call per (cell, depth): value.py records the cell
invocations of each instance with their depths, schedule.py sorts them into calls,
program.py writes each call's kernel (operands gathered inside it, outputs scattered
into one state buffer per value shape), kernel.py imports and compiles it through
bladec per bucket, model.py is the API (forward, gradients, SGD) with its switches in
options.py and its figures in report.py, split.py the op-by-op ablation.
"""
from bladec.batching.model import Autobatched, autobatch
from bladec.batching.options import Options
from bladec.batching.report import AutobatchReport
from bladec.batching.value import Cell, Lazy, cell

__all__ = ["AutobatchReport", "Autobatched", "Cell", "Lazy", "Options", "autobatch",
           "cell"]
