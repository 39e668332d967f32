"""Tests of bladec/symbolic: comparison of expressions, the shape analysis, bindings."""
