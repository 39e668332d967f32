"""Text to IR: the Lark LALR parser of grammar/listing.lark plus the IR builder.

The builder runs inside the parser (Lark's inline transformer), so a listing is read in
one pass with no intermediate parse tree; this is what keeps large listings fast.
"""
from __future__ import annotations

import ast
import gc
import re
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Transformer, v_args

from bladec.errors import BladecError
from bladec.ir import (SHAPE_GRAPH, Func, Loc, Mesh, Module, Op, Relation, ShapeGraph,
                       SymbolDecl, SymRef, TensorType, Value)
from bladec.symbolic.atoms import RELATION_KINDS
from bladec.types import AXIS_NAME, MAX_DIM, dim_too_large, parse_type, too_large_text

MAX_NESTING = 64
RELATIONS = ("Mul", "Add", *RELATION_KINDS)  # the shape graph's relation kinds
MAX_INT_DIGITS = 30
_OPERAND = re.compile(r"%[A-Za-z0-9_.$]+")
_TYPE = re.compile(r"tensor<[^>\n]*>")
_INT = re.compile(r"-?[0-9]+")
_ATTR_ITEM = re.compile(r'([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*("[^"\\\n]*"|\[[^\]]*\]|[^,}\s]+)')
_TOKEN_NAMES = {
    "VALUE": "a value like '%x'", "SYMREF": "a symbol like '@S0'", "TYPE": "a tensor type",
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "COMMA": "','", "EQUAL": "'='", "COLON": "':'", "__ANON_0": "'->'",
    "REGION": "a region name", "RETURN": "'return'", "FUNC": "'func.func'",
    "SYMDIM": "'SymbolicDim'", "$END": "end of file", "TRUE": "'true'",
    "FALSE": "'false'", "MESH": "'mesh'",
}


def _grammar_text() -> str:
    try:
        return (resources.files("bladec.grammar") / "listing.lark").read_text()
    except (ModuleNotFoundError, FileNotFoundError, TypeError):
        return (Path(__file__).resolve().parent.parent / "grammar" / "listing.lark").read_text()


