"""Import a JAX function into a bladec listing, with symbolic batch/sequence dims.

:func:`trace` runs ``jax.make_jaxpr`` on the function with ``jax.ShapeDtypeStruct``
arguments whose shapes hold ``jax.export`` dimension variables, and translates the jaxpr,
equation by equation, into ops of the registry (bladec/ops). The graph inputs are bound to
symbols ``@S0, @S1, ...`` (one per JAX dimension variable, in order of first appearance,
declared in ``@symbolic_shape_graph`` with their ranges); every other dynamic dim is
written as a bare ``?``, so that bladec's own analysis has to rediscover how it relates
to the inputs. Static dims are numbers.

The translation is :mod:`bladec.frontend.translate`; completing and checking the
dims is :mod:`bladec.frontend.dims`.
"""
from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Sequence

import numpy as np

import bladec.frontend.rules  # noqa: F401  (registers the translation rules)
from bladec.frontend.dims import check_dims, complete_dims, write_atoms
from bladec.frontend.einsumpath import einsum_sizes
from bladec.frontend.imported import Imported
from bladec.frontend.translate import (
    SHORT_DTYPES,
    JaxImportError,
    Lit,
    Translator,
    bladec_dtype,
    dim_vars,
)
from bladec.ir import NOWHERE, Func, Loc, Module, Op, ShapeGraph, SymbolDecl, Value, fresh_name
from bladec.ops.loop import with_bodies

# -- argument specs --------------------------------------------------------------------

