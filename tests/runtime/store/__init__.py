"""Tests of bladec/runtime/store: listings, executables and hints kept across
processes."""
