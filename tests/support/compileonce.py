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

Not for modules whose decisions read compile *times* (the rent-or-buy of coarse buckets,
runtime/engine.py): a second compilation would take no time.
"""
from __future__ import annotations

import hashlib
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
        key = (id(backend), hashlib.sha256(text.encode()).hexdigest(),
               options.SerializeAsString(), tuple(d.id for d in executable_devices))
        if key not in memo:
            memo[key] = original(backend, module, executable_devices, options,
                                 host_callbacks)
        return memo[key]

    compiler.backend_compile_and_load = once
    try:
        yield memo
    finally:
        compiler.backend_compile_and_load = original