def parse_shapes(text: str) -> list[tuple[str, str, str]]:
    """``"tokens:B,S:i32; mask:B,S; lr::f32"`` -> ``[(name, dims, dtype), ...]``.

    Each item is ``NAME:DIMS[:DTYPE]``; DIMS is comma-separated, each a number or a JAX
    dimension expression (``B``, ``2*S``); empty DIMS is a scalar; DTYPE defaults to f32.
    """
    out = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        parts = [p.strip() for p in item.split(":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise JaxImportError(f"bad shape spec '{item}': expected NAME:DIMS[:DTYPE]")
        dtype = parts[2] if len(parts) == 3 and parts[2] else "f32"
        if dtype not in SHORT_DTYPES:
            raise JaxImportError(f"unknown dtype '{dtype}' in '{item}' "
                                 f"(known: {', '.join(SHORT_DTYPES)})")
        out.append((parts[0], parts[1], dtype))
    return out


def specs_from_text(text: str) -> dict[str, Any]:
    """:func:`parse_shapes` as ``jax.ShapeDtypeStruct``\\ s sharing one symbolic scope."""
    import jax
    from jax import export
    scope = export.SymbolicScope()
    specs = {}
    for name, dims, dtype in parse_shapes(text):
        if name in specs:
            raise JaxImportError(f"--shapes names '{name}' twice")
        try:
            shape = export.symbolic_shape(f"({dims})" if dims else "()", scope=scope)
        except Exception as exc:  # jax raises ValueError/TypeError with its own text
            raise JaxImportError(f"bad dims '{dims}' for {name}: {exc}") from None
        specs[name] = jax.ShapeDtypeStruct(shape, np.dtype(SHORT_DTYPES[dtype])
                                           if dtype != "bf16" else jax.numpy.bfloat16)
    return specs


def nest_specs(specs: dict[str, Any]) -> dict[str, Any]:
    """Dotted names as pytrees of dicts: ``p.h0.qkv`` and ``p.b`` make one argument ``p``
    = ``{"h0": {"qkv": ...}, "b": ...}``, whose leaves the importer names back
    ``%p.h0.qkv`` and ``%p.b``."""
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        *path, last = name.split(".")
        node = out
        for k in path:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise JaxImportError(f"--shapes gives '{name}' inside "
                                     f"'{'.'.join(path)}', which is itself an array")
        if not last or last in node:
            raise JaxImportError(f"--shapes names '{name}' both as an array and as a tree"
                                 if last else f"--shapes name '{name}' ends in a dot")
        node[last] = spec
    return out


# -- names --------------------------------------------------------------------------------

def _path_name(prefix: str, path: tuple) -> str:
    """``%p.h0.qkv``: the argument's name, then each key, index or attribute of the
    pytree path, joined by dots (the listing's value names allow them); any other
    character of a key becomes ``_``."""
    parts = [prefix] if prefix else []
    for k in path:
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    parts = [re.sub(r"[^A-Za-z0-9_]", "_", p) or "_" for p in parts]
    return "%" + (".".join(parts) or "x")


def leaf_names(tree: Any, prefix: str, is_leaf: Callable[[Any], bool] | None = None
               ) -> list[str]:
    """The names :func:`trace` gives the leaves of ``tree`` passed as argument
    ``prefix`` (``%params.layers.0.wq``), in JAX's flattening order; ``is_leaf`` as
    JAX's (a tree of shape tuples needs one)."""
    import jax
    return [_path_name(prefix, tuple(path))
            for path, _ in jax.tree_util.tree_flatten_with_path(tree, is_leaf)[0]]


def _unique(names: list[str], taken: set[str]) -> list[str]:
    return [fresh_name(n, taken) for n in names]


# -- the entry points ---------------------------------------------------------------------

def trace(fn: Callable, arg_specs: Sequence[Any], *, arg_names: Sequence[str] | None = None,
          output_names: Sequence[str] | None = None,
          ranges: dict[str, tuple[int, int | None]] | None = None,
          symbols: dict[str, str] | None = None, hints: bool = True,
          check: bool = True, donate_argnums: Sequence[int] | int | None = None,
          stop_gradients: bool = False, capture: bool = False,
          sizes: dict[str, int] | None = None) -> Imported:
    """Trace ``fn(*arg_specs)`` with ``jax.make_jaxpr`` and translate it to a listing.

    ``arg_specs``: one pytree per positional argument, whose leaves have ``.shape`` and
    ``.dtype`` (``jax.ShapeDtypeStruct`` with ``jax.export.symbolic_shape`` dims, or
    arrays). ``arg_names``: names of the positional arguments (default: the function's
    parameter names); an input leaf is named after its argument and pytree path
    (``%params.layers.0.wq``). ``output_names``: one per output leaf (default ``%out0``,
    ``%out1.layers.0.wq``, ...). ``ranges``: ``{"B": (1, 32)}`` by JAX dimension variable
    (or bladec symbol), written as ``SymbolicDim`` ranges. ``symbols``: the bladec symbol
    of each JAX variable (default ``S0, S1, ...`` in order of first appearance).
    ``donate_argnums``: positional arguments the caller gives up (parameters and optimizer
    state a step replaces), as ``jax.jit`` takes them; their leaves are written
    ``{donate = true}``. Without it, a function declared ``jax.jit(f, donate_argnums=...)``
    has its own donations read from its jaxpr.
    ``stop_gradients``: keep ``lax.stop_gradient`` as the ``stop_gradient`` op (for a
    forward listing that the ``grad`` pass differentiates) instead of dropping it.
    ``capture``: constant arrays the function closes over (other than fills) become
    inputs of the listing (``%const0``, ...), their values in ``Imported.constants`` for
    the caller to pass, as ``jax.jit`` passes them to its executable; without it they
    are an error (a listing alone can not carry them).
    ``sizes``: the size of each JAX dimension variable to choose ``jnp.einsum``'s
    contraction order at (einsumpath.py; default: the top of a variable's range where
    ``ranges`` bounds it, else JAX's own guess).
    """
    import jax

    specs = tuple(arg_specs)
    flat, in_tree = jax.tree_util.tree_flatten_with_path(specs)
    if arg_names is None:
        arg_names = _param_names(fn, len(specs))
    names = [_path_name(str(arg_names[path[0].idx]) if path[0].idx < len(arg_names)
                        else f"arg{path[0].idx}", tuple(path[1:])) for path, _ in flat]
    names = _unique(names, set())
    leaves = [leaf for _, leaf in flat]
    symmap: dict[str, str] = dict(symbols or {})
    for leaf in leaves:
        for d in leaf.shape:
            for var in dim_vars(d):
                if var not in symmap:
                    taken = set(symmap.values())
                    symmap[var] = next(f"S{i}" for i in itertools.count() if f"S{i}" not in taken)
    structs = [jax.ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype) for leaf in leaves]
    at = {k: int(hi) for k, (_, hi) in (ranges or {}).items() if hi is not None}
    at.update(sizes or {})
    at = {k: v for k, v in at.items() if k in symmap}   # by JAX variable, not bladec symbol
    try:
        with einsum_sizes(at):
            closed = jax.make_jaxpr(fn)(*jax.tree_util.tree_unflatten(in_tree, structs))
    except Exception as exc:  # the function does not trace with symbolic shapes
        raise JaxImportError(f"tracing {getattr(fn, '__name__', fn)} failed: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
                             _user_frame(exc)) from exc
    out_shapes = jax.eval_shape(fn, *jax.tree_util.tree_unflatten(in_tree, structs))
    out_flat, out_tree = jax.tree_util.tree_flatten_with_path(out_shapes)

    tr = Translator(symmap, stop_gradients, capture)
    rng = {symmap.get(k, k): v for k, v in (ranges or {}).items()}
    tr.ranges.update({s: (int(lo), None if hi is None else int(hi))
                      for s, (lo, hi) in rng.items()})
    args = [tr.add_input(n, leaf.shape, bladec_dtype(leaf.dtype))
            for n, leaf in zip(names, leaves)]
    if donate_argnums is not None:
        given = {donate_argnums} if isinstance(donate_argnums, int) else set(donate_argnums)
        bad = sorted(i for i in given if not 0 <= i < len(specs))
        if bad:
            raise JaxImportError(f"donate_argnums {bad} out of range for {len(specs)} arguments")
        donated = [path[0].idx in given for path, _ in flat]
    else:
        donated = _declared_donations(closed.jaxpr)
    for i, a in enumerate(args):
        if donated[i]:
            args[i] = Value(a.name, a.type, True)
            tr.donated.add(a.name)
    results = tr.run(closed.jaxpr, closed.consts, [a.name for a in args])
    if output_names is None:  # out0, out1.layers.0.wq, ... after the output's pytree
        output_names = [_path_name(f"out{path[0].idx}", tuple(path[1:]))
                        if path and hasattr(path[0], "idx") else _path_name("out", tuple(path))
                        for path, _ in out_flat]
    output_names = [n if n.startswith("%") else "%" + n for n in output_names]
    if len(output_names) != len(results):
        raise JaxImportError(f"{len(output_names)} output names for {len(results)} outputs")
    output_names = _unique(list(output_names), set(names))
    returns = _outputs(tr, results, [a.name for a in args], output_names,
                       [tuple(v.aval.shape) for v in closed.jaxpr.outvars])
    ops = _dce(tr.ops, returns)
    read = {o for op in with_bodies(ops) for o in op.operands} | set(returns)
    constants = {v.name: arr for v, arr in tr.captured.values() if v.name in read}
    args += [v for v, _ in tr.captured.values() if v.name in constants]
    ops = _renumber(ops, set(returns), tr)

    decls = []
    for s in sorted(set(symmap.values()), key=lambda s: int(s[1:]) if s[1:].isdigit() else 0):
        lo, hi = rng.get(s, (1, None))
        decls.append(SymbolDecl(s, int(lo), None if hi is None else int(hi)))
    unknown = set(rng) - set(symmap.values())
    if unknown:
        raise JaxImportError(f"ranges given for unknown dimension(s) {', '.join(sorted(unknown))}"
                             f" (known: {', '.join(symmap)})")
    module = Module([Func("main", args, ops, returns)], ShapeGraph(decls, []))
    static = not decls
    jax_dims = {n: [tr.dim(d) for d in shp] for n, shp in tr.shapes.items()}
    imported = Imported(module, closed, symmap, names, list(returns), in_tree, out_tree,
                        jax_dims, [], tr.decomposed, constants)
    write_atoms(imported, tr)
    complete_dims(imported, hints)
    if check:
        check_dims(imported)
    if static and not module.shape_graph.decls:
        module.shape_graph = None  # a static graph: no symbols to declare
    return imported


def _user_frame(exc: BaseException) -> Loc:
    """Where in the user's code a tracing error arose: the innermost frame of the
    traceback outside JAX, NumPy and bladec (NOWHERE if there is none)."""
    import os
    import traceback
    import jax as jax_module
    skip = [os.path.dirname(m.__file__) for m in (jax_module, np) if m.__file__]
    skip.append(os.path.dirname(os.path.dirname(__file__)))  # bladec itself
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.abspath(frame.filename)
        if frame.lineno and not frame.filename.startswith("<") and \
                not any(path.startswith(d + os.sep) for d in skip):
            return Loc(frame.filename, frame.lineno, (frame.colno or 0) + 1)
    return NOWHERE


def _declared_donations(jaxpr: Any) -> list[bool]:
    """The donations of ``jax.jit(f, donate_argnums=...)``: its jaxpr is one ``jit``
    equation over the inputs, whose ``donated_invars`` say which it may overwrite."""
    none = [False] * len(jaxpr.invars)
    if len(jaxpr.eqns) != 1 or jaxpr.eqns[0].primitive.name not in ("jit", "pjit"):
        return none
    eqn = jaxpr.eqns[0]
    flags = eqn.params.get("donated_invars") or ()
    if list(eqn.invars) != list(jaxpr.invars) or len(flags) != len(none):
        return none
    return [bool(f) for f in flags]


def import_function(fn: Callable, arg_specs: Sequence[Any], **kwargs: Any) -> Module:
    """:func:`trace` and return only the listing's :class:`Module`."""
    return trace(fn, arg_specs, **kwargs).module


def _param_names(fn: Callable, n: int) -> list[str]:
    import inspect
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _signature(fn: Callable) -> tuple[list[str], list[str]]:
    """The positional parameters of ``fn`` and those of them without a default."""
    import inspect
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], []
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [p.name for p in params], [p.name for p in params if p.default is p.empty]


