"""Tests of bladec/runtime/planning/consolidation: the plans it makes, against a record and
against measuring from scratch."""
