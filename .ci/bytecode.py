"""Bytecode for the installed packages the project's processes import, and for no other.

pip compiles every module it installs (about 28 s of CPU on the 2-core CI machine, most
of it for modules no process here imports: scipy's, sympy's and the packages' own
tests), so `make` installs with `--no-compile` and runs this instead: it imports what
`bladec`, its tests and its benchmarks import, then compiles the packages those imports
came from: each module those imports and one small compiled function load (a module
imported lazily elsewhere is compiled by the process that imports it, as before). Where PYTHONDONTWRITEBYTECODE is set (as on CI),
every process would otherwise compile each module it imports again.
"""
from __future__ import annotations

import compileall
import importlib
import sys
import sysconfig
from pathlib import Path

# what the package, the suite (tests/conftest.py and the test modules' own imports) and
# the benchmarks import at their top level
ROOTS = ("bladec.cli", "bladec.api", "jax.numpy", "jax.experimental.shard_map", "pytest",
         "xdist", "hypothesis", "flax.linen", "filecheck", "matplotlib.pyplot", "sympy",
         "lark", "click", "tqdm", "sentencepiece", "numpy")


def used_modules() -> list[Path]:
    """The installed modules' sources that ROOTS and a first jitted call load, their
    bytecode written as they load (not compiled twice)."""
    sys.dont_write_bytecode = False
    for name in ROOTS:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional one not installed here: nothing to compile
            pass
    import jax
    import jax.numpy as jnp
    jax.jit(lambda x: jnp.tanh(x) @ x).lower(jnp.ones((2, 2))).compile()
    sites = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    found: set[Path] = set()
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if not origin:
            continue
        path = Path(origin).resolve()
        if path.suffix == ".py" and any(site in path.parents for site in sites):
            found.add(path)
    return sorted(found)


def main() -> int:
    ok = True
    for path in used_modules():
        ok &= bool(compileall.compile_file(path, quiet=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