def _outputs(tr: Translator, results: list, inputs: list[str], names: list[str],
             shapes: list[tuple]) -> list[str]:
    """Name each output; inputs, literals and repeats are copied to a value of their own."""
    rename: dict[str, str] = {}
    seen: set[str] = set()
    returns = []
    producers = {r.name: op for op in tr.ops for r in op.results}
    for x, name, shape in zip(results, names, shapes):
        if isinstance(x, Lit):
            x = tr.constant(x.value, shape, x.dtype)
            producers[x] = tr.ops[-1]
        elif x in inputs or x in seen:
            x = tr.emit("copy", [x], tr.shapes[x], tr.types[x].dtype)
            producers[x] = tr.ops[-1]
        seen.add(x)
        rename[x] = name
        returns.append(name)
    for op in tr.ops:
        op.operands = [rename.get(o, o) for o in op.operands]
        for i, r in enumerate(op.results):
            if r.name in rename:
                new = rename[r.name]
                op.results[i] = Value(new, r.type)
                tr.types[new] = tr.types.pop(r.name)
                tr.shapes[new] = tr.shapes.pop(r.name)
    return returns


def _dce(ops: list[Op], returns: list[str]) -> list[Op]:
    live = set(returns)
    kept = []
    for op in reversed(ops):
        if any(r in live for r in op.result_names):
            kept.append(op)
            live.update(op.operands)
    kept.reverse()
    return kept


