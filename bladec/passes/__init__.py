"""Passes and pipelines: ``-p schedule,remat{keep=2}`` picks passes from the registry.

A pass is a small class with a ``name``, options given as keyword strings to its
constructor, and ``apply(module) -> module``; passes do no I/O. Each pass module
registers itself with :func:`register`.
"""
from __future__ import annotations

import re
from typing import Callable, ClassVar, Protocol

from bladec.errors import BladecError
from bladec.ir import Module


class Pass(Protocol):
    name: ClassVar[str]

    def apply(self, module: Module) -> Module: ...


PASSES: dict[str, Callable[..., Pass]] = {}
DEFAULT_PIPELINE = "analyze,schedule,remat"
_ITEM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")


def register(cls: type) -> type:
    PASSES[cls.name] = cls
    return cls


def parse_pipeline(text: str) -> list[Pass]:
    """``a,b{key=value,k2=v2}`` to pass instances; ``none`` is the empty pipeline."""
    if text.strip() in ("", "none"):
        return []
    passes: list[Pass] = []
    pos = 0
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise BladecError(f"bad pipeline '{text}' at character {pos + 1}")
        name, opts = m.group(1), m.group(2)
        if name not in PASSES:
            raise BladecError(f"unknown pass '{name}' (known: {', '.join(sorted(PASSES))})")
        kwargs: dict[str, str] = {}
        for item in filter(None, (o.strip() for o in (opts or "").split(","))):
            key, eq, value = item.partition("=")
            if not eq:
                raise BladecError(f"pass option '{item}' of '{name}' must be key=value")
            kwargs[key.strip().replace("-", "_")] = value.strip()
        try:
            passes.append(PASSES[name](**kwargs))
        except TypeError:
            raise BladecError(f"bad options {{{opts}}} for pass '{name}'") from None
        pos = m.end()
    return passes


def run_pipeline(module: Module, passes: list[Pass]) -> Module:
    for p in passes:
        module = p.apply(module)
    return module


from bladec.passes import analyze, remat, schedule, verify_pass  # noqa: E402,F401
