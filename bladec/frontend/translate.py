"""JAX jaxpr equations as listing ops: the importer's translator.

:class:`Translator` walks a jaxpr equation by equation. Each primitive has a *rule* in
:data:`RULES`, a table from primitive name to a function that emits ops of the registry
(bladec/ops) for one equation (:mod:`bladec.frontend.rule`); the rules live in
:mod:`bladec.frontend.rules`, one module per family of primitives, as the op registry keeps
one module per family of ops. :mod:`bladec.frontend.jax_import` imports them and drives
the translator.

What the translator itself does for every rule:

- JAX's elementwise primitives broadcast scalars and size-1 dims implicitly; the listing's
  elementwise ops do not, so :meth:`Translator.broadcast_to` gives such operands an
  explicit ``broadcast_in_dim`` (a scalar literal becomes a ``constant`` of the full shape).
- Scalars known at import time (literals, folded conversions) travel as :class:`Lit` and
  become ``constant`` ops only where an op needs a value; small constant arrays are kept
  (:attr:`Translator.known`) so that gathers and scatters at constant indices fold.
- A primitive without a rule, or a rule that refuses its parameters, is a
  :class:`JaxImportError` that names the primitive and the user's ``file:line:col`` (the
  equation's source information), never bladec's own files.
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from bladec.errors import BladecError
from bladec.frontend.rule import RULES
from bladec.ir import NOWHERE, Loc, Op, TensorType, Value, fresh_name
from bladec.symbolic.atoms import AtomTable
from bladec.symbolic.expr import SymbolicExpr, const, sym

DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
          "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint32": "u32",
          "uint8": "u8", "bool": "i1"}
SHORT_DTYPES = {v: k for k, v in DTYPES.items()}


class JaxImportError(BladecError):
    """A JAX function that can not be imported (an unsupported primitive, a bad spec)."""


# Values known at import time are kept only to fold index arrays (gathers and scatters with
# constant indices), which are small; a constant the size of a weight (an optimizer's
# ``0.9 * m`` at hidden 4096) would cost gigabytes of host memory for nothing.
KNOWN_MAX_ELEMENTS = 1 << 16


@dataclass
class Lit:
    """A scalar known at import time (a jaxpr literal, or a folded conversion of one)."""
    value: Any
    dtype: str
    shape: tuple = ()


def bladec_dtype(dtype: Any) -> str:
    if _is_key(dtype):
        raise JaxImportError(f"a typed key ({dtype}) as an argument or result: pass its "
                             "data instead (jax.random.key_data, or a jax.random.PRNGKey)")
    name = np.dtype(dtype).name
    if name not in DTYPES:
        raise JaxImportError(f"element type {name} has no listing equivalent "
                             f"(supported: {', '.join(DTYPES)})")
    return DTYPES[name]


def _is_key(dtype: Any) -> bool:
    import jax
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def aval_spec(aval: Any) -> tuple[tuple, str]:
    """The listing's shape and element type of a JAX value: a threefry key array is its
    data, u32 with the key's own (2,) appended; other PRNGs have no translation."""
    if _is_key(aval.dtype):
        impl = aval.dtype._impl
        if impl.name != "threefry2x32":
            raise JaxImportError(f"random keys of '{impl.name}': only threefry2x32 keys "
                                 "(JAX's default) have a translation")
        return tuple(aval.shape) + tuple(impl.key_shape), "u32"
    return tuple(aval.shape), bladec_dtype(aval.dtype)


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


_ATOM_KINDS = {"floordiv": "FloorDiv", "mod": "Mod", "max": "Max", "min": "Min"}


