"""One XLA compilation per distinct program in a test module (issue 36).

Tests of planning make a fresh engine per test, so that each can count what *its* engine
compiles (``backend.compilations``), and several engines of one module compile the same
programs with the same options: test_orders.py compiled the small Llama's whole step at
1x16 in bladec's order three times and XLA's two orders twice each, 5.3 s of its 13.7 s
of compile CPU. Inside :func:`compiled_once` the second compilation of a program (its
StableHLO text, the compile options serialized, the devices) takes the executable XLA
made for the first, which is what it would make again: XLA's compilation is a function
of these. Everything above XLA's compiler runs as before: bladec's lowering, its
counters and compile log, its figures (read from the executable, the same one), JAX's
wrapping of the executable. What is not done again is only XLA's work on a program it
has already compiled in this module.

Under `make test`'s XLA_FLAGS (LLVM at optimization level 0, tests/conftest.py) a
compilation for the figures only (jax_backend.LazyCompiled._probed: the options with
``xla_backend_optimization_level`` 0) and the compilation of the same program to run are
one compilation: the option sets what XLA_FLAGS sets already. Their keys are one there,
so that a probed program that then runs is compiled once (under `make bench`, where the
level is XLA's default, they stay two). Not for test_probe.py, which checks that the
figures of the two compilations agree.

Not for modules whose decisions read compile *times* (the rent-or-buy of coarse buckets,
runtime/engine.py): a second compilation would take no time.
"""
from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def compiled_once() -> Iterator[dict[tuple, Any]]:
    """Inside, ``jax._src.compiler.backend_compile_and_load`` keeps what it compiled by
    program, options and devices, and gives it again for the same three; the memo goes
    at the exit. Compilations with host callbacks are not kept (their executables hold
    the callbacks of their own lowering). Yields the memo (tests may count it)."""
    from jax._src import compiler
    original = compiler.backend_compile_and_load
    memo: dict[tuple, Any] = {}

    def once(backend: Any, module: Any, executable_devices: Any, options: Any,
             host_callbacks: Any) -> Any:
        if host_callbacks:
            return original(backend, module, executable_devices, options, host_callbacks)
        text = module.operation.get_asm(enable_debug_info=False)
        key = (id(backend), hashlib.sha256(text.encode()).hexdigest(), _options(options),
               tuple(d.id for d in executable_devices))
        if key not in memo:
            memo[key] = original(backend, module, executable_devices, options,
                                 host_callbacks)
        return memo[key]

    compiler.backend_compile_and_load = once
    try:
        yield memo
    finally:
        compiler.backend_compile_and_load = original


LEVEL = "xla_backend_optimization_level"


def _options(options: Any) -> bytes:
    """The options serialized, less an override of LLVM's optimization level to 0 where
    XLA_FLAGS sets that level already (the override then changes nothing)."""
    overrides = list(options.env_option_overrides)
    if f"--{LEVEL}=0" not in os.environ.get("XLA_FLAGS", "").split():
        return options.SerializeAsString()
    kept = [(k, v) for k, v in overrides if not (k == LEVEL and str(v) == "0")]
    if kept == overrides:
        return options.SerializeAsString()
    from jax._src.lib import xla_client
    same = xla_client.CompileOptions.ParseFromString(options.SerializeAsString())
    same.env_option_overrides = kept
    return same.SerializeAsString()
