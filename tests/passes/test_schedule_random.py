"""The ``schedule`` pass over a few hundred seeded random DAG listings (elementwise, dot,
reduce, broadcast_in_dim, concatenate, transpose over the symbolic dims S0 and S1): every
schedule is a topological permutation of the same ops; scheduling is idempotent and does
not depend on the input order; the pass never raises the exact peak; the exact-shape
oracle is never below the DP optimum, and the optimum is never below the lower bound.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from bladec.analysis.memory import exact_lower_bound, exact_peak, exact_sizes
from bladec.analysis.optimal import optimal_order
from bladec.analysis.version import versions
from bladec.ir import Func, Module, Op
from bladec.parse import parse_module
from bladec.passes.schedule import SchedulePass, exact_order, reorder, symbolic_scheduler
from bladec.printer import format_module
from bladec.symbolic.shapes import analyze_shapes
from bladec.verify import verify

from tests.support.paths import ROOT
from tests.support.schedulecase import (compute_ops, names, random_binding,
                                        topological_problem, versioned_peak)

SAMPLES = ROOT / "samples"
LISTING1 = SAMPLES / "listing1.mlir"


# -- random graphs ----------------------------------------------------------------------

SYMS = ("S0", "S1")
RANGES = {"S0": (1, 64), "S1": (1, 512)}


def _type(shape: tuple) -> str:
    if not shape:
        return "tensor<f32>"
    dims = "x".join("?" if isinstance(d, str) else str(d) for d in shape)
    if all(isinstance(d, int) for d in shape):
        return f"tensor<{dims}>"
    binds = ", ".join("@" + d if isinstance(d, str) else f"@C{d}" for d in shape)
    return f"tensor<{dims}, [{binds}]>"


@dataclass
class RandomGraph:
    text: str
    seed: int
    n_ops: int


def random_listing(seed: int, n_ops: int | None = None) -> RandomGraph:
    """A valid listing: a random DAG of shape-consistent ops over S0, S1 and constants."""
    rng = random.Random(seed)
    n_ops = n_ops or rng.randint(3, 12)
    args = {"%a": ("S0", 16), "%b": ("S1", 16), "%w": (16, 16), "%u": (16, "S1"),
            "%v": (16,)}
    values: dict[str, tuple] = dict(args)
    uses: dict[str, int] = {k: 0 for k in values}
    lines: list[str] = []

    def new(shape: tuple, text: str) -> None:
        name = f"%{len(lines)}"
        lines.append(f"  {name} = {text} -> {_type(shape)}")
        values[name] = shape
        uses[name] = 0

    def use(*ns: str) -> str:
        for n in ns:
            uses[n] += 1
        return ", ".join(ns)

    def pick(pred=lambda s: True) -> str | None:
        # Prefer recent and unused values, so the graph is deep and mostly connected.
        cands = [n for n, s in values.items() if pred(s)]
        if not cands:
            return None
        weights = [(3 if uses[n] == 0 else 1) * (2 if n[1:].isdigit() else 1) for n in cands]
        return rng.choices(cands, weights)[0]

    while len(lines) < n_ops:
        kind = rng.choice(["unary", "binary", "binary", "dot", "dot", "reduce", "bcast",
                           "bcast", "concat", "transpose"])
        if kind == "unary":
            x = pick()
            new(values[x], f"{rng.choice(['exp', 'neg', 'tanh', 'logistic'])}({use(x)})")
        elif kind == "binary":
            x = pick()
            same = [n for n, s in values.items() if s == values[x] and n != x]
            y = rng.choice(same) if same and rng.random() < 0.8 else x
            new(values[x], f"{rng.choice(['add', 'mul', 'sub'])}({use(x, y)})")
        elif kind == "dot":
            x = pick(lambda s: len(s) == 2)
            if x is None:
                continue
            k = values[x][1]
            y = pick(lambda s: len(s) == 2 and s[0] == k)
            if y is None:
                continue
            new((values[x][0], values[y][1]), f"dot({use(x, y)})")
        elif kind == "reduce":
            x = pick(lambda s: len(s) >= 1)
            d = rng.randrange(len(values[x]))
            shape = tuple(v for j, v in enumerate(values[x]) if j != d)
            new(shape, f"reduce({use(x)}) {{dims = [{d}], kind = \"sum\"}}")
        elif kind == "bcast":
            x = pick(lambda s: len(s) <= 1)
            src = values[x]
            extra = rng.choice([*SYMS, 8, 32])
            if not src:
                shape = (rng.choice(SYMS), extra)
                new(shape, f"broadcast_in_dim({use(x)}) {{dims = []}}")
            elif rng.random() < 0.5:
                new((src[0], extra), f"broadcast_in_dim({use(x)}) {{dims = [0]}}")
            else:
                new((extra, src[0]), f"broadcast_in_dim({use(x)}) {{dims = [1]}}")
        elif kind == "concat":
            x = pick(lambda s: len(s) == 2 and isinstance(s[1], int))
            if x is None:
                continue
            rows = values[x][0]
            others = [n for n, s in values.items()
                      if len(s) == 2 and s[0] == rows and isinstance(s[1], int)]
            parts = [x] + rng.sample(others, min(len(others), rng.randint(1, 2)))
            width = sum(values[p][1] for p in parts)
            new((rows, width), f"concatenate({use(*parts)}) {{dim = 1}}")
        else:
            x = pick(lambda s: len(s) == 2)
            if x is None:
                continue
            new(values[x][::-1], f"transpose({use(x)}) {{perm = [1, 0]}}")
    defined = [n for n in values if n not in args]
    outs = [n for n in defined if uses[n] == 0]
    extra = [n for n in defined if n not in outs and rng.random() < 0.15]
    sig = ", ".join(f"{n}: {_type(s)}" for n, s in args.items())
    decls = "".join(f"  SymbolicDim @{s} {{min = {lo}, max = {hi}}}\n"
                    for s, (lo, hi) in RANGES.items())
    text = (f"func.func @main({sig}) {{\n" + "\n".join(lines) + "\n"
            f"  return {', '.join(outs + extra)}\n}}\n"
            f"func.func @symbolic_shape_graph() {{\n{decls}}}\n")
    return RandomGraph(text, seed, len(lines))


def shuffled_topological(func: Func, rng: random.Random) -> list[Op]:
    """Another valid order of the same ops: a random topological sort."""
    ops = compute_ops(func)
    producer = {r.name: i for i, op in enumerate(ops) for r in op.results}
    deps = [{producer[n] for n in op.operands if n in producer} for op in ops]
    done: set[int] = set()
    order: list[Op] = []
    while len(order) < len(ops):
        ready = [i for i in range(len(ops)) if i not in done and deps[i] <= done]
        i = rng.choice(ready)
        done.add(i)
        order.append(ops[i])
    return order


N_GRAPHS = 240   # the whole campaign: `make bench`
SMOKE = 60       # its first graphs (seeds 0-59): `make test` (120 before issue 36)


@dataclass
class Case:
    graph: RandomGraph
    module: Module
    scheduled: Module

    @property
    def func(self) -> Func:
        return self.module.main


@pytest.fixture(scope="module", params=[
    pytest.param(SMOKE, id="first"), pytest.param(N_GRAPHS, id="all", marks=pytest.mark.slow)])
def cases(request) -> list[Case]:
    """The campaign's first ``request.param`` seeded graphs, parsed and scheduled."""
    out = []
    for g in (random_listing(seed) for seed in range(request.param)):
        module = parse_module(g.text, f"<random {g.seed}>")
        verify(module)
        out.append(Case(g, module, SchedulePass().apply(module)))
    return out


