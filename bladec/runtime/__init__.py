"""The host runtime: what runs an optimized listing under a memory limit.

A small front (this folder: ``engine.py`` first, then ``executor.py``, ``execution.py``,
``dispatch.py`` for a call at shapes already run, ``padding.py``, ``session.py`` for
``bladec run``, ``mesh.py`` for sharded runs, ``timeline.py`` for the picture) over three
rooms, each depending only on the ones after it:

- ``planning/``: from a binding of the symbols to a plan that fits: the per-op trace,
  the eviction policy, the cuts into segments, the device accounting of a cut plan, and
  the closed loop that repairs it until it fits (or names the smallest limit);
- ``backends/``: the array backend interface and its NumPy, JAX and mesh backends, the
  machine's own facts (its memory);
- ``store/``: what is kept across processes (optimized listings, executables, search
  hints), each entry checked before it is used.

docs/architecture.md draws the whole loop.
"""
