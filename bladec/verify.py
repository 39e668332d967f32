"""The verifier: a listing is well formed before any pass looks at it.

It checks definition before use, single definition, arity, attributes, and every shape
fact that the listing's own numbers decide (two known dims that a rule says are equal
must be equal). Facts that need symbols solved are the analysis's job
(bladec/symbolic/shapes.py), which runs the same op rules.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from bladec.analysis.liveness import is_compute
from bladec.errors import BladecError, Diagnostic
from bladec.ir import Func, Mesh, Module, Op, TensorType
from bladec.ops import OpDef, ShapeCtx, apply_rule, lookup
from bladec.ops.collective import SHARD_RULES, check_sharding
from bladec.ops.loop import ARG, COND, REGIONS, YIELD, body_yield, check_loop_sharding, parts
from bladec.ops.annotation import REGENERATE
from bladec.ops.annotation import VERSIONS
from bladec.sharding import check_type, spec, ways
from bladec.types import format_sharding
from bladec.symbolic.expr import SymbolicExpr, const, sym


def type_dims(t: TensorType, unknown: Callable[[int], SymbolicExpr]) -> list[SymbolicExpr]:
    """A type's dims as expressions: numbers, bound symbols, else ``unknown(j)``."""
    return [e if e is not None else unknown(j) for j, e in enumerate(_known_dims(t))]


@lru_cache(maxsize=8192)
def _known_dims(t: TensorType) -> tuple[SymbolicExpr | None, ...]:
    """The dims a type's own text decides (None where only ``unknown`` can say), kept
    per type: an optimized listing repeats a few hundred types over ten thousand ops
    (every recompute region restates its values' types), and expressions are
    immutable, so one set is shared by every use."""
    dims: list[SymbolicExpr | None] = []
    for j, d in enumerate(t.dims):
        bind = t.binds[j] if t.binds is not None else None
        if bind is not None and bind.startswith("C"):
            dims.append(const(int(bind[1:])))
        elif d is not None:
            dims.append(const(d))
        elif bind is not None:
            dims.append(sym(bind))
        else:
            dims.append(None)
    return tuple(dims)


class _StaticSink:
    """Reports an equality only when the listing's numbers already contradict it."""

    def equal(self, a: SymbolicExpr, b: SymbolicExpr, op: Op, what: str) -> None:
        diff = a - b
        if diff.is_const and diff.const != 0:
            raise BladecError(f"'{op.name}': {what} must be equal, got {a} and {b}", op.loc)

    def at_least(self, a: SymbolicExpr, bound: int, op: Op, what: str) -> None:
        if a.is_const and a.const < bound:
            raise BladecError(f"'{op.name}': {what}, but the dim is {a.const}", op.loc)


def verify(module: Module, runnable: bool = False, shardings: bool = True) -> list[Diagnostic]:
    """Raise :class:`BladecError` at the first problem; return the warnings.

    ``runnable``: also what only running needs (the ops' ``run_rule``): `bladec run`
    asks for it; `optimize` and `analyze` take the paper's Listing 1, whose first
    broadcast can not run, as the paper prints it.

    ``shardings`` False: the ops' sharding rules are left out (the types are still
    checked against the mesh), for a listing whose results the ``propagate`` pass is
    about to give their shardings; its output is verified in full.
    """
    warnings: list[Diagnostic] = []
    _verify_main(module)
    _verify_shape_graph(module)
    for func in module.funcs:
        _verify_func(func, warnings, runnable, module.mesh, shardings)
        if module.mesh is not None and shardings:
            _verify_redistribution_bound(func, module.mesh)
    _verify_versions(module)
    return warnings


def _verify_main(module: Module) -> None:
    """Which function is the program: ``@main``, or the only function there is. With
    several and none named ``@main``, taking the first would run or optimize whichever
    happens to come first (issue 30), so that is an error at the first function."""
    funcs = module.funcs
    if len(funcs) > 1 and not any(f.name == "main" for f in funcs):
        names = ", ".join(f"@{f.name}" for f in funcs[:4]) + (", ..." if len(funcs) > 4
                                                               else "")
        raise BladecError(f"no @main: this listing has {len(funcs)} functions ({names}); "
                          f"name the one to run @main (a listing of one function may "
                          f"name it as it likes)", funcs[0].loc)


