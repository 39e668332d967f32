"""Import a JAX function into a bladec listing, with symbolic batch/sequence dims.

:func:`trace` runs ``jax.make_jaxpr`` on the function with ``jax.ShapeDtypeStruct``
arguments whose shapes hold ``jax.export`` dimension variables, and translates the jaxpr,
equation by equation, into ops of the registry (bladec/ops). The graph inputs are bound to
symbols ``@S0, @S1, ...`` (one per JAX dimension variable, in order of first appearance,
declared in ``@symbolic_shape_graph`` with their ranges); every other dynamic dim is
written as a bare ``?``, so that bladec's own analysis has to rediscover how it relates
to the inputs. Static dims are numbers.

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

Where the analysis can not recover a dim from the ops alone (a ``reshape`` that splits
a dynamic dim, an ``iota`` whose length never meets an input's), the result of the op
that introduced it is bound to a symbol with its relation in ``@symbolic_shape_graph``
(a *hint*; :attr:`Imported.hints` lists them, and ``hints=False`` makes it an error).
With ``check=True`` (the default) every value's dims from the analysis are compared with
JAX's own at two bindings.
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from bladec.errors import BladecError
from bladec.ir import Func, Module, Op, Relation, ShapeGraph, SymbolDecl, TensorType, Value
from bladec.symbolic.expr import SymbolicExpr, const, sym

_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
           "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint8": "u8",
           "bool": "i1"}
_SHORT_DTYPES = {v: k for k, v in _DTYPES.items()}

_UNARY = {"neg": "neg", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
          "tanh": "tanh", "logistic": "logistic", "abs": "abs", "sin": "sin", "cos": "cos",
          "square": "square", "copy": "copy", "copy_p": "copy"}
_BINARY = {"add": "add", "add_any": "add", "sub": "sub", "mul": "mul", "div": "div",
           "max": "max", "min": "min", "pow": "pow"}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_REDUCE = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
           "reduce_prod": "prod", "reduce_and": "min", "reduce_or": "max"}
_IDENTITY = {"stop_gradient", "sharding_constraint", "device_put", "optimization_barrier",
             "mesh_cast", "reshard"}
_INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr",
           "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
           "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
           "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}
# ops whose result dims their shape rule does not derive from operands: where a hint goes
_SOURCES = {"reshape", "dynamic_reshape", "iota", "constant", "rng_uniform",
            "broadcast_in_dim", "broadcast"}


class JaxImportError(BladecError):
    """A JAX function that can not be imported (an unsupported primitive, a bad spec)."""


# Values known at import time are kept only to fold index arrays (gathers and scatters with
# constant indices), which are small; a constant the size of a weight (an optimizer's
# ``0.9 * m`` at hidden 4096) would cost gigabytes of host memory for nothing.
_KNOWN_MAX_ELEMENTS = 1 << 16


@dataclass
class _Lit:
    """A scalar known at import time (a jaxpr literal, or a folded conversion of one)."""
    value: Any
    dtype: str
    shape: tuple = ()


@dataclass
class Imported:
    """The result of :func:`trace`: the listing and how it maps to the JAX function."""
    module: Module
    jaxpr: Any
    symbols: dict[str, str]                 # JAX dimension variable -> bladec symbol
    input_names: list[str]                  # one per flattened input leaf
    output_names: list[str]                 # one per flattened output leaf
    in_tree: Any
    out_tree: Any
    jax_dims: dict[str, list[SymbolicExpr]]  # value -> JAX's dims over the bladec symbols
    hints: list[str] = field(default_factory=list)
    decomposed: Counter = field(default_factory=Counter)  # primitive -> times decomposed

    def text(self) -> str:
        from bladec.printer import format_module
        return format_module(self.module)

    def flatten_inputs(self, *args: Any) -> dict[str, np.ndarray]:
        """Concrete arguments of the JAX function as the listing's named inputs."""
        import jax
        leaves, tree = jax.tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise ValueError(f"arguments have structure {tree}, expected {self.in_tree}")
        return {n: np.asarray(x) for n, x in zip(self.input_names, leaves)}

    def unflatten_outputs(self, outputs: dict[str, Any]) -> Any:
        """The listing's named outputs as the JAX function's output pytree."""
        import jax
        return jax.tree_util.tree_unflatten(self.out_tree,
                                            [outputs[n] for n in self.output_names])

    def binding(self, **values: int) -> dict[str, int]:
        """JAX dimension variables (``B=2, S=16``) as bladec symbol values."""
        return {self.symbols[k]: v for k, v in values.items()}


