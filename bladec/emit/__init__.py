"""Lowering of the IR to array programs (NumPy eagerly, or JAX traced under ``jax.jit``)."""