def test_generator_makes_varied_valid_graphs(cases):
    assert len(cases) >= SMOKE
    kinds = {op.name for c in cases for op in c.func.ops}
    assert {"dot", "reduce", "broadcast_in_dim", "concatenate", "add", "transpose"} <= kinds
    sizes = [len(c.func.ops) for c in cases]
    assert min(sizes) >= 3 and max(sizes) == 12
    # Order matters in a good share of them: the pass moves something.
    moved = sum(names(c.func.ops) != names(c.scheduled.main.ops) for c in cases)
    assert moved >= len(cases) // 5, moved
    # Both symbols occur in the sizes.
    info = analyze_shapes(cases[0].module)
    assert set(info.free) == {"S0", "S1"}


def test_schedule_is_a_topological_permutation(cases):
    for c in cases:
        info = analyze_shapes(c.module)
        raw = symbolic_scheduler(c.func, info).run()
        assert topological_problem(c.func, raw) is None, c.graph.text
        for version in versions(c.scheduled):
            assert topological_problem(c.func, version.ops) is None, c.graph.text
        sizes = exact_sizes(info, random_binding(random.Random(c.graph.seed), RANGES))
        assert topological_problem(c.func, exact_order(c.func, sizes)) is None, c.graph.text
        # The printed schedule parses back to the same graph.
        again = parse_module(format_module(c.scheduled))
        verify(again)
        assert [names(f.ops) for f in versions(again)] == \
            [names(f.ops) for f in versions(c.scheduled)]
        assert again.main.returns == c.func.returns


