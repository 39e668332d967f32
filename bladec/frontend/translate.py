"""JAX jaxpr equations as listing ops: the importer's translator.

:class:`Translator` walks a jaxpr equation by equation and emits ops of the registry
(bladec/ops) over the listing's values; :mod:`bladec.frontend.jax_import` drives it.

Translation rules worth knowing:

- JAX's elementwise primitives broadcast scalars and size-1 dims implicitly; the listing's
  elementwise ops do not, so such operands get an explicit ``broadcast_in_dim`` (a scalar
  literal becomes a ``constant`` of the full shape).
- A ``reshape`` that only adds or drops size-1 dims becomes ``broadcast_in_dim`` (adding)
  and a ``reduce {kind = "max"}`` over the size-1 dims (dropping; the max of one element
  is that element, bit for bit), because those ops carry the other dims through their
  shape rules, where a ``reshape`` only equates element counts. ``squeeze`` likewise.
- ``slice`` of a tensor with dynamic dims (and ``split``) becomes a ``gather`` of the
  sliced dim (moved to the front by ``transpose``) with ``iota``-made indices; ``pad``
  becomes a ``concatenate`` with ``constant`` blocks.
- ``gather``/``scatter-add`` are accepted in the embedding form (``table[ids]`` and its
  gradient ``zeros.at[ids].add(u)``), as ``gather``/``scatter_add``.
- ``select_n(p, f, t)`` is ``select(p, t, f)``; ``clamp`` is ``max`` then ``min``;
  ``and``/``or``/``not`` on booleans are ``min``/``max``/``compare EQ false``.
- ``jit``/``pjit``, ``custom_jvp_call``, ``custom_vjp_call``, ``remat``/``checkpoint``
  and ``closed_call`` are inlined; ``stop_gradient``, same-type conversions and sharding
  annotations are identities. Dead equations are dropped.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Op, TensorType, Value
from bladec.symbolic.expr import SymbolicExpr, const, sym

DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
          "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint8": "u8",
          "bool": "i1"}
SHORT_DTYPES = {v: k for k, v in DTYPES.items()}

_UNARY = {"neg": "neg", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
          "tanh": "tanh", "logistic": "logistic", "abs": "abs", "sin": "sin", "cos": "cos",
          "square": "square", "copy": "copy", "copy_p": "copy"}
_BINARY = {"add": "add", "add_any": "add", "sub": "sub", "mul": "mul", "div": "div",
           "max": "max", "min": "min", "pow": "pow"}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
# boolean and/or reductions are min/max over 0/1
_REDUCE = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
           "reduce_prod": "prod", "reduce_and": "min", "reduce_or": "max"}
_IDENTITY = {"stop_gradient", "sharding_constraint", "device_put", "optimization_barrier",
             "mesh_cast", "reshard"}
_INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr",
           "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
           "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
           "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}


class JaxImportError(BladecError):
    """A JAX function that can not be imported (an unsupported primitive, a bad spec)."""


# Values known at import time are kept only to fold index arrays (gathers and scatters with
# constant indices), which are small; a constant the size of a weight (an optimizer's
# ``0.9 * m`` at hidden 4096) would cost gigabytes of host memory for nothing.
_KNOWN_MAX_ELEMENTS = 1 << 16


@dataclass
class Lit:
    """A scalar known at import time (a jaxpr literal, or a folded conversion of one)."""
    value: Any
    dtype: str
    shape: tuple = ()


def bladec_dtype(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in DTYPES:
        raise JaxImportError(f"element type {name} has no listing equivalent "
                             f"(supported: {', '.join(DTYPES)})")
    return DTYPES[name]


def is_symbolic(d: Any) -> bool:
    return not isinstance(d, (int, np.integer))


def dim_vars(d: Any) -> list[str]:
    if not is_symbolic(d):
        return []
    out = []
    for term, _ in d._sorted_terms:
        for factor, _ in term._factors:
            if factor.var is not None:
                out.append(factor.var)
            else:
                for opnd in factor.operands:
                    out.extend(dim_vars(opnd))
    return out


def dim_to_expr(d: Any, symbols: dict[str, str]) -> SymbolicExpr:
    """A JAX dimension (int or ``jax.export`` expression) as a bladec polynomial."""
    if not is_symbolic(d):
        return const(int(d))
    total = const(0)
    for term, coeff in d._sorted_terms:
        part = const(int(coeff))
        for factor, power in term._factors:
            if factor.var is None:
                raise JaxImportError(f"dimension {d} uses '{factor.operation}', which the "
                                     "listing's polynomial shapes can not express")
            for _ in range(int(power)):
                part = part * sym(symbols[factor.var])
        total = total + part
    return total


# -- the translator ---------------------------------------------------------------------

class Translator:
    """Emits the listing's ops for jaxpr equations, keeping each JAX variable's value name,
    its JAX shape (to find implicit broadcasts) and what is known of it at import time."""

    def __init__(self, symbols: dict[str, str], stop_gradients: bool = False) -> None:
        self.symbols = symbols
        # keep JAX's stop_gradient as the listing's op (a forward listing for the grad
        # pass needs it); else it is the identity (a differentiated step has no use for it)
        self.stop_gradients = stop_gradients
        self.ops: list[Op] = []
        self.types: dict[str, TensorType] = {}
        self.shapes: dict[str, tuple] = {}     # value -> JAX shape (ints / dim exprs)
        self.counter = itertools.count()
        self.expanded: dict[str, str] = {}     # value -> source it only appended 1-dims to
        self.broadcasts: dict[str, tuple[str, list[int]]] = {}  # broadcast_in_dim results
        self.inputs: set[str] = set()
        self.known: dict[str, np.ndarray] = {}  # values known at import time (static shape)
        self.decomposed: Counter = Counter()

    # values ---------------------------------------------------------------------------
    def _type(self, shape: Sequence, dtype: str) -> TensorType:
        return TensorType(tuple(None if is_symbolic(d) else int(d) for d in shape), dtype)

    def emit(self, name: str, operands: list[str], shape: Sequence, dtype: str,
             attrs: dict | None = None) -> str:
        out = f"%{next(self.counter)}"
        t = self._type(shape, dtype)
        attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in (attrs or {}).items()}
        self.ops.append(Op(name, list(operands), [Value(out, t)], attrs))
        self.types[out] = t
        self.shapes[out] = tuple(shape)
        return out

    def add_input(self, name: str, shape: Sequence, dtype: str) -> Value:
        self.inputs.add(name)
        binds = tuple(f"C{int(d)}" if not is_symbolic(d) else self._input_symbol(d)
                      for d in shape)
        t = TensorType(tuple(None if is_symbolic(d) else int(d) for d in shape), dtype,
                       binds if any(is_symbolic(d) for d in shape) else None)
        self.types[name] = t
        self.shapes[name] = tuple(shape)
        return Value(name, t)

    def _input_symbol(self, d: Any) -> str:
        e = dim_to_expr(d, self.symbols)
        if len(e.terms) == 1 and e.terms.get(next(iter(e.terms))) == 1 and len(e.symbols) == 1:
            (m,) = e.terms
            if len(m) == 1 and m[0][1] == 1:
                return m[0][0]
        raise JaxImportError(f"input dimension {d} must be a single dimension variable "
                             "(derive compound sizes inside the function)")

    def dtype(self, x: str | Lit) -> str:
        return x.dtype if isinstance(x, Lit) else self.types[x].dtype

    def shape(self, x: str | Lit) -> tuple:
        return x.shape if isinstance(x, Lit) else self.shapes[x]

    def constant(self, value: Any, shape: Sequence, dtype: str) -> str:
        if dtype == "i1":
            v: Any = int(bool(value))
        elif dtype.startswith(("i", "u")):
            v = int(value)
        else:
            v = float(value)
        out = self.emit("constant", [], shape, dtype, {"value": v})
        if not any(is_symbolic(d) for d in shape) and \
                math.prod(int(d) for d in shape) <= _KNOWN_MAX_ELEMENTS:
            self.known[out] = np.full(tuple(int(d) for d in shape), v)
        return out

    def materialize(self, x: str | Lit, shape: Sequence | None = None) -> str:
        """A value name for ``x``; a literal becomes a constant of ``shape``."""
        if isinstance(x, Lit):
            return self.constant(x.value, x.shape if shape is None else shape, x.dtype)
        return x

    def broadcast_to(self, x: str | Lit, shape: Sequence) -> str:
        """``x`` with JAX's implicit scalar / size-1 broadcasting made explicit."""
        if isinstance(x, Lit):
            return self.constant(x.value, shape, x.dtype)
        have = self.shapes[x]
        if _same_shape(have, shape):
            return x
        if len(have) == 0:
            dims: list[int] = []
        elif len(have) == len(shape):
            dims = list(range(len(shape)))
        else:
            raise JaxImportError(f"cannot broadcast {have} to {tuple(shape)}")
        if x in self.broadcasts:  # broadcast of a broadcast: one op from the source
            x, inner = self.broadcasts[x]
            dims = [dims[d] for d in inner] if dims else []
        return self.emit("broadcast_in_dim", [x], shape, self.types[x].dtype, {"dims": dims})

    # primitives -----------------------------------------------------------------------
    def run(self, jaxpr: Any, consts: Sequence, args: Sequence) -> list:
        env: dict[Any, Any] = {}

        def read(v: Any) -> Any:
            if type(v).__name__ == "Literal":
                return _literal(v)
            return env[v]

        for v, c in zip(jaxpr.constvars, consts):
            env[v] = self._const_array(c)
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            outs = self.eqn(eqn, ins)
            for v, o in zip(eqn.outvars, outs):
                if type(v).__name__ != "DropVar":
                    env[v] = o
        return [read(v) for v in jaxpr.outvars]

    def _const_array(self, c: Any) -> Any:
        arr = np.asarray(c)
        dtype = bladec_dtype(arr.dtype)
        if arr.ndim == 0:
            return Lit(arr.item(), dtype)
        flat = arr.reshape(-1)
        if flat.size and np.array_equal(flat, np.full_like(flat, flat[0]),
                                        equal_nan=arr.dtype.kind == "f"):
            return self.constant(flat[0].item(), arr.shape, dtype)
        raise JaxImportError(f"the function closes over a non-uniform constant array of "
                             f"shape {arr.shape}; the listing's constants are fills: pass it "
                             "as an argument, or build it inside the function (from iotas)")

    def eqn(self, eqn: Any, ins: list) -> list:
        name = eqn.primitive.name
        p = eqn.params
        outs = [(tuple(v.aval.shape), bladec_dtype(v.aval.dtype)) for v in eqn.outvars]
        shape, dtype = outs[0] if outs else ((), "f32")
        if name in _INLINE:
            sub = p.get(_INLINE[name])
            if sub is None:
                sub = next((p[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in p), None)
            if sub is None:
                raise JaxImportError(f"cannot find the body of '{name}' to inline")
            inner, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, [])
            return self.run(inner, consts, ins)
        if name == "stop_gradient" and self.stop_gradients and not isinstance(ins[0], Lit):
            return [self.emit("stop_gradient", [ins[0]], shape, dtype)]
        if name in _IDENTITY:
            return list(ins)
        if name in _UNARY:
            x = ins[0]
            if isinstance(x, Lit):
                x = self.materialize(x)
            return [self.emit(_UNARY[name], [x], shape, dtype)]
        if name in _BINARY:
            a, b = (self.broadcast_to(x, shape) for x in ins)
            if self.dtype(a) != self.dtype(b):  # pow with an integer exponent
                b = self.emit("convert", [b], shape, self.dtype(a), {"dtype": self.dtype(a)})
            return [self.emit(_BINARY[name], [a, b], shape, dtype)]
        if name in _COMPARE:
            a, b = (self.broadcast_to(x, shape) for x in ins)
            return [self.emit("compare", [a, b], shape, "i1", {"direction": _COMPARE[name]})]
        if name in _REDUCE:
            return [self._reduce(ins, p, shape, dtype, _REDUCE[name])]
        handler = getattr(self, "p_" + name.replace("-", "_"), None)
        if handler is None:
            raise JaxImportError(f"cannot import JAX primitive '{name}': no listing op or "
                                 "decomposition for it (see bladec/frontend/translate.py)")
        result = handler(ins, p, shape, dtype, outs)
        return result if isinstance(result, list) else [result]

    def p_integer_pow(self, ins, p, shape, dtype, outs):
        x = self.materialize(ins[0])
        y = int(p["y"])
        if y == 1:
            return x
        return self.emit("integer_pow", [x], shape, dtype, {"exponent": y})

    def p_and(self, ins, p, shape, dtype, outs):
        return self._logical("min", "and", ins, shape, dtype)

    def p_or(self, ins, p, shape, dtype, outs):
        return self._logical("max", "or", ins, shape, dtype)

    def _logical(self, op, what, ins, shape, dtype):
        if dtype != "i1":
            raise JaxImportError(f"cannot import bitwise '{what}' on {dtype} (only booleans)")
        self.decomposed[what] += 1
        a, b = (self.broadcast_to(x, shape) for x in ins)
        return self.emit(op, [a, b], shape, dtype)

    def p_not(self, ins, p, shape, dtype, outs):
        if dtype != "i1":
            raise JaxImportError(f"cannot import bitwise 'not' on {dtype} (only booleans)")
        self.decomposed["not"] += 1
        x = self.materialize(ins[0])
        false = self.constant(0, shape, "i1")
        return self.emit("compare", [x, false], shape, "i1", {"direction": "EQ"})

    def p_is_finite(self, ins, p, shape, dtype, outs):
        """x - x is 0 exactly when x is finite (inf - inf and nan - nan are nan)."""
        x = self.materialize(ins[0])
        self.decomposed["is_finite"] += 1
        d = self.emit("sub", [x, x], shape, self.dtype(x))
        zero = self.constant(0, shape, self.dtype(x))
        return self.emit("compare", [d, zero], shape, "i1", {"direction": "EQ"})

    def p_sign(self, ins, p, shape, dtype, outs):
        """1 where x > 0, -1 where x < 0, else x itself (0, -0.0 and nan stay)."""
        x = self.materialize(ins[0])
        self.decomposed["sign"] += 1
        zero = self.constant(0, shape, dtype)
        pos = self.emit("compare", [x, zero], shape, "i1", {"direction": "GT"})
        neg = self.emit("compare", [x, zero], shape, "i1", {"direction": "LT"})
        minus = self.emit("select", [neg, self.constant(-1, shape, dtype), x], shape, dtype)
        return self.emit("select", [pos, self.constant(1, shape, dtype), minus], shape, dtype)

    def p_clamp(self, ins, p, shape, dtype, outs):
        lo, x, hi = (self.broadcast_to(v, shape) for v in ins)
        self.decomposed["clamp"] += 1
        y = self.emit("max", [x, lo], shape, dtype)
        return self.emit("min", [y, hi], shape, dtype)

    def p_select_n(self, ins, p, shape, dtype, outs):
        pred, *cases = ins
        if len(cases) == 1:
            return self.broadcast_to(cases[0], shape)
        if len(cases) != 2:
            raise JaxImportError(f"cannot import select_n with {len(cases)} cases (only 2)")
        pred = self.broadcast_to(pred, shape)
        if self.dtype(pred) != "i1":  # an integer selector: case 1 where it is non-zero
            zero = self.constant(0, shape, self.dtype(pred))
            pred = self.emit("compare", [pred, zero], shape, "i1", {"direction": "NE"})
        false, true = (self.broadcast_to(c, shape) for c in cases)
        return self.emit("select", [pred, true, false], shape, dtype)

    def p_convert_element_type(self, ins, p, shape, dtype, outs):
        x = ins[0]
        if isinstance(x, Lit):
            value = np.asarray(x.value, _np_dtype(x.dtype)).astype(_np_dtype(dtype)).item()
            return Lit(value, dtype, x.shape)
        if self.dtype(x) == dtype:
            return x
        return self.emit("convert", [x], shape, dtype, {"dtype": dtype})

    def p_broadcast_in_dim(self, ins, p, shape, dtype, outs):
        x = ins[0]
        if isinstance(x, Lit):
            return self.constant(x.value, shape, x.dtype)
        dims = [int(d) for d in p["broadcast_dimensions"]]
        have = self.shapes[x]
        if _same_shape(have, shape) and dims == list(range(len(shape))):
            return x
        out = self.emit("broadcast_in_dim", [x], shape, dtype, {"dims": dims})
        self.broadcasts[out] = (x, dims)
        if (dims == list(range(len(have))) and _same_shape(have, shape[:len(have)])
                and all(not is_symbolic(d) and int(d) == 1 for d in shape[len(have):])):
            self.expanded[out] = x
        return out

    def p_reshape(self, ins, p, shape, dtype, outs):
        x = self.materialize(ins[0])
        if p.get("dimensions") is not None:
            raise JaxImportError("cannot import reshape with 'dimensions' (a transposing "
                                 "reshape)")
        return self._reshape(x, shape, dtype)

    def _reshape(self, x: str, shape: Sequence, dtype: str) -> str:
        have = self.shapes[x]
        if _same_shape(have, shape):
            return x
        keep_in = [i for i, d in enumerate(have) if not _is_one(d)]
        keep_out = [i for i, d in enumerate(shape) if not _is_one(d)]
        if _same_shape([have[i] for i in keep_in], [shape[i] for i in keep_out]):
            # only size-1 dims come and go: keep the other dims visible to the analysis
            self.decomposed["reshape (size-1 dims)"] += 1
            if len(keep_in) != len(have):
                x = self.emit("reduce", [x], [have[i] for i in keep_in], dtype,
                              {"dims": [i for i in range(len(have)) if i not in keep_in],
                               "kind": "max"})
            if len(keep_out) != len(shape):
                x = self.emit("broadcast_in_dim", [x], shape, dtype, {"dims": keep_out})
            return x
        return self.emit("reshape", [x], shape, dtype)

    def p_squeeze(self, ins, p, shape, dtype, outs):
        return self._reshape(self.materialize(ins[0]), shape, dtype)

    def p_expand_dims(self, ins, p, shape, dtype, outs):
        return self._reshape(self.materialize(ins[0]), shape, dtype)

    def p_transpose(self, ins, p, shape, dtype, outs):
        x = self.materialize(ins[0])
        perm = [int(d) for d in p["permutation"]]
        if perm == list(range(len(perm))):
            return x
        return self.emit("transpose", [x], shape, dtype, {"perm": perm})

    def p_dot_general(self, ins, p, shape, dtype, outs):
        a, b = (self.materialize(x) for x in ins)
        (lc, rc), (lb, rb) = p["dimension_numbers"]
        for i, x in enumerate((a, b)):
            if self.dtype(x) != dtype:
                x = self.emit("convert", [x], self.shapes[x], dtype, {"dtype": dtype})
                a, b = (x, b) if i == 0 else (a, x)
        attrs: dict[str, Any] = {}
        if lb:
            attrs["lhs_batch"] = [int(d) for d in lb]
            attrs["rhs_batch"] = [int(d) for d in rb]
        attrs["lhs_contract"] = [int(d) for d in lc]
        attrs["rhs_contract"] = [int(d) for d in rc]
        return self.emit("dot_general", [a, b], shape, dtype, attrs)

    def _reduce(self, ins, p, shape, dtype, kind):
        x = self.materialize(ins[0])
        axes = [int(d) for d in p["axes"]]
        if not axes:
            return x
        return self.emit("reduce", [x], shape, dtype, {"dims": axes, "kind": kind})

    def p_concatenate(self, ins, p, shape, dtype, outs):
        xs = [self.materialize(x) for x in ins]
        if len(xs) == 1:
            return xs[0]
        out = self.emit("concatenate", xs, shape, dtype, {"dim": int(p["dimension"])})
        if all(x in self.known for x in xs) and \
                sum(self.known[x].size for x in xs) <= _KNOWN_MAX_ELEMENTS:
            self.known[out] = np.concatenate([self.known[x] for x in xs], int(p["dimension"]))
        return out

    def p_iota(self, ins, p, shape, dtype, outs):
        return self.emit("iota", [], shape, dtype, {"dim": int(p["dimension"])})

    def p_gather(self, ins, p, shape, dtype, outs):
        table, ids = (self.materialize(x) for x in ins)
        dn = p["dimension_numbers"]
        tshape, ishape = self.shapes[table], self.shapes[ids]
        r, k = len(tshape), len(ishape)
        sizes = tuple(p["slice_sizes"])
        batching = tuple(getattr(dn, "operand_batching_dims", ()))
        if (k >= 1 and _is_one(ishape[-1]) and len(dn.start_index_map) == 1
                and tuple(dn.collapsed_slice_dims) == tuple(dn.start_index_map) and not batching
                and len(dn.offset_dims) == r - 1):
            a = int(dn.start_index_map[0])
            if _same_shape(sizes, tuple(tshape[:a]) + (1,) + tuple(tshape[a + 1:])):
                return self._take_along(table, self._drop_index_dim(ids), a,
                                        [int(d) for d in dn.offset_dims], shape, dtype)
        if (k == 1 and ids in self.known and not batching
                and tuple(dn.offset_dims) == tuple(range(len(shape)))):
            return self._static_gather(table, self.known[ids], dn, sizes, shape, dtype)
        raise JaxImportError("cannot import this 'gather': only picking along one dim by "
                             "an index array (table[ids], jnp.take(x, ids, axis)) and slices "
                             "at constant indices (x[..., 0], x[..., :3]) map to the listing")

    def _take_along(self, x: str, ids: str, a: int, offset_dims: list[int], shape: Sequence,
                    dtype: str) -> str:
        """``jnp.take(x, ids, axis=a)`` with JAX's result dim order (``offset_dims``)."""
        have = list(self.shapes[x])
        order = [a] + [j for j in range(len(have)) if j != a]
        if a != 0:
            self.decomposed["gather (axis > 0)"] += 1
            x = self.emit("transpose", [x], [have[j] for j in order], dtype, {"perm": order})
        batch = list(self.shapes[ids])
        rows = batch + [have[j] for j in order[1:]]
        if len(shape) == len(rows) and offset_dims == list(range(len(batch), len(rows))):
            return self.emit("gather", [x, ids], shape, dtype)
        g = self.emit("gather", [x, ids], rows, dtype)
        positions = [i for i in range(len(shape)) if i not in offset_dims]
        perm = [0] * len(shape)
        for i, pos in enumerate(positions):
            perm[pos] = i
        for i, pos in enumerate(offset_dims):
            perm[pos] = len(batch) + i
        return self.emit("transpose", [g], shape, dtype, {"perm": perm})

    def _static_gather(self, x: str, index: np.ndarray, dn: Any, sizes: Sequence,
                       shape: Sequence, dtype: str) -> str:
        """A gather at constant start indices: a slice, then the collapsed dims dropped."""
        have = self.shapes[x]
        start = [0] * len(have)
        for i, d in enumerate(dn.start_index_map):
            start[d] = int(index.reshape(-1)[i])
            if not is_symbolic(have[d]) and not is_symbolic(sizes[d]):  # XLA clamps
                start[d] = max(0, min(start[d], int(have[d]) - int(sizes[d])))
        limit = [st + n for st, n in zip(start, sizes)]
        self.decomposed["gather (constant indices)"] += 1
        cut = self._slice(x, start, limit, [1] * len(have), list(sizes), dtype)
        return self._reshape(cut, shape, dtype)

    def p_scatter_add(self, ins, p, shape, dtype, outs):
        base, ids, upd = (self.materialize(x) for x in ins)
        dn = p["dimension_numbers"]
        bshape, ishape = self.shapes[base], self.shapes[ids]
        r, k = len(bshape), len(ishape)
        ok = (k >= 1 and _is_one(ishape[-1]) and tuple(dn.inserted_window_dims) == (0,)
              and tuple(dn.scatter_dims_to_operand_dims) == (0,)
              and not tuple(getattr(dn, "operand_batching_dims", ()))
              and tuple(dn.update_window_dims) == tuple(range(k - 1, k - 1 + r - 1)))
        if ok:
            return self.emit("scatter_add", [base, self._drop_index_dim(ids), upd], shape,
                             dtype)
        ushape = self.shapes[upd]
        if (k == 1 and ids in self.known and not tuple(dn.inserted_window_dims)
                and not tuple(getattr(dn, "operand_batching_dims", ()))
                and tuple(dn.update_window_dims) == tuple(range(r)) and len(ushape) == r):
            # the gradient of a slice at constant indices: pad the update, add it
            self.decomposed["scatter-add (constant indices)"] += 1
            index = self.known[ids].reshape(-1)
            x = upd
            for i, d in enumerate(dn.scatter_dims_to_operand_dims):
                lo = int(index[i])
                if not is_symbolic(bshape[d]) and not is_symbolic(ushape[d]):  # XLA clamps
                    lo = max(0, min(lo, int(bshape[d]) - int(ushape[d])))
                x = self._pad_dim(x, int(d), lo, bshape[d] - lo - ushape[d], Lit(0, dtype))
            return self.emit("add", [base, x], shape, dtype)
        raise JaxImportError("cannot import this 'scatter-add': only the row update "
                             "base.at[ids].add(rows) and updates at constant indices map "
                             "to the listing")

    def _pad_dim(self, x: str, j: int, lo: Any, hi: Any, value: Any) -> str:
        """x with ``lo`` and ``hi`` elements of ``value`` around dim j (a concatenate)."""
        have = list(self.shapes[x])
        dtype = self.types[x].dtype
        parts = []
        for n in (lo, None, hi):
            if n is None:
                parts.append(x)
            elif is_symbolic(n) or int(n) > 0:
                block = list(have)
                block[j] = n
                parts.append(self.broadcast_to(value, block))
        if len(parts) == 1:
            return x
        total = list(have)
        total[j] = have[j] + lo + hi
        return self.emit("concatenate", parts, total, dtype, {"dim": j})

    def _drop_index_dim(self, ids: str) -> str:
        if ids in self.expanded:
            return self.expanded[ids]
        have = self.shapes[ids]
        return self._reshape(ids, have[:-1], self.types[ids].dtype)

    def p_slice(self, ins, p, shape, dtype, outs):
        x = self.materialize(ins[0])
        start = [int(s) for s in p["start_indices"]]
        limit = list(p["limit_indices"])
        strides = [int(s) for s in (p.get("strides") or [1] * len(start))]
        return self._slice(x, start, limit, strides, shape, dtype)

    def _slice(self, x: str, start, limit, strides, shape, dtype) -> str:
        have = self.shapes[x]
        if not any(is_symbolic(d) for d in list(have) + list(limit)):
            attrs: dict[str, Any] = {"start": start, "limit": [int(v) for v in limit]}
            if any(s != 1 for s in strides):
                attrs["strides"] = strides
            if _same_shape(have, shape):
                return x
            return self.emit("slice", [x], shape, dtype, attrs)
        # a dynamic-shaped operand: gather each sliced dim, moved to the front
        self.decomposed["slice"] += 1
        for j in range(len(have)):
            full = start[j] == 0 and strides[j] == 1 and _same_dim(limit[j], have[j])
            if full:
                continue
            x = self._take(x, j, start[j], strides[j], shape[j], dtype)
        return x

    def _take(self, x: str, j: int, start: int, stride: int, n: Any, dtype: str) -> str:
        """Elements start, start+stride, ... (n of them) of dim j of x."""
        have = list(self.shapes[x])
        rank = len(have)
        perm = [j] + [i for i in range(rank) if i != j]
        if j != 0:
            x = self.emit("transpose", [x], [have[i] for i in perm], dtype, {"perm": perm})
        ids = self.emit("iota", [], [n], "i32", {"dim": 0})
        if stride != 1:
            ids = self.emit("mul", [ids, self.constant(stride, [n], "i32")], [n], "i32")
        if start != 0:
            ids = self.emit("add", [ids, self.constant(start, [n], "i32")], [n], "i32")
        moved = [n] + [have[i] for i in perm[1:]]
        x = self.emit("gather", [x, ids], moved, dtype)
        if j != 0:
            inv = [perm.index(i) for i in range(rank)]
            x = self.emit("transpose", [x], [moved[i] for i in inv], dtype, {"perm": inv})
        return x

    def p_split(self, ins, p, shape, dtype, outs):
        x = self.materialize(ins[0])
        axis = int(p["axis"])
        have = self.shapes[x]
        results = []
        offset: Any = 0
        for out_shape, out_dtype in outs:
            size = out_shape[axis]
            start = [0] * len(have)
            limit = list(have)
            if is_symbolic(offset):
                raise JaxImportError("cannot import 'split' at a symbolic offset")
            start[axis] = int(offset)
            limit[axis] = offset + size
            results.append(self._slice(x, start, limit, [1] * len(have), out_shape, out_dtype))
            offset = offset + size
        self.decomposed["split"] += 1
        return results

    def p_pad(self, ins, p, shape, dtype, outs):
        x, value = ins
        x = self.materialize(x)
        config = [(int(lo), int(hi), int(mid)) for lo, hi, mid in p["padding_config"]]
        if any(mid for _, _, mid in config):
            raise JaxImportError("cannot import 'pad' with interior padding")
        self.decomposed["pad"] += 1
        for j, (lo, hi, _) in enumerate(config):
            have = list(self.shapes[x])
            if lo < 0 or hi < 0:  # negative padding cuts
                start = [0] * len(have)
                limit = list(have)
                start[j] = max(-lo, 0)
                limit[j] = have[j] - max(-hi, 0)
                cut = list(have)
                cut[j] = limit[j] - start[j]
                x = self._slice(x, start, limit, [1] * len(have), cut, dtype)
                lo, hi = max(lo, 0), max(hi, 0)
                have = cut
            x = self._pad_dim(x, j, lo, hi, value)
        return x


def _literal(v: Any) -> Lit:
    arr = np.asarray(v.val)
    return Lit(arr.item() if arr.ndim == 0 else arr, bladec_dtype(v.aval.dtype),
                tuple(v.aval.shape))


def _np_dtype(name: str) -> Any:
    from bladec.runtime.backend import numpy_dtype
    return numpy_dtype(name)


def _is_one(d: Any) -> bool:
    return not is_symbolic(d) and int(d) == 1


def _same_dim(a: Any, b: Any) -> bool:
    if is_symbolic(a) != is_symbolic(b):
        return False
    return (a == b) if is_symbolic(a) else int(a) == int(b)


def _same_shape(a: Sequence, b: Sequence) -> bool:
    return len(a) == len(b) and all(_same_dim(x, y) for x, y in zip(a, b))
