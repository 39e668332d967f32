"""Reading and writing the text of a tensor type: ``tensor<?x12xf32, [@S1, @C12]>``,
and of a sharded one: ``tensor<64x64xf32, {y, (x, z)}>`` (DESIGN section 12)."""
from __future__ import annotations

import re

from bladec.errors import BladecError
from bladec.ir import DEFAULT_DTYPE, DTYPE_BYTES, Loc, TensorType

# The largest dim, and dim constant, a listing may hold: the parser refuses a larger one,
# the analysis refuses to derive one, and the printer never writes one, so everything
# printed parses back. A dim larger than this is a typo, not a tensor.
MAX_DIM = 2 ** 48
_MAX_DIM_DIGITS = len(str(MAX_DIM))
_BIND = re.compile(r"\s*@([SC][A-Za-z0-9_]*)\s*")
_DIM = re.compile(r"\s*(\?|[0-9]+|[A-Za-z][A-Za-z0-9]*)\s*")
AXIS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_SHARD_ITEM = re.compile(r"\s*(\+)?\s*(?:(_)|([A-Za-z][A-Za-z0-9_]*)|\(([^()]*)\))\s*(,|$)")

Sharding = tuple[tuple[str, ...], ...]


def dim_too_large(digits: str) -> bool:
    """Whether a decimal literal is above :data:`MAX_DIM`, without converting a huge one
    (``int()`` of 100,000 digits is slow, and Python refuses more than 4,300)."""
    digits = digits.lstrip("0")
    return len(digits) > _MAX_DIM_DIGITS or int(digits or "0") > MAX_DIM


def too_large_text(digits: str) -> str:
    """A literal as an error message shows it: at most 20 digits."""
    return digits[:20] + ("..." if len(digits) > 20 else "")


def parse_type(text: str, loc: Loc) -> TensorType:
    """Read one ``tensor<...>`` token; ``loc`` is where the token starts."""
    body = text[len("tensor<"):-1]
    base = len("tensor<")

    def fail(msg: str, offset: int) -> BladecError:
        return BladecError(msg, Loc(loc.file, loc.line, loc.col + base + offset))

    sharding, partial = None, ()
    brace = body.find("{")
    if brace >= 0:
        head = body[:brace].rstrip()
        if not head.endswith(","):
            raise fail("expected ',' before the sharding '{...}' in tensor type", brace)
        sharding, partial = _parse_sharding(body[brace:], lambda msg, at: fail(msg, brace + at))
        body = head[:-1]

    shape_part, sep, bind_part = body.partition(",")
    dims: list[int | None] = []
    dtype = DEFAULT_DTYPE
    pieces = shape_part.split("x") if shape_part.strip() else []
    offset = 0
    for i, piece in enumerate(pieces):
        m = _DIM.fullmatch(piece)
        token = piece.strip()
        at = offset + (len(piece) - len(piece.lstrip()))
        if not m:
            raise fail(f"bad dimension '{token}' in tensor type", at)
        if token == "?":
            dims.append(None)
        elif token[0].isdigit():
            if dim_too_large(token):
                raise fail(f"dimension {too_large_text(token)} is too large (at most {MAX_DIM})",
                           at)
            dims.append(int(token))
        elif i == len(pieces) - 1:
            if token not in DTYPE_BYTES:
                raise fail(f"unknown element type '{token}' (expected one of "
                           f"{', '.join(DTYPE_BYTES)})", at)
            dtype = token
        else:
            raise fail(f"bad dimension '{token}' in tensor type", at)
        offset += len(piece) + 1
    binds = None
    if sep:
        bstart = len(shape_part) + 1
        inner = bind_part.strip()
        lead = len(bind_part) - len(bind_part.lstrip())
        if not (inner.startswith("[") and inner.endswith("]")):
            raise fail("expected '[@S0, ...]' after ',' in tensor type", bstart + lead)
        names: list[str] = []
        pos = bstart + lead + 1
        items = inner[1:-1].split(",") if inner[1:-1].strip() else []
        for item in items:
            m = _BIND.fullmatch(item)
            if not m:
                raise fail(f"expected a symbol '@S..' or constant '@C..', got '{item.strip()}'", pos)
            name = m.group(1)
            if name.startswith("C") and not name[1:].isdigit():
                raise fail(f"constant dim '@{name}' must be '@C' followed by digits", pos)
            if name.startswith("C") and dim_too_large(name[1:]):
                raise fail(f"constant dim '@C{too_large_text(name[1:])}' is too large "
                           f"(at most {MAX_DIM})", pos)
            names.append(name)
            pos += len(item) + 1
        if len(names) != len(dims):
            raise fail(f"tensor type has {len(dims)} dims but {len(names)} bound symbols",
                       bstart + lead)
        for i, (d, name) in enumerate(zip(dims, names)):
            if name.startswith("C"):
                value = int(name[1:])
                if d is not None and d != value:
                    raise fail(f"dim {i} is {d} but is bound to @{name}", bstart + lead)
        binds = tuple(names) if names else None
    if sharding is not None and len(sharding) != len(dims):
        raise fail(f"tensor type has {len(dims)} dims but its sharding gives {len(sharding)}",
                   brace)
    return TensorType(tuple(dims), dtype, binds, sharding, partial)


