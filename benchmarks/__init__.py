"""bladec's benchmarks: each bench_*.py here is a script (``python benchmarks/bench_run.py``,
the Makefile's bench-* targets); what several of them share is in benchmarks/support.
Scripts put the repository root on ``sys.path`` and import ``benchmarks.support.NAME``;
the tests of their bookkeeping (tests/bench) import them as ``benchmarks.bench_NAME``."""
