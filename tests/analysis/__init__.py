"""Tests of bladec/analysis: the memory model, liveness, peaks and lower bounds."""
