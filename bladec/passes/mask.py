"""``mask``: padding that does not change the answer.

Padding a symbol (``bladec.jit(..., pad={"B": 16})``, ``Engine(pad=...)``) runs a listing
at a rounded-up size, the inputs zero-filled at the end of each padded dim and the
outputs cut back. Elementwise ops do not care: each padded entry computes junk of its
own, which the cut drops. Ops that combine entries along a padded dim do care: a sum, a
mean, a max, a softmax, a contraction over the padded rows would take the junk in. This
pass rewrites them so that they ignore it, given the true sizes at run time:

- the listing gets scalar ``i32`` inputs ``%padding.true.S`` (the caller's size of each
  padded symbol S) and, where a mask needs one, ``%padding.size.S`` (the size the step
  runs at, padded or not); the engine supplies both on every call;
- reductions (``reduce`` of every kind, ``argmax``/``argmin``, a reversed ``cumulative``,
  ``sort``, ``top_k``) over a padded dim see the padding replaced by their identity
  (0 for a sum, -inf for a max, +inf for a sort's keys, ...); contractions (``dot``,
  ``dot_general``) over a padded dim see zeros on both sides, and ``scatter_add`` adds
  no padded update: the replacement is a ``select``, so junk that is inf or NaN stays out;
- ``dim_size`` over a padded dim reads the true size (``jnp.mean`` divides by it, and
  ``x[-1]`` indexes with it).

Which entries are padding: a padded dim keeps its padding at its end (the inputs are
padded so), and each value's dim is tracked as the row-major *factors* it is made of
(``merge_dims`` of (B, S) is one dim with factors B and S, whose padding is inside), so
that a mask is ``(i // inner) % size < true`` per padded factor. Ops that would move the
padding elsewhere (``reverse``, a ``concatenate`` with padding before its end, a reshape
that does not split along the factors, pooling, a convolution's window, a random bits op
whose values depend on the whole shape, a loop over padded values), and reductions over a
dim whose factors are not known, can not be made exact: each is an error located at the
op (the user's source line, for imported functions), unless ``unsafe=keep``, which
leaves them as they are (the result then depends on the padding).
"""
from __future__ import annotations

from dataclasses import replace

from bladec.adjoint import Builder
from bladec.errors import BladecError
from bladec.ir import FLOAT_DTYPES, Func, Module, Op, TensorType, Value
from bladec.passes.pipeline import ChoiceOption, SymbolsOption, register
from bladec.symbolic.expr import SymbolicExpr, const
from bladec.symbolic.graph import write_back
from bladec.symbolic.shapes import ShapeInfo, analyze_shapes

TRUE_PREFIX = "%padding.true."    # + symbol: the caller's size
SIZE_PREFIX = "%padding.size."    # + symbol: the size the step runs at

Factors = tuple[SymbolicExpr, ...]

_INF = float("inf")
_INT_RANGE = {"i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
              "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u32": (0, 2**32 - 1),
              "i1": (0, 1)}


def lowest(dtype: str) -> float | int:
    return -_INF if dtype in FLOAT_DTYPES else _INT_RANGE[dtype][0]


def highest(dtype: str) -> float | int:
    return _INF if dtype in FLOAT_DTYPES else _INT_RANGE[dtype][1]


IDENTITY = {"sum": lambda t: 0, "prod": lambda t: 1, "max": lowest, "min": highest,
            "logsumexp": lowest}


