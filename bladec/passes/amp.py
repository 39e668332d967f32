"""``amp``: mixed precision, contractions in bf16 (or f16) with f32 sums.

Where the time and the saved activations of a transformer are, in its contractions,
``amp{dtype=bf16}`` rounds the operands of every ``dot`` and ``dot_general`` on f32 (or
f64) values to the low type and keeps the result in the wider type, so the products are
summed there (the op's result may be a wider float than its operands: XLA's
``preferred_element_type``). Everything else stays as it was: reductions, softmax-like
exponentials and normalizations, the loss, every elementwise op; the casts are only
where a contraction needs one.

Casts are shared and fused: a value rounded once serves every contraction that reads
it (the q, k and v projections read one normalized activation), a value that is itself
a widening of a low-precision value is read in that value's type (no round trip), and a
contraction already in the low type is left alone.

Run it before ``grad`` (``-p amp,grad``) to train in mixed precision: the backward then
differentiates through the casts, its contractions are in the low type as well, and each
weight's gradient comes back in the weight's own type (the adjoint of a cast is the cast
back), so an update of f32 master weights needs nothing more. After ``grad`` it casts
the backward's contractions too.

Precision lists, as PyTorch's autocast and RAF keep them: low precision for the ops in
:data:`CONTRACTIONS` (``dot``, ``dot_general``), whose operands only are rounded and whose
sums stay wide; every other op stays in its input's type (f32), in particular the
reductions, the softmax's ``exp``/``log``/``div``, the normalizations' ``rsqrt`` and
means, and the loss.

Loss scaling: bf16 (the default) has f32's exponent range, so gradients that f32
represents do not underflow in it and no scale is needed. f16 does need one: the
cotangent of an f16 contraction operand is rounded to f16, where values under 2^-24
are zero (the tanh MLP's first-layer gradient was 29.6% off, and its loss 13% from
f32's after 20 SGD steps). ``-p amp{dtype=f16},grad{scale=dynamic}`` seeds the backward
with a loss scale that is an input of the training function and returns the next one,
skipping steps whose gradients overflow (bladec/passes/scaling.py).
"""
from __future__ import annotations

from dataclasses import replace

from bladec.errors import BladecError
from bladec.ir import DTYPE_BYTES, FLOAT_DTYPES, Func, Module, Op, TensorType, Value, fresh_name
from bladec.ops.loop import LOOPS
from bladec.passes.pipeline import ChoiceOption, register

CONTRACTIONS = ("dot", "dot_general")


@register
class AmpPass:
    name = "amp"
    options = {"dtype": ChoiceOption("bf16", ("bf16", "f16"), "the contractions' operand type")}
    discards = {"schedule": "would insert casts into the schedule's order (amp first)",
                "remat": "would insert casts between remat's evict and regenerate points"}

    def __init__(self, dtype: str = "bf16") -> None:
        self.dtype = self.options["dtype"].parse(self.name, "dtype", dtype)

    def apply(self, module: Module) -> Module:
        func = module.main
        new = lower_contractions(func, self.dtype)
        return replace(module, funcs=[new if f is func else f for f in module.funcs])


def lower_contractions(func: Func, low: str) -> Func:
    """``func`` with each wide float contraction reading ``low`` copies of its operands."""
    types = func.value_types()
    ops = _lower(func.ops, types, set(types), low)
    return Func(func.name, list(func.args), ops, func.returns, func.loc, func.return_loc)


def _lower(block: list[Op], types: dict[str, TensorType], taken: set[str], low: str
           ) -> list[Op]:
    """``block`` with its contractions lowered; a loop's regions (isolated, so with casts
    of their own) likewise, the loop op itself unchanged."""
    narrowed: dict[str, str] = {}  # value -> a value of type ``low`` that widens to it
    ops: list[Op] = []
    for op in block:
        if op.name in LOOPS:
            op = replace(op, regions={k: _lower(r, types, taken, low)
                                      for k, r in op.regions.items()})
        elif op.regions:
            raise BladecError(f"'{op.name}': amp takes a listing before remat", op.loc)
        if op.name == "convert" and types[op.operands[0]].dtype == low and \
                _wider(op.results[0].type.dtype, low):
            narrowed[op.results[0].name] = op.operands[0]
        if op.name in CONTRACTIONS and all(_wider(types[n].dtype, low) for n in op.operands):
            operands = []
            for n in op.operands:
                if n not in narrowed:
                    name = fresh_name(f"{n}.{low}", taken, sep="")
                    t = types[n]
                    ops.append(Op("convert", [n], [Value(name, replace(t, dtype=low))],
                                  {"dtype": low}, loc=op.loc))
                    narrowed[n] = name
                operands.append(narrowed[n])
            op = Op(op.name, operands, list(op.results), dict(op.attrs), loc=op.loc,
                    operand_locs=list(op.operand_locs))
        ops.append(op)
    return ops


def _wider(dtype: str, low: str) -> bool:
    return dtype in FLOAT_DTYPES and dtype != low and DTYPE_BYTES[dtype] > DTYPE_BYTES[low]

