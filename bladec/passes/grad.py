"""``grad``: the training graph of a forward listing, by reverse mode over the op registry.

A function that returns one scalar float loss becomes one that returns the loss and its
gradient with respect to chosen inputs: the forward ops unchanged, then the backward ops
that each forward op's adjoint rule (``OpDef.adjoint``, next to its shape rule) writes,
in reverse order. Where a value has several uses its cotangents are summed; integer and
truth values carry none (a ``compare`` or an integer ``convert`` stops the gradient), and
ops that no gradient passes through need no adjoint. An op that a gradient must pass
through and that has no adjoint is an error located at that op.

Which inputs: ``grad{wrt=%w1,%w2}`` names them; by default, as ``jax.grad``, the first
argument: the first input, with every input of the same pytree where the listing was
imported from JAX (the importer names a pytree's leaves ``%params.w1``, ``%params.b1``:
the inputs that share the first one's name up to its first dot). ``wrt=static`` is the
rule of earlier versions: every float input that is not *data*, data being the inputs
with a dynamic (``?``) dim (their sizes follow the batch and the sequence, so they are
examples; a weight's shape is fixed when the model is built).

The backward reads the forward values it needs (as JAX's ``grad`` does): they stay live
from the forward into the backward, except broadcasts and filled constants, which it
makes again from what they read (never more bytes: JAX's linearization likewise keeps
the operands of its implicit broadcasts). ``grad{save=auto}`` instead recomputes, in the
backward, each needed value whose recomputation from other saved values is cheap and
frees more bytes than it holds, decided on symbolic sizes for every binding at once,
where the whole step's model peak goes down at some corner of the declared ranges and
up at none (bladec/passes/saving.py). ``grad{scale=dynamic}`` adds dynamic loss scaling
for f16 training (bladec/passes/scaling.py).

Nothing here knows a dim's value: new types copy the symbols of the forward types, and
the analysis (run before and after) derives the relations of the new values as for any
listing.
"""
from __future__ import annotations

from dataclasses import replace

from bladec.adjoint import Builder, backprop, depends_on, needed_ops, total
from bladec.analysis.liveness import is_compute
from bladec.errors import BladecError
from bladec.ir import FLOAT_DTYPES, Func, Module, Op, Value, walk
from bladec.ops import REGISTRY
from bladec.ops.collective import SHARD_RULES
from bladec.passes.pipeline import ChoiceOption, IntOption, NamesOption, register
from bladec.passes.propagate import PropagatePass
from bladec.passes.saving import PER_USE, recompute_cheap
from bladec.passes.scaling import (FINITE, NEXT_SCALE, NEXT_STEPS, seed, state_inputs,
                                   unscale)
from bladec.symbolic.graph import write_back
from bladec.symbolic.shapes import analyze_shapes


