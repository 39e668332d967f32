"""Consolidation: a plan that fits, tidied to fewer cut points within the same budget.

``consolidate`` (reloads made recomputes where cheap, evictions dropped or moved, cut
points shared, while every step still fits) and ``replay`` (the trace's measure and validity kept current by
replaying only the windows of steps a what-if touches: consolidation asks hundreds per
plan), then ``sharing`` (chains regenerated together, each replaying only what the
ones before it did not). The planner (``policy``) calls them once a plan fits the
per-op model.
"""
