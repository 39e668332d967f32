"""Padding symbols to multiples: fewer distinct shapes, fewer compilations.

A free symbol padded to a multiple of N takes the next multiple of N (at most its declared
maximum), and the inputs are zero-padded at the end of each dim it is; the listing must
mask the padding itself (the Llama step's loss weights each token by its mask). Inputs
may be host arrays (padded by NumPy) or device arrays (padded on the device, never
fetched). The engine (engine.py) owns a :class:`Padding` and pads on the way in and cuts
the outputs back; padding needs only the listing's shapes (a ``Binder``), never the
executor that runs the padded step.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from bladec.errors import BladecError, BladecWarning
from bladec.passes.mask import free_symbol
from bladec.units import is_count
from bladec.runtime.planning.binding import Binder


def parse_pad(values: str | tuple[str, ...] | list[str] | None) -> dict[str, int] | None:
    """``--pad S1=64`` (repeatable, or comma-separated: ``S0=8,S1=64``) to ``{"S1": 64}``;
    None when nothing is given. A bad entry is a BladecError naming it."""
    if not values:
        return None
    items = [values] if isinstance(values, str) else list(values)
    out: dict[str, int] = {}
    for item in (t.strip() for v in items for t in v.split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip().lstrip("@")
        if not eq or not key or not is_count(value.strip()) or int(value) < 1:
            raise BladecError(f"bad --pad entry '{item[:40]}' (expected SYMBOL=MULTIPLE, a "
                              f"positive multiple: S1=64)")
        if key in out:
            raise BladecError(f"--pad gives {key} twice ({key}={out[key]} and {item})")
        out[key] = int(value)
    return out or None


def padding_multiples(executor: Binder, pad: dict[str, int] | None,
                      pad_multiple: int | None) -> dict[str, int]:
    """The multiple for each free symbol to pad: ``pad`` by name, ``pad_multiple`` for
    the others. Only free symbols can be padded (derived ones follow from them, and so do
    quotient and bound dims: symbol/atoms.py)."""
    free = [s for s in executor.info.free if s not in executor.info.atoms]
    out: dict[str, int] = {}
    for name, m in (pad or {}).items():
        s = free_symbol(executor.info, name.lstrip("@")) or name.lstrip("@")
        if s not in free:
            raise BladecError(f"cannot pad {name}: not a free symbol of the listing "
                              f"(free symbols: {', '.join(free) or 'none'})")
        if int(m) < 1:
            raise BladecError(f"cannot pad {s} to a multiple of {m}: give a positive number")
        out[s] = int(m)
    if pad_multiple:
        if pad_multiple < 1:
            raise BladecError(f"cannot pad to a multiple of {pad_multiple}: give a positive "
                              "number")
        for s in free:
            out.setdefault(s, pad_multiple)
    return out


def padded_binding(executor: Binder, binding: dict[str, int],
                   multiples: dict[str, int]) -> dict[str, int]:
    """Each symbol of ``multiples`` rounded up to its multiple, at most its declared max
    (never below its value).

    Where the next multiple is beyond the declared max, the symbol is padded to the max
    (still one shape for every value up to it, which is what padding is for), and a
    BladecWarning says so: the user asked for a multiple, and gets a value that is not one
    and may be many times the real size (a batch of 4 padded to 32 by a multiple of 64)."""
    out = {s: v for s, v in binding.items() if s not in executor.info.atoms}
    for s, m in multiples.items():
        v = binding[s]
        target = -(-v // m) * m
        hi = executor.info.ranges.get(s, (1, None))[1]
        if hi is not None and target > hi:
            capped = max(v, hi)
            if capped != v:
                warnings.warn(BladecWarning(
                    f"padding {s}={v} to {capped}, its declared maximum, not to a multiple "
                    f"of {m} (the next one, {target}, is beyond the maximum): "
                    f"{capped / v:.3g}x the size; give --pad {s}=N for another multiple"),
                    stacklevel=2)
            target = capped
        out[s] = target
    atoms = executor.info.atoms
    if atoms:   # quotient and bound dims of the padded values
        full = executor.info.bind(out)
        out = {s: full[s] for s in binding}
    return out


def pad_inputs(executor: Binder, inputs: dict[str, Any], multiples: dict[str, int],
               binding: dict[str, int] | None = None,
               target: dict[str, int] | None = None) -> dict[str, Any]:
    """Zero-pad ``inputs`` (at the end of each dim) to the shapes of the padded binding.

    ``binding``: the inputs' own, when known. ``target``: the binding to pad to, when not
    the padded one (a coarser bucket, at least as large in every symbol). A dim that is a
    product or sum of several symbols, one of them padded, can not be padded at its end
    (the padding would have to go inside it): that is an error naming the input.
    """
    if binding is None:
        binding = executor.bind({n: np.shape(a) for n, a in inputs.items()})
    if target is None:
        target = padded_binding(executor, binding, multiples)
    if target == binding:
        return dict(inputs)
    changed = {s for s in multiples if target[s] != binding[s]}
    shapes = executor.shapes_for(target)
    out = {}
    for name, array in inputs.items():
        widths = []
        for j, expr in enumerate(executor.info.dims[name]):
            size, want = array.shape[j], shapes[name][j]
            if want != size and len(expr.symbols) > 1 and expr.symbols & changed:
                from bladec.symbolic.expr import format_expr
                raise BladecError(
                    f"cannot pad input {name}: its dim {j} is {format_expr(expr)}, and "
                    f"padding {', '.join(sorted(expr.symbols & changed))} would go inside it; "
                    f"pad only symbols that are whole input dims")
            widths.append((0, want - size))
        out[name] = pad_array(array, widths) if any(w for _, w in widths) else array
    return out


def pad_array(array: Any, widths: list[tuple[int, int]]) -> Any:
    """Zero-pad a host array with NumPy, a device array where it lives (jnp.pad)."""
    if isinstance(array, np.ndarray) or np.isscalar(array):
        return np.pad(array, widths)
    import jax.numpy as jnp
    return jnp.pad(array, widths)


def unpad_outputs(executor: Binder, outputs: dict[str, Any], padded: dict[str, int],
                  binding: dict[str, int]) -> dict[str, Any]:
    """The outputs cut back to their shapes under the inputs' own ``binding`` (each dim
    that padding made larger keeps its first entries): what the caller would have got
    without padding, where the listing masks the padding."""
    if padded == binding:
        return outputs
    shapes = executor.shapes_for(binding)
    out = {}
    for name, x in outputs.items():
        want = shapes[name]
        if tuple(x.shape) != want:
            x = x[tuple(slice(0, w) for w in want)]
        out[name] = x
    return out




class Padding:
    """The engine's padding: ``multiples`` by free symbol (empty: none), over the shapes
    of ``binder``'s listing."""

    def __init__(self, binder: Binder, pad: dict[str, int] | None = None,
                 pad_multiple: int | None = None) -> None:
        self.binder = binder
        self.multiples = padding_multiples(binder, pad, pad_multiple)

    def __bool__(self) -> bool:
        return bool(self.multiples)

    def padded(self, binding: dict[str, int]) -> dict[str, int]:
        """The binding the inputs are padded to (``binding`` itself without padding)."""
        return padded_binding(self.binder, binding, self.multiples) if self.multiples \
            else binding

    def pad(self, inputs: dict[str, Any], binding: dict[str, int],
            target: dict[str, int]) -> dict[str, Any]:
        return pad_inputs(self.binder, inputs, self.multiples, binding, target)

    def unpad(self, outputs: dict[str, Any], padded: dict[str, int],
              binding: dict[str, int]) -> dict[str, Any]:
        return unpad_outputs(self.binder, outputs, padded, binding)