@register
class GradPass:
    name = "grad"
    options = {"wrt": NamesOption("the inputs to differentiate by: names, 'first' (the "
                                  "first argument, as jax.grad) or 'static' (every float "
                                  "input of static shape)", ("first", "static")),
               "save": ChoiceOption("all", ("all", "auto"),
                                    "what the backward keeps from the forward"),
               "scale": ChoiceOption("none", ("none", "dynamic"),
                                     "dynamic loss scaling (for f16), its state an input "
                                     "and an output"),
               "growth": IntOption(2000, 1, None, "finite steps before the scale doubles")}
    discards = {"grad": "would differentiate a training graph again (grad runs once)",
                "schedule": "would differentiate schedule's versions (they have no adjoint)",
                "remat": "would differentiate remat's evict and regenerate points"}

    def __init__(self, wrt: tuple[str, ...] | str | None = None, save: str = "all",
                 scale: str = "none", growth: int | str = 2000) -> None:
        if isinstance(wrt, str):
            wrt = self.options["wrt"].parse(self.name, "wrt", wrt)
        self.wrt = tuple(wrt) if wrt else None
        self.save = self.options["save"].parse(self.name, "save", save)
        self.scale = self.options["scale"].parse(self.name, "scale", scale)
        self.growth = self.options["growth"].parse(self.name, "growth", str(growth))

    def apply(self, module: Module) -> Module:
        if module.mesh is not None:  # the forward's splits, which the adjoints read
            module = PropagatePass().apply(module)
        module = write_back(module, analyze_shapes(module))
        func = module.main
        trained = _trained(func, self.wrt)
        loss = _loss(func)
        new = differentiate(func, loss, trained,
                            self.growth if self.scale == "dynamic" else None)
        if self.save == "auto":
            new = recompute_cheap(module, new, len(func.ops), guard=True)
        else:  # as JAX's linearization, whose residuals are what a broadcast reads
            new = recompute_cheap(module, new, len(func.ops), PER_USE, 1)
        if module.mesh is not None:
            new = _unsplit_backward(new, len(func.ops), trained)
        funcs = [new if f is func else f for f in module.funcs]
        out = Module(funcs, module.shape_graph, module.file, module.mesh)
        if module.mesh is not None:
            out = PropagatePass(backward=True).apply(out)
        return write_back(out, analyze_shapes(out))


def _unsplit_backward(func: Func, start: int, trained: list[str]) -> Func:
    """A sharded listing's training function with the backward's splits left to the
    ``propagate`` pass: the adjoint rules build types from the forward's (a cotangent
    of a partial sum is not one, a rule's result copies an operand's split), so every
    backward result loses its split except the collectives' (their adjoints state the
    operand's split they bring a cotangent back to), and each gradient is asked for
    in its input's split (as JAX gives a parameter's gradient its sharding)."""
    inputs = {a.name: a.type for a in func.args}
    grads = {g: inputs[name] for g, name in zip(func.returns[1:], trained)}
    ops = list(func.ops[:start])
    for op in func.ops[start:]:
        results = []
        for r in op.results:
            t = r.type
            if r.name in grads:
                t = t.with_sharding(grads[r.name].sharding, ())
            elif op.name not in SHARD_RULES:
                t = t.with_sharding(None)
            results.append(replace(r, type=t))
        ops.append(replace(op, results=results))
    return replace(func, ops=ops)


def _trained(func: Func, wrt: tuple[str, ...] | None) -> list[str]:
    """The inputs to differentiate by, checked, in argument order."""
    args = {a.name: a for a in func.args}
    if wrt == ("static",):
        return [a.name for a in func.args
                if a.type.dtype in FLOAT_DTYPES and None not in a.type.dims]
    if wrt is None or wrt == ("first",):
        if not func.args:
            raise BladecError(f"grad: @{func.name} has no inputs to differentiate by",
                              func.loc)
        first = func.args[0].name
        root = first.split(".", 1)[0] + "."
        wrt = tuple(a.name for a in func.args if a.name == first or
                    ("." in first and a.name.startswith(root)))
        bad = [a for a in wrt if args[a].type.dtype not in FLOAT_DTYPES]
        if bad:
            raise BladecError(f"grad differentiates by the first argument by default (as "
                              f"jax.grad), and {bad[0]} is {args[bad[0]].type.dtype}: name "
                              f"the inputs to train with wrt=%a,%b (or wrt=static)", func.loc)
    for name in wrt:
        if name not in args:
            raise BladecError(f"grad: wrt names {name}, which is not an input of "
                              f"@{func.name} (inputs: {', '.join(args) or 'none'})", func.loc)
        if args[name].type.dtype not in FLOAT_DTYPES:
            raise BladecError(f"grad: wrt names {name}, of element type "
                              f"{args[name].type.dtype}: only float inputs have gradients",
                              func.loc)
    chosen = set(wrt)
    return [a.name for a in func.args if a.name in chosen]


