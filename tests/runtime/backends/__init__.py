"""Tests of bladec/runtime/backends: NumPy against JAX semantics, the machine's
memory."""
