"""Tests of bladec/runtime/planning: plans, their fitting, replay and placement."""
