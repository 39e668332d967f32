"""Calls and annotations: nested jaxprs are inlined, annotations are identities.

``jit``/``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call`` and
``remat``/``checkpoint`` are inlined (their bodies translate into the same listing: the
listing has one function, and bladec's own scheduler and remat decide what JAX's
checkpoint policies would); ``stop_gradient``, sharding annotations and optimization
barriers are identities.
"""
from __future__ import annotations

from bladec.frontend.rule import Outs, Params, Result, Shape, rule
from bladec.frontend.translate import JaxImportError, Translator

INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr",
          "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
          "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}
IDENTITY = ("stop_gradient", "sharding_constraint", "device_put", "optimization_barrier",
            "mesh_cast", "reshard")


@rule(*INLINE)
def _inline(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
            outs: Outs) -> Result:
    sub = p.get(INLINE[tr.primitive])
    if sub is None:
        sub = next((p[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in p), None)
    if sub is None:
        raise JaxImportError(f"cannot find the body of '{tr.primitive}' to inline")
    inner, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, [])
    return tr.run(inner, consts, ins)


@rule(*IDENTITY)
def _identity(tr: Translator, ins: list, p: Params, shape: Shape, dtype: str,
              outs: Outs) -> Result:
    return list(ins)
