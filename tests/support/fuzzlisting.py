"""Seeded mutations of listings for the CLI fuzz test (tests/fuzz/test_fuzz.py).

``mutate(text, rng)`` applies 1 to 3 edits to a listing, at the token level (delete,
duplicate or swap tokens; numbers made huge, negative, zero or fractional; dtypes, op
names, value names and symbols replaced) or at the character level (delete, insert,
truncate; lines deleted, duplicated, swapped). Most results are invalid listings, which
must be located errors; some stay valid, or become valid listings with odd numbers, which
must optimize, analyze and run, or fail with a clear message. ``cases(seed, count)``
yields ``count`` (name, text, dims) triples from random listings (tests/support/randlisting.py)
and a few samples, each mutated or, now and then, left as it is. Everything is drawn from
``random.Random(seed)``: the same seed gives the same cases.
"""
from __future__ import annotations

import random
import re
from typing import Callable, Iterator

from tests.support.paths import ROOT
from tests.support.randlisting import RANGES, generate

# Small samples (the big ones would cost seconds per case) and a binding for each.
SAMPLES = {"listing1.mlir": "S1=2", "listing1-runnable.mlir": "S1=3",
           "branches.mlir": "S0=2,S1=16", "diamond.mlir": "S0=16,S1=17",
           "mlp-train.mlir": "S0=2,S1=16", "ops.mlir": "S0=2,S1=3",
           "ops-loop.mlir": "S0=2,S1=3"}

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|%[\w.$-]+|@[\w.]+'
                   r'|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][\w.]*|\s+|.', re.S)
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
DTYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64", "u8", "f8", "i128",
          "c64", "x"]
OPS = ["add", "sub", "mul", "div", "max", "min", "pow", "exp", "log", "tanh", "sqrt",
       "rsqrt", "neg", "abs", "copy", "convert", "compare", "select", "dot", "dot_general",
       "broadcast", "broadcast_in_dim", "reshape", "dynamic_reshape", "transpose",
       "concatenate", "slice", "reduce", "iota", "constant", "remat.evict",
       "remat.regenerate", "remat.plan", "schedule.versions", "func.func", "return",
       "SymbolicDim", "Mul", "Add", "nosuchop", "recompute"]
NUMBERS = ["0", "1", "2", "-1", "-7", "3", "1000000", "4294967296", "9223372036854775808",
           "99999999999999999999999", "1.5", "1e309", "0.0", "007", "65536"]
CHARS = list("{}[]()<>,=:x?%@\"\\\n -0123456789.") + ["->", "//", "\t", "é", "\x00"]
# Ops by arity, for a swap that keeps the operand count (the result is valid more often).
ARITY = {1: ["neg", "exp", "log", "sqrt", "rsqrt", "tanh", "logistic", "abs", "sin", "cos",
             "square", "copy", "convert", "reshape", "dynamic_reshape", "broadcast", "reduce",
             "integer_pow", "transpose", "broadcast_in_dim", "slice", "concatenate"],
         2: ["add", "sub", "mul", "div", "max", "min", "pow", "dot", "gather", "compare",
             "concatenate", "dot_general"],
         3: ["select", "scatter_add", "concatenate"]}
ATTR_VALUES = ["0", "1", "2", "3", "-1", "7", "99999999999999999999", "[]", "[0]", "[1, 0]",
               "[0, 0]", "[-1]", "[5]", "1.5", "-inf", "nan", "1e40", "true", '"sum"',
               '"max"', '"min"', '"prod"', '"bogus"', '"EQ"', '"LT"', '"f16"', '"i1"',
               '"i64"', '"u8"', '"x"', "@S0", "[@main]"]
