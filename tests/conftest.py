"""Suite-wide fixtures."""
from __future__ import annotations

import os
import sys
from typing import Iterator

import pytest

# `bladec run` keeps JAX's persistent compilation cache in ~/.cache/bladec by default: the
# suite must neither write there nor load what an earlier run left (a loaded executable
# is not compiled, and tests count compilations). Tests of the cache name a directory.
os.environ["BLADEC_COMPILATION_CACHE"] = "off"


@pytest.fixture(autouse=True, scope="module")
def _jax_caches_per_module() -> Iterator[None]:
    """JAX's caches (traced functions, compiled executables) live as long as the process:
    in one test worker they grew to 3.5 GiB over the suite. They are emptied after each
    test module; a module's own fixtures and tests still share them."""
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