def _verify_versions(module: Module) -> None:
    """``schedule.versions`` names functions that hold the same ops in another order."""
    by_name = {f.name: f for f in module.funcs}
    for func in module.funcs:
        for op in func.ops:
            if op.name != VERSIONS.name:
                continue
            if func.ops.index(op) != 0:
                raise BladecError("'schedule.versions' must be the first op of its function",
                                  op.loc)
            mine = _signature(func)
            for ref in op.attrs["funcs"]:
                other = by_name.get(ref.name)
                if other is None or other is func:
                    what = "itself" if other is func else "no function"
                    raise BladecError(f"'schedule.versions': @{ref.name} names {what}", op.loc)
                if _signature(other) != mine:
                    raise BladecError(f"'schedule.versions': @{ref.name} does not hold the same "
                                      f"arguments, ops and results as @{func.name}", other.loc)


def _signature(func: Func) -> tuple:
    """What versions share: arguments, returns, and the compute ops in any order."""
    ops = sorted((op.name, tuple(op.operands), repr(op.results), repr(sorted(op.attrs.items())))
                 for op in func.ops if is_compute(op))
    return tuple(func.args), tuple(func.returns or ()), tuple(ops)


def _verify_shape_graph(module: Module) -> None:
    graph = module.shape_graph
    names: set[str] = set()
    if graph is None:
        return
    for decl in graph.decls:
        if not decl.name.startswith("S") or decl.name.startswith("C"):
            raise BladecError(f"symbol names start with 'S', got @{decl.name}", decl.loc)
        if decl.name in names:
            raise BladecError(f"SymbolicDim @{decl.name} declared twice", decl.loc)
        names.add(decl.name)
    for rel in graph.relations:
        for name in [rel.lhs, *rel.args]:
            if name.startswith("C") and name[1:].isdigit():
                continue
            if name not in names:
                raise BladecError(f"relation uses undeclared symbol @{name}", rel.loc)
        if rel.lhs.startswith("C"):
            raise BladecError(f"the left side of a relation must be a symbol, got @{rel.lhs}",
                              rel.loc)
        if not rel.args:
            raise BladecError("relation without operands", rel.loc)


def _verify_func(func: Func, warnings: list[Diagnostic], runnable: bool,
                 mesh: Mesh | None = None, shardings: bool = True) -> None:
    scope: dict[str, TensorType] = {}
    for arg in func.args:
        if arg.name in scope:
            raise BladecError(f"argument {arg.name} defined twice", func.loc)
        check_type(mesh, arg.type, f"argument {arg.name}", func.loc)
        scope[arg.name] = arg.type
    defined_here: set[str] = set(scope)
    _verify_block(func.ops, scope, defined_here, warnings, runnable, _results(func.ops), mesh,
                  shardings)
    for name in func.returns or []:
        if name not in scope:
            raise BladecError(f"return of undefined value {name}", func.return_loc)
    outputs = set(func.outputs())
    for arg in func.args:
        if arg.donated and arg.name in outputs:
            raise BladecError(f"argument {arg.name} is donated (the caller gives it up) but "
                              f"is also an output", func.return_loc if func.returns else func.loc)


def _results(ops: list[Op]) -> frozenset[str]:
    """Every name the ops (and their regions) define."""
    names = {r for op in ops for r in op.result_names}
    for op in ops:
        for body in op.regions.values():
            names |= _results(body)
    return frozenset(names)


def _verify_block(ops: list[Op], scope: dict[str, TensorType], defined_here: set[str],
                  warnings: list[Diagnostic], runnable: bool,
                  later: frozenset[str] = frozenset(), mesh: Mesh | None = None,
                  shardings: bool = True, loop_body: bool = False) -> None:
    """``later``: the names the function defines anywhere; an undefined shape operand
    must not be one of them (used before its definition, or the op's own result: a
    cycle that the passes would have to untie). ``loop_body``: ``ops`` are a loop's
    region, the one place ``loop.arg`` and ``loop.yield`` may stand."""
    for op in ops:
        opdef = lookup(op)
        opdef.check_signature(op)
        if op.name in (ARG, YIELD) and not loop_body:
            raise BladecError(f"'{op.name}' stands only in the region of a loop ('scan', "
                              "'while')", op.loc)
        operand_types: list[TensorType | None] = []
        for i, name in enumerate(op.operands):
            if name in scope:
                operand_types.append(scope[name])
            elif op.name == "dynamic_reshape" and i == 1 and name in later:
                raise BladecError(f"{name} is used before its definition", op.operand_loc(i))
            elif op.name == "dynamic_reshape" and i == 1:
                warnings.append(Diagnostic(op.operand_loc(i), f"{name} is not defined; "
                                           "the result type is taken as the target shape",
                                           "warning"))
                operand_types.append(None)
            else:
                raise BladecError(f"use of undefined value {name}", op.operand_loc(i))
        values: dict[str, TensorType] = {}
        if opdef is REGENERATE:
            _verify_regenerate(op, scope, warnings, runnable, mesh)
        elif op.name in REGIONS:
            values = _verify_loop(op, operand_types, defined_here, warnings, runnable, mesh,
                                  shardings)
        elif op.regions:
            raise BladecError(f"'{op.name}' takes no regions, got '{next(iter(op.regions))}'",
                              op.loc)
        typed = [t for t in operand_types if t is not None]
        _check_shapes(op, opdef, typed, runnable, values)
        for r in op.results:
            check_type(mesh, r.type, f"result {r.name}", op.loc)
        if shardings and op.name not in REGIONS and op.name != ARG:
            check_sharding(mesh, op, typed)  # a loop's: check_loop_sharding
        for r in op.results:
            if r.name in defined_here:
                raise BladecError(f"redefinition of {r.name}", op.loc)
            defined_here.add(r.name)
            scope[r.name] = r.type