def dim_to_expr(d: Any, symbols: dict[str, str], atoms: AtomTable | None = None,
                ranges: dict[str, tuple[int, int | None]] | None = None) -> SymbolicExpr:
    """A JAX dimension (int or ``jax.export`` expression) as a bladec polynomial; JAX's
    ``floordiv``, ``mod``, ``max`` and ``min`` become atoms of ``atoms`` (symbol/atoms.py,
    canonical over ``ranges``), refused without one."""
    if not is_symbolic(d):
        return const(int(d))
    total = const(0)
    for term, coeff in d._sorted_terms:
        part = const(int(coeff))
        for factor, power in term._factors:
            if factor.var is None:
                kind = _ATOM_KINDS.get(factor.operation)
                if atoms is None or kind is None:
                    raise JaxImportError(f"dimension {d} uses '{factor.operation}', which the "
                                         "listing's shapes can not express")
                args = [dim_to_expr(o, symbols, atoms, ranges) for o in factor.operands]
                try:
                    value = atoms.make(kind, args, {} if ranges is None else ranges)
                except BladecError as exc:
                    raise JaxImportError(f"dimension {d}: {exc.diagnostic.message}") from None
            else:
                value = sym(symbols[factor.var])
            for _ in range(int(power)):
                part = part * value
        total = total + part
    return total


def _single_symbol(e: SymbolicExpr) -> str | None:
    """The symbol ``e`` is, if it is one alone."""
    if len(e.terms) == 1:
        (m, c), = e.terms.items()
        if c == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]
    return None


def source_loc(eqn: Any) -> Loc:
    """The user's ``file:line:col`` that made ``eqn`` (the first frame outside JAX), or
    :data:`NOWHERE` when JAX recorded none."""
    try:
        from jax.extend import source_info_util
        text = source_info_util.summarize(eqn.source_info)
    except Exception:  # no source information on this equation or in this JAX
        return NOWHERE
    m = re.match(r"^(.+?):(\d+)(?::(\d+))?(?: \(|$)", text)
    if not m or m.group(1).startswith("<"):
        return NOWHERE
    return Loc(m.group(1), int(m.group(2)), int(m.group(3) or 0) + 1)


# primitives that may pass a typed key on to an inner jaxpr (the inlined calls of
# rules/control.py add themselves)
KEY_TRANSPARENT: set[str] = set()


# -- the translator ---------------------------------------------------------------------

