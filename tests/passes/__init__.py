"""Tests of bladec/passes: schedule, remat, grad, amp, propagate, redistribute."""