def _verify_regenerate(op: Op, scope: dict[str, TensorType], warnings: list[Diagnostic],
                       runnable: bool, mesh: Mesh | None) -> None:
    target = op.operands[0]
    extra = set(op.regions) - {"recompute"}
    if extra:
        raise BladecError(f"'remat.regenerate' has no region '{sorted(extra)[0]}'", op.loc)
    body = op.regions.get("recompute")
    if body is None:
        if not op.attrs.get("reload", False):
            raise BladecError("'remat.regenerate' needs 'reload = true' or a 'recompute' region",
                              op.loc)
        return
    inner = dict(scope)
    _verify_block(body, inner, set(), warnings, runnable, mesh=mesh)
    if not body or target not in body[-1].result_names:
        raise BladecError(f"the recompute region must end by defining {target}", op.loc)
    if inner[target] != scope[target]:
        raise BladecError(f"the recompute region gives {target} another type", op.loc)


def _verify_loop(op: Op, operand_types: list[TensorType | None], defined_here: set[str],
                 warnings: list[Diagnostic], runnable: bool, mesh: Mesh | None,
                 shardings: bool = True) -> dict[str, TensorType]:
    """The regions of a loop (``scan``: ``body``; ``while``: ``cond`` and ``body``; see
    bladec/ops/loop.py): each isolated from the values around it, its arguments typed as
    the operands they stand for, ending with a ``loop.yield`` of the element types the
    loop needs (the carries', then a scan's stacked results'; a while's condition is
    i1). Dims are the shape rule's to relate; this returns the types of the values the
    regions define, which the rule reads."""
    wanted = REGIONS[op.name]
    extra = set(op.regions) - set(wanted)
    if extra:
        raise BladecError(f"'{op.name}' has no region '{sorted(extra)[0]}' (it takes "
                          f"{', '.join(repr(r) for r in wanted)})", op.loc)
    types = [t for t in operand_types if t is not None]
    for key in ("num_consts", "num_carry"):
        count = op.attrs.get(key, 0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise BladecError(f"'{op.name}': '{key}' must be a non-negative integer, got "
                              f"{count!r}", op.loc)
    nc, nk, _ = parts(op)
    if nc + nk > len(types):
        raise BladecError(f"'{op.name}': num_consts + num_carry ({nc} + {nk}) is more than "
                          f"its {len(types)} operand(s)", op.loc)
    inner_scope: dict[str, TensorType] = {}
    for region in wanted:
        body = op.regions.get(region)
        if not body:
            raise BladecError(f"'{op.name}' needs a '{region}' region", op.loc)
        out = body_yield(op, region)
        for inner in body[:-1]:
            if inner.name == YIELD:
                raise BladecError("'loop.yield' must be the last op of its region", inner.loc)
        _verify_args(op, body, types)
        inside = _results(body)
        for inner in body:
            for j, name in enumerate(inner.operands):
                if name not in inside:
                    raise BladecError(f"the {region} of '{op.name}' reads {name}, which it "
                                      "does not define: a loop's region is isolated; pass "
                                      "the value as a constant operand and read it with "
                                      "'loop.arg'", inner.operand_loc(j))
        _verify_block(body, inner_scope, defined_here, warnings, runnable, inside, mesh,
                      loop_body=True)
        if region == COND:
            want = ["i1"]
        else:
            want = [types[nc + k].dtype for k in range(nk)] + \
                [r.type.dtype for r in op.results[nk:]]
        for k, name in enumerate(out.operands[:len(want)]):
            have = inner_scope[name].dtype
            if have != want[k]:
                what = ("the condition" if region == COND else
                        f"the carry {op.operands[nc + k]}" if k < nk else
                        f"the stacked result {op.results[k].name}")
                raise BladecError(f"'loop.yield': {name} has element type {have}; {what} "
                                  f"has {want[k]}", out.loc)
    if mesh is not None and shardings:
        try:
            check_loop_sharding(op, types, inner_scope)
        except BladecError as exc:
            if all(r.type.sharding is not None for r in op.results):
                raise
            raise BladecError(f"{exc.diagnostic.message} (a listing with only its arguments "
                              "sharded: start the pipeline with 'propagate', which gives every "
                              "value its sharding)", exc.diagnostic.loc) from None
    return inner_scope


def _verify_args(op: Op, body: list[Op], types: list[TensorType]) -> None:
    seen: dict[int, str] = {}
    for arg in body:
        if arg.name != ARG:
            continue
        lookup(arg).check_signature(arg)   # its attributes, before they are read here
        i = arg.attrs["index"]
        if not isinstance(i, int) or not 0 <= i < len(types):
            raise BladecError(f"'loop.arg' index {i} out of range for the {op.name}'s "
                              f"{len(types)} operand(s)", arg.loc)
        if i in seen:
            raise BladecError(f"'loop.arg' index {i} given twice ({seen[i]} and "
                              f"{arg.results[0].name})", arg.loc)
        seen[i] = arg.results[0].name
        if arg.results[0].type.dtype != types[i].dtype:
            raise BladecError(f"'loop.arg' {arg.results[0].name} has element type "
                              f"{arg.results[0].type.dtype}; operand {op.operands[i]} has "
                              f"{types[i].dtype}", arg.loc)


def _verify_redistribution_bound(func: Func, mesh: Mesh) -> None:
    """Every value inside a chain of collectives is at most as large, per device, as the
    larger of the chain's ends (the memory guarantee of a normal-form redistribution).

    A chain starts at a value that is not the single use of a collective's result, and
    follows single-use collectives.
    Collectives keep the global shape, so local sizes compare as ``N / ways``: the bound
    is ``ways(mid) >= min(ways(start), ways(end))``, which holds for every value of the
    symbols whatever the dims are.
    """
    producers = func.producers()
    users: dict[str, list[Op]] = {}
    for op in func.ops:
        for name in op.operands:
            users.setdefault(name, []).append(op)
    outputs = set(func.outputs())
    types = func.value_types()
    for op in func.ops:
        if op.name not in SHARD_RULES or op.name == "reshard":
            continue
        first = producers.get(op.operands[0])
        if (first is not None and first.name in SHARD_RULES and first.name != "reshard"
                and len(users[op.operands[0]]) == 1 and op.operands[0] not in outputs):
            continue  # inside the chain that starts above
        chain = [op]
        while True:
            name = chain[-1].results[0].name
            after = users.get(name, [])
            if (len(after) != 1 or name in outputs or after[0].name not in SHARD_RULES
                    or after[0].name == "reshard"):
                break
            chain.append(after[0])
        start = ways(mesh, spec(types[op.operands[0]]))
        end = ways(mesh, spec(chain[-1].results[0].type))
        for mid in chain[:-1]:
            t = mid.results[0].type
            if ways(mesh, spec(t)) < min(start, end):
                raise BladecError(
                    f"'{mid.name}': {mid.results[0].name} (split {format_sharding(spec(t))}) "
                    f"is larger per device than both ends of its chain of collectives "
                    f"({op.operands[0]} and {chain[-1].results[0].name}): a redistribution "
                    f"must stay within max(source, target) local size", mid.loc)


def _check_shapes(op: Op, opdef: OpDef, operand_types: list[TensorType], runnable: bool,
                  values: dict[str, TensorType] | None = None) -> None:
    counter = iter(range(1 << 30))

    def unknown(_: int) -> SymbolicExpr:
        return sym(f"?{next(counter)}")

    ctx = ShapeCtx(op, [type_dims(t, unknown) for t in operand_types],
                   [t.dtype for t in operand_types], [r.type for r in op.results],
                   [type_dims(r.type, unknown) for r in op.results], _StaticSink(),
                   {n: type_dims(t, unknown) for n, t in (values or {}).items()})
    apply_rule(opdef, ctx)
    if runnable and opdef.run_rule is not None:
        opdef.run_rule(ctx)

