"""Tests that check what a step computes, not which order holds less at no limit: the
step compiled in bladec's order only (``BLADEC_NO_LIMIT_ORDER=bladec``), where comparing
the orders (WholeStep._no_limit; tests/runtime/planning/test_orders.py checks it)
compiled each step once or twice more in XLA's orders."""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def one_order() -> Iterator[None]:
    """``BLADEC_NO_LIMIT_ORDER=bladec`` inside, the setting before restored after."""
    before = os.environ.get("BLADEC_NO_LIMIT_ORDER")
    os.environ["BLADEC_NO_LIMIT_ORDER"] = "bladec"
    try:
        yield
    finally:
        if before is None:
            del os.environ["BLADEC_NO_LIMIT_ORDER"]
        else:
            os.environ["BLADEC_NO_LIMIT_ORDER"] = before