def _parse_sharding(text: str, fail) -> tuple[Sharding, tuple[str, ...]]:
    """``{y, _, (x, z)}``: per dim ``_`` (not split), an axis, or axes major first; a
    last ``+x`` or ``+(x, y)``: partial sums over those axes."""
    if not text.rstrip().endswith("}"):
        raise fail("the sharding '{...}' must end the tensor type", 0)
    inner = text.rstrip()[1:-1]
    out: list[tuple[str, ...]] = []
    partial: tuple[str, ...] = ()
    seen: set[str] = set()
    pos = 0
    while inner.strip() and pos < len(inner):
        m = _SHARD_ITEM.match(inner, pos)
        if not m or (partial and m):
            what = "nothing after the partial axes '+...'" if partial else \
                "'_', a mesh axis or '(axis, ...)'"
            raise fail(f"expected {what} in the sharding", 1 + pos)
        if m.group(2):
            axes: tuple[str, ...] = ()
        elif m.group(3):
            axes = (m.group(3),)
        else:
            axes = tuple(a.strip() for a in m.group(4).split(",")) if m.group(4).strip() else ()
            bad = next((a for a in axes if not AXIS_NAME.fullmatch(a)), None)
            if bad is not None:
                raise fail(f"bad mesh axis name '{bad}' in the sharding", 1 + pos)
        for a in axes:
            if a in seen:
                raise fail(f"mesh axis '{a}' is used twice in one type", 1 + pos)
            seen.add(a)
        if m.group(1):
            if not axes:
                raise fail("'+' needs the mesh axes of the partial sums", 1 + pos)
            partial = axes
        else:
            out.append(axes)
        pos = m.end()
        if m.group(5) == "," and not inner[pos:].strip():
            raise fail("expected '_', a mesh axis or '(axis, ...)' after ','", 1 + pos)
    return tuple(out), partial


def format_sharding(sharding: Sharding, partial: tuple[str, ...] = ()) -> str:
    def one(axes: tuple[str, ...]) -> str:
        return "_" if not axes else axes[0] if len(axes) == 1 else "(" + ", ".join(axes) + ")"
    items = [one(a) for a in sharding] + (["+" + one(partial)] if partial else [])
    return "{" + ", ".join(items) + "}"


def format_type(t: TensorType) -> str:
    """Canonical text; f32, the default element type, is left out as in the paper."""
    if any(d is not None and d > MAX_DIM for d in t.dims):  # the analysis refuses these
        raise ValueError(f"a dim of {t.dims} is above MAX_DIM and would not parse back")
    parts = ["?" if d is None else str(d) for d in t.dims]
    if t.dtype != DEFAULT_DTYPE or not parts:
        parts.append(t.dtype)
    text = "tensor<" + "x".join(parts)
    if t.binds is not None and t.binds:
        text += ", [" + ", ".join("@" + b for b in t.binds) + "]"
    if t.sharding is not None:
        text += ", " + format_sharding(t.sharding, t.partial)
    return text + ">"
