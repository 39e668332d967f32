"""Tests of bladec/ops (with bladec/adjoint.py): op semantics on both backends and
every op's adjoint rule."""
