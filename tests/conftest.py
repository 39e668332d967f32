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


def _jaxlib_version() -> str:
    """The installed jaxlib's version, read without importing it (XLA_FLAGS must be set
    first); "" where none is installed."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("jaxlib")
    except PackageNotFoundError:
        return ""


# XLA:CPU's LLVM code generation at optimization level 0: compiling was most of the
# suite's CPU (a one-op gradient check: 106 s of its 179 s in XLA's backend compile), and
# the tests' arrays are small enough that the generated code's speed does not matter.
# It changes only LLVM's passes over each kernel: the HLO graph, its fusions, buffer
# assignment and so the memory figures the tests check are XLA's own either way.
# And its LLVM kernel emitters, not its MLIR fusion emitters (jaxlib 0.10's default):
# compiling was still 47% of the workers' CPU (225 of 480 s in XLA's backend compile over
# 2,118 compilations, 2026-12-07, load 5), and the MLIR emitters cost 2.4x as much on
# the suite's small programs (test_orders and test_adjoints_structure, 97 compilations:
# 16.4 and 17.8 s against 7.0 s, alternated). They differ in a kernel's own scratch (temporaries 4-156 B apart
# on whole steps: tests/runtime/backends/test_emitters.py holds them within 1 KiB), and
# each test compares bladec's figures with XLA's under the one setting. Bitwise mode names
# the MLIR emitters itself (xlaoption.bitwise_options: the LLVM ones miscompile there).
# Set before JAX is imported; subprocesses inherit it. BLADEC_TEST_XLA_OPT=1 keeps
# XLA's defaults (to run the suite as users' code is compiled).
# An XLA_FLAGS flag that this XLA does not know stops the process (XLA's flag parser), and
# XLA renames and drops its CPU flags between releases: the emitters' flag only with the
# jaxlib it was measured on (0.10); another jaxlib compiles with its default emitters.
SUITE_XLA_FLAGS = ("--xla_backend_optimization_level=0",
                   *(["--xla_cpu_use_fusion_emitters=false"]
                     if _jaxlib_version().startswith("0.10.") else []))
if os.environ.get("BLADEC_TEST_XLA_OPT") != "1":
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""),
                                        *SUITE_XLA_FLAGS]).strip()


@pytest.fixture(autouse=True, scope="module")
def _jax_caches_per_module() -> Iterator[None]:
    """JAX's caches (traced functions, compiled executables) live as long as the process:
    in one test worker they grew to 3.5 GiB over the suite. They are emptied after each
    test module; a module's own fixtures and tests still share them."""
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()


@pytest.fixture(scope="module")
def one_order_at_no_limit() -> Iterator[None]:
    """Each step at no limit compiled in bladec's order only (tests.support.order), for a
    module whose tests check what is computed, not which order holds less; a module asks
    for it with ``pytestmark = pytest.mark.usefixtures("one_order_at_no_limit")``."""
    from tests.support.order import one_order
    with one_order():
        yield


@pytest.fixture(scope="module")
def compile_once() -> Iterator[None]:
    """XLA compiles each distinct program once in the module (tests.support.compileonce):
    for a module whose tests make fresh engines that compile the same programs, and whose
    decisions do not read compile times; a module asks for it with ``pytestmark =
    pytest.mark.usefixtures("compile_once")``."""
    from tests.support.compileonce import compiled_once
    with compiled_once():
        yield


_CPU_LOG = os.environ.get("BLADEC_TEST_CPU_LOG")
if _CPU_LOG:
    import time

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
        """With BLADEC_TEST_CPU_LOG=prefix, each worker appends `nodeid<TAB>cpu
        seconds<TAB>children's cpu seconds` (setup, call and teardown together; this
        process, then the subprocesses the test started) to prefix.<worker>: the suite's
        cost per test on a loaded machine, where wall time says little."""
        start, children = time.process_time(), _children_cpu()
        yield
        spent = time.process_time() - start
        spawned = _children_cpu() - children
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{_CPU_LOG}.{worker}", "a", encoding="utf-8") as log:
            log.write(f"{item.nodeid}\t{spent:.3f}\t{spawned:.3f}\n")

    def _children_cpu() -> float:
        """User + system CPU of the subprocesses this worker has waited for, and of
        the commands its mesh worker ran (tests/support/meshworker.py)."""
        import resource
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        meshworker = sys.modules.get("tests.support.meshworker")
        commands = meshworker.COMMANDS_CPU[0] if meshworker is not None else 0.0
        return usage.ru_utime + usage.ru_stime + commands


@pytest.fixture(scope="session")
def mesh_worker() -> Iterator[object]:
    """One process with JAX on 8 CPU devices that runs the sharded checks' Python
    commands in turn (tests/support/meshworker.py), started at its first command."""
    from tests.support.meshworker import MeshWorker
    worker = MeshWorker()
    yield worker
    worker.close()
