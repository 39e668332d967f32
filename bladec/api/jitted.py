"""``bladec.jit`` (defined here, exported by the package): a JAX function run by bladec
under a memory limit, called like ``jax.jit``.

A training loop calls its step thousands of times with changing shapes. ``bladec.jit``
traces the function once with symbolic dims (bladec/frontend), optimizes the listing
once (the passes), and then every call goes through the engine (runtime/engine.py):
bind the symbols from the arguments' shapes, plan once per binding (cached), run the
compiled segments (cached per shape), and hand back the function's own output pytree
as device arrays. Arguments that are already device arrays are never copied through
the host, and donated arguments are given up to the step (their buffers reused), as
with ``jax.jit(..., donate_argnums=...)``.

Which dims are dynamic: given by ``dynamic`` (``{"tokens": "B,S", "mask": "B,S"}``,
by parameter name or position; equal names are one symbol), or, by default, found
from the calls: the first call is traced with every dim static, and when a call
comes with other shapes, the dims that changed become symbolic and the function is
traced again, once; dims that have always had equal sizes share a symbol (as
``tokens`` and ``mask`` share the sequence length).
"""
from __future__ import annotations

import dataclasses
import functools
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from bladec.errors import BladecError
from bladec.passes import Pass
from bladec.runtime.dispatch import Refused
from bladec.runtime.engine import Engine, Report
from bladec.runtime.store.listings import ListingCache
from bladec.api.hot import Hot, hot_path
from bladec.api.lowered import Lowered, NotTracedError
from bladec.api.naming import is_shape_error, name_shifts, renamed
from bladec.api.option import DimSpec, _check_options, _limit, _pad, _ranges
from bladec.api.report import JitReport
from bladec.api.sharded import Spmd, named, placed, splits as _splits, spmd_engine, spmd_of
from bladec.api.signature import Call, Owner, Signature, as_array, cast, given_dims, positions
from bladec.api.transform import Backward, backward, call_transformed, cotangents, has_tracers


@dataclass
class _Traced:
    """One trace: the listing's names for the leaves, the engine, the symbol names."""
    imported: Any                  # bladec.frontend.jax_import.Imported
    engine: Engine
    names: dict[str, str]          # bladec symbol -> JAX dim name
    dynamic: dict[tuple[int, int], str]
    constants: dict[str, Any] = field(default_factory=dict)  # closed-over arrays, placed
    specs: Any = None              # the traced arguments' specs (symbolic dims)
    ranges: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    backward: Backward | None = None   # made at the first jax.grad through it
    spmd: Spmd | None = None       # the mesh of sharded arguments (sharded.py)


