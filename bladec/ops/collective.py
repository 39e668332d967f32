"""Collectives: ops that change how a value is split over the mesh (DESIGN section 12).

Each keeps the global shape and element type (the shape rule) and rewrites the sharding
(the sharding rule, :data:`SHARD_RULES`), after Rink et al. (arXiv 2112.01075):
``shard_slice`` pushes an unused axis onto a dim (no communication), ``all_gather`` pops
a dim's newest (minor) axis, ``all_to_all`` moves the newest axis of one dim onto another,
``all_permute`` reorders which device holds which block, ``all_reduce`` sums partial
sums, and ``reshard`` is any change, which the ``redistribute`` pass writes as the others.
:func:`check_sharding` is the rule of every op on a sharded listing: the collectives',
elementwise ops on alike-split operands, broadcasts, dim-0 reshapes, transposes, sums and
contractions (whose sums over split dims leave partial sums, ``{..., +x}``), constants,
iotas, row gathers and scatter-adds, concatenations, and the ops of
bladec/ops/partition.py that keep the dims they do not work along split (slices, sorts,
windows, ``gather_slices``, ``dim_size``, ...); ``rng_uniform`` stays whole; a loop runs
per device (bladec/ops/loop.py's ``check_loop_sharding``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from bladec.adjoint import Adjoint
from bladec.errors import BladecError
from bladec.ir import Mesh, Op, TensorType
from bladec.ops.registry import OpDef, RuleResult, ShapeCtx, register
from bladec.ops.elementwise import BINARY, BITWISE, UNARY
from bladec.ops.partition import RULES as PASSTHROUGH
from bladec.ops.special import FUNCTIONS
from bladec.sharding import spec, splits
from bladec.types import Sharding, format_sharding

if TYPE_CHECKING:
    from bladec.adjoint import Builder

# Ops whose blockwise result is the block of the whole result when every operand and
# the result are split the same way.
BLOCKWISE = frozenset({*UNARY, *BINARY, *BITWISE, *FUNCTIONS, "integer_pow", "compare", "select",
                       "convert", "bitcast", "stop_gradient", "round", "rem"})


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


def _all_reduce(mesh: Mesh, op: Op, src: Sharding) -> Sharding | None:
    return src  # the same blocks, summed: only the partial axes go (check_sharding)


# -- adjoints (reverse mode, the ``grad`` pass) -------------------------------------------
# Every collective is the identity on the global array (``all_reduce`` on the sum of its
# partial blocks), so each adjoint moves the cotangent from the result's split back to
# the operand's: the inverse collective. The cotangent's own split is the ``propagate``
# pass's to settle (the grad pass runs it on the backward): it sums a cotangent that
# arrives as partial sums before a collective that needs whole blocks (all_reduce then
# shard_slice: the reduce-scatter of a gather's cotangent), and where the cotangent is
# split otherwise than the result it reshards it to the declared operand split. On whole
# arrays (a listing run on one device, sharding.whole_arrays) every adjoint is the
# identity.

def _operand_type(op: Op, b: "Builder") -> TensorType:
    t = b.type(op.operands[0])
    return t.with_sharding(t.sharding, ())


def _inverse(name: str, attrs: Callable[[Op, Sharding], dict]) -> Adjoint:
    """The adjoint that writes ``name`` (with ``attrs`` from the forward op and its
    operand's split) from the result's cotangent to the operand's split."""
    def rule(b: "Builder", op: Op, cots: list[str | None]) -> list[str | None]:
        g = cots[0]
        if g is None:
            return [None]
        src = spec(b.type(op.operands[0]))
        if not any(src) and not any(spec(op.results[0].type)):
            return [g]  # whole arrays: the identity
        return [b.emit(name, [g], _operand_type(op, b), attrs(op, src))]
    return rule


def _all_reduce_adjoint(b: "Builder", op: Op, cots: list[str | None]) -> list[str | None]:
    """``y = x_1 + ... + x_n`` (each device's partial block): ``dy/dx_i`` is 1, so every
    partial block's cotangent is the whole cotangent of y, unchanged on each device
    (where it arrives as partial sums itself, propagate all_reduces it first)."""
    return [cots[0]]


ADJOINTS: dict[str, Adjoint] = {
    "reshard": _inverse("reshard", lambda op, src: {}),
    # the gathered axis was dim d's newest: slicing it again is the inverse
    "all_gather": _inverse("shard_slice", lambda op, src: {
        "dim": op.attrs["dim"], "axis": src[op.attrs["dim"]][-1]}),
    "shard_slice": _inverse("all_gather", lambda op, src: {"dim": op.attrs["dim"]}),
    # the moved axes are the newest of dst: move the same count back
    "all_to_all": _inverse("all_to_all", lambda op, src: {
        "src": op.attrs["dst"], "dst": op.attrs["src"], "count": op.attrs.get("count", 1)}),
    "all_permute": _inverse("all_permute", lambda op, src: {}),
    "all_reduce": _all_reduce_adjoint,
}


ShardRule = Callable[[Mesh, Op, Sharding], "Sharding | None"]
SHARD_RULES: dict[str, ShardRule] = {
    "reshard": lambda mesh, op, src: None, "all_gather": _gather, "shard_slice": _slice,
    "all_to_all": _all_to_all, "all_permute": _permute, "all_reduce": _all_reduce,
}


def check_sharding(mesh: Mesh | None, op: Op, operands: list[TensorType]) -> None:
    """The sharding rule of ``op``; types were checked against the mesh before."""
    if not op.results:
        return  # markers (remat.evict, remat.plan, ...) compute nothing
    results = [r.type for r in op.results]
    rule = SHARD_RULES.get(op.name)
    if rule is not None:
        if mesh is None:
            if not any(any(spec(t)) or t.partial for t in [*operands, *results]):
                return  # whole arrays (sharding.whole_arrays): the identity
            raise BladecError(f"'{op.name}' needs a mesh declaration ('mesh {{x = 4}}')",
                              op.loc)
        if op.name == "all_reduce":
            if not operands[0].partial:
                raise BladecError("'all_reduce': the operand holds no partial sums", op.loc)
        elif operands[0].partial:
            raise BladecError(f"'{op.name}' of partial sums: all_reduce them first", op.loc)
        _expect(op, rule(mesh, op, spec(operands[0])), ())
        return
    if not any(any(spec(t)) or t.partial for t in [*operands, *results]):
        return
    try:
        want, partial, like = result_layout(op, operands)
        _expect(op, want, partial, like)
    except BladecError as exc:
        if all(t.sharding is not None for t in results):
            raise
        raise BladecError(f"{exc.diagnostic.message} (a listing with only its arguments "
                          "sharded: start the pipeline with 'propagate', which gives every "
                          "result its sharding)", op.loc) from None


def result_layout(op: Op, operands: list[TensorType]) -> tuple[Sharding, tuple[str, ...], str]:
    """The sharding and partial-sum axes every result of ``op`` (not a collective) must
    have, given its operands' types, and what they follow (for the message); a
    BladecError where the op can not run on blocks split that way. Shared by the
    verifier and the ``propagate`` pass, so that what one infers the other accepts."""
    if op.name in BLOCKWISE:
        want = spec(operands[0])
        for i, t in enumerate(operands):
            if spec(t) != want:
                raise BladecError(f"'{op.name}': operand {i} is split {format_sharding(spec(t))}"
                                  f", operand 0 {format_sharding(want)}; reshard one of them",
                                  op.loc)
        return want, _blockwise_partial(op, operands), "its operands"
    structural = STRUCTURAL.get(op.name)
    if structural is None:
        raise BladecError(f"'{op.name}' on split values is not supported (its blockwise meaning "
                          "differs from the whole array's); reshard to replicated first", op.loc)
    want, partial = structural(op, operands)
    used = [a for axes in want for a in axes] + list(partial)
    twice = sorted({a for a in used if used.count(a) > 1})
    if twice:
        raise BladecError(f"'{op.name}': mesh axis '{twice[0]}' would split the result twice "
                          f"({format_sharding(want, partial)}); reshard an operand", op.loc)
    return want, partial, ""


def _expect(op: Op, want: Sharding | None, partial: tuple[str, ...],
            like: str = "") -> None:
    for r in op.results:
        have = spec(r.type)
        if (want is not None and have != want) or tuple(sorted(r.type.partial)) != \
                tuple(sorted(partial)):
            shown = format_sharding(want if want is not None else have, partial)
            raise BladecError(f"'{op.name}': result {r.name} must be split "
                              f"{shown}{' like ' + like if like else ''}, declared "
                              f"{format_sharding(have, r.type.partial)}", op.loc)


# Elementwise ops that keep a sum a sum: (a1 + a2) + (b1 + b2), c * (a1 + a2), -(a1 + a2).
ADDITIVE, SCALING = {"add", "sub"}, {"mul", "div"}
LINEAR_UNARY = {"neg", "copy", "convert", "stop_gradient"}


def linear_in_partials(name: str, parts: list[tuple[str, ...]]) -> bool:
    """Whether elementwise op ``name`` of operands holding partial sums over ``parts``
    (per operand, the mesh axes whose devices' blocks add up to the value) gives the
    partial sums of its result: sums of sums over the same axes, a product or quotient
    with one partial factor (the numerator, for a quotient), a linear unary op."""
    if not any(parts):
        return True
    if name in ADDITIVE:
        return all(p == parts[0] for p in parts)
    if name in SCALING:
        return len([p for p in parts if p]) == 1 and (name == "mul" or bool(parts[0]))
    return name in LINEAR_UNARY


def _blockwise_partial(op: Op, operands: list[TensorType]) -> tuple[str, ...]:
    parts = [t.partial for t in operands]
    if linear_in_partials(op.name, parts):
        return next((p for p in parts if p), ())
    name = op.name
    raise BladecError(f"'{name}' of partial sums is not their sum's '{name}': all_reduce "
                      "first", op.loc)


def _broadcast_rule(op: Op, operands: list[TensorType]) -> tuple:
    """A dim that comes from the operand keeps its split; a new dim, or one the operand
    stretches from size 1, may be split any way (the values are the same along it)."""
    src, out = spec(operands[0]), spec(op.results[0].type)
    dims = list(op.attrs.get("dims", ()))
    if len(dims) != len(src):
        raise BladecError(f"'{op.name}' of a split value needs 'dims'", op.loc)
    want = list(out)
    for i, j in enumerate(dims):
        if src[i] or operands[0].dims[i] != 1:
            want[j] = src[i]
    return tuple(want), operands[0].partial


def _reshape_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Split only along dim 0 (both sides, by the same axes): a block is then a contiguous
    piece of the row-major elements, and reshaping it locally reshapes the whole."""
    src, out = spec(operands[0]), spec(op.results[0].type)
    if any(src[1:]) or any(out[1:]) or (src[:1] or ((),))[0] != (out[:1] or ((),))[0]:
        raise BladecError(f"'{op.name}' of a split value: only dim 0 may be split, by the "
                          f"same axes on both sides ({format_sharding(src)} to "
                          f"{format_sharding(out)})", op.loc)
    return out, operands[0].partial


def _transpose_rule(op: Op, operands: list[TensorType]) -> tuple:
    src = spec(operands[0])
    return tuple(src[p] for p in op.attrs["perm"]), operands[0].partial


def _reduce_rule(op: Op, operands: list[TensorType]) -> tuple:
    """A sum over a split dim leaves each device its block's sum: partial over its axes."""
    src = spec(operands[0])
    rank_out = op.results[0].type.rank
    dims = list(op.attrs.get("dims", range(rank_out, len(src))))
    gone = [a for d in dims for a in src[d]]
    if (gone or operands[0].partial) and op.attrs.get("kind", "sum") != "sum":
        raise BladecError(f"'reduce' {op.attrs.get('kind')} over split dims is not "
                          "supported (only sums become partial sums)", op.loc)
    return tuple(axes for d, axes in enumerate(src) if d not in dims), \
        operands[0].partial + tuple(gone)


def _dot_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Batch and free dims keep their splits; contracting dims split alike on both sides
    leave partial sums over their axes."""
    a, b = (spec(t) for t in operands)
    if op.name == "dot":
        lb, rb, lc, rc = [], [], [len(a) - 1], [0]
    else:
        lb, rb = list(op.attrs.get("lhs_batch", ())), list(op.attrs.get("rhs_batch", ()))
        lc, rc = list(op.attrs["lhs_contract"]), list(op.attrs["rhs_contract"])
    for i, j in [*zip(lb, rb), *zip(lc, rc)]:
        if a[i] != b[j]:
            raise BladecError(f"'{op.name}': paired dims {i} and {j} are split differently "
                              f"({format_sharding((a[i],))[1:-1]} and "
                              f"{format_sharding((b[j],))[1:-1]})", op.loc)
    parts = [t.partial for t in operands]
    if all(parts):
        raise BladecError(f"'{op.name}' of two partial sums: all_reduce one first", op.loc)
    free_a = [a[d] for d in range(len(a)) if d not in lb + lc]
    free_b = [b[d] for d in range(len(b)) if d not in rb + rc]
    want = tuple([a[i] for i in lb] + free_a + free_b)
    return want, parts[0] + parts[1] + tuple(x for i in lc for x in a[i])


def _constant_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Every device fills its own block with the value: any split does. Only zero is a
    partial sum (of zeros), which is what a scatter-add of split updates starts from."""
    t = op.results[0].type
    if t.partial and op.attrs.get("value") != 0:
        raise BladecError("'constant': only zero can be a partial sum (the devices' blocks "
                          f"add up to {len(t.partial)}+ times the value otherwise)", op.loc)
    return spec(t), t.partial


def _iota_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Counting restarts in every block, so only the other dims may be split."""
    t = op.results[0].type
    d = op.attrs["dim"] % max(t.rank, 1)
    if t.rank and spec(t)[d] or t.partial:
        raise BladecError(f"'iota' along a split dim ({d}) or as partial sums: each device "
                          "would count from 0; split the other dims only", op.loc)
    return spec(t), ()


def _gather_rule(op: Op, operands: list[TensorType]) -> tuple:
    """The ids index the whole table, so its rows are not split; the result is split
    like the ids, then like the table's other dims (a gather is linear in the table)."""
    table, ids = (spec(t) for t in operands)
    if table[:1] != ((),):
        raise BladecError("'gather': the table's rows (dim 0) must not be split; every id "
                          "may pick any row", op.loc)
    if operands[1].partial:
        raise BladecError("'gather': the ids are partial sums: all_reduce them first", op.loc)
    return ids + table[1:], operands[0].partial


def _scatter_add_rule(op: Op, operands: list[TensorType]) -> tuple:
    """Each device adds its own updates into its copy of the base: with ids split over
    axes A, the result is a partial sum over A (and over the updates' own partial
    axes), so the base must already be one over exactly those (a zero constant is)."""
    base, ids, updates = (spec(t) for t in operands)
    if base[:1] != ((),):
        raise BladecError("'scatter_add': the base's rows (dim 0) must not be split; every "
                          "id may add to any row", op.loc)
    if operands[1].partial:
        raise BladecError("'scatter_add': the ids are partial sums: all_reduce them first",
                          op.loc)
    if updates != ids + base[1:]:
        raise BladecError(f"'scatter_add': the updates must be split "
                          f"{format_sharding(ids + base[1:])} (the ids' split, then the "
                          f"base's after dim 0), got {format_sharding(updates)}", op.loc)
    need = sorted({*operands[2].partial, *(a for axes in ids for a in axes)})
    if sorted(operands[0].partial) != need:
        shown = format_sharding(base, tuple(need)) if need else format_sharding(base)
        raise BladecError(f"'scatter_add': each device adds only its own updates, so the base "
                          f"must be {shown}, got {format_sharding(base, operands[0].partial)}",
                          op.loc)
    return base, operands[0].partial


def _concatenate_rule(op: Op, operands: list[TensorType]) -> tuple:
    first = spec(operands[0])
    d = op.attrs["dim"] % len(first)
    for i, t in enumerate(operands):
        if spec(t) != first or sorted(t.partial) != sorted(operands[0].partial):
            raise BladecError(f"'concatenate': operand {i} is split "
                              f"{format_sharding(spec(t), t.partial)}, operand 0 "
                              f"{format_sharding(first, operands[0].partial)}", op.loc)
    if first[d]:
        raise BladecError(f"'concatenate' along a split dim ({d}): gather it first", op.loc)
    return first, operands[0].partial


STRUCTURAL = {"broadcast_in_dim": _broadcast_rule, "broadcast_like": _broadcast_rule,
              "broadcast": _broadcast_rule, "reshape": _reshape_rule,
              "dynamic_reshape": _reshape_rule, "transpose": _transpose_rule, "reduce": _reduce_rule,
              "dot": _dot_rule, "dot_general": _dot_rule, "constant": _constant_rule,
              "iota": _iota_rule, "gather": _gather_rule, "scatter_add": _scatter_add_rule,
              "concatenate": _concatenate_rule, **PASSTHROUGH}


register(OpDef("reshard", "`reshard(%x) -> tensor<..., {...}>`: the same array split as the "
               "result type says (any change of sharding); the `redistribute` pass writes it "
               "as collectives in normal form.", _same, recomputable=False,
               adjoint=ADJOINTS["reshard"]))
register(OpDef("all_gather", "`all_gather(%x) {dim = d}`: gathers dim d over its newest "
               "(minor) mesh axis, which the result's sharding drops (local dim x |axis|).",
               _same, attrs={"dim": "int"}, required=frozenset({"dim"}), recomputable=False,
               adjoint=ADJOINTS["all_gather"]))
register(OpDef("shard_slice", "`shard_slice(%x) {dim = d, axis = \"a\"}`: each device keeps "
               "its block of dim d along mesh axis a (a dynamic slice by the axis index; no "
               "communication); a is unused by x and becomes dim d's newest axis.",
               _same, attrs={"dim": "int", "axis": "str"},
               required=frozenset({"dim", "axis"}), recomputable=False,
               adjoint=ADJOINTS["shard_slice"]))
register(OpDef("all_to_all", "`all_to_all(%x) {src = d, dst = e}`: moves dim d's newest mesh "
               "axis onto dim e (newest there): d is gathered and e split over that axis; "
               "the local size is unchanged. `count = k` moves d's k newest axes at once, "
               "in their order (one collective over k axes).", _same,
               attrs={"src": "int", "dst": "int", "count": "int"},
               required=frozenset({"src", "dst"}), recomputable=False,
               adjoint=ADJOINTS["all_to_all"]))
register(OpDef("all_reduce", "`all_reduce(%x)`: sums the partial sums of x over the mesh "
               "axes its type marks `+axes` (a `lax.psum`); the result is x's sharding "
               "without them.", _same, recomputable=False,
               adjoint=ADJOINTS["all_reduce"]))
register(OpDef("all_permute", "`all_permute(%x) -> tensor<..., {...}>`: a collective permute "
               "to a sharding that cuts every dim into as many blocks (the local shape is "
               "unchanged; which device holds which block changes).", _same,
               recomputable=False, adjoint=ADJOINTS["all_permute"]))
