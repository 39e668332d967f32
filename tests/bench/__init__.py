"""Tests of benchmarks/: each script's bookkeeping on small inputs (fast), and the
benchmarks themselves against their goals (slow, ``make bench``)."""