def jit(fn: Callable | None = None, *, mem_limit: int | str | None = None,
        dynamic: dict[str | int, DimSpec] | None = None,
        ranges: dict[str, tuple[int, int | None]] | None = None,
        pad: int | dict[str, int] | None = None, donate_argnums: int | Sequence[int] = (),
        passes: list[Pass] | str | None = None, backend: str = "jax",
        bitwise: bool = False, compilation_cache: str | None = None,
        coarse: bool = True, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (),
        donate_argnames: str | Sequence[str] = (), pad_unsafe: bool = False,
        out_shardings: Any = None) -> Any:
    """Wrap ``fn`` (a JAX function of pytrees of arrays) to run with bladec.

    ``mem_limit``: the device peak a step may take (bytes or ``"2GiB"``); a step that can
    not fit raises a BladecError naming the smallest limit that works. ``dynamic``: the
    symbolic dims, ``{param: "B,S"}`` (a name per dim, ``None`` or ``"_"`` for a static
    one), by parameter name or position, applied to every array of that argument;
    default: found from the calls (the module's text). ``ranges``: ``{"S": (1, 512)}``.
    ``pad``: round each dynamic dim up to a multiple (an int for all, or by name): fewer
    distinct shapes, fewer compilations; outputs with a padded dim are cut back, and the
    listing is rewritten so that reductions, contractions and size reads over a padded dim
    ignore the padding (passes/mask.py): the outputs are the unpadded function's. An op
    that no rewrite makes exact is an error at its line, unless ``pad_unsafe=True``. ``donate_argnums``: as for ``jax.jit``.
    ``passes``: the pipeline (default ``analyze,schedule,remat``). ``backend``: ``"jax"``
    or ``"numpy"`` (no compiling; host arrays). ``bitwise``: every op its own kernel.
    ``compilation_cache``: a directory for JAX's persistent compilation cache (default:
    the ``BLADEC_COMPILATION_CACHE`` environment variable), so that the next process
    loads the executables instead of compiling them, and the optimized listings
    (runtime/listings.py) instead of running the passes again. ``coarse``: with ``pad``,
    a new bucket is served from a coarser one already compiled while the padding that costs
    is less than compiling it cost (rent or buy: runtime/engine.py).
    ``static_argnums``/``static_argnames``: as for ``jax.jit``: Python values (hashable)
    that pick a trace instead of being traced; ``donate_argnames``: donation by name.
    Arguments may be passed by keyword; ``dynamic`` and donation name parameters alike.
    Arguments that are ``jax.Array``\\ s with a ``NamedSharding`` over several devices
    run the step sharded on their mesh (api/sharded.py), planned per device;
    ``out_shardings``: as for ``jax.jit``, the outputs' shardings there.

    Usable as ``@bladec.jit`` or ``@bladec.jit(mem_limit=...)``."""
    def wrap(f: Callable) -> "Jitted":
        return Jitted(f, mem_limit=mem_limit, dynamic=dynamic, ranges=ranges, pad=pad,
                      donate_argnums=donate_argnums, passes=passes, backend=backend,
                      bitwise=bitwise, compilation_cache=compilation_cache, coarse=coarse,
                      static_argnums=static_argnums, static_argnames=static_argnames,
                      donate_argnames=donate_argnames, pad_unsafe=pad_unsafe,
                      out_shardings=out_shardings)
    return wrap if fn is None else wrap(fn)


