"""Byte sizes as people write them: ``40GiB``, ``512MiB``, ``1.5GB``, ``123456``."""
from __future__ import annotations

import re

from bladec.errors import BladecError
from bladec.types import MAX_DIM, dim_too_large

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_size(text: str) -> int:
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise BladecError(f"bad size '{text}' (examples: 40GiB, 512MiB, 1.5GB, 1048576)")
    return int(float(m.group(1)) * _UNITS[unit]) if "." in m.group(1) else int(m.group(1)) * _UNITS[unit]


def format_size(n: int) -> str:
    """Bytes in the largest binary unit that keeps at least 1 (two decimals)."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        scale = _UNITS[unit.lower()]
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def format_dims(binding: dict[str, int]) -> str:
    """A binding as ``--dims`` takes it, spaced for messages: ``S0=4, S1=64`` ("" if empty)."""
    return ", ".join(f"{k}={v}" for k, v in binding.items())


_COUNT = re.compile(r"[0-9]+")   # ASCII digits: str.isdigit() also takes '²' and '٣'


def is_count(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits (what ``int`` is given)."""
    return _COUNT.fullmatch(text) is not None


def parse_dims(text: str | None) -> dict[str, int]:
    """``S0=4096,S1=12`` to a binding (``@S0`` is accepted too); a symbol given twice is
    an error (which value was meant?)."""
    out: dict[str, int] = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        key, eq, value = item.partition("=")
        key, value = key.strip().lstrip("@"), value.strip()
        if not eq or not is_count(value) or not key:
            raise BladecError(f"bad --dims entry '{item[:40]}' (expected SYMBOL=POSITIVE_INT)")
        if dim_too_large(value):
            raise BladecError(f"bad --dims entry '{item[:40]}': dims are at most {MAX_DIM}")
        if int(value) < 1:
            raise BladecError(f"bad --dims entry '{item}': dims are at least 1")
        if key in out:
            raise BladecError(f"--dims gives {key} twice ({key}={out[key]} and {item})")
        out[key] = int(value)
    return out