@v_args(inline=True)
class _Builder(Transformer):
    def __init__(self, file: str) -> None:
        super().__init__()
        self.file = file
        self._types: dict[str, TensorType] = {}

    def _loc(self, tok: Token) -> Loc:
        return Loc(self.file, tok.line, tok.column)

    # -- values, types, attributes ------------------------------------------------
    def arg(self, name: Token, ty: Token, attrs: dict | None = None) -> Value:
        """``%w: tensor<...>`` or ``%w: tensor<...> {donate = true}``: the caller gives
        the argument up, so it is freed (and its buffer reused) after its last use."""
        attrs = attrs or {}
        for key, value in attrs.items():
            if key != "donate" or not isinstance(value, bool):
                raise BladecError(f"argument {name}: unknown attribute {key} = {value!r} "
                                  f"(arguments take only 'donate = true')", self._loc(name))
        return Value(str(name), self._type(ty), bool(attrs.get("donate", False)))

    def results(self, *names: Token) -> list[Token]:
        return list(names)

    operands = results

    def types(self, *tys: Token) -> list:
        return [self._type(t) for t in tys]

    def _type(self, tok: Token) -> TensorType:
        return self._type_at(str(tok), self._loc(tok))

    def _type_at(self, text: str, loc: Loc) -> TensorType:
        """Types repeat across a listing: read each distinct text once."""
        t = self._types.get(text)
        if t is None:
            t = self._types[text] = parse_type(text, loc)
        return t

    def attr(self, key: Token, value: Any) -> tuple[Token, Any]:
        return key, self._attr_value(value)

    def _attr_value(self, value: Any) -> Any:
        if isinstance(value, Token):
            kind = value.type
            if kind == "INT":
                if len(value.lstrip("-")) > MAX_INT_DIGITS:
                    raise BladecError(f"integer of {len(value)} digits is too large",
                                      self._loc(value))
                return int(value)
            if kind == "FLOAT":
                return float(value)
            if kind == "STRING":
                try:
                    return ast.literal_eval(value)
                except (SyntaxError, ValueError) as exc:
                    raise BladecError(f"bad string literal: {exc.msg if hasattr(exc, 'msg') else exc}",
                                      self._loc(value)) from None
            if kind == "TRUE":
                return True
            if kind == "FALSE":
                return False
            if kind == "SYMREF":
                return SymRef(value[1:])
        return value

    def list(self, *items: Any) -> tuple:
        if items == (None,):
            return _DeepTuple()
        depth = 1 + max((i.depth for i in items if isinstance(i, _DeepTuple)), default=0)
        if depth > MAX_NESTING:
            tok = next(i for i in items if isinstance(i, (Token, _DeepTuple)))
            loc = tok.loc if isinstance(tok, _DeepTuple) else self._loc(tok)
            raise BladecError(f"attribute lists nested more than {MAX_NESTING} deep", loc)
        out = _DeepTuple(self._attr_value(i) for i in items)
        out.depth = depth
        tok = next((i for i in items if isinstance(i, Token)), None)
        out.loc = self._loc(tok) if tok is not None else next(
            (i.loc for i in items if isinstance(i, _DeepTuple)), Loc(self.file))
        return out

    def _split_attrs(self, tok: Token) -> list[tuple[Token, Any]]:
        """The ``key = value`` pairs of a one-token attribute dict, as the rules give them."""
        pairs = []
        for m in _ATTR_ITEM.finditer(tok):
            key = Token("NAME", m.group(1), tok.start_pos + m.start(1), tok.line,
                        tok.column + m.start(1))
            raw, at = m.group(2), m.start(2)
            if raw.startswith("["):
                items = [self._attr_value(Token("INT", n.group(), 0, tok.line,
                                            tok.column + at + n.start()))
                         for n in _INT.finditer(raw)]
                value: Any = _DeepTuple(items)
            else:
                kind = ("STRING" if raw.startswith('"') else "SYMREF" if raw.startswith("@")
                        else "TRUE" if raw == "true" else "FALSE" if raw == "false"
                        else "INT" if _INT.fullmatch(raw) else "FLOAT")
                value = self._attr_value(Token(kind, raw, 0, tok.line, tok.column + at))
            pairs.append((key, value))
        return pairs

    def attrdict(self, *attrs: Any) -> dict:
        if len(attrs) == 1 and isinstance(attrs[0], Token) and attrs[0].type == "ATTRS":
            attrs = tuple(self._split_attrs(attrs[0]))
        out: dict[str, Any] = {}
        for item in attrs:
            if item is None:
                continue
            key, value = item
            if str(key) in out:
                raise BladecError(f"attribute '{key}' given twice", self._loc(key))
            out[str(key)] = value
        return out

    # -- statements ---------------------------------------------------------------
    def _split(self, text: str, pattern: re.Pattern, start: int = 0,
               tok: Token | None = None) -> list[tuple[str, Loc]]:
        """The pieces of a one-token spelling, each with its own location."""
        tok = tok if tok is not None else text
        file, line, col = self.file, tok.line, tok.column
        if "\n" not in text:
            return [(m.group(), Loc(file, line, col + m.start()))
                    for m in pattern.finditer(text, start)]
        out = []
        for m in pattern.finditer(text, start):  # a token spelled over several lines
            nl = text.rfind("\n", 0, m.start())
            at_line = line + text.count("\n", 0, m.start())
            out.append((m.group(), Loc(file, at_line, col + m.start() if nl < 0
                                       else m.start() - nl)))
        return out

    def _named(self, toks: list[Token]) -> list[tuple[str, Loc]]:
        return [(str(t), self._loc(t)) for t in toks]

    def defs(self, tok: Token | list[Token]) -> list[tuple[str, Loc]]:
        return self._split(tok, _OPERAND) if isinstance(tok, Token) else self._named(tok)

    def restypes(self, tok: Token | list) -> list:
        if isinstance(tok, Token):
            return [self._type_at(text, loc) for text, loc in self._split(tok, _TYPE)]
        return tok

    def callee(self, name: Token, operands: list[Token] | None = None) -> tuple:
        if name.type != "CALL":
            return str(name), self._loc(name), self._named(operands or [])
        paren = name.index("(")
        return name[:paren], self._loc(name), self._split(name, _OPERAND, paren)

    def head(self, first: Token | list | None, callee: tuple | None = None) -> tuple:
        """``(results, name, name_loc, operands)`` of an op, from either spelling."""
        if isinstance(first, Token):  # DEFCALL
            eq = first.index("=")
            paren = first.index("(", eq)
            name = first[eq + 1:paren].strip()
            at = first.index(name, eq)
            nl = first.rfind("\n", 0, at)
            name_loc = (Loc(self.file, first.line, first.column + at) if nl < 0 else
                        Loc(self.file, first.line + first.count("\n", 0, at), at - nl))
            return (self._split(first[:eq], _OPERAND, 0, first), name, name_loc,
                    self._split(first, _OPERAND, paren, first))
        return (first or [], *callee)

    def op(self, head: tuple, attrs: dict | None, types: list | None,
           *regions: tuple[Token, list]) -> Op:
        results, name, name_loc, operands = head
        types = types or []
        loc = results[0][1] if results else name_loc
        if len(types) != len(results):
            raise BladecError(
                f"'{name}' defines {len(results)} result(s) but gives {len(types)} type(s)", loc)
        region_map: dict[str, list[Op]] = {}
        for rname, block in regions:
            if str(rname) in region_map:
                raise BladecError(f"region '{rname}' given twice", self._loc(rname))
            for stmt in block:
                if isinstance(stmt, tuple):
                    raise BladecError(f"'return' inside region '{rname}': a region ends "
                                      "with its op's terminator", _stmt_loc(stmt))
                if not isinstance(stmt, Op):
                    raise BladecError(f"'{'SymbolicDim' if isinstance(stmt, SymbolDecl) else 'relation'}'"
                                      f" may appear only in @{SHAPE_GRAPH}", _stmt_loc(stmt))
            region_map[str(rname)] = list(block)
        return Op(name, [o for o, _ in operands],
                  [Value(r, t) for (r, _), t in zip(results, types)],
                  attrs or {}, region_map, loc, [ol for _, ol in operands])

    def region(self, name: Token, block: list) -> tuple[Token, list]:
        return name, block

    def block(self, *stmts: Any) -> list:
        return list(stmts)

    def ret(self, kw: Token, *values: Token) -> tuple:
        names = [str(v) for v in values if v is not None]
        return ("return", names, self._loc(kw))

    def symdecl(self, kw: Token, name: Token, attrs: dict | None) -> SymbolDecl:
        attrs = attrs or {}
        for key, value in attrs.items():
            if key not in ("min", "max") or not isinstance(value, int) or isinstance(value, bool):
                raise BladecError(f"SymbolicDim takes only integer 'min' and 'max', got '{key}'",
                                  self._loc(name))
        lo, hi = attrs.get("min", 1), attrs.get("max")
        if lo < 1 or (hi is not None and hi < lo):
            raise BladecError(f"empty or non-positive range [{lo}, {hi}] for @{name[1:]}",
                              self._loc(name))
        if lo > MAX_DIM:
            raise BladecError(f"the range of @{name[1:]} starts at {lo}, above the largest "
                              f"dimension ({MAX_DIM})", self._loc(name))
        return SymbolDecl(name[1:], lo, hi, self._loc(kw))

    def relation(self, lhs: Token, kind: Token, *args: Token) -> Relation:
        if str(kind) not in RELATIONS:
            raise BladecError(f"unknown relation '{kind}' (expected {', '.join(RELATIONS)})",
                              self._loc(kind))
        arity = RELATION_KINDS.get(str(kind))
        if str(kind) in RELATION_KINDS and len(args) != (arity or max(len(args), 2)):
            raise BladecError(f"'{kind}' takes {arity or 'at least 2'} operands, got "
                              f"{len(args)}", self._loc(kind))
        for a in args:
            if a.startswith("@C") and a[2:].isdigit() and dim_too_large(a[2:]):
                raise BladecError(f"constant '@C{too_large_text(a[2:])}' is too large (at most "
                                  f"{MAX_DIM})", self._loc(a))
        return Relation(lhs[1:], str(kind), [a[1:] for a in args], self._loc(lhs))

    def func(self, kw: Token, name: Token, *rest: Any) -> Func | ShapeGraph:
        *args, block = rest
        args = [a for a in args if a is not None]
        fname = name[1:]
        loc = self._loc(kw)
        if fname == SHAPE_GRAPH:
            graph = ShapeGraph(loc=loc)
            for stmt in block:
                if isinstance(stmt, SymbolDecl):
                    graph.decls.append(stmt)
                elif isinstance(stmt, Relation):
                    graph.relations.append(stmt)
                else:
                    raise BladecError(f"only SymbolicDim and relations may appear in "
                                      f"@{SHAPE_GRAPH}", _stmt_loc(stmt))
            return graph
        func = Func(fname, args, [], None, loc)
        for stmt in block:
            if func.returns is not None:
                raise BladecError("statement after 'return'", _stmt_loc(stmt))
            if isinstance(stmt, Op):
                func.ops.append(stmt)
            elif isinstance(stmt, tuple):
                func.returns, func.return_loc = stmt[1], stmt[2]
            else:
                raise BladecError(f"'{'SymbolicDim' if isinstance(stmt, SymbolDecl) else 'relation'}'"
                                  f" may appear only in @{SHAPE_GRAPH}", _stmt_loc(stmt))
        return func

    def mesh(self, kw: Token, attrs: dict | None) -> Mesh:
        """``mesh {x = 4, y = 2}``: axis names as sharded types spell them, positive sizes."""
        loc = self._loc(kw)
        if not attrs:
            raise BladecError("a mesh needs at least one axis: 'mesh {x = 4}'", loc)
        for name, size in attrs.items():
            if not AXIS_NAME.fullmatch(name):
                raise BladecError(f"bad mesh axis name '{name}' (letters, digits, '_')", loc)
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise BladecError(f"mesh axis '{name}' needs a positive integer size, got "
                                  f"{size!r}", loc)
        return Mesh(tuple(attrs.items()), loc)

    def start(self, *items: Func | ShapeGraph | Mesh) -> Module:
        module = Module(file=self.file)
        for item in items:
            if isinstance(item, Mesh):
                if module.mesh is not None:
                    raise BladecError("second mesh declaration (a listing has one mesh)",
                                      item.loc)
                module.mesh = item
            elif isinstance(item, ShapeGraph):
                if module.shape_graph is not None:
                    raise BladecError(f"second @{SHAPE_GRAPH} function", item.loc)
                module.shape_graph = item
            else:
                if any(f.name == item.name for f in module.funcs):
                    raise BladecError(f"function @{item.name} defined twice", item.loc)
                module.funcs.append(item)
        return module


