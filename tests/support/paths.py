"""Where the repository's files are, for tests at any depth of tests/.

Tests name samples, benchmarks and docs through these rather than by counting parents of
their own file, so that moving a test between folders changes none of its paths.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
BENCHMARKS = ROOT / "benchmarks"
DOCS = ROOT / "docs"
TESTS = ROOT / "tests"