def _renumber(ops: list[Op], keep: set[str], tr: Translator) -> list[Op]:
    """Name the intermediate values %0, %1, ... in program order."""
    rename: dict[str, str] = {}
    counter = itertools.count()
    for op in with_bodies(ops):  # a loop's body values are numbered before its results
        op.operands = [rename.get(o, o) for o in op.operands]
        for i, r in enumerate(op.results):
            if r.name in keep:
                continue
            new = rename[r.name] = f"%{next(counter)}"
            op.results[i] = Value(new, r.type)
    tr.shapes = {rename.get(n, n): s for n, s in tr.shapes.items() if n in rename or n in keep
                 or n in tr.inputs}
    return ops


# -- the command line's entry point -------------------------------------------------------

def parse_ranges(text: str | None) -> dict[str, tuple[int, int | None]]:
    """``"B=1:32,S=1:512"`` (``S=:512`` and ``S=4:`` too) to ``{"B": (1, 32), ...}``."""
    out: dict[str, tuple[int, int | None]] = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        name, eq, span = item.partition("=")
        lo, colon, hi = span.partition(":")
        try:
            low = int(lo) if lo.strip() else 1
            high = int(hi) if hi.strip() else None
        except ValueError:
            low, high = 0, None
        if not eq or not colon or not name.strip() or low < 1 or (high is not None and high < low):
            raise JaxImportError(f"bad --range entry '{item}' (expected NAME=MIN:MAX, MIN >= 1)")
        out[name.strip()] = (low, high)
    return out