@register
class MaskPass:
    name = "mask"
    options = {"pad": SymbolsOption("the padded symbols (default: every free symbol)"),
               "unsafe": ChoiceOption("refuse", ("refuse", "keep"),
                                      "ops that no mask makes exact")}
    discards = {"schedule": "would add ops that schedule's versions do not hold",
                "remat": "would add ops that remat's plan did not see"}

    def __init__(self, pad: tuple[str, ...] | str | None = None,
                 unsafe: str = "refuse") -> None:
        if isinstance(pad, str):
            pad = self.options["pad"].parse(self.name, "pad", pad)
        self.pad = tuple(s.lstrip("@") for s in pad) if pad else None
        self.unsafe = self.options["unsafe"].parse(self.name, "unsafe", unsafe)

    def apply(self, module: Module) -> Module:
        func = module.main
        info = analyze_shapes(module)
        wanted = info.free if self.pad is None else self.pad
        padded = {free_symbol(info, s) or s for s in wanted}
        unknown = padded - set(info.free)
        if unknown:
            raise BladecError(f"mask: {', '.join(sorted(unknown))} is not a free symbol of "
                              f"@{func.name} (free: {', '.join(info.free) or 'none'})",
                              func.loc)
        if not padded:
            return module
        new = _Masker(func, info, padded, self.unsafe == "keep").run()
        funcs = [new if f is func else f for f in module.funcs]
        out = Module(funcs, module.shape_graph, module.file, module.mesh)
        return write_back(out, analyze_shapes(out))