def test_schedule_is_idempotent(cases):
    for c in cases:
        once = format_module(c.scheduled)
        twice = format_module(SchedulePass().apply(c.scheduled))
        assert twice == once, c.graph.text


def test_schedule_does_not_depend_on_the_input_order(cases):
    for c in cases:
        rng = random.Random(1000 + c.graph.seed)
        info = analyze_shapes(c.module)
        raw = names(symbolic_scheduler(c.func, info).run())
        for _ in range(2):
            shuffled = reorder(c.func, shuffled_topological(c.func, rng))
            module = Module([shuffled], c.module.shape_graph, c.module.file)
            assert names(symbolic_scheduler(shuffled, analyze_shapes(module)).run()) == raw, \
                c.graph.text
            # The pass gives main the scheduler's order, or keeps its input when that
            # order is not provably better than the input's: either way never a third.
            out = names(SchedulePass().apply(module).main.ops)
            assert out in (raw, names(shuffled.ops)), c.graph.text


def test_scheduled_peak_is_never_above_the_original(cases):
    for c in cases:
        info = analyze_shapes(c.module)
        rng = random.Random(2000 + c.graph.seed)
        for _ in range(5):
            sizes = exact_sizes(info, random_binding(rng, RANGES))
            assert exact_peak(c.scheduled.main, sizes) <= exact_peak(c.func, sizes), \
                c.graph.text
            assert versioned_peak(c.scheduled, sizes) <= exact_peak(c.scheduled.main, sizes)


def test_oracle_optimum_and_lower_bound_are_ordered(cases):
    checked = 0
    for c in cases:
        if len(c.func.ops) > 12:
            continue
        info = analyze_shapes(c.module)
        rng = random.Random(3000 + c.graph.seed)
        for _ in range(3):
            sizes = exact_sizes(info, random_binding(rng, RANGES))
            best = optimal_order(c.func, sizes)
            assert best is not None
            peak, order = best
            assert topological_problem(c.func, order) is None
            assert exact_peak(c.func, sizes, order) == peak, c.graph.text
            oracle = exact_peak(c.func, sizes, exact_order(c.func, sizes))
            assert oracle >= peak, c.graph.text
            assert exact_peak(c.func, sizes) >= peak
            assert versioned_peak(c.scheduled, sizes) >= peak
            assert peak >= exact_lower_bound(c.func, sizes), c.graph.text
            checked += 1
    assert checked >= 5 * len(cases) // 2   # most graphs are checked at 3 bindings
