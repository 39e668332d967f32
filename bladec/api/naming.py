"""The caller's dim names in what ``bladec.jit`` says: the listing's symbols (S0, S1) are
bladec's, the caller named the dims (``dynamic={"tokens": "B,S"}``), so messages and
errors are rewritten in the caller's names, shifted dims included (``B-1``)."""
from __future__ import annotations

import re
from typing import Any

from bladec.errors import BladecError


def renamed(exc: BladecError, names: dict[str, str]) -> BladecError:
    """``exc`` with the listing's symbols (S0, S1) called by the caller's dim names (B, S),
    its other attributes (a LimitError's smallest limit) kept."""
    text = re.sub(r"\b(S\d+)\b", lambda m: names.get(m.group(1), m.group(1)),
                  exc.diagnostic.message)
    if text == exc.diagnostic.message:
        return exc
    out = BladecError(text, exc.loc)
    out.__dict__.update({k: v for k, v in exc.__dict__.items() if k != "diagnostic"})
    return out


def name_shifts(names: dict[str, str], subst: dict[str, Any]) -> None:
    """A free symbol that the analysis kept in place of a caller's dim it shifts
    (``x[1:]`` keeps S1 = B - 1 free, S0 = S1 + 1) named after it: ``B-1``."""
    for s, e in subst.items():
        if s not in names or len(e.symbols) != 1:
            continue
        (free,) = e.symbols
        c = e.terms.get((), 0)
        if free not in names and e.terms.get(((free, 1),)) == 1 and len(e.terms) <= 2:
            names[free] = f"{names[s]}{-c:+d}" if c else names[s]


def is_shape_error(exc: BladecError) -> bool:
    """A binding that contradicts the trace's relations (two dims assumed equal)."""
    return "the relations give" in str(exc)
