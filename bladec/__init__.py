"""bladec: memory optimization of dynamic-shape tensor graphs from symbolic shapes.

The library API: :func:`bladec.jit` (a JAX function run by bladec under a memory limit,
bladec/api.py), :func:`bladec.autobatch` and :func:`bladec.cell` (a per-instance model
batched across a mini-batch, bladec/batching/), :func:`bladec.parse.parse_module`, :func:`bladec.verify.verify`,
:func:`bladec.printer.format_module`, the passes in :mod:`bladec.passes`, and the
engine that runs listings, :class:`bladec.runtime.engine.Engine`. Errors are
:class:`BladecError`.
"""
from typing import Any

from bladec.errors import BladecError, BladecWarning

__version__ = "0.1.0"
__all__ = ["BladecError", "BladecWarning", "JitReport", "autobatch", "cell", "jit"]


def __getattr__(name: str) -> Any:
    """``jit`` and its report, imported on first use: the command line does not need
    JAX's import for ``bladec optimize``."""
    if name in ("jit", "Jitted", "JitReport"):
        from bladec import api
        return getattr(api, name)
    if name in ("autobatch", "cell", "Autobatched", "AutobatchReport"):
        from bladec import batching
        return getattr(batching, name)
    raise AttributeError(f"module 'bladec' has no attribute {name!r}")
