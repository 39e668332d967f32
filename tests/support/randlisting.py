"""A seeded generator of random valid listings for differential tests.

``generate(seed)`` returns a :class:`Listing`: the listing text and, for each value,
its dims as polynomials over the free symbols ``S0`` and ``S1``, computed here
independently of bladec's analysis. Graphs are DAGs of 5 to 40 ops drawn from the op
registry (elementwise unary and binary ops, compare and select, convert, dot and
dot_general with batch and contracting dims, broadcast_in_dim, reshapes that merge and
split dims, transpose, concatenate, reduce, static slices), mostly f32 with some i32
and i1 values, and they end with a ``return`` of 1 to 3 values.

Symbols: ``S0`` and ``S1`` are declared in ``@symbolic_shape_graph`` with ranges and
appear as plain dims of the graph inputs, so every binding is read off the inputs.
Reshapes and concatenations introduce further names (``@S2``, ``@S3``, ...) that the
analysis must solve (``S2 = S0*S1``, ``S3 = 4*S1``, ``S4 = S0 + 3``); each is
introduced only where the equation the analysis sees names it linearly, so it is
solvable, and every later use of the same quantity reuses its name.

Operands are picked mostly from recent values and sometimes from any earlier one, so
values are used several times and far apart, which gives ``remat`` candidates.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.support.randdim import (MAX_ELEMENTS, RANGES, STATIC, Dim, dadd, dconst, dmin, dmul,
                                  dsym, evaluate, is_static, numel_max, static_value)


@dataclass
class Val:
    name: str
    dims: list[Dim]
    dtype: str
    index: int          # position of the defining op (-1: graph input)
    uses: int = 0
    users: list[int] = field(default_factory=list)  # positions of the ops that use it


@dataclass
class Listing:
    text: str
    seed: int
    values: dict[str, Val]
    inputs: list[str]
    outputs: list[str]
    num_ops: int
    op_names: list[str] = field(default_factory=list)

    def far_reuses(self, distance: int = 4) -> list[str]:
        """Computed values used at least twice, the last use ``distance`` ops after the def."""
        return [n for n, v in self.values.items() if v.index >= 0 and v.uses >= 2
                and v.users[-1] - v.index >= distance]

    def shapes(self, binding: dict[str, int]) -> dict[str, tuple[int, ...]]:
        """Every value's concrete shape under a binding of S0 and S1 (the generator's own)."""
        return {n: tuple(evaluate(d, binding) for d in v.dims) for n, v in self.values.items()}

    def bindings(self, rng: random.Random, count: int) -> list[dict[str, int]]:
        """``count`` distinct bindings within the declared ranges (a small and a big one)."""
        out: list[dict[str, int]] = []
        lo = {s: r[0] for s, r in RANGES.items()}
        hi = {s: r[1] for s, r in RANGES.items()}
        candidates = [{s: rng.randint(lo[s], hi[s]) for s in RANGES},
                      {s: rng.randint(max(lo[s], hi[s] - 3), hi[s]) for s in RANGES},
                      {s: rng.randint(lo[s], min(hi[s], lo[s] + 2)) for s in RANGES}]
        candidates += [{s: rng.randint(lo[s], hi[s]) for s in RANGES} for _ in range(10)]
        for b in candidates:
            if b not in out:
                out.append(b)
            if len(out) == count:
                break
        return out


class _Gen:
    def __init__(self, seed: int, num_ops: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.num_ops = num_ops if num_ops is not None else self.rng.randint(5, 38)
        self.values: dict[str, Val] = {}
        self.order: list[str] = []          # non-input values in definition order
        self.inputs: list[str] = []
        self.lines: list[str] = []
        self.op_names: list[str] = []
        self.names: dict[Dim, str] = {dsym("S0"): "S0", dsym("S1"): "S1"}
        self.next_sym = 2
        self.counter = 0

    # -- types ----------------------------------------------------------------------
    def bind_of(self, d: Dim) -> str:
        return f"C{static_value(d)}" if is_static(d) else self.names[d]

    def type_of(self, dims: list[Dim], dtype: str) -> str:
        suffix = "" if dtype == "f32" else dtype
        if not dims:
            return f"tensor<{dtype}>"
        shape = "x".join(str(static_value(d)) if is_static(d) else "?" for d in dims)
        if suffix:
            shape += "x" + suffix
        if all(is_static(d) for d in dims):
            return f"tensor<{shape}>"
        return f"tensor<{shape}, [{', '.join('@' + self.bind_of(d) for d in dims)}]>"

    def named(self, d: Dim) -> bool:
        return is_static(d) or d in self.names

    def name_new(self, d: Dim) -> None:
        if not self.named(d):
            self.names[d] = f"S{self.next_sym}"
            self.next_sym += 1

    # -- values ---------------------------------------------------------------------
    def add_input(self, dims: list[Dim], dtype: str = "f32") -> str:
        name = f"%in{len(self.inputs)}"
        self.values[name] = Val(name, dims, dtype, -1)
        self.inputs.append(name)
        return name

    def emit(self, opname: str, operands: list[str], dims: list[Dim], dtype: str,
             attrs: str = "") -> str:
        name = f"%v{self.counter}"
        self.counter += 1
        for o in operands:
            self.values[o].uses += 1
            self.values[o].users.append(len(self.order))
        args = ", ".join(operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f"  {name} = {opname}({args}){attr_text} -> {self.type_of(dims, dtype)}")
        self.values[name] = Val(name, dims, dtype, len(self.order))
        self.order.append(name)
        self.op_names.append(opname)
        return name

    def pool(self, pred=lambda v: True, inputs: bool = True) -> list[Val]:
        vals = [self.values[n] for n in self.order if pred(self.values[n])]
        if inputs:
            vals = [self.values[n] for n in self.inputs if pred(self.values[n])] + vals
        return vals

    def pick(self, pred=lambda v: True) -> Val | None:
        """Mostly a recent value, sometimes any earlier one (far-apart reuse)."""
        vals = self.pool(pred)
        if not vals:
            return None
        computed = [v for v in vals if v.index >= 0]
        unused = [v for v in computed if v.uses == 0]
        r = self.rng.random()
        if unused and r < 0.6:
            return self.rng.choice(unused[-3:])
        if computed and r < 0.75:
            return self.rng.choice(computed[-4:])
        if computed and r < 0.9:
            return self.rng.choice(computed)
        return self.rng.choice(vals)

    def fits(self, dims: list[Dim]) -> bool:
        return len(dims) <= 4 and numel_max(dims) <= MAX_ELEMENTS

    # -- op builders; each returns True when it emitted something -------------------
    def op_unary(self) -> bool:
        v = self.pick(lambda v: v.dtype in ("f32", "i32"))
        if v is None:
            return False
        if v.dtype == "f32":
            name = self.rng.choice(["tanh", "sin", "cos", "logistic", "neg", "abs", "tanh",
                                    "exp", "square", "sqrt", "rsqrt", "log", "copy"])
            if name in ("sqrt", "rsqrt", "log"):  # keep the numbers meaningful
                v = self.values[self.emit("abs", [v.name], v.dims, "f32")]
        else:
            name = self.rng.choice(["neg", "abs", "copy", "square"])
        self.emit(name, [v.name], v.dims, v.dtype)
        return True

    def _partner(self, a: Val, dtype: str | None = None) -> Val:
        dtype = dtype or a.dtype
        b = self.pick(lambda v: v.dims == a.dims and v.dtype == dtype and v.name != a.name)
        return b or a

    def op_binary(self) -> bool:
        a = self.pick(lambda v: v.dtype in ("f32", "i32"))
        if a is None:
            return False
        b = self._partner(a)
        if a.dtype == "f32":
            name = self.rng.choice(["add", "sub", "mul", "max", "min", "add", "mul", "div"])
        else:
            name = self.rng.choice(["add", "sub", "mul", "max", "min"])
        if self.rng.random() < 0.5:
            a, b = b, a
        self.emit(name, [a.name, b.name], a.dims, a.dtype)
        return True

    def op_select(self) -> bool:
        a = self.pick(lambda v: v.dtype in ("f32", "i32"))
        if a is None:
            return False
        b = self._partner(a)
        direction = self.rng.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
        pred = self.emit("compare", [a.name, b.name], a.dims, "i1",
                         f'direction = "{direction}"')
        c = self.pick(lambda v: v.dims == a.dims and v.dtype == "f32")
        if c is None:
            c = self.values[self.emit("convert", [a.name], a.dims, "f32", 'dtype = "f32"')]
        d = self._partner(c)
        self.emit("select", [pred, c.name, d.name], a.dims, "f32")
        return True

    def op_convert(self) -> bool:
        v = self.pick(lambda v: v.dtype in ("f32", "i32", "i1"))
        if v is None:
            return False
        if v.dtype == "f32":
            if self.rng.random() < 0.5:
                half = self.emit("convert", [v.name], v.dims, "f16", 'dtype = "f16"')
                self.emit("convert", [half], v.dims, "f32", 'dtype = "f32"')
                return True
            target = "i32"
        else:
            target = "f32"
        self.emit("convert", [v.name], v.dims, target, f'dtype = "{target}"')
        return True

    def op_broadcast(self) -> bool:
        v = self.pick(lambda v: len(v.dims) < 4 and v.dtype in ("f32", "i32"))
        if v is None:
            return False
        choices = [dconst(c) for c in STATIC] + [d for d in self.names]
        new = self.rng.choice(choices)
        pos = self.rng.randint(0, len(v.dims))
        dims = list(v.dims)
        dims.insert(pos, new)
        if not self.fits(dims):
            return False
        mapping = [i if i < pos else i + 1 for i in range(len(v.dims))]
        self.emit("broadcast_in_dim", [v.name], dims, v.dtype,
                  f"dims = [{', '.join(map(str, mapping))}]")
        return True

    def _reshape_ok(self, new_dims: list[Dim]) -> bool:
        """Name the result's dims; a new name only where the analysis can solve it."""
        unnamed = [d for d in dict.fromkeys(new_dims) if not self.named(d)]
        if not unnamed:
            return True
        if len(unnamed) > 1 or sum(d == unnamed[0] for d in new_dims) > 1:
            return False
        others = [d for d in new_dims if d != unnamed[0]]
        if not all(is_static(d) for d in others):
            return False  # c*S_new = numel needs the rest of the shape to be a number
        self.name_new(unnamed[0])
        return True

    def op_reshape(self) -> bool:
        v = self.pick(lambda v: v.dtype in ("f32", "i32") and len(v.dims) >= 1)
        if v is None:
            return False
        dims = list(v.dims)
        options = []
        for i in range(len(dims) - 1):
            options.append(("merge", i))
        for i, d in enumerate(dims):
            options.append(("split", i))
        self.rng.shuffle(options)
        for kind, i in options:
            if kind == "merge":
                new = dims[:i] + [dmul(dims[i], dims[i + 1])] + dims[i + 2:]
            else:
                pieces = self._splits(dims[i])
                if not pieces:
                    continue
                p, q = self.rng.choice(pieces)
                new = dims[:i] + [p, q] + dims[i + 1:]
                if len(new) > 4:
                    continue
            if self._reshape_ok(new):
                self.emit("reshape", [v.name], new, v.dtype)
                return True
        return False

    def _splits(self, d: Dim) -> list[tuple[Dim, Dim]]:
        out = []
        if is_static(d):
            c = static_value(d)
            for f in range(2, c):
                if c % f == 0:
                    out.append((dconst(f), dconst(c // f)))
            return out
        if len(d) == 1:
            (m, c), = d
            for f in range(2, c + 1):
                if c % f == 0:
                    rest = (((m), c // f),)
                    out += [(dconst(f), rest), (rest, dconst(f))]
            if len(m) >= 2:  # S0*S1 -> [S0, S1] (pieces already named)
                head, tail = (((m[:1]), 1),), (((m[1:]), c),)
                if self.named(head) and self.named(tail):
                    out += [(head, tail), (tail, head)]
        return out

    def op_transpose(self) -> bool:
        v = self.pick(lambda v: len(v.dims) >= 2 and v.dtype in ("f32", "i32"))
        if v is None:
            return False
        perm = list(range(len(v.dims)))
        while perm == sorted(perm):
            self.rng.shuffle(perm)
        self.emit("transpose", [v.name], [v.dims[p] for p in perm], v.dtype,
                  f"perm = [{', '.join(map(str, perm))}]")
        return True

    def op_concat(self) -> bool:
        a = self.pick(lambda v: len(v.dims) >= 1 and v.dtype in ("f32", "i32"))
        if a is None:
            return False
        axis = self.rng.randrange(len(a.dims))

        def ok(v: Val) -> bool:
            return (v.dtype == a.dtype and len(v.dims) == len(a.dims)
                    and all(x == y for j, (x, y) in enumerate(zip(v.dims, a.dims)) if j != axis))
        b = self.pick(ok) or a
        total = dadd(a.dims[axis], b.dims[axis])
        dims = list(a.dims)
        dims[axis] = total
        if not self.fits(dims):
            return False
        self.name_new(total)  # concatenate's rule solves S_new = a + b
        self.emit("concatenate", [a.name, b.name], dims, a.dtype, f"dim = {axis}")
        return True

    def op_reduce(self) -> bool:
        v = self.pick(lambda v: len(v.dims) >= 1 and v.dtype in ("f32", "i32"))
        if v is None:
            return False
        k = self.rng.randint(1, len(v.dims))
        dims = sorted(self.rng.sample(range(len(v.dims)), k))
        kind = self.rng.choice(["sum", "max"]) if v.dtype == "f32" else "max"
        out = [d for j, d in enumerate(v.dims) if j not in dims]
        self.emit("reduce", [v.name], out, v.dtype,
                  f"dims = [{', '.join(map(str, dims))}], kind = \"{kind}\"")
        return True

    def op_slice(self) -> bool:
        v = self.pick(lambda v: len(v.dims) >= 1 and any(is_static(d) and static_value(d) > 1
                                                         for d in v.dims)
                      and v.dtype in ("f32", "i32"))
        if v is None:
            return False
        start, limit, strides, out = [], [], [], []
        for d in v.dims:
            if is_static(d) and static_value(d) > 1:
                n = static_value(d)
                lo = self.rng.randint(0, n - 1)
                hi = self.rng.randint(lo + 1, n)
                step = self.rng.choice([1, 1, 2])
            else:  # a symbolic dim keeps a window no binding can exceed
                lo, hi, step = 0, dmin(d), 1
            start.append(lo)
            limit.append(hi)
            strides.append(step)
            out.append(dconst(-(-(hi - lo) // step)))
        attrs = (f"start = [{', '.join(map(str, start))}], limit = [{', '.join(map(str, limit))}]"
                 f", strides = [{', '.join(map(str, strides))}]")
        self.emit("slice", [v.name], out, v.dtype, attrs)
        return True

    def op_dot(self) -> bool:
        a = self.pick(lambda v: v.dtype == "f32" and len(v.dims) == 2)
        if a is None:
            return False
        b = self.pick(lambda v: v.dtype == "f32" and len(v.dims) in (1, 2)
                      and v.dims[0] == a.dims[1])
        if b is None:
            return False
        dims = [a.dims[0]] + b.dims[1:]
        if not self.fits(dims):
            return False
        self.emit("dot", [a.name, b.name], dims, "f32")
        return True

    def op_dot_general(self) -> bool:
        a = self.pick(lambda v: v.dtype == "f32" and 2 <= len(v.dims) <= 3)
        if a is None:
            return False
        lc = self.rng.randrange(len(a.dims))
        b = self.pick(lambda v: v.dtype == "f32" and 2 <= len(v.dims) <= 3
                      and a.dims[lc] in v.dims)
        if b is None:
            return False
        rc = self.rng.choice([j for j, d in enumerate(b.dims) if d == a.dims[lc]])
        lb: list[int] = []
        rb: list[int] = []
        pairs = [(i, j) for i in range(len(a.dims)) for j in range(len(b.dims))
                 if i != lc and j != rc and a.dims[i] == b.dims[j]]
        if pairs and self.rng.random() < 0.7:
            i, j = self.rng.choice(pairs)
            lb, rb = [i], [j]
        dims = ([a.dims[i] for i in lb] + [d for i, d in enumerate(a.dims) if i not in lb + [lc]]
                + [d for j, d in enumerate(b.dims) if j not in rb + [rc]])
        if not self.fits(dims):
            return False

        def ints(xs: list[int]) -> str:
            return "[" + ", ".join(map(str, xs)) + "]"
        attrs = (f"lhs_batch = {ints(lb)}, rhs_batch = {ints(rb)}, "
                 f"lhs_contract = {ints([lc])}, rhs_contract = {ints([rc])}")
        self.emit("dot_general", [a.name, b.name], dims, "f32", attrs)
        return True

    # -- the whole listing ----------------------------------------------------------
    def inputs_setup(self) -> None:
        S0, S1 = dsym("S0"), dsym("S1")
        k = dconst(self.rng.choice([4, 8]))
        self.add_input([S0, S1])
        self.add_input([S1, k])
        extra = self.rng.sample([[S0], [k, S1], [S1, S0], [S0, k], [S0, S1, dconst(3)]],
                                self.rng.randint(0, 2))
        for dims in extra:
            self.add_input(dims)
        if self.rng.random() < 0.3:
            self.add_input([S0, S1], "i32")
        self.rng.shuffle(self.inputs)

    def build(self) -> Listing:
        self.inputs_setup()
        builders = [(self.op_unary, 4), (self.op_binary, 5), (self.op_select, 1),
                    (self.op_convert, 1), (self.op_broadcast, 3), (self.op_reshape, 2),
                    (self.op_transpose, 1), (self.op_concat, 1), (self.op_reduce, 2),
                    (self.op_slice, 1), (self.op_dot, 2), (self.op_dot_general, 2)]
        funcs, weights = zip(*builders)
        attempts = 0
        while len(self.order) < self.num_ops and attempts < 50 * self.num_ops:
            attempts += 1
            self.rng.choices(funcs, weights)[0]()
        # 1 to 3 outputs: the last value, and sinks or any value (held to the end)
        last = self.order[-1]
        sinks = [n for n in self.order if self.values[n].uses == 0 and n != last]
        count = self.rng.randint(1, 3)
        outputs = [last]
        self.rng.shuffle(sinks)
        for n in sinks + self.rng.sample(self.order, len(self.order)):
            if len(outputs) >= count:
                break
            if n not in outputs:
                outputs.append(n)
        decls = "\n".join(f"  SymbolicDim @{s} {{min = {lo}, max = {hi}}}"
                          for s, (lo, hi) in RANGES.items())
        args = ", ".join(f"{n}: {self.type_of(self.values[n].dims, self.values[n].dtype)}"
                         for n in self.inputs)
        text = (f"// randlisting seed {self.seed}\n"
                f"func.func @main({args}) {{\n" + "\n".join(self.lines)
                + f"\n  return {', '.join(outputs)}\n}}\n"
                f"func.func @symbolic_shape_graph() {{\n{decls}\n}}\n")
        return Listing(text, self.seed, dict(self.values), list(self.inputs), outputs,
                       len(self.order), self.op_names)


def generate(seed: int, num_ops: int | None = None) -> Listing:
    """A random valid listing; the same seed gives the same listing."""
    return _Gen(seed, num_ops).build()


if __name__ == "__main__":  # print one: python -m tests.support.randlisting SEED
    import sys
    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0).text)