# -- argument specs --------------------------------------------------------------------

def parse_shapes(text: str) -> list[tuple[str, str, str]]:
    """``"tokens:B,S:i32; mask:B,S; lr::f32"`` -> ``[(name, dims, dtype), ...]``.

    Each item is ``NAME:DIMS[:DTYPE]``; DIMS is comma-separated, each a number or a JAX
    dimension expression (``B``, ``2*S``); empty DIMS is a scalar; DTYPE defaults to f32.
    """
    out = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        parts = [p.strip() for p in item.split(":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise JaxImportError(f"bad shape spec '{item}': expected NAME:DIMS[:DTYPE]")
        dtype = parts[2] if len(parts) == 3 and parts[2] else "f32"
        if dtype not in _SHORT_DTYPES:
            raise JaxImportError(f"unknown dtype '{dtype}' in '{item}' "
                                 f"(known: {', '.join(_SHORT_DTYPES)})")
        out.append((parts[0], parts[1], dtype))
    return out


def specs_from_text(text: str) -> dict[str, Any]:
    """:func:`parse_shapes` as ``jax.ShapeDtypeStruct``\\ s sharing one symbolic scope."""
    import jax
    from jax import export
    scope = export.SymbolicScope()
    specs = {}
    for name, dims, dtype in parse_shapes(text):
        try:
            shape = export.symbolic_shape(f"({dims})" if dims else "()", scope=scope)
        except Exception as exc:  # jax raises ValueError/TypeError with its own text
            raise JaxImportError(f"bad dims '{dims}' for {name}: {exc}") from None
        specs[name] = jax.ShapeDtypeStruct(shape, np.dtype(_SHORT_DTYPES[dtype])
                                           if dtype != "bf16" else jax.numpy.bfloat16)
    return specs


def _bladec_dtype(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in _DTYPES:
        raise JaxImportError(f"element type {name} has no listing equivalent "
                             f"(supported: {', '.join(_DTYPES)})")
    return _DTYPES[name]


def _is_symbolic(d: Any) -> bool:
    return not isinstance(d, (int, np.integer))


def _dim_vars(d: Any) -> list[str]:
    if not _is_symbolic(d):
        return []
    out = []
    for term, _ in d._sorted_terms:
        for factor, _ in term._factors:
            if factor.var is not None:
                out.append(factor.var)
            else:
                for opnd in factor.operands:
                    out.extend(_dim_vars(opnd))
    return out


def dim_to_expr(d: Any, symbols: dict[str, str]) -> SymbolicExpr:
    """A JAX dimension (int or ``jax.export`` expression) as a bladec polynomial."""
    if not _is_symbolic(d):
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

class _Translator:
    def __init__(self, symbols: dict[str, str]) -> None:
        self.symbols = symbols
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
        return TensorType(tuple(None if _is_symbolic(d) else int(d) for d in shape), dtype)

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
        binds = tuple(f"C{int(d)}" if not _is_symbolic(d) else self._input_symbol(d)
                      for d in shape)
        t = TensorType(tuple(None if _is_symbolic(d) else int(d) for d in shape), dtype,
                       binds if any(_is_symbolic(d) for d in shape) else None)
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

    def dtype(self, x: str | _Lit) -> str:
        return x.dtype if isinstance(x, _Lit) else self.types[x].dtype

    def shape(self, x: str | _Lit) -> tuple:
        return x.shape if isinstance(x, _Lit) else self.shapes[x]

    def constant(self, value: Any, shape: Sequence, dtype: str) -> str:
        if dtype == "i1":
            v: Any = int(bool(value))
        elif dtype.startswith(("i", "u")):
            v = int(value)
        else:
            v = float(value)
        out = self.emit("constant", [], shape, dtype, {"value": v})
        if not any(_is_symbolic(d) for d in shape) and \
                math.prod(int(d) for d in shape) <= _KNOWN_MAX_ELEMENTS:
            self.known[out] = np.full(tuple(int(d) for d in shape), v)
        return out

    def materialize(self, x: str | _Lit, shape: Sequence | None = None) -> str:
        """A value name for ``x``; a literal becomes a constant of ``shape``."""
        if isinstance(x, _Lit):
            return self.constant(x.value, x.shape if shape is None else shape, x.dtype)
        return x

    def broadcast_to(self, x: str | _Lit, shape: Sequence) -> str:
        """``x`` with JAX's implicit scalar / size-1 broadcasting made explicit."""
        if isinstance(x, _Lit):
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
        dtype = _bladec_dtype(arr.dtype)
        if arr.ndim == 0:
            return _Lit(arr.item(), dtype)
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
        outs = [(tuple(v.aval.shape), _bladec_dtype(v.aval.dtype)) for v in eqn.outvars]
        shape, dtype = outs[0] if outs else ((), "f32")
        if name in _INLINE:
            sub = p.get(_INLINE[name])
            if sub is None:
                sub = next((p[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in p), None)
            if sub is None:
                raise JaxImportError(f"cannot find the body of '{name}' to inline")
            inner, consts = (sub.jaxpr, sub.consts) if hasattr(sub, "consts") else (sub, [])
            return self.run(inner, consts, ins)
        if name in _IDENTITY:
            return list(ins)
        if name in _UNARY:
            x = ins[0]
            if isinstance(x, _Lit):
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
        handler = getattr(self, "p_" + name.replace("-", "_"), None)
        if handler is None:
            raise JaxImportError(f"cannot import JAX primitive '{name}': no listing op or "
                                 "decomposition for it (see bladec/frontend/jax_import.py)")
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
        if isinstance(x, _Lit):
            value = np.asarray(x.value, _np_dtype(x.dtype)).astype(_np_dtype(dtype)).item()
            return _Lit(value, dtype, x.shape)
        if self.dtype(x) == dtype:
            return x
        return self.emit("convert", [x], shape, dtype, {"dtype": dtype})

    def p_broadcast_in_dim(self, ins, p, shape, dtype, outs):
        x = ins[0]
        if isinstance(x, _Lit):
            return self.constant(x.value, shape, x.dtype)
        dims = [int(d) for d in p["broadcast_dimensions"]]
        have = self.shapes[x]
        if _same_shape(have, shape) and dims == list(range(len(shape))):
            return x
        out = self.emit("broadcast_in_dim", [x], shape, dtype, {"dims": dims})
        self.broadcasts[out] = (x, dims)
        if (dims == list(range(len(have))) and _same_shape(have, shape[:len(have)])
                and all(not _is_symbolic(d) and int(d) == 1 for d in shape[len(have):])):
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

    def p_reduce_sum(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "sum")

    def p_reduce_max(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "max")

    def p_reduce_min(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "min")

    def p_reduce_prod(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "prod")

    def p_reduce_and(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "min")

    def p_reduce_or(self, ins, p, shape, dtype, outs):
        return self._reduce(ins, p, shape, dtype, "max")

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
            if not _is_symbolic(have[d]) and not _is_symbolic(sizes[d]):  # XLA clamps
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
                if not _is_symbolic(bshape[d]) and not _is_symbolic(ushape[d]):  # XLA clamps
                    lo = max(0, min(lo, int(bshape[d]) - int(ushape[d])))
                x = self._pad_dim(x, int(d), lo, bshape[d] - lo - ushape[d], _Lit(0, dtype))
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
            elif _is_symbolic(n) or int(n) > 0:
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
        if not any(_is_symbolic(d) for d in list(have) + list(limit)):
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
            if _is_symbolic(offset):
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


def _literal(v: Any) -> _Lit:
    arr = np.asarray(v.val)
    return _Lit(arr.item() if arr.ndim == 0 else arr, _bladec_dtype(v.aval.dtype),
                tuple(v.aval.shape))


def _np_dtype(name: str) -> Any:
    from bladec.runtime.backend import numpy_dtype
    return numpy_dtype(name)


def _is_one(d: Any) -> bool:
    return not _is_symbolic(d) and int(d) == 1


def _same_dim(a: Any, b: Any) -> bool:
    if _is_symbolic(a) != _is_symbolic(b):
        return False
    return (a == b) if _is_symbolic(a) else int(a) == int(b)


def _same_shape(a: Sequence, b: Sequence) -> bool:
    return len(a) == len(b) and all(_same_dim(x, y) for x, y in zip(a, b))


# -- names --------------------------------------------------------------------------------

def _path_name(prefix: str, path: tuple) -> str:
    parts = [prefix] if prefix else []
    for k in path:
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    text = "_".join(parts) or "x"
    return "%" + re.sub(r"[^A-Za-z0-9_]", "_", text)


def _unique(names: list[str], taken: set[str]) -> list[str]:
    out = []
    for n in names:
        base, k = n, 1
        while n in taken:
            n = f"{base}_{k}"
            k += 1
        taken.add(n)
        out.append(n)
    return out


# -- the entry points ---------------------------------------------------------------------

def trace(fn: Callable, arg_specs: Sequence[Any], *, arg_names: Sequence[str] | None = None,
          output_names: Sequence[str] | None = None,
          ranges: dict[str, tuple[int, int | None]] | None = None,
          symbols: dict[str, str] | None = None, hints: bool = True,
          check: bool = True) -> Imported:
    """Trace ``fn(*arg_specs)`` with ``jax.make_jaxpr`` and translate it to a listing.

    ``arg_specs``: one pytree per positional argument, whose leaves have ``.shape`` and
    ``.dtype`` (``jax.ShapeDtypeStruct`` with ``jax.export.symbolic_shape`` dims, or
    arrays). ``arg_names``: names of the positional arguments (default: the function's
    parameter names); an input leaf is named after its argument and pytree path
    (``%params_layers_0_wq``). ``output_names``: one per output leaf (default ``%out0``,
    ``%out1_layers_0_wq``, ...). ``ranges``: ``{"B": (1, 32)}`` by JAX dimension variable
    (or bladec symbol), written as ``SymbolicDim`` ranges. ``symbols``: the bladec symbol
    of each JAX variable (default ``S0, S1, ...`` in order of first appearance).
    """
    import jax

    specs = tuple(arg_specs)
    flat, in_tree = jax.tree_util.tree_flatten_with_path(specs)
    if arg_names is None:
        arg_names = _param_names(fn, len(specs))
    names = [_path_name(str(arg_names[path[0].idx]) if path[0].idx < len(arg_names)
                        else f"arg{path[0].idx}", tuple(path[1:])) for path, _ in flat]
    names = _unique(names, set())
    leaves = [leaf for _, leaf in flat]
    symmap: dict[str, str] = dict(symbols or {})
    for leaf in leaves:
        for d in leaf.shape:
            for var in _dim_vars(d):
                if var not in symmap:
                    taken = set(symmap.values())
                    symmap[var] = next(f"S{i}" for i in itertools.count() if f"S{i}" not in taken)
    structs = [jax.ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype) for leaf in leaves]
    try:
        closed = jax.make_jaxpr(fn)(*jax.tree_util.tree_unflatten(in_tree, structs))
    except Exception as exc:  # the function does not trace with symbolic shapes
        raise JaxImportError(f"tracing {getattr(fn, '__name__', fn)} failed: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from exc
    out_shapes = jax.eval_shape(fn, *jax.tree_util.tree_unflatten(in_tree, structs))
    out_flat, out_tree = jax.tree_util.tree_flatten_with_path(out_shapes)

    tr = _Translator(symmap)
    args = [tr.add_input(n, leaf.shape, _bladec_dtype(leaf.dtype))
            for n, leaf in zip(names, leaves)]
    results = tr.run(closed.jaxpr, closed.consts, [a.name for a in args])
    if output_names is None:  # out0, out1_layers_0_wq, ... after the output's pytree
        output_names = [_path_name(f"out{path[0].idx}", tuple(path[1:]))
                        if path and hasattr(path[0], "idx") else _path_name("out", tuple(path))
                        for path, _ in out_flat]
    output_names = [n if n.startswith("%") else "%" + n for n in output_names]
    if len(output_names) != len(results):
        raise JaxImportError(f"{len(output_names)} output names for {len(results)} outputs")
    output_names = _unique(list(output_names), set(names))
    returns = _outputs(tr, results, [a.name for a in args], output_names,
                       [tuple(v.aval.shape) for v in closed.jaxpr.outvars])
    ops = _renumber(_dce(tr.ops, returns), set(returns), tr)

    decls = []
    rng = {symmap.get(k, k): v for k, v in (ranges or {}).items()}
    for s in sorted(set(symmap.values()), key=lambda s: int(s[1:]) if s[1:].isdigit() else 0):
        lo, hi = rng.get(s, (1, None))
        decls.append(SymbolDecl(s, int(lo), None if hi is None else int(hi)))
    unknown = set(rng) - set(symmap.values())
    if unknown:
        raise JaxImportError(f"ranges given for unknown dimension(s) {', '.join(sorted(unknown))}"
                             f" (known: {', '.join(symmap)})")
    module = Module([Func("main", args, ops, returns)], ShapeGraph(decls, []))
    static = not decls
    jax_dims = {n: [dim_to_expr(d, symmap) for d in shp] for n, shp in tr.shapes.items()}
    imported = Imported(module, closed, symmap, names, list(returns), in_tree, out_tree,
                        jax_dims, [], tr.decomposed)
    _complete(imported, hints)
    if check:
        check_dims(imported)
    if static and not module.shape_graph.decls:
        module.shape_graph = None  # a static graph: no symbols to declare
    return imported


def import_function(fn: Callable, arg_specs: Sequence[Any], **kwargs: Any) -> Module:
    """:func:`trace` and return only the listing's :class:`Module`."""
    return trace(fn, arg_specs, **kwargs).module


def _param_names(fn: Callable, n: int) -> list[str]:
    import inspect
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _signature(fn: Callable) -> tuple[list[str], list[str]]:
    """The positional parameters of ``fn`` and those of them without a default."""
    import inspect
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], []
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [p.name for p in params], [p.name for p in params if p.default is p.empty]


def _outputs(tr: _Translator, results: list, inputs: list[str], names: list[str],
             shapes: list[tuple]) -> list[str]:
    """Name each output; inputs, literals and repeats are copied to a value of their own."""
    rename: dict[str, str] = {}
    seen: set[str] = set()
    returns = []
    producers = {r.name: op for op in tr.ops for r in op.results}
    for x, name, shape in zip(results, names, shapes):
        if isinstance(x, _Lit):
            x = tr.constant(x.value, shape, x.dtype)
            producers[x] = tr.ops[-1]
        elif x in inputs or x in seen:
            x = tr.emit("copy", [x], tr.shapes[x], tr.types[x].dtype)
            producers[x] = tr.ops[-1]
        seen.add(x)
        rename[x] = name
        returns.append(name)
    for op in tr.ops:
        op.operands = [rename.get(o, o) for o in op.operands]
        for i, r in enumerate(op.results):
            if r.name in rename:
                new = rename[r.name]
                op.results[i] = Value(new, r.type)
                tr.types[new] = tr.types.pop(r.name)
                tr.shapes[new] = tr.shapes.pop(r.name)
    return returns


def _dce(ops: list[Op], returns: list[str]) -> list[Op]:
    live = set(returns)
    kept = []
    for op in reversed(ops):
        if any(r in live for r in op.result_names):
            kept.append(op)
            live.update(op.operands)
    kept.reverse()
    return kept


def _renumber(ops: list[Op], keep: set[str], tr: _Translator) -> list[Op]:
    """Name the intermediate values %0, %1, ... in program order."""
    rename: dict[str, str] = {}
    counter = itertools.count()
    for op in ops:
        op.operands = [rename.get(o, o) for o in op.operands]
        for i, r in enumerate(op.results):
            if r.name in keep:
                continue
            new = rename[r.name] = f"%{next(counter)}"
            op.results[i] = Value(new, r.type)
    tr.shapes = {rename.get(n, n): s for n, s in tr.shapes.items() if n in rename or n in keep
                 or n in tr.inputs}
    return ops


# -- completing and checking the shapes ---------------------------------------------------

def _determined(info: Any, inputs: list[str]) -> set[str]:
    """Free symbols the input shapes fix (as the runtime binds them: one at a time)."""
    known: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in inputs:
            for e in info.dims[name]:
                free = [s for s in e.symbols if s not in known]
                if len(free) == 1 and e.degree(free[0]) == 1:
                    known.add(free[0])
                    changed = True
    return known


def _complete(imp: Imported, allow_hints: bool) -> None:
    """Bind the dims the analysis can not rediscover (hints), until none is left."""
    from bladec.symbolic.shapes import analyze_shapes
    func = imp.module.main
    inputs = [a.name for a in func.args]
    for _ in range(8):
        info = analyze_shapes(imp.module)
        known = _determined(info, inputs)
        loose = {s for s in info.free if s not in known}
        if not loose:
            return
        targets: list[Op] = []
        for s in sorted(loose):  # bind where each loose symbol is born
            users = [op for op in func.ops
                     if any(s in d.symbols for r in op.results for d in info.dims[r.name])]
            first = [op for op in users[:1] if op.name in _SOURCES]
            targets += first or [op for op in users if op.name in _SOURCES]
        targets = list({id(op): op for op in targets
                        if any(r.type.binds is None for r in op.results)}.values())
        if not targets:
            break
        if not allow_hints:
            names = ", ".join(r.name for op in targets[:5] for r in op.results)
            raise JaxImportError(f"the analysis can not relate the dims of {names} to the "
                                 "inputs' (hints=False)")
        for op in targets:
            for i, r in enumerate(op.results):
                if r.type.binds is None and any(d is None for d in r.type.dims):
                    binds = tuple(_hint_symbol(imp, e) for e in imp.jax_dims[r.name])
                    op.results[i] = Value(r.name, r.type.with_binds(binds))
                    imp.hints.append(r.name)
    info = analyze_shapes(imp.module)
    raise JaxImportError(f"the analysis leaves symbol(s) {', '.join(sorted(info.free))} "
                         "undetermined by the input shapes")


def _hint_symbol(imp: Imported, e: SymbolicExpr) -> str:
    """A symbol (or constant) name for ``e``, with relations in the shape graph."""
    graph = imp.module.shape_graph
    if e.is_const:
        return f"C{e.const}"
    if len(e.terms) == 1:
        (m, c), = e.terms.items()
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]
    cache = getattr(imp, "_hint_cache", None)
    if cache is None:
        cache = {}
        setattr(imp, "_hint_cache", cache)
    if e in cache:
        return cache[e]

    def fresh() -> str:
        taken = {d.name for d in graph.decls}
        name = next(f"S{i}" for i in itertools.count() if f"S{i}" not in taken)
        graph.decls.append(SymbolDecl(name))
        return name

    def positive(p: SymbolicExpr) -> str:  # a polynomial with positive coefficients
        if p in cache:
            return cache[p]
        terms = []
        for m, c in sorted(p.terms.items()):
            args = ([f"C{c}"] if c != 1 or not m else []) + [s for s, k in m for _ in range(k)]
            if len(args) == 1:
                terms.append(args[0])
            else:
                t = fresh()
                graph.relations.append(Relation(t, "Mul", args))
                terms.append(t)
        if len(terms) == 1 and not terms[0].startswith("C"):
            name = terms[0]
        else:
            name = fresh()
            graph.relations.append(Relation(name, "Add", terms))
        cache[p] = name
        return name

    pos = SymbolicExpr({m: c for m, c in e.terms.items() if c > 0})
    neg = SymbolicExpr({m: -c for m, c in e.terms.items() if c < 0})
    if not neg.terms:
        name = positive(pos)
    else:  # name + neg = pos
        name = fresh()
        graph.relations.append(Relation(positive(pos), "Add",
                                        [name, f"C{neg.const}" if neg.is_const
                                         else positive(neg)]))
    cache[e] = name
    return name


def check_dims(imp: Imported, bindings: list[dict[str, int]] | None = None) -> None:
    """Every value's dims from bladec's analysis equal JAX's at each binding (of the
    input symbols); raise :class:`JaxImportError` naming the first difference."""
    from bladec.symbolic.shapes import analyze_shapes
    info = analyze_shapes(imp.module)
    graph = imp.module.shape_graph
    inputs = list({s for s in imp.symbols.values()})
    if bindings is None:
        ranges = {d.name: (d.min, d.max) for d in graph.decls}
        bindings = []
        for k in (0, 1):
            b = {}
            for i, s in enumerate(sorted(inputs)):
                lo, hi = ranges.get(s, (1, None))
                v = lo + 2 + k * (3 + i) + i
                b[s] = v if hi is None else max(lo, min(hi, v))
            bindings.append(b)
    for b in bindings:
        free = bind_free(info, imp.module.main.args,
                         {n: [e.evaluate(b) for e in imp.jax_dims[n]]
                          for n in imp.input_names})
        full = info.bind(free)
        for name, dims in info.dims.items():
            got = [d.evaluate(full) for d in dims]
            want = [e.evaluate(b) for e in imp.jax_dims[name]]
            if got != want:
                raise JaxImportError(f"bladec's analysis gives {name} the shape {got} at "
                                     f"{b}, JAX gives {want}")


def bind_free(info: Any, args: list[Value], shapes: dict[str, list[int]]) -> dict[str, int]:
    """Values of the analysis's free symbols from concrete input shapes."""
    binding: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for a in args:
            for j, e in enumerate(info.dims[a.name]):
                free = [s for s in e.symbols if s not in binding]
                if len(free) != 1 or e.degree(free[0]) != 1:
                    continue
                s = free[0]
                rest = e.subs({s: const(0)})
                coef = (e - rest).subs({s: const(1)})
                binding[s] = (shapes[a.name][j] - rest.evaluate(binding)) // coef.evaluate(binding)
                changed = True
    return binding


# -- the command line's entry point -------------------------------------------------------

def parse_ranges(text: str | None) -> dict[str, tuple[int, int | None]]:
    """``"B=1:32,S=1:512"`` (``S=:512`` and ``S=4:`` too) to ``{"B": (1, 32), ...}``."""
    out: dict[str, tuple[int, int | None]] = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        name, eq, span = item.partition("=")
        lo, colon, hi = span.partition(":")
        try:
            low = int(lo) if lo.strip() else 1
            high = int(hi) if hi.strip() else None
        except ValueError:
            low, high = 0, None
        if not eq or not colon or not name.strip() or low < 1 or (high is not None and high < low):
            raise JaxImportError(f"bad --range entry '{item}' (expected NAME=MIN:MAX, MIN >= 1)")
        out[name.strip()] = (low, high)
    return out


def load_target(target: str) -> Any:
    """``package.module:attribute`` to the attribute (the current directory is importable)."""
    import importlib
    import os
    import sys
    module_name, colon, attr = target.partition(":")
    if not colon or not module_name or not attr:
        raise JaxImportError(f"bad target '{target}': expected MODULE:FUNCTION")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise JaxImportError(f"cannot import module '{module_name}': "
                             f"{type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise JaxImportError(f"module '{module_name}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise JaxImportError(f"'{target}' is not callable")
    return obj


def import_target(target: str, shapes: str | None = None, ranges: str | None = None,
                  hints: bool = True) -> Imported:
    """What ``bladec import`` does: trace ``MODULE:FUNCTION`` and translate it.

    With ``shapes`` (``"tokens:B,S:i32;lr::f32"``), FUNCTION is traced with one spec per
    named positional parameter. Without, FUNCTION is an *import spec*: called with no
    arguments, it returns ``{"fn": ..., "arg_specs": (...), "ranges": ..., ...}`` (the
    keyword arguments of :func:`trace`) or a tuple ``(fn, arg_specs)``.
    """
    obj = load_target(target)
    kwargs: dict[str, Any] = {}
    if shapes is None:
        try:
            spec = obj()
        except TypeError as exc:
            raise JaxImportError(f"'{target}' is called without arguments as an import "
                                 f"spec and failed ({exc}); give --shapes to trace it "
                                 "directly") from None
        if isinstance(spec, dict):
            kwargs = dict(spec)
            if "fn" not in kwargs or "arg_specs" not in kwargs:
                raise JaxImportError(f"the import spec of '{target}' needs 'fn' and 'arg_specs'")
        elif isinstance(spec, tuple) and len(spec) == 2 and callable(spec[0]):
            kwargs = {"fn": spec[0], "arg_specs": spec[1]}
        else:
            raise JaxImportError(f"'{target}' returned {type(spec).__name__}, not an import spec "
                                 "(a dict with 'fn' and 'arg_specs'); give --shapes to trace it")
    else:
        specs = specs_from_text(shapes)
        params, required = _signature(obj)
        unknown = [n for n in specs if n not in params]
        if not unknown:
            order = [p for p in params if p in specs]
            missing = [p for p in required if p not in specs]
            if missing or order != params[:len(order)]:
                absent = missing or [p for p in params[:len(order)] if p not in specs]
                raise JaxImportError(f"--shapes names {', '.join(specs)}; the function takes "
                                     f"{', '.join(params)} (missing {', '.join(absent)})")
        elif params and len(specs) == len(params) and not set(specs) & set(params):
            order = list(specs)  # other names than the function's: take them in order
        else:
            raise JaxImportError(f"--shapes names {', '.join(unknown)}, which the function's "
                                 f"parameters ({', '.join(params) or 'none'}) do not")
        kwargs = {"fn": obj, "arg_specs": tuple(specs[n] for n in order),
                  "arg_names": [n.lstrip("%") for n in order]}
    if ranges:
        kwargs["ranges"] = {**kwargs.get("ranges", {}), **parse_ranges(ranges)}
    kwargs["hints"] = hints
    return trace(**kwargs)
