"""Tests of bladec/api.py: ``bladec.jit``, a JAX function run by bladec under a
limit."""