def load_target(target: str) -> Any:
    """``package.module:attribute`` to the attribute (the current directory is importable)."""
    import importlib
    import os
    import sys
    module_name, colon, attr = target.partition(":")
    if not colon or not module_name or not attr:
        raise JaxImportError(f"bad target '{target}': expected MODULE:FUNCTION")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise JaxImportError(f"cannot import module '{module_name}': "
                             f"{type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise JaxImportError(f"module '{module_name}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise JaxImportError(f"'{target}' is not callable")
    return obj


def import_target(target: str, shapes: str | None = None, ranges: str | None = None,
                  hints: bool = True) -> Imported:
    """What ``bladec import`` does: trace ``MODULE:FUNCTION`` and translate it.

    With ``shapes`` (``"tokens:B,S:i32;lr::f32"``), FUNCTION is traced with one spec per
    named positional parameter; dotted names (``p.w:8,4;p.b:4``) make a parameter a
    pytree of dicts (:func:`nest_specs`). Without, FUNCTION is an *import spec*: called with no
    arguments, it returns ``{"fn": ..., "arg_specs": (...), "ranges": ..., ...}`` (the
    keyword arguments of :func:`trace`) or a tuple ``(fn, arg_specs)``.
    """
    obj = load_target(target)
    kwargs: dict[str, Any] = {}
    if shapes is None:
        try:
            spec = obj()
        except TypeError as exc:
            raise JaxImportError(f"'{target}' is called without arguments as an import "
                                 f"spec and failed ({exc}); give --shapes to trace it "
                                 "directly") from None
        if isinstance(spec, dict):
            kwargs = dict(spec)
            if "fn" not in kwargs or "arg_specs" not in kwargs:
                raise JaxImportError(f"the import spec of '{target}' needs 'fn' and 'arg_specs'")
        elif isinstance(spec, tuple) and len(spec) == 2 and callable(spec[0]):
            kwargs = {"fn": spec[0], "arg_specs": spec[1]}
        else:
            raise JaxImportError(f"'{target}' returned {type(spec).__name__}, not an import spec "
                                 "(a dict with 'fn' and 'arg_specs'); give --shapes to trace it")
    else:
        specs = nest_specs(specs_from_text(shapes))
        params, required = _signature(obj)
        unknown = [n for n in specs if n not in params]
        if not unknown:
            order = [p for p in params if p in specs]
            missing = [p for p in required if p not in specs]
            if missing or order != params[:len(order)]:
                absent = missing or [p for p in params[:len(order)] if p not in specs]
                raise JaxImportError(f"--shapes names {', '.join(specs)}; the function takes "
                                     f"{', '.join(params)} (missing {', '.join(absent)})")
        elif params and len(specs) == len(params) and not set(specs) & set(params):
            order = list(specs)  # other names than the function's: take them in order
        else:
            raise JaxImportError(f"--shapes names {', '.join(unknown)}, which the function's "
                                 f"parameters ({', '.join(params) or 'none'}) do not")
        kwargs = {"fn": obj, "arg_specs": tuple(specs[n] for n in order),
                  "arg_names": [n.lstrip("%") for n in order]}
    if ranges:
        kwargs["ranges"] = {**kwargs.get("ranges", {}), **parse_ranges(ranges)}
    kwargs["hints"] = hints
    return trace(**kwargs)
