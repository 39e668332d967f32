"""``bladec.jit``'s options checked when the function is wrapped, before the first call:
the memory limit, the dims' ranges, the padding, and what ``dynamic`` and donation name.
A bad option is one clear BladecError at wrap time, not a failure deep in a later trace.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from bladec.api.signature import Signature
from bladec.errors import BladecError
from bladec.units import parse_size

DimSpec = str | Sequence[str | None]


def _limit(value: int | str | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_size(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0:
        return int(value)
    raise BladecError(f"mem_limit must be a positive number of bytes or a size such as "
                      f"'2GiB', not {value!r}")


def _ranges(ranges: Any) -> dict[str, tuple[int, int | None]]:
    """``ranges`` checked: dim names to (least, greatest or None), 1 <= least <= greatest."""
    if ranges is None:
        return {}
    if not isinstance(ranges, dict):
        raise BladecError("ranges must be a dict from dim name to (least, greatest): "
                          "{'S': (1, 512)}")
    out = {}
    for name, value in ranges.items():
        try:
            lo, hi = value
        except (TypeError, ValueError):
            lo = hi = None
            value = repr(value)
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                   for v in ((lo,) if hi is None else (lo, hi)))
        if not isinstance(name, str) or not ints or lo < 1 or (hi is not None and hi < lo):
            raise BladecError(f"ranges: bad range {value} for {name!r} (a pair (least, "
                              f"greatest) with 1 <= least <= greatest, greatest None for "
                              f"no bound)")
        out[name] = (int(lo), None if hi is None else int(hi))
    return out


def _pad(pad: Any) -> int | dict[str, int] | None:
    """``pad`` checked: a multiple for every dynamic dim, or multiples by dim name."""
    def multiple(v: Any) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
    if pad is None or multiple(pad):
        return None if pad is None else int(pad)
    if isinstance(pad, dict) and all(isinstance(k, str) and multiple(v)
                                     for k, v in pad.items()):
        return {k: int(v) for k, v in pad.items()}
    raise BladecError(f"pad must be a positive multiple (an int for every dynamic dim, or "
                      f"a dict by dim name: {{'S': 16}}), not {pad!r}")


def _check_options(signature: Signature, dynamic: dict[str | int, DimSpec] | None,
                   ranges: dict[str, tuple[int, int | None]],
                   pad: int | dict[str, int] | None, donated: set[int]) -> None:
    """What can be checked before the first call: donated positions the function does
    not take, and, where ``dynamic`` names the dims, ranges and paddings of other names
    (in automatic mode the names come from the calls)."""
    if signature.sig is not None and not signature.var_positional:
        beyond = sorted(i for i in donated if i >= len(signature.positional))
        if beyond:
            raise BladecError(f"donate_argnums {beyond} out of range: the function takes "
                              f"{len(signature.positional)} positional argument(s)")
    if not isinstance(dynamic, dict):
        return
    names = {str(d).strip() for dims in dynamic.values()
             for d in (dims.split(",") if isinstance(dims, str) else list(dims or ()))
             if d is not None and str(d).strip() not in ("", "_")}
    for what, keys in (("ranges", ranges), ("pad", pad if isinstance(pad, dict) else {})):
        unknown = sorted(k for k in keys if k not in names)
        if unknown:
            raise BladecError(f"{what} names {', '.join(unknown)}, not a dim that dynamic "
                              f"names (it names: {', '.join(sorted(names)) or 'none'})")
