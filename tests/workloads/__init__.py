"""Tests of bladec/workloads: the CodeAlpaca pipeline of the paper benchmark."""
