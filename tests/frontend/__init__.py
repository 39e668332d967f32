"""Tests of bladec/frontend: JAX functions and training steps imported as listings."""