class _Masker:
    """One walk over the ops, in order: factors tracked, masks inserted, errors raised."""

    def __init__(self, func: Func, info: ShapeInfo, padded: set[str], keep: bool) -> None:
        self.func, self.info, self.padded, self.keep = func, info, padded, keep
        types = func.value_types()
        self.b = Builder(types, set(types))
        self.factors: dict[str, list[Factors]] = {}
        self.rename: dict[str, str] = {}
        self.inputs: dict[str, Value] = {}   # the size inputs made so far
        self.sizes: dict[tuple, str] = {}     # (size, true) -> its scalar, made once
        self.masks: dict[tuple, str] = {}     # factors (or masks joined) -> its mask, made once

    # -- what a dim is made of ------------------------------------------------------------
    def dims(self, x: str) -> list[Factors]:
        if x not in self.factors:
            self.factors[x] = [(d,) for d in self.info.dims.get(x, [])]
        return self.factors[x]

    def is_padded(self, f: Factors) -> bool:
        return any(e.symbols & self.padded for e in f)

    def run(self) -> Func:
        ops = []
        for op in self.func.ops:
            op = replace(op, operands=[self.rename.get(o, o) for o in op.operands])
            self.b.ops, self.b.loc = [], op.loc
            kept = self.visit(op)
            ops.extend(self.b.ops)
            if kept is not None:
                ops.append(kept)
                self.track(op)   # by the operands it had: the masks are no values of its
        returns = [self.rename.get(r, r) for r in self.func.outputs()]
        for r in returns:
            self.check_output(r)
        args = list(self.func.args) + list(self.inputs.values())
        return Func(self.func.name, args, ops, returns, self.func.loc, self.func.return_loc)

    def track(self, op: Op) -> None:
        """The factors of ``op``'s results, from its operands' where the op keeps them."""
        if not op.operands or not op.results:
            return
        name, a = op.name, op.attrs
        src = self.dims(op.operands[0]) if op.operands[0] in self.info.dims else []
        for r in op.results:
            out = [(d,) for d in self.info.dims.get(r.name, [])]
            if name == "merge_dims" and src:
                d, n = int(a["dim"]), int(a["count"])
                out = src[:d] + [tuple(e for f in src[d:d + n] for e in f)] + src[d + n:]
            elif name == "split_dim" and src:
                d = int(a["dim"])
                n = len(out) - len(src) + 1
                if len(src[d]) == n:
                    out = src[:d] + [(e,) for e in src[d]] + src[d + 1:]
            elif name == "transpose" and src:
                out = [src[p] for p in a["perm"]]
            elif name in ("broadcast_in_dim", "broadcast_like") and src:
                for k, j in enumerate(a.get("dims", ())):
                    if k < len(src) and len(src[k]) > 1:
                        out[j] = src[k]
            elif name == "reduce" and src:
                gone = set(_reduced(op, len(src)))
                kept = [f for i, f in enumerate(src) if i not in gone]
                out = kept if len(kept) == len(out) else out
            else:   # elementwise and the like: a dim equal to an operand's is that one
                for o in op.operands:
                    of = self.dims(o) if o in self.info.dims else []
                    if len(of) != len(out):
                        continue
                    out = [g if len(g) > 1 and len(f) == 1 and _product(g) == f[0] else f
                           for f, g in zip(out, of)]
            self.factors[r.name] = out

    # -- the ops --------------------------------------------------------------------------
    def visit(self, op: Op) -> Op | None:
        name, a = op.name, op.attrs
        if op.regions:
            if any(self.is_padded(f) for o in op.operands if o in self.info.dims
                   for f in self.dims(o)):
                self.refuse(op, "runs a loop over values with padded dims")
            return op
        if name == "dim_size":
            return self.dim_size(op)
        if name == "reduce":
            x = op.operands[0]
            dims = _reduced(op, len(self.dims(x)))
            return self.masked(op, 0, dims, IDENTITY[a.get("kind", "sum")](self.dtype(x)))
        if name in ("argmax", "argmin"):
            x = op.operands[0]
            fill = lowest if name == "argmax" else highest
            return self.masked(op, 0, [int(a["dim"]) % len(self.dims(x))], fill(self.dtype(x)))
        if name == "cumulative":
            x = op.operands[0]
            if not a.get("reverse", False):
                return op       # a running reduction from the front never reads the end
            kind = a.get("kind", "sum")
            return self.masked(op, 0, [int(a["dim"]) % len(self.dims(x))],
                               IDENTITY[kind](self.dtype(x)))
        if name == "sort":
            x = op.operands[0]
            d = int(a.get("dim", -1)) % len(self.dims(x))
            if int(a.get("num_keys", 1)) != 1 and self.is_padded(self.dims(x)[d]):
                self.refuse(op, f"sorts by several keys along padded dim {d}")
                return op
            return self.masked(op, 0, [d], highest(self.dtype(x)))   # the padding sorts last
        if name == "top_k":
            x = op.operands[0]
            return self.masked(op, 0, [len(self.dims(x)) - 1], lowest(self.dtype(x)))
        if name == "dot_general":
            op = self.masked(op, 0, list(a.get("lhs_contract", ())), 0, pair=(
                1, list(a.get("rhs_contract", ()))))
            return op
        if name == "dot":
            ra = len(self.dims(op.operands[0]))
            return self.masked(op, 0, [ra - 1], 0, pair=(1, [0]))
        if name == "scatter_add":
            ids = op.operands[1]
            return self.masked(op, 2, list(range(len(self.dims(ids)))), 0)
        self.check_layout(op)
        return op

    def dtype(self, x: str) -> str:
        return self.b.type(x).dtype

    def masked(self, op: Op, k: int, dims: list[int], fill: float | int,
               pair: tuple[int, list[int]] | None = None) -> Op:
        """``op`` with operand ``k`` (and, for a contraction, the other side's matching
        dims) replaced by its entries at the padded dims of ``dims``, ``fill`` elsewhere."""
        x = op.operands[k]
        mine = [d for d in dims if self.is_padded(self.dims(x)[d])]
        theirs: list[int] = []
        if pair is not None:
            other = op.operands[pair[0]]
            both = [(d, e) for d, e in zip(dims, pair[1])
                    if self.is_padded(self.dims(x)[d]) or self.is_padded(self.dims(other)[e])]
            mine, theirs = [d for d, _ in both], [e for _, e in both]
        if not mine:
            return op
        operands = list(op.operands)
        operands[k] = self.fill(op, x, mine, fill)
        if pair is not None:
            operands[pair[0]] = self.fill(op, operands[pair[0]], theirs, fill)
        return replace(op, operands=operands)

    def fill(self, op: Op, x: str, dims: list[int], value: float | int) -> str:
        t = self.b.type(x)
        dims = sorted(dims)
        lines = []
        for d in dims:
            line = self.valid(op, x, d)
            if line is None:
                return x
            lines.append(line)
        if not lines:
            return x
        keep = self.b.broadcast(self.joined(lines), dims, TensorType(t.dims, "i1", t.binds))
        return self.b.select(keep, x, self.b.const(value, t))

    def joined(self, lines: list[str]) -> str:
        """The masks of several dims as one over just those dims (made once per step):
        the select that reads it broadcasts it to its operand's shape."""
        if len(lines) == 1:
            return lines[0]
        key = tuple(lines)
        if key not in self.masks:
            types = [self.b.type(m) for m in lines]
            small = TensorType(tuple(u.dims[0] for u in types), "i1",
                               None if any(u.binds is None for u in types)
                               else tuple(u.binds[0] for u in types))
            keep = None
            for k, m in enumerate(lines):
                ok = self.b.broadcast(m, [k], small)
                keep = ok if keep is None else self.b.select(keep, ok, keep)
            self.masks[key] = keep
        return self.masks[key]

    def valid(self, op: Op, x: str, d: int) -> str | None:
        """A rank-1 i1 value along dim ``d`` of x: true where it is not padding. Made
        once per step for each way a dim is made of factors (a few bytes held for the
        whole step), and broadcast to the shape of x inside the select that reads it:
        made at x's shape, the iota and compares were made again in every reader
        (``registry.remade``), behind each reader's barrier, where XLA could neither
        merge nor fuse them."""
        factors = self.dims(x)[d]
        if not self.is_padded(factors):
            return None
        if len(factors) == 1 and not _at_end(factors[0], self.padded):
            self.refuse(op, f"reduces over dim {d} of {x}, whose size "
                            f"{factors[0]} does not keep the padding at its end")
            return None
        for f in factors:
            if self.is_padded((f,)) and not _at_end(f, self.padded):
                self.refuse(op, f"reduces over dim {d} of {x}, whose factor {f} does "
                                f"not keep the padding at its end")
                return None
        if factors in self.masks:
            return self.masks[factors]
        t = self.b.type(x)
        it = TensorType((t.dims[d],), "i32", None if t.binds is None else (t.binds[d],))
        index = self.b.emit("iota", [], it, {"dim": 0})
        keep = None
        inner: list[SymbolicExpr] = []
        for k in range(len(factors) - 1, -1, -1):
            f = factors[k]
            if self.is_padded((f,)):
                coord = index
                if inner:
                    coord = self.b.div(coord, self.spread(self.size(inner, False), it))
                if k > 0:
                    coord = self.b.binary("rem", coord, self.spread(self.size([f], False), it))
                ok = self.b.compare(coord, self.spread(self.size([f], True), it), "LT")
                keep = ok if keep is None else self.b.select(keep, ok, keep)
            inner.append(f)
        self.masks[factors] = keep
        return keep

    def spread(self, scalar: str, t: TensorType) -> str:
        return self.b.broadcast(scalar, [], t)

    def size(self, factors: list[SymbolicExpr], true: bool) -> str:
        """The product of ``factors`` at the true or the run binding, an i32 scalar
        (made once per step: a scalar the whole listing may read)."""
        e = _product(tuple(factors))
        key = (e, true)
        if key not in self.sizes:
            scalar = TensorType((), "i32")
            total = None
            for mono, coeff in sorted(e.terms.items()):
                term = None
                for s, power in mono:
                    for _ in range(power):
                        v = self.symbol(s, true and s in self.padded)
                        term = v if term is None else self.b.mul(term, v)
                if term is None or coeff != 1:
                    c = self.b.const(int(coeff), scalar)
                    term = c if term is None else self.b.mul(term, c)
                total = term if total is None else self.b.add(total, term)
            self.sizes[key] = total if total is not None else self.b.const(0, scalar)
        return self.sizes[key]

    def symbol(self, s: str, true: bool) -> str:
        name = (TRUE_PREFIX if true else SIZE_PREFIX) + s
        if name not in self.inputs:
            self.inputs[name] = Value(name, TensorType((), "i32"))
            self.b.types[name] = self.inputs[name].type
            self.b.taken.add(name)
        return name

    def dim_size(self, op: Op) -> Op | None:
        x, d = op.operands[0], int(op.attrs["dim"])
        dims = self.info.dims.get(x)
        if dims is None or not (dims[d].symbols & self.padded):
            return op
        value = self.b.convert(self.size([dims[d]], True), op.results[0].type.dtype)
        self.rename[op.results[0].name] = value
        return None

    def check_layout(self, op: Op) -> None:
        """The ops that would move the padding away from the end of a dim."""
        name, a = op.name, op.attrs
        if not op.operands or op.operands[0] not in self.info.dims:
            return
        src = self.dims(op.operands[0])
        padded = [i for i, f in enumerate(src) if self.is_padded(f)]
        if name == "reverse":
            hit = sorted(set(padded) & {int(d) % len(src) for d in a.get("dims", ())})
            if hit:
                self.refuse(op, f"reverses padded dim {hit[0]}")
        elif name == "concatenate":
            d = int(a["dim"]) % len(src)
            if any(self.is_padded(self.dims(o)[d]) for o in op.operands[:-1]):
                self.refuse(op, f"joins along padded dim {d} with padding before the end")
        elif name == "split_dim":
            d = int(a["dim"])
            n = len(self.info.dims[op.results[0].name]) - len(src) + 1
            if d in padded and len(src[d]) != n:
                self.refuse(op, f"splits padded dim {d} other than along its factors")
        elif name in ("reshape", "dynamic_reshape") and padded:
            self.refuse(op, "reshapes a value with a padded dim (merge_dims and split_dim "
                            "keep track of the padding; a general reshape does not)")
        elif name == "reduce_window":
            window = list(a.get("window", ()))
            if any(i < len(window) and window[i] != 1 for i in padded):
                self.refuse(op, "pools windows along a padded dim")
        elif name == "conv":
            spec = list(a.get("lhs_spec", ()))
            if any(i in spec[1:] for i in padded) or any(
                    self.is_padded(f) for f in self.dims(op.operands[1])):
                self.refuse(op, "convolves along a padded dim")
        elif name in ("threefry", "rng_uniform", "scatter_slices", "select_and_scatter_add"):
            out = [f for r in op.results if r.name in self.info.dims for f in self.dims(r.name)]
            if padded or any(self.is_padded(f) for f in out):
                self.refuse(op, "computes values that depend on the whole padded shape")

    def check_output(self, r: str) -> None:
        if r not in self.info.dims:
            return
        for d, f in enumerate(self.dims(r)):
            if any(self.is_padded((e,)) for e in f[1:]) and _product(f[:1]) != const(1):
                self.refuse(None, f"returns {r}, whose dim {d} holds padding inside it "
                                  f"(factors {', '.join(map(str, f))}): the cut to the "
                                  f"caller's size would keep padded entries")

    def refuse(self, op: Op | None, why: str) -> None:
        if self.keep:
            return
        what = f"'{op.name}' {why}" if op is not None else why
        names = ", ".join(sorted(self.padded))
        raise BladecError(f"padding {names} changes the result: {what}; compute it on "
                          f"unpadded values, or pass pad_unsafe=True to keep the padded "
                          f"result", op.loc if op is not None else self.func.return_loc)


