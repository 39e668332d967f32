"""Tests of bladec/runtime's front: the executor, the engine's device peak, timelines,
sharded runs."""