class _DeepTuple(tuple):
    """An attribute list that remembers how deeply it nests, to refuse pathological input."""
    depth = 1
    loc: Loc = Loc()


def _stmt_loc(stmt: Any) -> Loc:
    return stmt[2] if isinstance(stmt, tuple) else stmt.loc


_BASE: Lark | None = None


def _parser(file: str) -> Lark:
    """A parser whose builder stamps locations with ``file`` (grammar compiled once)."""
    global _BASE
    if _BASE is None:
        _BASE = Lark(_grammar_text(), parser="lalr", lexer="basic",
                     maybe_placeholders=True, transformer=_Builder("<input>"))
    builder = _BASE.options.transformer
    builder.file = file
    builder._types.clear()
    return _BASE


def parse_module(text: str, file: str = "<input>") -> Module:
    """Parse a listing; every problem is a :class:`BladecError` with its location."""
    if "\x00" in text:
        at = text.index("\x00")
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        raise BladecError("file contains NUL bytes; is it a binary file?", Loc(file, line, col))
    if not text.strip():
        raise BladecError("empty input: expected at least one 'func.func'", Loc(file, 1, 1))
    parser = _parser(file)
    collecting = gc.isenabled()
    gc.disable()  # the parse allocates many long-lived objects; GC passes would be wasted
    try:
        module = parser.parse(text)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, BladecError):
            raise exc.orig_exc from None
        raise
    except lark.exceptions.UnexpectedCharacters as exc:
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        raise BladecError(f"unexpected character {ch!r}", Loc(file, exc.line, exc.column)) from None
    except lark.exceptions.UnexpectedEOF as exc:
        lines = text.rstrip().split("\n")
        raise BladecError(f"unexpected end of file; expected {_expected(exc.expected)}",
                          Loc(file, len(lines), len(lines[-1]) + 1)) from None
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            lines = text.rstrip().split("\n")
            raise BladecError(f"unexpected end of file; expected {_expected(exc.expected)}",
                              Loc(file, len(lines), len(lines[-1]) + 1)) from None
        shown = str(tok) if len(str(tok)) <= 40 else str(tok)[:37] + "..."
        raise BladecError(f"unexpected '{shown}'; expected {_expected(exc.expected)}",
                          Loc(file, tok.line, tok.column)) from None
    finally:
        if collecting:
            gc.enable()
    if not module.funcs:
        raise BladecError("no function besides @symbolic_shape_graph", Loc(file, 1, 1))
    _check_nesting(module)
    return module


def _check_nesting(module: Module) -> None:
    """Refuse regions nested deeper than any real listing would, before anything recurses."""
    for func in module.funcs:
        stack = [(op, 1) for op in func.ops]
        while stack:
            op, depth = stack.pop()
            if depth > MAX_NESTING:
                raise BladecError(f"regions nested more than {MAX_NESTING} deep", op.loc)
            stack.extend((inner, depth + 1) for region in op.regions.values() for inner in region)


def _expected(names: set[str]) -> str:
    shown = sorted({_TOKEN_NAMES.get(n, n.lower()) for n in names})
    if len(shown) > 6:
        shown = shown[:6] + ["..."]
    return " or ".join(shown)
