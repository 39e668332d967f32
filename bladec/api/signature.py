"""How a call's arguments meet the traced function: static arguments, keywords, owners.

``jax.jit`` users pass arguments by position or by name, mark some *static* (Python
values that pick a trace, hashed into its key: a layer count, a flag, a string) by
``static_argnums``/``static_argnames``, and name parameters in ``donate_argnums`` and
bladec's ``dynamic``. :class:`Signature` turns one call into a :class:`Call`: the
*traced* arguments (arrays and numbers, as a tuple whose last item is a dict of the
ones passed by keyword, when there are any), a hashable key of the static ones, and
the function of the traced arguments alone that the importer traces. Each leaf of the
traced arguments has an *owner*: the parameter it was passed as (its name, or its
position where the function takes ``*args``), which is what ``dynamic`` and donation
speak of, by name or by position alike.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from bladec.errors import BladecError

Owner = str | int


@dataclass(frozen=True)
class Call:
    """One call, split: what is traced, what picks the trace, how to call the function."""
    args: tuple                  # the traced arguments (a dict of keywords last, if any)
    names: tuple[str, ...]       # the importer's name of each ('' for the keywords)
    owners: tuple[Owner, ...]    # the parameter each positional traced argument was
    static: tuple                # a hashable key of the static arguments
    fn: Callable                 # fn(*args) calls the user's function with the statics

    @property
    def keywords(self) -> bool:
        return len(self.names) > 0 and self.names[-1] == ""

    def leaf_owner(self, path: tuple) -> Owner:
        """The parameter a leaf (by its path in :attr:`args`) belongs to."""
        i = path[0].idx
        if self.keywords and i == len(self.args) - 1:
            return str(path[1].key)
        return self.owners[i]


class Signature:
    """The parameters of ``fn`` and which are static: where only positions or only
    names are given, each gives the other, as ``jax.jit`` infers them."""

    def __init__(self, fn: Callable, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = ()) -> None:
        self.fn = fn
        name = getattr(fn, "__name__", "fn")
        try:
            self.sig: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.sig = None
        params = list(self.sig.parameters.values()) if self.sig else []
        self.positional = [p.name for p in params
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.names = [p.name for p in params
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        self.var_keywords = any(p.kind == p.VAR_KEYWORD for p in params)
        self.var_positional = any(p.kind == p.VAR_POSITIONAL for p in params)
        nums = _argnums("static_argnums", static_argnums)
        names = {static_argnames} if isinstance(static_argnames, str) \
            else set(static_argnames or ())
        for n in names:
            if not isinstance(n, str) or not n.isidentifier():
                raise BladecError(f"static_argnames must be parameter names, not {n!r}")
            if self.sig is not None and n not in self.names and not self.var_keywords:
                raise BladecError(f"static_argnames names '{n}', which is not a parameter "
                                  f"of {name} (parameters: {', '.join(self.names) or 'none'})")
        if self.sig is not None and not self.var_positional:
            bad = sorted(i for i in nums if i >= len(self.positional))
            if bad:
                raise BladecError(f"static_argnums {bad} out of range: {name} takes "
                                  f"{len(self.positional)} positional argument(s)")
        if not names:
            names = {self.positional[i] for i in nums if i < len(self.positional)}
        elif not nums:
            nums = {self.positional.index(n) for n in names if n in self.positional}
        self.static_nums, self.static_names = nums, names
        # calls that need no binding: every parameter positional, none static, none
        # with a default left out (split then returns the arguments as they are, and a
        # small step's dispatch skips inspect's bind: issue 32)
        self.plain = (self.sig is not None and not self.var_positional
                      and not self.var_keywords and not nums and not names
                      and len(self.names) == len(self.positional))

    def traced(self, args: tuple, kwargs: dict) -> tuple | None:
        """The traced arguments where the call needs no splitting (:attr:`plain`, all
        passed by position): what :meth:`split` would give as ``Call.args``, with no
        static key; None otherwise."""
        if self.plain and not kwargs and len(args) == len(self.positional):
            return args
        return None

    def owner(self, key: Owner) -> Owner:
        """A parameter given by name or position, as an owner (a name where it has one)."""
        if isinstance(key, int) and not isinstance(key, bool):
            return self.positional[key] if 0 <= key < len(self.positional) else key
        return key

    def known(self, key: str) -> bool:
        return self.sig is None or key in self.names or self.var_keywords

    def split(self, args: tuple, kwargs: dict) -> Call:
        """The call as traced arguments, a static key and the function to trace."""
        name = getattr(self.fn, "__name__", "fn")
        if self.sig is not None:
            try:
                bound = self.sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise BladecError(f"{name}: {exc}") from None
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        static: list[tuple[Owner, Any]] = []
        traced, owners = [], []
        statics = {i for i in range(len(args)) if i in self.static_nums or
                   (i < len(self.positional) and self.positional[i] in self.static_names)}
        for i, a in enumerate(args):
            if i in statics:
                static.append((i, _hashable(a, self.owner(i), name)))
            else:
                traced.append(a)
                owners.append(self.owner(i))
        static_kw = self.static_names | {self.positional[i] for i in self.static_nums
                                         if i < len(self.positional)}
        fixed = {k: _hashable(v, k, name) for k, v in kwargs.items() if k in static_kw}
        given = {k: v for k, v in kwargs.items() if k not in static_kw}
        static.extend(sorted(fixed.items()))
        n = len(traced)
        positions = [i for i in range(len(args)) if i not in statics]
        fixed_args = {i: v for i, v in static if isinstance(i, int)}
        fn = self.fn

        def call(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, xs[:n]):
                full[i] = x
            for i, v in fixed_args.items():
                full[i] = v
            keywords = dict(xs[n]) if len(xs) > n else {}
            return fn(*full, **keywords, **fixed)

        call.__name__ = call.__qualname__ = name   # for the importer's messages
        names = [str(o) if isinstance(o, str) else f"arg{o}" for o in owners]
        if given:
            traced.append(given)
            names.append("")
        return Call(tuple(traced), tuple(names), tuple(owners), tuple(static), call)


def _argnums(what: str, value: int | Sequence[int]) -> set[int]:
    items = [value] if isinstance(value, int) else list(value or ())
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items):
        raise BladecError(f"{what} must be argument positions (non-negative integers), "
                          f"not {value!r}")
    return set(items)


def _hashable(value: Any, owner: Owner, fn: str) -> Any:
    """A static argument as it keys a trace: hashed as ``jax.jit`` hashes it."""
    try:
        hash(value)
    except TypeError:
        what = f"'{owner}'" if isinstance(owner, str) else f"{owner}"
        raise BladecError(f"{fn}: static argument {what} is a {type(value).__name__}, "
                          f"which is not hashable (pass a tuple, or make it a traced "
                          f"argument)") from None
    return value


# -- the arguments' leaves ---------------------------------------------------------------

_ARRAY_TYPES: set[type] = set()   # the concrete types of jax.Array seen so far


def as_array(x: Any) -> Any:
    """A leaf as something with a shape and a dtype: device arrays as they are, the rest
    (NumPy arrays, Python numbers) as NumPy arrays with JAX's default dtypes."""
    if type(x) in _ARRAY_TYPES:   # (jax.Array's isinstance is an ABC's: slower)
        return x
    import jax
    if isinstance(x, jax.Array):
        _ARRAY_TYPES.add(type(x))
        return x
    if isinstance(x, np.ndarray):
        dtype = jax.dtypes.canonicalize_dtype(x.dtype)
        return x if dtype == x.dtype else x.astype(dtype)
    try:
        array = np.asarray(x)
    except Exception:
        raise BladecError(f"cannot pass a {type(x).__name__} to a bladec.jit function: "
                          f"arguments are pytrees of arrays and numbers") from None
    if array.dtype == object:
        raise BladecError(f"cannot pass a {type(x).__name__} to a bladec.jit function: "
                          f"arguments are pytrees of arrays and numbers")
    return array.astype(jax.dtypes.canonicalize_dtype(array.dtype))