class Jitted:
    """The callable :func:`jit` returns; ``.report()`` describes the last step,
    ``.lower(*args)`` the listing a call with those arguments runs."""

    def __init__(self, fn: Callable, *, mem_limit: int | str | None,
                 dynamic: dict[str | int, DimSpec] | None,
                 ranges: dict[str, tuple[int, int | None]] | None,
                 pad: int | dict[str, int] | None, donate_argnums: int | Sequence[int],
                 passes: list[Pass] | str | None, backend: str, bitwise: bool,
                 compilation_cache: str | None = None, coarse: bool = True,
                 static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (),
                 donate_argnames: str | Sequence[str] = (), pad_unsafe: bool = False,
                 out_shardings: Any = None) -> None:
        if not callable(fn):
            raise BladecError(f"bladec.jit needs a function, not {type(fn).__name__}")
        self.fn = fn
        functools.update_wrapper(self, fn)   # __name__, __doc__, __wrapped__, ...
        self.__name__ = getattr(fn, "__name__", "fn")
        self.mem_limit = _limit(mem_limit)
        self.signature = Signature(fn, static_argnums, static_argnames)
        self.dynamic_spec = dynamic
        if dynamic is not None and not isinstance(dynamic, dict):
            raise BladecError("dynamic must be a dict from parameter (name or position) to "
                              "the names of its dims: {'tokens': 'B,S'}")
        self.ranges = _ranges(ranges)
        self.pad = _pad(pad)
        self.pad_unsafe = pad_unsafe
        try:
            donated = positions(donate_argnums)
        except BladecError:
            raise BladecError(f"donate_argnums must be argument positions (non-negative "
                              f"integers), not {donate_argnums!r}") from None
        names = {donate_argnames} if isinstance(donate_argnames, str) \
            else set(donate_argnames or ())
        self.donate = {self.signature.owner(i) for i in donated} | names
        _check_options(self.signature, dynamic, self.ranges, self.pad, donated)
        self.passes = passes
        self.backend = backend
        self.bitwise = bitwise
        self.coarse = coarse
        if backend not in ("jax", "numpy"):
            raise BladecError(f"unknown backend '{backend}' (jax or numpy)")
        self._listings: ListingCache | None = None   # optimized listings, beside them
        if backend == "jax":
            from bladec.runtime.backends.cache import CACHE_VARIABLE, use_compilation_cache
            where = compilation_cache or os.environ.get(CACHE_VARIABLE)
            try:
                kept = use_compilation_cache(where)
                self._listings = ListingCache(kept) if kept is not None else None
            except OSError as exc:
                raise BladecError(f"cannot use the compilation cache {where}: "
                                  f"{exc.strerror or exc}") from None
        self._traces: dict[tuple, _Traced] = {}
        self._static_only: set[tuple] = set()   # found dims whose symbolic trace failed
        self._signatures: dict[tuple, _Traced] = {}   # argument signature -> its trace
        self._hot: dict[tuple, Hot] = {}   # argument signature -> its hot path, if any
        self._history: dict[tuple, list[list[tuple[int, ...]]]] = {}  # automatic mode
        self._trace_seconds = 0.0
        self._last: Report | None = None
        self._last_traced: _Traced | None = None
        self._steps = 0
        self.out_shardings = out_shardings
        self._meshed = False   # a call had sharded arguments: signatures hold the splits

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method: bound to the instance (``jax.jit`` of a method behaves so)."""
        return self if obj is None else functools.partial(self, obj)

    # -- a call -----------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax
        traced = self.signature.traced(args, kwargs)   # (None: split it)
        call = self.signature.split(args, kwargs) if traced is None else None
        raw, tree = jax.tree_util.tree_flatten(traced if call is None else call.args)
        if has_tracers(raw):   # jax.grad and the like (transform.py)
            return call_transformed(self, call or self.signature.split(args, kwargs))
        leaves = [as_array(x) for x in raw]
        signature = (() if call is None else call.static, tree,
                     tuple((x.shape, x.dtype) for x in leaves))
        if not self._meshed and named(leaves):  # from now on the splits pick traces
            self._meshed = True
            self._signatures.clear()
            self._hot.clear()
        if self._meshed:
            signature += (_splits(leaves),)
        hot = self._hot.get(signature)
        if hot is not None:
            out = self._run_hot(hot, signature, leaves)
            if out is not None:
                return out
        return self._call(call or self.signature.split(args, kwargs), retry=True,
                          flat=(leaves, tree, signature))

    def _leaves(self, call: Call) -> tuple[list[Any], Any, list[Owner]]:
        """The traced arguments' leaves as arrays, their tree and their owners."""
        import jax
        flat, tree = jax.tree_util.tree_flatten_with_path(call.args)
        owners = [call.leaf_owner(tuple(path)) for path, _ in flat]
        return [as_array(x) for _, x in flat], tree, owners

    def _run_hot(self, hot: Hot, signature: tuple, leaves: list[Any]) -> Any:
        """A call on its signature's hot path (hot.py); None sends it down the general
        path (which then says what is wrong, if anything)."""
        try:
            out = hot(leaves)
        except Refused:
            del self._hot[signature]
            return None
        self._last, self._last_traced = hot.dispatch.report, hot.traced
        self._steps += 1
        return out

    def _call(self, call: Call, retry: bool,
              flat: tuple[list[Any], Any, tuple] | None = None) -> Any:
        import jax
        if flat is None:
            raw, tree = jax.tree_util.tree_flatten(call.args)
            leaves = [as_array(x) for x in raw]
            signature = (call.static, tree, tuple((x.shape, x.dtype) for x in leaves))
            if self._meshed:
                signature += (_splits(leaves),)
        else:
            leaves, tree, signature = flat
        # the trace of an argument signature already run, without the walk over the
        # arguments' owners and dims that finds it (a small step's dispatch is ~1 ms)
        traced = self._signatures.get(signature)
        if traced is None:
            _, _, owners = self._leaves(call)
            traced = self._traced(call, tree, owners, leaves)
        imp, engine = traced.imported, traced.engine
        types = engine.executor.info.dtypes
        arrays = {name: cast(leaf, types[name], name)
                  for name, leaf in zip(imp.input_names, leaves)}
        arrays.update(traced.constants)
        if traced.spmd is not None:
            arrays = placed(engine, arrays)
        try:
            outputs, report = engine.call(arrays, self.mem_limit)
        except BladecError as exc:
            if self.dynamic_spec is None and is_shape_error(exc) and retry:
                # automatic mode: two dims equal so far differ now: trace again, once
                self._remember((call.static, tree, tuple(str(x.dtype) for x in leaves)),
                               leaves, force=True)
                return self._call(call, retry=False)
            raise renamed(exc, traced.names) from None
        self._signatures[signature] = traced
        if signature not in self._hot and traced.spmd is None:   # later calls: hot path
            found = hot_path(traced, leaves, report, self.mem_limit)
            if found is not None:
                self._hot[signature] = found
        self._last, self._last_traced = report, traced
        self._steps += 1
        return imp.unflatten_outputs(outputs)

    def _vjp(self, call: Call, cots: list[Any]) -> tuple:
        """The cotangents of the traced arguments' leaves given those of the outputs:
        the backward listing (the ``grad`` pass of the same function, transform.py) run
        under the same limit; None for leaves that are not floats."""
        leaves, tree, owners = self._leaves(call)
        traced = self._traced(call, tree, owners, leaves)
        if traced.backward is None:
            start = time.perf_counter()
            try:
                traced.backward = backward(call, traced, leaves, self.passes,
                                           lambda imp, p: self._engine(imp, traced.dynamic, p))
            except BladecError as exc:
                raise renamed(exc, traced.names) from None
            self._trace_seconds += time.perf_counter() - start
        back = traced.backward
        types = back.engine.executor.info.dtypes
        arrays = {n: cast(x, types[n], n) for n, x in zip(back.inputs, leaves)}
        for n, c in zip(back.cots, cotangents(back.floats, cots)):
            arrays[n] = cast(as_array(c), types[n], n)
        arrays.update(back.constants)
        try:
            outputs, report = back.engine.call(arrays, self.mem_limit)
        except BladecError as exc:
            raise renamed(exc, traced.names) from None
        self._last, self._last_traced = report, traced
        grads = dict(zip(back.wrt, (outputs[n] for n in back.engine.outputs[1:])))
        return tuple(grads.get(n) for n in back.inputs)

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """The optimized listing a call with these arguments runs (traced and optimized
        as the call would, nothing compiled or run), as ``jax.jit(f).lower`` gives the
        program of its arguments: ``str(f.lower(x))`` or ``.as_text()``."""
        call = self.signature.split(args, kwargs)
        leaves, tree, owners = self._leaves(call)
        traced = self._traced(call, tree, owners, leaves)
        return Lowered(traced.engine.module, dict(traced.names))

    def report(self) -> JitReport:
        """The last step's device peak, evictions and compilations, and totals; a
        BladecError before the first step (there is no step to describe: an all-zero
        report would read as a step that held nothing)."""
        r = self._last
        if r is None and not self._traces:   # after a refused step: what it compiled
            raise BladecError(f"{self.__name__} has not been called yet: no step to "
                              f"report (call it first, or see .lower(*args) for its listing)")
        out = JitReport(steps=self._steps, traces=len(self._traces),
                        trace_seconds=self._trace_seconds)
        engines = [e for t in self._traces.values()
                   for e in (t.engine, t.backward.engine if t.backward else None) if e]
        out.total_compilations = sum(e.stats.compilations for e in engines)
        out.total_compile_seconds = sum(e.stats.compile_seconds for e in engines)
        out.total_compile_cpu_seconds = sum(getattr(e.backend, "compile_cpu_seconds", 0.0)
                                            for e in engines)
        out.total_executables = sum(len(e.stats.executables) for e in engines)
        out.buckets = sum(len(e.stats.bindings) for e in engines)
        if r is None or self._last_traced is None:
            return out
        names = self._last_traced.names
        out.peak_bytes, out.model_peak_bytes, out.limit = r.peak_bytes, r.model_peak_bytes, \
            r.limit
        out.binding = {names.get(s, s): v for s, v in r.binding.items()}
        out.evictions, out.reloads, out.recomputes = r.evictions, r.reloads, r.recomputes
        out.segments, out.executables, out.compilations = r.segments, r.executables, \
            r.compilations
        out.compile_seconds, out.seconds = r.compile_seconds, r.seconds
        spmd = self._last_traced.spmd
        out.devices = 1 if spmd is None else int(spmd.jmesh.devices.size)
        return out

    @property
    def listing(self) -> str:
        """The optimized listing of the last trace (what runs), as text."""
        if self._last_traced is None:
            raise NotTracedError(f"{self.__name__} has not been called yet: nothing traced "
                                 f"(see .lower(*args) for the listing of given arguments)")
        from bladec.printer import format_module
        return format_module(self._last_traced.engine.module)

    # -- tracing ----------------------------------------------------------------------
    def _traced(self, call: Call, tree: Any, owners: list[Owner], leaves: list[Any]
                ) -> _Traced:
        dtypes = tuple(str(x.dtype) for x in leaves)
        if self.dynamic_spec is not None:
            dynamic = given_dims(self.dynamic_spec, self.signature, owners, leaves)
        else:
            dynamic = self._found_dims((call.static, tree, dtypes), leaves)
        spmd = spmd_of(leaves)
        key = _trace_key(call, tree, dtypes, leaves, dynamic, spmd)
        if key in self._static_only:
            dynamic, key = {}, _trace_key(call, tree, dtypes, leaves, {}, spmd)
        traced = self._traces.get(key)
        if traced is not None:
            return traced
        try:
            traced = self._trace(call, leaves, owners, dynamic)
        except BladecError:
            if self.dynamic_spec is not None or not dynamic:
                raise
            # found dims that do not trace symbolically (a shape read in Python, or
            # sizes that do not fit together): trace the call's own shapes, as jax.jit
            # does, so that an error names them, not the symbols bladec made up
            self._static_only.add(key)
            dynamic, key = {}, _trace_key(call, tree, dtypes, leaves, {}, spmd)
            traced = self._traces.get(key) or self._trace(call, leaves, owners, {})
        self._traces[key] = traced
        return traced

    def _found_dims(self, key: tuple, leaves: list[Any]) -> dict[tuple[int, int], str]:
        """Automatic mode: the dims whose sizes differed between the calls that caused a
        trace; dims with the same sizes in all of them share a name."""
        history = self._remember(key, leaves)
        groups: dict[tuple[int, ...], str] = {}
        out = {}
        for i, x in enumerate(leaves):
            for j in range(len(x.shape)):
                sizes = tuple(h[i][j] for h in history)
                if len(set(sizes)) > 1:
                    out[(i, j)] = groups.setdefault(sizes, f"D{len(groups)}")
        return out

    def _remember(self, key: tuple, leaves: list[Any], force: bool = False
                  ) -> list[list[tuple[int, ...]]]:
        """The shapes of the calls (of one pytree structure and dtypes) that caused a
        trace, with this one added where a dim that never changed so far changed now (or
        ``force``)."""
        history = self._history.setdefault(key, [])
        shapes = [tuple(x.shape) for x in leaves]
        if not history or force or not self._covered(history, shapes):
            history.append(shapes)
        return history

    @staticmethod
    def _covered(history: list[list[tuple[int, ...]]], shapes: list[tuple[int, ...]]) -> bool:
        """Whether every dim that never changed so far has the same size now."""
        first = history[0]
        for i, shape in enumerate(shapes):
            for j, d in enumerate(shape):
                if all(h[i][j] == first[i][j] for h in history) and d != first[i][j]:
                    return False
        return True

    def _trace(self, call: Call, leaves: list[Any], owners: list[Owner],
               dynamic: dict[tuple[int, int], str]) -> _Traced:
        import jax
        from jax import export

        from bladec.frontend.jax_import import trace
        start = time.perf_counter()
        used = set(dynamic.values())
        # the ranges as JAX's constraints too: with H >= 4 JAX can tell that a VALID
        # window of 4 fits (floordiv(H - 4, 4) + 1 >= 1), as bladec's analysis can
        constraints = [f"{k} >= {lo}" for k, (lo, _) in self.ranges.items()
                       if k in used and lo > 1]
        constraints += [f"{k} <= {hi}" for k, (_, hi) in self.ranges.items()
                        if k in used and hi is not None]
        scope = export.SymbolicScope(constraints)
        structs = []
        for i, x in enumerate(leaves):
            dims = [dynamic.get((i, j), str(d)) for j, d in enumerate(x.shape)]
            shape = export.symbolic_shape(", ".join(dims), scope=scope) if dims else ()
            structs.append(jax.ShapeDtypeStruct(shape, x.dtype))
        specs = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(call.args),
                                             structs)
        ranges = {k: v for k, v in self.ranges.items() if k in used}
        # jnp.einsum's contraction order chosen at this call's sizes, as jax.jit's is
        seen = {dynamic[(i, j)]: int(d) for i, x in enumerate(leaves)
                for j, d in enumerate(x.shape) if (i, j) in dynamic}
        imported = trace(call.fn, specs, arg_names=list(call.names), ranges=ranges,
                         capture=True, sizes=seen)
        module = imported.module
        donated = {n for n, o in zip(imported.input_names, owners) if o in self.donate}
        if donated:  # as the listing's {donate = true}: freed at the last use, reused
            func = module.main
            func.args = [dataclasses.replace(a, donated=True) if a.name in donated else a
                         for a in func.args]
        names = {v: k for k, v in imported.symbols.items()}
        spmd = spmd_of(leaves)
        try:
            engine = self._engine(imported, dynamic, self.passes) if spmd is None \
                else spmd_engine(imported, spmd, self)
        except BladecError as exc:   # a pass's error, in the caller's dim names
            raise renamed(exc, names) from None
        self._trace_seconds += time.perf_counter() - start
        name_shifts(names, engine.executor.info.subst)
        # closed-over arrays: inputs of every call, put on the device once (jax.jit
        # likewise keeps them beside its executable)
        constants = {n: engine.backend.put(a) for n, a in imported.constants.items()} \
            if spmd is None else placed(engine, dict(imported.constants))
        return _Traced(imported, engine, names, dynamic, constants, specs, ranges,
                       spmd=spmd)


    def _engine(self, imported: Any, dynamic: dict[tuple[int, int], str],
                passes: list[Pass] | str | None) -> Engine:
        """The engine of an imported listing, with the padding asked for."""
        to_bladec = imported.symbols
        pad = self.pad
        if isinstance(pad, int):
            pad_map = {s: pad for s in to_bladec.values()} if pad > 1 else {}
        else:
            unknown = [k for k in (pad or {}) if k not in to_bladec]
            if unknown and dynamic:
                raise BladecError(f"cannot pad {', '.join(unknown)}: not a dynamic dim "
                                  f"(dynamic dims: {', '.join(sorted(to_bladec)) or 'none'})")
            pad_map = {to_bladec[k]: m for k, m in (pad or {}).items() if k in to_bladec}
        return Engine(imported.module, passes=passes, backend=self.backend,
                      bitwise=self.bitwise, pad=pad_map or None, coarse=self.coarse,
                      listings=self._listings, exact=True, pad_unsafe=self.pad_unsafe)


def _trace_key(call: Call, tree: Any, dtypes: tuple, leaves: list[Any],
               dynamic: dict[tuple[int, int], str], spmd: Spmd | None) -> tuple:
    static = tuple((i, j, d) for i, x in enumerate(leaves) for j, d in enumerate(x.shape)
                   if (i, j) not in dynamic)
    return (call.static, tree, dtypes, static, tuple(sorted(dynamic.items())),
            spmd and spmd.key)
