"""The Python API: ``bladec.jit`` (jitted.py), a JAX function run by bladec under a
memory limit and called like ``jax.jit``, with its options checked (option.py) and
its figures reported (report.py); how its arguments are read, static and
traced (signature.py); and how it composes with JAX's transforms, ``jax.grad`` through
a custom VJP whose backward is bladec's own ``grad`` pass (transform.py)."""
from bladec.api.jitted import Jitted, Lowered, NotTracedError, jit
from bladec.api.report import JitReport

__all__ = ["JitReport", "Jitted", "Lowered", "NotTracedError", "jit"]
