"""Lowering of the IR to array programs (NumPy eagerly, or JAX traced under ``jax.jit``).

:mod:`bladec.emit.lower` holds the table of lowerings and the core ops; the modules
imported here add the lowerings of further op families to that table.
"""
from bladec.emit import addressing, bitwise, layout, lower, selection, special, window  # noqa: F401