# New ops whose value joins the returned ones: zero-operand sources of every dtype and
# the ops with numeric attributes, each a small known place for the verifier to check.
INSERTS = ["iota() {{dim = {n}}}", "constant() {{value = {v}}}", "rng_uniform() {{seed = {n}}}",
           "integer_pow({x}) {{exponent = {n}}}", "convert({x}) {{dtype = \"{t}\"}}",
           "reduce({x}) {{dims = [{n}], kind = \"{k}\"}}", "broadcast({x})",
           "broadcast_in_dim({x}) {{dims = [{n}]}}", "transpose({x}) {{perm = [{n}, 0]}}",
           "pow({x}, {x})", "gather({x}, {x})", "scatter_add({x}, {x}, {x})"]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(toks: list[str]) -> list[int]:
    """Positions of tokens that are not whitespace."""
    return [i for i, t in enumerate(toks) if not t.isspace()]


def _token_edit(rng: random.Random, text: str) -> str:
    toks = tokens(text)
    solid = _solid(toks)
    if not solid:
        return text + rng.choice(CHARS)
    i = rng.choice(solid)
    kind = rng.randrange(11)
    if kind == 0:  # delete
        toks[i] = ""
    elif kind == 1:  # duplicate
        toks[i] = toks[i] + rng.choice(["", " "]) + toks[i]
    elif kind == 2:  # swap with the next solid token
        j = next((k for k in solid if k > i), None)
        if j is not None:
            toks[i], toks[j] = toks[j], toks[i]
    elif kind == 3:  # a number changed
        nums = [k for k in solid if NUMBER.fullmatch(toks[k])]
        if nums:
            toks[rng.choice(nums)] = rng.choice(NUMBERS)
    elif kind == 4:  # a dtype changed or added
        spots = [k for k in solid if toks[k] in DTYPES or toks[k] == ">"]
        if spots:
            k = rng.choice(spots)
            toks[k] = (rng.choice(DTYPES) if toks[k] != ">" else
                       "x" + rng.choice(DTYPES) + ">")
    elif kind == 5:  # an op name changed
        names = [k for k in solid[:-1] if re.fullmatch(r"[A-Za-z_][\w.]*", toks[k])
                 and k + 1 < len(toks) and toks[k + 1] in ("(", " ")]
        if names:
            toks[rng.choice(names)] = rng.choice(OPS)
    elif kind == 6:  # a value name replaced by another (or an undefined one)
        values = [k for k in solid if toks[k].startswith("%")]
        if values:
            pool = sorted({toks[k] for k in values}) + ["%undefined", "%0"]
            toks[rng.choice(values)] = rng.choice(pool)
    elif kind == 7:  # a symbol replaced
        syms = [k for k in solid if toks[k].startswith("@")]
        if syms:
            toks[rng.choice(syms)] = rng.choice(["@S0", "@S1", "@S2", "@S9", "@C0", "@C1",
                                                 "@C4", "@C99999999999999999999", "@main",
                                                 "@symbolic_shape_graph", "@"])
    elif kind == 9:  # an op swapped for one of the same arity
        calls = [k for k in solid[:-1] if toks[k + 1] == "(" and toks[k] not in ("func.func",)]
        if calls:
            k = rng.choice(calls)
            close = next((j for j in range(k + 2, len(toks)) if toks[j] == ")"), None)
            arity = 0 if close is None else len([j for j in range(k + 2, close)
                                                 if toks[j].startswith("%")])
            toks[k] = rng.choice(ARITY.get(arity, OPS))
    elif kind == 10:  # an attribute value changed
        eqs = [k for k in solid if toks[k] == "=" and "{" in "".join(toks[max(0, k - 12):k])]
        if eqs:
            k = rng.choice(eqs)
            j = next((j for j in range(k + 1, len(toks)) if not toks[j].isspace()), None)
            if j is not None:
                end = j
                if toks[j] == "[":
                    end = next((e for e in range(j, len(toks)) if toks[e] == "]"), j)
                elif toks[j] == "-":
                    end = min(j + 1, len(toks) - 1)
                for e in range(j, end + 1):
                    toks[e] = ""
                toks[j] = rng.choice(ATTR_VALUES)
    else:  # a dim: ? <-> number
        dims = [k for k in solid if toks[k] == "?" or (NUMBER.fullmatch(toks[k]) and k > 0
                                                        and toks[k - 1] in ("<", "x"))]
        if dims:
            k = rng.choice(dims)
            toks[k] = rng.choice(["?", "0", "1", "5"]) if toks[k] != "?" else \
                rng.choice(["0", "1", "7", "99999999999999999999"])
    return "".join(toks)