def free_symbol(info: ShapeInfo, s: str) -> str | None:
    """The free symbol that padding ``s`` pads: itself, or, where the analysis solved
    ``s`` as a shift of a free one (``x[1:]`` makes S0 = S1 + 1 and keeps S1 free), that
    one: padding it keeps ``s``'s padding at its end. None for anything else."""
    if s in info.free:
        return s
    e = info.subst.get(s)
    if e is not None and _at_end(e, set(info.free)) and len(e.symbols) == 1:
        return next(iter(e.symbols))
    return None


def _reduced(op: Op, rank: int) -> list[int]:
    dims = op.attrs.get("dims")
    if dims is None:
        return list(range(len(op.results[0].type.dims), rank))
    return [int(d) % rank for d in dims]


def _product(f: Factors) -> SymbolicExpr:
    out = const(1)
    for e in f:
        out = out * e
    return out


def _at_end(e: SymbolicExpr, padded: set[str]) -> bool:
    """Whether a dim of size ``e`` keeps the padding at its end: ``S + c`` for one padded
    symbol S (an input's dim, a slice of it, a join after unpadded parts)."""
    syms = e.symbols & padded
    if len(syms) != 1 or e.symbols - syms:
        return False
    (s,) = syms
    return all(mono == () or mono == ((s, 1),) and coeff == 1 for mono, coeff in e.terms.items())