def _loss(func: Func) -> str:
    outs = func.outputs()
    types = func.value_types()
    where = func.return_loc if func.returns is not None else func.loc
    if len(outs) != 1:
        raise BladecError(f"grad needs @{func.name} to return one scalar loss, it returns "
                          f"{len(outs)} values", where)
    t = types[outs[0]]
    if t.dtype not in FLOAT_DTYPES or any(d != 1 for d in t.dims):
        raise BladecError(f"grad needs a scalar float loss; {outs[0]} is "
                          f"{'x'.join('?' if d is None else str(d) for d in t.dims) or 'a scalar'}"
                          f" of {t.dtype}", where)
    return outs[0]


def differentiate(func: Func, loss: str, wrt: list[str], growth: int | None = None) -> Func:
    """``func`` returning ``loss`` and then ``%grad_<input>`` for each of ``wrt``;
    ``growth``: with dynamic loss scaling (bladec/passes/scaling.py), the finite steps
    before the scale doubles (then two more inputs and three more outputs)."""
    for op in func.ops:
        if not is_compute(op):
            raise BladecError(f"'{op.name}': grad takes a listing before schedule and remat "
                              "(put grad first in the pipeline)", op.loc)
    types = func.value_types()
    active = depends_on(func.ops, set(wrt))
    args = list(func.args) + (state_inputs(func) if growth is not None else [])
    b = Builder(types, set(types) | {a.name for a in args})
    cots: dict[str, list[str]] = {
        loss: [b.const(1.0, loss) if growth is None else seed(b, loss)]}
    backprop(b, func.ops, cots, active, lambda op: REGISTRY[op.name].adjoint, loss)
    grads = []
    for name in wrt:
        b.loc = func.loc
        g = total(b, cots, name) or b.const(0.0, name)
        grads.append(g)
    state: list[str] = []
    if growth is not None:
        grads, state = unscale(b, grads, growth, func.loc)
    # rules write cotangents for every float operand; those of operands that do not
    # depend on a trained input are dropped
    ops = needed_ops(b.ops, grads + state)
    ops, grads = _named(ops, grads, wrt, b)
    if state:
        ops, state = _renamed(ops, state, [NEXT_SCALE, NEXT_STEPS, FINITE], b)
    return Func(func.name, args, list(func.ops) + ops, [loss] + grads + state, func.loc,
                func.return_loc)


def _renamed(ops: list[Op], names: list[str], want: list[str], b: Builder
             ) -> tuple[list[Op], list[str]]:
    """The values ``names`` (results of ``ops``) renamed ``want``; a copy where one
    is not a result of its own (the scale passed through unchanged)."""
    rename = dict(zip(names, want))
    made = {r.name for op in ops for r in op.results}
    for op in walk(ops):
        op.operands = [rename.get(n, n) if n in made else n for n in op.operands]
        op.results = [Value(rename.get(r.name, r.name), r.type) for r in op.results]
    for n, w in zip(names, want):
        if n not in made:
            ops.append(Op("copy", [n], [Value(w, b.type(n))], loc=b.loc))
    return ops, want


def _named(ops: list[Op], grads: list[str], wrt: list[str], b: Builder
           ) -> tuple[list[Op], list[str]]:
    """Each gradient renamed ``%grad_<input>`` where it is a value of its own, else a
    ``copy`` of the value it shares (two inputs can get one cotangent: add(%a, %b))."""
    rename: dict[str, str] = {}
    out = []
    made = {r.name for op in ops for r in op.results}
    for g, name in zip(grads, wrt):
        want = b.fresh(f"grad_{name[1:]}_") if f"%grad_{name[1:]}" in b.taken \
            else f"%grad_{name[1:]}"
        b.taken.add(want)
        if g in made and g not in rename:
            rename[g] = want
        else:
            ops.append(Op("copy", [rename.get(g, g)], [Value(want, b.type(g))], loc=b.loc))
        out.append(want)
    for op in walk(ops):
        op.operands = [rename.get(n, n) for n in op.operands]
        op.results = [Value(rename.get(r.name, r.name), r.type) for r in op.results]
    return ops, out
