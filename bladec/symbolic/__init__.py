"""Symbolic shapes: canonical polynomials over shape symbols, relations, comparison."""