class Translator:
    """Emits the listing's ops for jaxpr equations, keeping each JAX variable's value name,
    its JAX shape (to find implicit broadcasts) and what is known of it at import time."""

    def __init__(self, symbols: dict[str, str], stop_gradients: bool = False,
                 capture: bool = False) -> None:
        self.symbols = symbols
        # closed-over constant arrays that are not fills: inputs of their own (as jax.jit
        # passes them to its executable), or an error where the caller can not supply them
        self.capture = capture
        self.captured: dict[int, tuple[Value, np.ndarray]] = {}   # by id of the constant
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
        self.dim_sources: dict[str, list[tuple[str, int]]] = {}  # symbol -> (input, dim)
        self.dim_values: dict[tuple[str, str], str] = {}        # (symbol, dtype) -> value
        self.donated: set[str] = set()           # inputs whose dims are read last resort
        self.loc: Loc = NOWHERE                  # the user's line of the equation at hand
        self.primitive = ""                      # the name of the equation at hand
        # quotient and bound dims (floordiv, min, ...): atoms named after the symbols,
        # canonical over the ranges given (symbol/atoms.py)
        self.ranges: dict[str, tuple[int, int | None]] = {}
        self.atoms = AtomTable(self._fresh_symbol)
        self.compound: dict[tuple[str, int], SymbolicExpr] = {}  # input dims like 4*S0

    def _fresh_symbol(self) -> str:
        taken = set(self.symbols.values()) | set(self.atoms.defs)
        return next(f"S{i}" for i in itertools.count() if f"S{i}" not in taken)

    def dim(self, d: Any) -> SymbolicExpr:
        """A JAX dim as an expression over the listing's symbols and atoms."""
        return dim_to_expr(d, self.symbols, self.atoms, self.ranges)

    # values ---------------------------------------------------------------------------
    def _type(self, shape: Sequence, dtype: str) -> TensorType:
        return TensorType(tuple(None if is_symbolic(d) else int(d) for d in shape), dtype)

    def emit(self, name: str, operands: list[str], shape: Sequence, dtype: str,
             attrs: dict | None = None) -> str:
        """Append op ``name`` with one result of ``shape``; return the result's name."""
        return self.emit_multi(name, operands, [(shape, dtype)], attrs)[0]

    def emit_multi(self, name: str, operands: list[str], outs: Sequence[tuple[Sequence, str]],
                   attrs: dict | None = None) -> list[str]:
        """An op with several results, one per ``(shape, dtype)`` of ``outs``."""
        names = [f"%{next(self.counter)}" for _ in outs]
        results = []
        for out, (shape, dtype) in zip(names, outs):
            t = self._type(shape, dtype)
            results.append(Value(out, t))
            self.types[out] = t
            self.shapes[out] = tuple(shape)
        attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in (attrs or {}).items()}
        self.ops.append(Op(name, list(operands), results, attrs, loc=self.loc))
        return names

    def add_input(self, name: str, shape: Sequence, dtype: str) -> Value:
        self.inputs.add(name)
        binds = []
        for j, d in enumerate(shape):
            if not is_symbolic(d):
                binds.append(f"C{int(d)}")
                continue
            e = self.dim(d)
            s = _single_symbol(e)
            if s is None:                 # a compound size (4*Hp): named by trace()
                if e.is_const or set(self.atoms.defs) & e.symbols:
                    raise JaxImportError(f"input dimension {d} must be a polynomial of "
                                         "dimension variables (floordiv, mod, min and max "
                                         "are derived inside the function)")
                self.compound[(name, j)] = e
                binds.append("")
                continue
            self.dim_sources.setdefault(s, []).append((name, j))
            binds.append(s)
        t = TensorType(tuple(None if is_symbolic(d) else int(d) for d in shape), dtype,
                       tuple(binds) if any(is_symbolic(d) for d in shape) else None)
        self.types[name] = t
        self.shapes[name] = tuple(shape)
        return Value(name, t)

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
        if any(is_symbolic(d) for d in shape):  # a fill of a dynamic shape: its dims lent
            scalar = self.emit("constant", [], (), dtype, {"value": v})
            return self.broadcast_dims(scalar, shape, [], dtype)
        out = self.emit("constant", [], shape, dtype, {"value": v})
        if not any(is_symbolic(d) for d in shape) and \
                math.prod(int(d) for d in shape) <= KNOWN_MAX_ELEMENTS:
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
        if same_shape(have, shape):
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
        return self.broadcast_dims(x, shape, dims, self.types[x].dtype)

    def broadcast_dims(self, x: str, shape: Sequence, dims: list[int], dtype: str) -> str:
        """``broadcast_in_dim`` of x into ``shape``; where a dynamic result dim does not
        come from x, a ``broadcast_like`` that lends it from an input with that dim, so
        that the analysis relates it to the inputs without a hint."""
        have = self.shapes[x]
        covered = {d for k, d in enumerate(dims) if not is_one(have[k])}
        lent = self._lenders(shape, covered)
        if lent is None:
            return self.emit("broadcast_in_dim", [x], shape, dtype, {"dims": dims})
        refs, source, axis = lent
        return self.emit("broadcast_like", [x] + refs, shape, dtype,
                         {"dims": dims, "source": source, "axis": axis})

    def _lenders(self, shape: Sequence, covered: set[int]
                 ) -> tuple[list[str], list[int], list[int]] | None:
        """Inputs that hold each dynamic dim of ``shape`` outside ``covered`` (kept inputs
        first); None when no dim needs one or one has no input holding it."""
        refs: list[str] = []
        source, axis = [-1] * len(shape), [-1] * len(shape)
        for i, d in enumerate(shape):
            if i in covered or not is_symbolic(d):
                continue
            e = self.dim(d)
            syms = sorted(e.symbols)
            one = len(syms) == 1 and e.terms.get(((syms[0], 1),)) == 1 and len(e.terms) == 1
            sources = self.dim_sources.get(syms[0], []) if one else []
            kept = [src for src in sources if src[0] not in self.donated]
            if not kept:
                return None
            name, j = kept[0]
            if name not in refs:
                refs.append(name)
            source[i], axis[i] = refs.index(name), j
        return (refs, source, axis) if refs else None

    # equations ------------------------------------------------------------------------
    def run(self, jaxpr: Any, consts: Sequence, args: Sequence) -> list:
        env: dict[Any, Any] = {}

        def read(v: Any) -> Any:
            if type(v).__name__ == "Literal":
                return _literal(v)
            return env[v]

        for v, c in zip(jaxpr.constvars, consts):
            try:
                env[v] = self._const_array(c)
            except JaxImportError as exc:   # located at the first equation that reads it
                first = next((e for e in jaxpr.eqns if v in e.invars), None)
                loc = source_loc(first) if first is not None else NOWHERE
                raise JaxImportError(exc.diagnostic.message,
                                     loc if loc is not NOWHERE else self.loc) from None
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
        if self.capture:
            return self._capture(c, arr, dtype)
        raise JaxImportError(f"the function closes over a non-uniform constant array of "
                             f"shape {arr.shape}; the listing's constants are fills: pass it "
                             "as an argument, or build it inside the function (from iotas)")

    def _capture(self, c: Any, arr: np.ndarray, dtype: str) -> str:
        """A closed-over constant as an input of the listing (once per array), its value
        also known at import time where small (so that constant indices still fold)."""
        if id(c) in self.captured:
            return self.captured[id(c)][0].name
        taken = self.inputs | {v.name for v, _ in self.captured.values()}
        name = fresh_name(f"%const{len(self.captured)}", taken)
        value = self.add_input(name, arr.shape, dtype)
        self.captured[id(c)] = (value, arr)
        if arr.size <= KNOWN_MAX_ELEMENTS:
            self.known[name] = arr
        return name

    def eqn(self, eqn: Any, ins: list) -> list:
        """Translate one equation by its primitive's rule; errors get the user's line."""
        name = eqn.primitive.name
        fn = RULES.get(name)
        outer, self.loc = self.loc, source_loc(eqn)
        self.primitive = name
        if self.loc is NOWHERE:
            self.loc = outer
        try:
            outs = [aval_spec(v.aval) for v in eqn.outvars]
            shape, dtype = outs[0] if outs else ((), "f32")
            if fn is None:
                raise JaxImportError(f"cannot import JAX primitive '{name}': no listing op "
                                     "or decomposition for it")
            if not name.startswith("random_") and name not in KEY_TRANSPARENT and any(
                    _is_key(v.aval.dtype) for v in eqn.invars if hasattr(v, "aval")):
                raise JaxImportError(f"cannot import '{name}' of a typed key array (only "
                                     "random_bits, random_split, random_fold_in and the "
                                     "calls that pass keys on are translated)")
            result = fn(self, ins, eqn.params, shape, dtype, outs)
        except JaxImportError as exc:
            if exc.loc is NOWHERE or exc.loc.line == 0:
                raise JaxImportError(str(exc.diagnostic.message), self.loc) from None
            raise
        finally:
            self.loc = outer
        return result if isinstance(result, list) else [result]


def _literal(v: Any) -> Lit:
    arr = np.asarray(v.val)
    return Lit(arr.item() if arr.ndim == 0 else arr, bladec_dtype(v.aval.dtype),
                tuple(v.aval.shape))


def np_dtype(name: str) -> Any:
    from bladec.runtime.backends.backend import numpy_dtype
    return numpy_dtype(name)


def is_one(d: Any) -> bool:
    return not is_symbolic(d) and int(d) == 1


def same_dim(a: Any, b: Any) -> bool:
    if is_symbolic(a) != is_symbolic(b):
        return False
    return (a == b) if is_symbolic(a) else int(a) == int(b)


def same_shape(a: Sequence, b: Sequence) -> bool:
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