def cast(x: Any, dtype: str, name: str) -> Any:
    """``x`` in the listing's dtype: host arrays are converted; a device array of another
    dtype is an error (converting it would copy it)."""
    from bladec.runtime.backends.backend import numpy_dtype
    want = numpy_dtype(dtype)
    if x.dtype == want:
        return x
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x.astype(want)
    raise BladecError(f"argument {name.lstrip('%')} is {np.dtype(x.dtype)}, but the function "
                      f"was traced with {dtype}")


def positions(value: int | Sequence[int]) -> set[int]:
    items = [value] if isinstance(value, int) else list(value or ())
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items):
        raise BladecError(f"not argument positions: {value!r}")
    return set(items)


def given_dims(spec: dict[str | int, Any], signature: Signature, owners: list[Owner],
                leaves: list[Any]) -> dict[tuple[int, int], str]:
    """``dynamic`` as (leaf, dim) -> name, checked against the arguments."""
    by_owner: dict[Owner, list[str | None]] = {}
    for key, dims in spec.items():
        if isinstance(key, str):
            if not signature.known(key):
                raise BladecError(f"dynamic names '{key}', which is not a parameter "
                                  f"(parameters: {', '.join(signature.names) or 'none'})")
        elif not isinstance(key, int) or isinstance(key, bool):
            raise BladecError(f"dynamic: bad key {key!r} (a parameter name or position)")
        owner = signature.owner(key)
        items = dims.split(",") if isinstance(dims, str) else list(dims)
        by_owner[owner] = [None if d is None or str(d).strip() in ("", "_") else
                           str(d).strip() for d in items]
        for d in by_owner[owner]:
            if d is not None and not d.isidentifier():
                raise BladecError(f"dynamic: bad dim name '{d}' for {key!r} (a name such "
                                  "as B or seq)")
    unused = [o for o in by_owner if o not in owners]
    if unused:
        raise BladecError(f"dynamic names argument(s) {', '.join(map(str, unused))}, which "
                          f"the call does not pass (or passes as static)")
    out = {}
    for i, (owner, x) in enumerate(zip(owners, leaves)):
        dims = by_owner.get(owner)
        if dims is None:
            continue
        if len(dims) != len(x.shape):
            what = owner if isinstance(owner, str) else f"argument {owner}"
            raise BladecError(f"dynamic gives {len(dims)} dim(s) for {what}, but it has "
                              f"shape {tuple(x.shape)}")
        for j, d in enumerate(dims):
            if d is not None:
                out[(i, j)] = d
    return out
