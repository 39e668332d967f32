"""Collectives: ops that change how a value is split over the mesh (DESIGN section 12).

Each keeps the global shape and element type (the shape rule) and rewrites the sharding
(the sharding rule, :data:`SHARD_RULES`), after Rink et al. (arXiv 2112.01075):
``shard_slice`` pushes an unused axis onto a dim (no communication), ``all_gather`` pops
a dim's newest (minor) axis, ``all_to_all`` moves the newest axis of one dim onto another,
``all_permute`` reorders which device holds which block, and ``reshard`` is any change,
which the ``redistribute`` pass writes as the others. :func:`check_sharding` is the rule
of every op on a sharded listing: the collectives', blockwise ops on alike-split
operands, and nothing else on split values.
"""
from __future__ import annotations

from typing import Callable

from bladec.errors import BladecError
from bladec.ir import Mesh, Op, TensorType
from bladec.ops import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import BINARY, UNARY
from bladec.sharding import spec, splits
from bladec.types import Sharding, format_sharding

# Ops whose blockwise result is the block of the whole result when every operand and
# the result are split the same way.
BLOCKWISE = frozenset({*UNARY, *BINARY, "integer_pow", "compare", "select", "convert"})


def _same(ctx: ShapeCtx) -> list[RuleResult]:
    return [(list(ctx.operands[0]), ctx.dtypes[0])]


def _dim(op: Op, src: Sharding, key: str) -> int:
    d = op.attrs[key]
    if not 0 <= d < len(src):
        raise BladecError(f"'{op.name}': {key} {d} out of range for rank {len(src)}", op.loc)
    return d


def _gather(mesh: Mesh, op: Op, src: Sharding) -> Sharding | None:
    d = _dim(op, src, "dim")
    if not src[d]:
        raise BladecError(f"'all_gather': dim {d} is not split; nothing to gather", op.loc)
    return src[:d] + (src[d][:-1],) + src[d + 1:]


def _slice(mesh: Mesh, op: Op, src: Sharding) -> Sharding | None:
    d = _dim(op, src, "dim")
    axis = op.attrs["axis"]
    if axis not in mesh.names:
        raise BladecError(f"'shard_slice': '{axis}' is not a mesh axis "
                          f"({', '.join(mesh.names)})", op.loc)
    if any(axis in axes for axes in src):
        raise BladecError(f"'shard_slice': mesh axis '{axis}' already splits the operand",
                          op.loc)
    return src[:d] + (src[d] + (axis,),) + src[d + 1:]


def _all_to_all(mesh: Mesh, op: Op, src: Sharding) -> Sharding | None:
    d, e = _dim(op, src, "src"), _dim(op, src, "dst")
    k = op.attrs.get("count", 1)
    if d == e:
        raise BladecError("'all_to_all': src and dst must be different dims", op.loc)
    if not 1 <= k <= len(src[d]):
        raise BladecError(f"'all_to_all': dim {d} is split over {len(src[d])} mesh axes; "
                          f"can not move {k}", op.loc)
    out = list(src)
    out[d], out[e] = src[d][:-k], src[e] + src[d][-k:]
    return tuple(out)


def _permute(mesh: Mesh, op: Op, src: Sharding) -> Sharding | None:
    dst = spec(op.results[0].type)
    if splits(mesh, dst) != splits(mesh, src):
        raise BladecError(f"'all_permute': the result must cut every dim into as many blocks "
                          f"as the operand ({format_sharding(src)} to {format_sharding(dst)})",
                          op.loc)
    return None


ShardRule = Callable[[Mesh, Op, Sharding], "Sharding | None"]
SHARD_RULES: dict[str, ShardRule] = {
    "reshard": lambda mesh, op, src: None, "all_gather": _gather, "shard_slice": _slice,
    "all_to_all": _all_to_all, "all_permute": _permute,
}


def check_sharding(mesh: Mesh | None, op: Op, operands: list[TensorType]) -> None:
    """The sharding rule of ``op``; types were checked against the mesh before."""
    results = [r.type for r in op.results]
    rule = SHARD_RULES.get(op.name)
    if rule is not None:
        if mesh is None:
            if not any(any(spec(t)) for t in [*operands, *results]):
                return  # whole arrays (sharding.whole_arrays): the identity
            raise BladecError(f"'{op.name}' needs a mesh declaration ('mesh {{x = 4}}')",
                              op.loc)
        want = rule(mesh, op, spec(operands[0]))
        have = spec(results[0])
        if want is not None and want != have:
            raise BladecError(f"'{op.name}': result {op.results[0].name} must be split "
                              f"{format_sharding(want)}, declared {format_sharding(have)}",
                              op.loc)
        return
    if not any(any(spec(t)) for t in [*operands, *results]):
        return
    if op.name in BLOCKWISE:
        want = spec(operands[0])
        for i, t in enumerate(operands):
            if spec(t) != want:
                raise BladecError(f"'{op.name}': operand {i} is split {format_sharding(spec(t))}"
                                  f", operand 0 {format_sharding(want)}; reshard one of them",
                                  op.loc)
        for r in op.results:
            if spec(r.type) != want:
                raise BladecError(f"'{op.name}': result {r.name} must be split like its "
                                  f"operands, {format_sharding(want)}", op.loc)
        return
    raise BladecError(f"'{op.name}' on split values is not supported (its blockwise meaning "
                      "differs from the whole array's); reshard to replicated first", op.loc)


register(OpDef("reshard", "`reshard(%x) -> tensor<..., {...}>`: the same array split as the "
               "result type says (any change of sharding); the `redistribute` pass writes it "
               "as collectives in normal form.", _same, recomputable=False))
register(OpDef("all_gather", "`all_gather(%x) {dim = d}`: gathers dim d over its newest "
               "(minor) mesh axis, which the result's sharding drops (local dim x |axis|).",
               _same, attrs={"dim": "int"}, required=frozenset({"dim"}), recomputable=False))
register(OpDef("shard_slice", "`shard_slice(%x) {dim = d, axis = \"a\"}`: each device keeps "
               "its block of dim d along mesh axis a (a dynamic slice by the axis index; no "
               "communication); a is unused by x and becomes dim d's newest axis.",
               _same, attrs={"dim": "int", "axis": "str"},
               required=frozenset({"dim", "axis"}), recomputable=False))
register(OpDef("all_to_all", "`all_to_all(%x) {src = d, dst = e}`: moves dim d's newest mesh "
               "axis onto dim e (newest there): d is gathered and e split over that axis; "
               "the local size is unchanged. `count = k` moves d's k newest axes at once, "
               "in their order (one collective over k axes).", _same,
               attrs={"src": "int", "dst": "int", "count": "int"},
               required=frozenset({"src", "dst"}), recomputable=False))
register(OpDef("all_permute", "`all_permute(%x) -> tensor<..., {...}>`: a collective permute "
               "to a sharding that cuts every dim into as many blocks (the local shape is "
               "unchanged; which device holds which block changes).", _same,
               recomputable=False))