def _char_edit(rng: random.Random, text: str) -> str:
    if not text:
        return rng.choice(CHARS)
    kind = rng.randrange(7)
    i = rng.randrange(len(text))
    if kind == 0:
        return text[:i] + text[i + 1:]
    if kind == 1:
        return text[:i] + rng.choice(CHARS) + text[i:]
    if kind == 2:
        return text[:i]
    lines = text.split("\n")
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == 3:
        del lines[a]
    elif kind == 4:
        lines.insert(a, lines[b])
    elif kind == 5:
        lines[a], lines[b] = lines[b], lines[a]
    else:
        lines[a] = lines[a] + " " + lines[b]
    return "\n".join(lines)


def _insert_op(rng: random.Random, text: str) -> str:
    """A new op before the first ``return``, its result returned too."""
    lines = text.split("\n")
    ret = next((i for i, line in enumerate(lines) if line.strip().startswith("return ")), None)
    if ret is None:
        return text
    values = sorted(set(re.findall(r"%[\w.$-]+", "\n".join(lines[:ret])))) or ["%x"]
    dims = rng.choice(["?", "4", "?x4", "?x?", "3x?", "", "0", "2x3x?"])
    binds = {"?": "[@S0]", "?x4": "[@S0, @C4]", "?x?": "[@S0, @S1]", "3x?": "[@C3, @S1]",
             "2x3x?": "[@C2, @C3, @S0]"}.get(dims)
    dtype = rng.choice(DTYPES[:10])
    shape = "x".join(p for p in (dims, dtype) if p)
    type_ = f"tensor<{shape}" + (f", {binds}>" if binds and rng.random() < 0.8 else ">")
    op = rng.choice(INSERTS).format(
        n=rng.choice(["0", "1", "2", "3", "-1", "40", "100000000"]),
        v=rng.choice(["0", "1", "-1", "0.5", "300", "1e40", "-inf", "nan", "99999999999"]),
        x=rng.choice(values), t=rng.choice(DTYPES), k=rng.choice(["sum", "max", "min", "x"]))
    lines.insert(ret, f"  %fz{ret} = {op} -> {type_}")
    lines[ret + 1] = lines[ret + 1].rstrip() + f", %fz{ret}"
    return "\n".join(lines)


EDITS: list[tuple[Callable[[random.Random, str], str], int]] = [
    (_token_edit, 6), (_char_edit, 2), (_insert_op, 1)]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        edit = rng.choices([e for e, _ in EDITS], [w for _, w in EDITS])[0]
        text = edit(rng, text)
    return text


def _binding(rng: random.Random) -> str:
    return ",".join(f"{s}={rng.randint(lo, hi)}" for s, (lo, hi) in RANGES.items())


def cases(seed: int, count: int, max_ops: int = 10,
          samples: bool = True) -> Iterator[tuple[str, str, str]]:
    """``count`` (name, listing text, --dims) cases, deterministic in ``seed``."""
    rng = random.Random(seed)
    texts = {name: (ROOT / "samples" / name).read_text(encoding="utf-8") for name in SAMPLES}
    for n in range(count):
        if samples and rng.random() < 0.15:
            name = rng.choice(sorted(SAMPLES))
            base, dims = texts[name], SAMPLES[name]
        else:
            listing_seed = rng.randrange(10**6)
            name = f"randlisting {listing_seed}"
            base, dims = generate(listing_seed, rng.randint(3, max_ops)).text, _binding(rng)
        if rng.random() < 0.1:
            yield f"{n}: {name}", base, dims
        else:
            yield f"{n}: {name} mutated", mutate(base, rng), dims
