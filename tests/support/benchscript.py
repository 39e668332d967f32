"""Loading a script of benchmarks/ as a module, for the tests of its bookkeeping."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_bench(name: str) -> ModuleType:
    """benchmarks/NAME.py as the module NAME; the benchmarks are scripts, not a package.

    The module is registered in ``sys.modules`` before it runs: its dataclasses look
    their module up there, and one script may import another by name.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
